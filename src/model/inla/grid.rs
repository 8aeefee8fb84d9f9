//! The z-parametrised grid over theta and its weights.
//!
//! With H = V Lambda V^T the eigendecomposition of the negative Hessian of log p~ at the mode,
//! theta(z) = mode + V Lambda^-1/2 z: under the Hessian's gaussian z is standard normal. Each
//! axis of z is walked in both directions in steps of delta_z until log p~ drops more than the
//! threshold below the mode (or cannot be evaluated); then the full product of the axis points so
//! found is evaluated, a point kept when its log p~ is within the threshold of the mode's. Last,
//! the kept set grows by flood fill (`flood_fill`): every lattice neighbour (one step along one
//! axis) of a kept point is evaluated, and kept when within the threshold, until no kept point
//! has an unevaluated neighbour. The box follows the Hessian's ellipse; the flood fill follows a
//! posterior that bends away from it (on the Lansing counts the length scale and the variance
//! rise together along a ridge the box alone cut short, docs/hyperparameters.md). No point more
//! than [`InlaSettings::max_axis_steps`] from the mode along an axis is evaluated; a kept point at
//! that limit makes the axis reported cut. Every kept point's weight is exp(log p~) normalised
//! over the kept points: the z-cells have equal volumes, delta_z^d each.
//!
//! Points are listed in the order they were found: the mode first (point 0, z = 0), then the
//! axis points, then the rest of the product grid in lexicographic order of z, then the flood
//! fill's in breadth-first order.

use std::collections::{BTreeSet, HashSet, VecDeque};

use faer::{Mat, Side};

use super::design;
use super::mode::{Mode, find_mode};
use super::posterior::{Evaluation, Evaluator, HyperProblem};
use super::{InlaError, InlaIntegration, InlaSettings};
use crate::model::hyper::Hyperparameters;
use crate::model::laplace::skew::CorrectedMarginals;

/// One kept grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPoint {
    /// Its z coordinates (multiples of delta_z).
    pub(crate) z: Vec<f64>,
    /// Its unconstrained hyperparameters.
    pub(crate) theta: Vec<f64>,
    /// Every hyperparameter's value there (the fixed ones at their values).
    pub(crate) values: Hyperparameters,
    /// log p~(theta | y) + log p(y): log prior (unconstrained) + Laplace log evidence.
    pub(crate) log_density: f64,
    /// The log evidence log p~(y | theta): the Laplace evidence plus `evidence_correction`.
    pub(crate) log_evidence: f64,
    /// The evidence's second-order term (simplified Laplace), when the strategy computed it.
    pub(crate) evidence_correction: Option<f64>,
    /// The log of its design weight (0 on the grid: equal z-cells; the central composite
    /// design's w0 or w, [`super::design`]).
    pub(crate) log_design_weight: f64,
    /// exp(log_density) times the design weight, normalised over the kept points.
    pub(crate) weight: f64,
}

impl GridPoint {
    /// The log of the point's unnormalised weight: log p~ plus its log design weight.
    pub(crate) fn log_weight(&self) -> f64 {
        self.log_density + self.log_design_weight
    }
}

/// The explored grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The kept points, the mode first.
    pub points: Vec<GridPoint>,
    /// The Hessian of log p~ at the mode, row-major d x d.
    pub(crate) hessian: Vec<f64>,
    /// The eigenvalues Lambda of the negative Hessian, increasing.
    pub(crate) eigenvalues: Vec<f64>,
    /// V Lambda^-1/2, row-major d x d: theta(z) = mode + axes z.
    pub(crate) axes: Vec<f64>,
    pub(crate) delta_z: f64,
    /// Each z axis's stretch [below, above] the design measured (the posterior's sd on that
    /// side in units of the Hessian's; 1 and 1 on the grid and for the mode alone).
    pub(crate) stretch: Vec<[f64; 2]>,
    /// On the central composite design, how far log p~ falls below the mode's at u = -/+
    /// [`TAIL_Z`] along each axis (z = u times its side's stretch), where the asymmetric gaussian
    /// the design integrates falls [`TAIL_FALL`]: a posterior whose tail lies beyond the design's
    /// points falls less (infinity where log p~ cannot be evaluated). Empty on the grid and for
    /// the mode alone.
    pub(crate) tail_falls: Vec<[f64; 2]>,
    /// How the points were laid ([`InlaIntegration::resolve`]d: grid, ccd or eb).
    pub(crate) integration: InlaIntegration,
    /// BFGS iterations of the mode search.
    pub(crate) mode_iterations: usize,
    /// Laplace fits made in all (mode search, Hessian, grid).
    pub(crate) laplace_fits: usize,
    /// Product-grid points where log p~ could not be evaluated (left out).
    pub(crate) failed_points: usize,
    /// Axes (0-based, with the direction's sign) cut at [`InlaSettings::max_axis_steps`] while
    /// still within the threshold.
    pub(crate) truncated_axes: Vec<(usize, i64)>,
}

impl Grid {
    /// The dimension of theta.
    pub(crate) fn dim(&self) -> usize {
        self.eigenvalues.len()
    }

    /// On the central composite design, the probe of each axis's tails
    /// ([`Grid::tail_falls`]) that fell least short of the asymmetric gaussian's
    /// [`TAIL_FALL`]: (axis, side -1 or +1, the fall found). `None` on the grid and for the mode
    /// alone.
    pub(crate) fn heaviest_tail(&self) -> Option<(usize, i64, f64)> {
        self.tail_falls
            .iter()
            .enumerate()
            .flat_map(|(axis, falls)| [(axis, -1, falls[0]), (axis, 1, falls[1])])
            .min_by(|a, b| a.2.total_cmp(&b.2))
    }
}

/// Where the central composite design probes each axis's tails, in standardised units u.
pub const TAIL_Z: f64 = 4.0;

/// How far the asymmetric gaussian falls at [`TAIL_Z`]: TAIL_Z^2 / 2 nats.
pub const TAIL_FALL: f64 = TAIL_Z * TAIL_Z / 2.0;

/// A probe falling less than this (half the asymmetric gaussian's fall) says the posterior has a
/// tail the design's points do not reach: the job warns.
pub const TAIL_WARNING_FALL: f64 = TAIL_FALL / 2.0;

/// The mode, the Hessian, the grid and its weights; `visit` is called once per kept point, in
/// the points' order, with the point (its weight not yet known: 0), its evaluation and the
/// cells' marginals there (the Laplace gaussian's and, by the strategy, their correction).
pub fn explore(
    problem: &HyperProblem,
    settings: &InlaSettings,
    mut visit: impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
) -> Result<Grid, InlaError> {
    let mut evaluator = Evaluator::new(problem, &settings.laplace);
    let mode = find_mode(&mut evaluator, settings)?;
    let d = problem.dim();
    let (eigenvalues, axes) = z_axes(&mode.hessian, d)?;
    let mut walk = Walk {
        evaluator,
        mode: &mode,
        axes,
        settings,
        points: Vec::new(),
        kept: Vec::new(),
        seen: HashSet::new(),
        failed_points: 0,
    };
    let integration = settings.integration.resolve(d);
    let mut stretch = vec![[1.0; 2]; d];
    let mut tail_falls = Vec::new();
    let truncated_axes = match integration {
        InlaIntegration::EmpiricalBayes => {
            walk.keep(vec![0; d], &mode.evaluation, &mut visit)?;
            Vec::new()
        }
        InlaIntegration::Ccd => {
            stretch = walk.design(&mut visit)?;
            tail_falls = walk.tail_falls(&stretch);
            Vec::new()
        }
        _ => walk.grid(&mut visit)?,
    };
    let (mut points, laplace_fits, failed_points) =
        (walk.points, walk.evaluator.fits, walk.failed_points);
    let axes = walk.axes;
    normalise(&mut points);
    Ok(Grid {
        points,
        hessian: mode.hessian,
        eigenvalues,
        axes,
        delta_z: settings.delta_z,
        stretch,
        tail_falls,
        integration,
        mode_iterations: mode.iterations,
        laplace_fits,
        failed_points,
        truncated_axes,
    })
}

/// The mode of log p~(theta | y) and the covariance (-H)^-1 there (row-major d x d), in
/// unconstrained coordinates: where a chain on the hyperparameters should start and how far it
/// should step ([`crate::sampler::hyper`]'s pseudo-marginal update). With A = V Lambda^-1/2 the
/// grid's axes ([`z_axes`]), (-H)^-1 = V Lambda^-1 V^T = A A^T. Fails as [`find_mode`] does, or
/// when -H is not positive definite ([`InlaError::NotConcave`], naming the eigenvalue).
pub(crate) fn mode_and_covariance(
    problem: &HyperProblem,
    settings: &InlaSettings,
) -> Result<(Vec<f64>, Vec<f64>), InlaError> {
    let mut evaluator = Evaluator::new(problem, &settings.laplace);
    let mode = find_mode(&mut evaluator, settings)?;
    let d = problem.dim();
    let (_, axes) = z_axes(&mode.hessian, d)?;
    let covariance = (0..d * d)
        .map(|k| {
            let (i, j) = (k / d, k % d);
            (0..d).map(|m| axes[i * d + m] * axes[j * d + m]).sum()
        })
        .collect();
    Ok((mode.evaluation.theta, covariance))
}

/// The eigenvalues of H = -Hessian (increasing) and the map V Lambda^-1/2 (row-major), or
/// [`InlaError::NotConcave`] when an eigenvalue is not positive.
fn z_axes(hessian: &[f64], d: usize) -> Result<(Vec<f64>, Vec<f64>), InlaError> {
    if d == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let negative = Mat::from_fn(d, d, |i, j| -hessian[i * d + j]);
    // faer fails only on a matrix that is not finite: a Hessian whose finite differences
    // overflowed is as unusable as one that is not concave.
    let eigen = negative
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| InlaError::NotConcave {
            eigenvalue: f64::NAN,
        })?;
    let eigenvalues: Vec<f64> = (0..d).map(|j| eigen.S()[j]).collect();
    if let Some(&eigenvalue) = eigenvalues.iter().find(|&&l| l.is_nan() || l <= 0.0) {
        return Err(InlaError::NotConcave { eigenvalue });
    }
    let v = eigen.U();
    let axes = (0..d * d)
        .map(|k| v[(k / d, k % d)] / eigenvalues[k % d].sqrt())
        .collect();
    Ok((eigenvalues, axes))
}

/// Every integer vector of the box `extents` (inclusive), lexicographically.
fn product(extents: &[(i64, i64)]) -> Vec<Vec<i64>> {
    extents
        .iter()
        .fold(vec![Vec::new()], |prefixes, &(low, high)| {
            prefixes
                .iter()
                .flat_map(|prefix| {
                    (low..=high).map(move |k| {
                        let mut next = prefix.clone();
                        next.push(k);
                        next
                    })
                })
                .collect()
        })
}

/// Flood fill on the integer lattice from the `kept` points: every neighbour (one step along one
/// axis) of a kept point is offered to `try_point` (`Ok(None)`: seen before; `Ok(Some(kept))`:
/// evaluated now), and a newly kept point's neighbours in turn, breadth first, until no kept
/// point has an unoffered neighbour. Neighbours more than `steps` from the origin along their
/// axis are not offered; the axes (with the step's sign) where that happened are returned, each
/// once, in order.
fn flood_fill(
    kept: Vec<Vec<i64>>,
    steps: i64,
    mut try_point: impl FnMut(&[i64]) -> Result<Option<bool>, InlaError>,
) -> Result<Vec<(usize, i64)>, InlaError> {
    let mut queue: VecDeque<Vec<i64>> = kept.into();
    let mut truncated = BTreeSet::new();
    while let Some(index) = queue.pop_front() {
        for axis in 0..index.len() {
            for sign in [1i64, -1] {
                let mut next = index.clone();
                next[axis] += sign;
                if next[axis].abs() > steps {
                    truncated.insert((axis, sign));
                    continue;
                }
                if try_point(&next)? == Some(true) {
                    queue.push_back(next);
                }
            }
        }
    }
    Ok(truncated.into_iter().collect())
}

/// The log of the volume a design point at `unit` stands for once stretched, relative to the
/// unstretched design's: the stretch on its side along each axis (the mean of the two sides on an
/// axis where it sits at 0, its cell reaching both).
fn log_volume(unit: &[f64], stretch: &[[f64; 2]]) -> f64 {
    unit.iter()
        .zip(stretch)
        .map(|(&x, &[below, above])| {
            if x > 0.0 {
                above.ln()
            } else if x < 0.0 {
                below.ln()
            } else {
                (0.5 * (below + above)).ln()
            }
        })
        .sum()
}

/// Weights exp(log p~) normalised over `points`.
fn normalise(points: &mut [GridPoint]) {
    let top = points
        .iter()
        .map(GridPoint::log_weight)
        .fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = points.iter().map(|p| (p.log_weight() - top).exp()).sum();
    for point in points {
        point.weight = (point.log_weight() - top).exp() / total;
    }
}

/// The exploration's state: the evaluator, the map from z to theta and the points kept.
struct Walk<'w, 'p, 'a> {
    evaluator: Evaluator<'p, 'a>,
    mode: &'w Mode,
    /// V Lambda^-1/2, row-major.
    axes: Vec<f64>,
    settings: &'w InlaSettings,
    points: Vec<GridPoint>,
    /// The kept points' integer z-indices, in the order of `points`.
    kept: Vec<Vec<i64>>,
    /// The integer z-indices evaluated so far.
    seen: HashSet<Vec<i64>>,
    failed_points: usize,
}

impl Walk<'_, '_, '_> {
    /// The grid: the mode, each axis walked both ways, their product, then the flood fill; the
    /// axes cut at the step limit.
    fn grid(
        &mut self,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<Vec<(usize, i64)>, InlaError> {
        let (mode, d) = (self.mode, self.mode.evaluation.theta.len());
        self.keep(vec![0; d], &mode.evaluation, visit)?;
        let mut extents = vec![(0i64, 0i64); d];
        let mut truncated_axes = Vec::new();
        for (axis, extent) in extents.iter_mut().enumerate() {
            for sign in [1i64, -1] {
                let (reach, truncated) = self.along(axis, sign, visit)?;
                if sign > 0 {
                    extent.1 = reach;
                } else {
                    extent.0 = -reach;
                }
                if truncated {
                    truncated_axes.push((axis, sign));
                }
            }
        }
        for index in product(&extents) {
            if !self.seen.contains(&index) {
                self.try_point(index, visit)?;
            }
        }
        truncated_axes.extend(self.flood(visit)?);
        truncated_axes.sort_unstable();
        truncated_axes.dedup();
        Ok(truncated_axes)
    }

    /// The central composite design ([`design::central_composite`]): the mode and the design's
    /// points, each coordinate scaled by the posterior's stretch on its side (R-INLA's: where log
    /// p~ drops f0 at z = +/-2 along an axis, a gaussian with that sd there drops 2 / s^2, so s
    /// = sqrt(2 / f0); 1 where it does not drop, drops without bound or cannot be evaluated). A
    /// point where log p~ cannot be evaluated is left out (counted in `failed_points`). Returns
    /// the stretches, each axis's [below, above].
    fn design(
        &mut self,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<Vec<[f64; 2]>, InlaError> {
        let d = self.mode.evaluation.theta.len();
        let top = self.mode.evaluation.log_density();
        let mut stretch = vec![[1.0f64; 2]; d];
        for (axis, sides) in stretch.iter_mut().enumerate() {
            for (side, sign) in sides.iter_mut().zip([-1.0, 1.0]) {
                let mut z = vec![0.0; d];
                z[axis] = 2.0 * sign;
                if let Ok(evaluation) = self.evaluator.evaluate(&self.theta(&z)) {
                    let drop = top - evaluation.log_density();
                    if drop > 0.0 && drop.is_finite() {
                        *side = (2.0 / drop).sqrt();
                    }
                }
            }
        }
        for (k, (unit, log_weight)) in design::central_composite(d).into_iter().enumerate() {
            let z: Vec<f64> = unit
                .iter()
                .zip(&stretch)
                .map(|(&x, sides)| x * sides[usize::from(x > 0.0)])
                .collect();
            let log_weight = log_weight + log_volume(&unit, &stretch);
            if k == 0 {
                let mode = self.mode;
                self.keep_at(z, log_weight, &mode.evaluation, visit)?;
                continue;
            }
            match self.evaluator.evaluate(&self.theta(&z)) {
                Ok(evaluation) => self.keep_at(z, log_weight, &evaluation, visit)?,
                Err(_) => self.failed_points += 1,
            }
        }
        Ok(stretch)
    }

    /// The fall of log p~ below the mode's at u = -/+ [`TAIL_Z`] along each axis, z = u times
    /// that side's `stretch` (infinity where log p~ cannot be evaluated): 2 d Laplace fits.
    fn tail_falls(&mut self, stretch: &[[f64; 2]]) -> Vec<[f64; 2]> {
        let d = stretch.len();
        let top = self.mode.evaluation.log_density();
        (0..d)
            .map(|axis| {
                [-1.0, 1.0].map(|sign: f64| {
                    let mut z = vec![0.0; d];
                    z[axis] = sign * TAIL_Z * stretch[axis][usize::from(sign > 0.0)];
                    match self.evaluator.evaluate(&self.theta(&z)) {
                        Ok(evaluation) => top - evaluation.log_density(),
                        Err(_) => f64::INFINITY,
                    }
                })
            })
            .collect()
    }

    fn z(&self, index: &[i64]) -> Vec<f64> {
        index
            .iter()
            .map(|&k| k as f64 * self.settings.delta_z)
            .collect()
    }

    fn theta(&self, z: &[f64]) -> Vec<f64> {
        let d = z.len();
        let mode = &self.mode.evaluation.theta;
        (0..d)
            .map(|i| mode[i] + (0..d).map(|j| self.axes[i * d + j] * z[j]).sum::<f64>())
            .collect()
    }

    /// Whether log p~ = `log_density` is within the threshold of the mode's.
    fn within(&self, log_density: f64) -> bool {
        self.mode.evaluation.log_density() - log_density <= self.settings.threshold
    }

    /// Walk axis `axis` in direction `sign` from the mode: the last step kept, and whether the
    /// walk was cut at the step limit.
    fn along(
        &mut self,
        axis: usize,
        sign: i64,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<(i64, bool), InlaError> {
        let d = self.mode.evaluation.theta.len();
        let steps = self.settings.max_axis_steps as i64;
        for k in 1..=steps {
            let mut index = vec![0; d];
            index[axis] = sign * k;
            if !self.try_point(index, visit)? {
                return Ok((k - 1, false));
            }
        }
        Ok((steps, true))
    }

    /// Grow the kept set by its lattice neighbours until it is closed ([`flood_fill`]).
    fn flood(
        &mut self,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<Vec<(usize, i64)>, InlaError> {
        let steps = self.settings.max_axis_steps as i64;
        flood_fill(self.kept.clone(), steps, |index| {
            if self.seen.contains(index) {
                return Ok(None);
            }
            self.try_point(index.to_vec(), visit).map(Some)
        })
    }

    /// Evaluate the point `index` and keep it when within the threshold; whether it was kept.
    /// A point where log p~ cannot be evaluated is counted in `failed_points` and not kept.
    fn try_point(
        &mut self,
        index: Vec<i64>,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<bool, InlaError> {
        let theta = self.theta(&self.z(&index));
        self.seen.insert(index.clone());
        let Ok(evaluation) = self.evaluator.evaluate(&theta) else {
            self.failed_points += 1;
            return Ok(false);
        };
        if !self.within(evaluation.log_density()) {
            return Ok(false);
        }
        self.keep(index, &evaluation, visit)?;
        Ok(true)
    }

    /// Keep the point `index` evaluated as `evaluation`: its marginals, then `visit`.
    fn keep(
        &mut self,
        index: Vec<i64>,
        evaluation: &Evaluation,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<(), InlaError> {
        self.seen.insert(index.clone());
        self.kept.push(index.clone());
        self.keep_at(self.z(&index), 0.0, evaluation, visit)
    }

    /// Keep the point at `z`, of log design weight `log_design_weight`, evaluated as
    /// `evaluation`: its marginals, then `visit`.
    fn keep_at(
        &mut self,
        z: Vec<f64>,
        log_design_weight: f64,
        evaluation: &Evaluation,
        visit: &mut impl FnMut(&GridPoint, &Evaluation, &CorrectedMarginals),
    ) -> Result<(), InlaError> {
        let problem = self.evaluator.problem;
        let marginals = evaluation
            .marginals(problem, &self.settings.laplace)
            .map_err(|e| InlaError::Marginals {
                theta: evaluation.theta.clone(),
                reason: e.to_string(),
            })?;
        let point = GridPoint {
            z,
            log_design_weight,
            theta: evaluation.theta.clone(),
            values: evaluation.values,
            log_density: evaluation.log_density(),
            log_evidence: evaluation.log_evidence,
            evidence_correction: evaluation.evidence_correction(),
            weight: 0.0,
        };
        visit(&point, evaluation, &marginals);
        self.points.push(point);
        Ok(())
    }
}

#[cfg(test)]
mod flood_tests {
    use super::*;

    /// A bent log density: along z0 wide, across it narrow about the parabola z1 = z0^2 / 20
    /// (the lattice's band across the ridge, at least 5 points wide, climbs at most 1.2 points
    /// a step, so it is face-connected; a ridge that climbs faster than its band is wide is
    /// not, and no local search follows it).
    fn banana(z: &[i64]) -> f64 {
        let (a, b) = (z[0] as f64, z[1] as f64);
        -a * a / 2.0 / 36.0 - (b - a * a / 20.0).powi(2) / 2.0
    }

    const THRESHOLD: f64 = 4.5;

    /// The box around the axes that the walk along each axis finds, and the flood from it.
    fn flooded(steps: i64) -> (HashSet<Vec<i64>>, Vec<(usize, i64)>) {
        let within = |z: &[i64]| -banana(z) <= THRESHOLD;
        let kept: Vec<Vec<i64>> = product(&[(-steps, steps), (-3, 3)])
            .into_iter()
            .filter(|z| within(z))
            .collect();
        let mut seen: HashSet<Vec<i64>> =
            product(&[(-steps, steps), (-3, 3)]).into_iter().collect();
        let mut all: HashSet<Vec<i64>> = kept.iter().cloned().collect();
        let truncated = flood_fill(kept, steps, |z| {
            if !seen.insert(z.to_vec()) {
                return Ok(None);
            }
            let keep = within(z);
            if keep {
                all.insert(z.to_vec());
            }
            Ok(Some(keep))
        })
        .unwrap();
        (all, truncated)
    }

    #[test]
    fn the_flood_reaches_every_point_of_a_bent_superlevel_set() {
        let steps = 40;
        let (kept, truncated) = flooded(steps);
        let everything: HashSet<Vec<i64>> = product(&[(-steps, steps), (-steps, steps)])
            .into_iter()
            .filter(|z| -banana(z) <= THRESHOLD)
            .collect();
        assert_eq!(kept, everything);
        // The ridge climbs to z1 = 144 / 20 at |z0| = 12 (the superlevel set's end): beyond
        // the box's |z1| <= 3, and nothing was cut.
        assert!(kept.iter().any(|z| z[1] >= 7));
        assert!(truncated.is_empty(), "{truncated:?}");
    }

    #[test]
    fn a_flood_stopped_by_the_step_limit_says_where() {
        let (kept, truncated) = flooded(5);
        assert!(kept.iter().all(|z| z[0].abs() <= 5 && z[1].abs() <= 5));
        assert_eq!(truncated, vec![(0, -1), (0, 1)]);
    }
}
