//! The per-cell function of the field whose posterior mean is reported besides u's: the probit
//! predictive probability, the poisson expected count and the binomial success probability. One definition for every estimate of
//! it (the samplers' running means, the approximations' closed forms, the quadrature's
//! reference), so they compute the same thing cell by cell.

use std::sync::Arc;

use super::special::{logistic, logistic_normal_mean, phi};

/// A per-cell function of the field.
#[derive(Debug, Clone, PartialEq)]
pub enum Functional {
    /// p(t* = 1 | u) = Phi(u / s): the probit predictive probability.
    PositiveProbability { noise_sd: f64 },
    /// exp(u + offset_c): the Poisson expected count, with `offsets` the total log offset of
    /// every grid cell (`-inf` where the cell's exposure is 0: an expected count of 0).
    ExpectedCount { offsets: Arc<[f64]> },
    /// logistic(u + offset_c): the binomial success probability, with `offsets` every grid
    /// cell's logit offset.
    SuccessProbability { offsets: Arc<[f64]> },
}

impl Functional {
    /// The success probability with the same logit offset `offset` on each of `cells` cells.
    pub fn success_probability(offset: f64, cells: usize) -> Self {
        Self::SuccessProbability {
            offsets: vec![offset; cells].into(),
        }
    }

    /// The expected count with the same log offset `offset` on each of `cells` cells.
    pub fn expected_count(offset: f64, cells: usize) -> Self {
        Self::ExpectedCount {
            offsets: vec![offset; cells].into(),
        }
    }

    /// The functional of the field `u` (every cell) into `out`.
    pub(crate) fn apply(&self, u: &[f64], out: &mut [f64]) {
        match self {
            Self::PositiveProbability { noise_sd } => {
                for (o, &x) in out.iter_mut().zip(u) {
                    *o = phi(x / noise_sd);
                }
            }
            Self::ExpectedCount { offsets } => {
                for ((o, &x), offset) in out.iter_mut().zip(u).zip(offsets.iter()) {
                    *o = (x + offset).exp();
                }
            }
            Self::SuccessProbability { offsets } => {
                for ((o, &x), offset) in out.iter_mut().zip(u).zip(offsets.iter()) {
                    *o = logistic(x + offset);
                }
            }
        }
    }

    /// The functional at `cell` where the field is `u`.
    pub(crate) fn at(&self, cell: usize, u: f64) -> f64 {
        match self {
            Self::PositiveProbability { noise_sd } => phi(u / noise_sd),
            Self::ExpectedCount { offsets } => (u + offsets[cell]).exp(),
            Self::SuccessProbability { offsets } => logistic(u + offsets[cell]),
        }
    }

    /// Its expectation at `cell` when the field there is N(m, s^2): exp(m + offset + s^2 / 2),
    /// Phi(m / sqrt(noise_sd^2 + s^2)), and the logistic-normal mean E logistic(m + offset + s z).
    pub(crate) fn gaussian_expectation(&self, cell: usize, m: f64, s: f64) -> f64 {
        match self {
            Self::ExpectedCount { offsets } => (m + offsets[cell] + 0.5 * s * s).exp(),
            Self::PositiveProbability { noise_sd } => phi(m / (noise_sd * noise_sd + s * s).sqrt()),
            Self::SuccessProbability { offsets } => logistic_normal_mean(m + offsets[cell], s),
        }
    }
}
