#!/bin/bash
# The out-of-sample MAE of every partition method and baseline on the two Boston tasks, 10 seeds
# each (docs/partitions.md, "Out of sample"): runs the shipped studies
# studies/partitions/boston_{house_value,crime}.toml (output.oos_folds = 5) afresh with two
# threads, summarises their jobs tables into bench/results/partition_oos.csv (mean and sd over
# the seeds; wall seconds per job, fold runs included) and rewrites the tables of
# docs/partitions.md from that CSV. About 3 minutes per task on two cores.
#   bench/partition_oos.sh            # results folders under $OUT (results/partition_oos)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/partition_oos}
cargo build --release --locked
for task in house_value crime; do
    target/release/fieldmc run "studies/partitions/boston_$task.toml" --out "$OUT/$task" \
        --threads 2 --force --quiet --no-report
done
FIELDMC_PARTITION_OOS_RESULTS="$OUT" cargo test --release --locked --test partition_studies \
    summarise_the_boston_out_of_sample_runs -- --ignored --exact --nocapture
FIELDMC_BLESS=1 cargo test --release --locked --test partition_studies \
    the_out_of_sample_tables_in_the_docs_are_the_committed_csv -- --exact
