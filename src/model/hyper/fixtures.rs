//! Models and checks the joint densities' tests share ([`super::joint`],
//! [`super::spectral_joint`]).

use std::sync::Arc;

use super::{HyperName, HyperPrior, HyperPriors, Hyperparameters};
use crate::model::covariates::Covariates;
use crate::model::grid::Grid;
use crate::model::sites::{SiteOperator, scattered};
use crate::model::spec::{KernelSpec, LikelihoodKind, MeanSpec, ModelSpec};

/// A poisson model on `grid` with `kernel` and the hyperparameters `priors` names inferred.
pub(crate) fn model(grid: Grid, kernel: KernelSpec, priors: &[(HyperName, &str)]) -> ModelSpec {
    ModelSpec {
        grid,
        kernel,
        likelihood: LikelihoodKind::Poisson,
        noise_sd: 0.5,
        offset: 0.0,
        evidence_draws: 0,
        mean: MeanSpec::Value(0.2),
        hyper: HyperPriors::new(
            priors
                .iter()
                .map(|(name, text)| (*name, HyperPrior::parse(text).unwrap()))
                .collect(),
        ),
        covariates: None,
    }
}

/// [`model`] with the squared-exponential kernel at [`base`]'s values, and its Kronecker prior
/// there: the field a hyperparameter chain's tests start from.
pub(crate) fn base_model(
    grid: Grid,
    priors: &[(HyperName, &str)],
) -> (ModelSpec, crate::model::prior::KroneckerPrior) {
    let spec = model(grid, KernelSpec::squared_exponential(0.4, 1.3), priors);
    let prior = crate::model::prior::KroneckerPrior::new(grid, spec.kernel.at(&base(None)))
        .expect("a squared-exponential prior on a small grid");
    (spec, prior)
}

/// `count` scattered sites over `grid`'s window, as the data's observation operator.
pub(crate) fn sites(grid: Grid, count: usize) -> SiteOperator {
    SiteOperator::bilinear(&grid, &scattered(count, &grid.window(), 2)).unwrap()
}

/// The values of the hyperparameters not inferred (length scale along y `ly`).
pub(crate) fn base(ly: Option<f64>) -> Hyperparameters {
    Hyperparameters {
        length_scale: 0.4,
        length_scale_y: ly,
        variance: 1.3,
        mean: 0.2,
        noise_sd: 0.5,
    }
}

/// The gradient checks' two models: a square grid with the length scale, the variance, the
/// mean and (for the gaussian likelihood) the noise sd inferred, and a rectangle with a length scale per axis, the variance and a covariate.
pub(crate) fn gradient_models() -> [ModelSpec; 2] {
    let square = model(
        Grid::new(4),
        KernelSpec::squared_exponential(0.4, 1.3),
        &[
            (HyperName::LengthScale, "log-normal(-1, 0.8)"),
            (HyperName::Variance, "gamma(2, 2)"),
            (HyperName::Mean, "normal(0, 2)"),
            (HyperName::NoiseSd, "log-normal(-0.5, 0.5)"),
        ],
    );
    let mut anisotropic = model(
        Grid::rectangular(5, 3),
        KernelSpec {
            length_scale_y: Some(0.3),
            ..KernelSpec::squared_exponential(0.4, 1.3)
        },
        &[
            (HyperName::LengthScale, "log-normal(-1, 0.8)"),
            (HyperName::LengthScaleY, "uniform(0.05, 2)"),
            (HyperName::Variance, "inverse-gamma(3, 2)"),
        ],
    );
    let cells = anisotropic.grid.cells();
    anisotropic.covariates = Some(Arc::new(
        Covariates::new(
            vec![(
                "x".into(),
                (0..cells).map(|c| (c as f64 * 0.7).sin()).collect(),
            )],
            cells,
            true,
            1.5,
            "test".into(),
        )
        .unwrap(),
    ));
    [square, anisotropic]
}

/// `density`'s gradient at a fixed point of dimension `dim` against central differences of its
/// value along every coordinate (relative tolerance 1e-5); `what` names the case.
pub(crate) fn check_gradient(
    dim: usize,
    mut density: impl FnMut(&[f64], &mut [f64]) -> f64,
    what: &str,
) -> Vec<f64> {
    let q: Vec<f64> = (0..dim).map(|k| ((k * 7 % 5) as f64 - 2.0) / 4.0).collect();
    let mut gradient = vec![0.0; dim];
    assert!(density(&q, &mut gradient).is_finite(), "{what}");
    let mut scratch = vec![0.0; dim];
    let h = 1e-6;
    for k in 0..dim {
        let mut moved = q.clone();
        moved[k] += h;
        let up = density(&moved, &mut scratch);
        moved[k] -= 2.0 * h;
        let down = density(&moved, &mut scratch);
        let numeric = (up - down) / (2.0 * h);
        assert!(
            (numeric - gradient[k]).abs() < 1e-5 * numeric.abs().max(1.0),
            "{what}: coordinate {k} of {dim}: {} vs {numeric}",
            gradient[k]
        );
    }
    q
}
