#!/usr/bin/env bash
# INLA on sparse point patterns against a long joint chain (issue 46):
# studies/hyperparameters/inla_sparse.toml (four real 32 x 32 count grids, length scale and
# variance inferred; NUTS on the hyperparameters and the field, 4 chains x (1,000 + 12,000), and
# INLA with its default simplified Laplace marginals), then the same grids by INLA with the
# gaussian marginals (the study with its fit sweep replaced by sampler.inla_strategy =
# "gaussian"), and with the central composite design (sampler.inla_integration = "ccd").
# bench/inla_sparse_table.py writes bench/results/inla_sparse.{csv,md}: each INLA's distance from
# the chain in the hyperparameters and in every cell, its CPU seconds and grid points.
#
# Takes about 12 minutes on the 2-core VM with THREADS=2 CORE=0,1 (each job runs on one thread
# and its CPU seconds are its thread's).
#
# Run from the repository root:  bench/inla_sparse.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (cores to pin to, default 0), THREADS (jobs at
#   once, default 1).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_study_run inla_sparse studies/hyperparameters/inla_sparse.toml
# The gaussian variant: the same study without its fit sweep, INLA alone with the gaussian
# marginals (data paths made absolute, since the copy lives elsewhere).
data=$(cd data && pwd)
sed -e '/^\[sweep.paired.fit\]/,$d' -e "s#\"../../data/#\"$data/#g" \
    -e 's/^name = "hyper_inla_sparse"/name = "hyper_inla_sparse_gaussian"/' "$STUDY" \
    > "$OUT/studies/gaussian.toml"
printf '[sweep]\n"sampler.kind" = ["inla"]\n"sampler.inla_strategy" = ["gaussian"]\n' \
    >> "$OUT/studies/gaussian.toml"
# The central composite design: the default marginals, 9 points instead of the grid.
sed -e 's/_gaussian"/_ccd"/' -e 's/"sampler.inla_strategy" = \["gaussian"\]/"sampler.inla_integration" = ["ccd"]/' \
    "$OUT/studies/gaussian.toml" > "$OUT/studies/ccd.toml"
rm -rf "$OUT/fieldmc" "$OUT/gaussian" "$OUT/ccd"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads "${THREADS:-1}" --quiet \
    --no-report
"${PIN[@]}" "$FIELDMC" run "$OUT/studies/gaussian.toml" --out "$OUT/gaussian" \
    --threads "${THREADS:-1}" --quiet --no-report
"${PIN[@]}" "$FIELDMC" run "$OUT/studies/ccd.toml" --out "$OUT/ccd" \
    --threads "${THREADS:-1}" --quiet --no-report
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/inla_sparse_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/inla_sparse.csv and .md" >&2
