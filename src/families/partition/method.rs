//! One method of a partition study, run and scored: a baseline (administrative, k-means,
//! spectral) or a chain of one flip kind started from the administrative partition. This is
//! what a job of the family computes; its random streams come from the caller (derived from
//! the study seed and the job's key).

use std::time::Instant;

use super::areas::Areas;
use super::baselines::{BaselineError, kmeans_partition, spectral_partition};
use super::chain::{
    ChainSettings, FlipKind, MoveCounts, ScoredPartition, TracePoint, run_chain, score_partition,
};
use super::task::Problem;
use crate::streams::StreamRng;

crate::closed_names! {
    /// What a partition job runs (`sampler.kind`): a chain of one flip kind from the
    /// administrative start, or a baseline that does not sample.
    pub enum PartitionKind {
        /// Chain: a uniform boundary pair (naive).
        Flip = "flip",
        /// Chain: a region by the softmax of its error, then one of its boundary pairs.
        SoftmaxFlip = "softmax-flip",
        /// Chain: the best of sampled candidates under an online-trained Q-function (a search
        /// heuristic, not reversible).
        LearnedFlip = "learned-flip",
        /// Baseline: administrative regions split into connected pieces (the chains' start).
        Admin = "admin",
        /// Baseline: k-means on standardised features and coordinates.
        KMeans = "kmeans",
        /// Baseline: spectral clustering of the feature-weighted adjacency graph.
        Spectral = "spectral",
    }
}

impl PartitionKind {
    /// The flip kind of a chain; None for a baseline.
    pub(crate) fn flip(self) -> Option<FlipKind> {
        match self {
            PartitionKind::Flip => Some(FlipKind::Flip),
            PartitionKind::SoftmaxFlip => Some(FlipKind::SoftmaxFlip),
            PartitionKind::LearnedFlip => Some(FlipKind::LearnedFlip),
            PartitionKind::Admin | PartitionKind::KMeans | PartitionKind::Spectral => None,
        }
    }
}

/// What one method gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MethodOutcome {
    pub(crate) kind: PartitionKind,
    /// The final partition (baselines: the partition).
    pub(crate) last: ScoredPartition,
    /// The partition of smallest F visited (baselines: the partition).
    pub(crate) best: ScoredPartition,
    /// Chains only.
    pub(crate) counts: Option<MoveCounts>,
    pub(crate) trace: Vec<TracePoint>,
    /// Regions of `best` that are not connected (k-means and spectral clusters may not be).
    pub(crate) disconnected_regions: usize,
    pub(crate) seconds: f64,
}

/// Run `kind` on `problem` from the administrative start `admin`.
pub(crate) fn run_method(
    problem: &Problem,
    areas: &Areas,
    admin: &[u32],
    kind: PartitionKind,
    chain: &ChainSettings,
    proposals: &mut StreamRng,
    acceptance: &mut StreamRng,
) -> Result<MethodOutcome, BaselineError> {
    let clock = Instant::now();
    let (last, best, counts, trace) = match kind.flip() {
        None => {
            let labels = match kind {
                PartitionKind::KMeans => {
                    kmeans_partition(problem, areas.coordinates.as_deref(), 1.0, proposals)?
                }
                PartitionKind::Spectral => spectral_partition(problem, proposals)?,
                _ => admin.to_vec(),
            };
            let scored = score_partition(problem, &labels);
            (scored.clone(), scored, None, Vec::new())
        }
        Some(flip) => {
            let settings = ChainSettings {
                kind: flip,
                ..chain.clone()
            };
            let record = run_chain(problem, admin, &settings, proposals, acceptance);
            (record.last, record.best, Some(record.counts), record.trace)
        }
    };
    let disconnected_regions = disconnected_regions(problem, &best.labels);
    Ok(MethodOutcome {
        kind,
        last,
        best,
        counts,
        trace,
        disconnected_regions,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Regions of `labels` in more than one connected piece.
pub(crate) fn disconnected_regions(problem: &Problem, labels: &[u32]) -> usize {
    let mut pieces = vec![0usize; problem.regions];
    for component in problem.graph.components_by_label(labels) {
        pieces[labels[component[0] as usize] as usize] += 1;
    }
    pieces.iter().filter(|&&p| p > 1).count()
}
