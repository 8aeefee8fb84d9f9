//! The exact posterior of the gaussian model, the reference every sampler is checked against.
//!
//! With v = G u + e, e ~ N(0, s^2 I) and u ~ N(0, C), the posterior is N(m, S) with
//! S = (C^-1 + G^T G / s^2)^-1 and m = S G^T v / s^2. Inverting C is hopeless for long length
//! scales, so the Kalman (observation-space) form is used: with K = G C G^T + s^2 I (M x M),
//! m = C G^T K^-1 v and diag S = diag C - diag(C G^T K^-1 G C). Only K is formed densely (M^2);
//! C G^T alpha is one Kronecker product, and the variances are accumulated block by block of
//! cells, so the N x N covariance is never formed. C is the prior's jittered covariance, the one
//! the samplers use.

use faer::linalg::solvers::Solve;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, Par, Side};

use super::data::Observations;
use super::prior::Prior;

/// The largest M the exact posterior is computed for: K takes 8 M^2 bytes (50 MB at 2500) and
/// the variances cost M^2 N multiply-adds.
pub(crate) const MAX_EXACT_OBSERVATIONS: usize = 2500;

/// Cells per block when accumulating the posterior variances.
const VARIANCE_BLOCK: usize = 256;

/// Posterior mean and standard deviation per cell.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactPosterior {
    pub mean: Vec<f64>,
    pub sd: Vec<f64>,
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ExactError {
    #[error(
        "the exact posterior needs an M x M solve; M = {0} is above the limit {MAX_EXACT_OBSERVATIONS}"
    )]
    TooManyObservations(usize),
    #[error("G C G^T + s^2 I is not positive definite (noise sd {0:?})")]
    NotPositiveDefinite(f64),
}

/// The exact gaussian posterior for `observed` with noise sd `noise_sd` under the field
/// u = mean + f, f ~ `prior`.
pub fn gaussian_posterior(
    prior: &dyn Prior,
    mean: f64,
    observed: &Observations,
    noise_sd: f64,
) -> Result<ExactPosterior, ExactError> {
    let m = observed.len();
    if m > MAX_EXACT_OBSERVATIONS {
        return Err(ExactError::TooManyObservations(m));
    }
    let grid = prior.grid();
    let obs_cells = &observed.cells;
    let cov = |a: usize, b: usize| prior.covariance(a, b);

    let noise_var = noise_sd * noise_sd;
    let k = Mat::from_fn(m, m, |a, b| {
        cov(obs_cells[a], obs_cells[b]) + if a == b { noise_var } else { 0.0 }
    });
    let llt = k
        .llt(Side::Lower)
        .map_err(|_| ExactError::NotPositiveDefinite(noise_sd))?;

    // mean = m0 + C G^T K^-1 (v - m0)
    let v = Mat::from_fn(m, 1, |a, _| observed.values[a] - mean);
    let alpha = llt.solve(&v);
    let mut scattered = vec![0.0; grid.cells()];
    for (a, &c) in observed.cells.iter().enumerate() {
        scattered[c] = alpha[(a, 0)];
    }
    let mut posterior_mean = vec![0.0; grid.cells()];
    prior.apply_covariance(&scattered, &mut posterior_mean);
    if mean != 0.0 {
        for u in posterior_mean.iter_mut() {
            *u += mean;
        }
    }

    // diag S = diag C - |R^-1 G C e_n|^2, with K = R R^T.
    let r = llt.L();
    let mut sd = vec![0.0; grid.cells()];
    for start in (0..grid.cells()).step_by(VARIANCE_BLOCK) {
        let end = (start + VARIANCE_BLOCK).min(grid.cells());
        let mut block = Mat::from_fn(m, end - start, |a, k| cov(obs_cells[a], start + k));
        solve_lower_triangular_in_place(r, block.as_mut(), Par::Seq);
        for k in 0..end - start {
            let n = start + k;
            let prior_var = cov(n, n);
            let explained: f64 = (0..m).map(|a| block[(a, k)] * block[(a, k)]).sum();
            sd[n] = (prior_var - explained).max(0.0).sqrt();
        }
    }
    Ok(ExactPosterior {
        mean: posterior_mean,
        sd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::prior::{KroneckerPrior, dense_kernel_matrix};
    use crate::model::spec::KernelSpec;
    use faer::linalg::solvers::DenseSolveCore;

    /// On a small grid the Kalman form must equal the information form computed densely:
    /// S = (C^-1 + G^T G / s^2)^-1, m = S G^T v / s^2.
    #[test]
    fn kalman_form_equals_the_dense_information_form() {
        let grid = Grid::new(5);
        let kernel = KernelSpec::squared_exponential(0.4, 1.3);
        let prior = KroneckerPrior::new(grid, kernel).unwrap();
        let observed = Observations {
            cells: vec![0, 3, 7, 12, 13, 21, 24],
            values: vec![0.5, -1.0, 0.2, 1.5, 0.3, -0.7, 0.9],
            trials: Vec::new(),
        };
        let s = 0.7;
        let exact = gaussian_posterior(&prior, 0.0, &observed, s).unwrap();

        let c = dense_kernel_matrix(grid, kernel);
        let n = grid.cells();
        let mut precision = c.llt(Side::Lower).unwrap().inverse();
        let mut gtv = Mat::<f64>::zeros(n, 1);
        for (a, &cell) in observed.cells.iter().enumerate() {
            precision[(cell, cell)] += 1.0 / (s * s);
            gtv[(cell, 0)] = observed.values[a] / (s * s);
        }
        let cov = precision.llt(Side::Lower).unwrap().inverse();
        let mean = &cov * &gtv;
        for k in 0..n {
            assert!((exact.mean[k] - mean[(k, 0)]).abs() < 1e-8, "mean at {k}");
            assert!((exact.sd[k] - cov[(k, k)].sqrt()).abs() < 1e-8, "sd at {k}");
        }
    }
}
