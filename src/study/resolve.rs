//! What a family's resolution of one sweep point may use: where the study lives and what kind
//! it is, located errors about the point's keys, the family's sampler kind, and a cache so a data
//! file read for one point is not read again for the next. Each family resolves its own keys
//! (`src/families/<name>/`); the planner calls it for every point (`crate::plan`).

use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::StudyKind;
use super::document::Reader;
use super::error::{ErrorKind, StudyError};
use super::keys::{Key, KeyCatalog, SAMPLER_KIND, quoted_words};
use super::settings::Settings;

/// What reading a data file gave, by a key its reader chooses (file, column, grid...): any
/// `Clone` value, so several resolvers (one per thread) can share what one of them read.
pub type FileCache = HashMap<String, Arc<dyn Any + Send + Sync>>;

/// What resolving needs beyond the settings.
pub struct Resolver<'s> {
    reader: Reader<'s>,
    study_dir: PathBuf,
    kind: StudyKind,
    files: FileCache,
}

impl<'s> Resolver<'s> {
    /// A resolver of the study read by `reader`, whose relative paths resolve against
    /// `study_dir`, that knows what the data files in `files` gave.
    pub(crate) fn new(
        reader: Reader<'s>,
        study_dir: PathBuf,
        kind: StudyKind,
        files: FileCache,
    ) -> Self {
        Self {
            reader,
            study_dir,
            kind,
            files,
        }
    }

    /// What the data files read so far gave.
    pub(crate) fn into_files(self) -> FileCache {
        self.files
    }

    /// The study's kind (`mcmc` or `sbc`).
    pub(crate) fn kind(&self) -> StudyKind {
        self.kind
    }

    /// Every key a study may give.
    pub(crate) fn keys(&self) -> &'s KeyCatalog {
        self.reader.keys
    }

    /// The folder the study's relative paths resolve against.
    pub(crate) fn study_dir(&self) -> &Path {
        &self.study_dir
    }

    /// What `read` gives for the data described by `key`, read once per resolver and shared
    /// with the resolvers made from its cache.
    pub(crate) fn cached<T: Clone + Send + Sync + 'static>(
        &mut self,
        key: String,
        read: impl FnOnce() -> T,
    ) -> T {
        let entry = self
            .files
            .entry(key)
            .or_insert_with(|| Arc::new(read()) as Arc<dyn Any + Send + Sync>);
        entry
            .downcast_ref::<T>()
            .cloned()
            .expect("one reader per cache key")
    }

    /// Where an error about `keys` should point: the first of them that is written in the
    /// file, else the start of the file.
    pub(crate) fn span_of(&self, settings: &Settings, keys: &[Key]) -> Range<usize> {
        keys.iter()
            .find_map(|key| settings.span(*key))
            .unwrap_or(0..0)
    }

    /// An error about `keys`, located at the first of them written in the file (else the start
    /// of the file).
    pub(crate) fn error_at(
        &self,
        settings: &Settings,
        keys: &[Key],
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> StudyError {
        let span = self.span_of(settings, keys);
        self.reader.source.error(kind, &span, message)
    }

    /// `sampler.kind` of the family `family` whose samplers are the `words` that `parse`
    /// reads: `default` when not given; a word of another family (the key's words are shared)
    /// is a located error that lists the family's own.
    pub(crate) fn sampler_kind<E>(
        &self,
        settings: &Settings,
        family: &str,
        default: E,
        parse: impl Fn(&str) -> Option<E>,
        words: &[&str],
    ) -> Result<E, StudyError> {
        if settings.given(SAMPLER_KIND).is_none() {
            return Ok(default);
        }
        let word = settings.text(SAMPLER_KIND);
        parse(&word).ok_or_else(|| {
            self.error_at(
                settings,
                &[SAMPLER_KIND],
                ErrorKind::OutOfRange,
                format!(
                    "sampler.kind = \"{word}\" is not a sampler of model.family = \"{family}\""
                ),
            )
            .allowed(quoted_words(words))
        })
    }
}

/// The folder relative data paths resolve against: the study file's, made absolute.
pub fn study_folder(origin: &Path) -> PathBuf {
    let parent = origin.parent().unwrap_or(Path::new(""));
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    std::path::absolute(parent).unwrap_or_else(|_| parent.to_path_buf())
}
