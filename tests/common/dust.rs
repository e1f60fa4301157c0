//! The DUST proof bench's scripts, for the tests that run them
//! (`tests/dust_site.rs`, `tests/mine.rs`): the site generator
//! `data/gen-dust-site.py` and the scorer `data/dust-eval.py`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// python3 is there; otherwise says that `test` is skipped.
pub fn have_python(test: &str) -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("{test}: python3 not found: skipped");
    }
    ok
}

/// A file of the repository's `data/`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// Runs the generator into `dir` with `seed` and the site's `shape`
/// (`--days`, `--requests`, ... as the script takes them); returns the
/// (log, truth) paths.
pub fn generate(dir: &Path, seed: u32, shape: &[&str]) -> (PathBuf, PathBuf) {
    let log = dir.join(format!("site-{seed}.log"));
    let truth = dir.join(format!("truth-{seed}.tsv"));
    let out = Command::new("python3")
        .arg(data("gen-dust-site.py"))
        .args(["--seed", &seed.to_string()])
        .args(shape)
        .arg("--log")
        .arg(&log)
        .arg("--truth")
        .arg(&truth)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "gen-dust-site.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (log, truth)
}

/// Scores `truth` (every URL with `all`, else the held-out ones) with the
/// command `canonurl` and the rules file `rules`; prints the text report to
/// stderr and returns the JSON one.
pub fn evaluate(
    canonurl: &str,
    truth: &Path,
    rules: Option<&Path>,
    all: bool,
) -> serde_json::Value {
    let report = truth.with_extension(format!("{}.json", rules.is_some() as u8 + 2 * all as u8));
    let mut cmd = Command::new("python3");
    cmd.arg(data("dust-eval.py"))
        .arg("--truth")
        .arg(truth)
        .args(["--canonurl", canonurl, "--json"])
        .arg(&report);
    if let Some(rules) = rules {
        cmd.arg("--rules").arg(rules);
    }
    if all {
        cmd.arg("--all");
    }
    let out = cmd.output().expect("run python3");
    assert!(
        out.status.success(),
        "dust-eval.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap()
}
