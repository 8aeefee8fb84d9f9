# Sourced by the bench/*.sh scripts that measure the fieldmc binary themselves: what they share.
#   . "$(dirname "$0")/common.sh"     (from the repository root, after `cd`)

# The provenance line every committed benchmark CSV starts with (after its own "# script: ..."
# line): when, which commit, which machine. bench/*_table.py read it back as the table's first line.
provenance() {
    echo "# measured $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), $(getconf _NPROCESSORS_ONLN) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
}

# Builds the release binary (quietly, from the lock file) and sets BIN to it; SCRATCH is a
# temporary directory removed on exit.
build_fieldmc() {
    cargo build --release --locked --quiet --bin fieldmc
    BIN=${CARGO_TARGET_DIR:-target}/release/fieldmc
    SCRATCH=$(mktemp -d)
    trap 'rm -rf "$SCRATCH"' EXIT
}

# Builds the library's test binary (quietly, from the lock file, pinned as PIN says: the build on
# the run's core too, so that a benchmark on the other core is left alone; its log in OUT) and sets
# TEST_BIN to it: the bench scripts that run an ignored experiment of src/bench/ need it. PYTHON
# reads cargo's JSON.
build_lib_tests() {
    "${PIN[@]}" cargo test --release --locked --lib --no-run --quiet 2> "$OUT/build.log"
    TEST_BIN=$(cargo test --release --locked --lib --no-run --message-format=json 2>/dev/null \
        | "$PYTHON" -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
}

# The start every experiment script shares (bench/laplace_hmc_tuning.sh, nuts_integrator.sh,
# laplace_hmc_block.sh): CORE (default 1), OUT (default a new temporary directory named after
# $1), PYTHON (default python3); the run's load and commit in OUT; PIN to the core; TEST_BIN built.
# $2 is a data file that must exist (run from the repository root).
start_experiment() {
    CORE=${CORE:-1}
    OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")}
    PYTHON=${PYTHON:-python3}
    [ -f "$2" ] || { echo "run from the repository root" >&2; exit 1; }
    mkdir -p "$OUT"
    echo "output in $OUT" >&2
    uptime > "$OUT/load_before.txt"
    git describe --always --dirty > "$OUT/commit.txt"
    PIN=()
    if command -v taskset >/dev/null; then PIN=(taskset -c "$CORE"); fi
    build_lib_tests
}

# The start every study benchmark shares (bench/inla_three.sh, inla_sparse.sh, inla_exceedance.sh,
# inla_scale.sh, joint_converge.sh, joint_kernels.sh): PYTHON (default python3), FIELDMC (default target/release/fieldmc), OUT
# (default a new temporary directory named after $1), STUDY = $2 checked (run from the repository
# root), PIN to CORE (default 0), OUT/studies made, the run's load, commit and THREADS (jobs at
# once, default 1) in OUT.
start_study_run() {
    PYTHON=${PYTHON:-python3}
    FIELDMC=${FIELDMC:-target/release/fieldmc}
    OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")}
    STUDY=$2
    [ -f "$STUDY" ] || { echo "run from the repository root ($STUDY not found)" >&2; exit 1; }
    [ -x "$FIELDMC" ] || { echo "FIELDMC=$FIELDMC is not an executable" >&2; exit 1; }
    PIN=()
    if command -v taskset >/dev/null; then PIN=(taskset -c "${CORE:-0}"); fi
    mkdir -p "$OUT/studies"
    echo "output in $OUT" >&2
    uptime > "$OUT/load_before.txt"
    git describe --always --dirty > "$OUT/commit.txt" 2>/dev/null || echo unknown > "$OUT/commit.txt"
    echo "${THREADS:-1}" > "$OUT/threads.txt"
}
