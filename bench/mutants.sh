#!/bin/bash
# Planted-bug (mutation) testing of the numerical core with cargo-mutants (docs/testing.md).
#
# The scope is what decides a sampler's numbers: the diagnostics (ESS, R-hat, MCSE), the
# likelihoods, the priors' products and transposes, and every kind's accept/reject, gradients
# and adaptation: about 1,500 mutants. Each needs a release rebuild of the library (twice: the
# library and its unit-test harness) and four test binaries; with incremental builds a mutant
# takes about a minute (bench/results/mutants.md gives the median build and test times), so the
# whole scope takes about a day and a 1/16 shard under two hours. SHARD=k/n runs the round-robin shard k of n (every n-th mutant of the list: a
# systematic sample spanning every file; 0/16 is about 95 mutants), in random order (--shuffle), so
# that a run stopped early has still tested a random part of its shard. The tests are the fast exact ones:
# the library's unit tests, the quadrature references for probit and poisson
# (tests/quadrature.rs: every Markov kind against a posterior known to 1e-8), the ESS/R-hat
# values of ArviZ (tests/diagnostics_arviz.rs) and the laplace kind's moments
# (tests/laplace_kind.rs). bench/mutants_summary.py then tabulates every run's outcomes.
#
# The test targets are given to the build as well (-C), so that a mutant rebuilds the library
# and these four test binaries, not all forty. BASELINE=skip skips the unmutated run.
# Runs in place in a scratch worktree (never in your checkout: cargo-mutants edits the source),
# with its own target directory; the report goes to bench/results/mutants/ of this checkout.
#   bench/mutants.sh                 # shard 0/16
#   SHARD=3/16 bench/mutants.sh      # another sample
#   SHARD=0/1 bench/mutants.sh       # everything (a day)
#   RETEST_ONLY=1 bench/mutants.sh   # only the clean retest, after a run stopped early
#   CONTINUE=1 bench/mutants.sh      # the shard's mutants no run has tested yet, at this commit
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SHARD=${SHARD:-0/16}
WORK=${WORK:-/tmp/fieldmc-mutants}
command -v cargo-mutants > /dev/null || cargo install --locked cargo-mutants@27.1.0
[ -d "$WORK" ] || git worktree add --detach "$WORK" HEAD
git -C "$WORK" checkout --quiet --detach "$(git rev-parse HEAD)"
# Incremental release builds: a mutant's build then takes well under half of a scratch build
# (about 2 minutes). An incremental build once linked test binaries against stale objects after an interrupted build;
# a stale link can only hide a mutation (a false "missed") or break the link (a false
# "unviable"), so every mutant reported missed, unviable or failed is retested below from a
# cleaned target, and that verdict is the one the summary keeps.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$WORK/target}
SCOPE=(src/diagnostics/ess.rs src/diagnostics/rhat.rs src/diagnostics/draws.rs
    src/diagnostics/normal.rs src/diagnostics/mod.rs src/diagnostics/fft.rs
    src/model/likelihood.rs src/model/prior/kronecker.rs src/model/prior/circulant.rs
    src/model/prior/spectral.rs src/model/prior/kernel.rs src/model/prior/torus.rs
    src/sampler/elliptical.rs src/sampler/mala.rs src/sampler/pcnl.rs
    src/sampler/random_walk.rs src/sampler/langevin.rs src/sampler/adapt.rs
    src/sampler/nuts.rs src/sampler/laplace_hmc.rs src/sampler/mgrad.rs src/sampler/gpcn.rs
    src/sampler/shared.rs)
FILES=()
for f in "${SCOPE[@]}"; do FILES+=(--file "$f"); done
OUT=$ROOT/bench/results/mutants/shard-${SHARD%/*}-of-${SHARD#*/}
mkdir -p "$OUT"
cd "$WORK"
TESTS=(-C --lib -C --test=quadrature -C --test=diagnostics_arviz -C --test=laplace_kind)
# A run stopped early leaves part of its shard untested. The shard's list is fixed by the code
# it was drawn from (round-robin over the whole list, so one mutant more or less anywhere
# reshuffles every shard): CONTINUE=1 keeps that list and tests what is left of it at this
# commit, under the names the current code gives them (lines move below an edit), into
# continued/ with its own clean retest in continued/clean/.
RUN=$OUT
if [ -n "${CONTINUE:-}" ]; then
    RUN=$OUT/continued
    mkdir -p "$RUN"
    cargo mutants --list --json "${FILES[@]}" > "$RUN/current-list.json"
    LEFT=$(python3 "$ROOT/bench/mutants_summary.py" --untested-regex "$OUT" "$RUN/current-list.json")
    [ -n "$LEFT" ] && CARGO_INCREMENTAL=1 cargo mutants --in-place --profile release \
        "${FILES[@]}" --re "^($LEFT)\$" --timeout 300 --build-timeout 1800 --output "$RUN" \
        --baseline "${BASELINE:-run}" "${TESTS[@]}" || true
elif [ -z "${RETEST_ONLY:-}" ]; then
    CARGO_INCREMENTAL=1 cargo mutants --in-place --profile release --shard "$SHARD" \
        --sharding round-robin "${FILES[@]}" --timeout 300 --build-timeout 1800 \
        --output "$OUT" --shuffle --baseline "${BASELINE:-run}" "${TESTS[@]}" || true
fi
# The clean retest of what the incremental run missed, could not build or did not finish: at
# the commit this checkout is on now (tests added since the run started count), from a target
# cleaned of fieldmc's objects, in one uninterrupted run (a fresh incremental cache that no
# build was cut short in, so nothing stale can be linked; the first mutant builds from scratch,
# the rest incrementally). RETEST_ONLY=1 runs only this part (after a run stopped early).
git -C "$WORK" checkout --quiet --force --detach "$(git -C "$ROOT" rev-parse HEAD)"
RECHECK=$(python3 "$ROOT/bench/mutants_summary.py" --retest-regex "$RUN/mutants.out/outcomes.json")
if [ -n "$RECHECK" ]; then
    mkdir -p "$RUN/clean"
    cargo clean --release -p fieldmc
    CARGO_INCREMENTAL=1 cargo mutants --in-place --profile release "${FILES[@]}" \
        --re "^($RECHECK)\$" --timeout 300 --build-timeout 1800 --output "$RUN/clean" \
        --baseline skip "${TESTS[@]}" || true
fi
echo "report: $RUN/mutants.out and $RUN/clean/mutants.out; python3 bench/mutants_summary.py"
