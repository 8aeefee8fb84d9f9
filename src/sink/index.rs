//! The index of a results folder's part logs: for each job id, its newest record.
//!
//! Logs are read in the order their runs started (then by name), and records within a log in
//! the order written, so a later record of a job replaces an earlier one: a job recomputed
//! because it failed, because its data changed or because of `--force` is represented by its
//! newest result. Only record metadata and where each table lies are kept in memory (a few hundred
//! bytes per job); the tables themselves are read from the logs when assembled.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::SinkError;
use super::fsio;
use super::log::{self, DataFile, Interner, RunHeader, TableSpan};
use crate::table::JobStatus;

/// The first 16 bytes of BLAKE3 of a job's canonical key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 16]);

impl KeyHash {
    pub(crate) fn of(key: &str) -> Self {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&blake3::hash(key.as_bytes()).as_bytes()[..16]);
        KeyHash(bytes)
    }

    pub(crate) fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn from_hex(text: &str) -> Option<Self> {
        if text.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 16];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(KeyHash(bytes))
    }
}

/// One job of a plan as the sinks see it: its id and which key it must have been run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedJob {
    pub(crate) job_id: String,
    pub(crate) key: KeyHash,
}

impl PlannedJob {
    pub(crate) fn new(job_id: &str, key: &str) -> Self {
        PlannedJob {
            job_id: job_id.to_string(),
            key: KeyHash::of(key),
        }
    }
}

/// The newest record of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedJob {
    /// Index into [`PartIndex::runs`].
    pub(crate) run: usize,
    pub(crate) key: KeyHash,
    pub(crate) status: JobStatus,
    pub(crate) error: Option<String>,
    pub(crate) wall_seconds: f64,
    /// fieldmc's version that computed it.
    pub(crate) version: String,
    pub(crate) data: Vec<DataFile>,
    pub(crate) tables: Vec<TableSpan>,
}

/// A run that wrote a log.
#[derive(Debug, Clone)]
pub struct IndexedRun {
    pub(crate) header: RunHeader,
    pub log: PathBuf,
    /// `(finished, jobs written, jobs failed)` when the run closed normally.
    pub(crate) closed: Option<(String, u64, u64)>,
    /// Bytes after the log's last complete record (a torn or damaged record), ignored.
    pub ignored_bytes: u64,
}

impl IndexedRun {
    /// A note on the bytes this run's log ends with that no reader uses, if there are any.
    pub(crate) fn ignored_tail(&self) -> Option<String> {
        (self.ignored_bytes > 0).then(|| {
            format!(
                "note: ignored the last {} bytes of {}: they are not a complete record (its run \
                 was killed or lost power while writing it, or the disk damaged it); any job \
                 they held counts as not recorded",
                self.ignored_bytes,
                self.log.display()
            )
        })
    }
}

/// Everything the logs of a folder hold, newest record per job.
#[derive(Debug, Default)]
pub struct PartIndex {
    pub runs: Vec<IndexedRun>,
    pub(crate) interner: Interner,
    jobs: HashMap<String, IndexedJob>,
}

impl PartIndex {
    /// Reads the part logs of the results folder `root` without changing anything in it (a
    /// folder without `parts/` has none). Safe while other processes append to their logs.
    pub fn read(root: &Path) -> Result<Self, SinkError> {
        let parts = root.join("parts");
        if !parts.is_dir() {
            return Ok(PartIndex::default());
        }
        PartIndex::scan(&parts)
    }

    /// Reads every log in `parts`.
    pub(crate) fn scan(parts: &Path) -> Result<Self, SinkError> {
        let mut logs = Vec::new();
        for entry in fsio::read_dir(parts)? {
            let entry = entry.map_err(|e| SinkError::io("list", parts, e))?;
            let path = entry.path();
            let is_log = path.extension().is_some_and(|e| e == log::LOG_EXTENSION);
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_log && !fsio::is_temporary(&name) {
                logs.push(path);
            }
        }
        let mut index = PartIndex::default();
        let mut scanned = Vec::new();
        for path in logs {
            if let Some(log) = log::scan_log(&path, &mut index.interner)? {
                scanned.push(log);
            }
        }
        scanned.sort_by(|a, b| {
            (a.header.started_unix_ms, &a.header.origin.run)
                .cmp(&(b.header.started_unix_ms, &b.header.origin.run))
        });
        for log in scanned {
            let run = index.runs.len();
            for job in log.jobs {
                let record = job.job;
                index.jobs.insert(
                    record.job_id.clone(),
                    IndexedJob {
                        run,
                        key: KeyHash::of(&record.key),
                        status: record.status,
                        error: record.error,
                        wall_seconds: record.wall_seconds,
                        version: job.version,
                        data: record.data,
                        tables: job.tables,
                    },
                );
            }
            index.runs.push(IndexedRun {
                header: log.header,
                log: log.path,
                closed: log.closed,
                ignored_bytes: log.ignored_bytes,
            });
        }
        Ok(index)
    }

    /// The newest record of `job_id`.
    pub(crate) fn get(&self, job_id: &str) -> Option<&IndexedJob> {
        self.jobs.get(job_id)
    }

    /// Jobs with a record.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The notes on the logs' ignored tails ([`IndexedRun::ignored_tail`]), in run order.
    pub(crate) fn ignored_tails(&self) -> Vec<String> {
        self.runs
            .iter()
            .filter_map(IndexedRun::ignored_tail)
            .collect()
    }

    /// The names of every table some record holds.
    pub(crate) fn table_names(&self) -> &[String] {
        &self.interner.table_names
    }
}
