"""What the bench/*_table.py and *_summary.py scripts share: number formatting for their
Markdown tables, the provenance lines (commit, machine, load) every committed benchmark output
carries, and exact binomial tails and intervals for the shares they report."""
import csv
import math
import os
import subprocess


def fmt(x, digits=3):
    """A number for a Markdown table ('—' for none)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{digits + 1}g}"


def chain_gap_cell(row, name):
    """'chain mean (sd), gap, sd ratio' of hyperparameter `name` in a row of an approximation
    against a chain (keys `<name>_chain_mean`, `_chain_sd`, `_gap_sd`, `_sd_ratio`)."""
    return (f"{fmt(row[f'{name}_chain_mean'])} ({fmt(row[f'{name}_chain_sd'])}), "
            f"{fmt(row[f'{name}_gap_sd'], 2)}, {fmt(row[f'{name}_sd_ratio'], 2)}")


def git_commit(out=None):
    """The commit the run was made on: OUT/commit.txt when the bench script wrote one at run time,
    else `git describe --always --dirty` of the checkout now, or 'unknown'."""
    recorded = os.path.join(out, "commit.txt") if out else None
    if recorded and os.path.exists(recorded):
        return open(recorded).read().strip()
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine():
    """(cores, CPU model name)."""
    model = "unknown CPU"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return os.cpu_count(), model


def load_averages(out):
    """The load averages `uptime` wrote to OUT/load_before.txt and OUT/load_after.txt."""
    return [open(os.path.join(out, f)).read().split("load average:")[1].strip()
            for f in ("load_before.txt", "load_after.txt")]


def measured(script, verb="Measured", out=None):
    """'Measured DATE by `SCRIPT` on commit C; N cores, CPU': the start of a provenance line
    ('Tabulated ...' for a script that tables runs measured earlier, which name their commits);
    C is the one the run's folder `out` recorded, where it did ([`git_commit`])."""
    import datetime
    cores, model = machine()
    return (f"{verb} {datetime.date.today()} by `{script}` on commit {git_commit(out)}; "
            f"{cores} cores, {model}")


def measured_csv(path):
    """A CSV written by a bench/*.sh script: (its comment lines without '# ', its rows as dicts).
    The comments are the script's own line, then the provenance line of bench/common.sh."""
    lines = open(path).read().splitlines()
    comments = [line[2:] for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    return comments, rows


def provenance_sentence(comments, path):
    """'Measured DATE, commit C, N cores, CPU (`PATH`)': a table's first words."""
    return f"{comments[1][0].upper()}{comments[1][1:]} (`{path}`)"


def binomial_sum(js, n, p):
    """P(X in js) for X ~ Binomial(n, p), summed in log space (each tail is summed directly: a
    tail near 1e-12 taken as 1 minus the other would keep only its rounding error)."""
    log_terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                 + (j * math.log(p) if j else 0.0) + ((n - j) * math.log1p(-p) if n - j else 0.0)
                 for j in js]
    if not log_terms:
        return 0.0
    top = max(log_terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in log_terms))


def binomial_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    return binomial_sum(range(0, min(k, n) + 1), n, p)


def binomial_tail(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p)."""
    return binomial_sum(range(max(k, 0), n + 1), n, p)


def solve(f, target):
    """The p in [0, 1] where the increasing function f reaches target, by bisection."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def interval(k, n):
    """Clopper-Pearson 95 % interval of a share k / n."""
    lower = 0.0 if k == 0 else solve(lambda p: binomial_tail(k, n, p), 0.025)
    upper = 1.0 if k == n else solve(lambda p: binomial_tail(k + 1, n, p), 0.975)
    return lower, upper


def write_csv(path, columns, rows):
    """Rows (dicts) as a CSV with `columns` in order: None empty, booleans lower-case, floats in
    6 significant digits."""
    import csv

    def cell(v):
        if v is None:
            return ""
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, (str, int)):
            return str(v)
        return f"{v:.6g}"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: cell(r[k]) for k in columns})


def utc_now():
    """The time now, UTC, as the tables' provenance lines write it."""
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fieldmc_version(binary):
    """What `binary --version` prints, or a placeholder when it cannot run."""
    import subprocess
    try:
        return subprocess.run([binary, "--version"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "fieldmc (version unknown)"


def write_markdown(path, lines):
    """The lines of a table's markdown to `path`, and to the terminal."""
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def experiment_args(doc):
    """The arguments of a table script over one experiment run: --out (the run's directory) and
    --results (default bench/results)."""
    import argparse
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--results", default="bench/results")
    return p.parse_args()


def experiment_rows(out, group_of):
    """The rows of every OUT/*_D<side>.csv an experiment script wrote (the `EXP ` rows of an
    ignored test), each with "group" = group_of(the file's name before "_D<side>.csv")."""
    import glob
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "*_D*.csv"))):
        group = group_of(os.path.basename(path).rsplit("_D", 1)[0])
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                r["group"] = group
                rows.append(r)
    if not rows:
        raise SystemExit(f"no runs in {out}")
    return rows
