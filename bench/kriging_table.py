#!/usr/bin/env python3
"""The table of bench/kriging.sh: the grid's error against exact kriging at scattered sites.

Reads OUT/<case>.csv (`fieldmc bench kriging --csv`: data, side, cells_per_length_scale, fitted,
predicted, max_mean_error_in_sds, rms_mean_error_in_sds, max_sd_relative_error) for each case the
script ran; writes RESULTS/kriging.csv (every row, with its case) and RESULTS/kriging.md (one
table per case, and the smallest number of cells per length scale that keeps every case within
0.1 exact sds of the mean and 10 % of the sd). Standard library only.
"""
import argparse
import csv
import glob
import os

from table_common import fmt, git_commit, machine

FIELDS = ["case", "data", "side", "cells_per_length_scale", "fitted", "predicted",
          "max_mean_error_in_sds", "rms_mean_error_in_sds", "max_sd_relative_error"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--results", default="bench/results")
    a = p.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(a.out, "*.csv"))):
        case = os.path.basename(path)[:-4]
        if case == "simulated_sites":
            continue
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                rows.append({"case": case, **r})
    os.makedirs(a.results, exist_ok=True)
    out_csv = os.path.join(a.results, "kriging.csv")
    with open(out_csv, "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(out_csv, newline="") as fh:
        back = list(csv.DictReader(fh))
    f = lambda r, k: float(r[k])
    cores, model = machine()
    lines = [f"Measured by `bench/kriging.sh` (`fieldmc bench kriging`) on commit "
             f"{git_commit(a.out)}; {cores} cores, {model}. Numbers: `bench/results/kriging.csv`. "
             "Error of the grid's kriging (bilinear between cell centres, extended over the "
             "border half-cells) against exact kriging, at the held-out sites and a 41 x 41 "
             "lattice over the window; hyperparameters, noise sd and mean fixed.", ""]
    lines.append("| case | D | cells per length scale | max mean error (exact sds) | rms | "
                 "max sd error |")
    lines.append("|---|---|---|---|---|---|")
    for r in back:
        lines.append(f"| {r['case']} | {r['side']} | {f(r, 'cells_per_length_scale'):.1f} "
                     f"| {f(r, 'max_mean_error_in_sds'):.3f} "
                     f"| {f(r, 'rms_mean_error_in_sds'):.4f} "
                     f"| {f(r, 'max_sd_relative_error'):.1%} |")
    ok = lambda r: f(r, "max_mean_error_in_sds") <= 0.1 and f(r, "max_sd_relative_error") <= 0.1
    cases = list(dict.fromkeys(r["case"] for r in back))
    needed = []
    for c in cases:
        mine = sorted((r for r in back if r["case"] == c),
                      key=lambda r: f(r, "cells_per_length_scale"))
        # the fewest cells per length scale from which every finer grid is within both limits
        first = None
        for k in range(len(mine)):
            if all(ok(r) for r in mine[k:]):
                first = mine[k]
                break
        needed.append((c, first))
    lines.append("")
    worst = max(f(r, "cells_per_length_scale") for _, r in needed if r is not None)
    lines.append("- The coarsest grid within 0.1 exact sds of the mean and 10 % of the sd at "
                 "every prediction point, per case: "
                 + "; ".join(f"{c} {fmt(f(r, 'cells_per_length_scale'), 2)} cells per length "
                             f"scale (D = {r['side']})" if r else f"{c} none of these"
                             for c, r in needed)
                 + f". Every case is within both from {worst:.1f} cells per length scale.")
    mine = [r for r in back if r["case"] == cases[0]]
    by_side = {int(r["side"]): r for r in mine}
    pairs = [(r, by_side[2 * d]) for d, r in by_side.items() if 2 * d in by_side]
    lines.append("- Doubling D divides the largest mean error by "
                 + ", ".join(f"{f(a_, 'max_mean_error_in_sds') / f(b, 'max_mean_error_in_sds'):.1f}"
                             f" (D = {a_['side']} to {b['side']})" for a_, b in pairs)
                 + f" in {cases[0]}: second order, as bilinear interpolation is.")
    with open(os.path.join(a.results, "kriging.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
