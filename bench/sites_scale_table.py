#!/usr/bin/env python3
"""The table of bench/sites_scale.sh: 100,000 sites on a 256 x 256 grid.

Reads OUT/time.log (/usr/bin/time -v), OUT/run/{jobs,chains,sites}.parquet and OUT/load_*.txt;
writes RESULTS/sites_scale.csv (one row: the measurements) and RESULTS/sites_scale.md (the
sentences generated from it). Needs polars.
"""
import argparse
import csv
import os
import re

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

COLUMNS = ["sites", "held_out", "cells", "sampler", "chains", "iterations", "burn_in",
           "wall_seconds", "cpu_seconds", "peak_rss_mb", "gradient_evaluations",
           "cpu_ms_per_gradient", "cell_ess_bulk_min", "cell_rhat_max", "heldout_lpd",
           "site_rhat_max", "warnings"]


def time_log(path):
    text = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    parts = [float(p) for p in wall.split(":")]
    seconds = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    user = float(re.search(r"User time \(seconds\): (\S+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): (\S+)", text).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    return seconds, user + system, rss / 1024


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc")
    a = p.parse_args()
    wall, cpu, rss = time_log(os.path.join(a.out, "time.log"))
    job = pl.read_parquet(os.path.join(a.out, "run", "jobs.parquet")).row(0, named=True)
    assert job["status"] == "ok", job["error"]
    chains = pl.read_parquet(os.path.join(a.out, "run", "chains.parquet"))
    sites = pl.read_parquet(os.path.join(a.out, "run", "sites.parquet"))
    gradients = int(chains["gradient_evaluations"].sum())
    row = {"sites": job["observed_sites"] + job["held_out_sites"],
           "held_out": job["held_out_sites"], "cells": 256 * 256,
           "sampler": job["sampler_kind"], "chains": job["sampler_chains"],
           "iterations": job["sampler_iterations"], "burn_in": job["sampler_burn_in"],
           "wall_seconds": wall, "cpu_seconds": cpu, "peak_rss_mb": rss,
           "gradient_evaluations": gradients,
           "cpu_ms_per_gradient": 1000 * job["cpu_seconds"] / max(gradients, 1),
           "cell_ess_bulk_min": job["cell_ess_bulk_min"], "cell_rhat_max": job["cell_rhat_max"],
           "heldout_lpd": job["heldout_lpd"], "site_rhat_max": sites["rhat"].max(),
           "warnings": job["warnings"] or ""}
    os.makedirs(a.results, exist_ok=True)
    path = os.path.join(a.results, "sites_scale.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    with open(path, newline="") as fh:
        r = next(csv.DictReader(fh))
    f = lambda k: float(r[k])
    cores, model = machine()
    load = load_averages(a.out)
    lines = [
        f"Measured by `bench/sites_scale.sh` on commit {git_commit(a.out)}; {cores} cores, "
        f"{model}; load average before {load[0]}, after {load[1]}. Numbers: "
        "`bench/results/sites_scale.csv`.",
        "",
        f"- {int(f('sites')):,} measurements ({int(f('held_out')):,} held out) on a 256 x 256 "
        f"grid ({int(f('cells')):,} cells), the default sampler `{r['sampler']}`, "
        f"{r['chains']} chains x {r['iterations']} iterations ({r['burn_in']} burn-in), both "
        f"cores: {fmt(f('wall_seconds'))} s wall, {fmt(f('cpu_seconds'))} CPU s, peak memory "
        f"{fmt(f('peak_rss_mb'))} MB.",
        f"- {int(f('gradient_evaluations')):,} gradient evaluations, "
        f"{fmt(f('cpu_ms_per_gradient'))} CPU ms each on average (the job's CPU time over its "
        "gradients, setup and the Laplace fit included).",
        f"- Converged: largest cell R-hat {fmt(f('cell_rhat_max'), 4)}, smallest cell bulk ESS "
        f"{fmt(f('cell_ess_bulk_min'))}, largest R-hat at a site {fmt(f('site_rhat_max'), 4)}; "
        f"held-out log predictive density {fmt(f('heldout_lpd'))} per measurement"
        + (f"; warnings: {r['warnings']}" if r["warnings"] else "; no warning") + ".",
    ]
    with open(os.path.join(a.results, "sites_scale.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
