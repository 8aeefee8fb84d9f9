//! The posterior of the covariates' coefficients: mean, sd, the quantiles of `output.quantiles`,
//! bulk ESS and R-hat of each, on the standardised scale the chains move in and on the covariate's own scale
//! (the `coef_<name>_<statistic>` columns of jobs.parquet), from the chains' stored draws
//! (`coefficients.parquet`; thinned as the cell draws, `output.cell_draws` per chain), or from
//! the Laplace approximation's gaussian marginals.

use crate::diagnostics::standard_normal_quantile;
use crate::model::covariates::Covariates;
use crate::sampler::RunOutput;

use super::hyper::SeriesSummary;
use super::quantiles::Quantiles;

/// One coefficient's posterior.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoefficientSummary {
    pub(crate) name: String,
    /// On the scale of the design (standardised unless `data.standardize = false`).
    pub(crate) posterior: SeriesSummary,
    /// The same divided by the covariate's sd: per unit of the raw covariate.
    pub(crate) raw: SeriesSummary,
}

/// The stored series of coefficient `index` of `count`, one per chain.
pub(crate) fn series(run: &RunOutput, index: usize, count: usize) -> Vec<Vec<f64>> {
    run.chains
        .iter()
        .map(|c| c.coefficients.series(index, count))
        .collect()
}

/// Every coefficient's posterior with `quantiles` (empty without covariates).
pub(crate) fn summarize(
    covariates: Option<&Covariates>,
    run: &RunOutput,
    quantiles: &Quantiles,
) -> Vec<CoefficientSummary> {
    let Some(covariates) = covariates else {
        return Vec::new();
    };
    let count = covariates.count();
    covariates
        .names
        .iter()
        .enumerate()
        .filter_map(|(k, name)| {
            let posterior = match run.coefficient_marginals.get(k) {
                Some(&(mean, sd)) => gaussian(mean, sd, quantiles),
                None => SeriesSummary::of(&series(run, k, count), quantiles)?,
            };
            Some(CoefficientSummary {
                name: name.clone(),
                raw: posterior.clone().scaled(1.0 / covariates.scales[k]),
                posterior,
            })
        })
        .collect()
}

/// The summary of a gaussian marginal N(mean, sd^2) with `quantiles`: no ESS, no R-hat.
fn gaussian(mean: f64, sd: f64, quantiles: &Quantiles) -> SeriesSummary {
    SeriesSummary {
        mean,
        sd,
        quantiles: quantiles
            .probabilities()
            .into_iter()
            .map(|p| mean + normal_quantile(p) * sd)
            .collect(),
        ess_bulk: None,
        rhat: None,
    }
}

/// The standard normal's `p` quantile, symmetric (the quantile of p < 1/2 is minus that of
/// 1 - p) and refined from [`standard_normal_quantile`] by one Newton step on the upper tail
/// probability 1 - p (exact for p >= 1/2), which makes it correctly rounded at the default 95 %
/// (1.6448536269514722, the value these columns always had).
fn normal_quantile(p: f64) -> f64 {
    if p < 0.5 {
        return -normal_quantile(1.0 - p);
    }
    let tail = 1.0 - p;
    let z = standard_normal_quantile(p);
    let upper_tail = 0.5 * libm::erfc(z * std::f64::consts::FRAC_1_SQRT_2);
    let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    z + (upper_tail - tail) / density
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gaussian marginal's quantile of p is mean + z_p sd; the default pair is mean -/+
    /// 1.6448536269514722 sd to the last bit, the values written before `output.quantiles`.
    #[test]
    fn a_gaussian_marginals_quantiles_are_the_normals() {
        let z = 1.644_853_626_951_472_2;
        let (mean, sd) = (0.3, 1.7);
        let default = gaussian(mean, sd, &Quantiles::default_pair());
        assert_eq!(default.quantiles, [mean - z * sd, mean + z * sd]);
        // The normal's 2.5 %, 50 % and 97.5 % points: -1.959964, 0, 1.959964.
        let wide = gaussian(mean, sd, &Quantiles::new(&[0.025, 0.5, 0.975]).unwrap());
        let z975 = 1.959_963_984_540_054;
        for (got, want) in wide.quantiles.iter().zip([-z975, 0.0, z975]) {
            assert!((got - (mean + want * sd)).abs() < 1e-12, "{got}");
        }
    }
}
