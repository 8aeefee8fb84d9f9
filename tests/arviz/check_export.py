"""Opens every InferenceData store `fieldmc export --arviz` wrote for a results folder and
checks it against the folder's tables with ArviZ itself (run by tests/arviz.rs):

- xarray's open_datatree opens it and arviz.InferenceData.from_datatree takes it;
- the posterior's `u` equals draws.parquet value for value (bit for bit), each inferred
  hyperparameter equals hyper_draws.parquet's and each coefficient coefficients.parquet's, in
  order of iteration;
- az.loo and az.waic on it give jobs.parquet's elpd_loo, elpd_loo_se, p_loo, pareto_k_max,
  pareto_k_bad, elpd_waic and p_waic within 1e-6, and loo.parquet's pointwise values;
- observed_data's `y` is the data of the observations, az.summary runs on the posterior.

Usage: check_export.py RESULTS_DIR ARVIZ_DIR. Prints one line per job; exit 1 on any failure.
"""
import sys
import warnings

import numpy as np
import pandas as pd
import xarray as xr
import arviz as az

TOLERANCE = 1e-6


def table(results, name):
    try:
        return pd.read_parquet(f"{results}/{name}.parquet")
    except FileNotFoundError:
        return None


def by_iteration(frame, job, chains, draws):
    """{name: (chain, draw) array} of a long table of scalars at the stored draws."""
    out = {}
    if frame is None:
        return out
    mine = frame[frame.job_id == job]
    for name, rows in mine.groupby("name"):
        rows = rows.sort_values(["chain", "iteration"])
        out[name] = rows.value.to_numpy().reshape(chains, draws)
    return out


def check_job(results, store, job, failures):
    def fail(message):
        failures.append(f"{job}: {message}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = xr.open_datatree(store, engine="zarr", consolidated=False)
        idata = az.InferenceData.from_datatree(tree)
    posterior = idata.posterior
    draws = table(results, "draws")
    mine = draws[draws.job_id == job]
    u = posterior["u"].values
    if not np.array_equal(u[mine.chain.values, mine.draw.values, mine.cell.values],
                          mine.value.to_numpy()) or u.size != len(mine):
        fail("posterior u differs from draws.parquet")
    chains, per_chain = u.shape[0], u.shape[1]
    for source, prefix in [("hyper_draws", ""), ("coefficients", "coef_")]:
        for name, values in by_iteration(table(results, source), job, chains, per_chain).items():
            if not np.array_equal(posterior[prefix + name].values, values):
                fail(f"posterior {prefix + name} differs from {source}.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = az.summary(idata, var_names=["u"])
    if len(summary) != u.shape[2]:
        fail(f"az.summary has {len(summary)} rows for {u.shape[2]} cells")

    jobs = table(results, "jobs")
    row = jobs[jobs.job_id == job].iloc[0]
    if "log_likelihood" not in idata.groups():
        if pd.notna(row.get("elpd_loo")):
            fail("jobs.parquet has elpd_loo but the export has no log_likelihood group")
        return "posterior only"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(idata, pointwise=True)
        waic = az.waic(idata)
    k = loo.pareto_k.values
    theirs = {
        "elpd_loo": loo.elpd_loo, "elpd_loo_se": loo.se, "p_loo": loo.p_loo,
        "pareto_k_max": float(np.max(k)), "elpd_waic": waic.elpd_waic, "p_waic": waic.p_waic,
    }
    for name, value in theirs.items():
        ours = row[name]
        if not (abs(ours - value) <= TOLERANCE):
            fail(f"{name}: fieldmc {ours!r}, ArviZ {value!r}")
    if int(row.pareto_k_bad) != int(np.sum(k > 0.7)):
        fail(f"pareto_k_bad: fieldmc {row.pareto_k_bad}, ArviZ {int(np.sum(k > 0.7))}")
    terms = table(results, "loo")
    terms = terms[terms.job_id == job].sort_values("observation")
    if np.max(np.abs(terms.elpd_loo.to_numpy() - loo.loo_i.values)) > TOLERANCE:
        fail("loo.parquet's elpd_loo differ from ArviZ's loo_i")
    if np.max(np.abs(terms.pareto_k.fillna(np.inf).to_numpy() - k)) > TOLERANCE:
        fail("loo.parquet's pareto_k differ from ArviZ's")
    y = idata.observed_data["y"].values
    if "cell" in idata.observed_data.coords:
        fields = table(results, "fields")
        fields = fields[fields.job_id == job].set_index("cell")
        expected = fields.loc[idata.observed_data["cell"].values, "observation"].to_numpy()
    else:
        sites = table(results, "sites")
        sites = sites[(sites.job_id == job) & (sites.set == "fitted")].set_index("row")
        expected = sites.loc[idata.observed_data["site_row"].values, "value"].to_numpy()
    if not np.array_equal(y, expected):
        fail("observed_data y differs from the tables' data")
    return f"elpd_loo {loo.elpd_loo:.6f} (fieldmc {row.elpd_loo:.6f}), max k {np.max(k):.3f}"


def main():
    results, arviz_dir = sys.argv[1], sys.argv[2]
    jobs = table(results, "jobs")
    failures = []
    for job in jobs[jobs.status == "ok"].job_id:
        print(job, check_job(results, f"{arviz_dir}/{job}.zarr", job, failures))
    for failure in failures:
        print("FAIL", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
