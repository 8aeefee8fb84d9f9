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
//! - `joint` ([`joint`]): no alternation: NUTS on the joint posterior of the hyperparameters,
//!   the coefficients and the whitened field, with the separable prior's exact derivative in the
//!   length scale ([`crate::model::hyper::joint`]); `joint-spectral` ([`spectral_joint`]) the
//!   same chain in coordinates partially centred per prior eigenmode
//!   ([`crate::model::hyper::spectral_joint`]).
//!
//! The Metropolis-Hastings updates propose with `sampler.hyper_proposal` ([`proposal`]): a
//! random walk, Haario et al.'s adaptive Metropolis, or Sejdinovic et al.'s kernel-adaptive
//! Metropolis-Hastings, each adapted during burn-in only and frozen after it.
//!
//! The chain ([`chain::HyperChain`]) wraps a field kind whose state owns everything it keeps
//! ([`FieldKernel`]: grw, pcn, elliptical, mala, pcnl), so an accepted update moves the field's
//! state to the new prior ([`super::shared::Retarget`]). Kinds that prepare per target (gpcn,
//! mgrad, laplace_hmc's Laplace fits; NUTS's adapted metric) are not offered: their preparation
//! would go stale with every update.

pub(crate) mod chain;
pub(crate) mod importance;
pub(crate) mod joint;
pub(crate) mod proposal;
pub(crate) mod pseudo_marginal;
pub(crate) mod settings;
pub(crate) mod spectral_joint;
pub(crate) mod surrogate;
pub(crate) mod within_gibbs;

pub use settings::{
    FieldKernel, HyperModel, HyperProposalKind, HyperSettings, HyperUpdate, JointPreconditioner,
};

use super::driver::{RunOutput, RunRequest, run};
use super::kind::Kind;
use super::kinds::SamplerKind;
use super::protocol::{ChainRng, Sampler, StepInfo};
use super::spec::SamplerSpec;
use crate::model::target::Target;

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
        impl SamplerKind {
            /// The field kinds a chain of hyperparameters can alternate with.
            pub const FIELD_KINDS: &'static [SamplerKind] = &[$(SamplerKind::$variant),+];
        }

        /// Run `request`'s chains with the field kind of `spec` and the hyperparameter update of
        /// `spec`, or `None` when the kind cannot host one (see [`SamplerKind::FIELD_KINDS`]).
        pub fn run_with_hyper(
            spec: &SamplerSpec,
            request: &RunRequest,
            hyper: HyperModel,
            rngs: Vec<ChainRng>,
        ) -> Option<RunOutput> {
            match spec.kind() {
                $(SamplerKind::$variant => {
                    let field = <$ty as Kind>::configure(&spec.kind_settings());
                    let chain = chain::HyperChain::new(field, hyper, spec, &request.target);
                    Some(run(&chain, request, rngs))
                })+
                _ => None,
            }
        }
    };
}

impl SamplerKind {
    /// The kinds that move the hyperparameters and the field together (`sampler.hyper =
    /// "joint"`, [`joint`]).
    pub(crate) const JOINT_KINDS: &'static [SamplerKind] = &[SamplerKind::Nuts];
}

field_kernels! {
    Grw => super::grw::Grw,
    Pcn => super::pcn::Pcn,
    Elliptical => super::elliptical::Elliptical,
    Mala => super::mala::Mala,
    Pcnl => super::pcnl::Pcnl,
}
