//! The gaussian family against exact answers. Family-wise false-alarm rate of this file: below
//! 5e-5 (four checks at 1e-5 and eight at 1e-6; each stated where it is made).

use fieldmc::families::Method;
use fieldmc::families::gaussian::{GaussianSpec, exact_draw, run_chain, run_chain_from};
use fieldmc::streams::{Purpose, stream};

fn spec(dimension: usize, correlation: f64, method: Method, iterations: u64) -> GaussianSpec {
    GaussianSpec {
        dimension,
        correlation,
        method,
        proposal_sd: 0.8,
        iterations,
        burn_in: 0,
        chains: 1,
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
