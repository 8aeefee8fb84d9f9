//! What the field maps draw over the cells of one job: the study region's outline
//! (region.parquet, `model.region`), the measurement sites (sites.parquet, `data.source =
//! "sites"`: black dots in the fit, open circles held out) and the named points of
//! `output.marks` (marks.parquet), each a white circle ringed in black with its label under it,
//! kept inside the plot. Owns their reading from the tables, their drawing on a panel and their
//! sentences in the caption.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::families::latent_field::schema::{marks, region, sites};
use crate::families::latent_field::spec::Mark;
use crate::figures::chart::{Chart, PlotBox};
use crate::figures::tables::Table;
use crate::figures::text::{Area, DrawResult, Label};

/// The radius of a mark's circle, in pixels.
const MARK_RADIUS: i32 = 5;
/// The radius of a measurement site's dot or circle, in pixels.
const SITE_RADIUS: i32 = 2;
/// The size of a mark's label, in pixels.
const LABEL_SIZE: f32 = 11.0;
/// The gap between a mark's circle and its label, and around the label's backing, in pixels.
const LABEL_GAP: i32 = 3;

/// The outline and the marks of one job; both empty when it has neither.
#[derive(Debug, Default)]
pub(super) struct Overlays {
    /// The study region's rings, each closed (its first vertex repeated at the end).
    pub(super) outline: Vec<Vec<(f64, f64)>>,
    /// The marked points, in the order of `output.marks`.
    pub(super) marks: Vec<Mark>,
    /// The measurement sites (x, y, held out), in the table's order.
    pub(super) sites: Vec<(f64, f64, bool)>,
}

/// The tables the overlays are read from (each may be absent).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OverlayTables<'a> {
    pub(crate) region: Option<&'a Table>,
    pub(crate) marks: Option<&'a Table>,
    pub(crate) sites: Option<&'a Table>,
}

impl Overlays {
    /// The overlays of `job_id` from its tables.
    pub(super) fn of_job(tables: OverlayTables<'_>, job_id: &str) -> Self {
        Overlays {
            outline: tables
                .region
                .map_or_else(Vec::new, |table| outline_of(table, job_id)),
            marks: tables
                .marks
                .map_or_else(Vec::new, |table| marks_of(table, job_id)),
            sites: tables
                .sites
                .map_or_else(Vec::new, |table| sites_of(table, job_id)),
        }
    }

    /// Draws the outline and the marks on a panel's chart (labels on `root`, inside `plot`).
    pub(super) fn draw(&self, root: &Area, chart: &mut Chart, plot: &PlotBox) -> DrawResult {
        chart.draw_series(
            self.outline
                .iter()
                .map(|ring| PathElement::new(ring.clone(), BLACK.stroke_width(1))),
        )?;
        for &(x, y, held_out) in &self.sites {
            let centre = chart.backend_coord(&(x, y));
            if held_out {
                root.draw(&Circle::new(centre, SITE_RADIUS + 1, WHITE.filled()))?;
                root.draw(&Circle::new(centre, SITE_RADIUS + 1, BLACK.stroke_width(1)))?;
            } else {
                root.draw(&Circle::new(centre, SITE_RADIUS, BLACK.filled()))?;
            }
        }
        for mark in &self.marks {
            let centre = chart.backend_coord(&(mark.x, mark.y));
            root.draw(&Circle::new(centre, MARK_RADIUS, WHITE.filled()))?;
            root.draw(&Circle::new(centre, MARK_RADIUS, BLACK.stroke_width(2)))?;
            draw_label(root, plot, centre, &mark.label)?;
        }
        Ok(())
    }

    /// The caption's sentences on the outline and the marks (empty without either).
    pub(super) fn caption(&self) -> String {
        let mut text = String::new();
        if !self.outline.is_empty() {
            text.push_str(
                "The black line is the study region's outline (model.region); light grey cells lie \
                 wholly outside it. ",
            );
        }
        if !self.sites.is_empty() {
            let held = self.sites.iter().filter(|s| s.2).count();
            text.push_str(&format!(
                "Black dots are the {} measurement sites in the fit; white circles ringed in \
                 black the {held} held out (data.holdout). ",
                self.sites.len() - held
            ));
        }
        if !self.marks.is_empty() {
            let points: Vec<String> = self
                .marks
                .iter()
                .map(|m| format!("{} ({}, {})", m.label, m.x, m.y))
                .collect();
            text.push_str(&format!(
                "White circles ringed in black are the marked points (output.marks): {}. ",
                points.join("; ")
            ));
        }
        text
    }
}

/// A mark's label on a white backing centred under its circle at pixel `centre` (over it where
/// there is no room below), shifted sideways to stay inside `plot`.
fn draw_label(root: &Area, plot: &PlotBox, centre: (i32, i32), text: &str) -> DrawResult {
    let label = Label::new(LABEL_SIZE).anchor(HPos::Left, VPos::Center);
    let width = label.width(text).ceil() as i32;
    let height = LABEL_SIZE.ceil() as i32 + 2;
    let beside = MARK_RADIUS + LABEL_GAP + height / 2 + 1;
    let middle = if centre.1 + beside + height / 2 + LABEL_GAP <= plot.y.end {
        centre.1 + beside
    } else {
        centre.1 - beside
    };
    let left_edge = (centre.0 - width / 2)
        .min(plot.x.end - width - LABEL_GAP)
        .max(plot.x.start + LABEL_GAP);
    let backing = [
        (left_edge - LABEL_GAP, middle - height / 2 - 1),
        (left_edge + width + LABEL_GAP, middle + height / 2 + 1),
    ];
    root.draw(&Rectangle::new(backing, WHITE.mix(0.8).filled()))?;
    label.draw(root, text, (left_edge, middle))
}

/// The rings of a job's study region from region.parquet, in ring and vertex order, each
/// closed; empty when the job has none.
fn outline_of(region: &Table, job_id: &str) -> Vec<Vec<(f64, f64)>> {
    let mut rings: Vec<(i64, Vec<(f64, f64)>)> = Vec::new();
    for row in region.rows_of_job(job_id) {
        let (Some(ring), Some(x), Some(y)) = (
            region.finite(region::RING, row),
            region.finite(region::X, row),
            region.finite(region::Y, row),
        ) else {
            continue;
        };
        let ring = ring as i64;
        match rings.last_mut() {
            Some((last, points)) if *last == ring => points.push((x, y)),
            _ => rings.push((ring, vec![(x, y)])),
        }
    }
    rings
        .into_iter()
        .map(|(_, mut points)| {
            points.push(points[0]);
            points
        })
        .collect()
}

/// The marks of a job from marks.parquet, in mark order; a row without a finite position is
/// left out, a missing label is `mark <k>`. Empty when the job has none.
fn marks_of(table: &Table, job_id: &str) -> Vec<Mark> {
    let mut numbered: Vec<(f64, Mark)> = table
        .rows_of_job(job_id)
        .into_iter()
        .filter_map(|row| {
            let k = table.finite(marks::MARK, row)?;
            let (x, y) = (table.finite(marks::X, row)?, table.finite(marks::Y, row)?);
            let label = table
                .str_at(marks::LABEL, row)
                .map_or_else(|| format!("mark {k}"), str::to_string);
            Some((k, Mark { label, x, y }))
        })
        .collect();
    numbered.sort_by(|a, b| a.0.total_cmp(&b.0));
    numbered.into_iter().map(|(_, mark)| mark).collect()
}

/// The measurement sites of a job from sites.parquet, in row order; a row without a finite
/// position is left out. Empty when the job has none.
fn sites_of(table: &Table, job_id: &str) -> Vec<(f64, f64, bool)> {
    table
        .rows_of_job(job_id)
        .into_iter()
        .filter_map(|row| {
            let (x, y) = (table.finite(sites::X, row)?, table.finite(sites::Y, row)?);
            Some((x, y, table.str_at(sites::SET, row) == Some(sites::HELD_OUT)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{nums, table, text};

    #[test]
    fn the_region_rings_are_closed_in_ring_order() {
        let region = table(vec![
            (
                "job_id",
                text(&["a", "a", "a", "a", "a", "a", "b", "b", "b"]),
            ),
            ("ring", nums(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0])),
            ("x", nums(&[0.0, 1.0, 0.0, 5.0, 6.0, 5.0, 9.0, 9.0, 9.0])),
            ("y", nums(&[0.0, 0.0, 1.0, 5.0, 5.0, 6.0, 9.0, 9.0, 9.0])),
        ]);
        let outline = outline_of(&region, "a");
        assert_eq!(
            outline,
            [
                vec![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0)],
                vec![(5.0, 5.0), (6.0, 5.0), (5.0, 6.0), (5.0, 5.0)],
            ]
        );
        assert!(outline_of(&region, "c").is_empty());
    }

    #[test]
    fn a_jobs_marks_are_read_in_mark_order_with_their_labels_and_told_in_the_caption() {
        let table = table(vec![
            ("job_id", text(&["a", "b", "a", "a"])),
            ("mark", nums(&[2.0, 1.0, 1.0, 3.0])),
            (
                "label",
                text(&["school", "elsewhere", "old incinerator", "x"]),
            ),
            ("x", nums(&[350.0, 1.0, 354.5, f64::NAN])),
            ("y", nums(&[420.25, 2.0, 413.6, 415.0])),
        ]);
        let marks_only = OverlayTables {
            marks: Some(&table),
            ..OverlayTables::default()
        };
        let overlays = Overlays::of_job(marks_only, "a");
        let mark = |label: &str, x: f64, y: f64| Mark {
            label: label.to_string(),
            x,
            y,
        };
        // Mark 3 has no finite x: left out.
        assert_eq!(
            overlays.marks,
            [
                mark("old incinerator", 354.5, 413.6),
                mark("school", 350.0, 420.25)
            ]
        );
        assert!(overlays.outline.is_empty());
        assert_eq!(
            overlays.caption(),
            "White circles ringed in black are the marked points (output.marks): old incinerator \
             (354.5, 413.6); school (350, 420.25). "
        );
        assert!(Overlays::of_job(marks_only, "c").marks.is_empty());
        assert_eq!(
            Overlays::of_job(OverlayTables::default(), "a").caption(),
            ""
        );
    }

    #[test]
    fn a_jobs_sites_are_read_in_row_order_held_out_ones_told_apart() {
        let table = table(vec![
            ("job_id", text(&["a", "a", "b", "a"])),
            ("set", text(&["fitted", "held_out", "fitted", "fitted"])),
            ("x", nums(&[1.0, 2.0, 3.0, f64::NAN])),
            ("y", nums(&[0.5, 1.5, 2.5, 3.5])),
        ]);
        let tables = OverlayTables {
            sites: Some(&table),
            ..OverlayTables::default()
        };
        let overlays = Overlays::of_job(tables, "a");
        assert_eq!(overlays.sites, [(1.0, 0.5, false), (2.0, 1.5, true)]);
        assert!(
            overlays
                .caption()
                .contains("the 1 measurement sites in the fit")
        );
        assert!(overlays.caption().contains("the 1 held out"));
    }
}
