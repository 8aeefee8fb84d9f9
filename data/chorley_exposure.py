#!/usr/bin/env python3
"""The Chorley-Ribble case-control data (chorley_points.csv: larynx cases and lung cases,
chorley_region.csv: the study region, km) as the Chorley study reads them:

- chorley_larynx.csv, chorley_lung.csv: the two marks' points (x, y), split from chorley_points.csv;
- chorley_lung_grid32.csv: the lung cases' intensity (cases per km^2) at every cell centre of
  the study's 32 x 32 grid over the window [343, 367] x [410, 434] km, as a kernel estimate:
  lambda(s) = sum_i K_h(s - x_i) / p_h(s), a Gaussian kernel of bandwidth h = 1 km divided by
  the kernel's mass inside the region at s (Diggle's edge correction; a lattice of 50 m over the
  region). The lung cases stand in for the population at risk of larynx cancer (Diggle 1990), so
  this is the study's data.exposure: the larynx intensity is lambda_lung(s) exp(u(s)).

Run in data/:  python3 chorley_exposure.py   (numpy only)
"""
import csv
import math

import numpy as np

BANDWIDTH = 1.0          # km
D = 32
WINDOW = ((343.0, 367.0), (410.0, 434.0))
LATTICE = 0.05           # km, for the kernel's mass inside the region


def read_points(path):
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    return rows


def region_rings(path):
    rings = {}
    with open(path) as fh:
        for row in csv.DictReader(fh):
            rings.setdefault(row.get("ring", "1"), []).append((float(row["x"]), float(row["y"])))
    return [np.array(r) for r in rings.values()]


def inside(rings, x, y):
    """Even-odd rule: crossings of a ray towards +x."""
    result = np.zeros(x.shape, bool)
    for ring in rings:
        xs, ys = ring[:, 0], ring[:, 1]
        xn, yn = np.roll(xs, -1), np.roll(ys, -1)
        for x0, y0, x1, y1 in zip(xs, ys, xn, yn):
            crosses = (y0 > y) != (y1 > y)
            xc = x0 + (y - y0) * (x1 - x0) / np.where(y1 != y0, y1 - y0, 1.0)
            result ^= crosses & (x < xc)
    return result


def main():
    points = read_points("chorley_points.csv")
    for mark in ("larynx", "lung"):
        with open(f"chorley_{mark}.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["x", "y"])
            for p in points:
                if p["mark"] == mark:
                    w.writerow([p["x"], p["y"]])
    lung = np.array([(float(p["x"]), float(p["y"])) for p in points if p["mark"] == "lung"])
    rings = region_rings("chorley_region.csv")
    (x0, x1), (y0, y1) = WINDOW
    gx = np.arange(x0 + LATTICE / 2, x1, LATTICE)
    gy = np.arange(y0 + LATTICE / 2, y1, LATTICE)
    lx, ly = np.meshgrid(gx, gy)
    lattice = np.column_stack([lx.ravel(), ly.ravel()])[inside(rings, lx.ravel(), ly.ravel())]
    h2 = BANDWIDTH ** 2
    dx, dy = (x1 - x0) / D, (y1 - y0) / D
    rows = []
    for j in range(D):
        for i in range(D):
            s = np.array([x0 + (i + 0.5) * dx, y0 + (j + 0.5) * dy])
            kernel = np.exp(-((lung - s) ** 2).sum(1) / (2 * h2)).sum() / (2 * math.pi * h2)
            mass = np.exp(-((lattice - s) ** 2).sum(1) / (2 * h2)).sum() * LATTICE ** 2 / (2 * math.pi * h2)
            density = kernel / mass if mass > 1e-6 else 0.0
            rows.append((i, j, s[0], s[1], density))
    with open(f"chorley_lung_grid{D}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["i", "j", "x_center", "y_center", "lung_density"])
        for i, j, x, y, density in rows:
            w.writerow([i, j, f"{x:.4f}", f"{y:.4f}", f"{density:.6g}"])


if __name__ == "__main__":
    main()
