//! What a study family receives for one job, and the contract it implements. This module knows no
//! family: [`JobHeader`] is the part of a planned job that every family reads (its id, canonical
//! key, replicate, parameters and the keys of its random streams), [`RunContext`] is what a job
//! may read besides its own spec (the study seed and its streams, the SBC settings, progress), and
//! [`StudyFamily`] is what a family brings (its keys, spec, run, tables and figures). The registry
//! (`crate::families`) lists the families; the planner builds the headers; the executor calls
//! [`StudyFamily::run`] and [`StudyFamily::tables`] through the registry.

mod family;

pub use family::{ChunkedTables, Finished, NamedTables, StudyFamily, Tabulated};

use crate::streams::{Purpose, StreamRng, stream};
use crate::study::{Key, ParamValue, SbcSpec};

/// One planned job as a family sees it: everything but its family's spec.
#[derive(Debug, Clone, PartialEq)]
pub struct JobHeader {
    /// First 12 hex digits of BLAKE3(seed ++ key): short, stable, unique within a study.
    pub(crate) id: String,
    /// The canonical key (see [`crate::plan`]).
    pub(crate) key: String,
    pub(crate) replicate: u32,
    /// The parameters of the job's family, in column order; `Null` where a key of the family
    /// does not apply to this job (a csv-only key for simulated data). Each becomes the column
    /// `section_key` of the jobs table.
    pub params: Vec<(Key, ParamValue)>,
    pub(crate) streams: StreamKeys,
}

/// The keys the job's random streams are seeded with: `streams::stream(seed, purpose, &key)`.
/// Each is the job's canonical key restricted to what the stream's draws depend on, so jobs that
/// share those see the same draws (common random numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamKeys {
    /// The full canonical key: the chains' streams (a job's own).
    pub(crate) chain: String,
    /// The `[model]` and `[data]` keys and the replicate: a family's generated data (a matrix,
    /// a corpus), shared by jobs that differ only in their sampler.
    pub(crate) model_data: String,
    /// The family's own data streams ([`StudyFamily::DATA_STREAMS`]), by name.
    pub(crate) data: Vec<(&'static str, String)>,
}

impl StreamKeys {
    /// The key of the family's data stream `stream` (a family asks for its own streams only).
    pub(crate) fn data(&self, stream: &DataStream) -> &str {
        self.data
            .iter()
            .find(|(name, _)| *name == stream.name)
            .map(|(_, key)| key.as_str())
            .unwrap_or_else(|| panic!("the job has no {} stream", stream.name))
    }
}

/// A random stream of a family's data, and the keys its draws depend on (besides the
/// replicate): the stream's key is the job's canonical key restricted to those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataStream {
    pub(crate) name: &'static str,
    pub(crate) keys: &'static [Key],
}

impl JobHeader {
    /// The value of `key` for this job (`Null` where the key is not one of its family's).
    pub(crate) fn param(&self, key: Key) -> &ParamValue {
        ParamValue::of(&self.params, key)
    }
}

/// What a family's job may read besides its own spec.
pub struct RunContext<'a> {
    /// The job being run.
    pub(crate) job: &'a JobHeader,
    /// The study seed.
    pub(crate) seed: u64,
    /// The `[sbc]` settings of a simulation-based-calibration study.
    pub(crate) sbc: Option<SbcSpec>,
    /// Called with the units of work done (see [`StudyFamily::work`]).
    pub(crate) progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// The run has fewer jobs than threads: a job may spread its own independent pieces (the
    /// latent field's chains) over the pool's idle threads. Never changes a number.
    pub(crate) spare_threads: bool,
}

impl RunContext<'_> {
    /// A chain's random stream: seeded from the study seed and the job's full canonical key
    /// extended by `detail` (e.g. `chain=2`), never from thread or order.
    pub(crate) fn chain_stream(&self, purpose: Purpose, detail: &str) -> StreamRng {
        stream(
            self.seed,
            purpose,
            &extended(&self.job.streams.chain, detail),
        )
    }

    /// A data stream (a generated matrix, a corpus): seeded from the job's `[model]` and
    /// `[data]` keys and its replicate only, so jobs that differ in their sampler see the same
    /// data (common random numbers).
    pub(crate) fn data_stream(&self, detail: &str) -> StreamRng {
        let key = extended(&self.job.streams.model_data, detail);
        stream(self.seed, Purpose::Truth, &key)
    }

    /// Reports `done` units of work to the progress display.
    pub(crate) fn report(&self, done: u64) {
        if let Some(progress) = self.progress {
            progress(done);
        }
    }
}

fn extended(key: &str, detail: &str) -> String {
    if detail.is_empty() {
        key.to_string()
    } else {
        format!("{key};{detail}")
    }
}
