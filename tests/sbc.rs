//! Simulation-based calibration: every sampler kind on gaussian, probit, poisson and binomial
//! (`sbc_small.toml`; the hyperparameter, coefficient and joint fixtures on the first three)
//! passes the
//! rank uniformity test at small D, and a deliberately wrong sampler (pCN accepting with the
//! posterior ratio, which counts the prior twice) fails it.

use std::path::Path;

use assert_cmd::Command;
use fieldmc::families::FamilySpec;
use fieldmc::families::latent_field::sbc::{FUNCTIONALS, run_sbc, run_sbc_with};
use fieldmc::families::latent_field::{FieldJob, LatentFieldSpec};
use fieldmc::model::{Target, Workspace};
use fieldmc::plan::plan;
use fieldmc::sampler::protocol::Position;
use fieldmc::sampler::protocol::{ChainRng, ChainState, Sampler, StepInfo};
use fieldmc::sampler::shared::PriorDraws;
use fieldmc::study::SbcSpec;
use polars::prelude::*;

/// The significance level of the uniformity test for each functional: 4 likelihoods x 9 kinds x
/// 7 functionals (5 probes, the field's mean, the log-likelihood) = 252 p-values, so by
/// Bonferroni a correct engine fails this test by chance in at most 1 run in 10,000. (Every
/// Markov chain kind: grw, pcn, elliptical, mala, pcnl, nuts, gpcn, mgrad, laplace_hmc; a new
/// kind adds 28 p-values.)
const ALPHA: f64 = 1e-4 / 252.0;

/// Jobs of the fixture: 4 likelihoods x 9 kinds.
const JOBS: usize = 36;

/// The fixture's sweep, which the other tests replace with their own.
const FIXTURE_SWEEP: &str = "\"model.likelihood\" = [\"gaussian\", \"probit\", \"poisson\", \"binomial\"]\n\"sampler.kind\" = [\"grw\", \"pcn\", \"elliptical\", \"mala\", \"pcnl\", \"nuts\", \"gpcn\", \"mgrad\", \"laplace_hmc\"]";

/// The latent-field settings of a point known to be one.
fn latent(spec: &FamilySpec) -> &LatentFieldSpec {
    match spec {
        FamilySpec::LatentField(spec) => spec,
        other => panic!("a {} point", other.family()),
    }
}

/// The engine's view of a planned latent-field job.
fn field_job(job: &fieldmc::plan::Job) -> FieldJob<'_> {
    FieldJob {
        header: &job.header,
        spec: latent(&job.spec),
    }
}

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/sbc_small.toml")
}

#[test]
fn every_sampler_is_calibrated_on_every_likelihood() {
    let out = tempfile::tempdir().unwrap();
    let jobs = run_calibration(&fixture(), out.path());
    assert_eq!(jobs.height(), JOBS, "4 likelihoods x 9 samplers");
    assert_calibrated(&jobs, &FUNCTIONALS, "sampler_kind", ALPHA);
    let ranks = ParquetReader::new(std::fs::File::open(out.path().join("ranks.parquet")).unwrap())
        .finish()
        .unwrap();
    assert_eq!(ranks.height(), JOBS * 100 * FUNCTIONALS.len());
    for column in ["job_id", "replication", "functional", "rank", "draws"] {
        assert!(ranks.column(column).is_ok(), "ranks.parquet lacks {column}");
    }
}

/// The significance level of the hyperparameter fixture's uniformity tests: 3 likelihoods x 3
/// updates x 10 functionals (5 probes, the field mean, the log-likelihood, the length scale, the
/// variance and the mean) = 90 p-values, so by Bonferroni a correct engine fails by chance in at most 1 run in
/// 10,000.
const ALPHA_HYPER: f64 = 1e-4 / 90.0;

/// Every `sampler.hyper` on every likelihood: the truth's length scale, variance and mean drawn
/// from their priors, ranked among the chains' draws with the field's functionals.
#[test]
fn every_hyperparameter_update_is_calibrated_on_every_likelihood() {
    let inferred = ["length_scale", "variance", "mean"];
    let jobs = assert_fixture_calibrated("sbc_hyper.toml", &inferred, "sampler_hyper", ALPHA_HYPER);
    assert_eq!(jobs, 9, "3 likelihoods x 3 updates");
}

/// The level per p-value of the coefficients' calibration: 3 likelihoods x 3 kinds x 9
/// functionals (the 7 above and the two coefficients) = 81 p-values, a family-wise false-alarm
/// rate of 1e-4 by Bonferroni.
const ALPHA_COEFFICIENTS: f64 = 1e-4 / 81.0;

#[test]
fn the_coefficients_are_calibrated_on_every_likelihood() {
    let inferred = ["coef_slope", "coef_bump"];
    let jobs = assert_fixture_calibrated(
        "sbc_covariates.toml",
        &inferred,
        "sampler_kind",
        ALPHA_COEFFICIENTS,
    );
    assert_eq!(jobs, 9, "3 likelihoods x 3 kinds");
}

/// The level per p-value of the joint chains' calibration: 3 likelihoods x 2 chains x 12
/// functionals (the 7 of the field, the three hyperparameters and the two coefficients) = 72
/// p-values, a family-wise false-alarm rate of 1e-4 by Bonferroni.
const ALPHA_JOINT: f64 = 1e-4 / 72.0;

/// The joint chains (`sampler.hyper = "joint"`, `"joint-spectral"`) on every likelihood: every hyperparameter and
/// every coefficient drawn from its prior and ranked among the chains' draws.
#[test]
fn the_joint_chain_is_calibrated_on_every_likelihood() {
    let jobs = assert_joint_calibrated("sbc_joint.toml", "sampler_hyper", ALPHA_JOINT);
    assert_eq!(jobs, 6, "3 likelihoods x 2 joint chains");
}

/// The level per p-value of the circulant joint chain's calibration: 3 likelihoods x 12
/// functionals = 36 p-values, a family-wise false-alarm rate of 1e-4 by Bonferroni.
const ALPHA_JOINT_CIRCULANT: f64 = 1e-4 / 36.0;

/// The joint chain on a circulant kernel (Matern 3/2, the field on the chain's torus) on every
/// likelihood: every hyperparameter (the length scale from its prior truncated where the torus
/// stops embedding the kernel) and every coefficient ranked among the chains' draws.
#[test]
fn the_circulant_joint_chain_is_calibrated_on_every_likelihood() {
    let jobs = assert_joint_calibrated(
        "sbc_joint_matern.toml",
        "model_kernel",
        ALPHA_JOINT_CIRCULANT,
    );
    assert_eq!(jobs, 3, "3 likelihoods");
}

/// The level per p-value of the nugget's calibration: 2 joint chains x 10 functionals (the 7 of
/// the field and the three hyperparameters) = 20 p-values, a family-wise false-alarm rate of 1e-4
/// by Bonferroni.
const ALPHA_NUGGET: f64 = 1e-4 / 20.0;

/// The noise sd inferred with the length scale and the variance (`model.noise_sd_prior`), the
/// truth's drawn from their priors and the data simulated with the truth's noise: every
/// functional's ranks uniform for both joint chains.
#[test]
fn the_noise_sd_is_calibrated_with_the_length_scale_and_the_variance() {
    let inferred = ["length_scale", "variance", "noise_sd"];
    let jobs =
        assert_fixture_calibrated("sbc_nugget.toml", &inferred, "sampler_hyper", ALPHA_NUGGET);
    assert_eq!(jobs, 2, "2 joint chains");
}

/// Runs the joint chains' SBC study `fixture` (with the three hyperparameters and two
/// coefficients inferred) and checks every functional's ranks at level `alpha`; returns the
/// number of jobs.
fn assert_joint_calibrated(fixture: &str, varied: &str, alpha: f64) -> usize {
    let inferred = [
        "length_scale",
        "variance",
        "mean",
        "coef_slope",
        "coef_bump",
    ];
    assert_fixture_calibrated(fixture, &inferred, varied, alpha)
}

/// Runs the SBC study `fixture` (under tests/fixtures/studies) and checks the ranks of the
/// field's functionals and of the `inferred` quantities at level `alpha`, jobs named by their
/// likelihood and the `varied` column; returns the number of jobs.
fn assert_fixture_calibrated(fixture: &str, inferred: &[&str], varied: &str, alpha: f64) -> usize {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies")
        .join(fixture);
    let out = tempfile::tempdir().unwrap();
    let jobs = run_calibration(&fixture, out.path());
    let functionals: Vec<&str> = FUNCTIONALS.iter().chain(inferred).copied().collect();
    assert_calibrated(&jobs, &functionals, varied, alpha);
    jobs.height()
}

/// Runs an SBC study through the binary into `out` and returns its jobs table.
fn run_calibration(study: &Path, out: &Path) -> DataFrame {
    Command::cargo_bin("fieldmc")
        .unwrap()
        .args(["run", "--quiet", "--no-report", "--threads", "2"])
        .arg(study)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let file = std::fs::File::open(out.join("jobs.parquet")).unwrap();
    ParquetReader::new(file).finish().unwrap()
}

/// Every job's rank-uniformity p-value of every functional is above `alpha`; jobs are named by
/// their likelihood and the `varied` column.
fn assert_calibrated(jobs: &DataFrame, functionals: &[&str], varied: &str, alpha: f64) {
    let likelihood = jobs.column("model_likelihood").unwrap().str().unwrap();
    let varied_values = jobs.column(varied).unwrap().str().unwrap();
    for functional in functionals {
        let p = jobs
            .column(&format!("sbc_p_{functional}"))
            .unwrap()
            .f64()
            .unwrap();
        for row in 0..jobs.height() {
            let p = p.get(row).expect("a p-value for every functional");
            let what = format!(
                "{} {} {functional}",
                likelihood.get(row).unwrap(),
                varied_values.get(row).unwrap()
            );
            eprintln!("{what}: p = {p:.4}");
            assert!(p > alpha, "{what}: rank uniformity p = {p}");
        }
    }
}

/// Counting the prior twice narrows the posterior most where the prior dominates: with one
/// observed cell the wrong target's sd is about 1/sqrt(2) of the right one nearly everywhere, a
/// distortion 400 replications see at the calibration test's level; with many observations it
/// shrinks towards nothing.
#[test]
fn pcn_that_counts_the_prior_twice_fails_calibration() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let text = text.replace("subsample = 2", "subsample = 16");
    let text = text.replace(
        FIXTURE_SWEEP,
        "\"model.likelihood\" = [\"gaussian\"]\n\"sampler.kind\" = [\"pcn\"]",
    );
    let study = fieldmc::plan::parse(&text, &fixture()).unwrap();
    let plan = plan(&study);
    assert_eq!(plan.jobs.len(), 1);
    let job = &plan.jobs[0];
    let wrong = PcnPosteriorRatio {
        beta: latent(&job.spec).sampler.step(),
    };
    let sbc = study.file.sbc.unwrap();
    // Four times the replications of the calibration test: enough power to fail the wrong
    // sampler at the calibration test's own level.
    let sbc = SbcSpec {
        replications: 4 * sbc.replications,
        ..sbc
    };
    let run = run_sbc_with(&wrong, field_job(job), study.file.seed, sbc).unwrap();
    let smallest = run
        .p_values()
        .into_iter()
        .filter_map(|p| p.1)
        .fold(1.0, f64::min);
    assert!(
        smallest < ALPHA,
        "the wrong sampler passed: smallest p = {smallest}"
    );
    eprintln!("wrong sampler: smallest rank-uniformity p = {smallest:e}");
    // The same job with the right kernel passes: the failure is the kernel's.
    let right = run_sbc(field_job(job), study.file.seed, sbc).unwrap();
    assert!(right.p_values().into_iter().all(|p| p.1.unwrap() > ALPHA));
}

/// A deliberately wrong pCN that accepts with the posterior ratio, counting the prior twice
/// (the proposal already preserves it): the negative control simulation-based calibration must
/// reject.
struct PcnPosteriorRatio {
    beta: f64,
}

struct WrongState {
    position: Position,
    draws: PriorDraws,
    work: Workspace,
    proposal: Vec<f64>,
}

impl ChainState for WrongState {
    fn current(&self) -> &Position {
        &self.position
    }
}

impl Sampler for PcnPosteriorRatio {
    type State<'t> = WrongState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> WrongState {
        let mut work = target.workspace();
        WrongState {
            position: Position::new(xi, target, &mut work),
            draws: PriorDraws::new(target),
            work,
            proposal: vec![0.0; target.observations()],
        }
    }

    fn step<'t>(
        &self,
        state: &mut WrongState,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let beta = self.beta;
        let keep = (1.0 - beta * beta).sqrt();
        let WrongState {
            position,
            draws,
            work,
            proposal,
        } = state;
        let (z, lz) = draws.next(target, rng, work);
        target.observed.gather(&position.field, proposal);
        let mut step = vec![0.0; proposal.len()];
        target.observed.gather(lz, &mut step);
        for (w, &s) in proposal.iter_mut().zip(&step) {
            *w = keep * *w + beta * s;
        }
        let log_likelihood = target.likelihood.log_likelihood(proposal);
        let squared = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
        let moved_xi: Vec<f64> = position
            .xi
            .iter()
            .zip(z)
            .map(|(x, z)| keep * x + beta * z)
            .collect();
        let prior_ratio = -0.5 * (squared(&moved_xi) - squared(&position.xi));
        let moved = rng.accept(log_likelihood - position.log_likelihood + prior_ratio);
        if moved {
            position.xi = moved_xi;
            for (u, &l) in position.field.iter_mut().zip(lz) {
                *u = keep * *u + beta * l;
            }
            position.observed.copy_from_slice(proposal);
            position.log_likelihood = log_likelihood;
        }
        StepInfo {
            moved,
            acceptance_probability: None,
            loglik_evaluations: 1,
            gradient_evaluations: 0,
        }
    }
}

/// The Laplace approximation is not a Markov chain: calibration refuses it with a typed error
/// that names the kind, rather than ranking draws it does not have.
#[test]
fn calibration_refuses_an_approximation() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let text = text.replace(
        FIXTURE_SWEEP,
        "\"model.likelihood\" = [\"poisson\"]\n\"sampler.kind\" = [\"laplace\"]",
    );
    let study = fieldmc::plan::parse(&text, &fixture()).unwrap();
    let plan = plan(&study);
    assert_eq!(plan.jobs.len(), 1);
    let sbc = study.file.sbc.unwrap();
    let sbc = SbcSpec {
        replications: 10,
        ..sbc
    };
    let error = run_sbc(field_job(&plan.jobs[0]), study.file.seed, sbc).unwrap_err();
    assert!(
        error.to_string().contains("laplace is an approximation"),
        "{error}"
    );
}
