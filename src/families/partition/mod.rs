//! The region-partition family: small areas (features, a target, an adjacency graph) grouped
//! into m connected regions so that a task model fitted on region aggregates predicts the
//! regions' targets well. Markov chains sample p(Z) proportional to exp(-F(Z) / T) by flip moves.
//!
//! Floors, in the order a job walks them: [`areas`] (CSV of areas and edges) -> [`graph`]
//! (adjacency, connected pieces) -> [`task`] (region aggregates, the task model, F, the
//! cross-validated MAE) -> [`state`] (a partition and its boundary pairs) -> [`chain`] (the
//! `flip` and `softmax-flip` proposals with exact Hastings ratios, the run of a chain) and
//! [`learned`] (the `learned-flip` heuristic) -> [`baselines`] (administrative, k-means,
//! spectral) -> [`method`] (one method run and scored, what a job computes) ->
//! [`out_of_sample`] (the method run again on k folds of areas with their targets hidden, the
//! held-out areas scored) -> [`family`] (keys to spec, the job's run and rows). [`enumerate`]
//! gives the exact distribution on small graphs for the tests.

pub(crate) mod areas;
pub mod baselines;
pub(crate) mod chain;
pub mod enumerate;
pub(crate) mod family;
pub mod graph;
pub(crate) mod keys;
pub(crate) mod learned;
pub mod method;
pub(crate) mod out_of_sample;
pub(crate) mod report;
pub(crate) mod schema;
pub(crate) mod state;
pub(crate) mod task;

/// The family's word in `model.family`.
pub const NAME: &str = "partition";

pub use areas::{AreaColumns, AreaCsvError, Areas, read_adjacency, read_areas};
pub use chain::{
    Chain, ChainRecord, ChainSettings, FlipKind, MoveCounts, Schedule, ScoredPartition, TracePoint,
    run_chain, score_partition,
};
pub use graph::Adjacency;
pub use out_of_sample::{
    AreaFolds, FoldMethod, FoldStreams, OutOfSampleError, OutOfSampleScore, score_out_of_sample,
};
pub use state::{InvalidFlip, Partition};
pub use task::{
    Crossing, ErrorKind, Evaluation, Evaluator, Problem, RegionStats, SizePenalty, TargetAggregate,
    TaskModelKind, TaskSettings,
};
