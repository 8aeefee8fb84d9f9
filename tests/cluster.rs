//! The cluster path on a real Slurm: `fieldmc slurm --submit` splits a study into a job array of
//! three shards and a merge job; the merged tables equal those of a local run, and submitting
//! the same command again reruns nothing. The Slurm is the one `scripts/slurm-single-node.sh`
//! starts (CI runs it before the tests). Where no Slurm answers the test says so and skips,
//! except under CI (`CI` set), where it fails.
//!
//! Also, without Slurm: the scripts `fieldmc slurm` writes.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::{assert_same_tables, fieldmc, run_ok, text};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies")
        .join(name)
}

/// Why Slurm cannot take jobs here, if it cannot.
fn slurm_unavailable() -> Option<String> {
    let output = match Command::new("sinfo").args(["-h", "-o", "%t"]).output() {
        Ok(output) => output,
        Err(e) => return Some(format!("sinfo cannot run ({e}): Slurm is not installed")),
    };
    let states = text(&output.stdout);
    let up = ["idle", "mix", "alloc"]
        .iter()
        .any(|s| states.lines().any(|l| l.trim() == *s));
    if output.status.success() && up {
        None
    } else {
        Some(format!(
            "no Slurm node takes jobs (sinfo: {:?} {})",
            states.trim(),
            text(&output.stderr).trim()
        ))
    }
}

/// `JobState=...` of a Slurm job, from `scontrol show job`.
fn job_state(id: &str) -> String {
    let output = Command::new("scontrol")
        .args(["show", "job", id])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    stdout
        .split_whitespace()
        .find_map(|field| field.strip_prefix("JobState="))
        .unwrap_or("UNKNOWN")
        .to_string()
}

/// Waits for job `id` to end; returns its final state.
fn wait_for_job(id: &str, limit: Duration) -> String {
    let started = Instant::now();
    loop {
        let state = job_state(id);
        let ended = [
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "OUT_OF_MEMORY",
            "NODE_FAIL",
        ]
        .iter()
        .any(|s| state.starts_with(s));
        if ended || started.elapsed() > limit {
            return state;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The job ids `fieldmc slurm --submit` printed: (array, merge).
fn submitted_ids(stdout: &str) -> (String, String) {
    let id_after = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{stdout}"))
            .trim()
            .to_string()
    };
    (id_after("array job "), id_after("merge job "))
}

/// Everything Slurm wrote for the submission (the tasks' and merge's output).
fn slurm_logs(out: &Path) -> String {
    let mut logs = String::new();
    if let Ok(entries) = std::fs::read_dir(out.join("slurm")) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "out") {
                logs.push_str(&format!(
                    "--- {}\n{}\n",
                    path.display(),
                    std::fs::read_to_string(&path).unwrap_or_default()
                ));
            }
        }
    }
    logs
}

fn submit(study: &Path, out: &Path) -> (String, String) {
    let output = fieldmc()
        .args([
            "slurm",
            "--shards",
            "3",
            "--parallel",
            "2",
            "--time",
            "00:10:00",
            "--submit",
        ])
        .arg(study)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "fieldmc slurm --submit failed:\n{stdout}\n{}",
        text(&output.stderr)
    );
    submitted_ids(&stdout)
}

#[test]
fn a_three_shard_study_on_slurm_merges_into_the_tables_of_a_local_run() {
    if let Some(why) = slurm_unavailable() {
        if std::env::var_os("CI").is_some() {
            panic!(
                "CI must run the Slurm test, but {why}; .ci/run starts it with scripts/slurm-single-node.sh"
            );
        }
        eprintln!("SKIPPED: {why}; start one with `sudo scripts/slurm-single-node.sh`");
        return;
    }
    let study = fixture("sweep12.toml");
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("local");
    run_ok(&study, &reference, 2);
    let out = dir.path().join("cluster");

    let started = Instant::now();
    let (array, merge) = submit(&study, &out);
    let state = wait_for_job(&merge, Duration::from_secs(600));
    let logs = slurm_logs(&out);
    assert_eq!(
        state, "COMPLETED",
        "merge job {merge} (array {array}):\n{logs}"
    );
    eprintln!(
        "array {array} + merge {merge} took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for task in 0..3 {
        let task_state = job_state(&format!("{array}_{task}"));
        assert_eq!(task_state, "COMPLETED", "task {task}:\n{logs}");
    }
    assert!(logs.contains("merged 12 jobs, 0 failed"), "{logs}");
    assert_same_tables(&reference, &out);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let mut shards: Vec<String> = manifest["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["shard"].as_str().unwrap().to_string())
        .collect();
    shards.sort();
    assert_eq!(shards, ["0/3", "1/3", "2/3"]);

    // The same command again: every task finds its jobs done, and the merge succeeds again.
    for entry in std::fs::read_dir(out.join("slurm")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "out") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let (_, merge) = submit(&study, &out);
    let state = wait_for_job(&merge, Duration::from_secs(600));
    let logs = slurm_logs(&out);
    assert_eq!(state, "COMPLETED", "{logs}");
    assert_eq!(logs.matches(" ran, ").count(), 3, "{logs}");
    for line in logs.lines().filter(|l| l.contains(" ran, ")) {
        assert!(
            line.contains(" jobs: 0 ran, "),
            "a resubmitted task recomputed jobs: {line}"
        );
    }
    assert_same_tables(&reference, &out);
}

#[test]
fn the_scripts_run_each_shard_and_merge_after_the_array() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = fieldmc()
        .args([
            "slurm",
            "--shards",
            "5",
            "--parallel",
            "2",
            "--partition",
            "short",
            "--time",
            "01:30:00",
            "--cpus-per-task",
            "4",
        ])
        .arg(fixture("sweep12.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let array = std::fs::read_to_string(out.join("slurm/array.sbatch")).unwrap();
    let merge = std::fs::read_to_string(out.join("slurm/merge.sbatch")).unwrap();
    for needle in [
        "#SBATCH --array=0-4%2",
        "#SBATCH --partition=short",
        "#SBATCH --time=01:30:00",
        "#SBATCH --cpus-per-task=4",
        "--shard \"$SLURM_ARRAY_TASK_ID/5\"",
        "--threads \"${SLURM_CPUS_PER_TASK:-4}\"",
        " run ",
    ] {
        assert!(
            array.contains(needle),
            "array script lacks {needle:?}:\n{array}"
        );
    }
    assert!(merge.contains(" merge "), "{merge}");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&array) && stdout.contains(&merge),
        "{stdout}"
    );
    assert!(stdout.contains("--dependency=afterany:"), "{stdout}");
    // Bad shard counts are refused by the parser.
    let zero = fieldmc()
        .args(["slurm", "--shards", "0"])
        .arg(fixture("sweep12.toml"))
        .output()
        .unwrap();
    assert_eq!(zero.status.code(), Some(2));
}
