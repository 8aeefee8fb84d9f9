#!/usr/bin/env bash
# Model choice on the bei trees by PSIS-LOO (studies/lgcp/choice.toml: covariate sets none / elev
# / grad / elev+grad x the squared-exponential and Matern 3/2 kernels, hyperparameters inferred by
# the joint chain), and two checks beside it:
#   1. the study as written, on THREADS threads (default 2);
#   2. its squared-exponential jobs again at two other study seeds: how far PSIS-LOO's estimate
#      moves with the chains alone (the same data, model and budget);
#   3. the squared-exponential model without data.covariates at the three seeds: the model the
#      study's "none" row (elevation pinned at 0 by a normal(0, 1e-9) prior) stands for.
# Checks 2 and 3 are the study file with its seed (and for 3 its covariate lines) changed, written
# to $OUT; bench/choice_table.py checks that their jobs equal the study's in every other setting.
# It then writes bench/results/choice.csv (one row per job of the study: elpd_loo, its se, p_loo,
# the difference to the best model and its paired se as az.compare computes them from
# loo.parquet, Pareto k, WAIC, convergence) and bench/results/choice.md (the table and the
# sentences from the same numbers). docs/covariates.md includes the Markdown.
#
# Takes about 12 minutes of CPU (the study ~9, the checks ~3) and, on 2 threads, about as many
# minutes of wall time on the shared 2-core VM; the table gives the measured times.
#
# Run from the repository root:  bench/choice.sh
# Environment: PYTHON (default /work/peer-venv/bin/python: polars and numpy), FIELDMC (default
#   target/release/fieldmc), OUT (default a new temporary directory), THREADS (default 2).
set -euo pipefail

PYTHON=${PYTHON:-/work/peer-venv/bin/python}
FIELDMC=${FIELDMC:-target/release/fieldmc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/choice.XXXXXX")}
THREADS=${THREADS:-2}
STUDY=studies/lgcp/choice.toml
SEEDS=(2045 2046)   # the study's own seed is the third

[ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
[ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
mkdir -p "$OUT"
echo "output in $OUT" >&2
git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"
uptime > "$OUT/load_before.txt"
START=$(date +%s)

run() {   # run STUDY NAME: the study into $OUT/NAME, afresh
    rm -rf "${OUT:?}/$2"
    "$FIELDMC" run "$1" --out "$OUT/$2" --threads "$THREADS" --quiet --no-report
}

# The study file with the data paths made absolute (the copies live in $OUT), its seed set to $1
# and its kernel group cut to its first value, the squared exponential, with that kernel's budget;
# with $2 = none, without its covariate lines.
variant() {
    local seed=$1 what=$2 data
    data="$(pwd)/data/"
    sed -e "s|\"\\.\\./\\.\\./data/|\"$data|" -e "s/^seed = .*/seed = $seed/" \
        -e '/^\[sweep.paired.kernel\]/,/^$/s/^\("[a-z_.]*" = \[\)\([^,]*\),.*\]$/\1\2]/' "$STUDY" |
        if [ "$what" = none ]; then
            sed -e '/^covariates_path = /d' -e '/^\[sweep.paired.covariates\]/,/^"model.coefficient_prior"/d'
        else
            cat
        fi
}

echo "study ..." >&2
run "$STUDY" fieldmc
STUDY_SEED=$(sed -n 's/^seed = //p' "$STUDY")
for seed in "${SEEDS[@]}"; do
    echo "squared-exponential jobs at seed $seed ..." >&2
    variant "$seed" covariates > "$OUT/seed_$seed.toml"
    run "$OUT/seed_$seed.toml" "seed_$seed"
done
for seed in "$STUDY_SEED" "${SEEDS[@]}"; do
    echo "no covariates at seed $seed ..." >&2
    variant "$seed" none > "$OUT/none_$seed.toml"
    run "$OUT/none_$seed.toml" "none_$seed"
done
echo $(( $(date +%s) - START )) > "$OUT/wall_seconds.txt"
uptime > "$OUT/load_after.txt"

"$PYTHON" bench/choice_table.py --study "$STUDY" --out "$OUT" --results bench/results \
    --fieldmc "$FIELDMC" --threads "$THREADS" --seeds "$STUDY_SEED" "${SEEDS[@]}"
echo "wrote bench/results/choice.csv and bench/results/choice.md" >&2
