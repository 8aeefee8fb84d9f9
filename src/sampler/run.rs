//! Running the chains of one job and collecting what a run returns.
//!
//! All chains of a job advance in lockstep so that the prior product of every chain's proposal is
//! one batched level-3 product; each chain still draws only from its own stream, so its numbers
//! do not depend on how many chains run beside it. Memory is O(N) per chain (plus the thinned
//! traces): the posterior estimates are streamed (see [`super::moments`]), never stored per
//! iteration.

use std::time::Instant;

use super::kernel::{ChainState, Kernel, Proposal, Target, accept};
use super::moments::{BatchStatistics, BatchSums, WeightedMoments};
use super::spec::SamplerSpec;
use crate::model::special::phi;
use crate::normals::NormalStream;
use crate::streams::StreamRng;

/// Probe cells traced per chain.
pub const PROBES: usize = 5;
/// Batches per chain for the batch-means standard errors.
pub const BATCHES: u64 = 20;

/// A per-cell function of the field whose posterior mean is reported besides u's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Functional {
    /// p(t* = 1 | u) = Phi(u / s): the probit predictive probability.
    PositiveProbability { noise_sd: f64 },
    /// exp(u + offset): the Poisson expected count.
    ExpectedCount { offset: f64 },
}

impl Functional {
    fn apply(&self, u: &[f64], out: &mut [f64]) {
        match *self {
            Self::PositiveProbability { noise_sd } => {
                for (o, &x) in out.iter_mut().zip(u) {
                    *o = phi(x / noise_sd);
                }
            }
            Self::ExpectedCount { offset } => {
                for (o, &x) in out.iter_mut().zip(u) {
                    *o = (x + offset).exp();
                }
            }
        }
    }
}

/// What to run.
pub struct RunRequest<'a> {
    pub target: Target<'a>,
    /// The Markov kernel, normally `Kernel::new(spec.kind, spec.beta)`.
    pub kernel: Kernel,
    pub spec: &'a SamplerSpec,
    pub functional: Option<Functional>,
    /// The exact posterior mean, when known: the run then records its convergence curve.
    pub exact_mean: Option<&'a [f64]>,
    /// Told the iterations done per chain, about a hundred times per run.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// Thinned post-burn-in states of one chain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// 1-based iteration number (burn-in included in the count).
    pub iteration: Vec<u64>,
    pub loglik: Vec<f64>,
    pub probes: Vec<[f64; PROBES]>,
    /// The mean of the field over all cells.
    pub field_mean: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChainOutput {
    pub acceptance_rate: f64,
    pub trace: Trace,
}

/// What a run returns.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub chains: Vec<ChainOutput>,
    /// Accepted moves over all iterations of all chains.
    pub acceptance_rate: f64,
    pub post_mean: Vec<f64>,
    pub post_sd: Vec<f64>,
    /// Batch-means standard errors (None when too few kept iterations for batches).
    pub post_mean_mcse: Option<Vec<f64>>,
    pub post_sd_mcse: Option<Vec<f64>>,
    /// Posterior mean of the [`Functional`], when one was asked for.
    pub functional_mean: Option<Vec<f64>>,
    /// (kept iterations per chain, RMS over cells of pooled running mean - exact mean).
    pub convergence: Vec<(u64, f64)>,
    pub probe_cells: [usize; PROBES],
    pub sample_seconds: f64,
}

/// One chain's estimates, fed state by state with hold counts.
struct ChainEstimates {
    moments: WeightedMoments,
    batch: BatchSums,
    batches: BatchStatistics,
    functional: Option<(Functional, WeightedMoments, Vec<f64>)>,
    /// Kept iterations the current state has been held for but not yet pushed.
    pending: f64,
}

impl ChainEstimates {
    fn new(cells: usize, functional: Option<Functional>) -> Self {
        Self {
            moments: WeightedMoments::new(cells),
            batch: BatchSums::new(cells),
            batches: BatchStatistics::new(cells),
            functional: functional.map(|f| (f, WeightedMoments::new(cells), vec![0.0; cells])),
            pending: 0.0,
        }
    }

    /// Push the current state with its pending weight.
    fn flush(&mut self, u: &[f64]) {
        if self.pending == 0.0 {
            return;
        }
        let w = self.pending;
        self.moments.push(u, w);
        self.batch.push(u, w);
        if let Some((f, moments, scratch)) = &mut self.functional {
            f.apply(u, scratch);
            moments.push(scratch, w);
        }
        self.pending = 0.0;
    }
}

struct Chain {
    /// The proposals' standard normals, continuing the proposal stream after the start.
    normals: NormalStream,
    /// The acceptance uniforms.
    acceptance: StreamRng,
    state: ChainState,
    proposal: Proposal,
    estimates: ChainEstimates,
    accepted: u64,
    trace: Trace,
}

/// The two streams of one chain.
pub struct ChainStreams {
    /// The start and the proposals' standard normals.
    pub proposals: StreamRng,
    /// The acceptance uniforms.
    pub acceptance: StreamRng,
}

/// Doubles per proposal buffer (512 KiB): the three buffers of a block stay in the 2 MiB L2
/// cache of one core. Measured: blocks of 16 MiB made the products memory-bound (1.5 to 3x
/// slower per field at D = 64 and 128).
const BLOCK_BUDGET: usize = 1 << 16;
/// At most this many iterations are drawn ahead.
const MAX_BLOCK: usize = 64;

/// Iterations whose proposals are drawn and multiplied by L together.
fn block_len(chains: usize, cells: usize) -> usize {
    (BLOCK_BUDGET / (chains * cells).max(1)).clamp(1, MAX_BLOCK)
}

/// Run one chain per entry of `streams`, chain c drawing only from `streams[c]`.
///
/// Proposals do not depend on the state, so the standard normals of a block of iterations are
/// drawn ahead in bulk and their L z computed together, the block kept small enough to stay in
/// cache. Acceptance uniforms come from their own stream and every L z is computed the same way
/// whatever its block, so a chain's numbers are the same bit for bit whatever the block length
/// and however many chains run beside it.
pub fn run(request: &RunRequest, streams: Vec<ChainStreams>) -> RunOutput {
    let block = block_len(streams.len(), request.target.cells());
    run_in_blocks(request, streams, block)
}

/// [`run`] with proposals drawn `block` iterations ahead.
fn run_in_blocks(request: &RunRequest, streams: Vec<ChainStreams>, block: usize) -> RunOutput {
    let started = Instant::now();
    let spec = request.spec;
    let target = &request.target;
    let kernel = request.kernel;
    let n = target.cells();
    let count = streams.len();
    let probe_cells = probe_cells(target.prior.grid().side());
    let kept = spec.iterations.saturating_sub(spec.burn_in);
    let batch_len = if kept >= 2 * BATCHES {
        kept / BATCHES
    } else {
        0
    };
    let checkpoints = match request.exact_mean {
        Some(_) => log_spaced(kept),
        None => Vec::new(),
    };

    let mut chains: Vec<Chain> = streams
        .into_iter()
        .map(|mut streams| Chain {
            state: kernel.init(target, &mut streams.proposals),
            normals: NormalStream::new(streams.proposals),
            acceptance: streams.acceptance,
            proposal: Proposal::new(target.observed_cells.len()),
            estimates: ChainEstimates::new(n, request.functional),
            accepted: 0,
            trace: Trace::default(),
        })
        .collect();

    let block = block.max(1);
    let mut z = vec![0.0; block * count * n];
    let mut lz = vec![0.0; block * count * n];
    let mut scratch = vec![0.0; n];
    let mut pooled_mean = vec![0.0; n];
    let mut chain_mean = vec![0.0; n];
    let mut convergence = Vec::with_capacity(checkpoints.len());
    let mut next_checkpoint = 0;
    let progress_every = (spec.iterations / 100).max(1);

    let mut t = 0;
    while t < spec.iterations {
        let steps = block.min((spec.iterations - t) as usize);
        let fields = steps * count;
        draw_proposals(&mut chains, &mut z[..fields * n], n);
        target.prior.apply_sqrt_batch(
            &z[..fields * n],
            &mut lz[..fields * n],
            &mut scratch,
            fields,
        );

        for step in 0..steps {
            if let Some(progress) = request.progress {
                if t % progress_every == 0 {
                    progress(t);
                }
            }
            let kept_index = t.checked_sub(spec.burn_in);
            for (c, chain) in chains.iter_mut().enumerate() {
                let f = (step * count + c) * n;
                let (z_c, lz_c) = (&z[f..f + n], &lz[f..f + n]);
                let log_ratio =
                    kernel.log_acceptance(&chain.state, z_c, lz_c, target, &mut chain.proposal);
                if accept(log_ratio, &mut chain.acceptance) {
                    chain.accepted += 1;
                    chain.estimates.flush(&chain.state.u);
                    kernel.move_to_proposal(&mut chain.state, z_c, lz_c, &chain.proposal);
                }
                if let Some(k) = kept_index {
                    record_kept(chain, k, t, spec.thin, batch_len, &probe_cells);
                }
            }
            if let (Some(k), Some(exact)) = (kept_index, request.exact_mean) {
                if checkpoints.get(next_checkpoint) == Some(&(k + 1)) {
                    pooled_running_mean(&chains, &mut pooled_mean, &mut chain_mean);
                    convergence.push((k + 1, rms_difference(&pooled_mean, exact)));
                    next_checkpoint += 1;
                }
            }
            t += 1;
        }
    }

    for chain in &mut chains {
        chain.estimates.flush(&chain.state.u);
    }
    let sample_seconds = started.elapsed().as_secs_f64();
    summarize(
        chains,
        spec.iterations,
        probe_cells,
        convergence,
        sample_seconds,
    )
}

/// Standard normals for every (step, chain) of a block, step-major; each chain draws its own
/// in order from its proposal stream.
fn draw_proposals(chains: &mut [Chain], z: &mut [f64], n: usize) {
    let count = chains.len();
    for (f, field) in z.chunks_exact_mut(n).enumerate() {
        chains[f % count].normals.fill(field);
    }
}

/// The running posterior mean pooled over chains, pending holds included.
fn pooled_running_mean(chains: &[Chain], pooled: &mut [f64], scratch: &mut [f64]) {
    pooled.fill(0.0);
    let share = 1.0 / chains.len() as f64;
    for chain in chains {
        let e = &chain.estimates;
        e.moments.mean_with(&chain.state.u, e.pending, scratch);
        for (p, m) in pooled.iter_mut().zip(scratch.iter()) {
            *p += share * m;
        }
    }
}

/// Book-keeping after iteration `t` (kept index `k`) of one chain.
fn record_kept(
    chain: &mut Chain,
    k: u64,
    t: u64,
    thin: u64,
    batch_len: u64,
    probe_cells: &[usize; PROBES],
) {
    let estimates = &mut chain.estimates;
    estimates.pending += 1.0;
    if batch_len > 0 && (k + 1) % batch_len == 0 && (k + 1) / batch_len <= BATCHES {
        estimates.flush(&chain.state.u);
        estimates.batches.close(&mut estimates.batch);
    }
    if k % thin == 0 {
        chain.trace.iteration.push(t + 1);
        chain.trace.loglik.push(chain.state.loglik);
        chain
            .trace
            .probes
            .push(probe_cells.map(|c| chain.state.u[c]));
        let u = &chain.state.u;
        chain
            .trace
            .field_mean
            .push(u.iter().sum::<f64>() / u.len() as f64);
    }
}

fn summarize(
    chains: Vec<Chain>,
    iterations: u64,
    probe_cells: [usize; PROBES],
    convergence: Vec<(u64, f64)>,
    sample_seconds: f64,
) -> RunOutput {
    let count = chains.len() as f64;
    let accepted: u64 = chains.iter().map(|c| c.accepted).sum();
    let moments: Vec<_> = chains.iter().map(|c| c.estimates.moments.clone()).collect();
    let pooled = WeightedMoments::pool(&moments);
    let post_sd = pooled.sd();
    let batches: Vec<_> = chains.iter().map(|c| c.estimates.batches.clone()).collect();
    let errors = BatchStatistics::pool(&batches).standard_errors(&pooled.mean, &post_sd);
    let functional_mean = {
        let parts: Vec<_> = chains
            .iter()
            .filter_map(|c| c.estimates.functional.as_ref().map(|f| f.1.clone()))
            .collect();
        (!parts.is_empty()).then(|| WeightedMoments::pool(&parts).mean)
    };
    let (post_mean_mcse, post_sd_mcse) = match errors {
        Some((m, s)) => (Some(m), Some(s)),
        None => (None, None),
    };
    RunOutput {
        acceptance_rate: accepted as f64 / (iterations as f64 * count),
        chains: chains
            .into_iter()
            .map(|c| ChainOutput {
                acceptance_rate: c.accepted as f64 / iterations as f64,
                trace: c.trace,
            })
            .collect(),
        post_mean: pooled.mean,
        post_sd,
        post_mean_mcse,
        post_sd_mcse,
        functional_mean,
        convergence,
        probe_cells,
        sample_seconds,
    }
}

/// Cells on the diagonal i = j = round(k (D - 1) / 4), k = 0..4.
pub fn probe_cells(side: usize) -> [usize; PROBES] {
    std::array::from_fn(|k| {
        let i = ((k * (side - 1)) as f64 / (PROBES - 1) as f64).round() as usize;
        i * side + i
    })
}

/// About ten points per decade from 1 to `last`, always ending at `last`.
pub fn log_spaced(last: u64) -> Vec<u64> {
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

pub fn rms_difference(a: &[f64], b: &[f64]) -> f64 {
    let sum: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    (sum / a.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
    use crate::sampler::spec::SamplerKind;
    use crate::streams::{Purpose, stream};

    fn streams(chains: usize) -> Vec<ChainStreams> {
        (0..chains)
            .map(|c| ChainStreams {
                proposals: stream(3, Purpose::Chain, &format!("c={c}")),
                acceptance: stream(3, Purpose::Acceptance, &format!("c={c}")),
            })
            .collect()
    }

    /// Chain 0's numbers alone, beside two others, and with other block lengths: bit for bit.
    #[test]
    fn a_chain_does_not_depend_on_its_neighbours_or_the_block_length() {
        let prior = KroneckerPrior::new(
            Grid::new(9),
            KernelSpec {
                length_scale: 0.3,
                variance: 1.0,
            },
        )
        .unwrap();
        let observed_cells: Vec<usize> = (0..81).step_by(3).collect();
        let values: Vec<f64> = observed_cells.iter().map(|&c| (c as f64).sin()).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values, 0.5, 0.0);
        for kind in [SamplerKind::Pcn, SamplerKind::Grw] {
            let spec = SamplerSpec {
                kind,
                beta: 0.3,
                iterations: 500,
                burn_in: 50,
                thin: 3,
                chains: 1,
            };
            let request = RunRequest {
                target: Target {
                    prior: &prior,
                    likelihood: &likelihood,
                    observed_cells: &observed_cells,
                },
                kernel: Kernel::new(kind, spec.beta),
                spec: &spec,
                functional: None,
                exact_mean: None,
                progress: None,
            };
            let alone = run_in_blocks(&request, streams(1), 64);
            assert!(alone.chains[0].acceptance_rate > 0.05);
            for (chains, block) in [(3, 1), (3, 7), (1, 1), (2, 500)] {
                let other = run_in_blocks(&request, streams(chains), block);
                assert_eq!(
                    other.chains[0], alone.chains[0],
                    "{chains} chains, block {block}"
                );
            }
        }
    }
}
