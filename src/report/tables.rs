//! Reading the result tables (see the table contract) into plain column vectors.
//!
//! Every table is optional: a missing file is `Ok(None)`. Columns are converted once into
//! [`Values`] (numbers as `f64`, text, booleans), so the figure code never touches polars.
//! A column of an unexpected type (a list, say) is skipped and reported as a note rather than
//! failing the whole report.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::{
    BooleanChunked, DataFrame, DataType, NewChunkedArray, ParquetReader, SerReader,
};

use super::ReportError;

/// The values of one column, nulls as `None` (non-finite numbers are kept as they are).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Num(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Num(v) => v.len(),
            Values::Text(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    /// The value at `row` as a display string (`None` for null).
    pub fn display(&self, row: usize) -> Option<String> {
        match self {
            Values::Num(v) => v.get(row).copied().flatten().map(format_number),
            Values::Text(v) => v.get(row).cloned().flatten(),
            Values::Bool(v) => v.get(row).copied().flatten().map(|b| b.to_string()),
        }
    }
}

/// A table read from `results_dir/<name>.parquet`.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub height: usize,
    columns: BTreeMap<String, Values>,
    /// Column names in file order.
    order: Vec<String>,
}

impl Table {
    /// Builds a table from named columns of equal length (used by tests and by the reader).
    pub fn from_columns(columns: Vec<(String, Values)>) -> Self {
        let height = columns.first().map_or(0, |(_, v)| v.len());
        let order = columns.iter().map(|(n, _)| n.clone()).collect();
        Table {
            height,
            columns: columns.into_iter().collect(),
            order,
        }
    }

    pub fn column_names(&self) -> &[String] {
        &self.order
    }

    pub fn has(&self, name: &str) -> bool {
        self.columns.contains_key(name)
    }

    pub fn values(&self, name: &str) -> Option<&Values> {
        self.columns.get(name)
    }

    /// A numeric column, or `None` when absent or not numeric.
    pub fn num(&self, name: &str) -> Option<&[Option<f64>]> {
        match self.columns.get(name) {
            Some(Values::Num(v)) => Some(v),
            _ => None,
        }
    }

    /// A text column, or `None` when absent or not text.
    pub fn text(&self, name: &str) -> Option<&[Option<String>]> {
        match self.columns.get(name) {
            Some(Values::Text(v)) => Some(v),
            _ => None,
        }
    }

    /// A boolean column, or `None` when absent or not boolean.
    pub fn boolean(&self, name: &str) -> Option<&[Option<bool>]> {
        match self.columns.get(name) {
            Some(Values::Bool(v)) => Some(v),
            _ => None,
        }
    }

    /// The finite value of a numeric column at a row.
    pub fn finite(&self, name: &str, row: usize) -> Option<f64> {
        self.num(name)
            .and_then(|v| v.get(row).copied().flatten())
            .filter(|x| x.is_finite())
    }

    /// The text value of a column at a row.
    pub fn str_at(&self, name: &str, row: usize) -> Option<&str> {
        self.text(name)
            .and_then(|v| v.get(row))
            .and_then(|s| s.as_deref())
    }

    /// Rows whose `job_id` equals `job_id`, in table order.
    pub fn rows_of_job(&self, job_id: &str) -> Vec<usize> {
        let Some(ids) = self.text("job_id") else {
            return Vec::new();
        };
        ids.iter()
            .enumerate()
            .filter(|(_, id)| id.as_deref() == Some(job_id))
            .map(|(row, _)| row)
            .collect()
    }

    /// Distinct job ids in order of first appearance.
    pub fn job_ids(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.text("job_id")
            .unwrap_or(&[])
            .iter()
            .flatten()
            .filter(|id| seen.insert(id.as_str()))
            .cloned()
            .collect()
    }
}

/// Formats a number compactly for tables and labels: integers plainly, others to 3-4
/// significant digits, very small or large in scientific notation.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == x.trunc() && x.abs() < 1e9 {
        return format!("{}", x as i64);
    }
    let a = x.abs();
    if !(1e-3..1e7).contains(&a) {
        return format!("{x:.2e}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Where a table's file lives.
pub fn table_path(results_dir: &Path, name: &str) -> PathBuf {
    results_dir.join(format!("{name}.parquet"))
}

/// Reads `results_dir/<name>.parquet`; `Ok(None)` when the file does not exist. When
/// `keep_jobs` is given, only rows whose job_id is in it are kept (fields and traces of large
/// studies would not fit in memory as plain vectors otherwise). Skipped columns are appended to
/// `notes`.
pub fn read_table(
    results_dir: &Path,
    name: &str,
    keep_jobs: Option<&HashSet<String>>,
    notes: &mut Vec<String>,
) -> Result<Option<Table>, ReportError> {
    let path = table_path(results_dir, name);
    if !path.is_file() {
        return Ok(None);
    }
    let parquet_error = |source| ReportError::Parquet {
        path: path.clone(),
        source,
    };
    let file = File::open(&path).map_err(|source| ReportError::Io {
        path: path.clone(),
        source,
    })?;
    let mut frame = ParquetReader::new(file).finish().map_err(parquet_error)?;
    if let Some(keep) = keep_jobs {
        frame = keep_rows_of_jobs(&frame, keep).map_err(parquet_error)?;
    }
    Ok(Some(frame_to_table(&frame, name, notes)))
}

/// The distinct job ids of `results_dir/<name>.parquet`, reading only that column; `Ok(None)`
/// when the file does not exist, an empty list when it has no job_id column.
pub fn read_job_ids(results_dir: &Path, name: &str) -> Result<Option<Vec<String>>, ReportError> {
    let path = table_path(results_dir, name);
    if !path.is_file() {
        return Ok(None);
    }
    let file = File::open(&path).map_err(|source| ReportError::Io {
        path: path.clone(),
        source,
    })?;
    let reader = ParquetReader::new(file);
    let frame = match reader.with_columns(Some(vec!["job_id".into()])).finish() {
        Ok(frame) => frame,
        Err(_) => return Ok(Some(Vec::new())),
    };
    let mut ignored = Vec::new();
    Ok(Some(frame_to_table(&frame, name, &mut ignored).job_ids()))
}

fn keep_rows_of_jobs(
    frame: &DataFrame,
    keep: &HashSet<String>,
) -> polars::prelude::PolarsResult<DataFrame> {
    let Ok(ids) = frame.column("job_id").and_then(|c| c.str()) else {
        return Ok(frame.clone());
    };
    let mask: Vec<bool> = ids
        .iter()
        .map(|id| id.is_some_and(|id| keep.contains(id)))
        .collect();
    frame.filter(&BooleanChunked::from_slice("keep".into(), &mask))
}

fn frame_to_table(frame: &DataFrame, name: &str, notes: &mut Vec<String>) -> Table {
    let mut columns = Vec::new();
    for column in frame.columns() {
        let column_name = column.name().to_string();
        match column_values(column) {
            Some(values) => columns.push((column_name, values)),
            None => notes.push(format!(
                "{name}.parquet: column `{column_name}` has type {} and was ignored",
                column.dtype()
            )),
        }
    }
    let mut table = Table::from_columns(columns);
    table.height = frame.height();
    table
}

fn column_values(column: &polars::prelude::Column) -> Option<Values> {
    let dtype = column.dtype();
    if dtype.is_bool() {
        let values = column.bool().ok()?.iter().collect();
        Some(Values::Bool(values))
    } else if dtype.is_string() {
        let values = column
            .str()
            .ok()?
            .iter()
            .map(|s| s.map(str::to_string))
            .collect();
        Some(Values::Text(values))
    } else if dtype.is_primitive_numeric() {
        let cast = column.cast(&DataType::Float64).ok()?;
        let values = cast.f64().ok()?.iter().collect();
        Some(Values::Num(values))
    } else if matches!(dtype, DataType::Null) {
        Some(Values::Num(vec![None; column.len()]))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_number_is_compact_and_keeps_magnitude() {
        assert_eq!(format_number(16.0), "16");
        assert_eq!(format_number(0.2), "0.2");
        assert_eq!(format_number(0.69234), "0.6923");
        assert_eq!(format_number(123.456), "123.5");
        assert!(format_number(1.5e-5).contains('e'));
        assert_eq!(format_number(100000.0), "100000");
        assert!(format_number(2.5e7 + 0.5).contains('e'));
        assert_eq!(format_number(-0.04), "-0.04");
    }

    #[test]
    fn job_ids_are_distinct_in_first_appearance_order() {
        let ids = ["b", "a", "b", "c", "a"]
            .map(|s| Some(s.to_string()))
            .to_vec();
        let table = Table::from_columns(vec![("job_id".into(), Values::Text(ids))]);
        assert_eq!(table.job_ids(), ["b", "a", "c"]);
        assert_eq!(table.rows_of_job("b"), [0, 2]);
    }
}
