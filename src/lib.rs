//! fieldmc: reproducible MCMC studies on latent Gaussian fields.
//!
//! The data's path through the crate, one module per stage:
//! [`study`] (TOML schema and validation) -> [`plan`] (sweep expansion, job keys, seeds) ->
//! [`model`] (grid, prior, likelihoods, data, exact posterior) -> [`sampler`] (Markov kernels and
//! the streaming estimates of a run) -> [`execute`] (rayon over jobs, progress) ->
//! [`diagnostics`] (ESS, R-hat, MCSE) -> [`sink`] (Parquet tables, manifest) -> [`report`]
//! (figures and a page); [`compare`] holds two results folders against each other. [`streams`]
//! owns the random generator and its key-derived seeds; [`incomplete_gamma`] the gamma
//! distribution functions the priors and the calibration share;
//! [`bench`] times the samplers against peers.

pub(crate) mod bench;
pub mod cli;
pub(crate) mod clock;
pub(crate) mod compare;
pub mod diagnostics;
pub(crate) mod execute;
pub mod families;
pub(crate) mod figures;
pub(crate) mod incomplete_gamma;
pub mod inference_data;
pub(crate) mod job;
pub(crate) mod memory;
pub mod model;
pub(crate) mod names;
pub(crate) mod normals;
pub mod plan;
pub mod report;
pub mod sampler;
pub(crate) mod simd_state;
pub mod sink;
pub mod streams;
pub mod study;
pub mod table;
