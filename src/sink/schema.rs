//! The result tables, declared once: each table's name, what one row is, and its columns with
//! type, nullability, presence and a one-line doc. Writers build rows through [`Rows`], keyed by
//! the typed column constants below (a misspelt or renamed column is a compile error); readers,
//! the report and the tests name columns through the same constants; [`Table::check`] holds a
//! frame to its table's declaration; [`markdown`] prints the README's "Result tables" section.
//!
//! Adding a column is one constant here, one entry in its table's list, and one `set` in the
//! writer; the schema test fails until all three exist. Families of columns named by a pattern
//! (the parameter columns `<section>_<key>`, `sbc_p_<functional>`, `probe_<k>`) are declared as a
//! [`Family`] with a prefix, and their members are named through [`Family::member`].
//!
//! Nulls, never NaN: [`Rows`] turns a non-finite float into a null, and a column declared
//! without nulls that receives one is a [`SchemaError`].

use std::marker::PhantomData;

use polars::prelude::{Column as PolarsColumn, DataFrame, DataType, NamedFrom, Series};
use thiserror::Error;

use crate::study::keys::Key;

/// The value type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Float,
    Bool,
    /// The type of the study key the column comes from (integer, float, boolean or text).
    Parameter,
}

impl Kind {
    /// Whether a Parquet column of `dtype` holds values of this kind (`Null`: all values null).
    pub fn admits(self, dtype: &DataType) -> bool {
        match self {
            Kind::Text => dtype.is_string(),
            Kind::Int => *dtype == DataType::Int64,
            Kind::Float => *dtype == DataType::Float64,
            Kind::Bool => dtype.is_bool(),
            Kind::Parameter => {
                matches!(dtype, DataType::Int64 | DataType::Float64)
                    || dtype.is_string()
                    || dtype.is_bool()
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Int => "integer",
            Kind::Float => "float",
            Kind::Bool => "boolean",
            Kind::Parameter => "the key's",
        }
    }
}

/// Whether every part of a table carries a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Every writer of the table writes it.
    Always,
    /// Written only where it applies (the doc says when); absent or null elsewhere.
    Optional,
}

/// One declared column, untyped: what [`Table::check`] and [`markdown`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    pub presence: Presence,
    pub doc: &'static str,
}

/// A Rust type a column can hold.
pub trait Value: Sized + 'static {
    const KIND: Kind;
    /// A polars series of these values; non-finite floats become nulls.
    fn series(name: &str, values: Vec<Option<Self>>) -> Series;
}

impl Value for f64 {
    const KIND: Kind = Kind::Float;
    fn series(name: &str, values: Vec<Option<f64>>) -> Series {
        let finite: Vec<Option<f64>> = values
            .into_iter()
            .map(|v| v.filter(|x| x.is_finite()))
            .collect();
        Series::new(name.into(), finite)
    }
}

impl Value for i64 {
    const KIND: Kind = Kind::Int;
    fn series(name: &str, values: Vec<Option<i64>>) -> Series {
        Series::new(name.into(), values)
    }
}

impl Value for bool {
    const KIND: Kind = Kind::Bool;
    fn series(name: &str, values: Vec<Option<bool>>) -> Series {
        Series::new(name.into(), values)
    }
}

impl Value for String {
    const KIND: Kind = Kind::Text;
    fn series(name: &str, values: Vec<Option<String>>) -> Series {
        Series::new(name.into(), values)
    }
}

/// A declared column holding values of type `T`.
#[derive(Debug, PartialEq, Eq)]
pub struct Col<T> {
    pub spec: Spec,
    value: PhantomData<fn() -> T>,
}

impl<T> Clone for Col<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Col<T> {}

impl<T: Value> Col<T> {
    const fn new(
        name: &'static str,
        nullable: bool,
        presence: Presence,
        doc: &'static str,
    ) -> Self {
        Col {
            spec: Spec {
                name,
                kind: T::KIND,
                nullable,
                presence,
                doc,
            },
            value: PhantomData,
        }
    }

    /// Written by every writer of its tables, never null.
    pub const fn required(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, false, Presence::Always, doc)
    }

    /// Written by every writer of its tables, null where it does not apply.
    pub const fn nullable(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, true, Presence::Always, doc)
    }

    /// Written only where it applies (the doc says when).
    pub const fn optional(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, true, Presence::Optional, doc)
    }

    pub const fn name(&self) -> &'static str {
        self.spec.name
    }
}

/// Columns named by a pattern: `prefix` followed by a member name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Every prefix a member may start with (the parameter columns have one per study section).
    pub prefixes: &'static [&'static str],
    /// The pattern as shown to readers, e.g. `sbc_p_<functional>`.
    pub pattern: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    pub presence: Presence,
    pub doc: &'static str,
}

impl Family {
    /// The column of `member` under the family's first prefix (`probe_2`, `sbc_p_field_mean`).
    pub fn member(&self, member: impl std::fmt::Display) -> String {
        format!("{}{member}", self.prefixes[0])
    }

    /// Whether `column` belongs to the family.
    pub fn contains(&self, column: &str) -> bool {
        self.prefixes
            .iter()
            .any(|p| column.len() > p.len() && column.starts_with(p))
    }

    /// The member name of `column` (what follows the prefix), if it belongs to the family.
    pub fn member_of<'a>(&self, column: &'a str) -> Option<&'a str> {
        self.prefixes
            .iter()
            .find_map(|p| column.strip_prefix(p))
            .filter(|m| !m.is_empty())
    }
}

/// A declared column or family, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Column(Spec),
    Family(Family),
}

/// One result table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// The file is `<name>.parquet`.
    pub name: &'static str,
    /// What one row is.
    pub row: &'static str,
    pub entries: &'static [Entry],
}

/// A frame that does not match its table's declaration, or rows built against it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchemaError {
    #[error("{table}: column {column:?} is not declared in the schema")]
    Undeclared { table: String, column: String },
    #[error("{table}: column {column:?} is missing")]
    Missing { table: String, column: String },
    #[error("{table}: column {column:?} is given twice")]
    Duplicate { table: String, column: String },
    #[error("{table}: column {column:?} holds {found}, declared {expected}")]
    WrongType {
        table: String,
        column: String,
        expected: &'static str,
        found: String,
    },
    #[error("{table}: column {column:?} holds {nulls} nulls but is declared without nulls")]
    Null {
        table: String,
        column: String,
        nulls: usize,
    },
    #[error("{table}: column {column:?} has {found} values for {expected} rows")]
    Length {
        table: String,
        column: String,
        expected: usize,
        found: usize,
    },
}

impl Table {
    /// The file name of the assembled table.
    pub fn file_name(&self) -> String {
        format!("{}.parquet", self.name)
    }

    /// The position in [`Table::entries`] of the entry `column` falls under.
    pub fn position(&self, column: &str) -> Option<usize> {
        let declared = self.entries.iter().position(|e| match e {
            Entry::Column(spec) => spec.name == column,
            Entry::Family(_) => false,
        });
        declared.or_else(|| {
            self.entries.iter().position(|e| match e {
                Entry::Family(family) => family.contains(column),
                Entry::Column(_) => false,
            })
        })
    }

    fn error_context(&self, column: &str) -> (String, String) {
        (self.name.to_string(), column.to_string())
    }

    /// Checks `frame` against the declaration: every column declared (or a family member) and of
    /// its declared type, no nulls where none are allowed, every always-present column there.
    /// Returns every mismatch, not only the first.
    pub fn check(&self, frame: &DataFrame) -> Vec<SchemaError> {
        let mut errors = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for column in frame.columns() {
            let name = column.name().as_str();
            let (table, column_name) = self.error_context(name);
            if seen.contains(&name) {
                errors.push(SchemaError::Duplicate {
                    table,
                    column: column_name,
                });
                continue;
            }
            seen.push(name);
            let Some(position) = self.position(name) else {
                errors.push(SchemaError::Undeclared {
                    table,
                    column: column_name,
                });
                continue;
            };
            let (kind, nullable) = match self.entries[position] {
                Entry::Column(spec) => (spec.kind, spec.nullable),
                Entry::Family(family) => (family.kind, family.nullable),
            };
            let dtype = column.dtype();
            let all_null = *dtype == DataType::Null && nullable;
            if !kind.admits(dtype) && !all_null {
                errors.push(SchemaError::WrongType {
                    table,
                    column: column_name,
                    expected: kind.name(),
                    found: dtype.to_string(),
                });
            } else if !nullable && column.null_count() > 0 {
                errors.push(SchemaError::Null {
                    table,
                    column: column_name,
                    nulls: column.null_count(),
                });
            }
        }
        for entry in self.entries {
            let missing = match entry {
                Entry::Column(spec) if spec.presence == Presence::Always => {
                    (!seen.contains(&spec.name)).then_some(spec.name)
                }
                Entry::Family(family) if family.presence == Presence::Always => {
                    (!seen.iter().any(|c| family.contains(c))).then_some(family.pattern)
                }
                _ => None,
            };
            if let Some(column) = missing {
                let (table, column) = self.error_context(column);
                errors.push(SchemaError::Missing { table, column });
            }
        }
        errors
    }
}

/// Lets code that returns polars errors use `?` on rows built here (the executor's table
/// builders); the schema error's text is kept.
impl From<SchemaError> for polars::prelude::PolarsError {
    fn from(error: SchemaError) -> Self {
        polars::prelude::PolarsError::SchemaMismatch(error.to_string().into())
    }
}

/// The rows of one table being built: columns keyed by their declarations, put in table order
/// and checked against the table by [`Rows::finish`].
#[must_use]
pub struct Rows {
    table: &'static Table,
    height: usize,
    columns: Vec<(usize, PolarsColumn)>,
    error: Option<SchemaError>,
}

impl Rows {
    /// Rows of `table`, `height` of them.
    pub fn new(table: &'static Table, height: usize) -> Self {
        Rows {
            table,
            height,
            columns: Vec::new(),
            error: None,
        }
    }

    /// Sets a declared column, one value per row (`None` for null).
    pub fn set<T: Value, V: Into<Option<T>>>(
        self,
        column: Col<T>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.push(column.spec.name, values)
    }

    /// Sets a declared column to the same value on every row.
    pub fn fill<T: Value + Clone>(self, column: Col<T>, value: impl Into<Option<T>>) -> Self {
        let height = self.height;
        let value = value.into();
        self.set(column, std::iter::repeat_n(value, height))
    }

    /// Sets the column of a family member (`family.member(name)`), one value per row.
    pub fn set_member<T: Value, V: Into<Option<T>>>(
        self,
        family: &Family,
        column: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        debug_assert!(
            family.contains(column),
            "{column} is not a {}",
            family.pattern
        );
        self.push(column, values)
    }

    fn push<T: Value, V: Into<Option<T>>>(
        mut self,
        name: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        let values: Vec<Option<T>> = values.into_iter().map(Into::into).collect();
        let (table, column) = self.table.error_context(name);
        let error = if values.len() != self.height {
            Some(SchemaError::Length {
                table,
                column,
                expected: self.height,
                found: values.len(),
            })
        } else if self.columns.iter().any(|(_, c)| c.name() == name) {
            Some(SchemaError::Duplicate { table, column })
        } else {
            match self.table.position(name) {
                Some(position) => {
                    self.columns
                        .push((position, PolarsColumn::from(T::series(name, values))));
                    None
                }
                None => Some(SchemaError::Undeclared { table, column }),
            }
        };
        if self.error.is_none() {
            self.error = error;
        }
        self
    }

    /// The frame, columns in table order, or the first way it breaks the declaration.
    pub fn finish(mut self) -> Result<DataFrame, SchemaError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        // Stable: members of one family keep the order they were set in.
        self.columns.sort_by_key(|(position, _)| *position);
        let columns = self.columns.into_iter().map(|(_, c)| c).collect();
        let frame = DataFrame::new(self.height, columns).expect("columns of equal length");
        match self.table.check(&frame).into_iter().next() {
            Some(error) => Err(error),
            None => Ok(frame),
        }
    }
}

/// The name of a column, for code that reads tables: a declared column, a parameter column or a
/// name found in the data (a swept parameter, a family member). Not implemented for `&str`, so a
/// literal column name does not compile where a declared one is expected.
pub trait ColumnName {
    fn column_name(&self) -> &str;
}

impl<T> ColumnName for Col<T> {
    fn column_name(&self) -> &str {
        self.spec.name
    }
}

impl ColumnName for String {
    fn column_name(&self) -> &str {
        self
    }
}

impl<C: ColumnName + ?Sized> ColumnName for &C {
    fn column_name(&self) -> &str {
        (**self).column_name()
    }
}

/// A study key names its parameter column (`model.grid` -> `model_grid`): the keys, declared
/// in [`crate::study::keys`], are the members of [`jobs::PARAMETERS`].
impl ColumnName for Key {
    fn column_name(&self) -> &str {
        self.column()
    }
}

/// Columns several tables share.
pub const JOB_ID: Col<String> = Col::required(
    "job_id",
    "the job: 12 hex digits of BLAKE3 over the study seed and the job's parameters",
);
pub const CHAIN: Col<i64> = Col::required("chain", "chain index, 0 upwards");
pub const ITERATION: Col<i64> = Col::required(
    "iteration",
    "traces: the state's iteration, 1-based, burn-in included; convergence: kept iterations; partition traces: iterations done, 0 = the start",
);
pub const ACCEPTANCE_RATE: Col<f64> = Col::optional(
    "acceptance_rate",
    "share of accepted proposals over all iterations, burn-in included (jobs: over all chains)",
);

pub const STEP_SIZE: Col<f64> = Col::optional(
    "step_size",
    "the step size after adaptation, for kinds with one (jobs: mean over chains)",
);

/// `jobs.parquet`: one row per job.
pub mod jobs {
    use super::{Col, Entry, Family, Kind, Presence, Table};
    use crate::study::keys::Key;
    /// The study keys the code names, as columns of this table.
    pub use crate::study::keys::{
        DATA_HOLDOUT, DATA_LENGTH_SCALE, DATA_NOISE_SD, DATA_SOURCE, DATA_SUBSAMPLE, MODEL_GRID,
        MODEL_KERNEL, MODEL_LENGTH_SCALE, MODEL_LIKELIHOOD, MODEL_OFFSET, MODEL_VARIANCE,
        SAMPLER_BETA, SAMPLER_BURN_IN, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND,
        SAMPLER_THIN,
    };

    pub const REPLICATE: Col<i64> =
        Col::required("replicate", "replicate of the sweep point, 0 upwards");
    pub const PARAMETERS: Family = Family {
        prefixes: &["model_", "data_", "sampler_", "output_"],
        pattern: "<section>_<key>",
        kind: Kind::Parameter,
        nullable: true,
        presence: Presence::Always,
        doc: "every study key as run (`model_grid`, `sampler_beta`, ...; see the keys above); null where it does not apply",
    };
    pub const STATUS: Col<String> = Col::required("status", "`ok`, or `failed` (see `error`)");
    pub const ERROR: Col<String> = Col::nullable("error", "why the job failed; null when ok");
    /// Between two warnings of one `warnings` cell.
    pub const WARNING_SEPARATOR: &str = "; ";
    pub const WARNINGS: Col<String> = Col::required(
        "warnings",
        "why a finished job's answer may not be trusted (R-hat, ESS, acceptance, drift), `; `-separated; empty when none",
    );
    pub const WALL_SECONDS: Col<f64> = Col::required(
        "wall_seconds",
        "wall time of the whole job, writing excluded",
    );
    pub const MAE: Col<f64> = Col::optional(
        "mae",
        "mean absolute error of the posterior mean against the truth (simulated data)",
    );
    pub const SETUP_SECONDS: Col<f64> =
        Col::optional("setup_seconds", "time to build the prior and the data");
    pub const SAMPLE_SECONDS: Col<f64> =
        Col::optional("sample_seconds", "time spent in the chains");
    pub const EXACT_SECONDS: Col<f64> = Col::optional(
        "exact_seconds",
        "time to compute the exact posterior (gaussian)",
    );
    pub const ITERATIONS_PER_SECOND: Col<f64> = Col::optional(
        "iterations_per_second",
        "chain iterations (all chains) per second of sampling",
    );
    pub const CPU_SECONDS: Col<f64> = Col::optional(
        "cpu_seconds",
        "CPU time of setup and sampling (all threads of the job)",
    );
    pub const LOGLIK_EVALS_PER_ITERATION: Col<f64> = Col::optional(
        "loglik_evals_per_iteration",
        "log-likelihood evaluations per iteration, over all chains",
    );
    pub const GRADIENT_EVALS_PER_ITERATION: Col<f64> = Col::optional(
        "gradient_evals_per_iteration",
        "gradient evaluations per iteration, over all chains",
    );
    pub const JITTER: Col<f64> = Col::optional(
        "jitter",
        "diagonal jitter added to the axis kernel to factor it (0 when none was needed)",
    );
    pub const LATENT_DIM: Col<i64> = Col::optional(
        "latent_dim",
        "whitened coordinates of a state: the grid's cells (Kronecker prior) or the padded torus's points (circulant embedding)",
    );
    pub const TORUS_X: Col<i64> = Col::optional(
        "torus_x",
        "points of the circulant embedding's padded torus along x; null for a Kronecker prior",
    );
    pub const TORUS_Y: Col<i64> = Col::optional(
        "torus_y",
        "points of the circulant embedding's padded torus along y; null for a Kronecker prior",
    );
    pub const CLIPPED_EIGENVALUE: Col<f64> = Col::optional(
        "clipped_eigenvalue",
        "the most negative eigenvalue of the circulant embedding, clipped to 0 (0 when none was negative); null for a Kronecker prior",
    );
    pub const MODEL_MEAN_VALUE: Col<f64> = Col::optional(
        "model_mean_value",
        "the field's constant mean used: `model.mean` resolved against the data",
    );
    pub const OBSERVED_CELLS: Col<i64> =
        Col::optional("observed_cells", "cells whose observation the model sees");
    pub const EXACT_RMSE: Col<f64> = Col::optional(
        "exact_rmse",
        "RMS over cells of posterior mean minus exact posterior mean (gaussian)",
    );
    pub const PREDICTION_ERROR: Col<f64> = Col::optional(
        "prediction_error",
        "share of cells whose predicted label differs from the truth's sign (probit)",
    );
    pub const COUNT_MAE: Col<f64> = Col::optional(
        "count_mae",
        "mean absolute error of the expected counts: against exp(truth + offset) on every cell (simulated), else against the held-out counts (poisson)",
    );
    pub const BASELINE_COUNT_MAE: Col<f64> = Col::optional(
        "baseline_count_mae",
        "the same for a constant rate equal to the mean observed count (poisson)",
    );
    pub const ESS_BULK: Col<f64> = Col::optional(
        "ess_bulk",
        "bulk effective sample size of the log-likelihood across chains",
    );
    pub const ESS_TAIL: Col<f64> = Col::optional(
        "ess_tail",
        "tail effective sample size of the log-likelihood across chains",
    );
    pub const RHAT: Col<f64> = Col::optional(
        "rhat",
        "rank-normalised split R-hat of the log-likelihood (two or more chains)",
    );
    pub const ESS_BULK_PER_SECOND: Col<f64> =
        Col::optional("ess_bulk_per_second", "`ess_bulk` per second of sampling");
    pub const CELL_ESS_MIN: Col<f64> =
        Col::optional("cell_ess_min", "smallest bulk ESS over the probe cells");
    pub const CELL_ESS_MEDIAN: Col<f64> =
        Col::optional("cell_ess_median", "median bulk ESS over the probe cells");
    pub const MCSE_MEAN_MAX: Col<f64> = Col::optional(
        "mcse_mean_max",
        "largest Monte Carlo standard error of a cell's posterior mean",
    );
    pub const CELL_ESS_BULK_MIN: Col<f64> =
        Col::optional("cell_ess_bulk_min", "smallest bulk ESS over every cell");
    pub const CELL_ESS_TAIL_MIN: Col<f64> =
        Col::optional("cell_ess_tail_min", "smallest tail ESS over every cell");
    pub const CELL_RHAT_MAX: Col<f64> = Col::optional(
        "cell_rhat_max",
        "largest R-hat over every cell (two or more chains)",
    );
    pub const CELL_ESS_BULK_MIN_PER_SECOND: Col<f64> = Col::optional(
        "cell_ess_bulk_min_per_second",
        "`cell_ess_bulk_min` per CPU second (`cpu_seconds`)",
    );
    pub const CELL_DRAWS_PER_CHAIN: Col<i64> = Col::optional(
        "cell_draws_per_chain",
        "stored draws per chain the cell diagnostics were computed from",
    );
    pub const CELL_DRAWS_THIN: Col<i64> = Col::optional(
        "cell_draws_thin",
        "every how many kept iterations a stored draw was taken",
    );
    pub const RANK: Col<i64> = Col::optional(
        "rank",
        "eigenpairs of the misfit Hessian a low-rank Laplace approximation kept (gpcn, \
         laplace_hmc; laplace when its sds are low-rank)",
    );
    pub const NEWTON_ITERATIONS: Col<i64> = Col::optional(
        "newton_iterations",
        "Newton iterations of the Laplace fit (laplace, gpcn, laplace_hmc; inla: the fit at the \
         mode of the hyperparameters)",
    );
    pub const LAPLACE_FITS: Col<i64> = Col::optional(
        "laplace_fits",
        "Laplace fits an INLA job made in all: mode search, Hessian and grid (kind inla)",
    );
    pub const LOG_EVIDENCE: Col<f64> = Col::optional(
        "log_evidence",
        "log p(data | model): by Monte Carlo over prior draws (with `model.evidence_draws`), the \
         Laplace approximation's (kind laplace), or INLA's: log sum_k exp(log p~_k) + d log \
         delta_z - log det(H) / 2 over its grid (kind inla)",
    );
    pub const LOG_EVIDENCE_SE: Col<f64> =
        Col::optional("log_evidence_se", "standard error of `log_evidence`");
    pub const EVIDENCE_EFFECTIVE_DRAWS: Col<f64> = Col::optional(
        "evidence_effective_draws",
        "effective number of prior draws behind `log_evidence`",
    );
    pub const SBC_REPLICATIONS: Col<i64> =
        Col::optional("sbc_replications", "SBC replications run (SBC studies)");
    pub const SBC_DRAWS: Col<i64> = Col::optional(
        "sbc_draws",
        "L: posterior draws each truth is ranked among (SBC studies)",
    );
    pub const SBC_P_MIN: Col<f64> =
        Col::optional("sbc_p_min", "smallest `sbc_p_<functional>` (SBC studies)");
    pub const SBC_P: Family = Family {
        prefixes: &["sbc_p_"],
        pattern: "sbc_p_<functional>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "chi-square p-value that the functional's ranks are uniform (SBC studies)",
    };

    pub const F_START: Col<f64> = Col::optional(
        "f_start",
        "F(Z) of the start partition: the administrative pieces (partition chains)",
    );
    pub const F_FINAL: Col<f64> = Col::optional(
        "f_final",
        "F(Z) of the final partition (partition family; baselines: of the partition)",
    );
    pub const F_BEST: Col<f64> = Col::optional(
        "f_best",
        "smallest F(Z) the chain visited (partition family; baselines: as `f_final`)",
    );
    pub const REGION_MAE_FINAL: Col<f64> = Col::optional(
        "region_mae_final",
        "mean over regions of |Y_j - f(X_j)|, task model fitted on all regions, final partition (partition family)",
    );
    pub const REGION_MAE_BEST: Col<f64> = Col::optional(
        "region_mae_best",
        "the same for the partition of smallest F (partition family)",
    );
    pub const CV_REGION_MAE_FINAL: Col<f64> = Col::optional(
        "cv_region_mae_final",
        "region MAE cross-validated over regions (each fold predicted by the model fitted on the others), final partition (partition family)",
    );
    pub const CV_REGION_MAE_BEST: Col<f64> = Col::optional(
        "cv_region_mae_best",
        "the same for the partition of smallest F (partition family)",
    );
    pub const REGIONS: Col<i64> =
        Col::optional("regions", "regions of the partitions (partition family)");
    pub const DISCONNECTED_REGIONS: Col<i64> = Col::optional(
        "disconnected_regions",
        "regions of the best partition in more than one connected piece: 0 for chains; k-means and spectral clusters may have some (partition family)",
    );
    pub const MOVES_PROPOSED: Col<i64> =
        Col::optional("moves_proposed", "flips proposed (partition chains)");
    pub const MOVES_INVALID: Col<i64> = Col::optional(
        "moves_invalid",
        "proposed flips rejected because they would empty or split their region (partition chains)",
    );
    pub const MOVES_ACCEPTED: Col<i64> =
        Col::optional("moves_accepted", "flips accepted (partition chains)");
    pub const REVERSIBLE: Col<bool> = Col::optional(
        "reversible",
        "whether the chain targets exp(-F/T) exactly (flip, softmax-flip); learned-flip is a search heuristic (partition chains)",
    );

    pub const TABLE: Table = Table {
        name: "jobs",
        row: "job",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(REPLICATE.spec),
            Entry::Family(PARAMETERS),
            Entry::Column(STATUS.spec),
            Entry::Column(ERROR.spec),
            Entry::Column(WARNINGS.spec),
            Entry::Column(super::ACCEPTANCE_RATE.spec),
            Entry::Column(MAE.spec),
            Entry::Column(WALL_SECONDS.spec),
            Entry::Column(SETUP_SECONDS.spec),
            Entry::Column(SAMPLE_SECONDS.spec),
            Entry::Column(EXACT_SECONDS.spec),
            Entry::Column(ITERATIONS_PER_SECOND.spec),
            Entry::Column(CPU_SECONDS.spec),
            Entry::Column(super::STEP_SIZE.spec),
            Entry::Column(LOGLIK_EVALS_PER_ITERATION.spec),
            Entry::Column(GRADIENT_EVALS_PER_ITERATION.spec),
            Entry::Column(JITTER.spec),
            Entry::Column(LATENT_DIM.spec),
            Entry::Column(TORUS_X.spec),
            Entry::Column(TORUS_Y.spec),
            Entry::Column(CLIPPED_EIGENVALUE.spec),
            Entry::Column(MODEL_MEAN_VALUE.spec),
            Entry::Column(OBSERVED_CELLS.spec),
            Entry::Column(EXACT_RMSE.spec),
            Entry::Column(PREDICTION_ERROR.spec),
            Entry::Column(COUNT_MAE.spec),
            Entry::Column(BASELINE_COUNT_MAE.spec),
            Entry::Column(HELDOUT_LPD.spec),
            Entry::Column(ESS_BULK.spec),
            Entry::Column(ESS_TAIL.spec),
            Entry::Column(RHAT.spec),
            Entry::Column(ESS_BULK_PER_SECOND.spec),
            Entry::Column(CELL_ESS_MIN.spec),
            Entry::Column(CELL_ESS_MEDIAN.spec),
            Entry::Column(MCSE_MEAN_MAX.spec),
            Entry::Column(CELL_ESS_BULK_MIN.spec),
            Entry::Column(CELL_ESS_TAIL_MIN.spec),
            Entry::Column(CELL_RHAT_MAX.spec),
            Entry::Column(CELL_ESS_BULK_MIN_PER_SECOND.spec),
            Entry::Column(CELL_DRAWS_PER_CHAIN.spec),
            Entry::Column(CELL_DRAWS_THIN.spec),
            Entry::Column(RANK.spec),
            Entry::Column(NEWTON_ITERATIONS.spec),
            Entry::Column(LAPLACE_FITS.spec),
            Entry::Column(LOG_EVIDENCE.spec),
            Entry::Column(LOG_EVIDENCE_SE.spec),
            Entry::Column(EVIDENCE_EFFECTIVE_DRAWS.spec),
            Entry::Column(SBC_REPLICATIONS.spec),
            Entry::Column(SBC_DRAWS.spec),
            Entry::Column(SBC_P_MIN.spec),
            Entry::Family(SBC_P),
            Entry::Column(ESS_PER_ITERATION.spec),
            Entry::Column(EXACT_ESS_PER_ITERATION.spec),
            Entry::Column(AUTOCORRELATION_LAG1.spec),
            Entry::Column(MOMENT_MAX_Z.spec),
            Entry::Column(LAMBDA2.spec),
            Entry::Column(POWER_ITERATIONS.spec),
            Entry::Column(POWER_EIGEN_MAX_DIFF.spec),
            Entry::Column(SIMULATION_TV.spec),
            Entry::Column(NODES.spec),
            Entry::Column(EDGES.spec),
            Entry::Column(DANGLING_NODES.spec),
            Entry::Column(MARGINAL_MAX_Z.spec),
            Entry::Column(TOPIC_TV_MAX.spec),
            Entry::Column(HELDOUT_PERPLEXITY.spec),
            Entry::Column(F_START.spec),
            Entry::Column(F_FINAL.spec),
            Entry::Column(F_BEST.spec),
            Entry::Column(REGION_MAE_FINAL.spec),
            Entry::Column(REGION_MAE_BEST.spec),
            Entry::Column(CV_REGION_MAE_FINAL.spec),
            Entry::Column(CV_REGION_MAE_BEST.spec),
            Entry::Column(REGIONS.spec),
            Entry::Column(DISCONNECTED_REGIONS.spec),
            Entry::Column(MOVES_PROPOSED.spec),
            Entry::Column(MOVES_INVALID.spec),
            Entry::Column(MOVES_ACCEPTED.spec),
            Entry::Column(REVERSIBLE.spec),
            Entry::Family(HYPER),
            Entry::Column(HYPER_ACCEPTANCE_RATE.spec),
        ],
    };

    pub const HELDOUT_LPD: Col<f64> = Col::optional(
        "heldout_lpd",
        "mean over held-out cells of the log posterior predictive density log p(y_i | data) (csv data, probit and poisson; chains: over the stored draws; approximations: Gauss-Hermite over each cell's gaussian marginal)",
    );

    /// The statistics of every inferred hyperparameter, in column order: `hyper_<name>_<stat>`.
    pub const HYPER_STATISTICS: [&str; 6] = ["mean", "sd", "q05", "q95", "ess_bulk", "rhat"];
    pub const HYPER: Family = Family {
        prefixes: &["hyper_"],
        pattern: "hyper_<name>_<statistic>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "each inferred hyperparameter (`length_scale`, `variance`, `mean`) over the kept traced draws of all chains: posterior `mean`, `sd`, 5 % and 95 % quantiles `q05`, `q95`, bulk ESS `ess_bulk` and R-hat `rhat` (`hyper_length_scale_mean`, ...); for kind inla from the weighted grid (quantiles from its smoothed marginal, see docs/hyperparameters.md), ESS and R-hat null",
    };
    pub const HYPER_ACCEPTANCE_RATE: Col<f64> = Col::optional(
        "hyper_acceptance_rate",
        "share of kept hyperparameter updates that moved them, over all chains (sampler.hyper)",
    );

    pub const ESS_PER_ITERATION: Col<f64> = Col::optional(
        "ess_per_iteration",
        "bulk ESS per kept iteration over all chains: gaussian of x1, bayes-net the smallest over latent nodes' indicators",
    );
    pub const EXACT_ESS_PER_ITERATION: Col<f64> = Col::optional(
        "exact_ess_per_iteration",
        "the exact ESS per draw where a closed form exists: systematic-scan Gibbs on a bivariate normal, (1 - rho^2) / (1 + rho^2)",
    );
    pub const MOMENT_MAX_Z: Col<f64> = Col::optional(
        "moment_max_z",
        "largest |estimate - exact| / MCSE over the target's means and covariances (gaussian targets small enough that every coordinate's trace is kept)",
    );
    pub const AUTOCORRELATION_LAG1: Col<f64> = Col::optional(
        "autocorrelation_lag1",
        "lag-1 autocorrelation of the traced quantity, averaged over chains (gaussian: x1)",
    );
    pub const LAMBDA2: Col<f64> = Col::optional(
        "second_eigenvalue_modulus",
        "|lambda_2|: the second-largest eigenvalue modulus of the transition matrix (markov-chain, pagerank)",
    );
    pub const POWER_ITERATIONS: Col<i64> = Col::optional(
        "power_iterations",
        "power-method iterations until successive iterates differ by less than the tolerance in total variation (markov-chain, pagerank)",
    );
    pub const POWER_EIGEN_MAX_DIFF: Col<f64> = Col::optional(
        "power_eigen_max_diff",
        "largest difference between the power method's and the eigen solve's stationary probabilities (markov-chain, pagerank)",
    );
    pub const SIMULATION_TV: Col<f64> = Col::optional(
        "simulation_tv",
        "total-variation distance of the simulated visit frequencies (all steps) from the eigen solve (markov-chain; pagerank: the random surfer)",
    );
    pub const NODES: Col<i64> = Col::optional(
        "nodes",
        "nodes (pages, intersections) of the graph (pagerank)",
    );
    pub const EDGES: Col<i64> = Col::optional("edges", "directed edges of the graph (pagerank)");
    pub const DANGLING_NODES: Col<i64> = Col::optional(
        "dangling_nodes",
        "nodes without out-links; their rank is spread over every node (pagerank)",
    );
    pub const MARGINAL_MAX_Z: Col<f64> = Col::optional(
        "marginal_max_z",
        "largest |Gibbs - exact| / MCSE over latent nodes and states (bayes-net)",
    );
    pub const TOPIC_TV_MAX: Col<f64> = Col::optional(
        "topic_tv_max",
        "largest total-variation distance between a true topic and its matched estimated topic (Hungarian assignment; lda on bars)",
    );
    pub const HELDOUT_PERPLEXITY: Col<f64> = Col::optional(
        "heldout_perplexity",
        "perplexity of the held-out half of each document's words under the posterior-mean topics and document mixtures (lda)",
    );

    /// Whether `column` is the column of a study key (and not a metric such as
    /// `model_mean_value` that shares a section's prefix).
    pub fn is_parameter(column: &str) -> bool {
        Key::all().any(|key| key.column() == column)
    }
}

/// `fields.parquet`: one row per job and grid cell.
pub mod fields {
    use super::{Col, Entry, Table};

    pub const CELL: Col<i64> = Col::required("cell", "cell index, j * Dx + i");
    pub const I: Col<i64> = Col::required("i", "column of the cell, along x");
    pub const J: Col<i64> = Col::required("j", "row of the cell, along y");
    pub const X: Col<f64> = Col::required(
        "x",
        "x of the cell: i / (Dx - 1) in [0, 1], or its centre in the units of `model.window`",
    );
    pub const Y: Col<f64> = Col::required(
        "y",
        "y of the cell: j / (Dy - 1) in [0, 1], or its centre in the units of `model.window`",
    );
    pub const TRUTH: Col<f64> = Col::nullable(
        "truth",
        "the field u that generated the data (simulated data only)",
    );
    pub const OBSERVED: Col<bool> =
        Col::required("observed", "whether the model sees this cell's observation");
    pub const OBSERVATION: Col<f64> = Col::nullable(
        "observation",
        "the datum of the cell (value, label or count); held-out cells keep theirs",
    );
    pub const POST_MEAN: Col<f64> = Col::required("post_mean", "posterior mean of u");
    pub const POST_SD: Col<f64> = Col::required("post_sd", "posterior standard deviation of u");
    pub const POST_MEAN_MCSE: Col<f64> = Col::nullable(
        "post_mean_mcse",
        "Monte Carlo standard error of `post_mean`",
    );
    pub const EXACT_MEAN: Col<f64> = Col::nullable("exact_mean", "exact posterior mean (gaussian)");
    pub const EXACT_SD: Col<f64> =
        Col::nullable("exact_sd", "exact posterior standard deviation (gaussian)");
    pub const P_POSITIVE: Col<f64> =
        Col::nullable("p_positive", "posterior predictive P(t = +1) (probit)");
    pub const EXPECTED_COUNT: Col<f64> = Col::nullable(
        "expected_count",
        "posterior mean of exp(u + offset) (poisson)",
    );

    pub const ESS_BULK: Col<f64> = Col::nullable("ess_bulk", "bulk ESS of the cell's draws");
    pub const ESS_TAIL: Col<f64> = Col::nullable("ess_tail", "tail ESS of the cell's draws");
    pub const RHAT: Col<f64> = Col::nullable(
        "rhat",
        "rank-normalised split R-hat of the cell (two or more chains)",
    );
    pub const MCSE_MEAN: Col<f64> =
        Col::nullable("mcse_mean", "MCSE of the cell's mean from its ESS");

    pub const TABLE: Table = Table {
        name: "fields",
        row: "job and grid cell",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(CELL.spec),
            Entry::Column(I.spec),
            Entry::Column(J.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
            Entry::Column(TRUTH.spec),
            Entry::Column(OBSERVED.spec),
            Entry::Column(OBSERVATION.spec),
            Entry::Column(POST_MEAN.spec),
            Entry::Column(POST_SD.spec),
            Entry::Column(POST_MEAN_MCSE.spec),
            Entry::Column(EXACT_MEAN.spec),
            Entry::Column(EXACT_SD.spec),
            Entry::Column(P_POSITIVE.spec),
            Entry::Column(EXPECTED_COUNT.spec),
            Entry::Column(ESS_BULK.spec),
            Entry::Column(ESS_TAIL.spec),
            Entry::Column(RHAT.spec),
            Entry::Column(MCSE_MEAN.spec),
        ],
    };
}

/// `traces.parquet`: one row per job, chain and kept state.
pub mod traces {
    use super::{Col, Entry, Family, Kind, Presence, Table};

    pub const LOGLIK: Col<f64> = Col::required("loglik", "log-likelihood of the state");
    pub const FIELD_MEAN: Col<f64> =
        Col::nullable("field_mean", "mean of u over the grid in the state");
    pub const PROBE: Family = Family {
        prefixes: &["probe_"],
        pattern: "probe_<k>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Always,
        doc: "u at the probe cell i = j = round(k (D - 1) / 4), k = 0..4",
    };

    pub const TABLE: Table = Table {
        name: "traces",
        row: "job, chain and kept state",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::CHAIN.spec),
            Entry::Column(super::ITERATION.spec),
            Entry::Column(LOGLIK.spec),
            Entry::Column(FIELD_MEAN.spec),
            Entry::Family(PROBE),
        ],
    };
}

/// `hyper.parquet`: one row per job, chain, traced kept state and inferred hyperparameter
/// (`sampler.hyper`).
pub mod hyper {
    use super::{Col, Entry, Table};

    pub const NAME: Col<String> = Col::required(
        "name",
        "the hyperparameter: `length_scale`, `variance` or `mean`",
    );
    pub const VALUE: Col<f64> = Col::required("value", "its value in the state");

    pub const TABLE: Table = Table {
        name: "hyper",
        row: "job, chain, traced kept state and inferred hyperparameter",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::CHAIN.spec),
            Entry::Column(super::ITERATION.spec),
            Entry::Column(NAME.spec),
            Entry::Column(VALUE.spec),
        ],
    };
}

/// `inla_grid.parquet`: one row per INLA job (`sampler.kind = "inla"`) and kept grid point of
/// its hyperparameters, wide: one column per hyperparameter, null where the model fixes it.
pub mod inla_grid {
    use super::{Col, Entry, Table};

    pub const POINT: Col<i64> = Col::required(
        "point",
        "the grid point, 0 upwards: 0 is the mode of log p~(theta | data) (z = 0), then the \
         points along the z axes, then the rest of the product grid",
    );
    pub const LENGTH_SCALE: Col<f64> = Col::nullable(
        "length_scale",
        "the length scale at the point; null when the model fixes it",
    );
    pub const LENGTH_SCALE_Y: Col<f64> = Col::nullable(
        "length_scale_y",
        "the length scale along y at the point (an anisotropic kernel with model.length_scale_y_prior); null when not inferred",
    );
    pub const VARIANCE: Col<f64> = Col::nullable(
        "variance",
        "the kernel variance at the point; null when the model fixes it",
    );
    pub const MEAN: Col<f64> = Col::nullable(
        "mean",
        "the field's constant mean at the point; null when the model fixes it",
    );
    pub const LOG_DENSITY: Col<f64> = Col::required(
        "log_density",
        "log p~(theta | data) unnormalised: the log prior of theta in unconstrained coordinates \
         (log length scale, log variance, mean; Jacobian included) plus `log_evidence`",
    );
    pub const WEIGHT: Col<f64> = Col::required(
        "weight",
        "exp(`log_density`) normalised over the job's points (equal z-cell volumes): the \
         weights sum to 1",
    );
    pub const LOG_EVIDENCE: Col<f64> = Col::required(
        "log_evidence",
        "the Laplace log marginal likelihood log p~(data | theta) at the point (the \
         likelihood's dropped constants dropped)",
    );

    pub const TABLE: Table = Table {
        name: "inla_grid",
        row: "INLA job and kept grid point of its hyperparameters",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(POINT.spec),
            Entry::Column(LENGTH_SCALE.spec),
            Entry::Column(LENGTH_SCALE_Y.spec),
            Entry::Column(VARIANCE.spec),
            Entry::Column(MEAN.spec),
            Entry::Column(LOG_DENSITY.spec),
            Entry::Column(WEIGHT.spec),
            Entry::Column(LOG_EVIDENCE.spec),
        ],
    };
}

/// `chains.parquet`: one row per job and chain.
pub mod chains {
    use super::{Col, Entry, Table};

    pub const LOGLIK_EVALUATIONS: Col<i64> = Col::required(
        "loglik_evaluations",
        "log-likelihood evaluations of the chain, burn-in included",
    );
    pub const GRADIENT_EVALUATIONS: Col<i64> = Col::required(
        "gradient_evaluations",
        "gradient evaluations of the chain, burn-in included",
    );
    pub const MEAN_TREE_DEPTH: Col<f64> = Col::nullable(
        "mean_tree_depth",
        "NUTS: mean tree depth over kept iterations; null for other kinds",
    );
    pub const MEAN_LEAPFROG_STEPS: Col<f64> = Col::nullable(
        "mean_leapfrog_steps",
        "NUTS: mean leapfrog steps per iteration over kept iterations; null for other kinds",
    );
    pub const DIVERGENCES: Col<i64> = Col::nullable(
        "divergences",
        "NUTS: divergent trajectories after burn-in; null for other kinds",
    );
    pub const MEAN_TREE_ACCEPT: Col<f64> = Col::nullable(
        "mean_tree_accept",
        "NUTS: mean acceptance statistic of the trees over kept iterations; null for other kinds",
    );

    pub const TABLE: Table = Table {
        name: "chains",
        row: "job and chain",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::CHAIN.spec),
            Entry::Column(super::ACCEPTANCE_RATE.spec),
            Entry::Column(super::STEP_SIZE.spec),
            Entry::Column(MEAN_TREE_DEPTH.spec),
            Entry::Column(MEAN_LEAPFROG_STEPS.spec),
            Entry::Column(DIVERGENCES.spec),
            Entry::Column(MEAN_TREE_ACCEPT.spec),
            Entry::Column(LOGLIK_EVALUATIONS.spec),
            Entry::Column(GRADIENT_EVALUATIONS.spec),
        ],
    };
}

/// `convergence.parquet`: one row per job and checkpoint (gaussian studies).
pub mod convergence {
    use super::{Col, Entry, Table};

    pub const RMS_TO_EXACT: Col<f64> = Col::nullable(
        "rms_to_exact",
        "RMS over cells of the running posterior mean minus the exact posterior mean",
    );

    pub const TABLE: Table = Table {
        name: "convergence",
        row: "job and checkpoint (gaussian)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::ITERATION.spec),
            Entry::Column(RMS_TO_EXACT.spec),
        ],
    };
}

/// `autocorrelation.parquet`: one row per job and lag.
pub mod autocorrelation {
    use super::{Col, Entry, Table};

    pub const LAG: Col<i64> = Col::required("lag", "lag in kept (thinned) states");
    pub const AUTOCORRELATION: Col<f64> = Col::nullable(
        "autocorrelation",
        "autocorrelation of the log-likelihood (latent field, lda) or of x1 (gaussian family), averaged over chains",
    );

    pub const TABLE: Table = Table {
        name: "autocorrelation",
        row: "job and lag",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(LAG.spec),
            Entry::Column(AUTOCORRELATION.spec),
        ],
    };
}

/// `draws.parquet`: one row per job, chain, kept draw and cell (with `output.field_draws`), the
/// long layout ArviZ and R's posterior read (pivot `cell` to columns).
pub mod draws {
    use super::{Col, Entry, Table};

    pub const DRAW: Col<i64> = Col::required("draw", "thinned draw of the chain, 0 upwards");
    pub const VALUE: Col<f64> = Col::nullable("value", "u at the cell in the draw");

    pub const TABLE: Table = Table {
        name: "draws",
        row: "job, chain, kept draw and cell (with `output.field_draws`)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::CHAIN.spec),
            Entry::Column(DRAW.spec),
            Entry::Column(super::fields::CELL.spec),
            Entry::Column(VALUE.spec),
        ],
    };
}

/// `ranks.parquet`: one row per SBC job, replication and functional.
pub mod ranks {
    use super::{Col, Entry, Table};

    pub const REPLICATION: Col<i64> = Col::required("replication", "SBC replication, 0 upwards");
    pub const FUNCTIONAL: Col<String> = Col::required(
        "functional",
        "what was ranked: `probe_0` .. `probe_4` (cells as in traces) or `field_mean`",
    );
    pub const RANK: Col<i64> = Col::required(
        "rank",
        "how many of the posterior draws lie below the truth, 0..=draws",
    );
    pub const DRAWS: Col<i64> =
        Col::required("draws", "posterior draws the truth was ranked among");

    pub const TABLE: Table = Table {
        name: "ranks",
        row: "SBC job, replication and functional",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(REPLICATION.spec),
            Entry::Column(FUNCTIONAL.spec),
            Entry::Column(RANK.spec),
            Entry::Column(DRAWS.spec),
        ],
    };
}

/// A name shared by the long tables of the study families: which method produced the row.
pub const METHOD: Col<String> = Col::required(
    "method",
    "how the row was computed: `power`, `eigen`, `simulation`, `surfer` (markov-chain, pagerank)",
);

/// `stationary.parquet`: one row per job, method and state (markov-chain).
pub mod stationary {
    use super::{Col, Entry, Table};

    pub const STATE: Col<i64> = Col::required("state", "state of the chain, 0 upwards");
    pub const PROBABILITY: Col<f64> = Col::required(
        "probability",
        "stationary probability of the state by the method",
    );

    pub const TABLE: Table = Table {
        name: "stationary",
        row: "job, method and state (markov-chain)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::METHOD.spec),
            Entry::Column(STATE.spec),
            Entry::Column(PROBABILITY.spec),
        ],
    };
}

/// `distances.parquet`: one row per job, method and step (markov-chain, pagerank).
pub mod distances {
    use super::{Col, Entry, Table};

    pub const STEP: Col<i64> = Col::required(
        "step",
        "power: the iteration t; simulation, surfer: the run length in steps",
    );
    pub const DISTANCE: Col<f64> = Col::required(
        "distance",
        "total-variation distance to the eigen solve's stationary distribution",
    );
    pub const REFERENCE: Col<f64> = Col::nullable(
        "reference",
        "what theory predicts: power, |lambda_2|^t times the first error; simulation, the first distance times sqrt(first step / step)",
    );

    pub const TABLE: Table = Table {
        name: "distances",
        row: "job, method and step (markov-chain, pagerank)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::METHOD.spec),
            Entry::Column(STEP.spec),
            Entry::Column(DISTANCE.spec),
            Entry::Column(REFERENCE.spec),
        ],
    };
}

/// `node_ranks.parquet`: one row per job, method and node (pagerank). Named apart from the
/// SBC `ranks.parquet`, whose rows are ranks of a truth among draws.
pub mod node_ranks {
    use super::{Col, Entry, Table};

    pub const NODE: Col<String> = Col::required("node", "the node as written in the input");
    pub const RANK: Col<f64> = Col::required(
        "rank",
        "PageRank: the node's stationary probability by the method",
    );
    pub const POSITION: Col<i64> = Col::required(
        "position",
        "place in the ranking by the method, 1 = highest",
    );
    pub const X: Col<f64> = Col::nullable("x", "the node's x coordinate (street networks)");
    pub const Y: Col<f64> = Col::nullable("y", "the node's y coordinate (street networks)");

    pub const TABLE: Table = Table {
        name: "node_ranks",
        row: "job, method and node (pagerank)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::METHOD.spec),
            Entry::Column(NODE.spec),
            Entry::Column(RANK.spec),
            Entry::Column(POSITION.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
        ],
    };
}

/// `marginals.parquet`: one row per job, latent node and state (bayes-net).
pub mod marginals {
    use super::{Col, Entry, Table};

    pub const NODE: Col<String> = Col::required("node", "the latent node");
    pub const STATE: Col<String> = Col::required("state", "the node's state");
    pub const GIBBS: Col<f64> = Col::required(
        "gibbs",
        "posterior probability of the state by Gibbs sampling",
    );
    pub const EXACT: Col<f64> =
        Col::required("exact", "posterior probability of the state by enumeration");
    pub const MCSE: Col<f64> = Col::nullable(
        "mcse",
        "Monte Carlo standard error of `gibbs` (from the indicator's ESS over chains)",
    );

    pub const TABLE: Table = Table {
        name: "marginals",
        row: "job, latent node and state (bayes-net)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(NODE.spec),
            Entry::Column(STATE.spec),
            Entry::Column(GIBBS.spec),
            Entry::Column(EXACT.spec),
            Entry::Column(MCSE.spec),
        ],
    };
}

/// `topics.parquet`: one row per job, topic and word (lda).
pub mod topics {
    use super::{Col, Entry, Table};

    pub const TOPIC: Col<i64> = Col::required("topic", "estimated topic, 0 upwards");
    pub const WORD: Col<String> = Col::required("word", "the word (bars: `r<row>c<column>`)");
    pub const WORD_INDEX: Col<i64> =
        Col::required("word_index", "the word's index in the vocabulary");
    pub const PROBABILITY: Col<f64> = Col::required(
        "probability",
        "posterior mean over the kept sweeps of the topic's probability of the word",
    );
    pub const TRUE_TOPIC: Col<i64> = Col::nullable(
        "true_topic",
        "the true topic this one is matched to (Hungarian assignment; bars only)",
    );

    pub const TABLE: Table = Table {
        name: "topics",
        row: "job, topic and word (lda)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(TOPIC.spec),
            Entry::Column(WORD.spec),
            Entry::Column(WORD_INDEX.spec),
            Entry::Column(PROBABILITY.spec),
            Entry::Column(TRUE_TOPIC.spec),
        ],
    };
}

/// `lda_trace.parquet`: one row per job and sweep (lda).
pub mod lda_trace {
    use super::{Col, Entry, Table};

    pub const SWEEP: Col<i64> = Col::required("sweep", "the sweep, 1-based, burn-in included");
    pub const SECONDS: Col<f64> =
        Col::required("seconds", "seconds of sampling up to the end of the sweep");
    pub const LOGLIK: Col<f64> = Col::required(
        "loglik",
        "training log-likelihood sum over tokens of log sum_k theta_dk beta_kw at the sweep's state",
    );
    pub const TOPIC_TV_MAX: Col<f64> = Col::nullable(
        "topic_tv_max",
        "largest TV distance of a true topic to its matched topic at the sweep's state (bars)",
    );

    pub const TABLE: Table = Table {
        name: "lda_trace",
        row: "job and sweep (lda)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(SWEEP.spec),
            Entry::Column(SECONDS.spec),
            Entry::Column(LOGLIK.spec),
            Entry::Column(TOPIC_TV_MAX.spec),
        ],
    };
}

/// `partitions.parquet`: one row per partition job, partition and area.
pub mod partitions {
    use super::{Col, Entry, Table};

    pub const WHICH: Col<String> = Col::required(
        "which",
        "`final`, `best` (smallest F visited) or `start` (the administrative pieces a chain started from); baselines: `final` and `best`, the same",
    );
    pub const AREA: Col<String> = Col::required("area", "the area's id in the areas CSV");
    pub const AREA_INDEX: Col<i64> =
        Col::required("area_index", "the area's row in the areas CSV, 0 upwards");
    pub const REGION: Col<i64> = Col::required("region", "the area's region, 0 upwards");
    pub const X: Col<f64> = Col::nullable(
        "x",
        "the area's x coordinate (`data.coordinates`), for maps",
    );
    pub const Y: Col<f64> = Col::nullable("y", "the area's y coordinate");

    pub const TABLE: Table = Table {
        name: "partitions",
        row: "partition job, partition and area",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(WHICH.spec),
            Entry::Column(AREA.spec),
            Entry::Column(AREA_INDEX.spec),
            Entry::Column(REGION.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
        ],
    };
}

/// `partition_traces.parquet`: one row per partition chain and recorded iteration.
pub mod partition_traces {
    use super::{Col, Entry, Table};

    pub const F: Col<f64> = Col::required("f", "F(Z) of the chain's state");
    pub const TEMPERATURE: Col<f64> =
        Col::required("temperature", "the temperature T at that iteration");

    pub const TABLE: Table = Table {
        name: "partition_traces",
        row: "partition chain and recorded iteration (every `sampler.thin`)",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(super::ITERATION.spec),
            Entry::Column(F.spec),
            Entry::Column(TEMPERATURE.spec),
        ],
    };
}

/// Every result table, in the order the README lists them.
pub const TABLES: [&Table; 18] = [
    &jobs::TABLE,
    &fields::TABLE,
    &traces::TABLE,
    &hyper::TABLE,
    &inla_grid::TABLE,
    &chains::TABLE,
    &convergence::TABLE,
    &autocorrelation::TABLE,
    &draws::TABLE,
    &ranks::TABLE,
    &stationary::TABLE,
    &distances::TABLE,
    &node_ranks::TABLE,
    &marginals::TABLE,
    &topics::TABLE,
    &lda_trace::TABLE,
    &partitions::TABLE,
    &partition_traces::TABLE,
];

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.into_iter().find(|t| t.name == name)
}

/// The README's description of every table: one Markdown table of columns per result table.
pub fn markdown() -> String {
    let mut text = String::new();
    for table in TABLES {
        text.push_str(&format!(
            "#### `{}`: one row per {}\n\n| column | type | null | what it holds |\n|---|---|---|---|\n",
            table.file_name(),
            table.row
        ));
        for entry in table.entries {
            let (name, kind, nullable, presence, doc) = match entry {
                Entry::Column(s) => (s.name, s.kind, s.nullable, s.presence, s.doc),
                Entry::Family(f) => (f.pattern, f.kind, f.nullable, f.presence, f.doc),
            };
            let null = match (nullable, presence) {
                (false, _) => "never",
                (true, Presence::Always) => "yes",
                (true, Presence::Optional) => "yes; may be absent",
            };
            let doc = doc.replace('|', "\\|");
            text.push_str(&format!(
                "| `{name}` | {} | {null} | {doc} |\n",
                kind.name()
            ));
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_out_in_table_order_with_nulls_for_non_finite_floats() {
        let frame = Rows::new(&convergence::TABLE, 2)
            .set(convergence::RMS_TO_EXACT, [0.5, f64::NAN])
            .fill(JOB_ID, "j".to_string())
            .set(ITERATION, [10i64, 20])
            .finish()
            .unwrap();
        let names: Vec<&str> = frame
            .get_column_names()
            .iter()
            .map(|n| n.as_str())
            .collect();
        assert_eq!(names, ["job_id", "iteration", "rms_to_exact"]);
        assert_eq!(frame.column("rms_to_exact").unwrap().null_count(), 1);
    }

    #[test]
    fn a_missing_required_column_or_a_null_in_it_is_an_error() {
        let missing = Rows::new(&convergence::TABLE, 1)
            .fill(JOB_ID, "j".to_string())
            .finish()
            .unwrap_err();
        assert!(
            matches!(&missing, SchemaError::Missing { column, .. } if column == "iteration"),
            "{missing}"
        );
        let null = Rows::new(&convergence::TABLE, 1)
            .fill(JOB_ID, None)
            .set(ITERATION, [1i64])
            .finish()
            .unwrap_err();
        assert!(matches!(null, SchemaError::Null { .. }), "{null}");
    }

    #[test]
    fn columns_of_another_table_and_wrong_lengths_are_errors() {
        let foreign = Rows::new(&convergence::TABLE, 1)
            .set(fields::CELL, [0i64])
            .finish()
            .unwrap_err();
        assert!(
            matches!(foreign, SchemaError::Undeclared { .. }),
            "{foreign}"
        );
        let short = Rows::new(&convergence::TABLE, 2)
            .set(ITERATION, [1i64])
            .finish()
            .unwrap_err();
        assert!(matches!(short, SchemaError::Length { .. }), "{short}");
    }

    #[test]
    fn families_name_and_recognise_their_members() {
        assert_eq!(traces::PROBE.member(2), "probe_2");
        assert_eq!(jobs::SBC_P.member("field_mean"), "sbc_p_field_mean");
        assert_eq!(jobs::SBC_P.member_of("sbc_p_probe_1"), Some("probe_1"));
        assert!(jobs::PARAMETERS.contains("sampler_beta"));
        assert!(!jobs::PARAMETERS.contains("sampler_"));
        assert_eq!(
            jobs::TABLE.position("sbc_p_min"),
            jobs::TABLE.position("sbc_p_min")
        );
        assert_ne!(
            jobs::TABLE.position("sbc_p_min"),
            jobs::TABLE.position("sbc_p_x"),
            "a declared column wins over a family prefix"
        );
    }

    #[test]
    fn check_reports_unknown_columns_and_wrong_types() {
        let frame = polars::df!("job_id" => ["a"], "lag" => [1.5f64], "extra" => [1i64]).unwrap();
        let errors = autocorrelation::TABLE.check(&frame);
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, SchemaError::WrongType { .. }))
        );
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, SchemaError::Undeclared { .. }))
        );
    }

    #[test]
    fn every_table_is_named_once() {
        for table in TABLES {
            assert_eq!(super::table(table.name), Some(table));
        }
    }
}
