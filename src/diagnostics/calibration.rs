//! Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018): if the
//! sampler is right, the rank of the true value among L posterior draws, over many truths drawn
//! from the prior, is uniform on {0, ..., L}. Draws are thinned by the chain's autocorrelation so
//! they are close to independent (correlated draws make rank histograms look wrong even when the
//! sampler is right).

/// The rank of `truth` among `draws`: how many draws are smaller.
pub fn rank_of(truth: f64, draws: &[f64]) -> usize {
    draws.iter().filter(|&&d| d < truth).count()
}

/// `wanted` draws spaced `spacing` apart, taken from the end of `chain` (the best-mixed part).
/// Fewer when the chain is too short.
pub fn spaced_draws(chain: &[f64], wanted: usize, spacing: usize) -> Vec<f64> {
    let spacing = spacing.max(1);
    let available = chain.len().div_ceil(spacing);
    let count = wanted.min(available);
    (0..count)
        .map(|k| chain[chain.len() - 1 - k * spacing])
        .collect()
}

/// The thinning that makes draws roughly independent: ceil(len / ESS).
pub fn spacing_from_ess(len: usize, ess: Option<f64>) -> usize {
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
pub fn rank_histogram(ranks: &[usize], max_rank: usize, bins: usize) -> Vec<usize> {
    let mut counts = vec![0; bins];
    for &r in ranks {
        counts[bin_of(r, max_rank, bins)] += 1;
    }
    counts
}

/// The p-value of Pearson's chi-square test that `ranks` are uniform on 0..=max_rank, over
/// `bins` bins; a bin's expected count is proportional to how many ranks it holds, so bins
/// need not divide max_rank + 1 evenly. None for fewer than two bins or no ranks.
pub fn rank_uniformity_p_value(ranks: &[usize], max_rank: usize, bins: usize) -> Option<f64> {
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

/// Bins for a rank histogram of `replications` ranks: at most 10, and at least 5 expected
/// counts per bin.
pub fn histogram_bins(replications: usize, max_rank: usize) -> usize {
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
    fn ranks_and_histograms() {
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
    fn spaced_draws_take_the_end_of_the_chain() {
        let chain: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(spaced_draws(&chain, 3, 4), vec![9.0, 5.0, 1.0]);
        assert_eq!(spaced_draws(&chain, 5, 4).len(), 3);
        assert_eq!(spacing_from_ess(1000, Some(100.0)), 10);
    }
}
