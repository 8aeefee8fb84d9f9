//! How a plan is shown: an aligned text table for people (`fieldmc plan STUDY`) and CSV with
//! every parameter for programs (`fieldmc plan STUDY --format csv`).

use super::{ParamValue, Plan};
use crate::study::keys::{MODEL_LIKELIHOOD, SAMPLER_KIND};
use crate::study::{Key, Study};

impl Plan {
    /// One line per job: id, replicate, the swept parameters, and the likelihood and sampler
    /// kind (latent-field jobs, when not swept already), in aligned columns under a header.
    pub fn to_text_table(&self, study: &Study) -> String {
        let mut columns: Vec<Key> = study.swept_keys();
        for always in [MODEL_LIKELIHOOD, SAMPLER_KIND] {
            let applies = self.jobs.iter().any(|j| always.applies_to(j.spec.family()));
            if applies && !columns.contains(&always) {
                columns.push(always);
            }
        }
        let mut rows: Vec<Vec<String>> = Vec::with_capacity(self.jobs.len() + 1);
        let mut header = vec!["id".to_string(), "replicate".to_string()];
        header.extend(columns.iter().map(|k| k.column().to_string()));
        rows.push(header);
        for job in &self.jobs {
            let mut row = vec![job.id.clone(), job.replicate.to_string()];
            row.extend(columns.iter().map(|key| {
                job.params
                    .get(key.index())
                    .map_or_else(String::new, |(_, value)| shown(value))
            }));
            rows.push(row);
        }
        align(&rows)
    }

    /// Every job with every parameter of its family: `job_id,replicate,model_family,...`, one
    /// line per job, empty fields for `Null`.
    pub fn to_csv(&self) -> String {
        let keys: Vec<Key> = Key::all()
            .filter(|key| self.jobs.iter().any(|j| key.applies_to(j.spec.family())))
            .collect();
        let mut out = String::from("job_id,replicate");
        for key in &keys {
            out.push(',');
            out.push_str(key.column());
        }
        out.push('\n');
        for job in &self.jobs {
            out.push_str(&job.id);
            out.push(',');
            out.push_str(&job.replicate.to_string());
            for key in &keys {
                out.push(',');
                out.push_str(&csv_field(&job.params[key.index()].1.to_string()));
            }
            out.push('\n');
        }
        out
    }
}

fn shown(value: &ParamValue) -> String {
    match value {
        ParamValue::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// Left-aligned columns separated by two spaces, no trailing blanks.
fn align(rows: &[Vec<String>]) -> String {
    let width = |column: usize| {
        rows.iter()
            .map(|row| row.get(column).map_or(0, |cell| cell.chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len)).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
