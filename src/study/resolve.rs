//! From settings to a job's resolved model, data and sampler: defaults that follow other keys,
//! checks that involve more than one key, the memory estimate, and the grid CSV check. Run on
//! every sweep point when a study is loaded, so a study that loads can be planned and run
//! without further validation.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::StudyKind;
use super::error::{ErrorKind, SourceMap, StudyError};
use super::grid_csv::read_grid_csv;
use super::keys::{Key, ParamValue};
use super::settings::{Setting, Settings};
use super::sweep::Axis;
use crate::model::{DataSpec, KernelSpec, LikelihoodKind, ModelSpec};
use crate::sampler::{Broken, SamplerKind, SamplerSettings, SamplerSpec, SpecError};

/// A job refuses to start when its estimated memory is above this: 12 GiB.
pub const MEMORY_LIMIT_BYTES: f64 = 12.0 * 1024.0 * 1024.0 * 1024.0;

/// Above this many observations the exact gaussian posterior is not formed densely.
const EXACT_OBSERVATIONS_CAP: f64 = 2500.0;

/// One point of the sweep product, resolved and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub model: ModelSpec,
    pub data: DataSpec,
    pub sampler: SamplerSpec,
    /// Every parameter in [`Key::ALL`] order, `Null` where it does not apply.
    pub params: Vec<(Key, ParamValue)>,
    /// The step taken along each sweep axis.
    pub steps: Vec<usize>,
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

/// What resolving needs beyond the settings: where the study lives and what kind it is, and a
/// cache so each data file is read once per (file, column, grid, likelihood).
pub struct Resolver<'s> {
    source: SourceMap<'s>,
    study_dir: PathBuf,
    kind: StudyKind,
    checked_files: HashMap<(PathBuf, String, usize, LikelihoodKind), Result<(), String>>,
}

impl<'s> Resolver<'s> {
    pub fn new(source: SourceMap<'s>, study_dir: PathBuf, kind: StudyKind) -> Self {
        Self {
            source,
            study_dir,
            kind,
            checked_files: HashMap::new(),
        }
    }

    /// Every point of the product of `axes` over `base`, first axis outermost.
    pub fn resolve_all(
        &mut self,
        base: &Settings,
        axes: &[Axis],
    ) -> Result<Vec<Point>, StudyError> {
        let lengths: Vec<usize> = axes.iter().map(Axis::len).collect();
        let total: usize = lengths.iter().product();
        let mut points = Vec::with_capacity(total);
        for index in 0..total {
            let steps = mixed_radix_digits(index, &lengths);
            let mut settings = base.clone();
            for (axis, step) in axes.iter().zip(&steps) {
                for (key, setting) in axis.keys.iter().zip(&axis.steps[*step]) {
                    settings.set(*key, setting.clone());
                }
            }
            let point = self
                .resolve(&settings, steps.clone())
                .map_err(|error| with_point_note(error, axes, &steps))?;
            points.push(point);
        }
        Ok(points)
    }

    /// One point: defaults, cross-key checks, memory, data file.
    pub fn resolve(&mut self, settings: &Settings, steps: Vec<usize>) -> Result<Point, StudyError> {
        let source_name = settings.text(Key::DataSource);
        let is_csv = source_name == "csv";
        self.reject_keys_of_other_source(settings, &source_name)?;
        if self.kind == StudyKind::Sbc {
            self.check_sbc(settings, is_csv)?;
        }
        let likelihood = likelihood_kind(&settings.text(Key::ModelLikelihood));
        let grid = settings.int(Key::ModelGrid).max(1);
        let cells = (grid as f64) * (grid as f64);
        let observed = if is_csv {
            cells - (settings.float(Key::DataHoldout) * cells).round()
        } else {
            (cells / settings.int(Key::DataSubsample).max(1) as f64).floor()
        };
        self.check_memory(settings, cells, likelihood, observed)?;
        // Below the memory limit the grid has at most a few hundred million cells.
        let grid = grid as usize;
        let cells = grid * grid;
        if is_csv {
            self.check_holdout(settings, cells)?;
        } else {
            self.check_subsample(settings, cells)?;
        }
        let sampler_kind = sampler_kind(&settings.text(Key::SamplerKind));
        let sampler = SamplerSettings {
            kind: sampler_kind,
            beta: settings.float(Key::SamplerBeta),
            iterations: settings.int(Key::SamplerIterations) as u64,
            burn_in: settings.int(Key::SamplerBurnIn) as u64,
            thin: settings.int(Key::SamplerThin) as u64,
            chains: settings.int(Key::SamplerChains) as usize,
            adapt: None,
            target_acceptance: None,
        }
        .check()
        .map_err(|error| self.spec_error(settings, error))?;
        let data = if is_csv {
            self.csv_data(settings, grid, likelihood)?
        } else {
            DataSpec::Simulated {
                truth_length_scale: truth_length_scale(settings),
                subsample: settings.int(Key::DataSubsample) as usize,
            }
        };
        let model = ModelSpec {
            grid,
            kernel: KernelSpec {
                family: crate::model::spec::KernelFamily::SquaredExponential,
                length_scale: settings.float(Key::ModelLengthScale),
                variance: settings.float(Key::ModelVariance),
            },
            likelihood,
            noise_sd: settings.float(Key::DataNoiseSd),
            offset: settings.float(Key::ModelOffset),
            evidence_draws: settings.int(Key::ModelEvidenceDraws) as usize,
        };
        let params = resolved_params(settings, is_csv, likelihood);
        Ok(Point {
            model,
            data,
            sampler,
            params,
            steps,
        })
    }

    /// Where an error about `keys` should point: the first of them that is written in the
    /// file, else the start of the file.
    fn span_of(&self, settings: &Settings, keys: &[Key]) -> Range<usize> {
        keys.iter()
            .find_map(|key| settings.span(*key))
            .unwrap_or(0..0)
    }

    fn reject_keys_of_other_source(
        &self,
        settings: &Settings,
        source_name: &str,
    ) -> Result<(), StudyError> {
        for key in Key::ALL {
            let Some(only) = key.only_for_source() else {
                continue;
            };
            let Some(Setting { span, .. }) = settings.given(key) else {
                continue;
            };
            if only != source_name {
                let span = span.clone().unwrap_or(0..0);
                return Err(self
                    .source
                    .error(
                        ErrorKind::Conflict,
                        &span,
                        format!(
                            "`{}` applies only to data.source = \"{only}\", but the source is \"{source_name}\"",
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
            let span = self.span_of(settings, &[Key::DataSource]);
            return Err(self
                .source
                .error(
                    ErrorKind::Conflict,
                    &span,
                    "simulation-based calibration needs simulated data, not data.source = \"csv\"",
                )
                .help("SBC draws each truth from the model's prior; use source = \"simulated\""));
        }
        if let Some(given) = settings.given(Key::DataLengthScale)
            && given.value != ParamValue::Float(settings.float(Key::ModelLengthScale))
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
        cells: f64,
        likelihood: LikelihoodKind,
        observed: f64,
    ) -> Result<(), StudyError> {
        let chains = settings.int(Key::SamplerChains) as f64;
        let bytes = estimated_job_bytes(cells, chains, likelihood, observed);
        if bytes <= MEMORY_LIMIT_BYTES {
            return Ok(());
        }
        let span = self.span_of(settings, &[Key::ModelGrid, Key::SamplerChains]);
        let grid = settings.int(Key::ModelGrid);
        Err(self
            .source
            .error(
                ErrorKind::TooLarge,
                &span,
                format!(
                    "a job on a {grid} x {grid} grid with {chains} chain(s) needs an estimated {} of memory, above the limit of {}",
                    format_bytes(bytes),
                    format_bytes(MEMORY_LIMIT_BYTES)
                ),
            )
            .note("estimate: 8 N (16 chains + 8) bytes, plus 8 min(M, 2500)^2 for the exact gaussian posterior")
            .help("use a smaller grid or fewer chains"))
    }

    fn check_subsample(&self, settings: &Settings, cells: usize) -> Result<(), StudyError> {
        let subsample = settings.int(Key::DataSubsample);
        if subsample as u64 <= cells as u64 {
            return Ok(());
        }
        let span = self.span_of(settings, &[Key::DataSubsample, Key::ModelGrid]);
        let grid = settings.int(Key::ModelGrid);
        Err(self
            .source
            .error(
                ErrorKind::Conflict,
                &span,
                format!(
                    "data.subsample = {subsample} leaves no observed cell on a {grid} x {grid} grid ({cells} cells)"
                ),
            )
            .allowed(format!("a subsample from 1 to {cells} on this grid")))
    }

    fn check_holdout(&self, settings: &Settings, cells: usize) -> Result<(), StudyError> {
        let holdout = settings.float(Key::DataHoldout);
        let held = (holdout * cells as f64).round();
        if held < cells as f64 {
            return Ok(());
        }
        let span = self.span_of(settings, &[Key::DataHoldout, Key::ModelGrid]);
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

    fn csv_data(
        &mut self,
        settings: &Settings,
        grid: usize,
        likelihood: LikelihoodKind,
    ) -> Result<DataSpec, StudyError> {
        let Some(written) = settings.given(Key::DataPath).map(|s| s.value.to_string()) else {
            let span = self.span_of(settings, &[Key::DataSource]);
            return Err(self
                .source
                .error(ErrorKind::Conflict, &span, "data.source = \"csv\" needs data.path")
                .help("add path = \"data/your_grid.csv\" under [data] (relative to the study file's folder)"));
        };
        let path = self.study_dir.join(&written);
        let column = data_column(settings, likelihood);
        let cache_key = (path.clone(), column.clone(), grid, likelihood);
        let outcome = self
            .checked_files
            .entry(cache_key)
            .or_insert_with(|| {
                read_grid_csv(&path, &column, grid, likelihood)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .clone();
        if let Err(problem) = outcome {
            let span = self.span_of(settings, &[Key::DataPath]);
            return Err(self.source.error(
                ErrorKind::Data,
                &span,
                format!("bad data file: {problem}"),
            ));
        }
        Ok(DataSpec::Csv {
            path,
            column,
            holdout: settings.float(Key::DataHoldout),
        })
    }
}

/// The digits of `index` in the mixed radix `lengths`, the first digit most significant.
fn mixed_radix_digits(mut index: usize, lengths: &[usize]) -> Vec<usize> {
    let mut digits = vec![0; lengths.len()];
    for (digit, length) in digits.iter_mut().zip(lengths).rev() {
        *digit = index % length;
        index /= length;
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

fn likelihood_kind(name: &str) -> LikelihoodKind {
    LikelihoodKind::ALL
        .into_iter()
        .find(|l| l.name() == name)
        .unwrap_or(LikelihoodKind::Gaussian)
}

fn sampler_kind(name: &str) -> SamplerKind {
    SamplerKind::from_name(name).unwrap_or(SamplerKind::Pcn)
}

/// The truth's length scale: data.length_scale if given, else the model's.
fn truth_length_scale(settings: &Settings) -> f64 {
    match settings.given(Key::DataLengthScale) {
        Some(_) => settings.float(Key::DataLengthScale),
        None => settings.float(Key::ModelLengthScale),
    }
}

/// The CSV column: data.column if given, else by likelihood.
fn data_column(settings: &Settings, likelihood: LikelihoodKind) -> String {
    match settings.given(Key::DataColumn) {
        Some(_) => settings.text(Key::DataColumn),
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

/// Every parameter of the point, defaults applied, `Null` where it does not apply.
fn resolved_params(
    settings: &Settings,
    is_csv: bool,
    likelihood: LikelihoodKind,
) -> Vec<(Key, ParamValue)> {
    Key::ALL
        .into_iter()
        .map(|key| {
            let value = match (key, key.only_for_source()) {
                (_, Some("simulated")) if is_csv => ParamValue::Null,
                (_, Some("csv")) if !is_csv => ParamValue::Null,
                (Key::DataLengthScale, _) => ParamValue::Float(truth_length_scale(settings)),
                (Key::DataColumn, _) => ParamValue::Text(data_column(settings, likelihood)),
                _ => settings.value(key),
            };
            (key, value)
        })
        .collect()
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
    fn mixed_radix_counts_with_the_last_axis_fastest() {
        let all: Vec<Vec<usize>> = (0..6).map(|i| mixed_radix_digits(i, &[2, 3])).collect();
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
