//! Preconditioned Crank-Nicolson: xi' = sqrt(1 - beta^2) xi + beta z, z ~ N(0, I).
//!
//! The proposal leaves the prior N(0, I) invariant, so the acceptance ratio is the likelihood
//! ratio alone and the acceptance rate does not collapse as the grid is refined (Cotter, Roberts,
//! Stuart & White 2013). In the field, u' - m = sqrt(1 - beta^2) (u - m) + beta L z, so a
//! proposal needs one prior draw L z (drawn ahead in blocks) and the field at the M observed
//! cells; the full field is updated only when a move is accepted.

use super::protocol::StepTuning;
use super::random_walk::{Proposal, RandomWalk};

/// pCN with its starting step size beta (0 < beta <= 1).
pub type Pcn = RandomWalk<CrankNicolson>;

/// The prior-preserving proposal xi' = sqrt(1 - beta^2) xi + beta z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrankNicolson;

impl Proposal for CrankNicolson {
    const TUNING: StepTuning = StepTuning {
        target_acceptance: 0.25,
        max_step: Some(1.0),
        min_step: None,
        adapts_by_default: false,
    };

    fn keep(beta: f64) -> f64 {
        (1.0 - beta * beta).max(0.0).sqrt()
    }

    fn prior_log_ratio(_beta: f64, _xi: &[f64], _z: &[f64]) -> f64 {
        0.0
    }
}
