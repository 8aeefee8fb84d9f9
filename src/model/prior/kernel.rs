//! The kernels' correlation functions and the dense kernel matrix (the reference the structured
//! priors are tested against).
//!
//! Every kernel is stationary and isotropic: k(x, x') = variance * rho(|x - x'| / l), with the
//! Matern forms of Rasmussen & Williams (2006, eq. 4.17) for smoothness 1/2, 3/2 and 5/2 and the
//! squared exponential as their infinitely smooth limit. Only the squared exponential factorises
//! over the axes (exp(-(dx^2 + dy^2) / 2 l^2) = exp(-dx^2 / 2 l^2) exp(-dy^2 / 2 l^2)), which is
//! what lets [`super::KroneckerPrior`] hold it on any grid; the Matern kernels are separable only
//! on a 1-D grid and otherwise go through [`super::CirculantPrior`].

use faer::Mat;

use crate::model::grid::Grid;
use crate::model::spec::{KernelKind, KernelSpec};

impl KernelKind {
    /// rho(s), the correlation at scaled distance s = r / l >= 0 (rho(0) = 1).
    pub(crate) fn correlation(self, s: f64) -> f64 {
        match self {
            KernelKind::SquaredExponential => (-0.5 * s * s).exp(),
            KernelKind::Exponential | KernelKind::Matern12 => (-s).exp(),
            KernelKind::Matern32 => {
                let a = 3f64.sqrt() * s;
                (1.0 + a) * (-a).exp()
            }
            KernelKind::Matern52 => {
                let a = 5f64.sqrt() * s;
                (1.0 + a + a * a / 3.0) * (-a).exp()
            }
        }
    }

    /// d rho(r / l) / d log l at scaled distance s = r / l: -s rho'(s).
    pub(crate) fn log_length_scale_derivative(self, s: f64) -> f64 {
        match self {
            KernelKind::SquaredExponential => s * s * (-0.5 * s * s).exp(),
            KernelKind::Exponential | KernelKind::Matern12 => s * (-s).exp(),
            KernelKind::Matern32 => {
                let a = 3f64.sqrt() * s;
                a * a * (-a).exp()
            }
            KernelKind::Matern52 => {
                let a = 5f64.sqrt() * s;
                a * a * (1.0 + a) / 3.0 * (-a).exp()
            }
        }
    }

    /// (rho(s), -s rho'(s)): [`Self::correlation`] and [`Self::log_length_scale_derivative`]
    /// from one exponential.
    pub(crate) fn correlation_and_slope(self, s: f64) -> (f64, f64) {
        match self {
            KernelKind::SquaredExponential => {
                let e = (-0.5 * s * s).exp();
                (e, s * s * e)
            }
            KernelKind::Exponential | KernelKind::Matern12 => {
                let e = (-s).exp();
                (e, s * e)
            }
            KernelKind::Matern32 => {
                let a = 3f64.sqrt() * s;
                let e = (-a).exp();
                ((1.0 + a) * e, a * a * e)
            }
            KernelKind::Matern52 => {
                let a = 5f64.sqrt() * s;
                let e = (-a).exp();
                ((1.0 + a + a * a / 3.0) * e, a * a * (1.0 + a) / 3.0 * e)
            }
        }
    }

    /// Whether the kernel is a product of one kernel per axis on `grid`: everywhere for the
    /// squared exponential, and for every kernel on a grid with one point along an axis.
    pub(crate) fn is_separable_on(self, grid: Grid) -> bool {
        self.is_separable() || grid.nx() == 1 || grid.ny() == 1
    }

    /// Whether the kernel is a product of one kernel per axis on every grid.
    pub(crate) fn is_separable(self) -> bool {
        self == KernelKind::SquaredExponential
    }
}

impl KernelSpec {
    /// k at distance `r`: variance * rho(r / l), the same value [`Self::at_squared_distance`]
    /// gives at r^2 for every kernel but the squared exponential (whose legacy form takes d2).
    pub(crate) fn at_distance(&self, r: f64) -> f64 {
        match self.kind {
            KernelKind::SquaredExponential => self.at_squared_distance(r * r),
            family => self.variance * family.correlation(r / self.length_scale),
        }
    }

    /// k at squared distance `d2`. The squared exponential is evaluated as
    /// variance * exp(-d2 / (2 l^2)), the form the Kronecker prior has always used.
    pub(crate) fn at_squared_distance(&self, d2: f64) -> f64 {
        match self.kind {
            KernelKind::SquaredExponential => {
                let two_l2 = 2.0 * self.length_scale * self.length_scale;
                self.variance * (-d2 / two_l2).exp()
            }
            family => self.variance * family.correlation(d2.sqrt() / self.length_scale),
        }
    }
}

/// The full N x N kernel matrix, formed densely from the grid's points. Only for tests and small
/// grids: it is the reference the structured priors are checked against.
pub fn dense_kernel_matrix(grid: Grid, kernel: KernelSpec) -> Mat<f64> {
    let n = grid.cells();
    Mat::from_fn(n, n, |a, b| {
        let (xa, ya) = grid.position(a);
        let (xb, yb) = grid.position(b);
        // An anisotropic kernel: dy measured in units of l_y / l.
        let stretch = kernel.length_scale / kernel.length_scale_y.unwrap_or(kernel.length_scale);
        kernel.at_squared_distance((xa - xb).powi(2) + ((ya - yb) * stretch).powi(2))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed forms against the general Matern kernel
    /// rho(s) = 2^(1 - nu) / Gamma(nu) (sqrt(2 nu) s)^nu K_nu(sqrt(2 nu) s), with the modified
    /// Bessel functions of half-integer order written out: K_1/2(z) = sqrt(pi / 2z) e^-z,
    /// K_3/2(z) = K_1/2(z) (1 + 1/z), K_5/2(z) = K_1/2(z) (1 + 3/z + 3/z^2).
    #[test]
    fn matern_forms_match_the_general_matern_kernel() {
        use std::f64::consts::PI;
        let general = |nu: f64, gamma: f64, s: f64| {
            let z = (2.0 * nu).sqrt() * s;
            let k_half = (PI / (2.0 * z)).sqrt() * (-z).exp();
            let k = if nu == 0.5 {
                k_half
            } else if nu == 1.5 {
                k_half * (1.0 + 1.0 / z)
            } else {
                k_half * (1.0 + 3.0 / z + 3.0 / (z * z))
            };
            2f64.powf(1.0 - nu) / gamma * z.powf(nu) * k
        };
        for s in [0.01, 0.3, 1.0, 2.5, 7.0] {
            let cases = [
                (KernelKind::Exponential, 0.5, PI.sqrt()),
                (KernelKind::Matern12, 0.5, PI.sqrt()),
                (KernelKind::Matern32, 1.5, PI.sqrt() / 2.0),
                (KernelKind::Matern52, 2.5, 3.0 * PI.sqrt() / 4.0),
            ];
            for (family, nu, gamma) in cases {
                let expected = general(nu, gamma, s);
                let got = family.correlation(s);
                assert!(
                    (got - expected).abs() < 1e-13,
                    "{family} at {s}: {got} vs {expected}"
                );
            }
        }
        for family in KernelKind::ALL {
            assert_eq!(family.correlation(0.0), 1.0, "{family}");
        }
    }

    /// The closed-form derivatives of every kernel against central differences in log l.
    #[test]
    fn kernel_slopes_match_finite_differences() {
        for kind in KernelKind::ALL {
            for r in [0.0, 0.05, 0.4, 1.0, 2.3, 6.0] {
                let at = |log_l: f64| kind.correlation(r / log_l.exp());
                let h = 1e-5;
                let numeric = (at(h) - at(-h)) / (2.0 * h);
                let exact = kind.log_length_scale_derivative(r);
                assert!(
                    (numeric - exact).abs() < 1e-8,
                    "{kind} r={r}: {exact} vs {numeric}"
                );
            }
        }
    }

    /// The fused pair is the two functions, to rounding.
    #[test]
    fn correlation_and_slope_are_the_two_functions() {
        for kind in KernelKind::ALL {
            for s in [0.0, 0.05, 0.4, 1.0, 2.3, 6.0] {
                let (value, slope) = kind.correlation_and_slope(s);
                assert!((value - kind.correlation(s)).abs() < 1e-15, "{kind} {s}");
                let expected = kind.log_length_scale_derivative(s);
                assert!((slope - expected).abs() < 1e-15, "{kind} {s}");
            }
        }
    }

    #[test]
    fn squared_exponential_keeps_its_legacy_form() {
        let k = KernelSpec::squared_exponential(0.3, 1.7);
        let d2: f64 = 0.123;
        let legacy = 1.7 * (-d2 / (2.0 * 0.3 * 0.3)).exp();
        assert_eq!(k.at_squared_distance(d2).to_bits(), legacy.to_bits());
        let via_rho = 1.7 * KernelKind::SquaredExponential.correlation(d2.sqrt() / 0.3);
        assert!((via_rho - legacy).abs() < 1e-15);
    }
}
