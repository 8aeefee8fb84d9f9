//! Step-size adaptation, through the real binary on real counts: every kind with a step size,
//! adapting during burn-in and frozen after, ends with a kept acceptance rate within 0.05 of its
//! target. The kept acceptance of 2 x 8,000 iterations has a Monte Carlo sd of at most about
//! 0.02 (for an autocorrelated accept sequence), so 0.05 is more than 2.5 sd from a correct
//! adaptation; the adapted step must also have moved from the start (beta = 0.2).
//!
//! laplace_hmc is the exception: a trajectory turns through its angle (110 degrees) in a whole
//! number of steps (h = angle / ceil(angle / step)), so its acceptance takes only the values of
//! whole step counts, and on this grid its target 0.9 lies between two of them (one two-stage
//! step is accepted less often, two nearly always); dual averaging settles on the next count up.
//! For it the test asks that the kept acceptance is not below the target by more than 0.05.

mod support;

use std::path::Path;

#[test]
fn adaptation_reaches_its_target_acceptance_within_0_05() {
    let study =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/adaptation.toml");
    let out = tempfile::tempdir().unwrap();
    support::run_ok(&study, out.path(), 2);
    let jobs = support::read_table(out.path(), "jobs").unwrap();
    let kinds = jobs.column("sampler_kind").unwrap().str().unwrap().clone();
    let targets = jobs
        .column("sampler_target_acceptance")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let rates = jobs
        .column("acceptance_rate")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let steps = jobs.column("step_size").unwrap().f64().unwrap().clone();
    assert_eq!(jobs.height(), 7);
    for row in 0..jobs.height() {
        let kind = kinds.get(row).unwrap();
        let (target, rate, step) = (
            targets.get(row).unwrap(),
            rates.get(row).unwrap(),
            steps.get(row).unwrap(),
        );
        eprintln!("{kind}: acceptance {rate:.3}, target {target}, adapted step {step:.4}");
        if kind == "laplace_hmc" {
            assert!(rate > target - 0.05, "{kind}: {rate} vs {target}");
        } else {
            assert!((rate - target).abs() < 0.05, "{kind}: {rate} vs {target}");
        }
        assert!((step - 0.2).abs() > 1e-3, "{kind}: the step never moved");
    }
}
