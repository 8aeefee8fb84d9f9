//! Every labelled partition of a small graph into k non-empty connected regions, and the exact
//! Boltzmann distribution over them: the reference the chains are tested against.

use super::graph::Adjacency;
use super::task::{Evaluation, Evaluator, Problem, RegionStats};

/// The largest graph [`connected_partitions`] enumerates (k^n labellings are visited).
pub(crate) const MAX_ENUMERATED_AREAS: usize = 16;

/// All labellings of the areas with regions 0..k, each region non-empty and connected.
/// Panics above [`MAX_ENUMERATED_AREAS`] areas.
pub fn connected_partitions(graph: &Adjacency, k: usize) -> Vec<Vec<u32>> {
    let n = graph.len();
    assert!(n <= MAX_ENUMERATED_AREAS, "enumeration is for small graphs");
    let mut labels = vec![0u32; n];
    let mut found = Vec::new();
    loop {
        if graph.is_connected_partition(&labels, k) {
            found.push(labels.clone());
        }
        // next labelling in base k
        let mut i = 0;
        while i < n {
            labels[i] += 1;
            if (labels[i] as usize) < k {
                break;
            }
            labels[i] = 0;
            i += 1;
        }
        if i == n {
            return found;
        }
    }
}

/// exp(-F(Z) / T) / sum, for every partition in `partitions`.
pub fn boltzmann_probabilities(
    problem: &Problem,
    partitions: &[Vec<u32>],
    temperature: f64,
) -> Vec<f64> {
    let mut evaluator = Evaluator::new(problem);
    let mut evaluation = Evaluation::default();
    let f: Vec<f64> = partitions
        .iter()
        .map(|labels| {
            evaluator.evaluate(problem, &RegionStats::new(problem, labels), &mut evaluation);
            evaluation.f
        })
        .collect();
    let low = f.iter().copied().fold(f64::INFINITY, f64::min);
    let weights: Vec<f64> = f.iter().map(|v| (-(v - low) / temperature).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights.into_iter().map(|w| w / total).collect()
}
