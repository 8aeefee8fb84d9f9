//! Preconditioned Crank-Nicolson: xi' = sqrt(1 - beta^2) xi + beta z, z ~ N(0, I).
//!
//! The proposal leaves the prior N(0, I) invariant, so the acceptance ratio is the likelihood
//! ratio alone and the acceptance rate does not collapse as the grid is refined (Cotter, Roberts,
//! Stuart & White 2013). In the field, u' - m = sqrt(1 - beta^2) (u - m) + beta L z, so a
//! proposal needs one prior draw L z (drawn ahead in blocks) and the field at the M observed
//! cells; the full field is updated only when a move is accepted.

use super::kind::{Kind, KindSettings};
use super::protocol::{ChainRng, Sampler, StepInfo, StepTuning};
use super::shared::{RandomWalkState, random_walk_step};
use crate::model::target::Target;

/// pCN with its starting step size beta (0 < beta <= 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pcn {
    pub beta: f64,
}

impl Kind for Pcn {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.25,
        max_step: Some(1.0),
        adapts_by_default: false,
    });

    fn configure(settings: &KindSettings) -> Self {
        Self {
            beta: settings.step,
        }
    }
}

impl Sampler for Pcn {
    type State<'t> = RandomWalkState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> RandomWalkState {
        RandomWalkState::new(xi, self.beta, target)
    }

    fn step<'t>(
        &self,
        state: &mut RandomWalkState,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let beta = state.beta();
        let keep = (1.0 - beta * beta).max(0.0).sqrt();
        random_walk_step(state, keep, |_, _| 0.0, target, rng)
    }
}
