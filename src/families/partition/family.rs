//! The partition family's registration (`model.family = "partition"`): a job's spec resolved
//! from its keys (the data files read and checked here, so a bad column is a located error), its
//! run (one chain or one baseline, streams from the job's key, and with `output.oos_folds` the
//! out-of-sample score of [`super::out_of_sample`]), its rows of `jobs`, `partitions` and
//! `partition_traces`, and its report figures ([`super::report`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::PolarsResult;

use super::NAME;
use super::areas::{AreaColumns, Areas, read_adjacency, read_areas};
use super::baselines::{admin_pieces, merge_down};
use super::chain::{ChainSettings, FlipKind, Schedule};
use super::graph::{Adjacency, region_count};
use super::keys::*;
use super::method::{MethodOutcome, PartitionKind, run_method};
use super::out_of_sample::{
    AreaFolds, FoldMethod, FoldStreams, OutOfSampleError, OutOfSampleScore, score_out_of_sample,
};
use super::schema::{jobs, partition_traces, partitions};
use super::task::{ErrorKind, Problem, SizePenalty, TargetAggregate, TaskModelKind, TaskSettings};
use crate::figures::{Context, Figure, ReportError};
use crate::job::{Finished, JobHeader, NamedTables, RunContext, StudyFamily};
use crate::streams::{Purpose, stream};
use crate::study::Resolver;
use crate::study::error::ErrorKind as StudyErrorKind;
use crate::study::keys::*;
use crate::study::{Key, ParamValue, Settings, StudyError};
use crate::table::Table;
use crate::table::rows_of;
use crate::table::shared::{ACCEPTANCE_RATE, ITERATION};

/// The family.
pub struct PartitionFamily;

/// The data of a partition study, read once per sweep point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartitionData {
    pub(crate) areas: Areas,
    pub(crate) graph: Adjacency,
    /// The administrative pieces, merged down to the region count: the chains' start.
    pub(crate) start: Vec<u32>,
    /// Administrative pieces before merging.
    pub(crate) admin_pieces: usize,
}

/// A partition job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    pub(crate) kind: PartitionKind,
    pub(crate) areas_path: PathBuf,
    pub(crate) adjacency_path: PathBuf,
    pub(crate) data: Arc<PartitionData>,
    pub(crate) regions: usize,
    pub(crate) task: TaskSettings,
    pub(crate) chain: ChainSettings,
    /// Folds of the out-of-sample score (`output.oos_folds`); None: not computed.
    pub(crate) oos_folds: Option<usize>,
}

/// What a partition job gives: its method's outcome and, when asked for, the method's
/// out-of-sample score.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionOutcome {
    pub(crate) method: MethodOutcome,
    pub(crate) out_of_sample: Option<OutOfSampleScore>,
}

impl PartitionSpec {
    /// The problem the job scores partitions on.
    pub(crate) fn problem(&self) -> Problem {
        Problem::from_areas(
            &self.data.areas,
            self.data.graph.clone(),
            self.regions,
            self.task.clone(),
        )
    }
}

/// The sampler kind a study of this family runs when it names none.
const DEFAULT_KIND: PartitionKind = PartitionKind::Flip;

impl StudyFamily for PartitionFamily {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = super::keys::KEYS;
    const HEADLINE: &'static [Key] = &[SAMPLER_KIND];
    const JOBS: &'static Table = &super::schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[
        &super::schema::partitions::TABLE,
        &super::schema::partition_traces::TABLE,
    ];
    type Spec = PartitionSpec;
    type Output = PartitionOutcome;

    fn default_notes() -> Vec<(Key, String)> {
        vec![(SAMPLER_KIND, format!("`\"{}\"`", DEFAULT_KIND.name()))]
    }

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        resolve_spec(settings, resolver)
    }

    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        Self::KEYS
            .iter()
            .map(|&key| {
                let value = settings.value(key);
                let value = if key == SAMPLER_KIND {
                    ParamValue::text(spec.kind.name())
                } else if key == MODEL_REGIONS {
                    ParamValue::Int(spec.regions as i64)
                } else if key == MODEL_FINAL_TEMPERATURE {
                    ParamValue::Float(spec.chain.temperature.end)
                } else if key == MODEL_RIDGE && spec.task.model != TaskModelKind::Ridge {
                    ParamValue::Null
                } else {
                    value
                };
                (key, value)
            })
            .collect()
    }

    fn data_files(spec: &Self::Spec) -> Vec<&Path> {
        vec![spec.areas_path.as_path(), spec.adjacency_path.as_path()]
    }

    fn label(spec: &Self::Spec) -> String {
        format!("{} m={}", spec.kind, spec.regions)
    }

    fn work(spec: &Self::Spec) -> u64 {
        let runs = 1 + spec.oos_folds.unwrap_or(0) as u64;
        match spec.kind.flip() {
            Some(_) => runs * spec.chain.iterations as u64,
            None => runs,
        }
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let problem = spec.problem();
        let mut proposals = context.chain_stream(Purpose::Chain, "");
        let mut acceptance = context.chain_stream(Purpose::Acceptance, "");
        let method = run_method(
            &problem,
            &spec.data.areas,
            &spec.data.start,
            spec.kind,
            &spec.chain,
            &mut proposals,
            &mut acceptance,
        )
        .map_err(|e| e.to_string())?;
        let out_of_sample = spec
            .oos_folds
            .map(|folds| out_of_sample(spec, &problem, folds, context))
            .transpose()
            .map_err(|e| e.to_string())?;
        context.report(Self::work(spec));
        Ok(PartitionOutcome {
            method,
            out_of_sample,
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, spec, output) = (done.job, done.spec, &done.output.method);
        let mut named = vec![
            ("jobs", job_row(&done)?),
            ("partitions", partition_rows(job, spec, output)?),
        ];
        if !output.trace.is_empty() {
            named.push(("partition_traces", trace_rows(job, output)?));
        }
        Ok(named)
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        super::report::figures(context, notes)
    }
}

/// The out-of-sample score of the job's method over `folds` folds of areas. The folds come from
/// a stream keyed by the job's `[model]` and `[data]` keys and replicate (and the fold count), so
/// every method of a replicate is scored on the same folds; each fold's run draws from the job's
/// own streams extended by the fold. Neither depends on the thread or the order of the jobs.
fn out_of_sample(
    spec: &PartitionSpec,
    problem: &Problem,
    folds: usize,
    context: &RunContext<'_>,
) -> Result<OutOfSampleScore, OutOfSampleError> {
    let folds_key = format!("{};oos-folds={folds}", context.job.streams.model_data);
    let mut dealer = stream(context.seed, Purpose::Observations, &folds_key);
    let folds = AreaFolds::deal(problem.area_count(), folds, &mut dealer)?;
    let method = FoldMethod {
        problem,
        areas: &spec.data.areas,
        start: &spec.data.start,
        kind: spec.kind,
        chain: &spec.chain,
    };
    let count = folds.count();
    score_out_of_sample(&method, &folds, |fold| {
        let detail = format!("oos-fold={fold}/{count}");
        FoldStreams {
            proposals: context.chain_stream(Purpose::Chain, &detail),
            acceptance: context.chain_stream(Purpose::Acceptance, &detail),
        }
    })
}

/// Warnings of a finished job: the learned flip's nature, and a chain that barely moved.
fn warnings(spec: &PartitionSpec, output: &MethodOutcome) -> Vec<String> {
    let mut warnings = Vec::new();
    if spec.kind == PartitionKind::LearnedFlip {
        warnings.push(
            "learned-flip is a search heuristic, not a reversible proposal: its visits do not follow exp(-F/T)"
                .to_string(),
        );
    }
    if let Some(counts) = output.counts
        && counts.proposed > 0
        && counts.acceptance_rate() < 0.01
    {
        warnings.push(format!(
            "acceptance rate {:.4} below 0.01: the chain barely moved",
            counts.acceptance_rate()
        ));
    }
    warnings
}

fn job_row(done: &Finished<'_, PartitionFamily>) -> PolarsResult<polars::prelude::DataFrame> {
    let (spec, output) = (done.spec, &done.output.method);
    let oos = done.output.out_of_sample;
    let counts = output.counts;
    let chain = |f: fn(&super::chain::MoveCounts) -> usize| counts.map(|c| f(&c) as i64);
    let f_start = output
        .trace
        .first()
        .map(|point| point.f)
        .filter(|_| counts.is_some());
    let row = done
        .jobs_row(&jobs::TABLE, &warnings(spec, output))
        .fill(ACCEPTANCE_RATE, counts.map(|c| c.acceptance_rate()))
        .fill(jobs::F_START, f_start)
        .fill(jobs::F_FINAL, output.last.evaluation.f)
        .fill(jobs::F_BEST, output.best.evaluation.f)
        .fill(jobs::REGION_MAE_FINAL, output.last.evaluation.mae)
        .fill(jobs::REGION_MAE_BEST, output.best.evaluation.mae)
        .fill(jobs::CV_REGION_MAE_FINAL, output.last.cv_mae)
        .fill(jobs::CV_REGION_MAE_BEST, output.best.cv_mae)
        .fill(jobs::OOS_REGION_MAE_FINAL, oos.map(|s| s.final_mae))
        .fill(jobs::OOS_REGION_MAE_BEST, oos.map(|s| s.best_mae))
        .fill(jobs::OOS_CONSTANT_MAE, oos.map(|s| s.constant_mae))
        .fill(jobs::REGIONS, spec.regions as i64)
        .fill(
            jobs::DISCONNECTED_REGIONS,
            output.disconnected_regions as i64,
        )
        .fill(jobs::MOVES_PROPOSED, chain(|c| c.proposed))
        .fill(jobs::MOVES_INVALID, chain(|c| c.invalid))
        .fill(jobs::MOVES_ACCEPTED, chain(|c| c.accepted))
        .fill(
            jobs::REVERSIBLE,
            spec.kind.flip().map(FlipKind::is_reversible),
        );
    Ok(row.finish()?)
}

fn partition_rows(
    job: &JobHeader,
    spec: &PartitionSpec,
    output: &MethodOutcome,
) -> PolarsResult<polars::prelude::DataFrame> {
    let areas = &spec.data.areas;
    let mut which: Vec<(&str, &[u32])> = vec![
        ("final", &output.last.labels),
        ("best", &output.best.labels),
    ];
    if spec.kind.flip().is_some() {
        which.push(("start", &spec.data.start));
    }
    let n = areas.len();
    let coordinate = |axis: usize| {
        which
            .iter()
            .flat_map(|_| (0..n).map(move |a| areas.coordinates.as_ref().map(|c| c[a][axis])))
            .collect::<Vec<Option<f64>>>()
    };
    let rows = rows_of(&partitions::TABLE, job, which.len() * n)
        .set(
            partitions::WHICH,
            which
                .iter()
                .flat_map(|(name, _)| std::iter::repeat_n(name.to_string(), n)),
        )
        .set(
            partitions::AREA,
            which.iter().flat_map(|_| areas.ids.iter().cloned()),
        )
        .set(
            partitions::AREA_INDEX,
            which.iter().flat_map(|_| (0..n as i64).map(Some)),
        )
        .set(
            partitions::REGION,
            which
                .iter()
                .flat_map(|(_, labels)| labels.iter().map(|&r| i64::from(r))),
        )
        .set(partitions::X, coordinate(0))
        .set(partitions::Y, coordinate(1));
    Ok(rows.finish()?)
}

fn trace_rows(job: &JobHeader, output: &MethodOutcome) -> PolarsResult<polars::prelude::DataFrame> {
    let trace = &output.trace;
    let rows = rows_of(&partition_traces::TABLE, job, trace.len())
        .set(ITERATION, trace.iter().map(|p| p.iteration as i64))
        .set(partition_traces::F, trace.iter().map(|p| p.f))
        .set(
            partition_traces::TEMPERATURE,
            trace.iter().map(|p| p.temperature),
        );
    Ok(rows.finish()?)
}

/// The keys a partition study must give.
const REQUIRED: [Key; 5] = [
    DATA_AREAS,
    DATA_ADJACENCY,
    DATA_FEATURES,
    DATA_TARGET,
    DATA_ADMIN,
];

fn resolve_spec(
    settings: &Settings,
    resolver: &mut Resolver<'_>,
) -> Result<PartitionSpec, StudyError> {
    for key in REQUIRED {
        if settings.given(key).is_none() {
            return Err(resolver
                .error_at(
                    settings,
                    &[MODEL_FAMILY],
                    StudyErrorKind::Conflict,
                    format!(
                        "`{}` is required for model.family = \"partition\"",
                        key.dotted()
                    ),
                )
                .help(format!(
                    "add `{} = ...` under [{}]: {}",
                    key.name(),
                    key.section(),
                    key.doc()
                )));
        }
    }
    let kind = resolve_kind(settings, resolver)?;
    check_weights(settings, resolver)?;
    check_column_lists(settings, resolver)?;
    let folder = resolver.study_dir().to_path_buf();
    let areas_path = folder.join(settings.text(DATA_AREAS));
    let adjacency_path = folder.join(settings.text(DATA_ADJACENCY));
    let columns = area_columns(settings);
    let areas = read_areas(&areas_path, &columns).map_err(|e| {
        resolver.error_at(settings, &[DATA_AREAS], StudyErrorKind::Data, e.to_string())
    })?;
    let graph = read_adjacency(&adjacency_path, &areas).map_err(|e| {
        resolver.error_at(
            settings,
            &[DATA_ADJACENCY],
            StudyErrorKind::Data,
            e.to_string(),
        )
    })?;
    let admin = areas.admin.as_ref().expect("data.admin is required");
    let pieces = admin_pieces(&graph, admin);
    let admin_count = region_count(&pieces);
    let regions = match settings.given(MODEL_REGIONS) {
        Some(_) => settings.int(MODEL_REGIONS) as usize,
        None => admin_count,
    };
    if regions > admin_count {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_REGIONS],
                StudyErrorKind::OutOfRange,
                format!(
                    "model.regions = {regions}, but the administrative column `{}` splits into {admin_count} connected pieces, the chains' start",
                    settings.text(DATA_ADMIN)
                ),
            )
            .help(format!("allowed: 2 to {admin_count} (fewer merges the smallest pieces into a neighbour)")));
    }
    let start = merge_down(&graph, &pieces, regions);
    let oos_folds = resolve_oos_folds(settings, resolver, areas.len())?;
    let temperature = settings.float(MODEL_TEMPERATURE);
    let final_temperature = match settings.given(MODEL_FINAL_TEMPERATURE) {
        Some(_) => settings.float(MODEL_FINAL_TEMPERATURE),
        None => temperature,
    };
    let task = TaskSettings {
        model: settings.choice(MODEL_TASK_MODEL, TaskModelKind::from_name),
        ridge: settings.float(MODEL_RIDGE),
        aggregate: settings.choice(MODEL_AGGREGATE, TargetAggregate::from_name),
        error: settings.choice(MODEL_ERROR, ErrorKind::from_name),
        penalty: SizePenalty {
            min_size: settings.int(MODEL_MIN_REGION_SIZE) as usize,
            max_size: settings.int(MODEL_MAX_REGION_SIZE) as usize,
            bound_weight: settings.float(MODEL_SIZE_BOUND_WEIGHT),
            variance_weight: settings.float(MODEL_SIZE_VARIANCE_WEIGHT),
        },
        cv_folds: settings.int(MODEL_CV_FOLDS) as usize,
    };
    let chain = ChainSettings {
        kind: kind.flip().unwrap_or(FlipKind::Flip),
        iterations: settings.int(SAMPLER_ITERATIONS) as usize,
        temperature: Schedule {
            start: temperature,
            end: final_temperature,
        },
        softmax_temperature: settings.float(SAMPLER_SOFTMAX_TEMPERATURE),
        candidates: settings.int(SAMPLER_CANDIDATES) as usize,
        learning_rate: settings.float(SAMPLER_LEARNING_RATE),
        exploration: settings.float(SAMPLER_EXPLORATION),
        trace_every: settings.int(SAMPLER_THIN) as usize,
    };
    Ok(PartitionSpec {
        kind,
        areas_path,
        adjacency_path,
        data: Arc::new(PartitionData {
            areas,
            graph,
            start,
            admin_pieces: admin_count,
        }),
        regions,
        task,
        chain,
        oos_folds,
    })
}

/// `output.oos_folds`: 0 is none; otherwise from 2 to the number of areas (each fold holds at
/// least one area and leaves some to train on).
fn resolve_oos_folds(
    settings: &Settings,
    resolver: &Resolver<'_>,
    areas: usize,
) -> Result<Option<usize>, StudyError> {
    let message = match settings.int(OUTPUT_OOS_FOLDS) as usize {
        0 => return Ok(None),
        1 => "output.oos_folds = 1: one fold would hold out every area and leave none to train on"
            .to_string(),
        folds if folds > areas => format!(
            "output.oos_folds = {folds}, but the areas CSV holds {areas} areas: a fold would hold none"
        ),
        folds => return Ok(Some(folds)),
    };
    Err(resolver
        .error_at(
            settings,
            &[OUTPUT_OOS_FOLDS],
            StudyErrorKind::OutOfRange,
            message,
        )
        .help(format!(
            "allowed: 0 (no out-of-sample score) or 2 to {areas} folds"
        )))
}

/// `sampler.kind` of a partition job: flip when not given; another family's sampler is refused.
fn resolve_kind(settings: &Settings, resolver: &Resolver<'_>) -> Result<PartitionKind, StudyError> {
    resolver.sampler_kind(
        settings,
        NAME,
        DEFAULT_KIND,
        PartitionKind::from_name,
        PartitionKind::NAMES,
    )
}

/// Penalty weights must not reward violations; bounds must be ordered.
fn check_weights(settings: &Settings, resolver: &Resolver<'_>) -> Result<(), StudyError> {
    for key in [MODEL_SIZE_BOUND_WEIGHT, MODEL_SIZE_VARIANCE_WEIGHT] {
        let value = settings.float(key);
        if value < 0.0 {
            return Err(resolver
                .error_at(
                    settings,
                    &[key],
                    StudyErrorKind::OutOfRange,
                    format!("{} = {value} is negative", key.dotted()),
                )
                .help("allowed: a finite number >= 0"));
        }
    }
    let (min, max) = (
        settings.int(MODEL_MIN_REGION_SIZE),
        settings.int(MODEL_MAX_REGION_SIZE),
    );
    if max > 0 && max < min {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_MAX_REGION_SIZE, MODEL_MIN_REGION_SIZE],
                StudyErrorKind::Conflict,
                format!("model.max_region_size = {max} is below model.min_region_size = {min}"),
            )
            .help("allowed: 0 (no bound) or a number >= model.min_region_size"));
    }
    Ok(())
}

/// `data.features` names at least one column; `data.coordinates` none or two.
fn check_column_lists(settings: &Settings, resolver: &Resolver<'_>) -> Result<(), StudyError> {
    if column_list(&settings.text(DATA_FEATURES)).is_empty() {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_FEATURES],
                StudyErrorKind::OutOfRange,
                "data.features names no column",
            )
            .help("allowed: column names of the areas CSV, comma-separated (\"rm,lstat\")"));
    }
    let coordinates = column_list(&settings.text(DATA_COORDINATES));
    if !(coordinates.is_empty() || coordinates.len() == 2) {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_COORDINATES],
                StudyErrorKind::OutOfRange,
                format!("data.coordinates names {} columns", coordinates.len()),
            )
            .help("allowed: \"\" (none) or two column names, x then y (\"lon,lat\")"));
    }
    Ok(())
}

/// Comma-separated column names, trimmed, empty pieces dropped.
fn column_list(text: &str) -> Vec<String> {
    crate::study::parse_words(text)
}

fn area_columns(settings: &Settings) -> AreaColumns {
    let coordinates = column_list(&settings.text(DATA_COORDINATES));
    AreaColumns {
        id: settings.text(DATA_ID),
        features: column_list(&settings.text(DATA_FEATURES)),
        target: settings.text(DATA_TARGET),
        coordinates: match coordinates.as_slice() {
            [x, y] => Some([x.clone(), y.clone()]),
            _ => None,
        },
        admin: Some(settings.text(DATA_ADMIN)),
    }
}
