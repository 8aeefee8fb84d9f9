//! The tables `output.log_likelihood` adds, and the hyperparameters at the stored draws: what
//! model choice and ArviZ's export read beside `draws.parquet` and `coefficients.parquet`.
//!
//! - `loo.parquet`: each observation's PSIS-LOO and WAIC terms and Pareto k, with the cell or
//!   site it is ([`pointwise`]); `fieldmc compare` pairs two jobs' rows for the standard error
//!   of their elpd difference, the report maps the Pareto k.
//! - `log_likelihood.parquet`: the pointwise log-likelihood at every stored draw, written a chunk
//!   at a time as `draws.parquet` is ([`log_likelihood`]).
//! - `hyper_draws.parquet`: the inferred hyperparameters at the stored draws ([`hyper_draws`]),
//!   labelled by iteration as the coefficients are.

use std::sync::Arc;

use polars::prelude::DataFrame;

use super::hyper::Drawn;
use super::job::JobResult;
use super::job::observed_where;
use super::loo::{PointwiseSource, draws_per_chain};
use super::schema::{draws, hyper, hyper_draws, log_likelihood as loglik, loo};
use crate::job::JobHeader;
use crate::model::Likelihood;
use crate::table::shared::{CHAIN, ITERATION};
use crate::table::{SchemaError, TableChunks, rows_of};

/// One row per observation in the likelihood: its LOO and WAIC terms and where it is (a cell's
/// index, or a site's row in `sites.parquet`, from 1). `None` without LOO.
pub(crate) fn pointwise(
    job: &JobHeader,
    result: &JobResult,
) -> Option<Result<DataFrame, SchemaError>> {
    let outcome = result.loo.as_ref()?;
    let terms = &outcome.pointwise;
    let n = terms.len();
    let (cells, site_rows): (Vec<Option<i64>>, Vec<Option<i64>>) = match &result.dataset.sites {
        Some(sites) => (
            vec![None; n],
            sites
                .fitted
                .rows
                .iter()
                .map(|&r| Some(r as i64 + 1))
                .collect(),
        ),
        None => (
            result
                .dataset
                .observed
                .cells
                .iter()
                .map(|&c| Some(c as i64))
                .collect(),
            vec![None; n],
        ),
    };
    Some(
        rows_of(&loo::TABLE, job, n)
            .set(loo::OBSERVATION, (0..n).map(|i| i as i64))
            .set(loo::CELL, cells)
            .set(loo::SITE_ROW, site_rows)
            .set(loo::ELPD_LOO, terms.iter().map(|t| t.elpd_loo))
            .set(loo::PARETO_K, terms.iter().map(|t| t.pareto_k))
            .set(loo::ELPD_WAIC, terms.iter().map(|t| t.elpd_waic))
            .finish(),
    )
}

/// Rows per chunk of the log-likelihood table: whole observations, at least this many rows.
const CHUNK_ROWS: usize = 1 << 16;

/// What the pointwise log-likelihood of a finished job is made from again, owned: the job's
/// result (its stored draws and data), its likelihood and the noise sd at the stored draws.
pub(crate) struct LogLikelihoodInputs {
    pub(crate) result: Arc<JobResult>,
    pub(crate) likelihood: Likelihood,
    /// An inferred noise sd at each pooled stored draw; `None`: the model's, `noise_sd`.
    pub(crate) noise_draws: Option<Vec<f64>>,
    pub(crate) noise_sd: f64,
}

/// The pointwise log-likelihood, long: one row per (chain, stored draw, observation), made a
/// chunk of whole observations at a time by [`PointwiseSource`], the values the job's LOO took.
pub(crate) fn log_likelihood(
    header: JobHeader,
    inputs: LogLikelihoodInputs,
) -> TableChunks<'static> {
    Box::new(LogLikelihoodChunks {
        header,
        inputs,
        next: 0,
    })
}

/// The chunks of [`log_likelihood`]: the next chunk starts at observation `next`.
struct LogLikelihoodChunks {
    header: JobHeader,
    inputs: LogLikelihoodInputs,
    next: usize,
}

impl Iterator for LogLikelihoodChunks {
    type Item = Result<DataFrame, SchemaError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inputs = &self.inputs;
        let chains = &inputs.result.run.chains;
        let per_chain = draws_per_chain(chains);
        let samples = chains.len() * per_chain;
        let source = PointwiseSource {
            likelihood: &inputs.likelihood,
            observed: observed_where(&inputs.result.dataset),
            noise: Drawn::of(inputs.noise_draws.as_deref(), inputs.noise_sd),
        };
        let observations = source.observed.len();
        if self.next >= observations || samples == 0 {
            return None;
        }
        let first = self.next;
        let last = (first + CHUNK_ROWS.div_ceil(samples)).min(observations);
        self.next = last;
        let rows = (last - first) * samples;
        let mut values = vec![0.0; rows];
        for (i, out) in (first..last).zip(values.chunks_mut(samples)) {
            source.observation(chains, per_chain, i, out);
        }
        let sample = move |r: usize| r % samples;
        Some(
            rows_of(&loglik::TABLE, &self.header, rows)
                .set(CHAIN, (0..rows).map(|r| (sample(r) / per_chain) as i64))
                .set(
                    draws::DRAW,
                    (0..rows).map(|r| (sample(r) % per_chain) as i64),
                )
                .set(
                    loo::OBSERVATION,
                    (0..rows).map(|r| (first + r / samples) as i64),
                )
                .set(loglik::VALUE, values)
                .finish(),
        )
    }
}

/// The inferred hyperparameters of every chain at its stored draws: one row per chain, stored
/// draw and hyperparameter, the draw labelled by its iteration. `None` when none is inferred.
pub(crate) fn hyper_draws(
    job: &JobHeader,
    result: &JobResult,
) -> Option<Result<DataFrame, SchemaError>> {
    if result.hyper.is_empty() || result.run.chains.is_empty() {
        return None;
    }
    let mut rows: Vec<(i64, i64, &'static str, f64)> = Vec::new();
    for (c, chain) in result.run.chains.iter().enumerate() {
        for d in 0..chain.draws.len() {
            let iteration = chain.stored_draw_iteration(d) as i64;
            for (k, summary) in result.hyper.iter().enumerate() {
                let value = chain.hyper_at_stored_draw(d, k);
                rows.push((c as i64, iteration, summary.name.name(), value));
            }
        }
    }
    Some(
        rows_of(&hyper_draws::TABLE, job, rows.len())
            .set(CHAIN, rows.iter().map(|r| r.0))
            .set(ITERATION, rows.iter().map(|r| r.1))
            .set(hyper::NAME, rows.iter().map(|r| r.2.to_string()))
            .set(hyper::VALUE, rows.iter().map(|r| r.3))
            .finish(),
    )
}
