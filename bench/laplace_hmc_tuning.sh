#!/usr/bin/env bash
# laplace_hmc's trajectory (version 2's integrator, angle and acceptance target) chosen on grids
# bench/lgcp.sh does not score: japanesepines and redwood at D = 32 and 64, chain seeds 0-2, the
# benchmark's model and budget (l = 0.1, a quarter of the cells held out, 150 + 1,000 draws x 4
# chains). Runs the ignored test `bench::lgcp_experiments::experiment_laplace_hmc` once per
# setting group, pinned to one core, and writes bench/results/laplace_hmc_tuning.{csv,md}
# (bench/laplace_hmc_tuning_table.py: per setting, the medians over grids and seeds, and the
# rule that chose the default).
#
# Settings measured: Strang's step (version 1's) at 90-120 degrees and targets 0.8 and 0.9, with
# and without jitter at 90 and 110 degrees; the two-stage step at 100-120 degrees (its acceptance
# sits near 0.98 at any target from 0.7 to 0.95, so one target); and at 128 x 128 on bei (seeds 0
# and 1: half a minute a run) version 1 and the two-stage step at 90, 100 and 110 degrees. About
# 20 minutes on the 2-core VM. Run from the repository root:  bench/laplace_hmc_tuning.sh
# Environment: CORE (default 1), OUT (default a new temporary directory), PYTHON (default python3).
set -euo pipefail

. "$(dirname "$0")/common.sh"
start_experiment laplace_hmc_tuning data/japanesepines_grid32.csv

DEG=0.017453292519943295
angles() { local out=(); for d in "$@"; do out+=("$("$PYTHON" -c "print($d * $DEG)")"); done; (IFS=,; echo "${out[*]}"); }

run() {  # run NAME VAR=VALUE ...: one group of settings at both sides
    local name=$1; shift
    for side in 32 64; do
        env GRIDS=japanesepines=1.0,redwood=1.0 SIDE=$side SEEDS=0,1,2 "$@" \
            "${PIN[@]}" "$TEST_BIN" bench::lgcp_experiments::experiment_laplace_hmc \
            --ignored --nocapture --exact 2>> "$OUT/stderr.txt" \
            | sed -n 's/^EXP //p' > "$OUT/${name}_D$side.csv"
    done
}
run_large() {  # run_large NAME VAR=VALUE ...: one group at 128 x 128 on bei, seeds 0 and 1
    local name=$1; shift
    for side in 128; do
        env GRIDS=bei=1.0 SIDE=$side SEEDS=0,1 "$@" \
            "${PIN[@]}" "$TEST_BIN" bench::lgcp_experiments::experiment_laplace_hmc \
            --ignored --nocapture --exact 2>> "$OUT/stderr.txt" \
            | sed -n 's/^EXP //p' > "$OUT/${name}_D$side.csv"
    done
}
run strang STAGES=1 ANGLES="$(angles 90 100 105 110 120)" TARGETS=0.8,0.9
run strang_jitter STAGES=1 ANGLES="$(angles 90 110)" JITTERS=0.3 TARGETS=0.9
run two_stage STAGES=2 ANGLES="$(angles 100 105 110 115 120)" TARGETS=0.9
run_large large_strang STAGES=1 ANGLES="$(angles 90)" TARGETS=0.8
run_large large_two_stage STAGES=2 ANGLES="$(angles 90 100 110)" TARGETS=0.9
uptime > "$OUT/load_after.txt"

"$PYTHON" bench/laplace_hmc_tuning_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/laplace_hmc_tuning.csv and bench/results/laplace_hmc_tuning.md" >&2
