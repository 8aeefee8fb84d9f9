//! The settings a study can give for its jobs (every key of `[model]`, `[data]` and `[sampler]`):
//! their names, types, defaults and the range each value must lie in on its own. Checks that
//! involve two keys (burn-in against iterations, beta against the sampler kind, ...) live in
//! [`super::resolve`].

use std::fmt;

/// One resolved parameter value, as it appears in job tables and canonical keys.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Text(String),
    /// The parameter does not apply to this job (e.g. `data_path` for simulated data).
    Null,
}

impl ParamValue {
    /// The value as written in canonical keys: integers in decimal, floats with `{:?}` (shortest
    /// round-trip, so 0.3 is always "0.3" and 1 is "1.0"), text as is unless it holds a character
    /// that would make a key ambiguous (`;`, `=`, `"`, whitespace), then quoted with escapes.
    pub fn canonical(&self) -> String {
        match self {
            ParamValue::Int(v) => v.to_string(),
            ParamValue::Float(v) => format!("{v:?}"),
            ParamValue::Text(t) if needs_quoting(t) => format!("{t:?}"),
            ParamValue::Text(t) => t.clone(),
            ParamValue::Null => "null".to_string(),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, ParamValue::Null)
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
            ParamValue::Null => Ok(()),
        }
    }
}

/// The sections whose keys describe a job (and may be swept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    Model,
    Data,
    Sampler,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Model, Section::Data, Section::Sampler];

    pub fn name(self) -> &'static str {
        match self {
            Section::Model => "model",
            Section::Data => "data",
            Section::Sampler => "sampler",
        }
    }

    pub fn from_name(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The keys of this section, in the order of the documentation.
    pub fn keys(self) -> impl Iterator<Item = Key> {
        Key::ALL.into_iter().filter(move |k| k.section() == self)
    }
}

/// The type a key's value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Integer,
    /// A float; integers are accepted and converted (`length_scale = 1` means 1.0).
    Float,
    Text,
}

impl ValueType {
    /// "an integer", "a float", "a string": how error messages name the type.
    pub fn article_name(self) -> &'static str {
        match self {
            ValueType::Integer => "an integer",
            ValueType::Float => "a float",
            ValueType::Text => "a string",
        }
    }

    /// "integers", "numbers", "strings".
    pub fn plural(self) -> &'static str {
        match self {
            ValueType::Integer => "integers",
            ValueType::Float => "numbers",
            ValueType::Text => "strings",
        }
    }
}

/// The range a value must lie in, checked key by key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// An integer in lo..=hi.
    IntRange(i64, i64),
    /// A finite float > 0.
    Positive,
    /// Any finite float.
    Finite,
    /// A finite float in [0, 1).
    UnitInterval,
    /// One of the listed words.
    OneOf(&'static [&'static str]),
    /// A non-empty string.
    NonEmpty,
}

impl Rule {
    /// The allowed values in words, for the "allowed:" line of an error.
    pub fn describe(self) -> String {
        match self {
            Rule::IntRange(lo, i64::MAX) => format!("an integer >= {lo}"),
            Rule::IntRange(lo, hi) => format!("an integer from {lo} to {hi}"),
            Rule::Positive => "a finite number > 0".to_string(),
            Rule::Finite => "a finite number".to_string(),
            Rule::UnitInterval => "a number in [0, 1) (0 included, 1 excluded)".to_string(),
            Rule::OneOf(words) => words
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" | "),
            Rule::NonEmpty => "a non-empty string".to_string(),
        }
    }

    /// Whether `value` (already of the key's type) satisfies the rule.
    pub fn admits(self, value: &ParamValue) -> bool {
        match (self, value) {
            (Rule::IntRange(lo, hi), ParamValue::Int(v)) => (lo..=hi).contains(v),
            (Rule::Positive, ParamValue::Float(v)) => v.is_finite() && *v > 0.0,
            (Rule::Finite, ParamValue::Float(v)) => v.is_finite(),
            (Rule::UnitInterval, ParamValue::Float(v)) => (0.0..1.0).contains(v),
            (Rule::OneOf(words), ParamValue::Text(t)) => words.contains(&t.as_str()),
            (Rule::NonEmpty, ParamValue::Text(t)) => !t.trim().is_empty(),
            _ => false,
        }
    }
}

pub const KERNELS: &[&str] = &["squared-exponential"];
pub const LIKELIHOODS: &[&str] = &["gaussian", "probit", "poisson"];
pub const SOURCES: &[&str] = &["simulated", "csv"];
pub const SAMPLERS: &[&str] = crate::sampler::SamplerKind::NAMES;
/// More chains than this in one job is almost surely a typo (chains run inside one job).
pub const MAX_CHAINS: i64 = 64;
/// Prior draws for the evidence estimate: past this the estimate costs more than the chains.
pub const MAX_EVIDENCE_DRAWS: i64 = 10_000_000;

/// Every key of `[model]`, `[data]` and `[sampler]`, in the fixed order of job tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    ModelGrid,
    ModelKernel,
    ModelLengthScale,
    ModelVariance,
    ModelLikelihood,
    ModelOffset,
    ModelEvidenceDraws,
    DataSource,
    DataLengthScale,
    DataSubsample,
    DataNoiseSd,
    DataPath,
    DataColumn,
    DataHoldout,
    SamplerKind,
    SamplerBeta,
    SamplerIterations,
    SamplerBurnIn,
    SamplerThin,
    SamplerChains,
}

impl Key {
    pub const COUNT: usize = 20;
    pub const ALL: [Key; Key::COUNT] = [
        Key::ModelGrid,
        Key::ModelKernel,
        Key::ModelLengthScale,
        Key::ModelVariance,
        Key::ModelLikelihood,
        Key::ModelOffset,
        Key::ModelEvidenceDraws,
        Key::DataSource,
        Key::DataLengthScale,
        Key::DataSubsample,
        Key::DataNoiseSd,
        Key::DataPath,
        Key::DataColumn,
        Key::DataHoldout,
        Key::SamplerKind,
        Key::SamplerBeta,
        Key::SamplerIterations,
        Key::SamplerBurnIn,
        Key::SamplerThin,
        Key::SamplerChains,
    ];

    /// Position in [`Key::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn section(self) -> Section {
        use Key::*;
        match self {
            ModelGrid | ModelKernel | ModelLengthScale | ModelVariance | ModelLikelihood
            | ModelOffset | ModelEvidenceDraws => Section::Model,
            DataSource | DataLengthScale | DataSubsample | DataNoiseSd | DataPath | DataColumn
            | DataHoldout => Section::Data,
            SamplerKind | SamplerBeta | SamplerIterations | SamplerBurnIn | SamplerThin
            | SamplerChains => Section::Sampler,
        }
    }

    /// The key's name inside its section.
    pub fn name(self) -> &'static str {
        use Key::*;
        match self {
            ModelGrid => "grid",
            ModelKernel => "kernel",
            ModelLengthScale | DataLengthScale => "length_scale",
            ModelVariance => "variance",
            ModelLikelihood => "likelihood",
            ModelOffset => "offset",
            ModelEvidenceDraws => "evidence_draws",
            DataSource => "source",
            DataSubsample => "subsample",
            DataNoiseSd => "noise_sd",
            DataPath => "path",
            DataColumn => "column",
            DataHoldout => "holdout",
            SamplerKind => "kind",
            SamplerBeta => "beta",
            SamplerIterations => "iterations",
            SamplerBurnIn => "burn_in",
            SamplerThin => "thin",
            SamplerChains => "chains",
        }
    }

    /// "section.key", as written in `[sweep]` and in canonical keys.
    pub fn dotted(self) -> String {
        format!("{}.{}", self.section().name(), self.name())
    }

    /// "section_key", the column name in job tables.
    pub fn column(self) -> String {
        format!("{}_{}", self.section().name(), self.name())
    }

    pub fn find(section: Section, name: &str) -> Option<Key> {
        section.keys().find(|k| k.name() == name)
    }

    /// Parse "section.key".
    pub fn from_dotted(dotted: &str) -> Option<Key> {
        let (section, name) = dotted.split_once('.')?;
        Key::find(Section::from_name(section)?, name)
    }

    pub fn value_type(self) -> ValueType {
        use Key::*;
        match self {
            ModelGrid | ModelEvidenceDraws | DataSubsample | SamplerIterations | SamplerBurnIn
            | SamplerThin | SamplerChains => ValueType::Integer,
            ModelKernel | ModelLikelihood | DataSource | DataPath | DataColumn | SamplerKind => {
                ValueType::Text
            }
            ModelLengthScale | ModelVariance | ModelOffset | DataLengthScale | DataNoiseSd
            | DataHoldout | SamplerBeta => ValueType::Float,
        }
    }

    pub fn rule(self) -> Rule {
        use Key::*;
        match self {
            ModelGrid | DataSubsample | SamplerIterations | SamplerThin => {
                Rule::IntRange(1, i64::MAX)
            }
            SamplerBurnIn => Rule::IntRange(0, i64::MAX),
            ModelEvidenceDraws => Rule::IntRange(0, MAX_EVIDENCE_DRAWS),
            SamplerChains => Rule::IntRange(1, MAX_CHAINS),
            ModelKernel => Rule::OneOf(KERNELS),
            ModelLikelihood => Rule::OneOf(LIKELIHOODS),
            DataSource => Rule::OneOf(SOURCES),
            SamplerKind => Rule::OneOf(SAMPLERS),
            DataPath | DataColumn => Rule::NonEmpty,
            ModelLengthScale | ModelVariance | DataLengthScale | DataNoiseSd => Rule::Positive,
            ModelOffset | SamplerBeta => Rule::Finite,
            DataHoldout => Rule::UnitInterval,
        }
    }

    /// The default, or `None` where it depends on other keys (data.length_scale follows the
    /// model's, data.column follows the likelihood) or there is none (data.path).
    pub fn default_value(self) -> Option<ParamValue> {
        use Key::*;
        let text = |t: &str| Some(ParamValue::Text(t.to_string()));
        match self {
            ModelGrid => Some(ParamValue::Int(16)),
            ModelKernel => text("squared-exponential"),
            ModelLengthScale => Some(ParamValue::Float(0.3)),
            ModelVariance => Some(ParamValue::Float(1.0)),
            ModelLikelihood => text("gaussian"),
            ModelOffset => Some(ParamValue::Float(0.0)),
            ModelEvidenceDraws => Some(ParamValue::Int(0)),
            DataSource => text("simulated"),
            DataLengthScale | DataPath | DataColumn => None,
            DataSubsample => Some(ParamValue::Int(4)),
            DataNoiseSd => Some(ParamValue::Float(1.0)),
            DataHoldout => Some(ParamValue::Float(0.2)),
            SamplerKind => text("pcn"),
            SamplerBeta => Some(ParamValue::Float(0.2)),
            SamplerIterations => Some(ParamValue::Int(10_000)),
            SamplerBurnIn => Some(ParamValue::Int(0)),
            SamplerThin => Some(ParamValue::Int(10)),
            SamplerChains => Some(ParamValue::Int(1)),
        }
    }

    /// The key only applies when `data.source` is this value.
    pub fn only_for_source(self) -> Option<&'static str> {
        match self {
            Key::DataLengthScale | Key::DataSubsample => Some("simulated"),
            Key::DataPath | Key::DataColumn | Key::DataHoldout => Some("csv"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_table_is_consistent() {
        for (i, key) in Key::ALL.into_iter().enumerate() {
            assert_eq!(key.index(), i);
            assert_eq!(Key::from_dotted(&key.dotted()), Some(key));
            if let Some(default) = key.default_value() {
                assert!(
                    key.rule().admits(&default),
                    "{key:?} default breaks its rule"
                );
            }
        }
        assert_eq!(Key::from_dotted("model.lenght_scale"), None);
        assert_eq!(Key::from_dotted("study.seed"), None);
    }

    #[test]
    fn canonical_floats_round_trip_and_text_is_quoted_only_when_ambiguous() {
        assert_eq!(ParamValue::Float(0.3).canonical(), "0.3");
        assert_eq!(ParamValue::Float(1.0).canonical(), "1.0");
        assert_eq!(
            ParamValue::Float(0.1 + 0.2).canonical(),
            "0.30000000000000004"
        );
        assert_eq!(ParamValue::Text("pcn".into()).canonical(), "pcn");
        assert_eq!(ParamValue::Text("a;b".into()).canonical(), "\"a;b\"");
        assert_eq!(
            ParamValue::Text("my data.csv".into()).canonical(),
            "\"my data.csv\""
        );
    }

    #[test]
    fn rules_reject_out_of_range_values() {
        assert!(!Rule::Positive.admits(&ParamValue::Float(0.0)));
        assert!(!Rule::Positive.admits(&ParamValue::Float(f64::NAN)));
        assert!(!Rule::Positive.admits(&ParamValue::Float(f64::INFINITY)));
        assert!(Rule::UnitInterval.admits(&ParamValue::Float(0.0)));
        assert!(!Rule::UnitInterval.admits(&ParamValue::Float(1.0)));
        assert!(!Rule::IntRange(1, 64).admits(&ParamValue::Int(65)));
        assert!(!Rule::OneOf(SAMPLERS).admits(&ParamValue::Text("hmc".into())));
    }
}
