#!/usr/bin/env python3
"""The table of bench/geostat_peer.sh: the hyperparameters of studies/geostat/topo_nugget.toml
(length scale, variance, noise sd) by fieldmc's joint NUTS chain on the grid and by exact-GP
BlackJAX NUTS on the sites (../shared/peers/geostat_peer.py --infer l,sigma2,tau).

Reads OUT/fieldmc/{jobs,sites,hyper,chains}.parquet, OUT/peer.json, OUT/peer_draws.npz,
OUT/held_rows.txt and OUT/{commit,load_before,load_after}.txt (written by bench/geostat_peer.sh);
checks that both fitted one model (the same fitted measurements, the same fixed mean, the same
priors); writes RESULTS/geostat_peer.csv (one row per hyperparameter) and RESULTS/geostat_peer.md
(the tables and the sentences, generated from the CSV just written). Needs pyarrow, numpy and
ArviZ (the peer's venv has them).

Agreement of a posterior mean: z = (mean_fieldmc - mean_peer) / sqrt(mcse_fieldmc^2 + mcse_peer^2),
each side's MCSE of the mean = sd / sqrt(bulk ESS) with its own bulk ESS (fieldmc's
`hyper_<name>_ess_bulk`, the peer's ArviZ `ess_bulk`). The two agree within Monte Carlo error
when |z| is within the Bonferroni bound for a family-wise false-alarm rate of 1e-4 over the three
hyperparameters. The bound holds Monte Carlo error only: the grid's error (fieldmc's field lives
on 64 x 64 cell centres, the peer's at the sites themselves) is not in it, so a |z| beyond it is
Monte Carlo error plus the grid's, or a bug. The sds are compared by their ratio (fieldmc's sd over
every kept state, its `hyper_<name>_sd`), and by z_sd = (sd_trace - sd_peer) / sqrt(se_trace^2 +
se_peer^2) held to the same bound: fieldmc's side from the draws hyper.parquet holds (every
`sampler.thin`-th kept state, so its sd and MCSE are those of these draws, not of the job's
column), the peer's from its --draws-out, each se ArviZ's MCSE of the sd (`az.mcse(method="sd")`).
"""
import argparse
import csv
import json
import math
import os
import re
import shlex
import statistics
import tomllib
import warnings

import numpy as np
import pyarrow
import pyarrow.parquet as pq

from table_common import fieldmc_version, fmt, git_commit, load_averages, machine, utc_now, write_csv, write_markdown

FAMILY_WISE = 1e-4
RHAT_LIMIT = 1.01
# (fieldmc's name, the peer's name, the label in the tables)
HYPER = [("length_scale", "l", "length scale"), ("variance", "sigma2", "variance"),
         ("noise_sd", "tau", "noise sd")]
PRIOR_KEY = {"length_scale": "length_scale_prior", "variance": "variance_prior",
             "noise_sd": "noise_sd_prior"}
COLUMNS = ["hyperparameter", "peer_name",
           "fieldmc_mean", "fieldmc_sd", "fieldmc_q05", "fieldmc_q95", "fieldmc_ess_bulk",
           "fieldmc_rhat", "fieldmc_mcse_mean", "fieldmc_trace_sd", "fieldmc_trace_mcse_sd",
           "peer_mean", "peer_sd", "peer_q05", "peer_q95", "peer_ess_bulk", "peer_rhat",
           "peer_mcse_mean", "peer_mcse_sd",
           "z_mean", "z_sd", "bound", "mean_agrees", "sd_agrees", "sd_ratio",
           "fieldmc_cpu_seconds", "peer_cpu_seconds",
           "fieldmc_ess_bulk_per_cpu_second", "peer_ess_bulk_per_cpu_second",
           "ess_per_cpu_second_ratio"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="studies/geostat/topo_nugget.toml")
    p.add_argument("--out", required=True, help="bench/geostat_peer.sh's output directory")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    p.add_argument("--core", default="0", help="the core both runs were pinned to (for the md)")
    return p.parse_args()


def rows_of(path, columns=None):
    return pq.read_table(path, columns=columns).to_pylist()


def lognormal(text):
    m = re.fullmatch(r"\s*log-normal\(\s*([-0-9.e]+)\s*,\s*([-0-9.e]+)\s*\)\s*", text)
    assert m, text
    return float(m.group(1)), float(m.group(2))


def same_model(study, job, sites, peer, held_file):
    """Every check that fieldmc and the peer fitted one model, as sentences for the notes."""
    ps = peer["settings"]
    checks = []
    fitted = sorted((r for r in sites if r["set"] == "fitted"), key=lambda r: r["row"])
    held = sorted(r["row"] - 1 for r in sites if r["set"] == "held_out")
    with open(held_file) as fh:
        assert sorted(int(t) for t in fh.read().split()) == held
    assert ps["held_rows"] == held, (ps["held_rows"], held)
    assert job["observed_sites"] == len(fitted) == ps["n_fit"], \
        (job["observed_sites"], len(fitted), ps["n_fit"])
    assert job["held_out_sites"] == len(held)
    d = study["data"]
    with open(ps["data"], newline="") as fh:
        table = list(csv.DictReader(fh))
    for r in fitted:
        raw = table[r["row"] - 1]
        assert (float(raw[d.get("x", "x")]), float(raw[d.get("y", "y")]),
                float(raw[d["value"]])) == (r["x"], r["y"], r["value"]), r
    checks.append(f"the same {len(fitted)} of the {len(table)} measurements fitted (fieldmc holds "
                  f"out {len(held)} by its seeded `data.holdout` draw, rows "
                  f"{', '.join(str(h) for h in held)} counted from 0; the peer is given them "
                  "with `--holdout-rows`), their coordinates and values equal in both")
    assert abs(job["model_mean_value"] - ps["mu"]) <= 1e-9 * max(1.0, abs(ps["mu"])), \
        (job["model_mean_value"], ps["mu"])
    checks.append(f"the mean fixed at the fitted heights' mean in both (fieldmc "
                  f"{job['model_mean_value']:.9f}, the peer {ps['mu']:.9f})")
    for name, peer_name, _ in HYPER:
        a_, b_ = lognormal(study["model"][PRIOR_KEY[name]])
        pp = ps["priors"][peer_name]
        assert (pp["log_mean"], pp["log_sd"]) == (a_, b_), (name, pp, a_, b_)
    checks.append("the priors log theta ~ N(a, b^2) with the study's (a, b) in both: "
                  + ", ".join(f"{label} {study['model'][PRIOR_KEY[name]]}"
                              for name, _, label in HYPER))
    checks.append("the squared-exponential kernel sigma2 exp(-d^2 / (2 l^2)) and gaussian noise "
                  "of sd tau in both; fieldmc's field on the cell centres of its "
                  f"{study['model']['grid']} x {study['model']['grid']} grid over "
                  f"{study['model']['window']}, read at a site bilinearly, the peer's at the "
                  "sites themselves (no grid)")
    return checks


def fieldmc_draws(hyper_rows, job_id):
    """{name: array (chain, draw)} from hyper.parquet, in iteration order."""
    out = {}
    for name, _, _ in HYPER:
        by_chain = {}
        for r in hyper_rows:
            if r["job_id"] == job_id and r["name"] == name:
                by_chain.setdefault(r["chain"], []).append((r["iteration"], r["value"]))
        lengths = {len(v) for v in by_chain.values()}
        assert len(lengths) == 1, (name, lengths)
        out[name] = np.array([[v for _, v in sorted(by_chain[c])] for c in sorted(by_chain)])
    return out


def arviz_stats(draws):
    """(sd, bulk ESS, MCSE of the sd) of draws (chain, draw): the sd with divisor n - 1, the
    others ArviZ's."""
    import arviz as az
    warnings.filterwarnings("ignore")
    d = np.asarray(draws, np.float64)
    ds = az.convert_to_dataset(d)
    return (float(d.ravel().std(ddof=1)), float(az.ess(ds, method="bulk")["x"].values),
            float(az.mcse(ds, method="sd")["x"].values))


def main():
    a = args()
    with open(a.study, "rb") as fh:
        study = tomllib.load(fh)
    fm = os.path.join(a.out, "fieldmc")
    jobs = rows_of(os.path.join(fm, "jobs.parquet"))
    assert len(jobs) == 1, f"expected one fieldmc job, got {len(jobs)}"
    job = jobs[0]
    assert job["status"] == "ok", job["error"]
    sites = rows_of(os.path.join(fm, "sites.parquet"))
    chains = rows_of(os.path.join(fm, "chains.parquet"))
    f_draws = fieldmc_draws(rows_of(os.path.join(fm, "hyper.parquet")), job["job_id"])
    with open(os.path.join(a.out, "peer.json")) as fh:
        peer = json.load(fh)
    p_draws = np.load(os.path.join(a.out, "peer_draws.npz"))
    checks = same_model(study, job, sites, peer, os.path.join(a.out, "held_rows.txt"))

    bound = statistics.NormalDist().inv_cdf(1 - FAMILY_WISE / (2 * len(HYPER)))
    cpu_f, cpu_p = job["cpu_seconds"], peer["run_cpu_s"]
    rows = []
    for name, peer_name, _ in HYPER:
        f = {s: job[f"hyper_{name}_{s}"] for s in ("mean", "sd", "q05", "q95", "ess_bulk", "rhat")}
        p = peer["params"][peer_name]
        sd_trace, _, mcse_sd_f = arviz_stats(f_draws[name])
        sd_p, ess_p_arviz, mcse_sd_p = arviz_stats(p_draws[peer_name])
        assert abs(ess_p_arviz - p["ess_bulk"]) <= 1e-6 * p["ess_bulk"], (ess_p_arviz, p)
        assert abs(sd_p - p["sd"]) <= 1e-9 * p["sd"], (sd_p, p)
        mcse_f = f["sd"] / math.sqrt(f["ess_bulk"])
        mcse_p = p["sd"] / math.sqrt(p["ess_bulk"])
        z = (f["mean"] - p["mean"]) / math.hypot(mcse_f, mcse_p)
        z_sd = (sd_trace - p["sd"]) / math.hypot(mcse_sd_f, mcse_sd_p)
        rows.append({"hyperparameter": name, "peer_name": peer_name,
                     "fieldmc_mean": f["mean"], "fieldmc_sd": f["sd"], "fieldmc_q05": f["q05"],
                     "fieldmc_q95": f["q95"], "fieldmc_ess_bulk": f["ess_bulk"],
                     "fieldmc_rhat": f["rhat"], "fieldmc_mcse_mean": mcse_f,
                     "fieldmc_trace_sd": sd_trace, "fieldmc_trace_mcse_sd": mcse_sd_f,
                     "peer_mean": p["mean"], "peer_sd": p["sd"], "peer_q05": p["q05"],
                     "peer_q95": p["q95"], "peer_ess_bulk": p["ess_bulk"], "peer_rhat": p["rhat"],
                     "peer_mcse_mean": mcse_p, "peer_mcse_sd": mcse_sd_p,
                     "z_mean": z, "z_sd": z_sd, "bound": bound,
                     "mean_agrees": abs(z) <= bound, "sd_agrees": abs(z_sd) <= bound,
                     "sd_ratio": f["sd"] / p["sd"],
                     "fieldmc_cpu_seconds": cpu_f, "peer_cpu_seconds": cpu_p,
                     "fieldmc_ess_bulk_per_cpu_second": f["ess_bulk"] / cpu_f,
                     "peer_ess_bulk_per_cpu_second": p["ess_bulk"] / cpu_p,
                     "ess_per_cpu_second_ratio": (f["ess_bulk"] / cpu_f) / (p["ess_bulk"] / cpu_p)})
    os.makedirs(a.results, exist_ok=True)
    csv_path = os.path.join(a.results, "geostat_peer.csv")
    write_csv(csv_path, COLUMNS, rows)

    # ---- the Markdown, every number from the CSV just written (read back)
    with open(csv_path, newline="") as fh:
        table = list(csv.DictReader(fh))
    v = lambda r, k: float(r[k])
    label = {name: lab for name, _, lab in HYPER}
    nproc, cpu_model = machine()
    now = utc_now()
    version = fieldmc_version(a.fieldmc)
    load_before, load_after = load_averages(a.out)
    per_chain_div = [r["divergences"] or 0 for r in sorted(chains, key=lambda r: r["chain"])
                     if r["job_id"] == job["job_id"]]
    divergences = sum(per_chain_div)
    kept_per_chain = job["sampler_iterations"] - job["sampler_burn_in"]
    kept_total = job["sampler_chains"] * kept_per_chain
    traced = f_draws["length_scale"].shape
    ps = peer["settings"]
    high_rhat = [r for r in table if v(r, "fieldmc_rhat") > RHAT_LIMIT]
    high_rhat_peer = [r for r in table if v(r, "peer_rhat") > RHAT_LIMIT]
    flag = lambda x: f"{x:.4f}" + (f" **> {RHAT_LIMIT:g}**" if x > RHAT_LIMIT else "")

    L = ["# The topo study's hyperparameters against exact-GP NUTS", ""]
    L.append(f"Generated by `bench/geostat_peer.sh` (`bench/geostat_peer_table.py`) on {now}, "
             f"commit {git_commit(a.out)}, {version}; machine: {nproc} cores, {cpu_model}; both "
             f"runs one after the other on core {a.core}; load average before "
             f"{load_before}, after {load_after}. Study `{a.study}`. Numbers: "
             "`bench/results/geostat_peer.csv`.")
    L.append("")
    L.append(f"Posteriors (fieldmc: {job['sampler_chains']} chains x {kept_per_chain} kept "
             "states; peer: "
             f"{ps['chains']} chains x {ps['iters']} draws). z = difference of the means over "
             "the combined MCSE, each side's sd / sqrt(bulk ESS); bound "
             f"{bound:.2f} = Bonferroni over {len(HYPER)} hyperparameters at a family-wise "
             f"false-alarm rate of {FAMILY_WISE:g} (two-sided).")
    L.append("")
    L.append("| hyperparameter | fieldmc mean (sd) | peer mean (sd) | z | within bound | "
             "sd ratio fieldmc / peer | fieldmc 5 % - 95 % | peer 5 % - 95 % | R-hat fieldmc "
             "| R-hat peer |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        L.append(f"| {label[r['hyperparameter']]} "
                 f"| {fmt(v(r, 'fieldmc_mean'), 4)} ({fmt(v(r, 'fieldmc_sd'), 3)}) "
                 f"| {fmt(v(r, 'peer_mean'), 4)} ({fmt(v(r, 'peer_sd'), 3)}) "
                 f"| {v(r, 'z_mean'):+.2f} | {'yes' if r['mean_agrees'] == 'true' else '**no**'} "
                 f"| {v(r, 'sd_ratio'):.3f} "
                 f"| {fmt(v(r, 'fieldmc_q05'), 4)} - {fmt(v(r, 'fieldmc_q95'), 4)} "
                 f"| {fmt(v(r, 'peer_q05'), 4)} - {fmt(v(r, 'peer_q95'), 4)} "
                 f"| {flag(v(r, 'fieldmc_rhat'))} | {flag(v(r, 'peer_rhat'))} |")
    L.append("")
    L.append("Cost: bulk ESS per CPU second (fieldmc: the job's `cpu_seconds`, setup and all "
             "chains, burn-in included; peer: `run_cpu_s`, warmup and sampling of all chains, "
             "compile excluded).")
    L.append("")
    L.append("| hyperparameter | fieldmc bulk ESS | peer bulk ESS | fieldmc ESS / CPU s "
             "| peer ESS / CPU s | fieldmc / peer |")
    L.append("|---|---|---|---|---|---|")
    for r in table:
        L.append(f"| {label[r['hyperparameter']]} | {fmt(v(r, 'fieldmc_ess_bulk'))} "
                 f"| {fmt(v(r, 'peer_ess_bulk'))} "
                 f"| {fmt(v(r, 'fieldmc_ess_bulk_per_cpu_second'))} "
                 f"| {fmt(v(r, 'peer_ess_bulk_per_cpu_second'))} "
                 f"| {fmt(v(r, 'ess_per_cpu_second_ratio'))} |")
    L.append("")
    cpu_f_s, cpu_p_s = v(table[0], "fieldmc_cpu_seconds"), v(table[0], "peer_cpu_seconds")
    L.append(f"CPU seconds: fieldmc {fmt(cpu_f_s)}, the peer {fmt(cpu_p_s)} (its compile "
             f"{fmt(peer['compile_cpu_s'])} CPU s more).")
    L.append("")
    for r in table:
        name = label[r["hyperparameter"]]
        gap = abs(v(r, "fieldmc_mean") - v(r, "peer_mean")) / v(r, "peer_sd")
        if r["mean_agrees"] == "true":
            L.append(f"- **{name}: the posterior means agree** within Monte Carlo error: "
                     f"|z| = {abs(v(r, 'z_mean')):.2f} <= {bound:.2f}.")
        else:
            L.append(f"- **{name}: the posterior means DISAGREE** beyond Monte Carlo error: "
                     f"|z| = {abs(v(r, 'z_mean')):.2f} > {bound:.2f} (fieldmc "
                     f"{fmt(v(r, 'fieldmc_mean'), 4)}, the peer {fmt(v(r, 'peer_mean'), 4)}, "
                     f"a difference of {gap:.2f} posterior sds); the bound holds no grid "
                     "error, so this is the grid's error or a bug, not chance.")
        sd_word = "within" if r["sd_agrees"] == "true" else "**beyond**"
        L[-1] += (f" The sds' ratio is {v(r, 'sd_ratio'):.3f}; z_sd = {v(r, 'z_sd'):+.2f} "
                  "(fieldmc's side from its traced draws, see the notes), "
                  f"{sd_word} the same bound.")
    if high_rhat:
        L.append(f"- **fieldmc's R-hat exceeds {RHAT_LIMIT:g}** for "
                 + ", ".join(f"{label[r['hyperparameter']]} ({v(r, 'fieldmc_rhat'):.4f})"
                             for r in high_rhat)
                 + ": its chains have not mixed to the usual standard; its ESS and MCSE "
                 "(and so z) are less trustworthy there. The study was run as written.")
    else:
        L.append(f"- fieldmc's R-hat is at most {RHAT_LIMIT:g} for every hyperparameter "
                 f"(largest {max(v(r, 'fieldmc_rhat') for r in table):.4f}).")
    if divergences:
        L.append(f"- **fieldmc's chains had {divergences:,} divergent trajectories after "
                 f"burn-in** ({divergences / kept_total:.2%} of the {kept_total:,} kept "
                 f"iterations; per chain {', '.join(str(d) for d in per_chain_div)}), and the job "
                 f"warns: \"{job['warnings']}\". The peer had {peer['nuts']['divergences']} "
                 "(it samples the three hyperparameters with the field integrated out, not the "
                 "joint posterior of field and hyperparameters).")
    else:
        L.append(f"- No divergent trajectory after burn-in in fieldmc's chains; the peer had "
                 f"{peer['nuts']['divergences']}.")
    if high_rhat_peer:
        L.append(f"- **The peer's R-hat exceeds {RHAT_LIMIT:g}** for "
                 + ", ".join(f"{label[r['hyperparameter']]} ({v(r, 'peer_rhat'):.4f})"
                             for r in high_rhat_peer) + ".")
    L.append("")
    L.append("Notes:")
    extent = max(hi - lo for lo, hi in study["model"]["window"])
    cells_q05 = v(table[0], "fieldmc_q05") * study["model"]["grid"] / extent
    L.append("- The tolerance asked for is Monte Carlo error plus the grid's error; the bound "
             "above is the Monte Carlo part only (the grid's error in the hyperparameters is not "
             "measured here), so it is the stricter test. For scale: fieldmc's 5 % quantile of "
             f"the length scale, {fmt(v(table[0], 'fieldmc_q05'), 4)}, spans "
             f"{cells_q05:.1f} cells (docs/data.md asks for at least 12 per length scale).")
    L.append("- Same model (checked on the outputs): " + "; ".join(checks) + ".")
    L.append(f"- fieldmc: sampler `{job['sampler_kind']}`, hyper `{job['sampler_hyper']}`, "
             f"{job['sampler_chains']} chains x {job['sampler_iterations']} iterations "
             f"({job['sampler_burn_in']} burn-in), one thread, step size "
             f"{fmt(job['step_size'])}; {fmt(job['wall_seconds'])} s wall. Its `hyper_*` columns "
             "summarise every kept state; hyper.parquet holds every "
             f"{job['sampler_thin']}th ({traced[1]} a chain), from which z_sd takes fieldmc's sd "
             "and its MCSE (ArviZ's `mcse(method=\"sd\")`, the peer's likewise from its draws).")
    pn = peer["nuts"]
    L.append(f"- Peer: BlackJAX NUTS with window adaptation (target acceptance 0.8, diagonal "
             f"mass matrix) on log theta, chains one after another; seed {ps['seed']}; chains "
             "start at the prior medians moved by 0.3 standard normals on the log scale; "
             f"{pn['divergences']} divergences after warmup, mean tree depth "
             f"{fmt(pn['mean_tree_depth'])}, mean acceptance {fmt(pn['mean_accept'])}; "
             f"{fmt(peer['run_wall_s'])} s wall (compile {fmt(peer['compile_wall_s'])} s more).")
    out_abs = os.path.abspath(a.out)
    argv = " ".join(shlex.quote(t) for t in peer["argv"]).replace(out_abs, "$OUT")
    L.append(f"- Commands (OUT the run's folder): `taskset -c {a.core} {a.fieldmc} run "
             f"{a.study} --out $OUT/fieldmc --threads 1 --quiet`; then `XLA_FLAGS=... "
             f"OMP_NUM_THREADS=1 taskset -c {a.core} python {argv}` (XLA_FLAGS as in the "
             "peer's docstring: one device, no multi-threaded Eigen, one intra-op thread).")
    vs = peer["versions"]
    L.append(f"- Versions: {version} (commit {git_commit(a.out)}); python {vs['python']}, numpy "
             f"{vs['numpy']}, jax {vs['jax']}, blackjax {vs['blackjax']}, arviz {vs['arviz']}, "
             f"pyarrow {pyarrow.__version__}.")
    write_markdown(os.path.join(a.results, "geostat_peer.md"), L)


if __name__ == "__main__":
    main()
