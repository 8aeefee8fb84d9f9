//! The likelihoods: log p(data | G u) evaluated from the field's values at the observed cells only.
//!
//! Every likelihood sees `gu`, the M values of the field at the observed cells in the order of
//! [`Observations::cells`](super::data::Observations); G is never formed. Terms that do not depend
//! on u (normalising constants, log c!) are dropped: the samplers only use differences.

use super::spec::LikelihoodKind;
use super::special::log_phi;

/// A likelihood bound to its observed data.
#[derive(Debug, Clone, PartialEq)]
pub enum Likelihood {
    /// v_i = u_i + e_i, e_i ~ N(0, s^2).
    Gaussian { values: Vec<f64>, noise_sd: f64 },
    /// t_i = sign(u_i + e_i) in {-1, +1}: log Phi(t_i u_i / s).
    Probit { labels: Vec<f64>, noise_sd: f64 },
    /// c_i ~ Poisson(exp(u_i + offset)).
    Poisson { counts: Vec<f64>, offset: f64 },
}

impl Likelihood {
    /// Bind `kind` to the observed values (labels already mapped to -1/+1 for probit).
    pub fn new(kind: LikelihoodKind, values: Vec<f64>, noise_sd: f64, offset: f64) -> Self {
        match kind {
            LikelihoodKind::Gaussian => Self::Gaussian { values, noise_sd },
            LikelihoodKind::Probit => Self::Probit {
                labels: values,
                noise_sd,
            },
            LikelihoodKind::Poisson => Self::Poisson {
                counts: values,
                offset,
            },
        }
    }

    pub fn kind(&self) -> LikelihoodKind {
        match self {
            Self::Gaussian { .. } => LikelihoodKind::Gaussian,
            Self::Probit { .. } => LikelihoodKind::Probit,
            Self::Poisson { .. } => LikelihoodKind::Poisson,
        }
    }

    /// M: the number of observations.
    pub fn len(&self) -> usize {
        match self {
            Self::Gaussian { values, .. } => values.len(),
            Self::Probit { labels, .. } => labels.len(),
            Self::Poisson { counts, .. } => counts.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// log p(data | u) up to a constant, from the field at the observed cells.
    pub fn log_likelihood(&self, gu: &[f64]) -> f64 {
        debug_assert_eq!(gu.len(), self.len());
        match self {
            Self::Gaussian { values, noise_sd } => {
                let squares: f64 = values.iter().zip(gu).map(|(v, u)| (v - u) * (v - u)).sum();
                -0.5 * squares / (noise_sd * noise_sd)
            }
            Self::Probit { labels, noise_sd } => {
                let inv = 1.0 / noise_sd;
                labels
                    .iter()
                    .zip(gu)
                    .map(|(t, u)| log_phi(t * u * inv))
                    .sum()
            }
            Self::Poisson { counts, offset } => counts
                .iter()
                .zip(gu)
                .map(|(c, u)| {
                    let eta = u + offset;
                    c * eta - eta.exp()
                })
                .sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_is_the_scaled_squared_distance() {
        let l = Likelihood::new(LikelihoodKind::Gaussian, vec![1.0, -1.0], 2.0, 0.0);
        // -((1-0)^2 + (-1-1)^2) / (2 * 4)
        assert!((l.log_likelihood(&[0.0, 1.0]) + 5.0 / 8.0).abs() < 1e-15);
    }

    #[test]
    fn probit_stays_finite_far_in_the_tail() {
        let l = Likelihood::new(LikelihoodKind::Probit, vec![1.0, -1.0], 1.0, 0.0);
        let ll = l.log_likelihood(&[-60.0, 60.0]);
        assert!(ll.is_finite() && ll < -3000.0);
    }

    #[test]
    fn poisson_matches_the_log_density_up_to_log_factorial() {
        let l = Likelihood::new(LikelihoodKind::Poisson, vec![3.0], 1.0, 0.5);
        let eta: f64 = 0.2 + 0.5;
        assert!((l.log_likelihood(&[0.2]) - (3.0 * eta - eta.exp())).abs() < 1e-15);
    }
}
