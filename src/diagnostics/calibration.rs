//! Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018): if the
//! sampler is right, the rank of the true value among L posterior draws, over many truths drawn
//! from the prior, is uniform on {0, ..., L}. Draws are thinned by the chain's autocorrelation so
//! they are close to independent (correlated draws make rank histograms look wrong even when the
//! sampler is right). Uniformity is tested twice, by a histogram (chi-square) and by the ECDF
//! (Säilynoja, Bürkner & Vehtari 2022 show the ECDF's power against a shifted or too wide
//! posterior), and the two are combined into one p-value per functional.

/// The rank of `truth` among `draws`: how many draws are smaller.
pub(crate) fn rank_of(truth: f64, draws: &[f64]) -> usize {
    draws.iter().filter(|&&d| d < truth).count()
}

/// `wanted` draws spaced `spacing` apart, taken from the end of `chain` (the best-mixed part).
/// Fewer when the chain is too short.
pub(crate) fn spaced_draws(chain: &[f64], wanted: usize, spacing: usize) -> Vec<f64> {
    let spacing = spacing.max(1);
    let available = chain.len().div_ceil(spacing);
    let count = wanted.min(available);
    (0..count)
        .map(|k| chain[chain.len() - 1 - k * spacing])
        .collect()
}

/// The thinning that makes draws roughly independent: ceil(len / ESS).
pub(crate) fn spacing_from_ess(len: usize, ess: Option<f64>) -> usize {
    match ess {
        Some(ess) if ess > 0.0 => ((len as f64 / ess).ceil() as usize).max(1),
        _ => 1,
    }
}

/// The bin of rank `r` (in 0..=max_rank) among `bins` bins of (nearly) equal width.
fn bin_of(r: usize, max_rank: usize, bins: usize) -> usize {
    (r * bins / (max_rank + 1)).min(bins - 1)
}

/// Counts of `ranks` (each in 0..=max_rank) in `bins` bins of (nearly) equal width.
pub(crate) fn rank_histogram(ranks: &[usize], max_rank: usize, bins: usize) -> Vec<usize> {
    let mut counts = vec![0; bins];
    for &r in ranks {
        counts[bin_of(r, max_rank, bins)] += 1;
    }
    counts
}

/// The p-value that `ranks` are uniform on 0..=max_rank, from two tests that see different
/// departures: Pearson's chi-square over `bins` bins ([`chi_square_rank_p_value`]: any
/// shape) and the ECDF's largest gap ([`ecdf_rank_p_value`]: a shift of the ranks to one side,
/// the mark of a posterior too wide or too narrow, which a histogram spreads over its degrees of
/// freedom). The smaller, doubled (Bonferroni over the two), so a uniform sample falls below
/// alpha with probability at most alpha. None for fewer than two bins or no ranks.
pub(crate) fn rank_uniformity_p_value(
    ranks: &[usize],
    max_rank: usize,
    bins: usize,
) -> Option<f64> {
    let chi_square = chi_square_rank_p_value(ranks, max_rank, bins)?;
    let ecdf = ecdf_rank_p_value(ranks, max_rank)?;
    Some((2.0 * chi_square.min(ecdf)).min(1.0))
}

/// The p-value of Pearson's chi-square test that `ranks` are uniform on 0..=max_rank, over
/// `bins` bins; a bin's expected count is proportional to how many ranks it holds, so bins
/// need not divide max_rank + 1 evenly. None for fewer than two bins or no ranks.
pub(crate) fn chi_square_rank_p_value(
    ranks: &[usize],
    max_rank: usize,
    bins: usize,
) -> Option<f64> {
    let bins = bins.min(max_rank + 1);
    if bins < 2 || ranks.is_empty() {
        return None;
    }
    let counts = rank_histogram(ranks, max_rank, bins);
    let mut widths = vec![0usize; bins];
    for r in 0..=max_rank {
        widths[bin_of(r, max_rank, bins)] += 1;
    }
    let total = ranks.len() as f64;
    let statistic: f64 = counts
        .iter()
        .zip(&widths)
        .map(|(&c, &w)| {
            let expected = total * w as f64 / (max_rank + 1) as f64;
            (c as f64 - expected).powi(2) / expected
        })
        .sum();
    Some(chi_square_survival(statistic, (bins - 1) as f64))
}

/// The largest gap between the ranks' empirical CDF and the uniform CDF on 0..=max_rank:
/// max over r of |#{ranks <= r} / n - (r + 1) / (max_rank + 1)| (both CDFs are steps at the
/// integers, so the gap's supremum is taken there). None for no ranks.
pub(crate) fn ecdf_gap(ranks: &[usize], max_rank: usize) -> Option<f64> {
    if ranks.is_empty() {
        return None;
    }
    let mut counts = vec![0usize; max_rank + 1];
    for &r in ranks {
        counts[r.min(max_rank)] += 1;
    }
    let n = ranks.len() as f64;
    let mut below = 0usize;
    let gap = counts
        .iter()
        .enumerate()
        .map(|(r, &c)| {
            below += c;
            (below as f64 / n - (r + 1) as f64 / (max_rank + 1) as f64).abs()
        })
        .fold(0.0, f64::max);
    Some(gap)
}

/// The p-value of the ECDF test that `ranks` are uniform on 0..=max_rank, from the
/// Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant, P(sup |F_n - F| > d) <=
/// 2 exp(-2 n d^2): exact as a bound for every n and every F, discrete ones included, so the
/// test is never liberal (it is slightly conservative where the Kolmogorov distribution's tail
/// is below the bound). None for no ranks.
pub(crate) fn ecdf_rank_p_value(ranks: &[usize], max_rank: usize) -> Option<f64> {
    let gap = ecdf_gap(ranks, max_rank)?;
    let n = ranks.len() as f64;
    Some((2.0 * (-2.0 * n * gap * gap).exp()).min(1.0))
}

/// Bins for a rank histogram of `replications` ranks: at most 10, and at least 5 expected
/// counts per bin.
pub(crate) fn histogram_bins(replications: usize, max_rank: usize) -> usize {
    (replications / 5).clamp(2, 10).min(max_rank + 1)
}

/// P(X > x) for X ~ chi-square with `dof` degrees of freedom: Q(dof / 2, x / 2).
pub fn chi_square_survival(x: f64, dof: f64) -> f64 {
    crate::incomplete_gamma::upper_regularized_gamma(0.5 * dof, 0.5 * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_survival_matches_known_quantiles() {
        // scipy.stats.chi2.sf(x, dof)
        for (x, dof, expected) in [
            (3.841_458_820_694_124, 1.0, 0.05),
            (16.918_977_604_620_45, 9.0, 0.05),
            (27.877_164_871_256_57, 9.0, 0.001),
            (9.0, 9.0, 0.437_274_188_913_866_93),
            (0.5, 4.0, 0.973_500_978_839_256_1),
        ] {
            let got = chi_square_survival(x, dof);
            assert!((got - expected).abs() < 1e-9, "sf({x}, {dof}) = {got}");
        }
    }

    #[test]
    fn ranks_count_smaller_draws_and_the_uniformity_test_passes_even_ranks_and_fails_piled_ones() {
        assert_eq!(rank_of(0.5, &[0.1, 0.9, 0.4, 0.6]), 2);
        let hist = rank_histogram(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10], 10, 4);
        assert_eq!(hist.iter().sum::<usize>(), 12);
        // Every rank once: a perfect fit even though 11 ranks do not split into 4 equal bins.
        let every: Vec<usize> = (0..=10).collect();
        assert!((rank_uniformity_p_value(&every, 10, 4).unwrap() - 1.0).abs() < 1e-12);
        let piled = vec![0; 100];
        assert!(rank_uniformity_p_value(&piled, 10, 4).unwrap() < 1e-10);
    }

    #[test]
    fn the_ecdf_gap_is_the_largest_step_difference() {
        // Every rank once: the empirical CDF is the uniform one.
        let every: Vec<usize> = (0..=9).collect();
        assert!(ecdf_gap(&every, 9).unwrap() < 1e-15);
        assert_eq!(ecdf_rank_p_value(&every, 9), Some(1.0));
        // Ranks 0..4 twice each: F_n(4) = 1 against F(4) = 0.5.
        let low: Vec<usize> = (0..5).chain(0..5).collect();
        assert!((ecdf_gap(&low, 9).unwrap() - 0.5).abs() < 1e-15);
        // 2 exp(-2 * 10 * 0.25)
        let p = ecdf_rank_p_value(&low, 9).unwrap();
        assert!((p - 2.0 * (-5.0f64).exp()).abs() < 1e-15);
    }

    #[test]
    fn a_shifted_sample_fails_both_tests_and_the_combination_keeps_the_smaller() {
        // 1,000 ranks on 0..=49 whose CDF is the uniform one bent towards the top (density
        // 1 + 0.4 (1 - 2u): a posterior too wide seen through the log-likelihood), gap 0.1 at
        // the middle.
        let ranks: Vec<usize> = (0..1000)
            .map(|k| {
                let u = (k as f64 + 0.5) / 1000.0;
                let bent = (u + 0.4 * u * (1.0 - u)).min(0.999_999);
                (bent * 50.0) as usize
            })
            .collect();
        assert!((ecdf_gap(&ranks, 49).unwrap() - 0.1).abs() < 2e-3);
        let chi_square = chi_square_rank_p_value(&ranks, 49, 10).unwrap();
        let ecdf = ecdf_rank_p_value(&ranks, 49).unwrap();
        assert!(chi_square < 1e-6 && ecdf < 1e-6, "{chi_square:e} {ecdf:e}");
        let both = rank_uniformity_p_value(&ranks, 49, 10).unwrap();
        assert_eq!(both, 2.0 * chi_square.min(ecdf));
    }

    #[test]
    fn uniform_ranks_rarely_fail_the_combined_test() {
        // The combined p-value is valid: of 2,000 uniform samples of 100 ranks (a fixed
        // generator), the share below 0.05 is at most 0.05 plus 4 binomial sds.
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let trials = 2000;
        let below = (0..trials)
            .filter(|_| {
                let ranks: Vec<usize> = (0..100).map(|_| rng.random_range(0..=49)).collect();
                rank_uniformity_p_value(&ranks, 49, 10).unwrap() < 0.05
            })
            .count();
        let bound = 0.05 + 4.0 * (0.05 * 0.95 / trials as f64).sqrt();
        assert!(
            (below as f64 / trials as f64) < bound,
            "{below} of {trials}"
        );
    }

    #[test]
    fn spaced_draws_take_the_end_of_the_chain() {
        let chain: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(spaced_draws(&chain, 3, 4), vec![9.0, 5.0, 1.0]);
        assert_eq!(spaced_draws(&chain, 5, 4).len(), 3);
        assert_eq!(spacing_from_ess(1000, Some(100.0)), 10);
    }
}
