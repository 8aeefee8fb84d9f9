//! The command line: `fieldmc check | plan | run | merge | slurm | keys | report | compare | export | bench`. It parses
//! arguments, calls the library, prints results and maps errors to exit codes: 0 success, 1 a
//! failure while running (some jobs failed, results could not be written, a merge found jobs
//! missing or inconsistent), 2 bad input (nothing written), 3 every job finished but some
//! carry warnings and `--deny-warnings` was given.

use std::io::{BufWriter, StdoutLock};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod bench;
mod compare;
mod export;
mod slurm;

use crate::execute::{ExecuteOptions, ExecuteSummary, default_out, execute};
use crate::plan::{self, Shard, Study, StudyListing, plan, shard_of, write_csv, write_text};
use crate::study;

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
        fieldmc slurm studies/coursework/acceptance.toml --shards 8 --submit\n  \
        fieldmc report results/acceptance"
)]
pub(crate) struct Cli {
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
    /// Run a study (the built-in quickstart study when none is given), or one shard of it.
    #[command(after_help = "Examples:\n  fieldmc run\n  \
        fieldmc run studies/quickstart.toml --threads 2 --out /tmp/quick\n  \
        fieldmc run studies/quickstart.toml --force\n  \
        fieldmc run studies/quickstart.toml --shard 0/4 --out /shared/quick   # then: fieldmc merge /shared/quick\n\n\
        A rerun into a folder that holds finished jobs runs only the jobs without a valid result: \
        missing ones, failed ones, and those whose data file changed or that another fieldmc \
        version computed. Exit code 1 when a job failed (after all others are written).")]
    Run {
        /// The study file; omit it to run the built-in quickstart study.
        study: Option<PathBuf>,
        /// Output folder [default: results/<study name>].
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        flags: RunFlags,
    },
    /// Assemble the tables of a results folder whose shards have all finished.
    #[command(after_help = "Example:\n  fieldmc merge results/acceptance\n\n\
        Lists the jobs still missing (by shard) when some shard has not finished, and refuses \
        shards run with different fieldmc versions or different data. Exit code 1 then, or when \
        a job failed (its row says why).")]
    Merge {
        /// The results folder the shards wrote into.
        results: PathBuf,
        /// Skip writing the report after merging.
        #[arg(long)]
        no_report: bool,
        /// Exit with code 3 when every job finished but some carry warnings.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Write (and with --submit, submit) Slurm batch scripts: a job array of shards and a merge.
    #[command(after_help = "Examples:\n  \
        fieldmc slurm studies/coursework/acceptance.toml --shards 8                # write and print the scripts\n  \
        fieldmc slurm studies/coursework/acceptance.toml --shards 8 --parallel 4 --partition short \\\n      \
        --time 01:00:00 --cpus-per-task 4 --submit\n\n\
        Array task I runs `fieldmc run STUDY --shard I/K`; the merge job runs `fieldmc merge` once \
        every task has ended. Running the same command again resubmits: only jobs without a valid \
        result run.")]
    Slurm(slurm::SlurmArgs),
    /// Time one job with the Python peers' settings and print one JSON line (see bench/compare.sh).
    #[command(
        after_help = "Example:\n  fieldmc bench --D 64 --T 10000 --beta 0.2 --sampler pcn --likelihood gaussian"
    )]
    Bench(bench::BenchArgs),
    /// List the study keys: default, allowed values and what each does.
    #[command(
        after_help = "Examples:\n  fieldmc keys\n  fieldmc keys sampler\n  fieldmc keys model.mean"
    )]
    Keys {
        /// Only keys whose dotted name starts with this (a section such as `sampler`, or a key).
        prefix: Option<String>,
    },
    /// Compare two results folders job by job: identical, within Monte Carlo error, or different;
    /// or, with --loo, rank the jobs of one or two folders by PSIS-LOO (model choice).
    #[command(after_help = "Examples:\n  \
        fieldmc compare results/acceptance /shared/acceptance           # laptop vs cluster: bit for bit\n  \
        fieldmc compare results/seed1 results/seed2 --tolerance mcse:4   # two seeds: within MCSE\n  \
        fieldmc compare results/kernels --loo                            # model choice within a sweep\n  \
        fieldmc compare results/matern results/se --loo                  # model choice across two studies\n\n\
        Jobs pair by replicate and study keys (so two seeds pair too); timing columns are never \
        compared. Exit code 0 identical or within tolerance, 1 different, 2 not comparable.\n\n\
        --loo needs `output.log_likelihood = true` and prints ArviZ's az.compare table (ic=\"loo\", \
        scale \"log\", no weights): rank, elpd_loo, p_loo, elpd_diff from the best job, se, dse \
        (the standard error of elpd_diff, sqrt(n var(loo_i(best) - loo_i(job))) over the n paired \
        observations) and warning (a Pareto k above 0.7). The jobs must have seen the same \
        observations: the same cells or sites, in the same order, with the same data. Exit code \
        0 with the table, 2 when the jobs cannot be compared.")]
    Compare(compare::CompareArgs),
    /// Write every finished job as ArviZ's InferenceData (a Zarr store per job).
    #[command(after_help = "Example:\n  \
        fieldmc export results/choice --arviz results/choice/arviz\n\n\
        Then in Python: dt = xarray.open_datatree(\"results/choice/arviz/<job>.zarr\", \
        engine=\"zarr\", consolidated=False); idata = arviz.InferenceData.from_datatree(dt). \
        The posterior is draws.parquet's (output.field_draws); the log_likelihood group needs \
        output.log_likelihood = true. Exit code 1 when a job could not be exported.")]
    Export(export::ExportArgs),
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
pub(super) const FAILURE: u8 = 1;
pub(super) const BAD_INPUT: u8 = 2;
pub(super) const WARNED: u8 = 3;

/// Parse the command line and run it.
pub fn main() -> ExitCode {
    crate::memory::keep_freed_memory();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Check { study }) => check(&study),
        Some(Command::Plan { study, format }) => print_plan(&study, format),
        Some(Command::Run { study, out, flags }) => run(study.as_deref(), out, &flags),
        Some(Command::Merge {
            results,
            no_report,
            deny_warnings,
        }) => merge(&results, no_report, deny_warnings),
        Some(Command::Slurm(args)) => slurm::slurm(&args),
        Some(Command::Keys { prefix }) => keys(prefix.as_deref().unwrap_or("")),
        Some(Command::Report { results }) => report(&results),
        Some(Command::Bench(args)) => bench::bench(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Export(args)) => export::run(&args),
        None => run(None, None, &RunFlags::default()),
    }
}

/// The options of `fieldmc run` besides the study and the folder.
#[derive(Debug, Default, clap::Args)]
struct RunFlags {
    /// Worker threads [default: one per core].
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Recompute every job, even those with a valid earlier result (without --shard: discard
    /// the folder's earlier results first). `--fresh` is the same flag.
    #[arg(long, visible_alias = "fresh")]
    force: bool,
    /// Run only shard I of K (0 <= I < K): a stable share of the jobs, by job key. Shards of
    /// one study may run at once, on several machines, into one shared --out folder; `fieldmc
    /// merge` then writes the tables.
    #[arg(long, value_name = "I/K")]
    shard: Option<Shard>,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
    /// Skip writing the report after the run.
    #[arg(long)]
    no_report: bool,
    /// Exit with code 3 when every job finished but some carry warnings (R-hat, ESS,
    /// acceptance, drift): for scripts and CI that must not accept an untrusted answer.
    #[arg(long)]
    deny_warnings: bool,
}

pub(super) fn load(path: Option<&Path>) -> Result<Study, ExitCode> {
    let loaded = match path {
        Some(path) => plan::load(path),
        None => plan::parse(study::QUICKSTART, Path::new(study::QUICKSTART_ORIGIN)),
    };
    loaded.map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(BAD_INPUT)
    })
}

fn check(path: &Path) -> ExitCode {
    match load(Some(path)) {
        Ok(study) => {
            let jobs = study.job_count();
            println!(
                "{}: ok, study `{}` with {jobs} jobs",
                path.display(),
                study.file.name
            );
            print_cautions(&study);
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
    let listing = StudyListing(&study);
    print_quietly(|out| match format {
        Format::Text => write_text(&listing, &study.file.swept_keys(), out),
        Format::Csv => write_csv(&listing, out),
    })
}

/// Prints what `write` writes to stdout, buffered; a reader that stops early (`fieldmc plan
/// ... | head`) is not an error.
fn print_quietly(
    write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> std::io::Result<()>,
) -> ExitCode {
    use std::io::Write;
    let mut stdout = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            ExitCode::from(FAILURE)
        }
    }
}

fn run(path: Option<&Path>, out: Option<PathBuf>, flags: &RunFlags) -> ExitCode {
    if flags.threads > 0 {
        // Loading and planning resolve sweep points on rayon's global pool: it keeps to the
        // threads asked for too (a Slurm task's `--cpus-per-task`). It is built once per
        // process, so this cannot fail here.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(flags.threads)
            .build_global();
    }
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
    print_cautions(&study);
    let plan = plan(&study);
    let options = ExecuteOptions {
        out: out.unwrap_or_else(|| default_out(&study)),
        threads: flags.threads,
        force: flags.force,
        quiet: flags.quiet,
        shard: flags.shard,
    };
    let summary = match execute(&study, &plan, &options) {
        Ok(summary) => summary,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(FAILURE);
        }
    };
    print_summary(&summary);
    if summary.assembled {
        print_run_notes(&summary.out);
    }
    let warned = summary.assembled && print_warned(&summary.out);
    if summary.assembled && !flags.no_report && write_report(&summary.out).is_err() {
        return ExitCode::from(FAILURE);
    }
    exit_code(summary.failed, warned, flags.deny_warnings)
}

/// What the study's settings warn about before anything runs (the jobs carry it too).
fn print_cautions(study: &Study) {
    for caution in study.points.cautions() {
        eprintln!("warning: {caution}");
    }
}

/// A failed job outranks a warning; a warning is an error only when denied.
fn exit_code(failed: usize, warned: bool, deny_warnings: bool) -> ExitCode {
    if failed > 0 {
        ExitCode::from(FAILURE)
    } else if warned && deny_warnings {
        ExitCode::from(WARNED)
    } else {
        ExitCode::SUCCESS
    }
}

/// How many of the folder's jobs finished with warnings, and the worst few with their
/// warnings; whether there were any.
fn print_warned(results: &Path) -> bool {
    const SHOWN: usize = 5;
    let (total, warned) = match crate::sink::warned_jobs(results) {
        Ok(Some(found)) => found,
        Ok(None) => return false,
        Err(error) => {
            eprintln!("warning: cannot read the jobs' warnings: {error}");
            return false;
        }
    };
    if warned.is_empty() {
        eprintln!("no warnings: every finished job passed the convergence checks");
        return false;
    }
    eprintln!(
        "warning: {} of {total} jobs finished with warnings; their answers may not be trusted \
         (column `warnings` of jobs.parquet, and the report):",
        warned.len()
    );
    for job in warned.iter().take(SHOWN) {
        eprintln!("  {}: {}", job.job_id, job.warnings.join("; "));
    }
    if warned.len() > SHOWN {
        eprintln!("  ... and {} more", warned.len() - SHOWN);
    }
    true
}

/// What the families say about the folder's finished jobs (the latent field: the cells and
/// measurements its jobs held out of the fit).
fn print_run_notes(results: &Path) {
    match crate::sink::read_table(results, crate::families::jobs_table(), None) {
        Ok(Some(jobs)) => {
            for note in crate::families::run_notes(&jobs) {
                eprintln!("note: {note}");
            }
        }
        Ok(None) => {}
        Err(error) => eprintln!("warning: cannot read the jobs table: {error}"),
    }
}

fn print_summary(summary: &ExecuteSummary) {
    for holder in &summary.taken_over {
        eprintln!("note: took over the results folder from {holder}, which is no longer running");
    }
    let stale = summary.stale;
    if stale.total() > 0 {
        let reasons: Vec<String> = [
            (stale.failed, "had failed"),
            (stale.data_changed, "read a data file that has changed"),
            (stale.other_version, "came from another fieldmc version"),
            (stale.other_key, "had another key"),
            (stale.forced, "were forced (--force)"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        eprintln!(
            "recomputed {} jobs whose earlier results could not be reused: {}",
            stale.total(),
            reasons.join(", ")
        );
    }
    let what = match summary.shard {
        Some(shard) => format!("shard {shard}: "),
        None => String::new(),
    };
    eprintln!(
        "{what}{} jobs: {} ran, {} resumed, {} failed -> {}",
        summary.jobs,
        summary.ran,
        summary.resumed,
        summary.failed,
        summary.out.display()
    );
    if summary.shard.is_some() {
        eprintln!(
            "when every shard is done: fieldmc merge {}",
            summary.out.display()
        );
    }
}

fn merge(results: &Path, no_report: bool, deny_warnings: bool) -> ExitCode {
    let outcome = match crate::sink::merge(results) {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(FAILURE);
        }
    };
    for note in &outcome.ignored_tails {
        eprintln!("{note}");
    }
    let total = outcome.plan.len();
    if !outcome.missing.is_empty() {
        eprintln!(
            "error: {} of {total} jobs have no result yet, so the tables were not written: {}",
            outcome.missing.len(),
            describe_missing(&outcome.missing, &outcome.shard_counts)
        );
        eprintln!(
            "rerun the shards named (`fieldmc run STUDY --shard I/K --out {}`, or the same \
             `fieldmc slurm ... --submit` again), then merge again",
            results.display()
        );
        return ExitCode::from(FAILURE);
    }
    drop(outcome.lock);
    let tables: Vec<String> = outcome
        .assembled
        .iter()
        .flat_map(|a| &a.tables)
        .map(|(name, rows)| format!("{name} {rows} rows"))
        .collect();
    eprintln!(
        "merged {total} jobs, {} failed -> {} ({})",
        outcome.failed,
        results.display(),
        tables.join(", ")
    );
    print_run_notes(results);
    let warned = print_warned(results);
    if !no_report && write_report(results).is_err() {
        return ExitCode::from(FAILURE);
    }
    exit_code(outcome.failed, warned, deny_warnings)
}

/// `shard 1/3: 4 jobs, shard 2/3: 1 job (first: a1b2.., ...)`.
fn describe_missing(missing: &[String], shard_counts: &[u32]) -> String {
    let first: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
    let more = if missing.len() > first.len() {
        ", ..."
    } else {
        ""
    };
    let ids = format!("{}{more}", first.join(", "));
    let Some(&count) = shard_counts.last() else {
        return ids;
    };
    let mut per_shard = vec![0usize; count as usize];
    for id in missing {
        per_shard[shard_of(id, count) as usize] += 1;
    }
    let shards: Vec<String> = per_shard
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(index, n)| format!("shard {index}/{count}: {n} jobs"))
        .collect();
    format!("{} (first: {ids})", shards.join(", "))
}

fn keys(prefix: &str) -> ExitCode {
    use std::io::Write;
    let text = crate::families::catalog().text_help(prefix);
    if text.is_empty() {
        eprintln!("error: no study key starts with `{prefix}`; `fieldmc keys` lists them all");
        return ExitCode::from(BAD_INPUT);
    }
    print_quietly(|out| out.write_all(text.as_bytes()))
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
