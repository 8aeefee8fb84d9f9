//! A latent-field job's settings: what its study resolves every sweep point into, and the
//! engine's view of a job (its header and its spec).

use crate::job::JobHeader;
use crate::model::{DataSpec, ModelSpec};
use crate::sampler::SamplerSpec;

/// The family's word in `model.family`.
pub const NAME: &str = "latent-field";

/// The `sampler.kind` word that lets the family choose the kind and its budget
/// ([`super::sampler_keys::auto_kind`]); the default.
pub(crate) const AUTO: &str = "auto";

/// A latent-field job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentFieldSpec {
    pub model: ModelSpec,
    pub(crate) data: DataSpec,
    pub sampler: SamplerSpec,
    pub(crate) output: OutputSpec,
}

/// One latent-field job as the engine reads it: the job's header and its spec.
#[derive(Debug, Clone, Copy)]
pub struct FieldJob<'a> {
    pub header: &'a JobHeader,
    pub spec: &'a LatentFieldSpec,
}

/// What a job records beyond its summary tables (`[output]`).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSpec {
    /// Thinned draws per chain of every cell kept in `draws.parquet`.
    pub(crate) field_draws: usize,
    /// Kept draws per chain stored for the per-cell diagnostics.
    pub(crate) cell_draws: usize,
    /// Thresholds of the relative risk exp(field) whose exceedance probabilities are mapped.
    pub(crate) exceedance: Vec<f64>,
}
