#!/usr/bin/env bash
# The joint chain (sampler.hyper = "joint") against BlackJAX NUTS on the same joint model, run side
# by side: studies/hyperparameters/joint.toml (three real 32 x 32 grids, log-normal priors on the
# length scale and the variance, a normal prior on the mean; INLA beside each) by fieldmc on one
# pinned core, and ../shared/peers/lgcp_joint_peer.py --infer l,sigma2,mu on the other (the same
# cell centres, the same priors, the same symmetric square root with jitter 1e-8, NUTS over the
# log hyperparameters and the whitened field; 4 chains x 1,000 warmup + 1,000 draws, fieldmc's
# budget), once per replicate of the study (three: fieldmc's jobs with their own seeds, the peer
# with seeds SEED, SEED + 1, SEED + 2). bench/joint_table.py turns both into
# bench/results/joint.{csv,md}: every replicate, and the medians.
#
# Takes about 15 minutes on the 2-core VM (fieldmc ~12 CPU min for 18 jobs, INLA and the spectral
# chain most of it; the peer ~1 min per grid and seed).
#
# Run from the repository root:  bench/joint.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt plus polars and pyarrow), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory), SEED (the peer's first seed, default 0).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/joint.XXXXXX")}
SEED=${SEED:-0}
STUDY=studies/hyperparameters/joint.toml
PEER=../shared/peers/lgcp_joint_peer.py
RESULTS=bench/results

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
FIELDMC_PIN=() PEER_PIN=()
if command -v taskset >/dev/null; then FIELDMC_PIN=(taskset -c 0) PEER_PIN=(taskset -c 1); fi
echo "output in $OUT" >&2
uptime > "$OUT/load_before.txt"
git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"

# The study's replicates (each fieldmc job runs that many times with its own seeds; the peer
# runs once per replicate with seeds SEED, SEED + 1, ...).
REPLICATES=$("$PEER_PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["study"].get("replicates", 1))' "$STUDY")

# The study's datasets and priors, read from the TOML only: one line per grid,
# "path likelihood l_mu,l_sigma sigma2_mu,sigma2_sigma mu_mean,mu_sd".
"$PEER_PYTHON" - "$STUDY" > "$OUT/grids.txt" <<'PY'
import os, re, sys, tomllib
study = sys.argv[1]
with open(study, "rb") as fh:
    s = tomllib.load(fh)
here = os.path.dirname(study)
def normal(text, family):
    m = re.fullmatch(rf"\s*{family}\(\s*([-0-9.e]+)\s*,\s*([-0-9.e]+)\s*\)\s*", text)
    assert m, (text, family)
    return f"{float(m.group(1))},{float(m.group(2))}"
m, fit = s["model"], s["sweep"]["paired"]["dataset"]
assert s["sampler"]["chains"] == 4 and s["sampler"]["iterations"] == 2000
assert s["sampler"]["burn_in"] == 1000
for path, likelihood, prior in zip(fit["data.path"], fit["model.likelihood"],
                                   fit["model.length_scale_prior"]):
    print(os.path.relpath(os.path.normpath(os.path.join(here, path))), likelihood,
          normal(prior, "log-normal"), normal(m["variance_prior"], "log-normal"),
          normal(m["mean_prior"], "normal"))
PY

# fieldmc on core 0 while the peer runs the grids one after another on core 1.
rm -rf "$OUT/fieldmc"
( "${FIELDMC_PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet \
    > "$OUT/fieldmc.log" 2>&1; echo $? > "$OUT/fieldmc.rc" ) &
k=0
while read -r path likelihood l_prior s_prior mu_prior; do
    for r in $(seq 0 $((REPLICATES - 1))); do
        echo "peer on $path ($likelihood), seed $((SEED + r)) ..." >&2
        "${PEER_PIN[@]}" "$PEER_PYTHON" "$PEER" --data "$path" --likelihood "$likelihood" \
            --coords csv --infer l,sigma2,mu --l-prior "$l_prior" --sigma2-prior "$s_prior" \
            --mu-prior "$mu_prior" --chains 4 --warmup 1000 --iters 1000 --seed "$((SEED + r))" \
            --out "$OUT/peer_${k}_$r.json" > "$OUT/peer_${k}_$r.log" 2>&1 \
            || { tail -20 "$OUT/peer_${k}_$r.log" >&2; exit 1; }
    done
    k=$((k + 1))
done < "$OUT/grids.txt"
wait
[ "$(cat "$OUT/fieldmc.rc")" = 0 ] || { cat "$OUT/fieldmc.log" >&2; exit 1; }
uptime > "$OUT/load_after.txt"

"$PEER_PYTHON" bench/joint_table.py --study "$STUDY" --out "$OUT" --results "$RESULTS" \
    --fieldmc "$FIELDMC"
echo "wrote $RESULTS/joint.csv and $RESULTS/joint.md" >&2
