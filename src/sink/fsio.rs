//! Crash-safe file-system primitives: temporary names, durable writes, atomic renames.
//!
//! Everything the sinks publish follows one pattern: write under a name that starts with
//! [`TEMP_PREFIX`] in the destination folder, flush it to disk, rename it over the final name,
//! then flush the folder so the rename itself survives a power cut. Readers therefore see either
//! the old content or the complete new content under a final name, never a partial file.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::SinkError;

/// Names starting with this prefix are unfinished work; listings skip them and
/// [`remove_temporaries`] deletes them.
pub(crate) const TEMP_PREFIX: &str = ".tmp-";

/// Writes `bytes` to `path` atomically: a temporary file in the same folder is written,
/// synced and renamed over `path`, and the folder is synced. On failure the temporary is
/// removed and `path` keeps its previous content (or stays absent).
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    let temp = temp_sibling(path)?;
    let result = write_new_synced(&temp, bytes).and_then(|()| publish(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// A fresh, unused temporary name next to `path` (same folder, so a rename cannot cross
/// file systems): `.tmp-<file name>-<pid>-<nonce>`.
pub(crate) fn temp_sibling(path: &Path) -> Result<PathBuf, SinkError> {
    let file_name = path.file_name().ok_or_else(|| {
        SinkError::io(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "path has no file name"),
        )
    })?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let name = format!(
        "{TEMP_PREFIX}{}-{}",
        file_name.to_string_lossy(),
        unique_suffix()
    );
    Ok(parent.join(name))
}

/// `<pid>-<nonce>`: distinct across processes and across calls within one process.
pub(crate) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{count}{nanos:09}", std::process::id())
}

/// `text` as a file name component: letters, digits, `.`, `_` and `-` kept, anything else `_`,
/// never starting with a dot, at most 64 characters.
pub(crate) fn safe_component(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, 'x');
    }
    out
}

/// Creates `path` (which must not exist), writes `bytes` and syncs the data to disk.
fn write_new_synced(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    let mut file = create_new(path)?;
    file.write_all(bytes)
        .map_err(|e| SinkError::io("write", path, e))?;
    sync_file(&file, path)
}

/// Opens a new file for writing, failing if it exists.
pub(crate) fn create_new(path: &Path) -> Result<File, SinkError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| SinkError::io("write results to", path, e))
}

/// Flushes a file's data and metadata to the device.
pub(crate) fn sync_file(file: &File, path: &Path) -> Result<(), SinkError> {
    file.sync_all()
        .map_err(|e| SinkError::io("flush to disk", path, e))
}

/// Renames `from` over `to` and syncs the folder that holds `to`.
pub(crate) fn publish(from: &Path, to: &Path) -> Result<(), SinkError> {
    fs::rename(from, to).map_err(|e| SinkError::io("publish", to, e))?;
    sync_dir(to.parent().unwrap_or(Path::new(".")))
}

/// Makes a folder's entries (creations, renames) durable. A no-op where folders cannot be
/// opened as files (Windows).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), SinkError> {
    #[cfg(unix)]
    {
        let handle = File::open(dir).map_err(|e| SinkError::io("open folder", dir, e))?;
        handle
            .sync_all()
            .map_err(|e| SinkError::io("flush to disk", dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// True for the names [`temp_sibling`] makes: [`TEMP_PREFIX`], a name, then `-<pid>-<nonce>`
/// in digits. Other dot-files in a results folder belong to the user and are left alone.
pub(crate) fn is_temporary(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX) else {
        return false;
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut pieces = rest.rsplitn(3, '-');
    let (nonce, pid, stem) = (pieces.next(), pieces.next(), pieces.next());
    nonce.is_some_and(all_digits)
        && pid.is_some_and(all_digits)
        && stem.is_some_and(|s| !s.is_empty())
}

/// Deletes every temporary file or folder directly inside `dir` (left by a crashed run).
/// Returns how many were removed. Only for a process that holds the folder alone (see
/// [`super::lock`]): another live process's temporaries would go too.
pub(crate) fn remove_temporaries(dir: &Path) -> Result<usize, SinkError> {
    let mut removed = 0;
    for entry in read_dir(dir)? {
        let entry = entry.map_err(|e| SinkError::io("list", dir, e))?;
        if !is_temporary(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        remove_path(&path)?;
        removed += 1;
    }
    Ok(removed)
}

/// Removes a file, or a folder with everything in it; absent paths are fine.
pub(crate) fn remove_path(path: &Path) -> Result<(), SinkError> {
    let result = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SinkError::io("remove", path, e)),
        _ => Ok(()),
    }
}

/// Lists a folder with a located error.
pub(crate) fn read_dir(dir: &Path) -> Result<fs::ReadDir, SinkError> {
    fs::read_dir(dir).map_err(|e| SinkError::io("list", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn atomic_write_replaces_content_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.txt");
        atomic_write(&path, b"first").unwrap();
        atomic_write(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        assert_eq!(names_in(dir.path()), vec!["note.txt".to_string()]);
    }

    #[test]
    fn failed_atomic_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        // The destination is a non-empty folder, so the final rename must fail.
        let path = dir.path().join("occupied");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), b"x").unwrap();
        let error = atomic_write(&path, b"data").unwrap_err();
        assert!(error.to_string().contains("occupied"), "{error}");
        assert_eq!(names_in(dir.path()), vec!["occupied".to_string()]);
    }

    #[test]
    fn temporary_names_are_unique_and_recognised() {
        let path = Path::new("/some/where/jobs.parquet");
        let a = temp_sibling(path).unwrap();
        let b = temp_sibling(path).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), path.parent());
        assert!(is_temporary(&a.file_name().unwrap().to_string_lossy()));
        assert!(!is_temporary("jobs.parquet"));
        assert!(!is_temporary(".tmp-notes"));
        assert!(!is_temporary(".tmp--1-2"));
        assert!(!is_temporary(".tmp-a-1-x"));
        assert!(is_temporary(".tmp-jobs.parquet-12-345"));
    }

    #[test]
    fn remove_temporaries_keeps_final_names() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".tmp-a-1-2"), b"x").unwrap();
        fs::create_dir_all(dir.path().join(".tmp-job-3-4/deep")).unwrap();
        fs::write(dir.path().join("keep.parquet"), b"x").unwrap();
        assert_eq!(remove_temporaries(dir.path()).unwrap(), 2);
        assert_eq!(names_in(dir.path()), vec!["keep.parquet".to_string()]);
    }
}
