//! A gaussian grid CSV with missing cells (values left empty or `NA`, cells left out of the file)
//! against the exact gaussian posterior (`fieldmc::model::exact`), every cell compared, the
//! unobserved ones included: through the library with two Markov kinds (their means and sds in
//! units of their Monte Carlo standard errors), and through the binary with the Laplace kind,
//! which is exact on gaussian data (its means and sds to 1e-9), and whose `fields.parquet` marks
//! the missing cells unobserved.
//!
//! The file: a 4 x 4 grid whose values are a smooth surface plus a fixed wiggle, three values
//! left empty or `NA` and two cells left out; no holdout, so the twelve other cells are observed.
//! The prior: squared-exponential, length scale 0.4 on the unit square, variance 1; noise sd 0.5;
//! the intercept the mean observation (`model.mean = "auto"`).
//!
//! Family-wise false-alarm rate: 2 kinds x 16 cells x (mean, sd) = 64 z-scores, each close to
//! Student's t with 79 degrees of freedom (batch means over 4 chains x 20 batches); a two-sided
//! level of 1e-4 / 64 per z-score is t_79 = 5.194 (`scipy.stats.t.isf(1e-4 / 64 / 2, 79)`), so
//! by Bonferroni a false alarm in at most one run in 10,000. The binary check is deterministic.

mod support;

use std::path::Path;

use fieldmc::families::latent_field::grid_csv::read_grid_csv;
use fieldmc::model::data::{Dataset, GridCells, LogOffsets};
use fieldmc::model::exact::gaussian_posterior;
use fieldmc::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Target,
};
use fieldmc::sampler::{ChainRng, RunOutput, RunRequest, SamplerKind, run_kind};
use fieldmc::streams::{Purpose, stream};
use support::{floats, run_ok, table, write_file};

const D: usize = 4;
const NOISE: f64 = 0.5;
const LENGTH_SCALE: f64 = 0.4;
const SEED: u64 = 29;

/// The cells whose value is empty (`""`) or `NA`, and the cells the file leaves out.
const EMPTY: [usize; 3] = [5, 10, 12];
const LEFT_OUT: [usize; 2] = [3, 14];

/// The threshold on |estimate - exact| / MCSE: t_79 at a two-sided 1e-4 / 64 (module doc).
const LIMIT: f64 = 5.20;

/// The grid CSV: i, j, the cell centre and `value`, cell c = 4 j + i.
fn grid_csv() -> String {
    let mut text = "i,j,x_center,y_center,value\n".to_string();
    for c in (0..D * D).filter(|c| !LEFT_OUT.contains(c)) {
        let (i, j) = (c % D, c / D);
        let (x, y) = (i as f64 / 3.0, j as f64 / 3.0);
        let value = if EMPTY.contains(&c) {
            if c % 2 == 0 {
                "NA".into()
            } else {
                String::new()
            }
        } else {
            format!(
                "{:.4}",
                (2.0 * x).sin() + y * y + 0.3 * ((c * 7 % 5) as f64 - 2.0) / 2.0
            )
        };
        text.push_str(&format!("{i},{j},{x:.6},{y:.6},{value}\n"));
    }
    text
}

fn prior() -> KroneckerPrior {
    KroneckerPrior::new(
        Grid::new(D),
        KernelSpec::squared_exponential(LENGTH_SCALE, 1.0),
    )
    .unwrap()
}

/// The data as a job builds them from the file: every cell with a value observed (no holdout).
fn dataset(dir: &Path) -> Dataset {
    let path = write_file(dir, "grid.csv", &grid_csv());
    let grid = read_grid_csv(&path, "value", (D, D), LikelihoodKind::Gaussian).unwrap();
    let cells = GridCells {
        values: grid.values,
        offsets: LogOffsets::constant(0.0),
    };
    let mut rng = stream(SEED, Purpose::Observations, "missing cells");
    Dataset::from_grid_cells(
        Grid::new(D),
        cells,
        fieldmc::model::data::HoldOut::Share(0.0),
        &mut rng,
    )
    .unwrap()
}

fn run(prior: &KroneckerPrior, data: &Dataset, mean: f64, kind: SamplerKind) -> RunOutput {
    let likelihood = Likelihood::new(
        LikelihoodKind::Gaussian,
        data.observed.values.clone(),
        NOISE,
        0.0,
    );
    let (beta, iterations) = match kind {
        SamplerKind::Nuts => (0.2, 20_000),
        _ => (0.2, 100_000),
    };
    let spec = support::four_chains(kind, beta, iterations)
        .check()
        .unwrap();
    let target = Target {
        prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&data.observed.cells),
        mean,
    };
    let request = RunRequest::new(target, &spec);
    let rngs = (0..spec.chains())
        .map(|c| ChainRng::keyed(SEED, &format!("missing cells;{kind};chain={c}")))
        .collect();
    run_kind(&spec, &request, rngs)
}

#[test]
fn markov_kinds_match_the_exact_posterior_on_every_cell_of_a_grid_with_missing_cells() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let unobserved: Vec<usize> = EMPTY.iter().chain(&LEFT_OUT).copied().collect();
    assert_eq!(data.observed.cells.len(), D * D - unobserved.len());
    assert!(unobserved.iter().all(|c| !data.observed.cells.contains(c)));
    let values = &data.observed.values;
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let prior = prior();
    let exact = gaussian_posterior(&prior, mean, &data.observed, NOISE).unwrap();
    let mut report = Vec::new();
    let mut worst: f64 = 0.0;
    for kind in [SamplerKind::Elliptical, SamplerKind::Nuts] {
        let out = run(&prior, &data, mean, kind);
        let mcse = out.post_mean_mcse.as_ref().unwrap();
        let mcse_sd = out.post_sd_mcse.as_ref().unwrap();
        for c in 0..D * D {
            let z_mean = (out.post_mean[c] - exact.mean[c]).abs() / mcse[c];
            let z_sd = (out.post_sd[c] - exact.sd[c]).abs() / mcse_sd[c];
            if unobserved.contains(&c) {
                report.push(format!(
                    "{kind} unobserved cell {c}: mean {:.4} (exact {:.4}, z {z_mean:.2}), sd \
                     {:.4} (exact {:.4}, z {z_sd:.2})",
                    out.post_mean[c], exact.mean[c], out.post_sd[c], exact.sd[c]
                ));
            }
            worst = worst.max(z_mean).max(z_sd);
        }
        report.push(format!("{kind}: largest z {worst:.2}"));
    }
    eprintln!("{}", report.join("\n"));
    assert!(worst < LIMIT, "{}", report.join("\n"));
    // The check has power at the unobserved cells: the data move them well away from the
    // prior (mean `mean`, sd 1), so a kind that ignored them or the data would fail.
    for &c in &unobserved {
        assert!(exact.sd[c] < 0.9, "cell {c}: posterior sd {}", exact.sd[c]);
    }
}

/// Through the binary: the Laplace kind is exact on gaussian data, at the unobserved cells too,
/// and `fields.parquet` marks them unobserved, with no observation.
#[test]
fn the_binary_predicts_the_missing_cells_of_a_gaussian_grid_exactly() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "grid.csv", &grid_csv());
    let study = write_file(
        dir.path(),
        "study.toml",
        &format!(
            "[model]\ngrid = {D}\nlength_scale = {LENGTH_SCALE}\nlikelihood = \"gaussian\"\n\
             [data]\nsource = \"csv\"\npath = \"grid.csv\"\nholdout = 0.0\nnoise_sd = {NOISE}\n\
             [sampler]\nkind = \"laplace\"\n"
        ),
    );
    let out = dir.path().join("out");
    run_ok(&study, &out, 1);
    let fields = table(&out, "fields");
    let column = |name: &str| floats(&fields, name);
    let (post_mean, post_sd) = (column("post_mean"), column("post_sd"));
    let (exact_mean, exact_sd) = (column("exact_mean"), column("exact_sd"));
    let observation = column("observation");
    let observed: Vec<bool> = fields
        .column("observed")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    for c in 0..D * D {
        let missing = EMPTY.contains(&c) || LEFT_OUT.contains(&c);
        assert_eq!(observed[c], !missing, "cell {c}");
        assert_eq!(observation[c].is_none(), missing, "cell {c}");
        let (mean, exact) = (post_mean[c].unwrap(), exact_mean[c].unwrap());
        let (sd, exact_sd) = (post_sd[c].unwrap(), exact_sd[c].unwrap());
        assert!(
            (mean - exact).abs() < 1e-9 && (sd - exact_sd).abs() < 1e-9,
            "cell {c}: laplace ({mean}, {sd}) vs exact ({exact}, {exact_sd})"
        );
    }
}
