//! The contract of a study family: how its jobs are resolved, run, written and shown.

use std::path::Path;

use polars::prelude::{DataFrame, PolarsResult};

use super::{JobHeader, RunContext};
use crate::families::Family;
use crate::figures::{Context, Figure, ReportError, ReportMetrics};
use crate::study::resolve::Resolver;
use crate::study::{Key, ParamValue, Settings, StudyError};
use crate::table::Table;

/// A job's rows of the result tables, by table name (`jobs` always among them).
pub type NamedTables = Vec<(&'static str, DataFrame)>;

/// One study family: how its jobs are resolved, run, written and shown. Every function is
/// called by the registry (`crate::families`) with the family's own spec, never another's.
pub trait StudyFamily {
    /// The family's name in `model.family`.
    const FAMILY: Family;
    /// A job's checked settings.
    type Spec: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// What a job computes, before it becomes table rows.
    type Output: Send;
    /// The family's `jobs.parquet` table: the shared columns and its own, in column order.
    const JOBS: &'static Table;
    /// Its other result tables, in the order the reference lists them.
    const TABLES: &'static [&'static Table];
    /// The jobs-table metrics its report shows.
    const METRICS: ReportMetrics = ReportMetrics::NONE;

    /// The spec of one sweep point, or a located error (cross-key rules, data files). Keys of
    /// other families have already been rejected.
    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError>;

    /// Every parameter of the point in [`crate::study::Key::all`] order (the job's columns and
    /// canonical key), `Null` where a key does not apply. By default the given value or the
    /// key's default for the family's keys; a family with derived defaults resolves them here.
    fn params(_spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        crate::study::resolve::plain_params(settings, Self::FAMILY)
    }

    /// Files the job reads (their content is hashed: a changed file reruns the job).
    fn data_files(_spec: &Self::Spec) -> Vec<&Path> {
        Vec::new()
    }

    /// The job on its progress line.
    fn label(spec: &Self::Spec) -> String;

    /// Units of work of one job, for the progress bar (e.g. iterations).
    fn work(spec: &Self::Spec) -> u64;

    /// Run one job. Errors become the job's `error`; the other jobs go on.
    fn run(
        job: &JobHeader,
        spec: &Self::Spec,
        context: &RunContext<'_>,
    ) -> Result<Self::Output, String>;

    /// The job's rows of the result tables, the jobs row first.
    fn tables(
        job: &JobHeader,
        spec: &Self::Spec,
        output: &Self::Output,
        wall_seconds: f64,
    ) -> PolarsResult<NamedTables>;

    /// The family's report figures (each family reads its own tables through the context and
    /// returns nothing when they are absent).
    fn figures(
        _context: &Context<'_>,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<Figure>, ReportError> {
        Ok(Vec::new())
    }
}
