#!/bin/bash
# Planning large studies (issue 15): `fieldmc check STUDY` and `fieldmc plan STUDY > /dev/null`
# of bench/plan_million.toml (1,000 sweep points x 1,000 replicates) and
# bench/plan_million_points.toml (10^6 points, one replicate each: the worst case), and of their
# 10^5-job variants (100 replicates; the first 100 values of the fourth axis). Wall time, CPU
# (user + sys) and peak RSS from /usr/bin/time. Writes bench/results/plan.csv and its Markdown
# table bench/results/plan.md, which docs/performance.md includes (tests/generated_docs.rs holds
# them equal). About half a minute.
#   bench/plan.sh
#   CORES=1 bench/plan.sh         # pinned to core 1 (taskset): one thread
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
build_fieldmc
CSV=bench/results/plan.csv
PIN=()
[ -n "${CORES:-}" ] && PIN=(taskset -c "$CORES")
THREADS=$("${PIN[@]}" nproc)
{
    echo "# bench/plan.sh: fieldmc check / fieldmc plan > /dev/null on $THREADS thread(s)${CORES:+ (pinned to core(s) $CORES)}"
    provenance
    echo "study,jobs,command,wall_s,cpu_s,peak_rss_mib,load_before"
} > "$CSV"
sed 's/^replicates = 1000$/replicates = 100/' bench/plan_million.toml > "$SCRATCH/plan_1e5.toml"
python3 - bench/plan_million_points.toml "$SCRATCH/plan_points_1e5.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# The fourth axis (1,000 values of sampler.iterations) cut to its first 100.
def cut(match):
    values = match.group(2).split(",")
    return match.group(1) + ",".join(values[:100]) + "]"
new, n = re.subn(r'("sampler\.iterations"\s*=\s*\[)([^\]]*)\]', cut, text)
assert n == 1, "plan_million_points.toml has no sampler.iterations axis"
open(sys.argv[2], "w").write(new)
PY
measure() { # label jobs command study
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time" "${PIN[@]}" "$BIN" "$3" "$4" > /dev/null 2> "$SCRATCH/stderr" \
        || { cat "$SCRATCH/stderr" >&2; exit 1; }
    read -r wall user sys rss < "$SCRATCH/time"
    echo "$1,$2,$3,$wall,$(python3 -c "print(round($user + $sys, 2))"),$((rss / 1024)),$load" | tee -a "$CSV"
}
for command in check plan; do
    measure "plan_million (100 replicates)" 100000 $command "$SCRATCH/plan_1e5.toml"
    measure "plan_million" 1000000 $command bench/plan_million.toml
    measure "plan_million_points (100 values)" 100000 $command "$SCRATCH/plan_points_1e5.toml"
    measure "plan_million_points" 1000000 $command bench/plan_million_points.toml
done
python3 - "$CSV" > bench/results/plan.md <<'PY'
import sys
sys.path.insert(0, "bench")
from table_common import measured_csv, provenance_sentence
path = sys.argv[1]
comments, rows = measured_csv(path)
print(f"{provenance_sentence(comments, path)}; {comments[0].split(': ', 1)[1]}. Wall time (user + sys CPU in brackets) and peak RSS.")
print()
print("| study | jobs | `check` | `plan > /dev/null` |")
print("|---|---|---|---|")
cell = lambda r: f"{float(r['wall_s']):.2f} s ({float(r['cpu_s']):.2f} s), {r['peak_rss_mib']} MiB"
studies = list(dict.fromkeys(r["study"] for r in rows))
for study in studies:
    by = {r["command"]: r for r in rows if r["study"] == study}
    print(f"| {study} | 10^{len(by['check']['jobs']) - 1} | {cell(by['check'])} | {cell(by['plan'])} |")
PY
echo "wrote $CSV and bench/results/plan.md"
