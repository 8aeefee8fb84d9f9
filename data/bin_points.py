#!/usr/bin/env python3
"""Bin a point file of this folder on a D x D grid, with the grid convention of data/README.md.

    python3 data/bin_points.py data/lansing_points.csv 0 1 0 1 128 > data/lansing_grid128.csv

Arguments: the points CSV (columns x, y, ...), the window x0 x1 y0 y1, the side D. Cell (i, j)
is [x0 + i dx, x0 + (i + 1) dx) x [y0 + j dy, y0 + (j + 1) dy); points on the right or top edge go
into the last cell; rows run j-major with columns i, j, x_center, y_center, count. Standard
library only; the output is deterministic.

An optional seventh argument, a mark, bins binomial data instead: `count` is then the points of
that mark (column `mark`) and `trials` all the points of the cell,

    python3 data/bin_points.py data/lansing_points.csv 0 1 0 1 16 hickory \
        > data/lansing_hickory_share_grid16.csv
 fieldmc bins the same points itself
(`data.source = "points"`), and a test checks that both give the same grid cell by cell.
"""
import csv
import sys
from fractions import Fraction


def cell_index(value, low, high, side):
    # Exact rational arithmetic, so that a point on an inner edge goes into the upper cell.
    k = int((Fraction(value) - Fraction(low)) * side // (Fraction(high) - Fraction(low)))
    return min(max(k, 0), side - 1)


def main():
    path, x0, x1, y0, y1, side = sys.argv[1:7]
    mark = sys.argv[7] if len(sys.argv) > 7 else None
    x0, x1, y0, y1, side = float(x0), float(x1), float(y0), float(y1), int(side)
    counts = [[0] * side for _ in range(side)]
    trials = [[0] * side for _ in range(side)]
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            x, y = float(row["x"]), float(row["y"])
            if not (x0 <= x <= x1 and y0 <= y <= y1):
                sys.exit(f"{path}: point ({x}, {y}) lies outside the window")
            j, i = cell_index(y, y0, y1, side), cell_index(x, x0, x1, side)
            trials[j][i] += 1
            if mark is None or row["mark"] == mark:
                counts[j][i] += 1
    dx, dy = (x1 - x0) / side, (y1 - y0) / side
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["i", "j", "x_center", "y_center", "count"] + (["trials"] if mark else []))
    for j in range(side):
        for i in range(side):
            centre = [i, j, repr(x0 + (i + 0.5) * dx), repr(y0 + (j + 0.5) * dy), counts[j][i]]
            out.writerow(centre + ([trials[j][i]] if mark else []))


if __name__ == "__main__":
    main()
