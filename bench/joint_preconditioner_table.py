#!/usr/bin/env python3
"""The table of bench/joint_preconditioner.sh: the joint chain (sampler.hyper = "joint") with and
without its Laplace preconditioner on the grids of
studies/hyperparameters/joint_preconditioner.toml, three replicates each.

Reads OUT/fieldmc/{jobs,chains}.parquet and OUT/load_*.txt; writes RESULTS/NAME.csv (one
row per job) and RESULTS/NAME.md (per grid and setting: the median over the
replicates of each measure, and the worst R-hat). Needs polars.
"""
import argparse
import csv
import os
import statistics
import tomllib

import polars as pl

from table_common import fmt, load_averages, measured

SETTINGS = ["laplace", "none"]
COLUMNS = ["grid", "likelihood", "preconditioner", "replicate", "cpu_seconds", "step_size",
           "mean_leapfrog_steps", "divergences", "length_scale_ess_bulk", "length_scale_rhat",
           "variance_ess_bulk", "variance_rhat", "cell_ess_bulk_min", "cell_rhat_max",
           "length_scale_ess_per_cpu_second", "cell_ess_per_cpu_second"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/joint_preconditioner.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--name", default="joint_preconditioner", help="the results' file name")
    return p.parse_args()


def job_rows(out):
    jobs = pl.read_parquet(os.path.join(out, "fieldmc", "jobs.parquet"))
    failed = jobs.filter(pl.col("status") != "ok")
    assert failed.height == 0, failed.select("job_id", "status", "error").rows()
    chains = (pl.read_parquet(os.path.join(out, "fieldmc", "chains.parquet"))
              .group_by("job_id")
              .agg(pl.col("mean_leapfrog_steps").mean(), pl.col("divergences").sum()))
    jobs = jobs.join(chains, on="job_id", how="left")
    rows = []
    for j in jobs.sort("data_path", "sampler_hyper_preconditioner", "replicate").iter_rows(named=True):
        cpu = j["cpu_seconds"]
        rows.append({
            "grid": os.path.basename(j["data_path"]).removesuffix(".csv"),
            "likelihood": j["model_likelihood"],
            "preconditioner": j["sampler_hyper_preconditioner"],
            "replicate": j["replicate"],
            "cpu_seconds": cpu,
            "step_size": j["step_size"],
            "mean_leapfrog_steps": j["mean_leapfrog_steps"],
            "divergences": j["divergences"],
            "length_scale_ess_bulk": j["hyper_length_scale_ess_bulk"],
            "length_scale_rhat": j["hyper_length_scale_rhat"],
            "variance_ess_bulk": j["hyper_variance_ess_bulk"],
            "variance_rhat": j["hyper_variance_rhat"],
            "cell_ess_bulk_min": j["cell_ess_bulk_min"],
            "cell_rhat_max": j["cell_rhat_max"],
            "length_scale_ess_per_cpu_second": j["hyper_length_scale_ess_bulk"] / cpu,
            "cell_ess_per_cpu_second": j["cell_ess_bulk_min"] / cpu,
        })
    return rows


MEDIANS = [("cpu_seconds", "CPU s"), ("mean_leapfrog_steps", "leapfrogs / draw"),
           ("step_size", "step size"), ("length_scale_ess_bulk", "length scale ESS"),
           ("cell_ess_bulk_min", "worst cell ESS"),
           ("length_scale_ess_per_cpu_second", "ESS/s: length scale"),
           ("cell_ess_per_cpu_second", "ESS/s: worst cell")]


def markdown(rows, out, study):
    before, after = load_averages(out)
    lines = [f"{measured('bench/joint_preconditioner.sh')}, study `{study}`; load average before {before}, after "
             f"{after}. 4 chains x (1,000 warmup + 1,000 draws) per job, both cores; the median over "
             f"{len({r['replicate'] for r in rows})} replicates (each its own seeds) of each "
             "measure, and the largest R-hat over the replicates, the hyperparameters and every cell.",
             "",
             "| grid | preconditioner | " + " | ".join(label for _, label in MEDIANS)
             + " | max R-hat | divergences |",
             "|---|---|" + "---|" * (len(MEDIANS) + 2)]
    grids = list(dict.fromkeys((r["grid"], r["likelihood"]) for r in rows))
    ratios = []
    for grid, likelihood in grids:
        median = {}
        for setting in SETTINGS:
            mine = [r for r in rows if r["grid"] == grid and r["preconditioner"] == setting]
            median[setting] = {k: statistics.median(r[k] for r in mine) for k, _ in MEDIANS}
            worst = max(max(r["length_scale_rhat"], r["variance_rhat"], r["cell_rhat_max"])
                        for r in mine)
            lines.append(f"| {grid} ({likelihood}) | {setting} | "
                         + " | ".join(fmt(median[setting][k]) for k, _ in MEDIANS)
                         + f" | {worst:.3f} | {sum(r['divergences'] for r in mine)} |")
        ratios.append((grid, *(median["laplace"][k] / median["none"][k]
                               for k in ("length_scale_ess_per_cpu_second",
                                         "cell_ess_per_cpu_second"))))
    lines.append("")
    for grid, length, cell in ratios:
        lines.append(f"- **{grid}**: with the preconditioner, {length:.2f}x the effective draws of "
                     f"the length scale per CPU second and {cell:.2f}x of the worst cell (medians).")
    return "\n".join(lines) + "\n"


def main():
    a = args()
    rows = job_rows(a.out)
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, f"{a.name}.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.results, f"{a.name}.md"), "w") as fh:
        with open(os.path.join(a.out, "fieldmc", "study.toml"), "rb") as study:
            name = tomllib.load(study)["study"]["name"]
        fh.write(markdown(rows, a.out, name))


if __name__ == "__main__":
    main()
