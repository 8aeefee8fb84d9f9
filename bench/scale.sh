#!/bin/bash
# A real 128 x 128 grid with field draws kept (issue 27): bench/scale128.toml at three study
# seeds, each run alone on one core. Per run: CPU seconds (user + sys) and peak RSS from
# /usr/bin/time, the job's max cell R-hat and min cell bulk ESS from jobs.parquet, and the
# results folder against its final tables (bytes). Writes bench/results/scale.csv (date,
# commit, machine, load) and its Markdown table bench/results/scale.md, which docs/performance.md
# includes (tests/generated_docs.rs holds them equal). About two minutes.
#   bench/scale.sh
# Environment: PYTHON (default /work/peer-venv/bin/python: any Python with polars),
#   CORE (default 0), SEEDS (default "1 2 3").
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/work/peer-venv/bin/python}
CORE=${CORE:-0}
SEEDS=${SEEDS:-1 2 3}
. bench/common.sh
build_fieldmc
CSV=bench/results/scale.csv
{
    echo "# bench/scale.sh: bench/scale128.toml, one job of 4 chains, pinned to one core"
    provenance
    echo "seed,cpu_s,peak_rss_mib,cell_rhat_max,cell_ess_bulk_min,draws_rows,tables_mb,folder_mb,load_before"
} > "$CSV"
for seed in $SEEDS; do
    sed "s/^seed = 1$/seed = $seed/" bench/scale128.toml > bench/.scale_seed.toml
    out="$SCRATCH/seed$seed"
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%U %S %M" -o "$SCRATCH/time" taskset -c "$CORE" \
        "$BIN" run bench/.scale_seed.toml --out "$out" --threads 1 --no-report --quiet 2> "$SCRATCH/stderr" \
        || { cat "$SCRATCH/stderr" >&2; rm -f bench/.scale_seed.toml; exit 1; }
    rm -f bench/.scale_seed.toml
    read -r user sys rss < "$SCRATCH/time"
    "$PYTHON" - "$out" "$seed" "$user" "$sys" "$rss" "$load" >> "$CSV" <<'PY'
import os, sys
import polars as pl
out, seed, user, sys_s, rss, load = sys.argv[1:]
jobs = pl.read_parquet(os.path.join(out, "jobs.parquet"))
rows = pl.scan_parquet(os.path.join(out, "draws.parquet")).select(pl.len()).collect().item()
size = lambda paths: sum(os.path.getsize(p) for p in paths) / 1e6
tables = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".parquet")]
everything = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs]
print(f"{seed},{float(user) + float(sys_s):.2f},{int(rss) // 1024},{jobs['cell_rhat_max'][0]:.4f},"
      f"{jobs['cell_ess_bulk_min'][0]:.0f},{rows},{size(tables):.1f},{size(everything):.1f},{load}")
PY
    tail -1 "$CSV"
done
"$PYTHON" - "$CSV" > bench/results/scale.md <<'PY'
import sys
sys.path.insert(0, "bench")
from table_common import measured_csv, provenance_sentence
path = sys.argv[1]
comments, rows = measured_csv(path)
print(f"{provenance_sentence(comments, path)}. One job: lansing at D = 128 "
      f"(16,384 cells), laplace_hmc, 4 chains x (150 + 1,000), 500 field draws per chain kept.")
print()
print("| seed | CPU (user + sys) | peak RSS | max cell R-hat | min cell bulk ESS | draws rows | final tables | results folder | folder / tables | load before |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    ratio = float(r["folder_mb"]) / float(r["tables_mb"])
    print(f"| {r['seed']} | {float(r['cpu_s']):.1f} s | {r['peak_rss_mib']} MiB | {r['cell_rhat_max']} "
          f"| {int(r['cell_ess_bulk_min']):,} | {int(r['draws_rows']):,} | {float(r['tables_mb']):.0f} MB "
          f"| {float(r['folder_mb']):.0f} MB | {ratio:.2f} | {r['load_before']} |")
PY
echo "wrote $CSV and bench/results/scale.md"
