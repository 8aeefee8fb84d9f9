//! Determinism through the real binary: the same study gives bit-identical tables (timing
//! columns aside) at 1, 2 and 8 threads and in two runs in a row, and adding one value to a sweep
//! axis leaves every other job's rows — found by `job_id` — unchanged in every table.

mod support;

use std::path::{Path, PathBuf};

use support::{
    assert_same_frame, assert_same_tables, fieldmc, job_ids, read_table, rows_of_job, run_ok,
    table, table_names, text, without_timing, write_file,
};

fn study() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/trust/determinism.toml")
}

const JOBS: usize = 24;

#[test]
fn one_two_and_eight_threads_and_a_second_run_give_identical_tables() {
    let study = study();
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<(usize, PathBuf)> = [1, 2, 8]
        .into_iter()
        .map(|threads| (threads, tmp.path().join(format!("threads{threads}"))))
        .collect();
    for (threads, out) in &runs {
        run_ok(&study, out, *threads);
    }
    let jobs = table(&runs[0].1, "jobs");
    assert_eq!(jobs.height(), JOBS);
    let status = jobs.column("status").unwrap().str().unwrap().clone();
    assert!(status.iter().all(|s| s == Some("ok")), "{status:?}");
    // Three likelihoods: the tables carry probit and poisson columns as well as gaussian ones.
    let fields = table(&runs[0].1, "fields");
    for column in ["exact_mean", "p_positive", "expected_count"] {
        assert!(fields.column(column).unwrap().null_count() < fields.height());
    }
    for (threads, out) in &runs[1..] {
        eprintln!("comparing 1 thread with {threads}");
        assert_same_tables(&runs[0].1, out);
    }

    // Twice in a row: a second run into a fresh folder, and a --fresh rerun over the first.
    let again = tmp.path().join("again");
    run_ok(&study, &again, 2);
    assert_same_tables(&runs[1].1, &again);
    let output = fieldmc()
        .args(["run", "--quiet", "--no-report", "--fresh", "--threads", "2"])
        .arg(&study)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{JOBS} ran, 0 resumed")),
        "{stderr}"
    );
    assert_same_tables(&runs[1].1, &again);
}

/// The study with `from` replaced by `to` (which must occur exactly once), in `dir`.
fn variant(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let original = std::fs::read_to_string(study()).unwrap();
    assert_eq!(original.matches(from).count(), 1, "{from:?}");
    write_file(dir, name, &original.replace(from, to))
}

/// Every job of `base` has the same rows, timing aside, in every table of `extended`.
fn assert_jobs_unchanged(base: &Path, extended: &Path) -> usize {
    let base_ids = job_ids(&table(base, "jobs"));
    for name in table_names() {
        let (Some(before), Some(after)) = (read_table(base, name), read_table(extended, name))
        else {
            assert!(read_table(base, name).is_none(), "{name} vanished");
            continue;
        };
        let (before, after) = (without_timing(before), without_timing(after));
        for id in &base_ids {
            assert_same_frame(
                &rows_of_job(&before, id),
                &rows_of_job(&after, id),
                &format!("{name}.parquet rows of job {id}"),
            );
        }
    }
    base_ids.len()
}

#[test]
fn adding_a_sweep_value_leaves_the_other_jobs_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    run_ok(&study(), &base, 2);
    let cases = [
        // A sampler value: the new jobs share the data of the old ones.
        (
            "beta",
            "\"sampler.beta\" = [0.1, 0.4]",
            "\"sampler.beta\" = [0.1, 0.25, 0.4]",
            12,
        ),
        // A data-relevant value: new truths and observations, the old ones untouched.
        (
            "grid",
            "\"model.grid\" = [5, 8]",
            "\"model.grid\" = [5, 6, 8]",
            12,
        ),
    ];
    for (axis, from, to, added) in cases {
        let study = variant(tmp.path(), &format!("{axis}.toml"), from, to);
        let out = tmp.path().join(axis);
        run_ok(&study, &out, 2);
        let extended = job_ids(&table(&out, "jobs"));
        assert_eq!(extended.len(), JOBS + added, "{axis}");
        let kept = assert_jobs_unchanged(&base, &out);
        assert_eq!(kept, JOBS);
    }
}

/// Jobs of one sweep point that differ only in the sampler see the same truth and data (common
/// random numbers), so the extension test above is not vacuous about data streams.
#[test]
fn samplers_of_one_sweep_point_share_truth_and_observations() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    run_ok(&study(), &out, 2);
    let jobs = table(&out, "jobs");
    let fields = table(&out, "fields");
    let key = |row: usize, column: &str| -> String {
        let value = jobs.column(column).unwrap().get(row).unwrap();
        format!("{value}")
    };
    let mut groups: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    let ids = job_ids(&jobs);
    for (row, id) in ids.iter().enumerate() {
        let point = (key(row, "model_likelihood"), key(row, "model_grid"));
        groups.entry(point).or_default().push(id.clone());
    }
    assert_eq!(groups.len(), 6);
    for (point, members) in groups {
        assert_eq!(members.len(), 4, "{point:?}");
        let data = |id: &str| {
            rows_of_job(&fields, id)
                .select(["cell", "truth", "observed", "observation"])
                .unwrap()
        };
        let first = data(&members[0]);
        for other in &members[1..] {
            assert_same_frame(&first, &data(other), &format!("data of {point:?}"));
        }
        let post = |id: &str| rows_of_job(&fields, id).select(["post_mean"]).unwrap();
        assert!(
            !post(&members[0]).equals_missing(&post(&members[1])),
            "{point:?}: different samplers gave the same chain"
        );
    }
}

/// A lone job runs its chains on the pool's idle threads (`RunContext::spare_threads`): every
/// kind, and the hyperparameter updates, give the tables of one thread, bit for bit.
#[test]
fn a_lone_jobs_chains_on_several_threads_give_the_tables_of_one() {
    let tmp = tempfile::tempdir().unwrap();
    let kinds = [
        "kind = \"grw\"",
        "kind = \"pcn\"",
        "kind = \"elliptical\"",
        "kind = \"mala\"",
        "kind = \"pcnl\"",
        "kind = \"nuts\"",
        "kind = \"gpcn\"",
        "kind = \"mgrad\"",
        "kind = \"laplace_hmc\"",
        "kind = \"pcn\"\nhyper = \"within-gibbs\"",
        "kind = \"nuts\"\nhyper = \"joint\"",
    ];
    for (k, kind) in kinds.iter().enumerate() {
        let prior = if kind.contains("hyper") {
            "length_scale_prior = \"log-normal(-1.5, 0.5)\"\n"
        } else {
            ""
        };
        let study = write_file(
            tmp.path(),
            &format!("lone{k}.toml"),
            &format!(
                "[study]\nname = \"lone\"\nseed = 11\n[model]\ngrid = 6\nlikelihood = \"poisson\"\n\
                 {prior}[sampler]\n{kind}\niterations = 300\nburn_in = 100\nchains = 4\n\
                 [output]\nfield_draws = 20\n"
            ),
        );
        let one = tmp.path().join(format!("one{k}"));
        let four = tmp.path().join(format!("four{k}"));
        run_ok(&study, &one, 1);
        run_ok(&study, &four, 4);
        eprintln!("{kind}: 1 thread against 4");
        assert_same_tables(&one, &four);
    }
}
