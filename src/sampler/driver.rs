//! The driver: runs a job's chains through any [`Sampler`], and owns everything around the
//! transitions — iterations, burn-in, thinning, recording, the streaming estimates, the stored
//! draws for per-cell diagnostics, and the step-size adaptation schedule.
//!
//! Chains run one after another, or at once on the rayon pool when the job is alone
//! ([`RunRequest::chains_in_parallel`]); each draws only from its own [`ChainRng`], so a chain's
//! numbers do not depend on how many chains run beside it, or where. Memory is O(N) per chain for the
//! estimates (see [`super::moments`]), plus the thinned traces and the stored draws, whose size
//! is capped ([`DrawSettings`]).
//!
//! Adaptation: when asked, a kind with a step size adapts it per chain during burn-in by dual
//! averaging ([`super::adapt`]) and the averaged step is frozen for the kept iterations. Every
//! kept-iteration figure (acceptance rate, estimates, traces, draws) comes from the frozen
//! chain only.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::adapt::DualAveraging;
use super::hyper::settings::HyperModel;
use super::moments::{BatchStatistics, BatchSums, WeightedMoments};
use super::protocol::{ChainRng, ChainState, Notes, Sampler, TrajectorySummary};
pub use super::schedule::{Adaptation, Schedule};
use crate::clock::Stopwatch;
use crate::model::hyper::HyperName;
use crate::model::target::Target;

/// Probe cells traced per chain.
pub const PROBES: usize = 5;
/// Batches per chain for the batch-means standard errors.
pub(crate) const BATCHES: u64 = 20;

pub use crate::model::functional::Functional;

/// How many kept draws of every cell are stored for the per-cell diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawSettings {
    /// At most this many stored draws per chain: the kept iterations are thinned evenly to fit.
    pub(crate) per_chain: usize,
    /// At most this many stored values (draws x cells) per job, all chains together.
    pub(crate) max_values: usize,
}

impl Default for DrawSettings {
    /// 1,000 draws per chain: enough for ESS and R-hat (ArviZ's defaults are 1,000 draws per
    /// chain too) at a cost of about 1 ms per cell; samplers whose chains are longer are thinned,
    /// which can only lower their ESS estimates, never flatter them.
    fn default() -> Self {
        Self {
            per_chain: 1_000,
            max_values: 1 << 25,
        }
    }
}

impl DrawSettings {
    /// Store every `thin`-th kept iteration: the smallest thinning that fits both limits.
    pub(crate) fn thinning(&self, kept: u64, cells: usize, chains: usize) -> u64 {
        let per_chain_values = (self.max_values / (cells.max(1) * chains.max(1))).max(1);
        let affordable = (self.per_chain.min(per_chain_values)).max(1) as u64;
        kept.div_ceil(affordable).max(1)
    }
}

/// What to run.
pub struct RunRequest<'a> {
    pub target: Target<'a>,
    pub schedule: Schedule,
    /// Adapt the step size during burn-in (kinds with a step size only).
    pub adaptation: Option<Adaptation>,
    pub functional: Option<Functional>,
    /// The exact posterior mean, when known: the run then records its convergence curve.
    pub exact_mean: Option<&'a [f64]>,
    pub draws: DrawSettings,
    /// Told the iterations done (averaged over chains), about a hundred times per run.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Levels c of the spatial field f = u - mean - X beta: the run reports each cell's posterior
    /// P(f > c | data) (empty: none). A risk map's threshold t of the relative risk
    /// exp(f - variance / 2) is the level log t + variance / 2 at the model's variance; chains
    /// that infer the mean or the variance judge each state at its own ([`ExceedanceShift`]).
    pub exceedance: &'a [f64],
    /// The model and starting values, when the spec infers hyperparameters
    /// ([`super::hyper`]).
    pub hyper: Option<super::hyper::settings::HyperModel<'a>>,
    /// Run the chains on the current rayon pool's threads at once (a job alone on the machine);
    /// otherwise one after another. The numbers are the same either way.
    pub chains_in_parallel: bool,
}

impl<'a> RunRequest<'a> {
    /// A run of `spec`'s schedule and adaptation on `target`, and nothing else: no functional,
    /// no exact mean, the default draws, no progress, fixed hyperparameters. Other requests
    /// start from it (`RunRequest { exact_mean, ..RunRequest::new(target, &spec) }`).
    pub fn new(target: Target<'a>, spec: &super::spec::SamplerSpec) -> Self {
        Self {
            target,
            schedule: spec.schedule(),
            adaptation: spec.adaptation(),
            functional: None,
            exact_mean: None,
            draws: DrawSettings::default(),
            progress: None,
            hyper: None,
            exceedance: &[],
            chains_in_parallel: false,
        }
    }
}

/// Thinned post-burn-in states of one chain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// 1-based iteration number (burn-in included in the count).
    pub(crate) iteration: Vec<u64>,
    pub loglik: Vec<f64>,
    pub probes: Vec<[f64; PROBES]>,
    /// The mean of the field over all cells.
    pub(crate) field_mean: Vec<f64>,
    /// The inferred hyperparameters at each traced iteration, row by row (one value per
    /// inferred hyperparameter; empty when none is inferred).
    pub hyper: Vec<f64>,
}

/// The covariates' coefficients of one chain at its stored draws (every `thin`-th kept
/// iteration, as [`StoredDraws`]): cheap (p values a draw), so thinned only as much as the cell
/// draws, not as the traces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CoefficientDraws {
    /// 1-based iteration of each draw (burn-in included in the count).
    pub(crate) iteration: Vec<u64>,
    /// Draw-major: draw d holds `values[d * p..(d + 1) * p]`.
    pub(crate) values: Vec<f64>,
}

impl CoefficientDraws {
    /// The series of coefficient `index` of `count`.
    pub fn series(&self, index: usize, count: usize) -> Vec<f64> {
        interleaved_series(&self.values, index, count)
    }
}

/// The `index`-th of `count` values stored row by row (draw-major), as one series.
fn interleaved_series(values: &[f64], index: usize, count: usize) -> Vec<f64> {
    values
        .iter()
        .skip(index)
        .step_by(count.max(1))
        .copied()
        .collect()
}

impl Trace {
    /// The traced series of the `index`-th of `count` inferred hyperparameters.
    pub(crate) fn hyper_series(&self, index: usize, count: usize) -> Vec<f64> {
        interleaved_series(&self.hyper, index, count)
    }

    /// The `index`-th of `count` inferred hyperparameters at traced state `row`.
    pub(crate) fn hyper_at(&self, row: usize, index: usize, count: usize) -> f64 {
        self.hyper[row * count + index]
    }
}

/// The scalars of every kept iteration of one chain, in order: what the job's ESS, R-hat and
/// MCSE of the log-likelihood, the probe cells' ESS and the inferred hyperparameters' summaries
/// are computed from. `sampler.thin` thins only the [`Trace`] a study stores, never these.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeptSeries {
    /// The 1-based iteration of the first kept state (burn-in included in the count).
    pub(crate) first_iteration: u64,
    pub(crate) loglik: Vec<f64>,
    pub(crate) probes: Vec<[f64; PROBES]>,
    /// The inferred hyperparameters, row by row (one value per inferred hyperparameter; empty
    /// when none is inferred).
    pub hyper: Vec<f64>,
}

impl KeptSeries {
    /// The inferred hyperparameters of each kept state (0 when none is inferred).
    pub(crate) fn hyper_count(&self) -> usize {
        self.hyper.len() / self.loglik.len().max(1)
    }

    fn with_capacity(first_iteration: u64, kept: usize, hypers: usize) -> Self {
        Self {
            first_iteration,
            loglik: Vec::with_capacity(kept),
            probes: Vec::with_capacity(kept),
            hyper: Vec::with_capacity(kept * hypers),
        }
    }

    fn record<S: ChainState>(&mut self, state: &S, probe_cells: &[usize; PROBES]) {
        let u = state.field();
        self.loglik.push(state.log_likelihood());
        self.probes.push(probe_cells.map(|c| u[c]));
        self.hyper.extend_from_slice(state.hyperparameters());
    }

    /// The series of probe cell `probe`.
    pub(crate) fn probe_series(&self, probe: usize) -> Vec<f64> {
        self.probes.iter().map(|row| row[probe]).collect()
    }

    /// The series of the `index`-th of `count` inferred hyperparameters.
    pub(crate) fn hyper_series(&self, index: usize, count: usize) -> Vec<f64> {
        interleaved_series(&self.hyper, index, count)
    }
}

/// The stored kept draws of one chain: every `thin`-th kept iteration, every cell (f32).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredDraws {
    pub(crate) thin: u64,
    pub(crate) cells: usize,
    /// Draw-major: draw d holds `values[d * cells..(d + 1) * cells]`.
    pub(crate) values: Vec<f32>,
    /// The log-likelihood at each stored draw.
    pub(crate) loglik: Vec<f64>,
}

impl StoredDraws {
    pub(crate) fn len(&self) -> usize {
        self.loglik.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.loglik.is_empty()
    }

    /// The stored series of one cell.
    pub(crate) fn cell(&self, cell: usize) -> Vec<f64> {
        self.values
            .iter()
            .skip(cell)
            .step_by(self.cells.max(1))
            .map(|&v| f64::from(v))
            .collect()
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainOutput {
    /// Moves over kept iterations (for kinds that always move, 1).
    pub(crate) acceptance_rate: f64,
    /// Mean acceptance probability over the kept iterations, for Metropolis-Hastings kinds.
    pub(crate) mean_acceptance_probability: Option<f64>,
    /// The step size the kept iterations used (after adaptation), for kinds with one.
    pub(crate) step_size: Option<f64>,
    /// Whether adaptation wanted a step above the kind's largest late in burn-in (see
    /// [`super::adapt::DualAveraging::capped`]); `None` without adaptation.
    pub(crate) step_capped: Option<bool>,
    /// Whether adaptation wanted a step below the kind's smallest late in burn-in (see
    /// [`super::adapt::DualAveraging::floored`]); `None` without adaptation.
    pub(crate) step_floored: Option<bool>,
    /// The kept iterations' trajectories, for kinds that build them (NUTS, laplace_hmc).
    pub(crate) trajectory: Option<TrajectorySummary>,
    /// The share of kept hyperparameter updates that moved, when hyperparameters are inferred.
    pub(crate) hyper_acceptance_rate: Option<f64>,
    pub(crate) loglik_evaluations: u64,
    pub(crate) gradient_evaluations: u64,
    /// Why the chain stopped early, if it did ([`ChainState::failure`]): the job then fails.
    pub(crate) failure: Option<ChainFailure>,
    /// Every kept iteration's scalars (diagnostics).
    pub(crate) kept: KeptSeries,
    /// Every `sampler.thin`-th kept iteration (the traces table).
    pub trace: Trace,
    pub draws: StoredDraws,
    /// The coefficients at the stored draws (empty without covariates).
    pub coefficients: CoefficientDraws,
}

impl ChainOutput {
    /// The `index`-th inferred hyperparameter at stored draw `d`: stored draw d is kept
    /// iteration d x thin, whose hyperparameters the kept series holds.
    pub(crate) fn hyper_at_stored_draw(&self, d: usize, index: usize) -> f64 {
        self.kept.hyper[d * self.draws.thin as usize * self.kept.hyper_count() + index]
    }

    /// The iteration (1-based, burn-in included) of stored draw `d`: kept iteration d x thin,
    /// as `coefficients.parquet` labels it.
    pub(crate) fn stored_draw_iteration(&self, d: usize) -> u64 {
        self.kept.first_iteration + d as u64 * self.draws.thin
    }
}

/// A chain that could not go on: at which iteration (1-based, burn-in included; 0 for its
/// start) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainFailure {
    pub(crate) iteration: u64,
    pub(crate) reason: String,
}

/// What a run returns.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub chains: Vec<ChainOutput>,
    /// Moves over all kept iterations of all chains.
    pub acceptance_rate: f64,
    pub post_mean: Vec<f64>,
    pub post_sd: Vec<f64>,
    /// Batch-means standard errors (None when too few kept iterations for batches).
    pub post_mean_mcse: Option<Vec<f64>>,
    pub post_sd_mcse: Option<Vec<f64>>,
    /// Posterior mean of the [`Functional`], when one was asked for.
    pub functional_mean: Option<Vec<f64>>,
    /// For each level of [`RunRequest::exceedance`], every cell's posterior P(f > c | data)
    /// (level-major: `exceedance[k][cell]`); empty when none was asked for or the kind cannot
    /// give it.
    pub(crate) exceedance: Vec<Vec<f64>>,
    /// An approximation's gaussian marginal (mean, sd) of each covariate coefficient (empty
    /// for chains, whose coefficients are in their traces, and where not computed).
    pub coefficient_marginals: Vec<(f64, f64)>,
    /// (kept iterations per chain, RMS over cells of pooled running mean - exact mean).
    pub(crate) convergence: Vec<(u64, f64)>,
    pub probe_cells: [usize; PROBES],
    pub(crate) sample_seconds: f64,
    /// CPU seconds of the run, each chain on the clock of the thread that ran it (chains may run
    /// on several threads), the pooling of their estimates included; `None` for an approximation.
    pub(crate) cpu_seconds: Option<f64>,
    /// What the kind said about its run ([`super::Sampler::notes`]).
    pub notes: Notes,
    /// For a kind that is not a Markov chain (the Laplace approximation): what it computed
    /// besides the marginals. `None` for every sampler.
    pub approximation: Option<super::approximated::Approximation>,
}

impl RunOutput {
    /// The mean over chains of the adapted step sizes, for kinds with one.
    pub fn mean_step_size(&self) -> Option<f64> {
        self.mean_over_chains(|c| c.step_size)
    }

    /// The mean over chains of the leapfrog steps (gradients) per kept iteration, for kinds that
    /// integrate trajectories.
    pub(crate) fn mean_leapfrog_steps(&self) -> Option<f64> {
        self.mean_over_chains(|c| c.trajectory.map(|t| t.mean_leapfrog_steps))
    }

    /// The mean over the chains that have it of a per-chain number.
    fn mean_over_chains(&self, of: impl Fn(&ChainOutput) -> Option<f64>) -> Option<f64> {
        let values: Vec<f64> = self.chains.iter().filter_map(of).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }

    /// Log-likelihood evaluations per iteration, over all chains (a gradient counts as one
    /// gradient evaluation, not as a log-likelihood evaluation).
    pub(crate) fn evaluations_per_iteration(&self, iterations: u64) -> (f64, f64) {
        let total = (iterations * self.chains.len() as u64).max(1) as f64;
        let loglik: u64 = self.chains.iter().map(|c| c.loglik_evaluations).sum();
        let gradient: u64 = self.chains.iter().map(|c| c.gradient_evaluations).sum();
        (loglik as f64 / total, gradient as f64 / total)
    }
}

/// One chain's estimates, fed state by state with hold counts: a state's field is pushed once,
/// with the number of kept iterations it was held for, when the chain leaves it.
struct ChainEstimates {
    moments: WeightedMoments,
    batch: BatchSums,
    batches: BatchStatistics,
    functional: Option<(Functional, WeightedMoments, Vec<f64>)>,
    exceedance: Option<ExceedanceEstimates>,
    /// The field of the state being held, and the kept iterations it has been held for but not
    /// yet pushed.
    held: Vec<f64>,
    pending: f64,
}

/// The running share of kept states in which f exceeded each level, per cell.
struct ExceedanceEstimates {
    levels: Vec<f64>,
    /// Where an inferred mean and variance sit among a state's hyperparameters.
    shift: ExceedanceShift,
    /// Threshold-major indicators: `[k * cells + cell]`.
    moments: WeightedMoments,
    indicators: Vec<f64>,
    /// The spatial field f of the held state.
    spatial: Vec<f64>,
}

/// The inferred mean's and variance's places among a chain state's hyperparameters, so that a
/// state's spatial field is u less its own mean, and its relative risk exp(f - v / 2) is judged
/// at its own variance v against levels log t + v0 / 2 made at the model's `variance0`
/// ([`RunRequest::exceedance`]): f - (v - v0) / 2 > level.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ExceedanceShift {
    mean: Option<usize>,
    variance: Option<(usize, f64)>,
}

impl ExceedanceShift {
    /// The shift of the chains that infer `hyper`'s hyperparameters (none without).
    fn of(hyper: Option<&HyperModel>) -> Self {
        let Some(hyper) = hyper else {
            return Self::default();
        };
        let index = |wanted| hyper.model.hyper.names().position(|n| n == wanted);
        Self {
            mean: index(HyperName::Mean),
            variance: index(HyperName::Variance).map(|k| (k, hyper.model.kernel.variance)),
        }
    }
}

impl ExceedanceEstimates {
    fn new(levels: &[f64], cells: usize, shift: ExceedanceShift) -> Option<Self> {
        (!levels.is_empty()).then(|| Self {
            levels: levels.to_vec(),
            shift,
            moments: WeightedMoments::new(cells * levels.len()),
            indicators: vec![0.0; cells * levels.len()],
            spatial: vec![0.0; cells],
        })
    }

    /// Hold the spatial field of the state whose field is `u` at whitened position `xi` and
    /// inferred hyperparameters `hyper`, shifted by its variance ([`ExceedanceShift`]).
    fn hold(&mut self, target: &Target, u: &[f64], xi: &[f64], hyper: &[f64]) {
        let mean = self.shift.mean.map_or(target.mean, |k| hyper[k]);
        let half_excess = self
            .shift
            .variance
            .map_or(0.0, |(k, variance0)| (hyper[k] - variance0) / 2.0);
        self.spatial.copy_from_slice(u);
        for f in &mut self.spatial {
            *f -= mean + half_excess;
        }
        if let Some(covariates) = target.prior.covariates() {
            let z = covariates.whitened_coefficients(xi);
            covariates.remove_whitened_effect(z, &mut self.spatial);
        }
    }

    fn push(&mut self, weight: f64) {
        let cells = self.spatial.len();
        for (k, &level) in self.levels.iter().enumerate() {
            let out = &mut self.indicators[k * cells..(k + 1) * cells];
            for (o, &f) in out.iter_mut().zip(&self.spatial) {
                *o = if f > level { 1.0 } else { 0.0 };
            }
        }
        self.moments.push(&self.indicators, weight);
    }
}

impl ChainEstimates {
    /// Estimates over `cells` cells, holding nothing until [`ChainEstimates::hold`].
    fn new(
        cells: usize,
        functional: Option<Functional>,
        (levels, shift): (&[f64], ExceedanceShift),
    ) -> Self {
        Self {
            moments: WeightedMoments::new(cells),
            batch: BatchSums::new(cells),
            batches: BatchStatistics::new(cells),
            functional: functional.map(|f| (f, WeightedMoments::new(cells), vec![0.0; cells])),
            exceedance: ExceedanceEstimates::new(levels, cells, shift),
            held: vec![0.0; cells],
            pending: 0.0,
        }
    }

    /// Hold `state` (nothing pushed).
    fn hold<S: ChainState>(&mut self, target: &Target, state: &S) {
        self.held.copy_from_slice(state.field());
        if let Some(exceedance) = &mut self.exceedance {
            let hyper = state.hyperparameters();
            exceedance.hold(target, state.field(), state.position(), hyper);
        }
    }

    /// Push the held state with its pending weight.
    fn flush(&mut self) {
        if self.pending == 0.0 {
            return;
        }
        let w = self.pending;
        self.moments.push(&self.held, w);
        self.batch.push(&self.held, w);
        if let Some((f, moments, scratch)) = &mut self.functional {
            f.apply(&self.held, scratch);
            moments.push(scratch, w);
        }
        if let Some(exceedance) = &mut self.exceedance {
            exceedance.push(w);
        }
        self.pending = 0.0;
    }

    /// The chain moved to `state`: push the state it left and hold the new one.
    fn moved_to<S: ChainState>(&mut self, target: &Target, state: &S) {
        self.flush();
        self.hold(target, state);
    }
}

/// Everything recorded of one chain.
struct ChainRecord {
    estimates: ChainEstimates,
    output: ChainOutput,
    kept_moves: u64,
}

/// Run one chain per entry of `rngs` with `sampler`, chain c drawing only from `rngs[c]`: one
/// after another, or at once on the rayon pool with [`RunRequest::chains_in_parallel`]. Either way
/// every number is the same: a chain reads only its own stream and the shared, immutable
/// sampler, and what the chains share (the convergence curve) is summed in chain order.
pub fn run<S: Sampler>(sampler: &S, request: &RunRequest, rngs: Vec<ChainRng>) -> RunOutput {
    let started = Instant::now();
    let target = &request.target;
    let schedule = request.schedule;
    let count = rngs.len();
    let probe_cells = probe_cells(target.prior.grid());
    let checkpoints = match request.exact_mean {
        Some(_) => log_spaced(schedule.kept()),
        None => Vec::new(),
    };
    let store_thin = request
        .draws
        .thinning(schedule.kept(), target.cells(), count);
    let iterations_done = AtomicU64::new(0);
    let run_one = |rng: ChainRng| {
        let clock = Stopwatch::start();
        let context = ChainContext {
            request,
            chains: count,
            probe_cells: &probe_cells,
            checkpoints: &checkpoints,
            store_thin,
            iterations_done: &iterations_done,
        };
        let mut running_means = vec![vec![0.0; target.cells()]; checkpoints.len()];
        let record = run_chain(sampler, &context, rng, &mut running_means);
        (record, running_means, clock.cpu_seconds())
    };
    let chains: Vec<(ChainRecord, Vec<Vec<f64>>, f64)> = if request.chains_in_parallel {
        rngs.into_par_iter().map(run_one).collect()
    } else {
        rngs.into_iter().map(run_one).collect()
    };
    let pooling = Stopwatch::start();
    let mut running_means = vec![vec![0.0; target.cells()]; checkpoints.len()];
    let mut chains_cpu = 0.0;
    let mut records = Vec::with_capacity(count);
    for (record, shares, cpu) in chains {
        for (total, share) in running_means.iter_mut().zip(&shares) {
            for (t, s) in total.iter_mut().zip(share) {
                *t += s;
            }
        }
        chains_cpu += cpu;
        records.push(record);
    }
    let convergence = match request.exact_mean {
        Some(exact) => checkpoints
            .iter()
            .zip(&running_means)
            .map(|(&k, mean)| (k, rms_difference(mean, exact)))
            .collect(),
        None => Vec::new(),
    };
    let sample_seconds = started.elapsed().as_secs_f64();
    let mut output = summarize(records, schedule, probe_cells, convergence, sample_seconds);
    output.notes = sampler.notes();
    output.cpu_seconds = Some(chains_cpu + pooling.cpu_seconds());
    output
}

/// What a chain's run needs besides its sampler and stream.
struct ChainContext<'r, 'a> {
    request: &'r RunRequest<'a>,
    chains: usize,
    probe_cells: &'r [usize; PROBES],
    checkpoints: &'r [u64],
    store_thin: u64,
    /// Iterations done by all chains so far, for the progress callback.
    iterations_done: &'r AtomicU64,
}

fn run_chain<S: Sampler>(
    sampler: &S,
    context: &ChainContext,
    mut rng: ChainRng,
    running_means: &mut [Vec<f64>],
) -> ChainRecord {
    let request = context.request;
    let target = &request.target;
    let schedule = request.schedule;
    let kept = schedule.kept();
    let batch_len = if kept >= 2 * BATCHES {
        kept / BATCHES
    } else {
        0
    };
    // The start: a draw from the prior, from the chain's proposal stream.
    let mut xi = vec![0.0; target.dim()];
    rng.normals(&mut xi);
    let mut state = sampler.start(xi, target, &mut rng);
    let mut adapter = request.adaptation.and_then(|a| {
        let step = state.step_size()?;
        (schedule.burn_in > 0).then(|| {
            DualAveraging::new(
                step,
                a.target_acceptance,
                a.max_step,
                a.min_step,
                state.whole_steps_of(),
            )
        })
    });
    let mut estimates = ChainEstimates::new(
        target.cells(),
        request.functional.clone(),
        (
            request.exceedance,
            ExceedanceShift::of(request.hyper.as_ref()),
        ),
    );
    estimates.hold(target, &state);
    if schedule.burn_in == 0 {
        state.burn_in_over();
    }
    let mut output = ChainOutput {
        acceptance_rate: 0.0,
        mean_acceptance_probability: None,
        step_size: None,
        step_capped: None,
        step_floored: None,
        trajectory: None,
        hyper_acceptance_rate: None,
        loglik_evaluations: 0,
        gradient_evaluations: 0,
        failure: None,
        kept: KeptSeries::with_capacity(
            schedule.burn_in + 1,
            usize::try_from(kept).unwrap_or(0),
            state.hyperparameters().len(),
        ),
        trace: Trace::default(),
        coefficients: CoefficientDraws::default(),
        draws: StoredDraws {
            thin: context.store_thin,
            cells: target.cells(),
            ..StoredDraws::default()
        },
    };
    let mut kept_moves = 0;
    let mut acceptance_sum = 0.0;
    let mut acceptance_count = 0u64;
    let mut next_checkpoint = 0;
    let progress_every = (schedule.iterations / 100).max(1);
    let share = 1.0 / context.chains as f64;
    let mut mean_scratch = vec![0.0; target.cells()];

    for t in 0..schedule.iterations {
        if let Some(progress) = request.progress
            && t % progress_every == 0
            && t > 0
        {
            let done = context
                .iterations_done
                .fetch_add(progress_every, Ordering::Relaxed)
                + progress_every;
            progress(done / context.chains as u64);
        }
        let info = sampler.step(&mut state, target, &mut rng);
        if let Some(reason) = state.failure() {
            output.failure = Some(ChainFailure {
                iteration: t + 1,
                reason: reason.to_string(),
            });
            break;
        }
        // The step may end in faer's AVX-512 products; the recording below is scalar code (an
        // `exp` per cell for the Poisson functional) that would otherwise run several times
        // slower (crate::simd_state).
        crate::simd_state::clear_upper_state();
        output.loglik_evaluations += u64::from(info.loglik_evaluations);
        output.gradient_evaluations += u64::from(info.gradient_evaluations);
        let Some(k) = t.checked_sub(schedule.burn_in) else {
            if let (Some(adapter), Some(p)) = (adapter.as_mut(), info.acceptance_probability) {
                state.set_step_size(adapter.update(p));
            }
            if t + 1 == schedule.burn_in {
                if let Some(adapter) = &adapter {
                    state.set_step_size(adapter.final_step());
                }
                state.burn_in_over();
                estimates.hold(target, &state);
            }
            continue;
        };
        if info.moved {
            kept_moves += 1;
            estimates.moved_to(target, &state);
        }
        if let Some(p) = info.acceptance_probability {
            acceptance_sum += p;
            acceptance_count += 1;
        }
        estimates.pending += 1.0;
        if batch_len > 0 && (k + 1) % batch_len == 0 && (k + 1) / batch_len <= BATCHES {
            estimates.flush();
            estimates.batches.close(&mut estimates.batch);
        }
        output.kept.record(&state, context.probe_cells);
        if k % schedule.thin == 0 {
            record_trace(&mut output.trace, &state, t, context.probe_cells);
        }
        if k % context.store_thin == 0 {
            let draws = &mut output.draws;
            draws.values.extend(state.field().iter().map(|&u| u as f32));
            draws.loglik.push(state.log_likelihood());
            if let Some(covariates) = target.prior.covariates() {
                let coefficients = &mut output.coefficients;
                coefficients.iteration.push(t + 1);
                coefficients
                    .values
                    .extend(covariates.coefficients(state.position()));
            }
        }
        if context.checkpoints.get(next_checkpoint) == Some(&(k + 1)) {
            let e = &estimates;
            e.moments.mean_with(&e.held, e.pending, &mut mean_scratch);
            for (p, m) in running_means[next_checkpoint].iter_mut().zip(&mean_scratch) {
                *p += share * m;
            }
            next_checkpoint += 1;
        }
    }
    estimates.flush();
    output.acceptance_rate = kept_moves as f64 / kept.max(1) as f64;
    output.mean_acceptance_probability =
        (acceptance_count > 0).then(|| acceptance_sum / acceptance_count as f64);
    output.step_size = state.step_size();
    output.step_capped = adapter.as_ref().map(DualAveraging::capped);
    output.step_floored = adapter.as_ref().map(DualAveraging::floored);
    output.trajectory = state.trajectory();
    output.hyper_acceptance_rate = state.hyper_acceptance_rate();
    ChainRecord {
        estimates,
        output,
        kept_moves,
    }
}

fn record_trace<S: ChainState>(
    trace: &mut Trace,
    state: &S,
    t: u64,
    probe_cells: &[usize; PROBES],
) {
    let u = state.field();
    trace.iteration.push(t + 1);
    trace.loglik.push(state.log_likelihood());
    trace.probes.push(probe_cells.map(|c| u[c]));
    trace
        .field_mean
        .push(u.iter().sum::<f64>() / u.len() as f64);
    trace.hyper.extend_from_slice(state.hyperparameters());
}

fn summarize(
    records: Vec<ChainRecord>,
    schedule: Schedule,
    probe_cells: [usize; PROBES],
    convergence: Vec<(u64, f64)>,
    sample_seconds: f64,
) -> RunOutput {
    let count = records.len() as f64;
    let moves: u64 = records.iter().map(|r| r.kept_moves).sum();
    let moments: Vec<_> = records
        .iter()
        .map(|r| r.estimates.moments.clone())
        .collect();
    let pooled = WeightedMoments::pool(&moments);
    let post_sd = pooled.sd();
    let batches: Vec<_> = records
        .iter()
        .map(|r| r.estimates.batches.clone())
        .collect();
    let errors = BatchStatistics::pool(&batches).standard_errors(&pooled.mean, &post_sd);
    let functional_mean = {
        let parts: Vec<_> = records
            .iter()
            .filter_map(|r| r.estimates.functional.as_ref().map(|f| f.1.clone()))
            .collect();
        (!parts.is_empty()).then(|| WeightedMoments::pool(&parts).mean)
    };
    let exceedance = {
        let parts: Vec<_> = records
            .iter()
            .filter_map(|r| r.estimates.exceedance.as_ref().map(|e| e.moments.clone()))
            .collect();
        match parts.is_empty() {
            true => Vec::new(),
            false => {
                let cells = post_sd.len().max(1);
                WeightedMoments::pool(&parts)
                    .mean
                    .chunks(cells)
                    .map(<[f64]>::to_vec)
                    .collect()
            }
        }
    };
    let (post_mean_mcse, post_sd_mcse) = match errors {
        Some((m, s)) => (Some(m), Some(s)),
        None => (None, None),
    };
    RunOutput {
        acceptance_rate: moves as f64 / (schedule.kept().max(1) as f64 * count),
        chains: records.into_iter().map(|r| r.output).collect(),
        post_mean: pooled.mean,
        post_sd,
        post_mean_mcse,
        post_sd_mcse,
        functional_mean,
        exceedance,
        coefficient_marginals: Vec::new(),
        convergence,
        probe_cells,
        sample_seconds,
        cpu_seconds: None,
        notes: Notes::default(),
        approximation: None,
    }
}

/// Cells on the diagonal (i, j) = (round(k (nx - 1) / 4), round(k (ny - 1) / 4)), k = 0..4:
/// i = j on a square grid.
pub(crate) fn probe_cells(grid: crate::model::Grid) -> [usize; PROBES] {
    grid.diagonal_cells()
}

/// About ten points per decade from 1 to `last`, always ending at `last`.
pub(crate) fn log_spaced(last: u64) -> Vec<u64> {
    let mut points = Vec::new();
    if last == 0 {
        return points;
    }
    let mut k = 0;
    loop {
        let value = 10f64.powf(k as f64 / 10.0).round() as u64;
        if value >= last {
            break;
        }
        if points.last() != Some(&value) {
            points.push(value);
        }
        k += 1;
    }
    points.push(last);
    points
}

pub(crate) fn rms_difference(a: &[f64], b: &[f64]) -> f64 {
    let sum: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    (sum / a.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn stored_draws_fit_both_limits() {
        let settings = DrawSettings {
            per_chain: 100,
            max_values: 10_000,
        };
        assert_eq!(settings.thinning(50, 10, 1), 1);
        assert_eq!(settings.thinning(1_000, 10, 1), 10);
        // 10,000 values over 4 chains of 100 cells: 25 draws per chain.
        assert_eq!(settings.thinning(1_000, 100, 4), 40);
    }
}
