//! The gaussian family against exact answers. Family-wise false-alarm rate of this file: below
//! 1e-4 (four checks at 1e-5, eight at 1e-6 and sixty at 8.3e-7; each stated where it is made).
//! Located errors are deterministic.

mod support;

use std::path::Path;

use fieldmc::families::gaussian::moments::{MomentCheck, max_abs_z, moment_checks};
use fieldmc::families::gaussian::target::Structure;
use fieldmc::families::gaussian::{GaussianSpec, exact_draw, run_chain, run_chain_from};
use fieldmc::families::{FamilySpec, Method};
use fieldmc::streams::{Purpose, stream};
use support::{run_output, text, write_file};

fn spec(dimension: usize, correlation: f64, method: Method, iterations: u64) -> GaussianSpec {
    GaussianSpec {
        proposal_sd: 0.8,
        iterations,
        ..GaussianSpec::equicorrelated(dimension, correlation, method)
    }
}

/// Wilson-Hilferty: the q-quantile of chi-square(k) / k for the standard normal quantile z.
fn chi2_over_k(k: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * k);
    (1.0 - a + z * a.sqrt()).powi(3)
}

/// Bivariate systematic-scan Gibbs: the x1 chain is AR(1) with coefficient rho^2, so over n
/// kept draws Var(mean) = (1/n^2) [n + 2 sum_k (n - k) rho^(2k)] exactly, and the ESS per draw
/// tends to (1 - rho^2) / (1 + rho^2). K independent chains started from the target give K
/// exactly normal means with mean 0, so sum(mean^2) / (K Var) ~ chi-square(K) / K: checked
/// two-sided at z = 4.42 (false alarm 1e-5 per rho).
#[test]
fn bivariate_gibbs_ess_matches_the_ar1_formula() {
    let (chains, n) = (2000usize, 1000usize);
    for (index, rho) in [0.5f64, 0.9].into_iter().enumerate() {
        let spec = spec(2, rho, Method::SystematicGibbs, n as u64);
        let phi = rho * rho;
        let exact_var = (n as f64
            + 2.0
                * (1..n)
                    .map(|k| (n - k) as f64 * phi.powi(k as i32))
                    .sum::<f64>())
            / (n as f64 * n as f64);
        let mean_square = (0..chains)
            .map(|c| {
                let mut rng = stream(16, Purpose::Chain, &format!("ess;{index};{c}"));
                let run = run_chain(&spec, &mut rng);
                let mean = run.x1.iter().sum::<f64>() / n as f64;
                mean * mean
            })
            .sum::<f64>()
            / chains as f64;
        let ratio = mean_square / exact_var;
        let k = chains as f64;
        let (lo, hi) = (chi2_over_k(k, -4.42), chi2_over_k(k, 4.42));
        assert!(
            (lo..=hi).contains(&ratio),
            "rho = {rho}: variance of the means / exact = {ratio}, allowed [{lo}, {hi}]"
        );
        // The implied ESS per draw against the large-n formula (the finite-n exact variance
        // differs from it by O(1/n)).
        let ess_per_draw = 1.0 / (n as f64 * mean_square);
        let formula = (1.0 - phi) / (1.0 + phi);
        let se = formula * (2.0 / k).sqrt();
        assert!(
            (ess_per_draw - formula).abs() < 4.42 * se + 2.0 / n as f64,
            "rho = {rho}: ESS per draw {ess_per_draw}, formula {formula}"
        );
    }
}

/// Every method, started far from the target, reaches it: over K independent chains the final
/// states' E[x1^2] = 1 and E[x1 x2] = rho, each within 4.9 standard errors (Var(x1^2) = 2,
/// Var(x1 x2) = 1 + rho^2); 3 methods x 2 moments at two-sided 1e-6 each: below 1e-5.
#[test]
fn every_method_converges_to_the_target_moments() {
    let (chains, rho) = (4000usize, 0.6);
    for method in [Method::SystematicGibbs, Method::RandomGibbs, Method::Rwmh] {
        let spec = spec(3, rho, method, 300);
        let (mut m11, mut m12) = (0.0, 0.0);
        let mut accepted = 0;
        for c in 0..chains {
            let mut rng = stream(17, Purpose::Chain, &format!("{method};{c}"));
            let run = run_chain_from(&spec, vec![3.0, 3.0, 3.0], &mut rng);
            m11 += run.last[0] * run.last[0];
            m12 += run.last[0] * run.last[1];
            accepted += run.accepted;
        }
        let k = chains as f64;
        let (m11, m12) = (m11 / k, m12 / k);
        assert!(
            (m11 - 1.0).abs() < 4.9 * (2.0 / k).sqrt(),
            "{method}: E[x1^2] = {m11}"
        );
        assert!(
            (m12 - rho).abs() < 4.9 * ((1.0 + rho * rho) / k).sqrt(),
            "{method}: E[x1 x2] = {m12}"
        );
        if method == Method::Rwmh {
            let rate = accepted as f64 / (k * 300.0);
            assert!(rate > 0.1 && rate < 0.9, "RWMH acceptance {rate}");
        }
    }
}

/// The exact draw has the target's covariance, for a negative correlation too (4.9 standard
/// errors; two moments at 1e-6 each).
#[test]
fn exact_draws_have_the_target_covariance() {
    let (draws, rho) = (20_000usize, -0.2);
    let spec = spec(4, rho, Method::SystematicGibbs, 1);
    let mut rng = stream(18, Purpose::Chain, "exact");
    let (mut m11, mut m12) = (0.0, 0.0);
    for _ in 0..draws {
        let x = exact_draw(&spec, &mut rng);
        m11 += x[0] * x[0];
        m12 += x[0] * x[1];
    }
    let k = draws as f64;
    assert!(((m11 / k) - 1.0).abs() < 4.9 * (2.0 / k).sqrt());
    assert!(((m12 / k) - rho).abs() < 4.9 * ((1.0 + rho * rho) / k).sqrt());
}

/// The shipped 5-D study's jobs (one per method), resolved from the file itself.
fn covariance_study() -> Vec<GaussianSpec> {
    let study = fieldmc::plan::load(Path::new("studies/notes/gaussian_covariance.toml")).unwrap();
    fieldmc::plan::plan(&study)
        .jobs
        .into_iter()
        .map(|job| match job.spec {
            FamilySpec::Gaussian(spec) => spec,
            other => panic!("not a gaussian job: {other:?}"),
        })
        .collect()
}

/// The moment checks of `spec`'s chains (each started from an exact draw) against `target`.
fn checks_against(spec: &GaussianSpec, target: &GaussianSpec, key: &str) -> Vec<MomentCheck> {
    let runs: Vec<_> = (0..spec.chains)
        .map(|c| run_chain(spec, &mut stream(19, Purpose::Chain, &format!("{key};{c}"))))
        .collect();
    let traces: Vec<&[Vec<f64>]> = runs.iter().map(|r| r.states.as_slice()).collect();
    moment_checks(&target.mean, &target.structure, &traces)
}

/// The shipped 5-D target with its own mean and a full covariance: for each of the three
/// methods, the 5 means and 15 covariances estimated from 4 chains of 20,000 kept sweeps are
/// each within z = 4.93 MCSE of the exact values. 60 compared quantities at two-sided 8.3e-7
/// each (Bonferroni): a family-wise false-alarm rate of 5e-5 when the MCSE is right. The MCSE
/// itself is estimated (split-chain ESS), which is why the budget leaves room. The same chains
/// against a target whose covariance is 10% larger fail the check: the statistic has power.
#[test]
fn every_method_matches_the_means_and_covariances_of_a_full_target() {
    let specs = covariance_study();
    assert_eq!(specs.len(), 3);
    for spec in &specs {
        assert!(matches!(spec.structure, Structure::Dense(_)));
        assert_eq!(spec.mean, [1.0, -2.0, 0.5, 3.0, 0.0]);
        let checks = checks_against(spec, spec, spec.method.name());
        assert_eq!(checks.len(), 20);
        let worst = checks
            .iter()
            .max_by(|a, b| a.z().abs().total_cmp(&b.z().abs()))
            .unwrap();
        assert!(
            worst.z().abs() < 4.93,
            "{}: {} = {} against exact {} (MCSE {})",
            spec.method,
            worst.name,
            worst.estimate,
            worst.exact,
            worst.mcse
        );
        eprintln!(
            "{}: largest |z| {:.2} ({})",
            spec.method,
            worst.z().abs(),
            worst.name
        );
    }
    let inflated = {
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|i| {
                (0..5)
                    .map(|j| 1.1 * specs[0].structure.covariance(i, j))
                    .collect()
            })
            .collect();
        let structure = Structure::Dense(
            fieldmc::families::gaussian::target::DenseCovariance::new(&rows).unwrap(),
        );
        GaussianSpec {
            structure,
            ..specs[0].clone()
        }
    };
    let wrong = max_abs_z(&checks_against(&specs[0], &inflated, "systematic-gibbs")).unwrap();
    assert!(
        wrong > 10.0,
        "a 10% wrong covariance gives only |z| = {wrong}"
    );
}

/// A covariance that is not positive definite stops the run before anything is written: exit
/// code 2, the file and line of `model.covariance`, and the smallest Cholesky pivot.
#[test]
fn a_covariance_that_is_not_positive_definite_exits_2_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(
        dir.path(),
        "indefinite.toml",
        "[study]\nname = \"indefinite\"\n\n[model]\nfamily = \"gaussian\"\n\
         covariance = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.9], [0.0, 0.9, 1.0]]\n",
    );
    let out = dir.path().join("out");
    let output = run_output(&study, &out, 1);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    // Pivots 1, 1 - 0.81 = 0.19 and 1 - 0.81 / 0.19 = -3.263...: the third is the smallest.
    assert!(stderr.contains("indefinite.toml:6:"), "{stderr}");
    assert!(
        stderr.contains("not positive definite")
            && stderr.contains("smallest pivot is -3.26")
            && stderr.contains("coordinate 3"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing may be written for a bad study");
}

fn parse_err(text: &str) -> String {
    fieldmc::plan::parse(text, Path::new("studies/g.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_targets_are_located_errors() {
    let head = "[model]\nfamily = \"gaussian\"\n";
    let asymmetric = parse_err(&format!("{head}covariance = [[1.0, 0.5], [0.4, 1.0]]\n"));
    assert!(
        asymmetric.starts_with("studies/g.toml:3:14:")
            && asymmetric.contains("entry (1, 2) = 0.5 but (2, 1) = 0.4"),
        "{asymmetric}"
    );
    let ragged = parse_err(&format!("{head}covariance = [[1.0, 0.5], [0.5]]\n"));
    assert!(
        ragged.contains("row 2 of the covariance has 1 entries, not 2"),
        "{ragged}"
    );
    let infinite = parse_err(&format!("{head}covariance = [[1.0, inf], [0.0, 1.0]]\n"));
    assert!(
        infinite.starts_with("studies/g.toml:3:21:") && infinite.contains("not a finite number"),
        "{infinite}"
    );
    let short_mean = parse_err(&format!(
        "{head}covariance = [[1.0, 0.5], [0.5, 1.0]]\nmean_vector = [1.0, 2.0, 3.0]\n"
    ));
    assert!(
        short_mean.starts_with("studies/g.toml:4:15:")
            && short_mean
                .contains("model.mean_vector has 3 entries, but the target has dimension 2"),
        "{short_mean}"
    );
    let both = parse_err(&format!(
        "{head}covariance = [[1.0, 0.5], [0.5, 1.0]]\ncorrelation = 0.3\n"
    ));
    assert!(
        both.starts_with("studies/g.toml:4:15:") && both.contains("`model.correlation` describes"),
        "{both}"
    );
}

/// One key, `sampler.kind`, chooses every family's sampler: the old names are unknown keys whose
/// error names the new one (in a section and in [sweep]), and another family's word is a
/// located error that lists the family's own.
#[test]
fn samplers_are_chosen_by_sampler_kind_in_every_family() {
    let head = "[model]\nfamily = \"gaussian\"\n";
    let old = parse_err(&format!("{head}[sampler]\nmethod = \"rwmh\"\n"));
    assert!(
        old.starts_with("studies/g.toml:4:1:")
            && old.contains("`sampler.method` is now `sampler.kind`"),
        "{old}"
    );
    let swept = parse_err(
        "[model]\nfamily = \"lda\"\n[sweep]\n\"sampler.scheme\" = [\"collapsed\", \"uncollapsed\"]\n",
    );
    assert!(
        swept.starts_with("studies/g.toml:4:1:")
            && swept.contains("`sampler.scheme` is now `sampler.kind`"),
        "{swept}"
    );
    let foreign = parse_err(&format!("{head}[sampler]\nkind = \"pcn\"\n"));
    assert!(
        foreign.starts_with("studies/g.toml:4:8:")
            && foreign
                .contains("sampler.kind = \"pcn\" is not a sampler of model.family = \"gaussian\"")
            && foreign.contains("\"systematic-gibbs\" | \"random-gibbs\" | \"rwmh\""),
        "{foreign}"
    );
    let lda = parse_err("[model]\nfamily = \"lda\"\n[sampler]\nkind = \"rwmh\"\n");
    assert!(lda.contains("\"collapsed\" | \"uncollapsed\""), "{lda}");
    // Not given, each family's own default, as the job's sampler_kind column.
    let study = fieldmc::plan::parse(head, Path::new("studies/g.toml")).unwrap();
    let plan = fieldmc::plan::plan(&study);
    let kind = plan.jobs[0]
        .header
        .params
        .iter()
        .find(|(key, _)| key.dotted() == "sampler.kind")
        .map(|(_, value)| value.to_string());
    assert_eq!(kind.as_deref(), Some("systematic-gibbs"));
}
