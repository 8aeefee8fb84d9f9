#!/usr/bin/env bash
# The joint chain with and without its Laplace preconditioner (sampler.hyper_preconditioner =
# "laplace" or "none"): studies/hyperparameters/joint_preconditioner.toml, three real 32 x 32
# grids x three replicates (seeds from the study seed and each job's key) x both settings, 4
# chains x (1,000 warmup + 1,000 draws) each, on both cores. bench/joint_preconditioner_table.py
# writes bench/results/joint_preconditioner.{csv,md}; docs/hyperparameters.md includes the table.
#
# Takes about 10 minutes on the 2-core VM (18 jobs of 30-70 CPU seconds).
#
# The default was chosen on two other grids (the Japanese pines and the redwoods, which no
# benchmark scores): STUDY=studies/hyperparameters/tune_preconditioner.toml NAME=joint_preconditioner_tuning.
#
# Run from the repository root:  bench/joint_preconditioner.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), STUDY (default below), NAME (the results' file
#   name, default joint_preconditioner).
set -euo pipefail

PYTHON=${PYTHON:-python3}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/joint_preconditioner.XXXXXX")}
STUDY=${STUDY:-studies/hyperparameters/joint_preconditioner.toml}
NAME=${NAME:-joint_preconditioner}

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT"
echo "output in $OUT" >&2
uptime > "$OUT/load_before.txt"
rm -rf "$OUT/fieldmc"
"$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 2
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/joint_preconditioner_table.py --out "$OUT" --results bench/results --name "$NAME"
echo "wrote bench/results/$NAME.csv and .md" >&2
