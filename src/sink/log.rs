//! Part logs: the append-only files in which each run (a whole study or one shard) records its
//! finished jobs, one record per job, as they finish.
//!
//! ```text
//! log     = magic "fieldmc-parts-2\n", header_len: u32, header (JSON RunHeader), record*
//! record  = "JOB1", payload_len: u64, blake3(payload): 32 bytes, payload
//! payload = meta_len: u32, meta (JSON RecordMeta), the tables' encodings (codec), in meta order
//! ```
//!
//! A table too large to hold whole (the field draws) arrives as chunks, each encoded as it is
//! made: the meta lists such a table once per chunk, and readers stack a job's chunks of one
//! table in order. Version 1 logs (`fieldmc-parts-1`, before the codec's compact layouts) are
//! read as before.
//!
//! Durability. A record is appended while one lock is held and without a flush to disk of its
//! own, so finishing a job costs microseconds. A background flusher ([`super::flush`]) flushes
//! the log to disk (fdatasync) on its own file handle a quarter second after the oldest record
//! not yet on disk, whether or not another job follows, so every record reaches the disk within
//! [`SYNC_INTERVAL`](super::flush::SYNC_INTERVAL) (one second) of being appended, given a disk
//! that completes a flush within a third of a second; the run's close flushes the rest. A process
//! killed at any moment (SIGKILL) loses nothing it appended: the kernel keeps the written bytes.
//! A power cut loses at most the records of the last second, and may leave a torn record at the
//! end.
//!
//! A write that fails (a full disk) in the middle of a record is cut back: the log is truncated
//! to the end of its last complete record before anything else can be appended, and the writer
//! appends nothing more (later appends and the close fail with [`SinkError::Stopped`]); a failed
//! flush stops it likewise. Readers stop at the first record that is incomplete or fails its
//! checksum and count the bytes from there to the end as ignored ([`ScannedLog::ignored_bytes`],
//! reported at resume and merge); the jobs such a tail held count as missing and are recomputed.
//!
//! Each run writes only its own log, named after its host, process and start time, so runs of
//! shards on different machines sharing a file system never write to the same file. A run that
//! ends normally appends a [`RecordMeta::Close`] record with its end time and counts.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use polars::prelude::DataFrame;
use serde::{Deserialize, Serialize};

use super::codec::{self, TableSchema};
use super::error::{SinkError, check_name, describe_io_error};
use super::flush::Flusher;
use super::fsio;
use crate::table::{JobStatus, TableChunks};

const LOG_MAGIC: &[u8; 16] = b"fieldmc-parts-2\n";
/// Logs written before the codec's compact layouts: still read.
const LOG_MAGIC_V1: &[u8; 16] = b"fieldmc-parts-1\n";
const RECORD_MAGIC: &[u8; 4] = b"JOB1";
/// The file name extension of part logs.
pub(crate) const LOG_EXTENSION: &str = "log";
/// Records larger than this are refused when read (a corrupt length must not allocate wildly).
const MAX_RECORD_BYTES: u64 = 1 << 36;

/// Which run wrote a log, where and with which fieldmc: the start of its header, and of its
/// entry in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunOrigin {
    /// The run's name, also the log's file stem (`parts/<run>.log`).
    pub(crate) run: String,
    /// `I/K` for a shard, `None` for a whole study.
    pub(crate) shard: Option<String>,
    pub(crate) host: String,
    pub(crate) pid: u32,
    /// Worker threads.
    pub(crate) threads: usize,
    /// fieldmc's version and git revision.
    pub(crate) version: String,
    pub(crate) git_revision: String,
}

/// Who wrote a log: written once at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunHeader {
    #[serde(flatten)]
    pub(crate) origin: RunOrigin,
    /// The study's name and seed, and BLAKE3 of its file's text.
    pub(crate) study: String,
    pub(crate) seed: u64,
    pub(crate) study_hash: String,
    /// The data files the run's jobs read, with their content hashes at the start.
    pub(crate) data: Vec<DataFile>,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`, and milliseconds since the Unix epoch (orders runs).
    pub(crate) started: String,
    pub(crate) started_unix_ms: u64,
}

/// A data file and the BLAKE3 hash of its content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct DataFile {
    pub(crate) path: String,
    pub(crate) blake3: String,
}

/// What the executor says about one finished job; stored with its tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobRecord {
    pub(crate) job_id: String,
    /// The job's canonical key: a kept record is reused only for the same key.
    pub(crate) key: String,
    pub(crate) status: JobStatus,
    pub(crate) error: Option<String>,
    pub(crate) wall_seconds: f64,
    /// The data files the job read, with their content hashes.
    pub(crate) data: Vec<DataFile>,
}

/// The JSON part of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RecordMeta {
    /// A finished job: who computed it with which fieldmc, and its tables' names and sizes.
    Job {
        job: JobRecord,
        version: String,
        tables: Vec<(String, u64)>,
    },
    /// The run ended normally.
    Close {
        finished: String,
        jobs_written: u64,
        jobs_failed: u64,
    },
}

/// Appends the records of one run. Shared by the worker threads: a record is encoded by the
/// thread that finished the job, and only the append itself is serialised.
pub(crate) struct LogWriter {
    path: PathBuf,
    state: Mutex<WriterState>,
    /// Flushes the log to disk in the background; stopped and joined when the writer goes.
    flusher: Flusher,
}

struct WriterState {
    file: File,
    /// The end of the last complete record: where the next one starts.
    len: u64,
    written: u64,
    failed: u64,
    /// Why appending stopped (a write or a flush failed), once it has.
    broken: Option<String>,
    /// Tests only: bytes the "disk" still takes before a write fails with a full disk.
    #[cfg(test)]
    space_left: Option<u64>,
}

impl LogWriter {
    /// Creates `dir/<header.run>.log` (which must not exist) and writes its header, durably.
    /// A header that cannot be written whole leaves no file behind.
    pub(crate) fn create(dir: &Path, header: &RunHeader) -> Result<Self, SinkError> {
        check_name("run name", &header.origin.run)?;
        let path = dir.join(format!("{}.{LOG_EXTENSION}", header.origin.run));
        let json = serde_json::to_vec(header)?;
        let mut bytes = LOG_MAGIC.to_vec();
        bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&json);
        let mut file = fsio::create_new(&path)?;
        let started = file
            .write_all(&bytes)
            .map_err(|e| SinkError::io("write results to", &path, e))
            .and_then(|()| fsio::sync_file(&file, &path))
            .and_then(|()| fsio::sync_dir(dir))
            .and_then(|()| {
                let handle = file
                    .try_clone()
                    .map_err(|e| SinkError::io("write results to", &path, e))?;
                Flusher::start(handle, bytes.len() as u64)
                    .map_err(|e| SinkError::io("start the flusher of", &path, e))
            });
        let flusher = match started {
            Ok(flusher) => flusher,
            Err(error) => {
                drop(file);
                let _ = fsio::remove_path(&path);
                return Err(error);
            }
        };
        Ok(LogWriter {
            path,
            state: Mutex::new(WriterState {
                file,
                len: bytes.len() as u64,
                written: 0,
                failed: 0,
                broken: None,
                #[cfg(test)]
                space_left: None,
            }),
            flusher,
        })
    }

    /// Encodes and appends one job's record: its whole tables, then each chunked table's chunks
    /// as they are made.
    pub(crate) fn append_job(
        &self,
        job: &JobRecord,
        tables: &[(&str, DataFrame)],
        chunked: Vec<(&str, TableChunks<'_>)>,
    ) -> Result<(), SinkError> {
        let (head, blobs) = encode_job_record(job, tables, chunked)?;
        let mut state = self.lock();
        self.append(&mut state, &[&head, &blobs])?;
        state.written += 1;
        state.failed += u64::from(job.status == JobStatus::Failed);
        Ok(())
    }

    /// Appends the close record and flushes everything to disk. A writer that stopped appending
    /// (a failed write or flush) appends no close record: the error says why.
    pub(crate) fn close(self) -> Result<(), SinkError> {
        let mut state = self.lock();
        let meta = RecordMeta::Close {
            finished: crate::clock::utc_timestamp(std::time::SystemTime::now()),
            jobs_written: state.written,
            jobs_failed: state.failed,
        };
        let record = encode_record(&meta, &[])?;
        self.append(&mut state, &[&record])?;
        fsio::sync_file(&state.file, &self.path)?;
        self.flusher.flushed(state.len);
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, WriterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one record made of `parts`, or, if a write fails part way, cuts the log back to
    /// the end of its last complete record and stops appending.
    fn append(&self, state: &mut WriterState, parts: &[&[u8]]) -> Result<(), SinkError> {
        if let Some(reason) = &state.broken {
            return Err(SinkError::Stopped {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        if let Some(error) = self.flusher.take_error() {
            state.broken = Some(describe_io_error(&error));
            return Err(SinkError::io("flush to disk", &self.path, error));
        }
        let mut written = Ok(());
        for part in parts {
            written = write_part(state, part);
            if written.is_err() {
                break;
            }
        }
        let Err(error) = written else {
            state.len += parts.iter().map(|p| p.len() as u64).sum::<u64>();
            self.flusher.appended(state.len);
            return Ok(());
        };
        state.broken = Some(describe_io_error(&error));
        let complete = state.len;
        let cut = state
            .file
            .set_len(complete)
            .and_then(|()| state.file.seek(SeekFrom::Start(complete)));
        match cut {
            Ok(_) => Err(SinkError::io("write results to", &self.path, error)),
            Err(cut_error) => Err(SinkError::TornAppend {
                path: self.path.clone(),
                reason: describe_io_error(&error),
                cut: describe_io_error(&cut_error),
                source: error,
            }),
        }
    }

    /// How far the log's complete records reach, and how far the disk is known to hold it.
    #[cfg(test)]
    fn lengths(&self) -> (u64, u64) {
        (self.lock().len, self.flusher.synced())
    }
}

/// Writes `bytes` at the log's end.
fn write_part(state: &mut WriterState, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(test)]
    if let Some(left) = state.space_left.as_mut() {
        if bytes.len() as u64 > *left {
            let fits = *left as usize;
            *left = 0;
            state.file.write_all(&bytes[..fits])?;
            return Err(std::io::ErrorKind::StorageFull.into());
        }
        *left -= bytes.len() as u64;
    }
    state.file.write_all(bytes)
}

/// A job's record in two parts, written one after the other: the record's head (magic, length,
/// checksum, meta) and the tables' encodings (not copied into one buffer: with field draws they
/// run to tens of megabytes).
fn encode_job_record(
    job: &JobRecord,
    tables: &[(&str, DataFrame)],
    chunked: Vec<(&str, TableChunks<'_>)>,
) -> Result<(Vec<u8>, Vec<u8>), SinkError> {
    let mut blobs = Vec::new();
    let mut sizes = Vec::with_capacity(tables.len());
    let mut encode = |name: &str, frame: &DataFrame| -> Result<(), SinkError> {
        let before = blobs.len();
        codec::encode_table(name, frame, &mut blobs)?;
        sizes.push((name.to_string(), (blobs.len() - before) as u64));
        Ok(())
    };
    for (name, frame) in tables {
        encode(name, frame)?;
    }
    for (name, chunks) in chunked {
        for chunk in chunks {
            let frame = chunk.map_err(|error| SinkError::Encode {
                table: name.to_string(),
                message: error.to_string(),
            })?;
            encode(name, &frame)?;
        }
    }
    let meta = RecordMeta::Job {
        job: job.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        tables: sizes,
    };
    let head = record_head(&meta, &blobs)?;
    Ok((head, blobs))
}

/// A whole record: its head and its blobs.
fn encode_record(meta: &RecordMeta, blobs: &[u8]) -> Result<Vec<u8>, SinkError> {
    let mut record = record_head(meta, blobs)?;
    record.extend_from_slice(blobs);
    Ok(record)
}

/// The bytes of a record before its blobs: magic, payload length, the payload's BLAKE3, meta.
fn record_head(meta: &RecordMeta, blobs: &[u8]) -> Result<Vec<u8>, SinkError> {
    let json = serde_json::to_vec(meta)?;
    let payload_len = 4 + json.len() + blobs.len();
    let mut head = Vec::with_capacity(4 + 8 + 32 + 4 + json.len());
    head.extend_from_slice(RECORD_MAGIC);
    head.extend_from_slice(&(payload_len as u64).to_le_bytes());
    let mut meta_part = (json.len() as u32).to_le_bytes().to_vec();
    meta_part.extend_from_slice(&json);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&meta_part);
    hasher.update(blobs);
    head.extend_from_slice(hasher.finalize().as_bytes());
    head.extend_from_slice(&meta_part);
    Ok(head)
}

/// Where one table of one job lies in a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TableSpan {
    pub(crate) table: u32,
    pub(crate) schema: u32,
    pub(crate) rows: u64,
    pub(crate) offset: u64,
    pub(crate) len: u64,
}

/// A job's record as found in a log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScannedJob {
    pub(crate) job: JobRecord,
    pub(crate) version: String,
    pub(crate) tables: Vec<TableSpan>,
}

/// Everything read from one log.
#[derive(Debug, Clone)]
pub(crate) struct ScannedLog {
    pub(crate) path: PathBuf,
    pub(crate) header: RunHeader,
    pub(crate) jobs: Vec<ScannedJob>,
    /// `Some` when the run closed normally: (finished, jobs written, jobs failed).
    pub(crate) closed: Option<(String, u64, u64)>,
    /// Bytes after the last valid record (a torn or unfinished record), ignored.
    pub(crate) ignored_bytes: u64,
}

/// Interned table names and schemas shared by every scanned log.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    pub(crate) table_names: Vec<String>,
    table_ids: HashMap<String, u32>,
    pub(crate) schemas: Vec<TableSchema>,
    schema_ids: HashMap<Vec<u8>, u32>,
}

impl Interner {
    fn table(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.table_ids.get(name) {
            return id;
        }
        let id = self.table_names.len() as u32;
        self.table_names.push(name.to_string());
        self.table_ids.insert(name.to_string(), id);
        id
    }

    fn schema(&mut self, bytes: &[u8]) -> Result<u32, codec::CorruptTable> {
        if let Some(&id) = self.schema_ids.get(bytes) {
            return Ok(id);
        }
        let schema = codec::parse_schema(bytes)?;
        let id = self.schemas.len() as u32;
        self.schemas.push(schema);
        self.schema_ids.insert(bytes.to_vec(), id);
        Ok(id)
    }
}

/// Reads a log: its header and every valid record up to the first incomplete or corrupt one.
/// `Ok(None)` when the file is not a complete log header (a log whose creation was cut short).
pub(crate) fn scan_log(
    path: &Path,
    interner: &mut Interner,
) -> Result<Option<ScannedLog>, SinkError> {
    let file = File::open(path).map_err(|e| SinkError::io("read", path, e))?;
    let file_len = file
        .metadata()
        .map_err(|e| SinkError::io("read", path, e))?
        .len();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let read_error = |e: std::io::Error| SinkError::io("read", path, e);
    let mut magic = [0u8; 16];
    let mut len = [0u8; 4];
    if reader.read_exact(&mut magic).is_err() || (&magic != LOG_MAGIC && &magic != LOG_MAGIC_V1) {
        return Ok(None);
    }
    if reader.read_exact(&mut len).is_err() {
        return Ok(None);
    }
    let header_len = u32::from_le_bytes(len) as usize;
    if header_len as u64 > file_len {
        return Ok(None);
    }
    let mut header = vec![0u8; header_len];
    if reader.read_exact(&mut header).is_err() {
        return Ok(None);
    }
    let Ok(header) = serde_json::from_slice::<RunHeader>(&header) else {
        return Ok(None);
    };
    let mut position = (16 + 4 + header_len) as u64;
    let mut scanned = ScannedLog {
        path: path.to_path_buf(),
        header,
        jobs: Vec::new(),
        closed: None,
        ignored_bytes: 0,
    };
    let mut payload = Vec::new();
    loop {
        let mut head = [0u8; 44];
        match reader.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(read_error(e)),
        }
        let payload_len = u64::from_le_bytes(head[4..12].try_into().unwrap());
        let fits = position + 44 + payload_len <= file_len;
        if &head[..4] != RECORD_MAGIC || payload_len > MAX_RECORD_BYTES || !fits {
            break;
        }
        payload.resize(payload_len as usize, 0);
        reader.read_exact(&mut payload).map_err(read_error)?;
        if blake3::hash(&payload).as_bytes() != &head[12..44] {
            break;
        }
        let payload_offset = position + 44;
        position = payload_offset + payload_len;
        let Some(meta) = parse_payload(&payload) else {
            break;
        };
        match meta {
            (
                RecordMeta::Close {
                    finished,
                    jobs_written,
                    jobs_failed,
                },
                _,
            ) => scanned.closed = Some((finished, jobs_written, jobs_failed)),
            (
                RecordMeta::Job {
                    job,
                    version,
                    tables,
                },
                blobs_start,
            ) => {
                let Some(spans) =
                    table_spans(&payload, blobs_start, &tables, payload_offset, interner)
                else {
                    break;
                };
                scanned.jobs.push(ScannedJob {
                    job,
                    version,
                    tables: spans,
                });
            }
        }
    }
    scanned.ignored_bytes = file_len - position;
    Ok(Some(scanned))
}

/// The meta of a payload and where its blobs start.
fn parse_payload(payload: &[u8]) -> Option<(RecordMeta, usize)> {
    let meta_len = u32::from_le_bytes(payload.get(..4)?.try_into().ok()?) as usize;
    let json = payload.get(4..4 + meta_len)?;
    let meta = serde_json::from_slice(json).ok()?;
    Some((meta, 4 + meta_len))
}

fn table_spans(
    payload: &[u8],
    blobs_start: usize,
    tables: &[(String, u64)],
    payload_offset: u64,
    interner: &mut Interner,
) -> Option<Vec<TableSpan>> {
    let mut spans = Vec::with_capacity(tables.len());
    let mut at = blobs_start;
    for (name, len) in tables {
        let end = at.checked_add(usize::try_from(*len).ok()?)?;
        let blob = payload.get(at..end)?;
        let (rows, schema) = codec::schema_bytes(blob).ok()?;
        spans.push(TableSpan {
            table: interner.table(name),
            schema: interner.schema(schema).ok()?,
            rows: rows as u64,
            offset: payload_offset + at as u64,
            len: *len,
        });
        at = end;
    }
    (at == payload.len()).then_some(spans)
}

/// Reads the bytes of one table span from an open log.
pub(crate) fn read_span(
    file: &File,
    path: &Path,
    span: &TableSpan,
    buffer: &mut Vec<u8>,
) -> Result<(), SinkError> {
    buffer.resize(span.len as usize, 0);
    let mut handle = file;
    handle
        .seek(SeekFrom::Start(span.offset))
        .and_then(|_| handle.read_exact(buffer))
        .map_err(|e| SinkError::io("read", path, e))
}

/// Opens a log for reading its spans.
pub(crate) fn open_log(path: &Path) -> Result<File, SinkError> {
    OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| SinkError::io("read", path, e))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use polars::prelude::*;

    /// A run header for tests (the other sink tests use it too).
    pub(crate) fn header(run: &str) -> RunHeader {
        RunHeader {
            origin: RunOrigin {
                run: run.to_string(),
                shard: None,
                host: "host".into(),
                pid: 1,
                threads: 1,
                version: "0".into(),
                git_revision: "x".into(),
            },
            study: "s".into(),
            seed: 1,
            study_hash: "h".into(),
            data: vec![],
            started: "2024-01-01T00:00:00Z".into(),
            started_unix_ms: 1,
        }
    }

    fn job(id: &str) -> JobRecord {
        JobRecord {
            job_id: id.into(),
            key: format!("key-{id}"),
            status: JobStatus::Ok,
            error: None,
            wall_seconds: 0.5,
            data: vec![],
        }
    }

    fn tables(id: &str) -> Vec<(&'static str, DataFrame)> {
        vec![
            ("jobs", df!("job_id" => [id], "mae" => [0.25f64]).unwrap()),
            (
                "fields",
                df!("job_id" => [id, id], "cell" => [0i64, 1]).unwrap(),
            ),
        ]
    }

    /// Polls `done` every 10 ms for up to 30 s (far beyond the one-second promise: a loaded
    /// machine must not make this fail); returns whether it held.
    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        done()
    }

    #[test]
    fn a_record_reaches_the_disk_with_no_later_append_and_no_close() {
        let dir = tempfile::tempdir().unwrap();
        let writer = LogWriter::create(dir.path(), &header("run-a")).unwrap();
        let (header_len, synced) = writer.lengths();
        assert_eq!(synced, header_len, "the header is flushed at creation");
        writer
            .append_job(&job("j1"), &tables("j1"), Vec::new())
            .unwrap();
        let (appended, _) = writer.lengths();
        assert!(appended > header_len);
        assert!(
            eventually(|| writer.lengths().1 >= appended),
            "the record was never flushed: {:?}",
            writer.lengths()
        );
        // The flusher keeps going: a second record after a quiet spell is flushed too.
        writer
            .append_job(&job("j2"), &tables("j2"), Vec::new())
            .unwrap();
        let (appended, _) = writer.lengths();
        assert!(eventually(|| writer.lengths().1 >= appended));
        writer.close().unwrap();
    }

    #[test]
    fn a_write_failing_mid_record_is_cut_back_and_nothing_follows_it() {
        let dir = tempfile::tempdir().unwrap();
        let writer = LogWriter::create(dir.path(), &header("run-a")).unwrap();
        let path = dir.path().join("run-a.log");
        writer
            .append_job(&job("j1"), &tables("j1"), Vec::new())
            .unwrap();
        let complete = writer.lengths().0;
        // The disk takes 60 more bytes: the next record is torn inside its head.
        writer.lock().space_left = Some(60);
        let error = writer
            .append_job(&job("j2"), &tables("j2"), Vec::new())
            .unwrap_err();
        assert_eq!(error.io_kind(), Some(std::io::ErrorKind::StorageFull));
        let text = error.to_string();
        assert!(
            text.contains(&*path.to_string_lossy()) && text.contains("no space left on device"),
            "{text}"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), complete);
        // Space again, but the writer appends nothing after a failed write, nor a close record.
        writer.lock().space_left = None;
        let refused = writer
            .append_job(&job("j3"), &tables("j3"), Vec::new())
            .unwrap_err();
        assert!(matches!(refused, SinkError::Stopped { .. }), "{refused}");
        assert!(refused.to_string().contains("no space left on device"));
        assert!(matches!(writer.close(), Err(SinkError::Stopped { .. })));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), complete);
        let log = scan_log(&path, &mut Interner::default()).unwrap().unwrap();
        assert_eq!(log.jobs.len(), 1);
        assert_eq!(log.jobs[0].job, job("j1"));
        assert_eq!((log.closed, log.ignored_bytes), (None, 0));
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_flush_stops_the_writer_with_an_error_naming_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = LogWriter::create(dir.path(), &header("run-a")).unwrap();
        // A pipe cannot be flushed to disk (EINVAL): the flusher's flush fails.
        let (_reader, pipe) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(pipe));
        writer.flusher = Flusher::start(pipe, writer.lengths().0).unwrap();
        writer
            .append_job(&job("j1"), &tables("j1"), Vec::new())
            .unwrap();
        let mut reported = None;
        eventually(|| {
            let outcome = writer.append_job(&job("j2"), &tables("j2"), Vec::new());
            reported = outcome.err();
            reported.is_some()
        });
        let text = reported
            .expect("the failed flush was never reported")
            .to_string();
        let path = dir.path().join("run-a.log");
        assert!(
            text.starts_with(&format!("cannot flush to disk {}: ", path.display())),
            "{text}"
        );
        let refused = writer
            .append_job(&job("j3"), &tables("j3"), Vec::new())
            .unwrap_err();
        assert!(matches!(refused, SinkError::Stopped { .. }), "{refused}");
        assert!(writer.close().is_err());
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let writer = LogWriter::create(dir.path(), &header("run-a")).unwrap();
        writer
            .append_job(&job("j1"), &tables("j1"), Vec::new())
            .unwrap();
        writer
            .append_job(&job("j2"), &tables("j2"), Vec::new())
            .unwrap();
        writer.close().unwrap();
        let path = dir.path().join("run-a.log");
        let mut interner = Interner::default();
        let log = scan_log(&path, &mut interner).unwrap().unwrap();
        assert_eq!(log.header, header("run-a"));
        assert_eq!(log.jobs.len(), 2);
        assert_eq!(log.jobs[1].job, job("j2"));
        assert_eq!(log.closed.as_ref().map(|c| c.1), Some(2));
        assert_eq!(log.ignored_bytes, 0);
        assert_eq!(interner.table_names, ["jobs", "fields"]);
        assert_eq!(
            interner.schemas.len(),
            2,
            "one schema per table, shared by the jobs"
        );

        let file = open_log(&path).unwrap();
        let mut buffer = Vec::new();
        read_span(&file, &path, &log.jobs[1].tables[1], &mut buffer).unwrap();
        let fields = codec::decode_table(&buffer).unwrap();
        assert!(fields.equals_missing(&tables("j2")[1].1));

        // Cut the file inside the close record, then inside the second job's record.
        let bytes = std::fs::read(&path).unwrap();
        let inside_second = log.jobs[1].tables[0].offset as usize + 3;
        for (cut, jobs) in [(bytes.len() - 1, 2), (inside_second, 1)] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let log = scan_log(&path, &mut Interner::default()).unwrap().unwrap();
            assert_eq!(log.jobs.len(), jobs, "cut at {cut}");
            assert!(
                log.closed.is_none() && log.ignored_bytes > 0,
                "cut at {cut}"
            );
        }
        // A flipped byte inside a record: the record and everything after it are ignored.
        let mut flipped = bytes.clone();
        let at = log.jobs[0].tables[0].offset as usize + 3;
        flipped[at] ^= 0xff;
        std::fs::write(&path, &flipped).unwrap();
        let log = scan_log(&path, &mut Interner::default()).unwrap().unwrap();
        assert!(log.jobs.is_empty());
        // A version 1 log (before the compact layouts) is read as before.
        let mut version_1 = bytes.clone();
        version_1[..16].copy_from_slice(LOG_MAGIC_V1);
        std::fs::write(&path, &version_1).unwrap();
        let log = scan_log(&path, &mut Interner::default()).unwrap().unwrap();
        assert_eq!(log.jobs.len(), 2);
        // Not a log at all.
        std::fs::write(&path, b"fieldmc").unwrap();
        assert!(scan_log(&path, &mut Interner::default()).unwrap().is_none());
    }
}
