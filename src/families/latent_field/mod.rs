//! The latent-field family (`model.family = "latent-field"`, the default): a Gaussian-process
//! prior on a D x D grid with a gaussian, probit, poisson or binomial likelihood, sampled in
//! whitened coordinates. Its numerical libraries are [`crate::model`] (prior, likelihoods, data,
//! exact and Laplace posteriors), [`crate::sampler`] (kinds, driver, hyperparameter updates) and
//! [`crate::diagnostics`]; this folder holds the engine that puts them to work on one job and
//! everything the family owns, in the order a job walks it:
//!
//! - [`keys`]: its study keys; [`resolve`]: a sweep point's settings into a job's spec (the
//!   sampler's in `sampler_keys`, the hyperparameters' in `hyper_keys`, the binomial trials' in
//!   `binomial_keys`, a points file's in `points_keys`, `model.region` in `region_keys`, the
//!   marks on the maps in `marks_keys`, the job row's parameters in `params`, the memory
//!   estimate in `memory`), with
//!   [`grid_csv`] to read a real grid and [`points_csv`] to read a point pattern and count it
//!   on the grid (both give the same in-memory grid), [`region_csv`] to read a study region
//!   that is not a rectangle, and [`exposure`] to read the counts' exposure and assemble each
//!   cell's value and log offset;
//! - [`schema`]: its result tables and their columns (the quantile columns named by
//!   [`quantiles`], `output.quantiles`);
//! - [`job`]: one job: prior, data, likelihood, the run of the sampler kind, then [`cells`]
//!   (per-cell R-hat, ESS, MCSE), [`hyper`] (the inferred hyperparameters' summaries),
//!   [`score`] (errors against the truth, held-out predictions) and [`warnings`], with
//!   [`units`] (the unit trap, also told before the run) and [`held_out`] (what the run says
//!   after it about the data held out of the fit);
//! - [`sbc`]: one simulation-based-calibration job;
//! - [`rows`]: a job's rows of the result tables;
//! - [`figures`]: its report figures (fields, acceptance, traces, convergence, autocorrelation,
//!   rank histograms, hyperparameter densities).

mod binomial_keys;
pub(crate) mod cells;
pub(crate) mod centres;
pub(crate) mod coefficients;
pub(crate) mod csv_values;
pub(crate) mod export;
pub(crate) mod exposure;
pub(crate) mod figures;
pub mod grid_csv;
pub(crate) mod held_out;
pub(crate) mod hyper;
mod hyper_keys;
pub(crate) mod job;
pub mod keys;
pub(crate) mod loo;
mod loo_rows;
mod marks_keys;
mod memory;
mod params;
pub(crate) mod points_csv;
mod points_keys;
pub(crate) mod quantiles;
pub(crate) mod region_csv;
mod region_keys;
pub(crate) mod resolve;
pub(crate) mod risk;
pub(crate) mod rows;
mod sampler_keys;
pub(crate) mod sites;
pub(crate) mod sites_csv;
pub(crate) mod sites_keys;
pub use sampler_keys::kind_defaults_table;
pub mod sbc;
pub mod schema;
pub(crate) mod score;
pub(crate) mod spec;
pub(crate) mod units;
pub(crate) mod warnings;

#[cfg(test)]
mod tests;

use polars::prelude::PolarsResult;

use crate::figures::{Context, Figure, PageTable, ReportColumns, ReportError};
use crate::job::{
    ChunkedTables, DataStream, Finished, JobHeader, NamedTables, RunContext, StudyFamily,
};
use crate::model::DataSpec;
use crate::model::hyper::HyperName;
use crate::study::{Key, ParamValue, Resolver, Settings, StudyError};
use crate::table::Table;
use job::{JobOptions, JobResult, run_job};
use sbc::{SbcRun, ranks_table, run_sbc};
pub use spec::{FieldJob, LatentFieldSpec, NAME, OutputSpec};

/// The family.
pub struct LatentField;

/// What a latent-field job computed: its chains (an MCMC study) or its calibration
/// replications (SBC).
pub enum LatentFieldOutput {
    Chains(Box<JobResult>),
    Calibration(SbcRun),
}

impl StudyFamily for LatentField {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const HEADLINE: &'static [Key] = &[keys::MODEL_LIKELIHOOD, crate::study::keys::SAMPLER_KIND];
    type Spec = LatentFieldSpec;
    type Output = LatentFieldOutput;
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[
        &schema::fields::TABLE,
        &schema::region::TABLE,
        &schema::sites::TABLE,
        &schema::marks::TABLE,
        &schema::traces::TABLE,
        &schema::hyper::TABLE,
        &schema::coefficients::TABLE,
        &schema::hyper_draws::TABLE,
        &schema::loo::TABLE,
        &schema::log_likelihood::TABLE,
        &schema::inla_grid::TABLE,
        &schema::chains::TABLE,
        &schema::convergence::TABLE,
        &crate::table::shared::autocorrelation::TABLE,
        &schema::draws::TABLE,
        &schema::ranks::TABLE,
    ];
    const REPORT: ReportColumns = figures::REPORT;
    const CALIBRATES: bool = true;
    const DATA_STREAMS: &'static [DataStream] = keys::DATA_STREAMS;

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        resolve::resolve(settings, resolver)
    }

    fn default_notes() -> Vec<(Key, String)> {
        sampler_keys::default_notes()
    }

    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        params::params(settings, spec)
    }

    fn is_default(spec: &Self::Spec, key: Key, value: &ParamValue) -> bool {
        params::is_default(spec, key, value)
    }

    fn cautions(spec: &Self::Spec) -> Vec<String> {
        units::unit_warnings(&spec.model, &spec.data)
    }

    fn run_notes(jobs: &polars::prelude::DataFrame) -> Vec<String> {
        held_out::held_out_notes(jobs)
    }

    fn data_files(spec: &Self::Spec) -> Vec<&std::path::Path> {
        let mut files = match &spec.data {
            DataSpec::Csv { path, .. } => vec![path.as_path()],
            DataSpec::Points(points) => vec![points.path.as_path()],
            DataSpec::Sites(sites) => vec![sites.path.as_path()],
            DataSpec::Simulated { .. } => Vec::new(),
        };
        let covariates = spec.model.covariates.as_ref().map(|c| c.path.as_path());
        let exposure = spec.data.exposure().map(|e| e.path.as_path());
        for path in [covariates, exposure].into_iter().flatten() {
            if !files.contains(&path) {
                files.push(path);
            }
        }
        if let Some(region) = &spec.region {
            files.push(region.path.as_path());
        }
        if let Some(predict) = &spec.output.predict_sites {
            files.push(predict.path.as_path());
        }
        files
    }

    fn algorithm_versions(spec: &Self::Spec) -> Vec<(&'static str, String)> {
        let kind = spec.sampler.kind().version();
        let update = spec.sampler.hyper().update.version();
        [
            (sampler_keys::SAMPLER_VERSION, kind),
            (sampler_keys::SAMPLER_HYPER_VERSION, update),
        ]
        .into_iter()
        .filter(|&(_, version)| version > 1)
        .map(|(name, version)| (name, version.to_string()))
        .collect()
    }

    fn label(spec: &Self::Spec) -> String {
        format!(
            "{} D={} beta={}",
            spec.sampler.kind(),
            spec.model.grid,
            spec.sampler.step()
        )
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.sampler.iterations()
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let job = FieldJob {
            header: context.job,
            spec,
        };
        match &context.sbc {
            Some(sbc) => run_sbc(job, context.seed, *sbc)
                .map(LatentFieldOutput::Calibration)
                .map_err(|e| e.to_string()),
            None => {
                let report = |done: u64| context.report(done);
                let options = JobOptions {
                    exact: true,
                    progress: Some(&report),
                    chains_in_parallel: context.spare_threads,
                };
                run_job(job, context.seed, &options)
                    .map(|r| LatentFieldOutput::Chains(Box::new(r)))
                    .map_err(|e| e.to_string())
            }
        }
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let Finished {
            job: header,
            spec,
            output,
            wall_seconds,
        } = done;
        let job = FieldJob { header, spec };
        match output {
            LatentFieldOutput::Chains(result) => chain_tables(job, result, wall_seconds),
            LatentFieldOutput::Calibration(run) => Ok(vec![
                ("jobs", rows::sbc_row(header, run, wall_seconds)?),
                ("ranks", ranks_table(header, run)?),
            ]),
        }
    }

    fn chunked_tables(
        header: &JobHeader,
        spec: &Self::Spec,
        output: Self::Output,
    ) -> ChunkedTables {
        let LatentFieldOutput::Chains(result) = output else {
            return Vec::new();
        };
        let result: std::sync::Arc<JobResult> = std::sync::Arc::from(result);
        let mut chunked: ChunkedTables = Vec::new();
        if result.loo.is_some() {
            let model = &spec.model;
            let inputs = loo_rows::LogLikelihoodInputs {
                likelihood: job::likelihood_of(model, &result.dataset),
                noise_draws: hyper::at_stored_draws(model, &result.run, HyperName::NoiseSd),
                noise_sd: model.noise_sd,
                result: result.clone(),
            };
            chunked.push((
                "log_likelihood",
                loo_rows::log_likelihood(header.clone(), inputs),
            ));
        }
        if spec.output.field_draws > 0 {
            let draws = rows::draws(header.clone(), spec.output.field_draws, result);
            chunked.push(("draws", draws));
        }
        chunked
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        figures::figures(context, notes)
    }

    fn page_tables(
        context: &Context<'_>,
        notes: &mut Vec<String>,
    ) -> Result<Vec<PageTable>, ReportError> {
        Ok(figures::loo::loo_table(context, notes)?
            .into_iter()
            .collect())
    }
}

fn chain_tables(
    job: FieldJob<'_>,
    result: &JobResult,
    wall_seconds: f64,
) -> PolarsResult<NamedTables> {
    let header = job.header;
    let mut named = vec![
        ("jobs", rows::job_row(job, result, wall_seconds)?),
        ("fields", rows::fields(job, result)?),
        ("traces", rows::traces(header, result)?),
        ("chains", rows::chains(header, result)?),
        ("autocorrelation", rows::autocorrelation(header, result)?),
    ];
    if !result.run.convergence.is_empty() {
        named.push(("convergence", rows::convergence(header, result)?));
    }
    if !result.hyper.is_empty() && !result.run.chains.is_empty() {
        named.push(("hyper", rows::hyper(header, result)?));
    }
    if !result.coefficients.is_empty() && !result.run.chains.is_empty() {
        named.push(("coefficients", rows::coefficients(header, result)?));
    }
    if let Some(hyper_draws) = loo_rows::hyper_draws(header, result) {
        named.push(("hyper_draws", hyper_draws?));
    }
    if let Some(loo) = loo_rows::pointwise(header, result) {
        named.push(("loo", loo?));
    }
    if let Some(region) = rows::region(job) {
        named.push(("region", region?));
    }
    if let Some(sites) = rows::sites(job, result) {
        named.push(("sites", sites?));
    }
    if let Some(marks) = rows::marks(job) {
        named.push(("marks", marks?));
    }
    if let Some(inla) = rows::inla_outcome(result) {
        named.push(("inla_grid", rows::inla_grid(header, inla)?));
    }
    Ok(named)
}
