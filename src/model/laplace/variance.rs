//! The Laplace covariance's cell variances and log-determinant: exactly in observation space
//! (factored, or inverted when the simplified Laplace corrections need the covariances), or
//! from a low-rank update.
//!
//! The Laplace approximation is the posterior of a gaussian model whose observations have
//! precisions W (the likelihood's curvature at the mode), so in the field
//! S = (C^-1 + G^T W G)^-1 and in whitened coordinates Gamma = (I + L^T G^T W G L)^-1.
//!
//! - [`observation_space`] (exact): with K = I_M + W^1/2 G C G^T W^1/2 = R R^T (M x M, its
//!   entries from [`Observed::covariance`], G C from [`Observed::cross_covariance`]; all
//!   eigenvalues >= 1, so well conditioned whatever W), diag S = diag C - |R^-1 W^1/2 G C e_n|^2
//!   and log det(I + L^T G^T W G L) = log det K (Sylvester). Exact to rounding; costs
//!   M^3 / 3 + M^2 N, so it is used up to [`super::MAX_EXACT_OBSERVATIONS`].
//! - [`ObservationInverse`] (exact): K^-1 itself (M^3), from which the covariances of the
//!   observations' values with each other and with every cell follow, and the cells' variances
//!   with them, by M products with C each.
//! - [`low_rank`]: the r dominant eigenpairs (d_k, v_k) of the misfit Hessian (Lanczos) give
//!   Gamma_r = I - sum_k d_k / (1 + d_k) v_k v_k^T and diag S_r = diag C - sum_k d_k / (1 + d_k)
//!   (L v_k)^2 (the prior variance exactly, less the data's low-rank reduction). With exact
//!   eigenpairs Gamma_r - Gamma is positive semi-definite and at most d_(r+1) / (1 + d_(r+1)) I,
//!   so each cell's variance is over-estimated by at most that share of its prior variance;
//!   d_(r+1) <= tr(H) - sum of the r Ritz values (the tail mass) gives a bound computable from
//!   the run. Likewise sum_k log(1 + d_k) under-estimates log det by at most the tail mass.

use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, Par, Side};

use super::error::LaplaceError;
use crate::model::lanczos::RitzPairs;
use crate::model::prior::Prior;
use crate::model::target::Observed;

/// Cells per block when accumulating the variances.
const BLOCK: usize = 256;

/// Variances of every cell and the log-determinant of I + L^T G^T W G L.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spread {
    pub(crate) variance: Vec<f64>,
    pub(crate) log_det: f64,
}

/// K = I_M + W^1/2 G C G^T W^1/2 factored, with W^1/2.
pub(crate) struct ObservationFactor {
    root: Vec<f64>,
    llt: faer::linalg::solvers::Llt<f64>,
}

impl ObservationFactor {
    pub(crate) fn new(
        prior: &dyn Prior,
        observed: Observed,
        weights: &[f64],
    ) -> Result<Self, LaplaceError> {
        let m = observed.len();
        let root: Vec<f64> = weights.iter().map(|w| w.max(0.0).sqrt()).collect();
        // The factorisation reads the lower triangle only: half the prior's covariances.
        let mut k = Mat::<f64>::zeros(m, m);
        observed.covariance_lower(prior, k.as_mut());
        for b in 0..m {
            for a in b..m {
                k[(a, b)] *= root[a] * root[b];
            }
            k[(b, b)] += 1.0;
        }
        let llt = k
            .llt(Side::Lower)
            .map_err(|_| LaplaceError::NotPositiveDefinite)?;
        Ok(Self { root, llt })
    }

    /// log det K = log det(I + L^T G^T W G L).
    pub(crate) fn log_det(&self) -> f64 {
        let r = self.llt.L();
        2.0 * (0..r.nrows()).map(|a| r[(a, a)].ln()).sum::<f64>()
    }
}

/// K = I_M + W^1/2 G C G^T W^1/2 inverted, for the Laplace gaussian's covariances: of the
/// observations' values with each other ([`Self::observation_covariance`]) and with every cell
/// ([`Self::cell_variances`]), from which the simplified Laplace corrections are summed
/// ([`super::skew`]). The inverse costs M^3 (the factor's M^3 / 3 included); the cells' side
/// then 2 M products with C (M N^1.5 operations on a Kronecker prior), not M^2 N.
#[derive(Debug)]
pub(crate) struct ObservationInverse {
    root: Vec<f64>,
    inverse: Mat<f64>,
    log_det: f64,
}

impl ObservationInverse {
    pub(crate) fn new(
        prior: &dyn Prior,
        observed: Observed,
        weights: &[f64],
    ) -> Result<Self, LaplaceError> {
        use faer::linalg::solvers::DenseSolveCore;
        let factor = ObservationFactor::new(prior, observed, weights)?;
        Ok(Self {
            log_det: factor.log_det(),
            inverse: factor.llt.inverse(),
            root: factor.root,
        })
    }

    /// log det K = log det(I + L^T G^T W G L).
    pub(crate) fn log_det(&self) -> f64 {
        self.log_det
    }

    /// Whether observation `a`'s weight is below [`NEGLIGIBLE_WEIGHT`]: it gets no covariance
    /// (its row would be rounding error over a vanishing root; the likelihood's higher
    /// derivatives vanish with its curvature for every likelihood here, so the simplified
    /// Laplace terms lose nothing).
    fn negligible(&self, a: usize) -> bool {
        self.root[a] * self.root[a] < NEGLIGIBLE_WEIGHT
    }

    /// S_ab = Cov((G u)_a, (G u)_b) under the Laplace gaussian, from W^1/2 G S G^T W^1/2 =
    /// I - K^-1.
    pub(crate) fn observation_covariance(&self, a: usize, b: usize) -> f64 {
        if self.negligible(a) || self.negligible(b) {
            return 0.0;
        }
        let identity = if a == b { 1.0 } else { 0.0 };
        (identity - self.inverse[(a, b)]) / (self.root[a] * self.root[b])
    }

    /// S_ab for a from `columns.start` on and b in `columns` ((M - columns.start) x
    /// columns.len(): the block on and below the diagonal).
    pub(crate) fn observation_covariances(&self, columns: std::ops::Range<usize>) -> Mat<f64> {
        let start = columns.start;
        Mat::from_fn(self.root.len() - start, columns.len(), |a, j| {
            self.observation_covariance(start + a, start + j)
        })
    }

    /// S_aa for every observation a.
    pub(crate) fn observation_variances(&self) -> Vec<f64> {
        (0..self.root.len())
            .map(|a| self.observation_covariance(a, a))
            .collect()
    }

    /// Every cell's variance under the Laplace gaussian, visiting each observation `a` with
    /// `cov[n]` = Cov((G u)_a, u_n) for every cell n on the way.
    ///
    /// With S = C - C G^T W^1/2 K^-1 W^1/2 G C and W^1/2 G C G^T W^1/2 = K - I, S G^T W^1/2 =
    /// C G^T W^1/2 K^-1: its column a, y_a = C G^T (W^1/2 K^-1 e_a), is w_a^1/2 times the
    /// covariances, and diag S = diag C - sum_a w_a^1/2 y_a * (C G^T e_a) elementwise. Two
    /// products with C per observation, made for [`BATCH`] observations at once
    /// ([`Prior::apply_covariance_batch`]: matrix-matrix products on a Kronecker prior).
    pub(crate) fn cell_variances(
        &self,
        prior: &dyn Prior,
        observed: Observed,
        mut visit: impl FnMut(usize, &[f64]),
    ) -> Vec<f64> {
        let (m, n) = (self.root.len(), prior.cells());
        let mut variance: Vec<f64> = (0..n).map(|c| prior.covariance(c, c)).collect();
        let mut weighted = vec![0.0; m];
        let (mut units, mut rows) = (vec![0.0; n * BATCH], vec![0.0; n * BATCH]);
        let (mut spread, mut covariances) = (vec![0.0; n * BATCH], vec![0.0; n * BATCH]);
        for start in (0..m).step_by(BATCH) {
            let count = BATCH.min(m - start);
            for (j, a) in (start..start + count).enumerate() {
                weighted.fill(0.0);
                weighted[a] = 1.0;
                observed.scatter(&weighted, &mut units[j * n..(j + 1) * n]);
                for (b, w) in weighted.iter_mut().enumerate() {
                    *w = self.root[b] * self.inverse[(b, a)];
                }
                observed.scatter(&weighted, &mut spread[j * n..(j + 1) * n]);
            }
            prior.apply_covariance_batch(&units, &mut rows, count);
            prior.apply_covariance_batch(&spread, &mut covariances, count);
            for (j, a) in (start..start + count).enumerate() {
                let (row, covariance) = (
                    &rows[j * n..(j + 1) * n],
                    &mut covariances[j * n..(j + 1) * n],
                );
                let root = self.root[a];
                for ((v, &y), &g) in variance.iter_mut().zip(covariance.iter()).zip(row) {
                    *v -= root * y * g;
                }
                let scale = if self.negligible(a) { 0.0 } else { 1.0 / root };
                covariance.iter_mut().for_each(|y| *y *= scale);
                visit(a, covariance);
            }
        }
        variance.iter_mut().for_each(|v| *v = v.max(0.0));
        variance
    }
}

/// Observations whose covariances with every cell [`ObservationInverse::cell_variances`] makes
/// together.
const BATCH: usize = 32;

/// The exact log-determinant of I + L^T G^T W G L in observation space (without the variances:
/// M^3 / 3 operations).
pub(crate) fn observation_log_det(
    prior: &dyn Prior,
    observed: Observed,
    weights: &[f64],
) -> Result<f64, LaplaceError> {
    Ok(ObservationFactor::new(prior, observed, weights)?.log_det())
}

/// The exact variances and log-determinant in observation space.
pub(crate) fn observation_space(
    prior: &dyn Prior,
    observed: Observed,
    weights: &[f64],
) -> Result<Spread, LaplaceError> {
    let factor = ObservationFactor::new(prior, observed, weights)?;
    let (root, r) = (&factor.root, factor.llt.L());
    let m = observed.len();
    let n = prior.cells();
    let mut variance = vec![0.0; n];
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let mut block = Mat::from_fn(m, end - start, |a, j| {
            root[a] * observed.cross_covariance(prior, a, start + j)
        });
        solve_lower_triangular_in_place(r, block.as_mut(), Par::Seq);
        for j in 0..end - start {
            let cell = start + j;
            let explained: f64 = (0..m).map(|a| block[(a, j)] * block[(a, j)]).sum();
            variance[cell] = (prior.covariance(cell, cell) - explained).max(0.0);
        }
    }
    Ok(Spread {
        variance,
        log_det: factor.log_det(),
    })
}

/// The low-rank variances and log-determinant from the misfit Hessian's Ritz pairs (the first
/// `pairs.values.len()` are used).
pub(crate) fn low_rank(prior: &dyn Prior, pairs: &RitzPairs) -> Spread {
    let n = prior.cells();
    let mut variance: Vec<f64> = (0..n).map(|c| prior.covariance(c, c)).collect();
    let mut lv = vec![0.0; n];
    let mut scratch = vec![0.0; prior.scratch_len()];
    let mut log_det = 0.0;
    for (k, &d) in pairs.values.iter().enumerate() {
        let d = d.max(0.0);
        log_det += d.ln_1p();
        let v: Vec<f64> = pairs.vectors.col(k).iter().copied().collect();
        prior.apply_sqrt(&v, &mut lv, &mut scratch);
        let share = d / (1.0 + d);
        for (var, &x) in variance.iter_mut().zip(&lv) {
            *var -= share * x * x;
        }
    }
    variance.iter_mut().for_each(|v| *v = v.max(0.0));
    Spread { variance, log_det }
}

/// The weight (likelihood curvature) below which [`ObservationInverse`] gives an observation no
/// covariance.
pub(crate) const NEGLIGIBLE_WEIGHT: f64 = 1e-12;
