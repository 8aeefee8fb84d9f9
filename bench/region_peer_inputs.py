#!/usr/bin/env python3
"""The peer's inputs for bench/region_peer.sh, built from the raw files the study names and not
from fieldmc's output, so that the comparison also checks fieldmc's binning, region areas and
offsets:

- OUT/counts.csv: i, j, x_center, y_center, count: the study's points (`data.path`) counted on its
  D x D grid over `model.window` (a point on a cell's upper edge goes to the upper cell; the
  window's upper edge to the last cell);
- OUT/offset.csv: i, j, x_center, y_center, area_inside, exposure, log_offset: each cell's area
  inside the study region (`model.region`) by exact polygon intersection (shapely; the rings
  combined by the even-odd rule, a ring inside another a hole), the exposure column
  (`data.exposure`) of `data.covariates_path`, and log(exposure x area inside) where both are > 0
  (empty elsewhere);
- OUT/held.txt: the cells j*D + i out of the likelihood: no area inside the region or no exposure.

Prints LENGTH_SCALE=... and VARIANCE=... (the study's, for the shell to eval).
"""
import argparse
import csv
import math
import os
import shlex
import tomllib

import numpy as np
from shapely.geometry import Polygon, box


def args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", required=True)
    p.add_argument("--out", required=True)
    return p.parse_args()


def rows_of(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def region_of(path):
    """The rings of a region CSV (x, y, optional ring) combined by the even-odd rule."""
    rings = {}
    for row in rows_of(path):
        rings.setdefault(row.get("ring", "1"), []).append((float(row["x"]), float(row["y"])))
    region = Polygon()
    for ring in rings.values():
        region = region.symmetric_difference(Polygon(ring).buffer(0))
    return region


def main():
    a = args()
    with open(a.study, "rb") as fh:
        study = tomllib.load(fh)
    m, d = study["model"], study["data"]
    assert m["likelihood"] == "poisson" and d["source"] == "points", study
    assert d.get("holdout", 0) == 0 and "covariates" not in d, d
    assert m.get("kernel", "squared-exponential") == "squared-exponential", m
    assert m.get("offset", "log-area") == "log-area" and m.get("mean", "auto") == "auto", m
    here = os.path.dirname(a.study)
    path = lambda p: os.path.normpath(os.path.join(here, p))
    D = int(m["grid"])
    (x0, x1), (y0, y1) = m["window"]
    dx, dy = (x1 - x0) / D, (y1 - y0) / D

    counts = np.zeros((D, D), np.int64)
    for p in rows_of(path(d["path"])):
        x, y = float(p["x"]), float(p["y"])
        assert x0 <= x <= x1 and y0 <= y <= y1, (x, y)
        i = min(int((x - x0) / dx), D - 1)
        j = min(int((y - y0) / dy), D - 1)
        counts[j, i] += 1

    exposure = np.full((D, D), np.nan)
    for r in rows_of(path(d["covariates_path"])):
        exposure[int(r["j"]), int(r["i"])] = float(r[d["exposure"]])
    assert np.isfinite(exposure).all() and (exposure >= 0).all(), "exposure on every cell, >= 0"

    region = region_of(path(m["region"]))
    held = []
    with open(os.path.join(a.out, "counts.csv"), "w", newline="") as c, \
            open(os.path.join(a.out, "offset.csv"), "w", newline="") as o:
        wc, wo = csv.writer(c), csv.writer(o)
        wc.writerow(["i", "j", "x_center", "y_center", "count"])
        wo.writerow(["i", "j", "x_center", "y_center", "area_inside", "exposure", "log_offset"])
        for j in range(D):
            for i in range(D):
                xc, yc = x0 + (i + 0.5) * dx, y0 + (j + 0.5) * dy
                cell = box(x0 + i * dx, y0 + j * dy, x0 + (i + 1) * dx, y0 + (j + 1) * dy)
                area = region.intersection(cell).area
                e = exposure[j, i]
                observed = area > 0 and e > 0
                if not observed:
                    held.append(j * D + i)
                    assert counts[j, i] == 0, f"a case in cell ({i}, {j}), out of the likelihood"
                wc.writerow([i, j, repr(xc), repr(yc), int(counts[j, i])])
                wo.writerow([i, j, repr(xc), repr(yc), repr(area), repr(e),
                             repr(math.log(e * area)) if observed else ""])
    with open(os.path.join(a.out, "held.txt"), "w") as fh:
        fh.write("\n".join(str(c) for c in held) + "\n")
    print(f"LENGTH_SCALE={shlex.quote(repr(float(m['length_scale'])))}")
    print(f"VARIANCE={shlex.quote(repr(float(m['variance'])))}")


if __name__ == "__main__":
    main()
