#!/usr/bin/env bash
# The joint chain on the circulant kernels beside the squared exponential:
# studies/hyperparameters/joint_kernels.toml (two real 32 x 32 grids x three kernels, 4 chains x
# (1,000 warmup + 1,000 draws)) on one pinned core. bench/joint_kernels_table.py writes
# bench/results/joint_kernels.{csv,md}: per job the CPU seconds, the largest R-hat and smallest
# bulk ESS over the hyperparameters and every cell, the length scale's effective draws per CPU
# second, and where a circulant chain's torus truncates the length-scale prior.
# docs/hyperparameters.md includes the table.
#
# Takes about 15 minutes on the 2-core VM.
#
# Run from the repository root:  bench/joint_kernels.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (the core to pin to, default 0).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_study_run joint_kernels studies/hyperparameters/joint_kernels.toml
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/joint_kernels_table.py --out "$OUT" --results bench/results --fieldmc "$FIELDMC"
echo "wrote bench/results/joint_kernels.csv and .md" >&2
