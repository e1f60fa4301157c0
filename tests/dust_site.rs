//! The DUST site generator (`data/gen-dust-site.py`) and its scorer
//! (`data/dust-eval.py`), which `canonurl mine` is measured with (issue 15):
//! the generator is deterministic, its log reads whole as `vhost`, and its
//! truth is consistent with the rules language. The hand-written rules of
//! `data/dust-oracle.toml` (one per planted family) merge every pair of one
//! page and nothing else, the profile alone merges few of them, and a rule
//! that falls into a trap (dropping the reorder-only `sort`) is scored as
//! false merges of the `reorder` family.
//!
//! Needs python3 (standard library only); skips, saying so, without it.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::dust::{data, have_python as python};

const CANONURL: &str = env!("CARGO_BIN_EXE_canonurl");

fn have_python() -> bool {
    python("dust_site")
}

/// A small site: 6 days, 20,000 requests, a quarter of the pages.
fn generate(dir: &Path, seed: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    common::dust::generate(
        dir,
        seed,
        &[
            "--days",
            "6",
            "--requests",
            "20000",
            "--scale",
            "0.25",
            "--holdout",
            "0.3",
        ],
    )
}

fn evaluate(truth: &Path, rules: Option<&Path>, all: bool) -> serde_json::Value {
    common::dust::evaluate(CANONURL, truth, rules, all)
}

#[test]
fn the_generator_is_deterministic_and_its_log_reads_whole() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log_a, truth_a) = generate(dir.path(), 3);
    let sub = dir.path().join("again");
    std::fs::create_dir(&sub).unwrap();
    let (log_b, truth_b) = generate(&sub, 3);
    assert_eq!(
        std::fs::read(&log_a).unwrap(),
        std::fs::read(&log_b).unwrap()
    );
    assert_eq!(
        std::fs::read(&truth_a).unwrap(),
        std::fs::read(&truth_b).unwrap()
    );
    let (log_c, _) = generate(dir.path(), 4);
    assert_ne!(
        std::fs::read(&log_a).unwrap(),
        std::fs::read(&log_c).unwrap()
    );

    // Every line is a vhost record with a URL, and the distinct URLs are
    // exactly the truth's URLs that are not held out.
    let stats = dir.path().join("stats.json");
    let out = Command::new(CANONURL)
        .args(["--unique", "--profile", "whatwg", "--stats-json"])
        .arg(&stats)
        .arg(&log_a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(stats["inputs"][0]["format"], "vhost");
    assert_eq!(stats["lines"], stats["emitted"], "{stats}");
    let mut seen: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    seen.sort();
    let truth = std::fs::read_to_string(&truth_a).unwrap();
    let mut logged: Vec<String> = truth
        .lines()
        .skip(1)
        .filter(|row| row.split('\t').nth(3) == Some("0"))
        .map(|row| row.split('\t').next().unwrap().to_owned())
        .collect();
    logged.sort();
    assert!(logged.len() > 500, "{} logged URLs", logged.len());
    assert_eq!(seen, logged);
}

#[test]
fn the_oracle_rules_merge_every_held_out_pair_and_nothing_else() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, truth) = generate(dir.path(), 5);
    let report = evaluate(&truth, Some(&data("dust-oracle.toml")), false);
    let base = &report["baseline"];
    let mined = &report["with_rules"];
    assert!(base["true_pairs"].as_u64().unwrap() > 100, "{base}");
    // The profile alone: no false merge, and few of the planted pairs.
    assert_eq!(base["precision"], 1.0, "{base}");
    assert!(base["recall"].as_f64().unwrap() < 0.1, "{base}");
    // One rule per family: all of them, and nothing more.
    assert_eq!(mined["precision"], 1.0, "{mined}");
    assert_eq!(mined["recall"], 1.0, "{mined}");
    for (family, recall) in mined["recall_by_family"].as_object().unwrap() {
        assert!(recall.is_null() || recall == 1.0, "{family}: {recall}");
    }
}

#[test]
fn a_rule_that_falls_into_the_reorder_trap_is_scored_as_false_merges() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, truth) = generate(dir.path(), 6);
    let oracle = std::fs::read_to_string(data("dust-oracle.toml")).unwrap();
    let trap = "defaults = { page = \"1\" }";
    assert!(oracle.contains(trap));
    let naive = dir.path().join("naive.toml");
    std::fs::write(
        &naive,
        oracle.replace(trap, &format!("{trap}\ndrop-params = [\"sort\"]")),
    )
    .unwrap();
    let report = evaluate(&truth, Some(&naive), true);
    let mined = &report["with_rules"];
    assert!(mined["precision"].as_f64().unwrap() < 1.0, "{mined}");
    assert_eq!(mined["recall"], 1.0, "{mined}");
    let families = mined["false_merge_urls_by_family"].as_object().unwrap();
    assert!(families["reorder"].as_u64().unwrap() > 0, "{families:?}");
    assert!(!families.contains_key("template"), "{families:?}");
}
