//! The executor: runs a plan's jobs (or one shard of them) in parallel with rayon, one job per
//! thread (no nested parallelism inside a job), records each finished job in the run's part log
//! through the sink, reuses only what is still valid, and assembles the tables in plan order.
//!
//! Resume policy ("honest reruns"): a job's earlier record is reused only when it has the
//! job's canonical key, finished without error, was computed by this fieldmc version, and read
//! data files whose content (BLAKE3) is what is on disk now. Anything else is recomputed, and
//! `force` recomputes everything. A job that fails — an error or a panic — records its error in
//! its row and the others go on; [`ExecuteSummary::failed`] counts them so the command line can
//! exit 1. A job whose results cannot be recorded (a full disk) stops the run: no further job
//! starts, the jobs already running finish but are not recorded after the failed one, and
//! [`ExecuteError::Stopped`] names the cause and how many jobs were recorded, all of which a rerun
//! reuses. Bytes that the folder's part logs end with and no reader uses (a torn record) are
//! noted on stderr when the run starts.
//!
//! Jobs never share mutable state and draw only from streams derived from their own keys, so the
//! tables do not depend on the thread count, the shards or the order in which jobs finish.

pub(crate) mod progress;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::clock::utc_timestamp;
use crate::job::{RunContext, Tabulated};
use crate::plan::Study;
use crate::plan::{Job, Plan, Shard};
use crate::sink::{
    DataFile, GIT_REVISION, Holder, JobRecord, PlannedJob, Purpose, ResultsDir, RunHeader,
    RunOrigin, RunWriter, SinkError, manifest_of,
};
use crate::table::{JobStatus, failed_row};
use progress::StudyProgress;

/// How to run a study.
#[derive(Debug, Clone)]
pub(crate) struct ExecuteOptions {
    pub(crate) out: PathBuf,
    /// Worker threads; 0 = one per core.
    pub(crate) threads: usize,
    /// Recompute every job (of the shard), even where a valid earlier result exists. Without a
    /// shard the folder's earlier results are removed first.
    pub(crate) force: bool,
    /// No progress display.
    pub(crate) quiet: bool,
    /// Run only this shard's jobs and leave the assembly to `fieldmc merge`.
    pub(crate) shard: Option<Shard>,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExecuteSummary {
    /// Jobs of the plan, or of the shard.
    pub(crate) jobs: usize,
    pub(crate) ran: usize,
    pub(crate) resumed: usize,
    /// Jobs that failed now (their rows say why).
    pub(crate) failed: usize,
    /// Jobs recomputed although a record existed, by reason.
    pub(crate) stale: StaleCounts,
    pub(crate) out: PathBuf,
    pub(crate) shard: Option<Shard>,
    /// Whether the tables were assembled (always, without a shard).
    pub(crate) assembled: bool,
    /// Holders of stale locks that this run took over.
    pub(crate) taken_over: Vec<String>,
}

/// Why earlier records were not reused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StaleCounts {
    pub(crate) failed: usize,
    pub(crate) data_changed: usize,
    pub(crate) other_version: usize,
    pub(crate) other_key: usize,
    pub(crate) forced: usize,
}

impl StaleCounts {
    pub(crate) fn total(&self) -> usize {
        self.failed + self.data_changed + self.other_version + self.other_key + self.forced
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecuteError {
    #[error(transparent)]
    Sink(#[from] SinkError),
    #[error("cannot start {threads} worker threads: {message}")]
    Threads { threads: usize, message: String },
    #[error("building the tables of job {job}: {message}")]
    Table { job: String, message: String },
    /// A job's results could not be recorded, so the run stopped.
    #[error(
        "{cause}\nthe run stopped: {recorded} of the {todo} jobs it had to run were recorded \
         (and are kept), the others were not run or not recorded; once the cause is fixed, the \
         same command runs only those"
    )]
    Stopped {
        cause: Box<ExecuteError>,
        recorded: usize,
        todo: usize,
    },
}

/// How one job of the run ended.
enum Outcome {
    /// Recorded; with its error when it failed.
    Recorded(Option<String>),
    /// Not recorded: the run had stopped before it started, or its record was refused.
    NotRecorded,
}

/// The first failure to record a job, shared by the workers, and whether there was one.
#[derive(Default)]
struct Stop {
    stopped: AtomicBool,
    cause: Mutex<Option<ExecuteError>>,
}

impl Stop {
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Stops the run. The first cause is kept, except that a refusal to append after an earlier
    /// failed write ([`SinkError::Stopped`]) gives way to that failure itself.
    fn stop(&self, error: ExecuteError) {
        self.stopped.store(true, Ordering::Release);
        let mut cause = self.cause.lock().unwrap_or_else(|e| e.into_inner());
        let secondary =
            |e: &ExecuteError| matches!(e, ExecuteError::Sink(SinkError::Stopped { .. }));
        if cause
            .as_ref()
            .is_none_or(|kept| secondary(kept) && !secondary(&error))
        {
            *cause = Some(error);
        }
    }

    fn into_cause(self) -> Option<ExecuteError> {
        self.cause.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// The data files a job reads (its family says which).
fn data_files(job: &Job) -> Vec<&Path> {
    job.spec.data_files()
}

/// BLAKE3 of the content of every data file `jobs` read, by path.
fn hash_data_files<'a>(
    jobs: impl Iterator<Item = &'a Job>,
) -> Result<HashMap<PathBuf, DataFile>, SinkError> {
    let mut hashes = HashMap::new();
    for job in jobs {
        for path in data_files(job) {
            if hashes.contains_key(path) {
                continue;
            }
            let mut hasher = blake3::Hasher::new();
            hasher
                .update_reader(std::fs::File::open(path).map_err(|e| SinkError::Io {
                    action: "read",
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                    source: e,
                })?)
                .map_err(|e| SinkError::Io {
                    action: "read",
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                    source: e,
                })?;
            let file = DataFile {
                path: path.display().to_string(),
                blake3: hasher.finalize().to_hex().to_string(),
            };
            hashes.insert(path.to_path_buf(), file);
        }
    }
    Ok(hashes)
}

/// A job's data files with their hashes.
fn job_data(job: &Job, hashes: &HashMap<PathBuf, DataFile>) -> Vec<DataFile> {
    data_files(job)
        .into_iter()
        .filter_map(|path| hashes.get(path).cloned())
        .collect()
}

/// What to do with a job given the folder's records.
enum Decision {
    /// Its record is valid: keep it.
    Reuse,
    /// No record: compute it.
    Missing,
    /// A record exists but may not stand for the job: recompute it.
    Stale(fn(&mut StaleCounts) -> &mut usize),
}

/// The resume policy (see the module docs).
fn decide(
    job: &Job,
    index: &crate::sink::PartIndex,
    hashes: &HashMap<PathBuf, DataFile>,
    force: bool,
) -> Decision {
    let Some(record) = index.get(&job.header.id) else {
        return Decision::Missing;
    };
    if force {
        Decision::Stale(|s| &mut s.forced)
    } else if record.key != crate::sink::KeyHash::of(&job.header.key) {
        Decision::Stale(|s| &mut s.other_key)
    } else if record.status != JobStatus::Ok {
        Decision::Stale(|s| &mut s.failed)
    } else if record.version != env!("CARGO_PKG_VERSION") {
        Decision::Stale(|s| &mut s.other_version)
    } else if !same_content(&record.data, &job_data(job, hashes)) {
        Decision::Stale(|s| &mut s.data_changed)
    } else {
        Decision::Reuse
    }
}

/// Whether two lists of data files hold the same contents in the same order. Paths are not
/// compared: a shared file system may be mounted at different places on different machines,
/// and the job's key already names the file.
fn same_content(recorded: &[DataFile], now: &[DataFile]) -> bool {
    recorded.len() == now.len() && recorded.iter().zip(now).all(|(a, b)| a.blake3 == b.blake3)
}

/// `20261123T191500Z-s0of3-host-pid-nonce`: unique, sorted by start time, names the run's log.
fn run_name(started: &str, shard: Option<Shard>, host: &str) -> String {
    let stamp: String = started
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let shard = shard.map_or(String::new(), |s| format!("s{}of{}-", s.index, s.count));
    let host: String = host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{stamp}-{shard}{host}-{}-{nonce}", std::process::id())
}

/// Run every job of `plan` (or of its shard) that has no valid result in `options.out`, then,
/// without a shard, assemble the tables.
pub(crate) fn execute(
    study: &Study,
    plan: &Plan,
    options: &ExecuteOptions,
) -> Result<ExecuteSummary, ExecuteError> {
    let results = ResultsDir::open(&options.out)?;
    let study_hash = blake3::hash(study.file.source_text.as_bytes())
        .to_hex()
        .to_string();
    let purpose = match options.shard {
        Some(shard) => Purpose::Shard {
            index: shard.index,
            count: shard.count,
        },
        None => Purpose::Run,
    };
    let lock = results.lock(Holder::this_process(purpose, &study_hash))?;
    if options.force && options.shard.is_none() {
        results.clear()?;
    }
    let selected: Vec<&Job> = plan
        .jobs
        .iter()
        .filter(|job| {
            options
                .shard
                .is_none_or(|shard| shard.contains(&job.header.id))
        })
        .collect();
    let hashes = hash_data_files(selected.iter().copied())?;
    let index = results.index()?;
    // With live shards alongside, a log's last record may be one being written: say nothing then.
    let ignored_tails = if lock.alone {
        index.ignored_tails()
    } else {
        Vec::new()
    };
    let mut stale = StaleCounts::default();
    let mut todo = Vec::new();
    for job in &selected {
        match decide(job, &index, &hashes, options.force) {
            Decision::Reuse => {}
            Decision::Missing => todo.push(*job),
            Decision::Stale(reason) => {
                *reason(&mut stale) += 1;
                todo.push(*job);
            }
        }
    }
    drop(index);
    let resumed = selected.len() - todo.len();
    let planned: Vec<PlannedJob> = plan
        .jobs
        .iter()
        .map(|job| PlannedJob::new(&job.header.id, &job.header.key))
        .collect();
    results.write_plan(&planned)?;
    results.write_text("study.toml", &study.file.source_text)?;

    let threads = resolve_threads(options.threads);
    let started_at = SystemTime::now();
    let started = utc_timestamp(started_at);
    let host = crate::sink::lock::host_name();
    let mut data: Vec<DataFile> = hashes.values().cloned().collect();
    data.sort();
    let header = RunHeader {
        origin: RunOrigin {
            run: run_name(&started, options.shard, &host),
            shard: options.shard.map(|s| s.to_string()),
            host,
            pid: std::process::id(),
            threads,
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: GIT_REVISION.to_string(),
        },
        study: study.file.name.clone(),
        seed: study.file.seed,
        study_hash,
        data,
        started,
        started_unix_ms: started_at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    };
    let progress = StudyProgress::new(todo.len() as u64, resumed as u64, options.quiet);
    for note in &ignored_tails {
        progress.note(note);
    }
    let mut failed = 0;
    if !todo.is_empty() {
        let writer = results.start_run(&header)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| ExecuteError::Threads {
                threads,
                message: e.to_string(),
            })?;
        // With fewer jobs than threads, a job spreads its chains over the idle ones.
        let spare_threads = todo.len() < threads;
        let stop = Stop::default();
        let outcomes: Vec<Outcome> = pool.install(|| {
            todo.par_iter()
                .map(|job| {
                    if stop.stopped() {
                        return Outcome::NotRecorded;
                    }
                    let recorded =
                        run_and_record(job, study, &writer, &hashes, &progress, spare_threads);
                    recorded.map_or_else(
                        |error| {
                            stop.stop(error);
                            Outcome::NotRecorded
                        },
                        Outcome::Recorded,
                    )
                })
                .collect()
        });
        progress.finish();
        let mut recorded = 0;
        for (job, outcome) in todo.iter().zip(outcomes) {
            if let Outcome::Recorded(error) = outcome {
                recorded += 1;
                if let Some(error) = error {
                    failed += 1;
                    progress.note(&format!("job {} failed: {error}", job.header.id));
                }
            }
        }
        let closed = writer.close();
        if let Some(cause) = stop.into_cause() {
            return Err(ExecuteError::Stopped {
                cause: Box::new(cause),
                recorded,
                todo: todo.len(),
            });
        }
        closed?;
    } else {
        progress.finish();
    }

    let assembled = options.shard.is_none();
    if assembled {
        let index = results.index()?;
        results.assemble(&planned, &index)?;
        let mut manifest = manifest_of(
            &study.file.name,
            study.file.seed,
            threads,
            &planned,
            &index,
            Some(&header.origin.run),
        );
        manifest.finish();
        results.write_manifest(&manifest)?;
    }
    let taken_over = lock.taken_over.iter().map(Holder::describe).collect();
    drop(lock);
    Ok(ExecuteSummary {
        jobs: selected.len(),
        ran: todo.len(),
        resumed,
        failed,
        stale,
        out: options.out.clone(),
        shard: options.shard,
        assembled,
        taken_over,
    })
}

fn resolve_threads(requested: usize) -> usize {
    if requested > 0 {
        requested
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Run `compute`, turning a panic into the message its failed row records.
fn guarded(compute: &mut dyn FnMut() -> Result<(), String>) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(compute)) {
        Ok(outcome) => outcome,
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

/// Run one job through its family (catching panics) and record its tables in the run's log;
/// returns its error when it failed.
fn run_and_record(
    job: &Job,
    study: &Study,
    writer: &RunWriter,
    hashes: &HashMap<PathBuf, DataFile>,
    progress: &StudyProgress,
    spare_threads: bool,
) -> Result<Option<String>, ExecuteError> {
    let line = progress.job(&job_label(job), job.spec.work());
    let report = |done: u64| line.set(done);
    let context = RunContext {
        job: &job.header,
        seed: study.file.seed,
        sbc: study.file.sbc,
        progress: Some(&report),
        spare_threads,
    };
    let (computed, wall_seconds) = job.spec.run_and_tabulate(&context, guarded);
    drop(line);
    let (tables, chunked, error) = match computed {
        Ok(Tabulated { tables, chunked }) => (tables, chunked, None),
        Err(message) => {
            let row = failed_row(&job.header, &message, wall_seconds).map_err(|e| {
                ExecuteError::Table {
                    job: job.header.id.clone(),
                    message: e.to_string(),
                }
            })?;
            (vec![("jobs", row)], Vec::new(), Some(message))
        }
    };
    let record = JobRecord {
        job_id: job.header.id.clone(),
        key: job.header.key.clone(),
        status: if error.is_none() {
            JobStatus::Ok
        } else {
            JobStatus::Failed
        },
        error: error.clone(),
        wall_seconds,
        data: job_data(job, hashes),
    };
    writer.write_job_chunked(&record, &tables, chunked)?;
    Ok(error)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("internal error (panic): {text}")
}

/// The short description of a job on its progress line.
fn job_label(job: &Job) -> String {
    format!(
        "{} {} r{}",
        job.header.id,
        job.spec.label(),
        job.header.replicate
    )
}

/// The default output folder of a study: `results/<name>`.
pub(crate) fn default_out(study: &Study) -> PathBuf {
    Path::new("results").join(&study.file.name)
}
