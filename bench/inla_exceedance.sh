#!/usr/bin/env bash
# Risk maps from INLA against chains on the covariates study (issue 46): the bei trees with
# elevation and slope, length scale and variance inferred (studies/lgcp/covariates_inla.toml)
# with the exceedance thresholds of studies/lgcp/covariates.toml (1.5 and 2), run by the joint
# chain (NUTS on the hyperparameters, the coefficients and the field, 4 chains x (1,000 + 3,000))
# in REPLICATES replicates (each its own seeds: their spread is the chains' Monte Carlo error) and
# by INLA with each marginal strategy.
# bench/inla_exceedance_table.py writes bench/results/inla_exceedance.{csv,md}: per threshold and
# strategy, how far INLA's P(relative risk > t) lies from the chains' mean in every cell, in units
# of that mean's Monte Carlo standard error.
#
# Takes about 5 minutes on the 2-core VM with THREADS=2 CORE=0,1.
#
# Run from the repository root:  bench/inla_exceedance.sh
# Environment: PYTHON (default python3, with polars), FIELDMC (default target/release/fieldmc),
#   OUT (default a new temporary directory), CORE (cores to pin to, default 0), THREADS (jobs at
#   once, default 1), REPLICATES (chain replicates, default 8).
set -euo pipefail

. "$(dirname "$0")/common.sh"
REPLICATES=${REPLICATES:-8}
start_study_run inla_exceedance studies/lgcp/covariates_inla.toml
# The study with the risk map's thresholds (data paths made absolute, since the copies live
# elsewhere); the chains run it in replicates as the joint chain, INLA with each strategy.
data=$(cd data && pwd)
sed -e "s#\"../../data/#\"$data/#g" -e '/^\[sampler\]/,$d' "$STUDY" > "$OUT/studies/base.toml"
printf '[output]\nexceedance = [1.5, 2]\n\n' >> "$OUT/studies/base.toml"
sed -e "s/^seed = \(.*\)/seed = \1\nreplicates = $REPLICATES/" "$OUT/studies/base.toml" \
    > "$OUT/studies/chains.toml"
printf '[sampler]\nkind = "nuts"\nhyper = "joint"\nchains = 4\nburn_in = 1000\niterations = 4000\n' \
    >> "$OUT/studies/chains.toml"
cp "$OUT/studies/base.toml" "$OUT/studies/inla.toml"
printf '[sampler]\nkind = "inla"\n\n[sweep]\n"sampler.inla_strategy" = ["simplified-laplace", "gaussian"]\n' \
    >> "$OUT/studies/inla.toml"
rm -rf "$OUT/chains" "$OUT/inla"
"${PIN[@]}" "$FIELDMC" run "$OUT/studies/chains.toml" --out "$OUT/chains" \
    --threads "${THREADS:-1}" --quiet --no-report
"${PIN[@]}" "$FIELDMC" run "$OUT/studies/inla.toml" --out "$OUT/inla" \
    --threads "${THREADS:-1}" --quiet --no-report
uptime > "$OUT/load_after.txt"
"$PYTHON" bench/inla_exceedance_table.py --out "$OUT" --results bench/results
echo "wrote bench/results/inla_exceedance.csv and .md" >&2
