//! The latent field's report figures, each from the tables it needs (every table is optional):
//!
//! | figure | when | module |
//! |---|---|---|
//! | field heat maps (truth, data, posterior mean/sd, error, probabilities, counts, shares), with the study region's outline, the measurement sites and the marked points ([`overlays`]) | fields.parquet, region.parquet, sites.parquet, marks.parquet | [`fields`] |
//! | the truths side by side, one per true length scale (prior samples) | true length scale swept | [`fields`] |
//! | acceptance heat map over grid size x step size, one panel per sampler | grid and beta both swept | [`acceptance`] |
//! | RMS of running mean to the exact posterior mean (log-log, 1/sqrt(T) reference) | convergence.parquet | [`chains`] |
//! | trace plots of log-likelihood and the centre cell per chain | traces.parquet | [`chains`] |
//! | autocorrelation of the log-likelihood | autocorrelation.parquet | [`chains`] |
//! | SBC rank histograms, one figure per job, one panel per functional | ranks.parquet | [`ranks`] |
//! | posterior densities of each inferred hyperparameter (chains and INLA overlaid), their traces | hyper.parquet, inla_grid.parquet | [`hyper`] |
//! | posterior densities of each covariate's coefficient, with each job's mean and 90 % interval | coefficients.parquet, jobs.parquet | [`coefficients`] |
//! | risk maps: intensity per unit area and P(relative risk > t) per cell | fields.parquet (`output.exceedance`) | [`fields`] |
//! | Pareto k maps: each observation's k (cells on the grid, sites as dots; the scale centred on 0.7) beside its loo_i | loo.parquet, fields.parquet, sites.parquet (`output.log_likelihood`) | [`loo`] |
//!
//! Its table on the page: the PSIS-LOO of each job (jobs.parquet, loo.parquet), [`loo`].
//!
//! Its metrics against swept parameters are drawn by the report from [`REPORT`].

pub(crate) mod acceptance;
pub(crate) mod chains;
pub(crate) mod coefficients;
pub mod fields;
pub(crate) mod hyper;
pub(crate) mod loo;
mod overlays;
pub(crate) mod ranks;

use std::collections::HashSet;

use super::keys::{MODEL_GRID, MODEL_LIKELIHOOD, SAMPLER_BETA};
use super::schema::{self, jobs};
use crate::figures::{Context, Figure, Metric, ReportColumns, ReportError};
use crate::study::keys::SAMPLER_KIND;
use crate::table::shared::{self, ACCEPTANCE_RATE, jobs as shared_jobs};

pub use ranks::MAX_JOBS as MAX_RANK_FIGURES;

/// `count_mae / baseline_count_mae`, comparable across data sets whose counts differ in size.
pub(crate) const COUNT_MAE_RATIO: Metric = Metric::Ratio {
    name: "count_mae_ratio",
    numerator: jobs::COUNT_MAE,
    denominator: jobs::BASELINE_COUNT_MAE,
};

/// What the report shows of the latent field's jobs-table metrics.
pub(crate) const REPORT: ReportColumns = ReportColumns {
    swept: &[
        (Metric::Column(ACCEPTANCE_RATE), "acceptance rate"),
        (Metric::Column(jobs::MAE), "MAE of posterior mean vs truth"),
        (
            Metric::Column(jobs::EXACT_RMSE),
            "RMSE of posterior mean vs exact mean",
        ),
        (
            Metric::Column(jobs::PREDICTION_ERROR),
            "prediction error (share misclassified)",
        ),
        (Metric::Column(jobs::COUNT_MAE), "held-out count MAE"),
        (
            COUNT_MAE_RATIO,
            "held-out count MAE / baseline (below 1 beats it)",
        ),
        (
            Metric::Column(jobs::SHARE_MAE),
            "success probability MAE (binomial)",
        ),
        (
            Metric::Column(jobs::LOG_EVIDENCE),
            "log evidence log p(data | ℓ) (Monte Carlo)",
        ),
        (
            Metric::Column(shared_jobs::ESS_BULK_PER_SECOND),
            "bulk ESS per second",
        ),
        (
            Metric::Column(shared_jobs::ITERATIONS_PER_SECOND),
            "iterations per second",
        ),
    ],
    listed: &[
        jobs::HELD_OUT_CELLS.name(),
        jobs::HELD_OUT_SITES.name(),
        jobs::BASELINE_COUNT_MAE.name(),
        jobs::BASELINE_SHARE_MAE.name(),
        shared_jobs::ESS_BULK.name(),
        jobs::ESS_TAIL.name(),
        jobs::RHAT.name(),
        jobs::CELL_ESS_MIN.name(),
        jobs::CELL_ESS_BULK_MIN.name(),
        jobs::CELL_RHAT_MAX.name(),
        jobs::JITTER.name(),
        shared_jobs::WALL_SECONDS.name(),
    ],
    baselines: &[
        (
            jobs::COUNT_MAE,
            jobs::BASELINE_COUNT_MAE,
            "a constant rate equal to the mean observed count",
        ),
        (
            jobs::SHARE_MAE,
            jobs::BASELINE_SHARE_MAE,
            "a constant probability equal to the pooled observed share",
        ),
    ],
    named_by: &[MODEL_LIKELIHOOD, SAMPLER_KIND, MODEL_GRID],
    unswept: &[MODEL_LIKELIHOOD, SAMPLER_KIND, MODEL_GRID, SAMPLER_BETA],
};

/// Every latent-field figure the results folder has the tables for.
pub(crate) fn figures(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let field_jobs = context.representative_job_ids(&schema::fields::TABLE, notes)?;
    let trace_jobs = context.representative_job_ids(&schema::traces::TABLE, notes)?;
    let truth_jobs = fields::truth_job_ids(context);
    let mut fields_to_read = to_set(&field_jobs);
    fields_to_read.extend(truth_jobs.iter().cloned());
    let field_rows = context.read(&schema::fields::TABLE, Some(&fields_to_read), notes)?;
    let region_rows = context.read(&schema::region::TABLE, Some(&to_set(&field_jobs)), notes)?;
    let mark_rows = context.read(&schema::marks::TABLE, Some(&to_set(&field_jobs)), notes)?;
    let site_rows = context.read(&schema::sites::TABLE, Some(&to_set(&field_jobs)), notes)?;
    let traces = context.read(&schema::traces::TABLE, Some(&to_set(&trace_jobs)), notes)?;
    let convergence = context.read(&schema::convergence::TABLE, None, notes)?;
    let autocorrelation = context.read(&shared::autocorrelation::TABLE, None, notes)?;

    let mut figures = Vec::new();
    if let Some(field_rows) = &field_rows {
        figures.extend(fields::truth_figure(context, field_rows, &truth_jobs)?);
        figures.extend(fields::field_figures(
            context,
            field_rows,
            overlays::OverlayTables {
                region: region_rows.as_ref(),
                marks: mark_rows.as_ref(),
                sites: site_rows.as_ref(),
            },
            &field_jobs,
        )?);
    }
    figures.extend(acceptance::acceptance_figure(context)?);
    if let Some(convergence) = &convergence {
        figures.extend(chains::convergence_figure(context, convergence)?);
    }
    if let Some(traces) = &traces {
        figures.extend(chains::trace_figures(context, traces, &trace_jobs)?);
    }
    if let Some(autocorrelation) = &autocorrelation {
        figures.extend(chains::autocorrelation_figure(context, autocorrelation)?);
    }
    figures.extend(ranks::rank_figures(context, notes)?);
    figures.extend(hyper::hyper_figures(context, notes)?);
    figures.extend(coefficients::coefficient_figures(context, notes)?);
    figures.extend(loo::pareto_k_figures(context, notes)?);
    Ok(figures)
}

fn to_set(ids: &[String]) -> HashSet<String> {
    ids.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{nums, table};

    #[test]
    fn the_count_ratio_divides_by_the_baseline_and_skips_missing_or_zero_baselines() {
        let jobs = table(vec![
            ("count_mae", nums(&[1.1, 0.5, 0.2])),
            ("baseline_count_mae", nums(&[1.0, f64::NAN, 0.0])),
        ]);
        let ratio = |row| COUNT_MAE_RATIO.value(&jobs, row);
        assert!((ratio(0).unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(ratio(1), None);
        assert_eq!(ratio(2), None);
        assert_eq!(Metric::Column(jobs::COUNT_MAE).value(&jobs, 1), Some(0.5));
        let metrics = ReportColumns::united([&REPORT]);
        assert_eq!(
            metrics
                .baseline_of(Metric::Column(jobs::COUNT_MAE))
                .map(|b| b.0),
            Some(jobs::BASELINE_COUNT_MAE)
        );
        assert_eq!(metrics.baseline_of(COUNT_MAE_RATIO), None);
    }
}
