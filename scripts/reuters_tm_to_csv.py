#!/usr/bin/env python3
"""Export the Reuters-21578 extracts shipped with R's tm package into data/reuters_tm/counts.csv.

Usage (no R needed: the Debian package's files are read as they are):

    apt-get download r-cran-tm && dpkg-deb -x r-cran-tm_*.deb tm-deb
    python3 scripts/reuters_tm_to_csv.py tm-deb/usr/lib/R/site-library/tm data/reuters_tm/counts.csv

Reads texts/crude/*.xml and texts/acq/*.xml (one Reuters-21578 article each) and the stop list
stopwords/english.dat, and writes doc_id,word,count (documents in file-name order, each
document's words in alphabetical order). Preprocessing, as data/reuters_tm/README.md states:
title and body text; HTML entities decoded; the closing "Reuter" sign-off dropped; lower-cased;
every character that is not a letter a-z becomes a space (punctuation and numbers go);
words of fewer than 3 letters and words of the tm English stop list dropped; then words that
occur in fewer than 2 documents dropped.
"""

import collections
import html
import pathlib
import re
import sys
import xml.etree.ElementTree as ElementTree

COLLECTIONS = ("crude", "acq")
MIN_LETTERS = 3
MIN_DOCUMENTS = 2


def article_text(path):
    root = ElementTree.parse(path).getroot()
    parts = [root.findtext("TEXT/TITLE") or "", root.findtext("TEXT/BODY") or ""]
    body = html.unescape("\n".join(parts))
    return re.sub(r"\bReuter\s*$", "", body.strip())


def words_of(text, stop):
    tokens = re.sub(r"[^a-z]+", " ", text.lower()).split()
    return [t for t in tokens if len(t) >= MIN_LETTERS and t not in stop]


def main(tm_dir, out_path):
    tm_dir = pathlib.Path(tm_dir)
    stop = set(
        line.strip().lower()
        for line in (tm_dir / "stopwords" / "english.dat").read_text().splitlines()
        if line.strip()
    )
    documents = []
    for collection in COLLECTIONS:
        for path in sorted((tm_dir / "texts" / collection).glob("*.xml")):
            doc_id = f"{collection}-{path.stem.removeprefix('reut-')}"
            documents.append((doc_id, collections.Counter(words_of(article_text(path), stop))))
    spread = collections.Counter(w for _, counts in documents for w in counts)
    with open(out_path, "w", newline="\n") as out:
        out.write("doc_id,word,count\n")
        for doc_id, counts in documents:
            for word in sorted(counts):
                if spread[word] >= MIN_DOCUMENTS:
                    out.write(f"{doc_id},{word},{counts[word]}\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
