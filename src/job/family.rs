//! The contract of a study family: how its jobs are resolved, run, written and shown.

use std::path::Path;

use polars::prelude::{DataFrame, PolarsResult};

use super::{DataStream, JobHeader, RunContext};
use crate::figures::{Context, Figure, PageTable, ReportColumns, ReportError};
use crate::study::{Key, ParamValue, Resolver, Settings, StudyError};
use crate::table::{Rows, Table, TableChunks, ok_row};

/// A job's rows of the result tables, by table name (`jobs` always among them).
pub type NamedTables = Vec<(&'static str, DataFrame)>;

/// A job's tables too large to hold whole, by table name, each as chunks made one at a time.
pub type ChunkedTables = Vec<(&'static str, TableChunks<'static>)>;

/// Everything a finished job writes: its tables, whole and chunked.
pub struct Tabulated {
    pub(crate) tables: NamedTables,
    pub(crate) chunked: ChunkedTables,
}

/// One study family: its keys, how its jobs are resolved, run, written and shown. Every
/// function is called by the registry (`crate::families`) with the family's own spec, never
/// another's.
pub trait StudyFamily {
    /// The family's word in `model.family`.
    const NAME: &'static str;
    /// Its keys, shared ones included, in the order of its job-table columns.
    const KEYS: &'static [Key];
    /// The keys that say what kind of job it is (the latent field's likelihood and sampler
    /// kind): the plan's text table shows them beside the swept keys.
    const HEADLINE: &'static [Key] = &[];
    /// A job's checked settings.
    type Spec: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// What a job computes, before it becomes table rows.
    type Output: Send;
    /// The family's `jobs.parquet` table: the shared columns and its own, in column order.
    const JOBS: &'static Table;
    /// Its other result tables, in the order the reference lists them.
    const TABLES: &'static [&'static Table];
    /// What its report shows of its jobs table: metrics against swept parameters, listed
    /// columns, the keys that name a job.
    const REPORT: ReportColumns = ReportColumns::NONE;
    /// Whether it runs simulation-based calibration studies (`[study] kind = "sbc"`).
    const CALIBRATES: bool = false;
    /// The random streams of its data, each keyed by the keys its draws depend on.
    const DATA_STREAMS: &'static [DataStream] = &[];

    /// The spec of one sweep point, or a located error (cross-key rules, data files). Keys of
    /// other families have already been rejected.
    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError>;

    /// The defaults the family gives shared keys where they differ from the key's declared
    /// default (the latent field's per-kind budgets, each family's sampler kind), in words for
    /// `fieldmc keys` and docs/keys.md. The family's resolution applies them; this only says so.
    fn default_notes() -> Vec<(Key, String)> {
        Vec::new()
    }

    /// The point's parameters: each of [`StudyFamily::KEYS`] with its value, in that order. By
    /// default the given value or the key's default; a family with derived defaults resolves
    /// them here.
    fn params(_spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        Self::KEYS
            .iter()
            .map(|&key| (key, settings.value(key)))
            .collect()
    }

    /// Whether `value` is what `key` takes when the study does not give it (a key declared
    /// `Keyed::UnlessDefault` then stays out of the job's canonical key). By default: the key's
    /// fixed default; a family with derived defaults says so here.
    fn is_default(_spec: &Self::Spec, key: Key, value: &ParamValue) -> bool {
        key.default_value().as_ref() == Some(value)
    }

    /// What a user should hear before the job runs: settings that are allowed but almost always
    /// a mistake (the latent field's unit trap). `fieldmc check` and `fieldmc run` print each
    /// once per study; the family also puts them among the job's warnings.
    fn cautions(_spec: &Self::Spec) -> Vec<String> {
        Vec::new()
    }

    /// What a user should hear after a run about its finished jobs, from the assembled jobs table
    /// (every family's rows: a family reads its own columns), e.g. the latent field's count of the
    /// cells its jobs held out of the fit. `fieldmc run` and `fieldmc merge` print each.
    fn run_notes(_jobs: &DataFrame) -> Vec<String> {
        Vec::new()
    }

    /// Files the job reads (their content is hashed: a changed file reruns the job).
    fn data_files(_spec: &Self::Spec) -> Vec<&Path> {
        Vec::new()
    }

    /// Versions of the algorithms the job's results come from, as (name, value) pairs of its
    /// canonical key: a kind whose draws changed says so (the latent field's
    /// `sampler.version`), so a result folder of the older version is recomputed, never mixed.
    fn algorithm_versions(_spec: &Self::Spec) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The job on its progress line.
    fn label(spec: &Self::Spec) -> String;

    /// Units of work of one job, for the progress bar (e.g. iterations).
    fn work(spec: &Self::Spec) -> u64;

    /// Run one job (its header is `context.job`). Errors become the job's `error`; the other
    /// jobs go on.
    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String>;

    /// The finished job's rows of the result tables, the jobs row first.
    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables>
    where
        Self: Sized;

    /// The finished job's tables too large to hold whole (the latent field's draws), each as
    /// chunks made as the writer takes them. Called after [`StudyFamily::tables`], with the output
    /// itself, so that the chunks may own what they are made from rather than copy it.
    fn chunked_tables(
        _job: &JobHeader,
        _spec: &Self::Spec,
        _output: Self::Output,
    ) -> ChunkedTables {
        Vec::new()
    }

    /// The family's report figures (each family reads its own tables through the context and
    /// returns nothing when they are absent).
    fn figures(
        _context: &Context<'_>,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<Figure>, ReportError> {
        Ok(Vec::new())
    }

    /// The family's tables on the report page beside its figures (nothing when the result
    /// tables they come from are absent).
    fn page_tables(
        _context: &Context<'_>,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<PageTable>, ReportError> {
        Ok(Vec::new())
    }
}

/// A job that ran: what its family turns into table rows.
pub struct Finished<'a, F: StudyFamily> {
    pub(crate) job: &'a JobHeader,
    pub(crate) spec: &'a F::Spec,
    pub(crate) output: &'a F::Output,
    /// The wall time of the run, measured around [`StudyFamily::run`] by the executor.
    pub(crate) wall_seconds: f64,
}

impl<F: StudyFamily> Finished<'_, F> {
    /// The start of the job's row of `table` (its family's jobs table): header, parameters,
    /// status `ok`, `warnings` and the wall time.
    pub(crate) fn jobs_row(&self, table: &'static Table, warnings: &[String]) -> Rows {
        ok_row(table, self.job, warnings, self.wall_seconds)
    }
}
