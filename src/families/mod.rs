//! The study families and their registry. A family is what a study is about (`model.family`):
//! the latent Gaussian field of the coursework (the default), or one of the lecture notes' other
//! systems (finite Markov chains, PageRank, Gibbs targets, LDA, region partitions). Each family is
//! one folder here, which owns its keys, its spec, its run, its tables and their columns, its
//! jobs-table metrics and its figures, and implements [`crate::job::StudyFamily`].
//!
//! This file is the registry: the one place that lists the families ([`study_families!`] below,
//! one line each). The generic stages ([`crate::plan`], [`crate::execute`], [`crate::sink`],
//! [`crate::report`]) know the families only through what it derives from that list: the
//! [`Family`] names, a job's [`FamilySpec`], the dispatch to a family's run, tables and figures,
//! every result table ([`tables`], [`table`], [`jobs_table`]) and the metrics the report shows.

pub mod bayes_net;
pub mod common;
pub mod gaussian;
pub mod latent_field;
pub mod lda;
pub mod markov_chain;
pub mod pagerank;
pub mod partition;

use std::path::Path;
use std::sync::LazyLock;

use crate::figures::{Context, Figure, ReportError};
use crate::job::{JobHeader, NamedTables, RunContext, StudyFamily};
use crate::study::resolve::Resolver;
use crate::study::{Key, ParamValue, Settings, StudyError};
use crate::table::{Entry, Table, shared};

pub use common::Method;

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

            /// Run the job `header` of this spec and build its tables; `Err` carries the job's
            /// error message. The wall time (measured around the computation) goes into the
            /// jobs row.
            pub fn run_and_tabulate(
                &self,
                header: &JobHeader,
                context: &RunContext<'_>,
                guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
            ) -> (Result<NamedTables, String>, f64) {
                match self {
                    $(FamilySpec::$variant(spec) => {
                        run_and_tabulate::<$ty>(header, spec, context, guard)
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

            /// The family's metrics the report shows (see [`StudyFamily::METRICS`]).
            pub fn metrics(self) -> &'static crate::figures::ReportMetrics {
                match self {
                    $(Family::$variant => &<$ty as StudyFamily>::METRICS),+
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
    };
}

/// Run one job of family `F` under `guard` (which catches panics), time it, and build its
/// tables.
fn run_and_tabulate<F: StudyFamily>(
    header: &JobHeader,
    spec: &F::Spec,
    context: &RunContext<'_>,
    guard: impl Fn(&mut dyn FnMut() -> Result<(), String>) -> Result<(), String>,
) -> (Result<NamedTables, String>, f64) {
    let started = std::time::Instant::now();
    let mut output = None;
    let outcome = guard(&mut || {
        output = Some(F::run(header, spec, context)?);
        Ok(())
    });
    let wall_seconds = started.elapsed().as_secs_f64();
    let tables = outcome.and_then(|()| {
        let output = output.take().ok_or("the job produced no output")?;
        F::tables(header, spec, &output, wall_seconds)
            .map_err(|e| format!("building its tables: {e}"))
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

/// `jobs.parquet` as readers see it: the shared columns and every family's, each once.
pub fn jobs_table() -> &'static Table {
    static JOBS: LazyLock<Table> = LazyLock::new(|| {
        let mut entries: Vec<Entry> = Vec::new();
        let tables = Family::ALL
            .iter()
            .map(|family| family.jobs_table())
            .chain(std::iter::once(&shared::jobs::TABLE));
        for entry in tables.flat_map(|table| table.entries) {
            if !entries.iter().any(|known| known.name() == entry.name()) {
                entries.push(*entry);
            }
        }
        Table {
            name: shared::jobs::TABLE.name,
            row: shared::jobs::TABLE.row,
            entries: entries.leak(),
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

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static Table> {
    tables().iter().copied().find(|t| t.name == name)
}

/// The metrics the report shows, every family's in registry order, each once.
pub fn metrics() -> crate::figures::Metrics {
    let mut all = crate::figures::Metrics::default();
    for family in Family::ALL {
        all.extend(family.metrics());
    }
    all
}

/// Whether `column` is the column of a study key (and not a metric such as
/// `model_mean_value` that shares a section's prefix).
pub fn is_parameter(column: &str) -> bool {
    Key::all().any(|key| key.column() == column)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            for entry in shared::jobs::TABLE.entries {
                assert!(
                    table.entries.contains(entry),
                    "{family}: the jobs table lacks {}",
                    entry.name()
                );
            }
        }
    }
}
