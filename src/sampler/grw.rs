//! Gaussian random-walk Metropolis-Hastings: xi' = xi + beta z, z ~ N(0, I).
//!
//! In the field u' = u + beta L z. The proposal is symmetric, so the acceptance ratio is the
//! posterior ratio: the likelihood ratio times the prior ratio
//! exp(-(|xi'|^2 - |xi|^2) / 2) = exp(-(beta xi.z + beta^2 |z|^2 / 2)). Its acceptance rate falls
//! as the grid is refined (about 2 Phi(-beta sqrt(N + M) / 2) for large N).

use super::kind::{Kind, KindSettings};
use super::protocol::{ChainRng, Sampler, StepInfo, StepTuning, dot};
use super::shared::{RandomWalkState, random_walk_step};
use crate::model::target::Target;

/// GRW-MH with its starting step size beta > 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grw {
    pub beta: f64,
}

impl Kind for Grw {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.234,
        max_step: None,
        adapts_by_default: false,
    });

    fn configure(settings: &KindSettings) -> Self {
        Self {
            beta: settings.step,
        }
    }
}

impl Sampler for Grw {
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
        let prior_ratio =
            |xi: &[f64], z: &[f64]| -(beta * dot(xi, z) + 0.5 * beta * beta * dot(z, z));
        random_walk_step(state, 1.0, prior_ratio, target, rng)
    }
}
