//! `model.region` resolved for one sweep point: the region file read once per study (its
//! located errors from [`super::region_csv`]), the window it gives by default (its bounding
//! box), and on the point's grid each cell's share inside it, computed once per file and grid.
//! Refuses, each located at the key in the study file and naming the region file: a file that
//! cannot be read or is not a region, a 1-D grid, a region that misses the window entirely.

use std::path::PathBuf;
use std::sync::Arc;

use super::keys::{DATA_SOURCE, MODEL_GRID, MODEL_REGION, MODEL_WINDOW};
use super::region_csv::read_region;
use super::spec::StudyRegion;
use crate::model::DataSource;
use crate::model::grid::Grid;
use crate::model::region::Region;
use crate::study::error::ErrorKind;
use crate::study::shape::{self, GridShape};
use crate::study::{Resolver, Settings, StudyError};

/// The region file of a point, read: its absolute path and its region.
#[derive(Debug, Clone)]
pub(super) struct RegionFile {
    pub(super) path: PathBuf,
    pub(super) region: Arc<Region>,
}

/// `model.region` of a point, read (once per file for the whole study); None when not given.
pub(super) fn region_file(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
) -> Result<Option<RegionFile>, StudyError> {
    let Some(given) = settings.given(MODEL_REGION) else {
        return Ok(None);
    };
    if shape.is_line() {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_REGION, MODEL_GRID],
                ErrorKind::Conflict,
                format!(
                    "model.region is a region of the plane, but the grid is {}",
                    shape.describe()
                ),
            )
            .allowed("a 2-D grid: D or [Dx, Dy]"));
    }
    let path = resolver.study_dir().join(given.value.to_string());
    let cache_key = format!("region {path:?}");
    let read = resolver.cached(cache_key, || {
        read_region(&path)
            .map(Arc::new)
            .map_err(|error| error.to_string())
    });
    match read {
        Ok(region) => Ok(Some(RegionFile { path, region })),
        Err(problem) => Err(resolver.error_at(
            settings,
            &[MODEL_REGION],
            ErrorKind::Data,
            format!("bad region file: {problem}"),
        )),
    }
}

/// The region on the point's grid: refused when it misses the grid's window entirely; each
/// cell's share inside it computed once per file and grid.
pub(super) fn on_grid(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    file: RegionFile,
    grid: &Grid,
) -> Result<StudyRegion, StudyError> {
    let window = grid.window();
    let RegionFile { path, region } = file;
    if region.misses(window) {
        let b = region.bounding_box();
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_WINDOW, MODEL_REGION],
                ErrorKind::Conflict,
                format!(
                    "the region in {} (bounding box {}) misses the grid's window {} entirely: no \
                     cell has any of its area",
                    path.display(),
                    shape::window_text(&b, false),
                    shape::window_text(&window, false)
                ),
            )
            .help(
                "give model.window in the region's units (or leave it out: it defaults to the \
                 region's bounding box)",
            ));
    }
    let (nx, ny) = (grid.nx(), grid.ny());
    let cache_key = format!("region fractions {path:?} {window:?} {nx} {ny}");
    let inside_fraction: Arc<[f64]> =
        resolver.cached(cache_key, || region.inside_fractions(window, nx, ny).into());
    Ok(StudyRegion {
        path,
        region,
        inside_fraction,
    })
}

/// A region on simulated data is refused: the simulated observations cover the whole window
/// (checked after the region file and its fit to the window, whose errors come first).
pub(super) fn check_region_source(
    resolver: &Resolver<'_>,
    settings: &Settings,
    source: DataSource,
) -> Result<(), StudyError> {
    if settings.given(MODEL_REGION).is_none() || source != DataSource::Simulated {
        return Ok(());
    }
    Err(resolver
        .error_at(
            settings,
            &[MODEL_REGION, DATA_SOURCE],
            ErrorKind::Conflict,
            "model.region restricts real data to a study region, but data.source = \"simulated\"",
        )
        .help("remove model.region, or read real data (source = \"csv\" or \"points\")"))
}
