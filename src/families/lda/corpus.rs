//! The lda family's corpora (`data.corpus`): the synthetic bars corpus, drawn from the model
//! with the job's data stream, and a corpus read from a CSV of `doc_id,word,count` rows (e.g.
//! `data/reuters_tm/counts.csv`). Both become a [`Corpus`]: documents as word indices into one
//! vocabulary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{categorical, dirichlet};
use crate::streams::StreamRng;

/// Side of the bars vocabulary grid.
pub const BARS_SIDE: usize = 5;
/// `data.corpus` naming the synthetic bars corpus.
pub const BARS: &str = "bars";
/// The header of a corpus CSV.
pub const CSV_HEADER: &str = "doc_id,word,count";

/// Where a job's corpus comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CorpusSource {
    /// The bars corpus: `documents` documents of `length` words.
    Bars { documents: usize, length: usize },
    /// A CSV of `doc_id,word,count` rows.
    Csv(PathBuf),
}

/// A corpus: documents as word indices, the vocabulary, and (synthetic) the true topics.
pub struct Corpus {
    pub words: Vec<String>,
    pub documents: Vec<Vec<usize>>,
    pub truth: Option<Vec<Vec<f64>>>,
}

/// The ten bars topics over the 5 x 5 vocabulary (word r * 5 + c): rows, then columns.
pub fn bars_topics() -> Vec<Vec<f64>> {
    let v = BARS_SIDE * BARS_SIDE;
    let mut topics = Vec::new();
    for r in 0..BARS_SIDE {
        let mut t = vec![0.0; v];
        (0..BARS_SIDE).for_each(|c| t[r * BARS_SIDE + c] = 1.0 / BARS_SIDE as f64);
        topics.push(t);
    }
    for c in 0..BARS_SIDE {
        let mut t = vec![0.0; v];
        (0..BARS_SIDE).for_each(|r| t[r * BARS_SIDE + c] = 1.0 / BARS_SIDE as f64);
        topics.push(t);
    }
    topics
}

/// The bars corpus: `documents` documents of `length` words, theta ~ Dir(1).
pub fn bars_corpus(documents: usize, length: usize, rng: &mut StreamRng) -> Corpus {
    let truth = bars_topics();
    let docs = (0..documents)
        .map(|_| {
            let theta = dirichlet(std::iter::repeat_n(1.0, truth.len()), rng);
            (0..length)
                .map(|_| {
                    let z = categorical(&theta, 1.0, rng);
                    categorical(&truth[z], 1.0, rng)
                })
                .collect()
        })
        .collect();
    let words = (0..BARS_SIDE * BARS_SIDE)
        .map(|w| format!("r{}c{}", w / BARS_SIDE, w % BARS_SIDE))
        .collect();
    Corpus {
        words,
        documents: docs,
        truth: Some(truth),
    }
}

/// Why a corpus CSV cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the header must be `{CSV_HEADER}`, not {found:?}")]
    Header { path: PathBuf, found: String },
    #[error("{path} line {line}: {problem}")]
    Line {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error("{path} holds no words")]
    Empty { path: PathBuf },
}

/// Reads a corpus CSV: `doc_id,word,count` rows, `count` an integer >= 1. Documents keep the
/// order in which they first appear; the vocabulary is sorted; each document's tokens are its
/// rows' words in row order, each repeated `count` times.
pub fn read_corpus(path: &Path) -> Result<Corpus, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header = lines.next().map_or("", |(_, l)| l.trim());
    if header != CSV_HEADER {
        return Err(CorpusError::Header {
            path: path.to_path_buf(),
            found: header.to_string(),
        });
    }
    let mut rows = Vec::new();
    for (index, line) in lines {
        let row = parse_row(line).map_err(|problem| CorpusError::Line {
            path: path.to_path_buf(),
            line: index + 1,
            problem,
        })?;
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(CorpusError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(corpus_of_rows(&rows))
}

/// One `doc_id,word,count` row.
fn parse_row(line: &str) -> Result<(&str, &str, usize), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [doc, word, count] = fields.as_slice() else {
        return Err(format!(
            "expected `{CSV_HEADER}`, found {} fields",
            fields.len()
        ));
    };
    if doc.is_empty() || word.is_empty() {
        return Err("empty doc_id or word".to_string());
    }
    match count.parse::<usize>() {
        Ok(n) if n >= 1 => Ok((doc, word, n)),
        _ => Err(format!("count {count:?} is not an integer >= 1")),
    }
}

fn corpus_of_rows(rows: &[(&str, &str, usize)]) -> Corpus {
    let mut words: Vec<String> = rows.iter().map(|r| r.1.to_string()).collect();
    words.sort();
    words.dedup();
    let index: HashMap<&str, usize> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.as_str(), i))
        .collect();
    let mut order: HashMap<&str, usize> = HashMap::new();
    let mut documents: Vec<Vec<usize>> = Vec::new();
    for &(doc, word, count) in rows {
        let d = *order.entry(doc).or_insert_with(|| {
            documents.push(Vec::new());
            documents.len() - 1
        });
        documents[d].extend(std::iter::repeat_n(index[word], count));
    }
    Corpus {
        words,
        documents,
        truth: None,
    }
}
