//! The shipped data files rewritten as R's `write.csv` and pandas' `to_csv(quoting=QUOTE_ALL)`
//! write them (quoted header, quoted text fields, a first column of row names under an empty
//! name, CR LF line ends) give the same jobs as the originals: a small grid study, points study
//! and covariates study, each run on the original and on the rewritten copy and compared with
//! `fieldmc compare --tolerance exact`.
//!
//! Each copy sits at the same relative path beside the same study file in its own folder, so the
//! jobs' keys (which hold `data.path` as written) are the same and only the bytes differ.

mod support;

use std::path::{Path, PathBuf};

use support::{assert_same_tables, run_ok, write_file};

fn shipped(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fields of a shipped (plain, unquoted) CSV line.
fn fields(line: &str) -> Vec<&str> {
    line.split(',').collect()
}

fn quoted(field: &str) -> String {
    format!("\"{}\"", field.replace('"', "\"\""))
}

/// `text` as R's `write.csv(df)` writes it: every header name quoted, a first column of row
/// names (header `""`, rows `"1"`, `"2"`, ...), numbers bare and text quoted; lines end in CR LF
/// when `crlf` (R on Windows).
fn as_r_write_csv(text: &str, crlf: bool) -> String {
    let end = if crlf { "\r\n" } else { "\n" };
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let header: Vec<String> = fields(lines.next().unwrap())
        .into_iter()
        .map(quoted)
        .collect();
    let mut out = format!("\"\",{}{end}", header.join(","));
    for (k, line) in lines.enumerate() {
        let row: Vec<String> = fields(line)
            .into_iter()
            .map(|f| {
                if f.parse::<f64>().is_ok() {
                    f.to_string()
                } else {
                    quoted(f)
                }
            })
            .collect();
        out.push_str(&format!(
            "{},{}{end}",
            quoted(&(k + 1).to_string()),
            row.join(",")
        ));
    }
    out
}

/// `text` as pandas' `df.to_csv(path, quoting=csv.QUOTE_ALL)` writes it: every field quoted,
/// the index first under an empty name (0, 1, ...).
fn as_pandas_quote_all(text: &str) -> String {
    let mut out = String::new();
    for (k, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        let index = if k == 0 {
            String::new()
        } else {
            (k - 1).to_string()
        };
        let row: Vec<String> = std::iter::once(index.as_str())
            .chain(fields(line))
            .map(quoted)
            .collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// Two folders, `original` and `rewritten`, each with `study` as `study.toml` and each data
/// file at `data/NAME`: the shipped file in the first, `rewrite` of it in the second.
fn two_folders(
    root: &Path,
    study: &str,
    files: &[&str],
    rewrite: impl Fn(&str) -> String,
) -> [PathBuf; 2] {
    ["original", "rewritten"].map(|side| {
        let folder = root.join(side);
        std::fs::create_dir_all(folder.join("data")).unwrap();
        for name in files {
            let text = shipped(name);
            let text = if side == "rewritten" {
                rewrite(&text)
            } else {
                text
            };
            std::fs::write(folder.join("data").join(name), text).unwrap();
        }
        write_file(&folder, "study.toml", study)
    })
}

/// Runs `study` on the shipped files and on their rewritten copies; the tables must be equal.
fn assert_same_jobs(study: &str, files: &[&str], rewrite: impl Fn(&str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let [original, rewritten] = two_folders(dir.path(), study, files, rewrite);
    let (a, b) = (dir.path().join("out_a"), dir.path().join("out_b"));
    run_ok(&original, &a, 2);
    run_ok(&rewritten, &b, 2);
    assert_same_tables(&a, &b);
}

const SAMPLER: &str = "[sampler]\nkind = \"pcn\"\niterations = 200\nburn_in = 100\nchains = 2\n";

fn grid_study() -> String {
    format!(
        "[study]\nname = \"dialect\"\nseed = 11\n\
         [model]\ngrid = 32\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"csv\"\npath = \"data/finpines_grid32.csv\"\nholdout = 0.2\n{SAMPLER}"
    )
}

#[test]
fn a_grid_written_by_r_write_csv_gives_the_same_jobs() {
    let files = ["finpines_grid32.csv"];
    assert_same_jobs(&grid_study(), &files, |t| as_r_write_csv(t, false));
}

#[test]
fn a_grid_written_by_pandas_with_every_field_quoted_gives_the_same_jobs() {
    let rewritten = as_pandas_quote_all("i,j,count\n0,0,1\n");
    assert_eq!(
        rewritten,
        "\"\",\"i\",\"j\",\"count\"\n\"0\",\"0\",\"0\",\"1\"\n"
    );
    let files = ["finpines_grid32.csv"];
    assert_same_jobs(&grid_study(), &files, as_pandas_quote_all);
}

#[test]
fn points_written_by_r_write_csv_with_crlf_give_the_same_jobs() {
    let study = format!(
        "[study]\nname = \"dialect\"\nseed = 12\n\
         [model]\ngrid = 16\nwindow = [[-5, 5], [-8, 2]]\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"points\"\npath = \"data/finpines_points.csv\"\nholdout = 0.2\n{SAMPLER}"
    );
    let rewritten = as_r_write_csv("x,y,mark\n0.5,1,oak\n", true);
    assert_eq!(
        rewritten,
        "\"\",\"x\",\"y\",\"mark\"\r\n\"1\",0.5,1,\"oak\"\r\n"
    );
    assert_same_jobs(&study, &["finpines_points.csv"], |t| {
        as_r_write_csv(t, true)
    });
}

#[test]
fn covariates_and_points_written_by_r_write_csv_give_the_same_jobs() {
    let study = format!(
        "[study]\nname = \"dialect\"\nseed = 13\n\
         [model]\ngrid = 32\nwindow = [[0, 1000], [0, 500]]\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"points\"\npath = \"data/bei_points.csv\"\n\
         covariates = [\"elev\", \"grad\"]\ncovariates_path = \"data/bei_covariates_grid32.csv\"\n\
         holdout = 0\n{SAMPLER}"
    );
    let files = ["bei_points.csv", "bei_covariates_grid32.csv"];
    assert_same_jobs(&study, &files, |t| as_r_write_csv(t, true));
}
