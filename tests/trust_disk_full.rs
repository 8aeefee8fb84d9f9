//! A full disk in the middle of a run, through the real binary: `fieldmc run` into a small tmpfs
//! that its field draws overflow after a few jobs stops with exit code 1 and an error naming the
//! part log and "no space left on device", having cut the partial record back (the log ends at
//! its last complete record) and recorded the jobs that finished before; copied to a larger
//! disk, the same command resumes from exactly those jobs, notes the bytes a damaged log ends
//! with (as does `fieldmc merge`, and the manifest), and its tables equal those of a fresh run
//! there (`fieldmc compare --tolerance exact`).
//!
//! The tmpfs is mounted in a new user and mount namespace (`unshare`, util-linux) where the
//! kernel allows it, so that nothing outlives the test even if it is killed; otherwise, as root,
//! directly, and unmounted by a guard when the test ends, however it ends. Where neither works the
//! test says so on stderr and passes without running.
#![cfg(target_os = "linux")]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{assert_no_panic, assert_same_tables, binary, fieldmc, run_ok, text, write_file};

const THREADS: usize = 2;
/// The study's jobs.
const JOBS: usize = 8;
/// The small disk: room for the run's small files and a few jobs' records, not for all eight.
const SMALL_DISK: &str = "2500k";

/// Eight jobs of a 16 x 16 grid that each keep 400 draws per chain of every cell: about 780 KB
/// per job's record, so three fit on the small disk; under a second each.
fn study(dir: &Path) -> PathBuf {
    write_file(
        dir,
        "disk_full.toml",
        &format!(
            "[study]\nname = \"disk_full\"\nseed = 17\nreplicates = {JOBS}\n\
             [model]\ngrid = 16\n\
             [sampler]\niterations = 1000\nburn_in = 200\nthin = 2\nchains = 2\n\
             [output]\nfield_draws = 400\n"
        ),
    )
}

/// The shell script that runs the study on a tmpfs mounted at `$2` and copies the results folder
/// out to `$5`: `$1` the tmpfs size, `$3` the binary, `$4` the study. Exit 97 when the tmpfs
/// cannot be mounted, 98 when the copy fails, else fieldmc's own exit code. With `mount` false
/// the tmpfs is mounted already.
fn script(mount: bool) -> String {
    let mount = if mount {
        "mount -t tmpfs -o size=\"$1\" tmpfs \"$2\" || exit 97\n"
    } else {
        ""
    };
    format!(
        "{mount}\"$3\" run --quiet --no-report --threads {THREADS} \"$4\" --out \"$2/out\"\n\
         code=$?\n\
         cp -a \"$2/out\" \"$5\" || exit 98\n\
         exit $code\n"
    )
}

/// A tmpfs mounted by this process; unmounted (lazily if busy) when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Runs `study` with its results folder at `<mount point>/out` on a tmpfs of [`SMALL_DISK`],
/// copies the folder to `copy`, and returns the run's output and its results folder's path (as
/// the run named it). `None`, having said why on stderr, where no tmpfs can be mounted.
fn run_on_small_disk(study: &Path, mount_point: &Path, copy: &Path) -> Option<(Output, PathBuf)> {
    let args = |command: &mut Command| {
        command
            .arg(SMALL_DISK)
            .arg(mount_point)
            .arg(binary())
            .arg(study)
            .arg(copy);
    };
    let out = mount_point.join("out");
    let mut namespaced = Command::new("unshare");
    namespaced.args(["--user", "--map-root-user", "--mount", "sh", "-c"]);
    namespaced.arg(script(true)).arg("sh");
    args(&mut namespaced);
    let why_not_namespace = match namespaced.output() {
        Ok(output) if output.status.code() == Some(98) => {
            panic!(
                "copying the results off the tmpfs failed:\n{}",
                text(&output.stderr)
            )
        }
        // fieldmc ran (whatever its exit code): the script copied its results folder.
        Ok(output) if copy.exists() => return Some((output, out)),
        // unshare refused (no user namespaces here) or the mount failed (exit 97).
        Ok(output) => text(&output.stderr),
        Err(error) => format!("unshare cannot start: {error}"),
    };
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o"])
        .arg(format!("size={SMALL_DISK}"))
        .arg("tmpfs")
        .arg(mount_point)
        .output();
    let why_not_mount = match mounted {
        Ok(output) if output.status.success() => {
            let _guard = Mounted(mount_point.to_path_buf());
            let mut direct = Command::new("sh");
            direct.arg("-c").arg(script(false)).arg("sh");
            args(&mut direct);
            let output = direct.output().expect("sh starts");
            assert_ne!(
                output.status.code(),
                Some(98),
                "copying the results off the tmpfs failed:\n{}",
                text(&output.stderr)
            );
            return Some((output, out));
        }
        Ok(output) => text(&output.stderr),
        Err(error) => format!("mount cannot start: {error}"),
    };
    eprintln!(
        "SKIPPED: no small tmpfs can be mounted here, so the full-disk test did not run.\n\
         unshare --user --mount: {}\nmount as this user: {}",
        why_not_namespace.trim(),
        why_not_mount.trim()
    );
    None
}

#[test]
fn a_full_disk_stops_the_run_naming_the_log_and_a_larger_disk_resumes_it_to_a_fresh_runs_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let study = study(tmp.path());
    let mount_point = tmp.path().join("small-disk");
    std::fs::create_dir(&mount_point).unwrap();
    let resumed = tmp.path().join("resumed");
    let Some((output, out)) = run_on_small_disk(&study, &mount_point, &resumed) else {
        return;
    };
    assert_no_panic(&output, "the run on a full disk");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let parts = out.join("parts");
    assert!(
        stderr.contains(&format!(
            "error: cannot write results to {}/",
            parts.display()
        )) && stderr.contains(".log: no space left on device"),
        "the error should name the part log and the full disk:\n{stderr}"
    );

    // The log ends at its last complete record, and holds every job the run says it recorded.
    let index = fieldmc::sink::PartIndex::read(&resumed).unwrap();
    assert_eq!(index.runs.len(), 1);
    assert_eq!(
        index.runs[0].ignored_bytes, 0,
        "the partial record was not cut back"
    );
    let recorded = index.len();
    assert!(
        (2..JOBS).contains(&recorded),
        "the disk should fill after a few of the {JOBS} jobs, not {recorded}:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "the run stopped: {recorded} of the {JOBS} jobs it had to run were recorded"
        )),
        "{recorded} jobs are recorded:\n{stderr}"
    );
    assert!(
        !resumed.join("jobs.parquet").exists() && !resumed.join("manifest.json").exists(),
        "a stopped run assembles nothing"
    );

    // A damaged tail (as a power cut may leave) is noted at resume with its log and size.
    let log = index.runs[0].log.clone();
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut file, b"JOB1\x07torn").unwrap();
    drop(file);

    let stderr = run_ok(&study, &resumed, THREADS);
    assert!(
        stderr.contains(&format!(
            "{} ran, {recorded} resumed, 0 failed",
            JOBS - recorded
        )),
        "the resumed run should reuse the {recorded} recorded jobs:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!("ignored the last 9 bytes of {}", log.display())),
        "the resumed run should note the damaged tail:\n{stderr}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(resumed.join("manifest.json")).unwrap())
            .unwrap();
    let reused = manifest["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|job| job["resumed"] == true)
        .count();
    assert_eq!(reused, recorded, "the manifest's resumed jobs");
    let ignored: Vec<u64> = manifest["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|run| run["ignored_bytes"].as_u64())
        .collect();
    assert_eq!(ignored, [9], "the manifest's note of the damaged tail");

    // `merge` notes it too, and keeps it in the manifest it writes.
    let merged = fieldmc()
        .args(["merge", "--no-report"])
        .arg(&resumed)
        .output()
        .unwrap();
    let stderr = text(&merged.stderr);
    assert!(merged.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("ignored the last 9 bytes of {}", log.display())),
        "merge should note the damaged tail:\n{stderr}"
    );
    let manifest = std::fs::read_to_string(resumed.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"ignored_bytes\": 9"), "{manifest}");

    let fresh = tmp.path().join("fresh");
    run_ok(&study, &fresh, THREADS);
    assert_same_tables(&fresh, &resumed);
}
