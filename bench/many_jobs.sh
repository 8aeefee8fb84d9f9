#!/bin/bash
# Per-job overhead, memory and files of a study of many tiny jobs (bench/many_jobs.toml) at
# 2,000 and 100,000 jobs, plus a rerun of the 100,000 with nothing to do: wall and CPU seconds
# and peak RSS from /usr/bin/time, files and bytes of the results folder. Writes
# bench/results/many_jobs.csv (date, commit, machine, load) and its Markdown table
# bench/results/many_jobs.md, which docs/performance.md and README.md include
# (tests/generated_docs.rs holds them equal). About two minutes on two cores.
#   bench/many_jobs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
build_fieldmc
CSV=bench/results/many_jobs.csv
{
    echo "# bench/many_jobs.sh: bench/many_jobs.toml, --threads 2 --no-report --quiet"
    provenance
    echo "run,jobs,wall_s,cpu_s,peak_rss_mib,files,megabytes,load_before"
} > "$CSV"
measure() { # name jobs study out
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time" "$BIN" run "$3" --out "$4" --threads 2 --no-report --quiet 2> "$SCRATCH/stderr"
    read -r wall user sys rss < "$SCRATCH/time"
    echo "$1,$2,$wall,$(python3 -c "print(round($user + $sys, 2))"),$((rss / 1024)),$(find "$4" -type f | wc -l),$(du -sm "$4" | cut -f1),$load" | tee -a "$CSV"
}
sed 's/^replicates = 100000/replicates = 2000/' bench/many_jobs.toml > "$SCRATCH/small.toml"
measure "first run" 2000 "$SCRATCH/small.toml" "$SCRATCH/small"
measure "first run" 100000 bench/many_jobs.toml "$SCRATCH/large"
measure "rerun with nothing to do" 100000 bench/many_jobs.toml "$SCRATCH/large"
python3 - "$CSV" > bench/results/many_jobs.md <<'PY'
import sys
sys.path.insert(0, "bench")
from table_common import measured_csv, provenance_sentence
path = sys.argv[1]
comments, rows = measured_csv(path)
print(f"{provenance_sentence(comments, path)}.")
print()
print("| run | jobs | wall | CPU (user + sys) | CPU per job | peak RSS | files | size | load before |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    per_job = float(r["cpu_s"]) / int(r["jobs"]) * 1e6
    print(f"| {r['run']} | {int(r['jobs']):,} | {float(r['wall_s']):.3g} s | {float(r['cpu_s']):.3g} s "
          f"| {per_job:.0f} us | {r['peak_rss_mib']} MiB | {r['files']} | {r['megabytes']} MB | {r['load_before']} |")
PY
echo "wrote $CSV and bench/results/many_jobs.md"
