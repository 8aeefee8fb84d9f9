//! `sampler.hyper = "surrogate-slice"`: Murray & Adams (2010), "Slice sampling covariance
//! hyperparameters of latent Gaussian models", with isotropic surrogate noise S = alpha I.
//!
//! An update draws surrogate data g = u + sqrt(alpha) eps, eps ~ N(0, I) on every cell, then
//! slice samples the unconstrained hyperparameters z holding g and the field's whitened residual
//! eta given g fixed, under p(z) N(g - m; 0, C + alpha I) p(data | u(z)), and sets the field to
//! u(z). With S = alpha I the conditional of u - m given g is diagonal in the prior's eigenbasis
//! C = U Lambda U^T: coefficient k has mean lambda_k h_k / (lambda_k + alpha) and variance
//! lambda_k alpha / (lambda_k + alpha), h = U^T (g - m). Writing the field's own coefficient as
//! sqrt(lambda_k) e_k (e = V^T xi, the whitened field in the eigenbasis), the residual and its
//! inverse are
//!
//!   eta_k = e_k sqrt((lambda_k + alpha) / alpha) - h_k sqrt(lambda_k / (alpha (lambda_k + alpha)))
//!   e_k   = eta_k sqrt(alpha / (lambda_k + alpha)) + h_k sqrt(lambda_k) / (lambda_k + alpha),
//!
//! neither dividing by a small eigenvalue. On a Kronecker grid L = L_y (x) L_x and the SVDs
//! L_a = U_a S_a V_a^T give U = U_y (x) U_x, V = V_y (x) V_x and lambda = s_y^2 (x) s_x^2: every
//! map is two D x D products, and no N x N matrix is formed.
//!
//! The slice over z is Neal's (2003) hyperrectangle: a box of width [`SLICE_WIDTH`] per
//! coordinate placed at random around z, shrunk towards z after each miss.
//!
//! alpha: the model's mean likelihood curvature per cell, N / sum_i W_i over the observations
//! (gaussian W = 1 / s^2; probit 2 / (pi s^2), the curvature at u = 0; poisson y + 1/2), so the
//! surrogate is about as informative as the data are on average.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

use super::chain::{Accepted, HyperChain, HyperState, UpdateInfo};
use super::settings::FieldKernel;
use crate::model::hyper::Hyperparameters;
use crate::model::prior::KroneckerPrior;
use crate::model::target::Target;
use crate::sampler::protocol::ChainRng;
use crate::sampler::protocol::Position;
use crate::sampler::shared::Retarget;

/// The slice box's width on every unconstrained coordinate.
pub(crate) const SLICE_WIDTH: f64 = 1.5;
/// Shrinks after which the update gives up and stays (the box halves on average per shrink).
const MAX_SHRINKS: u32 = 200;

/// The prior's eigenbasis on a Kronecker grid, from the SVDs of its axis factors.
struct Basis {
    nx: usize,
    ny: usize,
    ux: Mat<f64>,
    vx: Mat<f64>,
    uy: Mat<f64>,
    vy: Mat<f64>,
    /// lambda, in the grid's column-major cell order.
    eigenvalues: Vec<f64>,
}

impl Basis {
    fn new(prior: &KroneckerPrior) -> Option<Self> {
        let x = prior.axis_factor().svd().ok()?;
        let y = prior.y_axis_factor().svd().ok()?;
        let (nx, ny) = (x.U().nrows(), y.U().nrows());
        let sx: Vec<f64> = (0..nx).map(|i| x.S()[i]).collect();
        let sy: Vec<f64> = (0..ny).map(|j| y.S()[j]).collect();
        let eigenvalues = (0..nx * ny)
            .map(|c| (sx[c % nx] * sy[c / nx]).powi(2))
            .collect();
        Some(Self {
            nx,
            ny,
            ux: x.U().to_owned(),
            vx: x.V().to_owned(),
            uy: y.U().to_owned(),
            vy: y.V().to_owned(),
            eigenvalues,
        })
    }

    /// op(A) X op(B)^T, X the nx x ny layout of `x` (op = transpose when asked).
    fn sandwich(
        &self,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        x: &[f64],
        transpose: bool,
    ) -> Vec<f64> {
        let (nx, ny) = (self.nx, self.ny);
        let (a, b) = if transpose {
            (a.transpose(), b.transpose())
        } else {
            (a, b)
        };
        let x = MatRef::from_column_major_slice(x, nx, ny);
        let mut left = Mat::<f64>::zeros(nx, ny);
        matmul(left.as_mut(), Accum::Replace, a, x, 1.0, Par::Seq);
        let mut out = vec![0.0; nx * ny];
        let out_mat = MatMut::from_column_major_slice_mut(&mut out, nx, ny);
        matmul(
            out_mat,
            Accum::Replace,
            left.as_ref(),
            b.transpose(),
            1.0,
            Par::Seq,
        );
        out
    }

    /// U^T v for a field v.
    fn to_eigen(&self, v: &[f64]) -> Vec<f64> {
        self.sandwich(self.ux.as_ref(), self.uy.as_ref(), v, true)
    }

    /// U c for coefficients c.
    fn eigen_to_field(&self, c: &[f64]) -> Vec<f64> {
        self.sandwich(self.ux.as_ref(), self.uy.as_ref(), c, false)
    }

    /// e = V^T xi.
    fn to_spectral(&self, xi: &[f64]) -> Vec<f64> {
        self.sandwich(self.vx.as_ref(), self.vy.as_ref(), xi, true)
    }

    /// xi = V e.
    fn to_whitened(&self, e: &[f64]) -> Vec<f64> {
        self.sandwich(self.vx.as_ref(), self.vy.as_ref(), e, false)
    }
}

/// The hyperparameters' point with everything the slice density and the move need.
struct SlicePoint {
    log_density: f64,
    accepted: Accepted,
}

impl<K: FieldKernel> HyperChain<K> {
    pub(super) fn surrogate_slice<S: Retarget>(
        &self,
        state: &mut HyperState<S>,
        base: &Target,
        rng: &mut ChainRng,
    ) -> UpdateInfo {
        let alpha = self.surrogate.alpha;
        let cells = base.cells();
        let mut noise = vec![0.0; cells];
        rng.normals(&mut noise);
        let field = state.field.field();
        let surrogate: Vec<f64> = field
            .iter()
            .zip(&noise)
            .map(|(u, n)| u + alpha.sqrt() * n)
            .collect();
        let Some(basis) = kronecker(self, &state.values).and_then(|p| Basis::new(&p)) else {
            return UpdateInfo::default();
        };
        // The fixed residual eta at the current point.
        let h = basis.to_eigen(&shifted(&surrogate, state.values.mean));
        let e = basis.to_spectral(state.field.position());
        let eta: Vec<f64> = e
            .iter()
            .zip(&h)
            .zip(&basis.eigenvalues)
            .map(|((&e, &h), &l)| {
                e * ((l + alpha) / alpha).sqrt() - h * (l / (alpha * (l + alpha))).sqrt()
            })
            .collect();
        // The slice density at the current point: its field is the chain's own (u(z0) = u), so
        // only the surrogate's term is new.
        let current = state.log_prior
            + log_surrogate(&h, &basis.eigenvalues, alpha)
            + state.field.log_likelihood();
        let mut evaluations = 0;
        let level = current + rng.uniform().ln();
        let d = state.z.len();
        let z0 = state.z.clone();
        let mut low: Vec<f64> = z0
            .iter()
            .map(|&z| z - SLICE_WIDTH * rng.uniform())
            .collect();
        let mut high: Vec<f64> = low.iter().map(|&l| l + SLICE_WIDTH).collect();
        for _ in 0..MAX_SHRINKS {
            let candidate: Vec<f64> = (0..d)
                .map(|k| low[k] + (high[k] - low[k]) * rng.uniform())
                .collect();
            evaluations += 1;
            match self.slice_point(state, base, &candidate, &surrogate, &eta) {
                Some(point) if point.log_density > level => {
                    state.accept(self.priors(), point.accepted, base);
                    return UpdateInfo {
                        moved: true,
                        loglik_evaluations: evaluations,
                        gradient_evaluations: 0,
                    };
                }
                _ => {
                    for k in 0..d {
                        if candidate[k] < z0[k] {
                            low[k] = candidate[k];
                        } else {
                            high[k] = candidate[k];
                        }
                    }
                }
            }
        }
        UpdateInfo {
            moved: false,
            loglik_evaluations: evaluations,
            gradient_evaluations: 0,
        }
    }

    /// The slice density at `z` given the surrogate `g` and the residual `eta`, and the field
    /// there; `None` where the prior density is zero or the prior cannot be built.
    fn slice_point<S: Retarget>(
        &self,
        state: &HyperState<S>,
        base: &Target,
        z: &[f64],
        g: &[f64],
        eta: &[f64],
    ) -> Option<SlicePoint> {
        let alpha = self.surrogate.alpha;
        let log_prior = self.priors().log_density_unconstrained(z);
        if !log_prior.is_finite() {
            return None;
        }
        let values = self.priors().from_unconstrained(z, state.values);
        let prior = kronecker(self, &values)?;
        let basis = Basis::new(&prior)?;
        let h = basis.to_eigen(&shifted(g, values.mean));
        let mut e = vec![0.0; h.len()];
        let mut scaled = vec![0.0; h.len()];
        for k in 0..h.len() {
            let l = basis.eigenvalues[k];
            e[k] = eta[k] * (alpha / (l + alpha)).sqrt() + h[k] * l.sqrt() / (l + alpha);
            scaled[k] = l.sqrt() * e[k];
        }
        let mut field = basis.eigen_to_field(&scaled);
        for u in field.iter_mut() {
            *u += values.mean;
        }
        let xi = basis.to_whitened(&e);
        let mut observed = vec![0.0; base.observations()];
        base.gather(&field, &mut observed);
        let log_likelihood = base.likelihood.log_likelihood(&observed);
        Some(SlicePoint {
            log_density: log_prior + log_surrogate(&h, &basis.eigenvalues, alpha) + log_likelihood,
            accepted: Accepted {
                z: z.to_vec(),
                log_prior,
                values,
                prior: Box::new(prior),
                position: Position {
                    xi,
                    field,
                    observed,
                    log_likelihood,
                },
            },
        })
    }
}

/// The Kronecker prior at `values` (the hyperparameter keys allow only separable priors).
fn kronecker<K>(chain: &HyperChain<K>, values: &Hyperparameters) -> Option<KroneckerPrior> {
    KroneckerPrior::new(chain.model.grid, chain.model.kernel.at(values)).ok()
}

/// log N(g - m; 0, C + alpha I) up to its constant, from h = U^T (g - m) and C's eigenvalues.
fn log_surrogate(h: &[f64], eigenvalues: &[f64], alpha: f64) -> f64 {
    h.iter()
        .zip(eigenvalues)
        .map(|(h, l)| -0.5 * (h * h / (l + alpha) + (l + alpha).ln()))
        .sum()
}

/// v - mean.
fn shifted(v: &[f64], mean: f64) -> Vec<f64> {
    v.iter().map(|x| x - mean).collect()
}
