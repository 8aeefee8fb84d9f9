//! What the weighted grid says about the hyperparameters and the model.
//!
//! - Each inferred hyperparameter's posterior on its natural scale (length scale, variance,
//!   mean): the weighted mean and sd of its values at the grid points, and its quantiles (any
//!   probability, [`HyperMarginal::quantile`]) from a smooth marginal in unconstrained coordinates, mapped back (the maps are
//!   monotone, so quantiles commute with them). The points' projections theta_k on the
//!   coordinate are irregular, so their step CDF (or any interpolation of it) is coarse;
//!   instead each point's weight is spread as a normal of variance s^2 = delta_z^2 |a_j|^2 / 12
//!   (the variance of its z-cell's uniform mass along the coordinate, a_j the coordinate's row
//!   of V Lambda^-1/2), centred at m + c (theta_k - m) with c = sqrt(1 - s^2 / sigma^2) (m,
//!   sigma^2 the points' weighted mean and variance): Liu & West's (2001) shrinkage, so the
//!   smooth marginal keeps the grid's mean and variance. Its quantile is found by bisection.
//!   Where the points are too few to show the marginal (the central composite design, the mode
//!   alone), it is R-INLA's asymmetric gaussian of the design's stretches instead
//!   ([`super::asymmetric`]), tabulated, its mean, sd and quantiles mapped back.
//! - The model's log evidence: log p(y) = log sum_k exp(log p~_k) + d log delta_z -
//!   log det(H) / 2, the grid's sum times the volume of one z-cell in theta
//!   (delta_z^d |det V Lambda^-1/2|).

use super::InlaIntegration;
use super::asymmetric::Lattice;
use super::design::central_composite;
use super::grid::Grid;
use crate::model::hyper::{HyperName, HyperPrior, HyperPriors};

/// One hyperparameter's posterior from the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct HyperMarginal {
    pub(crate) name: HyperName,
    pub mean: f64,
    pub sd: f64,
    /// Its marginal in unconstrained coordinates, and the prior whose map takes them back.
    shape: Shape,
    prior: HyperPrior,
}

/// A hyperparameter's marginal in unconstrained coordinates: smoothed grid points, or the
/// asymmetric gaussian tabulated.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Smooth(SmoothMarginal),
    Asymmetric(Lattice),
}

impl HyperMarginal {
    /// The `p` quantile (0 < p < 1) on the natural scale: the marginal's, mapped back.
    pub(crate) fn quantile(&self, p: f64) -> f64 {
        let t = match &self.shape {
            Shape::Smooth(smooth) => smooth.quantile(p),
            Shape::Asymmetric(lattice) => lattice.quantile(p),
        };
        self.prior.from_unconstrained(t)
    }
}

/// The posterior of every inferred hyperparameter (in `priors`' order).
pub fn marginals(grid: &Grid, priors: &HyperPriors) -> Vec<HyperMarginal> {
    if grid.integration != InlaIntegration::Grid {
        return asymmetric_marginals(grid, priors);
    }
    let d = grid.dim();
    let weights: Vec<f64> = grid.points.iter().map(|p| p.weight).collect();
    priors
        .iter()
        .enumerate()
        .map(|(index, &(name, prior))| {
            let values: Vec<f64> = grid.points.iter().map(|p| p.values.get(name)).collect();
            let (mean, variance) = weighted_moments(&values, &weights);
            let theta: Vec<f64> = grid.points.iter().map(|p| p.theta[index]).collect();
            let row = &grid.axes[index * d..(index + 1) * d];
            let spread =
                grid.delta_z * row.iter().map(|a| a * a).sum::<f64>().sqrt() / 12f64.sqrt();
            HyperMarginal {
                name,
                mean,
                sd: variance.sqrt(),
                shape: Shape::Smooth(SmoothMarginal::new(&theta, &weights, spread)),
                prior,
            }
        })
        .collect()
}

/// The hyperparameters' marginals where the points are too few to show them (the central
/// composite design, the mode alone): the asymmetric gaussian of the design's stretches
/// ([`super::asymmetric`]; the Hessian's gaussian for the mode alone), its natural-scale mean and
/// sd summed over the lattice, its quantiles mapped (the maps are monotone).
fn asymmetric_marginals(grid: &Grid, priors: &HyperPriors) -> Vec<HyperMarginal> {
    let d = grid.dim();
    let mode = &grid.points[0].theta;
    priors
        .iter()
        .enumerate()
        .map(|(index, &(name, prior))| {
            let row = &grid.axes[index * d..(index + 1) * d];
            let lattice = Lattice::split_normal_sum(mode[index], row, &grid.stretch);
            let mean = lattice.expect(|t| prior.from_unconstrained(t));
            let second = lattice.expect(|t| prior.from_unconstrained(t).powi(2));
            HyperMarginal {
                name,
                mean,
                sd: (second - mean * mean).max(0.0).sqrt(),
                shape: Shape::Asymmetric(lattice),
                prior,
            }
        })
        .collect()
}

/// The weighted mean and variance of `x` (weights summing to 1).
fn weighted_moments(x: &[f64], w: &[f64]) -> (f64, f64) {
    let mean: f64 = w.iter().zip(x).map(|(w, x)| w * x).sum();
    let variance: f64 = w.iter().zip(x).map(|(w, x)| w * (x - mean).powi(2)).sum();
    (mean, variance.max(0.0))
}

/// A mixture of normals of one sd at shrunk centres with the points' mean and variance (see the
/// module doc).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SmoothMarginal {
    centres: Vec<f64>,
    weights: Vec<f64>,
    sd: f64,
}

impl SmoothMarginal {
    /// The points `x` with weights `w` (summing to 1), each spread with sd `spread` (at most
    /// 0.7 of the points' sd, so that the shrinkage keeps half their spread or more).
    pub(crate) fn new(x: &[f64], w: &[f64], spread: f64) -> Self {
        let (mean, variance) = weighted_moments(x, w);
        let sd = spread.min(0.7 * variance.sqrt());
        let shrink = if variance > 0.0 {
            (1.0 - sd * sd / variance).sqrt()
        } else {
            1.0
        };
        Self {
            centres: x.iter().map(|x| mean + shrink * (x - mean)).collect(),
            weights: w.to_vec(),
            sd,
        }
    }

    pub(crate) fn cdf(&self, t: f64) -> f64 {
        if self.sd == 0.0 {
            return self
                .centres
                .iter()
                .zip(&self.weights)
                .filter(|(c, _)| **c <= t)
                .map(|(_, w)| w)
                .sum();
        }
        self.centres
            .iter()
            .zip(&self.weights)
            .map(|(c, w)| w * crate::model::special::phi((t - c) / self.sd))
            .sum()
    }

    /// The `p` quantile, by bisection to 1e-12 of the centres' range (at most
    /// [`MAX_BISECTIONS`] halvings: where the range is far wider than the spread, neighbouring
    /// floats stop the bisection before the tolerance does).
    pub(crate) fn quantile(&self, p: f64) -> f64 {
        let low = self.centres.iter().copied().fold(f64::INFINITY, f64::min);
        let high = self
            .centres
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut low, mut high) = (low - 10.0 * self.sd, high + 10.0 * self.sd);
        let tolerance = 1e-12 * (high - low).max(1e-300);
        for _ in 0..MAX_BISECTIONS {
            let middle = 0.5 * (low + high);
            if high - low <= tolerance || middle <= low || middle >= high {
                break;
            }
            if self.cdf(middle) < p {
                low = middle;
            } else {
                high = middle;
            }
        }
        0.5 * (low + high)
    }
}

/// Halvings of a quantile's bracket: from any finite bracket to neighbouring floats.
const MAX_BISECTIONS: usize = 2_100;

/// log p(y) from the grid (see the module doc).
pub fn log_evidence(grid: &Grid) -> f64 {
    let top = grid
        .points
        .iter()
        .map(|p| p.log_weight())
        .fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = grid
        .points
        .iter()
        .map(|p| (p.log_weight() - top).exp())
        .sum();
    let d = grid.dim() as f64;
    let log_det: f64 = grid.eigenvalues.iter().map(|l| l.ln()).sum();
    // The volume the points' sum stands for: a z-cell's on the grid; on the design the
    // gaussian's integral over the design's sum on a gaussian, (2 pi)^(d/2) / sum_k w_k
    // exp(-|z_k|^2 / 2) (exact where log p~ is gaussian, and with the weights' stretched volumes
    // where it is split normal along the axes); the mode alone, its Laplace approximation.
    let log_volume = match grid.integration {
        InlaIntegration::Ccd => {
            let gaussian: f64 = central_composite(grid.dim())
                .iter()
                .map(|(z, log_w)| (log_w - 0.5 * z.iter().map(|x| x * x).sum::<f64>()).exp())
                .sum();
            0.5 * d * (2.0 * std::f64::consts::PI).ln() - gaussian.ln()
        }
        InlaIntegration::EmpiricalBayes => 0.5 * d * (2.0 * std::f64::consts::PI).ln(),
        _ => d * grid.delta_z.ln(),
    };
    top + sum.ln() + log_volume - 0.5 * log_det
}

#[cfg(test)]
mod tests {
    use super::SmoothMarginal;

    /// A standard normal's grid at spacing 1, |z| <= 4: the smooth marginal keeps its mean and
    /// variance and puts the 5 % quantile within 1.2 % of -1.645 (-1.663: the mixture is a
    /// little heavier-tailed than the normal it smooths).
    #[test]
    fn the_smooth_marginal_of_a_gaussian_grid_has_its_quantiles() {
        let x: Vec<f64> = (-4..=4).map(f64::from).collect();
        let raw: Vec<f64> = x.iter().map(|z| (-0.5 * z * z).exp()).collect();
        let total: f64 = raw.iter().sum();
        let w: Vec<f64> = raw.iter().map(|r| r / total).collect();
        let smooth = SmoothMarginal::new(&x, &w, 1.0 / 12f64.sqrt());
        let q05 = smooth.quantile(0.05);
        assert!((q05 + 1.644_853_6).abs() < 0.02, "{q05}");
        assert!((smooth.quantile(0.5)).abs() < 1e-9);
        assert!((smooth.quantile(0.95) + q05).abs() < 1e-9);
    }
}
