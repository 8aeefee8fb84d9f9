//! The report page: one self-contained index.html (inline CSS, no scripts, no network) with
//! the study's name, description and parameters, the run facts from the manifest, a compact
//! jobs table, the failed jobs with their errors, and every figure with its caption, each section
//! of figures led by the families' tables of its kind (the model-choice table). Images are
//! referenced by their file names, relative to the report folder.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::figures::shape::{Cell, Naming};
use crate::figures::tables::{Found, Table};
use crate::figures::{Context, Figure, FigureKind, PageColumn, PageTable, ReportColumns};
use crate::study::keys::SAMPLER_KIND;
use crate::table::shared::JOB_ID;
use crate::table::shared::jobs::{ERROR, PARAMETERS, REPLICATE, STATUS, WARNINGS};
use crate::table::{Col, JobStatus};

/// Rows of the jobs table shown on the page; the full table is jobs.parquet.
const MAX_JOB_ROWS: usize = 400;

const STYLE: &str = "
body { font-family: 'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif; color: #222; margin: 0 auto;
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
pub(crate) fn render_page(
    results_dir: &Path,
    context: &Context,
    metrics: &ReportColumns,
    (figures, tables): (&[Figure], &[PageTable]),
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
    if !figures.is_empty() || !tables.is_empty() {
        page.push_str(&contents(figures, tables));
    }
    if let Some(text) = &study_text {
        let _ = writeln!(
            page,
            "<h2 id=\"study\">Study file</h2>\n<pre>{}</pre>",
            escape(text)
        );
    }
    page.push_str(&jobs_section(context, metrics));
    page.push_str(&figures_section(figures, tables));
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

fn contents(figures: &[Figure], tables: &[PageTable]) -> String {
    let mut html =
        String::from("<p>Contents: <a href=\"#study\">study file</a> · <a href=\"#jobs\">jobs</a>");
    for (kind, anchor, heading) in SECTIONS {
        if figures.iter().any(|f| f.kind == kind) || tables.iter().any(|t| t.kind == kind) {
            let heading = heading.to_lowercase();
            let _ = write!(html, " · <a href=\"#{anchor}\">{heading}</a>");
        }
    }
    html.push_str("</p>\n");
    html
}

/// The page's sections of figures, in order: kind, anchor, heading.
const SECTIONS: [(FigureKind, &str, &str); 9] = [
    (FigureKind::Family, "family", "Results"),
    (
        FigureKind::Calibration,
        "calibration",
        "Simulation-based calibration",
    ),
    (FigureKind::Acceptance, "acceptance", "Acceptance"),
    (
        FigureKind::Sweep,
        "sweeps",
        "Metrics against swept parameters",
    ),
    (FigureKind::Fields, "fields", "Fields"),
    (
        FigureKind::ModelChoice,
        "model-choice",
        "Model choice (PSIS-LOO)",
    ),
    (
        FigureKind::Convergence,
        "convergence",
        "Convergence to the exact posterior",
    ),
    (FigureKind::Trace, "traces", "Traces"),
    (
        FigureKind::Autocorrelation,
        "autocorrelation",
        "Autocorrelation",
    ),
];

fn figures_section(figures: &[Figure], tables: &[PageTable]) -> String {
    let mut html = String::new();
    for (kind, anchor, heading) in SECTIONS {
        let of_kind: Vec<&Figure> = figures.iter().filter(|f| f.kind == kind).collect();
        let tables_of_kind: Vec<&PageTable> = tables.iter().filter(|t| t.kind == kind).collect();
        if of_kind.is_empty() && tables_of_kind.is_empty() {
            continue;
        }
        let _ = writeln!(html, "<h2 id=\"{anchor}\">{heading}</h2>");
        for table in tables_of_kind {
            html.push_str(&page_table(table));
        }
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
fn job_columns(context: &Context, metrics: &ReportColumns) -> Vec<String> {
    let jobs = context.jobs;
    let mut columns: Vec<String> = [JOB_ID.name(), STATUS.name(), REPLICATE.name()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let swept = context.shape.swept_names();
    let params: Vec<&str> = if swept.is_empty() {
        metrics.unswept.iter().map(|k| k.column()).collect()
    } else {
        swept
    };
    columns.extend(params.iter().map(|s| s.to_string()));
    let listed = metrics
        .swept
        .iter()
        .filter_map(|(m, _)| m.column())
        .map(|m| m.name())
        .chain(metrics.listed.iter().copied());
    for name in listed {
        let found = Found(name);
        let present = (0..jobs.height).any(|r| jobs.finite(found, r).is_some());
        if present && !columns.iter().any(|c| c == name) {
            columns.push(name.to_string());
        }
    }
    columns.retain(|c| jobs.has(c));
    columns
}

fn jobs_section(context: &Context, metrics: &ReportColumns) -> String {
    let jobs = context.jobs;
    if jobs.height == 0 {
        return "<h2 id=\"jobs\">Jobs</h2>\n<p>No jobs table (jobs.parquet) in this results folder.</p>\n".into();
    }
    let columns = job_columns(context, metrics);
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
    let headers: Vec<PageColumn> = columns
        .iter()
        .map(|column| PageColumn {
            header: header(&context.shape.naming, column),
            tooltip: column.clone(),
            text: context.jobs.num(Found(column)).is_none(),
        })
        .collect();
    let rows = (0..jobs.height.min(MAX_JOB_ROWS)).map(|row| {
        let failed = status(jobs, row).is_some_and(|s| s != JobStatus::Ok);
        let cells = columns
            .iter()
            .map(|column| Cell::of(jobs, column, row).display())
            .collect();
        (failed, cells)
    });
    html.push_str(&table_html(&headers, rows));
    html.push_str(&job_messages(context, "Failed jobs", ERROR, true));
    html.push_str(&job_messages(
        context,
        "Jobs with warnings",
        WARNINGS,
        false,
    ));
    html
}

/// The status of the job in `row`, if the table records a known one.
fn status(jobs: &Table, row: usize) -> Option<JobStatus> {
    jobs.str_at(STATUS, row).and_then(JobStatus::from_name)
}

fn header(naming: &Naming, column: &str) -> String {
    if column == JOB_ID.name() {
        return "job".into();
    }
    if column == SAMPLER_KIND.column() {
        return "sampler".into();
    }
    match PARAMETERS.member_of(column) {
        Some(key) if naming.short_name(column).is_empty() => key.replace('_', " "),
        Some(_) => naming.short_name(column),
        None => column.replace('_', " "),
    }
}

/// A scrolling table: a header row (each header with its tooltip), then one row per item, a
/// failed job's row highlighted; text columns left-aligned.
fn table_html(
    columns: &[PageColumn],
    rows: impl IntoIterator<Item = (bool, Vec<String>)>,
) -> String {
    let class = |column: &PageColumn| {
        if column.text { " class=\"text\"" } else { "" }
    };
    let mut html = String::from("<div class=\"scroll\"><table>\n<tr>");
    for column in columns {
        let _ = write!(
            html,
            "<th{} title=\"{}\">{}</th>",
            class(column),
            escape(&column.tooltip),
            escape(&column.header)
        );
    }
    html.push_str("</tr>\n");
    for (failed, cells) in rows {
        html.push_str(if failed {
            "<tr class=\"failed\">"
        } else {
            "<tr>"
        });
        for (column, value) in columns.iter().zip(&cells) {
            let _ = write!(html, "<td{}>{}</td>", class(column), escape(value));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table></div>\n");
    html
}

/// A family's table: its title, the table, its caption.
fn page_table(table: &PageTable) -> String {
    let mut html = format!("<h3>{}</h3>\n", escape(&table.title));
    html.push_str(&table_html(
        &table.columns,
        table.rows.iter().map(|row| (false, row.clone())),
    ));
    let _ = writeln!(html, "<p>{}</p>", escape(&table.caption));
    html
}

/// A list of the jobs whose `column` holds a message: failed jobs with their errors, finished
/// jobs with their warnings.
fn job_messages(context: &Context, heading: &str, column: Col<String>, failed: bool) -> String {
    let jobs = context.jobs;
    let listed: Vec<(usize, &str)> = (0..jobs.height)
        .filter(|&r| status(jobs, r).is_some_and(|s| (s != JobStatus::Ok) == failed))
        .map(|r| {
            (
                r,
                jobs.str_at(column, r)
                    .unwrap_or("no error message recorded"),
            )
        })
        .filter(|(_, message)| !message.is_empty())
        .collect();
    if listed.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<h3>{heading} ({})</h3>\n<ul class=\"errors\">\n",
        listed.len()
    );
    for (row, message) in listed {
        let id = jobs.str_at(JOB_ID, row).unwrap_or("?");
        let _ = writeln!(
            html,
            "<li><code>{}</code>: {}</li>",
            escape(id),
            escape(message)
        );
    }
    html.push_str("</ul>\n");
    html
}

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
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

    #[test]
    fn the_page_sets_a_font_stack_that_ends_in_a_generic_family() {
        let body = STYLE.lines().find(|l| l.starts_with("body")).unwrap();
        let stack = body
            .split(';')
            .find_map(|d| {
                d.trim()
                    .strip_prefix("body {")
                    .unwrap_or(d)
                    .trim()
                    .strip_prefix("font-family:")
            })
            .expect("the body sets font-family");
        assert!(stack.trim().ends_with("sans-serif"), "{stack}");
    }
}
