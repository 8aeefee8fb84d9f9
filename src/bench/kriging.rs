//! `fieldmc bench kriging`: how far observing the field at scattered sites through the grid
//! ([`SiteOperator`]: bilinear between cell centres) is from exact kriging, against the grid's
//! size. The sites of a CSV are split into fitted ones and held-out ones (every k-th row); the
//! field is predicted at the held-out sites and at a lattice over the window, once densely with
//! the kernel between the sites (exact) and once with the covariance the grid gives them
//! (H C H^T: fieldmc's posterior when its sampler is exact), with the hyperparameters, the noise
//! sd and the mean fixed. One row per grid size: the largest and the root mean square error of
//! the posterior mean in exact posterior sds, and the largest relative error of the sd.

use std::path::Path;

use crate::families::latent_field::sites_csv::{self, Sites, SitesSource};
use crate::model::LikelihoodKind;
use crate::model::grid::{Grid, Window};
use crate::model::prior::prior_for;
use crate::model::sites::kriging::{self, KrigingError, Problem};
use crate::model::spec::KernelSpec;
use crate::study::csv::CsvError;

/// What one comparison fixes besides the data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KrigingSettings {
    pub(crate) kernel: KernelSpec,
    pub(crate) noise_sd: f64,
    pub(crate) window: Window,
    /// Every `holdout_every`-th site (from the first) is held out and predicted.
    pub(crate) holdout_every: usize,
    /// A `lattice` x `lattice` lattice of points over the window, edges included, is predicted.
    pub(crate) lattice: usize,
}

/// One grid size's error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KrigingRow {
    pub(crate) side: usize,
    /// The length scale over the larger cell spacing.
    pub(crate) cells_per_length_scale: f64,
    pub(crate) fitted: usize,
    pub(crate) predicted: usize,
    pub(crate) error: KrigingError,
}

/// The measurements of a sites file (columns `x`, `y` and `value`), read as a gaussian sites
/// study reads them ([`sites_csv::read_sites`]: finite numbers, located errors), anywhere in
/// the plane (the window is checked against them afterwards).
pub(crate) fn read_measurements(path: &Path, value: &str) -> Result<Sites, CsvError> {
    let everywhere = Window {
        x: (f64::NEG_INFINITY, f64::INFINITY),
        y: (f64::NEG_INFINITY, f64::INFINITY),
    };
    let source = SitesSource {
        x: "x",
        y: "y",
        value,
        trials: None,
        likelihood: LikelihoodKind::Gaussian,
        window: everywhere,
        region: None,
    };
    sites_csv::read_sites(path, source)
}

/// The error of the grid's kriging at each side in `sides`.
pub(crate) fn compare(
    data: &Sites,
    settings: &KrigingSettings,
    sides: &[usize],
) -> Result<Vec<KrigingRow>, String> {
    let (mut fitted, mut values, mut predict) = (Vec::new(), Vec::new(), Vec::new());
    for (k, (&site, &value)) in data.positions.iter().zip(&data.values).enumerate() {
        if k % settings.holdout_every.max(1) == 0 {
            predict.push(site);
        } else {
            fitted.push(site);
            values.push(value);
        }
    }
    predict.extend(lattice(&settings.window, settings.lattice));
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    let problem = Problem {
        fitted: &fitted,
        values: &values,
        noise_sd: settings.noise_sd,
        mean,
        predict: &predict,
    };
    let exact = kriging::exact(settings.kernel, &problem)
        .ok_or("exact kriging: the sites' covariance is not positive definite")?;
    sides
        .iter()
        .map(|&side| {
            let grid = Grid::over_window(side, side, settings.window);
            let prior = prior_for(grid, settings.kernel).map_err(|e| e.to_string())?;
            let on_grid = kriging::on_grid(&grid, prior.as_ref(), &problem)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| {
                    format!("D = {side}: the grid's covariance is not positive definite")
                })?;
            let (hx, hy) = grid.spacing();
            Ok(KrigingRow {
                side,
                cells_per_length_scale: settings.kernel.length_scale / hx.max(hy),
                fitted: fitted.len(),
                predicted: predict.len(),
                error: kriging::error(&on_grid, &exact),
            })
        })
        .collect()
}

/// `count` x `count` points over the window, its edges included.
fn lattice(window: &Window, count: usize) -> Vec<(f64, f64)> {
    let at = |(lo, hi): (f64, f64), k: usize| lo + (hi - lo) * k as f64 / (count - 1).max(1) as f64;
    (0..count * count)
        .map(|k| (at(window.x, k % count), at(window.y, k / count)))
        .collect()
}
