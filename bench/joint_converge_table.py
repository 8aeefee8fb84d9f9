#!/usr/bin/env python3
"""The table of bench/joint_converge.sh: the joint chain (sampler.hyper = "joint") run to
convergence on the grids of studies/hyperparameters/joint_converge.toml, against the issue's bar
(largest R-hat <= 1.01 and smallest bulk ESS >= 400 over the hyperparameters and every cell, under
120 CPU seconds a job, the hyperparameters' means within 0.5 posterior sd of INLA's where INLA
applies: where its own check of the Laplace evidence, src/sampler/inla_check.rs, does not say
"INLA does not apply here").

Reads OUT/fieldmc/jobs.parquet, OUT/fieldmc/inla_grid.parquet (the check of INLA's Laplace
evidence at its heaviest points) and OUT/load_*.txt; writes RESULTS/joint_converge.csv (one row per
grid and replicate) and RESULTS/joint_converge.md (the table, one row per replicate, and a
sentence per grid over its replicates, from the same numbers). Needs polars.
"""
import argparse
import csv
import datetime
import os
import subprocess

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

HYPER = ["length_scale", "variance", "mean"]
RHAT_BAR, ESS_BAR, CPU_BAR, INLA_BAR = 1.01, 400.0, 120.0, 0.5
COLUMNS = (["grid", "replicate", "likelihood", "cpu_seconds", "chains", "draws_per_chain", "max_rhat",
            "min_ess_bulk", "worst", "divergences"]
           + [f"{h}_{s}" for h in HYPER for s in ("mean", "sd", "ess_bulk", "rhat", "inla_mean",
                                                   "inla_gap_sd")]
           + ["cell_ess_bulk_min", "cell_rhat_max", "meets_bar", "inla_cpu_seconds", "inla_applies",
              "inla_grid_cut", "inla_grid_points", "inla_laplace_error_min", "inla_laplace_error_max",
              "inla_importance_effective_draws_min", "inla_length_scale_max"])
# The phrases of INLA's warnings (src/sampler/inla_check.rs, src/families/latent_field/warnings.rs).
INLA_DOES_NOT_APPLY = "INLA does not apply here"
INLA_GRID_CUT = "INLA: the grid was cut"


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/joint_converge.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()


def replicate_row(path, chain, inla, divergences):
    """One replicate's chain against the bar (with its divergent trajectories after burn-in,
    summed over its chains), and INLA's distance from it."""
    r = {"grid": os.path.basename(path).removesuffix(".csv"), "replicate": chain["replicate"],
         "divergences": divergences[chain["job_id"]],
         "likelihood": chain["model_likelihood"], "cpu_seconds": chain["cpu_seconds"],
         "chains": chain["sampler_chains"],
         "draws_per_chain": chain["sampler_iterations"] - chain["sampler_burn_in"],
         "cell_ess_bulk_min": chain["cell_ess_bulk_min"],
         "cell_rhat_max": chain["cell_rhat_max"],
         "inla_cpu_seconds": inla["cpu_seconds"],
         "inla_applies": INLA_DOES_NOT_APPLY not in (inla["warnings"] or ""),
         "inla_grid_cut": INLA_GRID_CUT in (inla["warnings"] or "")}
    measures = {"cells": (chain["cell_rhat_max"], chain["cell_ess_bulk_min"])}
    for h in HYPER:
        r[f"{h}_mean"] = chain[f"hyper_{h}_mean"]
        r[f"{h}_sd"] = chain[f"hyper_{h}_sd"]
        r[f"{h}_ess_bulk"] = chain[f"hyper_{h}_ess_bulk"]
        r[f"{h}_rhat"] = chain[f"hyper_{h}_rhat"]
        r[f"{h}_inla_mean"] = inla[f"hyper_{h}_mean"]
        r[f"{h}_inla_gap_sd"] = abs(r[f"{h}_mean"] - r[f"{h}_inla_mean"]) / r[f"{h}_sd"]
        measures[h.replace("_", " ")] = (r[f"{h}_rhat"], r[f"{h}_ess_bulk"])
    r["max_rhat"] = max(m[0] for m in measures.values())
    r["min_ess_bulk"] = min(m[1] for m in measures.values())
    r["worst"] = min(measures, key=lambda k: measures[k][1])
    r["meets_bar"] = (r["max_rhat"] <= RHAT_BAR and r["min_ess_bulk"] >= ESS_BAR
                      and r["cpu_seconds"] < CPU_BAR)
    return r


def inla_check(grid, job_id):
    """INLA's grid size and reach in the length scale, and its Laplace check (the checked points'
    errors and effective draws)."""
    points = grid.filter(pl.col("job_id") == job_id)
    checked = points.filter(pl.col("laplace_error").is_not_null())
    return {"inla_grid_points": points.height,
            "inla_length_scale_max": points["length_scale"].max(),
            "inla_laplace_error_min": checked["laplace_error"].min(),
            "inla_laplace_error_max": checked["laplace_error"].max(),
            "inla_importance_effective_draws_min": checked["importance_effective_draws"].min()}


def rows(out):
    """Per grid, one row per replicate of the chain (each its own seeds), INLA's fit beside."""
    jobs = pl.read_parquet(os.path.join(out, "fieldmc", "jobs.parquet"))
    inla_grid = pl.read_parquet(os.path.join(out, "fieldmc", "inla_grid.parquet"))
    chain_rows = pl.read_parquet(os.path.join(out, "fieldmc", "chains.parquet"))
    divergences = dict(chain_rows.group_by("job_id").agg(pl.col("divergences").sum()).iter_rows())
    table = []
    for path in jobs["data_path"].unique(maintain_order=True):
        grid = jobs.filter(pl.col("data_path") == path)
        inla = grid.filter(pl.col("sampler_kind") == "inla").row(0, named=True)
        chains = grid.filter(pl.col("sampler_hyper") == "joint").sort("replicate")
        check = inla_check(inla_grid, inla["job_id"])
        table.extend(replicate_row(path, chain, inla, divergences) | check
                     for chain in chains.iter_rows(named=True))
    return table


def threads(out):
    """How the jobs ran, from bench/joint_converge.sh's OUT/threads.txt."""
    path = os.path.join(out, "threads.txt")
    n = int(open(path).read().strip()) if os.path.exists(path) else 1
    return ("One thread on one core" if n == 1
            else f"{n} jobs at once, each on one thread of {n} pinned cores")


def main():
    a = args()
    table = rows(a.out)
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "joint_converge.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for r in table:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    version = subprocess.run([a.fieldmc, "--version"], capture_output=True, text=True).stdout.strip()
    cores, model = machine()
    load = load_averages(a.out)
    r0 = table[0]
    lines = [
        f"Measured {datetime.date.today()} by `bench/joint_converge.sh` on commit {git_commit(a.out)} "
        f"({version}); {cores} cores, {model}; load average before {load[0]}, after {load[1]}. "
        f"{threads(a.out)}; {r0['chains']} chains x (1,000 warmup + "
        f"{r0['draws_per_chain']:,} draws) per job, each job in every replicate (its own seeds); "
        "CPU seconds of the whole job (its thread's).",
        "",
        "| grid | replicate | CPU s | max R-hat | min bulk ESS (where) | divergences | "
        "length scale mean (sd) / INLA | variance mean (sd) / INLA | mean mean (sd) / INLA | bar met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        hyper = " | ".join(f"{fmt(r[f'{h}_mean'])} ({fmt(r[f'{h}_sd'])}) / {fmt(r[f'{h}_inla_mean'])}"
                           for h in HYPER)
        lines.append(
            f"| {r['grid']} ({r['likelihood']}) | {r['replicate']} | {fmt(r['cpu_seconds'])} | "
            f"{fmt(r['max_rhat'], 4)} | {fmt(r['min_ess_bulk'])} ({r['worst']}) | "
            f"{r['divergences']:,} | {hyper} | "
            f"{'yes' if r['meets_bar'] else 'no'} |")
    lines.append("")
    for grid in dict.fromkeys(r["grid"] for r in table):
        reps = [r for r in table if r["grid"] == grid]
        met = sum(r["meets_bar"] for r in reps)
        gaps = ", ".join(f"{h.replace('_', ' ')} {max(r[f'{h}_inla_gap_sd'] for r in reps):.2f}"
                         for h in HYPER)
        beyond = [h.replace("_", " ") for h in HYPER
                  if max(r[f"{h}_inla_gap_sd"] for r in reps) > INLA_BAR]
        agreement = (f"within {INLA_BAR} for every one" if not beyond
                     else f"beyond {INLA_BAR} for the {', '.join(beyond)}")
        if not reps[0]["inla_applies"]:
            agreement += (" (INLA's check of its Laplace evidence says INLA does not apply here: "
                          "not held to the bar)")
        if reps[0]["inla_grid_cut"]:
            agreement += "; INLA's grid was cut before the threshold along some axis (its warning)"
        r = reps[0]
        agreement += (f"; INLA took {r['inla_cpu_seconds']:.0f} CPU s and kept "
                      f"{r['inla_grid_points']:,} grid points, reaching length scale "
                      f"{r['inla_length_scale_max']:.3g}; its Laplace check: errors "
                      f"{r['inla_laplace_error_min']:.2f} to {r['inla_laplace_error_max']:.2f} nats, "
                      f"at least {r['inla_importance_effective_draws_min']:.1f} effective draws at a "
                      "point")
        lines.append(
            f"- **{grid}**: {met} of {len(reps)} replicates meet the bar (R-hat <= {RHAT_BAR}, bulk "
            f"ESS >= {ESS_BAR:.0f} for every hyperparameter and cell, under {CPU_BAR:.0f} CPU s): "
            f"largest R-hat {max(r['max_rhat'] for r in reps):.4f}, smallest bulk ESS "
            f"{min(r['min_ess_bulk'] for r in reps):.0f}, {min(r['cpu_seconds'] for r in reps):.1f}-"
            f"{max(r['cpu_seconds'] for r in reps):.1f} CPU s. INLA's means lie from the chains' "
            f"(in the chain's posterior sds, largest over the replicates) {gaps}: {agreement}.")
    with open(os.path.join(a.results, "joint_converge.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
