//! Event times (a 1-D point process, such as the dates of the coal-mining disasters) binned into
//! a 1-D grid CSV that [`super::grid_csv`] reads: one row per bin with its index `i`, its centre
//! `x_center` (in the times' units) and its `count`, bins j-major as every grid file.
//!
//! `examples/coal_grid.rs` uses it to make `data/coal_grid811.csv` from `data/coal_dates.csv`
//! (see `data/README.md`); a test checks the shipped file is what the conversion gives.

use std::fmt::Write;

/// Equal bins [start + k width, start + (k + 1) width), k = 0 .. bins - 1; a time exactly at
/// the end goes into the last bin (the convention of `data/README.md`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Binning {
    pub(crate) start: f64,
    pub width: f64,
    pub bins: usize,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EventsError {
    #[error("event {index} at {time} lies outside the binned range [{start}, {end}]")]
    Outside {
        index: usize,
        time: f64,
        start: f64,
        end: f64,
    },
    #[error("line {line}: `{text}` is not a number")]
    NotANumber { line: usize, text: String },
    #[error("the header has no column `{0}`")]
    NoColumn(String),
    #[error("the file is empty")]
    Empty,
}

impl Binning {
    /// The end of the last bin.
    pub(crate) fn end(&self) -> f64 {
        self.start + self.width * self.bins as f64
    }

    /// The centre of bin `k`.
    pub(crate) fn centre(&self, k: usize) -> f64 {
        self.start + self.width * (k as f64 + 0.5)
    }

    /// The count of events in each bin.
    pub(crate) fn counts(&self, times: &[f64]) -> Result<Vec<u64>, EventsError> {
        let mut counts = vec![0u64; self.bins];
        for (index, &time) in times.iter().enumerate() {
            let offset = (time - self.start) / self.width;
            if !(offset >= 0.0 && time <= self.end()) {
                return Err(EventsError::Outside {
                    index,
                    time,
                    start: self.start,
                    end: self.end(),
                });
            }
            let k = (offset.floor() as usize).min(self.bins - 1);
            counts[k] += 1;
        }
        Ok(counts)
    }
}

/// The grid CSV of `counts` binned by `binning`: `i,x_center,count`, plus one extra column
/// `extra.0` whose value at a bin is `extra.1(centre)` (e.g. the calendar year of the centre).
pub(crate) fn grid_csv(
    counts: &[u64],
    binning: Binning,
    extra: Option<(&str, &dyn Fn(f64) -> String)>,
) -> String {
    let mut out = String::from("i,x_center");
    if let Some((name, _)) = extra {
        let _ = write!(out, ",{name}");
    }
    out.push_str(",count\n");
    for (k, count) in counts.iter().enumerate() {
        let centre = binning.centre(k);
        let _ = write!(out, "{k},{centre}");
        if let Some((_, value)) = extra {
            let _ = write!(out, ",{}", value(centre));
        }
        let _ = writeln!(out, ",{count}");
    }
    out
}

/// The numbers of `column` in a CSV with a header line.
pub fn read_column(text: &str, column: &str) -> Result<Vec<f64>, EventsError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or(EventsError::Empty)?;
    let at = header
        .split(',')
        .position(|name| name.trim() == column)
        .ok_or_else(|| EventsError::NoColumn(column.to_string()))?;
    lines
        .map(|(index, line)| {
            let text = line.split(',').nth(at).unwrap_or("").trim();
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| EventsError::NotANumber {
                    line: index + 1,
                    text: text.to_string(),
                })
        })
        .collect()
}

/// The coal-mining disasters as Murray, Adams & MacKay (2010) bin them: whole days since the
/// first disaster, 811 bins of 50 days, which cover the 40,549 days to the last one. The
/// decimal years times 365.25 lie within 3e-9 of whole days and are rounded to them (unrounded,
/// the disaster 7,500 days after the first, at 7499.9999999997, would fall into the bin before).
/// This is the binning of Murray's `get_mine_data.m` (the first disaster on day 1, bins of days
/// [1 + 50 k, 50 + 50 k]). Returns the binning and the counts.
pub fn coal_bins(decimal_years: &[f64]) -> Result<(Binning, Vec<u64>), EventsError> {
    let first = decimal_years.iter().copied().fold(f64::INFINITY, f64::min);
    let days: Vec<f64> = decimal_years
        .iter()
        .map(|year| ((year - first) * DAYS_PER_YEAR).round())
        .collect();
    let binning = Binning {
        start: 0.0,
        width: COAL_BIN_DAYS,
        bins: COAL_BINS,
    };
    Ok((binning, binning.counts(&days)?))
}

/// The coal grid CSV: `i,x_center,year_center,count`, x in days since the first disaster and
/// the centre's decimal year to two decimals for reading.
pub fn coal_csv(decimal_years: &[f64], binning: Binning, counts: &[u64]) -> String {
    let first = decimal_years.iter().copied().fold(f64::INFINITY, f64::min);
    let year = move |days: f64| format!("{:.2}", first + days / DAYS_PER_YEAR);
    grid_csv(counts, binning, Some(("year_center", &year)))
}

/// Days per (Julian) year, the length the decimal years are converted with.
pub(crate) const DAYS_PER_YEAR: f64 = 365.25;
/// The benchmark's bin width and number of bins.
pub(crate) const COAL_BIN_DAYS: f64 = 50.0;
pub(crate) const COAL_BINS: usize = 811;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_fall_into_half_open_bins_and_the_end_into_the_last() {
        let binning = Binning {
            start: 0.0,
            width: 10.0,
            bins: 3,
        };
        assert_eq!(
            binning.counts(&[0.0, 9.99, 10.0, 25.0, 30.0]).unwrap(),
            vec![2, 1, 2]
        );
        assert!(matches!(
            binning.counts(&[30.5]),
            Err(EventsError::Outside { index: 0, .. })
        ));
        assert!(binning.counts(&[-0.1]).is_err());
        let csv = grid_csv(&[2, 1, 2], binning, None);
        assert_eq!(csv, "i,x_center,count\n0,5,2\n1,15,1\n2,25,2\n");
    }

    /// The shipped `data/coal_grid811.csv` is the conversion of `data/coal_dates.csv`, byte for
    /// byte, and holds all 191 disasters.
    #[test]
    fn the_shipped_coal_grid_is_the_conversion_of_the_dates() {
        let root = env!("CARGO_MANIFEST_DIR");
        let dates = std::fs::read_to_string(format!("{root}/data/coal_dates.csv")).unwrap();
        let years = read_column(&dates, "date").unwrap();
        assert_eq!(years.len(), 191);
        let (binning, counts) = coal_bins(&years).unwrap();
        assert_eq!(counts.iter().sum::<u64>(), 191);
        let shipped = std::fs::read_to_string(format!("{root}/data/coal_grid811.csv")).unwrap();
        assert_eq!(shipped, coal_csv(&years, binning, &counts));
    }
}
