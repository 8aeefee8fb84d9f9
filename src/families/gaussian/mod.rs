//! The gaussian family (`model.family = "gaussian"`): the lecture notes' toy target, a
//! d-dimensional normal N(0, S) with unit variances and every pair of coordinates correlated
//! rho, S = (1 - rho) I + rho 1 1^T, sampled by systematic-scan Gibbs, random-scan Gibbs or
//! random-walk Metropolis-Hastings (`sampler.method`).
//!
//! Structure instead of matrices: the precision is Q = (I - c 1 1^T) / (1 - rho) with
//! c = rho / (1 + (d - 1) rho), so the full conditional of x_i is
//! N(c / (1 - c) * sum_{j != i} x_j, (1 - rho) / (1 - c)) and log p(x) = -(|x|^2 - c (sum x)^2)
//! / (2 (1 - rho)): every update costs O(1) with a running sum, and no d x d matrix is formed.
//!
//! One iteration is one sweep: d coordinate updates (systematic: in order; random: d
//! coordinates drawn uniformly), or one d-dimensional RWMH proposal. Chains start from an exact
//! draw of the target, so every kept state is stationary. The trace of x1 gives the ESS per
//! iteration and the autocorrelation; for the bivariate systematic scan the x1 chain is AR(1)
//! with coefficient rho^2, so the ESS per draw is exactly (1 - rho^2) / (1 + rho^2)
//! (`exact_ess_per_iteration`).

use polars::prelude::PolarsResult;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::{Family, Method, NamedTables, RunContext, StudyFamily};
use crate::diagnostics;
use crate::execute::tables::{ok_row, rows_of};
use crate::plan::Job;
use crate::report::{Context, Figure, FigureKind, ReportError};
use crate::sink::schema::{ACCEPTANCE_RATE, autocorrelation, jobs};
use crate::streams::{Purpose, StreamRng};
use crate::study::keys::*;
use crate::study::resolve::Resolver;
use crate::study::{ErrorKind, Settings, StudyError};

/// Lags of the saved autocorrelation of x1.
const LAGS: usize = 50;

/// The family.
pub struct GaussianTarget;

/// A gaussian job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianSpec {
    pub dimension: usize,
    pub correlation: f64,
    pub method: Method,
    pub proposal_sd: f64,
    pub iterations: u64,
    pub burn_in: u64,
    pub chains: usize,
}

impl GaussianSpec {
    /// c = rho / (1 + (d - 1) rho): the precision's off-diagonal weight.
    fn c(&self) -> f64 {
        self.correlation / (1.0 + (self.dimension as f64 - 1.0) * self.correlation)
    }

    /// The log density up to a constant at a state with squared norm `norm2` and sum `sum`.
    fn log_density(&self, norm2: f64, sum: f64) -> f64 {
        -(norm2 - self.c() * sum * sum) / (2.0 * (1.0 - self.correlation))
    }

    /// The exact ESS per draw of x1, where a closed form exists: bivariate systematic Gibbs.
    pub fn exact_ess_per_draw(&self) -> Option<f64> {
        let rho2 = self.correlation * self.correlation;
        (self.dimension == 2 && self.method == Method::SystematicGibbs)
            .then(|| (1.0 - rho2) / (1.0 + rho2))
    }
}

/// One chain's kept trace of x1, its final state and its acceptance count.
pub struct ChainRun {
    pub x1: Vec<f64>,
    pub last: Vec<f64>,
    pub accepted: u64,
}

/// An exact draw of N(0, S): sqrt(1 - rho) (z - mean(z) 1) + sqrt(1 + (d - 1) rho) mean(z) 1.
pub fn exact_draw(spec: &GaussianSpec, rng: &mut StreamRng) -> Vec<f64> {
    let d = spec.dimension as f64;
    let z: Vec<f64> = (0..spec.dimension)
        .map(|_| StandardNormal.sample(rng))
        .collect();
    let mean = z.iter().sum::<f64>() / d;
    let along = (1.0 + (d - 1.0) * spec.correlation).sqrt();
    let across = (1.0 - spec.correlation).sqrt();
    z.iter()
        .map(|zi| across * (zi - mean) + along * mean)
        .collect()
}

/// Runs one chain of `spec` from an exact draw, keeping x1 after burn-in.
pub fn run_chain(spec: &GaussianSpec, rng: &mut StreamRng) -> ChainRun {
    let start = exact_draw(spec, rng);
    run_chain_from(spec, start, rng)
}

/// Runs one chain of `spec` from `start`, keeping x1 after burn-in.
pub fn run_chain_from(spec: &GaussianSpec, start: Vec<f64>, rng: &mut StreamRng) -> ChainRun {
    let mut x = start;
    let mut sum: f64 = x.iter().sum();
    let c = spec.c();
    let conditional_sd = ((1.0 - spec.correlation) / (1.0 - c)).sqrt();
    let slope = c / (1.0 - c);
    let kept = spec.iterations.saturating_sub(spec.burn_in) as usize;
    let mut x1 = Vec::with_capacity(kept);
    let mut accepted = 0;
    let update = |x: &mut [f64], sum: &mut f64, i: usize, rng: &mut StreamRng| {
        let others = *sum - x[i];
        let z: f64 = StandardNormal.sample(rng);
        let new = slope * others + conditional_sd * z;
        *sum = others + new;
        x[i] = new;
    };
    let d = spec.dimension;
    let mut proposal = vec![0.0; d];
    for iteration in 0..spec.iterations {
        match spec.method {
            Method::SystematicGibbs => (0..d).for_each(|i| update(&mut x, &mut sum, i, rng)),
            Method::RandomGibbs => (0..d).for_each(|_| {
                let i = rng.random_range(0..d);
                update(&mut x, &mut sum, i, rng)
            }),
            Method::Rwmh => {
                let norm2: f64 = x.iter().map(|v| v * v).sum();
                for (p, xi) in proposal.iter_mut().zip(&x) {
                    let z: f64 = StandardNormal.sample(rng);
                    *p = xi + spec.proposal_sd * z;
                }
                let new_norm2: f64 = proposal.iter().map(|v| v * v).sum();
                let new_sum: f64 = proposal.iter().sum();
                let log_ratio = spec.log_density(new_norm2, new_sum) - spec.log_density(norm2, sum);
                let u: f64 = rng.random();
                if u.ln() < log_ratio {
                    x.copy_from_slice(&proposal);
                    sum = new_sum;
                    accepted += 1;
                }
            }
        }
        if iteration >= spec.burn_in {
            x1.push(x[0]);
        }
    }
    ChainRun {
        x1,
        last: x,
        accepted,
    }
}

/// What a gaussian job computed.
pub struct GaussianOutput {
    spec: GaussianSpec,
    chains: Vec<ChainRun>,
    sample_seconds: f64,
}

impl GaussianOutput {
    fn traces(&self) -> Vec<&[f64]> {
        self.chains.iter().map(|c| c.x1.as_slice()).collect()
    }

    /// Bulk ESS of x1 over all chains per kept iteration.
    fn ess_per_iteration(&self) -> Option<f64> {
        let kept: usize = self.chains.iter().map(|c| c.x1.len()).sum();
        diagnostics::ess_bulk(&self.traces()).map(|ess| ess / kept as f64)
    }

    /// Autocorrelation of x1 by lag, averaged over chains.
    fn autocorrelation(&self) -> Vec<f64> {
        let per_chain: Vec<Vec<f64>> = self
            .traces()
            .iter()
            .map(|x| diagnostics::autocorrelation(x, LAGS))
            .filter(|a| !a.is_empty())
            .collect();
        let lags = per_chain.iter().map(Vec::len).min().unwrap_or(0);
        (0..lags)
            .map(|k| per_chain.iter().map(|a| a[k]).sum::<f64>() / per_chain.len() as f64)
            .collect()
    }
}

impl StudyFamily for GaussianTarget {
    const FAMILY: Family = Family::Gaussian;
    type Spec = GaussianSpec;
    type Output = GaussianOutput;

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let dimension = settings.int(MODEL_DIMENSION) as usize;
        let correlation = settings.float(MODEL_CORRELATION);
        let lower = -1.0 / (dimension as f64 - 1.0);
        if !(correlation > lower && correlation < 1.0) {
            return Err(resolver
                .error_at(
                    settings,
                    &[MODEL_CORRELATION, MODEL_DIMENSION],
                    ErrorKind::OutOfRange,
                    format!(
                        "model.correlation = {correlation:?} does not give a positive-definite covariance in dimension {dimension}"
                    ),
                )
                .allowed(format!(
                    "a correlation strictly between -1 / (d - 1) = {lower:.4} and 1"
                )));
        }
        let (iterations, burn_in) = super::iterations_and_burn_in(settings, resolver)?;
        Ok(GaussianSpec {
            dimension,
            correlation,
            method: settings.choice(SAMPLER_METHOD, Method::from_name),
            proposal_sd: settings.float(SAMPLER_PROPOSAL_SD),
            iterations,
            burn_in,
            chains: settings.int(SAMPLER_CHAINS) as usize,
        })
    }

    fn label(spec: &Self::Spec) -> String {
        format!(
            "gaussian {} d={} rho={}",
            spec.method, spec.dimension, spec.correlation
        )
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.iterations * spec.chains as u64
    }

    fn run(job: &Job, spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let started = std::time::Instant::now();
        let chains = (0..spec.chains)
            .map(|c| {
                let mut rng = context.chain_stream(job, Purpose::Chain, &format!("chain={c}"));
                let run = run_chain(spec, &mut rng);
                context.report((c as u64 + 1) * spec.iterations);
                run
            })
            .collect();
        Ok(GaussianOutput {
            spec: spec.clone(),
            chains,
            sample_seconds: started.elapsed().as_secs_f64(),
        })
    }

    fn tables(job: &Job, output: &Self::Output, wall_seconds: f64) -> PolarsResult<NamedTables> {
        let spec = &output.spec;
        let acceptance = (spec.method == Method::Rwmh).then(|| {
            let accepted: u64 = output.chains.iter().map(|c| c.accepted).sum();
            accepted as f64 / (spec.iterations * spec.chains as u64) as f64
        });
        let acf = output.autocorrelation();
        let iterations = (spec.iterations * spec.chains as u64) as f64;
        let jobs_row = ok_row(job, &[], wall_seconds)
            .fill(ACCEPTANCE_RATE, acceptance)
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(
                jobs::ITERATIONS_PER_SECOND,
                iterations / output.sample_seconds,
            )
            .fill(jobs::ESS_PER_ITERATION, output.ess_per_iteration())
            .fill(jobs::EXACT_ESS_PER_ITERATION, spec.exact_ess_per_draw())
            .fill(jobs::AUTOCORRELATION_LAG1, acf.get(1).copied())
            .finish()?;
        let acf_rows = rows_of(&autocorrelation::TABLE, job, acf.len())
            .set(
                autocorrelation::LAG,
                (0..acf.len() as i64).collect::<Vec<_>>(),
            )
            .set(autocorrelation::AUTOCORRELATION, acf)
            .finish()?;
        Ok(vec![("jobs", jobs_row), ("autocorrelation", acf_rows)])
    }

    fn figures(
        context: &Context<'_>,
        _results_dir: &std::path::Path,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<Figure>, ReportError> {
        ess_figure(context).map(|f| f.into_iter().collect())
    }
}

/// ESS per iteration of x1 against rho, one curve per method and dimension, with the bivariate
/// systematic-scan formula dashed.
fn ess_figure(context: &Context<'_>) -> Result<Option<Figure>, ReportError> {
    let table = context.jobs_table();
    let (Some(families), Some(rho), Some(ess), Some(method), Some(dimension)) = (
        table.text(MODEL_FAMILY),
        table.num(MODEL_CORRELATION),
        table.num(jobs::ESS_PER_ITERATION),
        table.text(SAMPLER_METHOD),
        table.num(MODEL_DIMENSION),
    ) else {
        return Ok(None);
    };
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for row in 0..table.height {
        if families[row].as_deref() != Some(Family::Gaussian.name()) {
            continue;
        }
        let (Some(r), Some(e), Some(m), Some(d)) =
            (rho[row], ess[row], &method[row], dimension[row])
        else {
            continue;
        };
        let label = format!("{m}, d = {d}");
        match curves.iter_mut().find(|(l, _)| *l == label) {
            Some((_, points)) => points.push((r, e)),
            None => curves.push((label, vec![(r, e)])),
        }
    }
    if curves.is_empty() {
        return Ok(None);
    }
    for (_, points) in &mut curves {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (lo, hi) = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| {
            (a.min(r), b.max(r))
        });
    let formula: Vec<(f64, f64)> = (0..=100)
        .map(|k| lo + (hi - lo) * k as f64 / 100.0)
        .map(|r| (r, (1.0 - r * r) / (1.0 + r * r)))
        .collect();
    let file = "gaussian-ess.png";
    let drawn = super::figures::Curves {
        title: "Gaussian target: ESS per iteration of x1".into(),
        x_title: "correlation rho".into(),
        y_title: "ESS per iteration".into(),
        log_x: false,
        log_y: true,
        curves,
        references: vec![(
            "(1 - rho^2) / (1 + rho^2): bivariate systematic Gibbs".into(),
            formula,
        )],
    }
    .draw(&context.path(file))?;
    Ok(drawn.then(|| Figure {
        file: file.into(),
        title: "Gaussian target: ESS per iteration against correlation".into(),
        caption: "Bulk effective sample size of x1 per iteration (one iteration = one sweep of d \
                  coordinate updates, or one RWMH proposal), pooled over chains, against the \
                  correlation rho; one curve per method and dimension. The dashed curve is the \
                  exact value for systematic-scan Gibbs on a bivariate normal, whose x1 chain is \
                  AR(1) with coefficient rho^2. Gibbs slows down as the coordinates become \
                  strongly correlated: the notes' warning about Gibbs on correlated targets."
            .into(),
        kind: FigureKind::Family,
    }))
}
