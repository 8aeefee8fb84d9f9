//! Gaussian random-walk Metropolis-Hastings: xi' = xi + beta z, z ~ N(0, I).
//!
//! In the field u' = u + beta L z. The proposal is symmetric, so the acceptance ratio is the
//! posterior ratio: the likelihood ratio times the prior ratio
//! exp(-(|xi'|^2 - |xi|^2) / 2) = exp(-(beta xi.z + beta^2 |z|^2 / 2)). Its acceptance rate falls
//! as the grid is refined (about 2 Phi(-beta sqrt(N + M) / 2) for large N).

use super::position::{Position, PriorDraws};
use super::protocol::{
    ChainRng, ChainState, Sampler, StepInfo, StepTuning, acceptance_probability, dot,
};
use super::{Kind, SamplerSpec};
use crate::model::target::{Target, Workspace};

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

    fn configure(spec: &SamplerSpec) -> Self {
        Self { beta: spec.step() }
    }
}

/// A GRW chain.
#[derive(Debug, Clone)]
pub struct GrwState {
    position: Position,
    beta: f64,
    proposal: Vec<f64>,
    draws: PriorDraws,
    work: Workspace,
}

impl ChainState for GrwState {
    fn position(&self) -> &[f64] {
        &self.position.xi
    }
    fn field(&self) -> &[f64] {
        &self.position.field
    }
    fn log_likelihood(&self) -> f64 {
        self.position.log_likelihood
    }
    fn step_size(&self) -> Option<f64> {
        Some(self.beta)
    }
    fn set_step_size(&mut self, step: f64) {
        self.beta = step;
    }
}

impl Sampler for Grw {
    type State<'t> = GrwState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> GrwState {
        let mut work = target.workspace();
        GrwState {
            position: Position::new(xi, target, &mut work),
            beta: self.beta,
            proposal: vec![0.0; target.observations()],
            draws: PriorDraws::new(target),
            work,
        }
    }

    fn step<'t>(&self, state: &mut GrwState, target: &Target<'t>, rng: &mut ChainRng) -> StepInfo {
        let GrwState {
            position,
            beta,
            proposal,
            draws,
            work,
        } = state;
        let beta = *beta;
        let (z, lz) = draws.next(target, rng, work);
        for ((w, &g), &c) in proposal
            .iter_mut()
            .zip(&position.observed)
            .zip(target.observed_cells)
        {
            *w = g + beta * lz[c];
        }
        let log_likelihood = target.likelihood.log_likelihood(proposal);
        let prior_ratio = -(beta * dot(&position.xi, z) + 0.5 * beta * beta * dot(z, z));
        let log_ratio = log_likelihood - position.log_likelihood + prior_ratio;
        let moved = rng.accept(log_ratio);
        if moved {
            for (x, &zk) in position.xi.iter_mut().zip(z) {
                *x += beta * zk;
            }
            for (u, &lzk) in position.field.iter_mut().zip(lz) {
                *u += beta * lzk;
            }
            position.observed.copy_from_slice(proposal);
            position.log_likelihood = log_likelihood;
        }
        StepInfo {
            moved,
            acceptance_probability: Some(acceptance_probability(log_ratio)),
            loglik_evaluations: 1,
            gradient_evaluations: 0,
        }
    }
}
