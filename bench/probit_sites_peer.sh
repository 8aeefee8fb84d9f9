#!/usr/bin/env bash
# Probit at sites (studies/geostat/hickory_sites.toml: hickory presence at 410 surveyed sites of
# Lansing Woods, each at a cell centre of the 32 x 32 grid) two ways, cell by cell:
#   1. fieldmc on the study as written (its default sampler), one thread, pinned;
#   2. BlackJAX NUTS on the same model as a GRID model (../shared/peers/lgcp_joint_peer.py):
#      the presence grid data/lansing_hickory_presence_grid32.csv with the cells that hold no site
#      held out (--heldout-cells), cell centres from the file (--coords csv), probit, the study's
#      length scale and variance, mean 0, all fixed; 4 chains x (1,000 warmup + 1,000 draws),
#      pinned to the same core, one thread.
# A site exactly at a cell centre observes that cell alone under fieldmc's bilinear operator, so
# the two are one model. The held-out cells are computed here from the sites file (each site must
# sit exactly on a cell centre), NOT from fieldmc's output; bench/probit_sites_peer_table.py then
# checks against fieldmc's fields.parquet and sites.parquet that the fitted sites are the peer's
# observed cells with the same labels at the same centres, compares every cell's posterior mean
# and sd of u and the effective draws per CPU second, and writes the table.
#
# Takes about half a minute on the 2-core VM: fieldmc ~2 s, the peer ~20 s (compile included).
#
# Writes: $OUT/fieldmc/ (fieldmc's study output), $OUT/held.txt, $OUT/peer.json, $OUT/peer.log,
# $OUT/{commit,load_before,load_after}.txt; bench/results/probit_sites_peer.csv (one row per cell)
# and bench/results/probit_sites_peer.md.
#
# Run from the repository root:  bench/probit_sites_peer.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt plus polars and pyarrow), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory), CORE (default 1: the core
#   both runs are pinned to).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/probit_sites_peer.XXXXXX")}
CORE=${CORE:-1}
STUDY=studies/geostat/hickory_sites.toml
GRID=data/lansing_hickory_presence_grid32.csv
PEER=../shared/peers/lgcp_joint_peer.py
RESULTS=bench/results
SEED=0

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
[ -f "$PEER" ] || { echo "$PEER not found" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$CORE"); fi
echo "output in $OUT" >&2
uptime > "$OUT/load_before.txt"
git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"

# The study's sites file, length scale and variance; the cells without a site (held.txt).
eval "$("$PEER_PYTHON" bench/probit_sites_peer_table.py inputs --study "$STUDY" --grid "$GRID" \
    --held "$OUT/held.txt")"
echo "study: $SITES, length scale $LENGTH_SCALE, variance $VARIANCE, mean $MEAN;" \
    "$(wc -w < "$OUT/held.txt") cells without a site, held out of the peer's likelihood" >&2

# 1. fieldmc, one thread, pinned.
echo "fieldmc ..." >&2
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet \
    > "$OUT/fieldmc.log" 2>&1 || { tail -20 "$OUT/fieldmc.log" >&2; exit 1; }

# 2. BlackJAX NUTS on the grid model, one thread on the same core.
echo "peer (BlackJAX NUTS) ..." >&2
XLA_ONE_THREAD="--xla_force_host_platform_device_count=1 --xla_cpu_multi_thread_eigen=false"
XLA_ONE_THREAD="$XLA_ONE_THREAD intra_op_parallelism_threads=1"
XLA_FLAGS="$XLA_ONE_THREAD" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
"${PIN[@]}" "$PEER_PYTHON" "$PEER" --data "$GRID" --likelihood probit --coords csv \
    --heldout-cells "$OUT/held.txt" --l "$LENGTH_SCALE" --sigma2 "$VARIANCE" --mu "$MEAN" \
    --chains 4 --warmup 1000 --iters 1000 --seed "$SEED" --out "$OUT/peer.json" \
    > "$OUT/peer.log" 2>&1 || { tail -20 "$OUT/peer.log" >&2; exit 1; }
uptime > "$OUT/load_after.txt"

# 3. The table.
"$PEER_PYTHON" bench/probit_sites_peer_table.py table --study "$STUDY" --grid "$GRID" \
    --out "$OUT" --results "$RESULTS" --fieldmc "$FIELDMC" --core "$CORE"
echo "wrote $RESULTS/probit_sites_peer.csv and $RESULTS/probit_sites_peer.md" >&2
