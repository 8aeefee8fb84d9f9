//! Points data as a study meets them: what a points study resolves to, and the located errors
//! of its settings.

use super::*;
use crate::model::grid::Window;
use crate::model::{DataSpec, MeanSpec};

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
        DataSpec::Points {
            path: dir.path().join("p.csv"),
            x: "x".into(),
            y: "y".into(),
            window,
            holdout: 0.25,
        }
    );
    assert_eq!(spec.model.grid, Grid::over_window(4, 2, window));
    // The cell area (0.5 x 0.5) is the offset, and the intercept comes from the data.
    assert_eq!(spec.model.offset, 0.25f64.ln());
    assert_eq!(spec.model.mean, MeanSpec::Auto);
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
