//! How a plan is shown: an aligned text table for people (`fieldmc plan STUDY`) and CSV with
//! every parameter for programs (`fieldmc plan STUDY --format csv`).
//!
//! Both are written row by row from a [`Listing`]: what its points hold (their families and
//! each column's widest value, which a study knows from validating its points), then the jobs
//! one at a time, each by its id and replicate, its point's cells rendered once per point. So a
//! study's table streams without its jobs being built ([`super::StudyListing`]), and a built
//! [`Plan`] prints the same way.

use std::fmt::Write as _;
use std::io::{self, Write};

use std::collections::HashMap;

use super::{Job, ParamValue, Plan};
use crate::families::{self, Family};
use crate::study::Key;

/// A point's parameters: its family's keys, in their column order.
pub(crate) type Params = [(Key, ParamValue)];

/// The jobs of a plan as the printed forms read them: what the points hold (for the columns
/// and their widths), then the jobs in plan order, grouped by point.
pub(crate) trait Listing {
    /// The points' families, each once, in order of first appearance.
    fn families(&self) -> Vec<Family>;

    /// The width in characters of `key`'s widest shown value ([`ParamValue::shown`]) over the
    /// points.
    fn widest_shown(&self, key: Key) -> usize;

    /// How many replicates a point has at most.
    fn replicates(&self) -> u32;

    /// Calls `visit` with each job, in plan order, until it fails; each job's tail is `tail` of
    /// its point's parameters, rendered once per point (and perhaps on another thread).
    fn jobs(
        &self,
        tail: &(dyn Fn(&Params) -> String + Sync),
        visit: &mut dyn FnMut(Listed<'_>) -> io::Result<()>,
    ) -> io::Result<()>;
}

/// One job of a [`Listing`]: its id and replicate, and what follows them on its line (its
/// point's, shared by the jobs of the point).
pub(crate) struct Listed<'a> {
    pub(crate) id: &'a str,
    pub(crate) replicate: u32,
    pub(crate) tail: &'a str,
}

/// One line per job: id, replicate, the `swept` parameters, and the headline keys of the
/// families (what kind of job it is, e.g. the latent field's likelihood and sampler kind), when
/// not swept already, in aligned columns under a header.
pub(crate) fn write_text(
    listing: &impl Listing,
    swept: &[Key],
    out: &mut impl Write,
) -> io::Result<()> {
    let (columns, widths, any) = text_columns(listing, swept);
    let header: Vec<String> = columns.iter().map(|k| k.column().to_string()).collect();
    let lead = [
        if any { 12 } else { "id".len() },
        decimal_width(listing.replicates().saturating_sub(1)).max("replicate".len()),
    ];
    let mut line = String::new();
    let mut write_line = |out: &mut dyn Write, cells: [&str; 2], tail: &str| {
        line.clear();
        let [a, b] = cells;
        write!(line, "{a:<w0$}  {b:<w1$}{tail}", w0 = lead[0], w1 = lead[1])
            .expect("writing to a String cannot fail");
        out.write_all(line.trim_end().as_bytes())?;
        out.write_all(b"\n")
    };
    write_line(out, ["id", "replicate"], &aligned(&header, &widths))?;
    let mut replicate = String::new();
    let slots = Slots::of(&columns);
    let tail =
        |params: &Params| aligned(&slots.cells(params, || ParamValue::Null.shown()), &widths);
    listing.jobs(&tail, &mut |job| {
        replicate.clear();
        write!(replicate, "{}", job.replicate).expect("writing to a String cannot fail");
        write_line(out, [job.id, &replicate], job.tail)
    })
}

/// The text table's parameter columns and their widths (header included), and whether there
/// are any points: the `swept` keys, then the headline keys of the points' families.
fn text_columns(listing: &impl Listing, swept: &[Key]) -> (Vec<Key>, Vec<usize>, bool) {
    let families = listing.families();
    let mut columns = swept.to_vec();
    for headline in families::headline_keys(&families) {
        if !columns.contains(&headline) {
            columns.push(headline);
        }
    }
    let widths: Vec<usize> = columns
        .iter()
        .map(|key| key.column().chars().count().max(listing.widest_shown(*key)))
        .collect();
    (columns, widths, !families.is_empty())
}

/// Where each of a table's columns goes on a row: a point's parameters are its family's keys, so
/// a row is filled from them, each key that is a column into its place.
struct Slots {
    width: usize,
    of_key: HashMap<Key, usize>,
}

impl Slots {
    fn of(columns: &[Key]) -> Self {
        Slots {
            width: columns.len(),
            of_key: columns
                .iter()
                .enumerate()
                .map(|(i, key)| (*key, i))
                .collect(),
        }
    }

    /// A point's cells, each its value shown by `show`; `empty()` where the point's family has
    /// no such key.
    fn cells(&self, params: &Params, empty: impl Fn() -> String) -> Vec<String> {
        self.cells_shown(params, ParamValue::shown, empty)
    }

    fn cells_shown(
        &self,
        params: &Params,
        show: impl Fn(&ParamValue) -> String,
        empty: impl Fn() -> String,
    ) -> Vec<String> {
        let mut cells: Vec<String> = (0..self.width).map(|_| empty()).collect();
        for (key, value) in params {
            if let Some(&slot) = self.of_key.get(key) {
                cells[slot] = show(value);
            }
        }
        cells
    }
}

/// Every job with every parameter of its family: `job_id,replicate,model_family,...`, one line
/// per job, empty fields for `Null`; the columns are the keys of the study's families, each
/// family's in its column order.
pub(crate) fn write_csv(listing: &impl Listing, out: &mut impl Write) -> io::Result<()> {
    let mut keys: Vec<Key> = Vec::new();
    for key in listing.families().iter().flat_map(|family| family.keys()) {
        if !keys.contains(key) {
            keys.push(*key);
        }
    }
    let mut header = String::from("job_id,replicate");
    for key in &keys {
        header.push(',');
        header.push_str(key.column());
    }
    writeln!(out, "{header}")?;
    let slots = Slots::of(&keys);
    let tail = |params: &Params| {
        slots
            .cells_shown(params, |value| csv_field(&value.to_string()), String::new)
            .iter()
            .map(|cell| format!(",{cell}"))
            .collect()
    };
    listing.jobs(&tail, &mut |job| {
        writeln!(out, "{},{}{}", job.id, job.replicate, job.tail)
    })
}

impl Listing for Plan {
    fn families(&self) -> Vec<Family> {
        let mut families = Vec::new();
        for job in &self.jobs {
            let family = job.spec.family();
            if !families.contains(&family) {
                families.push(family);
            }
        }
        families
    }

    fn widest_shown(&self, key: Key) -> usize {
        let width = |job: &Job| job.header.param(key).shown().chars().count();
        self.jobs.iter().map(width).max().unwrap_or(0)
    }

    fn replicates(&self) -> u32 {
        self.jobs
            .iter()
            .map(|j| j.header.replicate + 1)
            .max()
            .unwrap_or(0)
    }

    /// Each job is its own point.
    fn jobs(
        &self,
        tail: &(dyn Fn(&Params) -> String + Sync),
        visit: &mut dyn FnMut(Listed<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        for job in &self.jobs {
            visit(Listed {
                id: &job.header.id,
                replicate: job.header.replicate,
                tail: &tail(&job.header.params),
            })?;
        }
        Ok(())
    }
}

impl Plan {
    /// The text table of [`write_text`], the swept keys those of `study`.
    pub fn to_text_table(&self, study: &super::Study) -> String {
        in_memory(|out| write_text(self, &study.file.swept_keys(), out))
    }

    /// The CSV of [`write_csv`].
    pub fn to_csv(&self) -> String {
        in_memory(|out| write_csv(self, out))
    }
}

/// What `write` writes, as a string.
fn in_memory(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the tables are UTF-8")
}

/// The cells after the first two of a row: each after two spaces, left-aligned in its width.
fn aligned(cells: &[String], widths: &[usize]) -> String {
    let mut tail = String::new();
    for (cell, width) in cells.iter().zip(widths) {
        write!(tail, "  {cell:<width$}").expect("writing to a String cannot fail");
    }
    tail
}

/// Digits of `n` in decimal.
fn decimal_width(n: u32) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
