//! Figures about the Markov chains themselves: convergence of the running mean to the exact
//! posterior mean (gaussian studies), trace plots per chain, and the autocorrelation of the
//! log-likelihood.
//!
//! Curves are drawn per job group (jobs that differ only in their replicate); when a study
//! has more groups than can be told apart, the groups are coarsened by dropping the
//! last-listed swept columns.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::families::latent_field::keys::MODEL_GRID;
use crate::families::latent_field::schema::convergence::RMS_TO_EXACT;
use crate::families::latent_field::schema::traces::{LOGLIK, PROBE};
use crate::figures::chart::{Axis, Frame, Titles, curve, dashed, figure, legend, plot};
use crate::figures::colour::{INK_GREY, finite_range, series_colour};
use crate::figures::shape::{group_rows, sampler_first};
use crate::figures::tables::Table;
use crate::figures::text::{Area, DrawResult};
use crate::figures::{Context, Figure, FigureKind, ReportError, file_safe};
use crate::table::Col;
use crate::table::shared::autocorrelation::{AUTOCORRELATION, LAG};
use crate::table::shared::{CHAIN, ITERATION, JOB_ID};

/// Most curves per chart before groups are coarsened.
const MAX_GROUPS: usize = 10;
/// Longest trace drawn per chain; longer traces are strided.
const MAX_TRACE_POINTS: usize = 4000;
/// The probe drawn in trace plots: the centre of the grid (k = 2 of 0..4).
const CENTRE_PROBE: usize = 2;
/// A chart filling its figure below a legend strip.
const WIDE_FRAME: Frame = Frame::LINES
    .margins(16, 16, 16)
    .labels(52, 80)
    .text(14.0, 15.0);

/// Jobs sharing all swept values but the replicate, labelled for a legend.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobGroup {
    pub(crate) label: String,
    pub(crate) job_ids: Vec<String>,
}

/// The curves of a chart: job groups, and the swept columns averaged over to keep them few.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grouping {
    pub(crate) groups: Vec<JobGroup>,
    pub(crate) pooled: Vec<String>,
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
pub(crate) fn job_groups(context: &Context, job_ids: &[String]) -> Grouping {
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
                    label: context.shape.naming.joined_label(&names, &key),
                    job_ids: rows
                        .iter()
                        .filter_map(|&r| jobs.str_at(JOB_ID, r).map(str::to_string))
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
fn mean_curve(table: &Table, job_ids: &[String], x: Col<i64>, value: Col<f64>) -> Vec<(f64, f64)> {
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

/// Labelled curves, one per job group, each the mean of `value` against `x` over its jobs;
/// `keep` drops points (e.g. those a log axis cannot show). Groups without points are left out.
fn group_curves(
    grouping: &Grouping,
    table: &Table,
    (x, value): (Col<i64>, Col<f64>),
    keep: impl Fn(&(f64, f64)) -> bool,
) -> Vec<(String, Vec<(f64, f64)>)> {
    grouping
        .groups
        .iter()
        .map(|g| {
            let mut curve = mean_curve(table, &g.job_ids, x, value);
            curve.retain(&keep);
            (g.label.clone(), curve)
        })
        .filter(|(_, curve)| !curve.is_empty())
        .collect()
}

/// One chart of labelled curves (dots where there are few points) under a legend, with a
/// dashed reference line; points are in plot space of the axes.
struct CurvesFigure<'a> {
    title: &'a str,
    size: (u32, u32),
    axes: (Axis, Axis),
    titles: (&'a str, &'a str),
    curves: Vec<(String, Vec<(f64, f64)>)>,
    /// Legend label, points, dashes per step, line width.
    reference: (&'a str, Vec<(f64, f64)>, usize, u32),
}

impl CurvesFigure<'_> {
    fn draw(&self, path: &std::path::Path) -> Result<(), ReportError> {
        figure(path, self.size, (self.title, 50), |root, body| {
            let (legend_area, plot_area) = body.split_vertically(60);
            let mut entries: Vec<(String, RGBColor)> = self
                .curves
                .iter()
                .enumerate()
                .map(|(k, (label, _))| (label.clone(), series_colour(k)))
                .collect();
            if !self.reference.0.is_empty() {
                entries.push((self.reference.0.to_string(), INK_GREY));
            }
            legend(&legend_area, &entries)?;
            let (x, y) = (&self.axes.0, &self.axes.1);
            let titles = Titles {
                title: "",
                x: &x.title(self.titles.0),
                y: &y.title(self.titles.1),
            };
            let (mut chart, _) = plot(root, &plot_area, (x, y), WIDE_FRAME, titles)?;
            let (_, points, pieces, width) = &self.reference;
            dashed(&mut chart, points, INK_GREY, (*width, *pieces))?;
            for (k, (_, points)) in self.curves.iter().enumerate() {
                let dot = if points.len() <= 60 { 3 } else { 0 };
                curve(&mut chart, points, series_colour(k), (2, dot))?;
            }
            Ok(())
        })
    }
}

/// The curves' points placed on the axes.
fn placed(
    curves: &[(String, Vec<(f64, f64)>)],
    x: &Axis,
    y: &Axis,
) -> Vec<(String, Vec<(f64, f64)>)> {
    curves
        .iter()
        .map(|(label, points)| {
            let points = points
                .iter()
                .filter_map(|&(a, b)| Some((x.place(a)?, y.place(b)?)))
                .collect();
            (label.clone(), points)
        })
        .collect()
}

fn range_of(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    finite_range(values).unwrap_or((0.0, 1.0))
}

// ---------------------------------------------------------------------------------------
// Convergence

pub(crate) fn convergence_figure(
    context: &Context,
    table: &Table,
) -> Result<Option<Figure>, ReportError> {
    let grouping = job_groups(context, &table.job_ids());
    let curves = group_curves(&grouping, table, (ITERATION, RMS_TO_EXACT), |&(t, r)| {
        t > 0.0 && r > 0.0
    });
    if curves.is_empty() {
        return Ok(None);
    }
    let reference = reference_slope(&curves);
    let points = || curves.iter().flat_map(|(_, c)| c.iter().copied());
    let (t_lo, t_hi) = range_of(points().map(|p| p.0));
    let (r_lo, r_hi) = range_of(points().map(|p| p.1).chain(reference.iter().map(|p| p.1)));
    let (x, y) = (Axis::log(t_lo, t_hi), Axis::log(r_lo, r_hi));
    let reference = placed(&[(String::new(), reference)], &x, &y).remove(0).1;
    let file = "convergence.png";
    CurvesFigure {
        title: "Running mean vs exact posterior mean",
        size: (1000, 680),
        curves: placed(&curves, &x, &y),
        axes: (x, y),
        titles: ("iteration T", "RMS to exact mean"),
        reference: ("1/√T reference (dashed)", reference, 24, 2),
    }
    .draw(&context.path(file))?;
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

// ---------------------------------------------------------------------------------------
// Autocorrelation

pub(crate) fn autocorrelation_figure(
    context: &Context,
    table: &Table,
) -> Result<Option<Figure>, ReportError> {
    let grouping = job_groups(context, &table.job_ids());
    let curves = group_curves(&grouping, table, (LAG, AUTOCORRELATION), |_| true);
    if curves.is_empty() {
        return Ok(None);
    }
    let points = || curves.iter().flat_map(|(_, c)| c.iter().copied());
    let (lag_lo, lag_hi) = range_of(points().map(|p| p.0));
    let (acf_lo, _) = range_of(points().map(|p| p.1));
    let x = Axis::linear(lag_lo.min(0.0), lag_hi.max(1.0));
    let y = Axis::linear(acf_lo.min(-0.1) - 0.05, 1.05);
    let zero = vec![(x.lo, 0.0), (x.hi, 0.0)];
    let file = "autocorrelation.png";
    CurvesFigure {
        title: "Autocorrelation of the log-likelihood",
        size: (1000, 640),
        curves,
        axes: (x, y),
        titles: ("lag (thinned draws)", "autocorrelation"),
        reference: ("", zero, 60, 1),
    }
    .draw(&context.path(file))?;
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

// ---------------------------------------------------------------------------------------
// Traces

/// The probe column drawn: the centre of the grid, or the first probe the table has.
fn probe_column(table: &Table) -> Option<String> {
    let centre = PROBE.member(CENTRE_PROBE);
    if table.has(&centre) {
        return Some(centre);
    }
    table
        .column_names()
        .iter()
        .find(|c| PROBE.contains(c))
        .cloned()
}

pub(crate) fn trace_figures(
    context: &Context,
    table: &Table,
    job_ids: &[String],
) -> Result<Vec<Figure>, ReportError> {
    let probe = probe_column(table);
    let mut figures = Vec::new();
    for job_id in job_ids {
        let chains = chains_of(table, job_id, probe.as_ref());
        if chains.is_empty() {
            continue;
        }
        let description = context.describe(job_id);
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

fn chains_of(table: &Table, job_id: &str, probe: Option<&String>) -> Vec<(i64, Trace)> {
    let mut chains: BTreeMap<i64, Trace> = BTreeMap::new();
    for row in table.rows_of_job(job_id) {
        let Some(iteration) = table.finite(ITERATION, row) else {
            continue;
        };
        let chain = table.finite(CHAIN, row).map_or(0, |c| c as i64);
        let loglik = table.finite(LOGLIK, row);
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
        .and_then(|row| context.jobs.finite(MODEL_GRID, row));
    let k = probe
        .and_then(|p| PROBE.member_of(p))
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
    figure(path, (1100, 760), (description, 50), |root, body| {
        let (legend_area, plots) = body.split_vertically(40);
        let entries: Vec<(String, RGBColor)> = chains
            .iter()
            .enumerate()
            .map(|(k, (c, _))| (format!("chain {c}"), series_colour(k)))
            .collect();
        legend(&legend_area, &entries)?;
        let (top, bottom) = plots.split_vertically(335);
        draw_trace_panel(root, &top, chains, |p| p.1, "log-likelihood")?;
        draw_trace_panel(root, &bottom, chains, |p| p.2, probe_title)
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
    let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) = (
        finite_range(all.iter().map(|p| p.0)),
        finite_range(all.iter().map(|p| p.1)),
    ) else {
        return Ok(());
    };
    let axes = (&Axis::linear(x_lo, x_hi), &Axis::padded(y_lo, y_hi));
    let frame = Frame::LINES.margins(12, 36, 12).labels(44, 80);
    let titles = Titles {
        title,
        x: "iteration",
        y: "",
    };
    let (mut chart, _) = plot(root, area, axes, frame, titles)?;
    let alpha = if chains.len() > 1 { 0.75 } else { 1.0 };
    for (k, (_, trace)) in chains.iter().enumerate() {
        curve(
            &mut chart,
            &points(trace),
            series_colour(k).mix(alpha),
            (1, 0),
        )?;
    }
    Ok(())
}
