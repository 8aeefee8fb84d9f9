//! The shipped Boston partition studies, run end to end through the `fieldmc` binary: on both
//! tasks every chain (10 seeds per proposal kind) beats the administrative partition on the
//! region MAE cross-validated over regions (in sample: the search saw every target), chains keep
//! every region connected, and the table of docs/partitions.md is what these runs give (printed
//! with `--nocapture`).
//!
//! The out-of-sample score (`output.oos_folds`): every job of the shipped studies has one, below
//! the constant predictor's; the flip chains lose to the towns on it; the methods of a replicate
//! share their folds; and the committed summary
//! `bench/results/partition_oos.csv` is what these runs give; the table of docs/partitions.md is
//! that CSV (`FIELDMC_BLESS=1` rewrites it from the CSV; `bench/partition_oos.sh` rewrites the
//! CSV from fresh runs). On a small lattice study the score does not depend on the thread count,
//! and turning it on changes no other number. Also: a partition study with a latent-field
//! kernel, a latent-field study with a partition kind, or a fold count the areas cannot fill is
//! refused with the key's line.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use support::{
    assert_same_frame, assert_same_tables, fieldmc, floats, job_ids, run_ok, strings, table, text,
    without_timing, write_file,
};

fn study(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("studies/partitions")
        .join(name)
}

/// Per kind: the values of `column` over the replicates.
fn by_kind(jobs: &polars::prelude::DataFrame, column: &str) -> BTreeMap<String, Vec<f64>> {
    let kinds = strings(jobs, "sampler_kind");
    let values = floats(jobs, column);
    let mut map: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (kind, value) in kinds.into_iter().zip(values) {
        map.entry(kind.expect("a kind"))
            .or_default()
            .push(value.expect("a value"));
    }
    map
}

/// Per kind: the values of a nullable float column, null read as 0 (baselines have no
/// acceptance rate).
fn by_kind_or_zero(jobs: &polars::prelude::DataFrame, column: &str) -> BTreeMap<String, Vec<f64>> {
    let kinds = strings(jobs, "sampler_kind");
    let mut map: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (kind, value) in kinds.into_iter().zip(floats(jobs, column)) {
        map.entry(kind.expect("a kind"))
            .or_default()
            .push(value.unwrap_or(0.0));
    }
    map
}

/// An integer column as floats.
fn integers(jobs: &polars::prelude::DataFrame, column: &str) -> Vec<Option<f64>> {
    let cast = jobs
        .column(column)
        .unwrap()
        .cast(&polars::prelude::DataType::Float64)
        .unwrap();
    cast.f64().unwrap().iter().collect()
}

fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

const CHAINS: [&str; 3] = ["flip", "softmax-flip", "learned-flip"];
const ORDER: [&str; 6] = [
    "admin",
    "kmeans",
    "spectral",
    "flip",
    "softmax-flip",
    "learned-flip",
];

fn check_task(file: &str) {
    let out = tempfile::tempdir().unwrap();
    run_ok(&study(file), out.path(), 2);
    let jobs = table(out.path(), "jobs");
    assert_eq!(jobs.height(), 60, "6 kinds x 10 seeds");
    check_out_of_sample(file, &jobs);
    let cv = by_kind(&jobs, "cv_region_mae_best");
    let train = by_kind(&jobs, "region_mae_best");
    let f = by_kind(&jobs, "f_best");
    let admin = cv["admin"][0];
    assert!(
        cv["admin"].iter().all(|&v| v == admin),
        "the administrative partition has no randomness"
    );
    println!("\n{file}: region MAE of the partition of smallest F, mean (sd) over 10 seeds");
    let acceptance = by_kind_or_zero(&jobs, "acceptance_rate");
    let seconds = by_kind(&jobs, "wall_seconds");
    println!(
        "| method | cross-validated region MAE | training region MAE | F | acceptance | seconds per job |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in ORDER {
        let ((cm, cs), (tm, ts), (fm, fs)) =
            (mean_sd(&cv[kind]), mean_sd(&train[kind]), mean_sd(&f[kind]));
        let (am, sm) = (mean_sd(&acceptance[kind]).0, mean_sd(&seconds[kind]).0);
        println!(
            "| {kind} | {cm:.3} ({cs:.3}) | {tm:.3} ({ts:.3}) | {fm:.1} ({fs:.1}) | {am:.3} | {sm:.2} |"
        );
    }
    for kind in CHAINS {
        for (seed, &value) in cv[kind].iter().enumerate() {
            assert!(
                value < admin,
                "{file}: {kind} replicate {seed}: cross-validated region MAE {value} (in sample) \
                 not below the administrative {admin}"
            );
        }
    }
    let kinds = strings(&jobs, "sampler_kind");
    let disconnected = integers(&jobs, "disconnected_regions");
    let regions = integers(&jobs, "regions");
    let warnings = strings(&jobs, "warnings");
    for (row, kind) in kinds.iter().enumerate() {
        let kind = kind.as_deref().unwrap();
        assert_eq!(
            regions[row],
            Some(106.0),
            "{kind}: towns in connected pieces"
        );
        if CHAINS.contains(&kind) {
            assert_eq!(
                disconnected[row],
                Some(0.0),
                "{kind}: a chain keeps regions connected"
            );
        }
        let heuristic = warnings[row]
            .as_deref()
            .unwrap()
            .contains("search heuristic");
        assert_eq!(heuristic, kind == "learned-flip", "{kind}: warnings");
    }
    let partitions = table(out.path(), "partitions");
    // chains: start, final, best; baselines: final, best; 506 areas each.
    assert_eq!(partitions.height(), 506 * (30 * 3 + 30 * 2));
}

#[test]
fn boston_house_value_chains_beat_the_towns_in_sample_and_flip_loses_out_of_sample() {
    check_task("boston_house_value.toml");
}

#[test]
fn boston_crime_chains_beat_the_towns_in_sample_and_flip_loses_out_of_sample() {
    check_task("boston_crime.toml");
}

#[test]
fn a_kind_of_the_other_family_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let partition = format!(
        "[model]\nfamily = \"partition\"\n[data]\nareas = \"{}\"\nadjacency = \"{}\"\nid = \"tract_id\"\n\
         admin = \"town\"\ntarget = \"crim\"\nfeatures = \"rm,lstat\"\n[sampler]\nkind = \"pcn\"\n",
        data.join("boston_tracts.csv").display(),
        data.join("boston_adjacency.csv").display()
    );
    let path = write_file(dir.path(), "partition.toml", &partition);
    let output = fieldmc().arg("check").arg(&path).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":11:")
            && stderr.contains("\"pcn\" is not a sampler of model.family = \"partition\""),
        "{stderr}"
    );
    assert!(stderr.contains("softmax-flip"), "{stderr}");
    let latent = "[model]\ngrid = 4\n[sampler]\nkind = \"flip\"\n";
    let path = write_file(dir.path(), "latent.toml", latent);
    let output = fieldmc().arg("check").arg(&path).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":4:") && stderr.contains("pcnl"),
        "{stderr}"
    );
}

/// The Boston tasks: study file, name in the summary CSV, heading in the docs.
const TASKS: [(&str, &str, &str); 2] = [
    (
        "boston_house_value.toml",
        "house_value",
        "**House value** (`cmedv`, USD 1000)",
    ),
    (
        "boston_crime.toml",
        "crime",
        "**Crime** (`crim`, per-capita crime)",
    ),
];

const OOS_CSV: &str = "bench/results/partition_oos.csv";
const OOS_HEADER: &str = "task,method,seeds,oos_region_mae_best_mean,oos_region_mae_best_sd,\
oos_region_mae_final_mean,oos_region_mae_final_sd,oos_constant_mae_mean,oos_constant_mae_sd,\
cv_region_mae_best_mean,cv_region_mae_best_sd,wall_seconds_mean";
/// The fields of a summary line that a rerun reproduces (all but the last, a timing).
const REPRODUCED_FIELDS: usize = 11;

fn repository(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The summary lines of one task's jobs table, one per method in [`ORDER`]: mean and sd over
/// the seeds of the out-of-sample scores, of the in-sample cross-validated region MAE, and the
/// mean wall time of a job (its fold runs included).
fn summary_lines(task: &str, jobs: &polars::prelude::DataFrame) -> Vec<String> {
    let columns = [
        "oos_region_mae_best",
        "oos_region_mae_final",
        "oos_constant_mae",
        "cv_region_mae_best",
    ];
    let values: Vec<_> = columns.iter().map(|c| by_kind(jobs, c)).collect();
    let seconds = by_kind(jobs, "wall_seconds");
    ORDER
        .iter()
        .map(|kind| {
            let mut line = format!("{task},{kind},{}", seconds[*kind].len());
            for column in &values {
                let (mean, sd) = mean_sd(&column[*kind]);
                write!(line, ",{mean:.4},{sd:.4}").unwrap();
            }
            write!(line, ",{:.2}", mean_sd(&seconds[*kind]).0).unwrap();
            line
        })
        .collect()
}

/// The lines of the committed summary CSV (header checked).
fn committed_summary() -> Vec<String> {
    let text = std::fs::read_to_string(repository(OOS_CSV))
        .unwrap_or_else(|e| panic!("{OOS_CSV}: {e}; run bench/partition_oos.sh"));
    let mut lines = text.lines().map(str::to_string);
    assert_eq!(
        lines.next().as_deref(),
        Some(OOS_HEADER),
        "{OOS_CSV}: header"
    );
    lines.collect()
}

fn reproduced_part(line: &str) -> Vec<&str> {
    line.split(',').take(REPRODUCED_FIELDS).collect()
}

/// Every job has finite out-of-sample scores; the methods of a replicate were scored on the same
/// folds (one constant predictor's score per replicate, and the replicates' folds differ); and
/// the summary of these runs is the committed CSV's (timing aside).
fn check_out_of_sample(file: &str, jobs: &polars::prelude::DataFrame) {
    let replicates = integers(jobs, "replicate");
    let constant = floats(jobs, "oos_constant_mae");
    for column in [
        "oos_region_mae_best",
        "oos_region_mae_final",
        "oos_constant_mae",
    ] {
        for (row, value) in floats(jobs, column).into_iter().enumerate() {
            assert!(
                value.is_some_and(f64::is_finite),
                "{file}: {column} of row {row} is {value:?}"
            );
        }
    }
    let mut per_replicate: BTreeMap<i64, f64> = BTreeMap::new();
    for (replicate, value) in replicates.iter().zip(&constant) {
        let (replicate, value) = (replicate.unwrap() as i64, value.unwrap());
        let first = *per_replicate.entry(replicate).or_insert(value);
        assert_eq!(
            first, value,
            "{file}: replicate {replicate}: the methods were scored on different folds"
        );
    }
    let distinct: std::collections::BTreeSet<u64> =
        per_replicate.values().map(|v| v.to_bits()).collect();
    assert_eq!(
        distinct.len(),
        per_replicate.len(),
        "{file}: replicates share folds"
    );
    let best = by_kind(jobs, "oos_region_mae_best");
    for (row, (value, constant)) in floats(jobs, "oos_region_mae_best")
        .into_iter()
        .zip(&constant)
        .enumerate()
    {
        assert!(
            value < *constant,
            "{file}: row {row}: out-of-sample MAE {value:?} not below the constant's {constant:?}"
        );
    }
    let (flip, admin) = (mean_sd(&best["flip"]).0, mean_sd(&best["admin"]).0);
    assert!(
        flip > admin,
        "{file}: out of sample, the flip chains ({flip}) no longer lose to the towns ({admin}): \
         docs/partitions.md says they do"
    );
    let (_, task, _) = TASKS.iter().find(|(f, _, _)| *f == file).unwrap();
    let fresh = summary_lines(task, jobs);
    let committed: Vec<String> = committed_summary()
        .into_iter()
        .filter(|line| line.starts_with(&format!("{task},")))
        .collect();
    println!(
        "\n{file}: out-of-sample summary\n{OOS_HEADER}\n{}",
        fresh.join("\n")
    );
    assert_eq!(
        fresh.iter().map(|l| reproduced_part(l)).collect::<Vec<_>>(),
        committed
            .iter()
            .map(|l| reproduced_part(l))
            .collect::<Vec<_>>(),
        "{file}: these runs differ from {OOS_CSV}; rerun bench/partition_oos.sh"
    );
}

/// Writes `bench/results/partition_oos.csv` from the two studies' results folders under
/// `$FIELDMC_PARTITION_OOS_RESULTS` (`house_value/`, `crime/`): what bench/partition_oos.sh
/// runs after running them.
#[test]
#[ignore = "bench/partition_oos.sh runs it after running the Boston studies"]
fn summarise_the_boston_out_of_sample_runs() {
    let results = PathBuf::from(
        std::env::var("FIELDMC_PARTITION_OOS_RESULTS")
            .expect("FIELDMC_PARTITION_OOS_RESULTS names the results folders' parent"),
    );
    let mut csv = format!("{OOS_HEADER}\n");
    for (_, task, _) in TASKS {
        let jobs = table(&results.join(task), "jobs");
        assert_eq!(jobs.height(), 60, "{task}: 6 kinds x 10 seeds");
        for line in summary_lines(task, &jobs) {
            csv.push_str(&line);
            csv.push('\n');
        }
    }
    std::fs::create_dir_all(repository(OOS_CSV).parent().unwrap()).unwrap();
    std::fs::write(repository(OOS_CSV), &csv).unwrap();
    print!("{csv}");
}

/// The out-of-sample tables of docs/partitions.md, rendered from the summary CSV (scores to 3
/// decimals, as the other tables of the page).
fn render_out_of_sample_tables(lines: &[String]) -> String {
    let number = |field: &str| field.parse::<f64>().expect("a number in the summary CSV");
    let pair = |mean: &str, sd: &str| format!("{:.3} ({:.3})", number(mean), number(sd));
    let mut out = String::new();
    for (_, task, heading) in TASKS {
        let rows: Vec<Vec<&str>> = lines
            .iter()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|fields| fields[0] == task)
            .collect();
        let constant = number(rows[0][7]);
        writeln!(out, "{heading}, mean (sd) over {} seeds:\n", rows[0][2]).unwrap();
        out.push_str(
            "| method | out-of-sample MAE, best | out-of-sample MAE, final | best / constant | \
             in-sample cross-validated region MAE | seconds per job (with its 5 fold runs) |\n",
        );
        out.push_str("|---|---|---|---|---|---|\n");
        for f in &rows {
            writeln!(
                out,
                "| {} | {} | {} | {:.3} | {} | {} |",
                f[1],
                pair(f[3], f[4]),
                pair(f[5], f[6]),
                number(f[3]) / constant,
                pair(f[9], f[10]),
                f[11]
            )
            .unwrap();
        }
        writeln!(
            out,
            "| constant (training mean) | {} | — | 1.000 | — | — |\n",
            pair(rows[0][7], rows[0][8])
        )
        .unwrap();
    }
    out
}

#[test]
fn the_out_of_sample_tables_in_the_docs_are_the_committed_csv() {
    const BEGIN: &str = "<!-- partition_oos.csv: begin -->\n";
    const END: &str = "<!-- partition_oos.csv: end -->";
    let path = repository("docs/partitions.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc.find(BEGIN).expect("docs/partitions.md marks the table") + BEGIN.len();
    let end = doc[start..]
        .find(END)
        .expect("docs/partitions.md ends the table")
        + start;
    let rendered = render_out_of_sample_tables(&committed_summary());
    if doc[start..end] != rendered {
        if std::env::var_os("FIELDMC_BLESS").is_some() {
            let updated = format!("{}{rendered}{}", &doc[..start], &doc[end..]);
            std::fs::write(&path, updated).unwrap();
            eprintln!(
                "FIELDMC_BLESS is set: docs/partitions.md differed from {OOS_CSV} and was rewritten"
            );
        } else {
            panic!(
                "docs/partitions.md's out-of-sample tables differ from {OOS_CSV}; rerun with \
                 FIELDMC_BLESS=1:\n{rendered}"
            );
        }
    }
}

/// A small partition study: an 8 x 8 lattice, 16 towns of 2 x 2, two features, a target with
/// a trend and noise, every kind, two seeds, `oos_folds` folds.
fn lattice_study(dir: &Path, oos_folds: usize) -> PathBuf {
    let side = 8;
    let mut areas = String::from("id,u,v,y,cx,cy,town\n");
    for a in 0..side * side {
        let (row, col) = (a / side, a % side);
        let u = ((a * 7 % 11) as f64).sin();
        let v = ((a * 5 % 13) as f64).cos();
        let y = 2.0 * u + 0.1 * col as f64 + ((a * 31 % 17) as f64 / 17.0 - 0.5);
        let town = (row / 2) * (side / 2) + col / 2;
        writeln!(areas, "a{a},{u},{v},{y},{col},{row},t{town}").unwrap();
    }
    let mut edges = String::from("from,to\n");
    for a in 0..side * side {
        if a % side + 1 < side {
            writeln!(edges, "a{a},a{}", a + 1).unwrap();
        }
        if a + side < side * side {
            writeln!(edges, "a{a},a{}", a + side).unwrap();
        }
    }
    write_file(dir, "areas.csv", &areas);
    write_file(dir, "edges.csv", &edges);
    let study = format!(
        "[study]\nname = \"oos_lattice\"\nseed = 9\nreplicates = 2\n\
         [model]\nfamily = \"partition\"\ntemperature = 1.0\nfinal_temperature = 0.05\n\
         [data]\nareas = \"areas.csv\"\nadjacency = \"edges.csv\"\nid = \"id\"\nadmin = \"town\"\n\
         coordinates = \"cx,cy\"\ntarget = \"y\"\nfeatures = \"u,v\"\n\
         [sampler]\niterations = 3000\nthin = 100\n\
         [output]\noos_folds = {oos_folds}\n\
         [sweep]\n\"sampler.kind\" = [\"admin\", \"kmeans\", \"spectral\", \"flip\", \"softmax-flip\", \"learned-flip\"]\n"
    );
    write_file(dir, &format!("lattice_{oos_folds}.toml"), &study)
}

/// The columns that `output.oos_folds` adds or sets.
const OOS_COLUMNS: [&str; 4] = [
    "output_oos_folds",
    "oos_region_mae_final",
    "oos_region_mae_best",
    "oos_constant_mae",
];

#[test]
fn out_of_sample_folds_do_not_depend_on_the_threads_and_change_no_other_number() {
    let dir = tempfile::tempdir().unwrap();
    let with = lattice_study(dir.path(), 4);
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_ok(&with, &one, 1);
    run_ok(&with, &two, 2);
    assert_same_tables(&one, &two);
    let jobs = table(&one, "jobs");
    check_lattice_scores(&jobs);
    let without = lattice_study(dir.path(), 0);
    let none = dir.path().join("none");
    run_ok(&without, &none, 2);
    let plain = table(&none, "jobs");
    assert_eq!(
        job_ids(&plain),
        job_ids(&jobs),
        "output.oos_folds is not in the job's key"
    );
    for column in &OOS_COLUMNS[1..] {
        assert!(
            floats(&plain, column).iter().all(Option::is_none),
            "{column}: null without output.oos_folds"
        );
    }
    let others = |df: polars::prelude::DataFrame| {
        let df = without_timing(df);
        let keep: Vec<_> = df
            .get_column_names()
            .into_iter()
            .filter(|c| !OOS_COLUMNS.contains(&c.as_str()))
            .cloned()
            .collect();
        df.select(keep).unwrap()
    };
    assert_same_frame(
        &others(plain),
        &others(jobs),
        "jobs without and with oos_folds",
    );
    for name in ["partitions", "partition_traces"] {
        assert_same_frame(
            &without_timing(table(&none, name)),
            &without_timing(table(&one, name)),
            name,
        );
    }
}

/// Every job of the lattice study has finite scores, one constant score per replicate, and the
/// fold count as run.
fn check_lattice_scores(jobs: &polars::prelude::DataFrame) {
    assert_eq!(jobs.height(), 12);
    assert!(
        integers(jobs, "output_oos_folds")
            .iter()
            .all(|f| *f == Some(4.0))
    );
    for column in &OOS_COLUMNS[1..] {
        let values = floats(jobs, column);
        assert!(
            values.iter().all(|v| v.is_some_and(f64::is_finite)),
            "{column}: {values:?}"
        );
    }
    let constant = floats(jobs, "oos_constant_mae");
    for (row, replicate) in integers(jobs, "replicate").into_iter().enumerate() {
        let first = if replicate == Some(0.0) { 0 } else { 1 };
        assert_eq!(
            constant[row], constant[first],
            "row {row}: the replicate's folds"
        );
    }
    assert_ne!(
        constant[0], constant[1],
        "the replicates deal their own folds"
    );
}

#[test]
fn a_fold_count_the_areas_cannot_fill_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for (folds, message) in [
        (
            1,
            "output.oos_folds = 1: one fold would hold out every area",
        ),
        (
            65,
            "output.oos_folds = 65, but the areas CSV holds 64 areas",
        ),
    ] {
        let path = lattice_study(dir.path(), folds);
        let output = fieldmc().arg("check").arg(&path).output().unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(":21:") && stderr.contains(message),
            "{stderr}"
        );
        assert!(
            stderr.contains("allowed: 0 (no out-of-sample score) or 2 to 64"),
            "{stderr}"
        );
    }
}
