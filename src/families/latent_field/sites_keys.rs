//! `data.source = "sites"` resolved for one sweep point: a 2-D grid, the study window
//! (`model.window`, else the bounding box of `model.region`, else of the sites), and the sites
//! file read once per file, columns, window and region to check every row (located errors from
//! [`super::sites_csv`]); and `output.predict_sites`, the sites to predict at, read once per file
//! and window; and the grid a sites study gets when it gives no `model.grid`
//! ([`default_sites_shape`]).

use std::sync::Arc;

use super::binomial_keys::trials_column;
use super::keys::{
    DATA_PATH, DATA_SOURCE, DATA_VALUE, DATA_X, DATA_Y, MODEL_GRID, OUTPUT_PREDICT_SITES,
};
use super::points_keys::{plane_window, refuse_line_grid};
use super::region_keys::RegionFile;
use super::sites_csv::{SitesSource, read_predict_sites, read_sites};
use super::spec::PredictFile;
use crate::model::grid::Grid;
use crate::model::grid::Window;
use crate::model::hyper::HyperPrior;
use crate::model::sites::{bounding_window, recommended_side};
use crate::model::spec::SitesData;
use crate::model::{DataSpec, LikelihoodKind};
use crate::study::error::ErrorKind;
use crate::study::shape::GridShape;
use crate::study::{Resolver, Settings, StudyError};

/// The sites data of a point, the file read (once per file, columns, window and region) to check
/// every row, and the window its grid tiles.
pub(super) fn sites_data(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
    likelihood: LikelihoodKind,
    region: Option<&RegionFile>,
) -> Result<(DataSpec, Window), StudyError> {
    let Some(written) = settings.given(DATA_PATH).map(|s| s.value.to_string()) else {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_SOURCE],
                ErrorKind::Conflict,
                "data.source = \"sites\" needs data.path",
            )
            .help(
                "add path = \"data/your_sites.csv\" under [data] (a CSV with one row per \
                 measurement: x, y and its value, relative to the study file's folder)",
            ));
    };
    refuse_line_grid(
        resolver,
        settings,
        shape,
        "data.source = \"sites\" places measurements",
    )?;
    let given_window = match plane_window(resolver, settings, "sites")? {
        Some(window) => Some(window),
        None => region.map(|r| r.region.bounding_box()),
    };
    let path = resolver.study_dir().join(&written);
    let (x, y, value) = (
        settings.text(DATA_X),
        settings.text(DATA_Y),
        settings.text(DATA_VALUE),
    );
    let trials = trials_column(settings, likelihood);
    // Without a window the sites' own bounding box is the window: read them with an unbounded
    // one first.
    let everywhere = Window {
        x: (f64::NEG_INFINITY, f64::INFINITY),
        y: (f64::NEG_INFINITY, f64::INFINITY),
    };
    let window = given_window.unwrap_or(everywhere);
    let region_path = region.map(|r| r.path.as_path());
    let cache_key = format!(
        "sites {path:?} {x:?} {y:?} {value:?} {trials:?} {likelihood} {window:?} {region_path:?}"
    );
    let source = SitesSource {
        x: &x,
        y: &y,
        value: &value,
        trials: trials.as_deref(),
        likelihood,
        window,
        region: region.map(|r| (r.region.as_ref(), r.path.as_path())),
    };
    let outcome = resolver.cached(cache_key, || {
        read_sites(&path, source)
            .map(|sites| bounding_window(&sites.positions))
            .map_err(|e| e.to_string())
    });
    let window = match outcome {
        Ok(bounds) => given_window.unwrap_or(bounds),
        Err(problem) => {
            return Err(resolver.error_at(
                settings,
                &[DATA_PATH],
                ErrorKind::Data,
                format!("bad data file: {problem}"),
            ));
        }
    };
    if !(window.x.1 > window.x.0 && window.y.1 > window.y.0) {
        return Err(resolver
            .error_at(
                settings,
                &[DATA_PATH],
                ErrorKind::Conflict,
                format!(
                    "the sites of {} span [{}, {}] x [{}, {}]: with no model.window, their \
                     bounding box is the window, and it has no area",
                    path.display(),
                    window.x.0,
                    window.x.1,
                    window.y.0,
                    window.y.1
                ),
            )
            .help("give model.window = [[x0, x1], [y0, y1]] in the sites' units"));
    }
    let data = SitesData {
        path,
        x,
        y,
        value,
        trials,
        window,
        holdout: super::keys::hold_out(settings),
    };
    Ok((DataSpec::Sites(Box::new(data)), window))
}

/// The sites `output.predict_sites` names, read on the point's grid (each in its window); None
/// when not given.
pub(super) fn predict_sites(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
    grid: &Grid,
) -> Result<Option<Arc<PredictFile>>, StudyError> {
    let Some(given) = settings.given(OUTPUT_PREDICT_SITES) else {
        return Ok(None);
    };
    if shape.is_line() {
        return Err(resolver
            .error_at(
                settings,
                &[OUTPUT_PREDICT_SITES, MODEL_GRID],
                ErrorKind::Conflict,
                format!(
                    "output.predict_sites predicts at points of the plane, but the grid is {}",
                    shape.describe()
                ),
            )
            .allowed("a 2-D grid: D or [Dx, Dy]"));
    }
    let path = resolver.study_dir().join(given.value.to_string());
    let window = grid.window();
    let cache_key = format!("predict sites {path:?} {window:?}");
    let read = resolver.cached(cache_key, || {
        read_predict_sites(&path, window)
            .map(|sites| {
                Arc::new(PredictFile {
                    path: path.clone(),
                    sites,
                })
            })
            .map_err(|e| e.to_string())
    });
    read.map(Some).map_err(|problem| {
        resolver.error_at(
            settings,
            &[OUTPUT_PREDICT_SITES],
            ErrorKind::Data,
            format!("bad predict-sites file: {problem}"),
        )
    })
}

/// The largest side the default grid of a sites study takes (256 x 256 cells ran 100,000 sites
/// in a gigabyte, bench/results/sites_scale.md); a study that needs more gives `model.grid`.
pub(crate) const MAX_DEFAULT_SIDE: usize = 256;
/// The smallest side of the default grid (the grid of every other source's default).
pub(crate) const MIN_DEFAULT_SIDE: usize = 16;

/// z of the 5th percentile of a standard normal.
const LOWER_QUANTILE_Z: f64 = 1.645;

/// The grid of a sites study without `model.grid`: along each axis of `window` the side that
/// puts [`crate::model::sites::CELLS_PER_LENGTH_SCALE`] cells in `length_scale`, the smallest
/// the model will use (an inferred one's prior's 5th percentile, when that is smaller: exact for
/// a log-normal prior), within [`MIN_DEFAULT_SIDE`] and [`MAX_DEFAULT_SIDE`].
pub(crate) fn default_sites_shape(
    window: &Window,
    length_scale: f64,
    prior: Option<&HyperPrior>,
) -> GridShape {
    let lower = prior.map_or(f64::INFINITY, |prior| {
        prior.sds_from_median(-LOWER_QUANTILE_Z)
    });
    let smallest = if lower.is_finite() && lower > 0.0 {
        length_scale.min(lower)
    } else {
        length_scale
    };
    let side =
        |extent: f64| recommended_side(extent, smallest).clamp(MIN_DEFAULT_SIDE, MAX_DEFAULT_SIDE);
    let (nx, ny) = (side(window.x.1 - window.x.0), side(window.y.1 - window.y.0));
    if nx == ny {
        GridShape::Square(nx)
    } else {
        GridShape::Rectangle(nx, ny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 12 cells in the length scale along each axis (topo's 6.3 x 6.2 window, l = 1.2: 63 x 62),
    /// the prior's 5th percentile when it is smaller, and the bounds.
    #[test]
    fn the_default_grid_puts_twelve_cells_in_the_smallest_length_scale() {
        let topo = Window {
            x: (0.0, 6.3),
            y: (0.0, 6.2),
        };
        assert_eq!(
            default_sites_shape(&topo, 1.2, None),
            GridShape::Rectangle(63, 62)
        );
        // log-normal(0, 0.5): 5th percentile exp(-0.8225) = 0.439; 12 x 6.3 / 0.439 = 172.1.
        let prior = HyperPrior::parse("log-normal(0, 0.5)").unwrap();
        assert_eq!(
            default_sites_shape(&topo, 1.2, Some(&prior)),
            GridShape::Rectangle(173, 170)
        );
        let unit = Window {
            x: (0.0, 1.0),
            y: (0.0, 1.0),
        };
        assert_eq!(default_sites_shape(&unit, 0.5, None), GridShape::Square(24));
        assert_eq!(default_sites_shape(&unit, 2.0, None), GridShape::Square(16));
        assert_eq!(
            default_sites_shape(&unit, 0.01, None),
            GridShape::Square(256)
        );
    }
}
