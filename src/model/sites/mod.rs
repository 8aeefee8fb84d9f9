//! Observations at scattered sites: each site sees the field interpolated between the four cell
//! centres around it, so the data enter as H u, H a sparse M x N matrix of four weights a row
//! that is never formed ([`SiteOperator::gather`] applies it, [`SiteOperator::scatter_add`] its
//! transpose).
//!
//! **Bilinear, extrapolated over the border half-cells.** Inside the cell centres' rectangle a
//! site's value is the bilinear interpolation of the four centres around it. A site between the
//! window's edge and the outermost centres (half a cell wide) takes the outermost pair of
//! centres on that axis and extends their line (weights 1 - t and t with t in [-1/2, 0) or
//! (1, 3/2]) instead of holding the edge value: holding it is first order in the spacing h, and
//! those half-cells would carry the largest error of the whole window (docs/data.md measures the
//! error against exact kriging). The operator reproduces every function a + b x + c y + d x y
//! exactly, so its error is second order, O((h / l)^2).
//!
//! [`kriging`] holds the dense references: exact kriging at the sites, and the same kriging with
//! the covariance the grid gives the sites (H C H^T), which is what fieldmc's posterior is when
//! its sampler is exact.

pub mod data;
pub(crate) mod kriging;

pub use data::{Measurements, SiteData, SiteSet};

use crate::model::grid::{Grid, Window};
use crate::model::prior::Prior;

/// The cells per length scale the grid needs for sites: at this many, kriging through the grid
/// was within 0.1 exact posterior sds of exact kriging's mean and 10 % of its sd at every
/// prediction point of every case of `bench/kriging.sh` (docs/data.md).
pub const CELLS_PER_LENGTH_SCALE: f64 = 12.0;

/// The grid side that puts [`CELLS_PER_LENGTH_SCALE`] cells in one `length_scale` along an
/// axis of length `extent` (a quotient within rounding of a whole number is that number: 12 x
/// 6.2 / 1.2 is 62, not the 62.000000000000007 division gives).
pub fn recommended_side(extent: f64, length_scale: f64) -> usize {
    (CELLS_PER_LENGTH_SCALE * extent / length_scale * (1.0 - 1e-12))
        .ceil()
        .max(2.0) as usize
}

/// Why sites cannot be placed on a grid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SiteError {
    #[error("site {site} at ({x}, {y}) lies outside the window {window}")]
    OutsideWindow {
        /// The site's index, from 0, in the order given.
        site: usize,
        x: f64,
        y: f64,
        window: String,
    },
    #[error(
        "sites are interpolated between cell centres, which needs at least 2 cells along each \
         axis; the grid has {nx} x {ny}"
    )]
    GridTooSmall { nx: usize, ny: usize },
}

/// One site's row of H: four cells and their weights (summing to 1).
pub type SiteRow = [(usize, f64); 4];

/// H: the M sites' interpolation weights on a grid's cells.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteOperator {
    rows: Vec<SiteRow>,
    cells: usize,
}

impl SiteOperator {
    /// The bilinear operator of `sites` (x, y) on `grid` (see the module doc). A site on the
    /// window's boundary belongs to it; one outside is refused.
    pub fn bilinear(grid: &Grid, sites: &[(f64, f64)]) -> Result<Self, SiteError> {
        let (nx, ny) = (grid.nx(), grid.ny());
        if nx < 2 || ny < 2 {
            return Err(SiteError::GridTooSmall { nx, ny });
        }
        let window = grid.window();
        let (hx, hy) = grid.spacing();
        let (x0, y0) = grid.position(0);
        let rows = sites
            .iter()
            .enumerate()
            .map(|(site, &(x, y))| {
                if !inside(&window, x, y) {
                    return Err(SiteError::OutsideWindow {
                        site,
                        x,
                        y,
                        window: window_text(&window),
                    });
                }
                let (i, fx) = bracket((x - x0) / hx, nx);
                let (j, fy) = bracket((y - y0) / hy, ny);
                let cell = |di: usize, dj: usize| grid.index(i + di, j + dj);
                Ok([
                    (cell(0, 0), (1.0 - fx) * (1.0 - fy)),
                    (cell(1, 0), fx * (1.0 - fy)),
                    (cell(0, 1), (1.0 - fx) * fy),
                    (cell(1, 1), fx * fy),
                ])
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            rows,
            cells: grid.cells(),
        })
    }

    /// M: the number of sites.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows of H, one per site in the order given.
    pub fn rows(&self) -> &[SiteRow] {
        &self.rows
    }

    /// Whether every site sits on a cell centre (one weight of 1): H then selects cells, and
    /// the grid's prior at the sites is the Gaussian process there, whatever the spacing.
    pub fn on_cell_centres(&self) -> bool {
        self.rows
            .iter()
            .all(|row| row.iter().any(|&(_, w)| (w - 1.0).abs() < 1e-9))
    }

    /// H u: the field (N values) at every site, into `out` (M values).
    pub fn gather(&self, field: &[f64], out: &mut [f64]) {
        debug_assert_eq!(field.len(), self.cells);
        for (o, row) in out.iter_mut().zip(&self.rows) {
            *o = row.iter().map(|&(c, w)| w * field[c]).sum();
        }
    }

    /// field += H^T values: each site's value spread back onto its four cells.
    pub fn scatter_add(&self, values: &[f64], field: &mut [f64]) {
        debug_assert_eq!(field.len(), self.cells);
        for (&v, row) in values.iter().zip(&self.rows) {
            for &(c, w) in row {
                field[c] += w * v;
            }
        }
    }

    /// (H C H^T)_ab: the prior covariance the grid gives sites a and b (16 prior entries).
    pub(crate) fn covariance(&self, prior: &dyn Prior, a: usize, b: usize) -> f64 {
        let mut sum = 0.0;
        for &(ca, wa) in &self.rows[a] {
            for &(cb, wb) in &self.rows[b] {
                sum += wa * wb * prior.covariance(ca, cb);
            }
        }
        sum
    }
}

/// The smallest window holding every site.
pub fn bounding_window(sites: &[(f64, f64)]) -> Window {
    let span = |pick: fn(&(f64, f64)) -> f64| {
        sites
            .iter()
            .map(pick)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    Window {
        x: span(|s| s.0),
        y: span(|s| s.1),
    }
}

/// Whether (x, y) is in the window, its boundary included: within 1e-9 of the window's extent
/// of it (the grid recomputes its window from the cell centres, which rounds the edges).
fn inside(window: &Window, x: f64, y: f64) -> bool {
    let within = |(lo, hi): (f64, f64), v: f64| {
        let slack = 1e-9 * (hi - lo);
        (lo - slack..=hi + slack).contains(&v)
    };
    within(window.x, x) && within(window.y, y)
}

fn window_text(window: &Window) -> String {
    format!(
        "[{}, {}] x [{}, {}]",
        window.x.0, window.x.1, window.y.0, window.y.1
    )
}

/// The lower of the two centres a coordinate t (in spacings from the first centre) is read
/// between, and its weight on the upper one: t - i, in [0, 1] between centres, below 0 or above
/// 1 over the border half-cells (the outermost pair's line extended).
fn bracket(t: f64, points: usize) -> (usize, f64) {
    let i = (t.floor().max(0.0) as usize).min(points - 2);
    (i, t - i as f64)
}

/// Deterministic scattered points in a window, for tests: a Halton-like low-discrepancy
/// sequence (bases 2 and 3) from its `offset + 1`-th point.
#[cfg(test)]
pub(crate) fn scattered(count: usize, window: &Window, offset: usize) -> Vec<(f64, f64)> {
    let radical = |mut k: usize, base: usize| {
        let (mut value, mut scale) = (0.0, 1.0 / base as f64);
        while k > 0 {
            value += (k % base) as f64 * scale;
            k /= base;
            scale /= base as f64;
        }
        value
    };
    (1..=count)
        .map(|k| {
            let (u, v) = (radical(k + offset, 2), radical(k + offset, 3));
            (
                window.x.0 + u * (window.x.1 - window.x.0),
                window.y.0 + v * (window.y.1 - window.y.0),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
