//! ArviZ's InferenceData, written as a Zarr store (`fieldmc export --arviz`): named groups
//! (`posterior`, `log_likelihood`, `observed_data`, `sample_stats`, ...) of labelled arrays,
//! which xarray's `open_datatree(path, engine="zarr")` reads as a `DataTree` and
//! `arviz.InferenceData.from_datatree` turns into what `az.loo`, `az.summary` and the rest take.
//!
//! This module owns the layout and nothing of any model: a [`Group`] holds [`Variable`]s, each
//! with its dimensions' names and values; a dimension with a coordinate is a 1-d variable of the
//! same name (xarray's rule), and other variables along a dimension are named as coordinates
//! through [`Group::coordinates`]. [`write_zarr`] writes Zarr v3: one group per InferenceData
//! group, one array per variable in a single uncompressed chunk, `dimension_names` as xarray
//! reads them. Families build the groups from their tables.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::{ArrayBuilder, data_type};
use zarrs::filesystem::FilesystemStore;
use zarrs::group::GroupBuilder;

/// The values of a variable, flattened in C order over its dimensions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::I64(v) => v.len(),
        }
    }
}

/// A labelled array.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Variable {
    pub(crate) name: String,
    /// Dimension names with their lengths, outermost first.
    pub(crate) dims: Vec<(String, usize)>,
    pub(crate) values: Values,
}

impl Variable {
    pub(crate) fn new(name: impl Into<String>, dims: &[(&str, usize)], values: Values) -> Self {
        Self {
            name: name.into(),
            dims: dims.iter().map(|&(d, n)| (d.to_string(), n)).collect(),
            values,
        }
    }

    /// A dimension's coordinate 0, 1, ..., n - 1.
    pub(crate) fn index(dim: &str, n: usize) -> Self {
        Self::new(dim, &[(dim, n)], Values::I64((0..n as i64).collect()))
    }
}

/// One InferenceData group.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) variables: Vec<Variable>,
    /// Variables that are coordinates without being a dimension's own (cell x and y, ...):
    /// xarray reads them from each data variable's `coordinates` attribute.
    pub(crate) coordinates: Vec<String>,
}

impl Group {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    pub(crate) fn with(mut self, variable: Variable) -> Self {
        self.variables.push(variable);
        self
    }

    /// `variable`, read by xarray as a coordinate of the group's data variables.
    pub(crate) fn with_coordinate(mut self, variable: Variable) -> Self {
        self.coordinates.push(variable.name.clone());
        self.variables.push(variable);
        self
    }
}

/// Why an InferenceData could not be built or written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}")]
    Tables(String),
    #[error(
        "variable `{variable}` of group `{group}` has {got} values for its dimensions \
         {dims:?} ({expected})"
    )]
    Shape {
        group: String,
        variable: String,
        dims: Vec<(String, usize)>,
        expected: usize,
        got: usize,
    },
    #[error("cannot write the Zarr store {path}: {message}")]
    Write { path: PathBuf, message: String },
}

/// Writes `groups` as a Zarr v3 store at `path` (a folder, replaced if it exists), with
/// `attributes` on the root group (ArviZ's `created_at`, the creator and its version).
pub(crate) fn write_zarr(
    path: &Path,
    attributes: serde_json::Map<String, serde_json::Value>,
    groups: &[Group],
) -> Result<(), ExportError> {
    for group in groups {
        check_shapes(group)?;
    }
    let write_error = |e: &dyn std::fmt::Display| ExportError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| write_error(&e))?;
    }
    let store = Arc::new(FilesystemStore::new(path).map_err(|e| write_error(&e))?);
    let root = GroupBuilder::new()
        .attributes(attributes)
        .build(store.clone(), "/")
        .map_err(|e| write_error(&e))?;
    root.store_metadata().map_err(|e| write_error(&e))?;
    for group in groups {
        let node = format!("/{}", group.name);
        GroupBuilder::new()
            .build(store.clone(), &node)
            .and_then(|g| g.store_metadata().map_err(Into::into))
            .map_err(|e| write_error(&e))?;
        for variable in &group.variables {
            write_variable(&store, &node, group, variable).map_err(|e| write_error(&e))?;
        }
    }
    Ok(())
}

fn check_shapes(group: &Group) -> Result<(), ExportError> {
    for variable in &group.variables {
        let expected: usize = variable.dims.iter().map(|d| d.1).product();
        if variable.values.len() != expected {
            return Err(ExportError::Shape {
                group: group.name.clone(),
                variable: variable.name.clone(),
                dims: variable.dims.clone(),
                expected,
                got: variable.values.len(),
            });
        }
    }
    Ok(())
}

/// One array in one chunk; a data variable (not a coordinate) names the group's coordinates
/// along its dimensions.
fn write_variable(
    store: &Arc<FilesystemStore>,
    node: &str,
    group: &Group,
    variable: &Variable,
) -> Result<(), Box<dyn std::error::Error>> {
    let shape: Vec<u64> = variable.dims.iter().map(|d| d.1 as u64).collect();
    // A zero-length dimension still needs a positive chunk length.
    let chunk: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
    let names: Vec<&str> = variable.dims.iter().map(|d| d.0.as_str()).collect();
    let mut attributes = serde_json::Map::new();
    let is_coordinate = group.coordinates.contains(&variable.name)
        || (names.len() == 1 && names[0] == variable.name);
    if !is_coordinate {
        let own: Vec<&str> = group
            .coordinates
            .iter()
            .map(String::as_str)
            .filter(|c| coordinate_dims(group, c).iter().all(|d| names.contains(d)))
            .collect();
        if !own.is_empty() {
            attributes.insert("coordinates".into(), own.join(" ").into());
        }
    }
    let path = format!("{node}/{}", variable.name);
    let mut builder = match &variable.values {
        Values::F64(_) => ArrayBuilder::new(shape.clone(), chunk, data_type::float64(), f64::NAN),
        Values::I64(_) => ArrayBuilder::new(shape.clone(), chunk, data_type::int64(), 0i64),
    };
    let array = builder
        .dimension_names(names.into())
        .attributes(attributes)
        .build(store.clone(), &path)?;
    array.store_metadata()?;
    if shape.contains(&0) {
        return Ok(());
    }
    let origin = vec![0; shape.len()];
    match &variable.values {
        Values::F64(v) => array.store_chunk(&origin, v)?,
        Values::I64(v) => array.store_chunk(&origin, v)?,
    }
    Ok(())
}

/// The dimensions of coordinate `name` in `group`.
fn coordinate_dims<'g>(group: &'g Group, name: &str) -> Vec<&'g str> {
    group
        .variables
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.dims.iter().map(|d| d.0.as_str()).collect())
        .unwrap_or_default()
}
