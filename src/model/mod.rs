//! The statistical model: the grid, the Gaussian-process priors behind one trait, the
//! likelihoods, the data (simulated or read from CSV), the posterior a sampler targets in
//! whitened coordinates, the exact gaussian posterior and evidence estimates, and the Laplace
//! approximation ([`laplace`], with the Lanczos eigensolver of [`lanczos`]) and the nested Laplace
//! approximation over the hyperparameters ([`inla`]), and a study region that is not a rectangle
//! with each cell's exact area inside it ([`region`]).

pub mod covariates;
pub mod data;
pub(crate) mod evidence;
pub mod exact;
pub mod functional;
pub mod grid;
pub mod hyper;
pub(crate) mod inla;
pub(crate) mod lanczos;
pub mod laplace;
pub mod likelihood;
pub(crate) mod moments;
pub mod prior;
pub mod quadrature;
pub(crate) mod region;
pub mod sites;
pub(crate) mod skew_normal;
pub mod spec;
pub(crate) mod special;
pub(crate) mod target;

pub use data::auto_mean;
pub use grid::Grid;
pub use likelihood::Likelihood;
pub use prior::{KroneckerPrior, Prior, PriorError};
pub use spec::{
    DataSource, DataSpec, KernelKind, KernelSpec, LikelihoodKind, MeanSpec, ModelSpec, PointsData,
};
pub use target::{Observed, Target, Workspace};
