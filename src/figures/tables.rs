//! The result tables as the figures read them: plain column vectors, converted once from the
//! frames the sink reads ([`crate::sink::read_table`]) so the figure code never touches polars.
//! Columns are named through the schema's declarations ([`ColumnName`]). Numbers are `f64`,
//! text is text, booleans are booleans; a column of another type (a list, say) is skipped and
//! reported as a note rather than failing the whole report.

use std::collections::{BTreeMap, HashSet};

use polars::prelude::{DataFrame, DataType};

use crate::table::ColumnName;
use crate::table::shared::JOB_ID;

/// A column name found in the data at run time (a swept parameter discovered in the jobs
/// table), as opposed to one the code names through the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Found<'a>(pub &'a str);

impl ColumnName for Found<'_> {
    fn column_name(&self) -> &str {
        self.0
    }
}

/// The values of one column, nulls as `None` (non-finite numbers are kept as they are).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Values {
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
    pub(crate) fn display(&self, row: usize) -> Option<String> {
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
    pub(crate) height: usize,
    columns: BTreeMap<String, Values>,
    /// Column names in file order.
    order: Vec<String>,
}

impl Table {
    /// Builds a table from named columns of equal length (used by tests and by the reader).
    pub(crate) fn from_columns(columns: Vec<(String, Values)>) -> Self {
        let height = columns.first().map_or(0, |(_, v)| v.len());
        let order = columns.iter().map(|(n, _)| n.clone()).collect();
        Table {
            height,
            columns: columns.into_iter().collect(),
            order,
        }
    }

    pub(crate) fn column_names(&self) -> &[String] {
        &self.order
    }

    pub(crate) fn has(&self, name: impl ColumnName) -> bool {
        self.columns.contains_key(name.column_name())
    }

    pub(crate) fn values(&self, name: impl ColumnName) -> Option<&Values> {
        self.columns.get(name.column_name())
    }

    /// A numeric column, or `None` when absent or not numeric.
    pub(crate) fn num(&self, name: impl ColumnName) -> Option<&[Option<f64>]> {
        match self.columns.get(name.column_name()) {
            Some(Values::Num(v)) => Some(v),
            _ => None,
        }
    }

    /// A text column, or `None` when absent or not text.
    pub(crate) fn text(&self, name: impl ColumnName) -> Option<&[Option<String>]> {
        match self.columns.get(name.column_name()) {
            Some(Values::Text(v)) => Some(v),
            _ => None,
        }
    }

    /// A boolean column, or `None` when absent or not boolean.
    pub(crate) fn boolean(&self, name: impl ColumnName) -> Option<&[Option<bool>]> {
        match self.columns.get(name.column_name()) {
            Some(Values::Bool(v)) => Some(v),
            _ => None,
        }
    }

    /// The finite value of a numeric column at a row.
    pub(crate) fn finite(&self, name: impl ColumnName, row: usize) -> Option<f64> {
        self.num(name)
            .and_then(|v| v.get(row).copied().flatten())
            .filter(|x| x.is_finite())
    }

    /// The text value of a column at a row.
    pub(crate) fn str_at(&self, name: impl ColumnName, row: usize) -> Option<&str> {
        self.text(name)
            .and_then(|v| v.get(row))
            .and_then(|s| s.as_deref())
    }

    /// Rows whose `job_id` equals `job_id`, in table order.
    pub(crate) fn rows_of_job(&self, job_id: &str) -> Vec<usize> {
        let Some(ids) = self.text(JOB_ID) else {
            return Vec::new();
        };
        ids.iter()
            .enumerate()
            .filter(|(_, id)| id.as_deref() == Some(job_id))
            .map(|(row, _)| row)
            .collect()
    }

    /// Distinct job ids in order of first appearance.
    pub(crate) fn job_ids(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.text(JOB_ID)
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
pub(crate) fn format_number(x: f64) -> String {
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

impl Table {
    /// The table of `frame`, read from `name`.parquet; skipped columns are noted in `notes`.
    pub(crate) fn from_frame(frame: &DataFrame, name: &str, notes: &mut Vec<String>) -> Table {
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
