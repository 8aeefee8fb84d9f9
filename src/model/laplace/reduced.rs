//! The Laplace gaussian in the prior's leading spectral coordinates ([`ReducedCovariance`]): the
//! log-determinant and the covariances that the simplified Laplace corrections are summed from,
//! exact to a stated bound, at a cost that grows with the number r of coordinates kept instead
//! of with the observations cubed.
//!
//! With the prior's spectral root B (C = B B^T, column k of squared norm lambda_k:
//! [`SpectralRoot`]), keep the r columns B_r of largest lambda and drop the rest, B_t. With
//! W' = G^T W G, Schur's complement splits
//!
//!   log det(I + B^T W' B) = log det(I_r + B_r^T W' B_r) + log det(I + B_t^T W'' B_t),
//!
//! W'' = W' - W' B_r (I + B_r^T W' B_r)^-1 B_r^T W' (0 <= W'' <= W'), and the second term lies in
//! [0, tr(B_t^T W' B_t)] = [0, sum_t |W^1/2 G b_t|^2], a sum of one share per dropped column.
//! The coordinates dropped are those of smallest share whose sum stays within 2
//! [`DROPPED_EVIDENCE`], so the log evidence is over-estimated by at most 1e-4 nats (where the
//! data are sparse, W is small in most cells and many more coordinates go than the prior's
//! spectrum alone would let go): INLA's weights move by at most 0.01 %, and each cell's variance
//! by a like share of its dropped prior variance. The bound matters where the prior's spectrum
//! meets the kernel's jitter: every coordinate there has a share of about jitter x lambda_max
//! x w, each one negligible, but at 64 x 64 there are thousands, and a bound of 1e-9 nats (until
//! inla's version 5) kept them all. A fit near another may keep that one's coordinates instead
//! ([`CurvatureShares::keeping`], where they still hold to the bound): INLA's finite differences (step
//! 0.01: a jump of 1e-4 nats between neighbouring thetas would move a second difference by 4)
//! then difference one smooth function.
//!
//! The Laplace gaussian here keeps the dropped coordinates at their prior N(0, I) (the data move
//! them by at most the same bound) and the kept ones at N(., (I + B_r^T W' B_r)^-1). With
//! R R^T = I + B_r^T W' B_r, Z = R^-1 (G B_r)^T (r x M) and Y = B_r R^-T (N x r):
//!
//! - Cov(G u) = Z^T Z, plus on its diagonal the dropped prior variance (G C_t G^T)_aa;
//! - Cov(u_n, (G u)_a) = (Y Z)_na, and Var u_n = |row n of Y|^2 + C_nn - |row n of B_r|^2.
//!
//! Costs: M r^2 for R and again for Z, r^3 / 3 for the factor, r M^2 / 2 for the observations'
//! covariances, N r^2 and N M r for the cells'. The covariates' coordinates (a model with fixed
//! effects) are always kept; the spatial field's covariances with the observations leave them
//! out of B_r.

use std::ops::Range;
use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, Mat, MatMut, Par, Side};

use super::error::LaplaceError;
use crate::model::prior::Prior;
use crate::model::prior::leading_block::LeadingBlock;
use crate::model::prior::spectral::SpectralRoot;
use crate::model::target::Observed;

/// The most the dropped coordinates may move the Laplace log evidence, in nats.
pub(crate) const DROPPED_EVIDENCE: f64 = 1e-4;

/// The most values the reduced form may hold: 2^27, 1 GiB.
pub(crate) const MAX_REDUCED_VALUES: usize = 1 << 27;

/// Which spectral coordinates to keep at one Laplace fit: chosen before anything costly is
/// computed, so that the caller can weigh the rank against the observations.
pub(crate) struct Reduction {
    root: Arc<dyn SpectralRoot>,
    /// The kept coordinates, in increasing index order (the covariates' last).
    kept: Vec<usize>,
    /// How many of the kept coordinates are covariates' (the last ones).
    covariates: usize,
    /// The bound on how much the dropped coordinates over-estimate the log evidence (read by
    /// the tests, which hold the log-determinant to it).
    #[cfg_attr(not(test), allow(dead_code))]
    evidence_bound: f64,
}

/// Each spectral coordinate's curvature share at one fit ([`curvature_shares`]): what both
/// ways of choosing the coordinates ([`Self::dropping`], [`Self::keeping`]) weigh, computed
/// once a fit.
pub(crate) struct CurvatureShares {
    root: Arc<dyn SpectralRoot>,
    shares: Vec<f64>,
    /// How many of the coordinates are covariates' (the last ones, always kept).
    covariates: usize,
}

impl CurvatureShares {
    /// The shares for the prior's spectral root at the likelihood curvatures `weights` (`None`
    /// without a root).
    pub(crate) fn new(prior: &dyn Prior, observed: Observed, weights: &[f64]) -> Option<Self> {
        let root = prior.spectral_root()?;
        let shares = curvature_shares(root.as_ref(), observed, weights, prior.cells());
        let covariates = prior.covariates().map_or(0, |c| c.count());
        Some(Self {
            root,
            shares,
            covariates,
        })
    }

    /// The smallest block of the prior's leading spectral coordinates holding all but `leftover`
    /// of the shares (every eigenvalue of the misfit Hessian compressed to the coordinates outside
    /// it is at most `leftover`), where the root has such blocks, the model no covariates and the
    /// block is at most half the coordinates ([`LeadingBlock::choose`]).
    pub(crate) fn leading_block(&self, leftover: f64) -> Option<LeadingBlock> {
        if self.covariates > 0 {
            return None;
        }
        self.root.leading_block(&self.shares, leftover)
    }

    /// The field's coordinates (those before the covariates').
    fn field(&self) -> usize {
        self.shares.len() - self.covariates
    }

    /// Drop the coordinates of smallest share while their sum moves at most `tolerance` nats.
    pub(crate) fn dropping(&self, tolerance: f64) -> Reduction {
        let (shares, field) = (&self.shares, self.field());
        let mut order: Vec<usize> = (0..field).collect();
        order.sort_by(|&a, &b| shares[a].total_cmp(&shares[b]).then(a.cmp(&b)));
        let (mut trace, mut dropped) = (0.0, 0);
        for &k in &order {
            let next = trace + shares[k];
            if 0.5 * next > tolerance {
                break;
            }
            trace = next;
            dropped += 1;
        }
        let mut kept: Vec<usize> = order[dropped..].to_vec();
        kept.sort_unstable();
        kept.extend(field..shares.len());
        self.reduction(kept, trace)
    }

    /// The coordinates `kept` (another fit's, [`ReducedCovariance::kept`]), when they are
    /// coordinates of this root (the covariates' last) and the rest move the log evidence by at
    /// most `tolerance` nats here; `None` otherwise. A finite difference whose every point keeps
    /// its centre's coordinates differences one smooth function of theta, whatever the
    /// tolerance.
    pub(crate) fn keeping(&self, kept: &[usize], tolerance: f64) -> Option<Reduction> {
        let (shares, field) = (&self.shares, self.field());
        let increasing = kept.windows(2).all(|pair| pair[0] < pair[1]);
        let covariates_last = kept.len() >= self.covariates
            && kept[kept.len() - self.covariates..]
                .iter()
                .copied()
                .eq(field..shares.len());
        if !(increasing && covariates_last && kept.last().is_none_or(|&k| k < shares.len())) {
            return None;
        }
        let mut is_kept = vec![false; shares.len()];
        kept.iter().for_each(|&k| is_kept[k] = true);
        let trace: f64 = (0..field).filter(|&k| !is_kept[k]).map(|k| shares[k]).sum();
        (0.5 * trace <= tolerance).then(|| self.reduction(kept.to_vec(), trace))
    }

    fn reduction(&self, kept: Vec<usize>, dropped_trace: f64) -> Reduction {
        Reduction {
            root: Arc::clone(&self.root),
            kept,
            covariates: self.covariates,
            evidence_bound: 0.5 * dropped_trace,
        }
    }
}

impl Reduction {
    /// The coordinates to keep for the prior's spectral root (`None` without one) at the
    /// likelihood curvatures `weights`, dropping at most `tolerance` nats of log evidence.
    pub(crate) fn new(
        prior: &dyn Prior,
        observed: Observed,
        weights: &[f64],
        tolerance: f64,
    ) -> Option<Self> {
        Some(CurvatureShares::new(prior, observed, weights)?.dropping(tolerance))
    }

    /// r: the coordinates kept.
    pub(crate) fn rank(&self) -> usize {
        self.kept.len()
    }

    /// Whether the reduced form for `cells` cells and `observations` observations fits in
    /// [`MAX_REDUCED_VALUES`] at its peak: B_r and the cells' root (N r each), (G B_r)^T with its
    /// weighted copy (M r each), the precision and its factor (r^2 each).
    pub(crate) fn fits(&self, cells: usize, observations: usize) -> bool {
        let r = self.rank();
        2 * r * (observations + cells + r) <= MAX_REDUCED_VALUES
    }

    /// How much the dropped coordinates may over-estimate the log evidence (at most the
    /// tolerance asked for).
    #[cfg(test)]
    pub(crate) fn evidence_bound(&self) -> f64 {
        self.evidence_bound
    }

    /// The Laplace gaussian in the kept coordinates at the likelihood curvatures `weights`.
    pub(crate) fn covariance(
        self,
        prior: &dyn Prior,
        observed: Observed,
        weights: &[f64],
    ) -> Result<ReducedCovariance, LaplaceError> {
        let (n, m, r) = (prior.cells(), observed.len(), self.rank());
        let mut basis = Mat::<f64>::zeros(n, r);
        let mut gathered = Mat::<f64>::zeros(r, m);
        let mut scratch = vec![0.0; self.root.scratch_len()];
        let (mut column, mut at) = (vec![0.0; n], vec![0.0; m]);
        for (j, &k) in self.kept.iter().enumerate() {
            self.root.column(k, &mut column, &mut scratch);
            basis
                .col_mut(j)
                .iter_mut()
                .zip(&column)
                .for_each(|(b, &c)| *b = c);
            observed.gather(&column, &mut at);
            for (a, &x) in at.iter().enumerate() {
                gathered[(j, a)] = x;
            }
        }
        let mut dropped_at_cells: Vec<f64> = (0..n).map(|c| prior.covariance(c, c)).collect();
        for j in 0..r {
            for (dropped, b) in dropped_at_cells.iter_mut().zip(basis.col(j).iter()) {
                *dropped -= b * b;
            }
        }
        dropped_at_cells.iter_mut().for_each(|d| *d = d.max(0.0));
        let dropped_at_observations: Vec<f64> = (0..m)
            .map(|a| {
                let kept: f64 = gathered.col(a).iter().map(|b| b * b).sum();
                (observed.covariance(prior, a, a) - kept).max(0.0)
            })
            .collect();
        let weighted = Mat::from_fn(r, m, |j, a| gathered[(j, a)] * weights[a].max(0.0).sqrt());
        // Only the lower half, which the factorisation reads: half the multiply-adds.
        let mut precision = Mat::<f64>::identity(r, r);
        triangular::matmul(
            precision.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            weighted.as_ref(),
            BlockStructure::Rectangular,
            weighted.transpose(),
            BlockStructure::Rectangular,
            1.0,
            Par::Seq,
        );
        let llt = precision
            .llt(Side::Lower)
            .map_err(|_| LaplaceError::NotPositiveDefinite)?;
        let factor = llt.L().to_owned();
        let log_det = 2.0 * (0..r).map(|j| factor[(j, j)].ln()).sum::<f64>();
        solve_lower_triangular_in_place(factor.as_ref(), gathered.as_mut(), Par::Seq);
        Ok(ReducedCovariance {
            kept: self.kept.into(),
            covariates: self.covariates,
            basis,
            factor,
            whitened: gathered,
            dropped_at_cells,
            dropped_at_observations,
            log_det,
        })
    }
}

/// b_k^T G^T W G b_k for each column b_k of the spectral root: what dropping coordinate k adds
/// to tr(B_t^T G^T W G B_t), the bound on twice the evidence it moves. For observations at cells
/// (G selects each at most once) it is sum_n (G^T w)_n B_nk^2, which a Kronecker root gives in
/// two D x D products; at sites column by column (N products of a column and N + M values each).
fn curvature_shares(
    root: &dyn SpectralRoot,
    observed: Observed,
    weights: &[f64],
    cells: usize,
) -> Vec<f64> {
    let weights: Vec<f64> = weights.iter().map(|w| w.max(0.0)).collect();
    if let Observed::Cells(_) = observed {
        let mut per_cell = vec![0.0; cells];
        observed.scatter(&weights, &mut per_cell);
        return root.weighted_column_norms(&per_cell);
    }
    let mut scratch = vec![0.0; root.scratch_len()];
    let (mut column, mut at) = (vec![0.0; cells], vec![0.0; observed.len()]);
    (0..root.eigenvalues().len())
        .map(|k| {
            root.column(k, &mut column, &mut scratch);
            observed.gather(&column, &mut at);
            at.iter().zip(&weights).map(|(g, w)| w * g * g).sum()
        })
        .collect()
}

/// Which field's covariances with the observations [`ReducedCovariance::cell_variances`] gives:
/// u itself, or the spatial field f = u - mean - X beta of a model with covariates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldPart {
    Whole,
    Spatial,
}

/// The Laplace gaussian in the prior's leading spectral coordinates (module docs).
#[derive(Debug)]
pub(crate) struct ReducedCovariance {
    /// The spectral coordinates kept, in increasing order (the covariates' last).
    kept: Arc<[usize]>,
    covariates: usize,
    /// B_r, N x r.
    basis: Mat<f64>,
    /// R, lower triangular: R R^T = I + B_r^T G^T W G B_r.
    factor: Mat<f64>,
    /// Z = R^-1 (G B_r)^T, r x M.
    whitened: Mat<f64>,
    /// C_nn - |row n of B_r|^2.
    dropped_at_cells: Vec<f64>,
    /// (G C_t G^T)_aa.
    dropped_at_observations: Vec<f64>,
    log_det: f64,
}

impl ReducedCovariance {
    /// The spectral coordinates kept ([`CurvatureShares::keeping`] takes them again).
    pub(crate) fn kept(&self) -> &Arc<[usize]> {
        &self.kept
    }

    /// log det(I_r + B_r^T G^T W G B_r): the whole log-determinant less at most twice the
    /// reduction's [`Reduction::evidence_bound`].
    pub(crate) fn log_det(&self) -> f64 {
        self.log_det
    }

    /// Cov((G u)_a, (G u)_b) for a from `columns.start` on and b in `columns`
    /// ((M - columns.start) x columns.len(): the block on and below the diagonal).
    pub(crate) fn observation_covariances(&self, columns: Range<usize>) -> Mat<f64> {
        let z = self.whitened.as_ref();
        let start = columns.start;
        let below = z.subcols(start, z.ncols() - start);
        let block = z.subcols(start, columns.len());
        let mut out = Mat::<f64>::zeros(below.ncols(), columns.len());
        matmul(
            out.as_mut(),
            Accum::Replace,
            below.transpose(),
            block,
            1.0,
            Par::Seq,
        );
        for (j, b) in columns.enumerate() {
            out[(b - start, j)] += self.dropped_at_observations[b];
        }
        out
    }

    /// Var((G u)_a) for every observation a.
    pub(crate) fn observation_variances(&self) -> Vec<f64> {
        (0..self.whitened.ncols())
            .map(|a| {
                let kept: f64 = self.whitened.col(a).iter().map(|z| z * z).sum();
                kept + self.dropped_at_observations[a]
            })
            .collect()
    }

    /// Every cell's variance of u under the Laplace gaussian (N r^2 operations, no covariances
    /// with the observations).
    pub(crate) fn variances(&self) -> Vec<f64> {
        self.variances_from(&self.cells_root(FieldPart::Whole))
    }

    /// Every cell's variance (of u, or of the spatial field), visiting each observation `a` with
    /// its covariances with every cell on the way, [`BATCH`] observations at a time.
    pub(crate) fn cell_variances(
        &self,
        part: FieldPart,
        mut visit: impl FnMut(usize, &[f64]),
    ) -> Vec<f64> {
        let root = self.cells_root(part);
        let n = self.basis.nrows();
        let m = self.whitened.ncols();
        let mut block = vec![0.0; n * BATCH];
        for start in (0..m).step_by(BATCH) {
            let count = BATCH.min(m - start);
            let out = MatMut::from_column_major_slice_mut(&mut block[..n * count], n, count);
            matmul(
                out,
                Accum::Replace,
                root.transpose(),
                self.whitened.as_ref().subcols(start, count),
                1.0,
                Par::Seq,
            );
            for (j, covariance) in block.chunks_exact(n).take(count).enumerate() {
                visit(start + j, covariance);
            }
        }
        self.variances_from(&root)
    }

    /// Y^T = R^-1 B_r^T (r x N), the covariates' rows of B_r^T zero for the spatial field.
    fn cells_root(&self, part: FieldPart) -> Mat<f64> {
        let (n, r) = (self.basis.nrows(), self.basis.ncols());
        let spatial = if part == FieldPart::Spatial {
            r - self.covariates
        } else {
            r
        };
        let mut root = Mat::from_fn(
            r,
            n,
            |j, c| {
                if j < spatial { self.basis[(c, j)] } else { 0.0 }
            },
        );
        solve_lower_triangular_in_place(self.factor.as_ref(), root.as_mut(), Par::Seq);
        root
    }

    /// |column n of Y^T|^2 plus the dropped prior variance, for every cell n.
    fn variances_from(&self, root: &Mat<f64>) -> Vec<f64> {
        (0..root.ncols())
            .map(|c| root.col(c).iter().map(|y| y * y).sum::<f64>() + self.dropped_at_cells[c])
            .collect()
    }
}

/// Observations whose covariances with every cell are made together.
const BATCH: usize = 32;
