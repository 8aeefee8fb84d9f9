//! The binomial likelihood as a study meets it: where its trials come from (a column of the grid
//! CSV, or one number per simulated cell), its defaults, its keys' columns and streams, and the
//! located errors of settings that cannot work.

use super::*;
use crate::families::latent_field::grid_csv::{CsvError, GridData};
use crate::model::{DataSpec, MeanSpec};

/// A study file beside a grid CSV `grid.csv`, in a temporary folder.
fn with_grid(csv: &str, study: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("grid.csv"), csv).unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, study).unwrap();
    (dir, path)
}

const GRID: &str = "i,j,count,trials,n\n0,0,3,5,9\n1,0,0,0,1\n0,1,7,7,7\n1,1,1,10,10\n";

const CSV_STUDY: &str = "[model]\ngrid = 2\nlikelihood = \"binomial\"\n\
                         [data]\nsource = \"csv\"\npath = \"grid.csv\"\nholdout = 0.25\n";

#[test]
fn a_binomial_grid_reads_its_trials_column_and_defaults_to_the_auto_mean() {
    let (dir, path) = with_grid(GRID, CSV_STUDY);
    let loaded = load(&path).unwrap();
    let point = &loaded.points[0];
    let spec = latent(point);
    assert_eq!(
        spec.data,
        DataSpec::Csv {
            path: dir.path().join("grid.csv"),
            column: "count".into(),
            trials: Some("trials".into()),
            holdout: crate::model::data::HoldOut::Share(0.25),
            exposure: None,
        }
    );
    assert_eq!(spec.model.likelihood, LikelihoodKind::Binomial);
    assert_eq!(spec.model.mean, MeanSpec::Auto);
    assert_eq!(
        *point.param(keys::DATA_TRIALS),
        ParamValue::Text("trials".into())
    );
    assert_eq!(*point.param(keys::DATA_TRIALS_PER_CELL), ParamValue::Null);
    assert_eq!(
        *point.param(keys::DATA_COLUMN),
        ParamValue::Text("count".into())
    );

    let named = CSV_STUDY.replace("holdout = 0.25", "trials = \"n\"");
    let (_dir, path) = with_grid(GRID, &named);
    let loaded = load(&path).unwrap();
    let DataSpec::Csv { trials, .. } = &latent(&loaded.points[0]).data else {
        panic!("csv data expected");
    };
    assert_eq!(trials.as_deref(), Some("n"));
}

/// A grid whose successes outnumber their trials is refused when the study loads, at the study's
/// `data.path` and at the data file's line; a missing trials column names the columns there are.
#[test]
fn a_binomial_grid_with_bad_trials_is_refused_at_the_file_and_line() {
    let bad = GRID.replace("0,1,7,7,7", "0,1,8,7,7");
    let (_dir, path) = with_grid(&bad, CSV_STUDY);
    let error = load(&path).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Data);
    let shown = error.to_string();
    assert!(shown.contains("s.toml:6:8: bad data file: "), "{shown}");
    assert!(
        shown.contains("grid.csv:4: count = `8` successes of trials = `7` trials"),
        "{shown}"
    );
    let missing = CSV_STUDY.replace("holdout = 0.25", "trials = \"tested\"");
    let (_dir, path) = with_grid(GRID, &missing);
    let shown = load(&path).unwrap_err().to_string();
    assert!(shown.contains("no column `tested`"), "{shown}");
}

#[test]
fn simulated_binomial_data_have_trials_per_cell_keyed_into_the_counts_stream() {
    let study = |extra: &str| {
        parse_ok(&format!(
            "[model]\ngrid = 4\nlikelihood = \"binomial\"\n[data]\n{extra}"
        ))
    };
    let default = study("");
    let spec = latent(&default.points[0]);
    assert_eq!(
        spec.data,
        DataSpec::Simulated {
            truth_length_scale: 0.3,
            subsample: 4,
            trials: 10,
        }
    );
    assert_eq!(spec.model.mean, MeanSpec::Value(0.0));
    assert_eq!(
        *default.points[0].param(keys::DATA_TRIALS),
        ParamValue::Null
    );
    let three = study("trials_per_cell = 3\n");
    let point = &three.points[0];
    assert!(matches!(
        latent(point).data,
        DataSpec::Simulated { trials: 3, .. }
    ));
    assert_eq!(*point.param(keys::DATA_TRIALS_PER_CELL), ParamValue::Int(3));
    // The counts' stream follows the trials; a poisson job's stream does not mention them.
    let counts = |study: &Study| {
        crate::plan::plan(study).jobs[0]
            .header
            .streams
            .data(&keys::COUNTS)
            .to_string()
    };
    assert!(
        counts(&three).contains("data.trials_per_cell=3"),
        "{}",
        counts(&three)
    );
    assert_ne!(counts(&three), counts(&default));
    let poisson = parse_ok("[model]\ngrid = 4\nlikelihood = \"poisson\"\n");
    assert!(!counts(&poisson).contains("trials"), "{}", counts(&poisson));
    assert_eq!(
        *poisson.points[0].param(keys::DATA_TRIALS_PER_CELL),
        ParamValue::Null
    );
}

#[test]
fn binomial_settings_that_cannot_work_are_located() {
    let cases = [
        (
            "[model]\nlikelihood = \"poisson\"\n[data]\ntrials_per_cell = 5\n",
            "studies/t.toml:4:19: `data.trials_per_cell` gives the trials of binomial data, but the \
             likelihood is \"poisson\"",
        ),
        (
            "[model]\nlikelihood = \"gaussian\"\n[data]\nsource = \"csv\"\npath = \"x.csv\"\n\
             trials = \"n\"\n",
            "studies/t.toml:6:10: `data.trials` gives the trials of binomial data, but the likelihood \
             is \"gaussian\"",
        ),
        (
            "[model]\nlikelihood = \"binomial\"\nwindow = [[0, 1], [0, 1]]\n[data]\n\
             source = \"points\"\npath = \"p.csv\"\n",
            "studies/t.toml:2:14: points are not binomial",
        ),
        (
            "[model]\nlikelihood = \"binomial\"\noffset = \"log-area\"\n",
            "studies/t.toml:3:10: model.offset = \"log-area\" scales a poisson rate by the cell's area",
        ),
        (
            "[model]\nlikelihood = \"binomial\"\n[data]\ntrials_per_cell = 0\n",
            "studies/t.toml:4:19: ",
        ),
    ];
    for (text, expected) in cases {
        let got = headline(text);
        assert!(
            got.starts_with(expected),
            "{got:?} should start with {expected:?}"
        );
    }
}

fn binomial_grid(text: &str) -> Result<GridData, CsvError> {
    crate::families::latent_field::grid_csv::parse_binomial_grid_csv(
        text,
        Path::new("data/x.csv"),
        "count",
        "trials",
        (2, 2),
    )
}

/// Successes and trials j-major; n = 0 (no trial, no success) and k = n are data; a cell whose
/// successes and trials are both empty is unobserved, with no trial.
#[test]
fn binomial_grids_read_successes_and_their_trials() {
    let text = "i,j,count,trials\n1,1,1,10\n0,0,3,5\n1,0,0,0\n0,1,7,7\n";
    let data = binomial_grid(text).unwrap();
    assert_eq!(
        data.values,
        vec![Some(3.0), Some(0.0), Some(7.0), Some(1.0)]
    );
    assert_eq!(data.trials, Some(vec![5.0, 0.0, 7.0, 10.0]));
    let missing = "i,j,count,trials\n1,1,1,10\n0,0,NA,NA\n1,0,0,0\n0,1,7,7\n";
    let data = binomial_grid(missing).unwrap();
    assert_eq!(data.values, vec![None, Some(0.0), Some(7.0), Some(1.0)]);
    assert_eq!(data.trials, Some(vec![0.0, 0.0, 7.0, 10.0]));
}

/// Each bad binomial row is refused at its line, naming the column and what it must be.
#[test]
fn bad_binomial_rows_are_refused_at_their_line() {
    let head = "i,j,count,trials\n0,0,3,5\n";
    let cases = [
        (
            "1,0,6,5",
            "data/x.csv:3: count = `6` successes of trials = `5` trials: the successes cannot \
             outnumber the trials",
        ),
        (
            "1,0,1,-2",
            "data/x.csv:3: trials = `-2` is not a number of trials",
        ),
        (
            "1,0,1,2.5",
            "data/x.csv:3: trials = `2.5` is not a number of trials",
        ),
        (
            "1,0,1,inf",
            "data/x.csv:3: trials = `inf` is not a number of trials",
        ),
        (
            "1,0,1,",
            "data/x.csv:3: trials is empty but count = `1` successes are given",
        ),
        (
            "1,0,-1,4",
            "data/x.csv:3: count = `-1` is not a count (binomial",
        ),
        (
            "1,0,0.5,4",
            "data/x.csv:3: count = `0.5` is not a count (binomial",
        ),
    ];
    for (row, expected) in cases {
        let text = format!("{head}{row}\n0,1,0,1\n1,1,0,1\n");
        let got = binomial_grid(&text).unwrap_err().to_string();
        assert!(
            got.starts_with(expected),
            "{got:?} should start with {expected:?}"
        );
    }
    let missing = binomial_grid("i,j,count,n\n0,0,1,1\n")
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with("data/x.csv:1: no column `trials`"),
        "{missing}"
    );
}

/// A binomial grid that leaves a cell out (outside the mask): the cell is out of the likelihood
/// and its success probability is predicted, strictly between 0 and 1, not the 0 its log 0
/// offset would give; the observed cells' come from the data.
#[test]
fn a_masked_binomial_cell_is_predicted_not_given_a_probability_of_zero() {
    let csv = "i,j,count,trials\n0,0,3,5\n1,0,0,4\n0,1,7,7\n";
    let study = "[model]\ngrid = 2\nlikelihood = \"binomial\"\n\
                 [data]\nsource = \"csv\"\npath = \"grid.csv\"\nholdout = 0\n\
                 [sampler]\nkind = \"laplace\"\n";
    let (_dir, path) = with_grid(csv, study);
    let (header, spec) = job_of(&load(&path).unwrap());
    let (result, _) = run(&header, &spec);
    assert_eq!(result.dataset.observed.cells, [0, 1, 2]);
    let success = result.run.functional_mean.as_deref().unwrap();
    assert!(success[3] > 0.05 && success[3] < 0.95, "{success:?}");
    assert!(
        success[2] > success[1],
        "7 of 7 against 0 of 4: {success:?}"
    );
}
