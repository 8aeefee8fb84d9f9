//! Metropolis-Hastings over partitions: the flip proposals, their exact Hastings ratios, and a
//! chain's run (temperature schedule, trace of F, best partition).
//!
//! Target: p(Z) proportional to exp(-F(Z) / T) over partitions into `regions` non-empty
//! connected regions. One step proposes moving one area a from its region s into an adjacent
//! region t; a move that would empty or disconnect s is rejected (the chain stays), which keeps
//! detailed balance because such partitions are outside the support.
//!
//! * `flip`: (a, t) uniform over the boundary pairs B(Z); q(Z -> Z') = 1 / |B(Z)|. The reverse
//!   move (a, s) is a boundary pair of Z' (a still touches s), so the ratio is
//!   |B(Z)| / |B(Z')|, with |B(Z')| counted on the proposed partition.
//! * `softmax-flip`: region r with probability pi_r(Z) proportional to exp(e_r / (tau * mean e))
//!   over the regions with a boundary pair (e_r the region's task error), then (a, t) uniform
//!   over r's boundary pairs B_r(Z); q = pi_s(Z) / |B_s(Z)|, reverse pi_t(Z') / |B_t(Z')| with the
//!   errors refitted on Z'.
//! * `learned-flip`: see [`super::learned`]; a search heuristic with the Metropolis rule and no
//!   Hastings correction, so its visits do not follow the Boltzmann distribution.

use rand::RngExt;

use super::learned::FlipLearner;
use super::state::Partition;
use super::task::{Evaluation, Evaluator, Problem, RegionStats, mean_error};
use crate::streams::StreamRng;

crate::closed_names! {
    /// The move of a partition chain.
    pub enum FlipKind {
        /// A uniform boundary pair (naive).
        Flip = "flip",
        /// A region by the softmax of its error, then one of its boundary pairs.
        SoftmaxFlip = "softmax-flip",
        /// The best of sampled candidates under an online-trained Q-function (not reversible).
        LearnedFlip = "learned-flip",
    }
}

impl FlipKind {
    /// Whether the chain targets exp(-F / T) exactly (a reversible proposal with its Hastings
    /// ratio).
    pub(crate) fn is_reversible(self) -> bool {
        !matches!(self, FlipKind::LearnedFlip)
    }
}

/// A geometric temperature schedule from `start` (first iteration) to `end` (last).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub start: f64,
    pub end: f64,
}

impl Schedule {
    pub fn fixed(t: f64) -> Self {
        Self { start: t, end: t }
    }

    /// The temperature at 0-based `iteration` of `iterations`.
    pub(crate) fn at(&self, iteration: usize, iterations: usize) -> f64 {
        if self.start == self.end || iterations <= 1 {
            return self.start;
        }
        let share = iteration as f64 / (iterations - 1) as f64;
        self.start * (self.end / self.start).powf(share)
    }
}

/// How a chain moves.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSettings {
    pub kind: FlipKind,
    pub iterations: usize,
    pub temperature: Schedule,
    /// tau of `softmax-flip`.
    pub softmax_temperature: f64,
    /// Candidate flips scored per `learned-flip` step.
    pub candidates: usize,
    /// Step size of the Q-function's normalised least-mean-squares update.
    pub learning_rate: f64,
    /// Share of `learned-flip` steps that take a random valid candidate instead of the best.
    pub exploration: f64,
    /// Record F every this many iterations.
    pub trace_every: usize,
}

impl Default for ChainSettings {
    fn default() -> Self {
        Self {
            kind: FlipKind::Flip,
            iterations: 10_000,
            temperature: Schedule::fixed(1.0),
            softmax_temperature: 1.0,
            candidates: 30,
            learning_rate: 0.05,
            exploration: 0.1,
            trace_every: 10,
        }
    }
}

/// Counts of a chain's moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveCounts {
    pub proposed: usize,
    /// Proposals that would have emptied or split their source region (rejected).
    pub invalid: usize,
    pub(crate) accepted: usize,
}

impl MoveCounts {
    pub fn acceptance_rate(&self) -> f64 {
        self.accepted as f64 / self.proposed.max(1) as f64
    }
}

/// One chain's state: partition, region sums, F and the buffers of a proposal.
pub struct Chain<'p> {
    problem: &'p Problem,
    settings: ChainSettings,
    partition: Partition,
    stats: RegionStats,
    evaluator: Evaluator,
    current: Evaluation,
    proposed: Evaluation,
    learner: FlipLearner,
    pub counts: MoveCounts,
}

impl<'p> Chain<'p> {
    /// A chain started at `labels` (a valid partition into `problem.regions` regions).
    pub fn new(problem: &'p Problem, labels: &[u32], settings: ChainSettings) -> Self {
        let partition = Partition::new(&problem.graph, labels, problem.regions);
        let stats = RegionStats::new(problem, labels);
        let mut evaluator = Evaluator::new(problem);
        let mut current = Evaluation::default();
        evaluator.evaluate(problem, &stats, &mut current);
        Self {
            problem,
            partition,
            stats,
            evaluator,
            current,
            proposed: Evaluation::default(),
            learner: FlipLearner::new(),
            settings,
            counts: MoveCounts::default(),
        }
    }

    pub fn labels(&self) -> &[u32] {
        self.partition.labels()
    }

    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    pub fn f(&self) -> f64 {
        self.current.f
    }

    /// The Q-function of `learned-flip` (untouched by the other kinds).
    #[cfg(test)]
    pub(crate) fn learner(&self) -> &FlipLearner {
        &self.learner
    }

    /// One Metropolis-Hastings step at 0-based `iteration`; true when the move was accepted.
    pub fn step(
        &mut self,
        iteration: usize,
        proposals: &mut StreamRng,
        acceptance: &mut StreamRng,
    ) -> bool {
        let temperature = self
            .settings
            .temperature
            .at(iteration, self.settings.iterations);
        self.counts.proposed += 1;
        let choice = match self.settings.kind {
            FlipKind::Flip => self.propose_uniform(proposals),
            FlipKind::SoftmaxFlip => self.propose_softmax(proposals),
            FlipKind::LearnedFlip => self.propose_learned(proposals),
        };
        let uniform: f64 = acceptance.random();
        let Some((a, t, log_q_forward)) = choice else {
            self.counts.invalid += 1;
            return false;
        };
        self.try_move(a, t, log_q_forward, temperature, uniform)
    }

    /// (a, t) uniform over B(Z), checked; with log q(Z -> Z').
    fn propose_uniform(&mut self, rng: &mut StreamRng) -> Option<(usize, u32, f64)> {
        let total = self.partition.pair_count();
        if total == 0 {
            return None;
        }
        let (a, t) = self.partition.pair_at(rng.random_range(0..total));
        self.partition
            .check_flip(&self.problem.graph, a as usize)
            .ok()?;
        Some((a as usize, t, -(total as f64).ln()))
    }

    fn propose_softmax(&mut self, rng: &mut StreamRng) -> Option<(usize, u32, f64)> {
        let log_pi = softmax_log_probabilities(
            &self.partition,
            &self.current.errors,
            self.settings.softmax_temperature,
        );
        let s = sample_log_probabilities(&log_pi, rng.random());
        let pairs = self.partition.pairs_of(s);
        let (a, t) = pairs[rng.random_range(0..pairs.len())];
        let log_q = log_pi[s] - (pairs.len() as f64).ln();
        self.partition
            .check_flip(&self.problem.graph, a as usize)
            .ok()?;
        Some((a as usize, t, log_q))
    }

    fn propose_learned(&mut self, rng: &mut StreamRng) -> Option<(usize, u32, f64)> {
        let (a, t) = self.learner.choose(
            self.problem,
            &mut self.partition,
            &self.stats,
            &self.current,
            self.settings.candidates,
            self.settings.exploration,
            rng,
        )?;
        Some((a, t, 0.0))
    }

    /// Evaluate the move of a into t, apply it, and keep it with the Metropolis-Hastings rule.
    fn try_move(
        &mut self,
        a: usize,
        t: u32,
        log_q_forward: f64,
        temperature: f64,
        uniform: f64,
    ) -> bool {
        let s = self.partition.region_of(a);
        let saved = self.stats.save(s as usize, t as usize);
        self.stats.add(self.problem, a, s as usize, -1.0);
        self.stats.add(self.problem, a, t as usize, 1.0);
        self.evaluator
            .evaluate(self.problem, &self.stats, &mut self.proposed);
        self.partition.flip(&self.problem.graph, a, t);
        let delta = self.proposed.f - self.current.f;
        let log_q_reverse = match self.settings.kind {
            FlipKind::Flip => -(self.partition.pair_count() as f64).ln(),
            FlipKind::SoftmaxFlip => {
                let log_pi = softmax_log_probabilities(
                    &self.partition,
                    &self.proposed.errors,
                    self.settings.softmax_temperature,
                );
                log_pi[t as usize] - (self.partition.pairs_of(t as usize).len() as f64).ln()
            }
            FlipKind::LearnedFlip => {
                let scale = mean_error(&self.current.errors);
                self.learner
                    .learn(delta / scale, self.settings.learning_rate);
                0.0
            }
        };
        let log_alpha = -delta / temperature + log_q_reverse - log_q_forward;
        if uniform.ln() < log_alpha {
            std::mem::swap(&mut self.current, &mut self.proposed);
            self.counts.accepted += 1;
            true
        } else {
            self.partition.flip(&self.problem.graph, a, s);
            self.stats.restore(&saved);
            false
        }
    }
}

/// log pi_r: softmax of e_r / (tau * mean e) over the regions with at least one boundary pair;
/// -infinity for the others.
pub(crate) fn softmax_log_probabilities(
    partition: &Partition,
    errors: &[f64],
    tau: f64,
) -> Vec<f64> {
    let scale = tau * mean_error(errors);
    let logits: Vec<f64> = (0..partition.region_count())
        .map(|r| {
            if partition.pairs_of(r).is_empty() {
                f64::NEG_INFINITY
            } else {
                errors[r] / scale
            }
        })
        .collect();
    let top = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_sum = top + logits.iter().map(|&l| (l - top).exp()).sum::<f64>().ln();
    logits.into_iter().map(|l| l - log_sum).collect()
}

/// The index whose cumulative probability first exceeds `uniform` (the last possible one when
/// rounding leaves the sum just under it).
fn sample_log_probabilities(log_p: &[f64], uniform: f64) -> usize {
    let mut cumulative = 0.0;
    let mut last = 0;
    for (r, &lp) in log_p.iter().enumerate() {
        if lp == f64::NEG_INFINITY {
            continue;
        }
        last = r;
        cumulative += lp.exp();
        if uniform < cumulative {
            return r;
        }
    }
    last
}

/// One point of a chain's F trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TracePoint {
    /// 0 = the start; k = after k iterations.
    pub(crate) iteration: usize,
    pub(crate) f: f64,
    pub(crate) temperature: f64,
}

/// A partition with its scores, recomputed from scratch.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredPartition {
    pub labels: Vec<u32>,
    pub evaluation: Evaluation,
    /// Region MAE cross-validated over regions.
    pub cv_mae: f64,
}

/// Score `labels` by F, the training region MAE and the cross-validated one.
pub fn score_partition(problem: &Problem, labels: &[u32]) -> ScoredPartition {
    let stats = RegionStats::new(problem, labels);
    let mut evaluator = Evaluator::new(problem);
    let mut evaluation = Evaluation::default();
    evaluator.evaluate(problem, &stats, &mut evaluation);
    let cv_mae = evaluator.cross_validated_mae(problem, &stats, labels);
    ScoredPartition {
        labels: labels.to_vec(),
        evaluation,
        cv_mae,
    }
}

/// What a chain's run gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainRecord {
    pub(crate) start: ScoredPartition,
    pub(crate) last: ScoredPartition,
    pub best: ScoredPartition,
    pub(crate) counts: MoveCounts,
    pub(crate) trace: Vec<TracePoint>,
}

/// Run a chain from `start` for `settings.iterations` steps.
pub fn run_chain(
    problem: &Problem,
    start: &[u32],
    settings: &ChainSettings,
    proposals: &mut StreamRng,
    acceptance: &mut StreamRng,
) -> ChainRecord {
    let mut chain = Chain::new(problem, start, settings.clone());
    let every = settings.trace_every.max(1);
    let mut trace = vec![TracePoint {
        iteration: 0,
        f: chain.f(),
        temperature: settings.temperature.at(0, settings.iterations),
    }];
    let (mut best_f, mut best_labels) = (chain.f(), start.to_vec());
    for k in 0..settings.iterations {
        if chain.step(k, proposals, acceptance) && chain.f() < best_f {
            best_f = chain.f();
            best_labels.copy_from_slice(chain.labels());
        }
        if (k + 1) % every == 0 || k + 1 == settings.iterations {
            trace.push(TracePoint {
                iteration: k + 1,
                f: chain.f(),
                temperature: settings.temperature.at(k, settings.iterations),
            });
        }
    }
    ChainRecord {
        start: score_partition(problem, start),
        last: score_partition(problem, chain.labels()),
        best: score_partition(problem, &best_labels),
        counts: chain.counts,
        trace,
    }
}
