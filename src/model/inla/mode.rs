//! The mode of log p~(theta | y) and its Hessian there, by finite differences.
//!
//! - Mode: BFGS (Nocedal & Wright, algorithm 6.1) on -log p~ from the model's values, with
//!   central-difference gradients of step h ([`super::InlaSettings::step`]; 2 d fits each), a
//!   backtracking line search to Armijo's sufficient increase, steps capped at 1 per coordinate
//!   (a factor e on a length scale or a variance) and the first inverse-Hessian scaled by
//!   Shanno and Phua's y^T s / y^T y. It stops when every partial derivative is below
//!   [`super::InlaSettings::gradient_tolerance`], or when the quadratic model promises a rise
//!   of log p~ below [`NEGLIGIBLE_GAIN`] (below [`STALLED_GAIN`] when no step rises any more:
//!   the finite differences' truncation error). Newton's field mode is warm-started from the
//!   current iterate's.
//! - Hessian: second central differences with the same step, d^2 f / d theta_i^2 =
//!   (f(+h e_i) - 2 f + f(-h e_i)) / h^2 and, off the diagonal,
//!   (f(+h e_i + h e_j) - f(+h e_i - h e_j) - f(-h e_i + h e_j) + f(-h e_i - h e_j)) / (4 h^2):
//!   1 + 2 d + 2 d (d - 1) fits (19 for d = 3).

use super::posterior::{Evaluation, Evaluator};
use super::{InlaError, InlaSettings};

/// Armijo's constant of the line search.
const ARMIJO: f64 = 1e-4;
/// Halvings of the step before the line search gives up.
const MAX_HALVINGS: usize = 40;
/// The largest step per coordinate, in unconstrained units.
const MAX_STEP: f64 = 1.0;
/// Converged when the quadratic model promises less than this rise of log p~ (the weights
/// would change by that share; the mode would move by about sqrt(2 x 1e-8) in z).
const NEGLIGIBLE_GAIN: f64 = 1e-8;
/// When no step rises any more, a promised rise below this is the finite differences' error.
const STALLED_GAIN: f64 = 1e-5;

/// The mode of log p~ and the Hessian there.
#[derive(Debug)]
pub(crate) struct Mode {
    /// The evaluation at the mode.
    pub(crate) evaluation: Evaluation,
    /// The Hessian of log p~ at the mode, row-major d x d (negative definite at a proper mode).
    pub(crate) hessian: Vec<f64>,
    /// BFGS iterations taken.
    pub(crate) iterations: usize,
}

/// The mode from the problem's start, and the Hessian there.
pub(crate) fn find_mode(
    evaluator: &mut Evaluator,
    settings: &InlaSettings,
) -> Result<Mode, InlaError> {
    let start = evaluator.problem.start();
    let evaluation = evaluator.evaluate(&start).map_err(|e| InlaError::Start {
        theta: start.clone(),
        reason: e.to_string(),
    })?;
    let (evaluation, iterations) = bfgs(evaluator, evaluation, settings)?;
    evaluator.centre_on(&evaluation);
    let hessian = hessian(evaluator, &evaluation, settings.step)?;
    Ok(Mode {
        evaluation,
        hessian,
        iterations,
    })
}

fn differences_error(theta: &[f64], reason: String) -> InlaError {
    InlaError::Differences {
        theta: theta.to_vec(),
        reason,
    }
}

/// `theta` moved by `h` along coordinate `i` (and `k` along `j`).
fn shifted(theta: &[f64], moves: &[(usize, f64)]) -> Vec<f64> {
    let mut point = theta.to_vec();
    for &(i, by) in moves {
        point[i] += by;
    }
    point
}

/// The central-difference gradient of log p~ at `centre`.
fn gradient(evaluator: &mut Evaluator, centre: &[f64], h: f64) -> Result<Vec<f64>, InlaError> {
    (0..centre.len())
        .map(|i| {
            let mut side = |by: f64| {
                let point = shifted(centre, &[(i, by)]);
                evaluator
                    .log_density(&point)
                    .map_err(|reason| differences_error(&point, reason))
            };
            Ok((side(h)? - side(-h)?) / (2.0 * h))
        })
        .collect()
}

/// The finite-difference Hessian of log p~ at `centre`, row-major.
fn hessian(evaluator: &mut Evaluator, centre: &Evaluation, h: f64) -> Result<Vec<f64>, InlaError> {
    let theta = &centre.theta;
    let d = theta.len();
    let middle = centre.log_density();
    let mut at = |moves: &[(usize, f64)]| {
        let point = shifted(theta, moves);
        evaluator
            .log_density(&point)
            .map_err(|reason| differences_error(&point, reason))
    };
    let mut hessian = vec![0.0; d * d];
    for i in 0..d {
        hessian[i * d + i] = (at(&[(i, h)])? - 2.0 * middle + at(&[(i, -h)])?) / (h * h);
        for j in 0..i {
            let value =
                (at(&[(i, h), (j, h)])? - at(&[(i, h), (j, -h)])? - at(&[(i, -h), (j, h)])?
                    + at(&[(i, -h), (j, -h)])?)
                    / (4.0 * h * h);
            hessian[i * d + j] = value;
            hessian[j * d + i] = value;
        }
    }
    Ok(hessian)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn largest_magnitude(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The symmetric d x d matrix `inverse` times `v`.
fn times(inverse: &[f64], v: &[f64]) -> Vec<f64> {
    let d = v.len();
    (0..d)
        .map(|i| dot(&inverse[i * d..(i + 1) * d], v))
        .collect()
}

/// BFGS's update of the inverse Hessian of -log p~ with step `s` and gradient change `y` (of
/// -log p~): H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T, rho = 1 / y^T s.
fn bfgs_update(inverse: &mut [f64], s: &[f64], y: &[f64]) {
    let d = s.len();
    let rho = 1.0 / dot(y, s);
    let hy = times(inverse, y);
    let yhy = dot(y, &hy);
    for i in 0..d {
        for j in 0..d {
            inverse[i * d + j] +=
                -rho * (s[i] * hy[j] + hy[i] * s[j]) + (rho * rho * yhy + rho) * s[i] * s[j];
        }
    }
}

/// BFGS ascent of log p~ from `start`.
fn bfgs(
    evaluator: &mut Evaluator,
    start: Evaluation,
    settings: &InlaSettings,
) -> Result<(Evaluation, usize), InlaError> {
    let d = start.theta.len();
    let h = settings.step;
    let mut current = start;
    evaluator.centre_on(&current);
    let mut g = gradient(evaluator, &current.theta, h)?;
    let mut inverse: Vec<f64> = (0..d * d)
        .map(|k| if k % (d + 1) == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut scaled = false;
    for iteration in 0..settings.max_iterations {
        let mut direction = times(&inverse, &g);
        // The rise of log p~ the quadratic model still promises.
        let gain = 0.5 * dot(&g, &direction);
        if largest_magnitude(&g) <= settings.gradient_tolerance
            || (scaled && gain <= NEGLIGIBLE_GAIN)
        {
            return Ok((current, iteration));
        }
        let longest = largest_magnitude(&direction);
        if longest > MAX_STEP {
            direction.iter_mut().for_each(|p| *p *= MAX_STEP / longest);
        }
        let slope = dot(&g, &direction);
        let Some(next) = line_search(evaluator, &current, &direction, slope) else {
            // No step rises: the finite-difference gradient's truncation error, of order
            // h^2 |f'''| / 6, is all that is left when the promised rise is tiny.
            if scaled && gain <= STALLED_GAIN {
                return Ok((current, iteration));
            }
            return Err(not_found(iteration, &g, settings));
        };
        evaluator.centre_on(&next);
        let g_next = gradient(evaluator, &next.theta, h)?;
        let s: Vec<f64> = next
            .theta
            .iter()
            .zip(&current.theta)
            .map(|(a, b)| a - b)
            .collect();
        let y: Vec<f64> = g.iter().zip(&g_next).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 * dot(&s, &s).sqrt() * dot(&y, &y).sqrt() {
            if !scaled {
                let scale = sy / dot(&y, &y);
                inverse.iter_mut().for_each(|x| *x *= scale);
                scaled = true;
            }
            bfgs_update(&mut inverse, &s, &y);
        }
        current = next;
        g = g_next;
    }
    if largest_magnitude(&g) <= settings.gradient_tolerance {
        return Ok((current, settings.max_iterations));
    }
    Err(not_found(settings.max_iterations, &g, settings))
}

fn not_found(iterations: usize, g: &[f64], settings: &InlaSettings) -> InlaError {
    InlaError::ModeNotFound {
        iterations,
        gradient: largest_magnitude(g),
        tolerance: settings.gradient_tolerance,
    }
}

/// The first of the steps 1, 1/2, 1/4, ... along `direction` whose log p~ rises by at least
/// Armijo's share of the predicted rise; `None` when none of [`MAX_HALVINGS`] does.
fn line_search(
    evaluator: &mut Evaluator,
    current: &Evaluation,
    direction: &[f64],
    slope: f64,
) -> Option<Evaluation> {
    let base = current.log_density();
    let mut t = 1.0;
    for _ in 0..MAX_HALVINGS {
        let trial: Vec<f64> = current
            .theta
            .iter()
            .zip(direction)
            .map(|(x, p)| x + t * p)
            .collect();
        if let Ok(evaluation) = evaluator.evaluate(&trial)
            && evaluation.log_density() >= base + ARMIJO * t * slope
        {
            return Some(evaluation);
        }
        t *= 0.5;
    }
    None
}
