//! The samplers: Markov kernels on the whitened field behind one protocol, and the driver that
//! runs a job's chains through them.
//!
//! - [`protocol`]: the [`Sampler`] trait (`init` + `step`), the chain state, [`StepInfo`] and the
//!   chain's random streams.
//! - one file per kind: [`grw`], [`pcn`], [`elliptical`], [`mala`], [`pcnl`], [`nuts`] (with the Langevin
//!   step they share in [`langevin`], and the position and pre-drawn prior draws in
//!   [`position`]), [`gpcn`] (from the Laplace approximation), [`mgrad`] (in the prior's
//!   eigenbasis), [`laplace_hmc`] (split HMC around the Laplace approximation); what a kind computes once per
//!   target and shares across chains is cached in [`prepared`].
//! - [`driver`]: iterations, burn-in, thinning, recording, estimates and adaptation ([`adapt`]).
//! - [`spec`]: a job's checked sampler settings.
//!
//! Adding a kind: one file implementing [`Sampler`] and [`Kind`], and one line in
//! [`sampler_kinds!`] below.

pub mod adapt;
pub mod approximation;
pub mod driver;
pub mod elliptical;
pub mod gpcn;
pub mod grw;
pub mod hyper;
pub mod langevin;
pub mod laplace_hmc;
pub mod mala;
pub mod mgrad;
pub mod moments;
pub mod nuts;
pub mod pcn;
pub mod pcnl;
pub mod position;
pub mod prepared;
pub mod protocol;
pub mod spec;

pub use driver::{
    Adaptation, ChainOutput, DrawSettings, Functional, PROBES, RunOutput, RunRequest, Schedule,
    Trace, run,
};
pub use protocol::{ChainRng, ChainState, Notes, Sampler, StepInfo, StepTuning, TrajectorySummary};
pub use spec::{Broken, SamplerSettings, SamplerSpec, SpecError};

/// A sampler kind as a study names it: how to build it from a job's spec, and how its step size
/// is tuned.
pub trait Kind: Sampler + Sized {
    /// The step-size tuning of the kind, or `None` when it has no step size.
    const TUNING: Option<StepTuning>;
    /// Whether the kind keeps a low-rank approximation whose rank a study may set.
    const HAS_RANK: bool = false;
    /// The sampler for `spec`.
    fn configure(spec: &SamplerSpec) -> Self;
}

/// Something to do with a configured sampler of any kind (see [`SamplerKind::visit`]).
pub trait KindVisitor {
    type Output;
    fn visit<S: Kind>(self, sampler: S) -> Self::Output;

    /// A kind that is not a Markov chain ([`SamplerKind::is_markov_chain`]: the Laplace
    /// approximation, INLA). Visitors that can meet one say what they do with it; for the others it is
    /// a caller's error to visit one.
    fn approximation(self, kind: SamplerKind) -> Self::Output
    where
        Self: Sized,
    {
        panic!("{kind} is not a Markov chain: this caller runs samplers only")
    }
}

macro_rules! sampler_kinds {
    (
        $( $(#[$doc:meta])* $variant:ident = $word:literal => $ty:ty ),+ ;
        approximations { $( $(#[$adoc:meta])* $avariant:ident = $aword:literal ),+ $(,)? }
    ) => {
        crate::closed_names! {
            /// The sampler kinds a study can name (`sampler.kind`): the Markov chains, then the
            /// approximations (not Markov chains; run by [`run_kind`] all the same).
            pub enum SamplerKind {
                $( $(#[$doc])* $variant = $word, )+
                $( $(#[$adoc])* $avariant = $aword ),+
            }
        }

        impl SamplerKind {
            /// How the kind's step size is tuned, or `None` when it has none.
            pub fn tuning(self) -> Option<StepTuning> {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::TUNING,)+
                    $(SamplerKind::$avariant => None),+
                }
            }

            /// Whether the kind keeps a low-rank approximation whose rank `sampler.rank` sets.
            pub fn has_rank(self) -> bool {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::HAS_RANK,)+
                    $(SamplerKind::$avariant => false),+
                }
            }

            /// Whether the kind is a Markov chain (else an approximation, with no chains).
            pub fn is_markov_chain(self) -> bool {
                match self {
                    $(SamplerKind::$variant => true,)+
                    $(SamplerKind::$avariant => false),+
                }
            }

            /// Build the kind's sampler from `spec` and hand it to `visitor` (an approximation
            /// goes to [`KindVisitor::approximation`]).
            pub fn visit<V: KindVisitor>(self, spec: &SamplerSpec, visitor: V) -> V::Output {
                match self {
                    $(SamplerKind::$variant => visitor.visit(<$ty as Kind>::configure(spec)),)+
                    $(SamplerKind::$avariant => visitor.approximation(self)),+
                }
            }
        }
    };
}

sampler_kinds! {
    /// Gaussian random-walk Metropolis-Hastings.
    Grw = "grw" => grw::Grw,
    /// Preconditioned Crank-Nicolson.
    Pcn = "pcn" => pcn::Pcn,
    /// Elliptical slice sampling.
    Elliptical = "elliptical" => elliptical::Elliptical,
    /// Metropolis-adjusted Langevin.
    Mala = "mala" => mala::Mala,
    /// pCN-Langevin (infinity-MALA).
    Pcnl = "pcnl" => pcnl::Pcnl,
    /// The No-U-Turn Sampler (nuts-rs), adapting step size and a diagonal mass matrix during
    /// burn-in.
    Nuts = "nuts" => nuts::Nuts,
    /// Generalised pCN from the Laplace approximation (likelihood-informed, low rank).
    Gpcn = "gpcn" => gpcn::Gpcn,
    /// The marginal auxiliary-gradient sampler (Titsias & Papaspiliopoulos 2018).
    Mgrad = "mgrad" => mgrad::Mgrad,
    /// Split Hamiltonian Monte Carlo around the Laplace approximation.
    LaplaceHmc = "laplace_hmc" => laplace_hmc::LaplaceHmc;
    approximations {
        /// The Laplace approximation: the posterior mode and approximate sds, no chain.
        Laplace = "laplace",
        /// INLA's nested Laplace approximation: a grid over the inferred hyperparameters, each
        /// cell's marginal a mixture of the grid points' Laplace gaussians, no chain.
        Inla = "inla",
    }
}

/// Run the chains of `request` with the sampler of `spec`'s kind (for an approximation, compute
/// it instead: a run with no chains).
pub fn run_kind(spec: &SamplerSpec, request: &RunRequest, rngs: Vec<ChainRng>) -> RunOutput {
    struct Runner<'r, 'a> {
        request: &'r RunRequest<'a>,
        rngs: Vec<ChainRng>,
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
                SamplerKind::Inla => approximation::inla_run(self.request),
                _ => unreachable!("{kind} is a Markov chain"),
            }
        }
    }
    spec.kind().visit(spec, Runner { request, rngs })
}

/// A 5 x 5 gaussian problem with every other cell observed and mean 0.3, for the unit tests of
/// kinds whose moves are exact on gaussian posteriors (gpcn, laplace_hmc).
#[cfg(test)]
pub(crate) struct SmallGaussianProblem {
    prior: crate::model::KroneckerPrior,
    likelihood: crate::model::Likelihood,
    cells: Vec<usize>,
}

#[cfg(test)]
impl SmallGaussianProblem {
    pub(crate) fn new() -> Self {
        use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
        let prior =
            KroneckerPrior::new(Grid::new(5), KernelSpec::squared_exponential(0.3, 1.2)).unwrap();
        let cells: Vec<usize> = (0..25).step_by(2).collect();
        let values: Vec<f64> = cells
            .iter()
            .map(|&c| (c as f64 * 0.7).sin() + 0.5)
            .collect();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values, 0.5, 0.0);
        Self {
            prior,
            likelihood,
            cells,
        }
    }

    pub(crate) fn target(&self) -> crate::model::target::Target<'_> {
        crate::model::target::Target {
            prior: &self.prior,
            likelihood: &self.likelihood,
            observed_cells: &self.cells,
            mean: 0.3,
        }
    }
}
