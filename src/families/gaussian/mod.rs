//! The gaussian family (`model.family = "gaussian"`): a d-dimensional normal target N(m, S)
//! sampled by systematic-scan Gibbs, random-scan Gibbs or random-walk Metropolis-Hastings
//! (`sampler.kind`). The covariance is either the lecture notes' toy, unit variances with
//! every pair of coordinates correlated rho (`model.dimension`, `model.correlation`), or given
//! in full (`model.covariance`, checked square, symmetric and positive definite); the mean is
//! `model.mean_vector` (zeros by default). [`target`] owns the covariance and what the samplers
//! need of it; this module owns the chains, the job and its tables and figure.
//!
//! One iteration is one sweep: d coordinate updates (systematic: in order; random: d
//! coordinates drawn uniformly), or one d-dimensional RWMH proposal. Chains start from an exact
//! draw of the target, so every kept state is stationary. The trace of x1 gives the ESS per
//! iteration and the autocorrelation; for a bivariate target the systematic-scan x1 chain is
//! AR(1) with coefficient rho^2 (rho the correlation of x1 and x2), so the ESS per draw is
//! exactly (1 - rho^2) / (1 + rho^2) (`exact_ess_per_iteration`).

pub(crate) mod keys;
pub mod moments;
pub(crate) mod schema;
pub mod target;

/// The family's word in `model.family`.
pub const NAME: &str = "gaussian";

use polars::prelude::PolarsResult;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::common::Method;
use crate::diagnostics;
use crate::figures::{Context, Figure, FigureKind, ReportColumns, ReportError};
use crate::job::{Finished, NamedTables, RunContext, StudyFamily};
use crate::streams::{Purpose, StreamRng};
use crate::study::Resolver;
use crate::study::keys::*;
use crate::study::{ErrorKind, ParamValue, Settings, StudyError, parse_numbers, parse_rows};
use crate::table::Table;
use crate::table::shared::ACCEPTANCE_RATE;
use crate::table::shared::autocorrelation_rows;
use keys::*;
use schema::jobs;
use target::{Conditionals, DenseCovariance, Structure};

/// Lags of the saved autocorrelation of x1.
const LAGS: usize = 50;

/// The family.
pub struct GaussianTarget;

/// A gaussian job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianSpec {
    /// The covariance S.
    pub structure: Structure,
    /// The mean m, one entry per coordinate.
    pub mean: Vec<f64>,
    pub method: Method,
    pub proposal_sd: f64,
    pub iterations: u64,
    pub burn_in: u64,
    pub chains: usize,
}

impl GaussianSpec {
    /// The notes' toy target: N(0, S), S = (1 - rho) I + rho 1 1^T.
    pub fn equicorrelated(dimension: usize, correlation: f64, method: Method) -> Self {
        GaussianSpec {
            structure: Structure::Equicorrelated {
                dimension,
                correlation,
            },
            mean: vec![0.0; dimension],
            method,
            proposal_sd: 1.0,
            iterations: 10_000,
            burn_in: 0,
            chains: 1,
        }
    }

    /// The dimension d.
    pub(crate) fn dimension(&self) -> usize {
        self.structure.dimension()
    }

    /// The exact ESS per draw of x1, where a closed form exists: bivariate systematic Gibbs.
    pub(crate) fn exact_ess_per_draw(&self) -> Option<f64> {
        let rho = self.structure.bivariate_correlation()?;
        let rho2 = rho * rho;
        (self.method == Method::SystematicGibbs).then(|| (1.0 - rho2) / (1.0 + rho2))
    }
}

/// One chain's kept traces, its final state and its acceptance count.
pub struct ChainRun {
    /// The kept trace of x1.
    pub x1: Vec<f64>,
    /// The kept trace of every coordinate, up to [`moments::MAX_DIMENSION`] (else empty).
    pub states: Vec<Vec<f64>>,
    pub last: Vec<f64>,
    pub accepted: u64,
}

/// An exact draw of the target N(m, S).
pub fn exact_draw(spec: &GaussianSpec, rng: &mut StreamRng) -> Vec<f64> {
    let mut x = spec.structure.exact_draw(rng);
    x.iter_mut().zip(&spec.mean).for_each(|(x, m)| *x += m);
    x
}

/// Runs one chain of `spec` from an exact draw, keeping x1 after burn-in.
pub fn run_chain(spec: &GaussianSpec, rng: &mut StreamRng) -> ChainRun {
    let start = exact_draw(spec, rng);
    run_chain_from(spec, start, rng)
}

/// Runs one chain of `spec` from `start`, keeping x1 (and up to [`moments::MAX_DIMENSION`],
/// every coordinate) after burn-in.
pub fn run_chain_from(spec: &GaussianSpec, start: Vec<f64>, rng: &mut StreamRng) -> ChainRun {
    let kept = spec.iterations.saturating_sub(spec.burn_in) as usize;
    let traced = if spec.dimension() <= moments::MAX_DIMENSION {
        spec.dimension()
    } else {
        0
    };
    let mut x1 = Vec::with_capacity(kept);
    let mut states = vec![Vec::with_capacity(kept); traced];
    let (last, accepted) = run_chain_with(spec, start, rng, |x| {
        x1.push(x[0]);
        states.iter_mut().zip(x).for_each(|(t, v)| t.push(*v));
    });
    ChainRun {
        x1,
        states,
        last,
        accepted,
    }
}

/// Runs one chain of `spec` from `start`, calling `keep` with every state after burn-in;
/// returns the final state and the number of accepted RWMH proposals after burn-in.
pub(crate) fn run_chain_with(
    spec: &GaussianSpec,
    start: Vec<f64>,
    rng: &mut StreamRng,
    mut keep: impl FnMut(&[f64]),
) -> (Vec<f64>, u64) {
    let d = spec.dimension();
    let mut y: Vec<f64> = start.iter().zip(&spec.mean).map(|(x, m)| x - m).collect();
    let mut conditionals = match spec.method {
        Method::Rwmh => None,
        _ => Some(Conditionals::new(&spec.structure, &y)),
    };
    let mut accepted = 0;
    let mut proposal = vec![0.0; d];
    let mut x = vec![0.0; d];
    for iteration in 0..spec.iterations {
        match (&mut conditionals, spec.method) {
            (Some(conditionals), Method::SystematicGibbs) => (0..d).for_each(|i| {
                let z: f64 = StandardNormal.sample(rng);
                conditionals.update(&mut y, i, z)
            }),
            (Some(conditionals), _) => (0..d).for_each(|_| {
                let i = rng.random_range(0..d);
                let z: f64 = StandardNormal.sample(rng);
                conditionals.update(&mut y, i, z)
            }),
            (None, _) => {
                let moved = rwmh_step(spec, &mut y, &mut proposal, rng);
                if moved && iteration >= spec.burn_in {
                    accepted += 1;
                }
            }
        }
        if iteration >= spec.burn_in {
            x.iter_mut()
                .zip(y.iter().zip(&spec.mean))
                .for_each(|(x, (y, m))| *x = y + m);
            keep(&x);
        }
    }
    y.iter_mut().zip(&spec.mean).for_each(|(y, m)| *y += m);
    (y, accepted)
}

/// One random-walk MH step on the centred state `y`; whether the proposal was accepted.
fn rwmh_step(
    spec: &GaussianSpec,
    y: &mut [f64],
    proposal: &mut [f64],
    rng: &mut StreamRng,
) -> bool {
    for (p, yi) in proposal.iter_mut().zip(y.iter()) {
        let z: f64 = StandardNormal.sample(rng);
        *p = yi + spec.proposal_sd * z;
    }
    let log_ratio = spec.structure.log_density(proposal) - spec.structure.log_density(y);
    let u: f64 = rng.random();
    let accept = u.ln() < log_ratio;
    if accept {
        y.copy_from_slice(proposal);
    }
    accept
}

/// What a gaussian job computed.
pub struct GaussianOutput {
    spec: GaussianSpec,
    chains: Vec<ChainRun>,
    sample_seconds: f64,
    /// CPU seconds of the job's thread while it sampled.
    cpu_seconds: f64,
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

    /// The largest |estimate - exact| / MCSE over the target's means and covariances, when the
    /// chains kept every coordinate.
    fn moment_max_z(&self) -> Option<f64> {
        let traces: Vec<&[Vec<f64>]> = self.chains.iter().map(|c| c.states.as_slice()).collect();
        if traces.iter().any(|t| t.is_empty()) {
            return None;
        }
        moments::max_abs_z(&moments::moment_checks(
            &self.spec.mean,
            &self.spec.structure,
            &traces,
        ))
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

/// The sampler kind a study of this family runs when it names none.
const DEFAULT_METHOD: Method = Method::SystematicGibbs;

impl StudyFamily for GaussianTarget {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const HEADLINE: &'static [Key] = &[SAMPLER_KIND];
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[&crate::table::shared::autocorrelation::TABLE];
    const REPORT: ReportColumns = ReportColumns::listing(&[
        schema::jobs::ESS_PER_ITERATION.name(),
        schema::jobs::EXACT_ESS_PER_ITERATION.name(),
        schema::jobs::AUTOCORRELATION_LAG1.name(),
        schema::jobs::MOMENT_MAX_Z.name(),
    ])
    .named_by(&[SAMPLER_KIND]);
    type Spec = GaussianSpec;
    type Output = GaussianOutput;

    fn default_notes() -> Vec<(Key, String)> {
        vec![(SAMPLER_KIND, format!("`\"{}\"`", DEFAULT_METHOD.name()))]
    }

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let structure = structure(settings, resolver)?;
        let mean = mean_vector(settings, resolver, structure.dimension())?;
        let (iterations, burn_in) = super::common::iterations_and_burn_in(settings, resolver)?;
        Ok(GaussianSpec {
            structure,
            mean,
            method: resolver.sampler_kind(
                settings,
                NAME,
                DEFAULT_METHOD,
                Method::from_name,
                Method::NAMES,
            )?,
            proposal_sd: settings.float(SAMPLER_PROPOSAL_SD),
            iterations,
            burn_in,
            chains: settings.int(SAMPLER_CHAINS) as usize,
        })
    }

    /// The method resolved; a covariance given in full fixes the dimension (its column) and
    /// has no single correlation (`Null`).
    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        let mut params = super::common::params_with_kind(settings, Self::KEYS, spec.method.name());
        if let Structure::Dense(dense) = &spec.structure {
            let dimension = ParamValue::Int(dense.dimension() as i64);
            super::common::set_param(&mut params, MODEL_DIMENSION, dimension);
            super::common::set_param(&mut params, MODEL_CORRELATION, ParamValue::Null);
        }
        params
    }

    fn label(spec: &Self::Spec) -> String {
        match &spec.structure {
            Structure::Equicorrelated {
                dimension,
                correlation,
            } => format!("gaussian {} d={dimension} rho={correlation}", spec.method),
            Structure::Dense(dense) => {
                format!(
                    "gaussian {} d={} covariance",
                    spec.method,
                    dense.dimension()
                )
            }
        }
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.iterations * spec.chains as u64
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let started = std::time::Instant::now();
        let cpu = crate::clock::Stopwatch::start();
        let chains = (0..spec.chains)
            .map(|c| {
                let mut rng = context.chain_stream(Purpose::Chain, &format!("chain={c}"));
                let run = run_chain(spec, &mut rng);
                context.report((c as u64 + 1) * spec.iterations);
                run
            })
            .collect();
        Ok(GaussianOutput {
            spec: spec.clone(),
            chains,
            sample_seconds: started.elapsed().as_secs_f64(),
            cpu_seconds: cpu.cpu_seconds(),
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, output) = (done.job, done.output);
        let spec = &output.spec;
        let acceptance = (spec.method == Method::Rwmh).then(|| {
            let accepted: u64 = output.chains.iter().map(|c| c.accepted).sum();
            let kept = spec.iterations.saturating_sub(spec.burn_in).max(1);
            accepted as f64 / (kept * spec.chains as u64) as f64
        });
        let acf = output.autocorrelation();
        let iterations = (spec.iterations * spec.chains as u64) as f64;
        let jobs_row = done
            .jobs_row(&jobs::TABLE, &[])
            .fill(ACCEPTANCE_RATE, acceptance)
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(jobs::CPU_SECONDS, output.cpu_seconds)
            .fill(jobs::ITERATIONS_PER_SECOND, iterations / output.cpu_seconds)
            .fill(jobs::ESS_PER_ITERATION, output.ess_per_iteration())
            .fill(jobs::EXACT_ESS_PER_ITERATION, spec.exact_ess_per_draw())
            .fill(jobs::AUTOCORRELATION_LAG1, acf.get(1).copied())
            .fill(jobs::MOMENT_MAX_Z, output.moment_max_z())
            .finish()?;
        let acf_rows = autocorrelation_rows(job, &acf)?;
        Ok(vec![("jobs", jobs_row), ("autocorrelation", acf_rows)])
    }

    fn figures(
        context: &Context<'_>,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<Figure>, ReportError> {
        ess_figure(context).map(|f| f.into_iter().collect())
    }
}

/// The target's covariance: given in full (`model.covariance`, then `model.dimension` and
/// `model.correlation` may not be given), or equicorrelated, checked positive definite.
fn structure(settings: &Settings, resolver: &Resolver<'_>) -> Result<Structure, StudyError> {
    let ParamValue::Text(text) = settings.value(MODEL_COVARIANCE) else {
        return equicorrelated(settings, resolver);
    };
    super::common::reject_given(settings, resolver, &[MODEL_DIMENSION, MODEL_CORRELATION], |key| {
        format!(
            "`{}` describes the equicorrelated target, but model.covariance gives the covariance in full",
            key.dotted()
        )
    })
    .map_err(|e| e.help("leave it out: the covariance's size is the dimension"))?;
    DenseCovariance::new(&parse_rows(&text))
        .map(Structure::Dense)
        .map_err(|problem| {
            resolver
                .error_at(
                    settings,
                    &[MODEL_COVARIANCE],
                    ErrorKind::OutOfRange,
                    format!("model.covariance: {problem}"),
                )
                .allowed("a square, symmetric, positive-definite matrix, one row per coordinate")
        })
}

/// The notes' toy: unit variances, every pair correlated rho.
fn equicorrelated(settings: &Settings, resolver: &Resolver<'_>) -> Result<Structure, StudyError> {
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
    Ok(Structure::Equicorrelated {
        dimension,
        correlation,
    })
}

/// `model.mean_vector`, one entry per coordinate (zeros when not given).
fn mean_vector(
    settings: &Settings,
    resolver: &Resolver<'_>,
    dimension: usize,
) -> Result<Vec<f64>, StudyError> {
    let ParamValue::Text(text) = settings.value(MODEL_MEAN_VECTOR) else {
        return Ok(vec![0.0; dimension]);
    };
    let mean = parse_numbers(&text);
    if mean.len() != dimension {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_MEAN_VECTOR],
                ErrorKind::Conflict,
                format!(
                    "model.mean_vector has {} entries, but the target has dimension {dimension}",
                    mean.len()
                ),
            )
            .allowed(format!("{dimension} numbers, one per coordinate")));
    }
    Ok(mean)
}

/// ESS per iteration of x1 against rho, one curve per method and dimension, with the bivariate
/// systematic-scan formula dashed.
fn ess_figure(context: &Context<'_>) -> Result<Option<Figure>, ReportError> {
    let table = context.jobs_table();
    let (Some(families), Some(rho), Some(ess), Some(method), Some(dimension)) = (
        table.text(MODEL_FAMILY),
        table.num(MODEL_CORRELATION),
        table.num(jobs::ESS_PER_ITERATION),
        table.text(SAMPLER_KIND),
        table.num(MODEL_DIMENSION),
    ) else {
        return Ok(None);
    };
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for row in 0..table.height {
        if families[row].as_deref() != Some(NAME) {
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
    let drawn = crate::figures::plots::Curves {
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
