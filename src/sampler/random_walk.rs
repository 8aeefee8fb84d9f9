//! The Metropolis-Hastings kinds whose proposal is xi' = keep xi + beta z, z ~ N(0, I) (GRW:
//! keep = 1; pCN: keep = sqrt(1 - beta^2)): one sampler, [`RandomWalk`], generic over the
//! [`Proposal`] that says what keep is and what the acceptance ratio adds to the likelihood
//! ratio.

use std::marker::PhantomData;

use super::kind::{Budget, Kind, KindSettings};
use super::protocol::{ChainRng, Position, Sampler, StepInfo, StepTuning};
use super::shared::{PriorDraws, Retarget};
use crate::model::target::{Target, Workspace};

/// What distinguishes one random-walk kind from another.
pub trait Proposal: std::fmt::Debug + Clone + Copy + PartialEq + Send + Sync + 'static {
    /// How the kind's step size is tuned.
    const TUNING: StepTuning;
    /// The weight of the current point in xi' = keep xi + beta z.
    fn keep(beta: f64) -> f64;
    /// The log ratio of everything in the acceptance ratio but the likelihood, at the current
    /// point xi with the normals z (0 when the proposal leaves the prior invariant).
    fn prior_log_ratio(beta: f64, xi: &[f64], z: &[f64]) -> f64;
}

/// A random-walk kind with its starting step size beta.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomWalk<P: Proposal> {
    pub(crate) beta: f64,
    proposal: PhantomData<P>,
}

impl<P: Proposal> RandomWalk<P> {
    pub fn new(beta: f64) -> Self {
        Self {
            beta,
            proposal: PhantomData,
        }
    }
}

impl<P: Proposal> Kind for RandomWalk<P> {
    const TUNING: Option<StepTuning> = Some(P::TUNING);
    const BUDGET: Budget = Budget::LONG;

    fn configure(settings: &KindSettings) -> Self {
        Self::new(settings.step)
    }
}

impl<P: Proposal> Sampler for RandomWalk<P> {
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
        let beta = state.beta;
        let prior_log_ratio = |xi: &[f64], z: &[f64]| P::prior_log_ratio(beta, xi, z);
        random_walk_step(state, P::keep(beta), prior_log_ratio, target, rng)
    }
}

/// A chain of a kind whose proposal is xi' = keep xi + beta z.
#[derive(Debug, Clone)]
pub struct RandomWalkState {
    position: Position,
    beta: f64,
    proposal: Vec<f64>,
    draws: PriorDraws,
    work: Workspace,
}

impl RandomWalkState {
    pub(crate) fn new(xi: Vec<f64>, beta: f64, target: &Target) -> Self {
        let mut work = target.workspace();
        Self {
            position: Position::new(xi, target, &mut work),
            beta,
            proposal: vec![0.0; target.observations()],
            draws: PriorDraws::new(target),
            work,
        }
    }
}

impl Retarget for RandomWalkState {
    fn retarget(&mut self, position: Position, target: &Target) {
        self.position = position;
        self.draws = PriorDraws::one_at_a_time(target);
    }
}

super::protocol::chain_state_with_step!(RandomWalkState, position, beta);

/// One Metropolis-Hastings step with the proposal xi' = keep xi + beta z, z ~ N(0, I), so
/// u' - m = keep (u - m) + beta L z: only G u' (the field at the observations) is formed for
/// the ratio, the whole field once a move is accepted. `prior_ratio(xi, z)` is the log ratio of
/// everything but the likelihood (0 when the proposal preserves the prior, as pCN's does).
pub(crate) fn random_walk_step(
    state: &mut RandomWalkState,
    keep: f64,
    prior_ratio: impl Fn(&[f64], &[f64]) -> f64,
    target: &Target,
    rng: &mut ChainRng,
) -> StepInfo {
    let RandomWalkState {
        position,
        beta,
        proposal,
        draws,
        work,
    } = state;
    let (beta, mean) = (*beta, target.mean);
    let (z, lz) = draws.next(target, rng, work);
    // G u' = mean + keep (G u - mean) + beta G L z: G is linear and keeps constants (a site's
    // weights sum to 1). `proposal` holds G L z first.
    target.gather(lz, proposal);
    for (w, &g) in proposal.iter_mut().zip(&position.observed) {
        *w = mean + keep * (g - mean) + beta * *w;
    }
    let log_likelihood = target.likelihood.log_likelihood(proposal);
    let log_ratio = log_likelihood - position.log_likelihood + prior_ratio(&position.xi, z);
    let moved = rng.accept(log_ratio);
    if moved {
        for (x, &zk) in position.xi.iter_mut().zip(z) {
            *x = keep * *x + beta * zk;
        }
        for (u, &lzk) in position.field.iter_mut().zip(lz) {
            *u = mean + keep * (*u - mean) + beta * lzk;
        }
        position.observed.copy_from_slice(proposal);
        position.log_likelihood = log_likelihood;
    }
    StepInfo::metropolis(moved, log_ratio, 1, 0)
}
