//! Sinks: everything a study run writes to disk, and how it survives crashes.
//!
//! [`ResultsDir`] owns a run's output folder: per-job Parquet parts published atomically as
//! jobs finish, the assembled tables (`jobs.parquet`, `fields.parquet`, ...; see the table
//! contract in the README), the resolved `study.toml` and `manifest.json` ([`Manifest`]).
//! Every file appears under its final name only once it is complete ([`atomic_write`]), so an
//! interrupted run can be resumed from [`ResultsDir::finished_jobs`]. Failures are
//! [`SinkError`]s that name the path and, for a full disk or a read-only folder, say so plainly.
//! [`schema`] declares every table and column; [`read_table`] reads an assembled table back.

mod align;
mod error;
mod fsio;
mod manifest;
mod parquet;
mod read;
mod results_dir;
pub mod schema;

pub use error::SinkError;
pub use fsio::atomic_write;
pub use manifest::{GIT_REVISION, JobStatus, JobTiming, Manifest, utc_timestamp};
pub use parquet::read_parquet;
pub use read::{read_job_ids, read_table, table_path};
pub use results_dir::{AssembledCounts, ResultsDir};
