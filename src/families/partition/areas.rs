//! Reading small areas and their adjacency from CSV.
//!
//! Areas: a header line, then one row per area with an id column, the feature columns, a target
//! column, optionally two coordinate columns and an administrative region column. Adjacency: an
//! edge list whose first two columns are area ids (one row per undirected pair; a pair given
//! twice is kept once). The dialect (quoting, CR LF, a byte-order mark, R's unnamed row-names
//! column) is [`crate::study::csv`]'s. Errors name the file, the 1-based line and the column.

use std::collections::HashMap;
use std::path::Path;

use super::graph::Adjacency;
use crate::study::csv::{CsvError, CsvText, Header};

/// A CSV of areas or edges that cannot be used: file, line (when one row is at fault) and why.
pub type AreaCsvError = CsvError;

/// The largest areas or edges file read: 64 MiB, far more than any region's areas. Past it a
/// wrong path (a device, an unrelated huge file) is refused before it exhausts memory.
const MAX_AREA_BYTES: u64 = 1 << 26;

/// Which columns of the areas CSV hold what.
#[derive(Debug, Clone, PartialEq)]
pub struct AreaColumns {
    pub id: String,
    pub features: Vec<String>,
    pub target: String,
    /// x and y of each area's point, for k-means and the maps.
    pub coordinates: Option<[String; 2]>,
    /// The administrative region of each area (any text).
    pub admin: Option<String>,
}

/// The areas as read: rows in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Areas {
    pub ids: Vec<String>,
    pub feature_names: Vec<String>,
    /// Row-major, `len() x feature_names.len()`.
    pub features: Vec<f64>,
    pub target: Vec<f64>,
    pub coordinates: Option<Vec<[f64; 2]>>,
    pub admin: Option<Vec<String>>,
}

impl Areas {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn feature_count(&self) -> usize {
        self.feature_names.len()
    }

    /// The feature row of area `a`.
    pub fn feature_row(&self, a: usize) -> &[f64] {
        let p = self.feature_count();
        &self.features[a * p..(a + 1) * p]
    }

    /// Area index by id.
    pub(crate) fn index_of_ids(&self) -> HashMap<&str, usize> {
        self.ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect()
    }
}

/// A parsed CSV: header names and rows of fields, each with its 1-based line.
struct Table {
    header: Header,
    rows: Vec<(usize, Vec<String>)>,
}

fn read_table(path: &Path) -> Result<Table, AreaCsvError> {
    let text = CsvText::open(path, MAX_AREA_BYTES, "for an areas or edges file")?;
    let mut read = text.rows("file")?;
    let mut rows = Vec::new();
    while let Some(row) = read.next_row()? {
        rows.push((row.line, row.fields().map(str::to_string).collect()));
    }
    Ok(Table {
        header: read.header().clone(),
        rows,
    })
}

impl Table {
    fn column(&self, path: &Path, name: &str) -> Result<usize, AreaCsvError> {
        self.header
            .find(name)
            .map(|c| c.index())
            .ok_or_else(|| self.header.missing(path, name, ""))
    }

    fn numbers(&self, path: &Path, name: &str) -> Result<Vec<f64>, AreaCsvError> {
        let c = self.column(path, name)?;
        self.rows
            .iter()
            .map(|(line, fields)| {
                fields[c]
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| CsvError {
                        column: Some(name.to_string()),
                        ..CsvError::at_line(
                            path,
                            *line,
                            format!("column `{name}`: `{}` is not a finite number", fields[c]),
                        )
                    })
            })
            .collect()
    }

    fn texts(&self, path: &Path, name: &str) -> Result<Vec<String>, AreaCsvError> {
        let c = self.column(path, name)?;
        Ok(self.rows.iter().map(|(_, f)| f[c].clone()).collect())
    }
}

/// Read the areas CSV at `path` with the given columns. Ids must be unique and non-empty.
pub fn read_areas(path: &Path, columns: &AreaColumns) -> Result<Areas, AreaCsvError> {
    let table = read_table(path)?;
    if table.rows.is_empty() {
        return Err(CsvError::file(
            path,
            "no areas: the file has a header but no rows",
        ));
    }
    let ids = table.texts(path, &columns.id)?;
    check_unique_ids(path, &table, &ids, &columns.id)?;
    let n = ids.len();
    let p = columns.features.len();
    let mut features = vec![0.0; n * p];
    for (k, name) in columns.features.iter().enumerate() {
        for (a, v) in table.numbers(path, name)?.into_iter().enumerate() {
            features[a * p + k] = v;
        }
    }
    let target = table.numbers(path, &columns.target)?;
    let coordinates = match &columns.coordinates {
        Some([x, y]) => {
            let (xs, ys) = (table.numbers(path, x)?, table.numbers(path, y)?);
            Some(xs.into_iter().zip(ys).map(|(x, y)| [x, y]).collect())
        }
        None => None,
    };
    let admin = match &columns.admin {
        Some(name) => Some(table.texts(path, name)?),
        None => None,
    };
    Ok(Areas {
        ids,
        feature_names: columns.features.clone(),
        features,
        target,
        coordinates,
        admin,
    })
}

fn check_unique_ids(
    path: &Path,
    table: &Table,
    ids: &[String],
    column: &str,
) -> Result<(), AreaCsvError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for ((line, _), id) in table.rows.iter().zip(ids) {
        if id.is_empty() {
            return Err(CsvError {
                column: Some(column.to_string()),
                ..CsvError::at_line(path, *line, format!("column `{column}`: an empty id"))
            });
        }
        if let Some(first) = seen.insert(id, *line) {
            let message = format!("column `{column}`: id `{id}` already on line {first}");
            return Err(CsvError {
                column: Some(column.to_string()),
                ..CsvError::at_line(path, *line, message)
            });
        }
    }
    Ok(())
}

/// Read an edge-list CSV (first two named columns: area ids) into the adjacency of `areas`.
/// Unknown ids and self-loops are errors.
pub fn read_adjacency(path: &Path, areas: &Areas) -> Result<Adjacency, AreaCsvError> {
    let table = read_table(path)?;
    let fail = |line, message: String| CsvError {
        line,
        ..CsvError::file(path, message)
    };
    // The first two named columns (an unnamed one holds R's row names).
    let named: Vec<usize> = (0..table.header.names().len())
        .filter(|&k| !table.header.names()[k].is_empty())
        .take(2)
        .collect();
    let &[first, second] = named.as_slice() else {
        return Err(fail(
            Some(table.header.line()),
            "an edge list needs two columns of area ids".into(),
        ));
    };
    let index = areas.index_of_ids();
    let mut edges = Vec::with_capacity(table.rows.len());
    for (line, fields) in &table.rows {
        let lookup = |k: usize| {
            index.get(fields[k].as_str()).copied().ok_or_else(|| {
                fail(
                    Some(*line),
                    format!(
                        "column `{}`: `{}` is not an area id of the areas file",
                        table.header.names()[k],
                        fields[k]
                    ),
                )
            })
        };
        let (a, b) = (lookup(first)?, lookup(second)?);
        if a == b {
            return Err(fail(
                Some(*line),
                format!("area `{}` is listed as its own neighbour", fields[first]),
            ));
        }
        edges.push((a as u32, b as u32));
    }
    Ok(Adjacency::from_edges(areas.len(), &edges))
}
