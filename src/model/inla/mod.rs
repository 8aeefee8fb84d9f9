//! The nested Laplace approximation of INLA (Rue, Martino & Chopin 2009) over the inferred
//! hyperparameters theta (length scale, variance, mean; [`crate::model::hyper`]).
//!
//! This module owns the hyperparameters' side of the scheme; the cells' mixture and the run's
//! outputs are the approximation kind's ([`crate::sampler::approximation`]):
//!
//! - [`posterior`]: log p~(theta | y) = log p(theta) + log p~(y | theta) in unconstrained
//!   coordinates (the prior's Jacobian included), the second term the Laplace log evidence of
//!   the field at theta ([`crate::model::laplace`]), Newton warm-started from a nearby theta;
//! - [`mode`]: its mode by BFGS with central finite-difference gradients, and the Hessian
//!   there by central finite differences, both with step [`InlaSettings::step`];
//! - [`grid`]: the z-parametrised grid theta(z) = mode + V Lambda^-1/2 z (H = V Lambda V^T the
//!   negative Hessian), explored along each axis in steps of [`InlaSettings::delta_z`] until
//!   log p~ drops more than [`InlaSettings::threshold`] below the mode, then the full product
//!   of those axis points, keeping the points within the threshold, then grown by flood fill
//!   until every neighbour of a kept point is below the threshold (a posterior that bends away
//!   from the Hessian's ellipse); weights proportional to exp(log p~) (equal cell volumes in z);
//!   [`design`]: the central composite design instead, from three hyperparameters;
//! - [`summary`]: the hyperparameters' posterior mean, sd and 5 % / 95 % quantiles on the
//!   natural scale from the weighted points (on the design and for the mode alone from the
//!   asymmetric gaussian of [`asymmetric`]), and the model's log evidence from the grid.
//!
//! With no hyperparameter inferred the grid is the single point theta = () and the scheme is the
//! Laplace approximation.

pub(crate) mod asymmetric;
pub(crate) mod design;
pub(crate) mod grid;
pub(crate) mod mode;
pub(crate) mod posterior;
pub(crate) mod summary;

pub use grid::{Grid as HyperGrid, TAIL_FALL, TAIL_WARNING_FALL, TAIL_Z, explore};
pub use posterior::{Evaluation, HyperProblem};
pub use summary::{HyperMarginal, log_evidence, marginals};

use crate::model::laplace::LaplaceSettings;

crate::closed_names! {
    /// How INLA approximates each cell's marginal at a grid point (`sampler.inla_strategy`,
    /// R-INLA's words): the Laplace gaussian, or the gaussian corrected in location and skewness
    /// by the simplified Laplace approximation ([`crate::model::laplace::skew`]).
    pub enum InlaStrategy {
        /// The Laplace approximation's gaussian marginals.
        Gaussian = "gaussian",
        /// Skew-normal marginals from the simplified Laplace approximation.
        SimplifiedLaplace = "simplified-laplace",
    }
}

crate::closed_names! {
    /// How INLA integrates over the hyperparameters (`sampler.inla_integration`, R-INLA's
    /// `int.strategy`): the z-grid ([`grid`]), the central composite design ([`design`]), or the
    /// mode alone (empirical Bayes).
    #[derive(Default)]
    pub enum InlaIntegration {
        /// The grid up to two inferred hyperparameters, the design from three (R-INLA's rule).
        #[default]
        Auto = "auto",
        /// The z-grid to the threshold, grown by flood fill.
        Grid = "grid",
        /// The central composite design: 2 d + 2^d points around the mode (fewer at d = 5).
        Ccd = "ccd",
        /// The mode alone: the cells' marginals at the most probable hyperparameters, their
        /// uncertainty left out.
        EmpiricalBayes = "eb",
    }
}

impl InlaIntegration {
    /// The scheme `self` means for `d` inferred hyperparameters: never [`Self::Auto`]; the grid
    /// for one (the design needs two or more).
    pub(crate) fn resolve(self, d: usize) -> Self {
        match self {
            Self::Auto if d <= 2 => Self::Grid,
            Self::Auto => Self::Ccd,
            Self::Ccd if d < 2 => Self::Grid,
            other => other,
        }
    }
}

impl Default for InlaStrategy {
    /// The simplified Laplace approximation (docs/hyperparameters.md, "Each cell's marginal").
    fn default() -> Self {
        Self::SimplifiedLaplace
    }
}

/// The constants of the scheme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InlaSettings {
    pub(crate) laplace: LaplaceSettings,
    /// How the hyperparameters are integrated over.
    pub(crate) integration: InlaIntegration,
    /// The central finite-difference step in unconstrained coordinates (log length scale, log
    /// variance, mean), for the mode search's gradient and the Hessian at the mode.
    pub(crate) step: f64,
    /// The grid's spacing in z (standardised units: z = 1 is one posterior sd under the
    /// Hessian's gaussian).
    pub(crate) delta_z: f64,
    /// The grid keeps the points whose log p~ is at most this far below the mode's.
    pub(crate) threshold: f64,
    /// The mode search stops when every finite-difference partial derivative of log p~ is
    /// below this in absolute value.
    pub(crate) gradient_tolerance: f64,
    /// BFGS iterations at most.
    pub(crate) max_iterations: usize,
    /// Steps from the mode along one axis at most, for the axis walk and the flood fill (a
    /// posterior wider than that along an axis is cut there, with a warning).
    pub(crate) max_axis_steps: usize,
}

/// The finite-difference step: log p~ is evaluated to about 1e-10 (Newton's RMS gradient
/// tolerance; the exact log-determinant), so a second difference has a rounding error near
/// 1e-10 / 0.01^2 = 1e-6 and a truncation error of h^2 / 12 times the fourth derivative.
pub(crate) const FINITE_DIFFERENCE_STEP: f64 = 0.01;
/// INLA's grid spacing (Rue, Martino & Chopin 2009).
pub(crate) const DELTA_Z: f64 = 1.0;
/// The log-density drop where the grid stops. Rue, Martino & Chopin use 2.5, which on a
/// gaussian keeps |z| <= 2 along the axes and under-estimates each hyperparameter's variance by
/// 7.6 % (sd 3.9 %); 7.5 keeps |z| <= 3 along the axes (sd -0.2 % on a gaussian) and the corners
/// of the product grid where the posterior is skewed. Measured on the 5 x 5 gaussian problem of
/// the tests against a dense quadrature (length scale and variance, log-normal priors): 2.5
/// gives sds 14 % low from 17 points; 5, 4 % low from 32; 7.5, 0.4 % low from 52 points (118
/// Laplace fits in all); 10, 0.1 % from 70 points (142 fits).
pub(crate) const THRESHOLD: f64 = 7.5;

impl Default for InlaSettings {
    fn default() -> Self {
        Self {
            laplace: LaplaceSettings::default(),
            integration: InlaIntegration::default(),
            step: FINITE_DIFFERENCE_STEP,
            delta_z: DELTA_Z,
            threshold: THRESHOLD,
            gradient_tolerance: 1e-3,
            max_iterations: 200,
            max_axis_steps: 12,
        }
    }
}

impl InlaSettings {
    /// The defaults with `strategy`: the simplified Laplace strategy corrects the cells'
    /// marginals and the evidence the hyperparameters are weighed by
    /// ([`crate::model::laplace::skew::Correction`]).
    pub(crate) fn for_strategy(strategy: InlaStrategy) -> Self {
        let mut settings = Self::default();
        settings.laplace.corrections = strategy == InlaStrategy::SimplifiedLaplace;
        settings
    }

    /// [`Self::for_strategy`] integrated by `integration`.
    pub(crate) fn for_run(strategy: InlaStrategy, integration: InlaIntegration) -> Self {
        Self {
            integration,
            ..Self::for_strategy(strategy)
        }
    }
}

/// The scheme failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum InlaError {
    #[error("log p(theta | data) cannot be evaluated at the start theta = {theta:?}: {reason}")]
    Start { theta: Vec<f64>, reason: String },
    #[error(
        "the mode of log p(theta | data) was not found in {iterations} BFGS iterations \
         (largest |partial derivative| {gradient:.2e}, tolerance {tolerance:.0e})"
    )]
    ModeNotFound {
        iterations: usize,
        gradient: f64,
        tolerance: f64,
    },
    #[error(
        "log p(theta | data) cannot be evaluated at theta = {theta:?} next to the mode, for its \
         finite differences: {reason}"
    )]
    Differences { theta: Vec<f64>, reason: String },
    #[error(
        "the Hessian of log p(theta | data) at the mode is not negative definite (eigenvalue \
         {eigenvalue:.3e} of its negative): the hyperparameters' posterior has no proper peak \
         there; use a more informative prior"
    )]
    NotConcave { eigenvalue: f64 },
    #[error("the cells' marginals at the grid point theta = {theta:?} failed: {reason}")]
    Marginals { theta: Vec<f64>, reason: String },
}

#[cfg(test)]
mod tests;
