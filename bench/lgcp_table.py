#!/usr/bin/env python3
"""The tables and figure of bench/lgcp.sh: fieldmc's kinds against BlackJAX NUTS on real count
grids at D = 32, 64 and 128, over chain seeds.

Reads OUT/lgcp.csv of one or more runs (the rows `fieldmc bench lgcp --csv` wrote, one per
run; its columns are `fieldmc::bench::lgcp::RunRow::header`) and OUT/load_*.txt; writes
- RESULTS/lgcp.csv: those rows, merged and ordered by grid size;
- RESULTS/lgcp.md: per grid size and grid, each kind's medians over the seeds, the range of its
  ratio to the peer, its worst R-hat and how many seeds' means agreed with the peer's, and the
  sentences that say what the numbers show (generated from the same numbers);
- RESULTS/lgcp_ratios.md: every kind's median ratio to the peer on every grid, in one table;
- RESULTS/lgcp_cost.md and FIGURE (default docs/performance/lgcp_cost.png): CPU milliseconds per
  effective draw of the worst cell against the number of cells N, on the Lansing grid binned at
  D = 32, 64 and 128 (the one grid measured at every size).
Standard library and matplotlib.
"""
import argparse
import csv
import os
import statistics

from table_common import fmt, load_averages, measured

PEER = "blackjax_nuts"
CONTROL = "laplace"
# What "converged" means here, as in the issue and the peer's own rule.
RHAT_LIMIT = 1.01
ESS_FLOOR = 400


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, action="append",
                   help="bench/lgcp.sh's output directory (repeat to merge runs, e.g. of "
                        "different SIDES; a (grid, D) must come from one run)")
    p.add_argument("--results", default="bench/results")
    p.add_argument("--figure", default="docs/performance/lgcp_cost.png")
    return p.parse_args()


def number(text):
    return float(text) if text != "" else float("nan")


def read_rows(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for key in ("side", "observed", "held_out", "seed", "burn_in", "kept", "chains",
                    "cells_beyond_4"):
            r[key] = int(r[key])
        for key in ("length_scale", "variance", "cpu_seconds", "min_ess_bulk",
                    "ess_per_cpu_second", "ratio_to_peer", "max_rhat", "acceptance", "max_z",
                    "z_threshold"):
            r[key] = number(r[key])
        # Columns added with laplace_hmc version 2 (empty in older runs' CSVs).
        for key in ("min_ess_tail", "min_ess_folded", "ess_per_draw", "leapfrog_steps"):
            r[key] = number(r.get(key) or "")
    return rows


def finite(values):
    return [v for v in values if v == v]


def median(values):
    values = finite(values)
    return statistics.median(values) if values else float("nan")


def summarise(rows):
    """One line per (side, grid, kind): medians over seeds, ratio range, worst R-hat, agreement."""
    groups = {}
    for r in rows:
        groups.setdefault((r["side"], r["grid"], r["kind"]), []).append(r)
    out = []
    for (side, grid, kind), runs in groups.items():
        ratios = finite(r["ratio_to_peer"] for r in runs if r["kind"] != PEER)
        checked = [r for r in runs if r["means"] in ("agree", "differ")]
        out.append({
            "side": side, "grid": grid, "kind": kind, "seeds": len(runs),
            "observed": runs[0]["observed"], "held_out": runs[0]["held_out"],
            "variance": runs[0]["variance"], "burn_in": runs[0]["burn_in"],
            "kept": runs[0]["kept"],
            "cpu_seconds": median(r["cpu_seconds"] for r in runs),
            "min_ess_bulk": median(r["min_ess_bulk"] for r in runs),
            "min_ess_tail": median(r["min_ess_tail"] for r in runs),
            "min_ess_folded": median(r["min_ess_folded"] for r in runs),
            "ess_per_draw": median(r["ess_per_draw"] for r in runs),
            "tail_per_draw": median(r["min_ess_tail"] / (r["kept"] * r["chains"])
                                    for r in runs if r["kept"] * r["chains"] > 0),
            "folded_per_draw": median(r["min_ess_folded"] / (r["kept"] * r["chains"])
                                      for r in runs if r["kept"] * r["chains"] > 0),
            "leapfrog_steps": median(r["leapfrog_steps"] for r in runs),
            "ess_per_cpu_second": median(r["ess_per_cpu_second"] for r in runs),
            "ratio": median(ratios) if ratios else float("nan"),
            "ratio_low": min(ratios) if ratios else float("nan"),
            "ratio_high": max(ratios) if ratios else float("nan"),
            "worst_rhat": max((r["max_rhat"] for r in runs), default=float("nan")),
            "worst_ess": min((r["min_ess_bulk"] for r in runs), default=float("nan")),
            "agree": sum(r["means"] == "agree" for r in checked),
            "checked": len(checked),
            "max_z": max((r["max_z"] for r in checked), default=float("nan")),
            "ms_per_draw": median(1e3 * r["cpu_seconds"] / r["min_ess_bulk"] for r in runs
                                  if r["min_ess_bulk"] > 0),
        })
    return out


def run_order(summary):
    """The kinds in the order the benchmark runs them (the peer, the control, then
    `SamplerKind::ALL`'s order), each once."""
    return list(dict.fromkeys(s["kind"] for s in summary))


def converged(s):
    return s["worst_rhat"] <= RHAT_LIMIT and s["worst_ess"] >= ESS_FLOOR


def ratio_text(s):
    if s["ratio"] != s["ratio"]:
        return "—"
    if s["ratio_low"] == s["ratio_high"]:
        return f"{s['ratio']:.2f}"
    return f"{s['ratio']:.2f} ({s['ratio_low']:.2f}-{s['ratio_high']:.2f})"


def grid_table(summary, side, grid):
    mine = [s for s in summary if s["side"] == side and s["grid"] == grid]
    order = {k: i for i, k in enumerate(run_order(mine))}
    mine.sort(key=lambda s: order[s["kind"]])
    first = mine[0]
    lines = [
        f"{grid}, D = {side} ({first['observed']:,} observed / {first['held_out']:,} held out, "
        f"variance {first['variance']:g}):",
        "",
        "| kind | seeds | burn-in + kept | CPU s | min-cell bulk ESS | ESS / CPU s | x peer (range) "
        "| bulk / tail / folded ESS per draw | gradients per iteration "
        "| worst max R-hat | means agree | max \\|z\\| |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in mine:
        name = "BlackJAX NUTS (peer)" if s["kind"] == PEER else s["kind"]
        sampled = s["kind"] != CONTROL
        budget = f"{s['burn_in']:,} + {s['kept']:,}" if sampled else "—"
        agree = f"{s['agree']}/{s['checked']}" if s["checked"] else "—"
        lines.append(
            f"| {name} | {s['seeds']} | {budget} | {fmt(s['cpu_seconds'])} | "
            f"{fmt(s['min_ess_bulk']) if sampled else '—'} | "
            f"{fmt(s['ess_per_cpu_second']) if sampled else '—'} | "
            f"{ratio_text(s) if s['kind'] != PEER else '1'} | "
            f"{per_draw(s) if sampled else '—'} | {fmt(s['leapfrog_steps'])} | "
            f"{fmt(s['worst_rhat'], 4) if sampled else '—'} | {agree} | {fmt(s['max_z'])} |")
    return lines


def per_draw(s):
    """The worst cell's bulk, tail and folded ESS per kept draw (— where not measured: the peer
    reports no folded ESS, older runs no tail)."""
    return " / ".join(f"{x:.2f}" if x == x else "—"
                      for x in (s["ess_per_draw"], s["tail_per_draw"], s["folded_per_draw"]))


def findings(summary, side, grid):
    mine = [s for s in summary if s["side"] == side and s["grid"] == grid]
    peer = next((s for s in mine if s["kind"] == PEER), None)
    kinds = [s for s in mine if s["kind"] not in (PEER, CONTROL)]
    good = [s for s in kinds if converged(s) and s["agree"] == s["checked"]]
    best = max(good, key=lambda s: s["ess_per_cpu_second"], default=None)
    control = next((s for s in mine if s["kind"] == CONTROL), None)
    parts = [f"**{grid}, D = {side}**:"]
    if peer:
        state = "converged" if converged(peer) else "did not converge"
        parts.append(f"the peer {state} (worst max R-hat {peer['worst_rhat']:.4f}, "
                     f"min-cell ESS {peer['worst_ess']:.0f} at worst over "
                     f"{peer['seeds']} seed{'s' if peer['seeds'] > 1 else ''});")
    if best:
        spread = ("" if best["ratio_low"] == best["ratio_high"] else
                  f" ({best['ratio_low']:.2f}-{best['ratio_high']:.2f} over the seeds)")
        ratio = (f", **{best['ratio']:.2f}x** the peer's min-cell bulk ESS per CPU second"
                 f"{spread}" if best["ratio"] == best["ratio"] else "")
        parts.append(f"the best converged kind whose means agree is `{best['kind']}`{ratio}.")
    else:
        parts.append("no fieldmc kind both converged and agreed with the peer.")
    bad = [s["kind"] for s in kinds if not converged(s)]
    if bad:
        parts.append(f"Not converged in every seed (R-hat > {RHAT_LIMIT} or ESS < {ESS_FLOOR}): "
                     + ", ".join(f"`{k}`" for k in sorted(bad)) + ".")
    differ = [s["kind"] for s in kinds if s["agree"] < s["checked"]]
    if differ:
        parts.append("Means differed from the peer's in some seed: "
                     + ", ".join(f"`{k}`" for k in sorted(differ)) + ".")
    if control and control["checked"]:
        verdict = ("was rejected, as it must be" if control["agree"] == 0
                   else "was NOT rejected in every seed: the check lacks power here")
        parts.append(f"The Laplace mode (negative control) {verdict}.")
    return "- " + " ".join(parts)


def cost_table(summary, grid="lansing"):
    sides = sorted({s["side"] for s in summary if s["grid"] == grid})
    kinds = [k for k in run_order(s for s in summary if s["grid"] == grid) if k != CONTROL]
    cell = {(s["side"], s["kind"]): s for s in summary if s["grid"] == grid}
    lines = [
        f"CPU milliseconds per effective draw of the worst cell ({grid}, median over seeds; "
        f"— where the kind was not run at that size):",
        "",
        "| kind | " + " | ".join(f"D = {d} (N = {d * d:,})" for d in sides) + " |",
        "|---|" + "---|" * len(sides),
    ]
    for k in kinds:
        name = "BlackJAX NUTS (peer)" if k == PEER else k
        values = []
        for d in sides:
            s = cell.get((d, k))
            if s is None:
                values.append("—")
            else:
                mark = "" if converged(s) else " (not converged)"
                values.append(f"{fmt(s['ms_per_draw'])}{mark}")
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    return lines, sides, kinds, cell


def ratio_overview(summary):
    """One line per fieldmc kind, one column per (grid, D): the median ratio to the peer."""
    columns = sorted({(s["side"], s["grid"]) for s in summary})
    kinds = [k for k in run_order(summary) if k not in (PEER, CONTROL)]
    cell = {(s["side"], s["grid"], s["kind"]): s for s in summary}
    lines = [
        "Min-cell bulk ESS per CPU second over BlackJAX NUTS's (median over seeds; * where the "
        f"kind did not converge in every seed: R-hat > {RHAT_LIMIT} or ESS < {ESS_FLOOR}; "
        "— not run):",
        "",
        "| kind | " + " | ".join(f"{g} {d}" for d, g in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for k in kinds:
        values = []
        for d, g in columns:
            s = cell.get((d, g, k))
            if s is None or s["ratio"] != s["ratio"]:
                values.append("—")
            else:
                values.append(f"{s['ratio']:.2f}" + ("" if converged(s) else "*"))
        lines.append(f"| {k} | " + " | ".join(values) + " |")
    return lines


def figure(path, grid, sides, kinds, cell):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8.0, 4.4), dpi=110)
    for k in kinds:
        runs = [cell[(d, k)] for d in sides if (d, k) in cell]
        if not runs:
            continue
        xs = [s["side"] ** 2 for s in runs]
        ys = [s["ms_per_draw"] for s in runs]
        style = dict(color="black", linewidth=2.2, marker="s") if k == PEER else dict(marker="o")
        line, = ax.plot(xs, ys, label="BlackJAX NUTS (peer)" if k == PEER else k, **style)
        # Hollow markers where the kind did not converge in every seed.
        for x, y, s in zip(xs, ys, runs):
            if not converged(s):
                ax.plot([x], [y], marker="o", markersize=9, markerfacecolor="white",
                        color=line.get_color(), linestyle="none")
    ax.plot([], [], marker="o", markerfacecolor="white", color="grey", linestyle="none",
            label="not converged")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([d * d for d in sides], [f"{d * d:,}\n(D = {d})" for d in sides])
    ax.set_xlabel("cells N")
    ax.set_ylabel("CPU ms per effective draw (worst cell)")
    ax.set_title(f"Cost per effective draw against N: {grid} (lower is better)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def provenance(outs, rows):
    runs = []
    for out in outs:
        load = load_averages(out)
        sides = sorted({r["side"] for r in rows if r["run"] == out})
        cores_file = os.path.join(out, "cores.txt")
        cores_text = (open(cores_file).read().strip() + ", "
                      if os.path.exists(cores_file) else "fieldmc on core 0, the peer on core 1, ")
        commit_file = os.path.join(out, "commit.txt")
        commit = (f"fieldmc at commit {open(commit_file).read().strip()}, "
                  if os.path.exists(commit_file) else "")
        runs.append(f"D = {', '.join(map(str, sides))}: {commit}{cores_text}load average before "
                    f"{load[0]}, after {load[1]}")
    return (f"{measured('bench/lgcp_table.py', 'Tabulated')}; {'; '.join(runs)}. fieldmc "
            f"runs 4 chains one after another on one thread, the peer (BlackJAX NUTS, float64, "
            f"1,000 warmup + 1,000 draws x 4 chains) likewise; the two never run at the same time. "
            f"CPU seconds: fieldmc's from the prior's factorisation to the last draw; the peer's "
            f"warmup and sampling without JAX's compile. Model: l = 0.1 on the unit square, "
            f"`mean = \"auto\"`, the same 25 % of cells held out for every seed. \"x peer\" is the "
            f"ratio of min-cell bulk ESS per CPU second to the peer's at the same seed. ESS per "
            f"draw: the worst cell's bulk ESS, tail ESS (5 % and 95 % quantiles) and folded ESS "
            f"(|u - median|: the spread; fieldmc only) over the kept draws (iterations) of all chains, "
            f"medians over seeds: above 1 the draws of the mean are antithetic. Gradients per "
            f"iteration: fieldmc's over the kept iterations, the peer's over warmup and draws. "
            f"\"means agree\" counts seeds whose every cell lies within the Bonferroni threshold "
            f"(family-wise 1e-3 per comparison) of the peer's mean in combined MCSE.")


def main():
    a = args()
    rows, header, raw_lines = [], None, []
    for out in a.out:
        path = os.path.join(out, "lgcp.csv")
        with open(path, newline="") as fh:
            first = fh.readline().strip()
            side = first.split(",").index("side")
            # The rows as written, merged in the order of grid size (a stable sort).
            raw_lines += [(int(line.split(",")[side]), line) for line in fh if line.strip()]
        assert header in (None, first), f"{path}: other columns than the first run's"
        header = first
        mine = read_rows(path)
        for r in mine:
            r["run"] = out
        rows += mine
    owner = {}
    for r in rows:
        assert owner.setdefault((r["grid"], r["side"]), r["run"]) == r["run"], \
            f"{r['grid']} at D = {r['side']} comes from two runs"
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "lgcp.csv"), "w", newline="") as fh:
        fh.write(header + "\n")
        for line in sorted(raw_lines, key=lambda side_line: side_line[0]):
            fh.write(line[1])
    summary = summarise(rows)
    lines = [provenance(a.out, rows), ""]
    for side in sorted({s["side"] for s in summary}):
        lines += [f"### D = {side}", ""]
        grids = sorted({s["grid"] for s in summary if s["side"] == side})
        for grid in grids:
            lines += grid_table(summary, side, grid) + [""]
        lines += [findings(summary, side, grid) for grid in grids] + [""]
    with open(os.path.join(a.results, "lgcp.md"), "w") as fh:
        fh.write("\n".join(lines).rstrip() + "\n")
    with open(os.path.join(a.results, "lgcp_ratios.md"), "w") as fh:
        fh.write("\n".join(ratio_overview(summary)) + "\n")
    cost, sides, kinds, cell = cost_table(summary)
    with open(os.path.join(a.results, "lgcp_cost.md"), "w") as fh:
        fh.write("\n".join(cost) + "\n")
    figure(a.figure, "lansing", sides, kinds, cell)


if __name__ == "__main__":
    main()
