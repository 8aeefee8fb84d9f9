//! Figure shapes the families share, drawn with the report's chart primitives
//! ([`crate::report::chart`]): curves on linear or log axes with dashed references, grids of
//! small heat maps, lists of words side by side, and a street map with weighted nodes. Each family decides what to plot;
//! this module only draws.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ReportError;
use super::chart::{Axis, Frame, Titles, curve, dashed, figure, legend, panels, plot};
use super::colour::{ColourMap, INK_GREY, Scale, series_colour};
use super::text::Label;

/// Curves against a common x axis.
pub(crate) struct Curves {
    pub(crate) title: String,
    pub(crate) x_title: String,
    pub(crate) y_title: String,
    pub(crate) log_x: bool,
    pub(crate) log_y: bool,
    /// Solid curves, each with its legend label.
    pub(crate) curves: Vec<(String, Vec<(f64, f64)>)>,
    /// Dashed reference curves (drawn in grey), each with its legend label.
    pub(crate) references: Vec<(String, Vec<(f64, f64)>)>,
}

const FRAME: Frame = Frame::LINES.labels(56, 86);

fn axis(values: impl Iterator<Item = f64>, log: bool) -> Option<Axis> {
    let values: Vec<f64> = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return None;
    }
    let hi = if hi > lo { hi } else { lo + lo.abs().max(1.0) };
    Some(if log {
        Axis::log(lo, hi)
    } else {
        Axis::padded(lo, hi)
    })
}

fn placed(points: &[(f64, f64)], x: &Axis, y: &Axis) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter_map(|&(a, b)| Some((x.place(a)?, y.place(b)?)))
        .collect()
}

impl Curves {
    /// Draws the curves into `path` (nothing to draw: no file, `Ok(false)`).
    pub(crate) fn draw(&self, path: &Path) -> Result<bool, ReportError> {
        let all = || {
            self.curves
                .iter()
                .chain(&self.references)
                .flat_map(|(_, p)| p.iter().copied())
        };
        let (Some(x), Some(y)) = (
            axis(all().map(|p| p.0), self.log_x),
            axis(all().map(|p| p.1), self.log_y),
        ) else {
            return Ok(false);
        };
        figure(path, (1000, 640), (&self.title, 50), |root, body| {
            let (legend_area, plot_area) = body.split_vertically(60);
            let mut entries: Vec<(String, RGBColor)> = self
                .curves
                .iter()
                .enumerate()
                .filter(|(_, (label, _))| !label.is_empty())
                .map(|(k, (label, _))| (label.clone(), series_colour(k)))
                .collect();
            entries.extend(
                self.references
                    .iter()
                    .filter(|(l, _)| !l.is_empty())
                    .map(|(l, _)| (l.clone(), INK_GREY)),
            );
            legend(&legend_area, &entries)?;
            let titles = Titles {
                title: "",
                x: &x.title(&self.x_title),
                y: &y.title(&self.y_title),
            };
            let (mut chart, _) = plot(root, &plot_area, (&x, &y), FRAME, titles)?;
            for (_, points) in &self.references {
                dashed(&mut chart, &placed(points, &x, &y), INK_GREY, (2, 4))?;
            }
            for (k, (_, points)) in self.curves.iter().enumerate() {
                let dot = if points.len() <= 60 { 3 } else { 0 };
                curve(
                    &mut chart,
                    &placed(points, &x, &y),
                    series_colour(k),
                    (2, dot),
                )?;
            }
            Ok(())
        })?;
        Ok(true)
    }
}

/// One small heat map: a title and `rows` x `cols` values, row-major, row 0 at the top.
pub(crate) struct Heat {
    pub(crate) title: String,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) values: Vec<f64>,
}

/// Heat maps side by side on one colour scale from 0 to the largest value.
pub(crate) fn heat_panels(
    path: &Path,
    title: &str,
    heats: &[Heat],
    columns: usize,
) -> Result<(), ReportError> {
    let hi = heats
        .iter()
        .flat_map(|h| h.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        .max(1e-12);
    let scale = Scale::fixed(0.0, hi, ColourMap::Viridis);
    let columns = heats.len().clamp(1, columns.max(1));
    let size = (
        columns as u32 * 180,
        60 + heats.len().div_ceil(columns) as u32 * 200,
    );
    figure(path, size, (title, 50), |root, body| {
        for (heat, area) in heats.iter().zip(panels(body, heats.len(), columns)) {
            let x = Axis::linear(0.0, heat.cols as f64);
            let y = Axis::linear(0.0, heat.rows as f64);
            let frame = Frame::HEAT.margins(8, 30, 8).labels(4, 4).text(1.0, 13.0);
            let titles = Titles {
                title: &heat.title,
                x: "",
                y: "",
            };
            let (mut chart, _) = plot(root, &area, (&x, &y), frame, titles)?;
            let cells = (0..heat.rows).flat_map(|r| (0..heat.cols).map(move |c| (r, c)));
            chart.draw_series(cells.map(|(r, c)| {
                let value = heat.values[r * heat.cols + c];
                let top = (heat.rows - r) as f64;
                Rectangle::new(
                    [(c as f64, top - 1.0), (c as f64 + 1.0, top)],
                    scale.colour(Some(value)).filled(),
                )
            }))?;
        }
        Ok(())
    })
}

/// Lists of words side by side, at most `columns` a row: each a bold heading over its words,
/// one a line (e.g. a topic's most probable words).
pub(crate) fn word_lists(
    path: &Path,
    title: &str,
    lists: &[(String, Vec<String>)],
    columns: usize,
) -> Result<(), ReportError> {
    const LINE: i32 = 22;
    let columns = lists.len().clamp(1, columns.max(1));
    let longest = lists.iter().map(|l| l.1.len()).max().unwrap_or(0) as u32;
    let size = (
        columns as u32 * 220,
        60 + lists.len().div_ceil(columns) as u32 * (50 + LINE as u32 * longest),
    );
    let (heading, word) = (
        Label::new(15.0).bold().anchor(HPos::Left, VPos::Top),
        Label::new(14.0).anchor(HPos::Left, VPos::Top),
    );
    figure(path, size, (title, 50), |_, body| {
        for ((name, words), area) in lists.iter().zip(panels(body, lists.len(), columns)) {
            heading.draw(&area, name, (14, 8))?;
            for (line, text) in (0..).zip(words) {
                word.draw(&area, text, (14, 36 + LINE * line))?;
            }
        }
        Ok(())
    })
}

/// A map: grey line segments and labelled points coloured by weight (largest darkest).
pub(crate) struct Map {
    pub(crate) title: String,
    pub(crate) segments: Vec<((f64, f64), (f64, f64))>,
    /// (x, y, weight, label); the label is drawn when not empty.
    pub(crate) points: Vec<(f64, f64, f64, String)>,
}

impl Map {
    pub(crate) fn draw(&self, path: &Path) -> Result<(), ReportError> {
        let xs = self
            .segments
            .iter()
            .flat_map(|(a, b)| [a.0, b.0])
            .chain(self.points.iter().map(|p| p.0));
        let ys = self
            .segments
            .iter()
            .flat_map(|(a, b)| [a.1, b.1])
            .chain(self.points.iter().map(|p| p.1));
        let x = axis(xs, false).unwrap_or(Axis::linear(0.0, 1.0));
        let y = axis(ys, false).unwrap_or(Axis::linear(0.0, 1.0));
        let hi = self.points.iter().map(|p| p.2).fold(0.0, f64::max);
        let scale = Scale::fixed(0.0, hi.max(1e-12), ColourMap::Sequential);
        figure(path, (1000, 1000), (&self.title, 50), |root, body| {
            let titles = Titles {
                title: "",
                x: "x",
                y: "y",
            };
            let (mut chart, _) = plot(root, body, (&x, &y), FRAME, titles)?;
            chart.draw_series(self.segments.iter().map(|&(a, b)| {
                PathElement::new(vec![a, b], RGBColor(190, 190, 190).stroke_width(2))
            }))?;
            chart.draw_series(self.points.iter().map(|(px, py, weight, _)| {
                Circle::new((*px, *py), 6, scale.colour(Some(*weight)).filled())
            }))?;
            for (px, py, _, label) in self.points.iter().filter(|p| !p.3.is_empty()) {
                chart.draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*px, *py),
                    ("sans-serif", 16).into_font().color(&BLACK),
                )))?;
            }
            Ok(())
        })
    }
}
