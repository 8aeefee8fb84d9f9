//! Model choice by PSIS-LOO, `fieldmc compare --loo`: ArviZ's `az.compare(ic="loo",
//! scale="log")` table (ArviZ 0.23, `arviz/stats/stats.py`) without its weights, from each
//! job's `elpd_loo`, standard error, `p_loo` and pointwise terms: the jobs ranked by `elpd_loo`,
//! each one's `elpd_diff` from the best (the sum over observations of the best job's loo_i minus
//! its own) and the standard error of that difference, `dse` = sqrt(n var(diff)) with numpy's
//! variance (ddof 0) over the n paired observations. Two jobs are compared only when their
//! observations are the same: the same count, the same cells or sites in the same order and,
//! where the folders hold them, the same data. Pure: the tables are read by
//! [`super::model_choice`].

use std::fmt::Write;

use crate::diagnostics::loo::BAD_PARETO_K;

/// One observation of a job's likelihood: where it is and its datum.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Observed {
    /// The kind of place (`cell`, `site`).
    pub(crate) noun: &'static str,
    /// Which one: the cell's index, the site's row.
    pub(crate) at: i64,
    /// Its datum (the value and, binomial, the trials) when the folder holds the data.
    pub(crate) datum: Option<Vec<Option<f64>>>,
}

/// One job as a candidate model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    /// The job's id, with its folder's letter in front when there are two folders.
    pub(crate) job: String,
    /// What the job is: the parameters that differ between the jobs compared.
    pub(crate) label: String,
    pub(crate) elpd_loo: f64,
    pub(crate) se: f64,
    pub(crate) p_loo: f64,
    /// Observations whose Pareto k is above [`BAD_PARETO_K`] (or could not be fitted); `None`:
    /// not recorded.
    pub(crate) pareto_k_bad: Option<i64>,
    /// Each observation's loo_i, in the likelihood's order.
    pub(crate) pointwise: Vec<f64>,
    /// Each observation, in the same order.
    pub(crate) observed: Vec<Observed>,
}

/// One line of the table: a job, best first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    /// 0 for the best job (the largest `elpd_loo`).
    pub(crate) rank: usize,
    /// The job's position among the candidates.
    pub(crate) candidate: usize,
    /// The best job's `elpd_loo` minus this one's, summed over the paired observations.
    pub(crate) elpd_diff: f64,
    /// The standard error of `elpd_diff` ([`se_of_difference`]); 0 for the best job.
    pub(crate) dse: f64,
    /// Whether some observation's Pareto k is bad: its `elpd_loo` is unreliable.
    pub(crate) warning: bool,
}

/// Everything `fieldmc compare --loo` found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelChoice {
    /// Each folder as the header names it (`A: results/x (study ..., seed ...)`).
    pub(crate) folders: Vec<String>,
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) lines: Vec<Line>,
    /// Jobs not compared, each with why.
    pub(crate) left_out: Vec<String>,
    /// Whether every job's data were found and compared (not only where its observations are).
    pub(crate) data_checked: bool,
}

/// The standard error of the difference of two jobs' elpd: sqrt(n var(a_i - b_i)) over the n
/// paired observations, the variance numpy's (ddof 0), as ArviZ's `compare` computes `dse`.
pub(crate) fn se_of_difference(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let n = a.len();
    if n == 0 {
        return 0.0;
    }
    let diff: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let mean = diff.iter().sum::<f64>() / n as f64;
    let variance = diff.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64;
    (n as f64 * variance).sqrt()
}

/// Why jobs `a` and `b` cannot be compared, if they cannot: what first differs in their
/// observations.
pub(crate) fn why_not_comparable(a: &Candidate, b: &Candidate) -> Option<String> {
    if a.observed.len() != b.observed.len() {
        return Some(format!(
            "job {} has {} observations, job {} has {}",
            a.job,
            a.observed.len(),
            b.job,
            b.observed.len()
        ));
    }
    for (i, (x, y)) in a.observed.iter().zip(&b.observed).enumerate() {
        if (x.noun, x.at) != (y.noun, y.at) {
            return Some(format!(
                "observation {i} is {} {} in job {} but {} {} in job {} (different held-out \
                 cells, a different mask or different data?)",
                x.noun, x.at, a.job, y.noun, y.at, b.job
            ));
        }
        if let (Some(u), Some(v)) = (&x.datum, &y.datum)
            && !same_datum(u, v)
        {
            return Some(format!(
                "{} {} (observation {i}) holds {} in job {} but {} in job {} (different data: \
                 another data file, or another replicate of simulated data?)",
                x.noun,
                x.at,
                show_datum(u),
                a.job,
                show_datum(v),
                b.job
            ));
        }
    }
    None
}

/// Bit for bit, nulls equal.
fn same_datum(u: &[Option<f64>], v: &[Option<f64>]) -> bool {
    u.len() == v.len()
        && u.iter()
            .zip(v)
            .all(|(x, y)| x.map(f64::to_bits) == y.map(f64::to_bits))
}

fn show_datum(values: &[Option<f64>]) -> String {
    let shown: Vec<String> = values
        .iter()
        .flatten()
        .map(|value| format!("{value}"))
        .collect();
    match shown.len() {
        0 => "no value".to_string(),
        1 => shown[0].clone(),
        _ => format!("({})", shown.join(", ")),
    }
}

/// The lines of ArviZ's table: the jobs by decreasing `elpd_loo` (ties in the order given),
/// each with its difference from the best and the difference's standard error. An error when
/// fewer than two jobs are given or two jobs' observations differ.
pub(crate) fn rank(candidates: &[Candidate]) -> Result<Vec<Line>, String> {
    let [first, rest @ ..] = candidates else {
        return Err("no job has PSIS-LOO results".to_string());
    };
    if rest.is_empty() {
        return Err(format!(
            "only job {} has PSIS-LOO results: model choice compares two or more",
            first.job
        ));
    }
    for other in rest {
        if let Some(why) = why_not_comparable(first, other) {
            return Err(format!(
                "jobs {} and {} did not see the same observations, so their elpd cannot be \
                 compared: {why}",
                first.job, other.job
            ));
        }
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&i, &j| candidates[j].elpd_loo.total_cmp(&candidates[i].elpd_loo));
    let best = &candidates[order[0]].pointwise;
    Ok(order
        .iter()
        .enumerate()
        .map(|(rank, &index)| {
            let job = &candidates[index];
            Line {
                rank,
                candidate: index,
                elpd_diff: best.iter().zip(&job.pointwise).map(|(b, x)| b - x).sum(),
                dse: se_of_difference(best, &job.pointwise),
                warning: job.pareto_k_bad.is_some_and(|bad| bad > 0),
            }
        })
        .collect())
}

/// The columns of the printed table, az.compare's with the job and its model.
const COLUMNS: [&str; 10] = [
    "rank",
    "job",
    "elpd_loo",
    "p_loo",
    "elpd_diff",
    "se",
    "dse",
    "warning",
    "scale",
    "model",
];

/// What `fieldmc compare --loo` prints: the folders, the observations, the table, how to read
/// it, the warnings and the jobs left out.
pub(crate) fn render(choice: &ModelChoice) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "model choice by PSIS-LOO, as ArviZ's az.compare(ic=\"loo\", scale=\"log\") without its \
         weights"
    );
    for folder in &choice.folders {
        let _ = writeln!(out, "{folder}");
    }
    let _ = writeln!(out, "{}", observations_line(choice));
    let mut rows: Vec<[String; 10]> = vec![COLUMNS.map(str::to_string)];
    for line in &choice.lines {
        let job = &choice.candidates[line.candidate];
        rows.push([
            line.rank.to_string(),
            job.job.clone(),
            format!("{:.3}", job.elpd_loo),
            format!("{:.3}", job.p_loo),
            format!("{:.3}", line.elpd_diff),
            format!("{:.3}", job.se),
            format!("{:.3}", line.dse),
            line.warning.to_string(),
            "log".to_string(),
            job.label.clone(),
        ]);
    }
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|k| rows.iter().map(|r| r[k].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let mut text = String::new();
        for (k, cell) in row.iter().enumerate() {
            let pad = widths[k] - cell.chars().count();
            // The job and the model are text, left-aligned; the rest are numbers.
            if k == 1 || k == COLUMNS.len() - 1 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
            text.push_str("  ");
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
    let _ = writeln!(
        out,
        "elpd_loo: the expected log pointwise predictive density, higher is better; se its \
         standard error; p_loo the effective number of parameters; elpd_diff: the best job's \
         elpd_loo minus this one's; dse: the standard error of that difference, sqrt(n \
         var(loo_i(best) - loo_i(job))) over the n paired observations (a difference within \
         about 2 dse does not tell the models apart)"
    );
    let warned: Vec<&str> = choice
        .lines
        .iter()
        .filter(|line| line.warning)
        .map(|line| choice.candidates[line.candidate].job.as_str())
        .collect();
    if !warned.is_empty() {
        let _ = writeln!(
            out,
            "warning: Pareto k above {BAD_PARETO_K} for some observations of {} (pareto_k_bad \
             in jobs.parquet, the k of each in loo.parquet): elpd_loo is unreliable there",
            warned.join(", ")
        );
    }
    if !choice.left_out.is_empty() {
        let _ = writeln!(out, "not compared: {}", choice.left_out.join("; "));
    }
    out
}

/// How many observations the jobs share, and what was checked of them.
fn observations_line(choice: &ModelChoice) -> String {
    let Some(first) = choice.candidates.first() else {
        return "no job to compare".to_string();
    };
    let mut nouns: Vec<&str> = Vec::new();
    for observed in &first.observed {
        if !nouns.contains(&observed.noun) {
            nouns.push(observed.noun);
        }
    }
    let nouns: Vec<String> = nouns.iter().map(|noun| format!("{noun}s")).collect();
    let data = if choice.data_checked {
        "with the same data"
    } else {
        "(their data not checked: a folder lacks the table that holds them)"
    };
    format!(
        "{} jobs, each with the same {} observations ({}) in the same order, {data}",
        choice.candidates.len(),
        first.observed.len(),
        nouns.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(job: &str, pointwise: &[f64], bad: i64) -> Candidate {
        Candidate {
            job: job.into(),
            label: format!("model {job}"),
            elpd_loo: pointwise.iter().sum(),
            se: 1.0,
            p_loo: 2.0,
            pareto_k_bad: Some(bad),
            pointwise: pointwise.to_vec(),
            observed: (0..pointwise.len())
                .map(|i| Observed {
                    noun: "cell",
                    at: 10 + i as i64,
                    datum: Some(vec![Some(i as f64), None]),
                })
                .collect(),
        }
    }

    /// By hand: a - b = (1, -1, 2, 0), mean 0.5, squared deviations 0.25 + 2.25 + 2.25 + 0.25
    /// = 5, var = 5 / 4, n var = 5.
    #[test]
    fn the_difference_standard_error_is_sqrt_n_times_the_ddof0_variance() {
        let a = [-1.0, -2.0, 0.5, -3.0];
        let b = [-2.0, -1.0, -1.5, -3.0];
        assert!((se_of_difference(&a, &b) - 5f64.sqrt()).abs() < 1e-14);
        assert_eq!(se_of_difference(&a, &a), 0.0);
        assert_eq!(se_of_difference(&[], &[]), 0.0);
    }

    /// The jobs of the test above: the better one (elpd -5.5 against -7.5) ranks first with
    /// difference 0; the other is 2 behind with dse sqrt(5), ArviZ's
    /// `np.sqrt(len(diff) * np.var(diff))` of diff = best - other.
    #[test]
    fn ranks_best_first_with_differences_from_the_best() {
        let worse = candidate("w", &[-2.0, -1.0, -1.5, -3.0], 0);
        let best = candidate("b", &[-1.0, -2.0, 0.5, -3.0], 2);
        let lines = rank(&[worse, best]).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].rank, lines[0].candidate), (0, 1));
        assert_eq!((lines[0].elpd_diff, lines[0].dse), (0.0, 0.0));
        assert!(lines[0].warning, "the best job has bad Pareto k");
        assert_eq!((lines[1].rank, lines[1].candidate), (1, 0));
        assert!((lines[1].elpd_diff - 2.0).abs() < 1e-14);
        assert!((lines[1].dse - 5f64.sqrt()).abs() < 1e-14);
        assert!(!lines[1].warning);
    }

    #[test]
    fn jobs_of_other_observations_are_refused_and_named() {
        let a = candidate("a", &[-1.0, -1.0, -1.0], 0);
        let shorter = candidate("s", &[-1.0, -1.0], 0);
        let why = rank(&[a.clone(), shorter]).unwrap_err();
        assert!(why.contains("jobs a and s"), "{why}");
        assert!(
            why.contains("job a has 3 observations, job s has 2"),
            "{why}"
        );

        let mut moved = candidate("m", &[-1.0, -1.0, -1.0], 0);
        moved.observed[1].at = 99;
        let why = why_not_comparable(&a, &moved).unwrap();
        assert!(
            why.contains("observation 1 is cell 11 in job a but cell 99 in job m"),
            "{why}"
        );

        let mut other_data = candidate("d", &[-1.0, -1.0, -1.0], 0);
        other_data.observed[2].datum = Some(vec![Some(7.0), None]);
        let why = why_not_comparable(&a, &other_data).unwrap();
        assert!(
            why.contains("cell 12 (observation 2) holds 2 in job a but 7 in job d"),
            "{why}"
        );

        // Data not held by one folder are not compared; places still are.
        let mut unknown = candidate("u", &[-1.0, -1.0, -1.0], 0);
        unknown.observed[2].datum = None;
        assert_eq!(why_not_comparable(&a, &unknown), None);

        assert!(rank(&[a]).unwrap_err().contains("only job a"));
    }

    #[test]
    fn the_table_prints_every_job_with_its_label_and_the_warnings() {
        let candidates = vec![
            candidate("w", &[-2.0, -1.0, -1.5, -3.0], 0),
            candidate("b", &[-1.0, -2.0, 0.5, -3.0], 2),
        ];
        let lines = rank(&candidates).unwrap();
        let choice = ModelChoice {
            folders: vec!["A: here".into()],
            candidates,
            lines,
            left_out: vec!["job x (no LOO)".into()],
            data_checked: true,
        };
        let text = render(&choice);
        assert!(
            text.contains("2 jobs, each with the same 4 observations (cells) in the same order"),
            "{text}"
        );
        let row = |rank: &str| -> Vec<&str> {
            let line = text.lines().find(|l| l.trim_start().starts_with(rank));
            line.unwrap().split_whitespace().collect()
        };
        let header = text.lines().find(|l| l.starts_with("rank")).unwrap();
        assert_eq!(header.split_whitespace().collect::<Vec<_>>(), COLUMNS);
        assert_eq!(
            row("0 "),
            [
                "0", "b", "-5.500", "2.000", "0.000", "1.000", "0.000", "true", "log", "model", "b"
            ]
        );
        assert_eq!(
            row("1 "),
            [
                "1", "w", "-7.500", "2.000", "2.000", "1.000", "2.236", "false", "log", "model",
                "w"
            ]
        );
        assert!(text.contains("warning: Pareto k above 0.7 for some observations of b"));
        assert!(text.contains("not compared: job x (no LOO)"));
    }
}
