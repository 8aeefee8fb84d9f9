//! Tables, names and a results folder for the report kit's unit tests (and the families'
//! figure tests), e.g. `table(vec![("x", nums(&[1.0, f64::NAN]))])`.

use super::tables::{Table, Values};

pub(crate) fn text(values: &[&str]) -> Values {
    Values::Text(values.iter().map(|s| Some(s.to_string())).collect())
}

/// Numbers; NaN stands for a null.
pub(crate) fn nums(values: &[f64]) -> Values {
    Values::Num(values.iter().map(|v| (!v.is_nan()).then_some(*v)).collect())
}

/// A results folder without tables.
pub(crate) struct NoTables;

impl crate::figures::TableSource for NoTables {
    fn read(
        &self,
        _table: &crate::table::Table,
        _jobs: Option<&std::collections::HashSet<String>>,
    ) -> Result<Option<polars::prelude::DataFrame>, crate::figures::ReportError> {
        Ok(None)
    }

    fn job_ids(
        &self,
        _table: &crate::table::Table,
    ) -> Result<Option<Vec<String>>, crate::figures::ReportError> {
        Ok(None)
    }
}

/// Names as the latent field's keys declare them, for the kit's tests (the kit knows no
/// family).
pub(crate) fn naming() -> crate::figures::shape::Naming {
    use crate::study::keys::Label;
    let label = |short, title| Label { short, title };
    crate::figures::shape::Naming {
        labels: vec![
            ("sampler_kind", label("", "sampler kind")),
            ("model_likelihood", label("", "model likelihood")),
            ("model_grid", label("D", "grid size D (D × D cells)")),
            ("sampler_beta", label("β", "step size β")),
            ("model_length_scale", label("ℓ", "assumed length scale ℓ")),
            ("data_length_scale", label("true ℓ", "true length scale")),
        ],
        named_by: vec!["model_likelihood", "sampler_kind", "model_grid"],
    }
}

/// Whether a test table's column is a parameter: `model_`, `data_`, `sampler_` or `output_`.
pub(crate) fn parameter_prefix(name: &str) -> bool {
    ["model_", "data_", "sampler_", "output_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

pub(crate) fn table(columns: Vec<(&str, Values)>) -> Table {
    Table::from_columns(
        columns
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    )
}
