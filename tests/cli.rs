//! End-to-end: the real `fieldmc` binary on real study files, its Parquet tables read back.

use std::path::{Path, PathBuf};

mod support;

use support::{assert_same_tables, fieldmc, run_ok as run_study, table as read};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies")
        .join(name)
}

#[test]
fn a_twelve_job_sweep_gives_twelve_rows_with_the_contract_columns() {
    let out = tempfile::tempdir().unwrap();
    run_study(&fixture("sweep12.toml"), out.path(), 2);
    let jobs = read(out.path(), "jobs");
    assert_eq!(jobs.height(), 12);
    for column in [
        "job_id",
        "replicate",
        "model_grid",
        "sampler_kind",
        "sampler_beta",
        "data_noise_sd",
        "status",
        "error",
        "acceptance_rate",
        "mae",
        "wall_seconds",
        "iterations_per_second",
        "exact_rmse",
        "ess_bulk",
        "rhat",
    ] {
        assert!(jobs.column(column).is_ok(), "jobs.parquet lacks {column}");
    }
    let status = jobs.column("status").unwrap().str().unwrap();
    assert!(status.iter().all(|s| s == Some("ok")));
    let fields = read(out.path(), "fields");
    assert_eq!(fields.height(), 12 * 64);
    for column in [
        "job_id",
        "i",
        "j",
        "x",
        "y",
        "truth",
        "observed",
        "observation",
    ] {
        assert!(
            fields.column(column).is_ok(),
            "fields.parquet lacks {column}"
        );
    }
    for column in ["post_mean", "post_sd", "exact_mean", "exact_sd"] {
        assert_eq!(fields.column(column).unwrap().null_count(), 0, "{column}");
    }
    assert!(out.path().join("manifest.json").exists());
    assert!(out.path().join("study.toml").exists());
}

#[test]
fn one_and_four_threads_give_identical_tables() {
    let one = tempfile::tempdir().unwrap();
    let four = tempfile::tempdir().unwrap();
    run_study(&fixture("sweep12.toml"), one.path(), 1);
    run_study(&fixture("sweep12.toml"), four.path(), 4);
    assert_same_tables(one.path(), four.path());
}

#[test]
fn a_rerun_recomputes_only_the_jobs_without_a_result() {
    let full = tempfile::tempdir().unwrap();
    run_study(&fixture("sweep12.toml"), full.path(), 2);
    // One shard of three first: its jobs have results, the others not.
    let resumed = tempfile::tempdir().unwrap();
    let shard = fieldmc()
        .args(["run", "--quiet", "--shard", "1/3", "--threads", "2"])
        .arg(fixture("sweep12.toml"))
        .arg("--out")
        .arg(resumed.path())
        .output()
        .unwrap();
    assert!(shard.status.success(), "{}", support::text(&shard.stderr));
    let done = support::recorded_jobs(resumed.path());
    assert!((1..12).contains(&done), "shard 1/3 recorded {done} jobs");
    let stderr = run_study(&fixture("sweep12.toml"), resumed.path(), 2);
    assert!(
        stderr.contains(&format!("{} ran, {done} resumed", 12 - done)),
        "expected {} recomputed jobs:\n{stderr}",
        12 - done
    );
    assert_same_tables(full.path(), resumed.path());
}

#[test]
fn a_bad_study_exits_2_with_a_located_message_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("bad.toml");
    std::fs::write(
        &study,
        "[study]\nname = \"bad\"\n\n[model]\ngrid = 8\nlenght_scale = 0.3\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = fieldmc()
        .arg("run")
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.toml:6:1"), "{stderr}");
    assert!(stderr.contains("length_scale"), "{stderr}");
    assert!(!out.exists(), "nothing may be written for a bad study");
}

#[test]
fn check_and_plan_describe_the_study() {
    let check = fieldmc()
        .arg("check")
        .arg(fixture("sweep12.toml"))
        .status()
        .unwrap();
    assert!(check.success());
    let csv = fieldmc()
        .args(["plan", "--format", "csv"])
        .arg(fixture("sweep12.toml"))
        .output()
        .unwrap();
    assert!(csv.status.success());
    let text = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(text.lines().count(), 13, "header + 12 jobs:\n{text}");
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for sub in ["check", "plan", "run", "merge", "slurm", "report", "bench"] {
        let output = fieldmc().args([sub, "--help"]).output().unwrap();
        assert!(output.status.success());
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.contains("Example"),
            "`fieldmc {sub} --help` lacks an example"
        );
    }
}

/// The end of a run names the jobs that finished with warnings (as jobs.parquet records them);
/// `--deny-warnings` turns them into exit code 3, and without it the run succeeds.
#[test]
fn warnings_are_summarised_and_can_be_denied() {
    let out = tempfile::tempdir().unwrap();
    let study = fixture("warned.toml");
    let denied = fieldmc()
        .args(["run", "--quiet", "--no-report", "--deny-warnings", "--out"])
        .arg(out.path())
        .arg(&study)
        .output()
        .unwrap();
    let stderr = support::text(&denied.stderr);
    let jobs = read(out.path(), "jobs");
    let ids = jobs.column("job_id").unwrap().str().unwrap();
    let warnings = jobs.column("warnings").unwrap().str().unwrap();
    let warned: Vec<&str> = ids
        .iter()
        .zip(warnings.iter())
        .filter(|(_, w)| !w.unwrap().is_empty())
        .map(|(id, _)| id.unwrap())
        .collect();
    assert!(!warned.is_empty(), "the oversized random walk must warn");
    assert_eq!(denied.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} of 2 jobs finished with warnings",
            warned.len()
        )),
        "{stderr}"
    );
    for id in warned {
        assert!(stderr.contains(id), "{id} not named:\n{stderr}");
    }
    let allowed = fieldmc()
        .args(["run", "--quiet", "--no-report", "--out"])
        .arg(out.path())
        .arg(&study)
        .output()
        .unwrap();
    assert!(
        allowed.status.success(),
        "{}",
        support::text(&allowed.stderr)
    );
    assert!(support::text(&allowed.stderr).contains("finished with warnings"));
}

/// `fieldmc keys` prints what the key declarations say; an unknown prefix is bad input.
#[test]
fn keys_lists_the_declared_keys() {
    let output = fieldmc().args(["keys", "sampler"]).output().unwrap();
    assert!(output.status.success());
    let listed = support::text(&output.stdout);
    for &key in fieldmc::families::catalog().all() {
        let shown = listed.lines().any(|line| line == key.dotted());
        assert_eq!(
            shown,
            key.dotted().starts_with("sampler"),
            "{}",
            key.dotted()
        );
    }
    let unknown = fieldmc().args(["keys", "nosuch"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

/// `data.holdout` is 0 by default: a grid CSV's job fits every cell, holds none out and the run
/// says nothing about it. Asked for a share, the job holds its rounded share of the cells with
/// data out (`held_out_cells`), `fieldmc run` says how many, and the report's jobs table lists
/// the column.
#[test]
fn a_run_fits_every_cell_by_default_and_says_how_many_cells_a_holdout_took() {
    let dir = tempfile::tempdir().unwrap();
    write_count_grid(dir.path());
    let study = |name: &str, holdout: &str| {
        support::write_file(
            dir.path(),
            &format!("{name}.toml"),
            &format!(
                "[study]\nname = \"{name}\"\nseed = 3\n\
                 [model]\ngrid = 4\nlikelihood = \"poisson\"\n\
                 [data]\nsource = \"csv\"\npath = \"grid.csv\"\ncolumn = \"count\"\n{holdout}\
                 [sampler]\nkind = \"laplace\"\n"
            ),
        )
    };
    let held_out_cells = |out: &Path| {
        let jobs = read(out, "jobs");
        let column = |name: &str| -> Vec<Option<i64>> {
            jobs.column(name).unwrap().i64().unwrap().iter().collect()
        };
        (column("held_out_cells"), column("observed_cells"))
    };

    let out = dir.path().join("default");
    let stderr = run_study(&study("default", ""), &out, 1);
    assert_eq!(held_out_cells(&out), (vec![Some(0)], vec![Some(16)]));
    assert!(
        !stderr.contains("data.holdout or data.folds held"),
        "{stderr}"
    );
    let fields = read(&out, "fields");
    let observed = fields.column("observed").unwrap().bool().unwrap();
    assert!(
        observed.iter().all(|o| o == Some(true)),
        "every cell fitted"
    );

    let out = dir.path().join("quarter");
    let run = fieldmc()
        .args(["run", "--quiet", "--threads", "1"])
        .arg(study("quarter", "holdout = 0.25\n"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = support::text(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(held_out_cells(&out), (vec![Some(4)], vec![Some(12)]));
    assert!(
        stderr.contains(
            "note: data.holdout or data.folds held cells out of the fit to score them: 4 of 16 cells with \
             data in 1 job (column held_out_cells of jobs.parquet)"
        ),
        "{stderr}"
    );
    let page = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(page.contains("held_out_cells"), "the report's jobs table");
}

/// K-fold over real cells: `data.folds = 4` swept over `data.fold` holds every cell out exactly
/// once across the four jobs (fields.parquet's `observed` false in one job each), the folds'
/// sizes differ by at most one, and the K-fold elpd is the sum of heldout_lpd x held_out_cells.
#[test]
fn k_folds_hold_every_cell_out_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    write_count_grid(dir.path());
    let study = support::write_file(
        dir.path(),
        "folds.toml",
        "[study]\nname = \"folds\"\nseed = 3\n\
         [model]\ngrid = 4\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"csv\"\npath = \"grid.csv\"\ncolumn = \"count\"\nfolds = 4\n\
         [sampler]\nkind = \"laplace\"\n\
         [sweep]\n\"data.fold\" = [0, 1, 2, 3]\n",
    );
    let out = dir.path().join("out");
    run_study(&study, &out, 1);
    let jobs = read(&out, "jobs");
    assert_eq!(support::ints(&jobs, "held_out_cells"), vec![Some(4); 4]);
    let lpd = support::floats(&jobs, "heldout_lpd");
    assert!(
        lpd.iter()
            .all(|l| l.is_some_and(|l| l.is_finite() && l < 0.0)),
        "{lpd:?}"
    );
    let fields = read(&out, "fields");
    let cell = fields.column("cell").unwrap().i64().unwrap();
    let observed = fields.column("observed").unwrap().bool().unwrap();
    let mut times_held = [0; 16];
    for (c, o) in cell.iter().zip(observed.iter()) {
        if o == Some(false) {
            times_held[c.unwrap() as usize] += 1;
        }
    }
    assert_eq!(
        times_held, [1; 16],
        "each cell held out by exactly one fold"
    );
}

/// `grid.csv` in `dir`: a 4 x 4 grid of counts (i, j, count), every cell with one.
fn write_count_grid(dir: &Path) {
    let mut csv = String::from("i,j,count\n");
    for j in 0..4 {
        for i in 0..4 {
            csv.push_str(&format!("{i},{j},{}\n", (i * 3 + j * 5) % 7));
        }
    }
    support::write_file(dir, "grid.csv", &csv);
}
