//! The gaussian family's check of its chains against the exact target: every mean m_i and
//! every covariance S_ij (i <= j) estimated from the kept states of all chains, with its Monte
//! Carlo standard error, as z = (estimate - exact) / MCSE.
//!
//! A covariance is estimated as the mean of (x_i - m_i)(x_j - m_j), centred at the exact mean,
//! so each estimate is the mean of one trace and its MCSE is that trace's
//! ([`crate::diagnostics::mcse_mean`]: sd over sqrt of the split chains' ESS). The check needs
//! every coordinate's trace, so jobs keep them only up to [`MAX_DIMENSION`].

use super::target::Structure;
use crate::diagnostics;

/// Past this dimension a job keeps only x1's trace: the d (d + 1) / 2 covariance traces would
/// cost more memory and time than the chains.
pub(crate) const MAX_DIMENSION: usize = 20;

/// One compared quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct MomentCheck {
    /// "mean 2" or "covariance (1, 3)", coordinates counted from 1.
    pub name: String,
    pub estimate: f64,
    pub exact: f64,
    pub mcse: f64,
}

impl MomentCheck {
    /// (estimate - exact) / MCSE.
    pub fn z(&self) -> f64 {
        (self.estimate - self.exact) / self.mcse
    }
}

/// The means and covariances of `traces` (per chain, per coordinate, the kept states) against
/// the exact `mean` and `structure`; empty when the chains are too short for an MCSE.
pub fn moment_checks(
    mean: &[f64],
    structure: &Structure,
    traces: &[&[Vec<f64>]],
) -> Vec<MomentCheck> {
    let d = mean.len();
    let mut checks = Vec::with_capacity(d + d * (d + 1) / 2);
    for i in 0..d {
        let chains: Vec<&[f64]> = traces.iter().map(|c| c[i].as_slice()).collect();
        checks.extend(check(format!("mean {}", i + 1), &chains, mean[i]));
    }
    for i in 0..d {
        for j in i..d {
            let products: Vec<Vec<f64>> = traces
                .iter()
                .map(|c| {
                    c[i].iter()
                        .zip(&c[j])
                        .map(|(a, b)| (a - mean[i]) * (b - mean[j]))
                        .collect()
                })
                .collect();
            let chains: Vec<&[f64]> = products.iter().map(Vec::as_slice).collect();
            let name = format!("covariance ({}, {})", i + 1, j + 1);
            checks.extend(check(name, &chains, structure.covariance(i, j)));
        }
    }
    checks
}

fn check(name: String, chains: &[&[f64]], exact: f64) -> Option<MomentCheck> {
    let count: usize = chains.iter().map(|c| c.len()).sum();
    let estimate = chains.iter().flat_map(|c| c.iter()).sum::<f64>() / count as f64;
    let mcse = diagnostics::mcse_mean(chains)?;
    Some(MomentCheck {
        name,
        estimate,
        exact,
        mcse,
    })
}

/// The largest |z| of `checks`.
pub fn max_abs_z(checks: &[MomentCheck]) -> Option<f64> {
    checks.iter().map(|c| c.z().abs()).reduce(f64::max)
}
