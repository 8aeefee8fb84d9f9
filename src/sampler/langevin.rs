//! What the Langevin kinds (MALA, pCN-Langevin) share: a position with the log-likelihood's
//! gradient, and one Metropolis-Hastings step for a proposal of the form
//! xi' = keep xi + weight g(xi) + sd z, z ~ N(0, I), with g = L^T G^T d loglik / d(G u) the
//! gradient in whitened coordinates.
//!
//! The acceptance ratio is computed in full, log pi(xi') + log q(xi | xi') - log pi(xi) -
//! log q(xi' | xi) with log pi(xi) = loglik(xi) - |xi|^2 / 2, so each kind only states its drift.
//! A step costs two prior products: L xi' (the field) and L^T (the gradient).

use super::protocol::Position;
use super::protocol::{ChainRng, Sampler, StepInfo, dot};
use super::shared::Retarget;
use crate::model::target::{Target, Workspace};

/// A Langevin kind: a starting step size and the drift a step size gives. Every such kind is a
/// [`Sampler`] through [`langevin_step`].
pub(crate) trait LangevinKind: Sync {
    /// The step size the chain starts from.
    fn initial_step(&self) -> f64;
    /// The proposal's drift and spread at step size `step`.
    fn drift(step: f64) -> Drift;
}

impl<K: LangevinKind> Sampler for K {
    type State<'t>
        = LangevinState
    where
        K: 't;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> LangevinState {
        LangevinState::new(xi, self.initial_step(), target)
    }

    fn step<'t>(
        &self,
        state: &mut LangevinState,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let drift = K::drift(state.step);
        langevin_step(state, drift, target, rng)
    }
}

/// The proposal xi' = keep xi + weight g(xi) + sd z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Drift {
    pub(crate) keep: f64,
    pub(crate) weight: f64,
    pub(crate) sd: f64,
}

/// A Langevin chain: the position, its gradient, the step size and buffers.
#[derive(Debug, Clone)]
pub struct LangevinState {
    position: Position,
    gradient: Vec<f64>,
    step: f64,
    proposal: Position,
    proposal_gradient: Vec<f64>,
    noise: Vec<f64>,
    work: Workspace,
}

impl LangevinState {
    pub(crate) fn new(xi: Vec<f64>, step: f64, target: &Target) -> Self {
        let mut work = target.workspace();
        let mut position = Position::new(xi, target, &mut work);
        let mut gradient = vec![0.0; target.dim()];
        position.log_likelihood =
            target.log_likelihood_and_gradient(&position.field, &mut gradient, &mut work);
        Self {
            proposal: position.clone(),
            proposal_gradient: gradient.clone(),
            noise: vec![0.0; target.dim()],
            position,
            gradient,
            step,
            work,
        }
    }
}

impl Retarget for LangevinState {
    fn retarget(&mut self, mut position: Position, target: &Target) {
        position.log_likelihood =
            target.log_likelihood_and_gradient(&position.field, &mut self.gradient, &mut self.work);
        self.position = position;
    }
}

super::protocol::chain_state_with_step!(LangevinState, position, step);

/// One Metropolis-adjusted step with `drift`.
pub(crate) fn langevin_step(
    state: &mut LangevinState,
    drift: Drift,
    target: &Target,
    rng: &mut ChainRng,
) -> StepInfo {
    let LangevinState {
        position,
        gradient,
        proposal,
        proposal_gradient,
        noise,
        work,
        ..
    } = state;
    rng.normals(noise);
    for (((y, &x), &g), &z) in proposal
        .xi
        .iter_mut()
        .zip(&position.xi)
        .zip(gradient.iter())
        .zip(noise.iter())
    {
        *y = drift.keep * x + drift.weight * g + drift.sd * z;
    }
    target.field(&proposal.xi, &mut proposal.field, work);
    proposal.log_likelihood =
        target.log_likelihood_and_gradient(&proposal.field, proposal_gradient, work);
    let log_target = |p: &Position| p.log_likelihood - 0.5 * dot(&p.xi, &p.xi);
    // log q(to | from) up to the shared constant.
    let log_transition = |to: &[f64], from: &[f64], g: &[f64]| {
        let mut sum = 0.0;
        for ((&t, &f), &gk) in to.iter().zip(from).zip(g) {
            let r = t - drift.keep * f - drift.weight * gk;
            sum += r * r;
        }
        -0.5 * sum / (drift.sd * drift.sd)
    };
    let log_ratio = log_target(proposal)
        + log_transition(&position.xi, &proposal.xi, proposal_gradient)
        - log_target(position)
        - log_transition(&proposal.xi, &position.xi, gradient);
    let moved = rng.accept(log_ratio);
    if moved {
        std::mem::swap(position, proposal);
        std::mem::swap(gradient, proposal_gradient);
        target.gather(&position.field, &mut position.observed);
    }
    StepInfo::metropolis(moved, log_ratio, 0, 1)
}
