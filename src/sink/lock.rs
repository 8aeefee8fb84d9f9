//! Who is using a results folder: one lock file per live process under `locks/`.
//!
//! A process that runs a study, a shard or a merge creates `locks/<host>-<pid>-<nonce>.lock`
//! holding a [`Holder`] (JSON), and keeps an exclusive advisory lock (`flock`) on that file for as
//! long as it works in the folder. The operating system drops the advisory lock when the process
//! ends, however it ends (SIGKILL included), so a lock file whose advisory lock can be taken
//! belongs to a dead process: it is stale and is removed ("taken over"). On NFS v4 and the usual
//! cluster file systems `flock` reaches across machines; where a file system does not support it,
//! a holder on this host is checked by its pid, and one on another host is taken as alive.
//!
//! Who may share a folder: shards of one study (same study text, same shard count, different
//! shard index) with each other; nothing else. Lock files are created and inspected under
//! `locks/guard`, itself locked briefly, so two processes arriving at once cannot both decide
//! that the folder is free.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::SinkError;
use super::fsio;

const LOCKS: &str = "locks";
const GUARD: &str = "guard";
const LOCK_EXTENSION: &str = "lock";

/// What a process does in the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Purpose {
    /// `fieldmc run` of a whole study.
    Run,
    /// `fieldmc run --shard index/count`.
    Shard { index: u32, count: u32 },
    /// `fieldmc merge`.
    Merge,
}

/// The content of a lock file: enough to name the holder in an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Holder {
    pub(crate) pid: u32,
    pub(crate) host: String,
    pub(crate) purpose: Purpose,
    /// BLAKE3 of the study file's text (merge: empty).
    pub(crate) study_hash: String,
    /// UTC start time.
    pub(crate) since: String,
}

impl Holder {
    /// This process, now.
    pub(crate) fn this_process(purpose: Purpose, study_hash: &str) -> Self {
        Holder {
            pid: std::process::id(),
            host: host_name(),
            purpose,
            study_hash: study_hash.to_string(),
            since: crate::clock::utc_timestamp(std::time::SystemTime::now()),
        }
    }

    /// `fieldmc run (pid 123 on host node7, since ...)`.
    pub(crate) fn describe(&self) -> String {
        let what = match &self.purpose {
            Purpose::Run => "fieldmc run".to_string(),
            Purpose::Shard { index, count } => format!("fieldmc run --shard {index}/{count}"),
            Purpose::Merge => "fieldmc merge".to_string(),
        };
        format!(
            "{what} (pid {} on host {}, since {})",
            self.pid, self.host, self.since
        )
    }

    fn may_share_with(&self, other: &Holder) -> bool {
        match (&self.purpose, &other.purpose) {
            (
                Purpose::Shard { index, count },
                Purpose::Shard {
                    index: other_index,
                    count: other_count,
                },
            ) => {
                self.study_hash == other.study_hash && count == other_count && index != other_index
            }
            _ => false,
        }
    }
}

/// The folder held by this process; released (and its lock file removed) when dropped.
#[derive(Debug)]
pub(crate) struct FolderLock {
    path: PathBuf,
    file: Option<File>,
    /// Stale holders whose lock files were removed when this lock was taken.
    pub(crate) taken_over: Vec<Holder>,
    /// Whether no other live process held the folder when this lock was taken.
    pub(crate) alone: bool,
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Remove the file while still holding its lock, so nobody sees it unlocked first.
        let _ = fs::remove_file(&self.path);
        drop(self.file.take());
    }
}

/// Takes `root`'s lock for `me`, or fails with [`SinkError::Locked`] naming a live holder that
/// may not share the folder.
pub(crate) fn acquire(root: &Path, me: Holder) -> Result<FolderLock, SinkError> {
    let dir = root.join(LOCKS);
    fs::create_dir_all(&dir).map_err(|e| SinkError::io("create results folder", &dir, e))?;
    let guard_path = dir.join(GUARD);
    let guard = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&guard_path)
        .map_err(|e| SinkError::io("lock", &guard_path, e))?;
    // Blocks only while another process is inside this function.
    if let Err(e) = guard.lock()
        && e.kind() != std::io::ErrorKind::Unsupported
    {
        return Err(SinkError::io("lock", &guard_path, e));
    }
    let mut taken_over = Vec::new();
    let mut alone = true;
    for entry in fsio::read_dir(&dir)? {
        let entry = entry.map_err(|e| SinkError::io("list", &dir, e))?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != LOCK_EXTENSION) {
            continue;
        }
        let Some((holder, alive)) = inspect(&path)? else {
            continue;
        };
        if !alive {
            fsio::remove_path(&path)?;
            taken_over.push(holder);
            continue;
        }
        if !me.may_share_with(&holder) {
            return Err(SinkError::Locked {
                root: root.to_path_buf(),
                holder: holder.describe(),
                lock_file: path,
            });
        }
        alone = false;
    }
    let name = format!(
        "{}-{}.{LOCK_EXTENSION}",
        super::fsio::safe_component(&me.host),
        fsio::unique_suffix()
    );
    let path = dir.join(name);
    let mut file = fsio::create_new(&path)?;
    file.write_all(&serde_json::to_vec(&me)?)
        .map_err(|e| SinkError::io("write", &path, e))?;
    fsio::sync_file(&file, &path)?;
    match file.try_lock() {
        Ok(()) | Err(TryLockError::Error(_)) => {}
        Err(TryLockError::WouldBlock) => unreachable!("a file this process just created"),
    }
    drop(guard);
    Ok(FolderLock {
        path,
        file: Some(file),
        taken_over,
        alone,
    })
}

/// The holder recorded in a lock file and whether it is alive; `None` when the file vanished or
/// is still being written (its creator holds the guard, so that cannot be seen here) or unreadable.
fn inspect(path: &Path) -> Result<Option<(Holder, bool)>, SinkError> {
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SinkError::io("read", path, e)),
    };
    let text = fs::read_to_string(path).unwrap_or_default();
    let holder: Option<Holder> = serde_json::from_str(&text).ok();
    let alive = match file.try_lock() {
        Ok(()) => false,
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => holder.as_ref().is_some_and(alive_by_pid),
    };
    let holder = holder.unwrap_or_else(|| Holder {
        pid: 0,
        host: "unknown".into(),
        purpose: Purpose::Run,
        study_hash: String::new(),
        since: "unknown".into(),
    });
    Ok(Some((holder, alive)))
}

/// Without advisory locks: a holder on this host is alive while its pid exists; one on another
/// host cannot be checked and counts as alive.
fn alive_by_pid(holder: &Holder) -> bool {
    if holder.host != host_name() {
        return true;
    }
    Path::new("/proc").join(holder.pid.to_string()).exists() || !Path::new("/proc/self").exists()
}

/// This machine's name (`/etc/hostname`, `$HOSTNAME`, else `localhost`).
pub fn host_name() -> String {
    let from_file = fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    from_file
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(index: u32, count: u32, study: &str) -> Holder {
        Holder::this_process(Purpose::Shard { index, count }, study)
    }

    #[test]
    fn a_second_run_is_refused_naming_the_first_and_allowed_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path(), Holder::this_process(Purpose::Run, "s")).unwrap();
        assert!(first.alone && first.taken_over.is_empty());
        let error = acquire(dir.path(), Holder::this_process(Purpose::Run, "s")).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id()))
                && text.contains(&host_name())
                && text.contains("fieldmc run"),
            "{text}"
        );
        drop(first);
        let again = acquire(dir.path(), Holder::this_process(Purpose::Merge, "")).unwrap();
        assert!(again.taken_over.is_empty(), "a released lock is not stale");
    }

    #[test]
    fn shards_of_one_study_share_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let a = acquire(dir.path(), shard(0, 3, "s")).unwrap();
        let b = acquire(dir.path(), shard(1, 3, "s")).unwrap();
        assert!(a.alone && !b.alone);
        for refused in [
            shard(1, 3, "s"),
            shard(2, 4, "s"),
            shard(2, 3, "other"),
            Holder::this_process(Purpose::Run, "s"),
            Holder::this_process(Purpose::Merge, ""),
        ] {
            let result = acquire(dir.path(), refused.clone());
            assert!(
                matches!(result, Err(SinkError::Locked { .. })),
                "{refused:?}"
            );
        }
        drop((a, b));
        assert!(acquire(dir.path(), Holder::this_process(Purpose::Merge, "")).is_ok());
    }

    #[test]
    fn a_lock_file_nobody_holds_is_stale_and_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join(LOCKS);
        fs::create_dir_all(&locks).unwrap();
        let dead = Holder {
            pid: 999_999,
            host: "gone".into(),
            purpose: Purpose::Run,
            study_hash: "s".into(),
            since: "2024-01-01T00:00:00Z".into(),
        };
        fs::write(
            locks.join("gone-1-2.lock"),
            serde_json::to_vec(&dead).unwrap(),
        )
        .unwrap();
        let lock = acquire(dir.path(), Holder::this_process(Purpose::Run, "s")).unwrap();
        assert_eq!(lock.taken_over, vec![dead]);
        assert!(!locks.join("gone-1-2.lock").exists());
        let path = lock.path.clone();
        drop(lock);
        assert!(!path.exists(), "released lock files are removed");
    }
}
