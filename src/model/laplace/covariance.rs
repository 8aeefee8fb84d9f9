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
//! observations; else none (the gaussian marginals stand). A caller may name a [`Basis`] to
//! prefer (INLA's evaluations name their centre's): it is taken where it applies and is at most
//! [`PREFERRED_SLACK`] larger than that choice, so that nearby fits share their coordinates.

use std::ops::Range;
use std::sync::Arc;

use faer::Mat;

use super::LaplaceSettings;
use super::error::LaplaceError;
use super::reduced::{CurvatureShares, DROPPED_EVIDENCE, FieldPart, ReducedCovariance, Reduction};
use super::variance::ObservationInverse;
use crate::model::target::Target;

/// The Laplace gaussian's covariances at one fit.
#[derive(Debug)]
pub(crate) enum LaplaceCovariance {
    Observation(ObservationInverse),
    Reduced(ReducedCovariance),
}

/// The coordinates a [`LaplaceCovariance`] was computed in: the observations' (the exact
/// inverse) or the prior's spectral coordinates kept. A fit near another one may be asked to
/// take the same ([`LaplaceCovariance::new`]'s `preferred`), so that finite differences of the
/// evidence difference one smooth function instead of stepping where the choice changes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Basis {
    Observations,
    Spectral(Arc<[usize]>),
}

impl LaplaceCovariance {
    /// The cheaper form at the likelihood curvatures `weights` (module docs), `None` when neither
    /// applies; the `preferred` basis instead wherever it applies here (the exact inverse, or
    /// spectral coordinates whose rest still moves the evidence by at most [`DROPPED_EVIDENCE`]
    /// nats and that fit in memory) and is not much larger than the fit's own choice
    /// ([`PREFERRED_SLACK`]: a basis carried from a far theta is not kept at its size).
    pub(crate) fn new(
        target: &Target,
        weights: &[f64],
        settings: &LaplaceSettings,
        preferred: Option<&Basis>,
    ) -> Result<Option<Self>, LaplaceError> {
        let m = target.observations();
        let shares = CurvatureShares::new(target.prior, target.observed, weights);
        let own = Form::cheaper(shares.as_ref(), target, settings);
        let own_size = own.as_ref().map_or(usize::MAX, |form| form.size(m));
        let allowed = own_size.saturating_add(own_size / PREFERRED_SLACK.0 + PREFERRED_SLACK.1);
        let preferred = preferred
            .and_then(|basis| Form::in_basis(basis, shares.as_ref(), target, settings))
            .filter(|form| form.size(m) <= allowed);
        let (prior, observed) = (target.prior, target.observed);
        Ok(match preferred.or(own) {
            Some(Form::Reduced(reduction)) => Some(Self::Reduced(
                reduction.covariance(prior, observed, weights)?,
            )),
            Some(Form::Inverse) => Some(Self::Observation(ObservationInverse::new(
                prior, observed, weights,
            )?)),
            None => None,
        })
    }

    /// The coordinates these covariances were computed in.
    pub(crate) fn basis(&self) -> Basis {
        match self {
            Self::Observation(_) => Basis::Observations,
            Self::Reduced(reduced) => Basis::Spectral(Arc::clone(reduced.kept())),
        }
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

/// How much larger than a fit's own choice a preferred basis may be: by an eighth plus 16
/// coordinates ([`Form::size`]). A finite difference's points choose within a few
/// coordinates of their centre, and take its basis.
const PREFERRED_SLACK: (usize, usize) = (8, 16);

/// A form chosen before it is computed.
enum Form {
    Reduced(Reduction),
    Inverse,
}

impl Form {
    /// The coordinates the form works in: r, or the M observations. (The inverse costs about
    /// what r = M / 2 costs, so a fit whose own choice sits just below that switch refuses a
    /// centre's inverse: there a finite difference may still mix the two forms.)
    fn size(&self, observations: usize) -> usize {
        match self {
            Self::Reduced(reduction) => reduction.rank(),
            Self::Inverse => observations,
        }
    }

    /// The cheaper form here (module docs), `None` when neither applies.
    fn cheaper(
        shares: Option<&CurvatureShares>,
        target: &Target,
        settings: &LaplaceSettings,
    ) -> Option<Self> {
        let m = target.observations();
        let exact = exact_inverse_available(target, settings);
        let reduction = shares
            .map(|shares| shares.dropping(DROPPED_EVIDENCE))
            .filter(|r| r.fits(target.cells(), m) && (2 * r.rank() <= m || !exact));
        match reduction {
            Some(reduction) => Some(Self::Reduced(reduction)),
            None => exact.then_some(Self::Inverse),
        }
    }

    /// The form in `basis`, when it applies here.
    fn in_basis(
        basis: &Basis,
        shares: Option<&CurvatureShares>,
        target: &Target,
        settings: &LaplaceSettings,
    ) -> Option<Self> {
        match basis {
            Basis::Observations => {
                exact_inverse_available(target, settings).then_some(Self::Inverse)
            }
            Basis::Spectral(kept) => shares?
                .keeping(kept, DROPPED_EVIDENCE)
                .filter(|r| r.fits(target.cells(), target.observations()))
                .map(Self::Reduced),
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
