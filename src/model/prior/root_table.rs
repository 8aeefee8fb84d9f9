//! The joint chain's axis roots, tabulated in log l: what keeps eigendecompositions out of its
//! gradient.
//!
//! The joint chain moves the length scale at every leapfrog step, so each gradient needed each
//! axis's root S(l) and dS / d log l afresh ([`AxisRoot::new`]: two symmetric eigendecompositions
//! of half the axis and a few products), about 40 % of a gradient's CPU time on a 32 x 32 grid.
//! S is an analytic function of u = log l (a matrix function of an analytic matrix; eigenvalue
//! crossings do not matter), so it is smooth enough to interpolate: [`AxisTable`] computes the
//! exact root and its derivative at the lattice u_k = k h, h = [`SPACING`], as the chain first
//! needs them, and returns the cubic Hermite interpolant between the two nodes around u,
//!
//!   S~(u) = h00(s) S_k + h10(s) h S'_k + h01(s) S_(k+1) + h11(s) h S'_(k+1),  s = (u - u_k) / h,
//!
//! with its own exact derivative dS~/du (the h's derivatives, divided by h). S~ is C^1 in u, equal
//! to S at every node with S's slope there, and differs from S by at most h^4 / 384 max |S''''|
//! in between: below [`INTERPOLATION_TOLERANCE`], a hundredth of the jitter already in every axis
//! kernel ([`super::differentiable::AXIS_JITTER`]), for every kernel, length scale and axis size
//! the tests try. The chain therefore samples, exactly, the posterior under the covariance
//! S~ S~^T, which differs from the kernel's by less than its jitter does.
//!
//! Nodes depend on k alone, never on the order the chain visits them, so a table is a pure
//! function of the length scale and chains stay reproducible. Each holds the root's and its
//! derivative's mirror blocks (about n^2 values: 8 KiB a node for 32 points, 128 KiB for 128); a
//! chain visits a few hundred nodes, and a table past [`MAX_TABLE_VALUES`] starts afresh.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::PriorError;
use super::differentiable::{AxisRoot, SeparableRoot};
use crate::model::grid::{Axis, Grid};
use crate::model::spec::KernelKind;

/// The lattice's spacing in log l: 256 nodes per unit of log l (0.4 % in l). At 1 / 64 the
/// largest error the test finds is 1.3e-9 (squared exponential, l near a cell); the error
/// shrinks as h^4.
pub(crate) const SPACING: f64 = 1.0 / 256.0;

#[cfg(test)]
/// The largest entrywise difference between the tabulated root and the exact one the tests
/// accept, anywhere between two nodes: a hundredth of the axis kernels' jitter.
pub(crate) const INTERPOLATION_TOLERANCE: f64 = 1e-10;

/// The most values (roots' and derivatives' blocks) a table keeps, 128 MiB: past it the table
/// starts afresh, which costs recomputation only (a node is a pure function of its index).
const MAX_TABLE_VALUES: usize = 1 << 24;

/// The exact roots of one axis's kernel at the lattice nodes needed so far. Clones share their
/// nodes (a job's chains fill one table between them; with one thread they run one after
/// another and each reuses the nodes the others computed).
#[derive(Debug, Clone)]
pub(crate) struct AxisTable {
    axis: Axis,
    kind: KernelKind,
    nodes: Arc<RwLock<HashMap<i64, Arc<AxisRoot>>>>,
}

/// The cubic Hermite basis at s in [0, 1] and its slope in s: the weights of the left node's
/// value and slope, then the right node's.
fn hermite(s: f64) -> ([f64; 4], [f64; 4]) {
    let (s2, s3) = (s * s, s * s * s);
    (
        [
            2.0 * s3 - 3.0 * s2 + 1.0,
            s3 - 2.0 * s2 + s,
            -2.0 * s3 + 3.0 * s2,
            s3 - s2,
        ],
        [
            6.0 * s2 - 6.0 * s,
            3.0 * s2 - 4.0 * s + 1.0,
            -6.0 * s2 + 6.0 * s,
            3.0 * s2 - 2.0 * s,
        ],
    )
}

impl AxisTable {
    /// An empty table of `kind`'s unit-variance kernel on `axis`.
    pub(crate) fn new(axis: Axis, kind: KernelKind) -> Self {
        Self {
            axis,
            kind,
            nodes: Arc::default(),
        }
    }

    #[cfg(test)]
    /// The number of nodes computed so far.
    pub(crate) fn nodes(&self) -> usize {
        self.nodes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The tabulated root and its derivative in log l at `length_scale`.
    pub(crate) fn root(&self, length_scale: f64) -> Result<AxisRoot, PriorError> {
        let position = length_scale.ln() / SPACING;
        if !position.is_finite() || position.abs() > 1e15 {
            return Err(PriorError::NonFiniteKernel {
                length_scale,
                variance: 1.0,
            });
        }
        let left = position.floor();
        let s = position - left;
        let k = left as i64;
        let (a, b) = (self.node(k)?, self.node(k + 1)?);
        let (value, slope) = hermite(s);
        Ok(AxisRoot::hermite(&a, &b, SPACING, value, slope))
    }

    /// Node k, computed (outside the lock: a node is a pure function of k, so two chains that
    /// race compute the same values) if the table lacks it.
    fn node(&self, k: i64) -> Result<Arc<AxisRoot>, PriorError> {
        let known = self
            .nodes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&k)
            .cloned();
        if let Some(node) = known {
            return Ok(node);
        }
        let length_scale = (k as f64 * SPACING).exp();
        let node = Arc::new(AxisRoot::new(self.axis, self.kind, length_scale)?);
        let mut nodes = self.nodes.write().unwrap_or_else(PoisonError::into_inner);
        let n = self.axis.points();
        if (nodes.len() + 1) * n * n > MAX_TABLE_VALUES {
            nodes.clear();
        }
        nodes.insert(k, node.clone());
        Ok(node)
    }
}

/// The tables of a grid's two axes (one when y is x's axis: a square grid over a square window),
/// giving the separable root at any pair of length scales. Clones share their nodes.
#[derive(Debug, Clone)]
pub(crate) struct SeparableTable {
    grid: Grid,
    x: AxisTable,
    y: Option<AxisTable>,
}

impl SeparableTable {
    pub(crate) fn new(grid: Grid, kind: KernelKind) -> Self {
        Self {
            grid,
            x: AxisTable::new(grid.x_axis(), kind),
            y: (grid.y_axis() != grid.x_axis()).then(|| AxisTable::new(grid.y_axis(), kind)),
        }
    }

    /// The tabulated root with length scale `length_scale` along x and `length_scale_y` along y
    /// (`None`: the same).
    pub(crate) fn root(
        &self,
        length_scale: f64,
        length_scale_y: Option<f64>,
    ) -> Result<SeparableRoot, PriorError> {
        let x = self.x.root(length_scale)?;
        let ly = length_scale_y.unwrap_or(length_scale);
        let y = match &self.y {
            Some(table) => Some(table.root(ly)?),
            None if ly == length_scale => None,
            None => Some(self.x.root(ly)?),
        };
        Ok(SeparableRoot::from_axes(self.grid, x, y))
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;

    fn max_abs_difference(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        (a - b).norm_max()
    }

    /// The tabulated root's derivative is the interpolant's own (exact for the density the chain
    /// samples); it differs from the exact root's by O(h^3) and by the latter's rounding in the
    /// near-singular kernels of long length scales (at most 2.6e-8 in the cases below; 2.8e-7 at
    /// h = 1 / 64).
    const SLOPE_TOLERANCE: f64 = 1e-7;

    /// Between nodes the tabulated root stays within the stated tolerance of the exact one (the
    /// largest error measured is 6.5e-11, n = 128 at l = 20, where rounding in the exact root
    /// dominates; at h = 1 / 64 it was 1.3e-9) and its derivative within [`SLOPE_TOLERANCE`],
    /// for every kernel, short and long length scales, and axes of 2 to 128 points.
    #[test]
    fn the_tabulated_root_is_the_exact_one_to_within_a_hundredth_of_the_jitter() {
        let kinds = [
            KernelKind::SquaredExponential,
            KernelKind::Matern52,
            KernelKind::Matern32,
            KernelKind::Exponential,
        ];
        let mut worst: f64 = 0.0;
        for n in [2, 3, 7, 32, 64, 128] {
            let axis = Grid::line(n).x_axis();
            for kind in kinds {
                let table = AxisTable::new(axis, kind);
                for log_l in [-5.0, -3.1, -2.3, -1.0, 0.2, 1.5, 3.0] {
                    for fraction in [0.13, 0.5, 0.77] {
                        let length_scale = f64::exp(log_l + fraction * SPACING);
                        let tabulated = table.root(length_scale).unwrap();
                        let exact = AxisRoot::new(axis, kind, length_scale).unwrap();
                        let root_error = max_abs_difference(&tabulated.root(), &exact.root());
                        let slope_error =
                            max_abs_difference(&tabulated.derivative(), &exact.derivative());
                        worst = worst.max(root_error);
                        let case = format!("n {n}, {kind:?}, l {length_scale}");
                        assert!(
                            root_error < INTERPOLATION_TOLERANCE,
                            "{case}: {root_error:e}"
                        );
                        assert!(
                            slope_error < SLOPE_TOLERANCE,
                            "{case}: slope {slope_error:e}"
                        );
                    }
                }
            }
        }
        println!("largest entrywise error of the tabulated root: {worst:e}");
    }

    /// At a node the table returns the node's exact root, and the nodes it keeps are the two
    /// around each length scale asked for.
    #[test]
    fn at_a_node_the_table_is_exact_and_keeps_only_the_nodes_it_needed() {
        let axis = Grid::line(9).x_axis();
        let table = AxisTable::new(axis, KernelKind::SquaredExponential);
        let length_scale = (-96.0 * SPACING).exp();
        let tabulated = table.root(length_scale).unwrap();
        let exact = AxisRoot::new(axis, KernelKind::SquaredExponential, length_scale).unwrap();
        assert!(max_abs_difference(&tabulated.root(), &exact.root()) < 1e-15);
        assert!(max_abs_difference(&tabulated.derivative(), &exact.derivative()) < 1e-15);
        assert_eq!(table.nodes(), 2);
        table.root(length_scale * 1.001).unwrap();
        assert_eq!(table.nodes(), 2);
        // A clone shares the nodes.
        let clone = table.clone();
        clone.root(length_scale * 1.01).unwrap();
        assert_eq!(table.nodes(), 4);
        assert!(table.root(0.0).is_err() && table.root(f64::NAN).is_err());
    }
}
