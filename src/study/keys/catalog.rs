//! Every key a study may give, as the registry gathers them: each family's keys in its column
//! order, the words of the registry-listed keys, and the names that were renamed. The study
//! reader finds keys here by name, validates values against [`KeyCatalog::rule`], and lists a
//! family's keys in its messages; `fieldmc keys` and the reference table print
//! [`KeyCatalog::help`].

use std::collections::HashMap;

use super::{Applies, Key, Label, Rule, Section, ValueType, quoted_words};

/// The keys of every family, and what the reader needs to know of them.
#[derive(Debug)]
pub struct KeyCatalog {
    /// Every key once, the first family's in its order, then each further family's new ones.
    keys: Vec<Key>,
    /// Position of each key in `keys`.
    positions: HashMap<Key, usize>,
    /// Each family's name (its `model.family` word) and keys, the default family first.
    families: Vec<(&'static str, &'static [Key])>,
    /// The words of the keys declared [`ValueType::RegistryWords`].
    words: Vec<(Key, &'static [&'static str])>,
    /// Keys renamed after their first release: (the old "section.key", the key that replaced
    /// it). An old name is an unknown key whose error names the new one.
    renamed: Vec<(&'static str, Key)>,
    /// Defaults families give shared keys, in words: (family, key, default).
    family_defaults: Vec<(&'static str, Key, String)>,
}

impl KeyCatalog {
    /// The catalog of `families` (name and keys, the default family first), with the words of
    /// the registry-listed keys, the renamed keys and the defaults families give shared keys.
    pub(crate) fn new(
        families: Vec<(&'static str, &'static [Key])>,
        words: Vec<(Key, &'static [&'static str])>,
        renamed: Vec<(&'static str, Key)>,
        family_defaults: Vec<(&'static str, Key, String)>,
    ) -> Self {
        let mut keys: Vec<Key> = Vec::new();
        for key in families.iter().flat_map(|(_, keys)| keys.iter()) {
            if !keys.contains(key) {
                keys.push(*key);
            }
        }
        let positions = keys.iter().enumerate().map(|(i, key)| (*key, i)).collect();
        KeyCatalog {
            keys,
            positions,
            families,
            words,
            renamed,
            family_defaults,
        }
    }

    /// Every key, in catalog order.
    pub fn all(&self) -> &[Key] {
        &self.keys
    }

    /// The position of `key` in [`KeyCatalog::all`] (a key of another catalog has none).
    pub(crate) fn position(&self, key: Key) -> Option<usize> {
        self.positions.get(&key).copied()
    }

    /// The keys of `section`, in catalog order.
    pub(crate) fn section_keys(&self, section: Section) -> impl Iterator<Item = Key> + '_ {
        self.keys
            .iter()
            .copied()
            .filter(move |k| k.section() == section)
    }

    /// The key `name` of `section`.
    pub(crate) fn find(&self, section: Section, name: &str) -> Option<Key> {
        self.section_keys(section).find(|k| k.name() == name)
    }

    /// The key written "section.key".
    #[allow(clippy::wrong_self_convention)] // the catalog finds the key by name
    pub(crate) fn from_dotted(&self, dotted: &str) -> Option<Key> {
        self.keys.iter().copied().find(|k| k.dotted() == dotted)
    }

    /// The key that replaced the old name `dotted`, if it was renamed.
    pub(crate) fn renamed(&self, dotted: &str) -> Option<Key> {
        self.renamed
            .iter()
            .find(|(old, _)| *old == dotted)
            .map(|&(_, key)| key)
    }

    /// The default family's name (the first).
    pub(crate) fn default_family(&self) -> &'static str {
        self.families[0].0
    }

    /// The keys of the family named `family`, in its column order.
    pub(crate) fn family_keys(&self, family: &str) -> Option<&'static [Key]> {
        self.families
            .iter()
            .find(|(name, _)| *name == family)
            .map(|(_, keys)| *keys)
    }

    /// The names of the families `key` applies to.
    pub(crate) fn families_of(&self, key: Key) -> Vec<&'static str> {
        self.families
            .iter()
            .filter(|(_, keys)| keys.contains(&key))
            .map(|(name, _)| *name)
            .collect()
    }

    /// The keys whose figures name them with a [`Label`], by column.
    pub(crate) fn labels(&self) -> Vec<(&'static str, Label)> {
        self.keys
            .iter()
            .filter_map(|key| key.decl().label.map(|label| (key.column(), label)))
            .collect()
    }

    /// The range rule of `key`, with a choice's words (or the registry's) as [`Rule::OneOf`].
    pub(crate) fn rule(&self, key: Key) -> Rule {
        match key.value_type() {
            ValueType::Choice(words) => Rule::OneOf(words),
            ValueType::RegistryWords => Rule::OneOf(
                self.words
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map_or(&[][..], |(_, words)| *words),
            ),
            _ => key.decl().rule,
        }
    }

    /// What a reader needs to know about `key`, derived from its declaration.
    pub(crate) fn help(&self, key: Key) -> KeyHelp {
        let rule = self.rule(key);
        let allowed = match key.value_type() {
            ValueType::FloatOrWord(words) | ValueType::FloatOrAlias(words) => {
                format!("{}, or {}", rule.describe(), quoted_words(words))
            }
            ValueType::Bool => "true | false".to_string(),
            ValueType::GridShape => format!("{}, or [Dx, Dy], or [D]", rule.describe()),
            ValueType::Window => "x0 < x1, y0 < y1, finite".to_string(),
            ValueType::Rows => "rows of numbers, `[[a, b], [c, d]]`".to_string(),
            ValueType::Numbers => "numbers, `[a, b, c]`".to_string(),
            ValueType::Words => "names, `[\"a\", \"b\"]` (or `\"a,b\"`)".to_string(),
            _ => rule.describe(),
        };
        let mut applies = match key.applies() {
            Applies::Always => String::new(),
            Applies::Source(sources) => format!(" ({} data only)", sources.join(" and ")),
        };
        let families = self.families_of(key);
        if families != [self.default_family()] && families.len() != self.families.len() {
            applies.push_str(&format!(" (family: {})", families.join(", ")));
        }
        KeyHelp {
            dotted: key.dotted(),
            default: self.default_text(key),
            allowed,
            doc: format!("{}{applies}", key.doc()),
        }
    }

    /// `key`'s default in words: the declared one, or, where families give their own, each
    /// family's (those that give none keep the declared one).
    fn default_text(&self, key: Key) -> String {
        let declared = key.decl().default.describe();
        let notes: Vec<&(&str, Key, String)> = self
            .family_defaults
            .iter()
            .filter(|(_, k, _)| *k == key)
            .collect();
        if notes.is_empty() {
            return declared;
        }
        let mut parts: Vec<String> = notes
            .iter()
            .map(|(family, _, note)| format!("{family}: {note}"))
            .collect();
        let others: Vec<&str> = self
            .families_of(key)
            .into_iter()
            .filter(|family| !notes.iter().any(|(noted, _, _)| noted == family))
            .collect();
        if !others.is_empty() {
            parts.push(format!("{}: {declared}", others.join(", ")));
        }
        parts.join("; ")
    }

    /// The key reference: one Markdown row per key.
    pub fn markdown_table(&self) -> String {
        let mut table = String::from("| key | default | allowed | what |\n|---|---|---|---|\n");
        for help in self.keys.iter().map(|key| self.help(*key)) {
            let cell = |text: &str| text.replace('|', "\\|");
            table.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                help.dotted,
                cell(&help.default),
                cell(&help.allowed),
                cell(&help.doc),
            ));
        }
        table
    }

    /// The keys whose dotted name starts with `prefix` (every key for ""), as plain text for
    /// the terminal: name, default and allowed values, then what the key does.
    pub(crate) fn text_help(&self, prefix: &str) -> String {
        let mut text = String::new();
        for help in self
            .keys
            .iter()
            .map(|key| self.help(*key))
            .filter(|help| help.dotted.starts_with(prefix))
        {
            text.push_str(&format!(
                "{}\n    default: {}\n    allowed: {}\n    {}\n\n",
                help.dotted,
                help.default.replace('`', ""),
                help.allowed,
                help.doc.replace('`', "")
            ));
        }
        text
    }
}

/// What a reader needs to know about one key: the reference table and `fieldmc keys` print it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHelp {
    pub(crate) dotted: &'static str,
    pub(crate) default: String,
    pub(crate) allowed: String,
    /// What the key does, and where it applies when not everywhere.
    pub(crate) doc: String,
}
