//! `fieldmc compare` end to end: the real binary on real runs. Identical runs (threads, shards,
//! resume) are compared in `cli`, `storage`, `cluster` and `trust_*` through
//! `support::assert_same_tables`, which calls it; this file shows that it also finds what
//! differs: a value changed by hand, a job that did not converge at another seed, another study.

use std::path::{Path, PathBuf};
use std::process::Output;

use polars::prelude::*;

mod support;

use support::{read_parquet, run_ok, strings, table, text, write_file};

fn sweep12() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/sweep12.toml")
}

fn compare(a: &Path, b: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let output: Output = support::fieldmc()
        .arg("compare")
        .arg(a)
        .arg(b)
        .args(extra)
        .output()
        .expect("the fieldmc binary starts");
    support::assert_no_panic(&output, "fieldmc compare");
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    (output.status.code(), all)
}

/// A copy of results folder `from` (its top-level files) at `to`.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn one_changed_value_is_found_and_named_with_its_job_column_and_cell() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_ok(&sweep12(), &a, 2);
    copy_folder(&a, &b);
    let (code, out) = compare(&a, &b, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("summary: identical: 12 jobs"), "{out}");

    // Nudge one posterior mean by one unit in the last place.
    let mut fields = table(&b, "fields");
    let mut means: Vec<Option<f64>> = fields
        .column("post_mean")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let row = 100;
    means[row] = means[row].map(|x| f64::from_bits(x.to_bits() + 1));
    let job = strings(&fields, "job_id")[row].clone().unwrap();
    let cell = fields
        .column("cell")
        .unwrap()
        .i64()
        .unwrap()
        .get(row)
        .unwrap();
    fields
        .with_column(Series::new("post_mean".into(), means).into())
        .unwrap();
    let file = std::fs::File::create(b.join("fields.parquet")).unwrap();
    ParquetWriter::new(file).finish(&mut fields).unwrap();

    let (code, out) = compare(&a, &b, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("fields.parquet"), "{out}");
    assert!(out.contains("11 identical, 1 different"), "{out}");
    assert!(out.contains(&format!("different job {job}")), "{out}");
    assert!(out.contains(&format!("post_mean row {}", cell)), "{out}");
    assert!(out.contains(&format!("cell={cell}")), "{out}");
    assert!(out.contains("summary: different: 1 of"), "{out}");

    // A folder of reference tables (no manifest) works as a side, restricted to what it holds.
    let reference = dir.path().join("reference");
    std::fs::create_dir(&reference).unwrap();
    for name in ["jobs.parquet", "fields.parquet"] {
        std::fs::copy(a.join(name), reference.join(name)).unwrap();
    }
    let (code, out) = compare(&a, &reference, &["--tables", "jobs,fields"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("no manifest: reference tables"), "{out}");
    let (code, out) = compare(&a, &reference, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("tables only in A: traces"), "{out}");
}

/// A 6 x 6 grid of gaussian values, and a study on it at `seed`: elliptical slice sampling
/// (converges) and random-walk Metropolis with a tiny step (does not), 4 chains each.
fn two_kinds_at(dir: &Path, seed: u64) -> PathBuf {
    let mut csv = String::from("i,j,value\n");
    for j in 0..6 {
        for i in 0..6 {
            let value = ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0;
            csv.push_str(&format!("{i},{j},{value}\n"));
        }
    }
    write_file(dir, "grid.csv", &csv);
    let study = format!(
        "[study]\nname = \"two_seeds\"\nseed = {seed}\n\n\
         [model]\ngrid = 6\nlength_scale = 0.3\nlikelihood = \"gaussian\"\n\n\
         [data]\nsource = \"csv\"\npath = \"grid.csv\"\nholdout = 0.0\n\n\
         [sampler]\niterations = 4000\nburn_in = 500\nthin = 1\nchains = 4\nbeta = 0.01\n\n\
         [sweep]\n\"sampler.kind\" = [\"elliptical\", \"grw\"]\n"
    );
    write_file(dir, &format!("seed{seed}.toml"), &study)
}

#[test]
fn at_two_seeds_a_converged_job_agrees_within_mcse_and_a_stuck_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_ok(&two_kinds_at(dir.path(), 1), &a, 2);
    run_ok(&two_kinds_at(dir.path(), 2), &b, 2);
    let stuck = {
        let jobs = read_parquet(&a.join("jobs.parquet")).unwrap();
        let kinds = strings(&jobs, "sampler_kind");
        let row = kinds
            .iter()
            .position(|k| k.as_deref() == Some("grw"))
            .unwrap();
        strings(&jobs, "job_id")[row].clone().unwrap()
    };

    let (code, out) = compare(&a, &b, &["--tolerance", "mcse:4"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("seed 1") && out.contains("seed 2"), "{out}");
    assert!(
        out.contains(
            "Bonferroni bound over the 72 values judged at a family-wise false-alarm rate of 1e-4"
        ),
        "{out}"
    );
    assert!(out.contains("1 within tolerance, 1 different"), "{out}");
    assert!(out.contains(&format!("different job {stuck} ~ ")), "{out}");
    assert!(out.contains("not judged (no MCSE stored"), "{out}");

    // Exact comparison of two seeds: everything differs.
    let (code, out) = compare(&a, &b, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("2 different"), "{out}");
}

#[test]
fn two_different_studies_or_a_missing_folder_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_ok(&sweep12(), &a, 2);
    let renamed = std::fs::read_to_string(sweep12()).unwrap().replacen(
        "name = ",
        "name = \"other\"\n# was: name = ",
        1,
    );
    let other = write_file(dir.path(), "other.toml", &renamed);
    run_ok(&other, &b, 2);
    let (code, out) = compare(&a, &b, &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("different studies"), "{out}");
    assert!(out.contains("\"other\""), "{out}");

    let (code, out) = compare(&a, &dir.path().join("nowhere"), &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("is not a folder"), "{out}");

    let (code, out) = compare(&a, &a, &["--tolerance", "close"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("allowed: `exact`, `mcse` or `mcse:K`"),
        "{out}"
    );

    let (code, out) = compare(&a, &a, &["--tables", "fields,nonsense"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("no table is named \"nonsense\""), "{out}");
}
