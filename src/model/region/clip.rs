//! The area of a ring inside each cell of a grid, by clipping: Sutherland-Hodgman against the
//! half-planes x <= e and x >= e (or y), which is exact for a convex clip region such as a cell.
//!
//! Clipping a closed polygon to a half-plane keeps its winding number at every point of the
//! half-plane (the parts outside are replaced by stretches of the clip line, which no ray along
//! the line from a point inside crosses), so the shoelace area of the ring clipped to a cell is
//! the integral of its winding number over the cell: +-(its area inside the cell) for a simple
//! ring. Degenerate stretches along a clip line (where the ring leaves the cell and comes back)
//! add no area.
//!
//! Rather than clipping the whole ring against every cell (cells x vertices), the ring is cut in
//! two along the grid line in the middle of the cells it can reach, each half cut again, and so
//! on down to single cells, each piece narrowed to the cells its bounding box reaches: every
//! level costs time linear in the vertices plus the grid lines crossed, and there are about
//! log2(nx) + log2(ny) levels. Both halves of a cut share the same computed cut points (each is
//! computed from the edge's end with the lower coordinate), so the cells' areas add up to the
//! ring's to rounding.

use std::ops::Range;

use super::error::Point;
use super::ring::{Ring, bounding_box, signed_area};
use crate::model::grid::Window;

/// The edges of the cells tiling a window: nx + 1 along x, ny + 1 along y.
#[derive(Debug, Clone)]
pub(super) struct CellEdges {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
}

impl CellEdges {
    /// `nx x ny` cells tiling `window`: edge k along x at x0 + (x1 - x0) (k / nx), the last
    /// exactly x1 (and the same along y).
    pub(super) fn new(window: Window, nx: usize, ny: usize) -> Self {
        let axis = |(lo, hi): (f64, f64), n: usize| -> Vec<f64> {
            (0..=n)
                .map(|k| {
                    if k == n {
                        hi
                    } else {
                        lo + (hi - lo) * (k as f64 / n as f64)
                    }
                })
                .collect()
        };
        Self {
            x: axis(window.x, nx),
            y: axis(window.y, ny),
        }
    }

    /// Cells along x.
    pub(super) fn nx(&self) -> usize {
        self.x.len() - 1
    }

    /// Cells along y.
    pub(super) fn ny(&self) -> usize {
        self.y.len() - 1
    }

    /// The area of cell `n` = j * nx + i.
    pub(super) fn cell_area(&self, n: usize) -> f64 {
        let (i, j) = (n % self.nx(), n / self.nx());
        (self.x[i + 1] - self.x[i]) * (self.y[j + 1] - self.y[j])
    }
}

/// An axis a cut runs across.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    X,
    Y,
}

impl Axis {
    fn of(self, p: Point) -> f64 {
        match self {
            Axis::X => p.0,
            Axis::Y => p.1,
        }
    }
}

/// Add `weight` times the signed area of `ring` inside each cell to `areas` (cell (i, j) at
/// j * nx + i). Only the cells in the ring's bounding box are visited.
pub(super) fn add_ring(ring: &Ring, weight: f64, edges: &CellEdges, areas: &mut [f64]) {
    let (nx, ny) = (edges.nx(), edges.ny());
    let (x_lo, x_hi) = (edges.x[0], edges.x[nx]);
    let (y_lo, y_hi) = (edges.y[0], edges.y[ny]);
    let mut piece = ring.points.clone();
    // Clip to the window first, where the ring reaches beyond it.
    let b = ring.bbox;
    for (axis, value, keep_low, beyond) in [
        (Axis::X, x_lo, false, b.x.0 < x_lo),
        (Axis::X, x_hi, true, b.x.1 > x_hi),
        (Axis::Y, y_lo, false, b.y.0 < y_lo),
        (Axis::Y, y_hi, true, b.y.1 > y_hi),
    ] {
        if beyond {
            let (low, high) = cut(&piece, axis, value);
            piece = if keep_low { low } else { high };
        }
    }
    let mut cutter = Cutter {
        edges,
        weight,
        areas,
    };
    cutter.split(piece, 0..nx, 0..ny);
}

/// The recursion of [`add_ring`].
struct Cutter<'a> {
    edges: &'a CellEdges,
    weight: f64,
    areas: &'a mut [f64],
}

impl Cutter<'_> {
    /// Add the area of `piece` (already clipped to the cells `i` x `j`) to those cells.
    fn split(&mut self, piece: Vec<Point>, i: Range<usize>, j: Range<usize>) {
        if piece.len() < 3 {
            return;
        }
        let b = bounding_box(&piece);
        if !(b.x.1 > b.x.0 && b.y.1 > b.y.0) {
            return;
        }
        let i = narrow(&self.edges.x, i, b.x);
        let j = narrow(&self.edges.y, j, b.y);
        if i.is_empty() || j.is_empty() {
            return;
        }
        if i.len() == 1 && j.len() == 1 {
            self.areas[j.start * self.edges.nx() + i.start] += self.weight * signed_area(&piece);
            return;
        }
        if i.len() >= j.len() {
            let mid = i.start + i.len() / 2;
            let (low, high) = cut(&piece, Axis::X, self.edges.x[mid]);
            drop(piece);
            self.split(low, i.start..mid, j.clone());
            self.split(high, mid..i.end, j);
        } else {
            let mid = j.start + j.len() / 2;
            let (low, high) = cut(&piece, Axis::Y, self.edges.y[mid]);
            drop(piece);
            self.split(low, i.clone(), j.start..mid);
            self.split(high, i, mid..j.end);
        }
    }
}

/// The cells of `cells` (along one axis with cell edges `edges`) that overlap (lo, hi) with
/// positive length: the first whose upper edge is above lo to the last whose lower edge is below
/// hi (the range's own outer edges are taken to hold the piece).
fn narrow(edges: &[f64], cells: Range<usize>, (lo, hi): (f64, f64)) -> Range<usize> {
    if cells.len() <= 1 {
        return cells;
    }
    // The edges between the range's cells: edges[start + 1 .. end].
    let inner = &edges[cells.start + 1..cells.end];
    let first = cells.start + inner.partition_point(|&e| e <= lo);
    let end = cells.start + 1 + inner.partition_point(|&e| e < hi);
    first..end.max(first)
}

/// `polygon` clipped to `axis <= value` and to `axis >= value` (Sutherland-Hodgman, one pass for
/// both): a vertex on the line belongs to both, and a cut point is computed once for both.
fn cut(polygon: &[Point], axis: Axis, value: f64) -> (Vec<Point>, Vec<Point>) {
    let (mut low, mut high) = (Vec::new(), Vec::new());
    let Some(&last) = polygon.last() else {
        return (low, high);
    };
    let mut p = last;
    for &q in polygon {
        let (pc, qc) = (axis.of(p), axis.of(q));
        if (pc < value && qc > value) || (pc > value && qc < value) {
            let at = crossing(p, q, axis, value);
            low.push(at);
            high.push(at);
        }
        if qc <= value {
            low.push(q);
        }
        if qc >= value {
            high.push(q);
        }
        p = q;
    }
    (low, high)
}

/// Where the edge p - q (strictly across the line) meets `axis = value`: computed from the end
/// with the lower coordinate, so the same edge walked either way gives the same point, and with
/// the cut coordinate set to `value` exactly.
fn crossing(p: Point, q: Point, axis: Axis, value: f64) -> Point {
    let (from, to) = if axis.of(p) < axis.of(q) {
        (p, q)
    } else {
        (q, p)
    };
    let t = (value - axis.of(from)) / (axis.of(to) - axis.of(from));
    match axis {
        Axis::X => (value, from.1 + t * (to.1 - from.1)),
        Axis::Y => (from.0 + t * (to.0 - from.0), value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_keeps_the_cells_a_span_overlaps() {
        let edges = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(narrow(&edges, 0..4, (0.5, 2.5)), 0..3);
        assert_eq!(narrow(&edges, 0..4, (1.0, 2.0)), 1..2);
        assert_eq!(narrow(&edges, 0..4, (1.0, 3.0)), 1..3);
        assert_eq!(narrow(&edges, 1..4, (1.0, 4.0)), 1..4);
        assert_eq!(narrow(&edges, 2..3, (2.0, 2.5)), 2..3);
    }

    #[test]
    fn a_cut_splits_a_square_into_two_rectangles_sharing_the_cut_points() {
        let square = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)];
        let (low, high) = cut(&square, Axis::X, 0.5);
        assert_eq!(signed_area(&low), 1.0);
        assert_eq!(signed_area(&high), 3.0);
        assert!(low.contains(&(0.5, 0.0)) && high.contains(&(0.5, 0.0)));
        // A vertex on the line belongs to both halves; nothing lies beyond it.
        let (low, high) = cut(&square, Axis::Y, 2.0);
        assert_eq!((signed_area(&low), high.len()), (4.0, 2));
    }
}
