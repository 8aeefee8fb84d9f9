//! Comparing two results folders: `fieldmc compare A B`. The same study and seed must give the
//! same numbers on any machine, at any thread count and in any shard layout; this is how a user
//! checks it ("rerun on the cluster, compare with the laptop run"), and how the test suite does.
//!
//! Jobs are paired through the jobs tables ([`pairing`]); every table the registry declares
//! that either folder holds is compared job pair by job pair ([`table`]), timing columns aside;
//! the [`Tolerance`] turns the differences into a verdict per job and table: identical, within
//! tolerance (values with a stored MCSE within a family-wise bound) or different. [`render`]
//! writes what a person reads. A folder of committed reference tables works as either side: it
//! needs a `jobs.parquet`, and `--tables` restricts the comparison to the tables it holds.
//! This stage reads tables through [`crate::sink`] and names them through the registry; it knows
//! no family and no model.
//!
//! `fieldmc compare A [B] --loo` asks another question, which of the jobs predicts the data best:
//! [`model_choice`] reads each folder's PSIS-LOO results (one folder: its jobs with each other;
//! two: every job of both) and [`loo`] ranks them as ArviZ's `az.compare` does.

mod error;
pub(crate) mod loo;
pub(crate) mod model_choice;
mod pairing;
pub(crate) mod render;
mod table;
mod tolerance;

use std::path::{Path, PathBuf};

pub(crate) use error::CompareError;
pub(crate) use pairing::JobPair;
pub(crate) use table::{Difference, TableOutcome};
pub(crate) use tolerance::{DEFAULT_FALSE_ALARM, Tolerance};

use crate::families::tables;
use crate::sink::{Manifest, read_table};

/// What to compare and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CompareOptions {
    pub(crate) tolerance: Tolerance,
    /// Only these tables (names without `.parquet`); every declared table when empty.
    pub(crate) tables: Vec<String>,
}

/// The verdict on one job in one table, or on everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verdict {
    Identical,
    /// Differs only in columns without a stored MCSE: nothing the tolerance can judge.
    NotJudged,
    WithinTolerance,
    Different,
}

impl Verdict {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::NotJudged => "differing only where no MCSE is stored",
            Verdict::WithinTolerance => "within tolerance",
            Verdict::Different => "different",
        }
    }
}

/// What a folder's manifest says of its run, when it has one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Provenance {
    pub(crate) path: PathBuf,
    pub(crate) manifest: Option<Manifest>,
}

/// Everything `fieldmc compare` found.
#[derive(Debug, Clone)]
pub(crate) struct Comparison {
    pub(crate) a: Provenance,
    pub(crate) b: Provenance,
    pub(crate) tolerance: Tolerance,
    pub(crate) pairs: Vec<JobPair>,
    /// Jobs (id and key) found in one folder only.
    pub(crate) only_in_a: Vec<String>,
    pub(crate) only_in_b: Vec<String>,
    pub(crate) tables: Vec<TableOutcome>,
    /// Tables present in one folder only.
    pub(crate) tables_only_in_a: Vec<String>,
    pub(crate) tables_only_in_b: Vec<String>,
    /// Values measured in MCSEs over every table and job.
    pub(crate) judged: usize,
}

impl Comparison {
    /// The bound on a judged value's MCSE-scaled difference (none for exact comparison).
    pub(crate) fn bound(&self) -> Option<f64> {
        self.tolerance.bound(self.judged)
    }

    /// The verdict on job pair `index` in `table`.
    pub(crate) fn job_verdict(&self, table: &TableOutcome, index: usize) -> Option<Verdict> {
        let job = table.jobs[index].as_ref()?;
        let pair = &self.pairs[index];
        let same_columns = table.only_in_a.is_empty() && table.only_in_b.is_empty();
        let structure_differs = !same_columns
            || job.rows.is_some()
            || job.misaligned.is_some()
            || pair.status_a != pair.status_b;
        Some(if job.identical() && same_columns {
            Verdict::Identical
        } else if self.tolerance == Tolerance::Exact
            || structure_differs
            || self.bound().is_some_and(|bound| job.worst_z > bound)
        {
            Verdict::Different
        } else if job.judged == 0 {
            Verdict::NotJudged
        } else {
            Verdict::WithinTolerance
        })
    }

    /// The largest MCSE-scaled difference in `table` over the jobs within tolerance.
    pub(crate) fn worst_within(&self, table: &TableOutcome) -> f64 {
        (0..self.pairs.len())
            .filter(|&i| self.job_verdict(table, i) == Some(Verdict::WithinTolerance))
            .filter_map(|i| table.jobs[i].as_ref())
            .map(|job| job.worst_z)
            .fold(0.0, f64::max)
    }

    /// The verdict on a whole table.
    pub(crate) fn table_verdict(&self, table: &TableOutcome) -> Verdict {
        (0..self.pairs.len())
            .filter_map(|index| self.job_verdict(table, index))
            .max()
            .unwrap_or(Verdict::Identical)
    }

    /// The verdict on everything: the worst table's; different when a job or a table is in one
    /// folder only, or when values differ and none of them carries an MCSE to judge by.
    pub(crate) fn verdict(&self) -> Verdict {
        let unpaired = !(self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.tables_only_in_a.is_empty()
            && self.tables_only_in_b.is_empty());
        let worst = self
            .tables
            .iter()
            .map(|table| self.table_verdict(table))
            .max()
            .unwrap_or(Verdict::Identical);
        match worst {
            _ if unpaired => Verdict::Different,
            Verdict::NotJudged if self.judged == 0 => Verdict::Different,
            Verdict::NotJudged => Verdict::WithinTolerance,
            other => other,
        }
    }
}

/// Compares results folder `a` with `b`.
pub(crate) fn compare(
    a: &Path,
    b: &Path,
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    let provenance = [Provenance::read(a)?, Provenance::read(b)?];
    same_study(&provenance)?;
    let jobs_a = pairing::JobList::read(a)?;
    let jobs_b = pairing::JobList::read(b)?;
    let (pairs, only_in_a, only_in_b) = pairing::pair_jobs(&jobs_a, &jobs_b);
    if pairs.is_empty() {
        return Err(CompareError::BadInput(format!(
            "no job of {} has a counterpart in {}: jobs pair by replicate and study keys, and \
             none agree (different studies?)",
            a.display(),
            b.display()
        )));
    }
    let mut comparison = Comparison {
        a: provenance[0].clone(),
        b: provenance[1].clone(),
        tolerance: options.tolerance,
        pairs,
        only_in_a,
        only_in_b,
        tables: Vec::new(),
        tables_only_in_a: Vec::new(),
        tables_only_in_b: Vec::new(),
        judged: 0,
    };
    for declared in chosen_tables(&options.tables)? {
        let frames = (
            read_table(a, declared, None)?,
            read_table(b, declared, None)?,
        );
        match frames {
            (Some(frame_a), Some(frame_b)) => comparison.tables.push(table::compare_table(
                declared.name,
                &frame_a,
                &frame_b,
                &comparison.pairs,
            )),
            (Some(_), None) => comparison.tables_only_in_a.push(declared.name.to_string()),
            (None, Some(_)) => comparison.tables_only_in_b.push(declared.name.to_string()),
            (None, None) => {}
        }
    }
    comparison.judged = comparison
        .tables
        .iter()
        .flat_map(|t| t.jobs.iter().flatten())
        .map(|job| job.judged)
        .sum();
    Ok(comparison)
}

/// The registry's tables, or those named (each must be declared).
fn chosen_tables(names: &[String]) -> Result<Vec<&'static crate::table::Table>, CompareError> {
    if names.is_empty() {
        return Ok(tables().to_vec());
    }
    names
        .iter()
        .map(|name| {
            let name = name.trim().trim_end_matches(".parquet");
            crate::families::table(name).ok_or_else(|| {
                let known: Vec<&str> = tables().iter().map(|t| t.name).collect();
                CompareError::BadInput(format!(
                    "--tables: no table is named {name:?}; allowed: {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

impl Provenance {
    fn read(folder: &Path) -> Result<Self, CompareError> {
        if !folder.is_dir() {
            return Err(CompareError::BadInput(format!(
                "{} is not a folder: compare takes two results folders",
                folder.display()
            )));
        }
        let path = folder.join("manifest.json");
        let manifest = match std::fs::read_to_string(&path) {
            Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
                CompareError::BadInput(format!("{}: not a fieldmc manifest: {e}", path.display()))
            })?),
            Err(_) => None,
        };
        Ok(Provenance {
            path: folder.to_path_buf(),
            manifest,
        })
    }
}

/// Two folders with manifests must come from the same study.
fn same_study(sides: &[Provenance; 2]) -> Result<(), CompareError> {
    if let [Some(a), Some(b)] = [&sides[0].manifest, &sides[1].manifest]
        && a.study != b.study
    {
        return Err(CompareError::BadInput(format!(
            "different studies: {} holds study {:?}, {} holds study {:?}; compare two runs of \
             one study",
            sides[0].path.display(),
            a.study,
            sides[1].path.display(),
            b.study
        )));
    }
    Ok(())
}
