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
        /// c_i ~ Poisson(exp([G u]_i + offset_i)), offset_i the cell's log offset.
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
        /// Real measurements at scattered sites, each observing the field interpolated
        /// between the cell centres around it.
        Sites = "sites",
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
    /// Estimated from the observed data when the job runs ([`super::data::auto_mean`]): poisson
    /// log(total count / total exposure) - offset - variance / 2 (the prior's mean rate equals
    /// the observed rate), binomial the logit of the pooled share - offset, gaussian the mean
    /// observation, probit 0.
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
    /// `model.offset`, every cell's share of the linear predictor's offset: poisson, the log
    /// offset (log cell area or log base rate): rate = exp(u + offset + log exposure), the data
    /// giving each cell's log exposure ([`super::data::LogOffsets`]; 0 when they give none);
    /// binomial, the logit offset: success probability logistic(u + offset). `log-area` is
    /// resolved to the number here.
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
    /// seeded share of the cells that have a value held out and the rest observed.
    Csv {
        /// Absolute path (the schema resolves it against the study file's folder).
        path: PathBuf,
        /// Which column holds the observation: `count` (poisson, binomial), `label` (probit),
        /// `value`.
        column: String,
        /// Binomial: the column holding each cell's trials; None for the other likelihoods.
        trials: Option<String>,
        /// Which cells are held out (`data.holdout`, or a fold of `data.folds`).
        holdout: HoldOut,
        /// The counts' exposure per cell, when the study gives one.
        exposure: Option<ExposureColumn>,
    },
    /// A real point pattern (boxed: every job of a study holds a spec, and the point pattern's
    /// file, columns and window would double the size of every other job's).
    Points(Box<PointsData>),
    /// Real measurements at scattered sites (boxed, as points are).
    Sites(Box<SitesData>),
}

/// Real measurements at scattered sites: a CSV with one row per measurement (the convention of
/// `src/families/latent_field/sites_csv.rs`), each observing the field at its own position
/// through the bilinear operator of [`crate::model::sites`]; a seeded share held out and scored.
#[derive(Debug, Clone, PartialEq)]
pub struct SitesData {
    /// Absolute path (the schema resolves it against the study file's folder).
    pub(crate) path: PathBuf,
    /// The columns holding each site's x and y.
    pub(crate) x: String,
    pub(crate) y: String,
    /// The column holding each measurement (binomial: the successes).
    pub(crate) value: String,
    /// Binomial: the column holding each measurement's trials.
    pub(crate) trials: Option<String>,
    /// The window the cells tile, in the data's units; every site lies in it.
    pub(crate) window: Window,
    /// Which sites are held out (`data.holdout`, or a fold of `data.folds`).
    pub(crate) holdout: HoldOut,
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
    /// Which cells are held out (`data.holdout`, or a fold of `data.folds`).
    pub(crate) holdout: HoldOut,
    /// The counts' exposure per cell, when the study gives one.
    pub(crate) exposure: Option<ExposureColumn>,
}

/// The exposure of the counts per cell, read from a column of a grid CSV (`data.exposure` or
/// `data.offset`): the Poisson mean of a cell is exposure x exp(u + model.offset).
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureColumn {
    /// Absolute path of the grid CSV holding the column: the data file, or `data.covariates_path`.
    pub(crate) path: PathBuf,
    pub(crate) column: String,
    /// Whether the column holds the exposure or its log.
    pub(crate) scale: ExposureScale,
    /// Whether the file is the data file itself, whose rows are the data's cells (else it is a
    /// covariates file, which gives every cell of the grid).
    pub(crate) in_data_file: bool,
}

/// What an exposure column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExposureScale {
    /// The exposure E >= 0 (`data.exposure`): its log is added to the offset, and E = 0 takes
    /// the cell out of the likelihood.
    Exposure,
    /// The log exposure, any finite number (`data.offset`).
    LogOffset,
}

impl DataSpec {
    /// The counts' exposure per cell, when the study gives one.
    pub(crate) fn exposure(&self) -> Option<&ExposureColumn> {
        match self {
            DataSpec::Simulated { .. } => None,
            DataSpec::Csv { exposure, .. } => exposure.as_ref(),
            DataSpec::Points(points) => points.exposure.as_ref(),
            DataSpec::Sites(_) => None,
        }
    }

    /// The `data.source` of the spec.
    pub(crate) fn source(&self) -> DataSource {
        match self {
            DataSpec::Simulated { .. } => DataSource::Simulated,
            DataSpec::Csv { .. } => DataSource::Csv,
            DataSpec::Points(_) => DataSource::Points,
            DataSpec::Sites(_) => DataSource::Sites,
        }
    }

    /// Whether the observations are real data (a grid, a point pattern or sites read from a file),
    /// whose window is in the data's own units.
    pub(crate) fn is_real(&self) -> bool {
        self.source() != DataSource::Simulated
    }
}

/// Which of a job's usable observations it holds out of the fit, to score them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HoldOut {
    /// A seeded share of them, rounded (`data.holdout`; 0 holds none out).
    Share(f64),
    /// Fold `fold` of `folds` (`data.folds`, `data.fold`): the observations in a seeded order,
    /// every `folds`-th from position `fold`. The order's stream does not hold `fold`, so the
    /// folds' jobs share it and their held-out sets split the observations.
    Fold { folds: usize, fold: usize },
}

impl HoldOut {
    /// How many of `count` observations it holds out.
    pub fn held_of(self, count: usize) -> usize {
        match self {
            HoldOut::Share(share) => ((share * count as f64).round() as usize).min(count),
            HoldOut::Fold { folds, fold } => (count + folds - 1 - fold.min(folds - 1)) / folds,
        }
    }
}
