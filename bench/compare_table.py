#!/usr/bin/env python3
"""The Markdown table of bench/compare.sh's CSV (README.md includes it; tests/generated_docs.rs
checks that the README's copy equals this output). Standard library only."""
import csv
import os
import sys


def seconds(text):
    return f"{float(text):.3g} s" if text else "cannot run"


def ratio(text):
    return f"{float(text):.1f}" if text else "—"


def main(path):
    with open(path) as f:
        comments = [line[2:].strip() for line in f if line.startswith("#")]
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    source = os.path.relpath(path, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    print(f"{comments[1][0].upper()}{comments[1][1:]} (`{source}`).")
    print()
    print("| D | N | fieldmc | numpy_batched | `--rows-only` | numpy_seed_style "
          "| x best numpy | x seed style | load before |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['D']} | {int(r['N']):,} | {seconds(r['fieldmc_s'])} "
              f"| {seconds(r['numpy_batched_s'])} | {seconds(r['rows_only_s'])} "
              f"| {seconds(r['seed_style_s'])} | {ratio(r['x_best_numpy'])} "
              f"| {ratio(r['x_seed_style'])} | {r['load_before']} |")


if __name__ == "__main__":
    main(sys.argv[1])
