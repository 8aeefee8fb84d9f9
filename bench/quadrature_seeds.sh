#!/bin/bash
# The false-alarm rate of the quadrature test (tests/quadrature.rs), measured: the nine
# `*_agrees_with_the_quadrature_posterior` tests at seeds 1000..1199 (FIELDMC_QUADRATURE_SEED:
# new data and new chains at each), two at a time, one log and exit code per seed under $OUT,
# then one row per seed in $CSV (seed, exit code, largest z-score, the run it came from, the
# failed tests). The file states a family-wise rate of at most 1e-4, so 200 seeds should see no
# failure. Not run in CI: about 6 CPU s a seed, 10 minutes on 2 cores.
#   bench/quadrature_seeds.sh        # then: cat bench/results/quadrature_seeds.csv
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/quadrature_seeds}
CSV=${CSV:-bench/results/quadrature_seeds.csv}
mkdir -p "$OUT" "$(dirname "$CSV")"
BIN=$(cargo test --release --locked --test quadrature --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
export BIN OUT
seq 1000 1199 | xargs -P 2 -I{} sh -c '
    [ -f "$OUT/{}.done" ] && exit 0
    FIELDMC_QUADRATURE_SEED={} "$BIN" agrees_with_the_quadrature --test-threads 1 --nocapture \
        > "$OUT/{}.log" 2>&1; echo $? > "$OUT/{}.done"'

# One row per seed: the largest z-score over every kind, likelihood and moment, with the line
# of the run it came from ("probit grw"), and the tests that failed.
echo "seed,exit_code,largest_z,largest_in,failed_tests" > "$CSV"
for seed in $(seq 1000 1199); do
    awk -v seed="$seed" -v code="$(cat "$OUT/$seed.done")" '
        / MCSE, max \|sd - exact\| = / {
            split($0, parts, " = ")
            mean = parts[2] + 0; sd = parts[3] + 0
            z = mean > sd ? mean : sd
            if (z > largest && match($0, /(probit|poisson-exposure|poisson|binomial) [a-z_]+ beta=/)) {
                largest = z; where = substr($0, RSTART, RLENGTH - 6)
            }
        }
        /^failures:$/ { listing = 1 }
        listing && /^    [a-z0-9_]+$/ { failed = failed (failed ? " " : "") $1 }
        END { printf "%s,%s,%.2f,%s,%s\n", seed, code, largest, where, failed }
    ' "$OUT/$seed.log" >> "$CSV"
done
awk -F, 'NR > 1 { runs++; if ($2 != 0) failures++; if ($3 > z) { z = $3; at = $1 } }
    END { printf "%d seeds, %d failed; largest z-score %.2f (seed %s)\n", runs, failures, z, at }' "$CSV"
