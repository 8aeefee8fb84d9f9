//! The statistical model: the grid, the Gaussian-process priors behind one trait, the
//! likelihoods, the data (simulated or read from CSV), the posterior a sampler targets in
//! whitened coordinates, and the exact gaussian posterior and evidence estimates.

pub mod data;
pub mod evidence;
pub mod exact;
pub mod grid;
pub mod likelihood;
pub mod prior;
pub mod spec;
pub mod special;
pub mod target;

pub use data::Dataset;
pub use grid::Grid;
pub use likelihood::Likelihood;
pub use prior::{KroneckerPrior, Prior, PriorError};
pub use spec::{
    DataSource, DataSpec, KernelKind, KernelSpec, LikelihoodKind, MeanSpec, ModelSpec, auto_mean,
};
pub use target::{Target, Workspace};
