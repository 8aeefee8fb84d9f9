//! The samplers: Markov kernels on the whitened field behind one protocol, and the driver that
//! runs a job's chains through them.
//!
//! - [`protocol`]: the [`Sampler`] trait (`init` + `step`), the chain state, [`StepInfo`] and the
//!   chain's random streams.
//! - one file per kind: [`grw`] and [`pcn`] (two proposals of one [`random_walk`] sampler),
//!   [`elliptical`], [`mala`], [`pcnl`], [`nuts`] (with the Langevin step they share in
//!   [`langevin`], and the state that follows a changing prior and the pre-drawn prior draws in
//!   [`shared`]), [`gpcn`] (from the Laplace approximation), [`mgrad`] (in the prior's
//!   eigenbasis), [`laplace_hmc`] (split HMC around the Laplace approximation); what a kind
//!   computes once per target and shares across chains is cached in [`prepared`].
//! - [`driver`]: iterations, burn-in, thinning, recording, estimates and adaptation ([`adapt`]).
//! - [`spec`]: a job's checked sampler settings.
//!
//! Adding a kind: one file implementing [`Sampler`] and [`Kind`] ([`kind`]), and one line in
//! the list of [`kinds`].

pub(crate) mod adapt;
pub(crate) mod approximated;
pub(crate) mod approximation;
pub(crate) mod cell_marginals;
pub(crate) mod driver;
pub(crate) mod elliptical;
pub(crate) mod gpcn;
pub(crate) mod grw;
pub mod hyper;
pub(crate) mod inla_check;
pub(crate) mod kind;
pub(crate) mod kinds;
pub(crate) mod langevin;
pub mod laplace_hmc;
pub(crate) mod mala;
pub(crate) mod marginal_check;
pub(crate) mod mgrad;
pub(crate) mod moments;
pub mod nuts;
pub mod pcn;
pub(crate) mod pcnl;
pub(crate) mod prepared;
pub mod protocol;
pub(crate) mod random_walk;
pub(crate) mod schedule;
pub mod shared;
pub(crate) mod spec;

use crate::model::inla::InlaSettings;
pub use crate::model::inla::{InlaIntegration, InlaStrategy};
pub use driver::{
    Adaptation, ChainFailure, ChainOutput, DrawSettings, Functional, KeptSeries, PROBES, RunOutput,
    RunRequest, Schedule, Trace, run,
};
pub use kind::{Budget, Kind};
pub use kinds::{KindVisitor, SamplerKind};
pub use protocol::{
    ChainRng, ChainState, Notes, Position, Sampler, StepInfo, StepTuning, TrajectorySummary,
};
pub use spec::{Broken, SamplerSettings, SamplerSpec, SpecError};

/// Run the chains of `request` with the sampler of `spec`'s kind (for an approximation, compute
/// it instead: a run with no chains).
pub fn run_kind(spec: &SamplerSpec, request: &RunRequest, rngs: Vec<ChainRng>) -> RunOutput {
    struct Runner<'r, 'a> {
        request: &'r RunRequest<'a>,
        rngs: Vec<ChainRng>,
        inla: InlaSettings,
    }
    if let Some(hyper) = request.hyper {
        match spec.hyper().update {
            hyper::HyperUpdate::Joint => {
                let preconditioner = spec.hyper().preconditioner;
                let joint = hyper::joint::JointNuts::new(hyper, spec.burn_in(), preconditioner)
                    .expect("a checked study's joint chain has a root (resolve checks it)");
                return run(&joint, request, rngs);
            }
            hyper::HyperUpdate::JointSpectral => {
                let joint = hyper::spectral_joint::SpectralJointNuts::new(hyper, spec.burn_in());
                return run(&joint, request, rngs);
            }
            _ => {}
        }
    }
    if let Some(hyper) = request.hyper
        && spec.hyper().infers()
    {
        return hyper::run_with_hyper(spec, request, hyper, rngs).expect(
            "a checked spec infers hyperparameters only with a field kind that can host them",
        );
    }
    impl KindVisitor for Runner<'_, '_> {
        type Output = RunOutput;
        fn visit<S: Kind>(self, sampler: S) -> RunOutput {
            run(&sampler, self.request, self.rngs)
        }
        fn approximation(self, kind: SamplerKind) -> RunOutput {
            match kind {
                SamplerKind::Laplace => approximation::laplace_run(self.request),
                SamplerKind::Inla => approximation::inla_run(self.request, self.rngs, self.inla),
                _ => unreachable!("{kind} is a Markov chain"),
            }
        }
    }
    spec.visit(Runner {
        request,
        rngs,
        inla: InlaSettings::for_run(spec.inla_strategy(), spec.inla_integration()),
    })
}

#[cfg(test)]
pub(crate) mod test_problem;
#[cfg(test)]
mod tests;
