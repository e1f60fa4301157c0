//! `--unique` and `--count` past `--memory`: the output with a tiny memory
//! limit (many sorted runs on disk) is byte for byte the in-memory output,
//! for every output format, `--field both`, `--top`, `--min-count` and
//! thread count; the in-memory output itself is checked against counts
//! made here from `--pipe --field both` (which does not go through the
//! distinct table). Also the errors: a missing `--temp-dir`, `--top` and
//! `--min-count` without `--count`, bad sizes.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use common::{run_canonurl as canonurl, shared_data_or_skip};

/// A fresh scratch path under `CARGO_TARGET_TMPDIR`.
fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-distinct-{}-{n}-{name}", std::process::id()))
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: stderr: {}",
        err(out)
    );
}

/// The shared access logs (every format the command detects) and the
/// repository's sample: about 12 MB, 180,000 lines, 15,000 distinct URLs.
fn inputs(data: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in [
        "logs-combined",
        "logs-iis",
        "logs-scanner",
        "logs-cloud-fixtures",
        "logs-lnav",
    ] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(data.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.expect("dir entry").path())
            .collect();
        names.sort();
        for p in names {
            // A syslog with two access-log lines among five: `-f auto`
            // cannot detect it, which would end the run with exit status 2.
            if p.to_string_lossy().contains("syslog_with_access_log") {
                continue;
            }
            files.push(p.to_string_lossy().into_owned());
        }
    }
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-access.log");
    files.push(sample.to_string_lossy().into_owned());
    files
}

/// Runs with `--stats-json`; returns the output and the summary.
fn run_stats(args: &[&str], files: &[String]) -> (Output, Value) {
    let json = scratch("stats.json");
    let json_s = json.to_str().expect("UTF-8 path").to_owned();
    let mut all: Vec<&str> = vec!["--stats-json", &json_s];
    all.extend_from_slice(args);
    all.extend(files.iter().map(String::as_str));
    let out = canonurl(&all, b"");
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("no --stats-json ({e}): {}", err(&out))),
    )
    .expect("--stats-json is JSON");
    let _ = std::fs::remove_file(&json);
    (out, v)
}

fn run(args: &[&str], files: &[String]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(files.iter().map(String::as_str));
    canonurl(&all, b"")
}

fn spill(v: &Value, key: &str) -> u64 {
    v["spill"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("spill.{key} in {}", v["spill"]))
}

#[test]
fn spilled_runs_give_the_in_memory_output() {
    let Some(data) = shared_data_or_skip("spilled_runs_give_the_in_memory_output") else {
        return;
    };
    let files = inputs(&data);
    let mut checked = 0;
    for mode in ["--count", "--unique"] {
        for format in ["plain", "tsv", "jsonl"] {
            for field in ["request", "both"] {
                let base = [mode, "--format", format, "--field", field];
                let (mem, v) = run_stats(&base, &files);
                assert_exit(&mem, 0, "in memory");
                assert_eq!(
                    spill(&v, "table_spills"),
                    0,
                    "{base:?}: no spill by default"
                );
                assert!(mem.stdout.len() > 100_000, "{base:?}: a large output");
                for threads in ["1", "2"] {
                    let mut args = base.to_vec();
                    args.extend(["--memory", "64K", "-j", threads]);
                    let (out, v) = run_stats(&args, &files);
                    assert_exit(&out, 0, "spilled");
                    // Many runs (the unit tests go past one merge pass).
                    assert!(spill(&v, "table_spills") >= 20, "{args:?}: {}", v["spill"]);
                    assert!(spill(&v, "runs") >= spill(&v, "table_spills"));
                    assert!(spill(&v, "bytes") > 0);
                    assert!(spill(&v, "table_peak") <= 64 * 1024, "{}", v["spill"]);
                    assert!(
                        out.stdout == mem.stdout,
                        "{args:?}: the spilled output differs from the in-memory one"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 24);
}

/// (field, URL) → (count, first line index), from `--pipe --field both`:
/// one line per input line, the request URL, a tab, the referer URL.
fn pipe_counts(files: &[String]) -> Vec<((usize, String), (u64, usize))> {
    let out = run(&["--pipe", "--field", "both", "-j", "1"], files);
    assert_exit(&out, 0, "--pipe");
    let text = String::from_utf8(out.stdout).expect("UTF-8 URLs");
    let mut seen: HashMap<(usize, String), (u64, usize)> = HashMap::new();
    let mut order = 0;
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() <= 2, "{line:?}");
        for (field, url) in cols.iter().enumerate() {
            if !url.is_empty() {
                seen.entry((field, url.to_string())).or_insert((0, order)).0 += 1;
                order += 1;
            }
        }
    }
    let mut rows: Vec<_> = seen.into_iter().collect();
    rows.sort_by_key(|r| r.1 .1);
    rows
}

#[test]
fn in_memory_output_matches_counts_made_from_pipe() {
    let Some(data) = shared_data_or_skip("in_memory_output_matches_counts_made_from_pipe") else {
        return;
    };
    let files = inputs(&data);
    let rows = pipe_counts(&files);
    let names = ["request", "referer"];
    // --unique --field both: first-seen order, labelled.
    let unique: String = rows
        .iter()
        .map(|((f, u), _)| format!("{u}\t{}\n", names[*f]))
        .collect();
    // --count --field both: count descending, ties in first-seen order.
    let mut by_count = rows.clone();
    by_count.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    let count: String = by_count
        .iter()
        .map(|((f, u), (n, _))| format!("{u}\t{n}\t{}\n", names[*f]))
        .collect();
    // --count --field request: the request URLs alone.
    let request: String = by_count
        .iter()
        .filter(|((f, _), _)| *f == 0)
        .map(|((_, u), (n, _))| format!("{u}\t{n}\n"))
        .collect();
    for memory in [None, Some("64K")] {
        let mem: Vec<&str> = memory.map_or(vec![], |m| vec!["--memory", m]);
        let with = |args: &[&str]| {
            let mut a = args.to_vec();
            a.extend(&mem);
            let out = run(&a, &files);
            assert_exit(&out, 0, "distinct");
            String::from_utf8(out.stdout).expect("UTF-8")
        };
        assert!(
            with(&["--unique", "--field", "both"]) == unique,
            "--unique {memory:?}"
        );
        assert!(
            with(&["--count", "--field", "both"]) == count,
            "--count {memory:?}"
        );
        assert!(with(&["--count"]) == request, "--count request {memory:?}");
        // --top N: the first N of the ranking; --min-count: its prefix of
        // counts at least N.
        let top: String = count.lines().take(25).map(|l| format!("{l}\n")).collect();
        assert!(
            with(&["--count", "--field", "both", "--top", "25"]) == top,
            "--top {memory:?}"
        );
        let min: String = by_count
            .iter()
            .filter(|(_, (n, _))| *n >= 5)
            .map(|((f, u), (n, _))| format!("{u}\t{n}\t{}\n", names[*f]))
            .collect();
        assert!(min.lines().count() > 100 && min.len() < count.len());
        assert!(
            with(&["--count", "--field", "both", "--min-count", "5"]) == min,
            "--min-count {memory:?}"
        );
        let both: String = min.lines().take(7).map(|l| format!("{l}\n")).collect();
        assert!(
            with(&[
                "--count",
                "--field",
                "both",
                "--min-count",
                "5",
                "--top",
                "7"
            ]) == both,
            "--top --min-count {memory:?}"
        );
    }
}

#[test]
fn top_and_min_count_spilled_match_in_memory() {
    let Some(data) = shared_data_or_skip("top_and_min_count_spilled_match_in_memory") else {
        return;
    };
    let files = inputs(&data);
    for extra in [
        &["--top", "1"][..],
        &["--top", "10", "--format", "jsonl"],
        &["--top", "100000"],
        &["--min-count", "3", "--format", "tsv"],
        &["--min-count", "1000000"],
        &[
            "--top",
            "50",
            "--min-count",
            "2",
            "--field",
            "both",
            "--key",
        ],
    ] {
        let mut args = vec!["--count"];
        args.extend_from_slice(extra);
        let mem = run(&args, &files);
        assert_exit(&mem, 0, "in memory");
        for threads in ["1", "2"] {
            let mut a = args.clone();
            a.extend(["--memory", "64K", "-j", threads]);
            let out = run(&a, &files);
            assert_exit(&out, 0, "spilled");
            assert!(out.stdout == mem.stdout, "{a:?}");
        }
    }
}

#[test]
fn field_both_labels_rows() {
    let Some(data) = shared_data_or_skip("field_both_labels_rows") else {
        return;
    };
    let f = vec![data
        .join("logs-combined/elastic-examples-apache_logs.log")
        .to_string_lossy()
        .into_owned()];
    for (format, field_at) in [("plain", 2), ("tsv", 3)] {
        let out = run(&["--count", "--field", "both", "--format", format], &f);
        assert_exit(&out, 0, format);
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        let mut seen = [0usize; 2];
        for line in text.lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), field_at + 1, "{line}");
            match cols[field_at] {
                "request" => seen[0] += 1,
                "referer" => seen[1] += 1,
                other => panic!("field column {other:?} in {line:?}"),
            }
            assert!(cols[field_at - 1].parse::<u64>().is_ok(), "count in {line}");
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{format}: {seen:?}");
    }
    let out = run(&["--unique", "--field", "both", "--format", "jsonl"], &f);
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    for line in text.lines() {
        assert!(
            line.starts_with("{\"field\":\"request\",")
                || line.starts_with("{\"field\":\"referer\","),
            "{line}"
        );
        let v: Value = serde_json::from_str(line).expect("JSON");
        assert!(
            v["url"].is_string()
                && v["key"].as_str().is_some_and(|k| k.parse::<i64>().is_ok())
                && v.get("count").is_none()
        );
    }
    // The same URL as request and as referer is two rows.
    let out = canonurl(
        &["--unique", "--field", "both"],
        b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET http://a.example/x HTTP/1.1\" 200 1 \"http://a.example/x\" \"ua\"\n",
    );
    assert_exit(&out, 0, "both");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "http://a.example/x\trequest\nhttp://a.example/x\treferer\n"
    );
}

#[test]
fn runs_are_removed_and_a_missing_temp_dir_is_an_error() {
    let Some(data) = shared_data_or_skip("runs_are_removed_and_a_missing_temp_dir_is_an_error")
    else {
        return;
    };
    let f = vec![data
        .join("logs-combined/elastic-examples-apache_logs.log")
        .to_string_lossy()
        .into_owned()];
    let dir = scratch("tmpdir");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let d = dir.to_str().expect("UTF-8").to_owned();
    let (out, v) = run_stats(&["--count", "--memory", "64K", "--temp-dir", &d], &f);
    assert_exit(&out, 0, "spilled into a temp dir");
    assert!(spill(&v, "runs") > 0);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert!(left.is_empty(), "runs left in --temp-dir: {left:?}");

    let missing = scratch("no-such-dir");
    let m = missing.to_str().expect("UTF-8").to_owned();
    let out = run(&["--count", "--memory", "64K", "--temp-dir", &m], &f);
    assert_exit(&out, 2, "missing --temp-dir");
    assert!(err(&out).contains(&m), "names the directory: {}", err(&out));
    // The system's temporary directory when it is missing: found at the
    // first spill, a fatal error naming it, nothing half-written.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["--count", "--memory", "64K", &f[0]])
        .env("TMPDIR", &missing)
        .output()
        .expect("run canonurl");
    assert_exit(&out, 2, "missing TMPDIR");
    assert!(err(&out).contains(&m), "names the directory: {}", err(&out));
    assert!(out.stdout.is_empty(), "no rows before the failure");
    // A file is not a directory either.
    let out = run(&["--unique", "--temp-dir", &f[0]], &f);
    assert_exit(&out, 2, "--temp-dir FILE");
    assert!(err(&out).contains(&f[0]), "{}", err(&out));
}

#[test]
fn usage_errors() {
    for args in [
        &["--top", "5"][..],
        &["--unique", "--top", "5"],
        &["--min-count", "2"],
        &["--unique", "--min-count", "2"],
        &["--count", "--top", "0"],
        &["--count", "--top", "x"],
        &["--count", "--memory", "0"],
        &["--count", "--memory", "12X"],
        &["--count", "--memory", ""],
        &["--count", "--memory=-5M"],
    ] {
        let out = canonurl(args, b"");
        assert_exit(&out, 2, &format!("{args:?}"));
        let e = err(&out);
        assert!(
            e.contains("--top")
                || e.contains("--min-count")
                || e.contains("--memory")
                || e.contains("--count"),
            "{args:?}: {e}"
        );
        assert!(out.stdout.is_empty());
    }
    // Sizes in their forms.
    for size in [
        "65536", "64K", "64KiB", "65.536KB", "0.0625M", "1G", "1.5GiB",
    ] {
        let out = canonurl(&["--count", "--memory", size], b"/a\n");
        assert_exit(&out, 0, size);
    }
}
