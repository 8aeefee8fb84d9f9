//! Predictive accuracy from the pointwise log-likelihood: leave-one-out cross-validation by
//! Pareto-smoothed importance sampling (PSIS-LOO) and the widely applicable information
//! criterion (WAIC), exactly as ArviZ 0.23 computes them (`arviz.loo`, `arviz.psislw`,
//! `arviz.waic` in `arviz/stats/stats.py`), and ArviZ's default relative efficiency of the draws.
//!
//! This module owns those numbers: given log p(y_i | theta_s) for every observation i and kept
//! draw s, [`psis_loo`] returns elpd_loo, its standard error, p_loo and every observation's
//! Pareto k; [`waic`] returns elpd_waic, its standard error and p_waic; [`relative_efficiency`]
//! returns the `reff` ArviZ would use. [`loo_and_waic_by_observation`] and
//! [`relative_efficiency_by_quantity`] give the same numbers from inputs made one observation
//! (one quantity) at a time, so a large job never holds the whole pointwise matrix. Every step copies ArviZ operation for operation (Vehtari,
//! Gelman & Gabry 2017; Vehtari, Simpson, Gelman, Yao & Gabry 2024; Zhang & Stephens 2009 for
//! the generalized Pareto fit), so the results agree with it to rounding;
//! `tests/fixtures/loo/cases.json` holds ArviZ's values on seeded inputs.
//!
//! Everything is on ArviZ's default "log" scale (higher is better). Standard errors and the WAIC
//! variances divide by the count (numpy's `ddof=0`).

use super::draws::{Draws, MIN_DRAWS};
use super::ess::effective_sample_size;

/// Observations whose Pareto k exceeds this are counted in [`Loo::pareto_k_bad`]: above 0.7 the
/// importance-sampling estimate of their elpd is unreliable whatever the draw count (Vehtari et
/// al. 2024). ArviZ's own warning threshold, [`Loo::good_k`], is lower for fewer than 2,155 draws.
pub const BAD_PARETO_K: f64 = 0.7;

/// The smoothed tail is at most the draws over this (ArviZ: `n_samples / 5.0`) ...
const TAIL_DIVISOR: f64 = 5.0;
/// ... and at most this many times sqrt(draws / reff) (ArviZ: `3 * (n_samples / reff) ** 0.5`).
const TAIL_SQRT_FACTOR: f64 = 3.0;
/// Tails of at most this many draws are not fitted: k is infinite and nothing is smoothed.
const MAX_UNFITTED_TAIL: usize = 4;
/// Zhang & Stephens' grid for the generalized Pareto fit has this many points plus sqrt(n).
const MIN_GRID_POINTS: usize = 30;
/// The grid's scale: the first quartile of the tail times this (ArviZ's `prior_bs`).
const PRIOR_B_SCALE: f64 = 3.0;
/// The weakly informative prior on k: worth this many observations (ArviZ's `prior_k`) ...
const PRIOR_K_WEIGHT: f64 = 10.0;
/// ... centred here (k is shrunk to (n k + 10 x 0.5) / (n + 10)).
const PRIOR_K_MODE: f64 = 0.5;
/// Grid points whose posterior weight is below this many machine epsilons are dropped.
const NEGLIGIBLE_WEIGHT_EPS: f64 = 10.0;
/// WAIC's warning: some observation's log-likelihood has a posterior variance above this.
const WAIC_VARIANCE_WARNING: f64 = 0.4;

/// Why an input cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LooError {
    #[error(
        "pointwise log-likelihood of {chains} chains x {draws} draws x {observations} \
         observations needs {expected} values, got {got}"
    )]
    Shape {
        chains: usize,
        draws: usize,
        observations: usize,
        expected: usize,
        got: usize,
    },
    #[error(
        "pointwise log-likelihood needs at least 2 draws in all and 1 observation, got \
         {samples} draws and {observations} observations"
    )]
    TooSmall { samples: usize, observations: usize },
    #[error(
        "pointwise log-likelihood of observation {observation} at chain {chain}, draw {draw} \
         is {value}; every value must be finite"
    )]
    NonFinite {
        chain: usize,
        draw: usize,
        observation: usize,
        value: f64,
    },
    #[error("the relative efficiency must be positive and finite, got {0}")]
    Reff(f64),
    #[error("the relative efficiency needs at least one posterior quantity")]
    NoQuantities,
    #[error(
        "posterior quantity {quantity} has {chains} chains of {draws} draws; every quantity \
         needs the chains and draws of quantity 0"
    )]
    UnequalChains {
        quantity: usize,
        chains: usize,
        draws: usize,
    },
    #[error(
        "the mean ESS of posterior quantity {quantity} is undefined (fewer than 4 draws per \
         chain, a non-finite draw or an infinite autocorrelation time)"
    )]
    UndefinedEss { quantity: usize },
}

/// log p(y_i | theta_s) of every observation i at every kept draw s.
#[derive(Debug, Clone, PartialEq)]
pub struct PointwiseLogLik {
    chains: usize,
    draws: usize,
    observations: usize,
    /// Draw-major: chain by chain, draw by draw, all observations of one draw together
    /// (index (chain x draws + draw) x observations + observation).
    values: Vec<f64>,
}

impl PointwiseLogLik {
    /// Takes `values` in the order chain, draw, observation (the observations of one draw
    /// contiguous). Needs at least 2 draws in all, at least one observation, every value finite.
    pub fn new(
        chains: usize,
        draws: usize,
        observations: usize,
        values: Vec<f64>,
    ) -> Result<Self, LooError> {
        let expected = chains * draws * observations;
        if values.len() != expected {
            return Err(LooError::Shape {
                chains,
                draws,
                observations,
                expected,
                got: values.len(),
            });
        }
        if chains * draws < 2 || observations == 0 {
            return Err(LooError::TooSmall {
                samples: chains * draws,
                observations,
            });
        }
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Err(LooError::NonFinite {
                chain: at / observations / draws,
                draw: at / observations % draws,
                observation: at % observations,
                value: values[at],
            });
        }
        Ok(Self {
            chains,
            draws,
            observations,
            values,
        })
    }

    /// Kept draws in all, chains x draws (ArviZ's S).
    pub fn samples(&self) -> usize {
        self.chains * self.draws
    }

    pub fn observations(&self) -> usize {
        self.observations
    }

    /// One observation's log-likelihood over the draws, chain by chain (ArviZ's `__sample__`).
    fn observation(&self, i: usize) -> Vec<f64> {
        self.values
            .iter()
            .skip(i)
            .step_by(self.observations)
            .copied()
            .collect()
    }
}

/// PSIS-LOO estimates, as `arviz.loo(pointwise=True)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Loo {
    /// Sum over observations of the leave-one-out log predictive density (ArviZ's `elpd_loo`).
    pub elpd_loo: f64,
    /// Its standard error, sqrt(n var(loo_i)) with the variance over n (ArviZ's `se`).
    pub elpd_loo_se: f64,
    /// Effective number of parameters: lppd - elpd_loo.
    pub p_loo: f64,
    /// Each observation's leave-one-out log predictive density (ArviZ's `loo_i`).
    pub loo_i: Vec<f64>,
    /// Each observation's Pareto shape estimate; infinite where the tail had at most 4 draws.
    pub pareto_k: Vec<f64>,
    /// The largest Pareto k (NaN if any k is NaN).
    pub pareto_k_max: f64,
    /// How many observations have k > [`BAD_PARETO_K`].
    pub pareto_k_bad: usize,
    /// ArviZ's warning threshold min(1 - 1 / log10(S), 0.7): ArviZ warns if any k exceeds it.
    pub good_k: f64,
}

/// WAIC estimates, as `arviz.waic(pointwise=True)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Waic {
    /// Sum over observations of lppd_i - var_s(log p(y_i | theta_s)) (ArviZ's `elpd_waic`).
    pub elpd_waic: f64,
    /// Its standard error, sqrt(n var(waic_i)) with the variance over n (ArviZ's `se`).
    pub elpd_waic_se: f64,
    /// Effective number of parameters: the sum of the posterior variances (over S, not S - 1).
    pub p_waic: f64,
    /// Each observation's term (ArviZ's `waic_i`).
    pub waic_i: Vec<f64>,
    /// ArviZ's warning: some observation's log-likelihood has posterior variance above 0.4.
    pub warning: bool,
}

/// PSIS-LOO with relative efficiency `reff` (ess / draws, see [`relative_efficiency`]), which
/// sets how many draws form each smoothed tail: ceil(min(S / 5, 3 sqrt(S / reff))).
pub fn psis_loo(loglik: &PointwiseLogLik, reff: f64) -> Result<Loo, LooError> {
    check_reff(reff)?;
    let samples = loglik.samples();
    let tail = tail_length(samples, reff);
    let terms = (0..loglik.observations).map(|i| loo_terms(&loglik.observation(i), tail));
    Ok(assemble_loo(terms, samples))
}

/// WAIC: waic_i = lppd_i - var_s(log p(y_i | theta_s)), the variance over S.
pub fn waic(loglik: &PointwiseLogLik) -> Waic {
    assemble_waic((0..loglik.observations).map(|i| waic_terms(&loglik.observation(i))))
}

/// [`psis_loo`] and [`waic`] (the same numbers, bit for bit) without the whole matrix:
/// `observation(i, out)` writes observation i's log-likelihood at every draw into `out`
/// (`chains` x `draws` values, chain by chain as [`PointwiseLogLik`] orders them), one
/// observation at a time, so the memory is O(chains x draws) per thread rather than O(chains x
/// draws x observations). The observations are independent and run on the rayon pool; the
/// totals add them in order, so the numbers do not depend on the threads. The input rules are
/// [`PointwiseLogLik::new`]'s (a non-finite value is the error of the first observation with
/// one, and of its first such draw).
pub fn loo_and_waic_by_observation<F>(
    (chains, draws): (usize, usize),
    observations: usize,
    reff: f64,
    observation: F,
) -> Result<(Loo, Waic), LooError>
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    use rayon::prelude::*;
    let samples = chains * draws;
    if samples < 2 || observations == 0 {
        return Err(LooError::TooSmall {
            samples,
            observations,
        });
    }
    check_reff(reff)?;
    let tail = tail_length(samples, reff);
    let terms: Vec<Result<_, LooError>> = (0..observations)
        .into_par_iter()
        .map_init(
            || vec![0.0; samples],
            |ll, i| {
                observation(i, ll);
                if let Some(s) = ll.iter().position(|v| !v.is_finite()) {
                    return Err(LooError::NonFinite {
                        chain: s / draws,
                        draw: s % draws,
                        observation: i,
                        value: ll[s],
                    });
                }
                Ok((loo_terms(ll, tail), waic_terms(ll)))
            },
        )
        .collect();
    let terms = terms.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((
        assemble_loo(terms.iter().map(|t| t.0), samples),
        assemble_waic(terms.iter().map(|t| t.1)),
    ))
}

fn check_reff(reff: f64) -> Result<(), LooError> {
    if reff.is_finite() && reff > 0.0 {
        Ok(())
    } else {
        Err(LooError::Reff(reff))
    }
}

/// One observation's PSIS-LOO terms from its log-likelihood over the draws: (loo_i, Pareto k,
/// lppd_i).
fn loo_terms(ll: &[f64], tail: usize) -> (f64, f64, f64) {
    let mut log_weights: Vec<f64> = ll.iter().map(|v| -v).collect();
    let k = smooth_log_weights(&mut log_weights, tail);
    log_weights.iter_mut().zip(ll).for_each(|(w, l)| *w += l);
    (log_sum_exp(&log_weights), k, log_mean_exp(ll))
}

/// One observation's WAIC terms: (waic_i, the posterior variance of its log-likelihood).
fn waic_terms(ll: &[f64]) -> (f64, f64) {
    let variance = population_variance(ll);
    (log_mean_exp(ll) - variance, variance)
}

/// [`Loo`] from every observation's [`loo_terms`], in order, over `samples` draws.
fn assemble_loo(terms: impl Iterator<Item = (f64, f64, f64)>, samples: usize) -> Loo {
    let mut loo_i = Vec::new();
    let mut pareto_k = Vec::new();
    let mut lppd = 0.0;
    for (loo, k, lppd_i) in terms {
        loo_i.push(loo);
        pareto_k.push(k);
        lppd += lppd_i;
    }
    let elpd_loo: f64 = loo_i.iter().sum();
    let pareto_k_max = pareto_k.iter().copied().fold(f64::NEG_INFINITY, |m, k| {
        if m.is_nan() || k.is_nan() {
            f64::NAN
        } else {
            m.max(k)
        }
    });
    Loo {
        elpd_loo,
        elpd_loo_se: sum_standard_error(&loo_i),
        p_loo: lppd - elpd_loo,
        pareto_k_bad: pareto_k.iter().filter(|&&k| k > BAD_PARETO_K).count(),
        pareto_k_max,
        good_k: (1.0 - 1.0 / (samples as f64).log10()).min(BAD_PARETO_K),
        loo_i,
        pareto_k,
    }
}

/// [`Waic`] from every observation's [`waic_terms`], in order.
fn assemble_waic(terms: impl Iterator<Item = (f64, f64)>) -> Waic {
    let mut waic_i = Vec::new();
    let mut p_waic = 0.0;
    let mut warning = false;
    for (term, variance) in terms {
        warning |= variance > WAIC_VARIANCE_WARNING;
        p_waic += variance;
        waic_i.push(term);
    }
    Waic {
        elpd_waic: waic_i.iter().sum(),
        elpd_waic_se: sum_standard_error(&waic_i),
        p_waic,
        waic_i,
        warning,
    }
}

/// ArviZ's default `reff` in `arviz.loo`: the mean over the posterior's scalar quantities of
/// their mean ESS ([`super::ess_mean`]: split chains, not rank-normalised) divided by chains x
/// draws; exactly 1 for a single chain. Each quantity is given as its chains, like every other
/// function of this module; every element of a vector variable is one quantity. A quantity whose
/// draws are all equal counts as fully efficient (ArviZ returns the split draw count as its ESS).
pub fn relative_efficiency(quantities: &[&[&[f64]]]) -> Result<f64, LooError> {
    let first = quantities.first().ok_or(LooError::NoQuantities)?;
    let chains = first.len();
    let draws = first.first().map_or(0, |c| c.len());
    for (quantity, q) in quantities.iter().enumerate() {
        check_quantity(quantity, q, (chains, draws))?;
    }
    relative_efficiency_by_quantity(quantities.len(), (chains, draws), |q| {
        quantities[q].iter().map(|c| c.to_vec()).collect()
    })
}

/// [`relative_efficiency`] (the same number) over `count` quantities made one at a time:
/// `quantity(q)` returns quantity q's chains, `chains` of `draws` values each. For a single
/// chain the answer is 1 and no quantity is made. The quantities run on the rayon pool; their
/// ESS are added in order.
pub fn relative_efficiency_by_quantity<F>(
    count: usize,
    (chains, draws): (usize, usize),
    quantity: F,
) -> Result<f64, LooError>
where
    F: Fn(usize) -> Vec<Vec<f64>> + Sync,
{
    use rayon::prelude::*;
    if count == 0 {
        return Err(LooError::NoQuantities);
    }
    if chains == 1 {
        return Ok(1.0);
    }
    let each: Vec<Result<f64, LooError>> = (0..count)
        .into_par_iter()
        .map(|q| {
            let series = quantity(q);
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            check_quantity(q, &views, (chains, draws))?;
            mean_ess(&views).ok_or(LooError::UndefinedEss { quantity: q })
        })
        .collect();
    let mut total = 0.0;
    for ess in each {
        total += ess?;
    }
    Ok(total / count as f64 / (chains * draws) as f64)
}

/// Quantity `index` has `chains` chains of `draws` draws each.
fn check_quantity(
    index: usize,
    q: &[&[f64]],
    (chains, draws): (usize, usize),
) -> Result<(), LooError> {
    if q.len() == chains && q.iter().all(|c| c.len() == draws) {
        return Ok(());
    }
    let found = q
        .iter()
        .map(|c| c.len())
        .find(|&n| n != draws)
        .unwrap_or(draws);
    Err(LooError::UnequalChains {
        quantity: index,
        chains: q.len(),
        draws: found,
    })
}

/// ArviZ's `_ess_mean`, including its answer for draws that are all equal: the count of the
/// split draws (the shared diagnostics call that case undefined).
fn mean_ess(chains: &[&[f64]]) -> Option<f64> {
    if let Some(draws) = Draws::from_chains(chains) {
        return effective_sample_size(&draws.split());
    }
    let draws = chains.first()?.len();
    if draws < MIN_DRAWS {
        return None;
    }
    let first = chains[0][0];
    let constant = first.is_finite() && chains.iter().all(|c| c.iter().all(|&v| v == first));
    constant.then(|| (2 * chains.len() * (draws / 2)) as f64)
}

/// Draws in each smoothed tail: ceil(min(S / 5, 3 sqrt(S / reff))), as ArviZ's `psislw`.
fn tail_length(samples: usize, reff: f64) -> usize {
    let s = samples as f64;
    let tail = (s / TAIL_DIVISOR).min(TAIL_SQRT_FACTOR * (s / reff).powf(0.5));
    tail.ceil() as usize
}

/// ArviZ's `_psislw` on one observation's log importance ratios (-log-likelihood): the largest
/// `tail` ratios (fewer where values tie at the cutoff) are replaced by the expected order
/// statistics of a generalized Pareto fitted to them, truncated at the largest raw ratio, and
/// the weights normalised to sum to one. Returns the Pareto k (infinite for a tail of at most 4
/// draws, which is left unsmoothed).
fn smooth_log_weights(x: &mut [f64], tail: usize) -> f64 {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    x.iter_mut().for_each(|v| *v -= max);
    // The (S - tail - 1)-th smallest ratio, as ArviZ's full sort finds it, by selection.
    let mut sorted = x.to_vec();
    let at = sorted.len() - tail - 1;
    let (_, cutoff, _) = sorted.select_nth_unstable_by(at, f64::total_cmp);
    let cutoff = cutoff.max(f64::MIN_POSITIVE.ln());
    let exp_cutoff = cutoff.exp();
    let mut tail_indices: Vec<usize> = (0..x.len()).filter(|&j| x[j] > cutoff).collect();
    let k = if tail_indices.len() <= MAX_UNFITTED_TAIL {
        f64::INFINITY
    } else {
        // Ties among the tail values hold equal log-likelihoods, so their order is immaterial.
        tail_indices.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
        let excess: Vec<f64> = tail_indices
            .iter()
            .map(|&j| x[j].exp() - exp_cutoff)
            .collect();
        let (k, sigma) = fit_generalized_pareto(&excess);
        if k.is_finite() {
            let n = tail_indices.len() as f64;
            for (rank, &j) in tail_indices.iter().enumerate() {
                let probability = (rank as f64 + 0.5) / n;
                x[j] = (generalized_pareto_quantile(probability, k, sigma) + exp_cutoff).ln();
            }
            x.iter_mut().filter(|v| **v > 0.0).for_each(|v| *v = 0.0);
        }
        k
    };
    let normaliser = log_sum_exp(x);
    x.iter_mut().for_each(|v| *v -= normaliser);
    k
}

/// ArviZ's `_gpdfit`: Zhang & Stephens' (2009) empirical Bayes estimate of the generalized
/// Pareto's (k, sigma) from sorted exceedances, with ArviZ's grid and the weakly informative
/// prior pulling k towards 0.5. sigma comes from the unshrunk k.
fn fit_generalized_pareto(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    let n_f = n as f64;
    let grid = MIN_GRID_POINTS + n_f.sqrt() as usize;
    let quartile = sorted[(n_f / 4.0 + 0.5) as usize - 1];
    let largest = sorted[n - 1];
    let b: Vec<f64> = (1..=grid)
        .map(|j| {
            let spread = 1.0 - (grid as f64 / (j as f64 - 0.5)).sqrt();
            spread / (PRIOR_B_SCALE * quartile) + 1.0 / largest
        })
        .collect();
    let mean_log1p = |b: f64| sorted.iter().map(|&x| (-b * x).ln_1p()).sum::<f64>() / n_f;
    let profile: Vec<f64> = b
        .iter()
        .map(|&b| {
            let k = mean_log1p(b);
            n_f * ((-(b / k)).ln() - k - 1.0)
        })
        .collect();
    let weights: Vec<f64> = profile
        .iter()
        .map(|&own| 1.0 / profile.iter().map(|&l| (l - own).exp()).sum::<f64>())
        .collect();
    let kept: Vec<(f64, f64)> = b
        .iter()
        .zip(&weights)
        .filter(|&(_, &w)| w >= NEGLIGIBLE_WEIGHT_EPS * f64::EPSILON)
        .map(|(&b, &w)| (b, w))
        .collect();
    let weight_sum: f64 = kept.iter().map(|&(_, w)| w).sum();
    let b_post: f64 = kept.iter().map(|&(b, w)| b * (w / weight_sum)).sum();
    let k = mean_log1p(b_post);
    let sigma = -k / b_post;
    let k = (n_f * k + PRIOR_K_WEIGHT * PRIOR_K_MODE) / (n_f + PRIOR_K_WEIGHT);
    (k, sigma)
}

/// ArviZ's `_gpinv` for 0 < p < 1: the generalized Pareto quantile, NaN for sigma <= 0.
fn generalized_pareto_quantile(probability: f64, k: f64, sigma: f64) -> f64 {
    if sigma <= 0.0 {
        return f64::NAN;
    }
    let quantile = if k.abs() < f64::EPSILON {
        -(-probability).ln_1p()
    } else {
        (-k * (-probability).ln_1p()).exp_m1() / k
    };
    quantile * sigma
}

/// log sum exp(x), shifted by the maximum as ArviZ's `_logsumexp`.
fn log_sum_exp(x: &[f64]) -> f64 {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    x.iter().map(|v| (v - max).exp()).sum::<f64>().ln() + max
}

/// log mean exp(x), as ArviZ's `_logsumexp(x, b_inv=S)`: the log count is taken off the shift.
fn log_mean_exp(x: &[f64]) -> f64 {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = x.iter().map(|v| (v - max).exp()).sum();
    sum.ln() + (max - (x.len() as f64).ln())
}

/// Variance with the count in the denominator (numpy's default `ddof=0`).
fn population_variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n
}

/// Standard error of a sum of n pointwise terms: sqrt(n var(terms)), variance over n.
fn sum_standard_error(terms: &[f64]) -> f64 {
    (terms.len() as f64 * population_variance(terms)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Both sides run the same operations in double precision on the same doubles and differ
    /// only by summation order (numpy sums pairwise) and libm's last bits: at most 1.5e-14
    /// (relative to max(|ArviZ|, 1)) on this fixture. An algorithmic difference (tail length,
    /// grid, prior, ddof, truncation) moves some value by 1e-4 or more.
    const TOLERANCE: f64 = 1e-9;

    #[derive(Deserialize)]
    struct Fixture {
        arviz_version: String,
        cases: Vec<Case>,
    }

    #[derive(Deserialize)]
    struct Case {
        name: String,
        loglik: Vec<Vec<Vec<f64>>>,
        posterior: Option<Vec<Quantity>>,
        reff: f64,
        loo: ArvizLoo,
        waic: ArvizWaic,
    }

    #[derive(Deserialize)]
    struct Quantity {
        draws: Vec<Vec<f64>>,
    }

    #[derive(Deserialize)]
    struct ArvizLoo {
        elpd_loo: f64,
        se: f64,
        p_loo: f64,
        good_k: f64,
        loo_i: Vec<Number>,
        pareto_k: Vec<Number>,
    }

    #[derive(Deserialize)]
    struct ArvizWaic {
        elpd_waic: f64,
        se: f64,
        p_waic: f64,
        warning: bool,
        waic_i: Vec<Number>,
    }

    /// JSON has no infinity: the fixture writes it as "inf".
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Finite(f64),
        Text(String),
    }

    impl Number {
        fn value(&self) -> f64 {
            match self {
                Number::Finite(v) => *v,
                Number::Text(t) => t.parse().expect("\"inf\" or \"-inf\""),
            }
        }
    }

    fn values(numbers: &[Number]) -> Vec<f64> {
        numbers.iter().map(Number::value).collect()
    }

    impl Case {
        fn loglik(&self) -> PointwiseLogLik {
            let chains = self.loglik.len();
            let draws = self.loglik[0].len();
            let observations = self.loglik[0][0].len();
            let flat = self.loglik.iter().flatten().flatten().copied().collect();
            PointwiseLogLik::new(chains, draws, observations, flat).unwrap()
        }
    }

    fn load_fixture() -> Fixture {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/loo/cases.json");
        let text = std::fs::read_to_string(path).expect("fixture cases.json is committed");
        let fixture: Fixture = serde_json::from_str(&text).expect("fixture parses");
        assert_eq!(
            fixture.arviz_version, "0.23.4",
            "the code follows ArviZ 0.23"
        );
        fixture
    }

    fn agrees(ours: f64, arviz: f64) -> bool {
        ours == arviz || (ours - arviz).abs() <= TOLERANCE * arviz.abs().max(1.0)
    }

    /// Collects every mismatch so one run shows them all.
    fn check(failures: &mut Vec<String>, case: &str, what: &str, ours: f64, arviz: f64) {
        if !agrees(ours, arviz) {
            failures.push(format!("{case} {what}: ours {ours}, ArviZ {arviz}"));
        }
    }

    fn check_all(failures: &mut Vec<String>, case: &str, what: &str, ours: &[f64], arviz: &[f64]) {
        assert_eq!(ours.len(), arviz.len(), "{case} {what}");
        for (i, (&a, &b)) in ours.iter().zip(arviz).enumerate() {
            check(failures, case, &format!("{what}[{i}]"), a, b);
        }
    }

    #[test]
    fn psis_loo_matches_arviz_on_every_fixture_case() {
        let mut failures = Vec::new();
        for case in load_fixture().cases {
            let name = case.name.as_str();
            let loo = psis_loo(&case.loglik(), case.reff).unwrap();
            let arviz_k = values(&case.loo.pareto_k);
            check(
                &mut failures,
                name,
                "elpd_loo",
                loo.elpd_loo,
                case.loo.elpd_loo,
            );
            check(&mut failures, name, "se", loo.elpd_loo_se, case.loo.se);
            check(&mut failures, name, "p_loo", loo.p_loo, case.loo.p_loo);
            check(&mut failures, name, "good_k", loo.good_k, case.loo.good_k);
            check_all(
                &mut failures,
                name,
                "loo_i",
                &loo.loo_i,
                &values(&case.loo.loo_i),
            );
            check_all(&mut failures, name, "k", &loo.pareto_k, &arviz_k);
            let arviz_max = arviz_k.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            check(&mut failures, name, "k max", loo.pareto_k_max, arviz_max);
            let arviz_bad = arviz_k.iter().filter(|&&k| k > 0.7).count();
            assert_eq!(
                loo.pareto_k_bad, arviz_bad,
                "{name}: observations with k > 0.7"
            );
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn waic_matches_arviz_on_every_fixture_case() {
        let mut failures = Vec::new();
        for case in load_fixture().cases {
            let name = case.name.as_str();
            let waic = waic(&case.loglik());
            check(
                &mut failures,
                name,
                "elpd_waic",
                waic.elpd_waic,
                case.waic.elpd_waic,
            );
            check(&mut failures, name, "se", waic.elpd_waic_se, case.waic.se);
            check(&mut failures, name, "p_waic", waic.p_waic, case.waic.p_waic);
            check_all(
                &mut failures,
                name,
                "waic_i",
                &waic.waic_i,
                &values(&case.waic.waic_i),
            );
            assert_eq!(waic.warning, case.waic.warning, "{name}: variance warning");
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn relative_efficiency_is_the_reff_arviz_used() {
        let mut checked = 0;
        for case in load_fixture().cases {
            let Some(posterior) = &case.posterior else {
                continue;
            };
            let chains: Vec<Vec<&[f64]>> = posterior
                .iter()
                .map(|q| q.draws.iter().map(Vec::as_slice).collect())
                .collect();
            let quantities: Vec<&[&[f64]]> = chains.iter().map(Vec::as_slice).collect();
            let reff = relative_efficiency(&quantities).unwrap();
            assert!(
                agrees(reff, case.reff),
                "{}: {reff} vs ArviZ {}",
                case.name,
                case.reff
            );
            checked += 1;
        }
        assert_eq!(checked, 4, "cases with a posterior");
    }

    /// The fixture must keep exercising every branch: both bounds of the tail length, tails too
    /// short to fit, and k above 0.7.
    #[test]
    fn the_fixture_exercises_both_tail_bounds_short_tails_and_bad_k() {
        let fixture = load_fixture();
        let mut fifth_binds = false;
        let mut sqrt_binds = false;
        let mut unfitted = false;
        let mut bad = false;
        for case in &fixture.cases {
            let s = case.loglik().samples() as f64;
            let by_fifth = s / TAIL_DIVISOR;
            let by_sqrt = TAIL_SQRT_FACTOR * (s / case.reff).sqrt();
            fifth_binds |= by_fifth < by_sqrt && tail_length(s as usize, case.reff) > 4;
            sqrt_binds |= by_sqrt < by_fifth;
            let k = values(&case.loo.pareto_k);
            unfitted |= k.iter().any(|k| k.is_infinite());
            bad |= k.iter().any(|&k| k.is_finite() && k > BAD_PARETO_K);
        }
        assert!(fifth_binds && sqrt_binds && unfitted && bad);
        assert_eq!(tail_length(1000, 1.0), 95);
        assert_eq!(tail_length(100, 1.0), 20);
        assert_eq!(tail_length(20, 1.3), 4);
    }

    /// Made one observation (one quantity) at a time, on the rayon pool, the estimates are the
    /// whole matrix's bit for bit, on every fixture case.
    #[test]
    fn one_observation_at_a_time_gives_the_whole_matrix_numbers() {
        for case in load_fixture().cases {
            let loglik = case.loglik();
            let (chains, draws) = (loglik.chains, loglik.draws);
            let (loo, waic) = loo_and_waic_by_observation(
                (chains, draws),
                loglik.observations,
                case.reff,
                |i, out| out.copy_from_slice(&loglik.observation(i)),
            )
            .unwrap();
            assert_eq!(loo, psis_loo(&loglik, case.reff).unwrap(), "{}", case.name);
            assert_eq!(waic, super::waic(&loglik), "{}", case.name);
            let Some(posterior) = &case.posterior else {
                continue;
            };
            let chains_of: Vec<Vec<&[f64]>> = posterior
                .iter()
                .map(|q| q.draws.iter().map(Vec::as_slice).collect())
                .collect();
            let quantities: Vec<&[&[f64]]> = chains_of.iter().map(Vec::as_slice).collect();
            let shape = (posterior[0].draws.len(), posterior[0].draws[0].len());
            let streamed = relative_efficiency_by_quantity(posterior.len(), shape, |q| {
                posterior[q].draws.clone()
            });
            assert_eq!(streamed, relative_efficiency(&quantities), "{}", case.name);
        }
    }

    /// One observation at a time, the input rules are the matrix's: the first observation with a
    /// non-finite value names it, its chain and draw; too few draws or observations, and a bad
    /// reff, are refused before any observation is made.
    #[test]
    fn one_observation_at_a_time_refuses_what_the_matrix_refuses() {
        let fill = |i: usize, out: &mut [f64]| {
            for (s, v) in out.iter_mut().enumerate() {
                *v = match (i, s) {
                    (3, 7) => f64::NEG_INFINITY,
                    (5, 1) => f64::NAN,
                    _ => -1.0 - (i * s) as f64 * 0.01,
                };
            }
        };
        assert_eq!(
            loo_and_waic_by_observation((2, 5), 6, 1.0, fill).unwrap_err(),
            LooError::NonFinite {
                chain: 1,
                draw: 2,
                observation: 3,
                value: f64::NEG_INFINITY
            }
        );
        let never = |_: usize, _: &mut [f64]| panic!("no observation is made");
        assert!(matches!(
            loo_and_waic_by_observation((1, 1), 3, 1.0, never),
            Err(LooError::TooSmall { samples: 1, .. })
        ));
        assert!(matches!(
            loo_and_waic_by_observation((2, 3), 0, 1.0, never),
            Err(LooError::TooSmall {
                observations: 0,
                ..
            })
        ));
        assert_eq!(
            loo_and_waic_by_observation((2, 3), 4, 0.0, never).unwrap_err(),
            LooError::Reff(0.0)
        );
        let one_chain = relative_efficiency_by_quantity(5, (1, 10), |_| panic!("not made"));
        assert_eq!(one_chain, Ok(1.0));
        assert_eq!(
            relative_efficiency_by_quantity(0, (2, 10), |_| Vec::new()),
            Err(LooError::NoQuantities)
        );
        assert!(matches!(
            relative_efficiency_by_quantity(2, (2, 10), |q| vec![vec![0.5; 10]; 1 + q]),
            Err(LooError::UnequalChains { quantity: 0, .. })
        ));
    }

    #[test]
    fn a_loglik_constant_over_draws_has_no_effective_parameters() {
        // Every draw predicts observation i with the same density: LOO and WAIC both equal
        // lppd = sum_i log p(y_i), no tail can be fitted (all ratios tie), k is infinite.
        let per_observation = [-0.3, -1.7, -2.25, 0.4, -9.0];
        let (chains, draws) = (3, 40);
        let values: Vec<f64> = (0..chains * draws).flat_map(|_| per_observation).collect();
        let loglik = PointwiseLogLik::new(chains, draws, per_observation.len(), values).unwrap();
        let lppd: f64 = per_observation.iter().sum();
        let loo = psis_loo(&loglik, 0.8).unwrap();
        assert_eq!(loo.p_loo, 0.0);
        assert!((loo.elpd_loo - lppd).abs() < 1e-12, "{}", loo.elpd_loo);
        assert!(loo.pareto_k.iter().all(|k| *k == f64::INFINITY));
        assert_eq!((loo.pareto_k_max, loo.pareto_k_bad), (f64::INFINITY, 5));
        let waic = waic(&loglik);
        assert!(waic.p_waic.abs() < 1e-20, "{}", waic.p_waic);
        assert!((waic.elpd_waic - lppd).abs() < 1e-12, "{}", waic.elpd_waic);
        assert!(!waic.warning);
        for (pointwise, &expected) in loo.loo_i.iter().zip(&per_observation) {
            assert!((pointwise - expected).abs() < 1e-12);
        }
        let se = (5.0 * population_variance(&per_observation)).sqrt();
        assert!((loo.elpd_loo_se - se).abs() < 1e-12 && (waic.elpd_waic_se - se).abs() < 1e-12);
    }

    #[test]
    fn unusable_log_likelihoods_and_reff_are_rejected() {
        assert!(matches!(
            PointwiseLogLik::new(2, 3, 4, vec![0.0; 23]),
            Err(LooError::Shape {
                expected: 24,
                got: 23,
                ..
            })
        ));
        assert!(matches!(
            PointwiseLogLik::new(1, 1, 3, vec![0.0; 3]),
            Err(LooError::TooSmall { samples: 1, .. })
        ));
        assert!(matches!(
            PointwiseLogLik::new(2, 2, 0, vec![]),
            Err(LooError::TooSmall {
                observations: 0,
                ..
            })
        ));
        let mut values = vec![-1.0; 2 * 3 * 4];
        values[(3 + 2) * 4 + 1] = f64::NEG_INFINITY;
        let error = PointwiseLogLik::new(2, 3, 4, values).unwrap_err();
        assert_eq!(
            error,
            LooError::NonFinite {
                chain: 1,
                draw: 2,
                observation: 1,
                value: f64::NEG_INFINITY
            }
        );
        let loglik = PointwiseLogLik::new(1, 2, 1, vec![-1.0, -2.0]).unwrap();
        for reff in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(psis_loo(&loglik, reff), Err(LooError::Reff(_))));
        }
        assert!(psis_loo(&loglik, 1.0).is_ok());
    }

    #[test]
    fn relative_efficiency_follows_arviz_on_single_chains_constants_and_bad_input() {
        let a: Vec<f64> = (0..10).map(|i| f64::from(i * 7 % 10)).collect();
        let b: Vec<f64> = (0..10).map(|i| f64::from(i * 3 % 10)).collect();
        let constant = [2.5; 10];
        // One chain: ArviZ uses 1 without computing an ESS.
        assert_eq!(relative_efficiency(&[&[&a]]), Ok(1.0));
        // All draws equal: ArviZ's ESS is the count of split draws, 2 chains x 2 x 5 here.
        assert_eq!(relative_efficiency(&[&[&constant, &constant]]), Ok(1.0));
        let odd = [2.5; 9];
        assert_eq!(relative_efficiency(&[&[&odd, &odd]]), Ok(16.0 / 18.0));
        let mixed = relative_efficiency(&[&[&a, &b], &[&constant, &constant]]).unwrap();
        let ess = super::super::ess_mean(&[&a, &b]).unwrap();
        assert!((mixed - (ess + 20.0) / 2.0 / 20.0).abs() < 1e-15);
        assert_eq!(relative_efficiency(&[]), Err(LooError::NoQuantities));
        assert!(matches!(
            relative_efficiency(&[&[&a, &b], &[&a, &b[..9]]]),
            Err(LooError::UnequalChains {
                quantity: 1,
                draws: 9,
                ..
            })
        ));
        let mut bad = b.clone();
        bad[4] = f64::NAN;
        assert_eq!(
            relative_efficiency(&[&[&a, &b], &[&a, &bad]]),
            Err(LooError::UndefinedEss { quantity: 1 })
        );
        assert_eq!(
            relative_efficiency(&[&[&a[..3], &b[..3]]]),
            Err(LooError::UndefinedEss { quantity: 0 })
        );
    }
}
