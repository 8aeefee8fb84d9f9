#!/usr/bin/env bash
# fieldmc's kinds against BlackJAX NUTS (../shared/peers/lgcp_blackjax.py) on real count grids at
# D = 32, 64 and 128, over three chain seeds: `fieldmc bench lgcp --csv` pinned to one core, the
# peer pinned to one core (one after the other, never at once). Rows go to $OUT/lgcp.csv as each run
# ends; bench/lgcp_table.py turns them into bench/results/lgcp.{csv,md}.
#
# Which grids and kinds:
# - D = 32: finpines and Lansing (the grids laplace_hmc's budget was chosen on, issue 12), every
#   Markov chain kind.
# - D = 64: finpines, Lansing and bei (bei was never used to choose a setting), the gradient and
#   structured kinds (mala, pcnl, nuts, mgrad, gpcn, laplace_hmc): grw, pcn and elliptical reach
#   0.00-0.14x the peer at D = 32 and only fall behind as N grows.
# - D = 128: Lansing binned finer (data/lansing_grid128.csv), nuts and laplace_hmc; the peer at
#   seed 0 only (PEER_SEEDS_128): it takes about 20 minutes a seed there.
# Budgets are `crate::bench::lgcp::default_plan`'s (the peer: 1,000 + 1,000 draws, 4 chains).
#
# Takes about 1 h 30 min on the 2-core VM; SIDES="32 64" runs a subset.
# Run from the repository root:  bench/lgcp.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt), FIELDMC (default target/release/fieldmc), OUT (default
#   a new temporary directory), SEEDS (default 0,1,2), SIDES (default "32 64 128"),
#   PEER_SEEDS_128 (default 0), FIELDMC_CORE and PEER_CORE (default 0 and 1; the two never run at
#   once, so both may name the same core when the other is busy).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lgcp.XXXXXX")}
SEEDS=${SEEDS:-0,1,2}
SIDES=${SIDES:-32 64 128}
PEER_SEEDS_128=${PEER_SEEDS_128:-0}
FIELDMC_CORE=${FIELDMC_CORE:-0}
PEER_CORE=${PEER_CORE:-1}
PEER=../shared/peers/lgcp_blackjax.py
RESULTS=bench/results

[ -f data/finpines_grid32.csv ] || { echo "run from the repository root" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$FIELDMC_CORE"); fi
echo "fieldmc on core $FIELDMC_CORE, the peer on core $PEER_CORE" > "$OUT/cores.txt"
echo "output in $OUT" >&2
uptime > "$OUT/load_before.txt"
git describe --always --dirty > "$OUT/commit.txt"

for side in $SIDES; do
    args=()
    case $side in
        32) grids=(finpines=1.91 lansing=1.0); kinds= ;;
        64) grids=(finpines=1.91 lansing=1.0 bei=1.0); kinds=mala,pcnl,nuts,mgrad,gpcn,laplace_hmc ;;
        128) grids=(lansing=1.0); kinds=nuts,laplace_hmc; args+=(--peer-seeds "$PEER_SEEDS_128") ;;
        *) echo "no plan for D = $side" >&2; exit 1 ;;
    esac
    for g in "${grids[@]}"; do args+=(--grid "$g"); done
    [ -n "$kinds" ] && args+=(--kinds "$kinds")
    echo "D = $side: ${grids[*]} ..." >&2
    # Exit 1 means a kind's means differed from the peer's: recorded in the CSV, not fatal here.
    "${PIN[@]}" "$FIELDMC" bench lgcp --side "$side" "${args[@]}" --seeds "$SEEDS" \
        --peer-python "$PEER_PYTHON" --peer-script "$PEER" --peer-core "$PEER_CORE" \
        --out "$OUT/work" --csv "$OUT/lgcp.csv" > "$OUT/D$side.log" 2> "$OUT/D$side.err" \
        || [ $? -eq 1 ] || { tail -20 "$OUT/D$side.err" >&2; exit 1; }
done
uptime > "$OUT/load_after.txt"

"$PEER_PYTHON" bench/lgcp_table.py --out "$OUT" --results "$RESULTS"
echo "wrote $RESULTS/lgcp.csv and $RESULTS/lgcp.md" >&2
