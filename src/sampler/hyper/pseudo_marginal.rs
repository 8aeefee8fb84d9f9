//! `sampler.hyper = "pseudo-marginal"`: Metropolis-Hastings on the unconstrained hyperparameters
//! with an unbiased importance-sampling estimate of the marginal likelihood (Filippone &
//! Girolami 2014, "Pseudo-marginal Bayesian inference for Gaussian processes").
//!
//! At a proposal z', the Laplace approximation of p(xi | data, z') ([`LaplaceGaussian`]: the mode
//! and a low-rank posterior covariance (I + V D V^T)^-1 in whitened coordinates, the
//! [`IMPORTANCE_RANK`] leading eigenpairs) is the
//! importance distribution q; K = `sampler.hyper_importance_draws` draws xi_j ~ q give weights
//! w_j = p(data | xi_j) N(xi_j; 0, I) / q(xi_j) and the estimate p^(z') = mean_j w_j, unbiased
//! whatever q is (a truncated rank or a failed Newton fit only makes it noisier). The proposal is
//! accepted with probability min(1, p^(z') p(z') / (p^(z) p(z)) x correction).
//!
//! The field: on acceptance one importance draw is selected with probability w_j / sum w and
//! becomes the chain's field. This is particle marginal Metropolis-Hastings with importance
//! sampling (Andrieu, Doucet & Holenstein 2010): the extended target
//! p(z) p(data, xi_k | z) prod_{j != k} q(xi_j) / K has p(z, xi_k | data) as its marginal, so
//! the field kind's step, which leaves p(xi | data, z) invariant, may move xi_k between the
//! hyperparameter updates, the estimate being recomputed as (w(xi_k) + sum_{j != k} w_j) / K.
//! The joint chain of (z, xi) then targets the posterior exactly.

use std::sync::Arc;

use super::FieldKernel;
use super::chain::{Accepted, HyperChain, HyperState, UpdateInfo, retargeted};
use crate::model::hyper::prior_at;
use crate::model::target::Target;
use crate::sampler::gpcn::{LaplaceGaussian, Rank};

/// Eigenpairs of the misfit Hessian the importance distribution keeps: the estimate is unbiased
/// whatever q is, and the directions left out (the smallest curvatures) add little to the
/// weights' variance, while the Lanczos steps for every eigenvalue above gpcn's threshold cost
/// more than the draws (measured on the Lansing hickories, probit: 37 ms per update with the
/// threshold, against a few ms with 32).
pub const IMPORTANCE_RANK: usize = 32;
use crate::sampler::position::{Position, Retarget};
use crate::sampler::protocol::{ChainRng, dot};

/// The pseudo-marginal chain's extended state: the importance distribution at the current
/// hyperparameters, the other draws' total weight, and the estimate.
#[derive(Debug, Clone)]
pub struct Marginal {
    gaussian: Arc<LaplaceGaussian>,
    /// log sum_{j != k} w_j (-inf with one draw).
    log_others: f64,
    /// log p^(data | z).
    log_estimate: f64,
}

impl Marginal {
    /// Recompute the estimate with the field at `position` as the selected draw.
    fn refresh(&mut self, position: &Position, draws: usize) {
        let log_weight = log_weight(&self.gaussian, position);
        self.log_estimate = log_add(self.log_others, log_weight) - (draws as f64).ln();
    }
}

/// log w(xi) = loglik(xi) - |xi|^2 / 2 - log q(xi), with the 2 pi constants (equal) dropped.
fn log_weight(gaussian: &LaplaceGaussian, position: &Position) -> f64 {
    position.log_likelihood - 0.5 * dot(&position.xi, &position.xi) - log_q(gaussian, &position.xi)
}

/// log q(xi) for q = N(mode, (I + V D V^T)^-1): -(|r|^2 + sum d_k (V^T r)_k^2) / 2 +
/// sum log(1 + d_k) / 2, r = xi - mode.
fn log_q(gaussian: &LaplaceGaussian, xi: &[f64]) -> f64 {
    let r: Vec<f64> = xi.iter().zip(&gaussian.mode).map(|(x, m)| x - m).collect();
    let mut c = vec![0.0; gaussian.rank()];
    gaussian.project(&r, &mut c);
    let curvature: f64 = c.iter().zip(&gaussian.values).map(|(c, d)| d * c * c).sum();
    let log_det: f64 = gaussian.values.iter().map(|d| d.ln_1p()).sum();
    -0.5 * (dot(&r, &r) + curvature) + 0.5 * log_det
}

/// A draw from q: mode + z + V ((1 + d)^-1/2 - 1) V^T z.
fn draw(gaussian: &LaplaceGaussian, rng: &mut ChainRng) -> Vec<f64> {
    let dim = gaussian.mode.len();
    let mut z = vec![0.0; dim];
    rng.normals(&mut z);
    let mut c = vec![0.0; gaussian.rank()];
    gaussian.project(&z, &mut c);
    for (ck, d) in c.iter_mut().zip(&gaussian.values) {
        *ck *= 1.0 / (1.0 + d).sqrt() - 1.0;
    }
    let mut low_rank = vec![0.0; dim];
    gaussian.expand(&c, &mut low_rank);
    z.iter()
        .zip(&low_rank)
        .zip(&gaussian.mode)
        .map(|((z, l), m)| m + z + l)
        .collect()
}

/// log(exp(a) + exp(b)).
fn log_add(a: f64, b: f64) -> f64 {
    let high = a.max(b);
    if high == f64::NEG_INFINITY {
        return high;
    }
    high + ((a - high).exp() + (b - high).exp()).ln()
}

/// The importance draws at one point: the selected one, the others' log total weight and the
/// log estimate.
struct Importance {
    marginal: Marginal,
    selected: Position,
}

impl<K: FieldKernel> HyperChain<K> {
    pub(super) fn pseudo_marginal<S: Retarget>(
        &self,
        state: &mut HyperState<S>,
        base: &Target,
        rng: &mut ChainRng,
    ) -> UpdateInfo {
        let draws = self.settings.importance_draws;
        let mut info = UpdateInfo::default();
        if state.marginal.is_none() {
            // The chain's first update: draw the estimate at the starting point and take the
            // selected draw as the field.
            let target = retargeted(base, state.prior.as_ref(), state.values.mean);
            let importance = importance(&target, draws, rng, &mut state.work);
            info.loglik_evaluations += draws as u32;
            let position = importance.selected;
            state.marginal = Some(importance.marginal);
            let target = retargeted(base, state.prior.as_ref(), state.values.mean);
            state.field.retarget(position, &target);
        }
        let marginal = state.marginal.as_mut().expect("drawn above");
        marginal.refresh(state.field.current(), draws);
        let current_estimate = marginal.log_estimate;

        let (candidate, correction) = state.proposal.propose(&state.z, rng);
        let log_prior = self.priors().log_density_unconstrained(&candidate);
        let values = self.priors().from_unconstrained(&candidate, state.values);
        let prior = log_prior
            .is_finite()
            .then(|| prior_at(&self.model, &values).ok())
            .flatten();
        let proposed = prior.map(|prior| {
            let target = retargeted(base, prior.as_ref(), values.mean);
            let importance = importance(&target, draws, rng, &mut state.work);
            (prior, importance)
        });
        let log_ratio = match &proposed {
            Some((_, importance)) => {
                info.loglik_evaluations += draws as u32;
                importance.marginal.log_estimate - current_estimate + log_prior - state.log_prior
                    + correction
            }
            None => f64::NEG_INFINITY,
        };
        let moved = rng.accept(log_ratio);
        if moved && let Some((prior, importance)) = proposed {
            state.marginal = Some(importance.marginal);
            let accepted = Accepted {
                z: candidate,
                log_prior,
                values,
                prior,
                position: importance.selected,
            };
            state.accept(self.priors(), accepted, base);
        }
        info.moved = moved;
        state.adapt_proposal(self.burn_in, log_ratio, rng);
        info
    }
}

/// K draws from the Laplace approximation of `target`, one selected by weight (one uniform is
/// always drawn).
fn importance(
    target: &Target,
    draws: usize,
    rng: &mut ChainRng,
    work: &mut crate::model::target::Workspace,
) -> Importance {
    let gaussian = Arc::new(LaplaceGaussian::new(target, Rank::Fixed(IMPORTANCE_RANK)));
    let mut positions: Vec<Position> = (0..draws)
        .map(|_| Position::new(draw(&gaussian, rng), target, work))
        .collect();
    let weights: Vec<f64> = positions.iter().map(|p| log_weight(&gaussian, p)).collect();
    let total = weights.iter().copied().fold(f64::NEG_INFINITY, log_add);
    let u = rng.uniform();
    let selected = select(&weights, total, u);
    let log_others = weights
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != selected)
        .map(|(_, &w)| w)
        .fold(f64::NEG_INFINITY, log_add);
    Importance {
        marginal: Marginal {
            gaussian,
            log_others,
            log_estimate: total - (draws as f64).ln(),
        },
        selected: positions.swap_remove(selected),
    }
}

/// The index j with cumulative normalised weight first above `u` (the last one for rounding).
fn select(log_weights: &[f64], log_total: f64, u: f64) -> usize {
    let mut cumulative = 0.0;
    for (j, &w) in log_weights.iter().enumerate() {
        cumulative += (w - log_total).exp();
        if u < cumulative {
            return j;
        }
    }
    log_weights.len() - 1
}
