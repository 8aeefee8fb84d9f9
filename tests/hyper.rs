//! Hyperparameters inside the chain (`sampler.hyper`), through the real binary, against the exact
//! posterior of a gaussian model.
//!
//! With a gaussian likelihood the marginal likelihood is closed-form,
//! p(y | l, v) = N(y; 0, K_{l,v} + s^2 I), so the posterior of (log l, log v) is computed here by
//! brute-force quadrature on a 160 x 160 grid over +-6 prior sds, densely (the observed cells of a
//! 5 x 5 grid), and with it
//! the posterior means of l and v and of the centre cell's field, E[u_c | y] = sum_theta
//! p(theta | y) [K (K + s^2 I)^-1 y]_c. Each update (within-gibbs, surrogate-slice,
//! pseudo-marginal) runs with two field kinds (elliptical slice and MALA); each job's posterior
//! means of l, v and u_c must lie within 4.6 Monte Carlo standard errors of the exact ones (MCSE
//! of a hyperparameter: its posterior sd / sqrt(bulk ESS); of the cell: its batch-means MCSE).
//! 18 z-scores: Bonferroni false-alarm rate 18 x 4.2e-6 = 7.6e-5 per run.

mod support;

use polars::prelude::*;

const STUDY: &str = r#"
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

const PRIOR_LOG_L: (f64, f64) = (-1.5, 0.5);
const PRIOR_LOG_V: (f64, f64) = (0.0, 0.5);
const NOISE_SD: f64 = 0.3;
const Z_LIMIT: f64 = 4.6;

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

/// Posterior means of l, v and the field at `centre`, by quadrature, from observations `y` at
/// `points`.
fn exact(points: &[(f64, f64)], y: &[f64], centre: (f64, f64)) -> (f64, f64, f64) {
    let n = points.len();
    let steps = 160;
    let span = |(mu, sd): (f64, f64)| (mu - 6.0 * sd, 12.0 * sd / steps as f64);
    let (a0, da) = span(PRIOR_LOG_L);
    let (b0, db) = span(PRIOR_LOG_V);
    let log_normal = |x: f64, (mu, sd): (f64, f64)| -0.5 * ((x - mu) / sd).powi(2);
    let mut log_weights = Vec::new();
    let mut values = Vec::new();
    for i in 0..steps {
        let a = a0 + (i as f64 + 0.5) * da;
        let l = a.exp();
        let mut correlation = vec![0.0; n * n];
        for p in 0..n {
            for q in 0..n {
                let d2 = (points[p].0 - points[q].0).powi(2) + (points[p].1 - points[q].1).powi(2);
                correlation[p * n + q] = (-d2 / (2.0 * l * l)).exp();
            }
        }
        for j in 0..steps {
            let b = b0 + (j as f64 + 0.5) * db;
            let v = b.exp();
            let mut k = correlation.iter().map(|c| v * c).collect::<Vec<f64>>();
            for p in 0..n {
                k[p * n + p] += NOISE_SD * NOISE_SD;
            }
            let log_det = cholesky(&mut k, n);
            let alpha = solve(&k, n, y);
            let quad: f64 = alpha.iter().zip(y).map(|(a, y)| a * y).sum();
            let log_marginal = -0.5 * quad - 0.5 * log_det;
            // E[u_c | y, theta] = v k(c, points) alpha.
            let field: f64 = (0..n)
                .map(|q| {
                    let d2 = (centre.0 - points[q].0).powi(2) + (centre.1 - points[q].1).powi(2);
                    v * (-d2 / (2.0 * l * l)).exp() * alpha[q]
                })
                .sum();
            log_weights
                .push(log_marginal + log_normal(a, PRIOR_LOG_L) + log_normal(b, PRIOR_LOG_V));
            values.push((l, v, field));
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

#[test]
fn every_update_agrees_with_the_exact_gaussian_posterior() {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(dir.path(), "hyper_exact.toml", STUDY);
    let out = dir.path().join("out");
    support::run_output(&study, &out, 2);
    let jobs = support::table(&out, "jobs");
    let fields = support::table(&out, "fields");
    assert_eq!(jobs.height(), 6);
    let ids = texts(&jobs, "job_id");
    let updates = texts(&jobs, "sampler_hyper");
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
        // Every job sees the same data (common random numbers), so one quadrature serves all.
        let centre_point = (xs[rows[centre]], ys[rows[centre]]);
        let (l, v, u) = *exact_answer.get_or_insert_with(|| exact(&points, &y, centre_point));
        let z = |column: &str, truth: f64| {
            let mean = floats(&jobs, &format!("hyper_{column}_mean"))[row];
            let sd = floats(&jobs, &format!("hyper_{column}_sd"))[row];
            let ess = floats(&jobs, &format!("hyper_{column}_ess_bulk"))[row];
            (mean - truth) / (sd / ess.sqrt())
        };
        let scores = [
            ("length_scale", z("length_scale", l)),
            ("variance", z("variance", v)),
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
}
