#!/usr/bin/env bash
# The topo study with its hyperparameters inferred (studies/geostat/topo_nugget.toml: heights at
# scattered sites, length scale, variance and noise sd under log-normal priors, NUTS on their
# joint posterior with the field on a 64 x 64 grid) against exact-GP NUTS on the same sites:
#   1. fieldmc on the study as written, one thread, pinned to one core;
#   2. ../shared/peers/geostat_peer.py --infer l,sigma2,tau on the same core afterwards: BlackJAX
#      NUTS on the exact marginal likelihood of the sites (the field integrated out, no grid),
#      4 chains x (1,000 warmup + 1,000 draws), seed 43, chains started at the priors' medians
#      moved by 0.3 standard normals on the log scale.
# The peer's data file, value column and priors are read from the study's TOML (not typed here);
# it fits the sites fieldmc fitted: fieldmc holds out a seeded share of the measurements
# (data.holdout), and the rows it held out (its sites.parquet) are passed to the peer with
# --holdout-rows. bench/geostat_peer_table.py checks that both fitted the same model (sites, mean,
# priors) and compares the three hyperparameters' posteriors.
#
# Takes about 3 minutes on the 2-core VM: fieldmc ~2.5-3 CPU min, the peer ~3 CPU s (~5 s more to
# compile, and its imports).
#
# Writes: $OUT/fieldmc/ (fieldmc's study output), $OUT/held_rows.txt, $OUT/peer.json,
# $OUT/peer_draws.npz, $OUT/peer.log, $OUT/{commit,load_before,load_after}.txt;
# bench/results/geostat_peer.csv (one row per hyperparameter) and bench/results/geostat_peer.md.
#
# Run from the repository root:  bench/geostat_peer.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt plus pyarrow), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (the core both runs are pinned to, default 0).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/geostat_peer.XXXXXX")}
CORE=${CORE:-0}
STUDY=studies/geostat/topo_nugget.toml
PEER=../shared/peers/geostat_peer.py
RESULTS=bench/results
SEED=43

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
[ -f "$PEER" ] || { echo "$PEER not found" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$CORE"); fi
echo "output in $OUT" >&2
uptime > "$OUT/load_before.txt"
git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"

# The study's sites file, value column and priors, from the TOML only (log-normal(a, b) in
# fieldmc's convention, log theta ~ N(a, b^2), is the peer's --X-prior a,b).
eval "$("$PEER_PYTHON" - "$STUDY" <<'PY'
import os, re, shlex, sys, tomllib
study = sys.argv[1]
with open(study, "rb") as fh:
    s = tomllib.load(fh)
def lognormal(text):
    m = re.fullmatch(r"\s*log-normal\(\s*([-0-9.e]+)\s*,\s*([-0-9.e]+)\s*\)\s*", text)
    assert m, f"{study}: not a log-normal prior: {text!r}"
    return f"{float(m.group(1))},{float(m.group(2))}"
d, m = s["data"], s["model"]
assert d["source"] == "sites" and m["likelihood"] == "gaussian", "a gaussian sites study"
path = os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(study), d["path"])))
for name, value in (("DATA", path), ("VALUE", d.get("value", "value")),
                    ("XCOL", d.get("x", "x")), ("YCOL", d.get("y", "y")),
                    ("L_PRIOR", lognormal(m["length_scale_prior"])),
                    ("SIGMA2_PRIOR", lognormal(m["variance_prior"])),
                    ("TAU_PRIOR", lognormal(m["noise_sd_prior"]))):
    print(f"{name}={shlex.quote(value)}")
PY
)"
echo "study: $DATA column $VALUE; priors l $L_PRIOR, sigma2 $SIGMA2_PRIOR, tau $TAU_PRIOR" >&2

# 1. fieldmc, one thread, pinned.
echo "fieldmc ..." >&2
rm -rf "$OUT/fieldmc"
"${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet \
    > "$OUT/fieldmc.log" 2>&1 || { tail -20 "$OUT/fieldmc.log" >&2; exit 1; }

# 2. The measurements fieldmc held out (sites.parquet rows are 1-based, the peer's 0-based).
"$PEER_PYTHON" - "$OUT/fieldmc/sites.parquet" > "$OUT/held_rows.txt" <<'PY'
import sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1], columns=["set", "row"]).to_pydict()
print("\n".join(str(r - 1) for s, r in zip(t["set"], t["row"]) if s == "held_out"))
PY
echo "fieldmc held out $(wc -w < "$OUT/held_rows.txt") measurements; the peer leaves them out" >&2

# 3. Exact-GP NUTS on the same sites and priors, one core (one XLA and BLAS thread).
echo "peer (exact GP, BlackJAX NUTS) ..." >&2
XLA_ONE_THREAD="--xla_force_host_platform_device_count=1 --xla_cpu_multi_thread_eigen=false"
XLA_ONE_THREAD="$XLA_ONE_THREAD intra_op_parallelism_threads=1"
XLA_FLAGS="$XLA_ONE_THREAD" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
"${PIN[@]}" "$PEER_PYTHON" "$PEER" --data "$DATA" --value "$VALUE" --x "$XCOL" --y "$YCOL" \
    --holdout-rows "$OUT/held_rows.txt" --infer l,sigma2,tau --l-prior "$L_PRIOR" \
    --sigma2-prior "$SIGMA2_PRIOR" --tau-prior "$TAU_PRIOR" --chains 4 --warmup 1000 \
    --iters 1000 --seed "$SEED" --out "$OUT/peer.json" --draws-out "$OUT/peer_draws.npz" \
    > "$OUT/peer.log" 2>&1 || { tail -20 "$OUT/peer.log" >&2; exit 1; }
uptime > "$OUT/load_after.txt"

# 4. The table.
"$PEER_PYTHON" bench/geostat_peer_table.py --study "$STUDY" --out "$OUT" --results "$RESULTS" \
    --fieldmc "$FIELDMC" --core "$CORE"
echo "wrote $RESULTS/geostat_peer.csv and $RESULTS/geostat_peer.md" >&2
