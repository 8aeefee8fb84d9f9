//! Simulation-based calibration jobs (`[study] kind = "sbc"`): each job is one replication — a
//! truth drawn from the model's own prior, data simulated from it, the chains run, and the rank
//! of the truth among L posterior draws recorded for a few scalar functionals (the probe cells
//! and the field's mean). Over replications the ranks of a correct sampler are uniform.

use polars::prelude::{Column, DataFrame, NamedFrom, PolarsResult, Series};

use super::job::{JobError, chain_streams, simulate_from_model_prior};
use crate::diagnostics;
use crate::diagnostics::calibration::{rank_of, spaced_draws, spacing_from_ess};
use crate::model::{Grid, KroneckerPrior, Likelihood};
use crate::plan::Job;
use crate::sampler::kernel::{Kernel, Target};
use crate::sampler::run::{PROBES, RunOutput, RunRequest, Trace, probe_cells, run};

/// The functionals ranked, in table order.
pub const FUNCTIONALS: [&str; PROBES + 1] = [
    "probe_0",
    "probe_1",
    "probe_2",
    "probe_3",
    "probe_4",
    "field_mean",
];

/// One replication's ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// (functional, rank in 0..=draws, draws used).
    pub ranks: Vec<(&'static str, usize, usize)>,
    pub acceptance_rate: f64,
    pub sample_seconds: f64,
}

/// Run one SBC replication of `job` with `draws` posterior draws per functional. `kernel`
/// is normally `Kernel::new(kind, beta)`; tests pass deliberately wrong kernels.
pub fn calibrate(job: &Job, seed: u64, draws: usize, kernel: Kernel) -> Result<Calibration, JobError> {
    let grid = Grid::new(job.model.grid);
    let prior = KroneckerPrior::new(grid, job.model.kernel)?;
    let dataset = simulate_from_model_prior(job, seed, &prior)?;
    let model = &job.model;
    let likelihood = Likelihood::new(
        model.likelihood,
        dataset.observed.values.clone(),
        model.noise_sd,
        model.offset,
    );
    let mut spec = job.sampler.clone();
    spec.thin = 1;
    let request = RunRequest {
        target: Target {
            prior: &prior,
            likelihood: &likelihood,
            observed_cells: &dataset.observed.cells,
        },
        kernel,
        spec: &spec,
        functional: None,
        exact_mean: None,
        progress: None,
    };
    let output = run(&request, chain_streams(job, seed));
    let truth = dataset.truth.as_deref().expect("simulated data have a truth");
    Ok(Calibration {
        ranks: rank_functionals(&output, truth, grid.side(), draws),
        acceptance_rate: output.acceptance_rate,
        sample_seconds: output.sample_seconds,
    })
}

fn functional_values(trace: &Trace, index: usize) -> Vec<f64> {
    if index < PROBES {
        trace.probes.iter().map(|row| row[index]).collect()
    } else {
        trace.field_mean.clone()
    }
}

fn rank_functionals(
    output: &RunOutput,
    truth: &[f64],
    side: usize,
    draws: usize,
) -> Vec<(&'static str, usize, usize)> {
    let probes = probe_cells(side);
    let truth_mean = truth.iter().sum::<f64>() / truth.len() as f64;
    let chains = output.chains.len();
    FUNCTIONALS
        .iter()
        .enumerate()
        .map(|(index, &name)| {
            let series: Vec<Vec<f64>> = output
                .chains
                .iter()
                .map(|c| functional_values(&c.trace, index))
                .collect();
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            let total: usize = series.iter().map(Vec::len).sum();
            let spacing = spacing_from_ess(total, diagnostics::ess_bulk(&views));
            let per_chain = draws.div_ceil(chains);
            let mut sample: Vec<f64> = series
                .iter()
                .flat_map(|s| spaced_draws(s, per_chain, spacing))
                .collect();
            sample.truncate(draws);
            let truth_value = if index < PROBES {
                truth[probes[index]]
            } else {
                truth_mean
            };
            (name, rank_of(truth_value, &sample), sample.len())
        })
        .collect()
}

/// The ranks table rows of one replication.
pub fn ranks_table(job: &Job, calibration: &Calibration) -> PolarsResult<DataFrame> {
    let rows = calibration.ranks.len();
    let columns: Vec<Column> = vec![
        Series::new("job_id".into(), vec![job.id.clone(); rows]).into(),
        Series::new("replication".into(), vec![i64::from(job.replicate); rows]).into(),
        Series::new(
            "functional".into(),
            calibration
                .ranks
                .iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>(),
        )
        .into(),
        Series::new(
            "rank".into(),
            calibration.ranks.iter().map(|r| r.1 as i64).collect::<Vec<_>>(),
        )
        .into(),
        Series::new(
            "draws".into(),
            calibration.ranks.iter().map(|r| r.2 as i64).collect::<Vec<_>>(),
        )
        .into(),
    ];
    DataFrame::new(rows, columns)
}
