//! The regular grid a field lives on (1-D, square or rectangular), its physical coordinates, and
//! the one cell-ordering convention used everywhere.
//!
//! A grid has `nx` points along x and `ny` along y (`ny = 1`: a 1-D grid). Cell (i, j), `i`
//! indexing x and `j` indexing y from 0, is field index `n = j * nx + i` (x fastest). This is the
//! row order of the grid CSV files in `data/`, and the column-major order of an `nx x ny` matrix
//! `U[(i, j)]`, which is what makes a separable prior `u = (L_y (x) L_x) xi` the matrix product
//! `U = L_x Xi L_y^T`.
//!
//! Coordinates, in the units every length scale is measured in:
//! - [`Grid::new`] (`model.grid = D`, no window): D x D points from (0, 0) to (1, 1), point
//!   (i, j) at (i / (D - 1), j / (D - 1)): the design brief's unit square, bit for bit.
//! - [`Grid::rectangular`] (`[Dx, Dy]`, no window) and [`Grid::line`] (`[D]`): the same spacing
//!   1 / (max(Dx, Dy) - 1) on both axes, so cells stay square and the longer axis spans [0, 1].
//! - [`Grid::over_window`] (`model.window`, or the window of a grid CSV): the cells tile the
//!   window [x0, x1] x [y0, y1] and the points are the cell centres, spacing (x1 - x0) / nx by
//!   (y1 - y0) / ny. The cells are square when the window's aspect ratio is nx : ny (a real grid
//!   may have rectangular cells: distances are always physical, so a kernel is isotropic in the
//!   window's units whatever the cells' shape).
//!
//! Each cell has a measure (its area; its length on a 1-D grid), [`Grid::cell_area`]: the
//! exposure of a count model's `log-area` offset.

use std::fmt;

/// One axis: `points` coordinates `origin + span * (k / divisor)`, k = 0 .. points - 1.
///
/// The coordinate is computed in that form so that the unit square's k / (D - 1) is reproduced
/// bit for bit (`0 + 1 * x == x`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    points: usize,
    origin: f64,
    span: f64,
    divisor: f64,
}

impl Axis {
    /// `points` coordinates k / divisor (divisor > 0).
    fn scaled(points: usize, divisor: usize) -> Self {
        Self {
            points,
            origin: 0.0,
            span: 1.0,
            divisor: divisor.max(1) as f64,
        }
    }

    /// `points` cell centres tiling [start, end].
    fn centres(points: usize, start: f64, end: f64) -> Self {
        let step = (end - start) / points as f64;
        Self {
            points,
            origin: start + step / 2.0,
            span: step,
            divisor: 1.0,
        }
    }

    /// Points on this axis.
    pub(crate) fn points(&self) -> usize {
        self.points
    }

    /// The coordinate of point `k`.
    pub(crate) fn coordinate(&self, k: usize) -> f64 {
        self.origin + self.span * (k as f64 / self.divisor)
    }

    /// The distance between neighbouring points (and the width of a cell).
    pub(crate) fn spacing(&self) -> f64 {
        self.span / self.divisor
    }
}

/// A physical window [x0, x1] x [y0, y1] (for a 1-D grid, y is ignored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub x: (f64, f64),
    pub y: (f64, f64),
}

/// A regular grid of `nx x ny` cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    x: Axis,
    y: Axis,
}

impl Grid {
    /// A D x D grid over the unit square, points from (0, 0) to (1, 1) (D >= 1).
    pub fn new(side: usize) -> Self {
        Self::rectangular(side, side)
    }

    /// An `nx x ny` grid with spacing 1 / (max(nx, ny) - 1) on both axes, from (0, 0).
    pub fn rectangular(nx: usize, ny: usize) -> Self {
        assert!(
            nx >= 1 && ny >= 1,
            "a grid needs at least one point per axis"
        );
        let divisor = nx.max(ny) - 1;
        Self {
            x: Axis::scaled(nx, divisor),
            y: Axis::scaled(ny, divisor),
        }
    }

    /// A 1-D grid of `n` points over [0, 1].
    pub fn line(n: usize) -> Self {
        Self::rectangular(n, 1)
    }

    /// `nx x ny` cells tiling `window` (a 1-D grid when `ny` = 1: the window's y range is then
    /// only a label and the cell's measure is its length).
    pub fn over_window(nx: usize, ny: usize, window: Window) -> Self {
        assert!(
            nx >= 1 && ny >= 1,
            "a grid needs at least one point per axis"
        );
        let y = if ny == 1 {
            Axis {
                points: 1,
                origin: (window.y.0 + window.y.1) / 2.0,
                span: 0.0,
                divisor: 1.0,
            }
        } else {
            Axis::centres(ny, window.y.0, window.y.1)
        };
        Self {
            x: Axis::centres(nx, window.x.0, window.x.1),
            y,
        }
    }

    /// The window the cells tile: each axis from its first point minus half a spacing to its
    /// last plus half (a 1-D grid's y range is its single point).
    pub(crate) fn window(&self) -> Window {
        let range = |axis: &Axis| {
            let half = axis.spacing() / 2.0;
            (
                axis.coordinate(0) - half,
                axis.coordinate(axis.points - 1) + half,
            )
        };
        Window {
            x: range(&self.x),
            y: range(&self.y),
        }
    }

    /// Points along x.
    pub(crate) fn nx(&self) -> usize {
        self.x.points
    }

    /// Points along y (1 on a 1-D grid).
    pub(crate) fn ny(&self) -> usize {
        self.y.points
    }

    /// The x axis.
    pub(crate) fn x_axis(&self) -> Axis {
        self.x
    }

    /// The y axis.
    pub(crate) fn y_axis(&self) -> Axis {
        self.y
    }

    /// Whether the grid is 1-D (a single point along y).
    pub(crate) fn is_line(&self) -> bool {
        self.y.points == 1
    }

    /// N = nx * ny: cells in the grid.
    pub fn cells(&self) -> usize {
        self.x.points * self.y.points
    }

    /// (hx, hy): the spacing along each axis (hy = 0 on a 1-D grid).
    pub fn spacing(&self) -> (f64, f64) {
        (self.x.spacing(), self.y.spacing())
    }

    /// The measure of one cell: hx * hy, or hx on a 1-D grid.
    pub fn cell_area(&self) -> f64 {
        if self.is_line() {
            self.x.spacing()
        } else {
            self.x.spacing() * self.y.spacing()
        }
    }

    /// The field index of cell (i, j).
    pub(crate) fn index(&self, i: usize, j: usize) -> usize {
        j * self.x.points + i
    }

    /// The cell (i, j) of field index `n`.
    pub(crate) fn cell(&self, n: usize) -> (usize, usize) {
        (n % self.x.points, n / self.x.points)
    }

    /// The (x, y) position of field index `n`.
    pub fn position(&self, n: usize) -> (f64, f64) {
        let (i, j) = self.cell(n);
        (self.x.coordinate(i), self.y.coordinate(j))
    }

    /// `count` cells spread along the diagonal from (0, 0) to (nx - 1, ny - 1): cell k is
    /// (round(k (nx - 1) / (count - 1)), round(k (ny - 1) / (count - 1))).
    pub(crate) fn diagonal_cells<const COUNT: usize>(&self) -> [usize; COUNT] {
        let along = |points: usize, k: usize| {
            ((k * (points - 1)) as f64 / (COUNT.max(2) - 1) as f64).round() as usize
        };
        std::array::from_fn(|k| self.index(along(self.nx(), k), along(self.ny(), k)))
    }
}

impl fmt::Display for Grid {
    /// "64 x 64", "64 x 32", or "811" for a 1-D grid.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_line() {
            write!(f, "{}", self.nx())
        } else {
            write!(f, "{} x {}", self.nx(), self.ny())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_cell_are_inverse_and_x_runs_fastest() {
        let g = Grid::new(5);
        assert_eq!(g.index(1, 0), 1);
        assert_eq!(g.index(0, 1), 5);
        for n in 0..g.cells() {
            let (i, j) = g.cell(n);
            assert_eq!(g.index(i, j), n);
        }
        assert_eq!(g.position(24), (1.0, 1.0));
        assert_eq!(Grid::new(1).position(0), (0.0, 0.0));
        let r = Grid::rectangular(4, 3);
        assert_eq!(r.cells(), 12);
        assert_eq!(r.cell(7), (3, 1));
        assert_eq!(r.index(3, 1), 7);
    }

    /// The unit square's coordinates are k / (D - 1) exactly, as before grids had windows.
    #[test]
    fn the_square_grid_keeps_its_coordinates_bit_for_bit() {
        for d in [2, 3, 7, 16, 33, 64, 256] {
            let g = Grid::new(d);
            for k in 0..d {
                let legacy = k as f64 / (d - 1) as f64;
                assert_eq!(g.x_axis().coordinate(k).to_bits(), legacy.to_bits());
                assert_eq!(g.y_axis().coordinate(k).to_bits(), legacy.to_bits());
            }
        }
    }

    #[test]
    fn rectangular_grids_keep_square_cells_and_the_longer_axis_spans_the_unit() {
        let g = Grid::rectangular(9, 5);
        assert_eq!(g.spacing(), (0.125, 0.125));
        assert_eq!(g.position(g.index(8, 4)), (1.0, 0.5));
        let tall = Grid::rectangular(3, 5);
        assert_eq!(tall.position(tall.index(2, 4)), (0.5, 1.0));
        let line = Grid::line(11);
        assert!(line.is_line());
        assert_eq!(line.position(10), (1.0, 0.0));
        assert!((line.cell_area() - 0.1).abs() < 1e-15);
    }

    #[test]
    fn window_cells_tile_the_window_with_centres_as_points() {
        let w = Window {
            x: (-5.0, 5.0),
            y: (-8.0, 2.0),
        };
        let g = Grid::over_window(64, 64, w);
        assert_eq!(g.spacing(), (10.0 / 64.0, 10.0 / 64.0));
        assert_eq!(g.position(0), (-5.0 + 5.0 / 64.0, -8.0 + 5.0 / 64.0));
        let (x, y) = g.position(g.cells() - 1);
        assert!((x - (5.0 - 5.0 / 64.0)).abs() < 1e-12 && (y - (2.0 - 5.0 / 64.0)).abs() < 1e-12);
        assert!((g.cell_area() - 100.0 / 4096.0).abs() < 1e-15);
        let unit = Grid::over_window(
            64,
            64,
            Window {
                x: (0.0, 1.0),
                y: (0.0, 1.0),
            },
        );
        assert_eq!(unit.cell_area(), 1.0 / 4096.0);
        let days = Grid::over_window(
            811,
            1,
            Window {
                x: (0.0, 40_550.0),
                y: (0.0, 0.0),
            },
        );
        assert_eq!(days.cell_area(), 50.0);
        assert_eq!(days.position(0), (25.0, 0.0));
        assert_eq!(format!("{days}"), "811");
        assert_eq!(format!("{unit}"), "64 x 64");
    }

    #[test]
    fn diagonal_cells_of_the_square_grid_are_the_legacy_probes() {
        for side in [1, 2, 4, 5, 16, 33] {
            let g = Grid::new(side);
            let expected: [usize; 5] = std::array::from_fn(|k| {
                let i = ((k * (side - 1)) as f64 / 4.0).round() as usize;
                i * side + i
            });
            assert_eq!(g.diagonal_cells::<5>(), expected);
        }
        let r = Grid::rectangular(9, 5);
        assert_eq!(
            r.diagonal_cells::<5>(),
            [0, 9 + 2, 2 * 9 + 4, 3 * 9 + 6, 4 * 9 + 8]
        );
        assert_eq!(Grid::line(9).diagonal_cells::<5>(), [0, 2, 4, 6, 8]);
    }
}
