//! What an approximation (kind `laplace` or `inla`) computed besides the marginals: a run's
//! output carries it ([`super::driver::RunOutput`]); [`super::approximation`] computes it.

use crate::model::hyper::HyperName;
use crate::model::inla::{HyperGrid, HyperMarginal};
use crate::model::laplace::SdMethod;
use crate::model::laplace::skew::NoCorrection;

/// What an approximation computed besides the marginals.
#[derive(Debug, Clone, PartialEq)]
pub struct Approximation {
    /// The Laplace log marginal likelihood (the likelihood's dropped constants dropped).
    pub log_evidence: f64,
    pub(crate) sd_method: SdMethod,
    /// Why it failed, if it did (the marginals are then not numbers).
    pub error: Option<String>,
    /// INLA's grid and the hyperparameters' posterior (kind inla).
    pub inla: Option<InlaOutcome>,
    /// Why the cells' marginals are the Laplace gaussians although `sampler.inla_strategy` asked
    /// for the simplified Laplace correction (at some grid point, if not all).
    pub(crate) uncorrected: Option<NoCorrection>,
    /// How far the simplified Laplace correction moved each cell's marginal at the mode of the
    /// hyperparameters (none when no correction was made).
    pub(crate) marginal_check: Option<super::marginal_check::MarginalCheck>,
}

/// What an INLA run found about the hyperparameters.
#[derive(Debug, Clone, PartialEq)]
pub struct InlaOutcome {
    /// The inferred hyperparameters, in the grid points' theta order.
    pub(crate) names: Vec<HyperName>,
    pub grid: HyperGrid,
    pub marginals: Vec<HyperMarginal>,
    /// The importance-sampling check of the Laplace evidence at the heaviest grid points (none
    /// when the run was given no streams).
    pub(crate) laplace_check: Option<super::inla_check::LaplaceCheck>,
}
