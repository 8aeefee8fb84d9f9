//! Why rings cannot make a region: the typed error of [`super::Region::new`], each naming the
//! ring (by its place in the input, from 0) and, where one spot is to blame, the input vertex
//! and roughly where it is, so that a reader can point at a file's line.

use std::fmt;

/// A point (x, y).
pub(crate) type Point = (f64, f64);

/// Rings that cannot make a region. `ring` and `other` are places in the input (0-based);
/// `vertex` is the input index of the vertex that starts the edge to blame (0-based).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RegionError {
    /// No ring at all.
    NoRings,
    /// A coordinate that is NaN or infinite.
    NotFinite {
        ring: usize,
        vertex: usize,
        point: Point,
    },
    /// Fewer than 3 distinct vertices.
    TooFewVertices { ring: usize, distinct: usize },
    /// The vertices lie on one line (the ring encloses no area).
    ZeroArea { ring: usize },
    /// Two edges of one ring that are not neighbours meet (cross or touch), or neighbours fold
    /// back along each other.
    SelfCrossing {
        ring: usize,
        vertex: usize,
        near: Point,
    },
    /// Two rings cross: each has points strictly inside and strictly outside the other.
    Crossing {
        ring: usize,
        other: usize,
        vertex: usize,
        near: Point,
    },
    /// Two rings have the same boundary (they would cancel under the even-odd rule).
    SameBoundary { ring: usize, other: usize },
}

impl RegionError {
    /// The ring to blame first, if one is.
    pub(crate) fn ring(&self) -> Option<usize> {
        match *self {
            RegionError::NoRings => None,
            RegionError::NotFinite { ring, .. }
            | RegionError::TooFewVertices { ring, .. }
            | RegionError::ZeroArea { ring }
            | RegionError::SelfCrossing { ring, .. }
            | RegionError::Crossing { ring, .. }
            | RegionError::SameBoundary { ring, .. } => Some(ring),
        }
    }

    /// The input vertex of [`Self::ring`] to blame, if one is.
    pub(crate) fn vertex(&self) -> Option<usize> {
        match *self {
            RegionError::NotFinite { vertex, .. }
            | RegionError::SelfCrossing { vertex, .. }
            | RegionError::Crossing { vertex, .. } => Some(vertex),
            _ => None,
        }
    }

    /// The message, with each ring called what `name` says (e.g. "ring 3" for the ring at
    /// place 2 of the input, or a file's ring id).
    pub(crate) fn describe(&self, name: &dyn Fn(usize) -> String) -> String {
        match *self {
            RegionError::NoRings => "the region has no ring".to_string(),
            RegionError::NotFinite {
                ring,
                vertex,
                point: (x, y),
            } => format!(
                "{}, vertex {}: ({x}, {y}) is not a point with finite coordinates",
                name(ring),
                vertex + 1
            ),
            RegionError::TooFewVertices { ring, distinct } => format!(
                "{} has {distinct} distinct vertices; a ring needs at least 3",
                name(ring)
            ),
            RegionError::ZeroArea { ring } => format!(
                "{} encloses no area: its vertices lie on one line",
                name(ring)
            ),
            RegionError::SelfCrossing { ring, near, .. } => format!(
                "{} crosses or touches itself near {}: a ring must be a simple polygon (write a \
                 figure of eight, or two lobes that touch, as two rings)",
                name(ring),
                approx(near)
            ),
            RegionError::Crossing {
                ring, other, near, ..
            } => format!(
                "{} crosses {} near {}: rings may nest (a hole, an island in a hole), lie apart \
                 or touch, but not cross",
                name(ring),
                name(other),
                approx(near)
            ),
            RegionError::SameBoundary { ring, other } => format!(
                "{} and {} have the same boundary: under the even-odd rule they cancel, so leave \
                 both out",
                name(ring),
                name(other)
            ),
        }
    }
}

impl fmt::Display for RegionError {
    /// Rings are named by their place in the input from 1: "ring 1" is the first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&|ring| format!("ring {}", ring + 1)))
    }
}

impl std::error::Error for RegionError {}

/// "(354.6, 413.62)": a point to about 7 significant digits, for "near" in messages.
fn approx((x, y): Point) -> String {
    let short = |v: f64| {
        let digits = if v == 0.0 {
            0
        } else {
            (6 - v.abs().log10().floor() as i32).clamp(0, 17) as usize
        };
        let text = format!("{v:.digits$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    };
    format!("({}, {})", short(x), short(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_points_are_shown_to_about_seven_digits() {
        assert_eq!(approx((354.59999999999997, 413.6)), "(354.6, 413.6)");
        assert_eq!(approx((0.0, -0.012345678)), "(0, -0.01234568)");
        assert_eq!(approx((412_345.678, 1.0)), "(412345.7, 1)");
    }
}
