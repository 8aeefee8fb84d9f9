//! The key declaration machinery: how a key of `[model]`, `[data]`, `[sampler]` or `[output]` is
//! declared, once, by the family that owns it (`src/families/<name>/keys.rs`, with
//! [`declare_keys!`]) or here when several families share it ([`common`]): its section and name,
//! the type of its values, the range each value must lie in on its own, its default, when it
//! applies, a one-line documentation, and (derived from section and name) its result column.
//! This module knows no family: the registry (`crate::families`) gathers every family's keys
//! into a [`KeyCatalog`], which the study reader, the planner, `fieldmc keys` and the reference
//! tables read.
//!
//! Names from a closed set (`model.likelihood`, `model.kernel`, ...) are [`ValueType::Choice`]s
//! over the words of an enum declared with [`crate::closed_names!`], and parse into that enum
//! once, at resolution. `model.family` and `sampler.kind` take words the registry lists
//! ([`ValueType::RegistryWords`]).

use std::fmt;
use std::sync::Arc;

mod catalog;
pub(crate) mod common;

pub use catalog::{KeyCatalog, KeyHelp};
pub use common::*;

/// One resolved parameter value, as it appears in job tables and canonical keys.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Text(Text),
    Bool(bool),
    /// The parameter does not apply to this job (e.g. `data_path` for simulated data).
    Null,
}

impl ParamValue {
    /// The value of `key` among `params` (`Null` where it is not among them: a key of another
    /// family).
    pub(crate) fn of(params: &[(Key, ParamValue)], key: Key) -> &ParamValue {
        static NULL: ParamValue = ParamValue::Null;
        params
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&NULL, |(_, value)| value)
    }
}

/// A text value: a declared word (a choice's name or a default), borrowed from the key's
/// declaration, or the study's own text, shared. Words are most of a point's values, and
/// copying one touches no reference count, which the threads resolving a sweep's points would
/// otherwise all update at once.
#[derive(Clone)]
pub enum Text {
    Word(&'static str),
    Shared(Arc<str>),
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Word(word) => word,
            Text::Shared(text) => text,
        }
    }
}

impl PartialEq for Text {
    /// Equal when the texts are, whether words or shared.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text::Shared(Arc::from(text))
    }
}

impl ParamValue {
    pub fn text(text: &str) -> Self {
        ParamValue::Text(Text::from(text))
    }

    /// A declared word (see [`Text`]).
    pub(crate) fn word(word: &'static str) -> Self {
        ParamValue::Text(Text::Word(word))
    }

    /// The value with a text that is one of `words` borrowed from them.
    #[allow(clippy::wrong_self_convention)] // a Copy key viewed as another type
    pub(crate) fn as_word_of(self, words: &'static [&'static str]) -> Self {
        match self {
            ParamValue::Text(text) => match words.iter().find(|w| **w == &*text) {
                Some(word) => ParamValue::word(word),
                None => ParamValue::Text(text),
            },
            other => other,
        }
    }

    /// The value as written in canonical keys: integers in decimal, floats with `{:?}` (shortest
    /// round-trip, so 0.3 is always "0.3" and 1 is "1.0"), booleans as `true`/`false`, text as
    /// is unless it holds a character that would make a key ambiguous (`;`, `=`, `"`,
    /// whitespace), then quoted with escapes.
    pub(crate) fn canonical(&self) -> String {
        match self {
            ParamValue::Int(v) => v.to_string(),
            ParamValue::Float(v) => format!("{v:?}"),
            ParamValue::Text(t) if needs_quoting(t) => format!("{t:?}"),
            ParamValue::Text(t) => t.to_string(),
            ParamValue::Bool(b) => b.to_string(),
            ParamValue::Null => "null".to_string(),
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, ParamValue::Null)
    }

    /// The value as a table cell shows it: its [`Display`](fmt::Display) form, `-` for `Null`.
    pub(crate) fn shown(&self) -> String {
        match self {
            ParamValue::Null => "-".to_string(),
            other => other.to_string(),
        }
    }
}

fn needs_quoting(text: &str) -> bool {
    text.is_empty()
        || text
            .chars()
            .any(|c| matches!(c, ';' | '=' | '"' | '\\') || c.is_whitespace() || c.is_control())
}

impl fmt::Display for ParamValue {
    /// The value as a person reads it in a table: floats with `{:?}` so 1.0 stays a float.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v:?}"),
            ParamValue::Text(t) => f.write_str(t),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Null => Ok(()),
        }
    }
}

crate::closed_names! {
    /// The sections whose keys describe a job (and may be swept).
    pub enum Section {
        Model = "model",
        Data = "data",
        Sampler = "sampler",
        Output = "output",
    }
}

/// The type a key's value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueType {
    Integer,
    /// A float; integers are accepted and converted (`length_scale = 1` means 1.0).
    Float,
    Text,
    Bool,
    /// One of the listed words (the names of a closed enum).
    Choice(&'static [&'static str]),
    /// One of the words the registry lists for the key (`model.family`: the families;
    /// `sampler.kind`: every family's sampler kinds), see [`KeyCatalog::rule`].
    RegistryWords,
    /// A float, or one of the listed words (e.g. `mean = "auto"`).
    FloatOrWord(&'static [&'static str]),
    /// A float, or a word that resolution turns into a float (`offset = "log-area"`): the
    /// canonical key and the column hold the number.
    FloatOrAlias(&'static [&'static str]),
    /// An integer D >= 1, or an array `[Dx, Dy]` or `[D]` of them (`model.grid`; see
    /// [`super::shape::GridShape`]).
    GridShape,
    /// `[[x0, x1], [y0, y1]]` or `[[x0, x1]]` (`model.window`; see
    /// [`super::shape::WindowSpec`]).
    Window,
    /// Rows of numbers, `[[0.9, 0.1], [0.5, 0.5]]` (a matrix given inline); kept as the text of
    /// its canonical form, numbers with `{:?}`.
    Rows,
    /// An array of numbers, `[0.0, 1.5]` (a vector given inline); kept as the text of its
    /// canonical form, numbers with `{:?}`.
    Numbers,
    /// A list of names: an array of strings, `["elev", "grad"]`, or one string of names
    /// separated by commas, `"elev,grad"`; kept as the text of the names joined by commas.
    Words,
}

impl ValueType {
    /// "an integer", "a float", "a string": how error messages name the type.
    pub(crate) fn article_name(self) -> &'static str {
        match self {
            ValueType::Integer => "an integer",
            ValueType::Float => "a float",
            ValueType::Text | ValueType::Choice(_) | ValueType::RegistryWords => "a string",
            ValueType::Bool => "a boolean (true or false)",
            ValueType::FloatOrWord(_) | ValueType::FloatOrAlias(_) => "a number or a string",
            // Arrays are named in the help of a type error (see `document::type_hint`).
            ValueType::GridShape => "an integer",
            ValueType::Window => "an array of one or two [start, end] pairs",
            ValueType::Rows => "an array of rows of numbers",
            ValueType::Numbers => "an array of numbers",
            ValueType::Words => "an array of strings",
        }
    }

    /// "integers", "numbers", "strings".
    pub(crate) fn plural(self) -> &'static str {
        match self {
            ValueType::Integer => "integers",
            ValueType::Float => "numbers",
            ValueType::Text | ValueType::Choice(_) | ValueType::RegistryWords => "strings",
            ValueType::Bool => "booleans",
            ValueType::FloatOrWord(_) | ValueType::FloatOrAlias(_) => "numbers or words",
            ValueType::GridShape => "grid sizes (D, [Dx, Dy] or [D])",
            ValueType::Window => "windows",
            ValueType::Rows => "arrays of rows of numbers",
            ValueType::Numbers => "arrays of numbers",
            ValueType::Words => "arrays of strings",
        }
    }
}

/// The range a value must lie in, checked key by key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// Anything of the key's type.
    Any,
    /// An integer in lo..=hi.
    IntRange(i64, i64),
    /// A finite float > 0.
    Positive,
    /// Any finite float.
    Finite,
    /// A finite float in [0, 1).
    UnitInterval,
    /// A float strictly between 0 and 1.
    OpenUnitInterval,
    /// One of the listed words.
    OneOf(&'static [&'static str]),
    /// A non-empty string.
    NonEmpty,
    /// `"fixed"`, or a hyperparameter prior such as `"log-normal(-1.2, 0.5)"`
    /// ([`crate::model::hyper::HyperPrior`]).
    HyperPrior,
    /// `"normal(0, s)"` with s > 0: the covariate coefficients' prior
    /// ([`crate::model::hyper::coefficient_prior_sd`]).
    CoefficientPrior,
}

impl Rule {
    /// The allowed values in words, for the "allowed:" line of an error.
    pub(crate) fn describe(self) -> String {
        match self {
            Rule::Any => "any value of the key's type".to_string(),
            Rule::IntRange(lo, i64::MAX) => format!("an integer >= {lo}"),
            Rule::IntRange(lo, hi) => format!("an integer from {lo} to {hi}"),
            Rule::Positive => "a finite number > 0".to_string(),
            Rule::Finite => "a finite number".to_string(),
            Rule::UnitInterval => "a number in [0, 1) (0 included, 1 excluded)".to_string(),
            Rule::OpenUnitInterval => "a number strictly between 0 and 1".to_string(),
            Rule::OneOf(words) => quoted_words(words),
            Rule::NonEmpty => "a non-empty string".to_string(),
            Rule::HyperPrior => format!(
                "\"fixed\", or a prior: {}",
                crate::model::hyper::PRIOR_FORMS
            ),
            Rule::CoefficientPrior => "\"normal(0, s)\" with s > 0".to_string(),
        }
    }

    /// Whether `value` (already of the key's type) satisfies the rule.
    pub(crate) fn admits(self, value: &ParamValue) -> bool {
        match (self, value) {
            (Rule::Any, _) => true,
            (Rule::IntRange(lo, hi), ParamValue::Int(v)) => (lo..=hi).contains(v),
            (Rule::Positive, ParamValue::Float(v)) => v.is_finite() && *v > 0.0,
            (Rule::Finite, ParamValue::Float(v)) => v.is_finite(),
            (Rule::UnitInterval, ParamValue::Float(v)) => (0.0..1.0).contains(v),
            (Rule::OpenUnitInterval, ParamValue::Float(v)) => *v > 0.0 && *v < 1.0,
            (Rule::OneOf(words), ParamValue::Text(t)) => words.contains(&&**t),
            (Rule::NonEmpty, ParamValue::Text(t)) => !t.trim().is_empty(),
            (Rule::HyperPrior, ParamValue::Text(t)) => {
                &**t == FIXED || crate::model::hyper::HyperPrior::parse(t).is_ok()
            }
            (Rule::CoefficientPrior, ParamValue::Text(t)) => {
                crate::model::hyper::coefficient_prior_sd(t).is_some()
            }
            _ => false,
        }
    }
}

/// `"a" | "b" | "c"`.
pub(crate) fn quoted_words(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A key's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Default {
    Int(i64),
    Float(f64),
    Text(&'static str),
    Bool(bool),
    /// Follows other keys; the text says how (for the documentation). Resolution computes it.
    Derived(&'static str),
    /// None: the key must be given where it applies.
    Required,
}

impl Default {
    /// The default as a value, where it does not depend on other keys (no allocation: text is
    /// a declared word).
    pub(crate) fn value(self) -> Option<ParamValue> {
        match self {
            Default::Int(v) => Some(ParamValue::Int(v)),
            Default::Float(v) => Some(ParamValue::Float(v)),
            Default::Text(t) => Some(ParamValue::word(t)),
            Default::Bool(b) => Some(ParamValue::Bool(b)),
            Default::Derived(_) | Default::Required => None,
        }
    }

    /// How the documentation shows it.
    pub(crate) fn describe(self) -> String {
        match self {
            Default::Derived(how) => how.to_string(),
            Default::Required => "none (required)".to_string(),
            Default::Text(t) => format!("`\"{t}\"`"),
            other => other.value().map(|v| v.canonical()).unwrap_or_default(),
        }
    }
}

/// When a key applies to a job; elsewhere its value is `Null` and giving it is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applies {
    Always,
    /// Only with these `data.source`s (their words).
    Source(&'static [&'static str]),
}

/// Whether a key's value is part of a job's canonical key (and so of its id and streams).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyed {
    Always,
    /// Only when it differs from its default: keys added after the first release, so that the
    /// jobs of existing studies keep their ids and their numbers.
    UnlessDefault,
    /// Never: the key changes what is written, not what is computed (`[output]`), so it must
    /// not change a job's random streams.
    Never,
}

/// How figures name a parameter: a short name in legends ("D", "β"; empty when the value
/// speaks for itself, a sampler kind) and a descriptive axis title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label {
    pub(crate) short: &'static str,
    pub(crate) title: &'static str,
}

impl Label {
    pub(crate) const fn new(short: &'static str, title: &'static str) -> Option<Label> {
        Some(Label { short, title })
    }
}

/// The declaration of one key.
#[derive(Debug)]
pub(crate) struct KeyDecl {
    pub(crate) section: Section,
    pub(crate) name: &'static str,
    /// "section.key", as written in `[sweep]`.
    pub(crate) dotted: &'static str,
    /// "section_key", the column in job tables.
    pub(crate) column: &'static str,
    pub(crate) doc: &'static str,
    pub(crate) value: ValueType,
    pub(crate) rule: Rule,
    pub(crate) default: Default,
    pub(crate) applies: Applies,
    pub(crate) keyed: Keyed,
    /// How figures name it; `None`: by its name.
    pub(crate) label: Option<Label>,
}

impl KeyDecl {
    /// The fields most keys share; a declaration overrides what differs.
    pub(crate) const BASE: KeyDecl = KeyDecl {
        section: Section::Model,
        name: "",
        dotted: "",
        column: "",
        doc: "",
        value: ValueType::Float,
        rule: Rule::Any,
        default: Default::Required,
        applies: Applies::Always,
        keyed: Keyed::Always,
        label: None,
    };
}

/// A key: a handle on its declaration. Two keys are equal when they are the same declaration.
#[derive(Clone, Copy)]
pub struct Key(&'static KeyDecl);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Key {}

/// Keys sort by their "section.key" name.
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.dotted().cmp(other.dotted())
    }
}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state);
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.decl().dotted)
    }
}

impl Key {
    /// The key of a declaration held in a `static` (what [`declare_keys!`] generates).
    pub(crate) const fn declared(decl: &'static KeyDecl) -> Key {
        Key(decl)
    }

    pub(crate) fn decl(self) -> &'static KeyDecl {
        self.0
    }

    pub(crate) fn section(self) -> Section {
        self.decl().section
    }

    /// The key's name inside its section.
    pub(crate) fn name(self) -> &'static str {
        self.decl().name
    }

    /// "section.key", as written in `[sweep]` and in canonical keys.
    pub fn dotted(self) -> &'static str {
        self.decl().dotted
    }

    /// "section_key", the column name in job tables.
    pub fn column(self) -> &'static str {
        self.decl().column
    }

    pub(crate) fn value_type(self) -> ValueType {
        self.decl().value
    }

    /// The default value, or `None` where it depends on other keys or there is none.
    pub(crate) fn default_value(self) -> Option<ParamValue> {
        self.decl().default.value()
    }

    pub(crate) fn applies(self) -> Applies {
        self.decl().applies
    }

    pub(crate) fn keyed(self) -> Keyed {
        self.decl().keyed
    }

    pub(crate) fn doc(self) -> &'static str {
        self.decl().doc.trim()
    }
}

/// Declare keys: one entry per key, `CONSTANT = section.name { field: value, ... },` (the fields
/// not given taken from [`KeyDecl::BASE`]; doc comments become the key's documentation), and
/// `use CONSTANT,` for a key declared elsewhere that the list includes. Declares the `static`
/// array of the declarations, each key's constant, and the list of every key in the order given
/// (the order of the family's job-table columns):
///
/// ```ignore
/// declare_keys! {
///     static DECLS; pub const KEYS;
///     use MODEL_FAMILY,
///     /// The number of topics.
///     MODEL_TOPICS = model.topics { value: ValueType::Integer, default: Default::Int(5) },
/// }
/// ```
#[macro_export]
macro_rules! declare_keys {
    (static $decls:ident; $vis:vis const $list:ident; $($body:tt)*) => {
        $crate::declare_keys!(@munch [$decls $vis $list] [] [] $($body)*);
    };
    (@munch $head:tt [$($own:tt)*] [$($all:ident)*] use $shared:ident, $($rest:tt)*) => {
        $crate::declare_keys!(@munch $head [$($own)*] [$($all)* $shared] $($rest)*);
    };
    (@munch $head:tt [$($own:tt)*] [$($all:ident)*]
        $(#[doc = $doc:literal])*
        $konst:ident = $section:ident . $name:ident { $($field:ident : $value:expr),* $(,)? },
        $($rest:tt)*
    ) => {
        $crate::declare_keys!(@munch $head
            [$($own)* { [$($doc)*] $konst $section $name [$($field : $value),*] }]
            [$($all)* $konst]
            $($rest)*);
    };
    (@munch [$decls:ident $vis:vis $list:ident]
        [$({ [$($doc:literal)*] $konst:ident $section:ident $name:ident [$($field:ident : $value:expr),*] })*]
        [$($all:ident)*]
    ) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u16)]
        enum KeyId {
            $($konst),*
        }

        /// Every declaration of this list, in declaration order.
        static $decls: [$crate::study::keys::KeyDecl; [$(KeyId::$konst),*].len()] = [$(
            $crate::study::keys::KeyDecl {
                section: $crate::study::keys::section_named(stringify!($section)),
                name: stringify!($name),
                dotted: concat!(stringify!($section), ".", stringify!($name)),
                column: concat!(stringify!($section), "_", stringify!($name)),
                doc: concat!($($doc),*),
                $($field: $value,)*
                ..$crate::study::keys::KeyDecl::BASE
            }
        ),*];

        $(
            #[doc = concat!("`", stringify!($section), ".", stringify!($name), "`:", $($doc),*)]
            pub const $konst: $crate::study::keys::Key =
                $crate::study::keys::Key::declared(&$decls[KeyId::$konst as usize]);
        )*

        /// Every key of the list, in column order.
        $vis const $list: &[$crate::study::keys::Key] = &[$($all),*];
    };
}

/// The section an identifier names (used by [`declare_keys!`] at compile time).
pub(crate) const fn section_named(name: &str) -> Section {
    match name.as_bytes() {
        b"model" => Section::Model,
        b"data" => Section::Data,
        b"sampler" => Section::Sampler,
        b"output" => Section::Output,
        _ => panic!("unknown section in a key declaration"),
    }
}

/// The value of a `model.*_prior` key that keeps its hyperparameter fixed.
pub(crate) const FIXED: &str = "fixed";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_floats_round_trip_and_text_is_quoted_only_when_ambiguous() {
        assert_eq!(ParamValue::Float(0.3).canonical(), "0.3");
        assert_eq!(ParamValue::Float(1.0).canonical(), "1.0");
        assert_eq!(
            ParamValue::Float(0.1 + 0.2).canonical(),
            "0.30000000000000004"
        );
        assert_eq!(ParamValue::text("pcn").canonical(), "pcn");
        assert_eq!(ParamValue::text("a;b").canonical(), "\"a;b\"");
        assert_eq!(
            ParamValue::text("my data.csv").canonical(),
            "\"my data.csv\""
        );
        assert_eq!(ParamValue::Bool(true).canonical(), "true");
    }

    #[test]
    fn rules_reject_out_of_range_values() {
        assert!(!Rule::Positive.admits(&ParamValue::Float(0.0)));
        assert!(!Rule::Positive.admits(&ParamValue::Float(f64::NAN)));
        assert!(!Rule::Positive.admits(&ParamValue::Float(f64::INFINITY)));
        assert!(Rule::UnitInterval.admits(&ParamValue::Float(0.0)));
        assert!(!Rule::UnitInterval.admits(&ParamValue::Float(1.0)));
        assert!(!Rule::OpenUnitInterval.admits(&ParamValue::Float(0.0)));
        assert!(!Rule::IntRange(1, 64).admits(&ParamValue::Int(65)));
    }

    #[test]
    fn keys_are_equal_when_their_declarations_are_the_same() {
        assert_eq!(SAMPLER_ITERATIONS, SAMPLER_ITERATIONS);
        assert_ne!(SAMPLER_ITERATIONS, SAMPLER_BURN_IN);
        assert_eq!(SAMPLER_ITERATIONS.dotted(), "sampler.iterations");
        assert_eq!(SAMPLER_ITERATIONS.column(), "sampler_iterations");
    }
}
