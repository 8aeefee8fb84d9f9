#!/usr/bin/env python3
"""The table of bench/joint.sh: fieldmc's joint chain (sampler.hyper = "joint", NUTS on the
hyperparameters and the field) and INLA against BlackJAX NUTS on the same joint model
(../shared/peers/lgcp_joint_peer.py --infer l,sigma2,mu), on the grids of
studies/hyperparameters/joint.toml.

Reads OUT/fieldmc/{jobs,fields}.parquet, OUT/peer_<k>.json, OUT/grids.txt and OUT/load_*.txt
(written by bench/joint.sh); writes RESULTS/joint.csv (one row per grid x method) and
RESULTS/joint.md (the table and the sentences, generated from the same numbers). Needs polars.
"""
import argparse
import csv
import datetime
import json
import math
import os
import subprocess

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

HYPER = [("length_scale", "l"), ("variance", "sigma2"), ("mean", "mu")]
FITS = [("nuts", "joint"), ("nuts", "joint-spectral"), ("inla", "none")]
CHAINS = [f"fieldmc {hyper} nuts" for kind, hyper in FITS if kind == "nuts"]
COLUMNS = (["grid", "likelihood", "method", "cpu_seconds"]
           + [f"{h}_{s}" for h, _ in HYPER for s in ("mean", "sd", "ess_bulk", "rhat", "ess_per_cpu_second")]
           + ["cell_ess_bulk_min", "cell_rhat_max", "cell_ess_per_cpu_second",
              "max_abs_z_hyper_vs_peer", "max_abs_z_cell_vs_peer", "cells_beyond_4_mcse",
              "ratio_length_scale", "ratio_worst_cell"])


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="studies/hyperparameters/joint.toml")
    p.add_argument("--out", required=True, help="bench/joint.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()



def fieldmc_rows(out, grids):
    jobs = pl.read_parquet(os.path.join(out, "fieldmc", "jobs.parquet"))
    fields = pl.read_parquet(os.path.join(out, "fieldmc", "fields.parquet"))
    rows, cells = [], {}
    for path, likelihood, *_ in grids:
        name = os.path.basename(path).removesuffix(".csv")
        for kind, hyper in FITS:
            job = jobs.filter(pl.col("data_path").str.ends_with(os.path.basename(path))
                              & (pl.col("sampler_kind") == kind)
                              & (pl.col("sampler_hyper") == hyper))
            assert job.height == 1, (path, kind, hyper, job.height)
            j = job.row(0, named=True)
            chain = kind == "nuts"
            method = f"fieldmc {hyper} nuts" if chain else "fieldmc inla"
            row = {"grid": name, "likelihood": likelihood, "method": method,
                   "cpu_seconds": j["cpu_seconds"]}
            for h, _ in HYPER:
                row[f"{h}_mean"] = j[f"hyper_{h}_mean"]
                row[f"{h}_sd"] = j[f"hyper_{h}_sd"]
                if chain:
                    row[f"{h}_ess_bulk"] = j[f"hyper_{h}_ess_bulk"]
                    row[f"{h}_rhat"] = j[f"hyper_{h}_rhat"]
                    row[f"{h}_ess_per_cpu_second"] = j[f"hyper_{h}_ess_bulk"] / j["cpu_seconds"]
            if chain:
                row["cell_ess_bulk_min"] = j["cell_ess_bulk_min"]
                row["cell_rhat_max"] = j["cell_rhat_max"]
                row["cell_ess_per_cpu_second"] = j["cell_ess_bulk_min"] / j["cpu_seconds"]
                f = fields.filter(pl.col("job_id") == j["job_id"]).sort(["j", "i"])
                cells[(name, method)] = (f["post_mean"].to_list(), f["post_mean_mcse"].to_list())
            rows.append(row)
    return rows, cells


def peer_row(peer, name, likelihood):
    row = {"grid": name, "likelihood": likelihood, "method": "blackjax nuts",
           "cpu_seconds": peer["run_cpu_s"]}
    for h, p in HYPER:
        q = peer["params"][p]
        row.update({f"{h}_mean": q["mean"], f"{h}_sd": q["sd"], f"{h}_ess_bulk": q["ess_bulk"],
                    f"{h}_rhat": q["rhat"], f"{h}_ess_per_cpu_second": q["ess_bulk_per_cpu_s"]})
    c = peer["cells"]
    row["cell_ess_bulk_min"] = c["min_ess_bulk"]
    row["cell_rhat_max"] = c["max_rhat"]
    row["cell_ess_per_cpu_second"] = c["min_ess_bulk"] / peer["run_cpu_s"]
    return row


def main():
    a = args()
    with open(os.path.join(a.out, "grids.txt")) as fh:
        grids = [line.split() for line in fh if line.strip()]
    rows, cells = fieldmc_rows(a.out, grids)
    table = []
    for k, (path, likelihood, *_) in enumerate(grids):
        name = os.path.basename(path).removesuffix(".csv")
        with open(os.path.join(a.out, f"peer_{k}.json")) as fh:
            peer = json.load(fh)
        assert peer["settings"]["likelihood"] == likelihood, (peer["settings"]["likelihood"], likelihood)
        p = peer_row(peer, name, likelihood)
        mine = [r for r in rows if r["grid"] == name]
        for nuts in (r for r in mine if r["method"] in CHAINS):
            # Agreement in combined Monte Carlo standard errors (MCSE = sd / sqrt(bulk ESS)).
            z = []
            for h, q in HYPER:
                se = math.hypot(nuts[f"{h}_sd"] / math.sqrt(nuts[f"{h}_ess_bulk"]),
                                peer["params"][q]["mcse_mean"])
                z.append(abs(nuts[f"{h}_mean"] - p[f"{h}_mean"]) / se)
            nuts["max_abs_z_hyper_vs_peer"] = max(z)
            mean, mcse = cells[(name, nuts["method"])]
            zc = [abs(m - pm) / math.hypot(s, ps) for m, s, pm, ps in
                  zip(mean, mcse, peer["cells"]["mean_u"], peer["cells"]["mcse_mean_u"])]
            nuts["max_abs_z_cell_vs_peer"] = max(zc)
            nuts["cells_beyond_4_mcse"] = sum(v > 4 for v in zc)
            nuts["ratio_length_scale"] = (nuts["length_scale_ess_per_cpu_second"]
                                          / p["length_scale_ess_per_cpu_second"])
            nuts["ratio_worst_cell"] = (nuts["cell_ess_per_cpu_second"]
                                        / p["cell_ess_per_cpu_second"])
        table += mine + [p]
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "joint.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for r in table:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    write_markdown(a, table)


def write_markdown(a, table):
    commit = git_commit()
    version = subprocess.run([a.fieldmc, "--version"], capture_output=True, text=True).stdout.strip()
    cores, model = machine()
    load = load_averages(a.out)
    lines = [
        f"Measured {datetime.date.today()} by `bench/joint.sh` on commit {commit} ({version}); "
        f"{cores} cores, {model}; load average before {load[0]}, after {load[1]}. "
        f"fieldmc (one thread, core 0) and the peer (core 1) ran side by side; 4 chains x "
        f"(1,000 warmup + 1,000 draws) each; CPU seconds of the whole job (fieldmc) and of warmup "
        f"+ sampling without JAX's compile (peer).",
        "",
        "| grid | method | CPU s | length scale mean (sd) | ESS / R-hat | variance mean (sd) | ESS / R-hat | mean (sd) | worst cell ESS / max R-hat | ESS/s: length scale | ESS/s: worst cell |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        ess = lambda h: (f"{fmt(r.get(f'{h}_ess_bulk'))} / {fmt(r.get(f'{h}_rhat'), 4)}"
                         if r.get(f"{h}_ess_bulk") is not None else "—")
        cell = (f"{fmt(r.get('cell_ess_bulk_min'))} / {fmt(r.get('cell_rhat_max'), 4)}"
                if r.get("cell_ess_bulk_min") is not None else "—")
        lines.append(
            f"| {r['grid']} ({r['likelihood']}) | {r['method']} | {fmt(r['cpu_seconds'])} | "
            f"{fmt(r['length_scale_mean'])} ({fmt(r['length_scale_sd'])}) | {ess('length_scale')} | "
            f"{fmt(r['variance_mean'])} ({fmt(r['variance_sd'])}) | {ess('variance')} | "
            f"{fmt(r['mean_mean'])} ({fmt(r['mean_sd'])}) | {cell} | "
            f"{fmt(r.get('length_scale_ess_per_cpu_second'))} | {fmt(r.get('cell_ess_per_cpu_second'))} |")
    lines.append("")
    for r in table:
        if r["method"] not in CHAINS:
            continue
        inla = next(x for x in table if x["grid"] == r["grid"] and x["method"] == "fieldmc inla")
        gaps = ", ".join(f"{h.replace('_', ' ')} {abs(r[f'{h}_mean'] - inla[f'{h}_mean']) / r[f'{h}_sd']:.2f}"
                         for h, _ in HYPER)
        lines.append(
            f"- **{r['grid']}, {r['method']}**: {r['ratio_length_scale']:.2f}x the peer's "
            f"effective draws of the length scale per CPU second and {r['ratio_worst_cell']:.2f}x "
            f"of the worst cell; the hyperparameters' posterior means differ from the peer's by at "
            f"most {r['max_abs_z_hyper_vs_peer']:.2f} combined MCSE, the cells' by at most "
            f"{r['max_abs_z_cell_vs_peer']:.2f} ({r['cells_beyond_4_mcse']} of the cells beyond "
            f"4). INLA's means differ from the chain's by (in posterior sds of the chain) {gaps}.")
    with open(os.path.join(a.results, "joint.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
