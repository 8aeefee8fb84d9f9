//! A latent-field job's settings: what its study resolves every sweep point into, and the
//! engine's view of a job (its header and its spec).

use std::path::PathBuf;
use std::sync::Arc;

use crate::job::JobHeader;
use crate::model::region::Region;
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
    /// The study region (`model.region`), None for the whole window.
    pub(crate) region: Option<StudyRegion>,
}

impl LatentFieldSpec {
    /// Each cell's share inside the study region, in the grid's cell order (j * nx + i), in
    /// [0, 1]: exact ([`Region::inside_fractions`]); 1 everywhere without `model.region`.
    pub(crate) fn inside_fraction(&self) -> Vec<f64> {
        match &self.region {
            Some(region) => region.inside_fraction.to_vec(),
            None => vec![1.0; self.model.grid.cells()],
        }
    }
}

/// A study region on a job's grid: the file it came from, its rings and each cell's share
/// inside it. Shared (`Arc`) by the jobs of a study on the same file and grid.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StudyRegion {
    /// Absolute path (resolved against the study file's folder).
    pub(crate) path: PathBuf,
    pub(crate) region: Arc<Region>,
    /// Each cell's share inside the region, cell j * nx + i, in [0, 1].
    pub(crate) inside_fraction: Arc<[f64]>,
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
    /// Report PSIS-LOO and WAIC from the pointwise log-likelihood at the stored draws
    /// (`output.log_likelihood`, [`super::loo`]).
    pub(crate) log_likelihood: bool,
    /// Thresholds of the relative risk exp(field) whose exceedance probabilities are mapped.
    pub(crate) exceedance: Vec<f64>,
    /// The posterior quantiles the tables report (`output.quantiles`).
    pub(crate) quantiles: super::quantiles::Quantiles,
    /// The sites to predict the field at (`output.predict_sites`).
    pub(crate) predict_sites: Option<std::sync::Arc<PredictFile>>,
    /// Named points the field maps mark (`output.marks`, `output.mark_labels`), each inside the
    /// grid's window.
    pub(crate) marks: Vec<Mark>,
}

/// A predict-sites file (`output.predict_sites`), read: its absolute path and its sites.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PredictFile {
    pub(crate) path: std::path::PathBuf,
    pub(crate) sites: super::sites_csv::PredictSites,
}

/// A named point the field maps mark, in the units of `model.window`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub(crate) label: String,
    pub(crate) x: f64,
    pub(crate) y: f64,
}
