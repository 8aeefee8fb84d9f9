"""The power of the SBC power fixture (tests/sbc_planted.rs) against two planted bugs, from
the runs of bench/sbc_power.sh. Standard library only.

    python3 bench/sbc_power_summary.py --logs results/sbc_power   # logs -> CSV, then summary
    python3 bench/sbc_power_summary.py                           # summary of the committed CSV

Writes bench/results/sbc_power.csv (one row per seed, job, bug and functional: the p-value of
uniformity and the ECDF at three points fixed in advance) and bench/results/sbc_power.md, which
docs/testing.md includes. Two tables:

1. Per bug, how often the fixture failed over seeds (its smallest p over both jobs below the
   suite's per-functional level 1e-4 / 189), with a Clopper-Pearson 95 % interval.
2. A bound on the fixture's miss rate that does not rest on the seeds run: the fixture fails
   whenever one functional's ECDF gap D exceeds d* (its p-value is at most 2 x the DKW bound
   2 exp(-2 n D^2), so D > d* = sqrt(ln(4 / alpha) / (2 n)) fails it), and D is at least the gap
   at any one point. At a point x fixed in advance the count below x is Binomial(n, F(x)), so
   P(miss) <= P(|Bin(n, F) / n - F0(x)| <= d*), an exact binomial tail. F is estimated from the
   ranks pooled over every seed, and taken at the near end of its confidence interval (every
   interval at once at 99.9 %, Bonferroni over the points, functionals, jobs and bugs). A job's
   bound is the smallest over its points; the two jobs use independent streams, so the
   fixture's bound is their product.
"""

import argparse
import tomllib
import csv
import math
import re
from collections import defaultdict
from pathlib import Path
from statistics import NormalDist

from table_common import binomial_cdf, binomial_tail, interval

ALPHA = 1e-4 / 189
CONFIDENCE = 0.999
HERE = Path(__file__).resolve().parent
CSV = HERE / "results" / "sbc_power.csv"
MD = HERE / "results" / "sbc_power.md"
FIXTURE = HERE.parent / "tests" / "fixtures" / "studies" / "sbc_power.toml"
BUGS = ["PriorVarianceDoubled", "LikelihoodTempered", "None"]
COLUMNS = ["seed", "likelihood", "bug", "functional", "p", "below_0", "below_1", "below_2",
           "ranked", "points", "draws"]

LINE = re.compile(r"seed (\d+) ([a-z]+) ([A-Za-z]+): smallest p \S+ \(alpha \S+\); (.*); "
                  r"ranks below \[(\d+), (\d+), (\d+)\]: (.*)$")


def parse_logs(folder):
    """The CSV rows of every seed's log under `folder`."""
    draws = tomllib.loads(FIXTURE.read_text())["sbc"]["draws"]  # L: ranks lie on 0..=L
    rows = []
    for log in sorted(Path(folder).glob("*.log")):
        for line in log.read_text().splitlines():
            m = LINE.search(line)
            if not m:
                continue
            seed, likelihood, bug, ps, q0, q1, q2, points = m.groups()
            p_of = dict(item.rsplit(" ", 1) for item in ps.split(", "))
            for fm in re.finditer(r"(\w+) \[(\d+), (\d+), (\d+)\] of (\d+)", points):
                name, b0, b1, b2, ranked = fm.groups()
                rows.append({
                    "seed": seed, "likelihood": likelihood, "bug": bug, "functional": name,
                    "p": p_of[name], "below_0": b0, "below_1": b1, "below_2": b2,
                    "ranked": ranked, "points": f"{q0};{q1};{q2}", "draws": draws,
                })
    rows.sort(key=lambda r: (int(r["seed"]), r["likelihood"], r["bug"], r["functional"]))
    return rows


def miss_bound(f_lo, f_hi, f0, n):
    """The largest P(|Bin(n, F) / n - f0| <= d*) over F in [f_lo, f_hi]: 1 if the interval
    comes within d* of f0, else the binomial tail at the interval's end nearest f0."""
    d = math.sqrt(math.log(4 / ALPHA) / (2 * n))
    if f_hi < f0 - d:  # F below: a miss needs the count at least n (f0 - d)
        return binomial_tail(math.ceil(n * (f0 - d)), n, f_hi)
    if f_lo > f0 + d:  # F above: a miss needs the count at most n (f0 + d)
        return binomial_cdf(math.floor(n * (f0 + d)), n, f_lo)
    return 1.0


def failure_table(rows):
    smallest = defaultdict(lambda: defaultdict(lambda: 1.0))
    for row in rows:
        seeds = smallest[row["bug"]]
        seeds[row["seed"]] = min(seeds[row["seed"]], float(row["p"]))
    lines = [
        "| planted bug | seeds | fixture failed | share (95 % interval) | median log10 smallest p | largest smallest p |",
        "|---|---|---|---|---|---|",
    ]
    for bug in BUGS:
        ps = sorted(smallest[bug].values())
        n = len(ps)
        if n == 0:
            continue
        k = sum(p < ALPHA for p in ps)
        lo, hi = interval(k, n)
        median = math.log10(max(ps[n // 2], 1e-300))
        lines.append(f"| {bug} | {n} | {k} | {k / n:.3f} ({lo:.3f}-{hi:.3f}) | {median:.1f} | {ps[-1]:.2e} |")
    return lines


class Pooled:
    """One job's ranks of one functional under one bug, pooled over seeds."""

    def __init__(self, points, draws):
        self.points, self.draws = points, draws
        self.below = [0] * len(points)
        self.total = 0
        self.smallest_run = None

    def add(self, row):
        for i in range(len(self.points)):
            self.below[i] += int(row[f"below_{i}"])
        ranked = int(row["ranked"])
        self.total += ranked
        self.smallest_run = ranked if self.smallest_run is None else min(self.smallest_run, ranked)


def bound_table(rows):
    pooled = {}
    for row in rows:
        if row["bug"] != "None":
            key = (row["bug"], row["likelihood"], row["functional"])
            points = [int(x) for x in row["points"].split(";")]
            pooled.setdefault(key, Pooled(points, int(row["draws"]))).add(row)
    intervals = sum(len(p.points) for p in pooled.values())
    z = NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / intervals / 2)
    best = {}
    for (bug, likelihood, functional), p in pooled.items():
        n = p.smallest_run
        for below, point in zip(p.below, p.points):
            f0 = point / (p.draws + 1)
            f = below / p.total
            half = z * math.sqrt(max(f * (1 - f), 1 / p.total) / p.total)
            bound = miss_bound(max(f - half, 0.0), min(f + half, 1.0), f0, n)
            if (bug, likelihood) not in best or bound < best[(bug, likelihood)][0]:
                best[(bug, likelihood)] = (bound, functional, point, f, f0, p.total, n)
    lines = [
        "| planted bug | job | tightest point: functional, rank below | pooled ECDF there (uniform) | ranks pooled | miss bound per run |",
        "|---|---|---|---|---|---|",
    ]
    fixture = defaultdict(lambda: 1.0)
    for (bug, likelihood), (bound, functional, point, f, f0, total, n) in sorted(best.items()):
        fixture[bug] *= bound
        lines.append(f"| {bug} | {likelihood} | {functional}, {point} | {f:.4f} ({f0:.2f}) | "
                     f"{total} | {bound:.2e} (n = {n}) |")
    summary = [f"- **{bug}**: the fixture misses with probability at most {fixture[bug]:.2e}, "
               f"so its power is at least 1 - {fixture[bug]:.1e}." for bug in BUGS if bug in fixture]
    return lines, summary, z


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logs", help="a folder of seed logs from bench/sbc_power.sh")
    args = parser.parse_args()
    if args.logs:
        rows = parse_logs(args.logs)
        with open(CSV, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {CSV} ({len(rows)} rows)")
    rows = list(csv.DictReader(open(CSV)))
    bounds, summary, z = bound_table(rows)
    text = "\n".join(
        ["Over seeds (`bench/results/sbc_power.csv`):", ""] + failure_table(rows)
        + ["", f"The miss bound (every pooled ECDF value at the near end of its {CONFIDENCE:.1%} "
               f"interval, z = {z:.2f}; the fixture misses only if both jobs do):", ""]
        + bounds + [""] + summary) + "\n"
    MD.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
