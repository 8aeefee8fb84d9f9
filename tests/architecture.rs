//! docs/architecture.md names the files a change touches; this test fails when one of them does
//! not exist, so the page cannot drift from the tree unnoticed.

use std::path::Path;

/// Every backticked path of the page that starts at a top-level folder of the repository, with
/// `<name>`-style placeholders resolved against a real instance (the latent field, a kind).
fn named_paths(page: &str) -> Vec<String> {
    let roots = ["src/", "tests/", "docs/", "studies/", "data/", "README.md"];
    page.split('`')
        .skip(1)
        .step_by(2)
        .filter(|text| roots.iter().any(|root| text.starts_with(root)))
        .map(|text| {
            text.replace("<name>", "latent_field")
                .replace("<family>", "latent_field")
                .replace("<kind>", "pcn")
                .replace("<folder>/<study>", "coursework/acceptance")
        })
        .collect()
}

#[test]
fn every_file_the_architecture_page_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let paths = named_paths(&page);
    assert!(
        paths.len() >= 30,
        "only {} paths found: {paths:?}",
        paths.len()
    );
    let missing: Vec<&String> = paths
        .iter()
        .filter(|path| !root.join(path.as_str()).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names missing files: {missing:?}"
    );
}

#[test]
fn placeholders_and_prose_are_not_taken_for_paths() {
    let page = "see `src/job/mod.rs`, `src/families/<name>/keys.rs` and `cargo test`";
    assert_eq!(
        named_paths(page),
        ["src/job/mod.rs", "src/families/latent_field/keys.rs"]
    );
}
