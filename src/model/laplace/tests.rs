use super::*;
use crate::model::Observed;
use crate::model::data::{DataStreams, Dataset, Simulation};
use crate::model::exact::gaussian_posterior;
use crate::model::prior::{KroneckerPrior, Prior};
use crate::model::sites::SiteOperator;
use crate::model::spec::{KernelSpec, LikelihoodKind};
use crate::model::{Grid, Likelihood};
use crate::streams::{Purpose, stream};

fn prior(d: usize, l: f64, variance: f64) -> KroneckerPrior {
    KroneckerPrior::new(Grid::new(d), KernelSpec::squared_exponential(l, variance)).unwrap()
}

fn simulate(prior: &KroneckerPrior, kind: LikelihoodKind, subsample: usize, key: &str) -> Dataset {
    let mut streams = DataStreams::keyed(11, key);
    let sim = Simulation {
        likelihood: kind,
        subsample,
        noise_sd: 0.7,
        offset: 0.0,
        trials: 1,
        mean: 0.0,
    };
    Dataset::simulate(prior, sim, &mut streams).unwrap()
}

/// The Laplace fit of `target` and its marginals, with the default settings.
fn fit_with_defaults(target: &Target) -> (LaplaceFit, LaplaceMarginals) {
    let fit = LaplaceFit::new(target, &NewtonSettings::default()).unwrap();
    let marginals = fit.marginals(target, &LaplaceSettings::default()).unwrap();
    (fit, marginals)
}

/// Poisson counts (7 a) mod `levels` at observations a = 0..m: small, uneven counts with zeros.
fn patterned_counts(m: usize, levels: usize) -> Likelihood {
    let counts: Vec<f64> = (0..m).map(|a| ((a * 7) % levels) as f64).collect();
    Likelihood::new(LikelihoodKind::Poisson, counts, 0.0, 0.0)
}

fn max_relative(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Gaussian: the Laplace approximation is the exact posterior. Its mode must equal the Kalman
/// form's mean to 1e-8 (max-norm, relative) and its exact-method sds the exact sds to 1e-8, on
/// short and long length scales, with an intercept.
#[test]
fn gaussian_mode_and_sd_equal_the_exact_posterior() {
    for (d, l) in [(8, 0.1), (8, 0.3), (16, 0.1), (16, 0.3), (16, 1.0)] {
        let prior = prior(d, l, 1.3);
        let data = simulate(&prior, LikelihoodKind::Gaussian, 4, &format!("g{d}{l}"));
        let mean = 0.4;
        let values: Vec<f64> = data.observed.values.iter().map(|v| v + mean).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values.clone(), 0.7, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&data.observed.cells),
            mean,
        };
        let (fit, marginals) = fit_with_defaults(&target);
        let mut shifted = data.observed.clone();
        shifted.values = values;
        let exact = gaussian_posterior(&prior, mean, &shifted, 0.7).unwrap();
        let mean_error = max_relative(&fit.field, &exact.mean);
        let sd_error = max_relative(&marginals.sd, &exact.sd);
        eprintln!(
            "D={d} l={l}: {} Newton iterations, {} CG products; mode {mean_error:.1e}, sd {sd_error:.1e}",
            fit.newton.iterations, fit.newton.cg_iterations
        );
        assert!(mean_error < 1e-8, "D={d} l={l}: mode error {mean_error:e}");
        assert_eq!(marginals.method, SdMethod::Exact);
        assert!(sd_error < 1e-8, "D={d} l={l}: sd error {sd_error:e}");
    }
}

/// The low-rank sds against the exact ones: within the bound the method states, and close
/// when the spectrum is captured.
#[test]
fn low_rank_sds_are_within_their_stated_bound() {
    for (d, l, max_rank) in [(16, 0.3, 60), (16, 0.1, 40), (16, 0.1, 200)] {
        let prior = prior(d, l, 1.0);
        let data = simulate(&prior, LikelihoodKind::Poisson, 2, &format!("lr{d}{l}"));
        let likelihood = Likelihood::new(
            LikelihoodKind::Poisson,
            data.observed.values.clone(),
            1.0,
            0.0,
        );
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&data.observed.cells),
            mean: 0.0,
        };
        let fit = LaplaceFit::new(&target, &NewtonSettings::default()).unwrap();
        let exact = fit.marginals(&target, &LaplaceSettings::default()).unwrap();
        let settings = LaplaceSettings {
            max_exact_observations: 0,
            spectral: false,
            max_rank,
            ..LaplaceSettings::default()
        };
        // Above the exact limit the prior's leading spectral coordinates come first: exact to
        // their bound (the evidence within DROPPED_EVIDENCE nats, each variance within 4 x
        // DROPPED_EVIDENCE of the prior variance 1 of the observation space's: the reduced
        // covariance test's bound).
        let spectral = fit
            .marginals(
                &target,
                &LaplaceSettings {
                    spectral: true,
                    ..settings
                },
            )
            .unwrap();
        assert_eq!(spectral.method, SdMethod::Exact);
        let dropped = super::reduced::DROPPED_EVIDENCE;
        for (got, want) in spectral.sd.iter().zip(&exact.sd) {
            assert!(
                (got * got - want * want).abs() <= 4.0 * dropped + 1e-10,
                "D={d} l={l}: reduced sd {got} vs {want}"
            );
        }
        let gap = spectral.log_evidence - exact.log_evidence;
        assert!(
            (-1e-10..=dropped + 1e-10).contains(&gap),
            "D={d} l={l}: evidence {gap:e}"
        );
        let low = fit.marginals(&target, &settings).unwrap();
        let SdMethod::LowRank {
            rank,
            variance_share,
            log_det_bound,
        } = low.method
        else {
            panic!("expected the low-rank method");
        };
        let mut worst_share: f64 = 0.0;
        for c in 0..prior.cells() {
            let excess = low.sd[c].powi(2) - exact.sd[c].powi(2);
            let share = excess / prior.covariance(c, c);
            assert!(share > -1e-9, "cell {c}: low rank below exact ({share:e})");
            worst_share = worst_share.max(share);
        }
        let det_gap = exact.log_det - low.log_det;
        eprintln!(
            "D={d} l={l} rank {rank}: variance excess {worst_share:.2e} of prior (bound \
             {variance_share:.2e}), log det gap {det_gap:.2e} (bound {log_det_bound:.2e})"
        );
        assert!(worst_share <= variance_share + 1e-9);
        assert!((-1e-8..=log_det_bound + 1e-8).contains(&det_gap));
    }
}

/// The Hessian product against central differences of the gradient, for every likelihood.
#[test]
fn hessian_product_matches_finite_differences_of_the_gradient() {
    let prior = prior(5, 0.3, 1.5);
    let cells: Vec<usize> = (0..25).step_by(2).collect();
    assert_hessian_product_matches_differences(&prior, Observed::Cells(&cells));
}

/// The misfit Hessian's product with a direction against central differences of the whitened
/// gradient along it, for every likelihood observed through `observed` on `prior`'s 5 x 5 grid
/// (the curvature W at a point, not given).
fn assert_hessian_product_matches_differences(prior: &KroneckerPrior, observed: Observed) {
    for likelihood in &crate::model::likelihood::one_of_each(observed.len()) {
        let target = Target {
            prior,
            likelihood,
            observed,
            mean: -0.2,
        };
        let mut work = target.workspace();
        let xi: Vec<f64> = (0..25).map(|k| ((k * 5 % 7) as f64 - 3.0) / 4.0).collect();
        let direction: Vec<f64> = (0..25).map(|k| ((k * 3 % 5) as f64 - 2.0) / 3.0).collect();
        let h = 1e-5;
        let mut gradient_at = |sign: f64| {
            let x: Vec<f64> = xi
                .iter()
                .zip(&direction)
                .map(|(x, d)| x + sign * h * d)
                .collect();
            let mut field = vec![0.0; 25];
            target.field(&x, &mut field, &mut work);
            let mut g = vec![0.0; 25];
            target.log_likelihood_and_gradient(&field, &mut g, &mut work);
            g
        };
        let (up, down) = (gradient_at(1.0), gradient_at(-1.0));
        let mut field = vec![0.0; 25];
        target.field(&xi, &mut field, &mut target.workspace());
        let mut product = vec![0.0; 25];
        MisfitHessian::at_field(&target, &field).apply_misfit(&direction, &mut product);
        for k in 0..25 {
            // The misfit Hessian is minus the derivative of the log-likelihood's gradient.
            let numeric = -(up[k] - down[k]) / (2.0 * h);
            assert!(
                (numeric - product[k]).abs() < 1e-6 * product[k].abs().max(1.0),
                "{:?} {observed:?} component {k}: {} vs {numeric}",
                likelihood.kind(),
                product[k]
            );
        }
    }
}

/// Gaussian evidence in closed form: log N(v; mean, G C G^T + s^2 I) + M log(s sqrt(2 pi)) (the
/// likelihood drops that constant).
#[test]
fn gaussian_evidence_matches_its_closed_form() {
    use faer::{Mat, Side};
    let prior = prior(6, 0.3, 1.0);
    let data = simulate(&prior, LikelihoodKind::Gaussian, 3, "evidence");
    let s: f64 = 0.7;
    let mean = 0.25;
    let likelihood = Likelihood::new(
        LikelihoodKind::Gaussian,
        data.observed.values.clone(),
        s,
        0.0,
    );
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&data.observed.cells),
        mean,
    };
    let (_, laplace) = fit_with_defaults(&target);
    let cells = &data.observed.cells;
    let m = cells.len();
    let k = Mat::from_fn(m, m, |a, b| {
        prior.covariance(cells[a], cells[b]) + if a == b { s * s } else { 0.0 }
    });
    let llt = k.llt(Side::Lower).unwrap();
    let r = llt.L();
    let log_det: f64 = 2.0 * (0..m).map(|a| r[(a, a)].ln()).sum::<f64>();
    let residual = Mat::from_fn(m, 1, |a, _| data.observed.values[a] - mean);
    let mut solved = residual.clone();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
        r,
        solved.as_mut(),
        faer::Par::Seq,
    );
    let quadratic: f64 = (0..m).map(|a| solved[(a, 0)].powi(2)).sum();
    let two_pi = 2.0 * std::f64::consts::PI;
    let exact = -0.5 * quadratic - 0.5 * log_det - 0.5 * m as f64 * two_pi.ln()
        + m as f64 * (s * two_pi.sqrt()).ln();
    assert!(
        (laplace.log_evidence - exact).abs() < 1e-8 * exact.abs().max(1.0),
        "{} vs {exact}",
        laplace.log_evidence
    );
}

/// The Laplace evidence next to the Monte Carlo estimate over prior draws on small probit and
/// poisson problems: the Laplace approximation is not exact there, so this bounds its error
/// (about a tenth of a nat on these problems) rather than testing equality; the Monte Carlo
/// side is well within its own standard error at 200,000 draws.
#[test]
fn probit_and_poisson_evidence_is_close_to_the_monte_carlo_estimate() {
    for kind in [LikelihoodKind::Probit, LikelihoodKind::Poisson] {
        let prior = prior(6, 0.4, 1.0);
        let data = simulate(&prior, kind, 4, "mc-evidence");
        let likelihood = Likelihood::new(kind, data.observed.values.clone(), 0.7, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&data.observed.cells),
            mean: 0.0,
        };
        let (_, laplace) = fit_with_defaults(&target);
        let mut rng = stream(3, Purpose::Evidence, "laplace");
        let mc = crate::model::evidence::log_evidence(&target, 200_000, &mut rng);
        let gap = laplace.log_evidence - mc.estimate;
        eprintln!(
            "{kind:?}: Laplace {:.4}, Monte Carlo {:.4} (se {:.4}), gap {gap:.4}",
            laplace.log_evidence, mc.estimate, mc.standard_error
        );
        assert!(mc.standard_error < 0.02);
        assert!(gap.abs() < 0.5, "{kind:?}: gap {gap}");
    }
}

/// Newton converges from the default start on a 128 x 128 grid (N = 16,384) of simulated counts,
/// with rates from sparse (about 0.2 per cell) to dense (about 20 per cell), three quarters of
/// the cells observed.
#[test]
fn newton_converges_on_a_128_grid() {
    let prior = prior(128, 0.1, 1.0);
    for (k, log_rate) in [0.2f64.ln(), 3f64.ln(), 20f64.ln()].into_iter().enumerate() {
        let mut streams = DataStreams {
            truth: stream(5, Purpose::Truth, "128"),
            observations: stream(5, Purpose::Observations, "128"),
            noise: stream(5, Purpose::Noise, "128"),
            counts: stream(5, Purpose::Counts, &format!("128;{k}")),
        };
        let sim = Simulation {
            likelihood: LikelihoodKind::Poisson,
            subsample: 1,
            noise_sd: 1.0,
            offset: log_rate,
            trials: 1,
            mean: 0.0,
        };
        let full = Dataset::simulate(&prior, sim, &mut streams).unwrap();
        let kept: Vec<usize> = (0..full.observed.len()).filter(|i| i % 4 != 0).collect();
        let cells: Vec<usize> = kept.iter().map(|&i| full.observed.cells[i]).collect();
        let counts: Vec<f64> = kept.iter().map(|&i| full.observed.values[i]).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Poisson, counts, 1.0, log_rate);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.0,
        };
        let started = std::time::Instant::now();
        let fit = LaplaceFit::new(&target, &NewtonSettings::default())
            .unwrap_or_else(|e| panic!("rate {}: {e}", log_rate.exp()));
        eprintln!(
            "128 x 128, rate {:.1}: {} Newton iterations, {} CG products, |g| {:.1e} -> {:.1e}, \
             {:.2} s",
            log_rate.exp(),
            fit.newton.iterations,
            fit.newton.cg_iterations,
            fit.newton.start_gradient_norm,
            fit.newton.gradient_norm,
            started.elapsed().as_secs_f64()
        );
        assert!(fit.newton.iterations <= 20);
    }
}

/// The prior's square root L (N x latent dimension) formed column by column from its product.
fn dense_sqrt(prior: &dyn Prior) -> faer::Mat<f64> {
    let (n, k) = (prior.cells(), prior.latent_dim());
    let mut scratch = vec![0.0; prior.scratch_len()];
    let mut l = faer::Mat::<f64>::zeros(n, k);
    let mut column = vec![0.0; n];
    for j in 0..k {
        let mut unit = vec![0.0; k];
        unit[j] = 1.0;
        prior.apply_sqrt(&unit, &mut column, &mut scratch);
        for (r, &v) in column.iter().enumerate() {
            l[(r, j)] = v;
        }
    }
    l
}

/// Sites for the tests below: `count` scattered over `grid`'s window (border half-cells
/// included).
fn sites_on(grid: &Grid, count: usize, offset: usize) -> Vec<(f64, f64)> {
    crate::model::sites::scattered(count, &grid.window(), offset)
}

/// The misfit Hessian product through sites equals L^T H^T W H L formed densely (L column by
/// column from the prior's product, H from the sites' rows), column by column, and its trace
/// the dense trace.
#[test]
fn misfit_hessian_through_sites_is_the_dense_l_h_w_h_l() {
    let prior = prior(5, 0.3, 1.5);
    let grid = prior.grid();
    let sites = SiteOperator::bilinear(&grid, &sites_on(&grid, 12, 4)).unwrap();
    let (n, m) = (25, sites.len());
    let likelihood = &crate::model::likelihood::one_of_each(m)[0];
    let target = Target {
        prior: &prior,
        likelihood,
        observed: Observed::Sites(&sites),
        mean: 0.0,
    };
    let weights: Vec<f64> = (0..m).map(|a| 0.3 + 0.25 * (a % 5) as f64).collect();
    let l = dense_sqrt(&prior);
    let mut h = faer::Mat::<f64>::zeros(m, n);
    for (a, row) in sites.rows().iter().enumerate() {
        for &(c, w) in row {
            h[(a, c)] += w;
        }
    }
    let w = faer::Mat::from_fn(m, m, |a, b| if a == b { weights[a] } else { 0.0 });
    let hl = &h * &l;
    let dense = hl.transpose() * &w * &hl;
    let mut hessian = MisfitHessian::new(&target, weights.clone());
    let scale = (0..n).map(|k| dense[(k, k)]).fold(0.0, f64::max);
    for k in 0..n {
        let mut unit = vec![0.0; n];
        unit[k] = 1.0;
        let mut column = vec![0.0; n];
        hessian.apply_misfit(&unit, &mut column);
        for (r, &v) in column.iter().enumerate() {
            assert!(
                (v - dense[(r, k)]).abs() < 1e-12 * scale,
                "({r}, {k}): {v} vs {}",
                dense[(r, k)]
            );
        }
    }
    let trace: f64 = (0..n).map(|k| dense[(k, k)]).sum();
    assert!((hessian.trace() - trace).abs() < 1e-12 * trace, "trace");
}

/// The Hessian product through sites against central differences of the gradient, for every
/// likelihood.
#[test]
fn hessian_product_through_sites_matches_finite_differences_of_the_gradient() {
    let prior = prior(5, 0.3, 1.5);
    let grid = prior.grid();
    let sites = SiteOperator::bilinear(&grid, &sites_on(&grid, 13, 0)).unwrap();
    assert_hessian_product_matches_differences(&prior, Observed::Sites(&sites));
}

/// Gaussian data at scattered sites: the Laplace approximation is the exact posterior of the
/// grid's model observed through H, so at prediction sites its mean (H_p u^) and sd
/// (sqrt(v^T (I + L^T H^T W H L)^-1 v), v = L^T H_p^T e_q, solved by conjugate gradients)
/// equal dense kriging with the covariance H C H^T ([`kriging::on_grid`]) to 1e-8; at
/// prediction sites on cell centres the Laplace cell sds (observation-space, and low rank
/// within its bound) equal kriging's too, and the Laplace evidence is the gaussian one in
/// closed form.
#[test]
fn gaussian_laplace_through_sites_is_kriging_on_the_grid() {
    use crate::model::sites::kriging::{self, Problem};
    let prior = prior(12, 0.25, 1.3);
    let grid = prior.grid();
    let fitted = sites_on(&grid, 40, 0);
    let values: Vec<f64> = fitted
        .iter()
        .map(|&(x, y)| (3.0 * x).sin() + y * y - 0.2)
        .collect();
    let centres = [5, 40, 143];
    let mut predict = sites_on(&grid, 4, 77);
    predict.extend(centres.iter().map(|&c| grid.position(c)));
    let (noise_sd, mean) = (0.3, 0.4);
    let problem = Problem {
        fitted: &fitted,
        values: &values,
        noise_sd,
        mean,
        predict: &predict,
    };
    let kriged = kriging::on_grid(&grid, &prior, &problem).unwrap().unwrap();
    let sites = SiteOperator::bilinear(&grid, &fitted).unwrap();
    let at = SiteOperator::bilinear(&grid, &predict).unwrap();
    let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values.clone(), noise_sd, 0.0);
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Sites(&sites),
        mean,
    };
    let (fit, marginals) = fit_with_defaults(&target);
    assert_eq!(marginals.method, SdMethod::Exact);
    let mut site_means = vec![0.0; predict.len()];
    at.gather(&fit.field, &mut site_means);
    let mut hessian = fit.misfit_hessian(&target);
    let mut scratch = vec![0.0; prior.scratch_len()];
    for q in 0..predict.len() {
        let mut unit = vec![0.0; predict.len()];
        unit[q] = 1.0;
        let mut spread = vec![0.0; grid.cells()];
        at.scatter_add(&unit, &mut spread);
        let mut v = vec![0.0; target.dim()];
        prior.apply_sqrt_transpose(&spread, &mut v, &mut scratch);
        let mut solved = vec![0.0; v.len()];
        let outcome = cg::solve(
            |x, out| hessian.apply(x, out),
            &v,
            &mut solved,
            1e-13,
            10 * v.len(),
        );
        assert!(outcome.converged, "site {q}: {outcome:?}");
        let sd = cg::dot(&v, &solved).sqrt();
        let (want_mean, want_sd) = (kriged.mean[q], kriged.sd[q]);
        eprintln!(
            "site {q}: mean {:.2e} off, sd {:.2e} off (sd {want_sd:.3})",
            site_means[q] - want_mean,
            sd - want_sd
        );
        assert!((site_means[q] - want_mean).abs() < 1e-8, "site {q} mean");
        assert!((sd - want_sd).abs() < 1e-8, "site {q} sd");
    }
    let low = fit
        .marginals(
            &target,
            &LaplaceSettings {
                max_exact_observations: 0,
                spectral: false,
                ..LaplaceSettings::default()
            },
        )
        .unwrap();
    let SdMethod::LowRank { variance_share, .. } = low.method else {
        panic!("expected the low-rank method");
    };
    for (k, &cell) in centres.iter().enumerate() {
        let q = predict.len() - centres.len() + k;
        assert!(
            (fit.field[cell] - kriged.mean[q]).abs() < 1e-8,
            "cell {cell}"
        );
        assert!(
            (marginals.sd[cell] - kriged.sd[q]).abs() < 1e-8,
            "cell {cell}"
        );
        let excess = (low.sd[cell].powi(2) - kriged.sd[q].powi(2)) / prior.covariance(cell, cell);
        assert!(
            (-1e-9..=variance_share + 1e-9).contains(&excess),
            "cell {cell}"
        );
    }
    // log N(y; mean, H C H^T + s^2 I) + M log(s sqrt(2 pi)).
    let m = fitted.len();
    let k = faer::Mat::from_fn(m, m, |a, b| {
        sites.covariance(&prior, a, b) + if a == b { noise_sd * noise_sd } else { 0.0 }
    });
    let llt = k.llt(faer::Side::Lower).unwrap();
    let log_det: f64 = 2.0 * (0..m).map(|a| llt.L()[(a, a)].ln()).sum::<f64>();
    let residual = faer::Mat::from_fn(m, 1, |a, _| values[a] - mean);
    let quadratic =
        (residual.transpose() * faer::linalg::solvers::Solve::solve(&llt, &residual))[(0, 0)];
    let two_pi = 2.0 * std::f64::consts::PI;
    let exact = -0.5 * quadratic - 0.5 * log_det - 0.5 * m as f64 * two_pi.ln()
        + m as f64 * (noise_sd * two_pi.sqrt()).ln();
    assert!(
        (marginals.log_evidence - exact).abs() < 1e-8 * exact.abs().max(1.0),
        "{} vs {exact}",
        marginals.log_evidence
    );
    let evidence = fit
        .log_evidence(&target, &LaplaceSettings::default())
        .unwrap();
    assert_eq!(evidence, marginals.log_evidence);
}

/// The observation-space inverse's covariances against the Laplace covariance formed densely in
/// whitened coordinates, S = L (I + L^T G^T W G L)^-1 L^T: every cell's variance, each
/// observation's covariance with every cell (G S) and with every observation (G S G^T), and
/// log det(I + L^T G^T W G L), for observations at a subset of cells and at scattered sites.
#[test]
fn the_observation_inverse_gives_the_dense_laplace_covariances() {
    use faer::linalg::solvers::DenseSolveCore;
    let prior = prior(6, 0.3, 1.5);
    let grid = prior.grid();
    let n = grid.cells();
    let cells: Vec<usize> = (0..n).filter(|c| c % 3 != 1).collect();
    let sites = SiteOperator::bilinear(&grid, &sites_on(&grid, 17, 2)).unwrap();
    let l = dense_sqrt(&prior);
    for observed in [Observed::Cells(&cells), Observed::Sites(&sites)] {
        let m = observed.len();
        let mut g = faer::Mat::<f64>::zeros(m, n);
        for a in 0..m {
            let mut unit = vec![0.0; m];
            unit[a] = 1.0;
            let mut row = vec![0.0; n];
            observed.scatter(&unit, &mut row);
            for (c, &v) in row.iter().enumerate() {
                g[(a, c)] = v;
            }
        }
        let weights: Vec<f64> = (0..m).map(|a| 0.2 + 0.7 * (a % 4) as f64).collect();
        let w = faer::Mat::from_fn(m, m, |a, b| if a == b { weights[a] } else { 0.0 });
        let gl = &g * &l;
        let h = faer::Mat::<f64>::identity(n, n) + gl.transpose() * &w * &gl;
        let llt = h.llt(faer::Side::Lower).unwrap();
        let log_det: f64 = 2.0 * (0..n).map(|k| llt.L()[(k, k)].ln()).sum::<f64>();
        let s = &l * llt.inverse() * l.transpose();
        let gs = &g * &s;
        let gsg = &gs * g.transpose();

        let inverse = variance::ObservationInverse::new(&prior, observed, &weights).unwrap();
        assert!(
            (inverse.log_det() - log_det).abs() < 1e-10 * log_det,
            "log det"
        );
        let scale = (0..n).map(|c| s[(c, c)]).fold(0.0, f64::max);
        for a in 0..m {
            for b in 0..m {
                let (got, want) = (inverse.observation_covariance(a, b), gsg[(a, b)]);
                assert!(
                    (got - want).abs() < 1e-10 * scale,
                    "S_obs({a}, {b}): {got} vs {want}"
                );
            }
        }
        let mut visited = 0;
        let variances = inverse.cell_variances(&prior, observed, |a, covariance| {
            visited += 1;
            for (c, &got) in covariance.iter().enumerate() {
                let want = gs[(a, c)];
                assert!(
                    (got - want).abs() < 1e-10 * scale,
                    "Cov({a}, {c}): {got} vs {want}"
                );
            }
        });
        assert_eq!(visited, m);
        for (c, &got) in variances.iter().enumerate() {
            assert!((got - s[(c, c)]).abs() < 1e-10 * scale, "variance {c}");
        }
        let spread = variance::observation_space(&prior, observed, &weights).unwrap();
        assert!(max_relative(&spread.variance, &variances) < 1e-10);
    }
}

/// With covariates, the spatial field f = u - mean - X beta: its marginals from the observation
/// inverse against the Laplace gaussian formed densely over the whitened coordinates (xi, z),
/// f = [L_f 0] (xi, z): the mode's f and the sds of [L_f 0] H^-1 [L_f 0]^T, H = I + B^T G^T W
/// G B, B = [L_f, s X], at the fit's weights. Gaussian counts-free data (no correction: the
/// inverse is made for the spatial pass) and poisson counts (the simplified Laplace inverse,
/// whose sds are the gaussian's).
#[test]
fn the_spatial_field_marginals_with_covariates_are_the_dense_laplace_ones() {
    use crate::model::covariates::Covariates;
    use crate::model::prior::WithCovariates;
    use faer::linalg::solvers::DenseSolveCore;
    use std::sync::Arc;
    let field = prior(5, 0.35, 1.2);
    let n = 25;
    let raw = vec![
        ("x".to_string(), (0..n).map(|c| (c % 5) as f64).collect()),
        (
            "y".to_string(),
            (0..n).map(|c| ((c * 7) % 11) as f64).collect(),
        ),
    ];
    let design = Arc::new(Covariates::new(raw, n, true, 0.8, "-".into()).unwrap());
    let with = WithCovariates::new(Box::new(field.clone()), design.clone());
    let cells: Vec<usize> = (0..n).filter(|c| c % 4 != 2).collect();
    let m = cells.len();
    let counts: Vec<f64> = (0..m).map(|a| ((a * 5) % 4) as f64).collect();
    let values: Vec<f64> = (0..m).map(|a| 0.3 * ((a * 3) % 5) as f64 - 0.5).collect();
    let gaussian = Likelihood::new(LikelihoodKind::Gaussian, values, 0.6, 0.0);
    let poisson = Likelihood::new(LikelihoodKind::Poisson, counts, 0.0, 0.0);
    for (likelihood, corrections) in [(&gaussian, false), (&poisson, true)] {
        let target = Target {
            prior: &with,
            likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.2,
        };
        let fit = LaplaceFit::new(&target, &NewtonSettings::default()).unwrap();
        let settings = LaplaceSettings {
            corrections,
            ..LaplaceSettings::default()
        };
        let correction = skew::Correction::new(&target, &fit, &settings, None).unwrap();
        let spatial = correction
            .spatial_marginals(&target, &fit, &settings)
            .unwrap()
            .expect("covariates and few observations");
        // Dense: B column by column, then H and [L_f 0] H^-1 [L_f 0]^T.
        let k = with.latent_dim();
        let b = dense_sqrt(&with);
        let g = faer::Mat::from_fn(m, n, |a, c| if cells[a] == c { 1.0 } else { 0.0 });
        let w = faer::Mat::from_fn(m, m, |a, c| if a == c { fit.weights[a] } else { 0.0 });
        let gb = &g * &b;
        let h = faer::Mat::<f64>::identity(k, k) + gb.transpose() * &w * &gb;
        let inverse = h.llt(faer::Side::Lower).unwrap().inverse();
        let field_part = faer::Mat::from_fn(n, k, |r, j| if j < n { b[(r, j)] } else { 0.0 });
        let covariance = &field_part * inverse * field_part.transpose();
        let mode: Vec<f64> = (0..n)
            .map(|r| (0..n).map(|j| b[(r, j)] * fit.mode[j]).sum())
            .collect();
        for c in 0..n {
            let sd = covariance[(c, c)].sqrt();
            assert!(
                (spatial.sd[c] - sd).abs() < 1e-9 * sd,
                "sd {c}: {} vs {sd}",
                spatial.sd[c]
            );
            if !corrections {
                assert!((spatial.mean[c] - mode[c]).abs() < 1e-9, "mean {c}");
                assert_eq!(spatial.skewness[c], 0.0);
            }
        }
        if corrections {
            assert!(
                spatial.skewness.iter().any(|&g| g != 0.0),
                "poisson counts are skewed"
            );
        }
    }
}

/// The reduced form against the observation inverse (itself checked against the dense Laplace
/// covariance above), every log-determinant, covariance and variance, for observations at cells
/// and at sites and for the whole and the spatial field of a model with covariates: to rounding
/// with nothing dropped (tolerance 0), and with the default tolerance at a long length scale
/// keeping under half the coordinates, its log-determinant short by at most twice its stated
/// evidence bound and every covariance within four times the bound times the largest prior
/// variance. The coordinates kept, kept again by another fit, give the same form.
#[test]
fn the_reduced_covariance_is_the_observation_inverses() {
    use super::reduced::{CurvatureShares, DROPPED_EVIDENCE, FieldPart, Reduction};
    use crate::model::covariates::Covariates;
    use crate::model::prior::WithCovariates;
    use std::sync::Arc;
    for (d, l, tolerance) in [(6, 0.3, 0.0), (32, 0.5, DROPPED_EVIDENCE)] {
        let field = prior(d, l, 1.5);
        let grid = field.grid();
        let n = grid.cells();
        let raw = vec![("x".to_string(), (0..n).map(|c| (c % d) as f64).collect())];
        let design = Arc::new(Covariates::new(raw, n, true, 0.8, "-".into()).unwrap());
        let with = WithCovariates::new(Box::new(field.clone()), design);
        let cells: Vec<usize> = (0..n).filter(|c| c % 3 != 1).collect();
        let sites = SiteOperator::bilinear(&grid, &sites_on(&grid, 17, 2)).unwrap();
        let observations = [Observed::Cells(&cells), Observed::Sites(&sites)];
        let priors: [(&dyn Prior, &dyn Prior); 2] = [(&field, &field), (&with, &field)];
        for (observed, (prior, spatial)) in observations.into_iter().zip(priors.iter().cycle()) {
            let m = observed.len();
            let weights: Vec<f64> = (0..m).map(|a| 0.2 + 0.7 * (a % 4) as f64).collect();
            let inverse = variance::ObservationInverse::new(*prior, observed, &weights).unwrap();
            let reduction = Reduction::new(*prior, observed, &weights, tolerance).unwrap();
            let (rank, bound) = (reduction.rank(), reduction.evidence_bound());
            assert!(bound <= tolerance);
            let reduced = reduction.covariance(*prior, observed, &weights).unwrap();
            let kept = reduced.kept().to_vec();
            let full = inverse.log_det();
            let short = full - reduced.log_det();
            let case = format!("D={d} l={l} M={m} rank {rank}");
            assert!(
                short > -1e-10 * full && short <= 2.0 * bound + 1e-10 * full,
                "{case}: log det short by {short}, bound {bound}"
            );
            // Dropping coordinate t of share s_t leaves Var((G u)_a) short of its update by at
            // most 2 s_t K_aa (K = G C G^T; the scalar case: k_t - [S(k_r + k_t) - S(k_r)] with
            // S(k) = k / (1 + w k), whose slope is 1 / (1 + w k)^2), so every covariance is
            // within 4 x bound x the largest prior variance.
            let largest_variance = (0..n).map(|c| prior.covariance(c, c)).fold(0.0, f64::max);
            let allowed = if tolerance == 0.0 {
                assert_eq!(bound, 0.0);
                1e-10
            } else {
                assert!(2 * rank < n, "{case}: the spectrum falls fast");
                4.0 * bound * largest_variance + 1e-10
            };
            // Another fit may keep these coordinates: the same covariances, and refused where
            // the rest would move the evidence by more than the tolerance asked.
            let shares = CurvatureShares::new(*prior, observed, &weights).unwrap();
            let again = shares.keeping(&kept, tolerance).unwrap();
            assert_eq!(again.rank(), rank);
            let again = again.covariance(*prior, observed, &weights).unwrap();
            assert_eq!(again.log_det(), reduced.log_det(), "{case}: kept again");
            assert!(kept.len() > 1, "{case}");
            let fewer = &kept[1..];
            assert!(
                shares.keeping(fewer, 0.0).is_none(),
                "{case}: a coordinate with a share is not dropped at tolerance 0"
            );
            for start in [0, m / 3] {
                let (block, other) = (
                    reduced.observation_covariances(start..m),
                    inverse.observation_covariances(start..m),
                );
                for a in start..m {
                    for b in start..m {
                        let (got, want) =
                            (block[(a - start, b - start)], other[(a - start, b - start)]);
                        assert_eq!(want, inverse.observation_covariance(a, b));
                        assert!(
                            (got - want).abs() < allowed,
                            "{case}: S({a}, {b}) {got} vs {want}"
                        );
                    }
                }
            }
            let (variances, block) = (
                reduced.observation_variances(),
                reduced.observation_covariances(0..m),
            );
            for (a, &got) in variances.iter().enumerate() {
                assert!((got - block[(a, a)]).abs() < 1e-14, "{case}: Var {a}");
            }
            for (part, cross) in [(FieldPart::Whole, *prior), (FieldPart::Spatial, *spatial)] {
                let mut want = Vec::new();
                let expected =
                    inverse.cell_variances(cross, observed, |_, c| want.push(c.to_vec()));
                let mut visited = 0;
                let got = reduced.cell_variances(part, |a, covariance| {
                    visited += 1;
                    for (c, (&x, &y)) in covariance.iter().zip(&want[a]).enumerate() {
                        assert!((x - y).abs() < allowed, "{case} {part:?}: Cov({a}, {c})");
                    }
                });
                assert_eq!(visited, m);
                for (c, (&x, &y)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        (x - y).abs() < allowed,
                        "{case} {part:?}: variance {c} {x} vs {y}"
                    );
                }
            }
        }
    }
}

/// The evidence's second-order term (each symmetric pair once, summed in lanes) is the plain
/// double sum over every ordered pair of observations, to rounding: for the exact inverse and
/// for the reduced form, with enough observations that the lanes carry most pairs.
#[test]
fn the_evidence_term_is_the_double_sum_over_every_pair() {
    use super::covariance::LaplaceCovariance;
    let prior = prior(9, 0.4, 1.2);
    let n = prior.cells();
    let cells: Vec<usize> = (0..n).filter(|c| c % 5 != 3).collect();
    let m = cells.len();
    let likelihood = patterned_counts(m, 5);
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&cells),
        mean: -0.3,
    };
    let fit = LaplaceFit::new(&target, &NewtonSettings::default()).unwrap();
    let mut at = vec![0.0; m];
    target.observed.gather(&fit.field, &mut at);
    let (mut d3, mut d4) = (vec![0.0; m], vec![0.0; m]);
    likelihood.third_derivative(&at, &mut d3);
    likelihood.fourth_derivative(&at, &mut d4);
    for max_exact_observations in [m, 0] {
        let settings = LaplaceSettings {
            corrections: true,
            max_exact_observations,
            ..LaplaceSettings::default()
        };
        let correction = skew::Correction::new(&target, &fit, &settings, None).unwrap();
        let got = correction
            .evidence_term()
            .expect("the corrections are made");
        let covariance = LaplaceCovariance::new(&target, &fit.weights, &settings, None)
            .unwrap()
            .unwrap();
        let lower = covariance.observation_covariances(0..m);
        let s = |a: usize, b: usize| lower[(a.max(b), a.min(b))];
        let mut want = 0.0;
        for a in 0..m {
            want += d4[a] * s(a, a) * s(a, a) / 8.0;
            for b in 0..m {
                let sab = s(a, b);
                want += d3[a] * d3[b] * (9.0 * s(a, a) * s(b, b) * sab + 6.0 * sab.powi(3)) / 72.0;
            }
        }
        eprintln!("M={m} exact limit {max_exact_observations}: term {got} vs {want}");
        assert!(want.abs() > 1e-3, "a term worth checking");
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "M={m}: {got} vs {want}"
        );
    }
}

/// A preferred basis is taken where it holds and is not much larger than the fit's own choice:
/// a fit's own spectral coordinates at weights moved by 1 % (a finite difference's neighbour);
/// neither every coordinate nor the inverse where the fit's own choice keeps few of them (a
/// basis carried from a far theta).
#[test]
fn a_preferred_basis_is_kept_near_and_refused_far() {
    use super::covariance::{Basis, LaplaceCovariance};
    use std::sync::Arc;
    let prior = prior(16, 0.5, 1.0);
    let n = prior.cells();
    let cells: Vec<usize> = (0..n).filter(|c| c % 3 != 1).collect();
    let m = cells.len();
    let likelihood = patterned_counts(m, 3);
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&cells),
        mean: -0.5,
    };
    let settings = LaplaceSettings {
        corrections: true,
        ..LaplaceSettings::default()
    };
    let weights: Vec<f64> = (0..m).map(|a| 0.3 + 0.1 * (a % 5) as f64).collect();
    let own = LaplaceCovariance::new(&target, &weights, &settings, None)
        .unwrap()
        .unwrap()
        .basis();
    let Basis::Spectral(kept) = &own else {
        panic!("a long length scale takes the reduced form");
    };
    assert!(2 * kept.len() < m, "few coordinates: {}", kept.len());
    let moved: Vec<f64> = weights
        .iter()
        .enumerate()
        .map(|(a, w)| w * if a % 2 == 0 { 1.01 } else { 0.99 })
        .collect();
    let near = LaplaceCovariance::new(&target, &moved, &settings, Some(&own))
        .unwrap()
        .unwrap();
    assert_eq!(
        near.basis(),
        own,
        "the centre's coordinates are kept nearby"
    );
    let every: Arc<[usize]> = (0..n).collect();
    let far = LaplaceCovariance::new(&target, &moved, &settings, Some(&Basis::Spectral(every)))
        .unwrap()
        .unwrap();
    assert_eq!(
        far.basis(),
        LaplaceCovariance::new(&target, &moved, &settings, None)
            .unwrap()
            .unwrap()
            .basis(),
        "every coordinate is far more than the fit's own choice"
    );
    let inverse = LaplaceCovariance::new(&target, &moved, &settings, Some(&Basis::Observations))
        .unwrap()
        .unwrap();
    assert_eq!(
        inverse.basis(),
        far.basis(),
        "the inverse counts as M coordinates, far more than these"
    );
}
