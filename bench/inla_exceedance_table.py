#!/usr/bin/env python3
"""The table of bench/inla_exceedance.sh: INLA's risk map (each cell's P(relative risk > t |
data)) against the chains' on the covariates study, in units of the chains' Monte Carlo error.

The chains' estimate of a cell is the mean over the R replicates; its standard error the
replicates' sd over sqrt(R) (R - 1 degrees of freedom), floored at half a draw's share of the
replicates' kept draws (a cell every draw puts on one side has no spread). INLA's map is exact
up to its approximation, so within t(R - 1) standard errors (97.5 % quantile) for about 95 % of
the cells is what agreement "within Monte Carlo error" looks like.

Reads OUT/chains/{jobs,fields}.parquet and OUT/inla/{jobs,fields}.parquet; writes
RESULTS/inla_exceedance.csv (one row per threshold and strategy) and RESULTS/inla_exceedance.md.
Needs polars.
"""
import argparse
import datetime
import math
import os

import polars as pl

from table_common import fmt, git_commit, load_averages, machine, write_csv

# t(R - 1) 97.5 % quantiles for the replicate counts the script runs.
T975 = {3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}
COLUMNS = ["threshold", "strategy", "cells", "replicates", "kept_draws_per_replicate",
           "inla_cpu_seconds", "chain_cpu_seconds", "within_t", "within_2se",
           "within_replicate", "gap_median", "gap_max", "z_median", "z_max"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/inla_exceedance.sh's output directory")
    p.add_argument("--results", default="bench/results")
    return p.parse_args()


def load(folder):
    return (pl.read_parquet(os.path.join(folder, "jobs.parquet")),
            pl.read_parquet(os.path.join(folder, "fields.parquet")))


def main():
    a = args()
    cjobs, cfields = load(os.path.join(a.out, "chains"))
    ijobs, ifields = load(os.path.join(a.out, "inla"))
    columns = [c for c in cfields.columns if c.startswith("exceedance_")]
    replicates = cjobs.height
    kept = int(cjobs["sampler_iterations"][0] - cjobs["sampler_burn_in"][0]) * int(
        cjobs["sampler_chains"][0])
    floor = 0.5 / (replicates * kept)
    t = T975[replicates]
    rows = []
    for column in columns:
        chains = cfields.group_by("cell").agg(
            pl.col(column).mean().alias("p"),
            (pl.col(column).std() / math.sqrt(replicates)).alias("se"))
        for job in ijobs.iter_rows(named=True):
            inla = ifields.filter(pl.col("job_id") == job["job_id"]).select(
                "cell", pl.col(column).alias("inla"))
            both = chains.join(inla, on="cell").with_columns(
                (pl.col("inla") - pl.col("p")).abs().alias("gap"),
                pl.max_horizontal(pl.col("se"), pl.lit(floor)).alias("se"))
            both = both.with_columns((pl.col("gap") / pl.col("se")).alias("z"))
            rows.append({
                "threshold": float(column.removeprefix("exceedance_")),
                "strategy": job["sampler_inla_strategy"], "cells": both.height,
                "replicates": replicates, "kept_draws_per_replicate": kept,
                "inla_cpu_seconds": job["cpu_seconds"],
                "chain_cpu_seconds": cjobs["cpu_seconds"].mean(),
                "within_t": (both["z"] <= t).mean(), "within_2se": (both["z"] <= 2).mean(),
                # As close as one replicate's estimate is to the truth (its sd is the mean's
                # standard error times sqrt(R)).
                "within_replicate": (both["z"] <= t * math.sqrt(replicates)).mean(),
                "gap_median": both["gap"].median(), "gap_max": both["gap"].max(),
                "z_median": both["z"].median(), "z_max": both["z"].max()})
    os.makedirs(a.results, exist_ok=True)
    write_csv(os.path.join(a.results, "inla_exceedance.csv"), COLUMNS, rows)
    before, after = load_averages(a.out)
    cores, model = machine()
    threads = open(os.path.join(a.out, "threads.txt")).read().strip()
    lines = [
        f"Measured {datetime.date.today()} by `bench/inla_exceedance.sh` on commit "
        f"{git_commit(a.out)}; {cores} cores, {model}; {threads} job(s) at once, each on one "
        f"thread; load average before {before}, after {after}. The covariates study with length "
        f"scale and variance inferred (studies/lgcp/covariates_inla.toml: bei trees, elevation "
        f"and slope, 32 x 32, the risk map's thresholds of studies/lgcp/covariates.toml) by the "
        f"joint chain in {replicates} replicates of {kept:,} kept draws, and by INLA (the "
        f"spatial field's marginals by each strategy). Per cell, \"gap\" is |INLA's P(relative risk > t) "
        f"- the replicates' mean|, \"z\" the gap in standard errors of that mean (the "
        f"replicates' sd / sqrt({replicates})); \"within t\" the share of cells with z at most "
        f"t({replicates - 1}) 97.5 % = {t} (about 95 % if INLA were exact), \"within a "
        f"replicate\" the share within t of one replicate's sd (INLA as close to the chains' "
        f"answer as one replicate of {kept:,} draws is).",
        "",
        "| threshold | INLA marginals | INLA CPU s | chain CPU s (a replicate) | cells within t "
        "(within 2 se) | cells within a replicate | gap median (max) | z median (max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {fmt(r['threshold'])} | {r['strategy']} | {fmt(r['inla_cpu_seconds'])} | "
            f"{fmt(r['chain_cpu_seconds'])} | {r['within_t']:.1%} ({r['within_2se']:.1%}) | "
            f"{r['within_replicate']:.1%} | "
            f"{fmt(r['gap_median'], 2)} ({fmt(r['gap_max'], 2)}) | {fmt(r['z_median'], 2)} "
            f"({fmt(r['z_max'], 2)}) |")
    with open(os.path.join(a.results, "inla_exceedance.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
