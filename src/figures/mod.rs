//! The report kit: what a figure is and what every figure builder reads, and the primitives they
//! draw with. This module knows no family: each family draws its own figures from its own tables
//! with these parts (`src/families/<name>/`), and the report (`crate::report`) collects them into
//! a page.
//!
//! - [`Figure`], [`FigureKind`]: one PNG and what it shows; [`PageTable`]: a table the page
//!   shows beside them;
//! - [`Context`]: the jobs table, the study's shape (what was swept, representative jobs), the
//!   report folder, and [`Context::read`], which reads a result table through the results
//!   folder's reader ([`TableSource`], implemented by the report over the sink);
//! - [`chart`] (frames, axes, panels, curves), [`colour`] (maps and series colours), [`text`]
//!   (DejaVu Sans embedded in the binary, so no system font is needed), [`tables`] (a table as
//!   plain column vectors), [`shape`] (swept parameters, grouping, labels) and [`plots`] (the
//!   curves, heat panels, word lists and maps several families draw), [`metrics`] (the jobs-table
//!   metrics a family's report shows).

pub(crate) mod chart;
pub(crate) mod colour;
pub(crate) mod metrics;
pub(crate) mod plots;
pub(crate) mod shape;
pub(crate) mod tables;
pub(crate) mod text;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use crate::table::shared::JOB_ID;
pub use metrics::{Metric, ReportColumns};
use shape::StudyShape;
use tables::Table;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("results folder {} does not exist or is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A result table could not be read (the reader's own error, e.g. the sink's).
    #[error(transparent)]
    Read(Box<dyn std::error::Error + Send + Sync>),
    #[error("the embedded report font (DejaVu Sans) could not be loaded")]
    Font,
    #[error("{}: drawing the figure failed: {message}", path.display())]
    Draw { path: PathBuf, message: String },
}

/// What a figure shows, for grouping on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    Fields,
    /// Model choice: PSIS-LOO of the jobs and where its Pareto k is bad.
    ModelChoice,
    Acceptance,
    Sweep,
    Convergence,
    Trace,
    Autocorrelation,
    Calibration,
    /// A study family's own figures (stationary distributions, ranks, marginals, topics).
    Family,
}

/// One PNG written into the report folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File name inside the report folder (what index.html refers to).
    pub file: String,
    pub title: String,
    /// What the figure shows and how to read it.
    pub caption: String,
    pub kind: FigureKind,
}

/// A table the page shows beside the figures (HTML, no PNG), in the section of its kind before
/// the figures there.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTable {
    pub title: String,
    /// What the table shows and how to read it.
    pub caption: String,
    pub kind: FigureKind,
    pub columns: Vec<PageColumn>,
    /// One cell per column, as shown.
    pub rows: Vec<Vec<String>>,
}

/// A column of a [`PageTable`].
#[derive(Debug, Clone, PartialEq)]
pub struct PageColumn {
    pub header: String,
    /// What the header's tooltip says (the result column it comes from).
    pub tooltip: String,
    /// Text is left-aligned, numbers right-aligned.
    pub text: bool,
}

/// Where figure builders read result tables from: a results folder, through the sink.
pub(crate) trait TableSource {
    /// The rows of `table` (only those of `jobs`, when given), `None` when the folder has no
    /// such table.
    fn read(
        &self,
        table: &crate::table::Table,
        jobs: Option<&HashSet<String>>,
    ) -> Result<Option<DataFrame>, ReportError>;

    /// The ids of the jobs with rows in `table`, in table order, `None` when it is absent.
    fn job_ids(&self, table: &crate::table::Table) -> Result<Option<Vec<String>>, ReportError>;
}

/// The inputs every figure builder reads.
pub struct Context<'a> {
    pub(crate) jobs: &'a Table,
    pub(crate) shape: &'a StudyShape,
    pub(crate) report_dir: &'a Path,
    pub(crate) source: &'a dyn TableSource,
}

impl Context<'_> {
    /// The jobs table (empty when the folder has none).
    pub(crate) fn jobs_table(&self) -> &Table {
        self.jobs
    }

    /// The jobs.parquet row of a job id.
    pub(crate) fn job_row(&self, job_id: &str) -> Option<usize> {
        self.jobs.rows_of_job(job_id).first().copied()
    }

    /// A job's title: likelihood, sampler, grid, the swept parameters and the replicate (the
    /// job id when jobs.parquet does not list it).
    pub(crate) fn describe(&self, job_id: &str) -> String {
        match self.job_row(job_id) {
            Some(row) => shape::job_description(self.jobs, self.shape, row),
            None => format!("job {job_id}"),
        }
    }

    /// Where the figure file `file` goes.
    pub(crate) fn path(&self, file: &str) -> PathBuf {
        self.report_dir.join(file)
    }

    /// `table` as the figures see it (only the rows of `jobs`, when given), `None` when the
    /// results folder has no such table.
    pub(crate) fn read(
        &self,
        table: &crate::table::Table,
        jobs: Option<&HashSet<String>>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Table>, ReportError> {
        let frame = self.source.read(table, jobs)?;
        Ok(frame.map(|frame| Table::from_frame(&frame, table.name, notes)))
    }

    /// The ids of the jobs with rows in `table`, `None` when it is absent.
    pub(crate) fn job_ids(
        &self,
        table: &crate::table::Table,
    ) -> Result<Option<Vec<String>>, ReportError> {
        self.source.job_ids(table)
    }

    /// The jobs whose rows of `table` are drawn: representative ok jobs that have rows there,
    /// or, without a jobs table, the first job ids of the table itself.
    pub(crate) fn representative_job_ids(
        &self,
        table: &crate::table::Table,
        notes: &mut Vec<String>,
    ) -> Result<Vec<String>, ReportError> {
        let Some(ids_in_table) = self.job_ids(table)? else {
            return Ok(Vec::new());
        };
        if self.jobs.height == 0 {
            let mut ids = ids_in_table;
            if ids.len() > shape::MAX_REPRESENTATIVES {
                notes.push(format!(
                    "{}: drawing the first {} of {} jobs",
                    table.file_name(),
                    shape::MAX_REPRESENTATIVES,
                    ids.len()
                ));
                ids.truncate(shape::MAX_REPRESENTATIVES);
            }
            return Ok(ids);
        }
        let present: HashSet<String> = ids_in_table.into_iter().collect();
        let candidates: Vec<usize> = self
            .shape
            .ok_rows
            .iter()
            .copied()
            .filter(|&row| {
                self.jobs
                    .str_at(JOB_ID, row)
                    .is_some_and(|id| present.contains(id))
            })
            .collect();
        let rows = shape::representative_rows(self.jobs, self.shape, &candidates);
        Ok(rows
            .into_iter()
            .filter_map(|row| self.jobs.str_at(JOB_ID, row).map(str::to_string))
            .collect())
    }
}

/// A file-name-safe version of a job id.
pub(crate) fn file_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
