//! Vertical concatenation of per-job tables whose columns differ.
//!
//! Parts of one table need not agree on their columns: a failed job has no metric columns, a
//! probit job has no `exact_mean`, and a column that is null throughout one part may have been
//! written with the `Null` type. [`concat_aligned`] stacks the parts in the given order over the
//! union of their columns (first-seen order), gives each column the first non-`Null` type seen,
//! and fills what a part lacks with nulls. Two different non-`Null` types for one column are a
//! [`SinkError::SchemaConflict`]: silently casting would hide a bug in whoever wrote the part.

use polars::prelude::{Column, DataFrame, DataType, PlSmallStr, PolarsError, PolarsResult};

use super::error::SinkError;

/// One column of the assembled table.
#[derive(Debug, Clone)]
struct UnionColumn {
    name: PlSmallStr,
    dtype: DataType,
}

/// Concatenates `parts` (job id, table) in order over the union of their columns.
/// `table` only names the table in errors. An empty `parts` gives an empty frame.
pub(crate) fn concat_aligned(
    table: &str,
    parts: Vec<(String, DataFrame)>,
) -> Result<DataFrame, SinkError> {
    let union = union_schema(table, &parts)?;
    let mut combined: Option<DataFrame> = None;
    for (_, part) in &parts {
        let aligned = align_to(part, &union).map_err(|e| assemble_error(table, e))?;
        match combined.as_mut() {
            None => combined = Some(aligned),
            Some(acc) => {
                acc.vstack_mut_owned(aligned)
                    .map_err(|e| assemble_error(table, e))?;
            }
        }
    }
    let mut combined = combined.unwrap_or_default();
    combined.rechunk_mut_par();
    Ok(combined)
}

/// The union of the parts' columns in first-seen order, each with its first non-`Null` type.
fn union_schema(table: &str, parts: &[(String, DataFrame)]) -> Result<Vec<UnionColumn>, SinkError> {
    let mut union: Vec<UnionColumn> = Vec::new();
    for (job_id, part) in parts {
        for column in part.columns() {
            let dtype = column.dtype();
            match union.iter_mut().find(|u| u.name == *column.name()) {
                None => union.push(UnionColumn {
                    name: column.name().clone(),
                    dtype: dtype.clone(),
                }),
                Some(known) if known.dtype == DataType::Null => known.dtype = dtype.clone(),
                Some(known) if *dtype == DataType::Null || known.dtype == *dtype => {}
                Some(known) => {
                    return Err(SinkError::SchemaConflict {
                        table: table.to_string(),
                        column: known.name.to_string(),
                        job_id: job_id.clone(),
                        expected: known.dtype.to_string(),
                        found: dtype.to_string(),
                    });
                }
            }
        }
    }
    Ok(union)
}

/// `part` with exactly the `union` columns in order: missing and `Null`-typed columns become
/// nulls of the union type.
fn align_to(part: &DataFrame, union: &[UnionColumn]) -> PolarsResult<DataFrame> {
    let height = part.height();
    let columns: Vec<Column> = union
        .iter()
        .map(|u| match part.column(u.name.as_str()) {
            Ok(column) if column.dtype() == &u.dtype => column.clone(),
            // Absent, or all-null with the Null type (the union type differs only then).
            _ => Column::full_null(u.name.clone(), height, &u.dtype),
        })
        .collect();
    DataFrame::new(height, columns)
}

fn assemble_error(table: &str, error: PolarsError) -> SinkError {
    SinkError::Assemble {
        table: table.to_string(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn part(job: &str, df: DataFrame) -> (String, DataFrame) {
        (job.to_string(), df)
    }

    #[test]
    fn union_keeps_first_seen_order_and_fills_missing_with_nulls() {
        let ok = df!("job_id" => ["a"], "status" => ["ok"], "mae" => [0.5f64]).unwrap();
        let failed = df!("job_id" => ["b"], "error" => ["boom"], "status" => ["failed"]).unwrap();
        let out = concat_aligned("jobs", vec![part("a", ok), part("b", failed)]).unwrap();
        let names: Vec<&str> = out.get_column_names().iter().map(|n| n.as_str()).collect();
        assert_eq!(names, ["job_id", "status", "mae", "error"]);
        assert_eq!(out.column("mae").unwrap().dtype(), &DataType::Float64);
        assert_eq!(out.column("mae").unwrap().null_count(), 1);
        assert_eq!(out.column("error").unwrap().dtype(), &DataType::String);
        let status = out.column("status").unwrap().str().unwrap().clone();
        assert_eq!(status.get(0), Some("ok"));
        assert_eq!(status.get(1), Some("failed"));
    }

    #[test]
    fn null_typed_column_takes_the_concrete_type_whichever_comes_first() {
        let nulls = Column::full_null("mae".into(), 2, &DataType::Null);
        let null_part = DataFrame::new(2, vec![nulls]).unwrap();
        let float_part = df!("mae" => [1.0f64, 2.0, 3.0]).unwrap();
        for order in [[0, 1], [1, 0]] {
            let pieces = [null_part.clone(), float_part.clone()];
            let parts = order
                .iter()
                .map(|&k| part(&k.to_string(), pieces[k].clone()))
                .collect();
            let out = concat_aligned("jobs", parts).unwrap();
            let mae = out.column("mae").unwrap();
            assert_eq!(mae.dtype(), &DataType::Float64);
            assert_eq!(out.height(), 5);
            assert_eq!(mae.null_count(), 2);
            assert_eq!(mae.f64().unwrap().sum(), Some(6.0));
        }
    }

    #[test]
    fn conflicting_types_name_column_and_job() {
        let a = df!("iteration" => [1i64]).unwrap();
        let b = df!("iteration" => [1.5f64]).unwrap();
        let error = concat_aligned("traces", vec![part("a", a), part("b", b)]).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, SinkError::SchemaConflict { .. }), "{text}");
        assert!(
            text.contains("traces") && text.contains("\"iteration\"") && text.contains("job b"),
            "{text}"
        );
    }

    #[test]
    fn parts_stay_in_the_given_order() {
        let parts = ["z", "a", "m"]
            .iter()
            .map(|id| part(id, df!("job_id" => [*id, *id]).unwrap()))
            .collect();
        let out = concat_aligned("fields", parts).unwrap();
        let ids: Vec<Option<&str>> = out
            .column("job_id")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(
            ids,
            [
                Some("z"),
                Some("z"),
                Some("a"),
                Some("a"),
                Some("m"),
                Some("m")
            ]
        );
    }
}
