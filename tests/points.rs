//! Points in, through the real binary: a study with `data.source = "points"` sweeping
//! `model.grid` over two values bins one file at both resolutions (checked against the shipped
//! grid binned independently in R), gives two jobs with different keys, reruns the jobs whose
//! points file changed, and the unit trap is told on the terminal and in the job's warnings.

mod support;

use std::path::{Path, PathBuf};

use support::{floats, ints, job_ids, rows_of_job, run_ok, strings, table, text, write_file};

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// The redwood points beside a study of them at D = 16 and 32 (the shipped window).
fn redwood_study(dir: &Path) -> PathBuf {
    std::fs::copy(data_file("redwood_points.csv"), dir.join("redwood.csv")).unwrap();
    write_file(
        dir,
        "redwood.toml",
        "[study]\nname = \"redwood\"\n[model]\nwindow = [[0, 1], [-1, 0]]\nlikelihood = \"poisson\"\n\
         length_scale = 0.1\n[data]\nsource = \"points\"\npath = \"redwood.csv\"\nholdout = 0.25\n\
         [sampler]\nkind = \"pcn\"\niterations = 200\nchains = 2\n\
         [sweep]\n\"model.grid\" = [16, 32]\n",
    )
}

/// The counts of a grid CSV, cell (i, j) at j * d + i.
fn grid_counts(name: &str, d: usize) -> Vec<f64> {
    let text = std::fs::read_to_string(data_file(name)).unwrap();
    let mut counts = vec![0.0; d * d];
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let (i, j): (usize, usize) = (fields[0].parse().unwrap(), fields[1].parse().unwrap());
        counts[j * d + i] = fields[4].parse().unwrap();
    }
    counts
}

#[test]
fn a_points_study_bins_one_file_at_every_grid_of_its_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let study = redwood_study(dir.path());
    let out = dir.path().join("out");
    let stderr = run_ok(&study, &out, 2);
    assert!(stderr.contains("2 ran, 0 resumed"), "{stderr}");
    assert!(!stderr.contains("unit trap"), "{stderr}");

    let jobs = table(&out, "jobs");
    let ids = job_ids(&jobs);
    assert_eq!(ids.len(), 2, "two jobs with different keys");
    let grids: Vec<i64> = ints(&jobs, "model_grid").into_iter().flatten().collect();
    assert_eq!(grids, [16, 32]);
    assert_eq!(
        strings(&jobs, "data_source"),
        [Some("points".into()), Some("points".into())]
    );
    assert_eq!(
        strings(&jobs, "data_x"),
        [Some("x".into()), Some("x".into())]
    );
    assert_eq!(
        strings(&jobs, "data_column"),
        [None, None],
        "a csv-only key"
    );
    // The cell area is the offset (intensity per unit area): 1/256 and 1/1024 of the unit window.
    let offsets = floats(&jobs, "model_offset");
    for (offset, d) in offsets.iter().zip([16.0f64, 32.0]) {
        assert!(
            (offset.unwrap() - (1.0 / (d * d)).ln()).abs() < 1e-12,
            "{offsets:?}"
        );
    }
    assert_eq!(strings(&jobs, "error"), [None, None]);

    let fields = table(&out, "fields");
    let reference = grid_counts("redwood_grid32.csv", 32);
    for (id, d) in ids.iter().zip([16usize, 32]) {
        let rows = rows_of_job(&fields, id);
        assert_eq!(rows.height(), d * d);
        let cells: Vec<i64> = ints(&rows, "cell").into_iter().flatten().collect();
        let observations = floats(&rows, "observation");
        let mut counts = vec![0.0; d * d];
        for (cell, count) in cells.iter().zip(&observations) {
            counts[*cell as usize] = count.unwrap();
        }
        // D = 32: the shipped grid, binned in R; D = 16: its 2 x 2 blocks (the edges of the
        // coarse grid are edges of the fine one).
        let expected: Vec<f64> = (0..d * d)
            .map(|cell| {
                let (i, j) = (cell % d, cell / d);
                let f = 32 / d;
                (0..f * f)
                    .map(|k| reference[(j * f + k / f) * 32 + i * f + k % f])
                    .sum()
            })
            .collect();
        assert_eq!(counts, expected, "D = {d}");
        assert_eq!(counts.iter().sum::<f64>(), 62.0);
        let observed = rows
            .column("observed")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .filter(|o| *o == Some(false))
            .count();
        assert_eq!(
            observed,
            (0.25 * (d * d) as f64).round() as usize,
            "held out"
        );
    }
}

/// One event moved: the jobs that read the file are recomputed, and the manifest records the
/// new content's hash.
#[test]
fn a_changed_points_file_reruns_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let study = redwood_study(dir.path());
    let out = dir.path().join("out");
    assert!(run_ok(&study, &out, 2).contains("2 ran, 0 resumed"));
    assert!(run_ok(&study, &out, 2).contains("0 ran, 2 resumed"));
    let points = dir.path().join("redwood.csv");
    let before = std::fs::read_to_string(&points).unwrap();
    let hash_before = blake3::hash(before.as_bytes()).to_hex().to_string();
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains(&hash_before),
        "the manifest records the points file's hash"
    );
    std::fs::write(&points, before.replacen("0.36,-0.08", "0.37,-0.08", 1)).unwrap();
    let stderr = run_ok(&study, &out, 2);
    assert!(
        stderr.contains("2 read a data file that has changed")
            && stderr.contains("2 ran, 0 resumed"),
        "{stderr}"
    );
    let after = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let hash_after = blake3::hash(std::fs::read(&points).unwrap().as_slice())
        .to_hex()
        .to_string();
    assert!(after.contains(&hash_after) && !after.contains(&hash_before));
}

/// A window in metres, 1000 m on a side, on a 32 x 32 grid (cells of 31.25 m), with `model`
/// and `sampler` lines added to their sections.
fn metre_study(dir: &Path, name: &str, model: &str, sampler: &str) -> PathBuf {
    write_file(dir, "trees.csv", "x,y\n10,20\n500,500\n999,1000\n250,750\n");
    write_file(
        dir,
        name,
        &format!(
            "[model]\ngrid = 32\nwindow = [[0, 1000], [0, 1000]]\nlikelihood = \"poisson\"\n{model}\
             [data]\nsource = \"points\"\npath = \"trees.csv\"\n\
             [sampler]\nkind = \"pcn\"\niterations = 50\nchains = 2\n{sampler}"
        ),
    )
}

fn check_stderr(study: &Path) -> String {
    let output = support::fieldmc().arg("check").arg(study).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stderr)
}

#[test]
fn the_unit_trap_is_told_before_the_run_and_kept_in_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let study = metre_study(dir.path(), "trap.toml", "length_scale = 0.1\n", "");
    let stderr = check_stderr(&study);
    let expected = "warning: unit trap? model.length_scale = 0.1 is below half a cell's side \
                    (15.62) on the window [0, 1000] x [0, 1000] (the data's units; 32 x 32 cells \
                    of 31.25 x 31.25)";
    assert!(stderr.contains(expected), "{stderr}");
    assert_eq!(
        stderr.matches("unit trap").count(),
        1,
        "told once: {stderr}"
    );

    let out = dir.path().join("out");
    let stderr = run_ok(&study, &out, 1);
    assert!(stderr.contains(expected), "{stderr}");
    let warnings = strings(&table(&out, "jobs"), "warnings");
    let job = warnings[0].as_deref().unwrap();
    assert!(
        job.starts_with("unit trap? model.length_scale = 0.1 is below half a cell's side"),
        "{job}"
    );
}

#[test]
fn the_unit_trap_judges_a_priors_median_and_length_scales_too_long() {
    let dir = tempfile::tempdir().unwrap();
    // log-normal(-2.3, 1): median 0.1 m, on 31.25 m cells; the chains start at 100 m.
    let prior = metre_study(
        dir.path(),
        "prior.toml",
        "length_scale = 100.0\nlength_scale_prior = \"log-normal(-2.3, 1.0)\"\n",
        "hyper = \"within-gibbs\"\n",
    );
    let stderr = check_stderr(&prior);
    assert!(
        stderr.contains(
            "warning: unit trap? the median 0.1003 of model.length_scale_prior = \
             \"log-normal(-2.3,1.0)\" is below half a cell's side (15.62)"
        ),
        "{stderr}"
    );
    // 20 km on a 1 km window: above ten times its longer side.
    let long = metre_study(dir.path(), "long.toml", "length_scale = 20000.0\n", "");
    let stderr = check_stderr(&long);
    assert!(
        stderr.contains(
            "warning: unit trap? model.length_scale = 20000 is above ten times the window's \
             longer side (10000)"
        ),
        "{stderr}"
    );
    // In the data's units, quiet.
    let fine = metre_study(dir.path(), "fine.toml", "length_scale = 100.0\n", "");
    assert!(!check_stderr(&fine).contains("warning"));
}

/// The shipped points study runs in seconds and converges: no job warns (`--deny-warnings`).
#[test]
fn the_shipped_points_study_converges_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let study = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/lgcp/points.toml");
    let stderr = support::run_without_warnings(&study, &dir.path().join("out"), 2);
    assert!(stderr.contains("no warnings"), "{stderr}");
    let jobs = table(&dir.path().join("out"), "jobs");
    assert_eq!(jobs.height(), 2);
    for rhat in floats(&jobs, "cell_rhat_max") {
        assert!(rhat.unwrap() <= 1.01, "{rhat:?}");
    }
}
