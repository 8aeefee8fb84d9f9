#!/usr/bin/env python3
"""The table of bench/joint.sh: fieldmc's joint chain (sampler.hyper = "joint", NUTS on the
hyperparameters and the field) and INLA against BlackJAX NUTS on the same joint model
(../shared/peers/lgcp_joint_peer.py --infer l,sigma2,mu), on the grids of
studies/hyperparameters/joint.toml.

Reads OUT/fieldmc/{jobs,fields}.parquet, OUT/peer_<k>_<r>.json (grid k, replicate r: the peer's
seed SEED + r), OUT/grids.txt and OUT/load_*.txt (written by bench/joint.sh); writes
RESULTS/joint.csv (one row per grid x method x replicate; each fieldmc replicate is compared with
the peer's run of the same index) and RESULTS/joint.md (the medians over the replicates, the range
of the per-replicate ratios, and the sentences, generated from the same numbers). Needs polars.
"""
import argparse
import csv
import datetime
import json
import math
import os
import statistics
import subprocess

import polars as pl

from table_common import fmt, git_commit, load_averages, machine

HYPER = [("length_scale", "l"), ("variance", "sigma2"), ("mean", "mu")]
FITS = [("nuts", "joint"), ("nuts", "joint-spectral"), ("inla", "none")]
CHAINS = [f"fieldmc {hyper} nuts" for kind, hyper in FITS if kind == "nuts"]
COLUMNS = (["grid", "likelihood", "method", "replicate", "cpu_seconds"]
           + [f"{h}_{s}" for h, _ in HYPER for s in ("mean", "sd", "ess_bulk", "rhat", "ess_per_cpu_second")]
           + ["cell_ess_bulk_min", "cell_rhat_max", "cell_ess_per_cpu_second",
              "max_abs_z_hyper_vs_peer", "max_abs_z_cell_vs_peer", "cells_beyond_4_mcse",
              "ratio_length_scale", "ratio_worst_cell",
              "length_scale_ess_per_draw", "gradients_per_iteration",
              "length_scale_ess_per_1000_gradients", "step_size", "mean_acceptance"])


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
    chains = pl.read_parquet(os.path.join(out, "fieldmc", "chains.parquet"))
    rows, cells = [], {}
    for path, likelihood, *_ in grids:
        name = os.path.basename(path).removesuffix(".csv")
        for kind, hyper in FITS:
            fit = jobs.filter(pl.col("data_path").str.ends_with(os.path.basename(path))
                              & (pl.col("sampler_kind") == kind)
                              & (pl.col("sampler_hyper") == hyper)).sort("replicate")
            assert fit.height >= 1, (path, kind, hyper)
            for j in fit.iter_rows(named=True):
                chain = kind == "nuts"
                method = f"fieldmc {hyper} nuts" if chain else "fieldmc inla"
                row = {"grid": name, "likelihood": likelihood, "method": method,
                       "replicate": j["replicate"], "cpu_seconds": j["cpu_seconds"]}
                for h, _ in HYPER:
                    row[f"{h}_mean"] = j[f"hyper_{h}_mean"]
                    row[f"{h}_sd"] = j[f"hyper_{h}_sd"]
                    if chain:
                        row[f"{h}_ess_bulk"] = j[f"hyper_{h}_ess_bulk"]
                        row[f"{h}_rhat"] = j[f"hyper_{h}_rhat"]
                        row[f"{h}_ess_per_cpu_second"] = j[f"hyper_{h}_ess_bulk"] / j["cpu_seconds"]
                if chain:
                    per_iteration = j["gradient_evals_per_iteration"]
                    total = per_iteration * j["sampler_iterations"] * j["sampler_chains"]
                    kept = (j["sampler_iterations"] - j["sampler_burn_in"]) * j["sampler_chains"]
                    draws_and_gradients(row, kept, per_iteration, total)
                    mine = chains.filter(pl.col("job_id") == j["job_id"])
                    row["step_size"] = statistics.median(mine["step_size"].to_list())
                    row["mean_acceptance"] = statistics.mean(mine["mean_tree_accept"].to_list())
                    row["cell_ess_bulk_min"] = j["cell_ess_bulk_min"]
                    row["cell_rhat_max"] = j["cell_rhat_max"]
                    row["cell_ess_per_cpu_second"] = j["cell_ess_bulk_min"] / j["cpu_seconds"]
                    f = fields.filter(pl.col("job_id") == j["job_id"]).sort(["j", "i"])
                    cells[(name, method, j["replicate"])] = (f["post_mean"].to_list(),
                                                             f["post_mean_mcse"].to_list())
                rows.append(row)
    return rows, cells


def draws_and_gradients(row, kept, per_iteration, total):
    """Writes into `row` the length scale's effective draws per kept draw, the gradients an
    iteration took (warmup and draws alike) and the effective draws per 1,000 of all the job's
    gradients: where a lead per CPU second comes from (more from a draw, or a cheaper gradient).
    The caller adds the adapted step (median over the chains) and the mean acceptance after
    warmup, which set how many gradients a draw takes."""
    row["length_scale_ess_per_draw"] = row["length_scale_ess_bulk"] / kept
    row["gradients_per_iteration"] = per_iteration
    row["length_scale_ess_per_1000_gradients"] = 1000 * row["length_scale_ess_bulk"] / total


def peer_row(peer, name, likelihood, replicate):
    row = {"grid": name, "likelihood": likelihood, "method": "blackjax nuts",
           "replicate": replicate, "cpu_seconds": peer["run_cpu_s"]}
    for h, p in HYPER:
        q = peer["params"][p]
        row.update({f"{h}_mean": q["mean"], f"{h}_sd": q["sd"], f"{h}_ess_bulk": q["ess_bulk"],
                    f"{h}_rhat": q["rhat"], f"{h}_ess_per_cpu_second": q["ess_bulk_per_cpu_s"]})
    chains = len(peer["nuts"]["step_size_per_chain"])
    per_chain = peer["nuts"]["grad_evals_per_chain"]
    draws = peer["cells"]["draws_per_chain"]
    warmup = int(peer["argv"][peer["argv"].index("--warmup") + 1])
    draws_and_gradients(row, draws * chains, per_chain / (warmup + draws), per_chain * chains)
    row["step_size"] = statistics.median(peer["nuts"]["step_size_per_chain"])
    row["mean_acceptance"] = peer["nuts"]["mean_accept"]
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
    replicates = sorted({r["replicate"] for r in rows})
    table = []
    for k, (path, likelihood, *_) in enumerate(grids):
        name = os.path.basename(path).removesuffix(".csv")
        mine = [r for r in rows if r["grid"] == name]
        peers = []
        for replicate in replicates:
            with open(os.path.join(a.out, f"peer_{k}_{replicate}.json")) as fh:
                peer = json.load(fh)
            assert peer["settings"]["likelihood"] == likelihood, (peer["settings"]["likelihood"], likelihood)
            p = peer_row(peer, name, likelihood, replicate)
            peers.append(p)
            for nuts in (r for r in mine if r["method"] in CHAINS and r["replicate"] == replicate):
                compare(nuts, p, peer, cells[(name, nuts["method"], replicate)])
        table += mine + peers
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "joint.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for r in table:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    write_markdown(a, table)


def compare(nuts, p, peer, cells):
    """Writes into `nuts` its agreement with the peer's run `p` (in combined Monte Carlo
    standard errors, MCSE = sd / sqrt(bulk ESS)) and its effective draws per CPU second as a
    ratio of the peer's."""
    z = []
    for h, q in HYPER:
        se = math.hypot(nuts[f"{h}_sd"] / math.sqrt(nuts[f"{h}_ess_bulk"]),
                        peer["params"][q]["mcse_mean"])
        z.append(abs(nuts[f"{h}_mean"] - p[f"{h}_mean"]) / se)
    nuts["max_abs_z_hyper_vs_peer"] = max(z)
    mean, mcse = cells
    zc = [abs(m - pm) / math.hypot(s, ps) for m, s, pm, ps in
          zip(mean, mcse, peer["cells"]["mean_u"], peer["cells"]["mcse_mean_u"])]
    nuts["max_abs_z_cell_vs_peer"] = max(zc)
    nuts["cells_beyond_4_mcse"] = sum(v > 4 for v in zc)
    nuts["ratio_length_scale"] = (nuts["length_scale_ess_per_cpu_second"]
                                  / p["length_scale_ess_per_cpu_second"])
    nuts["ratio_worst_cell"] = nuts["cell_ess_per_cpu_second"] / p["cell_ess_per_cpu_second"]


def medians(table):
    """One row per grid x method: the median of every measure over the replicates, the largest
    R-hat, and the per-replicate ratios' range."""
    out = []
    keys = list(dict.fromkeys((r["grid"], r["likelihood"], r["method"]) for r in table))
    for grid, likelihood, method in keys:
        group = [r for r in table if (r["grid"], r["method"]) == (grid, method)]
        row = {"grid": grid, "likelihood": likelihood, "method": method, "replicates": len(group)}
        for c in COLUMNS[4:]:
            values = [r[c] for r in group if r.get(c) not in (None, "")]
            if not values:
                continue
            if c.endswith("rhat") or c.startswith("max_abs_z") or c == "cells_beyond_4_mcse":
                row[c] = max(values)
            else:
                row[c] = statistics.median(values)
            if c.startswith("ratio_"):
                row[c + "_range"] = (min(values), max(values))
        out.append(row)
    return out


def per_gradient(r):
    """The length scale's effective draws per draw and per 1,000 gradients, and the gradients
    an iteration took; a dash for INLA."""
    if r.get("length_scale_ess_per_draw") is None:
        return "—"
    return (f"{fmt(r['length_scale_ess_per_draw'], 3)}, {fmt(r['gradients_per_iteration'], 3)}, "
            f"{fmt(r['length_scale_ess_per_1000_gradients'], 3)}")


def adaptation(r):
    """The adapted step and the mean acceptance; a dash for INLA."""
    if r.get("step_size") is None:
        return "—"
    return f"{fmt(r['step_size'], 3)}, {fmt(r['mean_acceptance'], 2)}"


def write_markdown(a, table):
    commit = git_commit(a.out)
    version = subprocess.run([a.fieldmc, "--version"], capture_output=True, text=True).stdout.strip()
    cores, model = machine()
    load = load_averages(a.out)
    summary = medians(table)
    replicates = max(r["replicates"] for r in summary)
    lines = [
        f"Measured {datetime.date.today()} by `bench/joint.sh` on commit {commit} ({version}); "
        f"{cores} cores, {model}; load average before {load[0]}, after {load[1]}. "
        f"fieldmc (one thread, core 0) and the peer (core 1) ran side by side; 4 chains x "
        f"(1,000 warmup + 1,000 draws) each; CPU seconds of the whole job (fieldmc) and of warmup "
        f"+ sampling without JAX's compile (peer). Each job {replicates} times (fieldmc: the "
        f"study's replicates, each its own seeds; the peer: seeds 0 to {replicates - 1}): the "
        f"median of each measure over them, and the largest R-hat (every replicate is a row of "
        f"`bench/results/joint.csv`).",
        "",
        "| grid | method | CPU s | length scale mean (sd) | ESS / R-hat | variance mean (sd) | ESS / R-hat | mean (sd) | worst cell ESS / max R-hat | ESS/s: length scale | ESS/s: worst cell | length scale: ESS per draw, gradients per iteration, ESS per 1,000 gradients | step, mean acceptance |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        ess = lambda h: (f"{fmt(r.get(f'{h}_ess_bulk'))} / {fmt(r.get(f'{h}_rhat'), 4)}"
                         if r.get(f"{h}_ess_bulk") is not None else "—")
        cell = (f"{fmt(r.get('cell_ess_bulk_min'))} / {fmt(r.get('cell_rhat_max'), 4)}"
                if r.get("cell_ess_bulk_min") is not None else "—")
        lines.append(
            f"| {r['grid']} ({r['likelihood']}) | {r['method']} | {fmt(r['cpu_seconds'])} | "
            f"{fmt(r['length_scale_mean'])} ({fmt(r['length_scale_sd'])}) | {ess('length_scale')} | "
            f"{fmt(r['variance_mean'])} ({fmt(r['variance_sd'])}) | {ess('variance')} | "
            f"{fmt(r['mean_mean'])} ({fmt(r['mean_sd'])}) | {cell} | "
            f"{fmt(r.get('length_scale_ess_per_cpu_second'))} | {fmt(r.get('cell_ess_per_cpu_second'))} | "
            f"{per_gradient(r)} | {adaptation(r)} |")
    lines.append("")
    for r in summary:
        if r["method"] not in CHAINS:
            continue
        inla = next(x for x in summary if x["grid"] == r["grid"] and x["method"] == "fieldmc inla")
        gaps = ", ".join(f"{h.replace('_', ' ')} {abs(r[f'{h}_mean'] - inla[f'{h}_mean']) / r[f'{h}_sd']:.2f}"
                         for h, _ in HYPER)
        span = lambda c: "{:.2f}-{:.2f}".format(*r[c + "_range"])
        lines.append(
            f"- **{r['grid']}, {r['method']}**: {r['ratio_length_scale']:.2f}x the peer's "
            f"effective draws of the length scale per CPU second (median; {span('ratio_length_scale')} "
            f"over the {r['replicates']} replicates) and {r['ratio_worst_cell']:.2f}x of the worst "
            f"cell ({span('ratio_worst_cell')}); the hyperparameters' posterior means differ from "
            f"the peer's by at most {r['max_abs_z_hyper_vs_peer']:.2f} combined MCSE, the cells' by "
            f"at most {r['max_abs_z_cell_vs_peer']:.2f} (at most {r['cells_beyond_4_mcse']} of the "
            f"cells beyond 4 in a replicate). INLA's means differ from the chain's medians by (in "
            f"posterior sds of the chain) {gaps}.")
    with open(os.path.join(a.results, "joint.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
