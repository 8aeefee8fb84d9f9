#!/usr/bin/env python3
"""The table of bench/laplace_hmc_block.sh: laplace_hmc with V dense (version 2's Laplace
Gaussian) against V in the prior's leading spectral block (version 3), on the tuning grids.

Reads OUT/dense<0|1>_D<side>.csv (the rows of `experiment_laplace_hmc`, columns
`LAPLACE_HMC_COLUMNS`), writes
- RESULTS/laplace_hmc_block.csv: every run, with its form of V;
- RESULTS/laplace_hmc_block.md: per side and grid, the medians over seeds of the CPU seconds,
  the worst cell's bulk ESS per CPU second and the bulk, tail and folded ESS per draw of each
  form, the rank, the worst R-hat, and the ratio of the block's ESS per CPU second to the dense
  form's.
Standard library only.
"""
import csv
import os
import statistics

from table_common import experiment_args, experiment_rows, fmt, load_averages, measured, git_commit

FORMS = {"1": "dense V (version 2)", "0": "V in the block (version 3)"}
NUMBERS = ("cpu_seconds", "ess_per_cpu_second", "bulk_per_draw", "tail_per_draw",
           "folded_per_draw", "acceptance", "max_rhat", "rank")


def read(out):
    """Every run, "dense" its form of V ("1": dense, "0": in the block)."""
    rows = experiment_rows(out, lambda group: group[len("dense"):])
    for r in rows:
        r["dense"] = r.pop("group")
    return rows


def main():
    a = experiment_args(__doc__)
    rows = read(a.out)
    os.makedirs(a.results, exist_ok=True)
    columns = ["dense"] + [c for c in rows[0] if c != "dense"]
    with open(os.path.join(a.results, "laplace_hmc_block.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
    groups = {}
    for r in rows:
        groups.setdefault((int(r["side"]), r["grid"], r["dense"]), []).append(r)
    med = {key: {n: statistics.median(float(r[n]) for r in runs) for n in NUMBERS}
           for key, runs in groups.items()}
    worst = {key: max(float(r["max_rhat"]) for r in runs) for key, runs in groups.items()}
    seeds = {key: len(runs) for key, runs in groups.items()}
    before, after = load_averages(a.out)
    lines = [
        f"{measured('bench/laplace_hmc_block.sh', 'Tabulated')}; runs on commit "
        f"{git_commit(a.out)}, load average before {before}, after {after}. Grids none of "
        "bench/lgcp.sh scores; l = 0.1, a quarter of the cells held out, 150 + 1,000 draws x 4 "
        "chains, the default trajectory; medians over the chain seeds (worst R-hat: the "
        "largest). \"x dense\" is the block's worst-cell bulk ESS per CPU second over the dense "
        "form's at the same grid and side. Where the block's products would cost more "
        "multiply-adds than V's (`LeadingBlock::pays_for`), version 3 expands V and uses it "
        "dense: its runs differ from version 2's only by the subspace its eigenpairs come from.",
        "",
        "| D | grid | form of V | seeds | rank | CPU s | bulk ESS / CPU s | x dense | "
        "bulk / tail / folded ESS per draw | acceptance | worst R-hat |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for side, grid in sorted({(k[0], k[1]) for k in groups}):
        dense = med.get((side, grid, "1"))
        for form in ("1", "0"):
            m = med.get((side, grid, form))
            if m is None:
                continue
            ratio = m["ess_per_cpu_second"] / dense["ess_per_cpu_second"] if dense else float("nan")
            lines.append(
                f"| {side} | {grid} | {FORMS[form]} | {seeds[(side, grid, form)]} | "
                f"{m['rank']:.0f} | {fmt(m['cpu_seconds'])} | {fmt(m['ess_per_cpu_second'])} | "
                f"{fmt(ratio)} | {m['bulk_per_draw']:.2f} / {m['tail_per_draw']:.2f} / "
                f"{m['folded_per_draw']:.2f} | {m['acceptance']:.3f} | "
                f"{worst[(side, grid, form)]:.4f} |")
    with open(os.path.join(a.results, "laplace_hmc_block.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
