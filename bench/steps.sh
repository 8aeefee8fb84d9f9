#!/usr/bin/env bash
# The CPU cost of one step of every Markov chain kind against the grid size D = 32 ... 256
# (`fieldmc bench steps`, src/bench/steps.rs), pinned to one core; bench/steps_table.py turns the
# CSV into bench/results/steps.{csv,md}. Takes about 5 minutes on the 2-core VM.
# Run from the repository root:  bench/steps.sh
# Environment: FIELDMC (default target/release/fieldmc), OUT (default a new temporary directory),
#   PYTHON (default python3).
set -euo pipefail

FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/steps.XXXXXX")}
PYTHON=${PYTHON:-python3}
RESULTS=bench/results

[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c 0); fi
uptime > "$OUT/load_before.txt"
git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"
"${PIN[@]}" "$FIELDMC" bench steps --sizes 32,64,128,256 --steps 5000 --csv "$OUT/steps.csv" \
    > "$OUT/steps.log"
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/steps_table.py --out "$OUT" --results "$RESULTS"
echo "wrote $RESULTS/steps.csv and $RESULTS/steps.md" >&2
