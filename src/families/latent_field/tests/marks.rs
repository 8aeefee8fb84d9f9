//! `output.marks` and `output.mark_labels`: the named points the maps mark, resolved in order
//! with their labels, and refused where they cannot be drawn.

use super::*;

/// A simulated study on a 4 x 4 grid over [0, 10]^2 with `output` under [output].
fn study(output: &str) -> String {
    format!("[model]\ngrid = 4\nwindow = [[0, 10], [0, 10]]\n[output]\n{output}\n")
}

/// The marks of the one job of `text`: (label, x, y).
fn marks_of(text: &str) -> Vec<(String, f64, f64)> {
    let (_, spec) = job_of(&parse_ok(text));
    spec.output
        .marks
        .iter()
        .map(|m| (m.label.clone(), m.x, m.y))
        .collect()
}

#[test]
fn marks_resolve_in_order_with_their_labels_or_numbered_ones() {
    assert_eq!(
        marks_of(&study(
            "marks = [[1, 2.5], [10, 0]]\nmark_labels = [\"old incinerator\", \"corner\"]"
        )),
        [
            ("old incinerator".to_string(), 1.0, 2.5),
            // The window's edges belong to it.
            ("corner".to_string(), 10.0, 0.0),
        ]
    );
    assert_eq!(
        marks_of(&study("marks = [[1, 2], [3, 4]]")),
        [
            ("mark 1".to_string(), 1.0, 2.0),
            ("mark 2".to_string(), 3.0, 4.0)
        ]
    );
    assert_eq!(
        marks_of(&study("mark_labels = \"a\"\nmarks = [[5, 5]]")),
        [("a".to_string(), 5.0, 5.0)]
    );
    assert!(marks_of(&study("marks = []")).is_empty());
    assert!(marks_of(&study("marks = []\nmark_labels = []")).is_empty());
    assert!(marks_of(&study("")).is_empty());
}

#[test]
fn marks_change_no_job_id() {
    let id = |output: &str| {
        crate::plan::plan(&parse_ok(&study(output))).jobs[0]
            .header
            .id
            .clone()
    };
    let plain = id("");
    assert_eq!(id("marks = [[1, 2]]\nmark_labels = [\"a\"]"), plain);
    assert_eq!(id("marks = [[9, 9]]"), plain);
}

#[test]
fn marks_that_cannot_be_drawn_are_refused_at_their_key_with_the_allowed_form() {
    let two_numbers = "allowed: rows of two finite numbers [x, y] in the units of model.window";
    let one_per_mark = "allowed: one label per mark of output.marks, in its order";
    let cases: [(String, &str, &str); 8] = [
        (
            study("marks = [[1, 2, 3]]"),
            "studies/t.toml:5:9: output.marks: mark 1 is [1.0, 2.0, 3.0], not two finite numbers [x, y]",
            two_numbers,
        ),
        (
            study("marks = [[1, 2], [5]]"),
            "studies/t.toml:5:9: output.marks: mark 2 is [5.0], not two finite numbers [x, y]",
            two_numbers,
        ),
        (
            study("marks = [[]]"),
            "studies/t.toml:5:9: output.marks: mark 1 is [], not two finite numbers [x, y]",
            two_numbers,
        ),
        (
            study("marks = [[1, inf]]"),
            "studies/t.toml:5:14: `output.marks`: not a finite number",
            "allowed: finite numbers",
        ),
        (
            study("marks = [[1, 2], [10.5, 3]]\nmark_labels = [\"a\", \"b\"]"),
            "studies/t.toml:5:9: output.marks: mark 2 (\"b\") at (10.5, 3.0) is outside the \
             grid's window [[0.0, 10.0], [0.0, 10.0]]",
            "allowed: points inside the window [[0.0, 10.0], [0.0, 10.0]] (edges included)",
        ),
        (
            study("marks = [[1, 2]]\nmark_labels = [\"a\", \"b\"]"),
            "studies/t.toml:6:15: output.mark_labels gives 2 labels for 1 mark of output.marks",
            one_per_mark,
        ),
        (
            study("mark_labels = [\"a\"]"),
            "studies/t.toml:5:15: output.mark_labels gives 1 label for 0 marks of output.marks",
            one_per_mark,
        ),
        (
            "[model]\ngrid = [4]\nwindow = [[0, 10]]\n[output]\nmarks = [[1, 2]]\n".to_string(),
            "studies/t.toml:5:9: output.marks marks points of the plane, but the grid is 4-cell 1-D",
            "allowed: a 2-D grid: D or [Dx, Dy]",
        ),
    ];
    for (text, headline, allowed) in cases {
        let error = parse_err(&text).to_string();
        assert!(
            error.starts_with(headline),
            "{error}\nshould start with {headline:?}"
        );
        assert!(error.contains(allowed), "{error}\nshould say {allowed:?}");
    }
}
