//! The resolved sampler settings of one job: plain, validated data the engine consumes.

/// The Markov kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerKind {
    /// Gaussian random-walk Metropolis-Hastings: w = u + beta L z, posterior ratio.
    Grw,
    /// Preconditioned Crank-Nicolson: w = sqrt(1 - beta^2) u + beta L z, likelihood ratio.
    Pcn,
}

impl SamplerKind {
    pub const ALL: [SamplerKind; 2] = [Self::Grw, Self::Pcn];

    pub fn name(self) -> &'static str {
        match self {
            Self::Grw => "grw",
            Self::Pcn => "pcn",
        }
    }
}

/// How to run the chains of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerSpec {
    pub kind: SamplerKind,
    /// Step size: GRW beta > 0; pCN 0 < beta <= 1.
    pub beta: f64,
    /// Iterations per chain, burn-in included.
    pub iterations: u64,
    /// Leading iterations per chain left out of every estimate and trace.
    pub burn_in: u64,
    /// Keep every `thin`-th post-burn-in state in the traces (estimates use every state).
    pub thin: u64,
    /// Independent chains per job, each with its own stream.
    pub chains: usize,
}
