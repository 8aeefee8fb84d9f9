//! Simulation-based calibration: GRW and pCN on gaussian, probit and poisson pass the rank
//! uniformity test at small D, and a deliberately wrong sampler (pCN accepting with the
//! posterior ratio, which counts the prior twice) fails it.

use std::path::Path;

use assert_cmd::Command;
use fieldmc::execute::sbc::{FUNCTIONALS, run_sbc};
use fieldmc::plan::plan;
use fieldmc::sampler::kernel::Kernel;
use fieldmc::study;
use polars::prelude::*;

/// The significance level of the uniformity test for each functional.
const ALPHA: f64 = 0.001;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/sbc_small.toml")
}

#[test]
fn both_samplers_are_calibrated_on_every_likelihood() {
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("fieldmc")
        .unwrap()
        .args(["run", "--quiet", "--no-report", "--threads", "2"])
        .arg(fixture())
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let file = std::fs::File::open(out.path().join("jobs.parquet")).unwrap();
    let jobs = ParquetReader::new(file).finish().unwrap();
    assert_eq!(jobs.height(), 6, "3 likelihoods x 2 samplers");
    let likelihood = jobs.column("model_likelihood").unwrap().str().unwrap();
    let sampler = jobs.column("sampler_kind").unwrap().str().unwrap();
    for functional in FUNCTIONALS {
        let p = jobs
            .column(&format!("sbc_p_{functional}"))
            .unwrap()
            .f64()
            .unwrap();
        for row in 0..jobs.height() {
            let p = p.get(row).expect("a p-value for every functional");
            assert!(
                p > ALPHA,
                "{} {} {functional}: rank uniformity p = {p}",
                likelihood.get(row).unwrap(),
                sampler.get(row).unwrap()
            );
        }
    }
    let ranks = ParquetReader::new(std::fs::File::open(out.path().join("ranks.parquet")).unwrap())
        .finish()
        .unwrap();
    assert_eq!(ranks.height(), 6 * 100 * FUNCTIONALS.len());
    for column in ["job_id", "replication", "functional", "rank", "draws"] {
        assert!(ranks.column(column).is_ok(), "ranks.parquet lacks {column}");
    }
}

/// Counting the prior twice narrows the posterior most where the prior dominates: with one
/// observed cell the wrong target's sd is about 1/sqrt(2) of the right one nearly everywhere, a
/// distortion 100 replications see; with many observations it shrinks towards nothing.
#[test]
fn pcn_that_counts_the_prior_twice_fails_calibration() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let text = text.replace("subsample = 2", "subsample = 16");
    let text = text.replace(
        "\"model.likelihood\" = [\"gaussian\", \"probit\", \"poisson\"]\n\"sampler.kind\" = [\"grw\", \"pcn\"]",
        "\"model.likelihood\" = [\"gaussian\"]\n\"sampler.kind\" = [\"pcn\"]",
    );
    let study = study::parse(&text, &fixture()).unwrap();
    let plan = plan(&study);
    assert_eq!(plan.jobs.len(), 1);
    let job = &plan.jobs[0];
    let beta = job.sampler.beta;
    let wrong = Kernel::PcnPosteriorRatio {
        beta,
        contraction: (1.0 - beta * beta).sqrt(),
    };
    let sbc = study.sbc.unwrap();
    let run = run_sbc(job, study.seed, sbc.replications, sbc.draws as usize, wrong).unwrap();
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
    let right = run_sbc(
        job,
        study.seed,
        sbc.replications,
        sbc.draws as usize,
        Kernel::new(job.sampler.kind, beta),
    )
    .unwrap();
    assert!(right.p_values().into_iter().all(|p| p.1.unwrap() > ALPHA));
}
