//! Test suite: The `canonurl` command as people run it: flags, inputs, output modes, rules files, terminals, pipes, follow mode, and the README's examples (peak memory is tests/memory.rs, a binary of its own).
//!
//! The integration tests are a few binaries of many modules (Cargo.toml: `autotests = false`
//! and one `[[test]]` per suite): each test binary of a release build pays a whole link-time
//! optimization of the library and its dependencies (about 36 CPU s each), so forty binaries
//! cost CI more than the tests themselves. Each module is the file of the same name in
//! `tests/`; `suite_command`'s `every_test_file_is_in_a_suite` fails when a file is in no
//! suite. Run one module: `cargo test --release --test suite_command cli::`.

mod common;

mod cli;
mod cli_command;
mod cli_distinct;
mod cli_fields;
mod cli_formats;
mod cli_inputs;
mod cli_logs;
mod cli_rules;
mod follow;
mod generator;
mod many_inputs;
mod ranges;
mod readme;
mod streaming;
mod terminal;

/// Every `tests/*.rs` file is a suite (a `[[test]]` in Cargo.toml) or a
/// module of exactly one suite: with `autotests = false`, a new test file in
/// no suite would never be compiled, and its tests would pass by not running.
#[test]
fn every_test_file_is_in_a_suite() {
    use std::collections::BTreeMap;
    use std::path::Path;

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let suites: Vec<String> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("path = \"tests/"))
        .filter_map(|l| l.strip_suffix(".rs\""))
        .map(str::to_string)
        .collect();
    assert!(suites.len() >= 2, "no [[test]] suites found in Cargo.toml");
    let mut owner: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for suite in &suites {
        let text = std::fs::read_to_string(root.join("tests").join(format!("{suite}.rs")))
            .unwrap_or_else(|e| panic!("suite {suite} in Cargo.toml: tests/{suite}.rs: {e}"));
        for module in text
            .lines()
            .filter_map(|l| l.strip_prefix("mod "))
            .filter_map(|l| l.strip_suffix(';'))
        {
            owner
                .entry(module.to_string())
                .or_default()
                .push(suite.clone());
        }
    }
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let in_suites = owner.get(&name).map_or(0, Vec::len);
        let is_suite = suites.contains(&name);
        match (is_suite, in_suites) {
            (true, 0) | (false, 1) => {}
            (true, _) => problems.push(format!("tests/{name}.rs is a suite and a module")),
            (false, 0) => problems.push(format!(
                "tests/{name}.rs is in no suite: add `mod {name};` to one of tests/{{{}}}.rs",
                suites.join(",")
            )),
            (false, _) => problems.push(format!(
                "tests/{name}.rs is in {:?}: a module belongs to one suite",
                owner[&name]
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
