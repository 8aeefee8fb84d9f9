//! Defaults that converge (`sampler.kind = "auto"`): a study that gives only the grid, the
//! likelihood and the data runs the kind measured best with four chains, and converges with no
//! warning (`--deny-warnings`) on every shipped real grid (32 x 32 and 64 x 64 counts, the
//! hickory labels) and on points with covariates; a study that names its kind keeps it.

mod support;

use std::path::{Path, PathBuf};

use fieldmc::families::FamilySpec;
use support::{floats, ints, table};

fn write_file(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
        .display()
        .to_string()
}

fn strings(df: &polars::prelude::DataFrame, column: &str) -> Vec<String> {
    df.column(column)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect()
}

/// Every job ran 4 chains and converged: every cell's R-hat <= 1.01, bulk ESS >= 400.
fn assert_four_converged_chains(jobs: &polars::prelude::DataFrame) {
    assert!(ints(jobs, "sampler_chains").iter().all(|c| *c == Some(4)));
    for (rhat, ess) in floats(jobs, "cell_rhat_max")
        .into_iter()
        .zip(floats(jobs, "cell_ess_bulk_min"))
    {
        assert!(
            rhat.unwrap() <= 1.01 && ess.unwrap() >= 400.0,
            "{rhat:?} {ess:?}"
        );
    }
}

/// A study of `[model] grid, likelihood` and `[data] source, path` sweeping `grids` (data/
/// files of D x D cells): every job laplace_hmc with 4 chains, converged with no warning.
fn converges_by_default(name: &str, d: usize, grids: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<String> = grids.iter().map(|g| format!("{:?}", data(g))).collect();
    let study = write_file(
        dir.path(),
        &format!("{name}.toml"),
        &format!(
            "[model]\ngrid = {d}\nlikelihood = \"poisson\"\n\
             [data]\nsource = \"csv\"\npath = {}\n\
             [sweep]\n\"data.path\" = [{}]\n",
            paths[0],
            paths.join(", ")
        ),
    );
    let out = dir.path().join(name);
    support::run_without_warnings(&study, &out, 2);
    let jobs = table(&out, "jobs");
    assert_eq!(jobs.height(), grids.len());
    assert!(
        strings(&jobs, "sampler_kind")
            .iter()
            .all(|k| k == "laplace_hmc")
    );
    assert_four_converged_chains(&jobs);
}

#[test]
fn grid_likelihood_and_data_alone_converge_on_every_shipped_count_grid() {
    converges_by_default(
        "counts32",
        32,
        &[
            "lansing_grid32.csv",
            "finpines_grid32.csv",
            "redwood_grid32.csv",
            "japanesepines_grid32.csv",
            "chicago_theft_grid32.csv",
        ],
    );
}

#[test]
fn grid_likelihood_and_data_alone_converge_on_every_shipped_64_grid() {
    converges_by_default(
        "counts64",
        64,
        &[
            "lansing_grid64.csv",
            "finpines_grid64.csv",
            "redwood_grid64.csv",
            "japanesepines_grid64.csv",
        ],
    );
}

/// Points with covariates and nothing else: the bei trees with elevation and slope, the window
/// required for points, the length scale and sampler fieldmc's defaults.
#[test]
fn points_with_covariates_alone_converge() {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(
        dir.path(),
        "bei.toml",
        &format!(
            "[model]\ngrid = 32\nwindow = [[0, 1000], [0, 500]]\nlikelihood = \"poisson\"\n\
             [data]\nsource = \"points\"\npath = {:?}\ncovariates = [\"elev\", \"grad\"]\n\
             covariates_path = {:?}\n",
            data("bei_points.csv"),
            data("bei_covariates_grid32.csv")
        ),
    );
    let out = dir.path().join("bei");
    support::run_without_warnings(&study, &out, 1);
    let jobs = table(&out, "jobs");
    assert!(floats(&jobs, "cell_rhat_max")[0].unwrap() <= 1.01);
    for name in ["elev", "grad"] {
        assert!(floats(&jobs, &format!("coef_{name}_rhat"))[0].unwrap() <= 1.01);
    }
}

#[test]
fn grid_likelihood_and_data_alone_converge_on_the_shipped_label_grid() {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(
        dir.path(),
        "labels.toml",
        &format!(
            "[model]\ngrid = 32\nlikelihood = \"probit\"\n\
             [data]\nsource = \"csv\"\npath = {:?}\n",
            data("lansing_hickory_presence_grid32.csv")
        ),
    );
    let out = dir.path().join("labels");
    support::run_without_warnings(&study, &out, 2);
    let jobs = table(&out, "jobs");
    assert_eq!(strings(&jobs, "sampler_kind"), ["laplace_hmc"]);
    assert!(floats(&jobs, "cell_rhat_max")[0].unwrap() <= 1.01);
}

/// The kind `auto` picks and its budget, as the study resolves them; a named kind is kept, and
/// the budget of an automatic kind gives way to what the study sets.
#[test]
fn auto_picks_laplace_hmc_and_a_named_kind_keeps_its_own_budget() {
    let dir = tempfile::tempdir().unwrap();
    let resolved = |name: &str, extra: &str| -> (String, usize, u64, u64) {
        let study = write_file(dir.path(), name, &format!("[model]\ngrid = 8\n{extra}"));
        let study = fieldmc::plan::load(&study).unwrap();
        let plan = fieldmc::plan::plan(&study);
        let FamilySpec::LatentField(spec) = &plan.jobs[0].spec else {
            panic!("a latent-field study");
        };
        let sampler = &spec.sampler;
        let schedule = sampler.schedule();
        (
            sampler.kind().to_string(),
            sampler.chains(),
            sampler.iterations(),
            schedule.burn_in,
        )
    };
    let auto =
        |kind: &str, chains, iterations, burn_in| (kind.to_string(), chains, iterations, burn_in);
    for likelihood in ["gaussian", "probit", "poisson"] {
        let study = format!("likelihood = \"{likelihood}\"\n");
        assert_eq!(
            resolved("auto.toml", &study),
            auto("laplace_hmc", 4, 2_000, 1_000),
            "{likelihood}"
        );
    }
    let short = "likelihood = \"poisson\"\n[sampler]\nchains = 2\niterations = 300\n";
    assert_eq!(
        resolved("short.toml", short),
        auto("laplace_hmc", 2, 300, 150)
    );
    // A named kind runs with its own budget, the one docs/keys.md's table shows.
    let named = "likelihood = \"poisson\"\n[sampler]\nkind = \"pcn\"\n";
    assert_eq!(resolved("named.toml", named), auto("pcn", 4, 10_000, 5_000));
    for &kind in fieldmc::sampler::SamplerKind::ALL {
        if !kind.is_markov_chain() {
            continue;
        }
        let budget = kind.budget();
        let named = format!("likelihood = \"poisson\"\n[sampler]\nkind = \"{kind}\"\n");
        assert_eq!(
            resolved(&format!("{kind}.toml"), &named),
            auto(
                kind.name(),
                budget.chains,
                budget.iterations,
                budget.burn_in
            ),
            "{kind} named alone"
        );
    }
    // laplace_hmc named runs exactly as auto's choice does.
    let named = "likelihood = \"poisson\"\n[sampler]\nkind = \"laplace_hmc\"\n";
    assert_eq!(
        resolved("laplace_hmc_named.toml", named),
        auto("laplace_hmc", 4, 2_000, 1_000)
    );
    let written = "likelihood = \"probit\"\n[sampler]\nkind = \"auto\"\n";
    assert_eq!(
        resolved("written.toml", written),
        auto("laplace_hmc", 4, 2_000, 1_000)
    );
    let hyper = "variance_prior = \"log-normal(0, 1)\"\n[sampler]\nhyper = \"within-gibbs\"\n";
    assert_eq!(resolved("hyper.toml", hyper).0, "pcn");
}

/// A study that names laplace_hmc or nuts and sets nothing else of the sampler (no chains,
/// iterations or burn-in) runs each kind's own budget and converges on a shipped real grid, with
/// no warning, as `auto` does.
#[test]
fn a_named_laplace_hmc_or_nuts_alone_converges_on_a_shipped_grid() {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(
        dir.path(),
        "named.toml",
        &format!(
            "[model]\ngrid = 32\nlikelihood = \"poisson\"\n\
             [data]\nsource = \"csv\"\npath = {:?}\n\
             [sweep]\n\"sampler.kind\" = [\"laplace_hmc\", \"nuts\"]\n",
            data("redwood_grid32.csv")
        ),
    );
    let out = dir.path().join("named");
    support::run_without_warnings(&study, &out, 2);
    let jobs = table(&out, "jobs");
    assert_eq!(strings(&jobs, "sampler_kind"), ["laplace_hmc", "nuts"]);
    assert_four_converged_chains(&jobs);
}
