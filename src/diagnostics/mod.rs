//! Convergence diagnostics of MCMC output: bulk and tail effective sample size, rank-normalised
//! split R-hat, the ESS and Monte Carlo standard error of the mean, and autocorrelation.
//!
//! This module owns the numbers that say whether a run can be trusted. It follows Vehtari,
//! Gelman, Simpson, Carpenter & Buerkner (2021), "Rank-normalization, folding, and localization:
//! an improved R-hat for assessing convergence of MCMC", exactly as ArviZ 0.23 implements it
//! (`arviz.ess(method="bulk" | "tail" | "mean")`, `arviz.rhat(method="rank")`,
//! `arviz.mcse(method="mean")`); `tests/diagnostics_arviz.rs` checks every function against
//! ArviZ's values on the same draws.
//!
//! Every function takes the chains of one scalar quantity as `&[&[f64]]` (one slice per chain)
//! and is pure: no I/O, no state, no dependency on the rest of fieldmc. Where a quantity is
//! undefined the answer is `None`, never NaN:
//! - no chains, chains of unequal length, or fewer than 4 draws per chain;
//! - any non-finite draw;
//! - zero variance (every draw equal; ArviZ would report the draw count as the ESS here);
//! - for [`rhat`], a single chain (as in ArviZ).
//!
//! Cost: a sort and a few zero-padded FFTs of each chain, so 10^5 draws take milliseconds.
//!
//! [`loo`] owns the predictive-accuracy numbers computed from the pointwise log-likelihood of
//! every kept draw: PSIS-LOO (elpd_loo, its standard error, p_loo, the Pareto k of every
//! observation), WAIC, and ArviZ's default relative efficiency, exactly as ArviZ 0.23's
//! `arviz.loo` and `arviz.waic` (checked against `tests/fixtures/loo/cases.json`). It reports
//! unusable input as a typed [`loo::LooError`] rather than `None`.

pub mod calibration;
mod draws;
mod ess;
mod fft;
pub mod loo;
mod normal;

pub(crate) use normal::standard_normal_quantile;
mod rhat;

use draws::Draws;
pub(crate) use draws::quantiles_type7;
use ess::effective_sample_size;
use rhat::potential_scale_reduction;

/// Tail ESS is the smaller of the ESS of these two quantile indicators.
const TAIL_PROBABILITIES: [f64; 2] = [0.05, 0.95];

/// The diagnostics of one scalar quantity across chains, each `None` where undefined.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// ESS of the rank-normalised split chains: how well the bulk (location) is explored.
    pub ess_bulk: Option<f64>,
    /// Smaller ESS of the 5% and 95% quantile indicators: how well the tails are explored.
    pub ess_tail: Option<f64>,
    /// Rank-normalised split R-hat, the larger of the bulk and folded (tail) versions.
    pub rhat: Option<f64>,
    /// Monte Carlo standard error of the mean: sd / sqrt(basic ESS).
    pub mcse_mean: Option<f64>,
}

/// Bulk effective sample size: split chains, rank-normalise over all draws, then Geyer's ESS.
pub fn ess_bulk(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| bulk_ess(&d))
}

/// Tail effective sample size: the minimum of the ESS of the indicators I(x <= q_0.05) and
/// I(x <= q_0.95), the quantiles taken over all draws pooled.
pub fn ess_tail(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| tail_ess(&d))
}

/// Folded effective sample size: the bulk ESS of |x - median| (the median over all draws
/// pooled), how well the chains estimate the spread. A sampler whose draws are antithetic for
/// the mean (each step flips x about the centre) can have a bulk ESS above the draws while its
/// folded ESS, which no flip helps, stays low.
pub fn ess_folded(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| bulk_ess(&d.folded()))
}

/// Rank-normalised split R-hat: max of R-hat of the rank-normalised split chains and of the
/// rank-normalised folded split chains |x - median|. Values above about 1.01 signal chains that
/// have not mixed. `None` also for a single chain.
pub fn rhat(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| rank_rhat(&d))
}

/// Basic effective sample size of the split chains (no rank-normalisation): the ESS that sets
/// the Monte Carlo error of the posterior mean.
pub fn ess_mean(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| mean_ess(&d))
}

/// Monte Carlo standard error of the posterior mean: the sample standard deviation of all draws
/// pooled over sqrt([`ess_mean`]).
pub fn mcse_mean(chains: &[&[f64]]) -> Option<f64> {
    Draws::from_chains(chains).and_then(|d| mean_mcse(&d))
}

/// All four diagnostics of [`Summary`] from one validation of the chains, each intermediate
/// (the split chains, their normal scores, the tail quantiles) computed once: the same numbers
/// as the four functions one by one.
pub fn summarize(chains: &[&[f64]]) -> Summary {
    let Some(draws) = Draws::from_chains(chains) else {
        return Summary::default();
    };
    let split = draws.split();
    let (scores, folded_scores) = split.z_scaled_with_folded();
    let rhat = if draws.n_chains() < 2 {
        None
    } else {
        potential_scale_reduction(&scores).and_then(|bulk| {
            let folded = potential_scale_reduction(&folded_scores)?;
            Some(bulk.max(folded))
        })
    };
    let thresholds = draws::quantiles_type7(draws.values(), &TAIL_PROBABILITIES);
    let ess_tail = thresholds
        .iter()
        .map(|&t| effective_sample_size(&draws.indicator(t).split()))
        .try_fold(f64::INFINITY, |lowest, ess| ess.map(|e| lowest.min(e)));
    let mcse_mean = effective_sample_size(&split).and_then(|ess| {
        let mcse = draws::sample_variance(draws.values()).sqrt() / ess.sqrt();
        mcse.is_finite().then_some(mcse)
    });
    Summary {
        ess_bulk: effective_sample_size(&scores),
        ess_tail,
        rhat,
        mcse_mean,
    }
}

/// Normalised autocorrelation of one chain at lags 0..=max_lag (lag 0 is 1), with ArviZ's biased
/// autocovariance (every lag divided by n). Lags are capped at n - 1. Empty when undefined: fewer
/// than two draws, a non-finite draw, or zero variance.
pub fn autocorrelation(x: &[f64], max_lag: usize) -> Vec<f64> {
    if x.len() < 2 || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let acov = fft::autocovariance(x);
    let variance = acov[0];
    if variance <= 0.0 {
        return Vec::new();
    }
    let lags = max_lag.min(x.len() - 1) + 1;
    acov[..lags].iter().map(|c| c / variance).collect()
}

fn bulk_ess(draws: &Draws) -> Option<f64> {
    effective_sample_size(&draws.split().z_scaled())
}

fn tail_ess(draws: &Draws) -> Option<f64> {
    TAIL_PROBABILITIES
        .iter()
        .map(|&prob| effective_sample_size(&draws.quantile_indicator(prob).split()))
        .try_fold(f64::INFINITY, |lowest, ess| ess.map(|e| lowest.min(e)))
}

fn rank_rhat(draws: &Draws) -> Option<f64> {
    if draws.n_chains() < 2 {
        return None;
    }
    let (scores, folded_scores) = draws.split().z_scaled_with_folded();
    let bulk = potential_scale_reduction(&scores)?;
    let folded = potential_scale_reduction(&folded_scores)?;
    Some(bulk.max(folded))
}

fn mean_ess(draws: &Draws) -> Option<f64> {
    effective_sample_size(&draws.split())
}

fn mean_mcse(draws: &Draws) -> Option<f64> {
    let ess = mean_ess(draws)?;
    let sd = draws::sample_variance(draws.values()).sqrt();
    let mcse = sd / ess.sqrt();
    mcse.is_finite().then_some(mcse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::StandardNormal;

    fn normals(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
        (0..n).map(|_| rng.sample(StandardNormal)).collect()
    }

    /// A stationary AR(1) chain x_t = rho x_{t-1} + sqrt(1 - rho^2) e_t.
    fn ar1(rng: &mut ChaCha8Rng, n: usize, rho: f64) -> Vec<f64> {
        let innovation_sd = (1.0 - rho * rho).sqrt();
        let mut x = Vec::with_capacity(n);
        let mut current: f64 = rng.sample(StandardNormal);
        for _ in 0..n {
            x.push(current);
            current = rho * current + innovation_sd * rng.sample::<f64, _>(StandardNormal);
        }
        x
    }

    fn as_slices(chains: &[Vec<f64>]) -> Vec<&[f64]> {
        chains.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn autocorrelation_of_ar1_decays_like_rho_to_the_lag() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let rho: f64 = 0.8;
        let x = ar1(&mut rng, 50_000, rho);
        let acf = autocorrelation(&x, 10);
        assert_eq!(acf.len(), 11);
        assert_eq!(acf[0], 1.0);
        for (lag, value) in acf.iter().enumerate() {
            // Standard error of the sample ACF of an AR(1) at these lags is below 0.02 here.
            assert!(
                (value - rho.powi(lag as i32)).abs() < 0.03,
                "lag {lag}: {value}"
            );
        }
    }

    #[test]
    fn autocorrelation_caps_lags_and_rejects_undefined_input() {
        let x = [1.0, 3.0, 2.0, 5.0];
        assert_eq!(autocorrelation(&x, 100).len(), 4);
        assert!(autocorrelation(&[1.0], 3).is_empty());
        assert!(autocorrelation(&[2.0; 10], 3).is_empty());
        assert!(autocorrelation(&[1.0, f64::NAN, 2.0], 3).is_empty());
    }

    #[test]
    fn iid_draws_have_ess_near_the_draw_count_and_rhat_near_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let chains: Vec<Vec<f64>> = (0..4).map(|_| normals(&mut rng, 1000)).collect();
        let summary = summarize(&as_slices(&chains));
        for (name, ess) in [
            ("bulk", summary.ess_bulk),
            ("tail", summary.ess_tail),
            ("mean", ess_mean(&as_slices(&chains))),
        ] {
            let ess = ess.unwrap();
            // 4000 iid draws: the estimate scatters by roughly 10% around 4000.
            assert!((3000.0..5000.0).contains(&ess), "{name} ESS {ess}");
        }
        let rhat = summary.rhat.unwrap();
        assert!((0.99..1.01).contains(&rhat), "R-hat {rhat}");
        let mcse = summary.mcse_mean.unwrap();
        assert!((mcse - 1.0 / 4000f64.sqrt()).abs() < 0.003, "MCSE {mcse}");
    }

    #[test]
    fn autocorrelated_draws_have_ess_near_the_ar1_value() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let rho = 0.9;
        let chains: Vec<Vec<f64>> = (0..4).map(|_| ar1(&mut rng, 5000, rho)).collect();
        // For AR(1), tau = (1 + rho) / (1 - rho) = 19, so ESS = 20000 / 19 ~ 1053.
        let ess = ess_mean(&as_slices(&chains)).unwrap();
        assert!((800.0..1350.0).contains(&ess), "ESS {ess}");
        let bulk = ess_bulk(&as_slices(&chains)).unwrap();
        assert!((800.0..1350.0).contains(&bulk), "bulk ESS {bulk}");
    }

    #[test]
    fn a_shifted_chain_gives_a_large_rhat() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut chains: Vec<Vec<f64>> = (0..4).map(|_| normals(&mut rng, 500)).collect();
        chains[2].iter_mut().for_each(|v| *v += 3.0);
        let rhat = rhat(&as_slices(&chains)).unwrap();
        assert!(rhat > 1.3, "R-hat {rhat}");
    }

    #[test]
    fn a_chain_with_a_wider_spread_is_caught_by_the_folded_rhat() {
        // Same location, four times the scale in one chain: the bulk R-hat barely moves, the
        // folded one does, and rhat() reports the larger.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut chains: Vec<Vec<f64>> = (0..4).map(|_| normals(&mut rng, 1000)).collect();
        chains[0].iter_mut().for_each(|v| *v *= 4.0);
        let slices = as_slices(&chains);
        let draws = Draws::from_chains(&slices).unwrap().split();
        let bulk_only = potential_scale_reduction(&draws.z_scaled()).unwrap();
        let rhat = rhat(&slices).unwrap();
        assert!(bulk_only < 1.05, "bulk R-hat {bulk_only}");
        assert!(rhat > 1.1 && rhat > bulk_only, "R-hat {rhat}");
    }

    #[test]
    fn undefined_inputs_give_none_everywhere() {
        let ok: Vec<f64> = (0..10).map(f64::from).collect();
        let cases: Vec<(&str, Vec<&[f64]>)> = vec![
            ("no chains", vec![]),
            ("3 draws", vec![&ok[..3], &ok[..3]]),
            ("unequal lengths", vec![&ok, &ok[..9]]),
            (
                "NaN",
                vec![
                    &ok,
                    &[0.0, 1.0, f64::NAN, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
                ],
            ),
            (
                "infinite",
                vec![
                    &ok,
                    &[
                        0.0,
                        1.0,
                        f64::NEG_INFINITY,
                        3.0,
                        4.0,
                        5.0,
                        6.0,
                        7.0,
                        8.0,
                        9.0,
                    ],
                ],
            ),
            ("zero variance", vec![&[1.5; 10], &[1.5; 10]]),
        ];
        for (name, chains) in cases {
            assert_eq!(summarize(&chains), Summary::default(), "{name}");
            assert_eq!(ess_bulk(&chains), None, "{name}");
            assert_eq!(ess_tail(&chains), None, "{name}");
            assert_eq!(ess_mean(&chains), None, "{name}");
            assert_eq!(rhat(&chains), None, "{name}");
            assert_eq!(mcse_mean(&chains), None, "{name}");
        }
        // One chain: ESS and MCSE are defined, R-hat is not.
        let single = summarize(&[&ok]);
        assert!(single.ess_bulk.is_some() && single.mcse_mean.is_some());
        assert_eq!(single.rhat, None);
    }

    #[test]
    fn summarize_agrees_with_the_single_functions() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let chains: Vec<Vec<f64>> = (0..3).map(|_| ar1(&mut rng, 301, 0.5)).collect();
        let slices = as_slices(&chains);
        let summary = summarize(&slices);
        assert_eq!(summary.ess_bulk, ess_bulk(&slices));
        assert_eq!(summary.ess_tail, ess_tail(&slices));
        assert_eq!(summary.rhat, rhat(&slices));
        assert_eq!(summary.mcse_mean, mcse_mean(&slices));
    }

    /// Long chains take the FFT path of the autocovariance (how fast is for a benchmark, not a
    /// test: a loaded machine must not fail it).
    #[test]
    fn a_hundred_thousand_draws_are_summarised() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let chains: Vec<Vec<f64>> = (0..4).map(|_| ar1(&mut rng, 25_000, 0.95)).collect();
        let summary = summarize(&as_slices(&chains));
        let acf = autocorrelation(&chains[0], 200);
        assert!(summary.ess_bulk.is_some() && summary.rhat.is_some() && acf.len() == 201);
    }
}
