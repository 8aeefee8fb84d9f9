//! Sinks: everything a study run writes to disk, how it survives crashes, how several processes
//! share a results folder, and how their results are merged.
//!
//! [`ResultsDir`] owns a results folder. Each run (a whole study, or one shard of it) appends
//! its finished jobs — any set of named tables per job, any columns of the supported types —
//! to its own part log ([`RunWriter`]), which a background thread flushes to disk within
//! [`SYNC_INTERVAL`] of each append (a failed write is cut back and stops the run's appends);
//! the logs are indexed ([`PartIndex`], newest record per job, and the bytes a log ends with
//! that no reader uses) to resume, and assembled into one Parquet file per table in plan order
//! ([`ResultsDir::assemble`], [`merge()`]), along with `study.toml` and `manifest.json`
//! ([`Manifest`]). A lock file per process ([`lock`]) keeps incompatible processes apart and
//! detects stale ones. Failures are [`SinkError`]s that name the path and, for a full disk or a
//! read-only folder, say so plainly.
//! The tables themselves are declared by the families (see [`crate::table`]); the sink stores
//! whatever named tables a job hands it. [`read_table`] reads an assembled table back.

mod assemble;
mod codec;
mod error;
mod flush;
mod fsio;
mod index;
pub mod lock;
mod log;
mod manifest;
mod merge;
mod parquet;
mod read;
mod results_dir;

pub use error::SinkError;
pub use flush::SYNC_INTERVAL;
pub(crate) use fsio::atomic_write;
pub use index::{IndexedJob, IndexedRun, KeyHash, PartIndex, PlannedJob};
pub(crate) use lock::{Holder, Purpose};
pub(crate) use log::{DataFile, JobRecord, RunHeader, RunOrigin};
pub(crate) use manifest::{GIT_REVISION, Manifest};
pub(crate) use merge::{manifest_of, merge};
pub use read::{WarnedJob, read_job_ids, read_table, table_path, warned_jobs};
pub(crate) use results_dir::{ResultsDir, RunWriter};
