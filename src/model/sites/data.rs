//! Measurements at sites as a job holds them: split into the fitted ones and the held-out ones
//! (`data.holdout`: the seeded draw of [`crate::model::data::Dataset::from_sites`], the same as a
//! grid's held-out cells), each set with the operator that reads the field at its sites.

use super::{SiteError, SiteOperator};
use crate::model::grid::Grid;

/// Measurements as read: one per row of the sites file, in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurements {
    /// Each measurement's site (x, y).
    pub positions: Vec<(f64, f64)>,
    /// Each measurement (probit labels as -1.0 / +1.0).
    pub values: Vec<f64>,
    /// Binomial: each measurement's trials; empty for the other likelihoods.
    pub trials: Vec<f64>,
}

/// Some of the measurements, with the operator that reads the field at their sites.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteSet {
    /// Each measurement's row in the sites file, from 0 (its data row, the header not counted).
    pub(crate) rows: Vec<usize>,
    pub(crate) positions: Vec<(f64, f64)>,
    pub(crate) values: Vec<f64>,
    /// Binomial: the trials of each measurement; empty for the other likelihoods.
    pub(crate) trials: Vec<f64>,
    /// H: the field at each site.
    pub(crate) operator: SiteOperator,
}

impl SiteSet {
    /// The measurements of `rows` (in that order) on `grid`.
    fn of_rows(grid: &Grid, all: &Measurements, rows: Vec<usize>) -> Result<Self, SiteError> {
        let positions: Vec<(f64, f64)> = rows.iter().map(|&r| all.positions[r]).collect();
        let operator = SiteOperator::bilinear(grid, &positions)?;
        Ok(Self {
            values: rows.iter().map(|&r| all.values[r]).collect(),
            trials: if all.trials.is_empty() {
                Vec::new()
            } else {
                rows.iter().map(|&r| all.trials[r]).collect()
            },
            positions,
            rows,
            operator,
        })
    }

    /// M: the measurements.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// A job's measurements at sites: the fitted ones and the held-out ones.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteData {
    pub(crate) fitted: SiteSet,
    pub(crate) held_out: SiteSet,
}

impl SiteData {
    /// `all` on `grid`, the measurements whose `held[r]` is true held out.
    pub(crate) fn split(grid: &Grid, all: &Measurements, held: &[bool]) -> Result<Self, SiteError> {
        let rows =
            |keep: bool| -> Vec<usize> { (0..held.len()).filter(|&r| held[r] == keep).collect() };
        Ok(Self {
            fitted: SiteSet::of_rows(grid, all, rows(false))?,
            held_out: SiteSet::of_rows(grid, all, rows(true))?,
        })
    }
}
