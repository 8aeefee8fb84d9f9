//! Assembling the result tables from the part logs, one table at a time, in plan order, in
//! bounded memory.
//!
//! Jobs need not agree on a table's columns: a failed job has no metric columns, a probit job
//! has no `exact_mean`, and a column that is null throughout one job may have the `Null` type.
//! A table's columns are the union of its jobs' columns in first-seen order (plan order), each
//! with its first non-`Null` type; what a job lacks is null. Two different non-`Null` types for
//! one column are a [`SinkError::SchemaConflict`]: silently casting would hide a bug in whoever
//! wrote the job's table.
//!
//! The union is computed from the interned schemas alone, so the data is read once: jobs are
//! decoded into column builders and written as a Parquet row group whenever the builders hold
//! about [`CELLS_PER_GROUP`] values. The result depends only on the plan and the records, never
//! on how the jobs were spread over processes, threads or shards.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use polars::prelude::{ParquetWriter, PolarsError, Schema};

use super::codec::{Kind, TableBuilder};
use super::error::SinkError;
use super::fsio;
use super::index::{IndexedJob, PartIndex};
use super::log;
use super::parquet::{ErrorKeepingWriter, polars_error};

/// Values (rows x columns) stacked before a row group is written: about 64 MB of builders.
const CELLS_PER_GROUP: usize = 4 << 20;

/// A job included in the assembly: its id and its newest record.
pub(crate) type Included<'a> = (&'a str, &'a IndexedJob);

/// The union of a table's columns over `jobs`, and for each schema met, where its columns go.
struct Union {
    columns: Vec<(String, Kind)>,
    targets: HashMap<u32, Vec<usize>>,
}

fn union_of(table: u32, jobs: &[Included<'_>], index: &PartIndex) -> Result<Union, SinkError> {
    let mut columns: Vec<(String, Kind)> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    let mut targets: HashMap<u32, Vec<usize>> = HashMap::new();
    for (job_id, job) in jobs {
        for span in job.tables.iter().filter(|s| s.table == table) {
            if targets.contains_key(&span.schema) {
                continue;
            }
            let schema = &index.interner.schemas[span.schema as usize];
            let mut slots = Vec::with_capacity(schema.columns.len());
            for (name, kind) in &schema.columns {
                let slot = match position.get(name) {
                    Some(&slot) => {
                        let known = &mut columns[slot].1;
                        if *known == Kind::Null {
                            *known = *kind;
                        } else if *kind != Kind::Null && *kind != *known {
                            return Err(SinkError::SchemaConflict {
                                table: index.interner.table_names[table as usize].clone(),
                                column: name.clone(),
                                job_id: job_id.to_string(),
                                expected: known.dtype().to_string(),
                                found: kind.dtype().to_string(),
                            });
                        }
                        slot
                    }
                    None => {
                        columns.push((name.clone(), *kind));
                        position.insert(name.clone(), columns.len() - 1);
                        columns.len() - 1
                    }
                };
                if slots.contains(&slot) {
                    return Err(SinkError::Assemble {
                        table: index.interner.table_names[table as usize].clone(),
                        message: format!("job {job_id} has two columns named {name:?}"),
                    });
                }
                slots.push(slot);
            }
            targets.insert(span.schema, slots);
        }
    }
    Ok(Union { columns, targets })
}

/// Writes table `table` over `jobs` (in order) to `path`, which must not exist, and flushes it
/// to disk; returns its rows.
pub(crate) fn write_table(
    table: u32,
    jobs: &[Included<'_>],
    index: &PartIndex,
    logs: &[File],
    path: &Path,
) -> Result<usize, SinkError> {
    let file = fsio::create_new(path)?;
    let (file, rows) = write_table_to(file, table, jobs, index, logs, path)?;
    fsio::sync_file(&file, path)?;
    Ok(rows)
}

/// Why streaming a table stopped.
enum Failure {
    Encoder(PolarsError),
    Sink(SinkError),
}

/// Encodes table `table` over `jobs` into `sink`; `path` names the destination in errors.
pub(crate) fn write_table_to<W: Write>(
    sink: W,
    table: u32,
    jobs: &[Included<'_>],
    index: &PartIndex,
    logs: &[File],
    path: &Path,
) -> Result<(W, usize), SinkError> {
    let union = union_of(table, jobs, index)?;
    let mut sink = ErrorKeepingWriter::new(BufWriter::with_capacity(1 << 20, sink));
    let streamed = stream_table(&mut sink, table, union, jobs, index, logs);
    let flushed = match streamed {
        Ok(rows) => sink
            .flush()
            .map(|()| rows)
            .map_err(|e| Failure::Sink(SinkError::io("write results to", path, e))),
        Err(failure) => Err(failure),
    };
    let rows = flushed.map_err(|failure| match failure {
        Failure::Sink(error) => error,
        Failure::Encoder(error) => polars_error("write results to", path, error, sink.take_error()),
    })?;
    let inner = sink
        .into_inner()
        .into_inner()
        .map_err(|e| SinkError::io("write results to", path, e.into_error()))?;
    Ok((inner, rows))
}

fn stream_table<W: Write>(
    sink: &mut W,
    table: u32,
    union: Union,
    jobs: &[Included<'_>],
    index: &PartIndex,
    logs: &[File],
) -> Result<usize, Failure> {
    let schema: Schema = union
        .columns
        .iter()
        .map(|(name, kind)| (name.as_str().into(), kind.dtype()))
        .collect();
    let mut writer = ParquetWriter::new(sink)
        .set_parallel(true)
        .batched(&schema)
        .map_err(Failure::Encoder)?;
    let mut builder = TableBuilder::new(union.columns);
    let mut buffer = Vec::new();
    let mut rows = 0;
    let width = builder.width().max(1);
    for (job_id, job) in jobs {
        for span in job.tables.iter().filter(|s| s.table == table) {
            let run = &index.runs[job.run];
            log::read_span(&logs[job.run], &run.log, span, &mut buffer).map_err(Failure::Sink)?;
            let schema = &index.interner.schemas[span.schema as usize];
            builder
                .append(&buffer, schema, &union.targets[&span.schema])
                .map_err(|e| {
                    Failure::Sink(SinkError::Corrupt {
                        path: run.log.clone(),
                        message: format!("job {job_id}: {e}"),
                    })
                })?;
            // Checked after each span, not each job: one job's chunked table (the field draws)
            // may be far larger than a row group.
            if builder.rows() * width >= CELLS_PER_GROUP {
                rows += builder.rows();
                writer
                    .write_batch(&builder.take())
                    .map_err(Failure::Encoder)?;
            }
        }
    }
    if builder.rows() > 0 || rows == 0 {
        rows += builder.rows();
        writer
            .write_batch(&builder.take())
            .map_err(Failure::Encoder)?;
    }
    writer.finish().map_err(Failure::Encoder)?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use crate::sink::log::{JobRecord, RunHeader};
    use crate::sink::{PlannedJob, ResultsDir};
    use crate::table::JobStatus;
    use polars::prelude::*;

    #[test]
    fn disk_full_is_reported_as_such() {
        // /dev/full accepts opens and fails every write with ENOSPC.
        let full = match std::fs::OpenOptions::new().write(true).open("/dev/full") {
            Ok(full) => full,
            Err(error) => {
                eprintln!(
                    "SKIPPED disk_full_is_reported_as_such: /dev/full cannot be opened ({error})"
                );
                return;
            }
        };
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let header: RunHeader = serde_json::from_value(serde_json::json!({
            "run": "r", "shard": null, "host": "h", "pid": 1, "threads": 1, "version": "0",
            "git_revision": "x", "study": "s", "seed": 1, "study_hash": "h", "data": [],
            "started": "2024-01-01T00:00:00Z", "started_unix_ms": 1
        }))
        .unwrap();
        let run = dir.start_run(&header).unwrap();
        let record = JobRecord {
            job_id: "j".into(),
            key: "k".into(),
            status: JobStatus::Ok,
            error: None,
            wall_seconds: 0.0,
            data: vec![],
        };
        let frame = df!("x" => (0..100_000).map(f64::from).collect::<Vec<_>>()).unwrap();
        run.write_job(&record, &[("jobs", frame)]).unwrap();
        run.close().unwrap();
        let index = dir.index().unwrap();
        let plan = [PlannedJob::new("j", "k")];
        let job = index.get("j").unwrap();
        let logs = vec![super::log::open_log(&index.runs[0].log).unwrap()];
        let path = std::path::Path::new("/results/jobs.parquet");
        let error = super::write_table_to(full, 0, &[("j", job)], &index, &logs, path)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            error.io_kind(),
            Some(std::io::ErrorKind::StorageFull),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "cannot write results to /results/jobs.parquet: no space left on device"
        );
        let _ = plan;
    }
}
