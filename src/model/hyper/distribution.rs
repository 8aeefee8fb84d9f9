//! The prior distributions a study can put on a hyperparameter, written in a study as a call,
//! `"log-normal(-1.2, 0.5)"`, and parsed once, at validation, into a [`HyperPrior`].
//!
//! Every distribution has a log density on its natural scale, a support (the positive half-line
//! or the whole line), and a sampler (simulation-based calibration draws true hyperparameters
//! from it). Parameters follow the usual textbook conventions, stated with each variant.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Gamma, Normal};

use crate::incomplete_gamma::lower_regularized_gamma;

crate::closed_names! {
    /// The families of hyperparameter priors, as a study names them.
    pub(crate) enum PriorFamily {
        /// `log-normal(mu, sigma)`: log x ~ N(mu, sigma^2).
        LogNormal = "log-normal",
        /// `gamma(shape, rate)`: density proportional to x^(shape - 1) exp(-rate x).
        Gamma = "gamma",
        /// `inverse-gamma(shape, scale)`: 1 / x ~ gamma(shape, rate = scale).
        InverseGamma = "inverse-gamma",
        /// `half-normal(sd)`: |N(0, sd^2)|.
        HalfNormal = "half-normal",
        /// `uniform(low, high)`: flat on [low, high].
        Uniform = "uniform",
        /// `normal(mean, sd)`.
        Normal = "normal",
    }
}

/// A prior on one hyperparameter (checked: every parameter in its range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum HyperPrior {
    LogNormal { mu: f64, sigma: f64 },
    Gamma { shape: f64, rate: f64 },
    InverseGamma { shape: f64, scale: f64 },
    HalfNormal { sd: f64 },
    Uniform { low: f64, high: f64 },
    Normal { mean: f64, sd: f64 },
}

/// Where a distribution puts its mass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// x > 0 (sampled on log x).
    Positive,
    /// Any real x.
    Real,
    /// low <= x <= high (sampled on the logit of the position in the interval).
    Interval,
}

/// A prior written wrongly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum PriorSyntaxError {
    #[error("`{text}` is not of the form name(a, b), e.g. \"log-normal(-1.2, 0.5)\"")]
    Form { text: String },
    #[error("`{name}` is not a prior family")]
    Family { name: String },
    #[error("{family} takes {expected} parameter(s) ({names}), found {found}")]
    Arity {
        family: &'static str,
        expected: usize,
        names: &'static str,
        found: usize,
    },
    #[error("`{text}` is not a number")]
    Number { text: String },
    #[error("{family}: {rule}")]
    Range {
        family: &'static str,
        rule: &'static str,
    },
}

/// The forms allowed, for error messages and the key documentation.
pub(crate) const PRIOR_FORMS: &str = "\"log-normal(mu, sigma)\" (sigma > 0), \"gamma(shape, rate)\" \
     (both > 0), \"inverse-gamma(shape, scale)\" (both > 0), \"half-normal(sd)\" (sd > 0), \
     \"uniform(low, high)\" (low < high), \"normal(mean, sd)\" (sd > 0)";

impl HyperPrior {
    /// Parse `family(a, b)`.
    pub fn parse(text: &str) -> Result<Self, PriorSyntaxError> {
        let form = || PriorSyntaxError::Form {
            text: text.to_string(),
        };
        let trimmed = text.trim();
        let open = trimmed.find('(').ok_or_else(form)?;
        let inner = trimmed
            .strip_suffix(')')
            .map(|t| &t[open + 1..])
            .ok_or_else(form)?;
        let name = trimmed[..open].trim();
        let family = PriorFamily::from_name(name).ok_or_else(|| PriorSyntaxError::Family {
            name: name.to_string(),
        })?;
        let numbers = inner
            .split(',')
            .map(|t| {
                let t = t.trim();
                t.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| PriorSyntaxError::Number {
                        text: t.to_string(),
                    })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        Self::new(family, &numbers)
    }

    /// The prior of `family` with `parameters`, checked.
    pub(crate) fn new(family: PriorFamily, parameters: &[f64]) -> Result<Self, PriorSyntaxError> {
        let names = match family {
            PriorFamily::LogNormal => "mu, sigma",
            PriorFamily::Gamma => "shape, rate",
            PriorFamily::InverseGamma => "shape, scale",
            PriorFamily::HalfNormal => "sd",
            PriorFamily::Uniform => "low, high",
            PriorFamily::Normal => "mean, sd",
        };
        let expected = names.split(',').count();
        if parameters.len() != expected {
            return Err(PriorSyntaxError::Arity {
                family: family.name(),
                expected,
                names,
                found: parameters.len(),
            });
        }
        let range = |ok: bool, rule: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(PriorSyntaxError::Range {
                    family: family.name(),
                    rule,
                })
            }
        };
        let p = parameters;
        let prior = match family {
            PriorFamily::LogNormal => {
                range(p[1] > 0.0, "sigma must be > 0")?;
                HyperPrior::LogNormal {
                    mu: p[0],
                    sigma: p[1],
                }
            }
            PriorFamily::Gamma => {
                range(p[0] > 0.0 && p[1] > 0.0, "shape and rate must be > 0")?;
                HyperPrior::Gamma {
                    shape: p[0],
                    rate: p[1],
                }
            }
            PriorFamily::InverseGamma => {
                range(p[0] > 0.0 && p[1] > 0.0, "shape and scale must be > 0")?;
                HyperPrior::InverseGamma {
                    shape: p[0],
                    scale: p[1],
                }
            }
            PriorFamily::HalfNormal => {
                range(p[0] > 0.0, "sd must be > 0")?;
                HyperPrior::HalfNormal { sd: p[0] }
            }
            PriorFamily::Uniform => {
                range(p[0] < p[1], "low must be below high")?;
                HyperPrior::Uniform {
                    low: p[0],
                    high: p[1],
                }
            }
            PriorFamily::Normal => {
                range(p[1] > 0.0, "sd must be > 0")?;
                HyperPrior::Normal {
                    mean: p[0],
                    sd: p[1],
                }
            }
        };
        Ok(prior)
    }

    pub(crate) fn family(&self) -> PriorFamily {
        match self {
            HyperPrior::LogNormal { .. } => PriorFamily::LogNormal,
            HyperPrior::Gamma { .. } => PriorFamily::Gamma,
            HyperPrior::InverseGamma { .. } => PriorFamily::InverseGamma,
            HyperPrior::HalfNormal { .. } => PriorFamily::HalfNormal,
            HyperPrior::Uniform { .. } => PriorFamily::Uniform,
            HyperPrior::Normal { .. } => PriorFamily::Normal,
        }
    }

    pub(crate) fn support(&self) -> Support {
        match self {
            HyperPrior::Normal { .. } => Support::Real,
            HyperPrior::Uniform { .. } => Support::Interval,
            _ => Support::Positive,
        }
    }

    /// Whether the prior puts all its mass on x > 0 (a length scale or a variance needs it).
    pub(crate) fn is_positive(&self) -> bool {
        match *self {
            HyperPrior::Uniform { low, .. } => low >= 0.0,
            HyperPrior::Normal { .. } => false,
            _ => true,
        }
    }

    /// log p(x), the normalising constant included (-inf outside the support).
    pub(crate) fn log_density(&self, x: f64) -> f64 {
        use std::f64::consts::PI;
        let half_log_2pi = 0.5 * (2.0 * PI).ln();
        if !x.is_finite() {
            return f64::NEG_INFINITY;
        }
        match *self {
            HyperPrior::LogNormal { mu, sigma } if x > 0.0 => {
                let z = (x.ln() - mu) / sigma;
                -0.5 * z * z - sigma.ln() - x.ln() - half_log_2pi
            }
            HyperPrior::Gamma { shape, rate } if x > 0.0 => {
                shape * rate.ln() - libm::lgamma(shape) + (shape - 1.0) * x.ln() - rate * x
            }
            HyperPrior::InverseGamma { shape, scale } if x > 0.0 => {
                shape * scale.ln() - libm::lgamma(shape) - (shape + 1.0) * x.ln() - scale / x
            }
            HyperPrior::HalfNormal { sd } if x >= 0.0 => {
                let z = x / sd;
                -0.5 * z * z - sd.ln() - half_log_2pi + std::f64::consts::LN_2
            }
            HyperPrior::Uniform { low, high } if (low..=high).contains(&x) => -(high - low).ln(),
            HyperPrior::Normal { mean, sd } => {
                let z = (x - mean) / sd;
                -0.5 * z * z - sd.ln() - half_log_2pi
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// One draw.
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let standard = || Normal::new(0.0, 1.0).expect("unit normal");
        match *self {
            HyperPrior::LogNormal { mu, sigma } => (mu + sigma * standard().sample(rng)).exp(),
            HyperPrior::Gamma { shape, rate } => Gamma::new(shape, 1.0 / rate)
                .expect("checked parameters")
                .sample(rng),
            HyperPrior::InverseGamma { shape, scale } => {
                1.0 / Gamma::new(shape, 1.0 / scale)
                    .expect("checked parameters")
                    .sample(rng)
            }
            HyperPrior::HalfNormal { sd } => (sd * standard().sample(rng)).abs(),
            HyperPrior::Uniform { low, high } => low + (high - low) * rng.random::<f64>(),
            HyperPrior::Normal { mean, sd } => mean + sd * standard().sample(rng),
        }
    }

    /// The value as the study writes it: `family(a, b)` with `{:?}` numbers.
    pub(crate) fn canonical(&self) -> String {
        let parameters: Vec<f64> = match *self {
            HyperPrior::LogNormal { mu, sigma } => vec![mu, sigma],
            HyperPrior::Gamma { shape, rate } => vec![shape, rate],
            HyperPrior::InverseGamma { shape, scale } => vec![shape, scale],
            HyperPrior::HalfNormal { sd } => vec![sd],
            HyperPrior::Uniform { low, high } => vec![low, high],
            HyperPrior::Normal { mean, sd } => vec![mean, sd],
        };
        let numbers: Vec<String> = parameters.iter().map(|p| format!("{p:?}")).collect();
        format!("{}({})", self.family().name(), numbers.join(","))
    }

    /// The median: the value with half the prior's mass on either side. Closed forms but for
    /// the gamma family, whose median is found by bisection on its distribution function.
    pub(crate) fn median(&self) -> f64 {
        /// The median of |N(0, 1)|: Phi^-1(3/4).
        const HALF_NORMAL_MEDIAN: f64 = 0.674_489_750_196_081_7;
        match *self {
            HyperPrior::LogNormal { mu, .. } => mu.exp(),
            HyperPrior::Gamma { shape, rate } => standard_gamma_median(shape) / rate,
            HyperPrior::InverseGamma { shape, scale } => scale / standard_gamma_median(shape),
            HyperPrior::HalfNormal { sd } => sd * HALF_NORMAL_MEDIAN,
            HyperPrior::Uniform { low, high } => low + (high - low) / 2.0,
            HyperPrior::Normal { mean, .. } => mean,
        }
    }

    /// The standard deviation of the unconstrained coordinate z (see [`Self::to_unconstrained`])
    /// under the prior: the unit in which a chain's start is judged near or far. Closed forms:
    /// sigma of the log-normal; sqrt(trigamma(shape)) for log x of a gamma or inverse-gamma;
    /// pi / sqrt(8) for log |N(0, sd^2)| whatever sd; pi / sqrt(3) for the logit of a uniform
    /// position (the standard logistic); sd of the normal.
    pub(crate) fn unconstrained_sd(&self) -> f64 {
        use std::f64::consts::PI;
        match *self {
            HyperPrior::LogNormal { sigma, .. } => sigma,
            HyperPrior::Gamma { shape, .. } | HyperPrior::InverseGamma { shape, .. } => {
                trigamma(shape).sqrt()
            }
            HyperPrior::HalfNormal { .. } => PI / 8f64.sqrt(),
            HyperPrior::Uniform { .. } => PI / 3f64.sqrt(),
            HyperPrior::Normal { sd, .. } => sd,
        }
    }

    /// The value `z` [`Self::unconstrained_sd`]s from the median on the unconstrained scale:
    /// the prior's quantile at standard-normal z for a log-normal prior (exactly), near it for
    /// the others.
    pub(crate) fn sds_from_median(&self, z: f64) -> f64 {
        self.from_unconstrained(self.to_unconstrained(self.median()) + z * self.unconstrained_sd())
    }

    /// The unconstrained coordinate z of a value x: log x on the positive half-line, the logit of
    /// (x - low) / (high - low) on an interval, x itself on the line.
    #[allow(clippy::wrong_self_convention)] // the prior maps its own coordinates
    pub(crate) fn to_unconstrained(&self, x: f64) -> f64 {
        match (*self, self.support()) {
            (_, Support::Positive) => x.ln(),
            (HyperPrior::Uniform { low, high }, Support::Interval) => {
                let p = (x - low) / (high - low);
                (p / (1.0 - p)).ln()
            }
            _ => x,
        }
    }

    /// The value x of an unconstrained coordinate z.
    #[allow(clippy::wrong_self_convention)] // the prior maps its own coordinates
    pub(crate) fn from_unconstrained(&self, z: f64) -> f64 {
        match (*self, self.support()) {
            (_, Support::Positive) => z.exp(),
            (HyperPrior::Uniform { low, high }, Support::Interval) => {
                low + (high - low) / (1.0 + (-z).exp())
            }
            _ => z,
        }
    }

    /// log p(z) on the unconstrained coordinate: log p(x(z)) + log |dx / dz|.
    pub(crate) fn log_density_unconstrained(&self, z: f64) -> f64 {
        let x = self.from_unconstrained(z);
        let jacobian = match (*self, self.support()) {
            (_, Support::Positive) => z,
            (HyperPrior::Uniform { low, high }, Support::Interval) => {
                // dx/dz = (high - low) s (1 - s), s the logistic of z, computed stably.
                (high - low).ln() - softplus(-z) - softplus(z)
            }
            _ => 0.0,
        };
        self.log_density(x) + jacobian
    }
    /// d log p(z) / dz on the unconstrained coordinate (the Jacobian's slope included), in
    /// closed form for every family: what a gradient-based chain on the hyperparameters needs.
    pub(crate) fn log_density_unconstrained_slope(&self, z: f64) -> f64 {
        match *self {
            // x = e^z: d/dz [log p(x) + z] = x d log p / dx + 1.
            HyperPrior::LogNormal { mu, sigma } => -(z - mu) / (sigma * sigma),
            HyperPrior::Gamma { shape, rate } => shape - rate * z.exp(),
            HyperPrior::InverseGamma { shape, scale } => -shape + scale * (-z).exp(),
            HyperPrior::HalfNormal { sd } => 1.0 - (z.exp() / sd).powi(2),
            // A constant density; the Jacobian log s(z) + log s(-z) has slope 1 - 2 s(z).
            HyperPrior::Uniform { .. } => 1.0 - 2.0 / (1.0 + (-z).exp()),
            HyperPrior::Normal { mean, sd } => -(z - mean) / (sd * sd),
        }
    }

    /// dx / dz: how the value moves with its unconstrained coordinate.
    pub(crate) fn value_slope(&self, z: f64) -> f64 {
        match (*self, self.support()) {
            (_, Support::Positive) => z.exp(),
            (HyperPrior::Uniform { low, high }, Support::Interval) => {
                let s = 1.0 / (1.0 + (-z).exp());
                (high - low) * s * (1.0 - s)
            }
            _ => 1.0,
        }
    }
}

/// The median of gamma(shape, rate 1): bisection of P(shape, x) = 1/2 on the log scale, from
/// below the smallest double to shape + 10 (the median is below the mean, `shape`).
fn standard_gamma_median(shape: f64) -> f64 {
    let (mut low, mut high) = (f64::MIN_POSITIVE.ln(), (shape + 10.0).ln());
    for _ in 0..200 {
        let middle = (low + high) / 2.0;
        if lower_regularized_gamma(shape, middle.exp()) < 0.5 {
            low = middle;
        } else {
            high = middle;
        }
    }
    ((low + high) / 2.0).exp()
}

/// The trigamma function psi'(x), x > 0: the recurrence psi'(x) = psi'(x + 1) + 1 / x^2 up to
/// x >= 10, then the asymptotic series 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7) -
/// 1/(30x^9), whose first omitted term is below 1e-11 there.
fn trigamma(mut x: f64) -> f64 {
    let mut sum = 0.0;
    while x < 10.0 {
        sum += 1.0 / (x * x);
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    sum + inv
        + inv2 / 2.0
        + inv * inv2 * (1.0 / 6.0 - inv2 * (1.0 / 30.0 - inv2 * (1.0 / 42.0 - inv2 / 30.0)))
}

/// log(1 + exp(x)) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// s of a covariate coefficient's prior written `"normal(0, s)"` (s > 0); None for any other
/// text (`model.coefficient_prior`).
pub(crate) fn coefficient_prior_sd(text: &str) -> Option<f64> {
    match HyperPrior::parse(text) {
        Ok(HyperPrior::Normal { mean, sd }) if mean == 0.0 && sd > 0.0 => Some(sd),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form slopes of the unconstrained log density and of the value against central
    /// differences, for every family, at points across each support.
    #[test]
    fn unconstrained_slopes_match_finite_differences() {
        let priors = [
            "log-normal(-2.3, 1.0)",
            "gamma(2, 1.5)",
            "inverse-gamma(3, 2)",
            "half-normal(0.7)",
            "uniform(0.5, 4)",
            "normal(1, 2)",
        ];
        for text in priors {
            let prior = HyperPrior::parse(text).unwrap();
            for z in [-3.0, -0.7, 0.0, 0.4, 2.1] {
                let h = 1e-6;
                let numeric = (prior.log_density_unconstrained(z + h)
                    - prior.log_density_unconstrained(z - h))
                    / (2.0 * h);
                let exact = prior.log_density_unconstrained_slope(z);
                assert!(
                    (numeric - exact).abs() < 1e-5 * exact.abs().max(1.0),
                    "{text} z={z}: {exact} vs {numeric}"
                );
                let numeric =
                    (prior.from_unconstrained(z + h) - prior.from_unconstrained(z - h)) / (2.0 * h);
                let exact = prior.value_slope(z);
                assert!(
                    (numeric - exact).abs() < 1e-6 * exact.abs().max(1.0),
                    "{text} z={z}: dx/dz {exact} vs {numeric}"
                );
            }
        }
    }
    use crate::streams::{Purpose, stream};

    /// Medians with known values: gamma(1, 1) is the exponential (ln 2), gamma(1/2, 1/2) the
    /// chi-square with one degree of freedom, gamma(2, 1) and gamma(10, 1) from R's
    /// `qgamma(0.5, shape)`.
    #[test]
    fn medians_are_the_known_values() {
        let cases = [
            ("log-normal(-2.3, 1.0)", (-2.3f64).exp()),
            ("gamma(1, 1)", std::f64::consts::LN_2),
            ("gamma(1, 4)", std::f64::consts::LN_2 / 4.0),
            ("gamma(0.5, 0.5)", 0.454_936_423_119_572_8),
            ("gamma(2, 1)", 1.678_346_990_016_660_8),
            ("gamma(10, 1)", 9.668_714_614_714_128),
            ("inverse-gamma(1, 3)", 3.0 / std::f64::consts::LN_2),
            ("half-normal(2)", 2.0 * 0.674_489_750_196_081_7),
            ("uniform(0.05, 0.8)", 0.425),
            ("normal(1.5, 0.7)", 1.5),
        ];
        for (text, median) in cases {
            let got = HyperPrior::parse(text).unwrap().median();
            assert!(
                (got - median).abs() < 1e-9 * median.abs(),
                "{text}: {got} != {median}"
            );
        }
        // A tiny shape puts the median far below the mean; the bisection still finds it.
        let tiny = HyperPrior::parse("gamma(0.05, 1)").unwrap().median();
        assert!(tiny > 0.0 && tiny < 1e-5, "{tiny}");
        assert!((lower_regularized_gamma(0.05, tiny) - 0.5).abs() < 1e-9);
    }

    /// trigamma at known points: pi^2 / 6 at 1, pi^2 / 2 at 1/2, pi^2 / 6 - 1 at 2, and the
    /// unconstrained sds against the sample sd of z over 10^6 prior draws: the relative standard
    /// error of a sample sd is sqrt((kurtosis - 1) / 4n), at most 0.0013 here (log |N| has
    /// kurtosis 7, the largest of these); 0.0065 is five of them, so the six checks together
    /// fail by chance with probability below 4e-6.
    #[test]
    fn unconstrained_sds_match_draws() {
        use std::f64::consts::PI;
        assert!((trigamma(1.0) - PI * PI / 6.0).abs() < 1e-10);
        assert!((trigamma(0.5) - PI * PI / 2.0).abs() < 1e-10);
        assert!((trigamma(2.0) - (PI * PI / 6.0 - 1.0)).abs() < 1e-10);
        let mut rng = stream(11, Purpose::Truth, "unconstrained sd");
        for prior in all() {
            let z: Vec<f64> = (0..1_000_000)
                .map(|_| prior.to_unconstrained(prior.sample(&mut rng)))
                .collect();
            let mean = z.iter().sum::<f64>() / z.len() as f64;
            let sd =
                (z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (z.len() - 1) as f64).sqrt();
            let expected = prior.unconstrained_sd();
            assert!(
                (sd / expected - 1.0).abs() < 0.0065,
                "{prior:?}: draws {sd}, closed form {expected}"
            );
        }
    }

    fn all() -> Vec<HyperPrior> {
        [
            "log-normal(-1.2, 0.5)",
            "gamma(3, 10)",
            "inverse-gamma(6, 1.5)",
            "half-normal(2)",
            "uniform(0.05, 0.8)",
            "normal(1.5, 0.7)",
        ]
        .iter()
        .map(|t| HyperPrior::parse(t).unwrap())
        .collect()
    }

    /// Each density integrates to 1 (midpoint rule on the unconstrained coordinate, which also
    /// checks the Jacobians), and parsing round-trips through the canonical form.
    #[test]
    fn densities_integrate_to_one_on_the_unconstrained_scale() {
        for prior in all() {
            let n = 200_000;
            let (low, high) = (-40.0, 40.0);
            let h = (high - low) / n as f64;
            let total: f64 = (0..n)
                .map(|k| {
                    let z = low + (k as f64 + 0.5) * h;
                    prior.log_density_unconstrained(z).exp() * h
                })
                .sum();
            assert!((total - 1.0).abs() < 1e-6, "{prior:?}: {total}");
            assert_eq!(HyperPrior::parse(&prior.canonical()).unwrap(), prior);
            let x = prior.from_unconstrained(0.3);
            assert!((prior.to_unconstrained(x) - 0.3).abs() < 1e-12, "{prior:?}");
        }
    }

    /// Draws against the closed-form mean and variance: 4 x 10^5 draws each, |z| < 5 for six
    /// means and six variances (Bonferroni over 12 normal z-scores: false-alarm rate 12 x 5.7e-7
    /// = 7e-6 per run; the variance's standard error from the sample fourth moment).
    #[test]
    fn draws_have_the_closed_form_moments() {
        let exact = |p: &HyperPrior| -> (f64, f64) {
            match *p {
                HyperPrior::LogNormal { mu, sigma } => {
                    let s2 = sigma * sigma;
                    (
                        (mu + s2 / 2.0).exp(),
                        (s2.exp() - 1.0) * (2.0 * mu + s2).exp(),
                    )
                }
                HyperPrior::Gamma { shape, rate } => (shape / rate, shape / (rate * rate)),
                HyperPrior::InverseGamma { shape, scale } => (
                    scale / (shape - 1.0),
                    scale * scale / ((shape - 1.0).powi(2) * (shape - 2.0)),
                ),
                HyperPrior::HalfNormal { sd } => (
                    sd * (2.0 / std::f64::consts::PI).sqrt(),
                    sd * sd * (1.0 - 2.0 / std::f64::consts::PI),
                ),
                HyperPrior::Uniform { low, high } => {
                    ((low + high) / 2.0, (high - low).powi(2) / 12.0)
                }
                HyperPrior::Normal { mean, sd } => (mean, sd * sd),
            }
        };
        let mut rng = stream(7, Purpose::Truth, "hyper prior draws");
        for prior in all() {
            let n = 400_000;
            let draws: Vec<f64> = (0..n).map(|_| prior.sample(&mut rng)).collect();
            let mean = draws.iter().sum::<f64>() / n as f64;
            let centred: Vec<f64> = draws.iter().map(|x| (x - mean).powi(2)).collect();
            let variance = centred.iter().sum::<f64>() / n as f64;
            let fourth = centred.iter().map(|c| c * c).sum::<f64>() / n as f64;
            let (m, v) = exact(&prior);
            let z_mean = (mean - m) / (variance / n as f64).sqrt();
            let z_var = (variance - v) / ((fourth - variance * variance) / n as f64).sqrt();
            assert!(z_mean.abs() < 5.0, "{prior:?}: mean z = {z_mean}");
            assert!(z_var.abs() < 5.0, "{prior:?}: variance z = {z_var}");
            for &x in draws.iter().take(1000) {
                assert!(prior.log_density(x).is_finite(), "{prior:?}: {x}");
            }
        }
    }

    #[test]
    fn bad_priors_say_what_is_wrong() {
        let error = |t: &str| HyperPrior::parse(t).unwrap_err().to_string();
        assert!(error("lognormal(0, 1)").contains("not a prior family"));
        assert!(error("gamma(1)").contains("takes 2 parameter(s) (shape, rate), found 1"));
        assert!(error("normal(0, -1)").contains("sd must be > 0"));
        assert!(error("uniform(2, 1)").contains("low must be below high"));
        assert!(error("half-normal(x)").contains("`x` is not a number"));
        assert!(error("gamma 1 2").contains("not of the form"));
    }
}
