//! The one error type of the sinks: every failure names the path and what was being done to it.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a results folder could not be written or read.
#[derive(Debug, Error)]
pub enum SinkError {
    /// An operating-system call failed; `reason` is a plain-language description of `source`
    /// ("no space left on device", "permission denied", ...).
    #[error("cannot {action} {}: {reason}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        reason: String,
        #[source]
        source: io::Error,
    },
    /// A write failed in the middle of a record and cutting the partial record off failed too:
    /// readers ignore it (a torn tail), and nothing more is appended.
    #[error(
        "cannot write results to {}: {reason}; cutting off the partial record failed too \
         ({cut}), so readers will ignore it as a torn tail",
        path.display()
    )]
    TornAppend {
        path: PathBuf,
        reason: String,
        cut: String,
        #[source]
        source: io::Error,
    },
    /// A part log whose writer stopped appending after a failed write or flush.
    #[error(
        "not appended to {}: an earlier write to it failed ({reason}), and nothing is appended \
         after a failed write",
        path.display()
    )]
    Stopped { path: PathBuf, reason: String },
    /// polars refused to encode or decode a table for a reason other than I/O.
    #[error("cannot {action} {}: {message}", path.display())]
    Parquet {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
    /// A job id or table name that cannot safely become a file name.
    #[error(
        "invalid {what} {name:?}: use 1 to 128 letters, digits, '_', '-' or '.', not starting with '.'"
    )]
    InvalidName { what: &'static str, name: String },
    /// The same table name was given twice for one job.
    #[error("job {job_id}: table {table:?} given more than once")]
    DuplicateTable { job_id: String, table: String },
    /// Two parts disagree on a column's type, so the table cannot be assembled.
    #[error(
        "cannot assemble {table}: column {column:?} is {expected} in earlier jobs but {found} in job {job_id}"
    )]
    SchemaConflict {
        table: String,
        column: String,
        job_id: String,
        expected: String,
        found: String,
    },
    /// polars could not stack the parts of a table.
    #[error("cannot assemble {table}: {message}")]
    Assemble { table: String, message: String },
    /// A table has a column of a type the part logs cannot hold.
    #[error(
        "table {table}: column {column:?} has type {dtype}, which fieldmc cannot store (it stores \
         null, boolean, i32, i64, u32, u64, f32, f64 and text columns)"
    )]
    UnsupportedColumn {
        table: String,
        column: String,
        dtype: String,
    },
    /// A table could not be encoded for its part log.
    #[error("cannot encode table {table}: {message}")]
    Encode { table: String, message: String },
    /// A file fieldmc wrote no longer reads as it was written.
    #[error("{} is damaged: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// Another live process works in the results folder.
    #[error(
        "the results folder {} is in use by {holder}; wait until it ends or choose another \
         folder with --out (if that process is gone but its machine cannot be reached, remove \
         {})",
        root.display(),
        lock_file.display()
    )]
    Locked {
        root: PathBuf,
        holder: String,
        lock_file: PathBuf,
    },
    /// Shards or runs whose records would be merged disagree on fieldmc's version or on data.
    #[error("cannot merge {}: {message}", root.display())]
    Inconsistent { root: PathBuf, message: String },
    /// `fieldmc merge` on a folder that no run has written into.
    #[error("{} holds no study run by fieldmc (no parts/plan.tsv); run `fieldmc run` first", root.display())]
    NoPlan { root: PathBuf },
    /// The manifest could not be encoded as JSON.
    #[error("cannot encode the manifest: {0}")]
    Manifest(#[from] serde_json::Error),
}

impl SinkError {
    /// Wraps an I/O error with the action and path it concerns.
    pub(crate) fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        SinkError::Io {
            action,
            path: path.to_path_buf(),
            reason: describe_io_error(&source),
            source,
        }
    }

    /// The I/O error kind behind this error, if it is one.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            SinkError::Io { source, .. } | SinkError::TornAppend { source, .. } => {
                Some(source.kind())
            }
            _ => None,
        }
    }
}

/// A short, lower-case description of an I/O error, without the "(os error N)" noise for the
/// kinds a user can act on.
pub(crate) fn describe_io_error(error: &io::Error) -> String {
    use io::ErrorKind as K;
    let plain = match error.kind() {
        K::StorageFull => "no space left on device",
        K::QuotaExceeded => "disk quota exceeded",
        K::PermissionDenied => "permission denied",
        K::ReadOnlyFilesystem => "read-only file system",
        K::NotFound => "no such file or directory",
        K::AlreadyExists => "already exists",
        K::NotADirectory => "not a directory",
        K::IsADirectory => "is a directory",
        K::DirectoryNotEmpty => "directory not empty",
        K::FileTooLarge => "file too large",
        _ => return error.to_string(),
    };
    plain.to_string()
}

/// Checks that `name` is usable as one path component that no listing will mistake for a
/// temporary: no separators, no `..`, no leading dot.
pub(crate) fn check_name(what: &'static str, name: &str) -> Result<(), SinkError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let valid = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name.chars().all(allowed);
    if valid {
        Ok(())
    } else {
        Err(SinkError::InvalidName {
            what,
            name: name.to_string(),
        })
    }
}
