#!/usr/bin/env python3
"""The table of bench/inla_starts.sh: INLA's mode of log p~(theta | y) from 20 starts per grid.

Reads OUT/<grid>/jobs.parquet and OUT/<grid>/inla_grid.parquet (written by bench/inla_starts.sh):
each job's start (the model's length scale and variance, which the study sets), its mode (the
grid point of highest log p~; the grid is built around the mode), its posterior means and its CPU
time. Writes RESULTS/inla_starts.csv (one row per job) and RESULTS/inla_starts.md (per grid: the
spread of the 20 modes in units of the posterior sd, and the cost). Needs polars.
"""
import argparse
import csv
import datetime
import math
import os
import subprocess

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

GRIDS = ["hickory", "finpines"]
COLUMNS = ["grid", "job_id", "start_length_scale", "start_variance", "mode_length_scale",
           "mode_variance", "post_mean_length_scale", "post_mean_variance", "post_sd_length_scale",
           "post_sd_variance", "laplace_fits", "cpu_seconds", "warnings"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc")
    return p.parse_args()


def rows_of(out, grid):
    jobs = pl.read_parquet(os.path.join(out, grid, "jobs.parquet"))
    points = pl.read_parquet(os.path.join(out, grid, "inla_grid.parquet"))
    rows = []
    for j in jobs.iter_rows(named=True):
        best = (points.filter(pl.col("job_id") == j["job_id"])
                .sort("log_density", descending=True).row(0, named=True))
        rows.append({
            "grid": grid, "job_id": j["job_id"],
            "start_length_scale": j["model_length_scale"], "start_variance": j["model_variance"],
            "mode_length_scale": best["length_scale"], "mode_variance": best["variance"],
            "post_mean_length_scale": j["hyper_length_scale_mean"],
            "post_mean_variance": j["hyper_variance_mean"],
            "post_sd_length_scale": j["hyper_length_scale_sd"],
            "post_sd_variance": j["hyper_variance_sd"],
            "laplace_fits": j["laplace_fits"], "cpu_seconds": j["cpu_seconds"],
            "warnings": j["warnings"] or "",
        })
    return rows


def spread(rows, key, sd_key):
    """max - min of a column over the starts, in units of the median posterior sd of its log
    (sd / mean, the delta method), since the search runs on log scales."""
    values = [math.log(r[key]) for r in rows]
    scale = sorted(r[sd_key] / r[key.replace("mode", "post_mean")] for r in rows)[len(rows) // 2]
    return (max(values) - min(values)) / scale


def main():
    a = args()
    rows = [r for grid in GRIDS for r in rows_of(a.out, grid)]
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "inla_starts.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    commit = git_commit()
    cores, _ = machine()
    load = load_averages(a.out)
    lines = [
        f"Measured {datetime.date.today()} by `bench/inla_starts.sh` on commit {commit}; "
        f"{cores} cores, load average before {load[0]}, after {load[1]}.",
        "",
        "| grid | starts | modes' spread: log length scale / log variance (posterior sds) | mode: length scale, variance | CPU s per start: min, median, max | Laplace fits per start (median) | warnings |",
        "|---|---|---|---|---|---|---|",
    ]
    for grid in GRIDS:
        rs = [r for r in rows if r["grid"] == grid]
        cpu = sorted(r["cpu_seconds"] for r in rs)
        fits = sorted(r["laplace_fits"] for r in rs)
        modes = sorted((r["mode_length_scale"], r["mode_variance"]) for r in rs)
        warned = sum(bool(r["warnings"]) for r in rs)
        lines.append(
            f"| {grid} | {len(rs)} | {spread(rs, 'mode_length_scale', 'post_sd_length_scale'):.2g} / "
            f"{spread(rs, 'mode_variance', 'post_sd_variance'):.2g} | "
            f"{fmt(modes[len(modes) // 2][0])}, {fmt(modes[len(modes) // 2][1])} | "
            f"{fmt(cpu[0])}, {fmt(cpu[len(cpu) // 2])}, {fmt(cpu[-1])} | {fits[len(fits) // 2]} | "
            f"{warned} of {len(rs)} |")
    with open(os.path.join(a.results, "inla_starts.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
