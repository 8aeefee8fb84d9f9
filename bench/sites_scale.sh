#!/usr/bin/env bash
# 100,000 measurements at scattered sites on a 256 x 256 grid (issue 43's scale): the study's
# default sampler, 4 chains, one run with both cores. The sites are uniform in [0, 100]^2 with a
# smooth surface plus N(0, 0.3^2) noise (made here with a fixed seed); the field has length
# scale 5 (13 cells per length scale) and variance 1, the noise sd 0.3 fixed, 1 % held out.
# Exact kriging would factor a 100,000 x 100,000 matrix (80 GB, about 3e14 operations); fieldmc
# touches each site's four cells per gradient. Records wall and CPU seconds, the peak resident
# memory (/usr/bin/time -v), and the run's own numbers (jobs.parquet, chains.parquet);
# bench/sites_scale_table.py writes bench/results/sites_scale.csv and .md. Takes about 10 minutes
# on the 2-core VM.
# Run from the repository root:  bench/sites_scale.sh
# Environment: FIELDMC (default target/release/fieldmc), OUT (default a new temporary
#   directory), PYTHON (default /work/peer-venv/bin/python: numpy and polars).
set -euo pipefail

FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sites_scale.XXXXXX")}
PYTHON=${PYTHON:-/work/peer-venv/bin/python}
RESULTS=bench/results

[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
git describe --always --dirty > "$OUT/commit.txt"
uptime > "$OUT/load_before.txt"

"$PYTHON" - "$OUT/sites.csv" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(7)
n = 100_000
x, y = rng.uniform(0, 100, n), rng.uniform(0, 100, n)
v = np.sin(x / 9) * np.cos(y / 13) + 0.3 * np.sin((x + y) / 5) + rng.normal(0, 0.3, n)
np.savetxt(sys.argv[1], np.c_[x, y, v], delimiter=",", header="x,y,value", comments="",
           fmt="%.6f")
PY

cat > "$OUT/scale.toml" <<'TOML'
[study]
name = "sites_scale"
seed = 1
[model]
grid = 256
window = [[0, 100], [0, 100]]
likelihood = "gaussian"
length_scale = 5
variance = 1
[data]
source = "sites"
path = "sites.csv"
noise_sd = 0.3
holdout = 0.01
TOML

/usr/bin/time -v "$FIELDMC" run "$OUT/scale.toml" --out "$OUT/run" --threads 2 --quiet \
    > "$OUT/run.log" 2> "$OUT/time.log" || { tail -20 "$OUT/time.log" >&2; exit 1; }
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/sites_scale_table.py --out "$OUT" --results "$RESULTS" --fieldmc "$FIELDMC"
echo "wrote $RESULTS/sites_scale.csv and $RESULTS/sites_scale.md" >&2
