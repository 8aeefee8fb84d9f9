#!/bin/bash
# The five simple kinds on two real 32 x 32 count grids (studies/lgcp/samplers.toml as written:
# 4 chains of 100,000 iterations each), one thread pinned to one core. Writes
# bench/results/lgcp_samplers.csv (one row per job: the jobs.parquet columns the table shows) and
# its Markdown table bench/results/lgcp_samplers.md, which docs/samplers.md includes
# (tests/generated_docs.rs holds them equal). About three minutes.
#   bench/samplers.sh
# Environment: PYTHON (default /work/peer-venv/bin/python: any Python with polars), CORE
# (default 0).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/work/peer-venv/bin/python}
CORE=${CORE:-0}
cargo build --release --locked --quiet --bin fieldmc
BIN=${CARGO_TARGET_DIR:-target}/release/fieldmc
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
uptime > "$SCRATCH/load_before.txt"
taskset -c "$CORE" "$BIN" run studies/lgcp/samplers.toml --out "$SCRATCH/run" --threads 1 --no-report --quiet
uptime > "$SCRATCH/load_after.txt"
"$PYTHON" bench/samplers_table.py --run "$SCRATCH/run" --load "$SCRATCH" --core "$CORE"
