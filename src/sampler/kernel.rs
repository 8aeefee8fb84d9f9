//! The Markov kernels, BlackJAX-style: `init` draws a chain's start, a transition is
//! `log_acceptance` (score a proposal) followed, when accepted, by `move_to_proposal`.
//!
//! Both kernels work in whitened coordinates: the state is xi with u = L xi, the prior of xi is
//! N(0, I), and a proposal needs only L z (one Kronecker product, computed by the caller so that
//! several chains can share one level-3 product) and the field at the M observed cells.
//! - GRW-MH: xi' = xi + beta z, so u' = u + beta L z; the prior term of the ratio is
//!   -(|xi'|^2 - |xi|^2) / 2 = -(beta xi.z + beta^2 |z|^2 / 2).
//! - pCN: xi' = sqrt(1 - beta^2) xi + beta z, which leaves N(0, I) invariant, so the ratio is the
//!   likelihood ratio alone and the acceptance rate does not collapse as the grid is refined.
//!
//! The split lets the caller record the current state's statistics before it is overwritten.

use rand_distr::{Distribution, StandardNormal};

use super::spec::SamplerKind;
use crate::model::likelihood::Likelihood;
use crate::model::prior::KroneckerPrior;
use crate::streams::StreamRng;

/// What a kernel needs of the model.
pub struct Target<'a> {
    pub prior: &'a KroneckerPrior,
    pub likelihood: &'a Likelihood,
    /// The observed cells, in the likelihood's order.
    pub observed_cells: &'a [usize],
}

impl Target<'_> {
    pub fn cells(&self) -> usize {
        self.prior.grid().cells()
    }
}

/// One chain's position.
#[derive(Debug, Clone)]
pub struct ChainState {
    /// Whitened coordinates: u = L xi.
    pub xi: Vec<f64>,
    /// The field.
    pub u: Vec<f64>,
    /// The field at the observed cells.
    pub gu: Vec<f64>,
    pub loglik: f64,
}

/// A scored proposal: the field at the observed cells and its log-likelihood.
pub struct Proposal {
    pub gw: Vec<f64>,
    pub loglik: f64,
}

impl Proposal {
    pub fn new(observed: usize) -> Self {
        Self {
            gw: vec![0.0; observed],
            loglik: 0.0,
        }
    }
}

/// A Markov kernel with its step size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kernel {
    Grw {
        beta: f64,
    },
    Pcn {
        beta: f64,
        contraction: f64,
    },
    /// A deliberately wrong pCN that accepts with the posterior ratio, counting the prior twice
    /// (the proposal already preserves it). A negative control: simulation-based calibration
    /// must reject it. Never offered in a study file.
    #[doc(hidden)]
    PcnPosteriorRatio {
        beta: f64,
        contraction: f64,
    },
}

impl Kernel {
    pub fn new(kind: SamplerKind, beta: f64) -> Self {
        match kind {
            SamplerKind::Grw => Self::Grw { beta },
            SamplerKind::Pcn => Self::Pcn {
                beta,
                contraction: (1.0 - beta * beta).max(0.0).sqrt(),
            },
        }
    }

    /// A start drawn from the prior: xi ~ N(0, I).
    pub fn init(&self, target: &Target, rng: &mut StreamRng) -> ChainState {
        let n = target.cells();
        let xi: Vec<f64> = (0..n).map(|_| StandardNormal.sample(rng)).collect();
        let mut u = vec![0.0; n];
        let mut scratch = vec![0.0; n];
        target.prior.apply_sqrt(&xi, &mut u, &mut scratch);
        let gu: Vec<f64> = target.observed_cells.iter().map(|&c| u[c]).collect();
        let loglik = target.likelihood.log_likelihood(&gu);
        ChainState { xi, u, gu, loglik }
    }

    /// Score the proposal built from standard normals `z` (with `lz` = L z) into `proposal`, and
    /// return the log acceptance ratio.
    pub fn log_acceptance(
        &self,
        state: &ChainState,
        z: &[f64],
        lz: &[f64],
        target: &Target,
        proposal: &mut Proposal,
    ) -> f64 {
        let cells = target.observed_cells;
        match *self {
            Self::Grw { beta } => {
                for ((w, &g), &c) in proposal.gw.iter_mut().zip(&state.gu).zip(cells) {
                    *w = g + beta * lz[c];
                }
                proposal.loglik = target.likelihood.log_likelihood(&proposal.gw);
                let prior_ratio = -(beta * dot(&state.xi, z) + 0.5 * beta * beta * dot(z, z));
                proposal.loglik - state.loglik + prior_ratio
            }
            Self::Pcn { beta, contraction } => {
                for ((w, &g), &c) in proposal.gw.iter_mut().zip(&state.gu).zip(cells) {
                    *w = contraction * g + beta * lz[c];
                }
                proposal.loglik = target.likelihood.log_likelihood(&proposal.gw);
                proposal.loglik - state.loglik
            }
            Self::PcnPosteriorRatio { beta, contraction } => {
                let likelihood_ratio =
                    Self::Pcn { beta, contraction }.log_acceptance(state, z, lz, target, proposal);
                // -(|c xi + beta z|^2 - |xi|^2) / 2
                let xi2 = dot(&state.xi, &state.xi);
                let change = (contraction * contraction - 1.0) * xi2
                    + 2.0 * contraction * beta * dot(&state.xi, z)
                    + beta * beta * dot(z, z);
                likelihood_ratio - 0.5 * change
            }
        }
    }

    /// Move `state` to the proposal scored last by `log_acceptance` with the same `z` and `lz`.
    pub fn move_to_proposal(
        &self,
        state: &mut ChainState,
        z: &[f64],
        lz: &[f64],
        proposal: &Proposal,
    ) {
        let (keep, step) = match *self {
            Self::Grw { beta } => (1.0, beta),
            Self::Pcn { beta, contraction } | Self::PcnPosteriorRatio { beta, contraction } => {
                (contraction, beta)
            }
        };
        for (x, &zk) in state.xi.iter_mut().zip(z) {
            *x = keep * *x + step * zk;
        }
        for (u, &lzk) in state.u.iter_mut().zip(lz) {
            *u = keep * *u + step * lzk;
        }
        state.gu.copy_from_slice(&proposal.gw);
        state.loglik = proposal.loglik;
    }
}

/// Accept with probability min(1, exp(log_ratio)); always consumes one uniform so the stream's
/// position does not depend on the outcome. A NaN ratio rejects.
pub fn accept(log_ratio: f64, rng: &mut StreamRng) -> bool {
    let uniform: f64 = rand::RngExt::random(rng);
    uniform.ln() < log_ratio
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
