//! Exact draws from the Laplace gaussian N(xi^, H^-1), H = I + L^T G^T W G L, without forming
//! H or a square root of it: perturbation and solve (Papandreou & Yuille 2010). With
//! z1 ~ N(0, I_N) and z2 ~ N(0, I_M), x = H^-1 (z1 + L^T G^T W^1/2 z2) has covariance
//! H^-1 (I + L^T G^T W G L) H^-1 = H^-1; each draw is one conjugate-gradient solve.
//!
//! The draw's log density under the gaussian, -(x^T H x) / 2 + log det H / 2 (the 2 pi
//! constants dropped, as the prior's are in the whitened log posterior), needs log det H: the
//! caller passes the one its Laplace evidence used, so that the evidence and the draws' density
//! agree (what an importance-sampling check of that evidence requires).

use super::cg;
use super::hessian::MisfitHessian;
use super::{LaplaceError, LaplaceFit};
use crate::model::target::Target;

/// The relative residual each draw's solve reaches: the draw is exact to about this.
pub(crate) const SOLVE_TOLERANCE: f64 = 1e-10;

/// One draw and its log density under the Laplace gaussian.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LaplaceDraw {
    /// The whitened coordinates xi^ + x.
    pub(crate) xi: Vec<f64>,
    /// -(x^T H x) / 2 + log det H / 2, the 2 pi constants dropped.
    pub(crate) log_density: f64,
}

/// Draws from one fit's Laplace gaussian.
pub(crate) struct LaplaceDraws<'t, 'a> {
    target: &'t Target<'a>,
    hessian: MisfitHessian<'t, 'a>,
    mode: Vec<f64>,
    log_det: f64,
    scattered: Vec<f64>,
    scratch: Vec<f64>,
}

impl<'t, 'a> LaplaceDraws<'t, 'a> {
    /// The gaussian of `fit` at `target`, log det H = `log_det`.
    pub(crate) fn new(fit: &LaplaceFit, target: &'t Target<'a>, log_det: f64) -> Self {
        Self {
            target,
            hessian: fit.misfit_hessian(target),
            mode: fit.mode.clone(),
            log_det,
            scattered: vec![0.0; target.cells()],
            scratch: vec![0.0; target.prior.scratch_len()],
        }
    }

    /// The dimension of the field's normals z1 (the whitened coordinates').
    pub(crate) fn field_normals(&self) -> usize {
        self.target.dim()
    }

    /// The dimension of the observations' normals z2.
    pub(crate) fn observation_normals(&self) -> usize {
        self.target.observations()
    }

    /// The draw made from the standard normals `z1` ([`Self::field_normals`] of them) and `z2`
    /// ([`Self::observation_normals`]).
    pub(crate) fn draw(&mut self, z1: &[f64], z2: &[f64]) -> Result<LaplaceDraw, LaplaceError> {
        let spread: Vec<f64> = self
            .hessian
            .weights()
            .iter()
            .zip(z2)
            .map(|(&w, &z)| w.sqrt() * z)
            .collect();
        self.target.observed.scatter(&spread, &mut self.scattered);
        let mut rhs = vec![0.0; z1.len()];
        self.target
            .prior
            .apply_sqrt_transpose(&self.scattered, &mut rhs, &mut self.scratch);
        for (r, &z) in rhs.iter_mut().zip(z1) {
            *r += z;
        }
        let mut x = vec![0.0; rhs.len()];
        let tolerance = SOLVE_TOLERANCE * cg::dot(&rhs, &rhs).sqrt().max(1.0);
        let hessian = &mut self.hessian;
        let outcome = cg::solve(
            |v, out| hessian.apply(v, out),
            &rhs,
            &mut x,
            tolerance,
            4 * rhs.len().max(50),
        );
        if !outcome.converged {
            return Err(LaplaceError::DrawNotSolved {
                iterations: outcome.iterations,
                residual: outcome.residual_norm,
            });
        }
        let mut hx = vec![0.0; x.len()];
        self.hessian.apply(&x, &mut hx);
        let log_density = -0.5 * cg::dot(&x, &hx) + 0.5 * self.log_det;
        let xi = x.iter().zip(&self.mode).map(|(x, m)| x + m).collect();
        Ok(LaplaceDraw { xi, log_density })
    }
}
