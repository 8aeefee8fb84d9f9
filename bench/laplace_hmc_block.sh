#!/usr/bin/env bash
# laplace_hmc's Laplace Gaussian with V dense (version 2) against V in the prior's leading
# spectral block (version 3), on grids bench/lgcp.sh does not score: japanesepines and redwood at
# D = 32 and 64 (chain seeds 0-2) and bei at D = 128 (seeds 0 and 1), the benchmark's model and
# budget (l = 0.1, a quarter of the cells held out, 150 + 1,000 draws x 4 chains, the default
# trajectory). Runs the ignored test `bench::lgcp_experiments::experiment_laplace_hmc` with
# DENSE=1 and DENSE=0, pinned to one core, and writes bench/results/laplace_hmc_block.{csv,md}
# (bench/laplace_hmc_block_table.py). About 6 minutes on the 2-core VM.
# Run from the repository root:  bench/laplace_hmc_block.sh
# Environment: CORE (default 1), OUT (default a new temporary directory), PYTHON (default python3).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_experiment laplace_hmc_block data/japanesepines_grid32.csv

run() {  # run GRIDS SIDE SEEDS: both forms of V
    for dense in 1 0; do
        env GRIDS="$1" SIDE="$2" SEEDS="$3" DENSE=$dense \
            "${PIN[@]}" "$TEST_BIN" bench::lgcp_experiments::experiment_laplace_hmc \
            --ignored --nocapture --exact 2>> "$OUT/stderr.txt" \
            | sed -n 's/^EXP //p' > "$OUT/dense${dense}_D$2.csv"
    done
}
run japanesepines=1.0,redwood=1.0 32 0,1,2
run japanesepines=1.0,redwood=1.0 64 0,1,2
run bei=1.0 128 0,1
uptime > "$OUT/load_after.txt"

"$PYTHON" bench/laplace_hmc_block_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/laplace_hmc_block.csv and bench/results/laplace_hmc_block.md" >&2
