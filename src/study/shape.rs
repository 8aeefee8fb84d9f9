//! The array-valued keys: `model.grid` as a number or an array, and `model.window`. Each has
//! one canonical text (what canonical keys, job tables and `fieldmc plan` show), written here
//! and read back here at resolution; the TOML values are turned into it by
//! [`super::document`].
//!
//! - `model.grid = D` is a D x D grid and stays the integer `D` (so the jobs of square-grid
//!   studies keep their ids); `[Dx, Dy]` is a rectangular grid, text `"[Dx, Dy]"`; `[D]` is a
//!   1-D grid of D cells, text `"[D]"`.
//! - `model.window = [[x0, x1], [y0, y1]]` (a 2-D grid) or `[[x0, x1]]` (a 1-D grid), text
//!   `"[[x0, x1], [y0, y1]]"` with each number in Rust's shortest round-trip form.

use crate::model::grid::{Grid, Window};
use crate::study::keys::ParamValue;

/// The grid a study asks for with `model.grid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GridShape {
    /// `D`: D x D.
    Square(usize),
    /// `[Dx, Dy]`.
    Rectangle(usize, usize),
    /// `[D]`: D cells along x.
    Line(usize),
}

impl GridShape {
    /// From the TOML array `[Dx, Dy]` or `[D]`; None for another length.
    pub(crate) fn from_list(values: &[usize]) -> Option<Self> {
        match *values {
            [n] => Some(GridShape::Line(n)),
            [nx, ny] => Some(GridShape::Rectangle(nx, ny)),
            _ => None,
        }
    }

    /// (points along x, points along y).
    pub(crate) fn dims(self) -> (usize, usize) {
        match self {
            GridShape::Square(d) => (d, d),
            GridShape::Rectangle(nx, ny) => (nx, ny),
            GridShape::Line(n) => (n, 1),
        }
    }

    /// Cells, as a float (the memory check sees absurd sizes before they overflow).
    pub(crate) fn cells(self) -> f64 {
        let (nx, ny) = self.dims();
        nx as f64 * ny as f64
    }

    /// Whether it is a 1-D grid.
    pub(crate) fn is_line(self) -> bool {
        self.dims().1 == 1
    }

    /// "16 x 16", "64 x 32", "811-cell 1-D".
    pub(crate) fn describe(self) -> String {
        match self {
            GridShape::Line(n) => format!("{n}-cell 1-D"),
            _ => {
                let (nx, ny) = self.dims();
                format!("{nx} x {ny}")
            }
        }
    }

    /// The grid over the default window: the unit square for `D`, the same spacing
    /// 1 / (max(Dx, Dy) - 1) on both axes for `[Dx, Dy]` and `[D]` (see [`Grid`]).
    pub(crate) fn default_grid(self) -> Grid {
        match self {
            GridShape::Square(d) => Grid::new(d),
            GridShape::Rectangle(nx, ny) => Grid::rectangular(nx, ny),
            GridShape::Line(n) => Grid::line(n),
        }
    }

    /// The parameter value: the integer `D`, or the text `"[Dx, Dy]"` / `"[D]"`.
    pub(crate) fn to_param(self) -> ParamValue {
        match self {
            GridShape::Square(d) => ParamValue::Int(d as i64),
            GridShape::Rectangle(nx, ny) => ParamValue::text(&format!("[{nx}, {ny}]")),
            GridShape::Line(n) => ParamValue::text(&format!("[{n}]")),
        }
    }

    /// Back from [`GridShape::to_param`].
    pub(crate) fn from_param(value: &ParamValue) -> Option<Self> {
        match value {
            ParamValue::Int(d) => usize::try_from(*d).ok().map(GridShape::Square),
            ParamValue::Text(text) => {
                let values = parse_list(text, |s| s.parse::<usize>().ok())?;
                GridShape::from_list(&values)
            }
            _ => None,
        }
    }
}

/// The canonical text of a window: `[[x0, x1], [y0, y1]]`, or `[[x0, x1]]` for a 1-D one.
pub(crate) fn window_text(window: &Window, line: bool) -> String {
    let (x0, x1) = window.x;
    if line {
        format!("[[{x0:?}, {x1:?}]]")
    } else {
        let (y0, y1) = window.y;
        format!("[[{x0:?}, {x1:?}], [{y0:?}, {y1:?}]]")
    }
}

/// A window as given: one (x) or two (x, y) ranges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowSpec {
    pub(crate) x: (f64, f64),
    pub(crate) y: Option<(f64, f64)>,
}

impl WindowSpec {
    /// From the ranges of the TOML array (each a pair); None unless there are one or two.
    pub(crate) fn from_ranges(ranges: &[(f64, f64)]) -> Option<Self> {
        match *ranges {
            [x] => Some(WindowSpec { x, y: None }),
            [x, y] => Some(WindowSpec { x, y: Some(y) }),
            _ => None,
        }
    }

    /// The range that is empty, reversed or not finite, if any: "x" or "y".
    pub(crate) fn bad_range(&self) -> Option<&'static str> {
        let ok = |(a, b): (f64, f64)| a.is_finite() && b.is_finite() && a < b;
        if !ok(self.x) {
            Some("x")
        } else if self.y.is_some_and(|y| !ok(y)) {
            Some("y")
        } else {
            None
        }
    }

    /// The window (y = (0, 0) for a 1-D one).
    pub(crate) fn window(&self) -> Window {
        Window {
            x: self.x,
            y: self.y.unwrap_or((0.0, 0.0)),
        }
    }

    #[allow(clippy::wrong_self_convention)] // an explicit conversion
    pub(crate) fn to_param(&self) -> ParamValue {
        ParamValue::text(&window_text(&self.window(), self.y.is_none()))
    }

    /// Back from [`WindowSpec::to_param`].
    pub(crate) fn from_param(value: &ParamValue) -> Option<Self> {
        let ParamValue::Text(text) = value else {
            return None;
        };
        let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
        let ranges: Vec<(f64, f64)> = inner
            .split(']')
            .map(|part| part.trim_start_matches([',', ' ']))
            .filter(|part| !part.is_empty())
            .map(|part| {
                let pair = parse_list(&format!("{part}]"), |s| s.parse::<f64>().ok())?;
                match pair[..] {
                    [a, b] => Some((a, b)),
                    _ => None,
                }
            })
            .collect::<Option<_>>()?;
        WindowSpec::from_ranges(&ranges)
    }
}

/// `[a, b, ...]` parsed element by element.
fn parse_list<T>(text: &str, parse: impl Fn(&str) -> Option<T>) -> Option<Vec<T>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    inner.split(',').map(|s| parse(s.trim())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_shapes_round_trip_and_squares_stay_integers() {
        for shape in [
            GridShape::Square(16),
            GridShape::Rectangle(64, 32),
            GridShape::Line(811),
        ] {
            assert_eq!(GridShape::from_param(&shape.to_param()), Some(shape));
        }
        assert_eq!(GridShape::Square(16).to_param(), ParamValue::Int(16));
        assert_eq!(
            GridShape::Rectangle(64, 32).to_param(),
            ParamValue::text("[64, 32]")
        );
        assert_eq!(GridShape::Line(811).to_param(), ParamValue::text("[811]"));
        assert_eq!(GridShape::Line(811).dims(), (811, 1));
        assert_eq!(GridShape::from_list(&[1, 2, 3]), None);
    }

    #[test]
    fn windows_round_trip_exactly() {
        for spec in [
            WindowSpec {
                x: (0.0, 1.0),
                y: Some((-8.0, 2.0)),
            },
            WindowSpec {
                x: (0.1 + 0.2, 40_550.0),
                y: None,
            },
        ] {
            assert_eq!(WindowSpec::from_param(&spec.to_param()), Some(spec));
        }
        assert_eq!(
            WindowSpec {
                x: (0.0, 1.0),
                y: Some((0.0, 1.0))
            }
            .to_param(),
            ParamValue::text("[[0.0, 1.0], [0.0, 1.0]]")
        );
        let reversed = WindowSpec {
            x: (0.0, 1.0),
            y: Some((1.0, 1.0)),
        };
        assert_eq!(reversed.bad_range(), Some("y"));
    }
}
