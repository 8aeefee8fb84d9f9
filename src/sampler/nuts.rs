//! The No-U-Turn Sampler on the whitened field, through the `nuts-rs` crate (the NUTS behind
//! nutpie and PyMC; Hoffman & Gelman 2014, multinomial variant as in Stan, Betancourt 2017).
//!
//! This module owns the bridge, not the algorithm: [`WhitenedDensity`] gives nuts-rs the log
//! posterior density of xi, log pi(xi) = loglik(mean + L xi) - |xi|^2 / 2, and its gradient
//! g(xi) - xi (g the whitened log-likelihood gradient of [`Target`]); [`NutsState`] drives one
//! nuts-rs chain a draw per [`Sampler::step`].
//!
//! Adaptation is nuts-rs's own, during the first `sampler.burn_in` draws: step size by dual
//! averaging towards a mean tree acceptance of 0.8, and a diagonal mass matrix from the
//! variances of the draws over growing windows (nutpie's schedule; see [`Nuts::new`]). The driver's dual
//! averaging does not run for this kind ([`Kind::TUNING`] is `None`): it has no step the driver
//! tunes. After burn-in the step is frozen (nuts-rs jitters it by up to +-10 % per draw, drawn
//! from the chain's stream, which keeps the kernel valid) and the mass matrix is fixed.
//!
//! The integrator ([`Nuts::split`], the kind's own since its version 2): nuts-rs's
//! `ExactNormal` kinetic energy, which splits the Hamiltonian around the gaussian that the
//! diagonal adaptation fits (the draws' means and variances), moves position and velocity
//! together by the exact rotation of that gaussian's flow and integrates only the rest by kicks
//! (the split HMC of Beskos, Pinski, Sanz-Serna & Stuart 2011 and Shahbaba et al. 2014, as
//! [`super::laplace_hmc`] does around the Laplace gaussian). Each map is volume-preserving and
//! reversible and the energy is exact, so the chain is exact as with the leapfrog. On the two
//! 64 x 64 grids no benchmark scores (the Japanese pines and the redwoods, three seeds each;
//! `bench/nuts_integrator.sh`) it took 15 leapfrog steps a draw instead of 19-21, with steps
//! nearly twice as long, and gave 1.24x and 1.49x the worst cell's effective draws per CPU second
//! (medians; 1.18x to 1.60x over the six runs; `bench/results/nuts_integrator.md`). The joint
//! chains ([`Nuts::new`]) keep the leapfrog: there the same change gave 0.73x-1.01x the length
//! scale's effective draws per CPU second on the same two grids (one-off runs, not kept).
//!
//! Randomness: nuts-rs keeps its own ChaCha8 generator (rand 0.10's, the `chacha20` crate),
//! seeded at the chain's first step from four words of the chain's acceptance stream through
//! [`SeedWords`]; the start is the driver's prior draw from the proposal stream, as for every
//! kind. `nuts-rs` is pinned to one version in `Cargo.toml` and its first draws are pinned in
//! `tests/stream_stability.rs`.

use std::collections::HashMap;
use std::convert::Infallible;

use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, KineticEnergyKind,
    Settings,
};

use super::kind::{Kind, KindSettings};
use super::protocol::Position;
use super::protocol::{ChainRng, ChainState, Sampler, StepInfo, StepTuning, TrajectorySummary};
use crate::model::target::{Target, Workspace};

/// NUTS with nuts-rs's diagonal adaptation during the first `tuning_draws` draws.
#[derive(Debug, Clone, Copy)]
pub struct Nuts {
    settings: DiagNutsSettings,
}

impl Nuts {
    /// nuts-rs's defaults (target acceptance 0.8, maximum tree depth 10, its window schedule),
    /// one chain, adapting during the first `tuning_draws` draws, with the mass matrix estimated
    /// from the variance of the draws (Stan's and BlackJAX's estimate) rather than nutpie's
    /// default, which also uses the gradients. Measured on the real 32 x 32 count grids (three
    /// seeds each, 1000 + 1000 draws, 4 chains), the gradient-based estimate left the worst
    /// cell's bulk ESS 1-29 % lower on finpines and 41-49 % lower on lansing, always at the
    /// corner cell (whose field value is the first whitened coordinate alone); per CPU second
    /// the variance estimate gave -2 to +29 % (finpines) and +38 to +65 % (lansing).
    pub fn new(tuning_draws: u64) -> Self {
        Self::with_mass_matrix_window(tuning_draws, None)
    }

    /// As [`Nuts::new`], with the split integrator around the adapted diagonal gaussian (the
    /// module's notes): the `nuts` kind's own.
    pub fn split(tuning_draws: u64) -> Self {
        Self::new(tuning_draws).with_kinetic_energy(KineticEnergyKind::ExactNormal)
    }

    /// These settings with `kinetic` as the trajectories' kinetic energy (and so integrator).
    pub(crate) fn with_kinetic_energy(mut self, kinetic: KineticEnergyKind) -> Self {
        self.settings.trajectory_kind = kinetic;
        self
    }

    /// As [`Nuts::new`], with the mass matrix re-estimated every `window` draws after nuts-rs's
    /// early phase (its `mass_matrix_switch_freq`; `None`: its default, 80).
    pub(crate) fn with_mass_matrix_window(tuning_draws: u64, window: Option<u64>) -> Self {
        let mut adapt_options = DiagNutsSettings::default().adapt_options;
        adapt_options.mass_matrix_options.use_grad_based_estimate = false;
        if let Some(window) = window {
            adapt_options.mass_matrix_switch_freq = window;
        }
        Self {
            settings: DiagNutsSettings {
                num_tune: tuning_draws,
                num_chains: 1,
                adapt_options,
                ..DiagNutsSettings::default()
            },
        }
    }
}

impl Kind for Nuts {
    const TUNING: Option<StepTuning> = None;
    /// 2: the split integrator around the adapted diagonal gaussian ([`Nuts::split`]; 1: the
    /// leapfrog).
    const VERSION: u32 = 2;

    fn configure(settings: &KindSettings) -> Self {
        Self::split(settings.burn_in)
    }
}

/// A log posterior density nuts-rs cannot use: a non-finite value or gradient, as at a field so
/// large that the Poisson rate overflows. nuts-rs treats it as a divergence of the trajectory.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("the log posterior density or its gradient is not finite (log density {log_density})")]
pub(crate) struct NonFiniteDensity {
    pub(crate) log_density: f64,
}

impl nuts_rs::LogpError for NonFiniteDensity {
    fn is_recoverable(&self) -> bool {
        true
    }
}

/// A log posterior density nuts-rs samples, and the chain position each of its points stands
/// for: the whitened field alone ([`WhitenedDensity`]) or the field with the hyperparameters
/// ([`crate::model::hyper::joint::JointDensity`], `sampler.hyper = "joint"`).
pub trait NutsDensity: Clone {
    /// The dimension of a point q.
    fn dim(&self) -> usize;
    /// log pi(q) up to a constant, with its gradient written into `gradient`.
    fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64;
    /// The chain's position at q (its whitened coordinates, field and log-likelihood), with the
    /// inferred hyperparameters there written into `hyperparameters`.
    fn position(&mut self, q: &[f64], hyperparameters: &mut Vec<f64>) -> Position;
}

/// The log posterior density of the whitened coordinates, for nuts-rs.
#[derive(Clone)]
pub struct WhitenedDensity<'t> {
    target: Target<'t>,
    field: Vec<f64>,
    work: Workspace,
}

impl<'t> WhitenedDensity<'t> {
    pub(crate) fn new(target: Target<'t>) -> Self {
        Self {
            field: vec![0.0; target.cells()],
            work: target.workspace(),
            target,
        }
    }
}

impl NutsDensity for WhitenedDensity<'_> {
    fn dim(&self) -> usize {
        self.target.dim()
    }

    /// log pi(xi) = loglik(mean + L xi) - |xi|^2 / 2, with its gradient g(xi) - xi written into
    /// `gradient`.
    fn log_density(&mut self, xi: &[f64], gradient: &mut [f64]) -> f64 {
        self.target.field(xi, &mut self.field, &mut self.work);
        let log_likelihood =
            self.target
                .log_likelihood_and_gradient(&self.field, gradient, &mut self.work);
        let mut squared = 0.0;
        for (g, &x) in gradient.iter_mut().zip(xi) {
            *g -= x;
            squared += x * x;
        }
        log_likelihood - 0.5 * squared
    }

    fn position(&mut self, xi: &[f64], _: &mut Vec<f64>) -> Position {
        Position::new(xi.to_vec(), &self.target, &mut self.work)
    }
}

/// A [`NutsDensity`] as nuts-rs's log density: non-finite values are its recoverable errors.
#[derive(Clone)]
pub(crate) struct Bridge<D>(pub D);

impl<D: NutsDensity> HasDims for Bridge<D> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([("unconstrained_parameter".into(), self.0.dim() as u64)])
    }
}

impl<D: NutsDensity> CpuLogpFunc for Bridge<D> {
    type LogpError = NonFiniteDensity;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn logp(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64, NonFiniteDensity> {
        let log_density = self.0.log_density(position, gradient);
        if log_density.is_finite() && gradient.iter().all(|g| g.is_finite()) {
            Ok(log_density)
        } else {
            Err(NonFiniteDensity { log_density })
        }
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        position: &[f64],
    ) -> Result<Vec<f64>, CpuMathError> {
        Ok(position.to_vec())
    }
}

/// The chain's stream as a `rand` 0.10 generator, for seeding nuts-rs's own: every word is the
/// next 64-bit word of the chain's acceptance stream (a `u32` is the low half of one).
pub(crate) struct SeedWords<'r>(pub &'r mut ChainRng);

impl nuts_rs::rand::TryRng for SeedWords<'_> {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.word() as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.word())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let word = self.0.word().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

type NutsChain<D> = <DiagNutsSettings as Settings>::Chain<CpuMath<Bridge<D>>>;

/// What one draw's trajectory did (nuts-rs's statistics of it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Trajectory {
    tuning: bool,
    depth: u64,
    diverging: bool,
    mean_tree_accept: f64,
    step_size_bar: f64,
    gradients: u64,
}

/// Sums over the draws after tuning, for the chain's [`TrajectorySummary`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TrajectorySums {
    draws: u64,
    depth: u64,
    divergences: u64,
    leapfrog_steps: u64,
    tree_accept: f64,
    step_size: f64,
}

impl TrajectorySums {
    fn add(&mut self, t: &Trajectory) {
        if t.tuning {
            return;
        }
        self.draws += 1;
        self.depth += t.depth;
        self.divergences += u64::from(t.diverging);
        self.leapfrog_steps += t.gradients;
        self.tree_accept += t.mean_tree_accept;
        self.step_size = t.step_size_bar;
    }
}

/// A NUTS chain on density `D`: the nuts-rs chain (made at the first step, when the stream is at
/// hand), the current point q and the chain position it stands for.
pub struct NutsState<D: NutsDensity> {
    settings: DiagNutsSettings,
    density: D,
    chain: Option<NutsChain<D>>,
    q: Vec<f64>,
    position: Position,
    hyperparameters: Vec<f64>,
    step_size: Option<f64>,
    sums: TrajectorySums,
    /// Why nuts-rs could not go on (a start or a draw it refused), once it could not: the chain
    /// then stays where it is and the driver stops it ([`ChainState::failure`]).
    failure: Option<String>,
}

impl Nuts {
    /// A chain of these settings on `density`, at point `q`.
    pub(crate) fn state<D: NutsDensity>(&self, mut density: D, q: Vec<f64>) -> NutsState<D> {
        let mut hyperparameters = Vec::new();
        let position = density.position(&q, &mut hyperparameters);
        NutsState {
            settings: self.settings,
            density,
            chain: None,
            q,
            position,
            hyperparameters,
            step_size: None,
            sums: TrajectorySums::default(),
            failure: None,
        }
    }
}

impl<D: NutsDensity> NutsState<D> {
    /// The current point q.
    pub(crate) fn point(&self) -> &[f64] {
        &self.q
    }

    /// The density the chain samples.
    pub(crate) fn density(&self) -> &D {
        &self.density
    }

    /// The nuts-rs chain, made and started at the current point on first use, or why it could
    /// not be (a start whose density or gradient is not finite).
    fn chain(&mut self, rng: &mut ChainRng) -> Result<&mut NutsChain<D>, String> {
        if self.chain.is_none() {
            let math = CpuMath::new(Bridge(self.density.clone()));
            let mut chain = self
                .settings
                .new_chain(0, math, &mut SeedWords(rng))
                .map_err(|e| format!("nuts-rs rejected its settings: {e}"))?;
            chain.set_position(&self.q).map_err(|e| {
                format!(
                    "NUTS cannot start at the chain's first point (its log density or gradient \
                     is not finite there): {e}"
                )
            })?;
            self.chain = Some(chain);
        }
        Ok(self.chain.as_mut().expect("made above"))
    }

    /// One nuts-rs draw: the new point and what its trajectory did.
    fn draw(&mut self, rng: &mut ChainRng) -> Result<(Box<[f64]>, Trajectory), String> {
        let (q, _, stats, progress) = self
            .chain(rng)?
            .expanded_draw()
            .map_err(|e| format!("NUTS failed: {e}"))?;
        let trajectory = Trajectory {
            tuning: progress.tuning,
            depth: stats.depth,
            diverging: progress.diverging,
            mean_tree_accept: stats.adapt.step_size.mean_tree_accept,
            step_size_bar: stats.adapt.step_size.step_size_bar,
            gradients: progress.num_gradients,
        };
        Ok((q, trajectory))
    }

    /// One transition: a nuts-rs draw, and the chain's position at it. A draw nuts-rs refuses
    /// leaves the chain where it is, with its [`ChainState::failure`] set.
    pub(crate) fn advance(&mut self, rng: &mut ChainRng) -> StepInfo {
        let failed = StepInfo {
            moved: false,
            acceptance_probability: None,
            loglik_evaluations: 0,
            gradient_evaluations: 0,
        };
        if self.failure.is_some() {
            return failed;
        }
        let (q, trajectory) = match self.draw(rng) {
            Ok(draw) => draw,
            Err(reason) => {
                self.failure = Some(reason);
                return failed;
            }
        };
        self.sums.add(&trajectory);
        self.step_size = Some(trajectory.step_size_bar);
        let moved = *q != *self.q;
        if moved {
            self.q.copy_from_slice(&q);
            self.position = self.density.position(&self.q, &mut self.hyperparameters);
        }
        // NUTS has no Metropolis-Hastings acceptance probability: its mean tree acceptance is
        // reported per chain in the trajectory summary.
        StepInfo {
            moved,
            acceptance_probability: None,
            loglik_evaluations: 0,
            gradient_evaluations: u32::try_from(trajectory.gradients).unwrap_or(u32::MAX),
        }
    }
}

impl<D: NutsDensity> ChainState for NutsState<D> {
    fn current(&self) -> &Position {
        &self.position
    }
    /// The adapted step size (before nuts-rs's per-draw jitter), once a draw has been made.
    fn step_size(&self) -> Option<f64> {
        self.step_size
    }
    fn hyperparameters(&self) -> &[f64] {
        &self.hyperparameters
    }
    fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
    fn trajectory(&self) -> Option<TrajectorySummary> {
        let s = &self.sums;
        let per_draw = |total: u64| total as f64 / s.draws.max(1) as f64;
        (s.draws > 0).then(|| TrajectorySummary {
            step_size: s.step_size,
            mean_tree_depth: Some(per_draw(s.depth)),
            mean_leapfrog_steps: per_draw(s.leapfrog_steps),
            divergences: s.divergences,
            mean_tree_accept: Some(s.tree_accept / s.draws as f64),
        })
    }
}

impl Sampler for Nuts {
    type State<'t> = NutsState<WhitenedDensity<'t>>;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> Self::State<'t> {
        self.state(WhitenedDensity::new(*target), xi)
    }

    fn step<'t>(
        &self,
        state: &mut Self::State<'t>,
        _target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        state.advance(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::test_problem::SmallGaussianProblem;

    /// The mass matrix is estimated from the draws' variance (the measured choice documented on
    /// `Nuts::new`), re-estimated every `window` draws when one is given.
    #[test]
    fn the_mass_matrix_comes_from_the_draws_variance() {
        for (nuts, window) in [
            (
                Nuts::new(100),
                DiagNutsSettings::default()
                    .adapt_options
                    .mass_matrix_switch_freq,
            ),
            (Nuts::with_mass_matrix_window(100, Some(250)), 250),
        ] {
            let adapt = &nuts.settings.adapt_options;
            assert!(!adapt.mass_matrix_options.use_grad_based_estimate);
            assert_eq!(adapt.mass_matrix_switch_freq, window);
            assert_eq!(nuts.settings.num_tune, 100);
        }
    }

    /// The point nuts-rs moves is the position fieldmc records, and the trajectories' summary
    /// over the kept draws is consistent: every tree has depth 1 to 10 (nuts-rs's limit) and at
    /// least one leapfrog step per level, and no more divergences than draws; the step size the
    /// chain reports is the adapted one, and none before the first draw.
    #[test]
    fn the_recorded_position_and_the_trajectory_summary_follow_the_chain() {
        let problem = SmallGaussianProblem::new();
        let target = problem.target();
        let nuts = Nuts::new(50);
        let mut rng = ChainRng::keyed(5, "nuts-summary");
        let mut xi = vec![0.0; 25];
        rng.normals(&mut xi);
        let mut state = nuts.init(xi.clone(), &target);
        assert_eq!(state.point(), xi.as_slice());
        assert_eq!(
            state.step_size(),
            None,
            "no step size before the first draw"
        );
        for _ in 0..150 {
            nuts.step(&mut state, &target, &mut rng);
            assert_eq!(state.point(), state.current().xi.as_slice());
        }
        let summary = state.trajectory().expect("100 kept draws");
        let depth = summary.mean_tree_depth.expect("NUTS builds trees");
        assert!((1.0..=10.0).contains(&depth), "{summary:?}");
        assert!(summary.mean_leapfrog_steps >= depth, "{summary:?}");
        assert!(summary.divergences <= 100, "{summary:?}");
        let accept = summary.mean_tree_accept.expect("NUTS builds trees");
        assert!((0.0..=1.0).contains(&accept));
        // The chains table's step size is the one adaptation settled on.
        assert_eq!(state.step_size(), Some(summary.step_size));
        assert!(summary.step_size > 0.0 && summary.step_size.is_finite());
    }
}
