//! How a plan is shown: an aligned text table for people (`fieldmc plan STUDY`) and CSV with
//! every parameter for programs (`fieldmc plan STUDY --format csv`).
//!
//! Both are written row by row from a [`Listing`]: the parameters of each sweep point, rendered
//! once per point, and the jobs one at a time, each by its id, replicate and point. So a
//! study's table streams without its jobs being built ([`super::listing`]), and a built
//! [`Plan`] prints the same way.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{ParamValue, Plan};
use crate::families::Family;
use crate::study::Key;
use crate::study::keys::{MODEL_LIKELIHOOD, SAMPLER_KIND};

/// The jobs of a plan as the printed forms see them.
pub struct Listing<'a, J> {
    /// Each point's parameters (every key, in [`Key::all`] order) and family.
    pub points: Vec<(&'a [(Key, ParamValue)], Family)>,
    /// How many replicates a point has at most (for the replicate column's width).
    pub replicates: u32,
    /// The jobs, in plan order.
    pub jobs: J,
}

/// One job of a [`Listing`]: its id, its replicate, and the index of its point.
pub struct Listed<I> {
    pub id: I,
    pub replicate: u32,
    pub point: usize,
}

impl<I: AsRef<str>, J: Iterator<Item = Listed<I>>> Listing<'_, J> {
    /// One line per job: id, replicate, the `swept` parameters, and the likelihood and sampler
    /// kind (latent-field jobs, when not swept already), in aligned columns under a header.
    pub fn write_text(self, swept: &[Key], out: &mut impl Write) -> io::Result<()> {
        let mut columns = swept.to_vec();
        for always in [MODEL_LIKELIHOOD, SAMPLER_KIND] {
            if self.applies(always) && !columns.contains(&always) {
                columns.push(always);
            }
        }
        let cells: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|(params, _)| {
                columns
                    .iter()
                    .map(|key| params.get(key.index()).map_or_else(String::new, shown))
                    .collect()
            })
            .collect();
        let header: Vec<String> = columns.iter().map(|k| k.column().to_string()).collect();
        let widths: Vec<usize> = (0..columns.len())
            .map(|c| {
                let width = |row: &Vec<String>| row[c].chars().count();
                cells.iter().chain([&header]).map(width).max().unwrap_or(0)
            })
            .collect();
        let id_width = if self.points.is_empty() { 2 } else { 12 };
        let lead = [
            id_width,
            decimal_width(self.replicates.saturating_sub(1)).max(9),
        ];
        let tails: Vec<String> = cells.iter().map(|row| aligned(row, &widths)).collect();
        let mut line = String::new();
        let mut write_line = |cells: [&str; 2], tail: &str| {
            line.clear();
            let [a, b] = cells;
            write!(line, "{a:<w0$}  {b:<w1$}{tail}", w0 = lead[0], w1 = lead[1])
                .expect("writing to a String cannot fail");
            out.write_all(line.trim_end().as_bytes())?;
            out.write_all(b"\n")
        };
        write_line(["id", "replicate"], &aligned(&header, &widths))?;
        let mut replicate = String::new();
        for job in self.jobs {
            replicate.clear();
            write!(replicate, "{}", job.replicate).expect("writing to a String cannot fail");
            write_line([job.id.as_ref(), &replicate], &tails[job.point])?;
        }
        Ok(())
    }

    /// Every job with every parameter of its family: `job_id,replicate,model_family,...`, one
    /// line per job, empty fields for `Null`.
    pub fn write_csv(self, out: &mut impl Write) -> io::Result<()> {
        let keys: Vec<Key> = Key::all().filter(|key| self.applies(*key)).collect();
        let mut header = String::from("job_id,replicate");
        for key in &keys {
            header.push(',');
            header.push_str(key.column());
        }
        writeln!(out, "{header}")?;
        let tails: Vec<String> = self
            .points
            .iter()
            .map(|(params, _)| {
                keys.iter()
                    .map(|key| format!(",{}", csv_field(&params[key.index()].1.to_string())))
                    .collect()
            })
            .collect();
        for job in self.jobs {
            let (id, replicate) = (job.id.as_ref(), job.replicate);
            writeln!(out, "{id},{replicate}{}", tails[job.point])?;
        }
        Ok(())
    }

    /// Whether `key` applies to some point's family.
    fn applies(&self, key: Key) -> bool {
        self.points
            .iter()
            .any(|(_, family)| key.applies_to(*family))
    }
}

impl Plan {
    /// The plan's jobs as a [`Listing`], each job its own point.
    fn listing(&self) -> Listing<'_, impl Iterator<Item = Listed<&str>>> {
        Listing {
            points: self
                .jobs
                .iter()
                .map(|job| (job.params.as_slice(), job.spec.family()))
                .collect(),
            replicates: self.jobs.iter().map(|j| j.replicate + 1).max().unwrap_or(0),
            jobs: self.jobs.iter().enumerate().map(|(point, job)| Listed {
                id: job.id.as_str(),
                replicate: job.replicate,
                point,
            }),
        }
    }

    /// The text table of [`Listing::write_text`], the swept keys those of `study`.
    pub fn to_text_table(&self, study: &crate::study::Study) -> String {
        in_memory(|out| self.listing().write_text(&study.swept_keys(), out))
    }

    /// The CSV of [`Listing::write_csv`].
    pub fn to_csv(&self) -> String {
        in_memory(|out| self.listing().write_csv(out))
    }
}

/// What `write` writes, as a string.
fn in_memory(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the tables are UTF-8")
}

fn shown(param: &(Key, ParamValue)) -> String {
    match &param.1 {
        ParamValue::Null => "-".to_string(),
        other => other.to_string(),
    }
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
