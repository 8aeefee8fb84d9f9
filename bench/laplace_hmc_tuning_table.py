#!/usr/bin/env python3
"""The table of bench/laplace_hmc_tuning.sh: laplace_hmc's trajectory settings on the tuning grids
(japanesepines, redwood; D = 32 and 64; chain seeds 0-2).

Reads OUT/<group>_D<side>.csv (the rows of `experiment_laplace_hmc`, columns
`LAPLACE_HMC_COLUMNS`), writes
- RESULTS/laplace_hmc_tuning.csv: every run, with the group it came from;
- RESULTS/laplace_hmc_tuning.md: per setting and side, the medians over grids and seeds of the
  worst cell's bulk ESS per CPU second (and its ratio to version 1's setting: Strang's step, a
  quarter turn, target 0.8), the bulk, tail and folded ESS per draw, the acceptance, the
  gradients per iteration and the worst R-hat; whether the setting passes the rule; and the
  sentence naming the setting the rule chooses.

The rule: a setting qualifies at a side when its median tail and folded ESS per draw are each at
least 0.9x version 1's and its worst R-hat is at most 1.01; for the small grids (D = 32 and 64),
among the settings that qualify at both, the one whose smaller ratio is largest is chosen; for the
large grid (D = 128, bei), the qualifying setting with the largest ratio among those of the small
grids' step and target (the kind's step and acceptance target are the same at every size; only
the angle may change with the grid).
Standard library only.
"""
import csv
import os
import statistics

from table_common import experiment_args, experiment_rows, fmt, load_averages, measured, git_commit

BASELINE = ("1", "90.0", "0", "0.8")  # stages, angle, jitter, target: version 1
SHARE = 0.9
RHAT_LIMIT = 1.01
NUMBERS = ("ess_per_cpu_second", "bulk_per_draw", "tail_per_draw", "folded_per_draw",
           "acceptance", "gradients_per_iteration", "max_rhat", "cpu_seconds")


def args():
    return experiment_args(__doc__)


def read(out):
    return experiment_rows(out, lambda group: group)


def setting(r):
    return (r["stages"], r["angle_degrees"], r["jitter"], r["target_acceptance"])


def summarise(rows):
    groups = {}
    for r in rows:
        groups.setdefault((setting(r), int(r["side"])), []).append(r)
    out = {}
    for key, runs in groups.items():
        s = {k: statistics.median(float(r[k]) for r in runs) for k in NUMBERS}
        s["max_rhat"] = max(float(r["max_rhat"]) for r in runs)
        s["runs"] = len(runs)
        out[key] = s
    for (name, side), s in out.items():
        base = out[(BASELINE, side)]
        s["ratio"] = s["ess_per_cpu_second"] / base["ess_per_cpu_second"]
        s["qualifies"] = (s["tail_per_draw"] >= SHARE * base["tail_per_draw"]
                          and s["folded_per_draw"] >= SHARE * base["folded_per_draw"]
                          and s["max_rhat"] <= RHAT_LIMIT)
    return out


def label(name):
    stages, angle, jitter, target = name
    step = "two-stage" if stages == "2" else "Strang"
    jit = f", jitter {float(jitter):g}" if float(jitter) > 0 else ""
    return f"{step}, {float(angle):g}°{jit}, target {float(target):g}"


SMALL_SIDES = (32, 64)


def chosen(summary, sides, like=None):
    """The setting the rule picks at `sides`; `like`: only settings of its step and target."""
    names = sorted({name for name, side in summary if side in sides
                    and (like is None or (name[0], name[3]) == (like[0], like[3]))})
    best, best_ratio = None, 0.0
    for name in names:
        cells = [summary.get((name, side)) for side in sides]
        if any(c is None or not c["qualifies"] for c in cells):
            continue
        ratio = min(c["ratio"] for c in cells)
        if ratio > best_ratio:
            best, best_ratio = name, ratio
    return best, best_ratio


def write_csv(rows, path):
    columns = ["group"] + [c for c in rows[0] if c != "group"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def write_md(summary, out, path):
    before, after = load_averages(out)
    lines = [f"{measured('bench/laplace_hmc_tuning.sh', 'Tabulated')}; runs on commit "
             f"{git_commit(out)}, load average before {before}, after {after}. "
             "Grids japanesepines and redwood at D = 32 and 64 (chain seeds 0-2: 6 runs per "
             "setting and side), bei at D = 128 (seeds 0 and 1: 2 runs), none scored by "
             "bench/lgcp.sh; variance 1, l = 0.1, a quarter of the cells held out, 150 + 1,000 "
             "draws x 4 chains; medians over the runs (worst R-hat: the largest). \"x v1\" is the ratio of the worst cell's bulk ESS per CPU second to "
             "version 1's (Strang's step, 90°, target 0.8). A setting qualifies when its tail "
             f"and folded ESS per draw are at least {SHARE}x version 1's and its worst R-hat is "
             f"at most {RHAT_LIMIT}.", ""]
    for side in sorted({side for _, side in summary}):
        lines += [f"### D = {side}", "",
                  "| setting | bulk ESS / CPU s | x v1 | bulk / draw | tail / draw | "
                  "folded / draw | acceptance | gradients / iteration | worst R-hat | "
                  "qualifies |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        mine = sorted(((n, s) for (n, sd), s in summary.items() if sd == side),
                      key=lambda x: (x[0][0], float(x[0][1]), x[0][2], x[0][3]))
        for name, s in mine:
            lines.append(
                f"| {label(name)} | {fmt(s['ess_per_cpu_second'])} | {s['ratio']:.2f} | "
                f"{s['bulk_per_draw']:.3f} | {s['tail_per_draw']:.3f} | "
                f"{s['folded_per_draw']:.3f} | {s['acceptance']:.3f} | "
                f"{s['gradients_per_iteration']:.2f} | {s['max_rhat']:.4f} | "
                f"{'yes' if s['qualifies'] else 'no'} |")
        lines.append("")
    all_sides = sorted({side for _, side in summary})
    small, _ = chosen(summary, SMALL_SIDES)
    for sides in (SMALL_SIDES, tuple(d for d in all_sides if d not in SMALL_SIDES)):
        if not sides:
            continue
        where = " and ".join(f"D = {d}" for d in sides)
        best, ratio = chosen(summary, sides, None if sides == SMALL_SIDES else small)
        if best is None:
            lines.append(f"- {where}: no setting qualifies.")
        else:
            lines.append(f"- **{where}: the rule's pick: {label(best)}**, {ratio:.2f}x version "
                         "1's worst-cell bulk ESS per CPU second (the smaller over the sizes).")
    open(path, "w").write("\n".join(lines) + "\n")


def main():
    a = args()
    rows = read(a.out)
    summary = summarise(rows)
    os.makedirs(a.results, exist_ok=True)
    write_csv(rows, os.path.join(a.results, "laplace_hmc_tuning.csv"))
    write_md(summary, a.out, os.path.join(a.results, "laplace_hmc_tuning.md"))


if __name__ == "__main__":
    main()
