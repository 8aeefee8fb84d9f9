//! Effective sample size of a (chain x draw) matrix: Geyer's initial positive and initial
//! monotone sequence estimators on the multi-chain autocorrelation, as in ArviZ's `_ess`.
//!
//! rho_t = 1 - (W - mean_chains(acov_t)) / var_plus, with W the mean within-chain variance and
//! var_plus = W (n - 1) / n + B / n; ESS = chains * n / tau, tau = -1 + 2 sum rho_t over the
//! retained lags, bounded below by 1 / log10(chains * n).

use super::draws::{Draws, mean, sample_variance};
use super::fft::LazyAutocovariances;

/// ArviZ treats draws whose range is below numpy's `finfo(float).resolution` as constant and
/// returns their count as the ESS. This matters only for quantile indicators that are all equal.
const CONSTANT_RANGE: f64 = 1e-15;

/// ESS of the draws as given (callers split chains and transform them first).
pub(crate) fn effective_sample_size(draws: &Draws) -> Option<f64> {
    let total = (draws.n_chains() * draws.n_draws()) as f64;
    if is_effectively_constant(draws.values()) {
        return Some(total);
    }
    let rho = autocorrelation_sequence(draws)?;
    let tau = integrated_autocorrelation_time(&rho.values, rho.max_t);
    let tau = tau.max(1.0 / total.log10());
    let ess = total / tau;
    ess.is_finite().then_some(ess)
}

fn is_effectively_constant(values: &[f64]) -> bool {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    hi - lo < CONSTANT_RANGE
}

/// The autocorrelation estimates kept by Geyer's rules and the last lag pair they reach.
struct TruncatedRho {
    values: Vec<f64>,
    /// ArviZ's `max_t`; -1 when no lag pair beyond the first was examined.
    max_t: isize,
}

/// Combined autocorrelations, truncated by the initial positive sequence and made monotone.
fn autocorrelation_sequence(draws: &Draws) -> Option<TruncatedRho> {
    let n = draws.n_draws();
    if n < 2 {
        return None;
    }
    let acovs = LazyAutocovariances::new(draws.chains());
    let chain_means: Vec<f64> = draws.chains().map(mean).collect();
    let mean_acov = |lag: usize| acovs.mean_at(lag);

    let n_f = n as f64;
    let mean_var = mean_acov(0) * n_f / (n_f - 1.0);
    let mut var_plus = mean_var * (n_f - 1.0) / n_f;
    if draws.n_chains() > 1 {
        var_plus += sample_variance(&chain_means);
    }
    if var_plus.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let rho_at = |lag: usize| 1.0 - (mean_var - mean_acov(lag)) / var_plus;

    let mut rho = vec![0.0; n];
    let mut rho_even = 1.0;
    let mut rho_odd = rho_at(1);
    rho[0] = rho_even;
    rho[1] = rho_odd;

    // Geyer's initial positive sequence: keep pairs while their sum stays positive.
    let mut t = 1usize;
    while t + 3 < n && rho_even + rho_odd > 0.0 {
        rho_even = rho_at(t + 1);
        rho_odd = rho_at(t + 2);
        if rho_even + rho_odd >= 0.0 {
            rho[t + 1] = rho_even;
            rho[t + 2] = rho_odd;
        }
        t += 2;
    }
    let max_t = t as isize - 2;
    // ArviZ's "improve estimation": keep the last even estimate if it is positive.
    if rho_even > 0.0 {
        rho[(max_t + 1) as usize] = rho_even;
    }
    make_pairs_monotone(&mut rho, max_t);
    if rho.iter().any(|v| v.is_nan()) {
        return None;
    }
    Some(TruncatedRho { values: rho, max_t })
}

/// Geyer's initial monotone sequence: no pair sum may exceed the one before it.
fn make_pairs_monotone(rho: &mut [f64], max_t: isize) {
    let mut t = 1isize;
    while t <= max_t - 2 {
        let i = t as usize;
        if rho[i + 1] + rho[i + 2] > rho[i - 1] + rho[i] {
            rho[i + 1] = (rho[i - 1] + rho[i]) / 2.0;
            rho[i + 2] = rho[i + 1];
        }
        t += 2;
    }
}

/// tau = -1 + 2 sum_{t <= max_t} rho_t + rho_{max_t + 1}.
fn integrated_autocorrelation_time(rho: &[f64], max_t: isize) -> f64 {
    let kept = (max_t + 1) as usize;
    let head: f64 = rho[..kept].iter().sum();
    let tail = rho.get(kept).copied().unwrap_or(0.0);
    -1.0 + 2.0 * head + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_made_monotone() {
        let mut rho = vec![1.0, 0.2, 0.5, 0.4, 0.1, 0.0, 0.0];
        make_pairs_monotone(&mut rho, 5);
        // Pair (0.5, 0.4) sums above (1.0, 0.2)? No: 0.9 < 1.2, kept. Then (0.1, 0.0) < 0.9, kept.
        assert_eq!(rho, vec![1.0, 0.2, 0.5, 0.4, 0.1, 0.0, 0.0]);
        let mut rho = vec![1.0, -0.2, 0.5, 0.4, 0.0];
        make_pairs_monotone(&mut rho, 3);
        // (0.5, 0.4) = 0.9 > 0.8 = (1.0, -0.2): both become 0.4.
        assert_eq!(rho, vec![1.0, -0.2, 0.4, 0.4, 0.0]);
    }

    #[test]
    fn tau_of_independent_draws_is_one() {
        // rho = (1, 0, ...) truncated at max_t = 1: tau = -1 + 2 * (1 + 0) + 0 = 1.
        assert_eq!(
            integrated_autocorrelation_time(&[1.0, 0.0, 0.0, 0.0], 1),
            1.0
        );
        // max_t = -1 keeps only rho_0 as the tail term: tau = -1 + 0 + 1 = 0.
        assert_eq!(integrated_autocorrelation_time(&[1.0, 0.3], -1), 0.0);
    }

    #[test]
    fn constant_indicators_count_every_draw() {
        let ones = [1.0; 5];
        let draws = Draws::from_chains(&[&ones, &[1.0, 1.0, 1.0, 1.0, 2.0]]).unwrap();
        let all_ones = draws.map(|_| 1.0);
        assert_eq!(effective_sample_size(&all_ones), Some(10.0));
    }
}
