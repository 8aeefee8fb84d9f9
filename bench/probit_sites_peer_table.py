#!/usr/bin/env python3
"""The inputs and the table of bench/probit_sites_peer.sh: studies/geostat/hickory_sites.toml
(probit at 410 sites, each at a cell centre) by fieldmc and by BlackJAX NUTS on the grid model
with the cells without a site held out (../shared/peers/lgcp_joint_peer.py), cell by cell.

`inputs`: from the study and the sites file it names (not from fieldmc's output) the cells
without a site, written to --held (cell indices j*D + i, the peer's --heldout-cells); prints the
sites file, length scale, variance and mean as shell assignments. Refuses a study the peer cannot
fit as the same model: a site off a cell centre, two sites in a cell, a site's label not its
cell's label in the grid file, held-out sites, a hyperparameter prior, a probit noise sd other
than 1 (fieldmc's probit is Phi(u / noise_sd), the peer's Phi(u)).

`table`: reads OUT/fieldmc/{jobs,fields,sites,chains}.parquet, OUT/peer.json, OUT/held.txt and
OUT/{commit,load_before,load_after}.txt; checks that the two fitted one model from fieldmc's own
outputs (every site fitted, each at exactly one cell centre of fields.parquet, those cells the
peer's observed cells, each site's label its cell's label in the grid file the peer read, the
centres the grid file's; the hyperparameters, mean and noise sd); compares each cell's posterior
mean of u and its sd; writes RESULTS/probit_sites_peer.csv (one row per cell) and
RESULTS/probit_sites_peer.md (the table and sentences generated from the same numbers). Needs
polars (and pyarrow). The CSV's columns: the cell (index j*D + i, i, j, centre x, y), whether it
holds a site (`surveyed`) and then its `label` (empty without a site: no model sees it), each
sampler's posterior mean, sd, MCSE of the mean, bulk ESS and R-hat of u, z_mean, z_sd and the sd
ratio fieldmc / peer.

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
import shlex
import statistics
import tomllib

import polars as pl

from table_common import fieldmc_version, fmt, git_commit, load_averages, machine, utc_now, write_csv, write_markdown

FAMILY_WISE = 1e-4
RHAT_LIMIT = 1.01
FIELDMC, PEER = "fieldmc", "blackjax_nuts"
CELL_COLUMNS = ["cell", "i", "j", "x", "y", "surveyed", "label",
                "fieldmc_mean", "fieldmc_sd", "fieldmc_mcse", "fieldmc_ess_bulk", "fieldmc_rhat",
                "peer_mean", "peer_sd", "peer_mcse", "peer_ess_bulk", "peer_rhat",
                "z_mean", "z_sd", "sd_ratio"]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("inputs", help="the peer's held-out cells and settings from the study")
    t = sub.add_parser("table", help="the comparison, from a finished bench/probit_sites_peer.sh")
    for q in (i, t):
        q.add_argument("--study", default="studies/geostat/hickory_sites.toml")
        q.add_argument("--grid", default="data/lansing_hickory_presence_grid32.csv",
                       help="the presence grid the peer reads")
    i.add_argument("--held", required=True, help="where to write the held-out cells")
    t.add_argument("--out", required=True, help="bench/probit_sites_peer.sh's output directory")
    t.add_argument("--results", default="bench/results")
    t.add_argument("--fieldmc", default="target/release/fieldmc", help="for its --version")
    t.add_argument("--core", default="1", help="the core both runs were pinned to (for the md)")
    return p.parse_args()


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def read_study(path):
    """The study's settings the peer needs, refusing what the peer cannot fit as the same model."""
    with open(path, "rb") as fh:
        s = tomllib.load(fh)
    m, d = s["model"], s["data"]
    assert m["likelihood"] == "probit" and d["source"] == "sites", f"{path}: probit at sites"
    assert isinstance(m["grid"], int), f"{path}: a square grid (the peer's D x D)"
    assert float(d.get("holdout", 0)) == 0, f"{path}: data.holdout must be 0 (every site fitted)"
    assert float(d.get("noise_sd", 1.0)) == 1.0, f"{path}: the peer's probit is Phi(u): noise sd 1"
    assert m.get("kernel", "squared-exponential") == "squared-exponential", path
    assert "length_scale_y" not in m, f"{path}: an isotropic kernel"
    for k in ("length_scale_prior", "variance_prior", "mean_prior"):
        assert m.get(k, "fixed") == "fixed", f"{path}: model.{k} must be fixed"
    assert not d.get("covariates") and "offset" not in m, f"{path}: no covariates, no offset"
    sites = os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(path), d["path"])))
    return {"D": m["grid"], "window": m["window"], "sites": sites, "value": d.get("value", "value"),
            "x": d.get("x", "x"), "y": d.get("y", "y"), "length_scale": float(m["length_scale"]),
            "variance": float(m["variance"]), "mean": float(m.get("mean", 0)),
            "noise_sd": float(d.get("noise_sd", 1.0))}


def read_grid(path, D):
    """The grid file the peer reads: cell j*D + i -> (x_center, y_center, label)."""
    grid = {}
    for r in read_csv(path):
        i, j = int(r["i"]), int(r["j"])
        grid[j * D + i] = (float(r["x_center"]), float(r["y_center"]), int(r["label"]))
    assert sorted(grid) == list(range(D * D)), f"{path}: not every cell of a {D} x {D} grid"
    return grid


def inputs(a):
    st = read_study(a.study)
    D = st["D"]
    grid = read_grid(a.grid, D)
    at = {(x, y): c for c, (x, y, _) in grid.items()}
    surveyed = set()
    for n, r in enumerate(read_csv(st["sites"]), start=2):
        xy = (float(r[st["x"]]), float(r[st["y"]]))
        c = at.get(xy)
        assert c is not None, f"{st['sites']}:{n}: site {xy} is not at a cell centre of {a.grid}"
        assert c not in surveyed, f"{st['sites']}:{n}: a second site in cell {c}"
        label = int(float(r[st["value"]]))
        assert label == grid[c][2], f"{st['sites']}:{n}: label {label}, the grid's {grid[c][2]}"
        surveyed.add(c)
    with open(a.held, "w") as fh:
        fh.write("\n".join(str(c) for c in range(D * D) if c not in surveyed) + "\n")
    for name, value in (("SITES", st["sites"]), ("LENGTH_SCALE", repr(st["length_scale"])),
                        ("VARIANCE", repr(st["variance"])), ("MEAN", repr(st["mean"]))):
        print(f"{name}={shlex.quote(value)}")


def same_model(st, job, fields, sites, grid, held, peer):
    """Every check that fieldmc and the peer fitted one model, from fieldmc's outputs, as sentences
    for the notes."""
    ps = peer["settings"]
    D = st["D"]
    N = D * D
    checks = []
    assert job["model_likelihood"] == "probit" and ps["likelihood"] == "probit", ps["likelihood"]
    assert job["model_kernel"] == "squared-exponential" and job["model_grid"] == D
    assert job["model_length_scale"] == ps["fixed"]["l"] == st["length_scale"]
    assert job["model_variance"] == ps["fixed"]["sigma2"] == st["variance"]
    assert job["model_mean_value"] == ps["fixed"]["mu"] == st["mean"]
    assert job["data_noise_sd"] == 1.0, job["data_noise_sd"]
    assert ps["coords_mode"] == "csv" and ps["infer"] == [] and ps["N"] == N == len(fields)
    assert ps["covariate_names"] == [] and ps["offset"].startswith("none"), ps
    assert ps["n_obs"] == N - len(held) and ps["n_held"] == len(held), (ps["n_obs"], ps["n_held"])
    checks.append(f"probit, squared-exponential kernel, length scale {fmt(st['length_scale'])}, "
                  f"variance {fmt(st['variance'])}, mean {fmt(st['mean'])}, all fixed, in both; "
                  "fieldmc's probit noise sd 1 (P(present) = Phi(u / 1)), the peer's Phi(u)")
    # fieldmc's cells are the grid file's cells, at its centres (the peer's --coords csv).
    for c, f in enumerate(fields):
        assert f["cell"] == c and f["i"] + D * f["j"] == c, c
        assert (f["x"], f["y"]) == grid[c][:2], (c, f["x"], f["y"], grid[c][:2])
        assert not f["observed"], c          # sites data: the cells see no data themselves
    checks.append(f"fieldmc's {N} cell centres (fields.parquet `x`, `y`) equal the grid file's "
                  "`x_center`, `y_center`, which the peer's kernel uses (`--coords csv`), exactly")
    # Every site fitted, each exactly at one cell centre, with its cell's label.
    assert job["observed_sites"] == len(sites) and job["held_out_sites"] == 0
    at = {(f["x"], f["y"]): f["cell"] for f in fields}
    fitted = {}
    for s, r in zip(sites, read_csv(st["sites"])):   # sites.parquet's rows are the file's rows
        assert (s["x"], s["y"]) == (float(r[st["x"]]), float(r[st["y"]])), (s["row"], r)
    for s in sites:
        assert s["set"] == "fitted", s
        c = at.get((s["x"], s["y"]))
        assert c is not None, f"site row {s['row']} at ({s['x']}, {s['y']}) is not a cell centre"
        assert c not in fitted, f"two sites in cell {c}"
        fitted[c] = s
        label = 1 if s["value"] > 0 else 0     # fieldmc writes probit labels as -1 / +1
        assert s["value"] in (-1.0, 1.0) and label == grid[c][2], (c, s["value"], grid[c][2])
    assert set(fitted) == set(range(N)) - held, "fieldmc's sites are not the peer's observed cells"
    assert held == set(ps["held_cells"]), "the peer held out other cells than held.txt"
    present = sum(grid[c][2] for c in fitted)
    checks.append(f"fieldmc fitted all {len(sites)} sites (sites.parquet: `set` = fitted, none "
                  "held out), each exactly at one cell centre, no two in a cell; those cells are "
                  f"the peer's observed cells and the other {len(held)} its held-out cells; each "
                  "site's label (sites.parquet `value`, -1/+1) is its cell's `label` in the grid "
                  f"file the peer read ({present} present, {len(sites) - present} absent)")
    return checks, fitted


def cell_rows(fields, fitted, grid, peer):
    pc = peer["cells"]
    draws = peer["settings"]["chains"] * peer["settings"]["iters"]
    rows = []
    for c, f in enumerate(fields):
        pm, psd, pmc, pe = pc["mean_u"][c], pc["sd_u"][c], pc["mcse_mean_u"][c], pc["ess_bulk_u"][c]
        se_f = f["post_sd"] / math.sqrt(2 * min(f["ess_bulk"], draws))
        se_p = psd / math.sqrt(2 * min(pe, draws))
        rows.append({"cell": c, "i": f["i"], "j": f["j"], "x": f["x"], "y": f["y"],
                     "surveyed": c in fitted, "label": grid[c][2] if c in fitted else None,
                     "fieldmc_mean": f["post_mean"], "fieldmc_sd": f["post_sd"],
                     "fieldmc_mcse": f["mcse_mean"], "fieldmc_ess_bulk": f["ess_bulk"],
                     "fieldmc_rhat": f["rhat"],
                     "peer_mean": pm, "peer_sd": psd, "peer_mcse": pmc, "peer_ess_bulk": pe,
                     "peer_rhat": pc["rhat_u"][c],
                     "z_mean": (f["post_mean"] - pm) / math.hypot(f["mcse_mean"], pmc),
                     "z_sd": (f["post_sd"] - psd) / math.hypot(se_f, se_p),
                     "sd_ratio": f["post_sd"] / psd})
    return rows


def table(a):
    st = read_study(a.study)
    D = st["D"]
    grid = read_grid(a.grid, D)
    jobs = pl.read_parquet(os.path.join(a.out, "fieldmc", "jobs.parquet"))
    assert jobs.height == 1, f"expected one fieldmc job, got {jobs.height}"
    job = jobs.row(0, named=True)
    assert job["status"] == "ok", job["error"]
    fields = (pl.read_parquet(os.path.join(a.out, "fieldmc", "fields.parquet"))
              .sort("cell").to_dicts())
    sites = pl.read_parquet(os.path.join(a.out, "fieldmc", "sites.parquet")).sort("row").to_dicts()
    chains = pl.read_parquet(os.path.join(a.out, "fieldmc", "chains.parquet"))
    with open(os.path.join(a.out, "peer.json")) as fh:
        peer = json.load(fh)
    with open(os.path.join(a.out, "held.txt")) as fh:
        held = {int(c) for c in fh.read().split()}
    checks, fitted = same_model(st, job, fields, sites, grid, held, peer)

    os.makedirs(a.results, exist_ok=True)
    cells_path = os.path.join(a.results, "probit_sites_peer.csv")
    write_csv(cells_path, CELL_COLUMNS, cell_rows(fields, fitted, grid, peer))

    # ---- the Markdown, every per-cell number from the CSV just written (read back)
    cells = read_csv(cells_path)
    n = len(cells)
    col = lambda rows, k: [float(r[k]) for r in rows]
    bound = statistics.NormalDist().inv_cdf(1 - FAMILY_WISE / (2 * n))
    zm = [abs(z) for z in col(cells, "z_mean")]
    within = lambda zs_, t: sum(z <= t for z in zs_)
    surveyed = [r for r in cells if r["surveyed"] == "true"]
    unsurveyed = [r for r in cells if r["surveyed"] == "false"]
    worst = max(cells, key=lambda r: abs(float(r["z_mean"])))
    beyond = [r for r in cells if abs(float(r["z_mean"])) > bound]
    draws_f = job["sampler_chains"] * (job["sampler_iterations"] - job["sampler_burn_in"])
    cpu_f, cpu_p = job["cpu_seconds"], peer["run_cpu_s"]
    ps = peer["settings"]
    methods = []
    for name, label, sampler, chains_n, per_chain, cpu, ess, rhat, div in (
            (FIELDMC, "fieldmc", job["sampler_kind"], job["sampler_chains"],
             job["sampler_iterations"] - job["sampler_burn_in"], cpu_f,
             col(cells, "fieldmc_ess_bulk"), col(cells, "fieldmc_rhat"),
             int(chains["divergences"].sum())),
            (PEER, "BlackJAX NUTS (peer)", "nuts", ps["chains"], ps["iters"], cpu_p,
             col(cells, "peer_ess_bulk"), col(cells, "peer_rhat"),
             peer["nuts"]["divergences"])):
        methods.append({"name": name, "label": label, "sampler": sampler, "chains": chains_n,
                        "per_chain": per_chain, "cpu": cpu, "ess_min": min(ess),
                        "ess_median": statistics.median(ess), "rhat_max": max(rhat),
                        "divergences": div})
    f, p = methods
    ratio_min = (f["ess_min"] / f["cpu"]) / (p["ess_min"] / p["cpu"])
    ratio_med = (f["ess_median"] / f["cpu"]) / (p["ess_median"] / p["cpu"])
    nproc, cpu_model = machine()
    load_before, load_after = load_averages(a.out)
    now = utc_now()
    version = fieldmc_version(a.fieldmc)
    verdict = "agree" if not beyond else "DISAGREE"
    ratios = sorted(col(cells, "sd_ratio"))
    ratios_s = sorted(col(surveyed, "sd_ratio"))
    ratios_u = sorted(col(unsurveyed, "sd_ratio"))
    z_sd = col(cells, "z_sd")
    L = ["# Probit at sites against BlackJAX NUTS on the grid model, cell by cell", ""]
    L.append(f"Generated by `bench/probit_sites_peer.sh` (`bench/probit_sites_peer_table.py`) on "
             f"{now}, commit {git_commit(a.out)}, {version}; machine: {nproc} cores, "
             f"{cpu_model}; both runs one after the other on core {a.core}; load average before "
             f"{load_before}, after {load_after}. Study `{a.study}` ({len(surveyed)} sites, each "
             f"at a cell centre, on {n} cells; {len(unsurveyed)} cells without a site, predicted). "
             "Numbers: `bench/results/probit_sites_peer.csv` (one row per cell).")
    L.append("")
    L.append("| method | sampler | chains x draws | CPU s | cell bulk ESS min | median "
             "| min ESS / CPU s | median ESS / CPU s | cell R-hat max | divergences |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in methods:
        L.append(f"| {r['label']} | {r['sampler']} | {r['chains']} x {r['per_chain']} "
                 f"| {fmt(r['cpu'])} | {fmt(r['ess_min'])} | {fmt(r['ess_median'])} "
                 f"| {fmt(r['ess_min'] / r['cpu'])} | {fmt(r['ess_median'] / r['cpu'])} "
                 f"| {fmt(r['rhat_max'], 4)} | {r['divergences']} |")
    L.append("")
    share = lambda rows: within([abs(float(r["z_mean"])) for r in rows], 1.96) / len(rows)
    L.append(f"- **The cells' posterior means {verdict}** within Monte Carlo error: the "
             f"largest |z| of the {n} is {max(zm):.2f} (cell ({worst['i']}, {worst['j']}), "
             f"{'surveyed' if worst['surveyed'] == 'true' else 'without a site'}: "
             f"{fmt(float(worst['fieldmc_mean']), 4)} against {fmt(float(worst['peer_mean']), 4)}), "
             f"against the bound {bound:.2f} for a family-wise false-alarm rate of "
             f"{FAMILY_WISE:g} over the {n} cells"
             + ("." if not beyond else
                f"; {len(beyond)} cells beyond it: "
                + ", ".join(f"({r['i']}, {r['j']}) z = {float(r['z_mean']):.2f}"
                            for r in beyond[:10]) + ("" if len(beyond) <= 10 else ", ...") + ".")
             + f" Share of cells within 1.96 combined standard errors: {within(zm, 1.96) / n:.1%}"
             f" (95 % expected when the two agree; no test either, as neighbouring cells' errors "
             f"are correlated); {share(surveyed):.1%} of the {len(surveyed)} surveyed, "
             f"{share(unsurveyed):.1%} of the {len(unsurveyed)} without a site.")
    L.append(f"- Posterior sds, fieldmc / peer: mean ratio {statistics.fmean(ratios):.4f}, 90 % of "
             f"the cells between {ratios[int(0.05 * n)]:.3f} and {ratios[int(0.95 * n)]:.3f} "
             f"(surveyed cells: mean {statistics.fmean(ratios_s):.4f}; cells without a site: "
             f"{statistics.fmean(ratios_u):.4f}); the mean of the cells' z_sd is "
             f"{statistics.fmean(z_sd):.3f} and its spread over the cells "
             f"{statistics.stdev(z_sd):.2f}. **This is not a test**: z_sd's standard error "
             "sd / sqrt(2 ESS) is a normal approximation that can understate an sd's Monte Carlo "
             "error under HMC (bench/results/region_peer.md: a spread of 1.30 there), and the "
             "peer does not write the draws of u the right error needs; read the ratios as a "
             "description, not as a pass.")
    L.append(f"- Effective draws per CPU second, fieldmc / peer: {ratio_min:.1f}x at the cell "
             f"with the fewest, {ratio_med:.1f}x at the median cell.")
    rhat_ok = f["rhat_max"] <= RHAT_LIMIT and p["rhat_max"] <= RHAT_LIMIT
    L.append(f"- Convergence: largest cell R-hat {f['rhat_max']:.4f} (fieldmc), "
             f"{p['rhat_max']:.4f} (peer), "
             + ("both within" if rhat_ok else "NOT both within") + f" {RHAT_LIMIT}; fieldmc's "
             "warnings: " + (f"`{job['warnings']}`" if job["warnings"] else "none") + ".")
    L.append("")
    L.append("Notes:")
    L.append(f"- fieldmc: `{f['sampler']}` (the study's default sampler with every hyperparameter "
             f"fixed), {f['chains']} chains x ({job['sampler_burn_in']} burn-in + {f['per_chain']} "
             "kept), one thread; CPU s = the job's CPU time (jobs.parquet `cpu_seconds`, setup "
             f"included). Peer: BlackJAX NUTS, window adaptation, {ps['chains']} chains x "
             f"({ps['warmup']} warmup + {ps['iters']} draws) one after another on one core, one "
             "XLA thread; CPU s = warmup + sampling (`run_cpu_s`), its compile "
             f"({fmt(peer['compile_cpu_s'])} CPU s) excluded; mean tree depth "
             f"{fmt(peer['nuts']['mean_tree_depth'])}. Cell ESS: bulk ESS of u in each cell "
             f"(rank-normalised, ArviZ's definition in both), of {draws_f} draws (fieldmc) and "
             f"{ps['chains'] * ps['iters']} (peer).")
    L.append("- z of a mean uses each sampler's own MCSE (fieldmc's `mcse_mean`, ArviZ's "
             "`mcse_mean` for the peer); z of an sd uses sd / sqrt(2 min(bulk ESS, draws)) per "
             "sampler (a normal approximation).")
    L.append("- Same model (checked on the outputs): " + "; ".join(checks) + ". The jitter "
             f"on each axis' 1-D kernel differs: fieldmc's {job['jitter']:g} (jobs.parquet "
             f"`jitter`), the peer's {ps['jitter']:g} (a change of the prior covariance of that "
             "order, far below the Monte Carlo error). The peer's start-up checks (its kernel's "
             "Kronecker order against the cells' own coordinates, its gradient against finite "
             "differences) are in OUT/peer.json; it ran with affinity "
             f"{peer['affinity']} and {peer['env'].get('OMP_NUM_THREADS')} OpenMP thread.")
    L.append(f"- Commands (OUT the run's folder): `taskset -c {a.core} {a.fieldmc} run {a.study} "
             f"--out OUT/fieldmc --threads 1 --quiet`; `XLA_FLAGS=... OMP_NUM_THREADS=1 taskset "
             f"-c {a.core} python ../shared/peers/lgcp_joint_peer.py --data {a.grid} --likelihood "
             f"probit --coords csv --heldout-cells OUT/held.txt --l {st['length_scale']:g} "
             f"--sigma2 {st['variance']:g} --mu {st['mean']:g} --chains {ps['chains']} --warmup "
             f"{ps['warmup']} --iters {ps['iters']} --seed {ps['seed']} --out OUT/peer.json`.")
    L.append(f"- Versions: python {peer['versions']['python']}, jax {peer['versions']['jax']}, "
             f"blackjax {peer['versions']['blackjax']}, arviz {peer['versions']['arviz']}.")
    write_markdown(os.path.join(a.results, "probit_sites_peer.md"), L)


def main():
    a = args()
    inputs(a) if a.command == "inputs" else table(a)


if __name__ == "__main__":
    main()
