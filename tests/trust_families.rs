//! The trust tests for the study families other than the latent field, through the real binary:
//! one study of each family gives bit-identical tables (timing columns aside) at 1 and 2
//! threads, a rerun into the same folder resumes every job and changes nothing, and adding a
//! value to a sweep axis reruns only the new jobs and leaves every other job's rows — found by
//! `job_id` — unchanged in every table (keyed streams, not thread or completion order).

mod support;

use std::path::{Path, PathBuf};

use support::{
    assert_same_frame, assert_same_tables, job_ids, read_table, rows_of_job, run_ok, table,
    table_names, without_timing, write_file,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies/trust/families")
        .join(name)
}

/// (fixture, jobs, sweep text, the same sweep with one more value, jobs added).
const FAMILIES: [(&str, usize, &str, &str, usize); 5] = [
    (
        "gaussian.toml",
        12,
        "\"model.correlation\" = [0.5, 0.9]",
        "\"model.correlation\" = [0.5, 0.7, 0.9]",
        6,
    ),
    (
        "markov.toml",
        6,
        "\"model.lambda2\" = [0.2, 0.6, 0.9]",
        "\"model.lambda2\" = [0.2, 0.4, 0.6, 0.9]",
        2,
    ),
    (
        "pagerank.toml",
        3,
        "\"model.teleport\" = [0.1, 0.15, 0.3]",
        "\"model.teleport\" = [0.1, 0.15, 0.2, 0.3]",
        1,
    ),
    (
        "bayes.toml",
        8,
        "\"model.evidence\" = [\"mrk=fail\", \"mrk=pass\"]",
        "\"model.evidence\" = [\"mrk=fail\", \"mrk=pass\", \"mrk=distinction\"]",
        4,
    ),
    (
        "lda.toml",
        4,
        "\"sampler.kind\" = [\"collapsed\", \"uncollapsed\"]",
        "\"sampler.kind\" = [\"uncollapsed\", \"collapsed\"]",
        0,
    ),
];

#[test]
fn every_family_is_deterministic_across_threads_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, jobs, _, _, _) in FAMILIES {
        let study = fixture(name);
        let one = tmp.path().join(format!("{name}-1"));
        let two = tmp.path().join(format!("{name}-2"));
        run_ok(&study, &one, 1);
        run_ok(&study, &two, 2);
        let table = table(&one, "jobs");
        assert_eq!(table.height(), jobs, "{name}");
        let status = table.column("status").unwrap().str().unwrap().clone();
        assert!(status.iter().all(|s| s == Some("ok")), "{name}: {status:?}");
        assert_same_tables(&one, &two);
        let again = run_ok(&study, &two, 2);
        assert!(
            again.contains(&format!("0 ran, {jobs} resumed")),
            "{name}: {again}"
        );
        assert_same_tables(&one, &two);
    }
}

#[test]
fn adding_a_sweep_value_reruns_only_the_new_jobs_and_keeps_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, jobs, from, to, added) in FAMILIES {
        let original = std::fs::read_to_string(fixture(name)).unwrap();
        assert_eq!(original.matches(from).count(), 1, "{name}: {from}");
        // Both studies in the temporary folder with absolute data paths (a data path is part of
        // the job's key, as written).
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/");
        let original = original.replace("../../../../../data/", &data.display().to_string());
        let study = write_file(tmp.path(), &format!("base-{name}"), &original);
        let extended = write_file(
            tmp.path(),
            &format!("extended-{name}"),
            &original.replace(from, to),
        );
        let base = tmp.path().join(format!("{name}-base"));
        run_ok(&study, &base, 2);
        let out = tmp.path().join(format!("{name}-extended"));
        run_ok(&study, &out, 2);
        let stderr = run_ok(&extended, &out, 2);
        assert!(
            stderr.contains(&format!("{added} ran, {jobs} resumed")),
            "{name}: {stderr}"
        );
        let base_ids = job_ids(&table(&base, "jobs"));
        assert_eq!(job_ids(&table(&out, "jobs")).len(), jobs + added, "{name}");
        for table_name in table_names() {
            let (Some(before), Some(after)) =
                (read_table(&base, table_name), read_table(&out, table_name))
            else {
                continue;
            };
            let (before, after) = (without_timing(before), without_timing(after));
            for id in &base_ids {
                assert_same_frame(
                    &rows_of_job(&before, id),
                    &rows_of_job(&after, id),
                    &format!("{name}: {table_name}.parquet rows of job {id}"),
                );
            }
        }
    }
}
