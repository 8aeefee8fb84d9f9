//! Metropolis-adjusted Langevin on the whitened field: with step size h,
//! xi' = xi + (h^2 / 2) grad log pi(xi) + h z, where grad log pi(xi) = g(xi) - xi (the prior
//! N(0, I) contributes -xi). The kept fraction of xi therefore shrinks with h, and the step size
//! that keeps the acceptance rate fixed falls as the dimension grows (about N^(-1/6)).

use super::langevin::{Drift, LangevinState, langevin_step};
use super::protocol::{ChainRng, Sampler, StepInfo, StepTuning};
use super::{Kind, SamplerSpec};
use crate::model::target::Target;

/// MALA with its starting step size h > 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mala {
    pub step: f64,
}

impl Kind for Mala {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.574,
        max_step: None,
        adapts_by_default: true,
    });

    fn configure(spec: &SamplerSpec) -> Self {
        Self { step: spec.step() }
    }
}

impl Sampler for Mala {
    type State<'t> = LangevinState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> LangevinState {
        LangevinState::new(xi, self.step, target)
    }

    fn step<'t>(
        &self,
        state: &mut LangevinState,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let h = state.step_size_value();
        let half = 0.5 * h * h;
        let drift = Drift {
            keep: 1.0 - half,
            weight: half,
            sd: h,
        };
        langevin_step(state, drift, target, rng)
    }
}
