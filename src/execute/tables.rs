//! Turning one job's outcome into its rows of the result tables (see README "Result tables").
//!
//! Non-finite numbers never reach a table: every float column passes through [`finite`], and a
//! NaN where an estimate must exist fails the job with an error instead (see `job.rs`).

use polars::prelude::{Column, DataFrame, NamedFrom, PolarsResult, Series};

use super::job::JobResult;
use crate::plan::{Job, ParamValue};
use crate::sampler::PROBES;
use crate::study::keys::{Key, ValueType};

/// A float that is a number, or None.
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn floats(name: &str, values: impl IntoIterator<Item = f64>) -> Column {
    let values: Vec<Option<f64>> = values.into_iter().map(finite).collect();
    Series::new(name.into(), values).into()
}

fn optional_floats(name: &str, values: impl IntoIterator<Item = Option<f64>>) -> Column {
    let values: Vec<Option<f64>> = values.into_iter().map(|v| v.and_then(finite)).collect();
    Series::new(name.into(), values).into()
}

fn optional_ints(name: &str, values: impl IntoIterator<Item = Option<i64>>) -> Column {
    Series::new(
        name.into(),
        values.into_iter().collect::<Vec<Option<i64>>>(),
    )
    .into()
}

fn ints(name: &str, values: impl IntoIterator<Item = i64>) -> Column {
    Series::new(name.into(), values.into_iter().collect::<Vec<i64>>()).into()
}

fn texts(name: &str, values: Vec<Option<String>>) -> Column {
    Series::new(name.into(), values).into()
}

fn repeated_text(name: &str, value: &str, height: usize) -> Column {
    Series::new(name.into(), vec![value.to_string(); height]).into()
}

/// The parameter columns of a job, one value each, typed by their key (a `Null` too, so every
/// job's column has one type).
fn parameter_columns(job: &Job) -> Vec<Column> {
    let mut columns = vec![
        repeated_text("job_id", &job.id, 1),
        ints("replicate", [i64::from(job.replicate)]),
    ];
    for (key, value) in &job.params {
        columns.push(parameter_column(*key, value));
    }
    columns
}

fn parameter_column(key: Key, value: &ParamValue) -> Column {
    let name = key.column();
    match (key.value_type(), value) {
        (ValueType::Integer, ParamValue::Int(v)) => ints(name, [*v]),
        (ValueType::Integer, _) => Series::new(name.into(), [None::<i64>]).into(),
        (ValueType::Float | ValueType::FloatOrAlias(_), ParamValue::Float(v)) => floats(name, [*v]),
        (ValueType::Float | ValueType::FloatOrAlias(_), _) => optional_floats(name, [None]),
        // D stays an integer; [Dx, Dy] and [D] are text (a study cannot mix them in a sweep).
        (ValueType::GridShape, ParamValue::Int(v)) => ints(name, [*v]),
        (ValueType::Bool, ParamValue::Bool(v)) => Series::new(name.into(), [*v]).into(),
        (ValueType::Bool, _) => Series::new(name.into(), [None::<bool>]).into(),
        (
            ValueType::Text
            | ValueType::Choice(_)
            | ValueType::FloatOrWord(_)
            | ValueType::GridShape
            | ValueType::Window,
            ParamValue::Null,
        ) => texts(name, vec![None]),
        (
            ValueType::Text
            | ValueType::Choice(_)
            | ValueType::FloatOrWord(_)
            | ValueType::GridShape
            | ValueType::Window,
            value,
        ) => texts(name, vec![Some(value.to_string())]),
    }
}

/// The jobs-table row of a job that could not run.
pub fn failed_row(job: &Job, error: &str, wall_seconds: f64) -> PolarsResult<DataFrame> {
    let mut columns = parameter_columns(job);
    columns.push(repeated_text("status", "failed", 1));
    columns.push(texts("error", vec![Some(error.to_string())]));
    columns.push(repeated_text("warnings", "", 1));
    columns.push(floats("wall_seconds", [wall_seconds]));
    DataFrame::new(1, columns)
}

/// The jobs-table row of a finished simulation-based-calibration job: mean acceptance over its
/// replications and, per functional, the p-value of the ranks' uniformity (`sbc_p_<functional>`),
/// with their minimum in `sbc_p_min`.
pub fn sbc_row(job: &Job, run: &super::sbc::SbcRun, wall_seconds: f64) -> PolarsResult<DataFrame> {
    let count = run.replications.len().max(1) as f64;
    let acceptance = run
        .replications
        .iter()
        .map(|c| c.acceptance_rate)
        .sum::<f64>()
        / count;
    let sample_seconds: f64 = run.replications.iter().map(|c| c.sample_seconds).sum();
    let p_values = run.p_values();
    let p_min = p_values
        .iter()
        .filter_map(|p| p.1)
        .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.min(p))));
    let mut columns = parameter_columns(job);
    columns.push(repeated_text("status", "ok", 1));
    columns.push(texts("error", vec![None]));
    columns.push(repeated_text("warnings", "", 1));
    columns.extend([
        floats("acceptance_rate", [acceptance]),
        floats("wall_seconds", [wall_seconds]),
        floats("sample_seconds", [sample_seconds]),
        ints("sbc_replications", [run.replications.len() as i64]),
        ints("sbc_draws", [run.draws as i64]),
        optional_floats("sbc_p_min", [p_min]),
    ]);
    for (name, p) in p_values {
        columns.push(optional_floats(&format!("sbc_p_{name}"), [p]));
    }
    DataFrame::new(1, columns)
}

/// The jobs-table row of a finished job.
pub fn job_row(job: &Job, result: &JobResult, wall_seconds: f64) -> PolarsResult<DataFrame> {
    let run = &result.run;
    let scores = &result.scores;
    let iterations = job.sampler.iterations() as f64 * job.sampler.chains() as f64;
    let (loglik_evaluations, gradient_evaluations) =
        run.evaluations_per_iteration(job.sampler.iterations());
    let cells = &result.cells;
    let mut columns = parameter_columns(job);
    columns.push(repeated_text("status", "ok", 1));
    columns.push(texts("error", vec![None]));
    columns.push(repeated_text("warnings", &result.warnings.join("; "), 1));
    columns.extend([
        floats("acceptance_rate", [run.acceptance_rate]),
        optional_floats("mae", [scores.mae]),
        floats("wall_seconds", [wall_seconds]),
        floats("setup_seconds", [result.setup_seconds]),
        floats("sample_seconds", [run.sample_seconds]),
        floats("exact_seconds", [result.exact_seconds]),
        floats("iterations_per_second", [iterations / run.sample_seconds]),
        floats("cpu_seconds", [result.cpu_seconds]),
        optional_floats("step_size", [run.mean_step_size()]),
        floats("loglik_evals_per_iteration", [loglik_evaluations]),
        floats("gradient_evals_per_iteration", [gradient_evaluations]),
        floats("jitter", [result.jitter]),
        ints("latent_dim", [result.latent_dim as i64]),
        optional_ints("torus_x", [result.embedding.map(|e| e.torus_x as i64)]),
        optional_ints("torus_y", [result.embedding.map(|e| e.torus_y as i64)]),
        optional_floats(
            "clipped_eigenvalue",
            [result.embedding.map(|e| e.most_negative_eigenvalue)],
        ),
        floats("model_mean_value", [result.mean]),
        ints("observed_cells", [result.dataset.observed.len() as i64]),
        optional_floats("exact_rmse", [scores.exact_rmse]),
        optional_floats("prediction_error", [scores.prediction_error]),
        optional_floats("count_mae", [scores.count_mae]),
        optional_floats("baseline_count_mae", [scores.baseline_count_mae]),
    ]);
    let d = &result.diagnostics;
    columns.extend([
        optional_floats("ess_bulk", [d.ess_bulk]),
        optional_floats("ess_tail", [d.ess_tail]),
        optional_floats("rhat", [d.rhat]),
        optional_floats(
            "ess_bulk_per_second",
            [d.ess_bulk.map(|e| e / run.sample_seconds)],
        ),
        optional_floats("cell_ess_min", [d.cell_ess_min]),
        optional_floats("cell_ess_median", [d.cell_ess_median]),
        optional_floats("mcse_mean_max", [d.mcse_mean_max]),
        optional_floats("cell_ess_bulk_min", [cells.min_ess_bulk()]),
        optional_floats("cell_ess_tail_min", [cells.min_ess_tail()]),
        optional_floats("cell_rhat_max", [cells.max_rhat()]),
        optional_floats(
            "cell_ess_bulk_min_per_second",
            [cells.min_ess_bulk().map(|e| e / result.cpu_seconds)],
        ),
        ints("cell_draws_per_chain", [cells.draws_per_chain as i64]),
        ints("cell_draws_thin", [cells.thin as i64]),
    ]);
    let evidence = result.evidence.as_ref();
    columns.extend([
        optional_floats("log_evidence", [evidence.map(|e| e.estimate)]),
        optional_floats("log_evidence_se", [evidence.map(|e| e.standard_error)]),
        optional_floats(
            "evidence_effective_draws",
            [evidence.map(|e| e.effective_draws)],
        ),
    ]);
    DataFrame::new(1, columns)
}

/// One row per grid cell.
pub fn fields(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let grid = job.model.grid;
    let n = grid.cells();
    let run = &result.run;
    let data = &result.dataset;
    let mut observed = vec![false; n];
    for &c in &data.observed.cells {
        observed[c] = true;
    }
    let cells: Vec<(usize, usize)> = (0..n).map(|c| grid.cell(c)).collect();
    let positions: Vec<(f64, f64)> = (0..n).map(|c| grid.position(c)).collect();
    let absent = || vec![None; n];
    let some = |v: &[f64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
    let exact = result.exact.as_ref();
    let functional = run.functional_mean.as_deref();
    let kind = job.model.likelihood;
    use crate::model::spec::LikelihoodKind::{Poisson, Probit};
    let columns = vec![
        repeated_text("job_id", &job.id, n),
        ints("cell", (0..n).map(|c| c as i64)),
        ints("i", cells.iter().map(|c| c.0 as i64)),
        ints("j", cells.iter().map(|c| c.1 as i64)),
        floats("x", positions.iter().map(|p| p.0)),
        floats("y", positions.iter().map(|p| p.1)),
        optional_floats("truth", data.truth.as_deref().map_or_else(absent, some)),
        Series::new("observed".into(), observed).into(),
        optional_floats("observation", data.value_by_cell()),
        floats("post_mean", run.post_mean.iter().copied()),
        floats("post_sd", run.post_sd.iter().copied()),
        optional_floats(
            "post_mean_mcse",
            run.post_mean_mcse.as_deref().map_or_else(absent, some),
        ),
        optional_floats("exact_mean", exact.map_or_else(absent, |e| some(&e.mean))),
        optional_floats("exact_sd", exact.map_or_else(absent, |e| some(&e.sd))),
        optional_floats(
            "p_positive",
            functional
                .filter(|_| kind == Probit)
                .map_or_else(absent, some),
        ),
        optional_floats(
            "expected_count",
            functional
                .filter(|_| kind == Poisson)
                .map_or_else(absent, some),
        ),
        optional_floats("ess_bulk", result.cells.ess_bulk.iter().copied()),
        optional_floats("ess_tail", result.cells.ess_tail.iter().copied()),
        optional_floats("rhat", result.cells.rhat.iter().copied()),
        optional_floats("mcse_mean", result.cells.mcse_mean.iter().copied()),
    ];
    DataFrame::new(n, columns)
}

/// The thinned traces of every chain.
pub fn traces(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let chains = &result.run.chains;
    let height: usize = chains.iter().map(|c| c.trace.iteration.len()).sum();
    let chain_index = chains
        .iter()
        .enumerate()
        .flat_map(|(c, chain)| std::iter::repeat_n(c as i64, chain.trace.iteration.len()));
    let iteration = chains
        .iter()
        .flat_map(|c| c.trace.iteration.iter().map(|&t| t as i64));
    let loglik = chains.iter().flat_map(|c| c.trace.loglik.iter().copied());
    let mut columns = vec![
        repeated_text("job_id", &job.id, height),
        ints("chain", chain_index),
        ints("iteration", iteration),
        floats("loglik", loglik),
    ];
    let field_mean = chains
        .iter()
        .flat_map(|c| c.trace.field_mean.iter().copied());
    columns.push(floats("field_mean", field_mean));
    for p in 0..PROBES {
        let values = chains
            .iter()
            .flat_map(|c| c.trace.probes.iter().map(move |row| row[p]));
        columns.push(floats(&format!("probe_{p}"), values));
    }
    DataFrame::new(height, columns)
}

pub fn chains(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let chains = &result.run.chains;
    DataFrame::new(
        chains.len(),
        vec![
            repeated_text("job_id", &job.id, chains.len()),
            ints("chain", (0..chains.len()).map(|c| c as i64)),
            floats("acceptance_rate", chains.iter().map(|c| c.acceptance_rate)),
            optional_floats("step_size", chains.iter().map(|c| c.step_size)),
            ints(
                "loglik_evaluations",
                chains.iter().map(|c| c.loglik_evaluations as i64),
            ),
            ints(
                "gradient_evaluations",
                chains.iter().map(|c| c.gradient_evaluations as i64),
            ),
        ],
    )
}

/// `output.field_draws` thinned draws per chain of every cell, long: one row per (chain, draw,
/// cell), the layout ArviZ and R's posterior read (pivot `cell` to columns).
pub fn draws(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let kept = super::cells::kept_field_draws(&result.run, job.output.field_draws);
    let cells = kept.first().map_or(0, |k| k.2.len());
    let height = kept.len() * cells;
    let chain = kept
        .iter()
        .flat_map(|(c, _, _)| std::iter::repeat_n(*c as i64, cells));
    let draw = kept
        .iter()
        .flat_map(|(_, d, _)| std::iter::repeat_n(*d as i64, cells));
    let cell = kept.iter().flat_map(|_| (0..cells).map(|c| c as i64));
    let value = kept.iter().flat_map(|(_, _, field)| field.iter().copied());
    DataFrame::new(
        height,
        vec![
            repeated_text("job_id", &job.id, height),
            ints("chain", chain),
            ints("draw", draw),
            ints("cell", cell),
            floats("value", value),
        ],
    )
}

pub fn convergence(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let curve = &result.run.convergence;
    DataFrame::new(
        curve.len(),
        vec![
            repeated_text("job_id", &job.id, curve.len()),
            ints("iteration", curve.iter().map(|p| p.0 as i64)),
            floats("rms_to_exact", curve.iter().map(|p| p.1)),
        ],
    )
}

pub fn autocorrelation(job: &Job, result: &JobResult) -> PolarsResult<DataFrame> {
    let acf = &result.diagnostics.loglik_autocorrelation;
    DataFrame::new(
        acf.len(),
        vec![
            repeated_text("job_id", &job.id, acf.len()),
            ints("lag", (0..acf.len()).map(|k| k as i64)),
            floats("autocorrelation", acf.iter().copied()),
        ],
    )
}
