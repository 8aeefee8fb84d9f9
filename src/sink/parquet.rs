//! Parquet encoding and decoding of one table, with I/O errors kept intact.
//!
//! polars turns an I/O failure inside its Parquet writer into a text-only error, which would
//! hide "no space left on device" behind an encoder message. [`write_parquet_to`] therefore
//! writes through a [`ErrorKeepingWriter`] that remembers the first I/O error, and reports that
//! error (with its kind) when the encoder fails.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use polars::prelude::{DataFrame, ParquetReader, ParquetWriter, PolarsError, SerReader};

use super::error::SinkError;
use super::fsio;

/// Reads a whole Parquet file into a [`DataFrame`].
pub fn read_parquet(path: &Path) -> Result<DataFrame, SinkError> {
    let file = File::open(path).map_err(|e| SinkError::io("read", path, e))?;
    ParquetReader::new(file)
        .finish()
        .map_err(|e| polars_error("read", path, e, None))
}

/// Whether polars may encode a table's columns on its own thread pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// On the calling thread: for per-job parts, written from the job's worker thread, which
    /// must not fan out (one job per thread).
    Serial,
    /// Columns in parallel: for the assembled tables, written after all jobs.
    Parallel,
}

/// Creates `path` (which must not exist), encodes `df` into it and syncs it to disk.
pub(crate) fn write_parquet_new(
    path: &Path,
    df: &mut DataFrame,
    encoding: Encoding,
) -> Result<(), SinkError> {
    let file = fsio::create_new(path)?;
    let file = write_parquet_to(file, path, df, encoding)?;
    fsio::sync_file(&file, path)
}

/// Encodes `df` into `sink` and returns the sink, flushed. `path` only names the destination in
/// errors.
pub(crate) fn write_parquet_to<W: Write>(
    sink: W,
    path: &Path,
    df: &mut DataFrame,
    encoding: Encoding,
) -> Result<W, SinkError> {
    let mut writer = ErrorKeepingWriter::new(BufWriter::new(sink));
    let encoded = ParquetWriter::new(&mut writer)
        .set_parallel(encoding == Encoding::Parallel)
        .finish(df);
    let flushed = encoded.and_then(|_| writer.flush().map_err(PolarsError::from));
    if let Err(error) = flushed {
        return Err(polars_error(
            "write results to",
            path,
            error,
            writer.take_error(),
        ));
    }
    let buffered = writer.into_inner();
    buffered
        .into_inner()
        .map_err(|e| SinkError::io("write results to", path, e.into_error()))
}

/// Prefers the I/O error seen by the writer (it has a kind) over polars' text.
fn polars_error(
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
struct ErrorKeepingWriter<W> {
    inner: W,
    first_error: Option<io::Error>,
}

impl<W: Write> ErrorKeepingWriter<W> {
    fn new(inner: W) -> Self {
        ErrorKeepingWriter {
            inner,
            first_error: None,
        }
    }

    fn take_error(&mut self) -> Option<io::Error> {
        self.first_error.take()
    }

    fn into_inner(self) -> W {
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
    use polars::prelude::*;

    fn sample() -> DataFrame {
        df!(
            "job_id" => ["a", "a", "b"],
            "cell" => [0i64, 1, 2],
            "post_mean" => [Some(0.5f64), None, Some(-1.25)],
            "observed" => [true, false, true],
        )
        .unwrap()
    }

    #[test]
    fn round_trip_keeps_values_nulls_and_types() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut df = sample();
        write_parquet_new(&path, &mut df, Encoding::Serial).unwrap();
        let back = read_parquet(&path).unwrap();
        assert!(back.equals_missing(&sample()), "{back}");
        assert_eq!(back.schema(), sample().schema());
    }

    #[test]
    fn write_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        std::fs::write(&path, b"old").unwrap();
        let error = write_parquet_new(&path, &mut sample(), Encoding::Serial).unwrap_err();
        assert_eq!(error.io_kind(), Some(io::ErrorKind::AlreadyExists));
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
    }

    #[test]
    fn disk_full_is_reported_as_such() {
        // /dev/full accepts opens and fails every write with ENOSPC.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let path = Path::new("/results/jobs.parquet");
        let error = write_parquet_to(full, path, &mut sample(), Encoding::Parallel).unwrap_err();
        assert_eq!(error.io_kind(), Some(io::ErrorKind::StorageFull));
        assert_eq!(
            error.to_string(),
            "cannot write results to /results/jobs.parquet: no space left on device"
        );
    }

    #[test]
    fn reading_garbage_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        std::fs::write(&path, b"this is not parquet").unwrap();
        let error = read_parquet(&path).unwrap_err();
        assert!(error.to_string().contains("bad.parquet"), "{error}");
    }
}
