//! `fieldmc compare A B`: are two results folders the same? Exit 0 when identical or within
//! tolerance, 1 when different, 2 when they cannot be compared (not results folders, different
//! studies, no job in common).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{BAD_INPUT, FAILURE};
use crate::compare::{CompareOptions, DEFAULT_FALSE_ALARM, Tolerance, Verdict, compare, render};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// A results folder (or a folder of reference tables with its jobs.parquet).
    a: PathBuf,
    /// The folder to compare it with.
    b: PathBuf,
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
    match compare(&args.a, &args.b, &options) {
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
