//! The scaled complementary error function erfcx(u) = exp(u^2) erfc(u) on u >= 0, as plain
//! arithmetic (a table lookup, two divisions and a polynomial; no library call), so that the
//! batched log Phi vectorises it.
//!
//! It follows Shepherd and Laframboise (Math. Comp. 36, 1981): with t = (u - K) / (u + K),
//! (1 + 2u) erfcx(u) is smooth on t in [-1, 1]. Their single Chebyshev series needs 25 terms, a
//! 25-step chain of dependent operations per call; here t's range is cut into 16 pieces, each a
//! degree-9 polynomial (Estrin's scheme, four levels deep) accurate to the rounding of a double.
//! `scripts/erfcx_chebyshev.py` computes the coefficients (mpmath, 40 digits).

/// Printed by `scripts/erfcx_chebyshev.py`.
const ERFCX_K: f64 = 3.75;
/// Printed by `scripts/erfcx_chebyshev.py`: on piece i of t in [-1, 1] (16 equal pieces), the
/// coefficients of (1 + 2u) erfcx(u) as a polynomial in the piece's own s in [-1, 1]. The
/// monomial form is well conditioned here: the magnitudes of a piece's coefficients sum to at
/// most 1.082 times its value.
const ERFCX_PIECES: [[f64; 10]; 16] = [
    [
        1.0890580457875252,
        0.07690931368681796,
        -0.011256672983545027,
        0.0008492414149012922,
        -4.143426205106282e-05,
        1.3554606125428556e-06,
        -2.7747274173679624e-08,
        2.360154809408057e-10,
        3.5925321777848537e-12,
        -9.971840681798822e-14,
    ],
    [
        1.2040225943458807,
        0.040850840901200884,
        -0.007053704701731683,
        0.000567684246225625,
        -2.9474789509994273e-05,
        1.0437251894068575e-06,
        -2.4108455871607116e-08,
        2.789439400560459e-10,
        1.7713996122461917e-12,
        -1.0037800079008642e-13,
    ],
    [
        1.2616112270509796,
        0.018584035526894638,
        -0.004277092021931457,
        0.00036993643237867894,
        -2.040435720037064e-05,
        7.784490697089643e-07,
        -2.007098228467035e-08,
        2.932537432952562e-10,
        5.733449984091136e-14,
        -8.811343820938821e-14,
    ],
    [
        1.2843276150947533,
        0.005320518730434567,
        -0.0024895223402691086,
        0.00023479204222705887,
        -1.3742295109275074e-05,
        5.620854116064937e-07,
        -1.6015186645404038e-08,
        2.82408946498229e-10,
        -1.3406765111398175e-12,
        -6.595606882704994e-14,
    ],
    [
        1.2866860203438664,
        -0.0022178026520918415,
        -0.0013692748991883117,
        0.00014493007451650037,
        -9.005031108952412e-06,
        3.9290106760612294e-07,
        -1.2251885965649358e-08,
        2.526785337734389e-10,
        -2.2873839651730347e-12,
        -3.8889937491648974e-14,
    ],
    [
        1.2778004959928548,
        -0.006214711854664673,
        -0.000687158033773514,
        8.678277392862665e-05,
        -5.7430874955198285e-06,
        2.660098307868257e-07,
        -8.99249931472222e-09,
        2.1173158040074797e-10,
        -2.744991450107197e-12,
        -1.2500446540004162e-14,
    ],
    [
        1.2632327761276965,
        -0.008086083256281554,
        -0.0002850355875077193,
        5.015326404950726e-05,
        -3.5663664044128226e-06,
        1.7463849642563e-07,
        -6.340522072392564e-09,
        1.6706415167325488e-10,
        -2.769774597694977e-12,
        8.589188945182443e-15,
    ],
    [
        1.2462698348334753,
        -0.008725684432443747,
        -5.715209299975627e-05,
        2.7682037034293367e-05,
        -2.1566935370127256e-06,
        1.1136769232987943e-07,
        -4.3036267941276845e-09,
        1.246942692598096e-10,
        -2.4832574353722223e-12,
        2.1882615274954644e-14,
    ],
    [
        1.2287801104668852,
        -0.008682986062330578,
        6.513547781736988e-05,
        1.426011721604466e-05,
        -1.269008466124851e-06,
        6.91328753075992e-08,
        -2.82014117644947e-09,
        8.844982026197221e-11,
        -2.029728036822443e-12,
        2.73171124708059e-14,
    ],
    [
        1.2117704996347296,
        -0.00828690424223607,
        0.0001251497014743141,
        6.46818412780052e-06,
        -7.242847359696359e-07,
        4.1867095118207174e-08,
        -1.7906774424988868e-09,
        5.993690489116268e-11,
        -1.53659975853394e-12,
        2.6675316134348285e-14,
    ],
    [
        1.1957386793092213,
        -0.007728833441565445,
        0.0001495332233350953,
        2.0930343341629115e-06,
        -3.978872962001386e-07,
        2.4777883066842762e-08,
        -1.1062624262717548e-09,
        3.902850227272631e-11,
        -1.090618715220048e-12,
        2.2504645067625176e-14,
    ],
    [
        1.180890250216667,
        -0.00711653028237657,
        0.0001542832363943815,
        -2.5593107372440255e-07,
        -2.0668980396852448e-07,
        1.4336070103795114e-08,
        -6.677016177507447e-10,
        2.4575385586684327e-11,
        -7.336112663007682e-13,
        1.7114800207198128e-14,
    ],
    [
        1.1672693870998478,
        -0.006508053599319545,
        0.0001487890087448267,
        -1.430302373640851e-06,
        -9.726561020633294e-08,
        8.091969654432025e-09,
        -3.951278184418697e-10,
        1.5059283024855624e-11,
        -4.724379737617982e-13,
        1.2036640014646242e-14,
    ],
    [
        1.1548356727349751,
        -0.005932595909473439,
        0.0001384346737447339,
        -1.9403201465683416e-06,
        -3.6319995074303754e-08,
        4.426477128511983e-09,
        -2.298024593106103e-10,
        9.033032645740035e-12,
        -2.940438728766787e-13,
        7.976237366991286e-15,
    ],
    [
        1.1435082439547744,
        -0.005402989536420636,
        0.00012622561732241952,
        -2.0860168394531963e-06,
        -3.613080672595696e-09,
        2.310822025471616e-09,
        -1.3141484111474831e-10,
        5.32957350487226e-12,
        -1.783720921111068e-13,
        5.055346476059898e-15,
    ],
    [
        1.1331904875820227,
        -0.004923073037370906,
        0.00011377941280847367,
        -2.0408241648835604e-06,
        1.2921914066765652e-08,
        1.1110256368265746e-09,
        -7.372289981512976e-11,
        3.103620267610905e-12,
        -1.0620730385518592e-13,
        3.102113400477803e-15,
    ],
];
/// Beyond this u, t = (u - K) / (u + K) is 1 to within a rounding and (1 + 2u) erfcx(u) is
/// 2 / sqrt(pi) to 1e-20; clamping keeps t finite for huge u.
const ERFCX_T_CLAMP: f64 = 1e10;

/// erfcx(u) = exp(u^2) erfc(u) for u >= 0, to a few ulp.
#[inline(always)]
pub(super) fn erfcx_nonnegative(u: f64) -> f64 {
    debug_assert!(u >= 0.0, "erfcx_nonnegative({u})");
    let clamped = u.min(ERFCX_T_CLAMP);
    let t = (clamped - ERFCX_K) / (clamped + ERFCX_K);
    // t + 1 in [0, 2] counted in half-pieces; the last piece also takes t = 1.
    let position = (t + 1.0) * (ERFCX_PIECES.len() as f64 / 2.0);
    debug_assert!((0.0..=ERFCX_PIECES.len() as f64).contains(&position));
    // SAFETY: `position` is in [0, 16] (t is in [-1, 1] for every u, NaN included: `min` then
    // returns the clamp), so it converts to i32 exactly. The unchecked conversion and the clamp
    // (which removes the bounds check) let the compiler vectorise the batched pass, where the
    // saturating `as` keeps it scalar.
    let piece =
        unsafe { position.to_int_unchecked::<i32>() }.clamp(0, ERFCX_PIECES.len() as i32 - 1);
    let s = 2.0 * (position - f64::from(piece)) - 1.0;
    estrin_degree_9(&ERFCX_PIECES[piece as usize], s) / (1.0 + 2.0 * u)
}

/// sum_k c_k s^k for k = 0..=9 by Estrin's scheme: the same sum as Horner's rule in four
/// levels of independent products rather than nine dependent steps (this is most of erfcx's
/// latency).
fn estrin_degree_9(c: &[f64; 10], s: f64) -> f64 {
    let s2 = s * s;
    let s4 = s2 * s2;
    let pairs = [
        c[0] + c[1] * s,
        c[2] + c[3] * s,
        c[4] + c[5] * s,
        c[6] + c[7] * s,
        c[8] + c[9] * s,
    ];
    let low = pairs[0] + pairs[1] * s2;
    let high = pairs[2] + pairs[3] * s2;
    (low + high * s4) + pairs[4] * (s4 * s4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mpmath at 50 digits: `mpmath.exp(u**2) * mpmath.erfc(u)`.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn erfcx_matches_reference_values() {
        let reference = [
            (0.0, 1.0),
            (0.125, 0.873_221_845_082_150_81),
            (0.5, 0.615_690_344_192_925_87),
            (1.0, 0.427_583_576_155_807_00),
            (2.0, 0.255_395_676_310_505_74),
            (3.75, 0.145_589_721_275_038_54),
            (5.0, 0.110_704_637_733_068_63),
            (10.0, 0.056_140_992_743_822_586),
            (30.0, 0.018_795_888_861_416_751),
            (100.0, 5.641_613_782_989_432_9e-3),
            (100_000.0, 5.641_895_835_195_468_1e-6),
        ];
        for (u, expected) in reference {
            let got = erfcx_nonnegative(u);
            assert!(
                (got - expected).abs() <= 4.0 * f64::EPSILON * expected,
                "erfcx({u}) = {got:e}, expected {expected:e}"
            );
        }
    }
}
