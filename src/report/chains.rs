//! Figures about the Markov chains themselves: convergence of the running mean to the exact
//! posterior mean (gaussian studies), trace plots per chain, and the autocorrelation of the
//! log-likelihood.
//!
//! Curves are drawn per job group (jobs that differ only in their replicate); when a study
//! has more groups than can be told apart, the groups are coarsened by dropping the
//! last-listed swept columns.

use std::collections::BTreeMap;

use plotters::prelude::*;

use super::canvas::{
    Area, Axis, DrawResult, decorate, draw_legend, plot_box, render_png, text, titled,
};
use super::colour::{INK_GREY, series_colour};
use super::shape::{group_rows, job_description, joined_label, sampler_first};
use super::tables::Table;
use super::{Context, Figure, FigureKind, ReportError, file_safe};

/// Most curves per chart before groups are coarsened.
const MAX_GROUPS: usize = 10;
/// Longest trace drawn per chain; longer traces are strided.
const MAX_TRACE_POINTS: usize = 4000;

/// Jobs sharing all swept values but the replicate, labelled for a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct JobGroup {
    pub label: String,
    pub job_ids: Vec<String>,
}

/// The curves of a chart: job groups, and the swept columns averaged over to keep them few.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouping {
    pub groups: Vec<JobGroup>,
    pub pooled: Vec<String>,
}

impl Grouping {
    /// A caption sentence naming what was averaged over, or nothing.
    fn pooled_sentence(&self) -> String {
        if self.pooled.is_empty() {
            String::new()
        } else {
            format!(
                " Curves are also averaged over {} (too many combinations to draw apart).",
                self.pooled.join(", ")
            )
        }
    }
}

/// Groups the given job ids by the swept columns (sampler kind first), dropping the
/// last-listed columns until at most [`MAX_GROUPS`] groups remain; without a jobs table every
/// job is its own group.
pub fn job_groups(context: &Context, job_ids: &[String]) -> Grouping {
    let jobs = context.jobs;
    let rows: Vec<usize> = job_ids
        .iter()
        .filter_map(|id| context.job_row(id))
        .collect();
    if rows.is_empty() {
        let groups = job_ids
            .iter()
            .take(MAX_GROUPS)
            .map(|id| JobGroup {
                label: format!("job {id}"),
                job_ids: vec![id.clone()],
            })
            .collect();
        return Grouping {
            groups,
            pooled: Vec::new(),
        };
    }
    let mut columns: Vec<String> = context
        .shape
        .swept_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    sampler_first(&mut columns);
    let mut pooled = Vec::new();
    loop {
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let groups = group_rows(jobs, &rows, &names);
        if groups.len() <= MAX_GROUPS || columns.is_empty() {
            let groups = groups
                .into_iter()
                .take(MAX_GROUPS)
                .map(|(key, rows)| JobGroup {
                    label: joined_label(&names, &key),
                    job_ids: rows
                        .iter()
                        .filter_map(|&r| jobs.str_at("job_id", r).map(str::to_string))
                        .collect(),
                })
                .collect();
            pooled.reverse();
            return Grouping { groups, pooled };
        }
        pooled.extend(columns.pop());
    }
}

/// Mean of `value` by `x` over the rows of the given jobs (x rounded to an integer key).
fn mean_curve(table: &Table, job_ids: &[String], x: &str, value: &str) -> Vec<(f64, f64)> {
    let mut sums: BTreeMap<i64, (f64, usize)> = BTreeMap::new();
    for id in job_ids {
        for row in table.rows_of_job(id) {
            if let (Some(at), Some(v)) = (table.finite(x, row), table.finite(value, row)) {
                let entry = sums.entry(at.round() as i64).or_insert((0.0, 0));
                entry.0 += v;
                entry.1 += 1;
            }
        }
    }
    sums.into_iter()
        .map(|(at, (sum, n))| (at as f64, sum / n as f64))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Convergence

pub fn convergence_figure(context: &Context, table: &Table) -> Result<Option<Figure>, ReportError> {
    let grouping = job_groups(context, &table.job_ids());
    let curves: Vec<(String, Vec<(f64, f64)>)> = grouping
        .groups
        .iter()
        .map(|g| {
            (
                g.label.clone(),
                mean_curve(table, &g.job_ids, "iteration", "rms_to_exact"),
            )
        })
        .map(|(label, curve)| {
            (
                label,
                curve
                    .into_iter()
                    .filter(|&(t, r)| t > 0.0 && r > 0.0)
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, curve)| !curve.is_empty())
        .collect();
    if curves.is_empty() {
        return Ok(None);
    }
    let file = "convergence.png";
    draw_convergence(&context.path(file), &curves)?;
    Ok(Some(Figure {
        file: file.into(),
        title: "Convergence of the running mean to the exact posterior mean".into(),
        caption: format!(
            "RMS over grid cells of (running posterior mean − exact posterior mean) against the \
             iteration, both axes logarithmic, one line per job group (mean over its replicates; \
             chains pooled).{} A chain that mixes well follows the dashed 1/√T reference slope: \
             its Monte Carlo error falls by √10 per decade of iterations. A flatter line means \
             slow mixing or a still-visible burn-in; a line that levels off at a floor means the \
             chain settles on a biased answer.",
            grouping.pooled_sentence()
        ),
        kind: FigureKind::Convergence,
    }))
}

fn draw_convergence(
    path: &std::path::Path,
    curves: &[(String, Vec<(f64, f64)>)],
) -> Result<(), ReportError> {
    let all = curves.iter().flat_map(|(_, c)| c.iter());
    let (ts, rs): (Vec<f64>, Vec<f64>) = all.copied().unzip();
    let x_axis = Axis::log(min(&ts), max(&ts));
    let reference = reference_slope(curves);
    let mut y_values = rs.clone();
    y_values.extend(reference.iter().map(|p| p.1));
    let y_axis = Axis::log(min(&y_values), max(&y_values));
    render_png(path, (1000, 680), |root| {
        let body = titled(root, "Running mean vs exact posterior mean", 50)?;
        let (legend, plot) = body.split_vertically(60);
        let mut entries: Vec<(String, RGBColor)> = curves
            .iter()
            .enumerate()
            .map(|(k, (label, _))| (label.clone(), series_colour(k)))
            .collect();
        entries.push(("1/√T reference (dashed)".into(), INK_GREY));
        draw_legend(&legend, &entries)?;
        let mut chart = log_log_chart(
            root,
            &plot,
            &x_axis,
            &y_axis,
            "iteration T (log scale)",
            "RMS to exact mean (log scale)",
        )?;
        for (k, (_, curve)) in curves.iter().enumerate() {
            let colour = series_colour(k);
            let points: Vec<(f64, f64)> =
                curve.iter().map(|&(t, r)| (t.log10(), r.log10())).collect();
            chart.draw_series(std::iter::once(PathElement::new(
                points.clone(),
                colour.stroke_width(2),
            )))?;
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
        let dashed: Vec<(f64, f64)> = reference
            .iter()
            .map(|&(t, r)| (t.log10(), r.log10()))
            .collect();
        chart.draw_series(
            dashes(&dashed, 24)
                .into_iter()
                .map(|seg| PathElement::new(seg, INK_GREY.stroke_width(2))),
        )?;
        Ok(())
    })
}

fn log_log_chart<'a, 'b>(
    root: &Area,
    area: &'a Area<'b>,
    x_axis: &'a Axis,
    y_axis: &'a Axis,
    x_title: &str,
    y_title: &str,
) -> DrawResult<
    ChartContext<
        'a,
        BitMapBackend<'b>,
        Cartesian2d<super::canvas::AxisCoord, super::canvas::AxisCoord>,
    >,
> {
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(80)
        .build_cartesian_2d(x_axis.coord(), y_axis.coord())?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .label_style(text(14.0))
        .x_label_formatter(&|v| x_axis.label(*v))
        .y_label_formatter(&|v| y_axis.label(*v))
        .draw()?;
    decorate(root, &plot_box(&chart, 52, 80), "", x_title, y_title, 15.0)?;
    Ok(chart)
}

/// A c/sqrt(T) line over the plotted iterations, through the median of the curves' last points.
fn reference_slope(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<(f64, f64)> {
    let mut last: Vec<(f64, f64)> = curves
        .iter()
        .filter_map(|(_, c)| c.last().copied())
        .collect();
    if last.is_empty() {
        return Vec::new();
    }
    last.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (t_end, r_end) = last[last.len() / 2];
    let c = r_end * t_end.sqrt();
    let t_start = curves
        .iter()
        .filter_map(|(_, c)| c.first().map(|p| p.0))
        .fold(f64::INFINITY, f64::min);
    vec![(t_start, c / t_start.sqrt()), (t_end, r_end)]
}

/// Splits a straight two-point line into `pieces` dashes (every other piece drawn).
fn dashes(line: &[(f64, f64)], pieces: usize) -> Vec<Vec<(f64, f64)>> {
    let [a, b] = line else { return Vec::new() };
    let at = |k: usize| {
        let s = k as f64 / pieces as f64;
        (a.0 + (b.0 - a.0) * s, a.1 + (b.1 - a.1) * s)
    };
    (0..pieces)
        .step_by(2)
        .map(|k| vec![at(k), at(k + 1)])
        .collect()
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}
fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

// ---------------------------------------------------------------------------------------
// Traces

/// The column of the probe at the centre of the grid (k = 2 of 0..4), or the first probe.
fn probe_column(table: &Table) -> Option<String> {
    if table.has("probe_2") {
        return Some("probe_2".into());
    }
    table
        .column_names()
        .iter()
        .find(|c| c.starts_with("probe_"))
        .cloned()
}

pub fn trace_figures(
    context: &Context,
    table: &Table,
    job_ids: &[String],
) -> Result<Vec<Figure>, ReportError> {
    let probe = probe_column(table);
    let mut figures = Vec::new();
    for job_id in job_ids {
        let chains = chains_of(table, job_id, probe.as_deref());
        if chains.is_empty() {
            continue;
        }
        let description = match context.job_row(job_id) {
            Some(row) => job_description(context.jobs, context.shape, row),
            None => format!("job {job_id}"),
        };
        let probe_title = probe_title(context, job_id, probe.as_deref());
        let file = format!("traces-{}.png", file_safe(job_id));
        draw_traces(&context.path(&file), &description, &chains, &probe_title)?;
        figures.push(Figure {
            file,
            title: format!("Traces: {description}"),
            caption: format!(
                "Job {job_id}: thinned post-burn-in draws of the log-likelihood (top) and of \
                 {probe_title} (bottom) against the iteration, one colour per chain ({} chains). \
                 Well-mixed chains look like overlapping stationary noise with no trend; long \
                 flat stretches mean rejected proposals, slow drifts mean strong \
                 autocorrelation, and chains at different levels mean they have not converged \
                 to the same distribution.",
                chains.len()
            ),
            kind: FigureKind::Trace,
        });
    }
    Ok(figures)
}

/// A chain's trace: (iteration, loglik, probe value) sorted by iteration.
type Trace = Vec<(f64, Option<f64>, Option<f64>)>;

fn chains_of(table: &Table, job_id: &str, probe: Option<&str>) -> Vec<(i64, Trace)> {
    let mut chains: BTreeMap<i64, Trace> = BTreeMap::new();
    for row in table.rows_of_job(job_id) {
        let Some(iteration) = table.finite("iteration", row) else {
            continue;
        };
        let chain = table.finite("chain", row).map_or(0, |c| c as i64);
        let loglik = table.finite("loglik", row);
        let value = probe.and_then(|p| table.finite(p, row));
        chains
            .entry(chain)
            .or_default()
            .push((iteration, loglik, value));
    }
    chains
        .into_iter()
        .map(|(chain, mut trace)| {
            trace.sort_by(|a, b| a.0.total_cmp(&b.0));
            let stride = trace.len().div_ceil(MAX_TRACE_POINTS).max(1);
            (chain, trace.into_iter().step_by(stride).collect())
        })
        .collect()
}

fn probe_title(context: &Context, job_id: &str, probe: Option<&str>) -> String {
    let grid = context
        .job_row(job_id)
        .and_then(|row| context.jobs.finite("model_grid", row));
    let k = probe
        .and_then(|p| p.strip_prefix("probe_"))
        .and_then(|k| k.parse::<f64>().ok());
    match (grid, k) {
        (Some(d), Some(k)) => {
            let index = (k * (d - 1.0) / 4.0).round();
            format!("u at cell i = j = {index}")
        }
        _ => probe.map_or("the probe cell".into(), |p| format!("u at {p}")),
    }
}

fn draw_traces(
    path: &std::path::Path,
    description: &str,
    chains: &[(i64, Trace)],
    probe_title: &str,
) -> Result<(), ReportError> {
    render_png(path, (1100, 760), |root| {
        let body = titled(root, description, 50)?;
        let (legend, plots) = body.split_vertically(40);
        let entries: Vec<(String, RGBColor)> = chains
            .iter()
            .enumerate()
            .map(|(k, (c, _))| (format!("chain {c}"), series_colour(k)))
            .collect();
        draw_legend(&legend, &entries)?;
        let (top, bottom) = plots.split_vertically(335);
        draw_trace_panel(root, &top, chains, |p| p.1, "log-likelihood")?;
        draw_trace_panel(root, &bottom, chains, |p| p.2, probe_title)?;
        Ok(())
    })
}

fn draw_trace_panel(
    root: &Area,
    area: &Area,
    chains: &[(i64, Trace)],
    value: impl Fn(&(f64, Option<f64>, Option<f64>)) -> Option<f64>,
    title: &str,
) -> DrawResult {
    let points = |trace: &Trace| -> Vec<(f64, f64)> {
        trace
            .iter()
            .filter_map(|p| Some((p.0, value(p).filter(|v| v.is_finite())?)))
            .collect()
    };
    let all: Vec<(f64, f64)> = chains.iter().flat_map(|(_, t)| points(t)).collect();
    if all.is_empty() {
        return Ok(());
    }
    let (xs, ys): (Vec<f64>, Vec<f64>) = all.into_iter().unzip();
    let x_axis = Axis::linear(min(&xs), max(&xs));
    let y_axis = Axis::padded(min(&ys), max(&ys));
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_top(36)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(x_axis.coord(), y_axis.coord())?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(230, 230, 230))
        .label_style(text(13.0))
        .x_label_formatter(&|v| x_axis.label(*v))
        .y_label_formatter(&|v| y_axis.label(*v))
        .draw()?;
    decorate(
        root,
        &plot_box(&chart, 44, 80),
        title,
        "iteration",
        "",
        14.0,
    )?;
    let alpha = if chains.len() > 1 { 0.75 } else { 1.0 };
    for (k, (_, trace)) in chains.iter().enumerate() {
        let colour = series_colour(k).mix(alpha);
        chart.draw_series(std::iter::once(PathElement::new(
            points(trace),
            colour.stroke_width(1),
        )))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Autocorrelation

pub fn autocorrelation_figure(
    context: &Context,
    table: &Table,
) -> Result<Option<Figure>, ReportError> {
    let grouping = job_groups(context, &table.job_ids());
    let curves: Vec<(String, Vec<(f64, f64)>)> = grouping
        .groups
        .iter()
        .map(|g| {
            (
                g.label.clone(),
                mean_curve(table, &g.job_ids, "lag", "autocorrelation"),
            )
        })
        .filter(|(_, curve)| !curve.is_empty())
        .collect();
    if curves.is_empty() {
        return Ok(None);
    }
    let file = "autocorrelation.png";
    draw_autocorrelation(&context.path(file), &curves)?;
    Ok(Some(Figure {
        file: file.into(),
        title: "Autocorrelation of the log-likelihood".into(),
        caption: format!(
            "Autocorrelation of the log-likelihood against the lag (in thinned draws), averaged \
             over chains and over the replicates of each job group.{} The faster a curve falls \
             to zero (dashed line), the more nearly independent successive draws are and the \
             larger the effective sample size; a curve that stays high over many lags marks a \
             slowly mixing sampler.",
            grouping.pooled_sentence()
        ),
        kind: FigureKind::Autocorrelation,
    }))
}

fn draw_autocorrelation(
    path: &std::path::Path,
    curves: &[(String, Vec<(f64, f64)>)],
) -> Result<(), ReportError> {
    let (lags, values): (Vec<f64>, Vec<f64>) =
        curves.iter().flat_map(|(_, c)| c.iter().copied()).unzip();
    let x_axis = Axis::linear(min(&lags).min(0.0), max(&lags).max(1.0));
    let y_axis = Axis::linear(min(&values).min(-0.1) - 0.05, 1.05);
    render_png(path, (1000, 640), |root| {
        let body = titled(root, "Autocorrelation of the log-likelihood", 50)?;
        let (legend, plot) = body.split_vertically(60);
        let entries: Vec<(String, RGBColor)> = curves
            .iter()
            .enumerate()
            .map(|(k, (label, _))| (label.clone(), series_colour(k)))
            .collect();
        draw_legend(&legend, &entries)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(72)
            .build_cartesian_2d(x_axis.coord(), y_axis.coord())?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .label_style(text(14.0))
            .x_label_formatter(&|v| x_axis.label(*v))
            .y_label_formatter(&|v| y_axis.label(*v))
            .draw()?;
        let plot_area = plot_box(&chart, 52, 72);
        decorate(
            root,
            &plot_area,
            "",
            "lag (thinned draws)",
            "autocorrelation",
            15.0,
        )?;
        let zero = vec![(x_axis.lo, 0.0), (x_axis.hi, 0.0)];
        chart.draw_series(
            dashes(&zero, 60)
                .into_iter()
                .map(|s| PathElement::new(s, INK_GREY.stroke_width(1))),
        )?;
        for (k, (_, curve)) in curves.iter().enumerate() {
            let colour = series_colour(k);
            chart.draw_series(std::iter::once(PathElement::new(
                curve.clone(),
                colour.stroke_width(2),
            )))?;
            if curve.len() <= 60 {
                chart.draw_series(curve.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            }
        }
        Ok(())
    })
}
