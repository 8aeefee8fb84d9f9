//! The markov-chain family (`model.family = "markov-chain"`): a finite chain's stationary
//! distribution three ways, as the lecture notes build it from the Perron-Frobenius theorem.
//!
//! - **power method**: x_{t+1} = x_t P from the uniform distribution until successive iterates
//!   differ by less than `model.tolerance` in total variation; its distance to the eigen solve
//!   is recorded per iteration next to |lambda_2|^t (the notes: the second eigenvalue sets the
//!   speed).
//! - **eigen solve** (faer): the eigenvector of P^T for the eigenvalue nearest 1, normalised to
//!   sum 1; |lambda_2| is the second-largest eigenvalue modulus.
//! - **simulation**: one run of `sampler.iterations` steps with the job's chain stream, started
//!   from state 0; the total-variation distance of the visit frequencies to the eigen solve at
//!   about 25 log-spaced run lengths (expected to shrink like 1 / sqrt(steps)).
//!
//! The matrix is given inline (`model.transition`, rows in the TOML) or generated from the job's
//! data stream: rows ~ Dirichlet(1), or with `model.lambda2` the matrix
//! P = (1 - lambda2) 1 pi^T + lambda2 I with pi ~ Dirichlet(1), whose eigenvalues are 1 and
//! lambda2 (n - 1 times): |lambda_2| is exactly the value asked for (the notes' inverse
//! eigenvalue exercise, in its simplest solution).

pub(crate) mod keys;
pub(crate) mod schema;

/// The family's word in `model.family`.
pub const NAME: &str = "markov-chain";

use faer::Mat;
use polars::prelude::PolarsResult;
use rand::RngExt;
use rand_distr::{Distribution, Exp1};

use crate::figures::plots::Curves;
use crate::figures::{Context, Figure, FigureKind, ReportColumns, ReportError};
use crate::job::{Finished, JobHeader, NamedTables, RunContext, StudyFamily};
use crate::streams::{Purpose, StreamRng};
use crate::study::Resolver;
use crate::study::keys::*;
use crate::study::{ErrorKind, ParamValue, Settings, StudyError, parse_rows};
use crate::table::Table;
use crate::table::rows_of;
use crate::table::shared::METHOD;
use keys::*;
use schema::{distances, jobs, stationary};

/// The power method gives up after this many iterations.
pub(crate) const MAX_POWER_ITERATIONS: usize = 1_000_000;
/// Rows of an inline matrix must sum to 1 within this.
const ROW_SUM_TOLERANCE: f64 = 1e-9;

/// The family.
pub struct MarkovChain;

/// Where the transition matrix comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    Inline(Vec<Vec<f64>>),
    Random { states: usize },
    Lambda2 { states: usize, lambda2: f64 },
}

/// A markov-chain job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkovSpec {
    pub(crate) transition: Transition,
    pub(crate) tolerance: f64,
    pub(crate) steps: u64,
}

/// A row-stochastic matrix, rows as vectors.
pub(crate) type Matrix = Vec<Vec<f64>>;

/// Dirichlet(1, ..., 1): normalised standard exponentials.
fn dirichlet(n: usize, rng: &mut StreamRng) -> Vec<f64> {
    let draws: Vec<f64> = (0..n).map(|_| Exp1.sample(rng)).collect();
    let total: f64 = draws.iter().sum();
    draws.into_iter().map(|d| d / total).collect()
}

/// The matrix of `transition`, generated ones from `rng`.
pub fn matrix(transition: &Transition, rng: &mut StreamRng) -> Matrix {
    match transition {
        Transition::Inline(rows) => rows.clone(),
        Transition::Random { states } => (0..*states).map(|_| dirichlet(*states, rng)).collect(),
        Transition::Lambda2 { states, lambda2 } => {
            let pi = dirichlet(*states, rng);
            (0..*states)
                .map(|i| {
                    (0..*states)
                        .map(|j| (1.0 - lambda2) * pi[j] + if i == j { *lambda2 } else { 0.0 })
                        .collect()
                })
                .collect()
        }
    }
}

/// Total-variation distance: half the L1 distance.
pub fn total_variation(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// x P.
pub fn step_distribution(x: &[f64], p: &Matrix) -> Vec<f64> {
    let mut next = vec![0.0; x.len()];
    for (xi, row) in x.iter().zip(p) {
        for (n, pij) in next.iter_mut().zip(row) {
            *n += xi * pij;
        }
    }
    next
}

/// The power method's result: its estimate and every iterate's distance to `reference`.
pub struct Power {
    pub stationary: Vec<f64>,
    pub(crate) iterations: usize,
    pub distances: Vec<f64>,
}

/// Power method from the uniform distribution until successive iterates differ by less than
/// `tolerance` in total variation; `reference` (the eigen solve) is what each iterate's distance
/// is measured to.
pub fn power_method(p: &Matrix, tolerance: f64, reference: &[f64]) -> Power {
    let n = p.len();
    let mut x = vec![1.0 / n as f64; n];
    let mut distances = vec![total_variation(&x, reference)];
    let mut iterations = 0;
    while iterations < MAX_POWER_ITERATIONS {
        let next = step_distribution(&x, p);
        iterations += 1;
        let change = total_variation(&next, &x);
        x = next;
        distances.push(total_variation(&x, reference));
        if change < tolerance {
            break;
        }
    }
    Power {
        stationary: x,
        iterations,
        distances,
    }
}

/// The eigen solve: the stationary distribution (eigenvector of P^T for the eigenvalue nearest
/// 1, normalised to sum 1) and |lambda_2|.
pub fn eigen_solve(p: &Matrix) -> Result<(Vec<f64>, f64), String> {
    let n = p.len();
    let transposed = Mat::<f64>::from_fn(n, n, |i, j| p[j][i]);
    let evd = transposed
        .eigen()
        .map_err(|e| format!("eigen decomposition failed: {e:?}"))?;
    let values: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let v = evd.S().column_vector()[k];
            (v.re, v.im)
        })
        .collect();
    let distance_to_one = |&(re, im): &(f64, f64)| ((re - 1.0).powi(2) + im * im).sqrt();
    let unit = (0..n)
        .min_by(|&a, &b| distance_to_one(&values[a]).total_cmp(&distance_to_one(&values[b])))
        .ok_or("an empty matrix")?;
    let lambda2 = (0..n)
        .filter(|&k| k != unit)
        .map(|k| values[k].0.hypot(values[k].1))
        .fold(0.0, f64::max);
    let u = evd.U();
    let (sum_re, sum_im) = (0..n).fold((0.0, 0.0), |(r, i), k| {
        (r + u[(k, unit)].re, i + u[(k, unit)].im)
    });
    let norm = sum_re * sum_re + sum_im * sum_im;
    if norm == 0.0 {
        return Err("the stationary eigenvector sums to zero".into());
    }
    // v / sum(v), real part (the imaginary part is rounding).
    let stationary = (0..n)
        .map(|k| {
            let (re, im) = (u[(k, unit)].re, u[(k, unit)].im);
            (re * sum_re + im * sum_im) / norm
        })
        .collect();
    Ok((stationary, lambda2))
}

/// Run lengths at which the simulation's visit frequencies are compared: about 25 log-spaced
/// values from 10 to `steps`.
pub(crate) fn checkpoints(steps: u64) -> Vec<u64> {
    let mut points: Vec<u64> = (0..=24)
        .map(|k| (10f64 * (steps as f64 / 10.0).max(1.0).powf(k as f64 / 24.0)).round() as u64)
        .filter(|&s| s >= 1 && s <= steps)
        .collect();
    points.push(steps);
    points.dedup();
    points
}

/// Simulates `steps` steps from state 0 and returns the TV distance of the visit frequencies to
/// `reference` at each of `checkpoints`, and the final frequencies.
pub fn simulate(
    p: &Matrix,
    steps: u64,
    checkpoints: &[u64],
    reference: &[f64],
    rng: &mut StreamRng,
) -> (Vec<f64>, Vec<f64>) {
    let cumulative: Vec<Vec<f64>> = p
        .iter()
        .map(|row| {
            row.iter()
                .scan(0.0, |acc, x| {
                    *acc += x;
                    Some(*acc)
                })
                .collect()
        })
        .collect();
    let n = p.len();
    let mut visits = vec![0u64; n];
    let mut state = 0usize;
    let mut distances = Vec::with_capacity(checkpoints.len());
    let mut next_checkpoint = 0;
    for step in 1..=steps {
        let u: f64 = rng.random::<f64>() * cumulative[state][n - 1];
        state = cumulative[state].partition_point(|&c| c <= u).min(n - 1);
        visits[state] += 1;
        if next_checkpoint < checkpoints.len() && checkpoints[next_checkpoint] == step {
            let frequencies: Vec<f64> = visits.iter().map(|&v| v as f64 / step as f64).collect();
            distances.push(total_variation(&frequencies, reference));
            next_checkpoint += 1;
        }
    }
    let frequencies = visits.iter().map(|&v| v as f64 / steps as f64).collect();
    (distances, frequencies)
}

/// What a markov-chain job computed.
pub struct MarkovOutput {
    states: usize,
    eigen: Vec<f64>,
    lambda2: f64,
    power: Power,
    simulated: Vec<f64>,
    checkpoints: Vec<u64>,
    simulation_tv: Vec<f64>,
    sample_seconds: f64,
    /// CPU seconds of the job's thread while it sampled.
    cpu_seconds: f64,
}

impl StudyFamily for MarkovChain {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] =
        &[&schema::stationary::TABLE, &schema::distances::TABLE];
    const REPORT: ReportColumns = ReportColumns::listing(&[
        schema::jobs::LAMBDA2.name(),
        schema::jobs::POWER_ITERATIONS.name(),
        schema::jobs::POWER_EIGEN_MAX_DIFF.name(),
        schema::jobs::SIMULATION_TV.name(),
    ]);
    type Spec = MarkovSpec;
    type Output = MarkovOutput;

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let transition = match settings.value(MODEL_TRANSITION) {
            ParamValue::Text(text) => {
                let rows = parse_rows(&text);
                check_stochastic(&rows).map_err(|problem| {
                    resolver
                        .error_at(
                            settings,
                            &[MODEL_TRANSITION],
                            ErrorKind::OutOfRange,
                            problem,
                        )
                        .allowed("a square matrix of probabilities whose rows sum to 1")
                })?;
                super::common::reject_given(
                    settings,
                    resolver,
                    &[MODEL_STATES, MODEL_LAMBDA2],
                    |key| {
                        format!(
                            "`{}` generates a matrix, but model.transition gives one",
                            key.dotted()
                        )
                    },
                )?;
                Transition::Inline(rows)
            }
            _ => {
                let states = settings.int(MODEL_STATES) as usize;
                match settings.given_float(MODEL_LAMBDA2) {
                    Some(lambda2) => Transition::Lambda2 { states, lambda2 },
                    None => Transition::Random { states },
                }
            }
        };
        Ok(MarkovSpec {
            transition,
            tolerance: settings.float(MODEL_TOLERANCE),
            steps: settings.int(SAMPLER_ITERATIONS) as u64,
        })
    }

    fn label(spec: &Self::Spec) -> String {
        match &spec.transition {
            Transition::Inline(rows) => format!("markov inline n={}", rows.len()),
            Transition::Random { states } => format!("markov random n={states}"),
            Transition::Lambda2 { states, lambda2 } => {
                format!("markov n={states} lambda2={lambda2}")
            }
        }
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.steps
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let p = matrix(&spec.transition, &mut context.data_stream("transition"));
        let (eigen, lambda2) = eigen_solve(&p)?;
        let power = power_method(&p, spec.tolerance, &eigen);
        let started = std::time::Instant::now();
        let cpu = crate::clock::Stopwatch::start();
        let checkpoints = checkpoints(spec.steps);
        let mut rng = context.chain_stream(Purpose::Chain, "chain=0");
        let (simulation_tv, simulated) = simulate(&p, spec.steps, &checkpoints, &eigen, &mut rng);
        context.report(spec.steps);
        Ok(MarkovOutput {
            states: p.len(),
            eigen,
            lambda2,
            power,
            simulated,
            checkpoints,
            simulation_tv,
            sample_seconds: started.elapsed().as_secs_f64(),
            cpu_seconds: cpu.cpu_seconds(),
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, output) = (done.job, done.output);
        let max_diff = output
            .power
            .stationary
            .iter()
            .zip(&output.eigen)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let jobs_row = done
            .jobs_row(&jobs::TABLE, &[])
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(jobs::CPU_SECONDS, output.cpu_seconds)
            .fill(jobs::LAMBDA2, output.lambda2)
            .fill(jobs::POWER_ITERATIONS, output.power.iterations as i64)
            .fill(jobs::POWER_EIGEN_MAX_DIFF, max_diff)
            .fill(jobs::SIMULATION_TV, output.simulation_tv.last().copied())
            .finish()?;
        Ok(vec![
            ("jobs", jobs_row),
            ("stationary", stationary_rows(job, output)?),
            ("distances", distance_rows(job, output)?),
        ])
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        distance_figures(context, notes)
    }
}

/// A square matrix of probabilities whose rows sum to 1, or what is wrong with it.
fn check_stochastic(rows: &[Vec<f64>]) -> Result<(), String> {
    let n = rows.len();
    if n < 2 {
        return Err(format!(
            "model.transition has {n} row(s); a chain needs at least 2 states"
        ));
    }
    for (i, row) in rows.iter().enumerate() {
        if row.len() != n {
            return Err(format!(
                "row {i} of model.transition has {} entries, not {n}",
                row.len()
            ));
        }
        if let Some(j) = row.iter().position(|p| !(0.0..=1.0).contains(p)) {
            return Err(format!(
                "model.transition[{i}][{j}] = {} is not a probability",
                row[j]
            ));
        }
        let sum: f64 = row.iter().sum();
        if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
            return Err(format!("row {i} of model.transition sums to {sum}, not 1"));
        }
    }
    Ok(())
}

fn stationary_rows(
    job: &JobHeader,
    output: &MarkovOutput,
) -> PolarsResult<polars::prelude::DataFrame> {
    let n = output.states;
    let methods = ["eigen", "power", "simulation"];
    let values = [&output.eigen, &output.power.stationary, &output.simulated];
    Ok(rows_of(&stationary::TABLE, job, 3 * n)
        .set(
            METHOD,
            methods
                .iter()
                .flat_map(|m| std::iter::repeat_n(m.to_string(), n))
                .collect::<Vec<_>>(),
        )
        .set(
            stationary::STATE,
            (0..3).flat_map(|_| 0..n as i64).collect::<Vec<_>>(),
        )
        .set(
            stationary::PROBABILITY,
            values
                .iter()
                .flat_map(|v| v.iter().copied())
                .collect::<Vec<_>>(),
        )
        .finish()?)
}

fn distance_rows(
    job: &JobHeader,
    output: &MarkovOutput,
) -> PolarsResult<polars::prelude::DataFrame> {
    let power = &output.power.distances;
    let first = power.first().copied().unwrap_or(0.0);
    let mut method = Vec::new();
    let mut step = Vec::new();
    let mut distance = Vec::new();
    let mut reference = Vec::new();
    for (t, d) in power.iter().enumerate() {
        method.push("power".to_string());
        step.push(t as i64);
        distance.push(*d);
        reference.push(Some(first * output.lambda2.powi(t as i32)));
    }
    let (first_step, first_tv) = (
        output.checkpoints.first().copied().unwrap_or(1) as f64,
        output.simulation_tv.first().copied().unwrap_or(0.0),
    );
    for (s, d) in output.checkpoints.iter().zip(&output.simulation_tv) {
        method.push("simulation".to_string());
        step.push(*s as i64);
        distance.push(*d);
        reference.push(Some(first_tv * (first_step / *s as f64).sqrt()));
    }
    Ok(rows_of(&distances::TABLE, job, method.len())
        .set(METHOD, method)
        .set(distances::STEP, step)
        .set(distances::DISTANCE, distance)
        .set(distances::REFERENCE, reference)
        .finish()?)
}

/// Two figures from distances.parquet: the power method's error against t (log scale) per
/// |lambda_2|, and the simulation's TV against run length (log-log) with a 1/sqrt reference.
fn distance_figures(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = context.read(&distances::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let jobs = context.jobs_table();
    let lambda_of = |id: &str| {
        jobs.rows_of_job(id)
            .first()
            .and_then(|&row| jobs.finite(jobs::LAMBDA2, row))
    };
    let mut figures = Vec::new();
    for (method, file, title, x_title, log_x, caption) in [
        (
            "power",
            "markov-power.png",
            "Power method: distance to the stationary distribution",
            "iteration t",
            false,
            "Total-variation distance of the power method's t-th iterate (from the uniform \
             distribution) to the eigen solve, one curve per job, labelled by |lambda_2|; dashed: \
             the first distance times |lambda_2|^t. The iterates approach the stationary \
             distribution geometrically at the rate of the second eigenvalue, as the notes state.",
        ),
        (
            "simulation",
            "markov-simulation.png",
            "Simulation: visit frequencies against run length",
            "steps",
            true,
            "Total-variation distance between the visit frequencies of one simulated run and the \
             stationary distribution, against the run length (log-log), per job; dashed: the \
             first distance times sqrt(first steps / steps). The frequencies converge like \
             1 / sqrt(steps) (the ergodic theorem with a central limit), more slowly for chains \
             with |lambda_2| near 1.",
        ),
    ] {
        let mut curves = Vec::new();
        let mut references = Vec::new();
        for id in table.job_ids() {
            let rows = table.rows_of_job(&id);
            let points: Vec<(f64, f64, Option<f64>)> = rows
                .iter()
                .filter(|&&r| table.str_at(METHOD, r) == Some(method))
                .filter_map(|&r| {
                    Some((
                        table.finite(distances::STEP, r)?,
                        table.finite(distances::DISTANCE, r)?,
                        table.finite(distances::REFERENCE, r),
                    ))
                })
                .filter(|p| p.1 > 0.0)
                .collect();
            if points.is_empty() {
                continue;
            }
            let label = match lambda_of(&id) {
                Some(l) => format!("|lambda_2| = {l:.3}"),
                None => format!("job {id}"),
            };
            curves.push((label, points.iter().map(|p| (p.0, p.1)).collect()));
            let reference: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| p.2.filter(|r| *r > 1e-17).map(|r| (p.0, r)))
                .collect();
            references.push((
                if references.is_empty() {
                    "theory".to_string()
                } else {
                    String::new()
                },
                reference,
            ));
        }
        references.retain(|(_, r)| !r.is_empty());
        if let Some(first) = references.first_mut() {
            first.0 = "theory (dashed)".to_string();
        }
        let drawn = Curves {
            title: title.into(),
            x_title: x_title.into(),
            y_title: "total-variation distance".into(),
            log_x,
            log_y: true,
            curves,
            references,
        }
        .draw(&context.path(file))?;
        if drawn {
            figures.push(Figure {
                file: file.into(),
                title: title.into(),
                caption: caption.into(),
                kind: FigureKind::Family,
            });
        }
    }
    Ok(figures)
}
