//! Proposals for the Metropolis-Hastings hyperparameter updates, on the unconstrained
//! coordinates z (log length scale, log variance, mean), adapted during burn-in only:
//!
//! - [`HyperProposalKind::RandomWalk`]: z' = z + s n, n ~ N(0, I), with log s moved by
//!   Robbins-Monro towards the target acceptance rate.
//! - [`HyperProposalKind::Adaptive`] (Haario, Saksman & Tamminen 2001, with the global scale of
//!   Andrieu & Thoms 2008): z' = z + s R n, R R^T the covariance of the burn-in history (plus
//!   1e-6 I) once [`ADAPT_AFTER`] iterations are in, s starting at 2.38 / sqrt(d).
//! - [`HyperProposalKind::KernelAdaptive`] (Sejdinovic, Strathmann, Lomeli Garcia, Andrieu &
//!   Gretton 2014): z' ~ N(z, gamma^2 I + s^2 M_z H M_z^T), M_z = 2 [grad_x k(x, z_i)] at
//!   x = z over a subsample z_1..z_n of the history (a gaussian kernel k, bandwidth the median
//!   distance), H the centring matrix. The covariance depends on z, so the ratio carries
//!   log q(z | z') - log q(z' | z). A burn-in iteration adds its point to the subsample with
//!   probability p_t = min(1, 20 / sqrt(t)), which goes to 0; after burn-in nothing changes.
//!
//! After burn-in every proposal is a fixed Markov kernel, so the kept chain is an ordinary
//! Metropolis-Hastings chain.

use faer::{Mat, Side};

use super::settings::HyperProposalKind;
use crate::sampler::protocol::ChainRng;

/// Iterations of burn-in before the history shapes the proposal.
pub(crate) const ADAPT_AFTER: u64 = 100;
/// Subsample points the kernel-adaptive proposal keeps.
pub(crate) const KERNEL_POINTS: usize = 100;
/// The kernel-adaptive proposal's isotropic part, gamma.
const KERNEL_GAMMA: f64 = 0.05;
/// Starting scale of the random walk on every unconstrained coordinate.
const INITIAL_SCALE: f64 = 0.3;

/// A proposal and its adaptation state.
#[derive(Debug, Clone)]
pub struct Proposal {
    kind: HyperProposalKind,
    dim: usize,
    log_scale: f64,
    target_acceptance: f64,
    /// Burn-in points, row after row (adaptive: all; kernel-adaptive: the subsample).
    history: Vec<f64>,
    /// The Cholesky factor of the learned covariance (adaptive).
    root: Option<Mat<f64>>,
    /// The kernel's bandwidth (kernel-adaptive), once the subsample has two points.
    bandwidth: Option<f64>,
    adapted_scale: bool,
}

impl Proposal {
    pub(crate) fn new(kind: HyperProposalKind, dim: usize) -> Self {
        Self {
            kind,
            dim,
            log_scale: INITIAL_SCALE.ln(),
            // Roberts & Rosenthal: 0.44 in one dimension, falling to 0.234.
            target_acceptance: if dim <= 1 { 0.44 } else { 0.3 },
            history: Vec::new(),
            root: None,
            bandwidth: None,
            adapted_scale: false,
        }
    }

    /// Start from a known covariance of the target (row-major d x d, INLA's (-H)^-1 at the
    /// mode): the adaptive proposal steps by its factor times 2.38 / sqrt(d) until the burn-in
    /// history replaces it, the random walk by 2.38 / sqrt(d) times its root mean variance; the
    /// kernel-adaptive proposal learns its shape from the history alone and keeps its start.
    pub(crate) fn seeded(mut self, covariance: &[f64]) -> Self {
        let d = self.dim;
        let optimal = (2.38 / (d as f64).sqrt()).ln();
        match self.kind {
            HyperProposalKind::Adaptive => {
                let matrix = Mat::from_fn(d, d, |i, j| covariance[i * d + j]);
                if let Some(root) = cholesky(&matrix) {
                    self.root = Some(root);
                    self.log_scale = optimal;
                    self.adapted_scale = true;
                }
            }
            HyperProposalKind::RandomWalk => {
                let mean_variance = (0..d).map(|i| covariance[i * d + i]).sum::<f64>() / d as f64;
                if mean_variance > 0.0 && mean_variance.is_finite() {
                    self.log_scale = optimal + 0.5 * mean_variance.ln();
                }
            }
            HyperProposalKind::KernelAdaptive => {}
        }
        self
    }

    /// The current global scale s.
    pub(crate) fn scale(&self) -> f64 {
        self.log_scale.exp()
    }

    /// A proposal from `z`, with log q(z | z') - log q(z' | z).
    pub(crate) fn propose(&self, z: &[f64], rng: &mut ChainRng) -> (Vec<f64>, f64) {
        let mut noise = vec![0.0; self.dim];
        rng.normals(&mut noise);
        let s = self.scale();
        match (self.kind, &self.root, self.bandwidth) {
            (HyperProposalKind::Adaptive, Some(root), _) => {
                let step = lower_times(root, &noise);
                (z.iter().zip(&step).map(|(a, b)| a + s * b).collect(), 0.0)
            }
            (HyperProposalKind::KernelAdaptive, _, Some(_)) => {
                let forward = self.kernel_covariance(z);
                let Some(root) = cholesky(&forward) else {
                    return (random_walk(z, s, &noise), 0.0);
                };
                let step = lower_times(&root, &noise);
                let proposed: Vec<f64> = z.iter().zip(&step).map(|(a, b)| a + b).collect();
                let backward = self.kernel_covariance(&proposed);
                let correction = match cholesky(&backward) {
                    Some(back_root) => {
                        log_gaussian(z, &proposed, &back_root) - log_gaussian(&proposed, z, &root)
                    }
                    None => f64::NEG_INFINITY,
                };
                (proposed, correction)
            }
            _ => (random_walk(z, s, &noise), 0.0),
        }
    }

    /// Learn from burn-in iteration `iteration` (0-based), which ended at `z` after a proposal
    /// accepted with probability `acceptance`. Does nothing after burn-in.
    pub(crate) fn adapt(
        &mut self,
        iteration: u64,
        burn_in: u64,
        z: &[f64],
        acceptance: f64,
        rng: &mut ChainRng,
    ) {
        if iteration >= burn_in {
            return;
        }
        let t = (iteration + 1) as f64;
        self.log_scale += (acceptance - self.target_acceptance) / t.powf(0.6);
        self.log_scale = self.log_scale.clamp(-12.0, 3.0);
        match self.kind {
            HyperProposalKind::RandomWalk => {}
            HyperProposalKind::Adaptive => {
                self.history.extend_from_slice(z);
                if iteration + 1 >= ADAPT_AFTER && (iteration + 1).is_multiple_of(10) {
                    self.root = cholesky(&self.history_covariance());
                    if !self.adapted_scale && self.root.is_some() {
                        self.log_scale = (2.38 / (self.dim as f64).sqrt()).ln();
                        self.adapted_scale = true;
                    }
                }
            }
            HyperProposalKind::KernelAdaptive => {
                // The uniform is drawn every burn-in iteration, so the stream does not depend
                // on what it decides.
                let keep = rng.uniform() < (20.0 / t.sqrt()).min(1.0);
                if keep {
                    let points = self.history.len() / self.dim.max(1);
                    if points < KERNEL_POINTS {
                        self.history.extend_from_slice(z);
                    } else {
                        let slot = (rng.uniform() * KERNEL_POINTS as f64) as usize;
                        let slot = slot.min(KERNEL_POINTS - 1);
                        self.history[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(z);
                    }
                }
                if iteration + 1 >= ADAPT_AFTER {
                    self.bandwidth = median_distance(&self.history, self.dim);
                    if !self.adapted_scale && self.bandwidth.is_some() {
                        self.log_scale = 0.0;
                        self.adapted_scale = true;
                    }
                }
            }
        }
    }

    fn history_covariance(&self) -> Mat<f64> {
        let d = self.dim;
        let n = self.history.len() / d.max(1);
        let mut mean = vec![0.0; d];
        for row in self.history.chunks_exact(d) {
            for (m, x) in mean.iter_mut().zip(row) {
                *m += x / n as f64;
            }
        }
        let mut cov = Mat::<f64>::zeros(d, d);
        for row in self.history.chunks_exact(d) {
            for i in 0..d {
                for j in 0..d {
                    cov[(i, j)] += (row[i] - mean[i]) * (row[j] - mean[j]) / (n as f64 - 1.0);
                }
            }
        }
        for i in 0..d {
            cov[(i, i)] += 1e-6;
        }
        cov
    }

    /// gamma^2 I + s^2 M_z H M_z^T at `z`.
    fn kernel_covariance(&self, z: &[f64]) -> Mat<f64> {
        let d = self.dim;
        let sigma = self.bandwidth.unwrap_or(1.0);
        let points: Vec<&[f64]> = self.history.chunks_exact(d).collect();
        let n = points.len();
        // M: d x n, column i = 2 grad_x k(x, z_i) at x = z = 2 k (z_i - z) / sigma^2.
        let mut m = Mat::<f64>::zeros(d, n);
        for (i, p) in points.iter().enumerate() {
            let distance2: f64 = p.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum();
            let k = (-distance2 / (2.0 * sigma * sigma)).exp();
            for r in 0..d {
                m[(r, i)] = 2.0 * k * (p[r] - z[r]) / (sigma * sigma);
            }
        }
        // M H M^T = M M^T - (M 1)(M 1)^T / n.
        let row_sums: Vec<f64> = (0..d).map(|r| (0..n).map(|i| m[(r, i)]).sum()).collect();
        let s2 = self.scale().powi(2);
        let mut cov = Mat::<f64>::zeros(d, d);
        for a in 0..d {
            for b in 0..d {
                let mm: f64 = (0..n).map(|i| m[(a, i)] * m[(b, i)]).sum();
                cov[(a, b)] = s2 * (mm - row_sums[a] * row_sums[b] / n.max(1) as f64);
            }
            cov[(a, a)] += KERNEL_GAMMA * KERNEL_GAMMA;
        }
        cov
    }
}

fn random_walk(z: &[f64], scale: f64, noise: &[f64]) -> Vec<f64> {
    z.iter().zip(noise).map(|(a, n)| a + scale * n).collect()
}

/// The lower Cholesky factor of a small symmetric matrix, if it is positive definite.
fn cholesky(matrix: &Mat<f64>) -> Option<Mat<f64>> {
    let factor = matrix.llt(Side::Lower).ok()?;
    Some(factor.L().to_owned())
}

/// L x for lower-triangular L.
fn lower_times(l: &Mat<f64>, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| (0..=i).map(|j| l[(i, j)] * x[j]).sum())
        .collect()
}

/// log N(x; mean, L L^T) up to the constant shared by every dimension-d gaussian.
fn log_gaussian(x: &[f64], mean: &[f64], l: &Mat<f64>) -> f64 {
    let d = x.len();
    let mut y = vec![0.0; d];
    for i in 0..d {
        let partial: f64 = (0..i).map(|j| l[(i, j)] * y[j]).sum();
        y[i] = (x[i] - mean[i] - partial) / l[(i, i)];
    }
    let log_det: f64 = (0..d).map(|i| l[(i, i)].ln()).sum();
    -0.5 * y.iter().map(|v| v * v).sum::<f64>() - log_det
}

/// The median pairwise distance of the points, if there are two and it is positive.
fn median_distance(history: &[f64], dim: usize) -> Option<f64> {
    let points: Vec<&[f64]> = history.chunks_exact(dim.max(1)).collect();
    let mut distances = Vec::new();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            let d2: f64 = a.iter().zip(b.iter()).map(|(x, y)| (x - y) * (x - y)).sum();
            distances.push(d2.sqrt());
        }
    }
    if distances.is_empty() {
        return None;
    }
    distances.sort_by(f64::total_cmp);
    let median = distances[distances.len() / 2];
    (median > 0.0).then_some(median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng() -> ChainRng {
        ChainRng::keyed(5, "proposal")
    }

    /// Every proposal, run as Metropolis-Hastings on a correlated 2-D gaussian with its burn-in
    /// adaptation, keeps the target: the kept mean of each coordinate within 5 batch-means
    /// standard errors of the truth (6 t-scores on 49 degrees of freedom, P(|t| > 5) = 7.9e-6:
    /// Bonferroni false-alarm rate 4.7e-5 per run).
    #[test]
    fn each_proposal_keeps_a_gaussian_target() {
        let log_target = |z: &[f64]| {
            // Covariance [[1, 0.8], [0.8, 1]] around (1, -2).
            let (a, b) = (z[0] - 1.0, z[1] + 2.0);
            -0.5 * (a * a - 1.6 * a * b + b * b) / (1.0 - 0.64)
        };
        for kind in HyperProposalKind::ALL.iter().copied() {
            let mut proposal = Proposal::new(kind, 2);
            let mut rng = rng();
            let mut z = vec![0.0, 0.0];
            let (burn_in, kept) = (2_000u64, 200_000u64);
            let mut draws = Vec::with_capacity(kept as usize);
            for t in 0..burn_in + kept {
                let (candidate, correction) = proposal.propose(&z, &mut rng);
                let log_ratio = log_target(&candidate) - log_target(&z) + correction;
                let accepted = rng.accept(log_ratio);
                if accepted {
                    z = candidate;
                }
                let p = crate::sampler::protocol::acceptance_probability(log_ratio);
                proposal.adapt(t, burn_in, &z, p, &mut rng);
                if t >= burn_in {
                    draws.push(z.clone());
                }
            }
            for (coordinate, truth) in [(0, 1.0), (1, -2.0)] {
                let series: Vec<f64> = draws.iter().map(|d| d[coordinate]).collect();
                let (mean, se) = batch_means(&series, 50);
                assert!(
                    ((mean - truth) / se).abs() < 5.0,
                    "{kind}: coordinate {coordinate}: mean {mean} (se {se}), truth {truth}"
                );
            }
        }
    }

    fn batch_means(series: &[f64], batches: usize) -> (f64, f64) {
        let len = series.len() / batches;
        let means: Vec<f64> = series
            .chunks_exact(len)
            .map(|c| c.iter().sum::<f64>() / len as f64)
            .collect();
        let mean = means.iter().sum::<f64>() / means.len() as f64;
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (means.len() - 1) as f64;
        (mean, (var / means.len() as f64).sqrt())
    }
}
