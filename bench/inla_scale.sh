#!/usr/bin/env bash
# INLA's cost at 32 x 32 and 64 x 64 (issue 46): studies/hyperparameters/inla_scale.toml (three
# real sparse point patterns on both grids, length scale and variance inferred, INLA's defaults),
# then bench/inla_scale_table.py writes bench/results/inla_scale.{csv,md}: each job's CPU seconds,
# Laplace fits, grid points and the hyperparameters' posterior means and sds.
#
# Takes about 15 minutes on the 2-core VM with THREADS=2 CORE=0,1 (each job runs on one thread
# and its CPU seconds are its thread's).
#
# Run from the repository root:  bench/inla_scale.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (cores to pin to, default 0), THREADS (jobs at
#   once, default 1).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_study_run inla_scale studies/hyperparameters/inla_scale.toml
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads "${THREADS:-1}" --quiet \
    --no-report
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/inla_scale_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/inla_scale.csv and .md" >&2
