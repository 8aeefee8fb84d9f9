//! The sampling engine against exact answers: prior invariance of pCN, agreement of every kind
//! with the exact gaussian posterior within Monte Carlo error, and the acceptance rates of the
//! source material. Seeds are fixed, so every run is deterministic; tolerances come from Monte
//! Carlo standard errors (exact ones for the AR(1) of pCN under a flat likelihood, batch means
//! otherwise), with the family-wise false-alarm rate of each test stated where it is set.

mod support;

use fieldmc::model::data::{DataStreams, Dataset, Simulation};
use fieldmc::model::exact::gaussian_posterior;
use fieldmc::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Target,
};
use fieldmc::sampler::pcn::Pcn;
use fieldmc::sampler::{
    ChainRng, ChainState, RunOutput, RunRequest, Sampler, SamplerKind, SamplerSettings, run_kind,
};
use fieldmc::streams::{Purpose, stream};

/// The engine's seed; `FIELDMC_ENGINE_SEED` overrides it, to measure the false-alarm rate of the
/// exact test over many seeds (not in CI).
fn seed() -> u64 {
    std::env::var("FIELDMC_ENGINE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
}

fn prior(d: usize, l: f64) -> KroneckerPrior {
    let kernel = KernelSpec::squared_exponential(l, 1.0);
    KroneckerPrior::new(Grid::new(d), kernel).unwrap()
}

fn simulate(prior: &KroneckerPrior, kind: LikelihoodKind, key: &str) -> Dataset {
    let seed = seed();
    let mut streams = DataStreams {
        truth: stream(seed, Purpose::Truth, key),
        observations: stream(seed, Purpose::Observations, key),
        noise: stream(seed, Purpose::Noise, key),
        counts: stream(seed, Purpose::Counts, key),
    };
    let sim = Simulation {
        likelihood: kind,
        subsample: 4,
        noise_sd: 1.0,
        offset: 0.0,
        trials: 1,
        mean: 0.0,
    };
    Dataset::simulate(prior, sim, &mut streams).unwrap()
}

fn chain_rngs(key: &str, chains: usize) -> Vec<ChainRng> {
    (0..chains)
        .map(|c| {
            let key = format!("{key};chain={c}");
            ChainRng::new(
                stream(seed(), Purpose::Chain, &key),
                stream(seed(), Purpose::Acceptance, &key),
            )
        })
        .collect()
}

/// Run `settings` on gaussian data (noise sd 1), each chain with its own stream under `key`.
fn run_gaussian(
    prior: &KroneckerPrior,
    data: &Dataset,
    settings: &SamplerSettings,
    exact_mean: Option<&[f64]>,
    key: &str,
) -> RunOutput {
    let likelihood = Likelihood::new(
        LikelihoodKind::Gaussian,
        data.observed.values.clone(),
        1.0,
        0.0,
    );
    let spec = settings.check().expect("valid settings");
    let target = Target {
        prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&data.observed.cells),
        mean: 0.0,
    };
    let request = RunRequest {
        exact_mean,
        ..RunRequest::new(target, &spec)
    };
    let kind = spec.kind();
    run_kind(
        &spec,
        &request,
        chain_rngs(&format!("{key};{kind}"), spec.chains()),
    )
}

/// pCN with a flat likelihood is an exact AR(1) in xi with rho = sqrt(1 - beta^2), which
/// leaves N(0, I) invariant. The exact Monte Carlo variance of the mean of T draws of an AR(1)
/// is (1 + rho) / (1 - rho) / T; of the mean of xi^2 it is 2 (1 + rho^2) / (1 - rho^2) / T.
/// 72 z-scores (36 coordinates, two moments), each two-sided at 1.4e-6 (|z| < 4.83): a
/// family-wise false-alarm rate of 1e-4.
#[test]
fn pcn_under_a_flat_likelihood_leaves_the_prior_invariant() {
    let prior = prior(6, 0.3);
    let flat = Likelihood::new(LikelihoodKind::Gaussian, Vec::new(), 1.0, 0.0);
    let target = Target {
        prior: &prior,
        likelihood: &flat,
        observed: Observed::Cells(&[]),
        mean: 0.0,
    };
    let beta: f64 = 0.3;
    let rho = (1.0 - beta * beta).sqrt();
    let sampler = Pcn::new(beta);
    let mut rng = ChainRng::new(
        stream(seed(), Purpose::Chain, "flat"),
        stream(seed(), Purpose::Acceptance, "flat"),
    );
    let n = prior.grid().cells();
    let mut xi = vec![0.0; n];
    rng.normals(&mut xi);
    let mut state = sampler.init(xi, &target);
    let t = 200_000;
    let (mut sum, mut sum_sq) = (vec![0.0; n], vec![0.0; n]);
    let mut moved = 0;
    for _ in 0..t {
        if sampler.step(&mut state, &target, &mut rng).moved {
            moved += 1;
        }
        for (k, &x) in state.position().iter().enumerate() {
            sum[k] += x;
            sum_sq[k] += x * x;
        }
    }
    assert_eq!(moved, t, "a flat likelihood accepts every pCN move");
    let se_mean = ((1.0 + rho) / (1.0 - rho) / t as f64).sqrt();
    let se_square = (2.0 * (1.0 + rho * rho) / (1.0 - rho * rho) / t as f64).sqrt();
    const LIMIT: f64 = 4.83;
    for k in 0..n {
        let mean = sum[k] / t as f64;
        let second = sum_sq[k] / t as f64;
        assert!(
            mean.abs() < LIMIT * se_mean,
            "xi[{k}] mean {mean} (se {se_mean})"
        );
        assert!(
            (second - 1.0).abs() < LIMIT * se_square,
            "xi[{k}] second moment {second} (se {se_square})"
        );
    }
}

/// Largest |estimate - exact| / MCSE over cells, for the mean and for the sd.
fn exact_agreement(d: usize, l: f64, settings: &SamplerSettings) -> (f64, f64) {
    let prior = prior(d, l);
    let key = format!("exact;d={d};l={l}");
    let data = simulate(&prior, LikelihoodKind::Gaussian, &key);
    let exact = gaussian_posterior(&prior, 0.0, &data.observed, 1.0).unwrap();
    let out = run_gaussian(&prior, &data, settings, Some(&exact.mean), &key);
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

/// The exact-posterior check's threshold on |estimate - exact| / MCSE.
///
/// Each case compares the mean and the sd of every cell: 2 x (64 + 64 + 256 + 256) = 1,280
/// z-scores per kind, 11,520 for the nine Markov chain kinds (grw, pcn, elliptical, mala, pcnl,
/// nuts, gpcn, mgrad, laplace_hmc; the laplace kind is deterministic and checked to 1e-8 below).
/// The MCSE is a batch-means estimate over 4 chains x 20 batches, so an exact sampler's z-score
/// is close to Student's t with 79 degrees of freedom (batches are at least ~50 autocorrelation
/// times long). A two-sided level of 1e-4 / 11,520 = 8.68e-9 per z-score is t_79 = 6.438
/// (scipy.stats.t.isf(1e-4 / 11520 / 2, 79)): by Bonferroni the whole test raises a false alarm
/// in at most 1 run in 10,000 with correct samplers. Adding a kind adds 1,280 z-scores: recompute
/// with the new count. (The earlier threshold, 4 on the largest of 2,560 z-scores, failed by
/// chance in about one run in seven.) Measured at 200 seeds (`bench/engine_seeds.sh`): no
/// failure, largest z-score 5.52 (`docs/samplers.md`).
const EXACT_LIMIT: f64 = 6.44;

fn settings(kind: SamplerKind, beta: f64, iterations: u64) -> SamplerSettings {
    support::four_chains(kind, beta, iterations)
}

/// Every kind on four gaussian problems: D = 8 and 16, short and long length scales.
fn check_kind_against_the_exact_posterior(cases: [(usize, f64, SamplerSettings); 4]) {
    let mut report = Vec::new();
    for (d, l, settings) in cases {
        let (mean_z, sd_z) = exact_agreement(d, l, &settings);
        report.push(format!(
            "D={d} l={l} {} beta={}: max |mean - exact| = {mean_z:.2} MCSE, \
             max |sd - exact| = {sd_z:.2} MCSE",
            settings.kind, settings.beta
        ));
        eprintln!("{}", report.last().unwrap());
        assert!(
            mean_z < EXACT_LIMIT && sd_z < EXACT_LIMIT,
            "{}",
            report.join("\n")
        );
    }
}

// Step sizes give acceptance rates of roughly 0.25-0.5 (or adapt to the kind's target);
// iterations give batches of at least 50 autocorrelation times.

#[test]
fn pcn_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Pcn;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Pcn, 0.35, 200_000)),
        (8, 0.3, settings(Pcn, 0.35, 200_000)),
        (16, 0.1, settings(Pcn, 0.2, 400_000)),
        (16, 0.3, settings(Pcn, 0.25, 400_000)),
    ]);
}

#[test]
fn grw_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Grw;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Grw, 0.2, 400_000)),
        (8, 0.3, settings(Grw, 0.2, 400_000)),
        (16, 0.1, settings(Grw, 0.1, 1_000_000)),
        (16, 0.3, settings(Grw, 0.1, 1_000_000)),
    ]);
}

#[test]
fn elliptical_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Elliptical;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Elliptical, 0.2, 100_000)),
        (8, 0.3, settings(Elliptical, 0.2, 100_000)),
        (16, 0.1, settings(Elliptical, 0.2, 200_000)),
        (16, 0.3, settings(Elliptical, 0.2, 200_000)),
    ]);
}

#[test]
fn mala_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Mala;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Mala, 0.2, 100_000)),
        (8, 0.3, settings(Mala, 0.2, 100_000)),
        (16, 0.1, settings(Mala, 0.2, 100_000)),
        (16, 0.3, settings(Mala, 0.2, 100_000)),
    ]);
}

#[test]
fn pcnl_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Pcnl;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Pcnl, 0.5, 100_000)),
        (8, 0.3, settings(Pcnl, 0.5, 100_000)),
        (16, 0.1, settings(Pcnl, 0.3, 100_000)),
        (16, 0.3, settings(Pcnl, 0.3, 100_000)),
    ]);
}

/// NUTS adapts its own step size and mass matrix during burn-in (beta is unused); its draws are
/// nearly independent on these targets, so far fewer iterations give batches of 50 or more
/// autocorrelation times.
#[test]
fn nuts_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Nuts;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Nuts, 0.2, 20_000)),
        (8, 0.3, settings(Nuts, 0.2, 20_000)),
        (16, 0.1, settings(Nuts, 0.2, 20_000)),
        (16, 0.3, settings(Nuts, 0.2, 20_000)),
    ]);
}

// gpcn and laplace_hmc propose from the Laplace approximation, which is exact on gaussian data:
// with every misfit eigenvalue kept the check would only see the proposal. Their default ranks
// leave out the eigenvalues below 0.01 (gpcn) and 0.5 (laplace_hmc), which the acceptance ratio
// (gpcn) or the gradient kicks (laplace_hmc) must then correct; mgrad's eigenbasis is the
// prior's, so gaussian data test its Langevin correction in full.

#[test]
fn gpcn_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Gpcn;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Gpcn, 0.5, 40_000)),
        (8, 0.3, settings(Gpcn, 0.5, 40_000)),
        (16, 0.1, settings(Gpcn, 0.5, 40_000)),
        (16, 0.3, settings(Gpcn, 0.5, 40_000)),
    ]);
}

#[test]
fn mgrad_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::Mgrad;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(Mgrad, 0.5, 100_000)),
        (8, 0.3, settings(Mgrad, 0.5, 100_000)),
        (16, 0.1, settings(Mgrad, 0.5, 100_000)),
        (16, 0.3, settings(Mgrad, 0.5, 100_000)),
    ]);
}

#[test]
fn laplace_hmc_agrees_with_the_exact_gaussian_posterior() {
    use SamplerKind::LaplaceHmc;
    check_kind_against_the_exact_posterior([
        (8, 0.1, settings(LaplaceHmc, 0.5, 20_000)),
        (8, 0.3, settings(LaplaceHmc, 0.5, 20_000)),
        (16, 0.1, settings(LaplaceHmc, 0.5, 20_000)),
        (16, 0.3, settings(LaplaceHmc, 0.5, 20_000)),
    ]);
}

/// Mean acceptance over ten simulated data sets at beta = 0.2, l = 0.3, f = 4, s = 1, T = 10^4.
fn mean_acceptance(d: usize, kind: SamplerKind) -> f64 {
    let prior = prior(d, 0.3);
    let rates: Vec<f64> = (0..10)
        .map(|replicate| {
            let key = format!("acceptance;d={d};replicate={replicate}");
            let data = simulate(&prior, LikelihoodKind::Gaussian, &key);
            let settings = SamplerSettings {
                beta: 0.2,
                iterations: 10_000,
                burn_in: 0,
                thin: 100,
                chains: 1,
                ..SamplerSettings::new(kind)
            };
            run_gaussian(&prior, &data, &settings, None, &key).acceptance_rate
        })
        .collect();
    rates.iter().sum::<f64>() / rates.len() as f64
}

/// The ranges are the union of the coursework's reported figures and the design brief's
/// careful-implementation ranges for the model as written (see the design brief: the coursework
/// most likely had a slightly weaker likelihood; the model is not tuned to its figures). The
/// spread here is over data sets, not Monte Carlo error, so these are the brief's ranges, not a
/// false-alarm-controlled statistical test.
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

/// `sampler.kind = "laplace"` through the same door as the samplers ([`run_kind`]): on gaussian
/// data the approximation is the posterior, so its `post_mean` (the mode) must equal the exact
/// mean and its `post_sd` the exact sd to 1e-8 (max-norm, relative to the largest value), with
/// no chains, no Monte Carlo errors, and Newton's iterations in its notes. Deterministic: no
/// random stream is read, so there is no false-alarm rate to state.
#[test]
fn the_laplace_kind_is_the_exact_gaussian_posterior() {
    let max_relative = |a: &[f64], b: &[f64]| {
        let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        worst / scale
    };
    for (d, l) in [(8, 0.1), (8, 0.3), (16, 0.1), (16, 0.3)] {
        let prior = prior(d, l);
        let key = format!("laplace;d={d};l={l}");
        let data = simulate(&prior, LikelihoodKind::Gaussian, &key);
        let exact = gaussian_posterior(&prior, 0.0, &data.observed, 1.0).unwrap();
        let out = run_gaussian(
            &prior,
            &data,
            &SamplerSettings::new(SamplerKind::Laplace),
            None,
            &key,
        );
        assert!(out.chains.is_empty(), "an approximation has no chains");
        assert!(out.post_mean_mcse.is_none() && out.post_sd_mcse.is_none());
        let mean_error = max_relative(&out.post_mean, &exact.mean);
        let sd_error = max_relative(&out.post_sd, &exact.sd);
        eprintln!("D={d} l={l}: mode {mean_error:.1e}, sd {sd_error:.1e}");
        assert!(mean_error < 1e-8, "D={d} l={l}: mode error {mean_error:e}");
        assert!(sd_error < 1e-8, "D={d} l={l}: sd error {sd_error:e}");
        assert!(out.notes.newton_iterations.is_some_and(|n| n >= 1));
        let approximation = out.approximation.expect("the Laplace kind says what it is");
        assert!(approximation.error.is_none() && approximation.log_evidence.is_finite());
    }
}
