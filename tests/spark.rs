//! The Spark examples, end to end, each run by its Python script with the
//! binary cargo built for the tests:
//! - `examples/spark/test_spark.py` installs the pinned pyspark into a
//!   virtual environment, runs `canonurl_job.py` with `spark-submit --master
//!   local[2]` on the shared logs, and compares its URLs, counts and
//!   fingerprints with this binary run alone;
//! - `examples/spark/test_mine_job.py` writes two synthetic sites' logs cut
//!   into files, runs `mine_job.py` the same way (per-file `summarize`,
//!   merges, `mine --summaries` in one task) and compares its rules file and
//!   evidence with `canonurl mine` run alone on the same files.
//!
//! They skip (and say so) only where Java, Python's venv/pip or (the first)
//! the shared data is missing.

use std::process::Command;

/// Runs `examples/spark/SCRIPT` and asserts that it succeeded; returns its
/// stdout, or `None` when python3 cannot run. `tags` are the prefixes of
/// the script's and job's own lines, shown on stderr.
fn run_example(script: &str, tags: &[&str]) -> Option<String> {
    let path = format!("{}/examples/spark/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = match Command::new("python3")
        .arg(&path)
        .env("CANONURL_BIN", env!("CARGO_BIN_EXE_canonurl"))
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping {script}: python3 not runnable: {e}");
            return None;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let ours: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| tags.iter().any(|t| l.starts_with(t)))
        .collect();
    eprintln!("{}", ours.join("\n"));
    let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
    assert!(
        output.status.success(),
        "{script} failed ({}):\n{}\n--- stderr tail ---\n{}",
        output.status,
        ours.join("\n"),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    Some(stdout)
}

#[test]
fn spark_job_equals_single_process_output() {
    let Some(stdout) = run_example("test_spark.py", &["test_spark", "canonurl_job"]) else {
        return;
    };
    if !stdout.contains("test_spark: skipping") {
        assert!(
            stdout.contains("files mode (all shared logs): identical"),
            "{stdout}"
        );
        assert!(stdout.contains("lines mode"), "{stdout}");
        assert!(stdout.contains("test_spark: ok"), "{stdout}");
    }
}

#[test]
fn spark_mining_equals_single_process_mining() {
    let Some(stdout) = run_example("test_mine_job.py", &["test_mine_job", "canonurl_mine_job"])
    else {
        return;
    };
    // Skipped by test_mine_job.py, or by test_spark.py's setup it shares.
    if !stdout.contains(": skipping") {
        assert!(
            stdout.contains("test_mine_job: identical rules"),
            "{stdout}"
        );
        assert!(stdout.contains("test_mine_job: ok"), "{stdout}");
    }
}
