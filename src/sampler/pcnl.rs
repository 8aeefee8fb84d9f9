//! pCN-Langevin, the infinity-MALA of Cotter, Roberts, Stuart & White (2013), section 4.3: the
//! Crank-Nicolson discretisation of the Langevin equation preconditioned by the prior. With the
//! prior N(0, I) in whitened coordinates and step delta,
//! xi' = ((2 - delta) xi + 2 delta g(xi) + sqrt(8 delta) z) / (2 + delta).
//! Written with beta = sqrt(8 delta) / (2 + delta) in (0, 1] (as for pCN) and
//! a = sqrt(1 - beta^2) = (2 - delta) / (2 + delta), this is xi' = a xi + (1 - a) g(xi) + beta z:
//! pCN plus a gradient drift. The proposal is well defined on the function space, so its
//! acceptance rate does not collapse as the grid is refined; with a flat likelihood it is pCN.

use super::kind::{Budget, Kind, KindSettings};
use super::langevin::{Drift, LangevinKind};
use super::protocol::StepTuning;

/// pCN-Langevin with its starting step size beta in (0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pcnl {
    pub(crate) beta: f64,
}

impl Kind for Pcnl {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.574,
        max_step: Some(1.0),
        min_step: None,
        adapts_by_default: true,
    });
    const BUDGET: Budget = Budget::LONG;

    fn configure(settings: &KindSettings) -> Self {
        Self {
            beta: settings.step,
        }
    }
}

impl LangevinKind for Pcnl {
    fn initial_step(&self) -> f64 {
        self.beta
    }

    fn drift(beta: f64) -> Drift {
        let keep = (1.0 - beta * beta).max(0.0).sqrt();
        Drift {
            keep,
            weight: 1.0 - keep,
            sd: beta,
        }
    }
}
