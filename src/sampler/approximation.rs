//! Kinds that are not Markov chains, run through the same door as the samplers
//! ([`super::run_kind`]) so that a study can put them beside the samplers and the job writes the
//! same tables: the Laplace approximation ([`crate::model::laplace`]) and INLA's nested Laplace
//! approximation over the inferred hyperparameters ([`crate::model::inla`]).
//!
//! A Laplace "run" has no chains: the posterior mean of every cell is the mode's field, its sd the
//! approximation's (exact to rounding for M <= 2,500 observations, by low rank with a stated
//! bound above), no Monte Carlo error; the functional's mean (expected count, predictive
//! probability) is its expectation under the approximation's gaussian marginal of each cell:
//! E exp(u + offset) = exp(m + offset + sd^2 / 2) and E Phi(u / s) = Phi(m / sqrt(s^2 + sd^2)).
//! The Laplace log marginal likelihood is reported with it.
//!
//! An INLA run ([`inla_run`]) mixes its grid points' marginals of each cell
//! ([`super::cell_marginals`]): by default ([`InlaStrategy::SimplifiedLaplace`]) each point's
//! Laplace gaussian corrected in location and skewness ([`crate::model::laplace::skew`]), else
//! the gaussian itself; the mixture sum_k w_k p_k(u) is reported by its mean, sd, functional mean
//! and exceedance probabilities. With no hyperparameter inferred it is the one point's marginals:
//! the Laplace approximation, corrected by the strategy.

pub use super::approximated::{Approximation, InlaOutcome};
use super::cell_marginals::{CellMixture, MixedMarginals, PointMarginals, rank_of};
use super::driver::{RunOutput, RunRequest, probe_cells};
use super::inla_check::check_laplace;
use super::marginal_check::MarginalCheck;
use super::protocol::{ChainRng, Notes};
use crate::model::inla::{
    HyperProblem, InlaSettings, InlaStrategy, explore, log_evidence, marginals,
};
use crate::model::laplace::covariance::exact_inverse_available;
use crate::model::laplace::skew::{CorrectedMarginals, Correction};
use crate::model::laplace::{
    LaplaceError, LaplaceFit, LaplaceMarginals, LaplaceSettings, SdMethod, coefficient_marginals,
};

/// The Laplace approximation of `request`'s target, as a run without chains.
pub(crate) fn laplace_run(request: &RunRequest) -> RunOutput {
    point_run(
        request,
        InlaSettings::for_strategy(InlaStrategy::Gaussian).laplace,
    )
}

/// The Laplace approximation at the request's hyperparameters, each cell's marginal corrected as
/// `settings` asks, as a run without chains.
fn point_run(request: &RunRequest, settings: LaplaceSettings) -> RunOutput {
    let started = std::time::Instant::now();
    let target = &request.target;
    let fitted = LaplaceFit::new(target, &settings.newton).and_then(|fit| {
        let correction = Correction::new(target, &fit, &settings, None)?;
        let marginals = correction.marginals(target, &fit, &settings)?;
        // The simplified Laplace strategy reports the evidence with its second-order
        // correction, as INLA's grid weighs it.
        let log_evidence = correction.log_evidence(target, &fit, &settings)?;
        let spatial = if request.exceedance.is_empty() {
            None
        } else {
            correction.spatial_marginals(target, &fit, &settings)?
        };
        Ok::<_, LaplaceError>((fit, marginals, log_evidence, spatial))
    });
    let (fit, marginals, log_evidence, spatial) = match fitted {
        Ok(fitted) => fitted,
        Err(error) => return failed_run(request, error.to_string(), started),
    };
    let CorrectedMarginals {
        laplace: LaplaceMarginals { sd, method, .. },
        skew,
        uncorrected,
    } = marginals;
    let notes = Notes {
        rank: rank_of(method),
        newton_iterations: Some(fit.newton.iterations),
        laplace_error: None,
    };
    let point = PointMarginals::of(skew.as_ref(), &fit.field, &sd);
    let mixed = MixedMarginals {
        mean: point.mean.to_vec(),
        sd: point.sd.to_vec(),
        functional_mean: request
            .functional
            .as_ref()
            .map(|f| point.functional_mean(f)),
        // Judged on the spatial field: u less the mean, or (with covariates) the spatial
        // field's own marginals, where they could be computed.
        exceedance: match (target.prior.covariates(), &spatial) {
            (None, _) => point.exceedance(request.exceedance, target.mean),
            (Some(_), Some(spatial)) => {
                PointMarginals::skewed(spatial).exceedance(request.exceedance, 0.0)
            }
            (Some(_), None) => Vec::new(),
        },
    };
    let approximation = Approximation {
        log_evidence,
        sd_method: method,
        error: None,
        inla: None,
        uncorrected,
        marginal_check: skew.as_ref().map(|s| MarginalCheck::new(&fit.field, s)),
    };
    let mut run = approximate_run(request, mixed, notes, approximation, started);
    run.coefficient_marginals = coefficient_marginals(target, &fit);
    run
}

/// The run without chains that reports `marginals`.
fn approximate_run(
    request: &RunRequest,
    marginals: MixedMarginals,
    notes: Notes,
    approximation: Approximation,
    started: std::time::Instant,
) -> RunOutput {
    RunOutput {
        chains: Vec::new(),
        acceptance_rate: f64::NAN,
        post_mean: marginals.mean,
        post_sd: marginals.sd,
        post_mean_mcse: None,
        post_sd_mcse: None,
        functional_mean: marginals.functional_mean,
        exceedance: marginals.exceedance,
        coefficient_marginals: Vec::new(),
        convergence: Vec::new(),
        probe_cells: probe_cells(request.target.prior.grid()),
        sample_seconds: started.elapsed().as_secs_f64(),
        cpu_seconds: None,
        notes,
        approximation: Some(approximation),
    }
}

/// The run of an approximation that failed with `error` (its marginals are not numbers; the job
/// records the error).
fn failed_run(request: &RunRequest, error: String, started: std::time::Instant) -> RunOutput {
    let approximation = Approximation {
        log_evidence: f64::NAN,
        sd_method: SdMethod::Exact,
        error: Some(error),
        inla: None,
        uncorrected: None,
        marginal_check: None,
    };
    let nan = vec![f64::NAN; request.target.cells()];
    let marginals = MixedMarginals {
        mean: nan.clone(),
        sd: nan,
        functional_mean: None,
        exceedance: Vec::new(),
    };
    approximate_run(request, marginals, Notes::default(), approximation, started)
}

/// INLA over the hyperparameters `request` infers ([`crate::model::inla`]) with `settings`
/// (their strategy for each cell's marginal at a grid point, their integration); the Laplace
/// approximation, corrected by the strategy, when it infers none. The first of `rngs` drives the check of the Laplace evidence
/// ([`check_laplace`]); without streams (a library caller's request) nothing is checked.
pub(crate) fn inla_run(
    request: &RunRequest,
    rngs: Vec<ChainRng>,
    settings: InlaSettings,
) -> RunOutput {
    let Some(hyper) = request.hyper.filter(|h| h.model.hyper.any()) else {
        return point_run(request, settings.laplace);
    };
    let started = std::time::Instant::now();
    let target = &request.target;
    let problem = HyperProblem {
        model: hyper.model,
        likelihood: target.likelihood,
        observed: target.observed,
        base: hyper.start,
    };
    let covariates = target.prior.covariates().map_or(0, |c| c.count());
    // Exceedance is judged on the spatial field, whose marginals with covariates need the exact
    // inverse (as for the Laplace kind).
    let levels = if covariates > 0 && !exact_inverse_available(target, &settings.laplace) {
        &[][..]
    } else {
        request.exceedance
    };
    let variance0 = hyper.model.kernel.variance;
    let mut mixture = CellMixture::new(target.cells(), request.functional.clone(), levels);
    // The coefficients' marginals mix as the cells' do: each point's Laplace gaussian, weighted.
    let mut coefficients = CellMixture::new(covariates, None, &[]);
    let mut uncorrected = None;
    let mut marginal_check = None;
    let mut failure = None;
    let explored = explore(&problem, &settings, |point, evaluation, corrected| {
        let CorrectedMarginals {
            laplace,
            skew,
            uncorrected: why,
        } = corrected;
        uncorrected = uncorrected.or(*why);
        if let Some(skew) = skew
            && marginal_check.is_none()
        {
            // The first point is the mode.
            marginal_check = Some(MarginalCheck::new(&evaluation.fit().field, skew));
        }
        let marginals = PointMarginals::of(skew.as_ref(), &evaluation.fit().field, &laplace.sd);
        let spatial = if covariates > 0 && !levels.is_empty() {
            evaluation
                .spatial_marginals(&problem, &settings.laplace)
                .unwrap_or_else(|error| {
                    failure.get_or_insert(error);
                    None
                })
        } else {
            None
        };
        // The spatial field is u less the point's mean (and with covariates its own marginals,
        // the mean and fixed effect already out), judged at the point's variance: less half its
        // excess over the model's (the levels were made at the model's variance).
        let excess = 0.5 * (point.values.variance - variance0);
        let shift = if covariates > 0 {
            excess
        } else {
            point.values.mean + excess
        };
        let spatial = spatial.as_ref().map(PointMarginals::skewed);
        mixture.add(
            point.log_weight(),
            &marginals,
            spatial.as_ref(),
            laplace.method,
            shift,
        );
        mixture.note_fit(evaluation.fit().newton.iterations);
        if covariates > 0 {
            let at = coefficient_marginals(&evaluation.target(&problem), evaluation.fit());
            let (mean, sd): (Vec<f64>, Vec<f64>) = at.into_iter().unzip();
            let gaussian = PointMarginals::gaussian(&mean, &sd);
            coefficients.add(point.log_weight(), &gaussian, None, SdMethod::Exact, 0.0);
        }
    });
    let grid = match explored {
        Ok(grid) => grid,
        Err(error) => return failed_run(request, error.to_string(), started),
    };
    if let Some(error) = failure {
        let reason = format!("the spatial field's marginals for exceedance failed: {error}");
        return failed_run(request, reason, started);
    }
    let laplace_check = rngs
        .into_iter()
        .next()
        .map(|mut rng| check_laplace(&problem, &settings, &grid, &mut rng));
    let notes = mixture.notes();
    let approximation = Approximation {
        log_evidence: log_evidence(&grid),
        sd_method: mixture.sd_method,
        error: None,
        inla: Some(InlaOutcome {
            names: hyper.model.hyper.names().collect(),
            marginals: marginals(&grid, &hyper.model.hyper),
            grid,
            laplace_check,
        }),
        uncorrected,
        marginal_check,
    };
    let mut run = approximate_run(request, mixture.finish(), notes, approximation, started);
    if covariates > 0 {
        let coefficients = coefficients.finish();
        run.coefficient_marginals = coefficients.mean.into_iter().zip(coefficients.sd).collect();
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::special::phi;
    use crate::sampler::driver::Functional;

    /// The closed forms against a quadrature of the gaussian marginal.
    #[test]
    fn marginal_expectations_match_quadrature() {
        let (m, s) = (0.3, 0.7);
        let quadrature = |f: &dyn Fn(f64) -> f64| {
            let n = 20_000;
            let (low, high) = (m - 12.0 * s, m + 12.0 * s);
            let h = (high - low) / n as f64;
            (0..n)
                .map(|k| {
                    let u = low + (k as f64 + 0.5) * h;
                    let z = (u - m) / s;
                    f(u) * (-0.5 * z * z).exp() / (s * (2.0 * std::f64::consts::PI).sqrt()) * h
                })
                .sum::<f64>()
        };
        let (mean, sd) = ([m], [s]);
        let gaussian = PointMarginals::gaussian(&mean, &sd);
        let count = gaussian.functional_mean(&Functional::expected_count(0.2, 1));
        assert!((count[0] - quadrature(&|u| (u + 0.2f64).exp())).abs() < 1e-9);
        let probability =
            gaussian.functional_mean(&Functional::PositiveProbability { noise_sd: 0.5 });
        assert!((probability[0] - quadrature(&|u| phi(u / 0.5))).abs() < 1e-9);
        let success = gaussian.functional_mean(&Functional::success_probability(-0.4, 1));
        let logistic = crate::model::special::logistic;
        assert!((success[0] - quadrature(&|u| logistic(u - 0.4))).abs() < 1e-9);
    }
}
