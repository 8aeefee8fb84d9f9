//! Dense kriging references: the gaussian posterior of the field at prediction sites given
//! values at fitted sites, with the hyperparameters, the noise sd and the mean fixed, formed as
//! n x n matrices over the sites (never over the grid's cells). Two covariances:
//!
//! - [`exact`]: the kernel between the sites' own positions, k(s, s') (classic kriging);
//! - [`on_grid`]: the covariance the grid gives them, H C H^T ([`SiteOperator::covariance`]):
//!   fieldmc's posterior at the sites when its sampler is exact.
//!
//! Their difference is the error of observing the field through the grid, which
//! [`KrigingError`] measures in exact posterior sds (the means) and relative terms (the sds).
//! For tests and `fieldmc bench kriging` only: cubic in the sites.

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};

use super::{SiteError, SiteOperator};
use crate::model::grid::Grid;
use crate::model::prior::Prior;
use crate::model::spec::KernelSpec;

/// The posterior of the field u = mean + f at each prediction site.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kriged {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
}

/// The fixed parts of a kriging problem: fitted sites and their values, the noise sd, the
/// constant mean, and the sites to predict at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Problem<'a> {
    pub(crate) fitted: &'a [(f64, f64)],
    pub(crate) values: &'a [f64],
    pub(crate) noise_sd: f64,
    pub(crate) mean: f64,
    pub(crate) predict: &'a [(f64, f64)],
}

impl Problem<'_> {
    /// The fitted sites, then the prediction sites: the order the covariances index.
    fn all_sites(&self) -> Vec<(f64, f64)> {
        self.fitted.iter().chain(self.predict).copied().collect()
    }
}

/// How far the grid's kriging is from the exact one over the prediction sites.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct KrigingError {
    /// max |mean_grid - mean_exact| / sd_exact.
    pub(crate) max_mean_error_in_sds: f64,
    /// Root mean square of the same.
    pub(crate) rms_mean_error_in_sds: f64,
    /// max |sd_grid / sd_exact - 1|.
    pub(crate) max_sd_relative_error: f64,
}

/// Classic kriging: the kernel between the sites' positions.
pub(crate) fn exact(kernel: KernelSpec, problem: &Problem<'_>) -> Option<Kriged> {
    let sites = problem.all_sites();
    let stretch = kernel.length_scale / kernel.length_scale_y.unwrap_or(kernel.length_scale);
    krige(problem, |a, b| {
        let ((xa, ya), (xb, yb)) = (sites[a], sites[b]);
        kernel.at_squared_distance((xa - xb).powi(2) + ((ya - yb) * stretch).powi(2))
    })
}

/// Kriging with the covariance the grid's prior gives the sites through the bilinear operator.
pub(crate) fn on_grid(
    grid: &Grid,
    prior: &dyn Prior,
    problem: &Problem<'_>,
) -> Result<Option<Kriged>, SiteError> {
    let operator = SiteOperator::bilinear(grid, &problem.all_sites())?;
    Ok(krige(problem, |a, b| operator.covariance(prior, a, b)))
}

/// The grid's answer against the exact one.
pub(crate) fn error(grid: &Kriged, exact: &Kriged) -> KrigingError {
    let mean_errors: Vec<f64> = grid
        .mean
        .iter()
        .zip(&exact.mean)
        .zip(&exact.sd)
        .map(|((g, e), s)| (g - e).abs() / s)
        .collect();
    let n = mean_errors.len().max(1) as f64;
    KrigingError {
        max_mean_error_in_sds: mean_errors.iter().copied().fold(0.0, f64::max),
        rms_mean_error_in_sds: (mean_errors.iter().map(|e| e * e).sum::<f64>() / n).sqrt(),
        max_sd_relative_error: grid
            .sd
            .iter()
            .zip(&exact.sd)
            .map(|(g, e)| (g / e - 1.0).abs())
            .fold(0.0, f64::max),
    }
}

/// The gaussian posterior at the prediction sites for a covariance `cov` over the fitted sites
/// then the prediction sites: K = cov(fitted) + noise^2 I, mean + k_*^T K^-1 (y - mean) and
/// cov(*, *) - k_*^T K^-1 k_*. `None` when K is not positive definite.
fn krige(problem: &Problem<'_>, cov: impl Fn(usize, usize) -> f64) -> Option<Kriged> {
    let (n, p) = (problem.fitted.len(), problem.predict.len());
    let noise = problem.noise_sd * problem.noise_sd;
    let k = Mat::from_fn(n, n, |a, b| cov(a, b) + if a == b { noise } else { 0.0 });
    let llt = k.llt(Side::Lower).ok()?;
    let residual = Mat::from_fn(n, 1, |a, _| problem.values[a] - problem.mean);
    let alpha = llt.solve(&residual);
    let cross = Mat::from_fn(n, p, |a, q| cov(a, n + q));
    let solved = llt.solve(&cross);
    let mean = (0..p)
        .map(|q| problem.mean + (0..n).map(|a| cross[(a, q)] * alpha[(a, 0)]).sum::<f64>())
        .collect();
    let sd = (0..p)
        .map(|q| {
            let explained: f64 = (0..n).map(|a| cross[(a, q)] * solved[(a, q)]).sum();
            (cov(n + q, n + q) - explained).max(0.0).sqrt()
        })
        .collect();
    Some(Kriged { mean, sd })
}
