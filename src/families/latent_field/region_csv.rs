//! Reading a study region from CSV (`model.region = "FILE.csv"`) into a
//! [`Region`](crate::model::region::Region): the file format and its located errors are this
//! module's; the geometry (the even-odd rule, the checks, the cells' areas) is the region's.
//!
//! The file: a header naming the columns, then one row per vertex. Columns `x` and `y` hold the
//! coordinates, finite numbers in the units of `model.window`; an optional integer column `ring`
//! says which ring a vertex belongs to (without it, every row is one ring). A ring's rows are
//! consecutive, in the order of its vertices (either orientation; the closing edge is implied,
//! and a last vertex that repeats the first is dropped). Ring ids need not be in order, but a ring
//! id that comes back after another ring's rows is an error. Other columns are ignored. The
//! dialect (quoting, CR LF, a byte-order mark, R's unnamed row-names column) is
//! [`crate::study::csv`]'s.
//!
//! Errors name the file and the line: a value that is not a number (or a whole-number ring id),
//! a ring id that comes back, a ring with fewer than 3 vertices (the line of its first row), and
//! the region's own refusals (a ring that crosses itself or another: the line of the vertex that
//! starts the edge to blame; a ring with no area: its first row's).

use std::path::Path;

use crate::model::region::{Point, Region, RegionError};
use crate::study::csv::{CsvError, CsvText};

/// The largest region file read: 64 MiB, about two million vertices.
const MAX_REGION_BYTES: u64 = 1 << 26;

/// The region in the CSV at `path`.
pub(crate) fn read_region(path: &Path) -> Result<Region, CsvError> {
    region_of(&CsvText::open(path, MAX_REGION_BYTES, "for a region file")?)
}

/// [`read_region`] on text already in memory; `path` names it in messages.
#[cfg(test)]
pub(crate) fn parse_region(text: &str, path: &Path) -> Result<Region, CsvError> {
    region_of(&CsvText::new(text, path)?)
}

/// One ring's rows as read.
struct RingRows {
    /// Its id, None when the file has no `ring` column.
    id: Option<i64>,
    points: Vec<Point>,
    /// The line of each point.
    lines: Vec<usize>,
}

impl RingRows {
    /// "ring 7", or "the ring" in a file without ring ids.
    fn name(&self) -> String {
        match self.id {
            Some(id) => format!("ring {id}"),
            None => "the ring".to_string(),
        }
    }
}

fn region_of(text: &CsvText) -> Result<Region, CsvError> {
    let path = text.path();
    let mut rows = text.rows("region file")?;
    let (x, y) = (rows.column("x")?, rows.column("y")?);
    let ring = rows.header().find("ring");
    let mut rings: Vec<RingRows> = Vec::new();
    while let Some(row) = rows.next_row()? {
        let point = (row.finite(x)?, row.finite(y)?);
        let id = ring
            .map(|column| row.parse::<i64>(column, "a ring id (a whole number)"))
            .transpose()?;
        if rings.last().is_none_or(|last| last.id != id) {
            if let Some(earlier) = rings.iter().find(|r| r.id == id) {
                let between = rings.last().map(RingRows::name).unwrap_or_default();
                return Err(row.line_error(format!(
                    "{} comes back after {between}: its rows began at line {} and a ring's rows \
                     must be consecutive",
                    earlier.name(),
                    earlier.lines[0]
                )));
            }
            rings.push(RingRows {
                id,
                points: Vec::new(),
                lines: Vec::new(),
            });
        }
        let current = rings.last_mut().expect("a ring was just pushed");
        current.points.push(point);
        current.lines.push(row.line);
    }
    if rings.is_empty() {
        return Err(CsvError::file(
            path,
            "the region file has a header but no vertices",
        ));
    }
    for ring in &mut rings {
        if ring.points.len() > 1 && ring.points.first() == ring.points.last() {
            ring.points.pop();
            ring.lines.pop();
        }
        if ring.points.len() < 3 {
            return Err(CsvError::at_line(
                path,
                ring.lines[0],
                format!(
                    "{} has {} vertices (a closing vertex that repeats the first not counted); a \
                     ring needs at least 3",
                    ring.name(),
                    ring.points.len()
                ),
            ));
        }
    }
    let points = rings.iter().map(|ring| ring.points.clone()).collect();
    Region::new(points).map_err(|error| located(path, &rings, &error))
}

/// The region's error at the line of the vertex (or ring) it blames, rings named by their ids.
fn located(path: &Path, rings: &[RingRows], error: &RegionError) -> CsvError {
    let message = error.describe(&|k| rings[k].name());
    match error.ring() {
        Some(k) => {
            let lines = &rings[k].lines;
            let line = error.vertex().map_or(lines[0], |v| lines[v]);
            CsvError::at_line(path, line, message)
        }
        None => CsvError::file(path, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Window;

    fn parse(text: &str) -> Result<Region, String> {
        parse_region(text, Path::new("data/r.csv")).map_err(|e| e.to_string())
    }

    #[test]
    fn rings_are_read_by_id_in_file_order_with_closing_repeats_dropped() {
        // Ring 5 (the outer square, closed by repeating its first vertex) then ring 2 (a hole),
        // ids out of order, with extra columns, quoting and CR LF.
        let text = "\"\",ring,y,x,note\r\n\
                    1,5,0,0,a\r\n2,5,0,4,b\r\n3,5,4,4,\"c, d\"\r\n4,5,4,0,\r\n5,5,0,0,\r\n\r\n\
                    6,2,1,1,\r\n7,2,1,2,\r\n8,2,2,2,\r\n9,2,2,1,\r\n";
        let region = parse(text).unwrap();
        let rings: Vec<&[Point]> = region.rings().collect();
        assert_eq!(rings.len(), 2);
        assert_eq!(rings[0], &[(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)]);
        assert_eq!(rings[1].len(), 4);
        assert_eq!(region.area(), 15.0);
        // Without a ring column the rows are one ring.
        let triangle = parse("x,y\n0,0\n2,0\n0,2\n").unwrap();
        assert_eq!(triangle.area(), 2.0);
    }

    #[test]
    fn every_error_names_the_file_and_its_line() {
        let cases: [(&str, &str); 12] = [
            ("", "data/r.csv: the region file is empty"),
            (
                "x,y,ring\n",
                "data/r.csv: the region file has a header but no vertices",
            ),
            (
                "x,z\n0,0\n",
                "data/r.csv:1: no column `y`; the columns are: x, z",
            ),
            (
                "x,y\n0,0\n1,oops\n0,1\n",
                "data/r.csv:3: y = `oops` is not a finite number",
            ),
            (
                "x,y\n0,0\n1,NA\n0,1\n",
                "data/r.csv:3: y = `NA` is not a finite number",
            ),
            (
                "x,y,ring\n0,0,1\n1,0,1.5\n",
                "data/r.csv:3: ring = `1.5` is not a ring id (a whole number)",
            ),
            (
                "x,y,ring\n0,0,1\n1,0,1\n0,1,1\n5,5,2\n6,5,2\n5,6,2\n1,1,1\n",
                "data/r.csv:8: ring 1 comes back after ring 2: its rows began at line 2 and a \
                 ring's rows must be consecutive",
            ),
            (
                "x,y,ring\n0,0,1\n1,0,1\n0,1,1\n\n5,5,2\n6,5,2\n5,5,2\n",
                "data/r.csv:6: ring 2 has 2 vertices (a closing vertex that repeats the first \
                 not counted); a ring needs at least 3",
            ),
            ("x,y\n0,0\n1,1\n", "data/r.csv:2: the ring has 2 vertices"),
            (
                "x,y,ring\n0,0,7\n1,1,7\n2,2,7\n",
                "data/r.csv:2: ring 7 encloses no area",
            ),
            // The bow tie's edge from line 5 crosses the one from line 7.
            (
                "x,y,ring\n9,9,1\n10,9,1\n9,10,1\n0,0,3\n2,2,3\n2,0,3\n0,2,3\n",
                "data/r.csv:5: ring 3 crosses or touches itself near (1, 1)",
            ),
            (
                "x,y,ring\n0,0,4\n2,0,4\n2,2,4\n0,2,4\n1,1,9\n3,1,9\n3,3,9\n1,3,9\n",
                "data/r.csv:4: ring 4 crosses ring 9 near (1, 2)",
            ),
        ];
        for (text, expected) in cases {
            let got = parse(text).unwrap_err();
            assert!(
                got.starts_with(expected),
                "{got:?} should start with {expected:?}"
            );
        }
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let error = read_region(Path::new("/nonexistent/region.csv")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/region.csv: cannot read the data file"),
            "{error}"
        );
    }

    /// The shipped Chorley region (one ring of 131 vertices): its area is its ring's shoelace
    /// area, computed here from the file's text alone, and its cells' areas add up to it.
    #[test]
    fn the_chorley_region_has_its_rings_shoelace_area() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/chorley_region.csv");
        let region = read_region(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let vertices: Vec<(f64, f64)> = text
            .lines()
            .skip(1)
            .map(|line| {
                let fields: Vec<f64> = line.split(',').map(|f| f.parse().unwrap()).collect();
                (fields[0], fields[1])
            })
            .collect();
        assert_eq!(vertices.len(), 131);
        let twice: f64 = (0..vertices.len())
            .map(|k| {
                let (p, q) = (vertices[k], vertices[(k + 1) % vertices.len()]);
                p.0 * q.1 - q.0 * p.1
            })
            .sum();
        let shoelace = twice.abs() / 2.0;
        assert!(
            (region.area() - shoelace).abs() < 1e-9 * shoelace,
            "{} vs {shoelace}",
            region.area()
        );
        // The study area is about 20 km across (area in km^2).
        assert!((200.0..400.0).contains(&shoelace), "{shoelace}");
        let window = region.bounding_box();
        assert_eq!(
            window,
            Window {
                x: (343.45, 366.45),
                y: (410.41, 431.79)
            }
        );
        for (nx, ny) in [(32, 32), (64, 48)] {
            let total: f64 = region.cell_areas(window, nx, ny).iter().sum();
            assert!((total - shoelace).abs() < 1e-9 * shoelace, "{nx} x {ny}");
            let fractions = region.inside_fractions(window, nx, ny);
            assert!(fractions.contains(&0.0));
            assert!(fractions.iter().any(|&f| f > 1.0 - 1e-12));
        }
        // The incinerator (354.5, 413.6) is in the region; the bounding box's corners are not.
        assert!(region.contains(354.5, 413.6));
        assert!(!region.contains(343.45, 410.41));
    }
}
