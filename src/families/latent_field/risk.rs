//! Risk maps: what a log-Gaussian Cox process is published for. Per cell, the intensity per unit
//! area exp(u + offset) / cell area, offset the cell's log offset, so the expected count per
//! unit area (posterior mean and the quantiles of `output.quantiles`), and the posterior
//! probability that the relative risk exp(f - variance / 2) exceeds each threshold of
//! `output.exceedance` ([`exceedance_levels`]; computed along the chains by the driver,
//! [`crate::sampler::RunRequest::exceedance`]).

use crate::model::ModelSpec;
use crate::model::data::LogOffsets;
use crate::sampler::RunOutput;

use super::quantiles::Quantiles;

/// The intensity per unit area of every cell: posterior mean and quantiles.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Intensity {
    pub(crate) mean: Vec<f64>,
    /// Per cell, one per probability of `output.quantiles`, from the stored draws (None for an
    /// approximation, which has none).
    pub(crate) quantiles: Option<Vec<Vec<f64>>>,
}

/// The intensity of a poisson run whose cells have the log offsets `offsets` and the area
/// `cell_area`, with `quantiles`; None when the run has no expected counts (other likelihoods).
pub(crate) fn intensity(
    run: &RunOutput,
    offsets: &LogOffsets,
    cell_area: f64,
    quantiles: &Quantiles,
) -> Option<Intensity> {
    let expected = run.functional_mean.as_ref()?;
    let mean = expected.iter().map(|e| e / cell_area).collect();
    let cells = run.post_mean.len();
    let quantiles = (run.chains.iter().any(|c| !c.draws.is_empty())).then(|| {
        (0..cells)
            .map(|cell| {
                let mut draws: Vec<f64> =
                    run.chains.iter().flat_map(|c| c.draws.cell(cell)).collect();
                draws.sort_by(f64::total_cmp);
                let intensity = |u: f64| (u + offsets.at(cell)).exp() / cell_area;
                quantiles
                    .of_sorted(&draws)
                    .into_iter()
                    .map(intensity)
                    .collect()
            })
            .collect()
    });
    Some(Intensity { mean, quantiles })
}

/// The levels of the spatial field f whose exceedance gives the risk maps of `thresholds`: the
/// relative risk is exp(f - variance / 2), whose prior mean is 1 (the convention of Diggle et
/// al.'s lgcp: a risk of 2 is twice the rate the mean and the covariates predict on average),
/// so exp(f - variance / 2) > t is f > log t + variance / 2, here at the model's variance
/// (`model.variance`); chains that infer the variance (or the mean) judge each state at its own
/// ([`crate::sampler::driver::ExceedanceShift`], and the sites' `Spatial` likewise).
pub(crate) fn exceedance_levels(thresholds: &[f64], model: &ModelSpec) -> Vec<f64> {
    thresholds
        .iter()
        .map(|t| t.ln() + model.kernel.variance / 2.0)
        .collect()
}

/// The column of threshold `t`: `exceedance_<t>` with t as written (`{t:?}`: 1.5, 2.0).
pub(crate) fn exceedance_column(t: f64) -> String {
    format!("{t:?}")
}
