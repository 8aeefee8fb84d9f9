#!/bin/bash
# The power of simulation-based calibration against two planted bugs, measured: the tests of
# tests/sbc_planted.rs (prior variance doubled; likelihood tempered by 0.9; no bug) at seeds
# FIRST..LAST (FIELDMC_SBC_SEED), two seeds at a time, one log per seed under $OUT; then
# bench/sbc_power_summary.py turns every log there into bench/results/sbc_power.csv (one row per
# seed, job, bug and functional) and the tables of bench/results/sbc_power.md. Not run in CI:
# about 6 CPU minutes a seed.
#   FIRST=1 LAST=40 bench/sbc_power.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST=${FIRST:-1}
LAST=${LAST:-40}
OUT=${OUT:-results/sbc_power}
mkdir -p "$OUT" bench/results
BIN=$(cargo test --release --locked --test sbc_planted --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
export BIN OUT
seq "$FIRST" "$LAST" | xargs -P 2 -I{} sh -c '
    [ -f "$OUT/{}.done" ] && exit 0
    FIELDMC_SBC_SEED={} "$BIN" --test-threads 1 --nocapture > "$OUT/{}.log" 2>&1
    echo $? > "$OUT/{}.done"'
python3 bench/sbc_power_summary.py --logs "$OUT"
