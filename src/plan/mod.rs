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
//! | held_out_sites | data.source, data.path, data.value, data.x, data.y, data.holdout, replicate: which measurements at sites are held out, the same on every grid |
//! | noise | data.source, model.grid, data.subsample, replicate (the engine scales standard normals by noise_sd) |
//! | counts | everything of truth and observations, plus model.offset |
//! | chain | the full canonical key (the engine appends `;chain=c`) |
//! | model_data | every `[model]` and `[data]` key (other families' generated data) |
//!
//! So GRW and pCN jobs of one sweep point see the same truth and observations, and sweeping
//! noise_sd or subsample keeps the same truth.
//!
//! # Cost
//! Every key holds the replicate, and nothing else differs between the replicates of a point;
//! so a point's pairs are built and sorted once ([`PointKeys`]) and each job's keys are the
//! point's with its replicate spliced in ([`Template`]): a job costs one BLAKE3 of its key.
//! [`plan`] builds every [`Job`] (for `run`); [`StudyListing`] lists a study's jobs for the
//! printed forms (`fieldmc plan`) one at a time, holding one sweep point at once.

pub(crate) mod points;
pub(crate) mod shard;
mod study;
mod table;

use std::convert::Infallible;
use std::io;

use crate::families::{Family, FamilySpec};
use crate::job::JobHeader;
use crate::study::keys::*;
use crate::study::{Key, StudyKind};

pub(crate) use crate::job::StreamKeys;
pub use crate::study::ParamValue;
pub use points::{Point, Points};
pub use shard::{Shard, shard_of};
pub use study::{Study, load, parse};
pub(crate) use table::{Listed, Listing, Params, write_csv, write_text};

/// The jobs of a study, in plan order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub jobs: Vec<Job>,
}

/// One unit of work: one sweep point and one replicate.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// What every family reads of the job: id, canonical key, replicate, parameters, streams.
    pub header: JobHeader,
    /// The job's family and its resolved settings.
    pub spec: FamilySpec,
}

/// The name of the replicate's pair in canonical keys.
const REPLICATE: &str = "replicate";

/// Expand `study` into its jobs.
pub fn plan(study: &Study) -> Plan {
    let mut jobs = Vec::with_capacity(study.job_count());
    let point_jobs = |point: Point| {
        let keys = PointKeys::new(study, &point);
        let streams = keys.streams(point.spec.family());
        (0..study.file.replicates)
            .map(|replicate| {
                let key = keys.key.with(replicate);
                Job {
                    header: JobHeader {
                        id: job_id(study.file.seed, &key),
                        replicate,
                        params: point.params.clone(),
                        streams: streams.of(replicate, &key),
                        key,
                    },
                    spec: point.spec.clone(),
                }
            })
            .collect::<Vec<Job>>()
    };
    let Ok(()) = study.points.map_in_order(point_jobs, |point| {
        jobs.extend(point);
        Ok::<(), Infallible>(())
    });
    Plan { jobs }
}

/// The jobs of `study` as the printed forms list them (see [`table`]), without building them:
/// each point is resolved as it is reached, its keys built once, and each job's id from them.
pub(crate) struct StudyListing<'a>(pub &'a Study);

impl Listing for StudyListing<'_> {
    fn families(&self) -> Vec<Family> {
        self.0.points.families().to_vec()
    }

    fn widest_shown(&self, key: Key) -> usize {
        self.0.points.widest_shown(key)
    }

    fn replicates(&self) -> u32 {
        self.0.file.replicates
    }

    fn jobs(
        &self,
        tail: &(dyn Fn(&Params) -> String + Sync),
        visit: &mut dyn FnMut(Listed<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        let study = self.0;
        // A point's tail and its jobs' ids are made on rayon's threads; this one writes.
        let point_jobs = |point: Point| {
            let keys = PointKeys::new(study, &point);
            let mut key = String::new();
            let ids: Vec<JobId> = (0..study.file.replicates)
                .map(|replicate| {
                    keys.key.write(replicate, &mut key);
                    JobId::of(study.file.seed, &key)
                })
                .collect();
            (tail(&point.params), ids)
        };
        study.points.map_in_order(point_jobs, |(tail, ids)| {
            for (replicate, id) in (0..).zip(&ids) {
                visit(Listed {
                    id: id.as_str(),
                    replicate,
                    tail: &tail,
                })?;
            }
            Ok(())
        })
    }
}

/// The short id of the job with canonical `key` in a study with `seed`.
pub(crate) fn job_id(seed: u64, key: &str) -> String {
    JobId::of(seed, key).as_str().to_string()
}

/// A job id held without allocating: the first 12 hex digits of BLAKE3(seed ++ key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JobId([u8; 12]);

impl JobId {
    pub(crate) fn of(seed: u64, key: &str) -> Self {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&seed.to_le_bytes());
        hasher.update(key.as_bytes());
        let mut digits = [0u8; 12];
        digits.copy_from_slice(&hasher.finalize().to_hex().as_bytes()[..12]);
        JobId(digits)
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

/// The canonical key of one sweep point's jobs with the replicate left open, built once per
/// point: each job splices its replicate in.
#[derive(Debug, Clone)]
pub(crate) struct PointKeys {
    pairs: Vec<Pair>,
    /// The canonical key.
    pub(crate) key: Template,
}

impl PointKeys {
    /// The keys of the jobs of `point`.
    pub(crate) fn new(study: &Study, point: &Point) -> Self {
        let pairs = canonical_pairs(study, point);
        let key = Template::of(&pairs, |_| true);
        PointKeys { pairs, key }
    }

    /// The stream keys of the jobs of a point of `family` (each holds the replicate too).
    fn streams(&self, family: Family) -> StreamTemplates {
        let pairs = &self.pairs;
        StreamTemplates {
            model_data: restricted_to(pairs, |key| {
                matches!(key.section(), Section::Model | Section::Data)
            }),
            data: family
                .data_streams()
                .iter()
                .map(|stream| (stream.name, restricted(pairs, stream.keys)))
                .collect(),
        }
    }
}

/// The stream keys of one sweep point's jobs with the replicate left open (the chain's is the
/// canonical key).
struct StreamTemplates {
    model_data: Template,
    data: Vec<(&'static str, Template)>,
}

impl StreamTemplates {
    /// The stream keys of replicate `replicate`, whose canonical key is `key`.
    fn of(&self, replicate: u32, key: &str) -> StreamKeys {
        StreamKeys {
            chain: key.to_string(),
            model_data: self.model_data.with(replicate),
            data: self
                .data
                .iter()
                .map(|(name, template)| (*name, template.with(replicate)))
                .collect(),
        }
    }
}

/// One `name=value` pair of a canonical key: a parameter's (`key` is its key), the replicate's,
/// or the study's (`study.kind`, `sbc.*`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Pair {
    name: &'static str,
    value: String,
    key: Option<Key>,
}

/// A key with the replicate left open: `before`, the replicate in decimal, `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    before: String,
    after: String,
}

impl Template {
    /// The replicate and the pairs that `keep` keeps of the sorted `pairs`, joined with `;`.
    fn of(pairs: &[Pair], keep: impl Fn(&Pair) -> bool) -> Self {
        let mut joined = String::with_capacity(256);
        let mut open = 0;
        for pair in pairs.iter().filter(|p| p.name == REPLICATE || keep(p)) {
            if !joined.is_empty() {
                joined.push(';');
            }
            joined.push_str(pair.name);
            joined.push('=');
            if pair.name == REPLICATE {
                open = joined.len();
            } else {
                joined.push_str(&pair.value);
            }
        }
        let after = joined.split_off(open);
        Template {
            before: joined,
            after,
        }
    }

    /// The key of replicate `replicate`.
    pub(crate) fn with(&self, replicate: u32) -> String {
        let mut key = String::new();
        self.write(replicate, &mut key);
        key
    }

    /// Replace `key` with the key of replicate `replicate` (no allocation once `key` is large
    /// enough).
    pub(crate) fn write(&self, replicate: u32, key: &mut String) {
        use std::fmt::Write;
        key.clear();
        key.push_str(&self.before);
        write!(key, "{replicate}").expect("writing to a String cannot fail");
        key.push_str(&self.after);
    }
}

/// The pairs of a point's canonical key, sorted by name; the replicate's value is left out
/// (see [`Template`]).
fn canonical_pairs(study: &Study, point: &Point) -> Vec<Pair> {
    let study_pair = |name: &'static str, value: String| Pair {
        name,
        value,
        key: None,
    };
    let mut pairs: Vec<Pair> = point
        .params
        .iter()
        .filter(|(key, value)| in_canonical_key(&point.spec, *key, value))
        .map(|(key, value)| Pair {
            name: key.dotted(),
            value: value.canonical(),
            key: Some(*key),
        })
        .collect();
    pairs.push(study_pair(REPLICATE, String::new()));
    pairs.push(study_pair("study.kind", study.file.kind.name().to_string()));
    for (name, version) in point.spec.algorithm_versions() {
        pairs.push(study_pair(name, version));
    }
    if let (StudyKind::Sbc, Some(sbc)) = (study.file.kind, study.file.sbc) {
        pairs.push(study_pair("sbc.replications", sbc.replications.to_string()));
        pairs.push(study_pair("sbc.draws", sbc.draws.to_string()));
    }
    pairs.sort();
    pairs
}

/// Whether a parameter is part of the canonical key: it applies, and its key is keyed (always,
/// or when it differs from its default).
fn in_canonical_key(spec: &FamilySpec, key: Key, value: &ParamValue) -> bool {
    match key.keyed() {
        _ if value.is_null() => false,
        Keyed::Always => true,
        Keyed::UnlessDefault => !spec.is_default(key, value),
        Keyed::Never => false,
    }
}

/// The canonical key restricted to `keys` and the replicate (pairs stay sorted).
fn restricted(pairs: &[Pair], keys: &[Key]) -> Template {
    restricted_to(pairs, |key| keys.contains(&key))
}

/// The canonical key restricted to the parameters whose key `keep` keeps, and the replicate.
fn restricted_to(pairs: &[Pair], keep: impl Fn(Key) -> bool) -> Template {
    Template::of(pairs, |pair| pair.key.is_some_and(&keep))
}

#[cfg(test)]
mod tests;
