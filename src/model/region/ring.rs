//! One ring of a region, checked on its own (finite, at least 3 distinct vertices, some area),
//! and the two predicates everything else is built on: which side of a line a point is on, and
//! where a point is with respect to a ring (inside, outside, on its boundary).
//!
//! The predicates are evaluated in floating point with a tolerance: a point counts as on a line
//! when the 2 x 2 determinant that decides the side is within [`TOLERANCE`] times the size of its
//! own rounding error bound (the coordinates' magnitude times the lengths involved), i.e. when
//! it lies within about 1e-14 of the coordinates' magnitude of the line. So a vertex written on
//! another ring's edge in decimal (which binary floating point can only approximate) touches
//! that edge, and crossings by less than that are touches.

use super::error::{Point, RegionError};
use crate::model::grid::Window;

/// The relative tolerance of the side test (about 45 machine epsilons).
pub(super) const TOLERANCE: f64 = 1e-14;

/// Which side of the directed line a -> b a point is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Left,
    Right,
    On,
}

/// The side of the line a -> b that `c` is on (On within the tolerance).
pub(super) fn side(a: Point, b: Point, c: Point) -> Side {
    let (ux, uy) = (b.0 - a.0, b.1 - a.1);
    let (vx, vy) = (c.0 - a.0, c.1 - a.1);
    let det = ux * vy - uy * vx;
    let scale = magnitude(&[a, b, c]) * (ux.abs() + uy.abs() + vx.abs() + vy.abs());
    if det.abs() <= TOLERANCE * scale {
        Side::On
    } else if det > 0.0 {
        Side::Left
    } else {
        Side::Right
    }
}

/// The largest absolute coordinate of `points`.
pub(super) fn magnitude(points: &[Point]) -> f64 {
    points
        .iter()
        .fold(0.0_f64, |m, p| m.max(p.0.abs()).max(p.1.abs()))
}

/// Whether `c` lies in the bounding box of a and b, widened by the tolerance.
fn within(a: Point, b: Point, c: Point) -> bool {
    let slack = TOLERANCE * magnitude(&[a, b, c]);
    let between = |p: f64, q: f64, v: f64| p.min(q) - slack <= v && v <= p.max(q) + slack;
    between(a.0, b.0, c.0) && between(a.1, b.1, c.1)
}

/// Whether `c` lies on the segment a - b (within the tolerance).
pub(super) fn on_segment(a: Point, b: Point, c: Point) -> bool {
    side(a, b, c) == Side::On && within(a, b, c)
}

/// Where a point is with respect to a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    Inside,
    Outside,
    Boundary,
}

/// A ring: its vertices in order (the closing edge implied), with consecutive repeats dropped.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ring {
    pub(super) points: Vec<Point>,
    /// The input index of each vertex kept.
    pub(super) input: Vec<usize>,
    pub(super) bbox: Window,
    /// The shoelace area: positive when the vertices run anticlockwise.
    pub(super) signed_area: f64,
}

impl Ring {
    /// The ring at place `index` of the input, from its `vertices`: every coordinate finite,
    /// consecutive repeats (and a last vertex that repeats the first) dropped, at least 3
    /// distinct vertices, not all on one line.
    pub(super) fn new(index: usize, vertices: &[Point]) -> Result<Self, RegionError> {
        if let Some(vertex) = vertices
            .iter()
            .position(|p| !(p.0.is_finite() && p.1.is_finite()))
        {
            return Err(RegionError::NotFinite {
                ring: index,
                vertex,
                point: vertices[vertex],
            });
        }
        let mut points: Vec<Point> = Vec::with_capacity(vertices.len());
        let mut input = Vec::with_capacity(vertices.len());
        for (k, &p) in vertices.iter().enumerate() {
            if points.last() != Some(&p) {
                points.push(p);
                input.push(k);
            }
        }
        while points.len() > 1 && points.last() == points.first() {
            points.pop();
            input.pop();
        }
        let mut distinct = points.clone();
        distinct.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
        distinct.dedup();
        if distinct.len() < 3 {
            return Err(RegionError::TooFewVertices {
                ring: index,
                distinct: distinct.len(),
            });
        }
        // All on the line through the first vertex and the one farthest from it (a ring that
        // is not simple may also have no net area, e.g. a bow tie: `nesting.rs` refuses those).
        let first = points[0];
        let far = points.iter().copied().fold(first, |f, p| {
            let d = |q: Point| (q.0 - first.0).powi(2) + (q.1 - first.1).powi(2);
            if d(p) > d(f) { p } else { f }
        });
        if points.iter().all(|&p| side(first, far, p) == Side::On) {
            return Err(RegionError::ZeroArea { ring: index });
        }
        let bbox = bounding_box(&points);
        let signed_area = signed_area(&points);
        Ok(Self {
            points,
            input,
            bbox,
            signed_area,
        })
    }

    /// The number of vertices (and edges).
    pub(super) fn len(&self) -> usize {
        self.points.len()
    }

    /// Edge `k`: from vertex k to vertex k + 1 (the last edge closes the ring).
    pub(super) fn edge(&self, k: usize) -> (Point, Point) {
        (self.points[k], self.points[(k + 1) % self.points.len()])
    }

    /// Where `p` is: on the boundary (within the tolerance), else inside or outside by the
    /// parity of the ring's crossings of the ray from `p` towards +x.
    pub(super) fn locate(&self, p: Point) -> Location {
        let b = &self.bbox;
        let slack = TOLERANCE * magnitude(&[p, (b.x.0, b.y.0), (b.x.1, b.y.1)]);
        if p.0 < b.x.0 - slack || p.0 > b.x.1 + slack || p.1 < b.y.0 - slack || p.1 > b.y.1 + slack
        {
            return Location::Outside;
        }
        let mut inside = false;
        for k in 0..self.len() {
            let (a, b) = self.edge(k);
            if on_segment(a, b, p) {
                return Location::Boundary;
            }
            if (a.1 > p.1) != (b.1 > p.1) {
                let (low, high) = if a.1 < b.1 { (a, b) } else { (b, a) };
                if side(low, high, p) == Side::Left {
                    inside = !inside;
                }
            }
        }
        if inside {
            Location::Inside
        } else {
            Location::Outside
        }
    }
}

/// The smallest window holding `points`.
pub(super) fn bounding_box(points: &[Point]) -> Window {
    let mut window = Window {
        x: (f64::INFINITY, f64::NEG_INFINITY),
        y: (f64::INFINITY, f64::NEG_INFINITY),
    };
    for &(x, y) in points {
        window.x = (window.x.0.min(x), window.x.1.max(x));
        window.y = (window.y.0.min(y), window.y.1.max(y));
    }
    window
}

/// The shoelace area of the polygon through `points` (closed implicitly), positive when they
/// run anticlockwise; summed relative to the first vertex, which keeps the rounding error at the
/// scale of the polygon rather than of its coordinates' distance from the origin.
pub(super) fn signed_area(points: &[Point]) -> f64 {
    let Some(&(x0, y0)) = points.first() else {
        return 0.0;
    };
    let mut twice = 0.0;
    for pair in points[1..].windows(2) {
        let (p, q) = (pair[0], pair[1]);
        twice += (p.0 - x0) * (q.1 - y0) - (q.0 - x0) * (p.1 - y0);
    }
    twice / 2.0
}
