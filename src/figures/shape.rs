//! What a study varied, read from jobs.parquet: the swept parameter columns, which of them move
//! together (paired axes), the representative jobs whose fields and traces are drawn, the job
//! groups that curves are drawn for, and the short labels used in legends and titles.
//!
//! Nothing here is configured: the figures follow from these facts about the jobs table.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::tables::{Found, Table, format_number};
use crate::study::keys::{Label, SAMPLER_KIND};
use crate::table::shared::jobs::{REPLICATE, STATUS};
use crate::table::{ColumnName, JobStatus};

/// How the figures name parameters and jobs, from the keys' declarations and the families'
/// report columns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Naming {
    /// The label of each parameter column whose key declares one.
    pub(crate) labels: Vec<(&'static str, Label)>,
    /// The columns that name a job, swept or not: representative jobs are distinct in these
    /// first, and figure titles name them.
    pub(crate) named_by: Vec<&'static str>,
}

/// At most this many representative jobs get field and trace figures.
pub(crate) const MAX_REPRESENTATIVES: usize = 12;
/// Extra swept columns are added to the representative key while this many jobs suffice.
const REPRESENTATIVE_GROWTH: usize = 6;

/// One value of a parameter column, ordered numbers first (numerically), then text, then null.
#[derive(Debug, Clone)]
pub(crate) enum Cell {
    Num(f64),
    Text(String),
    Null,
}

impl Cell {
    pub(crate) fn of(table: &Table, column: impl ColumnName, row: usize) -> Cell {
        if let Some(values) = table.num(&column) {
            return values
                .get(row)
                .copied()
                .flatten()
                .map_or(Cell::Null, Cell::Num);
        }
        match table.values(column).and_then(|v| v.display(row)) {
            Some(text) => Cell::Text(text),
            None => Cell::Null,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Num(x) if x.is_finite() => Some(*x),
            _ => None,
        }
    }

    pub(crate) fn display(&self) -> String {
        match self {
            Cell::Num(x) => format_number(*x),
            Cell::Text(s) => s.clone(),
            Cell::Null => "–".to_string(),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Cell::Num(_) => 0,
            Cell::Text(_) => 1,
            Cell::Null => 2,
        }
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Cell {}
impl PartialOrd for Cell {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cell {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => a.total_cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// A swept parameter column and the columns that move in lock-step with it (paired axes, or
/// a data length scale that follows the model's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Swept {
    pub(crate) column: String,
    pub(crate) values: Vec<Cell>,
    pub(crate) companions: Vec<String>,
}

impl Swept {
    /// True when every value is a number (such an axis can be plotted against).
    pub(crate) fn is_numeric(&self) -> bool {
        self.values.iter().all(|v| matches!(v, Cell::Num(_)))
    }
}

/// The facts about a study the figures are chosen from.
#[derive(Debug, Clone, Default)]
pub(crate) struct StudyShape {
    /// Rows of jobs.parquet whose status is ok (all rows when there is no status column).
    pub(crate) ok_rows: Vec<usize>,
    /// Swept columns in table order, companions folded into the first of their set.
    pub(crate) swept: Vec<Swept>,
    /// How parameters and jobs are named.
    pub(crate) naming: Naming,
}

impl StudyShape {
    /// The shape of `jobs`, whose parameter columns are those `is_parameter` names, named by
    /// `naming`.
    pub(crate) fn of(
        jobs: &Table,
        is_parameter: &dyn Fn(&str) -> bool,
        naming: Naming,
    ) -> StudyShape {
        let ok_rows = ok_rows(jobs);
        let all_rows: Vec<usize> = (0..jobs.height).collect();
        let swept = swept_columns(jobs, &all_rows, is_parameter);
        StudyShape {
            ok_rows,
            swept,
            naming,
        }
    }

    pub(crate) fn swept(&self, column: &str) -> Option<&Swept> {
        self.swept.iter().find(|s| s.column == column)
    }

    /// The number of distinct values of a column among the swept ones (1 when not swept).
    pub(crate) fn levels(&self, column: impl ColumnName) -> usize {
        self.swept(column.column_name())
            .map_or(1, |s| s.values.len())
    }

    pub(crate) fn swept_names(&self) -> Vec<&str> {
        self.swept.iter().map(|s| s.column.as_str()).collect()
    }
}

/// Rows with status "ok" (every row when the table has no status column).
pub(crate) fn ok_rows(jobs: &Table) -> Vec<usize> {
    (0..jobs.height)
        .filter(|&row| {
            jobs.str_at(STATUS, row)
                .is_none_or(|s| JobStatus::from_name(s) == Some(JobStatus::Ok))
        })
        .collect()
}

/// Parameter columns (model_*, data_*, sampler_*) in table order.
pub(crate) fn param_columns(jobs: &Table, is_parameter: &dyn Fn(&str) -> bool) -> Vec<String> {
    jobs.column_names()
        .iter()
        .filter(|name| is_parameter(name))
        .cloned()
        .collect()
}

/// Distinct values of a column over the given rows, sorted.
pub(crate) fn distinct(jobs: &Table, column: &str, rows: &[usize]) -> Vec<Cell> {
    let mut values: Vec<Cell> = rows
        .iter()
        .map(|&row| Cell::of(jobs, Found(column), row))
        .collect();
    values.sort();
    values.dedup();
    values
}

fn swept_columns(jobs: &Table, rows: &[usize], is_parameter: &dyn Fn(&str) -> bool) -> Vec<Swept> {
    let mut swept: Vec<Swept> = Vec::new();
    for column in param_columns(jobs, is_parameter) {
        let values = distinct(jobs, &column, rows);
        if values.len() < 2 {
            continue;
        }
        match swept
            .iter_mut()
            .find(|s| moves_together(jobs, rows, &s.column, &column))
        {
            Some(leader) => leader.companions.push(column),
            None => swept.push(Swept {
                column,
                values,
                companions: Vec::new(),
            }),
        }
    }
    for set in &mut swept {
        lead_with_text_companion(jobs, rows, set);
    }
    swept
}

/// A paired set that includes a text column (a data file with its offset) is categorical: the
/// text column leads it, so its legend names the data set and no curve is drawn against the
/// numeric companion, whose values only follow the data set.
fn lead_with_text_companion(jobs: &Table, rows: &[usize], set: &mut Swept) {
    if !set.is_numeric() {
        return;
    }
    let Some(k) = set
        .companions
        .iter()
        .position(|c| jobs.num(c).is_none() && jobs.has(c))
    else {
        return;
    };
    let leader = std::mem::replace(&mut set.companions[k], set.column.clone());
    set.values = distinct(jobs, &leader, rows);
    set.column = leader;
}

/// True when the two columns determine each other on the given rows (a one-to-one map).
fn moves_together(jobs: &Table, rows: &[usize], a: &str, b: &str) -> bool {
    let mut forward: BTreeMap<Cell, Cell> = BTreeMap::new();
    let mut backward: BTreeMap<Cell, Cell> = BTreeMap::new();
    for &row in rows {
        let (x, y) = (Cell::of(jobs, Found(a), row), Cell::of(jobs, Found(b), row));
        if *forward.entry(x.clone()).or_insert_with(|| y.clone()) != y
            || *backward.entry(y).or_insert(x.clone()) != x
        {
            return false;
        }
    }
    true
}

/// The key of a row over some columns.
pub(crate) fn key_of(jobs: &Table, row: usize, columns: &[&str]) -> Vec<Cell> {
    columns
        .iter()
        .map(|c| Cell::of(jobs, Found(c), row))
        .collect()
}

/// Groups rows by their values in `columns`, groups ordered by key; rows keep their order.
pub(crate) fn group_rows(
    jobs: &Table,
    rows: &[usize],
    columns: &[&str],
) -> Vec<(Vec<Cell>, Vec<usize>)> {
    let mut groups: BTreeMap<Vec<Cell>, Vec<usize>> = BTreeMap::new();
    for &row in rows {
        groups
            .entry(key_of(jobs, row, columns))
            .or_default()
            .push(row);
    }
    groups.into_iter().collect()
}

/// The columns that name a job (its family's `named_by`) that the jobs table has.
fn naming_columns<'a>(jobs: &Table, shape: &'a StudyShape) -> Vec<&'a str> {
    let named_by = shape.naming.named_by.iter().copied();
    named_by.filter(|c| jobs.has(Found(c))).collect()
}

/// The first replicate of each distinct (likelihood, sampler, grid), extended by further swept
/// columns while that keeps the count small; at most [`MAX_REPRESENTATIVES`] rows, in plan
/// order. Only rows in `candidates` (e.g. ok jobs with fields) are considered.
pub(crate) fn representative_rows(
    jobs: &Table,
    shape: &StudyShape,
    candidates: &[usize],
) -> Vec<usize> {
    let mut key = naming_columns(jobs, shape);
    for swept in &shape.swept {
        if key.contains(&swept.column.as_str()) {
            continue;
        }
        let mut extended = key.clone();
        extended.push(&swept.column);
        if group_rows(jobs, candidates, &extended).len() > REPRESENTATIVE_GROWTH {
            break;
        }
        key = extended;
    }
    let mut chosen: Vec<usize> = group_rows(jobs, candidates, &key)
        .into_iter()
        .filter_map(|(_, rows)| first_replicate(jobs, &rows))
        .collect();
    chosen.sort_unstable();
    chosen.truncate(MAX_REPRESENTATIVES);
    chosen
}

/// The row of the lowest replicate (the first such row on a tie).
pub(crate) fn first_replicate(jobs: &Table, rows: &[usize]) -> Option<usize> {
    rows.iter().copied().min_by(|&a, &b| {
        let replicate = |row| jobs.finite(REPLICATE, row).unwrap_or(0.0);
        replicate(a).total_cmp(&replicate(b)).then(a.cmp(&b))
    })
}

impl Naming {
    /// The label of a parameter column, if its key declares one.
    fn label_of(&self, column: &str) -> Option<Label> {
        self.labels
            .iter()
            .find(|(c, _)| *c == column)
            .map(|&(_, label)| label)
    }

    /// A short name for a parameter in legends ("D", "β", ...); empty when the value speaks
    /// for itself (sampler kind, likelihood).
    pub(crate) fn short_name(&self, column: &str) -> String {
        match self.label_of(column) {
            Some(label) => label.short.to_string(),
            None => column
                .split_once('_')
                .map_or(column, |(_, rest)| rest)
                .replace('_', " "),
        }
    }

    /// A descriptive axis title for a parameter column.
    pub(crate) fn axis_title(&self, column: &str) -> String {
        self.label_of(column)
            .map_or_else(|| column.replace('_', " "), |label| label.title.to_string())
    }

    /// "name=value" for a legend ("β=0.2", or just "pcn"; a data file by its name without
    /// folder and extension).
    pub(crate) fn label(&self, column: &str, value: &Cell) -> String {
        if let (true, Cell::Text(path)) = (column.ends_with("_path"), value) {
            return file_stem(path);
        }
        let name = self.short_name(column);
        if name.is_empty() {
            value.display()
        } else {
            format!("{name}={}", value.display())
        }
    }

    /// Labels of several columns joined ("pcn, D=16, β=0.2"); "all jobs" when empty.
    pub(crate) fn joined_label(&self, columns: &[&str], key: &[Cell]) -> String {
        if columns.is_empty() {
            return "all jobs".into();
        }
        columns
            .iter()
            .zip(key)
            .map(|(c, v)| self.label(c, v))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Orders columns for legends: the sampler kind first (it is what studies compare), the rest
/// in table order.
pub(crate) fn sampler_first(columns: &mut [String]) {
    columns.sort_by_key(|c| c != SAMPLER_KIND.column());
}

/// "../../data/lansing_grid32.csv" -> "lansing_grid32".
fn file_stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned())
}

/// A job's description from its swept parameters plus likelihood, sampler and grid
/// (used in figure titles).
pub(crate) fn job_description(jobs: &Table, shape: &StudyShape, row: usize) -> String {
    let mut columns = naming_columns(jobs, shape);
    for swept in &shape.swept {
        if !columns.contains(&swept.column.as_str()) {
            columns.push(&swept.column);
        }
    }
    let mut parts: Vec<String> = columns
        .iter()
        .map(|c| shape.naming.label(c, &Cell::of(jobs, Found(c), row)))
        .collect();
    if let Some(r) = jobs.finite(REPLICATE, row) {
        parts.push(format!("replicate {}", format_number(r)));
    }
    parts.join(" · ")
}
