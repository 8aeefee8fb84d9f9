//! The field at sites after a run (`data.source = "sites"`, `output.predict_sites`): each site's
//! posterior of u there, H u with H the bilinear operator of [`crate::model::sites`], from the
//! stored kept draws of every chain (a site's series is the weighted sum of its four cells'
//! series, so its mean, quantiles, ESS and R-hat are those of the field at the site itself), and
//! a held-out measurement's log predictive density log mean_draws p(y | u at the site).
//! An approximation (laplace, inla) has no draws: its posterior mean at a site is H times its
//! cells' means, and the rest is null.

use rayon::prelude::*;

use crate::diagnostics::{self, quantiles_type7};
use crate::model::covariates::Covariates;
use crate::model::data::Dataset;
use crate::model::hyper::HyperName;
use crate::model::likelihood::{Datum, observation_log_density};
use crate::model::sites::{
    CELLS_PER_LENGTH_SCALE, SiteError, SiteOperator, SiteSet, recommended_side,
};
use crate::model::{LikelihoodKind, ModelSpec};
use crate::sampler::RunOutput;

use super::hyper::{Drawn, HyperSummary};
use super::sites_csv::PredictSites;

/// The posterior of the field at one site.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SiteSummary {
    pub(crate) mean: f64,
    pub(crate) sd: Option<f64>,
    /// One per probability of `output.quantiles`, in its order (empty without draws).
    pub(crate) quantiles: Vec<f64>,
    pub(crate) ess_bulk: Option<f64>,
    pub(crate) rhat: Option<f64>,
    pub(crate) mcse_mean: Option<f64>,
    /// log mean over the stored draws of p(y | u at the site): held-out measurements only.
    pub(crate) log_predictive_density: Option<f64>,
    /// With `output.exceedance`: P(f > level | data) at the site for each level, the share of
    /// stored draws (empty without draws).
    pub(crate) exceedance: Vec<f64>,
}

/// How the spatial field f = u - mean - X beta at a site is read from a stored draw, for the
/// exceedance probabilities of `output.exceedance` ([`super::risk::exceedance_levels`]).
#[derive(Clone, Copy)]
pub(crate) struct Spatial<'a> {
    /// The levels of f, one per threshold.
    pub(crate) levels: &'a [f64],
    /// The mean at each pooled stored draw (an inferred one's draw), or the model's.
    pub(crate) mean: Drawn<'a>,
    /// The variance at each pooled stored draw, and the model's variance v0 the levels were made
    /// at: f is judged as f - (v - v0) / 2 (the relative risk at the draw's own variance).
    pub(crate) variance: (Drawn<'a>, f64),
    /// The covariates and their coefficients at each pooled stored draw, draw-major.
    pub(crate) covariates: Option<(&'a Covariates, &'a [f64])>,
}

impl Spatial<'_> {
    /// f at a site of interpolation weights `row` at pooled draw `k`, where u there is `u`.
    fn at(&self, row: &[(usize, f64)], k: usize, u: f64) -> f64 {
        let effect = self.covariates.map_or(0.0, |(covariates, beta)| {
            let p = covariates.count();
            let beta = &beta[k * p..(k + 1) * p];
            row.iter()
                .map(|&(c, w)| w * covariates.fixed_effect_at(beta, c))
                .sum()
        });
        let (variance, variance0) = self.variance;
        let half_excess = (variance.at(k) - variance0) / 2.0;
        u - self.mean.at(k) - effect - half_excess
    }

    /// The share of a site's pooled draws `series` whose f exceeds each level.
    fn exceedance(&self, row: &[(usize, f64)], series: &[f64]) -> Vec<f64> {
        if series.is_empty() {
            return Vec::new();
        }
        let f: Vec<f64> = series
            .iter()
            .enumerate()
            .map(|(k, &u)| self.at(row, k, u))
            .collect();
        self.levels
            .iter()
            .map(|&level| f.iter().filter(|&&v| v > level).count() as f64 / f.len() as f64)
            .collect()
    }
}

/// How a held-out measurement is scored: its likelihood, value and trials, and the noise sd and
/// log offset the likelihood reads it with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured<'a> {
    pub(crate) likelihood: LikelihoodKind,
    pub(crate) values: &'a [f64],
    /// Binomial trials, one per value; empty for the other likelihoods.
    pub(crate) trials: &'a [f64],
    pub(crate) noise: Drawn<'a>,
    pub(crate) offset: f64,
}

/// The field at a job's sites: its measurements' (fitted and held out, sites data only) and the
/// sites of `output.predict_sites`, each in the order of its set.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SiteResults {
    pub(crate) fitted: Vec<SiteSummary>,
    pub(crate) held_out: Vec<SiteSummary>,
    pub(crate) predict: Vec<SiteSummary>,
    /// Gaussian: E[s^2], the noise variance a new measurement adds to the field's (the model's
    /// noise sd squared, or the posterior mean of an inferred one's square); None otherwise.
    pub(crate) noise_variance: Option<f64>,
}

impl SiteResults {
    /// The mean log predictive density over the held-out measurements (None without any, or
    /// without draws).
    pub(crate) fn heldout_lpd(&self) -> Option<f64> {
        let each: Option<Vec<f64>> = self
            .held_out
            .iter()
            .map(|s| s.log_predictive_density)
            .collect();
        let each = each?;
        (!each.is_empty()).then(|| each.iter().sum::<f64>() / each.len() as f64)
    }
}

/// The field at a job's sites (None without measurements at sites or sites to predict at),
/// held-out measurements scored with `noise`, the quantiles of `probabilities` reported.
pub(crate) fn results(
    model: &ModelSpec,
    data: &Dataset,
    predict: Option<&PredictSites>,
    (run, noise, spatial): (&RunOutput, Drawn<'_>, Option<Spatial<'_>>),
    probabilities: &[f64],
) -> Result<Option<SiteResults>, SiteError> {
    let noise_variance =
        (model.likelihood == LikelihoodKind::Gaussian).then(|| noise.mean_square());
    let predicted = match predict {
        Some(sites) => {
            let operator = SiteOperator::bilinear(&model.grid, &sites.positions)?;
            summarise(run, &operator, None, spatial, probabilities)
        }
        None => Vec::new(),
    };
    let Some(sites) = data.sites.as_ref() else {
        return Ok(predict.map(|_| SiteResults {
            predict: predicted,
            noise_variance,
            ..SiteResults::default()
        }));
    };
    let held_out: &SiteSet = &sites.held_out;
    let measured = Measured {
        likelihood: model.likelihood,
        values: &held_out.values,
        trials: &held_out.trials,
        noise,
        offset: data.offsets.common,
    };
    Ok(Some(SiteResults {
        fitted: summarise(run, &sites.fitted.operator, None, spatial, probabilities),
        held_out: summarise(
            run,
            &held_out.operator,
            Some(measured),
            spatial,
            probabilities,
        ),
        predict: predicted,
        noise_variance,
    }))
}

/// The coefficients at `run`'s stored draws, pooled as the sites pool the draws (chain after
/// chain, the first `per_chain` of each), draw-major; empty without covariates.
pub(crate) fn pooled_coefficients(run: &RunOutput) -> Vec<f64> {
    let per_chain = run.chains.iter().map(|c| c.draws.len()).min().unwrap_or(0);
    run.chains
        .iter()
        .flat_map(|c| {
            let draws = &c.coefficients;
            let p = draws.values.len() / draws.iteration.len().max(1);
            draws.values[..(per_chain * p).min(draws.values.len())]
                .iter()
                .copied()
        })
        .collect()
}

/// Every site's summary of `run` through `operator`, with the quantiles of `probabilities`
/// (with `measured`, each site's log predictive density of its measurement too; with `spatial`,
/// its exceedance probabilities).
pub(crate) fn summarise(
    run: &RunOutput,
    operator: &SiteOperator,
    measured: Option<Measured<'_>>,
    spatial: Option<Spatial<'_>>,
    probabilities: &[f64],
) -> Vec<SiteSummary> {
    if run.chains.is_empty() {
        let mut means = vec![0.0; operator.len()];
        operator.gather(&run.post_mean, &mut means);
        return means
            .into_iter()
            .map(|mean| SiteSummary {
                mean,
                ..SiteSummary::default()
            })
            .collect();
    }
    let per_chain = run.chains.iter().map(|c| c.draws.len()).min().unwrap_or(0);
    operator
        .rows()
        .par_iter()
        .enumerate()
        .map(|(site, row)| {
            let series: Vec<Vec<f64>> = run
                .chains
                .iter()
                .map(|chain| {
                    let draws = &chain.draws;
                    (0..per_chain)
                        .map(|d| {
                            row.iter()
                                .map(|&(c, w)| w * f64::from(draws.values[d * draws.cells + c]))
                                .sum()
                        })
                        .collect()
                })
                .collect();
            let mut summary = summary_of(&series, measured.map(|m| (m, site)), probabilities);
            if let Some(spatial) = spatial {
                summary.exceedance = spatial.exceedance(row, &series.concat());
            }
            summary
        })
        .collect()
}

/// The summary of one site's series per chain: the field at a site follows the cells'
/// conventions (sd with divisor n - 1, as `fields.parquet`'s `post_sd`; type-7 quantiles), not
/// [`super::hyper::SeriesSummary`]'s divisor n for hyperparameters and coefficients.
fn summary_of(
    series: &[Vec<f64>],
    measured: Option<(Measured<'_>, usize)>,
    probabilities: &[f64],
) -> SiteSummary {
    let pooled: Vec<f64> = series.iter().flatten().copied().collect();
    let n = pooled.len();
    if n == 0 {
        return SiteSummary::default();
    }
    let mean = pooled.iter().sum::<f64>() / n as f64;
    let sd = (n > 1)
        .then(|| (pooled.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
    let diagnosed = diagnostics::summarize(&views);
    SiteSummary {
        mean,
        sd,
        quantiles: quantiles_type7(&pooled, probabilities),
        ess_bulk: diagnosed.ess_bulk,
        rhat: diagnosed.rhat,
        mcse_mean: diagnosed.mcse_mean,
        log_predictive_density: measured.map(|(m, site)| log_predictive(m, site, &pooled)),
        exceedance: Vec::new(),
    }
}

/// log mean over `draws` of p(y | u) for measurement `site` (the full density or mass, its
/// normalising constant included).
fn log_predictive(m: Measured<'_>, site: usize, draws: &[f64]) -> f64 {
    let datum = Datum {
        value: m.values[site],
        trials: m.trials.get(site).copied().unwrap_or(0.0),
        offset: m.offset,
    };
    let log_density =
        |k: usize, u: f64| observation_log_density(m.likelihood, datum, u, m.noise.at(k));
    let logs: Vec<f64> = draws
        .iter()
        .enumerate()
        .map(|(k, &u)| log_density(k, u))
        .collect();
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return top;
    }
    top + (logs.iter().map(|l| (l - top).exp()).sum::<f64>() / logs.len() as f64).ln()
}

/// Measurements at sites are read between cell centres, which is within 0.1 posterior sds of
/// exact kriging from [`CELLS_PER_LENGTH_SCALE`] cells per length scale (docs/data.md): a warning
/// when the grid puts fewer in the length scale along an axis (an inferred one's posterior mean,
/// from `hyper`), with the grid that would not. None for data not at sites, and when every site
/// (measured or to predict at) sits on a cell centre: the grid's prior is then the Gaussian
/// process at the sites themselves, whatever the spacing.
pub(crate) fn coarse_grid_warning(
    model: &ModelSpec,
    data: &Dataset,
    predict: Option<&PredictSites>,
    hyper: &[HyperSummary],
) -> Option<String> {
    let sites = data.sites.as_ref()?;
    let predicted = predict
        .map(|p| SiteOperator::bilinear(&model.grid, &p.positions))
        .transpose()
        .ok()?;
    let all_on_centres = [&sites.fitted.operator, &sites.held_out.operator]
        .into_iter()
        .chain(predicted.as_ref())
        .all(SiteOperator::on_cell_centres);
    if all_on_centres {
        return None;
    }
    let inferred = |name: HyperName| {
        hyper
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.posterior.mean)
    };
    let lx = inferred(HyperName::LengthScale).unwrap_or(model.kernel.length_scale);
    let ly = inferred(HyperName::LengthScaleY)
        .or(model.kernel.length_scale_y)
        .unwrap_or(lx);
    let (dx, dy) = model.grid.spacing();
    let fewest = (lx / dx).min(ly / dy);
    // A grid sized by recommended_side has 12 cells to within rounding.
    (fewest < CELLS_PER_LENGTH_SCALE * (1.0 - 1e-9)).then(|| {
        let window = model.grid.window();
        let nx = recommended_side(window.x.1 - window.x.0, lx);
        let ny = recommended_side(window.y.1 - window.y.0, ly);
        format!(
            "the {} x {} grid puts {fewest:.1} cells in the length scale (fewest over the axes; \
             an inferred one's posterior mean): measurements at sites are read between cell \
             centres, within 0.1 posterior sds of exact kriging from {CELLS_PER_LENGTH_SCALE:.0} \
             cells per length scale (docs/data.md); use model.grid = [{nx}, {ny}], or leave \
             model.grid out to get one",
            model.grid.nx(),
            model.grid.ny()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A site's exceedance probability is the share of its draws whose spatial field, u less the
    /// draw's mean and the draw's covariate effect interpolated with the site's weights, is above
    /// the level: counted here by hand with the effect from [`Covariates::add_fixed_effect`] over
    /// the whole field.
    #[test]
    fn exceedance_at_a_site_removes_each_draws_mean_and_covariate_effect() {
        let column: Vec<f64> = vec![0.0, 1.0, 2.0, 5.0];
        let covariates =
            Covariates::new(vec![("x".into(), column)], 4, false, 1.0, "test".into()).unwrap();
        let row: crate::model::sites::SiteRow = [(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)];
        let series = [1.0, 2.5, -0.5, 3.0];
        let means = [0.2, 0.4, -1.0, 0.0];
        let betas = [0.5, -0.2, 0.1, 0.3];
        let levels = [0.0, 1.0];
        let spatial = Spatial {
            levels: &levels,
            mean: Drawn::PerDraw(&means),
            covariates: Some((&covariates, &betas)),
            variance: (Drawn::Fixed(1.0), 1.0),
        };
        let probabilities = spatial.exceedance(&row, &series);
        let f: Vec<f64> = (0..4)
            .map(|k| {
                let mut effect = vec![0.0; 4];
                covariates.add_fixed_effect(&betas[k..=k], &mut effect);
                let at_site: f64 = row.iter().map(|&(c, w)| w * effect[c]).sum();
                series[k] - means[k] - at_site
            })
            .collect();
        for (p, level) in probabilities.iter().zip(levels) {
            let expected = f.iter().filter(|&&v| v > level).count() as f64 / 4.0;
            assert_eq!(*p, expected);
        }
        // x at the site is 2.8, so f = -0.6, 2.66, 0.22, 2.16: three above 0, two above 1.
        assert_eq!(probabilities, vec![0.75, 0.5]);
        assert!(spatial.exceedance(&row, &[]).is_empty());
        // Drawn variances 1.0, 3.0, 1.0, 5.0 against the levels' 1.0: f less (v - 1) / 2, so
        // -0.6, 1.66, 0.22, 0.16: three above 0, one above 1.
        let variances = [1.0, 3.0, 1.0, 5.0];
        let shifted = Spatial {
            variance: (Drawn::PerDraw(&variances), 1.0),
            ..spatial
        };
        assert_eq!(shifted.exceedance(&row, &series), vec![0.75, 0.25]);
    }

    /// The gaussian predictive density of a measurement, over draws that are all the same, is the
    /// normal density at that value; over two draws, the mean of the two densities.
    #[test]
    fn log_predictive_density_is_the_mean_density_over_draws() {
        let m = Measured {
            likelihood: LikelihoodKind::Gaussian,
            values: &[1.0],
            trials: &[],
            noise: Drawn::Fixed(2.0),
            offset: 0.0,
        };
        let normal = |y: f64, u: f64, s: f64| {
            (-(y - u).powi(2) / (2.0 * s * s)).exp() / (s * (2.0 * std::f64::consts::PI).sqrt())
        };
        assert!((log_predictive(m, 0, &[0.5, 0.5]) - normal(1.0, 0.5, 2.0).ln()).abs() < 1e-12);
        let two = ((normal(1.0, 0.0, 2.0) + normal(1.0, 3.0, 2.0)) / 2.0).ln();
        assert!((log_predictive(m, 0, &[0.0, 3.0]) - two).abs() < 1e-12);
        let counts = Measured {
            likelihood: LikelihoodKind::Poisson,
            values: &[3.0],
            trials: &[],
            noise: Drawn::Fixed(1.0),
            offset: 0.2,
        };
        let rate: f64 = (1.1f64 + 0.2).exp();
        let poisson = (rate.powi(3) * (-rate).exp() / 6.0).ln();
        assert!((log_predictive(counts, 0, &[1.1]) - poisson).abs() < 1e-12);
    }

    /// A site's series is the weighted sum of its cells' series: its mean is H times the cells'
    /// means, whatever the draws.
    #[test]
    fn a_sites_summary_is_that_of_the_interpolated_series() {
        let series = vec![vec![1.0, 2.0, 3.0], vec![2.0, 3.0, 4.0]];
        let s = summary_of(&series, None, &[0.025, 0.5]);
        assert!((s.mean - 2.5).abs() < 1e-12);
        // numpy: np.quantile([1, 2, 3, 2, 3, 4], [0.025, 0.5]) = [1.125, 2.5].
        assert_eq!(s.quantiles.len(), 2);
        assert!((s.quantiles[0] - 1.125).abs() < 1e-12, "{:?}", s.quantiles);
        assert!((s.quantiles[1] - 2.5).abs() < 1e-12, "{:?}", s.quantiles);
        let sd = ((2.25 + 0.25 + 0.25 + 0.25 + 0.25 + 2.25) / 5.0f64).sqrt();
        assert!((s.sd.unwrap() - sd).abs() < 1e-12);
        assert_eq!(s.log_predictive_density, None);
    }
}
