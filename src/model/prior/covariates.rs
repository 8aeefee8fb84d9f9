//! A prior with fixed effects: u = L xi + X (s z), the field's whitened coordinates xi followed
//! by the coefficients' z ~ N(0, I_p) (beta = s z, see [`crate::model::covariates`]).
//!
//! The pair is a zero-mean Gaussian on the cells with covariance C + s^2 X X^T and square root
//! [L, s X]: every product the samplers, the Laplace approximation and the exact posterior ask of
//! a prior is the field prior's plus a rank-p term, O(N p), and no N x N matrix is formed.

use std::sync::Arc;

use super::spectral::SpectralRoot;
use super::{Embedding, Prior};
use crate::model::covariates::Covariates;
use crate::model::grid::Grid;

/// The field's prior with the coefficients' whitened coordinates appended.
#[derive(Debug)]
pub struct WithCovariates {
    field: Box<dyn Prior>,
    covariates: Arc<Covariates>,
}

impl WithCovariates {
    pub fn new(field: Box<dyn Prior>, covariates: Arc<Covariates>) -> Self {
        Self { field, covariates }
    }

    /// The field's own whitened dimension (the coefficients' coordinates come after it).
    fn field_dim(&self) -> usize {
        self.field.latent_dim()
    }
}

impl Prior for WithCovariates {
    fn grid(&self) -> Grid {
        self.field.grid()
    }
    fn latent_dim(&self) -> usize {
        self.field_dim() + self.covariates.count()
    }
    fn scratch_len(&self) -> usize {
        self.field.scratch_len()
    }
    fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let (field, z) = xi.split_at(self.field_dim());
        self.field.apply_sqrt(field, out, scratch);
        self.covariates.add_whitened_effect(z, out);
    }
    fn apply_sqrt_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let (field, z) = out.split_at_mut(self.field_dim());
        self.field.apply_sqrt_transpose(v, field, scratch);
        self.covariates.whitened_gradient(v, z);
    }
    /// C x + (s X)(s X)^T x.
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]) {
        self.field.apply_covariance(x, out);
        let mut z = vec![0.0; self.covariates.count()];
        self.covariates.whitened_gradient(x, &mut z);
        self.covariates.add_whitened_effect(&z, out);
    }
    fn covariance(&self, a: usize, b: usize) -> f64 {
        let s2 = self.covariates.prior_sd * self.covariates.prior_sd;
        let fixed: f64 = self
            .covariates
            .columns
            .iter()
            .map(|column| column[a] * column[b])
            .sum();
        self.field.covariance(a, b) + s2 * fixed
    }
    fn jitter(&self) -> f64 {
        self.field.jitter()
    }
    fn embedding(&self) -> Option<Embedding> {
        self.field.embedding()
    }
    fn covariates(&self) -> Option<&Covariates> {
        Some(&self.covariates)
    }
    fn spatial(&self) -> Option<&dyn Prior> {
        Some(self.field.as_ref())
    }
    /// The field's spectral root with the coefficients' columns s x_k appended: B = [B_f, s X]
    /// = [L, s X] diag(P_f, I), so B B^T = C + s^2 X X^T. Each coefficient's "eigenvalue" is
    /// the squared norm of its column, s^2 |x_k|^2 (its Rayleigh quotient: the prior variance it
    /// adds to the field, summed over cells).
    fn spectral_root(&self) -> Option<Arc<dyn SpectralRoot>> {
        let field = self.field.spectral_root()?;
        Some(Arc::new(CovariateSpectral::new(
            field,
            self.covariates.clone(),
        )))
    }
}

/// [`WithCovariates::spectral_root`].
#[derive(Debug)]
struct CovariateSpectral {
    field: Arc<dyn SpectralRoot>,
    covariates: Arc<Covariates>,
    eigenvalues: Vec<f64>,
}

impl CovariateSpectral {
    fn new(field: Arc<dyn SpectralRoot>, covariates: Arc<Covariates>) -> Self {
        let s2 = covariates.prior_sd * covariates.prior_sd;
        let mut eigenvalues = field.eigenvalues().to_vec();
        eigenvalues.extend(
            covariates
                .columns
                .iter()
                .map(|c| s2 * c.iter().map(|x| x * x).sum::<f64>()),
        );
        Self {
            field,
            covariates,
            eigenvalues,
        }
    }

    fn field_dim(&self) -> usize {
        self.eigenvalues.len() - self.covariates.count()
    }
}

impl SpectralRoot for CovariateSpectral {
    fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }
    fn scratch_len(&self) -> usize {
        self.field.scratch_len()
    }
    fn apply(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let (field, z) = eta.split_at(self.field_dim());
        self.field.apply(field, out, scratch);
        self.covariates.add_whitened_effect(z, out);
    }
    fn apply_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let k = self.field_dim();
        let (field, z) = out.split_at_mut(k);
        self.field.apply_transpose(v, field, scratch);
        self.covariates.whitened_gradient(v, z);
    }
    fn to_whitened(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let k = self.field_dim();
        self.field.to_whitened(&eta[..k], &mut out[..k], scratch);
        out[k..].copy_from_slice(&eta[k..]);
    }
    fn to_spectral(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let k = self.field_dim();
        self.field.to_spectral(&xi[..k], &mut out[..k], scratch);
        out[k..].copy_from_slice(&xi[k..]);
    }
    fn weighted_column_norms(&self, weights: &[f64]) -> Vec<f64> {
        let mut norms = self.field.weighted_column_norms(weights);
        let s2 = self.covariates.prior_sd * self.covariates.prior_sd;
        norms.extend(self.covariates.columns.iter().map(|column| {
            s2 * column
                .iter()
                .zip(weights)
                .map(|(x, w)| w * x * x)
                .sum::<f64>()
        }));
        norms
    }
    fn column(&self, k: usize, out: &mut [f64], scratch: &mut [f64]) {
        let field = self.field_dim();
        if k < field {
            return self.field.column(k, out, scratch);
        }
        let mut unit = vec![0.0; self.covariates.count()];
        unit[k - field] = 1.0;
        out.fill(0.0);
        self.covariates.add_whitened_effect(&unit, out);
    }
}
