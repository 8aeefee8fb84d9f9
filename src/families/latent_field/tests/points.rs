//! Points data and the unit trap as a study meets them: what a points study resolves to, the
//! located errors of its settings, and when the unit-trap caution is raised.

use super::*;
use crate::model::grid::Window;
use crate::model::{DataSpec, MeanSpec, PointsData};

/// A study file beside a points file, in a temporary folder.
fn with_points(points: &str, study: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.csv"), points).unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, study).unwrap();
    (dir, path)
}

const POINTS: &str = "x,y,mark\n0.1,0.2,a\n0.9,0.9,b\n0.5,0.5,c\n";

#[test]
fn a_points_study_resolves_to_points_data_over_its_window() {
    let study = "[model]\ngrid = [4, 2]\nwindow = [[0, 2], [0, 1]]\nlikelihood = \"poisson\"\n\
                 [data]\nsource = \"points\"\npath = \"p.csv\"\nholdout = 0.25\n";
    let (dir, path) = with_points(POINTS, study);
    let loaded = load(&path).unwrap();
    let spec = latent(&loaded.points[0]);
    let window = Window {
        x: (0.0, 2.0),
        y: (0.0, 1.0),
    };
    assert_eq!(
        spec.data,
        DataSpec::Points(Box::new(PointsData {
            path: dir.path().join("p.csv"),
            x: "x".into(),
            y: "y".into(),
            window,
            holdout: crate::model::data::HoldOut::Share(0.25),
            exposure: None,
        }))
    );
    assert_eq!(spec.model.grid, Grid::over_window(4, 2, window));
    // The cell area (0.5 x 0.5) is the offset, and the intercept comes from the data.
    assert_eq!(spec.model.offset, 0.25f64.ln());
    assert_eq!(spec.model.mean, MeanSpec::Auto);
    assert!(loaded.points.cautions().is_empty());
    let point = &loaded.points[0];
    assert_eq!(*point.param(keys::DATA_X), ParamValue::Text("x".into()));
    assert_eq!(*point.param(keys::DATA_COLUMN), ParamValue::Null);
    assert_eq!(*point.param(keys::DATA_SUBSAMPLE), ParamValue::Null);

    // A given offset wins over the cell area; probit observes presence with a zero intercept.
    let given = study.replace("likelihood", "offset = 0.0\nlikelihood");
    let (_dir, path) = with_points(POINTS, &given);
    assert_eq!(latent(&load(&path).unwrap().points[0]).model.offset, 0.0);
    let probit = study.replace("\"poisson\"", "\"probit\"");
    let (_dir, path) = with_points(POINTS, &probit);
    let spec = latent(&load(&path).unwrap().points[0]).clone();
    assert_eq!(spec.model.mean, MeanSpec::Value(0.0));
}

#[test]
fn points_settings_that_cannot_work_are_located() {
    let base = "[model]\ngrid = 4\nwindow = [[0, 1], [0, 1]]\nlikelihood = \"poisson\"\n\
                [data]\nsource = \"points\"\npath = \"p.csv\"\n";
    let cases: [(String, &str); 7] = [
        (
            base.replace("window = [[0, 1], [0, 1]]\n", ""),
            "s.toml:5:10: data.source = \"points\" needs model.window",
        ),
        (
            base.replace("path = \"p.csv\"\n", ""),
            "s.toml:6:10: data.source = \"points\" needs data.path",
        ),
        (
            base.replace("\"poisson\"", "\"gaussian\""),
            "s.toml:4:14: data.source = \"points\" counts events per cell, which a gaussian",
        ),
        (
            base.replace(
                "grid = 4\nwindow = [[0, 1], [0, 1]]",
                "grid = [4]\nwindow = [[0, 1]]",
            ),
            "s.toml:2:8: data.source = \"points\" bins events in x and y, but the grid is 4-cell 1-D",
        ),
        (
            format!("{base}column = \"count\"\n"),
            "s.toml:8:10: `data.column` applies only to data.source = \"csv\", but the source is \"points\"",
        ),
        (
            format!("{base}y = \"north\"\n"),
            "p.csv:1: no column `north` (data.y); the columns are: x, y, mark",
        ),
        (
            base.replace("[[0, 1], [0, 1]]", "[[0, 1], [0, 0.5]]"),
            "p.csv:3: the point (0.9, 0.9) is outside model.window",
        ),
    ];
    for (study, expected) in cases {
        let (_dir, path) = with_points(POINTS, &study);
        let error = load(&path).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}\nshould say {expected:?}");
    }
    let subsample = base.replace("path", "subsample = 2\npath");
    let (_dir, path) = with_points(POINTS, &subsample);
    let error = load(&path).unwrap_err().to_string();
    assert!(
        error.contains("`data.subsample` applies only to data.source = \"simulated\""),
        "{error}"
    );
}

/// A grid CSV in metres: 4 x 4 cells of 250 m over [0, 1000]^2.
fn metre_grid() -> String {
    let mut text = "i,j,x_center,y_center,count\n".to_string();
    for j in 0..4 {
        for i in 0..4 {
            let (x, y) = (125 + 250 * i, 125 + 250 * j);
            text.push_str(&format!("{i},{j},{x},{y},{}\n", (i + j) % 3));
        }
    }
    text
}

fn cautions_of(grid_csv: &str, model: &str) -> Vec<String> {
    let study = format!(
        "[model]\ngrid = 4\nlikelihood = \"poisson\"\n{model}[data]\nsource = \"csv\"\npath = \"p.csv\"\n"
    );
    let (_dir, path) = with_points(grid_csv, &study);
    load(&path).unwrap().points.cautions().to_vec()
}

#[test]
fn the_unit_trap_fires_on_real_data_whose_length_scale_misses_its_units() {
    let grid = metre_grid();
    let below = cautions_of(&grid, "length_scale = 0.1\n");
    assert_eq!(
        below,
        [
            "unit trap? model.length_scale = 0.1 is below half a cell's side (125) on the window \
          [0, 1000] x [0, 1000] (the data's units; 4 x 4 cells of 250 x 250): neighbouring cells \
          are almost uncorrelated under the prior, so the field cannot borrow strength between \
          them; length scales are in the data's units"
        ]
    );
    assert!(cautions_of(&grid, "length_scale = 200.0\n").is_empty());
    assert!(
        cautions_of(&grid, "length_scale = 10000.0\n").is_empty(),
        "ten times: allowed"
    );
    let above = cautions_of(&grid, "length_scale = 10001.0\n");
    assert!(
        above[0].contains("is above ten times the window's longer side (10000)"),
        "{above:?}"
    );
    // An anisotropic kernel is judged per axis; a prior by its median.
    let y = cautions_of(&grid, "length_scale = 300.0\nlength_scale_y = 130.0\n");
    assert!(y.is_empty(), "{y:?}");
    let y = cautions_of(&grid, "length_scale = 300.0\nlength_scale_y = 120.0\n");
    assert!(
        y[0].starts_with("unit trap? model.length_scale_y = 120 is below"),
        "{y:?}"
    );
    let prior = cautions_of(
        &grid,
        "length_scale = 300.0\nlength_scale_prior = \"half-normal(1)\"\n[sampler]\nhyper = \"within-gibbs\"\n",
    );
    assert!(
        prior[0].starts_with(
            "unit trap? the median 0.6745 of model.length_scale_prior = \"half-normal(1.0)\" is below"
        ),
        "{prior:?}"
    );
    // Rescaled to the unit square, 0.2 is 200 m: quiet.
    assert!(cautions_of(&grid, "length_scale = 0.2\nwindow = [[0, 1], [0, 1]]\n").is_empty());
}

#[test]
fn simulated_data_are_never_in_the_unit_trap() {
    let study = "[model]\ngrid = 16\n[sweep]\n\"model.length_scale\" = [0.001, 0.1, 100.0]\n";
    assert!(parse_ok(study).points.cautions().is_empty());
}
