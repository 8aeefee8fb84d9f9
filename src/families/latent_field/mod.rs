//! The latent-field family (`model.family = "latent-field"`, the default): a Gaussian-process
//! prior on a D x D grid with a gaussian, probit or poisson likelihood, sampled in whitened
//! coordinates. Its engine predates the family seam and lives in the stage folders —
//! [`crate::model`] (prior, likelihoods, data, exact posterior), [`crate::sampler`] (kinds and
//! driver), [`crate::execute::job`] and [`crate::execute::sbc`] (one job, one calibration run),
//! [`crate::execute::tables`] (its rows) — and its figures are the report's built-in ones
//! (fields, acceptance, traces, convergence, autocorrelation, rank histograms). This module is
//! the adaptor that registers it: the keys it owns are every key declared without a
//! `families:` field in [`crate::study::keys`].

use polars::prelude::PolarsResult;

use super::{NamedTables, RunContext, StudyFamily};
use crate::execute::job::{JobOptions, JobResult, run_job};
use crate::execute::sbc::{SbcRun, ranks_table, run_sbc};
use crate::execute::tables;
use crate::model::{DataSpec, ModelSpec};
use crate::plan::Job;
use crate::sampler::SamplerSpec;
use crate::study::resolve::{Resolver, latent_field_params};
use crate::study::{Key, OutputSpec, ParamValue, Settings, StudyError};

/// The family.
pub struct LatentField;

/// A latent-field job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentFieldSpec {
    pub model: ModelSpec,
    pub data: DataSpec,
    pub sampler: SamplerSpec,
    pub output: OutputSpec,
}

/// What a latent-field job computed: its chains (an MCMC study) or its calibration
/// replications (SBC).
pub enum LatentFieldOutput {
    Chains(Box<JobResult>),
    Calibration(SbcRun),
}

impl StudyFamily for LatentField {
    const FAMILY: super::Family = super::Family::LatentField;
    type Spec = LatentFieldSpec;
    type Output = LatentFieldOutput;

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        resolver.resolve_latent_field(settings)
    }

    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        latent_field_params(settings, spec)
    }

    fn data_files(spec: &Self::Spec) -> Vec<&std::path::Path> {
        match &spec.data {
            DataSpec::Csv { path, .. } => vec![path.as_path()],
            DataSpec::Simulated { .. } => Vec::new(),
        }
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

    fn run(
        job: &Job,
        _spec: &Self::Spec,
        context: &RunContext<'_>,
    ) -> Result<Self::Output, String> {
        match &context.sbc {
            Some(sbc) => run_sbc(job, context.seed, sbc.replications, sbc.draws as usize)
                .map(LatentFieldOutput::Calibration)
                .map_err(|e| e.to_string()),
            None => {
                let report = |done: u64| context.report(done);
                let options = JobOptions {
                    exact: true,
                    progress: Some(&report),
                };
                run_job(job, context.seed, &options)
                    .map(|r| LatentFieldOutput::Chains(Box::new(r)))
                    .map_err(|e| e.to_string())
            }
        }
    }

    fn tables(job: &Job, output: &Self::Output, wall_seconds: f64) -> PolarsResult<NamedTables> {
        match output {
            LatentFieldOutput::Chains(result) => chain_tables(job, result, wall_seconds),
            LatentFieldOutput::Calibration(run) => Ok(vec![
                ("jobs", tables::sbc_row(job, run, wall_seconds)?),
                ("ranks", ranks_table(job, run)?),
            ]),
        }
    }
}

fn chain_tables(job: &Job, result: &JobResult, wall_seconds: f64) -> PolarsResult<NamedTables> {
    let mut named = vec![
        ("jobs", tables::job_row(job, result, wall_seconds)?),
        ("fields", tables::fields(job, result)?),
        ("traces", tables::traces(job, result)?),
        ("chains", tables::chains(job, result)?),
        ("autocorrelation", tables::autocorrelation(job, result)?),
    ];
    if !result.run.convergence.is_empty() {
        named.push(("convergence", tables::convergence(job, result)?));
    }
    if !result.hyper.is_empty() && !result.run.chains.is_empty() {
        named.push(("hyper", tables::hyper(job, result)?));
    }
    if let Some(inla) = tables::inla_outcome(result) {
        named.push(("inla_grid", tables::inla_grid(job, inla)?));
    }
    if job.latent().output.field_draws > 0 {
        named.push(("draws", tables::draws(job, result)?));
    }
    Ok(named)
}
