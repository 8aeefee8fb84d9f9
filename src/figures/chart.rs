//! The chart primitives every figure is drawn with: a figure (a titled PNG, optionally with a
//! legend strip and a grid of panels), a plot (axes with chosen ticks, linear, log10 or
//! categorical, with titles), curves, dashed lines, colour bars and legends.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ReportError;
use super::colour::{Scale, finite_range};
use super::tables::format_number;
use super::text::{Area, DrawResult, INK, Label, register_fonts, tick_style};

/// A chart whose both axes are [`Axis`] coordinates.
pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<AxisCoord, AxisCoord>>;

/// Colour of grid lines.
const GRID_LINE: RGBColor = RGBColor(228, 228, 228);

/// A linear f64 coordinate whose ticks are placed by us (plotters' own float coordinate picks
/// its ticks itself, and its key-point wrapper cannot be given label formatters).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AxisCoord {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for AxisCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span <= 0.0 || !value.is_finite() {
            return (limit.0 + limit.1) / 2;
        }
        let t = (value - self.range.start) / span;
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
        self.range.clone()
    }
}

/// One axis: the plotted range and tick positions in plot space (log10 of the value for a log
/// axis), and how to label a tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) log: bool,
    pub(crate) ticks: Vec<f64>,
    /// Names of the positions 0, 1, ... of a categorical axis (empty for a numeric one).
    categories: Vec<String>,
}

impl Axis {
    /// A linear axis over `[lo, hi]` with ticks exactly at `ticks`.
    pub(crate) fn fixed(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Axis {
            lo,
            hi,
            log: false,
            ticks,
            categories: Vec::new(),
        }
    }

    /// A linear axis over `[lo, hi]` (widened when degenerate) with about six ticks.
    pub(crate) fn linear(lo: f64, hi: f64) -> Self {
        let (lo, hi) = widen(lo, hi);
        Axis::fixed(lo, hi, nice_ticks(lo, hi, 6))
    }

    /// A linear axis over the values padded by 5% of their span on each side.
    pub(crate) fn padded(lo: f64, hi: f64) -> Self {
        let (lo, hi) = widen(lo, hi);
        let pad = 0.05 * (hi - lo);
        Axis::linear(lo - pad, hi + pad)
    }

    /// A log10 axis over positive `[lo, hi]`, padded by a few percent of a decade.
    pub(crate) fn log(lo: f64, hi: f64) -> Self {
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
            log: true,
            ..Axis::fixed(lo, hi, log_ticks(lo, hi))
        }
    }

    /// Log when all values are positive and span more than `ratio`, else padded linear.
    pub(crate) fn auto(values: &[f64], ratio: f64) -> Self {
        match finite_range(values.iter().copied()) {
            None => Axis::linear(0.0, 1.0),
            Some((lo, hi)) if lo > 0.0 && hi / lo > ratio => Axis::log(lo, hi),
            Some((lo, hi)) => Axis::padded(lo, hi),
        }
    }

    /// One position per name, at 0, 1, ..., each labelled with its name.
    pub(crate) fn categories(names: Vec<String>) -> Self {
        let n = names.len();
        Axis {
            categories: names,
            ..Axis::fixed(-0.5, n as f64 - 0.5, (0..n).map(|k| k as f64).collect())
        }
    }

    /// A value in plot space (`None` when it cannot be shown, e.g. non-positive on a log axis).
    pub(crate) fn place(&self, value: f64) -> Option<f64> {
        match (self.log, value.is_finite()) {
            (_, false) => None,
            (true, _) if value <= 0.0 => None,
            (true, _) => Some(value.log10()),
            (false, _) => Some(value),
        }
    }

    /// The tick label of a plot-space position.
    pub(crate) fn label(&self, position: f64) -> String {
        if !self.categories.is_empty() {
            let k = position.round();
            return (k >= 0.0)
                .then(|| self.categories.get(k as usize).cloned())
                .flatten()
                .unwrap_or_default();
        }
        if self.log {
            format_number(10f64.powf(position))
        } else {
            format_number(position)
        }
    }

    /// A title marked "(log scale)" when the axis is logarithmic.
    pub(crate) fn title(&self, title: &str) -> String {
        if self.log {
            format!("{title} (log scale)")
        } else {
            title.to_string()
        }
    }

    fn coord(&self) -> AxisCoord {
        AxisCoord {
            range: self.lo..self.hi,
            ticks: self.ticks.clone(),
        }
    }
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
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
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
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
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

/// A figure: a PNG of `size` pixels, white, with `title` centred in a band of `title_height`
/// pixels at the top; `draw` gets the whole image (for pixel-placed labels) and the area below
/// the title. Drawing errors become [`ReportError::Draw`] naming the file.
pub(crate) fn figure(
    path: &Path,
    size: (u32, u32),
    (title, title_height): (&str, u32),
    draw: impl FnOnce(&Area, &Area) -> DrawResult,
) -> Result<(), ReportError> {
    register_fonts()?;
    let outcome = (|| -> DrawResult {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        root.fill(&WHITE)?;
        let centre = (size.0 as i32 / 2, title_height as i32 / 2);
        Label::new(22.0).bold().draw(&root, title, centre)?;
        let (_, body) = root.split_vertically(title_height);
        draw(&root, &body)?;
        root.present()?;
        Ok(())
    })();
    outcome.map_err(|e| ReportError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// `area` split into a grid of `count` panels, at most `columns` per row, in reading order.
pub(crate) fn panels<'a>(area: &Area<'a>, count: usize, columns: usize) -> Vec<Area<'a>> {
    let columns = count.clamp(1, columns.max(1));
    area.split_evenly((count.div_ceil(columns).max(1), columns))
}

/// A figure of `count` panels of `panel` pixels each, at most `columns` a row, below its title
/// and, when `legend` has entries, a legend strip of `legend_height` pixels; `draw` gets the
/// whole image, a panel's area and the panel's index.
pub(crate) fn panel_figure(
    path: &Path,
    (title, title_height): (&str, u32),
    (legend_height, entries): (u32, &[(String, RGBColor)]),
    ((width, height), count, columns): ((u32, u32), usize, usize),
    mut draw: impl FnMut(&Area, &Area, usize) -> DrawResult,
) -> Result<(), ReportError> {
    let columns = count.clamp(1, columns.max(1));
    let legend_height = if entries.is_empty() { 0 } else { legend_height };
    let size = (
        columns as u32 * width,
        title_height + legend_height + count.div_ceil(columns) as u32 * height,
    );
    figure(path, size, (title, title_height), |root, body| {
        let (strip, grid) = body.split_vertically(legend_height);
        if !entries.is_empty() {
            legend(&strip, entries)?;
        }
        for (k, area) in panels(&grid, count, columns).iter().enumerate().take(count) {
            draw(root, area, k)?;
        }
        Ok(())
    })
}

/// How a plot sits in its area: margins and label areas in pixels, tick and title sizes,
/// whether grid lines are drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    pub(crate) margin: u32,
    pub(crate) top: u32,
    pub(crate) right: u32,
    pub(crate) x_labels: u32,
    pub(crate) y_labels: u32,
    pub(crate) tick_size: f64,
    pub(crate) title_size: f32,
    pub(crate) grid: bool,
}

impl Frame {
    /// Curves against numbers: grid lines on.
    pub(crate) const LINES: Frame = Frame {
        margin: 12,
        top: 40,
        right: 12,
        x_labels: 50,
        y_labels: 76,
        tick_size: 13.0,
        title_size: 14.0,
        grid: true,
    };
    /// Heat maps: no grid lines.
    pub(crate) const HEAT: Frame = Frame {
        grid: false,
        ..Frame::LINES
    };

    /// With margins of `margin` pixels, `top` above the plot and `right` right of it.
    pub(crate) const fn margins(self, margin: u32, top: u32, right: u32) -> Frame {
        Frame {
            margin,
            top,
            right,
            ..self
        }
    }

    /// With label areas of `x` pixels below the plot and `y` pixels left of it.
    pub(crate) const fn labels(self, x_labels: u32, y_labels: u32) -> Frame {
        Frame {
            x_labels,
            y_labels,
            ..self
        }
    }

    /// With tick labels of `tick_size` pixels and titles of `title_size`.
    pub(crate) const fn text(self, tick_size: f64, title_size: f32) -> Frame {
        Frame {
            tick_size,
            title_size,
            ..self
        }
    }
}

/// The plotting rectangle of a chart in absolute pixels.
#[derive(Debug, Clone)]
pub(crate) struct PlotBox {
    pub(crate) x: Range<i32>,
    pub(crate) y: Range<i32>,
}

impl PlotBox {
    pub(crate) fn centre_x(&self) -> i32 {
        (self.x.start + self.x.end) / 2
    }
}

/// Titles of a plot: above it, under the x axis, left of the y axis (empty: none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Titles<'t> {
    pub(crate) title: &'t str,
    pub(crate) x: &'t str,
    pub(crate) y: &'t str,
}

/// A plot in `area` over the two axes, with ticks, tick labels and titles drawn; returns the
/// chart to draw series on and its plotting rectangle.
pub(crate) fn plot<'a, 'b>(
    root: &Area,
    area: &'a Area<'b>,
    (x, y): (&Axis, &Axis),
    frame: Frame,
    titles: Titles,
) -> DrawResult<(Chart<'a, 'b>, PlotBox)> {
    let mut chart = ChartBuilder::on(area)
        .margin(frame.margin)
        .margin_top(frame.top)
        .margin_right(frame.right)
        .x_label_area_size(frame.x_labels)
        .y_label_area_size(frame.y_labels)
        .build_cartesian_2d(x.coord(), y.coord())?;
    let mut mesh = chart.configure_mesh();
    if frame.grid {
        mesh.light_line_style(WHITE).bold_line_style(GRID_LINE);
    } else {
        mesh.disable_mesh();
    }
    mesh.label_style(tick_style(frame.tick_size))
        .x_label_formatter(&|v| x.label(*v))
        .y_label_formatter(&|v| y.label(*v))
        .draw()?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let plot = PlotBox { x: px, y: py };
    draw_titles(root, &plot, frame, titles)?;
    Ok((chart, plot))
}

fn draw_titles(root: &Area, plot: &PlotBox, frame: Frame, titles: Titles) -> DrawResult {
    let size = frame.title_size;
    let centre_y = (plot.y.start + plot.y.end) / 2;
    if !titles.title.is_empty() {
        let label = Label::new(size + 2.0).anchor(HPos::Center, VPos::Bottom);
        label.draw(root, titles.title, (plot.centre_x(), plot.y.start - 8))?;
    }
    if !titles.x.is_empty() {
        let label = Label::new(size).anchor(HPos::Center, VPos::Bottom);
        let below = plot.y.end + frame.x_labels as i32 - 2;
        label.draw(root, titles.x, (plot.centre_x(), below))?;
    }
    if !titles.y.is_empty() {
        let label = Label::new(size).vertical().anchor(HPos::Center, VPos::Top);
        let left = plot.x.start - frame.y_labels as i32 + 2;
        label.draw(root, titles.y, (left, centre_y))?;
    }
    Ok(())
}

/// A polyline of `width` pixels, with dots of `dot` pixels' radius at its points (0: none).
pub(crate) fn curve(
    chart: &mut Chart,
    points: &[(f64, f64)],
    colour: impl Color,
    (width, dot): (u32, u32),
) -> DrawResult {
    let line = PathElement::new(points.to_vec(), colour.stroke_width(width));
    chart.draw_series(std::iter::once(line))?;
    if dot > 0 {
        chart.draw_series(points.iter().map(|&p| Circle::new(p, dot, colour.filled())))?;
    }
    Ok(())
}

/// A dashed polyline: each step between two points becomes `pieces` pieces, every other one
/// drawn.
pub(crate) fn dashed(
    chart: &mut Chart,
    points: &[(f64, f64)],
    colour: RGBColor,
    (width, pieces): (u32, usize),
) -> DrawResult {
    let dashes = dashes(points, pieces);
    chart.draw_series(
        dashes
            .into_iter()
            .map(|dash| PathElement::new(dash, colour.stroke_width(width))),
    )?;
    Ok(())
}

fn dashes(points: &[(f64, f64)], pieces: usize) -> Vec<Vec<(f64, f64)>> {
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

/// The width of a colour bar, in pixels.
const BAR_WIDTH: i32 = 14;

/// A vertical colour bar right of `plot` (`gap` pixels away) with ticks on its right and a
/// rotated label further right.
pub(crate) fn colour_bar(
    root: &Area,
    plot: &PlotBox,
    gap: i32,
    scale: &Scale,
    label: &str,
) -> DrawResult {
    let (x, top, bottom) = (plot.x.end + gap, plot.y.start, plot.y.end);
    let height = (bottom - top).max(1);
    for step in 0..height {
        let t = 1.0 - (step as f64 + 0.5) / height as f64;
        let colour = scale.map.at(t);
        root.draw(&Rectangle::new(
            [(x, top + step), (x + BAR_WIDTH, top + step + 1)],
            colour.filled(),
        ))?;
    }
    root.draw(&Rectangle::new(
        [(x, top), (x + BAR_WIDTH, bottom)],
        INK.stroke_width(1),
    ))?;
    let tick = Label::new(13.0).anchor(HPos::Left, VPos::Center);
    let mut widest = 0.0f32;
    for value in nice_ticks(scale.lo, scale.hi, 5) {
        let y =
            bottom - ((value - scale.lo) / (scale.hi - scale.lo) * height as f64).round() as i32;
        root.draw(&PathElement::new(
            vec![(x + BAR_WIDTH, y), (x + BAR_WIDTH + 4, y)],
            INK,
        ))?;
        let label = format_number(value);
        widest = widest.max(tick.width(&label));
        tick.draw(root, &label, (x + BAR_WIDTH + 6, y))?;
    }
    if !label.is_empty() {
        let rotated = Label::new(13.0).vertical().anchor(HPos::Center, VPos::Top);
        let label_x = x + BAR_WIDTH + 12 + widest.max(16.0).ceil() as i32;
        rotated.draw(root, label, (label_x, (top + bottom) / 2))?;
    }
    Ok(())
}

/// A black line across the colour bar of [`colour_bar`] (same `plot`, `gap` and `scale`) at
/// `value`, reaching a little past both sides: a threshold on the scale.
pub(crate) fn mark_colour_bar(
    root: &Area,
    plot: &PlotBox,
    gap: i32,
    scale: &Scale,
    value: f64,
) -> DrawResult {
    let (x, top, bottom) = (plot.x.end + gap, plot.y.start, plot.y.end);
    let height = (bottom - top).max(1);
    let t = (value - scale.lo) / (scale.hi - scale.lo);
    if !(0.0..=1.0).contains(&t) {
        return Ok(());
    }
    let y = bottom - (t * height as f64).round() as i32;
    root.draw(&Rectangle::new(
        [(x - 3, y - 1), (x + BAR_WIDTH + 3, y + 1)],
        INK.filled(),
    ))?;
    Ok(())
}

/// A horizontal legend: a short coloured line and a label per entry, centred in `area`,
/// wrapping onto further rows when needed.
pub(crate) fn legend(area: &Area, entries: &[(String, RGBColor)]) -> DrawResult {
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
        let dashes = dashes(&[(0.0, 0.0), (1.0, 0.0), (1.0, 2.0)], 4);
        assert_eq!(dashes.len(), 4);
        assert_eq!(dashes[0], vec![(0.0, 0.0), (0.25, 0.0)]);
        assert_eq!(dashes[1], vec![(0.5, 0.0), (0.75, 0.0)]);
        assert_eq!(dashes[3], vec![(1.0, 1.0), (1.0, 1.5)]);
        assert!(super::dashes(&[(0.0, 0.0)], 4).is_empty());
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
        assert_eq!(log.title("x"), "x (log scale)");
    }

    #[test]
    fn categorical_axes_name_their_positions() {
        let axis = Axis::categories(vec!["4".into(), "16".into()]);
        assert_eq!((axis.lo, axis.hi), (-0.5, 1.5));
        assert_eq!(
            (axis.label(0.0), axis.label(1.0)),
            ("4".into(), "16".into())
        );
        assert_eq!(axis.label(-1.0), "");
        assert_eq!(axis.label(2.0), "");
    }
}
