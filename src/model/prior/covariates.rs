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
        let s = self.covariates.prior_sd;
        for (o, column) in z.iter_mut().zip(&self.covariates.columns) {
            *o = s * column.iter().zip(v).map(|(x, v)| x * v).sum::<f64>();
        }
    }
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]) {
        self.field.apply_covariance(x, out);
        let s2 = self.covariates.prior_sd * self.covariates.prior_sd;
        let projections: Vec<f64> = self
            .covariates
            .columns
            .iter()
            .map(|column| s2 * column.iter().zip(x).map(|(c, x)| c * x).sum::<f64>())
            .collect();
        self.covariates.add_fixed_effect(&projections, out);
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
        let s = self.covariates.prior_sd;
        for (o, column) in z.iter_mut().zip(&self.covariates.columns) {
            *o = s * column.iter().zip(v).map(|(x, v)| x * v).sum::<f64>();
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::prior::KroneckerPrior;
    use crate::model::spec::KernelSpec;
    use std::path::PathBuf;

    fn prior() -> WithCovariates {
        let grid = Grid::new(5);
        let field = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.4, 1.3)).unwrap();
        let raw = vec![
            ("a".to_string(), (0..25).map(|c| (c % 5) as f64).collect()),
            (
                "b".to_string(),
                (0..25).map(|c| ((c * 7) % 11) as f64).collect(),
            ),
        ];
        let covariates = Covariates::new(raw, 25, true, 0.7, PathBuf::from("-")).unwrap();
        WithCovariates::new(Box::new(field), Arc::new(covariates))
    }

    fn vector(n: usize, seed: usize) -> Vec<f64> {
        (0..n)
            .map(|k| (((k + seed) * 7919 % 23) as f64 - 11.0) / 7.0)
            .collect()
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// <L x, v> = <x, L^T v>, and C = L L^T entry by entry and as a product.
    #[test]
    fn the_square_root_its_transpose_and_the_covariance_agree() {
        let prior = prior();
        assert_eq!(prior.latent_dim(), 27);
        let mut scratch = vec![0.0; prior.scratch_len()];
        let (x, v) = (vector(27, 1), vector(25, 2));
        let mut lx = vec![0.0; 25];
        prior.apply_sqrt(&x, &mut lx, &mut scratch);
        let mut ltv = vec![0.0; 27];
        prior.apply_sqrt_transpose(&v, &mut ltv, &mut scratch);
        assert!((dot(&lx, &v) - dot(&x, &ltv)).abs() < 1e-10);
        let mut cv = vec![0.0; 25];
        prior.apply_covariance(&v, &mut cv);
        let mut llt_v = vec![0.0; 25];
        prior.apply_sqrt(&ltv, &mut llt_v, &mut scratch);
        for c in 0..25 {
            assert!((cv[c] - llt_v[c]).abs() < 1e-10, "cell {c}");
            let row: f64 = (0..25).map(|b| prior.covariance(c, b) * v[b]).sum();
            assert!((row - cv[c]).abs() < 1e-10, "cell {c}");
        }
    }

    /// B B^T = C + s^2 X X^T, and B = L P with P = to_whitened.
    #[test]
    fn the_spectral_root_is_a_square_root_of_the_same_covariance() {
        let prior = prior();
        let root = prior
            .spectral_root()
            .expect("a square Kronecker prior has one");
        assert_eq!(root.eigenvalues().len(), 27);
        let mut scratch = vec![0.0; prior.scratch_len().max(root.scratch_len())];
        let v = vector(25, 3);
        let mut btv = vec![0.0; 27];
        root.apply_transpose(&v, &mut btv, &mut scratch);
        let mut cv = vec![0.0; 25];
        prior.apply_covariance(&v, &mut cv);
        assert!((dot(&btv, &btv) - dot(&v, &cv)).abs() < 1e-9);
        let eta = vector(27, 4);
        let mut b_eta = vec![0.0; 25];
        root.apply(&eta, &mut b_eta, &mut scratch);
        let mut xi = vec![0.0; 27];
        root.to_whitened(&eta, &mut xi, &mut scratch);
        let mut l_xi = vec![0.0; 25];
        prior.apply_sqrt(&xi, &mut l_xi, &mut scratch);
        for c in 0..25 {
            assert!((b_eta[c] - l_xi[c]).abs() < 1e-10);
        }
        let mut back = vec![0.0; 27];
        root.to_spectral(&xi, &mut back, &mut scratch);
        for k in 0..27 {
            assert!((back[k] - eta[k]).abs() < 1e-10);
        }
    }

    /// The whitened gradient of the log-likelihood through the covariates' coordinates, against
    /// central differences, for every likelihood.
    #[test]
    fn the_gradient_through_the_coefficients_matches_finite_differences() {
        use crate::model::Target;
        let prior = prior();
        let cells = [0, 3, 7, 12, 18, 24];
        for likelihood in &crate::model::likelihood::one_of_each(cells.len()) {
            let target = Target {
                prior: &prior,
                likelihood,
                observed_cells: &cells,
                mean: 0.2,
            };
            let mut work = target.workspace();
            let xi: Vec<f64> = vector(27, 5).iter().map(|v| v / 3.0).collect();
            let mut field = vec![0.0; 25];
            target.field(&xi, &mut field, &mut work);
            let mut gradient = vec![0.0; 27];
            target.log_likelihood_and_gradient(&field, &mut gradient, &mut work);
            for k in [0, 13, 25, 26] {
                let at = |delta: f64, work: &mut crate::model::Workspace| {
                    let mut moved = xi.clone();
                    moved[k] += delta;
                    let mut f = vec![0.0; 25];
                    target.field(&moved, &mut f, work);
                    target.log_likelihood(&f, work)
                };
                let h = 1e-6;
                let numeric = (at(h, &mut work) - at(-h, &mut work)) / (2.0 * h);
                assert!(
                    (numeric - gradient[k]).abs() < 1e-6 * gradient[k].abs().max(1.0),
                    "{:?} coordinate {k}: {} vs {numeric}",
                    likelihood.kind(),
                    gradient[k]
                );
            }
        }
    }
}
