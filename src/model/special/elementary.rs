//! The logarithm and the exponential as plain arithmetic, for the batched log Phi.
//!
//! glibc's `log` and `exp` are accurate and fast one at a time, but a call cannot be vectorised
//! and its latency stalls the loop around it. These two cover exactly the ranges
//! [`super::add_log_phi_replacing_by_slopes`] needs (normal, positive arguments; results that stay
//! normal), with no branch, no table and only exact IEEE operations (no fused multiply-add), so
//! the compiler vectorises them and every instruction set returns the same bits. Both use Cody and
//! Waite's argument reduction with a two-part ln 2 and a truncated Taylor series, accurate to a
//! few ulp (tested against the standard library below).

/// ln 2 split so that k * LN2_HIGH is exact for |k| < 2^20 (its low 21 bits are zero).
const LN2_HIGH: f64 = 0.693_147_180_369_123_8;
/// ln 2 - LN2_HIGH.
const LN2_LOW: f64 = 1.908_214_929_270_587_7e-10;
/// 1.5 * 2^52: adding and subtracting it rounds a double of magnitude below 2^51 to an integer.
const ROUNDING: f64 = 6_755_399_441_055_744.0;
/// 2^52: a double whose low mantissa bits carry a small non-negative integer.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// e^(-h) for 0 <= h <= 700, where the result is a normal double, to about 2 ulp.
///
/// n = round(-h / ln 2), r = -h - n ln 2 in [-ln 2 / 2, ln 2 / 2], e^r by its Taylor series to
/// degree 13 (the first omitted term is below 5e-18 of the sum), times 2^n built from its bits.
#[inline(always)]
pub(super) fn exp_of_negative(h: f64) -> f64 {
    debug_assert!((0.0..=700.0).contains(&h), "exp_of_negative({h})");
    let n = (-h * std::f64::consts::LOG2_E + ROUNDING) - ROUNDING;
    let r = (-h - n * LN2_HIGH) - n * LN2_LOW;
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    // 1 / k! for k = 0..=13, paired for Estrin's scheme.
    let pairs = [
        1.0 + r,
        0.5 + r * 0.166_666_666_666_666_66,
        0.041_666_666_666_666_664 + r * 0.008_333_333_333_333_333,
        0.001_388_888_888_888_889 + r * 0.000_198_412_698_412_698_4,
        2.480_158_730_158_73e-5 + r * 2.755_731_922_398_589_3e-6,
        2.755_731_922_398_589e-7 + r * 2.505_210_838_544_172e-8,
        2.087_675_698_786_81e-9 + r * 1.605_904_383_682_161_3e-10,
    ];
    let low = (pairs[0] + r2 * pairs[1]) + r4 * (pairs[2] + r2 * pairs[3]);
    let high = (pairs[4] + r2 * pairs[5]) + r4 * pairs[6];
    let series = low + r8 * high;
    // 2^n: n + 1023 is in [13, 1023], so (n + 1023) + 2^52 holds it in its low mantissa bits.
    let biased = ((n + 1023.0) + TWO_52).to_bits() & 0x7ff;
    series * f64::from_bits(biased << 52)
}

/// ln y for a positive normal double y, to about 2 ulp.
///
/// y = 2^k m with m in [sqrt(1/2), sqrt 2); ln m = 2 atanh(s) with s = (m - 1) / (m + 1)
/// ([`twice_atanh`]); then k ln 2 is added in two parts.
#[inline(always)]
pub(super) fn ln_positive_normal(y: f64) -> f64 {
    debug_assert!(y.is_normal() && y > 0.0, "ln_positive_normal({y})");
    const MANTISSA: u64 = (1 << 52) - 1;
    let bits = y.to_bits();
    // m in [1, 2) and the biased exponent, as doubles (exactly: the exponent sits in the low
    // mantissa bits of 2^52 + e).
    let mantissa = f64::from_bits((bits & MANTISSA) | (1023 << 52));
    let biased_exponent = f64::from_bits((bits >> 52) | TWO_52.to_bits()) - TWO_52;
    let above = mantissa > std::f64::consts::SQRT_2;
    let m = if above { 0.5 * mantissa } else { mantissa };
    let k = biased_exponent - 1023.0 + if above { 1.0 } else { 0.0 };
    let f = m - 1.0; // exact: m is within a factor 2 of 1
    k * LN2_HIGH + (twice_atanh(f / (2.0 + f)) + k * LN2_LOW)
}

/// Largest |s| [`twice_atanh`] is accurate for: (sqrt 2 - 1) / (sqrt 2 + 1).
const ATANH_ARGUMENT_LIMIT: f64 = 0.171_572_875_253_809_9;

/// 2 atanh(s) = ln((1 + s) / (1 - s)) for |s| <= [`ATANH_ARGUMENT_LIMIT`], to about 2 ulp:
/// 2 s (1 + s^2/3 + ... + s^20/21); s^2 <= 0.0295, so the first omitted term is below 3e-17 of
/// the sum. The logarithm and ln(1 - q) (with s = -q / (2 - q)) both end here.
#[inline(always)]
pub(super) fn twice_atanh(s: f64) -> f64 {
    debug_assert!(
        s.abs() <= ATANH_ARGUMENT_LIMIT * (1.0 + 1e-12),
        "twice_atanh({s})"
    );
    let z = s * s;
    let z2 = z * z;
    let z4 = z2 * z2;
    let z8 = z4 * z4;
    // 1 / (2j + 1) for j = 0..=10, paired for Estrin's scheme.
    let pairs = [
        1.0 + z * (1.0 / 3.0),
        1.0 / 5.0 + z * (1.0 / 7.0),
        1.0 / 9.0 + z * (1.0 / 11.0),
        1.0 / 13.0 + z * (1.0 / 15.0),
        1.0 / 17.0 + z * (1.0 / 19.0),
    ];
    let low = (pairs[0] + z2 * pairs[1]) + z4 * (pairs[2] + z2 * pairs[3]);
    let series = low + z8 * (pairs[4] + z2 * (1.0 / 21.0));
    2.0 * s * series
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(got: f64, expected: f64) -> f64 {
        (got - expected).abs() / (expected.abs() * f64::EPSILON)
    }

    /// Against the standard library (glibc's correctly rounded-in-practice `exp`) over the whole
    /// range, densely near 0 where the reduction's n changes sign.
    #[test]
    fn exp_of_negative_matches_the_standard_library() {
        let mut h = 0.0;
        let mut worst: f64 = 0.0;
        while h <= 700.0 {
            worst = worst.max(ulps(exp_of_negative(h), (-h).exp()));
            h += if h < 2.0 { 1.1e-4 } else { 0.0137 };
        }
        assert!(worst <= 3.0, "worst error {worst} ulp");
        assert_eq!(exp_of_negative(0.0), 1.0);
    }

    /// Against the standard library over every binade a log Phi argument can reach (1e-151 to 1),
    /// densely around 1 (where ln y is small) and around the sqrt 2 switch.
    #[test]
    fn ln_positive_normal_matches_the_standard_library() {
        let mut worst: f64 = 0.0;
        let mut y = 1e-151;
        while y < 2.0 {
            worst = worst.max(ulps(ln_positive_normal(y), y.ln()));
            y *= 1.000_73;
        }
        let mut y = 0.99;
        while y < 1.01 {
            if y != 1.0 {
                worst = worst.max(ulps(ln_positive_normal(y), y.ln()));
            }
            y += 1.3e-7;
        }
        assert!(worst <= 3.0, "worst error {worst} ulp");
        assert_eq!(ln_positive_normal(1.0), 0.0);
    }
}
