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
//! An INLA run ([`inla_run`]) mixes the Laplace gaussians of its grid points: each cell's
//! marginal is sum_k w_k N(m_k, s_k^2), reported by its mean sum_k w_k m_k and sd
//! (sum_k w_k (s_k^2 + m_k^2) - mean^2)^1/2, and the functional's mean is the same mixture of the
//! closed forms above. With no hyperparameter inferred it is the Laplace approximation.

pub use super::approximated::{Approximation, InlaOutcome};
use super::driver::{Functional, RunOutput, RunRequest, probe_cells};
use super::inla_check::check_laplace;
use super::protocol::{ChainRng, Notes};
use crate::model::inla::{HyperProblem, InlaSettings, explore, log_evidence, marginals};
use crate::model::laplace::{
    LaplaceError, LaplaceFit, LaplaceMarginals, LaplaceSettings, NewtonSettings, SdMethod,
    coefficient_marginals,
};
use crate::model::moments::mean_and_sd_about;
use crate::model::special::phi;

/// The Laplace approximation of `request`'s target, as a run without chains.
pub(crate) fn laplace_run(request: &RunRequest) -> RunOutput {
    let started = std::time::Instant::now();
    let target = &request.target;
    let fitted = LaplaceFit::new(target, &NewtonSettings::default()).and_then(|fit| {
        let marginals = fit.marginals(target, &LaplaceSettings::default())?;
        Ok::<_, LaplaceError>((fit, marginals))
    });
    let coefficients = match &fitted {
        Ok((fit, _)) => coefficient_marginals(target, fit),
        Err(_) => Vec::new(),
    };
    let (mean, sd, notes, approximation) = match fitted {
        Ok((fit, marginals)) => {
            let LaplaceMarginals {
                sd,
                method,
                log_evidence,
                ..
            } = marginals;
            let notes = Notes {
                rank: rank_of(method),
                newton_iterations: Some(fit.newton.iterations),
                laplace_error: None,
            };
            let approximation = Approximation {
                log_evidence,
                sd_method: method,
                error: None,
                inla: None,
            };
            (fit.field, sd, notes, approximation)
        }
        Err(error) => return failed_run(request, error.to_string(), started),
    };
    let functional_mean = request
        .functional
        .as_ref()
        .map(|f| marginal_expectation(f, &mean, &sd));
    let exceedance = gaussian_exceedance(request, &mean, &sd);
    let marginals = Marginals {
        mean,
        sd,
        functional_mean,
    };
    let mut run = approximate_run(request, marginals, notes, approximation, started);
    run.exceedance = exceedance;
    run.coefficient_marginals = coefficients;
    run
}

/// P(f > c) = Phi((m - mean - c) / sd) under each cell's gaussian marginal N(m, sd^2) of
/// u = mean + f, for each level c of the request, for a model without covariates (with them f's marginal needs the
/// covariance of u with the coefficients, which the cell marginals do not carry: empty then, as
/// for INLA's mixtures).
fn gaussian_exceedance(request: &RunRequest, mean: &[f64], sd: &[f64]) -> Vec<Vec<f64>> {
    let target = &request.target;
    if target.prior.covariates().is_some() {
        return Vec::new();
    }
    request
        .exceedance
        .iter()
        .map(|&level| {
            mean.iter()
                .zip(sd)
                .map(|(&m, &s)| phi((m - target.mean - level) / s))
                .collect()
        })
        .collect()
}

/// The rank of low-rank sds.
fn rank_of(method: SdMethod) -> Option<usize> {
    match method {
        SdMethod::LowRank { rank, .. } => Some(rank),
        SdMethod::Exact => None,
    }
}

/// The cells' approximate marginals.
struct Marginals {
    mean: Vec<f64>,
    sd: Vec<f64>,
    functional_mean: Option<Vec<f64>>,
}

/// The run without chains that reports `marginals`.
fn approximate_run(
    request: &RunRequest,
    marginals: Marginals,
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
        exceedance: Vec::new(),
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
    };
    let nan = vec![f64::NAN; request.target.cells()];
    let marginals = Marginals {
        mean: nan.clone(),
        sd: nan,
        functional_mean: None,
    };
    approximate_run(request, marginals, Notes::default(), approximation, started)
}

/// INLA over the hyperparameters `request` infers ([`crate::model::inla`]); the Laplace
/// approximation when it infers none.
/// The first of `rngs` drives the check of the Laplace evidence ([`check_laplace`]); without
/// streams (a library caller's request) nothing is checked.
pub(crate) fn inla_run(request: &RunRequest, rngs: Vec<ChainRng>) -> RunOutput {
    let Some(hyper) = request.hyper.filter(|h| h.model.hyper.any()) else {
        return laplace_run(request);
    };
    let started = std::time::Instant::now();
    let target = &request.target;
    let problem = HyperProblem {
        model: hyper.model,
        likelihood: target.likelihood,
        observed: target.observed,
        base: hyper.start,
    };
    let mut mixture = CellMixture::new(target.cells(), request.functional.clone());
    // The coefficients' marginals mix as the cells' do: each point's Laplace gaussian, weighted.
    let covariates = target.prior.covariates().map_or(0, |c| c.count());
    let mut coefficients = CellMixture::new(covariates, None);
    let settings = InlaSettings::default();
    let explored = explore(&problem, &settings, |point, evaluation, laplace| {
        mixture.add(point.log_density, &evaluation.fit().field, laplace);
        mixture.note_fit(evaluation.fit().newton.iterations);
        if covariates > 0 {
            let at = coefficient_marginals(&evaluation.target(&problem), evaluation.fit());
            let (mean, sd): (Vec<f64>, Vec<f64>) = at.into_iter().unzip();
            coefficients.add_gaussians(point.log_density, &mean, &sd, SdMethod::Exact);
        }
    });
    let grid = match explored {
        Ok(grid) => grid,
        Err(error) => return failed_run(request, error.to_string(), started),
    };
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
    };
    let mut run = approximate_run(request, mixture.finish(), notes, approximation, started);
    if covariates > 0 {
        let coefficients = coefficients.finish();
        run.coefficient_marginals = coefficients.mean.into_iter().zip(coefficients.sd).collect();
    }
    run
}

/// The cells' mixture of Laplace gaussians over the grid points, accumulated point by point with
/// weights exp(log p~_k - log p~_0) relative to the first point (the mode), about whose field
/// the moments are taken (so that the variance does not cancel).
struct CellMixture {
    functional: Option<Functional>,
    total: f64,
    centre: Vec<f64>,
    first: Vec<f64>,
    second: Vec<f64>,
    functional_sum: Vec<f64>,
    reference: Option<f64>,
    sd_method: SdMethod,
    mode_newton_iterations: Option<usize>,
}

impl CellMixture {
    fn new(cells: usize, functional: Option<Functional>) -> Self {
        Self {
            total: 0.0,
            centre: Vec::new(),
            first: vec![0.0; cells],
            second: vec![0.0; cells],
            functional_sum: vec![0.0; if functional.is_some() { cells } else { 0 }],
            functional,
            reference: None,
            sd_method: SdMethod::Exact,
            mode_newton_iterations: None,
        }
    }

    /// Add the point of log density `log_density` whose Laplace gaussian has mode `field` and
    /// marginals `laplace`.
    fn add(&mut self, log_density: f64, field: &[f64], laplace: &LaplaceMarginals) {
        self.add_gaussians(log_density, field, &laplace.sd, laplace.method);
    }

    /// Add a point's gaussian marginals N(mean_c, sd_c^2), their sds computed by `method`.
    fn add_gaussians(&mut self, log_density: f64, field: &[f64], sd: &[f64], method: SdMethod) {
        let reference = *self.reference.get_or_insert(log_density);
        if self.centre.is_empty() {
            self.centre = field.to_vec();
        }
        let w = (log_density - reference).exp();
        self.total += w;
        for (c, (&m, &s)) in field.iter().zip(sd).enumerate() {
            let offset = m - self.centre[c];
            self.first[c] += w * offset;
            self.second[c] += w * (offset * offset + s * s);
        }
        if let Some(functional) = &self.functional {
            let values = marginal_expectation(functional, field, sd);
            for (sum, value) in self.functional_sum.iter_mut().zip(values) {
                *sum += w * value;
            }
        }
        if let (SdMethod::Exact, SdMethod::LowRank { .. }) = (self.sd_method, method) {
            self.sd_method = method;
        }
    }

    /// Record a kept point's Newton iterations (the first is the mode's).
    fn note_fit(&mut self, iterations: usize) {
        self.mode_newton_iterations.get_or_insert(iterations);
    }

    fn notes(&self) -> Notes {
        Notes {
            rank: rank_of(self.sd_method),
            newton_iterations: self.mode_newton_iterations,
            laplace_error: None,
        }
    }

    fn finish(self) -> Marginals {
        let total = self.total;
        let (mean, sd) = mean_and_sd_about(&self.centre, &self.first, &self.second, total);
        let functional_mean = self
            .functional
            .map(|_| self.functional_sum.iter().map(|s| s / total).collect());
        Marginals {
            mean,
            sd,
            functional_mean,
        }
    }
}

/// E f(u) per cell for u ~ N(mean, sd^2).
fn marginal_expectation(functional: &Functional, mean: &[f64], sd: &[f64]) -> Vec<f64> {
    mean.iter()
        .zip(sd)
        .enumerate()
        .map(|(cell, (&m, &s))| functional.gaussian_expectation(cell, m, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two points, log densities ln 3 and ln 1 (weights 3/4 and 1/4): the mixture's mean, sd
    /// and expected count by hand.
    #[test]
    fn the_cell_mixture_weights_its_gaussians() {
        use crate::model::laplace::{LaplaceMarginals, SdMethod};
        let marginals = |sd: f64| LaplaceMarginals {
            sd: vec![sd],
            method: SdMethod::Exact,
            log_det: 0.0,
            log_evidence: 0.0,
        };
        let functional = Functional::expected_count(0.1, 1);
        let mut mixture = CellMixture::new(1, Some(functional));
        mixture.add(3f64.ln(), &[1.0], &marginals(0.5));
        mixture.add(0.0, &[2.0], &marginals(1.0));
        let out = mixture.finish();
        let mean = 0.75 * 1.0 + 0.25 * 2.0;
        let second = 0.75 * (1.0 + 0.25) + 0.25 * (4.0 + 1.0);
        assert!((out.mean[0] - mean).abs() < 1e-12);
        assert!((out.sd[0] - (second - mean * mean).sqrt()).abs() < 1e-12);
        let count = 0.75 * (1.1f64 + 0.125).exp() + 0.25 * (2.1f64 + 0.5).exp();
        assert!((out.functional_mean.unwrap()[0] - count).abs() < 1e-12);
    }

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
        let count = marginal_expectation(&Functional::expected_count(0.2, 1), &[m], &[s]);
        assert!((count[0] - quadrature(&|u| (u + 0.2f64).exp())).abs() < 1e-9);
        let probability = marginal_expectation(
            &Functional::PositiveProbability { noise_sd: 0.5 },
            &[m],
            &[s],
        );
        assert!((probability[0] - quadrature(&|u| phi(u / 0.5))).abs() < 1e-9);
        let success = marginal_expectation(&Functional::success_probability(-0.4, 1), &[m], &[s]);
        let logistic = crate::model::special::logistic;
        assert!((success[0] - quadrature(&|u| logistic(u - 0.4))).abs() < 1e-9);
    }
}
