//! The resolved description of one job's model and data: what the study schema produces after
//! defaults and sweeps are applied, and what the engine consumes. Plain data, already validated.

use std::path::PathBuf;

/// The likelihood family linking the latent field to the observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LikelihoodKind {
    /// v = G u + e, e ~ N(0, s^2 I).
    Gaussian,
    /// t = sign(G u + e): log p(t | u) = sum log Phi(t_i [G u]_i / s).
    Probit,
    /// c_i ~ Poisson(exp([G u]_i + offset)).
    Poisson,
}

impl LikelihoodKind {
    pub const ALL: [LikelihoodKind; 3] = [Self::Gaussian, Self::Probit, Self::Poisson];

    pub fn name(self) -> &'static str {
        match self {
            Self::Gaussian => "gaussian",
            Self::Probit => "probit",
            Self::Poisson => "poisson",
        }
    }
}

crate::closed_names! {
    /// The covariance function of the prior, as a study names it (`model.kernel`). With
    /// r = |x - x'| (Euclidean, in the window's units) and l the length scale, each is
    /// variance * rho(r / l):
    pub enum KernelFamily {
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

/// The prior's covariance function: k(x, x') = variance * rho(|x - x'| / length_scale), with rho
/// the family's correlation (see [`KernelFamily`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpec {
    pub family: KernelFamily,
    pub length_scale: f64,
    pub variance: f64,
}

impl KernelSpec {
    /// The squared-exponential kernel with `length_scale` and `variance`.
    pub fn squared_exponential(length_scale: f64, variance: f64) -> Self {
        Self {
            family: KernelFamily::SquaredExponential,
            length_scale,
            variance,
        }
    }

    /// This kernel with another length scale (a misspecified truth).
    pub fn with_length_scale(self, length_scale: f64) -> Self {
        Self {
            length_scale,
            ..self
        }
    }
}

/// What the sampler assumes: the prior on the D x D grid and the likelihood.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// D: points per axis; N = D^2.
    pub grid: usize,
    pub kernel: KernelSpec,
    pub likelihood: LikelihoodKind,
    /// Observation noise sd s (gaussian and probit; the data are simulated with the same s).
    pub noise_sd: f64,
    /// Poisson log-offset (log cell area or log base rate): rate = exp(u + offset).
    pub offset: f64,
    /// Prior draws for the Monte Carlo estimate of log p(data | model); 0 = not estimated.
    pub evidence_draws: usize,
}

impl ModelSpec {
    /// The same model with the kernel's length scale replaced (a misspecified truth).
    pub fn with_length_scale(&self, length_scale: f64) -> Self {
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
    },
    /// A real grid in the format of `data/README.md` (columns i, j and a value column), with a
    /// seeded share of the cells held out and the rest observed.
    Csv {
        /// Absolute path (the schema resolves it against the study file's folder).
        path: PathBuf,
        /// Which column holds the observation: `count` (poisson), `label` (probit), `value`.
        column: String,
        /// Share of cells held out, in [0, 1).
        holdout: f64,
    },
}
