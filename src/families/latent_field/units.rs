//! The unit trap: on real data every length scale is in the data's own units (the window of the
//! grid CSV's cell centres, or the `model.window` of a point pattern), so a length scale written
//! for the unit square on data in metres, or in kilometres on data in metres, silently gives a
//! prior with no correlation between cells (or a field flat over the window), and held-out
//! predictions fall to the constant rate. This module owns the rule and its sentence; a job
//! carries it among its warnings, and `fieldmc check` and `fieldmc run` print it before running.
//!
//! The rule: a length scale (the kernel's, along x and along y when they differ; where a
//! `model.length_scale*_prior` is given, that prior's median instead) is suspect when it is
//! below half a cell's side (along its axis; for an isotropic kernel, the shorter side) or above
//! ten times the window's longer side. Only real data are judged: a simulated truth is drawn on
//! the model's own grid with a length scale in the same units, so no unit can be mistaken, and
//! a study may sweep the length scale far on either side on purpose.

use crate::model::grid::{Axis, Grid};
use crate::model::hyper::{HyperName, HyperPrior};
use crate::model::{DataSpec, ModelSpec};

/// Below this share of a cell's side, neighbouring cells are nearly independent under the prior
/// (correlation exp(-1/(2 * 0.5^2)) = 0.14 at one cell for the squared-exponential kernel).
pub(crate) const BELOW_CELL_SIDE: f64 = 0.5;
/// Above this many times the window's longer side, the field is nearly constant over the window.
pub(crate) const ABOVE_WINDOW_SIDE: f64 = 10.0;

/// One length scale as the study gives it.
struct Scale<'m> {
    /// Its key: `model.length_scale` or `model.length_scale_y`.
    key: &'static str,
    /// Its prior, when the chains infer it.
    prior: Option<&'m HyperPrior>,
    /// The value judged: the prior's median, else the length scale.
    value: f64,
    /// The cell side it is compared with.
    cell_side: f64,
}

impl Scale<'_> {
    /// How the study gives it: `model.length_scale = 0.1`, or the median of its prior.
    fn given(&self) -> String {
        match self.prior {
            Some(prior) => format!(
                "the median {} of {}_prior = \"{}\"",
                short(self.value),
                self.key,
                prior.canonical()
            ),
            None => format!("{} = {}", self.key, short(self.value)),
        }
    }
}

/// The unit-trap warnings of a job's model and data (none for simulated data).
pub(crate) fn unit_warnings(model: &ModelSpec, data: &DataSpec) -> Vec<String> {
    if !data.is_real() {
        return Vec::new();
    }
    let grid = &model.grid;
    let (dx, dy) = grid.spacing();
    let isotropic = model.kernel.length_scale_y.is_none()
        && model.hyper.prior(HyperName::LengthScaleY).is_none();
    let shorter = if grid.is_line() { dx } else { dx.min(dy) };
    let mut scales = vec![scale(
        model,
        HyperName::LengthScale,
        "model.length_scale",
        model.kernel.length_scale,
        if isotropic { shorter } else { dx },
    )];
    if !isotropic && !grid.is_line() {
        scales.push(scale(
            model,
            HyperName::LengthScaleY,
            "model.length_scale_y",
            model.kernel.along_y().length_scale,
            dy,
        ));
    }
    let (width, height) = (side(grid.x_axis()), side(grid.y_axis()));
    let longer = width.max(height);
    let place = describe_window(grid);
    let mut found = Vec::new();
    for s in scales {
        if s.value < BELOW_CELL_SIDE * s.cell_side {
            found.push(format!(
                "unit trap? {} is below half a cell's side ({}) on the window {place}: \
                 neighbouring cells are almost uncorrelated under the prior, so the field cannot \
                 borrow strength between them; length scales are in the data's units",
                s.given(),
                short(BELOW_CELL_SIDE * s.cell_side)
            ));
        } else if s.value > ABOVE_WINDOW_SIDE * longer {
            found.push(format!(
                "unit trap? {} is above ten times the window's longer side ({}) on the window \
                 {place}: the field is almost constant over the window; length scales are in \
                 the data's units",
                s.given(),
                short(ABOVE_WINDOW_SIDE * longer)
            ));
        }
    }
    found
}

/// The length scale `name` (`key` in a study, `value` when fixed) compared with `cell_side`.
fn scale<'m>(
    model: &'m ModelSpec,
    name: HyperName,
    key: &'static str,
    value: f64,
    cell_side: f64,
) -> Scale<'m> {
    let prior = model.hyper.prior(name);
    Scale {
        key,
        prior,
        value: prior.map_or(value, HyperPrior::median),
        cell_side,
    }
}

/// The length of the window along one axis: its cells' sides end to end.
fn side(axis: Axis) -> f64 {
    axis.spacing() * axis.points() as f64
}

/// "[0, 1000] x [0, 1000] (the data's units; 32 x 32 cells of 31.25 x 31.25)".
fn describe_window(grid: &Grid) -> String {
    let range = |axis: Axis| {
        let h = axis.spacing();
        let start = axis.coordinate(0) - h / 2.0;
        format!("[{}, {}]", short(start), short(start + side(axis)))
    };
    let (x, y) = (grid.x_axis(), grid.y_axis());
    if grid.is_line() {
        return format!(
            "{} (the data's units; {} cells of {})",
            range(x),
            x.points(),
            short(x.spacing())
        );
    }
    format!(
        "{} x {} (the data's units; {} x {} cells of {} x {})",
        range(x),
        range(y),
        x.points(),
        y.points(),
        short(x.spacing()),
        short(y.spacing())
    )
}

/// A number in at most 4 significant digits (ties to even), without trailing zeros: 31.25,
/// 0.07812, 1.000e7.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor();
    if !(-4.0..6.0).contains(&magnitude) {
        return format!("{v:.3e}");
    }
    let decimals = (3.0 - magnitude).max(0.0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers_keep_four_significant_digits() {
        assert_eq!(short(31.25), "31.25");
        assert_eq!(short(15.625), "15.62", "ties to even");
        assert_eq!(short(0.078125), "0.07812");
        assert_eq!(short(1000.0), "1000");
        assert_eq!(short(-5.0), "-5");
        assert_eq!(short(0.1), "0.1");
        assert_eq!(short(1.0e7), "1.000e7");
    }
}
