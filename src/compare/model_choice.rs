//! The tables `fieldmc compare --loo` ranks jobs from, read through the sink and named through
//! the registry's model-choice declaration ([`crate::families::model_choice`]): each folder's
//! jobs with `elpd_loo` (its finished jobs; the others are listed as not compared), their
//! pointwise terms in observation order with the cell or site each observation is, and, where
//! the folder holds it, each observation's datum. The ranking is [`super::loo`]'s.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::Provenance;
use super::error::CompareError;
use super::loo::{Candidate, ModelChoice, Observed, rank};
use super::render::origin;
use crate::families::model_choice::{LOO, LooColumns, Place};
use crate::families::{catalog, is_parameter, jobs_table};
use crate::figures::shape::{Cell, Naming, ok_rows, param_columns, sampler_first};
use crate::figures::tables::{Found, Table};
use crate::sink::read_table;
use crate::table::shared::JOB_ID;
use crate::table::shared::jobs::{REPLICATE, STATUS};

/// The relative gap allowed between a job's `elpd_loo` and the sum of its pointwise terms
/// (rounding only: the job wrote both from the same numbers).
const SUM_TOLERANCE: f64 = 1e-9;

/// One results folder: its jobs table and the rows of the jobs compared.
struct Side {
    path: PathBuf,
    /// `A`, `B` in front of job ids when there are two folders.
    letter: Option<char>,
    jobs: Table,
    rows: Vec<usize>,
}

impl Side {
    fn id(&self, row: usize) -> &str {
        self.jobs.str_at(JOB_ID, row).unwrap_or("?")
    }

    /// The job's name in messages and the table: its id, after its folder's letter.
    fn name(&self, row: usize) -> String {
        match self.letter {
            Some(letter) => format!("{letter}:{}", self.id(row)),
            None => self.id(row).to_string(),
        }
    }
}

/// Ranks the jobs of `folders` (one folder: its jobs with each other; two: every job of both)
/// by PSIS-LOO.
pub(crate) fn model_choice(folders: &[&Path]) -> Result<ModelChoice, CompareError> {
    let columns = &LOO;
    let mut headers = Vec::new();
    let mut sides = Vec::new();
    let mut left_out = Vec::new();
    for (k, folder) in folders.iter().enumerate() {
        let provenance = Provenance::read(folder)?;
        let letter = (b'A' + k as u8) as char;
        headers.push(format!("{letter}: {}", origin(&provenance)));
        let frame = read_table(folder, jobs_table(), None)?.ok_or_else(|| {
            CompareError::BadInput(format!(
                "{} holds no jobs.parquet: model choice ranks the jobs of a results folder",
                folder.display()
            ))
        })?;
        let mut side = Side {
            path: folder.to_path_buf(),
            letter: (folders.len() > 1).then_some(letter),
            jobs: Table::from_frame(&frame, jobs_table().name, &mut Vec::new()),
            rows: Vec::new(),
        };
        let ok = ok_rows(&side.jobs);
        for row in 0..side.jobs.height {
            if !ok.contains(&row) {
                let status = side.jobs.str_at(STATUS, row).unwrap_or("not ok");
                left_out.push(format!("job {} ({status})", side.name(row)));
            } else if side.jobs.finite(columns.elpd_loo, row).is_none() {
                left_out.push(format!(
                    "job {} (no {}: laplace, inla or SBC, output.log_likelihood off, or a \
                     pointwise value not finite)",
                    side.name(row),
                    columns.elpd_loo.name()
                ));
            } else {
                side.rows.push(row);
            }
        }
        sides.push(side);
    }
    let labels = labels(&sides);
    let mut candidates = Vec::new();
    let mut data_checked = true;
    for (side, side_labels) in sides.iter().zip(labels) {
        if side.rows.is_empty() {
            continue;
        }
        let ids: HashSet<String> = side.rows.iter().map(|&r| side.id(r).to_string()).collect();
        let pointwise = read_table(&side.path, columns.pointwise, Some(&ids))?
            .map(|frame| Table::from_frame(&frame, columns.pointwise.name, &mut Vec::new()))
            .ok_or_else(|| {
                CompareError::BadInput(format!(
                    "{}: jobs.parquet gives {} but there is no {}: the standard error of a \
                     difference pairs the jobs' pointwise terms",
                    side.path.display(),
                    columns.elpd_loo.name(),
                    columns.pointwise.file_name()
                ))
            })?;
        let data = observed_data(&side.path, columns.places, &ids)?;
        for (&row, label) in side.rows.iter().zip(side_labels) {
            let candidate = candidate(columns, side, row, label, &pointwise, &data)?;
            data_checked &= candidate.observed.iter().all(|o| o.datum.is_some());
            candidates.push(candidate);
        }
    }
    if candidates.is_empty() {
        let folders: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        return Err(CompareError::BadInput(format!(
            "no job in {} has {}: model choice needs `[output] log_likelihood = true` and jobs \
             with Markov chains (not laplace, inla or SBC)",
            folders.join(" or "),
            columns.elpd_loo.name()
        )));
    }
    let lines = rank(&candidates).map_err(CompareError::BadInput)?;
    Ok(ModelChoice {
        folders: headers,
        candidates,
        lines,
        left_out,
        data_checked,
    })
}

/// Each place kind's data: the datum at each (job id, place), `None` when the folder lacks the
/// table.
type Data = Vec<Option<HashMap<(String, i64), Vec<Option<f64>>>>>;

fn observed_data(
    folder: &Path,
    places: &[Place],
    ids: &HashSet<String>,
) -> Result<Data, CompareError> {
    let mut data = Vec::new();
    for place in places {
        let Some(frame) = read_table(folder, place.data, Some(ids))? else {
            data.push(None);
            continue;
        };
        let table = Table::from_frame(&frame, place.data.name, &mut Vec::new());
        let mut at = HashMap::new();
        for row in 0..table.height {
            let kept = place
                .only
                .is_none_or(|(column, word)| table.str_at(column, row) == Some(word));
            let (Some(id), Some(key), true) = (
                table.str_at(JOB_ID, row),
                table.finite(place.key, row),
                kept,
            ) else {
                continue;
            };
            let datum = place
                .values
                .iter()
                .map(|column| table.num(column).and_then(|values| values[row]))
                .collect();
            at.insert((id.to_string(), key as i64), datum);
        }
        data.push(Some(at));
    }
    Ok(data)
}

/// The job in `row` of `side` with its pointwise terms, in observation order.
fn candidate(
    columns: &LooColumns,
    side: &Side,
    row: usize,
    label: String,
    pointwise: &Table,
    data: &Data,
) -> Result<Candidate, CompareError> {
    let (id, name) = (side.id(row), side.name(row));
    let bad_input = |what: String| {
        CompareError::BadInput(format!(
            "{}: job {name}: {what}",
            side.path.join(columns.pointwise.file_name()).display()
        ))
    };
    let mut rows = pointwise.rows_of_job(id);
    if rows.is_empty() {
        return Err(bad_input(format!(
            "no rows, though jobs.parquet gives its {}",
            columns.elpd_loo.name()
        )));
    }
    let observation = |r: usize| pointwise.finite(columns.observation, r);
    rows.sort_by(|&a, &b| {
        let key = |r| observation(r).unwrap_or(f64::INFINITY);
        key(a).total_cmp(&key(b))
    });
    let mut terms = Vec::with_capacity(rows.len());
    let mut observed = Vec::with_capacity(rows.len());
    for (i, &r) in rows.iter().enumerate() {
        if observation(r) != Some(i as f64) {
            return Err(bad_input(format!(
                "its {} are not 0, 1, 2, ... (observation {i} is missing or repeated)",
                columns.observation.name()
            )));
        }
        let term = pointwise.finite(columns.pointwise_elpd, r).ok_or_else(|| {
            bad_input(format!(
                "observation {i} has no {}",
                columns.pointwise_elpd.name()
            ))
        })?;
        let (k, place, at) = columns
            .places
            .iter()
            .enumerate()
            .find_map(|(k, place)| Some((k, place, pointwise.finite(place.column, r)? as i64)))
            .ok_or_else(|| bad_input(format!("observation {i} is at no cell and no site")))?;
        terms.push(term);
        observed.push(Observed {
            noun: place.noun,
            at,
            datum: data[k]
                .as_ref()
                .and_then(|data| data.get(&(id.to_string(), at)).cloned()),
        });
    }
    let elpd_loo = side
        .jobs
        .finite(columns.elpd_loo, row)
        .expect("a candidate has elpd_loo");
    let sum: f64 = terms.iter().sum();
    if (sum - elpd_loo).abs() > SUM_TOLERANCE * elpd_loo.abs().max(1.0) {
        return Err(bad_input(format!(
            "its terms sum to {sum} but jobs.parquet gives {} {elpd_loo}: the tables are not of \
             one run",
            columns.elpd_loo.name()
        )));
    }
    Ok(Candidate {
        job: name,
        label,
        elpd_loo,
        se: side
            .jobs
            .finite(columns.elpd_loo_se, row)
            .unwrap_or(f64::NAN),
        p_loo: side.jobs.finite(columns.p_loo, row).unwrap_or(f64::NAN),
        pareto_k_bad: side
            .jobs
            .finite(columns.pareto_k_bad, row)
            .map(|bad| bad as i64),
        pointwise: terms,
        observed,
    })
}

/// Whether columns `a` and `b` determine each other over `jobs` (each value of one goes with
/// one value of the other).
fn one_to_one(jobs: &[&Vec<Cell>], a: usize, b: usize) -> bool {
    jobs.iter()
        .all(|x| jobs.iter().all(|y| (x[a] == y[a]) == (x[b] == y[b])))
}

/// What each compared job is, side by side: the parameters (and the replicate) that differ
/// between the jobs compared, less those that only follow another, the sampler kind first,
/// named as the report names them; `–` when none differ.
fn labels(sides: &[Side]) -> Vec<Vec<String>> {
    let mut columns: Vec<String> = Vec::new();
    for side in sides {
        let mut own = param_columns(&side.jobs, &is_parameter);
        own.push(REPLICATE.name().to_string());
        for column in own {
            if !columns.contains(&column) {
                columns.push(column);
            }
        }
    }
    let cells: Vec<Vec<Vec<Cell>>> = sides
        .iter()
        .map(|side| {
            side.rows
                .iter()
                .map(|&row| {
                    columns
                        .iter()
                        .map(|c| Cell::of(&side.jobs, Found(c), row))
                        .collect()
                })
                .collect()
        })
        .collect();
    let every: Vec<&Vec<Cell>> = cells.iter().flatten().collect();
    let mut varying: Vec<usize> = Vec::new();
    for k in 0..columns.len() {
        let varies = every.iter().any(|job| job[k] != every[0][k]);
        // A column that follows an earlier one (a length scale along y that is the length
        // scale) says nothing more.
        if varies && !varying.iter().any(|&leader| one_to_one(&every, leader, k)) {
            varying.push(k);
        }
    }
    let mut varying: Vec<String> = varying.into_iter().map(|k| columns[k].clone()).collect();
    sampler_first(&mut varying);
    let naming = Naming {
        labels: catalog().labels(),
        named_by: Vec::new(),
    };
    cells
        .iter()
        .map(|side| {
            side.iter()
                .map(|job| {
                    let parts: Vec<String> = varying
                        .iter()
                        .filter_map(|column| {
                            let k = columns.iter().position(|c| c == column)?;
                            (!matches!(job[k], Cell::Null)).then(|| naming.label(column, &job[k]))
                        })
                        .collect();
                    if parts.is_empty() {
                        "–".to_string()
                    } else {
                        parts.join(", ")
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{nums, table, text};

    fn side(letter: char, kernels: &[&str], scales: &[f64]) -> Side {
        let n = kernels.len();
        Side {
            path: PathBuf::from("."),
            letter: Some(letter),
            jobs: table(vec![
                ("job_id", text(&vec!["j"; n])),
                ("replicate", nums(&vec![0.0; n])),
                ("model_kernel", text(kernels)),
                ("model_length_scale", nums(scales)),
                ("model_length_scale_y", nums(scales)),
                ("sampler_kind", text(&vec!["mala"; n])),
            ]),
            rows: (0..n).collect(),
        }
    }

    /// Across both folders, the kernel and the length scale differ; the length scale along y
    /// follows the length scale and the sampler and replicate are the same, so none of them
    /// names a job.
    #[test]
    fn jobs_are_labelled_by_what_differs_between_them_and_not_by_what_follows() {
        let a = side('A', &["squared-exponential", "matern32"], &[0.2, 0.2]);
        let b = side('B', &["squared-exponential"], &[0.5]);
        assert_eq!(
            labels(&[a, b]),
            [
                vec!["squared-exponential, ℓ=0.2", "matern32, ℓ=0.2"],
                vec!["squared-exponential, ℓ=0.5"],
            ]
        );
        let same = side('A', &["matern32", "matern32"], &[0.2, 0.2]);
        assert_eq!(labels(&[same]), [vec!["–", "–"]]);
    }
}
