//! The executor: runs a plan's jobs in parallel with rayon, one job per thread (no nested
//! parallelism inside a job), writes each finished job atomically through the sink, resumes by
//! skipping the jobs whose parts exist, and assembles the tables in plan order.
//!
//! A job that fails — an error or a panic — records its error in its row and the others go on.
//! Jobs never share mutable state and draw only from streams derived from their own keys, so the
//! tables do not depend on the thread count or the order in which jobs finish.

pub mod job;
pub mod progress;
pub mod sbc;
pub mod score;
pub mod tables;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use polars::prelude::{DataFrame, PolarsResult};
use rayon::prelude::*;

use crate::plan::{Job, Plan};
use crate::sink::{JobStatus, JobTiming, Manifest, ResultsDir, SinkError};
use crate::study::Study;
use job::{JobOptions, run_job};
use progress::StudyProgress;

/// How to run a study.
#[derive(Debug, Clone)]
pub struct ExecuteOptions {
    pub out: PathBuf,
    /// Worker threads; 0 = one per core.
    pub threads: usize,
    /// Start over: remove earlier results in `out` first.
    pub fresh: bool,
    /// No progress display.
    pub quiet: bool,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecuteSummary {
    pub jobs: usize,
    pub ran: usize,
    pub resumed: usize,
    pub failed: usize,
    pub out: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    #[error(transparent)]
    Sink(#[from] SinkError),
    #[error("cannot start {threads} worker threads: {message}")]
    Threads { threads: usize, message: String },
    #[error("building the tables of job {job}: {message}")]
    Table { job: String, message: String },
}

/// Run every job of `plan` not yet finished in `options.out`, then assemble the tables.
pub fn execute(
    study: &Study,
    plan: &Plan,
    options: &ExecuteOptions,
) -> Result<ExecuteSummary, ExecuteError> {
    let results = ResultsDir::create(&options.out)?;
    if options.fresh {
        results.clear()?;
    }
    let earlier = earlier_timings(&results);
    let finished = results.finished_jobs()?;
    let todo: Vec<&Job> = plan
        .jobs
        .iter()
        .filter(|job| !finished.contains(&job.id))
        .collect();
    let resumed = plan.jobs.len() - todo.len();
    let threads = resolve_threads(options.threads);
    let mut manifest = Manifest::begin(&study.name, study.seed, threads);
    let progress = StudyProgress::new(todo.len() as u64, resumed as u64, options.quiet);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| ExecuteError::Threads {
            threads,
            message: e.to_string(),
        })?;
    let outcomes: Vec<Result<Finished, ExecuteError>> = pool.install(|| {
        todo.par_iter()
            .map(|job| run_and_write(job, study, &results, &progress))
            .collect()
    });
    progress.finish();
    let mut failed = 0;
    for outcome in outcomes {
        let finished = outcome?;
        if let Some(error) = &finished.error {
            failed += 1;
            progress.note(&format!("job {} failed: {error}", finished.timing.job_id));
        }
        manifest.record_job(finished.timing);
    }
    for job in plan.jobs.iter().filter(|job| finished.contains(&job.id)) {
        manifest.record_job(resumed_timing(&job.id, &earlier));
    }

    let ids: Vec<String> = plan.jobs.iter().map(|j| j.id.clone()).collect();
    results.assemble(&ids)?;
    results.write_text("study.toml", &study.source_text)?;
    manifest.finish();
    results.write_manifest(&manifest)?;
    Ok(ExecuteSummary {
        jobs: plan.jobs.len(),
        ran: todo.len(),
        resumed,
        failed,
        out: options.out.clone(),
    })
}

fn resolve_threads(requested: usize) -> usize {
    if requested > 0 {
        requested
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The timings of an earlier run into the same folder, by job id.
fn earlier_timings(results: &ResultsDir) -> HashMap<String, JobTiming> {
    let path = results.root().join("manifest.json");
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Manifest>(&text).ok())
        .map(|m| m.jobs.into_iter().map(|t| (t.job_id.clone(), t)).collect())
        .unwrap_or_default()
}

fn resumed_timing(job_id: &str, earlier: &HashMap<String, JobTiming>) -> JobTiming {
    let before = earlier.get(job_id);
    JobTiming {
        job_id: job_id.to_string(),
        status: before.map_or(JobStatus::Ok, |t| t.status),
        wall_seconds: before.map_or(0.0, |t| t.wall_seconds),
        resumed: true,
    }
}

/// What a job computed: its chains (an MCMC study) or its calibration replications (SBC).
enum Computed {
    Chains(Box<job::JobResult>),
    Calibration(sbc::SbcRun),
}

/// Run `compute`, turning its error or a panic into the message its failed row records.
fn guarded<T>(compute: impl FnOnce() -> Result<T, job::JobError>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(compute)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

/// A job that ran now: its timing and, if it failed, why.
struct Finished {
    timing: JobTiming,
    error: Option<String>,
}

/// Run one job (catching panics), write its tables atomically, return its timing.
fn run_and_write(
    job: &Job,
    study: &Study,
    results: &ResultsDir,
    progress: &StudyProgress,
) -> Result<Finished, ExecuteError> {
    let started = Instant::now();
    let line = progress.job(&job_label(job), job.sampler.iterations());
    let report = |done: u64| line.set(done);
    let computed = match &study.sbc {
        Some(sbc) => {
            guarded(|| sbc::run_sbc(job, study.seed, sbc.replications, sbc.draws as usize))
                .map(Computed::Calibration)
        }
        None => {
            let options = JobOptions {
                exact: true,
                progress: Some(&report),
            };
            guarded(|| run_job(job, study.seed, &options)).map(|r| Computed::Chains(Box::new(r)))
        }
    };
    drop(line);
    // One wall time for the job's row and for the manifest.
    let wall_seconds = started.elapsed().as_secs_f64();
    let built = match computed {
        Ok(Computed::Chains(result)) => job_tables(job, &result, wall_seconds).map(|t| (t, None)),
        Ok(Computed::Calibration(run)) => sbc_tables(job, &run, wall_seconds).map(|t| (t, None)),
        Err(message) => failed_tables(job, &message, wall_seconds),
    };
    let (mut tables, error) = built.map_err(|e| ExecuteError::Table {
        job: job.id.clone(),
        message: e.to_string(),
    })?;
    results.write_job(&job.id, &mut tables)?;
    let status = if error.is_none() {
        JobStatus::Ok
    } else {
        JobStatus::Failed
    };
    Ok(Finished {
        timing: JobTiming {
            job_id: job.id.clone(),
            status,
            wall_seconds,
            resumed: false,
        },
        error,
    })
}

type NamedTables = Vec<(&'static str, DataFrame)>;

fn job_tables(job: &Job, result: &job::JobResult, wall_seconds: f64) -> PolarsResult<NamedTables> {
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
    Ok(named)
}

fn sbc_tables(job: &Job, run: &sbc::SbcRun, wall_seconds: f64) -> PolarsResult<NamedTables> {
    Ok(vec![
        ("jobs", tables::sbc_row(job, run, wall_seconds)?),
        ("ranks", sbc::ranks_table(job, run)?),
    ])
}

fn failed_tables(
    job: &Job,
    error: &str,
    wall_seconds: f64,
) -> PolarsResult<(NamedTables, Option<String>)> {
    let row = tables::failed_row(job, error, wall_seconds)?;
    Ok((vec![("jobs", row)], Some(error.to_string())))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("internal error (panic): {text}")
}

/// The short description of a job on its progress line.
fn job_label(job: &Job) -> String {
    format!(
        "{} {} grid {} beta={} r{}",
        job.id,
        job.sampler.kind(),
        job.model.grid,
        job.sampler.step(),
        job.replicate
    )
}

/// The default output folder of a study: `results/<name>`.
pub fn default_out(study: &Study) -> PathBuf {
    Path::new("results").join(&study.name)
}
