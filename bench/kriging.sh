#!/usr/bin/env bash
# The error of observing the field at scattered sites through the grid (bilinear between cell
# centres, src/model/sites/) against exact kriging, against the grid size D
# (`fieldmc bench kriging`): on the topo elevations (data/topo_sites.csv, 52 sites, units of
# 50 ft; noise sd 10 ft, variance 3,000 ft^2) at three length scales, and on 300 simulated sites
# (made here with a fixed seed) in [0, 10]^2. Every 5th site is held out and predicted, with a
# 41 x 41 lattice over the window (edges and corners included). bench/kriging_table.py writes
# bench/results/kriging.csv and bench/results/kriging.md. Takes seconds.
# Run from the repository root:  bench/kriging.sh
# Environment: FIELDMC (default target/release/fieldmc), OUT (default a new temporary directory),
#   PYTHON (default python3, with numpy).
set -euo pipefail

FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kriging.XXXXXX")}
PYTHON=${PYTHON:-python3}
RESULTS=bench/results
SIDES=8,16,24,32,48,64,128

[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
git describe --always --dirty > "$OUT/commit.txt"

# 300 simulated sites: uniform in [0, 10]^2, a smooth surface plus N(0, 0.2^2) noise.
"$PYTHON" - "$OUT/simulated_sites.csv" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(20261128)
x, y = rng.uniform(0, 10, 300), rng.uniform(0, 10, 300)
v = 0.3 + np.sin(0.6 * x) * np.cos(0.4 * y) + rng.normal(0, 0.2, 300)
with open(sys.argv[1], "w") as fh:
    fh.write("x,y,value\n")
    for row in zip(x, y, v):
        fh.write(",".join(repr(float(c)) for c in row) + "\n")
PY

run() {   # run NAME ARGS...: one comparison, its CSV as OUT/NAME.csv
    local name=$1
    shift
    "$FIELDMC" bench kriging --sides "$SIDES" --lattice 41 --holdout-every 5 \
        --csv "$OUT/$name.csv" "$@" > "$OUT/$name.log"
}
for l in 0.8 1.5 3; do
    run "topo_l$l" --data data/topo_sites.csv --value height --window 0,6.3,0,6.2 \
        --length-scale "$l" --variance 3000 --noise-sd 10
done
for l in 1.25 2.5; do
    run "simulated_l$l" --data "$OUT/simulated_sites.csv" --value value --window 0,10,0,10 \
        --length-scale "$l" --variance 1 --noise-sd 0.2
done
"$PYTHON" bench/kriging_table.py --out "$OUT" --results "$RESULTS"
echo "wrote $RESULTS/kriging.csv and $RESULTS/kriging.md" >&2
