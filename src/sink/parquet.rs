//! Parquet reading, and the error plumbing of Parquet writing, with I/O errors kept intact.
//!
//! polars turns an I/O failure inside its Parquet writer into a text-only error, which would
//! hide "no space left on device" behind an encoder message. Writers therefore write through an
//! [`ErrorKeepingWriter`] that remembers the first I/O error, and [`polars_error`] reports that
//! error (with its kind) when the encoder fails.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use polars::prelude::{DataFrame, ParquetReader, PolarsError, SerReader};

use super::error::SinkError;

/// Reads a whole Parquet file into a [`DataFrame`].
pub(crate) fn read_parquet(path: &Path) -> Result<DataFrame, SinkError> {
    let file = File::open(path).map_err(|e| SinkError::io("read", path, e))?;
    ParquetReader::new(file)
        .finish()
        .map_err(|e| polars_error("read", path, e, None))
}

/// Prefers the I/O error seen by the writer (it has a kind) over polars' text.
pub(crate) fn polars_error(
    action: &'static str,
    path: &Path,
    error: PolarsError,
    io_seen: Option<io::Error>,
) -> SinkError {
    if let Some(io_error) = io_seen {
        return SinkError::io(action, path, io_error);
    }
    match error {
        PolarsError::IO { error, .. } => SinkError::io(
            action,
            path,
            io::Error::new(error.kind(), error.to_string()),
        ),
        other => SinkError::Parquet {
            action,
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    }
}

/// A writer that remembers the first I/O error it returned.
pub(crate) struct ErrorKeepingWriter<W> {
    inner: W,
    first_error: Option<io::Error>,
}

impl<W: Write> ErrorKeepingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        ErrorKeepingWriter {
            inner,
            first_error: None,
        }
    }

    pub(crate) fn take_error(&mut self) -> Option<io::Error> {
        self.first_error.take()
    }

    pub(crate) fn into_inner(self) -> W {
        self.inner
    }

    fn keep<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(error) = &result
            && self.first_error.is_none()
        {
            self.first_error = Some(io::Error::new(error.kind(), error.to_string()));
        }
        result
    }
}

impl<W: Write> Write for ErrorKeepingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.keep(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.keep(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn reading_garbage_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        std::fs::write(&path, b"this is not parquet").unwrap();
        let error = read_parquet(&path).unwrap_err();
        assert!(error.to_string().contains("bad.parquet"), "{error}");
    }
}
