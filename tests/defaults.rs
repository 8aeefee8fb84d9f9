//! Defaults that converge (`sampler.kind = "auto"`): a study that gives only the grid, the
//! likelihood and the data runs the kind measured best for its likelihood with four chains, and
//! converges on every shipped real grid with no warning (`--deny-warnings`); a study that names
//! its kind keeps it.

mod support;

use std::path::{Path, PathBuf};

use support::{floats, ints, table, text};

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

/// `fieldmc run --deny-warnings` on `study`: succeeds, or the test fails with stderr.
fn run_without_warnings(study: &Path, out: &Path) {
    let output = support::fieldmc()
        .args([
            "run",
            "--quiet",
            "--no-report",
            "--deny-warnings",
            "--threads",
            "2",
        ])
        .arg(study)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{}:\n{stderr}", study.display());
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

/// The fields of a CSV line, a quoted field (`"normal(0, 1)"`) kept whole, its quotes removed.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn grid_likelihood_and_data_alone_converge_on_every_shipped_count_grid() {
    let dir = tempfile::tempdir().unwrap();
    let grids = [
        "lansing_grid32.csv",
        "finpines_grid32.csv",
        "redwood_grid32.csv",
        "japanesepines_grid32.csv",
        "chicago_theft_grid32.csv",
    ];
    let paths: Vec<String> = grids.iter().map(|g| format!("{:?}", data(g))).collect();
    let study = write_file(
        dir.path(),
        "counts.toml",
        &format!(
            "[model]\ngrid = 32\nlikelihood = \"poisson\"\n\
             [data]\nsource = \"csv\"\npath = {}\n\
             [sweep]\n\"data.path\" = [{}]\n",
            paths[0],
            paths.join(", ")
        ),
    );
    let out = dir.path().join("counts");
    run_without_warnings(&study, &out);
    let jobs = table(&out, "jobs");
    assert_eq!(jobs.height(), grids.len());
    assert!(
        strings(&jobs, "sampler_kind")
            .iter()
            .all(|k| k == "laplace_hmc")
    );
    assert!(ints(&jobs, "sampler_chains").iter().all(|c| *c == Some(4)));
    for (rhat, ess) in floats(&jobs, "cell_rhat_max")
        .into_iter()
        .zip(floats(&jobs, "cell_ess_bulk_min"))
    {
        assert!(
            rhat.unwrap() <= 1.01 && ess.unwrap() >= 400.0,
            "{rhat:?} {ess:?}"
        );
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
    run_without_warnings(&study, &out);
    let jobs = table(&out, "jobs");
    assert_eq!(strings(&jobs, "sampler_kind"), ["laplace_hmc"]);
    assert!(floats(&jobs, "cell_rhat_max")[0].unwrap() <= 1.01);
}

/// The kind `auto` picks, as `fieldmc plan` shows it; a named kind is kept, and the budget of an
/// automatic kind gives way to what the study sets.
#[test]
fn auto_picks_by_likelihood_and_a_named_kind_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |name: &str, extra: &str| -> String {
        let study = write_file(dir.path(), name, &format!("[model]\ngrid = 8\n{extra}"));
        let output = support::fieldmc()
            .args(["plan", "--format", "csv"])
            .arg(&study)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let field = |csv: &str, column: &str| -> String {
        let mut lines = csv.lines();
        let header = csv_fields(lines.next().unwrap());
        let at = header.iter().position(|h| h == column).unwrap();
        csv_fields(lines.next().unwrap()).swap_remove(at)
    };
    let gaussian = plan("gaussian.toml", "likelihood = \"gaussian\"\n");
    assert_eq!(field(&gaussian, "sampler_kind"), "laplace_hmc");
    assert_eq!(field(&gaussian, "sampler_chains"), "4");
    assert_eq!(field(&gaussian, "sampler_iterations"), "2000");
    assert_eq!(field(&gaussian, "sampler_burn_in"), "1000");
    let poisson = plan(
        "poisson.toml",
        "likelihood = \"poisson\"\n[sampler]\nchains = 2\n",
    );
    assert_eq!(field(&poisson, "sampler_kind"), "laplace_hmc");
    assert_eq!(field(&poisson, "sampler_chains"), "2");
    let named = plan(
        "named.toml",
        "likelihood = \"poisson\"\n[sampler]\nkind = \"pcn\"\n",
    );
    assert_eq!(field(&named, "sampler_kind"), "pcn");
    assert_eq!(field(&named, "sampler_chains"), "1");
    let written = plan(
        "auto.toml",
        "likelihood = \"probit\"\n[sampler]\nkind = \"auto\"\n",
    );
    assert_eq!(field(&written, "sampler_kind"), "laplace_hmc");
}
