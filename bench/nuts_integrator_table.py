#!/usr/bin/env python3
"""The table of bench/nuts_integrator.sh: nuts's leapfrog (version 1) against the split
integrator around the adapted diagonal gaussian (nuts-rs's ExactNormal, version 2) on the tuning
grids (japanesepines, redwood; D = 64; chain seeds 0-2).

Reads OUT/runs.csv (the rows of `experiment_nuts`, columns `NUTS_COLUMNS`), writes
- RESULTS/nuts_integrator.csv: every run;
- RESULTS/nuts_integrator.md: per grid and integrator, the medians over the seeds of the step,
  the gradients per iteration, the CPU seconds, the worst cell's bulk ESS per CPU second and the
  bulk, tail and folded ESS per draw, and the worst R-hat; then per grid the split integrator's
  ratio to the leapfrog in worst-cell bulk ESS per CPU second, per seed and in median.
Standard library only.
"""
import argparse
import csv
import os
import statistics

from table_common import fmt, load_averages, measured

INTEGRATORS = ["leapfrog", "exact-normal"]
MEDIANS = [("step", "step"), ("gradients_per_iteration", "gradients / iteration"),
           ("cpu_seconds", "CPU s"), ("ess_per_cpu_second", "bulk ESS / CPU s"),
           ("bulk_per_draw", "bulk / draw"), ("tail_per_draw", "tail / draw"),
           ("folded_per_draw", "folded / draw")]


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="bench/nuts_integrator.sh's output directory")
    p.add_argument("--results", default="bench/results")
    return p.parse_args()


def markdown(rows, out):
    before, after = load_averages(out)
    lines = [f"{measured('bench/nuts_integrator.sh')}; load average before {before}, after {after}. "
             "Grids japanesepines and redwood at D = 64 (no benchmark scores them), variance 1, "
             "l = 0.1, a quarter of the cells held out, 1,000 + 1,000 draws x 4 chains, one core; "
             "chain seeds 0-2. Medians over the seeds (worst R-hat: the largest); ESS of the worst "
             "cell (bulk, tail: the 5 % and 95 % quantiles, folded: |u - median|).",
             "",
             "| grid | integrator | " + " | ".join(label for _, label in MEDIANS) + " | worst R-hat |",
             "|---|---|" + "---|" * (len(MEDIANS) + 1)]
    grids = list(dict.fromkeys(r["grid"] for r in rows))
    for grid in grids:
        for integrator in INTEGRATORS:
            mine = [r for r in rows if r["grid"] == grid and r["integrator"] == integrator]
            median = {k: statistics.median(float(r[k]) for r in mine) for k, _ in MEDIANS}
            worst = max(float(r["max_rhat"]) for r in mine)
            lines.append(f"| {grid} | {integrator} | "
                         + " | ".join(fmt(median[k]) for k, _ in MEDIANS) + f" | {worst:.4f} |")
    lines.append("")
    for grid in grids:
        by_seed = {(r["integrator"], r["seed"]): float(r["ess_per_cpu_second"])
                   for r in rows if r["grid"] == grid}
        seeds = sorted({seed for _, seed in by_seed})
        ratios = [by_seed[("exact-normal", s)] / by_seed[("leapfrog", s)] for s in seeds]
        lines.append(f"- **{grid}**: the split integrator gives {statistics.median(ratios):.2f}x "
                     "the leapfrog's worst-cell bulk ESS per CPU second (median; per seed "
                     + ", ".join(f"{x:.2f}" for x in ratios) + ").")
    return "\n".join(lines) + "\n"


def main():
    a = args()
    with open(os.path.join(a.out, "runs.csv")) as fh:
        rows = list(csv.DictReader(fh))
    assert rows, f"no runs in {a.out}/runs.csv (see {a.out}/stderr.txt)"
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "nuts_integrator.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.results, "nuts_integrator.md"), "w") as fh:
        fh.write(markdown(rows, a.out))


if __name__ == "__main__":
    main()
