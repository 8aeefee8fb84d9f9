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

/// `fieldmc compare FOLDERS... --loo`: exit code and everything printed.
fn compare_loo(folders: &[&Path], extra: &[&str]) -> (Option<i32>, String) {
    let output: Output = support::fieldmc()
        .arg("compare")
        .args(folders)
        .arg("--loo")
        .args(extra)
        .output()
        .expect("the fieldmc binary starts");
    support::assert_no_panic(&output, "fieldmc compare --loo");
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    (output.status.code(), all)
}

/// A 6 x 6 grid of gaussian values (`nudge` added to the first) and a study of two kernels on
/// it, with `output.log_likelihood` when `loo`, in `name`.toml.
fn two_kernels(dir: &Path, name: &str, nudge: f64, loo: bool) -> PathBuf {
    let mut csv = String::from("i,j,value\n");
    for j in 0..6 {
        for i in 0..6 {
            let value =
                ((i * 5 + j * 3) % 7) as f64 / 3.0 - 1.0 + if i + j == 0 { nudge } else { 0.0 };
            csv.push_str(&format!("{i},{j},{value}\n"));
        }
    }
    write_file(dir, &format!("{name}.csv"), &csv);
    let study = format!(
        "[study]\nname = \"{name}\"\nseed = 5\n\n\
         [model]\ngrid = 6\nlength_scale = 0.3\nlikelihood = \"gaussian\"\n\n\
         [data]\nsource = \"csv\"\npath = \"{name}.csv\"\nholdout = 0.0\nnoise_sd = 0.5\n\n\
         [sampler]\nkind = \"mala\"\niterations = 1500\nburn_in = 500\nchains = 2\n\n\
         [output]\nlog_likelihood = {loo}\ncell_draws = 200\n\n\
         [sweep]\n\"model.kernel\" = [\"squared-exponential\", \"matern32\"]\n"
    );
    write_file(dir, &format!("{name}.toml"), &study)
}

/// The printed table's lines: job, elpd_loo, elpd_diff, dse, warning and model of each rank.
fn printed_rows(out: &str) -> Vec<(String, f64, f64, f64, String, String)> {
    out.lines()
        .skip_while(|line| !line.starts_with("rank"))
        .skip(1)
        .take_while(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            let number = |k: usize| t[k].parse::<f64>().unwrap();
            (
                t[1].to_string(),
                number(2),
                number(4),
                number(6),
                t[7].to_string(),
                t[9..].join(" "),
            )
        })
        .collect()
}

/// Model choice on a real sweep of two kernels: the printed elpd_diff is the difference of the
/// jobs' elpd_loo in jobs.parquet and dse is sqrt(n var(diff)) of their loo.parquet terms, to
/// the printed three decimals; a copy of the folder joins as B; other data are refused with the
/// jobs named; the report shows the LOO table and the Pareto k maps.
#[test]
fn loo_ranks_the_kernels_with_arviz_differences_and_refuses_other_data() {
    let dir = tempfile::tempdir().unwrap();
    let (a, copy, other) = (
        dir.path().join("a"),
        dir.path().join("copy"),
        dir.path().join("other"),
    );
    run_ok(&two_kernels(dir.path(), "kernels", 0.0, true), &a, 2);

    let (code, out) = compare_loo(&[&a], &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("2 jobs, each with the same 36 observations (cells) in the same order, with the same data"),
        "{out}"
    );
    let jobs = table(&a, "jobs");
    let ids = strings(&jobs, "job_id");
    let elpd = support::floats(&jobs, "elpd_loo");
    let elpd_of =
        |id: &str| elpd[ids.iter().position(|i| i.as_deref() == Some(id)).unwrap()].unwrap();
    let loo = table(&a, "loo");
    let terms_of = |id: &str| -> Vec<f64> {
        let mine = support::rows_of_job(&loo, id);
        let order = support::ints(&mine, "observation");
        let values = support::floats(&mine, "elpd_loo");
        let mut pairs: Vec<(i64, f64)> = order
            .iter()
            .zip(&values)
            .map(|(o, v)| (o.unwrap(), v.unwrap()))
            .collect();
        pairs.sort_by_key(|p| p.0);
        assert!(pairs.iter().enumerate().all(|(i, p)| p.0 == i as i64));
        pairs.into_iter().map(|p| p.1).collect()
    };
    let rows = printed_rows(&out);
    assert_eq!(rows.len(), 2, "{out}");
    let (best, worse) = (&rows[0], &rows[1]);
    assert!(elpd_of(&best.0) >= elpd_of(&worse.0), "{out}");
    // Printed to three decimals: within half a unit in the last place (and rounding of sums).
    let close = |printed: f64, exact: f64| (printed - exact).abs() <= 5e-4 + 1e-9;
    assert!(close(best.1, elpd_of(&best.0)), "{out}");
    assert_eq!((best.2, best.3), (0.0, 0.0), "{out}");
    assert!(
        close(worse.2, elpd_of(&best.0) - elpd_of(&worse.0)),
        "{out}"
    );
    let diff: Vec<f64> = terms_of(&best.0)
        .iter()
        .zip(terms_of(&worse.0))
        .map(|(b, w)| b - w)
        .collect();
    let n = diff.len() as f64;
    let mean = diff.iter().sum::<f64>() / n;
    let var = diff.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n;
    assert!(
        close(worse.3, (n * var).sqrt()),
        "{out} vs {}",
        (n * var).sqrt()
    );
    assert!(worse.3 > 0.0, "{out}");
    let bad = support::ints(&jobs, "pareto_k_bad");
    for row in &rows {
        let k = ids
            .iter()
            .position(|i| i.as_deref() == Some(row.0.as_str()))
            .unwrap();
        assert_eq!(row.4 == "true", bad[k].unwrap() > 0, "{out}");
    }
    let models: Vec<&str> = rows.iter().map(|r| r.5.as_str()).collect();
    assert!(
        models.iter().any(|m| m.contains("matern32"))
            && models.iter().any(|m| m.contains("squared-exponential")),
        "each job is named by its kernel: {out}"
    );

    // Two folders: every job of both, named by folder; a copy ties with its original.
    copy_folder(&a, &copy);
    let (code, out) = compare_loo(&[&a, &copy], &[]);
    assert_eq!(code, Some(0), "{out}");
    let rows = printed_rows(&out);
    assert_eq!(rows.len(), 4, "{out}");
    assert!(
        rows[0].0.starts_with("A:") && rows[1].0.starts_with("B:"),
        "{out}"
    );
    assert_eq!(
        (rows[1].2, rows[1].3),
        (0.0, 0.0),
        "the copy of the best: {out}"
    );

    // Other data on the same cells: refused, the jobs and the cell named.
    run_ok(&two_kernels(dir.path(), "other", 0.25, true), &other, 2);
    let (code, out) = compare_loo(&[&a, &other], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("did not see the same observations"), "{out}");
    assert!(out.contains("cell 0 (observation 0) holds"), "{out}");
    assert!(
        out.contains(&format!("jobs A:{}", ids[0].as_deref().unwrap())),
        "{out}"
    );

    // Without output.log_likelihood there is nothing to rank.
    let plain = dir.path().join("plain");
    run_ok(&two_kernels(dir.path(), "plain", 0.0, false), &plain, 2);
    let (code, out) = compare_loo(&[&plain], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("has elpd_loo: model choice needs `[output] log_likelihood = true`"),
        "{out}"
    );

    // The reproducibility flags do not mix with --loo; without --loo two folders are needed.
    let (code, out) = compare_loo(&[&a], &["--tolerance", "mcse"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("cannot be used with"), "{out}");
    let output = support::fieldmc().arg("compare").arg(&a).output().unwrap();
    assert_eq!(output.status.code(), Some(2));

    // The report: the LOO table and one Pareto k map per kernel.
    let output = support::fieldmc().arg("report").arg(&a).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let page = std::fs::read_to_string(a.join("report/index.html")).unwrap();
    let (_, loo_section) = page
        .split_once("<h3>PSIS-LOO of each job</h3>")
        .expect("the LOO table");
    let loo_table = loo_section.split("</table>").next().unwrap();
    for id in ids.iter().flatten() {
        assert!(
            a.join(format!("report/pareto-k-{id}.png")).is_file(),
            "{id}"
        );
        assert!(
            loo_table.contains(&format!("<td class=\"text\">{id}</td>")),
            "{id}"
        );
    }
}
