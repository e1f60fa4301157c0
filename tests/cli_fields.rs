//! The record's other fields on the command line: `--with` columns in TSV
//! and JSON Lines, the `--status` and `--method` filters, and the
//! accounting of the records they skip.

mod common;

use std::process::Output;

use serde_json::Value;

use common::run_canonurl as canonurl;

/// Three combined records (200 GET, 404 POST, 301 HEAD) and a record
/// without a status.
const LOG: &[u8] = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326 "-" "ua"
5.6.7.8 - - [10/Oct/2000:13:55:37 -0700] "POST /b HTTP/1.1" 404 - "-" "ua"
9.9.9.9 - - [10/Oct/2000:13:55:38 -0700] "head /c HTTP/1.1" 301 0 "-" "ua"
"#;

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn with_columns_in_tsv() {
    let out = canonurl(
        &[
            "-f",
            "combined",
            "--base",
            "http://h.example",
            "--format",
            "tsv",
            "--header",
            "--with",
            "status,bytes,method,time,client,host,input",
        ],
        LOG,
    );
    assert_exit(&out, 0);
    let t = text(&out);
    let rows: Vec<&str> = t.lines().collect();
    assert_eq!(
        rows[0],
        "line\turl\tkey\ttarget_or_reason\tstatus\tbytes\tmethod\ttime\tclient\thost\tinput"
    );
    let cells: Vec<&str> = rows[1].split('\t').collect();
    assert_eq!(cells[1], "http://h.example/a");
    assert_eq!(
        &cells[4..],
        ["200", "2326", "GET", "971211336", "1.2.3.4", "", "<stdin>"]
    );
    let cells: Vec<&str> = rows[2].split('\t').collect();
    assert_eq!(&cells[4..9], ["404", "0", "POST", "971211337", "5.6.7.8"]);
    assert_eq!(rows.len(), 4);
}

#[test]
fn with_columns_in_jsonl_are_null_when_absent() {
    let out = canonurl(
        &[
            "-f",
            "combined",
            "--format",
            "jsonl",
            "--with",
            "status,time,host",
        ],
        LOG,
    );
    assert_exit(&out, 0);
    let rows: Vec<Value> = text(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["status"], 200);
    assert_eq!(rows[0]["time"], 971_211_336);
    assert!(rows[0]["host"].is_null());
    // A plain input has none of the fields.
    let out = canonurl(
        &[
            "-f",
            "plain",
            "--format",
            "jsonl",
            "--with",
            "status,method",
        ],
        b"http://a.example/\n",
    );
    assert_exit(&out, 0);
    let row: Value = serde_json::from_str(text(&out).trim()).unwrap();
    assert!(row["status"].is_null() && row["method"].is_null(), "{row}");
}

#[test]
fn with_is_refused_where_rows_are_not_records() {
    for args in [
        &["--with", "status"][..],
        &["--with", "status", "--format", "tsv", "--unique"],
        &["--with", "status", "--format", "jsonl", "--count"],
        &["--with", "nope", "--format", "tsv"],
        &["--status", "6xx"],
        &["--status", "20"],
        &["--method", "G T"],
    ] {
        let mut all = vec!["-f", "combined"];
        all.extend_from_slice(args);
        let out = canonurl(&all, LOG);
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--"), "{args:?}: {err}");
    }
}

fn stats(args: &[&str], stdin: &[u8]) -> (Output, Value) {
    let path = std::env::temp_dir().join(format!(
        "cli-fields-{}-{}.json",
        std::process::id(),
        args.join("_").replace(['/', ','], "-")
    ));
    let p = path.to_str().unwrap().to_owned();
    let mut all = vec!["--stats-json", &p];
    all.extend_from_slice(args);
    let out = canonurl(&all, stdin);
    let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    (out, v)
}

#[test]
fn status_and_method_filters_skip_with_their_reasons() {
    let mut log = LOG.to_vec();
    // No status after the request: skipped as no-status.
    log.extend_from_slice(b"1.1.1.1 - - [10/Oct/2000:13:55:39 -0700] \"GET /d HTTP/1.1\"\n");
    let (out, v) = stats(&["-f", "combined", "--status", "2xx,301"], &log);
    assert_exit(&out, 0);
    assert_eq!(text(&out), "/a\n/c\n");
    assert_eq!(v["lines"], 4);
    assert_eq!(v["emitted"], 2);
    assert_eq!(v["skipped"], 2);
    assert_eq!(v["skipped_by_reason"]["status-filtered"], 1, "{v}");
    assert_eq!(v["skipped_by_reason"]["no-status"], 1, "{v}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: --status"));

    let (out, v) = stats(&["-f", "combined", "--method", "get,HEAD"], LOG);
    assert_exit(&out, 0);
    assert_eq!(text(&out), "/a\n/c\n");
    assert_eq!(v["skipped_by_reason"]["method-filtered"], 1, "{v}");

    let (out, v) = stats(
        &[
            "-f", "combined", "--status", "4xx", "--method", "POST", "--count",
        ],
        LOG,
    );
    assert_exit(&out, 0);
    assert_eq!(text(&out), "/b\t1\n");
    assert_eq!(v["emitted"], 1);
    assert_eq!(v["skipped"], 2);
}
