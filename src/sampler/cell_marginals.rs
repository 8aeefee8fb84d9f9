//! The cells' marginals of an approximation: at one point of the hyperparameters
//! ([`PointMarginals`]: each cell's Laplace gaussian, or its simplified Laplace skew-normal), and
//! INLA's mixture of them over the grid points ([`CellMixture`]), with the expectations a job
//! reports from them: each cell's mean and sd, the functional's mean (expected count, predictive
//! probability) and the exceedance probabilities of a risk map.
//!
//! A skew-normal marginal keeps the gaussian's sd and moves its mean
//! ([`crate::model::laplace::skew`]); its functional's mean is the half-normal mixture of the
//! gaussian closed forms ([`SkewNormal::expectation`]) and its exceedance its survival function
//! (Owen's T). Without a correction (strategy `gaussian`, or where none could be computed) the
//! closed forms of the gaussian are used, number for number as before.

use super::driver::Functional;
use super::protocol::Notes;
use crate::model::laplace::SdMethod;
use crate::model::laplace::skew::SkewMarginals;
use crate::model::moments::mean_and_sd_about;
use crate::model::skew_normal::SkewNormal;
use crate::model::special::phi;

/// The rank of low-rank sds.
pub(crate) fn rank_of(method: SdMethod) -> Option<usize> {
    match method {
        SdMethod::LowRank { rank, .. } => Some(rank),
        SdMethod::Exact => None,
    }
}

/// Every cell's marginal at one point of the hyperparameters.
pub(crate) struct PointMarginals<'m> {
    pub(crate) mean: &'m [f64],
    pub(crate) sd: &'m [f64],
    /// The simplified Laplace skewness of each cell (`None`: the gaussian marginals).
    pub(crate) skewness: Option<&'m [f64]>,
}

impl<'m> PointMarginals<'m> {
    /// The gaussian marginals N(mean, sd^2).
    pub(crate) fn gaussian(mean: &'m [f64], sd: &'m [f64]) -> Self {
        Self {
            mean,
            sd,
            skewness: None,
        }
    }

    /// The simplified Laplace marginals.
    pub(crate) fn skewed(skew: &'m SkewMarginals) -> Self {
        Self {
            mean: &skew.mean,
            sd: &skew.sd,
            skewness: Some(&skew.skewness),
        }
    }

    /// The simplified Laplace marginals when there are some, else the gaussians N(mode, sd^2).
    pub(crate) fn of(skew: Option<&'m SkewMarginals>, mode: &'m [f64], sd: &'m [f64]) -> Self {
        match skew {
            Some(skew) => Self::skewed(skew),
            None => Self::gaussian(mode, sd),
        }
    }

    /// Cell `cell`'s skew-normal, when the marginals are skewed.
    fn skew_normal(&self, cell: usize) -> Option<SkewNormal> {
        self.skewness
            .map(|g| SkewNormal::from_moments(self.mean[cell], self.sd[cell], g[cell]))
    }

    /// E f(u) per cell.
    pub(crate) fn functional_mean(&self, functional: &Functional) -> Vec<f64> {
        (0..self.mean.len())
            .map(|cell| {
                let gaussian = |m: f64, s: f64| functional.gaussian_expectation(cell, m, s);
                match (self.skew_normal(cell), functional) {
                    (Some(d), Functional::ExpectedCount { offsets }) => d.exp_mean(offsets[cell]),
                    (Some(d), _) => d.expectation(gaussian),
                    (None, _) => gaussian(self.mean[cell], self.sd[cell]),
                }
            })
            .collect()
    }

    /// P(u > level + shift) per level and cell (level-major), `shift` the mean (and the
    /// variance's excess, halved) that u's spatial part is measured from.
    pub(crate) fn exceedance(&self, levels: &[f64], shift: f64) -> Vec<Vec<f64>> {
        levels
            .iter()
            .map(|&level| {
                (0..self.mean.len())
                    .map(|cell| {
                        let threshold = level + shift;
                        match self.skew_normal(cell) {
                            Some(d) => d.survival(threshold),
                            None => phi((self.mean[cell] - threshold) / self.sd[cell]),
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

/// The cells' mixture of marginals over the grid points, accumulated point by point with
/// weights exp(log p~_k - log p~_0) relative to the first point (the mode), about whose means
/// the moments are taken (so that the variance does not cancel).
pub(crate) struct CellMixture {
    functional: Option<Functional>,
    /// Exceedance levels (empty: none asked, or not available for the model).
    levels: Vec<f64>,
    total: f64,
    centre: Vec<f64>,
    first: Vec<f64>,
    second: Vec<f64>,
    functional_sum: Vec<f64>,
    exceedance_sum: Vec<Vec<f64>>,
    reference: Option<f64>,
    pub(crate) sd_method: SdMethod,
    mode_newton_iterations: Option<usize>,
}

/// What a mixture gives: each cell's mean and sd, the functional's mean and the exceedance
/// probabilities (level-major; empty when none were asked for).
pub(crate) struct MixedMarginals {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
    pub(crate) functional_mean: Option<Vec<f64>>,
    pub(crate) exceedance: Vec<Vec<f64>>,
}

impl CellMixture {
    pub(crate) fn new(cells: usize, functional: Option<Functional>, levels: &[f64]) -> Self {
        Self {
            total: 0.0,
            centre: Vec::new(),
            first: vec![0.0; cells],
            second: vec![0.0; cells],
            functional_sum: vec![0.0; if functional.is_some() { cells } else { 0 }],
            functional,
            exceedance_sum: vec![vec![0.0; cells]; levels.len()],
            levels: levels.to_vec(),
            reference: None,
            sd_method: SdMethod::Exact,
            mode_newton_iterations: None,
        }
    }

    /// Add the point of log density `log_density` whose cells' marginals are `marginals`, their
    /// sds computed by `method`; its exceedances are those of `spatial` (the spatial field's
    /// marginals, for a model with covariates) or else of `marginals`, measured from `shift`.
    pub(crate) fn add(
        &mut self,
        log_density: f64,
        marginals: &PointMarginals,
        spatial: Option<&PointMarginals>,
        method: SdMethod,
        shift: f64,
    ) {
        let reference = *self.reference.get_or_insert(log_density);
        if self.centre.is_empty() {
            self.centre = marginals.mean.to_vec();
        }
        let w = (log_density - reference).exp();
        self.total += w;
        for (c, (&m, &s)) in marginals.mean.iter().zip(marginals.sd).enumerate() {
            let offset = m - self.centre[c];
            self.first[c] += w * offset;
            self.second[c] += w * (offset * offset + s * s);
        }
        if let Some(functional) = &self.functional {
            let values = marginals.functional_mean(functional);
            for (sum, value) in self.functional_sum.iter_mut().zip(values) {
                *sum += w * value;
            }
        }
        let exceedance = spatial.unwrap_or(marginals).exceedance(&self.levels, shift);
        for (sums, values) in self.exceedance_sum.iter_mut().zip(exceedance) {
            for (sum, value) in sums.iter_mut().zip(values) {
                *sum += w * value;
            }
        }
        if let (SdMethod::Exact, SdMethod::LowRank { .. }) = (self.sd_method, method) {
            self.sd_method = method;
        }
    }

    /// Record a kept point's Newton iterations (the first is the mode's).
    pub(crate) fn note_fit(&mut self, iterations: usize) {
        self.mode_newton_iterations.get_or_insert(iterations);
    }

    pub(crate) fn notes(&self) -> Notes {
        Notes {
            rank: rank_of(self.sd_method),
            newton_iterations: self.mode_newton_iterations,
            laplace_error: None,
        }
    }

    pub(crate) fn finish(self) -> MixedMarginals {
        let total = self.total;
        let (mean, sd) = mean_and_sd_about(&self.centre, &self.first, &self.second, total);
        let functional_mean = self
            .functional
            .map(|_| self.functional_sum.iter().map(|s| s / total).collect());
        let exceedance = self
            .exceedance_sum
            .into_iter()
            .map(|sums| {
                sums.into_iter()
                    .map(|s| (s / total).clamp(0.0, 1.0))
                    .collect()
            })
            .collect();
        MixedMarginals {
            mean,
            sd,
            functional_mean,
            exceedance,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two points, log densities ln 3 and ln 1 (weights 3/4 and 1/4): the mixture's mean, sd,
    /// expected count and exceedance by hand.
    #[test]
    fn the_cell_mixture_weights_its_marginals() {
        let functional = Functional::expected_count(0.1, 1);
        let mut mixture = CellMixture::new(1, Some(functional), &[1.5]);
        let gaussian =
            |mean: &'static [f64], sd: &'static [f64]| PointMarginals::gaussian(mean, sd);
        mixture.add(
            3f64.ln(),
            &gaussian(&[1.0], &[0.5]),
            None,
            SdMethod::Exact,
            0.0,
        );
        mixture.add(0.0, &gaussian(&[2.0], &[1.0]), None, SdMethod::Exact, 0.25);
        let out = mixture.finish();
        let mean = 0.75 * 1.0 + 0.25 * 2.0;
        let second = 0.75 * (1.0 + 0.25) + 0.25 * (4.0 + 1.0);
        assert!((out.mean[0] - mean).abs() < 1e-12);
        assert!((out.sd[0] - (second - mean * mean).sqrt()).abs() < 1e-12);
        let count = 0.75 * (1.1f64 + 0.125).exp() + 0.25 * (2.1f64 + 0.5).exp();
        assert!((out.functional_mean.unwrap()[0] - count).abs() < 1e-12);
        let above = 0.75 * phi((1.0 - 1.5) / 0.5) + 0.25 * phi((2.0 - 1.75) / 1.0);
        assert!((out.exceedance[0][0] - above).abs() < 1e-12);
    }

    /// A skew-normal point with skewness 0 is the gaussian, number for number in the moments
    /// and to quadrature accuracy in the expectations.
    #[test]
    fn zero_skewness_is_the_gaussian() {
        let skew = SkewMarginals {
            mean: vec![0.4, -1.0],
            sd: vec![0.7, 1.3],
            skewness: vec![0.0, 0.0],
        };
        let (skewed, plain) = (
            PointMarginals::skewed(&skew),
            PointMarginals::gaussian(&skew.mean, &skew.sd),
        );
        let functional = Functional::expected_count(-0.2, 2);
        for (a, b) in skewed
            .functional_mean(&functional)
            .iter()
            .zip(plain.functional_mean(&functional))
        {
            assert!((a - b).abs() < 1e-12 * b, "{a} {b}");
        }
        let (a, b) = (
            skewed.exceedance(&[0.3], 0.1),
            plain.exceedance(&[0.3], 0.1),
        );
        for (x, y) in a[0].iter().zip(&b[0]) {
            assert!((x - y).abs() < 1e-12, "{x} {y}");
        }
    }
}
