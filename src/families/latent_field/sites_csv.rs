//! Reading measurements at scattered sites from CSV (`data.source = "sites"`): a header line
//! naming the columns, then one row per measurement. Two columns hold the site's coordinates
//! (`data.x`, `data.y`, by default `x` and `y`), finite numbers in the units of `model.window`;
//! `data.value` names the column of the measurement, read as the likelihood observes it
//! ([`super::csv_values`]: a finite number for gaussian, 0/1 or -1/+1 for probit, a whole count
//! for poisson, successes with their trials in `data.trials` for binomial). Other columns are
//! ignored. Several rows may share a site, and several sites a cell. The dialect is
//! [`crate::study::csv`]'s.
//!
//! `output.predict_sites` names a second kind of file, [`read_predict_sites`]: sites to predict
//! at, columns `x` and `y` and any others, carried through to `sites.parquet` as text.
//!
//! Errors name the file and the 1-based line of the row to blame: a site outside the window
//! (its edges belong to it) or outside the study region (`model.region`, when given), a
//! coordinate or a value that is not a number, a value missing (empty or `NA`: a measurement
//! the file does not have is a row it leaves out), a value the likelihood cannot take, trials
//! fewer than the successes, a missing column, a file without a row.

use std::path::Path;

use super::csv_values::{LabelConvention, Reading, check_trials, read_value};
use crate::model::LikelihoodKind;
use crate::model::grid::Window;
use crate::model::region::Region;
use crate::study::csv::{Column, CsvError, CsvText, Row};

/// Where the sites are and how to read them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SitesSource<'a> {
    /// The columns of each site's x and y.
    pub(crate) x: &'a str,
    pub(crate) y: &'a str,
    /// The column of the measurement.
    pub(crate) value: &'a str,
    /// Binomial: the column of the trials.
    pub(crate) trials: Option<&'a str>,
    pub(crate) likelihood: LikelihoodKind,
    /// The window every site must lie in (closed on every side).
    pub(crate) window: Window,
    /// The study region every site must lie in, and its file (for messages).
    pub(crate) region: Option<(&'a Region, &'a Path)>,
}

/// The measurements of a sites file, in its row order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sites {
    /// Each measurement's site (x, y).
    pub(crate) positions: Vec<(f64, f64)>,
    /// Each measurement (probit labels as -1.0 / +1.0).
    pub(crate) values: Vec<f64>,
    /// Binomial: each measurement's trials; empty for the other likelihoods.
    pub(crate) trials: Vec<f64>,
}

/// Sites to predict the field at (`output.predict_sites`), in the file's row order, with the
/// file's other columns as text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PredictSites {
    pub(crate) positions: Vec<(f64, f64)>,
    /// Each other column: its name and its text on every row.
    pub(crate) carried: Vec<(String, Vec<String>)>,
}

/// The sites of the predict file at `path` (columns `x` and `y`), each checked to lie in
/// `window`.
pub(crate) fn read_predict_sites(path: &Path, window: Window) -> Result<PredictSites, CsvError> {
    let text = CsvText::open(path, MAX_SITES_BYTES, "for a predict-sites file")?;
    let mut rows = text.rows("predict-sites file")?;
    let (x, y) = (rows.column("x")?, rows.column("y")?);
    let header = rows.header();
    let others: Vec<(Column, String)> = (0..header.names().len())
        .filter_map(|k| {
            let name = header.names()[k].clone();
            let column = header.find(&name)?;
            (column != x && column != y && !name.is_empty()).then_some((column, name))
        })
        .collect();
    let source = SitesSource {
        x: "x",
        y: "y",
        value: "",
        trials: None,
        likelihood: LikelihoodKind::Gaussian,
        window,
        region: None,
    };
    let mut sites = PredictSites {
        positions: Vec::new(),
        carried: others
            .iter()
            .map(|(_, n)| (n.clone(), Vec::new()))
            .collect(),
    };
    while let Some(row) = rows.next_row()? {
        sites.positions.push(site_of(&row, (x, y), &source)?);
        for ((column, _), (_, values)) in others.iter().zip(sites.carried.iter_mut()) {
            values.push(row.text(*column).to_string());
        }
    }
    if sites.positions.is_empty() {
        return Err(CsvError::file(
            text.path(),
            "the predict-sites file has a header but no row: give one row per site (x, y)",
        ));
    }
    Ok(sites)
}

/// The largest sites file read: 256 MiB, millions of rows.
const MAX_SITES_BYTES: u64 = 1 << 28;

/// The measurements of the sites CSV at `path`.
pub(crate) fn read_sites(path: &Path, source: SitesSource<'_>) -> Result<Sites, CsvError> {
    sites_of(
        &CsvText::open(path, MAX_SITES_BYTES, "for a sites file")?,
        source,
    )
}

/// The measurements of a sites file's text.
pub(crate) fn sites_of(text: &CsvText, source: SitesSource<'_>) -> Result<Sites, CsvError> {
    let mut rows = text.rows("sites file")?;
    let x = rows.column_for(source.x, "data.x")?;
    let y = rows.column_for(source.y, "data.y")?;
    let value = rows.column_for(source.value, "data.value")?;
    let trials = source
        .trials
        .map(|name| rows.column_for(name, "data.trials"))
        .transpose()?;
    let mut labels = LabelConvention::default();
    let mut sites = Sites {
        positions: Vec::new(),
        values: Vec::new(),
        trials: Vec::new(),
    };
    while let Some(row) = rows.next_row()? {
        let position = site_of(&row, (x, y), &source)?;
        let reading = Reading::Observation(source.likelihood);
        let measured =
            read_value(&row, value, reading, &mut labels)?.ok_or_else(|| missing(&row, value))?;
        if let Some(trials_column) = trials {
            let n = read_value(&row, trials_column, Reading::Trials, &mut labels)?
                .ok_or_else(|| missing(&row, trials_column))?;
            check_trials(&row, (value, trials_column), Some(measured), Some(n))?;
            sites.trials.push(n);
        }
        sites.positions.push(position);
        sites.values.push(measured);
    }
    if sites.values.is_empty() {
        return Err(CsvError::file(
            text.path(),
            "the sites file has a header but no row: give one row per measurement",
        ));
    }
    Ok(sites)
}

/// A row's site, checked to be a finite point in the window and the region.
fn site_of(
    row: &Row<'_>,
    (x, y): (Column, Column),
    source: &SitesSource<'_>,
) -> Result<(f64, f64), CsvError> {
    let coordinate = |column: Column| match row.number(column) {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(row.not(column, "a coordinate (a finite number)")),
    };
    let (px, py) = (coordinate(x)?, coordinate(y)?);
    let w = source.window;
    if !((w.x.0..=w.x.1).contains(&px) && (w.y.0..=w.y.1).contains(&py)) {
        return Err(row.line_error(format!(
            "the site ({px}, {py}) lies outside model.window [{}, {}] x [{}, {}]: a site must \
             lie in the window the grid tiles (its edges included)",
            w.x.0, w.x.1, w.y.0, w.y.1
        )));
    }
    if let Some((region, file)) = source.region
        && !region.contains(px, py)
    {
        return Err(row.line_error(format!(
            "the site ({px}, {py}) lies outside the study region of {} (model.region)",
            file.display()
        )));
    }
    Ok((px, py))
}

fn missing(row: &Row<'_>, column: Column) -> CsvError {
    row.error(
        column,
        format!(
            "{} is empty: every row of a sites file is a measurement (leave out a row that has \
             none; predict at a site with output.predict_sites)",
            row.name(column)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use LikelihoodKind::*;

    fn read(text: &str, likelihood: LikelihoodKind, trials: Option<&str>) -> Result<Sites, String> {
        let text = CsvText::new(text, Path::new("data/s.csv")).unwrap();
        let source = SitesSource {
            x: "x",
            y: "y",
            value: "v",
            trials,
            likelihood,
            window: Window {
                x: (0.0, 10.0),
                y: (0.0, 5.0),
            },
            region: None,
        };
        sites_of(&text, source).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_each_row_as_a_measurement_at_its_site() {
        let sites = read(
            "x,y,v,note\n1,2,0.5,a\n1,2,-3,b\n10,5,7,c\n",
            Gaussian,
            None,
        )
        .unwrap();
        assert_eq!(sites.positions, [(1.0, 2.0), (1.0, 2.0), (10.0, 5.0)]);
        assert_eq!(sites.values, [0.5, -3.0, 7.0]);
        let labels = read("x,y,v\n1,2,0\n3,4,1\n", Probit, None).unwrap();
        assert_eq!(labels.values, [-1.0, 1.0]);
        let binomial = read("x,y,v,n\n1,2,3,5\n3,4,0,0\n", Binomial, Some("n")).unwrap();
        assert_eq!(
            (binomial.values, binomial.trials),
            (vec![3.0, 0.0], vec![5.0, 0.0])
        );
    }

    #[test]
    fn every_error_names_the_file_and_line_and_what_is_allowed() {
        let cases: [(&str, LikelihoodKind, Option<&str>, &str); 9] = [
            (
                "x,y,v\n1,2,3\n11,2,3\n",
                Gaussian,
                None,
                "data/s.csv:3: the site (11, 2) lies outside model.window",
            ),
            ("x,y,v\n1,2,3\n1,abc,3\n", Gaussian, None, "data/s.csv:3"),
            ("x,y,v\n1,2,\n", Gaussian, None, "data/s.csv:2: v is empty"),
            ("x,y,v\n1,2,NA\n", Gaussian, None, "v is empty"),
            (
                "x,y,v\n1,2,2.5\n",
                Poisson,
                None,
                "Poisson data must be whole numbers",
            ),
            (
                "x,y,v\n1,2,3\n",
                Probit,
                None,
                "probit data must be 0/1 or -1/+1",
            ),
            (
                "x,y,v,n\n1,2,6,5\n",
                Binomial,
                Some("n"),
                "the successes cannot outnumber the trials",
            ),
            ("x,y,value\n1,2,3\n", Gaussian, None, "data.value"),
            ("x,y,v\n", Gaussian, None, "no row"),
        ];
        for (text, likelihood, trials, wanted) in cases {
            let error = read(text, likelihood, trials).unwrap_err();
            assert!(error.contains(wanted), "{text:?}: {error}");
        }
    }
}
