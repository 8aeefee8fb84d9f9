//! Preconditioned Crank-Nicolson: xi' = sqrt(1 - beta^2) xi + beta z, z ~ N(0, I).
//!
//! The proposal leaves the prior N(0, I) invariant, so the acceptance ratio is the likelihood
//! ratio alone and the acceptance rate does not collapse as the grid is refined (Cotter, Roberts,
//! Stuart & White 2013). In the field, u' - m = sqrt(1 - beta^2) (u - m) + beta L z, so a
//! proposal needs one prior draw L z (drawn ahead in blocks) and the field at the M observed
//! cells; the full field is updated only when a move is accepted.

use super::position::{Position, PriorDraws};
use super::protocol::{
    ChainRng, ChainState, Sampler, StepInfo, StepTuning, acceptance_probability,
};
use super::{Kind, SamplerSpec};
use crate::model::target::{Target, Workspace};

/// pCN with its starting step size beta (0 < beta <= 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pcn {
    pub beta: f64,
}

impl Kind for Pcn {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.25,
        max_step: Some(1.0),
        adapts_by_default: false,
    });

    fn configure(spec: &SamplerSpec) -> Self {
        Self { beta: spec.step() }
    }
}

/// A pCN chain.
#[derive(Debug, Clone)]
pub struct PcnState {
    position: Position,
    beta: f64,
    contraction: f64,
    proposal: Vec<f64>,
    draws: PriorDraws,
    work: Workspace,
}

impl ChainState for PcnState {
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
        self.contraction = contraction(step);
    }
}

fn contraction(beta: f64) -> f64 {
    (1.0 - beta * beta).max(0.0).sqrt()
}

impl Sampler for Pcn {
    type State<'t> = PcnState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> PcnState {
        let mut work = target.workspace();
        PcnState {
            position: Position::new(xi, target, &mut work),
            beta: self.beta,
            contraction: contraction(self.beta),
            proposal: vec![0.0; target.observations()],
            draws: PriorDraws::new(target),
            work,
        }
    }

    fn step<'t>(&self, state: &mut PcnState, target: &Target<'t>, rng: &mut ChainRng) -> StepInfo {
        let PcnState {
            position,
            beta,
            contraction,
            proposal,
            draws,
            work,
        } = state;
        let (beta, keep, mean) = (*beta, *contraction, target.mean);
        let (z, lz) = draws.next(target, rng, work);
        for ((w, &g), &c) in proposal
            .iter_mut()
            .zip(&position.observed)
            .zip(target.observed_cells)
        {
            *w = mean + keep * (g - mean) + beta * lz[c];
        }
        let log_likelihood = target.likelihood.log_likelihood(proposal);
        let log_ratio = log_likelihood - position.log_likelihood;
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
        StepInfo {
            moved,
            acceptance_probability: Some(acceptance_probability(log_ratio)),
            loglik_evaluations: 1,
            gradient_evaluations: 0,
        }
    }
}
