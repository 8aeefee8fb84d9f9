//! The acceptance heat map: mean acceptance rate over grid size D x step size beta, one panel
//! per sampler, each cell annotated with its value. Drawn when the study swept both the grid
//! and the step size: it is the figure that shows GRW's acceptance collapsing as the grid is
//! refined while pCN's does not.

use plotters::prelude::*;

use super::canvas::{
    Area, AxisCoord, DrawResult, decorate, draw_colour_bar, plot_box, render_png, text, titled,
};
use super::colour::{ColourMap, Scale, luminance};
use super::shape::{Cell, distinct};
use super::text::Label;
use super::{Context, Figure, FigureKind, ReportError};

const GRID: &str = "model_grid";
const BETA: &str = "sampler_beta";
const SAMPLER: &str = "sampler_kind";
const METRIC: &str = "acceptance_rate";
const FILE: &str = "acceptance.png";
const X_LABELS: u32 = 50;
const Y_LABELS: u32 = 66;

/// Mean acceptance per (sampler, grid, beta) over the ok jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptanceGrid {
    pub samplers: Vec<String>,
    pub grids: Vec<Cell>,
    pub betas: Vec<Cell>,
    /// means[s][g][b]; `None` when no ok job has that combination.
    pub means: Vec<Vec<Vec<Option<f64>>>>,
    /// Jobs averaged per cell, largest over the cells.
    pub max_jobs_per_cell: usize,
}

/// The heat map, when grid and beta were both swept and acceptance rates exist.
pub fn acceptance_figure(context: &Context) -> Result<Option<Figure>, ReportError> {
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

pub fn acceptance_grid(context: &Context) -> Option<AcceptanceGrid> {
    let jobs = context.jobs;
    let has_all = [GRID, BETA, SAMPLER, METRIC].iter().all(|c| jobs.has(c));
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
    let samplers: Vec<String> = distinct(jobs, SAMPLER, &rows)
        .iter()
        .map(Cell::display)
        .collect();
    let grids = distinct(jobs, GRID, &rows);
    let betas = distinct(jobs, BETA, &rows);
    let mut max_jobs_per_cell = 0;
    let means = samplers
        .iter()
        .map(|sampler| {
            grids
                .iter()
                .map(|grid| {
                    betas
                        .iter()
                        .map(|beta| {
                            let values: Vec<f64> = rows
                                .iter()
                                .filter(|&&r| {
                                    Cell::of(jobs, SAMPLER, r).display() == *sampler
                                        && Cell::of(jobs, GRID, r) == *grid
                                        && Cell::of(jobs, BETA, r) == *beta
                                })
                                .filter_map(|&r| jobs.finite(METRIC, r))
                                .collect();
                            max_jobs_per_cell = max_jobs_per_cell.max(values.len());
                            (!values.is_empty())
                                .then(|| values.iter().sum::<f64>() / values.len() as f64)
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
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
    render_png(path, (width, panel_height + 50), |root| {
        let body = titled(root, "Acceptance rate by grid size D and step size β", 50)?;
        let (panels, _) = body.split_horizontally(width - bar_width);
        let areas = panels.split_evenly((1, table.samplers.len()));
        let scale = Scale::fixed(0.0, 1.0, ColourMap::Viridis);
        let mut plot_pixels = None;
        for (s, area) in areas.iter().enumerate() {
            plot_pixels = Some(draw_panel(root, area, table, s, &scale)?);
        }
        if let Some((x_end, y_range)) = plot_pixels {
            draw_colour_bar(root, x_end + 22, y_range, &scale, "mean acceptance rate")?;
        }
        Ok(())
    })
}

/// Draws one sampler's panel; returns the right edge and vertical extent of its plot area.
fn draw_panel(
    root: &Area,
    area: &Area,
    table: &AcceptanceGrid,
    s: usize,
    scale: &Scale,
) -> DrawResult<(i32, (i32, i32))> {
    let (nb, ng) = (table.betas.len(), table.grids.len());
    let x_coord = AxisCoord::new(-0.5..nb as f64 - 0.5, (0..nb).map(|k| k as f64).collect());
    let y_coord = AxisCoord::new(-0.5..ng as f64 - 0.5, (0..ng).map(|k| k as f64).collect());
    let label_of = |cells: &[Cell], v: f64| {
        let k = v.round();
        if k >= 0.0 {
            cells.get(k as usize).map(Cell::display).unwrap_or_default()
        } else {
            String::new()
        }
    };
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_top(40)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x_coord, y_coord)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .label_style(text(15.0))
        .x_label_formatter(&|v| label_of(&table.betas, *v))
        .y_label_formatter(&|v| label_of(&table.grids, *v))
        .draw()?;
    for (g, row) in table.means[s].iter().enumerate() {
        for (b, mean) in row.iter().enumerate() {
            let (x, y) = (b as f64, g as f64);
            let colour = scale.colour(*mean);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                colour.filled(),
            )))?;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                WHITE.stroke_width(2),
            )))?;
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
    let plot = plot_box(&chart, X_LABELS, Y_LABELS);
    let title = format!("sampler: {}", table.samplers[s]);
    decorate(root, &plot, &title, "step size β", "grid size D", 16.0)?;
    Ok((plot.x.end, (plot.y.start, plot.y.end)))
}
