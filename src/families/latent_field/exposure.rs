//! Per-cell denominators of counts (`data.exposure`, `data.offset`) and the data assembly of a
//! real grid: each cell's value and log offset, summed from their sources, and which cells the
//! likelihood sees.
//!
//! The sources of a cell's log offset, added: `model.offset` (a number, or the log of the cell
//! area), shared by every cell; the log of the cell's share of the study region, 0 inside and
//! log 0 = -inf outside (a grid CSV that leaves cells out: the cells it gives are the region's
//! mask); and `data.offset`, or the log of `data.exposure`, read from the grid CSV (csv data,
//! when its header has the column) or else from `data.covariates_path`. A cell whose log offset
//! is -inf (exposure 0, or outside the region) expects no count: out of the likelihood, predicted
//! like every cell, its expected count 0. So is a cell whose value the file leaves empty or
//! `NA`. The other cells are the usable ones, of which `data.holdout` holds out a share
//! ([`crate::model::data::Dataset::from_grid_cells`]).
//!
//! The rules the study must keep (checked when it loads, each an error naming the key and,
//! for a data file, the file and its line): `data.exposure` and `data.offset` not both; a
//! poisson likelihood; an exposure a finite number >= 0, a log offset a finite number, on every
//! row of the data file or every cell of the covariates file; at least one usable cell, and one
//! left to fit after the holdout.

use std::path::Path;

use super::centres::same_window;
use super::csv_values::Reading;
use super::grid_csv::{
    Coverage, CsvError, GridData, has_column, read_data_grid, read_grid_columns,
};
use super::keys::{DATA_COVARIATES_PATH, DATA_EXPOSURE, DATA_HOLDOUT, DATA_OFFSET};
use crate::model::data::{GridCells, LogOffsets};
use crate::model::grid::{Grid, Window};
use crate::model::spec::{ExposureColumn, ExposureScale};
use crate::model::{DataSpec, LikelihoodKind};
use crate::study::error::ErrorKind;
use crate::study::shape;
use crate::study::{Key, Resolver, Settings, StudyError};

/// The grid CSV at `path` read for `column` (binomial: and its trials column `trials`), once per
/// resolver (its cache shares the reading between sweep points): the text of the error when it
/// cannot be used.
pub(crate) fn cached_grid(
    resolver: &mut Resolver<'_>,
    path: &Path,
    (column, trials): (&str, Option<&str>),
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, String> {
    let cache_key = format!("grid csv {path:?} {column:?} {trials:?} {dims:?} {likelihood}");
    resolver.cached(cache_key, || {
        read_data_grid(path, column, trials, dims, likelihood).map_err(|e| e.to_string())
    })
}

/// The exposure column of `exposure` read on the grid `dims`: each cell's value (None where
/// the data file has no row for the cell), and the window of the file's cell centres.
pub(crate) fn read_exposure(
    exposure: &ExposureColumn,
    dims: (usize, usize),
) -> Result<(Vec<Option<f64>>, Option<Window>), CsvError> {
    let reading = match exposure.scale {
        ExposureScale::Exposure => Reading::Exposure,
        ExposureScale::LogOffset => Reading::LogOffset,
    };
    let coverage = match exposure.in_data_file {
        true => Coverage::Region,
        false => Coverage::Every,
    };
    let column = [(exposure.column.as_str(), reading)];
    let mut read = read_grid_columns(&exposure.path, &column, dims, coverage)?;
    Ok((read.columns.pop().unwrap_or_default(), read.window))
}

/// The data assembly: each cell's value from `data`, and its log offset summed from its
/// sources: `common` (`model.offset`), log 0 outside the mask of a file that leaves cells out,
/// the exposure column (`exposure`: its log, or the log offsets as given), and the study region
/// (`region`: [`region_log_shares`]). With no source but `common` every cell's log offset is
/// `common`, exactly.
pub(crate) fn grid_cells(
    data: GridData,
    exposure: Option<(ExposureScale, Vec<Option<f64>>)>,
    region: Option<Vec<f64>>,
    common: f64,
) -> GridCells {
    let mask = data.given.map(|given| {
        given
            .into_iter()
            .map(|inside| if inside { 0.0 } else { f64::NEG_INFINITY })
            .collect::<Vec<f64>>()
    });
    let column = exposure.map(|(scale, values)| {
        values
            .into_iter()
            .map(|value| match (scale, value) {
                (ExposureScale::Exposure, Some(e)) => e.ln(),
                (ExposureScale::LogOffset, Some(o)) => o,
                // A cell the data file leaves out, already outside the mask.
                (_, None) => f64::NEG_INFINITY,
            })
            .collect::<Vec<f64>>()
    });
    let log_exposure = [mask, column, region]
        .into_iter()
        .flatten()
        .reduce(|total, source| total.iter().zip(&source).map(|(a, b)| a + b).collect());
    let offsets = match log_exposure {
        Some(log_exposure) => LogOffsets::with_log_exposure(common, log_exposure),
        None => LogOffsets::constant(common),
    };
    GridCells {
        values: data.values,
        offsets,
    }
}

/// The study region's term of each cell's log offset, from its share inside the region
/// (`inside_fraction`): for counts (poisson) the log of the share, so that a cell's expected count
/// is exp(u) times its area inside the region (with `model.offset = "log-area"`; the intensity
/// stays per unit area), log 0 = -inf where the cell lies wholly outside; for the other
/// likelihoods 0 inside and -inf outside (a share of a cell does not change a label, a value or a
/// success probability): a mask.
pub(crate) fn region_log_shares(inside_fraction: &[f64], likelihood: LikelihoodKind) -> Vec<f64> {
    inside_fraction
        .iter()
        .map(|&share| match likelihood {
            _ if share <= 0.0 => f64::NEG_INFINITY,
            LikelihoodKind::Poisson => share.ln(),
            _ => 0.0,
        })
        .collect()
}

/// The cells of `cells` the likelihood can see: a value, and an exposure above 0.
pub(crate) fn usable_cells(cells: &GridCells) -> usize {
    (0..cells.values.len())
        .filter(|&c| cells.values[c].is_some() && cells.offsets.at(c) > f64::NEG_INFINITY)
        .count()
}

/// `data.exposure` or `data.offset`, whichever the study gives.
fn given_key(settings: &Settings) -> Option<(Key, ExposureScale)> {
    [
        (DATA_EXPOSURE, ExposureScale::Exposure),
        (DATA_OFFSET, ExposureScale::LogOffset),
    ]
    .into_iter()
    .find(|(key, _)| settings.given(*key).is_some())
}

/// Whether the study names an exposure column (`data.covariates_path` may then be given
/// without covariates).
pub(crate) fn names_exposure(settings: &Settings) -> bool {
    given_key(settings).is_some()
}

/// The data of a point with its exposure column resolved and read, and the data checked to
/// leave cells to fit: the usable cells (a value and an exposure above 0) are at least one, and
/// `data.holdout` leaves one of them to fit.
pub(crate) fn with_exposure(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    likelihood: LikelihoodKind,
    data: DataSpec,
    grid: &Grid,
    inside_fraction: Option<&[f64]>,
) -> Result<DataSpec, StudyError> {
    let region_shares = inside_fraction.map(|shares| region_log_shares(shares, likelihood));
    let exposure = exposure_column(resolver, settings, likelihood, &data, grid)?;
    let dims = (grid.nx(), grid.ny());
    let (data, holdout) = match data {
        DataSpec::Csv {
            path,
            column,
            trials,
            holdout,
            ..
        } => {
            let data = DataSpec::Csv {
                path,
                column,
                trials,
                holdout,
                exposure,
            };
            (data, holdout)
        }
        DataSpec::Points(mut points) => {
            points.exposure = exposure;
            let holdout = points.holdout;
            (DataSpec::Points(points), holdout)
        }
        other @ (DataSpec::Simulated { .. } | DataSpec::Sites(_)) => return Ok(other),
    };
    // Every cell of the points' grid has a count; a grid CSV's cells are known once read.
    let values = match &data {
        DataSpec::Csv { path, column, .. } => {
            match cached_grid(resolver, path, (column, None), dims, likelihood) {
                Ok(grid_data) => grid_data,
                // resolve.rs's reading of the same file reported it already.
                Err(_) => return Ok(data),
            }
        }
        _ => GridData {
            values: vec![Some(0.0); grid.cells()],
            trials: None,
            given: None,
            window: None,
        },
    };
    let (key, _) = given_key(settings).unwrap_or((DATA_HOLDOUT, ExposureScale::Exposure));
    let column = match data.exposure() {
        Some(exposure) => match cached_exposure(resolver, exposure, dims) {
            Ok((values, _)) => Some((exposure.scale, values)),
            Err(problem) => return Err(exposure_file_error(resolver, settings, key, problem)),
        },
        None => None,
    };
    let usable = usable_cells(&grid_cells(values, column, region_shares, 0.0));
    if usable == 0 {
        return Err(resolver
            .error_at(
                settings,
                &[key],
                ErrorKind::Data,
                format!(
                    "every cell the data observe has exposure 0 ({}): none is left in the \
                     likelihood",
                    key.dotted()
                ),
            )
            .help("an exposure of 0 takes a cell out of the likelihood; check the column"));
    }
    if holdout.held_of(usable) >= usable {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_HOLDOUT],
                ErrorKind::Conflict,
                format!(
                    "data.holdout = {:?} holds out all {usable} cells the data observe \
                     (a value and an exposure above 0), leaving none to fit",
                    settings.float(DATA_HOLDOUT)
                ),
            )
            .help("use a smaller holdout"));
    }
    Ok(data)
}

/// The exposure column of `exposure` read once per resolver (see [`read_exposure`]): the text
/// of the error when the file cannot be used.
fn cached_exposure(
    resolver: &mut Resolver<'_>,
    exposure: &ExposureColumn,
    dims: (usize, usize),
) -> Result<(Vec<Option<f64>>, Option<Window>), String> {
    let cache_key = format!("exposure {exposure:?} {dims:?}");
    resolver.cached(cache_key, || {
        read_exposure(exposure, dims).map_err(|e| e.to_string())
    })
}

/// `bad exposure file: ...`, located at `key`.
fn exposure_file_error(
    resolver: &Resolver<'_>,
    settings: &Settings,
    key: Key,
    problem: String,
) -> StudyError {
    resolver.error_at(
        settings,
        &[key],
        ErrorKind::Data,
        format!("bad exposure file: {problem}"),
    )
}

/// The file and column of `data.exposure` or `data.offset`, checked against the likelihood,
/// the source and the other key; None when neither is given.
fn exposure_column(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    likelihood: LikelihoodKind,
    data: &DataSpec,
    grid: &Grid,
) -> Result<Option<ExposureColumn>, StudyError> {
    let Some((key, scale)) = given_key(settings) else {
        return Ok(None);
    };
    if settings.given(DATA_EXPOSURE).is_some() && settings.given(DATA_OFFSET).is_some() {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_OFFSET, DATA_EXPOSURE],
                ErrorKind::Conflict,
                "data.exposure and data.offset both give the counts' exposure",
            )
            .help("give one: data.offset is the log of data.exposure"));
    }
    if likelihood != LikelihoodKind::Poisson {
        return Err(resolver
            .error_at(
                settings,
                &[key],
                ErrorKind::Conflict,
                format!(
                    "{} is the exposure of Poisson counts, but the likelihood is {likelihood}",
                    key.dotted()
                ),
            )
            .help("remove it, or use model.likelihood = \"poisson\""));
    }
    let column = settings.text(key);
    let dims = (grid.nx(), grid.ny());
    let covariates_path = settings
        .given(DATA_COVARIATES_PATH)
        .map(|written| resolver.study_dir().join(written.value.to_string()));
    let path = match (data, covariates_path) {
        (DataSpec::Csv { path, .. }, covariates) => {
            let cache_key = format!("header {path:?} {column:?} {dims:?}");
            let in_data_file = resolver.cached(cache_key, || {
                has_column(path, &column, dims).map_err(|e| e.to_string())
            });
            match (in_data_file, covariates) {
                (Ok(false), Some(covariates)) => covariates,
                // The data file is read (and its problems reported) as the data.
                _ => path.clone(),
            }
        }
        (_, Some(covariates)) => covariates,
        (_, None) => {
            return Err(resolver
                .error_at(
                    settings,
                    &[key],
                    ErrorKind::Conflict,
                    format!(
                        "{} of {} data is read from data.covariates_path, which is not given",
                        key.dotted(),
                        data.source()
                    ),
                )
                .help(format!(
                    "add covariates_path = \"data/your_cells.csv\" under [data]: a grid CSV with \
                     columns i, j and `{column}`, one row per cell of the study's grid"
                )));
        }
    };
    let in_data_file = matches!(data, DataSpec::Csv { path: data_path, .. } if *data_path == path);
    let exposure = ExposureColumn {
        path: path.clone(),
        column,
        scale,
        in_data_file,
    };
    if !in_data_file {
        check_window(resolver, settings, key, &exposure, grid)?;
    }
    Ok(Some(exposure))
}

/// The exposure file read, and, when it is a covariates file, on the study's grid: its cell
/// centres (when it gives them) tile the grid's window.
fn check_window(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    key: Key,
    exposure: &ExposureColumn,
    grid: &Grid,
) -> Result<(), StudyError> {
    let dims = (grid.nx(), grid.ny());
    match cached_exposure(resolver, exposure, dims) {
        Err(problem) => Err(exposure_file_error(resolver, settings, key, problem)),
        Ok((_, Some(window))) if !same_window(&window, &grid.window()) => {
            let problem = format!(
                "{}: its cell centres tile {}, but the study's grid tiles {}: the exposure must \
                 be given on the study's grid",
                exposure.path.display(),
                shape::window_text(&window, false),
                shape::window_text(&grid.window(), false)
            );
            Err(exposure_file_error(resolver, settings, key, problem))
        }
        Ok(_) => Ok(()),
    }
}
