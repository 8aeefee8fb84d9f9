//! `fieldmc report RESULTS_DIR`: figures (PNG) and one self-contained page (index.html) for a
//! finished study, written to `RESULTS_DIR/report/`.
//!
//! This module owns the page: it reads the jobs table through the sink, works out what the
//! study varied ([`crate::figures::shape`]), draws each key metric against each swept numeric
//! parameter ([`sweeps`]: one panel per metric the families declare, replicate min-max band),
//! asks every family for its own figures and page tables through the registry
//! ([`crate::families::figures`], [`crate::families::page_tables`]),
//! and writes the page ([`html`]). Every table is optional; the figures are chosen from what the
//! study contains, with no configuration.
//!
//! Tables are read through the sink ([`crate::sink::read_table`]) and their columns named
//! through the families' declarations. Plotting uses plotters' bitmap backend with the
//! primitives of [`crate::figures`] and DejaVu Sans embedded in the binary, so no system font or
//! library is needed. The page uses inline CSS, no scripts and no network, and refers to the
//! PNGs by relative file name.

mod html;
mod sweeps;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use crate::families;
use crate::figures::TableSource;
use crate::figures::shape::{Naming, StudyShape};
use crate::figures::tables::Table as Loaded;
pub use crate::figures::{Context, Figure, FigureKind, PageColumn, PageTable, ReportError};
use crate::sink::{self, SinkError};
use crate::table::Table;

pub use families::latent_field::figures::MAX_RANK_FIGURES;

/// What [`write_report`] wrote.
#[derive(Debug, Clone)]
pub struct ReportSummary {
    pub report_dir: PathBuf,
    pub index: PathBuf,
    pub figures: Vec<Figure>,
    /// The tables the page shows beside the figures.
    pub tables: Vec<PageTable>,
    /// Things the reader should know (ignored columns, capped figure counts, ...).
    pub notes: Vec<String>,
}

impl ReportSummary {
    /// Absolute paths of the figures written.
    pub fn figure_paths(&self) -> Vec<PathBuf> {
        self.figures
            .iter()
            .map(|f| self.report_dir.join(&f.file))
            .collect()
    }
}

impl From<SinkError> for ReportError {
    fn from(error: SinkError) -> Self {
        ReportError::Read(Box::new(error))
    }
}

/// A results folder's tables, read through the sink.
pub(crate) struct ResultsFolder<'a>(pub(crate) &'a Path);

impl TableSource for ResultsFolder<'_> {
    fn read(
        &self,
        table: &Table,
        jobs: Option<&HashSet<String>>,
    ) -> Result<Option<DataFrame>, ReportError> {
        Ok(sink::read_table(self.0, table, jobs)?)
    }

    fn job_ids(&self, table: &Table) -> Result<Option<Vec<String>>, ReportError> {
        Ok(sink::read_job_ids(self.0, table)?)
    }
}

/// Writes `results_dir/report/*.png` and `results_dir/report/index.html` and returns the
/// figures written. Figures from an earlier report in that folder are removed first.
pub fn write_report(results_dir: &Path) -> Result<ReportSummary, ReportError> {
    if !results_dir.is_dir() {
        return Err(ReportError::NotAFolder(results_dir.to_path_buf()));
    }
    let report_dir = results_dir.join("report");
    prepare_report_dir(&report_dir)?;
    let mut notes = Vec::new();
    let source = ResultsFolder(results_dir);

    let jobs = source
        .read(families::jobs_table(), None)?
        .map(|frame| Loaded::from_frame(&frame, "jobs", &mut notes));
    if jobs.is_none() {
        notes.push("jobs.parquet is missing: no job table, acceptance or sweep figures".into());
    }
    let jobs = jobs.unwrap_or_default();
    let columns = families::report_columns();
    let naming = Naming {
        labels: families::catalog().labels(),
        named_by: columns.named_by.iter().map(|key| key.column()).collect(),
    };
    let shape = StudyShape::of(&jobs, &families::is_parameter, naming);
    let context = Context {
        jobs: &jobs,
        shape: &shape,
        report_dir: &report_dir,
        source: &source,
    };
    let mut figures = sweeps::sweep_figures(&context, columns, &mut notes)?;
    figures.extend(families::figures(&context, &mut notes)?);
    let tables = families::page_tables(&context, &mut notes)?;

    let index = report_dir.join("index.html");
    let page = html::render_page(results_dir, &context, columns, (&figures, &tables), &notes);
    fs::write(&index, page).map_err(|source| ReportError::Io {
        path: index.clone(),
        source,
    })?;
    Ok(ReportSummary {
        report_dir,
        index,
        figures,
        tables,
        notes,
    })
}

/// Creates the report folder and removes PNGs of an earlier report, so the folder holds
/// exactly what the new page shows.
fn prepare_report_dir(report_dir: &Path) -> Result<(), ReportError> {
    let io_error = |source| ReportError::Io {
        path: report_dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(report_dir).map_err(io_error)?;
    for entry in fs::read_dir(report_dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_some_and(|e| e == "png") && path.is_file() {
            fs::remove_file(&path).map_err(|source| ReportError::Io {
                path: path.clone(),
                source,
            })?;
        }
    }
    Ok(())
}
