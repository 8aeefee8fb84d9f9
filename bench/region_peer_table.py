#!/usr/bin/env python3
"""The tables of bench/region_peer.sh: studies/lgcp/region.toml by fieldmc and by BlackJAX NUTS
(../shared/peers/lgcp_joint_peer.py), cell by cell.

Reads OUT/fieldmc/{jobs,fields,chains}.parquet, OUT/counts.csv, OUT/offset.csv, OUT/held.txt and
OUT/peer.json (written by bench/region_peer.sh and bench/region_peer_inputs.py); checks that the
two fits are of the same model (the peer's inputs, built from the raw files, against fieldmc's
counts, inside_fraction, offset and observed cells; the intercept; the hyperparameters); compares
each cell's posterior mean of u and its sd; writes RESULTS/region_peer_cells.csv (one row per
cell), RESULTS/region_peer.csv (one row per method) and RESULTS/region_peer.md (the table and
sentences generated from the same numbers). Needs polars (and pyarrow).

Agreement: for each cell, z_mean = (mean_fieldmc - mean_peer) / sqrt(mcse_fieldmc^2 +
mcse_peer^2), each MCSE the sampler's own (fieldmc's `mcse_mean`, ArviZ's for the peer). The
two samplers agree when no |z_mean| exceeds the Bonferroni bound for a family-wise false-alarm
rate of 1e-4 over the cells. The sds are compared by their ratio; z_sd = (sd_fieldmc - sd_peer) /
sqrt(se_fieldmc^2 + se_peer^2) with se = sd / sqrt(2 min(ESS_bulk, draws)) is written too, but it
is no test: that normal approximation understates an sd's Monte Carlo error under HMC (whose bulk
ESS can exceed the draws while the ESS of the squares is lower), and the peer does not write its
draws of u, from which the right error would come.
"""
import argparse
import csv
import json
import math
import os
import statistics
import tomllib

import polars as pl

from table_common import fieldmc_version, fmt, git_commit, machine, utc_now, write_csv, write_markdown

FAMILY_WISE = 1e-4
FIELDMC, PEER = "fieldmc", "blackjax_nuts"
CELL_COLUMNS = ["cell", "i", "j", "observed", "inside_fraction", "count",
                "fieldmc_mean", "fieldmc_sd", "fieldmc_mcse", "fieldmc_ess_bulk",
                "peer_mean", "peer_sd", "peer_mcse", "peer_ess_bulk", "z_mean", "z_sd"]
METHOD_COLUMNS = ["method", "sampler", "chains", "draws_per_chain", "cpu_seconds",
                  "cell_ess_bulk_min", "cell_ess_bulk_median", "cell_ess_bulk_min_per_cpu_second",
                  "cell_ess_bulk_median_per_cpu_second", "cell_rhat_max", "divergences"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="studies/lgcp/region.toml")
    p.add_argument("--out", required=True, help="bench/region_peer.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def same_model(study, job, fields, out, peer):
    """Every check that fieldmc and the peer fitted one model, as sentences for the notes."""
    m = study["model"]
    ps = peer["settings"]
    D, N = int(m["grid"]), len(fields)
    checks = []
    assert job["model_length_scale"] == ps["fixed"]["l"] == float(m["length_scale"])
    assert job["model_variance"] == ps["fixed"]["sigma2"] == float(m["variance"])
    assert ps["coords_mode"] == "csv" and ps["infer"] == [] and ps["N"] == N == D * D
    checks.append(f"length scale {fmt(job['model_length_scale'])} km and variance "
                  f"{fmt(job['model_variance'])} (the study's) in both")
    counts = [int(r["count"]) for r in read_csv(os.path.join(out, "counts.csv"))]
    offsets = read_csv(os.path.join(out, "offset.csv"))
    with open(os.path.join(out, "held.txt")) as fh:
        held = {int(c) for c in fh.read().split()}
    assert held == set(ps["held_cells"]), "the peer held out other cells than held.txt"
    cell_area = (m["window"][0][1] - m["window"][0][0]) * (m["window"][1][1] - m["window"][1][0]) \
        / N
    worst_fraction = worst_offset = 0.0
    for c, row in enumerate(fields):
        o = offsets[c]
        assert row["cell"] == c and row["observed"] == (c not in held), c
        worst_fraction = max(worst_fraction,
                             abs(row["inside_fraction"] - float(o["area_inside"]) / cell_area))
        if row["observed"]:
            assert row["observation"] == counts[c], (c, row["observation"], counts[c])
            worst_offset = max(worst_offset, abs(row["offset"] - float(o["log_offset"])))
    assert worst_fraction < 1e-9 and worst_offset < 1e-9, (worst_fraction, worst_offset)
    checks.append(f"{N - len(held)} cells in the likelihood, {len(held)} out of it (no area "
                  f"inside the region or no exposure) in both; the {sum(counts)} cases counted "
                  "on the grid from the points file agree with fieldmc's cell by cell; each "
                  "cell's area inside the region by shapely's polygon intersection agrees with "
                  f"fieldmc's `inside_fraction` within {worst_fraction:.1e} of a cell, and "
                  "log(exposure x area inside) with fieldmc's `offset` within "
                  f"{worst_offset:.1e}")
    assert close(job["model_mean_value"], ps["fixed"]["mu"], 1e-9), \
        (job["model_mean_value"], ps["fixed"]["mu"])
    checks.append(f"mean auto: fieldmc's {job['model_mean_value']:.9f}, the peer's "
                  f"{ps['fixed']['mu']:.9f} (log of the observed cells' total count over their "
                  "total exp(offset), less half the variance)")
    return checks


def cell_rows(fields, peer):
    pc = peer["cells"]
    rows = []
    for c, f in enumerate(fields):
        pm, ps_, pmc, pe = pc["mean_u"][c], pc["sd_u"][c], pc["mcse_mean_u"][c], pc["ess_bulk_u"][c]
        draws = peer["settings"]["chains"] * peer["settings"]["iters"]
        se_f = f["post_sd"] / math.sqrt(2 * min(f["ess_bulk"], draws))
        se_p = ps_ / math.sqrt(2 * min(pe, draws))
        rows.append({"cell": c, "i": f["i"], "j": f["j"], "observed": f["observed"],
                     "inside_fraction": f["inside_fraction"],
                     "count": f["observation"] if f["observed"] else None,
                     "fieldmc_mean": f["post_mean"], "fieldmc_sd": f["post_sd"],
                     "fieldmc_mcse": f["mcse_mean"], "fieldmc_ess_bulk": f["ess_bulk"],
                     "peer_mean": pm, "peer_sd": ps_, "peer_mcse": pmc, "peer_ess_bulk": pe,
                     "z_mean": (f["post_mean"] - pm) / math.hypot(f["mcse_mean"], pmc),
                     "z_sd": (f["post_sd"] - ps_) / math.hypot(se_f, se_p)})
    return rows


def method_rows(job, chains, fields, peer):
    ess_f = sorted(f["ess_bulk"] for f in fields)
    cpu_f, cpu_p = job["cpu_seconds"], peer["run_cpu_s"]
    cells = peer["cells"]
    return [
        {"method": FIELDMC, "sampler": job["sampler_kind"], "chains": job["sampler_chains"],
         "draws_per_chain": job["sampler_iterations"] - job["sampler_burn_in"],
         "cpu_seconds": cpu_f, "cell_ess_bulk_min": ess_f[0],
         "cell_ess_bulk_median": statistics.median(ess_f),
         "cell_ess_bulk_min_per_cpu_second": ess_f[0] / cpu_f,
         "cell_ess_bulk_median_per_cpu_second": statistics.median(ess_f) / cpu_f,
         "cell_rhat_max": job["cell_rhat_max"], "divergences": int(chains["divergences"].sum())},
        {"method": PEER, "sampler": "nuts", "chains": peer["settings"]["chains"],
         "draws_per_chain": peer["settings"]["iters"], "cpu_seconds": cpu_p,
         "cell_ess_bulk_min": cells["min_ess_bulk"],
         "cell_ess_bulk_median": cells["median_ess_bulk"],
         "cell_ess_bulk_min_per_cpu_second": cells["min_ess_bulk"] / cpu_p,
         "cell_ess_bulk_median_per_cpu_second": cells["median_ess_bulk"] / cpu_p,
         "cell_rhat_max": cells["max_rhat"], "divergences": peer["nuts"]["divergences"]},
    ]


def main():
    a = args()
    with open(a.study, "rb") as fh:
        study = tomllib.load(fh)
    jobs = pl.read_parquet(os.path.join(a.out, "fieldmc", "jobs.parquet"))
    assert jobs.height == 1, f"expected one fieldmc job, got {jobs.height}"
    job = jobs.row(0, named=True)
    assert job["status"] == "ok", job["error"]
    fields = (pl.read_parquet(os.path.join(a.out, "fieldmc", "fields.parquet"))
              .sort("cell").to_dicts())
    chains = pl.read_parquet(os.path.join(a.out, "fieldmc", "chains.parquet"))
    with open(os.path.join(a.out, "peer.json")) as fh:
        peer = json.load(fh)
    checks = same_model(study, job, fields, a.out, peer)

    os.makedirs(a.results, exist_ok=True)
    cells_path = os.path.join(a.results, "region_peer_cells.csv")
    methods_path = os.path.join(a.results, "region_peer.csv")
    write_csv(cells_path, CELL_COLUMNS, cell_rows(fields, peer))
    write_csv(methods_path, METHOD_COLUMNS, method_rows(job, chains, fields, peer))

    # ---- the Markdown, every number from the CSVs just written (read back)
    cells = read_csv(cells_path)
    methods = {r["method"]: r for r in read_csv(methods_path)}
    n = len(cells)
    bound = statistics.NormalDist().inv_cdf(1 - FAMILY_WISE / (2 * n))
    zm = [abs(float(r["z_mean"])) for r in cells]
    zs = [abs(float(r["z_sd"])) for r in cells]
    within = lambda zs_, t: sum(z <= t for z in zs_)
    observed = [r for r in cells if r["observed"] == "true"]
    held = [r for r in cells if r["observed"] == "false"]
    worst = max(cells, key=lambda r: abs(float(r["z_mean"])))
    f, p = methods[FIELDMC], methods[PEER]
    val = lambda r, k: float(r[k])
    ratio_min = val(f, "cell_ess_bulk_min_per_cpu_second") / val(p, "cell_ess_bulk_min_per_cpu_second")
    ratio_med = (val(f, "cell_ess_bulk_median_per_cpu_second")
                 / val(p, "cell_ess_bulk_median_per_cpu_second"))
    nproc, cpu_model = machine()
    now = utc_now()
    version = fieldmc_version(a.fieldmc)
    verdict = "agree" if max(zm) <= bound else "DISAGREE"
    ratios = sorted(float(r["fieldmc_sd"]) / float(r["peer_sd"]) for r in cells)
    z_sd = [float(r["z_sd"]) for r in cells]
    L = ["# The region study against BlackJAX NUTS, cell by cell", ""]
    L.append(f"Generated by `bench/region_peer.sh` (`bench/region_peer_table.py`) on {now}, "
             f"commit {git_commit(a.out)}, {version}; machine: {nproc} cores, {cpu_model}; load "
             f"average before the peer {peer['load_avg_before'][0]:.2f}. Study `{a.study}` "
             f"({n} cells, {len(observed)} in the likelihood). Numbers: "
             "`bench/results/region_peer.csv` (per method), `bench/results/region_peer_cells.csv` "
             "(per cell).")
    L.append("")
    L.append("| method | sampler | chains x draws | CPU s | cell bulk ESS min | median "
             "| min ESS / CPU s | median ESS / CPU s | cell R-hat max | divergences |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for name, label in ((FIELDMC, "fieldmc"), (PEER, "BlackJAX NUTS (peer)")):
        r = methods[name]
        L.append(f"| {label} | {r['sampler']} | {r['chains']} x {r['draws_per_chain']} "
                 f"| {fmt(val(r, 'cpu_seconds'))} | {fmt(val(r, 'cell_ess_bulk_min'))} "
                 f"| {fmt(val(r, 'cell_ess_bulk_median'))} "
                 f"| {fmt(val(r, 'cell_ess_bulk_min_per_cpu_second'))} "
                 f"| {fmt(val(r, 'cell_ess_bulk_median_per_cpu_second'))} "
                 f"| {fmt(val(r, 'cell_rhat_max'), 4)} | {r['divergences']} |")
    L.append("")
    L.append(f"- **The cells' posterior means {verdict}** within Monte Carlo error: the "
             f"largest |z| of the {n} is {max(zm):.2f} (cell ({worst['i']}, {worst['j']}): "
             f"{fmt(float(worst['fieldmc_mean']), 4)} against {fmt(float(worst['peer_mean']), 4)}), "
             f"against the bound {bound:.2f} for a family-wise false-alarm rate of "
             f"{FAMILY_WISE:g} over the {n} cells. Share of cells within 1.96 combined standard "
             f"errors: {within(zm, 1.96) / n:.1%} (95 % expected when the two agree); "
             f"{within([abs(float(r['z_mean'])) for r in observed], 1.96) / len(observed):.1%} "
             f"of the {len(observed)} in the likelihood, "
             f"{within([abs(float(r['z_mean'])) for r in held], 1.96) / len(held):.1%} of the "
             f"{len(held)} out of it (predicted).")
    L.append(f"- Posterior sds, fieldmc / peer: mean ratio {statistics.fmean(ratios):.4f}, 90 % of "
             f"the cells between {ratios[int(0.05 * n)]:.3f} and {ratios[int(0.95 * n)]:.3f}; "
             f"the mean of the cells' z_sd is {statistics.fmean(z_sd):.3f} (no systematic "
             f"difference). z_sd is no test: its spread over the cells is "
             f"{statistics.stdev(z_sd):.2f}, not 1, because sd / sqrt(2 ESS) understates an "
             "sd's Monte Carlo error, and the peer does not write the draws of u the right error "
             "needs.")
    L.append(f"- Effective draws per CPU second, fieldmc / peer: {ratio_min:.1f}x at the cell "
             f"with the fewest, {ratio_med:.1f}x at the median cell.")
    L.append("")
    L.append("Notes:")
    ps = peer["settings"]
    L.append(f"- fieldmc: `{f['sampler']}`, the study's defaults, one thread; CPU s = the job's "
             "CPU time (jobs.parquet `cpu_seconds`). Peer: BlackJAX NUTS, window adaptation, "
             f"{ps['chains']} chains x ({ps['warmup']} warmup + {ps['iters']} draws) one after "
             "another on one core; CPU s = warmup + sampling (`run_cpu_s`), its compile "
             f"({fmt(peer['compile_cpu_s'])} CPU s) excluded; mean tree depth "
             f"{fmt(peer['nuts']['mean_tree_depth'])}. Cell ESS: bulk ESS of u in each cell "
             "(rank-normalised, ArviZ's definition in both).")
    L.append("- z of a mean uses each sampler's own MCSE; z of an sd uses sd / sqrt(2 min(bulk "
             "ESS, draws)) per sampler (a normal approximation).")
    L.append("- Same model (checked on the outputs): " + "; ".join(checks) + ".")
    L.append(f"- Versions: python {peer['versions']['python']}, jax {peer['versions']['jax']}, "
             f"blackjax {peer['versions']['blackjax']}, arviz {peer['versions']['arviz']}.")
    write_markdown(os.path.join(a.results, "region_peer.md"), L)


if __name__ == "__main__":
    main()
