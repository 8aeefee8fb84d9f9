//! Hyperparameters inside the chain: the kernel's length scale and variance and the field's mean,
//! inferred under their priors ([`crate::model::hyper`]) by an update that alternates with a
//! field kind's step (`sampler.hyper`).
//!
//! - `within-gibbs` ([`within_gibbs`]): Metropolis-Hastings on the unconstrained hyperparameters
//!   holding the whitened field xi fixed (the non-centred parametrisation): a proposal refactors
//!   the prior (O(D^3) on a Kronecker grid) and moves the field u = m + L(theta) xi with it.
//! - `surrogate-slice` ([`surrogate`]): Murray & Adams (2010), slice sampling the hyperparameters
//!   holding fixed surrogate data g ~ N(u, alpha I) and the field's whitened residual given g,
//!   computed exactly in the eigenbasis of the Kronecker prior.
//! - `pseudo-marginal` ([`pseudo_marginal`]): Metropolis-Hastings on the hyperparameters with an
//!   unbiased importance-sampling estimate of p(data | theta) from the Laplace approximation
//!   (Filippone & Girolami 2014), with the field carried as the selected importance draw so that
//!   the joint chain targets p(theta, xi | data) exactly (Andrieu, Doucet & Holenstein 2010).
//!
//! The Metropolis-Hastings updates propose with `sampler.hyper_proposal` ([`proposal`]): a
//! random walk, Haario et al.'s adaptive Metropolis, or Sejdinovic et al.'s kernel-adaptive
//! Metropolis-Hastings, each adapted during burn-in only and frozen after it.
//!
//! The chain ([`chain::HyperChain`]) wraps a field kind whose state owns everything it keeps
//! ([`FieldKernel`]: grw, pcn, elliptical, mala, pcnl), so an accepted update moves the field's
//! state to the new prior ([`super::position::Retarget`]). Kinds that prepare per target (gpcn,
//! mgrad, laplace_hmc's Laplace fits; NUTS's adapted metric) are not offered: their preparation
//! would go stale with every update.

pub mod chain;
pub mod proposal;
pub mod pseudo_marginal;
pub mod surrogate;
pub mod within_gibbs;

use super::driver::{RunOutput, RunRequest, run};
use super::position::Retarget;
use super::protocol::{ChainRng, Sampler, StepInfo};
use super::{Kind, SamplerKind, SamplerSpec};
use crate::model::hyper::Hyperparameters;
use crate::model::spec::ModelSpec;
use crate::model::target::Target;

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

/// How a job's chains update their hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HyperSettings {
    pub update: HyperUpdate,
    pub proposal: HyperProposalKind,
    /// Importance draws per estimate of the marginal likelihood (pseudo-marginal).
    pub importance_draws: usize,
}

impl Default for HyperSettings {
    fn default() -> Self {
        Self {
            update: HyperUpdate::None,
            proposal: HyperProposalKind::Adaptive,
            importance_draws: 16,
        }
    }
}

impl HyperSettings {
    /// Whether the chains infer hyperparameters.
    pub fn infers(&self) -> bool {
        self.update != HyperUpdate::None
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

macro_rules! field_kernels {
    ($($variant:ident => $ty:ty),+ $(,)?) => {
        $(
            impl FieldKernel for $ty {
                type Owned = <$ty as Sampler>::State<'static>;
                fn init_owned(&self, xi: Vec<f64>, target: &Target) -> Self::Owned {
                    self.init(xi, target)
                }
                fn step_owned(
                    &self,
                    state: &mut Self::Owned,
                    target: &Target,
                    rng: &mut ChainRng,
                ) -> StepInfo {
                    self.step(state, target, rng)
                }
            }
        )+

        /// The field kinds a chain that infers hyperparameters can alternate with.
        pub const FIELD_KINDS: &[SamplerKind] = &[$(SamplerKind::$variant),+];

        /// Run `request`'s chains with the field kind of `spec` and the hyperparameter update of
        /// `spec`, or `None` when the kind cannot host one (see [`FIELD_KINDS`]).
        pub fn run_with_hyper(
            spec: &SamplerSpec,
            request: &RunRequest,
            hyper: HyperModel,
            rngs: Vec<ChainRng>,
        ) -> Option<RunOutput> {
            match spec.kind() {
                $(SamplerKind::$variant => {
                    let field = <$ty as Kind>::configure(spec);
                    let chain = chain::HyperChain::new(field, hyper, spec, &request.target);
                    Some(run(&chain, request, rngs))
                })+
                _ => None,
            }
        }
    };
}

field_kernels! {
    Grw => super::grw::Grw,
    Pcn => super::pcn::Pcn,
    Elliptical => super::elliptical::Elliptical,
    Mala => super::mala::Mala,
    Pcnl => super::pcnl::Pcnl,
}
