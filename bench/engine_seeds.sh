#!/bin/bash
# The false-alarm rate of the engine's exact-posterior test (tests/engine.rs), measured: the nine
# `*_agrees_with_the_exact_gaussian_posterior` tests at seeds 1000..1199 (FIELDMC_ENGINE_SEED),
# two at a time, one log and exit code per seed under $OUT. Not run in CI: about 40 CPU s a seed.
#   bench/engine_seeds.sh            # then: cat $OUT/*.done | sort | uniq -c
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/engine_seeds}
mkdir -p "$OUT"
BIN=$(cargo test --release --locked --test engine --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
export BIN OUT
seq 1000 1199 | xargs -P 2 -I{} sh -c '
    [ -f "$OUT/{}.done" ] && exit 0
    FIELDMC_ENGINE_SEED={} "$BIN" agrees_with_the_exact --test-threads 1 --nocapture \
        > "$OUT/{}.log" 2>&1; echo $? > "$OUT/{}.done"'
