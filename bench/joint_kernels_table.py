#!/usr/bin/env python3
"""The table of bench/joint_kernels.sh: the joint chain (sampler.hyper = "joint") with the
squared-exponential, exponential and Matern 3/2 kernels on the grids of
studies/hyperparameters/joint_kernels.toml.

Reads OUT/fieldmc/jobs.parquet and OUT/load_*.txt; writes RESULTS/joint_kernels.csv (one row per
job) and RESULTS/joint_kernels.md (the table and the sentences, from the same numbers). A
circulant chain's torus and the length scale it truncates the prior at are read from the job's
warning, when it gives one. Needs polars.
"""
import argparse
import csv
import datetime
import os
import re
import subprocess

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

HYPER = ["length_scale", "variance", "mean"]
TRUNCATION = re.compile(r"(\d+) x (\d+) torus embeds the \S+ kernel only up to length scale "
                        r"([0-9.]+), ([0-9.-]+) prior sds")
COLUMNS = (["grid", "likelihood", "kernel", "cpu_seconds", "max_rhat", "min_ess_bulk", "worst",
            "length_scale_ess_per_cpu_second", "torus", "truncated_at", "truncated_at_prior_sds",
            "divergences"]
           + [f"{h}_{s}" for h in HYPER for s in ("mean", "sd", "ess_bulk", "rhat")])


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/joint_kernels.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()


def rows(out):
    jobs = pl.read_parquet(os.path.join(out, "fieldmc", "jobs.parquet"))
    chains = pl.read_parquet(os.path.join(out, "fieldmc", "chains.parquet"))
    divergences = dict(chains.group_by("job_id").agg(pl.col("divergences").sum()).iter_rows())
    table = []
    for job in jobs.iter_rows(named=True):
        r = {"grid": os.path.basename(job["data_path"]).removesuffix(".csv"),
             "likelihood": job["model_likelihood"], "kernel": job["model_kernel"],
             "cpu_seconds": job["cpu_seconds"], "divergences": divergences[job["job_id"]]}
        measures = {"cells": (job["cell_rhat_max"], job["cell_ess_bulk_min"])}
        for h in HYPER:
            for s in ("mean", "sd", "ess_bulk", "rhat"):
                r[f"{h}_{s}"] = job[f"hyper_{h}_{s}"]
            measures[h.replace("_", " ")] = (r[f"{h}_rhat"], r[f"{h}_ess_bulk"])
        r["max_rhat"] = max(m[0] for m in measures.values())
        r["min_ess_bulk"] = min(m[1] for m in measures.values())
        r["worst"] = min(measures, key=lambda k: measures[k][1])
        r["length_scale_ess_per_cpu_second"] = r["length_scale_ess_bulk"] / r["cpu_seconds"]
        found = TRUNCATION.search(job["warnings"] or "")
        r["torus"] = f"{found.group(1)} x {found.group(2)}" if found else ""
        r["truncated_at"] = float(found.group(3)) if found else ""
        r["truncated_at_prior_sds"] = float(found.group(4)) if found else ""
        table.append(r)
    return table


def main():
    a = args()
    table = rows(a.out)
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "joint_kernels.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for r in table:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    version = subprocess.run([a.fieldmc, "--version"], capture_output=True, text=True).stdout.strip()
    cores, model = machine()
    load = load_averages(a.out)
    lines = [
        f"Measured {datetime.date.today()} by `bench/joint_kernels.sh` on commit {git_commit()} "
        f"({version}); {cores} cores, {model}; load average before {load[0]}, after {load[1]}. "
        "One thread on one core; 4 chains x (1,000 warmup + 1,000 draws) per job; CPU seconds of "
        "the whole job.",
        "",
        "| grid | kernel | CPU s | max R-hat | min bulk ESS (where) | divergences | "
        "length scale ESS / CPU s | length scale mean (sd) | "
        "prior truncated at (prior sds above the median; torus) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        truncation = (f"{fmt(r['truncated_at'])} ({r['truncated_at_prior_sds']:.1f}; "
                      f"{r['torus']})" if r["torus"] else "—")
        lines.append(
            f"| {r['grid']} ({r['likelihood']}) | {r['kernel']} | {fmt(r['cpu_seconds'])} | "
            f"{fmt(r['max_rhat'], 4)} | {fmt(r['min_ess_bulk'])} ({r['worst']}) | "
            f"{r['divergences']} | {fmt(r['length_scale_ess_per_cpu_second'])} | "
            f"{fmt(r['length_scale_mean'])} ({fmt(r['length_scale_sd'])}) | {truncation} |")
    lines.append("")
    for grid in dict.fromkeys(r["grid"] for r in table):
        of = {r["kernel"]: r for r in table if r["grid"] == grid}
        base = of.get("squared-exponential")
        if base is None:
            continue
        costs = ", ".join(f"{k} {r['cpu_seconds'] / base['cpu_seconds']:.1f}x"
                          for k, r in of.items() if k != "squared-exponential")
        lines.append(f"- **{grid}**: CPU seconds against the squared exponential's: {costs}.")
    with open(os.path.join(a.results, "joint_kernels.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
