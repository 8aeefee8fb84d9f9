//! The task model and the objective F(Z) of a partition.
//!
//! A region j aggregates its areas: X_j = the mean of its areas' (standardised) features, Y_j =
//! the sum or the mean of their targets. The task model is a linear regression of Y on
//! [1, X] over the m regions (least squares, or ridge with the intercept unpenalised), and
//!
//!   F(Z) = sum_j ( err(Y_j - f(X_j)) + G(Z_j) ),
//!
//! err absolute or squared, G the size penalty: `bound_weight` per area outside
//! [min_size, max_size] plus `variance_weight * (n_j - n / m)^2` (so the variance-of-sizes term
//! sums to m times the variance of the region sizes). A region's sums are updated in O(p) when
//! an area moves; refitting costs O(m q^2 + q^3) with q = p + 1, independent of the number of
//! areas.
//!
//! **Hidden targets.** A problem may hide some areas' targets ([`Problem::hiding_targets`], the
//! training problem of an out-of-sample fold): those areas keep their place in the graph, their
//! features and their share of a region's size, but their target enters nothing. Y_j is then
//! the mean of the region's observed targets (or their sum scaled up to the region's size,
//! n_j / observed_j times), and a region with no observed target is left out of the fit and has
//! no task error. With every target observed each number is computed exactly as before.

use super::areas::Areas;
use super::graph::Adjacency;

crate::closed_names! {
    /// The regression fitted on region aggregates.
    pub enum TaskModelKind {
        LeastSquares = "least-squares",
        Ridge = "ridge",
    }
}

crate::closed_names! {
    /// How a region's target aggregates its areas' targets.
    pub enum TargetAggregate {
        Mean = "mean",
        Sum = "sum",
    }
}

crate::closed_names! {
    /// The per-region error in F.
    pub enum ErrorKind {
        Absolute = "absolute",
        Squared = "squared",
    }
}

/// The constraint penalty G.
#[derive(Debug, Clone, PartialEq)]
pub struct SizePenalty {
    pub min_size: usize,
    /// 0: no upper bound.
    pub max_size: usize,
    pub bound_weight: f64,
    pub variance_weight: f64,
}

impl SizePenalty {
    pub const NONE: SizePenalty = SizePenalty {
        min_size: 1,
        max_size: 0,
        bound_weight: 0.0,
        variance_weight: 0.0,
    };

    /// G of one region with `size` areas, when the mean region size is `mean_size`.
    pub fn of_region(&self, size: usize, mean_size: f64) -> f64 {
        let below = self.min_size.saturating_sub(size);
        let above = if self.max_size > 0 {
            size.saturating_sub(self.max_size)
        } else {
            0
        };
        let deviation = size as f64 - mean_size;
        self.bound_weight * (below + above) as f64 + self.variance_weight * deviation * deviation
    }
}

/// What F is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSettings {
    pub model: TaskModelKind,
    /// Ridge penalty on the standardised feature coefficients (ridge only).
    pub ridge: f64,
    pub aggregate: TargetAggregate,
    pub error: ErrorKind,
    pub penalty: SizePenalty,
    /// Folds of the cross-validated region MAE.
    pub cv_folds: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self {
            model: TaskModelKind::LeastSquares,
            ridge: 1.0,
            aggregate: TargetAggregate::Mean,
            error: ErrorKind::Absolute,
            penalty: SizePenalty::NONE,
            cv_folds: 5,
        }
    }
}

/// The data of a partition problem: graph, standardised features, targets and settings.
#[derive(Debug, Clone)]
pub struct Problem {
    pub graph: Adjacency,
    /// Row-major n x p, each column standardised to mean 0 and sd 1 over the areas (a constant
    /// column stays 0).
    features: Vec<f64>,
    /// NaN where the target is hidden.
    target: Vec<f64>,
    /// Whether each area's target may enter F and the task model.
    observed: Vec<bool>,
    p: usize,
    pub regions: usize,
    pub(crate) settings: TaskSettings,
}

impl Problem {
    pub fn new(
        graph: Adjacency,
        features: Vec<f64>,
        p: usize,
        target: Vec<f64>,
        regions: usize,
        settings: TaskSettings,
    ) -> Self {
        assert_eq!(features.len(), target.len() * p);
        assert_eq!(graph.len(), target.len());
        Self {
            graph,
            features: standardise(features, p),
            observed: vec![true; target.len()],
            target,
            p,
            regions,
            settings,
        }
    }

    pub(crate) fn from_areas(
        areas: &Areas,
        graph: Adjacency,
        regions: usize,
        settings: TaskSettings,
    ) -> Self {
        let p = areas.feature_count();
        Self::new(
            graph,
            areas.features.clone(),
            p,
            areas.target.clone(),
            regions,
            settings,
        )
    }

    pub fn area_count(&self) -> usize {
        self.target.len()
    }

    pub(crate) fn feature_count(&self) -> usize {
        self.p
    }

    /// Standardised features of area a.
    pub(crate) fn features_of(&self, a: usize) -> &[f64] {
        &self.features[a * self.p..(a + 1) * self.p]
    }

    /// The target of area a; NaN when it is hidden (see [`Problem::is_observed`]).
    pub fn target_of(&self, a: usize) -> f64 {
        self.target[a]
    }

    /// Whether area a's target may enter F and the task model.
    pub(crate) fn is_observed(&self, a: usize) -> bool {
        self.observed[a]
    }

    /// The same problem with the targets of the areas where `hidden` holds taken out: they are
    /// stored as NaN, so that a use that should not happen shows in the numbers. Graph, features
    /// (standardised over every area, as before) and settings are unchanged.
    pub(crate) fn hiding_targets(&self, hidden: &[bool]) -> Problem {
        assert_eq!(hidden.len(), self.area_count(), "one flag per area");
        let mut problem = self.clone();
        for (a, &hide) in hidden.iter().enumerate() {
            if hide {
                problem.target[a] = f64::NAN;
                problem.observed[a] = false;
            }
        }
        problem
    }

    fn mean_size(&self) -> f64 {
        self.area_count() as f64 / self.regions as f64
    }
}

fn standardise(mut features: Vec<f64>, p: usize) -> Vec<f64> {
    if p == 0 {
        return features;
    }
    let n = features.len() / p;
    for k in 0..p {
        let mean = (0..n).map(|a| features[a * p + k]).sum::<f64>() / n as f64;
        let var = (0..n)
            .map(|a| (features[a * p + k] - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let sd = var.sqrt();
        for a in 0..n {
            let x = &mut features[a * p + k];
            *x = if sd > 0.0 { (*x - mean) / sd } else { 0.0 };
        }
    }
    features
}

/// Per region: the number of areas, the number whose target is observed, the feature sums and
/// the observed targets' sum (row of p + 1 sums).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionStats {
    sizes: Vec<usize>,
    observed: Vec<usize>,
    sums: Vec<f64>,
    width: usize,
}

/// Which way an area crosses a region's border.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    Leaves,
    Joins,
}

impl RegionStats {
    /// Sums over the areas of each region of `labels`.
    pub(crate) fn new(problem: &Problem, labels: &[u32]) -> Self {
        let width = problem.p + 1;
        let mut stats = Self {
            sizes: vec![0; problem.regions],
            observed: vec![0; problem.regions],
            sums: vec![0.0; problem.regions * width],
            width,
        };
        for (a, &r) in labels.iter().enumerate() {
            stats.add(problem, a, r as usize, 1.0);
        }
        stats
    }

    /// Add (sign 1) or remove (sign -1) area a to or from region r's sums.
    pub(crate) fn add(&mut self, problem: &Problem, a: usize, r: usize, sign: f64) {
        let row = &mut self.sums[r * self.width..(r + 1) * self.width];
        for (s, x) in row.iter_mut().zip(problem.features_of(a)) {
            *s += sign * x;
        }
        let observed = problem.is_observed(a);
        if observed {
            row[problem.p] += sign * problem.target_of(a);
        }
        let step = |count: &mut usize| {
            if sign > 0.0 {
                *count += 1;
            } else {
                *count -= 1;
            }
        };
        step(&mut self.sizes[r]);
        if observed {
            step(&mut self.observed[r]);
        }
    }

    pub(crate) fn size(&self, r: usize) -> usize {
        self.sizes[r]
    }

    /// Areas of region r whose target is observed.
    pub(crate) fn observed(&self, r: usize) -> usize {
        self.observed[r]
    }

    /// Y_r, the region's target aggregate as the task model sees it; None when none of its
    /// areas' targets is observed.
    pub(crate) fn target_aggregate(&self, problem: &Problem, r: usize) -> Option<f64> {
        aggregate_target(
            problem.settings.aggregate,
            self.row(r)[problem.p],
            self.sizes[r],
            self.observed[r],
        )
    }

    /// The change of Y_r when area a leaves or joins region r (0 when Y_r is undefined before or
    /// after): what the learned flip reads, never a hidden target.
    pub(crate) fn target_change(
        &self,
        problem: &Problem,
        a: usize,
        r: usize,
        crossing: Crossing,
    ) -> f64 {
        let (sum, size, observed) = (self.row(r)[problem.p], self.sizes[r], self.observed[r]);
        let seen = problem.is_observed(a);
        let y = if seen { problem.target_of(a) } else { 0.0 };
        if problem.settings.aggregate == TargetAggregate::Sum && seen && observed == size {
            return match crossing {
                Crossing::Leaves => -y,
                Crossing::Joins => y,
            };
        }
        let count = usize::from(seen);
        let after = match crossing {
            Crossing::Leaves => aggregate_target(
                problem.settings.aggregate,
                sum - y,
                size - 1,
                observed - count,
            ),
            Crossing::Joins => aggregate_target(
                problem.settings.aggregate,
                sum + y,
                size + 1,
                observed + count,
            ),
        };
        let before = aggregate_target(problem.settings.aggregate, sum, size, observed);
        match (before, after) {
            (Some(before), Some(after)) => after - before,
            _ => 0.0,
        }
    }

    pub(crate) fn row(&self, r: usize) -> &[f64] {
        &self.sums[r * self.width..(r + 1) * self.width]
    }

    /// The two rows and sizes of regions `s` and `t`, to restore after a rejected move.
    pub(crate) fn save(&self, s: usize, t: usize) -> SavedRows {
        SavedRows {
            s,
            t,
            rows: [self.row(s).to_vec(), self.row(t).to_vec()],
            sizes: [self.sizes[s], self.sizes[t]],
            observed: [self.observed[s], self.observed[t]],
        }
    }

    pub(crate) fn restore(&mut self, saved: &SavedRows) {
        let w = self.width;
        self.sums[saved.s * w..(saved.s + 1) * w].copy_from_slice(&saved.rows[0]);
        self.sums[saved.t * w..(saved.t + 1) * w].copy_from_slice(&saved.rows[1]);
        self.sizes[saved.s] = saved.sizes[0];
        self.sizes[saved.t] = saved.sizes[1];
        self.observed[saved.s] = saved.observed[0];
        self.observed[saved.t] = saved.observed[1];
    }
}

/// Rows of two regions saved before a tentative move.
#[derive(Debug, Clone)]
pub(crate) struct SavedRows {
    s: usize,
    t: usize,
    rows: [Vec<f64>; 2],
    sizes: [usize; 2],
    observed: [usize; 2],
}

/// Y of a region from the sum of its observed targets: their mean, or their sum scaled up to
/// the region's `size` (the sum itself when every target is observed); None with none observed.
fn aggregate_target(
    aggregate: TargetAggregate,
    sum: f64,
    size: usize,
    observed: usize,
) -> Option<f64> {
    if observed == 0 {
        return None;
    }
    Some(match aggregate {
        TargetAggregate::Mean => sum / observed as f64,
        TargetAggregate::Sum if observed == size => sum,
        TargetAggregate::Sum => sum * size as f64 / observed as f64,
    })
}

/// F and its parts for one partition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub f: f64,
    /// Sum of the regions' task errors.
    pub(crate) task_error: f64,
    pub(crate) penalty: f64,
    /// err(Y_j - f(X_j)) per region.
    pub(crate) errors: Vec<f64>,
    /// Y_j - f(X_j) per region.
    pub(crate) residuals: Vec<f64>,
    /// Mean absolute residual over regions (the training region MAE).
    pub(crate) mae: f64,
}

/// Fits the task model and evaluates F, reusing its buffers between calls.
#[derive(Debug, Clone)]
pub struct Evaluator {
    design: Vec<f64>,
    response: Vec<f64>,
    normal: Vec<f64>,
    rhs: Vec<f64>,
    coefficients: Vec<f64>,
}

impl Evaluator {
    pub(crate) fn new(problem: &Problem) -> Self {
        let q = problem.p + 1;
        Self {
            design: vec![0.0; problem.regions * q],
            response: vec![0.0; problem.regions],
            normal: vec![0.0; q * q],
            rhs: vec![0.0; q],
            coefficients: vec![0.0; q],
        }
    }

    /// Evaluate F for the regions summarised by `stats` into `out`. A region with no observed
    /// target has residual and error 0 and is left out of the fit and of the MAE.
    pub(crate) fn evaluate(
        &mut self,
        problem: &Problem,
        stats: &RegionStats,
        out: &mut Evaluation,
    ) {
        self.build_design(problem, stats);
        let seen = |j: usize| stats.observed(j) > 0;
        self.fit(problem, seen);
        out.residuals.clear();
        out.errors.clear();
        let q = problem.p + 1;
        let mean_size = problem.mean_size();
        let (mut task_error, mut penalty, mut abs_sum, mut scored) = (0.0, 0.0, 0.0, 0usize);
        for j in 0..problem.regions {
            penalty += problem.settings.penalty.of_region(stats.size(j), mean_size);
            if !seen(j) {
                out.residuals.push(0.0);
                out.errors.push(0.0);
                continue;
            }
            let prediction = dot(&self.design[j * q..(j + 1) * q], &self.coefficients);
            let residual = self.response[j] - prediction;
            let error = match problem.settings.error {
                ErrorKind::Absolute => residual.abs(),
                ErrorKind::Squared => residual * residual,
            };
            out.residuals.push(residual);
            out.errors.push(error);
            task_error += error;
            abs_sum += residual.abs();
            scored += 1;
        }
        out.task_error = task_error;
        out.penalty = penalty;
        out.f = task_error + penalty;
        out.mae = abs_sum / scored.max(1) as f64;
    }

    /// Region MAE cross-validated over regions: regions ordered by their smallest area fall
    /// into `cv_folds` folds in turn; each fold is predicted by the model fitted on the others.
    /// Regions with no observed target are neither fitted nor scored.
    pub(crate) fn cross_validated_mae(
        &mut self,
        problem: &Problem,
        stats: &RegionStats,
        labels: &[u32],
    ) -> f64 {
        self.build_design(problem, stats);
        let folds = region_folds(labels, problem.regions, problem.settings.cv_folds);
        let seen = |j: usize| stats.observed(j) > 0;
        let q = problem.p + 1;
        let (mut total, mut scored) = (0.0, 0usize);
        for fold in 0..problem.settings.cv_folds.max(1) {
            self.fit(problem, |j| folds[j] != fold && seen(j));
            for j in (0..problem.regions).filter(|&j| folds[j] == fold && seen(j)) {
                let prediction = dot(&self.design[j * q..(j + 1) * q], &self.coefficients);
                total += (self.response[j] - prediction).abs();
                scored += 1;
            }
        }
        total / scored.max(1) as f64
    }

    /// What the task model, fitted on the regions with an observed target, predicts for one
    /// area of each region: f(X_j), or f(X_j) / n_j when Y_j is a sum.
    pub(crate) fn area_predictions(&mut self, problem: &Problem, stats: &RegionStats) -> Vec<f64> {
        self.build_design(problem, stats);
        self.fit(problem, |j| stats.observed(j) > 0);
        let q = problem.p + 1;
        (0..problem.regions)
            .map(|j| {
                let prediction = dot(&self.design[j * q..(j + 1) * q], &self.coefficients);
                match problem.settings.aggregate {
                    TargetAggregate::Mean => prediction,
                    TargetAggregate::Sum => prediction / stats.size(j).max(1) as f64,
                }
            })
            .collect()
    }

    fn build_design(&mut self, problem: &Problem, stats: &RegionStats) {
        let q = problem.p + 1;
        for j in 0..problem.regions {
            let n = stats.size(j).max(1) as f64;
            let row = stats.row(j);
            let design = &mut self.design[j * q..(j + 1) * q];
            design[0] = 1.0;
            for k in 0..problem.p {
                design[k + 1] = row[k] / n;
            }
            self.response[j] = stats.target_aggregate(problem, j).unwrap_or(0.0);
        }
    }

    /// Solve the (ridge) normal equations over the regions with `use_region(j)`.
    fn fit(&mut self, problem: &Problem, use_region: impl Fn(usize) -> bool) {
        let q = problem.p + 1;
        self.normal.fill(0.0);
        self.rhs.fill(0.0);
        for j in (0..problem.regions).filter(|&j| use_region(j)) {
            let z = &self.design[j * q..(j + 1) * q];
            let y = self.response[j];
            for r in 0..q {
                self.rhs[r] += z[r] * y;
                for c in 0..=r {
                    self.normal[r * q + c] += z[r] * z[c];
                }
            }
        }
        let ridge = match problem.settings.model {
            TaskModelKind::Ridge => problem.settings.ridge,
            TaskModelKind::LeastSquares => 0.0,
        };
        for k in 1..q {
            self.normal[k * q + k] += ridge;
        }
        solve_with_jitter(&self.normal, &self.rhs, q, &mut self.coefficients);
    }
}

/// Which fold each region is in: regions ranked by their smallest area, rank mod folds.
pub(crate) fn region_folds(labels: &[u32], regions: usize, folds: usize) -> Vec<usize> {
    let mut first = vec![usize::MAX; regions];
    for (a, &r) in labels.iter().enumerate() {
        first[r as usize] = first[r as usize].min(a);
    }
    let mut order: Vec<usize> = (0..regions).collect();
    order.sort_by_key(|&j| first[j]);
    let mut fold = vec![0; regions];
    for (rank, j) in order.into_iter().enumerate() {
        fold[j] = rank % folds.max(1);
    }
    fold
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solve A x = b for symmetric positive semi-definite A (lower triangle filled) by Cholesky;
/// when A is singular (collinear region features), add a jitter of 1e-10 times its mean
/// diagonal, growing tenfold until the factor exists: the minimum-norm-like least-squares answer.
fn solve_with_jitter(a: &[f64], b: &[f64], q: usize, x: &mut [f64]) {
    let scale = (0..q).map(|k| a[k * q + k]).sum::<f64>() / q as f64;
    let mut jitter = 0.0;
    let mut factor = vec![0.0; q * q];
    loop {
        if cholesky(a, q, jitter, &mut factor) {
            break;
        }
        jitter = if jitter == 0.0 {
            1e-10 * scale.max(1e-300)
        } else {
            jitter * 10.0
        };
    }
    // forward then backward substitution
    for r in 0..q {
        let mut v = b[r];
        for c in 0..r {
            v -= factor[r * q + c] * x[c];
        }
        x[r] = v / factor[r * q + r];
    }
    for r in (0..q).rev() {
        let mut v = x[r];
        for c in r + 1..q {
            v -= factor[c * q + r] * x[c];
        }
        x[r] = v / factor[r * q + r];
    }
}

/// Lower Cholesky factor of A + jitter I into `l`; false when A is not positive definite enough.
fn cholesky(a: &[f64], q: usize, jitter: f64, l: &mut [f64]) -> bool {
    l.fill(0.0);
    let tolerance = 1e-12 * (0..q).map(|k| a[k * q + k].abs()).fold(0.0, f64::max);
    for r in 0..q {
        for c in 0..=r {
            let mut v = a[r * q + c] + if r == c { jitter } else { 0.0 };
            for k in 0..c {
                v -= l[r * q + k] * l[c * q + k];
            }
            if r == c {
                if v <= tolerance {
                    return false;
                }
                l[r * q + r] = v.sqrt();
            } else {
                l[r * q + c] = v / l[c * q + c];
            }
        }
    }
    true
}

/// Mean of the region errors, or 1 when they are all 0 (a scale for errors and changes of F).
pub(crate) fn mean_error(errors: &[f64]) -> f64 {
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    if mean > 0.0 && mean.is_finite() {
        mean
    } else {
        1.0
    }
}
