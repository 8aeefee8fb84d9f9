//! The start of every job's rows: the job id on every table, and on the jobs table its replicate,
//! its parameters (one column per key of its family, typed by the key), its status, error,
//! warnings and wall time. Families add their own columns to these builders.

use polars::prelude::{DataFrame, Series};
use serde::{Deserialize, Serialize};

use super::shared::{JOB_ID, jobs};
use super::{Kind, Rows, SchemaError, Table, Value};
use crate::job::JobHeader;
use crate::study::ParamValue;
use crate::study::keys::{Key, ValueType};

crate::closed_names! {
    /// The outcome of a job: the `status` column of `jobs.parquet` and of the manifest.
    pub enum JobStatus {
        /// The job finished and wrote its tables.
        Ok = "ok",
        /// The job failed; its `error` says why.
        Failed = "failed",
    }
}

impl Serialize for JobStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for JobStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        JobStatus::from_name(&word)
            .ok_or_else(|| serde::de::Error::unknown_variant(&word, JobStatus::NAMES))
    }
}

/// A status column holds the status's word.
impl Value for JobStatus {
    const KIND: Kind = Kind::Text;
    fn series(name: &str, values: Vec<Option<JobStatus>>) -> Series {
        let words: Vec<Option<&str>> = values.iter().map(|v| v.map(JobStatus::name)).collect();
        <Series as polars::prelude::NamedFrom<_, _>>::new(name.into(), words)
    }
}

/// Rows of `table` for `job`, `height` of them, with the job id filled in.
pub fn rows_of(table: &'static Table, job: &JobHeader, height: usize) -> Rows {
    Rows::new(table, height).fill(JOB_ID, job.id.clone())
}

/// The job's id, replicate and parameter columns: the start of every jobs-table row, against
/// the family's jobs table `table`.
pub fn job_rows(table: &'static Table, job: &JobHeader) -> Rows {
    let rows = Rows::new(table, 1)
        .fill(JOB_ID, job.id.clone())
        .fill(jobs::REPLICATE, i64::from(job.replicate));
    job.params
        .iter()
        .fold(rows, |rows, (key, value)| parameter(rows, *key, value))
}

/// The start of a finished job's jobs row: id, replicate, parameters, status `ok`, no error,
/// its warnings and wall time.
pub fn ok_row(
    table: &'static Table,
    job: &JobHeader,
    warnings: &[String],
    wall_seconds: f64,
) -> Rows {
    job_rows(table, job)
        .fill(jobs::STATUS, JobStatus::Ok)
        .fill(jobs::ERROR, None)
        .fill(jobs::WARNINGS, warnings.join(jobs::WARNING_SEPARATOR))
        .fill(jobs::WALL_SECONDS, wall_seconds)
}

/// The jobs-table row of a job that could not run.
pub fn failed_row(
    job: &JobHeader,
    error: &str,
    wall_seconds: f64,
) -> Result<DataFrame, SchemaError> {
    job_rows(&jobs::TABLE, job)
        .fill(jobs::STATUS, JobStatus::Failed)
        .fill(jobs::ERROR, error.to_string())
        .fill(jobs::WARNINGS, String::new())
        .fill(jobs::WALL_SECONDS, wall_seconds)
        .finish()
}

/// A parameter's column, typed by its key (a null too, so every job's column has one type).
fn parameter(rows: Rows, key: Key, value: &ParamValue) -> Rows {
    let (group, name) = (&jobs::PARAMETERS, key.column());
    match (key.value_type(), value) {
        (ValueType::Integer, ParamValue::Int(v)) => rows.set_member(group, name, [*v]),
        (ValueType::Integer, _) => rows.set_member::<i64, _>(group, name, [None]),
        (ValueType::Float | ValueType::FloatOrAlias(_), ParamValue::Float(v)) => {
            rows.set_member(group, name, [*v])
        }
        (ValueType::Float | ValueType::FloatOrAlias(_), _) => {
            rows.set_member::<f64, _>(group, name, [None])
        }
        // D stays an integer; [Dx, Dy] and [D] are text (a study cannot mix them in a sweep).
        (ValueType::GridShape, ParamValue::Int(v)) => rows.set_member(group, name, [*v]),
        (ValueType::Bool, ParamValue::Bool(v)) => rows.set_member(group, name, [*v]),
        (ValueType::Bool, _) => rows.set_member::<bool, _>(group, name, [None]),
        (_, ParamValue::Null) => rows.set_member::<String, _>(group, name, [None]),
        (_, value) => rows.set_member(group, name, [value.to_string()]),
    }
}
