//! `fieldmc export RESULTS --arviz OUT`: every finished job of a results folder as ArviZ's
//! InferenceData, one Zarr store per job (`OUT/<job_id>.zarr`), from the folder's tables alone.
//! Exit 0 when every job was written, 1 when some could not be (each says why), 2 when the
//! folder is not a results folder.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{BAD_INPUT, FAILURE};
use crate::families;
use crate::report::ResultsFolder;

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// The results folder of a run (with `output.field_draws`, and `output.log_likelihood` for
    /// the log_likelihood group).
    results: PathBuf,
    /// Folder to write the InferenceData stores into, one `<job_id>.zarr` per job.
    #[arg(long)]
    arviz: PathBuf,
    /// Only this job (its id); every finished job when omitted.
    #[arg(long)]
    job: Option<String>,
}

pub(crate) fn run(args: &ExportArgs) -> ExitCode {
    let source = ResultsFolder(&args.results);
    let jobs = match finished_jobs(&args.results) {
        Ok(jobs) => jobs,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(BAD_INPUT);
        }
    };
    let jobs: Vec<String> = match &args.job {
        Some(id) if jobs.contains(id) => vec![id.clone()],
        Some(id) => {
            eprintln!(
                "error: job {id} is not a finished job of {}",
                args.results.display()
            );
            return ExitCode::from(BAD_INPUT);
        }
        None => jobs,
    };
    if let Err(e) = std::fs::create_dir_all(&args.arviz) {
        eprintln!("error: cannot create {}: {e}", args.arviz.display());
        return ExitCode::from(FAILURE);
    }
    let mut failed = 0;
    for job in &jobs {
        let path = args.arviz.join(format!("{job}.zarr"));
        let written = families::inference_data(&source, job).and_then(|groups| {
            crate::inference_data::write_zarr(&path, root_attributes(job), &groups)
        });
        match written {
            Ok(()) => println!("{job}: {}", path.display()),
            Err(error) => {
                failed += 1;
                eprintln!("{job}: not exported: {error}");
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} jobs not exported", jobs.len());
        return ExitCode::from(FAILURE);
    }
    ExitCode::SUCCESS
}

/// The ids of the jobs whose status is `ok`, in the jobs table's order.
fn finished_jobs(results: &std::path::Path) -> Result<Vec<String>, String> {
    use crate::figures::TableSource;
    let frame = ResultsFolder(results)
        .read(families::jobs_table(), None)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} holds no jobs.parquet", results.display()))?;
    let ids = frame
        .column(crate::table::shared::JOB_ID.name())
        .and_then(|c| c.str().cloned())
        .map_err(|e| e.to_string())?;
    let status = frame
        .column(crate::table::shared::jobs::STATUS.name())
        .and_then(|c| c.str().cloned())
        .map_err(|e| e.to_string())?;
    Ok(ids
        .iter()
        .zip(status.iter())
        .filter(|(_, s)| *s == Some("ok"))
        .filter_map(|(id, _)| id.map(str::to_string))
        .collect())
}

/// The root group's attributes, as ArviZ writes them (`created_at`, the inference library and
/// its version), and the job.
fn root_attributes(job: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut attributes = serde_json::Map::new();
    attributes.insert("inference_library".into(), "fieldmc".into());
    attributes.insert(
        "inference_library_version".into(),
        env!("CARGO_PKG_VERSION").into(),
    );
    attributes.insert("fieldmc_job_id".into(), job.into());
    attributes
}
