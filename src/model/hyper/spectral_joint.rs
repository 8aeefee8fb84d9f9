//! The joint posterior in coordinates partially centred per prior eigenmode
//! (`sampler.hyper = "joint-spectral"`): a parametrisation of fieldmc's own that follows the
//! hyperparameters.
//!
//! The non-centred chain ([`super::joint`]) moves xi with u = mean + sqrt(v) S(l) xi. Where the data
//! are strong, xi's posterior is narrow along the prior's leading eigenmodes and its width
//! there changes with (l, v): a funnel no fixed mass matrix fits. Here the field's whitened
//! coordinates are eta, with
//!
//!   xi = C(K) eta,   C(K) = (I + v w K)^(-1/2),   K = K_y (x) K_x (unit variance, jitter),
//!
//! w a constant data curvature (the likelihood's mean curvature per cell). Under a gaussian
//! likelihood of curvature w the conditional posterior of every eigen-coordinate of eta has unit
//! variance at every (l, v): eta is centred where the data are strong (v w lambda >> 1) and
//! non-centred where they are weak, mode by mode (Papaspiliopoulos, Roberts & Skold 2007's
//! partial non-centring, on the prior's eigenbasis). With K = Q diag(lambda) Q^T,
//!
//!   u = mean + Q diag(F(lambda)) Q^T eta + X (s z_beta),   F(x) = sqrt(v x / (1 + v w x)),
//!   log pi = loglik(G u) - eta^T G(K) eta / 2 - sum log(1 + v w lambda) / 2 - |z_beta|^2 / 2
//!            + log p(z_theta),   G(x) = 1 / (1 + v w x),
//!
//! the log-determinant being the Jacobian of eta -> xi. Every term is a function of K applied
//! through the axis eigendecompositions (O(N (nx + ny)) per product). The derivative in log l of a
//! matrix function f(K) is, by Daleckii & Krein, Q (f[1] o (Q^T dK Q)) Q^T with the divided
//! differences f[1]; for F and G they have closed forms without cancellation,
//!
//!   F[1](a, b) = v / ((1 + v w a) (1 + v w b) (F(a) + F(b))),
//!   G[1](a, b) = -v w / ((1 + v w a) (1 + v w b)),
//!
//! and Q^T (dK / d log l_x) Q = Lambda_y (x) R_x (R_x = Q_x^T dK_x Q_x) couples only modes that
//! share their y index, so the sums cost O(N nx) (and O(N ny) along y).

use super::joint::JointLayout;
use super::{HyperName, Hyperparameters};
use crate::model::likelihood::Likelihood;
use crate::model::prior::differentiable::AxisEigen;
use crate::model::spec::ModelSpec;
use crate::model::target::Observed;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// The eigenbases of both axes at one length scale.
struct Spectrum {
    x: AxisEigen,
    y: AxisEigen,
}

impl Spectrum {
    fn new(model: &ModelSpec, values: &Hyperparameters) -> Option<Self> {
        let kind = model.kernel.kind;
        let x = AxisEigen::new(model.grid.x_axis(), kind, values.length_scale).ok()?;
        let ly = values.length_scale_y.unwrap_or(values.length_scale);
        let y = AxisEigen::new(model.grid.y_axis(), kind, ly).ok()?;
        Some(Self { x, y })
    }

    /// out = Q^T v (or Q v when `back`), v in the grid's nx x ny layout.
    fn rotate(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64], back: bool) {
        let (nx, ny) = (self.x.values.len(), self.y.values.len());
        let (qx, qy) = (self.x.vectors.as_ref(), self.y.vectors.as_ref());
        let (left, right) = if back {
            (qx, qy.transpose())
        } else {
            (qx.transpose(), qy)
        };
        let v = MatRef::from_column_major_slice(v, nx, ny);
        let mut half = MatMut::from_column_major_slice_mut(&mut scratch[..nx * ny], nx, ny);
        matmul(half.as_mut(), Accum::Replace, left, v, 1.0, Par::Seq);
        let out = MatMut::from_column_major_slice_mut(out, nx, ny);
        matmul(out, Accum::Replace, half.as_ref(), right, 1.0, Par::Seq);
        crate::simd_state::clear_upper_state();
    }

    /// lambda of mode (i, j).
    fn value(&self, i: usize, j: usize) -> f64 {
        self.x.values[i] * self.y.values[j]
    }
}

/// The joint posterior density in the partially centred coordinates; q = [eta, z_beta, z_theta].
#[derive(Debug, Clone)]
pub(crate) struct SpectralJointDensity<'a> {
    layout: JointLayout<'a>,
    likelihood: &'a Likelihood,
    /// Where the data see the field.
    observed: Observed<'a>,
    /// w: the data's curvature per cell.
    curvature: f64,
}

/// The quantities of one point that the gradient reuses.
struct Point {
    values: Hyperparameters,
    spectrum: Spectrum,
    /// eta rotated to the eigenbasis.
    rotated: Vec<f64>,
    /// The field u.
    field: Vec<f64>,
}

impl<'a> SpectralJointDensity<'a> {
    /// The density of `model` on data `likelihood` seen through `observed`, the
    /// hyperparameters not inferred fixed at `base`, centred for data curvature `curvature`.
    pub(crate) fn new(
        model: &'a ModelSpec,
        base: Hyperparameters,
        likelihood: &'a Likelihood,
        observed: Observed<'a>,
        curvature: f64,
    ) -> Self {
        Self {
            layout: JointLayout::new(model, base),
            likelihood,
            observed,
            curvature,
        }
    }

    pub(crate) fn model(&self) -> &'a ModelSpec {
        self.layout.model
    }

    pub(crate) fn layout(&self) -> &JointLayout<'a> {
        &self.layout
    }

    /// q at whitened coordinates `xi` (and `z_beta` after them) and hyperparameters `values`:
    /// eta = C(K)^-1 xi.
    #[allow(clippy::wrong_self_convention)] // the density maps its own coordinates
    pub(crate) fn from_whitened(&self, xi: &[f64], values: &Hyperparameters) -> Option<Vec<f64>> {
        let n = self.layout.field_dim();
        let mut q = self.scale_modes(&xi[..n], values, false)?;
        q.extend_from_slice(&xi[n..]);
        q.extend(self.layout.priors().to_unconstrained(values));
        Some(q)
    }

    /// The whitened coordinates xi = C(K) eta (and z_beta) of q.
    pub(crate) fn whitened(&self, q: &[f64]) -> Option<Vec<f64>> {
        let n = self.layout.field_dim();
        let mut xi = self.scale_modes(&q[..n], &self.layout.values(q), true)?;
        xi.extend_from_slice(&q[n..self.layout.latent_dim()]);
        Some(xi)
    }

    /// (I + v w K)^(1/2) x, or (I + v w K)^(-1/2) x when `inverse`, through the axis
    /// eigenbases at `values`.
    fn scale_modes(&self, x: &[f64], values: &Hyperparameters, inverse: bool) -> Option<Vec<f64>> {
        let n = self.layout.field_dim();
        let spectrum = Spectrum::new(self.layout.model, values)?;
        let (mut rotated, mut scratch) = (vec![0.0; n], vec![0.0; n]);
        spectrum.rotate(x, &mut rotated, &mut scratch, false);
        let nx = spectrum.x.values.len();
        for (k, r) in rotated.iter_mut().enumerate() {
            let lambda = spectrum.value(k % nx, k / nx);
            let root = (1.0 + values.variance * self.curvature * lambda).sqrt();
            if inverse {
                *r /= root;
            } else {
                *r *= root;
            }
        }
        let mut out = vec![0.0; n];
        spectrum.rotate(&rotated, &mut out, &mut scratch, true);
        Some(out)
    }

    /// The field at q into `field`, with the point's hyperparameters and log-likelihood.
    pub(crate) fn point(&self, q: &[f64], field: &mut [f64]) -> Option<(Hyperparameters, f64)> {
        let point = self.evaluate(q)?;
        field.copy_from_slice(&point.field);
        let observed = self.observed(&point.field);
        let log_likelihood = self
            .layout
            .log_likelihood(self.likelihood, &point.values, &observed);
        Some((point.values, log_likelihood))
    }

    /// G u: the field `field` at each observation.
    pub(crate) fn observed(&self, field: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.observed.len()];
        self.observed.gather(field, &mut out);
        out
    }

    fn evaluate(&self, q: &[f64]) -> Option<Point> {
        let (n, latent) = (self.layout.field_dim(), self.layout.latent_dim());
        let values = self.layout.values(q);
        let spectrum = Spectrum::new(self.layout.model, &values)?;
        let (mut rotated, mut scratch) = (vec![0.0; n], vec![0.0; n]);
        spectrum.rotate(&q[..n], &mut rotated, &mut scratch, false);
        let nx = spectrum.x.values.len();
        let (v, w) = (values.variance, self.curvature);
        let mut scaled = vec![0.0; n];
        for (k, (s, r)) in scaled.iter_mut().zip(&rotated).enumerate() {
            let lambda = spectrum.value(k % nx, k / nx);
            *s = (v * lambda / (1.0 + v * w * lambda)).sqrt() * r;
        }
        let mut field = vec![0.0; n];
        spectrum.rotate(&scaled, &mut field, &mut scratch, true);
        for u in &mut field {
            *u += values.mean;
        }
        if let Some(covariates) = self.layout.covariates() {
            covariates.add_whitened_effect(&q[n..latent], &mut field);
        }
        Some(Point {
            values,
            spectrum,
            rotated,
            field,
        })
    }

    /// log pi(q) up to a constant, with its gradient; -inf where the prior cannot be built.
    pub(crate) fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        let (n, latent) = (self.layout.field_dim(), self.layout.latent_dim());
        let z = &q[latent..];
        let log_prior = self.layout.priors().log_density_unconstrained(z);
        if !log_prior.is_finite() {
            return f64::NEG_INFINITY;
        }
        let Some(point) = self.evaluate(q) else {
            return f64::NEG_INFINITY;
        };
        let Point {
            values,
            spectrum,
            rotated,
            field,
        } = point;
        let observed = self.observed(&field);
        let mut observed_gradient = vec![0.0; observed.len()];
        let (log_likelihood, noise_slope) = self.layout.log_likelihood_and_gradient(
            self.likelihood,
            &values,
            &observed,
            &mut observed_gradient,
        );
        let mut g = vec![0.0; n];
        self.observed.scatter(&observed_gradient, &mut g);
        let mut scratch = vec![0.0; n];
        let mut g_rotated = vec![0.0; n];
        spectrum.rotate(&g, &mut g_rotated, &mut scratch, false);
        let (nx, v, w) = (spectrum.x.values.len(), values.variance, self.curvature);
        // Per mode: F, G, and the sums of the log-variance slope and of the prior term.
        let mut eta_gradient = vec![0.0; n];
        let (mut quadratic, mut log_det) = (0.0, 0.0);
        let mut variance_slope = 0.0;
        for k in 0..n {
            let lambda = spectrum.value(k % nx, k / nx);
            let h = v * w * lambda;
            let shrink = 1.0 / (1.0 + h);
            let amplitude = (v * lambda * shrink).sqrt();
            let (e, gr) = (rotated[k], g_rotated[k]);
            eta_gradient[k] = amplitude * gr - shrink * e;
            quadratic += shrink * e * e;
            log_det += h.ln_1p();
            variance_slope += gr * e * amplitude * shrink / 2.0 + e * e * h * shrink * shrink / 2.0
                - h * shrink / 2.0;
        }
        spectrum.rotate(&eta_gradient, &mut gradient[..n], &mut scratch, true);
        if let Some(covariates) = self.layout.covariates() {
            covariates.whitened_gradient(&g, &mut gradient[n..latent]);
            for (gk, &zk) in gradient[n..latent].iter_mut().zip(&q[n..latent]) {
                *gk -= zk;
            }
        }
        let beta_squared: f64 = q[n..latent].iter().map(|x| x * x).sum();
        let infers_length_scale = self
            .layout
            .priors()
            .names()
            .any(|name| matches!(name, HyperName::LengthScale | HyperName::LengthScaleY));
        let slopes = infers_length_scale
            .then(|| self.length_scale_slopes(&spectrum, &values, &rotated, &g_rotated));
        let isotropic = values.length_scale_y.is_none();
        for (k, (name, prior)) in self.layout.model.hyper.iter().enumerate() {
            let value = values.get(*name);
            let per_value = match name {
                HyperName::LengthScale => {
                    let (x, y) = slopes.expect("computed when a length scale is inferred");
                    (x + if isotropic { y } else { 0.0 }) / value
                }
                HyperName::LengthScaleY => {
                    slopes.expect("computed when a length scale is inferred").1 / value
                }
                HyperName::Variance => variance_slope / value,
                HyperName::Mean => g.iter().sum(),
                HyperName::NoiseSd => noise_slope,
            };
            gradient[latent + k] =
                per_value * prior.value_slope(z[k]) + prior.log_density_unconstrained_slope(z[k]);
        }
        log_likelihood - 0.5 * quadratic - 0.5 * log_det - 0.5 * beta_squared + log_prior
    }

    /// d log pi / d log l_x and d log l_y, by the divided differences of the module docs.
    fn length_scale_slopes(
        &self,
        spectrum: &Spectrum,
        values: &Hyperparameters,
        eta: &[f64],
        g: &[f64],
    ) -> (f64, f64) {
        let (nx, ny) = (spectrum.x.values.len(), spectrum.y.values.len());
        let (v, w) = (values.variance, self.curvature);
        let lambda: Vec<f64> = (0..nx * ny)
            .map(|k| spectrum.value(k % nx, k / nx))
            .collect();
        let one_plus: Vec<f64> = lambda.iter().map(|&l| 1.0 + v * w * l).collect();
        let f: Vec<f64> = lambda
            .iter()
            .zip(&one_plus)
            .map(|(&l, &o)| (v * l / o).sqrt())
            .collect();
        // The value's change for Q^T dK Q = D is the sum over mode pairs (a, b) of D_ab times
        // g_a F[1](a, b) eta_b - eta_a G[1](a, b) eta_b / 2 - [a = b] v w / (2 (1 + v w l_a))
        // = s_a s_b (v g_a eta_b / (F_a + F_b) + v w eta_a eta_b / 2) - [a = b] v w s_a / 2,
        // s = 1 / (1 + v w l).
        let shrink: Vec<f64> = one_plus.iter().map(|o| 1.0 / o).collect();
        let sg: Vec<f64> = (0..nx * ny).map(|a| v * shrink[a] * g[a]).collect();
        let se: Vec<f64> = (0..nx * ny).map(|a| shrink[a] * eta[a]).collect();
        let pair = |a: usize, b: usize| sg[a] * se[b] / (f[a] + f[b]) + 0.5 * v * w * se[a] * se[b];
        let diagonal = |a: usize| -0.5 * v * w * shrink[a];
        // Along x, D = Lambda_y (x) R_x couples modes (i, j) and (i2, j); along y,
        // D = R_y (x) Lambda_x couples (i, j) and (i, j2).
        let along = |axis: &AxisEigen, other: &AxisEigen, mode: &dyn Fn(usize, usize) -> usize| {
            let r = &axis.rotated_slope;
            let mut total = 0.0;
            for (o, &mu) in other.values.iter().enumerate() {
                let mut sum = 0.0;
                for k2 in 0..axis.values.len() {
                    let b = mode(k2, o);
                    for k in 0..axis.values.len() {
                        sum += r[(k, k2)] * pair(mode(k, o), b);
                    }
                    sum += r[(k2, k2)] * diagonal(b);
                }
                total += mu * sum;
            }
            total
        };
        let x_slope = along(&spectrum.x, &spectrum.y, &|i, j| j * nx + i);
        let y_slope = along(&spectrum.y, &spectrum.x, &|j, i| j * nx + i);
        (x_slope, y_slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::hyper::fixtures::{base, check_gradient, gradient_models, model, sites};
    use crate::model::spec::KernelSpec;

    /// The gradient against central differences for each likelihood, the data at cells and at
    /// scattered sites: isotropic with every hyperparameter inferred, and per-axis length scales
    /// with a covariate on a rectangle.
    #[test]
    fn spectral_joint_gradient_matches_finite_differences() {
        for spec in &gradient_models() {
            let cells: Vec<usize> = (0..spec.grid.cells()).step_by(2).collect();
            let sites = sites(spec.grid, cells.len());
            for observed in [Observed::Cells(&cells), Observed::Sites(&sites)] {
                for likelihood in crate::model::likelihood::one_of_each(observed.len()) {
                    let mut density = SpectralJointDensity::new(
                        spec,
                        base(spec.kernel.length_scale_y),
                        &likelihood,
                        observed,
                        1.7,
                    );
                    let what = format!("{:?} {} {observed:?}", likelihood.kind(), spec.grid);
                    let q = check_gradient(
                        density.layout().dim(),
                        |q, g| density.log_density(q, g),
                        &what,
                    );
                    // The round trip through the whitened coordinates.
                    let values = density.layout().values(&q);
                    let xi = density.whitened(&q).unwrap();
                    let back = density.from_whitened(&xi, &values).unwrap();
                    for (a, b) in q.iter().zip(&back) {
                        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
                    }
                }
            }
        }
    }

    /// With w = 0 the parametrisation is the non-centred one: the same log density as
    /// [`super::super::joint::JointDensity`] at the same point.
    #[test]
    fn zero_curvature_is_the_non_centred_density() {
        let spec = model(
            Grid::new(4),
            KernelSpec::squared_exponential(0.4, 1.3),
            &[
                (HyperName::LengthScale, "log-normal(-1, 0.8)"),
                (HyperName::Variance, "gamma(2, 2)"),
            ],
        );
        let observed: Vec<usize> = (0..16).collect();
        let likelihood = &crate::model::likelihood::one_of_each(16)[2];
        let mut spectral = SpectralJointDensity::new(
            &spec,
            base(None),
            likelihood,
            Observed::Cells(&observed),
            0.0,
        );
        let mut plain = super::super::joint::JointDensity::new(
            &spec,
            base(None),
            likelihood,
            Observed::Cells(&observed),
            super::super::joint::JointRoot::for_model(&spec, base(None)).unwrap(),
        );
        let q: Vec<f64> = (0..18).map(|k| ((k * 3 % 7) as f64 - 3.0) / 6.0).collect();
        let (mut a, mut b) = (vec![0.0; 18], vec![0.0; 18]);
        let (x, y) = (
            spectral.log_density(&q, &mut a),
            plain.log_density(&q, &mut b),
        );
        assert!((x - y).abs() < 1e-8, "{x} vs {y}");
        for k in 0..18 {
            assert!(
                (a[k] - b[k]).abs() < 1e-7,
                "coordinate {k}: {} vs {}",
                a[k],
                b[k]
            );
        }
    }
}
