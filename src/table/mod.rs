//! The table contract: how a result table is declared, built and checked. Each table is declared
//! once, by the family that writes it (`src/families/<name>/schema.rs`), or in [`shared`] when
//! every family writes it: its name, what one row is, and its columns with type, nullability,
//! presence and a one-line doc. Writers build rows through [`Rows`], keyed by the typed column
//! constants (a misspelt or renamed column is a compile error); readers, the report and the tests
//! name columns through the same constants; [`Table::check`] holds a frame to its table's
//! declaration; [`markdown`] prints a reference section for a list of tables. This module knows
//! no family: the registry (`crate::families`) lists the tables.
//!
//! Adding a column is one constant in its family's schema, one entry in its table's list, and one
//! `set` in the writer; the schema test fails until all three exist. Columns named by a pattern
//! (the parameter columns `<section>_<key>`, `sbc_p_<functional>`, `probe_<k>`) are declared as a
//! [`ColumnGroup`] with a prefix, and their members are named through [`ColumnGroup::member`].
//!
//! Nulls, never NaN: [`Rows`] turns a non-finite float into a null, and a column declared
//! without nulls that receives one is a [`SchemaError`].

use std::marker::PhantomData;

use polars::prelude::{Column as PolarsColumn, DataFrame, DataType, NamedFrom, Series};
use thiserror::Error;

use crate::study::keys::Key;

pub(crate) mod rows;
pub mod shared;

pub use rows::{JobStatus, failed_row, job_rows, ok_row, rows_of};

/// A table too large to hold whole (a job's field draws): its frames, made one at a time as the
/// writer takes them, so only one chunk and its encoding exist at once.
pub(crate) type TableChunks<'a> =
    Box<dyn Iterator<Item = Result<DataFrame, SchemaError>> + Send + 'a>;

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
    pub(crate) fn admits(self, dtype: &DataType) -> bool {
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
pub(crate) enum Presence {
    /// Every writer of the table writes it.
    Always,
    /// Written only where it applies (the doc says when); absent or null elsewhere.
    Optional,
}

/// One declared column, untyped: what [`Table::check`] and [`markdown`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) nullable: bool,
    pub(crate) presence: Presence,
    pub(crate) doc: &'static str,
    /// What the column is to a reader comparing two runs (see [`Role`]).
    pub role: Role,
    /// The column holding this column's Monte Carlo standard error, when it has one: what
    /// `fieldmc compare --tolerance mcse` judges a difference by.
    pub(crate) mcse: Option<&'static str>,
}

/// What a column is to a reader comparing two runs of a study (`fieldmc compare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A value computed from the study, its data and its seed: the same on every machine.
    Value,
    /// Names the row within its job (chain, iteration, cell, lag): the same at every seed, and
    /// what a differing row is called by.
    Index,
    /// A duration or a rate per second: differs between runs by nature, never compared.
    Timing,
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
    pub(crate) spec: Spec,
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
                role: Role::Value,
                mcse: None,
            },
            value: PhantomData,
        }
    }

    /// The column is a duration or a rate per second (see [`Role::Timing`]).
    pub(crate) const fn timing(mut self) -> Self {
        self.spec.role = Role::Timing;
        self
    }

    /// The column names the row within its job (see [`Role::Index`]).
    pub(crate) const fn index(mut self) -> Self {
        self.spec.role = Role::Index;
        self
    }

    /// `mcse` holds this column's Monte Carlo standard error, row by row.
    pub(crate) const fn with_mcse(mut self, mcse: Col<f64>) -> Self {
        self.spec.mcse = Some(mcse.spec.name);
        self
    }

    /// Written by every writer of its tables, never null.
    pub(crate) const fn required(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, false, Presence::Always, doc)
    }

    /// Written by every writer of its tables, null where it does not apply.
    pub(crate) const fn nullable(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, true, Presence::Always, doc)
    }

    /// Written only where it applies (the doc says when).
    pub(crate) const fn optional(name: &'static str, doc: &'static str) -> Self {
        Self::new(name, true, Presence::Optional, doc)
    }

    pub const fn name(&self) -> &'static str {
        self.spec.name
    }
}

/// Columns named by a pattern: `prefix` followed by a member name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnGroup {
    /// Every prefix a member may start with (the parameter columns have one per study section).
    pub(crate) prefixes: &'static [&'static str],
    /// The pattern as shown to readers, e.g. `sbc_p_<functional>`.
    pub(crate) pattern: &'static str,
    pub(crate) kind: Kind,
    pub(crate) nullable: bool,
    pub(crate) presence: Presence,
    pub(crate) doc: &'static str,
}

impl ColumnGroup {
    /// The column of `member` under the group's first prefix (`probe_2`, `sbc_p_field_mean`).
    pub(crate) fn member(&self, member: impl std::fmt::Display) -> String {
        format!("{}{member}", self.prefixes[0])
    }

    /// Whether `column` belongs to the group.
    pub fn contains(&self, column: &str) -> bool {
        self.prefixes
            .iter()
            .any(|p| column.len() > p.len() && column.starts_with(p))
    }

    /// The member name of `column` (what follows the prefix), if it belongs to the group.
    pub(crate) fn member_of<'a>(&self, column: &'a str) -> Option<&'a str> {
        self.prefixes
            .iter()
            .find_map(|p| column.strip_prefix(p))
            .filter(|m| !m.is_empty())
    }
}

/// A declared column or column group, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Column(Spec),
    Group(ColumnGroup),
}

impl Entry {
    /// The column's name, or the group's pattern.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Entry::Column(spec) => spec.name,
            Entry::Group(group) => group.pattern,
        }
    }
}

/// One result table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// The file is `<name>.parquet`.
    pub name: &'static str,
    /// What one row is.
    pub(crate) row: &'static str,
    /// The columns it shares with other tables, first (a family's jobs table starts with the
    /// shared jobs columns, see [`shared::jobs`]); empty for most tables.
    pub(crate) shared: &'static [Entry],
    /// Its own columns, after the shared ones.
    pub(crate) own: &'static [Entry],
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
    /// Every column and group, in table order: the shared ones, then its own.
    pub fn entries(&self) -> impl Iterator<Item = &'static Entry> {
        self.shared.iter().chain(self.own)
    }

    /// The entry at `position` of [`Table::entries`].
    fn entry(&self, position: usize) -> &'static Entry {
        self.entries()
            .nth(position)
            .expect("a position found among the entries")
    }

    /// The file name of the assembled table.
    pub fn file_name(&self) -> String {
        format!("{}.parquet", self.name)
    }

    /// The position in [`Table::entries`] of the entry `column` falls under.
    pub(crate) fn position(&self, column: &str) -> Option<usize> {
        let declared = self.entries().position(|e| match e {
            Entry::Column(spec) => spec.name == column,
            Entry::Group(_) => false,
        });
        declared.or_else(|| {
            self.entries().position(|e| match e {
                Entry::Group(group) => group.contains(column),
                Entry::Column(_) => false,
            })
        })
    }

    fn error_context(&self, column: &str) -> (String, String) {
        (self.name.to_string(), column.to_string())
    }

    /// Checks `frame` against the declaration: every column declared (or a group member) and of
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
            let (kind, nullable) = match *self.entry(position) {
                Entry::Column(spec) => (spec.kind, spec.nullable),
                Entry::Group(group) => (group.kind, group.nullable),
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
        for entry in self.entries() {
            let missing = match entry {
                Entry::Column(spec) if spec.presence == Presence::Always => {
                    (!seen.contains(&spec.name)).then_some(spec.name)
                }
                Entry::Group(group) if group.presence == Presence::Always => {
                    (!seen.iter().any(|c| group.contains(c))).then_some(group.pattern)
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
    pub(crate) fn new(table: &'static Table, height: usize) -> Self {
        Rows {
            table,
            height,
            columns: Vec::new(),
            error: None,
        }
    }

    /// Sets a declared column, one value per row (`None` for null).
    pub(crate) fn set<T: Value, V: Into<Option<T>>>(
        self,
        column: Col<T>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.push(column.spec.name, values)
    }

    /// Sets a declared column to the same value on every row.
    pub(crate) fn fill<T: Value + Clone>(
        self,
        column: Col<T>,
        value: impl Into<Option<T>>,
    ) -> Self {
        let height = self.height;
        let value = value.into();
        self.set(column, std::iter::repeat_n(value, height))
    }

    /// Sets the column of a group member (`group.member(name)`), one value per row.
    pub(crate) fn set_member<T: Value, V: Into<Option<T>>>(
        self,
        group: &ColumnGroup,
        column: &str,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        debug_assert!(
            group.contains(column),
            "{column} is not a {}",
            group.pattern
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
    pub(crate) fn finish(mut self) -> Result<DataFrame, SchemaError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        // Stable: members of one group keep the order they were set in.
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
/// name found in the data (a swept parameter, a group member). Not implemented for `&str`, so a
/// literal column name does not compile where a declared one is expected.
pub(crate) trait ColumnName {
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
/// in their families, are the members of [`shared::jobs::PARAMETERS`].
impl ColumnName for Key {
    fn column_name(&self) -> &str {
        self.column()
    }
}

/// Declares a table in a module of its own: each column once (its constant, type, nullability,
/// presence, name and doc), in table order, and the table made of them. `use PATH` takes a
/// column declared elsewhere, `group NAME = ...` declares a [`ColumnGroup`], `use group PATH`
/// takes one declared elsewhere; `after [ENTRIES]` puts shared columns first (a family's jobs
/// table: `after [shared::jobs::TABLE.own]`); `items { ... }` adds other items to the module.
///
/// ```ignore
/// declare_table! {
///     /// `fields.parquet`: one row per job and grid cell.
///     pub mod fields = "fields", one row per "job and grid cell" {
///         use shared::JOB_ID,
///         /// The cell.
///         CELL: i64 = required("cell", "cell index, j * Dx + i"),
///     }
/// }
/// ```
#[macro_export]
macro_rules! declare_table {
    (
        $(#[$meta:meta])*
        $vis:vis mod $module:ident = $name:literal, one row per $row:literal
            $(, after [$shared:expr])? { $($body:tt)* }
        $(items { $($item:item)* })?
    ) => {
        $(#[$meta])*
        $vis mod $module {
            #[allow(unused_imports)]
            use super::*;
            $($($item)*)?
            $crate::declare_table!(@munch [$name $row [$($shared)?]] [] $($body)*);
        }
    };
    (@munch $head:tt [$($entries:tt)*] use group $group:path, $($rest:tt)*) => {
        $crate::declare_table!(@munch $head [$($entries)* ($crate::table::Entry::Group($group))] $($rest)*);
    };
    (@munch $head:tt [$($entries:tt)*] use $column:path, $($rest:tt)*) => {
        $crate::declare_table!(@munch $head [$($entries)* ($crate::table::Entry::Column($column.spec))] $($rest)*);
    };
    (@munch $head:tt [$($entries:tt)*]
        $(#[doc = $doc:literal])* group $konst:ident = $value:expr, $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        pub const $konst: $crate::table::ColumnGroup = $value;
        $crate::declare_table!(@munch $head [$($entries)* ($crate::table::Entry::Group($konst))] $($rest)*);
    };
    (@munch $head:tt [$($entries:tt)*]
        $(#[doc = $doc:literal])* $konst:ident : $ty:ty = $ctor:ident($column:literal, $what:literal)
            $(.$modifier:ident($($argument:expr)?))*,
        $($rest:tt)*
    ) => {
        $(#[doc = $doc])*
        pub const $konst: $crate::table::Col<$ty> =
            $crate::table::Col::$ctor($column, $what)$(.$modifier($($argument)?))*;
        $crate::declare_table!(@munch $head [$($entries)* ($crate::table::Entry::Column($konst.spec))] $($rest)*);
    };
    (@munch [$name:literal $row:literal [$($shared:expr)?]] [$(($entry:expr))*]) => {
        /// The table.
        pub const TABLE: $crate::table::Table = $crate::table::Table {
            name: $name,
            row: $row,
            shared: $crate::declare_table!(@shared $($shared)?),
            own: &[$($entry),*],
        };
    };
    (@shared) => { &[] };
    (@shared $shared:expr) => { $shared };
}

/// A reference section for `tables`: one Markdown table of columns per result table.
pub fn markdown(tables: &[&Table]) -> String {
    let mut text = String::new();
    for table in tables {
        text.push_str(&format!(
            "#### `{}`: one row per {}\n\n| column | type | null | what it holds |\n|---|---|---|---|\n",
            table.file_name(),
            table.row
        ));
        for entry in table.entries() {
            let (name, kind, nullable, presence, doc) = match entry {
                Entry::Column(s) => (s.name, s.kind, s.nullable, s.presence, s.doc),
                Entry::Group(g) => (g.pattern, g.kind, g.nullable, g.presence, g.doc),
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
mod tests;
