//! The partition family's report figures, read from `partitions.parquet` and
//! `partition_traces.parquet`:
//!
//! - **maps**: the areas at their coordinates, coloured by region, one panel per method (the
//!   best partition of the first replicate of each `sampler.kind`, the administrative start
//!   first). The data are points, not polygons, so regions show as groups of coloured points;
//!   the colour cycles through a 10-colour palette by region, so two regions can share one.
//! - **F traces**: F against the iteration for every chain, coloured by kind, on one figure (the
//!   slides' convergence figure), with the administrative start's F as the first point.

use std::collections::{BTreeMap, HashSet};

use plotters::prelude::*;

use super::schema::{partition_traces, partitions};
use crate::figures::chart::{Axis, Frame, Titles, curve, panel_figure, plot};
use crate::figures::colour::{finite_range, series_colour};
use crate::figures::tables::Table;
use crate::figures::{Context, Figure, FigureKind, ReportError};
use crate::study::keys::SAMPLER_KIND;
use crate::table::shared::ITERATION;
use crate::table::shared::jobs::REPLICATE;

const PANEL: (u32, u32) = (420, 420);
const TRACE_SIZE: (u32, u32) = (900, 520);
const TITLE_HEIGHT: u32 = 50;
const LEGEND_HEIGHT: u32 = 40;

/// Both figures, when the results hold partition tables.
pub(crate) fn figures(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let mut figures = Vec::new();
    if let Some(table) = context.read(&partitions::TABLE, None, notes)? {
        figures.extend(map_figure(context, &table)?);
    }
    if let Some(table) = context.read(&partition_traces::TABLE, None, notes)? {
        figures.extend(trace_figure(context, &table)?);
    }
    Ok(figures)
}

/// A padded linear axis over `values`.
fn padded(values: &[f64]) -> Axis {
    match finite_range(values.iter().copied()) {
        Some((lo, hi)) => Axis::padded(lo, hi),
        None => Axis::linear(0.0, 1.0),
    }
}

/// The kind and replicate of a job, from jobs.parquet.
fn kind_of(context: &Context<'_>, job_id: &str) -> Option<(String, i64)> {
    let row = context.job_row(job_id)?;
    let kind = context.jobs.str_at(SAMPLER_KIND, row)?.to_string();
    let replicate = context.jobs.finite(REPLICATE, row)? as i64;
    Some((kind, replicate))
}

/// One map panel: points and their regions.
struct MapPanel {
    title: String,
    points: Vec<(f64, f64, i64)>,
}

/// The rows of `table` for `job_id` and partition `which`, as (x, y, region).
fn partition_points(table: &Table, job_id: &str, which: &str) -> Vec<(f64, f64, i64)> {
    let rows = table.rows_of_job(job_id);
    rows.into_iter()
        .filter(|&r| table.str_at(partitions::WHICH, r) == Some(which))
        .filter_map(|r| {
            Some((
                table.finite(partitions::X, r)?,
                table.finite(partitions::Y, r)?,
                table.finite(partitions::REGION, r)? as i64,
            ))
        })
        .collect()
}

/// Nearest neighbours per point that make two regions "touch" for the colouring.
const TOUCH_NEIGHBOURS: usize = 5;
/// Colours the map uses (the series palette).
const MAP_COLOURS: usize = 10;

/// A colour index per region such that regions whose points are near each other (one among the
/// other's [`TOUCH_NEIGHBOURS`] nearest points) get different colours where ten colours allow:
/// greedy colouring, most-touching regions first, the least-used free colour each time.
fn region_colours(points: &[(f64, f64, i64)]) -> BTreeMap<i64, usize> {
    let mut touching: BTreeMap<i64, HashSet<i64>> = BTreeMap::new();
    for (i, &(x, y, region)) in points.iter().enumerate() {
        touching.entry(region).or_default();
        let mut nearest: Vec<(f64, i64)> = points
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &(u, v, r))| ((u - x).powi(2) + (v - y).powi(2), r))
            .collect();
        let k = TOUCH_NEIGHBOURS.min(nearest.len());
        if k == 0 {
            continue;
        }
        nearest.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        for &(_, other) in &nearest[..k] {
            if other != region {
                touching.entry(region).or_default().insert(other);
                touching.entry(other).or_default().insert(region);
            }
        }
    }
    let mut order: Vec<i64> = touching.keys().copied().collect();
    order.sort_by_key(|r| (std::cmp::Reverse(touching[r].len()), *r));
    let mut colour: BTreeMap<i64, usize> = BTreeMap::new();
    let mut used = [0usize; MAP_COLOURS];
    for region in order {
        let taken: HashSet<usize> = touching[&region]
            .iter()
            .filter_map(|r| colour.get(r).copied())
            .collect();
        let pick = (0..MAP_COLOURS)
            .filter(|c| !taken.contains(c))
            .min_by_key(|&c| (used[c], c))
            .unwrap_or_else(|| (0..MAP_COLOURS).min_by_key(|&c| (used[c], c)).unwrap_or(0));
        used[pick] += 1;
        colour.insert(region, pick);
    }
    colour
}

fn map_figure(context: &Context<'_>, table: &Table) -> Result<Vec<Figure>, ReportError> {
    let mut panels: Vec<MapPanel> = Vec::new();
    let mut seen = HashSet::new();
    for job_id in table.job_ids() {
        let Some((kind, replicate)) = kind_of(context, &job_id) else {
            continue;
        };
        if replicate != 0 || !seen.insert(kind.clone()) {
            continue;
        }
        if panels.is_empty() {
            let start = partition_points(table, &job_id, "start");
            if !start.is_empty() {
                panels.push(MapPanel {
                    title: "administrative start (towns in connected pieces)".into(),
                    points: start,
                });
            }
        }
        let best = partition_points(table, &job_id, "best");
        if !best.is_empty() {
            panels.push(MapPanel {
                title: format!("{kind}: best partition"),
                points: best,
            });
        }
    }
    if panels.is_empty() {
        return Ok(Vec::new());
    }
    let file = "partition_maps.png".to_string();
    let all: Vec<(f64, f64)> = panels
        .iter()
        .flat_map(|p| p.points.iter().map(|&(x, y, _)| (x, y)))
        .collect();
    let xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = all.iter().map(|p| p.1).collect();
    let (x_axis, y_axis) = (padded(&xs), padded(&ys));
    panel_figure(
        &context.path(&file),
        ("Partitions (first replicate)", TITLE_HEIGHT),
        (0, &[]),
        (PANEL, panels.len(), 3),
        |root, area, k| {
            let panel = &panels[k];
            let titles = Titles {
                title: &panel.title,
                x: "x",
                y: "y",
            };
            let (mut chart, _) = plot(root, area, (&x_axis, &y_axis), Frame::HEAT, titles)?;
            let colours = region_colours(&panel.points);
            chart.draw_series(panel.points.iter().map(|&(x, y, region)| {
                Circle::new((x, y), 3, series_colour(colours[&region]).filled())
            }))?;
            Ok(())
        },
    )?;
    Ok(vec![Figure {
        file,
        title: "Partition maps".into(),
        caption: "Each area at its point (data.coordinates), coloured by its region: the \
                  administrative start, then the best partition (smallest F) of the first \
                  replicate of each kind. Ten colours, given greedily so that regions whose \
                  points are near each other differ where ten allow. Points, not polygons: \
                  region borders are where the colours change."
            .into(),
        kind: FigureKind::Family,
    }])
}

fn trace_figure(context: &Context<'_>, table: &Table) -> Result<Vec<Figure>, ReportError> {
    let mut by_kind: BTreeMap<String, Vec<Vec<(f64, f64)>>> = BTreeMap::new();
    for job_id in table.job_ids() {
        let Some((kind, _)) = kind_of(context, &job_id) else {
            continue;
        };
        let points: Vec<(f64, f64)> = table
            .rows_of_job(&job_id)
            .into_iter()
            .filter_map(|r| {
                Some((
                    table.finite(ITERATION, r)?,
                    table.finite(partition_traces::F, r)?,
                ))
            })
            .collect();
        if !points.is_empty() {
            by_kind.entry(kind).or_default().push(points);
        }
    }
    if by_kind.is_empty() {
        return Ok(Vec::new());
    }
    let xs: Vec<f64> = by_kind.values().flatten().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = by_kind.values().flatten().flatten().map(|p| p.1).collect();
    let (x_axis, y_axis) = (padded(&xs), padded(&ys));
    let entries: Vec<(String, RGBColor)> = by_kind
        .keys()
        .enumerate()
        .map(|(k, kind)| (kind.clone(), series_colour(k)))
        .collect();
    let file = "partition_traces.png".to_string();
    panel_figure(
        &context.path(&file),
        ("F(Z) along the chains", TITLE_HEIGHT),
        (LEGEND_HEIGHT, &entries),
        (TRACE_SIZE, 1, 1),
        |root, area, _| {
            let titles = Titles {
                title: "",
                x: "iteration",
                y: "F(Z)",
            };
            let (mut chart, _) = plot(root, area, (&x_axis, &y_axis), Frame::LINES, titles)?;
            for (k, traces) in by_kind.values().enumerate() {
                for trace in traces {
                    curve(&mut chart, trace, series_colour(k), (1, 0))?;
                }
            }
            Ok(())
        },
    )?;
    let chains: usize = by_kind.values().map(Vec::len).sum();
    Ok(vec![Figure {
        file,
        title: "F traces of the proposals".into(),
        caption: format!(
            "F(Z) every sampler.thin iterations for each of the {chains} chains, coloured by \
             kind, all from the administrative start (iteration 0). Lower is better; a chain \
             that flattens early has stopped finding improving flips at its temperature."
        ),
        kind: FigureKind::Family,
    }])
}
