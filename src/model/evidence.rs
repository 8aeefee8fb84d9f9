//! The marginal likelihood (model evidence) p(data | l) by simple Monte Carlo over the prior,
//! the coursework's estimator: p(data | l) ~ (1/K) sum_k p(data | u_k), u_k ~ N(0, C_l).
//!
//! The likelihoods of prior draws span hundreds of orders of magnitude, so the average is taken
//! in log space (log-sum-exp): log p ~ max_k ll_k + log((1/K) sum_k exp(ll_k - max_k ll_k)).
//! The standard error of the log estimate comes from the delta method on the weights. Prior
//! draws come in blocks through the batched Kronecker product.
//!
//! The estimate is exact for probit (every constant is kept). For gaussian and poisson the
//! likelihood drops u-independent constants, so only differences between length scales on the
//! same data are meaningful — which is what a length-scale search compares.

use rand_distr::{Distribution, StandardNormal};

use super::target::Target;
use crate::streams::StreamRng;

/// Prior draws per batched product.
const BLOCK: usize = 64;

/// A Monte Carlo estimate of log p(data | model).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LogEvidence {
    pub(crate) estimate: f64,
    /// Delta-method standard error of `estimate`.
    pub(crate) standard_error: f64,
    /// Effective number of prior draws: (sum w)^2 / sum w^2 of the likelihood weights.
    pub(crate) effective_draws: f64,
}

/// Estimate log p(data | model) from `draws` prior draws.
pub fn log_evidence(target: &Target, draws: usize, rng: &mut StreamRng) -> LogEvidence {
    let (prior, likelihood) = (target.prior, target.likelihood);
    let n = prior.cells();
    let k = prior.latent_dim();
    let mut logliks = Vec::with_capacity(draws);
    let mut xi = vec![0.0; BLOCK * k];
    let mut u = vec![0.0; BLOCK * n];
    let mut scratch = vec![0.0; prior.scratch_len()];
    let mut gu = vec![0.0; target.observations()];
    while logliks.len() < draws {
        let count = BLOCK.min(draws - logliks.len());
        for x in xi[..count * k].iter_mut() {
            *x = StandardNormal.sample(rng);
        }
        prior.apply_sqrt_batch(&xi[..count * k], &mut u[..count * n], &mut scratch, count);
        for field in u[..count * n].chunks_exact(n) {
            target.gather(field, &mut gu);
            for g in gu.iter_mut() {
                *g += target.mean;
            }
            logliks.push(likelihood.log_likelihood(&gu));
        }
    }
    summarize(&logliks)
}

/// log of the mean of exp(ll), with its delta-method standard error.
pub(crate) fn summarize(logliks: &[f64]) -> LogEvidence {
    let k = logliks.len() as f64;
    let max = logliks.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = logliks.iter().map(|ll| (ll - max).exp()).collect();
    let sum: f64 = weights.iter().sum();
    let sum_sq: f64 = weights.iter().map(|w| w * w).sum();
    let mean = sum / k;
    let variance = (sum_sq / k - mean * mean).max(0.0) / (k - 1.0).max(1.0);
    LogEvidence {
        estimate: max + mean.ln(),
        standard_error: variance.sqrt() / mean,
        effective_draws: sum * sum / sum_sq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Observed;
    use crate::model::grid::Grid;
    use crate::model::likelihood::Likelihood;
    use crate::model::prior::KroneckerPrior;
    use crate::model::spec::{KernelSpec, LikelihoodKind};
    use crate::streams::{Purpose, stream};

    #[test]
    fn log_sum_exp_is_stable_far_below_underflow() {
        let e = summarize(&[-2000.0, -2000.0 + 2f64.ln()]);
        // mean of exp: exp(-2000) (1 + 2) / 2
        assert!((e.estimate - (-2000.0 + 1.5f64.ln())).abs() < 1e-12);
    }

    /// A single observed cell under a gaussian likelihood: p(v) = N(v; 0, C_nn + s^2) exactly,
    /// and the likelihood drops the constant -log(s sqrt(2 pi)).
    #[test]
    fn one_gaussian_observation_matches_its_closed_form() {
        let grid = Grid::new(4);
        let kernel = KernelSpec::squared_exponential(0.3, 1.0);
        let prior = KroneckerPrior::new(grid, kernel).unwrap();
        let v = 0.8;
        let s: f64 = 0.5;
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![v], s, 0.0);
        let mut rng = stream(5, Purpose::Truth, "evidence");
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&[5]),
            mean: 0.0,
        };
        let e = log_evidence(&target, 40_000, &mut rng);
        let var = 1.0 + s * s;
        let exact = -0.5 * v * v / var - 0.5 * (var).ln() + s.ln();
        assert!(
            (e.estimate - exact).abs() < 4.0 * e.standard_error,
            "{} vs {exact} (se {})",
            e.estimate,
            e.standard_error
        );
    }
}
