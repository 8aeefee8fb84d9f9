//! The posterior a sampler targets, in whitened coordinates.
//!
//! The field is u = mean + L xi with xi ~ N(0, I) a priori (L the prior's square root, `mean`
//! the constant intercept), and the data enter through G u only, one value per observation
//! ([`Observed`]: G selects observed cells, or interpolates the field at scattered sites, never
//! formed as a matrix). The log posterior density of xi is, up to a constant,
//! `log_likelihood(G u) - |xi|^2 / 2`. [`Target`] hides the prior's structure behind
//! [`Prior`]: a sampler asks for the field of a position, the log-likelihood of a field, or the
//! gradient of the log-likelihood with respect to xi (L^T G^T d loglik / d(G u)).

use super::likelihood::Likelihood;
use super::prior::Prior;
use super::sites::SiteOperator;

/// Where the data see the field: G u, one value per observation.
#[derive(Debug, Clone, Copy)]
pub enum Observed<'a> {
    /// G selects these cells (distinct), in the likelihood's order.
    Cells(&'a [usize]),
    /// G = H, the sites' interpolation weights ([`SiteOperator`]), in the likelihood's order.
    Sites(&'a SiteOperator),
}

impl<'a> Observed<'a> {
    /// M: the number of observations.
    pub fn len(&self) -> usize {
        match self {
            Observed::Cells(cells) => cells.len(),
            Observed::Sites(sites) => sites.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// G u: the field (N values) at each observation, into `out` (M values).
    pub fn gather(&self, field: &[f64], out: &mut [f64]) {
        match self {
            Observed::Cells(cells) => {
                for (o, &c) in out.iter_mut().zip(*cells) {
                    *o = field[c];
                }
            }
            Observed::Sites(sites) => sites.gather(field, out),
        }
    }

    /// G u for a field given cell by cell (`value(cell)`), into `out`.
    pub(crate) fn gather_by(&self, value: impl Fn(usize) -> f64, out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate().take(self.len()) {
            *o = self.one_by(i, &value);
        }
    }

    /// (G u)_i alone, for a field given cell by cell: observation `i`'s cell's value, or its
    /// site's four cells' values weighted.
    pub(crate) fn one_by(&self, i: usize, value: impl Fn(usize) -> f64) -> f64 {
        match self {
            Observed::Cells(cells) => value(cells[i]),
            Observed::Sites(sites) => sites.rows()[i].iter().map(|&(c, w)| w * value(c)).sum(),
        }
    }

    /// field = G^T values: zero, then each observation's value spread onto its cells (the one
    /// cell it selects, or a site's four weighted).
    pub(crate) fn scatter(&self, values: &[f64], field: &mut [f64]) {
        field.fill(0.0);
        match self {
            // The cells are distinct, so setting is adding to zero.
            Observed::Cells(cells) => {
                for (&v, &c) in values.iter().zip(*cells) {
                    field[c] = v;
                }
            }
            Observed::Sites(sites) => sites.scatter_add(values, field),
        }
    }

    /// (G C G^T)_ab: the prior covariance of observations `a` and `b`.
    pub(crate) fn covariance(&self, prior: &dyn Prior, a: usize, b: usize) -> f64 {
        match self {
            Observed::Cells(cells) => prior.covariance(cells[a], cells[b]),
            Observed::Sites(sites) => sites.covariance(prior, a, b),
        }
    }

    /// The lower triangle (diagonal included) of G C G^T, written into `out` (M x M).
    pub(crate) fn covariance_lower(&self, prior: &dyn Prior, mut out: faer::MatMut<'_, f64>) {
        match self {
            Observed::Cells(cells) => prior.covariance_lower(cells, out),
            Observed::Sites(sites) => {
                for b in 0..sites.len() {
                    for a in b..sites.len() {
                        out[(a, b)] = sites.covariance(prior, a, b);
                    }
                }
            }
        }
    }

    /// (G C)_a,cell: the prior covariance of observation `a` and cell `cell`.
    pub(crate) fn cross_covariance(&self, prior: &dyn Prior, a: usize, cell: usize) -> f64 {
        match self {
            Observed::Cells(cells) => prior.covariance(cells[a], cell),
            Observed::Sites(sites) => sites.rows()[a]
                .iter()
                .map(|&(c, w)| w * prior.covariance(c, cell))
                .sum(),
        }
    }
}

/// What a sampler needs of the model: the prior's structured square root, the likelihood bound
/// to its data, where the data see the field and the intercept.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub prior: &'a dyn Prior,
    pub likelihood: &'a Likelihood,
    /// G: where the data see the field, in the likelihood's order.
    pub observed: Observed<'a>,
    /// The constant mean of the field: u = mean + L xi.
    pub mean: f64,
}

/// Buffers a target's computations reuse: one set per chain.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The prior products' scratch.
    pub(crate) scratch: Vec<f64>,
    /// G u: the field at each observation.
    pub(crate) observed: Vec<f64>,
    /// d loglik / d(G u).
    pub(crate) observed_gradient: Vec<f64>,
    /// G^T d loglik / d(G u): the same, spread onto every cell.
    pub(crate) field_gradient: Vec<f64>,
}

impl<'a> Target<'a> {
    /// N: cells of the field.
    pub(crate) fn cells(&self) -> usize {
        self.prior.cells()
    }

    /// The dimension of the whitened coordinates xi.
    pub(crate) fn dim(&self) -> usize {
        self.prior.latent_dim()
    }

    /// M: observations.
    pub fn observations(&self) -> usize {
        self.observed.len()
    }

    /// Buffers for this target's computations.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            scratch: vec![0.0; self.prior.scratch_len()],
            observed: vec![0.0; self.observations()],
            observed_gradient: vec![0.0; self.observations()],
            field_gradient: vec![0.0; self.cells()],
        }
    }

    /// u = mean + L xi into `field`.
    pub(crate) fn field(&self, xi: &[f64], field: &mut [f64], work: &mut Workspace) {
        self.prior.apply_sqrt(xi, field, &mut work.scratch);
        if self.mean != 0.0 {
            for u in field.iter_mut() {
                *u += self.mean;
            }
        }
    }

    /// G u: the field at each observation, into `out`.
    pub(crate) fn gather(&self, field: &[f64], out: &mut [f64]) {
        self.observed.gather(field, out);
    }

    /// The log-likelihood of a field (all N cells given).
    pub fn log_likelihood(&self, field: &[f64], work: &mut Workspace) -> f64 {
        self.gather(field, &mut work.observed);
        self.likelihood.log_likelihood(&work.observed)
    }

    /// The log-likelihood of a field and its gradient with respect to xi, written into
    /// `gradient` (dimension [`Target::dim`]): L^T G^T d loglik / d(G u).
    pub(crate) fn log_likelihood_and_gradient(
        &self,
        field: &[f64],
        gradient: &mut [f64],
        work: &mut Workspace,
    ) -> f64 {
        self.gather(field, &mut work.observed);
        let value = self
            .likelihood
            .log_likelihood_and_gradient(&work.observed, &mut work.observed_gradient);
        self.observed
            .scatter(&work.observed_gradient, &mut work.field_gradient);
        self.prior
            .apply_sqrt_transpose(&work.field_gradient, gradient, &mut work.scratch);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::prior::KroneckerPrior;
    use crate::model::sites::scattered;
    use crate::model::spec::KernelSpec;

    /// The whitened gradient of `observed`'s log-likelihood against central differences along
    /// each coordinate, for every likelihood, with an intercept, on a 4 x 4 grid.
    fn assert_whitened_gradient_matches_finite_differences(observed: Observed) {
        let grid = Grid::new(4);
        let kernel = KernelSpec::squared_exponential(0.4, 1.5);
        let prior = KroneckerPrior::new(grid, kernel).unwrap();
        let likelihoods = crate::model::likelihood::one_of_each(observed.len());
        for likelihood in &likelihoods {
            let target = Target {
                prior: &prior,
                likelihood,
                observed,
                mean: 0.4,
            };
            let mut work = target.workspace();
            let xi: Vec<f64> = (0..16).map(|k| ((k * 7 % 5) as f64 - 2.0) / 3.0).collect();
            let mut field = vec![0.0; 16];
            target.field(&xi, &mut field, &mut work);
            let mut gradient = vec![0.0; 16];
            let value = target.log_likelihood_and_gradient(&field, &mut gradient, &mut work);
            assert_eq!(value, target.log_likelihood(&field, &mut work));
            let mut at = |k: usize, delta: f64| {
                let mut moved = xi.clone();
                moved[k] += delta;
                let mut f = vec![0.0; 16];
                target.field(&moved, &mut f, &mut work);
                target.log_likelihood(&f, &mut work)
            };
            let h = 1e-6;
            for (k, g) in gradient.iter().enumerate() {
                let numeric = (at(k, h) - at(k, -h)) / (2.0 * h);
                assert!(
                    (numeric - g).abs() < 1e-6 * g.abs().max(1.0),
                    "{:?} coordinate {k}: {g} vs {numeric}",
                    likelihood.kind()
                );
            }
        }
    }

    #[test]
    fn whitened_gradient_matches_finite_differences() {
        assert_whitened_gradient_matches_finite_differences(Observed::Cells(&[1, 4, 6, 11, 15]));
    }

    /// The same through scattered sites (each seeing four cells, some over the border
    /// half-cells, two sharing cells): the gradient is L^T H^T d loglik / d(H u).
    #[test]
    fn whitened_gradient_through_sites_matches_finite_differences() {
        let grid = Grid::new(4);
        let sites = SiteOperator::bilinear(&grid, &scattered(7, &grid.window(), 3)).unwrap();
        assert_whitened_gradient_matches_finite_differences(Observed::Sites(&sites));
    }

    /// Scatter is the transpose of gather: <G u, v> = <u, G^T v>, for cells and sites; scatter
    /// overwrites what the field held.
    #[test]
    fn scatter_is_the_transpose_of_gather() {
        let grid = Grid::new(4);
        let sites = SiteOperator::bilinear(&grid, &scattered(6, &grid.window(), 0)).unwrap();
        let cells = [2, 5, 9, 14, 0, 7];
        let u: Vec<f64> = (0..16).map(|k| (k as f64 * 0.37).cos()).collect();
        let v: Vec<f64> = (0..6).map(|a| 0.5 - a as f64 * 0.3).collect();
        for observed in [Observed::Cells(&cells), Observed::Sites(&sites)] {
            let mut gu = vec![0.0; 6];
            observed.gather(&u, &mut gu);
            let mut gtv = vec![9.0; 16];
            observed.scatter(&v, &mut gtv);
            let left: f64 = gu.iter().zip(&v).map(|(a, b)| a * b).sum();
            let right: f64 = u.iter().zip(&gtv).map(|(a, b)| a * b).sum();
            assert!(
                (left - right).abs() < 1e-14,
                "{observed:?}: {left} vs {right}"
            );
            let mut by = vec![0.0; 6];
            observed.gather_by(|c| u[c], &mut by);
            assert_eq!(by, gu);
        }
    }

    /// The observations' covariances against the prior covariance of the gathered field,
    /// G C G^T and G C, formed column by column from C.
    #[test]
    fn observation_covariances_are_g_c_g_transpose() {
        let grid = Grid::new(4);
        let prior = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.4, 1.5)).unwrap();
        let sites = SiteOperator::bilinear(&grid, &scattered(5, &grid.window(), 1)).unwrap();
        let cells = [3, 8, 12, 1, 10];
        for observed in [Observed::Cells(&cells), Observed::Sites(&sites)] {
            // (C G^T)[:, b] = C (G^T e_b); then G of it.
            for b in 0..5 {
                let mut unit = vec![0.0; 5];
                unit[b] = 1.0;
                let mut spread = vec![0.0; 16];
                observed.scatter(&unit, &mut spread);
                let mut column = vec![0.0; 16];
                prior.apply_covariance(&spread, &mut column);
                let mut gathered = vec![0.0; 5];
                observed.gather(&column, &mut gathered);
                for (a, &want) in gathered.iter().enumerate() {
                    let got = observed.covariance(&prior, a, b);
                    assert!((want - got).abs() < 1e-12, "{observed:?} ({a}, {b})");
                }
                for (cell, &want) in column.iter().enumerate() {
                    let got = observed.cross_covariance(&prior, b, cell);
                    assert!(
                        (want - got).abs() < 1e-12,
                        "{observed:?} ({b}, cell {cell})"
                    );
                }
            }
        }
    }
}
