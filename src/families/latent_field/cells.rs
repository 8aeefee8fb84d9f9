//! Per-cell convergence diagnostics of a run: rank-normalised split R-hat, bulk and tail ESS and
//! the MCSE of the mean of every cell, from the stored kept draws of every chain (all kept
//! iterations, or every k-th where the driver's storage limit thinned them; see
//! [`crate::sampler::DrawSettings`]), and the thinned field draws a study asked to keep.

use rayon::prelude::*;

use crate::diagnostics;
use crate::sampler::RunOutput;

/// The diagnostics of every cell, `None` where undefined (see [`crate::diagnostics`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CellDiagnostics {
    pub(crate) ess_bulk: Vec<Option<f64>>,
    pub(crate) ess_tail: Vec<Option<f64>>,
    pub(crate) rhat: Vec<Option<f64>>,
    pub(crate) mcse_mean: Vec<Option<f64>>,
    /// Stored draws per chain they were computed from, and the thinning of the kept iterations.
    pub(crate) draws_per_chain: usize,
    pub(crate) thin: u64,
    /// Chains the draws came from (0 for an approximation).
    pub(crate) chains: usize,
}

impl CellDiagnostics {
    /// Diagnose every cell of `run`. A run without chains (an approximation) has a row per cell
    /// all the same, every diagnostic undefined.
    pub(crate) fn of(run: &RunOutput) -> Self {
        let Some(first) = run.chains.first() else {
            let undefined = vec![None; run.post_mean.len()];
            return Self {
                ess_bulk: undefined.clone(),
                ess_tail: undefined.clone(),
                rhat: undefined.clone(),
                mcse_mean: undefined,
                ..Self::default()
            };
        };
        let cells = first.draws.cells;
        let draws_per_chain = run.chains.iter().map(|c| c.draws.len()).min().unwrap_or(0);
        let mut out = Self {
            draws_per_chain,
            thin: first.draws.thin,
            chains: run.chains.len(),
            ..Self::default()
        };
        // Cells are independent, so they may share the job's thread with idle rayon workers;
        // each cell's numbers do not depend on which thread computed them.
        let summaries: Vec<diagnostics::Summary> = (0..cells)
            .into_par_iter()
            .map(|cell| {
                let series = cell_series(run, cell, draws_per_chain);
                let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
                diagnostics::summarize(&views)
            })
            .collect();
        for summary in summaries {
            out.ess_bulk.push(summary.ess_bulk);
            out.ess_tail.push(summary.ess_tail);
            out.rhat.push(summary.rhat);
            out.mcse_mean.push(summary.mcse_mean);
        }
        out
    }

    /// The smallest bulk ESS over cells (None if any cell's is undefined).
    pub(crate) fn min_ess_bulk(&self) -> Option<f64> {
        min_over(&self.ess_bulk)
    }

    pub(crate) fn min_ess_tail(&self) -> Option<f64> {
        min_over(&self.ess_tail)
    }

    /// The largest R-hat over cells: `None` with fewer than two chains; infinite where some
    /// cell's R-hat is undefined (its draws are constant over every chain, or too few), as
    /// ArviZ reports it: such a cell has not been shown to converge.
    pub(crate) fn max_rhat(&self) -> Option<f64> {
        if self.chains < 2 {
            return None;
        }
        self.rhat
            .iter()
            .map(|r| r.unwrap_or(f64::INFINITY))
            .reduce(f64::max)
    }

    /// The cells whose R-hat is undefined though two or more chains ran.
    pub(crate) fn undefined_rhat_cells(&self) -> Vec<usize> {
        if self.chains < 2 {
            return Vec::new();
        }
        (0..self.rhat.len())
            .filter(|&cell| self.rhat[cell].is_none())
            .collect()
    }
}

fn min_over(values: &[Option<f64>]) -> Option<f64> {
    let values: Option<Vec<f64>> = values.iter().copied().collect();
    values?.into_iter().reduce(f64::min)
}

/// One cell's stored draws, a series per chain, each cut to `per_chain` draws (the shortest
/// chain's count, so the chains line up for R-hat and ESS).
pub(crate) fn cell_series(run: &RunOutput, cell: usize, per_chain: usize) -> Vec<Vec<f64>> {
    run.chains
        .iter()
        .map(|chain| {
            let draws = &chain.draws;
            (0..per_chain)
                .map(|d| f64::from(draws.values[d * draws.cells + cell]))
                .collect()
        })
        .collect()
}

/// Which of a chain's `available` stored draws `output.field_draws = per_chain` keeps: `per_chain`
/// (or all, if fewer) evenly spaced indices, ending at the last stored draw.
pub(crate) fn kept_draw_indices(available: usize, per_chain: usize) -> impl Iterator<Item = usize> {
    let count = per_chain.min(available);
    (0..count).map(move |k| (k + 1) * available / count - 1)
}
