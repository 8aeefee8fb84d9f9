//! The sampling engine against exact answers: prior invariance of pCN, agreement with the exact
//! gaussian posterior within Monte Carlo error, and the acceptance rates of the source material.
//! Seeds are fixed, so every run is deterministic; tolerances come from Monte Carlo standard
//! errors (exact ones for the AR(1) of pCN under a flat likelihood, batch means otherwise).

use fieldmc::model::data::{DataStreams, Dataset, Simulation};
use fieldmc::model::exact::gaussian_posterior;
use fieldmc::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
use fieldmc::sampler::kernel::{Kernel, Proposal, Target, accept};
use fieldmc::sampler::run::ChainStreams;
use fieldmc::sampler::{RunOutput, RunRequest, SamplerKind, SamplerSpec, run};
use fieldmc::streams::{Purpose, stream};
use rand_distr::{Distribution, StandardNormal};

fn prior(d: usize, l: f64) -> KroneckerPrior {
    let kernel = KernelSpec {
        length_scale: l,
        variance: 1.0,
    };
    KroneckerPrior::new(Grid::new(d), kernel).unwrap()
}

fn simulate(prior: &KroneckerPrior, kind: LikelihoodKind, key: &str) -> Dataset {
    let mut streams = DataStreams {
        truth: stream(7, Purpose::Truth, key),
        observations: stream(7, Purpose::Observations, key),
        noise: stream(7, Purpose::Noise, key),
        counts: stream(7, Purpose::Counts, key),
    };
    let sim = Simulation {
        likelihood: kind,
        subsample: 4,
        noise_sd: 1.0,
        offset: 0.0,
    };
    Dataset::simulate(prior, sim, &mut streams).unwrap()
}

fn chain_streams(key: &str, chains: usize) -> Vec<ChainStreams> {
    (0..chains)
        .map(|c| ChainStreams {
            proposals: stream(7, Purpose::Chain, &format!("{key};chain={c}")),
            acceptance: stream(7, Purpose::Acceptance, &format!("{key};chain={c}")),
        })
        .collect()
}

/// Run `spec` on gaussian data (noise sd 1), each chain with its own stream under `key`.
fn run_gaussian(
    prior: &KroneckerPrior,
    data: &Dataset,
    spec: &SamplerSpec,
    exact_mean: Option<&[f64]>,
    key: &str,
) -> RunOutput {
    let likelihood = Likelihood::new(
        LikelihoodKind::Gaussian,
        data.observed.values.clone(),
        1.0,
        0.0,
    );
    let request = RunRequest {
        target: Target {
            prior,
            likelihood: &likelihood,
            observed_cells: &data.observed.cells,
        },
        kernel: Kernel::new(spec.kind, spec.beta),
        spec,
        functional: None,
        exact_mean,
        progress: None,
    };
    let kind = spec.kind;
    run(
        &request,
        chain_streams(&format!("{key};{kind:?}"), spec.chains),
    )
}

/// pCN with a flat likelihood is an exact AR(1) in xi with rho = sqrt(1 - beta^2), which
/// leaves N(0, I) invariant. The exact Monte Carlo variance of the mean of T draws of an AR(1)
/// is (1 + rho) / (1 - rho) / T; of the mean of xi^2 it is 2 (1 + rho^2) / (1 - rho^2) / T.
#[test]
fn pcn_under_a_flat_likelihood_leaves_the_prior_invariant() {
    let prior = prior(6, 0.3);
    let flat = Likelihood::new(LikelihoodKind::Gaussian, Vec::new(), 1.0, 0.0);
    let target = Target {
        prior: &prior,
        likelihood: &flat,
        observed_cells: &[],
    };
    let beta: f64 = 0.3;
    let rho = (1.0 - beta * beta).sqrt();
    let kernel = Kernel::new(SamplerKind::Pcn, beta);
    let mut rng = stream(11, Purpose::Chain, "flat");
    let mut state = kernel.init(&target, &mut rng);
    let n = prior.grid().cells();
    let (mut z, mut lz, mut scratch) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut proposal = Proposal::new(0);
    let t = 200_000;
    let (mut sum, mut sum_sq) = (vec![0.0; n], vec![0.0; n]);
    let mut accepted = 0;
    for _ in 0..t {
        for zk in z.iter_mut() {
            *zk = StandardNormal.sample(&mut rng);
        }
        prior.apply_sqrt(&z, &mut lz, &mut scratch);
        let log_ratio = kernel.log_acceptance(&state, &z, &lz, &target, &mut proposal);
        if accept(log_ratio, &mut rng) {
            accepted += 1;
            kernel.move_to_proposal(&mut state, &z, &lz, &proposal);
        }
        for k in 0..n {
            sum[k] += state.xi[k];
            sum_sq[k] += state.xi[k] * state.xi[k];
        }
    }
    assert_eq!(accepted, t, "a flat likelihood accepts every pCN move");
    let se_mean = ((1.0 + rho) / (1.0 - rho) / t as f64).sqrt();
    let se_square = (2.0 * (1.0 + rho * rho) / (1.0 - rho * rho) / t as f64).sqrt();
    for k in 0..n {
        let mean = sum[k] / t as f64;
        let second = sum_sq[k] / t as f64;
        assert!(
            mean.abs() < 4.0 * se_mean,
            "xi[{k}] mean {mean} (se {se_mean})"
        );
        assert!(
            (second - 1.0).abs() < 4.0 * se_square,
            "xi[{k}] second moment {second} (se {se_square})"
        );
    }
}

/// Largest |estimate - exact| / MCSE over cells, for the mean and for the sd.
fn exact_agreement(d: usize, l: f64, kind: SamplerKind, beta: f64, iterations: u64) -> (f64, f64) {
    let prior = prior(d, l);
    let key = format!("exact;d={d};l={l}");
    let data = simulate(&prior, LikelihoodKind::Gaussian, &key);
    let exact = gaussian_posterior(&prior, &data.observed, 1.0).unwrap();
    let spec = SamplerSpec {
        kind,
        beta,
        iterations,
        burn_in: iterations / 10,
        thin: 100,
        chains: 4,
    };
    let out = run_gaussian(&prior, &data, &spec, Some(&exact.mean), &key);
    let mcse_mean = out.post_mean_mcse.unwrap();
    let mcse_sd = out.post_sd_mcse.unwrap();
    let worst = |est: &[f64], reference: &[f64], se: &[f64]| {
        (0..est.len())
            .map(|k| (est[k] - reference[k]).abs() / se[k])
            .fold(0.0, f64::max)
    };
    (
        worst(&out.post_mean, &exact.mean, &mcse_mean),
        worst(&out.post_sd, &exact.sd, &mcse_sd),
    )
}

#[test]
fn both_samplers_agree_with_the_exact_gaussian_posterior_within_4_mcse() {
    // Step sizes give acceptance rates of roughly 0.25-0.5; iterations give batches of at
    // least 50 autocorrelation times.
    let cases = [
        (8, 0.1, SamplerKind::Pcn, 0.35, 200_000),
        (8, 0.3, SamplerKind::Pcn, 0.35, 200_000),
        (8, 0.1, SamplerKind::Grw, 0.2, 400_000),
        (8, 0.3, SamplerKind::Grw, 0.2, 400_000),
        (16, 0.1, SamplerKind::Pcn, 0.2, 400_000),
        (16, 0.3, SamplerKind::Pcn, 0.25, 400_000),
        (16, 0.1, SamplerKind::Grw, 0.1, 1_000_000),
        (16, 0.3, SamplerKind::Grw, 0.1, 1_000_000),
    ];
    let mut report = Vec::new();
    for (d, l, kind, beta, iterations) in cases {
        let (mean_z, sd_z) = exact_agreement(d, l, kind, beta, iterations);
        report.push(format!(
            "D={d} l={l} {kind:?} beta={beta}: max |mean - exact| = {mean_z:.2} MCSE, \
             max |sd - exact| = {sd_z:.2} MCSE"
        ));
        eprintln!("{}", report.last().unwrap());
        assert!(mean_z < 4.0 && sd_z < 4.0, "{}", report.join("\n"));
    }
}

/// Mean acceptance over ten simulated data sets at beta = 0.2, l = 0.3, f = 4, s = 1, T = 10^4.
fn mean_acceptance(d: usize, kind: SamplerKind) -> f64 {
    let prior = prior(d, 0.3);
    let rates: Vec<f64> = (0..10)
        .map(|replicate| {
            let key = format!("acceptance;d={d};replicate={replicate}");
            let data = simulate(&prior, LikelihoodKind::Gaussian, &key);
            let spec = SamplerSpec {
                kind,
                beta: 0.2,
                iterations: 10_000,
                burn_in: 0,
                thin: 100,
                chains: 1,
            };
            run_gaussian(&prior, &data, &spec, None, &key).acceptance_rate
        })
        .collect();
    rates.iter().sum::<f64>() / rates.len() as f64
}

/// The ranges are the union of the coursework's reported figures and the design brief's
/// careful-implementation ranges for the model as written (see the design brief: the coursework
/// most likely had a slightly weaker likelihood; the model is not tuned to its figures).
#[test]
fn acceptance_rates_match_the_source_material() {
    let cases = [
        (4, SamplerKind::Grw, 0.64, 0.70),
        (4, SamplerKind::Pcn, 0.83, 0.90),
        (16, SamplerKind::Grw, 0.065, 0.10),
        (16, SamplerKind::Pcn, 0.43, 0.50),
    ];
    for (d, kind, low, high) in cases {
        let rate = mean_acceptance(d, kind);
        eprintln!("D={d} {kind:?}: mean acceptance {rate:.3} (expected {low}-{high})");
        assert!((low..=high).contains(&rate), "D={d} {kind:?}: {rate}");
    }
}
