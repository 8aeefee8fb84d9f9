//! The Laplace approximation of the posterior of the whitened field, p(xi | data) ~ N(xi^, Gamma),
//! as INLA uses it (Rue, Martino & Chopin 2009) and as the proposal of generalised pCN / DILI
//! (Cui, Law & Marzouk 2016) needs it.
//!
//! This module owns: the mode xi^ of the log posterior in whitened coordinates by damped inexact
//! Newton ([`newton`]) from the default start ([`default_start`]), with every linear solve by
//! conjugate gradients ([`cg`]) on the Hessian H = I + L^T G^T W G L applied as a product
//! ([`hessian`]); the dominant eigenpairs of the misfit Hessian L^T G^T W G L by Lanczos
//! ([`crate::model::lanczos`]); the approximate posterior sd of every cell and the Laplace log
//! marginal likelihood ([`variance`]). No N x N matrix is formed anywhere.
//!
//! - gaussian: the posterior is gaussian, so the mode is the exact posterior mean and Gamma the
//!   exact covariance (one Newton step, solved by CG to the gradient tolerance).
//! - poisson and probit: log-concave likelihoods, so the negative log posterior is strictly
//!   convex and the damped Newton iteration converges from any start.
//!
//! Cell sds: exact for M <= [`MAX_EXACT_OBSERVATIONS`] (observation-space Cholesky), else in the
//! prior's leading spectral coordinates ([`reduced`], exact to its bound) where the prior has a
//! cheap eigendecomposition, else from the dominant eigenpairs with a stated bound
//! ([`SdMethod`]).
//!
//! Log evidence: log p(data) ~ loglik(u^) - |xi^|^2 / 2 - log det(I + L^T G^T W G L) / 2, with the
//! likelihood's dropped constants dropped here too (so it is comparable with
//! [`crate::model::evidence`]'s Monte Carlo estimate on the same data), exact for gaussian.

pub(crate) mod cg;
pub(crate) mod covariance;
pub(crate) mod draw;
mod error;
pub(crate) mod hessian;
pub(crate) mod newton;
pub(crate) mod reduced;
pub(crate) mod skew;
pub(crate) mod variance;

pub use error::LaplaceError;
pub(crate) use hessian::MisfitHessian;
pub use newton::{NewtonReport, NewtonSettings, NewtonStep};

use crate::model::lanczos::{RitzPairs, lanczos, lanczos_above};
use crate::model::likelihood::Likelihood;
use crate::model::prior::leading_block::LeadingBlock;
use crate::model::target::Target;

/// The largest M for which the cell sds are computed exactly (an M x M Cholesky factor: 50 MB
/// at 2500, and M^2 N multiply-adds for the variances).
pub(crate) const MAX_EXACT_OBSERVATIONS: usize = 2500;

/// How the Laplace fit and its cell sds are computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceSettings {
    pub(crate) newton: NewtonSettings,
    /// Cell sds exactly up to this many observations, by low rank above.
    pub(crate) max_exact_observations: usize,
    /// The low-rank sds keep at most this many eigenpairs (Lanczos takes up to twice as many
    /// steps, bounded by memory: see [`lanczos_steps`]).
    pub(crate) max_rank: usize,
    /// The simplified Laplace corrections ([`skew::Correction`]): of the log evidence INLA's
    /// hyperparameter search and grid use, and of each cell's marginal, where they can be
    /// computed.
    pub(crate) corrections: bool,
    /// Above `max_exact_observations`, the cell sds and the evidence in the prior's leading
    /// spectral coordinates ([`reduced`], exact to its bound) where the prior has a cheap
    /// eigendecomposition and the form fits in memory, before the low-rank Lanczos estimate.
    pub(crate) spectral: bool,
}

impl Default for LaplaceSettings {
    fn default() -> Self {
        Self {
            newton: NewtonSettings::default(),
            max_exact_observations: MAX_EXACT_OBSERVATIONS,
            max_rank: 500,
            corrections: false,
            spectral: true,
        }
    }
}

/// The posterior mode and the curvature there.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceFit {
    /// xi^, whitened coordinates.
    pub(crate) mode: Vec<f64>,
    /// u^ = mean + L xi^.
    pub(crate) field: Vec<f64>,
    /// The log-likelihood at the mode.
    pub(crate) log_likelihood: f64,
    /// W: the likelihood's curvature at each observation at the mode.
    pub(crate) weights: Vec<f64>,
    pub newton: NewtonReport,
}

/// How the cell sds were computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SdMethod {
    /// Observation-space Cholesky, exact to rounding, or the prior's leading spectral
    /// coordinates ([`reduced`]), exact to its bound.
    Exact,
    /// From the `rank` dominant misfit eigenpairs: each cell's variance is over-estimated by at
    /// most `variance_share` of its prior variance, and the log-determinant under-estimated by at
    /// most `log_det_bound`.
    LowRank {
        rank: usize,
        variance_share: f64,
        log_det_bound: f64,
    },
}

/// The Laplace approximation's marginals and evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct LaplaceMarginals {
    /// The approximate posterior sd of every cell.
    pub(crate) sd: Vec<f64>,
    pub(crate) method: SdMethod,
    /// log det(I + L^T G^T W G L) at the mode.
    pub(crate) log_det: f64,
    /// The Laplace log marginal likelihood (the likelihood's dropped constants dropped).
    pub(crate) log_evidence: f64,
}

/// The Laplace approximation's gaussian marginal (mean, sd) of each covariate coefficient: beta_k
/// = s z_k with z_k a whitened coordinate, so its mean is s z^_k and its variance
/// s^2 (H^-1)_kk, one conjugate-gradient solve H v = e_k per coefficient (H = I + L^T G^T W G L
/// at the mode, applied by products). Empty when the model has no covariates.
pub(crate) fn coefficient_marginals(target: &Target, fit: &LaplaceFit) -> Vec<(f64, f64)> {
    let Some(covariates) = target.prior.covariates() else {
        return Vec::new();
    };
    let dim = target.dim();
    let first = dim - covariates.count();
    let mut hessian = MisfitHessian::new(target, fit.weights.clone());
    let s = covariates.prior_sd;
    (first..dim)
        .map(|k| {
            let mut unit = vec![0.0; dim];
            unit[k] = 1.0;
            let mut column = vec![0.0; dim];
            cg::solve(
                |x, out| hessian.apply(x, out),
                &unit,
                &mut column,
                1e-10,
                10 * dim,
            );
            (s * fit.mode[k], s * column[k].max(0.0).sqrt())
        })
        .collect()
}

/// The default Newton start: for counts the log-gamma normal approximation, a count y read as
/// a gaussian observation log(y + 1/2) of the log rate with variance 1 / (y + 1/2) (the half
/// keeps y = 0 finite), solved by weighted least squares under the prior; the prior mean xi = 0
/// otherwise (binomial too: its curvature is at most n / 4 per cell, so Newton's steps from the
/// prior mean stay moderate, and the damped iteration converges from any start). The start sits at or above log y in the cells that carry data, where the Poisson
/// Newton step is well behaved (from far below, exp(u) << y, the undamped step overshoots).
pub(crate) fn default_start(target: &Target) -> Vec<f64> {
    match target.likelihood {
        Likelihood::Poisson { counts, offsets } => counts_start(target, counts, offsets),
        _ => vec![0.0; target.dim()],
    }
}

fn counts_start(target: &Target, counts: &[f64], offsets: &[f64]) -> Vec<f64> {
    let weights: Vec<f64> = counts.iter().map(|c| c + 0.5).collect();
    let weighted: Vec<f64> = counts
        .iter()
        .zip(&weights)
        .zip(offsets)
        .map(|((&c, &w), offset)| w * ((c + 0.5).ln() - offset - target.mean))
        .collect();
    let mut scattered = vec![0.0; target.cells()];
    target.observed.scatter(&weighted, &mut scattered);
    let mut rhs = vec![0.0; target.dim()];
    let mut scratch = vec![0.0; target.prior.scratch_len()];
    target
        .prior
        .apply_sqrt_transpose(&scattered, &mut rhs, &mut scratch);
    let mut hessian = MisfitHessian::new(target, weights);
    let mut start = vec![0.0; target.dim()];
    let tolerance = 1e-6 * cg::norm(&rhs);
    cg::solve(
        |x, out| hessian.apply(x, out),
        &rhs,
        &mut start,
        tolerance,
        2_000,
    );
    start
}

impl LaplaceFit {
    /// Newton's method from [`default_start`].
    pub fn new(target: &Target, settings: &NewtonSettings) -> Result<Self, LaplaceError> {
        Self::from_start(target, default_start(target), settings)
    }

    /// Newton's method from `start` (whitened coordinates).
    pub(crate) fn from_start(
        target: &Target,
        start: Vec<f64>,
        settings: &NewtonSettings,
    ) -> Result<Self, LaplaceError> {
        let (point, newton) = newton::minimise(target, start, settings)?;
        let hessian = MisfitHessian::at_field(target, &point.field);
        Ok(Self {
            weights: hessian.weights().to_vec(),
            mode: point.xi,
            field: point.field,
            log_likelihood: point.log_likelihood,
            newton,
        })
    }

    /// The misfit Hessian at the mode, as a product.
    pub(crate) fn misfit_hessian<'t, 'a>(&self, target: &'t Target<'a>) -> MisfitHessian<'t, 'a> {
        MisfitHessian::new(target, self.weights.clone())
    }

    /// Ritz pairs of the misfit Hessian at the mode from `steps` Lanczos steps.
    pub(crate) fn eigenpairs(&self, target: &Target, steps: usize) -> RitzPairs {
        let mut hessian = self.misfit_hessian(target);
        lanczos(target.dim(), steps, |x, out| hessian.apply_misfit(x, out))
    }

    /// Ritz pairs of the misfit Hessian at the mode, Lanczos run until every eigenvalue >=
    /// `threshold` has converged to relative residual `relative` (at most `max_steps` steps).
    pub(crate) fn eigenpairs_above(
        &self,
        target: &Target,
        max_steps: usize,
        threshold: f64,
        relative: f64,
    ) -> RitzPairs {
        let mut hessian = self.misfit_hessian(target);
        lanczos_above(target.dim(), max_steps, threshold, relative, |x, out| {
            hessian.apply_misfit(x, out)
        })
    }

    /// The smallest block of the prior's leading spectral coordinates outside which the misfit
    /// Hessian at the mode has trace at most `leftover` ([`reduced::CurvatureShares::leading_block`]),
    /// where the prior offers one.
    pub(crate) fn leading_block(&self, target: &Target, leftover: f64) -> Option<LeadingBlock> {
        reduced::CurvatureShares::new(target.prior, target.observed, &self.weights)?
            .leading_block(leftover)
    }

    /// [`Self::eigenpairs_above`] for the misfit Hessian compressed to `block` (E^T H E): Ritz
    /// vectors in the block's k^2 coordinates.
    pub(crate) fn eigenpairs_above_in(
        &self,
        target: &Target,
        block: &LeadingBlock,
        max_steps: usize,
        threshold: f64,
        relative: f64,
    ) -> RitzPairs {
        let mut hessian = self.misfit_hessian(target);
        let (mut whitened, mut image) = (vec![0.0; target.dim()], vec![0.0; target.dim()]);
        let mut scratch = vec![0.0; block.scratch_len()];
        lanczos_above(block.dim(), max_steps, threshold, relative, |y, out| {
            block.expand(y, &mut whitened, &mut scratch);
            hessian.apply_misfit(&whitened, &mut image);
            block.project(&image, out, &mut scratch);
        })
    }

    /// The cell sds and the evidence.
    pub fn marginals(
        &self,
        target: &Target,
        settings: &LaplaceSettings,
    ) -> Result<LaplaceMarginals, LaplaceError> {
        let (spread, method) = if target.observations() <= settings.max_exact_observations {
            let spread = variance::observation_space(target.prior, target.observed, &self.weights)?;
            (spread, SdMethod::Exact)
        } else if let Some(spread) = self.reduced_spread(target, settings)? {
            (spread, SdMethod::Exact)
        } else {
            let steps = lanczos_steps(target.dim(), settings.max_rank);
            let mut pairs = self.eigenpairs(target, steps);
            let rank = pairs.converged_above(0.0, 1e-6).min(settings.max_rank);
            pairs.truncate(rank);
            let trace = self.misfit_hessian(target).trace();
            let tail = (trace - pairs.values.iter().sum::<f64>()).max(0.0);
            let spread = variance::low_rank(target.prior, &pairs);
            let method = SdMethod::LowRank {
                rank,
                variance_share: tail / (1.0 + tail),
                log_det_bound: tail,
            };
            (spread, method)
        };
        Ok(LaplaceMarginals {
            sd: spread.variance.iter().map(|v| v.sqrt()).collect(),
            method,
            log_det: spread.log_det,
            log_evidence: self.evidence_with(spread.log_det),
        })
    }

    /// The cell variances and log-determinant in the prior's leading spectral coordinates, when
    /// `settings` allows it and the prior has them within memory ([`reduced::Reduction`]).
    fn reduced_spread(
        &self,
        target: &Target,
        settings: &LaplaceSettings,
    ) -> Result<Option<variance::Spread>, LaplaceError> {
        let (prior, observed) = (target.prior, target.observed);
        let reduction = settings
            .spectral
            .then(|| {
                reduced::Reduction::new(prior, observed, &self.weights, reduced::DROPPED_EVIDENCE)
            })
            .flatten()
            .filter(|r| r.fits(target.cells(), target.observations()));
        let Some(reduction) = reduction else {
            return Ok(None);
        };
        let covariance = reduction.covariance(prior, observed, &self.weights)?;
        Ok(Some(variance::Spread {
            variance: covariance.variances(),
            log_det: covariance.log_det(),
        }))
    }

    /// The Laplace log marginal likelihood alone, equal to [`Self::marginals`]'s: for
    /// M <= `settings.max_exact_observations` from the observation-space Cholesky factor without
    /// the cell variances (M^3 / 3 operations instead of M^2 N), else through the marginals.
    pub fn log_evidence(
        &self,
        target: &Target,
        settings: &LaplaceSettings,
    ) -> Result<f64, LaplaceError> {
        if target.observations() <= settings.max_exact_observations {
            let log_det =
                variance::observation_log_det(target.prior, target.observed, &self.weights)?;
            Ok(self.evidence_with(log_det))
        } else {
            Ok(self.marginals(target, settings)?.log_evidence)
        }
    }

    /// loglik(u^) - |xi^|^2 / 2 - log det(I + L^T G^T W G L) / 2.
    pub(crate) fn evidence_with(&self, log_det: f64) -> f64 {
        self.log_likelihood - 0.5 * cg::dot(&self.mode, &self.mode) - 0.5 * log_det
    }

    /// The log det(I + L^T G^T W G L) behind `log_evidence`, a value [`Self::log_evidence`]
    /// returned for this fit: the inverse of the evidence's formula, so that a gaussian built
    /// from the fit ([`draw::LaplaceDraws`]) carries the normalisation the evidence used.
    pub(crate) fn log_det_behind(&self, log_evidence: f64) -> f64 {
        2.0 * (self.log_likelihood - 0.5 * cg::dot(&self.mode, &self.mode) - log_evidence)
    }
}

/// Lanczos steps for `rank` eigenpairs of a `dim`-dimensional operator: twice the rank plus 20,
/// at most `dim`, and at most 2^24 / dim (a 128 MiB basis).
pub(crate) fn lanczos_steps(dim: usize, rank: usize) -> usize {
    let memory = (1usize << 24) / dim.max(1);
    (2 * rank + 20).min(memory.max(rank + 1)).min(dim).max(1)
}

#[cfg(test)]
mod tests;
