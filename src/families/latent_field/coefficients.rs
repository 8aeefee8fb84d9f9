//! The posterior of the covariates' coefficients: mean, sd, 5 % and 95 % quantiles, bulk ESS and
//! R-hat of each, on the standardised scale the chains move in and on the covariate's own scale
//! (the `coef_<name>_<statistic>` columns of jobs.parquet), from the chains' stored draws
//! (`coefficients.parquet`; thinned as the cell draws, `output.cell_draws` per chain), or from
//! the Laplace approximation's gaussian marginals.

use crate::model::covariates::Covariates;
use crate::sampler::RunOutput;

use super::hyper::SeriesSummary;

/// One coefficient's posterior.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoefficientSummary {
    pub(crate) name: String,
    /// On the scale of the design (standardised unless `data.standardize = false`).
    pub(crate) posterior: SeriesSummary,
    /// The same divided by the covariate's sd: per unit of the raw covariate.
    pub(crate) raw: SeriesSummary,
}

/// The stored series of coefficient `index` of `count`, one per chain.
pub(crate) fn series(run: &RunOutput, index: usize, count: usize) -> Vec<Vec<f64>> {
    run.chains
        .iter()
        .map(|c| c.coefficients.series(index, count))
        .collect()
}

/// Every coefficient's posterior (empty without covariates).
pub(crate) fn summarize(
    covariates: Option<&Covariates>,
    run: &RunOutput,
) -> Vec<CoefficientSummary> {
    let Some(covariates) = covariates else {
        return Vec::new();
    };
    let count = covariates.count();
    covariates
        .names
        .iter()
        .enumerate()
        .filter_map(|(k, name)| {
            let posterior = match run.coefficient_marginals.get(k) {
                Some(&(mean, sd)) => gaussian(mean, sd),
                None => SeriesSummary::of(&series(run, k, count))?,
            };
            Some(CoefficientSummary {
                name: name.clone(),
                raw: posterior.scaled(1.0 / covariates.scales[k]),
                posterior,
            })
        })
        .collect()
}

/// The summary of a gaussian marginal N(mean, sd^2): no ESS, no R-hat.
fn gaussian(mean: f64, sd: f64) -> SeriesSummary {
    // The standard normal's 95 % quantile.
    let z = 1.644_853_626_951_472_2;
    SeriesSummary {
        mean,
        sd,
        q05: mean - z * sd,
        q95: mean + z * sd,
        ess_bulk: None,
        rhat: None,
    }
}
