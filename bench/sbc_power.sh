#!/bin/bash
# The power of simulation-based calibration against two planted bugs, measured: the tests of
# tests/sbc_planted.rs (prior variance doubled; likelihood tempered by 0.9; no bug) at seeds
# FIRST..LAST (FIELDMC_SBC_SEED), two seeds at a time, one log per seed under $OUT, and
# bench/results/sbc_power.csv with one row per seed, likelihood and bug: the smallest
# rank-uniformity p-value and the log-likelihood functional's. Not run in CI: about 90 CPU s a
# seed. Then: python3 bench/sbc_power_summary.py.
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
CSV=bench/results/sbc_power.csv
echo "seed,likelihood,bug,smallest_p,loglik_p" > "$CSV"
cat "$OUT"/*.log | sed -n 's/^.*seed \([0-9]*\) \([a-z]*\) \([A-Za-z]*\): smallest p \([^ ]*\) .*loglik \([^ ,]*\).*/\1,\2,\3,\4,\5/p' |
    sort -t, -k1,1n -k2,2 -k3,3 >> "$CSV"
echo "wrote $CSV ($(($(wc -l < "$CSV") - 1)) rows)"
