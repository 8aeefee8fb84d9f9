use super::kriging::{self, Problem};
use super::*;
use crate::model::grid::Window;
use crate::model::prior::prior_for;
use crate::model::spec::KernelSpec;

/// `count` x `count` points over the window, edges and corners included.
fn lattice(w: &Window, count: usize) -> Vec<(f64, f64)> {
    let at = |(lo, hi): (f64, f64), k: usize| lo + (hi - lo) * k as f64 / (count - 1) as f64;
    (0..count * count)
        .map(|k| (at(w.x, k % count), at(w.y, k / count)))
        .collect()
}

fn window(x: (f64, f64), y: (f64, f64)) -> Window {
    Window { x, y }
}

/// Bilinear interpolation extended over the border half-cells reproduces a + b x + c y + d x y
/// exactly everywhere in the window, its corners and edges included (so every row's weights sum
/// to 1).
#[test]
fn reproduces_bilinear_functions_exactly_to_the_window_edges() {
    let w = window((1.0, 4.0), (-2.0, 3.0));
    let grid = Grid::over_window(5, 7, w);
    let f = |x: f64, y: f64| 0.7 - 1.3 * x + 2.1 * y + 0.4 * x * y;
    let mut sites = scattered(60, &w, 0);
    sites.extend([
        (1.0, -2.0),
        (4.0, 3.0),
        (1.0, 3.0),
        (4.0, -2.0),
        (2.5, -2.0),
        (1.0, 0.1),
    ]);
    let operator = SiteOperator::bilinear(&grid, &sites).unwrap();
    let field: Vec<f64> = (0..grid.cells())
        .map(|n| {
            let (x, y) = grid.position(n);
            f(x, y)
        })
        .collect();
    let mut at = vec![0.0; sites.len()];
    operator.gather(&field, &mut at);
    for (&(x, y), &value) in sites.iter().zip(&at) {
        assert!(
            (value - f(x, y)).abs() < 1e-12,
            "({x}, {y}): {value} against {}",
            f(x, y)
        );
    }
    // A site exactly on a centre reads that cell alone.
    let centre = grid.position(grid.index(2, 3));
    let one = SiteOperator::bilinear(&grid, &[centre]).unwrap();
    let row = one.rows()[0];
    let weight_on = |cell: usize| {
        row.iter()
            .filter(|(c, _)| *c == cell)
            .map(|(_, w)| w)
            .sum::<f64>()
    };
    assert!((weight_on(grid.index(2, 3)) - 1.0).abs() < 1e-12, "{row:?}");
}

/// <H u, v> = <u, H^T v> for arbitrary u and v: scatter_add is gather's transpose.
#[test]
fn scatter_add_is_the_transpose_of_gather() {
    let w = window((0.0, 2.0), (0.0, 1.0));
    let grid = Grid::over_window(6, 4, w);
    let sites = scattered(17, &w, 5);
    let operator = SiteOperator::bilinear(&grid, &sites).unwrap();
    let u: Vec<f64> = (0..grid.cells())
        .map(|k| ((k * 7) % 11) as f64 - 5.0)
        .collect();
    let v: Vec<f64> = (0..sites.len())
        .map(|k| ((k * 5) % 7) as f64 - 3.0)
        .collect();
    let mut hu = vec![0.0; sites.len()];
    operator.gather(&u, &mut hu);
    let mut htv = vec![0.0; grid.cells()];
    operator.scatter_add(&v, &mut htv);
    let left: f64 = hu.iter().zip(&v).map(|(a, b)| a * b).sum();
    let right: f64 = u.iter().zip(&htv).map(|(a, b)| a * b).sum();
    assert!((left - right).abs() < 1e-10 * left.abs().max(1.0));
}

#[test]
fn refuses_sites_outside_the_window_and_grids_without_two_centres_an_axis() {
    let w = window((0.0, 1.0), (0.0, 1.0));
    let grid = Grid::over_window(4, 4, w);
    let error = SiteOperator::bilinear(&grid, &[(0.5, 0.5), (1.0 + 1e-6, 0.2)]).unwrap_err();
    assert!(
        matches!(error, SiteError::OutsideWindow { site: 1, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("[0, 1] x [0, 1]"), "{error}");
    let line = Grid::over_window(4, 1, w);
    assert!(matches!(
        SiteOperator::bilinear(&line, &[(0.5, 0.5)]),
        Err(SiteError::GridTooSmall { nx: 4, ny: 1 })
    ));
}

/// One kriging problem through the grid at several sizes: the grid's error in exact sds.
fn errors_on_grids(
    w: Window,
    kernel: KernelSpec,
    problem: &Problem<'_>,
    sides: &[usize],
) -> Vec<kriging::KrigingError> {
    let exact = kriging::exact(kernel, problem).expect("exact kriging");
    sides
        .iter()
        .map(|&d| {
            let grid = Grid::over_window(d, d, w);
            let prior = prior_for(grid, kernel).unwrap();
            let on_grid = kriging::on_grid(&grid, prior.as_ref(), problem)
                .unwrap()
                .expect("grid kriging");
            kriging::error(&on_grid, &exact)
        })
        .collect()
}

/// Simulated sites: at the recommended grid size the grid's posterior mean at 120 new sites and
/// a 41 x 41 lattice over the window is within 0.1 exact posterior sds of exact kriging and its
/// sd within 10 %; the error falls at least threefold with each doubling of D (second order:
/// fourfold).
#[test]
fn kriging_through_the_grid_matches_exact_kriging_on_simulated_sites() {
    let w = window((0.0, 10.0), (0.0, 8.0));
    let kernel = KernelSpec::squared_exponential(2.5, 1.7);
    let fitted = scattered(150, &w, 0);
    let values: Vec<f64> = fitted
        .iter()
        .map(|&(x, y)| 0.3 + (0.6 * x).sin() * (0.4 * y).cos())
        .collect();
    let mut predict = scattered(120, &w, 500);
    predict.extend(lattice(&w, 41));
    let problem = Problem {
        fitted: &fitted,
        values: &values,
        noise_sd: 0.2,
        mean: 0.3,
        predict: &predict,
    };
    let side = recommended_side(10.0, 2.5);
    let errors = errors_on_grids(w, kernel, &problem, &[side]);
    assert!(
        errors[0].max_mean_error_in_sds < 0.1,
        "D = {side}: {errors:?}"
    );
    assert!(
        errors[0].max_sd_relative_error < 0.1,
        "D = {side}: {errors:?}"
    );
    let errors = errors_on_grids(w, kernel, &problem, &[8, 16, 32]);
    for pair in errors.windows(2) {
        assert!(
            pair[1].max_mean_error_in_sds * 3.0 < pair[0].max_mean_error_in_sds,
            "{errors:?}"
        );
    }
}

/// The topo elevations (data/topo_sites.csv, 52 sites, units of 50 ft): ten sites held out and a
/// 41 x 41 lattice over the window predicted from the other 42, at the length scale 1.5 (units of
/// 50 ft), variance 3,000 ft^2 and noise sd 10 ft; the recommended grid is within 0.1 exact sds
/// and 10 % of exact kriging.
#[test]
fn kriging_through_the_grid_matches_exact_kriging_on_topo() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/topo_sites.csv"),
    )
    .unwrap();
    let rows: Vec<[f64; 3]> = text
        .lines()
        .skip(1)
        .map(|line| {
            let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    assert_eq!(rows.len(), 52);
    let held = |k: usize| k % 5 == 2;
    let (mut fitted, mut values, mut predict) = (Vec::new(), Vec::new(), Vec::new());
    for (k, r) in rows.iter().enumerate() {
        if held(k) {
            predict.push((r[0], r[1]));
        } else {
            fitted.push((r[0], r[1]));
            values.push(r[2]);
        }
    }
    let w = window((0.0, 6.3), (0.0, 6.2));
    predict.extend(lattice(&w, 41));
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let problem = Problem {
        fitted: &fitted,
        values: &values,
        noise_sd: 10.0,
        mean,
        predict: &predict,
    };
    let kernel = KernelSpec::squared_exponential(1.5, 3000.0);
    let side = recommended_side(6.3, 1.5);
    let errors = errors_on_grids(w, kernel, &problem, &[side]);
    assert!(
        errors[0].max_mean_error_in_sds < 0.1,
        "D = {side}: {errors:?}"
    );
    assert!(
        errors[0].max_sd_relative_error < 0.1,
        "D = {side}: {errors:?}"
    );
}
