//! How long a chain runs and how its step size adapts: what a job's sampler settings give the
//! driver.

/// Iterations of each chain: burn-in first, then the kept ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Iterations per chain, burn-in included.
    pub(crate) iterations: u64,
    /// Leading iterations left out of every estimate and trace (and used for adaptation).
    pub burn_in: u64,
    /// Keep every `thin`-th kept state in the traces (estimates use every state).
    pub(crate) thin: u64,
}

impl Schedule {
    /// Iterations per chain after burn-in.
    pub(crate) fn kept(&self) -> u64 {
        self.iterations.saturating_sub(self.burn_in)
    }
}

/// Step-size adaptation during burn-in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptation {
    pub(crate) target_acceptance: f64,
    /// The largest admissible step size, if bounded.
    pub(crate) max_step: Option<f64>,
    /// The smallest admissible step size, if bounded (see [`super::protocol::StepTuning`]).
    pub(crate) min_step: Option<f64>,
}
