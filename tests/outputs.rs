//! What a run writes about convergence, through the real binary: per-cell R-hat, ESS and MCSE
//! in fields.parquet, their extremes in jobs.parquet, the kept field draws in draws.parquet
//! (from which the per-cell diagnostics can be recomputed exactly), warnings for a run that
//! does not work, and the PSIS-LOO and WAIC of `output.log_likelihood` (recomputed from
//! draws.parquet and fields.parquet).

mod support;

use std::path::Path;

use polars::prelude::*;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/outputs.toml")
}

fn floats(frame: &DataFrame, name: &str) -> Vec<Option<f64>> {
    frame.column(name).unwrap().f64().unwrap().iter().collect()
}

fn ints(frame: &DataFrame, name: &str) -> Vec<i64> {
    frame
        .column(name)
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect()
}

fn texts(frame: &DataFrame, name: &str) -> Vec<String> {
    let column = frame.column(name).unwrap().str().unwrap();
    column.iter().map(|s| s.unwrap().to_string()).collect()
}

#[test]
fn diagnostics_draws_and_warnings_are_written_and_consistent() {
    let out = tempfile::tempdir().unwrap();
    support::run_ok(&fixture(), out.path(), 2);
    let jobs = support::read_table(out.path(), "jobs").unwrap();
    let fields = support::read_table(out.path(), "fields").unwrap();
    let draws = support::read_table(out.path(), "draws").unwrap();
    assert_eq!(jobs.height(), 2);
    let (field_job, field_cell) = (texts(&fields, "job_id"), ints(&fields, "cell"));
    let (field_rhat, field_ess) = (floats(&fields, "rhat"), floats(&fields, "ess_bulk"));
    let draw_job = texts(&draws, "job_id");
    let (draw_chain, draw_cell, draw_index) = (
        ints(&draws, "chain"),
        ints(&draws, "cell"),
        ints(&draws, "draw"),
    );
    let draw_value = floats(&draws, "value");
    let kinds = texts(&jobs, "sampler_kind");
    let warnings = texts(&jobs, "warnings");
    for (row, id) in texts(&jobs, "job_id").iter().enumerate() {
        let mut rhat = vec![0.0; 36];
        let mut ess = vec![0.0; 36];
        for k in (0..field_job.len()).filter(|&k| &field_job[k] == id) {
            rhat[field_cell[k] as usize] = field_rhat[k].expect("every cell has an R-hat");
            ess[field_cell[k] as usize] = field_ess[k].expect("every cell has a bulk ESS");
        }
        let max_rhat = rhat.iter().copied().fold(f64::MIN, f64::max);
        let min_ess = ess.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(floats(&jobs, "cell_rhat_max")[row], Some(max_rhat));
        assert_eq!(floats(&jobs, "cell_ess_bulk_min")[row], Some(min_ess));

        // Every stored draw was kept (1,000 per chain), so the diagnostics recompute exactly.
        let rows: Vec<usize> = (0..draw_job.len())
            .filter(|&k| &draw_job[k] == id)
            .collect();
        assert_eq!(rows.len(), 3 * 1_000 * 36);
        for cell in [0, 17, 35] {
            let mut series = vec![vec![0.0; 1_000]; 3];
            for &k in rows.iter().filter(|&&k| draw_cell[k] == cell) {
                series[draw_chain[k] as usize][draw_index[k] as usize] = draw_value[k].unwrap();
            }
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            let summary = fieldmc::diagnostics::summarize(&views);
            assert_eq!(summary.rhat, Some(rhat[cell as usize]), "{id} cell {cell}");
            assert_eq!(
                summary.ess_bulk,
                Some(ess[cell as usize]),
                "{id} cell {cell}"
            );
        }

        match kinds[row].as_str() {
            // Adapted MALA mixes well here: no warning.
            "mala" => assert_eq!(warnings[row], "", "{id}"),
            // pCN with beta = 1 proposes independent prior draws: nearly all are rejected.
            "pcn" => assert!(
                warnings[row].contains("acceptance"),
                "{id}: {}",
                warnings[row]
            ),
            other => panic!("unexpected kind {other}"),
        }
    }
}

/// The jobs' ESS and R-hat of the log-likelihood come from every kept state: thinning the
/// traces tenfold leaves them where they were. laplace_hmc on a gaussian posterior makes nearly
/// independent draws, so 4 chains of 1,000 kept states give a bulk ESS near 4,000 whatever
/// `sampler.thin` is; computed from the thinned traces (as before), thin = 10 could not give
/// more than the 400 traced states. The two jobs run on their own streams, so their estimates
/// agree within Monte Carlo error (a few per cent here), not exactly: within a factor 1.5.
#[test]
fn the_jobs_ess_does_not_depend_on_the_traces_thinning() {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(
        dir.path(),
        "thin.toml",
        "[study]\nname = \"thin\"\nseed = 5\n\
         [model]\ngrid = 8\nlikelihood = \"gaussian\"\n\
         [sampler]\nkind = \"laplace_hmc\"\n\
         [sweep]\n\"sampler.thin\" = [1, 10]\n",
    );
    let out = dir.path().join("thin");
    support::run_ok(&study, &out, 2);
    let jobs = support::read_table(&out, "jobs").unwrap();
    let thin = ints(&jobs, "sampler_thin");
    let ess = floats(&jobs, "ess_bulk");
    let rhat = floats(&jobs, "rhat");
    let by_thin = |t: i64| ess[thin.iter().position(|&x| x == t).unwrap()].unwrap();
    let (every, tenth) = (by_thin(1), by_thin(10));
    assert!(every > 2_000.0, "thin 1: ess_bulk {every}");
    assert!(
        (tenth / every).ln().abs() < 1.5f64.ln(),
        "thin 10 gives ess_bulk {tenth}, thin 1 gives {every}"
    );
    assert!(rhat.iter().all(|r| r.is_some_and(|r| r < 1.01)), "{rhat:?}");
    let traces = support::read_table(&out, "traces").unwrap();
    assert_eq!(
        traces.height(),
        4 * 1_000 + 4 * 100,
        "every kept state at thin 1, a tenth at 10"
    );
}

/// The model-choice study: three likelihoods, each sampled (mala) and approximated (laplace), on
/// every cell of a 6 x 6 grid; 400 stored draws per chain, all of them in draws.parquet.
const LOO_STUDY: &str = "[study]\nname = \"loo\"\nseed = 3\n\
     [model]\ngrid = 6\nlength_scale = 0.3\n\
     [data]\nsubsample = 1\nnoise_sd = 0.5\n\
     [sampler]\niterations = 2000\nburn_in = 800\nchains = 3\n\
     [output]\nlog_likelihood = true\ncell_draws = 400\nfield_draws = 400\n\
     [sweep]\n\"model.likelihood\" = [\"gaussian\", \"poisson\", \"binomial\"]\n\
     \"sampler.kind\" = [\"mala\", \"laplace\"]\n";

/// log p(y | u) written out in full for the test's likelihoods: the normal density with sd 0.5,
/// Poisson with y! as a product, binomial with C(n, k) as a product (offset 0 throughout).
fn full_log_density(likelihood: &str, y: f64, trials: f64, u: f64) -> f64 {
    let log_factorial = |k: f64| (1..=k as u64).map(|j| (j as f64).ln()).sum::<f64>();
    match likelihood {
        "gaussian" => {
            let z = (y - u) / 0.5;
            -0.5 * z * z - 0.5f64.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
        }
        "poisson" => y * u - u.exp() - log_factorial(y),
        "binomial" => {
            let p = 1.0 / (1.0 + (-u).exp());
            log_factorial(trials) - log_factorial(y) - log_factorial(trials - y)
                + y * p.ln()
                + (trials - y) * (1.0 - p).ln()
        }
        other => panic!("unexpected likelihood {other}"),
    }
}

/// `output.log_likelihood`: every chain job reports finite, consistent PSIS-LOO and WAIC that a
/// recomputation from the tables gives again (the pointwise log-likelihood of every observed
/// cell at every draw of draws.parquet, reff from every cell's draws, through the crate's
/// whole-matrix `diagnostics::loo`); the laplace jobs leave the columns null.
#[test]
fn loo_and_waic_are_reported_and_recompute_from_the_draws() {
    use fieldmc::diagnostics::loo::{PointwiseLogLik, psis_loo, relative_efficiency, waic};
    use support::{floats as column, ints as int_column};
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(dir.path(), "loo.toml", LOO_STUDY);
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 2);
    let jobs = support::read_table(&out, "jobs").unwrap();
    let fields = support::read_table(&out, "fields").unwrap();
    let draws = support::read_table(&out, "draws").unwrap();
    assert_eq!(jobs.height(), 6);
    let value = |name: &str, row: usize| column(&jobs, name)[row];
    let (chains, per_chain, cells) = (3, 400, 36);
    let mut sampled = 0;
    for (row, id) in texts(&jobs, "job_id").iter().enumerate() {
        let likelihood = texts(&jobs, "model_likelihood")[row].clone();
        let columns = [
            "elpd_loo",
            "elpd_loo_se",
            "p_loo",
            "pareto_k_max",
            "elpd_waic",
            "p_waic",
        ];
        if texts(&jobs, "sampler_kind")[row] == "laplace" {
            for name in columns {
                assert_eq!(value(name, row), None, "{id} {name}");
            }
            assert_eq!(int_column(&jobs, "pareto_k_bad")[row], None, "{id}");
            continue;
        }
        sampled += 1;
        let reported: Vec<f64> = columns
            .iter()
            .map(|name| value(name, row).unwrap_or_else(|| panic!("{id}: {name} null")))
            .collect();
        let [elpd_loo, elpd_loo_se, p_loo, k_max, elpd_waic, p_waic] = reported[..] else {
            unreachable!()
        };
        let bad = int_column(&jobs, "pareto_k_bad")[row].unwrap();

        // The observed cells, in increasing order (the likelihood's), with their data.
        let mine = support::rows_of_job(&fields, id);
        let observed: Vec<bool> = mine
            .column("observed")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .map(Option::unwrap)
            .collect();
        let cell_of = ints(&mine, "cell");
        let observation = floats(&mine, "observation");
        let trials = match likelihood.as_str() {
            "binomial" => floats(&mine, "trials"),
            _ => vec![None; mine.height()],
        };
        let mut data: Vec<(usize, f64, f64)> = (0..mine.height())
            .filter(|&k| observed[k])
            .map(|k| {
                let n = trials[k].unwrap_or(0.0);
                (cell_of[k] as usize, observation[k].unwrap(), n)
            })
            .collect();
        data.sort_by_key(|d| d.0);
        assert_eq!(data.len(), cells, "{id}: every cell observed");

        // u[chain][draw][cell] from draws.parquet.
        let mine = support::rows_of_job(&draws, id);
        assert_eq!(mine.height(), chains * per_chain * cells, "{id}");
        let mut u = vec![vec![vec![f64::NAN; cells]; per_chain]; chains];
        let (chain, draw, cell, v) = (
            ints(&mine, "chain"),
            ints(&mine, "draw"),
            ints(&mine, "cell"),
            floats(&mine, "value"),
        );
        for k in 0..mine.height() {
            u[chain[k] as usize][draw[k] as usize][cell[k] as usize] = v[k].unwrap();
        }
        let mut pointwise = Vec::with_capacity(chains * per_chain * cells);
        for by_draw in &u {
            for field in by_draw {
                for &(c, y, n) in &data {
                    pointwise.push(full_log_density(&likelihood, y, n, field[c]));
                }
            }
        }
        // log_likelihood.parquet holds these values, rounded to single precision.
        let single = |x: f64| 2f64.powi(-23) * x.abs() + 1e-12;
        let kept = support::rows_of_job(&support::table(&out, "log_likelihood"), id);
        assert_eq!(kept.height(), pointwise.len(), "{id}");
        let (chain, draw, observation, value) = (
            ints(&kept, "chain"),
            ints(&kept, "draw"),
            ints(&kept, "observation"),
            floats(&kept, "value"),
        );
        for k in 0..kept.height() {
            let at = (chain[k] as usize * per_chain + draw[k] as usize) * data.len()
                + observation[k] as usize;
            let (table, again) = (value[k].unwrap(), pointwise[at]);
            assert!(
                (table - again).abs() <= single(again),
                "{id}: {table} against {again}"
            );
        }
        let largest = pointwise.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let loglik = PointwiseLogLik::new(chains, per_chain, data.len(), pointwise).unwrap();
        let series: Vec<Vec<Vec<f64>>> = (0..cells)
            .map(|c| {
                u.iter()
                    .map(|by_draw| by_draw.iter().map(|f| f[c]).collect())
                    .collect()
            })
            .collect();
        let views: Vec<Vec<&[f64]>> = series
            .iter()
            .map(|q| q.iter().map(Vec::as_slice).collect())
            .collect();
        let quantities: Vec<&[&[f64]]> = views.iter().map(Vec::as_slice).collect();
        let reff = relative_efficiency(&quantities).unwrap();
        let loo = psis_loo(&loglik, reff).unwrap();
        let waic = waic(&loglik);

        // The same numbers up to the rounding of two ways of writing each density and the
        // single precision the job keeps them in: no observation's terms move by more than its
        // values do, 2^-23 of the largest.
        let rounding = data.len() as f64 * single(largest);
        let close =
            |ours: f64, again: f64| (ours - again).abs() <= 1e-9 * again.abs().max(1.0) + rounding;
        for (name, ours, again) in [
            ("elpd_loo", elpd_loo, loo.elpd_loo),
            ("elpd_loo_se", elpd_loo_se, loo.elpd_loo_se),
            ("p_loo", p_loo, loo.p_loo),
            ("pareto_k_max", k_max, loo.pareto_k_max),
            ("elpd_waic", elpd_waic, waic.elpd_waic),
            ("p_waic", p_waic, waic.p_waic),
        ] {
            assert!(close(ours, again), "{id} {name}: {ours} against {again}");
        }
        assert_eq!(bad as usize, loo.pareto_k_bad, "{id}");

        // Consistent: lppd = elpd_loo + p_loo bounds both elpds; the effective parameters lie
        // between 0 and the observations; the count of bad k follows their maximum.
        let lppd = elpd_loo + p_loo;
        assert!(elpd_loo <= lppd && elpd_waic <= lppd, "{id}");
        assert!(p_loo > 0.0 && p_loo < cells as f64, "{id}: p_loo {p_loo}");
        assert!(
            p_waic > 0.0 && p_waic < cells as f64,
            "{id}: p_waic {p_waic}"
        );
        assert!(elpd_loo_se > 0.0, "{id}");
        assert_eq!(bad == 0, k_max <= 0.7, "{id}: k max {k_max}, {bad} bad");
        let warned = texts(&jobs, "warnings")[row].contains("Pareto k > 0.7");
        assert_eq!(warned, bad > 0, "{id}: {}", texts(&jobs, "warnings")[row]);
    }
    assert_eq!(sampled, 3);
}

/// `output.quantiles = [0.025, 0.5, 0.975]` on a poisson job that infers its length scale, with
/// two covariates and sites to predict at: every quantile column is named by its probability
/// (`q025`, `q50`, `q975`; no `q05`, `q95`) and holds numpy's default quantile (linear
/// interpolation, R's type 7) of what the other tables store: the cells' draws (draws.parquet,
/// every stored draw kept), the coefficients' (coefficients.parquet) and the length scale's
/// kept states (hyper.parquet at thin 1). The sites sit on cell centres, so a site's draws are
/// its cell's; the window's cells have area 1 and the offset is 0, so a cell's intensity is
/// exp(u).
#[test]
fn quantile_columns_follow_output_quantiles_and_recompute_from_the_stored_draws() {
    let dir = tempfile::tempdir().unwrap();
    let covariates =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/covariates_grid4.csv");
    support::write_file(dir.path(), "sites.csv", "x,y\n1.5,1.5\n2.5,1.5\n");
    let study = support::write_file(
        dir.path(),
        "quantiles.toml",
        &format!(
            "[study]\nname = \"quantiles\"\nseed = 21\n\
             [model]\ngrid = 4\nwindow = [[0, 4], [0, 4]]\nlikelihood = \"poisson\"\n\
             length_scale = 1.0\nlength_scale_prior = \"log-normal(0.0, 0.3)\"\n\
             [data]\nsubsample = 1\ncovariates = [\"slope\", \"bump\"]\n\
             covariates_path = \"{}\"\n\
             [sampler]\nkind = \"elliptical\"\nhyper = \"within-gibbs\"\niterations = 400\n\
             burn_in = 100\nthin = 1\nchains = 2\n\
             [output]\ncell_draws = 300\nfield_draws = 300\nquantiles = [0.025, 0.5, 0.975]\n\
             predict_sites = \"sites.csv\"\n",
            covariates.display()
        ),
    );
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 1);
    let table = |name: &str| support::read_table(&out, name).unwrap();
    let (jobs, fields, draws, sites) = (
        table("jobs"),
        table("fields"),
        table("draws"),
        table("sites"),
    );
    let (coefficients, hyper) = (table("coefficients"), table("hyper"));
    assert_eq!(texts(&jobs, "status"), ["ok"]);
    assert_eq!(texts(&jobs, "output_quantiles"), ["[0.025, 0.5, 0.975]"]);
    let probabilities = [0.025, 0.5, 0.975];
    let names = ["q025", "q50", "q975"];
    let has = |frame: &DataFrame, column: &str| frame.column(column).is_ok();
    for (frame, old) in [
        (&fields, "intensity_q05"),
        (&sites, "q95"),
        (&jobs, "coef_slope_q05"),
        (&jobs, "coef_bump_raw_q95"),
        (&jobs, "hyper_length_scale_q05"),
    ] {
        assert!(!has(frame, old), "{old} written though not asked for");
    }
    // numpy's np.quantile(values, p): position p (n - 1) of the sorted values, interpolated.
    let numpy = |values: &[f64], p: f64| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let position = p * (sorted.len() - 1) as f64;
        let low = position.floor() as usize;
        let high = (low + 1).min(sorted.len() - 1);
        sorted[low] + (position - low as f64) * (sorted[high] - sorted[low])
    };
    let close = |ours: f64, again: f64| (ours - again).abs() <= 1e-12 * again.abs().max(1.0);
    // Each row's three quantiles, checked increasing and against `expected(row, p)`.
    let check =
        |what: &str, frame: &DataFrame, prefix: &str, expected: &dyn Fn(usize, f64) -> f64| {
            let columns: Vec<Vec<Option<f64>>> = names
                .iter()
                .map(|name| floats(frame, &format!("{prefix}{name}")))
                .collect();
            for row in 0..frame.height() {
                let got: Vec<f64> = columns
                    .iter()
                    .map(|c| c[row].unwrap_or_else(|| panic!("{what} row {row}: null")))
                    .collect();
                assert!(
                    got[0] <= got[1] && got[1] <= got[2],
                    "{what} row {row}: {got:?}"
                );
                for (k, &p) in probabilities.iter().enumerate() {
                    let again = expected(row, p);
                    assert!(
                        close(got[k], again),
                        "{what} row {row} p {p}: {} against {again}",
                        got[k]
                    );
                }
            }
        };

    // The cells: u at every stored draw of both chains, pooled.
    let cells = 16;
    let (draw_cell, draw_value) = (ints(&draws, "cell"), floats(&draws, "value"));
    assert_eq!(draws.height(), 2 * 300 * cells);
    let mut u = vec![Vec::new(); cells];
    for (cell, value) in draw_cell.iter().zip(&draw_value) {
        u[*cell as usize].push(value.unwrap());
    }
    let field_cell = ints(&fields, "cell");
    check("fields", &fields, "intensity_", &|row, p| {
        numpy(&u[field_cell[row] as usize], p).exp()
    });

    // The sites, on the centres of the cells with the same x and y.
    let (cell_x, cell_y) = (floats(&fields, "x"), floats(&fields, "y"));
    let (site_x, site_y) = (floats(&sites, "x"), floats(&sites, "y"));
    assert_eq!(sites.height(), 2);
    check("sites", &sites, "", &|row, p| {
        let cell = (0..cells)
            .find(|&c| cell_x[c] == site_x[row] && cell_y[c] == site_y[row])
            .expect("a site on a cell centre");
        numpy(&u[field_cell[cell] as usize], p)
    });

    // The coefficients, on the design's scale and per unit of the raw covariate (the
    // population sd of the covariate over the grid's cells divides).
    let (coefficient_name, coefficient_value) =
        (texts(&coefficients, "name"), floats(&coefficients, "value"));
    let csv = std::fs::read_to_string(&covariates).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for name in ["slope", "bump"] {
        let draws: Vec<f64> = (0..coefficients.height())
            .filter(|&r| coefficient_name[r] == name)
            .map(|r| coefficient_value[r].unwrap())
            .collect();
        assert_eq!(draws.len(), 2 * 300, "{name}");
        let column = header.iter().position(|h| *h == name).unwrap();
        let x: Vec<f64> = csv
            .lines()
            .skip(1)
            .map(|line| line.split(',').nth(column).unwrap().parse().unwrap())
            .collect();
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
        check(name, &jobs, &format!("coef_{name}_"), &|_, p| {
            numpy(&draws, p)
        });
        let raw = |_: usize, p: f64| numpy(&draws, p) / sd;
        let close_raw = |ours: f64, again: f64| (ours - again).abs() <= 1e-9 * again.abs().max(1.0);
        for (k, &p) in probabilities.iter().enumerate() {
            let got = floats(&jobs, &format!("coef_{name}_raw_{}", names[k]))[0].unwrap();
            assert!(close_raw(got, raw(0, p)), "{name} raw p {p}: {got}");
        }
    }

    // The length scale over every kept state (hyper.parquet at thin 1).
    let (hyper_name, hyper_value) = (texts(&hyper, "name"), floats(&hyper, "value"));
    let kept: Vec<f64> = (0..hyper.height())
        .filter(|&r| hyper_name[r] == "length_scale")
        .map(|r| hyper_value[r].unwrap())
        .collect();
    assert_eq!(kept.len(), 2 * 300);
    check("length scale", &jobs, "hyper_length_scale_", &|_, p| {
        numpy(&kept, p)
    });
}
