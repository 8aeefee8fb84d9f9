//! The statistical model: the D x D grid, the squared-exponential prior in Kronecker form, the
//! likelihoods, the data (simulated or read from CSV) and the exact gaussian posterior.

pub mod grid;
pub mod prior;
pub mod spec;
pub mod special;

pub use grid::Grid;
pub use prior::{KroneckerPrior, PriorError};
pub use spec::{DataSpec, KernelSpec, LikelihoodKind, ModelSpec};
pub mod data;
pub mod exact;
pub mod likelihood;

pub use data::Dataset;
pub use likelihood::Likelihood;
pub mod evidence;
