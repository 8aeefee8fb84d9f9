//! What a report shows of the jobs table: a family declares which of its metric columns are
//! plotted against the swept parameters (with panel titles and, where one exists, a baseline),
//! which are listed on the page, and which of its keys name a job; the registry unites them.

use super::tables::Table;
use crate::study::Key;
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
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Metric::Column(column) => column.name(),
            Metric::Ratio { name, .. } => name,
        }
    }

    /// The jobs column, when the metric is one.
    pub(crate) fn column(&self) -> Option<Col<f64>> {
        match self {
            Metric::Column(column) => Some(*column),
            Metric::Ratio { .. } => None,
        }
    }

    /// The metric of one job, when it is a finite number.
    pub(crate) fn value(&self, jobs: &Table, row: usize) -> Option<f64> {
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

/// What one family's report shows of its jobs table.
#[derive(Debug, Clone, Copy)]
pub struct ReportColumns {
    /// Plotted against each swept numeric parameter, one panel each with its title, and listed
    /// first among the jobs table's metrics.
    pub(crate) swept: &'static [(Metric, &'static str)],
    /// Further columns the page's jobs table lists when a job has a value.
    pub(crate) listed: &'static [&'static str],
    /// Metrics drawn with their baseline.
    pub(crate) baselines: &'static [Baseline],
    /// The keys that name one of its jobs, swept or not (figure titles, the choice of the
    /// representative jobs whose fields and traces are drawn).
    pub(crate) named_by: &'static [Key],
    /// The parameters the page's jobs table shows when the study swept nothing.
    pub(crate) unswept: &'static [Key],
}

impl ReportColumns {
    /// Nothing beyond the shared columns.
    pub(crate) const NONE: ReportColumns = ReportColumns {
        swept: &[],
        listed: &[],
        baselines: &[],
        named_by: &[],
        unswept: &[],
    };

    /// A family's report that lists `columns` in the page's jobs table and nothing more; the
    /// builders below add the rest.
    pub(crate) const fn listing(columns: &'static [&'static str]) -> ReportColumns {
        ReportColumns {
            listed: columns,
            ..ReportColumns::NONE
        }
    }

    /// The same, with the keys that name one of its jobs.
    pub(crate) const fn named_by(self, keys: &'static [Key]) -> ReportColumns {
        ReportColumns {
            named_by: keys,
            ..self
        }
    }

    /// The columns of `families`, each once, in order.
    pub(crate) fn united<'a>(
        families: impl IntoIterator<Item = &'a ReportColumns>,
    ) -> ReportColumns {
        let mut swept: Vec<(Metric, &'static str)> = Vec::new();
        let mut listed: Vec<&'static str> = Vec::new();
        let mut baselines: Vec<Baseline> = Vec::new();
        let mut named_by: Vec<Key> = Vec::new();
        let mut unswept: Vec<Key> = Vec::new();
        for family in families {
            for &(metric, title) in family.swept {
                if !swept.iter().any(|(m, _)| m.name() == metric.name()) {
                    swept.push((metric, title));
                }
            }
            push_new(&mut listed, family.listed);
            for &baseline in family.baselines {
                if !baselines.iter().any(|b| b.0.name() == baseline.0.name()) {
                    baselines.push(baseline);
                }
            }
            push_new(&mut named_by, family.named_by);
            push_new(&mut unswept, family.unswept);
        }
        ReportColumns {
            swept: swept.leak(),
            listed: listed.leak(),
            baselines: baselines.leak(),
            named_by: named_by.leak(),
            unswept: unswept.leak(),
        }
    }

    /// The baseline column of a metric and what it is, if the metric has one.
    pub(crate) fn baseline_of(&self, metric: Metric) -> Option<(Col<f64>, &'static str)> {
        self.baselines
            .iter()
            .find(|(m, _, _)| Some(*m) == metric.column())
            .map(|&(_, column, what)| (column, what))
    }
}

/// Appends the items of `new` that `list` lacks.
fn push_new<T: PartialEq + Copy>(list: &mut Vec<T>, new: &[T]) {
    for item in new {
        if !list.contains(item) {
            list.push(*item);
        }
    }
}
