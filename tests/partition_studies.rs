//! The shipped Boston partition studies, run end to end through the `fieldmc` binary: on both
//! tasks every chain (10 seeds per proposal kind) beats the administrative partition on the
//! region MAE cross-validated over regions, chains keep every region connected, and the table of
//! docs/partitions.md is what these runs give (printed with `--nocapture`). Also: a partition
//! study with a latent-field kernel, or a latent-field study with a partition kind, is refused
//! with the key's line.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{fieldmc, floats, run_ok, strings, table, text, write_file};

fn study(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("studies/partitions")
        .join(name)
}

/// Per kind: the values of `column` over the replicates.
fn by_kind(jobs: &polars::prelude::DataFrame, column: &str) -> BTreeMap<String, Vec<f64>> {
    let kinds = strings(jobs, "sampler_kind");
    let values = floats(jobs, column);
    let mut map: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (kind, value) in kinds.into_iter().zip(values) {
        map.entry(kind.expect("a kind"))
            .or_default()
            .push(value.expect("a value"));
    }
    map
}

/// Per kind: the values of a nullable float column, null read as 0 (baselines have no
/// acceptance rate).
fn by_kind_or_zero(jobs: &polars::prelude::DataFrame, column: &str) -> BTreeMap<String, Vec<f64>> {
    let kinds = strings(jobs, "sampler_kind");
    let mut map: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (kind, value) in kinds.into_iter().zip(floats(jobs, column)) {
        map.entry(kind.expect("a kind"))
            .or_default()
            .push(value.unwrap_or(0.0));
    }
    map
}

/// An integer column as floats.
fn integers(jobs: &polars::prelude::DataFrame, column: &str) -> Vec<Option<f64>> {
    let cast = jobs
        .column(column)
        .unwrap()
        .cast(&polars::prelude::DataType::Float64)
        .unwrap();
    cast.f64().unwrap().iter().collect()
}

fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

const CHAINS: [&str; 3] = ["flip", "softmax-flip", "learned-flip"];
const ORDER: [&str; 6] = [
    "admin",
    "kmeans",
    "spectral",
    "flip",
    "softmax-flip",
    "learned-flip",
];

fn check_task(file: &str) {
    let out = tempfile::tempdir().unwrap();
    run_ok(&study(file), out.path(), 2);
    let jobs = table(out.path(), "jobs");
    assert_eq!(jobs.height(), 60, "6 kinds x 10 seeds");
    let cv = by_kind(&jobs, "cv_region_mae_best");
    let train = by_kind(&jobs, "region_mae_best");
    let f = by_kind(&jobs, "f_best");
    let admin = cv["admin"][0];
    assert!(
        cv["admin"].iter().all(|&v| v == admin),
        "the administrative partition has no randomness"
    );
    println!("\n{file}: region MAE of the partition of smallest F, mean (sd) over 10 seeds");
    let acceptance = by_kind_or_zero(&jobs, "acceptance_rate");
    let seconds = by_kind(&jobs, "wall_seconds");
    println!(
        "| method | cross-validated region MAE | training region MAE | F | acceptance | seconds per job |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in ORDER {
        let ((cm, cs), (tm, ts), (fm, fs)) =
            (mean_sd(&cv[kind]), mean_sd(&train[kind]), mean_sd(&f[kind]));
        let (am, sm) = (mean_sd(&acceptance[kind]).0, mean_sd(&seconds[kind]).0);
        println!(
            "| {kind} | {cm:.3} ({cs:.3}) | {tm:.3} ({ts:.3}) | {fm:.1} ({fs:.1}) | {am:.3} | {sm:.2} |"
        );
    }
    for kind in CHAINS {
        for (seed, &value) in cv[kind].iter().enumerate() {
            assert!(
                value < admin,
                "{file}: {kind} replicate {seed}: cross-validated region MAE {value} not below \
                 the administrative {admin}"
            );
        }
    }
    let kinds = strings(&jobs, "sampler_kind");
    let disconnected = integers(&jobs, "disconnected_regions");
    let regions = integers(&jobs, "regions");
    let warnings = strings(&jobs, "warnings");
    for (row, kind) in kinds.iter().enumerate() {
        let kind = kind.as_deref().unwrap();
        assert_eq!(
            regions[row],
            Some(106.0),
            "{kind}: towns in connected pieces"
        );
        if CHAINS.contains(&kind) {
            assert_eq!(
                disconnected[row],
                Some(0.0),
                "{kind}: a chain keeps regions connected"
            );
        }
        let heuristic = warnings[row]
            .as_deref()
            .unwrap()
            .contains("search heuristic");
        assert_eq!(heuristic, kind == "learned-flip", "{kind}: warnings");
    }
    let partitions = table(out.path(), "partitions");
    // chains: start, final, best; baselines: final, best; 506 areas each.
    assert_eq!(partitions.height(), 506 * (30 * 3 + 30 * 2));
}

#[test]
fn boston_house_value_chains_beat_the_towns_out_of_sample() {
    check_task("boston_house_value.toml");
}

#[test]
fn boston_crime_chains_beat_the_towns_out_of_sample() {
    check_task("boston_crime.toml");
}

#[test]
fn a_kind_of_the_other_family_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let partition = format!(
        "[model]\nfamily = \"partition\"\n[data]\nareas = \"{}\"\nadjacency = \"{}\"\nid = \"tract_id\"\n\
         admin = \"town\"\ntarget = \"crim\"\nfeatures = \"rm,lstat\"\n[sampler]\nkind = \"pcn\"\n",
        data.join("boston_tracts.csv").display(),
        data.join("boston_adjacency.csv").display()
    );
    let path = write_file(dir.path(), "partition.toml", &partition);
    let output = fieldmc().arg("check").arg(&path).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":11:")
            && stderr.contains("\"pcn\" is not a sampler of model.family = \"partition\""),
        "{stderr}"
    );
    assert!(stderr.contains("softmax-flip"), "{stderr}");
    let latent = "[model]\ngrid = 4\n[sampler]\nkind = \"flip\"\n";
    let path = write_file(dir.path(), "latent.toml", latent);
    let output = fieldmc().arg("check").arg(&path).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":4:") && stderr.contains("pcnl"),
        "{stderr}"
    );
}
