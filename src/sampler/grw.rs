//! Gaussian random-walk Metropolis-Hastings: xi' = xi + beta z, z ~ N(0, I).
//!
//! In the field u' = u + beta L z. The proposal is symmetric, so the acceptance ratio is the
//! posterior ratio: the likelihood ratio times the prior ratio
//! exp(-(|xi'|^2 - |xi|^2) / 2) = exp(-(beta xi.z + beta^2 |z|^2 / 2)). Its acceptance rate falls
//! as the grid is refined (about 2 Phi(-beta sqrt(N + M) / 2) for large N).

use super::protocol::{StepTuning, dot};
use super::random_walk::{Proposal, RandomWalk};

/// GRW-MH with its starting step size beta > 0.
pub(crate) type Grw = RandomWalk<Symmetric>;

/// The symmetric proposal xi' = xi + beta z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Symmetric;

impl Proposal for Symmetric {
    const TUNING: StepTuning = StepTuning {
        target_acceptance: 0.234,
        max_step: None,
        min_step: None,
        adapts_by_default: false,
    };

    fn keep(_beta: f64) -> f64 {
        1.0
    }

    fn prior_log_ratio(beta: f64, xi: &[f64], z: &[f64]) -> f64 {
        -(beta * dot(xi, z) + 0.5 * beta * beta * dot(z, z))
    }
}
