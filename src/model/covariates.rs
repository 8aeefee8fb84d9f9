//! Fixed effects: covariates with inferred coefficients, u = mean + X beta + f.
//!
//! This module owns the design X (one column per covariate, one value per grid cell, standardised
//! by default), the coefficients' prior beta_k ~ N(0, s^2) and the maps between a chain's
//! whitened coordinates and the coefficients. The coefficients are whitened like the field:
//! beta = s z with z ~ N(0, I), and z is appended to the field's whitened coordinates by
//! [`super::prior::WithCovariates`], so every kind that moves whitened coordinates (and the
//! Laplace approximation, which treats them as part of its Gaussian latent vector, as INLA treats
//! fixed effects) infers the coefficients jointly with the field, with no code of its own.
//!
//! Standardising (the default) subtracts each column's mean over every cell and divides by its
//! population sd (ddof 0, as `../shared/peers/lgcp_joint_peer.py` does): a coefficient is then the
//! change of the log rate per sd of its covariate, and a raw-scale slope is beta_k / sd_k.

use std::path::PathBuf;

/// Why a design cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CovariateError {
    #[error(
        "covariate `{name}` takes the single value {value} on every cell: it cannot be \
         standardised and is confounded with the mean"
    )]
    Constant { name: String, value: f64 },
    #[error("covariate `{name}` has {found} values for a grid of {cells} cells")]
    WrongLength {
        name: String,
        found: usize,
        cells: usize,
    },
    #[error("covariate `{name}` is not a finite number at cell {cell}")]
    NonFinite { name: String, cell: usize },
    #[error("covariate `{name}` is listed twice")]
    Duplicate { name: String },
}

/// The covariates of a model: the design and the coefficients' prior.
#[derive(Debug, Clone, PartialEq)]
pub struct Covariates {
    /// The covariates' names, in the order of their coefficients.
    pub names: Vec<String>,
    /// `columns[k][cell]`: covariate k at the cell (standardised when [`Covariates::centres`]
    /// and [`Covariates::scales`] say so).
    pub columns: Vec<Vec<f64>>,
    /// What standardising subtracted from each column (0 when not standardised).
    pub(crate) centres: Vec<f64>,
    /// What standardising divided each column by (1 when not standardised).
    pub(crate) scales: Vec<f64>,
    /// s: beta_k ~ N(0, s^2) a priori.
    pub(crate) prior_sd: f64,
    /// The file the values were read from (its content is part of the job's data hash).
    pub(crate) path: PathBuf,
}

impl Covariates {
    /// The design of `raw` columns (name, value per cell) over `cells` cells, standardised when
    /// `standardize`, with coefficients ~ N(0, `prior_sd`^2).
    pub fn new(
        raw: Vec<(String, Vec<f64>)>,
        cells: usize,
        standardize: bool,
        prior_sd: f64,
        path: PathBuf,
    ) -> Result<Self, CovariateError> {
        let mut design = Self {
            names: Vec::new(),
            columns: Vec::new(),
            centres: Vec::new(),
            scales: Vec::new(),
            prior_sd,
            path,
        };
        for (name, values) in raw {
            if design.names.contains(&name) {
                return Err(CovariateError::Duplicate { name });
            }
            if values.len() != cells {
                return Err(CovariateError::WrongLength {
                    name,
                    found: values.len(),
                    cells,
                });
            }
            if let Some(cell) = values.iter().position(|v| !v.is_finite()) {
                return Err(CovariateError::NonFinite { name, cell });
            }
            let (centre, scale) = population_moments(&values);
            if scale == 0.0 || values.iter().all(|&v| v == values[0]) {
                return Err(CovariateError::Constant {
                    name,
                    value: values[0],
                });
            }
            let (centre, scale) = if standardize {
                (centre, scale)
            } else {
                (0.0, 1.0)
            };
            design.names.push(name);
            design
                .columns
                .push(values.iter().map(|v| (v - centre) / scale).collect());
            design.centres.push(centre);
            design.scales.push(scale);
        }
        Ok(design)
    }

    /// p: the number of coefficients.
    pub fn count(&self) -> usize {
        self.names.len()
    }

    /// The coefficients of a position whose last [`Covariates::count`] whitened coordinates are
    /// the coefficients' (beta = s z), into `out`.
    pub(crate) fn coefficients_of(&self, xi: &[f64], out: &mut [f64]) {
        for (b, &z) in out.iter_mut().zip(self.whitened_coefficients(xi)) {
            *b = self.prior_sd * z;
        }
    }

    /// The coefficients of a position, as a new vector.
    pub(crate) fn coefficients(&self, xi: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.count()];
        self.coefficients_of(xi, &mut out);
        out
    }

    /// out += X beta.
    pub fn add_fixed_effect(&self, beta: &[f64], out: &mut [f64]) {
        for (column, &b) in self.columns.iter().zip(beta) {
            if b == 0.0 {
                continue;
            }
            for (o, &x) in out.iter_mut().zip(column) {
                *o += b * x;
            }
        }
    }

    /// out += X (s z): the fixed effect of the coefficients' whitened coordinates `z`.
    pub(crate) fn add_whitened_effect(&self, z: &[f64], out: &mut [f64]) {
        self.add_scaled(z, self.prior_sd, out);
    }

    /// out -= X (s z): a field without the fixed effect of the position whose last
    /// [`Covariates::count`] whitened coordinates are `z` (no allocation: the driver calls it on
    /// every move).
    pub(crate) fn remove_whitened_effect(&self, z: &[f64], out: &mut [f64]) {
        self.add_scaled(z, -self.prior_sd, out);
    }

    /// out += X (scale z).
    fn add_scaled(&self, z: &[f64], scale: f64, out: &mut [f64]) {
        for (column, &z) in self.columns.iter().zip(z) {
            let b = scale * z;
            for (o, &x) in out.iter_mut().zip(column) {
                *o += b * x;
            }
        }
    }

    /// The coefficients' whitened coordinates of a position: its last [`Covariates::count`].
    pub(crate) fn whitened_coefficients<'x>(&self, xi: &'x [f64]) -> &'x [f64] {
        &xi[xi.len() - self.count()..]
    }

    /// out = s X^T v: the gradient with respect to the coefficients' whitened coordinates of a
    /// function whose gradient with respect to the field is `v` (the transpose of
    /// [`Covariates::add_whitened_effect`]).
    pub(crate) fn whitened_gradient(&self, v: &[f64], out: &mut [f64]) {
        for (o, column) in out.iter_mut().zip(&self.columns) {
            *o = self.prior_sd * column.iter().zip(v).map(|(x, v)| x * v).sum::<f64>();
        }
    }

    /// beta_k . x_k(cell) summed: the fixed effect at one cell.
    pub fn fixed_effect_at(&self, beta: &[f64], cell: usize) -> f64 {
        self.columns
            .iter()
            .zip(beta)
            .map(|(column, b)| b * column[cell])
            .sum()
    }

    /// Coefficient `k` on the covariate's own scale: the change of the log rate per unit of the
    /// raw covariate, beta_k / sd_k.
    pub fn raw_slope(&self, k: usize, beta: f64) -> f64 {
        beta / self.scales[k]
    }
}

/// The mean and population sd (ddof 0) of `values`.
fn population_moments(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, variance.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(
        columns: Vec<(&str, Vec<f64>)>,
        standardize: bool,
    ) -> Result<Covariates, CovariateError> {
        let raw = columns
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        Covariates::new(raw, 4, standardize, 2.0, PathBuf::from("x.csv"))
    }

    #[test]
    fn standardised_columns_have_mean_zero_and_unit_population_sd() {
        let d = design(vec![("a", vec![1.0, 2.0, 3.0, 6.0])], true).unwrap();
        let column = &d.columns[0];
        let mean = column.iter().sum::<f64>() / 4.0;
        let var = column.iter().map(|x| x * x).sum::<f64>() / 4.0;
        assert!(mean.abs() < 1e-15);
        assert!((var - 1.0).abs() < 1e-14);
        assert_eq!(d.centres, vec![3.0]);
        // sd of (1, 2, 3, 6) about 3 with ddof 0: sqrt((4 + 1 + 0 + 9) / 4).
        assert!((d.scales[0] - 3.5f64.sqrt()).abs() < 1e-15);
        assert_eq!(d.raw_slope(0, 1.0), 1.0 / 3.5f64.sqrt());
        let raw = design(vec![("a", vec![1.0, 2.0, 3.0, 6.0])], false).unwrap();
        assert_eq!(raw.columns[0], vec![1.0, 2.0, 3.0, 6.0]);
    }

    #[test]
    fn coefficients_are_the_scaled_last_coordinates_and_enter_the_field_linearly() {
        let d = design(
            vec![
                ("a", vec![1.0, 0.0, 0.0, 0.0]),
                ("b", vec![0.0, 1.0, 0.0, 2.0]),
            ],
            false,
        )
        .unwrap();
        let xi = [9.0, 9.0, 9.0, 0.5, -1.0];
        assert_eq!(d.coefficients(&xi), vec![1.0, -2.0]);
        let mut field = vec![1.0; 4];
        d.add_fixed_effect(&[1.0, -2.0], &mut field);
        assert_eq!(field, vec![2.0, -1.0, 1.0, -3.0]);
        assert_eq!(d.fixed_effect_at(&[1.0, -2.0], 3), -4.0);
    }

    #[test]
    fn a_constant_a_non_finite_or_a_repeated_covariate_is_refused() {
        assert!(matches!(
            design(vec![("a", vec![2.0; 4])], true),
            Err(CovariateError::Constant { .. })
        ));
        assert!(matches!(
            design(vec![("a", vec![2.0; 4])], false),
            Err(CovariateError::Constant { .. })
        ));
        assert_eq!(
            design(vec![("a", vec![1.0, f64::NAN, 0.0, 0.0])], true),
            Err(CovariateError::NonFinite {
                name: "a".into(),
                cell: 1
            })
        );
        assert!(matches!(
            design(
                vec![
                    ("a", vec![1.0, 2.0, 0.0, 0.0]),
                    ("a", vec![1.0, 2.0, 0.0, 0.0])
                ],
                true
            ),
            Err(CovariateError::Duplicate { .. })
        ));
        assert!(matches!(
            design(vec![("a", vec![1.0, 2.0])], true),
            Err(CovariateError::WrongLength { .. })
        ));
    }
}
