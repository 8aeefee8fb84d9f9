//! Build script: records the git revision the binary is built from, for `manifest.json`.
//!
//! Sets `FIELDMC_GIT_REVISION` to `git rev-parse --short HEAD`, with `-dirty` when tracked files
//! differ from HEAD, or to `unknown` when git or the repository is unavailable (e.g. a crate
//! tarball). Reruns when HEAD, the checked-out branch ref, packed refs or the index change; an
//! edit that is never staged does not rerun it, so `-dirty` reflects the last such change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let own_repository = is_own_repository(&manifest_dir);
    let revision = own_repository
        .then(|| revision(&manifest_dir))
        .flatten()
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=FIELDMC_GIT_REVISION={revision}");
    println!("cargo:rerun-if-changed=build.rs");
    if own_repository {
        for path in watched_git_files(&manifest_dir) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// Runs git in `dir` and returns its trimmed standard output on success. With optional locks
/// off, `git status` never rewrites the index to refresh its stat cache: in a fresh clone it
/// did, which touched a watched file and made the next cargo command rebuild the crate (CI's
/// test step recompiled what its build step had just built).
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// True when `dir` is the top of a git work tree, not a folder inside someone else's
/// repository (a vendored or unpacked crate).
fn is_own_repository(dir: &Path) -> bool {
    let Some(top) = git(dir, &["rev-parse", "--show-toplevel"]) else {
        return false;
    };
    match (Path::new(&top).canonicalize(), dir.canonicalize()) {
        (Ok(top), Ok(dir)) => top == dir,
        _ => false,
    }
}

/// `abc1234` or `abc1234-dirty`.
fn revision(dir: &Path) -> Option<String> {
    let hash = git(dir, &["rev-parse", "--short", "HEAD"])?;
    let changes = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changes.is_empty() {
        hash
    } else {
        format!("{hash}-dirty")
    })
}

/// The files whose change means a new revision or dirtiness: HEAD, the branch ref HEAD points
/// to, packed refs and the index. Only existing files are listed (cargo reruns every build for
/// a missing one). Works in linked worktrees, where `.git` is a file.
fn watched_git_files(dir: &Path) -> Vec<PathBuf> {
    let mut names = vec![
        "HEAD".to_string(),
        "packed-refs".to_string(),
        "index".to_string(),
    ];
    if let Some(branch_ref) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch_ref);
    }
    names
        .iter()
        .filter_map(|name| git(dir, &["rev-parse", "--git-path", name]))
        .map(|path| dir.join(path))
        .filter(|path| path.exists())
        .collect()
}
