//! Split Hamiltonian Monte Carlo with the Laplace approximation as its reference Gaussian
//! (Beskos, Pinski, Sanz-Serna & Stuart 2011, "Hybrid Monte Carlo on Hilbert spaces"; Shahbaba,
//! Lan, Johnson & Neal 2014, "Split Hamiltonian Monte Carlo"): the Hamiltonian counterpart of
//! [`super::gpcn`], which it was added beside because gpcn mixes slowly on real count grids (see
//! `docs/samplers.md`).
//!
//! In whitened coordinates write the target as pi(xi) = exp(Phi(xi)) N(xi; m, Gamma) with
//! N(m, Gamma) the low-rank Laplace approximation of [`super::gpcn::LaplaceGaussian`]
//! (Gamma^-1 = I + V D V^T) and Phi the residual. With the velocity v ~ N(0, Gamma) (momentum
//! Gamma^-1 v) the Hamiltonian H = -log pi(xi) + v^T Gamma^-1 v / 2 splits into the Gaussian part,
//! whose flow is an exact rotation of (xi - m, v) by the elapsed angle, and -Phi, whose flow is a
//! kick v += t Gamma grad Phi. A step of angle h is the two-stage palindrome of Blanes, Casas &
//! Sanz-Serna (2014, "Numerical integrators for the Hybrid Monte Carlo method"): a kick b h, a
//! rotation by h / 2, a kick (1 - 2b) h, a rotation by h / 2, a kick b h, with b = [`BCSS_B`]
//! (version 1 took Strang's half kick, rotation by h, half kick). Both are symplectic and
//! reversible, so exp(-Delta H) is the exact Metropolis-Hastings ratio; the two-stage step costs
//! two gradients where Strang's costs one, and its energy error is so much smaller that on the
//! tuning grids two of its steps through 110 degrees were accepted 98 % of the time where three
//! of Strang's were accepted 91 % (`bench/results/laplace_hmc_tuning.md`). A proposal follows K = ceil(theta / h) steps of theta / K, turning through the
//! angle theta = [`TRAJECTORY_ANGLE`]. Only the residual's gradient is integrated numerically, so the
//! acceptance rate reflects how far the posterior is from its Laplace approximation, not the
//! dimension or the posterior's scales.
//!
//! The angle. On a gaussian posterior a turn through theta maps xi - m to
//! cos(theta) (xi - m) + sin(theta) v: an accepted move correlates a linear function of the field
//! with its last value by cos(theta), and a square (the spread, a tail) by cos(theta)^2. A quarter
//! turn (version 1) makes both zero; 110 degrees (version 2) makes the first -0.34 (antithetic
//! draws: more effective draws of a cell's mean than draws) and the second 0.12. On grids the
//! benchmark does not score (`bench/results/laplace_hmc_tuning.md`: japanesepines and redwood at
//! D = 32 and 64, three seeds) version 2 gave about 1.7x the effective draws of the worst cell's
//! mean per CPU second of version 1, and per draw at least 0.9x its effective draws of the tails
//! and the spread (tail and folded ESS): the rule the angle was chosen by. Larger angles give
//! still more for the mean but less for the spread (115 degrees broke the rule), Strang's
//! integrator at any angle gave less, and jittering the angle gave nothing.
//!
//! Elsewhere the turn is a quarter ([`QUARTER_TURN`]; [`LaplaceHmc::angle_for`]): on grids
//! above [`LONG_TURN_MAX_CELLS`] cells, and where the Laplace Gaussian leaves out directions the
//! data inform (its rank cut at the cap). On bei at 128 x 128 (a tuning grid too) the worst
//! cell's effective draws per draw did not respond to the angle (about 0.3 from 90 to 110
//! degrees, version 1 included), while a quarter turn fits in one two-stage step (two gradients)
//! where 110 degrees needs two: in two runs 110 degrees gave 0.53x and 0.41x version 1's
//! effective draws per CPU second there, a quarter turn 0.87x and 0.95x with more tail and folded
//! ESS per draw (`bench/results/laplace_hmc_tuning.md`, and its first run in
//! `bench/results/history/laplace_hmc_tuning_bei128_first.csv`). Between 64 x 64 and 128 x 128
//! the switch is not measured.
//!
//! grad Phi = grad loglik - m + V D V^T (xi - m), so Gamma grad Phi = (g - m) - V [(D / (1 + D))
//! (V^T (g - m) - s)] with s = V^T (xi - m); s and V^T v are carried through the rotations, so a
//! step costs one field (L), one gradient (L^T) and two products with the N x r matrix V. The
//! step angle h adapts during burn-in (dual averaging) towards an acceptance of 0.9.
//!
//! V lies in the prior's leading spectral block (version 3,
//! [`super::gpcn::LaplaceGaussian::in_prior_block`]): a smooth prior leaves the data almost
//! nothing to inform outside its k^2 leading spectral coordinates (k set by the length scale in
//! units of the window, not by the grid), so the eigenpairs are computed there and V = E W, whose two
//! products cost two D x k products each plus W's k^2 r, where a dense V costs N r and streams
//! through memory. On the tuning grids (`bench/results/laplace_hmc_block.md`) the draws'
//! effective sizes per draw are unchanged to the printed digits (the same subspace to 1e-4) and
//! bei at D = 128 (rank 100) gave 3.95x the effective draws per CPU second; at D = 32 and 64
//! their ranks (24-26) make the dense product the cheaper, and V is expanded and used dense.

use std::f64::consts::PI;
use std::sync::Arc;

use super::gpcn::{DirectionScratch, LaplaceGaussian, LaplaceGaussians, Rank};
use super::kind::{Kind, KindSettings};
use super::protocol::Position;
use super::protocol::{
    ChainRng, ChainState, Notes, Sampler, StepInfo, StepTuning, TrajectorySummary, dot,
};
use crate::model::target::{Target, Workspace};

/// Misfit eigenvalues kept by default: directions the data shrink by at least a third
/// (d / (1 + d) >= 1/3). A direction left out is integrated by the kicks alone, stably while
/// h sqrt(d) stays well below 2, which d < 1/2 allows at every step up to pi/2.
pub(crate) const RANK_THRESHOLD: f64 = 0.5;

/// The angle a trajectory turns through where the long turn pays ([`LaplaceHmc::angle_for`]):
/// 110 degrees (see the module's notes on the angle); the largest angle of any target.
pub const TRAJECTORY_ANGLE: f64 = 11.0 * PI / 18.0;

/// The angle elsewhere: a quarter turn.
pub const QUARTER_TURN: f64 = PI / 2.0;

/// The most cells a grid may have for the 110-degree turn: 64 x 64, the largest tuning grid it
/// was measured on (at 128 x 128 a quarter turn gave 1.6x and 2.3x its effective draws per CPU
/// second in two runs).
pub const LONG_TURN_MAX_CELLS: usize = 64 * 64;

/// The outer kicks' share of a two-stage step: Blanes, Casas & Sanz-Serna's b, which minimises
/// the expected energy error on gaussian targets (their eq. 37, b = 0.21178).
pub const BCSS_B: f64 = 0.21178;

/// The most steps one iteration takes (Stan's cap of 1,023 leapfrog steps at tree depth 10,
/// rounded up; each of ours costs two gradients): a step angle adapted or set below [`MIN_STEP`]
/// would otherwise make one iteration arbitrarily long. A trajectory cut at the cap counts as a
/// divergence.
pub const MAX_LEAPFROG_STEPS: u32 = 1024;

/// The smallest step angle: the trajectory in [`MAX_LEAPFROG_STEPS`] steps. `sampler.beta`
/// below it is refused when a study is checked, and adaptation never goes below it.
pub const MIN_STEP: f64 = TRAJECTORY_ANGLE / MAX_LEAPFROG_STEPS as f64;

/// An energy error above this many nats is a divergence (Stan's threshold): the integrator left
/// the region where it tracks the Hamiltonian, and the proposal is rejected.
const DIVERGENCE_ENERGY: f64 = 1000.0;

/// Split HMC from the Laplace approximation, with its starting step angle h in (0, pi/2].
#[derive(Debug)]
pub(crate) struct LaplaceHmc {
    pub(crate) step: f64,
    /// The angle a trajectory turns through on a grid of at most [`LONG_TURN_MAX_CELLS`] cells
    /// ([`TRAJECTORY_ANGLE`]; other angles are for the tuning experiment,
    /// `bench::lgcp_experiments::experiment_laplace_hmc`).
    pub(crate) angle: f64,
    /// The angle where the long turn was not measured to pay ([`QUARTER_TURN`]).
    pub(crate) quarter_turn: f64,
    /// Each trajectory's angle uniform in angle (1 +- jitter) (0: no jitter, the default; it
    /// gave nothing where measured).
    pub(crate) jitter: f64,
    /// The two-stage step (the default), or Strang's (version 1's, for the tuning experiment).
    pub(crate) two_stage: bool,
    pub(crate) laplace: LaplaceGaussians,
}

impl LaplaceHmc {
    pub(crate) fn new(step: f64, rank: Rank) -> Self {
        Self {
            step,
            angle: TRAJECTORY_ANGLE,
            quarter_turn: QUARTER_TURN,
            jitter: 0.0,
            two_stage: true,
            laplace: LaplaceGaussians::in_prior_block(rank),
        }
    }
}

/// A two-stage step's (kick, rotation) pairs as shares of the step h, each pair followed by a
/// gradient, and the closing kick.
const TWO_STAGE: ([(f64, f64); 2], f64) = ([(BCSS_B, 0.5), (1.0 - 2.0 * BCSS_B, 0.5)], BCSS_B);
/// Strang's step: half a kick, the whole rotation, a gradient, half a kick.
const STRANG: ([(f64, f64); 1], f64) = ([(0.5, 1.0)], 0.5);

impl LaplaceHmc {
    /// The angle of a trajectory on a grid of `cells` cells around `gaussian`: the long turn on
    /// grids of at most [`LONG_TURN_MAX_CELLS`] cells whose Laplace Gaussian keeps every direction
    /// the data inform (no left-out eigenvalue above [`RANK_THRESHOLD`]: the rank was not cut at
    /// its cap), else a quarter turn. A left-out direction the data inform turns faster than the
    /// rotation assumes (frequency sqrt(1 + d)), and on the bei covariates at 32 x 32, whose rank
    /// is cut, the long turn left a cell with R-hat 1.012 where the quarter turn did not.
    fn angle_for(&self, cells: usize, gaussian: &LaplaceGaussian) -> f64 {
        let resolved = gaussian
            .report
            .largest_omitted
            .is_none_or(|d| d < RANK_THRESHOLD);
        if cells <= LONG_TURN_MAX_CELLS && resolved {
            self.angle
        } else {
            self.quarter_turn
        }
    }

    /// The step's (kick, rotation) stages and its closing kick.
    fn stages(&self) -> (&'static [(f64, f64)], f64) {
        if self.two_stage {
            (&TWO_STAGE.0, TWO_STAGE.1)
        } else {
            (&STRANG.0, STRANG.1)
        }
    }
}

impl Kind for LaplaceHmc {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.9,
        max_step: Some(TRAJECTORY_ANGLE),
        min_step: Some(MIN_STEP),
        adapts_by_default: true,
    });
    const HAS_RANK: bool = true;
    /// 3: V from the misfit Hessian compressed to the prior's leading spectral block (2: from
    /// the whole space; two-stage steps, trajectories of 110 degrees, a quarter turn above
    /// 64 x 64 cells or with the rank at its cap, acceptance target 0.9; 1: Strang's steps, a
    /// quarter turn, 0.8).
    const VERSION: u32 = 3;

    fn configure(settings: &KindSettings) -> Self {
        Self::new(settings.step, Rank::of(settings.rank, RANK_THRESHOLD))
    }
}

/// A point of a trajectory with Gamma grad Phi there.
#[derive(Debug, Clone)]
struct Phase {
    position: Position,
    /// s = V^T (xi - m).
    projection: Vec<f64>,
    /// Gamma grad Phi, and V^T of it.
    kick: Vec<f64>,
    kick_projection: Vec<f64>,
}

/// A laplace_hmc chain.
#[derive(Debug, Clone)]
pub(crate) struct LaplaceHmcState {
    gaussian: Arc<LaplaceGaussian>,
    step: f64,
    /// The angle of this chain's trajectories ([`LaplaceHmc::angle_for`] its target).
    angle: f64,
    current: Phase,
    trial: Phase,
    /// The velocity and V^T of it.
    velocity: Vec<f64>,
    velocity_projection: Vec<f64>,
    centred: Vec<f64>,
    gradient: Vec<f64>,
    coefficients: Vec<f64>,
    directions: DirectionScratch,
    work: Workspace,
    /// What the trajectories did since burn-in ended.
    sums: TrajectorySums,
}

/// Sums over the kept iterations' trajectories, for the chain's [`TrajectorySummary`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TrajectorySums {
    draws: u64,
    /// Gradients, each the cost of one leapfrog step (a two-stage step takes two).
    leapfrog_steps: u64,
    divergences: u64,
}

impl ChainState for LaplaceHmcState {
    fn current(&self) -> &Position {
        &self.current.position
    }
    fn step_size(&self) -> Option<f64> {
        Some(self.step)
    }
    fn set_step_size(&mut self, step: f64) {
        self.step = step;
    }
    fn whole_steps_of(&self) -> Option<f64> {
        Some(self.angle)
    }
    fn burn_in_over(&mut self) {
        self.sums = TrajectorySums::default();
    }
    fn trajectory(&self) -> Option<TrajectorySummary> {
        let s = &self.sums;
        (s.draws > 0).then(|| TrajectorySummary {
            step_size: self.step,
            mean_tree_depth: None,
            mean_leapfrog_steps: s.leapfrog_steps as f64 / s.draws as f64,
            divergences: s.divergences,
            mean_tree_accept: None,
        })
    }
}

/// The leapfrog steps of one trajectory turning through `angle` with steps of at most `step`,
/// and whether the cap cut it short (then it takes [`MAX_LEAPFROG_STEPS`] steps of `step`,
/// turning through less than `angle`).
fn leapfrog_steps(angle: f64, step: f64) -> (u32, f64, bool) {
    let wanted = (angle / step).ceil().max(1.0);
    if wanted > f64::from(MAX_LEAPFROG_STEPS) || wanted.is_nan() {
        (MAX_LEAPFROG_STEPS, step, true)
    } else {
        (wanted as u32, angle / wanted, false)
    }
}

/// The field, log-likelihood and Gamma grad Phi of `phase.position.xi` (its projection set).
fn evaluate(
    phase: &mut Phase,
    gaussian: &LaplaceGaussian,
    target: &Target,
    gradient: &mut [f64],
    coefficients: &mut [f64],
    directions: &mut DirectionScratch,
    work: &mut Workspace,
) {
    let position = &mut phase.position;
    target.field(&position.xi, &mut position.field, work);
    target.gather(&position.field, &mut position.observed);
    position.log_likelihood = target.log_likelihood_and_gradient(&position.field, gradient, work);
    for (g, m) in gradient.iter_mut().zip(&gaussian.mode) {
        *g -= m;
    }
    gaussian.project_with(gradient, coefficients, directions);
    for (k, c) in coefficients.iter_mut().enumerate() {
        let d = gaussian.values[k];
        phase.kick_projection[k] = (*c + d * phase.projection[k]) / (1.0 + d);
        *c = d / (1.0 + d) * (*c - phase.projection[k]);
    }
    gaussian.expand_with(coefficients, &mut phase.kick, directions);
    for (k, g) in phase.kick.iter_mut().zip(gradient.iter()) {
        *k = g - *k;
    }
}

impl LaplaceHmcState {
    /// v += t Gamma grad Phi at the trial point.
    fn kick(&mut self, t: f64) {
        for (v, k) in self.velocity.iter_mut().zip(&self.trial.kick) {
            *v += t * k;
        }
        for (v, k) in self
            .velocity_projection
            .iter_mut()
            .zip(&self.trial.kick_projection)
        {
            *v += t * k;
        }
    }

    /// Rotate (xi - m, v) by the angle h.
    #[allow(clippy::needless_range_loop)]
    fn rotate(&mut self, h: f64) {
        let (sin, cos) = h.sin_cos();
        let m = &self.gaussian.mode;
        for k in 0..self.velocity.len() {
            let x = self.trial.position.xi[k] - m[k];
            let v = self.velocity[k];
            self.trial.position.xi[k] = m[k] + cos * x + sin * v;
            self.velocity[k] = cos * v - sin * x;
        }
        for k in 0..self.velocity_projection.len() {
            let (s, v) = (self.trial.projection[k], self.velocity_projection[k]);
            self.trial.projection[k] = cos * s + sin * v;
            self.velocity_projection[k] = cos * v - sin * s;
        }
    }

    /// -log pi(xi) + v^T Gamma^-1 v / 2 at the trial point and velocity.
    fn energy(&self) -> f64 {
        let p = &self.trial.position;
        let quadratic: f64 = self
            .gaussian
            .values
            .iter()
            .zip(&self.velocity_projection)
            .map(|(d, t)| d * t * t)
            .sum();
        -p.log_likelihood
            + 0.5 * dot(&p.xi, &p.xi)
            + 0.5 * (dot(&self.velocity, &self.velocity) + quadratic)
    }
}

impl Sampler for LaplaceHmc {
    type State<'t> = LaplaceHmcState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> LaplaceHmcState {
        let gaussian = self.laplace.of(target);
        let mut work = target.workspace();
        let (dim, r) = (target.dim(), gaussian.rank());
        let position = Position::new(xi, target, &mut work);
        let centred: Vec<f64> = position
            .xi
            .iter()
            .zip(&gaussian.mode)
            .map(|(x, m)| x - m)
            .collect();
        let mut directions = gaussian.direction_scratch();
        let mut projection = vec![0.0; r];
        gaussian.project_with(&centred, &mut projection, &mut directions);
        let mut current = Phase {
            position,
            projection,
            kick: vec![0.0; dim],
            kick_projection: vec![0.0; r],
        };
        let mut gradient = vec![0.0; dim];
        let mut coefficients = vec![0.0; r];
        evaluate(
            &mut current,
            &gaussian,
            target,
            &mut gradient,
            &mut coefficients,
            &mut directions,
            &mut work,
        );
        LaplaceHmcState {
            trial: current.clone(),
            current,
            angle: self.angle_for(target.cells(), &gaussian),
            gaussian,
            step: self.step,
            velocity: vec![0.0; dim],
            velocity_projection: vec![0.0; r],
            centred,
            gradient,
            coefficients,
            directions,
            work,
            sums: TrajectorySums::default(),
        }
    }

    /// The rank and Newton iterations of the last target's Laplace Gaussian.
    fn notes(&self) -> Notes {
        self.laplace.notes()
    }

    fn step<'t>(
        &self,
        state: &mut LaplaceHmcState,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let angle = if self.jitter > 0.0 {
            state.angle * (1.0 + self.jitter * (2.0 * rng.uniform() - 1.0))
        } else {
            state.angle
        };
        let (steps, h, cut) = leapfrog_steps(angle, state.step);
        // v = Gamma^1/2 z: z + V ((1 / sqrt(1 + d) - 1) V^T z), V^T v = V^T z / sqrt(1 + d).
        let gaussian = Arc::clone(&state.gaussian);
        rng.normals(&mut state.centred);
        gaussian.project_with(
            &state.centred,
            &mut state.coefficients,
            &mut state.directions,
        );
        for (k, c) in state.coefficients.iter_mut().enumerate() {
            let root = 1.0 / (1.0 + gaussian.values[k]).sqrt();
            state.velocity_projection[k] = root * *c;
            *c *= root - 1.0;
        }
        gaussian.expand_with(
            &state.coefficients,
            &mut state.velocity,
            &mut state.directions,
        );
        for (v, z) in state.velocity.iter_mut().zip(&state.centred) {
            *v += z;
        }
        state.trial.clone_from(&state.current);
        let start = state.energy();
        let mut finite = true;
        let (stages, last_kick) = self.stages();
        'trajectory: for _ in 0..steps {
            for &(kick, turn) in stages {
                state.kick(kick * h);
                state.rotate(turn * h);
                let LaplaceHmcState {
                    trial,
                    gradient,
                    coefficients,
                    directions,
                    work,
                    ..
                } = state;
                evaluate(
                    trial,
                    &gaussian,
                    target,
                    gradient,
                    coefficients,
                    directions,
                    work,
                );
                if !trial.position.log_likelihood.is_finite() {
                    finite = false;
                    break 'trajectory;
                }
            }
            state.kick(last_kick * h);
        }
        let energy_error = if finite {
            state.energy() - start
        } else {
            f64::INFINITY
        };
        let diverged = energy_error.is_nan() || energy_error > DIVERGENCE_ENERGY;
        let log_ratio = if diverged {
            f64::NEG_INFINITY
        } else {
            -energy_error
        };
        let moved = rng.accept(log_ratio);
        if moved {
            std::mem::swap(&mut state.current, &mut state.trial);
        }
        let sums = &mut state.sums;
        sums.draws += 1;
        let gradients = steps * stages.len() as u32;
        sums.leapfrog_steps += u64::from(gradients);
        sums.divergences += u64::from(diverged || cut);
        StepInfo::metropolis(moved, log_ratio, 0, gradients)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Observed;

    /// On a gaussian posterior at full rank the residual is constant: every trajectory conserves
    /// the energy exactly and is accepted, whatever the step.
    #[test]
    fn full_rank_on_a_gaussian_posterior_conserves_the_energy() {
        for step in [0.3, 1.0, TRAJECTORY_ANGLE] {
            let sampler = LaplaceHmc::new(step, Rank::Fixed(25));
            let name = format!("hmc step {step}");
            crate::sampler::test_problem::assert_every_move_accepted(&sampler, &name, 100, |_| {});
        }
    }

    /// A step below the smallest takes the cap's steps of that step (a shorter turn), and says
    /// the trajectory was cut; at or above it, the quarter turn in ceil(angle / step) steps.
    #[test]
    fn the_leapfrog_steps_stop_at_the_cap() {
        assert_eq!(
            leapfrog_steps(TRAJECTORY_ANGLE, TRAJECTORY_ANGLE),
            (1, TRAJECTORY_ANGLE, false)
        );
        let (steps, h, cut) = leapfrog_steps(TRAJECTORY_ANGLE, 0.3);
        assert_eq!((steps, cut), (7, false));
        assert!((h * 7.0 - TRAJECTORY_ANGLE).abs() < 1e-15);
        let (steps, h, cut) = leapfrog_steps(TRAJECTORY_ANGLE, MIN_STEP);
        assert_eq!((steps, cut), (MAX_LEAPFROG_STEPS, false));
        assert!((h - MIN_STEP).abs() < 1e-15);
        assert_eq!(
            leapfrog_steps(TRAJECTORY_ANGLE, 1e-9),
            (MAX_LEAPFROG_STEPS, 1e-9, true)
        );
        assert_eq!(
            leapfrog_steps(TRAJECTORY_ANGLE, 0.0),
            (MAX_LEAPFROG_STEPS, 0.0, true)
        );
    }

    /// Phi(xi) = log pi(xi) + (xi - m)^T Gamma^-1 (xi - m) / 2, the residual whose flow the
    /// kicks integrate, with log pi(xi) = loglik(mean + L xi) - |xi|^2 / 2 and Gamma^-1 the dense
    /// I + V diag(d) V^T of `gaussian` (built entry by entry, not through `project`/`expand`).
    fn residual(target: &Target, gaussian: &LaplaceGaussian, xi: &[f64]) -> f64 {
        let mut work = target.workspace();
        let mut field = vec![0.0; target.cells()];
        target.field(xi, &mut field, &mut work);
        let centred: Vec<f64> = xi.iter().zip(&gaussian.mode).map(|(x, m)| x - m).collect();
        let vectors = gaussian.expanded_vectors();
        let projection: Vec<f64> = (0..gaussian.rank())
            .map(|k| (0..xi.len()).map(|i| vectors[(i, k)] * centred[i]).sum())
            .collect();
        let misfit: f64 = gaussian
            .values
            .iter()
            .zip(&projection)
            .map(|(d, s)| d * s * s)
            .sum();
        target.log_likelihood(&field, &mut work) - 0.5 * dot(xi, xi)
            + 0.5 * (dot(&centred, &centred) + misfit)
    }

    /// Below full rank (5 of 16 eigenpairs) with a poisson likelihood on a 4 x 4 grid, at the
    /// start and at the points of three trajectories (whose s = V^T (xi - m) is carried through
    /// the rotations, not recomputed): Gamma^-1 times the kick the sampler computed (`evaluate`)
    /// equals grad Phi by central differences, so the velocity update v += t kick is the flow of
    /// -Phi under the mass Gamma^-1 that the rotations assume. At h = 1e-5 the differences err by
    /// h^2 |Phi'''| / 6 (about 1e-10 |Phi'''|) plus rounding of about 1e-16 |Phi| / h (1e-11
    /// |Phi|), far inside the tolerance of 1e-6 of the gradient's largest entry (at least 1);
    /// a term of the kick lost or of the wrong sign misses by the size of that term.
    #[test]
    fn the_kick_below_full_rank_is_gamma_times_the_residual_gradient_on_poisson_counts() {
        assert_kicks_are_the_residual_gradient(4, 0.4, 0.0, Rank::Fixed(5), false);
    }

    /// As above with the rank from the spectrum and V in the prior's leading block: on a 16 x 16
    /// grid at length scale 0.3 with counts about 22 (so many directions are informed) the block
    /// holds under half the coordinates and its products cost less than V's.
    #[test]
    fn the_kick_in_the_prior_block_is_gamma_times_the_residual_gradient() {
        assert_kicks_are_the_residual_gradient(16, 0.3, 20.0, Rank::Auto { threshold: 0.5 }, true);
    }

    /// Poisson counts `base` + 0..4 on a `side` x `side` grid (length scale `length_scale`): the
    /// checks of
    /// [`the_kick_below_full_rank_is_gamma_times_the_residual_gradient_on_poisson_counts`], V
    /// in a prior block (`blocked`) or dense.
    fn assert_kicks_are_the_residual_gradient(
        side: usize,
        length_scale: f64,
        base: f64,
        rank: Rank,
        blocked: bool,
    ) {
        use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
        let prior = KroneckerPrior::new(
            Grid::new(side),
            KernelSpec::squared_exponential(length_scale, 1.0),
        )
        .unwrap();
        let cells: Vec<usize> = (0..side * side).collect();
        let counts: Vec<f64> = cells.iter().map(|&c| base + ((c * 7) % 5) as f64).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Poisson, counts, 0.0, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.3 + (base + 1.0).ln(),
        };
        let sampler = LaplaceHmc::new(0.4, rank);
        let mut rng = ChainRng::keyed(3, "laplace_hmc kick");
        let mut xi = vec![0.0; target.dim()];
        rng.normals(&mut xi);
        let mut state = sampler.init(xi, &target);
        let gaussian = Arc::clone(&state.gaussian);
        assert_eq!(gaussian.block_size().is_some(), blocked);
        assert!(
            (1..target.dim() / 2).contains(&gaussian.rank()),
            "rank {} below the dimension {}",
            gaussian.rank(),
            target.dim()
        );
        let vectors = gaussian.expanded_vectors();
        assert!(
            gaussian.values.iter().all(|&d| d > 0.05),
            "every kept direction shapes the kick: {:?}",
            gaussian.values
        );
        let mut phases = vec![state.current.clone()];
        for _ in 0..3 {
            sampler.step(&mut state, &target, &mut rng);
            phases.push(state.current.clone());
            phases.push(state.trial.clone());
        }
        let mut ends: Vec<&Vec<f64>> = phases.iter().map(|p| &p.position.xi).collect();
        ends.sort_by(|a, b| a.partial_cmp(b).unwrap());
        ends.dedup();
        assert!(ends.len() >= 4, "the start and three trajectories' ends");
        let h = 1e-5;
        let dim = target.dim();
        let mut worst = 0.0f64;
        for (p, phase) in phases.iter().enumerate() {
            let xi = &phase.position.xi;
            let gradient: Vec<f64> = (0..dim)
                .map(|j| {
                    let (mut up, mut down) = (xi.clone(), xi.clone());
                    up[j] += h;
                    down[j] -= h;
                    (residual(&target, &gaussian, &up) - residual(&target, &gaussian, &down))
                        / (2.0 * h)
                })
                .collect();
            // Gamma^-1 kick = kick + V diag(d) V^T kick.
            let kick = &phase.kick;
            let projected: Vec<f64> = (0..gaussian.rank())
                .map(|k| (0..dim).map(|i| vectors[(i, k)] * kick[i]).sum())
                .collect();
            let scale = gradient.iter().fold(1.0f64, |a, g| a.max(g.abs()));
            for i in 0..dim {
                let low_rank: f64 = (0..gaussian.rank())
                    .map(|k| vectors[(i, k)] * gaussian.values[k] * projected[k])
                    .sum();
                let force = kick[i] + low_rank;
                worst = worst.max((force - gradient[i]).abs() / scale);
                assert!(
                    (force - gradient[i]).abs() <= 1e-6 * scale,
                    "point {p}, coordinate {i}: Gamma^-1 kick {force} against grad Phi {}",
                    gradient[i]
                );
            }
            for (carried, projected) in phase.kick_projection.iter().zip(&projected) {
                assert!(
                    (carried - projected).abs() <= 1e-9 * scale,
                    "point {p}: V^T kick carried as {carried} but is {projected}"
                );
            }
        }
        eprintln!(
            "d = {:?}; worst |Gamma^-1 kick - grad Phi| over {} points: {worst:.1e} of the \
             gradient's largest entry",
            gaussian.values,
            phases.len()
        );
    }
}
