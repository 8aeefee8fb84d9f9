//! Figures of the inferred hyperparameters: one figure per hyperparameter with its posterior
//! density from every job that inferred it — chains (a kernel density of hyper.parquet's draws)
//! and INLA (a kernel density of inla_grid.parquet's weighted points) overlaid, one panel per
//! data set (likelihood and data file) — and per job, the traces of its chains.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use plotters::prelude::*;

use crate::families::latent_field::schema;
use crate::figures::chart::{Axis, Frame, Titles, curve, panel_figure, plot};
use crate::figures::colour::{finite_range, series_colour};
use crate::figures::tables::Table;
use crate::figures::text::{Area, DrawResult, Label};
use crate::figures::{Context, Figure, FigureKind, ReportError, file_safe};
use crate::model::hyper::HyperName;
use crate::table::shared::{CHAIN, ITERATION, JOB_ID};
use plotters::style::text_anchor::{HPos, VPos};

/// Points each density curve is evaluated at.
const DENSITY_POINTS: usize = 200;
/// Jobs whose traces are drawn, at most.
const MAX_TRACE_JOBS: usize = 6;
/// Longest trace drawn per chain (longer ones are strided).
const MAX_TRACE_POINTS: usize = 3000;

/// A job's weighted sample of one hyperparameter: chain draws (weight 1 each) or INLA's grid
/// points with their weights.
pub(super) struct Sample {
    pub(super) job_id: String,
    pub(super) inla: bool,
    pub(super) values: Vec<f64>,
    pub(super) weights: Vec<f64>,
}

/// Every figure about hyperparameters the results folder supports.
pub(crate) fn hyper_figures(
    context: &Context,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let draws = context.read(&schema::hyper::TABLE, None, notes)?;
    let grid = context.read(&schema::inla_grid::TABLE, None, notes)?;
    if draws.is_none() && grid.is_none() {
        return Ok(Vec::new());
    }
    let mut figures = Vec::new();
    for name in HyperName::ALL.iter().copied() {
        let mut samples = Vec::new();
        if let Some(draws) = &draws {
            samples.extend(chain_samples(draws, name));
        }
        if let Some(grid) = &grid {
            samples.extend(grid_samples(grid, name));
        }
        if !samples.is_empty() {
            figures.push(density_figure(context, name, &samples)?);
        }
    }
    if let Some(draws) = &draws {
        figures.extend(trace_figures(context, draws)?);
    }
    Ok(figures)
}

fn chain_samples(draws: &Table, name: HyperName) -> Vec<Sample> {
    let mut by_job: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let rows = draws.text(schema::hyper::NAME).unwrap_or(&[]);
    for (row, text) in rows.iter().enumerate() {
        if text.as_deref() != Some(name.name()) {
            continue;
        }
        let (Some(job), Some(value)) = (
            draws.str_at(JOB_ID, row),
            draws.finite(schema::hyper::VALUE, row),
        ) else {
            continue;
        };
        by_job.entry(job.to_string()).or_default().push(value);
    }
    by_job
        .into_iter()
        .map(|(job_id, values)| Sample {
            job_id,
            inla: false,
            weights: vec![1.0; values.len()],
            values,
        })
        .collect()
}

fn grid_samples(grid: &Table, name: HyperName) -> Vec<Sample> {
    let Some(column) = grid_column(name).filter(|&column| grid.has(column)) else {
        return Vec::new();
    };
    let mut by_job: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for job in grid.job_ids() {
        for row in grid.rows_of_job(&job) {
            let (Some(value), Some(weight)) = (
                grid.finite(column, row),
                grid.finite(schema::inla_grid::WEIGHT, row),
            ) else {
                continue;
            };
            let entry = by_job.entry(job.clone()).or_default();
            entry.0.push(value);
            entry.1.push(weight);
        }
    }
    by_job
        .into_iter()
        .map(|(job_id, (values, weights))| Sample {
            job_id,
            inla: true,
            values,
            weights,
        })
        .collect()
}

/// The inla_grid.parquet column of a hyperparameter (INLA does not integrate over the noise sd:
/// none).
fn grid_column(name: HyperName) -> Option<crate::table::Col<f64>> {
    match name {
        HyperName::LengthScale => Some(schema::inla_grid::LENGTH_SCALE),
        HyperName::LengthScaleY => Some(schema::inla_grid::LENGTH_SCALE_Y),
        HyperName::Variance => Some(schema::inla_grid::VARIANCE),
        HyperName::Mean => Some(schema::inla_grid::MEAN),
        HyperName::NoiseSd => None,
    }
}

/// A gaussian kernel density of a weighted sample over `points`, its bandwidth Silverman's rule
/// on the weighted sd and the effective sample size, and for a grid at least the median gap
/// between distinct points (so INLA's few points draw a smooth curve, not spikes).
fn density(sample: &Sample, points: &[f64]) -> Vec<(f64, f64)> {
    let total: f64 = sample.weights.iter().sum();
    let mean = sample
        .values
        .iter()
        .zip(&sample.weights)
        .map(|(v, w)| v * w)
        .sum::<f64>()
        / total;
    let variance = sample
        .values
        .iter()
        .zip(&sample.weights)
        .map(|(v, w)| w * (v - mean).powi(2))
        .sum::<f64>()
        / total;
    let effective = total * total / sample.weights.iter().map(|w| w * w).sum::<f64>();
    let mut bandwidth = 1.06 * variance.sqrt() * effective.powf(-0.2);
    if sample.inla {
        let mut distinct = sample.values.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
        let mut gaps: Vec<f64> = distinct.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_by(f64::total_cmp);
        if let Some(&gap) = gaps.get(gaps.len() / 2) {
            bandwidth = bandwidth.max(gap);
        }
    }
    let bandwidth = bandwidth.max(1e-12);
    let norm = total * bandwidth * (2.0 * std::f64::consts::PI).sqrt();
    points
        .iter()
        .map(|&x| {
            let d: f64 = sample
                .values
                .iter()
                .zip(&sample.weights)
                .map(|(v, w)| w * (-0.5 * ((x - v) / bandwidth).powi(2)).exp())
                .sum();
            (x, d / norm)
        })
        .collect()
}

/// How a job fitted its hyperparameters: "inla", or the chains' field kind and update.
fn fit_label(context: &Context, sample: &Sample) -> String {
    let jobs = context.jobs_table();
    let row = context.job_row(&sample.job_id);
    let text = |key| row.and_then(|r| jobs.str_at(key, r)).unwrap_or("?");
    if sample.inla {
        format!("inla ({})", sample.job_id)
    } else {
        format!(
            "{} + {} ({})",
            text(crate::study::keys::SAMPLER_KIND),
            text(crate::families::latent_field::keys::SAMPLER_HYPER),
            sample.job_id
        )
    }
}

/// The central 99 % of a sample's values (weighted), the range its density is drawn over.
fn central_range(sample: &Sample) -> Option<(f64, f64)> {
    let mut pairs: Vec<(f64, f64)> = sample
        .values
        .iter()
        .copied()
        .zip(sample.weights.iter().copied())
        .filter(|(v, w)| v.is_finite() && *w > 0.0)
        .collect();
    if pairs.is_empty() {
        return None;
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    let at = |share: f64| {
        let mut cumulative = 0.0;
        for &(v, w) in &pairs {
            cumulative += w;
            if cumulative >= share * total {
                return v;
            }
        }
        pairs[pairs.len() - 1].0
    };
    Some((at(0.005), at(0.995)))
}

/// The data set a job belongs to: its likelihood and data file (or "simulated").
pub(super) fn data_set(context: &Context, job_id: &str) -> String {
    let jobs = context.jobs_table();
    let Some(row) = context.job_row(job_id) else {
        return "jobs".into();
    };
    let likelihood = jobs
        .str_at(crate::families::latent_field::keys::MODEL_LIKELIHOOD, row)
        .unwrap_or("");
    let path = jobs
        .str_at(crate::families::latent_field::keys::DATA_PATH, row)
        .and_then(|p| {
            Path::new(p)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "simulated".into());
    format!("{likelihood}, {path}")
}

fn density_figure(
    context: &Context,
    name: HyperName,
    samples: &[Sample],
) -> Result<Figure, ReportError> {
    let mut panels: BTreeMap<String, Vec<&Sample>> = BTreeMap::new();
    for sample in samples {
        panels
            .entry(data_set(context, &sample.job_id))
            .or_default()
            .push(sample);
    }
    let label = |s: &Sample| fit_label(context, s);
    let panel_list: Vec<(String, Vec<&Sample>)> = panels.into_iter().collect();
    let file = format!("hyper-{}.png", name.name());
    let title = format!("Posterior of the {}", name.name().replace('_', " "));
    panel_figure(
        &context.path(&file),
        (&title, 50),
        (0, &[]),
        ((1400, 520), panel_list.len(), 1),
        |root, area, k| draw_density_panel(root, area, &panel_list[k], &label, name.name()),
    )?;
    Ok(Figure {
        file,
        title,
        caption: format!(
            "The posterior density of the {} in every job that inferred it, one panel per data \
             set: solid lines are chains (a gaussian kernel density of hyper.parquet's kept \
             draws, all chains pooled), dashed lines INLA (a kernel density of its weighted grid \
             points from inla_grid.parquet, the bandwidth at least the grid's spacing). Where \
             both ran on the same data their curves should lie on each other; a chain's curve \
             with several bumps often means chains that have not met (read its R-hat).",
            name.name().replace('_', " ")
        ),
        kind: FigureKind::Trace,
    })
}

/// One panel of densities: each sample's kernel density over the samples' central range,
/// labelled on the right by `label`, the x axis named `x`.
pub(super) fn draw_density_panel(
    root: &Area,
    area: &Area,
    (data, samples): &(String, Vec<&Sample>),
    label: &dyn Fn(&Sample) -> String,
    x: &str,
) -> DrawResult {
    let ranges: Vec<(f64, f64)> = samples.iter().filter_map(|s| central_range(s)).collect();
    let Some((lo, hi)) = finite_range(ranges.iter().flat_map(|r| [r.0, r.1])) else {
        return Ok(());
    };
    let span = (hi - lo).max(1e-9);
    let points: Vec<f64> = (0..DENSITY_POINTS)
        .map(|k| lo - 0.05 * span + 1.1 * span * k as f64 / (DENSITY_POINTS - 1) as f64)
        .collect();
    let curves: Vec<Vec<(f64, f64)>> = samples.iter().map(|s| density(s, &points)).collect();
    let top = curves
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(0.0, f64::max)
        .max(1e-12);
    let axes = (
        &Axis::linear(points[0], points[DENSITY_POINTS - 1]),
        &Axis::linear(0.0, 1.1 * top),
    );
    let frame = Frame::LINES.margins(12, 40, 480).labels(44, 70);
    let titles = Titles {
        title: data,
        x,
        y: "density",
    };
    let (mut chart, plot_box) = plot(root, area, axes, frame, titles)?;
    for (k, (sample, points)) in samples.iter().zip(&curves).enumerate() {
        let colour = series_colour(k);
        if sample.inla {
            crate::figures::chart::dashed(&mut chart, points, colour, (2, 3))?;
        } else {
            curve(&mut chart, points, colour, (2, 0))?;
        }
        let y = plot_box.y.start + 14 + 18 * k as i32;
        let x = plot_box.x.end + 10;
        Label::new(13.0)
            .colour(colour)
            .anchor(HPos::Left, VPos::Center)
            .draw(root, &truncate(&label(sample), 60), (x, y))?;
    }
    Ok(())
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

fn trace_figures(context: &Context, draws: &Table) -> Result<Vec<Figure>, ReportError> {
    let mut figures = Vec::new();
    let ids = draws.job_ids();
    let names: Vec<HyperName> = {
        let present: HashSet<&str> = draws
            .text(schema::hyper::NAME)
            .unwrap_or(&[])
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        HyperName::ALL
            .iter()
            .copied()
            .filter(|n| present.contains(n.name()))
            .collect()
    };
    for job_id in ids.iter().take(MAX_TRACE_JOBS) {
        let mut series: BTreeMap<(HyperName, i64), Vec<(f64, f64)>> = BTreeMap::new();
        for row in draws.rows_of_job(job_id) {
            let name = draws
                .str_at(schema::hyper::NAME, row)
                .and_then(HyperName::from_name);
            let (Some(name), Some(t), Some(v)) = (
                name,
                draws.finite(ITERATION, row),
                draws.finite(schema::hyper::VALUE, row),
            ) else {
                continue;
            };
            let chain = draws.finite(CHAIN, row).map_or(0, |c| c as i64);
            series.entry((name, chain)).or_default().push((t, v));
        }
        let description = context.describe(job_id);
        let file = format!("hyper-traces-{}.png", file_safe(job_id));
        panel_figure(
            &context.path(&file),
            (&description, 50),
            (0, &[]),
            ((1100, 260), names.len(), 1),
            |root, area, k| draw_trace_panel(root, area, names[k], &series),
        )?;
        figures.push(Figure {
            file,
            title: format!("Hyperparameter traces: {description}"),
            caption: format!(
                "Job {job_id}: the traced kept draws of each inferred hyperparameter against the \
                 iteration, one colour per chain. Chains that overlap as stationary noise have \
                 mixed; chains at different levels have not met (R-hat in the jobs table)."
            ),
            kind: FigureKind::Trace,
        });
    }
    Ok(figures)
}

fn draw_trace_panel(
    root: &Area,
    area: &Area,
    name: HyperName,
    series: &BTreeMap<(HyperName, i64), Vec<(f64, f64)>>,
) -> DrawResult {
    let chains: Vec<Vec<(f64, f64)>> = series
        .iter()
        .filter(|((n, _), _)| *n == name)
        .map(|(_, points)| {
            let stride = points.len().div_ceil(MAX_TRACE_POINTS).max(1);
            points.iter().copied().step_by(stride).collect()
        })
        .collect();
    let all = || chains.iter().flatten();
    let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) = (
        finite_range(all().map(|p| p.0)),
        finite_range(all().map(|p| p.1)),
    ) else {
        return Ok(());
    };
    let axes = (&Axis::linear(x_lo, x_hi), &Axis::padded(y_lo, y_hi));
    let frame = Frame::LINES.margins(10, 30, 12).labels(40, 80);
    let titles = Titles {
        title: name.name(),
        x: "iteration",
        y: "",
    };
    let (mut chart, _) = plot(root, area, axes, frame, titles)?;
    for (k, points) in chains.iter().enumerate() {
        curve(&mut chart, points, series_colour(k).mix(0.75), (1, 0))?;
    }
    Ok(())
}
