//! The sampler protocol, in the shape of BlackJAX (`init` + `step`) and argmin (a solver
//! implements one trait; the executor owns the loop).
//!
//! A sampler is one type implementing [`Sampler`]: [`Sampler::init`] turns a starting position
//! (whitened coordinates) into the chain's state, and [`Sampler::step`] advances that state by one
//! transition of a Markov kernel that leaves the target invariant, drawing only from the chain's
//! [`ChainRng`], and says what it did in a [`StepInfo`]. The sampler value itself is immutable
//! settings; everything that changes along a chain (position, step size, buffers, pre-drawn
//! normals) lives in its state, so chains never share mutable data.
//!
//! The driver ([`super::driver`]) owns everything else: iterations, burn-in, thinning, recording,
//! the estimates, and the adaptation schedule. It never takes an accept decision.

use rand::{Rng, RngExt};

use crate::model::target::{Target, Workspace};
use crate::normals::NormalStream;
use crate::streams::{Purpose, StreamRng, stream};

/// A position in whitened coordinates with what the kinds keep of it.
#[derive(Debug, Clone)]
pub struct Position {
    /// Whitened coordinates.
    pub xi: Vec<f64>,
    /// u = mean + L xi.
    pub field: Vec<f64>,
    /// G u: the field at the observations.
    pub observed: Vec<f64>,
    pub log_likelihood: f64,
}

impl Position {
    /// The position `xi`, its field computed through the target.
    pub fn new(xi: Vec<f64>, target: &Target, work: &mut Workspace) -> Self {
        let mut field = vec![0.0; target.cells()];
        target.field(&xi, &mut field, work);
        let mut observed = vec![0.0; target.observations()];
        target.gather(&field, &mut observed);
        let log_likelihood = target.likelihood.log_likelihood(&observed);
        Self {
            xi,
            field,
            observed,
            log_likelihood,
        }
    }
}

/// What one transition did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInfo {
    /// The chain is at a new position (a Metropolis-Hastings proposal was accepted; a slice
    /// sampler always moves).
    pub moved: bool,
    /// The Metropolis-Hastings acceptance probability min(1, ratio) of this step's proposal,
    /// for kinds that have one: what step-size adaptation tracks.
    pub acceptance_probability: Option<f64>,
    /// Log-likelihood evaluations this step used.
    pub loglik_evaluations: u32,
    /// Gradient evaluations this step used (each also gives the log-likelihood).
    pub gradient_evaluations: u32,
}

impl StepInfo {
    /// A Metropolis-Hastings step: whether it `moved`, its acceptance probability from
    /// `log_ratio`, and the evaluations it used.
    pub(crate) fn metropolis(
        moved: bool,
        log_ratio: f64,
        loglik_evaluations: u32,
        gradient_evaluations: u32,
    ) -> Self {
        Self {
            moved,
            acceptance_probability: Some(acceptance_probability(log_ratio)),
            loglik_evaluations,
            gradient_evaluations,
        }
    }
}

/// How a kind's step size is tuned during burn-in, if it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTuning {
    /// The acceptance rate adaptation aims at by default.
    pub(crate) target_acceptance: f64,
    /// The largest step size the kind admits (pCN: beta <= 1), if bounded.
    pub(crate) max_step: Option<f64>,
    /// The smallest step size the kind admits, if bounded below: where the work of one
    /// iteration grows as the step shrinks (laplace_hmc takes ceil(angle / step) leapfrog steps),
    /// the step whose iteration would exceed the kind's cap on that work.
    pub(crate) min_step: Option<f64>,
    /// Whether the kind adapts by default (false where it would change existing results).
    pub(crate) adapts_by_default: bool,
}

/// A Markov kernel on the whitened coordinates of a [`Target`].
pub trait Sampler: Sync {
    /// One chain's state: its position and whatever the kind carries along the chain. It may
    /// borrow from the sampler and the target for `'t` (a kind that hands the target to a
    /// library keeps it there).
    type State<'t>: ChainState
    where
        Self: 't;

    /// The chain's state at `xi` (whitened coordinates, [`Target::dim`] values).
    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> Self::State<'t>;

    /// The chain's state at its start: [`Sampler::init`] at `xi`, a draw from the prior. A kind
    /// whose state holds more than the field (hyperparameters) draws the rest of its start from
    /// `rng`.
    fn start<'t>(
        &'t self,
        xi: Vec<f64>,
        target: &Target<'t>,
        _rng: &mut ChainRng,
    ) -> Self::State<'t> {
        self.init(xi, target)
    }

    /// One transition from `state`, drawing only from `rng`.
    fn step<'t>(
        &self,
        state: &mut Self::State<'t>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo;

    /// What the kind prepared for the last target it ran on (the rank of a low-rank
    /// approximation, Newton's iterations), for the job's row. Nothing by default.
    fn notes(&self) -> Notes {
        Notes::default()
    }
}

/// What a kind says about its run besides the chains (see [`Sampler::notes`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Notes {
    /// Eigenpairs a low-rank approximation kept.
    pub(crate) rank: Option<usize>,
    /// Newton iterations of a Laplace fit (`None` where it failed).
    pub newton_iterations: Option<usize>,
    /// Why the Laplace fit a kind builds on failed, if it did: the kind then ran with the
    /// prior's geometry (gpcn as plain pCN, laplace_hmc as HMC around N(0, I)), and the job
    /// warns with this cause.
    pub(crate) laplace_error: Option<String>,
}

/// Implements [`ChainState`] for a state that keeps its position and its step size in fields:
/// `chain_state_with_step!(State, position, step)` (a dotted path for a nested position).
macro_rules! chain_state_with_step {
    ($state:ty, $($position:ident).+, $step:ident) => {
        impl $crate::sampler::protocol::ChainState for $state {
            fn current(&self) -> &$crate::sampler::protocol::Position {
                &self.$($position).+
            }
            fn step_size(&self) -> Option<f64> {
                Some(self.$step)
            }
            fn set_step_size(&mut self, step: f64) {
                self.$step = step;
            }
        }
    };
}
pub(crate) use chain_state_with_step;

/// What the driver reads of a chain's state. A state lives and dies on the thread that runs its
/// chain, so it need not be `Send` (nuts-rs's chains hold `Rc`s).
pub trait ChainState {
    /// The chain's current position, with its field and log-likelihood.
    fn current(&self) -> &Position;
    /// The whitened position xi.
    fn position(&self) -> &[f64] {
        &self.current().xi
    }
    /// The field u = mean + L xi at the position (N values).
    fn field(&self) -> &[f64] {
        &self.current().field
    }
    /// The log-likelihood at the position.
    fn log_likelihood(&self) -> f64 {
        self.current().log_likelihood
    }
    /// The step size, for kinds that have one.
    fn step_size(&self) -> Option<f64> {
        None
    }
    /// Set the step size (adaptation); kinds without one ignore it.
    fn set_step_size(&mut self, _step: f64) {}
    /// The angle the chain divides into a whole number of steps (laplace_hmc: ceil(angle / step)
    /// steps of angle / that many), `None` for other kinds. Such a chain's acceptance moves in
    /// jumps between step counts: when the target lies between two, adaptation settles on the
    /// count above it, whose acceptance is above the target and which no step in its band
    /// improves ([`super::adapt::DualAveraging::capped`]).
    fn whole_steps_of(&self) -> Option<f64> {
        None
    }
    /// The values of the hyperparameters the chain infers, in
    /// [`crate::model::hyper::HyperName`] order (empty when it infers none).
    fn hyperparameters(&self) -> &[f64] {
        &[]
    }
    /// Over the kept iterations, the share of hyperparameter updates that moved them, for
    /// chains that infer hyperparameters.
    fn hyper_acceptance_rate(&self) -> Option<f64> {
        None
    }
    /// What the chain's trajectories did after burn-in, for kinds that integrate trajectories
    /// (NUTS, laplace_hmc).
    fn trajectory(&self) -> Option<TrajectorySummary> {
        None
    }
    /// Why the chain cannot go on, once it cannot (a library kind that refused its start or a
    /// draw: NUTS at a point whose density is not finite). The driver stops the chain there and
    /// the job fails with this reason, the chain and the iteration named. `None` by default.
    fn failure(&self) -> Option<&str> {
        None
    }
    /// Told once, before the first kept iteration: a kind that sums what its kept iterations
    /// did (laplace_hmc's trajectories) starts its sums here. Nothing by default.
    fn burn_in_over(&mut self) {}
}

/// The trajectories of a chain's kept iterations, for kinds that build them (NUTS, laplace_hmc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrajectorySummary {
    /// The adapted step size the kept iterations used.
    pub(crate) step_size: f64,
    /// Mean tree depth (NUTS: a trajectory of depth d has at most 2^d - 1 leapfrog steps);
    /// `None` for kinds that build no tree.
    pub(crate) mean_tree_depth: Option<f64>,
    /// Mean leapfrog steps (gradient evaluations) per iteration.
    pub(crate) mean_leapfrog_steps: f64,
    /// Iterations whose trajectory diverged: an energy error beyond the kind's limit, a
    /// non-finite density on the way, or (laplace_hmc) a trajectory cut at the cap on leapfrog
    /// steps.
    pub(crate) divergences: u64,
    /// Mean over iterations of the trajectory's mean acceptance statistic (Stan's
    /// `accept_stat`; what NUTS's step-size adaptation aims at 0.8); `None` without a tree.
    pub(crate) mean_tree_accept: Option<f64>,
}

/// The random streams of one chain: standard normals from its proposal stream and uniforms from
/// its acceptance stream. Kept apart so that a kind may draw normals ahead in bulk without
/// changing any number.
#[derive(Debug, Clone)]
pub struct ChainRng {
    normals: NormalStream,
    uniforms: StreamRng,
}

impl ChainRng {
    /// Streams for one chain: `proposals` gives the start and the normals, `acceptance` the
    /// uniforms.
    pub fn new(proposals: StreamRng, acceptance: StreamRng) -> Self {
        Self {
            normals: NormalStream::new(proposals),
            uniforms: acceptance,
        }
    }

    /// The streams of the chain keyed `key` under study seed `seed`: its proposals and its
    /// acceptance uniforms, each from its own purpose.
    pub fn keyed(seed: u64, key: &str) -> Self {
        Self::new(
            stream(seed, Purpose::Chain, key),
            stream(seed, Purpose::Acceptance, key),
        )
    }

    /// Fill `out` with the next standard normals.
    pub fn normals(&mut self, out: &mut [f64]) {
        self.normals.fill(out);
    }

    /// The next 64-bit word of the acceptance stream (to seed a library's own generator).
    pub(crate) fn word(&mut self) -> u64 {
        self.uniforms.next_u64()
    }

    /// The next uniform in [0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        self.uniforms.random()
    }

    /// Accept with probability min(1, exp(log_ratio)); always consumes one uniform, so the
    /// stream's position does not depend on the outcome. A NaN ratio rejects.
    pub fn accept(&mut self, log_ratio: f64) -> bool {
        self.uniform().ln() < log_ratio
    }
}

/// min(1, exp(log_ratio)), 0 for NaN.
pub(crate) fn acceptance_probability(log_ratio: f64) -> f64 {
    if log_ratio.is_nan() {
        0.0
    } else {
        log_ratio.exp().min(1.0)
    }
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
