//! The Spark example, end to end: `examples/spark/test_spark.py` installs the
//! pinned pyspark into a virtual environment, runs `canonurl_job.py` with
//! `spark-submit --master local[2]` on the shared logs, and compares its URLs,
//! counts and fingerprints with this binary run alone. It skips (and says so)
//! only where Java, Python's venv/pip or the shared data is missing.

use std::process::Command;

#[test]
fn spark_job_equals_single_process_output() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/spark/test_spark.py");
    let output = match Command::new("python3")
        .arg(script)
        .env("CANONURL_BIN", env!("CARGO_BIN_EXE_canonurl"))
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping spark_job_equals_single_process_output: python3 not runnable: {e}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let ours: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.starts_with("test_spark") || l.starts_with("canonurl_job"))
        .collect();
    eprintln!("{}", ours.join("\n"));
    assert!(
        output.status.success(),
        "test_spark.py failed ({}):\n{}\n--- stderr tail ---\n{}",
        output.status,
        ours.join("\n"),
        stderr
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    if !stdout.contains("test_spark: skipping") {
        assert!(
            stdout.contains("files mode (all shared logs): identical"),
            "{stdout}"
        );
        assert!(stdout.contains("lines mode"), "{stdout}");
        assert!(stdout.contains("test_spark: ok"), "{stdout}");
    }
}
