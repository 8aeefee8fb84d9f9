#!/usr/bin/env bash
# nuts's integrator (version 2's) chosen on grids bench/lgcp.sh does not score: japanesepines and
# redwood at D = 64, chain seeds 0-2, the benchmark's model and budget (l = 0.1, a quarter of the
# cells held out, 1,000 + 1,000 draws x 4 chains): the leapfrog (version 1) against nuts-rs's
# ExactNormal kinetic energy, the split integrator around the adapted diagonal gaussian
# (src/sampler/nuts.rs). Runs the ignored test `bench::lgcp_experiments::experiment_nuts`, pinned to
# one core, and writes bench/results/nuts_integrator.{csv,md} (bench/nuts_integrator_table.py:
# per integrator and grid, the medians over the seeds, and each run's ratio).
#
# About 6 minutes on the 2-core VM. Run from the repository root:  bench/nuts_integrator.sh
# Environment: CORE (default 1), OUT (default a new temporary directory), PYTHON (default python3).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_experiment nuts_integrator data/japanesepines_grid64.csv

env GRIDS=japanesepines=1.0,redwood=1.0 SIDE=64 SEEDS=0,1,2 NUTS_INTEGRATORS=leapfrog,exact-normal \
    "${PIN[@]}" "$TEST_BIN" bench::lgcp_experiments::experiment_nuts \
    --ignored --nocapture --exact 2>> "$OUT/stderr.txt" \
    | sed -n 's/^EXP //p' > "$OUT/runs.csv"
uptime > "$OUT/load_after.txt"

"$PYTHON" bench/nuts_integrator_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/nuts_integrator.csv and bench/results/nuts_integrator.md" >&2
