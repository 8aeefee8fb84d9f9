//! The study-file reader: the TOML schema of a study, its sections, its `[study]` and `[sbc]`
//! headers, the base settings and the sweep axes, every value checked for type and range where it
//! is written. This module knows no family: the keys come from a [`KeyCatalog`] the registry
//! builds, and each sweep point is resolved by its family when the planner loads the study
//! ([`crate::plan::load`]).
//!
//! Errors are [`StudyError`]s that name the file, line and column, say what is allowed and
//! suggest the nearest valid key. Nothing in this module panics on any input.
//!
//! # Keys and defaults
//!
//! `[study]`: `name` (default: the file's stem; `[A-Za-z0-9][A-Za-z0-9_.-]*`, at most 100
//! characters, it names the output folder), `seed` (2020; 0 ..= 2^64 - 1), `replicates` (1:
//! independent truths / data sets per sweep point), `kind` (`"mcmc"` | `"sbc"`), `description`.
//! `[sbc]` (only with kind = "sbc"): `replications` (100), `draws` (100: L, thinned draws ranked
//! per replication).
//!
//! The keys of `[model]`, `[data]`, `[sampler]` and `[output]` are declared once each, by the
//! family that owns them (see [`keys`]); the key reference is generated from those declarations.
//!
//! # Sweeps
//!
//! `[sweep]` lists values for any key of `[model]`, `[data]`, `[sampler]` and `[output]` as
//! `"section.key" = [values]`; each list is one axis of a cartesian product (first axis
//! outermost). `[sweep.paired.<name>]` tables hold lists of one length that move together as a
//! single axis. A study expands to at most 1 000 000 jobs (points times replicates).

pub(crate) mod csv;
mod document;
pub(crate) mod error;
pub mod events;
pub mod keys;
pub(crate) mod resolve;
mod settings;
pub(crate) mod shape;
pub(crate) mod suggest;
pub(crate) mod sweep;

use std::path::{Path, PathBuf};

pub(crate) use document::{Reader, parse_numbers, parse_rows, parse_words};
pub use error::{Detail, ErrorKind, Location, StudyError};
pub use keys::{Key, KeyCatalog, ParamValue, Section};
pub use resolve::{FileCache, Resolver, study_folder};
pub use settings::{Setting, Settings};
pub use sweep::Axis;

use document::{MAX_JOBS, Sections};
use error::SourceMap;

/// The built-in default study, run by `fieldmc run` without a study file.
pub(crate) const QUICKSTART: &str = include_str!("../../studies/quickstart.toml");

/// The name [`QUICKSTART`] is loaded under (its relative paths resolve against the current
/// folder).
pub(crate) const QUICKSTART_ORIGIN: &str = "studies/quickstart.toml";

/// Study files larger than this are refused unread.
pub(crate) const MAX_STUDY_BYTES: u64 = 1024 * 1024;

crate::closed_names! {
    /// What a study computes.
    pub(crate) enum StudyKind {
        /// Run each job's chains and summarise them against the truth or held-out data.
        Mcmc = "mcmc",
        /// Simulation-based calibration: per job, many replications ranked against the prior
        /// draw.
        Sbc = "sbc",
    }
}

/// The `[sbc]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SbcSpec {
    /// Truth / data / chain replications per job.
    pub replications: u32,
    /// L: thinned posterior draws the truth is ranked among.
    pub draws: u32,
}

/// A study file as read: its headers, base settings and sweep axes, each value checked on its
/// own. Its sweep points are resolved by their families when the study is loaded
/// ([`crate::plan::load`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StudyFile {
    pub(crate) name: String,
    pub seed: u64,
    pub(crate) replicates: u32,
    pub(crate) kind: StudyKind,
    pub(crate) description: Option<String>,
    /// Present exactly when `kind` is [`StudyKind::Sbc`].
    pub sbc: Option<SbcSpec>,
    /// The settings given in `[model]`, `[data]` and `[sampler]` (defaults not applied).
    pub(crate) base: Settings,
    /// The sweep axes in file order, with the source spans of their values.
    pub(crate) axes: Vec<Axis>,
    /// The study file's text, as read.
    pub(crate) source_text: String,
    /// The study file's path, as given.
    pub(crate) origin: PathBuf,
}

impl StudyFile {
    /// The keys that some sweep axis sets, in axis order.
    pub(crate) fn swept_keys(&self) -> Vec<Key> {
        self.axes
            .iter()
            .flat_map(|a| a.keys.iter().copied())
            .collect()
    }

    /// Sweep points: the product of the axes' lengths.
    pub fn point_count(&self) -> usize {
        self.axes.iter().map(Axis::len).product()
    }

    /// Where a byte offset of the study text is, as `file:line:column`.
    pub fn locate(&self, offset: usize) -> Location {
        self.source().locate(offset)
    }

    /// The study's text with its file name, for located errors.
    pub(crate) fn source(&self) -> SourceMap<'_> {
        SourceMap::new(self.file_name(), &self.source_text)
    }

    /// The study file's name as messages show it.
    pub(crate) fn file_name(&self) -> &str {
        self.origin.to_str().unwrap_or("<study>")
    }

    /// The folder the study's relative paths resolve against.
    pub(crate) fn folder(&self) -> PathBuf {
        study_folder(&self.origin)
    }
}

/// Read the study file at `path`, every key one of `keys`.
pub(crate) fn read(path: &Path, keys: &KeyCatalog) -> Result<StudyFile, StudyError> {
    let file = path.display().to_string();
    let unreadable = |reason: String| {
        StudyError::new(
            ErrorKind::Unreadable,
            Location::file(&file),
            format!("cannot read the study file: {reason}"),
        )
    };
    let metadata = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if metadata.is_dir() {
        return Err(unreadable("it is a folder".to_string()));
    }
    let too_large = |size: String| {
        unreadable(format!(
            "it is {size} bytes; a study file may be at most {MAX_STUDY_BYTES}"
        ))
    };
    if metadata.len() > MAX_STUDY_BYTES {
        return Err(too_large(metadata.len().to_string()));
    }
    // Read at most one byte past the limit: a device or pipe reports length 0 and may never
    // end (`/dev/zero`), so the metadata check alone does not bound the read.
    let bytes = read_at_most(path, MAX_STUDY_BYTES)
        .map_err(|e| unreadable(e.to_string()))?
        .ok_or_else(|| too_large(format!("more than {MAX_STUDY_BYTES}")))?;
    let text = String::from_utf8(bytes).map_err(|e| not_text(&file, &e))?;
    read_text(&text, path, keys)
}

/// The bytes of `path` if it holds at most `limit` bytes, `None` if it holds more. Never reads
/// more than `limit + 1` bytes, so endless sources (devices, pipes) end in `None`.
pub(crate) fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The not-UTF-8 error, placed just after the valid start of the file.
fn not_text(file: &str, error: &std::string::FromUtf8Error) -> StudyError {
    let valid = String::from_utf8_lossy(&error.as_bytes()[..error.utf8_error().valid_up_to()]);
    let location = Location {
        file: file.to_string(),
        position: Some(error::line_column(&valid, valid.len())),
    };
    StudyError::new(
        ErrorKind::NotText,
        location,
        "not a text file: invalid UTF-8",
    )
    .help("a study is a UTF-8 TOML text file")
}

/// Read study `text`, every key one of `keys`; `origin` names the file in messages and gives
/// the default name.
pub(crate) fn read_text(
    text: &str,
    origin: &Path,
    keys: &KeyCatalog,
) -> Result<StudyFile, StudyError> {
    let file = origin.display().to_string();
    let reader = Reader {
        source: SourceMap::new(&file, text),
        keys,
    };
    let source = &reader.source;
    let document = document::parse_document(source)?;
    let sections = Sections::split(&reader, &document)?;
    let header = document::read_header(&reader, sections.study)?;
    let name = study_name(source, header.name, origin)?;
    let sbc = document::read_sbc(&reader, sections.sbc.clone(), header.kind)?;
    let base = document::read_settings(&reader, &sections)?;
    let axes = sweep::read_sweep(&reader, sections.sweep)?;
    check_job_count(source, &axes, header.replicates)?;
    Ok(StudyFile {
        name,
        seed: header.seed,
        replicates: header.replicates,
        kind: header.kind,
        description: header.description,
        sbc,
        base,
        axes,
        source_text: text.to_string(),
        origin: origin.to_path_buf(),
    })
}

/// Whether `name` can name an output folder: `[A-Za-z0-9][A-Za-z0-9_.-]*`, at most 100 chars.
pub(crate) fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && name.len() <= 100
}

fn study_name(
    source: &SourceMap<'_>,
    given: Option<(String, std::ops::Range<usize>)>,
    origin: &Path,
) -> Result<String, StudyError> {
    let rule = "letters, digits, `_`, `.` and `-`, starting with a letter or digit, at most 100 characters";
    if let Some((name, span)) = given {
        if is_valid_name(&name) {
            return Ok(name);
        }
        return Err(source
            .error(
                ErrorKind::OutOfRange,
                &span,
                format!("study name {name:?} cannot name an output folder"),
            )
            .allowed(rule));
    }
    let stem = origin
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if is_valid_name(&stem) {
        return Ok(stem);
    }
    Err(source
        .error_at_start(
            ErrorKind::OutOfRange,
            format!(
                "the study has no name and its file name {stem:?} cannot name an output folder"
            ),
        )
        .allowed(rule)
        .help("set name = \"...\" under [study]"))
}

fn check_job_count(
    source: &SourceMap<'_>,
    axes: &[Axis],
    replicates: u32,
) -> Result<(), StudyError> {
    let jobs = axes.iter().try_fold(i64::from(replicates), |total, axis| {
        total.checked_mul(axis.len() as i64)
    });
    match jobs {
        Some(jobs) if jobs <= MAX_JOBS => Ok(()),
        _ => {
            let span = axes.first().map_or(0..0, |a| a.span.clone());
            let sizes: Vec<String> = axes.iter().map(|a| a.len().to_string()).collect();
            Err(source
                .error(
                    ErrorKind::TooLarge,
                    &span,
                    format!(
                        "the study expands to more than {MAX_JOBS} jobs ({} replicate(s) x {})",
                        replicates,
                        sizes.join(" x ")
                    ),
                )
                .help("sweep fewer values, or split the study"))
        }
    }
}
