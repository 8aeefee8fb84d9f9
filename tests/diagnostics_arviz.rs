//! fieldmc's diagnostics against ArviZ on the same draws.
//!
//! `tests/fixtures/arviz/cases.json` holds seeded draws and the values ArviZ computed from them
//! (`make_fixture.py` beside it says how; see its README). Both sides run the same algorithm in
//! double precision on the same doubles, so they differ only by rounding: summation order
//! (numpy sums pairwise), the FFT's rounding and the last bits of the inverse normal CDF. Those
//! measured at most 5e-15 relative on this fixture; 1e-6 leaves ample room for them and none for
//! an algorithmic difference (a different split, rank offset, quantile rule or truncation lag
//! moves values by 1e-3 or more).

use fieldmc::diagnostics::{self, Summary};
use serde::Deserialize;

/// Relative tolerance: see the module doc for why.
const RELATIVE_TOLERANCE: f64 = 1e-6;

#[derive(Deserialize)]
struct Fixture {
    arviz_version: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    draws: Vec<Vec<f64>>,
    ess_bulk: Option<f64>,
    ess_tail: Option<f64>,
    ess_mean: Option<f64>,
    rhat: Option<f64>,
    mcse_mean: Option<f64>,
    autocorr_chain0: Vec<f64>,
}

impl Case {
    fn chains(&self) -> Vec<&[f64]> {
        self.draws.iter().map(Vec::as_slice).collect()
    }
}

fn load_fixture() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/arviz/cases.json"
    );
    let text = std::fs::read_to_string(path).expect("fixture cases.json is committed");
    serde_json::from_str(&text).expect("fixture parses")
}

/// Collects a mismatch (rather than panicking at the first) so one run shows every difference.
fn compare(
    failures: &mut Vec<String>,
    case: &str,
    what: &str,
    ours: Option<f64>,
    arviz: Option<f64>,
) {
    let agrees = match (ours, arviz) {
        (Some(a), Some(b)) => (a - b).abs() <= RELATIVE_TOLERANCE * b.abs(),
        (None, None) => true,
        _ => false,
    };
    if !agrees {
        failures.push(format!("{case}: {what} ours {ours:?} vs ArviZ {arviz:?}"));
    }
}

#[test]
fn the_arviz_fixture_has_every_named_case_and_a_stuck_chain_with_a_large_rhat() {
    let fixture = load_fixture();
    assert!(
        fixture.arviz_version.starts_with("0."),
        "ArviZ {}",
        fixture.arviz_version
    );
    let names: Vec<&str> = fixture.cases.iter().map(|c| c.name.as_str()).collect();
    for wanted in [
        "iid_normal",
        "ar1_rho09",
        "student_t3",
        "stuck_chain",
        "short_2x50",
        "ties_poisson",
    ] {
        assert!(names.contains(&wanted), "missing case {wanted}");
    }
    let stuck = fixture
        .cases
        .iter()
        .find(|c| c.name == "stuck_chain")
        .unwrap();
    assert!(
        stuck.rhat.unwrap() > 1.1,
        "the stuck case must be one R-hat flags"
    );
}

#[test]
fn every_diagnostic_matches_arviz() {
    let fixture = load_fixture();
    let mut failures = Vec::new();
    for case in &fixture.cases {
        let chains = case.chains();
        let name = case.name.as_str();
        compare(
            &mut failures,
            name,
            "ess_bulk",
            diagnostics::ess_bulk(&chains),
            case.ess_bulk,
        );
        compare(
            &mut failures,
            name,
            "ess_tail",
            diagnostics::ess_tail(&chains),
            case.ess_tail,
        );
        compare(
            &mut failures,
            name,
            "ess_mean",
            diagnostics::ess_mean(&chains),
            case.ess_mean,
        );
        compare(
            &mut failures,
            name,
            "rhat",
            diagnostics::rhat(&chains),
            case.rhat,
        );
        compare(
            &mut failures,
            name,
            "mcse_mean",
            diagnostics::mcse_mean(&chains),
            case.mcse_mean,
        );
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn summary_matches_arviz() {
    let fixture = load_fixture();
    let mut failures = Vec::new();
    for case in &fixture.cases {
        let Summary {
            ess_bulk,
            ess_tail,
            rhat,
            mcse_mean,
        } = diagnostics::summarize(&case.chains());
        let name = case.name.as_str();
        compare(
            &mut failures,
            name,
            "summary.ess_bulk",
            ess_bulk,
            case.ess_bulk,
        );
        compare(
            &mut failures,
            name,
            "summary.ess_tail",
            ess_tail,
            case.ess_tail,
        );
        compare(&mut failures, name, "summary.rhat", rhat, case.rhat);
        compare(
            &mut failures,
            name,
            "summary.mcse_mean",
            mcse_mean,
            case.mcse_mean,
        );
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn autocorrelation_matches_arviz() {
    let fixture = load_fixture();
    for case in &fixture.cases {
        let expected = &case.autocorr_chain0;
        let ours = diagnostics::autocorrelation(&case.draws[0], expected.len() - 1);
        assert_eq!(
            ours.len(),
            expected.len().min(case.draws[0].len()),
            "{}",
            case.name
        );
        for (lag, (a, b)) in ours.iter().zip(expected).enumerate() {
            // Autocorrelations near zero have no meaningful relative error: compare on the scale
            // of lag 0 (which is 1).
            assert!(
                (a - b).abs() <= RELATIVE_TOLERANCE,
                "{} lag {lag}: {a} vs {b}",
                case.name
            );
        }
    }
}
