#!/bin/bash
# A Matern kernel at D = 256 by circulant embedding (issue 14): bench/matern256.toml (10^4 pCN
# iterations, N = 65,536, one chain) on one thread. The job's CPU time and set-up from jobs.parquet,
# the process's user time and peak RSS from /usr/bin/time, the torus from jobs.parquet. Writes
# bench/results/matern256.csv and its Markdown table bench/results/matern256.md, which
# docs/performance.md includes (tests/generated_docs.rs holds them equal). About half a minute.
#   bench/matern256.sh
# Environment: PYTHON (default /work/peer-venv/bin/python: any Python with polars), CORE (the
#   core to pin the run to, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/work/peer-venv/bin/python}
. bench/common.sh
build_fieldmc
CSV=bench/results/matern256.csv
load=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/time -f "%U %S %M" -o "$SCRATCH/time" \
    taskset -c "${CORE:-1}" "$BIN" run bench/matern256.toml --out "$SCRATCH/run" --threads 1 --no-report --quiet 2> "$SCRATCH/stderr" \
    || { cat "$SCRATCH/stderr" >&2; exit 1; }
read -r user sys rss < "$SCRATCH/time"
{
    echo "# bench/matern256.sh: bench/matern256.toml, --threads 1, pinned to core ${CORE:-1}"
    provenance
    echo "job_cpu_s,setup_s,process_user_s,peak_rss_mib,torus_x,torus_y,clipped_eigenvalue,acceptance_rate,load_before"
    "$PYTHON" - "$SCRATCH/run" "$user" "$rss" "$load" <<'PY'
import os, sys
import polars as pl
run, user, rss, load = sys.argv[1:]
j = pl.read_parquet(os.path.join(run, "jobs.parquet")).row(0, named=True)
print(f"{j['cpu_seconds']:.2f},{j['setup_seconds']:.3f},{float(user):.2f},{int(rss) // 1024},"
      f"{j['torus_x']},{j['torus_y']},{j['clipped_eigenvalue']},{j['acceptance_rate']:.4f},{load}")
PY
} > "$CSV"
"$PYTHON" - "$CSV" > bench/results/matern256.md <<'PY'
import sys
sys.path.insert(0, "bench")
from table_common import measured_csv, provenance_sentence
path = sys.argv[1]
comments, rows = measured_csv(path)
r = rows[0]
print(f"{provenance_sentence(comments, path)}, load average {r['load_before']} before.")
print()
print("| | value | requirement |")
print("|---|---|---|")
print(f"| job CPU time, setup + 10^4 iterations (`cpu_seconds`) | {float(r['job_cpu_s']):.1f} s | < 60 s on one core |")
print(f"| process user time, writing included | {float(r['process_user_s']):.1f} s | |")
print(f"| peak resident memory | {r['peak_rss_mib']} MiB | < 1 GiB |")
print(f"| setup (kernel, embedding, FFT plans) | {float(r['setup_s']):.2f} s | |")
print(f"| torus (clipped eigenvalue) | {r['torus_x']} x {r['torus_y']} ({r['clipped_eigenvalue']}) | no clipping |")
print(f"| acceptance rate (a fixed step: a cost benchmark, not a converged study) | {float(r['acceptance_rate']):.3f} | |")
PY
echo "wrote $CSV and bench/results/matern256.md"
