//! The standard normal CDF and its logarithm, stable over the whole real line, and cheap: the
//! probit likelihood's value and gradient are mostly ln Phi and its slope, once per cell per
//! gradient ([`add_log_phi_replacing_by_slopes`] is that loop). The logistic function and the
//! binomial likelihood's logit terms are in `logistic.rs`.
//!
//! Everything goes through the scaled complementary error function erfcx(u) = exp(u^2) erfc(u),
//! which is smooth, at most 1 on u >= 0 and about 1 / (u sqrt pi) far out, so it neither
//! underflows nor loses digits. With u = |x| / sqrt 2:
//! - x <= 0: ln Phi(x) = ln(erfcx(u) / 2) - x^2 / 2, and phi(x) / Phi(x) = sqrt(2 / pi) / erfcx(u):
//!   one logarithm, no exponential;
//! - x > 0: ln Phi(x) = ln(1 - Q) with Q = erfcx(u) exp(-x^2 / 2) / 2 the upper tail (a short
//!   series in Q where 1 - Q would lose Q's digits), and phi / Phi = exp(-x^2 / 2) /
//!   (sqrt(2 pi) (1 - Q)): one exponential.
//!
//! x^2 / 2 is carried with its rounding error (Dekker's product), so exp(-x^2 / 2) keeps its
//! relative accuracy far out, where Q is the whole answer. ln Phi(x) is finite down to
//! x = -1.9e154, where -x^2 / 2 overflows, and -inf below, as it rounds.
//!
//! erfcx ([`erfcx`]), the logarithm and the exponential ([`elementary`]) are plain arithmetic
//! here, no library call, so the batched form vectorises. The former implementation (libm's erfc,
//! with an exponential inside and a second one for the slope) is kept in the tests as an
//! independent oracle.
//!
//! Only exact IEEE operations are used (no library call, no fused multiply-add), so the vectorised
//! batch and the scalar function give the same bits on every processor.

mod elementary;
mod erfcx;
mod logistic;

pub(crate) use logistic::{
    binomial_logit_curvature, binomial_logit_fourth_derivative, binomial_logit_log_density,
    binomial_logit_third_derivative, binomial_logit_with_slope, logistic, logistic_normal_mean,
};

use elementary::{exp_of_negative, ln_positive_normal, twice_atanh};
use erfcx::erfcx_nonnegative;
use std::f64::consts::FRAC_1_SQRT_2;

const SQRT_2PI: f64 = 2.506_628_274_631_000_5;
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// |x| beyond which [`half_square`]'s split would overflow.
const SQUARE_LIMIT: f64 = 1e150;

/// x^2 / 2 as an unevaluated sum (high, low) exact to about 2^-106 relative (Dekker's product
/// with Veltkamp's split, no fused multiply-add needed), for |x| up to [`SQUARE_LIMIT`].
#[inline(always)]
fn half_square(x: f64) -> (f64, f64) {
    const SPLIT: f64 = 134_217_729.0; // 2^27 + 1
    let c = SPLIT * x;
    let high_part = c - (c - x);
    let low_part = x - high_part;
    let square = x * x;
    let error =
        ((high_part * high_part - square) + 2.0 * high_part * low_part) + low_part * low_part;
    (0.5 * square, 0.5 * error)
}

/// At and above this x, ln Phi(x) > -2e-299 and its slope is below 1e-297: both are returned as 0
/// (the kernel exp(-x^2 / 2) would leave the normal range a little further out).
const UPPER_TAIL_ZERO: f64 = 37.0;

/// Phi(x): the standard normal CDF.
pub(crate) fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x * FRAC_1_SQRT_2)
}

/// ln Phi(x), finite down to x = -1.9e154 and -inf below, where it overflows.
pub(crate) fn log_phi(x: f64) -> f64 {
    log_phi_with_derivative(x).0
}

/// d/dx ln Phi(x) = phi(x) / Phi(x) (the inverse Mills ratio), finite and positive for every
/// finite x below 37: about -x far in the lower tail, about phi(x) far in the upper.
pub(crate) fn log_phi_derivative(x: f64) -> f64 {
    log_phi_with_derivative(x).1
}

/// (ln Phi(x), d/dx ln Phi(x)): one erfcx, one exponential, one logarithm and a short series, all
/// plain arithmetic and without branches (each tail's formula is computed and the right one
/// selected), so that [`add_log_phi_replacing_by_slopes`] vectorises it. [`log_phi`] and
/// [`log_phi_derivative`] are its two halves and the batch gives the same bits, so a
/// gradient-based chain's value and a Metropolis test's agree exactly.
#[inline(always)]
pub(crate) fn log_phi_with_derivative(x: f64) -> (f64, f64) {
    let scaled = erfcx_nonnegative(x.abs() * FRAC_1_SQRT_2);
    // Beyond SQUARE_LIMIT the square's rounding error no longer matters (and its split would
    // overflow): x^2 / 2 is taken as it rounds, infinite beyond 1.9e154, where ln Phi is -inf.
    let (split_high, split_low) = half_square(x.clamp(-SQUARE_LIMIT, SQUARE_LIMIT));
    let (high, low) = if x.abs() <= SQUARE_LIMIT {
        (split_high, split_low)
    } else {
        (0.5 * x * x, 0.0)
    };
    let lower = x <= 0.0;
    // Upper tail: Q = erfcx(u) exp(-x^2 / 2) / 2 (its input capped where x is out of its range,
    // so the unused lane stays finite).
    let kernel = exp_of_negative(high.min(UPPER_KERNEL_LIMIT)) * (1.0 - low);
    let upper_tail = 0.5 * scaled * kernel;
    let one_minus_upper = 1.0 - upper_tail;
    // The one logarithm: of Phi itself in the lower tail (erfcx(u) / 2 times the kernel, whose
    // logarithm is -x^2 / 2), of 1 - Q in the upper tail when Q is large enough.
    let upper_by_logarithm = upper_tail > SERIES_BELOW;
    // (erfcx leaves the normal range only beyond |x| = 1e307, where -x^2 / 2 is -inf anyway.)
    let logarithm = ln_positive_normal(if lower {
        (0.5 * scaled).max(f64::MIN_POSITIVE)
    } else if upper_by_logarithm {
        one_minus_upper
    } else {
        1.0
    });
    let value = if lower {
        logarithm - high - low
    } else if upper_by_logarithm {
        logarithm
    } else {
        ln_one_minus_series(upper_tail)
    };
    let (numerator, denominator) = if lower {
        (SQRT_2_OVER_PI, scaled)
    } else {
        (kernel, SQRT_2PI * one_minus_upper)
    };
    if x < UPPER_TAIL_ZERO {
        (value, numerator / denominator)
    } else if x >= UPPER_TAIL_ZERO {
        (0.0, 0.0)
    } else {
        (x, x) // NaN in, NaN out: a broken field must not become a finite likelihood
    }
}

/// x^2 / 2 at which the upper tail's kernel is capped: exp(-684.5) is still a normal double.
const UPPER_KERNEL_LIMIT: f64 = UPPER_TAIL_ZERO * UPPER_TAIL_ZERO / 2.0;

/// Below this q, ln(1 - q) is summed as a series; above it, 1 - q is at least 3/4, computed with
/// an absolute error of at most 2^-54, and its logarithm keeps a relative error below 4e-16.
const SERIES_BELOW: f64 = 0.25;

/// ln(1 - q) for 0 <= q <= 1/4, to a few ulp: -2 atanh(w) with w = q / (2 - q) <= 1/7.
#[inline(always)]
fn ln_one_minus_series(q: f64) -> f64 {
    -twice_atanh(q / (2.0 - q))
}

/// Replaces each x in `arguments` by d/dx ln Phi(x) and returns `start` + sum ln Phi(x), added in
/// order: bit for bit what [`log_phi_with_derivative`] gives cell by cell, computed in vector
/// registers where the processor has them. A caller that goes through its cells in pieces passes
/// the running total as `start`, and gets the same sum as in one go.
pub(crate) fn add_log_phi_replacing_by_slopes(start: f64, arguments: &mut [f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the processor has AVX-512F, checked just above.
            return unsafe { add_log_phi_avx512(start, arguments) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            return unsafe { add_log_phi_avx2(start, arguments) };
        }
    }
    add_log_phi_portable(start, arguments)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn add_log_phi_avx512(start: f64, arguments: &mut [f64]) -> f64 {
    add_log_phi_portable(start, arguments)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_log_phi_avx2(start: f64, arguments: &mut [f64]) -> f64 {
    add_log_phi_portable(start, arguments)
}

/// Cells per vectorised pass: the values wait in a stack buffer to be added in order.
pub(crate) const LOG_PHI_BATCH: usize = 64;

#[inline(always)]
fn add_log_phi_portable(start: f64, arguments: &mut [f64]) -> f64 {
    let mut values = [0.0; LOG_PHI_BATCH];
    let mut total = start;
    for batch in arguments.chunks_mut(LOG_PHI_BATCH) {
        for (x, value) in batch.iter_mut().zip(values.iter_mut()) {
            (*value, *x) = log_phi_with_derivative(*x);
        }
        for value in &values[..batch.len()] {
            total += value;
        }
    }
    total
}

/// -d^2/dx^2 ln Phi(x) = r(x) (x + r(x)) with r the inverse Mills ratio: in (0, 1) for every x.
pub(crate) fn log_phi_curvature(x: f64) -> f64 {
    let r = log_phi_derivative(x);
    (r * (x + r)).clamp(0.0, 1.0)
}

/// d^3/dx^3 ln Phi(x) = r ((x + r) (x + 2 r) - 1) with r the inverse Mills ratio (the derivative
/// of -[`log_phi_curvature`], r' = -r (x + r)): the simplified Laplace approximation's skewness
/// term of a probit label.
pub(crate) fn log_phi_third_derivative(x: f64) -> f64 {
    let r = log_phi_derivative(x);
    r * ((x + r) * (x + 2.0 * r) - 1.0)
}

/// d^4/dx^4 ln Phi(x) = -r A^3 - 4 r^2 A^2 + 3 r A + r^2 - r^3 A with r the inverse Mills ratio
/// and A = x + r (the derivative of [`log_phi_third_derivative`], r' = -r A, A' = 1 - r A): the
/// second-order Laplace correction's term of a probit label.
pub(crate) fn log_phi_fourth_derivative(x: f64) -> f64 {
    let r = log_phi_derivative(x);
    let a = x + r;
    -r * a * a * a - 4.0 * r * r * a * a + 3.0 * r * a + r * r - r * r * r * a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from mpmath at 60 significant digits: (x, ln Phi(x), phi(x) / Phi(x)),
    /// `mpmath.log(mpmath.ncdf(x))` for x <= 0 and `mpmath.log1p(-mpmath.ncdf(-x))` above.
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    const REFERENCE: [(f64, f64, f64); 16] = [
        (-1000.0, -500_007.826_694_812_18, 1_000.000_999_998),
        (-100.0, -5_005.524_208_694_205_1, 100.009_998_000_999_26),
        (-40.0, -804.608_442_013_753_79, 40.024_968_847_207_264),
        (-20.0, -203.917_155_371_097_26, 20.049_753_068_527_851),
        (-8.0, -35.013_437_159_914_55, 8.121_368_112_236_112_7),
        (-3.0, -6.607_726_221_510_349_5, 3.283_098_654_930_436_5),
        (-1.0, -1.841_021_645_009_263_5, 1.525_135_276_160_981_2),
        (-0.25, -0.913_061_764_811_135_06, 0.963_553_979_416_403_91),
        (0.0, -std::f64::consts::LN_2, 0.797_884_560_802_865_36),
        (0.25, -0.512_984_075_409_430_43, 0.645_839_371_016_817_27),
        (1.0, -0.172_753_779_023_449_89, 0.287_599_970_939_178_36),
        (3.0, -1.350_809_964_748_193_8e-3, 4.437_839_042_125_663_8e-3),
        (
            8.0,
            -6.220_960_574_271_786_1e-16,
            5.052_271_083_536_895_4e-15,
        ),
        (
            10.0,
            -7.619_853_024_160_526_1e-24,
            7.694_598_626_706_419_3e-23,
        ),
        (
            20.0,
            -2.753_624_118_606_233_7e-89,
            5.520_948_362_159_763_2e-88,
        ),
        (
            30.0,
            -4.906_713_927_148_187_1e-198,
            1.473_646_134_878_547_5e-196,
        ),
    ];

    /// Relative error bound for a value computed through erfcx: a few ulp of erfcx, of the
    /// logarithm and of the kernel.
    const RELATIVE_TOLERANCE: f64 = 1e-14;

    fn relative_error(got: f64, expected: f64) -> f64 {
        (got - expected).abs() / expected.abs().max(1e-300)
    }

    #[test]
    fn log_phi_and_its_slope_match_reference_values() {
        for (x, value, slope) in REFERENCE {
            let (got_value, got_slope) = log_phi_with_derivative(x);
            assert!(
                relative_error(got_value, value) <= RELATIVE_TOLERANCE,
                "log_phi({x}) = {got_value:e}, expected {value:e}"
            );
            assert!(
                relative_error(got_slope, slope) <= RELATIVE_TOLERANCE,
                "slope at {x} = {got_slope:e}, expected {slope:e}"
            );
        }
        // From 37 on, both are returned as 0 (the true value at 37 is -5.7e-300).
        assert_eq!(log_phi_with_derivative(UPPER_TAIL_ZERO), (0.0, 0.0));
    }

    /// The former implementation, through libm's erfc (an independent algorithm): an oracle for
    /// every x between the reference points.
    fn log_phi_by_erfc(x: f64) -> f64 {
        if x > 0.0 {
            (-0.5 * libm::erfc(x * FRAC_1_SQRT_2)).ln_1p()
        } else {
            phi(x).ln()
        }
    }

    /// Dense agreement with the erfc-based formula where that one is accurate (its value above
    /// 1e-89, so x >= -20; above x = 0 its argument's rounding costs it about x^2 ulp).
    #[test]
    fn log_phi_agrees_with_the_erfc_formula_everywhere_between() {
        let mut x = -20.0;
        while x < 37.0 {
            let expected = log_phi_by_erfc(x);
            let tolerance = RELATIVE_TOLERANCE.max(x * x * f64::EPSILON);
            assert!(
                relative_error(log_phi(x), expected) <= tolerance,
                "x = {x}: {} vs {expected}",
                log_phi(x)
            );
            x += 0.003_7;
        }
    }

    #[test]
    fn log_phi_is_finite_and_monotone() {
        let mut previous = f64::NEG_INFINITY;
        let mut x = -1e4;
        while x < 40.0 {
            let y = log_phi(x);
            assert!(y.is_finite() && y <= 0.0, "log_phi({x}) = {y}");
            assert!(y >= previous, "not monotone at {x}");
            previous = y;
            x += if x < -100.0 { 7.3 } else { 0.013 };
        }
        assert!(log_phi(-1e150).is_finite());
        // Beyond -1.9e154, -x^2 / 2 overflows: -inf, as the true value rounds, slope about -x.
        for x in [-1e300, -f64::MAX] {
            let (value, slope) = log_phi_with_derivative(x);
            assert_eq!(value, f64::NEG_INFINITY, "at {x}");
            assert!(slope > 1e299, "slope at {x}: {slope}");
        }
        let (value, slope) = log_phi_with_derivative(f64::NAN);
        assert!(value.is_nan() && slope.is_nan());
    }

    /// The derivative and the curvature against central differences, on both sides of the
    /// branch at 0 and far in each tail.
    #[test]
    fn log_phi_derivative_matches_finite_differences() {
        for x in [-300.0, -40.0, -20.5, -5.0, -1.0, -1e-3, 1e-3, 0.7, 3.0, 8.0] {
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
    }

    /// The batched form returns each cell's numbers bit for bit, across batch borders and in
    /// every regime.
    #[test]
    fn the_batched_form_is_the_cell_by_cell_form() {
        let arguments: Vec<f64> = (0..200)
            .map(|i| match i % 5 {
                0 => -1e4 + 37.0 * i as f64,
                1 => 0.0,
                2 => 41.0,
                _ => (i as f64 - 100.0) * 0.173,
            })
            .collect();
        let mut slopes = arguments.clone();
        let total = add_log_phi_replacing_by_slopes(0.0, &mut slopes);
        let mut expected_total = 0.0;
        for (x, slope) in arguments.iter().zip(&slopes) {
            let (value, expected_slope) = log_phi_with_derivative(*x);
            expected_total += value;
            assert_eq!(slope.to_bits(), expected_slope.to_bits(), "slope at {x}");
        }
        assert_eq!(total.to_bits(), expected_total.to_bits());
    }

    /// ln(1 - q) against ln1p(-q) on both sides of the border: the series below it, the
    /// logarithm of 1 - q above it.
    #[test]
    fn ln_one_minus_matches_ln1p() {
        let mut q: f64 = 1e-300;
        while q <= 0.5 {
            let got = if q > SERIES_BELOW {
                ln_positive_normal(1.0 - q)
            } else {
                ln_one_minus_series(q)
            };
            let expected = (-q).ln_1p();
            assert!(
                relative_error(got, expected) <= 4.0 * f64::EPSILON,
                "q = {q}: {got} vs {expected}"
            );
            q *= if q < 1e-3 { 1.7 } else { 1.0007 };
        }
        assert_eq!(ln_one_minus_series(0.0), 0.0);
    }

    /// The two branches meet at 0 in value and slope.
    #[test]
    fn the_branches_meet_at_zero() {
        let (below, below_slope) = log_phi_with_derivative(-1e-300);
        let (above, above_slope) = log_phi_with_derivative(1e-300);
        assert!((below - above).abs() <= 2.0 * f64::EPSILON);
        assert!((below_slope - above_slope).abs() <= 2.0 * f64::EPSILON);
    }
}
