//! The posterior of the inferred hyperparameters, summarised from every kept state of the chains
//! ([`crate::sampler::KeptSeries`]): mean, sd,
//! the quantiles of `output.quantiles`, bulk ESS and R-hat of each (the `hyper_<name>_<statistic>` columns of
//! jobs.parquet), and their series (hyper.parquet); or, for an INLA run, from its weighted grid
//! ([`crate::model::inla::summary`]: no ESS or R-hat).

use crate::diagnostics;
use crate::model::ModelSpec;
use crate::model::hyper::HyperName;
use crate::sampler::RunOutput;

use super::quantiles::{Quantiles, quantile};

/// One inferred hyperparameter's posterior, over every kept state of every chain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HyperSummary {
    pub(crate) name: HyperName,
    pub(crate) posterior: SeriesSummary,
}

/// The posterior of one scalar from its kept draws, chain by chain: mean and sd of the pooled
/// draws, their quantiles (`output.quantiles`), bulk ESS and R-hat.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SeriesSummary {
    pub(crate) mean: f64,
    pub(crate) sd: f64,
    /// One per probability of `output.quantiles`, in its order.
    pub(crate) quantiles: Vec<f64>,
    pub(crate) ess_bulk: Option<f64>,
    pub(crate) rhat: Option<f64>,
}

impl SeriesSummary {
    /// The summary of `chains`' draws, with `quantiles`; None when there are none.
    pub(crate) fn of(chains: &[Vec<f64>], quantiles: &Quantiles) -> Option<Self> {
        let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let mut pooled: Vec<f64> = chains.concat();
        if pooled.is_empty() {
            return None;
        }
        let n = pooled.len() as f64;
        let mean = pooled.iter().sum::<f64>() / n;
        let sd = (pooled.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        pooled.sort_by(f64::total_cmp);
        let summary = diagnostics::summarize(&views);
        Some(Self {
            mean,
            sd,
            quantiles: quantiles.of_sorted(&pooled),
            ess_bulk: summary.ess_bulk,
            rhat: summary.rhat,
        })
    }

    /// The summary of `factor` times the scalar (factor > 0): ESS and R-hat unchanged.
    pub(crate) fn scaled(self, factor: f64) -> Self {
        Self {
            mean: self.mean * factor,
            sd: self.sd * factor,
            quantiles: self.quantiles.iter().map(|q| q * factor).collect(),
            ..self
        }
    }

    /// The statistics in the order of [`super::schema::jobs::hyper_statistics`].
    pub(crate) fn statistics(&self) -> Vec<Option<f64>> {
        let mut statistics = vec![Some(self.mean), Some(self.sd)];
        statistics.extend(self.quantiles.iter().copied().map(Some));
        statistics.extend([self.ess_bulk, self.rhat]);
        statistics
    }
}

/// The kept series of the `index`-th of `count` inferred hyperparameters, one per chain.
pub(crate) fn series(run: &RunOutput, index: usize, count: usize) -> Vec<Vec<f64>> {
    run.chains
        .iter()
        .map(|c| c.kept.hyper_series(index, count))
        .collect()
}

/// The summary of every inferred hyperparameter (`names` in the chains' order), with
/// `quantiles`.
pub(crate) fn summarize(
    names: &[HyperName],
    run: &RunOutput,
    quantiles: &Quantiles,
) -> Vec<HyperSummary> {
    if let Some(inla) = run.approximation.as_ref().and_then(|a| a.inla.as_ref()) {
        return inla
            .marginals
            .iter()
            .map(|m| HyperSummary {
                name: m.name,
                posterior: SeriesSummary {
                    mean: m.mean,
                    sd: m.sd,
                    quantiles: quantiles
                        .probabilities()
                        .into_iter()
                        .map(|p| m.quantile(p))
                        .collect(),
                    ess_bulk: None,
                    rhat: None,
                },
            })
            .collect();
    }
    names
        .iter()
        .enumerate()
        .filter_map(|(index, &name)| {
            let posterior = SeriesSummary::of(&series(run, index, names.len()), quantiles)?;
            Some(HyperSummary { name, posterior })
        })
        .collect()
}

/// Hyperparameter `name` at `run`'s stored draws when the chains infer it (`None` when it is
/// fixed, or for an approximation): chain after chain, the first `per_chain` draws of each (the
/// fewest any chain stored), the order in which LOO and the sites pool their draws.
pub(crate) fn at_stored_draws(
    model: &ModelSpec,
    run: &RunOutput,
    name: HyperName,
) -> Option<Vec<f64>> {
    let index = model.hyper.names().position(|n| n == name)?;
    if run.chains.is_empty() {
        return None;
    }
    let per_chain = run.chains.iter().map(|c| c.draws.len()).min().unwrap_or(0);
    Some(
        run.chains
            .iter()
            .flat_map(|c| (0..per_chain).map(move |d| c.hyper_at_stored_draw(d, index)))
            .collect(),
    )
}

/// A hyperparameter as a job's stored draws see it (the noise sd a measurement is scored with,
/// the mean and variance a site's exceedance is judged at).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Drawn<'a> {
    /// The model's value.
    Fixed(f64),
    /// Inferred: its value at each stored draw, pooled as [`at_stored_draws`] pools them.
    PerDraw(&'a [f64]),
}

impl<'a> Drawn<'a> {
    /// `drawn` ([`at_stored_draws`]) when the chains infer it, else the model's `fixed` value.
    pub(crate) fn of(drawn: Option<&'a [f64]>, fixed: f64) -> Self {
        drawn.map_or(Self::Fixed(fixed), Self::PerDraw)
    }

    /// The value at pooled draw `k`.
    pub(crate) fn at(&self, k: usize) -> f64 {
        match self {
            Self::Fixed(value) => *value,
            Self::PerDraw(values) => values[k],
        }
    }

    /// The mean of its square over the draws (for a noise sd, E[s^2]: what a new measurement's
    /// predictive variance adds to the field's).
    pub(crate) fn mean_square(&self) -> f64 {
        match self {
            Self::Fixed(value) => value * value,
            Self::PerDraw(values) => {
                values.iter().map(|v| v * v).sum::<f64>() / values.len().max(1) as f64
            }
        }
    }
}

/// The `p` quantile of the `index`-th of `count` inferred hyperparameters over every kept state
/// of every chain (None without any): what a warning judges whatever `output.quantiles` asks.
pub(crate) fn pooled_quantile(run: &RunOutput, index: usize, count: usize, p: f64) -> Option<f64> {
    let mut pooled = series(run, index, count).concat();
    if pooled.is_empty() {
        return None;
    }
    pooled.sort_by(f64::total_cmp);
    Some(quantile(&pooled, p))
}

/// The share of kept hyperparameter updates that moved, averaged over chains.
pub(crate) fn acceptance_rate(run: &RunOutput) -> Option<f64> {
    let rates: Vec<f64> = run
        .chains
        .iter()
        .filter_map(|c| c.hyper_acceptance_rate)
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}
