//! `fieldmc export --arviz` end to end: the real binary runs small studies (counts on cells with
//! covariates and an inferred length scale, poisson and binomial; measurements at sites with an
//! inferred noise sd), exports them, and ArviZ itself opens every store and checks it against
//! the tables (`tests/arviz/check_export.py`): the posterior equals draws.parquet bit for bit,
//! `az.loo` / `az.waic` give jobs.parquet's LOO columns within 1e-6, `az.summary` runs.
//!
//! ArviZ runs from the Python named by `FIELDMC_ARVIZ_PYTHON`, or `.ci/venv/bin/python` (which
//! `.ci/run` makes from `tests/arviz/requirements.txt`). Where neither is there the ArviZ half
//! says so and is skipped, except under CI (`CI` set), where it fails.

mod support;

use std::path::{Path, PathBuf};

use support::{fieldmc, run_ok, text, write_file};

/// Counts on every cell of a 4 x 4 grid with two covariates, the length scale inferred jointly
/// with the field, poisson and binomial; every stored draw in draws.parquet.
const CELLS_STUDY: &str = concat!(
    "[study]\nseed = 11\n[model]\ngrid = 4\nlength_scale_prior = \"log-normal(-1.0, 0.4)\"\n\
     [data]\nsubsample = 1\ncovariates = [\"slope\", \"bump\"]\ncovariates_path = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/studies/covariates_grid4.csv\"\n\
     [sampler]\nkind = \"nuts\"\nhyper = \"joint\"\niterations = 600\nburn_in = 200\nchains = 2\n\
     [output]\nlog_likelihood = true\ncell_draws = 200\nfield_draws = 200\n\
     [sweep]\n\"model.likelihood\" = [\"poisson\", \"binomial\"]\n"
);

/// Heights at the topo sites with the nugget inferred, a fifth held out (the log-likelihood
/// and observed data are the fitted sites').
const SITES_STUDY: &str = concat!(
    "[study]\nseed = 7\n[model]\ngrid = 8\nwindow = [[0, 6.3], [0, 6.2]]\nlength_scale = 1.2\n\
     variance = 3000\nmean = 800\nnoise_sd_prior = \"log-normal(2.5, 0.5)\"\n\
     [data]\nsource = \"sites\"\npath = \"",
    env!("CARGO_MANIFEST_DIR"),
    "/data/topo_sites.csv\"\nvalue = \"height\"\nholdout = 0.2\n\
     [sampler]\nkind = \"nuts\"\nhyper = \"joint\"\niterations = 600\nburn_in = 200\nchains = 2\n\
     [output]\nlog_likelihood = true\ncell_draws = 200\nfield_draws = 200\n"
);

/// The Python with ArviZ, or why there is none.
fn arviz_python() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("FIELDMC_ARVIZ_PYTHON") {
        return Ok(PathBuf::from(path));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/venv/bin/python");
    if venv.is_file() {
        return Ok(venv);
    }
    Err("no FIELDMC_ARVIZ_PYTHON and no .ci/venv (made by .ci/run)".into())
}

/// `fieldmc export OUT --arviz ARVIZ`, run to its end.
fn export(out: &Path, arviz: &Path) -> std::process::Output {
    fieldmc()
        .args([
            "export".as_ref(),
            out.as_os_str(),
            "--arviz".as_ref(),
            arviz.as_os_str(),
        ])
        .output()
        .unwrap()
}

/// Runs `study`, exports it, and has ArviZ check every store; returns the checker's output.
fn export_and_check(name: &str, study: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let study = write_file(dir.path(), &format!("{name}.toml"), study);
    let out = dir.path().join("out");
    run_ok(&study, &out, 2);
    let arviz = dir.path().join("arviz");
    let export = export(&out, &arviz);
    assert!(export.status.success(), "{}", text(&export.stderr));
    let jobs = support::job_ids(&support::table(&out, "jobs"));
    for job in &jobs {
        assert!(
            arviz.join(format!("{job}.zarr/zarr.json")).is_file(),
            "{job} not exported"
        );
    }
    let python = match arviz_python() {
        Ok(python) => python,
        Err(reason) if std::env::var_os("CI").is_some() => {
            panic!("ArviZ is needed under CI: {reason}")
        }
        Err(reason) => {
            eprintln!("skipping the ArviZ check: {reason}");
            return None;
        }
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/arviz/check_export.py");
    let checked = std::process::Command::new(python)
        .arg(script)
        .arg(&out)
        .arg(&arviz)
        .output()
        .unwrap();
    let stdout = text(&checked.stdout);
    assert!(
        checked.status.success(),
        "ArviZ disagrees:\n{stdout}\n{}",
        text(&checked.stderr)
    );
    assert_eq!(stdout.lines().count(), jobs.len(), "{stdout}");
    Some(stdout)
}

#[test]
fn cell_counts_export_to_arviz_with_the_jobs_loo() {
    if let Some(checked) = export_and_check("cells", CELLS_STUDY) {
        assert!(checked.lines().all(|l| l.contains("elpd_loo")), "{checked}");
    }
}

#[test]
fn measurements_at_sites_export_to_arviz_with_the_jobs_loo() {
    if let Some(checked) = export_and_check("sites", SITES_STUDY) {
        assert!(checked.lines().all(|l| l.contains("elpd_loo")), "{checked}");
    }
}

/// A job without field draws, and one whose draws.parquet holds fewer draws than its
/// log-likelihood, are not exported: exit 1, each job named with what to set.
#[test]
fn export_refuses_jobs_whose_tables_cannot_make_the_posterior() {
    let dir = tempfile::tempdir().unwrap();
    for (field_draws, reason) in [
        (
            0,
            "no draws in draws.parquet: run it with output.field_draws > 0",
        ),
        (50, "has 100 stored draws per chain and draws.parquet 50"),
    ] {
        let study = write_file(
            dir.path(),
            &format!("refused_{field_draws}.toml"),
            &format!(
                "[study]\nseed = 3\n[model]\ngrid = 4\n[data]\nsubsample = 1\n\
                 [sampler]\nkind = \"mala\"\niterations = 400\nburn_in = 100\nchains = 2\n\
                 [output]\nlog_likelihood = true\ncell_draws = 100\nfield_draws = {field_draws}\n"
            ),
        );
        let out = dir.path().join(format!("out_{field_draws}"));
        run_ok(&study, &out, 2);
        let arviz = dir.path().join(format!("arviz_{field_draws}"));
        let export = export(&out, &arviz);
        assert_eq!(export.status.code(), Some(1));
        let stderr = text(&export.stderr);
        assert!(stderr.contains(reason), "{stderr}");
        assert!(stderr.contains("1 of 1 jobs not exported"), "{stderr}");
    }
}

/// A shipped study: both kernels of `studies/geostat/topo_choice.toml` export, and ArviZ
/// reproduces their LOO from the stores.
#[test]
fn the_shipped_topo_choice_study_exports_to_arviz() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/geostat/topo_choice.toml");
    let study = std::fs::read_to_string(&path).unwrap().replace(
        "../../data/",
        &format!("{}/data/", env!("CARGO_MANIFEST_DIR")),
    );
    if let Some(checked) = export_and_check("topo_choice", &study) {
        assert_eq!(checked.lines().count(), 2, "{checked}");
    }
}
