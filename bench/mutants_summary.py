#!/usr/bin/env python3
"""Tabulates every cargo-mutants run under bench/results/mutants/ (bench/mutants.sh) into
bench/results/mutants.md, which docs/testing.md includes (tests/generated_docs.rs holds the two
equal): outcomes per source file and every mutant the tests missed. A mutant tested in several
runs counts once, with its clean retest's outcome when it has one. Standard library only.

    python3 bench/mutants_summary.py > bench/results/mutants.md
    python3 bench/mutants_summary.py --retest-regex OUTCOMES_JSON   # what bench/mutants.sh retests
    python3 bench/mutants_summary.py --untested-regex SHARD_DIR LIST_JSON  # what CONTINUE=1 tests
"""
import argparse
import glob
import json
import os
import statistics
import sys
from collections import Counter, defaultdict

from table_common import interval

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUTCOMES = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


# Outcomes a clean build retests: a stale incremental link can fake the first two, and a failure
# is a build or test cut short from outside.
RETESTED = ("MissedMutant", "Unviable", "Failure")
# Where bench/mutants.sh writes each kind of run, inside a shard's folder.
INCREMENTAL_RUNS = ["mutants.out", "continued/mutants.out"]
CLEAN_RUNS = ["clean/mutants.out", "continued/clean/mutants.out"]


def mutant_outcomes(path):
    """(mutant, outcome) of every mutant in one cargo-mutants outcomes.json (not the baseline)."""
    with open(path) as f:
        for outcome in json.load(f)["outcomes"]:
            scenario = outcome["scenario"]
            if isinstance(scenario, dict) and "Mutant" in scenario:
                yield scenario["Mutant"], outcome


def retest_regex(path):
    """A regex matching exactly the names of the mutants in `path` to retest."""
    return escaped_alternatives(
        m["name"] for m, o in mutant_outcomes(path) if o["summary"] in RETESTED)


def escaped_alternatives(names):
    special = set("\\.+*?()|[]{}^$")
    escape = lambda name: "".join("\\" + c if c in special else c for c in name)
    return "|".join(escape(name) for name in names)


def mutant_key(mutant):
    """What identifies a mutant when lines above it moved: its file, function, kind of change,
    column and the source line it changes (the diff's one removed line)."""
    removed = [line for line in mutant["diff"].splitlines()
               if line.startswith("-") and not line.startswith("---")]
    return (mutant["file"], mutant["function"]["function_name"] if mutant.get("function") else None,
            mutant["genre"], mutant["replacement"], mutant["span"]["start"]["column"],
            tuple(removed))


def untested_regex(shard_dir, current_list):
    """The shard's listed mutants that no run has tested yet, named as the current code names
    them (a mutant below an edit has moved lines). Writes the renaming to
    SHARD_DIR/continued-names.json, so the summary counts them as the shard's."""
    with open(os.path.join(shard_dir, "mutants.out/mutants.json")) as f:
        listed = json.load(f)
    with open(current_list) as f:
        current = json.load(f)
    tested = set()
    for run in ("mutants.out", "clean/mutants.out"):
        path = os.path.join(shard_dir, run, "outcomes.json")
        if os.path.exists(path):
            tested |= {m["name"] for m, _ in mutant_outcomes(path)}
    current_names = {mutant["name"] for mutant in current}
    by_key = defaultdict(list)
    for mutant in current:
        by_key[mutant_key(mutant)].append(mutant["name"])
    renamed = {}
    for mutant in listed:
        if mutant["name"] in tested:
            continue
        now = [mutant["name"]] if mutant["name"] in current_names else by_key.get(
            mutant_key(mutant), [])
        if len(now) == 1:
            renamed[mutant["name"]] = now[0]
        else:
            print(f"# not in the current code (or ambiguous): {mutant['name']}", file=sys.stderr)
    with open(os.path.join(shard_dir, "continued-names.json"), "w") as f:
        json.dump(renamed, f, indent=1)
    return escaped_alternatives(sorted(renamed.values()))


def latest_outcomes():
    by_name = {}
    # Each shard's latest run (mutants.out; cargo-mutants keeps the one before as
    # mutants.out.old, which this skips) and its continuation (continued/), then the clean
    # retests of what they missed or could not build (clean/), whose verdict replaces the
    # incremental run's.
    runs = [path for run in INCREMENTAL_RUNS + CLEAN_RUNS for path in sorted(glob.glob(
        os.path.join(ROOT, "bench/results/mutants/shard-*", run, "outcomes.json")))]
    for path in runs:
        for mutant, outcome in mutant_outcomes(path):
            by_name[mutant["name"]] = (mutant["file"],
                                       OUTCOMES.get(outcome["summary"], outcome["summary"]))
    return by_name


def explained_survivors():
    """{mutant name: (verdict, reason)} from bench/mutants_explained.tsv: survivors shown
    equivalent, or in code since removed."""
    explained = {}
    with open(os.path.join(ROOT, "bench/mutants_explained.tsv")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, verdict, reason = line.rstrip("\n").split("\t")
                assert verdict in ("equivalent", "removed"), line
                explained[name] = (verdict, reason)
    return explained


def share(killed, of):
    """'k of n (p%, 95 % interval lo%-hi%)'."""
    if not of:
        return f"{killed} of {of}"
    lo, hi = interval(killed, of)
    return f"{killed} of {of} ({killed / of:.0%}, 95 % interval {lo:.0%}-{hi:.0%})"


def median_phase_seconds(phase):
    """The median duration of `phase` ("Build" or "Test") over the shards' incremental runs."""
    seconds = [p["duration"]
               for run in INCREMENTAL_RUNS
               for path in glob.glob(os.path.join(ROOT, "bench/results/mutants/shard-*", run, "outcomes.json"))
               for _, o in mutant_outcomes(path)
               for p in o.get("phase_results", []) if p["phase"] == phase]
    return statistics.median(seconds) if seconds else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retest-regex", metavar="OUTCOMES_JSON")
    parser.add_argument("--untested-regex", nargs=2, metavar=("SHARD_DIR", "LIST_JSON"))
    args = parser.parse_args()
    if args.retest_regex:
        print(retest_regex(args.retest_regex))
        return
    if args.untested_regex:
        print(untested_regex(*args.untested_regex))
        return
    by_name = latest_outcomes()
    per_file = defaultdict(Counter)
    for file, outcome in by_name.values():
        per_file[file][outcome] += 1
    total = Counter(outcome for _, outcome in by_name.values())
    viable = total["caught"] + total["missed"] + total["timeout"]
    killed = total["caught"] + total["timeout"]
    explained = explained_survivors()
    missed = sorted(name for name, (_, outcome) in by_name.items() if outcome == "missed")
    unkillable = [name for name in missed if name in explained]
    for listing in sorted(glob.glob(os.path.join(ROOT, "bench/results/mutants/shard-*/mutants.out/mutants.json"))):
        shard = os.path.basename(os.path.dirname(os.path.dirname(listing)))
        with open(listing) as f:
            listed = {m["name"] for m in json.load(f)}
        renaming = os.path.join(os.path.dirname(os.path.dirname(listing)), "continued-names.json")
        if os.path.exists(renaming):
            with open(renaming) as f:
                renamed = json.load(f)
            listed = {renamed.get(name, name) for name in listed}
        print(f"{shard.replace('-of-', '/').replace('shard-', 'Shard ')}: "
              f"{len(listed & set(by_name))} of its {len(listed)} mutants tested.")
    print(f"{len(by_name)} mutants tested: {total['caught']} caught, {total['timeout']} timed out "
          f"(counted as caught: the tests did not pass), {total['missed']} missed, "
          f"{total['unviable']} unviable (did not compile); killed {share(killed, viable)} viable; "
          f"setting aside the {len(unkillable)} shown equivalent or since removed "
          f"(bench/mutants_explained.tsv), killed "
          f"{share(killed, viable - len(unkillable))}.")
    print(f"Median per mutant in the incremental runs: build {median_phase_seconds('Build'):.0f} s, "
          f"tests {median_phase_seconds('Test'):.0f} s (two cores).")
    print()
    print("| file | caught | timeout | missed | unviable |")
    print("|---|---|---|---|---|")
    for file in sorted(per_file):
        c = per_file[file]
        print(f"| `{file}` | {c['caught']} | {c['timeout']} | {c['missed']} | {c['unviable']} |")
    if missed:
        print()
        print("Missed:")
        print()
        for name in missed:
            verdict, reason = explained.get(name, ("", ""))
            print(f"- `{name}`" + (f" ({verdict}: {reason})" if verdict else ""))


if __name__ == "__main__":
    main()
