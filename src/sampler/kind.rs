//! What a sampler kind brings besides the [`Sampler`] protocol: how its step size is tuned and
//! how it is built from a job's settings.

use super::protocol::{Sampler, StepTuning};

/// What a kind is built from: the job's (starting) step size and its burn-in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindSettings {
    /// `sampler.beta`: the step size, or where adaptation starts.
    pub step: f64,
    /// `sampler.burn_in`: the iterations a kind that adapts itself (NUTS) adapts during.
    pub burn_in: u64,
    /// `sampler.rank`: the eigenpairs a low-rank kind keeps (`None`: from the spectrum).
    pub rank: Option<usize>,
}

/// A sampler kind as a study names it: how to build it from a job's spec, and how its step size
/// is tuned.
pub trait Kind: Sampler + Sized {
    /// The step-size tuning of the kind, or `None` when it has no step size.
    const TUNING: Option<StepTuning>;
    /// Whether the kind keeps a low-rank approximation whose rank a study may set.
    const HAS_RANK: bool = false;
    /// The sampler for `settings`.
    fn configure(settings: &KindSettings) -> Self;
}
