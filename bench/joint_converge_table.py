#!/usr/bin/env python3
"""The table of bench/joint_converge.sh: the joint chain (sampler.hyper = "joint") run to
convergence on the grids of studies/hyperparameters/joint_converge.toml, against the issue's bar
(largest R-hat <= 1.01 and smallest bulk ESS >= 400 over the hyperparameters and every cell, under
120 CPU seconds a job, the hyperparameters' means within 0.5 posterior sd of INLA's).

Reads OUT/fieldmc/jobs.parquet and OUT/load_*.txt; writes RESULTS/joint_converge.csv (one row per
grid) and RESULTS/joint_converge.md (the table and the sentences, from the same numbers). Needs
polars.
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
COLUMNS = (["grid", "likelihood", "cpu_seconds", "chains", "draws_per_chain", "max_rhat",
            "min_ess_bulk", "worst"]
           + [f"{h}_{s}" for h in HYPER for s in ("mean", "sd", "ess_bulk", "rhat", "inla_mean",
                                                   "inla_gap_sd")]
           + ["cell_ess_bulk_min", "cell_rhat_max", "meets_bar"])


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/joint_converge.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()


def rows(out):
    jobs = pl.read_parquet(os.path.join(out, "fieldmc", "jobs.parquet"))
    table = []
    for path in jobs["data_path"].unique(maintain_order=True):
        grid = jobs.filter(pl.col("data_path") == path)
        chain = grid.filter(pl.col("sampler_hyper") == "joint").row(0, named=True)
        inla = grid.filter(pl.col("sampler_kind") == "inla").row(0, named=True)
        r = {"grid": os.path.basename(path).removesuffix(".csv"),
             "likelihood": chain["model_likelihood"], "cpu_seconds": chain["cpu_seconds"],
             "chains": chain["sampler_chains"],
             "draws_per_chain": chain["sampler_iterations"] - chain["sampler_burn_in"],
             "cell_ess_bulk_min": chain["cell_ess_bulk_min"],
             "cell_rhat_max": chain["cell_rhat_max"]}
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
        table.append(r)
    return table


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
        f"Measured {datetime.date.today()} by `bench/joint_converge.sh` on commit {git_commit()} "
        f"({version}); {cores} cores, {model}; load average before {load[0]}, after {load[1]}. "
        f"One thread on one core; {r0['chains']} chains x (1,000 warmup + "
        f"{r0['draws_per_chain']:,} draws) per job; CPU seconds of the whole job.",
        "",
        "| grid | CPU s | max R-hat | min bulk ESS (where) | length scale mean (sd) / INLA | "
        "variance mean (sd) / INLA | mean mean (sd) / INLA | bar met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        hyper = " | ".join(f"{fmt(r[f'{h}_mean'])} ({fmt(r[f'{h}_sd'])}) / {fmt(r[f'{h}_inla_mean'])}"
                           for h in HYPER)
        lines.append(
            f"| {r['grid']} ({r['likelihood']}) | {fmt(r['cpu_seconds'])} | "
            f"{fmt(r['max_rhat'], 4)} | {fmt(r['min_ess_bulk'])} ({r['worst']}) | {hyper} | "
            f"{'yes' if r['meets_bar'] else 'no'} |")
    lines.append("")
    for r in table:
        gaps = ", ".join(f"{h.replace('_', ' ')} {r[f'{h}_inla_gap_sd']:.2f}" for h in HYPER)
        beyond = [h.replace("_", " ") for h in HYPER if r[f"{h}_inla_gap_sd"] > INLA_BAR]
        agreement = (f"within {INLA_BAR} for every one" if not beyond
                     else f"beyond {INLA_BAR} for the {', '.join(beyond)}")
        verdict = ("meets" if r["meets_bar"] else "misses")
        lines.append(
            f"- **{r['grid']}**: {verdict} the bar (R-hat <= {RHAT_BAR}, bulk ESS >= {ESS_BAR:.0f} "
            f"for every hyperparameter and cell, under {CPU_BAR:.0f} CPU s): largest R-hat "
            f"{r['max_rhat']:.4f}, smallest bulk ESS {r['min_ess_bulk']:.0f} ({r['worst']}), "
            f"{r['cpu_seconds']:.1f} CPU s. INLA's means lie from the chain's (in the chain's "
            f"posterior sds) {gaps}: {agreement}.")
    with open(os.path.join(a.results, "joint_converge.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
