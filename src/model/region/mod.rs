//! A study region that need not be a rectangle: closed rings combined by the even-odd rule, and
//! the exact area of it inside each cell of a grid. Pure geometry, no I/O: the file that holds a
//! region is read by `families/latent_field/region_csv.rs`.
//!
//! This module owns:
//! - [`Region`]: rings, each a polygon given by its vertices in order (the closing edge
//!   implied; either orientation), combined by the **even-odd rule**: a point is in the region
//!   when it is inside an odd number of rings. A ring inside another is a hole, a ring inside a
//!   hole an island; rings may also lie apart. Rings must not cross each other or themselves
//!   ([`RegionError`] says which rings and roughly where); rings may touch each other (a hole
//!   touching its outer ring at a vertex or along an edge), but a ring may not touch itself
//!   (write a pinched shape as two rings). Checks: `nesting.rs`.
//! - Its area and containment: the even-odd area is sum over rings of (-1)^depth |area|, depth
//!   the number of other rings that contain the ring (for rings that do not cross, the rings
//!   around a point form a chain, so this is the even-odd rule exactly); [`Region::contains`]
//!   casts a ray.
//! - [`Region::cell_areas`]: each grid cell's area inside the region, **exact** (polygon
//!   clipping, not sampling; `clip.rs`): each ring is clipped to each cell it reaches
//!   (Sutherland-Hodgman against an axis-aligned rectangle, exact for a convex clip region),
//!   and the clipped areas are summed with the ring's sign. The only error is floating-point
//!   rounding: the areas add up to the region's area to about 1e-15 relative (tested to 1e-12).
//!
//! Decisions about whether a point is on a line (touching, on an edge) allow a tolerance of
//! about 1e-14 of the coordinates' magnitude (`ring.rs`), so vertices written in decimal on
//! another ring's edge count as touching it.
//!
//! Cost. [`Region::new`]: the edge pairs whose bounding boxes overlap (a sweep over edges sorted
//! by x; about linear for a region's boundary), then a point-in-ring test per pair of rings
//! whose boxes overlap (one per contact where they touch). [`Region::cell_areas`]: each ring is cut in halves along grid lines down to single
//! cells, visiting only the cells in its bounding box, in time about (vertices + grid lines
//! crossed) x (log2 nx + log2 ny) per ring. Measured (release build, one thread, on a shared
//! two-core machine under load; `tests.rs`, `cost_of_a_5000_vertex_ring_on_a_256_grid`): a ring
//! of 5,000 vertices over a 256 x 256 grid: a smooth one (a wavy circle, like a real boundary)
//! `new` 1 ms and `cell_areas` 4-9 ms; a jagged one (a star with random radii, so that every
//! edge is long and crosses many grid lines) `new` 30 ms and `cell_areas` 40-55 ms.

mod clip;
mod error;
mod nesting;
mod ring;
#[cfg(test)]
mod tests;

pub(crate) use error::{Point, RegionError};

use crate::model::grid::Window;
use clip::{CellEdges, add_ring};
use ring::{Location, Ring};

/// A study region: closed rings combined by the even-odd rule (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Region {
    rings: Vec<Ring>,
    /// +1 or -1 for each ring: (-1)^depth, the ring's sign in every sum.
    signs: Vec<f64>,
}

impl Region {
    /// The region of `rings`, each a list of vertices in order (a closing vertex that repeats
    /// the first, and consecutive repeats, are dropped). Refuses: no ring, a coordinate that is
    /// not finite, a ring with fewer than 3 distinct vertices or no area, a ring that crosses or
    /// touches itself, two rings that cross, two rings with the same boundary.
    pub(crate) fn new(rings: Vec<Vec<Point>>) -> Result<Self, RegionError> {
        if rings.is_empty() {
            return Err(RegionError::NoRings);
        }
        let rings = rings
            .iter()
            .enumerate()
            .map(|(index, vertices)| Ring::new(index, vertices))
            .collect::<Result<Vec<_>, _>>()?;
        let signs = nesting::depths(&rings)?
            .into_iter()
            .map(|depth| if depth % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        Ok(Self { rings, signs })
    }

    /// The rings' vertices as kept (consecutive repeats and a closing repeat dropped), in the
    /// input's order: the outline to draw.
    pub(crate) fn rings(&self) -> impl Iterator<Item = &[Point]> {
        self.rings.iter().map(|ring| ring.points.as_slice())
    }

    /// The smallest window holding every ring.
    pub(crate) fn bounding_box(&self) -> Window {
        let mut window = self.rings[0].bbox;
        for ring in &self.rings[1..] {
            let b = ring.bbox;
            window.x = (window.x.0.min(b.x.0), window.x.1.max(b.x.1));
            window.y = (window.y.0.min(b.y.0), window.y.1.max(b.y.1));
        }
        window
    }

    /// The area: sum over rings of (-1)^depth |shoelace area|.
    #[cfg(test)]
    pub(crate) fn area(&self) -> f64 {
        self.rings
            .iter()
            .zip(&self.signs)
            .map(|(ring, sign)| sign * ring.signed_area.abs())
            .sum()
    }

    /// Whether (x, y) is in the region: inside an odd number of rings (by casting a ray). A
    /// point on any ring's boundary (within the tolerance of the module doc) counts as inside,
    /// so the region is closed: its outline, and a hole's edge, belong to it.
    pub(crate) fn contains(&self, x: f64, y: f64) -> bool {
        let mut inside = false;
        for ring in &self.rings {
            match ring.locate((x, y)) {
                Location::Boundary => return true,
                Location::Inside => inside = !inside,
                Location::Outside => {}
            }
        }
        inside
    }

    /// The area of the region inside each cell of the `nx x ny` cells tiling `window` (cell
    /// (i, j), `i` along x, at index j * nx + i: [`crate::model::grid`]'s order), exact but for
    /// rounding, which is clamped away: each area lies in [0, the cell's area]. The window must
    /// have positive width and height.
    pub(crate) fn cell_areas(&self, window: Window, nx: usize, ny: usize) -> Vec<f64> {
        assert!(
            nx >= 1 && ny >= 1 && window.x.1 > window.x.0 && window.y.1 > window.y.0,
            "cells of a region need a window of positive area and at least one cell"
        );
        let edges = CellEdges::new(window, nx, ny);
        let mut areas = vec![0.0; nx * ny];
        for (ring, sign) in self.rings.iter().zip(&self.signs) {
            add_ring(ring, sign * ring.signed_area.signum(), &edges, &mut areas);
        }
        for (n, area) in areas.iter_mut().enumerate() {
            *area = area.clamp(0.0, edges.cell_area(n));
        }
        areas
    }

    /// The share of each cell inside the region: [`Self::cell_areas`] over the cell's area,
    /// in [0, 1].
    pub(crate) fn inside_fractions(&self, window: Window, nx: usize, ny: usize) -> Vec<f64> {
        let edges = CellEdges::new(window, nx, ny);
        self.cell_areas(window, nx, ny)
            .into_iter()
            .enumerate()
            .map(|(n, area)| (area / edges.cell_area(n)).clamp(0.0, 1.0))
            .collect()
    }

    /// Whether the region misses `window` entirely: no overlap of positive area (their
    /// bounding boxes apart or touching, or the region's area inside the window at most 1e-12 of
    /// the window's, i.e. rounding).
    pub(crate) fn misses(&self, window: Window) -> bool {
        let b = self.bounding_box();
        if b.x.1 <= window.x.0 || b.x.0 >= window.x.1 || b.y.1 <= window.y.0 || b.y.0 >= window.y.1
        {
            return true;
        }
        let window_area = (window.x.1 - window.x.0) * (window.y.1 - window.y.0);
        self.cell_areas(window, 1, 1)[0] <= 1e-12 * window_area
    }
}
