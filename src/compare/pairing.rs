//! Which job of one folder is which job of the other. Jobs are paired by what they are — their
//! replicate and every study key as run, read from `jobs.parquet` — not by their id, because the
//! id hashes the study seed too: two runs at different seeds hold the same jobs under different
//! ids. A key whose value is null is left out, as the job id leaves it out: a key a later
//! version added (its column null in every job that does not use it) is the same job as the
//! earlier version's without the column. So is a key that never enters a job id (an output
//! setting such as `output.log_likelihood`): it says what a job wrote, not what it is.

use std::collections::HashMap;
use std::path::Path;

use polars::prelude::{DataFrame, DataType};

use super::error::CompareError;
use crate::families::{Family, jobs_table};
use crate::sink::read_table;
use crate::study::keys::Keyed;
use crate::table::shared::JOB_ID;
use crate::table::shared::jobs::{PARAMETERS, REPLICATE, STATUS};

/// One folder's jobs: their ids in table order, what each is, and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct JobList {
    pub(crate) ids: Vec<String>,
    /// `replicate=0; model_grid=16; ...`: the job's parameters, sorted by column, the null ones
    /// left out.
    pub(crate) keys: Vec<String>,
    pub(crate) statuses: Vec<String>,
}

impl JobList {
    /// Reads `jobs.parquet` of `folder`.
    pub(crate) fn read(folder: &Path) -> Result<Self, CompareError> {
        let frame = read_table(folder, jobs_table(), None)?.ok_or_else(|| {
            CompareError::BadInput(format!(
                "{} holds no jobs.parquet: compare pairs the jobs of two results folders \
                 (or reference folders) through their jobs tables",
                folder.display()
            ))
        })?;
        let text = |column: &str| text_column(&frame, column, folder);
        let ids = text(JOB_ID.name())?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        let statuses = text(STATUS.name())?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        let mut key_columns: Vec<String> = frame
            .get_column_names()
            .into_iter()
            .map(|name| name.to_string())
            .filter(|name| PARAMETERS.contains(name) && !never_keyed(name))
            .collect();
        key_columns.sort();
        key_columns.insert(0, REPLICATE.name().to_string());
        let mut keys = vec![String::new(); frame.height()];
        for column in &key_columns {
            for (key, value) in keys.iter_mut().zip(text(column)?) {
                add_to_key(key, column, value.as_deref());
            }
        }
        Ok(JobList {
            ids,
            keys,
            statuses,
        })
    }
}

/// Whether the parameter column `column` is a key that never enters a job id.
fn never_keyed(column: &str) -> bool {
    Family::ALL
        .iter()
        .flat_map(|family| family.keys())
        .any(|key| key.column() == column && key.keyed() == Keyed::Never)
}

/// `column=value` appended to `key`, nothing when the value is null.
fn add_to_key(key: &mut String, column: &str, value: Option<&str>) {
    let Some(value) = value else {
        return;
    };
    if !key.is_empty() {
        key.push_str("; ");
    }
    key.push_str(&format!("{column}={value}"));
}

/// A job present in both folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobPair {
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) status_a: String,
    pub(crate) status_b: String,
}

/// The jobs of `a` and `b` paired by key, in `a`'s order, and the keys found on one side only.
pub(crate) fn pair_jobs(a: &JobList, b: &JobList) -> (Vec<JobPair>, Vec<String>, Vec<String>) {
    let in_b: HashMap<&str, usize> = b
        .keys
        .iter()
        .enumerate()
        .map(|(row, key)| (key.as_str(), row))
        .collect();
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    let mut matched = vec![false; b.keys.len()];
    for (row, key) in a.keys.iter().enumerate() {
        match in_b.get(key.as_str()) {
            Some(&other) => {
                matched[other] = true;
                pairs.push(JobPair {
                    a: a.ids[row].clone(),
                    b: b.ids[other].clone(),
                    status_a: a.statuses[row].clone(),
                    status_b: b.statuses[other].clone(),
                });
            }
            None => only_a.push(format!("{} ({key})", a.ids[row])),
        }
    }
    let only_b = b
        .keys
        .iter()
        .zip(&matched)
        .enumerate()
        .filter(|(_, (_, seen))| !**seen)
        .map(|(row, (key, _))| format!("{} ({key})", b.ids[row]))
        .collect();
    (pairs, only_a, only_b)
}

/// The values of `column` as text (null stays null).
fn text_column(
    frame: &DataFrame,
    column: &str,
    folder: &Path,
) -> Result<Vec<Option<String>>, CompareError> {
    let series = frame
        .column(column)
        .map_err(|_| {
            CompareError::BadInput(format!(
                "{}: jobs.parquet has no column {column:?}",
                folder.display()
            ))
        })?
        .as_materialized_series()
        .cast(&DataType::String)
        .map_err(|e| CompareError::BadInput(format!("{}: {e}", folder.display())))?;
    let strings = series.str().expect("cast to text");
    Ok(strings.iter().map(|v| v.map(str::to_string)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rows: &[(&str, &str)]) -> JobList {
        JobList {
            ids: rows.iter().map(|r| r.0.to_string()).collect(),
            keys: rows.iter().map(|r| r.1.to_string()).collect(),
            statuses: vec!["ok".into(); rows.len()],
        }
    }

    #[test]
    fn pairs_by_key_not_by_id_and_names_the_unpaired() {
        let a = list(&[
            ("a1", "replicate=0"),
            ("a2", "replicate=1"),
            ("a3", "replicate=2"),
        ]);
        let b = list(&[
            ("b2", "replicate=1"),
            ("b1", "replicate=0"),
            ("b9", "replicate=9"),
        ]);
        let (pairs, only_a, only_b) = pair_jobs(&a, &b);
        let ids: Vec<(&str, &str)> = pairs.iter().map(|p| (&*p.a, &*p.b)).collect();
        assert_eq!(ids, [("a1", "b1"), ("a2", "b2")]);
        assert_eq!(only_a, ["a3 (replicate=2)"]);
        assert_eq!(only_b, ["b9 (replicate=9)"]);
    }

    /// A folder written before a key existed and one where that key's column is null name the
    /// same job; a value that is there is part of the key.
    #[test]
    fn a_null_key_is_left_out_so_a_key_added_later_pairs() {
        let mut older = String::new();
        add_to_key(&mut older, "replicate", Some("0"));
        add_to_key(&mut older, "model_grid", Some("16"));
        let mut newer = String::new();
        add_to_key(&mut newer, "replicate", Some("0"));
        add_to_key(&mut newer, "model_grid", Some("16"));
        add_to_key(&mut newer, "model_region", None);
        assert_eq!(older, newer);
        assert_eq!(newer, "replicate=0; model_grid=16");
        add_to_key(&mut newer, "data_exposure", Some("population"));
        assert_ne!(older, newer);
    }
}
