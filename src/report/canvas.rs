//! Drawing plumbing shared by the figures: the embedded font, text styles, axes with chosen
//! tick positions (linear or log10), colour bars, legend strips and the PNG writer.
//!
//! Text never touches system fonts: DejaVu Sans is compiled into the binary and registered
//! with plotters' ab_glyph renderer under the family name `sans-serif`.

use std::error::Error;
use std::path::Path;
use std::sync::OnceLock;

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ReportError;
use super::colour::Scale;
use super::tables::format_number;
use super::text::Label;

pub(crate) const REGULAR: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
pub(crate) const BOLD: &[u8] = include_bytes!("../../assets/DejaVuSans-Bold.ttf");
/// The family name the embedded font is registered under.
pub const FONT: &str = "sans-serif";
/// Colour of all text and axes.
pub const INK: RGBColor = RGBColor(34, 34, 34);

pub type DrawResult<T = ()> = Result<T, Box<dyn Error>>;
pub type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
/// A linear f64 coordinate whose ticks are placed by us (plotters' own float coordinate picks
/// its ticks itself, and its key-point wrapper cannot be given label formatters).
#[derive(Debug, Clone, PartialEq)]
pub struct AxisCoord {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl AxisCoord {
    pub fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
        AxisCoord {
            lo: range.start,
            hi: range.end,
            ticks,
        }
    }
}

impl Ranged for AxisCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        if span <= 0.0 || !value.is_finite() {
            return (limit.0 + limit.1) / 2;
        }
        let t = (value - self.lo) / span;
        limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light (minor) grid lines are not drawn; bold points are the ticks.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Registers the embedded font once per process.
pub fn register_fonts() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, REGULAR).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, BOLD).is_ok()
    });
    if ok { Ok(()) } else { Err(ReportError::Font) }
}

/// plotters' text style for tick labels (numbers), `size` pixels.
pub fn text(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

/// Renders a PNG of `size` pixels on a white background with `draw`, mapping every drawing
/// error to [`ReportError::Draw`] naming the file.
pub fn render_png(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<(), ReportError> {
    register_fonts()?;
    let outcome = (|| -> DrawResult {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    })();
    outcome.map_err(|e| ReportError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Draws a figure title centred at the top of `area` and returns the area below it.
pub fn titled<'a>(area: &Area<'a>, title: &str, height: u32) -> DrawResult<Area<'a>> {
    let (width, _) = area.dim_in_pixel();
    let centre = (width as i32 / 2, height as i32 / 2);
    Label::new(22.0).bold().draw(area, title, centre)?;
    let (_, below) = area.split_vertically(height);
    Ok(below)
}

/// The plotting rectangle of a chart in absolute pixels and the label-area sizes around it.
pub struct PlotBox {
    pub x: Range<i32>,
    pub y: Range<i32>,
    pub x_label_area: i32,
    pub y_label_area: i32,
}

/// The plotting rectangle of a chart, for [`decorate`].
pub fn plot_box<X: Ranged, Y: Ranged>(
    chart: &ChartContext<'_, BitMapBackend<'_>, Cartesian2d<X, Y>>,
    x_label_area: u32,
    y_label_area: u32,
) -> PlotBox {
    let (x, y) = chart.plotting_area().get_pixel_range();
    PlotBox {
        x,
        y,
        x_label_area: x_label_area as i32,
        y_label_area: y_label_area as i32,
    }
}

/// Draws a chart's title above its plotting rectangle and its axis titles in the label areas
/// (the chart must leave about 30 pixels of top margin for the title).
pub fn decorate(
    root: &Area,
    plot: &PlotBox,
    title: &str,
    x_title: &str,
    y_title: &str,
    size: f32,
) -> DrawResult {
    let centre_x = (plot.x.start + plot.x.end) / 2;
    let centre_y = (plot.y.start + plot.y.end) / 2;
    if !title.is_empty() {
        let label = Label::new(size + 2.0).anchor(HPos::Center, VPos::Bottom);
        label.draw(root, title, (centre_x, plot.y.start - 8))?;
    }
    if !x_title.is_empty() {
        let label = Label::new(size).anchor(HPos::Center, VPos::Bottom);
        label.draw(
            root,
            x_title,
            (centre_x, plot.y.end + plot.x_label_area - 2),
        )?;
    }
    if !y_title.is_empty() {
        let label = Label::new(size).vertical().anchor(HPos::Center, VPos::Top);
        label.draw(
            root,
            y_title,
            (plot.x.start - plot.y_label_area + 2, centre_y),
        )?;
    }
    Ok(())
}

/// One axis: the plotted range and tick positions in plot space (log10 of the value for a log
/// axis), and how to label a tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub ticks: Vec<f64>,
}

impl Axis {
    /// A linear axis over `[lo, hi]` (widened when degenerate) with about six ticks.
    pub fn linear(lo: f64, hi: f64) -> Self {
        let (lo, hi) = widen(lo, hi);
        Axis {
            lo,
            hi,
            log: false,
            ticks: nice_ticks(lo, hi, 6),
        }
    }

    /// A linear axis over the values padded by 5% of their span on each side.
    pub fn padded(lo: f64, hi: f64) -> Self {
        let (lo, hi) = widen(lo, hi);
        let pad = 0.05 * (hi - lo);
        Axis::linear(lo - pad, hi + pad)
    }

    /// A log10 axis over positive `[lo, hi]`, padded by a few percent of a decade.
    pub fn log(lo: f64, hi: f64) -> Self {
        let (lo, hi) = (
            lo.max(f64::MIN_POSITIVE).log10(),
            hi.max(f64::MIN_POSITIVE).log10(),
        );
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo - 0.5, hi + 0.5)
        };
        let pad = 0.04 * (hi - lo).max(0.5);
        let (lo, hi) = (lo - pad, hi + pad);
        Axis {
            lo,
            hi,
            log: true,
            ticks: log_ticks(lo, hi),
        }
    }

    /// Log when all values are positive and span more than `ratio`, else padded linear.
    pub fn auto(values: &[f64], ratio: f64) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if finite.is_empty() {
            Axis::linear(0.0, 1.0)
        } else if lo > 0.0 && hi / lo > ratio {
            Axis::log(lo, hi)
        } else {
            Axis::padded(lo, hi)
        }
    }

    /// A value in plot space (`None` when it cannot be shown, e.g. non-positive on a log axis).
    pub fn place(&self, value: f64) -> Option<f64> {
        match (self.log, value.is_finite()) {
            (_, false) => None,
            (true, _) if value <= 0.0 => None,
            (true, _) => Some(value.log10()),
            (false, _) => Some(value),
        }
    }

    /// The tick label of a plot-space position.
    pub fn label(&self, position: f64) -> String {
        if self.log {
            format_number(10f64.powf(position))
        } else {
            format_number(position)
        }
    }

    pub fn coord(&self) -> AxisCoord {
        AxisCoord::new(self.lo..self.hi, self.ticks.clone())
    }
}

/// Splits a polyline into dashes: each step between two points becomes `pieces` pieces, every
/// other one drawn.
pub fn dashed(points: &[(f64, f64)], pieces: usize) -> Vec<Vec<(f64, f64)>> {
    let pieces = pieces.max(1);
    let mut dashes = Vec::new();
    for step in points.windows(2) {
        let (a, b) = (step[0], step[1]);
        let at = |k: usize| {
            let s = k as f64 / pieces as f64;
            (a.0 + (b.0 - a.0) * s, a.1 + (b.1 - a.1) * s)
        };
        dashes.extend((0..pieces).step_by(2).map(|k| vec![at(k), at(k + 1)]));
    }
    dashes
}

fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (-0.5, 0.5)
    } else {
        (lo - 0.1 * lo.abs(), hi + 0.1 * hi.abs())
    }
}

/// Ticks at multiples of 1, 2 or 5 times a power of ten, about `target` of them.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return Vec::new();
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|k| {
            let tick = k as f64 * step;
            // Remove float noise such as 0.30000000000000004.
            let digits = (-step.log10().floor() + 2.0).clamp(0.0, 15.0) as i32;
            let scale = 10f64.powi(digits);
            (tick * scale).round() / scale
        })
        .collect()
}

/// Ticks for a log10 axis over plot-space `[lo, hi]`: decades, then 1-2-5, then 1..9 when the
/// range is too short to show at least three ticks.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mantissa_sets: [&[f64]; 3] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    let mut best = Vec::new();
    for mantissas in mantissa_sets {
        best = (lo.floor() as i64..=hi.ceil() as i64)
            .flat_map(|decade| {
                mantissas
                    .iter()
                    .map(move |m| (m * 10f64.powi(decade as i32)).log10())
            })
            .filter(|p| *p >= lo - 1e-9 && *p <= hi + 1e-9)
            .collect();
        if best.len() >= 3 {
            break;
        }
    }
    best
}

/// A vertical colour bar in absolute pixels (x, top..bottom) with ticks on its right and a
/// rotated label further right.
pub fn draw_colour_bar(
    root: &Area,
    x: i32,
    (top, bottom): (i32, i32),
    scale: &Scale,
    label: &str,
) -> DrawResult {
    const WIDTH: i32 = 14;
    let height = (bottom - top).max(1);
    for step in 0..height {
        let t = 1.0 - (step as f64 + 0.5) / height as f64;
        let colour = scale.map.at(t);
        root.draw(&Rectangle::new(
            [(x, top + step), (x + WIDTH, top + step + 1)],
            colour.filled(),
        ))?;
    }
    root.draw(&Rectangle::new(
        [(x, top), (x + WIDTH, bottom)],
        INK.stroke_width(1),
    ))?;
    let tick = Label::new(13.0).anchor(HPos::Left, VPos::Center);
    let mut widest = 0.0f32;
    for value in nice_ticks(scale.lo, scale.hi, 5) {
        let y =
            bottom - ((value - scale.lo) / (scale.hi - scale.lo) * height as f64).round() as i32;
        root.draw(&PathElement::new(
            vec![(x + WIDTH, y), (x + WIDTH + 4, y)],
            INK,
        ))?;
        let label = format_number(value);
        widest = widest.max(tick.width(&label));
        tick.draw(root, &label, (x + WIDTH + 6, y))?;
    }
    if !label.is_empty() {
        let rotated = Label::new(13.0).vertical().anchor(HPos::Center, VPos::Top);
        let label_x = x + WIDTH + 12 + widest.max(16.0).ceil() as i32;
        rotated.draw(root, label, (label_x, (top + bottom) / 2))?;
    }
    Ok(())
}

/// A horizontal legend: a short coloured line and a label per entry, centred in `area`,
/// wrapping onto further rows when needed.
pub fn draw_legend(area: &Area, entries: &[(String, RGBColor)]) -> DrawResult {
    let (width, height) = area.dim_in_pixel();
    let (width, height) = (width as i32, height as i32);
    let label = Label::new(15.0).anchor(HPos::Left, VPos::Center);
    let entry_width = |text: &str| 58 + label.width(text).ceil() as i32;
    let mut rows: Vec<Vec<&(String, RGBColor)>> = vec![Vec::new()];
    let mut used = 0;
    for entry in entries {
        let w = entry_width(&entry.0);
        if used + w > width - 20 && !rows.last().is_some_and(Vec::is_empty) {
            rows.push(Vec::new());
            used = 0;
        }
        used += w;
        if let Some(row) = rows.last_mut() {
            row.push(entry);
        }
    }
    let row_height = 22;
    let first_y = (height - row_height * (rows.len() as i32 - 1)) / 2;
    for (r, row) in rows.iter().enumerate() {
        let total: i32 = row.iter().map(|e| entry_width(&e.0)).sum::<i32>() - 20;
        let mut x = (width - total) / 2;
        let y = first_y + r as i32 * row_height;
        for (text, colour) in row {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 28, y)],
                colour.stroke_width(3),
            ))?;
            area.draw(&Circle::new((x + 14, y), 4, colour.filled()))?;
            label.draw(area, text, (x + 36, y))?;
            x += entry_width(text);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_cover_every_step_and_leave_gaps() {
        let dashes = dashed(&[(0.0, 0.0), (1.0, 0.0), (1.0, 2.0)], 4);
        assert_eq!(dashes.len(), 4);
        assert_eq!(dashes[0], vec![(0.0, 0.0), (0.25, 0.0)]);
        assert_eq!(dashes[1], vec![(0.5, 0.0), (0.75, 0.0)]);
        assert_eq!(dashes[3], vec![(1.0, 1.0), (1.0, 1.5)]);
        assert!(dashed(&[(0.0, 0.0)], 4).is_empty());
    }

    #[test]
    fn nice_ticks_are_round_and_inside_the_range() {
        let ticks = nice_ticks(0.013, 0.97, 6);
        assert!(ticks.len() >= 4 && ticks.len() <= 11, "{ticks:?}");
        assert!(ticks.iter().all(|t| (0.013..=0.97).contains(t)));
        assert!(ticks.contains(&0.2) && ticks.contains(&0.4), "{ticks:?}");
        assert!(nice_ticks(1.0, 1.0, 5).is_empty());
    }

    #[test]
    fn log_ticks_use_decades_when_the_range_is_wide() {
        let ticks = log_ticks(-2.0, 1.0);
        let values: Vec<f64> = ticks.iter().map(|p| 10f64.powf(*p)).collect();
        assert_eq!(values.len(), 4);
        assert!((values[0] - 0.01).abs() < 1e-12 && (values[3] - 10.0).abs() < 1e-9);
        // A short range falls back to 1-2-5 or denser mantissas but still gives >= 3 ticks.
        assert!(log_ticks(0.1, 0.9).len() >= 3);
    }

    #[test]
    fn auto_axis_goes_log_only_for_positive_wide_ranges() {
        assert!(Axis::auto(&[0.01, 0.1, 10.0], 20.0).log);
        assert!(!Axis::auto(&[0.04, 0.2, 0.5], 20.0).log);
        assert!(!Axis::auto(&[-1.0, 100.0], 20.0).log);
        let log = Axis::log(0.01, 10.0);
        assert_eq!(log.place(-1.0), None);
        assert_eq!(log.label(log.place(0.01).unwrap_or(f64::NAN)), "0.01");
    }
}
