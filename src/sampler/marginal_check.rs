//! When not to trust INLA's cell marginals: how far the simplified Laplace correction moved each
//! cell's marginal from the Laplace gaussian, at the mode of the hyperparameters.
//!
//! The correction is a first-order expansion in the likelihood's third derivatives
//! ([`crate::model::laplace::skew`]); R-INLA reports, per cell, the symmetric Kullback-Leibler
//! divergence between the two marginals. Where it is large the expansion is stretched: the
//! second-order terms it drops are of the order of the square of what it moved. For a mean moved
//! by d sds at equal sd the divergence is d^2; at [`DIVERGENCE_LIMIT`] = 0.25 the mean moved half
//! a posterior sd, whose square, a quarter sd, is beyond the 0.2 sds to which INLA's means are
//! held against long chains (docs/hyperparameters.md): the job then warns and names the cells.

use crate::model::laplace::skew::SkewMarginals;
use crate::model::skew_normal::{SkewNormal, simpson};

/// The symmetric KL divergence above which a cell is named in the job's warning.
pub(crate) const DIVERGENCE_LIMIT: f64 = 0.25;

/// Cells named in the warning at most.
const NAMED_CELLS: usize = 10;

/// The symmetric KL divergence of each cell's corrected marginal from its Laplace gaussian at the
/// mode of the hyperparameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MarginalCheck {
    pub(crate) divergence: Vec<f64>,
}

impl MarginalCheck {
    /// The divergences of `corrected` from the gaussians N(`mode`, sd^2) (the corrected sds are
    /// the gaussian's).
    pub(crate) fn new(mode: &[f64], corrected: &SkewMarginals) -> Self {
        let divergence = (0..mode.len())
            .map(|c| {
                let skew = SkewNormal::from_moments(
                    corrected.mean[c],
                    corrected.sd[c],
                    corrected.skewness[c],
                );
                symmetric_divergence(mode[c], corrected.sd[c], &skew)
            })
            .collect();
        Self { divergence }
    }

    /// The cells beyond [`DIVERGENCE_LIMIT`], largest first.
    pub(crate) fn cells_beyond(&self) -> Vec<(usize, f64)> {
        let mut beyond: Vec<(usize, f64)> = self
            .divergence
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, d)| d > DIVERGENCE_LIMIT)
            .collect();
        beyond.sort_by(|a, b| b.1.total_cmp(&a.1));
        beyond
    }

    /// The job's warning, when some cell is beyond the limit.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let beyond = self.cells_beyond();
        let Some(&(worst, largest)) = beyond.first() else {
            return Vec::new();
        };
        let named: Vec<String> = beyond
            .iter()
            .take(NAMED_CELLS)
            .map(|(cell, _)| cell.to_string())
            .collect();
        let more = if beyond.len() > NAMED_CELLS {
            ", ..."
        } else {
            ""
        };
        vec![format!(
            "INLA: the simplified Laplace correction moved {} of {} cells' marginals beyond a \
             symmetric KL divergence of {DIVERGENCE_LIMIT} from the Laplace gaussian (largest \
             {largest:.2} at cell {worst}; cells {}{more}): the expansion behind both is \
             stretched there, check those cells with a chain",
            beyond.len(),
            self.divergence.len(),
            named.join(", "),
        )]
    }
}

/// KL(p || q) + KL(q || p) for p = N(mean, sd^2) and q = `skew`, by Simpson's rule over +-12 sds
/// about the gaussian's mean (the corrected mean lies within a few sds of it).
fn symmetric_divergence(mean: f64, sd: f64, skew: &SkewNormal) -> f64 {
    const HALF_WIDTH: f64 = 12.0;
    let term = |x: f64| {
        let z = (x - mean) / sd;
        let p = (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt());
        let q = skew.density(x);
        if p > 0.0 && q > 0.0 {
            (p - q) * (p.ln() - q.ln())
        } else {
            0.0
        }
    };
    simpson(term, mean - HALF_WIDTH * sd, mean + HALF_WIDTH * sd, 480)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two gaussians of equal sd a distance d sds apart: symmetric divergence d^2; a cell moved
    /// half a sd and skewed is named, one moved a tenth is not.
    #[test]
    fn the_divergence_of_a_shifted_gaussian_is_the_shift_squared() {
        for d in [0.1, 0.5, 1.0] {
            let skew = SkewNormal::from_moments(2.0 + 0.7 * d, 0.7, 0.0);
            let divergence = symmetric_divergence(2.0, 0.7, &skew);
            assert!((divergence - d * d).abs() < 1e-9, "{d}: {divergence}");
        }
        let corrected = SkewMarginals {
            mean: vec![0.1, 0.6, 0.0],
            sd: vec![1.0, 1.0, 1.0],
            skewness: vec![0.0, -0.3, 0.0],
        };
        let check = MarginalCheck::new(&[0.0, 0.0, 0.0], &corrected);
        assert!(check.divergence[2] < 1e-20);
        let beyond: Vec<usize> = check.cells_beyond().iter().map(|b| b.0).collect();
        assert_eq!(beyond, vec![1], "{:?}", check.divergence);
        let warnings = check.warnings();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("1 of 3 cells") && warnings[0].contains("cell 1"));
    }
}
