//! The skew-normal distribution (Azzalini 1985): the shape INLA's simplified Laplace
//! approximation gives a cell's marginal (Rue, Martino & Chopin 2009, section 3.2.3), fitted to a
//! mean, an sd and a skewness ([`SkewNormal::from_moments`]); its density, its CDF through Owen's
//! T function ([`owens_t`]) and expectations of functions whose gaussian expectation has a closed
//! form ([`SkewNormal::expectation`]).
//!
//! X = xi + omega Z with Z of density 2 phi(z) Phi(alpha z); with delta = alpha / sqrt(1 +
//! alpha^2) and b = sqrt(2 / pi): mean xi + omega delta b, variance omega^2 (1 - delta^2 b^2),
//! skewness (4 - pi) / 2 (delta b)^3 / (1 - delta^2 b^2)^3/2, at most 0.9953 in absolute value;
//! P(X <= x) = Phi(z) - 2 T(z, alpha), z = (x - xi) / omega. Z is also delta |Z0| + sqrt(1 -
//! delta^2) Z1 with Z0, Z1 independent standard normals, which turns an expectation into a
//! half-normal integral of gaussian expectations.

use super::special::phi;

/// The largest |skewness| a fit is given: the family reaches 0.9953, where alpha is infinite.
pub(crate) const MAX_SKEWNESS: f64 = 0.99;

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// A skew-normal distribution: location xi, scale omega > 0, shape alpha.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SkewNormal {
    location: f64,
    scale: f64,
    shape: f64,
}

impl SkewNormal {
    /// The skew-normal of this mean, sd (> 0) and skewness (clamped to +-[`MAX_SKEWNESS`]).
    pub(crate) fn from_moments(mean: f64, sd: f64, skewness: f64) -> Self {
        let skewness = skewness.clamp(-MAX_SKEWNESS, MAX_SKEWNESS);
        // |skewness|^2/3 = c^2/3 u^2 / (1 - u^2) with u = delta b and c = (4 - pi) / 2.
        let r = skewness.abs().powf(2.0 / 3.0);
        let c = ((4.0 - std::f64::consts::PI) / 2.0).powf(2.0 / 3.0);
        let u = (r / (r + c)).sqrt().copysign(skewness);
        let delta = u / SQRT_2_OVER_PI;
        let scale = sd / (1.0 - u * u).sqrt();
        Self {
            location: mean - scale * u,
            scale,
            shape: delta / (1.0 - delta * delta).sqrt(),
        }
    }

    /// delta = alpha / sqrt(1 + alpha^2).
    fn delta(&self) -> f64 {
        self.shape / (1.0 + self.shape * self.shape).sqrt()
    }

    #[cfg(test)]
    fn mean(&self) -> f64 {
        self.location + self.scale * self.delta() * SQRT_2_OVER_PI
    }

    #[cfg(test)]
    fn sd(&self) -> f64 {
        let u = self.delta() * SQRT_2_OVER_PI;
        self.scale * (1.0 - u * u).sqrt()
    }

    #[cfg(test)]
    fn skewness(&self) -> f64 {
        let u = self.delta() * SQRT_2_OVER_PI;
        (4.0 - std::f64::consts::PI) / 2.0 * u.powi(3) / (1.0 - u * u).powf(1.5)
    }

    /// The density at x.
    pub(crate) fn density(&self, x: f64) -> f64 {
        let z = (x - self.location) / self.scale;
        2.0 / self.scale * FRAC_1_SQRT_2PI * (-0.5 * z * z).exp() * phi(self.shape * z)
    }

    /// P(X > x), accurate in absolute terms (about 1e-11).
    pub(crate) fn survival(&self, x: f64) -> f64 {
        let z = (x - self.location) / self.scale;
        (phi(-z) + 2.0 * owens_t(z, self.shape)).clamp(0.0, 1.0)
    }

    /// E f(X) from `gaussian(m, s)` = E f(m + s Z1): X = xi + omega (delta t + sqrt(1 - delta^2)
    /// Z1) with t half-normal, so E f(X) = int_0^inf 2 phi(t) gaussian(xi + omega delta t, omega
    /// sqrt(1 - delta^2)) dt, by Simpson's rule on [0, 9] (the half-normal's mass beyond is
    /// 2e-19), to about 1e-10 relative. Exact for the gaussian (shape 0).
    pub(crate) fn expectation(&self, gaussian: impl Fn(f64, f64) -> f64) -> f64 {
        let delta = self.delta();
        let spread = self.scale * (1.0 - delta * delta).sqrt();
        if delta == 0.0 {
            return gaussian(self.location, spread);
        }
        let half_normal = |t: f64| {
            2.0 * FRAC_1_SQRT_2PI
                * (-0.5 * t * t).exp()
                * gaussian(self.location + self.scale * delta * t, spread)
        };
        simpson(half_normal, 0.0, 9.0, 720)
    }

    /// E exp(X + offset) = 2 exp(xi + offset + omega^2 / 2) Phi(delta omega): the expected
    /// count of a log-intensity with this marginal.
    pub(crate) fn exp_mean(&self, offset: f64) -> f64 {
        let omega = self.scale;
        2.0 * (self.location + offset + 0.5 * omega * omega).exp() * phi(self.delta() * omega)
    }
}

/// Owen's T function T(h, a) = 1 / (2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt, to about
/// 1e-11 absolute: Simpson's rule on [0, a] for |a| <= 1, else the identity T(h, a) + T(a h, 1 /
/// a) = Phi(h) / 2 + Phi(a h) / 2 - Phi(h) Phi(a h) (a > 0), and T(h, -a) = -T(h, a).
pub(crate) fn owens_t(h: f64, a: f64) -> f64 {
    if a < 0.0 {
        return -owens_t(h, -a);
    }
    if a <= 1.0 {
        return owens_t_simpson(h, a);
    }
    let (ph, pah) = (phi(h), phi(a * h));
    0.5 * ph + 0.5 * pah - ph * pah - owens_t_simpson(a * h, 1.0 / a)
}

/// T(h, a) for 0 <= a <= 1 by Simpson's rule: the integrand is smooth, its narrowest feature of
/// width 1 / |h| (where the value is below exp(-h^2 / 2)).
fn owens_t_simpson(h: f64, a: f64) -> f64 {
    if a == 0.0 {
        return 0.0;
    }
    let f = |t: f64| {
        let s = 1.0 + t * t;
        (-0.5 * h * h * s).exp() / s
    };
    simpson(f, 0.0, a, 200) / (2.0 * std::f64::consts::PI)
}

/// Simpson's rule for the integral of `f` over [low, high] in `intervals` (even) steps: the
/// skew-normal's expectations, Owen's T and the divergence of a corrected marginal
/// ([`crate::sampler::marginal_check`]) integrate smooth, fast-decaying functions with it.
pub(crate) fn simpson(f: impl Fn(f64) -> f64, low: f64, high: f64, intervals: usize) -> f64 {
    debug_assert!(intervals.is_multiple_of(2) && intervals > 0);
    let step = (high - low) / intervals as f64;
    let at = |k: usize| f(low + k as f64 * step);
    let inner: f64 = (1..intervals)
        .map(|k| if k % 2 == 1 { 4.0 } else { 2.0 } * at(k))
        .sum();
    step / 3.0 * (at(0) + inner + at(intervals))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integral the tests check against: Simpson's rule in `n` steps.
    fn integral(f: impl Fn(f64) -> f64, low: f64, high: f64, n: usize) -> f64 {
        simpson(f, low, high, n)
    }

    /// Owen's T at its closed forms: T(0, a) = atan(a) / (2 pi), T(h, 1) = Phi(h) (1 - Phi(h)) /
    /// 2, T(h, 0) = 0, and oddness in a; across the identity's switch at a = 1 it is continuous.
    #[test]
    fn owens_t_matches_its_closed_forms() {
        for a in [0.1f64, 0.5, 1.0, 2.0, 9.0, 60.0] {
            let exact = a.atan() / (2.0 * std::f64::consts::PI);
            assert!((owens_t(0.0, a) - exact).abs() < 1e-11, "a = {a}");
            assert_eq!(owens_t(0.7, -a), -owens_t(0.7, a));
        }
        for h in [-3.0, -0.4, 0.0, 0.3, 1.5, 4.0, 9.0] {
            let exact = 0.5 * phi(h) * (1.0 - phi(h));
            assert!((owens_t(h, 1.0) - exact).abs() < 1e-11, "h = {h}");
            assert_eq!(owens_t(h, 0.0), 0.0);
            let (below, above) = (owens_t(h, 1.0 - 1e-9), owens_t(h, 1.0 + 1e-9));
            assert!((below - above).abs() < 1e-9, "h = {h}");
        }
    }

    /// The fit has the asked mean, sd and skewness; its density integrates to 1 with that mean
    /// and sd; its survival function is the integral of its density above x.
    #[test]
    fn the_fit_has_its_moments_and_its_cdf_is_its_density_integrated() {
        for (mean, sd, skewness) in [
            (0.3, 1.2, 0.0),
            (-1.0, 0.5, 0.2),
            (2.0, 0.8, -0.6),
            (0.0, 1.0, 0.95),
        ] {
            let d = SkewNormal::from_moments(mean, sd, skewness);
            assert!((d.mean() - mean).abs() < 1e-12);
            assert!((d.sd() - sd).abs() < 1e-12);
            assert!((d.skewness() - skewness).abs() < 1e-9, "{skewness}");
            let (low, high) = (mean - 12.0 * sd, mean + 12.0 * sd);
            let mass = integral(|x| d.density(x), low, high, 40_000);
            let first = integral(|x| x * d.density(x), low, high, 40_000);
            let second = integral(|x| (x - mean).powi(2) * d.density(x), low, high, 40_000);
            assert!((mass - 1.0).abs() < 1e-9, "{mass}");
            assert!((first - mean).abs() < 1e-9);
            assert!((second.sqrt() - sd).abs() < 1e-9);
            for x in [mean - 2.0 * sd, mean, mean + 0.5 * sd, mean + 3.0 * sd] {
                let above = integral(|t| d.density(t), x, high, 40_000);
                assert!((d.survival(x) - above).abs() < 1e-9, "x = {x}");
            }
            // E exp(X): the closed form and the half-normal integral of the gaussian's closed
            // form against the density's integral.
            let direct = integral(|x| x.exp() * d.density(x), low, high, 40_000);
            let closed = d.exp_mean(0.0);
            assert!(
                (closed - direct).abs() < 1e-10 * direct,
                "{closed} {direct}"
            );
            let mixed = d.expectation(|m, s| (m + 0.5 * s * s).exp());
            assert!((mixed - direct).abs() < 1e-9 * direct, "{mixed} {direct}");
        }
        // Beyond the family's reach the skewness is clamped, not NaN.
        let extreme = SkewNormal::from_moments(0.0, 1.0, 3.0);
        assert!((extreme.skewness() - MAX_SKEWNESS).abs() < 1e-9);
    }
}
