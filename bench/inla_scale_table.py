#!/usr/bin/env python3
"""The table of bench/inla_scale.sh: INLA's CPU seconds, Laplace fits and grid points at 32 x 32
and 64 x 64 on the sparse point patterns of studies/hyperparameters/inla_scale.toml, against
issue 46's bar (under 10 CPU seconds at 32 x 32, under a minute at 64 x 64), with the
hyperparameters' posterior means and sds so the two grids of one pattern can be compared.

Reads OUT/fieldmc/{jobs,inla_grid}.parquet; writes RESULTS/inla_scale.csv (one row per job) and
RESULTS/inla_scale.md. Needs polars.
"""
import argparse
import os

import polars as pl

from table_common import fmt, load_averages, measured, write_csv, write_markdown

HYPER = ["length_scale", "variance"]
BAR_SECONDS = {32: 10.0, 64: 60.0}
COLUMNS = (["pattern", "grid", "cells", "cpu_seconds", "bar_seconds", "meets_bar", "laplace_fits",
            "grid_points"]
           + [f"{h}_{s}" for h in HYPER for s in ("mean", "sd")] + ["warnings"])


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/inla_scale.sh's output directory")
    p.add_argument("--results", default="bench/results")
    return p.parse_args()


def pattern(path):
    """'finpines' from '../../data/finpines_grid64.csv'."""
    return os.path.basename(path).rsplit("_grid", 1)[0]


def rows(folder):
    jobs = pl.read_parquet(os.path.join(folder, "jobs.parquet"))
    points = pl.read_parquet(os.path.join(folder, "inla_grid.parquet")).group_by("job_id").len()
    jobs = jobs.join(points.rename({"len": "grid_points"}), on="job_id", how="left")
    out = []
    for job in jobs.sort(["data_path", "model_grid"]).iter_rows(named=True):
        grid = int(job["model_grid"])
        r = {"pattern": pattern(job["data_path"]), "grid": grid, "cells": grid * grid,
             "cpu_seconds": job["cpu_seconds"], "bar_seconds": BAR_SECONDS[grid],
             "laplace_fits": job["laplace_fits"], "grid_points": job["grid_points"],
             "warnings": job["warnings"] or ""}
        r["meets_bar"] = r["cpu_seconds"] < r["bar_seconds"]
        for h in HYPER:
            r[f"{h}_mean"], r[f"{h}_sd"] = job[f"hyper_{h}_mean"], job[f"hyper_{h}_sd"]
        out.append(r)
    return out


def main():
    a = args()
    table = rows(os.path.join(a.out, "fieldmc"))
    write_csv(os.path.join(a.results, "inla_scale.csv"), COLUMNS, table)
    threads = open(os.path.join(a.out, "threads.txt")).read().strip()
    before, after = load_averages(a.out)
    lines = [
        f"{measured('bench/inla_scale.sh', out=a.out)}; {threads} job(s) at once, each on one thread (CPU "
        f"seconds are the job's thread's); load average before {before}, after {after}. INLA "
        "with its defaults (the grid, simplified Laplace marginals), length scale and variance "
        "inferred, on three sparse point patterns at 32 x 32 and 64 x 64 "
        "(studies/hyperparameters/inla_scale.toml). The bar (issue 46): under 10 CPU seconds at "
        "32 x 32, under a minute at 64 x 64.",
        "",
        "| pattern | grid | CPU s | bar met | Laplace fits | grid points | length scale: mean (sd) "
        "| variance: mean (sd) | warnings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        hyper = [f"{fmt(r[f'{h}_mean'])} ({fmt(r[f'{h}_sd'])})" for h in HYPER]
        warned = "yes" if r["warnings"] else "none"
        lines.append(
            f"| {r['pattern']} | {r['grid']} x {r['grid']} | {fmt(r['cpu_seconds'])} | "
            f"{'yes' if r['meets_bar'] else 'no'} | {r['laplace_fits']} | {r['grid_points']} | "
            f"{hyper[0]} | {hyper[1]} | {warned} |")
    write_markdown(os.path.join(a.results, "inla_scale.md"), lines)


if __name__ == "__main__":
    main()
