//! The likelihoods: log p(data | G u) evaluated from the field's values at the observations only.
//!
//! Every likelihood sees `gu`, the M values of the field where the data see it (the observed
//! cells, or the field interpolated at sites: `Observed` in `target.rs`), in the data's order; G
//! is never formed. Terms that do not depend on u (normalising constants, log c!) are dropped:
//! the samplers only use differences.
//!
//! One observation's FULL log density or mass, constants included (what a predictive density,
//! leave-one-out cross-validation and WAIC need), is [`observation_log_density`], the one place
//! that writes it: [`Likelihood::pointwise`] for an observation of the likelihood, and the scores
//! of held-out cells and sites, all call it.

use super::data::Observations;
use super::spec::LikelihoodKind;
use super::special::{
    LOG_PHI_BATCH, add_log_phi_replacing_by_slopes, binomial_logit_curvature,
    binomial_logit_fourth_derivative, binomial_logit_log_density, binomial_logit_third_derivative,
    binomial_logit_with_slope, log_phi, log_phi_curvature, log_phi_fourth_derivative,
    log_phi_third_derivative,
};

/// One observation as its likelihood reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Datum {
    /// The value: a gaussian measurement, a probit label (-1 or +1; any value above 0 is +1), a
    /// count, or binomial successes.
    pub(crate) value: f64,
    /// Binomial: the trials (unused by the other likelihoods).
    pub(crate) trials: f64,
    /// Poisson and binomial: the observation's total log offset (unused by gaussian and probit).
    pub(crate) offset: f64,
}

/// The full log density or mass of `datum` given the field's value `u` at it, every constant
/// included:
/// - gaussian: log N(y; u, s^2) = -(y - u)^2 / (2 s^2) - log s - log(2 pi) / 2;
/// - probit: log Phi(t u / s) for the label t (y > 0: +1, else -1);
/// - poisson: y eta - exp(eta) - log y!, eta = u + offset;
/// - binomial: log C(n, k) + k log p + (n - k) log(1 - p), p = logistic(u + offset).
pub(crate) fn observation_log_density(
    kind: LikelihoodKind,
    datum: Datum,
    u: f64,
    noise_sd: f64,
) -> f64 {
    let y = datum.value;
    match kind {
        LikelihoodKind::Gaussian => {
            let z = (y - u) / noise_sd;
            -0.5 * z * z - noise_sd.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
        }
        LikelihoodKind::Probit => log_phi(if y > 0.0 { u } else { -u } / noise_sd),
        LikelihoodKind::Poisson => {
            let rate = u + datum.offset;
            y * rate - rate.exp() - libm::lgamma(y + 1.0)
        }
        LikelihoodKind::Binomial => {
            let n = datum.trials;
            let coefficient =
                libm::lgamma(n + 1.0) - libm::lgamma(y + 1.0) - libm::lgamma(n - y + 1.0);
            coefficient + binomial_logit_log_density(y, n, u + datum.offset)
        }
    }
}

impl Datum {
    /// A value without trials or offset (gaussian, probit).
    fn plain(value: f64) -> Self {
        Self {
            value,
            trials: 0.0,
            offset: 0.0,
        }
    }
}

/// A likelihood bound to its observed data.
#[derive(Debug, Clone, PartialEq)]
pub enum Likelihood {
    /// v_i = u_i + e_i, e_i ~ N(0, s^2).
    Gaussian { values: Vec<f64>, noise_sd: f64 },
    /// t_i = sign(u_i + e_i) in {-1, +1}: log Phi(t_i u_i / s).
    Probit { labels: Vec<f64>, noise_sd: f64 },
    /// c_i ~ Poisson(exp(u_i + offset_i)): `offsets` holds each observation's total log offset
    /// (`model.offset`, plus the cell's log exposure and its log share of the study region).
    Poisson { counts: Vec<f64>, offsets: Vec<f64> },
    /// k_i ~ Binomial(n_i, logistic(u_i + offset_i)): k_i successes of n_i trials, the logit
    /// link, one offset per observation. The three vectors have one entry per observation.
    Binomial {
        successes: Vec<f64>,
        trials: Vec<f64>,
        offsets: Vec<f64>,
    },
}

impl Likelihood {
    /// Bind `kind` to the observed values (labels already mapped to -1/+1 for probit), every
    /// observation with the same offset `offset`. Binomial values are successes of one trial
    /// each (0 or 1): [`Self::binomial`] gives each observation its trials, and
    /// [`Self::of_observations`] takes the trials the observations carry.
    pub fn new(kind: LikelihoodKind, values: Vec<f64>, noise_sd: f64, offset: f64) -> Self {
        let offsets = match kind {
            LikelihoodKind::Poisson | LikelihoodKind::Binomial => vec![offset; values.len()],
            LikelihoodKind::Gaussian | LikelihoodKind::Probit => Vec::new(),
        };
        Self::with_offsets(kind, values, noise_sd, offsets)
    }

    /// Bind `kind` to the observed values, observation i with the offset `offsets[i]` (log
    /// rate for poisson, log-odds for binomial; unused by the gaussian and probit likelihoods).
    pub fn with_offsets(
        kind: LikelihoodKind,
        values: Vec<f64>,
        noise_sd: f64,
        offsets: Vec<f64>,
    ) -> Self {
        match kind {
            LikelihoodKind::Gaussian => Self::Gaussian { values, noise_sd },
            LikelihoodKind::Probit => Self::Probit {
                labels: values,
                noise_sd,
            },
            LikelihoodKind::Poisson => {
                debug_assert_eq!(offsets.len(), values.len());
                Self::Poisson {
                    counts: values,
                    offsets,
                }
            }
            LikelihoodKind::Binomial => {
                let m = values.len();
                Self::binomial(values, vec![1.0; m], offsets)
            }
        }
    }

    /// The binomial likelihood of `successes` out of `trials` with log-odds u + `offsets`, one of
    /// each per observation.
    pub fn binomial(successes: Vec<f64>, trials: Vec<f64>, offsets: Vec<f64>) -> Self {
        assert!(
            successes.len() == trials.len() && trials.len() == offsets.len(),
            "a binomial likelihood has one trial count and one offset per observation"
        );
        Self::Binomial {
            successes,
            trials,
            offsets,
        }
    }

    /// Bind `kind` to `observed`, every observation with the offset `offset`:
    /// [`Self::of_observations_with_offsets`] with that offset repeated.
    pub fn of_observations(
        kind: LikelihoodKind,
        observed: &Observations,
        noise_sd: f64,
        offset: f64,
    ) -> Self {
        Self::of_observations_with_offsets(kind, observed, noise_sd, vec![offset; observed.len()])
    }

    /// Bind `kind` to `observed`, observation i with the offset `offsets[i]`:
    /// [`Self::with_offsets`] on its values, except that binomial takes the trials the
    /// observations carry.
    pub fn of_observations_with_offsets(
        kind: LikelihoodKind,
        observed: &Observations,
        noise_sd: f64,
        offsets: Vec<f64>,
    ) -> Self {
        match kind {
            LikelihoodKind::Binomial => {
                Self::binomial(observed.values.clone(), observed.trials.clone(), offsets)
            }
            _ => Self::with_offsets(kind, observed.values.clone(), noise_sd, offsets),
        }
    }

    pub fn kind(&self) -> LikelihoodKind {
        match self {
            Self::Gaussian { .. } => LikelihoodKind::Gaussian,
            Self::Probit { .. } => LikelihoodKind::Probit,
            Self::Poisson { .. } => LikelihoodKind::Poisson,
            Self::Binomial { .. } => LikelihoodKind::Binomial,
        }
    }

    /// M: the number of observations.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Gaussian { values, .. } => values.len(),
            Self::Probit { labels, .. } => labels.len(),
            Self::Poisson { counts, .. } => counts.len(),
            Self::Binomial { successes, .. } => successes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same data under noise sd `noise_sd` (counts have none: unchanged).
    pub(crate) fn with_noise_sd(&self, noise_sd: f64) -> Self {
        let mut out = self.clone();
        if let Self::Gaussian { noise_sd: s, .. } | Self::Probit { noise_sd: s, .. } = &mut out {
            *s = noise_sd;
        }
        out
    }

    /// The gaussian log-likelihood at noise sd `noise_sd` instead of the one it holds, when the
    /// chain infers it: -|y - G u|^2 / (2 s^2) - M log s (the M log s a fixed s drops now
    /// matters), its gradient in G u written into `gradient` when given, and its slope in s,
    /// |y - G u|^2 / s^3 - M / s. `None` (gradient untouched) for the other likelihoods.
    pub(crate) fn gaussian_at_noise(
        &self,
        gu: &[f64],
        noise_sd: f64,
        gradient: Option<&mut [f64]>,
    ) -> Option<(f64, f64)> {
        let Self::Gaussian { values, .. } = self else {
            return None;
        };
        crate::simd_state::clear_upper_state();
        let precision = 1.0 / (noise_sd * noise_sd);
        let squares: f64 = values.iter().zip(gu).map(|(v, u)| (v - u) * (v - u)).sum();
        if let Some(gradient) = gradient {
            for ((g, v), u) in gradient.iter_mut().zip(values).zip(gu) {
                *g = (v - u) * precision;
            }
        }
        let m = values.len() as f64;
        let value = -0.5 * squares * precision - m * noise_sd.ln();
        let slope = (squares * precision - m) / noise_sd;
        Some((value, slope))
    }

    /// Observation `i`'s full log density or mass at the field's value `u` there (its offset
    /// added): [`observation_log_density`], unlike [`Self::log_likelihood`] with every constant;
    /// with `noise_sd`, the gaussian or probit noise sd in place of the one the likelihood holds
    /// (a chain's draw of an inferred noise sd).
    pub(crate) fn pointwise(&self, i: usize, u: f64, noise_sd: Option<f64>) -> f64 {
        let (datum, noise_sd) = match self {
            Self::Gaussian {
                values,
                noise_sd: s,
            } => (Datum::plain(values[i]), noise_sd.unwrap_or(*s)),
            Self::Probit {
                labels,
                noise_sd: s,
            } => (Datum::plain(labels[i]), noise_sd.unwrap_or(*s)),
            Self::Poisson { counts, offsets } => (
                Datum {
                    value: counts[i],
                    trials: 0.0,
                    offset: offsets[i],
                },
                1.0,
            ),
            Self::Binomial {
                successes,
                trials,
                offsets,
            } => (
                Datum {
                    value: successes[i],
                    trials: trials[i],
                    offset: offsets[i],
                },
                1.0,
            ),
        };
        observation_log_density(self.kind(), datum, u, noise_sd)
    }

    /// log p(data | u) up to a constant, from the field at the observations (G u).
    pub fn log_likelihood(&self, gu: &[f64]) -> f64 {
        debug_assert_eq!(gu.len(), self.len());
        crate::simd_state::clear_upper_state();
        match self {
            Self::Gaussian { values, noise_sd } => {
                let squares: f64 = values.iter().zip(gu).map(|(v, u)| (v - u) * (v - u)).sum();
                -0.5 * squares / (noise_sd * noise_sd)
            }
            Self::Probit { labels, noise_sd } => {
                // The batched log Phi, a stack buffer at a time; the same terms, added in the
                // same order from 0, as `log_likelihood_and_gradient`.
                let inv = 1.0 / noise_sd;
                let mut arguments = [0.0; LOG_PHI_BATCH];
                let mut total = 0.0;
                for (labels, gu) in labels.chunks(LOG_PHI_BATCH).zip(gu.chunks(LOG_PHI_BATCH)) {
                    let arguments = &mut arguments[..labels.len()];
                    for ((x, t), u) in arguments.iter_mut().zip(labels).zip(gu) {
                        *x = t * u * inv;
                    }
                    total = add_log_phi_replacing_by_slopes(total, arguments);
                }
                total
            }
            Self::Poisson { counts, offsets } => counts
                .iter()
                .zip(gu)
                .zip(offsets)
                .map(|((c, u), offset)| {
                    let eta = u + offset;
                    c * eta - eta.exp()
                })
                .sum(),
            Self::Binomial {
                successes,
                trials,
                offsets,
            } => successes
                .iter()
                .zip(trials)
                .zip(offsets)
                .zip(gu)
                .map(|(((&k, &n), offset), u)| binomial_logit_log_density(k, n, u + offset))
                .sum(),
        }
    }

    /// log p(data | u) up to a constant, with its gradient with respect to each observed value
    /// of the field written into `gradient`.
    pub(crate) fn log_likelihood_and_gradient(&self, gu: &[f64], gradient: &mut [f64]) -> f64 {
        debug_assert_eq!(gradient.len(), self.len());
        crate::simd_state::clear_upper_state();
        match self {
            Self::Gaussian { values, noise_sd } => {
                let precision = 1.0 / (noise_sd * noise_sd);
                for ((g, v), u) in gradient.iter_mut().zip(values).zip(gu) {
                    *g = (v - u) * precision;
                }
            }
            Self::Probit { labels, noise_sd } => {
                // The arguments go into `gradient`, which the batched log Phi turns into slopes
                // (erfcx, an exp and a log per cell, in vector registers); the same terms, summed
                // in the same order, as `log_likelihood`.
                let inv = 1.0 / noise_sd;
                for ((g, t), u) in gradient.iter_mut().zip(labels).zip(gu) {
                    *g = t * u * inv;
                }
                let total = add_log_phi_replacing_by_slopes(0.0, gradient);
                for (g, t) in gradient.iter_mut().zip(labels) {
                    *g *= t * inv;
                }
                return total;
            }
            Self::Poisson { counts, offsets } => {
                // One exp per cell for the value and the gradient (the exp is most of a
                // gradient-based step's cost on count data); the same terms, summed in the
                // same order, as `log_likelihood`.
                return gradient
                    .iter_mut()
                    .zip(counts)
                    .zip(gu)
                    .zip(offsets)
                    .map(|(((g, c), u), offset)| {
                        let eta = u + offset;
                        let rate = eta.exp();
                        *g = c - rate;
                        c * eta - rate
                    })
                    .sum();
            }
            Self::Binomial {
                successes,
                trials,
                offsets,
            } => {
                // One exp and one ln_1p per cell for the value and the gradient; the same terms,
                // summed in the same order, as `log_likelihood`.
                return gradient
                    .iter_mut()
                    .zip(successes)
                    .zip(trials)
                    .zip(offsets)
                    .zip(gu)
                    .map(|((((g, &k), &n), offset), u)| {
                        let (value, slope) = binomial_logit_with_slope(k, n, u + offset);
                        *g = slope;
                        value
                    })
                    .sum();
            }
        }
        self.log_likelihood(gu)
    }

    /// The negative second derivative of the log-likelihood with respect to each observed value
    /// (the diagonal of the likelihood's Fisher-like Hessian): >= 0 for every likelihood, each
    /// log-concave in u.
    pub(crate) fn curvature(&self, gu: &[f64], out: &mut [f64]) {
        debug_assert_eq!(gu.len(), self.len());
        crate::simd_state::clear_upper_state();
        match self {
            Self::Gaussian { noise_sd, .. } => out.fill(1.0 / (noise_sd * noise_sd)),
            Self::Probit { labels, noise_sd } => {
                let inv = 1.0 / noise_sd;
                for ((w, t), u) in out.iter_mut().zip(labels).zip(gu) {
                    *w = inv * inv * log_phi_curvature(t * u * inv);
                }
            }
            Self::Poisson { offsets, .. } => {
                for ((w, u), offset) in out.iter_mut().zip(gu).zip(offsets) {
                    *w = (u + offset).exp();
                }
            }
            Self::Binomial {
                trials, offsets, ..
            } => {
                for (((w, &n), offset), u) in out.iter_mut().zip(trials).zip(offsets).zip(gu) {
                    *w = binomial_logit_curvature(n, u + offset);
                }
            }
        }
    }
}

/// A derivative of one order of ln Phi (in its argument) and of the binomial logit term (in
/// trials and log-odds): what [`Likelihood::third_derivative`] and
/// [`Likelihood::fourth_derivative`] differ in.
type DerivativesOfOrder = (fn(f64) -> f64, fn(f64, f64) -> f64);

impl Likelihood {
    /// The third derivative of the log-likelihood with respect to each observed value (the
    /// simplified Laplace approximation's skewness term, [`crate::model::laplace::skew`]): 0 for
    /// gaussian, -exp(u + offset) for poisson, -n p (1 - p) (1 - 2 p) for binomial, and
    /// (t / s)^3 times ln Phi's third derivative at t u / s for a probit label t.
    pub(crate) fn third_derivative(&self, gu: &[f64], out: &mut [f64]) {
        self.higher_derivative(
            gu,
            out,
            3,
            (log_phi_third_derivative, binomial_logit_third_derivative),
        );
    }

    /// The fourth derivative (the second-order correction of the Laplace evidence,
    /// [`crate::model::laplace::skew`]): 0 for gaussian, -exp(u + offset) for poisson, -n p (1 -
    /// p) (1 - 6 p (1 - p)) for binomial, (t / s)^4 times ln Phi's fourth derivative for probit.
    pub(crate) fn fourth_derivative(&self, gu: &[f64], out: &mut [f64]) {
        self.higher_derivative(
            gu,
            out,
            4,
            (log_phi_fourth_derivative, binomial_logit_fourth_derivative),
        );
    }

    /// The `order`-th derivative (3 or 4) of each observation's log-likelihood, from ln Phi's and
    /// the binomial logit term's derivative of that order (`probit`, `binomial`); a poisson
    /// term's every derivative beyond the first is -exp(u + offset).
    fn higher_derivative(
        &self,
        gu: &[f64],
        out: &mut [f64],
        order: i32,
        (probit, binomial): DerivativesOfOrder,
    ) {
        debug_assert_eq!(gu.len(), self.len());
        match self {
            Self::Gaussian { .. } => out.fill(0.0),
            Self::Probit { labels, noise_sd } => {
                for ((d, t), u) in out.iter_mut().zip(labels).zip(gu) {
                    let slope = t / noise_sd;
                    *d = slope.powi(order) * probit(slope * u);
                }
            }
            Self::Poisson { offsets, .. } => {
                for ((d, u), offset) in out.iter_mut().zip(gu).zip(offsets) {
                    *d = -(u + offset).exp();
                }
            }
            Self::Binomial {
                trials, offsets, ..
            } => {
                for (((d, &n), offset), u) in out.iter_mut().zip(trials).zip(offsets).zip(gu) {
                    *d = binomial(n, u + offset);
                }
            }
        }
    }
}

/// One likelihood of each kind on `m` observations, with values that exercise every branch
/// (for the gradient and Hessian checks against finite differences).
#[cfg(test)]
pub(crate) fn one_of_each(m: usize) -> [Likelihood; 4] {
    use LikelihoodKind::*;
    let labels = (0..m).map(|k| if k % 3 == 0 { -1.0 } else { 1.0 });
    [
        Likelihood::new(
            Gaussian,
            (0..m).map(|k| (k as f64).sin()).collect(),
            0.6,
            0.0,
        ),
        Likelihood::new(Probit, labels.collect(), 0.8, 0.0),
        Likelihood::new(Poisson, (0..m).map(|k| (k % 4) as f64).collect(), 1.0, 0.3),
        Likelihood::binomial(
            (0..m).map(|k| (k % 4) as f64).collect(),
            (0..m).map(|k| (k % 4 + k % 3) as f64).collect(),
            (0..m).map(|k| 0.2 - 0.1 * (k % 5) as f64).collect(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaussian log-likelihood at another noise sd: its value is the full log density less
    /// M log(2 pi) / 2, its gradients in G u and in s match central differences.
    #[test]
    fn gaussian_at_another_noise_sd_keeps_the_log_normaliser() {
        let values = vec![0.3, -1.2, 2.0, 0.7];
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values.clone(), 0.5, 0.0);
        let gu = [0.1, -0.8, 1.1, 1.5];
        let s = 0.9;
        let mut gradient = [0.0; 4];
        let (value, slope) = likelihood
            .gaussian_at_noise(&gu, s, Some(&mut gradient))
            .unwrap();
        let full: f64 = (0..4)
            .map(|i| likelihood.pointwise(i, gu[i], Some(s)))
            .sum();
        let constant = 2.0 * (2.0 * std::f64::consts::PI).ln();
        assert!((value - (full + constant)).abs() < 1e-12);
        let at = |gu: &[f64], s: f64| likelihood.gaussian_at_noise(gu, s, None).unwrap().0;
        let h = 1e-6;
        assert!(((at(&gu, s + h) - at(&gu, s - h)) / (2.0 * h) - slope).abs() < 1e-7);
        for i in 0..4 {
            let (mut up, mut down) = (gu, gu);
            up[i] += h;
            down[i] -= h;
            assert!(((at(&up, s) - at(&down, s)) / (2.0 * h) - gradient[i]).abs() < 1e-7);
        }
        assert!(
            Likelihood::new(LikelihoodKind::Poisson, values, 0.5, 0.0)
                .gaussian_at_noise(&gu, s, None)
                .is_none()
        );
    }

    #[test]
    fn gaussian_is_the_scaled_squared_distance() {
        let l = Likelihood::new(LikelihoodKind::Gaussian, vec![1.0, -1.0], 2.0, 0.0);
        // -((1-0)^2 + (-1-1)^2) / (2 * 4)
        assert!((l.log_likelihood(&[0.0, 1.0]) + 5.0 / 8.0).abs() < 1e-15);
    }

    #[test]
    fn probit_stays_finite_far_in_the_tail() {
        let l = Likelihood::new(LikelihoodKind::Probit, vec![1.0, -1.0], 1.0, 0.0);
        let ll = l.log_likelihood(&[-60.0, 60.0]);
        assert!(ll.is_finite() && ll < -3000.0);
    }

    /// k ln p + (n - k) ln(1 - p) with p = logistic(u + offset): the binomial log pmf less its
    /// log binomial coefficient; with one trial each, [`Likelihood::new`]'s Bernoulli.
    #[test]
    fn binomial_matches_the_log_density_up_to_the_binomial_coefficient() {
        let l = Likelihood::binomial(vec![3.0, 0.0], vec![8.0, 2.0], vec![0.5, -1.0]);
        let term = |k: f64, n: f64, x: f64| {
            let p = 1.0 / (1.0 + (-x).exp());
            k * p.ln() + (n - k) * (1.0 - p).ln()
        };
        let expected = term(3.0, 8.0, 0.2 + 0.5) + term(0.0, 2.0, -0.4 - 1.0);
        assert!((l.log_likelihood(&[0.2, -0.4]) - expected).abs() < 1e-14);
        let bernoulli = Likelihood::new(LikelihoodKind::Binomial, vec![1.0, 0.0], 1.0, 0.3);
        let expected = term(1.0, 1.0, 0.2 + 0.3) + term(0.0, 1.0, -0.4 + 0.3);
        assert!((bernoulli.log_likelihood(&[0.2, -0.4]) - expected).abs() < 1e-14);
        assert_eq!(bernoulli.kind(), LikelihoodKind::Binomial);
    }

    /// The binomial gradient and curvature against central differences at log-odds from -700 to
    /// 700 (e^-700 = 1e-304, near the end of the normal range), with the successes at 0, at n
    /// and between. Each difference is judged by its own rounding bound, 2 eps |f| / h for a
    /// derivative of f, plus a relative 1e-6 of the derivative: where the derivative is tiny
    /// because its leading terms cancel exactly (k = n far above 0, k = 0 far below), the value
    /// is tiny too and the comparison is relative, so a form that lost the tail's digits fails.
    #[test]
    fn binomial_gradient_and_curvature_match_finite_differences_at_extreme_log_odds() {
        let points = [
            -700.0, -300.0, -40.0, -3.0, -0.1, 0.0, 0.1, 2.5, 40.0, 300.0, 700.0,
        ];
        let cases = [(0.0, 6.0), (6.0, 6.0), (2.0, 6.0), (1.0, 1.0), (0.0, 0.0)];
        let h = 1e-5;
        let eps = f64::EPSILON;
        for &x in &points {
            for &(k, n) in &cases {
                let likelihood = Likelihood::binomial(vec![k], vec![n], vec![0.0]);
                let value = |x: f64| likelihood.log_likelihood(&[x]);
                let slope = |x: f64| {
                    let mut g = [0.0];
                    likelihood.log_likelihood_and_gradient(&[x], &mut g);
                    g[0]
                };
                let mut curvature = [0.0];
                likelihood.curvature(&[x], &mut curvature);
                let (gradient, curvature) = (slope(x), curvature[0]);
                assert!(value(x).is_finite() && value(x) <= 0.0, "{k}/{n} at {x}");
                let numeric = (value(x + h) - value(x - h)) / (2.0 * h);
                let bound = 2.0 * eps * value(x).abs() / h + 1e-6 * gradient.abs();
                assert!(
                    (numeric - gradient).abs() <= bound,
                    "{k}/{n} at {x}: gradient {gradient:e}, differences {numeric:e}"
                );
                let second = -(slope(x + h) - slope(x - h)) / (2.0 * h);
                let bound = 2.0 * eps * gradient.abs() / h + 1e-6 * curvature;
                assert!(
                    (second - curvature).abs() <= bound,
                    "{k}/{n} at {x}: curvature {curvature:e}, differences {second:e}"
                );
                assert!(curvature >= 0.0 && (n == 0.0 || curvature > 0.0), "{x}");
            }
        }
    }

    #[test]
    fn poisson_matches_the_log_density_up_to_log_factorial() {
        let l = Likelihood::new(LikelihoodKind::Poisson, vec![3.0], 1.0, 0.5);
        let eta: f64 = 0.2 + 0.5;
        assert!((l.log_likelihood(&[0.2]) - (3.0 * eta - eta.exp())).abs() < 1e-15);
    }

    /// The probit's batched value and gradient, over more cells than one batch, are the
    /// cell-by-cell ln Phi and its slope bit for bit, and the value-only path adds the same terms
    /// in the same order.
    #[test]
    fn probit_batches_are_the_cell_by_cell_terms() {
        let n = 3 * crate::model::special::LOG_PHI_BATCH + 17;
        let labels: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let gu: Vec<f64> = (0..n).map(|i| (i as f64 * 0.61).sin() * 4.0).collect();
        let noise_sd = 0.8;
        let likelihood = Likelihood::new(LikelihoodKind::Probit, labels.clone(), noise_sd, 0.0);
        let mut gradient = vec![0.0; n];
        let value = likelihood.log_likelihood_and_gradient(&gu, &mut gradient);
        assert_eq!(value.to_bits(), likelihood.log_likelihood(&gu).to_bits());
        let inv = 1.0 / noise_sd;
        let mut expected = 0.0;
        for ((t, u), g) in labels.iter().zip(&gu).zip(&gradient) {
            let (term, slope) = crate::model::special::log_phi_with_derivative(t * u * inv);
            expected += term;
            assert_eq!(g.to_bits(), (slope * (t * inv)).to_bits());
        }
        assert_eq!(value.to_bits(), expected.to_bits());
    }

    /// Gradient and curvature of every likelihood against central differences of the value, the
    /// third derivative against central differences of the curvature, the fourth against those of
    /// the third.
    #[test]
    fn gradient_and_curvature_match_finite_differences() {
        let gu = [-2.3, -0.4, 0.0, 0.9, 3.1];
        let likelihoods = [
            Likelihood::new(
                LikelihoodKind::Gaussian,
                vec![1.0, -0.5, 0.2, 2.0, 0.0],
                0.7,
                0.0,
            ),
            Likelihood::new(
                LikelihoodKind::Probit,
                vec![1.0, -1.0, 1.0, -1.0, 1.0],
                0.8,
                0.0,
            ),
            Likelihood::new(
                LikelihoodKind::Poisson,
                vec![0.0, 3.0, 1.0, 7.0, 20.0],
                1.0,
                -0.3,
            ),
            Likelihood::binomial(
                vec![0.0, 3.0, 1.0, 7.0, 20.0],
                vec![4.0, 3.0, 1.0, 12.0, 50.0],
                vec![0.5, -0.2, 0.0, 1.3, -0.7],
            ),
        ];
        for likelihood in likelihoods {
            let mut gradient = [0.0; 5];
            let value = likelihood.log_likelihood_and_gradient(&gu, &mut gradient);
            assert_eq!(value, likelihood.log_likelihood(&gu));
            let mut curvature = [0.0; 5];
            likelihood.curvature(&gu, &mut curvature);
            let mut third_derivative = [0.0; 5];
            likelihood.third_derivative(&gu, &mut third_derivative);
            let mut fourth_derivative = [0.0; 5];
            likelihood.fourth_derivative(&gu, &mut fourth_derivative);
            let h = 1e-5;
            for k in 0..5 {
                let at = |delta: f64| {
                    let mut moved = gu;
                    moved[k] += delta;
                    moved
                };
                let numeric = (likelihood.log_likelihood(&at(h))
                    - likelihood.log_likelihood(&at(-h)))
                    / (2.0 * h);
                let kind = likelihood.kind();
                assert!(
                    (numeric - gradient[k]).abs() < 1e-6,
                    "{kind:?} gradient {k}"
                );
                let mut up = [0.0; 5];
                let mut down = [0.0; 5];
                likelihood.log_likelihood_and_gradient(&at(h), &mut up);
                likelihood.log_likelihood_and_gradient(&at(-h), &mut down);
                let second = -(up[k] - down[k]) / (2.0 * h);
                assert!(
                    (second - curvature[k]).abs() < 1e-5,
                    "{kind:?} curvature {k}"
                );
                // The third derivative: minus the curvature's central difference.
                let (mut above, mut below) = ([0.0; 5], [0.0; 5]);
                likelihood.curvature(&at(h), &mut above);
                likelihood.curvature(&at(-h), &mut below);
                let third = -(above[k] - below[k]) / (2.0 * h);
                assert!(
                    (third - third_derivative[k]).abs() < 1e-5 * (1.0 + third.abs()),
                    "{kind:?} third derivative {k}: {third} against {}",
                    third_derivative[k]
                );
                // The fourth: the third derivative's central difference.
                let (mut above, mut below) = ([0.0; 5], [0.0; 5]);
                likelihood.third_derivative(&at(h), &mut above);
                likelihood.third_derivative(&at(-h), &mut below);
                let fourth = (above[k] - below[k]) / (2.0 * h);
                assert!(
                    (fourth - fourth_derivative[k]).abs() < 1e-5 * (1.0 + fourth.abs()),
                    "{kind:?} fourth derivative {k}: {fourth} against {}",
                    fourth_derivative[k]
                );
            }
        }
    }

    /// Each likelihood's pointwise value is the full density or mass written out by hand (the
    /// normal density, Phi by erfc, y! and C(n, k) as products), and the pointwise values differ
    /// from [`Likelihood::log_likelihood`] by exactly the constants it drops.
    #[test]
    fn pointwise_values_are_the_full_densities() {
        let gu = [-1.3, 0.25, 2.1];
        let factorial = |k: f64| (1..=k as u64).map(|j| j as f64).product::<f64>();
        let choose = |n: f64, k: f64| factorial(n) / (factorial(k) * factorial(n - k));
        let phi = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
        let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
        let (s, pi) = (0.7, std::f64::consts::PI);
        let gaussian = Likelihood::new(LikelihoodKind::Gaussian, vec![0.4, -0.2, 3.0], s, 9.0);
        let probit = Likelihood::new(LikelihoodKind::Probit, vec![1.0, -1.0, -1.0], s, 0.0);
        let offsets = vec![0.3, -0.8, 0.0];
        let counts = vec![0.0, 4.0, 11.0];
        let poisson = Likelihood::with_offsets(
            LikelihoodKind::Poisson,
            counts.clone(),
            1.0,
            offsets.clone(),
        );
        let (successes, trials) = (vec![0.0, 3.0, 7.0], vec![2.0, 5.0, 7.0]);
        let binomial = Likelihood::binomial(successes.clone(), trials.clone(), offsets.clone());
        type Density<'a> = Box<dyn Fn(usize, f64) -> f64 + 'a>;
        let by_hand: [(&Likelihood, Density<'_>); 4] = [
            (
                &gaussian,
                Box::new(|i, u| {
                    let y = [0.4, -0.2, 3.0][i];
                    ((-(y - u) * (y - u) / (2.0 * s * s)).exp() / (s * (2.0 * pi).sqrt())).ln()
                }),
            ),
            (
                &probit,
                Box::new(|i, u| phi([1.0, -1.0, -1.0][i] * u / s).ln()),
            ),
            (
                &poisson,
                Box::new(|i, u| {
                    let rate = (u + [0.3, -0.8, 0.0][i]).exp();
                    let y = [0.0, 4.0, 11.0][i];
                    (rate.powf(y) * (-rate).exp() / factorial(y)).ln()
                }),
            ),
            (
                &binomial,
                Box::new(|i, u| {
                    let (k, n) = ([0.0, 3.0, 7.0][i], [2.0, 5.0, 7.0][i]);
                    let p = logistic(u + [0.3, -0.8, 0.0][i]);
                    (choose(n, k) * p.powf(k) * (1.0 - p).powf(n - k)).ln()
                }),
            ),
        ];
        for (likelihood, density) in &by_hand {
            for (i, &u) in gu.iter().enumerate() {
                let ours = likelihood.pointwise(i, u, None);
                let expected = density(i, u);
                assert!(
                    (ours - expected).abs() < 1e-12 * expected.abs().max(1.0),
                    "{:?} observation {i}: {ours} against {expected}",
                    likelihood.kind()
                );
            }
        }
        // The dropped constants: the normal's, log y! and log C(n, k); probit drops none.
        let sum = |l: &Likelihood| (0..3).map(|i| l.pointwise(i, gu[i], None)).sum::<f64>();
        let gaussian_constant = -3.0 * (s.ln() + 0.5 * (2.0 * pi).ln());
        let log_factorials: f64 = counts.iter().map(|&y| factorial(y).ln()).sum();
        let log_choose: f64 = successes
            .iter()
            .zip(&trials)
            .map(|(&k, &n)| choose(n, k).ln())
            .sum();
        for (likelihood, constant) in [
            (&gaussian, gaussian_constant),
            (&probit, 0.0),
            (&poisson, -log_factorials),
            (&binomial, log_choose),
        ] {
            let gap = sum(likelihood) - likelihood.log_likelihood(&gu) - constant;
            assert!(gap.abs() < 1e-12, "{:?}: {gap}", likelihood.kind());
        }
    }

    /// Per-count offsets: the log-likelihood, gradient and curvature are each cell's own
    /// one-cell likelihood's, and one offset for every count is `new`'s.
    #[test]
    fn poisson_offsets_apply_count_by_count() {
        let (counts, offsets, gu) = ([2.0, 0.0, 5.0], [-0.7, 0.0, 1.3], [0.4, -1.1, 0.2]);
        let joint = Likelihood::with_offsets(
            LikelihoodKind::Poisson,
            counts.to_vec(),
            1.0,
            offsets.to_vec(),
        );
        let mut gradient = [0.0; 3];
        let mut curvature = [0.0; 3];
        let total = joint.log_likelihood_and_gradient(&gu, &mut gradient);
        joint.curvature(&gu, &mut curvature);
        let mut expected = 0.0;
        for k in 0..3 {
            let one = Likelihood::new(LikelihoodKind::Poisson, vec![counts[k]], 1.0, offsets[k]);
            let mut g = [0.0];
            let mut w = [0.0];
            expected += one.log_likelihood_and_gradient(&gu[k..=k], &mut g);
            one.curvature(&gu[k..=k], &mut w);
            assert_eq!((gradient[k], curvature[k]), (g[0], w[0]));
        }
        assert!((total - expected).abs() < 1e-14);
        assert_eq!(joint.log_likelihood(&gu), total);
        let shared =
            Likelihood::with_offsets(LikelihoodKind::Poisson, vec![1.0, 2.0], 1.0, vec![0.3; 2]);
        assert_eq!(
            shared,
            Likelihood::new(LikelihoodKind::Poisson, vec![1.0, 2.0], 1.0, 0.3)
        );
    }
}
