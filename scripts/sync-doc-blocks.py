#!/usr/bin/env python3
"""Paste committed benchmark outputs into the documents that quote them.

Every block between `<!-- from: PATH -->` and `<!-- end -->` in README.md and docs/*.md must
equal the file PATH (tests/generated_docs.rs checks it). After a bench script rewrites its
bench/results file, run this from the repository root to copy each file into its blocks:

    python3 scripts/sync-doc-blocks.py

It prints the documents it changed; the prose around a block is left for you to reread.
"""
import pathlib
import re
import sys

BLOCK = re.compile(r"<!-- from: (.*?) -->\n.*?<!-- end -->", re.S)


def main(root: pathlib.Path) -> None:
    documents = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    for document in documents:
        text = document.read_text()

        def pasted(match: re.Match) -> str:
            source = match.group(1).strip()
            body = (root / source).read_text().strip()
            return f"<!-- from: {source} -->\n{body}\n<!-- end -->"

        new = BLOCK.sub(pasted, text)
        if new != text:
            document.write_text(new)
            print(f"updated {document.relative_to(root)}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "."))
