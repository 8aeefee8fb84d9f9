//! Reading the assembled tables of a results folder, for the report and other readers: a whole
//! table, the rows of some jobs only (fields and traces of a large study would not fit in
//! memory otherwise), or just its job ids. A table that does not exist is `Ok(None)`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use polars::prelude::{BooleanChunked, DataFrame, NewChunkedArray, ParquetReader, SerReader};

use super::error::SinkError;
use super::parquet::read_parquet;
use crate::table::Table;
use crate::table::shared::JOB_ID;
use crate::table::shared::jobs::{self, WARNING_SEPARATOR, WARNINGS};

/// Where `table` lives in `results_dir`.
pub fn table_path(results_dir: &Path, table: &Table) -> PathBuf {
    results_dir.join(table.file_name())
}

/// Reads `table` from `results_dir`; with `jobs`, only the rows of those job ids.
pub fn read_table(
    results_dir: &Path,
    table: &Table,
    jobs: Option<&HashSet<String>>,
) -> Result<Option<DataFrame>, SinkError> {
    let path = table_path(results_dir, table);
    if !path.is_file() {
        return Ok(None);
    }
    let frame = read_parquet(&path)?;
    let Some(jobs) = jobs else {
        return Ok(Some(frame));
    };
    let Ok(ids) = frame.column(JOB_ID.name()).and_then(|c| c.str()) else {
        return Ok(Some(frame));
    };
    let keep: Vec<bool> = ids
        .iter()
        .map(|id| id.is_some_and(|id| jobs.contains(id)))
        .collect();
    frame
        .filter(&BooleanChunked::from_slice("keep".into(), &keep))
        .map(Some)
        .map_err(|e| SinkError::Parquet {
            action: "read",
            path,
            message: e.to_string(),
        })
}

/// Only `columns` of `table`; a frame without rows or columns when they cannot be read.
fn read_columns(
    results_dir: &Path,
    table: &Table,
    columns: &[&str],
) -> Result<Option<DataFrame>, SinkError> {
    let path = table_path(results_dir, table);
    if !path.is_file() {
        return Ok(None);
    }
    let file = std::fs::File::open(&path).map_err(|e| SinkError::io("read", &path, e))?;
    let frame = ParquetReader::new(file)
        .with_columns(Some(columns.iter().map(|c| (*c).into()).collect()))
        .finish();
    Ok(Some(frame.unwrap_or_default()))
}

/// The distinct job ids of `table` in order of first appearance, reading only that column;
/// an empty list when the table has no readable `job_id` column.
pub fn read_job_ids(results_dir: &Path, table: &Table) -> Result<Option<Vec<String>>, SinkError> {
    let Some(frame) = read_columns(results_dir, table, &[JOB_ID.name()])? else {
        return Ok(None);
    };
    let Ok(ids) = frame.column(JOB_ID.name()).and_then(|c| c.str()) else {
        return Ok(Some(Vec::new()));
    };
    let mut seen = HashSet::new();
    Ok(Some(
        ids.iter()
            .flatten()
            .filter(|id| seen.insert(id.to_string()))
            .map(str::to_string)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::shared::autocorrelation;
    use polars::prelude::*;

    #[test]
    fn rows_of_some_jobs_and_distinct_ids_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut frame = df!("job_id" => ["b", "a", "b"], "lag" => [1i64, 2, 3]).unwrap();
        let file = std::fs::File::create(dir.path().join("autocorrelation.parquet")).unwrap();
        ParquetWriter::new(file).finish(&mut frame).unwrap();
        let ids = read_job_ids(dir.path(), &autocorrelation::TABLE).unwrap();
        assert_eq!(ids, Some(vec!["b".to_string(), "a".to_string()]));
        let keep = HashSet::from(["b".to_string()]);
        let rows = read_table(dir.path(), &autocorrelation::TABLE, Some(&keep)).unwrap();
        assert_eq!(rows.unwrap().height(), 2);
        assert!(
            read_table(dir.path(), &jobs::TABLE, None)
                .unwrap()
                .is_none()
        );
        assert!(read_job_ids(dir.path(), &jobs::TABLE).unwrap().is_none());
    }
}

/// A finished job whose answer may not be trusted, as the jobs table records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarnedJob {
    pub(crate) job_id: String,
    pub(crate) warnings: Vec<String>,
}

/// The jobs of the assembled jobs table, and those of them that finished with warnings (most
/// warnings first, then in table order). `None` when the folder has no jobs table.
pub fn warned_jobs(results_dir: &Path) -> Result<Option<(usize, Vec<WarnedJob>)>, SinkError> {
    let Some(frame) = read_columns(results_dir, &jobs::TABLE, &[JOB_ID.name(), WARNINGS.name()])?
    else {
        return Ok(None);
    };
    let (Ok(ids), Ok(warnings)) = (
        frame.column(JOB_ID.name()).and_then(|c| c.str()),
        frame.column(WARNINGS.name()).and_then(|c| c.str()),
    ) else {
        return Ok(Some((frame.height(), Vec::new())));
    };
    let mut warned: Vec<WarnedJob> = ids
        .iter()
        .zip(warnings.iter())
        .filter_map(|(id, text)| {
            let warnings = split_warnings(text?);
            (!warnings.is_empty()).then(|| WarnedJob {
                job_id: id.unwrap_or_default().to_string(),
                warnings,
            })
        })
        .collect();
    warned.sort_by_key(|job| std::cmp::Reverse(job.warnings.len()));
    Ok(Some((frame.height(), warned)))
}

/// The warnings of one `warnings` cell (empty when none).
fn split_warnings(text: &str) -> Vec<String> {
    text.split(WARNING_SEPARATOR)
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}
