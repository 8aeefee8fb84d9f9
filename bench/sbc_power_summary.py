"""Summarise bench/results/sbc_power.csv: per planted bug, how often the power fixture failed
(its smallest p-value over both jobs below the suite's level 1e-4 / 189), with a 95 % interval
(Clopper-Pearson), and the distribution of log10 of the smallest p. Writes
bench/results/sbc_power.md, which docs/testing.md includes."""

import csv
import math
from collections import defaultdict
from pathlib import Path

ALPHA = 1e-4 / 189
HERE = Path(__file__).resolve().parent


def binomial_tail(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def solve(f, target):
    """The p in [0, 1] where the increasing function f reaches target, by bisection."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def interval(k, n):
    """Clopper-Pearson 95 % interval of a share k / n."""
    lower = 0.0 if k == 0 else solve(lambda p: binomial_tail(k, n, p), 0.025)
    upper = 1.0 if k == n else solve(lambda p: binomial_tail(k + 1, n, p), 0.975)
    return lower, upper


def main():
    rows = list(csv.DictReader(open(HERE / "results" / "sbc_power.csv")))
    by_seed = defaultdict(lambda: defaultdict(lambda: 1.0))
    for row in rows:
        by_seed[row["bug"]][row["seed"]] = min(by_seed[row["bug"]][row["seed"]], float(row["smallest_p"]))
    lines = [
        "| planted bug | seeds | fixture failed | share (95 % interval) | median log10 smallest p | largest smallest p |",
        "|---|---|---|---|---|---|",
    ]
    for bug in ["PriorVarianceDoubled", "LikelihoodTempered", "None"]:
        ps = sorted(by_seed[bug].values())
        n = len(ps)
        if n == 0:
            continue
        k = sum(p < ALPHA for p in ps)
        lo, hi = interval(k, n)
        median = math.log10(max(ps[n // 2], 1e-300))
        lines.append(f"| {bug} | {n} | {k} | {k / n:.3f} ({lo:.3f}-{hi:.3f}) | {median:.1f} | {ps[-1]:.2e} |")
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "sbc_power.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
