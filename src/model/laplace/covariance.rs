//! The Laplace gaussian's covariances at one fit, as the simplified Laplace corrections need them
//! ([`LaplaceCovariance`]): from the exact inverse of the observation-space matrix
//! ([`ObservationInverse`], M^3 operations) or in the prior's leading spectral coordinates
//! ([`ReducedCovariance`], about r M^2 / 2 + 2 r^2 M for r coordinates kept, exact to
//! [`DROPPED_EVIDENCE`] nats of evidence), whichever is cheaper where both apply.
//!
//! The choice ([`LaplaceCovariance::new`]): the reduced form when the prior has a spectral root
//! and its rank is at most half the observations (where its cost is at most about half the
//! inverse's), or when there are more observations than the inverse takes and the reduced form
//! fits in [`super::reduced::MAX_REDUCED_VALUES`]; else the inverse up to [`super::MAX_EXACT_OBSERVATIONS`]
//! observations; else none (the gaussian marginals stand).

use std::ops::Range;

use faer::Mat;

use super::LaplaceSettings;
use super::error::LaplaceError;
use super::reduced::{DROPPED_EVIDENCE, FieldPart, ReducedCovariance, Reduction};
use super::variance::ObservationInverse;
use crate::model::target::Target;

/// The Laplace gaussian's covariances at one fit.
#[derive(Debug)]
pub(crate) enum LaplaceCovariance {
    Observation(ObservationInverse),
    Reduced(ReducedCovariance),
}

impl LaplaceCovariance {
    /// The cheaper form at the likelihood curvatures `weights` (module docs), `None` when neither
    /// applies.
    pub(crate) fn new(
        target: &Target,
        weights: &[f64],
        settings: &LaplaceSettings,
    ) -> Result<Option<Self>, LaplaceError> {
        let (prior, observed) = (target.prior, target.observed);
        let m = target.observations();
        let exact = exact_inverse_available(target, settings);
        if let Some(reduction) = Reduction::new(prior, observed, weights, DROPPED_EVIDENCE) {
            let fits = reduction.fits(target.cells(), m);
            if fits && (2 * reduction.rank() <= m || !exact) {
                let reduced = reduction.covariance(prior, observed, weights)?;
                return Ok(Some(Self::Reduced(reduced)));
            }
        }
        if !exact {
            return Ok(None);
        }
        let inverse = ObservationInverse::new(prior, observed, weights)?;
        Ok(Some(Self::Observation(inverse)))
    }

    /// log det(I + L^T G^T W G L) (the reduced form's less at most twice its bound).
    pub(crate) fn log_det(&self) -> f64 {
        match self {
            Self::Observation(inverse) => inverse.log_det(),
            Self::Reduced(reduced) => reduced.log_det(),
        }
    }

    /// Cov((G u)_a, (G u)_b) for a from `columns.start` on and b in `columns`
    /// ((M - columns.start) x columns.len(): the block on and below the diagonal).
    pub(crate) fn observation_covariances(&self, columns: Range<usize>) -> Mat<f64> {
        match self {
            Self::Observation(inverse) => inverse.observation_covariances(columns),
            Self::Reduced(reduced) => reduced.observation_covariances(columns),
        }
    }

    /// Var((G u)_a) for every observation a.
    pub(crate) fn observation_variances(&self) -> Vec<f64> {
        match self {
            Self::Observation(inverse) => inverse.observation_variances(),
            Self::Reduced(reduced) => reduced.observation_variances(),
        }
    }

    /// Every cell's variance of the field `part` of `target`, visiting each observation with its
    /// covariances with every cell on the way.
    pub(crate) fn cell_variances(
        &self,
        target: &Target,
        part: FieldPart,
        visit: impl FnMut(usize, &[f64]),
    ) -> Vec<f64> {
        match self {
            Self::Observation(inverse) => {
                let prior = match part {
                    FieldPart::Whole => target.prior,
                    FieldPart::Spatial => target
                        .prior
                        .spatial()
                        .expect("the spatial field's covariances are asked for with covariates"),
                };
                inverse.cell_variances(prior, target.observed, visit)
            }
            Self::Reduced(reduced) => reduced.cell_variances(part, visit),
        }
    }
}

/// Whether `target` has few enough observations for the exact inverse ([`ObservationInverse`]):
/// at most `settings.max_exact_observations`, and never more than
/// [`super::MAX_EXACT_OBSERVATIONS`].
pub(crate) fn exact_inverse_available(target: &Target, settings: &LaplaceSettings) -> bool {
    target.observations()
        <= settings
            .max_exact_observations
            .min(super::MAX_EXACT_OBSERVATIONS)
}
