//! The jobs-table metrics a report shows: a family declares which of its columns are plotted
//! against the swept parameters (with panel titles and, where one exists, a baseline) and which
//! are listed on the page; the registry unites them.

use super::tables::Table;
use crate::table::Col;

/// A metric plotted against the swept parameters: a jobs column, or a ratio of two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Column(Col<f64>),
    Ratio {
        name: &'static str,
        numerator: Col<f64>,
        denominator: Col<f64>,
    },
}

impl Metric {
    /// The column name, or the derived metric's name (the y-axis title).
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Column(column) => column.name(),
            Metric::Ratio { name, .. } => name,
        }
    }

    /// The jobs column, when the metric is one.
    pub fn column(&self) -> Option<Col<f64>> {
        match self {
            Metric::Column(column) => Some(*column),
            Metric::Ratio { .. } => None,
        }
    }

    /// The metric of one job, when it is a finite number.
    pub fn value(&self, jobs: &Table, row: usize) -> Option<f64> {
        match self {
            Metric::Column(column) => jobs.finite(*column, row),
            Metric::Ratio {
                numerator,
                denominator,
                ..
            } => {
                let ratio = jobs.finite(*numerator, row)? / jobs.finite(*denominator, row)?;
                ratio.is_finite().then_some(ratio)
            }
        }
    }
}

/// A metric drawn with a baseline: the metric's column, the baseline's column, and what the
/// baseline is.
pub type Baseline = (Col<f64>, Col<f64>, &'static str);

/// What one family's report shows of its jobs-table metrics.
#[derive(Debug, Clone, Copy)]
pub struct ReportMetrics {
    /// Plotted against each swept numeric parameter, one panel each with its title, and listed
    /// first among the jobs table's metrics.
    pub swept: &'static [(Metric, &'static str)],
    /// Further columns the page's jobs table lists when a job has a value.
    pub listed: &'static [&'static str],
    /// Metrics drawn with their baseline.
    pub baselines: &'static [Baseline],
}

impl ReportMetrics {
    /// Nothing beyond the shared columns.
    pub const NONE: ReportMetrics = ReportMetrics {
        swept: &[],
        listed: &[],
        baselines: &[],
    };
}

/// The metrics of every family, each once, in registry order.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    pub swept: Vec<(Metric, &'static str)>,
    pub listed: Vec<&'static str>,
    pub baselines: Vec<Baseline>,
}

impl Metrics {
    /// Adds a family's metrics that are not already there.
    pub fn extend(&mut self, family: &ReportMetrics) {
        for &(metric, title) in family.swept {
            if !self.swept.iter().any(|(m, _)| m.name() == metric.name()) {
                self.swept.push((metric, title));
            }
        }
        for &name in family.listed {
            if !self.listed.contains(&name) {
                self.listed.push(name);
            }
        }
        for &baseline in family.baselines {
            if !self
                .baselines
                .iter()
                .any(|b| b.0.name() == baseline.0.name())
            {
                self.baselines.push(baseline);
            }
        }
    }

    /// The baseline column of a metric and what it is, if the metric has one.
    pub fn baseline_of(&self, metric: Metric) -> Option<(Col<f64>, &'static str)> {
        self.baselines
            .iter()
            .find(|(m, _, _)| Some(*m) == metric.column())
            .map(|&(_, column, what)| (column, what))
    }
}
