//! Metropolis-adjusted Langevin on the whitened field: with step size h,
//! xi' = xi + (h^2 / 2) grad log pi(xi) + h z, where grad log pi(xi) = g(xi) - xi (the prior
//! N(0, I) contributes -xi). The kept fraction of xi therefore shrinks with h, and the step size
//! that keeps the acceptance rate fixed falls as the dimension grows (about N^(-1/6)).

use super::kind::{Budget, Kind, KindSettings};
use super::langevin::{Drift, LangevinKind};
use super::protocol::StepTuning;

/// MALA with its starting step size h > 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mala {
    pub(crate) step: f64,
}

impl Kind for Mala {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.574,
        max_step: None,
        min_step: None,
        adapts_by_default: true,
    });
    const BUDGET: Budget = Budget::LONG;

    fn configure(settings: &KindSettings) -> Self {
        Self {
            step: settings.step,
        }
    }
}

impl LangevinKind for Mala {
    fn initial_step(&self) -> f64 {
        self.step
    }

    fn drift(h: f64) -> Drift {
        let half = 0.5 * h * h;
        Drift {
            keep: 1.0 - half,
            weight: half,
            sd: h,
        }
    }
}
