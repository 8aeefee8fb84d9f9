#!/usr/bin/env python3
"""The table of bench/steps.sh: CPU microseconds per step of each kind against the grid side D.

Reads OUT/steps.csv (`fieldmc bench steps --csv`: kind, side, cells, steps, setup_seconds,
micros_per_step) and OUT/load_*.txt; writes RESULTS/steps.csv (the rows, unchanged) and
RESULTS/steps.md (one line per kind: the cost at every D, the growth exponent and the setup at
the largest D). Standard library only.
"""
import argparse
import csv
import math
import os
import shutil

from table_common import fmt, load_averages, measured


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--results", default="bench/results")
    a = p.parse_args()
    source = os.path.join(a.out, "steps.csv")
    with open(source, newline="") as fh:
        rows = list(csv.DictReader(fh))
    os.makedirs(a.results, exist_ok=True)
    shutil.copyfile(source, os.path.join(a.results, "steps.csv"))
    sides = sorted({int(r["side"]) for r in rows})
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    cost = {(r["kind"], int(r["side"])): float(r["micros_per_step"]) for r in rows}
    setup = {(r["kind"], int(r["side"])): float(r["setup_seconds"]) for r in rows}
    small, large = sides[0], sides[-1]
    load = load_averages(a.out)
    lines = [
        f"{measured('bench/steps.sh', out=a.out)}; load average before {load[0]}, after {load[1]}. "
        f"CPU microseconds per "
        f"step, one chain on one pinned core. The exponent is log(cost at D = {large} / cost at "
        f"D = {small}) / log({(large // small) ** 2}): the growth of the step cost as N^exponent.",
        "",
        "| kind | " + " | ".join(f"D = {d} (N = {d * d:,})" for d in sides)
        + f" | exponent | setup s at D = {large} |",
        "|---|" + "---|" * (len(sides) + 2),
    ]
    for k in kinds:
        exponent = math.log(cost[(k, large)] / cost[(k, small)]) / math.log((large / small) ** 2)
        lines.append(f"| {k} | " + " | ".join(fmt(cost[(k, d)]) for d in sides)
                     + f" | {exponent:.2f} | {fmt(setup[(k, large)])} |")
    with open(os.path.join(a.results, "steps.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
