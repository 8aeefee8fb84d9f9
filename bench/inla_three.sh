#!/usr/bin/env bash
# INLA with three hyperparameters (length scale, variance and mean inferred; issue 46 item 2):
# the grids and priors of studies/hyperparameters/joint_converge.toml, by INLA alone, once on the
# z-grid (sampler.inla_integration = "grid") and once on the central composite design ("ccd",
# what "auto" takes from three hyperparameters). bench/inla_three_table.py compares each with the
# long joint chains of bench/results/joint_converge.csv (the chains' medians over its replicates)
# and writes bench/results/inla_three.{csv,md}: the hyperparameters' gaps in chain sds, their sd
# ratios, the CPU seconds and points, and the warnings.
#
# Takes a few minutes on one core (the grid at d = 3 most of it).
#
# Run from the repository root:  bench/inla_three.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (cores to pin to, default 0), THREADS (jobs at
#   once, default 1).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_study_run inla_three studies/hyperparameters/joint_converge.toml
# The study without its chains: one replicate (INLA is deterministic), data paths made absolute
# (the copy lives elsewhere), INLA on both integrations.
data=$(cd data && pwd)
sed -e '/^\[sweep.paired.fit\]/,$d' -e "s#\"../../data/#\"$data/#g" \
    -e 's/^replicates = .*/replicates = 1/' \
    -e 's/^name = "hyper_joint_converge"/name = "hyper_inla_three"/' "$STUDY" \
    > "$OUT/studies/inla_three.toml"
printf '[sweep]\n"sampler.kind" = ["inla"]\n"sampler.inla_integration" = ["grid", "ccd"]\n' \
    >> "$OUT/studies/inla_three.toml"
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$OUT/studies/inla_three.toml" --out "$OUT/fieldmc" \
    --threads "${THREADS:-1}" --quiet --no-report
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/inla_three_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/inla_three.csv and .md" >&2
