//! Every kernel on 1-D, square and rectangular grids against its dense kernel matrix, through
//! the prior actually built for it ([`prior_for`]) and through the circulant embedding directly
//! (also on grids where the Kronecker form would be chosen), and the covariance of prior draws
//! against the kernel within Monte Carlo error.

use faer::Mat;
use rand_distr::{Distribution, StandardNormal};

use super::*;
use crate::diagnostics::calibration::chi_square_survival;
use crate::model::grid::Window;
use crate::model::spec::KernelKind;
use crate::streams::{Purpose, stream};

/// Small grids of every shape: 1-D, square, rectangular with square cells, and a window whose
/// cells are not square (like the chicago grid's).
fn grids() -> Vec<Grid> {
    vec![
        Grid::line(13),
        Grid::new(7),
        Grid::rectangular(9, 5),
        Grid::over_window(
            8,
            5,
            Window {
                x: (0.0, 1.0),
                y: (0.2, 0.9),
            },
        ),
    ]
}

/// The priors that hold `kernel` on `grid`: the one [`prior_for`] chooses, and the circulant
/// embedding whenever it is not already that one.
fn priors(grid: Grid, kernel: KernelSpec) -> Vec<(&'static str, Box<dyn Prior>)> {
    let mut out = vec![("chosen", prior_for(grid, kernel).unwrap())];
    if out[0].1.embedding().is_none() {
        let circulant: Box<dyn Prior> = Box::new(CirculantPrior::new(grid, kernel).unwrap());
        out.push(("circulant", circulant));
    }
    out
}

/// Column k of L: L e_k.
fn square_root_matrix(prior: &dyn Prior) -> Mat<f64> {
    let (n, p) = (prior.cells(), prior.latent_dim());
    let mut l = Mat::<f64>::zeros(n, p);
    let (mut e, mut column) = (vec![0.0; p], vec![0.0; n]);
    let mut scratch = vec![0.0; prior.scratch_len()];
    for k in 0..p {
        e.fill(0.0);
        e[k] = 1.0;
        prior.apply_sqrt(&e, &mut column, &mut scratch);
        for r in 0..n {
            l[(r, k)] = column[r];
        }
    }
    l
}

fn test_vector(len: usize, salt: usize) -> Vec<f64> {
    (0..len)
        .map(|k| (((k + salt) * 7919 % 29) as f64 - 14.0) / 9.0)
        .collect()
}

/// For each kernel, grid and length scale: the structured covariance product C x, the square
/// root (L L^T), the entries C_ab and the adjoint L^T all agree with the dense kernel matrix to
/// 1e-10 relative to its largest entry (the variance).
#[test]
fn every_kernel_on_every_grid_matches_its_dense_kernel_matrix() {
    for family in KernelKind::ALL.iter().copied() {
        for grid in grids() {
            for length_scale in [0.15, 0.4] {
                let kernel = KernelSpec {
                    kind: family,
                    length_scale,
                    variance: 1.7,
                    length_scale_y: None,
                };
                let dense = dense_kernel_matrix(grid, kernel);
                let scale = dense.norm_max();
                for (which, prior) in priors(grid, kernel) {
                    let case = format!("{family} l={length_scale} on {grid} ({which})");
                    assert_eq!(prior.jitter(), 0.0, "{case}: no jitter expected");
                    let n = grid.cells();
                    // C x
                    let x = test_vector(n, 3);
                    let mut cx = vec![0.0; n];
                    prior.apply_covariance(&x, &mut cx);
                    for r in 0..n {
                        let expected: f64 = (0..n).map(|k| dense[(r, k)] * x[k]).sum();
                        let err = (cx[r] - expected).abs() / (scale * n as f64);
                        assert!(err < 1e-10, "{case}: C x at {r}: {err:e}");
                    }
                    // C x for three fields at once: each field's own product, to rounding
                    let batch: Vec<f64> = (0..3).flat_map(|k| test_vector(n, 3 + k)).collect();
                    let mut batched = vec![0.0; 3 * n];
                    prior.apply_covariance_batch(&batch, &mut batched, 3);
                    for (field, product) in batch.chunks_exact(n).zip(batched.chunks_exact(n)) {
                        prior.apply_covariance(field, &mut cx);
                        for (r, (&one, &many)) in cx.iter().zip(product).enumerate() {
                            let err = (one - many).abs() / (scale * n as f64);
                            assert!(err < 1e-14, "{case}: batched C x at {r}: {err:e}");
                        }
                    }
                    // L L^T and C_ab
                    let l = square_root_matrix(prior.as_ref());
                    let llt = &l * l.transpose();
                    for a in 0..n {
                        for b in 0..n {
                            let e1 = (llt[(a, b)] - dense[(a, b)]).abs() / scale;
                            let e2 = (prior.covariance(a, b) - dense[(a, b)]).abs() / scale;
                            assert!(e1 < 1e-10, "{case}: (L L^T)[{a},{b}] off by {e1:e}");
                            assert!(e2 < 1e-10, "{case}: C[{a},{b}] off by {e2:e}");
                        }
                    }
                    // <L xi, v> = <xi, L^T v>
                    let p = prior.latent_dim();
                    let (xi, v) = (test_vector(p, 5), test_vector(n, 11));
                    let (mut lxi, mut ltv) = (vec![0.0; n], vec![0.0; p]);
                    let mut scratch = vec![0.0; prior.scratch_len()];
                    prior.apply_sqrt(&xi, &mut lxi, &mut scratch);
                    prior.apply_sqrt_transpose(&v, &mut ltv, &mut scratch);
                    let left: f64 = lxi.iter().zip(&v).map(|(a, b)| a * b).sum();
                    let right: f64 = xi.iter().zip(&ltv).map(|(a, b)| a * b).sum();
                    assert!(
                        (left - right).abs() < 1e-12 * left.abs().max(1.0),
                        "{case}: <L xi, v> = {left}, <xi, L^T v> = {right}"
                    );
                }
            }
        }
    }
}

/// The exponential and Matern kernels take the circulant embedding on 2-D grids and report it;
/// the squared exponential and 1-D grids stay Kronecker (no embedding, latent_dim = N).
#[test]
fn the_prior_is_chosen_by_separability() {
    let kernel = |family| KernelSpec {
        kind: family,
        length_scale: 0.2,
        variance: 1.0,
        length_scale_y: None,
    };
    for family in KernelKind::ALL.iter().copied() {
        for grid in grids() {
            let prior = prior_for(grid, kernel(family)).unwrap();
            let separable = family == KernelKind::SquaredExponential || grid.is_line();
            assert_eq!(prior.embedding().is_none(), separable, "{family} on {grid}");
            if separable {
                assert_eq!(prior.latent_dim(), grid.cells());
            } else {
                let e = prior.embedding().unwrap();
                assert_eq!(prior.latent_dim(), e.torus_x * e.torus_y);
                assert!(e.torus_x >= 2 * (grid.nx() - 1) && e.torus_y >= 2 * (grid.ny() - 1));
                assert!(e.covariance_change <= EMBEDDING_TOLERANCE);
            }
        }
    }
}

/// A long length scale needs a padded torus; its covariances are still the kernel's.
#[test]
fn long_length_scales_grow_the_torus_until_the_embedding_is_valid() {
    let grid = Grid::rectangular(9, 5);
    let kernel = KernelSpec {
        kind: KernelKind::Matern52,
        length_scale: 0.5,
        variance: 1.0,
        length_scale_y: None,
    };
    let prior = CirculantPrior::new(grid, kernel).unwrap();
    let e = prior.embedding();
    assert!(e.torus_x > 16 && e.torus_y > 8, "padded: {e:?}");
    let dense = dense_kernel_matrix(grid, kernel);
    for a in 0..grid.cells() {
        for b in 0..grid.cells() {
            assert!((prior.covariance(a, b) - dense[(a, b)]).abs() < 1e-10);
        }
    }
}

/// Where no torus within the limit embeds the kernel, the error says what failed and what to
/// change.
#[test]
fn an_impossible_embedding_is_refused_with_advice() {
    let kernel = KernelSpec {
        kind: KernelKind::Matern52,
        length_scale: 1e4,
        variance: 1.0,
        length_scale_y: None,
    };
    let error = CirculantPrior::new(Grid::new(64), kernel).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, PriorError::NoValidEmbedding { .. }),
        "{message}"
    );
    for part in [
        "matern52",
        "64 x 64",
        "no valid circulant embedding",
        "shorter length scale",
        "squared-exponential",
    ] {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
}

/// Prior draws against the kernel, with an exact test. For a fixed vector w and K independent
/// draws u_k ~ N(0, C), sum_k (w^T u_k)^2 / (w^T C w) is chi-square with K degrees of freedom.
/// The vectors are e_a (the variance of cell a) and e_a + e_b, e_a - e_b (whose variances
/// C_aa + C_bb +- 2 C_ab test the covariance of a and b) for five pairs per grid: neighbours
/// along x and along y, a diagonal neighbour, a distant pair and a cell with itself, so
/// 5 x 3 = 15 statistics per kernel and grid, 5 kernels x 4 grids x 15 = 300 in all. Each is
/// tested two-sided at 1e-4 / 300: by Bonferroni the test raises a false alarm in at most 1 run
/// in 10,000 with a correct prior. With K = 20,000 a relative error of 5% in a variance gives
/// z ~ 5 and is caught.
#[test]
fn prior_draws_have_the_kernel_covariance() {
    const DRAWS: usize = 20_000;
    const TESTS: f64 = 300.0;
    let level = 1e-4 / TESTS;
    let mut count = 0;
    for family in KernelKind::ALL.iter().copied() {
        for grid in grids() {
            let kernel = KernelSpec {
                kind: family,
                length_scale: 0.3,
                variance: 1.3,
                length_scale_y: None,
            };
            let prior = prior_for(grid, kernel).unwrap();
            let (n, p) = (grid.cells(), prior.latent_dim());
            let far = grid.index(grid.nx() - 1, grid.ny() - 1);
            let up = if grid.ny() > 1 { grid.nx() } else { 2 };
            let pairs = [(0, 1), (0, up), (1, up), (0, far), (3, 3)];
            let dense = dense_kernel_matrix(grid, kernel);
            let mut rng = stream(11, Purpose::Truth, &format!("{family};{grid}"));
            let (mut xi, mut u) = (vec![0.0; p], vec![0.0; n]);
            let mut scratch = vec![0.0; prior.scratch_len()];
            let mut sums = [[0.0; 3]; 5];
            for _ in 0..DRAWS {
                for x in xi.iter_mut() {
                    *x = StandardNormal.sample(&mut rng);
                }
                prior.apply_sqrt(&xi, &mut u, &mut scratch);
                for (s, &(a, b)) in sums.iter_mut().zip(&pairs) {
                    s[0] += u[a] * u[a];
                    s[1] += (u[a] + u[b]).powi(2);
                    s[2] += (u[a] - u[b]).powi(2);
                }
            }
            for (s, &(a, b)) in sums.iter().zip(&pairs) {
                let (caa, cbb, cab) = (dense[(a, a)], dense[(b, b)], dense[(a, b)]);
                let variances = [caa, caa + cbb + 2.0 * cab, caa + cbb - 2.0 * cab];
                for (sum, variance) in s.iter().zip(variances) {
                    if variance < 1e-12 {
                        // e_a - e_a: nothing to test.
                        assert!(*sum < 1e-20);
                        continue;
                    }
                    count += 1;
                    let statistic = sum / variance;
                    let upper = chi_square_survival(statistic, DRAWS as f64);
                    let p_value = 2.0 * upper.min(1.0 - upper);
                    assert!(
                        p_value > level,
                        "{family} on {grid}, cells ({a}, {b}): sum of squares / variance = \
                         {statistic:.1} for {DRAWS} draws (p = {p_value:e})"
                    );
                }
            }
        }
    }
    assert!(
        count as f64 <= TESTS,
        "{count} statistics, at most {TESTS} budgeted"
    );
}

/// A squared exponential with a length scale per axis (ARD) stays a Kronecker product: L L^T
/// equals the dense anisotropic kernel matrix to 1e-10 of the variance on every test grid, and
/// the circulant embedding refuses it rather than ignore the second length scale.
#[test]
fn an_anisotropic_squared_exponential_is_a_kronecker_product() {
    for grid in grids() {
        let kernel = KernelSpec {
            length_scale_y: Some(0.45),
            ..KernelSpec::squared_exponential(0.15, 1.7)
        };
        let prior = prior_for(grid, kernel).unwrap();
        let dense = dense_kernel_matrix(grid, kernel);
        let l = square_root_matrix(prior.as_ref());
        let llt = &l * l.transpose();
        let n = grid.cells();
        for a in 0..n {
            for b in 0..n {
                let err = (llt[(a, b)] - dense[(a, b)]).abs() / 1.7;
                assert!(err < 1e-10, "{grid}: L L^T at ({a}, {b}): {err:e}");
            }
        }
        if grid.nx() > 1 && grid.ny() > 1 {
            // Along y the correlation of neighbours is that of the longer length scale.
            let along_x = dense[(0, 1)];
            let along_y = dense[(0, grid.nx())];
            assert!(along_y > along_x, "{grid}: {along_x} vs {along_y}");
        }
        let matern = KernelSpec {
            kind: KernelKind::Matern32,
            ..kernel
        };
        assert!(matches!(
            CirculantPrior::new(grid, matern),
            Err(PriorError::AnisotropicNotSeparable { .. })
        ));
    }
}

/// The Kronecker spectral root is C_1 (x) C_1: offered only when both axes have one kernel
/// matrix, not on a rectangular window (where it would silently use the x axis's for y).
#[test]
fn the_kronecker_spectral_root_needs_equal_axes() {
    use crate::model::grid::Window;
    let kernel = KernelSpec::squared_exponential(0.3, 1.0);
    let square = Grid::over_window(
        4,
        4,
        Window {
            x: (0.0, 1.0),
            y: (0.0, 1.0),
        },
    );
    let wide = Grid::over_window(
        4,
        4,
        Window {
            x: (0.0, 2.0),
            y: (0.0, 1.0),
        },
    );
    assert!(
        KroneckerPrior::new(square, kernel)
            .unwrap()
            .spectral_root()
            .is_some()
    );
    assert!(
        KroneckerPrior::new(wide, kernel)
            .unwrap()
            .spectral_root()
            .is_none()
    );
    assert!(
        KroneckerPrior::new(Grid::rectangular(4, 3), kernel)
            .unwrap()
            .spectral_root()
            .is_none()
    );
}

/// The fixed-effect prior (`covariates.rs`): its algebra, spectral root and gradient.
mod with_covariates {
    use crate::model::Observed;
    use crate::model::covariates::Covariates;
    use crate::model::grid::Grid;
    use crate::model::prior::KroneckerPrior;
    use crate::model::prior::{Prior, WithCovariates};
    use crate::model::spec::KernelSpec;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn prior() -> WithCovariates {
        let grid = Grid::new(5);
        let field = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.4, 1.3)).unwrap();
        let raw = vec![
            ("a".to_string(), (0..25).map(|c| (c % 5) as f64).collect()),
            (
                "b".to_string(),
                (0..25).map(|c| ((c * 7) % 11) as f64).collect(),
            ),
        ];
        let covariates = Covariates::new(raw, 25, true, 0.7, PathBuf::from("-")).unwrap();
        WithCovariates::new(Box::new(field), Arc::new(covariates))
    }

    fn vector(n: usize, seed: usize) -> Vec<f64> {
        (0..n)
            .map(|k| (((k + seed) * 7919 % 23) as f64 - 11.0) / 7.0)
            .collect()
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// <L x, v> = <x, L^T v>, and C = L L^T entry by entry and as a product.
    #[test]
    fn the_square_root_its_transpose_and_the_covariance_agree() {
        let prior = prior();
        assert_eq!(prior.latent_dim(), 27);
        let mut scratch = vec![0.0; prior.scratch_len()];
        let (x, v) = (vector(27, 1), vector(25, 2));
        let mut lx = vec![0.0; 25];
        prior.apply_sqrt(&x, &mut lx, &mut scratch);
        let mut ltv = vec![0.0; 27];
        prior.apply_sqrt_transpose(&v, &mut ltv, &mut scratch);
        assert!((dot(&lx, &v) - dot(&x, &ltv)).abs() < 1e-10);
        let mut cv = vec![0.0; 25];
        prior.apply_covariance(&v, &mut cv);
        let mut llt_v = vec![0.0; 25];
        prior.apply_sqrt(&ltv, &mut llt_v, &mut scratch);
        for c in 0..25 {
            assert!((cv[c] - llt_v[c]).abs() < 1e-10, "cell {c}");
            let row: f64 = (0..25).map(|b| prior.covariance(c, b) * v[b]).sum();
            assert!((row - cv[c]).abs() < 1e-10, "cell {c}");
        }
    }

    /// B B^T = C + s^2 X X^T, and B = L P with P = to_whitened.
    #[test]
    fn the_spectral_root_is_a_square_root_of_the_same_covariance() {
        let prior = prior();
        let root = prior
            .spectral_root()
            .expect("a square Kronecker prior has one");
        assert_eq!(root.eigenvalues().len(), 27);
        let mut scratch = vec![0.0; prior.scratch_len().max(root.scratch_len())];
        let v = vector(25, 3);
        let mut btv = vec![0.0; 27];
        root.apply_transpose(&v, &mut btv, &mut scratch);
        let mut cv = vec![0.0; 25];
        prior.apply_covariance(&v, &mut cv);
        assert!((dot(&btv, &btv) - dot(&v, &cv)).abs() < 1e-9);
        let eta = vector(27, 4);
        let mut b_eta = vec![0.0; 25];
        root.apply(&eta, &mut b_eta, &mut scratch);
        let mut xi = vec![0.0; 27];
        root.to_whitened(&eta, &mut xi, &mut scratch);
        let mut l_xi = vec![0.0; 25];
        prior.apply_sqrt(&xi, &mut l_xi, &mut scratch);
        for c in 0..25 {
            assert!((b_eta[c] - l_xi[c]).abs() < 1e-10);
        }
        let mut back = vec![0.0; 27];
        root.to_spectral(&xi, &mut back, &mut scratch);
        for k in 0..27 {
            assert!((back[k] - eta[k]).abs() < 1e-10);
        }
    }

    /// The whitened gradient of the log-likelihood through the covariates' coordinates, against
    /// central differences, for every likelihood.
    #[test]
    fn the_gradient_through_the_coefficients_matches_finite_differences() {
        use crate::model::target::{Target, Workspace};
        let prior = prior();
        let cells = [0, 3, 7, 12, 18, 24];
        for likelihood in &crate::model::likelihood::one_of_each(cells.len()) {
            let target = Target {
                prior: &prior,
                likelihood,
                observed: Observed::Cells(&cells),
                mean: 0.2,
            };
            let mut work = target.workspace();
            let xi: Vec<f64> = vector(27, 5).iter().map(|v| v / 3.0).collect();
            let mut field = vec![0.0; 25];
            target.field(&xi, &mut field, &mut work);
            let mut gradient = vec![0.0; 27];
            target.log_likelihood_and_gradient(&field, &mut gradient, &mut work);
            for k in [0, 13, 25, 26] {
                let at = |delta: f64, work: &mut Workspace| {
                    let mut moved = xi.clone();
                    moved[k] += delta;
                    let mut f = vec![0.0; 25];
                    target.field(&moved, &mut f, work);
                    target.log_likelihood(&f, work)
                };
                let h = 1e-6;
                let numeric = (at(h, &mut work) - at(-h, &mut work)) / (2.0 * h);
                assert!(
                    (numeric - gradient[k]).abs() < 1e-6 * gradient[k].abs().max(1.0),
                    "{:?} coordinate {k}: {} vs {numeric}",
                    likelihood.kind(),
                    gradient[k]
                );
            }
        }
    }
}
