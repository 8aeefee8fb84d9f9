//! The resolved description of one job's model and data: what the study schema produces after
//! defaults and sweeps are applied, and what the engine consumes. Plain data, already validated.

use std::path::PathBuf;

use super::grid::{Grid, Window};

crate::closed_names! {
    /// The likelihood family linking the latent field to the observations.
    pub enum LikelihoodKind {
        /// v = G u + e, e ~ N(0, s^2 I).
        Gaussian = "gaussian",
        /// t = sign(G u + e): log p(t | u) = sum log Phi(t_i [G u]_i / s).
        Probit = "probit",
        /// c_i ~ Poisson(exp([G u]_i + offset)).
        Poisson = "poisson",
        /// k_i ~ Binomial(n_i, logistic([G u]_i + offset)): k_i successes of n_i trials, the
        /// logit link.
        Binomial = "binomial",
    }
}

crate::closed_names! {
    /// The covariance function of the prior, as a study names it (`model.kernel`). With
    /// r = |x - x'| (Euclidean, in the window's units) and l the length scale, each is
    /// variance * rho(r / l):
    pub enum KernelKind {
        /// rho(s) = exp(-s^2 / 2). Separable on a grid: a Kronecker product of axis kernels.
        SquaredExponential = "squared-exponential",
        /// rho(s) = exp(-s): Matern with smoothness 1/2 (the kernel of Moller et al. 1998).
        Exponential = "exponential",
        /// The same kernel as `exponential`, under its Matern name.
        Matern12 = "matern12",
        /// rho(s) = (1 + sqrt(3) s) exp(-sqrt(3) s): Matern 3/2.
        Matern32 = "matern32",
        /// rho(s) = (1 + sqrt(5) s + 5 s^2 / 3) exp(-sqrt(5) s): Matern 5/2.
        Matern52 = "matern52",
    }
}

crate::closed_names! {
    /// Where a job's observations come from.
    pub enum DataSource {
        /// A truth drawn from a prior, observed through the likelihood.
        Simulated = "simulated",
        /// A real grid read from a CSV file.
        Csv = "csv",
        /// A real point pattern read from a CSV file of event coordinates, binned to the grid.
        Points = "points",
    }
}

/// The prior's covariance function: k(x, x') = variance * rho(|x - x'| / length_scale), with rho
/// the kind's correlation (see [`KernelKind`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpec {
    pub kind: KernelKind,
    /// The length scale (along x when `length_scale_y` is given).
    pub length_scale: f64,
    pub variance: f64,
    /// The length scale along y when it differs from x's: an anisotropic (ARD) kernel,
    /// variance * rho(sqrt(dx^2 / l^2 + dy^2 / l_y^2)). `None`: isotropic.
    pub length_scale_y: Option<f64>,
}

impl KernelSpec {
    /// This kernel with the length scales and variance of `values`.
    pub(crate) fn at(self, values: &super::hyper::values::Hyperparameters) -> KernelSpec {
        KernelSpec {
            length_scale: values.length_scale,
            length_scale_y: values.length_scale_y,
            variance: values.variance,
            ..self
        }
    }

    /// k(x, x') = variance * exp(-|x - x'|^2 / (2 length_scale^2)).
    pub fn squared_exponential(length_scale: f64, variance: f64) -> Self {
        Self {
            kind: KernelKind::SquaredExponential,
            length_scale,
            variance,
            length_scale_y: None,
        }
    }

    /// Whether the kernel has one length scale for both axes.
    pub(crate) fn is_isotropic(&self) -> bool {
        self.length_scale_y.is_none_or(|l| l == self.length_scale)
    }

    /// The kernel along the y axis: its length scale there, isotropic.
    pub(crate) fn along_y(self) -> Self {
        Self {
            length_scale: self.length_scale_y.unwrap_or(self.length_scale),
            length_scale_y: None,
            ..self
        }
    }

    /// This kernel with another length scale (a misspecified truth).
    pub(crate) fn with_length_scale(self, length_scale: f64) -> Self {
        Self {
            length_scale,
            ..self
        }
    }
}

/// The constant mean of the field (the intercept).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MeanSpec {
    /// Estimated from the observed data when the job runs (see [`auto_mean`]): poisson
    /// log(mean count) - offset - variance / 2 (the prior's mean rate equals the observed mean
    /// rate), binomial the logit of the pooled share - offset, gaussian the mean observation,
    /// probit 0.
    Auto,
    Value(f64),
}

/// What the sampler assumes: the prior on the grid and the likelihood. Built only by the
/// study's validation (outside the crate it cannot be constructed unchecked).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelSpec {
    /// The grid with its physical coordinates (the window, for csv data the data's own).
    pub grid: Grid,
    pub kernel: KernelSpec,
    pub(crate) likelihood: LikelihoodKind,
    /// Observation noise sd s (gaussian and probit; the data are simulated with the same s).
    pub(crate) noise_sd: f64,
    /// Poisson log-offset (log cell area or log base rate): rate = exp(u + offset); binomial
    /// logit offset: success probability logistic(u + offset); `log-area` is resolved to the
    /// number here.
    pub offset: f64,
    /// Prior draws for the Monte Carlo estimate of log p(data | model); 0 = not estimated.
    pub(crate) evidence_draws: usize,
    /// The field's constant mean.
    pub(crate) mean: MeanSpec,
    /// The priors of the hyperparameters the chains infer (none: every one fixed).
    pub(crate) hyper: super::hyper::priors::HyperPriors,
    /// Fixed effects with inferred coefficients: u = mean + X beta + f (none: u = mean + f).
    pub(crate) covariates: Option<std::sync::Arc<super::covariates::Covariates>>,
}

impl ModelSpec {
    /// The mean of the field for data whose observed values are `observed` (binomial: the
    /// successes, of `trials`).
    pub(crate) fn mean_value(&self, observed: &[f64], trials: &[f64]) -> f64 {
        match self.mean {
            MeanSpec::Value(mean) => mean,
            MeanSpec::Auto => {
                let variance = self.kernel.variance;
                auto_mean(self.likelihood, variance, self.offset, observed, trials)
            }
        }
    }
}

/// The intercept `mean = "auto"` gives for the observed values `observed` (binomial: the
/// successes, of `trials` trials; the other likelihoods ignore `trials`):
/// - poisson: log(mean observed count per cell) - offset - variance / 2, so the prior's mean
///   count per cell exp(mean + offset + variance / 2) equals the observed one (when every
///   observed count is 0, whose log is -inf, half a count is put in their total);
/// - binomial: logit(sum k / sum n) - offset, the logit of the pooled share of successes (no
///   variance term: the prior's median success probability logistic(mean + offset) is the
///   pooled share); a pooled share of 0 or 1, whose logit is infinite, is moved half a success
///   inside (sum k = 1/2, or sum n - 1/2), and 0 when no cell has a trial;
/// - gaussian: the mean observation;
/// - probit: 0 (the labels carry no level).
pub fn auto_mean(
    likelihood: LikelihoodKind,
    variance: f64,
    offset: f64,
    observed: &[f64],
    trials: &[f64],
) -> f64 {
    let cells = observed.len().max(1) as f64;
    let total = observed.iter().sum::<f64>();
    match likelihood {
        LikelihoodKind::Poisson => {
            let total = if total > 0.0 { total } else { 0.5 };
            (total / cells).ln() - offset - variance / 2.0
        }
        LikelihoodKind::Binomial => {
            let trials = trials.iter().sum::<f64>();
            if trials < 1.0 {
                return 0.0;
            }
            let successes = total.clamp(0.5, trials - 0.5);
            (successes / (trials - successes)).ln() - offset
        }
        LikelihoodKind::Probit => 0.0,
        LikelihoodKind::Gaussian => total / cells,
    }
}

impl ModelSpec {
    /// The same model with the kernel's length scale replaced (a misspecified truth).
    pub(crate) fn with_length_scale(&self, length_scale: f64) -> Self {
        Self {
            kernel: self.kernel.with_length_scale(length_scale),
            ..self.clone()
        }
    }
}

/// Where the observations come from.
#[derive(Debug, Clone, PartialEq)]
pub enum DataSpec {
    /// A truth drawn from the prior with its own length scale, observed at M = N / subsample
    /// distinct cells chosen at random.
    Simulated {
        /// The truth's length scale (may differ from the model's: misspecification).
        truth_length_scale: f64,
        /// f: the subsampling factor.
        subsample: usize,
        /// Binomial: the trials of every observed cell (the other likelihoods ignore it).
        trials: u64,
    },
    /// A real grid in the format of `data/README.md` (columns i, j and a value column), with a
    /// seeded share of the cells held out and the rest observed.
    Csv {
        /// Absolute path (the schema resolves it against the study file's folder).
        path: PathBuf,
        /// Which column holds the observation: `count` (poisson, binomial), `label` (probit),
        /// `value`.
        column: String,
        /// Binomial: the column holding each cell's trials; None for the other likelihoods.
        trials: Option<String>,
        /// Share of cells held out, in [0, 1).
        holdout: f64,
    },
    /// A real point pattern (boxed: every job of a study holds a spec, and the point pattern's
    /// file, columns and window would double the size of every other job's).
    Points(Box<PointsData>),
}

/// A real point pattern: a CSV of event coordinates, counted in the cells of the model's grid
/// over `window` (the convention of `src/families/latent_field/points_csv.rs`), then held out and
/// observed as a grid CSV's cells are.
#[derive(Debug, Clone, PartialEq)]
pub struct PointsData {
    /// Absolute path (the schema resolves it against the study file's folder).
    pub(crate) path: PathBuf,
    /// The columns holding each event's x and y.
    pub(crate) x: String,
    pub(crate) y: String,
    /// The window the cells tile (`model.window`, in the data's units); every event lies in it.
    pub(crate) window: Window,
    /// Share of cells held out, in [0, 1).
    pub(crate) holdout: f64,
}

impl DataSpec {
    /// The `data.source` of the spec.
    pub(crate) fn source(&self) -> DataSource {
        match self {
            DataSpec::Simulated { .. } => DataSource::Simulated,
            DataSpec::Csv { .. } => DataSource::Csv,
            DataSpec::Points(_) => DataSource::Points,
        }
    }

    /// Whether the observations are real data (a grid or a point pattern read from a file),
    /// whose window is in the data's own units.
    pub(crate) fn is_real(&self) -> bool {
        self.source() != DataSource::Simulated
    }
}
