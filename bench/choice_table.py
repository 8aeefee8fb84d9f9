#!/usr/bin/env python3
"""The table of bench/choice.sh: the models of studies/lgcp/choice.toml (the bei trees with the
covariate sets none / elev / grad / elev+grad and the squared-exponential and Matern 3/2 kernels)
compared by PSIS-LOO.

Reads OUT/fieldmc/{jobs,loo,fields,chains}.parquet (the study), OUT/seed_<s>/jobs.parquet (its
squared-exponential jobs at other seeds), OUT/none_<s>/jobs.parquet (the squared-exponential model
without data.covariates at each seed) and OUT/{commit,load_before,load_after,wall_seconds}.txt, all
written by bench/choice.sh. Checks that every job fitted the same cells and that the check runs
are the study's jobs but for the seed (and, for none_<s>, the covariate lines); writes
RESULTS/choice.csv (one row per job of the study), RESULTS/choice_seeds.csv (one row per job of
the seed checks) and RESULTS/choice.md (the tables and the sentences, from the same numbers).
Needs polars, numpy and ArviZ (the peer venv has them).

The comparison is ArviZ's az.compare (method "stacking" aside): elpd_diff = elpd_loo of the best
model minus the model's (0 for the best), dse = sqrt(n var(loo_i^best - loo_i^model)) over the n
observations paired by observation, numpy's var (ddof 0); the same for WAIC from each cell's
elpd_waic. The "reliable cells" columns repeat the LOO difference over the cells whose Pareto k
is at most 0.7 in both models: not an estimate of the same quantity (the left-out cells are the
influential ones), but a check of whether a difference lives only in the unreliable cells.

The "draws" columns are ArviZ's az.loo (reff = 1) on each job's log_likelihood.parquet: on every
stored draw, and on every second one (half the draws per chain). With many Pareto k above 0.7 the
PSIS estimate has not settled: how far it moves when the draws are halved says how far the
reported elpd_loo is from where more draws would take it.
"""
import argparse
import math
import os
import re

import warnings

import arviz as az
import numpy as np
import polars as pl

from table_common import (fieldmc_version, fmt, git_commit, load_averages, machine, utc_now,
                          write_csv, write_markdown)

K_BAD = 0.7           # Pareto k above this: the observation's PSIS estimate is unreliable
PINNED = re.compile(r"normal\(0, 1e-0?9\)")   # the study's "none" row: elevation pinned at 0
PINNED_SD = 1e-8      # the pinned coefficient's posterior sd must stay below this
COUNT_CLASSES = [(0, 0), (1, 4), (5, 9), (10, 19), (20, None)]
KERNEL_LABEL = {"squared-exponential": "squared exp.", "matern32": "Matern 3/2"}
COVARIATE_ORDER = ["none", "elev", "grad", "elev+grad"]
COLUMNS = ["job_id", "covariates", "kernel", "elpd_loo", "elpd_loo_se", "p_loo", "elpd_diff",
           "dse", "elpd_diff_reliable_cells", "dse_reliable_cells", "reliable_cells",
           "elpd_loo_arviz_all_draws", "elpd_loo_arviz_half_draws",
           "elpd_waic", "p_waic", "waic_diff", "waic_dse", "pareto_k_max", "pareto_k_bad",
           "bad_cells_tree_share", "length_scale_mean", "variance_mean", "coef_elev_mean",
           "coef_grad_mean", "cell_rhat_max", "cell_ess_bulk_min", "hyper_rhat_max",
           "hyper_ess_bulk_min", "coef_rhat_max", "coef_ess_bulk_min", "divergences",
           "cpu_seconds"]
SEED_COLUMNS = ["run", "seed", "covariates", "kernel", "job_id", "elpd_loo", "elpd_loo_se",
                "p_loo", "pareto_k_bad", "elpd_waic", "length_scale_mean", "variance_mean",
                "cell_rhat_max", "cpu_seconds"]
# Settings that may differ between the study's jobs and the check runs' copies of them.
SEED_FREE = {"data_path", "data_covariates_path"}
NONE_FREE = SEED_FREE | {"data_covariates", "model_coefficient_prior"}


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="studies/lgcp/choice.toml")
    p.add_argument("--out", required=True, help="bench/choice.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    p.add_argument("--threads", default="2", help="the threads the runs had (for the md)")
    p.add_argument("--seeds", nargs="+", type=int, required=True,
                   help="the study's seed, then the check runs' seeds")
    return p.parse_args()


def covariate_label(job):
    """'none' for the pinned row and for a job without covariates, else 'elev', 'grad',
    'elev+grad'."""
    given = job["data_covariates"]
    if given is None:
        return "none"
    if PINNED.fullmatch(job["model_coefficient_prior"]):
        for name in given.split(","):
            sd = job[f"coef_{name}_sd"]
            assert sd < PINNED_SD, f"the pinned coefficient {name} has posterior sd {sd}"
        return "none"
    assert job["model_coefficient_prior"] == "normal(0, 1)", job["model_coefficient_prior"]
    return "+".join(given.split(","))


def settings(job):
    return {k: v for k, v in job.items() if k.split("_")[0] in ("model", "data", "sampler",
                                                                "output")
            and not k.startswith("model_mean_value")}


def same_but(a, b, free):
    """Whether two jobs' settings agree in every key but those of `free` (paths by file name)."""
    sa, sb = settings(a), settings(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        if k in free:
            if k.endswith("_path") and sa[k] is not None and sb[k] is not None:
                assert os.path.basename(sa[k]) == os.path.basename(sb[k]), (k, sa[k], sb[k])
            continue
        assert sa[k] == sb[k], f"{k}: {sa[k]!r} against {sb[k]!r}"


def hyper_worst(job):
    names = ["length_scale", "variance"]
    return (max(job[f"hyper_{n}_rhat"] for n in names),
            min(job[f"hyper_{n}_ess_bulk"] for n in names))


def coef_worst(job, label):
    """Largest R-hat and smallest bulk ESS over the fitted coefficients (the pinned one, whose
    draws are its prior's, left out); None without coefficients."""
    if label == "none":
        return None, None
    names = label.split("+")
    return (max(job[f"coef_{n}_rhat"] for n in names),
            min(job[f"coef_{n}_ess_bulk"] for n in names))


def budget(by_id, kernel):
    """'(W warmup + D draws, S stored per chain) for KERNEL', checked to be one for all its jobs."""
    runs = {(j["sampler_burn_in"], j["sampler_iterations"], j["cell_draws_per_chain"])
            for j in by_id.values() if j["model_kernel"] == kernel}
    assert len(runs) == 1, (kernel, runs)
    (warmup, iterations, stored), = runs
    return (f"({warmup:,} warmup + {iterations - warmup:,} draws, {stored:,} stored per chain "
            f"for the LOO) for the {KERNEL_LABEL[kernel]}")


def arviz_loo(out, job_id):
    """az.loo (reff 1) on the job's stored pointwise log-likelihood: (all draws, every second
    draw of each chain)."""
    g = (pl.scan_parquet(os.path.join(out, "fieldmc", "log_likelihood.parquet"))
         .filter(pl.col("job_id") == job_id).sort(["chain", "draw", "observation"]).collect())
    shape = (g["chain"].n_unique(), g["draw"].n_unique(), g["observation"].n_unique())
    assert g.height == shape[0] * shape[1] * shape[2]
    values = g["value"].to_numpy().reshape(shape)
    result = []
    for y in (values, values[:, ::2, :]):
        idata = az.from_dict(posterior={"_": np.zeros(y.shape[:2])}, log_likelihood={"y": y})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # ArviZ's own Pareto k warning: read in the table
            result.append(float(az.loo(idata, reff=1.0).elpd_loo))
    return result


def paired(a, b):
    """(sum(a - b), sqrt(n var(a - b))): az.compare's elpd_diff and dse."""
    d = np.asarray(a) - np.asarray(b)
    return float(d.sum()), float(math.sqrt(len(d) * d.var()))


def read_study(out):
    base = os.path.join(out, "fieldmc")
    jobs = pl.read_parquet(os.path.join(base, "jobs.parquet"))
    loo = pl.read_parquet(os.path.join(base, "loo.parquet")).sort(["job_id", "observation"])
    counts = (pl.read_parquet(os.path.join(base, "fields.parquet"),
                              columns=["job_id", "cell", "i", "j", "observed", "observation"])
              .rename({"observation": "count"}))
    chains = pl.read_parquet(os.path.join(base, "chains.parquet"))
    divergences = dict(chains.group_by("job_id").agg(pl.col("divergences").sum()).iter_rows())
    return jobs, loo, counts, divergences


def pointwise(jobs, loo, counts):
    """Per job id: (elpd_loo_i, pareto_k_i, elpd_waic_i, count_i) over the observations, in one
    order, checked to be the same cells in every job and to add up to the jobs table."""
    cells = None
    result = {}
    for job in jobs.iter_rows(named=True):
        rows = loo.filter(pl.col("job_id") == job["job_id"])
        assert rows["site_row"].null_count() == rows.height
        these = rows["cell"].to_list()
        if cells is None:
            cells = these
        assert these == cells, f"job {job['job_id']} scored other cells"
        c = (counts.filter(pl.col("job_id") == job["job_id"]).sort("cell")
             .filter(pl.col("cell").is_in(these)))
        assert c["cell"].to_list() == sorted(these) and c["observed"].all()
        count = dict(zip(c["cell"].to_list(), c["count"].to_list()))
        elpd = rows["elpd_loo"].to_numpy()
        k = rows["pareto_k"].fill_null(math.inf).to_numpy()
        waic = rows["elpd_waic"].to_numpy()
        n = len(elpd)
        assert n == job["observed_cells"] == 1024 and job["data_holdout"] == 0
        assert math.isclose(elpd.sum(), job["elpd_loo"], rel_tol=1e-9), job["job_id"]
        assert math.isclose(math.sqrt(n * elpd.var()), job["elpd_loo_se"], rel_tol=1e-9)
        assert math.isclose(waic.sum(), job["elpd_waic"], rel_tol=1e-9)
        assert int((k > K_BAD).sum()) == job["pareto_k_bad"], job["job_id"]
        result[job["job_id"]] = (elpd, k, waic, np.array([count[c] for c in these], float))
    return result


def main():
    a = args()
    jobs, loo, counts, divergences = read_study(a.out)
    assert jobs.height == 8 and (jobs["status"] == "ok").all(), jobs["error"].to_list()
    points = pointwise(jobs, loo, counts)
    by_id = {j["job_id"]: j for j in jobs.iter_rows(named=True)}
    label = {i: covariate_label(j) for i, j in by_id.items()}
    order = sorted(by_id, key=lambda i: (list(KERNEL_LABEL).index(by_id[i]["model_kernel"]),
                                         COVARIATE_ORDER.index(label[i])))
    assert len({(label[i], by_id[i]["model_kernel"]) for i in order}) == 8
    best = max(order, key=lambda i: by_id[i]["elpd_loo"])
    best_waic = max(order, key=lambda i: by_id[i]["elpd_waic"])
    eb, kb, wb, _ = points[best]

    rows = []
    for i in order:
        job = by_id[i]
        elpd, k, waic, y = points[i]
        diff, dse = paired(eb, elpd)
        good = (kb <= K_BAD) & (k <= K_BAD)
        diff_good, dse_good = paired(eb[good], elpd[good])
        wdiff, wdse = paired(wb, waic)
        hr, he = hyper_worst(job)
        cr, ce = coef_worst(job, label[i])
        loo_all, loo_half = arviz_loo(a.out, i)
        rows.append({
            "job_id": i, "covariates": label[i], "kernel": job["model_kernel"],
            "elpd_loo": job["elpd_loo"], "elpd_loo_se": job["elpd_loo_se"], "p_loo": job["p_loo"],
            "elpd_diff": diff, "dse": dse, "elpd_diff_reliable_cells": diff_good,
            "dse_reliable_cells": dse_good, "reliable_cells": int(good.sum()),
            "elpd_loo_arviz_all_draws": loo_all, "elpd_loo_arviz_half_draws": loo_half,
            "elpd_waic": job["elpd_waic"], "p_waic": job["p_waic"], "waic_diff": wdiff,
            "waic_dse": wdse, "pareto_k_max": job["pareto_k_max"],
            "pareto_k_bad": job["pareto_k_bad"],
            "bad_cells_tree_share": float(y[k > K_BAD].sum() / y.sum()),
            "length_scale_mean": job["hyper_length_scale_mean"],
            "variance_mean": job["hyper_variance_mean"],
            "coef_elev_mean": job["coef_elev_mean"] if "elev" in label[i] else None,
            "coef_grad_mean": job["coef_grad_mean"] if "grad" in label[i] else None,
            "cell_rhat_max": job["cell_rhat_max"], "cell_ess_bulk_min": job["cell_ess_bulk_min"],
            "hyper_rhat_max": hr, "hyper_ess_bulk_min": he, "coef_rhat_max": cr,
            "coef_ess_bulk_min": ce, "divergences": divergences[i],
            "cpu_seconds": job["cpu_seconds"]})

    # ---- the check runs: the squared-exponential jobs at other seeds, and without covariates
    study_seed, other_seeds = a.seeds[0], a.seeds[1:]
    se_jobs = {label[i]: by_id[i] for i in order if by_id[i]["model_kernel"] ==
               "squared-exponential"}
    seed_rows = []
    for i in order:
        if by_id[i]["model_kernel"] == "squared-exponential":
            seed_rows.append(("study", study_seed, by_id[i], label[i]))
    for s in other_seeds:
        other = pl.read_parquet(os.path.join(a.out, f"seed_{s}", "jobs.parquet"))
        assert other.height == 4 and (other["status"] == "ok").all()
        for job in other.iter_rows(named=True):
            lab = covariate_label(job)
            same_but(se_jobs[lab], job, SEED_FREE)
            seed_rows.append(("seed", s, job, lab))
    for s in a.seeds:
        none = pl.read_parquet(os.path.join(a.out, f"none_{s}", "jobs.parquet"))
        assert none.height == 1 and none["status"][0] == "ok"
        job = none.row(0, named=True)
        assert job["data_covariates"] is None and job.get("coef_elev_mean") is None
        same_but(se_jobs["none"], job, NONE_FREE)
        seed_rows.append(("no data.covariates", s, job, "none"))
    seed_table = [{"run": run, "seed": s, "covariates": lab, "kernel": job["model_kernel"],
                   "job_id": job["job_id"], "elpd_loo": job["elpd_loo"],
                   "elpd_loo_se": job["elpd_loo_se"], "p_loo": job["p_loo"],
                   "pareto_k_bad": job["pareto_k_bad"], "elpd_waic": job["elpd_waic"],
                   "length_scale_mean": job["hyper_length_scale_mean"],
                   "variance_mean": job["hyper_variance_mean"],
                   "cell_rhat_max": job["cell_rhat_max"], "cpu_seconds": job["cpu_seconds"]}
                  for run, s, job, lab in seed_rows]

    os.makedirs(a.results, exist_ok=True)
    csv_path = os.path.join(a.results, "choice.csv")
    seeds_path = os.path.join(a.results, "choice_seeds.csv")
    write_csv(csv_path, COLUMNS, rows)
    write_csv(seeds_path, SEED_COLUMNS, seed_table)

    # ---- the Markdown, from the rows just written
    R = {(r["covariates"], r["kernel"]): r for r in rows}
    name = lambda r: f"{r['covariates']}, {KERNEL_LABEL[r['kernel']]}"
    rb = next(r for r in rows if r["job_id"] == best)
    nproc, cpu_model = machine()
    load_before, load_after = load_averages(a.out)
    wall = int(open(os.path.join(a.out, "wall_seconds.txt")).read())
    cpu_study = sum(r["cpu_seconds"] for r in rows)
    cpu_checks = sum(r["cpu_seconds"] for r in seed_table if r["run"] != "study")
    j0 = by_id[best]
    L = []
    L.append("# Model choice on the bei trees: covariates and kernels by PSIS-LOO")
    L.append("")
    L.append(
        f"Generated by `bench/choice.sh` (`bench/choice_table.py`) on {utc_now()}, commit "
        f"{git_commit(a.out)}, {fieldmc_version(a.fieldmc)}; machine: {nproc} cores, "
        f"{cpu_model}; {a.threads} threads; load average before {load_before}, after "
        f"{load_after}. Study `{a.study}`: {j0['observed_cells']:,} cells of "
        f"{j0['model_grid']} x {j0['model_grid']}, nothing held out; length scale and variance "
        f"inferred by the joint NUTS chain, {j0['sampler_chains']} chains x "
        + ", ".join(budget(by_id, kernel) for kernel in KERNEL_LABEL) + ". CPU: the "
        f"study {fmt(cpu_study)} s, the check runs {fmt(cpu_checks)} s; wall {wall} s in all. "
        "Numbers: `bench/results/choice.csv`, `bench/results/choice_seeds.csv`.")
    L.append("")
    L.append("| covariates | kernel | elpd_loo (se) | p_loo | elpd_diff (dse) | diff / dse "
             "| elpd_loo, half the draws | elpd_waic | Pareto k max | k > 0.7 "
             "| length scale, variance | max R-hat | min bulk ESS | CPU s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rhat = max(v for v in (r["cell_rhat_max"], r["hyper_rhat_max"], r["coef_rhat_max"])
                   if v is not None)
        ess = min(v for v in (r["cell_ess_bulk_min"], r["hyper_ess_bulk_min"],
                              r["coef_ess_bulk_min"]) if v is not None)
        ratio = "—" if r["job_id"] == best else f"{r['elpd_diff'] / r['dse']:.1f}"
        L.append(
            f"| {r['covariates']} | {KERNEL_LABEL[r['kernel']]} "
            f"| {r['elpd_loo']:.1f} ({r['elpd_loo_se']:.1f}) | {r['p_loo']:.0f} "
            f"| {r['elpd_diff']:.1f} ({r['dse']:.1f}) | {ratio} "
            f"| {r['elpd_loo_arviz_half_draws']:.1f} | {r['elpd_waic']:.1f} "
            f"| {r['pareto_k_max']:.2f} | {r['pareto_k_bad']} "
            f"| {r['length_scale_mean']:.1f} m, {r['variance_mean']:.2f} | {rhat:.4f} "
            f"| {ess:,.0f} | {r['cpu_seconds']:.1f} |")
    L.append("")
    L.append("elpd_diff: the best model's elpd_loo minus the row's; dse its paired standard "
             "error (az.compare's). Half the draws: ArviZ's az.loo (reff 1) on every second "
             "stored draw of each chain. Max R-hat and min bulk ESS over every cell, the length "
             "scale, the variance and the fitted coefficients.")
    L.append("")

    # the verdicts, each from the rows
    others = [r for r in rows if r["job_id"] != best]
    beyond = [r for r in others if r["elpd_diff"] > 2 * r["dse"]]
    within = [r for r in others if r["elpd_diff"] <= 2 * r["dse"]]
    L.append(f"- **Best by elpd_loo: {name(rb)}** (WAIC's best: "
             f"{name(next(r for r in rows if r['job_id'] == best_waic))}). Behind it by more "
             "than 2 dse: " + (", ".join(f"{name(r)} ({r['elpd_diff']:.1f} ± {r['dse']:.1f})"
                                         for r in beyond) or "none")
             + "; within 2 dse: " + (", ".join(f"{name(r)} ({r['elpd_diff']:.1f} ± "
                                                f"{r['dse']:.1f})" for r in within) or "none")
             + ".")
    kernel_gaps = []
    for cov in COVARIATE_ORDER:
        m, s = R[(cov, "matern32")], R[(cov, "squared-exponential")]
        d, se = paired(points[m["job_id"]][0], points[s["job_id"]][0])
        km, ks = points[m["job_id"]][1], points[s["job_id"]][1]
        good = (km <= K_BAD) & (ks <= K_BAD)
        dg, seg = paired(points[m["job_id"]][0][good], points[s["job_id"]][0][good])
        kernel_gaps.append(f"{cov} {d:.1f} ± {se:.1f} ({dg:.1f} ± {seg:.1f} on the "
                           f"{int(good.sum())} cells reliable in both)")
    L.append("- **Kernel**, Matern 3/2 minus squared exponential with the same covariates "
             "(elpd_loo, paired se): " + "; ".join(kernel_gaps) + ".")
    cov_gaps = []
    for kernel in KERNEL_LABEL:
        ids = [r for r in rows if r["kernel"] == kernel]
        top = max(ids, key=lambda r: r["elpd_loo"])
        parts = []
        for r in ids:
            if r is top:
                continue
            d, se = paired(points[top["job_id"]][0], points[r["job_id"]][0])
            parts.append(f"{r['covariates']} {d:.1f} ± {se:.1f}"
                         + (" (beyond 2 se)" if d > 2 * se else ""))
        cov_gaps.append(f"{KERNEL_LABEL[kernel]}: {top['covariates']} best, ahead of "
                        + ", ".join(parts))
    L.append("- **Covariates**, within each kernel (the kernel's best minus each, paired se): "
             + "; ".join(cov_gaps) + ".")

    # the estimate against the number of draws
    agree = max(abs(r["elpd_loo_arviz_all_draws"] - r["elpd_loo"]) for r in rows)
    rise = [r["elpd_loo_arviz_half_draws"] - r["elpd_loo_arviz_all_draws"] for r in rows]
    half_gaps = []
    for cov in COVARIATE_ORDER:
        m, e = R[(cov, "matern32")], R[(cov, "squared-exponential")]
        half_gaps.append(f"{cov} {m['elpd_loo_arviz_half_draws'] - e['elpd_loo_arviz_half_draws']:.1f}")
    draws = {j["sampler_chains"] * j["cell_draws_per_chain"] for j in by_id.values()}
    assert len(draws) == 1, f"the models' LOO took different numbers of draws: {draws}"
    L.append(f"- **PSIS-LOO has not settled in the draws.** az.loo with reff 1 on the same "
             f"{draws.pop():,} draws gives fieldmc's elpd_loo within {agree:.1f}; on half of "
             "them every "
             f"model's elpd_loo is higher, by {min(rise):.1f} to {max(rise):.1f}: the estimate "
             "still falls as draws are added (more draws would likely lower every row further). "
             "The kernel gap at half the draws, Matern 3/2 minus squared exponential: "
             + "; ".join(half_gaps) + ".")

    # Monte Carlo spread of the estimate itself
    spread = []
    widest = 0.0
    for cov in COVARIATE_ORDER:
        vals = [r["elpd_loo"] for r in seed_table if r["run"] != "no data.covariates"
                and r["covariates"] == cov]
        widest = max(widest, max(vals) - min(vals))
        spread.append(f"{cov} " + ", ".join(f"{v:.1f}" for v in vals))
    nocov = [r for r in seed_table if r["run"] == "no data.covariates"]
    pinned = [r for r in seed_table if r["run"] != "no data.covariates"
              and r["covariates"] == "none"]
    waic_spread = max(max(v) - min(v) for v in (
        [r["elpd_waic"] for r in seed_table if r["run"] != "no data.covariates"
         and r["covariates"] == cov] for cov in COVARIATE_ORDER))
    L.append(f"- **Monte Carlo spread.** The squared-exponential jobs rerun at seeds "
             f"{', '.join(str(s) for s in a.seeds)} (the same data, model and budget; "
             f"`choice_seeds.csv`) give elpd_loo " + "; ".join(spread)
             + f": up to {widest:.1f} apart from the chains alone (WAIC up to "
             f"{waic_spread:.1f}), a spread that the dse (uncertainty over the cells, for "
             "fixed draws) does not include.")
    L.append("- **\"none\" is the model without covariates.** Elevation pinned at 0 "
             "(normal(0, 1e-9), posterior sd below 1e-8) at the three seeds: elpd_loo "
             + ", ".join(f"{r['elpd_loo']:.1f}" for r in pinned) + " (mean "
             f"{np.mean([r['elpd_loo'] for r in pinned]):.1f}); the same study without "
             "data.covariates: " + ", ".join(f"{r['elpd_loo']:.1f}" for r in nocov)
             + f" (mean {np.mean([r['elpd_loo'] for r in nocov]):.1f}); WAIC "
             f"{np.mean([r['elpd_waic'] for r in pinned]):.1f} against "
             f"{np.mean([r['elpd_waic'] for r in nocov]):.1f}.")

    # where the Pareto k are bad
    _, k_best, _, y = points[best]
    L.append("")
    L.append(f"Pareto k by the cell's count of trees (share of cells with k > {K_BAD}):")
    L.append("")
    L.append("| trees in the cell | cells | " + " | ".join(
        f"{r['covariates']}, {KERNEL_LABEL[r['kernel']]}" for r in rows) + " |")
    L.append("|---|---|" + "---|" * len(rows))
    for lo, hi in COUNT_CLASSES:
        m = (y >= lo) & (y <= (math.inf if hi is None else hi))
        text = f"{lo}" if hi == lo else (f"{lo}-{hi}" if hi is not None else f"{lo} or more")
        shares = []
        for r in rows:
            k = points[r["job_id"]][1]
            shares.append(f"{(k[m] > K_BAD).mean():.0%}")
        L.append(f"| {text} | {int(m.sum())} | " + " | ".join(shares) + " |")
    L.append("")
    bad_all = np.all([points[r["job_id"]][1] > K_BAD for r in rows], axis=0)
    bad_any = np.any([points[r["job_id"]][1] > K_BAD for r in rows], axis=0)
    L.append(f"- In every model the cells with k > {K_BAD} are the crowded ones: "
             f"{min(r['pareto_k_bad'] for r in rows)} to {max(r['pareto_k_bad'] for r in rows)} "
             f"of {len(y):,} cells, holding {min(r['bad_cells_tree_share'] for r in rows):.0%} "
             f"to {max(r['bad_cells_tree_share'] for r in rows):.0%} of the {int(y.sum()):,} "
             f"trees (median count {np.median(y[k_best > K_BAD]):.0f} in the best model's bad "
             f"cells against {np.median(y):.0f} over all cells); {int(bad_all.sum())} cells are "
             f"bad in all eight models, {int(bad_any.sum())} in at least one. Pareto k max "
             f"{min(r['pareto_k_max'] for r in rows):.2f} to "
             f"{max(r['pareto_k_max'] for r in rows):.2f}; p_loo "
             f"{min(r['p_loo'] for r in rows):.0f} to {max(r['p_loo'] for r in rows):.0f} of "
             f"{len(y):,} observations.")
    rhat = max(max(v for v in (r["cell_rhat_max"], r["hyper_rhat_max"], r["coef_rhat_max"])
                   if v is not None) for r in rows)
    ess = min(min(v for v in (r["cell_ess_bulk_min"], r["hyper_ess_bulk_min"],
                              r["coef_ess_bulk_min"]) if v is not None) for r in rows)
    pinned_rhat = max(by_id[r["job_id"]]["coef_elev_rhat"] for r in rows
                      if r["covariates"] == "none")
    L.append(f"- Convergence: max R-hat {rhat:.4f}, min bulk ESS {ess:,.0f} over every "
             f"job's cells, hyperparameters and fitted coefficients; "
             f"{sum(r['divergences'] for r in rows)} divergences after warmup. (The pinned "
             f"coefficient's draws are its prior's; its R-hat, up to {pinned_rhat:.4f}, is left "
             "out: it may cross 1.01 by chance, and the job then warns of it.)")
    write_markdown(os.path.join(a.results, "choice.md"), L)


if __name__ == "__main__":
    main()
