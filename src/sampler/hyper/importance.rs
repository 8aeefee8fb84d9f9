//! The importance-sampling estimate of the marginal likelihood p(data | theta) the
//! pseudo-marginal update uses ([`super::pseudo_marginal`]): K draws from the Laplace
//! approximation of p(xi | data, theta), their weights, the estimate, and the draw selected to
//! become the chain's field.

use std::sync::Arc;

use crate::model::target::{Target, Workspace};
use crate::sampler::gpcn::{LaplaceGaussian, Rank};
use crate::sampler::protocol::{ChainRng, Position, dot};

/// Eigenpairs of the misfit Hessian the importance distribution keeps: the estimate is unbiased
/// whatever q is, and the directions left out (the smallest curvatures) add little to the
/// weights' variance, while the Lanczos steps for every eigenvalue above gpcn's threshold cost
/// more than the draws (measured on the Lansing hickories, probit: 37 ms per update with the
/// threshold, against a few ms with 32).
pub(crate) const IMPORTANCE_RANK: usize = 32;

/// The pseudo-marginal chain's extended state: the importance distribution at the current
/// hyperparameters, the other draws' total weight, and the estimate.
#[derive(Debug, Clone)]
pub(crate) struct Marginal {
    pub(super) gaussian: Arc<LaplaceGaussian>,
    /// log sum_{j != k} w_j (-inf with one draw).
    pub(super) log_others: f64,
    /// log p^(data | z).
    pub(super) log_estimate: f64,
}

impl Marginal {
    /// Recompute the estimate with the field at `position` as the selected draw.
    pub(super) fn refresh(&mut self, position: &Position, draws: usize) {
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
pub(super) struct Importance {
    pub(super) marginal: Marginal,
    pub(super) selected: Position,
}

/// K draws from the Laplace approximation of `target`, one selected by weight (one uniform is
/// always drawn).
pub(super) fn importance(
    target: &Target,
    draws: usize,
    rng: &mut ChainRng,
    work: &mut Workspace,
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
