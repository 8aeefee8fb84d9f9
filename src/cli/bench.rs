//! `fieldmc bench`: timing runs, as thin wrappers over [`crate::bench`].
//!
//! - `fieldmc bench [--D 64 ...]`: one job with the Python peers' settings (see
//!   `bench/compare.sh`), timed the way the peers time themselves — setup (prior factor, data) plus
//!   chain — printed as one JSON line with the peers' field names. The exact posterior is not
//!   computed: the peers do not time it either.
//! - `fieldmc bench lgcp`: every kind against the BlackJAX NUTS peer on real count grids
//!   ([`crate::bench::lgcp`]).
//! - `fieldmc bench steps`: the cost of one step of each kind against the grid size
//!   ([`crate::bench::steps`]).
//! - `fieldmc bench kriging`: the error of kriging through the grid against exact kriging at a
//!   CSV's sites, against the grid size ([`crate::bench::kriging`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::bench::lgcp::{self, KindResult, LgcpModel, LgcpProblem, PeerResult, PeerSettings};
use crate::families::FamilySpec;
use crate::families::latent_field::FieldJob;
use crate::families::latent_field::job::{JobOptions, run_job};
use crate::plan::plan;
use crate::sampler::SamplerKind;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    command: Option<Box<BenchCommand>>,
    #[command(flatten)]
    job: JobArgs,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// fieldmc's kinds against BlackJAX NUTS on real count grids (log-Gaussian Cox process).
    #[command(
        after_help = "Example:\n  fieldmc bench lgcp --peer-python bench/.venv-lgcp/bin/python \
        --peer-script ../shared/peers/lgcp_blackjax.py"
    )]
    Lgcp(Box<LgcpArgs>),
    /// The CPU cost of one step of each kind against the grid size D.
    #[command(after_help = "Example:\n  fieldmc bench steps --sizes 32,64,128,256")]
    Steps(StepsArgs),
    /// The grid's error against exact kriging at scattered sites, against the grid size D.
    #[command(
        after_help = "Example:\n  fieldmc bench kriging --data data/topo_sites.csv --value height \
        --length-scale 1.5 --variance 3000 --noise-sd 10"
    )]
    Kriging(KrigingArgs),
}

#[derive(Debug, Args)]
struct KrigingArgs {
    /// Sites CSV with columns x, y and the --value column.
    #[arg(long)]
    data: PathBuf,
    #[arg(long, default_value = "value")]
    value: String,
    /// Squared-exponential length scale, in the sites' units.
    #[arg(long)]
    length_scale: f64,
    #[arg(long)]
    variance: f64,
    /// Noise sd of a measurement.
    #[arg(long)]
    noise_sd: f64,
    /// The window x0,x1,y0,y1 the grid tiles [default: the sites' bounding box].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    window: Option<Vec<f64>>,
    /// Grid sides D (D x D cells over the window).
    #[arg(long, value_delimiter = ',', default_values_t = [8usize, 16, 32, 64, 128])]
    sides: Vec<usize>,
    /// Hold out every k-th site (from the first) and predict it.
    #[arg(long, default_value_t = 5)]
    holdout_every: usize,
    /// Also predict at an L x L lattice over the window, edges included.
    #[arg(long, default_value_t = 21)]
    lattice: usize,
    /// Also write the table as CSV (data, side, cells_per_length_scale, fitted, predicted,
    /// max_mean_error_in_sds, rms_mean_error_in_sds, max_sd_relative_error).
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct StepsArgs {
    /// Grid sides D.
    #[arg(long, value_delimiter = ',', default_values_t = [32usize, 64, 128, 256])]
    sizes: Vec<usize>,
    /// Kinds, comma-separated [default: every MCMC kind].
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Timed steps at D = 32 (fewer at larger D: the count falls as 1/N).
    #[arg(long, default_value_t = 20_000)]
    steps: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also write the table as CSV (kind, side, cells, steps, setup_seconds, micros_per_step).
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct JobArgs {
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

#[derive(Debug, Args)]
struct LgcpArgs {
    /// Grids as NAME=VARIANCE; the file is DATA/NAME_gridSIDE.csv.
    #[arg(long = "grid", default_values_t = ["finpines=1.91".to_string(), "lansing=1.0".to_string()])]
    grids: Vec<String>,
    /// The grids' side D (N = D^2 cells).
    #[arg(long, default_value_t = 32)]
    side: usize,
    /// The folder of the grid files.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// fieldmc kinds to run, comma-separated [default: every MCMC kind].
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Kept iterations per chain [default: per kind, see `crate::bench::lgcp::default_plan`].
    #[arg(long)]
    kept: Option<u64>,
    /// Burn-in iterations per chain [default: per kind].
    #[arg(long)]
    burn_in: Option<u64>,
    /// The acceptance rate adaptation aims at [default: the kind's].
    #[arg(long)]
    target_acceptance: Option<f64>,
    /// The starting step size [default: per kind].
    #[arg(long)]
    beta: Option<f64>,
    /// The peer's Python (a virtual environment with lgcp_requirements.txt).
    #[arg(long, default_value = "bench/.venv-lgcp/bin/python")]
    peer_python: PathBuf,
    /// The peer's script.
    #[arg(long, default_value = "../shared/peers/lgcp_blackjax.py")]
    peer_script: PathBuf,
    /// Pin the peer to this core with taskset (-1: do not pin).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    peer_core: i64,
    /// Skip the peer (no ratios, no mean check).
    #[arg(long)]
    no_peer: bool,
    /// Where the held-out cells and the peer's outputs go.
    #[arg(long, default_value = "results/bench_lgcp")]
    out: PathBuf,
    /// Seeds of the chains (fieldmc's and the peer's): each comparison runs once per seed.
    #[arg(long, value_delimiter = ',', default_values_t = [0u64])]
    seeds: Vec<u64>,
    /// Run the peer at these seeds only [default: every seed] (at D = 128 it takes minutes a
    /// seed); a seed without the peer has no ratio and no mean check.
    #[arg(long, value_delimiter = ',')]
    peer_seeds: Option<Vec<u64>>,
    /// The seed that chooses each grid's held-out cells (the same cells for every chain seed).
    #[arg(long, default_value_t = 0)]
    data_seed: u64,
    /// Append one row per run (peer and kinds) to this CSV, written as each run ends.
    #[arg(long)]
    csv: Option<PathBuf>,
}

pub(crate) fn bench(args: &BenchArgs) -> ExitCode {
    match args.command.as_deref() {
        Some(BenchCommand::Lgcp(lgcp)) => bench_lgcp(lgcp),
        Some(BenchCommand::Steps(steps)) => bench_steps(steps),
        Some(BenchCommand::Kriging(kriging)) => bench_kriging(kriging),
        None => bench_job(&args.job),
    }
}

fn bench_job(args: &JobArgs) -> ExitCode {
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
    let study = match crate::plan::parse(&text, Path::new("<bench arguments>")) {
        Ok(study) => study,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let plan = plan(&study);
    let job = &plan.jobs[0];
    let FamilySpec::LatentField(spec) = &job.spec else {
        unreachable!("the bench study is a latent-field study")
    };
    let options = JobOptions {
        exact: false,
        progress: None,
        // One chain after another on this thread: the benchmark counts one core's CPU time.
        chains_in_parallel: false,
    };
    let field_job = FieldJob {
        header: &job.header,
        spec,
    };
    let result = match run_job(field_job, study.file.seed, &options) {
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

/// The Markov chain kinds named, or every one (an approximation has no steps to time; `bench
/// lgcp` runs the Laplace approximation on its own, as the mean check's negative control).
fn parse_kinds(names: &[String]) -> Result<Vec<SamplerKind>, ExitCode> {
    let chains: Vec<SamplerKind> = SamplerKind::ALL
        .iter()
        .copied()
        .filter(|kind| kind.is_markov_chain())
        .collect();
    if names.is_empty() {
        return Ok(chains);
    }
    names
        .iter()
        .map(|name| {
            SamplerKind::from_name(name)
                .filter(|kind| kind.is_markov_chain())
                .ok_or_else(|| {
                    let allowed: Vec<&str> = chains.iter().map(|k| k.name()).collect();
                    eprintln!(
                        "error: --kinds: `{name}` is not a Markov chain kind (one of: {})",
                        allowed.join(", ")
                    );
                    ExitCode::from(2)
                })
        })
        .collect()
}

fn bench_steps(args: &StepsArgs) -> ExitCode {
    let kinds = match parse_kinds(&args.kinds) {
        Ok(kinds) => kinds,
        Err(code) => return code,
    };
    let mut csv = String::from("kind,side,cells,steps,setup_seconds,micros_per_step\n");
    println!("| kind | D | N | setup s | us per step |");
    println!("|---|---|---|---|---|");
    for &side in &args.sizes {
        let problem = crate::bench::steps::StepProblem::new(side, args.seed);
        let steps = (args.steps * 1024 / (side * side)).max(20);
        for &kind in &kinds {
            let cost = crate::bench::steps::step_cost(&problem, kind, steps, args.seed);
            println!(
                "| {kind} | {side} | {} | {:.3} | {:.1} |",
                side * side,
                cost.setup_seconds,
                cost.micros_per_step
            );
            csv += &format!(
                "{kind},{side},{},{},{},{}\n",
                side * side,
                cost.steps,
                cost.setup_seconds,
                cost.micros_per_step
            );
        }
    }
    if let Some(path) = &args.csv
        && let Err(error) = std::fs::write(path, csv)
    {
        eprintln!("error: {}: {error}", path.display());
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn bench_kriging(args: &KrigingArgs) -> ExitCode {
    use crate::bench::kriging::{KrigingSettings, compare, read_measurements};
    use crate::model::sites::bounding_window;
    let data = match read_measurements(&args.data, &args.value) {
        Ok(data) => data,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let window = match args.window.as_deref() {
        Some(&[x0, x1, y0, y1]) => crate::model::grid::Window {
            x: (x0, x1),
            y: (y0, y1),
        },
        Some(other) => {
            eprintln!(
                "error: --window takes x0,x1,y0,y1, got {} numbers",
                other.len()
            );
            return ExitCode::from(2);
        }
        None => bounding_window(&data.positions),
    };
    let settings = KrigingSettings {
        kernel: crate::model::KernelSpec::squared_exponential(args.length_scale, args.variance),
        noise_sd: args.noise_sd,
        window,
        holdout_every: args.holdout_every,
        lattice: args.lattice,
    };
    let extent = (window.x.1 - window.x.0).max(window.y.1 - window.y.0);
    println!(
        "recommended: D = {} ({} cells per length scale)",
        crate::model::sites::recommended_side(extent, args.length_scale),
        crate::model::sites::CELLS_PER_LENGTH_SCALE
    );
    let rows = match compare(&data, &settings, &args.sides) {
        Ok(rows) => rows,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let name = args.data.display();
    let mut csv = String::from(
        "data,side,cells_per_length_scale,fitted,predicted,max_mean_error_in_sds,\
         rms_mean_error_in_sds,max_sd_relative_error\n",
    );
    println!("| D | cells per length scale | max mean error (sds) | rms | max sd error |");
    println!("|---|---|---|---|---|");
    for row in &rows {
        let e = row.error;
        println!(
            "| {} | {:.2} | {:.4} | {:.4} | {:.4} |",
            row.side,
            row.cells_per_length_scale,
            e.max_mean_error_in_sds,
            e.rms_mean_error_in_sds,
            e.max_sd_relative_error
        );
        csv += &format!(
            "{name},{},{},{},{},{},{},{}\n",
            row.side,
            row.cells_per_length_scale,
            row.fitted,
            row.predicted,
            e.max_mean_error_in_sds,
            e.rms_mean_error_in_sds,
            e.max_sd_relative_error
        );
    }
    if let Some(path) = &args.csv
        && let Err(error) = std::fs::write(path, csv)
    {
        eprintln!("error: {}: {error}", path.display());
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn bench_lgcp(args: &LgcpArgs) -> ExitCode {
    let kinds = match parse_kinds(&args.kinds) {
        Ok(kinds) => kinds,
        Err(code) => return code,
    };
    let mut csv = match args.csv.as_deref().map(lgcp::CsvLog::open).transpose() {
        Ok(csv) => csv,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for spec in &args.grids {
        let Some((name, variance)) = spec.split_once('=').and_then(|(n, v)| {
            let variance: f64 = v.parse().ok()?;
            Some((n.to_string(), variance))
        }) else {
            eprintln!("error: --grid takes NAME=VARIANCE, got `{spec}`");
            return ExitCode::from(2);
        };
        let model = LgcpModel {
            length_scale: 0.1,
            variance,
            holdout: 0.25,
        };
        let path = args.data.join(format!("{name}_grid{}.csv", args.side));
        let problem = match LgcpProblem::load(&path, &name, model, args.data_seed) {
            Ok(problem) => problem,
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::from(2);
            }
        };
        for &seed in &args.seeds {
            match compare_on(&problem, &kinds, args, seed, csv.as_mut()) {
                Ok(differs) => failed |= differs,
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::from(1);
                }
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One seed on one grid: the peer, the Laplace control and every kind; the table printed and
/// each run's row logged as it ends. True when a sampling kind failed the mean check.
fn compare_on(
    problem: &LgcpProblem,
    kinds: &[SamplerKind],
    args: &LgcpArgs,
    seed: u64,
    mut csv: Option<&mut lgcp::CsvLog>,
) -> Result<bool, lgcp::BenchError> {
    let name = &problem.name;
    let side = problem.grid().nx();
    let mut log = |run: &lgcp::RunRow| match csv.as_deref_mut() {
        Some(csv) => csv.append(run),
        None => Ok(()),
    };
    let peer_skipped = args
        .peer_seeds
        .as_ref()
        .is_some_and(|seeds| !seeds.contains(&seed));
    let peer = if args.no_peer || peer_skipped {
        None
    } else {
        let settings = PeerSettings {
            python: args.peer_python.clone(),
            script: args.peer_script.clone(),
            core: usize::try_from(args.peer_core).ok(),
            seed,
            workdir: args.out.join(format!("D{side}_seed{seed}")),
        };
        eprintln!("{name} (D = {side}, seed {seed}): running the peer ...");
        let peer = lgcp::run_peer(problem, &settings)?;
        log(&lgcp::RunRow::of_peer(problem, seed, &peer))?;
        Some(peer)
    };
    let control = lgcp::run_laplace(problem);
    log(&lgcp::RunRow::of_kind(
        problem,
        seed,
        None,
        &control,
        peer.as_ref(),
    ))?;
    let mut results = vec![control];
    for &kind in kinds {
        let default = lgcp::default_plan(kind).settings;
        let kept = args.kept.unwrap_or(default.iterations - default.burn_in);
        let mut plan = lgcp::KindPlan::new(
            kind,
            args.beta.unwrap_or(default.beta),
            args.burn_in.unwrap_or(default.burn_in),
            kept,
        );
        plan.settings.target_acceptance = args.target_acceptance.or(default.target_acceptance);
        eprintln!("{name} (D = {side}, seed {seed}): running {kind} ...");
        let result = lgcp::run_plan(problem, &plan, seed);
        log(&lgcp::RunRow::of_kind(
            problem,
            seed,
            Some(&plan),
            &result,
            peer.as_ref(),
        ))?;
        results.push(result);
    }
    Ok(print_table(problem, seed, peer.as_ref(), &results))
}

/// Print one grid's table; true when a sampling kind failed the mean check.
fn print_table(
    problem: &LgcpProblem,
    seed: u64,
    peer: Option<&PeerResult>,
    results: &[KindResult],
) -> bool {
    println!(
        "\n{} (D = {}, seed {seed}, l = {}, variance = {}, {} observed / {} held out)",
        problem.name,
        problem.grid().nx(),
        problem.model.length_scale,
        problem.model.variance,
        problem.data.observed.len(),
        problem.data.held_out.len()
    );
    println!(
        "| kind | CPU s | min-cell bulk ESS | ESS / CPU s | x peer | max R-hat | acceptance | max |z| vs peer | cells > 4 MCSE | means |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    if let Some(peer) = peer {
        println!(
            "| BlackJAX NUTS (peer) | {:.2} | {:.0} | {:.0} | 1 | {:.4} | | | | |",
            peer.seconds, peer.min_ess, peer.ess_per_second, peer.max_rhat
        );
    }
    let mut failed = false;
    for r in results {
        let (ess, _) = r.cells.min_ess();
        let rate = r.ess_per_second();
        let ratio = peer.map(|p| format!("{:.2}", rate / p.ess_per_second));
        let check = peer.map(|p| lgcp::agreement(&r.cells, p));
        let sampling = r.kind != "laplace";
        if let Some(check) = check
            && sampling
            && !check.passes()
        {
            failed = true;
        }
        println!(
            "| {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.kind,
            r.seconds,
            if ess.is_finite() && sampling {
                format!("{ess:.0}")
            } else {
                "-".into()
            },
            if sampling {
                format!("{rate:.0}")
            } else {
                "-".into()
            },
            if sampling {
                ratio.unwrap_or_else(|| "-".into())
            } else {
                "-".into()
            },
            if sampling {
                format!("{:.4}", r.cells.max_rhat())
            } else {
                "-".into()
            },
            if sampling {
                format!("{:.3}", r.acceptance_rate)
            } else {
                "-".into()
            },
            check.map_or("-".into(), |c| format!("{:.1}", c.max_z)),
            check.map_or("-".into(), |c| c.beyond_four.to_string()),
            check.map_or("-".into(), |c| {
                if c.passes() {
                    "agree".into()
                } else {
                    format!("DIFFER (> {:.2})", c.threshold)
                }
            }),
        );
        if !r.notes.is_empty() {
            eprintln!("  {}: {}", r.kind, r.notes);
        }
    }
    failed
}
