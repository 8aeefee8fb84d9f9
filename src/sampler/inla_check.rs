//! Does INLA apply here? An importance-sampling check of the Laplace evidence at INLA's
//! heaviest grid points.
//!
//! INLA weighs its grid points by p(theta) p~(data | theta), p~ the Laplace approximation of
//! the marginal likelihood. Where the likelihood is far from gaussian in the field (sparse
//! counts, a high variance with a short length scale) the Laplace error e(theta) =
//! log p(data | theta) - log p~(data | theta) is not small, and what matters for the
//! hyperparameters' posterior is how much it *varies* between grid points: a constant error
//! cancels in the weights, a spread of s nats tilts them by up to e^s. At the heaviest points
//! (until [`CHECK_WEIGHT`] of the weight, at most [`CHECK_POINTS`]) log p(data | theta) is
//! estimated by importance sampling from the Laplace gaussian itself ([`CHECK_DRAWS`] exact
//! draws by perturbation and solve, [`LaplaceDraws`]: a low-rank proposal, as the
//! pseudo-marginal update uses, would add weight variance of its own and blur the check; with
//! its 32 eigenpairs the weights degenerated even on a gaussian model); the job warns when the
//! errors span more than [`ERROR_SPAN_LIMIT`] nats, or when the weights degenerate (fewer than
//! [`MIN_EFFECTIVE_DRAWS`] effective draws at a point: the Laplace gaussian is then far from the
//! field's posterior, which is itself the Laplace approximation failing, and the estimate, biased
//! low, cannot size the error).
//!
//! The streams are the job's first chain's, so the check is reproducible like a chain.

use crate::model::evidence::{LogEvidence, summarize};
use crate::model::inla::{Evaluation, HyperGrid, HyperProblem, InlaSettings};
use crate::model::laplace::LaplaceError;
use crate::model::laplace::draw::LaplaceDraws;
use crate::model::target::Target;
use crate::sampler::protocol::{ChainRng, Position, dot};

/// Importance draws at each checked point.
pub(crate) const CHECK_DRAWS: usize = 256;
/// Points checked at most.
pub(crate) const CHECK_POINTS: usize = 12;
/// The heaviest points are checked until their weights sum to this.
pub(crate) const CHECK_WEIGHT: f64 = 0.9;
/// A spread of the Laplace error above this many nats across the checked points is a warning:
/// the weights are then wrong by a factor above e.
pub(crate) const ERROR_SPAN_LIMIT: f64 = 1.0;
/// Fewer effective importance draws than this at a point make its estimate unreliable.
pub(crate) const MIN_EFFECTIVE_DRAWS: f64 = 20.0;

/// The check at one grid point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CheckedPoint {
    /// The point's index in the grid.
    pub(crate) point: usize,
    /// The importance-sampling log p(data | theta) minus the Laplace one.
    pub(crate) laplace_error: f64,
    /// Kish's effective number of the importance draws.
    pub(crate) effective_draws: f64,
}

/// The check at the heaviest grid points.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LaplaceCheck {
    pub(crate) points: Vec<CheckedPoint>,
    /// The grid weight of the checked points.
    pub(crate) weight: f64,
    /// The points that could not be checked and why (the Laplace fit failed on re-evaluation, or
    /// a draw's solve did not converge).
    pub(crate) failures: Vec<(usize, String)>,
}

impl LaplaceCheck {
    /// The largest minus the smallest Laplace error over the checked points.
    pub(crate) fn error_span(&self) -> f64 {
        let errors = self.points.iter().map(|p| p.laplace_error);
        let high = errors.clone().fold(f64::NEG_INFINITY, f64::max);
        let low = errors.fold(f64::INFINITY, f64::min);
        if self.points.is_empty() {
            0.0
        } else {
            high - low
        }
    }

    /// The smallest effective number of importance draws over the checked points.
    pub(crate) fn fewest_effective_draws(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.effective_draws)
            .fold(f64::INFINITY, f64::min)
    }

    /// The warnings the check raises (empty when INLA's weights look right). Degenerate
    /// weights say the Laplace gaussian itself is wrong; their estimate, biased low, is then no
    /// measure of the spread, so only one of the two is said.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut found = Vec::new();
        let share = 100.0 * self.weight;
        let checked = self.points.len();
        if checked > 0 && self.fewest_effective_draws() < MIN_EFFECTIVE_DRAWS {
            found.push(format!(
                "INLA: importance sampling from the Laplace gaussian ({CHECK_DRAWS} draws) at the \
                 {checked} heaviest grid points ({share:.0} % of the weight) degenerates ({:.1} \
                 effective draws at worst): the Laplace approximation is far from the field's \
                 posterior there, and so is the evidence INLA weighs its points by; INLA does not \
                 apply here, run a chain (sampler.hyper = \"joint\")",
                self.fewest_effective_draws()
            ));
        } else if checked > 1 && self.error_span() > ERROR_SPAN_LIMIT {
            found.push(format!(
                "INLA: the Laplace approximation's error in log p(data | theta), estimated by \
                 importance sampling ({CHECK_DRAWS} draws) at the {checked} heaviest grid points \
                 ({share:.0} % of the weight), varies by {:.1} nats between them: the \
                 hyperparameters' posterior weights are off by up to a factor {:.1}; INLA does \
                 not apply here, run a chain (sampler.hyper = \"joint\")",
                self.error_span(),
                self.error_span().exp()
            ));
        }
        for (point, reason) in &self.failures {
            found.push(format!(
                "INLA: the Laplace evidence could not be checked at grid point {point}: {reason}"
            ));
        }
        found
    }
}

/// The heaviest points of `grid`, heaviest first, until [`CHECK_WEIGHT`] of the weight or
/// [`CHECK_POINTS`] points.
fn heaviest(grid: &HyperGrid) -> Vec<usize> {
    let mut order: Vec<usize> = (0..grid.points.len()).collect();
    order.sort_by(|&a, &b| grid.points[b].weight.total_cmp(&grid.points[a].weight));
    let mut total = 0.0;
    order
        .into_iter()
        .take_while(|&k| {
            let before = total;
            total += grid.points[k].weight;
            before < CHECK_WEIGHT
        })
        .take(CHECK_POINTS)
        .collect()
}

/// The check at `grid`'s heaviest points, each re-fitted from the default start.
pub(crate) fn check_laplace(
    problem: &HyperProblem,
    settings: &InlaSettings,
    grid: &HyperGrid,
    rng: &mut ChainRng,
) -> LaplaceCheck {
    let mut check = LaplaceCheck {
        points: Vec::new(),
        weight: 0.0,
        failures: Vec::new(),
    };
    for point in heaviest(grid) {
        let theta = &grid.points[point].theta;
        let evaluation = match problem.evaluate(theta, None, &settings.laplace) {
            Ok(evaluation) => evaluation,
            Err(error) => {
                check.failures.push((point, error.to_string()));
                continue;
            }
        };
        let target = evaluation.target(problem);
        let estimate = match importance_evidence(&evaluation, &target, rng) {
            Ok(estimate) => estimate,
            Err(error) => {
                check.failures.push((point, error.to_string()));
                continue;
            }
        };
        check.weight += grid.points[point].weight;
        check.points.push(CheckedPoint {
            point,
            laplace_error: estimate.estimate - evaluation.log_evidence,
            effective_draws: estimate.effective_draws,
        });
    }
    check
}

/// log p(data | theta) estimated from [`CHECK_DRAWS`] draws of `evaluation`'s Laplace gaussian:
/// the mean of the weights w = p(data | xi) N(xi; 0, I) / q(xi) and their effective number,
/// summarised as the prior-draw evidence estimator's are ([`summarize`]). Every 2 pi constant is
/// dropped as the Laplace evidence drops them, and q's log det H is the one that evidence used.
fn importance_evidence(
    evaluation: &Evaluation,
    target: &Target,
    rng: &mut ChainRng,
) -> Result<LogEvidence, LaplaceError> {
    let fit = evaluation.fit();
    let log_det = fit.log_det_behind(evaluation.log_evidence);
    let mut draws = LaplaceDraws::new(fit, target, log_det);
    let mut work = target.workspace();
    let mut z1 = vec![0.0; draws.field_normals()];
    let mut z2 = vec![0.0; draws.observation_normals()];
    let mut log_weights = Vec::with_capacity(CHECK_DRAWS);
    for _ in 0..CHECK_DRAWS {
        rng.normals(&mut z1);
        rng.normals(&mut z2);
        let draw = draws.draw(&z1, &z2)?;
        let position = Position::new(draw.xi, target, &mut work);
        let prior = -0.5 * dot(&position.xi, &position.xi);
        log_weights.push(position.log_likelihood + prior - draw.log_density);
    }
    Ok(summarize(&log_weights))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(points: &[(f64, f64)]) -> LaplaceCheck {
        LaplaceCheck {
            points: points
                .iter()
                .enumerate()
                .map(|(point, &(laplace_error, effective_draws))| CheckedPoint {
                    point,
                    laplace_error,
                    effective_draws,
                })
                .collect(),
            weight: 0.5,
            failures: Vec::new(),
        }
    }

    #[test]
    fn a_constant_error_cancels_and_raises_nothing() {
        assert!(
            check(&[(-3.0, 200.0), (-3.4, 180.0), (-2.6, 250.0)])
                .warnings()
                .is_empty()
        );
    }

    #[test]
    fn an_error_spread_past_a_nat_says_inla_does_not_apply() {
        let warnings = check(&[(0.1, 200.0), (1.3, 180.0)]).warnings();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("varies by 1.2 nats"), "{warnings:?}");
        assert!(warnings[0].contains("INLA does not apply here"));
    }

    #[test]
    fn degenerate_weights_are_said_once_without_their_biased_spread() {
        let warnings = check(&[(-60.0, 1.0), (-30.0, 3.0), (0.0, 200.0)]).warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("degenerates (1.0 effective draws at worst)"));
        assert!(warnings[0].contains("INLA does not apply here"));
    }
}
