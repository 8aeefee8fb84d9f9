//! Merging: the tables and manifest of a results folder from its part logs, after its shards
//! (or its one run) are done; and the checks that the records being merged belong together.
//!
//! The records merged for a study must come from one fieldmc version and see the same content
//! of every data file: a folder whose shards ran different versions, or read a data file that
//! changed in between, is refused with [`SinkError::Inconsistent`], naming the runs on each side.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::SinkError;
use super::index::{IndexedJob, PartIndex, PlannedJob};
use super::lock::{FolderLock, Holder, Purpose};
use super::log::DataFile;
use super::manifest::{JobTiming, Manifest, RunSummary};
use super::results_dir::{AssembledCounts, ResultsDir};

/// What `fieldmc merge` did.
#[derive(Debug)]
pub(crate) struct MergeOutcome {
    pub(crate) plan: Vec<PlannedJob>,
    /// `Some` when every job had a record and the tables were written.
    pub(crate) assembled: Option<AssembledCounts>,
    /// Planned jobs without a record, in plan order (the tables are not written then).
    pub(crate) missing: Vec<String>,
    /// Jobs whose newest record failed.
    pub(crate) failed: usize,
    /// Shard counts seen in the runs (to say which shard a missing job belongs to).
    pub(crate) shard_counts: Vec<u32>,
    /// A note for each part log that ends in bytes no reader uses (a torn record).
    pub(crate) ignored_tails: Vec<String>,
    pub(crate) lock: FolderLock,
}

/// Merges the folder at `root`: refuses inconsistent records, reports missing jobs, else
/// assembles the tables and writes `manifest.json`.
pub(crate) fn merge(root: &Path) -> Result<MergeOutcome, SinkError> {
    if !root.join("parts").is_dir() {
        return Err(SinkError::NoPlan {
            root: root.to_path_buf(),
        });
    }
    let dir = ResultsDir::open(root)?;
    let lock = dir.lock(Holder::this_process(Purpose::Merge, ""))?;
    let plan = dir.read_plan()?.ok_or_else(|| SinkError::NoPlan {
        root: root.to_path_buf(),
    })?;
    let index = dir.index()?;
    check_consistent(root, &plan, &index)?;
    let missing: Vec<String> = plan
        .iter()
        .filter(|p| index.get(&p.job_id).is_none_or(|j| j.key != p.key))
        .map(|p| p.job_id.clone())
        .collect();
    let mut shard_counts: Vec<u32> = index
        .runs
        .iter()
        .filter_map(|r| r.header.origin.shard.as_deref())
        .filter_map(|s| s.split_once('/')?.1.parse().ok())
        .collect();
    shard_counts.sort_unstable();
    shard_counts.dedup();
    let failed = plan
        .iter()
        .filter_map(|p| index.get(&p.job_id).filter(|j| j.key == p.key))
        .filter(|j| j.status == crate::table::JobStatus::Failed)
        .count();
    let mut outcome = MergeOutcome {
        plan,
        assembled: None,
        missing,
        failed,
        shard_counts,
        ignored_tails: index.ignored_tails(),
        lock,
    };
    if !outcome.missing.is_empty() {
        return Ok(outcome);
    }
    let counts = dir.assemble(&outcome.plan, &index)?;
    let newest = index.runs.iter().max_by_key(|r| r.header.started_unix_ms);
    let (study, seed) = newest.map_or((String::new(), 0), |r| {
        (r.header.study.clone(), r.header.seed)
    });
    let mut manifest = manifest_of(&study, seed, 0, &outcome.plan, &index, None);
    manifest.threads = manifest
        .runs
        .iter()
        .map(|r| r.origin.threads)
        .max()
        .unwrap_or(0);
    manifest.finish();
    dir.write_manifest(&manifest)?;
    outcome.assembled = Some(counts);
    Ok(outcome)
}

/// Refuses records of one plan that disagree on fieldmc's version or on a data file's content.
pub(crate) fn check_consistent(
    root: &Path,
    plan: &[PlannedJob],
    index: &PartIndex,
) -> Result<(), SinkError> {
    let included: Vec<&IndexedJob> = plan
        .iter()
        .filter_map(|p| index.get(&p.job_id).filter(|j| j.key == p.key))
        .collect();
    let mut versions: BTreeMap<&str, BTreeMap<usize, usize>> = BTreeMap::new();
    let mut data: BTreeMap<&str, BTreeMap<&str, BTreeMap<usize, usize>>> = BTreeMap::new();
    for job in &included {
        *versions
            .entry(job.version.as_str())
            .or_default()
            .entry(job.run)
            .or_default() += 1;
        for file in &job.data {
            *data
                .entry(file.path.as_str())
                .or_default()
                .entry(file.blake3.as_str())
                .or_default()
                .entry(job.run)
                .or_default() += 1;
        }
    }
    let inconsistent = |message: String| SinkError::Inconsistent {
        root: root.to_path_buf(),
        message,
    };
    if versions.len() > 1 {
        let sides: Vec<String> = versions
            .iter()
            .map(|(version, runs)| format!("fieldmc {version} ({})", describe_runs(index, runs)))
            .collect();
        return Err(inconsistent(format!(
            "its jobs were computed by different fieldmc versions: {}; rerun the jobs of the \
             older version with one fieldmc (`fieldmc run STUDY --shard I/K` recomputes them)",
            sides.join(" and ")
        )));
    }
    for (path, hashes) in &data {
        if hashes.len() > 1 {
            let sides: Vec<String> = hashes
                .iter()
                .map(|(hash, runs)| {
                    format!(
                        "content {} ({})",
                        &hash[..12.min(hash.len())],
                        describe_runs(index, runs)
                    )
                })
                .collect();
            return Err(inconsistent(format!(
                "the data file {path} changed between runs: {}; rerun the study (or its shards) so \
                 that every job reads the same data (jobs whose data changed are recomputed)",
                sides.join(" and ")
            )));
        }
    }
    Ok(())
}

/// `shard 0/3 on host a: 12 jobs, run r-... : 3 jobs`.
fn describe_runs(index: &PartIndex, runs: &BTreeMap<usize, usize>) -> String {
    runs.iter()
        .map(|(&run, &jobs)| {
            let header = &index.runs[run].header;
            let what = match &header.origin.shard {
                Some(shard) => format!("shard {shard}"),
                None => "a whole-study run".to_string(),
            };
            format!(
                "{what} on host {} started {}: {jobs} jobs",
                header.origin.host, header.started
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The manifest of the tables assembled from `index` over `plan`: every contributing run, the
/// data files, and one timing per job. `current_run` marks the jobs computed now (the others
/// are `resumed`).
pub(crate) fn manifest_of(
    study: &str,
    seed: u64,
    threads: usize,
    plan: &[PlannedJob],
    index: &PartIndex,
    current_run: Option<&str>,
) -> Manifest {
    let mut manifest = Manifest::begin(study, seed, threads);
    let mut jobs_per_run = vec![0usize; index.runs.len()];
    let mut data: BTreeMap<DataFile, ()> = BTreeMap::new();
    for planned in plan {
        let Some(job) = index.get(&planned.job_id).filter(|j| j.key == planned.key) else {
            continue;
        };
        jobs_per_run[job.run] += 1;
        for file in &job.data {
            data.insert(file.clone(), ());
        }
        let run = &index.runs[job.run].header.origin.run;
        manifest.record_job(JobTiming {
            job_id: planned.job_id.clone(),
            status: job.status,
            wall_seconds: job.wall_seconds,
            resumed: current_run != Some(run.as_str()),
            run: run.clone(),
        });
    }
    if let Some(first) = index
        .runs
        .iter()
        .zip(&jobs_per_run)
        .filter(|(_, jobs)| **jobs > 0)
        .map(|(run, _)| run.header.started.clone())
        .min()
    {
        manifest.started = first;
    }
    manifest.runs = index
        .runs
        .iter()
        .zip(jobs_per_run)
        .filter(|(run, jobs)| {
            *jobs > 0
                || run.ignored_bytes > 0
                || current_run == Some(run.header.origin.run.as_str())
        })
        .map(|(run, jobs)| RunSummary {
            origin: run.header.origin.clone(),
            started: run.header.started.clone(),
            finished: run.closed.as_ref().map(|c| c.0.clone()),
            jobs,
            data: run.header.data.clone(),
            ignored_bytes: run.ignored_bytes,
        })
        .collect();
    manifest.data = data.into_keys().collect();
    manifest
}
