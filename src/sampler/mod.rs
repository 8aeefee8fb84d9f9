//! The Markov kernels (GRW-MH, pCN) in whitened coordinates, and the run of a job's chains with
//! its streaming estimates. The kernels never see a stream they did not get passed: the caller
//! owns the random streams (one per chain) and the sampler owns only the arithmetic.

pub mod kernel;
pub mod moments;
pub mod run;
pub mod spec;

pub use kernel::{ChainState, Kernel, Target};
pub use run::{Functional, RunOutput, RunRequest, run};
pub use spec::{SamplerKind, SamplerSpec};
