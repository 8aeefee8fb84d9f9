//! The points of a study's sweep product, resolved on demand: point `i` is the base settings
//! with, for each axis, the step given by the digits of `i` in the mixed radix of the axes'
//! lengths (first axis outermost). A study does not hold its points: it resolves each once when
//! it loads, to validate it, and again whenever it is asked for it; so a sweep of a million
//! points costs the memory of one.
//!
//! Resolving a point of a loaded study cannot fail: the same settings resolve the same way, and
//! the data files were read when it loaded (what they gave is kept, they are not read again).
//!
//! A point is resolved by its family (`model.family`, through the registry): the keys of other
//! families are refused first, then the family checks and completes its settings into its spec
//! and its parameters.

use std::fmt;
use std::ops::Index;
use std::path::PathBuf;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::families::{self, Family, FamilySpec};
use crate::study::error::{ErrorKind, SourceMap};
use crate::study::keys::MODEL_FAMILY;
use crate::study::{
    Axis, FileCache, Key, ParamValue, Reader, Resolver, Settings, StudyError, StudyKind,
};

/// How many points [`Points::map_in_order`] resolves at once.
const BATCH: usize = 4096;

/// One point of the sweep product, resolved and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The point's family and its settings, resolved by the family.
    pub spec: FamilySpec,
    /// The parameters of the point's family, in its column order; `Null` where a key of the
    /// family does not apply to this point (a csv-only key for simulated data).
    pub params: Vec<(Key, ParamValue)>,
    /// The step taken along each sweep axis.
    pub(crate) steps: Vec<usize>,
}

impl Point {
    /// The point's value of `key` (`Null` where the key is not one of its family's).
    pub fn param(&self, key: Key) -> &ParamValue {
        ParamValue::of(&self.params, key)
    }
}

/// Every point of a sweep product, each resolved when asked for.
#[derive(Clone)]
pub struct Points {
    base: Settings,
    axes: Vec<Axis>,
    /// What resolving needs of the study: its file name and text (for located errors), its
    /// folder, its kind, and what its data files gave.
    file: String,
    text: String,
    study_dir: PathBuf,
    kind: StudyKind,
    files: FileCache,
    /// What the points' parameters were, seen as they were validated.
    seen: Seen,
    /// The points asked for by index (`points[i]`, [`Points::iter`]), kept once resolved.
    kept: Vec<OnceLock<Box<Point>>>,
}

impl Points {
    /// The points of the product of `axes` over `base`, each resolved once to validate it (the
    /// first that does not resolve is the error, with a note naming its sweep point).
    pub(super) fn validated(
        source: SourceMap<'_>,
        base: Settings,
        axes: Vec<Axis>,
        study_dir: PathBuf,
        kind: StudyKind,
    ) -> Result<Points, StudyError> {
        let reader = Reader {
            source,
            keys: families::catalog(),
        };
        let count: usize = axes.iter().map(Axis::len).product();
        // Contiguous pieces on rayon's threads, each with its own resolver (and data-file
        // cache); each stops at its first bad point, and the earliest piece's is the error, so
        // it is the one a sequential pass would give.
        let pieces = (rayon::current_num_threads() * 4).clamp(1, count.max(1));
        let outcomes: Vec<(Result<Seen, StudyError>, FileCache)> = (0..pieces)
            .into_par_iter()
            .map(|piece| {
                let mut resolver = Resolver::new(reader, study_dir.clone(), kind, FileCache::new());
                let mut seen = Seen::default();
                let outcome =
                    (piece * count / pieces..(piece + 1) * count / pieces).try_for_each(|index| {
                        let steps = mixed_radix_digits(index, &axes);
                        let settings = point_settings(&base, &axes, &steps);
                        let point = resolve_point(&mut resolver, &settings, steps.clone())
                            .map_err(|error| with_point_note(error, &axes, &steps))?;
                        seen.add(point);
                        Ok(())
                    });
                (outcome.map(|()| seen), resolver.into_files())
            })
            .collect();
        let mut files = FileCache::new();
        let mut seen = Seen::default();
        for (outcome, read) in outcomes {
            seen.merge(outcome?);
            files.extend(read);
        }
        Ok(Points {
            base,
            axes,
            file: source.file.to_string(),
            text: source.text.to_string(),
            study_dir,
            kind,
            files,
            seen,
            kept: (0..count).map(|_| OnceLock::new()).collect(),
        })
    }

    /// How many points there are: the product of the axes' lengths.
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// What a user should hear before the study runs: the distinct cautions of its points (see
    /// [`crate::job::StudyFamily::cautions`]), at most 20.
    pub(crate) fn cautions(&self) -> &[String] {
        &self.seen.cautions
    }

    /// The families of the points, each once, in order of first appearance.
    pub(crate) fn families(&self) -> &[Family] {
        &self.seen.families
    }

    /// The width in characters of the widest [`ParamValue::shown`] value of `key` over the
    /// points (what a table's column needs, without resolving every point again).
    pub(crate) fn widest_shown(&self, key: Key) -> usize {
        families::catalog()
            .position(key)
            .and_then(|position| self.seen.widest.get(position))
            .copied()
            .unwrap_or(0)
    }

    /// Every point in order, each resolved as it is reached and not kept.
    pub(crate) fn resolved(&self) -> impl Iterator<Item = Point> + '_ {
        let mut resolver = self.resolver();
        (0..self.len()).map(move |index| self.resolve_with(&mut resolver, index))
    }

    /// `map` of every point, handed to `consume` in order until it fails: the points are
    /// resolved and mapped on rayon's threads [`BATCH`] at a time, the next batch while this
    /// thread consumes the last, so a sweep of a million points uses every core and holds two
    /// batches.
    pub(crate) fn map_in_order<T: Send, E>(
        &self,
        map: impl Fn(Point) -> T + Sync,
        mut consume: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<T>>(1);
        let map = &map;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for start in (0..self.len()).step_by(BATCH) {
                    let end = (start + BATCH).min(self.len());
                    let mapped: Vec<T> = (start..end)
                        .into_par_iter()
                        .map_init(
                            || self.resolver(),
                            |resolver, index| map(self.resolve_with(resolver, index)),
                        )
                        .collect();
                    if batches.send(mapped).is_err() {
                        break; // the consumer stopped
                    }
                }
            });
            for item in received.into_iter().flatten() {
                consume(item)?;
            }
            Ok(())
        })
    }

    /// Point `index`, resolved now and not kept.
    pub(crate) fn resolve(&self, index: usize) -> Point {
        self.resolve_with(&mut self.resolver(), index)
    }

    /// Point `index`, resolved on first access and kept.
    pub(crate) fn get(&self, index: usize) -> Option<&Point> {
        let kept = self.kept.get(index)?;
        Some(kept.get_or_init(|| Box::new(self.resolve(index))))
    }

    /// Every point in order, each kept once resolved (for small studies; large ones use
    /// [`Points::resolved`]).
    pub fn iter(&self) -> impl Iterator<Item = &Point> {
        (0..self.len()).map(|index| &self[index])
    }

    fn resolver(&self) -> Resolver<'_> {
        let reader = Reader {
            source: SourceMap::new(&self.file, &self.text),
            keys: families::catalog(),
        };
        Resolver::new(
            reader,
            self.study_dir.clone(),
            self.kind,
            self.files.clone(),
        )
    }

    fn resolve_with(&self, resolver: &mut Resolver<'_>, index: usize) -> Point {
        let steps = mixed_radix_digits(index, &self.axes);
        let settings = point_settings(&self.base, &self.axes, &steps);
        resolve_point(resolver, &settings, steps)
            .expect("every point resolved when the study loaded")
    }
}

impl Index<usize> for Points {
    type Output = Point;

    fn index(&self, index: usize) -> &Point {
        let count = self.len();
        self.get(index)
            .unwrap_or_else(|| panic!("point {index} of a sweep of {count}"))
    }
}

impl<'a> IntoIterator for &'a Points {
    type Item = &'a Point;
    type IntoIter = Box<dyn Iterator<Item = &'a Point> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl PartialEq for Points {
    /// Two sweeps are equal when they have the same points, in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.resolved().eq(other.resolved())
    }
}

impl fmt::Debug for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Points")
            .field("count", &self.len())
            .field("axes", &self.axes)
            .finish_non_exhaustive()
    }
}

/// At most this many distinct cautions are kept for a study (a sweep over many windows could
/// give one per point).
const MAX_CAUTIONS: usize = 20;

/// What the validation pass saw of the points it resolved: their families, the widest shown
/// value of each key and the distinct cautions. Consecutive points differ in a few keys, so only
/// a value that changed since the previous point of the same family is measured.
#[derive(Clone, Default)]
struct Seen {
    families: Vec<Family>,
    /// The distinct cautions of the points, in order of first appearance.
    cautions: Vec<String>,
    /// Per key, by its position in the registry's catalog.
    widest: Vec<usize>,
    previous: Option<(Family, Vec<(Key, ParamValue)>)>,
}

impl Seen {
    fn add(&mut self, point: Point) {
        self.caution(point.spec.cautions());
        let family = point.spec.family();
        if !self.families.contains(&family) {
            self.families.push(family);
        }
        let catalog = families::catalog();
        self.widest.resize(catalog.all().len(), 0);
        let previous = match &self.previous {
            Some((previous_family, params)) if *previous_family == family => Some(params),
            _ => None,
        };
        for (k, (key, value)) in point.params.iter().enumerate() {
            if previous.is_none_or(|p| p[k].1 != *value) {
                let position = catalog
                    .position(*key)
                    .expect("a family's key is in the catalog");
                self.widest[position] = self.widest[position].max(value.shown().chars().count());
            }
        }
        self.previous = Some((family, point.params));
    }

    /// Keep the cautions not kept yet, up to [`MAX_CAUTIONS`].
    fn caution(&mut self, cautions: Vec<String>) {
        for caution in cautions {
            if self.cautions.len() < MAX_CAUTIONS && !self.cautions.contains(&caution) {
                self.cautions.push(caution);
            }
        }
    }

    /// What `later` saw, after what `self` saw.
    fn merge(&mut self, later: Seen) {
        self.caution(later.cautions);
        for family in later.families {
            if !self.families.contains(&family) {
                self.families.push(family);
            }
        }
        if self.widest.len() < later.widest.len() {
            self.widest.resize(later.widest.len(), 0);
        }
        for (widest, other) in self.widest.iter_mut().zip(later.widest) {
            *widest = (*widest).max(other);
        }
    }
}

/// One point: its family's keys only, then the family resolves its settings.
fn resolve_point(
    resolver: &mut Resolver<'_>,
    settings: &Settings,
    steps: Vec<usize>,
) -> Result<Point, StudyError> {
    let family = settings.choice(MODEL_FAMILY, Family::from_name);
    reject_keys_of_other_family(resolver, settings, family)?;
    if resolver.kind() == StudyKind::Sbc && !family.calibrates() {
        let calibrating: Vec<&str> = Family::ALL
            .iter()
            .filter(|f| f.calibrates())
            .map(|f| f.name())
            .collect();
        let message = format!(
            "simulation-based calibration (kind = \"sbc\") is for the {} family, not \"{family}\"",
            calibrating.join(", ")
        );
        return Err(resolver
            .error_at(settings, &[MODEL_FAMILY], ErrorKind::Conflict, message)
            .help("remove kind = \"sbc\" under [study]"));
    }
    let spec = family.resolve(settings, resolver)?;
    let params = spec.params(settings);
    Ok(Point {
        spec,
        params,
        steps,
    })
}

/// A located error for the first key the point gives that is not one of `family`'s.
fn reject_keys_of_other_family(
    resolver: &Resolver<'_>,
    settings: &Settings,
    family: Family,
) -> Result<(), StudyError> {
    let keys = resolver.keys();
    let own = family.keys();
    let Some(&key) = keys
        .all()
        .iter()
        .find(|&&key| settings.given(key).is_some() && !own.contains(&key))
    else {
        return Ok(());
    };
    let names: Vec<String> = keys
        .families_of(key)
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect();
    let family_keys: Vec<&str> = own
        .iter()
        .filter(|k| k.section() == key.section())
        .map(|k| k.dotted())
        .collect();
    let message = format!(
        "`{}` applies only to model.family = {}, but the family is \"{family}\"",
        key.dotted(),
        names.join(" or ")
    );
    Err(resolver
        .error_at(settings, &[key], ErrorKind::Conflict, message)
        .allowed(format!(
            "for the {family} family in [{}]: {}",
            key.section(),
            family_keys.join(", ")
        ))
        .help(format!(
            "remove it, or set family = {} under [model]",
            names.join(" or ")
        )))
}

/// The settings of the point that takes step `steps[a]` along each axis `a`.
fn point_settings(base: &Settings, axes: &[Axis], steps: &[usize]) -> Settings {
    let mut settings = base.clone();
    for (axis, step) in axes.iter().zip(steps) {
        for (key, setting) in axis.keys.iter().zip(&axis.steps[*step]) {
            settings.set(*key, setting.clone());
        }
    }
    settings
}

/// The step along each axis of point `index`: its digits in the mixed radix of the axes'
/// lengths, the first digit most significant.
fn mixed_radix_digits(mut index: usize, axes: &[Axis]) -> Vec<usize> {
    let mut digits = vec![0; axes.len()];
    for (digit, axis) in digits.iter_mut().zip(axes).rev() {
        *digit = index % axis.len();
        index /= axis.len();
    }
    digits
}

/// Add "in the sweep point a = 1, b = 2" to an error found at one point of a sweep.
fn with_point_note(error: StudyError, axes: &[Axis], steps: &[usize]) -> StudyError {
    if axes.is_empty() {
        return error;
    }
    let assignments: Vec<String> = axes
        .iter()
        .zip(steps)
        .flat_map(|(axis, step)| {
            axis.keys
                .iter()
                .zip(&axis.steps[*step])
                .map(|(key, setting)| format!("{} = {}", key.dotted(), setting.value.canonical()))
        })
        .collect();
    error.note(format!("in the sweep point {}", assignments.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis_of(length: usize) -> Axis {
        Axis {
            name: String::new(),
            keys: Vec::new(),
            steps: vec![Vec::new(); length],
            span: 0..0,
        }
    }

    #[test]
    fn mixed_radix_counts_with_the_last_axis_fastest() {
        let axes = [axis_of(2), axis_of(3)];
        let all: Vec<Vec<usize>> = (0..6).map(|i| mixed_radix_digits(i, &axes)).collect();
        assert_eq!(
            all,
            vec![
                vec![0, 0],
                vec![0, 1],
                vec![0, 2],
                vec![1, 0],
                vec![1, 1],
                vec![1, 2]
            ]
        );
        assert_eq!(mixed_radix_digits(0, &[]), Vec::<usize>::new());
    }
}
