//! Reading the parsed TOML document: the sections, the `[study]` and `[sbc]` headers, and the
//! base settings of `[model]`, `[data]`, `[sampler]` and `[output]`, each value checked for type
//! and range where it stands, so every error points at the offending text.

use std::borrow::Cow;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ErrorKind, SourceMap, StudyError};
use super::keys::{Key, KeyCatalog, ParamValue, Rule, Section, ValueType};
use super::shape::{GridShape, WindowSpec};
use super::suggest::{did_you_mean, nearest};
use super::{SbcSpec, Setting, Settings, StudyKind};
use crate::names::ClosedNames;

/// The most jobs (sweep points times replicates) one study may expand to. `check` and `plan`
/// hold one sweep point at a time, but `run` builds every job (about 4 KB each, with its
/// parameters and keys): about 4 GB at this cap. Beyond it, split the study.
pub const MAX_JOBS: i64 = 1_000_000;

/// The top-level sections a study may have.
pub(crate) const SECTIONS: [&str; 7] = [
    "study", "model", "data", "sampler", "output", "sbc", "sweep",
];
pub(crate) const STUDY_KEYS: [&str; 5] = ["name", "seed", "replicates", "kind", "description"];
pub(crate) const SBC_KEYS: [&str; 2] = ["replications", "draws"];

/// What reading a study needs: its text (to locate errors) and every key it may give.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    pub(crate) source: SourceMap<'a>,
    pub(crate) keys: &'a KeyCatalog,
}

pub(crate) type TomlKey<'i> = Spanned<Cow<'i, str>>;
pub(crate) type TomlValue<'i> = Spanned<DeValue<'i>>;

/// A table's entries in the order they appear in the file (the parser keeps them sorted by
/// name), so the first problem in the file is the one reported.
pub(crate) fn entries_in_file_order<'a, 'i>(
    table: &'a DeTable<'i>,
) -> Vec<(&'a TomlKey<'i>, &'a TomlValue<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// "an integer", "a float", ...: the TOML type of a value, for messages.
pub(crate) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// Parse the text as TOML. Syntax errors (duplicate keys included) are located; a document
/// with no settings at all is an error too.
pub(crate) fn parse_document<'i>(source: &SourceMap<'i>) -> Result<DeTable<'i>, StudyError> {
    let document = DeTable::parse(source.text).map_err(|error| syntax_error(source, &error))?;
    let document = document.into_inner();
    if document.is_empty() {
        return Err(source
            .error_at_start(ErrorKind::Empty, "the study file is empty")
            .help(
                "a study needs at least one section: [study], [model], [data], [sampler] or \
                 [sweep]; see studies/quickstart.toml",
            ));
    }
    Ok(document)
}

fn syntax_error(source: &SourceMap<'_>, error: &toml::de::Error) -> StudyError {
    let span = error.span().unwrap_or(0..0);
    let what = error.message().trim().replace('\n', "; ");
    if what.starts_with("duplicate key") {
        let key = source.slice(&span).trim();
        return source
            .error(ErrorKind::Syntax, &span, format!("duplicate key `{key}`"))
            .help("a key (or a [table]) may be given only once; remove one of them");
    }
    source.error(
        ErrorKind::Syntax,
        &span,
        format!("TOML syntax error: {what}"),
    )
}

/// The top-level tables of a study, each with the span of its name.
#[derive(Default)]
pub(crate) struct Sections<'a, 'i> {
    pub(crate) study: Option<&'a DeTable<'i>>,
    pub(crate) model: Option<&'a DeTable<'i>>,
    pub(crate) data: Option<&'a DeTable<'i>>,
    pub(crate) sampler: Option<&'a DeTable<'i>>,
    pub(crate) output: Option<&'a DeTable<'i>>,
    pub(crate) sbc: Option<(&'a DeTable<'i>, Range<usize>)>,
    pub(crate) sweep: Option<&'a DeTable<'i>>,
}

impl<'a, 'i> Sections<'a, 'i> {
    /// Split the document into its sections; unknown sections, keys outside any section and
    /// sections that are not tables are errors.
    pub(crate) fn split(
        reader: &Reader<'_>,
        document: &'a DeTable<'i>,
    ) -> Result<Self, StudyError> {
        let source = &reader.source;
        let mut sections = Sections::default();
        for (key, value) in entries_in_file_order(document) {
            let name = key.get_ref().as_ref();
            let table = match value.get_ref() {
                DeValue::Table(table) if SECTIONS.contains(&name) => table,
                _ if SECTIONS.contains(&name) => {
                    return Err(not_a_section(source, name, key, value));
                }
                DeValue::Table(_) => return Err(unknown_section(source, name, &key.span())),
                _ => return Err(key_outside_sections(reader, name, &key.span())),
            };
            match name {
                "study" => sections.study = Some(table),
                "model" => sections.model = Some(table),
                "data" => sections.data = Some(table),
                "sampler" => sections.sampler = Some(table),
                "output" => sections.output = Some(table),
                "sbc" => sections.sbc = Some((table, key.span())),
                _ => sections.sweep = Some(table),
            }
        }
        Ok(sections)
    }

    pub(crate) fn section(&self, section: Section) -> Option<&'a DeTable<'i>> {
        match section {
            Section::Model => self.model,
            Section::Data => self.data,
            Section::Sampler => self.sampler,
            Section::Output => self.output,
        }
    }
}

fn not_a_section(
    source: &SourceMap<'_>,
    name: &str,
    key: &TomlKey<'_>,
    value: &TomlValue<'_>,
) -> StudyError {
    let found = match value.get_ref() {
        DeValue::Array(array) if array.iter().all(|v| v.get_ref().is_table()) => {
            "an array of tables".to_string()
        }
        other => type_name(other).to_string(),
    };
    source
        .error(
            ErrorKind::WrongType,
            &key.span(),
            format!("`{name}` must be a table ([{name}]), found {found}"),
        )
        .help(format!("write a [{name}] header and put its keys under it"))
}

fn unknown_section(source: &SourceMap<'_>, name: &str, span: &Range<usize>) -> StudyError {
    source
        .error(
            ErrorKind::UnknownSection,
            span,
            format!("unknown section [{name}]"),
        )
        .allowed(SECTIONS.map(|s| format!("[{s}]")).join(", "))
        .maybe_help(nearest(name, SECTIONS).map(|s| format!("did you mean [{s}]?")))
}

fn key_outside_sections(reader: &Reader<'_>, name: &str, span: &Range<usize>) -> StudyError {
    let home = section_holding(reader.keys, name);
    reader
        .source
        .error(
            ErrorKind::UnknownKey,
            span,
            format!("key `{name}` is outside any section"),
        )
        .allowed(SECTIONS.map(|s| format!("[{s}]")).join(", "))
        .maybe_help(home.map(|section| format!("put it under [{section}]")))
}

/// The section that has a key called `name`, if any.
fn section_holding(keys: &KeyCatalog, name: &str) -> Option<&'static str> {
    if STUDY_KEYS.contains(&name) {
        return Some("study");
    }
    if SBC_KEYS.contains(&name) {
        return Some("sbc");
    }
    Section::ALL
        .iter()
        .copied()
        .find(|s| keys.find(*s, name).is_some())
        .map(Section::name)
}

/// An "unknown key" error for `name` in [section], listing the allowed keys and suggesting the
/// nearest (or the section where the key belongs).
pub(crate) fn unknown_key(
    reader: &Reader<'_>,
    section: &str,
    name: &str,
    allowed: &[&str],
    span: &Range<usize>,
) -> StudyError {
    let elsewhere = section_holding(reader.keys, name)
        .filter(|home| *home != section)
        .map(|home| format!("`{name}` belongs in [{home}]"));
    let elsewhere = renamed_help(reader.keys, &format!("{section}.{name}")).or(elsewhere);
    reader
        .source
        .error(
            ErrorKind::UnknownKey,
            span,
            format!("unknown key `{name}` in [{section}]"),
        )
        .allowed(allowed.join(", "))
        .maybe_help(elsewhere.or_else(|| did_you_mean(name, allowed.iter().copied())))
}

/// "`old` is now `new`" for a renamed key.
pub(crate) fn renamed_help(keys: &KeyCatalog, dotted: &str) -> Option<String> {
    keys.renamed(dotted).map(|key| {
        format!(
            "`{dotted}` is now `{}`: one key for every family",
            key.dotted()
        )
    })
}

/// The `[study]` header, defaults applied (the name's default comes from the caller).
pub(crate) struct Header {
    pub(crate) name: Option<(String, Range<usize>)>,
    pub(crate) seed: u64,
    pub(crate) replicates: u32,
    pub(crate) kind: StudyKind,
    pub(crate) kind_span: Option<Range<usize>>,
    pub(crate) description: Option<String>,
}

pub(crate) fn read_header(
    reader: &Reader<'_>,
    table: Option<&DeTable<'_>>,
) -> Result<Header, StudyError> {
    let source = &reader.source;
    let mut header = Header {
        name: None,
        seed: 2020,
        replicates: 1,
        kind: StudyKind::Mcmc,
        kind_span: None,
        description: None,
    };
    let Some(table) = table else {
        return Ok(header);
    };
    for (key, value) in entries_in_file_order(table) {
        let name = key.get_ref().as_ref();
        match name {
            "name" => {
                let text = read_text(source, "study.name", value)?;
                header.name = Some((text, value.span()));
            }
            "seed" => header.seed = read_seed(source, value)?,
            "replicates" => {
                let replicates = read_int(
                    source,
                    "study.replicates",
                    value,
                    Rule::IntRange(1, MAX_JOBS),
                )?;
                header.replicates = u32::try_from(replicates).unwrap_or(u32::MAX);
            }
            "kind" => {
                header.kind = read_choice(source, "study.kind", value)?;
                header.kind_span = Some(value.span());
            }
            "description" => {
                header.description = Some(read_text(source, "study.description", value)?)
            }
            _ => return Err(unknown_key(reader, "study", name, &STUDY_KEYS, &key.span())),
        }
    }
    Ok(header)
}

/// `[sbc]`: only with `[study] kind = "sbc"`; with that kind it defaults to 100 x 100.
pub(crate) fn read_sbc(
    reader: &Reader<'_>,
    table: Option<(&DeTable<'_>, Range<usize>)>,
    kind: StudyKind,
) -> Result<Option<SbcSpec>, StudyError> {
    let source = &reader.source;
    let mut spec = SbcSpec {
        replications: 100,
        draws: 100,
    };
    match (table, kind) {
        (None, StudyKind::Mcmc) => return Ok(None),
        (None, StudyKind::Sbc) => return Ok(Some(spec)),
        (Some((_, span)), StudyKind::Mcmc) => {
            return Err(source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    "[sbc] applies only to simulation-based calibration studies",
                )
                .help("set kind = \"sbc\" under [study], or remove [sbc]"));
        }
        (Some((table, _)), StudyKind::Sbc) => {
            let bounds = Rule::IntRange(1, i64::from(u32::MAX));
            for (key, value) in entries_in_file_order(table) {
                let name = key.get_ref().as_ref();
                let count = match name {
                    "replications" | "draws" => {
                        read_int(source, &format!("sbc.{name}"), value, bounds)?
                    }
                    _ => return Err(unknown_key(reader, "sbc", name, &SBC_KEYS, &key.span())),
                };
                let count = u32::try_from(count).unwrap_or(u32::MAX);
                if name == "draws" {
                    spec.draws = count;
                } else {
                    spec.replications = count;
                }
            }
        }
    }
    Ok(Some(spec))
}

/// The base settings: every key given in `[model]`, `[data]` and `[sampler]`, checked.
pub(crate) fn read_settings(
    reader: &Reader<'_>,
    sections: &Sections<'_, '_>,
) -> Result<Settings, StudyError> {
    let source = &reader.source;
    let mut settings = Settings::default();
    let family_keys = given_family_keys(reader.keys, sections);
    for &section in Section::ALL {
        let Some(table) = sections.section(section) else {
            continue;
        };
        for (key, value) in entries_in_file_order(table) {
            let name = key.get_ref().as_ref();
            let Some(setting_key) = reader.keys.find(section, name) else {
                let allowed: Vec<&str> = family_keys
                    .iter()
                    .filter(|k| k.section() == section)
                    .map(|k| k.name())
                    .collect();
                return Err(unknown_key(
                    reader,
                    section.name(),
                    name,
                    &allowed,
                    &key.span(),
                ));
            };
            let takes_arrays = matches!(
                setting_key.value_type(),
                ValueType::GridShape
                    | ValueType::Window
                    | ValueType::Rows
                    | ValueType::Numbers
                    | ValueType::Words
            );
            if let (DeValue::Array(_), false) = (value.get_ref(), takes_arrays) {
                return Err(array_in_base(source, setting_key, value));
            }
            settings.set(
                setting_key,
                read_setting(reader, setting_key, value, false)?,
            );
        }
    }
    Ok(settings)
}

/// The keys of the family `[model]` names (the default family when it names none or no known
/// one): the keys an unknown key's message lists.
fn given_family_keys(keys: &KeyCatalog, sections: &Sections<'_, '_>) -> &'static [Key] {
    sections
        .section(Section::Model)
        .and_then(|model| model.get("family"))
        .and_then(|value| match value.get_ref() {
            DeValue::String(text) => keys.family_keys(text),
            _ => None,
        })
        .or_else(|| keys.family_keys(keys.default_family()))
        .unwrap_or_default()
}

fn array_in_base(source: &SourceMap<'_>, key: Key, value: &TomlValue<'_>) -> StudyError {
    source
        .error(
            ErrorKind::WrongType,
            &value.span(),
            format!(
                "wrong type for `{}`: expected {}, found an array",
                key.dotted(),
                key.value_type().article_name()
            ),
        )
        .help(format!(
            "to run several values, list them under [sweep]: \"{}\" = [...]",
            key.dotted()
        ))
}

/// One value of `key`, checked for type and range, located at its text.
pub(crate) fn read_setting(
    reader: &Reader<'_>,
    key: Key,
    value: &TomlValue<'_>,
    from_sweep: bool,
) -> Result<Setting, StudyError> {
    let source = &reader.source;
    let rule = reader.keys.rule(key);
    let what = key.dotted();
    let param = read_typed(source, what, key.value_type(), value)?;
    // Words and arrays are checked where they are read.
    let is_word = matches!(
        (key.value_type(), &param),
        (
            ValueType::FloatOrWord(_)
                | ValueType::FloatOrAlias(_)
                | ValueType::GridShape
                | ValueType::Window,
            ParamValue::Text(_)
        )
    );
    if !is_word {
        check_rule(source, what, rule, &param, &value.span())?;
    }
    let param = match rule {
        Rule::OneOf(words) => param.as_word_of(words),
        _ => param,
    };
    Ok(Setting {
        value: param,
        span: Some(value.span()),
        from_sweep,
    })
}

/// The value as `expected`: integers are accepted for floats; anything else of the wrong type
/// is an error.
pub(crate) fn read_typed(
    source: &SourceMap<'_>,
    what: &str,
    expected: ValueType,
    value: &TomlValue<'_>,
) -> Result<ParamValue, StudyError> {
    let span = value.span();
    let parsed = match (expected, value.get_ref()) {
        (ValueType::Integer, DeValue::Integer(int)) => {
            parse_int(int.as_str(), int.radix()).map(ParamValue::Int)
        }
        (ValueType::Float, DeValue::Integer(int)) => {
            parse_int(int.as_str(), int.radix()).map(|v| ParamValue::Float(v as f64))
        }
        (ValueType::Float, DeValue::Float(float)) => {
            parse_float(float.as_str()).map(ParamValue::Float)
        }
        (
            ValueType::Text | ValueType::Choice(_) | ValueType::RegistryWords,
            DeValue::String(text),
        ) => Some(ParamValue::text(text)),
        (ValueType::Bool, DeValue::Boolean(b)) => Some(ParamValue::Bool(*b)),
        (ValueType::GridShape, DeValue::Integer(int)) => {
            parse_int(int.as_str(), int.radix()).map(ParamValue::Int)
        }
        (ValueType::GridShape, DeValue::Array(items)) => {
            return read_grid_shape(source, what, items, &span);
        }
        (ValueType::Window, DeValue::Array(items)) => {
            return read_window(source, what, items, &span);
        }
        (ValueType::FloatOrWord(_) | ValueType::FloatOrAlias(_), DeValue::Integer(int)) => {
            parse_int(int.as_str(), int.radix()).map(|v| ParamValue::Float(v as f64))
        }
        (ValueType::FloatOrWord(_) | ValueType::FloatOrAlias(_), DeValue::Float(float)) => {
            parse_float(float.as_str()).map(ParamValue::Float)
        }
        (ValueType::Rows, DeValue::Array(rows)) => Some(read_rows(source, what, rows)?),
        (ValueType::Numbers, DeValue::Array(entries)) => {
            Some(ParamValue::text(&number_list(source, what, entries)?))
        }
        (ValueType::Words, DeValue::String(text)) => Some(ParamValue::text(text)),
        (ValueType::Words, DeValue::Array(entries)) => {
            Some(ParamValue::text(&word_list(source, what, entries)?))
        }
        (ValueType::FloatOrWord(words) | ValueType::FloatOrAlias(words), DeValue::String(text)) => {
            if !words.contains(&&**text) {
                return Err(source
                    .error(
                        ErrorKind::OutOfRange,
                        &span,
                        format!("unknown value {:?} for `{what}`", &**text),
                    )
                    .allowed(format!("a number, or {}", super::keys::quoted_words(words)))
                    .maybe_help(
                        did_you_mean(text, words.iter().copied()).map(|h| h.replace('`', "\"")),
                    ));
            }
            Some(ParamValue::text(text))
        }
        (_, found) => {
            let error = source.error(
                ErrorKind::WrongType,
                &span,
                format!(
                    "wrong type for `{what}`: expected {}, found {}",
                    expected.article_name(),
                    type_name(found)
                ),
            );
            return Err(error.maybe_help(type_hint(expected, found)));
        }
    };
    parsed.ok_or_else(|| {
        source
            .error(
                ErrorKind::OutOfRange,
                &span,
                format!(
                    "`{what}` = {} does not fit in a 64-bit number",
                    source.slice(&span)
                ),
            )
            .allowed(format!(
                "{} between -9223372036854775808 and 9223372036854775807",
                expected.article_name()
            ))
    })
}

/// `[Dx, Dy]` or `[D]`, each an integer >= 1.
fn read_grid_shape(
    source: &SourceMap<'_>,
    what: &str,
    items: &[TomlValue<'_>],
    span: &Range<usize>,
) -> Result<ParamValue, StudyError> {
    let mut sizes = Vec::with_capacity(items.len());
    for item in items {
        let param = read_typed(source, what, ValueType::Integer, item)?;
        check_rule(
            source,
            what,
            Rule::IntRange(1, i64::MAX),
            &param,
            &item.span(),
        )?;
        if let ParamValue::Int(size) = param {
            sizes.push(size as usize);
        }
    }
    GridShape::from_list(&sizes)
        .map(GridShape::to_param)
        .ok_or_else(|| {
            source
                .error(
                    ErrorKind::OutOfRange,
                    span,
                    format!(
                        "`{what}` = {} has {} sizes",
                        source.slice(span),
                        items.len()
                    ),
                )
                .allowed("D (a D x D grid), [Dx, Dy] (rectangular) or [D] (1-D)")
        })
}

/// `[[x0, x1], [y0, y1]]` or `[[x0, x1]]`, finite numbers with x0 < x1 and y0 < y1.
fn read_window(
    source: &SourceMap<'_>,
    what: &str,
    items: &[TomlValue<'_>],
    span: &Range<usize>,
) -> Result<ParamValue, StudyError> {
    let allowed = "[[x0, x1], [y0, y1]] (a 2-D grid) or [[x0, x1]] (a 1-D grid), x0 < x1, y0 < y1";
    let mut ranges = Vec::with_capacity(items.len());
    for item in items {
        let pair = match item.get_ref() {
            DeValue::Array(pair) if pair.len() == 2 => pair,
            _ => {
                return Err(source
                    .error(
                        ErrorKind::WrongType,
                        &item.span(),
                        format!(
                            "`{what}` needs [start, end] pairs, found {}",
                            source.slice(&item.span())
                        ),
                    )
                    .allowed(allowed));
            }
        };
        let mut ends = [0.0; 2];
        for (end, value) in ends.iter_mut().zip(pair.iter()) {
            if let ParamValue::Float(v) = read_typed(source, what, ValueType::Float, value)? {
                *end = v;
            }
        }
        ranges.push((ends[0], ends[1]));
    }
    let out_of_range = |message: String| {
        source
            .error(ErrorKind::OutOfRange, span, message)
            .allowed(allowed)
    };
    let spec = WindowSpec::from_ranges(&ranges).ok_or_else(|| {
        out_of_range(format!(
            "`{what}` = {} has {} ranges",
            source.slice(span),
            ranges.len()
        ))
    })?;
    if let Some(axis) = spec.bad_range() {
        return Err(out_of_range(format!(
            "`{what}` = {}: the {axis} range must be finite with start < end",
            source.slice(span)
        )));
    }
    Ok(spec.to_param())
}

/// Rows of numbers as the text of their canonical form, `[[0.9, 0.1], [0.5, 0.5]]`.
fn read_rows(
    source: &SourceMap<'_>,
    what: &str,
    rows: &[TomlValue<'_>],
) -> Result<ParamValue, StudyError> {
    let mut text = Vec::with_capacity(rows.len());
    for row in rows {
        let DeValue::Array(entries) = row.get_ref() else {
            return Err(source
                .error(
                    ErrorKind::WrongType,
                    &row.span(),
                    format!(
                        "`{what}`: each row must be an array of numbers, found {}",
                        type_name(row.get_ref())
                    ),
                )
                .allowed("rows of numbers, `[[a, b], [c, d]]`"));
        };
        text.push(number_list(source, what, entries)?);
    }
    Ok(ParamValue::text(&format!("[{}]", text.join(", "))))
}

/// An array of finite numbers as the text of its canonical form, `[0.5, 1.0]` (numbers with
/// `{:?}`, like [`read_rows`]' rows, so [`parse_numbers`] reads it back).
fn number_list(
    source: &SourceMap<'_>,
    what: &str,
    entries: &[TomlValue<'_>],
) -> Result<String, StudyError> {
    let mut numbers = Vec::with_capacity(entries.len());
    for entry in entries {
        match read_typed(source, what, ValueType::Float, entry)? {
            ParamValue::Float(v) if v.is_finite() => numbers.push(format!("{v:?}")),
            _ => {
                return Err(source
                    .error(
                        ErrorKind::OutOfRange,
                        &entry.span(),
                        format!("`{what}`: not a finite number"),
                    )
                    .allowed("finite numbers"));
            }
        }
    }
    Ok(format!("[{}]", numbers.join(", ")))
}

/// `["a", "b"]` as the text `a,b` (the form a comma-separated string gives), each name
/// non-empty and free of commas.
fn word_list(
    source: &SourceMap<'_>,
    what: &str,
    entries: &[TomlValue<'_>],
) -> Result<String, StudyError> {
    let mut words = Vec::with_capacity(entries.len());
    for entry in entries {
        match read_typed(source, what, ValueType::Text, entry)? {
            ParamValue::Text(word) if !word.trim().is_empty() && !word.contains(',') => {
                words.push(word.trim().to_string())
            }
            _ => {
                return Err(source
                    .error(
                        ErrorKind::OutOfRange,
                        &entry.span(),
                        format!("`{what}`: an empty name, or a name with a comma"),
                    )
                    .allowed("non-empty names without commas"));
            }
        }
    }
    Ok(words.join(","))
}

/// The names of a list-valued key's text (see [`word_list`]): split at commas, trimmed, empty
/// names dropped.
pub(crate) fn parse_words(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The numbers of a canonical number list (see [`number_list`]).
pub(crate) fn parse_numbers(text: &str) -> Vec<f64> {
    parse_rows(text).into_iter().next().unwrap_or_default()
}

/// The numbers of a canonical rows text (see [`read_rows`]).
pub(crate) fn parse_rows(text: &str) -> Vec<Vec<f64>> {
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .split("], [")
        .map(|row| {
            row.trim_matches(|c| c == '[' || c == ']')
                .split(", ")
                .filter(|s| !s.is_empty())
                .filter_map(|s| s.parse().ok())
                .collect()
        })
        .collect()
}

fn type_hint(expected: ValueType, found: &DeValue<'_>) -> Option<String> {
    match (expected, found) {
        (ValueType::Integer | ValueType::GridShape, DeValue::Float(float)) => {
            parse_float(float.as_str())
                .filter(|v| v.fract() == 0.0 && v.abs() < 1e15)
                .map(|v| format!("write it without a decimal point: {v}"))
        }
        (ValueType::GridShape, _) => {
            Some("write D (a D x D grid), [Dx, Dy] (rectangular) or [D] (1-D)".to_string())
        }
        (
            ValueType::Text | ValueType::Choice(_) | ValueType::RegistryWords,
            DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_),
        ) => Some("put text in double quotes".to_string()),
        (ValueType::Bool, DeValue::String(_)) => {
            Some("write true or false without quotes".to_string())
        }
        (ValueType::Integer | ValueType::Float, DeValue::String(_)) => {
            Some("write numbers without quotes".to_string())
        }
        _ => None,
    }
}

fn parse_int(digits: &str, radix: u32) -> Option<i64> {
    i64::from_str_radix(&digits.replace('_', ""), radix).ok()
}

/// TOML floats, including `inf`, `+inf`, `-inf`, `nan`, `+nan`, `-nan` (range checks reject
/// the non-finite ones with a proper message).
pub(crate) fn parse_float(text: &str) -> Option<f64> {
    let text = text.replace('_', "");
    match text.as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        other => other.parse().ok(),
    }
}

/// A range error when `param` breaks `rule`.
pub(crate) fn check_rule(
    source: &SourceMap<'_>,
    what: &str,
    rule: Rule,
    param: &ParamValue,
    span: &Range<usize>,
) -> Result<(), StudyError> {
    if rule.admits(param) {
        return Ok(());
    }
    Err(rule_error(source, what, rule, param, span))
}

/// The error for `param` breaking `rule`.
fn rule_error(
    source: &SourceMap<'_>,
    what: &str,
    rule: Rule,
    param: &ParamValue,
    span: &Range<usize>,
) -> StudyError {
    let shown = match param {
        ParamValue::Text(text) => format!("{text:?}"),
        other => other.to_string(),
    };
    let (message, help) = match (rule, param) {
        (Rule::OneOf(words), ParamValue::Text(text)) => (
            format!("unknown value {shown} for `{what}`"),
            did_you_mean(text, words.iter().copied()).map(|h| h.replace('`', "\"")),
        ),
        _ => (format!("`{what}` = {shown} is out of range"), None),
    };
    source
        .error(ErrorKind::OutOfRange, span, message)
        .allowed(rule.describe())
        .maybe_help(help)
}

fn read_int(
    source: &SourceMap<'_>,
    what: &str,
    value: &TomlValue<'_>,
    rule: Rule,
) -> Result<i64, StudyError> {
    let param = read_typed(source, what, ValueType::Integer, value)?;
    check_rule(source, what, rule, &param, &value.span())?;
    match param {
        ParamValue::Int(v) => Ok(v),
        other => unreachable!("an integer read as {other:?}"),
    }
}

fn read_text(
    source: &SourceMap<'_>,
    what: &str,
    value: &TomlValue<'_>,
) -> Result<String, StudyError> {
    match read_typed(source, what, ValueType::Text, value)? {
        ParamValue::Text(text) => Ok(text.to_string()),
        other => unreachable!("a text read as {other:?}"),
    }
}

/// A word of the closed set `T`, parsed into it.
fn read_choice<T: ClosedNames>(
    source: &SourceMap<'_>,
    what: &str,
    value: &TomlValue<'_>,
) -> Result<T, StudyError> {
    let text = read_text(source, what, value)?;
    T::parse(&text).ok_or_else(|| {
        let param = ParamValue::text(&text);
        rule_error(source, what, Rule::OneOf(T::WORDS), &param, &value.span())
    })
}

/// The seed: any integer from 0 to 2^64 - 1.
fn read_seed(source: &SourceMap<'_>, value: &TomlValue<'_>) -> Result<u64, StudyError> {
    let span = value.span();
    let out_of_range = || {
        source
            .error(
                ErrorKind::OutOfRange,
                &span,
                format!("`study.seed` = {} is out of range", source.slice(&span)),
            )
            .allowed("an integer from 0 to 18446744073709551615")
    };
    match value.get_ref() {
        DeValue::Integer(int) => {
            let digits = int.as_str().replace('_', "");
            let digits = digits.strip_prefix('+').unwrap_or(&digits);
            u64::from_str_radix(digits, int.radix()).map_err(|_| out_of_range())
        }
        found => Err(source.error(
            ErrorKind::WrongType,
            &span,
            format!(
                "wrong type for `study.seed`: expected an integer, found {}",
                type_name(found)
            ),
        )),
    }
}
