//! Turning one latent-field job's outcome into its rows of the result tables. The tables and
//! their columns are declared in [`super::schema`]; this module only says which value goes in
//! which declared column, through [`Rows`], which puts them in table order and checks the rows
//! against the declaration.
//!
//! Non-finite numbers never reach a table: [`Rows`] turns them into nulls, and a NaN where an
//! estimate must exist fails the job with an error instead (see `job.rs`).

use polars::prelude::DataFrame;

use super::cells::kept_draw_indices;
use super::job::JobResult;
use super::quantiles::Quantiles;
use super::schema::{
    chains, coefficients, convergence, draws, fields, hyper, inla_grid, jobs, marks, region, sites,
    traces,
};
use super::score::Scores;
use super::sites::SiteSummary;
use super::spec::FieldJob;
use crate::job::JobHeader;
use crate::model::DataSource;
use crate::model::hyper::HyperName;
use crate::model::spec::LikelihoodKind;
use crate::sampler::PROBES;
use crate::sampler::approximation::InlaOutcome;
use crate::sampler::driver::ChainOutput;
use crate::sampler::inla_check::CheckedPoint;
use crate::table::shared::{ACCEPTANCE_RATE, CHAIN, ITERATION, STEP_SIZE, jobs as shared_jobs};
use crate::table::{JobStatus, Rows, SchemaError, TableChunks, job_rows, rows_of};

/// The jobs-table row of a finished simulation-based-calibration job: mean acceptance over its
/// replications and, per functional, the p-value of the ranks' uniformity (`sbc_p_<functional>`),
/// with their minimum in `sbc_p_min`.
pub(crate) fn sbc_row(
    job: &JobHeader,
    run: &super::sbc::SbcRun,
    wall_seconds: f64,
) -> Result<DataFrame, SchemaError> {
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
    let mut rows = job_rows(&jobs::TABLE, job)
        .fill(shared_jobs::STATUS, JobStatus::Ok)
        .fill(shared_jobs::ERROR, None)
        .fill(shared_jobs::WARNINGS, String::new())
        .fill(ACCEPTANCE_RATE, acceptance)
        .fill(shared_jobs::WALL_SECONDS, wall_seconds)
        .fill(shared_jobs::SAMPLE_SECONDS, sample_seconds)
        .fill(jobs::SBC_REPLICATIONS, run.replications.len() as i64)
        .fill(jobs::SBC_DRAWS, run.draws as i64)
        .fill(jobs::SBC_P_MIN, p_min);
    for (name, p) in p_values {
        rows = rows.set_member::<f64, _>(&jobs::SBC_P, &jobs::SBC_P.member(name), [p]);
    }
    rows.finish()
}

/// The jobs-table row of a finished job.
pub(crate) fn job_row(
    job: FieldJob<'_>,
    result: &JobResult,
    wall_seconds: f64,
) -> Result<DataFrame, SchemaError> {
    let run = &result.run;
    let scores = &result.scores;
    let d = &result.diagnostics;
    let evidence = result.evidence.as_ref();
    let iterations = job.spec.sampler.iterations() as f64 * job.spec.sampler.chains() as f64;
    let (loglik_evaluations, gradient_evaluations) =
        run.evaluations_per_iteration(job.spec.sampler.iterations());
    let cells = &result.cells;
    let rows = job_rows(&jobs::TABLE, job.header)
        .fill(shared_jobs::STATUS, JobStatus::Ok)
        .fill(shared_jobs::ERROR, None)
        .fill(
            shared_jobs::WARNINGS,
            result.warnings.join(shared_jobs::WARNING_SEPARATOR),
        )
        .fill(ACCEPTANCE_RATE, run.acceptance_rate)
        .fill(jobs::MAE, scores.mae)
        .fill(shared_jobs::WALL_SECONDS, wall_seconds)
        .fill(jobs::SETUP_SECONDS, result.setup_seconds)
        .fill(shared_jobs::SAMPLE_SECONDS, run.sample_seconds)
        .fill(jobs::EXACT_SECONDS, result.exact_seconds)
        .fill(
            shared_jobs::ITERATIONS_PER_SECOND,
            iterations / result.cpu_seconds,
        )
        .fill(shared_jobs::CPU_SECONDS, result.cpu_seconds)
        .fill(STEP_SIZE, run.mean_step_size())
        .fill(jobs::LOGLIK_EVALS_PER_ITERATION, loglik_evaluations)
        .fill(jobs::GRADIENT_EVALS_PER_ITERATION, gradient_evaluations)
        .fill(jobs::JITTER, result.jitter)
        .fill(jobs::LATENT_DIM, result.latent_dim as i64)
        .fill(jobs::TORUS_X, result.embedding.map(|e| e.torus_x as i64))
        .fill(jobs::TORUS_Y, result.embedding.map(|e| e.torus_y as i64))
        .fill(
            jobs::CLIPPED_EIGENVALUE,
            result.embedding.map(|e| e.most_negative_eigenvalue),
        )
        .fill(jobs::MODEL_MEAN_VALUE, result.mean)
        .fill(
            jobs::OBSERVED_CELLS,
            result.dataset.observed.cells.len() as i64,
        )
        .fill(
            jobs::HELD_OUT_CELLS,
            holds_out_cells(job.spec.data.source())
                .then_some(result.dataset.held_out.cells.len() as i64),
        )
        .fill(
            jobs::OBSERVED_SITES,
            result.dataset.sites.as_ref().map(|s| s.fitted.len() as i64),
        )
        .fill(
            jobs::HELD_OUT_SITES,
            result
                .dataset
                .sites
                .as_ref()
                .map(|s| s.held_out.len() as i64),
        )
        .fill(jobs::EXACT_RMSE, scores.exact_rmse)
        .fill(jobs::PREDICTION_ERROR, scores.prediction_error)
        .fill(jobs::COUNT_MAE, scores.count_mae)
        .fill(jobs::BASELINE_COUNT_MAE, scores.baseline_count_mae)
        .fill(jobs::HELDOUT_LPD, scores.heldout_lpd)
        .fill(shared_jobs::ESS_BULK, d.ess_bulk)
        .fill(jobs::ESS_TAIL, d.ess_tail)
        .fill(jobs::RHAT, d.rhat)
        .fill(
            shared_jobs::ESS_BULK_PER_SECOND,
            d.ess_bulk.map(|e| e / result.cpu_seconds),
        )
        .fill(jobs::CELL_ESS_MIN, d.cell_ess_min)
        .fill(jobs::CELL_ESS_MEDIAN, d.cell_ess_median)
        .fill(jobs::MCSE_MEAN_MAX, d.mcse_mean_max)
        .fill(jobs::CELL_ESS_BULK_MIN, cells.min_ess_bulk())
        .fill(jobs::CELL_ESS_TAIL_MIN, cells.min_ess_tail())
        .fill(jobs::CELL_RHAT_MAX, cells.max_rhat())
        .fill(
            jobs::CELL_ESS_BULK_MIN_PER_SECOND,
            cells.min_ess_bulk().map(|e| e / result.cpu_seconds),
        )
        .fill(jobs::CELL_DRAWS_PER_CHAIN, cells.draws_per_chain as i64)
        .fill(jobs::CELL_DRAWS_THIN, cells.thin as i64)
        .fill(jobs::RANK, run.notes.rank.map(|r| r as i64))
        .fill(
            jobs::NEWTON_ITERATIONS,
            run.notes.newton_iterations.map(|n| n as i64),
        )
        .fill(
            jobs::LAPLACE_FITS,
            inla_outcome(result).map(|inla| inla.grid.laplace_fits as i64),
        )
        .fill(
            jobs::INLA_TAIL_FALL,
            inla_outcome(result)
                .and_then(|inla| inla.grid.heaviest_tail())
                .map(|(_, _, fall)| fall)
                .filter(|fall| fall.is_finite()),
        )
        .fill(jobs::LOG_EVIDENCE, evidence.map(|e| e.estimate))
        .fill(jobs::LOG_EVIDENCE_SE, evidence.map(|e| e.standard_error))
        .fill(
            jobs::EVIDENCE_EFFECTIVE_DRAWS,
            evidence.map(|e| e.effective_draws),
        );
    let rows = binomial_scores(rows, job.spec.model.likelihood, scores);
    let rows = loo_columns(rows, job.spec.output.log_likelihood, result);
    let quantiles = &job.spec.output.quantiles;
    coefficient_columns(hyper_columns(rows, result, quantiles), result, quantiles).finish()
}

/// Whether `data.holdout` holds out cells of this data source (grid CSVs and binned points; sites
/// hold out measurements, simulated data nothing).
fn holds_out_cells(source: DataSource) -> bool {
    matches!(source, DataSource::Csv | DataSource::Points)
}

/// The PSIS-LOO and WAIC columns, written for jobs with `output.log_likelihood` only (so other
/// studies' tables keep their columns); null where they could not be computed.
fn loo_columns(rows: Rows, asked: bool, result: &JobResult) -> Rows {
    if !asked {
        return rows;
    }
    let loo = result.loo.as_ref().map(|l| &l.summary);
    rows.fill(jobs::ELPD_LOO, loo.map(|l| l.elpd_loo))
        .fill(jobs::ELPD_LOO_SE, loo.map(|l| l.elpd_loo_se))
        .fill(jobs::P_LOO, loo.map(|l| l.p_loo))
        .fill(jobs::PARETO_K_MAX, loo.map(|l| l.pareto_k_max))
        .fill(jobs::PARETO_K_BAD, loo.map(|l| l.pareto_k_bad as i64))
        .fill(jobs::ELPD_WAIC, loo.map(|l| l.elpd_waic))
        .fill(jobs::P_WAIC, loo.map(|l| l.p_waic))
}

/// The binomial scores' columns, written for binomial jobs only (so the other likelihoods'
/// tables keep their columns).
fn binomial_scores(rows: Rows, likelihood: LikelihoodKind, scores: &Scores) -> Rows {
    if likelihood != LikelihoodKind::Binomial {
        return rows;
    }
    rows.fill(jobs::SHARE_MAE, scores.share_mae)
        .fill(jobs::BASELINE_SHARE_MAE, scores.baseline_share_mae)
}

/// The `coef_<name>_<statistic>` columns, for a job with covariates.
fn coefficient_columns(mut rows: Rows, result: &JobResult, quantiles: &Quantiles) -> Rows {
    let (statistics, raw_statistics) = (
        jobs::hyper_statistics(quantiles),
        jobs::raw_statistics(quantiles),
    );
    for summary in &result.coefficients {
        let standardised = statistics.iter().zip(summary.posterior.statistics());
        let raw = raw_statistics.iter().zip(summary.raw.statistics());
        for (statistic, value) in standardised.chain(raw) {
            let column = jobs::COEF.member(format!("{}_{statistic}", summary.name));
            rows = rows.set_member::<f64, _>(&jobs::COEF, &column, [value]);
        }
    }
    rows
}

/// The stored coefficients of every chain: one row per chain, stored draw and covariate.
pub(crate) fn coefficients(job: &JobHeader, result: &JobResult) -> Result<DataFrame, SchemaError> {
    let names: Vec<&str> = result
        .coefficients
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    let p = names.len();
    let mut rows: Vec<(i64, i64, &str, f64)> = Vec::new();
    for (c, chain) in result.run.chains.iter().enumerate() {
        let draws = &chain.coefficients;
        for (row, &iteration) in draws.iteration.iter().enumerate() {
            for (k, &name) in names.iter().enumerate() {
                let value = draws.values[row * p + k];
                rows.push((c as i64, iteration as i64, name, value));
            }
        }
    }
    rows_of(&coefficients::TABLE, job, rows.len())
        .set(CHAIN, rows.iter().map(|r| r.0))
        .set(ITERATION, rows.iter().map(|r| r.1))
        .set(coefficients::NAME, rows.iter().map(|r| r.2.to_string()))
        .set(coefficients::VALUE, rows.iter().map(|r| r.3))
        .finish()
}

/// The `hyper_<name>_<statistic>` columns and the hyperparameter acceptance rate, for a job that
/// infers hyperparameters.
fn hyper_columns(mut rows: Rows, result: &JobResult, quantiles: &Quantiles) -> Rows {
    if result.hyper.is_empty() {
        return rows;
    }
    let statistics = jobs::hyper_statistics(quantiles);
    for summary in &result.hyper {
        for (statistic, value) in statistics.iter().zip(summary.posterior.statistics()) {
            let column = jobs::HYPER.member(format!("{}_{statistic}", summary.name));
            rows = rows.set_member::<f64, _>(&jobs::HYPER, &column, [value]);
        }
    }
    rows.fill(
        jobs::HYPER_ACCEPTANCE_RATE,
        super::hyper::acceptance_rate(&result.run),
    )
}

/// The traced inferred hyperparameters of every chain: one row per chain, traced state and name.
pub(crate) fn hyper(job: &JobHeader, result: &JobResult) -> Result<DataFrame, SchemaError> {
    let names: Vec<HyperName> = result.hyper.iter().map(|s| s.name).collect();
    let mut rows: Vec<(i64, i64, HyperName, f64)> = Vec::new();
    for (c, chain) in result.run.chains.iter().enumerate() {
        let trace = &chain.trace;
        for (row, &iteration) in trace.iteration.iter().enumerate() {
            for (k, &name) in names.iter().enumerate() {
                let value = trace.hyper_at(row, k, names.len());
                rows.push((c as i64, iteration as i64, name, value));
            }
        }
    }
    rows_of(&hyper::TABLE, job, rows.len())
        .set(CHAIN, rows.iter().map(|r| r.0))
        .set(ITERATION, rows.iter().map(|r| r.1))
        .set(hyper::NAME, rows.iter().map(|r| r.2.name().to_string()))
        .set(hyper::VALUE, rows.iter().map(|r| r.3))
        .finish()
}

/// The outline of the job's study region: one row per ring and vertex (`None` without
/// `model.region`).
pub(crate) fn region(job: FieldJob<'_>) -> Option<Result<DataFrame, SchemaError>> {
    let rings: Vec<&[(f64, f64)]> = job.spec.region.as_ref()?.region.rings().collect();
    let vertices: Vec<(i64, i64, (f64, f64))> = rings
        .iter()
        .enumerate()
        .flat_map(|(r, ring)| {
            ring.iter()
                .enumerate()
                .map(move |(v, &point)| (r as i64 + 1, v as i64 + 1, point))
        })
        .collect();
    Some(
        rows_of(&region::TABLE, job.header, vertices.len())
            .set(region::RING, vertices.iter().map(|v| v.0))
            .set(region::VERTEX, vertices.iter().map(|v| v.1))
            .set(region::X, vertices.iter().map(|v| v.2.0))
            .set(region::Y, vertices.iter().map(|v| v.2.1))
            .finish(),
    )
}

/// The named points the job's maps mark: one row per mark (`None` without `output.marks`).
pub(crate) fn marks(job: FieldJob<'_>) -> Option<Result<DataFrame, SchemaError>> {
    let marks = &job.spec.output.marks;
    if marks.is_empty() {
        return None;
    }
    Some(
        rows_of(&marks::TABLE, job.header, marks.len())
            .set(marks::MARK, (1..=marks.len()).map(|k| k as i64))
            .set(marks::LABEL, marks.iter().map(|m| m.label.clone()))
            .set(marks::X, marks.iter().map(|m| m.x))
            .set(marks::Y, marks.iter().map(|m| m.y))
            .finish(),
    )
}

/// The field at the job's sites: one row per measurement (fitted, then held out) and per site
/// to predict at (`None` when the job has neither).
pub(crate) fn sites(
    job: FieldJob<'_>,
    result: &JobResult,
) -> Option<Result<DataFrame, SchemaError>> {
    let summaries = result.sites.as_ref()?;
    let model = &job.spec.model;
    let mut rows: Vec<SiteRow<'_>> = Vec::new();
    if let Some(data) = &result.dataset.sites {
        let sets = [
            (sites::FITTED, &data.fitted, &summaries.fitted),
            (sites::HELD_OUT, &data.held_out, &summaries.held_out),
        ];
        for (set_name, set, summary) in sets {
            rows.extend((0..set.len()).map(|k| SiteRow {
                set: set_name,
                row: set.rows[k],
                at: set.positions[k],
                value: Some(set.values[k]),
                trials: set.trials.get(k).copied(),
                summary: &summary[k],
            }));
        }
    }
    let measured = rows.len();
    let predict = job.spec.output.predict_sites.as_ref().map(|p| &p.sites);
    if let Some(predict) = predict {
        rows.extend(
            predict
                .positions
                .iter()
                .enumerate()
                .map(|(k, &at)| SiteRow {
                    set: sites::PREDICT,
                    row: k,
                    at,
                    value: None,
                    trials: None,
                    summary: &summaries.predict[k],
                }),
        );
    }
    let noise_variance = summaries.noise_variance;
    let predictive_sd = |s: &SiteSummary| Some((s.sd?.powi(2) + noise_variance?).sqrt());
    let column = |f: fn(&SiteSummary) -> Option<f64>| rows.iter().map(move |r| f(r.summary));
    let mut table = rows_of(&sites::TABLE, job.header, rows.len())
        .set(sites::SET, rows.iter().map(|r| r.set.to_string()))
        .set(sites::ROW, rows.iter().map(|r| r.row as i64 + 1))
        .set(sites::X, rows.iter().map(|r| r.at.0))
        .set(sites::Y, rows.iter().map(|r| r.at.1))
        .set(sites::VALUE, rows.iter().map(|r| r.value))
        .set(sites::POST_MEAN, rows.iter().map(|r| r.summary.mean))
        .set(sites::POST_SD, column(|s| s.sd))
        .set(
            sites::PREDICTIVE_SD,
            rows.iter().map(|r| predictive_sd(r.summary)),
        )
        .set(sites::ESS_BULK, column(|s| s.ess_bulk))
        .set(sites::RHAT, column(|s| s.rhat))
        .set(sites::MCSE_MEAN, column(|s| s.mcse_mean))
        .set(
            sites::LOG_PREDICTIVE_DENSITY,
            column(|s| s.log_predictive_density),
        );
    if model.likelihood == LikelihoodKind::Binomial {
        table = table.set(sites::TRIALS, rows.iter().map(|r| r.trials));
    }
    for (k, quantile) in job.spec.output.quantiles.iter().enumerate() {
        let column = sites::QUANTILE.member(&quantile.digits);
        let values = rows.iter().map(|r| r.summary.quantiles.get(k).copied());
        table = table.set_member::<f64, _>(&sites::QUANTILE, &column, values);
    }
    for (k, &t) in job.spec.output.exceedance.iter().enumerate() {
        let column = sites::EXCEEDANCE.member(super::risk::exceedance_column(t));
        let values = rows.iter().map(|r| r.summary.exceedance.get(k).copied());
        table = table.set_member::<f64, _>(&sites::EXCEEDANCE, &column, values);
    }
    for (name, values) in predict.map_or(&[][..], |p| &p.carried[..]) {
        let carried = std::iter::repeat_n(None, measured).chain(values.iter().cloned().map(Some));
        table =
            table.set_member::<String, _>(&sites::CARRIED, &sites::CARRIED.member(name), carried);
    }
    Some(table.finish())
}

/// One row of sites.parquet: a measurement, or a site to predict at.
struct SiteRow<'a> {
    set: &'static str,
    row: usize,
    at: (f64, f64),
    value: Option<f64>,
    trials: Option<f64>,
    summary: &'a SiteSummary,
}

/// What an INLA job found about its hyperparameters (`None` for every other kind).
pub(crate) fn inla_outcome(result: &JobResult) -> Option<&InlaOutcome> {
    result.run.approximation.as_ref()?.inla.as_ref()
}

/// An INLA job's grid: one row per kept point, the hyperparameters it fixes null.
pub(crate) fn inla_grid(job: &JobHeader, inla: &InlaOutcome) -> Result<DataFrame, SchemaError> {
    let points = &inla.grid.points;
    let value = |name: HyperName| {
        let inferred = inla.names.contains(&name);
        points
            .iter()
            .map(move |p| inferred.then(|| p.values.get(name)))
    };
    let checked_points = inla
        .laplace_check
        .as_ref()
        .map_or(&[][..], |c| &c.points[..]);
    let checked = |field: fn(&CheckedPoint) -> f64| {
        (0..points.len()).map(move |k| checked_points.iter().find(|c| c.point == k).map(field))
    };
    rows_of(&inla_grid::TABLE, job, points.len())
        .set(inla_grid::POINT, (0..points.len()).map(|k| k as i64))
        .set(inla_grid::LENGTH_SCALE, value(HyperName::LengthScale))
        .set(inla_grid::LENGTH_SCALE_Y, value(HyperName::LengthScaleY))
        .set(inla_grid::VARIANCE, value(HyperName::Variance))
        .set(inla_grid::MEAN, value(HyperName::Mean))
        .set(inla_grid::LOG_DENSITY, points.iter().map(|p| p.log_density))
        .set(inla_grid::WEIGHT, points.iter().map(|p| p.weight))
        .set(
            inla_grid::LOG_EVIDENCE,
            points.iter().map(|p| p.log_evidence),
        )
        .set(
            inla_grid::EVIDENCE_CORRECTION,
            points.iter().enumerate().map(|(k, p)| {
                p.evidence_correction.or_else(|| {
                    checked_points
                        .iter()
                        .find(|c| c.point == k)
                        .and_then(|c| c.correction)
                })
            }),
        )
        .set(inla_grid::LAPLACE_ERROR, checked(|c| c.laplace_error))
        .set(
            inla_grid::IMPORTANCE_EFFECTIVE_DRAWS,
            checked(|c| c.effective_draws),
        )
        .finish()
}

/// One row per grid cell.
pub fn fields(job: FieldJob<'_>, result: &JobResult) -> Result<DataFrame, SchemaError> {
    let grid = job.spec.model.grid;
    let n = grid.cells();
    let run = &result.run;
    let data = &result.dataset;
    let mut observed = vec![false; n];
    for &c in &data.observed.cells {
        observed[c] = true;
    }
    let cells: Vec<(usize, usize)> = (0..n).map(|c| grid.cell(c)).collect();
    let positions: Vec<(f64, f64)> = (0..n).map(|c| grid.position(c)).collect();
    // A per-cell column that may not apply to this job: its values, or nulls.
    let per_cell = |values: Option<&[f64]>| -> Vec<Option<f64>> {
        values.map_or_else(|| vec![None; n], |v| v.iter().copied().map(Some).collect())
    };
    let exact = result.exact.as_ref();
    let functional = run.functional_mean.as_deref();
    let likelihood = job.spec.model.likelihood;
    let functional_if = |kind: LikelihoodKind| per_cell(functional.filter(|_| likelihood == kind));
    let quantiles = &job.spec.output.quantiles;
    let intensity = super::risk::intensity(run, &data.offsets, grid.cell_area(), quantiles)
        .filter(|_| likelihood == LikelihoodKind::Poisson);
    let intensity = intensity.as_ref();
    let mut rows = rows_of(&fields::TABLE, job.header, n)
        .set(fields::CELL, (0..n).map(|c| c as i64))
        .set(fields::I, cells.iter().map(|c| c.0 as i64))
        .set(fields::J, cells.iter().map(|c| c.1 as i64))
        .set(fields::X, positions.iter().map(|p| p.0))
        .set(fields::Y, positions.iter().map(|p| p.1))
        .set(fields::INSIDE_FRACTION, job.spec.inside_fraction())
        .set(fields::TRUTH, per_cell(data.truth.as_deref()))
        .set(fields::OBSERVED, observed)
        .set(fields::OBSERVATION, data.value_by_cell())
        .set(fields::POST_MEAN, run.post_mean.iter().copied())
        .set(fields::POST_SD, run.post_sd.iter().copied())
        .set(
            fields::POST_MEAN_MCSE,
            per_cell(run.post_mean_mcse.as_deref()),
        )
        .set(
            fields::EXACT_MEAN,
            per_cell(exact.map(|e| e.mean.as_slice())),
        )
        .set(fields::EXACT_SD, per_cell(exact.map(|e| e.sd.as_slice())))
        .set(fields::P_POSITIVE, functional_if(LikelihoodKind::Probit))
        .set(
            fields::EXPECTED_COUNT,
            functional_if(LikelihoodKind::Poisson),
        )
        .set(fields::ESS_BULK, result.cells.ess_bulk.iter().copied())
        .set(fields::ESS_TAIL, result.cells.ess_tail.iter().copied())
        .set(fields::RHAT, result.cells.rhat.iter().copied())
        .set(fields::MCSE_MEAN, result.cells.mcse_mean.iter().copied())
        .set(
            fields::INTENSITY_MEAN,
            per_cell(intensity.map(|i| i.mean.as_slice())),
        );
    let by_cell = intensity.and_then(|i| i.quantiles.as_ref());
    for (k, quantile) in quantiles.iter().enumerate() {
        let column = fields::INTENSITY_QUANTILE.member(&quantile.digits);
        let values: Vec<Option<f64>> = match by_cell {
            Some(cells) => cells.iter().map(|q| Some(q[k])).collect(),
            None => vec![None; n],
        };
        rows = rows.set_member::<f64, _>(&fields::INTENSITY_QUANTILE, &column, values);
    }
    if likelihood == LikelihoodKind::Binomial {
        // Binomial jobs only, so the other likelihoods' tables keep their columns.
        rows = rows
            .set(fields::TRIALS, data.trials_by_cell())
            .set(fields::SUCCESS_PROBABILITY, per_cell(functional));
    }
    if likelihood == LikelihoodKind::Poisson && data.offsets.log_exposure.is_some() {
        rows = rows.set(fields::OFFSET, (0..n).map(|c| data.offsets.at(c)));
    }
    for (k, &t) in job.spec.output.exceedance.iter().enumerate() {
        let column = fields::EXCEEDANCE.member(super::risk::exceedance_column(t));
        let values = per_cell(run.exceedance.get(k).map(Vec::as_slice));
        rows = rows.set_member::<f64, _>(&fields::EXCEEDANCE, &column, values);
    }
    rows.finish()
}

/// The thinned traces of every chain.
pub fn traces(job: &JobHeader, result: &JobResult) -> Result<DataFrame, SchemaError> {
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
    let field_mean = chains
        .iter()
        .flat_map(|c| c.trace.field_mean.iter().copied());
    let mut rows = rows_of(&traces::TABLE, job, height)
        .set(CHAIN, chain_index)
        .set(ITERATION, iteration)
        .set(traces::LOGLIK, loglik)
        .set(traces::FIELD_MEAN, field_mean);
    for p in 0..PROBES {
        let values = chains
            .iter()
            .flat_map(|c| c.trace.probes.iter().map(move |row| row[p]));
        rows = rows.set_member(&traces::PROBE, &traces::PROBE.member(p), values);
    }
    rows.finish()
}

pub(crate) fn chains(job: &JobHeader, result: &JobResult) -> Result<DataFrame, SchemaError> {
    let chains = &result.run.chains;
    let trajectories = || chains.iter().map(|c| c.trajectory);
    rows_of(&chains::TABLE, job, chains.len())
        .set(CHAIN, (0..chains.len()).map(|c| c as i64))
        .set(ACCEPTANCE_RATE, chains.iter().map(|c| c.acceptance_rate))
        .set(STEP_SIZE, chains.iter().map(|c| c.step_size))
        .set(
            chains::MEAN_TREE_DEPTH,
            trajectories().map(|t| t.and_then(|t| t.mean_tree_depth)),
        )
        .set(
            chains::MEAN_LEAPFROG_STEPS,
            trajectories().map(|t| t.map(|t| t.mean_leapfrog_steps)),
        )
        .set(
            chains::DIVERGENCES,
            trajectories().map(|t| t.map(|t| t.divergences as i64)),
        )
        .set(
            chains::MEAN_TREE_ACCEPT,
            trajectories().map(|t| t.and_then(|t| t.mean_tree_accept)),
        )
        .set(
            chains::LOGLIK_EVALUATIONS,
            chains.iter().map(|c| c.loglik_evaluations as i64),
        )
        .set(
            chains::GRADIENT_EVALUATIONS,
            chains.iter().map(|c| c.gradient_evaluations as i64),
        )
        .finish()
}

/// Rows per chunk of the draws table: whole draws of one chain, at least this many rows unless
/// the chain has no more (one draw per chunk from 256 x 256 cells up).
const DRAW_CHUNK_ROWS: usize = 1 << 16;

/// `output.field_draws` thinned draws per chain of every cell, long: one row per (chain, draw,
/// cell), the layout ArviZ and R's posterior read (pivot `cell` to columns). Made a chunk at a
/// time from the chains' stored draws, which the chunks own: the table is never whole in memory.
pub(crate) fn draws(
    header: JobHeader,
    per_chain: usize,
    result: std::sync::Arc<JobResult>,
) -> TableChunks<'static> {
    Box::new(DrawChunks {
        header,
        per_chain,
        chunk_rows: DRAW_CHUNK_ROWS,
        result,
        chain: 0,
        kept: 0,
    })
}

/// Where the chunked tables read the chains' stored draws from.
pub(crate) trait StoredChains: Send + Sync {
    fn chains(&self) -> &[ChainOutput];
}

impl StoredChains for JobResult {
    fn chains(&self) -> &[ChainOutput] {
        &self.run.chains
    }
}

impl StoredChains for Vec<ChainOutput> {
    fn chains(&self) -> &[ChainOutput] {
        self
    }
}

/// The chunks of [`draws`]: the next chunk starts at kept draw `kept` of chain `chain`.
struct DrawChunks {
    header: JobHeader,
    per_chain: usize,
    chunk_rows: usize,
    /// The job's chains (its result, shared with the other chunked tables made from its
    /// stored draws).
    result: std::sync::Arc<dyn StoredChains>,
    chain: usize,
    kept: usize,
}

impl Iterator for DrawChunks {
    type Item = Result<DataFrame, SchemaError>;

    fn next(&mut self) -> Option<Self::Item> {
        let stored = &self.result.chains().get(self.chain)?.draws;
        let indices: Vec<usize> = kept_draw_indices(stored.len(), self.per_chain).collect();
        if self.kept >= indices.len() {
            self.chain += 1;
            self.kept = 0;
            return self.next();
        }
        let cells = stored.cells;
        let per_chunk = self.chunk_rows.div_ceil(cells.max(1));
        let chunk = &indices[self.kept..(self.kept + per_chunk).min(indices.len())];
        let first = self.kept;
        self.kept += chunk.len();
        let rows = chunk.len() * cells;
        let value = chunk.iter().flat_map(|&index| {
            stored.values[index * cells..(index + 1) * cells]
                .iter()
                .map(|&v| f64::from(v))
        });
        let draw = (first..first + chunk.len()).flat_map(|k| std::iter::repeat_n(k as i64, cells));
        Some(
            rows_of(&draws::TABLE, &self.header, rows)
                .fill(CHAIN, self.chain as i64)
                .set(draws::DRAW, draw)
                .set(fields::CELL, (0..rows).map(|r| (r % cells) as i64))
                .set(draws::VALUE, value)
                .finish(),
        )
    }
}

pub(crate) fn convergence(job: &JobHeader, result: &JobResult) -> Result<DataFrame, SchemaError> {
    let curve = &result.run.convergence;
    rows_of(&convergence::TABLE, job, curve.len())
        .set(ITERATION, curve.iter().map(|p| p.0 as i64))
        .set(convergence::RMS_TO_EXACT, curve.iter().map(|p| p.1))
        .finish()
}

pub(crate) fn autocorrelation(
    job: &JobHeader,
    result: &JobResult,
) -> Result<DataFrame, SchemaError> {
    crate::table::shared::autocorrelation_rows(job, &result.diagnostics.loglik_autocorrelation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::StreamKeys;

    /// Chunk boundaries fall within a chain and never between a draw's cells, and the chunks
    /// together hold each kept draw of each chain once, in order.
    #[test]
    fn draw_chunks_hold_every_kept_draw_once_in_order() {
        let cells = 5;
        let stored = |chain: usize| crate::sampler::driver::ChainOutput {
            draws: crate::sampler::driver::StoredDraws {
                thin: 1,
                cells,
                values: (0..7 * cells).map(|i| (100 * chain + i) as f32).collect(),
                loglik: vec![0.0; 7],
            },
            ..Default::default()
        };
        let chains: Vec<crate::sampler::driver::ChainOutput> = vec![stored(0), stored(1)];
        let header = JobHeader {
            id: "0123456789ab".into(),
            key: "k".into(),
            replicate: 0,
            params: Vec::new(),
            streams: StreamKeys {
                chain: "k".into(),
                model_data: "k".into(),
                data: Vec::new(),
            },
        };
        let chunks = DrawChunks {
            header,
            per_chain: 3,
            chunk_rows: 8, // two draws of 5 cells a chunk
            result: std::sync::Arc::new(chains),
            chain: 0,
            kept: 0,
        };
        let frames: Vec<DataFrame> = chunks.map(Result::unwrap).collect();
        assert_eq!(
            frames.iter().map(DataFrame::height).collect::<Vec<_>>(),
            [10, 5, 10, 5]
        );
        let column = |name: &str| -> Vec<f64> {
            frames
                .iter()
                .flat_map(|f| {
                    let c = f
                        .column(name)
                        .unwrap()
                        .cast(&polars::prelude::DataType::Float64);
                    c.unwrap()
                        .f64()
                        .unwrap()
                        .into_no_null_iter()
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let mut expected = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for chain in 0..2 {
            for (k, index) in kept_draw_indices(7, 3).enumerate() {
                for cell in 0..cells {
                    expected.0.push(chain as f64);
                    expected.1.push(k as f64);
                    expected.2.push(cell as f64);
                    expected.3.push((100 * chain + index * cells + cell) as f64);
                }
            }
        }
        assert_eq!(column("chain"), expected.0);
        assert_eq!(column("draw"), expected.1);
        assert_eq!(column("cell"), expected.2);
        assert_eq!(column("value"), expected.3);
        assert_eq!(kept_draw_indices(7, 3).collect::<Vec<_>>(), [1, 3, 6]);
    }
}
