//! What a hyperparameter update is built from: the study's choice of update and proposal, the
//! model whose hyperparameters it moves, and the field kinds that can carry their state from one
//! prior to the next ([`FieldKernel`]).

use crate::model::hyper::{HyperName, Hyperparameters};
use crate::model::likelihood::Likelihood;
use crate::model::spec::ModelSpec;
use crate::model::target::Target;
use crate::sampler::kind::Kind;
use crate::sampler::protocol::{ChainRng, StepInfo};
use crate::sampler::shared::Retarget;

crate::closed_names! {
    /// How a chain updates the hyperparameters it infers (`sampler.hyper`).
    pub enum HyperUpdate {
        /// Every hyperparameter is fixed (no `model.*_prior` given).
        None = "none",
        /// Metropolis-Hastings holding the whitened field fixed.
        WithinGibbs = "within-gibbs",
        /// Murray & Adams' surrogate-data slice sampler.
        SurrogateSlice = "surrogate-slice",
        /// Metropolis-Hastings on an importance-sampling estimate of the marginal likelihood.
        PseudoMarginal = "pseudo-marginal",
        /// One gradient-based chain (nuts) on the hyperparameters and the field together.
        Joint = "joint",
        /// The same chain in coordinates partially centred per prior eigenmode.
        JointSpectral = "joint-spectral",
    }
}

impl HyperUpdate {
    /// The version of the update's draws, kept apart in the job's key once above 1 (as a kind's
    /// [`crate::sampler::SamplerKind::version`]): pseudo-marginal 2, its chains started at
    /// INLA's mode with its curvature as the proposal's first covariance; 3, that mode found
    /// with INLA's version 5 (the start moves by about 1e-5).
    pub fn version(self) -> u32 {
        match self {
            Self::PseudoMarginal => 3,
            _ => 1,
        }
    }

    /// Whether this update infers hyperparameter `name`: every update but `none` moves the
    /// kernel's hyperparameters and the mean; only the joint chains evaluate the likelihood at a
    /// drawn noise sd (the others hold the likelihood fixed).
    pub fn infers(self, name: HyperName) -> bool {
        match (self, name) {
            (Self::None, _) => false,
            (_, HyperName::NoiseSd) => matches!(self, Self::Joint | Self::JointSpectral),
            _ => true,
        }
    }

    /// The names of the updates that infer every one of `names`.
    pub fn names_inferring(names: &[HyperName]) -> Vec<&'static str> {
        Self::ALL
            .iter()
            .filter(|u| names.iter().all(|&n| u.infers(n)))
            .map(|u| u.name())
            .collect()
    }
}

crate::closed_names! {
    /// The proposal of the Metropolis-Hastings hyperparameter updates
    /// (`sampler.hyper_proposal`).
    pub enum HyperProposalKind {
        /// A gaussian random walk on the unconstrained coordinates, its scale adapted during
        /// burn-in.
        RandomWalk = "random-walk",
        /// Haario, Saksman & Tamminen (2001): the random walk's covariance learned from the
        /// burn-in history.
        Adaptive = "adaptive",
        /// Sejdinovic et al. (2014): a proposal covariance from a kernel embedding of the burn-in
        /// history, shaped to the posterior around the current point.
        KernelAdaptive = "kernel-adaptive",
    }
}

crate::closed_names! {
    /// The joint chain's change of coordinates for the field (`sampler.hyper_preconditioner`).
    pub enum JointPreconditioner {
        /// The Laplace approximation's stiffest directions rescaled to unit scale, fitted halfway
        /// through burn-in ([`super::joint`]).
        Laplace = "laplace",
        /// The whitened field as it is, NUTS's diagonal mass matrix only.
        None = "none",
    }
}

/// How a job's chains update their hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HyperSettings {
    pub(crate) update: HyperUpdate,
    pub(crate) proposal: HyperProposalKind,
    /// Importance draws per estimate of the marginal likelihood (pseudo-marginal).
    pub(crate) importance_draws: usize,
    /// The joint chain's preconditioner of the field (joint; none unless the study asks).
    pub(crate) preconditioner: JointPreconditioner,
}

impl Default for HyperSettings {
    fn default() -> Self {
        Self {
            update: HyperUpdate::None,
            proposal: HyperProposalKind::Adaptive,
            importance_draws: 16,
            preconditioner: JointPreconditioner::None,
        }
    }
}

impl HyperSettings {
    /// Whether the chains infer hyperparameters.
    pub(crate) fn infers(&self) -> bool {
        self.update != HyperUpdate::None
    }

    /// Whether one gradient chain moves the hyperparameters with the field (no alternation).
    pub(crate) fn is_joint(&self) -> bool {
        matches!(self.update, HyperUpdate::Joint | HyperUpdate::JointSpectral)
    }
}

/// What a chain that infers hyperparameters needs of the model besides its starting target: the
/// model (grid, kernel kind, likelihood, the priors in `model.hyper`) and the values the chain
/// starts from (the model's, the mean resolved against the data).
#[derive(Debug, Clone, Copy)]
pub struct HyperModel<'a> {
    pub model: &'a ModelSpec,
    pub start: Hyperparameters,
}

/// A field kind whose chain state owns everything it keeps, so that a hyperparameter update can
/// move it to another prior ([`Retarget`]).
pub trait FieldKernel: Kind + 'static {
    type Owned: Retarget;
    fn init_owned(&self, xi: Vec<f64>, target: &Target) -> Self::Owned;
    fn step_owned(&self, state: &mut Self::Owned, target: &Target, rng: &mut ChainRng) -> StepInfo;
}

/// The surrogate data's variance alpha.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SurrogateNoise {
    pub(crate) alpha: f64,
}

impl SurrogateNoise {
    /// N / sum of the observations' curvatures (see the module docs).
    pub(crate) fn for_target(target: &Target) -> Self {
        let total: f64 = match target.likelihood {
            Likelihood::Gaussian { values, noise_sd } => values.len() as f64 / noise_sd.powi(2),
            Likelihood::Probit { labels, noise_sd } => {
                labels.len() as f64 * 2.0 / (std::f64::consts::PI * noise_sd.powi(2))
            }
            Likelihood::Poisson { counts, .. } => counts.iter().map(|c| c + 0.5).sum(),
            // n p (1 - p) at each cell's share, a half success and failure added as the
            // poisson's half count is.
            Likelihood::Binomial {
                successes, trials, ..
            } => successes
                .iter()
                .zip(trials)
                .map(|(k, n)| (k + 0.5) * (n - k + 0.5) / (n + 1.0).powi(2) * n)
                .sum(),
        };
        let alpha = if total > 0.0 {
            target.cells() as f64 / total
        } else {
            1.0
        };
        Self { alpha }
    }
}
