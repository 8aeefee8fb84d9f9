//! The results folder through the real binary: a bounded number of files for many jobs, the
//! folder lock between processes (and its stale-lock takeover), shards merged into the tables of
//! a one-process run, merge refusing records of mixed fieldmc versions, honest reruns (changed
//! data and failed jobs are recomputed, a failed job's exit code), and `plan | head`.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use support::{
    assert_no_panic, assert_same_frame, assert_same_tables, fieldmc, job_ids, lock_files,
    recorded_jobs, rows_of_job, run_command, run_ok, run_output, table, text, tree, wait_until,
    write_file,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies")
        .join(name)
}

/// A study of `n` tiny jobs (D = 4, 200 iterations, one chain).
fn tiny_study(dir: &Path, n: usize) -> PathBuf {
    write_file(
        dir,
        &format!("tiny{n}.toml"),
        &format!(
            "[study]\nname = \"tiny\"\nreplicates = {n}\n[model]\ngrid = 4\n\
             [sampler]\niterations = 200\nchains = 1\n"
        ),
    )
}

/// Regular files under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    tree(dir)
        .into_iter()
        .filter(|p| dir.join(p).is_file())
        .collect()
}

fn shard_run(study: &Path, out: &Path, shard: &str) -> Output {
    fieldmc()
        .args([
            "run",
            "--quiet",
            "--no-report",
            "--threads",
            "1",
            "--shard",
            shard,
        ])
        .arg(study)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn merge(out: &Path) -> Output {
    fieldmc()
        .args(["merge", "--no-report"])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn two_thousand_jobs_leave_as_many_files_as_twenty() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    let large = dir.path().join("large");
    run_ok(&tiny_study(dir.path(), 20), &small, 2);
    run_ok(&tiny_study(dir.path(), 2000), &large, 2);
    let (small_files, large_files) = (files(&small), files(&large));
    // Log and lock names carry times and pids: compare them as patterns.
    let shape = |files: &[PathBuf]| -> Vec<String> {
        let mut names: Vec<String> = files
            .iter()
            .map(|p| match p.extension().and_then(|e| e.to_str()) {
                Some("log") => "parts/*.log".to_string(),
                _ => p.display().to_string(),
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(shape(&small_files), shape(&large_files), "20 vs 2,000 jobs");
    assert!(large_files.len() <= 12, "{large_files:?}");
    let jobs = table(&large, "jobs");
    assert_eq!(jobs.height(), 2000);
    assert_eq!(job_ids(&jobs).len(), 2000);
    assert_eq!(table(&large, "fields").height(), 2000 * 16);
    // A rerun with nothing to do adds no file.
    let stderr = run_ok(&tiny_study(dir.path(), 2000), &large, 2);
    assert!(stderr.contains("0 ran, 2000 resumed"), "{stderr}");
    assert_eq!(files(&large).len(), large_files.len());
}

/// A study whose jobs take a while (about half a second each on one thread).
fn slow_study(dir: &Path) -> PathBuf {
    write_file(
        dir,
        "slow.toml",
        "[study]\nname = \"slow\"\nreplicates = 6\n[model]\ngrid = 32\n\
         [sampler]\niterations = 40000\nthin = 100\n",
    )
}

fn spawn_run(study: &Path, out: &Path, threads: usize) -> Child {
    fieldmc()
        .args(["run", "--quiet", "--no-report", "--threads"])
        .arg(threads.to_string())
        .arg(study)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_second_process_is_refused_naming_the_first_and_a_killed_ones_lock_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let study = slow_study(dir.path());
    let out = dir.path().join("out");
    let mut holder = spawn_run(&study, &out, 1);
    assert!(
        wait_until(&mut holder, Duration::from_secs(60), || !lock_files(&out)
            .is_empty()),
        "the first run never took the folder"
    );
    let pid = holder.id();
    let expected = format!(
        "in use by fieldmc run (pid {pid} on host {}",
        support::host_name()
    );
    for (what, output) in [
        ("a second run", run_output(&study, &out, 1)),
        ("a shard", shard_run(&study, &out, "0/2")),
        ("a merge", merge(&out)),
    ] {
        assert_no_panic(&output, what);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains(&expected),
            "{what} should name the holder:\n{stderr}"
        );
    }
    assert!(
        holder.try_wait().unwrap().is_none(),
        "the holder was disturbed"
    );

    // Killed without a chance to clean up: its lock file stays, stale.
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(lock_files(&out).len(), 1, "the killed run's lock file");
    let stderr = run_ok(&study, &out, 2);
    assert!(
        stderr.contains(&format!(
            "took over the results folder from fieldmc run (pid {pid}"
        )),
        "{stderr}"
    );
    assert!(lock_files(&out).is_empty());
    assert_eq!(table(&out, "jobs").height(), 6);
}

#[test]
fn shards_run_at_once_merge_into_the_tables_of_one_process() {
    let study = fixture("sweep12.toml");
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    run_ok(&study, &reference, 2);
    let ids = job_ids(&table(&reference, "jobs"));
    let in_shard_2 = ids
        .iter()
        .filter(|id| fieldmc::plan::shard_of(id, 3) == 2)
        .count();
    assert!(in_shard_2 > 0 && in_shard_2 < 12, "{in_shard_2}");

    let out = dir.path().join("sharded");
    // Shards 0 and 1 at the same time, into one folder.
    let spawn = |shard: &str| {
        fieldmc()
            .args([
                "run",
                "--quiet",
                "--no-report",
                "--threads",
                "1",
                "--shard",
                shard,
            ])
            .arg(&study)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn("0/3"), spawn("1/3")];
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    assert_eq!(recorded_jobs(&out), 12 - in_shard_2);
    assert!(!out.join("jobs.parquet").exists(), "shards do not assemble");

    let early = merge(&out);
    let stderr = text(&early.stderr);
    assert_eq!(early.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{in_shard_2} of 12 jobs have no result yet"))
            && stderr.contains(&format!("shard 2/3: {in_shard_2} jobs")),
        "{stderr}"
    );
    assert!(!out.join("jobs.parquet").exists());

    let last = shard_run(&study, &out, "2/3");
    let stderr = text(&last.stderr);
    assert!(last.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "shard 2/3: {in_shard_2} jobs: {in_shard_2} ran, 0 resumed"
        )),
        "{stderr}"
    );
    let merged = merge(&out);
    assert!(merged.status.success(), "{}", text(&merged.stderr));
    assert_same_tables(&reference, &out);

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let runs = manifest["runs"].as_array().unwrap();
    let mut shards: Vec<&str> = runs.iter().map(|r| r["shard"].as_str().unwrap()).collect();
    shards.sort();
    assert_eq!(shards, ["0/3", "1/3", "2/3"]);
    for run in runs {
        for field in ["host", "started", "finished", "version", "git_revision"] {
            assert!(run[field].is_string(), "{field} of {run}");
        }
        assert_eq!(run["threads"], 1);
    }
    assert_eq!(manifest["jobs"].as_array().unwrap().len(), 12);
}

/// Rewrites the fieldmc version recorded in every job record of the part logs of `out` that
/// some shard wrote, as if another fieldmc had computed them (the same length keeps the
/// record's layout; the checksum is recomputed). Format: see src/sink/log.rs.
fn forge_version(out: &Path, shard: &str, version: &str) -> usize {
    let mut forged = 0;
    for entry in std::fs::read_dir(out.join("parts")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let header_len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
        let header: serde_json::Value =
            serde_json::from_slice(&bytes[20..20 + header_len]).unwrap();
        if header["shard"] != shard {
            continue;
        }
        let mut at = 20 + header_len;
        while at + 44 <= bytes.len() {
            let len = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().unwrap()) as usize;
            let payload = at + 44..at + 44 + len;
            let meta_len =
                u32::from_le_bytes(bytes[payload.start..payload.start + 4].try_into().unwrap())
                    as usize;
            let meta = payload.start + 4..payload.start + 4 + meta_len;
            let old = format!("\"version\":\"{}\"", env!("CARGO_PKG_VERSION"));
            let new = format!("\"version\":\"{version}\"");
            assert_eq!(old.len(), new.len());
            let json = String::from_utf8(bytes[meta.clone()].to_vec()).unwrap();
            if json.contains(&old) {
                bytes[meta].copy_from_slice(json.replace(&old, &new).as_bytes());
                let hash = blake3::hash(&bytes[payload.clone()]);
                bytes[at + 12..at + 44].copy_from_slice(hash.as_bytes());
                forged += 1;
            }
            at = payload.end;
        }
        std::fs::write(&path, &bytes).unwrap();
    }
    forged
}

#[test]
fn merge_refuses_shards_of_different_fieldmc_versions_and_a_run_recomputes_them() {
    let study = fixture("sweep12.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for shard in ["0/2", "1/2"] {
        let output = shard_run(&study, &out, shard);
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let other = "9.9.9";
    let forged = forge_version(&out, "1/2", other);
    assert!(forged > 0);
    let refused = merge(&out);
    assert_no_panic(&refused, "merge");
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    for needle in [
        "different fieldmc versions",
        &format!("fieldmc {other}"),
        &format!("fieldmc {}", env!("CARGO_PKG_VERSION")),
        "shard 0/2",
        "shard 1/2",
    ] {
        assert!(stderr.contains(needle), "should say {needle:?}:\n{stderr}");
    }
    assert!(!out.join("jobs.parquet").exists());

    let stderr = run_ok(&study, &out, 2);
    assert!(
        stderr.contains(&format!("{forged} came from another fieldmc version"))
            && stderr.contains(&format!("{forged} ran, {} resumed", 12 - forged)),
        "{stderr}"
    );
    assert!(merge(&out).status.success());
}

/// `n` cells of a 32 x 32 count grid from one of the shipped data files.
fn copy_grid(dir: &Path, name: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/finpines_grid32.csv");
    let path = dir.join(name);
    std::fs::copy(source, &path).unwrap();
    path
}

#[test]
fn a_changed_data_file_recomputes_exactly_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    copy_grid(dir.path(), "a.csv");
    let b = copy_grid(dir.path(), "b.csv");
    let study = write_file(
        dir.path(),
        "counts.toml",
        "[study]\nname = \"counts\"\nreplicates = 2\n[model]\ngrid = 32\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"csv\"\npath = \"a.csv\"\n[sampler]\niterations = 300\n\
         [sweep]\n\"data.path\" = [\"a.csv\", \"b.csv\"]\n",
    );
    let out = dir.path().join("out");
    assert!(run_ok(&study, &out, 2).contains("4 ran, 0 resumed"));
    let before = table(&out, "jobs");
    assert!(run_ok(&study, &out, 2).contains("0 ran, 4 resumed"));

    // One count of b.csv changes: its two jobs, and only they, are recomputed.
    let text_b = std::fs::read_to_string(&b).unwrap();
    let mut lines: Vec<String> = text_b.lines().map(str::to_string).collect();
    let row = lines
        .iter()
        .position(|l| l.starts_with("5,5,"))
        .expect("cell (5, 5)");
    let mut fields: Vec<String> = lines[row].split(',').map(str::to_string).collect();
    let count: u64 = fields.last().unwrap().parse().unwrap();
    *fields.last_mut().unwrap() = (count + 7).to_string();
    lines[row] = fields.join(",");
    std::fs::write(&b, lines.join("\n") + "\n").unwrap();
    let stderr = run_ok(&study, &out, 2);
    assert!(
        stderr.contains("2 read a data file that has changed")
            && stderr.contains("2 ran, 2 resumed"),
        "{stderr}"
    );
    let after = table(&out, "jobs");
    let path_of = |df: &polars::prelude::DataFrame, id: &str| {
        rows_of_job(df, id)
            .column("data_path")
            .unwrap()
            .str()
            .unwrap()
            .get(0)
            .unwrap()
            .to_string()
    };
    for id in job_ids(&before) {
        let (old, new) = (rows_of_job(&before, &id), rows_of_job(&after, &id));
        if path_of(&before, &id).ends_with("a.csv") {
            // Kept as it was, timings included.
            assert_same_frame(&old, &new, &format!("job {id} of a.csv"));
        } else {
            let old_walls = old.column("wall_seconds").unwrap().f64().unwrap().get(0);
            let new_walls = new.column("wall_seconds").unwrap().f64().unwrap().get(0);
            assert_ne!(old_walls, new_walls, "job {id} of b.csv was not recomputed");
        }
    }
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let hash_b = blake3::hash(&std::fs::read(&b).unwrap())
        .to_hex()
        .to_string();
    assert!(
        manifest.contains(&hash_b),
        "the manifest records b.csv's hash"
    );
}

#[test]
fn a_failed_job_is_recomputed_and_the_exit_code_says_a_job_failed() {
    let dir = tempfile::tempdir().unwrap();
    // noise_sd = 1e-300 makes every acceptance ratio NaN: that job fails, its sibling does not.
    let study = write_file(
        dir.path(),
        "fails.toml",
        "[study]\nname = \"fails\"\n[model]\ngrid = 4\n[sampler]\niterations = 200\n\
         [sweep]\n\"data.noise_sd\" = [1.0, 1e-300]\n",
    );
    let out = dir.path().join("out");
    for round in 0..2 {
        let output = run_output(&study, &out, 2);
        assert_no_panic(&output, "run");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "round {round}: {stderr}");
        let expected = if round == 0 {
            "2 jobs: 2 ran, 0 resumed, 1 failed"
        } else {
            "2 jobs: 1 ran, 1 resumed, 1 failed"
        };
        assert!(stderr.contains(expected), "round {round}: {stderr}");
        if round == 1 {
            assert!(stderr.contains("1 had failed"), "{stderr}");
        }
        let jobs = table(&out, "jobs");
        let status = support::strings(&jobs, "status");
        assert_eq!(status.len(), 2, "the ok job is written too");
        assert!(status.contains(&Some("ok".to_string())));
        assert!(status.contains(&Some("failed".to_string())));
    }
}

#[test]
fn plan_into_a_pipe_closed_early_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let study = tiny_study(dir.path(), 5000);
    let mut child = fieldmc()
        .arg("plan")
        .arg(&study)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The reader is dropped here, like `head` exiting.
    let output = child.wait_with_output().unwrap();
    assert_no_panic(&output, "fieldmc plan | head");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stderr.is_empty(), "{}", text(&output.stderr));
}

/// Runs `fieldmc run STUDY --out OUT --threads 1 --quiet --no-report` and returns its peak
/// resident memory in bytes, from the kernel's accounting of that one child (`wait4`).
fn run_measuring_peak_memory(study: &Path, out: &Path) -> u64 {
    let child = run_command(study, out, 1).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: both pointers are to live locals of the types wait4 writes; the child is ours and
    // not waited for elsewhere (`child` is only dropped, which neither waits nor kills).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    drop(child);
    usage.ru_maxrss as u64 * 1024
}

/// Kept field draws (`output.field_draws`) are a chunked table: never whole in memory, and the
/// part log holds them more compactly than plain values. 4 chains x 500 draws of 4,096 cells are
/// 8.2 million rows: built whole, the frame alone would take about 390 MB (48 bytes a row) and
/// its plain encoding as much again. Measured: 214 MB peak (49 MB without draws), 40 MB of
/// folder for 23 MB of tables.
#[test]
fn field_draws_take_bounded_memory_and_at_most_the_disk_of_their_tables() {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(
        dir.path(),
        "draws.toml",
        "[study]\nname = \"draws\"\n[model]\ngrid = 64\nlikelihood = \"poisson\"\n\
         [sampler]\nkind = \"mala\"\niterations = 600\nburn_in = 100\nchains = 4\n\
         [output]\nfield_draws = 500\n",
    );
    let out = dir.path().join("out");
    let peak = run_measuring_peak_memory(&study, &out);
    let draws = table(&out, "draws");
    assert_eq!(draws.height(), 4 * 500 * 4096);
    assert!(peak < 400 << 20, "peak resident memory {} MiB", peak >> 20);
    let bytes = |paths: Vec<PathBuf>| -> u64 {
        paths
            .iter()
            .map(|p| out.join(p).metadata().unwrap().len())
            .sum()
    };
    let everything = bytes(files(&out));
    let tables = bytes(
        files(&out)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .collect(),
    );
    assert!(
        everything <= 2 * tables,
        "the results folder holds {everything} bytes for {tables} bytes of tables"
    );
}

/// `output.log_likelihood` makes the pointwise log-likelihood one observation at a time from
/// the stored draws: a D = 64 job with 4 chains x 1,000 stored draws and all 4,096 cells
/// observed, whose whole pointwise matrix would take 125 MiB (16.4 million doubles), peaks
/// within 32 MiB of the same job without it, and reports its LOO. Measured: 81 MiB both.
#[test]
fn the_pointwise_log_likelihood_takes_no_memory_beyond_the_stored_draws() {
    let dir = tempfile::tempdir().unwrap();
    let peak = |log_likelihood: bool| {
        let study = write_file(
            dir.path(),
            &format!("loo_{log_likelihood}.toml"),
            &format!(
                "[study]\nname = \"loo\"\n[model]\ngrid = 64\nlikelihood = \"poisson\"\n\
                 [data]\nsubsample = 1\n\
                 [sampler]\nkind = \"mala\"\niterations = 1100\nburn_in = 100\nchains = 4\n\
                 [output]\nlog_likelihood = {log_likelihood}\n"
            ),
        );
        let out = dir.path().join(format!("out_{log_likelihood}"));
        let peak = run_measuring_peak_memory(&study, &out);
        (peak, table(&out, "jobs"))
    };
    let (without, _) = peak(false);
    let (with, jobs) = peak(true);
    let draws = jobs.column("cell_draws_per_chain").unwrap().i64().unwrap();
    assert_eq!(draws.get(0), Some(1_000));
    let elpd = jobs.column("elpd_loo").unwrap().f64().unwrap().get(0);
    assert!(elpd.is_some_and(f64::is_finite), "elpd_loo {elpd:?}");
    assert!(
        with < without + (32 << 20),
        "peak resident memory {} MiB with the pointwise log-likelihood, {} MiB without",
        with >> 20,
        without >> 20
    );
}
