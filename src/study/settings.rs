//! The values a study gives for the keys of `[model]`, `[data]`, `[sampler]` and `[output]`,
//! each with where it was written, before defaults are applied.

use std::ops::Range;

use super::keys::{Key, ParamValue};

/// One given value: checked for its key's type and range, with its place in the study file.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub value: ParamValue,
    /// Byte span of the value in the study text.
    pub span: Option<Range<usize>>,
    /// Whether the value comes from `[sweep]` (rather than the base sections).
    pub from_sweep: bool,
}

/// The given values of one study or one sweep point; a key not given takes its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    values: Vec<Option<Setting>>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            values: vec![None; Key::count()],
        }
    }
}

impl Settings {
    pub fn set(&mut self, key: Key, setting: Setting) {
        self.values[key.index()] = Some(setting);
    }

    /// The given setting, if the study gives one.
    pub fn given(&self, key: Key) -> Option<&Setting> {
        self.values[key.index()].as_ref()
    }

    /// The given value, else the key's default (`Null` where the default depends on other keys).
    pub fn value(&self, key: Key) -> ParamValue {
        self.value_ref(key).clone()
    }

    /// [`Settings::value`], borrowed: resolving a point reads a few hundred values, and a
    /// clone of a text value is an atomic reference count.
    pub fn value_ref(&self, key: Key) -> &ParamValue {
        match self.given(key) {
            Some(setting) => &setting.value,
            None => key.default_ref(),
        }
    }

    pub fn span(&self, key: Key) -> Option<Range<usize>> {
        self.given(key).and_then(|s| s.span.clone())
    }

    /// An integer key's value (validated values always have the key's type; 0 otherwise).
    pub fn int(&self, key: Key) -> i64 {
        match self.value_ref(key) {
            ParamValue::Int(v) => *v,
            _ => 0,
        }
    }

    /// A float key's value (NaN if the key has no value, which validation rules out).
    pub fn float(&self, key: Key) -> f64 {
        match self.value_ref(key) {
            ParamValue::Float(v) => *v,
            ParamValue::Int(v) => *v as f64,
            _ => f64::NAN,
        }
    }

    /// A text key's value ("" if none).
    pub fn text(&self, key: Key) -> String {
        match self.value_ref(key) {
            ParamValue::Text(t) => t.to_string(),
            _ => String::new(),
        }
    }

    /// A boolean key's value, `None` where it is not given and has no fixed default.
    pub fn bool(&self, key: Key) -> Option<bool> {
        match self.value_ref(key) {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A float key's value, `None` where it is not given and has no fixed default.
    pub fn given_float(&self, key: Key) -> Option<f64> {
        match self.given(key).map(|s| &s.value) {
            Some(ParamValue::Float(v)) => Some(*v),
            Some(ParamValue::Int(v)) => Some(*v as f64),
            _ => None,
        }
    }

    /// A choice key's value as its enum: validation admits only the enum's words, so this
    /// cannot fail on a loaded study's settings.
    pub fn choice<T>(&self, key: Key, parse: fn(&str) -> Option<T>) -> T {
        let text = match self.value_ref(key) {
            ParamValue::Text(text) => text,
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
