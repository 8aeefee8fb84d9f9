//! The values a study gives for the keys of `[model]`, `[data]`, `[sampler]` and `[output]`,
//! each with where it was written, before defaults are applied.

use std::borrow::Cow;
use std::ops::Range;

use super::keys::{Key, ParamValue};

/// One given value: checked for its key's type and range, with its place in the study file.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub(crate) value: ParamValue,
    /// Byte span of the value in the study text.
    pub(crate) span: Option<Range<usize>>,
    /// Whether the value comes from `[sweep]` (rather than the base sections).
    pub(crate) from_sweep: bool,
}

/// The given values of one study or one sweep point; a key not given takes its default. A
/// study gives a few dozen keys at most, so they are kept in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    values: Vec<(Key, Setting)>,
}

impl Settings {
    /// Gives `key` the value `setting` (replacing an earlier one).
    pub(crate) fn set(&mut self, key: Key, setting: Setting) {
        match self.values.iter_mut().find(|(k, _)| *k == key) {
            Some((_, earlier)) => *earlier = setting,
            None => self.values.push((key, setting)),
        }
    }

    /// The given setting, if the study gives one.
    pub(crate) fn given(&self, key: Key) -> Option<&Setting> {
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, setting)| setting)
    }

    /// The given value, else the key's default (`Null` where the default depends on other keys).
    pub(crate) fn value(&self, key: Key) -> ParamValue {
        self.value_ref(key).into_owned()
    }

    /// [`Settings::value`], borrowed where it is given: resolving a point reads a few hundred
    /// values, and a clone of a given text is an atomic reference count (a default is a
    /// declared word, whose copy touches none).
    pub(crate) fn value_ref(&self, key: Key) -> Cow<'_, ParamValue> {
        match self.given(key) {
            Some(setting) => Cow::Borrowed(&setting.value),
            None => Cow::Owned(key.default_value().unwrap_or(ParamValue::Null)),
        }
    }

    pub(crate) fn span(&self, key: Key) -> Option<Range<usize>> {
        self.given(key).and_then(|s| s.span.clone())
    }

    /// An integer key's value. Validation gives every integer key an integer (given or its
    /// default); a key without one is read with [`Settings::given`], so anything else is a bug
    /// in the caller and panics with the key's name.
    pub(crate) fn int(&self, key: Key) -> i64 {
        match &*self.value_ref(key) {
            ParamValue::Int(v) => *v,
            other => mistyped(key, "an integer", other),
        }
    }

    /// A float key's value (an integer where the study wrote one). Panics, naming the key, where
    /// the key has no number (see [`Settings::int`]).
    pub(crate) fn float(&self, key: Key) -> f64 {
        match &*self.value_ref(key) {
            ParamValue::Float(v) => *v,
            ParamValue::Int(v) => *v as f64,
            other => mistyped(key, "a number", other),
        }
    }

    /// A text key's value. Panics, naming the key, where the key has no text (see
    /// [`Settings::int`]).
    pub(crate) fn text(&self, key: Key) -> String {
        match &*self.value_ref(key) {
            ParamValue::Text(t) => t.to_string(),
            other => mistyped(key, "a text", other),
        }
    }

    /// A boolean key's value, `None` where it is not given and has no fixed default.
    pub(crate) fn bool(&self, key: Key) -> Option<bool> {
        match &*self.value_ref(key) {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A float key's value, `None` where it is not given.
    pub(crate) fn given_float(&self, key: Key) -> Option<f64> {
        match self.given(key).map(|s| &s.value) {
            Some(ParamValue::Float(v)) => Some(*v),
            Some(ParamValue::Int(v)) => Some(*v as f64),
            _ => None,
        }
    }

    /// A choice key's value as its enum: validation admits only the enum's words, so this
    /// cannot fail on a loaded study's settings.
    pub(crate) fn choice<T>(&self, key: Key, parse: fn(&str) -> Option<T>) -> T {
        let value = self.value_ref(key);
        let text = match &*value {
            ParamValue::Text(text) => &**text,
            _ => "",
        };
        parse(text).unwrap_or_else(|| {
            panic!(
                "`{}` = {text:?} passed validation but names no variant",
                key.dotted()
            )
        })
    }
}

/// A key read as a type it does not hold: validation rules this out for a loaded study, so
/// this is a bug in the reader of the key.
fn mistyped(key: Key, wanted: &str, found: &ParamValue) -> ! {
    panic!(
        "`{}` was read as {wanted} but holds {found:?}: a key that may be absent is read with \
         `Settings::given`",
        key.dotted()
    )
}
