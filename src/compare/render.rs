//! What `fieldmc compare` prints: where each folder came from, a line per table, the worst value
//! of each job that is not identical, what the tolerance could not judge, and a summary line.

use std::fmt::Write;

use super::{Comparison, Difference, Provenance, TableOutcome, Tolerance, Verdict};

/// Differing jobs listed per table unless every one is asked for.
pub(crate) const LISTED_JOBS: usize = 5;

/// The whole text; `all` lists every differing job rather than the first [`LISTED_JOBS`].
pub(crate) fn render(comparison: &Comparison, all: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", origin(&comparison.a));
    let _ = writeln!(out, "B: {}", origin(&comparison.b));
    let _ = writeln!(out, "tolerance: {}", tolerance_line(comparison));
    for table in &comparison.tables {
        table_lines(&mut out, comparison, table, all);
    }
    for (side, names) in [
        ("A", &comparison.tables_only_in_a),
        ("B", &comparison.tables_only_in_b),
    ] {
        if !names.is_empty() {
            let _ = writeln!(out, "tables only in {side}: {}", names.join(", "));
        }
    }
    for (side, jobs) in [("A", &comparison.only_in_a), ("B", &comparison.only_in_b)] {
        if !jobs.is_empty() {
            let _ = writeln!(out, "{} jobs only in {side}, e.g. {}", jobs.len(), jobs[0]);
        }
    }
    let _ = writeln!(out, "{}", summary(comparison));
    out
}

/// A table's line of counts, its one-sided columns, its different jobs and what the tolerance
/// could not judge.
fn table_lines(out: &mut String, comparison: &Comparison, table: &TableOutcome, all: bool) {
    let verdicts: Vec<(usize, Verdict)> = (0..comparison.pairs.len())
        .filter_map(|i| comparison.job_verdict(table, i).map(|v| (i, v)))
        .collect();
    let count = |verdict| verdicts.iter().filter(|(_, v)| *v == verdict).count();
    let mut counts: Vec<String> = [
        Verdict::Identical,
        Verdict::NotJudged,
        Verdict::WithinTolerance,
        Verdict::Different,
    ]
    .into_iter()
    .filter(|&verdict| count(verdict) > 0)
    .map(|verdict| format!("{} {}", count(verdict), verdict.word()))
    .collect();
    if count(Verdict::WithinTolerance) > 0 && table.jobs.iter().flatten().any(|j| j.judged > 0) {
        let worst = comparison.worst_within(table);
        counts.push(format!("largest gap within tolerance {worst:.2} MCSE"));
    }
    let _ = writeln!(
        out,
        "{:<26} {:>5} {}: {}",
        format!("{}.parquet", table.name),
        verdicts.len(),
        plural(verdicts.len(), "job"),
        counts.join(", ")
    );
    for (side, columns) in [("A", &table.only_in_a), ("B", &table.only_in_b)] {
        if !columns.is_empty() {
            let _ = writeln!(out, "    columns only in {side}: {}", columns.join(", "));
        }
    }
    let different: Vec<usize> = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::Different)
        .map(|(i, _)| *i)
        .collect();
    let shown = if all {
        different.len()
    } else {
        different.len().min(LISTED_JOBS)
    };
    for &index in &different[..shown] {
        let _ = writeln!(out, "    {}", job_line(comparison, table, index));
    }
    if shown < different.len() {
        let _ = writeln!(
            out,
            "    ... and {} more (--all lists them)",
            different.len() - shown
        );
    }
    if comparison.tolerance != Tolerance::Exact && !table.unjudged.is_empty() {
        let columns: Vec<String> = table
            .unjudged
            .iter()
            .map(|(column, n)| format!("{column} ({n})"))
            .collect();
        let _ = writeln!(
            out,
            "    not judged (no MCSE stored; values that differ): {}",
            columns.join(", ")
        );
    }
}

/// The last line: the verdict and what it rests on.
pub(crate) fn summary(comparison: &Comparison) -> String {
    let verdict = comparison.verdict();
    let tables = comparison.tables.len();
    let jobs = comparison.pairs.len();
    let differing_tables = comparison
        .tables
        .iter()
        .filter(|t| comparison.table_verdict(t) == Verdict::Different)
        .count();
    match verdict {
        Verdict::Identical => {
            format!("summary: identical: {jobs} jobs in {tables} tables, bit for bit")
        }
        Verdict::NotJudged => unreachable!("the overall verdict judges or calls it different"),
        Verdict::WithinTolerance => format!(
            "summary: within tolerance: {jobs} jobs in {tables} tables; {} values judged in MCSEs, \
             the rest differ only where no MCSE is stored",
            comparison.judged
        ),
        Verdict::Different => {
            let mut reasons = vec![format!("{differing_tables} of {tables} tables differ")];
            if comparison.only_in_a.len() + comparison.only_in_b.len() > 0 {
                reasons.push("some jobs are in one folder only".into());
            }
            if comparison.tables_only_in_a.len() + comparison.tables_only_in_b.len() > 0 {
                reasons.push("some tables are in one folder only".into());
            }
            if differing_tables == 0 && comparison.judged == 0 {
                reasons.push("values differ and none carries an MCSE to judge them by".into());
            }
            format!("summary: different: {}", reasons.join("; "))
        }
    }
}

/// Where a folder came from: its path and its manifest's study, seed, version and run.
pub(super) fn origin(side: &Provenance) -> String {
    match &side.manifest {
        Some(m) => format!(
            "{} (study {}, seed {}, fieldmc {} {}, {} threads, started {})",
            side.path.display(),
            m.study,
            m.seed,
            m.version,
            m.git_revision,
            m.threads,
            m.started
        ),
        None => format!("{} (no manifest: reference tables)", side.path.display()),
    }
}

fn tolerance_line(comparison: &Comparison) -> String {
    match (comparison.tolerance, comparison.bound()) {
        (Tolerance::Mcse { floor, false_alarm }, Some(bound)) => format!(
            "{} (timing columns aside): a value with a stored MCSE may differ by {bound:.2} \
             combined MCSEs, the larger of {floor} and the two-sided Bonferroni bound over the \
             {} values judged at a family-wise false-alarm rate of {false_alarm:e}; other \
             columns are reported, not judged",
            comparison.tolerance, comparison.judged
        ),
        _ => "exact: every value bit for bit, timing columns aside".to_string(),
    }
}

/// `1 job`, `2 jobs`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// A different job: what differs first (rows, status, alignment), else its worst value.
fn job_line(comparison: &Comparison, table: &TableOutcome, index: usize) -> String {
    let pair = &comparison.pairs[index];
    let job = table.jobs[index].as_ref().expect("a job with a verdict");
    let name = if pair.a == pair.b {
        format!("job {}", pair.a)
    } else {
        format!("job {} ~ {}", pair.a, pair.b)
    };
    let detail = if let Some((rows_a, rows_b)) = job.rows {
        format!("{rows_a} rows vs {rows_b}")
    } else if pair.status_a != pair.status_b {
        format!("status {} vs {}", pair.status_a, pair.status_b)
    } else if let Some(misaligned) = &job.misaligned {
        format!(
            "rows describe different things: {}",
            show_difference(misaligned)
        )
    } else {
        // The worst value the tolerance judged (in MCSEs), else the worst it could not.
        let worst = job.worst_judged.as_ref().or(job.worst_unjudged.as_ref());
        format!(
            "{} values differ; worst {}",
            job.differing,
            worst.map_or("-".into(), show_difference)
        )
    };
    format!("different {name}: {detail}")
}

fn show_difference(d: &Difference) -> String {
    let place = if d.locator.is_empty() {
        format!("row {}", d.row)
    } else {
        format!("row {} ({})", d.row, d.locator)
    };
    let size = match (d.z, d.gap) {
        (Some(z), _) => format!(", {z:.2} MCSE"),
        (None, Some(gap)) => format!(", |a - b| = {gap:.3e}"),
        (None, None) => String::new(),
    };
    format!("{} {place}: {} vs {}{size}", d.column, d.a, d.b)
}
