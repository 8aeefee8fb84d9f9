//! The command line: `fieldmc check | plan | run | report`. It parses arguments, calls the
//! library, prints results and maps errors to exit codes: 0 success, 1 a failure while running
//! (some jobs failed, results could not be written), 2 bad input (nothing written).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod bench;

use crate::execute::{ExecuteOptions, default_out, execute};
use crate::plan::plan;
use crate::study::{self, Study};

#[derive(Debug, Parser)]
#[command(
    name = "fieldmc",
    version,
    about = "Reproducible MCMC studies on latent Gaussian fields",
    long_about = "Reproducible MCMC studies on latent Gaussian fields.\n\n\
        A study file (TOML) declares a Gaussian-process prior on a D x D grid, a likelihood, the \
        data, a sampler and the parameters to sweep. fieldmc expands it into jobs, runs them in \
        parallel with seeded random streams and writes Parquet tables and a report.",
    after_help = "Examples:\n  fieldmc run                       # the built-in quickstart study\n  \
        fieldmc check studies/coursework/acceptance.toml\n  \
        fieldmc run studies/coursework/acceptance.toml --threads 2\n  \
        fieldmc report results/acceptance"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a study file (and its data files) without running anything.
    #[command(after_help = "Example:\n  fieldmc check studies/quickstart.toml")]
    Check {
        /// The study file.
        study: PathBuf,
    },
    /// Print the expanded job table: one line per job with its key parameters.
    #[command(after_help = "Examples:\n  fieldmc plan studies/quickstart.toml\n  \
        fieldmc plan studies/quickstart.toml --format csv > jobs.csv")]
    Plan {
        /// The study file.
        study: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Run a study (the built-in quickstart study when none is given).
    #[command(after_help = "Examples:\n  fieldmc run\n  \
        fieldmc run studies/quickstart.toml --threads 2 --out /tmp/quick\n  \
        fieldmc run studies/quickstart.toml --fresh\n\n\
        A rerun into a folder that holds finished jobs runs only the missing ones.")]
    Run {
        /// The study file; omit it to run the built-in quickstart study.
        study: Option<PathBuf>,
        /// Output folder [default: results/<study name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads [default: one per core].
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Discard earlier results in the output folder and start over.
        #[arg(long)]
        fresh: bool,
        /// No progress display.
        #[arg(long)]
        quiet: bool,
        /// Skip writing the report after the run.
        #[arg(long)]
        no_report: bool,
    },
    /// Time one job with the Python peers' settings and print one JSON line (see bench/compare.sh).
    #[command(
        after_help = "Example:\n  fieldmc bench --D 64 --T 10000 --beta 0.2 --sampler pcn --likelihood gaussian"
    )]
    Bench(bench::BenchArgs),
    /// Turn a results folder into figures and an index.html page.
    #[command(after_help = "Example:\n  fieldmc report results/quickstart")]
    Report {
        /// The results folder of a run.
        results: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Csv,
}

/// Exit codes.
const FAILURE: u8 = 1;
const BAD_INPUT: u8 = 2;

/// Parse the command line and run it.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Check { study }) => check(&study),
        Some(Command::Plan { study, format }) => print_plan(&study, format),
        Some(Command::Run {
            study,
            out,
            threads,
            fresh,
            quiet,
            no_report,
        }) => run(study.as_deref(), out, threads, fresh, quiet, no_report),
        Some(Command::Report { results }) => report(&results),
        Some(Command::Bench(args)) => bench::bench(&args),
        None => run(None, None, 0, false, false, false),
    }
}

fn load(path: Option<&Path>) -> Result<Study, ExitCode> {
    let loaded = match path {
        Some(path) => study::load(path),
        None => study::parse(study::QUICKSTART, Path::new(study::QUICKSTART_ORIGIN)),
    };
    loaded.map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(BAD_INPUT)
    })
}

fn check(path: &Path) -> ExitCode {
    match load(Some(path)) {
        Ok(study) => {
            let jobs = plan(&study).jobs.len();
            println!(
                "{}: ok, study `{}` with {jobs} jobs",
                path.display(),
                study.name
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

fn print_plan(path: &Path, format: Format) -> ExitCode {
    let study = match load(Some(path)) {
        Ok(study) => study,
        Err(code) => return code,
    };
    let plan = plan(&study);
    match format {
        Format::Text => print!("{}", plan.to_text_table(&study)),
        Format::Csv => print!("{}", plan.to_csv()),
    }
    ExitCode::SUCCESS
}

fn run(
    path: Option<&Path>,
    out: Option<PathBuf>,
    threads: usize,
    fresh: bool,
    quiet: bool,
    no_report: bool,
) -> ExitCode {
    let study = match load(path) {
        Ok(study) => study,
        Err(code) => return code,
    };
    if path.is_none() {
        eprintln!(
            "no study given: running the built-in quickstart study ({})",
            study::QUICKSTART_ORIGIN
        );
    }
    let plan = plan(&study);
    let options = ExecuteOptions {
        out: out.unwrap_or_else(|| default_out(&study)),
        threads,
        fresh,
        quiet,
    };
    let summary = match execute(&study, &plan, &options) {
        Ok(summary) => summary,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(FAILURE);
        }
    };
    eprintln!(
        "{} jobs: {} ran, {} resumed, {} failed -> {}",
        summary.jobs,
        summary.ran,
        summary.resumed,
        summary.failed,
        summary.out.display()
    );
    if !no_report && write_report(&summary.out).is_err() {
        return ExitCode::from(FAILURE);
    }
    if summary.failed > 0 {
        ExitCode::from(FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

fn report(results: &Path) -> ExitCode {
    match write_report(results) {
        Ok(()) => ExitCode::SUCCESS,
        Err(()) => ExitCode::from(FAILURE),
    }
}

/// Write the report of `results`, saying where it went or why it could not be written.
fn write_report(results: &Path) -> Result<(), ()> {
    match crate::report::write_report(results) {
        Ok(summary) => {
            eprintln!(
                "report: {} figures -> {}",
                summary.figures.len(),
                results.join("report").join("index.html").display()
            );
            Ok(())
        }
        Err(error) => {
            eprintln!("error: report: {error}");
            Err(())
        }
    }
}
