//! The samplers: Markov kernels on the whitened field behind one protocol, and the driver that
//! runs a job's chains through them.
//!
//! - [`protocol`]: the [`Sampler`] trait (`init` + `step`), the chain state, [`StepInfo`] and the
//!   chain's random streams.
//! - one file per kind: [`grw`], [`pcn`], [`elliptical`], [`mala`], [`pcnl`], [`nuts`] (with the Langevin
//!   step they share in [`langevin`], and the position and pre-drawn prior draws in
//!   [`position`]).
//! - [`driver`]: iterations, burn-in, thinning, recording, estimates and adaptation ([`adapt`]).
//! - [`spec`]: a job's checked sampler settings.
//!
//! Adding a kind: one file implementing [`Sampler`] and [`Kind`], and one line in
//! [`sampler_kinds!`] below.

pub mod adapt;
pub mod driver;
pub mod elliptical;
pub mod grw;
pub mod langevin;
pub mod mala;
pub mod moments;
pub mod nuts;
pub mod pcn;
pub mod pcnl;
pub mod position;
pub mod protocol;
pub mod spec;

pub use driver::{
    Adaptation, ChainOutput, DrawSettings, Functional, PROBES, RunOutput, RunRequest, Schedule,
    Trace, run,
};
pub use protocol::{ChainRng, ChainState, Sampler, StepInfo, StepTuning, TrajectorySummary};
pub use spec::{Broken, SamplerSettings, SamplerSpec, SpecError};

/// A sampler kind as a study names it: how to build it from a job's spec, and how its step size
/// is tuned.
pub trait Kind: Sampler + Sized {
    /// The step-size tuning of the kind, or `None` when it has no step size.
    const TUNING: Option<StepTuning>;
    /// The sampler for `spec`.
    fn configure(spec: &SamplerSpec) -> Self;
}

/// Something to do with a configured sampler of any kind (see [`SamplerKind::visit`]).
pub trait KindVisitor {
    type Output;
    fn visit<S: Kind>(self, sampler: S) -> Self::Output;
}

macro_rules! sampler_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $word:literal => $ty:ty ),+ $(,)?) => {
        crate::closed_names! {
            /// The sampler kinds a study can name (`sampler.kind`).
            pub enum SamplerKind {
                $( $(#[$doc])* $variant = $word ),+
            }
        }

        impl SamplerKind {
            /// How the kind's step size is tuned, or `None` when it has none.
            pub fn tuning(self) -> Option<StepTuning> {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::TUNING),+
                }
            }

            /// Build the kind's sampler from `spec` and hand it to `visitor`.
            pub fn visit<V: KindVisitor>(self, spec: &SamplerSpec, visitor: V) -> V::Output {
                match self {
                    $(SamplerKind::$variant => visitor.visit(<$ty as Kind>::configure(spec))),+
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
}

/// Run the chains of `request` with the sampler of `spec`'s kind.
pub fn run_kind(spec: &SamplerSpec, request: &RunRequest, rngs: Vec<ChainRng>) -> RunOutput {
    struct Runner<'r, 'a> {
        request: &'r RunRequest<'a>,
        rngs: Vec<ChainRng>,
    }
    impl KindVisitor for Runner<'_, '_> {
        type Output = RunOutput;
        fn visit<S: Kind>(self, sampler: S) -> RunOutput {
            run(&sampler, self.request, self.rngs)
        }
    }
    spec.kind().visit(spec, Runner { request, rngs })
}
