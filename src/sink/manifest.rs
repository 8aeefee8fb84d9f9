//! The run manifest: which tool, revision, seed and thread count produced a results folder,
//! when, on which hosts (one entry per run or shard), from which data (content hashes), and how
//! long each job took. Timestamps are UTC ISO-8601, computed without a date crate.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::log::{DataFile, RunOrigin};
use crate::clock::utc_timestamp;
use crate::table::JobStatus;

/// The git revision fieldmc was built from (`build.rs`), `"unknown"` outside a git checkout.
pub(crate) const GIT_REVISION: &str = match option_env!("FIELDMC_GIT_REVISION") {
    Some(revision) => revision,
    None => "unknown",
};

/// Everything `manifest.json` records about one run of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// Always `"fieldmc"`.
    pub(crate) tool: String,
    /// The crate version that ran the study.
    pub(crate) version: String,
    /// Short git revision, with `-dirty` for uncommitted changes, or `"unknown"`.
    pub(crate) git_revision: String,
    /// The study's name.
    pub(crate) study: String,
    /// The study's master seed.
    pub(crate) seed: u64,
    /// Worker threads used.
    pub(crate) threads: usize,
    /// When the run started (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub(crate) started: String,
    /// When the run finished; `None` while it runs.
    pub(crate) finished: Option<String>,
    /// Every run (a whole study, or one shard of it) whose results the tables hold, and any
    /// whose part log ends in ignored bytes.
    #[serde(default)]
    pub(crate) runs: Vec<RunSummary>,
    /// The data files the jobs read, with the BLAKE3 hash of their content.
    #[serde(default)]
    pub(crate) data: Vec<DataFile>,
    /// One entry per job, in plan order.
    pub(crate) jobs: Vec<JobTiming>,
}

/// Provenance of one run (a whole study or a shard): where, when, with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunSummary {
    #[serde(flatten)]
    pub(crate) origin: RunOrigin,
    pub(crate) started: String,
    /// `None` when the run did not end normally (killed); its finished jobs still count.
    pub(crate) finished: Option<String>,
    /// Jobs of the tables that this run computed.
    pub(crate) jobs: usize,
    /// The data files as the run found them when it started.
    pub(crate) data: Vec<DataFile>,
    /// Bytes at the end of the run's part log that are not a complete record (a torn or
    /// damaged one), ignored; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) ignored_bytes: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// How one job ended and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobTiming {
    pub(crate) job_id: String,
    pub(crate) status: JobStatus,
    pub(crate) wall_seconds: f64,
    /// True when the job's results were taken from an earlier run rather than computed now.
    #[serde(default)]
    pub(crate) resumed: bool,
    /// The run that computed it (see [`Manifest::runs`]).
    #[serde(default)]
    pub(crate) run: String,
}

impl Manifest {
    /// A manifest for a run starting now, with this build's version and revision.
    pub(crate) fn begin(study: &str, seed: u64, threads: usize) -> Self {
        Manifest {
            tool: "fieldmc".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: GIT_REVISION.to_string(),
            study: study.to_string(),
            seed,
            threads,
            started: utc_timestamp(SystemTime::now()),
            finished: None,
            runs: Vec::new(),
            data: Vec::new(),
            jobs: Vec::new(),
        }
    }

    /// Records one job's outcome.
    pub(crate) fn record_job(&mut self, timing: JobTiming) {
        self.jobs.push(timing);
    }

    /// Stamps the finish time.
    pub(crate) fn finish(&mut self) {
        self.finished = Some(utc_timestamp(SystemTime::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_through_json() {
        let mut manifest = Manifest::begin("acceptance", 2020, 4);
        manifest.record_job(JobTiming {
            job_id: "j1".into(),
            status: JobStatus::Failed,
            wall_seconds: 1.5,
            resumed: false,
            run: "r1".into(),
        });
        manifest.finish();
        let text = serde_json::to_string_pretty(&manifest).unwrap();
        assert!(text.contains("\"status\": \"failed\""), "{text}");
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back, manifest);
        assert_eq!(back.version, env!("CARGO_PKG_VERSION"));
        assert!(!back.git_revision.is_empty());
        let started = &back.started;
        assert!(
            started.len() == 20 && started.ends_with('Z') && started.as_bytes()[10] == b'T',
            "{started}"
        );
        assert!(back.finished.as_deref().unwrap() >= started.as_str());
    }
}
