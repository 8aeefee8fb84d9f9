//! Every Markov kind against the exact probit, poisson, binomial and poisson-with-exposure
//! posteriors, and the error of the Laplace approximation measured against them.
//!
//! The references come from adaptive tensor Gauss-Hermite quadrature
//! (`fieldmc::model::quadrature`, accurate to 1e-9 by its unit tests) on four 2 x 2 grids,
//! simulated from the test's seed: probit labels under a prior of sd 2, poisson counts under a
//! prior of sd 1 and binomial successes of 5 trials each (logit link) under a prior of sd 2, two
//! observed cells each, and poisson counts with a per-cell exposure under a prior of sd 1, every
//! cell observed with its own exposure (0.4 to 6: the counts' log offsets span 2.7, so a kind
//! that gave every count one offset would miss the means by far more than their MCSEs), one
//! length scale across the grid. At the default seed the Laplace approximation misses the
//! posterior means by 0.44 (probit), 0.13 (poisson), 0.30 (binomial) and 0.15 (poisson with
//! exposure)
//! (see [`the_laplace_approximation_misses_the_exact_posterior_by_a_measured_error`]), dozens of
//! MCSEs, so a kind that sampled the Laplace gaussian instead of the posterior would fail here.
//!
//! Each Markov kind's posterior mean and sd of every cell are compared with the quadrature's in
//! units of their batch-means Monte Carlo standard errors (the driver's: 4 chains x 20 batches;
//! the sd's by the delta method on the batch means of u and u^2). 9 kinds x 4 problems x 4 cells
//! x 2 moments = 288 z-scores; each is close to Student's t with 79 degrees of freedom, and a
//! two-sided level of 1e-4 / 288 = 3.5e-7 per z-score is t_79 = 5.565
//! (`scipy.stats.t.isf(1e-4 / 288 / 2, 79)`): by Bonferroni the whole file raises a false alarm
//! in at most 1 run in 10,000 with correct samplers (the Laplace test is deterministic and adds
//! none). Adding a kind adds 32 z-scores, a problem 72: recompute. That the batch means are
//! nearly independent is checked too: a run whose batches are shorter than 20 autocorrelation
//! times fails (a chain that stuck for a stretch), since its MCSE, and so its z-scores, cannot be
//! trusted.
//!
//! Every kind with a step size adapts it during burn-in. gpcn (on probit) and mgrad aim at a
//! higher acceptance than their own defaults: at the defaults they become nearly independence
//! samplers on these posteriors and stick in the tails (their tests say why).
//! `bench/quadrature_seeds.sh` measures the false-alarm rate over 200 seeds
//! (`FIELDMC_QUADRATURE_SEED`, new data and chains at each; `bench/results/quadrature_seeds.csv`,
//! all four problems): no failure; the largest of the 57,600 z-scores was 4.42 (4.67 would be the
//! median largest of as many independent t_79 draws; the z-scores of one run are correlated, the
//! cells being so); the shortest batches were 36 autocorrelation times long (mala and pcnl on the
//! exposure problem; 76 on poisson, 173 on probit, 213 on binomial).

mod support;

use std::sync::OnceLock;

use fieldmc::model::data::{DataStreams, Dataset, Simulation, draw_prior_field};
use fieldmc::model::quadrature::{self, QuadraturePosterior};
use fieldmc::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Target,
};
use fieldmc::sampler::{
    ChainRng, Functional, InlaStrategy, RunOutput, RunRequest, SamplerKind, SamplerSettings,
    run_kind,
};
use fieldmc::streams::{Purpose, stream};
use rand_distr::{Distribution, Poisson};

/// The seed the test runs at unless `FIELDMC_QUADRATURE_SEED` says otherwise.
const DEFAULT_SEED: u64 = 7;

/// The seed of the data and the chains; `FIELDMC_QUADRATURE_SEED` overrides it, to measure the
/// false-alarm rate over many seeds (not in CI).
fn seed() -> u64 {
    std::env::var("FIELDMC_QUADRATURE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

/// Gauss-Hermite points per whitened dimension of the reference (50^4 = 6.25 million nodes), and
/// of the coarser rule it is checked against (the unit tests of the quadrature module find the
/// two within 1e-9 of each other on problems like these).
const REFERENCE_POINTS: usize = 50;
const CHECK_POINTS: usize = 40;

/// The largest difference allowed between the two rules in any cell's mean or sd, at any seed:
/// 1e-4 of the smallest MCSE here (about 1e-3), so the reference is exact for this test.
const REFERENCE_AGREEMENT: f64 = 1e-7;

/// One test problem: the prior, the data, the functional the job reports and the quadrature
/// answer.
struct Problem {
    /// The problem's name in messages and stream keys: the likelihood's, or
    /// `poisson-exposure`.
    name: String,
    prior: KroneckerPrior,
    likelihood: Likelihood,
    cells: Vec<usize>,
    functional: Functional,
    exact: QuadraturePosterior,
}

/// Prior sd 2 for probit and binomial (labels and a few trials carry little information, so
/// the posterior is far from gaussian only when the prior is wide), 1 for poisson (counts of a
/// few, offset 0); binomial cells have [`BINOMIAL_TRIALS`] trials each; length scale 1 on the
/// unit square's 2 x 2 grid (neighbours correlated 0.61); half the cells observed.
fn problem(kind: LikelihoodKind, seed: u64) -> Problem {
    let variance = match kind {
        LikelihoodKind::Probit | LikelihoodKind::Binomial => 4.0,
        _ => 1.0,
    };
    let kernel = KernelSpec::squared_exponential(1.0, variance);
    let prior = KroneckerPrior::new(Grid::new(2), kernel).unwrap();
    let simulation = Simulation {
        likelihood: kind,
        subsample: 2,
        noise_sd: 1.0,
        offset: 0.0,
        trials: BINOMIAL_TRIALS,
        mean: 0.0,
    };
    let key = format!("quadrature;{kind}");
    let mut streams = DataStreams::keyed(seed, &key);
    let data = Dataset::simulate(&prior, simulation, &mut streams).unwrap();
    let likelihood = Likelihood::of_observations(kind, &data.observed, 1.0, 0.0);
    // The functional the job reports for this likelihood.
    let functional = match kind {
        LikelihoodKind::Probit => Functional::PositiveProbability { noise_sd: 1.0 },
        LikelihoodKind::Binomial => Functional::success_probability(0.0, 4),
        _ => Functional::expected_count(0.0, 4),
    };
    let cells = data.observed.cells;
    let exact = exact_posterior(&prior, &likelihood, &cells, &functional);
    Problem {
        name: kind.to_string(),
        prior,
        likelihood,
        cells,
        functional,
        exact,
    }
}

/// The exposure of each cell of the exposure problem: a spread of 15 (log offsets from -0.92 to
/// 1.79), every cell observed.
const EXPOSURES: [f64; 4] = [0.4, 1.0, 2.5, 6.0];

/// Poisson counts with a per-cell exposure: the truth a draw from the prior of sd 1 (length
/// scale 1, as for the others), cell c's count Poisson(E_c exp(u_c)), and the likelihood and
/// functional with the log offsets log E_c, as a job with `data.exposure` builds them.
fn exposure_problem(seed: u64) -> Problem {
    let kernel = KernelSpec::squared_exponential(1.0, 1.0);
    let prior = KroneckerPrior::new(Grid::new(2), kernel).unwrap();
    let key = "quadrature;poisson-exposure";
    let truth = draw_prior_field(&prior, &mut stream(seed, Purpose::Truth, key));
    let mut draws = stream(seed, Purpose::Counts, key);
    let counts: Vec<f64> = truth
        .iter()
        .zip(EXPOSURES)
        .map(|(u, e)| Poisson::new(e * u.exp()).unwrap().sample(&mut draws))
        .collect();
    let offsets: Vec<f64> = EXPOSURES.iter().map(|e| e.ln()).collect();
    let likelihood =
        Likelihood::with_offsets(LikelihoodKind::Poisson, counts, 1.0, offsets.clone());
    let functional = Functional::ExpectedCount {
        offsets: offsets.into(),
    };
    let cells = vec![0, 1, 2, 3];
    let exact = exact_posterior(&prior, &likelihood, &cells, &functional);
    Problem {
        name: "poisson-exposure".into(),
        prior,
        likelihood,
        cells,
        functional,
        exact,
    }
}

/// The trials of each observed cell of the binomial problem.
const BINOMIAL_TRIALS: u64 = 5;

/// The quadrature answer of `REFERENCE_POINTS` points, checked against `CHECK_POINTS`.
fn exact_posterior(
    prior: &KroneckerPrior,
    likelihood: &Likelihood,
    cells: &[usize],
    functional: &Functional,
) -> QuadraturePosterior {
    let target = Target {
        prior,
        likelihood,
        observed: Observed::Cells(cells),
        mean: 0.0,
    };
    let reference = quadrature::posterior(&target, REFERENCE_POINTS, Some(functional)).unwrap();
    let check = quadrature::posterior(&target, CHECK_POINTS, Some(functional)).unwrap();
    let difference = largest_difference(&reference.mean, &check.mean)
        .max(largest_difference(&reference.sd, &check.sd));
    assert!(
        difference < REFERENCE_AGREEMENT,
        "{:?}: the quadrature of {REFERENCE_POINTS} and {CHECK_POINTS} points differ by \
         {difference:e}",
        likelihood.kind()
    );
    reference
}

fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The problems at `seed()`, built once per test process.
fn problems() -> &'static [Problem; 4] {
    static PROBLEMS: OnceLock<[Problem; 4]> = OnceLock::new();
    PROBLEMS.get_or_init(|| problems_at(seed()))
}

fn problems_at(seed: u64) -> [Problem; 4] {
    [
        problem(LikelihoodKind::Probit, seed),
        problem(LikelihoodKind::Poisson, seed),
        problem(LikelihoodKind::Binomial, seed),
        exposure_problem(seed),
    ]
}

impl Problem {
    fn target(&self) -> Target<'_> {
        Target {
            prior: &self.prior,
            likelihood: &self.likelihood,
            observed: Observed::Cells(&self.cells),
            mean: 0.0,
        }
    }

    /// Run `settings` on this problem, each chain with its own stream.
    fn run(&self, settings: &SamplerSettings, seed: u64) -> RunOutput {
        let spec = settings.check().expect("valid settings");
        let request = RunRequest {
            functional: Some(self.functional.clone()),
            ..RunRequest::new(self.target(), &spec)
        };
        let key = format!("quadrature;{};{}", self.name, spec.kind());
        run_kind(&spec, &request, chain_rngs(seed, &key, spec.chains()))
    }
}

fn chain_rngs(seed: u64, key: &str, chains: usize) -> Vec<ChainRng> {
    (0..chains)
        .map(|c| {
            let key = format!("{key};chain={c}");
            ChainRng::new(
                stream(seed, Purpose::Chain, &key),
                stream(seed, Purpose::Acceptance, &key),
            )
        })
        .collect()
}

/// The threshold on |estimate - exact| / MCSE: t_79 at a two-sided 1e-4 / 288 (module doc),
/// 5.565 rounded up.
const EXACT_LIMIT: f64 = 5.57;

/// Largest |estimate - exact| / MCSE over cells.
fn largest_z(estimate: &[f64], exact: &[f64], mcse: &[f64]) -> f64 {
    (0..estimate.len())
        .map(|k| (estimate[k] - exact[k]).abs() / mcse[k])
        .fold(0.0, f64::max)
}

fn settings(kind: SamplerKind, beta: f64, iterations: u64) -> SamplerSettings {
    support::four_chains(kind, beta, iterations)
}

/// `settings` with the step size adapted during burn-in towards `target` acceptance (`None`:
/// the kind's own target).
fn adapted(kind: SamplerKind, beta: f64, iterations: u64, target: Option<f64>) -> SamplerSettings {
    SamplerSettings {
        adapt: Some(true),
        target_acceptance: target,
        ..settings(kind, beta, iterations)
    }
}

/// The batch-means MCSE is trusted when a batch is at least this many autocorrelation times
/// long: the batch variance is then biased low by a few percent at most. The settings below give
/// batches of at least 36 autocorrelation times at every one of 200 seeds
/// (`bench/quadrature_seeds.sh`); a kind stuck for a stretch of its run falls far below.
const BATCH_AUTOCORRELATION_TIMES: f64 = 20.0;

/// The largest integrated autocorrelation time over cells, estimated as the kept iterations of
/// one chain over the effective sample size per chain, (sd / MCSE of the mean)^2 / chains.
fn largest_autocorrelation_time(out: &RunOutput, settings: &SamplerSettings) -> f64 {
    let kept = (settings.iterations - settings.burn_in) as f64;
    let mcse = out.post_mean_mcse.as_ref().expect("batch-means MCSE");
    out.post_sd
        .iter()
        .zip(mcse)
        .map(|(sd, se)| kept * settings.chains as f64 / (sd / se).powi(2))
        .fold(0.0, f64::max)
}

/// One kind on the probit, the poisson and the binomial problem (settings in that order; the
/// poisson ones serve the exposure problem too): the largest z-score of the cells' means and sds
/// below [`EXACT_LIMIT`], each batch long enough for the MCSE.
fn check_kind_against_the_quadrature(cases: [SamplerSettings; 3]) {
    let [probit, poisson, binomial] = cases;
    let cases = [probit, poisson.clone(), binomial, poisson];
    let mut report = Vec::new();
    let mut worst: f64 = 0.0;
    for (problem, settings) in problems().iter().zip(cases) {
        let out = problem.run(&settings, seed());
        let exact = &problem.exact;
        let mean_z = largest_z(
            &out.post_mean,
            &exact.mean,
            out.post_mean_mcse.as_ref().unwrap(),
        );
        let sd_z = largest_z(&out.post_sd, &exact.sd, out.post_sd_mcse.as_ref().unwrap());
        let tau = largest_autocorrelation_time(&out, &settings);
        let batch = (settings.iterations - settings.burn_in) / 20;
        report.push(format!(
            "{} {} beta={}: max |mean - exact| = {mean_z:.2} MCSE, max |sd - exact| = \
             {sd_z:.2} MCSE (acceptance {:.2}, step {:.3}; batches of {batch} iterations, \
             {:.0} autocorrelation times)",
            problem.name,
            settings.kind,
            settings.beta,
            out.acceptance_rate,
            out.mean_step_size().unwrap_or(f64::NAN),
            batch as f64 / tau,
        ));
        eprintln!("{}", report.last().unwrap());
        assert!(
            batch as f64 >= BATCH_AUTOCORRELATION_TIMES * tau,
            "{}: batches too short for the MCSE",
            report.last().unwrap()
        );
        worst = worst.max(mean_z).max(sd_z);
    }
    assert!(worst < EXACT_LIMIT, "{}", report.join("\n"));
}

// Every kind with a step size adapts it during burn-in (the data, and so the posterior's scale,
// change with the seed); iterations give batches of hundreds of autocorrelation times.

#[test]
fn grw_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Grw;
    check_kind_against_the_quadrature([
        adapted(Grw, 1.0, 200_000, None),
        adapted(Grw, 1.0, 200_000, None),
        adapted(Grw, 1.0, 200_000, None),
    ]);
}

#[test]
fn pcn_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Pcn;
    check_kind_against_the_quadrature([
        adapted(Pcn, 0.8, 200_000, None),
        adapted(Pcn, 0.8, 200_000, None),
        adapted(Pcn, 0.8, 200_000, None),
    ]);
}

#[test]
fn elliptical_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Elliptical;
    check_kind_against_the_quadrature([
        settings(Elliptical, 0.2, 100_000),
        settings(Elliptical, 0.2, 100_000),
        settings(Elliptical, 0.2, 100_000),
    ]);
}

#[test]
fn mala_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Mala;
    check_kind_against_the_quadrature([
        adapted(Mala, 0.5, 100_000, None),
        adapted(Mala, 0.5, 100_000, None),
        adapted(Mala, 0.5, 100_000, None),
    ]);
}

#[test]
fn pcnl_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Pcnl;
    check_kind_against_the_quadrature([
        adapted(Pcnl, 0.5, 100_000, None),
        adapted(Pcnl, 0.5, 100_000, None),
        adapted(Pcnl, 0.5, 100_000, None),
    ]);
}

/// NUTS adapts its own step size and mass matrix during burn-in (beta is unused).
#[test]
fn nuts_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Nuts;
    check_kind_against_the_quadrature([
        settings(Nuts, 0.2, 20_000),
        settings(Nuts, 0.2, 20_000),
        settings(Nuts, 0.2, 20_000),
    ]);
}

/// gpcn proposes an AR(1) step reversible for the Laplace gaussian q, accepted with the ratio of
/// w = posterior / q at the two points. Aiming at its own target acceptance (0.25), which is below
/// its acceptance at the largest step, its step goes to 1: an independence sampler from q. On the
/// probit posterior, whose tail on the side the labels agree with is the prior's and wider than
/// q's, w is unbounded there and the independence sampler sticks for long stretches (in the first
/// run of `bench/quadrature_seeds.sh`, 3 seeds in 200 left batches of only 9 to 47
/// autocorrelation times; with a curvature ratio d >= 1 in that direction its asymptotic variance
/// is infinite). Aiming at 0.9 keeps the step between 0.3 and 0.8 and the moves local, at the
/// price of autocorrelation times up to about 130 (so twice the iterations). On the poisson
/// posterior the kind's target is kept and its step goes to 1 as well: the region where w is
/// large lies many sds below the mode there, and 200 seeds saw no sticky stretch, whereas a step
/// fixed below 1 can leave a chain that starts in the far tail (a prior draw, exp(u) far below a
/// count of 29) stuck at its start, every move towards the mode lowering w by orders of
/// magnitude. The binomial problem is run as the probit one: where a cell's successes are all
/// of its trials (or none), the posterior's tail on that side is the prior's, as with labels.
#[test]
fn gpcn_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Gpcn;
    check_kind_against_the_quadrature([
        adapted(Gpcn, 0.5, 200_000, Some(0.9)),
        adapted(Gpcn, 0.5, 100_000, None),
        adapted(Gpcn, 0.5, 200_000, Some(0.9)),
    ]);
}

/// mgrad aims at 0.7 rather than its own 0.55: at 0.55 its step delta grows to 80 on some
/// poisson posteriors, where its proposal is nearly a fresh prior draw shifted by the gradient,
/// and it sticks (batches of 8 autocorrelation times at one seed in 200).
#[test]
fn mgrad_agrees_with_the_quadrature_posterior() {
    use SamplerKind::Mgrad;
    check_kind_against_the_quadrature([
        adapted(Mgrad, 0.5, 100_000, Some(0.7)),
        adapted(Mgrad, 0.5, 100_000, Some(0.7)),
        adapted(Mgrad, 0.5, 100_000, Some(0.7)),
    ]);
}

#[test]
fn laplace_hmc_agrees_with_the_quadrature_posterior() {
    use SamplerKind::LaplaceHmc;
    check_kind_against_the_quadrature([
        settings(LaplaceHmc, 0.5, 20_000),
        settings(LaplaceHmc, 0.5, 20_000),
        settings(LaplaceHmc, 0.5, 20_000),
    ]);
}

/// How far the Laplace approximation may be from the exact posterior at the default seed's data:
/// the largest error over cells in the mean, the sd and the functional's mean, and the error of
/// the log evidence.
struct LaplaceBounds {
    mean: f64,
    sd: f64,
    functional: f64,
    log_evidence: f64,
}

/// Measured at the default seed: probit 0.440 (mean), 0.113 (sd), 0.061 (Phi(u)), 0.083 (log
/// evidence); poisson 0.130, 0.0071, 0.224 (exp(u)), 0.0059; binomial 0.305, 0.073, 0.031
/// (logistic(u)), 0.049; poisson with exposure 0.146, 0.0082, 0.198 (E exp(u)), 0.0130. The
/// bounds leave a margin of about a third; a Laplace kind that broke (a wrong mode, curvature or
/// sd) would leave them, and one within 1e-6 of the exact means could not be the approximation.
fn laplace_bounds(problem: &str) -> LaplaceBounds {
    match problem {
        "probit" => LaplaceBounds {
            mean: 0.6,
            sd: 0.15,
            functional: 0.08,
            log_evidence: 0.11,
        },
        "binomial" => LaplaceBounds {
            mean: 0.4,
            sd: 0.1,
            functional: 0.04,
            log_evidence: 0.065,
        },
        "poisson" => LaplaceBounds {
            mean: 0.17,
            sd: 0.01,
            functional: 0.3,
            log_evidence: 0.008,
        },
        "poisson-exposure" => LaplaceBounds {
            mean: 0.2,
            sd: 0.011,
            functional: 0.27,
            log_evidence: 0.018,
        },
        other => panic!("no Laplace bounds for the problem {other}"),
    }
}

/// `sampler.kind = "laplace"` through the same door as the samplers, against the quadrature at
/// the default seed's data (whatever `FIELDMC_QUADRATURE_SEED` says: the approximation's error
/// is a property of the data, and deterministic): its error is measured, bounded with margin,
/// and seen (the means differ from the exact ones by more than 1e-6, far above the quadrature's
/// 1e-9). `inla` with fixed hyperparameters and the gaussian strategy is the Laplace
/// approximation, number for number; with its default, simplified Laplace strategy its cells'
/// and functional's means and its log evidence are closer to the exact ones than the Laplace
/// approximation's (bench/inla_quadrature.sh tables what this prints). No random stream is read,
/// so there is no false-alarm rate to state.
#[test]
fn the_laplace_approximation_misses_the_exact_posterior_by_a_measured_error() {
    let at_default_seed;
    let problems = if seed() == DEFAULT_SEED {
        problems()
    } else {
        at_default_seed = problems_at(DEFAULT_SEED);
        &at_default_seed
    };
    for problem in problems {
        let exact = &problem.exact;
        let laplace = problem.run(&SamplerSettings::new(SamplerKind::Laplace), DEFAULT_SEED);
        let functional = laplace.functional_mean.as_ref().unwrap();
        let approximation = laplace.approximation.as_ref().unwrap();
        assert!(approximation.error.is_none(), "{:?}", approximation.error);
        let errors = LaplaceBounds {
            mean: largest_difference(&laplace.post_mean, &exact.mean),
            sd: largest_difference(&laplace.post_sd, &exact.sd),
            functional: largest_difference(functional, exact.functional_mean.as_ref().unwrap()),
            log_evidence: (approximation.log_evidence - exact.log_evidence).abs(),
        };
        let report = format!(
            "{} laplace: largest error in the mean {:.4}, sd {:.4}, functional {:.4}, \
             log evidence {:.4} (exact means {:.3?}, sds {:.3?})",
            problem.name,
            errors.mean,
            errors.sd,
            errors.functional,
            errors.log_evidence,
            exact.mean,
            exact.sd,
        );
        eprintln!("{report}");
        let bounds = laplace_bounds(&problem.name);
        assert!(
            errors.mean > 1e-6,
            "{report}: the test does not see the approximation"
        );
        assert!(
            errors.mean < bounds.mean
                && errors.sd < bounds.sd
                && errors.functional < bounds.functional
                && errors.log_evidence < bounds.log_evidence,
            "{report}"
        );
        let inla = problem.run(&inla_settings(InlaStrategy::Gaussian), DEFAULT_SEED);
        assert_eq!(inla.post_mean, laplace.post_mean, "{}", problem.name);
        assert_eq!(inla.post_sd, laplace.post_sd, "{}", problem.name);
        assert_eq!(
            inla.functional_mean, laplace.functional_mean,
            "{}",
            problem.name
        );
        // The simplified Laplace correction (inla's default) moves every cell's mean towards the
        // exact one: its largest error is below the gaussian's, and so is its functional's.
        let corrected = problem.run(&SamplerSettings::new(SamplerKind::Inla), DEFAULT_SEED);
        let corrected_functional = corrected.functional_mean.as_ref().unwrap();
        let corrected_errors = (
            largest_difference(&corrected.post_mean, &exact.mean),
            largest_difference(
                corrected_functional,
                exact.functional_mean.as_ref().unwrap(),
            ),
        );
        eprintln!(
            "{} simplified Laplace: largest error in the mean {:.4} (gaussian {:.4}), functional \
             {:.4} (gaussian {:.4}); means {:.4?}, gaussian {:.4?}, exact {:.4?}",
            problem.name,
            corrected_errors.0,
            errors.mean,
            corrected_errors.1,
            errors.functional,
            corrected.post_mean,
            laplace.post_mean,
            exact.mean,
        );
        assert!(
            corrected_errors.0 < errors.mean && corrected_errors.1 < errors.functional,
            "{}: the correction did not bring the marginals closer",
            problem.name
        );
        // And its second-order correction of the evidence brings that closer too.
        let evidence = corrected.approximation.as_ref().unwrap().log_evidence;
        let evidence_error = (evidence - exact.log_evidence).abs();
        eprintln!(
            "{} evidence: error of the corrected log evidence {evidence_error:.4} (laplace {:.4})",
            problem.name, errors.log_evidence
        );
        assert!(
            evidence_error < errors.log_evidence,
            "{}: the corrected evidence is not closer",
            problem.name
        );
    }
}

/// inla's settings with the cells' marginals by `strategy`.
fn inla_settings(strategy: InlaStrategy) -> SamplerSettings {
    SamplerSettings {
        inla_strategy: Some(strategy),
        ..SamplerSettings::new(SamplerKind::Inla)
    }
}
