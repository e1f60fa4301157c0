//! The Python package (`python/`), end to end: `python/test_python.py`
//! installs the pinned build and test requirements into a virtual
//! environment under target/, builds the wheel with maturin, installs it,
//! and runs the pytest suite (the WPT cases through the Python API, batch
//! and Arrow paths against the scalar one, invalid UTF-8, a leak check, and
//! the PySpark, Polars and DuckDB examples, PySpark's against this binary's
//! `--pipe` output). It skips (and says so) only where python3 or its
//! venv/pip is missing; inside pytest, the Spark tests skip without Java and
//! the data tests without the shared data.

use std::process::Command;

#[test]
fn python_package_builds_and_passes_its_tests() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/test_python.py");
    let output = match Command::new("python3")
        .arg(script)
        .env("CANONURL_BIN", env!("CARGO_BIN_EXE_canonurl"))
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "skipping python_package_builds_and_passes_its_tests: python3 not runnable: {e}"
            );
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let ours: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            l.starts_with("test_python") || l.contains("passed") || l.starts_with("SKIPPED")
        })
        .collect();
    eprintln!("{}", ours.join("\n"));
    let tail = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    };
    assert!(
        output.status.success(),
        "test_python.py failed ({}):\n--- stdout tail ---\n{}\n--- stderr tail ---\n{}",
        output.status,
        tail(&stdout),
        tail(&stderr)
    );
    if !stdout.contains("test_python: skipping") {
        assert!(stdout.contains(" passed"), "{stdout}");
        assert!(!stdout.contains(" failed"), "{stdout}");
    }
}
