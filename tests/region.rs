//! `model.region` through the real binary: each cell's share inside a region with a hole and a
//! diagonal edge, read back from fields.parquet against areas worked out by hand; the window
//! defaults to the region's bounding box; region.parquet holds the outline; without a region
//! the likelihood's log offset of each cell is the log of its area inside the region; without a
//! region every share is 1 and no region.parquet is written; a study on the
//! shipped Chorley region and points passes `fieldmc check`; the shipped region study marks the
//! old incinerator (marks.parquet, the report's field maps).

mod support;

use std::path::Path;

use support::{fieldmc, floats, ints, run_ok, strings, table, text, write_file};

/// The region: the square [0, 4]^2 with its top-right corner cut off along x + y = 6.5 (ring 1),
/// less the hole [0.25, 1.5] x [0.5, 1.75] (ring 2, written clockwise: orientation does not
/// matter).
const REGION: &str = "x,y,ring\n0,0,1\n4,0,1\n4,2.5,1\n2.5,4,1\n0,4,1\n\
                      0.25,0.5,2\n0.25,1.75,2\n1.5,1.75,2\n1.5,0.5,2\n";

/// The share of each unit cell (i, j) of the 4 x 4 grid over [0, 4]^2 inside [`REGION`], cell
/// j * 4 + i, by hand. Cells are 1 x 1, so a share is an area.
fn shares_by_hand() -> Vec<f64> {
    let mut share = vec![1.0; 16];
    let mut set = |i: usize, j: usize, value: f64| share[j * 4 + i] = value;
    // The diagonal x + y = 6.5 crosses cell (3, 2) = [3, 4] x [2, 3] from (3.5, 3) to (4, 2.5):
    // it cuts off the right triangle with legs 0.5, area 0.125.
    set(3, 2, 1.0 - 0.5 * 0.5 / 2.0);
    // Cell (2, 3) likewise, from (2.5, 4) to (3, 3.5).
    set(2, 3, 1.0 - 0.5 * 0.5 / 2.0);
    // Cell (3, 3) keeps only the triangle (3, 3), (3.5, 3), (3, 3.5) below the diagonal.
    set(3, 3, 0.5 * 0.5 / 2.0);
    // The hole [0.25, 1.5] x [0.5, 1.75] takes a rectangle from each of four cells.
    set(0, 0, 1.0 - (1.0 - 0.25) * (1.0 - 0.5));
    set(1, 0, 1.0 - (1.5 - 1.0) * (1.0 - 0.5));
    set(0, 1, 1.0 - (1.0 - 0.25) * (1.75 - 1.0));
    set(1, 1, 1.0 - (1.5 - 1.0) * (1.75 - 1.0));
    share
}

/// Five events, inside [`REGION`] (below the diagonal, outside the hole).
const POINTS: &str = "x,y\n2,2\n3.5,1\n0.5,3\n1,0.25\n2.5,3.5\n";

/// A small points study (poisson, `model.offset` = "log-area", the default for points) on a
/// 4 x 4 grid, with `extra` lines under [model].
fn study(dir: &Path, name: &str, extra: &str) -> std::path::PathBuf {
    write_file(dir, "points.csv", POINTS);
    write_file(
        dir,
        &format!("{name}.toml"),
        &format!(
            "[study]\nname = \"{name}\"\n[model]\ngrid = 4\nlikelihood = \"poisson\"\n{extra}\n\
             [data]\nsource = \"points\"\npath = \"points.csv\"\n\
             [sampler]\nkind = \"pcn\"\niterations = 40\nchains = 1\n"
        ),
    )
}

#[test]
fn inside_fraction_is_each_cells_exact_share_of_a_region_with_a_hole_and_a_diagonal_edge() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "region.csv", REGION);
    let with_region = study(dir.path(), "region", "region = \"region.csv\"");
    let out = dir.path().join("out");
    run_ok(&with_region, &out, 1);

    let fields = table(&out, "fields");
    let cells: Vec<i64> = ints(&fields, "cell").into_iter().flatten().collect();
    assert_eq!(cells, (0..16).collect::<Vec<i64>>());
    let expected = shares_by_hand();
    let found: Vec<f64> = floats(&fields, "inside_fraction")
        .into_iter()
        .map(|v| v.expect("inside_fraction is never null"))
        .collect();
    for (cell, (got, want)) in found.iter().zip(&expected).enumerate() {
        assert!(
            (got - want).abs() < 1e-12,
            "cell {cell}: inside_fraction {got}, by hand {want}"
        );
    }
    // The likelihood sees each cell's area inside the region: its log offset is log(cell area
    // = 1) + log(share).
    let offsets: Vec<Option<f64>> = floats(&fields, "offset");
    for (cell, (offset, want)) in offsets.iter().zip(&expected).enumerate() {
        let offset = offset.expect("every cell reaches into the region");
        assert!(
            (offset - want.ln()).abs() < 1e-12,
            "cell {cell}: offset {offset}, log share {}",
            want.ln()
        );
    }
    // The window is the region's bounding box [0, 4]^2: cell centres at 0.5, 1.5, 2.5, 3.5.
    let x: Vec<f64> = floats(&fields, "x").into_iter().flatten().collect();
    assert_eq!(&x[..4], [0.5, 1.5, 2.5, 3.5]);
    let jobs = table(&out, "jobs");
    assert_eq!(strings(&jobs, "model_region"), [Some("region.csv".into())]);
    assert_eq!(strings(&jobs, "error"), [None]);
    // The outline the maps draw: both rings, in the file's order, numbered from 1.
    let region = table(&out, "region");
    let rings: Vec<i64> = ints(&region, "ring").into_iter().flatten().collect();
    assert_eq!(rings, [1, 1, 1, 1, 1, 2, 2, 2, 2]);
    let vertices: Vec<i64> = ints(&region, "vertex").into_iter().flatten().collect();
    assert_eq!(vertices, [1, 2, 3, 4, 5, 1, 2, 3, 4]);
    let y: Vec<f64> = floats(&region, "y").into_iter().flatten().collect();
    assert_eq!(y, [0.0, 0.0, 2.5, 4.0, 4.0, 0.5, 1.75, 1.75, 0.5]);
}

#[test]
fn without_a_region_every_cell_is_wholly_inside() {
    let dir = tempfile::tempdir().unwrap();
    let plain = study(dir.path(), "plain", "window = [[0, 4], [0, 4]]");
    let out = dir.path().join("out");
    run_ok(&plain, &out, 1);
    let fields = table(&out, "fields");
    let fractions = floats(&fields, "inside_fraction");
    assert_eq!(fractions.len(), 16);
    assert!(fractions.iter().all(|f| *f == Some(1.0)), "{fractions:?}");
    assert_eq!(strings(&table(&out, "jobs"), "model_region"), [None]);
    assert!(
        support::read_table(&out, "region").is_none(),
        "no region, no outline"
    );
}

#[test]
fn a_points_study_on_the_chorley_region_passes_check() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let dir = tempfile::tempdir().unwrap();
    for name in ["chorley_region.csv", "chorley_points.csv"] {
        std::fs::copy(data.join(name), dir.path().join(name)).unwrap();
    }
    // No model.window: the region's bounding box; every case lies in the region.
    let study = write_file(
        dir.path(),
        "chorley.toml",
        "[model]\ngrid = 32\nregion = \"chorley_region.csv\"\nlikelihood = \"poisson\"\n\
         [data]\nsource = \"points\"\npath = \"chorley_points.csv\"\n",
    );
    let output = fieldmc().arg("check").arg(&study).output().unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
}

/// The shipped region study (`studies/lgcp/region.toml`: Chorley-Ribble larynx cases against
/// the lung cases as exposure, default sampler) converges with no warning; the cells wholly
/// outside the region are out of the likelihood (no observation, no offset, no expected count)
/// and every cell reaching into it is observed with the log of its exposure and inside area;
/// marks.parquet holds the old incinerator (`output.marks`) and the report draws the job's
/// field maps, whose caption names it.
#[test]
fn the_shipped_region_study_converges_fits_only_cells_inside_and_marks_the_incinerator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    support::run_without_warnings(&root.join("studies/lgcp/region.toml"), &out, 2);
    let jobs = table(&out, "jobs");
    let rhat = floats(&jobs, "cell_rhat_max")[0].expect("four chains give an R-hat");
    assert!(rhat <= 1.01, "cell R-hat {rhat}");
    let fields = table(&out, "fields");
    let inside = floats(&fields, "inside_fraction");
    let observed: Vec<Option<bool>> = fields
        .column("observed")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    let offset = floats(&fields, "offset");
    let expected = floats(&fields, "expected_count");
    let mut reaching = 0;
    for c in 0..inside.len() {
        let share = inside[c].unwrap();
        if share > 0.0 {
            reaching += 1;
            assert_eq!(observed[c], Some(true), "cell {c}");
            assert!(offset[c].is_some_and(f64::is_finite), "cell {c}");
        } else {
            assert_eq!(observed[c], Some(false), "cell {c}");
            assert_eq!(offset[c], None, "cell {c}");
            assert_eq!(expected[c], Some(0.0), "cell {c}");
        }
    }
    assert!(
        reaching > 0 && reaching < inside.len(),
        "{reaching} cells reach in"
    );

    let marks = table(&out, "marks");
    let job_id = strings(&jobs, "job_id")[0].clone().expect("a job id");
    assert_eq!(strings(&marks, "job_id"), [Some(job_id.clone())]);
    assert_eq!(ints(&marks, "mark"), [Some(1)]);
    assert_eq!(strings(&marks, "label"), [Some("old incinerator".into())]);
    assert_eq!(floats(&marks, "x"), [Some(354.5)]);
    assert_eq!(floats(&marks, "y"), [Some(413.6)]);
    // The run wrote no report (--no-report): `fieldmc report` draws it from the tables.
    let report = fieldmc().arg("report").arg(&out).output().unwrap();
    assert!(report.status.success(), "{}", text(&report.stderr));
    let figure = out.join("report").join(format!("fields-{job_id}.png"));
    assert!(figure.is_file(), "no field maps at {}", figure.display());
    let page = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(
        page.contains("the marked points (output.marks): old incinerator (354.5, 413.6)"),
        "the caption does not name the mark"
    );
}
