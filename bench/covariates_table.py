#!/usr/bin/env python3
"""The table of bench/covariates.sh: covariate coefficients of studies/lgcp/covariates.toml from
fieldmc, a Poisson GLM without the field and BlackJAX NUTS (../shared/peers/lgcp_joint_peer.py).

Reads OUT/fieldmc/jobs.parquet, OUT/inla/jobs.parquet (INLA_STUDY), OUT/glm.csv, OUT/peer.json and OUT/timings.csv (written by
bench/covariates.sh) and the study TOML; checks that the three fits are of the same model; writes
RESULTS/covariates.csv (one row per method x coefficient) and RESULTS/covariates.md (the table and
sentences generated from the same numbers). Needs polars (and pyarrow) to read the Parquet.
"""
import argparse
import csv
import datetime
import json
import math
import os
import platform
import re
import subprocess
import tomllib

import polars as pl

from table_common import fmt, git_commit, machine

COLUMNS = ["method", "coefficient", "mean", "sd", "q05", "q95", "ess_bulk", "rhat",
           "cpu_seconds", "ess_per_cpu_second"]
FIELDMC, INLA, GLM, PEER = "fieldmc", "fieldmc_inla", "glm_no_field", "blackjax_nuts"
INLA_STUDY = "studies/lgcp/covariates_inla.toml"


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="studies/lgcp/covariates.toml")
    p.add_argument("--out", required=True, help="bench/covariates.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    return p.parse_args()


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))



def main():
    a = args()
    with open(a.study, "rb") as fh:
        study = tomllib.load(fh)
    names = list(study["data"]["covariates"])
    l_study, s2_study = float(study["model"]["length_scale"]), float(study["model"]["variance"])

    jobs = pl.read_parquet(os.path.join(a.out, "fieldmc", "jobs.parquet"))
    assert jobs.height == 1, f"expected one fieldmc job, got {jobs.height}"
    job = jobs.row(0, named=True)
    assert job["status"] == "ok", job["error"]
    with open(os.path.join(a.out, "glm.csv")) as fh:
        glm = {r["coefficient"]: r for r in csv.DictReader(fh)}
    with open(os.path.join(a.out, "peer.json")) as fh:
        peer = json.load(fh)
    with open(os.path.join(a.out, "timings.csv")) as fh:
        timings = {r["step"]: float(r["wall_seconds"]) for r in csv.DictReader(fh)}
    ps = peer["settings"]

    # ---- the same model three times (every check is on the outputs, not on the command lines)
    checks = []
    assert job["model_length_scale"] == l_study and job["model_length_scale_y"] == l_study
    assert job["model_variance"] == s2_study
    assert ps["fixed"]["l"] == l_study and ps["fixed"]["sigma2"] == s2_study, ps["fixed"]
    assert ps["coords_mode"] == "csv" and ps["infer"] == [] and ps["n_held"] == 0
    assert job["model_length_scale_prior"] == "fixed" and job["model_variance_prior"] == "fixed"
    assert job["data_holdout"] == 0 and job["observed_cells"] == ps["N"] == 1024
    checks.append(f"length scale {fmt(l_study)} m and variance {fmt(s2_study)} "
                  "(read from the study TOML) in both fieldmc's jobs.parquet and the peer's JSON")
    m = re.fullmatch(r"normal\(0, ([0-9.eE+-]+)\)", job["model_coefficient_prior"])
    assert m and float(m.group(1)) == ps["beta_prior_sd"], (job["model_coefficient_prior"], ps)
    checks.append(f"coefficient prior normal(0, {fmt(ps['beta_prior_sd'])}) in both")
    # fieldmc: log rate = mean + offset + X beta + f (offset = log cell area); the peer: mu + X beta
    # + f. Both intercepts are the "auto" rule, so mean + offset must equal the peer's mu.
    lin_f = job["model_mean_value"] + job["model_offset"]
    mu_p = ps["fixed"]["mu"]
    assert close(lin_f, mu_p, 1e-9), (lin_f, mu_p)
    checks.append(f"intercept: fieldmc's mean + offset (log cell area) = {lin_f:.9f}, the peer's "
                  f"mu = {mu_p:.9f} (log mean count {math.log(ps['mean_observed_response']):.6f} "
                  f"- variance / 2)")
    sd_rows = []
    for n in names:
        sd_f = job[f"coef_{n}_mean"] / job[f"coef_{n}_raw_mean"]      # standardised / raw slope
        sd_p = ps["covariate_standardisation"][n]["sd_ddof0"]
        sd_g = float(glm[n]["cov_sd_ddof0"])
        assert close(sd_f, sd_p, 1e-6) and close(sd_g, sd_p, 1e-9), (n, sd_f, sd_p, sd_g)
        sd_rows.append(f"{n} {fmt(sd_p, 5)}")
    checks.append("covariate sd (population, ddof 0) used to standardise, the same in the three "
                  "fits: " + ", ".join(sd_rows))
    total = int(float(next(iter(glm.values()))["total_count"]))
    checks.append(f"{total:,} trees on {ps['N']:,} cells in the counts grid of the GLM and the peer "
                  "(checked by covariates.sh to be the study's points counted on its grid)")

    # ---- INLA with the length scale and variance inferred: where the study's values come from
    inla = pl.read_parquet(os.path.join(a.out, "inla", "jobs.parquet")).row(0, named=True)
    assert inla["status"] == "ok" and inla["sampler_kind"] == "inla", inla["error"]
    l_inla, s2_inla = inla["hyper_length_scale_mean"], inla["hyper_variance_mean"]
    assert abs(l_inla - l_study) < 0.5 and abs(s2_inla - s2_study) < 0.005, (l_inla, s2_inla)
    checks.append(
        f"the study's length scale and variance are INLA's posterior means on these data "
        f"(`{os.path.basename(INLA_STUDY)}`: log-normal priors, {inla['laplace_fits']} Laplace "
        f"fits): length scale {fmt(l_inla, 4)} m [{fmt(inla['hyper_length_scale_q05'], 4)}, "
        f"{fmt(inla['hyper_length_scale_q95'], 4)}], variance {fmt(s2_inla, 4)} "
        f"[{fmt(inla['hyper_variance_q05'], 4)}, {fmt(inla['hyper_variance_q95'], 4)}], rounded")

    # ---- rows
    rows = []
    for n in names:
        cpu = job["cpu_seconds"]
        ess = job[f"coef_{n}_ess_bulk"]
        rows.append({"method": FIELDMC, "coefficient": n, "mean": job[f"coef_{n}_mean"],
                     "sd": job[f"coef_{n}_sd"], "q05": job[f"coef_{n}_q05"],
                     "q95": job[f"coef_{n}_q95"], "ess_bulk": ess, "rhat": job[f"coef_{n}_rhat"],
                     "cpu_seconds": cpu, "ess_per_cpu_second": ess / cpu})
    for n in names:
        rows.append({"method": INLA, "coefficient": n, "mean": inla[f"coef_{n}_mean"],
                     "sd": inla[f"coef_{n}_sd"], "q05": inla[f"coef_{n}_q05"],
                     "q95": inla[f"coef_{n}_q95"], "ess_bulk": None, "rhat": None,
                     "cpu_seconds": inla["cpu_seconds"], "ess_per_cpu_second": None})
    for n in names:
        g = glm[n]
        rows.append({"method": GLM, "coefficient": n, "mean": float(g["estimate"]),
                     "sd": float(g["se"]), "q05": float(g["q05"]), "q95": float(g["q95"]),
                     "ess_bulk": None, "rhat": None, "cpu_seconds": None,
                     "ess_per_cpu_second": None})
    for n in names:
        p = peer["params"][f"beta_{n}"]
        cpu = peer["run_cpu_s"]
        rows.append({"method": PEER, "coefficient": n, "mean": p["mean"], "sd": p["sd"],
                     "q05": p["q05"], "q95": p["q95"], "ess_bulk": p["ess_bulk"],
                     "rhat": p["rhat"], "cpu_seconds": cpu, "ess_per_cpu_second": p["ess_bulk"] / cpu})
    os.makedirs(a.results, exist_ok=True)
    csv_path = os.path.join(a.results, "covariates.csv")
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else r[k] if isinstance(r[k], str)
                            else f"{r[k]:.6g}") for k in COLUMNS})

    # ---- the Markdown, every number from the CSV just written (re-read) and the outputs above
    with open(csv_path) as fh:
        back = list(csv.DictReader(fh))
    val = lambda r, k: float(r[k]) if r[k] != "" else None
    by = {(r["method"], r["coefficient"]): {k: val(r, k) for k in COLUMNS[2:]} for r in back}
    nproc, cpu_model = machine()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        fm_version = subprocess.run([a.fieldmc, "--version"], capture_output=True, text=True,
                                    check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        fm_version = "fieldmc (version unknown)"
    nuts = peer["nuts"]
    label = {FIELDMC: f"fieldmc ({job['sampler_kind']})",
             INLA: "fieldmc (inla, length scale and variance inferred)",
             GLM: "Poisson GLM, no field", PEER: "BlackJAX NUTS (peer)"}
    L = []
    L.append("# Covariate coefficients: fieldmc, a GLM without the field, BlackJAX NUTS")
    L.append("")
    L.append(f"Generated by `bench/covariates.sh` (`bench/covariates_table.py`) on {now}, commit "
             f"{git_commit()}, {fm_version}; machine: {nproc} cores, {cpu_model}; load average "
             f"before the peer {peer['load_avg_before'][0]:.2f}. Study `{a.study}` (bei trees, "
             f"{job['model_grid']} x {job['model_grid']} grid, squared-exponential field with "
             f"length scale {fmt(l_study)} m and variance {fmt(s2_study)} fixed, mean auto, no "
             "holdout). Coefficients are per sd of the covariate. Numbers: "
             "`bench/results/covariates.csv`; the peer's full output: "
             "`bench/results/covariates_peer.json`.")
    L.append("")
    L.append("| method | coefficient | mean | sd | q05 | q95 | bulk ESS | R-hat | CPU s "
             "| ESS / CPU s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in back:
        v = by[(r["method"], r["coefficient"])]
        L.append(f"| {label[r['method']]} | {r['coefficient']} | {fmt(v['mean'])} "
                 f"| {fmt(v['sd'])} | {fmt(v['q05'])} | {fmt(v['q95'])} | {fmt(v['ess_bulk'])} "
                 f"| {fmt(v['rhat'], 4)} | {fmt(v['cpu_seconds'])} "
                 f"| {fmt(v['ess_per_cpu_second'])} |")
    L.append("")
    widen, agree, speed = [], [], []
    for n in names:
        f, g, p = by[(FIELDMC, n)], by[(GLM, n)], by[(PEER, n)]
        wg = g["q95"] - g["q05"]
        widen.append(f"{n} x{(f['q95'] - f['q05']) / wg:.2f} (fieldmc) and "
                     f"x{(p['q95'] - p['q05']) / wg:.2f} (peer)")
        mf, mp = f["sd"] / math.sqrt(f["ess_bulk"]), p["sd"] / math.sqrt(p["ess_bulk"])
        z = abs(f["mean"] - p["mean"]) / math.hypot(mf, mp)
        agree.append(f"{n} {fmt(f['mean'])} vs {fmt(p['mean'])}, {z:.2f} combined MCSE apart "
                     f"(MCSE {fmt(mf, 2)} and {fmt(mp, 2)})")
        speed.append(f"{n} {f['ess_per_cpu_second'] / p['ess_per_cpu_second']:.2f}")
    L.append("- The spatial field widens the 90 % interval against the GLM's Wald interval "
             "(ratio of widths): " + "; ".join(widen) + ".")
    L.append("- fieldmc and the peer, posterior means: " + "; ".join(agree) +
             " (MCSE = sd / sqrt(bulk ESS)).")
    L.append("- Effective draws per CPU second, fieldmc / peer: " + "; ".join(speed) + ".")
    L.append("")
    L.append("Notes:")
    L.append(f"- fieldmc: `{job['sampler_kind']}`, {job['sampler_chains']} chain(s) x "
             f"{job['sampler_iterations']} iterations ({job['sampler_burn_in']} burn-in, thin "
             f"{job['sampler_thin']}), one thread; CPU s = setup + sampling of all chains "
             "(jobs.parquet `cpu_seconds`). Peer: BlackJAX NUTS, window adaptation, "
             f"{ps['chains']} chains x ({ps['warmup']} warmup + {ps['iters']} draws) run one after "
             f"another on one core; CPU s = warmup + sampling (`run_cpu_s`), its compile "
             f"({fmt(peer['compile_cpu_s'])} CPU s) excluded; {nuts['divergences']} divergences "
             f"after warmup, mean tree depth {fmt(nuts['mean_tree_depth'])}, step sizes "
             + ", ".join(fmt(s) for s in nuts["step_size_per_chain"]) + ".")
    kept = (pl.read_parquet(os.path.join(a.out, "fieldmc", "coefficients.parquet"))
            .group_by("name").len())
    kept = dict(zip(kept["name"].to_list(), kept["len"].to_list()))
    capped = [n for n in names if by[(FIELDMC, n)]["ess_bulk"] >= 0.9 * kept[n]]
    L.append(f"- fieldmc keeps {', '.join(f'{kept[n]:,} draws of {n}' for n in names)} "
             f"(coefficients.parquet: up to `output.cell_draws` = {job['output_cell_draws']:,} "
             "per chain, the kept iterations thinned evenly to fit) against the peer's "
             f"{ps['chains'] * ps['iters']:,} (no thinning)."
             + (f" fieldmc's bulk ESS of {', '.join(capped)} is at least 0.9 times its kept "
                "draws: the number kept, not the mixing, caps it, so its ESS per CPU second (and "
                "the ratio above) is a lower bound." if capped else ""))
    L.append("- The GLM has no field and a flat prior on the coefficients (fieldmc and the peer: "
             f"normal(0, {fmt(ps['beta_prior_sd'])})); with {total:,} trees the prior's pull is "
             "negligible. Its sd is the standard error and q05/q95 the Wald interval "
             "estimate ± 1.6448536 se; no ESS or timing.")
    L.append("- Same model in fieldmc and the peer (checked on their outputs): "
             + "; ".join(checks) + ". Cells sit at the grid's cell centres in metres in both; the "
             "peer adds 1e-8 jitter to each 1-D axis kernel.")
    L.append("- Wall seconds of the steps, including start-up (the peer's includes compile and "
             "diagnostics): " + ", ".join(f"{k} {fmt(v)}" for k, v in timings.items()) + ".")
    L.append(f"- Versions: python {peer['versions']['python']}, jax "
             f"{peer['versions']['jax']}, blackjax {peer['versions']['blackjax']}, arviz "
             f"{peer['versions']['arviz']}; {next(iter(glm.values()))['r_version']}.")
    md_path = os.path.join(a.results, "covariates.md")
    with open(md_path, "w") as fh:
        fh.write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
