//! The study families and their registry. A family is what a study is about (`model.family`):
//! the latent Gaussian field of the coursework (the default), or one of the lecture notes' other
//! systems (finite Markov chains, PageRank, Gibbs targets, LDA, region partitions). Each family is
//! one folder here, which owns its keys, its spec, its run, its tables and their columns, its
//! jobs-table metrics and its figures, and implements [`crate::job::StudyFamily`].
//!
//! This file is the registry: the one place that lists the families ([`study_families!`] below,
//! one line each). The generic stages ([`crate::plan`], [`crate::execute`], [`crate::sink`],
//! [`crate::report`], [`crate::compare`]) know the families only through what it derives from
//! that list: the [`Family`] names, a job's [`FamilySpec`], the dispatch to a family's run,
//! tables, figures and page tables, every result table ([`tables`], [`table`], [`jobs_table`]),
//! the metrics the report shows, and where model choice reads PSIS-LOO's results
//! ([`model_choice`]).

pub mod bayes_net;
pub(crate) mod common;
pub mod gaussian;
pub mod latent_field;
pub mod lda;
pub mod markov_chain;
pub(crate) mod model_choice;
pub mod pagerank;
pub mod partition;

use std::path::Path;
use std::sync::LazyLock;

use polars::prelude::DataFrame;

use crate::figures::{Context, Figure, PageTable, ReportColumns, ReportError};
use crate::job::{DataStream, Finished, RunContext, StudyFamily, Tabulated};
use crate::sampler::SamplerKind;
use crate::study::keys::{KeyCatalog, MODEL_FAMILY, RENAMED, SAMPLER_KIND};
use crate::study::{Key, ParamValue, Resolver, Settings, StudyError};
use crate::table::{Entry, Spec, Table, shared};
use lda::Scheme;
use partition::method::PartitionKind;

pub use common::Method;

/// Declares the families: `Variant => module::Type`, one line each, the default family first.
/// Generates the [`Family`] names (each family's [`StudyFamily::NAME`]), the [`FamilySpec`] of a
/// job and the dispatch the shared stages call.
macro_rules! study_families {
    ($( $(#[$doc:meta])* $variant:ident => $ty:ty ),+ $(,)?) => {
        /// The study families (`model.family`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Family {
            $( $(#[$doc])* $variant ),+
        }

        impl Family {
            /// Every family, the default first.
            pub const ALL: &'static [Family] = &[$(Family::$variant),+];
            /// Their words in `model.family`.
            pub const NAMES: &'static [&'static str] = &[$(<$ty as StudyFamily>::NAME),+];

            /// The family's word in `model.family`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::NAME),+
                }
            }

            /// The family written as `word`, if any.
            pub fn from_name(word: &str) -> Option<Family> {
                Family::ALL.iter().copied().find(|family| family.name() == word)
            }

            /// Its keys, in its column order.
            pub fn keys(self) -> &'static [Key] {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::KEYS),+
                }
            }

            /// The random streams of its data.
            pub fn data_streams(self) -> &'static [DataStream] {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::DATA_STREAMS),+
                }
            }

            /// The keys that say what kind of job it is (see [`StudyFamily::HEADLINE`]).
            pub fn headline(self) -> &'static [Key] {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::HEADLINE),+
                }
            }

            /// The defaults it gives shared keys (see [`StudyFamily::default_notes`]).
            pub fn default_notes(self) -> Vec<(Key, String)> {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::default_notes()),+
                }
            }

            /// Whether it runs simulation-based calibration studies.
            pub fn calibrates(self) -> bool {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::CALIBRATES),+
                }
            }
        }

        impl std::fmt::Display for Family {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        /// A job's resolved settings, by family. The latent field's is the largest by far; a
        /// plan holds one per job, so boxing it would save little and cost an allocation a job.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
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

            /// Whether `value` is `key`'s default for this spec (see [`StudyFamily::is_default`]).
            pub fn is_default(&self, key: Key, value: &ParamValue) -> bool {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::is_default(spec, key, value)),+
                }
            }

            /// What a user should hear before the job runs (see [`StudyFamily::cautions`]).
            pub fn cautions(&self) -> Vec<String> {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::cautions(spec)),+
                }
            }

            /// Versions of the algorithms behind the job (see [`StudyFamily::algorithm_versions`]).
            pub fn algorithm_versions(&self) -> Vec<(&'static str, String)> {
                match self {
                    $(FamilySpec::$variant(spec) => <$ty as StudyFamily>::algorithm_versions(spec)),+
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

            /// Run the job `header` of this spec and build its tables; `Err` carries the job's
            /// error message. The wall time (measured around the computation) goes into the
            /// jobs row.
            pub fn run_and_tabulate(
                &self,
                context: &RunContext<'_>,
                guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
            ) -> (Result<Tabulated, String>, f64) {
                match self {
                    $(FamilySpec::$variant(spec) => {
                        run_and_tabulate::<$ty>(spec, context, guard)
                    }),+
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

            /// The family's result tables besides `jobs`, in the order the reference lists them.
            pub fn tables(self) -> &'static [&'static Table] {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::TABLES),+
                }
            }

            /// The family's `jobs.parquet` table: the shared columns and its own.
            pub fn jobs_table(self) -> &'static Table {
                match self {
                    $(Family::$variant => <$ty as StudyFamily>::JOBS),+
                }
            }

            /// What the family's report shows of its jobs table (see [`StudyFamily::REPORT`]).
            pub fn report(self) -> &'static ReportColumns {
                match self {
                    $(Family::$variant => &<$ty as StudyFamily>::REPORT),+
                }
            }
        }

        /// Every family's report figures, in registry order.
        pub fn figures(
            context: &Context<'_>,
            notes: &mut Vec<String>,
        ) -> Result<Vec<Figure>, ReportError> {
            let mut figures = Vec::new();
            $(figures.extend(<$ty as StudyFamily>::figures(context, notes)?);)+
            Ok(figures)
        }

        /// What every family says after a run about the finished jobs of `jobs` (the assembled
        /// jobs table), in registry order (see [`StudyFamily::run_notes`]).
        pub fn run_notes(jobs: &DataFrame) -> Vec<String> {
            let mut notes = Vec::new();
            $(notes.extend(<$ty as StudyFamily>::run_notes(jobs));)+
            notes
        }

        /// Every family's tables on the report page, in registry order.
        pub fn page_tables(
            context: &Context<'_>,
            notes: &mut Vec<String>,
        ) -> Result<Vec<PageTable>, ReportError> {
            let mut tables = Vec::new();
            $(tables.extend(<$ty as StudyFamily>::page_tables(context, notes)?);)+
            Ok(tables)
        }
    };
}

/// Run one job of family `F` under `guard` (which catches panics), time it, and build its
/// tables.
fn run_and_tabulate<F: StudyFamily>(
    spec: &F::Spec,
    context: &RunContext<'_>,
    guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
) -> (Result<Tabulated, String>, f64) {
    let started = std::time::Instant::now();
    let mut output = None;
    let outcome = guard(&mut || {
        output = Some(F::run(spec, context)?);
        Ok(())
    });
    let wall_seconds = started.elapsed().as_secs_f64();
    let tabulated = outcome.and_then(|()| {
        let output = output.take().ok_or("the job produced no output")?;
        let tables = F::tables(Finished {
            job: context.job,
            spec,
            output: &output,
            wall_seconds,
        })
        .map_err(|e| format!("building its tables: {e}"))?;
        let chunked = F::chunked_tables(context.job, spec, output);
        Ok(Tabulated { tables, chunked })
    });
    (tabulated, wall_seconds)
}

study_families! {
    /// A latent Gaussian field on a grid with a gaussian, probit or poisson likelihood.
    LatentField => latent_field::LatentField,
    /// A multivariate normal sampled by Gibbs and random-walk MH (the notes' toy target).
    Gaussian => gaussian::GaussianTarget,
    /// A finite Markov chain's stationary distribution by the power method, an eigen solve and
    /// simulation.
    MarkovChain => markov_chain::MarkovChain,
    /// PageRank of a directed graph with teleport, by the power method and a random surfer.
    PageRank => pagerank::PageRank,
    /// A discrete Bayes net: Gibbs over the latent nodes against enumeration.
    BayesNet => bayes_net::BayesNet,
    /// Latent Dirichlet allocation by collapsed and uncollapsed Gibbs.
    Lda => lda::Lda,
    /// Small areas grouped into connected regions by Markov chains over partitions.
    Partition => partition::family::PartitionFamily,
}

/// Every word of `sampler.kind`: the latent field's kernels, the partition family's chains and
/// baselines, the Gibbs-target families' methods and LDA's schemes (each family parses its own
/// and rejects the others' with a located error).
const SAMPLER_KIND_WORDS: [&str;
    1 + SamplerKind::NAMES.len()
        + PartitionKind::NAMES.len()
        + Method::NAMES.len()
        + Scheme::NAMES.len()] = concat_words(&[
    &[latent_field::spec::AUTO],
    SamplerKind::NAMES,
    PartitionKind::NAMES,
    Method::NAMES,
    Scheme::NAMES,
]);

const fn concat_words<const N: usize>(lists: &[&[&'static str]]) -> [&'static str; N] {
    let mut words = [""; N];
    let (mut list, mut next) = (0, 0);
    while list < lists.len() {
        let mut i = 0;
        while i < lists[list].len() {
            words[next] = lists[list][i];
            next += 1;
            i += 1;
        }
        list += 1;
    }
    words
}

/// Every key a study may give: each family's, the words of `model.family` and `sampler.kind`,
/// and the renamed keys.
pub fn catalog() -> &'static KeyCatalog {
    static CATALOG: LazyLock<KeyCatalog> = LazyLock::new(|| {
        KeyCatalog::new(
            Family::ALL
                .iter()
                .map(|family| (family.name(), family.keys()))
                .collect(),
            vec![
                (MODEL_FAMILY, Family::NAMES),
                (SAMPLER_KIND, &SAMPLER_KIND_WORDS[..]),
            ],
            RENAMED.to_vec(),
            Family::ALL
                .iter()
                .flat_map(|family| {
                    family
                        .default_notes()
                        .into_iter()
                        .map(move |(key, note)| (family.name(), key, note))
                })
                .collect(),
        )
    });
    &CATALOG
}

/// `jobs.parquet` as readers see it: the shared columns and every family's, each once.
pub fn jobs_table() -> &'static Table {
    static JOBS: LazyLock<Table> = LazyLock::new(|| {
        let mut entries: Vec<Entry> = Vec::new();
        let tables = Family::ALL
            .iter()
            .map(|family| family.jobs_table())
            .chain(std::iter::once(&shared::jobs::TABLE));
        for entry in tables.flat_map(|table| table.entries()) {
            if !entries.iter().any(|known| known.name() == entry.name()) {
                entries.push(*entry);
            }
        }
        Table {
            name: shared::jobs::TABLE.name,
            row: shared::jobs::TABLE.row,
            shared: &[],
            own: entries.leak(),
        }
    });
    &JOBS
}

/// Every result table, `jobs` first, then each family's in registry order, each once.
pub fn tables() -> &'static [&'static Table] {
    static TABLES: LazyLock<Vec<&'static Table>> = LazyLock::new(|| {
        let mut tables: Vec<&'static Table> = vec![jobs_table()];
        for table in Family::ALL.iter().flat_map(|family| family.tables()) {
            if !tables.iter().any(|known| known.name == table.name) {
                tables.push(table);
            }
        }
        tables
    });
    &TABLES
}

/// The declaration of `column` in table `table`, whichever family declares it (tables such as
/// `traces` are written by several families, each with its own columns).
pub fn column_spec(table: &str, column: &str) -> Option<Spec> {
    std::iter::once(jobs_table())
        .chain(
            Family::ALL
                .iter()
                .flat_map(|family| family.tables().iter().copied()),
        )
        .filter(|declared| declared.name == table)
        .flat_map(|declared| declared.entries())
        .find_map(|entry| match entry {
            Entry::Column(spec) if spec.name == column => Some(*spec),
            Entry::Column(_) | Entry::Group(_) => None,
        })
}

/// The table named `name`.
pub(crate) fn table(name: &str) -> Option<&'static Table> {
    tables().iter().copied().find(|t| t.name == name)
}

/// What the report shows of the jobs table, every family's in registry order, each once.
pub(crate) fn report_columns() -> &'static ReportColumns {
    static COLUMNS: LazyLock<ReportColumns> =
        LazyLock::new(|| ReportColumns::united(Family::ALL.iter().map(|family| family.report())));
    &COLUMNS
}

/// The headline keys of `families`, each once, in registry order (the default family's first).
pub(crate) fn headline_keys(families: &[Family]) -> Vec<Key> {
    let mut keys = Vec::new();
    for family in Family::ALL.iter().filter(|f| families.contains(f)) {
        for key in family.headline() {
            if !keys.contains(key) {
                keys.push(*key);
            }
        }
    }
    keys
}

/// Whether `column` is the column of a study key (and not a metric such as
/// `model_mean_value` that shares a section's prefix).
pub fn is_parameter(column: &str) -> bool {
    catalog().all().iter().any(|key| key.column() == column)
}

/// The ArviZ InferenceData groups of job `job` of a results folder read through `source`: the
/// latent-field family's (the only one whose posterior is a field of draws); see
/// [`latent_field::export`].
pub(crate) fn inference_data(
    source: &dyn crate::figures::TableSource,
    job: &str,
) -> Result<Vec<crate::inference_data::Group>, crate::inference_data::ExportError> {
    latent_field::export::inference_data(source, job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_holds_every_family_key_once_with_a_doc_and_a_valid_default() {
        let keys = catalog();
        for family in Family::ALL {
            assert_eq!(keys.family_keys(family.name()), Some(family.keys()));
            assert!(family.keys().contains(&MODEL_FAMILY), "{family}");
        }
        for (i, key) in keys.all().iter().enumerate() {
            assert_eq!(keys.position(*key), Some(i));
            assert_eq!(keys.from_dotted(key.dotted()), Some(*key));
            assert_eq!(key.column(), key.dotted().replace('.', "_"));
            assert!(!key.doc().is_empty(), "{key:?} has no documentation");
            if let Some(default) = key.default_value() {
                assert!(
                    keys.rule(*key).admits(&default),
                    "{key:?} default breaks its rule"
                );
            }
            let named_once = keys
                .all()
                .iter()
                .filter(|k| k.dotted() == key.dotted())
                .count();
            assert_eq!(named_once, 1, "{key:?} is declared twice");
        }
        assert_eq!(keys.from_dotted("model.lenght_scale"), None);
        assert_eq!(keys.from_dotted("study.seed"), None);
        assert!(!keys.rule(SAMPLER_KIND).admits(&ParamValue::text("hmc")));
        assert!(keys.rule(SAMPLER_KIND).admits(&ParamValue::text("mala")));
    }

    #[test]
    fn every_table_is_named_once() {
        for table in tables() {
            assert_eq!(super::table(table.name), Some(*table));
        }
    }

    #[test]
    fn every_family_writes_the_shared_jobs_columns_in_its_jobs_table() {
        for family in Family::ALL {
            let table = family.jobs_table();
            for entry in shared::jobs::TABLE.entries() {
                assert!(
                    table.entries().any(|e| e == entry),
                    "{family}: the jobs table lacks {}",
                    entry.name()
                );
            }
        }
    }
}
