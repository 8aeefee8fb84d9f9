#!/usr/bin/env bash
# INLA's mode search from 20 starts spread over the priors' central 95 % on two real grids (issue
# 26): studies/hyperparameters/inla_starts_{hickory,finpines}.toml (the Lansing hickories on the
# unit square, probit; the Finnish pines in metres, poisson), then bench/inla_starts_table.py
# compares the 20 modes of each grid and writes bench/results/inla_starts.{csv,md}.
#
# Takes about 20 minutes on the 2-core VM (40 INLA jobs, two at a time).
#
# Run from the repository root:  bench/inla_starts.sh
# Environment: PYTHON (default /work/peer-venv/bin/python: needs polars), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory), THREADS (default 2).
set -euo pipefail

PYTHON=${PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/inla_starts.XXXXXX")}
THREADS=${THREADS:-2}
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT" bench/results
uptime > "$OUT/load_before.txt"
for grid in hickory finpines; do
    echo "INLA from 20 starts on $grid ..." >&2
    "$FIELDMC" run "studies/hyperparameters/inla_starts_$grid.toml" --out "$OUT/$grid" \
        --threads "$THREADS" --quiet --no-report
done
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/inla_starts_table.py --out "$OUT" --results bench/results --fieldmc "$FIELDMC"
echo "wrote bench/results/inla_starts.csv and bench/results/inla_starts.md" >&2
