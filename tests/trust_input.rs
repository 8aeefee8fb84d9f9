//! Hostile input through the real binary: every broken study and data file of
//! `tests/fixtures/studies/bad/` makes `fieldmc run` and `fieldmc check` exit 2 with a message
//! that names the file and the line:column (and, for a data file, the data file and its row), and
//! nothing is written. Also inputs that cannot live in the corpus: a missing path, a folder, an
//! endless device, an oversized file, and a run without `--out` from a folder where a study
//! name could escape.

mod support;

use std::path::{Path, PathBuf};

use support::{assert_no_panic, fieldmc, text, tree, write_file};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/bad")
}

/// The broken studies of the corpus, sorted.
fn corpus() -> Vec<PathBuf> {
    let mut studies: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    studies.sort();
    studies
}

/// What a corpus file announces: `# expect: :LINE:COL: message` (after the file name) and an
/// optional `# expect-also:` text the message must contain. `empty.toml` has no room for it.
struct Announced {
    headline: String,
    also: Option<String>,
}

fn announced(path: &Path) -> Announced {
    let bytes = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let header = |tag: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(tag))
            .map(str::to_string)
    };
    let headline = header("# expect: ").unwrap_or_else(|| {
        assert!(
            path.ends_with("empty.toml"),
            "{} announces nothing",
            path.display()
        );
        ":1:1: the study file is empty".to_string()
    });
    Announced {
        headline,
        also: header("# expect-also: "),
    }
}

/// `:LINE:COL:` at the start of an announced headline.
fn has_line_and_column(headline: &str) -> bool {
    let mut parts = headline.splitn(4, ':');
    let (empty, line, column) = (parts.next(), parts.next(), parts.next());
    empty == Some("")
        && line.is_some_and(|l| l.parse::<usize>().is_ok())
        && column.is_some_and(|c| c.parse::<usize>().is_ok())
}

/// Everything wrong with how the binary handled one broken study; empty when all is right.
fn problems_with(study: &Path) -> Vec<String> {
    let expected = announced(study);
    let located = format!("error: {}{}", study.display(), expected.headline);
    let mut problems = Vec::new();
    if !has_line_and_column(&expected.headline) {
        problems.push(format!("announces no line:column: {:?}", expected.headline));
    }
    let sandbox = tempfile::tempdir().unwrap();
    let out = sandbox.path().join("out");
    let run = fieldmc()
        .args(["run", "--quiet", "--no-report", "--threads", "1"])
        .arg(study)
        .arg("--out")
        .arg(&out)
        .current_dir(sandbox.path())
        .output()
        .unwrap();
    let check = fieldmc().arg("check").arg(study).output().unwrap();
    for (command, output) in [("run", &run), ("check", &check)] {
        let stderr = text(&output.stderr);
        if output.status.code() != Some(2) {
            problems.push(format!("`{command}` exited {:?}, not 2", output.status));
        }
        if stderr.contains("panicked") {
            problems.push(format!("`{command}` panicked"));
        }
        if !stderr.lines().next().unwrap_or("").starts_with(&located) {
            problems.push(format!("`{command}` does not start with {located:?}"));
        }
        if let Some(also) = &expected.also
            && !stderr.contains(also)
        {
            problems.push(format!("`{command}` does not say {also:?}"));
        }
        if !problems.is_empty() {
            problems.push(format!("`{command}` stderr:\n{stderr}"));
        }
    }
    let written = tree(sandbox.path());
    if !written.is_empty() {
        problems.push(format!("`run` wrote {written:?}"));
    }
    problems
}

#[test]
fn every_broken_study_exits_2_naming_file_and_line_and_writes_nothing() {
    let studies = corpus();
    assert!(studies.len() >= 30, "only {} broken studies", studies.len());
    let mut wrong = Vec::new();
    for study in &studies {
        let problems = problems_with(study);
        if !problems.is_empty() {
            wrong.push(format!("{}:\n  {}", study.display(), problems.join("\n  ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} broken studies were mishandled:\n{}",
        wrong.len(),
        studies.len(),
        wrong.join("\n\n")
    );
}

/// A data-file error (the data file's, or the exposure column's file's) names the file too, and
/// its row when the fault is in one row.
#[test]
fn data_file_errors_name_the_data_file_and_its_row() {
    let mut checked = 0;
    for study in corpus() {
        let expected = announced(&study);
        let names_a_file = ["bad data file", "bad exposure file"];
        if !names_a_file.iter().any(|h| expected.headline.contains(h)) {
            continue;
        }
        let also = expected
            .also
            .expect("a data-file study announces the data file");
        let (place, fault) = also.split_once(": ").expect("`file[:row]: fault`");
        let (file, row) = match place.rsplit_once(':') {
            Some((file, row)) if row.parse::<usize>().is_ok() => (file, Some(row)),
            _ => (place, None),
        };
        assert!(
            !file.is_empty(),
            "{}: {also:?} names no file",
            study.display()
        );
        let whole_file_fault = [
            "the data file is empty",
            "cannot read the data file",
            "the data file has a header but no rows",
            "the file has",
            "the data file observes no cell",
        ]
        .iter()
        .any(|whole| fault.starts_with(whole));
        assert!(
            row.is_some() || whole_file_fault,
            "{}: {also:?} names no row",
            study.display()
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} data-file cases");
}

/// Every data file of the corpus is the subject of some broken study.
#[test]
fn every_corpus_data_file_is_exercised() {
    let studies: Vec<String> = corpus()
        .iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect();
    for entry in std::fs::read_dir(corpus_dir().join("data")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let quoted = format!("\"data/{name}\"");
        assert!(
            studies.iter().any(|s| s.contains(&quoted)),
            "no broken study uses data/{name}"
        );
    }
}

fn assert_bad_input(args: &[&std::ffi::OsStr], cwd: &Path, must_say: &[&str]) {
    let output = fieldmc().args(args).current_dir(cwd).output().unwrap();
    let stderr = text(&output.stderr);
    assert_no_panic(&output, &format!("{args:?}"));
    assert_eq!(output.status.code(), Some(2), "{args:?}:\n{stderr}");
    for text in must_say {
        assert!(
            stderr.contains(text),
            "{args:?} should say {text:?}:\n{stderr}"
        );
    }
}

#[test]
fn paths_that_are_not_study_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let folder = dir.path().join("folder.toml");
    std::fs::create_dir(&folder).unwrap();
    let big = dir.path().join("big.toml");
    std::fs::write(
        &big,
        format!("[model]\ngrid = 4\n{}", "#\n".repeat(600_000)),
    )
    .unwrap();
    let csv = corpus_dir().join("data/good.csv");
    let out = dir.path().join("out");
    let cases: [(&Path, &[&str]); 4] = [
        (&missing, &["missing.toml", "cannot read the study file"]),
        (&folder, &["folder.toml", "it is a folder"]),
        (&big, &["big.toml", "a study file may be at most"]),
        (&csv, &["good.csv:1:", "TOML syntax error"]),
    ];
    for (path, must_say) in cases {
        for command in ["check", "run"] {
            let args = [
                command.as_ref(),
                path.as_os_str(),
                "--out".as_ref(),
                out.as_os_str(),
            ];
            let args = if command == "run" {
                &args[..]
            } else {
                &args[..2]
            };
            assert_bad_input(args, dir.path(), must_say);
        }
        assert!(!out.exists(), "{}: something was written", path.display());
    }
}

/// `/dev/zero` reports length 0 and never ends: the loader must stop at its size limit rather
/// than read forever (it hung before the byte cap).
#[cfg(unix)]
#[test]
fn an_endless_device_is_refused_as_study_and_as_data() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(
        &["check".as_ref(), "/dev/zero".as_ref()],
        dir.path(),
        &["/dev/zero", "a study file may be at most"],
    );
    let study = write_file(
        dir.path(),
        "zero.toml",
        "[model]\ngrid = 2\nlikelihood = \"poisson\"\n[data]\nsource = \"csv\"\npath = \"/dev/zero\"\n",
    );
    assert_bad_input(
        &["check".as_ref(), study.as_os_str()],
        dir.path(),
        &["zero.toml:6:8: bad data file: /dev/zero: the data file is larger than"],
    );
}

/// Without `--out` the output folder is `results/<name>`; a name that climbs out of it is
/// refused and nothing appears anywhere around the working folder.
#[test]
fn a_climbing_study_name_writes_nowhere_even_without_out() {
    let sandbox = tempfile::tempdir().unwrap();
    let cwd = sandbox.path().join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    for name in [
        "../../escaped",
        "../escaped",
        "/tmp/escaped-fieldmc",
        "sub/../../escaped",
    ] {
        let study = write_file(
            sandbox.path(),
            "climb.toml",
            &format!("[study]\nname = {name:?}\n[model]\ngrid = 2\n"),
        );
        assert_bad_input(
            &["run".as_ref(), "--quiet".as_ref(), study.as_os_str()],
            &cwd,
            &["climb.toml:2:8: study name", "cannot name an output folder"],
        );
        let written: Vec<PathBuf> = tree(sandbox.path());
        assert_eq!(
            written,
            [
                PathBuf::from("a"),
                PathBuf::from("a/b"),
                PathBuf::from("climb.toml")
            ],
            "{name}"
        );
    }
    assert!(!Path::new("/tmp/escaped-fieldmc").exists());
}
