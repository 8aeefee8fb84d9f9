//! Kinds that are not Markov chains, run through the same door as the samplers
//! ([`super::run_kind`]) so that a study can put them beside the samplers and the job writes the
//! same tables: today the Laplace approximation ([`crate::model::laplace`]).
//!
//! A Laplace "run" has no chains: the posterior mean of every cell is the mode's field, its sd the
//! approximation's (exact to rounding for M <= 2,500 observed cells, by low rank with a stated
//! bound above), no Monte Carlo error; the functional's mean (expected count, predictive
//! probability) is its expectation under the approximation's gaussian marginal of each cell:
//! E exp(u + offset) = exp(m + offset + sd^2 / 2) and E Phi(u / s) = Phi(m / sqrt(s^2 + sd^2)).
//! The Laplace log marginal likelihood is reported with it.

use super::driver::{Functional, RunOutput, RunRequest, probe_cells};
use super::protocol::Notes;
use crate::model::laplace::{
    LaplaceError, LaplaceFit, LaplaceMarginals, LaplaceSettings, NewtonSettings, SdMethod,
};
use crate::model::special::phi;

/// What an approximation computed besides the marginals.
#[derive(Debug, Clone, PartialEq)]
pub struct Approximation {
    /// The Laplace log marginal likelihood (the likelihood's dropped constants dropped).
    pub log_evidence: f64,
    pub sd_method: SdMethod,
    /// Why it failed, if it did (the marginals are then not numbers).
    pub error: Option<String>,
}

/// The Laplace approximation of `request`'s target, as a run without chains.
pub fn laplace_run(request: &RunRequest) -> RunOutput {
    let started = std::time::Instant::now();
    let target = &request.target;
    let cells = target.cells();
    let fitted = LaplaceFit::new(target, &NewtonSettings::default()).and_then(|fit| {
        let marginals = fit.marginals(target, &LaplaceSettings::default())?;
        Ok::<_, LaplaceError>((fit, marginals))
    });
    let (mean, sd, notes, approximation) = match fitted {
        Ok((fit, marginals)) => {
            let LaplaceMarginals {
                sd,
                method,
                log_evidence,
                ..
            } = marginals;
            let rank = match method {
                SdMethod::LowRank { rank, .. } => Some(rank),
                SdMethod::Exact => None,
            };
            let notes = Notes {
                rank,
                newton_iterations: Some(fit.newton.iterations),
            };
            let approximation = Approximation {
                log_evidence,
                sd_method: method,
                error: None,
            };
            (fit.field, sd, notes, approximation)
        }
        Err(error) => {
            let approximation = Approximation {
                log_evidence: f64::NAN,
                sd_method: SdMethod::Exact,
                error: Some(error.to_string()),
            };
            let nan = vec![f64::NAN; cells];
            (nan.clone(), nan, Notes::default(), approximation)
        }
    };
    let functional_mean = request
        .functional
        .map(|f| marginal_expectation(f, &mean, &sd));
    RunOutput {
        chains: Vec::new(),
        acceptance_rate: f64::NAN,
        post_mean: mean,
        post_sd: sd,
        post_mean_mcse: None,
        post_sd_mcse: None,
        functional_mean,
        convergence: Vec::new(),
        probe_cells: probe_cells(target.prior.grid()),
        sample_seconds: started.elapsed().as_secs_f64(),
        notes,
        approximation: Some(approximation),
    }
}

/// E f(u) per cell for u ~ N(mean, sd^2).
fn marginal_expectation(functional: Functional, mean: &[f64], sd: &[f64]) -> Vec<f64> {
    mean.iter()
        .zip(sd)
        .map(|(&m, &s)| match functional {
            Functional::ExpectedCount { offset } => (m + offset + 0.5 * s * s).exp(),
            Functional::PositiveProbability { noise_sd } => {
                phi(m / (noise_sd * noise_sd + s * s).sqrt())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let count = marginal_expectation(Functional::ExpectedCount { offset: 0.2 }, &[m], &[s]);
        assert!((count[0] - quadrature(&|u| (u + 0.2f64).exp())).abs() < 1e-9);
        let probability = marginal_expectation(
            Functional::PositiveProbability { noise_sd: 0.5 },
            &[m],
            &[s],
        );
        assert!((probability[0] - quadrature(&|u| phi(u / 0.5))).abs() < 1e-9);
    }
}
