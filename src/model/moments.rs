//! Posterior means and sds from weighted sums of deviations about a centre: what a quadrature
//! rule (`super::quadrature`) and INLA's mixture of Laplace gaussians
//! (`crate::sampler::approximation`) both accumulate. Taking the moments about a centre near the
//! mode keeps the variance from cancelling.

/// The mean and sd of each cell from `total` = sum of weights, `first` = sum w (x - centre) and
/// `second` = sum w E(x - centre)^2; a variance that rounding made negative is 0.
pub(crate) fn mean_and_sd_about(
    centre: &[f64],
    first: &[f64],
    second: &[f64],
    total: f64,
) -> (Vec<f64>, Vec<f64>) {
    centre
        .iter()
        .zip(first.iter().zip(second))
        .map(|(centre, (first, second))| {
            let offset = first / total;
            let variance = second / total - offset * offset;
            (centre + offset, variance.max(0.0).sqrt())
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_points_about_either_centre_give_the_same_moments() {
        // Weights 1 and 3 at 1 and 5: mean 4, variance (9 + 3 * 1) / 4 = 3.
        for centre in [0.0, 4.5] {
            let first = [(1.0 - centre) + 3.0 * (5.0 - centre)];
            let second = [(1.0f64 - centre).powi(2) + 3.0 * (5.0f64 - centre).powi(2)];
            let (mean, sd) = mean_and_sd_about(&[centre], &first, &second, 4.0);
            assert!((mean[0] - 4.0).abs() < 1e-12 && (sd[0] - 3f64.sqrt()).abs() < 1e-12);
        }
    }
}
