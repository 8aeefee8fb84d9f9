//! Covariates with inferred coefficients (`data.covariates`): every Markov kind against the exact
//! gaussian posterior of the coefficients and the field, the Laplace kind's coefficient
//! marginals against the same closed form, the located errors of bad covariates, and the binary
//! end to end on the shipped bei point pattern with its elevation and slope rasters.
//!
//! The exact coefficient posterior is computed here independently of fieldmc's fixed-effect
//! prior: with the field integrated out, y = X_G beta + f_G + e, f_G ~ N(0, C_GG) (the field's
//! own Kronecker prior, no covariates), so y | beta ~ N(X_G beta, Sigma), Sigma = C_GG + s^2 I,
//! and beta | y has precision X_G^T Sigma^-1 X_G + I / s_beta^2 and mean P^-1 X_G^T Sigma^-1 y.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use fieldmc::diagnostics;
use fieldmc::model::covariates::Covariates;
use fieldmc::model::data::{DataStreams, Dataset, Simulation};
use fieldmc::model::exact::gaussian_posterior;
use fieldmc::model::prior::WithCovariates;
use fieldmc::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Prior, Target,
};
use fieldmc::sampler::{ChainRng, RunOutput, RunRequest, SamplerKind, run_kind};
use fieldmc::streams::{Purpose, stream};
use support::{floats, table, text};

const SEED: u64 = 11;
const D: usize = 8;
const NOISE: f64 = 0.5;
const COEFFICIENT_SD: f64 = 1.0;

/// Two smooth covariates on the D x D unit grid: x, and a bump in y (standardised by fieldmc).
fn covariates(grid: Grid) -> Arc<Covariates> {
    let raw = vec![
        (
            "x".to_string(),
            (0..grid.cells()).map(|c| grid.position(c).0).collect(),
        ),
        (
            "bump".to_string(),
            (0..grid.cells())
                .map(|c| (-(grid.position(c).1 - 0.3f64).powi(2) / 0.1).exp())
                .collect(),
        ),
    ];
    let design =
        Covariates::new(raw, grid.cells(), true, COEFFICIENT_SD, PathBuf::from("-")).unwrap();
    Arc::new(design)
}

fn field_prior() -> KroneckerPrior {
    KroneckerPrior::new(Grid::new(D), KernelSpec::squared_exponential(0.3, 1.0)).unwrap()
}

/// Gaussian data drawn from the prior with covariates (the truth's coefficients drawn from
/// theirs), half the cells observed.
fn simulate(prior: &dyn Prior) -> Dataset {
    let key = "covariates";
    let mut streams = DataStreams {
        truth: stream(SEED, Purpose::Truth, key),
        observations: stream(SEED, Purpose::Observations, key),
        noise: stream(SEED, Purpose::Noise, key),
        counts: stream(SEED, Purpose::Counts, key),
    };
    let simulation = Simulation {
        likelihood: LikelihoodKind::Gaussian,
        subsample: 2,
        noise_sd: NOISE,
        offset: 0.0,
        trials: 1,
        mean: 0.0,
    };
    Dataset::simulate(prior, simulation, &mut streams).unwrap()
}

/// The exact posterior (mean, sd) of each coefficient (see the module's doc).
fn exact_coefficients(
    field: &KroneckerPrior,
    design: &Covariates,
    data: &Dataset,
) -> Vec<(f64, f64)> {
    let cells = &data.observed.cells;
    let (m, p) = (cells.len(), design.count());
    let sigma = Mat::from_fn(m, m, |a, b| {
        field.covariance(cells[a], cells[b]) + if a == b { NOISE * NOISE } else { 0.0 }
    });
    let llt = sigma.llt(Side::Lower).unwrap();
    let x = Mat::from_fn(m, p, |a, k| design.columns[k][cells[a]]);
    let y = Mat::from_fn(m, 1, |a, _| data.observed.values[a]);
    let sigma_x = llt.solve(&x);
    let sigma_y = llt.solve(&y);
    let precision = Mat::from_fn(p, p, |k, l| {
        let xx: f64 = (0..m).map(|a| x[(a, k)] * sigma_x[(a, l)]).sum();
        xx + if k == l {
            1.0 / (COEFFICIENT_SD * COEFFICIENT_SD)
        } else {
            0.0
        }
    });
    let rhs = Mat::from_fn(p, 1, |k, _| {
        (0..m).map(|a| x[(a, k)] * sigma_y[(a, 0)]).sum()
    });
    let posterior = precision.llt(Side::Lower).unwrap();
    let mean = posterior.solve(&rhs);
    let identity = Mat::from_fn(p, p, |k, l| if k == l { 1.0 } else { 0.0 });
    let covariance = posterior.solve(&identity);
    (0..p)
        .map(|k| (mean[(k, 0)], covariance[(k, k)].sqrt()))
        .collect()
}

fn run(
    prior: &dyn Prior,
    data: &Dataset,
    kind: SamplerKind,
    beta: f64,
    iterations: u64,
) -> RunOutput {
    let likelihood = Likelihood::new(
        LikelihoodKind::Gaussian,
        data.observed.values.clone(),
        NOISE,
        0.0,
    );
    let spec = fieldmc::sampler::SamplerSettings {
        thin: 10,
        ..support::four_chains(kind, beta, iterations)
    }
    .check()
    .unwrap();
    let target = Target {
        prior,
        likelihood: &likelihood,
        observed: Observed::Cells(&data.observed.cells),
        mean: 0.0,
    };
    let request = RunRequest::new(target, &spec);
    let rngs = (0..spec.chains())
        .map(|c| ChainRng::keyed(SEED, &format!("covariates;{kind};chain={c}")))
        .collect();
    run_kind(&spec, &request, rngs)
}

/// The threshold on |estimate - exact| / MCSE. Per kind: 2 coefficients x (mean, sd) with
/// ESS-based standard errors (sd / sqrt(ESS) for a mean, sd / sqrt(2 ESS) for an sd, gaussian
/// posteriors), and 64 cells x (mean, sd) with batch-means standard errors over 4 x 20 batches
/// (t with 79 degrees of freedom): 132 z-scores per kind, 1,188 for the nine Markov kinds. A
/// two-sided level of 1e-4 / 1,188 per z-score is t_79 = 5.91
/// (scipy.stats.t.isf(1e-4 / 1188 / 2, 79)), above the normal's: by Bonferroni a false alarm in
/// at most one run in 10,000.
const LIMIT: f64 = 5.91;

#[test]
fn every_kind_infers_the_coefficients_and_the_field_of_the_exact_gaussian_posterior() {
    let field = field_prior();
    let design = covariates(field.grid());
    let prior = WithCovariates::new(Box::new(field.clone()), design.clone());
    let data = simulate(&prior);
    let exact = exact_coefficients(&field, &design, &data);
    let exact_field = gaussian_posterior(&prior, 0.0, &data.observed, NOISE).unwrap();
    let mut report = Vec::new();
    let mut worst: f64 = 0.0;
    for (kind, beta, iterations) in [
        (SamplerKind::Grw, 0.2, 400_000),
        (SamplerKind::Pcn, 0.35, 200_000),
        (SamplerKind::Elliptical, 0.0, 40_000),
        (SamplerKind::Pcnl, 0.3, 60_000),
        (SamplerKind::Mala, 0.1, 60_000),
        (SamplerKind::Nuts, 0.2, 8_000),
        (SamplerKind::Gpcn, 0.5, 40_000),
        (SamplerKind::Mgrad, 0.5, 60_000),
        (SamplerKind::LaplaceHmc, 0.5, 8_000),
    ] {
        let out = run(&prior, &data, kind, beta, iterations);
        for (k, &(mean, sd)) in exact.iter().enumerate() {
            let chains: Vec<Vec<f64>> = out
                .chains
                .iter()
                .map(|c| c.coefficients.series(k, 2))
                .collect();
            let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let pooled = chains.concat();
            let n = pooled.len() as f64;
            let m = pooled.iter().sum::<f64>() / n;
            let s = (pooled.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n).sqrt();
            let ess = diagnostics::summarize(&views).ess_bulk.unwrap();
            let z_mean = (m - mean).abs() / (s / ess.sqrt());
            let z_sd = (s - sd).abs() / (s / (2.0 * ess).sqrt());
            report.push(format!(
                "{kind} {}: mean {m:.4} (exact {mean:.4}, z {z_mean:.2}), sd {s:.4} (exact \
                 {sd:.4}, z {z_sd:.2}), ESS {ess:.0}",
                design.names[k]
            ));
            worst = worst.max(z_mean).max(z_sd);
        }
        let mcse = out.post_mean_mcse.as_ref().unwrap();
        let mcse_sd = out.post_sd_mcse.as_ref().unwrap();
        let cell_z = (0..out.post_mean.len())
            .map(|c| {
                let z_mean = (out.post_mean[c] - exact_field.mean[c]).abs() / mcse[c];
                let z_sd = (out.post_sd[c] - exact_field.sd[c]).abs() / mcse_sd[c];
                z_mean.max(z_sd)
            })
            .fold(0.0, f64::max);
        report.push(format!("{kind} cells: largest z {cell_z:.2}"));
        worst = worst.max(cell_z);
    }
    eprintln!("{}", report.join("\n"));
    assert!(worst < LIMIT, "{}", report.join("\n"));
    // The check has power: the coefficients are determined well away from their prior.
    assert!(
        exact.iter().any(|(m, s)| m.abs() > 2.0 * s),
        "the data barely inform the coefficients: {exact:?}"
    );
}

#[test]
fn the_laplace_kind_gives_the_exact_coefficient_posterior() {
    let field = field_prior();
    let design = covariates(field.grid());
    let prior = WithCovariates::new(Box::new(field.clone()), design.clone());
    let data = simulate(&prior);
    let exact = exact_coefficients(&field, &design, &data);
    let out = run(&prior, &data, SamplerKind::Laplace, 0.2, 10);
    assert_eq!(out.coefficient_marginals.len(), 2);
    for (&(mean, sd), &(m, s)) in out.coefficient_marginals.iter().zip(&exact) {
        assert!(
            (mean - m).abs() < 1e-6 && (sd - s).abs() < 1e-6,
            "{mean} {sd} vs {m} {s}"
        );
    }
}

fn write_file(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A 4 x 4 covariates grid with columns i, j, a (varies), c (constant) and, on cell (2, 1),
/// `bad` instead of a number for column b.
fn covariates_file(dir: &Path, name: &str, side: usize, bad: &str) -> PathBuf {
    let mut csv = String::from("i,j,a,b,c\n");
    for j in 0..side {
        for i in 0..side {
            let b = if (i, j) == (2, 1) {
                bad.to_string()
            } else {
                format!("{}", i * j)
            };
            csv.push_str(&format!("{i},{j},{},{b},7\n", i + 2 * j));
        }
    }
    write_file(dir, name, &csv)
}

/// `fieldmc check` on a 4 x 4 points study with `data` lines; its stderr and success.
fn check(dir: &Path, data: &str) -> (bool, String) {
    write_file(dir, "events.csv", "x,y\n0.1,0.2\n0.5,0.5\n0.9,0.7\n");
    let study = write_file(
        dir,
        "study.toml",
        &format!(
            "[model]\ngrid = 4\nwindow = [[0, 1], [0, 1]]\nlikelihood = \"poisson\"\n\
             [data]\nsource = \"points\"\npath = \"events.csv\"\n{data}\
             [sampler]\nkind = \"pcn\"\niterations = 10\n"
        ),
    );
    let output = support::fieldmc()
        .arg("check")
        .arg(&study)
        .output()
        .unwrap();
    (output.status.success(), text(&output.stderr))
}

#[test]
fn bad_covariates_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    covariates_file(d, "good.csv", 4, "1");
    covariates_file(d, "nan.csv", 4, "NaN");
    covariates_file(d, "small.csv", 3, "1");
    let cases = [
        (
            "covariates = [\"a\", \"elevation\"]\ncovariates_path = \"good.csv\"\n",
            vec!["study.toml:9:", "good.csv:1", "no column `elevation`"],
        ),
        (
            "covariates = [\"c\"]\ncovariates_path = \"good.csv\"\n",
            vec![
                "study.toml:8:",
                "good.csv",
                "covariate `c` takes the single value 7",
            ],
        ),
        (
            "covariates = [\"a\", \"b\"]\ncovariates_path = \"nan.csv\"\n",
            vec!["nan.csv:8", "b = `NaN` is not a finite number"],
        ),
        (
            "covariates = [\"a\"]\ncovariates_path = \"small.csv\"\n",
            vec!["small.csv", "cell"],
        ),
        (
            "covariates = [\"a\"]\n",
            vec!["data.covariates needs data.covariates_path for points data"],
        ),
    ];
    for (data, expected) in cases {
        let (ok, stderr) = check(d, data);
        assert!(!ok, "{data}: accepted\n{stderr}");
        for wanted in expected {
            assert!(
                stderr.contains(wanted),
                "{data}: no `{wanted}` in\n{stderr}"
            );
        }
    }
    let (ok, stderr) = check(d, "covariates = \"a,b\"\ncovariates_path = \"good.csv\"\n");
    assert!(ok, "{stderr}");
}

/// The shipped study end to end (studies/lgcp/covariates.toml: the bei trees with elevation and
/// slope, fieldmc's default sampler): no warning, the coefficient columns, the coefficients table
/// and the risk-map columns read back.
#[test]
fn the_shipped_covariates_study_converges_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let study = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/lgcp/covariates.toml");
    let out = dir.path().join("out");
    support::run_without_warnings(&study, &out, 1);
    let jobs = table(&out, "jobs");
    assert!(floats(&jobs, "cell_rhat_max")[0].unwrap() <= 1.01);
    for name in ["elev", "grad"] {
        let rhat = floats(&jobs, &format!("coef_{name}_rhat"))[0].unwrap();
        let ess = floats(&jobs, &format!("coef_{name}_ess_bulk"))[0].unwrap();
        let q05 = floats(&jobs, &format!("coef_{name}_q05"))[0].unwrap();
        let q95 = floats(&jobs, &format!("coef_{name}_q95"))[0].unwrap();
        let raw = floats(&jobs, &format!("coef_{name}_raw_mean"))[0].unwrap();
        assert!(
            rhat <= 1.01 && ess >= 400.0,
            "{name}: R-hat {rhat}, ESS {ess}"
        );
        // More trees on higher and steeper ground (Moller & Waagepetersen 2007 find both).
        assert!(
            q05 > 0.0 && q95 > q05 && raw > 0.0,
            "{name}: [{q05}, {q95}], raw {raw}"
        );
    }
    let coefficients = table(&out, "coefficients");
    assert_eq!(coefficients.height(), 2 * 4 * 1000);
    let fields = table(&out, "fields");
    for column in [
        "exceedance_1.5",
        "exceedance_2.0",
        "intensity_mean",
        "intensity_q05",
    ] {
        let values = floats(&fields, column);
        assert_eq!(values.len(), 32 * 32);
        assert!(
            values.iter().all(|v| v.is_some_and(f64::is_finite)),
            "{column}"
        );
    }
    let (p15, p20) = (
        floats(&fields, "exceedance_1.5"),
        floats(&fields, "exceedance_2.0"),
    );
    assert!(p15.iter().all(|v| (0.0..=1.0).contains(&v.unwrap())));
    assert!(p15.iter().zip(&p20).all(|(a, b)| a.unwrap() >= b.unwrap()));
    // The intensity per square metre averages the trees' density, 3604 / 500,000.
    let intensity = floats(&fields, "intensity_mean");
    let mean = intensity.iter().map(|v| v.unwrap()).sum::<f64>() / intensity.len() as f64;
    assert!((mean / (3604.0 / 500_000.0) - 1.0).abs() < 0.1, "{mean}");
}
