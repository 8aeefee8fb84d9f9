//! The simulation-based calibration figure: for each SBC job (ranks.parquet), one PNG with a
//! panel per ranked functional (the probe cells and the field's mean) showing the histogram of
//! the truth's ranks, the count expected if the ranks are uniform, a grey band holding 99% of a
//! bin's counts under uniformity, and the uniformity p-value (chi-square and ECDF) from
//! jobs.parquet.
//!
//! Bins are those of the p-value itself ([`histogram_bins`] and [`rank_histogram`]), so the
//! picture and the test agree. Only replications ranked among the job's full L draws are counted
//! (as for the p-value): ranks over fewer draws live on another scale.

use std::collections::HashSet;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::diagnostics::calibration::{histogram_bins, rank_histogram, rank_uniformity_p_value};
use crate::families::latent_field::keys::MODEL_GRID;
use crate::families::latent_field::schema::jobs::{SBC_DRAWS, SBC_P, SBC_REPLICATIONS};
use crate::families::latent_field::schema::ranks::{self, DRAWS, FUNCTIONAL, RANK};
use crate::families::latent_field::schema::traces::PROBE;
use crate::figures::chart::{Axis, Frame, Titles, panel_figure, plot};
use crate::figures::colour::series_colour;
use crate::figures::tables::Table;
use crate::figures::text::{Area, DrawResult, INK, Label};
use crate::figures::{Context, Figure, FigureKind, ReportError, file_safe};
use crate::sampler::driver::{PROBES, probe_cells};

/// SBC jobs drawn at most; the rest are listed in a note.
pub const MAX_JOBS: usize = 12;
/// Two-sided 99% quantile of the standard normal.
const Z_99: f64 = 2.576;
/// p-values below this are flagged (the level the SBC tests use).
const ALARM_P: f64 = 0.001;
const PANEL_COLUMNS: usize = 3;
const PANEL_SIZE: (u32, u32) = (390, 310);
const TITLE_HEIGHT: u32 = 56;
const PANEL_FRAME: Frame = Frame::LINES.margins(12, 58, 12).labels(46, 58);
const BAND: RGBColor = RGBColor(205, 205, 205);
const BAND_EDGE: RGBColor = RGBColor(150, 150, 150);
const OUTSIDE: RGBColor = RGBColor(214, 96, 77);

/// The rank histogram of one functional of one job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RankHistogram {
    pub(crate) functional: String,
    /// L: ranks lie in 0..=max_rank.
    pub(crate) max_rank: usize,
    pub(crate) counts: Vec<usize>,
    /// First rank of each bin.
    pub(crate) bin_starts: Vec<usize>,
    /// Ranks per bin (bins need not split 0..=L evenly).
    pub(crate) bin_widths: Vec<usize>,
    /// The p-value of uniformity (chi-square and ECDF combined).
    pub(crate) p_value: Option<f64>,
}

impl RankHistogram {
    /// The histogram of `ranks` (each in 0..=max_rank) in the bins the p-value uses; `None`
    /// without ranks. `p_value` is computed from the ranks when not given.
    pub(crate) fn new(
        functional: &str,
        ranks: &[usize],
        max_rank: usize,
        p_value: Option<f64>,
    ) -> Option<Self> {
        if ranks.is_empty() || ranks.iter().any(|&r| r > max_rank) {
            return None;
        }
        let bins = histogram_bins(ranks.len(), max_rank);
        let every_rank: Vec<usize> = (0..=max_rank).collect();
        let bin_widths = rank_histogram(&every_rank, max_rank, bins);
        let bin_starts = bin_widths
            .iter()
            .scan(0, |start, &width| {
                let first = *start;
                *start += width;
                Some(first)
            })
            .collect();
        Some(RankHistogram {
            functional: functional.to_string(),
            max_rank,
            counts: rank_histogram(ranks, max_rank, bins),
            bin_starts,
            bin_widths,
            p_value: p_value.or_else(|| rank_uniformity_p_value(ranks, max_rank, bins)),
        })
    }

    pub(crate) fn total(&self) -> usize {
        self.counts.iter().sum()
    }

    /// The probability of a uniform rank falling in `bin`.
    fn bin_probability(&self, bin: usize) -> f64 {
        self.bin_widths[bin] as f64 / (self.max_rank + 1) as f64
    }

    /// The count of `bin` expected under uniformity.
    pub(crate) fn expected(&self, bin: usize) -> f64 {
        self.total() as f64 * self.bin_probability(bin)
    }

    /// The interval holding about 99% of `bin`'s count under uniformity (normal approximation
    /// to the binomial, clipped at zero).
    pub(crate) fn band(&self, bin: usize) -> (f64, f64) {
        let p = self.bin_probability(bin);
        let sd = (self.total() as f64 * p * (1.0 - p)).sqrt();
        let expected = self.expected(bin);
        ((expected - Z_99 * sd).max(0.0), expected + Z_99 * sd)
    }

    /// Bins whose count lies outside the 99% band.
    pub(crate) fn bins_outside_band(&self) -> Vec<usize> {
        (0..self.counts.len())
            .filter(|&bin| {
                let (lo, hi) = self.band(bin);
                let count = self.counts[bin] as f64;
                count < lo || count > hi
            })
            .collect()
    }
}

/// One job's figure content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobRanks {
    pub(crate) job_id: String,
    /// The job's title ([`Context::describe`]).
    pub(crate) description: String,
    pub(crate) replications: usize,
    /// Grid side D, to name the probe cells.
    pub(crate) grid: Option<usize>,
    pub(crate) histograms: Vec<RankHistogram>,
}

/// One PNG per SBC job (at most [`MAX_JOBS`]) when `results_dir` has ranks.parquet.
pub(crate) fn rank_figures(
    context: &Context,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(ids_in_table) = context.job_ids(&ranks::TABLE)? else {
        return Ok(Vec::new());
    };
    let job_ids = jobs_to_draw(context.jobs, &ids_in_table);
    if job_ids.len() < ids_in_table.len() {
        notes.push(format!(
            "ranks.parquet: drawing rank histograms of the first {} of {} SBC jobs",
            job_ids.len(),
            ids_in_table.len()
        ));
    }
    let keep: HashSet<String> = job_ids.iter().cloned().collect();
    let Some(ranks) = context.read(&ranks::TABLE, Some(&keep), notes)? else {
        return Ok(Vec::new());
    };
    let drawn: Vec<JobRanks> = job_ids
        .iter()
        .filter_map(|id| job_ranks(context, &ranks, id))
        .collect();
    let mut figures = Vec::with_capacity(drawn.len());
    for (k, job) in drawn.iter().enumerate() {
        let file = format!("ranks_{}.png", file_safe(&job.job_id));
        draw(&context.path(&file), job)?;
        figures.push(Figure {
            file,
            title: format!("SBC rank histograms: {}", job.description),
            caption: if k == 0 {
                first_caption(job)
            } else {
                later_caption(job)
            },
            kind: FigureKind::Calibration,
        });
    }
    Ok(figures)
}

/// The SBC jobs to draw: those with ranks, in jobs.parquet (plan) order, then any only in
/// ranks.parquet, capped at [`MAX_JOBS`].
pub(crate) fn jobs_to_draw(jobs: &Table, ids_in_ranks: &[String]) -> Vec<String> {
    let present: HashSet<&str> = ids_in_ranks.iter().map(String::as_str).collect();
    let mut ordered: Vec<String> = jobs
        .job_ids()
        .into_iter()
        .filter(|id| present.contains(id.as_str()))
        .collect();
    let listed: HashSet<String> = ordered.iter().cloned().collect();
    ordered.extend(
        ids_in_ranks
            .iter()
            .filter(|id| !listed.contains(*id))
            .cloned(),
    );
    ordered.truncate(MAX_JOBS);
    ordered
}

/// The histograms of one job, or `None` when it has no usable ranks.
pub(crate) fn job_ranks(context: &Context, ranks: &Table, job_id: &str) -> Option<JobRanks> {
    let rows = ranks.rows_of_job(job_id);
    let job_row = context.job_row(job_id);
    let draws = job_row
        .and_then(|row| context.jobs.finite(SBC_DRAWS, row))
        .or_else(|| {
            rows.iter()
                .filter_map(|&r| ranks.finite(DRAWS, r))
                .reduce(f64::max)
        })
        .filter(|&l| l >= 0.0)? as usize;
    let mut functionals: Vec<&str> = Vec::new();
    for &row in &rows {
        if let Some(name) = ranks.str_at(FUNCTIONAL, row)
            && !functionals.contains(&name)
        {
            functionals.push(name);
        }
    }
    let histograms: Vec<RankHistogram> = functionals
        .iter()
        .filter_map(|&name| {
            let values: Vec<usize> = rows
                .iter()
                .filter(|&&r| ranks.str_at(FUNCTIONAL, r) == Some(name))
                .filter(|&&r| ranks.finite(DRAWS, r) == Some(draws as f64))
                .filter_map(|&r| ranks.finite(RANK, r))
                .filter(|&rank| rank >= 0.0 && rank <= draws as f64)
                .map(|rank| rank as usize)
                .collect();
            let p = job_row.and_then(|row| context.jobs.finite(SBC_P.member(name), row));
            RankHistogram::new(name, &values, draws, p)
        })
        .collect();
    if histograms.is_empty() {
        return None;
    }
    let replications = job_row
        .and_then(|row| context.jobs.finite(SBC_REPLICATIONS, row))
        .map_or_else(
            || {
                histograms
                    .iter()
                    .map(RankHistogram::total)
                    .max()
                    .unwrap_or(0)
            },
            |n| n as usize,
        );
    Some(JobRanks {
        job_id: job_id.to_string(),
        description: context.describe(job_id),
        replications,
        grid: job_row
            .and_then(|row| context.jobs.finite(MODEL_GRID, row))
            .filter(|&d| d >= 1.0)
            .map(|d| d as usize),
        histograms,
    })
}

fn first_caption(job: &JobRanks) -> String {
    let first = &job.histograms[0];
    format!(
        "Simulation-based calibration checks a sampler without a closed form: each of the {} \
         replications drew a truth from the prior, simulated data from it, ran the sampler and \
         recorded the rank of the true value among L = {} thinned posterior draws, and for a \
         correct sampler these ranks are uniform on 0..L. One panel per functional (probe_0 to \
         probe_4 are cells on the grid's diagonal, named in each panel, and on a small grid two \
         of them can be the same cell; field_mean is the mean over the grid): bars \
         count the ranks in {} bins, the dark line is the count expected under uniformity, the \
         grey band holds 99% of a calibrated sampler's bin counts (so about one bar in a hundred \
         falls outside by chance; bars outside are drawn in red), and p is the test of uniformity \
         (chi-square and ECDF combined; red below {ALARM_P}). Read the shape: flat = calibrated; U shape (the truth \
         often beyond all draws) = posterior too narrow; hump in the middle = posterior too \
         wide; slope = biased (rising: draws too low, falling: draws too high). {}",
        job.replications,
        first.max_rank,
        first.counts.len(),
        verdict(job)
    )
}

fn later_caption(job: &JobRanks) -> String {
    format!(
        "Read as the first figure of this section. Job {}: {} replications, L = {} draws. {}",
        job.job_id,
        job.replications,
        job.histograms[0].max_rank,
        verdict(job)
    )
}

/// One sentence on the smallest p-value of the job.
fn verdict(job: &JobRanks) -> String {
    let smallest = job
        .histograms
        .iter()
        .filter_map(|h| h.p_value.map(|p| (p, &h.functional)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match smallest {
        Some((p, name)) if p < ALARM_P => format!(
            "Not calibrated: {name} has p = {} < {ALARM_P}.",
            format_p(Some(p))
        ),
        Some((p, name)) => format!(
            "No functional rejects uniformity at {ALARM_P} (smallest p = {}, {name}).",
            format_p(Some(p))
        ),
        None => "No p-value is available (too few replications).".into(),
    }
}

fn format_p(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => format!("{p:.1e}"),
        Some(p) => format!("{p:.3}"),
        None => "–".into(),
    }
}

fn draw(path: &Path, job: &JobRanks) -> Result<(), ReportError> {
    let title = format!(
        "SBC ranks · {} · {} replications, L = {}",
        job.description, job.replications, job.histograms[0].max_rank
    );
    let layout = (PANEL_SIZE, job.histograms.len(), PANEL_COLUMNS);
    panel_figure(
        path,
        (&title, TITLE_HEIGHT),
        (0, &[]),
        layout,
        |root, area, k| {
            let histogram = &job.histograms[k];
            draw_panel(
                root,
                area,
                histogram,
                &panel_title(&histogram.functional, job.grid),
            )
        },
    )
}

/// The functional's name, with the cell (row, column) a probe sits on when the grid is known.
pub(crate) fn panel_title(functional: &str, grid: Option<usize>) -> String {
    let probe = PROBE
        .member_of(functional)
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|&k| k < PROBES);
    match (probe, grid) {
        (Some(k), Some(side)) => {
            let cell = probe_cells(crate::model::Grid::new(side))[k];
            format!("{functional} · cell ({}, {})", cell / side, cell % side)
        }
        _ => functional.to_string(),
    }
}

fn draw_panel(root: &Area, area: &Area, histogram: &RankHistogram, title: &str) -> DrawResult {
    let bins = histogram.counts.len();
    let top = (0..bins)
        .map(|b| histogram.band(b).1.max(histogram.counts[b] as f64))
        .fold(1.0, f64::max);
    let x_axis = Axis::linear(0.0, (histogram.max_rank + 1) as f64);
    let y_axis = Axis::linear(0.0, top * 1.12);
    let titles = Titles {
        title: "",
        x: "rank of the truth",
        y: "replications per bin",
    };
    let (mut chart, plot_box) = plot(root, area, (&x_axis, &y_axis), PANEL_FRAME, titles)?;
    let span = |b: usize| {
        let start = histogram.bin_starts[b] as f64;
        (start, start + histogram.bin_widths[b] as f64)
    };
    chart.draw_series((0..bins).map(|b| {
        let ((x0, x1), (lo, hi)) = (span(b), histogram.band(b));
        Rectangle::new([(x0, lo), (x1, hi)], BAND.mix(0.8).filled())
    }))?;
    let outside: HashSet<usize> = histogram.bins_outside_band().into_iter().collect();
    let bar = series_colour(0);
    chart.draw_series((0..bins).map(|b| {
        let (x0, x1) = span(b);
        let gap = 0.06 * (x1 - x0);
        let colour = if outside.contains(&b) { OUTSIDE } else { bar };
        Rectangle::new(
            [(x0 + gap, 0.0), (x1 - gap, histogram.counts[b] as f64)],
            colour.mix(0.85).filled(),
        )
    }))?;
    chart.draw_series((0..bins).flat_map(|b| {
        let ((x0, x1), (lo, hi)) = (span(b), histogram.band(b));
        [lo, hi].map(|y| PathElement::new(vec![(x0, y), (x1, y)], BAND_EDGE.stroke_width(1)))
    }))?;
    chart.draw_series((0..bins).map(|b| {
        let (x0, x1) = span(b);
        let expected = histogram.expected(b);
        PathElement::new(vec![(x0, expected), (x1, expected)], INK.stroke_width(2))
    }))?;
    let centre_x = plot_box.centre_x();
    let top_y = plot_box.y.start;
    Label::new(17.0)
        .bold()
        .anchor(HPos::Center, VPos::Bottom)
        .draw(root, title, (centre_x, top_y - 26))?;
    let alarm = histogram.p_value.is_some_and(|p| p < ALARM_P);
    Label::new(14.0)
        .colour(if alarm { OUTSIDE } else { INK })
        .anchor(HPos::Center, VPos::Bottom)
        .draw(
            root,
            &format!("p = {}", format_p(histogram.p_value)),
            (centre_x, top_y - 8),
        )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{self as build, nums, table, text};
    use crate::figures::shape::StudyShape;

    #[test]
    fn uniform_ranks_sit_inside_the_band_and_piled_ranks_do_not() {
        // 0..=49 twice over: exactly the expected count in each of the 10 bins.
        let ranks: Vec<usize> = (0..100).map(|k| k % 50).collect();
        let flat = RankHistogram::new("probe_0", &ranks, 49, None).expect("ranks");
        assert_eq!(flat.counts.len(), 10);
        assert_eq!(flat.total(), 100);
        assert!(flat.bins_outside_band().is_empty());
        assert!((flat.p_value.expect("p") - 1.0).abs() < 1e-9);
        for b in 0..10 {
            assert!((flat.expected(b) - 10.0).abs() < 1e-12);
            let (lo, hi) = flat.band(b);
            assert!(lo < 10.0 && 10.0 < hi && lo > 0.0);
        }
        // A U shape: the truth beyond every draw half the time.
        let u: Vec<usize> = (0..100).map(|k| if k % 2 == 0 { 0 } else { 49 }).collect();
        let narrow = RankHistogram::new("probe_0", &u, 49, None).expect("ranks");
        assert_eq!(narrow.bins_outside_band().len(), 10);
        assert!(narrow.p_value.expect("p") < 1e-10);
    }

    #[test]
    fn uneven_bins_cover_every_rank_once() {
        let ranks: Vec<usize> = (0..40).map(|k| k % 11).collect();
        let h = RankHistogram::new("field_mean", &ranks, 10, Some(0.5)).expect("ranks");
        assert_eq!(h.counts.len(), 8);
        assert_eq!(h.bin_widths.iter().sum::<usize>(), 11);
        assert_eq!(h.bin_starts[0], 0);
        for b in 1..h.counts.len() {
            assert_eq!(h.bin_starts[b], h.bin_starts[b - 1] + h.bin_widths[b - 1]);
        }
        let expected: f64 = (0..h.counts.len()).map(|b| h.expected(b)).sum();
        assert!((expected - 40.0).abs() < 1e-9);
        assert_eq!(h.p_value, Some(0.5), "the given p-value is kept");
    }

    #[test]
    fn out_of_range_or_missing_ranks_give_no_histogram() {
        assert_eq!(RankHistogram::new("probe_0", &[], 49, None), None);
        assert_eq!(RankHistogram::new("probe_0", &[3, 50], 49, None), None);
    }

    fn jobs_table() -> Table {
        table(vec![
            ("job_id", text(&["b", "a", "c"])),
            ("status", text(&["ok", "ok", "ok"])),
            ("model_likelihood", text(&["gaussian", "probit", "probit"])),
            ("sampler_kind", text(&["grw", "pcn", "pcn"])),
            ("model_grid", nums(&[4.0, 4.0, 4.0])),
            ("sbc_draws", nums(&[9.0, 9.0, 9.0])),
            ("sbc_replications", nums(&[20.0, 20.0, 20.0])),
            ("sbc_p_probe_0", nums(&[0.25, 0.5, 0.75])),
        ])
    }

    #[test]
    fn jobs_follow_plan_order_and_are_capped() {
        let jobs = jobs_table();
        let in_ranks: Vec<String> = ["a", "x", "b"].map(String::from).to_vec();
        assert_eq!(jobs_to_draw(&jobs, &in_ranks), ["b", "a", "x"]);
        let many: Vec<String> = (0..30).map(|k| format!("j{k}")).collect();
        assert_eq!(jobs_to_draw(&Table::default(), &many).len(), MAX_JOBS);
    }

    #[test]
    fn job_ranks_use_only_full_draw_replications_and_the_jobs_table() {
        let jobs = jobs_table();
        let shape = StudyShape::of(&jobs, &build::parameter_prefix, build::naming());
        let dir = tempfile::tempdir().expect("tempdir");
        let context = Context {
            jobs: &jobs,
            shape: &shape,
            report_dir: dir.path(),
            source: &build::NoTables,
        };
        // 20 replications ranked among 9 draws, 3 more among only 5, one damaged row.
        let mut ids = vec!["a"; 24];
        let mut functional = vec!["probe_0"; 24];
        let mut rank: Vec<f64> = (0..20).map(|k| f64::from(k % 10)).collect();
        let mut draws = vec![9.0; 20];
        rank.extend([0.0, 0.0, 0.0, -1.0]);
        draws.extend([5.0, 5.0, 5.0, 9.0]);
        ids.push("other");
        functional.push("probe_0");
        rank.push(1.0);
        draws.push(9.0);
        let ranks = table(vec![
            ("job_id", text(&ids)),
            ("functional", text(&functional)),
            ("rank", nums(&rank)),
            ("draws", nums(&draws)),
        ]);
        let job = job_ranks(&context, &ranks, "a").expect("ranks of a");
        assert_eq!(job.description, "probit · pcn · D=4");
        assert_eq!(job.replications, 20);
        let h = &job.histograms[0];
        assert_eq!((h.total(), h.max_rank, h.counts.len()), (20, 9, 4));
        assert_eq!(h.p_value, Some(0.5));
        assert_eq!(job_ranks(&context, &ranks, "missing"), None);
    }

    #[test]
    fn probe_panels_name_their_cell() {
        assert_eq!(panel_title("probe_0", Some(4)), "probe_0 · cell (0, 0)");
        assert_eq!(panel_title("probe_4", Some(8)), "probe_4 · cell (7, 7)");
        assert_eq!(panel_title("probe_4", None), "probe_4");
        assert_eq!(panel_title("probe_9", Some(4)), "probe_9");
        assert_eq!(panel_title("field_mean", Some(4)), "field_mean");
    }

    #[test]
    fn verdict_names_the_failing_functional() {
        let ranks: Vec<usize> = (0..100).map(|k| k % 50).collect();
        let good = RankHistogram::new("probe_1", &ranks, 49, Some(0.3)).expect("ranks");
        let bad = RankHistogram::new("field_mean", &ranks, 49, Some(1e-6)).expect("ranks");
        let job = JobRanks {
            job_id: "j".into(),
            description: "d".into(),
            replications: 100,
            grid: None,
            histograms: vec![good, bad],
        };
        let sentence = verdict(&job);
        assert!(sentence.starts_with("Not calibrated") && sentence.contains("field_mean"));
    }
}
