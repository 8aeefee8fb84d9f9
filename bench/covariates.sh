#!/usr/bin/env bash
# Covariate coefficients of the bei trees study (studies/lgcp/covariates.toml), three ways:
#   1. fieldmc on the study as written (its default sampler), one thread, and INLA with the
#      length scale and variance inferred (studies/lgcp/covariates_inla.toml);
#   2. a Poisson regression WITHOUT the spatial field (R's glm, count ~ elev + grad on the same
#      32 x 32 grid, covariates standardised by their mean and population sd over all cells);
#   3. BlackJAX NUTS on the same model (../shared/peers/lgcp_joint_peer.py: the same grid, cell
#      centres in metres, the study's length scale and variance read from the TOML, beta ~ N(0, 1),
#      mean auto; 4 chains x 1,000 warmup + 1,000 draws), one core.
# It measures each coefficient's posterior mean, sd, 90 % interval, bulk ESS, R-hat and effective
# draws per CPU second; bench/covariates_table.py turns them into the table.
#
# Takes about a minute on the 2-core VM (measured 2026-11-26, loaded): fieldmc ~13 s wall, glm
# under a second, the peer ~40 s wall (compile ~6 s, 4 chains ~21 CPU s, the rest start-up and
# diagnostics); the table lists the measured times.
#
# Writes: $OUT/fieldmc/ (fieldmc's study output), $OUT/glm.csv, $OUT/peer.json, $OUT/peer.log,
# $OUT/timings.csv; bench/results/covariates.csv, bench/results/covariates.md and
# bench/results/covariates_peer.json (a copy of the peer's JSON).
#
# Run from the repository root:  bench/covariates.sh
# Environment: PEER_PYTHON (default /work/peer-venv/bin/python: a venv with
#   ../shared/peers/lgcp_requirements.txt plus polars and pyarrow), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory).
set -euo pipefail

PEER_PYTHON=${PEER_PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/covariates.XXXXXX")}
STUDY=studies/lgcp/covariates.toml
INLA_STUDY=studies/lgcp/covariates_inla.toml
PEER=../shared/peers/lgcp_joint_peer.py
COUNTS=data/bei_grid32.csv     # the points of the study's data.path counted on its 32 x 32 grid
RESULTS=bench/results

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
[ -f "$PEER" ] || { echo "$PEER not found" >&2; exit 1; }
mkdir -p "$OUT" "$RESULTS"
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c 1); fi
echo "output in $OUT" >&2

now() { date +%s.%N; }
echo "step,wall_seconds" > "$OUT/timings.csv"
timed() {   # timed NAME command...: run it and append its wall time to timings.csv
    local name=$1 t0 t1
    shift
    t0=$(now)
    "$@"
    t1=$(now)
    awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s,%.3f\n", n, b - a }' >> "$OUT/timings.csv"
}

# The study's facts, read from the TOML only: length scale, variance, covariate names and file;
# and a check that the counts grid the GLM and the peer use is the study's points on its grid.
eval "$("$PEER_PYTHON" - "$STUDY" "$COUNTS" <<'EOF'
import os, shlex, sys, tomllib
import numpy as np, pandas as pd
study, counts = sys.argv[1], sys.argv[2]
with open(study, "rb") as fh:
    s = tomllib.load(fh)
m, d = s["model"], s["data"]
here = os.path.dirname(study)
assert m["likelihood"] == "poisson" and d["source"] == "points" and d.get("holdout", 0) == 0, s
assert m.get("kernel", "squared-exponential") == "squared-exponential", m
D = int(m["grid"])
(x0, x1), (y0, y1) = m["window"]
pts = pd.read_csv(os.path.normpath(os.path.join(here, d["path"])))
g = pd.read_csv(counts).sort_values(["j", "i"])
i = np.minimum(((pts["x"] - x0) / (x1 - x0) * D).astype(int), D - 1)
j = np.minimum(((pts["y"] - y0) / (y1 - y0) * D).astype(int), D - 1)
c = np.zeros((D, D), int)
np.add.at(c, (j, i), 1)
assert len(g) == D * D and np.array_equal(c.ravel(), g["count"].to_numpy()), \
    f"{counts} is not {d['path']} counted on the study's {D} x {D} grid"
assert np.allclose(g["x_center"].to_numpy(), x0 + (g["i"].to_numpy() + 0.5) * (x1 - x0) / D)
assert np.allclose(g["y_center"].to_numpy(), y0 + (g["j"].to_numpy() + 0.5) * (y1 - y0) / D)
for k, v in {"LENGTH_SCALE": repr(float(m["length_scale"])),
             "VARIANCE": repr(float(m["variance"])),
             "COV_NAMES": ",".join(d["covariates"]),
             "COV_PATH": os.path.relpath(os.path.normpath(os.path.join(here, d["covariates_path"]))),
             }.items():
    print(f"{k}={shlex.quote(v)}")
EOF
)"
echo "study: length scale $LENGTH_SCALE, variance $VARIANCE, covariates $COV_NAMES ($COV_PATH)" >&2

# 1. fieldmc, one thread, pinned.
echo "fieldmc ..." >&2
rm -rf "$OUT/fieldmc"
timed fieldmc "${PIN[@]}" "$FIELDMC" run "$STUDY" --out "$OUT/fieldmc" --threads 1 --quiet

# 1b. fieldmc's INLA with the length scale and variance inferred (where the study's fixed values
# come from), one thread.
echo "fieldmc inla ..." >&2
rm -rf "$OUT/inla"
timed inla "${PIN[@]}" "$FIELDMC" run "$INLA_STUDY" --out "$OUT/inla" --threads 1 --quiet

# 2. Poisson regression without the field (flat prior on beta).
echo "glm ..." >&2
timed glm Rscript --vanilla - "$COUNTS" "$COV_PATH" "$COV_NAMES" "$OUT/glm.csv" <<'EOF'
args <- commandArgs(trailingOnly = TRUE)
counts <- read.csv(args[1])
covs <- read.csv(args[2])
names <- strsplit(args[3], ",")[[1]]
d <- merge(counts[, c("i", "j", "count")], covs[, c("i", "j", names)], by = c("i", "j"))
stopifnot(nrow(d) == nrow(counts), nrow(d) == nrow(covs), !anyNA(d))
centre <- sapply(names, function(n) mean(d[[n]]))
scale <- sapply(names, function(n) sqrt(mean((d[[n]] - mean(d[[n]]))^2)))   # population sd
for (n in names) d[[n]] <- (d[[n]] - centre[[n]]) / scale[[n]]
fit <- glm(reformulate(names, "count"), family = poisson, data = d)
stopifnot(fit$converged)
co <- summary(fit)$coefficients
z <- 1.6448536
out <- data.frame(coefficient = rownames(co), estimate = co[, 1], se = co[, 2],
                  q05 = co[, 1] - z * co[, 2], q95 = co[, 1] + z * co[, 2],
                  cov_mean = c(NA, centre[names]), cov_sd_ddof0 = c(NA, scale[names]),
                  cells = nrow(d), total_count = sum(d$count), deviance = fit$deviance,
                  df_residual = fit$df.residual, r_version = R.version.string)
write.csv(out, args[4], row.names = FALSE)
print(out[, 1:5], digits = 4)
EOF

# 3. BlackJAX NUTS on the same model, one core.
echo "peer (BlackJAX NUTS) ..." >&2
timed peer "${PIN[@]}" "$PEER_PYTHON" "$PEER" --data "$COUNTS" --coords csv \
    --covariates "$COV_PATH" --covariate-names "$COV_NAMES" --beta-sd 1 \
    --l "$LENGTH_SCALE" --sigma2 "$VARIANCE" --mu auto \
    --chains 4 --warmup 1000 --iters 1000 --seed 0 --out "$OUT/peer.json" \
    > "$OUT/peer.log" 2>&1 || { tail -20 "$OUT/peer.log" >&2; exit 1; }
cp "$OUT/peer.json" "$RESULTS/covariates_peer.json"

# 4. The table.
"$PEER_PYTHON" bench/covariates_table.py --study "$STUDY" --out "$OUT" --results "$RESULTS" \
    --fieldmc "$FIELDMC"
echo "wrote $RESULTS/covariates.csv, $RESULTS/covariates.md, $RESULTS/covariates_peer.json" >&2
