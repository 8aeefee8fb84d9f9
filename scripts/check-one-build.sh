#!/usr/bin/env bash
# Does `cargo run --release` build every dependency with the features `cargo test --release`
# builds it with? Lists each crate whose features differ between the binary's build (normal and
# build dependencies) and the tests' (dev-dependencies too); crates only the tests use are fine.
# Exit 0 when none differs, 1 otherwise (then add the missing features to Cargo.toml's
# feature-unification lines).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp); test=$(mktemp)
trap 'rm -f "$bin" "$test"' EXIT
cargo tree --locked -e normal,build --prefix none -f '{p} [{f}]' | sed 's/ (\*)$//' | sort -u >"$bin"
cargo tree --locked -e normal,build,dev --prefix none -f '{p} [{f}]' | sed 's/ (\*)$//' | sort -u >"$test"
# A crate of the binary's build whose feature line the tests' build does not have.
differ=$(comm -23 "$bin" "$test")
if [ -n "$differ" ]; then
    echo "built with other features by cargo run than by cargo test:"
    echo "$differ"
    exit 1
fi
echo "one build: every crate of cargo run --release has the features cargo test --release gives it"
