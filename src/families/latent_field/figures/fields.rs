//! Field heat maps: for each representative job, one PNG with the panels that its likelihood
//! makes meaningful (truth, data, posterior mean, exact mean, posterior sd, absolute error,
//! predictive probability, expected counts, binomial shares and success probabilities), each
//! with a colour bar. Panels that show the
//! same quantity share one colour scale so that they can be compared by eye. When the truth's
//! length scale is swept (prior samples, misspecification studies), one more figure puts the
//! truths of the different length scales side by side on one scale. With a study region
//! (`model.region`), every panel greys the cells wholly outside it (`inside_fraction` = 0); the
//! region's outline and the marked points (`output.marks`) are drawn over the cells by
//! [`super::overlays`]. The Pareto k maps ([`super::loo`]) are drawn with the same grid and
//! panels, with values at points (sites) and a threshold marked on the colour bar.

use plotters::prelude::*;

use crate::families::latent_field::keys::{DATA_LENGTH_SCALE, MODEL_LIKELIHOOD};
use crate::families::latent_field::schema::fields::{
    CELL, EXACT_MEAN, EXPECTED_COUNT, I, INSIDE_FRACTION, INTENSITY_MEAN, J, OBSERVATION, OBSERVED,
    P_POSITIVE, POST_MEAN, POST_SD, SUCCESS_PROBABILITY, TRIALS, TRUTH, X, Y,
};
use crate::figures::chart::{
    Axis, Frame, Titles, colour_bar, mark_colour_bar, nice_ticks, panel_figure, plot,
};
use crate::figures::colour::{BLANK, ColourMap, OUTSIDE, Scale};
use crate::figures::shape::{Cell, first_replicate, group_rows};
use crate::figures::tables::Table;
use crate::figures::text::{Area, DrawResult};
use crate::figures::{Context, Figure, FigureKind, ReportError, file_safe};

use super::overlays::{OverlayTables, Overlays};
use crate::model::LikelihoodKind;
use crate::table::Col;
use crate::table::shared::JOB_ID;

const PANEL_WIDTH: u32 = 390;
const PANEL_HEIGHT: u32 = 330;
const TITLE_HEIGHT: u32 = 50;
const MAX_COLUMNS: usize = 4;
/// The radius of a panel's point (a site), in pixels.
const POINT_RADIUS: i32 = 4;
/// A heat map panel leaves room on its right for the colour bar.
const PANEL_FRAME: Frame = Frame::HEAT
    .margins(6, 32, 98)
    .labels(36, 44)
    .text(12.0, 13.0);

/// One heat map panel.
pub(super) struct Panel {
    title: String,
    values: Vec<Option<f64>>,
    /// Cells without a value are drawn blank (by design, e.g. unobserved) instead of grey.
    blank_when_missing: bool,
    scale: Scale,
    bar_label: String,
    /// Values at points (x, y), drawn as dots ringed in black on the panel's scale over the
    /// cells (a Pareto k map of sites data).
    pub(super) points: Vec<(f64, f64, Option<f64>)>,
    /// A value marked by a black line across the colour bar (Pareto k's 0.7).
    pub(super) mark: Option<f64>,
}

impl Panel {
    /// A panel of cell values without points or a mark.
    pub(super) fn of_cells(
        title: &str,
        values: Vec<Option<f64>>,
        blank_when_missing: bool,
        scale: Scale,
        bar_label: &str,
    ) -> Panel {
        Panel {
            title: title.to_string(),
            values,
            blank_when_missing,
            scale,
            bar_label: bar_label.to_string(),
            points: Vec::new(),
            mark: None,
        }
    }
}

/// The cells of one job's field: their positions (the `x`, `y` columns: [0, 1] on simulated
/// grids, the window's own units on real data) and the half-width of a cell along each axis.
pub(super) struct Grid {
    x: Vec<f64>,
    y: Vec<f64>,
    half_x: f64,
    half_y: f64,
    size: usize,
    /// Whether each cell lies wholly outside the study region (`inside_fraction` = 0).
    outside: Vec<bool>,
    /// The region's outline and the marked points drawn over the cells; empty for the truths.
    pub(super) overlays: Overlays,
}

impl Grid {
    /// The axes the panels are drawn on: the cells' extent along x and y.
    fn axes(&self) -> (Axis, Axis) {
        let axis = |values: &[f64], half: f64| {
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min) - half;
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max) + half;
            Axis::fixed(lo, hi, nice_ticks(lo, hi, 4))
        };
        (axis(&self.x, self.half_x), axis(&self.y, self.half_y))
    }
}

/// Half the smallest gap between distinct sorted positions (half a cell), or `fallback`.
fn half_spacing(values: &[f64], fallback: f64) -> f64 {
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|gap| *gap > 0.0)
        .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.min(g))))
        .map_or(fallback, |gap| gap / 2.0)
}

/// One figure per representative job that has rows in fields.parquet, with the job's region
/// outline (region.parquet) and marks (marks.parquet) where it has them.
pub(crate) fn field_figures(
    context: &Context,
    fields: &Table,
    overlay_tables: OverlayTables<'_>,
    job_ids: &[String],
) -> Result<Vec<Figure>, ReportError> {
    let mut figures = Vec::new();
    for job_id in job_ids {
        let rows = fields.rows_of_job(job_id);
        let Some(mut grid) = grid_of(fields, &rows) else {
            continue;
        };
        grid.overlays = Overlays::of_job(overlay_tables, job_id);
        let likelihood = likelihood_of(context, fields, &rows, job_id);
        let panels = panels_for(fields, &rows, likelihood);
        if panels.is_empty() {
            continue;
        }
        let description = context.describe(job_id);
        let file = format!("fields-{}.png", file_safe(job_id));
        draw_field_figure(&context.path(&file), &description, &grid, &panels)?;
        figures.push(Figure {
            file,
            title: format!("Fields: {description}"),
            caption: caption(likelihood, &panels, &grid, job_id),
            kind: FigureKind::Fields,
        });
    }
    Ok(figures)
}

/// One figure with the simulated truth of one job per true length scale (`job_ids` from
/// [`truth_job_ids`]), on a shared scale: the coursework's figure of GP prior samples for
/// several length scales.
pub(crate) fn truth_figure(
    context: &Context,
    fields: &Table,
    job_ids: &[String],
) -> Result<Option<Figure>, ReportError> {
    let chosen = one_job_per_truth_length(context, fields, job_ids);
    if chosen.len() < 2 {
        return Ok(None);
    }
    let mut grid = None;
    let mut truths = Vec::new();
    for (length, job_id) in &chosen {
        let rows = fields.rows_of_job(job_id);
        let Some(this_grid) = grid_of(fields, &rows) else {
            return Ok(None);
        };
        if grid
            .as_ref()
            .is_some_and(|g: &Grid| g.size != this_grid.size)
        {
            return Ok(None);
        }
        truths.push((length, column(fields, &rows, TRUTH)));
        grid = Some(this_grid);
    }
    let Some(grid) = grid else { return Ok(None) };
    let scale = Scale::spanning(truths.iter().flat_map(|(_, t)| t), ColourMap::Viridis);
    let panels: Vec<Panel> = truths
        .into_iter()
        .map(|(length, values)| {
            let title = format!(
                "truth u, {}",
                context
                    .shape
                    .naming
                    .label(DATA_LENGTH_SCALE.column(), length)
            );
            Panel::of_cells(&title, values, false, scale, "u")
        })
        .collect();
    let file = "truths.png".to_string();
    let title = "Simulated truths (GP prior draws) by true length scale";
    draw_field_figure(&context.path(&file), title, &grid, &panels)?;
    let ids: Vec<&str> = chosen.iter().map(|(_, id)| id.as_str()).collect();
    Ok(Some(Figure {
        file,
        title: title.into(),
        caption: format!(
            "The field u that generated the data, one draw from the squared-exponential prior \
             per true length scale (jobs {}, first replicate), on one shared colour scale on a \
             {n} × {n} grid. A short length scale gives a rough field that changes from cell to \
             cell; a long one gives smooth, large blobs.",
            ids.join(", "),
            n = grid.size
        ),
        kind: FigureKind::Fields,
    }))
}

/// The jobs whose truths [`truth_figure`] draws: for each true length scale, the first ok job
/// of the lowest replicate. Empty unless the true length scale varies across the study.
pub(crate) fn truth_job_ids(context: &Context) -> Vec<String> {
    let varies = context.shape.levels(DATA_LENGTH_SCALE) >= 2
        || context
            .shape
            .swept
            .iter()
            .any(|s| s.companions.iter().any(|c| c == DATA_LENGTH_SCALE.column()));
    if !varies {
        return Vec::new();
    }
    group_rows(
        context.jobs,
        &context.shape.ok_rows,
        &[DATA_LENGTH_SCALE.column()],
    )
    .into_iter()
    .filter(|(key, _)| key.first().and_then(Cell::as_f64).is_some())
    .filter_map(|(_, rows)| {
        let first = first_replicate(context.jobs, &rows)?;
        context.jobs.str_at(JOB_ID, first).map(str::to_string)
    })
    .collect()
}

/// Of `job_ids` (from [`truth_job_ids`]: one per true length scale, in its order), those with
/// a truth field, each with its true length scale.
fn one_job_per_truth_length(
    context: &Context,
    fields: &Table,
    job_ids: &[String],
) -> Vec<(Cell, String)> {
    job_ids
        .iter()
        .filter(|id| {
            let rows = fields.rows_of_job(id);
            rows.iter().any(|&r| fields.finite(TRUTH, r).is_some())
        })
        .filter_map(|id| {
            let row = context.job_row(id)?;
            Some((Cell::of(context.jobs, DATA_LENGTH_SCALE, row), id.clone()))
        })
        .collect()
}

/// The job's likelihood: from its jobs row, else from the columns its fields table fills.
fn likelihood_of(
    context: &Context,
    fields: &Table,
    rows: &[usize],
    job_id: &str,
) -> LikelihoodKind {
    let from_jobs = context
        .job_row(job_id)
        .and_then(|row| context.jobs.str_at(MODEL_LIKELIHOOD, row))
        .and_then(LikelihoodKind::from_name);
    let has = |column: Col<f64>| rows.iter().any(|&r| fields.finite(column, r).is_some());
    from_jobs.unwrap_or(if has(P_POSITIVE) {
        LikelihoodKind::Probit
    } else if has(EXPECTED_COUNT) {
        LikelihoodKind::Poisson
    } else if has(SUCCESS_PROBABILITY) {
        LikelihoodKind::Binomial
    } else {
        LikelihoodKind::Gaussian
    })
}

/// Cell positions from the i, j (or x, y, or cell) columns; `None` when the job has no rows.
pub(super) fn grid_of(fields: &Table, rows: &[usize]) -> Option<Grid> {
    if rows.is_empty() {
        return None;
    }
    let index =
        |column: Col<i64>, row: usize| fields.finite(column, row).map(|v| v.max(0.0) as usize);
    let max_index = rows
        .iter()
        .flat_map(|&r| [index(I, r), index(J, r)])
        .flatten()
        .max();
    let size = match max_index {
        Some(m) => m + 1,
        None => (rows.len() as f64).sqrt().ceil() as usize,
    }
    .max(1);
    let spacing = if size > 1 {
        1.0 / (size - 1) as f64
    } else {
        1.0
    };
    let (mut x, mut y) = (
        Vec::with_capacity(rows.len()),
        Vec::with_capacity(rows.len()),
    );
    for (k, &row) in rows.iter().enumerate() {
        let cell = index(CELL, row).unwrap_or(k);
        let i = index(I, row).unwrap_or(cell % size);
        let j = index(J, row).unwrap_or(cell / size);
        x.push(fields.finite(X, row).unwrap_or(i as f64 * spacing));
        y.push(fields.finite(Y, row).unwrap_or(j as f64 * spacing));
    }
    let outside = rows
        .iter()
        .map(|&r| fields.finite(INSIDE_FRACTION, r) == Some(0.0))
        .collect();
    Some(Grid {
        half_x: half_spacing(&x, spacing / 2.0),
        half_y: half_spacing(&y, spacing / 2.0),
        x,
        y,
        size,
        outside,
        overlays: Overlays::default(),
    })
}

fn column(fields: &Table, rows: &[usize], name: Col<f64>) -> Vec<Option<f64>> {
    rows.iter().map(|&r| fields.finite(name, r)).collect()
}

fn any_value(values: &[Option<f64>]) -> bool {
    values.iter().any(Option::is_some)
}

/// The panels that apply to this job, with shared scales.
fn panels_for(fields: &Table, rows: &[usize], likelihood: LikelihoodKind) -> Vec<Panel> {
    let truth = column(fields, rows, TRUTH);
    let observation = match likelihood {
        // Binomial data are drawn as shares k / n (none where a cell has no trial).
        LikelihoodKind::Binomial => column(fields, rows, OBSERVATION)
            .into_iter()
            .zip(column(fields, rows, TRIALS))
            .map(|(k, n)| Some(k? / n.filter(|n| *n > 0.0)?))
            .collect(),
        _ => column(fields, rows, OBSERVATION),
    };
    let observed: Vec<bool> = rows
        .iter()
        .map(|&r| {
            fields
                .boolean(OBSERVED)
                .and_then(|v| v.get(r).copied().flatten())
                .unwrap_or(false)
        })
        .collect();
    let used: Vec<Option<f64>> = observation
        .iter()
        .zip(&observed)
        .map(|(v, &o)| if o { *v } else { None })
        .collect();
    let held_out: Vec<Option<f64>> = observation
        .iter()
        .zip(&observed)
        .map(|(v, &o)| if o { None } else { *v })
        .collect();
    let mean = column(fields, rows, POST_MEAN);
    let sd = column(fields, rows, POST_SD);
    let exact = column(fields, rows, EXACT_MEAN);
    let probability = column(fields, rows, P_POSITIVE);
    let expected = column(fields, rows, EXPECTED_COUNT);
    let success = column(fields, rows, SUCCESS_PROBABILITY);
    let error: Vec<Option<f64>> = mean
        .iter()
        .zip(&truth)
        .map(|(m, t)| Some((m.as_ref()? - t.as_ref()?).abs()))
        .collect();

    let field_scale =
        Scale::spanning(
            truth.iter().chain(&mean).chain(&exact).chain(
                if likelihood == LikelihoodKind::Gaussian {
                    &used
                } else {
                    &[][..]
                },
            ),
            ColourMap::Viridis,
        );
    let spread_max = sd
        .iter()
        .chain(&error)
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let spread_scale = Scale::fixed(0.0, spread_max, ColourMap::Sequential);
    let largest = |values: &[Option<f64>]| {
        values
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    };
    let count_scale = Scale::fixed(0.0, largest(&observation), ColourMap::Viridis);
    // Expected counts get their own scale: on sparse data (a few thefts in 1024 cells) the
    // expectation is far below the largest count and would be one dark colour on the data's.
    let expected_scale = Scale::fixed(0.0, largest(&expected), ColourMap::Viridis);
    let (data_scale, data_label) = match likelihood {
        LikelihoodKind::Probit => (
            Scale::fixed(-1.0, 1.0, ColourMap::Diverging),
            "label t = sign(v)",
        ),
        LikelihoodKind::Poisson => (count_scale, "count"),
        LikelihoodKind::Binomial => (Scale::fixed(0.0, 1.0, ColourMap::Viridis), "share k / n"),
        LikelihoodKind::Gaussian => (field_scale, "v = u + noise"),
    };

    let mut panels = Vec::new();
    let mut add =
        |title: &str, values: Vec<Option<f64>>, blank: bool, scale: Scale, label: &str| {
            if any_value(&values) {
                panels.push(Panel::of_cells(title, values, blank, scale, label));
            }
        };
    add("truth u", truth, false, field_scale, "u");
    add("data used in fitting", used, true, data_scale, data_label);
    add("held-out data", held_out, true, data_scale, data_label);
    add("posterior mean", mean, false, field_scale, "u");
    add("exact posterior mean", exact, false, field_scale, "u");
    add("posterior sd", sd, false, spread_scale, "sd of u");
    add(
        "|posterior mean − truth|",
        error,
        false,
        spread_scale,
        "absolute error",
    );
    add(
        "P(t = +1 | data)",
        probability,
        false,
        Scale::fixed(0.0, 1.0, ColourMap::Diverging),
        "probability",
    );
    add(
        "expected count E[exp(u + offset)]",
        expected,
        false,
        expected_scale,
        "expected count",
    );
    add(
        "success probability E[logistic(u + offset)]",
        success,
        false,
        Scale::fixed(0.0, 1.0, ColourMap::Viridis),
        "probability",
    );
    let intensity = column(fields, rows, INTENSITY_MEAN);
    let intensity_scale = Scale::fixed(0.0, largest(&intensity), ColourMap::Viridis);
    add(
        "intensity per unit area (posterior mean)",
        intensity,
        false,
        intensity_scale,
        "intensity",
    );
    for name in exceedance_columns(fields) {
        let threshold = &name[EXCEEDANCE_PREFIX.len()..];
        let values = rows
            .iter()
            .map(|&r| fields.finite(name.clone(), r))
            .collect();
        add(
            &format!("P(relative risk > {threshold} | data)"),
            values,
            false,
            Scale::fixed(0.0, 1.0, ColourMap::Sequential),
            "probability",
        );
    }
    panels
}

/// The prefix of the risk maps' columns (`exceedance_<t>`).
const EXCEEDANCE_PREFIX: &str = "exceedance_";

/// The `exceedance_<t>` columns of fields.parquet, in table order.
fn exceedance_columns(fields: &Table) -> Vec<String> {
    fields
        .column_names()
        .iter()
        .filter(|name| name.starts_with(EXCEEDANCE_PREFIX))
        .cloned()
        .collect()
}

/// One PNG of `panels` on `grid`, titled `description`.
pub(super) fn draw_field_figure(
    path: &std::path::Path,
    description: &str,
    grid: &Grid,
    panels: &[Panel],
) -> Result<(), ReportError> {
    let layout = ((PANEL_WIDTH, PANEL_HEIGHT), panels.len(), MAX_COLUMNS);
    let title = (description, TITLE_HEIGHT);
    panel_figure(path, title, (0, &[]), layout, |root, area, k| {
        draw_panel(root, area, grid, &panels[k])
    })
}

fn draw_panel(root: &Area, area: &Area, grid: &Grid, panel: &Panel) -> DrawResult {
    let (hx, hy) = (grid.half_x, grid.half_y);
    let (x_axis, y_axis) = grid.axes();
    let titles = Titles {
        title: &panel.title,
        x: "x",
        y: "y",
    };
    let (mut chart, plot_box) = plot(root, area, (&x_axis, &y_axis), PANEL_FRAME, titles)?;
    let cells = grid
        .x
        .iter()
        .zip(&grid.y)
        .zip(&panel.values)
        .zip(&grid.outside);
    chart.draw_series(cells.map(|(((&x, &y), &value), &outside)| {
        let colour = match value {
            _ if outside => OUTSIDE,
            None if panel.blank_when_missing => BLANK,
            _ => panel.scale.colour(value),
        };
        // Each cell reaches half a cell into its right and upper neighbours, which are drawn
        // after it: rounding to pixels then leaves no blank seam between cells on fine grids.
        let (right, top) = (x + 1.5 * hx, y + 1.5 * hy);
        Rectangle::new([(x - hx, y - hy), (right, top)], colour.filled())
    }))?;
    for &(x, y, value) in &panel.points {
        let centre = chart.backend_coord(&(x, y));
        root.draw(&Circle::new(
            centre,
            POINT_RADIUS,
            panel.scale.colour(value).filled(),
        ))?;
        root.draw(&Circle::new(centre, POINT_RADIUS, BLACK.stroke_width(1)))?;
    }
    grid.overlays.draw(root, &mut chart, &plot_box)?;
    colour_bar(root, &plot_box, 8, &panel.scale, &panel.bar_label)?;
    match panel.mark {
        Some(value) => mark_colour_bar(root, &plot_box, 8, &panel.scale, value),
        None => Ok(()),
    }
}

fn caption(likelihood: LikelihoodKind, panels: &[Panel], grid: &Grid, job_id: &str) -> String {
    let size = grid.size;
    let titles: Vec<&str> = panels.iter().map(|p| p.title.as_str()).collect();
    let mut text = format!(
        "Job {job_id} ({likelihood} likelihood, {size} × {size} grid). Panels: {}. ",
        titles.join("; ")
    );
    text.push_str(
        "Truth, posterior means and (for gaussian data) the observations share one viridis \
         colour scale; posterior sd and absolute error share a light-to-dark red scale starting \
         at 0, so error cells darker than the sd panel flag errors beyond one posterior sd. ",
    );
    match likelihood {
        LikelihoodKind::Probit => text.push_str(
            "Data panels show labels −1 (blue) and +1 (red); the probability panel shows the \
             posterior predictive P(t = +1), white at 0.5 where the model is undecided. ",
        ),
        LikelihoodKind::Poisson => text.push_str(
            "Observed and held-out counts share one count scale; the expected counts have \
             their own scale from 0 to their maximum (read its colour bar), because on sparse \
             data they are far below the largest count. ",
        ),
        LikelihoodKind::Binomial => text.push_str(
            "Data panels show each cell's share of successes k / n (blank where it has no \
             trial), on the same 0-to-1 scale as the posterior mean success probability \
             logistic(u + offset), so the two can be compared cell by cell. ",
        ),
        LikelihoodKind::Gaussian => {}
    }
    if titles.iter().any(|t| t.starts_with("P(relative risk")) {
        text.push_str(
            "Risk maps (`output.exceedance`): the posterior probability that the relative risk \
             exp(f - variance / 2) exceeds the threshold, f = u - mean - X beta the spatial field \
             (the intensity against the rate the mean and the covariates predict; 1 on average \
             a priori), on a scale from 0 to 1; the \
             intensity panel is the posterior mean of exp(u + offset) per unit area of the \
             window. ",
        );
    }
    text.push_str(&grid.overlays.caption());
    text.push_str(
        "Near-white cells in data panels carry no observation; grey marks missing values.",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{self as build, nums, table, text};
    use crate::figures::shape::StudyShape;
    use crate::figures::tables::Values;

    const NULL: f64 = f64::NAN;

    #[test]
    fn panels_follow_the_likelihood_and_split_observed_from_held_out() {
        let fields = table(vec![
            ("i", nums(&[0.0, 1.0, 0.0, 1.0])),
            ("j", nums(&[0.0, 0.0, 1.0, 1.0])),
            ("truth", nums(&[NULL; 4])),
            (
                "observed",
                Values::Bool(vec![Some(true), Some(false), Some(true), Some(false)]),
            ),
            ("observation", nums(&[3.0, 1.0, NULL, NULL])),
            ("post_mean", nums(&[0.1, 0.2, 0.3, 0.4])),
            ("post_sd", nums(&[0.5; 4])),
            ("expected_count", nums(&[1.1, 1.2, 1.3, 9.0])),
        ]);
        let rows = [0, 1, 2, 3];
        let panels = panels_for(&fields, &rows, LikelihoodKind::Poisson);
        let titles: Vec<&str> = panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "data used in fitting",
                "held-out data",
                "posterior mean",
                "posterior sd",
                "expected count E[exp(u + offset)]"
            ]
        );
        assert_eq!(panels[0].values, [Some(3.0), None, None, None]);
        assert_eq!(panels[1].values, [None, Some(1.0), None, None]);
        // Observed and held-out counts share one scale; expected counts have their own.
        assert_eq!(panels[0].scale, panels[1].scale);
        assert_eq!(panels[0].scale.hi, 3.0);
        assert_eq!(panels[4].scale.hi, 9.0);
        let grid = grid_of(&fields, &rows).expect("grid");
        assert_eq!(grid.size, 2);
        assert_eq!((grid.x[3], grid.y[3]), (1.0, 1.0));
    }

    #[test]
    fn cells_wholly_outside_the_region_are_marked() {
        let fields = table(vec![
            ("i", nums(&[0.0, 1.0, 0.0, 1.0])),
            ("j", nums(&[0.0, 0.0, 1.0, 1.0])),
            ("inside_fraction", nums(&[1.0, 0.0, 0.25, 1e-9])),
        ]);
        let grid = grid_of(&fields, &[0, 1, 2, 3]).expect("grid");
        assert_eq!(grid.outside, [false, true, false, false]);
    }

    #[test]
    fn truth_jobs_are_one_first_replicate_per_true_length_scale() {
        let jobs = table(vec![
            ("job_id", text(&["a", "b", "c", "d", "e", "f"])),
            ("status", text(&["ok", "ok", "failed", "ok", "ok", "ok"])),
            ("replicate", nums(&[1.0, 0.0, 0.0, 1.0, 0.0, 0.0])),
            ("model_length_scale", nums(&[0.1, 0.1, 0.1, 0.1, 0.5, 0.5])),
            ("data_length_scale", nums(&[0.1, 0.1, 0.3, 0.3, 0.3, 0.1])),
        ]);
        let shape = StudyShape::of(&jobs, &build::parameter_prefix, build::naming());
        let context = Context {
            jobs: &jobs,
            shape: &shape,
            report_dir: std::path::Path::new("."),
            source: &build::NoTables,
        };
        // True l = 0.1: b (replicate 0, before f); l = 0.3: e (c failed, d is replicate 1).
        assert_eq!(truth_job_ids(&context), ["b", "e"]);

        let constant = table(vec![
            ("job_id", text(&["a", "b"])),
            ("data_length_scale", nums(&[0.3, 0.3])),
            ("model_length_scale", nums(&[0.1, 0.5])),
        ]);
        let shape = StudyShape::of(&constant, &build::parameter_prefix, build::naming());
        let context = Context {
            jobs: &constant,
            shape: &shape,
            report_dir: std::path::Path::new("."),
            source: &build::NoTables,
        };
        assert!(truth_job_ids(&context).is_empty());
    }

    #[test]
    fn error_panel_needs_truth_and_shares_the_sd_scale() {
        let fields = table(vec![
            ("truth", nums(&[1.0, -1.0])),
            ("post_mean", nums(&[0.5, -3.0])),
            ("post_sd", nums(&[0.2, 0.3])),
        ]);
        let panels = panels_for(&fields, &[0, 1], LikelihoodKind::Gaussian);
        let error = panels
            .iter()
            .find(|p| p.title.starts_with('|'))
            .expect("error panel");
        assert_eq!(error.values, [Some(0.5), Some(2.0)]);
        let sd = panels
            .iter()
            .find(|p| p.title == "posterior sd")
            .expect("sd panel");
        assert_eq!(sd.scale, error.scale);
        assert_eq!((sd.scale.lo, sd.scale.hi), (0.0, 2.0));
    }
}
