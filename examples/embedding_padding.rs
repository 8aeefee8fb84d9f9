//! The torus each non-separable kernel's circulant embedding needs, for a few grids and length
//! scales: `cargo run --release --example embedding_padding`. The table in
//! `docs/benchmarks.md` ("Circulant embedding: padding") comes from this program.

use std::time::Instant;

use fieldmc::model::Grid;
use fieldmc::model::prior::{CirculantPrior, Prior};
use fieldmc::model::spec::{KernelKind, KernelSpec};

fn main() {
    println!(
        "| kernel | grid | length scale | torus | latent / N | most negative eigenvalue clipped | largest eigenvalue | covariance change bound | setup |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let cases = [
        (Grid::new(64), 1.0 / 33.0),
        (Grid::new(64), 0.1),
        (Grid::new(64), 0.3),
        (Grid::new(64), 1.0),
        (Grid::rectangular(64, 32), 0.3),
        (Grid::new(256), 0.1),
        (Grid::new(256), 0.3),
    ];
    for family in [
        KernelKind::Exponential,
        KernelKind::Matern32,
        KernelKind::Matern52,
    ] {
        for (grid, length_scale) in cases {
            let kernel = KernelSpec {
                kind: family,
                length_scale,
                variance: 1.0,
                length_scale_y: None,
            };
            let started = Instant::now();
            match CirculantPrior::new(grid, kernel) {
                Ok(prior) => {
                    let e = prior.embedding();
                    println!(
                        "| {family} | {grid} | {length_scale:.4} | {} x {} | {:.1} | {:.1e} | {:.1e} | {:.1e} | {:.2} s |",
                        e.torus_x,
                        e.torus_y,
                        prior.latent_dim() as f64 / grid.cells() as f64,
                        e.most_negative_eigenvalue,
                        e.largest_eigenvalue,
                        e.covariance_change,
                        started.elapsed().as_secs_f64()
                    );
                }
                Err(error) => {
                    println!("| {family} | {grid} | {length_scale:.4} | refused: {error} |")
                }
            }
        }
    }
}
