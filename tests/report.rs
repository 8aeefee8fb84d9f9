//! The report on small synthetic results folders written with polars following the table
//! contract: it produces its figures, every figure is a real PNG, the page references only
//! files that exist, and missing or damaged tables are handled without panicking.
//!
//! Set FIELDMC_REPORT_DEMO_DIR to keep the full synthetic study's report for inspection.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use fieldmc::report::{Figure, FigureKind, ReportError, write_report};
use polars::prelude::*;

/// A small deterministic generator so that the synthetic fields look like fields with noise.
struct Lcg(u64);
impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

struct SyntheticJob {
    id: String,
    replicate: i64,
    grid: i64,
    sampler: &'static str,
    beta: f64,
    failed: bool,
}

fn synthetic_jobs() -> Vec<SyntheticJob> {
    let mut jobs = Vec::new();
    for replicate in 0..2 {
        for grid in [4, 8] {
            for sampler in ["grw", "pcn"] {
                for beta in [0.04, 0.2, 1.0] {
                    let failed = replicate == 1 && grid == 8 && sampler == "grw" && beta == 1.0;
                    let id = format!("{sampler}{grid}b{beta}r{replicate}").replace('.', "p");
                    jobs.push(SyntheticJob {
                        id,
                        replicate,
                        grid,
                        sampler,
                        beta,
                        failed,
                    });
                }
            }
        }
    }
    jobs
}

fn acceptance(job: &SyntheticJob, rng: &mut Lcg) -> f64 {
    let n = (job.grid * job.grid) as f64;
    let base = match job.sampler {
        "grw" => 2.0 * (1.0 - (job.beta * (1.25 * n).sqrt() / 2.0 / 1.5).tanh().min(0.999)) / 2.0,
        _ => 1.0 - 0.6 * job.beta,
    };
    (base + 0.02 * rng.normal()).clamp(0.0, 1.0)
}

fn write_parquet(dir: &Path, name: &str, mut frame: DataFrame) {
    let file = File::create(dir.join(format!("{name}.parquet"))).expect("create parquet");
    ParquetWriter::new(file)
        .finish(&mut frame)
        .expect("write parquet");
}

fn write_jobs(dir: &Path, jobs: &[SyntheticJob], rng: &mut Lcg) {
    let ok = |j: &SyntheticJob| !j.failed;
    let metric = |j: &SyntheticJob, v: f64| ok(j).then_some(v);
    let accept: Vec<Option<f64>> = jobs.iter().map(|j| metric(j, acceptance(j, rng))).collect();
    let mae: Vec<Option<f64>> = jobs
        .iter()
        .map(|j| metric(j, 0.3 + 0.05 * rng.uniform()))
        .collect();
    let rmse: Vec<Option<f64>> = jobs
        .iter()
        .map(|j| metric(j, 0.02 + 0.05 * j.beta * rng.uniform()))
        .collect();
    let ips: Vec<Option<f64>> = jobs
        .iter()
        .map(|j| {
            metric(
                j,
                2e6 / (j.grid * j.grid) as f64 * (1.0 + 0.1 * rng.uniform()),
            )
        })
        .collect();
    let ess: Vec<Option<f64>> = jobs
        .iter()
        .map(|j| metric(j, 50.0 + 400.0 * j.beta * rng.uniform()))
        .collect();
    let frame = df!(
        "job_id" => jobs.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        "replicate" => jobs.iter().map(|j| j.replicate).collect::<Vec<_>>(),
        "model_grid" => jobs.iter().map(|j| j.grid).collect::<Vec<_>>(),
        "model_kernel" => vec!["squared-exponential"; jobs.len()],
        "model_length_scale" => vec![0.3; jobs.len()],
        "model_likelihood" => vec!["gaussian"; jobs.len()],
        "data_source" => vec!["simulated"; jobs.len()],
        "data_length_scale" => vec![0.3; jobs.len()],
        "data_path" => vec![None::<&str>; jobs.len()],
        "sampler_kind" => jobs.iter().map(|j| j.sampler).collect::<Vec<_>>(),
        "sampler_beta" => jobs.iter().map(|j| j.beta).collect::<Vec<_>>(),
        "sampler_iterations" => vec![1000i64; jobs.len()],
        "sampler_chains" => vec![2i64; jobs.len()],
        "status" => jobs.iter().map(|j| if j.failed { "failed" } else { "ok" }).collect::<Vec<_>>(),
        "error" => jobs.iter().map(|j| j.failed.then_some("jitter escalation failed <at 1e-2>")).collect::<Vec<_>>(),
        "warnings" => jobs.iter().map(|j| if j.id == "grw8b0p04r0" { "largest cell R-hat 1.05 > 1.01" } else { "" }).collect::<Vec<_>>(),
        "acceptance_rate" => accept,
        "mae" => mae,
        "exact_rmse" => rmse,
        "iterations_per_second" => ips,
        "ess_bulk" => ess.clone(),
        "ess_bulk_per_second" => ess,
        "prediction_error" => vec![None::<f64>; jobs.len()],
    )
    .expect("jobs frame");
    write_parquet(dir, "jobs", frame);
}

fn write_fields(dir: &Path, jobs: &[SyntheticJob], rng: &mut Lcg) {
    let (mut id, mut cell, mut i_col, mut j_col, mut x_col, mut y_col) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let (mut truth, mut observed, mut observation, mut mean, mut sd, mut exact) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for job in jobs.iter().filter(|j| !j.failed) {
        let d = job.grid;
        for j in 0..d {
            for i in 0..d {
                let (x, y) = (i as f64 / (d - 1) as f64, j as f64 / (d - 1) as f64);
                let u = (3.0 * x).sin() + (2.0 * y).cos() - 0.5;
                let seen = (i + 2 * j) % 4 == 0;
                id.push(job.id.clone());
                cell.push(j * d + i);
                i_col.push(i);
                j_col.push(j);
                x_col.push(x);
                y_col.push(y);
                truth.push(Some(u));
                observed.push(seen);
                observation.push(seen.then(|| u + 0.3 * rng.normal()));
                let m = 0.8 * u + 0.1 * rng.normal();
                mean.push(Some(m));
                sd.push(Some(if seen { 0.25 } else { 0.6 } + 0.05 * rng.uniform()));
                exact.push(Some(m + 0.02 * rng.normal()));
            }
        }
    }
    let n = id.len();
    let frame = df!(
        "job_id" => id, "cell" => cell, "i" => i_col, "j" => j_col, "x" => x_col, "y" => y_col,
        "truth" => truth, "observed" => observed, "observation" => observation,
        "post_mean" => mean, "post_sd" => sd, "post_mean_mcse" => vec![Some(0.01); n],
        "exact_mean" => exact.clone(), "exact_sd" => vec![Some(0.3); n],
        "p_positive" => vec![None::<f64>; n], "expected_count" => vec![None::<f64>; n],
    )
    .expect("fields frame");
    write_parquet(dir, "fields", frame);
}

fn write_chain_tables(dir: &Path, jobs: &[SyntheticJob], rng: &mut Lcg) {
    let (mut t_id, mut t_chain, mut t_iter, mut t_ll) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut probes: Vec<Vec<f64>> = vec![Vec::new(); 5];
    let (mut c_id, mut c_iter, mut c_rms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a_id, mut a_lag, mut a_acf) = (Vec::new(), Vec::new(), Vec::new());
    for job in jobs.iter().filter(|j| !j.failed) {
        let rho = if job.sampler == "pcn" { 0.6 } else { 0.9 } * (1.0 - 0.3 * job.beta);
        for chain in 0..2i64 {
            let (mut ll, mut p) = (-40.0 + 5.0 * rng.normal(), rng.normal());
            for step in 0..200i64 {
                ll = -40.0 + rho * (ll + 40.0) + 3.0 * rng.normal();
                p = rho * p + (1.0 - rho * rho).sqrt() * rng.normal();
                t_id.push(job.id.clone());
                t_chain.push(chain);
                t_iter.push(10 * step);
                t_ll.push(ll);
                for (k, probe) in probes.iter_mut().enumerate() {
                    probe.push(p + 0.1 * k as f64);
                }
            }
        }
        for k in 0..12 {
            let t = 10f64.powf(1.0 + k as f64 * 3.0 / 11.0).round() as i64;
            c_id.push(job.id.clone());
            c_iter.push(t);
            c_rms.push(2.0 / (t as f64).sqrt() * (1.0 + 0.2 * rng.uniform()));
        }
        for lag in 0..30i64 {
            a_id.push(job.id.clone());
            a_lag.push(lag);
            a_acf.push(rho.powi(lag as i32) + 0.02 * rng.normal());
        }
    }
    let traces = df!(
        "job_id" => t_id, "chain" => t_chain, "iteration" => t_iter, "loglik" => t_ll,
        "probe_0" => probes[0].clone(), "probe_1" => probes[1].clone(), "probe_2" => probes[2].clone(),
        "probe_3" => probes[3].clone(), "probe_4" => probes[4].clone(),
    )
    .expect("traces frame");
    write_parquet(dir, "traces", traces);
    let convergence =
        df!("job_id" => c_id, "iteration" => c_iter, "rms_to_exact" => c_rms).expect("convergence");
    write_parquet(dir, "convergence", convergence);
    let acf = df!("job_id" => a_id, "lag" => a_lag, "autocorrelation" => a_acf).expect("acf");
    write_parquet(dir, "autocorrelation", acf);
}

const STUDY_TOML: &str = "[study]\nname = \"synthetic-acceptance\"\nseed = 7\nreplicates = 2\n\
description = \"GRW vs pCN acceptance on small grids <synthetic>\"\n\n[model]\nlikelihood = \"gaussian\"\n\n\
[sweep]\n\"model.grid\" = [4, 8]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n\"sampler.beta\" = [0.04, 0.2, 1.0]\n";

fn write_full_study(dir: &Path) {
    let jobs = synthetic_jobs();
    let mut rng = Lcg(20);
    write_jobs(dir, &jobs, &mut rng);
    write_fields(dir, &jobs, &mut rng);
    write_chain_tables(dir, &jobs, &mut rng);
    fs::write(dir.join("study.toml"), STUDY_TOML).expect("study.toml");
    let manifest =
        r#"{"tool_version":"0.1.0","git_revision":"abc123","seed":7,"threads":2,"jobs":[]}"#;
    fs::write(dir.join("manifest.json"), manifest).expect("manifest");
}

fn results_dir(temp: &tempfile::TempDir) -> PathBuf {
    let dir = temp.path().join("results").join("synthetic");
    fs::create_dir_all(&dir).expect("mkdir");
    dir
}

/// A valid PNG: signature, an IHDR of non-zero size first, an IEND chunk last.
fn assert_valid_png(path: &Path) {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.len() > 5_000,
        "{} is only {} bytes",
        path.display(),
        bytes.len()
    );
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} lacks the PNG signature",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let height = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    assert!(
        width >= 300 && height >= 200,
        "{}: {width}x{height}",
        path.display()
    );
    assert_eq!(&bytes[bytes.len() - 8..bytes.len() - 4], b"IEND");
}

/// Every src="..." of the page, which must each name an existing file in the report folder.
fn assert_sources_exist(report_dir: &Path) -> Vec<String> {
    let page = fs::read_to_string(report_dir.join("index.html")).expect("index.html");
    let sources: Vec<String> = page
        .split("src=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect();
    for source in &sources {
        assert!(
            !source.contains("://") && !source.starts_with('/'),
            "non-relative source {source}"
        );
        assert!(
            report_dir.join(source).is_file(),
            "index.html refers to missing {source}"
        );
    }
    assert!(!page.contains("<script"), "the page must not need scripts");
    sources
}

#[test]
fn full_study_gives_every_kind_of_figure_and_a_page_that_references_them() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = match std::env::var_os("FIELDMC_REPORT_DEMO_DIR") {
        Some(demo) => PathBuf::from(demo),
        None => results_dir(&temp),
    };
    fs::create_dir_all(&dir).expect("mkdir");
    write_full_study(&dir);
    let summary = write_report(&dir).expect("report");

    let kinds: Vec<FigureKind> = summary.figures.iter().map(|f| f.kind).collect();
    for kind in [
        FigureKind::Fields,
        FigureKind::Acceptance,
        FigureKind::Sweep,
        FigureKind::Convergence,
        FigureKind::Trace,
        FigureKind::Autocorrelation,
    ] {
        assert!(kinds.contains(&kind), "no {kind:?} figure in {kinds:?}");
    }
    assert!(summary.figures.iter().any(|f| f.file == "acceptance.png"));
    // Representatives: first replicate of each (likelihood, sampler, grid) and beta while
    // that stays small: 2 samplers x 2 grids = 4 field figures (x 3 betas would be 12 > 6).
    let field_figures = kinds.iter().filter(|k| **k == FigureKind::Fields).count();
    assert_eq!(field_figures, 4);
    // Swept numeric columns: grid and beta; sampler kind names the lines.
    let sweeps: Vec<&str> = summary
        .figures
        .iter()
        .filter(|f| f.kind == FigureKind::Sweep)
        .map(|f| f.file.as_str())
        .collect();
    assert_eq!(sweeps, ["sweep-model_grid.png", "sweep-sampler_beta.png"]);

    for path in summary.figure_paths() {
        assert_valid_png(&path);
    }
    let sources = assert_sources_exist(&summary.report_dir);
    let mut listed: Vec<String> = summary.figures.iter().map(|f| f.file.clone()).collect();
    listed.sort();
    let mut referenced = sources.clone();
    referenced.sort();
    assert_eq!(
        listed, referenced,
        "the page shows exactly the figures written"
    );

    let page = fs::read_to_string(&summary.index).expect("index");
    assert!(page.contains("<h1>synthetic-acceptance</h1>"));
    assert!(page.contains("GRW vs pCN acceptance on small grids &lt;synthetic&gt;"));
    assert!(
        page.contains("jitter escalation failed &lt;at 1e-2&gt;"),
        "failed job's error listed, escaped"
    );
    assert!(
        page.contains("Jobs with warnings (1)")
            && page.contains("largest cell R-hat 1.05 &gt; 1.01"),
        "a finished job's warnings are listed"
    );
    assert!(
        page.contains("abc123") && page.contains("threads"),
        "manifest facts shown"
    );
    assert!(
        page.contains("&quot;sampler.beta&quot; = [0.04, 0.2, 1.0]"),
        "study file shown"
    );
    for figure in &summary.figures {
        assert!(!figure.caption.is_empty(), "{} has no caption", figure.file);
    }
}

#[test]
fn only_a_jobs_table_still_gives_acceptance_and_sweep_figures() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = results_dir(&temp);
    write_jobs(&dir, &synthetic_jobs(), &mut Lcg(3));
    let summary = write_report(&dir).expect("report");
    let kinds: Vec<FigureKind> = summary.figures.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&FigureKind::Acceptance));
    assert!(kinds.contains(&FigureKind::Sweep));
    assert!(!kinds.contains(&FigureKind::Fields) && !kinds.contains(&FigureKind::Trace));
    for path in summary.figure_paths() {
        assert_valid_png(&path);
    }
    assert_sources_exist(&summary.report_dir);
}

#[test]
fn fields_without_a_jobs_table_are_still_drawn() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = results_dir(&temp);
    let jobs: Vec<SyntheticJob> = synthetic_jobs().into_iter().take(2).collect();
    write_fields(&dir, &jobs, &mut Lcg(5));
    let summary = write_report(&dir).expect("report");
    assert_eq!(summary.figures.len(), 2);
    assert!(summary.figures.iter().all(|f| f.kind == FigureKind::Fields));
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("jobs.parquet is missing"))
    );
    for path in summary.figure_paths() {
        assert_valid_png(&path);
    }
    assert_sources_exist(&summary.report_dir);
}

#[test]
fn an_empty_results_folder_gives_a_page_without_figures() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = results_dir(&temp);
    let summary = write_report(&dir).expect("report");
    assert!(summary.figures.is_empty());
    let page = fs::read_to_string(&summary.index).expect("index");
    assert!(page.contains("No jobs table"));
    assert!(assert_sources_exist(&summary.report_dir).is_empty());
}

#[test]
fn a_second_report_removes_figures_the_first_one_wrote() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = results_dir(&temp);
    write_full_study(&dir);
    let first = write_report(&dir).expect("first report");
    assert!(first.figures.iter().any(|f| f.kind == FigureKind::Trace));
    fs::remove_file(dir.join("traces.parquet")).expect("remove traces");
    let second = write_report(&dir).expect("second report");
    assert!(second.figures.iter().all(|f| f.kind != FigureKind::Trace));
    let pngs = fs::read_dir(&second.report_dir)
        .expect("read report dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "png"))
        })
        .count();
    assert_eq!(pngs, second.figures.len(), "no stale figures left behind");
}

#[test]
fn damaged_or_odd_inputs_are_errors_or_notes_never_panics() {
    let temp = tempfile::tempdir().expect("tempdir");
    let missing = temp.path().join("does-not-exist");
    assert!(matches!(
        write_report(&missing),
        Err(ReportError::NotAFolder(_))
    ));

    let dir = results_dir(&temp);
    fs::write(dir.join("jobs.parquet"), b"this is not parquet").expect("write");
    let error = write_report(&dir).expect_err("corrupt parquet must be an error");
    assert!(matches!(error, ReportError::Read(_)), "{error}");
    assert!(error.to_string().contains("jobs.parquet"), "{error}");

    // A metric stored as text, a list column and a study.toml that is not TOML.
    let odd = df!(
        "job_id" => ["a", "b"],
        "model_grid" => [4i64, 8],
        "acceptance_rate" => ["high", "low"],
    )
    .expect("frame");
    let mut odd = odd;
    let list = Series::new(
        "tags".into(),
        [
            Series::new("".into(), [1i64]),
            Series::new("".into(), [2i64]),
        ],
    );
    odd.with_column(list.into_column()).expect("list column");
    write_parquet(&dir, "jobs", odd);
    fs::write(dir.join("study.toml"), "[study\nname = ").expect("write");
    fs::write(dir.join("manifest.json"), "{not json").expect("write");
    let summary = write_report(&dir).expect("odd inputs still give a report");
    assert!(
        summary.notes.iter().any(|n| n.contains("`tags`")),
        "{:?}",
        summary.notes
    );
    assert_sources_exist(&summary.report_dir);
}

/// A probit length-scale search (13 assumed length scales from 0.01 to 10) and a poisson job
/// on real-looking counts with held-out cells.
fn write_probit_and_poisson_study(dir: &Path) {
    let scales: Vec<f64> = (0..13)
        .map(|k| 10f64.powf(-2.0 + k as f64 * 3.0 / 12.0))
        .collect();
    let mut ids: Vec<String> = scales
        .iter()
        .map(|l| format!("probit-l{l:.3}").replace('.', "p"))
        .collect();
    ids.push("poisson-counts".into());
    let n = ids.len();
    let likelihood: Vec<&str> = (0..n)
        .map(|k| if k + 1 < n { "probit" } else { "poisson" })
        .collect();
    let mut length: Vec<f64> = scales.clone();
    length.push(0.3);
    let error: Vec<Option<f64>> = scales
        .iter()
        .map(|l| Some(0.12 + 0.1 * (l.log10() - 0.3f64.log10()).powi(2)))
        .chain([None])
        .collect();
    let count_mae: Vec<Option<f64>> = (0..n).map(|k| (k + 1 == n).then_some(1.7)).collect();
    let jobs = df!(
        "job_id" => ids.clone(),
        "replicate" => vec![0i64; n],
        "model_grid" => vec![16i64; n],
        "model_length_scale" => length,
        "model_likelihood" => likelihood,
        "sampler_kind" => vec!["pcn"; n],
        "sampler_beta" => vec![0.2; n],
        "status" => vec!["ok"; n],
        "acceptance_rate" => vec![0.3; n],
        "prediction_error" => error,
        "count_mae" => count_mae,
    )
    .expect("jobs");
    write_parquet(dir, "jobs", jobs);

    let mut rng = Lcg(11);
    let d = 16i64;
    let (mut id, mut i_col, mut j_col, mut truth, mut observed, mut observation) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let (mut mean, mut sd, mut p_positive, mut expected) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for job in [&ids[8], &ids[n - 1]] {
        let poisson = job == &ids[n - 1];
        for j in 0..d {
            for i in 0..d {
                let (x, y) = (i as f64 / 15.0, j as f64 / 15.0);
                let u = 1.2 * ((4.0 * x).sin() + (3.0 * y).cos()) - 0.3;
                let m = u + 0.3 * rng.normal();
                id.push(job.clone());
                i_col.push(i);
                j_col.push(j);
                mean.push(m);
                sd.push(0.4 + 0.1 * rng.uniform());
                if poisson {
                    let held_out = rng.uniform() < 0.2;
                    truth.push(None);
                    observed.push(!held_out);
                    observation.push(Some(
                        (u.exp() + rng.normal() * u.exp().sqrt()).max(0.0).round(),
                    ));
                    p_positive.push(None);
                    expected.push(Some(m.exp()));
                } else {
                    let seen = (i + j) % 3 == 0;
                    truth.push(Some(u));
                    observed.push(seen);
                    observation.push(seen.then(|| {
                        if u + 0.2 * rng.normal() > 0.0 {
                            1.0
                        } else {
                            -1.0
                        }
                    }));
                    p_positive.push(Some(1.0 / (1.0 + (-2.0 * m).exp())));
                    expected.push(None);
                }
            }
        }
    }
    let fields = df!(
        "job_id" => id, "i" => i_col, "j" => j_col, "truth" => truth, "observed" => observed,
        "observation" => observation, "post_mean" => mean, "post_sd" => sd,
        "p_positive" => p_positive, "expected_count" => expected,
    )
    .expect("fields");
    write_parquet(dir, "fields", fields);
}

#[test]
fn probit_and_poisson_jobs_get_their_field_figures_and_a_swept_length_scale_one_sweep_figure() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = match std::env::var_os("FIELDMC_REPORT_DEMO_DIR") {
        Some(demo) => PathBuf::from(demo).join("probit-poisson"),
        None => results_dir(&temp),
    };
    fs::create_dir_all(&dir).expect("mkdir");
    write_probit_and_poisson_study(&dir);
    let summary = write_report(&dir).expect("report");
    let captions = |kind: FigureKind| -> Vec<&str> {
        summary
            .figures
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.caption.as_str())
            .collect()
    };
    let fields = captions(FigureKind::Fields);
    assert_eq!(
        fields.len(),
        2,
        "one probit and one poisson job have fields"
    );
    assert!(
        fields
            .iter()
            .any(|c| c.contains("P(t = +1 | data)") && c.contains("truth u"))
    );
    assert!(
        fields
            .iter()
            .any(|c| c.contains("expected count") && c.contains("held-out data"))
    );
    assert!(fields.iter().all(|c| !c.contains("exact posterior mean")));
    // The swept length scale (and the likelihood) give one sweep figure against ℓ.
    let sweeps: Vec<&Figure> = summary
        .figures
        .iter()
        .filter(|f| f.kind == FigureKind::Sweep)
        .collect();
    assert_eq!(sweeps.len(), 1);
    assert_eq!(sweeps[0].file, "sweep-model_length_scale.png");
    assert!(
        captions(FigureKind::Acceptance).is_empty(),
        "grid and beta were not swept"
    );
    for path in summary.figure_paths() {
        assert_valid_png(&path);
    }
    assert_sources_exist(&summary.report_dir);
}

/// Two jobs with `output.log_likelihood`: "cells" on a 6 x 6 grid whose even cells are in the
/// likelihood, "sites" with five fitted measurements and one held out; and "laplace", a job
/// without LOO. Each fitted cell or site has a Pareto k, one of them null (ArviZ's inf).
fn write_loo_study(dir: &Path) {
    let ids = ["cells", "sites", "laplace"];
    let jobs = df!(
        "job_id" => ids,
        "replicate" => [0i64; 3],
        "model_grid" => [6i64; 3],
        "model_likelihood" => ["poisson"; 3],
        "data_source" => ["csv", "sites", "csv"],
        "sampler_kind" => ["mala", "mala", "laplace"],
        "status" => ["ok"; 3],
        "elpd_loo" => [Some(-61.25), Some(-12.5), None],
        "elpd_loo_se" => [Some(4.5), Some(2.25), None],
        "p_loo" => [Some(7.75), Some(3.5), None],
        "pareto_k_bad" => [Some(3i64), Some(1), None],
    )
    .expect("jobs");
    write_parquet(dir, "jobs", jobs);

    let d = 6i64;
    let (mut id, mut cell, mut i_col, mut j_col, mut mean) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for job in ids {
        for j in 0..d {
            for i in 0..d {
                id.push(job);
                cell.push(j * d + i);
                i_col.push(i);
                j_col.push(j);
                mean.push((i + j) as f64 / 10.0);
            }
        }
    }
    let fields = df!(
        "job_id" => id, "cell" => cell, "i" => i_col, "j" => j_col, "post_mean" => mean,
    )
    .expect("fields");
    write_parquet(dir, "fields", fields);

    let fitted_cells: Vec<i64> = (0..d * d).filter(|c| c % 2 == 0).collect();
    let n_cells = fitted_cells.len();
    let k_cells: Vec<Option<f64>> = (0..n_cells)
        .map(|k| match k {
            0 => None,
            1 | 2 => Some(0.9 + 0.1 * k as f64),
            _ => Some(0.04 * k as f64 - 0.2),
        })
        .collect();
    let site_rows = [1i64, 2, 3, 5, 6];
    let mut loo_ids = vec!["cells"; n_cells];
    loo_ids.extend(["sites"; 5]);
    let observation: Vec<i64> = (0..n_cells as i64).chain(0..5).collect();
    let cells: Vec<Option<i64>> = fitted_cells
        .iter()
        .map(|&c| Some(c))
        .chain([None; 5])
        .collect();
    let sites: Vec<Option<i64>> = vec![None; n_cells]
        .into_iter()
        .chain(site_rows.iter().map(|&r| Some(r)))
        .collect();
    let mut k = k_cells;
    k.extend([Some(0.1), Some(0.3), Some(1.2), Some(0.5), Some(-0.1)]);
    let n = loo_ids.len();
    let loo = df!(
        "job_id" => loo_ids, "observation" => observation, "cell" => cells,
        "site_row" => sites, "elpd_loo" => (0..n).map(|k| -1.0 - 0.1 * (k % 7) as f64).collect::<Vec<_>>(), "pareto_k" => k,
        "elpd_waic" => vec![-1.0; n],
    )
    .expect("loo");
    write_parquet(dir, "loo", loo);

    let sites = df!(
        "job_id" => ["sites"; 6],
        "set" => ["fitted", "fitted", "fitted", "held_out", "fitted", "fitted"],
        "row" => [1i64, 2, 3, 4, 5, 6],
        "x" => [0.1, 0.3, 0.5, 0.7, 0.8, 0.95],
        "y" => [0.2, 0.9, 0.5, 0.4, 0.1, 0.6],
        "value" => [Some(1.0), Some(0.0), Some(3.0), Some(2.0), Some(1.0), Some(0.0)],
        "post_mean" => [0.0; 6],
    )
    .expect("sites");
    write_parquet(dir, "sites", sites);
}

#[test]
fn a_study_with_log_likelihood_gets_the_loo_table_and_pareto_k_maps_one_without_neither() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = match std::env::var_os("FIELDMC_REPORT_DEMO_DIR") {
        Some(demo) => PathBuf::from(demo).join("loo"),
        None => results_dir(&temp),
    };
    fs::create_dir_all(&dir).expect("mkdir");
    write_loo_study(&dir);
    let summary = write_report(&dir).expect("report");

    assert_eq!(summary.tables.len(), 1, "{:?}", summary.tables);
    let table = &summary.tables[0];
    assert_eq!(table.kind, FigureKind::ModelChoice);
    let headers: Vec<&str> = table.columns.iter().map(|c| c.header.as_str()).collect();
    assert_eq!(
        headers,
        ["job", "model", "elpd_loo", "se", "p_loo", "Pareto k > 0.7"]
    );
    let rows: Vec<(&str, &[String])> = table
        .rows
        .iter()
        .map(|r| (r[0].as_str(), &r[2..]))
        .collect();
    assert_eq!(rows.len(), 2, "the laplace job has no LOO: {rows:?}");
    assert_eq!(rows[0].0, "cells");
    assert_eq!(rows[0].1, ["-61.25", "4.5", "7.75", "3 / 18"]);
    assert_eq!(rows[1].0, "sites");
    assert_eq!(rows[1].1, ["-12.5", "2.25", "3.5", "1 / 5"]);

    let maps: Vec<&Figure> = summary
        .figures
        .iter()
        .filter(|f| f.kind == FigureKind::ModelChoice)
        .collect();
    let files: Vec<&str> = maps.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files, ["pareto-k-cells.png", "pareto-k-sites.png"]);
    assert!(
        maps[0]
            .caption
            .contains("each fitted cell coloured by its k")
    );
    assert!(
        maps[0].caption.contains("(3 of 18 here)"),
        "{}",
        maps[0].caption
    );
    assert!(maps[1].caption.contains("each fitted site a dot"));
    assert!(
        maps[1].caption.contains("(1 of 5 here)"),
        "{}",
        maps[1].caption
    );
    for path in summary.figure_paths() {
        assert_valid_png(&path);
    }
    assert_sources_exist(&summary.report_dir);
    let page = fs::read_to_string(summary.index).expect("index.html");
    assert!(page.contains("<h2 id=\"model-choice\">Model choice (PSIS-LOO)</h2>"));
    assert!(page.contains("<a href=\"#model-choice\">"));
    assert!(page.contains("<h3>PSIS-LOO of each job</h3>"));
    assert!(page.contains("<td>3 / 18</td>"));

    // Without output.log_likelihood: neither the table nor a map, nor the section.
    let plain = temp.path().join("plain");
    fs::create_dir_all(&plain).expect("mkdir");
    write_full_study(&plain);
    let summary = write_report(&plain).expect("report");
    assert!(summary.tables.is_empty());
    assert!(
        summary
            .figures
            .iter()
            .all(|f| f.kind != FigureKind::ModelChoice)
    );
    let page = fs::read_to_string(summary.index).expect("index.html");
    assert!(!page.contains("model-choice") && !page.contains("PSIS-LOO"));
}
