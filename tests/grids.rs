//! Grids and windows through the study file: `model.grid` as D, [Dx, Dy] or [D], `model.window`,
//! the window of a csv grid from its cell centres, `model.offset = "log-area"`, and the kernels
//! by name.

use std::path::{Path, PathBuf};

use fieldmc::families::FamilySpec;
use fieldmc::families::latent_field::LatentFieldSpec;
use fieldmc::model::grid::{Grid, Window};
use fieldmc::model::spec::KernelKind;
use fieldmc::plan::{Study, parse};
use fieldmc::study::ParamValue;

/// The latent-field settings of a point known to be one.
fn latent(spec: &FamilySpec) -> &LatentFieldSpec {
    match spec {
        FamilySpec::LatentField(spec) => spec,
        other => panic!("a {} point", other.family()),
    }
}

/// A study file in `studies/`, so `../data/...` finds the shipped data.
fn origin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("studies/t.toml")
}

fn load(text: &str) -> Study {
    parse(text, &origin()).unwrap_or_else(|e| panic!("study should load:\n{e}"))
}

fn error(text: &str) -> String {
    match parse(text, &origin()) {
        Ok(_) => panic!("study should not load:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn param(study: &Study, column: &str) -> ParamValue {
    study.points[0]
        .params
        .iter()
        .find(|(key, _)| key.column() == column)
        .map(|(_, value)| value.clone())
        .unwrap()
}

#[test]
fn grids_are_square_rectangular_or_one_dimensional() {
    let square = load("[model]\ngrid = 8\n");
    assert_eq!(latent(&square.points[0].spec).model.grid, Grid::new(8));
    assert_eq!(param(&square, "model_grid"), ParamValue::Int(8));
    let rectangle = load("[model]\ngrid = [9, 5]\n");
    assert_eq!(
        latent(&rectangle.points[0].spec).model.grid,
        Grid::rectangular(9, 5)
    );
    assert_eq!(param(&rectangle, "model_grid"), ParamValue::text("[9, 5]"));
    let line = load("[model]\ngrid = [811]\nkernel = \"matern32\"\n");
    assert_eq!(latent(&line.points[0].spec).model.grid, Grid::line(811));
    assert_eq!(
        latent(&line.points[0].spec).model.kernel.kind,
        KernelKind::Matern32
    );
    let swept = load("[sweep]\n\"model.grid\" = [[8, 4], [16, 8]]\n");
    let grids: Vec<Grid> = swept
        .points
        .iter()
        .map(|p| latent(&p.spec).model.grid)
        .collect();
    assert_eq!(grids, [Grid::rectangular(8, 4), Grid::rectangular(16, 8)]);
}

#[test]
fn bad_grids_say_what_is_allowed() {
    for (text, expected) in [
        (
            "[model]\ngrid = [0, 4]\n",
            "`model.grid` = 0 is out of range",
        ),
        (
            "[model]\ngrid = [4, 4, 4]\n",
            "`model.grid` = [4, 4, 4] has 3 sizes",
        ),
        (
            "[model]\ngrid = \"big\"\n",
            "D (a D x D grid), [Dx, Dy] (rectangular) or [D] (1-D)",
        ),
        (
            "[sweep]\n\"model.grid\" = [8, [16, 8]]\n",
            "mixed types in the sweep of `model.grid`",
        ),
        (
            "[model]\nkernel = \"matern\"\n",
            "unknown value \"matern\" for `model.kernel`",
        ),
    ] {
        let message = error(text);
        assert!(message.contains(expected), "{text}: {message}");
    }
}

#[test]
fn a_window_sets_the_units_of_the_length_scale() {
    let study = load("[model]\ngrid = [16, 8]\nwindow = [[0, 2], [0, 1]]\n");
    let grid = latent(&study.points[0].spec).model.grid;
    assert_eq!(grid.spacing(), (0.125, 0.125));
    assert_eq!(grid.position(0), (0.0625, 0.0625));
    assert_eq!(
        param(&study, "model_window"),
        ParamValue::text("[[0.0, 2.0], [0.0, 1.0]]")
    );
    let line = load("[model]\ngrid = [811]\nwindow = [[0, 40550]]\n");
    assert_eq!(latent(&line.points[0].spec).model.grid.cell_area(), 50.0);
    for (text, expected) in [
        (
            "[model]\ngrid = [811]\nwindow = [[0, 1], [0, 1]]\n",
            "[[x0, x1]] for a 1-D grid",
        ),
        (
            "[model]\ngrid = 8\nwindow = [[0, 1]]\n",
            "[[x0, x1], [y0, y1]] for a 2-D grid",
        ),
        (
            "[model]\nwindow = [[1, 0], [0, 1]]\n",
            "the x range must be finite with start < end",
        ),
        ("[model]\nwindow = [0, 1]\n", "needs [start, end] pairs"),
    ] {
        let message = error(text);
        assert!(message.contains(expected), "{text}: {message}");
    }
}

#[test]
fn log_area_offsets_resolve_to_the_log_cell_area() {
    let study = load(
        "[model]\ngrid = 64\nwindow = [[0, 1], [0, 1]]\nlikelihood = \"poisson\"\noffset = \"log-area\"\n",
    );
    let expected = (1.0f64 / 4096.0).ln();
    assert!((latent(&study.points[0].spec).model.offset - expected).abs() < 1e-12);
    assert_eq!(
        param(&study, "model_offset"),
        ParamValue::Float(latent(&study.points[0].spec).model.offset)
    );
    let message = error("[model]\nlikelihood = \"poisson\"\noffset = \"log-areas\"\n");
    assert!(message.contains("did you mean \"log-area\""), "{message}");
}

const FINPINES: &str = "[model]\ngrid = 64\nlikelihood = \"poisson\"\n[data]\nsource = \"csv\"\npath = \"../data/finpines_grid64.csv\"\n";

/// The data's window comes from its cell centres (metres); `model.window` rescales it when it
/// keeps its shape, and is refused when it would stretch it.
#[test]
fn csv_grids_bring_their_window() {
    let metres = load(FINPINES);
    let grid = latent(&metres.points[0].spec).model.grid;
    let expected = Grid::over_window(
        64,
        64,
        Window {
            x: (-5.0, 5.0),
            y: (-8.0, 2.0),
        },
    );
    assert!((grid.spacing().0 - 10.0 / 64.0).abs() < 1e-12);
    let ((x, y), (ex, ey)) = (grid.position(0), expected.position(0));
    assert!((x - ex).abs() < 1e-9 && (y - ey).abs() < 1e-9);
    let unit = load(&FINPINES.replace("grid = 64\n", "grid = 64\nwindow = [[0, 1], [0, 1]]\n"));
    assert_eq!(
        latent(&unit.points[0].spec).model.grid.cell_area(),
        1.0 / 4096.0
    );
    let stretched =
        error(&FINPINES.replace("grid = 64\n", "grid = 64\nwindow = [[0, 2], [0, 1]]\n"));
    assert!(
        stretched.contains("must keep its shape")
            && stretched.contains("[[-5.0, 5.0], [-8.0, 2.0]]"),
        "{stretched}"
    );
}
