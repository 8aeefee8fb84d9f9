//! `fieldmc compare A B`: are two results folders the same? Exit 0 when identical or within
//! tolerance, 1 when different, 2 when they cannot be compared (not results folders, different
//! studies, no job in common). `fieldmc compare A [B] --loo`: which job predicts the data best
//! (PSIS-LOO, as ArviZ's `az.compare`)? Exit 0 with the table, 2 when the jobs cannot be
//! compared (fewer than two with LOO, different observations).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{BAD_INPUT, FAILURE};
use crate::compare::{
    CompareOptions, DEFAULT_FALSE_ALARM, Tolerance, Verdict, compare, loo, model_choice, render,
};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// A results folder (or a folder of reference tables with its jobs.parquet).
    a: PathBuf,
    /// The folder to compare it with (with --loo: a second folder whose jobs join A's).
    #[arg(required_unless_present = "loo")]
    b: Option<PathBuf>,
    /// Model choice instead: rank the jobs by PSIS-LOO (`output.log_likelihood = true`), as
    /// ArviZ's `az.compare(ic="loo")` without its weights: elpd_loo, p_loo, the difference from
    /// the best job and its standard error dse = sqrt(n var(loo_i(best) - loo_i(job))) over the
    /// paired observations. With one folder its jobs are compared with each other, with two
    /// every job of both; their observations must be the same cells or sites with the same data.
    #[arg(long, conflicts_with_all = ["tolerance", "false_alarm", "tables", "all"])]
    loo: bool,
    /// `exact` (every value bit for bit), `mcse` or `mcse:K`: values with a stored Monte Carlo
    /// standard error may differ by at least K combined MCSEs, widened to the Bonferroni bound
    /// over every value judged so that two correct runs differ by chance at most at
    /// --false-alarm.
    #[arg(long, default_value = "exact", value_parser = parse_tolerance)]
    tolerance: Tolerance,
    /// The family-wise false-alarm rate of an `mcse` tolerance.
    #[arg(long, default_value_t = DEFAULT_FALSE_ALARM)]
    false_alarm: f64,
    /// Only these tables (comma-separated, e.g. `jobs,fields`).
    #[arg(long, value_delimiter = ',')]
    tables: Vec<String>,
    /// List every job that is not identical, not only the first few per table.
    #[arg(long)]
    all: bool,
}

fn parse_tolerance(text: &str) -> Result<Tolerance, String> {
    text.parse()
}

pub fn run(args: &CompareArgs) -> ExitCode {
    if args.loo {
        return run_model_choice(args);
    }
    let Some(b) = &args.b else {
        eprintln!("error: compare takes two results folders (or one with --loo)");
        return ExitCode::from(BAD_INPUT);
    };
    if !(args.false_alarm > 0.0 && args.false_alarm < 1.0) {
        eprintln!(
            "error: --false-alarm {} must lie strictly between 0 and 1",
            args.false_alarm
        );
        return ExitCode::from(BAD_INPUT);
    }
    let options = CompareOptions {
        tolerance: args.tolerance.with_false_alarm(args.false_alarm),
        tables: args.tables.clone(),
    };
    match compare(&args.a, b, &options) {
        Ok(comparison) => {
            print!("{}", render::render(&comparison, args.all));
            match comparison.verdict() {
                Verdict::Identical | Verdict::WithinTolerance => ExitCode::SUCCESS,
                Verdict::NotJudged | Verdict::Different => ExitCode::from(FAILURE),
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(BAD_INPUT)
        }
    }
}

/// `--loo`: the model-choice table of the jobs of A (and B).
fn run_model_choice(args: &CompareArgs) -> ExitCode {
    let mut folders = vec![args.a.as_path()];
    folders.extend(args.b.as_deref());
    match model_choice::model_choice(&folders) {
        Ok(choice) => {
            print!("{}", loo::render(&choice));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(BAD_INPUT)
        }
    }
}
