//! The standard normal quantile function (inverse CDF), used to rank-normalise draws.
//!
//! Wichura's algorithm AS 241 (PPND16, Applied Statistics 37(3), 1988): three rational
//! approximations, accurate to about 1e-16 relative over the whole open interval (0, 1). That is
//! as accurate as scipy's `ndtri`, which ArviZ uses through `scipy.stats.norm.ppf`.

// The coefficients are written with every digit Wichura published, so they can be checked
// against the paper; the compiler rounds them to the nearest double.
#![allow(clippy::excessive_precision)]

/// Central region |p - 1/2| <= 0.425: numerator coefficients in r = 0.180625 - q^2, low order first.
const CENTRAL_NUM: [f64; 8] = [
    3.387_132_872_796_366_608_0,
    1.331_416_678_917_843_774_5e2,
    1.971_590_950_306_551_442_7e3,
    1.373_169_376_550_946_112_5e4,
    4.592_195_393_154_987_145_7e4,
    6.726_577_092_700_870_085_3e4,
    3.343_057_558_358_812_810_5e4,
    2.509_080_928_730_122_672_7e3,
];
const CENTRAL_DEN: [f64; 8] = [
    1.0,
    4.231_333_070_160_091_125_2e1,
    6.871_870_074_920_579_083_0e2,
    5.394_196_021_424_751_107_7e3,
    2.121_379_430_158_659_586_7e4,
    3.930_789_580_009_271_061_0e4,
    2.872_908_573_572_194_267_4e4,
    5.226_495_278_852_854_561_0e3,
];
/// Intermediate tail, r = sqrt(-ln(min(p, 1-p))) <= 5, evaluated at r - 1.6.
const INTERMEDIATE_NUM: [f64; 8] = [
    1.423_437_110_749_683_577_34,
    4.630_337_846_156_545_295_90,
    5.769_497_221_460_691_405_50,
    3.647_848_324_763_204_605_04,
    1.270_458_252_452_368_382_58,
    2.417_807_251_774_506_117_70e-1,
    2.272_384_498_926_918_458_33e-2,
    7.745_450_142_783_414_076_40e-4,
];
const INTERMEDIATE_DEN: [f64; 8] = [
    1.0,
    2.053_191_626_637_758_821_87,
    1.676_384_830_183_803_849_40,
    6.897_673_349_851_000_045_50e-1,
    1.481_039_764_274_800_745_90e-1,
    1.519_866_656_361_645_719_66e-2,
    5.475_938_084_995_344_946_00e-4,
    1.050_750_071_644_416_843_24e-9,
];
/// Far tail, r > 5, evaluated at r - 5.
const FAR_NUM: [f64; 8] = [
    6.657_904_643_501_103_777_20,
    5.463_784_911_164_114_369_90,
    1.784_826_539_917_291_335_80,
    2.965_605_718_285_048_912_30e-1,
    2.653_218_952_657_612_309_30e-2,
    1.242_660_947_388_078_438_60e-3,
    2.711_555_568_743_487_578_15e-5,
    2.010_334_399_292_288_132_65e-7,
];
const FAR_DEN: [f64; 8] = [
    1.0,
    5.998_322_065_558_879_376_90e-1,
    1.369_298_809_227_358_053_10e-1,
    1.487_536_129_085_061_485_25e-2,
    7.868_691_311_456_132_591_00e-4,
    1.846_318_317_510_054_681_80e-5,
    1.421_511_758_316_445_888_70e-7,
    2.044_263_103_389_939_785_64e-15,
];

/// Evaluates the polynomial with coefficients `coefficients` (lowest order first) at `x`.
fn horner(coefficients: &[f64; 8], x: f64) -> f64 {
    coefficients.iter().rev().fold(0.0, |acc, &c| acc * x + c)
}

/// The z with Phi(z) = p for the standard normal CDF Phi.
///
/// Returns -inf at p = 0, +inf at p = 1 and NaN outside [0, 1] or for NaN input; callers in this
/// module only pass fractional ranks strictly inside (0, 1).
pub(crate) fn standard_normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * horner(&CENTRAL_NUM, r) / horner(&CENTRAL_DEN, r);
    }
    let tail_probability = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail_probability.ln()).sqrt();
    let magnitude = if r <= 5.0 {
        let s = r - 1.6;
        horner(&INTERMEDIATE_NUM, s) / horner(&INTERMEDIATE_DEN, s)
    } else {
        let s = r - 5.0;
        horner(&FAR_NUM, s) / horner(&FAR_DEN, s)
    };
    if q < 0.0 { -magnitude } else { magnitude }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standard_normal_cdf(z: f64) -> f64 {
        0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
    }

    #[test]
    fn inverts_the_normal_cdf_in_every_region() {
        // Central, intermediate and far-tail branches, and both signs.
        let probabilities = [
            1e-300, 1e-100, 1e-20, 1e-12, 1e-6, 0.001, 0.02, 0.074, 0.075, 0.2, 0.5, 0.6, 0.9,
            0.925, 0.95, 0.999, 0.999_999,
        ];
        for &p in &probabilities {
            let z = standard_normal_quantile(p);
            // Error in z implied by the round trip: (Phi(z) - p) / phi(z). Judging z rather than
            // Phi(z) keeps the far tail fair (there a z error of 1 ulp moves Phi(z) by |z| ulps).
            let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
            let z_error = (standard_normal_cdf(z) - p) / density;
            assert!(
                z_error.abs() < 1e-14 * z.abs().max(1.0),
                "p = {p}: z = {z}, z error {z_error}"
            );
        }
    }

    #[test]
    fn is_odd_around_one_half_and_knows_landmarks() {
        assert_eq!(standard_normal_quantile(0.5), 0.0);
        for &p in &[0.01, 0.1, 0.3, 0.45] {
            let lower = standard_normal_quantile(p);
            let upper = standard_normal_quantile(1.0 - p);
            assert!((lower + upper).abs() < 1e-14, "p = {p}: {lower} vs {upper}");
        }
        // 97.5% point of the standard normal.
        assert!((standard_normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
    }

    #[test]
    fn edges_are_infinite_and_outside_is_nan() {
        assert_eq!(standard_normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(standard_normal_quantile(1.0), f64::INFINITY);
        assert!(standard_normal_quantile(-0.1).is_nan());
        assert!(standard_normal_quantile(1.5).is_nan());
        assert!(standard_normal_quantile(f64::NAN).is_nan());
    }
}
