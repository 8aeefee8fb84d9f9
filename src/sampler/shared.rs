//! Building blocks the kinds share: a state that can follow a changing prior ([`Retarget`]) and
//! prior draws L z made ahead of time in cache-sized blocks.

use super::protocol::{ChainRng, ChainState, Position};
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
    pub(crate) fn one_at_a_time(target: &Target) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Observed;
    use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};

    #[test]
    fn draws_do_not_depend_on_the_block_length() {
        let prior =
            KroneckerPrior::new(Grid::new(5), KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![], 1.0, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&[]),
            mean: 0.0,
        };
        let rng = || ChainRng::keyed(1, "b");
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
