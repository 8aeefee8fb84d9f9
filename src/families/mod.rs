//! Study families: what a study is about (`model.family`). The latent Gaussian field of the
//! coursework is one family; the lecture notes' other systems (finite Markov chains, PageRank,
//! Gibbs targets, LDA, region partitions) are others. Each family is one folder here and one
//! line in [`study_families!`] below.
//!
//! # How the seam is drawn
//!
//! Shared code owns everything a job's walk through the pipeline has in common, and never
//! looks inside a family:
//!
//! - **keys** are declared in the one key table ([`crate::study::keys`]); each declaration says
//!   which families it applies to (`families: &[Family::...]`). Validation rejects a key given
//!   for another family with a located error, leaves it `Null` (so out of the canonical key, the
//!   stream keys and the job row) and the README's key table says which family it belongs to.
//!   `model.family` itself is keyed only when it is not the default, so latent-field jobs keep
//!   the ids and seeds they had before families existed.
//! - **planning and seeding** ([`crate::plan`]): the canonical key, the job id and the stream
//!   keys come from the resolved parameters alone, whatever the family.
//! - **running** ([`crate::execute`]): rayon over jobs, panics and errors caught per job, resume
//!   decisions, the part logs and the manifest. A family is called with its job and the study
//!   seed, draws only from streams keyed by the job ([`RunContext::stream`]), and returns its
//!   tables.
//! - **writing** ([`crate::sink`]): every table and column is declared in
//!   [`crate::sink::schema`]; a family's tables are declared there too (long-form tables shared
//!   by the families that need them) and built with the same [`crate::sink::schema::Rows`].
//! - **reporting** ([`crate::report`]): the page, the jobs table and the figures against swept
//!   parameters are shared; a family adds its own figures from its own tables.
//!
//! A family brings, through [`StudyFamily`]: its job spec resolved and checked from one sweep
//! point's settings ([`StudyFamily::resolve`]), the data files it reads (hashed for honest
//! resume), a progress label, its computation ([`StudyFamily::run`]), its rows of the result
//! tables ([`StudyFamily::tables`]) and its report figures ([`StudyFamily::figures`]).
//!
//! The latent field plugs in the same way ([`latent_field`]): its engine predates the seam and
//! lives in the stage folders ([`crate::model`], [`crate::sampler`], [`crate::execute::job`],
//! [`crate::execute::sbc`], [`crate::execute::tables`]) and its figures are the report's
//! built-in ones; its family folder is the adaptor that registers it.

pub mod bayes_net;
pub mod figures;
pub mod gaussian;
pub mod latent_field;
pub mod lda;
pub mod markov_chain;
pub mod pagerank;
pub mod partition;

use std::path::Path;

use polars::prelude::{DataFrame, PolarsResult};

use crate::plan::Job;
use crate::report::{Context, Figure, ReportError};
use crate::streams::{Purpose, StreamRng, stream};
use crate::study::resolve::Resolver;
use crate::study::{Key, ParamValue, SbcSpec, Settings, StudyError};

/// A job's rows of the result tables, by table name (`jobs` always among them).
pub type NamedTables = Vec<(&'static str, DataFrame)>;

/// What a family's job may read besides its own spec.
pub struct RunContext<'a> {
    /// The study seed.
    pub seed: u64,
    /// The `[sbc]` settings of a simulation-based-calibration study.
    pub sbc: Option<SbcSpec>,
    /// Called with the units of work done (see [`StudyFamily::work`]).
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

impl RunContext<'_> {
    /// A chain's random stream: seeded from the study seed and the job's full canonical key
    /// extended by `detail` (e.g. `chain=2`), never from thread or order.
    pub fn chain_stream(&self, job: &Job, purpose: Purpose, detail: &str) -> StreamRng {
        stream(self.seed, purpose, &extended(&job.streams.chain, detail))
    }

    /// A data stream (a generated matrix, a corpus): seeded from the job's `[model]` and
    /// `[data]` keys and its replicate only, so jobs that differ in their sampler see the same
    /// data (common random numbers).
    pub fn data_stream(&self, job: &Job, detail: &str) -> StreamRng {
        stream(
            self.seed,
            Purpose::Truth,
            &extended(&job.streams.model_data, detail),
        )
    }

    /// Reports `done` units of work to the progress display.
    pub fn report(&self, done: u64) {
        if let Some(progress) = self.progress {
            progress(done);
        }
    }
}

/// One study family: how its jobs are resolved, run, written and shown.
pub trait StudyFamily {
    /// The family's name in `model.family`.
    const FAMILY: Family;
    /// A job's checked settings.
    type Spec: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// What a job computes, before it becomes table rows.
    type Output: Send;

    /// The spec of one sweep point, or a located error (cross-key rules, data files). Keys of
    /// other families have already been rejected.
    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError>;

    /// Every parameter of the point in [`crate::study::Key::all`] order (the job's columns and
    /// canonical key), `Null` where a key does not apply. By default the given value or the
    /// key's default for the family's keys; a family with derived defaults resolves them here.
    fn params(_spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        crate::study::resolve::plain_params(settings, Self::FAMILY)
    }

    /// Files the job reads (their content is hashed: a changed file reruns the job).
    fn data_files(_spec: &Self::Spec) -> Vec<&Path> {
        Vec::new()
    }

    /// The job on its progress line.
    fn label(spec: &Self::Spec) -> String;

    /// Units of work of one job, for the progress bar (e.g. iterations).
    fn work(spec: &Self::Spec) -> u64;

    /// Run one job. Errors become the job's `error`; the other jobs go on.
    fn run(job: &Job, spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String>;

    /// The job's rows of the result tables, the jobs row first.
    fn tables(job: &Job, output: &Self::Output, wall_seconds: f64) -> PolarsResult<NamedTables>;

    /// The family's report figures, from the results folder (each family reads its own tables
    /// and returns nothing when they are absent).
    fn figures(
        _context: &Context<'_>,
        _results_dir: &Path,
        _notes: &mut Vec<String>,
    ) -> Result<Vec<Figure>, ReportError> {
        Ok(Vec::new())
    }
}

fn extended(key: &str, detail: &str) -> String {
    if detail.is_empty() {
        key.to_string()
    } else {
        format!("{key};{detail}")
    }
}

/// Declares the families: `Variant = "word" => module::Type`, one line each. Generates the
/// [`Family`] names, the [`FamilySpec`] of a job and the dispatch the shared stages call.
macro_rules! study_families {
    ($( $(#[$doc:meta])* $variant:ident = $word:literal => $ty:ty ),+ $(,)?) => {
        crate::closed_names! {
            /// The study families (`model.family`).
            pub enum Family {
                $( $(#[$doc])* $variant = $word ),+
            }
        }

        /// A job's resolved settings, by family.
        #[derive(Debug, Clone, PartialEq)]
        pub enum FamilySpec {
            $( $(#[$doc])* $variant(<$ty as StudyFamily>::Spec) ),+
        }

        impl FamilySpec {
            /// The family of the spec.
            pub fn family(&self) -> Family {
                match self {
                    $(FamilySpec::$variant(_) => Family::$variant),+
                }
            }

            /// The point's parameters (see [`StudyFamily::params`]).
            pub fn params(&self, settings: &Settings) -> Vec<(Key, ParamValue)> {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::params(spec, settings)),+
                }
            }

            /// Files the job reads.
            pub fn data_files(&self) -> Vec<&Path> {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::data_files(spec)),+
                }
            }

            /// The job on its progress line.
            pub fn label(&self) -> String {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::label(spec)),+
                }
            }

            /// Units of work for the progress bar.
            pub fn work(&self) -> u64 {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::work(spec)),+
                }
            }
        }

        impl Family {
            /// Resolve one sweep point of this family.
            pub fn resolve(
                self,
                settings: &Settings,
                resolver: &mut Resolver<'_>,
            ) -> Result<FamilySpec, StudyError> {
                match self {
                    $(Family::$variant => {
                        <$ty as StudyFamily>::resolve(settings, resolver).map(FamilySpec::$variant)
                    }),+
                }
            }
        }

        /// Run `job` and build its tables; `Err` carries the job's error message. The wall time
        /// (measured around the computation) goes into the jobs row.
        pub fn run_job_tables(
            job: &Job,
            context: &RunContext<'_>,
            guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
        ) -> (Result<NamedTables, String>, f64) {
            match &job.spec {
                $(FamilySpec::$variant(spec) => run_and_tabulate::<$ty>(job, spec, context, guard)),+
            }
        }

        /// Every family's report figures.
        pub fn figures(
            context: &Context<'_>,
            results_dir: &Path,
            notes: &mut Vec<String>,
        ) -> Result<Vec<Figure>, ReportError> {
            let mut figures = Vec::new();
            $(figures.extend(<$ty as StudyFamily>::figures(context, results_dir, notes)?);)+
            Ok(figures)
        }
    };
}

/// Run one job of family `F` under `guard` (which catches panics), time it, and build its
/// tables.
fn run_and_tabulate<F: StudyFamily>(
    job: &Job,
    spec: &F::Spec,
    context: &RunContext<'_>,
    guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
) -> (Result<NamedTables, String>, f64) {
    let started = std::time::Instant::now();
    let mut output = None;
    let outcome = guard(&mut || {
        output = Some(F::run(job, spec, context)?);
        Ok(())
    });
    let wall_seconds = started.elapsed().as_secs_f64();
    let tables = outcome.and_then(|()| {
        let output = output.take().ok_or("the job produced no output")?;
        F::tables(job, &output, wall_seconds).map_err(|e| format!("building its tables: {e}"))
    });
    (tables, wall_seconds)
}

study_families! {
    /// A latent Gaussian field on a grid with a gaussian, probit or poisson likelihood.
    LatentField = "latent-field" => latent_field::LatentField,
    /// A multivariate normal sampled by Gibbs and random-walk MH (the notes' toy target).
    Gaussian = "gaussian" => gaussian::GaussianTarget,
    /// A finite Markov chain's stationary distribution by the power method, an eigen solve and
    /// simulation.
    MarkovChain = "markov-chain" => markov_chain::MarkovChain,
    /// PageRank of a directed graph with teleport, by the power method and a random surfer.
    PageRank = "pagerank" => pagerank::PageRank,
    /// A discrete Bayes net: Gibbs over the latent nodes against enumeration.
    BayesNet = "bayes-net" => bayes_net::BayesNet,
    /// Latent Dirichlet allocation by collapsed and uncollapsed Gibbs.
    Lda = "lda" => lda::Lda,
    /// Small areas grouped into connected regions by Markov chains over partitions.
    Partition = "partition" => partition::family::PartitionFamily,
}

crate::closed_names! {
    /// How the Gibbs-target families sample (`sampler.kind`); each family admits its own.
    pub enum Method {
        /// Gibbs sampling, coordinates (nodes) updated in a fixed order each sweep.
        SystematicGibbs = "systematic-gibbs",
        /// Gibbs sampling, d coordinates drawn uniformly at random per sweep.
        RandomGibbs = "random-gibbs",
        /// Random-walk Metropolis-Hastings on all coordinates at once.
        Rwmh = "rwmh",
    }
}

impl FamilySpec {
    /// The latent-field settings (panics for another family: only latent-field code, which the
    /// dispatch above calls with latent-field jobs alone, asks for them).
    #[allow(unreachable_patterns)]
    pub fn latent(&self) -> &latent_field::LatentFieldSpec {
        match self {
            FamilySpec::LatentField(spec) => spec,
            other => panic!("a {} job has no latent-field settings", other.family()),
        }
    }
}

/// `sampler.iterations` and `sampler.burn_in` of a sweep-based family, checked to keep at least
/// four sweeps (the fewest its autocorrelation and ESS are computed from).
pub(crate) fn iterations_and_burn_in(
    settings: &Settings,
    resolver: &Resolver<'_>,
) -> Result<(u64, u64), StudyError> {
    use crate::study::keys::{SAMPLER_BURN_IN, SAMPLER_ITERATIONS};
    let iterations = settings.int(SAMPLER_ITERATIONS) as u64;
    let burn_in = settings.int(SAMPLER_BURN_IN) as u64;
    if burn_in + 4 > iterations {
        return Err(resolver
            .error_at(
                settings,
                &[SAMPLER_BURN_IN, SAMPLER_ITERATIONS],
                crate::study::error::ErrorKind::Conflict,
                format!(
                    "sampler.burn_in = {burn_in} leaves fewer than 4 of {iterations} iterations to keep"
                ),
            )
            .allowed("burn_in <= iterations - 4"));
    }
    Ok((iterations, burn_in))
}

/// A located conflict for the first of `keys` the point gives: keys of another form of the same
/// setting than the one chosen (a generated matrix when one is given inline, the bars corpus
/// when a corpus file is read). `why` names the clash for a key.
pub(crate) fn reject_given(
    settings: &Settings,
    resolver: &Resolver<'_>,
    keys: &[Key],
    why: impl Fn(Key) -> String,
) -> Result<(), StudyError> {
    match keys.iter().find(|&&key| settings.given(key).is_some()) {
        Some(&key) => Err(resolver.error_at(
            settings,
            &[key],
            crate::study::error::ErrorKind::Conflict,
            why(key),
        )),
        None => Ok(()),
    }
}

/// [`crate::study::resolve::plain_params`] with `sampler.kind` the word the family resolved
/// (its own default when the study gave none, not the latent field's).
pub(crate) fn params_with_kind(
    settings: &Settings,
    family: Family,
    kind: &str,
) -> Vec<(Key, ParamValue)> {
    let mut params = crate::study::resolve::plain_params(settings, family);
    set_param(
        &mut params,
        crate::study::keys::SAMPLER_KIND,
        ParamValue::text(kind),
    );
    params
}

/// Sets `key`'s value among `params`.
pub(crate) fn set_param(params: &mut [(Key, ParamValue)], key: Key, value: ParamValue) {
    if let Some(param) = params.iter_mut().find(|(k, _)| *k == key) {
        param.1 = value;
    }
}
