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
