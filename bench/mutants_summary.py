#!/usr/bin/env python3
"""Tabulates every cargo-mutants run under bench/results/mutants/ (bench/mutants.sh) into
bench/results/mutants.md, which docs/testing.md includes (tests/generated_docs.rs holds the two
equal): outcomes per source file and every mutant the tests missed. A mutant tested in several
runs counts once, with its clean retest's outcome when it has one. Standard library only."""
import glob
import json
import os
from collections import Counter, defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUTCOMES = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


def latest_outcomes():
    by_name = {}
    # Each shard's latest run (mutants.out; cargo-mutants keeps the one before as
    # mutants.out.old, which this skips), then the clean retest of what it missed or could not
    # build (clean/mutants.out), whose verdict replaces the incremental run's.
    shards = os.path.join(ROOT, "bench/results/mutants/shard-*")
    runs = sorted(glob.glob(os.path.join(shards, "mutants.out/outcomes.json"))) + sorted(
        glob.glob(os.path.join(shards, "clean/mutants.out/outcomes.json")))
    for path in runs:
        with open(path) as f:
            for outcome in json.load(f)["outcomes"]:
                mutant = outcome["scenario"]
                if not isinstance(mutant, dict) or "Mutant" not in mutant:
                    continue  # the baseline
                mutant = mutant["Mutant"]
                by_name[mutant["name"]] = (mutant["file"], OUTCOMES.get(outcome["summary"],
                                                                         outcome["summary"]))
    return by_name


def main():
    by_name = latest_outcomes()
    per_file = defaultdict(Counter)
    for file, outcome in by_name.values():
        per_file[file][outcome] += 1
    total = Counter(outcome for _, outcome in by_name.values())
    viable = total["caught"] + total["missed"] + total["timeout"]
    killed = total["caught"] + total["timeout"]
    share = f"{killed / viable:.0%}" if viable else "—"
    for listing in sorted(glob.glob(os.path.join(ROOT, "bench/results/mutants/shard-*/mutants.out/mutants.json"))):
        shard = os.path.basename(os.path.dirname(os.path.dirname(listing)))
        with open(listing) as f:
            listed = {m["name"] for m in json.load(f)}
        print(f"{shard.replace('-of-', '/').replace('shard-', 'Shard ')}: "
              f"{len(listed & set(by_name))} of its {len(listed)} mutants tested.")
    print(f"{len(by_name)} mutants tested: {total['caught']} caught, {total['timeout']} timed out "
          f"(counted as caught: the tests did not pass), {total['missed']} missed, "
          f"{total['unviable']} unviable (did not compile); killed {killed} of {viable} viable "
          f"({share}).")
    print()
    print("| file | caught | timeout | missed | unviable |")
    print("|---|---|---|---|---|")
    for file in sorted(per_file):
        c = per_file[file]
        print(f"| `{file}` | {c['caught']} | {c['timeout']} | {c['missed']} | {c['unviable']} |")
    missed = sorted(name for name, (_, outcome) in by_name.items() if outcome == "missed")
    if missed:
        print()
        print("Missed:")
        print()
        for name in missed:
            print(f"- `{name}`")


if __name__ == "__main__":
    main()
