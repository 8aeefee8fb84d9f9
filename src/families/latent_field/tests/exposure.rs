//! Exposures and missing cells as a job meets them: a study's exposure column resolved, read and
//! summed into each cell's log offset, and the equalities that must hold exactly: a column of
//! log exposures is the exposure column, and an exposure of 0 is the cell left out of the file.
//! Each pair of studies is run under one job header (so with the same random streams): equal
//! data give equal numbers in every table, bit for bit.

use super::*;
use crate::model::spec::{ExposureColumn, ExposureScale};

/// Each cell's count (None: `NA`) and exposure on the 3 x 3 grid, cell (i, j) at 3 j + i.
const COUNTS: [Option<u32>; 9] = [
    Some(3),
    Some(0),
    Some(7),
    None,
    Some(12),
    Some(1),
    Some(5),
    Some(2),
    Some(9),
];
const EXPOSURES: [f64; 9] = [1.5, 0.25, 4.0, 2.0, 6.5, 0.8, 3.0, 1.1, 5.0];

/// The grid CSV of [`COUNTS`] with the exposure `exposure(c)` in column `e` and its log (17
/// significant digits, the shortest text that reads back to the same double) in `log_e`; the
/// cells of `left_out` have no row.
fn grid_csv(exposure: impl Fn(usize) -> f64, left_out: &[usize]) -> String {
    let mut text = "i,j,count,e,log_e\n".to_string();
    for c in (0..9).filter(|c| !left_out.contains(c)) {
        let count = COUNTS[c].map_or("NA".to_string(), |n| n.to_string());
        let e = exposure(c);
        let log = if e > 0.0 {
            format!("{:?}", e.ln())
        } else {
            "NA".into()
        };
        text.push_str(&format!("{},{},{count},{e:?},{log}\n", c % 3, c / 3));
    }
    text
}

/// A 3 x 3 poisson study of the grid CSV `csv` with `data` under `[data]` and sampler `kind`,
/// written with its data file in a temporary folder.
fn study(csv: &str, data: &str, kind: &str) -> (tempfile::TempDir, Study) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cells.csv"), csv).unwrap();
    let text = format!(
        "[model]\ngrid = 3\nlikelihood = \"poisson\"\noffset = -0.5\n\
         [data]\nsource = \"csv\"\npath = \"cells.csv\"\nholdout = 0.25\n{data}\
         [sampler]\nkind = \"{kind}\"\niterations = 1500\nburn_in = 500\nchains = 2\n"
    );
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    let study = load(&path).unwrap_or_else(|e| panic!("study should load:\n{e}"));
    (dir, study)
}

/// Two studies' jobs run under the first's header: the same data, intercept, scores and fields
/// table, bit for bit.
fn assert_same_job(a: &Study, b: &Study) {
    let (header, spec_a) = job_of(a);
    let (_, spec_b) = job_of(b);
    let (result_a, fields_a) = run(&header, &spec_a);
    let (result_b, fields_b) = run(&header, &spec_b);
    assert_eq!(result_a.dataset, result_b.dataset);
    assert_eq!(result_a.mean.to_bits(), result_b.mean.to_bits());
    assert_eq!(result_a.scores, result_b.scores);
    assert_eq!(result_a.run.post_mean, result_b.run.post_mean);
    assert!(
        fields_a.equals_missing(&fields_b),
        "fields differ:\n{fields_a}\n{fields_b}"
    );
}

#[test]
fn a_column_of_log_exposures_is_the_exposure_column_number_for_number() {
    let csv = grid_csv(|c| EXPOSURES[c], &[]);
    for kind in ["mala", "laplace"] {
        let (_a, exposure) = study(&csv, "exposure = \"e\"\n", kind);
        let (_b, offset) = study(&csv, "offset = \"log_e\"\n", kind);
        let (_, spec) = job_of(&offset);
        assert_eq!(
            spec.data.exposure().unwrap().scale,
            ExposureScale::LogOffset
        );
        assert_same_job(&exposure, &offset);
    }
}

#[test]
fn an_exposure_of_zero_is_the_cell_left_out_of_the_file() {
    // Cell 4 holds 12 events and exposure 0 in one file, and has no row in the other.
    let zero = grid_csv(|c| if c == 4 { 0.0 } else { EXPOSURES[c] }, &[]);
    let left_out = grid_csv(|c| EXPOSURES[c], &[4]);
    let (_a, a) = study(&zero, "exposure = \"e\"\n", "mala");
    let (_b, b) = study(&left_out, "exposure = \"e\"\n", "mala");
    assert_same_job(&a, &b);
    let (header, spec) = job_of(&a);
    let (result, fields) = run(&header, &spec);
    let data = &result.dataset;
    assert!(!data.observed.cells.contains(&4) && !data.held_out.cells.contains(&4));
    // The NA count is neither observed nor held out; the others are one or the other.
    assert!(!data.observed.cells.contains(&3) && !data.held_out.cells.contains(&3));
    assert_eq!(data.observed.len() + data.held_out.len(), 7);
    // Each cell's log offset is model.offset + log E; null (log 0) where E = 0, whose expected
    // count is 0 and whose field is predicted all the same.
    let offsets: Vec<Option<f64>> = fields
        .column("offset")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    for (c, offset) in offsets.iter().enumerate() {
        let expected = (c != 4).then(|| -0.5 + EXPOSURES[c].ln());
        assert_eq!(*offset, expected, "cell {c}");
    }
    let expected_count = fields.column("expected_count").unwrap().f64().unwrap();
    assert_eq!(expected_count.get(4), Some(0.0));
    let observation = fields.column("observation").unwrap().f64().unwrap();
    assert_eq!((observation.get(3), observation.get(4)), (None, None));
    assert!(
        result.run.post_sd[4] > 0.3,
        "the cell's field keeps most of its prior spread"
    );
}

/// `mean = "auto"` with exposures: log(total observed count / total exposure of the observed
/// cells) - model.offset - variance / 2.
#[test]
fn the_automatic_intercept_is_the_observed_rate_per_unit_exposure() {
    let csv = grid_csv(|c| EXPOSURES[c], &[]);
    let (_dir, study) = study(&csv, "exposure = \"e\"\n", "laplace");
    let (header, spec) = job_of(&study);
    let (result, _) = run(&header, &spec);
    let observed = &result.dataset.observed;
    let count: f64 = observed.values.iter().sum();
    let exposure: f64 = observed
        .cells
        .iter()
        .map(|&c| EXPOSURES[c].ln().exp())
        .sum();
    let expected = (count / exposure).ln() + 0.5 - 0.5;
    assert_eq!(result.mean, expected);
    // Without the column: log(mean count per cell) - model.offset - variance / 2, as ever.
    let (_dir, plain) = self::study(&csv, "", "laplace");
    let (header, spec) = job_of(&plain);
    let (result, fields) = run(&header, &spec);
    let observed = &result.dataset.observed;
    let count: f64 = observed.values.iter().sum();
    let expected = (count / observed.len() as f64).ln() + 0.5 - 0.5;
    assert_eq!(result.mean, expected);
    assert!(
        fields.column("offset").is_err(),
        "no offset column without per-cell terms"
    );
}

#[test]
fn the_exposure_column_comes_from_the_data_file_or_the_covariates_file() {
    let csv = grid_csv(|c| EXPOSURES[c], &[]);
    let (dir, with_column) = study(&csv, "exposure = \"e\"\n", "laplace");
    let (_, spec) = job_of(&with_column);
    assert_eq!(
        spec.data.exposure(),
        Some(&ExposureColumn {
            path: dir.path().join("cells.csv"),
            column: "e".into(),
            scale: ExposureScale::Exposure,
            in_data_file: true,
        })
    );
    // A column the data file lacks is read from data.covariates_path, which gives every cell.
    let people: String = (0..9).fold("i,j,population\n".into(), |text, c| {
        text + &format!("{},{},{}\n", c % 3, c / 3, 100 * (c + 1))
    });
    std::fs::write(dir.path().join("people.csv"), &people).unwrap();
    let text = std::fs::read_to_string(dir.path().join("s.toml"))
        .unwrap()
        .replace(
            "exposure = \"e\"",
            "exposure = \"population\"\ncovariates_path = \"people.csv\"",
        );
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    let (_, spec) = job_of(&load(&path).unwrap());
    let exposure = spec.data.exposure().unwrap();
    assert_eq!(exposure.path, dir.path().join("people.csv"));
    assert!(!exposure.in_data_file);
    // A covariates file that leaves a cell out is refused, naming it.
    std::fs::write(dir.path().join("people.csv"), &people[..people.len() - 8]).unwrap();
    let error = load(&path).unwrap_err().to_string();
    assert!(
        error.contains("bad exposure file") && error.contains("the file has 8 cells"),
        "{error}"
    );
}

/// The located errors of the exposure keys: each names the key's line, and for a bad value the
/// data file and its line.
#[test]
fn bad_exposures_are_refused_where_they_are_written() {
    let good = grid_csv(|c| EXPOSURES[c], &[]);
    let negative = good.replace("0,1,NA,2.0,", "0,1,NA,-2.0,");
    let empty = good.replace(",2.0,", ",,");
    let nobody = grid_csv(|_| 0.0, &[]);
    let one = grid_csv(|c| if c == 0 { 1.0 } else { 0.0 }, &[]);
    let probit = "i,j,label,e\n0,0,1,1.0\n1,0,0,1.0\n";
    let cases: [(&str, &str, &str); 7] = [
        (
            &good,
            "exposure = \"e\"\noffset = \"log_e\"\n",
            ":8:10: data.exposure and data.offset both give the counts' exposure",
        ),
        (
            &negative,
            "exposure = \"e\"\n",
            "cells.csv:5: e = `-2.0` is not an exposure (a finite number >= 0)",
        ),
        (
            &good,
            "exposure = \"pop\"\n",
            "cells.csv:1: no column `pop`",
        ),
        (&empty, "exposure = \"e\"\n", "cells.csv:5: e is empty"),
        (
            &nobody,
            "exposure = \"e\"\n",
            "every cell the data observe has exposure 0",
        ),
        (
            &one,
            "exposure = \"e\"\nholdout = 0.5\n",
            "holds out all 1 cells the data observe",
        ),
        (
            probit,
            "exposure = \"e\"\n",
            "data.exposure is the exposure of Poisson counts, but the likelihood is probit",
        ),
    ];
    for (csv, data, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cells.csv"), csv).unwrap();
        let (grid, likelihood) = match csv == probit {
            true => ("[2, 1]", "probit"),
            false => ("3", "poisson"),
        };
        let text = format!(
            "[model]\ngrid = {grid}\nlikelihood = \"{likelihood}\"\n\
             [data]\nsource = \"csv\"\npath = \"cells.csv\"\n{data}"
        );
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).unwrap();
        let error = load(&path).unwrap_err().to_string();
        assert!(
            error.contains(expected),
            "{error:?} should say {expected:?}"
        );
    }
    let simulated = "[model]\nlikelihood = \"poisson\"\n[data]\noffset = \"e\"\n";
    assert!(
        headline(simulated).contains("`data.offset` applies only to data.source"),
        "{}",
        headline(simulated)
    );
}

/// The study region's term of the log offset: for counts the log of each cell's share (so the
/// expected count is exp(u) times the area inside), for labels a mask; a cell wholly outside
/// is out of the likelihood whatever the likelihood, and the terms add to the exposure's.
#[test]
fn a_cells_share_of_the_region_adds_its_log_to_the_counts_offset_and_masks_the_others() {
    use crate::families::latent_field::exposure::{grid_cells, region_log_shares, usable_cells};
    use crate::families::latent_field::grid_csv::GridData;
    let shares = [1.0, 0.25, 0.0];
    let data = || GridData {
        values: vec![Some(1.0); 3],
        trials: None,
        given: None,
        window: None,
    };
    let poisson = region_log_shares(&shares, LikelihoodKind::Poisson);
    assert_eq!(poisson, [0.0, 0.25f64.ln(), f64::NEG_INFINITY]);
    let exposure = Some((
        ExposureScale::Exposure,
        vec![Some(2.0), Some(4.0), Some(5.0)],
    ));
    let cells = grid_cells(data(), exposure, Some(poisson), -1.0);
    assert_eq!(cells.offsets.at(0), -1.0 + 2f64.ln());
    assert_eq!(cells.offsets.at(1), -1.0 + 4f64.ln() + 0.25f64.ln());
    assert_eq!(cells.offsets.at(2), f64::NEG_INFINITY);
    assert_eq!(usable_cells(&cells), 2);
    for kind in [
        LikelihoodKind::Probit,
        LikelihoodKind::Binomial,
        LikelihoodKind::Gaussian,
    ] {
        let mask = region_log_shares(&shares, kind);
        assert_eq!(mask, [0.0, 0.0, f64::NEG_INFINITY], "{kind}");
        assert_eq!(usable_cells(&grid_cells(data(), None, Some(mask), 0.0)), 2);
    }
    let whole = grid_cells(data(), None, None, 0.5);
    assert_eq!((whole.offsets.at(2), usable_cells(&whole)), (0.5, 3));
}
