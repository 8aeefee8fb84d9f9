# export_bei.R: export the Barro Colorado Island tree pattern `bei` and its covariates `bei.extra`
# (R package spatstat.data; Debian 12 package r-cran-spatstat.data) as CSV files in data/.
#
# Run from the repository root:   Rscript data/export_bei.R
#
# Source: spatstat.data `bei` (Beilschmiedia pendula trees in the 1000 x 500 m forest dynamics plot
# of Barro Colorado Island; Hubbell & Foster 1983, Condit, Hubbell & Foster 1996, Condit 1998) and
# `bei.extra` (pixel images `elev`, elevation in m, and `grad`, norm of the elevation gradient, on a
# 5 m raster of 101 x 201 pixel centres at x = 0, 5, ..., 1000, y = 0, 5, ..., 500). Licence GPL (>= 2).
# Only base R is used: ppp and im objects are plain lists.
#
# Writes (all coordinates in metres, window [0, 1000] x [0, 500]):
#   data/bei_points.csv                 x,y: one row per tree, in the dataset's order
#   data/bei_grid{32,64}.csv            i,j,x_center,y_center,count
#   data/bei_covariates_grid{32,64}.csv i,j,x_center,y_center,elev,grad
# Grid conventions: D x D cells, i = 0..D-1 along x, j = 0..D-1 along y, rows j-major (row = j*D + i),
# cells 1000/D m wide and 500/D m tall. A value v falls in cell floor((v - x0) / (x1 - x0) * D) along
# each axis, v == x1 in the last cell D-1 (so a point on an inner edge goes to the upper cell); this is
# fieldmc's `axis_cell`. Trees are counted with it; a cell's elev and grad are the means of the raster
# values whose pixel centres fall in the cell by the same rule (an im's $v has rows = y, columns = x).
# Numbers are written with up to 10 significant digits, never in scientific notation; the output is
# deterministic.

suppressMessages(library(spatstat.data))
data(bei, package = "spatstat.data", envir = environment())  # also loads bei.extra
if (!exists("bei.extra")) stop("bei.extra not loaded with bei")

out_dir <- "data"
if (!dir.exists(out_dir)) stop("run from the repository root (no data/ directory here)")

fmt <- function(v) {
  if (anyNA(v)) stop("NA value to write")
  vapply(v, function(z) format(z, digits = 10, scientific = FALSE, trim = TRUE), "")
}
write_rows <- function(df, path) {
  cols <- lapply(df, function(col) if (is.integer(col)) as.character(col) else fmt(col))
  lines <- c(paste(names(df), collapse = ","), do.call(paste, c(cols, sep = ",")))
  writeLines(lines, file.path(out_dir, path))
  cat(sprintf("wrote %s (%d rows)\n", file.path(out_dir, path), nrow(df)))
}

# cell along one axis of `cells` cells tiling [lo, hi]; the last cell takes v == hi
axis_cell <- function(v, range, cells) {
  lo <- range[1]; hi <- range[2]
  if (any(v < lo | v > hi)) stop("value outside the window")
  pmin(floor((v - lo) / (hi - lo) * cells), cells - 1L)
}

xr <- bei$window$xrange
yr <- bei$window$yrange
if (!identical(xr, c(0, 1000)) || !identical(yr, c(0, 500))) stop("unexpected bei window")
n <- bei$n
if (length(bei$x) != n || length(bei$y) != n) stop("bei$n does not match the coordinates")

# points: the written text must read back as the same doubles
px <- fmt(bei$x); py <- fmt(bei$y)
if (any(as.numeric(px) != bei$x) || any(as.numeric(py) != bei$y)) stop("coordinates do not round-trip")
write_rows(data.frame(x = bei$x, y = bei$y), "bei_points.csv")

elev <- bei.extra$elev
grad <- bei.extra$grad
for (im in list(elev, grad)) {
  if (!identical(dim(im$v), c(length(im$yrow), length(im$xcol)))) stop("im$v is not rows = y, columns = x")
  if (!identical(im$xcol, elev$xcol) || !identical(im$yrow, elev$yrow)) stop("elev and grad rasters differ")
}
# pixel centre coordinates laid out like $v (rows = y, columns = x)
pix_x <- matrix(elev$xcol, nrow = length(elev$yrow), ncol = length(elev$xcol), byrow = TRUE)
pix_y <- matrix(elev$yrow, nrow = length(elev$yrow), ncol = length(elev$xcol))
inside <- pix_x >= xr[1] & pix_x <= xr[2] & pix_y >= yr[1] & pix_y <= yr[2]

for (D in c(32L, 64L)) {
  cells <- expand.grid(i = 0:(D - 1L), j = 0:(D - 1L))  # i varies fastest: row = j*D + i
  x_center <- xr[1] + (cells$i + 0.5) * (xr[2] - xr[1]) / D
  y_center <- yr[1] + (cells$j + 0.5) * (yr[2] - yr[1]) / D

  # tree counts
  cell <- axis_cell(bei$y, yr, D) * D + axis_cell(bei$x, xr, D)
  count <- tabulate(cell + 1L, nbins = D * D)
  if (sum(count) != n) stop(sprintf("D = %d: counts sum to %d, not %d", D, sum(count), n))
  write_rows(data.frame(i = cells$i, j = cells$j, x_center = x_center, y_center = y_center,
                        count = as.integer(count)), sprintf("bei_grid%d.csv", D))

  # covariate means over the pixel centres in each cell
  pcell <- axis_cell(pix_y[inside], yr, D) * D + axis_cell(pix_x[inside], xr, D)
  npix <- tabulate(pcell + 1L, nbins = D * D)
  if (any(npix == 0)) stop(sprintf("D = %d: %d cells hold no pixel centre", D, sum(npix == 0)))
  cell_mean <- function(im) {
    vals <- im$v[inside]
    if (anyNA(vals)) stop("NA pixel value in the window")
    as.numeric(tapply(vals, factor(pcell, levels = 0:(D * D - 1L)), mean))
  }
  cov <- data.frame(i = cells$i, j = cells$j, x_center = x_center, y_center = y_center,
                    elev = cell_mean(elev), grad = cell_mean(grad))
  if (anyNA(cov)) stop(sprintf("D = %d: NA covariate value", D))
  write_rows(cov, sprintf("bei_covariates_grid%d.csv", D))
}
