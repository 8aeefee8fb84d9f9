//! The report page: one self-contained index.html (inline CSS, no scripts, no network) with
//! the study's name, description and parameters, the run facts from the manifest, a compact
//! jobs table, the failed jobs with their errors, and every figure with its caption. Images
//! are referenced by their file names, relative to the report folder.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::shape::{Cell, short_name};
use super::sweeps::KEY_METRICS;
use super::{Context, Figure, FigureKind};

/// Rows of the jobs table shown on the page; the full table is jobs.parquet.
const MAX_JOB_ROWS: usize = 400;
/// Extra metric columns shown after the key metrics when present.
const EXTRA_METRICS: [&str; 7] = [
    "baseline_count_mae",
    "ess_bulk",
    "ess_tail",
    "rhat",
    "cell_ess_min",
    "jitter",
    "wall_seconds",
];
/// Parameters shown in the jobs table when the study swept nothing.
const DEFAULT_PARAMS: [&str; 4] = [
    "model_likelihood",
    "sampler_kind",
    "model_grid",
    "sampler_beta",
];

const STYLE: &str = "
body { font-kind: 'DejaVu Sans', Verdana, Arial, sans-serif; color: #222; margin: 0 auto;
       max-width: 1500px; padding: 1.5em 2em 4em; line-height: 1.45; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
p.lead { font-size: 1.1em; color: #444; margin-top: 0; }
pre { background: #f6f6f6; border: 1px solid #e2e2e2; padding: 0.8em 1em; overflow-x: auto;
      font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 0.25em 0.7em; text-align: right; }
th { background: #f2f2f2; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
tr.failed td { background: #fdecea; }
.scroll { max-height: 32em; overflow: auto; border: 1px solid #e4e4e4; display: inline-block; max-width: 100%; }
figure { margin: 1.5em 0 2.5em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { max-width: 70em; color: #333; font-size: 0.95em; margin-top: 0.4em; }
.notes li, .errors li { font-size: 0.9em; }
code { background: #f3f3f3; padding: 0 0.2em; }
";

/// The whole page as a string.
pub fn render_page(
    results_dir: &Path,
    context: &Context,
    figures: &[Figure],
    notes: &[String],
) -> String {
    let study_text = fs::read_to_string(results_dir.join("study.toml")).ok();
    let study: Option<toml::Table> = study_text.as_deref().and_then(|t| toml::from_str(t).ok());
    let manifest: Option<serde_json::Value> = fs::read_to_string(results_dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let name = study_name(study.as_ref(), manifest.as_ref(), results_dir);
    let description = study.as_ref().and_then(|s| {
        s.get("study")?
            .get("description")?
            .as_str()
            .map(str::to_string)
    });

    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>fieldmc report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&name),
        escape(&name)
    );
    if let Some(description) = description {
        let _ = writeln!(page, "<p class=\"lead\">{}</p>", escape(&description));
    }
    page.push_str(&run_facts(context, manifest.as_ref()));
    if !figures.is_empty() {
        page.push_str(&contents(figures));
    }
    if let Some(text) = &study_text {
        let _ = writeln!(
            page,
            "<h2 id=\"study\">Study file</h2>\n<pre>{}</pre>",
            escape(text)
        );
    }
    page.push_str(&jobs_section(context));
    page.push_str(&figures_section(figures));
    if !notes.is_empty() {
        page.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for note in notes {
            let _ = writeln!(page, "<li>{}</li>", escape(note));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("</body>\n</html>\n");
    page
}

fn study_name(
    study: Option<&toml::Table>,
    manifest: Option<&serde_json::Value>,
    dir: &Path,
) -> String {
    study
        .and_then(|s| s.get("study")?.get("name")?.as_str().map(str::to_string))
        .or_else(|| manifest.and_then(|m| m.get("study")?.as_str().map(str::to_string)))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "study".into())
}

/// Job counts and the manifest's scalar entries (seed, threads, version, revision, times).
fn run_facts(context: &Context, manifest: Option<&serde_json::Value>) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let total = context.jobs.height;
    if total > 0 {
        let ok = context.shape.ok_rows.len();
        rows.push((
            "jobs".into(),
            format!("{total} ({ok} ok, {} failed)", total - ok),
        ));
    }
    if let Some(serde_json::Value::Object(entries)) = manifest {
        for (key, value) in entries {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            rows.push((key.replace('_', " "), shown));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut html = String::from("<table class=\"facts\">\n");
    for (key, value) in rows {
        let _ = writeln!(
            html,
            "<tr><th class=\"text\">{}</th><td class=\"text\">{}</td></tr>",
            escape(&key),
            escape(&value)
        );
    }
    html.push_str("</table>\n");
    html
}

fn contents(figures: &[Figure]) -> String {
    let mut html =
        String::from("<p>Contents: <a href=\"#study\">study file</a> · <a href=\"#jobs\">jobs</a>");
    for (kind, heading) in KIND_HEADINGS {
        if figures.iter().any(|f| f.kind == kind) {
            let _ = write!(
                html,
                " · <a href=\"#{}\">{}</a>",
                anchor(kind),
                heading.to_lowercase()
            );
        }
    }
    html.push_str("</p>\n");
    html
}

const KIND_HEADINGS: [(FigureKind, &str); 7] = [
    (FigureKind::Calibration, "Simulation-based calibration"),
    (FigureKind::Acceptance, "Acceptance"),
    (FigureKind::Sweep, "Metrics against swept parameters"),
    (FigureKind::Fields, "Fields"),
    (
        FigureKind::Convergence,
        "Convergence to the exact posterior",
    ),
    (FigureKind::Trace, "Traces"),
    (FigureKind::Autocorrelation, "Autocorrelation"),
];

fn anchor(kind: FigureKind) -> &'static str {
    match kind {
        FigureKind::Fields => "fields",
        FigureKind::Acceptance => "acceptance",
        FigureKind::Sweep => "sweeps",
        FigureKind::Convergence => "convergence",
        FigureKind::Trace => "traces",
        FigureKind::Autocorrelation => "autocorrelation",
        FigureKind::Calibration => "calibration",
    }
}

fn figures_section(figures: &[Figure]) -> String {
    let mut html = String::new();
    for (kind, heading) in KIND_HEADINGS {
        let of_kind: Vec<&Figure> = figures.iter().filter(|f| f.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let _ = writeln!(html, "<h2 id=\"{}\">{heading}</h2>", anchor(kind));
        for figure in of_kind {
            let _ = writeln!(
                html,
                "<figure>\n<img src=\"{}\" alt=\"{}\">\n<figcaption><strong>{}.</strong> {}</figcaption>\n</figure>",
                escape(&figure.file),
                escape(&figure.title),
                escape(&figure.title),
                escape(&figure.caption)
            );
        }
    }
    html
}

/// The columns of the jobs table: id, status, replicate, swept (or default) parameters, then
/// the metrics that have at least one value.
fn job_columns(context: &Context) -> Vec<String> {
    let jobs = context.jobs;
    let mut columns: Vec<String> = ["job_id", "status", "replicate"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let swept = context.shape.swept_names();
    let params: Vec<&str> = if swept.is_empty() {
        DEFAULT_PARAMS.to_vec()
    } else {
        swept
    };
    columns.extend(params.iter().map(|s| s.to_string()));
    let metrics = KEY_METRICS.iter().map(|(m, _)| *m).chain(EXTRA_METRICS);
    columns.extend(
        metrics
            .filter(|m| (0..jobs.height).any(|r| jobs.finite(m, r).is_some()))
            .map(String::from),
    );
    columns.retain(|c| jobs.has(c));
    columns
}

fn jobs_section(context: &Context) -> String {
    let jobs = context.jobs;
    if jobs.height == 0 {
        return "<h2 id=\"jobs\">Jobs</h2>\n<p>No jobs table (jobs.parquet) in this results folder.</p>\n".into();
    }
    let columns = job_columns(context);
    let mut html = String::from("<h2 id=\"jobs\">Jobs</h2>\n");
    let _ = writeln!(
        html,
        "<p>One row per job in plan order, numbers rounded (full precision in <code>jobs.parquet</code>).{}</p>",
        if jobs.height > MAX_JOB_ROWS {
            format!(
                " The first {MAX_JOB_ROWS} of {} jobs are shown.",
                jobs.height
            )
        } else {
            String::new()
        }
    );
    html.push_str("<div class=\"scroll\"><table>\n<tr>");
    for column in &columns {
        let class = if is_text_column(context, column) {
            " class=\"text\""
        } else {
            ""
        };
        let _ = write!(
            html,
            "<th{class} title=\"{}\">{}</th>",
            escape(column),
            escape(&header(column))
        );
    }
    html.push_str("</tr>\n");
    for row in 0..jobs.height.min(MAX_JOB_ROWS) {
        let failed = jobs.str_at("status", row).is_some_and(|s| s != "ok");
        html.push_str(if failed {
            "<tr class=\"failed\">"
        } else {
            "<tr>"
        });
        for column in &columns {
            let value = Cell::of(jobs, column, row).display();
            let class = if is_text_column(context, column) {
                " class=\"text\""
            } else {
                ""
            };
            let _ = write!(html, "<td{class}>{}</td>", escape(&value));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table></div>\n");
    html.push_str(&failed_jobs(context));
    html
}

fn header(column: &str) -> String {
    let short = short_name(column);
    match column {
        "job_id" => "job".into(),
        "sampler_kind" => "sampler".into(),
        _ if column.starts_with("model_")
            || column.starts_with("data_")
            || column.starts_with("sampler_") =>
        {
            if short.is_empty() {
                column
                    .split_once('_')
                    .map_or(column, |(_, r)| r)
                    .replace('_', " ")
            } else {
                short
            }
        }
        _ => column.replace('_', " "),
    }
}

fn is_text_column(context: &Context, column: &str) -> bool {
    context.jobs.num(column).is_none()
}

fn failed_jobs(context: &Context) -> String {
    let jobs = context.jobs;
    let failed: Vec<usize> = (0..jobs.height)
        .filter(|&r| jobs.str_at("status", r).is_some_and(|s| s != "ok"))
        .collect();
    if failed.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<h3>Failed jobs ({})</h3>\n<ul class=\"errors\">\n",
        failed.len()
    );
    for row in failed {
        let id = jobs.str_at("job_id", row).unwrap_or("?");
        let error = jobs
            .str_at("error", row)
            .unwrap_or("no error message recorded");
        let _ = writeln!(
            html,
            "<li><code>{}</code>: {}</li>",
            escape(id),
            escape(error)
        );
    }
    html.push_str("</ul>\n");
    html
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_markup() {
        assert_eq!(
            escape("<img src=\"x\" onerror='y'> & co"),
            "&lt;img src=&quot;x&quot; onerror=&#39;y&#39;&gt; &amp; co"
        );
    }
}
