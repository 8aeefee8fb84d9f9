//! One latent-field job as ArviZ's InferenceData ([`crate::inference_data`]), built from its
//! result tables alone, so a results folder exports the same on any machine:
//!
//! - `posterior`: `u` (chain, draw, cell) from `draws.parquet`, value for value; each inferred
//!   hyperparameter by name (`length_scale`, ...) from `hyper_draws.parquet` and each
//!   coefficient as `coef_<covariate>` from `coefficients.parquet`, their stored draws put in
//!   order of iteration; the cells' `x` and `y` as coordinates;
//! - `log_likelihood`: `y` (chain, draw, observation) from `log_likelihood.parquet`, with each
//!   observation's `cell` or `site_row` as a coordinate (`loo.parquet`), when the job kept it;
//! - `observed_data`: `y` (observation), the datum of each observation in the likelihood, and
//!   `trials` for binomial data;
//! - `sample_stats`: per chain (`chains.parquet`): `acceptance_rate`, `step_size` and
//!   `divergences` where the kind has them (fieldmc keeps no per-draw sampler statistics).
//!
//! ArviZ's `az.loo` computes its relative efficiency from every posterior variable, so the
//! posterior must hold exactly the draws the job's own LOO used: the export refuses a job whose
//! `draws.parquet` holds fewer draws per chain than its log-likelihood (`output.field_draws`
//! below `output.cell_draws`) and says what to set.

use std::collections::{BTreeMap, HashSet};

use polars::prelude::{BooleanChunked, DataFrame, NewChunkedArray};

use super::schema::{
    chains, coefficients, draws, fields, hyper, hyper_draws, log_likelihood, loo, sites,
};
use crate::figures::TableSource;
use crate::inference_data::{ExportError, Group, Values, Variable};
use crate::table::Table;
use crate::table::shared::{ACCEPTANCE_RATE, CHAIN, ITERATION, STEP_SIZE};

/// The InferenceData groups of job `job`.
pub(crate) fn inference_data(
    source: &dyn TableSource,
    job: &str,
) -> Result<Vec<Group>, ExportError> {
    let read = |table: &Table| read_job(source, table, job);
    let draws_frame = read(&draws::TABLE)?.ok_or_else(|| {
        tables_error(format!(
            "job {job} has no draws in draws.parquet: run it with output.field_draws > 0 \
             (ArviZ's posterior is the stored field draws)"
        ))
    })?;
    let posterior = Posterior::of(&draws_frame)?;
    drop(draws_frame);
    let mut posterior_group = posterior.group(read(&fields::TABLE)?.as_ref())?;
    for (table, prefix) in [(&hyper_draws::TABLE, ""), (&coefficients::TABLE, "coef_")] {
        if let Some(frame) = read(table)? {
            for variable in scalar_draws(&frame, prefix, (posterior.chains, posterior.draws))? {
                posterior_group = posterior_group.with(variable);
            }
        }
    }
    let mut groups = vec![posterior_group];
    if let Some(terms) = read(&loo::TABLE)? {
        let frame = read(&log_likelihood::TABLE)?.ok_or_else(|| {
            tables_error(format!(
                "job {job} has loo.parquet rows but no log_likelihood.parquet"
            ))
        })?;
        groups.extend(likelihood_groups(source, job, &terms, &frame, &posterior)?);
    }
    if let Some(frame) = read(&chains::TABLE)? {
        groups.push(sample_stats(&frame)?);
    }
    Ok(groups)
}

fn tables_error(message: String) -> ExportError {
    ExportError::Tables(message)
}

fn polars_error(error: polars::prelude::PolarsError) -> ExportError {
    ExportError::Tables(error.to_string())
}

/// The rows of `table` for `job`; `None` when the folder has no such table or no such rows.
fn read_job(
    source: &dyn TableSource,
    table: &Table,
    job: &str,
) -> Result<Option<DataFrame>, ExportError> {
    let jobs = HashSet::from([job.to_string()]);
    let frame = source
        .read(table, Some(&jobs))
        .map_err(|e| tables_error(format!("{}.parquet: {e}", table.name)))?;
    Ok(frame.filter(|f| f.height() > 0))
}

fn ints(frame: &DataFrame, name: &str) -> Result<Vec<i64>, ExportError> {
    let column = frame
        .column(name)
        .and_then(|c| c.i64().cloned())
        .map_err(polars_error)?;
    column
        .iter()
        .map(|v| v.ok_or_else(|| tables_error(format!("a null in `{name}`"))))
        .collect()
}

/// A float column, nulls as NaN (the tables write NaN as null).
fn floats(frame: &DataFrame, name: &str) -> Result<Vec<f64>, ExportError> {
    let column = frame
        .column(name)
        .and_then(|c| c.f64().cloned())
        .map_err(polars_error)?;
    Ok(column.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

fn texts(frame: &DataFrame, name: &str) -> Result<Vec<String>, ExportError> {
    let column = frame
        .column(name)
        .and_then(|c| c.str().cloned())
        .map_err(polars_error)?;
    Ok(column
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect())
}

/// Count along a 0-based index column: its largest value plus one.
fn extent(index: &[i64]) -> usize {
    index.iter().max().map_or(0, |&m| m as usize + 1)
}

/// The stored field draws, (chain, draw, cell) in C order.
struct Posterior {
    chains: usize,
    draws: usize,
    cells: usize,
    u: Vec<f64>,
}

impl Posterior {
    fn of(frame: &DataFrame) -> Result<Self, ExportError> {
        let chain = ints(frame, CHAIN.name())?;
        let draw = ints(frame, draws::DRAW.name())?;
        let cell = ints(frame, fields::CELL.name())?;
        let (chains, per_chain, cells) = (extent(&chain), extent(&draw), extent(&cell));
        let value = frame
            .column(draws::VALUE.name())
            .and_then(|c| c.f64().cloned())
            .map_err(polars_error)?;
        let mut u = vec![f64::NAN; chains * per_chain * cells];
        let mut filled = 0usize;
        for (k, v) in value.iter().enumerate() {
            let at = (chain[k] as usize * per_chain + draw[k] as usize) * cells + cell[k] as usize;
            u[at] = v.unwrap_or(f64::NAN);
            filled += 1;
        }
        if filled != u.len() {
            return Err(tables_error(format!(
                "draws.parquet holds {filled} values, not every cell of every draw of every \
                 chain ({chains} x {per_chain} x {cells})"
            )));
        }
        Ok(Self {
            chains,
            draws: per_chain,
            cells,
            u,
        })
    }

    /// The posterior group with `u`, its coordinates and the cells' x and y (from `fields`).
    fn group(&self, fields: Option<&DataFrame>) -> Result<Group, ExportError> {
        let (c, d, n) = (self.chains, self.draws, self.cells);
        let mut group = Group::new("posterior")
            .with(Variable::index("chain", c))
            .with(Variable::index("draw", d))
            .with(Variable::index("cell", n))
            .with(Variable::new(
                "u",
                &[("chain", c), ("draw", d), ("cell", n)],
                Values::F64(self.u.clone()),
            ));
        if let Some(fields) = fields {
            let cell = ints(fields, fields::CELL.name())?;
            for (name, column) in [("x", fields::X.name()), ("y", fields::Y.name())] {
                let mut at = vec![f64::NAN; n];
                for (k, v) in floats(fields, column)?.into_iter().enumerate() {
                    if let Some(slot) = at.get_mut(cell[k] as usize) {
                        *slot = v;
                    }
                }
                group = group.with_coordinate(Variable::new(name, &[("cell", n)], Values::F64(at)));
            }
        }
        Ok(group)
    }
}

/// One (chain, draw) variable per name of a long table of scalars at the stored draws (chain,
/// iteration, name, value): within a chain its draws in order of iteration.
fn scalar_draws(
    frame: &DataFrame,
    prefix: &str,
    (chains, per_chain): (usize, usize),
) -> Result<Vec<Variable>, ExportError> {
    let chain = ints(frame, CHAIN.name())?;
    let iteration = ints(frame, ITERATION.name())?;
    let name = texts(frame, hyper::NAME.name())?;
    let value = floats(frame, hyper::VALUE.name())?;
    let mut by_name: BTreeMap<&str, Vec<Vec<(i64, f64)>>> = BTreeMap::new();
    for k in 0..chain.len() {
        let series = by_name
            .entry(name[k].as_str())
            .or_insert_with(|| vec![Vec::new(); chains]);
        let slot = series.get_mut(chain[k] as usize).ok_or_else(|| {
            tables_error(format!(
                "chain {} beyond the {chains} chains of draws.parquet",
                chain[k]
            ))
        })?;
        slot.push((iteration[k], value[k]));
    }
    let mut variables = Vec::new();
    for (name, mut series) in by_name {
        let mut values = Vec::with_capacity(chains * per_chain);
        for chain_series in &mut series {
            if chain_series.len() != per_chain {
                return Err(draw_count_error(name, chain_series.len(), per_chain));
            }
            chain_series.sort_by_key(|p| p.0);
            values.extend(chain_series.iter().map(|p| p.1));
        }
        variables.push(Variable::new(
            format!("{prefix}{name}"),
            &[("chain", chains), ("draw", per_chain)],
            Values::F64(values),
        ));
    }
    Ok(variables)
}

fn draw_count_error(what: &str, got: usize, per_chain: usize) -> ExportError {
    tables_error(format!(
        "`{what}` has {got} stored draws per chain and draws.parquet {per_chain}: the posterior \
         needs every stored draw; rerun with output.field_draws = output.cell_draws (the stored \
         draws per chain)"
    ))
}

/// `log_likelihood` and `observed_data`, the observations named by `loo.parquet`.
fn likelihood_groups(
    source: &dyn TableSource,
    job: &str,
    terms: &DataFrame,
    frame: &DataFrame,
    posterior: &Posterior,
) -> Result<[Group; 2], ExportError> {
    let observation = ints(terms, loo::OBSERVATION.name())?;
    let m = extent(&observation);
    let (c, d) = (posterior.chains, posterior.draws);
    let chain = ints(frame, CHAIN.name())?;
    let draw = ints(frame, draws::DRAW.name())?;
    let obs = ints(frame, loo::OBSERVATION.name())?;
    let per_chain = extent(&draw);
    if per_chain != d || extent(&chain) != c {
        return Err(draw_count_error("log_likelihood", per_chain, d));
    }
    let mut values = vec![f64::NAN; c * d * m];
    for (k, v) in floats(frame, log_likelihood::VALUE.name())?
        .into_iter()
        .enumerate()
    {
        values[(chain[k] as usize * d + draw[k] as usize) * m + obs[k] as usize] = v;
    }
    let dims = [("chain", c), ("draw", d), ("observation", m)];
    let place = observation_place(terms, &observation)?;
    let mut log_likelihood = Group::new("log_likelihood")
        .with(Variable::index("chain", c))
        .with(Variable::index("draw", d))
        .with(Variable::index("observation", m))
        .with(Variable::new("y", &dims, Values::F64(values)));
    let mut observed = Group::new("observed_data").with(Variable::index("observation", m));
    let (y, trials) = observed_values(source, job, &place, m)?;
    let place_variable = Variable::new(
        place.kind.column(),
        &[("observation", m)],
        Values::I64(place.index.clone()),
    );
    log_likelihood = log_likelihood.with_coordinate(place_variable.clone());
    observed = observed.with_coordinate(place_variable).with(Variable::new(
        "y",
        &[("observation", m)],
        Values::F64(y),
    ));
    if let Some(trials) = trials {
        observed = observed.with(Variable::new(
            "trials",
            &[("observation", m)],
            Values::F64(trials),
        ));
    }
    Ok([log_likelihood, observed])
}

/// What names an observation: a fitted cell, or a fitted site by its row.
#[derive(Clone, Copy, PartialEq)]
enum PlaceKind {
    Cell,
    SiteRow,
}

impl PlaceKind {
    /// Its `loo.parquet` column, and the coordinate's name in the export.
    fn column(self) -> &'static str {
        match self {
            PlaceKind::Cell => loo::CELL.name(),
            PlaceKind::SiteRow => loo::SITE_ROW.name(),
        }
    }
}

/// Where each observation is: a cell's index, or a site's row (from 1).
struct Place {
    kind: PlaceKind,
    index: Vec<i64>,
}

/// The place of each of `observation`'s observations (`loo.parquet`'s rows, in their order).
fn observation_place(terms: &DataFrame, observation: &[i64]) -> Result<Place, ExportError> {
    let sites = terms
        .column(loo::SITE_ROW.name())
        .map_err(polars_error)?
        .null_count()
        < terms.height();
    let kind = if sites {
        PlaceKind::SiteRow
    } else {
        PlaceKind::Cell
    };
    let values = ints(terms, kind.column())?;
    let mut index = vec![-1; extent(observation)];
    for (k, &i) in observation.iter().enumerate() {
        index[i as usize] = values[k];
    }
    Ok(Place { kind, index })
}

/// The datum (and binomial trials) of every observation: a cell's from `fields.parquet`, a
/// fitted site's from `sites.parquet`.
fn observed_values(
    source: &dyn TableSource,
    job: &str,
    place: &Place,
    m: usize,
) -> Result<(Vec<f64>, Option<Vec<f64>>), ExportError> {
    let (table, key, value, trials): (&Table, &str, &str, &str) = if place.kind == PlaceKind::Cell {
        (
            &fields::TABLE,
            fields::CELL.name(),
            fields::OBSERVATION.name(),
            fields::TRIALS.name(),
        )
    } else {
        (
            &sites::TABLE,
            sites::ROW.name(),
            sites::VALUE.name(),
            sites::TRIALS.name(),
        )
    };
    let frame = read_job(source, table, job)?
        .ok_or_else(|| tables_error(format!("job {job} has no rows in {}.parquet", table.name)))?;
    let frame = if place.kind == PlaceKind::Cell {
        frame
    } else {
        let fitted: Vec<bool> = texts(&frame, sites::SET.name())?
            .iter()
            .map(|s| s == sites::FITTED)
            .collect();
        frame
            .filter(&BooleanChunked::from_slice(sites::FITTED.into(), &fitted))
            .map_err(polars_error)?
    };
    let keys = ints(&frame, key)?;
    let row_of: BTreeMap<i64, usize> = keys.iter().enumerate().map(|(r, &k)| (k, r)).collect();
    let pick = |column: Vec<f64>| -> Result<Vec<f64>, ExportError> {
        place
            .index
            .iter()
            .map(|k| {
                row_of.get(k).map(|&r| column[r]).ok_or_else(|| {
                    tables_error(format!(
                        "observation at {} {k} not in {}.parquet",
                        place.kind.column(),
                        table.name
                    ))
                })
            })
            .collect()
    };
    let y = pick(floats(&frame, value)?)?;
    let trials = match frame.column(trials) {
        Ok(_) => Some(pick(floats(&frame, trials)?)?),
        Err(_) => None,
    };
    debug_assert_eq!(y.len(), m);
    Ok((y, trials))
}

/// Per-chain sampler statistics.
fn sample_stats(frame: &DataFrame) -> Result<Group, ExportError> {
    let chain = ints(frame, CHAIN.name())?;
    let c = extent(&chain);
    let mut group = Group::new("sample_stats").with(Variable::index("chain", c));
    let by_chain = |values: Vec<f64>| {
        let mut out = vec![f64::NAN; c];
        for (k, v) in values.into_iter().enumerate() {
            out[chain[k] as usize] = v;
        }
        out
    };
    group = group
        .with(Variable::new(
            "acceptance_rate",
            &[("chain", c)],
            Values::F64(by_chain(floats(frame, ACCEPTANCE_RATE.name())?)),
        ))
        .with(Variable::new(
            "step_size",
            &[("chain", c)],
            Values::F64(by_chain(floats(frame, STEP_SIZE.name())?)),
        ));
    let divergences = frame
        .column(chains::DIVERGENCES.name())
        .and_then(|c| c.i64().cloned())
        .map_err(polars_error)?;
    if divergences.null_count() < divergences.len() {
        let values: Vec<f64> = divergences
            .iter()
            .map(|v| v.map_or(f64::NAN, |v| v as f64))
            .collect();
        group = group.with(Variable::new(
            "divergences",
            &[("chain", c)],
            Values::F64(by_chain(values)),
        ));
    }
    Ok(group)
}
