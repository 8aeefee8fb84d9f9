//! The non-separable kernels through the whole engine: on a rectangular 8 x 5 grid, an
//! exponential kernel (its minimal torus) and a Matern 3/2 kernel (a padded torus: 320 whitened
//! coordinates for 40 cells) go through the circulant embedding; the exact gaussian posterior is
//! checked against the dense information form, and every sampler kind against the exact
//! posterior within Monte Carlo error, as `tests/engine.rs` does for the squared exponential.

mod support;

use fieldmc::model::data::{DataStreams, Dataset, Simulation};
use fieldmc::model::exact::gaussian_posterior;
use fieldmc::model::prior::{Prior, dense_kernel_matrix, prior_for};
use fieldmc::model::spec::{KernelKind, KernelSpec};
use fieldmc::model::{Grid, Likelihood, LikelihoodKind, Observed, Target};
use fieldmc::sampler::{ChainRng, RunRequest, SamplerKind, SamplerSettings, run_kind};
use fieldmc::streams::{Purpose, stream};

use faer::Side;
use faer::linalg::solvers::DenseSolveCore;

const SEED: u64 = 14;

/// The 8 x 5 grid (spacing 1/7): N = 40 cells, M = 10 observed.
fn grid() -> Grid {
    Grid::rectangular(8, 5)
}

/// The two kernels: exponential at l = 0.2 (its minimal 16 x 8 torus is valid: 128 whitened
/// coordinates) and Matern 3/2 at l = 0.3 (needs a padded 20 x 16 torus: 320).
fn kernels() -> [KernelSpec; 2] {
    [
        KernelSpec {
            kind: KernelKind::Exponential,
            length_scale: 0.2,
            variance: 1.0,
            length_scale_y: None,
        },
        KernelSpec {
            kind: KernelKind::Matern32,
            length_scale: 0.3,
            variance: 1.0,
            length_scale_y: None,
        },
    ]
}

fn prior(kernel: KernelSpec) -> Box<dyn Prior> {
    let prior = prior_for(grid(), kernel).unwrap();
    assert!(prior.embedding().is_some(), "{kernel:?} should be embedded");
    prior
}

fn simulate(prior: &dyn Prior, key: &str) -> Dataset {
    let mut streams = DataStreams {
        truth: stream(SEED, Purpose::Truth, key),
        observations: stream(SEED, Purpose::Observations, key),
        noise: stream(SEED, Purpose::Noise, key),
        counts: stream(SEED, Purpose::Counts, key),
    };
    let sim = Simulation {
        likelihood: LikelihoodKind::Gaussian,
        subsample: 4,
        noise_sd: 1.0,
        offset: 0.0,
        trials: 1,
        mean: 0.0,
    };
    Dataset::simulate(prior, sim, &mut streams).unwrap()
}

#[test]
fn the_kernels_take_the_embeddings_the_tests_describe() {
    let [exponential, matern] = kernels().map(|k| prior(k).embedding().unwrap());
    assert_eq!((exponential.torus_x, exponential.torus_y), (16, 8));
    assert_eq!((matern.torus_x, matern.torus_y), (20, 16));
}

/// The Kalman form through the circulant prior's covariances equals the information form
/// S = (C^-1 + G^T G / s^2)^-1, m = S G^T v / s^2 computed densely from the kernel matrix.
#[test]
fn exact_posterior_equals_the_dense_information_form() {
    for kernel in kernels() {
        let prior = prior(kernel);
        let data = simulate(prior.as_ref(), &format!("dense;{}", kernel.kind));
        let s = 0.7;
        let exact = gaussian_posterior(prior.as_ref(), 0.3, &data.observed, s).unwrap();
        let c = dense_kernel_matrix(grid(), kernel);
        let n = grid().cells();
        let mut precision = c.llt(Side::Lower).unwrap().inverse();
        let mut rhs = faer::Mat::<f64>::zeros(n, 1);
        for (a, &cell) in data.observed.cells.iter().enumerate() {
            precision[(cell, cell)] += 1.0 / (s * s);
            rhs[(cell, 0)] = (data.observed.values[a] - 0.3) / (s * s);
        }
        let cov = precision.llt(Side::Lower).unwrap().inverse();
        let mean = &cov * &rhs;
        for k in 0..n {
            let (em, es) = (exact.mean[k], exact.sd[k]);
            assert!(
                (em - 0.3 - mean[(k, 0)]).abs() < 1e-8,
                "{kernel:?} mean at {k}"
            );
            assert!(
                (es - cov[(k, k)].sqrt()).abs() < 1e-8,
                "{kernel:?} sd at {k}"
            );
        }
    }
}

/// The check's threshold on |estimate - exact| / MCSE.
///
/// Each kernel compares the mean and the sd of every cell: 2 x 40 = 80 z-scores per kernel,
/// 160 per kind; the family is budgeted for up to 10 Markov chain kinds, 1,600 z-scores (the
/// test below asserts there are no more). The MCSE is a batch-means estimate over 4 chains x 20 batches,
/// so an exact sampler's z-score is close to Student's t with 79 degrees of freedom. A
/// two-sided level of 1e-4 / 1,600 = 6.25e-8 per z-score is t_79 = 6.0: by Bonferroni the test
/// raises a false alarm in at most 1 run in 10,000 with correct samplers.
const EXACT_LIMIT: f64 = 6.0;
const MAX_KINDS: usize = 10;

/// Iterations per chain: enough for batches of at least ~50 autocorrelation times.
fn settings(kind: SamplerKind) -> SamplerSettings {
    let (beta, iterations) = match kind {
        SamplerKind::Grw => (0.1, 600_000),
        SamplerKind::Pcn => (0.35, 200_000),
        _ => (0.2, 100_000),
    };
    support::four_chains(kind, beta, iterations)
}

fn check_kind(kind: SamplerKind) {
    let settings = settings(kind);
    let spec = settings.check().expect("valid settings");
    let mut report = Vec::new();
    for kernel in kernels() {
        let prior = prior(kernel);
        let key = format!("exact;{}", kernel.kind);
        let data = simulate(prior.as_ref(), &key);
        let exact = gaussian_posterior(prior.as_ref(), 0.0, &data.observed, 1.0).unwrap();
        let likelihood = Likelihood::new(
            LikelihoodKind::Gaussian,
            data.observed.values.clone(),
            1.0,
            0.0,
        );
        let target = Target {
            prior: prior.as_ref(),
            likelihood: &likelihood,
            observed: Observed::Cells(&data.observed.cells),
            mean: 0.0,
        };
        let request = RunRequest {
            exact_mean: Some(&exact.mean),
            ..RunRequest::new(target, &spec)
        };
        let rngs = (0..spec.chains())
            .map(|c| {
                let key = format!("{key};{kind};chain={c}");
                ChainRng::new(
                    stream(SEED, Purpose::Chain, &key),
                    stream(SEED, Purpose::Acceptance, &key),
                )
            })
            .collect();
        let out = run_kind(&spec, &request, rngs);
        if !kind.is_markov_chain() {
            // The Laplace approximation is the posterior on gaussian data: no Monte Carlo error,
            // so its mode and sds must equal the exact ones to 1e-8 (relative to the largest).
            let relative = |est: &[f64], reference: &[f64]| {
                let scale = reference.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let worst = (0..est.len())
                    .map(|k| (est[k] - reference[k]).abs())
                    .fold(0.0, f64::max);
                worst / scale
            };
            let (mean_error, sd_error) = (
                relative(&out.post_mean, &exact.mean),
                relative(&out.post_sd, &exact.sd),
            );
            eprintln!(
                "{} {kind}: mode {mean_error:.1e}, sd {sd_error:.1e}",
                kernel.kind
            );
            assert!(
                mean_error < 1e-8 && sd_error < 1e-8,
                "{} {kind}: mode {mean_error:e}, sd {sd_error:e}",
                kernel.kind
            );
            continue;
        }
        let worst = |est: &[f64], reference: &[f64], se: &[f64]| {
            (0..est.len())
                .map(|k| (est[k] - reference[k]).abs() / se[k])
                .fold(0.0, f64::max)
        };
        let mean_z = worst(
            &out.post_mean,
            &exact.mean,
            out.post_mean_mcse.as_ref().unwrap(),
        );
        let sd_z = worst(&out.post_sd, &exact.sd, out.post_sd_mcse.as_ref().unwrap());
        report.push(format!(
            "{} l={} {kind}: acceptance {:.2}, max |mean - exact| = {mean_z:.2} MCSE, \
             max |sd - exact| = {sd_z:.2} MCSE",
            kernel.kind, kernel.length_scale, out.acceptance_rate
        ));
        eprintln!("{}", report.last().unwrap());
        assert!(
            mean_z < EXACT_LIMIT && sd_z < EXACT_LIMIT,
            "{}",
            report.join("\n")
        );
    }
}

/// Only Markov chains spend the budget: an approximation (laplace, inla) is compared to 1e-8,
/// with no Monte Carlo error to raise a false alarm.
#[test]
fn the_false_alarm_budget_covers_every_kind() {
    let chains = SamplerKind::ALL.iter().filter(|k| k.is_markov_chain());
    assert!(chains.count() <= MAX_KINDS);
}

#[test]
fn grw_agrees_with_the_exact_posterior_under_embedded_kernels() {
    check_kind(SamplerKind::Grw);
}

#[test]
fn pcn_agrees_with_the_exact_posterior_under_embedded_kernels() {
    check_kind(SamplerKind::Pcn);
}

/// Every other kind (elliptical, MALA, pCN-Langevin, and any kind added later).
#[test]
fn every_other_kind_agrees_with_the_exact_posterior_under_embedded_kernels() {
    for &kind in SamplerKind::ALL {
        if !matches!(kind, SamplerKind::Grw | SamplerKind::Pcn) {
            check_kind(kind);
        }
    }
}
