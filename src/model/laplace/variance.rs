//! The Laplace covariance's cell variances and log-determinant, two ways.
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
        let k = Mat::from_fn(m, m, |a, b| {
            let c = root[a] * root[b] * observed.covariance(prior, a, b);
            if a == b { 1.0 + c } else { c }
        });
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

    /// The Laplace gaussian's covariance of the observations' values, S_ab = Cov((G u)_a, (G
    /// u)_b), from W^1/2 G S G^T W^1/2 = I - K^-1 (M^3 operations; an observation of negligible
    /// weight gets 0, as in [`observation_cell_covariances`]).
    pub(crate) fn observation_covariance(&self) -> Mat<f64> {
        use faer::linalg::solvers::DenseSolveCore;
        let inverse = self.llt.inverse();
        let root = &self.root;
        let negligible = |a: usize| root[a] * root[a] < NEGLIGIBLE_WEIGHT;
        Mat::from_fn(root.len(), root.len(), |a, b| {
            if negligible(a) || negligible(b) {
                0.0
            } else {
                let identity = if a == b { 1.0 } else { 0.0 };
                (identity - inverse[(a, b)]) / (root[a] * root[b])
            }
        })
    }
}

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

/// The exact covariances under the Laplace gaussian of each observation's value (G u)_a with
/// each cell u_n, a block of cells at a time: `visit(start, block)` with `block[(a, j)]` =
/// Cov((G u)_a, u_(start + j)). From W^1/2 G S = K^-1 W^1/2 G C (S = C - C G^T W^1/2 K^-1 W^1/2
/// G C and W^1/2 G C G^T W^1/2 = K - I): two triangular solves per block, then a division by
/// w_a^1/2. An observation of weight below [`NEGLIGIBLE_WEIGHT`] gets 0 (its row would be
/// rounding error over a vanishing root; the likelihood's higher derivatives vanish with its
/// curvature for every likelihood here, so the simplified Laplace terms lose nothing).
pub(crate) fn observation_cell_covariances(
    prior: &dyn Prior,
    observed: Observed,
    weights: &[f64],
    mut visit: impl FnMut(usize, &Mat<f64>),
) -> Result<(), LaplaceError> {
    let factor = ObservationFactor::new(prior, observed, weights)?;
    let (root, r) = (&factor.root, factor.llt.L());
    let m = observed.len();
    let n = prior.cells();
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let mut block = Mat::from_fn(m, end - start, |a, j| {
            root[a] * observed.cross_covariance(prior, a, start + j)
        });
        solve_lower_triangular_in_place(r, block.as_mut(), Par::Seq);
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(
            r.transpose(),
            block.as_mut(),
            Par::Seq,
        );
        for a in 0..m {
            let scale = if root[a] * root[a] < NEGLIGIBLE_WEIGHT {
                0.0
            } else {
                1.0 / root[a]
            };
            for j in 0..end - start {
                block[(a, j)] *= scale;
            }
        }
        visit(start, &block);
    }
    Ok(())
}

/// The weight (likelihood curvature) below which [`observation_cell_covariances`] gives an
/// observation no covariance.
pub(crate) const NEGLIGIBLE_WEIGHT: f64 = 1e-12;
