//! The acceptance heat map: mean acceptance rate over grid size D x step size beta, one panel
//! per sampler, each cell annotated with its value. Drawn when the study swept both the grid
//! and the step size: it is the figure that shows GRW's acceptance collapsing as the grid is
//! refined while pCN's does not.

use plotters::prelude::*;

use crate::figures::chart::{Axis, Frame, PlotBox, Titles, colour_bar, figure, panels, plot};
use crate::figures::colour::{ColourMap, Scale, luminance};
use std::collections::BTreeMap;

use crate::families::latent_field::keys::{MODEL_GRID as GRID, SAMPLER_BETA as BETA};
use crate::figures::shape::{Cell, distinct, group_rows};
use crate::figures::text::{Area, DrawResult, Label};
use crate::figures::{Context, Figure, FigureKind, ReportError};
use crate::study::keys::SAMPLER_KIND as SAMPLER;
use crate::table::shared::ACCEPTANCE_RATE as METRIC;

const FILE: &str = "acceptance.png";
const PANEL_FRAME: Frame = Frame::HEAT
    .margins(10, 40, 10)
    .labels(50, 66)
    .text(15.0, 16.0);

/// Mean acceptance per (sampler, grid, beta) over the ok jobs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AcceptanceGrid {
    pub(crate) samplers: Vec<String>,
    pub(crate) grids: Vec<Cell>,
    pub(crate) betas: Vec<Cell>,
    /// means[s][g][b]; `None` when no ok job has that combination.
    pub(crate) means: Vec<Vec<Vec<Option<f64>>>>,
    /// Jobs averaged per cell, largest over the cells.
    pub(crate) max_jobs_per_cell: usize,
}

/// The heat map, when grid and beta were both swept and acceptance rates exist.
pub(crate) fn acceptance_figure(context: &Context) -> Result<Option<Figure>, ReportError> {
    let Some(table) = acceptance_grid(context) else {
        return Ok(None);
    };
    draw(&context.path(FILE), &table)?;
    let samplers = table.samplers.join(", ");
    Ok(Some(Figure {
        file: FILE.into(),
        title: "Acceptance rate over grid size and step size".into(),
        caption: format!(
            "Mean acceptance rate of each sampler ({samplers}) for every grid size D (rows) and \
             step size β (columns), averaged over up to {} jobs per cell (replicates and any \
             other swept parameters). Same colour, same rate: compare a column across the rows \
             to see how the rate changes as the grid is refined. Grey cells were not run or failed.",
            table.max_jobs_per_cell
        ),
        kind: FigureKind::Acceptance,
    }))
}

pub(crate) fn acceptance_grid(context: &Context) -> Option<AcceptanceGrid> {
    let jobs = context.jobs;
    let has_all = [GRID, BETA, SAMPLER].iter().all(|c| jobs.has(c)) && jobs.has(METRIC);
    if !has_all || context.shape.levels(GRID) < 2 || context.shape.levels(BETA) < 2 {
        return None;
    }
    let rows: Vec<usize> = context
        .shape
        .ok_rows
        .iter()
        .copied()
        .filter(|&r| jobs.finite(METRIC, r).is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let (samplers, grids, betas) = (
        distinct(jobs, SAMPLER.column(), &rows),
        distinct(jobs, GRID.column(), &rows),
        distinct(jobs, BETA.column(), &rows),
    );
    let groups: BTreeMap<Vec<Cell>, Vec<usize>> = group_rows(
        jobs,
        &rows,
        &[SAMPLER.column(), GRID.column(), BETA.column()],
    )
    .into_iter()
    .collect();
    let max_jobs_per_cell = groups.values().map(Vec::len).max().unwrap_or(0);
    let mean = |key: [&Cell; 3]| {
        let rows = groups.get(key.map(Cell::clone).as_slice())?;
        let sum: f64 = rows.iter().filter_map(|&r| jobs.finite(METRIC, r)).sum();
        Some(sum / rows.len() as f64)
    };
    let means = samplers
        .iter()
        .map(|s| {
            let row = |g| betas.iter().map(|b| mean([s, g, b])).collect();
            grids.iter().map(row).collect()
        })
        .collect();
    let samplers = samplers.iter().map(Cell::display).collect();
    Some(AcceptanceGrid {
        samplers,
        grids,
        betas,
        means,
        max_jobs_per_cell,
    })
}

fn draw(path: &std::path::Path, table: &AcceptanceGrid) -> Result<(), ReportError> {
    let panel_width = 150 + 78 * table.betas.len() as u32;
    let panel_height = 120 + 52 * table.grids.len() as u32;
    let bar_width = 110;
    let width = panel_width * table.samplers.len() as u32 + bar_width;
    let title = ("Acceptance rate by grid size D and step size β", 50);
    figure(path, (width, panel_height + 50), title, |root, body| {
        let (body, _) = body.split_horizontally(width - bar_width);
        let scale = Scale::fixed(0.0, 1.0, ColourMap::Viridis);
        let mut last = None;
        let areas = panels(&body, table.samplers.len(), table.samplers.len());
        for (s, area) in areas.iter().enumerate() {
            last = Some(draw_panel(root, area, table, s, &scale)?);
        }
        match last {
            Some(plot_box) => colour_bar(root, &plot_box, 22, &scale, "mean acceptance rate"),
            None => Ok(()),
        }
    })
}

/// Draws one sampler's panel; returns its plotting rectangle.
fn draw_panel(
    root: &Area,
    area: &Area,
    table: &AcceptanceGrid,
    s: usize,
    scale: &Scale,
) -> DrawResult<PlotBox> {
    let names = |cells: &[Cell]| cells.iter().map(Cell::display).collect();
    let x_axis = Axis::categories(names(&table.betas));
    let y_axis = Axis::categories(names(&table.grids));
    let title = format!("sampler: {}", table.samplers[s]);
    let titles = Titles {
        title: &title,
        x: "step size β",
        y: "grid size D",
    };
    let (mut chart, plot_box) = plot(root, area, (&x_axis, &y_axis), PANEL_FRAME, titles)?;
    for (g, row) in table.means[s].iter().enumerate() {
        for (b, mean) in row.iter().enumerate() {
            let (x, y) = (b as f64, g as f64);
            let corners = [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)];
            let colour = scale.colour(*mean);
            chart.draw_series([
                Rectangle::new(corners, colour.filled()),
                Rectangle::new(corners, WHITE.stroke_width(2)),
            ])?;
            let ink = if luminance(colour) > 0.5 {
                BLACK
            } else {
                WHITE
            };
            let label = mean.map_or("–".to_string(), |m| format!("{m:.3}"));
            Label::new(17.0)
                .colour(ink)
                .draw(root, &label, chart.backend_coord(&(x, y)))?;
        }
    }
    Ok(plot_box)
}
