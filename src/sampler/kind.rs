//! What a sampler kind brings besides the [`Sampler`] protocol: how its step size is tuned and
//! how it is built from a job's settings.

use super::protocol::{Sampler, StepTuning};

/// What a kind is built from: the job's (starting) step size and its burn-in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindSettings {
    /// `sampler.beta`: the step size, or where adaptation starts.
    pub(crate) step: f64,
    /// `sampler.burn_in`: the iterations a kind that adapts itself (NUTS) adapts during.
    pub(crate) burn_in: u64,
    /// `sampler.rank`: the eigenpairs a low-rank kind keeps (`None`: from the spectrum).
    pub(crate) rank: Option<usize>,
}

/// How long a kind's chains run where the study does not say: the number of chains, the
/// iterations of each (burn-in included) and the burn-in. Every Markov kind has one; a study's
/// `sampler.chains`, `sampler.iterations` and `sampler.burn_in` override it key by key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub chains: usize,
    pub iterations: u64,
    pub burn_in: u64,
}

impl Budget {
    /// Stan's and PyMC's budget: four chains of 1,000 kept iterations after 1,000 of burn-in.
    /// For the kinds whose effective draws per iteration do not fall with the grid (elliptical
    /// slice, NUTS, and the kinds that use the Laplace approximation or the prior's eigenbasis).
    pub(crate) const SHORT: Budget = Budget {
        chains: 4,
        iterations: 2_000,
        burn_in: 1_000,
    };
    /// Four chains of 5,000 kept iterations after 5,000 of burn-in: for the random walks and
    /// the Langevin kinds, whose steps shrink as the grid grows, so each iteration moves less.
    pub(crate) const LONG: Budget = Budget {
        chains: 4,
        iterations: 10_000,
        burn_in: 5_000,
    };
    /// What an approximation (laplace, inla) records for the chain keys it does not use: one
    /// chain of 10,000 iterations without burn-in, the values every kind shared before kinds had
    /// budgets, so the job keys of existing approximation studies stay as they were.
    pub(crate) const NO_CHAIN: Budget = Budget {
        chains: 1,
        iterations: 10_000,
        burn_in: 0,
    };
}

/// A sampler kind as a study names it: how to build it from a job's spec, and how its step size
/// is tuned.
pub trait Kind: Sampler + Sized {
    /// The step-size tuning of the kind, or `None` when it has no step size.
    const TUNING: Option<StepTuning>;
    /// Chains, iterations and burn-in where the study leaves them out.
    const BUDGET: Budget = Budget::SHORT;
    /// Whether the kind keeps a low-rank approximation whose rank a study may set.
    const HAS_RANK: bool = false;
    /// The version of the kind's draws: raised whenever the same settings and seed would give
    /// different draws (a changed default, a changed trajectory). A version above 1 joins the
    /// job's key (`sampler.version`), so results of an older version are recomputed, never
    /// mixed with the new; version 1 stays out, so the ids of older kinds' jobs do not move.
    const VERSION: u32 = 1;
    /// The sampler for `settings`.
    fn configure(settings: &KindSettings) -> Self;
}
