//! The latent field's model choice on the report page (`output.log_likelihood`): a table of its
//! jobs' PSIS-LOO (`elpd_loo`, its standard error, `p_loo`, and how many observations of those
//! in the likelihood have a Pareto k above 0.7) and, for each representative job, a map of every
//! observation's Pareto k, on a scale centred on 0.7, beside its loo_i: the fitted cells
//! coloured on the grid of the field maps, or the fitted sites as dots at their positions.

use std::collections::{HashMap, HashSet};

use super::fields::{Panel, draw_field_figure, grid_of};
use super::overlays::{OverlayTables, Overlays};
use crate::diagnostics::loo::BAD_PARETO_K;
use crate::families::latent_field::schema::{fields, jobs, loo, region, sites};
use crate::figures::colour::{ColourMap, Scale};
use crate::figures::tables::{Table, format_number};
use crate::figures::{Context, Figure, FigureKind, PageColumn, PageTable, ReportError, file_safe};
use crate::table::shared::JOB_ID;

/// The table of every job with `elpd_loo`, in plan order; `None` when no job has one.
pub(crate) fn loo_table(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Option<PageTable>, ReportError> {
    let jobs_table = context.jobs_table();
    let rows: Vec<usize> = (0..jobs_table.height)
        .filter(|&row| jobs_table.finite(jobs::ELPD_LOO, row).is_some())
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let observations = context
        .read(&loo::TABLE, None, notes)?
        .map(|terms| observation_counts(&terms))
        .unwrap_or_default();
    let number = |column, row| {
        jobs_table
            .finite(column, row)
            .map_or_else(|| "–".to_string(), format_number)
    };
    let table_rows = rows
        .iter()
        .map(|&row| {
            let id = jobs_table.str_at(JOB_ID, row).unwrap_or("?");
            let bad = jobs_table
                .finite(jobs::PARETO_K_BAD, row)
                .map_or_else(|| "–".to_string(), format_number);
            let of = observations
                .get(id)
                .map_or_else(|| "–".to_string(), usize::to_string);
            vec![
                id.to_string(),
                context.describe(id),
                number(jobs::ELPD_LOO, row),
                number(jobs::ELPD_LOO_SE, row),
                number(jobs::P_LOO, row),
                format!("{bad} / {of}"),
            ]
        })
        .collect();
    let column = |header: &str, tooltip: &str, text: bool| PageColumn {
        header: header.to_string(),
        tooltip: tooltip.to_string(),
        text,
    };
    let bad_header = format!("Pareto k > {BAD_PARETO_K}");
    let bad_tooltip = format!(
        "{} of the observations in loo.parquet",
        jobs::PARETO_K_BAD.name()
    );
    Ok(Some(PageTable {
        title: "PSIS-LOO of each job".into(),
        caption: format!(
            "Each job with output.log_likelihood and Markov chains (jobs.parquet's {}, {}, {} \
             and {}; loo.parquet holds every observation's terms): elpd_loo estimates how well \
             the fitted model predicts each observation left out of the fit, summed over the \
             observations in the likelihood, on ArviZ's log scale (higher is better); p_loo is \
             the effective number of parameters. Between two jobs of the same data, their \
             difference and its standard error (which pairs the observations, and is usually \
             much smaller than either se) are what `fieldmc compare RESULTS --loo` prints. The \
             last column counts the observations whose Pareto k is above {BAD_PARETO_K} (or \
             could not be fitted) of those in the likelihood: there elpd_loo is unreliable (the \
             Pareto k maps show where). Jobs without LOO (laplace, inla, SBC, a pointwise value \
             not finite) are not listed.",
            jobs::ELPD_LOO.name(),
            jobs::ELPD_LOO_SE.name(),
            jobs::P_LOO.name(),
            jobs::PARETO_K_BAD.name()
        ),
        kind: FigureKind::ModelChoice,
        columns: vec![
            column("job", JOB_ID.name(), true),
            column(
                "model",
                "the job's likelihood, sampler, grid and swept keys",
                true,
            ),
            column("elpd_loo", jobs::ELPD_LOO.name(), false),
            column("se", jobs::ELPD_LOO_SE.name(), false),
            column("p_loo", jobs::P_LOO.name(), false),
            column(&bad_header, &bad_tooltip, false),
        ],
        rows: table_rows,
    }))
}

/// The number of rows of each job in loo.parquet: its observations.
fn observation_counts(terms: &Table) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for id in terms.text(JOB_ID).unwrap_or(&[]).iter().flatten() {
        *counts.entry(id.clone()).or_insert(0) += 1;
    }
    counts
}

/// One Pareto k map per representative job with rows in loo.parquet (and its grid in
/// fields.parquet).
pub(crate) fn pareto_k_figures(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let job_ids = context.representative_job_ids(&loo::TABLE, notes)?;
    if job_ids.is_empty() {
        return Ok(Vec::new());
    }
    let chosen: HashSet<String> = job_ids.iter().cloned().collect();
    let (Some(terms), Some(cells)) = (
        context.read(&loo::TABLE, Some(&chosen), notes)?,
        context.read(&fields::TABLE, Some(&chosen), notes)?,
    ) else {
        return Ok(Vec::new());
    };
    let site_table = context.read(&sites::TABLE, Some(&chosen), notes)?;
    let region_table = context.read(&region::TABLE, Some(&chosen), notes)?;
    let mut figures = Vec::new();
    for id in &job_ids {
        let k = Terms::of(&terms, id);
        let rows = cells.rows_of_job(id);
        let Some(mut grid) = grid_of(&cells, &rows) else {
            continue;
        };
        if k.at_cells.is_empty() && k.at_sites.is_empty() {
            continue;
        }
        let overlays = OverlayTables {
            region: region_table.as_ref(),
            ..OverlayTables::default()
        };
        grid.overlays = Overlays::of_job(overlays, id);
        let scale = k_scale(k.all().map(|(k, _)| k));
        let elpd_scale = Scale::spanning(
            &k.all().map(|(_, elpd)| Some(elpd)).collect::<Vec<_>>(),
            ColourMap::Viridis,
        );
        // A k that could not be fitted is drawn as the largest on the scale.
        let shown = |(k, elpd): (f64, f64)| (if k.is_finite() { k } else { scale.hi }, elpd);
        let at_cells: Vec<Option<(f64, f64)>> = rows
            .iter()
            .map(|&row| {
                let cell = cells.finite(fields::CELL, row)? as i64;
                Some(shown(*k.at_cells.get(&cell)?))
            })
            .collect();
        let at_sites: Vec<(f64, f64, (f64, f64))> = site_table
            .as_ref()
            .map(|site_table| {
                site_table
                    .rows_of_job(id)
                    .into_iter()
                    .filter(|&row| site_table.str_at(sites::SET, row) == Some(sites::FITTED))
                    .filter_map(|row| {
                        let place = site_table.finite(sites::ROW, row)? as i64;
                        let terms = *k.at_sites.get(&place)?;
                        let x = site_table.finite(sites::X, row)?;
                        Some((x, site_table.finite(sites::Y, row)?, shown(terms)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let panel = |(title, bar): (&str, &str), scale: Scale, pick: fn((f64, f64)) -> f64| {
            let values = at_cells.iter().map(|v| v.map(pick)).collect();
            let mut panel = Panel::of_cells(title, values, false, scale, bar);
            panel.points = at_sites
                .iter()
                .map(|&(x, y, terms)| (x, y, Some(pick(terms))))
                .collect();
            panel
        };
        let mut k_panel = panel(("Pareto k", "Pareto k"), scale, |(k, _)| k);
        k_panel.mark = Some(BAD_PARETO_K);
        let titles = ("elpd_loo of each observation", "loo_i");
        let elpd_panel = panel(titles, elpd_scale, |(_, elpd)| elpd);
        let description = context.describe(id);
        let file = format!("pareto-k-{}.png", file_safe(id));
        let panels = [k_panel, elpd_panel];
        draw_field_figure(&context.path(&file), &description, &grid, &panels)?;
        figures.push(Figure {
            file,
            title: format!("Pareto k map: {description}"),
            caption: caption(id, &k, &grid.overlays.caption()),
            kind: FigureKind::ModelChoice,
        });
    }
    Ok(figures)
}

/// The Pareto k and loo_i of one job's observations by place; k infinite where the tail could
/// not be fitted (null in loo.parquet, ArviZ's inf).
struct Terms {
    at_cells: HashMap<i64, (f64, f64)>,
    at_sites: HashMap<i64, (f64, f64)>,
}

impl Terms {
    fn of(terms: &Table, id: &str) -> Terms {
        let mut found = Terms {
            at_cells: HashMap::new(),
            at_sites: HashMap::new(),
        };
        for row in terms.rows_of_job(id) {
            let k = terms.finite(loo::PARETO_K, row).unwrap_or(f64::INFINITY);
            let Some(elpd) = terms.finite(loo::ELPD_LOO, row) else {
                continue;
            };
            if let Some(cell) = terms.finite(loo::CELL, row) {
                found.at_cells.insert(cell as i64, (k, elpd));
            } else if let Some(site) = terms.finite(loo::SITE_ROW, row) {
                found.at_sites.insert(site as i64, (k, elpd));
            }
        }
        found
    }

    /// Every observation's (k, loo_i).
    fn all(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.at_cells
            .values()
            .chain(self.at_sites.values())
            .copied()
    }

    fn bad(&self) -> usize {
        self.all().filter(|&(k, _)| k > BAD_PARETO_K).count()
    }
}

/// A blue-white-red scale centred on 0.7 wide enough for every finite k, and at least [0, 1.4].
fn k_scale(values: impl Iterator<Item = f64>) -> Scale {
    let half = values
        .filter(|k| k.is_finite())
        .map(|k| (k - BAD_PARETO_K).abs())
        .fold(BAD_PARETO_K, f64::max);
    Scale::fixed(
        BAD_PARETO_K - half,
        BAD_PARETO_K + half,
        ColourMap::Diverging,
    )
}

fn caption(id: &str, k: &Terms, overlays: &str) -> String {
    let (observations, places) = if k.at_sites.is_empty() {
        (
            k.at_cells.len(),
            "each fitted cell coloured by its k (left) and its loo_i (right); grey cells are not \
             in the likelihood (held out, or without an observation)",
        )
    } else {
        (
            k.at_sites.len(),
            "each fitted site a dot ringed in black at its position, coloured by its k (left) and \
             its loo_i (right; the grey cells are the grid's)",
        )
    };
    format!(
        "Job {id}: the Pareto k of each observation's importance ratios in PSIS-LOO \
         (loo.parquet's pareto_k), {places}. The scale is centred on k = {BAD_PARETO_K} (white; \
         the black line across the colour bar): blue below, where leaving the observation out \
         is estimated reliably, red above, where its elpd_loo is unreliable ({} of {observations} \
         here); a k that could not be fitted (ArviZ's inf) is drawn darkest red. Many red cells \
         in a count model mean each cell's u is mostly its own count's: score held-out cells \
         instead (data.holdout). ArviZ's own warning starts at min(1 - 1 / log10 S, 0.7) for S \
         draws in all. loo_i, log p(y_i | y_-i) (loo.parquet's elpd_loo), is low where the model \
         predicts the observation left out poorly; the job's elpd_loo is their sum. {overlays}",
        k.bad()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::fixtures::{nums, table, text};

    const NULL: f64 = f64::NAN;

    #[test]
    fn the_terms_of_cells_and_sites_are_read_by_place_with_a_null_k_infinite() {
        let terms = table(vec![
            ("job_id", text(&["a", "a", "a", "b"])),
            ("cell", nums(&[3.0, 5.0, NULL, 1.0])),
            ("site_row", nums(&[NULL, NULL, 2.0, NULL])),
            ("pareto_k", nums(&[0.2, NULL, 0.9, 0.1])),
            ("elpd_loo", nums(&[-1.0, -2.0, -3.0, -4.0])),
        ]);
        let k = Terms::of(&terms, "a");
        assert_eq!(k.at_cells.get(&3), Some(&(0.2, -1.0)));
        assert_eq!(k.at_cells.get(&5), Some(&(f64::INFINITY, -2.0)));
        assert_eq!(k.at_sites.get(&2), Some(&(0.9, -3.0)));
        assert_eq!(k.bad(), 2, "the infinite k and 0.9");
        assert_eq!(observation_counts(&terms).get("a"), Some(&3));
    }

    #[test]
    fn the_k_scale_is_centred_on_the_threshold() {
        let scale = k_scale([0.1, 0.5, f64::INFINITY].into_iter());
        assert_eq!((scale.lo, scale.hi), (0.0, 2.0 * BAD_PARETO_K));
        let wide = k_scale([-0.5, 1.0].into_iter());
        assert!((wide.lo + 0.5).abs() < 1e-12 && (wide.hi - 1.9).abs() < 1e-12);
    }
}
