//! `data.source = "points"` resolved for one sweep point: the likelihood and grid it needs, the
//! study window (`model.window`, or the bounding box of `model.region`), and the points file read
//! once per file, window and region to check every event (located errors from
//! [`super::points_csv`]).

use super::keys::{
    DATA_PATH, DATA_SOURCE, DATA_X, DATA_Y, MODEL_GRID, MODEL_LIKELIHOOD, MODEL_WINDOW,
};
use super::points_csv::{POINT_LIKELIHOODS, PointsSource, read_points};
use super::region_keys::RegionFile;
use crate::model::grid::Window;
use crate::model::{DataSpec, LikelihoodKind, PointsData};
use crate::study::error::ErrorKind;
use crate::study::keys::quoted_words;
use crate::study::shape::{GridShape, WindowSpec};
use crate::study::{Resolver, Settings, StudyError};

/// Refuses a 1-D grid for data that lie in the plane (`doing` says what the data do there, for
/// the message: `data.source = "points" bins events`).
pub(super) fn refuse_line_grid(
    resolver: &Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
    doing: &str,
) -> Result<(), StudyError> {
    if !shape.is_line() {
        return Ok(());
    }
    Err(resolver
        .error_at(
            settings,
            &[MODEL_GRID, DATA_SOURCE],
            ErrorKind::Conflict,
            format!("{doing} in x and y, but the grid is {}", shape.describe()),
        )
        .allowed("a 2-D grid: D or [Dx, Dy]"))
}

/// `model.window` when given, checked to have a y range (`what` names the data, for the
/// message); None when not given.
pub(super) fn plane_window(
    resolver: &Resolver<'_>,
    settings: &Settings,
    what: &str,
) -> Result<Option<Window>, StudyError> {
    let Some(given) = settings.given(MODEL_WINDOW) else {
        return Ok(None);
    };
    let spec = WindowSpec::from_param(&given.value).expect("validated window");
    if spec.y.is_none() {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_WINDOW],
                ErrorKind::Conflict,
                format!(
                    "model.window = {} gives no y range for the {what}",
                    given.value
                ),
            )
            .allowed("[[x0, x1], [y0, y1]]"));
    }
    Ok(Some(spec.window()))
}

/// The points data of a point: the file, its coordinate columns and the study window
/// (`model.window`, else the region's bounding box), the file read once (whatever the grid) to
/// check every event is a finite point in the window and, with `model.region`, in the region.
pub(super) fn points_data(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
    likelihood: LikelihoodKind,
    region: Option<&RegionFile>,
) -> Result<DataSpec, StudyError> {
    if !POINT_LIKELIHOODS.contains(&likelihood) {
        let allowed: Vec<&str> = POINT_LIKELIHOODS.iter().map(|l| l.name()).collect();
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_LIKELIHOOD, DATA_SOURCE],
                ErrorKind::Conflict,
                format!(
                    "data.source = \"points\" counts events per cell, which a {likelihood} \
                     likelihood does not observe"
                ),
            )
            .allowed(format!(
                "likelihood = {} (\"poisson\": counts per cell; \"probit\": whether a cell \
                 holds an event)",
                quoted_words(&allowed)
            )));
    }
    let Some(written) = settings.given(DATA_PATH).map(|s| s.value.to_string()) else {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_SOURCE],
                ErrorKind::Conflict,
                "data.source = \"points\" needs data.path",
            )
            .help(
                "add path = \"data/your_points.csv\" under [data] (a CSV with one row per \
                 event, relative to the study file's folder)",
            ));
    };
    refuse_line_grid(
        resolver,
        settings,
        shape,
        "data.source = \"points\" bins events",
    )?;
    let window = match (plane_window(resolver, settings, "points")?, region) {
        (Some(window), _) => window,
        (None, Some(region)) => region.region.bounding_box(),
        (None, None) => {
            return Err(resolver
                .error_at(
                    settings,
                    &[DATA_SOURCE],
                    ErrorKind::Conflict,
                    "data.source = \"points\" needs model.window, the region the events were \
                     observed in (in the points' units), or model.region",
                )
                .help(
                    "add window = [[x0, x1], [y0, y1]] under [model]; the grid's cells tile it and \
                     every length scale is in its units",
                ));
        }
    };
    let path = resolver.study_dir().join(&written);
    let (x, y) = (settings.text(DATA_X), settings.text(DATA_Y));
    let region_path = region.map(|r| r.path.as_path());
    let cache_key = format!("points {path:?} {x:?} {y:?} {window:?} {region_path:?}");
    let source = PointsSource {
        x: &x,
        y: &y,
        window,
        region: region.map(|r| (r.region.as_ref(), r.path.as_path())),
    };
    let outcome = resolver.cached(cache_key, || {
        read_points(&path, source)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    if let Err(problem) = outcome {
        return Err(resolver.error_at(
            settings,
            &[DATA_PATH],
            ErrorKind::Data,
            format!("bad data file: {problem}"),
        ));
    }
    Ok(DataSpec::Points(Box::new(PointsData {
        path,
        x,
        y,
        window,
        holdout: super::keys::hold_out(settings),
        exposure: None,
    })))
}
