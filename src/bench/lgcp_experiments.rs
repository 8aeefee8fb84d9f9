//! Tuning experiments on the real grids, run by hand (`#[ignore]`d: minutes of CPU), on grids
//! the benchmark does not score (bench/lgcp.sh scores finpines, lansing and bei):
//! laplace_hmc's trajectory (bench/laplace_hmc_tuning.sh writes
//! bench/results/laplace_hmc_tuning.{csv,md} from its rows) and nuts's integrator and
//! mass-matrix window (bench/nuts_integrator.sh).

use std::path::Path;

use super::lgcp::{KindPlan, KindResult, LgcpModel, LgcpProblem, run_sampler};
use crate::sampler::SamplerKind;

/// An experiment's list setting: the environment variable `name` (comma-separated), or
/// `default`.
fn env_list(name: &str, default: &str) -> Vec<f64> {
    std::env::var(name)
        .unwrap_or(default.into())
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect()
}

/// An experiment's problems: `GRIDS=name=variance,...` (default `default`) at `SIDE` (default
/// 32), a quarter of the cells held out by data seed 0. Tune on grids the scoring does not use
/// (bench/lgcp.sh scores finpines, lansing and bei).
fn env_problems(default: &str) -> Vec<LgcpProblem> {
    let side = env_list("SIDE", "32")[0] as usize;
    std::env::var("GRIDS")
        .unwrap_or(default.into())
        .split(',')
        .map(|grid| {
            let (name, variance) = grid.split_once('=').unwrap();
            let path =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/{name}_grid{side}.csv"));
            let model = LgcpModel {
                length_scale: 0.1,
                variance: variance.parse().unwrap(),
                holdout: 0.25,
            };
            LgcpProblem::load(&path, name, model, 0).unwrap()
        })
        .collect()
}

/// The worst cell's columns every experiment row ends with: bulk, tail and folded ESS, the
/// largest R-hat, bulk ESS per CPU second, and the three ESS per draw (of `draws` kept draws).
fn ess_columns(r: &KindResult, draws: f64) -> String {
    let (bulk, tail, folded) = (
        r.cells.min_ess().0,
        r.cells.min_ess_tail(),
        r.cells.min_ess_folded(),
    );
    format!(
        "{bulk:.1},{tail:.1},{folded:.1},{:.5},{:.1},{:.4},{:.4},{:.4}",
        r.cells.max_rhat(),
        r.ess_per_second(),
        bulk / draws,
        tail / draws,
        folded / draws,
    )
}

/// The columns of [`experiment_laplace_hmc`]'s rows (after the `EXP ` prefix it prints them
/// with, which bench/laplace_hmc_tuning.sh keeps).
const LAPLACE_HMC_COLUMNS: &str = "grid,side,stages,angle_degrees,jitter,target_acceptance,\
    burn_in,seed,step,acceptance,gradients_per_iteration,cpu_seconds,min_ess_bulk,min_ess_tail,\
    min_ess_folded,max_rhat,ess_per_cpu_second,bulk_per_draw,tail_per_draw,folded_per_draw,rank";

/// laplace_hmc's trajectory on the real grids (not run by default: minutes of CPU), each
/// setting a list in the environment: STAGES (1: Strang, 2: two-stage), ANGLES (radians),
/// JITTERS, TARGETS (acceptance), BURN_IN, KEPT, SEEDS, SIDE, GRIDS; and
/// one value each: FIXED_STEP (a step angle kept without adaptation; 0, the default, adapts),
/// THRESHOLD (the rank's eigenvalue threshold, default 0.5), DENSE (1: V dense, version 2's
/// Laplace Gaussian, rather than in the prior's leading block).
/// Prints a header and one `EXP ` row per run (bench/laplace_hmc_tuning.sh).
#[test]
#[ignore]
fn experiment_laplace_hmc() {
    use crate::sampler::gpcn::{LaplaceGaussians, Rank};
    use crate::sampler::laplace_hmc::{LaplaceHmc, TRAJECTORY_ANGLE};
    let list = env_list;
    let stages = list("STAGES", "2");
    let angles = list("ANGLES", &TRAJECTORY_ANGLE.to_string());
    let jitters = list("JITTERS", "0");
    let targets = list("TARGETS", "0.9");
    let kept = list("KEPT", "1000")[0] as u64;
    let burn_ins = list("BURN_IN", "150");
    let seeds = list("SEEDS", "0");
    let side = list("SIDE", "32")[0] as usize;
    let fixed_step = list("FIXED_STEP", "0")[0];
    let threshold = list("THRESHOLD", "0.5")[0];
    let dense = list("DENSE", "0")[0] > 0.0;
    // Every combination of the lists, the last varying fastest.
    let configs: Vec<[f64; 5]> = [&stages, &angles, &jitters, &targets, &burn_ins]
        .iter()
        .fold(vec![Vec::new()], |done: Vec<Vec<f64>>, list| {
            done.iter()
                .flat_map(|prefix| {
                    list.iter()
                        .map(move |&x| [prefix.as_slice(), &[x]].concat())
                })
                .collect()
        })
        .into_iter()
        .map(|c| [c[0], c[1], c[2], c[3], c[4]])
        .collect();
    // A line of its own: the test harness has printed the test's name without a newline.
    println!("\nEXP {LAPLACE_HMC_COLUMNS}");
    for problem in env_problems("japanesepines=1.0,redwood=1.0") {
        let name = problem.name.as_str();
        for &[stage, angle, jitter, target, burn_in] in &configs {
            for &seed in &seeds {
                let burn_in = burn_in as u64;
                let mut plan = KindPlan::new(SamplerKind::LaplaceHmc, 1.5, burn_in, kept);
                plan.settings.target_acceptance = Some(target);
                let start = if fixed_step > 0.0 { fixed_step } else { 1.5 };
                if fixed_step > 0.0 {
                    plan.settings.adapt = Some(false);
                    plan.settings.beta = fixed_step;
                }
                let mut sampler = LaplaceHmc::new(start, Rank::Auto { threshold });
                if dense {
                    sampler.laplace = LaplaceGaussians::new(Rank::Auto { threshold });
                }
                sampler.angle = angle;
                sampler.quarter_turn = angle;
                sampler.jitter = jitter;
                sampler.two_stage = stage > 1.5;
                let r = run_sampler(&problem, &sampler, &plan, seed as u64);
                println!(
                    "EXP {name},{side},{stage},{:.1},{jitter},{target},{burn_in},{seed},\
                     {:.5},{:.4},{:.3},{:.4},{},{}",
                    angle.to_degrees(),
                    r.step_size.unwrap_or(f64::NAN),
                    r.acceptance_rate,
                    r.leapfrog_steps.unwrap_or(f64::NAN),
                    r.seconds,
                    ess_columns(&r, (4 * kept) as f64),
                    r.notes.trim_start_matches("rank "),
                );
            }
        }
    }
}

/// The columns of [`experiment_nuts`]'s rows (after the `EXP ` prefix it prints them with, which
/// bench/nuts_integrator.sh keeps).
const NUTS_COLUMNS: &str = "grid,side,integrator,window,seed,step,gradients_per_iteration,\
    cpu_seconds,min_ess_bulk,min_ess_tail,min_ess_folded,max_rhat,ess_per_cpu_second,\
    bulk_per_draw,tail_per_draw,folded_per_draw";

/// nuts's integrator and mass-matrix window on the real grids (not run by default: minutes of
/// CPU), the peer's budget: 1,000 tuning + 1,000 kept draws, 4 chains. Lists in the
/// environment: NUTS_INTEGRATORS (`leapfrog`, `exact-normal`: [`Nuts::split`]'s), NUTS_WINDOWS,
/// SEEDS, SIDE, GRIDS. Prints a header and one `EXP ` row per run (bench/nuts_integrator.sh).
///
/// [`Nuts::split`]: crate::sampler::nuts::Nuts::split
#[test]
#[ignore]
fn experiment_nuts() {
    use crate::sampler::nuts::Nuts;
    use nuts_rs::KineticEnergyKind;
    let list = |name: &str, default: &str| -> Vec<u64> {
        env_list(name, default)
            .into_iter()
            .map(|x| x as u64)
            .collect()
    };
    let (windows, seeds) = (list("NUTS_WINDOWS", "80"), list("SEEDS", "0"));
    let side = list("SIDE", "32")[0] as usize;
    let integrators: Vec<(String, KineticEnergyKind)> = std::env::var("NUTS_INTEGRATORS")
        .unwrap_or("leapfrog,exact-normal".into())
        .split(',')
        .map(|name| match name {
            "leapfrog" => (name.to_string(), KineticEnergyKind::Euclidean),
            "exact-normal" => (name.to_string(), KineticEnergyKind::ExactNormal),
            other => panic!("NUTS_INTEGRATORS: {other} is not leapfrog or exact-normal"),
        })
        .collect();
    // A line of its own: the test harness has printed the test's name without a newline.
    println!("\nEXP {NUTS_COLUMNS}");
    for problem in env_problems("japanesepines=1.0,redwood=1.0") {
        let name = problem.name.as_str();
        for (integrator, kinetic) in &integrators {
            for (&window, &seed) in windows
                .iter()
                .flat_map(|w| seeds.iter().map(move |s| (w, s)))
            {
                let plan = KindPlan::new(SamplerKind::Nuts, 0.5, 1_000, 1_000);
                let sampler = Nuts::with_mass_matrix_window(1_000, Some(window))
                    .with_kinetic_energy(*kinetic);
                let r = run_sampler(&problem, &sampler, &plan, seed);
                println!(
                    "EXP {name},{side},{integrator},{window},{seed},{:.5},{:.3},{:.4},{}",
                    r.step_size.unwrap_or(f64::NAN),
                    r.leapfrog_steps.unwrap_or(f64::NAN),
                    r.seconds,
                    ess_columns(&r, 4_000.0),
                );
            }
        }
    }
}
