//! One table of two folders, job pair by job pair: the rows of a job are compared in the order
//! they were written (which the sink keeps), column by column, timing columns aside. Floats are
//! compared bit for bit; a float column with a declared MCSE column is also measured in combined
//! MCSEs, for the tolerance to judge once every value has been seen.

use std::collections::HashMap;

use polars::prelude::{DataFrame, DataType, Series};

use super::pairing::JobPair;
use crate::families::column_spec;
use crate::table::Role;
use crate::table::shared::JOB_ID;

/// The values of one column of one folder's table.
enum Values {
    Float(Vec<Option<f64>>),
    /// Every other type, compared through its text.
    Text(Vec<Option<String>>),
}

impl Values {
    fn of(series: &Series) -> Self {
        match series.dtype() {
            DataType::Float64 | DataType::Float32 | DataType::Null => Values::Float(
                series
                    .cast(&DataType::Float64)
                    .expect("a float or null column casts to f64")
                    .f64()
                    .expect("cast to f64")
                    .iter()
                    .collect(),
            ),
            _ => Values::Text(match series.cast(&DataType::String) {
                Ok(text) => text
                    .str()
                    .expect("cast to text")
                    .iter()
                    .map(|v| v.map(str::to_string))
                    .collect(),
                Err(_) => vec![Some(format!("{:?}", series.dtype())); series.len()],
            }),
        }
    }

    fn show(&self, row: usize) -> String {
        match self {
            Values::Float(v) => v[row].map_or("null".into(), |x| format!("{x}")),
            Values::Text(v) => v[row].clone().unwrap_or_else(|| "null".into()),
        }
    }

    /// Bit-identical (floats by their bits, nulls equal to nulls)?
    fn same(&self, a_row: usize, other: &Values, b_row: usize) -> bool {
        match (self, other) {
            (Values::Float(a), Values::Float(b)) => {
                a[a_row].map(f64::to_bits) == b[b_row].map(f64::to_bits)
            }
            (Values::Text(a), Values::Text(b)) => a[a_row] == b[b_row],
            _ => self.show(a_row) == other.show(b_row),
        }
    }

    fn float(&self, row: usize) -> Option<f64> {
        match self {
            Values::Float(v) => v[row],
            Values::Text(_) => None,
        }
    }
}

/// One value that differs, as the report names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Difference {
    pub(crate) column: String,
    /// The row among the job's rows of the table, 0 upwards.
    pub(crate) row: usize,
    /// The row's integer columns in `a` (`cell=17, i=1, j=4`), to find it again.
    pub(crate) locator: String,
    pub(crate) a: String,
    pub(crate) b: String,
    /// |a - b| in combined MCSEs, for a column with one; infinite when a value is null on one
    /// side only.
    pub(crate) z: Option<f64>,
    /// |a - b| for floats.
    pub(crate) gap: Option<f64>,
}

/// How bad a difference is, to keep the worst: MCSE units first, then the gap.
fn severity(z: Option<f64>, gap: Option<f64>) -> (f64, f64) {
    (z.unwrap_or(-1.0), gap.unwrap_or(0.0))
}

impl Difference {
    fn severity(&self) -> (f64, f64) {
        severity(self.z, self.gap)
    }
}

/// One job pair's comparison in one table.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobOutcome {
    /// Rows of the job in `a` and `b`, when they differ.
    pub(crate) rows: Option<(usize, usize)>,
    /// Values that are not bit-identical.
    pub(crate) differing: usize,
    /// Values measured in MCSEs (differing or not).
    pub(crate) judged: usize,
    /// The largest MCSE-scaled difference seen (0 when all judged values were equal).
    pub(crate) worst_z: f64,
    /// The worst difference among judged values.
    pub(crate) worst_judged: Option<Difference>,
    /// The worst difference in a column the tolerance cannot judge (no MCSE).
    pub(crate) worst_unjudged: Option<Difference>,
    /// The first row whose index columns differ: the rows do not describe the same things.
    pub(crate) misaligned: Option<Difference>,
}

impl JobOutcome {
    pub(crate) fn identical(&self) -> bool {
        self.rows.is_none() && self.differing == 0
    }

    /// Counts one differing value, and keeps it (built by `describe`, only then: most values
    /// of a long table are not the worst) when it is the worst of its kind so far or the first
    /// misaligned index.
    fn record(
        &mut self,
        z: Option<f64>,
        gap: Option<f64>,
        is_index: bool,
        describe: impl FnOnce() -> Difference,
    ) {
        self.differing += 1;
        let slot = if z.is_some() {
            &mut self.worst_judged
        } else {
            &mut self.worst_unjudged
        };
        let worse = slot
            .as_ref()
            .is_none_or(|worst| severity(z, gap) > worst.severity());
        let first_misaligned = is_index && self.misaligned.is_none();
        if !(worse || first_misaligned) {
            return;
        }
        let difference = describe();
        if first_misaligned {
            self.misaligned = Some(difference.clone());
        }
        if worse {
            *slot = Some(difference);
        }
    }
}

/// One table of both folders.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableOutcome {
    pub(crate) name: String,
    /// Columns in one folder's table only (timing columns aside).
    pub(crate) only_in_a: Vec<String>,
    pub(crate) only_in_b: Vec<String>,
    /// Per job pair (same order as the pairs given), `None` when neither folder has rows of it.
    pub(crate) jobs: Vec<Option<JobOutcome>>,
    /// Differing values per column that carries no MCSE, in column order.
    pub(crate) unjudged: Vec<(String, usize)>,
}

/// Row indices of each job id in a table.
fn rows_by_job(frame: &DataFrame) -> HashMap<String, Vec<usize>> {
    let mut rows: HashMap<String, Vec<usize>> = HashMap::new();
    if let Ok(ids) = frame.column(JOB_ID.name()).and_then(|c| c.str()) {
        for (row, id) in ids.iter().enumerate() {
            rows.entry(id.unwrap_or_default().to_string())
                .or_default()
                .push(row);
        }
    }
    rows
}

/// The columns to compare: all but the job id and timing columns, in `frame`'s order.
fn compared_columns(table: &str, frame: &DataFrame) -> Vec<String> {
    frame
        .get_column_names()
        .into_iter()
        .map(|name| name.to_string())
        .filter(|name| name != JOB_ID.name())
        .filter(|name| column_spec(table, name).is_none_or(|spec| spec.role != Role::Timing))
        .collect()
}

/// The index columns of table `table` present in `frame` (see [`Role::Index`]).
fn index_columns(table: &str, frame: &DataFrame) -> Vec<(String, Values)> {
    frame
        .columns()
        .iter()
        .filter(|c| column_spec(table, c.name()).is_some_and(|spec| spec.role == Role::Index))
        .map(|c| (c.name().to_string(), Values::of(c.as_materialized_series())))
        .collect()
}

/// Names row `row` by its index columns: `chain=1, iteration=40`.
fn locator(index: &[(String, Values)], row: usize) -> String {
    index
        .iter()
        .map(|(name, values)| format!("{name}={}", values.show(row)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares table `name` of `a` and `b` over `pairs`.
pub(crate) fn compare_table(
    name: &str,
    a: &DataFrame,
    b: &DataFrame,
    pairs: &[JobPair],
) -> TableOutcome {
    let columns_a = compared_columns(name, a);
    let columns_b = compared_columns(name, b);
    let only = |these: &[String], those: &[String]| -> Vec<String> {
        these
            .iter()
            .filter(|c| !those.contains(c))
            .cloned()
            .collect()
    };
    let (rows_a, rows_b) = (rows_by_job(a), rows_by_job(b));
    let mut jobs: Vec<Option<JobOutcome>> = pairs
        .iter()
        .map(|pair| {
            let (n_a, n_b) = (row_count(&rows_a, &pair.a), row_count(&rows_b, &pair.b));
            (n_a + n_b > 0).then(|| JobOutcome {
                rows: (n_a != n_b).then_some((n_a, n_b)),
                ..JobOutcome::default()
            })
        })
        .collect();
    let mut unjudged = Vec::new();
    let index = index_columns(name, a);
    for column in columns_a.iter().filter(|c| columns_b.contains(c)) {
        let spec = column_spec(name, column);
        let mcse = spec.and_then(|spec| spec.mcse);
        let is_index = spec.is_some_and(|spec| spec.role == Role::Index);
        let series = |frame: &DataFrame, col: &str| {
            frame
                .column(col)
                .ok()
                .map(|c| Values::of(c.as_materialized_series()))
        };
        let (Some(values_a), Some(values_b)) = (series(a, column), series(b, column)) else {
            continue;
        };
        let errors = mcse.and_then(|m| Some((series(a, m)?, series(b, m)?)));
        let mut differing_here = 0;
        for (pair, outcome) in pairs.iter().zip(jobs.iter_mut()) {
            let Some(outcome) = outcome.as_mut().filter(|o| o.rows.is_none()) else {
                continue;
            };
            let empty = Vec::new();
            let at_a = rows_a.get(&pair.a).unwrap_or(&empty);
            let at_b = rows_b.get(&pair.b).unwrap_or(&empty);
            for (k, (&ra, &rb)) in at_a.iter().zip(at_b).enumerate() {
                let same = values_a.same(ra, &values_b, rb);
                let z = errors.as_ref().and_then(|(ea, eb)| {
                    mcse_distance(&values_a, ra, &values_b, rb, ea.float(ra), eb.float(rb))
                });
                if z.is_some() {
                    outcome.judged += 1;
                }
                if same {
                    continue;
                }
                let gap = values_a
                    .float(ra)
                    .zip(values_b.float(rb))
                    .map(|(x, y)| (x - y).abs());
                match z {
                    Some(z) => outcome.worst_z = outcome.worst_z.max(z),
                    None if is_index => {}
                    None => differing_here += 1,
                }
                outcome.record(z, gap, is_index, || Difference {
                    column: column.clone(),
                    row: k,
                    locator: locator(&index, ra),
                    a: values_a.show(ra),
                    b: values_b.show(rb),
                    z,
                    gap,
                });
            }
        }
        if differing_here > 0 {
            unjudged.push((column.clone(), differing_here));
        }
    }
    TableOutcome {
        name: name.to_string(),
        only_in_a: only(&columns_a, &columns_b),
        only_in_b: only(&columns_b, &columns_a),
        jobs,
        unjudged,
    }
}

fn row_count(rows: &HashMap<String, Vec<usize>>, id: &str) -> usize {
    rows.get(id).map_or(0, Vec::len)
}

/// |a - b| / sqrt(mcse_a^2 + mcse_b^2), when both values have an MCSE; infinite when a value is
/// null on one side only or the MCSEs are zero and the values differ.
fn mcse_distance(
    a: &Values,
    ra: usize,
    b: &Values,
    rb: usize,
    mcse_a: Option<f64>,
    mcse_b: Option<f64>,
) -> Option<f64> {
    let (mcse_a, mcse_b) = (mcse_a?, mcse_b?);
    match (a.float(ra), b.float(rb)) {
        (None, None) => Some(0.0),
        (Some(x), Some(y)) if x == y => Some(0.0),
        (Some(x), Some(y)) => Some((x - y).abs() / mcse_a.hypot(mcse_b)),
        _ => Some(f64::INFINITY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn pair(a: &str, b: &str) -> JobPair {
        JobPair {
            a: a.into(),
            b: b.into(),
            status_a: "ok".into(),
            status_b: "ok".into(),
        }
    }

    #[test]
    fn measures_a_declared_mcse_pair_in_mcse_and_counts_other_differences_apart() {
        // fields: post_mean carries post_mean_mcse; post_sd carries none; wall time never counts.
        let a = df!(
            "job_id" => ["x", "x"], "cell" => [0i64, 1],
            "post_mean" => [1.0, 2.0], "post_mean_mcse" => [0.1, 0.1],
            "post_sd" => [0.5, 0.5]
        )
        .unwrap();
        let b = df!(
            "job_id" => ["y", "y"], "cell" => [0i64, 1],
            "post_mean" => [1.0, 2.3], "post_mean_mcse" => [0.1, 0.1],
            "post_sd" => [0.5, 0.6]
        )
        .unwrap();
        let outcome = compare_table("fields", &a, &b, &[pair("x", "y")]);
        let job = outcome.jobs[0].as_ref().unwrap();
        assert_eq!(job.judged, 2);
        assert_eq!(
            job.differing, 2,
            "post_mean and post_sd; the MCSEs are equal"
        );
        assert!((job.worst_z - 0.3 / 0.1f64.hypot(0.1)).abs() < 1e-9);
        let worst = job.worst_judged.as_ref().unwrap();
        assert_eq!((worst.column.as_str(), worst.row), ("post_mean", 1));
        assert_eq!(worst.locator, "cell=1");
        assert_eq!(outcome.unjudged, [("post_sd".to_string(), 1)]);
    }

    #[test]
    fn rows_whose_index_differs_are_misaligned() {
        let a = df!("job_id" => ["x", "x"], "chain" => [0i64, 1], "loglik" => [1.0, 2.0]).unwrap();
        let b = df!("job_id" => ["x", "x"], "chain" => [0i64, 2], "loglik" => [1.0, 2.0]).unwrap();
        let outcome = compare_table("traces", &a, &b, &[pair("x", "x")]);
        let misaligned = outcome.jobs[0]
            .as_ref()
            .unwrap()
            .misaligned
            .clone()
            .unwrap();
        assert_eq!((misaligned.column.as_str(), misaligned.row), ("chain", 1));
        assert_eq!(misaligned.locator, "chain=1");
        assert!(
            outcome.unjudged.is_empty(),
            "an index column is not a value to judge"
        );
    }

    #[test]
    fn a_row_count_mismatch_and_a_missing_column_are_named() {
        let a = df!("job_id" => ["x", "x"], "lag" => [0i64, 1], "autocorrelation" => [1.0, 0.5])
            .unwrap();
        let b = df!("job_id" => ["y"], "lag" => [0i64]).unwrap();
        let outcome = compare_table("autocorrelation", &a, &b, &[pair("x", "y")]);
        assert_eq!(outcome.jobs[0].as_ref().unwrap().rows, Some((2, 1)));
        assert_eq!(outcome.only_in_a, ["autocorrelation"]);
        assert!(outcome.only_in_b.is_empty());
    }

    #[test]
    fn timing_columns_are_left_out_and_floats_compare_by_bits() {
        let a = df!("job_id" => ["x"], "wall_seconds" => [1.0], "mae" => [0.0]).unwrap();
        let b = df!("job_id" => ["x"], "wall_seconds" => [9.0], "mae" => [-0.0]).unwrap();
        let outcome = compare_table("jobs", &a, &b, &[pair("x", "x")]);
        let job = outcome.jobs[0].as_ref().unwrap();
        assert_eq!(
            job.differing, 1,
            "-0.0 is not 0.0 bit for bit; wall time is not compared"
        );
        assert_eq!(job.worst_unjudged.as_ref().unwrap().column, "mae");
    }
}
