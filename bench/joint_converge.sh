#!/usr/bin/env bash
# The joint chain run long enough to converge: studies/hyperparameters/joint_converge.toml (three
# real 32 x 32 grids, log-normal priors on the length scale and the variance, 4 chains x (1,000
# warmup + 6,000 draws), INLA beside each) on one pinned core. bench/joint_converge_table.py
# writes bench/results/joint_converge.{csv,md}: per grid the chain's CPU seconds, its largest
# R-hat and smallest bulk ESS over the hyperparameters and every cell, and how far INLA's means
# lie from the chain's (in the chain's posterior sds). docs/hyperparameters.md includes the table.
#
# Takes about 35 minutes on the 2-core VM with THREADS=1 (every job three times: the study's
# replicates).
#
# Run from the repository root:  bench/joint_converge.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (the cores to pin to, default 0),
#   THREADS (jobs at once, default 1; each job runs on one thread and its CPU seconds are its
#   thread's, so with THREADS=2 CORE=0,1 the numbers are the same and the bench takes half as long).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_study_run joint_converge studies/hyperparameters/joint_converge.toml
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads "${THREADS:-1}" --quiet
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/joint_converge_table.py --out "$OUT" --results bench/results --fieldmc "$FIELDMC"
echo "wrote bench/results/joint_converge.csv and .md" >&2
