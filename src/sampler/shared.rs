//! Building blocks the kinds share: a state that can follow a changing prior ([`Retarget`]),
//! prior draws L z made ahead of time in cache-sized blocks, and the state and step of the
//! Metropolis-Hastings kinds whose proposal is xi' = keep xi + beta z (GRW: keep = 1; pCN:
//! keep = sqrt(1 - beta^2)).

use super::protocol::{ChainRng, ChainState, Position, StepInfo};
use crate::model::target::{Target, Workspace};

/// A chain state that can be moved to another target (the same grid and observations under
/// other hyperparameters) at a given position: what a hyperparameter update needs of the field
/// kinds it alternates with. The position comes with its field and log-likelihood under the new
/// target; the state recomputes whatever else it keeps (a gradient) and stops drawing ahead.
pub trait Retarget: ChainState {
    fn retarget(&mut self, position: Position, target: &Target);
}

/// Doubles per block of pre-drawn fields (512 KiB): the buffers of a block stay in a core's
/// L2 cache. Measured: blocks of 16 MiB made the products memory-bound (1.5 to 3x slower per
/// field at D = 64 and 128).
const BLOCK_BUDGET: usize = 1 << 16;
/// At most this many draws are made ahead.
const MAX_BLOCK: usize = 64;

/// Standard normals z and prior draws L z, made a block at a time from the chain's normals.
///
/// The normals are drawn in the order they are used and every L z goes through the prior's
/// single-field product, so the numbers do not depend on the block length.
#[derive(Debug, Clone)]
pub struct PriorDraws {
    z: Vec<f64>,
    lz: Vec<f64>,
    dim: usize,
    cells: usize,
    /// Draws in the current block, and the next unused one.
    filled: usize,
    next: usize,
}

impl PriorDraws {
    pub fn new(target: &Target) -> Self {
        let (dim, cells) = (target.dim(), target.cells());
        let block = (BLOCK_BUDGET / dim.max(cells).max(1)).clamp(1, MAX_BLOCK);
        Self::with_block(dim, cells, block)
    }

    /// Draws made one at a time: for a chain whose prior changes between steps (a
    /// hyperparameter update), where a block's L z would go stale.
    pub fn one_at_a_time(target: &Target) -> Self {
        Self::with_block(target.dim(), target.cells(), 1)
    }

    fn with_block(dim: usize, cells: usize, block: usize) -> Self {
        Self {
            z: vec![0.0; block * dim],
            lz: vec![0.0; block * cells],
            dim,
            cells,
            filled: 0,
            next: 0,
        }
    }

    /// The next (z, L z).
    pub fn next(
        &mut self,
        target: &Target,
        rng: &mut ChainRng,
        work: &mut Workspace,
    ) -> (&[f64], &[f64]) {
        if self.next == self.filled {
            let block = self.z.len() / self.dim.max(1);
            rng.normals(&mut self.z);
            target
                .prior
                .apply_sqrt_batch(&self.z, &mut self.lz, &mut work.scratch, block);
            self.filled = block;
            self.next = 0;
        }
        let k = self.next;
        self.next += 1;
        (
            &self.z[k * self.dim..(k + 1) * self.dim],
            &self.lz[k * self.cells..(k + 1) * self.cells],
        )
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
    pub fn new(xi: Vec<f64>, beta: f64, target: &Target) -> Self {
        let mut work = target.workspace();
        Self {
            position: Position::new(xi, target, &mut work),
            beta,
            proposal: vec![0.0; target.observations()],
            draws: PriorDraws::new(target),
            work,
        }
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Retarget for RandomWalkState {
    fn retarget(&mut self, position: Position, target: &Target) {
        self.position = position;
        self.draws = PriorDraws::one_at_a_time(target);
    }
}

impl ChainState for RandomWalkState {
    fn current(&self) -> &Position {
        &self.position
    }
    fn step_size(&self) -> Option<f64> {
        Some(self.beta)
    }
    fn set_step_size(&mut self, step: f64) {
        self.beta = step;
    }
}

/// One Metropolis-Hastings step with the proposal xi' = keep xi + beta z, z ~ N(0, I), so
/// u' - m = keep (u - m) + beta L z: only the field at the observed cells is formed for the
/// ratio, the whole field once a move is accepted. `prior_ratio(xi, z)` is the log ratio of
/// everything but the likelihood (0 when the proposal preserves the prior, as pCN's does).
pub fn random_walk_step(
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
    for ((w, &g), &c) in proposal
        .iter_mut()
        .zip(&position.observed)
        .zip(target.observed_cells)
    {
        *w = mean + keep * (g - mean) + beta * lz[c];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
    use crate::streams::{Purpose, stream};

    #[test]
    fn draws_do_not_depend_on_the_block_length() {
        let prior =
            KroneckerPrior::new(Grid::new(5), KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![], 1.0, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed_cells: &[],
            mean: 0.0,
        };
        let rng = || {
            ChainRng::new(
                stream(1, Purpose::Chain, "b"),
                stream(1, Purpose::Acceptance, "b"),
            )
        };
        let mut work = target.workspace();
        let collect = |block: usize, work: &mut Workspace| {
            let mut draws = PriorDraws::with_block(25, 25, block);
            let mut rng = rng();
            (0..10)
                .flat_map(|_| {
                    let (z, lz) = draws.next(&target, &mut rng, work);
                    z.iter().chain(lz).map(|x| x.to_bits()).collect::<Vec<_>>()
                })
                .collect::<Vec<u64>>()
        };
        let one = collect(1, &mut work);
        for block in [3, 7, 64] {
            assert_eq!(collect(block, &mut work), one, "block {block}");
        }
    }
}
