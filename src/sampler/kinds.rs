//! The sampler kinds a study can name (`sampler.kind`), each one line in [`sampler_kinds!`]
//! below: its word, its type, and what follows from the type (tuning, rank, whether it is a
//! Markov chain, how to build it).

use super::kind::{Budget, Kind, KindSettings};
use super::protocol::StepTuning;

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
        approximations { $( $(#[$adoc:meta])* $avariant:ident = $aword:literal, version $aversion:literal ),+ $(,)? }
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

            /// The chains, iterations and burn-in the kind runs where a study leaves them out
            /// (an approximation: [`Budget::NO_CHAIN`]).
            pub fn budget(self) -> Budget {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::BUDGET,)+
                    $(SamplerKind::$avariant => Budget::NO_CHAIN),+
                }
            }

            /// Whether the kind keeps a low-rank approximation whose rank `sampler.rank` sets.
            pub fn has_rank(self) -> bool {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::HAS_RANK,)+
                    $(SamplerKind::$avariant => false),+
                }
            }

            /// The version of the kind's draws ([`Kind::VERSION`]; an approximation's, of its
            /// numbers, is declared beside it below).
            pub fn version(self) -> u32 {
                match self {
                    $(SamplerKind::$variant => <$ty as Kind>::VERSION,)+
                    $(SamplerKind::$avariant => $aversion),+
                }
            }

            /// Whether the kind is a Markov chain (else an approximation, with no chains).
            pub fn is_markov_chain(self) -> bool {
                match self {
                    $(SamplerKind::$variant => true,)+
                    $(SamplerKind::$avariant => false),+
                }
            }

            /// Build the kind's sampler from `settings` and hand it to `visitor` (an
            /// approximation goes to [`KindVisitor::approximation`]).
            pub fn visit<V: KindVisitor>(self, settings: &KindSettings, visitor: V) -> V::Output {
                match self {
                    $(SamplerKind::$variant => visitor.visit(<$ty as Kind>::configure(settings)),)+
                    $(SamplerKind::$avariant => visitor.approximation(self)),+
                }
            }
        }
    };
}

sampler_kinds! {
    /// Gaussian random-walk Metropolis-Hastings.
    Grw = "grw" => super::grw::Grw,
    /// Preconditioned Crank-Nicolson.
    Pcn = "pcn" => super::pcn::Pcn,
    /// Elliptical slice sampling.
    Elliptical = "elliptical" => super::elliptical::Elliptical,
    /// Metropolis-adjusted Langevin.
    Mala = "mala" => super::mala::Mala,
    /// pCN-Langevin (infinity-MALA).
    Pcnl = "pcnl" => super::pcnl::Pcnl,
    /// The No-U-Turn Sampler (nuts-rs), adapting step size and a diagonal mass matrix during
    /// burn-in.
    Nuts = "nuts" => super::nuts::Nuts,
    /// Generalised pCN from the Laplace approximation (likelihood-informed, low rank).
    Gpcn = "gpcn" => super::gpcn::Gpcn,
    /// The marginal auxiliary-gradient sampler (Titsias & Papaspiliopoulos 2018).
    Mgrad = "mgrad" => super::mgrad::Mgrad,
    /// Split Hamiltonian Monte Carlo around the Laplace approximation.
    LaplaceHmc = "laplace_hmc" => super::laplace_hmc::LaplaceHmc;
    approximations {
        /// The Laplace approximation: the posterior mode and approximate sds, no chain (version
        /// 2: the spatial field's marginals behind exceedance with covariates in the prior's
        /// leading spectral coordinates where that is cheaper; version 3: those coordinates
        /// exact to 1e-4 nats of evidence instead of 1e-9).
        Laplace = "laplace", version 3,
        /// INLA's nested Laplace approximation: a grid over the inferred hyperparameters, each
        /// cell's marginal a mixture over the grid points (version 2: of simplified Laplace
        /// skew-normals by default, `sampler.inla_strategy`; version 3: the central composite
        /// design from three hyperparameters; version 4: the Laplace gaussian's covariances in
        /// the prior's leading spectral coordinates where that is cheaper; version 5: those
        /// coordinates exact to 1e-4 nats of evidence, and kept from a finite difference's
        /// centre; version 6: on the central composite design the hyperparameters' marginals
        /// the asymmetric gaussian of its stretches and each point weighed by the volume it
        /// stands for), no chain.
        Inla = "inla", version 6,
    }
}
