//! The Markov kernels (GRW-MH, pCN) in whitened coordinates and the streaming estimates of a run.

pub mod spec;

pub use spec::{SamplerKind, SamplerSpec};
