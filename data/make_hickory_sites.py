#!/usr/bin/env python3
"""A survey of hickory presence in Lansing Woods at scattered sites, from the 32 x 32 presence
grid (lansing_hickory_presence_grid32.csv: columns i, j, x_center, y_center, label = 1 if the
cell holds at least one hickory) as studies/geostat/hickory_sites.toml reads it:

- lansing_hickory_sites.csv (columns x, y, present): a seeded random 40 % of the 1,024 cells
  (410 cells, numpy's default_rng(SEED).choice without replacement), one site per surveyed cell
  AT ITS CELL CENTRE, with that cell's label. Rows in cell order (j-major, cell = j*32 + i).

A site exactly at a cell centre observes that cell alone under fieldmc's bilinear operator
(docs/data.md, "Measurements at scattered sites"), so the study is the grid probit model with
the 614 unsurveyed cells held out: bench/probit_sites_peer.sh fits that grid model with the peer.
The coordinates are copied as text from the grid file (the centres (k + 1/2) / 32 are exact
binary fractions), so nothing is rounded.

Run in data/:  python3 make_hickory_sites.py   (numpy only; two runs give byte-identical files)
"""
import csv

import numpy as np

SEED = 20240043          # fixed: the survey is part of the data
SHARE = 0.4              # of the cells surveyed
D = 32
GRID = "lansing_hickory_presence_grid32.csv"
OUT = "lansing_hickory_sites.csv"


def main():
    with open(GRID, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == D * D, f"{GRID}: {len(rows)} rows, expected {D * D}"
    by_cell = {}
    for r in rows:
        i, j = int(r["i"]), int(r["j"])
        assert 0 <= i < D and 0 <= j < D and (i, j) not in by_cell, (i, j)
        assert float(r["x_center"]) == (i + 0.5) / D and float(r["y_center"]) == (j + 0.5) / D
        assert r["label"] in ("0", "1"), r
        by_cell[j * D + i] = r
    n = round(SHARE * D * D)
    surveyed = np.sort(np.random.default_rng(SEED).choice(D * D, size=n, replace=False))
    with open(OUT, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["x", "y", "present"])
        for c in surveyed:
            r = by_cell[int(c)]
            w.writerow([r["x_center"], r["y_center"], r["label"]])
    present = sum(int(by_cell[int(c)]["label"]) for c in surveyed)
    print(f"wrote {OUT}: {n} sites of {D * D} cells, {present} with hickory present")


if __name__ == "__main__":
    main()
