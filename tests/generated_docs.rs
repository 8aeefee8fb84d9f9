//! Numbers in the documentation come from committed benchmark outputs, never typed: a block
//! between `<!-- from: PATH -->` and `<!-- end -->` in README.md or docs/*.md must equal the file
//! PATH (relative to the repository), which a script under bench/ regenerates from its CSV.
//! Rerun the script and paste its output when this fails (`scripts/sync-doc-blocks.py` pastes
//! every block from its file).

use std::path::{Path, PathBuf};

const OPEN: &str = "<!-- from: ";
const CLOSE: &str = "<!-- end -->";

/// Every (source path, block text) of `text`.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let header_end = after
            .find("-->")
            .expect("a `<!-- from:` marker closes with `-->`");
        let source = after[..header_end].trim().to_string();
        let body = &after[header_end + 3..];
        let end = body
            .find(CLOSE)
            .unwrap_or_else(|| panic!("the block from {source} has no `{CLOSE}`"));
        found.push((source, body[..end].trim().to_string()));
        rest = &body[end + CLOSE.len()..];
    }
    found
}

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut paths = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            paths.push(entry.path());
        }
    }
    paths
}

#[test]
fn every_generated_block_equals_its_committed_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for document in documents(root) {
        let text = std::fs::read_to_string(&document).unwrap();
        for (source, block) in blocks(&text) {
            let committed = std::fs::read_to_string(root.join(&source)).unwrap_or_else(|e| {
                panic!(
                    "{}: the source {source} cannot be read: {e}",
                    document.display()
                )
            });
            assert_eq!(
                block,
                committed.trim(),
                "{}: the block from {source} differs from the file; rerun its script",
                document.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 1, "no generated block found");
}

#[test]
fn blocks_are_found_with_their_sources() {
    let text = "a\n<!-- from: bench/x.md -->\n| t |\n<!-- end -->\nb <!-- from: y -->z<!-- end -->";
    assert_eq!(
        blocks(text),
        [
            ("bench/x.md".to_string(), "| t |".to_string()),
            ("y".to_string(), "z".to_string())
        ]
    );
}

/// `n` with a comma between thousands, as the docs write numbers.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Numbers the prose states that the code defines appear in their documents as the code has
/// them: changing one of these constants without its sentence fails here.
#[test]
fn the_numbers_the_docs_state_are_the_codes() {
    use fieldmc::sampler::SamplerKind;
    use fieldmc::sampler::laplace_hmc::{MAX_LEAPFROG_STEPS, MIN_STEP};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let laplace_hmc = SamplerKind::LaplaceHmc.budget();
    let interval = fieldmc::sink::SYNC_INTERVAL;
    assert_eq!(
        interval.as_secs(),
        1,
        "docs/running.md says 'within a second'"
    );
    let cases = [
        (
            "docs/studies.md",
            format!(
                "at most {} leapfrog steps",
                thousands(u64::from(MAX_LEAPFROG_STEPS))
            ),
        ),
        ("docs/studies.md", format!("below {MIN_STEP:.6}")),
        (
            "docs/samplers.md",
            format!(
                "{} chains of {} iterations with {} of burn-in",
                laplace_hmc.chains,
                thousands(laplace_hmc.iterations),
                thousands(laplace_hmc.burn_in)
            ),
        ),
        ("docs/running.md", "within a second".to_string()),
    ];
    for (document, phrase) in cases {
        let text = std::fs::read_to_string(root.join(document)).unwrap();
        let prose = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            prose.contains(&phrase),
            "{document} does not say \"{phrase}\""
        );
    }
}

#[test]
fn thousands_are_separated_by_commas() {
    assert_eq!(thousands(7), "7");
    assert_eq!(thousands(1_024), "1,024");
    assert_eq!(thousands(10_000_000), "10,000,000");
}
