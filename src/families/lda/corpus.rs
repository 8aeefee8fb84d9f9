//! The lda family's corpora (`data.corpus`): the synthetic bars corpus, drawn from the model
//! with the job's data stream, and a corpus read from a CSV of `doc_id,word,count` rows (e.g.
//! `data/reuters_tm/counts.csv`). Both become a [`Corpus`]: documents as word indices into one
//! vocabulary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{categorical, dirichlet};
use crate::streams::StreamRng;
use crate::study::csv::{CsvError, CsvText};

/// Side of the bars vocabulary grid.
pub const BARS_SIDE: usize = 5;
/// `data.corpus` naming the synthetic bars corpus.
pub const BARS: &str = "bars";
/// The header of a corpus CSV.
pub(crate) const CSV_HEADER: &str = "doc_id,word,count";

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

/// Why a corpus CSV cannot be read: the file, the line and why.
pub type CorpusError = CsvError;

/// The largest corpus read: 256 MiB. Past it a wrong path (a device, an unrelated huge file) is
/// refused before it exhausts memory.
const MAX_CORPUS_BYTES: u64 = 1 << 28;

/// Reads a corpus CSV: `doc_id,word,count` rows, `count` an integer >= 1, in the dialect of
/// [`crate::study::csv`] (a column with an empty name, R's row names, is ignored). Documents
/// keep the order in which they first appear; the vocabulary is sorted; each document's tokens
/// are its rows' words in row order, each repeated `count` times.
pub fn read_corpus(path: &Path) -> Result<Corpus, CorpusError> {
    let text = CsvText::open(path, MAX_CORPUS_BYTES, "for a corpus")?;
    let mut read = text.rows("corpus file")?;
    let named: Vec<&str> = read
        .header()
        .names()
        .iter()
        .map(String::as_str)
        .filter(|n| !n.is_empty())
        .collect();
    if named.join(",") != CSV_HEADER {
        let found = named.join(",");
        return Err(read.header_error(format!("the header must be `{CSV_HEADER}`, not {found:?}")));
    }
    let [doc, word, count] = ["doc_id", "word", "count"].map(|n| read.column(n));
    let (doc, word, count) = (doc?, word?, count?);
    let mut rows = Vec::new();
    while let Some(row) = read.next_row()? {
        if row.text(doc).is_empty() || row.text(word).is_empty() {
            return Err(row.line_error("empty doc_id or word"));
        }
        let n: usize = row.parse(count, "an integer >= 1")?;
        if n == 0 {
            return Err(row.not(count, "an integer >= 1"));
        }
        rows.push((row.text(doc).to_string(), row.text(word).to_string(), n));
    }
    if rows.is_empty() {
        return Err(CsvError::file(path, "the corpus holds no words"));
    }
    Ok(corpus_of_rows(&rows))
}

fn corpus_of_rows(rows: &[(String, String, usize)]) -> Corpus {
    let mut words: Vec<String> = rows.iter().map(|r| r.1.clone()).collect();
    words.sort();
    words.dedup();
    let index: HashMap<&str, usize> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.as_str(), i))
        .collect();
    let mut order: HashMap<&str, usize> = HashMap::new();
    let mut documents: Vec<Vec<usize>> = Vec::new();
    for (doc, word, count) in rows {
        let d = *order.entry(doc.as_str()).or_insert_with(|| {
            documents.push(Vec::new());
            documents.len() - 1
        });
        documents[d].extend(std::iter::repeat_n(index[word.as_str()], *count));
    }
    Corpus {
        words,
        documents,
        truth: None,
    }
}
