//! The results folder of one study run and everything written into it.
//!
//! ```text
//! <root>/
//!   study.toml, manifest.json     written with ResultsDir::write_text / write_manifest
//!   parts/<job_id>/               one folder per finished job, published by one rename:
//!     <table>.parquet             each table the job produced
//!     part.json                   the job id and its table names, written last
//!   <table>.parquet               assembled from the parts, in plan order
//! ```
//!
//! A part folder is built under `parts/.tmp-<job_id>-<pid>-<nonce>/`, every file synced, then
//! renamed to `parts/<job_id>/` and `parts/` synced, so a crash leaves either no part or a
//! complete one. Names starting with `.tmp-` are never read and are deleted when a run opens the
//! folder. One run at a time may write into a results folder.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;
use serde::{Deserialize, Serialize};

use super::align::concat_aligned;
use super::error::{SinkError, check_name};
use super::fsio::{self, atomic_write};
use super::manifest::Manifest;
use super::parquet::{Encoding, read_parquet, write_parquet_new};

const PARTS: &str = "parts";
const PART_INDEX: &str = "part.json";
const MANIFEST: &str = "manifest.json";
const TABLE_EXTENSION: &str = "parquet";

/// An opened, writable results folder.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    root: PathBuf,
}

/// What [`ResultsDir::assemble`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledCounts {
    /// Jobs whose part was found and included.
    pub jobs_included: usize,
    /// Requested jobs without a finished part, in the order given.
    pub jobs_missing: Vec<String>,
    /// Each table written, in first-seen order, with its row count.
    pub tables: Vec<(String, usize)>,
}

/// The index a part folder carries: written last, so its presence marks a complete part.
#[derive(Debug, Serialize, Deserialize)]
struct PartIndex {
    job_id: String,
    tables: Vec<String>,
}

impl ResultsDir {
    /// Opens `root` for writing: creates it and `parts/` if needed, checks that files can be
    /// created in it, and removes temporaries left by an interrupted run.
    pub fn create(root: &Path) -> Result<Self, SinkError> {
        let dir = ResultsDir {
            root: root.to_path_buf(),
        };
        fs::create_dir_all(dir.parts_dir())
            .map_err(|e| SinkError::io("create results folder", &dir.parts_dir(), e))?;
        fsio::remove_temporaries(&dir.root)?;
        fsio::remove_temporaries(&dir.parts_dir())?;
        dir.check_writable()?;
        Ok(dir)
    }

    /// The folder's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the assembled table `table` lives.
    pub fn table_path(&self, table: &str) -> PathBuf {
        self.root.join(format!("{table}.{TABLE_EXTENSION}"))
    }

    /// The ids of every job with a complete part folder.
    pub fn finished_jobs(&self) -> Result<BTreeSet<String>, SinkError> {
        let mut finished = BTreeSet::new();
        for job_id in self.part_folder_names()? {
            if self.read_part_index(&job_id)?.is_some() {
                finished.insert(job_id);
            }
        }
        Ok(finished)
    }

    /// Starts over (`--fresh`): removes every part, the assembled tables the parts name and the
    /// manifest. Other files in the folder are the user's and stay (an `--out` folder may hold
    /// unrelated Parquet files).
    pub fn clear(&self) -> Result<(), SinkError> {
        let tables = self.known_tables()?;
        // Move parts/ aside first so that a crash mid-way cannot leave a half-deleted part
        // under a final name.
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

    /// Publishes one finished job's tables as `parts/<job_id>/`, atomically, replacing an
    /// earlier part of the same job. Table names must be distinct.
    pub fn write_job(
        &self,
        job_id: &str,
        tables: &mut [(&str, DataFrame)],
    ) -> Result<(), SinkError> {
        check_name("job id", job_id)?;
        check_table_names(job_id, tables)?;
        let final_dir = self.part_dir(job_id);
        let staging = fsio::temp_sibling(&final_dir)?;
        let result = self
            .stage_part(&staging, job_id, tables)
            .and_then(|()| self.publish_part(&staging, &final_dir));
        if result.is_err() {
            let _ = fsio::remove_path(&staging);
        }
        result
    }

    /// Assembles every table over `job_ids` in that order and writes `<table>.parquet` for each
    /// table some part has. Jobs without a finished part are skipped and listed. An assembled
    /// table that no finished part has any more (left by an earlier run) is removed.
    pub fn assemble(&self, job_ids: &[String]) -> Result<AssembledCounts, SinkError> {
        let mut included = Vec::new();
        let mut jobs_missing = Vec::new();
        for job_id in job_ids {
            let index = match check_name("job id", job_id) {
                Ok(()) => self.read_part_index(job_id)?,
                Err(_) => None,
            };
            match index {
                Some(index) => included.push(index),
                None => jobs_missing.push(job_id.clone()),
            }
        }
        let mut tables = Vec::new();
        for table in table_names_in_order(&included) {
            let rows = self.assemble_table(&table, &included)?;
            tables.push((table, rows));
        }
        self.remove_stale_tables(&tables)?;
        Ok(AssembledCounts {
            jobs_included: included.len(),
            jobs_missing,
            tables,
        })
    }

    /// Writes `<root>/<name>` atomically (e.g. `study.toml`).
    pub fn write_text(&self, name: &str, text: &str) -> Result<(), SinkError> {
        check_name("file name", name)?;
        atomic_write(&self.root.join(name), text.as_bytes())
    }

    /// Writes `manifest.json` atomically.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), SinkError> {
        let mut text = serde_json::to_string_pretty(manifest)?;
        text.push('\n');
        self.write_text(MANIFEST, &text)
    }

    fn parts_dir(&self) -> PathBuf {
        self.root.join(PARTS)
    }

    fn part_dir(&self, job_id: &str) -> PathBuf {
        self.parts_dir().join(job_id)
    }

    /// Creates and removes a file in the root, so that an unwritable folder is reported before
    /// any job runs.
    fn check_writable(&self) -> Result<(), SinkError> {
        let probe = fsio::temp_sibling(&self.root.join("write-check"))?;
        fs::File::create(&probe).map_err(|e| SinkError::io("write results to", &self.root, e))?;
        fs::remove_file(&probe).map_err(|e| SinkError::io("write results to", &self.root, e))
    }

    /// Names of the non-temporary folders in `parts/`.
    fn part_folder_names(&self) -> Result<Vec<String>, SinkError> {
        let parts = self.parts_dir();
        let mut names = Vec::new();
        for entry in fsio::read_dir(&parts)? {
            let entry = entry.map_err(|e| SinkError::io("list", &parts, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            if is_dir && check_name("job id", &name).is_ok() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// The index of a complete part, or `None` when the part is absent or incomplete (no or
    /// unreadable index, a listed table file missing).
    fn read_part_index(&self, job_id: &str) -> Result<Option<PartIndex>, SinkError> {
        let dir = self.part_dir(job_id);
        let path = dir.join(PART_INDEX);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => return Ok(None),
            Err(e) => return Err(SinkError::io("read", &path, e)),
        };
        let Ok(index) = serde_json::from_str::<PartIndex>(&text) else {
            return Ok(None);
        };
        let complete = index.job_id == job_id
            && index.tables.iter().all(|table| {
                check_name("table name", table).is_ok() && table_file(&dir, table).is_file()
            });
        Ok(complete.then_some(index))
    }

    /// Writes every table and the index into `staging`, synced.
    fn stage_part(
        &self,
        staging: &Path,
        job_id: &str,
        tables: &mut [(&str, DataFrame)],
    ) -> Result<(), SinkError> {
        fs::create_dir(staging).map_err(|e| SinkError::io("write results to", staging, e))?;
        for (table, frame) in tables.iter_mut() {
            write_parquet_new(&table_file(staging, table), frame, Encoding::Serial)?;
        }
        let index = PartIndex {
            job_id: job_id.to_string(),
            tables: tables.iter().map(|(name, _)| name.to_string()).collect(),
        };
        let index_path = staging.join(PART_INDEX);
        let file = fsio::create_new(&index_path)?;
        serde_json::to_writer(&file, &index)
            .map_err(|e| SinkError::io("write results to", &index_path, std::io::Error::from(e)))?;
        fsio::sync_file(&file, &index_path)?;
        fsio::sync_dir(staging)
    }

    /// Renames `staging` to `final_dir`, moving an earlier part of the same job aside first
    /// (a folder cannot be renamed over a non-empty one).
    fn publish_part(&self, staging: &Path, final_dir: &Path) -> Result<(), SinkError> {
        let previous = fsio::temp_sibling(final_dir)?;
        let moved_aside = match fs::rename(final_dir, &previous) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(SinkError::io("replace", final_dir, e)),
        };
        fsio::publish(staging, final_dir)?;
        if moved_aside {
            fsio::remove_path(&previous)?;
        }
        Ok(())
    }

    /// Concatenates `table` over the parts that have it and publishes it; returns its rows.
    fn assemble_table(&self, table: &str, parts: &[PartIndex]) -> Result<usize, SinkError> {
        let mut frames = Vec::new();
        for part in parts.iter().filter(|p| p.tables.iter().any(|t| t == table)) {
            let frame = read_parquet(&table_file(&self.part_dir(&part.job_id), table))?;
            frames.push((part.job_id.clone(), frame));
        }
        let mut assembled = concat_aligned(table, frames)?;
        let final_path = self.table_path(table);
        let temp = fsio::temp_sibling(&final_path)?;
        let result = write_parquet_new(&temp, &mut assembled, Encoding::Parallel)
            .and_then(|()| fsio::publish(&temp, &final_path));
        if result.is_err() {
            let _ = fsio::remove_path(&temp);
        }
        result.map(|()| assembled.height())
    }

    /// Removes assembled tables that some finished part names but this assembly did not write.
    fn remove_stale_tables(&self, written: &[(String, usize)]) -> Result<(), SinkError> {
        for table in self.known_tables()? {
            if !written.iter().any(|(name, _)| *name == table) {
                fsio::remove_path(&self.table_path(&table))?;
            }
        }
        Ok(())
    }

    /// The table names that some complete part carries: the only tables this folder's runs
    /// assemble.
    fn known_tables(&self) -> Result<BTreeSet<String>, SinkError> {
        let mut known = BTreeSet::new();
        for job_id in self.part_folder_names()? {
            if let Some(index) = self.read_part_index(&job_id)? {
                known.extend(index.tables);
            }
        }
        Ok(known)
    }
}

fn table_file(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.{TABLE_EXTENSION}"))
}

fn check_table_names(job_id: &str, tables: &[(&str, DataFrame)]) -> Result<(), SinkError> {
    let mut seen = BTreeSet::new();
    for (table, _) in tables {
        check_name("table name", table)?;
        if !seen.insert(*table) {
            return Err(SinkError::DuplicateTable {
                job_id: job_id.to_string(),
                table: table.to_string(),
            });
        }
    }
    Ok(())
}

/// Table names over all parts, in first-seen order.
fn table_names_in_order(parts: &[PartIndex]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for table in parts.iter().flat_map(|p| &p.tables) {
        if !names.contains(table) {
            names.push(table.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

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
        let jobs = jobs.hstack(&[mae]).unwrap();
        vec![("jobs", jobs)]
    }

    fn write(dir: &ResultsDir, id: &str, mut tables: Vec<(&'static str, DataFrame)>) {
        dir.write_job(id, &mut tables).unwrap();
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
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

    #[test]
    fn round_trip_of_differing_schemas_in_plan_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(&tmp.path().join("results/study")).unwrap();
        // Written out of plan order, as parallel jobs finish.
        write(&dir, "b-failed", failed_job("b-failed"));
        write(&dir, "a-ok", ok_job("a-ok"));
        write(&dir, "c-ok", ok_job("c-ok"));

        let plan = ids(&["c-ok", "b-failed", "never-ran", "a-ok"]);
        let counts = dir.assemble(&plan).unwrap();
        assert_eq!(counts.jobs_included, 3);
        assert_eq!(counts.jobs_missing, ids(&["never-ran"]));
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
        assert_eq!(jobs.column("acceptance_rate").unwrap().null_count(), 1);

        let fields = read_parquet(&dir.table_path("fields")).unwrap();
        assert_eq!(
            strings(&fields, "job_id"),
            ["c-ok", "c-ok", "a-ok", "a-ok"].map(|s| Some(s.to_string()))
        );
        assert!(!dir.table_path("traces").exists());
    }

    #[test]
    fn finished_jobs_sees_exactly_the_complete_parts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "done-1", ok_job("done-1"));
        write(&dir, "done-2", failed_job("done-2"));
        let parts = tmp.path().join(PARTS);
        // A crash while staging: a temporary folder with one table.
        fs::create_dir(parts.join(".tmp-half-123-456")).unwrap();
        fs::copy(
            parts.join("done-1/jobs.parquet"),
            parts.join(".tmp-half-123-456/jobs.parquet"),
        )
        .unwrap();
        // A folder under a final name without its index, and one whose listed table is gone.
        fs::create_dir(parts.join("no-index")).unwrap();
        fs::create_dir(parts.join("lost-table")).unwrap();
        fs::write(
            parts.join("lost-table/part.json"),
            r#"{"job_id":"lost-table","tables":["jobs"]}"#,
        )
        .unwrap();
        // A stray file.
        fs::write(parts.join("notes.txt"), b"x").unwrap();

        let finished = dir.finished_jobs().unwrap();
        assert_eq!(finished, BTreeSet::from(["done-1".into(), "done-2".into()]));

        let counts = dir
            .assemble(&ids(&[
                "half",
                "done-2",
                "no-index",
                "lost-table",
                "done-1",
            ]))
            .unwrap();
        assert_eq!(counts.jobs_included, 2);
        assert_eq!(
            counts.jobs_missing,
            ids(&["half", "no-index", "lost-table"])
        );
        assert_eq!(counts.tables[0], ("jobs".to_string(), 2));
    }

    #[test]
    fn reopening_cleans_leftover_temporaries_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "kept", ok_job("kept"));
        fs::create_dir(tmp.path().join("parts/.tmp-gone-1-2")).unwrap();
        fs::write(tmp.path().join(".tmp-jobs.parquet-1-2"), b"partial").unwrap();
        fs::write(tmp.path().join("study.toml"), b"[study]").unwrap();

        let dir = ResultsDir::create(tmp.path()).unwrap();
        assert_eq!(entries(tmp.path()), ["parts", "study.toml"]);
        assert_eq!(entries(&tmp.path().join("parts")), ["kept"]);
        assert_eq!(dir.finished_jobs().unwrap().len(), 1);
    }

    #[test]
    fn publishing_leaves_only_final_names() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "j1", ok_job("j1"));
        dir.write_text("study.toml", "[study]\nname = \"x\"\n")
            .unwrap();
        dir.write_manifest(&Manifest::begin("x", 1, 2)).unwrap();
        dir.assemble(&ids(&["j1"])).unwrap();
        assert_eq!(
            entries(tmp.path()),
            [
                "fields.parquet",
                "jobs.parquet",
                "manifest.json",
                "parts",
                "study.toml"
            ]
        );
        assert_eq!(entries(&tmp.path().join("parts")), ["j1"]);
        assert_eq!(
            entries(&tmp.path().join("parts/j1")),
            ["fields.parquet", "jobs.parquet", "part.json"]
        );
        let text = fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
        let manifest: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (manifest.study.as_str(), manifest.seed, manifest.threads),
            ("x", 1, 2)
        );
    }

    #[test]
    fn rewriting_a_job_replaces_its_part() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "j", ok_job("j"));
        write(&dir, "j", failed_job("j"));
        assert_eq!(entries(&tmp.path().join("parts")), ["j"]);
        assert_eq!(
            entries(&tmp.path().join("parts/j")),
            ["jobs.parquet", "part.json"]
        );
        let counts = dir.assemble(&ids(&["j"])).unwrap();
        assert_eq!(counts.tables, vec![("jobs".to_string(), 1)]);
    }

    #[test]
    fn assembly_drops_tables_that_no_longer_have_parts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "a", ok_job("a"));
        write(&dir, "b", failed_job("b"));
        dir.assemble(&ids(&["a", "b"])).unwrap();
        assert!(dir.table_path("fields").exists());
        // The plan now holds only the failed job: a fields table from before would be stale.
        dir.assemble(&ids(&["b"])).unwrap();
        assert!(!dir.table_path("fields").exists());
        assert_eq!(read_parquet(&dir.table_path("jobs")).unwrap().height(), 1);
    }

    #[test]
    fn clear_removes_parts_tables_and_manifest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(&dir, "a", ok_job("a"));
        dir.assemble(&ids(&["a"])).unwrap();
        dir.write_manifest(&Manifest::begin("x", 1, 1)).unwrap();
        dir.write_text("study.toml", "[study]").unwrap();
        dir.clear().unwrap();
        assert_eq!(entries(tmp.path()), ["parts", "study.toml"]);
        assert!(dir.finished_jobs().unwrap().is_empty());
        // Files the user keeps in the folder are not fieldmc's to delete.
        fs::write(tmp.path().join("survey.parquet"), b"user data").unwrap();
        fs::write(tmp.path().join(".tmp-notes"), b"user notes").unwrap();
        write(&dir, "a", ok_job("a"));
        dir.assemble(&ids(&["a"])).unwrap();
        dir.clear().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        assert_eq!(
            entries(tmp.path()),
            [".tmp-notes", "parts", "study.toml", "survey.parquet"]
        );
        // Still usable after clearing.
        write(&dir, "a", ok_job("a"));
        assert_eq!(dir.finished_jobs().unwrap().len(), 1);
    }

    #[test]
    fn unsafe_names_are_refused_before_touching_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        for bad in ["", "../escape", "a/b", ".tmp-x", ".."] {
            let error = dir.write_job(bad, &mut ok_job("x")).unwrap_err();
            assert!(
                matches!(error, SinkError::InvalidName { .. }),
                "{bad:?}: {error}"
            );
        }
        let mut bad_table = vec![("../jobs", df!("a" => [1i64]).unwrap())];
        assert!(matches!(
            dir.write_job("j", &mut bad_table).unwrap_err(),
            SinkError::InvalidName { .. }
        ));
        let mut twice = vec![
            ("jobs", df!("a" => [1i64]).unwrap()),
            ("jobs", df!("a" => [2i64]).unwrap()),
        ];
        assert!(matches!(
            dir.write_job("j", &mut twice).unwrap_err(),
            SinkError::DuplicateTable { .. }
        ));
        assert!(dir.write_text("../outside.toml", "x").is_err());
        assert_eq!(entries(&tmp.path().join("parts")), Vec::<String>::new());
        assert_eq!(entries(tmp.path()), ["parts"]);
    }

    #[test]
    fn conflicting_part_schemas_leave_no_table_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(tmp.path()).unwrap();
        write(
            &dir,
            "a",
            vec![("traces", df!("iteration" => [1i64]).unwrap())],
        );
        write(
            &dir,
            "b",
            vec![("traces", df!("iteration" => ["one"]).unwrap())],
        );
        let error = dir.assemble(&ids(&["a", "b"])).unwrap_err();
        assert!(matches!(error, SinkError::SchemaConflict { .. }), "{error}");
        assert_eq!(entries(tmp.path()), ["parts"]);
    }

    #[cfg(unix)]
    #[test]
    fn unwritable_folder_gives_a_clear_error() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let locked = tmp.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o500)).unwrap();
        // Root ignores permission bits: only assert where the lock is effective.
        let effective = fs::write(locked.join("probe"), b"x").is_err();
        let results = locked.join("study");
        let outcome = ResultsDir::create(&results);
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
        if !effective {
            eprintln!("skipped: permissions are not enforced for this user");
            return;
        }
        let error = outcome.unwrap_err();
        assert_eq!(error.io_kind(), Some(std::io::ErrorKind::PermissionDenied));
        let text = error.to_string();
        assert!(text.starts_with("cannot create results folder "), "{text}");
        assert!(text.ends_with(": permission denied"), "{text}");
        assert!(text.contains(&*results.to_string_lossy()), "{text}");

        // An existing folder that became read-only: refused at open, before any job runs.
        let existing = tmp.path().join("existing");
        fs::create_dir_all(existing.join(PARTS)).unwrap();
        fs::set_permissions(&existing, fs::Permissions::from_mode(0o500)).unwrap();
        let outcome = ResultsDir::create(&existing);
        fs::set_permissions(&existing, fs::Permissions::from_mode(0o700)).unwrap();
        let text = outcome.unwrap_err().to_string();
        assert_eq!(
            text,
            format!(
                "cannot write results to {}: permission denied",
                existing.display()
            )
        );
    }
}
