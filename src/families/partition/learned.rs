//! The learned flip policy: a linear Q-function of cheap flip features that predicts the change
//! of F a flip causes (in units of the mean region error), trained online by normalised
//! least-mean-squares on every evaluated flip. Each step draws `candidates` boundary pairs
//! uniformly, drops the invalid ones, and takes the one with the smallest predicted change (or,
//! with probability `exploration`, a random valid one). The chain then applies the Metropolis
//! rule without a Hastings correction: a search heuristic, not a reversible proposal.
//!
//! Features of moving area a from s to t (no refit needed, O(p)): a bias; the errors of s and t;
//! the change of each region's target aggregate signed by its residual (a first-order guess at
//! the change of its absolute error); the squared feature distances of a to both regions'
//! means; the inverse sizes; and the exact change of the size penalty.

use rand::RngExt;

use super::state::Partition;
use super::task::mean_error;
use super::task::{Crossing, Evaluation, Problem, RegionStats};
use crate::streams::StreamRng;

const FEATURES: usize = 9;

/// The Q-function's weights and the features of the flip last chosen.
#[derive(Debug, Clone)]
pub(crate) struct FlipLearner {
    weights: [f64; FEATURES],
    chosen: [f64; FEATURES],
}

impl Default for FlipLearner {
    fn default() -> Self {
        Self::new()
    }
}

impl FlipLearner {
    pub(crate) fn new() -> Self {
        Self {
            weights: [0.0; FEATURES],
            chosen: [0.0; FEATURES],
        }
    }

    #[cfg(test)]
    pub(crate) fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The flip (area, target region) to try, or None when no sampled candidate is valid.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn choose(
        &mut self,
        problem: &Problem,
        partition: &mut Partition,
        stats: &RegionStats,
        current: &Evaluation,
        candidates: usize,
        exploration: f64,
        rng: &mut StreamRng,
    ) -> Option<(usize, u32)> {
        let total = partition.pair_count();
        if total == 0 {
            return None;
        }
        let explore = rng.random::<f64>() < exploration;
        let mut valid: Vec<((usize, u32), [f64; FEATURES])> = Vec::with_capacity(candidates);
        for _ in 0..candidates.max(1) {
            let (a, t) = partition.pair_at(rng.random_range(0..total));
            if partition.check_flip(&problem.graph, a as usize).is_err() {
                continue;
            }
            let phi = flip_features(problem, partition, stats, current, a as usize, t);
            valid.push(((a as usize, t), phi));
        }
        if valid.is_empty() {
            return None;
        }
        let pick = if explore {
            rng.random_range(0..valid.len())
        } else {
            let scores: Vec<f64> = valid.iter().map(|(_, phi)| self.predict(phi)).collect();
            (0..valid.len())
                .min_by(|&i, &j| scores[i].total_cmp(&scores[j]))
                .expect("candidates are not empty")
        };
        self.chosen = valid[pick].1;
        Some(valid[pick].0)
    }

    fn predict(&self, phi: &[f64; FEATURES]) -> f64 {
        self.weights.iter().zip(phi).map(|(w, x)| w * x).sum()
    }

    /// Update on the chosen flip's observed change of F (in mean-error units).
    pub(crate) fn learn(&mut self, observed: f64, rate: f64) {
        let phi = self.chosen;
        let error = self.predict(&phi) - observed.clamp(-100.0, 100.0);
        let norm = 1.0 + phi.iter().map(|x| x * x).sum::<f64>();
        for (w, x) in self.weights.iter_mut().zip(phi) {
            *w -= rate * error * x / norm;
        }
    }
}

/// The features of moving a from its region s into t (see the module doc).
fn flip_features(
    problem: &Problem,
    partition: &Partition,
    stats: &RegionStats,
    current: &Evaluation,
    a: usize,
    t: u32,
) -> [f64; FEATURES] {
    let s = partition.region_of(a) as usize;
    let t = t as usize;
    let p = problem.feature_count();
    let scale = mean_error(&current.errors);
    let (ns, nt) = (stats.size(s) as f64, stats.size(t) as f64);
    let dys = stats.target_change(problem, a, s, Crossing::Leaves);
    let dyt = stats.target_change(problem, a, t, Crossing::Joins);
    let x = problem.features_of(a);
    let distance = |row: &[f64], n: f64| {
        x.iter()
            .zip(row)
            .map(|(xa, sum)| (xa - sum / n).powi(2))
            .sum::<f64>()
            / p.max(1) as f64
    };
    let mean_size = problem.area_count() as f64 / problem.regions as f64;
    let penalty = &problem.settings.penalty;
    let penalty_change = penalty.of_region(stats.size(s) - 1, mean_size)
        + penalty.of_region(stats.size(t) + 1, mean_size)
        - penalty.of_region(stats.size(s), mean_size)
        - penalty.of_region(stats.size(t), mean_size);
    [
        1.0,
        current.errors[s] / scale,
        current.errors[t] / scale,
        current.residuals[s].signum() * dys / scale,
        current.residuals[t].signum() * dyt / scale,
        distance(stats.row(s), ns),
        distance(stats.row(t), nt),
        1.0 / ns + 1.0 / nt,
        penalty_change / scale,
    ]
}
