//! Hyperparameters inside the chain (`sampler.hyper`), through the real binary, against the exact
//! posterior of a gaussian model.
//!
//! With a gaussian likelihood the marginal likelihood is closed-form,
//! p(y | theta) = N(y; 0, K_theta + s^2 I), so the posterior of two log-normal hyperparameters
//! is computed here by brute-force quadrature on a 160 x 160 grid over +-6 prior sds, densely
//! (the observed cells of a 5 x 5 grid), and with it their posterior means and that of the
//! centre cell's field, E[u_c | y] = sum_theta p(theta | y) [K (K + s^2 I)^-1 y]_c. Every job's
//! posterior means of the two hyperparameters and of u_c must lie within 4.75 Monte Carlo
//! standard errors of the exact ones (MCSE of a hyperparameter: its posterior sd / sqrt(bulk
//! ESS); of the cell: its batch-means MCSE). The four tests make 18 + 9 + 18 + 3 = 48 z-scores,
//! each beyond 4.75 with probability 2.0e-6: Bonferroni false-alarm rate 9.8e-5 per run of this
//! file.
//!
//! The Matern kernel's joint chain runs on one torus, which embeds the kernel up to a largest
//! length scale: its prior is truncated there, and so is the quadrature (the library's own
//! [`CirculantRoot`] says where).

mod support;

use fieldmc::model::grid::Grid;
use fieldmc::model::prior::circulant_root::CirculantRoot;
use fieldmc::model::spec::KernelKind;
use polars::prelude::*;

/// Length scale and variance, by each update with two field kinds.
const ISOTROPIC: &str = r#"
[study]
name = "hyper_exact"
seed = 11

[model]
grid = 5
likelihood = "gaussian"
length_scale = 0.3
length_scale_prior = "log-normal(-1.5, 0.5)"
variance_prior = "log-normal(0.0, 0.5)"

[data]
noise_sd = 0.3
length_scale = 0.2
subsample = 2

[sampler]
iterations = 30000
burn_in = 5000
thin = 5
chains = 4

[sweep]
"sampler.hyper" = ["within-gibbs", "surrogate-slice", "pseudo-marginal"]
"sampler.kind" = ["elliptical", "mala"]
"#;

/// The length scales along x and y of an anisotropic kernel (variance fixed), by each update.
const ANISOTROPIC: &str = r#"
[study]
name = "hyper_exact_ard"
seed = 12

[model]
grid = 5
likelihood = "gaussian"
length_scale = 0.3
length_scale_prior = "log-normal(-1.5, 0.5)"
length_scale_y_prior = "log-normal(-1.0, 0.5)"

[data]
noise_sd = 0.3
length_scale = 0.2
subsample = 2

[sampler]
kind = "elliptical"
iterations = 30000
burn_in = 5000
thin = 5
chains = 4

[sweep]
"sampler.hyper" = ["within-gibbs", "surrogate-slice", "pseudo-marginal"]
"#;

/// The joint chains (`sampler.hyper = "joint"` and `"joint-spectral"`: NUTS on the
/// hyperparameters and the field together), on each of the two problems above; `{priors}` is
/// replaced by the study's priors.
const JOINT: &str = r#"
[study]
name = "{name}"
seed = 13

[model]
grid = 5
likelihood = "gaussian"
length_scale = 0.3
{priors}

[data]
noise_sd = 0.3
length_scale = 0.2
subsample = 2

[sampler]
kind = "nuts"
iterations = 6000
burn_in = 1000
chains = 4

[sweep.paired.chain]
"sampler.hyper" = ["joint", "joint", "joint-spectral"]
"sampler.hyper_preconditioner" = ["none", "laplace", "none"]
"#;

/// The joint chain with a circulant kernel (Matern 3/2): the length scale and the variance.
const MATERN_JOINT: &str = r#"
[study]
name = "joint_exact_matern"
seed = 14

[model]
grid = 5
kernel = "matern32"
likelihood = "gaussian"
length_scale = 0.3
length_scale_prior = "log-normal(-1.5, 0.5)"
variance_prior = "log-normal(0.0, 0.5)"

[data]
noise_sd = 0.3
length_scale = 0.2
subsample = 2

[sampler]
kind = "nuts"
hyper = "joint"
iterations = 6000
burn_in = 1000
chains = 4
"#;

const NOISE_SD: f64 = 0.3;
const Z_LIMIT: f64 = 4.75;

/// The kernel at the log hyperparameters (a, b): (length scale along x, along y, variance).
type Kernel = fn(f64, f64) -> (f64, f64, f64);

/// A covariance at an offset (dx, dy) for (length scale along x, along y, variance).
type Covariance = fn((f64, f64), (f64, f64, f64)) -> f64;

/// The two inferred hyperparameters of a test: their names (as in the jobs table's
/// `hyper_<name>_*` columns), log-normal priors (mu, sigma), the kernel they give, its
/// covariance at an offset, and where the first's prior is truncated (log scale; infinite when
/// it is not).
struct Inferred {
    names: [&'static str; 2],
    priors: [(f64, f64); 2],
    kernel: Kernel,
    covariance: Covariance,
    first_below: f64,
}

impl Inferred {
    fn squared_exponential(
        names: [&'static str; 2],
        priors: [(f64, f64); 2],
        kernel: Kernel,
    ) -> Self {
        Self {
            names,
            priors,
            kernel,
            covariance,
            first_below: f64::INFINITY,
        }
    }
}

fn floats(frame: &DataFrame, name: &str) -> Vec<f64> {
    let column = frame.column(name).unwrap().f64().unwrap();
    column.iter().map(|v| v.unwrap_or(f64::NAN)).collect()
}

fn texts(frame: &DataFrame, name: &str) -> Vec<String> {
    let column = frame.column(name).unwrap().str().unwrap();
    column.iter().map(|s| s.unwrap_or("").to_string()).collect()
}

/// In-place lower Cholesky of a dense symmetric matrix (row-major n x n); log det returned.
fn cholesky(a: &mut [f64], n: usize) -> f64 {
    let mut log_det = 0.0;
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        log_det += 2.0 * d.ln();
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    log_det
}

/// Solve L L^T x = b with the factor from [`cholesky`].
fn solve(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut y = b.to_vec();
    for i in 0..n {
        for k in 0..i {
            y[i] -= l[i * n + k] * y[k];
        }
        y[i] /= l[i * n + i];
    }
    for i in (0..n).rev() {
        for k in i + 1..n {
            y[i] -= l[k * n + i] * y[k];
        }
        y[i] /= l[i * n + i];
    }
    y
}

/// The squared-exponential covariance at offset `d` for (l_x, l_y, v).
fn covariance(d: (f64, f64), (lx, ly, v): (f64, f64, f64)) -> f64 {
    v * (-0.5 * (d.0 * d.0 / (lx * lx) + d.1 * d.1 / (ly * ly))).exp()
}

/// The Matern 3/2 covariance at offset `d` for (l, l, v), written out (Rasmussen & Williams
/// eq. 4.17).
fn matern32(d: (f64, f64), (l, _, v): (f64, f64, f64)) -> f64 {
    let a = 3f64.sqrt() * (d.0 * d.0 + d.1 * d.1).sqrt() / l;
    v * (1.0 + a) * (-a).exp()
}

/// Posterior means of exp(a), exp(b) and the field at `centre`, by quadrature, from
/// observations `y` at `points`.
fn exact(
    points: &[(f64, f64)],
    y: &[f64],
    centre: (f64, f64),
    inferred: &Inferred,
) -> (f64, f64, f64) {
    let n = points.len();
    let steps = 160;
    let span = |(mu, sd): (f64, f64)| (mu - 6.0 * sd, 12.0 * sd / steps as f64);
    let (a0, da) = span(inferred.priors[0]);
    let (b0, db) = span(inferred.priors[1]);
    let log_normal = |x: f64, (mu, sd): (f64, f64)| -0.5 * ((x - mu) / sd).powi(2);
    let delta = |p: (f64, f64), q: (f64, f64)| (p.0 - q.0, p.1 - q.1);
    let mut log_weights = Vec::new();
    let mut values = Vec::new();
    for i in 0..steps {
        let a = a0 + (i as f64 + 0.5) * da;
        if a > inferred.first_below {
            break;
        }
        for j in 0..steps {
            let b = b0 + (j as f64 + 0.5) * db;
            let theta = (inferred.kernel)(a, b);
            let mut gram = vec![0.0; n * n];
            for p in 0..n {
                for q in 0..n {
                    gram[p * n + q] = (inferred.covariance)(delta(points[p], points[q]), theta);
                }
                gram[p * n + p] += NOISE_SD * NOISE_SD;
            }
            let log_det = cholesky(&mut gram, n);
            let alpha = solve(&gram, n, y);
            let quad: f64 = alpha.iter().zip(y).map(|(a, y)| a * y).sum();
            // E[u_c | y, theta] = k(c, points) alpha.
            let field: f64 = (0..n)
                .map(|q| (inferred.covariance)(delta(centre, points[q]), theta) * alpha[q])
                .sum();
            let prior = log_normal(a, inferred.priors[0]) + log_normal(b, inferred.priors[1]);
            log_weights.push(-0.5 * quad - 0.5 * log_det + prior);
            values.push((a.exp(), b.exp(), field));
        }
    }
    let top = log_weights
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = log_weights.iter().map(|w| (w - top).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        weights
            .iter()
            .zip(&values)
            .map(|(w, x)| w * f(x))
            .sum::<f64>()
            / total
    };
    (mean(&|x| x.0), mean(&|x| x.1), mean(&|x| x.2))
}

/// Runs `study` and checks every job's posterior means against the quadrature (the z-scores are
/// printed, one line each); returns the jobs table.
fn check_against_quadrature(
    name: &str,
    study: &str,
    jobs_expected: usize,
    inferred: &Inferred,
) -> DataFrame {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(dir.path(), &format!("{name}.toml"), study);
    let out = dir.path().join("out");
    support::run_output(&study, &out, 2);
    let jobs = support::table(&out, "jobs");
    let fields = support::table(&out, "fields");
    assert_eq!(jobs.height(), jobs_expected);
    let ids = texts(&jobs, "job_id");
    // The joint chain runs with and without its preconditioner: the label says which.
    let preconditioners = texts(&jobs, "sampler_hyper_preconditioner");
    let updates: Vec<String> = texts(&jobs, "sampler_hyper")
        .into_iter()
        .zip(&preconditioners)
        .map(|(update, preconditioner)| match update.as_str() {
            "joint" => format!("joint (preconditioner {preconditioner})"),
            _ => update,
        })
        .collect();
    let kinds = texts(&jobs, "sampler_kind");
    let field_ids = texts(&fields, "job_id");
    let (xs, ys) = (floats(&fields, "x"), floats(&fields, "y"));
    let observations = floats(&fields, "observation");
    let (post_mean, post_mcse) = (
        floats(&fields, "post_mean"),
        floats(&fields, "post_mean_mcse"),
    );
    let (is, js) = (
        fields.column("i").unwrap().i64().unwrap(),
        fields.column("j").unwrap().i64().unwrap(),
    );
    let mut exact_answer = None;
    let mut report = Vec::new();
    for (row, id) in ids.iter().enumerate() {
        let rows: Vec<usize> = (0..field_ids.len())
            .filter(|&r| &field_ids[r] == id)
            .collect();
        assert_eq!(rows.len(), 25, "{id}");
        let observed: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| observations[r].is_finite())
            .collect();
        assert!(
            observed.len() >= 10,
            "{id}: {} observed cells",
            observed.len()
        );
        let points: Vec<(f64, f64)> = observed.iter().map(|&r| (xs[r], ys[r])).collect();
        let y: Vec<f64> = observed.iter().map(|&r| observations[r]).collect();
        let centre = rows
            .iter()
            .position(|&r| is.get(r) == Some(2) && js.get(r) == Some(2))
            .unwrap();
        let centre_point = (xs[rows[centre]], ys[rows[centre]]);
        // Every job sees the same data (common random numbers), so one quadrature serves all.
        let (first, second, u) =
            *exact_answer.get_or_insert_with(|| exact(&points, &y, centre_point, inferred));
        let z = |column: &str, truth: f64| {
            let mean = floats(&jobs, &format!("hyper_{column}_mean"))[row];
            let sd = floats(&jobs, &format!("hyper_{column}_sd"))[row];
            let ess = floats(&jobs, &format!("hyper_{column}_ess_bulk"))[row];
            (mean - truth) / (sd / ess.sqrt())
        };
        let scores = [
            (inferred.names[0], z(inferred.names[0], first)),
            (inferred.names[1], z(inferred.names[1], second)),
            (
                "centre cell",
                (post_mean[rows[centre]] - u) / post_mcse[rows[centre]],
            ),
        ];
        for (what, score) in scores {
            report.push(format!(
                "{} + {}: {what} z = {score:.2}",
                updates[row], kinds[row]
            ));
            assert!(
                score.abs() < Z_LIMIT,
                "{} with {}: {what} is {score:.2} MCSE from the exact posterior mean\n{}",
                updates[row],
                kinds[row],
                report.join("\n")
            );
        }
    }
    eprintln!("{}", report.join("\n"));
    jobs
}

/// 3 updates x 2 field kinds x 3 z-scores.
#[test]
fn every_update_agrees_with_the_exact_gaussian_posterior() {
    let inferred = Inferred::squared_exponential(
        ["length_scale", "variance"],
        [(-1.5, 0.5), (0.0, 0.5)],
        |a, b| (a.exp(), a.exp(), b.exp()),
    );
    check_against_quadrature("hyper_exact", ISOTROPIC, 6, &inferred);
}

/// An anisotropic kernel: the length scales along x and y inferred apart (3 updates x 3
/// z-scores).
#[test]
fn every_update_infers_a_length_scale_per_axis() {
    let inferred = Inferred::squared_exponential(
        ["length_scale", "length_scale_y"],
        [(-1.5, 0.5), (-1.0, 0.5)],
        |a, b| (a.exp(), b.exp(), 1.0),
    );
    check_against_quadrature("hyper_exact_ard", ANISOTROPIC, 3, &inferred);
}

/// Both joint chains (`joint` with and without its Laplace preconditioner) on both problems:
/// 3 x 2 x 3 z-scores.
#[test]
fn the_joint_chain_agrees_with_the_exact_gaussian_posterior() {
    let isotropic = Inferred::squared_exponential(
        ["length_scale", "variance"],
        [(-1.5, 0.5), (0.0, 0.5)],
        |a, b| (a.exp(), a.exp(), b.exp()),
    );
    let study = JOINT.replace("{name}", "joint_exact").replace(
        "{priors}",
        "length_scale_prior = \"log-normal(-1.5, 0.5)\"\nvariance_prior = \"log-normal(0.0, 0.5)\"",
    );
    check_against_quadrature("joint_exact", &study, 3, &isotropic);
    let anisotropic = Inferred::squared_exponential(
        ["length_scale", "length_scale_y"],
        [(-1.5, 0.5), (-1.0, 0.5)],
        |a, b| (a.exp(), b.exp(), 1.0),
    );
    let study = JOINT.replace("{name}", "joint_exact_ard").replace(
        "{priors}",
        "length_scale_prior = \"log-normal(-1.5, 0.5)\"\nlength_scale_y_prior = \"log-normal(-1.0, 0.5)\"",
    );
    check_against_quadrature("joint_exact_ard", &study, 3, &anisotropic);
}

/// The joint chain on a circulant kernel (Matern 3/2 on its chain torus): 3 z-scores against the
/// quadrature, both truncated where the torus stops embedding the kernel.
#[test]
fn the_circulant_joint_chain_agrees_with_the_exact_gaussian_posterior() {
    let priors: [(f64, f64); 2] = [(-1.5, 0.5), (0.0, 0.5)];
    // The length the chain's torus is sized for: the prior's 99th percentile (as the library
    // chooses it, above the start 0.3).
    let reach = (priors[0].0 + 2.326 * priors[0].1).exp();
    let root = CirculantRoot::for_chain(Grid::new(5), KernelKind::Matern32, reach).unwrap();
    let inferred = Inferred {
        names: ["length_scale", "variance"],
        priors,
        kernel: |a, b| (a.exp(), a.exp(), b.exp()),
        covariance: matern32,
        first_below: root.largest_length_scale().ln(),
    };
    let jobs = check_against_quadrature("joint_exact_matern", MATERN_JOINT, 1, &inferred);
    // The jobs table reports the chain's torus, not the start prior's.
    let column = |name: &str| jobs.column(name).unwrap().i64().unwrap().get(0).unwrap() as usize;
    let (px, py) = root.torus();
    assert_eq!((column("torus_x"), column("torus_y")), (px, py));
    assert_eq!(column("latent_dim"), px * py);
}
