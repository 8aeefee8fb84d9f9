//! `output.marks` and `output.mark_labels` resolved for one sweep point: the named points the
//! field maps mark (e.g. a suspected source of risk), each with its label, on the point's grid.
//! Refuses, each located at the key in the study file: a row that is not two finite numbers,
//! marks on a 1-D grid, labels whose count is not the marks', a mark outside the grid's window.

use super::keys::{MODEL_GRID, MODEL_WINDOW, OUTPUT_MARK_LABELS, OUTPUT_MARKS};
use super::spec::Mark;
use crate::model::grid::Grid;
use crate::study::error::ErrorKind;
use crate::study::shape::{self, GridShape};
use crate::study::{ParamValue, Resolver, Settings, StudyError, parse_rows, parse_words};

/// The form `output.marks` takes, for its errors.
const MARKS_FORM: &str =
    "rows of two finite numbers [x, y] in the units of model.window, e.g. [[354.5, 413.6]]";

/// The marks of a point on its grid (`shape` as written, `grid` over its window), in the order
/// of `output.marks`; empty when not given or given as `[]`.
pub(super) fn marks(
    resolver: &Resolver<'_>,
    settings: &Settings,
    shape: GridShape,
    grid: &Grid,
) -> Result<Vec<Mark>, StudyError> {
    let points = points(resolver, settings)?;
    if !points.is_empty() && shape.is_line() {
        return Err(resolver
            .error_at(
                settings,
                &[OUTPUT_MARKS, MODEL_GRID],
                ErrorKind::Conflict,
                format!(
                    "output.marks marks points of the plane, but the grid is {}",
                    shape.describe()
                ),
            )
            .allowed("a 2-D grid: D or [Dx, Dy]"));
    }
    let labels = labels(resolver, settings, points.len())?;
    let window = grid.window();
    let inside = |v: f64, (lo, hi): (f64, f64)| lo <= v && v <= hi;
    let marks: Vec<Mark> = labels
        .into_iter()
        .zip(points)
        .map(|(label, (x, y))| Mark { label, x, y })
        .collect();
    if let Some((k, mark)) = marks
        .iter()
        .enumerate()
        .find(|(_, m)| !inside(m.x, window.x) || !inside(m.y, window.y))
    {
        let window = shape::window_text(&window, false);
        return Err(resolver
            .error_at(
                settings,
                &[OUTPUT_MARKS, MODEL_WINDOW],
                ErrorKind::OutOfRange,
                format!(
                    "output.marks: mark {} ({:?}) at ({:?}, {:?}) is outside the grid's window {window}",
                    k + 1,
                    mark.label,
                    mark.x,
                    mark.y
                ),
            )
            .allowed(format!(
                "points inside the window {window} (edges included), in the units of model.window"
            )));
    }
    Ok(marks)
}

/// The points of `output.marks`, each row checked to be two finite numbers.
fn points(resolver: &Resolver<'_>, settings: &Settings) -> Result<Vec<(f64, f64)>, StudyError> {
    let Some(given) = settings.given(OUTPUT_MARKS) else {
        return Ok(Vec::new());
    };
    let ParamValue::Text(text) = &given.value else {
        return Ok(Vec::new());
    };
    // `[]` (no marks) reads back as one empty row, as `[[]]` (one mark with no numbers) does.
    if text.trim() == "[]" {
        return Ok(Vec::new());
    }
    parse_rows(text)
        .iter()
        .enumerate()
        .map(|(k, row)| match row[..] {
            [x, y] if x.is_finite() && y.is_finite() => Ok((x, y)),
            _ => Err(resolver
                .error_at(
                    settings,
                    &[OUTPUT_MARKS],
                    ErrorKind::OutOfRange,
                    format!(
                        "output.marks: mark {} is {row:?}, not two finite numbers [x, y]",
                        k + 1
                    ),
                )
                .allowed(MARKS_FORM)),
        })
        .collect()
}

/// The labels of `count` marks: `output.mark_labels`, one per mark, else "mark 1", "mark 2", ...
fn labels(
    resolver: &Resolver<'_>,
    settings: &Settings,
    count: usize,
) -> Result<Vec<String>, StudyError> {
    let Some(given) = settings.given(OUTPUT_MARK_LABELS) else {
        return Ok((1..=count).map(|k| format!("mark {k}")).collect());
    };
    let labels = match &given.value {
        ParamValue::Text(text) => parse_words(text),
        _ => Vec::new(),
    };
    if labels.len() == count {
        return Ok(labels);
    }
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    Err(resolver
        .error_at(
            settings,
            &[OUTPUT_MARK_LABELS, OUTPUT_MARKS],
            ErrorKind::Conflict,
            format!(
                "output.mark_labels gives {} for {} of output.marks",
                plural(labels.len(), "label"),
                plural(count, "mark")
            ),
        )
        .allowed(
            "one label per mark of output.marks, in its order, e.g. marks = [[354.5, 413.6]] \
             with mark_labels = [\"old incinerator\"]",
        ))
}
