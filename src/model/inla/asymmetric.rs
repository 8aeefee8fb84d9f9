//! The hyperparameters' marginals where the points are too few to show them (the central
//! composite design, the mode alone): R-INLA's asymmetric gaussian (Rue, Martino & Chopin 2009,
//! section 6.5).
//!
//! In the standardised coordinates z of the mode's Hessian (theta = mode + A z, A = V
//! Lambda^-1/2, [`super::grid`]) each z_k is taken split normal, of sd s_k- below 0 and s_k+
//! above, the stretches the design measured along its axis (1 and 1 for the mode alone, where
//! this is the Hessian's gaussian), and the z_k independent. A hyperparameter's unconstrained
//! coordinate theta_j = mode_j + sum_k a_jk z_k is then a sum of independent split normals: a_jk
//! z_k is split normal of sds |a_jk| s_k- and |a_jk| s_k+ (sides swapped where a_jk < 0). Its
//! distribution is tabulated ([`Lattice`]): each term's masses on the cells of a common lattice
//! (spacing [`CELLS_PER_SD`]-th of the largest term's sd, out to [`REACH`] sds on each side),
//! from its closed-form CDF, convolved term by term. A skewed posterior (a length scale on sparse
//! data, whose log is still right-skewed) so keeps its skew in the mean, the sd and the
//! quantiles, where the Hessian's gaussian puts its mean at the mode.

use crate::model::special::phi;

/// Lattice cells per sd of the largest term: the lattice's variance error is (1 / 100)^2 / 12 of
/// that sd's square per term.
const CELLS_PER_SD: f64 = 100.0;

/// How far each term's masses reach, in its side's sds (the mass beyond: Phi(-10) ~ 8e-24).
const REACH: f64 = 10.0;

/// A distribution tabulated on a lattice: `masses[i]` (summing to 1) spread uniformly over the
/// cell of width `step` centred at `origin + i step` (its CDF piecewise linear).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lattice {
    origin: f64,
    step: f64,
    masses: Vec<f64>,
}

impl Lattice {
    /// The distribution of `centre + sum_k a_k z_k`, z_k independent split normals of sds
    /// `stretch[k] = [below, above]` (a point mass at `centre` when every a_k is 0).
    pub(crate) fn split_normal_sum(centre: f64, a: &[f64], stretch: &[[f64; 2]]) -> Self {
        // Each term's sds below and above 0.
        let terms: Vec<[f64; 2]> = a
            .iter()
            .zip(stretch)
            .filter(|(a, _)| **a != 0.0)
            .map(|(&a, &[below, above])| {
                let (below, above) = (a.abs() * below, a.abs() * above);
                if a > 0.0 {
                    [below, above]
                } else {
                    [above, below]
                }
            })
            .collect();
        let widest = terms.iter().flatten().copied().fold(0.0f64, f64::max);
        if widest == 0.0 {
            return Self {
                origin: centre,
                step: 0.0,
                masses: vec![1.0],
            };
        }
        let step = widest / CELLS_PER_SD;
        let mut sum = Self {
            origin: centre,
            step,
            masses: vec![1.0],
        };
        for &[below, above] in &terms {
            sum = sum.convolve(&Self::split_normal(below, above, step));
        }
        // The mass beyond the terms' reach is left out: the rest is renormalised once.
        let total: f64 = sum.masses.iter().sum();
        sum.masses.iter_mut().for_each(|m| *m /= total);
        sum
    }

    /// One split normal's cell masses (sds `below` and `above` of 0) on the lattice of spacing
    /// `step` through 0.
    fn split_normal(below: f64, above: f64, step: f64) -> Self {
        let low = -(REACH * below / step).ceil() as i64;
        let high = (REACH * above / step).ceil() as i64;
        let cdf = |y: f64| {
            let total = below + above;
            if y < 0.0 {
                2.0 * below / total * phi(y / below)
            } else {
                below / total + 2.0 * above / total * (phi(y / above) - 0.5)
            }
        };
        let masses = (low..=high)
            .map(|i| cdf((i as f64 + 0.5) * step) - cdf((i as f64 - 0.5) * step))
            .collect();
        Self {
            origin: low as f64 * step,
            step,
            masses,
        }
    }

    /// The distribution of the sum of independent draws of `self` and `other` (same step).
    fn convolve(&self, other: &Self) -> Self {
        let mut masses = vec![0.0; self.masses.len() + other.masses.len() - 1];
        for (i, a) in self.masses.iter().enumerate() {
            for (j, b) in other.masses.iter().enumerate() {
                masses[i + j] += a * b;
            }
        }
        Self {
            origin: self.origin + other.origin,
            step: self.step,
            masses,
        }
    }

    /// E[g(X)], X at its cells' centres.
    pub(crate) fn expect(&self, g: impl Fn(f64) -> f64) -> f64 {
        self.masses
            .iter()
            .enumerate()
            .map(|(i, m)| m * g(self.origin + i as f64 * self.step))
            .sum()
    }

    /// The `p` quantile (0 < p < 1): the point where the piecewise-linear CDF reaches p.
    pub(crate) fn quantile(&self, p: f64) -> f64 {
        let mut reached = 0.0;
        for (i, &m) in self.masses.iter().enumerate() {
            if m > 0.0 && reached + m >= p {
                let low = self.origin + (i as f64 - 0.5) * self.step;
                return low + self.step * ((p - reached) / m).clamp(0.0, 1.0);
            }
            reached += m;
        }
        self.origin + (self.masses.len() as f64 - 0.5) * self.step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard normal's quantile, by bisection of [`phi`] (tests only).
    fn phi_inverse(p: f64) -> f64 {
        let (mut low, mut high) = (-12.0, 12.0);
        for _ in 0..200 {
            let middle = 0.5 * (low + high);
            if phi(middle) < p {
                low = middle;
            } else {
                high = middle;
            }
        }
        0.5 * (low + high)
    }

    /// A split normal's mean and variance (sds `below` and `above` of 0): sqrt(2 / pi) (s+ -
    /// s-) and (s+^3 + s-^3) / (s+ + s-) - (2 / pi) (s+ - s-)^2.
    fn split_normal_moments(below: f64, above: f64) -> (f64, f64) {
        let gap = above - below;
        let mean = (2.0 / std::f64::consts::PI).sqrt() * gap;
        let second = (above.powi(3) + below.powi(3)) / (above + below);
        (mean, second - mean * mean)
    }

    /// The lattice's mean within 1e-6 of `mean` and its variance within 1e-4 of `variance` in
    /// relative terms (the lattice's own error is of order step^2 / 12).
    #[track_caller]
    fn assert_moments(lattice: &Lattice, mean: f64, variance: f64) {
        let got = lattice.expect(|x| x);
        let got_variance = lattice.expect(|x| (x - got).powi(2));
        assert!((got - mean).abs() < 1e-6, "{got} vs {mean}");
        assert!(
            (got_variance / variance - 1.0).abs() < 1e-4,
            "{got_variance} vs {variance}"
        );
    }

    /// One split normal of sds 0.5 and 2, scaled by -1.5 and shifted by 3, against its closed
    /// form: mean c + a sqrt(2 / pi) (s+ - s-), variance a^2 ((s+^3 + s-^3) / (s+ + s-) -
    /// (2 / pi) (s+ - s-)^2), and the quantiles of the side they fall on.
    #[test]
    fn one_split_normal_has_its_closed_form_moments_and_quantiles() {
        let (below, above, a, c) = (0.5f64, 2.0f64, -1.5f64, 3.0f64);
        let lattice = Lattice::split_normal_sum(c, &[a], &[[below, above]]);
        let (unit_mean, unit_variance) = split_normal_moments(below, above);
        let (mean, variance) = (c + a * unit_mean, a * a * unit_variance);
        assert_moments(&lattice, mean, variance);
        // z below 0 with probability s- / (s- + s+); a < 0 turns it into x above c.
        let share_below = below / (below + above);
        for p in [0.02, 0.1, 0.5, 0.9, 0.98] {
            // The z-quantile of 1 - p, mapped by x = c + a z.
            let q = 1.0 - p;
            let z = if q < share_below {
                below * phi_inverse(q / (2.0 * share_below))
            } else {
                above * phi_inverse(0.5 + (q - share_below) * (below + above) / (2.0 * above))
            };
            let want = c + a * z;
            let got = lattice.quantile(p);
            assert!((got - want).abs() < 1e-3, "p {p}: {got} vs {want}");
        }
    }

    /// With unit stretches the sum is the gaussian of sd |a|: mean, sd and quantiles.
    #[test]
    fn unit_stretches_give_the_hessians_gaussian() {
        let a = [0.3, -0.4, 0.0];
        let lattice = Lattice::split_normal_sum(-1.0, &a, &[[1.0, 1.0]; 3]);
        let mean = lattice.expect(|x| x);
        let sd = lattice.expect(|x| (x - mean).powi(2)).sqrt();
        assert!((mean + 1.0).abs() < 1e-9, "{mean}");
        assert!((sd - 0.5).abs() < 1e-4, "{sd}");
        for p in [0.05, 0.5, 0.95] {
            let want = -1.0 + 0.5 * phi_inverse(p);
            assert!((lattice.quantile(p) - want).abs() < 1e-4, "p {p}");
        }
    }

    /// Two terms: the sum's mean and variance are the sums of the terms' closed forms
    /// (independence), whichever signs the coefficients carry; the lattice's own error is of
    /// order step^2 / 12 in the variance.
    #[test]
    fn a_sum_of_split_normals_adds_their_means_and_variances() {
        let stretch = [[0.6, 1.7], [1.3, 0.8]];
        for a in [[0.7, 0.2], [-0.7, 0.2], [0.7, -0.2]] {
            let lattice = Lattice::split_normal_sum(0.0, &a, &stretch);
            let (mut mean, mut variance) = (0.0, 0.0);
            for (a, [below, above]) in a.iter().zip(stretch) {
                let (unit_mean, unit_variance) = split_normal_moments(below, above);
                mean += a * unit_mean;
                variance += a * a * unit_variance;
            }
            assert_moments(&lattice, mean, variance);
        }
    }
}
