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
