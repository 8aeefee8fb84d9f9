//! The classic potential scale reduction factor of a (chain x draw) matrix, as ArviZ's `_rhat`:
//! sqrt((B / W + n - 1) / n), with B / n the variance of the chain means and W the mean
//! within-chain variance (both with n - 1 denominators).

use super::draws::{Draws, mean, sample_variance};

/// R-hat of the chains as given (callers split and rank-normalise them first). `None` with fewer
/// than two chains or when every chain is constant (W = 0).
pub(crate) fn potential_scale_reduction(draws: &Draws) -> Option<f64> {
    if draws.n_chains() < 2 || draws.n_draws() < 2 {
        return None;
    }
    let n = draws.n_draws() as f64;
    let chain_means: Vec<f64> = draws.chains().map(mean).collect();
    let chain_variances: Vec<f64> = draws.chains().map(sample_variance).collect();
    let between = n * sample_variance(&chain_means);
    let within = mean(&chain_variances);
    let rhat = ((between / within + n - 1.0) / n).sqrt();
    rhat.is_finite().then_some(rhat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_chain_means_give_below_one() {
        // B = 0: R-hat = sqrt((n - 1) / n).
        let draws = Draws::from_chains(&[&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]]).unwrap();
        let rhat = potential_scale_reduction(&draws).unwrap();
        assert!((rhat - (3.0f64 / 4.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn separated_chains_give_a_large_value() {
        let draws =
            Draws::from_chains(&[&[0.0, 1.0, 0.0, 1.0], &[10.0, 11.0, 10.0, 11.0]]).unwrap();
        // Means 0.5 and 10.5: B = 4 * 50 = 200; W = 1/3; sqrt((600 + 3) / 4).
        let rhat = potential_scale_reduction(&draws).unwrap();
        assert!((rhat - (603.0f64 / 4.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn constant_chains_and_a_single_chain_are_undefined() {
        let stuck = Draws::from_chains(&[&[1.0; 4], &[2.0; 4]]).unwrap();
        assert_eq!(potential_scale_reduction(&stuck), None);
        let single = Draws::from_chains(&[&[1.0, 2.0, 3.0, 4.0]]).unwrap();
        assert_eq!(potential_scale_reduction(&single), None);
    }
}
