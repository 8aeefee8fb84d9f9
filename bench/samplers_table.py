"""The table of docs/samplers.md's "On real count grids" from a run of studies/lgcp/samplers.toml
(bench/samplers.sh): bench/results/lgcp_samplers.csv, one row per job, and its Markdown table
bench/results/lgcp_samplers.md with the provenance line. Run from the repository root."""
import argparse
import csv
import os

import polars as pl

from table_common import fmt, load_averages, measured

COLUMNS = ["data", "kind", "acceptance_rate", "step_size", "cell_rhat_max", "cell_ess_bulk_min",
           "cell_ess_tail_min", "cpu_seconds", "cell_ess_bulk_min_per_second", "count_mae",
           "baseline_count_mae", "warned"]


def rows(run):
    jobs = pl.read_parquet(os.path.join(run, "jobs.parquet"))
    out = []
    for job in jobs.iter_rows(named=True):
        row = {c: job.get(c) for c in COLUMNS}
        row["data"] = os.path.basename(job["data_path"]).split("_grid")[0]
        row["kind"] = job["sampler_kind"]
        row["warned"] = bool(job["warnings"])
        out.append(row)
    return out


def markdown(rows, provenance):
    lines = [provenance, "",
             "| data | kind | acceptance | step | max cell R-hat | min cell bulk ESS | min tail ESS "
             "| CPU s | min-cell ESS / CPU s | held-out count MAE (constant rate) | warnings |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['kind']} | {fmt(r['acceptance_rate'])} | {fmt(r['step_size'])} "
            f"| {r['cell_rhat_max']:.3f} | {r['cell_ess_bulk_min']:,.0f} | {r['cell_ess_tail_min']:,.0f} "
            f"| {r['cpu_seconds']:.1f} | {r['cell_ess_bulk_min_per_second']:.1f} "
            f"| {r['count_mae']:.4f} ({r['baseline_count_mae']:.4f}) | {'yes' if r['warned'] else 'no'} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="the results folder of studies/lgcp/samplers.toml")
    parser.add_argument("--load", required=True, help="the folder holding load_before.txt and load_after.txt")
    parser.add_argument("--core", default="0")
    parser.add_argument("--results", default="bench/results")
    args = parser.parse_args()
    table = rows(args.run)
    with open(os.path.join(args.results, "lgcp_samplers.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(table)
    before, after = load_averages(args.load)
    provenance = (f"{measured('bench/samplers.sh')}; `fieldmc run studies/lgcp/samplers.toml "
                  f"--threads 1` pinned to core {args.core}, load average before {before}, after "
                  f"{after}. CPU seconds are the job thread's own clock (setup and sampling, all "
                  f"chains).")
    with open(os.path.join(args.results, "lgcp_samplers.md"), "w") as fh:
        fh.write(markdown(table, provenance))
    print(f"wrote {args.results}/lgcp_samplers.csv and .md")


if __name__ == "__main__":
    main()
