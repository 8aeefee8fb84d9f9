use super::shared::{CHAIN, JOB_ID, autocorrelation, jobs};
use super::*;

#[test]
fn rows_come_out_in_table_order_with_nulls_for_non_finite_floats() {
    let frame = Rows::new(&autocorrelation::TABLE, 2)
        .set(autocorrelation::AUTOCORRELATION, [0.5, f64::NAN])
        .fill(JOB_ID, "j".to_string())
        .set(autocorrelation::LAG, [10i64, 20])
        .finish()
        .unwrap();
    let names: Vec<&str> = frame
        .get_column_names()
        .iter()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(names, ["job_id", "lag", "autocorrelation"]);
    assert_eq!(frame.column("autocorrelation").unwrap().null_count(), 1);
}

#[test]
fn a_missing_required_column_or_a_null_in_it_is_an_error() {
    let missing = Rows::new(&autocorrelation::TABLE, 1)
        .fill(JOB_ID, "j".to_string())
        .finish()
        .unwrap_err();
    assert!(
        matches!(&missing, SchemaError::Missing { column, .. } if column == "lag"),
        "{missing}"
    );
    let null = Rows::new(&autocorrelation::TABLE, 1)
        .fill(JOB_ID, None)
        .set(autocorrelation::LAG, [1i64])
        .finish()
        .unwrap_err();
    assert!(matches!(null, SchemaError::Null { .. }), "{null}");
}

#[test]
fn columns_of_another_table_and_wrong_lengths_are_errors() {
    let foreign = Rows::new(&autocorrelation::TABLE, 1)
        .set(CHAIN, [0i64])
        .finish()
        .unwrap_err();
    assert!(
        matches!(foreign, SchemaError::Undeclared { .. }),
        "{foreign}"
    );
    let short = Rows::new(&autocorrelation::TABLE, 2)
        .set(autocorrelation::LAG, [1i64])
        .finish()
        .unwrap_err();
    assert!(matches!(short, SchemaError::Length { .. }), "{short}");
}

#[test]
fn groups_name_and_recognise_their_members() {
    assert!(jobs::PARAMETERS.contains("sampler_beta"));
    assert!(!jobs::PARAMETERS.contains("sampler_"));
    assert_eq!(jobs::PARAMETERS.member_of("model_grid"), Some("grid"));
    assert_eq!(jobs::PARAMETERS.member("grid"), "model_grid");
    assert_ne!(
        jobs::TABLE.position("status"),
        jobs::TABLE.position("model_status"),
        "a declared column wins over a group prefix"
    );
}

#[test]
fn check_reports_unknown_columns_and_wrong_types() {
    let frame = polars::df!("job_id" => ["a"], "lag" => [1.5f64], "extra" => [1i64]).unwrap();
    let errors = autocorrelation::TABLE.check(&frame);
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, SchemaError::WrongType { .. }))
    );
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, SchemaError::Undeclared { .. }))
    );
}

#[test]
fn a_status_column_holds_the_status_word() {
    let frame = Rows::new(&jobs::TABLE, 1)
        .fill(JOB_ID, "j".to_string())
        .fill(jobs::REPLICATE, 0i64)
        .fill(jobs::STATUS, JobStatus::Failed)
        .fill(jobs::ERROR, "e".to_string())
        .fill(jobs::WARNINGS, String::new())
        .fill(jobs::WALL_SECONDS, 1.0)
        .set_member::<i64, _>(&jobs::PARAMETERS, "model_grid", [4])
        .finish()
        .unwrap();
    let status = frame.column("status").unwrap().str().unwrap().get(0);
    assert_eq!(status, Some("failed"));
}
