//! What a run says about the data its jobs held out of the fit (`data.holdout`): from the
//! assembled jobs table's `held_out_cells` and `observed_cells` (grid CSVs and points) and
//! `held_out_sites` and `observed_sites` (sites), one note per kind, so that no cell leaves the
//! fit without the terminal saying so.

use std::collections::BTreeMap;

use polars::prelude::DataFrame;

use super::schema::jobs;
use crate::table::Col;

/// The notes for the jobs of `frame` (every family's rows; the latent field's real-data jobs
/// have the columns): how many held cells or measurements out, grouped by how many of how many.
pub(crate) fn held_out_notes(frame: &DataFrame) -> Vec<String> {
    [
        (
            jobs::HELD_OUT_CELLS,
            jobs::OBSERVED_CELLS,
            "cells",
            "cells with data",
        ),
        (
            jobs::HELD_OUT_SITES,
            jobs::OBSERVED_SITES,
            "measurements",
            "measurements",
        ),
    ]
    .into_iter()
    .filter_map(|(held, fitted, what, of_what)| note(frame, (held, fitted), what, of_what))
    .collect()
}

/// The note for one kind of datum, None when no job held any out.
fn note(
    frame: &DataFrame,
    (held, fitted): (Col<i64>, Col<i64>),
    what: &str,
    of_what: &str,
) -> Option<String> {
    let column = |col: Col<i64>| -> Vec<Option<i64>> {
        frame
            .column(col.name())
            .ok()
            .and_then(|c| c.i64().ok())
            .map_or_else(|| vec![None; frame.height()], |c| c.iter().collect())
    };
    let (held_out, fitted_count) = (column(held), column(fitted));
    let mut by_split: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    let mut fitted_all = 0;
    for (h, f) in held_out.iter().zip(&fitted_count) {
        match (h, f) {
            (Some(0), Some(_)) => fitted_all += 1,
            (Some(h), Some(f)) => *by_split.entry((*h, h + f)).or_default() += 1,
            _ => {}
        }
    }
    if by_split.is_empty() {
        return None;
    }
    let jobs_word = |n: usize| if n == 1 { "job" } else { "jobs" };
    let splits: Vec<String> = by_split
        .iter()
        .rev()
        .map(|(&(h, of), &n)| format!("{h} of {of} {of_what} in {n} {}", jobs_word(n)))
        .collect();
    let every = match fitted_all {
        0 => String::new(),
        n => format!("; {n} {} fitted every one", jobs_word(n)),
    };
    Some(format!(
        "data.holdout or data.folds held {what} out of the fit to score them: {} (column {} of \
         jobs.parquet){every}",
        splits.join(", "),
        held.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::{Column, NamedFrom, Series};

    fn frame(columns: &[(&str, Vec<Option<i64>>)]) -> DataFrame {
        let height = columns[0].1.len();
        let columns: Vec<Column> = columns
            .iter()
            .map(|(name, values)| Column::from(Series::new((*name).into(), values.clone())))
            .collect();
        DataFrame::new(height, columns).unwrap()
    }

    #[test]
    fn the_note_counts_the_held_out_cells_of_each_split() {
        let jobs = frame(&[
            (
                "held_out_cells",
                vec![Some(205), Some(205), Some(0), None, Some(51)],
            ),
            (
                "observed_cells",
                vec![Some(819), Some(819), Some(1024), Some(36), Some(205)],
            ),
        ]);
        assert_eq!(
            held_out_notes(&jobs),
            [
                "data.holdout or data.folds held cells out of the fit to score them: 205 of 1024 cells with data \
              in 2 jobs, 51 of 256 cells with data in 1 job (column held_out_cells of \
              jobs.parquet); 1 job fitted every one"
            ]
        );
    }

    #[test]
    fn nothing_is_said_when_nothing_was_held_out() {
        let jobs = frame(&[
            ("held_out_cells", vec![Some(0), None]),
            ("observed_cells", vec![Some(1024), Some(36)]),
            ("held_out_sites", vec![None, None]),
        ]);
        assert!(held_out_notes(&jobs).is_empty());
    }
}
