//! The results folder of one study and everything written into it.
//!
//! ```text
//! <root>/
//!   study.toml, manifest.json   the study as run, and who ran it (write_text, write_manifest)
//!   <table>.parquet             assembled from the part logs, in plan order (assemble)
//!   locks/                      one lock file per process working in the folder (lock.rs)
//!   parts/
//!     plan.tsv                  the study's jobs in plan order: job id, key hash
//!     <run>.log                 one append-only part log per run or shard (log.rs)
//! ```
//!
//! The number of files does not grow with the number of jobs: each run (a whole study, or one
//! shard of it) appends all its jobs to one log. Every other file appears under its final name
//! only once complete (written under a `.tmp-` name, synced, renamed). Temporaries are removed
//! only by a process that holds the folder alone, so a live process never loses its own.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use super::assemble::{self, Included};
use super::error::{SinkError, check_name};
use super::fsio::{self, atomic_write};
use super::index::{KeyHash, PartIndex, PlannedJob};
use super::lock::{self, FolderLock, Holder};
use super::log::{self, JobRecord, LogWriter, RunHeader};
use super::manifest::Manifest;
use crate::table::TableChunks;

const PARTS: &str = "parts";
const PLAN: &str = "plan.tsv";
const PLAN_HEADER: &str = "# fieldmc plan 1: job_id, BLAKE3 of the canonical key (16 bytes)";
const MANIFEST: &str = "manifest.json";
const TABLE_EXTENSION: &str = "parquet";

/// An opened, writable results folder.
#[derive(Debug, Clone)]
pub(crate) struct ResultsDir {
    root: PathBuf,
}

/// What [`ResultsDir::assemble`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AssembledCounts {
    /// Jobs whose record was found and included.
    pub(crate) jobs_included: usize,
    /// Planned jobs without a record (or with a record of another key), in plan order.
    pub(crate) jobs_missing: Vec<String>,
    /// Each table written, in first-seen order, with its row count.
    pub(crate) tables: Vec<(String, usize)>,
}

/// Appends the finished jobs of one run to its own part log. Shared by the worker threads.
pub(crate) struct RunWriter {
    log: LogWriter,
}

impl RunWriter {
    #[cfg(test)]
    /// Records one finished job's tables (any names, any columns of the supported types).
    pub(crate) fn write_job(
        &self,
        job: &JobRecord,
        tables: &[(&str, DataFrame)],
    ) -> Result<(), SinkError> {
        self.write_job_chunked(job, tables, Vec::new())
    }

    /// Records one finished job's tables: `tables` whole, and each of `chunked` (tables too large
    /// to hold whole) one chunk at a time, encoded as it is made. Names are unique over both.
    pub(crate) fn write_job_chunked(
        &self,
        job: &JobRecord,
        tables: &[(&str, DataFrame)],
        chunked: Vec<(&str, TableChunks<'_>)>,
    ) -> Result<(), SinkError> {
        check_name("job id", &job.job_id)?;
        let names = tables.iter().map(|(name, _)| *name);
        check_table_names(
            &job.job_id,
            names.chain(chunked.iter().map(|(name, _)| *name)),
        )?;
        self.log.append_job(job, tables, chunked)
    }

    /// Ends the run: its log is closed and flushed to disk.
    pub(crate) fn close(self) -> Result<(), SinkError> {
        self.log.close()
    }
}

impl ResultsDir {
    /// Opens `root` for writing: creates it and `parts/` if needed and checks that files can be
    /// created in it. Deletes nothing.
    pub(crate) fn open(root: &Path) -> Result<Self, SinkError> {
        let dir = ResultsDir {
            root: root.to_path_buf(),
        };
        fs::create_dir_all(dir.parts_dir())
            .map_err(|e| SinkError::io("create results folder", &dir.parts_dir(), e))?;
        dir.check_writable()?;
        Ok(dir)
    }

    /// Takes the folder's lock for `me` (see [`lock`]). A process that finds the folder free of
    /// other live processes also removes the temporaries that crashed runs left.
    pub(crate) fn lock(&self, me: Holder) -> Result<FolderLock, SinkError> {
        let lock = lock::acquire(&self.root, me)?;
        if lock.alone {
            fsio::remove_temporaries(&self.root)?;
            fsio::remove_temporaries(&self.parts_dir())?;
        }
        Ok(lock)
    }

    #[cfg(test)]
    /// The folder's path.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where the assembled table `table` lives.
    pub fn table_path(&self, table: &str) -> PathBuf {
        self.root.join(format!("{table}.{TABLE_EXTENSION}"))
    }

    /// Reads every part log: the newest record of each job.
    pub(crate) fn index(&self) -> Result<PartIndex, SinkError> {
        PartIndex::scan(&self.parts_dir())
    }

    /// Starts a run's part log (`parts/<header.run>.log`).
    pub(crate) fn start_run(&self, header: &RunHeader) -> Result<RunWriter, SinkError> {
        Ok(RunWriter {
            log: LogWriter::create(&self.parts_dir(), header)?,
        })
    }

    /// Starts over (`--force` without a shard): removes every part log, the plan, the assembled
    /// tables the logs name and the manifest. Other files in the folder are the user's and stay.
    /// Call with the folder locked alone.
    pub(crate) fn clear(&self) -> Result<(), SinkError> {
        let tables: Vec<String> = self.index()?.table_names().to_vec();
        // Move parts/ aside first so that a crash mid-way cannot leave half a log behind.
        let parts = self.parts_dir();
        let aside = fsio::temp_sibling(&parts)?;
        match fs::rename(&parts, &aside) {
            Ok(()) => fsio::remove_path(&aside)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(SinkError::io("clear", &parts, e)),
        }
        for table in tables {
            fsio::remove_path(&self.table_path(&table))?;
        }
        fsio::remove_path(&self.root.join(MANIFEST))?;
        fs::create_dir_all(&parts)
            .map_err(|e| SinkError::io("create results folder", &parts, e))?;
        fsio::sync_dir(&self.root)
    }

    /// Records the study's jobs in plan order (`parts/plan.tsv`), for `fieldmc merge`.
    pub(crate) fn write_plan(&self, plan: &[PlannedJob]) -> Result<(), SinkError> {
        let mut text = String::with_capacity(48 * plan.len() + 80);
        text.push_str(PLAN_HEADER);
        text.push('\n');
        for job in plan {
            check_name("job id", &job.job_id)?;
            text.push_str(&job.job_id);
            text.push('\t');
            text.push_str(&job.key.to_hex());
            text.push('\n');
        }
        let path = self.parts_dir().join(PLAN);
        if fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
            return Ok(());
        }
        atomic_write(&path, text.as_bytes())
    }

    /// The plan written by [`ResultsDir::write_plan`]; `None` when no run wrote one.
    pub(crate) fn read_plan(&self) -> Result<Option<Vec<PlannedJob>>, SinkError> {
        let path = self.parts_dir().join(PLAN);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(SinkError::io("read", &path, e)),
        };
        let mut plan = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if number == 0 && line == PLAN_HEADER {
                continue;
            }
            let parsed = line
                .split_once('\t')
                .and_then(|(id, key)| Some((id, KeyHash::from_hex(key)?)))
                .filter(|(id, _)| check_name("job id", id).is_ok());
            let Some((job_id, key)) = parsed else {
                return Err(SinkError::Corrupt {
                    path,
                    message: format!("line {} is not `job_id<TAB>key hash`", number + 1),
                });
            };
            plan.push(PlannedJob {
                job_id: job_id.to_string(),
                key,
            });
        }
        Ok(Some(plan))
    }

    /// Assembles every table over the `plan`'s jobs, in plan order, from their newest records
    /// in `index`, and writes `<table>.parquet` for each table some record has. Jobs without a
    /// record of the planned key are left out and listed. An assembled table that no included
    /// job has any more (left by an earlier run) is removed.
    pub(crate) fn assemble(
        &self,
        plan: &[PlannedJob],
        index: &PartIndex,
    ) -> Result<AssembledCounts, SinkError> {
        let mut included: Vec<Included<'_>> = Vec::with_capacity(plan.len());
        let mut jobs_missing = Vec::new();
        for planned in plan {
            match index.get(&planned.job_id).filter(|j| j.key == planned.key) {
                Some(job) => included.push((planned.job_id.as_str(), job)),
                None => jobs_missing.push(planned.job_id.clone()),
            }
        }
        let mut order: Vec<u32> = Vec::new();
        for (_, job) in &included {
            for span in &job.tables {
                if !order.contains(&span.table) {
                    order.push(span.table);
                }
            }
        }
        let logs = index
            .runs
            .iter()
            .map(|run| log::open_log(&run.log))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tables = Vec::new();
        for table in order {
            let name = index.table_names()[table as usize].clone();
            check_name("table name", &name)?;
            let final_path = self.table_path(&name);
            let temp = fsio::temp_sibling(&final_path)?;
            let result = assemble::write_table(table, &included, index, &logs, &temp)
                .and_then(|rows| fsio::publish(&temp, &final_path).map(|()| rows));
            match result {
                Ok(rows) => tables.push((name, rows)),
                Err(error) => {
                    let _ = fsio::remove_path(&temp);
                    return Err(error);
                }
            }
        }
        for stale in index.table_names() {
            let written = tables.iter().any(|(name, _)| name == stale);
            if !written && check_name("table name", stale).is_ok() {
                fsio::remove_path(&self.table_path(stale))?;
            }
        }
        Ok(AssembledCounts {
            jobs_included: included.len(),
            jobs_missing,
            tables,
        })
    }

    /// Writes `<root>/<name>` atomically (e.g. `study.toml`).
    pub(crate) fn write_text(&self, name: &str, text: &str) -> Result<(), SinkError> {
        check_name("file name", name)?;
        atomic_write(&self.root.join(name), text.as_bytes())
    }

    /// Writes `manifest.json` atomically.
    pub(crate) fn write_manifest(&self, manifest: &Manifest) -> Result<(), SinkError> {
        let mut text = serde_json::to_string_pretty(manifest)?;
        text.push('\n');
        self.write_text(MANIFEST, &text)
    }

    fn parts_dir(&self) -> PathBuf {
        self.root.join(PARTS)
    }

    /// Creates and removes a file in the root, so that an unwritable folder is reported before
    /// any job runs.
    fn check_writable(&self) -> Result<(), SinkError> {
        let probe = fsio::temp_sibling(&self.root.join("write-check"))?;
        fs::File::create(&probe).map_err(|e| SinkError::io("write results to", &self.root, e))?;
        fs::remove_file(&probe).map_err(|e| SinkError::io("write results to", &self.root, e))
    }
}

fn check_table_names<'a>(
    job_id: &str,
    tables: impl Iterator<Item = &'a str>,
) -> Result<(), SinkError> {
    let mut seen = BTreeSet::new();
    for table in tables {
        check_name("table name", table)?;
        if !seen.insert(table) {
            return Err(SinkError::DuplicateTable {
                job_id: job_id.to_string(),
                table: table.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::lock::Purpose;
    use crate::sink::parquet::read_parquet;
    use crate::table::{JobStatus, SchemaError};
    use polars::prelude::*;

    fn header(run: &str, started_unix_ms: u64) -> RunHeader {
        RunHeader {
            started_unix_ms,
            ..crate::sink::log::tests::header(run)
        }
    }

    fn record(id: &str, status: JobStatus) -> JobRecord {
        JobRecord {
            job_id: id.into(),
            key: format!("key {id}"),
            status,
            error: (status == JobStatus::Failed).then(|| "chol failed".to_string()),
            wall_seconds: 0.1,
            data: vec![],
        }
    }

    fn ok_job(id: &str) -> Vec<(&'static str, DataFrame)> {
        vec![
            (
                "jobs",
                df!("job_id" => [id], "status" => ["ok"], "error" => [None::<&str>],
                    "acceptance_rate" => [0.25f64], "mae" => [0.125f64])
                .unwrap(),
            ),
            (
                "fields",
                df!("job_id" => [id, id], "cell" => [0i64, 1], "post_mean" => [1.0f64, -1.0])
                    .unwrap(),
            ),
        ]
    }

    /// A failed job: no metric columns, `error` set, and no fields table at all.
    fn failed_job(id: &str) -> Vec<(&'static str, DataFrame)> {
        let jobs =
            df!("job_id" => [id], "status" => ["failed"], "error" => ["chol failed"]).unwrap();
        let mae = Column::full_null("mae".into(), 1, &DataType::Null);
        vec![("jobs", jobs.hstack(&[mae]).unwrap())]
    }

    fn planned(ids: &[&str]) -> Vec<PlannedJob> {
        ids.iter()
            .map(|id| PlannedJob::new(id, &format!("key {id}")))
            .collect()
    }

    fn entries(path: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn strings(df: &DataFrame, column: &str) -> Vec<Option<String>> {
        let column = df.column(column).unwrap().str().unwrap().clone();
        column.iter().map(|v| v.map(str::to_string)).collect()
    }

    fn assemble(dir: &ResultsDir, ids: &[&str]) -> AssembledCounts {
        dir.assemble(&planned(ids), &dir.index().unwrap()).unwrap()
    }

    #[test]
    fn round_trip_of_differing_schemas_in_plan_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(&tmp.path().join("results/study")).unwrap();
        let run = dir.start_run(&header("r1", 1)).unwrap();
        // Written out of plan order, as parallel jobs finish.
        run.write_job(
            &record("b-failed", JobStatus::Failed),
            &failed_job("b-failed"),
        )
        .unwrap();
        run.write_job(&record("a-ok", JobStatus::Ok), &ok_job("a-ok"))
            .unwrap();
        run.write_job(&record("c-ok", JobStatus::Ok), &ok_job("c-ok"))
            .unwrap();
        run.close().unwrap();

        let counts = assemble(&dir, &["c-ok", "b-failed", "never-ran", "a-ok"]);
        assert_eq!(counts.jobs_included, 3);
        assert_eq!(counts.jobs_missing, ["never-ran"]);
        assert_eq!(
            counts.tables,
            vec![("jobs".to_string(), 3), ("fields".to_string(), 4)]
        );
        let jobs = read_parquet(&dir.table_path("jobs")).unwrap();
        assert_eq!(
            strings(&jobs, "job_id"),
            [Some("c-ok"), Some("b-failed"), Some("a-ok")].map(|s| s.map(String::from))
        );
        assert_eq!(
            strings(&jobs, "error"),
            [None, Some("chol failed"), None].map(|s| s.map(String::from))
        );
        let mae = jobs.column("mae").unwrap();
        assert_eq!(mae.dtype(), &DataType::Float64);
        let mae: Vec<Option<f64>> = mae.f64().unwrap().iter().collect();
        assert_eq!(mae, [Some(0.125), None, Some(0.125)]);
        let fields = read_parquet(&dir.table_path("fields")).unwrap();
        assert_eq!(
            strings(&fields, "job_id"),
            ["c-ok", "c-ok", "a-ok", "a-ok"].map(|s| Some(s.to_string()))
        );
        assert!(!dir.table_path("traces").exists());
        assert_eq!(
            entries(dir.root()),
            ["fields.parquet", "jobs.parquet", "parts"]
        );
        assert_eq!(entries(&dir.root().join("parts")), ["r1.log"]);
    }

    #[test]
    fn the_newest_record_of_a_job_wins_and_a_key_change_makes_it_missing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let first = dir.start_run(&header("r-old", 5)).unwrap();
        first
            .write_job(&record("j", JobStatus::Failed), &failed_job("j"))
            .unwrap();
        first.close().unwrap();
        let second = dir.start_run(&header("r-new", 9)).unwrap();
        second
            .write_job(&record("j", JobStatus::Ok), &ok_job("j"))
            .unwrap();
        second.close().unwrap();
        let index = dir.index().unwrap();
        assert_eq!(index.get("j").unwrap().status, JobStatus::Ok);
        assert_eq!(index.runs.len(), 2);
        let counts = assemble(&dir, &["j"]);
        assert_eq!(counts.tables.len(), 2);
        let other_key = vec![PlannedJob::new("j", "another key")];
        let counts = dir.assemble(&other_key, &index).unwrap();
        assert_eq!(counts.jobs_missing, ["j"]);
        assert!(counts.tables.is_empty());
        assert!(!dir.table_path("jobs").exists(), "stale tables are removed");
    }

    #[test]
    fn a_torn_tail_is_noted_with_its_log_and_size_and_kept_in_the_manifest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        run.write_job(&record("a", JobStatus::Ok), &ok_job("a"))
            .unwrap();
        run.close().unwrap();
        assert!(dir.index().unwrap().ignored_tails().is_empty());
        let log = dir.parts_dir().join("r.log");
        let mut file = fs::OpenOptions::new().append(true).open(&log).unwrap();
        std::io::Write::write_all(&mut file, b"JOB1\x07torn").unwrap();
        let index = dir.index().unwrap();
        assert_eq!(index.len(), 1, "the complete record still counts");
        let notes = index.ignored_tails();
        assert_eq!(notes.len(), 1);
        let expected = format!("ignored the last 9 bytes of {}:", log.display());
        assert!(notes[0].contains(&expected), "{}", notes[0]);
        let manifest =
            crate::sink::manifest_of("s", 1, 1, &planned(&["a"]), &index, Some("another run"));
        assert_eq!(manifest.runs.len(), 1);
        assert_eq!(manifest.runs[0].ignored_bytes, 9);
        let json = serde_json::to_string(&manifest).unwrap();
        assert!(json.contains("\"ignored_bytes\":9"), "{json}");
    }

    #[test]
    fn the_plan_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        assert_eq!(dir.read_plan().unwrap(), None);
        let plan = planned(&["b", "a", "c"]);
        dir.write_plan(&plan).unwrap();
        assert_eq!(dir.read_plan().unwrap(), Some(plan));
    }

    #[test]
    fn clear_removes_logs_tables_and_manifest_but_not_user_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        run.write_job(&record("a", JobStatus::Ok), &ok_job("a"))
            .unwrap();
        run.close().unwrap();
        assemble(&dir, &["a"]);
        dir.write_manifest(&Manifest::begin("x", 1, 1)).unwrap();
        dir.write_text("study.toml", "[study]").unwrap();
        fs::write(tmp.path().join("survey.parquet"), b"user data").unwrap();
        fs::write(tmp.path().join(".tmp-notes"), b"user notes").unwrap();
        dir.clear().unwrap();
        assert_eq!(
            entries(tmp.path()),
            [".tmp-notes", "parts", "study.toml", "survey.parquet"]
        );
        assert!(dir.index().unwrap().is_empty());
    }

    #[test]
    fn unsafe_names_are_refused_before_touching_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        for bad in ["", "../escape", "a/b", ".tmp-x", ".."] {
            let error = run
                .write_job(&record(bad, JobStatus::Ok), &ok_job("x"))
                .unwrap_err();
            assert!(matches!(error, SinkError::InvalidName { .. }), "{bad:?}");
        }
        let bad_table = [("../jobs", df!("a" => [1i64]).unwrap())];
        assert!(matches!(
            run.write_job(&record("j", JobStatus::Ok), &bad_table),
            Err(SinkError::InvalidName { .. })
        ));
        let twice = [
            ("jobs", df!("a" => [1i64]).unwrap()),
            ("jobs", df!("a" => [2i64]).unwrap()),
        ];
        assert!(matches!(
            run.write_job(&record("j", JobStatus::Ok), &twice),
            Err(SinkError::DuplicateTable { .. })
        ));
        run.close().unwrap();
        assert!(dir.write_text("../outside.toml", "x").is_err());
        assert!(dir.index().unwrap().is_empty());
    }

    #[test]
    fn conflicting_column_types_leave_no_table_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        let a = [("traces", df!("iteration" => [1i64]).unwrap())];
        let b = [("traces", df!("iteration" => ["one"]).unwrap())];
        run.write_job(&record("a", JobStatus::Ok), &a).unwrap();
        run.write_job(&record("b", JobStatus::Ok), &b).unwrap();
        run.close().unwrap();
        let error = dir
            .assemble(&planned(&["a", "b"]), &dir.index().unwrap())
            .unwrap_err();
        assert!(matches!(error, SinkError::SchemaConflict { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.contains("\"iteration\"") && text.contains("job b"),
            "{text}"
        );
        assert_eq!(entries(tmp.path()), ["parts"]);
    }

    #[test]
    fn many_jobs_are_written_in_several_row_groups_in_plan_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        let ids: Vec<String> = (0..300).map(|i| format!("job{i:03}")).collect();
        let wide = 20_000; // rows per job: 300 x 20,000 x 2 columns spans several row groups
        for id in ids.iter().rev() {
            let values: Vec<f64> = (0..wide).map(|k| k as f64).collect();
            let frame = df!("job_id" => vec![id.as_str(); wide], "v" => values).unwrap();
            run.write_job(&record(id, JobStatus::Ok), &[("big", frame)])
                .unwrap();
        }
        run.close().unwrap();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let counts = assemble(&dir, &refs);
        assert_eq!(counts.tables, vec![("big".to_string(), 300 * wide)]);
        let big = read_parquet(&dir.table_path("big")).unwrap();
        let firsts: Vec<String> = (0..300)
            .map(|k| {
                let value = big.column("job_id").unwrap().get(k * wide).unwrap();
                value.get_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(firsts, ids);
    }

    /// A chunk of a job's `draws` table: `rows` rows whose `draw` column counts on from `first`.
    fn draw_chunk(id: &str, first: usize, rows: usize) -> Result<DataFrame, SchemaError> {
        let draw: Vec<i64> = (first..first + rows).map(|d| d as i64).collect();
        let value: Vec<f64> = draw.iter().map(|&d| (d as f64).sqrt()).collect();
        Ok(df!("job_id" => vec![id; rows], "draw" => draw, "value" => value).unwrap())
    }

    #[test]
    fn a_chunked_table_is_stacked_in_order_and_spans_row_groups() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        // 2 jobs x 40 chunks x 50,000 rows x 3 columns: several row groups within one job.
        let (chunks, rows) = (40, 50_000);
        for id in ["b", "a"] {
            let made = (0..chunks).map(move |k| draw_chunk(id, k * rows, rows));
            run.write_job_chunked(
                &record(id, JobStatus::Ok),
                &ok_job(id),
                vec![("draws", Box::new(made))],
            )
            .unwrap();
        }
        run.close().unwrap();
        let counts = assemble(&dir, &["a", "b"]);
        assert!(
            counts
                .tables
                .contains(&("draws".to_string(), 2 * chunks * rows))
        );
        let draws = read_parquet(&dir.table_path("draws")).unwrap();
        let ids = draws.column("job_id").unwrap().str().unwrap();
        let draw = draws.column("draw").unwrap().i64().unwrap();
        for (k, (id, d)) in ids.iter().zip(draw.iter()).enumerate() {
            let expected = if k < chunks * rows { "a" } else { "b" };
            assert_eq!(id, Some(expected), "row {k}");
            assert_eq!(d, Some((k % (chunks * rows)) as i64), "row {k}");
        }
        // The log holds the draws more compactly than the plain values would take.
        let log_bytes: u64 = fs::read_dir(dir.parts_dir())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(
            log_bytes < (2 * chunks * rows * 16) as u64 / 2,
            "{log_bytes}"
        );
    }

    #[test]
    fn a_chunked_table_names_once_and_a_failing_chunk_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let run = dir.start_run(&header("r", 1)).unwrap();
        let chunks = || -> TableChunks<'static> { Box::new((0..2).map(|k| draw_chunk("j", k, 3))) };
        let error = run
            .write_job_chunked(
                &record("j", JobStatus::Ok),
                &ok_job("j"),
                vec![("jobs", chunks())],
            )
            .unwrap_err();
        assert!(matches!(error, SinkError::DuplicateTable { .. }), "{error}");
        let broken: TableChunks<'static> = Box::new(
            [
                draw_chunk("j", 0, 3),
                Err(SchemaError::Undeclared {
                    table: "draws".into(),
                    column: "x".into(),
                }),
            ]
            .into_iter(),
        );
        let error = run
            .write_job_chunked(
                &record("j", JobStatus::Ok),
                &ok_job("j"),
                vec![("draws", broken)],
            )
            .unwrap_err();
        assert!(error.to_string().contains("draws"), "{error}");
        run.close().unwrap();
        assert!(dir.index().unwrap().is_empty(), "half a job was recorded");
    }

    #[test]
    fn a_lone_process_removes_temporaries_a_sharing_one_does_not() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::open(tmp.path()).unwrap();
        let shard = |index| Holder::this_process(Purpose::Shard { index, count: 2 }, "s");
        let first = dir.lock(shard(0)).unwrap();
        let temporary = tmp.path().join(".tmp-jobs.parquet-1-2");
        fs::write(&temporary, b"being written by shard 0").unwrap();
        let second = dir.lock(shard(1)).unwrap();
        assert!(temporary.exists(), "a live shard's temporary was deleted");
        drop((first, second));
        let _alone = dir.lock(Holder::this_process(Purpose::Run, "s")).unwrap();
        assert!(!temporary.exists());
    }

    /// A folder that cannot be created (below a regular file: for every user, root included)
    /// is an error naming the folder and the cause. Permission bits are checked through the
    /// binary in tests/trust_crash.rs, run as an unprivileged user when the tests run as root.
    #[test]
    fn unwritable_folder_gives_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, b"a regular file").unwrap();
        let results = file.join("study");
        let error = ResultsDir::open(&results).unwrap_err();
        assert_eq!(error.io_kind(), Some(std::io::ErrorKind::NotADirectory));
        let text = error.to_string();
        assert!(text.starts_with("cannot create results folder "), "{text}");
        assert!(text.contains(&*results.to_string_lossy()), "{text}");
    }
}
