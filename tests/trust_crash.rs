//! Crash safety through the real binary: `fieldmc run` killed with SIGKILL at several moments of a
//! 16-job study — each reached by watching the folder (the run's lock file appears, its log holds
//! n jobs, it holds them all and the run is assembling), not by sleeping — never leaves a partial
//! file under a final name nor loses a recorded job, and a rerun (taking over the killed run's
//! stale lock) completes the study with tables equal to those of an uninterrupted run. An output
//! folder that cannot be created fails with exit code 1 and a message naming it, before any job
//! runs.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use support::{
    assert_no_panic, assert_same_tables, fieldmc, lock_files, read_parquet, recorded_jobs, run_ok,
    text, tree, wait_until,
};

const THREADS: usize = 2;
const JOBS: usize = 16;

fn study() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/trust/crash16.toml")
}

fn spawn_run(study: &Path, out: &Path) -> Child {
    fieldmc()
        .args(["run", "--quiet", "--no-report", "--threads"])
        .arg(THREADS.to_string())
        .arg(study)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fieldmc binary starts")
}

fn is_temporary(name: &str) -> bool {
    name.starts_with(".tmp-")
}

/// When to kill a run.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// As soon as the run holds the folder (its lock file exists): before or during the first jobs.
    Started,
    /// Once the part logs hold at least this many jobs.
    Recorded(usize),
}

/// Waits for `moment`, polling; gives up (and lets the caller kill anyway) after `limit`.
fn wait_for(moment: Moment, child: &mut Child, out: &Path, limit: Duration) {
    match moment {
        Moment::Started => wait_until(child, limit, || !lock_files(out).is_empty()),
        Moment::Recorded(n) => wait_until(child, limit, || recorded_jobs(out) >= n),
    };
}

/// Everything under a final name in a results folder is complete: the part logs read (a torn
/// last record is allowed: the reader ignores it), the plan lists every job, every assembled
/// `*.parquet` reads, `manifest.json` parses and `study.toml` is the study. Files under
/// temporary names are allowed (a lone run deletes them).
fn assert_nothing_partial(out: &Path, study_text: &str, when: &str) {
    for relative in tree(out) {
        let path = out.join(&relative);
        let name = relative.file_name().unwrap().to_string_lossy().into_owned();
        let in_temporary = relative
            .components()
            .any(|c| is_temporary(&c.as_os_str().to_string_lossy()));
        if in_temporary {
            continue;
        }
        let parent = relative
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        match (parent.as_str(), name.as_str()) {
            ("", "parts") | ("", "locks") | ("locks", _) => {}
            ("", "manifest.json") => {
                let text = std::fs::read_to_string(&path).unwrap();
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(&text);
                assert!(parsed.is_ok(), "{when}: manifest.json is partial:\n{text}");
            }
            ("", "study.toml") => assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                study_text,
                "{when}: study.toml is partial"
            ),
            ("", _) if name.ends_with(".parquet") => {
                let read = read_parquet(&path);
                assert!(read.is_ok(), "{when}: {name} unreadable: {read:?}");
            }
            ("parts", "plan.tsv") => {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.ends_with('\n'), "{when}: plan.tsv is partial");
                assert_eq!(
                    text.lines().count(),
                    JOBS + 1,
                    "{when}: plan.tsv is partial"
                );
            }
            ("parts", _) if name.ends_with(".log") => {}
            _ => panic!("{when}: unexpected {}", relative.display()),
        }
    }
    fieldmc::sink::PartIndex::read(out)
        .unwrap_or_else(|e| panic!("{when}: the part logs do not read: {e}"));
}

#[test]
fn sigkill_at_any_moment_leaves_no_partial_file_and_a_rerun_equals_an_uninterrupted_run() {
    let study = study();
    let study_text = std::fs::read_to_string(&study).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    run_ok(&study, &reference, THREADS);

    let out = tmp.path().join("interrupted");
    let moments = [
        Moment::Started,
        Moment::Recorded(1),
        Moment::Recorded(6),
        Moment::Recorded(11),
        Moment::Recorded(JOBS),
    ];
    let mut killed_while_running = 0;
    let mut last_kill_hit = false;
    let mut recorded = Vec::new();
    for moment in moments {
        let mut child = spawn_run(&study, &out);
        wait_for(moment, &mut child, &out, Duration::from_secs(60));
        let still_running = child.try_wait().unwrap().is_none();
        child.kill().unwrap(); // SIGKILL on unix
        let status = child.wait().unwrap();
        last_kill_hit = still_running;
        if still_running {
            killed_while_running += 1;
        } else {
            assert!(
                status.success(),
                "{moment:?}: the run failed by itself: {status:?}"
            );
        }
        let when = format!("after a kill at {moment:?}");
        assert_nothing_partial(&out, &study_text, &when);
        recorded.push(recorded_jobs(&out));
    }
    eprintln!("recorded jobs after each kill: {recorded:?}");
    assert!(
        killed_while_running >= 3,
        "only {killed_while_running} kills hit a running study (jobs after each: {recorded:?})"
    );
    assert!(
        recorded.windows(2).all(|w| w[0] <= w[1]),
        "a kill lost recorded jobs: {recorded:?}"
    );

    let stderr = run_ok(&study, &out, THREADS);
    let resumed = *recorded.last().unwrap();
    assert!(
        stderr.contains(&format!("{} ran, {resumed} resumed", JOBS - resumed)),
        "the rerun should resume the {resumed} recorded jobs:\n{stderr}"
    );
    if last_kill_hit {
        assert!(
            stderr.contains("took over the results folder from fieldmc run (pid"),
            "the rerun should say it took over the killed run's lock:\n{stderr}"
        );
    }
    assert_same_tables(&reference, &out);
    let leftovers: Vec<PathBuf> = tree(&out)
        .into_iter()
        .filter(|p| {
            p.components()
                .any(|c| is_temporary(&c.as_os_str().to_string_lossy()))
        })
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
    assert!(
        lock_files(&out).is_empty(),
        "lock files left: {:?}",
        lock_files(&out)
    );
}

/// Whether this process can create files in a folder with mode 0o500 (root can).
#[cfg(unix)]
fn permissions_are_enforced(tmp: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let probe = tmp.join("probe");
    std::fs::create_dir(&probe).unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o500)).unwrap();
    let enforced = std::fs::write(probe.join("x"), b"x").is_err();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o700)).unwrap();
    enforced
}

/// Runs the small study into `out`, which cannot be written; expects exit 1 and `must_say`.
fn assert_unwritable(out: &Path, must_say: &[String]) {
    assert_unwritable_as(support::fieldmc(), out, must_say);
}

/// [`assert_unwritable`] with the binary started by `command` (e.g. as another user).
fn assert_unwritable_as(mut command: std::process::Command, out: &Path, must_say: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(
        dir.path(),
        "small.toml",
        "[model]\ngrid = 4\n[sampler]\niterations = 200\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Another user must be able to read the study.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let output = command
        .args(["run", "--quiet", "--no-report", "--threads", "1"])
        .arg(&study)
        .arg("--out")
        .arg(out)
        .output()
        .expect("the fieldmc binary starts");
    assert_no_panic(&output, "unwritable output");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for text in must_say {
        assert!(
            stderr.contains(text.as_str()),
            "should say {text:?}:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("jobs:"),
        "jobs ran before the folder was checked:\n{stderr}"
    );
}

/// The binary started as the unprivileged user nobody (util-linux `setpriv`), for a test that
/// runs as root, which ignores permission bits. The binary is copied into `dir` (made
/// world-readable) first, so nobody can reach it wherever the build lives. `None` where setpriv
/// cannot start it.
#[cfg(unix)]
fn as_nobody(dir: &Path) -> Option<std::process::Command> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).ok()?;
    let binary = dir.join("fieldmc");
    std::fs::copy(support::binary(), &binary).ok()?;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).ok()?;
    let command = || {
        let mut command = std::process::Command::new("setpriv");
        command
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&binary);
        command
    };
    let works = command()
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then(command)
}

#[test]
fn an_output_folder_that_cannot_be_created_fails_with_exit_1_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"a regular file").unwrap();
    // Below a regular file: no user, root included, can create this folder.
    let below_file = file.join("sub");
    assert_unwritable(
        &below_file,
        &[
            format!("cannot create results folder {}", below_file.display()),
            "not a directory".to_string(),
        ],
    );
    // The regular file itself as the output folder.
    assert_unwritable(&file, &[format!("{}", file.display())]);
    assert_eq!(std::fs::read(&file).unwrap(), b"a regular file");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Root ignores permission bits: as root, the binary runs as nobody, whom they bind.
        // Where nobody may run the copied binary: the system's temporary folder, or (if that
        // is mounted noexec) one inside the build's target folder.
        let copies = [
            tempfile::tempdir().unwrap(),
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        ];
        let command = if permissions_are_enforced(tmp.path()) {
            Some(support::fieldmc())
        } else {
            copies.iter().find_map(|copy| as_nobody(copy.path()))
        };
        let Some(command) = command else {
            panic!(
                "permission bits are not enforced for this user and setpriv cannot start the \
                 binary as nobody: the permission check cannot run here"
            );
        };
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let locked = tmp.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = locked.join("out");
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_unwritable_as(
                command,
                &out,
                &[
                    format!("{}", out.display()),
                    "permission denied".to_string(),
                ],
            )
        }));
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
        outcome.unwrap();
    }
}
