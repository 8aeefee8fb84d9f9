//! From settings to a job's resolved model, data and sampler: defaults that follow other keys,
//! checks that involve more than one key, the memory estimate, and the grid CSV check. Run on
//! every sweep point when a study is loaded, so a study that loads can be planned and run
//! without further validation (and again whenever [`super::points`] is asked for a point).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::StudyKind;
use super::error::{ErrorKind, SourceMap, StudyError};
use super::grid_csv::read_grid_csv;
use super::keys::*;
use super::settings::{Setting, Settings};
use super::shape::{self, GridShape, WindowSpec};
use crate::families::latent_field::LatentFieldSpec;
use crate::families::{Family, FamilySpec};
use crate::model::grid::{Grid, Window};
use crate::model::hyper::{HyperName, HyperPrior, HyperPriors};
use crate::model::{
    DataSource, DataSpec, KernelKind, KernelSpec, LikelihoodKind, MeanSpec, ModelSpec,
};
use crate::sampler::hyper::{HyperProposalKind, HyperSettings, HyperUpdate};
use crate::sampler::{Broken, SamplerKind, SamplerSettings, SamplerSpec, SpecError};

/// A job refuses to start when its estimated memory is above this: 12 GiB.
pub const MEMORY_LIMIT_BYTES: f64 = 12.0 * 1024.0 * 1024.0 * 1024.0;

/// How far (relative) a csv grid's `model.window` may change the data window's width / height:
/// a window rescales the data, it does not stretch it.
const WINDOW_ASPECT_TOLERANCE: f64 = 1e-3;

/// Above this many observations the exact gaussian posterior is not formed densely.
const EXACT_OBSERVATIONS_CAP: f64 = 2500.0;

/// One point of the sweep product, resolved and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The point's family and its settings, resolved by the family.
    pub spec: FamilySpec,
    /// Every parameter in [`Key::all`] order, `Null` where it does not apply.
    pub params: Vec<(Key, ParamValue)>,
    /// The step taken along each sweep axis.
    pub steps: Vec<usize>,
}

/// What a job records beyond its summary tables (`[output]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputSpec {
    /// Thinned draws per chain of every cell kept in `draws.parquet`.
    pub field_draws: usize,
    /// Kept draws per chain stored for the per-cell diagnostics.
    pub cell_draws: usize,
}

/// Estimated peak bytes of one job: the chains' state and running sums (16 vectors of N per
/// chain plus 8 shared), and for the gaussian likelihood the dense exact posterior over at most
/// 2500 observations: 8 N (16 chains + 8) + 8 min(M, 2500)^2.
pub fn estimated_job_bytes(
    cells: f64,
    chains: f64,
    likelihood: LikelihoodKind,
    observed: f64,
) -> f64 {
    let sampler = 8.0 * cells * (16.0 * chains + 8.0);
    let exact = match likelihood {
        LikelihoodKind::Gaussian => 8.0 * observed.min(EXACT_OBSERVATIONS_CAP).powi(2),
        _ => 0.0,
    };
    sampler + exact
}

/// Human-readable bytes: "37.3 GiB", "512.0 MiB".
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A data file as read for one grid and likelihood: (path, column, (nx, ny), likelihood).
type CsvKey = (PathBuf, String, (usize, usize), LikelihoodKind);

/// What each data file read gave: the window of its cell centres, or why it cannot be used.
pub type CheckedFiles = HashMap<CsvKey, Result<Option<Window>, String>>;

/// What resolving needs beyond the settings: where the study lives and what kind it is, and a
/// cache so each data file is read once per (file, column, grid, likelihood).
pub struct Resolver<'s> {
    source: SourceMap<'s>,
    study_dir: PathBuf,
    kind: StudyKind,
    checked_files: CheckedFiles,
}

impl<'s> Resolver<'s> {
    pub fn new(source: SourceMap<'s>, study_dir: PathBuf, kind: StudyKind) -> Self {
        Self::with_checked_files(source, study_dir, kind, HashMap::new())
    }

    /// A resolver that knows what the data files in `checked_files` gave, and reads none of
    /// them again.
    pub fn with_checked_files(
        source: SourceMap<'s>,
        study_dir: PathBuf,
        kind: StudyKind,
        checked_files: CheckedFiles,
    ) -> Self {
        Self {
            source,
            study_dir,
            kind,
            checked_files,
        }
    }

    /// What the data files read so far gave.
    pub fn into_checked_files(self) -> CheckedFiles {
        self.checked_files
    }

    /// One point: its family's keys only, then the family resolves its settings.
    pub fn resolve(&mut self, settings: &Settings, steps: Vec<usize>) -> Result<Point, StudyError> {
        let family = settings.choice(MODEL_FAMILY, Family::from_name);
        self.reject_keys_of_other_family(settings, family)?;
        if self.kind == StudyKind::Sbc && family != Family::LatentField {
            let span = self.span_of(settings, &[MODEL_FAMILY]);
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    format!(
                        "simulation-based calibration (kind = \"sbc\") is for the latent-field family, not \"{family}\""
                    ),
                )
                .help("remove kind = \"sbc\" under [study]"));
        }
        let spec = family.resolve(settings, self)?;
        let params = spec.params(settings);
        Ok(Point {
            spec,
            params,
            steps,
        })
    }

    /// A latent-field point: defaults, cross-key checks, memory, data file.
    pub fn resolve_latent_field(
        &mut self,
        settings: &Settings,
    ) -> Result<LatentFieldSpec, StudyError> {
        self.check_latent_kind(settings)?;
        let source = settings.choice(DATA_SOURCE, DataSource::from_name);
        let is_csv = source == DataSource::Csv;
        self.reject_keys_of_other_source(settings, source)?;
        if self.kind == StudyKind::Sbc {
            self.check_sbc(settings, is_csv)?;
        }
        let likelihood = settings.choice(MODEL_LIKELIHOOD, LikelihoodKind::from_name);
        let shape = grid_shape(settings);
        let cells = shape.cells();
        let observed = if is_csv {
            cells - (settings.float(DATA_HOLDOUT) * cells).round()
        } else {
            (cells / settings.int(DATA_SUBSAMPLE).max(1) as f64).floor()
        };
        self.check_memory(settings, shape, likelihood, observed)?;
        // Below the memory limit the grid has at most a few hundred million cells.
        let cells = cells as usize;
        if is_csv {
            self.check_holdout(settings, cells)?;
        } else {
            self.check_subsample(settings, shape)?;
        }
        let sampler = sampler_settings(settings)
            .check()
            .map_err(|error| self.spec_error(settings, error))?;
        let (data, data_window) = if is_csv {
            self.csv_data(settings, shape, likelihood)?
        } else {
            let data = DataSpec::Simulated {
                truth_length_scale: truth_length_scale(settings),
                subsample: settings.int(DATA_SUBSAMPLE) as usize,
            };
            (data, None)
        };
        let grid = self.grid(settings, shape, data_window)?;
        let model = ModelSpec {
            grid,
            kernel: KernelSpec {
                kind: settings.choice(MODEL_KERNEL, KernelKind::from_name),
                length_scale: settings.float(MODEL_LENGTH_SCALE),
                variance: settings.float(MODEL_VARIANCE),
                length_scale_y: settings.given_float(MODEL_LENGTH_SCALE_Y),
            },
            likelihood,
            noise_sd: settings.float(DATA_NOISE_SD),
            offset: offset(settings, &grid),
            evidence_draws: settings.int(MODEL_EVIDENCE_DRAWS) as usize,
            mean: mean_spec(settings, source, likelihood),
            hyper: hyper_priors(settings),
        };
        self.check_hyper(settings, &model, &sampler)?;
        let output = OutputSpec {
            field_draws: settings.int(OUTPUT_FIELD_DRAWS) as usize,
            cell_draws: settings.int(OUTPUT_CELL_DRAWS) as usize,
        };
        Ok(LatentFieldSpec {
            model,
            data,
            sampler,
            output,
        })
    }

    /// The rules between the `model.*_prior` keys, `sampler.hyper` and the model.
    fn check_hyper(
        &self,
        settings: &Settings,
        model: &ModelSpec,
        sampler: &SamplerSpec,
    ) -> Result<(), StudyError> {
        let update = sampler.hyper().update;
        let given: Vec<Key> = PRIOR_KEYS
            .iter()
            .map(|&(key, _)| key)
            .filter(|&key| settings.text(key) != FIXED)
            .collect();
        let conflict = |keys: &[Key], message: String, help: String| {
            Err(self
                .error_at(settings, keys, ErrorKind::Conflict, message)
                .help(help))
        };
        let kind = sampler.kind();
        if kind == SamplerKind::Inla && given.is_empty() {
            return conflict(
                &[SAMPLER_KIND],
                "sampler.kind = \"inla\" integrates over the inferred hyperparameters, but no \
                 hyperparameter has a prior"
                    .into(),
                "give model.length_scale_prior, model.variance_prior or model.mean_prior, or use \
                 kind = \"laplace\" with every hyperparameter fixed"
                    .into(),
            );
        }
        if let Some(&key) = given.first()
            && update == HyperUpdate::None
            && kind != SamplerKind::Inla
        {
            if !kind.is_markov_chain() {
                return conflict(
                    &[key, SAMPLER_KIND],
                    format!(
                        "{} gives a prior, but the {kind} approximation fixes every hyperparameter",
                        key.dotted()
                    ),
                    "use sampler.kind = \"inla\" to integrate over it, or remove the prior".into(),
                );
            }
            return conflict(
                &[key, SAMPLER_HYPER],
                format!(
                    "{} gives a prior, so the chains infer it, but sampler.hyper = \"none\"",
                    key.dotted()
                ),
                format!(
                    "say how the chains update it: sampler.hyper = {}, or use sampler.kind = \
                     \"inla\"",
                    quoted_words(&HyperUpdate::NAMES[1..])
                ),
            );
        }
        if given.is_empty() && update != HyperUpdate::None {
            return conflict(
                &[SAMPLER_HYPER],
                format!("sampler.hyper = \"{update}\" but no hyperparameter has a prior"),
                "give model.length_scale_prior, model.variance_prior or model.mean_prior, or remove sampler.hyper".into(),
            );
        }
        for &(key, name) in &PRIOR_KEYS {
            let Some(prior) = model.hyper.prior(name) else {
                continue;
            };
            if name != HyperName::Mean && !prior.is_positive() {
                return conflict(
                    &[key],
                    format!(
                        "{} = \"{}\" puts mass on values <= 0, but the {name} is positive",
                        key.dotted(),
                        prior.canonical()
                    ),
                    "use log-normal, gamma, inverse-gamma, half-normal, or uniform with low >= 0"
                        .into(),
                );
            }
        }
        let separable =
            model.kernel.kind.is_separable() || model.grid.nx() == 1 || model.grid.ny() == 1;
        let anisotropic = [MODEL_LENGTH_SCALE_Y, MODEL_LENGTH_SCALE_Y_PRIOR]
            .into_iter()
            .find(|&key| settings.given(key).is_some());
        if let Some(key) = anisotropic
            && !separable
        {
            return conflict(
                &[key, MODEL_KERNEL],
                format!(
                    "{} gives the kernel a length scale along y, but only the squared-exponential kernel has one per axis on a 2-D grid (the {} kernel is a circulant embedding)",
                    key.dotted(),
                    model.kernel.kind
                ),
                "use model.kernel = \"squared-exponential\", or one length scale".into(),
            );
        }
        if !given.is_empty() && !separable {
            return conflict(
                &[given[0], MODEL_KERNEL],
                format!(
                    "inferring hyperparameters needs a separable prior (a Kronecker product), but the {} kernel on a 2-D grid is a circulant embedding whose torus changes with the length scale",
                    model.kernel.kind
                ),
                "use model.kernel = \"squared-exponential\" (or a 1-D grid), or fix the hyperparameters".into(),
            );
        }
        Ok(())
    }

    /// `sampler.kind` names a kind of another family (its word list is shared).
    fn check_latent_kind(&self, settings: &Settings) -> Result<(), StudyError> {
        self.sampler_kind(
            settings,
            Family::LatentField,
            SamplerKind::Pcn,
            SamplerKind::from_name,
            SamplerKind::NAMES,
        )
        .map(|_| ())
    }

    /// `sampler.kind` of a family whose samplers are the `words` that `parse` reads: `default`
    /// when not given; a word of another family (the key's words are shared) is a located
    /// error that lists the family's own.
    pub fn sampler_kind<E>(
        &self,
        settings: &Settings,
        family: Family,
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
            .allowed(super::keys::quoted_words(words))
        })
    }

    /// Where an error about `keys` should point: the first of them that is written in the
    /// file, else the start of the file.
    fn span_of(&self, settings: &Settings, keys: &[Key]) -> Range<usize> {
        keys.iter()
            .find_map(|key| settings.span(*key))
            .unwrap_or(0..0)
    }

    /// The folder the study's relative paths resolve against.
    pub fn study_dir(&self) -> &Path {
        &self.study_dir
    }

    /// An error about `keys`, located at the first of them written in the file (else the start
    /// of the file).
    pub fn error_at(
        &self,
        settings: &Settings,
        keys: &[Key],
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> StudyError {
        let span = self.span_of(settings, keys);
        self.source.error(kind, &span, message)
    }

    fn reject_keys_of_other_family(
        &self,
        settings: &Settings,
        family: Family,
    ) -> Result<(), StudyError> {
        for key in Key::all() {
            let Some(Setting { span, .. }) = settings.given(key) else {
                continue;
            };
            if key.applies_to(family) {
                continue;
            }
            let names: Vec<String> = key.families().iter().map(|f| format!("\"{f}\"")).collect();
            let span = span.clone().unwrap_or(0..0);
            let family_keys: Vec<&str> = Key::all()
                .filter(|k| k.section() == key.section() && k.applies_to(family))
                .map(Key::dotted)
                .collect();
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    format!(
                        "`{}` applies only to model.family = {}, but the family is \"{family}\"",
                        key.dotted(),
                        names.join(" or ")
                    ),
                )
                .allowed(format!(
                    "for the {family} family in [{}]: {}",
                    key.section(),
                    family_keys.join(", ")
                ))
                .help(format!(
                    "remove it, or set family = {} under [model]",
                    names.join(" or ")
                )));
        }
        Ok(())
    }

    fn reject_keys_of_other_source(
        &self,
        settings: &Settings,
        source: DataSource,
    ) -> Result<(), StudyError> {
        for key in Key::all() {
            let Applies::Source(only) = key.applies() else {
                continue;
            };
            let Some(Setting { span, .. }) = settings.given(key) else {
                continue;
            };
            if only != source {
                let span = span.clone().unwrap_or(0..0);
                return Err(self
                    .source
                    .error(
                        ErrorKind::Conflict,
                        &span,
                        format!(
                            "`{}` applies only to data.source = \"{only}\", but the source is \"{source}\"",
                            key.dotted()
                        ),
                    )
                    .help(format!("remove it, or set source = \"{only}\" under [data]")));
            }
        }
        Ok(())
    }

    fn check_sbc(&self, settings: &Settings, is_csv: bool) -> Result<(), StudyError> {
        if is_csv {
            let span = self.span_of(settings, &[DATA_SOURCE]);
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    "simulation-based calibration needs simulated data, not data.source = \"csv\"",
                )
                .help("SBC draws each truth from the model's prior; use source = \"simulated\""));
        }
        if let Some(given) = settings.given(DATA_LENGTH_SCALE)
            && given.value != ParamValue::Float(settings.float(MODEL_LENGTH_SCALE))
        {
            let span = given.span.clone().unwrap_or(0..0);
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    "simulation-based calibration draws the truth from the model's own prior, so \
                     data.length_scale must equal model.length_scale",
                )
                .help("remove data.length_scale; it follows model.length_scale"));
        }
        Ok(())
    }

    fn check_memory(
        &self,
        settings: &Settings,
        shape: GridShape,
        likelihood: LikelihoodKind,
        observed: f64,
    ) -> Result<(), StudyError> {
        let chains = settings.int(SAMPLER_CHAINS) as f64;
        let bytes = estimated_job_bytes(shape.cells(), chains, likelihood, observed);
        if bytes <= MEMORY_LIMIT_BYTES {
            return Ok(());
        }
        let span = self.span_of(settings, &[MODEL_GRID, SAMPLER_CHAINS]);
        let grid = shape.describe();
        Err(self
            .source
            .error(
                ErrorKind::TooLarge,
                &span,
                format!(
                    "a job on a {grid} grid with {chains} chain(s) needs an estimated {} of memory, above the limit of {}",
                    format_bytes(bytes),
                    format_bytes(MEMORY_LIMIT_BYTES)
                ),
            )
            .note("estimate: 8 N (16 chains + 8) bytes, plus 8 min(M, 2500)^2 for the exact gaussian posterior")
            .help("use a smaller grid or fewer chains"))
    }

    fn check_subsample(&self, settings: &Settings, shape: GridShape) -> Result<(), StudyError> {
        let subsample = settings.int(DATA_SUBSAMPLE);
        let cells = shape.cells() as u64;
        if subsample as u64 <= cells {
            return Ok(());
        }
        let span = self.span_of(settings, &[DATA_SUBSAMPLE, MODEL_GRID]);
        let grid = shape.describe();
        Err(self
            .source
            .error(
                ErrorKind::Conflict,
                &span,
                format!(
                    "data.subsample = {subsample} leaves no observed cell on a {grid} grid ({cells} cells)"
                ),
            )
            .allowed(format!("a subsample from 1 to {cells} on this grid")))
    }

    fn check_holdout(&self, settings: &Settings, cells: usize) -> Result<(), StudyError> {
        let holdout = settings.float(DATA_HOLDOUT);
        let held = (holdout * cells as f64).round();
        if held < cells as f64 {
            return Ok(());
        }
        let span = self.span_of(settings, &[DATA_HOLDOUT, MODEL_GRID]);
        Err(self
            .source
            .error(
                ErrorKind::Conflict,
                &span,
                format!(
                    "data.holdout = {holdout:?} holds out all {cells} cells, leaving none to fit"
                ),
            )
            .help("use a smaller holdout"))
    }

    /// A spec's rule broken, located at the first of its keys written in the file.
    fn spec_error(&self, settings: &Settings, error: SpecError) -> StudyError {
        let keys: Vec<Key> = std::iter::once(error.key)
            .chain(error.related.iter().copied())
            .filter_map(Key::from_dotted)
            .collect();
        let span = self.span_of(settings, &keys);
        let kind = match error.broken {
            Broken::Range => ErrorKind::OutOfRange,
            Broken::Conflict => ErrorKind::Conflict,
        };
        let located = self.source.error(kind, &span, error.message);
        let located = match error.allowed {
            Some(allowed) => located.allowed(allowed),
            None => located,
        };
        located.maybe_help(error.help)
    }

    /// The csv data of a point and the window its cell centres give (None when it has none).
    fn csv_data(
        &mut self,
        settings: &Settings,
        shape: GridShape,
        likelihood: LikelihoodKind,
    ) -> Result<(DataSpec, Option<Window>), StudyError> {
        let Some(written) = settings.given(DATA_PATH).map(|s| s.value.to_string()) else {
            let span = self.span_of(settings, &[DATA_SOURCE]);
            return Err(self
                .source
                .error(ErrorKind::Conflict, &span, "data.source = \"csv\" needs data.path")
                .help("add path = \"data/your_grid.csv\" under [data] (relative to the study file's folder)"));
        };
        let path = self.study_dir.join(&written);
        let column = data_column(settings, likelihood);
        let dims = shape.dims();
        let cache_key = (path.clone(), column.clone(), dims, likelihood);
        let outcome = self
            .checked_files
            .entry(cache_key)
            .or_insert_with(|| {
                read_grid_csv(&path, &column, dims, likelihood)
                    .map(|data| data.window)
                    .map_err(|e| e.to_string())
            })
            .clone();
        let window = match outcome {
            Ok(window) => window,
            Err(problem) => {
                let span = self.span_of(settings, &[DATA_PATH]);
                return Err(self.source.error(
                    ErrorKind::Data,
                    &span,
                    format!("bad data file: {problem}"),
                ));
            }
        };
        let data = DataSpec::Csv {
            path,
            column,
            holdout: settings.float(DATA_HOLDOUT),
        };
        Ok((data, window))
    }

    /// The grid with its window: `model.window` if given (for csv data it must keep the data's
    /// aspect ratio: it rescales the data's window), else the data's window, else the default.
    fn grid(
        &self,
        settings: &Settings,
        shape: GridShape,
        data_window: Option<Window>,
    ) -> Result<Grid, StudyError> {
        let (nx, ny) = shape.dims();
        let Some(given) = settings.given(MODEL_WINDOW) else {
            return Ok(match data_window {
                Some(window) => Grid::over_window(nx, ny, window),
                None => shape.default_grid(),
            });
        };
        let spec = WindowSpec::from_param(&given.value).expect("validated window");
        let span = given.span.clone().unwrap_or(0..0);
        if spec.y.is_some() == shape.is_line() {
            let wanted = if shape.is_line() {
                "[[x0, x1]] for a 1-D grid"
            } else {
                "[[x0, x1], [y0, y1]] for a 2-D grid"
            };
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    format!(
                        "model.window = {} does not fit the {} grid",
                        given.value,
                        shape.describe()
                    ),
                )
                .allowed(wanted));
        }
        let window = spec.window();
        if let Some(data) = data_window
            && !shape.is_line()
        {
            let aspect = |w: &Window| (w.x.1 - w.x.0) / (w.y.1 - w.y.0);
            let (wanted, found) = (aspect(&data), aspect(&window));
            if ((found - wanted) / wanted).abs() > WINDOW_ASPECT_TOLERANCE {
                return Err(self
                    .source
                    .error(
                        ErrorKind::Conflict,
                        &span,
                        format!(
                            "model.window = {} has width / height {found:.6}, but the data's window \
                             {} (from its cell centres) has {wanted:.6}: a window for csv data \
                             rescales the data's window and must keep its shape (to 0.1%)",
                            given.value,
                            shape::window_text(&data, false)
                        ),
                    )
                    .help(format!(
                        "remove model.window to use the data's own units, or give a window of \
                         width / height {wanted:.6}"
                    )));
            }
        }
        Ok(Grid::over_window(nx, ny, window))
    }
}

/// `model.grid` as a shape (validation admits only sizes >= 1).
fn grid_shape(settings: &Settings) -> GridShape {
    GridShape::from_param(&settings.value(MODEL_GRID)).expect("validated grid")
}

/// `model.offset`: a number, or "log-area", the log of the grid's cell area.
fn offset(settings: &Settings, grid: &Grid) -> f64 {
    match settings.value(MODEL_OFFSET) {
        ParamValue::Text(_) => grid.cell_area().ln(),
        _ => settings.float(MODEL_OFFSET),
    }
}

/// The truth's length scale: data.length_scale if given, else the model's.
fn truth_length_scale(settings: &Settings) -> f64 {
    match settings.given(DATA_LENGTH_SCALE) {
        Some(_) => settings.float(DATA_LENGTH_SCALE),
        None => settings.float(MODEL_LENGTH_SCALE),
    }
}

/// The CSV column: data.column if given, else by likelihood.
fn data_column(settings: &Settings, likelihood: LikelihoodKind) -> String {
    match settings.given(DATA_COLUMN) {
        Some(_) => settings.text(DATA_COLUMN),
        None => default_column(likelihood).to_string(),
    }
}

/// The CSV column a likelihood reads by default.
pub fn default_column(likelihood: LikelihoodKind) -> &'static str {
    match likelihood {
        LikelihoodKind::Poisson => "count",
        LikelihoodKind::Probit => "label",
        LikelihoodKind::Gaussian => "value",
    }
}

/// The sampler settings as written, kind defaults left to the spec's check.
fn sampler_settings(settings: &Settings) -> SamplerSettings {
    SamplerSettings {
        kind: settings.choice(SAMPLER_KIND, SamplerKind::from_name),
        beta: settings.float(SAMPLER_BETA),
        iterations: settings.int(SAMPLER_ITERATIONS) as u64,
        burn_in: settings.int(SAMPLER_BURN_IN) as u64,
        thin: settings.int(SAMPLER_THIN) as u64,
        chains: settings.int(SAMPLER_CHAINS) as usize,
        adapt: settings.bool(SAMPLER_ADAPT),
        target_acceptance: settings.given_float(SAMPLER_TARGET_ACCEPTANCE),
        rank: match settings.int(SAMPLER_RANK) {
            0 => None,
            rank => Some(rank as usize),
        },
        hyper: HyperSettings {
            update: settings.choice(SAMPLER_HYPER, HyperUpdate::from_name),
            proposal: settings.choice(SAMPLER_HYPER_PROPOSAL, HyperProposalKind::from_name),
            importance_draws: settings.int(SAMPLER_HYPER_IMPORTANCE_DRAWS) as usize,
        },
    }
}

/// The `model.*_prior` keys, with the hyperparameter each infers.
pub const PRIOR_KEYS: [(Key, HyperName); 4] = [
    (MODEL_LENGTH_SCALE_PRIOR, HyperName::LengthScale),
    (MODEL_LENGTH_SCALE_Y_PRIOR, HyperName::LengthScaleY),
    (MODEL_VARIANCE_PRIOR, HyperName::Variance),
    (MODEL_MEAN_PRIOR, HyperName::Mean),
];

/// The priors given (each key's text already admitted by its rule).
fn hyper_priors(settings: &Settings) -> HyperPriors {
    HyperPriors::new(
        PRIOR_KEYS
            .iter()
            .filter_map(|&(key, name)| {
                let text = settings.text(key);
                (text != FIXED).then(|| HyperPrior::parse(&text).ok().map(|p| (name, p)))?
            })
            .collect(),
    )
}

/// `model.mean`: a number, "auto", or by default "auto" for real poisson and gaussian data and
/// 0 otherwise (a simulated truth has mean 0).
fn mean_spec(settings: &Settings, source: DataSource, likelihood: LikelihoodKind) -> MeanSpec {
    match settings.value(MODEL_MEAN) {
        ParamValue::Float(mean) => MeanSpec::Value(mean),
        ParamValue::Text(_) => MeanSpec::Auto,
        _ => default_mean(source, likelihood),
    }
}

fn default_mean(source: DataSource, likelihood: LikelihoodKind) -> MeanSpec {
    match (source, likelihood) {
        (DataSource::Csv, LikelihoodKind::Poisson | LikelihoodKind::Gaussian) => MeanSpec::Auto,
        _ => MeanSpec::Value(0.0),
    }
}

fn mean_param(mean: MeanSpec) -> ParamValue {
    match mean {
        MeanSpec::Auto => ParamValue::text("auto"),
        MeanSpec::Value(mean) => ParamValue::Float(mean),
    }
}

/// Every parameter of a latent-field point, defaults applied, `Null` where it does not apply.
pub fn latent_field_params(settings: &Settings, spec: &LatentFieldSpec) -> Vec<(Key, ParamValue)> {
    let (sampler, model) = (&spec.sampler, &spec.model);
    let source = spec.data.source();
    let applies = |key: Key| {
        key.applies_to(Family::LatentField)
            && match key.applies() {
                Applies::Always => true,
                Applies::Source(only) => only == source,
            }
    };
    let mut params: Vec<(Key, ParamValue)> = Key::all()
        .map(|key| {
            let value = if applies(key) {
                settings.value(key)
            } else {
                ParamValue::Null
            };
            (key, value)
        })
        .collect();
    // The keys whose value is derived from the others when not given.
    let mut derived = |key: Key, value: ParamValue| {
        if applies(key) {
            params[key.index()].1 = value;
        }
    };
    derived(
        DATA_LENGTH_SCALE,
        ParamValue::Float(truth_length_scale(settings)),
    );
    derived(
        DATA_COLUMN,
        ParamValue::text(&data_column(settings, model.likelihood)),
    );
    derived(MODEL_MEAN, mean_param(model.mean));
    derived(
        MODEL_LENGTH_SCALE_Y,
        ParamValue::Float(model.kernel.along_y().length_scale),
    );
    derived(MODEL_OFFSET, ParamValue::Float(model.offset));
    for &(key, name) in &PRIOR_KEYS {
        let prior = model.hyper.prior(name);
        derived(
            key,
            prior.map_or(ParamValue::word(FIXED), |p| {
                ParamValue::text(&p.canonical())
            }),
        );
    }
    derived(
        SAMPLER_ADAPT,
        ParamValue::Bool(sampler.adaptation().is_some()),
    );
    derived(
        SAMPLER_TARGET_ACCEPTANCE,
        sampler
            .adaptation()
            .map_or(ParamValue::Null, |a| ParamValue::Float(a.target_acceptance)),
    );
    params
}

/// Every parameter of a point of `family` whose keys need no derived defaults: the given value
/// or the default where the key applies to the family, `Null` elsewhere.
pub fn plain_params(settings: &Settings, family: Family) -> Vec<(Key, ParamValue)> {
    Key::all()
        .map(|key| {
            let value = if key.applies_to(family) {
                settings.value(key)
            } else {
                ParamValue::Null
            };
            (key, value)
        })
        .collect()
}

/// Whether `key`'s resolved `value` is the one it takes when not given: derived defaults
/// computed from the other settings of the point. Keys declared [`Keyed::UnlessDefault`] leave
/// the canonical job key when it is.
pub fn is_default(key: Key, value: &ParamValue, params: &[(Key, ParamValue)]) -> bool {
    let param = |k: Key| {
        params
            .iter()
            .find(|(p, _)| *p == k)
            .map(|(_, v)| v.clone())
            .unwrap_or(ParamValue::Null)
    };
    if let Some(default) = key.default_value() {
        return *value == default;
    }
    let text = |k: Key| match param(k) {
        ParamValue::Text(t) => t.to_string(),
        _ => String::new(),
    };
    if key == MODEL_LENGTH_SCALE_Y {
        return *value == param(MODEL_LENGTH_SCALE);
    }
    if key == MODEL_MEAN {
        let source = DataSource::from_name(&text(DATA_SOURCE));
        let likelihood = LikelihoodKind::from_name(&text(MODEL_LIKELIHOOD));
        return match (source, likelihood) {
            (Some(source), Some(likelihood)) => {
                *value == mean_param(default_mean(source, likelihood))
            }
            _ => false,
        };
    }
    if key == SAMPLER_ADAPT || key == SAMPLER_TARGET_ACCEPTANCE {
        let Some(tuning) = SamplerKind::from_name(&text(SAMPLER_KIND)).and_then(|k| k.tuning())
        else {
            return value.is_null() || *value == ParamValue::Bool(false);
        };
        return if key == SAMPLER_ADAPT {
            *value == ParamValue::Bool(tuning.adapts_by_default)
        } else {
            value.is_null() || *value == ParamValue::Float(tuning.target_acceptance)
        };
    }
    false
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_estimate_follows_the_formula() {
        let n = 256.0 * 256.0;
        let gaussian = estimated_job_bytes(n, 2.0, LikelihoodKind::Gaussian, n / 4.0);
        assert_eq!(gaussian, 8.0 * n * 40.0 + 8.0 * 2500.0 * 2500.0);
        let poisson = estimated_job_bytes(n, 2.0, LikelihoodKind::Poisson, n / 4.0);
        assert_eq!(poisson, 8.0 * n * 40.0);
        assert_eq!(format_bytes(12.0 * 1024.0 * 1024.0 * 1024.0), "12.0 GiB");
        assert_eq!(format_bytes(512.0), "512.0 B");
    }
}
