//! `fieldmc bench`: one job with the peers' settings (see `bench/compare.sh`), timed the way the
//! peers time themselves — setup (prior factor, data) plus chain — printed as one JSON line with
//! the peers' field names. The exact posterior is not computed: the peers do not time it either.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use crate::execute::job::{JobOptions, run_job};
use crate::plan::plan;
use crate::study;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Grid side D (N = D^2).
    #[arg(long = "D", default_value_t = 64)]
    d: usize,
    /// Iterations per chain.
    #[arg(long = "T", default_value_t = 10_000)]
    t: u64,
    #[arg(long, default_value_t = 0.2)]
    beta: f64,
    /// Length scale (model and truth).
    #[arg(long = "l", default_value_t = 0.3)]
    l: f64,
    /// Subsampling factor: M = N / f observed cells.
    #[arg(long = "f", default_value_t = 4)]
    f: usize,
    #[arg(long, default_value = "gaussian")]
    likelihood: String,
    #[arg(long, default_value = "pcn")]
    sampler: String,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Chains in the job (batched through one prior product per step).
    #[arg(long, default_value_t = 1)]
    chains: usize,
}

pub fn bench(args: &BenchArgs) -> ExitCode {
    let text = format!(
        "[study]\nname = \"bench\"\nseed = {seed}\n\
         [model]\ngrid = {d}\nlength_scale = {l}\nlikelihood = \"{likelihood}\"\n\
         [data]\nsubsample = {f}\n\
         [sampler]\nkind = \"{sampler}\"\nbeta = {beta}\niterations = {t}\nthin = {thin}\nchains = {chains}\n",
        seed = args.seed,
        d = args.d,
        l = args.l,
        likelihood = args.likelihood,
        f = args.f,
        sampler = args.sampler,
        beta = args.beta,
        t = args.t,
        thin = (args.t / 1000).max(1),
        chains = args.chains,
    );
    let study = match study::parse(&text, Path::new("<bench arguments>")) {
        Ok(study) => study,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let plan = plan(&study);
    let job = &plan.jobs[0];
    let options = JobOptions {
        exact: false,
        progress: None,
    };
    let result = match run_job(job, study.seed, &options) {
        Ok(result) => result,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(1);
        }
    };
    let chain_iterations = (args.t * args.chains as u64) as f64;
    let line = serde_json::json!({
        "impl": "fieldmc",
        "D": args.d,
        "N": args.d * args.d,
        "M": result.dataset.observed.len(),
        "T": args.t,
        "chains": args.chains,
        "sampler": args.sampler,
        "likelihood": args.likelihood,
        "beta": args.beta,
        "l": args.l,
        "f": args.f,
        "seed": args.seed,
        "acceptance_rate": result.run.acceptance_rate,
        "mae": result.scores.mae,
        "setup_seconds": result.setup_seconds,
        "sample_seconds": result.run.sample_seconds,
        "iters_per_second": args.t as f64 / result.run.sample_seconds,
        "chain_iters_per_second": chain_iterations / result.run.sample_seconds,
        "jitter": result.jitter,
    });
    println!("{line}");
    ExitCode::SUCCESS
}
