//! How the rings of a region sit with respect to each other: every ring simple, no two rings
//! crossing, and each ring's depth (the number of other rings that contain it), which gives its
//! sign under the even-odd rule.
//!
//! 1. Every pair of edges whose bounding boxes overlap is found by a sweep over the edges sorted
//!    by their least x. Two edges of one ring that are not neighbours must not meet at all, and
//!    neighbours must not fold back along each other ([`RegionError::SelfCrossing`]). Edges of
//!    two rings that cross at a point inside both are a crossing ([`RegionError::Crossing`]);
//!    edges that only touch (a vertex on the other edge, or a shared stretch) are contacts.
//! 2. For each pair of rings A, B whose bounding boxes overlap, B's boundary is cut at its
//!    contacts with A; between two contacts it is wholly inside A or wholly outside (or along
//!    A's boundary), so one point of each piece next to a contact (one point of B when there is
//!    no contact) tells which. B's boundary strictly inside A somewhere and strictly outside
//!    elsewhere means the rings cross; inside somewhere means B lies in A; nowhere strictly
//!    inside or outside means the same boundary twice ([`RegionError::SameBoundary`]).
//!
//! Rings that do not cross form a tree under containment, so the rings containing a point are a
//! chain and the even-odd rule is the signed sum over rings, the sign of a ring (-1)^depth.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::error::{Point, RegionError};
use super::ring::{Location, Ring, Side, TOLERANCE, magnitude, on_segment, side};

/// Each ring's depth: how many other rings contain it. Refuses rings that cross or touch
/// themselves, rings that cross each other and rings with the same boundary.
pub(super) fn depths(rings: &[Ring]) -> Result<Vec<usize>, RegionError> {
    for (index, ring) in rings.iter().enumerate() {
        folds(index, ring)?;
    }
    let contacts = meetings(rings)?;
    let mut depth = vec![0; rings.len()];
    for (a, b) in overlapping_pairs(rings) {
        for (inner, outer) in [(a, b), (b, a)] {
            if lies_in(rings, inner, outer, &contacts)? {
                depth[inner] += 1;
            }
        }
    }
    Ok(depth)
}

/// A vertex where the ring folds back along its previous edge (a spike of zero width).
fn folds(index: usize, ring: &Ring) -> Result<(), RegionError> {
    let n = ring.len();
    for k in 0..n {
        let (prev, here, next) = (
            ring.points[(k + n - 1) % n],
            ring.points[k],
            ring.points[(k + 1) % n],
        );
        let back = (prev.0 - here.0) * (next.0 - here.0) + (prev.1 - here.1) * (next.1 - here.1);
        if side(prev, here, next) == Side::On && back > 0.0 {
            return Err(RegionError::SelfCrossing {
                ring: index,
                vertex: ring.input[k],
                near: here,
            });
        }
    }
    Ok(())
}

/// One edge in the sweep.
struct Edge {
    ring: usize,
    k: usize,
    a: Point,
    b: Point,
    x: (f64, f64),
    y: (f64, f64),
}

/// Where ring `.0`'s boundary meets ring `.1`'s: points on `.0`'s edges, each (edge, t) with t
/// from 0 (the edge's first vertex) to 1 (its last).
type Contacts = HashMap<(usize, usize), Vec<(usize, f64)>>;

/// Every meeting of two edges: an error for a ring meeting itself or two rings crossing, else
/// the contacts of each ordered pair of rings.
fn meetings(rings: &[Ring]) -> Result<Contacts, RegionError> {
    let mut edges: Vec<Edge> = Vec::new();
    for (index, ring) in rings.iter().enumerate() {
        for k in 0..ring.len() {
            let (a, b) = ring.edge(k);
            edges.push(Edge {
                ring: index,
                k,
                a,
                b,
                x: (a.0.min(b.0), a.0.max(b.0)),
                y: (a.1.min(b.1), a.1.max(b.1)),
            });
        }
    }
    edges.sort_by(|e, f| e.x.0.total_cmp(&f.x.0));
    let all: Vec<Point> = rings
        .iter()
        .flat_map(|r| r.points.iter().copied())
        .collect();
    let slack = TOLERANCE * magnitude(&all);
    let mut contacts = Contacts::new();
    for (i, e) in edges.iter().enumerate() {
        for f in &edges[i + 1..] {
            if f.x.0 > e.x.1 + slack {
                break;
            }
            if f.y.0 > e.y.1 + slack || f.y.1 < e.y.0 - slack {
                continue;
            }
            let same = e.ring == f.ring;
            let n = rings[e.ring].len();
            if same && ((e.k + 1) % n == f.k || (f.k + 1) % n == e.k) {
                continue;
            }
            // Name the pair in input order: ring < other, and the vertex on `ring`'s edge.
            let (first, second) = if (f.ring, f.k) < (e.ring, e.k) {
                (f, e)
            } else {
                (e, f)
            };
            let vertex = rings[first.ring].input[first.k];
            match meet(first, second) {
                Meet::Apart => {}
                Meet::Cross(near) if same => {
                    return Err(RegionError::SelfCrossing {
                        ring: first.ring,
                        vertex,
                        near,
                    });
                }
                Meet::Touch(touches) if same => {
                    return Err(RegionError::SelfCrossing {
                        ring: first.ring,
                        vertex,
                        near: touches[0].2,
                    });
                }
                Meet::Cross(near) => {
                    return Err(RegionError::Crossing {
                        ring: first.ring,
                        other: second.ring,
                        vertex,
                        near,
                    });
                }
                Meet::Touch(touches) => {
                    for (on_first, t, _) in touches {
                        let (owner, other) = if on_first {
                            (first, second)
                        } else {
                            (second, first)
                        };
                        contacts
                            .entry((owner.ring, other.ring))
                            .or_default()
                            .push((owner.k, t));
                    }
                }
            }
        }
    }
    Ok(contacts)
}

/// How two edges meet.
enum Meet {
    Apart,
    /// They cross at a point inside both.
    Cross(Point),
    /// They touch: the points where they do, each (on the first edge?, its parameter t along
    /// that edge, the point).
    Touch(Vec<(bool, f64, Point)>),
}

/// How edges e (a -> b) and f (c -> d) meet.
fn meet(e: &Edge, f: &Edge) -> Meet {
    let (a, b, c, d) = (e.a, e.b, f.a, f.b);
    let (sc, sd) = (side(a, b, c), side(a, b, d));
    let (sa, sb) = (side(c, d, a), side(c, d, b));
    let opposite = |s: Side, t: Side| {
        matches!(
            (s, t),
            (Side::Left, Side::Right) | (Side::Right, Side::Left)
        )
    };
    if opposite(sc, sd) && opposite(sa, sb) {
        let t = crossing_parameter(a, b, c, d);
        return Meet::Cross(lerp(a, b, t));
    }
    let mut touches = Vec::new();
    for (p, t_own, on_first, start, end) in [
        (c, 0.0, false, a, b),
        (d, 1.0, false, a, b),
        (a, 0.0, true, c, d),
        (b, 1.0, true, c, d),
    ] {
        if on_segment(start, end, p) {
            // p is a vertex of its own edge (at t_own) and lies on the other edge.
            touches.push((!on_first, parameter(start, end, p), p));
            touches.push((on_first, t_own, p));
        }
    }
    if touches.is_empty() {
        Meet::Apart
    } else {
        Meet::Touch(touches)
    }
}

/// The parameter t along a -> b of the crossing with c -> d (the edges cross properly).
fn crossing_parameter(a: Point, b: Point, c: Point, d: Point) -> f64 {
    let (ux, uy) = (b.0 - a.0, b.1 - a.1);
    let (vx, vy) = (d.0 - c.0, d.1 - c.1);
    let (wx, wy) = (c.0 - a.0, c.1 - a.1);
    ((wx * vy - wy * vx) / (ux * vy - uy * vx)).clamp(0.0, 1.0)
}

/// The parameter along a -> b of p's projection, in [0, 1].
fn parameter(a: Point, b: Point, p: Point) -> f64 {
    let (ux, uy) = (b.0 - a.0, b.1 - a.1);
    let t = ((p.0 - a.0) * ux + (p.1 - a.1) * uy) / (ux * ux + uy * uy);
    t.clamp(0.0, 1.0)
}

/// The point at parameter t along a -> b.
fn lerp(a: Point, b: Point, t: f64) -> Point {
    (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
}

/// The pairs of rings whose bounding boxes overlap (touching counts), each once.
fn overlapping_pairs(rings: &[Ring]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..rings.len()).collect();
    order.sort_by(|&p, &q| rings[p].bbox.x.0.total_cmp(&rings[q].bbox.x.0));
    let mut pairs = Vec::new();
    for (i, &p) in order.iter().enumerate() {
        let bp = rings[p].bbox;
        let slack = TOLERANCE * magnitude(&[(bp.x.0, bp.y.0), (bp.x.1, bp.y.1)]);
        for &q in &order[i + 1..] {
            let bq = rings[q].bbox;
            if bq.x.0 > bp.x.1 + slack {
                break;
            }
            if bq.y.0 <= bp.y.1 + slack && bq.y.1 >= bp.y.0 - slack {
                pairs.push((p.min(q), p.max(q)));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// Whether ring `inner` lies in ring `outer` (an error when they cross or coincide).
fn lies_in(
    rings: &[Ring],
    inner: usize,
    outer: usize,
    contacts: &Contacts,
) -> Result<bool, RegionError> {
    let (ring, around) = (&rings[inner], &rings[outer]);
    let cuts = contacts.get(&(inner, outer));
    let boxed = |r: &Ring, o: &Ring| {
        r.bbox.x.0 >= o.bbox.x.0
            && r.bbox.x.1 <= o.bbox.x.1
            && r.bbox.y.0 >= o.bbox.y.0
            && r.bbox.y.1 <= o.bbox.y.1
    };
    if cuts.is_none() && !boxed(ring, around) {
        // No contact: wholly inside or wholly outside, and not inside if its box sticks out.
        return Ok(false);
    }
    // The pieces of the boundary to look at: on every edge with a cut and its neighbours (a
    // cut at a vertex ends the previous edge's last piece), or edge 0 when nothing cuts it.
    let n = ring.len();
    let mut by_edge: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for &(k, t) in cuts.into_iter().flatten() {
        by_edge.entry(k).or_default().push(t);
    }
    let mut edges: BTreeSet<usize> = BTreeSet::new();
    for &k in by_edge.keys() {
        edges.extend([(k + n - 1) % n, k, (k + 1) % n]);
    }
    if edges.is_empty() {
        edges.insert(0);
    }
    let (mut inside, mut outside) = (false, false);
    for k in edges {
        let (a, b) = ring.edge(k);
        let mut ts = by_edge.get(&k).cloned().unwrap_or_default();
        ts.extend([0.0, 1.0]);
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        for w in ts.windows(2) {
            if w[1] > w[0] {
                match around.locate(lerp(a, b, (w[0] + w[1]) / 2.0)) {
                    Location::Inside => inside = true,
                    Location::Outside => outside = true,
                    Location::Boundary => {}
                }
            }
        }
    }
    let (ring_first, other) = (inner.min(outer), inner.max(outer));
    if inside && outside {
        // Name the first contact on the lower ring's boundary (one exists: without contacts
        // the boundary is wholly inside or outside).
        let (k, t) = contacts
            .get(&(ring_first, other))
            .and_then(|cuts| cuts.first().copied())
            .unwrap_or((0, 0.0));
        let first = &rings[ring_first];
        let (a, b) = first.edge(k);
        return Err(RegionError::Crossing {
            ring: ring_first,
            other,
            vertex: first.input[k],
            near: lerp(a, b, t),
        });
    }
    if !inside && !outside {
        return Err(RegionError::SameBoundary {
            ring: ring_first,
            other,
        });
    }
    Ok(inside)
}
