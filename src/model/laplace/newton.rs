//! Newton's method for the posterior mode in whitened coordinates.
//!
//! The objective is Psi(xi) = -loglik(mean + L xi) + |xi|^2 / 2, strictly convex for the three
//! log-concave likelihoods, with gradient xi - L^T G^T d loglik and Hessian
//! I + L^T G^T W G L ([`super::hessian`]). Each iteration solves the Newton system by conjugate
//! gradients to a relative residual min(1/2, sqrt(|g_k| / |g_0|)) (an inexact Newton method with
//! a superlinear forcing sequence; Eisenstat & Walker 1996, Nocedal & Wright section 7.1), then
//! backtracks from the full step until Armijo's sufficient decrease holds (or, once the predicted
//! decrease is below the rounding of Psi, until the gradient shrinks). Because Psi is convex
//! and bounded below, the damped iteration converges from any start; a start with exp(u) far
//! below a count (where the undamped Poisson step overshoots to huge rates) costs backtracking
//! steps, which the default start avoids ([`super::default_start`]).

use super::cg::{self, dot, norm};
use super::error::LaplaceError;
use super::hessian::MisfitHessian;
use crate::model::target::{Target, Workspace};

/// When Newton's method stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Converged when |grad Psi|_2 <= gradient_tolerance * sqrt(dim) (an RMS gradient).
    pub(crate) gradient_tolerance: f64,
    pub(crate) max_iterations: usize,
    /// Conjugate-gradient products per Newton system at most.
    pub(crate) max_cg_iterations: usize,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            gradient_tolerance: 1e-10,
            max_iterations: 100,
            max_cg_iterations: 20_000,
        }
    }
}

/// One Newton iteration, as recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonStep {
    /// Psi at the start of the iteration.
    pub(crate) objective: f64,
    /// |grad Psi|_2 at the start of the iteration.
    pub gradient_norm: f64,
    /// Conjugate-gradient products for the Newton system.
    pub cg_iterations: usize,
    /// The step length the line search accepted (1 = the full Newton step).
    pub step_length: f64,
}

/// How Newton's method went.
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations (steps taken).
    pub iterations: usize,
    /// Conjugate-gradient products over all iterations.
    pub cg_iterations: usize,
    /// |grad Psi|_2 at the start and at the mode.
    pub start_gradient_norm: f64,
    pub gradient_norm: f64,
    pub history: Vec<NewtonStep>,
}

/// Psi, the log-likelihood and grad Psi at one point.
struct Evaluation {
    objective: f64,
    log_likelihood: f64,
    gradient: Vec<f64>,
}

/// The point, its field and what Newton needs there.
pub(super) struct Point {
    pub(crate) xi: Vec<f64>,
    pub(crate) field: Vec<f64>,
    pub(crate) log_likelihood: f64,
}

/// Minimise Psi from `start`.
pub(super) fn minimise(
    target: &Target,
    start: Vec<f64>,
    settings: &NewtonSettings,
) -> Result<(Point, NewtonReport), LaplaceError> {
    let dim = target.dim();
    let tolerance = settings.gradient_tolerance * (dim as f64).sqrt();
    let mut work = target.workspace();
    let mut xi = start;
    let mut field = vec![0.0; target.cells()];
    let mut current = evaluate(target, &xi, &mut field, &mut work);
    if !current.objective.is_finite() {
        return Err(LaplaceError::NonFiniteStart);
    }
    let start_gradient_norm = norm(&current.gradient);
    let mut history = Vec::new();
    let mut direction = vec![0.0; dim];
    let mut trial = vec![0.0; dim];
    let mut trial_field = vec![0.0; target.cells()];
    loop {
        let gradient_norm = norm(&current.gradient);
        if gradient_norm <= tolerance {
            let cg_iterations = history.iter().map(|s: &NewtonStep| s.cg_iterations).sum();
            let report = NewtonReport {
                iterations: history.len(),
                cg_iterations,
                start_gradient_norm,
                gradient_norm,
                history,
            };
            let point = Point {
                xi,
                field,
                log_likelihood: current.log_likelihood,
            };
            return Ok((point, report));
        }
        if history.len() >= settings.max_iterations {
            return Err(LaplaceError::NotConverged {
                iterations: history.len(),
                gradient_norm,
                tolerance,
            });
        }
        let mut hessian = MisfitHessian::at_field(target, &field);
        let forcing = (gradient_norm / start_gradient_norm.max(f64::MIN_POSITIVE))
            .sqrt()
            .min(0.5);
        let cg_tolerance = (forcing * gradient_norm).max(0.1 * tolerance);
        let negative: Vec<f64> = current.gradient.iter().map(|g| -g).collect();
        let solve = cg::solve(
            |x, out| hessian.apply(x, out),
            &negative,
            &mut direction,
            cg_tolerance,
            settings.max_cg_iterations,
        );
        let slope = dot(&current.gradient, &direction);
        if slope.is_nan() || slope >= 0.0 {
            return Err(LaplaceError::Stalled {
                iterations: history.len(),
                gradient_norm,
            });
        }
        let mut step_length = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            for ((t, &x), &p) in trial.iter_mut().zip(&xi).zip(&direction) {
                *t = x + step_length * p;
            }
            let candidate = evaluate(target, &trial, &mut trial_field, &mut work);
            let sufficient = candidate.objective <= current.objective + 1e-4 * step_length * slope;
            // Near the mode the decrease falls below the rounding of Psi; there the full step
            // is taken when it does not raise Psi beyond rounding and shrinks the gradient.
            let rounding = 1e-12 * (1.0 + current.objective.abs());
            let within_rounding = -slope <= rounding
                && candidate.objective <= current.objective + rounding
                && norm(&candidate.gradient) < gradient_norm;
            if sufficient || within_rounding {
                accepted = Some(candidate);
                break;
            }
            step_length *= 0.5;
        }
        let Some(next) = accepted else {
            return Err(LaplaceError::Stalled {
                iterations: history.len(),
                gradient_norm,
            });
        };
        history.push(NewtonStep {
            objective: current.objective,
            gradient_norm,
            cg_iterations: solve.iterations,
            step_length,
        });
        std::mem::swap(&mut xi, &mut trial);
        std::mem::swap(&mut field, &mut trial_field);
        current = next;
    }
}

fn evaluate(target: &Target, xi: &[f64], field: &mut [f64], work: &mut Workspace) -> Evaluation {
    target.field(xi, field, work);
    let mut gradient = vec![0.0; xi.len()];
    let log_likelihood = target.log_likelihood_and_gradient(field, &mut gradient, work);
    for (g, &x) in gradient.iter_mut().zip(xi) {
        *g = x - *g;
    }
    let objective = if log_likelihood.is_finite() {
        -log_likelihood + 0.5 * dot(xi, xi)
    } else {
        f64::INFINITY
    };
    Evaluation {
        objective,
        log_likelihood,
        gradient,
    }
}
