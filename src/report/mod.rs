//! `fieldmc report RESULTS_DIR`: figures (PNG) and one self-contained page (index.html) for a
//! finished study, written to `RESULTS_DIR/report/`.
//!
//! This module owns turning the result tables (jobs, fields, traces, convergence,
//! autocorrelation, ranks; manifest.json, study.toml) into a report. Every table is
//! optional; the figures are chosen from what the study contains, with no configuration:
//!
//! | figure | when | module |
//! |---|---|---|
//! | field heat maps (truth, data, posterior mean/sd, error, probabilities, counts) | fields.parquet | [`fields`] |
//! | the truths side by side, one per true length scale (prior samples) | true length scale swept | [`fields`] |
//! | acceptance heat map over grid size x step size, one panel per sampler | grid and beta both swept | [`acceptance`] |
//! | each key metric against each swept numeric parameter, replicate min-max band | a numeric parameter swept | [`sweeps`] |
//! | RMS of running mean to the exact posterior mean (log-log, 1/sqrt(T) reference) | convergence.parquet | [`chains`] |
//! | trace plots of log-likelihood and the centre cell per chain | traces.parquet | [`chains`] |
//! | autocorrelation of the log-likelihood | autocorrelation.parquet | [`chains`] |
//! | SBC rank histograms, one figure per job, one panel per functional | ranks.parquet | [`ranks`] |
//! | posterior densities of each inferred hyperparameter (chains and INLA overlaid), their traces | hyper.parquet, inla_grid.parquet | [`hyper`] |
//! | each study family's own figures | the family's tables | `crate::families` |
//!
//! Tables are read through the sink ([`crate::sink::read_table`]) and their columns named
//! through the schema ([`crate::sink::schema`]). Plotting uses plotters' bitmap backend with the
//! primitives of [`chart`] and DejaVu Sans embedded in the binary ([`text`]), so no system font
//! or library is needed. The page uses inline CSS, no scripts and no network, and refers to the
//! PNGs by relative file name.

mod acceptance;
mod chains;
pub(crate) mod chart;
pub(crate) mod colour;
mod fields;
mod html;
mod hyper;
mod ranks;
mod shape;
mod sweeps;
pub(crate) mod tables;
pub(crate) mod text;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

pub use ranks::MAX_JOBS as MAX_RANK_FIGURES;
use shape::StudyShape;
use tables::Table;

use crate::sink::schema::{self, JOB_ID};
use crate::sink::{self, SinkError};

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
    #[error(transparent)]
    Read(#[from] SinkError),
    #[error("the embedded report font (DejaVu Sans) could not be loaded")]
    Font,
    #[error("{}: drawing the figure failed: {message}", path.display())]
    Draw { path: PathBuf, message: String },
}

/// What a figure shows, for grouping on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    Fields,
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

/// What [`write_report`] wrote.
#[derive(Debug, Clone)]
pub struct ReportSummary {
    pub report_dir: PathBuf,
    pub index: PathBuf,
    pub figures: Vec<Figure>,
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

/// The inputs every figure builder reads.
pub struct Context<'a> {
    pub(crate) jobs: &'a Table,
    pub(crate) shape: &'a StudyShape,
    pub(crate) report_dir: &'a Path,
}

impl Context<'_> {
    /// The jobs table (empty when the folder has none).
    pub(crate) fn jobs_table(&self) -> &Table {
        self.jobs
    }

    /// The jobs.parquet row of a job id.
    pub fn job_row(&self, job_id: &str) -> Option<usize> {
        self.jobs.rows_of_job(job_id).first().copied()
    }

    /// A job's title: likelihood, sampler, grid, the swept parameters and the replicate (the
    /// job id when jobs.parquet does not list it).
    pub fn describe(&self, job_id: &str) -> String {
        match self.job_row(job_id) {
            Some(row) => shape::job_description(self.jobs, self.shape, row),
            None => format!("job {job_id}"),
        }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.report_dir.join(file)
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

    let jobs = read_table(results_dir, &schema::jobs::TABLE, None, &mut notes)?;
    if jobs.is_none() {
        notes.push("jobs.parquet is missing: no job table, acceptance or sweep figures".into());
    }
    let jobs = jobs.unwrap_or_default();
    let shape = StudyShape::of(&jobs);
    let context = Context {
        jobs: &jobs,
        shape: &shape,
        report_dir: &report_dir,
    };

    let field_jobs =
        representative_job_ids(&context, results_dir, &schema::fields::TABLE, &mut notes)?;
    let trace_jobs =
        representative_job_ids(&context, results_dir, &schema::traces::TABLE, &mut notes)?;
    let truth_jobs = fields::truth_job_ids(&context);
    let mut fields_to_read = to_set(&field_jobs);
    fields_to_read.extend(truth_jobs.iter().cloned());
    let fields = read_table(
        results_dir,
        &schema::fields::TABLE,
        Some(&fields_to_read),
        &mut notes,
    )?;
    let traces = read_table(
        results_dir,
        &schema::traces::TABLE,
        Some(&to_set(&trace_jobs)),
        &mut notes,
    )?;
    let convergence = read_table(results_dir, &schema::convergence::TABLE, None, &mut notes)?;
    let autocorrelation = read_table(
        results_dir,
        &schema::autocorrelation::TABLE,
        None,
        &mut notes,
    )?;

    let mut figures = Vec::new();
    if let Some(fields) = &fields {
        figures.extend(fields::truth_figure(&context, fields, &truth_jobs)?);
        figures.extend(fields::field_figures(&context, fields, &field_jobs)?);
    }
    figures.extend(acceptance::acceptance_figure(&context)?);
    figures.extend(sweeps::sweep_figures(&context, &mut notes)?);
    if let Some(convergence) = &convergence {
        figures.extend(chains::convergence_figure(&context, convergence)?);
    }
    if let Some(traces) = &traces {
        figures.extend(chains::trace_figures(&context, traces, &trace_jobs)?);
    }
    if let Some(autocorrelation) = &autocorrelation {
        figures.extend(chains::autocorrelation_figure(&context, autocorrelation)?);
    }
    figures.extend(ranks::rank_figures(&context, results_dir, &mut notes)?);
    figures.extend(hyper::hyper_figures(&context, results_dir, &mut notes)?);
    figures.extend(crate::families::figures(&context, results_dir, &mut notes)?);

    let index = report_dir.join("index.html");
    let page = html::render_page(results_dir, &context, &figures, &notes);
    fs::write(&index, page).map_err(|source| ReportError::Io {
        path: index.clone(),
        source,
    })?;
    Ok(ReportSummary {
        report_dir,
        index,
        figures,
        notes,
    })
}

/// Reads `table` through the sink (only the rows of `jobs`, when given) as the figures see it.
pub(crate) fn read_table(
    results_dir: &Path,
    table: &schema::Table,
    jobs: Option<&HashSet<String>>,
    notes: &mut Vec<String>,
) -> Result<Option<Table>, ReportError> {
    let frame = sink::read_table(results_dir, table, jobs)?;
    Ok(frame.map(|frame| Table::from_frame(&frame, table.name, notes)))
}

fn to_set(ids: &[String]) -> HashSet<String> {
    ids.iter().cloned().collect()
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

/// The jobs whose rows of `table` are drawn: representative ok jobs that have rows there, or,
/// without a jobs table, the first job ids of the table itself.
fn representative_job_ids(
    context: &Context,
    results_dir: &Path,
    table: &schema::Table,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, ReportError> {
    let Some(ids_in_table) = sink::read_job_ids(results_dir, table)? else {
        return Ok(Vec::new());
    };
    if context.jobs.height == 0 {
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
    let present = to_set(&ids_in_table);
    let candidates: Vec<usize> = context
        .shape
        .ok_rows
        .iter()
        .copied()
        .filter(|&row| {
            context
                .jobs
                .str_at(JOB_ID, row)
                .is_some_and(|id| present.contains(id))
        })
        .collect();
    let rows = shape::representative_rows(context.jobs, context.shape, &candidates);
    Ok(rows
        .into_iter()
        .filter_map(|row| context.jobs.str_at(JOB_ID, row).map(str::to_string))
        .collect())
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
