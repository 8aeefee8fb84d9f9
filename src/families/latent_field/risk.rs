//! Risk maps: what a log-Gaussian Cox process is published for. Per cell, the intensity per unit
//! area exp(u + offset) / cell area (posterior mean, 5 % and 95 % quantiles) and the posterior
//! probability that the relative risk exp(f) exceeds each threshold of `output.exceedance`
//! (computed along the chains by the driver, [`crate::sampler::RunRequest::exceedance`]).

use crate::sampler::RunOutput;

use super::hyper::quantile;

/// The intensity per unit area of every cell: posterior mean, 5 % and 95 % quantiles.
#[derive(Debug, Clone, PartialEq)]
pub struct Intensity {
    pub mean: Vec<f64>,
    /// From the stored draws (None for an approximation, which has none).
    pub q05: Option<Vec<f64>>,
    pub q95: Option<Vec<f64>>,
}

/// The intensity of a poisson run with log offset `offset` on cells of area `cell_area`; None
/// when the run has no expected counts (other likelihoods).
pub fn intensity(run: &RunOutput, offset: f64, cell_area: f64) -> Option<Intensity> {
    let expected = run.functional_mean.as_ref()?;
    let mean = expected.iter().map(|e| e / cell_area).collect();
    let quantiles = |p: f64| -> Option<Vec<f64>> {
        let cells = run.post_mean.len();
        (run.chains.iter().any(|c| !c.draws.is_empty())).then(|| {
            (0..cells)
                .map(|cell| {
                    let mut draws: Vec<f64> =
                        run.chains.iter().flat_map(|c| c.draws.cell(cell)).collect();
                    draws.sort_by(f64::total_cmp);
                    (quantile(&draws, p) + offset).exp() / cell_area
                })
                .collect()
        })
    };
    Some(Intensity {
        mean,
        q05: quantiles(0.05),
        q95: quantiles(0.95),
    })
}

/// The column of threshold `t`: `exceedance_<t>` with t as written (`{t:?}`: 1.5, 2.0).
pub fn exceedance_column(t: f64) -> String {
    format!("{t:?}")
}
