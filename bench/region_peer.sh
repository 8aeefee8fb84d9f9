#!/usr/bin/env bash
# The region study (studies/lgcp/region.toml: Chorley-Ribble larynx cases against the lung cases,
# in the study region) two ways, cell by cell:
#   1. fieldmc on the study as written (its default sampler), one thread, pinned;
#   2. BlackJAX NUTS on the same model (../shared/peers/lgcp_joint_peer.py --offset-csv
#      --heldout-cells), one core: the study's length scale and variance read from the TOML, mean
#      auto, 4 chains x (1,000 warmup + 1,000 draws).
# The peer's inputs are built here from the raw files, NOT from fieldmc's output: the larynx points
# counted on the study's grid, each cell's area inside the region by exact polygon intersection
# (shapely, the rings combined by the even-odd rule), the per-cell log offset
# log(lung_density x area inside the region) and the held-out cells (no area inside, or no lung
# density). bench/region_peer_table.py checks them against fieldmc's fields.parquet (counts,
# inside_fraction, offset, which cells are observed), compares every cell's posterior mean and sd
# and writes the table.
#
# Takes about a minute on the 2-core VM: fieldmc ~2 s, the peer ~40-60 s (compile included).
#
# Writes: $OUT/fieldmc/ (fieldmc's study output), $OUT/counts.csv, $OUT/offset.csv,
# $OUT/held.txt, $OUT/peer.json, $OUT/peer.log; bench/results/region_peer.csv (one row per
# method), bench/results/region_peer_cells.csv (one row per cell) and bench/results/region_peer.md.
#
# Run from the repository root:  bench/region_peer.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt plus polars, pyarrow and shapely), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/region_peer.XXXXXX")}
STUDY=studies/lgcp/region.toml
PEER=../shared/peers/lgcp_joint_peer.py
RESULTS=bench/results

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
[ -f "$PEER" ] || { echo "$PEER not found" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c 1); fi
echo "output in $OUT" >&2
git describe --always --dirty > "$OUT/commit.txt"

# 1. fieldmc, one thread, pinned.
echo "fieldmc ..." >&2
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet

# 2. The peer's inputs from the raw files; the study's length scale and variance.
eval "$("$PEER_PYTHON" bench/region_peer_inputs.py --study "$STUDY" --out "$OUT")"
echo "study: length scale $LENGTH_SCALE, variance $VARIANCE" >&2

# 3. BlackJAX NUTS on the same model, one core.
echo "peer (BlackJAX NUTS) ..." >&2
"${PIN[@]}" "$PEER_PYTHON" "$PEER" --data "$OUT/counts.csv" --coords csv \
    --offset-csv "$OUT/offset.csv" --offset-column log_offset --heldout-cells "$OUT/held.txt" \
    --l "$LENGTH_SCALE" --sigma2 "$VARIANCE" --mu auto \
    --chains 4 --warmup 1000 --iters 1000 --seed 0 --out "$OUT/peer.json" \
    > "$OUT/peer.log" 2>&1 || { tail -20 "$OUT/peer.log" >&2; exit 1; }

# 4. The tables.
"$PEER_PYTHON" bench/region_peer_table.py --study "$STUDY" --out "$OUT" --results "$RESULTS" \
    --fieldmc "$FIELDMC"
echo "wrote $RESULTS/region_peer.csv, $RESULTS/region_peer_cells.csv, $RESULTS/region_peer.md" >&2
