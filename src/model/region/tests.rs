//! The region against areas worked out by hand, against its own total area for random simple
//! polygons, and against a fine lattice count; containment by hand; every refusal.

use rand::RngExt;

use super::*;
use crate::streams::{Purpose, stream};

fn window(x: (f64, f64), y: (f64, f64)) -> Window {
    Window { x, y }
}

/// The axis-aligned rectangle [x0, x1] x [y0, y1], anticlockwise.
fn rect(x0: f64, x1: f64, y0: f64, y1: f64) -> Vec<Point> {
    vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
}

fn reversed(mut ring: Vec<Point>) -> Vec<Point> {
    ring.reverse();
    ring
}

fn assert_areas(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (n, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-14, "{what}: cell {n}: {g} vs {w}");
    }
}

/// 2 x 2 unit cells over [0, 2]^2; the square [0.5, 1.5]^2 with the hole [0.75, 1.25]^2 puts
/// 0.5 x 0.5 - 0.25 x 0.25 = 0.1875 in each cell.
#[test]
fn a_square_with_a_hole_leaves_each_cell_its_corner_less_the_holes() {
    let unit2 = window((0.0, 2.0), (0.0, 2.0));
    for hole in [
        rect(0.75, 1.25, 0.75, 1.25),
        reversed(rect(0.75, 1.25, 0.75, 1.25)),
    ] {
        let region = Region::new(vec![rect(0.5, 1.5, 0.5, 1.5), hole]).unwrap();
        assert_eq!(region.area(), 0.75);
        assert_areas(&region.cell_areas(unit2, 2, 2), &[0.1875; 4], "square");
        assert_areas(
            &region.inside_fractions(unit2, 2, 2),
            &[0.1875; 4],
            "fractions",
        );
    }
    // Off centre, so that the cells differ: [0.5, 1.75] x [0.25, 1.5] less [0.75, 1.25]^2.
    // (0, 0): 0.5 x 0.75 - 0.0625; (1, 0): 0.75 x 0.75 - 0.0625; (0, 1): 0.5 x 0.5 - 0.0625;
    // (1, 1): 0.75 x 0.5 - 0.0625.
    let region = Region::new(vec![
        rect(0.5, 1.75, 0.25, 1.5),
        rect(0.75, 1.25, 0.75, 1.25),
    ])
    .unwrap();
    assert_areas(
        &region.cell_areas(unit2, 2, 2),
        &[0.3125, 0.5, 0.1875, 0.3125],
        "off centre",
    );
    assert_eq!(region.area(), 1.25 * 1.25 - 0.25);
}

/// The right triangle (0, 0), (3, 0), (0, 1.5) on unit cells over [0, 3] x [0, 2]: its long edge
/// y = 1.5 - x / 2 leaves cell (0, 0) whole, cuts cell (1, 0) into a trapezoid of heights 1 and
/// 0.5 (area 0.75) and cell (2, 0) into a triangle (0.25), and cell (0, 1) into a triangle of
/// height 0.5 (0.25).
#[test]
fn a_diagonal_edge_cuts_cells_into_trapezoids_and_triangles() {
    let w = window((0.0, 3.0), (0.0, 2.0));
    let triangle = vec![(0.0, 0.0), (3.0, 0.0), (0.0, 1.5)];
    for ring in [triangle.clone(), reversed(triangle)] {
        let region = Region::new(vec![ring]).unwrap();
        assert_eq!(region.area(), 2.25);
        assert_areas(
            &region.cell_areas(w, 3, 2),
            &[1.0, 0.75, 0.25, 0.25, 0.0, 0.0],
            "trapezoid",
        );
    }
    // A window that cuts the triangle: only the cells' share of the part inside it counts.
    let region = Region::new(vec![vec![(0.0, 0.0), (3.0, 0.0), (0.0, 1.5)]]).unwrap();
    assert_areas(
        &region.cell_areas(window((1.0, 3.0), (0.0, 1.0)), 2, 1),
        &[0.75, 0.25],
        "cut by the window",
    );
    // x + y <= 1.5 on unit cells over [0, 2]^2: cell (0, 0) loses the corner triangle of legs
    // 0.5 (a pentagon of area 0.875); cells (1, 0) and (0, 1) keep triangles of legs 0.5.
    let region = Region::new(vec![vec![(0.0, 0.0), (1.5, 0.0), (0.0, 1.5)]]).unwrap();
    assert_areas(
        &region.cell_areas(window((0.0, 2.0), (0.0, 2.0)), 2, 2),
        &[0.875, 0.125, 0.125, 0.0],
        "pentagon",
    );
}

/// [0, 4]^2 less the hole [1, 3]^2 plus the island [1.25, 2.5] x [1.5, 2.75] in the hole, on
/// unit cells: the twelve cells of the border ring are whole, the four of the hole hold only the
/// island: [1.25, 2] x [1.5, 2] = 0.375, [2, 2.5] x [1.5, 2] = 0.25, [1.25, 2] x [2, 2.75] =
/// 0.5625, [2, 2.5] x [2, 2.75] = 0.375.
#[test]
fn an_island_in_a_hole_counts_again() {
    let rings = vec![
        rect(0.0, 4.0, 0.0, 4.0),
        reversed(rect(1.0, 3.0, 1.0, 3.0)),
        rect(1.25, 2.5, 1.5, 2.75),
    ];
    let region = Region::new(rings).unwrap();
    assert_eq!(region.area(), 16.0 - 4.0 + 1.5625);
    let mut want = [1.0; 16];
    for (i, j, area) in [(1, 1, 0.375), (2, 1, 0.25), (1, 2, 0.5625), (2, 2, 0.375)] {
        want[j * 4 + i] = area;
    }
    let w = window((0.0, 4.0), (0.0, 4.0));
    assert_areas(&region.cell_areas(w, 4, 4), &want, "island");
    assert_eq!(region.bounding_box(), w);
    // A window larger than the region: cells outside hold nothing, and the sum is the area.
    let wide = region.cell_areas(window((-1.0, 5.0), (-1.0, 5.0)), 6, 6);
    assert_eq!(wide[0], 0.0);
    assert!((wide.iter().sum::<f64>() - region.area()).abs() < 1e-12);
}

#[test]
fn contains_follows_the_even_odd_rule_and_counts_edges_as_inside() {
    let region = Region::new(vec![
        rect(0.0, 4.0, 0.0, 4.0),
        rect(1.0, 3.0, 1.0, 3.0),
        rect(1.25, 2.5, 1.5, 2.75),
    ])
    .unwrap();
    let cases = [
        ((0.5, 0.5), true),    // in the outer ring only
        ((1.1, 1.1), false),   // in the hole
        ((2.0, 2.0), true),    // on the island
        ((2.9, 2.9), false),   // in the hole, beside the island
        ((5.0, 2.0), false),   // outside everything
        ((-0.1, 2.0), false),  // just outside the left edge
        ((0.0, 2.0), true),    // on the outer edge
        ((4.0, 4.0), true),    // on the outer corner
        ((1.0, 2.0), true),    // on the hole's edge
        ((1.25, 2.0), true),   // on the island's edge
        ((3.0, 1.0), true),    // on the hole's corner
        ((2.0, 3.0001), true), // just above the hole
        ((2.0, 2.9999), false),
    ];
    for ((x, y), inside) in cases {
        assert_eq!(region.contains(x, y), inside, "({x}, {y})");
    }
    // A ray through a vertex: the ray from (0, 1) along y = 1 passes the kite's vertex (2, 1);
    // the point is inside.
    let kite = Region::new(vec![vec![(1.0, 0.0), (2.0, 1.0), (1.0, 2.0), (-1.0, 1.0)]]).unwrap();
    assert!(kite.contains(0.0, 1.0));
    assert!(!kite.contains(2.5, 1.0));
    assert!(kite.contains(2.0, 1.0));
}

#[test]
fn rings_that_touch_nest_and_rings_apart_add() {
    // A hole touching its outer ring: its vertex on an edge, along an edge, at a shared corner.
    for hole in [
        vec![(0.0, 1.0), (1.0, 0.5), (1.0, 1.5)],
        rect(0.0, 1.0, 0.5, 1.5),
        vec![(0.0, 0.0), (1.2, 0.5), (0.5, 1.2)],
    ] {
        let region = Region::new(vec![rect(0.0, 2.0, 0.0, 2.0), hole.clone()]).unwrap();
        let hole_area = ring::signed_area(&hole).abs();
        assert_eq!(region.area(), 4.0 - hole_area);
        assert!(!region.contains(0.6, 1.0));
    }
    // A hole's vertex written in decimal on the outer ring's edge (y = 0.1 + (x - 0.1) / 3 at
    // x = 0.4), which binary floating point can only approximate: a touch, not a crossing.
    let outer = vec![(0.1, 0.1), (0.7, 0.3), (0.1, 0.9)];
    let hole = vec![(0.4, 0.2), (0.3, 0.4), (0.2, 0.3)];
    let region = Region::new(vec![outer.clone(), hole.clone()]).unwrap();
    let want = ring::signed_area(&outer).abs() - ring::signed_area(&hole).abs();
    assert!((region.area() - want).abs() < 1e-15);
    // Two squares apart, and two sharing an edge: both count.
    let apart = Region::new(vec![rect(0.0, 1.0, 0.0, 1.0), rect(2.0, 3.0, 0.0, 1.0)]).unwrap();
    assert_eq!(apart.area(), 2.0);
    let side_by_side =
        Region::new(vec![rect(0.0, 1.0, 0.0, 1.0), rect(1.0, 2.0, 0.0, 1.0)]).unwrap();
    assert_eq!(side_by_side.area(), 2.0);
    let w = window((0.0, 2.0), (0.0, 1.0));
    assert_areas(&side_by_side.cell_areas(w, 4, 1), &[0.5; 4], "apart");
    // Repeats: a closing vertex and consecutive duplicates are dropped.
    let repeated = vec![(0.0, 0.0), (1.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)];
    let region = Region::new(vec![repeated]).unwrap();
    assert_eq!(region.rings().next().unwrap().len(), 3);
    assert_eq!(region.area(), 0.5);
}

#[test]
fn each_bad_input_is_refused_with_its_ring_and_place() {
    let square = || rect(0.0, 2.0, 0.0, 2.0);
    let message = |rings: Vec<Vec<Point>>| Region::new(rings).unwrap_err().to_string();
    assert_eq!(message(vec![]), "the region has no ring");
    let error = Region::new(vec![
        square(),
        vec![(0.5, 0.5), (f64::NAN, 1.0), (1.0, 1.0)],
    ])
    .unwrap_err();
    assert_eq!(
        (error.ring(), error.vertex()),
        (Some(1), Some(1)),
        "{error}"
    );
    assert!(error.to_string().starts_with("ring 2, vertex 2: (NaN, 1)"));
    assert!(
        message(vec![vec![(0.0, 0.0), (1.0, f64::INFINITY), (1.0, 1.0)]]).contains("not a point")
    );
    assert_eq!(
        message(vec![vec![(0.0, 0.0), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]]),
        "ring 1 has 2 distinct vertices; a ring needs at least 3"
    );
    assert_eq!(
        message(vec![vec![(0.0, 0.0), (1.0, 1.0)]]),
        "ring 1 has 2 distinct vertices; a ring needs at least 3"
    );
    assert_eq!(
        message(vec![vec![(0.0, 0.0), (1.0, 1.0), (3.0, 3.0), (2.0, 2.0)]]),
        "ring 1 encloses no area: its vertices lie on one line"
    );
    // A bow tie: its edges cross at (1, 1).
    let bow = message(vec![vec![(0.0, 0.0), (2.0, 2.0), (2.0, 0.0), (0.0, 2.0)]]);
    assert!(
        bow.starts_with("ring 1 crosses or touches itself near (1, 1)"),
        "{bow}"
    );
    // A pinch: the ring passes (1, 1) twice without crossing.
    let pinch = vec![
        (0.0, 0.0),
        (1.0, 1.0),
        (2.0, 0.0),
        (2.0, 2.0),
        (1.0, 1.0),
        (0.0, 2.0),
    ];
    assert!(message(vec![pinch]).contains("touches itself near (1, 1)"));
    // A spike folding back along its edge.
    let spike = vec![(0.0, 0.0), (2.0, 0.0), (3.0, 0.0), (2.0, 0.0), (2.0, 2.0)];
    let spike = Region::new(vec![spike]).unwrap_err();
    assert!(
        matches!(spike, RegionError::SelfCrossing { ring: 0, .. }),
        "{spike}"
    );
    // Two squares overlapping: their edges cross at (2, 1) and (1, 2).
    let error = Region::new(vec![square(), rect(1.0, 3.0, 1.0, 3.0)]).unwrap_err();
    assert!(
        matches!(
            error,
            RegionError::Crossing {
                ring: 0,
                other: 1,
                ..
            }
        ),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.starts_with("ring 1 crosses ring 2 near (2, 1)")
            || text.starts_with("ring 1 crosses ring 2 near (1, 2)"),
        "{text}"
    );
    // Crossing only where a vertex lies on the other ring's boundary, no two edges crossing
    // inside both: a diamond with two corners on the square's right edge, half in and half out;
    // a triangle whose edges pass through the square's corners (2, 2) and (2, 0).
    for through in [
        vec![(1.0, 1.0), (2.0, 1.5), (3.0, 1.0), (2.0, 0.5)],
        vec![(1.0, 1.0), (3.0, 3.0), (3.0, -1.0)],
    ] {
        let error = Region::new(vec![square(), through]).unwrap_err();
        assert!(
            matches!(
                error,
                RegionError::Crossing {
                    ring: 0,
                    other: 1,
                    ..
                }
            ),
            "{error}"
        );
    }
    // The same ring twice.
    let error = Region::new(vec![square(), reversed(square())]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "ring 1 and ring 2 have the same boundary: under the even-odd rule they cancel, so leave \
         both out"
    );
}

/// A star-shaped polygon about `centre`: `count` vertices at sorted random angles, at random
/// radii in [0.3, 1] x `radius`. Star-shaped from the centre with increasing angles, it is
/// simple.
fn star(seed: u64, centre: Point, radius: f64, count: usize) -> Vec<Point> {
    let mut rng = stream(seed, Purpose::Truth, "region star polygon");
    let mut angles: Vec<f64> = (0..count)
        .map(|_| rng.random::<f64>() * std::f64::consts::TAU)
        .collect();
    angles.sort_by(f64::total_cmp);
    angles
        .into_iter()
        .map(|a| {
            let r = radius * (0.3 + 0.7 * rng.random::<f64>());
            (centre.0 + r * a.cos(), centre.1 + r * a.sin())
        })
        .collect()
}

/// Inside the window, the cells' areas add up to the region's area, to 1e-12 relative, for
/// star-shaped rings (with a star-shaped hole) over several seeds, grids and windows away from
/// the origin.
#[test]
fn cell_areas_add_up_to_the_area_for_random_simple_polygons() {
    for seed in 0..12 {
        let centre = (350.0 + seed as f64, 410.0 - seed as f64);
        let outer = star(seed, centre, 10.0, 50 + 40 * seed as usize);
        let hole = star(seed + 100, centre, 2.9, 30);
        let w = window(
            (centre.0 - 10.5, centre.0 + 10.25),
            (centre.1 - 10.1, centre.1 + 11.0),
        );
        for rings in [vec![outer.clone()], vec![outer.clone(), hole]] {
            let region = Region::new(rings).unwrap();
            for (nx, ny) in [(1, 1), (7, 5), (64, 64), (37, 101)] {
                let total: f64 = region.cell_areas(w, nx, ny).iter().sum();
                let relative = (total - region.area()).abs() / region.area();
                assert!(relative < 1e-12, "seed {seed}, {nx} x {ny}: {relative:e}");
            }
        }
    }
}

/// The length of the segment a - b inside the rectangle [x0, x1] x [y0, y1] (Liang-Barsky), in
/// the L1 norm.
fn l1_inside(a: Point, b: Point, (x0, x1, y0, y1): (f64, f64, f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for (p, q) in [
        (-dx, a.0 - x0),
        (dx, x1 - a.0),
        (-dy, a.1 - y0),
        (dy, y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return 0.0;
            }
        } else if p < 0.0 {
            lo = lo.max(q / p);
        } else {
            hi = hi.min(q / p);
        }
    }
    (hi - lo).max(0.0) * (dx.abs() + dy.abs())
}

/// Against a 2000 x 2000 lattice of cell-square centres over a 4 x 4 grid (500 x 500 points a
/// cell), each counted in or out with `contains`: a lattice square whose centre is on the wrong
/// side is one the boundary passes through, and a boundary piece of L1 length l passes through
/// at most l / h + 3 squares of side h, so |lattice - exact| <= h^2 (L1 length of the boundary in
/// the cell / h + 3 x the edges reaching it) in each cell.
#[test]
fn cell_areas_agree_with_a_fine_lattice_count() {
    let (side, lattice) = (4, 2000);
    let w = window((0.0, 1.0), (0.0, 1.0));
    let h = 1.0 / lattice as f64;
    for seed in [3, 4] {
        let rings = vec![
            star(seed, (0.5, 0.5), 0.45, 25),
            star(seed + 50, (0.52, 0.48), 0.12, 9),
        ];
        let region = Region::new(rings.clone()).unwrap();
        let exact = region.cell_areas(w, side, side);
        let mut counted = vec![0.0; side * side];
        let per_cell = lattice / side;
        for b in 0..lattice {
            for a in 0..lattice {
                let (x, y) = ((a as f64 + 0.5) * h, (b as f64 + 0.5) * h);
                if region.contains(x, y) {
                    counted[(b / per_cell) * side + a / per_cell] += h * h;
                }
            }
        }
        for n in 0..side * side {
            let (i, j) = ((n % side) as f64, (n / side) as f64);
            let cell = (i / 4.0, (i + 1.0) / 4.0, j / 4.0, (j + 1.0) / 4.0);
            let (mut length, mut pieces) = (0.0, 0.0);
            for ring in &rings {
                for k in 0..ring.len() {
                    let l = l1_inside(ring[k], ring[(k + 1) % ring.len()], cell);
                    if l > 0.0 {
                        length += l;
                        pieces += 1.0;
                    }
                }
            }
            let bound = h * h * (length / h + 3.0 * pieces) + 1e-12;
            let error = (counted[n] - exact[n]).abs();
            assert!(
                error <= bound,
                "seed {seed}, cell {n}: lattice {} vs exact {} (bound {bound:e})",
                counted[n],
                exact[n]
            );
            if pieces == 0.0 {
                // No boundary in the cell: whole or empty, both ways.
                assert!(exact[n] == 0.0 || exact[n] == 1.0 / 16.0, "cell {n}");
            }
        }
    }
}

#[test]
fn misses_only_a_window_with_no_overlap_of_positive_area() {
    let region = Region::new(vec![vec![(0.0, 0.0), (2.0, 0.0), (0.0, 2.0)]]).unwrap();
    assert!(region.misses(window((3.0, 4.0), (0.0, 1.0))));
    // Its bounding box reaches the window, the triangle does not.
    assert!(region.misses(window((1.5, 2.0), (1.5, 2.0))));
    // Touching the window at an edge only.
    assert!(region.misses(window((2.0, 3.0), (0.0, 1.0))));
    assert!(!region.misses(window((0.9, 1.5), (0.9, 1.5))));
    assert!(!region.misses(window((-5.0, 5.0), (-5.0, 5.0))));
}

/// The cost the module doc quotes: rings of 5,000 vertices over a 256 x 256 grid, one smooth (a
/// wavy circle, like a real boundary) and one jagged (the random star: every edge long, crossing
/// many grid lines).
/// `cargo test --release --lib region::tests::cost -- --ignored --nocapture`
#[test]
#[ignore = "a timing, not a check: run by hand to renew the module doc's numbers"]
fn cost_of_a_5000_vertex_ring_on_a_256_grid() {
    let wavy: Vec<Point> = (0..5000)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / 5000.0;
            let r = 0.45 + 0.03 * (12.0 * a).sin();
            (0.5 + r * a.cos(), 0.5 + r * a.sin())
        })
        .collect();
    for (name, ring) in [("smooth", wavy), ("jagged", star(7, (0.5, 0.5), 0.5, 5000))] {
        let started = std::time::Instant::now();
        let region = Region::new(vec![ring]).unwrap();
        let built = started.elapsed();
        let w = window((0.0, 1.0), (0.0, 1.0));
        let started = std::time::Instant::now();
        let areas = region.cell_areas(w, 256, 256);
        let clipped = started.elapsed();
        let relative = (areas.iter().sum::<f64>() - region.area()).abs() / region.area();
        println!(
            "{name}: new {built:?}, cell_areas {clipped:?}, sum's relative error {relative:e}"
        );
        assert!(relative < 1e-12);
    }
}
