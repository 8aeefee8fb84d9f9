//! The SBC rank-histogram figures on a real SBC study: the binary runs the fixture (3
//! likelihoods x every sampler kind), then the report draws one valid PNG per job up to its cap,
//! in plan order, titled by likelihood, sampler and grid size, and index.html shows each of them
//! with its caption.
//!
//! Set FIELDMC_REPORT_DEMO_DIR to keep the results folder and its report for inspection.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use fieldmc::report::{FigureKind, MAX_RANK_FIGURES, write_report};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/sbc_report.toml")
}

/// Width and height from a PNG's IHDR chunk, or `None` when the bytes are not a PNG.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    if bytes.len() < 24 || bytes[..8] != SIGNATURE || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Some((be(16), be(20)))
}

fn results_dir(temp: &tempfile::TempDir) -> PathBuf {
    match std::env::var_os("FIELDMC_REPORT_DEMO_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => temp.path().join("sbc"),
    }
}

#[test]
fn an_sbc_study_gets_one_rank_figure_per_job() {
    let temp = tempfile::tempdir().expect("tempdir");
    let out = results_dir(&temp);
    Command::cargo_bin("fieldmc")
        .expect("binary")
        .args(["run", "--quiet", "--no-report", "--threads", "2"])
        .arg(fixture())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("ranks.parquet").is_file());

    let summary = write_report(&out).expect("report");
    let rank_figures: Vec<_> = summary
        .figures
        .iter()
        .filter(|f| f.kind == FigureKind::Calibration)
        .collect();
    // One figure per SBC job, in plan order, up to the cap (the rest are named in a note).
    let jobs = fieldmc::sink::read_table(&out, fieldmc::families::jobs_table(), None)
        .expect("jobs.parquet readable")
        .expect("jobs.parquet");
    let column = |name: &str| -> Vec<String> {
        let values = jobs.column(name).expect(name).str().expect("text").clone();
        values
            .iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect()
    };
    let (likelihoods, samplers) = (
        column(fieldmc::families::latent_field::keys::MODEL_LIKELIHOOD.column()),
        column(fieldmc::study::keys::SAMPLER_KIND.column()),
    );
    let drawn = jobs.height().min(MAX_RANK_FIGURES);
    assert_eq!(rank_figures.len(), drawn, "one figure per SBC job");
    if jobs.height() > drawn {
        assert!(
            summary.notes.iter().any(|n| n.contains("ranks.parquet")),
            "{:?}",
            summary.notes
        );
    }

    let files: HashSet<&str> = rank_figures.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files.len(), drawn, "each job has its own file");
    for (k, figure) in rank_figures.iter().enumerate() {
        let bytes = fs::read(summary.report_dir.join(&figure.file)).expect("figure written");
        let (width, height) = png_size(&bytes).expect("a PNG");
        assert!(
            width >= 600 && height >= 400,
            "{}: {width}x{height}",
            figure.file
        );
        assert!(bytes.len() > 10_000, "{} looks blank", figure.file);
        let wanted = format!("{} · {} · D=4", likelihoods[k], samplers[k]);
        assert!(
            figure.title.contains(&wanted),
            "figure {k} is titled {}, not {wanted}",
            figure.title
        );
    }

    let page = fs::read_to_string(&summary.index).expect("index.html");
    assert!(page.contains("id=\"calibration\""), "calibration section");
    for figure in &rank_figures {
        assert!(
            page.contains(&format!("<img src=\"{}\"", figure.file)),
            "index.html lacks {}",
            figure.file
        );
    }
    let first = rank_figures[0];
    for reading in ["flat = calibrated", "U shape", "hump", "slope = biased"] {
        assert!(first.caption.contains(reading), "caption lacks {reading:?}");
    }
    // The well-specified samplers pass, so no caption claims a failure.
    assert!(
        rank_figures
            .iter()
            .all(|f| !f.caption.contains("Not calibrated"))
    );
}
