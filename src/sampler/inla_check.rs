//! Does INLA apply here? An importance-sampling check of the Laplace evidence at INLA's
//! heaviest grid points.
//!
//! INLA weighs its grid points by p(theta) p~(data | theta), p~ the Laplace approximation of
//! the marginal likelihood (with its second-order term under the simplified Laplace strategy).
//! Where the likelihood is far from gaussian in the field (sparse counts, a high variance with a
//! short length scale) the Laplace error e(theta) = log p(data | theta) - log p~(data | theta)
//! is not small, and what matters for the hyperparameters' posterior is how much it *varies*
//! between grid points: a constant error cancels in the weights, a spread of s nats tilts them
//! by up to e^s. At the heaviest points (until [`CHECK_WEIGHT`] of the weight, at most
//! [`CHECK_POINTS`]) log p(data | theta) is estimated by importance sampling from the Laplace
//! gaussian itself ([`CHECK_DRAWS`] exact draws by perturbation and solve, [`LaplaceDraws`]: a
//! low-rank proposal, as the pseudo-marginal update uses, would add weight variance of its own
//! and blur the check; with its 32 eigenpairs the weights degenerated even on a gaussian model),
//! and the second-order term is computed there whatever the strategy. An estimate with fewer
//! than [`MIN_EFFECTIVE_DRAWS`] effective draws is biased low and left out; the job warns when
//! the trusted estimates' errors (less the second-order term where the weights carry it) span
//! more than [`ERROR_SPAN_LIMIT`] nats, and, under the gaussian strategy, when the second-order
//! term does ([`LaplaceCheck::warnings`]).
//!
//! The streams are the job's first chain's, so the check is reproducible like a chain.

use crate::model::evidence::{LogEvidence, summarize};
use crate::model::inla::{Evaluation, HyperGrid, HyperProblem, InlaSettings};
use crate::model::laplace::draw::LaplaceDraws;
use crate::model::laplace::{LaplaceError, LaplaceSettings};
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
    /// The Laplace evidence's second-order term at the point ([`Evaluation::evidence_correction`]),
    /// computed whatever the strategy (`None` where it cannot be).
    pub(crate) correction: Option<f64>,
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
    /// Whether INLA's weights carry the second-order term (the simplified Laplace strategy).
    pub(crate) corrected_weights: bool,
}

impl LaplaceCheck {
    /// The error of the log evidence INLA weighed checked point `p` by: its Laplace error, less
    /// the second-order term where the weights carry it.
    fn weight_error(&self, p: &CheckedPoint) -> f64 {
        let carried = if self.corrected_weights {
            p.correction.unwrap_or(0.0)
        } else {
            0.0
        };
        p.laplace_error - carried
    }

    /// The checked points whose importance estimate can be trusted (at least
    /// [`MIN_EFFECTIVE_DRAWS`] effective draws).
    fn measured(&self) -> impl Iterator<Item = &CheckedPoint> + Clone {
        self.points
            .iter()
            .filter(|p| p.effective_draws >= MIN_EFFECTIVE_DRAWS)
    }

    /// The largest minus the smallest weight error over the measured points, when there are
    /// two or more.
    pub(crate) fn error_span(&self) -> Option<f64> {
        (self.measured().count() >= 2).then(|| span(self.measured().map(|p| self.weight_error(p))))
    }

    /// The largest minus the smallest second-order term over the checked points, when every
    /// one has it.
    pub(crate) fn correction_span(&self) -> Option<f64> {
        let corrections: Option<Vec<f64>> = self.points.iter().map(|p| p.correction).collect();
        corrections.map(|c| span(c.into_iter()))
    }

    /// The warnings the check raises (empty when INLA's weights look right).
    ///
    /// Where the importance estimates can be trusted (two or more points with enough effective
    /// draws) they measure the error of INLA's weights, and its spread is judged. They
    /// degenerate often (in N dimensions a Laplace gaussian a little off in every cell is far
    /// off as a whole, even where the evidence and every cell's marginal are right), and those
    /// points are left out. Under the gaussian strategy the second-order term, which its weights
    /// leave out, is judged too: where the estimates can be trusted they track it (on the sparse
    /// grids of docs/hyperparameters.md to a few tenths of a nat), so its spread is the leading
    /// error of those weights.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut found = Vec::new();
        let share = 100.0 * self.weight;
        let checked = self.points.len();
        let measured = self.measured().count();
        if let Some(spread) = self.error_span().filter(|&s| s > ERROR_SPAN_LIMIT) {
            found.push(format!(
                "INLA: the error of its log p(data | theta), estimated by importance sampling \
                 ({CHECK_DRAWS} draws) at {measured} of the {checked} heaviest grid points \
                 ({share:.0} % of the weight; the others' draws too few to tell), varies by \
                 {spread:.1} nats between them: the hyperparameters' posterior weights are off by \
                 up to a factor {:.1}; INLA does not apply here, run a chain (sampler.hyper = \
                 \"joint\")",
                spread.exp()
            ));
        } else if !self.corrected_weights
            && let Some(spread) = self.correction_span().filter(|&s| s > ERROR_SPAN_LIMIT)
        {
            found.push(format!(
                "INLA: the Laplace evidence's second-order term varies by {spread:.1} nats over \
                 the {checked} heaviest grid points ({share:.0} % of the weight): the gaussian \
                 strategy's weights, which leave it out, are off by up to a factor {:.1}; use \
                 sampler.inla_strategy = \"simplified-laplace\" (the default)",
                spread.exp()
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

/// The largest minus the smallest of `values` (0 for none).
fn span(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let high = values.clone().fold(f64::NEG_INFINITY, f64::max);
    let low = values.fold(f64::INFINITY, f64::min);
    if high >= low { high - low } else { 0.0 }
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
        corrected_weights: settings.laplace.corrections,
    };
    // The second-order term is computed whatever the strategy: under the gaussian one it is what
    // the weights leave out.
    let corrected = LaplaceSettings {
        corrections: true,
        ..settings.laplace
    };
    for point in heaviest(grid) {
        let theta = &grid.points[point].theta;
        let evaluation = match problem.evaluate(theta, None, None, &corrected) {
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
            laplace_error: estimate.estimate - evaluation.laplace_log_evidence(),
            effective_draws: estimate.effective_draws,
            correction: evaluation.evidence_correction(),
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
    let log_det = fit.log_det_behind(evaluation.laplace_log_evidence());
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

    /// A check of points (Laplace error, effective draws, second-order term) whose weights
    /// carry the term when `corrected`.
    fn check(points: &[(f64, f64, Option<f64>)], corrected: bool) -> LaplaceCheck {
        LaplaceCheck {
            points: points
                .iter()
                .enumerate()
                .map(
                    |(point, &(laplace_error, effective_draws, correction))| CheckedPoint {
                        point,
                        laplace_error,
                        effective_draws,
                        correction,
                    },
                )
                .collect(),
            weight: 0.5,
            failures: Vec::new(),
            corrected_weights: corrected,
        }
    }

    #[test]
    fn a_constant_error_cancels_and_raises_nothing() {
        let points = [
            (-3.0, 200.0, None),
            (-3.4, 180.0, None),
            (-2.6, 250.0, None),
        ];
        assert!(check(&points, false).warnings().is_empty());
    }

    #[test]
    fn an_error_spread_past_a_nat_says_inla_does_not_apply() {
        let warnings = check(&[(0.1, 200.0, None), (1.3, 180.0, None)], false).warnings();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("varies by 1.2 nats"), "{warnings:?}");
        assert!(
            warnings[0].contains("at 2 of the 2 heaviest"),
            "{warnings:?}"
        );
        assert!(warnings[0].contains("INLA does not apply here"));
    }

    /// Degenerate importance weights (biased low) are left out: one trusted point cannot show a
    /// spread, so nothing is said.
    #[test]
    fn degenerate_estimates_are_left_out() {
        let points = [(-60.0, 1.0, None), (-30.0, 3.0, None), (0.0, 200.0, None)];
        assert!(check(&points, true).warnings().is_empty());
        let more = [(-60.0, 1.0, None), (0.0, 200.0, None), (1.5, 30.0, None)];
        let warnings = check(&more, true).warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("at 2 of the 3 heaviest"),
            "{warnings:?}"
        );
    }

    /// Weights that carry the second-order term are judged by the error it leaves; weights that
    /// leave it out by the whole error, and by the term's own spread where the estimates cannot
    /// tell.
    #[test]
    fn the_second_order_term_is_judged_as_the_weights_carry_it() {
        let tracked = [(-5.0, 100.0, Some(-5.2)), (-1.0, 90.0, Some(-0.9))];
        assert!(check(&tracked, true).warnings().is_empty());
        let gaussian = check(&tracked, false).warnings();
        assert_eq!(gaussian.len(), 1, "{gaussian:?}");
        assert!(
            gaussian[0].contains("INLA does not apply here"),
            "{gaussian:?}"
        );
        let untold = [(-5.0, 2.0, Some(-5.2)), (-1.0, 3.0, Some(-0.9))];
        assert!(check(&untold, true).warnings().is_empty());
        let gaussian = check(&untold, false).warnings();
        assert_eq!(gaussian.len(), 1, "{gaussian:?}");
        assert!(gaussian[0].contains("varies by 4.3 nats"), "{gaussian:?}");
        assert!(gaussian[0].contains("simplified-laplace"), "{gaussian:?}");
    }
}
