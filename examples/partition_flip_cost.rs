//! What one flip costs as the number of areas grows (docs/partitions.md, "Cost of a flip").
//!
//! Lattices of L x L areas (rook adjacency, 3 features, a target), cut into square regions:
//! first a fixed 4 x 4 grid of 16 regions (a region holds n / 16 areas), then regions of a fixed
//! 8 x 8 areas (m = n / 64 regions). Per size: microseconds per `flip` step
//! (propose, check that the source region stays connected, update the region sums, refit the
//! task model on the 16 regions, accept or undo), against one evaluation from scratch (the sums
//! of every region and a connectivity check of the whole partition: O(n)).
//!
//!     cargo run --release --example partition_flip_cost

use std::time::Instant;

use fieldmc::families::partition::*;
use fieldmc::streams::{Purpose, stream};
use rand::RngExt;

fn main() {
    println!(
        "| L | areas n | regions m | areas per region | us per flip step | us per from-scratch evaluation |"
    );
    println!("|---|---|---|---|---|---|");
    for side in [32usize, 64, 128, 256, 512] {
        row(side, 4);
    }
    for side in [32usize, 64, 128, 256] {
        row(side, side / 8);
    }
}

/// One line: an L x L lattice cut into `per_axis` x `per_axis` square regions.
fn row(side: usize, per_axis: usize) {
    let (flip_us, scratch_us) = measure(side, per_axis);
    let (n, m) = (side * side, per_axis * per_axis);
    println!(
        "| {side} | {n} | {m} | {} | {flip_us:.2} | {scratch_us:.0} |",
        n / m
    );
}

fn measure(side: usize, per_axis: usize) -> (f64, f64) {
    let n = side * side;
    let mut rng = stream(7, Purpose::Truth, &format!("flip-cost;side={side}"));
    let features: Vec<f64> = (0..3 * n).map(|_| rng.random::<f64>()).collect();
    let target: Vec<f64> = (0..n)
        .map(|a| features[3 * a] + 2.0 * features[3 * a + 1] + rng.random::<f64>())
        .collect();
    let block = side / per_axis;
    let regions = per_axis * per_axis;
    let labels: Vec<u32> = (0..n)
        .map(|a| ((a / side) / block * per_axis + (a % side) / block) as u32)
        .collect();
    let problem = Problem::new(
        Adjacency::lattice(side, side),
        features,
        3,
        target,
        regions,
        TaskSettings::default(),
    );
    let steps = 200_000;
    let settings = ChainSettings {
        kind: FlipKind::Flip,
        iterations: steps,
        temperature: Schedule::fixed(1.0),
        ..ChainSettings::default()
    };
    let mut chain = Chain::new(&problem, &labels, settings);
    let mut proposals = stream(7, Purpose::Chain, "flip-cost");
    let mut acceptance = stream(7, Purpose::Acceptance, "flip-cost");
    for k in 0..10_000 {
        chain.step(k, &mut proposals, &mut acceptance);
    }
    let clock = Instant::now();
    for k in 0..steps {
        chain.step(k, &mut proposals, &mut acceptance);
    }
    let flip_us = clock.elapsed().as_secs_f64() * 1e6 / steps as f64;
    let repeats = 20;
    let clock = Instant::now();
    for _ in 0..repeats {
        let scored = score_partition(&problem, chain.labels());
        assert!(
            problem
                .graph
                .is_connected_partition(&scored.labels, regions)
        );
    }
    let scratch_us = clock.elapsed().as_secs_f64() * 1e6 / repeats as f64;
    (flip_us, scratch_us)
}
