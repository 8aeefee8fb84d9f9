//! Shared helpers of the integration tests (`cli`, `trust_*`): driving the real `fieldmc` binary, reading
//! its Parquet tables back, comparing results folders and checking that a folder holds no
//! partial file under a final name and no non-finite number.
//!
//! Each test crate uses only some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use polars::prelude::*;

/// Every table a run may write, as the registry declares them.
pub fn table_names() -> Vec<&'static str> {
    fieldmc::families::tables().iter().map(|t| t.name).collect()
}

/// Whether `column` measures time in some table (it differs between runs by nature).
pub fn is_timing(column: &str) -> bool {
    fieldmc::families::tables().iter().any(|table| {
        fieldmc::families::column_spec(table.name, column)
            .is_some_and(|spec| spec.role == fieldmc::table::Role::Timing)
    })
}

/// The path of the built binary.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fieldmc"))
}

/// A `fieldmc` command (plain std, so it can also be spawned and killed).
pub fn fieldmc() -> std::process::Command {
    std::process::Command::new(binary())
}

/// `fieldmc run STUDY --out OUT --threads N --quiet --no-report`, not started yet.
pub fn run_command(study: &Path, out: &Path, threads: usize) -> std::process::Command {
    let mut command = fieldmc();
    command
        .args(["run", "--quiet", "--no-report", "--threads"])
        .arg(threads.to_string())
        .arg(study)
        .arg("--out")
        .arg(out);
    command
}

/// `fieldmc run STUDY --out OUT --threads N --quiet --no-report`, waited for.
pub fn run_output(study: &Path, out: &Path, threads: usize) -> Output {
    run_command(study, out, threads)
        .output()
        .expect("the fieldmc binary starts")
}

/// Runs a study that must succeed; returns its stderr.
pub fn run_ok(study: &Path, out: &Path, threads: usize) -> String {
    let output = run_output(study, out, threads);
    let stderr = text(&output.stderr);
    assert!(
        output.status.success(),
        "fieldmc run {} failed ({:?}):\n{stderr}",
        study.display(),
        output.status
    );
    stderr
}

/// `fieldmc run --quiet --no-report --deny-warnings` on `study` into `out`: it must succeed (no
/// job warns); returns its stderr.
pub fn run_without_warnings(study: &Path, out: &Path, threads: usize) -> String {
    let output = fieldmc()
        .args([
            "run",
            "--quiet",
            "--no-report",
            "--deny-warnings",
            "--threads",
        ])
        .arg(threads.to_string())
        .arg(study)
        .arg("--out")
        .arg(out)
        .output()
        .expect("the fieldmc binary starts");
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{}:\n{stderr}", study.display());
    stderr
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts that the process ended by itself with an exit code (no signal), and that nothing
/// panicked on the way.
pub fn assert_no_panic(output: &Output, what: &str) {
    let stderr = text(&output.stderr);
    assert!(
        output.status.code().is_some(),
        "{what}: killed by a signal ({:?})\n{stderr}",
        output.status
    );
    assert_ne!(
        output.status.code(),
        Some(101),
        "{what}: the binary panicked\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked at"),
        "{what}: a panic message on stderr\n{stderr}"
    );
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Reads one Parquet file.
pub fn read_parquet(path: &Path) -> PolarsResult<DataFrame> {
    let file = std::fs::File::open(path)?;
    ParquetReader::new(file).finish()
}

/// Reads `<out>/<table>.parquet`, or None when the run wrote no such table.
pub fn read_table(out: &Path, table: &str) -> Option<DataFrame> {
    let path = out.join(format!("{table}.parquet"));
    path.exists().then(|| {
        read_parquet(&path).unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()))
    })
}

/// `<out>/<table>.parquet`, which must exist.
pub fn table(out: &Path, table: &str) -> DataFrame {
    read_table(out, table).unwrap_or_else(|| panic!("{} lacks {table}.parquet", out.display()))
}

/// The table without its timing columns.
pub fn without_timing(df: DataFrame) -> DataFrame {
    let keep: Vec<PlSmallStr> = df
        .get_column_names()
        .into_iter()
        .filter(|name| !is_timing(name.as_str()))
        .cloned()
        .collect();
    df.select(keep).unwrap()
}

/// Asserts that two frames have the same columns, in order, with bit-identical values
/// (nulls equal to nulls).
pub fn assert_same_frame(left: &DataFrame, right: &DataFrame, what: &str) {
    assert_eq!(
        left.get_column_names(),
        right.get_column_names(),
        "{what}: columns differ"
    );
    assert_eq!(left.height(), right.height(), "{what}: row counts differ");
    for name in left.get_column_names() {
        let l = left.column(name).unwrap().as_materialized_series();
        let r = right.column(name).unwrap().as_materialized_series();
        assert!(
            same_series(l, r),
            "{what}: column {name} differs\n{l:?}\n{r:?}"
        );
    }
}

/// Equality that treats floats bit by bit (so it is strict about -0.0 and never fooled by a
/// tolerance) and nulls as equal to nulls.
fn same_series(l: &Series, r: &Series) -> bool {
    if l.dtype() != r.dtype() {
        return false;
    }
    match l.dtype() {
        DataType::Float64 => {
            let bits = |s: &Series| -> Vec<Option<u64>> {
                s.f64()
                    .unwrap()
                    .iter()
                    .map(|x| x.map(f64::to_bits))
                    .collect()
            };
            bits(l) == bits(r)
        }
        _ => l.equals_missing(r),
    }
}

/// Asserts that every table of two results folders is equal apart from timing columns, through
/// `fieldmc compare --tolerance exact` (a table present in one folder only is a difference), and
/// that the jobs stand in the same order.
pub fn assert_same_tables(a: &Path, b: &Path) {
    let output = fieldmc()
        .args(["compare", "--tolerance", "exact"])
        .arg(a)
        .arg(b)
        .output()
        .expect("the fieldmc binary starts");
    let stdout = text(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("summary: identical"),
        "fieldmc compare {} {} ({:?}):\n{stdout}{}",
        a.display(),
        b.display(),
        output.status,
        text(&output.stderr)
    );
    assert_eq!(
        job_ids(&table(a, "jobs")),
        job_ids(&table(b, "jobs")),
        "the jobs of {} and {} stand in different orders",
        a.display(),
        b.display()
    );
}

/// The rows of `df` whose `job_id` is `id`.
pub fn rows_of_job(df: &DataFrame, id: &str) -> DataFrame {
    let mask = df.column("job_id").unwrap().str().unwrap().equal(id);
    df.filter(&mask).unwrap()
}

/// The distinct job ids of a table, in first-seen order.
pub fn job_ids(df: &DataFrame) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for id in df.column("job_id").unwrap().str().unwrap().iter().flatten() {
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_string());
        }
    }
    ids
}

/// Every `(table, column, row, value)` of a non-finite float in any table of `out`.
pub fn non_finite_values(out: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for name in table_names() {
        let Some(df) = read_table(out, name) else {
            continue;
        };
        for column in df.columns() {
            let series = column.as_materialized_series();
            let floats = match series.dtype() {
                DataType::Float64 => series.clone(),
                DataType::Float32 => series.cast(&DataType::Float64).unwrap(),
                _ => continue,
            };
            for (row, value) in floats.f64().unwrap().iter().enumerate() {
                if let Some(x) = value
                    && !x.is_finite()
                {
                    found.push(format!("{name}.{}[{row}] = {x}", column.name()));
                }
            }
        }
    }
    found
}

/// The text values of a string column.
pub fn strings(df: &DataFrame, column: &str) -> Vec<Option<String>> {
    df.column(column)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

/// The values of a float column.
pub fn floats(df: &DataFrame, column: &str) -> Vec<Option<f64>> {
    df.column(column)
        .unwrap_or_else(|_| panic!("no column {column}"))
        .f64()
        .unwrap()
        .iter()
        .collect()
}

/// The values of an integer column.
pub fn ints(df: &DataFrame, column: &str) -> Vec<Option<i64>> {
    df.column(column)
        .unwrap_or_else(|_| panic!("no column {column}"))
        .i64()
        .unwrap()
        .iter()
        .collect()
}

/// The chains the exact-answer tests (`engine`, `quadrature`, `kernels`) run a kind with: four
/// chains, a tenth of the iterations as burn-in, traces thinned by 100.
pub fn four_chains(
    kind: fieldmc::sampler::SamplerKind,
    beta: f64,
    iterations: u64,
) -> fieldmc::sampler::SamplerSettings {
    fieldmc::sampler::SamplerSettings {
        beta,
        iterations,
        burn_in: iterations / 10,
        thin: 100,
        chains: 4,
        ..fieldmc::sampler::SamplerSettings::new(kind)
    }
}

/// Jobs with a record in the part logs of `out` (0 when there are none yet). Reads only; safe
/// while a run appends.
pub fn recorded_jobs(out: &Path) -> usize {
    fieldmc::sink::PartIndex::read(out).map_or(0, |index| index.len())
}

/// Polls every 5 ms until `done()` holds or `child` exits or `limit` passes; returns whether
/// `done()` held.
pub fn wait_until(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    mut done: impl FnMut() -> bool,
) -> bool {
    let started = std::time::Instant::now();
    loop {
        if done() {
            return true;
        }
        if child.try_wait().unwrap().is_some() || started.elapsed() > limit {
            return done();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The lock files of live or dead processes in a results folder.
pub fn lock_files(out: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out.join("locks")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "lock"))
        .collect()
}

/// This machine's name as fieldmc records it.
pub fn host_name() -> String {
    fieldmc::sink::lock::host_name()
}

/// Files and folders under `dir`, recursively, as paths relative to `dir`, sorted.
pub fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}
