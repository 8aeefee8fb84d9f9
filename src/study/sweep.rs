//! `[sweep]`: the axes of a study's cartesian product.
//!
//! Each `"section.key" = [values]` is one axis. A `[sweep.paired.<name>]` table holds lists of
//! one length that move together; the group is one axis. Dotted keys without quotes
//! (`model.grid = [4, 16]`) and section tables (`[sweep.model]`, `grid = [4, 16]`) mean the same
//! as the quoted form. Every value is checked like the key's own value, located where it is
//! written.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use super::document::{Reader, TomlKey, TomlValue, entries_in_file_order, read_setting, type_name};
use super::error::{ErrorKind, StudyError};
use super::keys::{Key, Keyed, Section, ValueType};
use super::settings::Setting;
use super::suggest::did_you_mean;

/// One axis of the sweep product.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// `"model.grid"` for a single key, `"paired.<name>"` for a paired group.
    pub(crate) name: String,
    /// The keys this axis sets (one, or every list of a paired group).
    pub(crate) keys: Vec<Key>,
    /// One row per step along the axis: the value of each key, in the order of `keys`.
    pub(crate) steps: Vec<Vec<Setting>>,
    /// Where the axis is declared (its key, or the group's name).
    pub(crate) span: Range<usize>,
}

impl Axis {
    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// One swept list as written: its "section.key", the key's span and the array value.
struct SweptList<'a, 'i> {
    key: Key,
    key_span: Range<usize>,
    list: &'a TomlValue<'i>,
}

/// Read `[sweep]` into axes, in the order they appear in the file.
pub(crate) fn read_sweep(
    reader: &Reader<'_>,
    table: Option<&DeTable<'_>>,
) -> Result<Vec<Axis>, StudyError> {
    let Some(table) = table else {
        return Ok(Vec::new());
    };
    let mut axes = Vec::new();
    let mut seen: Vec<(Key, Range<usize>)> = Vec::new();
    for (key, value) in entries_in_file_order(table) {
        if key.get_ref().as_ref() == "paired" {
            for (name, group) in paired_groups(reader, key, value)? {
                let lists = group_lists(reader, name, group)?;
                axes.push(paired_axis(reader, name, lists, &mut seen)?);
            }
            continue;
        }
        for list in swept_lists(reader, None, key, value)? {
            let settings = checked_values(reader, &list, &mut seen, Repeats::Refused)?;
            axes.push(Axis {
                name: list.key.dotted().to_string(),
                keys: vec![list.key],
                steps: settings.into_iter().map(|s| vec![s]).collect(),
                span: list.key_span,
            });
        }
    }
    Ok(axes)
}

/// The groups of `[sweep.paired]`, each a table of lists.
fn paired_groups<'a, 'i>(
    reader: &Reader<'_>,
    key: &TomlKey<'i>,
    value: &'a TomlValue<'i>,
) -> Result<Vec<(&'a TomlKey<'i>, &'a DeTable<'i>)>, StudyError> {
    let help = "pair lists in a named group:\n    [sweep.paired.length]\n    \
                \"model.length_scale\" = [0.1, 0.2]\n    \"data.length_scale\" = [0.1, 0.2]";
    let DeValue::Table(groups) = value.get_ref() else {
        return Err(reader
            .source
            .error(
                ErrorKind::Sweep,
                &key.span(),
                format!(
                    "`sweep.paired` must hold named groups, found {}",
                    type_name(value.get_ref())
                ),
            )
            .help(help));
    };
    let mut result = Vec::new();
    for (name, group) in entries_in_file_order(groups) {
        match group.get_ref() {
            DeValue::Table(table) => result.push((name, table)),
            other => {
                return Err(reader
                    .source
                    .error(
                        ErrorKind::Sweep,
                        &name.span(),
                        format!(
                            "`sweep.paired.{}` must be a group of lists, found {}",
                            name.get_ref(),
                            type_name(other)
                        ),
                    )
                    .help(help));
            }
        }
    }
    Ok(result)
}

fn group_lists<'a, 'i>(
    reader: &Reader<'_>,
    name: &TomlKey<'i>,
    group: &'a DeTable<'i>,
) -> Result<Vec<SweptList<'a, 'i>>, StudyError> {
    let mut lists = Vec::new();
    for (key, value) in entries_in_file_order(group) {
        lists.extend(swept_lists(reader, None, key, value)?);
    }
    if lists.is_empty() {
        return Err(reader.source.error(
            ErrorKind::Sweep,
            &name.span(),
            format!("the paired group `{}` lists no keys", name.get_ref()),
        ));
    }
    Ok(lists)
}

/// The lists under one sweep entry: the entry itself when it is `"section.key" = [...]`, or
/// every list of a section table (`[sweep.model]` or `model.grid = ...`).
fn swept_lists<'a, 'i>(
    reader: &Reader<'_>,
    prefix: Option<&str>,
    key: &'a TomlKey<'i>,
    value: &'a TomlValue<'i>,
) -> Result<Vec<SweptList<'a, 'i>>, StudyError> {
    let dotted = match prefix {
        Some(prefix) => format!("{prefix}.{}", key.get_ref()),
        None => key.get_ref().to_string(),
    };
    if !dotted.contains('.') {
        if let DeValue::Table(table) = value.get_ref() {
            let mut lists = Vec::new();
            for (inner_key, inner_value) in entries_in_file_order(table) {
                lists.extend(swept_lists(reader, Some(&dotted), inner_key, inner_value)?);
            }
            return Ok(lists);
        }
        return Err(section_missing(reader, &dotted, &key.span()));
    }
    let swept = sweepable_key(reader, &dotted, &key.span())?;
    if !matches!(value.get_ref(), DeValue::Array(_)) {
        return Err(reader
            .source
            .error(
                ErrorKind::WrongType,
                &value.span(),
                format!(
                    "the sweep of `{dotted}` must list its values in an array, found {}",
                    type_name(value.get_ref())
                ),
            )
            .help(format!("write \"{dotted}\" = [value, value, ...]")));
    }
    Ok(vec![SweptList {
        key: swept,
        key_span: key.span(),
        list: value,
    }])
}

fn section_missing(reader: &Reader<'_>, name: &str, span: &Range<usize>) -> StudyError {
    let homes: Vec<String> = Section::ALL
        .iter()
        .filter_map(|&s| reader.keys.find(s, name))
        .map(|k| format!("\"{}\"", k.dotted()))
        .collect();
    let help = if homes.is_empty() {
        "write sweep keys as \"section.key\", e.g. \"model.grid\" = [4, 16]".to_string()
    } else {
        format!("write {}", homes.join(" or "))
    };
    reader
        .source
        .error(
            ErrorKind::Sweep,
            span,
            format!("sweep key `{name}` does not name its section"),
        )
        .help(help)
}

/// The [`Key`] for "section.key", or an error saying why it cannot be swept.
fn sweepable_key(
    reader: &Reader<'_>,
    dotted: &str,
    span: &Range<usize>,
) -> Result<Key, StudyError> {
    if let Some(key) = reader.keys.from_dotted(dotted) {
        if key.keyed() == Keyed::Never {
            // Not part of a job's id: its sweep points would be jobs with one id.
            return Err(reader
                .source
                .error(
                    ErrorKind::Sweep,
                    span,
                    format!("`{dotted}` cannot be swept"),
                )
                .allowed(
                    "keys that change what a job computes; not the output keys that only \
                          choose what is written",
                )
                .help(format!(
                    "`{dotted}` does not enter a job's id, so every value would make the same \
                     job; set it once in its section"
                )));
        }
        return Ok(key);
    }
    let all: Vec<&str> = reader.keys.all().iter().map(|k| k.dotted()).collect();
    let section = dotted.split('.').next().unwrap_or("");
    if section == "study" || section == "sbc" || section == "sweep" {
        return Err(reader
            .source
            .error(ErrorKind::Sweep, span, format!("`{dotted}` cannot be swept"))
            .allowed("every key of [model], [data], [sampler] and [output]")
            .help("study settings are fixed for the whole study; to vary the seed use [study] replicates"));
    }
    let allowed = match Section::from_name(section) {
        Some(s) => reader
            .keys
            .section_keys(s)
            .map(|k| k.dotted())
            .collect::<Vec<_>>()
            .join(", "),
        None => {
            "every key of [model], [data], [sampler] and [output], as \"section.key\"".to_string()
        }
    };
    Err(reader
        .source
        .error(
            ErrorKind::UnknownKey,
            span,
            format!("unknown key `{dotted}` in [sweep]"),
        )
        .allowed(allowed)
        .maybe_help(
            super::document::renamed_help(reader.keys, dotted)
                .or_else(|| did_you_mean(dotted, all.iter().copied())),
        ))
}

/// Whether a list may repeat a value: a single axis may not (its jobs would repeat); a list of
/// a paired group may, as long as the group's rows differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeats {
    Refused,
    Allowed,
}

/// The list's values as settings, each checked for type and range; the list must be non-empty,
/// of one type and (unless `repeats` allows) without repeats, and the key not swept before.
fn checked_values(
    reader: &Reader<'_>,
    list: &SweptList<'_, '_>,
    seen: &mut Vec<(Key, Range<usize>)>,
    repeats: Repeats,
) -> Result<Vec<Setting>, StudyError> {
    let dotted = list.key.dotted();
    if let Some((_, first)) = seen.iter().find(|(key, _)| *key == list.key) {
        return Err(reader
            .source
            .error(
                ErrorKind::Sweep,
                &list.key_span,
                format!("`{dotted}` is swept twice"),
            )
            .note(format!("first swept at {}", reader.source.at(first)))
            .help("sweep each key once: in [sweep] or in one paired group"));
    }
    seen.push((list.key, list.key_span.clone()));
    let DeValue::Array(values) = list.list.get_ref() else {
        return Ok(Vec::new());
    };
    if values.is_empty() {
        return Err(reader
            .source
            .error(
                ErrorKind::Sweep,
                &list.list.span(),
                format!("the sweep of `{dotted}` is empty"),
            )
            .help("list at least one value, or remove the key to use the base setting"));
    }
    let first_class = type_class(list.key, values[0].get_ref());
    let sweep_error = |value: &toml::Spanned<DeValue<'_>>, message: String| {
        reader
            .source
            .error(ErrorKind::Sweep, &value.span(), message)
    };
    let mut settings: Vec<Setting> = Vec::with_capacity(values.len());
    for value in values.iter() {
        let class = type_class(list.key, value.get_ref());
        if class != first_class {
            let message = format!(
                "mixed types in the sweep of `{dotted}`: the first value is {first_class}, this one is {class}"
            );
            return Err(sweep_error(value, message)
                .allowed(format!("a list of {}", list.key.value_type().plural())));
        }
        let setting = read_setting(reader, list.key, value, true)?;
        if repeats == Repeats::Refused && settings.iter().any(|s| s.value == setting.value) {
            let message = format!(
                "`{dotted}` lists the value {} twice",
                setting.value.canonical()
            );
            return Err(
                sweep_error(value, message).help("each value gives its own jobs; list it once")
            );
        }
        settings.push(setting);
    }
    Ok(settings)
}

/// The type of a value as the mixed-type check sees it: integers and floats are both numbers
/// for a float key.
fn type_class(key: Key, value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::Integer(_) | DeValue::Float(_) | DeValue::String(_)
            if matches!(
                key.value_type(),
                ValueType::FloatOrWord(_) | ValueType::FloatOrAlias(_)
            ) =>
        {
            "a number or a word"
        }
        DeValue::Integer(_) | DeValue::Float(_) if key.value_type() == ValueType::Float => {
            "a number"
        }
        other => type_name(other),
    }
}

fn paired_axis(
    reader: &Reader<'_>,
    name: &TomlKey<'_>,
    lists: Vec<SweptList<'_, '_>>,
    seen: &mut Vec<(Key, Range<usize>)>,
) -> Result<Axis, StudyError> {
    let group = format!("paired.{}", name.get_ref());
    let mut columns: Vec<Vec<Setting>> = Vec::with_capacity(lists.len());
    for list in &lists {
        let values = checked_values(reader, list, seen, Repeats::Allowed)?;
        if let Some(first) = columns.first()
            && first.len() != values.len()
        {
            return Err(reader
                .source
                .error(
                    ErrorKind::Sweep,
                    &list.list.span(),
                    format!(
                        "paired lists in [sweep.{group}] must have the same length: `{}` has {} values, `{}` has {}",
                        lists[0].key.dotted(),
                        first.len(),
                        list.key.dotted(),
                        values.len()
                    ),
                )
                .help("paired lists move together, one step per position"));
        }
        columns.push(values);
    }
    let steps: Vec<Vec<Setting>> = (0..columns.first().map_or(0, Vec::len))
        .map(|step| columns.iter().map(|column| column[step].clone()).collect())
        .collect();
    for (row, step) in steps.iter().enumerate() {
        let same = |other: &Vec<Setting>| other.iter().zip(step).all(|(a, b)| a.value == b.value);
        if steps[..row].iter().any(same) {
            let span = step
                .first()
                .and_then(|s| s.span.clone())
                .unwrap_or(name.span());
            return Err(reader
                .source
                .error(
                    ErrorKind::Sweep,
                    &span,
                    format!(
                        "[sweep.{group}] lists the same combination twice (position {})",
                        row + 1
                    ),
                )
                .help("each combination gives its own jobs; list it once"));
        }
    }
    Ok(Axis {
        name: group,
        keys: lists.iter().map(|l| l.key).collect(),
        steps,
        span: name.span(),
    })
}
