//! `fieldmc slurm`: the batch scripts that run a study on a Slurm cluster — a job array with one
//! task per shard, and a merge job that runs when the array has ended — written into
//! `<out>/slurm/`, printed, and with `--submit` submitted with `sbatch`.
//!
//! The merge job depends on the array with `afterany`, not `afterok`: a task that ends with exit
//! code 1 because one of its jobs failed (a result like any other: its row says why) must not
//! leave the merge pending forever, and `fieldmc merge` itself refuses, listing the missing jobs
//! by shard, when a task did not finish (killed, out of time, out of memory). Submitting the
//! same command again resubmits every task; each runs only the jobs of its shard that have no
//! valid result yet.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Args;

use super::{BAD_INPUT, FAILURE, load};
use crate::execute::default_out;

#[derive(Debug, Args)]
pub(crate) struct SlurmArgs {
    /// The study file.
    study: PathBuf,
    /// K: shards, one array task each.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    shards: u32,
    /// At most this many tasks run at once (`--array=0-(K-1)%P`) [default: all].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    parallel: Option<u32>,
    /// Slurm partition (`--partition`) [default: the cluster's default].
    #[arg(long)]
    partition: Option<String>,
    /// Time limit per task and for the merge (`--time`, e.g. 02:00:00) [default: the partition's].
    #[arg(long)]
    time: Option<String>,
    /// CPUs per task; each task runs this many worker threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    cpus_per_task: u32,
    /// Results folder, on a file system every node sees [default: results/<study name>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Submit the scripts with sbatch and print the job ids.
    #[arg(long)]
    submit: bool,
}

/// The two scripts of a submission.
struct Scripts {
    array: PathBuf,
    merge: PathBuf,
}

pub(crate) fn slurm(args: &SlurmArgs) -> ExitCode {
    let study = match load(Some(&args.study)) {
        Ok(study) => study,
        Err(code) => return code,
    };
    let out = args.out.clone().unwrap_or_else(|| default_out(&study));
    let scripts = match write_scripts(args, &study.file.name, &out) {
        Ok(scripts) => scripts,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(if message.starts_with("cannot find") {
                BAD_INPUT
            } else {
                FAILURE
            });
        }
    };
    for path in [&scripts.array, &scripts.merge] {
        println!("# {}", path.display());
        println!("{}", std::fs::read_to_string(path).unwrap_or_default());
    }
    if !args.submit {
        println!(
            "# submit with:\n#   array=$(sbatch --parsable {}) && sbatch --dependency=afterany:${{array%%;*}} {}",
            scripts.array.display(),
            scripts.merge.display()
        );
        return ExitCode::SUCCESS;
    }
    match submit(&scripts) {
        Ok((array, merge)) => {
            println!(
                "array job {array}: {} shards of {}",
                args.shards, study.file.name
            );
            println!(
                "merge job {merge}: runs after job {array} ends, writes {}",
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

/// `'text'` for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// An absolute form of `path` (which need not exist yet), without `.` or `..` where avoidable.
fn absolute(path: &Path) -> Result<PathBuf, String> {
    let absolute =
        std::path::absolute(path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
    Ok(absolute.canonicalize().unwrap_or(absolute))
}

fn write_scripts(args: &SlurmArgs, name: &str, out: &Path) -> Result<Scripts, String> {
    let fieldmc = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the fieldmc binary: {e}"))?;
    let study = args
        .study
        .canonicalize()
        .map_err(|e| format!("cannot find {}: {e}", args.study.display()))?;
    std::fs::create_dir_all(out.join("slurm"))
        .map_err(|e| format!("cannot create {}: {e}", out.join("slurm").display()))?;
    let out = absolute(out)?;
    let logs = out.join("slurm");
    let fieldmc = quote(&fieldmc.to_string_lossy());
    let study_arg = quote(&study.to_string_lossy());
    let out_arg = quote(&out.to_string_lossy());
    let k = args.shards;
    let throttle = args.parallel.map_or(String::new(), |p| format!("%{p}"));
    let mut common = format!("#SBATCH --cpus-per-task={}\n", args.cpus_per_task);
    if let Some(partition) = &args.partition {
        common.push_str(&format!("#SBATCH --partition={partition}\n"));
    }
    if let Some(time) = &args.time {
        common.push_str(&format!("#SBATCH --time={time}\n"));
    }
    let array = format!(
        "#!/bin/bash\n\
         # Written by `fieldmc slurm`: task I runs shard I/{k} of {name} ({study}).\n\
         #SBATCH --job-name=fieldmc-{name}\n\
         #SBATCH --array=0-{last}{throttle}\n\
         {common}\
         #SBATCH --output={logs}/shard-%a-%A.out\n\
         set -euo pipefail\n\
         exec {fieldmc} run {study_arg} --out {out_arg} --quiet --no-report \\\n    \
         --shard \"$SLURM_ARRAY_TASK_ID/{k}\" --threads \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"\n",
        study = study.display(),
        last = k - 1,
        logs = logs.display(),
        cpus = args.cpus_per_task,
    );
    let merge = format!(
        "#!/bin/bash\n\
         # Written by `fieldmc slurm`: assembles the tables of {name} once the array has ended\n\
         # (submitted with --dependency=afterany:<array job id>).\n\
         #SBATCH --job-name=fieldmc-{name}-merge\n\
         {common}\
         #SBATCH --output={logs}/merge-%j.out\n\
         set -euo pipefail\n\
         exec {fieldmc} merge {out_arg}\n",
        logs = logs.display(),
    );
    let scripts = Scripts {
        array: logs.join("array.sbatch"),
        merge: logs.join("merge.sbatch"),
    };
    for (path, text) in [(&scripts.array, &array), (&scripts.merge, &merge)] {
        crate::sink::atomic_write(path, text.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(scripts)
}

/// Submits the array, then the merge depending on it; returns both job ids.
fn submit(scripts: &Scripts) -> Result<(String, String), String> {
    let array = sbatch(&[], &scripts.array)?;
    let dependency = format!("--dependency=afterany:{array}");
    let merge = sbatch(&[&dependency], &scripts.merge)?;
    Ok((array, merge))
}

/// `sbatch --parsable ARGS SCRIPT`; returns the job id.
fn sbatch(args: &[&str], script: &Path) -> Result<String, String> {
    let output = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .map_err(|e| {
            format!(
                "cannot run sbatch ({e}): is Slurm installed here? The scripts are in {}",
                script.parent().unwrap_or(script).display()
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "sbatch {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    // --parsable prints `id` or `id;cluster`.
    let id = stdout.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("sbatch printed no job id: {stdout:?}"));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
