//! `data.source = "sites"` through the real binary: the shipped topo study (52 elevations,
//! studies/geostat/topo.toml) runs without a warning, and at every held-out site its posterior
//! mean of the field is within 0.1 exact posterior sds of exact kriging and its sd within 10 %:
//! exact kriging computed here, densely over the 42 fitted sites (n x n, an independent
//! Cholesky), with the study's length scale, variance, noise sd and mean.
//!
//! The bounds (0.1 exact sds, 10 %) are the issue's, not derived from the Monte Carlo error: they
//! hold the grid's error (at most 0.036 exact sds at 12 cells per length scale in
//! bench/results/kriging.md) plus the chains' error of a mean at a bulk ESS of about 3,000 to
//! 4,000 (0.016 to 0.018 exact sds), about 3.5 of those beyond the grid's worst case per site. A
//! family-wise 1e-4 over the 10 held-out sites would need an ESS near 5,000: the study's budget is the
//! default one, and this test runs the study as shipped.

mod support;

use std::path::Path;

use support::{floats, ints, run_without_warnings, strings, table};

/// The study's fixed hyperparameters (studies/geostat/topo.toml).
const LENGTH_SCALE: f64 = 1.2;
const VARIANCE: f64 = 3000.0;
const NOISE_SD: f64 = 10.0;

/// Lower-triangular L with L L^T = a (n x n, row-major).
fn cholesky(a: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            if i == j {
                let d = a[i * n + i] - dot;
                assert!(d > 0.0, "not positive definite at {i}");
                l[i * n + i] = d.sqrt();
            } else {
                l[i * n + j] = (a[i * n + j] - dot) / l[j * n + j];
            }
        }
    }
    l
}

/// x with L x = b.
fn forward(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    for i in 0..n {
        let dot: f64 = (0..i).map(|k| l[i * n + k] * x[k]).sum();
        x[i] = (b[i] - dot) / l[i * n + i];
    }
    x
}

fn kernel(a: (f64, f64), b: (f64, f64)) -> f64 {
    let d2 = (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2);
    VARIANCE * (-d2 / (2.0 * LENGTH_SCALE * LENGTH_SCALE)).exp()
}

/// Exact kriging at `at` from `fitted` sites and values: (mean, sd) of the field.
fn krige(fitted: &[(f64, f64)], values: &[f64], mean: f64, at: (f64, f64)) -> (f64, f64) {
    let n = fitted.len();
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            k[i * n + j] = kernel(fitted[i], fitted[j]);
        }
        k[i * n + i] += NOISE_SD * NOISE_SD;
    }
    let l = cholesky(&k, n);
    let residual: Vec<f64> = values.iter().map(|v| v - mean).collect();
    let cross: Vec<f64> = fitted.iter().map(|&s| kernel(s, at)).collect();
    let (r, c) = (forward(&l, n, &residual), forward(&l, n, &cross));
    let m = mean + r.iter().zip(&c).map(|(a, b)| a * b).sum::<f64>();
    let v = VARIANCE - c.iter().map(|x| x * x).sum::<f64>();
    (m, v.max(0.0).sqrt())
}

#[test]
fn the_topo_study_matches_exact_kriging_at_its_held_out_sites() {
    let study = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/geostat/topo.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run_without_warnings(&study, &out, 2);
    assert_matches_exact_kriging(&out);
}

/// A sites study that gives no `model.grid` gets the grid with 12 cells in the length scale
/// along each axis (63 x 62 on topo's window with l = 1.2), and with it matches exact kriging
/// as the shipped study does.
#[test]
fn without_a_grid_the_default_one_matches_exact_kriging() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped = std::fs::read_to_string(root.join("studies/geostat/topo.toml")).unwrap();
    let text = shipped
        .replace("grid = 64\n", "")
        .replace("../../data/", &format!("{}/data/", root.display()));
    assert!(!text.contains("grid ="));
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(dir.path(), "topo.toml", &text);
    let out = dir.path().join("out");
    run_without_warnings(&study, &out, 2);
    assert_eq!(
        strings(&table(&out, "jobs"), "model_grid")[0].as_deref(),
        Some("[63, 62]")
    );
    assert_matches_exact_kriging(&out);
}

/// The topo run in `out` (42 fitted and 10 held-out sites): at every held-out site the posterior
/// mean within 0.1 exact sds of exact kriging and the sd within 10 %.
fn assert_matches_exact_kriging(out: &Path) {
    let out = out.to_path_buf();
    let jobs = table(&out, "jobs");
    let mean = floats(&jobs, "model_mean_value")[0].expect("the mean used");
    assert_eq!(ints(&jobs, "observed_sites")[0], Some(42));
    assert_eq!(ints(&jobs, "held_out_sites")[0], Some(10));
    assert_eq!(ints(&jobs, "observed_cells")[0], Some(0));
    assert!(floats(&jobs, "heldout_lpd")[0].is_some_and(f64::is_finite));

    let sites = table(&out, "sites");
    let set = strings(&sites, "set");
    let column = |name: &str| -> Vec<f64> {
        floats(&sites, name)
            .into_iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect()
    };
    let (x, y, value) = (column("x"), column("y"), column("value"));
    let (post_mean, post_sd) = (column("post_mean"), column("post_sd"));
    let fitted: Vec<usize> = (0..set.len())
        .filter(|&r| set[r].as_deref() == Some("fitted"))
        .collect();
    let held: Vec<usize> = (0..set.len())
        .filter(|&r| set[r].as_deref() == Some("held_out"))
        .collect();
    assert_eq!((fitted.len(), held.len()), (42, 10));
    // The mean is the mean of the fitted heights (model.mean = "auto", gaussian).
    let fitted_mean = fitted.iter().map(|&r| value[r]).sum::<f64>() / 42.0;
    assert!((mean - fitted_mean).abs() < 1e-9, "{mean} vs {fitted_mean}");
    let sites_fitted: Vec<(f64, f64)> = fitted.iter().map(|&r| (x[r], y[r])).collect();
    let values: Vec<f64> = fitted.iter().map(|&r| value[r]).collect();
    for &r in &held {
        let (exact_mean, exact_sd) = krige(&sites_fitted, &values, mean, (x[r], y[r]));
        let error = (post_mean[r] - exact_mean).abs() / exact_sd;
        assert!(
            error < 0.1,
            "site ({}, {}): mean {} against exact {exact_mean} ({error} exact sds)",
            x[r],
            y[r],
            post_mean[r]
        );
        let ratio = post_sd[r] / exact_sd;
        assert!(
            (ratio - 1.0).abs() < 0.1,
            "site ({}, {}): sd {} against exact {exact_sd}",
            x[r],
            y[r],
            post_sd[r]
        );
    }
    // predictive_sd adds the noise to the field's sd.
    let predictive = column("predictive_sd");
    for &r in &held {
        assert!((predictive[r] - post_sd[r].hypot(NOISE_SD)).abs() < 1e-9);
    }
}

/// Which measurements are held out depends on the data and `data.holdout` only, never on the
/// grid: the topo study swept over two grids (laplace, the quick approximation) holds out the
/// same 10 rows of the file in both jobs.
#[test]
fn the_same_sites_are_held_out_on_every_grid() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/topo_sites.csv");
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(
        dir.path(),
        "grids.toml",
        &format!(
            "[study]\nname = \"grids\"\nseed = 5\n[model]\nwindow = [[0, 6.3], [0, 6.2]]\n\
             likelihood = \"gaussian\"\nlength_scale = 1.2\nvariance = 3000\n\
             [data]\nsource = \"sites\"\npath = \"{}\"\nvalue = \"height\"\nnoise_sd = 10\n\
             holdout = 0.2\n[sampler]\nkind = \"laplace\"\n\
             [sweep]\n\"model.grid\" = [24, 40]\n",
            data.display()
        ),
    );
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 2);
    let sites = table(&out, "sites");
    let (job, set, row) = (
        strings(&sites, "job_id"),
        strings(&sites, "set"),
        ints(&sites, "row"),
    );
    let mut held: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for k in 0..set.len() {
        if set[k].as_deref() == Some("held_out") {
            let id = job[k].clone().unwrap();
            held.entry(id).or_default().push(row[k].unwrap());
        }
    }
    let sets: Vec<&Vec<i64>> = held.values().collect();
    assert_eq!(sets.len(), 2, "two jobs, one per grid");
    assert_eq!(sets[0].len(), 10);
    assert_eq!(
        sets[0], sets[1],
        "the held-out rows differ between the grids"
    );
    // Both grids are coarser than 12 cells per length scale (4.6 and 7.6) and the sites lie
    // between cell centres: each job says so and names the grid that is not (the shipped
    // 64 x 64 study, 12.2, runs without a warning).
    let warnings = strings(&table(&out, "jobs"), "warnings");
    assert_eq!(warnings.len(), 2);
    for w in &warnings {
        let w = w.as_deref().unwrap_or_default();
        assert!(
            w.contains("cells in the length scale") && w.contains("model.grid = [63, 62]"),
            "{w}"
        );
    }
}

/// Probit at sites: the shipped hickory study (410 surveyed 0/1 sites, the default sampler) runs
/// without a warning (R-hat <= 1.01 at every cell and site, enough ESS), fits every site and
/// predicts the 614 unsurveyed cells. bench/probit_sites_peer.sh compares it with BlackJAX NUTS.
#[test]
fn the_hickory_presence_study_converges_without_a_warning() {
    let study = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/geostat/hickory_sites.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run_without_warnings(&study, &out, 2);
    let jobs = table(&out, "jobs");
    assert_eq!(ints(&jobs, "observed_sites")[0], Some(410));
    assert_eq!(ints(&jobs, "held_out_sites")[0], Some(0));
    let sites = table(&out, "sites");
    let rhat = floats(&sites, "rhat");
    assert_eq!(rhat.len(), 410);
    assert!(rhat.iter().all(|r| r.is_some_and(|r| r <= 1.01)));
}

/// `output.exceedance` at sites: the hickory study with two thresholds and three sites to
/// predict at writes `exceedance_<t>` on every row of sites.parquet, probabilities that fall as
/// the threshold rises; a site to predict at on a cell centre agrees with that cell's
/// `fields.parquet` probability (every kept state) within Monte Carlo error: the site's share
/// over the stored draws has a binomial sd of at most 0.5 / sqrt(ESS), 0.05 even at an ESS of
/// 100, a quarter of the 400 stored draws; 0.15 is 3 of those, and with the ESS nearer the
/// draws' count (laplace_hmc's cells have ESS near their draw count) the bound is 6 or more sds.
#[test]
fn exceedance_probabilities_are_written_at_every_site() {
    assert_site_exceedance_agrees_with_the_cells("", "");
}

/// As above with the mean and the variance inferred by the joint chain: the cells' probabilities
/// (the driver, every kept state) and the sites' (the stored draws) both judge each state at its
/// own mean and variance, so they agree again; judged at the chains' start values instead, the
/// cells' would not.
#[test]
fn exceedance_follows_each_draws_inferred_mean_and_variance() {
    assert_site_exceedance_agrees_with_the_cells(
        "mean_prior = \"normal(0, 1)\"\nvariance_prior = \"log-normal(0, 0.5)\"\n",
        "\n[sampler]\nkind = \"nuts\"\nhyper = \"joint\"\n",
    );
}

/// The hickory study with `model_lines` added to [model] and `sections` appended, two
/// exceedance thresholds and three sites to predict at: every site has its probabilities, and
/// the two predict sites on cell centres agree with their cells'.
fn assert_site_exceedance_agrees_with_the_cells(model_lines: &str, sections: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shipped = std::fs::read_to_string(root.join("studies/geostat/hickory_sites.toml"))
        .unwrap()
        .replace("[model]\n", &format!("[model]\n{model_lines}"));
    let data = root.join("data/lansing_hickory_sites.csv");
    let dir = tempfile::tempdir().unwrap();
    // Three sites: two cell centres (cells (0, 0) and (31, 31)) and a point between cells.
    let predict = support::write_file(
        dir.path(),
        "predict.csv",
        "x,y,name\n0.015625,0.015625,corner\n0.984375,0.984375,far\n0.5,0.5,middle\n",
    );
    let text = shipped.replace(
        "../../data/lansing_hickory_sites.csv",
        &data.display().to_string(),
    ) + sections
        + &format!(
            "\n[output]\nexceedance = [0.8, 1.5]\npredict_sites = \"{}\"\n",
            predict.display()
        );
    let study = support::write_file(dir.path(), "hickory.toml", &text);
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 2);
    let sites = table(&out, "sites");
    let low = floats(&sites, "exceedance_0.8");
    let high = floats(&sites, "exceedance_1.5");
    assert_eq!(low.len(), 410 + 3);
    for (l, h) in low.iter().zip(&high) {
        let (l, h) = (l.expect("every site"), h.expect("every site"));
        assert!((0.0..=1.0).contains(&l) && h <= l, "{l} then {h}");
    }
    let fields = table(&out, "fields");
    let cell_low = floats(&fields, "exceedance_0.8");
    let set = strings(&sites, "set");
    let name = strings(&sites, "site_name");
    for (row, cell) in [("corner", 0), ("far", 1023)] {
        let r = (0..set.len())
            .find(|&r| name[r].as_deref() == Some(row))
            .unwrap();
        let (site, cell) = (low[r].unwrap(), cell_low[cell].unwrap());
        assert!(
            (site - cell).abs() < 0.15,
            "{row}: site {site} vs cell {cell}"
        );
    }
}
