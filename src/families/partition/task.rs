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
    target: Vec<f64>,
    p: usize,
    pub regions: usize,
    pub settings: TaskSettings,
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
            target,
            p,
            regions,
            settings,
        }
    }

    pub fn from_areas(
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

    pub fn feature_count(&self) -> usize {
        self.p
    }

    /// Standardised features of area a.
    pub fn features_of(&self, a: usize) -> &[f64] {
        &self.features[a * self.p..(a + 1) * self.p]
    }

    pub fn target_of(&self, a: usize) -> f64 {
        self.target[a]
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

/// Per region: the number of areas, feature sums and target sum (row of p + 1 sums).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionStats {
    sizes: Vec<usize>,
    sums: Vec<f64>,
    width: usize,
}

impl RegionStats {
    /// Sums over the areas of each region of `labels`.
    pub fn new(problem: &Problem, labels: &[u32]) -> Self {
        let width = problem.p + 1;
        let mut stats = Self {
            sizes: vec![0; problem.regions],
            sums: vec![0.0; problem.regions * width],
            width,
        };
        for (a, &r) in labels.iter().enumerate() {
            stats.add(problem, a, r as usize, 1.0);
        }
        stats
    }

    /// Add (sign 1) or remove (sign -1) area a to or from region r's sums.
    pub fn add(&mut self, problem: &Problem, a: usize, r: usize, sign: f64) {
        let row = &mut self.sums[r * self.width..(r + 1) * self.width];
        for (s, x) in row.iter_mut().zip(problem.features_of(a)) {
            *s += sign * x;
        }
        row[problem.p] += sign * problem.target_of(a);
        if sign > 0.0 {
            self.sizes[r] += 1;
        } else {
            self.sizes[r] -= 1;
        }
    }

    pub fn size(&self, r: usize) -> usize {
        self.sizes[r]
    }

    pub fn row(&self, r: usize) -> &[f64] {
        &self.sums[r * self.width..(r + 1) * self.width]
    }

    /// The two rows and sizes of regions `s` and `t`, to restore after a rejected move.
    pub fn save(&self, s: usize, t: usize) -> SavedRows {
        SavedRows {
            s,
            t,
            rows: [self.row(s).to_vec(), self.row(t).to_vec()],
            sizes: [self.sizes[s], self.sizes[t]],
        }
    }

    pub fn restore(&mut self, saved: &SavedRows) {
        let w = self.width;
        self.sums[saved.s * w..(saved.s + 1) * w].copy_from_slice(&saved.rows[0]);
        self.sums[saved.t * w..(saved.t + 1) * w].copy_from_slice(&saved.rows[1]);
        self.sizes[saved.s] = saved.sizes[0];
        self.sizes[saved.t] = saved.sizes[1];
    }
}

/// Rows of two regions saved before a tentative move.
#[derive(Debug, Clone)]
pub struct SavedRows {
    s: usize,
    t: usize,
    rows: [Vec<f64>; 2],
    sizes: [usize; 2],
}

/// F and its parts for one partition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    pub f: f64,
    /// Sum of the regions' task errors.
    pub task_error: f64,
    pub penalty: f64,
    /// err(Y_j - f(X_j)) per region.
    pub errors: Vec<f64>,
    /// Y_j - f(X_j) per region.
    pub residuals: Vec<f64>,
    /// Mean absolute residual over regions (the training region MAE).
    pub mae: f64,
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
    pub fn new(problem: &Problem) -> Self {
        let q = problem.p + 1;
        Self {
            design: vec![0.0; problem.regions * q],
            response: vec![0.0; problem.regions],
            normal: vec![0.0; q * q],
            rhs: vec![0.0; q],
            coefficients: vec![0.0; q],
        }
    }

    /// Evaluate F for the regions summarised by `stats` into `out`.
    pub fn evaluate(&mut self, problem: &Problem, stats: &RegionStats, out: &mut Evaluation) {
        self.build_design(problem, stats);
        let all = |_: usize| true;
        self.fit(problem, all);
        out.residuals.clear();
        out.errors.clear();
        let q = problem.p + 1;
        let mean_size = problem.mean_size();
        let (mut task_error, mut penalty, mut abs_sum) = (0.0, 0.0, 0.0);
        for j in 0..problem.regions {
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
            penalty += problem.settings.penalty.of_region(stats.size(j), mean_size);
        }
        out.task_error = task_error;
        out.penalty = penalty;
        out.f = task_error + penalty;
        out.mae = abs_sum / problem.regions as f64;
    }

    /// Region MAE cross-validated over regions: regions ordered by their smallest area fall
    /// into `cv_folds` folds in turn; each fold is predicted by the model fitted on the others.
    pub fn cross_validated_mae(
        &mut self,
        problem: &Problem,
        stats: &RegionStats,
        labels: &[u32],
    ) -> f64 {
        self.build_design(problem, stats);
        let folds = region_folds(labels, problem.regions, problem.settings.cv_folds);
        let q = problem.p + 1;
        let mut total = 0.0;
        for fold in 0..problem.settings.cv_folds.max(1) {
            self.fit(problem, |j| folds[j] != fold);
            for j in (0..problem.regions).filter(|&j| folds[j] == fold) {
                let prediction = dot(&self.design[j * q..(j + 1) * q], &self.coefficients);
                total += (self.response[j] - prediction).abs();
            }
        }
        total / problem.regions as f64
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
            self.response[j] = match problem.settings.aggregate {
                TargetAggregate::Mean => row[problem.p] / n,
                TargetAggregate::Sum => row[problem.p],
            };
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
pub fn region_folds(labels: &[u32], regions: usize, folds: usize) -> Vec<usize> {
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
pub fn mean_error(errors: &[f64]) -> f64 {
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    if mean > 0.0 && mean.is_finite() {
        mean
    } else {
        1.0
    }
}
