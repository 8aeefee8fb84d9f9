//! The planner: expands a validated [`Study`] into jobs, and gives each job its canonical key,
//! its short stable id and the keys of its random streams.
//!
//! # Order
//! Sweep points in product order (first axis outermost, see [`crate::study`]), and for each
//! point its replicates 0, 1, ... (replicates innermost).
//!
//! # Canonical key and id
//! A job's key is the sorted `section.key=value` pairs of every resolved parameter that applies
//! to it (inapplicable ones, `Null`, are left out), plus `replicate=r` and `study.kind=...`
//! (and `sbc.draws`, `sbc.replications` for SBC studies), joined with `;`. Floats are written
//! with Rust's `{:?}` (shortest round-trip), so 0.3 is always `0.3`. The id is the first 12 hex
//! digits of BLAKE3(seed as 8 little-endian bytes ++ key). Neither depends on the job's place in
//! the sweep, so adding a value to a sweep leaves every existing job's key, id and streams as
//! they were.
//!
//! # Stream keys
//! Each stream key is the canonical key restricted to what its draws depend on, so the jobs of
//! one study share data wherever they can (common random numbers):
//!
//! | stream | depends on |
//! |---|---|
//! | truth | model.grid, model.window, model.kernel, model.variance, data.length_scale, replicate |
//! | observations | data.source, model.grid, data.subsample (simulated) or data.path + data.holdout (csv), replicate |
//! | noise | data.source, model.grid, data.subsample, replicate (the engine scales standard normals by noise_sd) |
//! | counts | everything of truth and observations, plus model.offset |
//! | chain | the full canonical key (the engine appends `;chain=c`) |
//! | model_data | every `[model]` and `[data]` key (other families' generated data) |
//!
//! So GRW and pCN jobs of one sweep point see the same truth and observations, and sweeping
//! noise_sd or subsample keeps the same truth.

pub mod shard;
mod table;

use crate::families::FamilySpec;
use crate::families::latent_field::LatentFieldSpec;
use crate::study::keys::*;
use crate::study::resolve::is_default;
use crate::study::{Study, StudyKind};

pub use crate::study::ParamValue;
pub use shard::{Shard, shard_of};

/// The jobs of a study, in plan order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub jobs: Vec<Job>,
}

/// One unit of work: one sweep point and one replicate.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// First 12 hex digits of BLAKE3(seed ++ key): short, stable, unique within a study.
    pub id: String,
    /// The canonical key (see the module docs).
    pub key: String,
    pub replicate: u32,
    /// The job's family and its resolved settings.
    pub spec: FamilySpec,
    /// Every resolved parameter, in one fixed order for all jobs (the keys' declaration order);
    /// `Null` where it does not apply. Each becomes the column `section_key`.
    pub params: Vec<(Key, ParamValue)>,
    pub streams: StreamKeys,
}

/// The keys the engine seeds each random stream with: `streams::stream(seed, purpose, &key)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamKeys {
    pub truth: String,
    pub observations: String,
    pub noise: String,
    pub counts: String,
    pub chain: String,
    /// The `[model]` and `[data]` keys and the replicate: the data stream of families other
    /// than the latent field (a generated matrix, a corpus), shared by jobs that differ only in
    /// their sampler.
    pub model_data: String,
}

impl Job {
    /// The latent-field settings of a latent-field job (panics for another family: only
    /// latent-field code asks).
    pub fn latent(&self) -> &LatentFieldSpec {
        self.spec.latent()
    }
}

/// The keys that each stream key keeps (besides the replicate).
const TRUTH: &[Key] = &[
    DATA_LENGTH_SCALE,
    MODEL_GRID,
    MODEL_KERNEL,
    MODEL_VARIANCE,
    MODEL_WINDOW,
];
const OBSERVATIONS: &[Key] = &[
    DATA_HOLDOUT,
    DATA_PATH,
    DATA_SOURCE,
    DATA_SUBSAMPLE,
    MODEL_GRID,
];
const NOISE: &[Key] = &[DATA_SOURCE, DATA_SUBSAMPLE, MODEL_GRID];
const COUNTS_EXTRA: &[Key] = &[MODEL_OFFSET];
const REPLICATE: &str = "replicate";

/// Expand `study` into its jobs.
pub fn plan(study: &Study) -> Plan {
    let mut jobs = Vec::with_capacity(study.job_count());
    for point in &study.points {
        for replicate in 0..study.replicates {
            let pairs = canonical_pairs(study, &point.params, replicate);
            let key = join(&pairs);
            jobs.push(Job {
                id: job_id(study.seed, &key),
                replicate,
                spec: point.spec.clone(),
                params: point.params.clone(),
                streams: stream_keys(&pairs, &key),
                key,
            });
        }
    }
    Plan { jobs }
}

/// The short id of the job with canonical `key` in a study with `seed`.
pub fn job_id(seed: u64, key: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&seed.to_le_bytes());
    hasher.update(key.as_bytes());
    hasher.finalize().to_hex()[..12].to_string()
}

/// The (name, value) pairs of a job's canonical key, sorted by name.
fn canonical_pairs(
    study: &Study,
    params: &[(Key, ParamValue)],
    replicate: u32,
) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = params
        .iter()
        .filter(|(key, value)| in_canonical_key(*key, value, params))
        .map(|(key, value)| (key.dotted().to_string(), value.canonical()))
        .collect();
    pairs.push((REPLICATE.to_string(), replicate.to_string()));
    pairs.push(("study.kind".to_string(), study.kind.name().to_string()));
    if let (StudyKind::Sbc, Some(sbc)) = (study.kind, study.sbc) {
        pairs.push(("sbc.replications".to_string(), sbc.replications.to_string()));
        pairs.push(("sbc.draws".to_string(), sbc.draws.to_string()));
    }
    pairs.sort();
    pairs
}

/// Whether a parameter is part of the canonical key: it applies, and its key is keyed (always,
/// or when it differs from its default).
fn in_canonical_key(key: Key, value: &ParamValue, params: &[(Key, ParamValue)]) -> bool {
    match key.keyed() {
        _ if value.is_null() => false,
        Keyed::Always => true,
        Keyed::UnlessDefault => !is_default(key, value, params),
        Keyed::Never => false,
    }
}

fn join(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The canonical key restricted to `keys` and the replicate (pairs stay sorted).
fn restricted(pairs: &[(String, String)], keys: &[Key]) -> String {
    let kept: Vec<(String, String)> = pairs
        .iter()
        .filter(|(name, _)| name == REPLICATE || keys.iter().any(|k| k.dotted() == name))
        .cloned()
        .collect();
    join(&kept)
}

/// The canonical key restricted to `[model]` and `[data]` keys and the replicate.
fn model_and_data(pairs: &[(String, String)]) -> String {
    let kept: Vec<(String, String)> = pairs
        .iter()
        .filter(|(name, _)| {
            name == REPLICATE || name.starts_with("model.") || name.starts_with("data.")
        })
        .cloned()
        .collect();
    join(&kept)
}

fn stream_keys(pairs: &[(String, String)], key: &str) -> StreamKeys {
    let counts: Vec<Key> = TRUTH
        .iter()
        .chain(OBSERVATIONS)
        .chain(COUNTS_EXTRA)
        .copied()
        .collect();
    StreamKeys {
        truth: restricted(pairs, TRUTH),
        observations: restricted(pairs, OBSERVATIONS),
        noise: restricted(pairs, NOISE),
        counts: restricted(pairs, &counts),
        chain: key.to_string(),
        model_data: model_and_data(pairs),
    }
}

#[cfg(test)]
mod tests;
