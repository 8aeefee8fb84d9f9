//! The standard normal CDF and its logarithm, stable over the whole real line.
//!
//! `log_phi(x)` must stay finite and accurate where the naive `ln(Phi(x))` fails: below about
//! -38, Phi(x) underflows to 0 and the naive log is -inf; above about 8, Phi(x) rounds to 1 and the
//! naive log is 0 with every digit of the answer lost. Three regimes:
//! - x > 0: ln Phi(x) = ln1p(-Q(x)) with Q(x) = erfc(x / sqrt 2) / 2, exact to rounding;
//! - -20 <= x <= 0: ln(erfc(-x / sqrt 2) / 2), erfc is accurate to a few ulp there (its value
//!   is above 1e-89);
//! - x < -20: the asymptotic series
//!   ln Phi(x) = -x^2/2 - ln(-x) - ln(2 pi)/2 + ln(1 - 1/x^2 + 3/x^4 - 15/x^6 + ...),
//!   whose truncation error after 8 terms is below 1e-16 relative at x = -20 and shrinks further
//!   out.

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
const ASYMPTOTIC_BELOW: f64 = -20.0;

/// Phi(x): the standard normal CDF.
pub fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// ln Phi(x), finite for every finite x.
pub fn log_phi(x: f64) -> f64 {
    if x > 0.0 {
        (-0.5 * libm::erfc(x * std::f64::consts::FRAC_1_SQRT_2)).ln_1p()
    } else if x >= ASYMPTOTIC_BELOW {
        phi(x).ln()
    } else {
        log_phi_asymptotic(x)
    }
}

/// The Mills-ratio series for x far in the lower tail.
fn log_phi_asymptotic(x: f64) -> f64 {
    -0.5 * x * x - (-x).ln() - LN_SQRT_2PI + mills_series(x).ln()
}

/// sum_{k>=0} (-1)^k (2k - 1)!! / x^(2k), eight terms: Phi(x) = phi(x) / (-x) times this sum
/// for x far in the lower tail.
fn mills_series(x: f64) -> f64 {
    let inv_x2 = 1.0 / (x * x);
    let mut term = 1.0;
    let mut series = 1.0;
    for k in 1..=8 {
        term *= -((2 * k - 1) as f64) * inv_x2;
        series += term;
    }
    series
}

/// d/dx ln Phi(x) = phi(x) / Phi(x) (the inverse Mills ratio), finite and positive for every
/// finite x: about -x far in the lower tail, about phi(x) far in the upper.
pub fn log_phi_derivative(x: f64) -> f64 {
    log_phi_with_derivative(x).1
}

/// (ln Phi(x), d/dx ln Phi(x)) for the cost of one: the ratio phi / Phi reuses the logarithm
/// (one erfc, one log and one exp in all, where the two functions apart pay two erfc and two
/// logs; the probit likelihood's gradient is mostly these). Each value is bit for bit what
/// [`log_phi`] and [`log_phi_derivative`] return.
pub fn log_phi_with_derivative(x: f64) -> (f64, f64) {
    if x >= ASYMPTOTIC_BELOW {
        let value = log_phi(x);
        (value, (-0.5 * x * x - LN_SQRT_2PI - value).exp())
    } else {
        (log_phi_asymptotic(x), -x / mills_series(x))
    }
}

/// -d^2/dx^2 ln Phi(x) = r(x) (x + r(x)) with r the inverse Mills ratio: in (0, 1) for every x.
pub fn log_phi_curvature(x: f64) -> f64 {
    let r = log_phi_derivative(x);
    (r * (x + r)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from mpmath at 50 significant digits:
    /// `mpmath.mp.dps = 50; mpmath.log(mpmath.ncdf(x))`.
    const REFERENCE: [(f64, f64); 9] = [
        (-1000.0, -500_007.826_694_812_2),
        (-100.0, -5_005.524_208_694_205),
        (-40.0, -804.608_442_013_754_3),
        (-20.0, -203.917_155_371_097_26),
        (-5.0, -15.064_998_393_988_725),
        (0.0, -std::f64::consts::LN_2),
        (5.0, -2.866_516_129_637_636e-7),
        (10.0, -7.619_853_024_160_527e-24),
        // The true value, -3.6e-350, is below the smallest f64: the answer rounds to zero.
        (40.0, 0.0),
    ];

    #[test]
    fn log_phi_matches_reference_values() {
        for (x, expected) in REFERENCE {
            let got = log_phi(x);
            let tolerance = 1e-13 * expected.abs().max(1e-300);
            assert!(
                (got - expected).abs() <= tolerance,
                "log_phi({x}) = {got:e}, expected {expected:e}"
            );
        }
    }

    #[test]
    fn log_phi_is_finite_monotone_and_continuous_at_the_regime_borders() {
        let mut previous = f64::NEG_INFINITY;
        let mut x = -1e4;
        while x < 40.0 {
            let y = log_phi(x);
            assert!(y.is_finite() && y <= 0.0, "log_phi({x}) = {y}");
            assert!(y >= previous, "not monotone at {x}");
            previous = y;
            x += if x < -100.0 { 7.3 } else { 0.013 };
        }
        let below = log_phi_asymptotic(ASYMPTOTIC_BELOW);
        let above = phi(ASYMPTOTIC_BELOW).ln();
        assert!((below - above).abs() < 1e-13 * above.abs());
    }

    /// The derivative against central differences of log_phi, and continuous where the
    /// formula changes regime.
    #[test]
    fn log_phi_derivative_matches_finite_differences() {
        for x in [-300.0, -40.0, -20.5, -19.5, -5.0, -1.0, 0.0, 0.7, 3.0, 8.0] {
            let h = 1e-5 * (1.0 + f64::abs(x));
            let numeric = (log_phi(x + h) - log_phi(x - h)) / (2.0 * h);
            let exact = log_phi_derivative(x);
            assert!(
                (numeric - exact).abs() < 1e-6 * exact.abs().max(1e-3),
                "x = {x}: {exact} vs {numeric}"
            );
            let curvature = -(log_phi_derivative(x + h) - log_phi_derivative(x - h)) / (2.0 * h);
            let exact = log_phi_curvature(x);
            assert!(
                (curvature - exact).abs() < 1e-5 * exact.abs().max(1e-3),
                "x = {x}: curvature {exact} vs {curvature}"
            );
        }
        let below = -ASYMPTOTIC_BELOW / mills_series(ASYMPTOTIC_BELOW);
        let above = log_phi_derivative(ASYMPTOTIC_BELOW);
        assert!((below - above).abs() < 1e-12 * above);
    }

    /// The fused value is log_phi's own, bit for bit, in every regime (so a gradient-based chain's
    /// value and a Metropolis test's agree); the slope is checked by finite differences above.
    #[test]
    fn the_fused_value_is_log_phi() {
        for x in [
            -1e4,
            -300.0,
            -20.0 - 1e-9,
            -20.0,
            -5.0,
            -1e-300,
            0.0,
            1e-300,
            0.7,
            8.0,
            40.0,
        ] {
            let (value, slope) = log_phi_with_derivative(x);
            assert_eq!(value.to_bits(), log_phi(x).to_bits(), "value at {x}");
            assert!(
                slope.is_finite() && slope > 0.0 || x >= 40.0,
                "slope at {x}: {slope}"
            );
        }
    }
}
