//! Metrics against swept parameters: for every numeric swept column, one figure with a panel
//! per key metric, one line per value of the other swept columns (sampler kind first), the
//! mean over replicates with the min-max spread as a band. The x axis is logarithmic when the
//! swept values span more than a factor 20 (length scales 0.01..10, step sizes). A metric with a
//! baseline (the held-out count MAE and its constant-rate baseline) gets the baseline as a dashed
//! line of the same colour, so "does the model beat the baseline?" is read off the panel.

use plotters::prelude::*;

use crate::figures::chart::{Axis, Frame, Titles, curve, dashed, panel_figure, plot};
use crate::figures::colour::series_colour;
use crate::figures::shape::{Cell, Naming, Swept, group_rows, sampler_first};
use crate::figures::tables::{Found, Table};
use crate::figures::text::{Area, DrawResult};
use crate::figures::{Context, Figure, FigureKind, Metric, ReportColumns, ReportError, file_safe};
use crate::table::shared::ACCEPTANCE_RATE;

/// Lines per panel before further swept columns are pooled.
const MAX_LINES: usize = 8;
const PANEL_WIDTH: u32 = 520;
const PANEL_HEIGHT: u32 = 380;
const LEGEND_HEIGHT: u32 = 54;
/// Up to this many swept values are used as the x ticks themselves.
const MAX_VALUE_TICKS: usize = 8;

/// One plotted point: the mean, min and max of a metric over the jobs at one x value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub(crate) x: f64,
    pub(crate) mean: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

/// One line: its legend label and points sorted by x.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) points: Vec<Summary>,
}

/// One panel: a metric, its lines and, where the metric has one, its baseline's lines.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Panel {
    pub(crate) metric: Metric,
    pub(crate) title: &'static str,
    pub(crate) lines: Vec<Line>,
    /// The baseline of each line (same labels), drawn dashed.
    pub(crate) baselines: Vec<Line>,
}

/// How the lines of one swept column's figure are formed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinePlan {
    /// Columns whose values name the lines.
    pub(crate) by: Vec<String>,
    /// Swept columns averaged over (pooled) because there would be too many lines.
    pub(crate) pooled: Vec<String>,
}

/// One figure per swept numeric column: a panel per metric of `metrics` that some job has.
pub(crate) fn sweep_figures(
    context: &Context,
    metrics: &ReportColumns,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let mut figures = Vec::new();
    for swept in context.shape.swept.iter().filter(|s| s.is_numeric()) {
        let plan = line_plan(context, swept);
        let panels: Vec<Panel> = metrics
            .swept
            .iter()
            .filter_map(|&(metric, title)| {
                let lines = metric_lines(context, &swept.column, metric, &plan);
                let baselines = metrics
                    .baseline_of(metric)
                    .map_or_else(Vec::new, |(column, _)| {
                        metric_lines(context, &swept.column, Metric::Column(column), &plan)
                    });
                (!lines.is_empty()).then_some(Panel {
                    metric,
                    title,
                    lines,
                    baselines,
                })
            })
            .collect();
        if panels.is_empty() {
            continue;
        }
        let file = format!("sweep-{}.png", file_safe(&swept.column));
        draw(&context.path(&file), &context.shape.naming, swept, &panels)?;
        if !plan.pooled.is_empty() {
            notes.push(format!(
                "{file}: lines pooled over {} (too many combinations to draw separately)",
                plan.pooled.join(", ")
            ));
        }
        figures.push(Figure {
            title: format!(
                "Metrics against {}",
                context.shape.naming.axis_title(&swept.column)
            ),
            caption: caption(&context.shape.naming, swept, &plan, &panels, metrics),
            file,
            kind: FigureKind::Sweep,
        });
    }
    Ok(figures)
}

/// Lines by every other swept column when that gives few lines; else by the first other
/// swept column with few values (sampler kind preferred), pooling the rest.
pub(crate) fn line_plan(context: &Context, swept: &Swept) -> LinePlan {
    let others: Vec<String> = context
        .shape
        .swept
        .iter()
        .filter(|s| s.column != swept.column)
        .map(|s| s.column.clone())
        .collect();
    let combinations = |columns: &[String]| {
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        group_rows(context.jobs, &context.shape.ok_rows, &names).len()
    };
    if combinations(&others) <= MAX_LINES {
        let mut by = others;
        sampler_first(&mut by);
        return LinePlan {
            by,
            pooled: Vec::new(),
        };
    }
    let mut preference = others.clone();
    sampler_first(&mut preference);
    let by: Vec<String> = preference
        .into_iter()
        .find(|c| context.shape.levels(c) <= MAX_LINES)
        .into_iter()
        .collect();
    let pooled = others.into_iter().filter(|c| !by.contains(c)).collect();
    LinePlan { by, pooled }
}

/// The lines of one metric against `x_column`, from ok jobs with a finite metric and x.
pub(crate) fn metric_lines(
    context: &Context,
    x_column: &str,
    metric: Metric,
    plan: &LinePlan,
) -> Vec<Line> {
    let jobs = context.jobs;
    let rows: Vec<usize> = context
        .shape
        .ok_rows
        .iter()
        .copied()
        .filter(|&r| metric.value(jobs, r).is_some() && jobs.finite(Found(x_column), r).is_some())
        .collect();
    let by: Vec<&str> = plan.by.iter().map(String::as_str).collect();
    group_rows(jobs, &rows, &by)
        .into_iter()
        .map(|(key, rows)| Line {
            label: context.shape.naming.joined_label(&by, &key),
            points: summarise(jobs, &rows, x_column, metric),
        })
        .filter(|line| !line.points.is_empty())
        .collect()
}

fn summarise(jobs: &Table, rows: &[usize], x_column: &str, metric: Metric) -> Vec<Summary> {
    group_rows(jobs, rows, &[x_column])
        .into_iter()
        .filter_map(|(key, rows)| {
            let x = key.first().and_then(Cell::as_f64)?;
            let values: Vec<f64> = rows.iter().filter_map(|&r| metric.value(jobs, r)).collect();
            let count = values.len();
            (count > 0).then(|| Summary {
                x,
                mean: values.iter().sum::<f64>() / count as f64,
                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            })
        })
        .collect()
}

fn draw(
    path: &std::path::Path,
    naming: &Naming,
    swept: &Swept,
    panels: &[Panel],
) -> Result<(), ReportError> {
    let mut labels: Vec<String> = Vec::new();
    for line in panels.iter().flat_map(|p| &p.lines) {
        if !labels.contains(&line.label) {
            labels.push(line.label.clone());
        }
    }
    let entries: Vec<(String, RGBColor)> = labels
        .iter()
        .enumerate()
        .map(|(k, l)| (l.clone(), series_colour(k)))
        .collect();
    let colour_of = |line: &Line| {
        let k = labels.iter().position(|l| *l == line.label).unwrap_or(0);
        series_colour(k)
    };
    let x_values: Vec<f64> = swept.values.iter().filter_map(Cell::as_f64).collect();
    let mut x_axis = Axis::auto(&x_values, 20.0);
    if x_values.len() <= MAX_VALUE_TICKS {
        // Few swept values: tick exactly at them (D = 4, 8, 16, ...; β = 0.04, 0.2, 1).
        x_axis.ticks = x_values.iter().filter_map(|v| x_axis.place(*v)).collect();
    }
    let title = format!("Metrics against {}", naming.axis_title(&swept.column));
    let layout = ((PANEL_WIDTH, PANEL_HEIGHT), panels.len(), 3);
    let legend = (LEGEND_HEIGHT, entries.as_slice());
    panel_figure(path, (&title, 50), legend, layout, |root, area, k| {
        let x_title = naming.axis_title(&swept.column);
        draw_panel(root, area, (&x_axis, &x_title), &panels[k], &colour_of)
    })
}

fn y_axis(panel: &Panel) -> Axis {
    if panel.metric == Metric::Column(ACCEPTANCE_RATE) {
        return Axis::linear(0.0, 1.02);
    }
    let values: Vec<f64> = panel
        .lines
        .iter()
        .chain(&panel.baselines)
        .flat_map(|l| l.points.iter().flat_map(|p| [p.min, p.max]))
        .collect();
    Axis::auto(&values, 50.0)
}

fn draw_panel(
    root: &Area,
    area: &Area,
    (x_axis, x_title): (&Axis, &str),
    panel: &Panel,
    colour_of: &dyn Fn(&Line) -> RGBColor,
) -> DrawResult {
    let y_axis = y_axis(panel);
    let titles = Titles {
        title: panel.title,
        x: &x_axis.title(x_title),
        y: &y_axis.title(panel.metric.name()),
    };
    let (mut chart, _) = plot(root, area, (x_axis, &y_axis), Frame::LINES, titles)?;
    let place = |p: &Summary| -> Option<[f64; 4]> {
        Some([
            x_axis.place(p.x)?,
            y_axis.place(p.mean)?,
            y_axis.place(p.min)?,
            y_axis.place(p.max)?,
        ])
    };
    for baseline in &panel.baselines {
        let means: Vec<(f64, f64)> = baseline
            .points
            .iter()
            .filter_map(place)
            .map(|p| (p[0], p[1]))
            .collect();
        dashed(&mut chart, &means, colour_of(baseline), (2, 8))?;
    }
    for line in &panel.lines {
        let colour = colour_of(line);
        let placed: Vec<[f64; 4]> = line.points.iter().filter_map(place).collect();
        if placed.iter().any(|p| p[3] > p[2]) {
            let band: Vec<(f64, f64)> = placed
                .iter()
                .map(|p| (p[0], p[3]))
                .chain(placed.iter().rev().map(|p| (p[0], p[2])))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.18).filled(),
            )))?;
            for p in &placed {
                curve(
                    &mut chart,
                    &[(p[0], p[2]), (p[0], p[3])],
                    colour.mix(0.6),
                    (1, 0),
                )?;
            }
        }
        let means: Vec<(f64, f64)> = placed.iter().map(|p| (p[0], p[1])).collect();
        curve(&mut chart, &means, colour, (2, 4))?;
    }
    Ok(())
}

fn caption(
    naming: &Naming,
    swept: &Swept,
    plan: &LinePlan,
    panels: &[Panel],
    metrics: &ReportColumns,
) -> String {
    let titles: Vec<&str> = panels.iter().map(|p| p.title).collect();
    let name = naming.short_name(&swept.column);
    let mut text = format!(
        "Each panel plots one metric ({}) against {}{}. Points are the mean over replicates; \
         the shaded band and whiskers span the minimum to the maximum, so their width shows the \
         replicate-to-replicate spread. ",
        titles.join("; "),
        naming.axis_title(&swept.column),
        if name.is_empty() {
            String::new()
        } else {
            format!(" ({name})")
        },
    );
    if !swept.companions.is_empty() {
        text.push_str(&format!(
            "{} moved together with it. ",
            swept.companions.join(", ")
        ));
    }
    if plan.by.is_empty() {
        text.push_str("One line: nothing else was swept. ");
    } else {
        text.push_str(&format!("One line per value of {}. ", plan.by.join(" × ")));
    }
    if !plan.pooled.is_empty() {
        text.push_str(&format!(
            "Values are pooled over {}. ",
            plan.pooled.join(", ")
        ));
    }
    for panel in panels.iter().filter(|p| !p.baselines.is_empty()) {
        if let Some((column, what)) = metrics.baseline_of(panel.metric) {
            text.push_str(&format!(
                "In the {} panel the dashed line of each colour is the baseline `{}`, {what}: \
                 points below it beat the baseline. ",
                panel.title,
                column.name()
            ));
        }
    }
    text.push_str("Axes marked log scale are logarithmic (values spanning more than a factor 20 on x, 50 on y).");
    text
}
