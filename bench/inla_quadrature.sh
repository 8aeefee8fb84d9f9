#!/usr/bin/env bash
# INLA's cell marginals against the exact posteriors of tests/quadrature.rs (four 2 x 2 grids:
# probit, poisson, binomial, poisson with exposure; fixed hyperparameters): the test asserts that
# the simplified Laplace marginals' largest errors in a cell's mean and in the functional's mean,
# and the second-order corrected log evidence's error, are below the gaussian / Laplace ones and
# prints both; this script runs it and tables what it printed in
# bench/results/inla_quadrature.{csv,md}. Takes a few seconds after the build.
#
# Run from the repository root:  bench/inla_quadrature.sh
set -euo pipefail
[ -f tests/quadrature.rs ] || { echo "run from the repository root" >&2; exit 1; }
OUT=$(mktemp -d "${TMPDIR:-/tmp}/inla_quadrature.XXXXXX")
cargo test --release --locked --test quadrature \
    the_laplace_approximation_misses_the_exact_posterior_by_a_measured_error -- --nocapture \
    > "$OUT/test.log" 2>&1
git describe --always --dirty > "$OUT/commit.txt"
python3 - "$OUT" <<'PY'
import csv, datetime, os, re, sys
out = sys.argv[1]
text = open(os.path.join(out, "test.log")).read()
pattern = re.compile(r"^(\S+) simplified Laplace: largest error in the mean ([\d.]+) \(gaussian "
                     r"([\d.]+)\), functional ([\d.]+) \(gaussian ([\d.]+)\)", re.M)
rows = [dict(zip(["problem", "mean_error_simplified_laplace", "mean_error_gaussian",
                  "functional_error_simplified_laplace", "functional_error_gaussian"], m.groups()))
        for m in pattern.finditer(text)]
evidence = {m.group(1): m.groups()[1:] for m in re.finditer(
    r"^(\S+) evidence: error of the corrected log evidence ([\d.]+) \(laplace ([\d.]+)\)",
    text, re.M)}
assert len(rows) == 4 and len(evidence) == 4, text[-2000:]
for r in rows:
    r["evidence_error_corrected"], r["evidence_error_laplace"] = evidence[r["problem"]]
with open("bench/results/inla_quadrature.csv", "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
commit = open(os.path.join(out, "commit.txt")).read().strip()
lines = [f"Measured {datetime.date.today()} by `bench/inla_quadrature.sh` on commit {commit}: "
         "the largest error over the four cells of the posterior mean of a cell and of its "
         "functional (expected count, predictive or success probability), and the log evidence's error, INLA with fixed "
         "hyperparameters against adaptive Gauss-Hermite quadrature (tests/quadrature.rs).", "",
         "| problem | cell mean: gaussian | cell mean: simplified Laplace | functional: gaussian "
         "| functional: simplified Laplace | log evidence: Laplace | log evidence: second order |",
         "|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append(f"| {r['problem']} | {r['mean_error_gaussian']} | "
                 f"{r['mean_error_simplified_laplace']} | {r['functional_error_gaussian']} | "
                 f"{r['functional_error_simplified_laplace']} | {r['evidence_error_laplace']} | "
                 f"{r['evidence_error_corrected']} |")
open("bench/results/inla_quadrature.md", "w").write("\n".join(lines) + "\n")
PY
echo "wrote bench/results/inla_quadrature.csv and .md" >&2
