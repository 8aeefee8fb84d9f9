//! The covariates' coefficients: one figure per covariate with its posterior density in every
//! job that inferred it (a kernel density of coefficients.parquet's draws, all chains pooled),
//! one panel per data set, and a caption that lists each job's posterior mean and interval (its
//! lowest and highest quantile of `output.quantiles`: the 90 % interval by default) on the
//! design's and the covariate's own scale (the `coef_*` columns of jobs.parquet).

use std::collections::BTreeMap;

use super::hyper::{Sample, data_set, draw_density_panel};
use crate::families::latent_field::keys::OUTPUT_QUANTILES;
use crate::families::latent_field::quantiles::Quantiles;
use crate::families::latent_field::schema::{self, jobs};
use crate::figures::chart::panel_figure;
use crate::figures::tables::{Table, format_number};
use crate::figures::{Context, Figure, FigureKind, ReportError};
use crate::study::keys::SAMPLER_KIND;
use crate::table::shared::JOB_ID;

/// Every coefficient figure the results folder supports.
pub(crate) fn coefficient_figures(
    context: &Context,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(draws) = context.read(&schema::coefficients::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let mut by_name: BTreeMap<String, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let names = draws.text(schema::coefficients::NAME).unwrap_or(&[]);
    for (row, name) in names.iter().enumerate() {
        let (Some(name), Some(job), Some(value)) = (
            name.as_deref(),
            draws.str_at(JOB_ID, row),
            draws.finite(schema::coefficients::VALUE, row),
        ) else {
            continue;
        };
        by_name
            .entry(name.to_string())
            .or_default()
            .entry(job.to_string())
            .or_default()
            .push(value);
    }
    by_name
        .into_iter()
        .map(|(name, jobs)| coefficient_figure(context, &name, jobs))
        .collect()
}

fn coefficient_figure(
    context: &Context,
    name: &str,
    by_job: BTreeMap<String, Vec<f64>>,
) -> Result<Figure, ReportError> {
    let samples: Vec<Sample> = by_job
        .into_iter()
        .map(|(job_id, values)| Sample {
            weights: vec![1.0; values.len()],
            job_id,
            inla: false,
            values,
        })
        .collect();
    let mut panels: BTreeMap<String, Vec<&Sample>> = BTreeMap::new();
    for sample in &samples {
        panels
            .entry(data_set(context, &sample.job_id))
            .or_default()
            .push(sample);
    }
    let panel_list: Vec<(String, Vec<&Sample>)> = panels.into_iter().collect();
    let label = |s: &Sample| {
        let row = context.job_row(&s.job_id);
        let kind = row
            .and_then(|r| context.jobs_table().str_at(SAMPLER_KIND, r))
            .unwrap_or("?");
        format!("{kind} ({})", s.job_id)
    };
    let file = format!("coefficient-{}.png", crate::figures::file_safe(name));
    let title = format!("Posterior of the coefficient of {name}");
    let x = format!("coefficient of {name}");
    panel_figure(
        &context.path(&file),
        (&title, 50),
        (0, &[]),
        ((1400, 520), panel_list.len(), 1),
        |root, area, k| draw_density_panel(root, area, &panel_list[k], &label, &x),
    )?;
    let table = summary_lines(context.jobs_table(), name, &samples);
    Ok(Figure {
        file,
        title,
        caption: format!(
            "The posterior density of the coefficient of {name} (per sd of the covariate when \
             it is standardised, the default) in every job that inferred it, one panel per data \
             set: a gaussian kernel density of coefficients.parquet's stored draws, all chains \
             pooled. A coefficient's interval that excludes 0 says the covariate moves the \
             intensity beyond what the field explains. Posterior mean [lowest, highest quantile \
             of output.quantiles: 5 %, 95 % by default] by job, and per unit of the raw \
             covariate: {table}."
        ),
        kind: FigureKind::Trace,
    })
}

/// "job: mean [q05, q95]; raw mean [q05, q95]" for each job, from the jobs table: its lowest and
/// highest quantile of `output.quantiles` (the default when the table has no such column).
fn summary_lines(jobs_table: &Table, name: &str, samples: &[Sample]) -> String {
    let column = |statistic: &str| jobs::COEF.member(format!("{name}_{statistic}"));
    let value = |row: usize, statistic: &str| {
        jobs_table
            .finite(column(statistic), row)
            .map_or("-".to_string(), format_number)
    };
    let interval = |row: usize| {
        let quantiles = jobs_table
            .str_at(OUTPUT_QUANTILES, row)
            .and_then(|text| Quantiles::new(&crate::study::parse_numbers(text)).ok())
            .unwrap_or_else(Quantiles::default_pair);
        let statistics: Vec<String> = quantiles.iter().map(|q| q.statistic()).collect();
        let lowest = statistics.first().cloned().unwrap_or_default();
        let highest = statistics.last().cloned().unwrap_or_default();
        (lowest, highest)
    };
    let job_rows: Vec<(String, usize)> = samples
        .iter()
        .filter_map(|s| {
            let row = (0..jobs_table.job_ids().len())
                .find(|&r| jobs_table.str_at(JOB_ID, r) == Some(s.job_id.as_str()))?;
            Some((s.job_id.clone(), row))
        })
        .collect();
    job_rows
        .iter()
        .map(|(job, row)| {
            let (low, high) = interval(*row);
            format!(
                "{job}: {} [{}, {}]; raw {} [{}, {}]",
                value(*row, "mean"),
                value(*row, &low),
                value(*row, &high),
                value(*row, "raw_mean"),
                value(*row, &format!("raw_{low}")),
                value(*row, &format!("raw_{high}"))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
