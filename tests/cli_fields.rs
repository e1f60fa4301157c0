//! The record's other fields on the command line: `--with` columns in TSV
//! and JSON Lines, the `--status` and `--method` filters, and the
//! accounting of the records they skip.

use crate::common;

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

/// A URL list read after a log by the same worker (`-j 1`, one run) shows
/// none of the last record's fields: its rows' `host` is empty, not the
/// log's virtual host (a URL list's lines are not read into the record,
/// so the worker clears it once for the list).
#[test]
fn with_host_of_a_list_after_a_log_is_empty() {
    let dir =
        std::env::temp_dir().join(format!("cli-fields-list-after-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("vhost.log");
    let list = dir.join("list.txt");
    std::fs::write(
        &log,
        "www.example.com:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
    )
    .unwrap();
    std::fs::write(&list, "http://a.example/x\n").unwrap();
    let (log_arg, list_arg) = (log.to_str().unwrap(), list.to_str().unwrap());
    for mode in [&["--format", "tsv"][..], &["--format", "tsv", "--pipe"]] {
        let mut args = vec!["-j", "1", "--with", "host"];
        args.extend_from_slice(mode);
        args.extend([log_arg, list_arg]);
        let out = canonurl(&args, b"");
        assert_exit(&out, 0);
        let t = text(&out);
        let hosts: Vec<&str> = t.lines().map(|r| r.rsplit('\t').next().unwrap()).collect();
        assert_eq!(hosts, ["www.example.com", ""], "{mode:?}: {t}");
    }
    let _ = std::fs::remove_dir_all(&dir);
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

// ---- The other fields of real logs, format by format ----

/// What `--with status,bytes,method,time,client` must give for one line:
/// (status, bytes, method, time, client), `None` where the record lacks
/// the field (a `null` in JSON Lines).
type Want = (
    Option<u64>,
    Option<u64>,
    Option<&'static str>,
    Option<i64>,
    Option<&'static str>,
);

/// The JSON Lines row of input line `line` of a run over `input` (a file
/// argument, or `stdin` when `input` is `-`) with every field column.
fn row_of(args: &[&str], input: &str, stdin: &[u8], line: u64) -> Value {
    let mut all = vec![
        "--format",
        "jsonl",
        "--with",
        "status,bytes,method,time,client",
    ];
    all.extend_from_slice(args);
    if input != "-" {
        all.push(input);
    }
    let out = canonurl(&all, stdin);
    assert_exit(&out, 0);
    text(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON row"))
        .find(|r| r["line"] == line)
        .unwrap_or_else(|| panic!("{input}: no row for line {line}"))
}

fn check_row(what: &str, row: &Value, want: Want) {
    let got = (
        row["status"].as_u64(),
        row["bytes"].as_u64(),
        row["method"].as_str(),
        row["time"].as_i64(),
        row["client"].as_str(),
    );
    assert_eq!(got, want, "{what}: {row}");
    for (key, absent) in [
        ("status", want.0.is_none()),
        ("bytes", want.1.is_none()),
        ("method", want.2.is_none()),
        ("time", want.3.is_none()),
        ("client", want.4.is_none()),
    ] {
        assert_eq!(row[key].is_null(), absent, "{what}: {key} in {row}");
    }
}

/// One line of a real sample per format. The values were read from the
/// files with python3 (`json.loads` of the line, or its fields split at
/// tabs or commas), the times converted with
/// `calendar.timegm`/`datetime.fromisoformat(...).timestamp()` and cut to
/// whole seconds.
#[test]
fn other_fields_of_real_samples() {
    let Some(data) = common::shared_data_or_skip("other_fields_of_real_samples") else {
        return;
    };
    let cases: &[(&str, u64, Want)] = &[
        // Caddy: status, size, request.method, ts 1716723772.x,
        // request.client_ip (the remote_ip is the proxy, 10.5.1.1).
        (
            "logs-lnav/logfile_caddy_log.1",
            1,
            (
                Some(200),
                Some(3768),
                Some("GET"),
                Some(1_716_723_772),
                Some("10.10.10.117"),
            ),
        ),
        // Traefik: DownstreamStatus, DownstreamContentSize, RequestMethod,
        // StartUTC 2021-03-16T18:56:54.735539596Z, ClientHost.
        (
            "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
            1,
            (
                Some(404),
                Some(19),
                Some("GET"),
                Some(1_615_921_014),
                Some("127.0.0.1"),
            ),
        ),
        // Cloudflare: EdgeResponseStatus, EdgeResponseBytes,
        // ClientRequestMethod, EdgeStartTimestamp in ns, ClientIP.
        (
            "extra-logs/cloudflare-logpush/lnav-cloudflare.1",
            6,
            (
                Some(401),
                Some(2048),
                Some("GET"),
                Some(1_712_790_005),
                Some("172.16.254.1"),
            ),
        ),
        // ... and EdgeStartTimestamp as RFC 3339, 2022-10-30T00:00:02Z.
        (
            "extra-logs/cloudflare-logpush/lnav-cloudflare.json",
            1,
            (
                Some(301),
                Some(570),
                Some("HEAD"),
                Some(1_667_088_002),
                Some("87.226.160.250"),
            ),
        ),
        // AWS WAF: responseCodeSent null (the request was allowed), no
        // size logged, timestamp 1679548657700 ms, httpRequest.clientIp.
        (
            "extra-logs/aws-waf-json/opensearch-waf-raw.log",
            1,
            (
                None,
                None,
                Some("GET"),
                Some(1_679_548_657),
                Some("13.248.48.3"),
            ),
        ),
        // Akamai: statusCode, bytes, reqMethod, reqTimeSec "1645568187.280", cliIP.
        (
            "extra-logs/akamai-datastream2-json/datadog-akamai.datastream_tests.ndjson",
            1,
            (
                Some(200),
                Some(376_255),
                Some("GET"),
                Some(1_645_568_187),
                Some("15.188.240.172"),
            ),
        ),
        // Zeek TSV: status_code, response_body_len, method, ts, id.orig_h.
        (
            "logs-lnav/logfile_bro_http.log.0",
            9,
            (
                Some(200),
                Some(109_978),
                Some("GET"),
                Some(1_320_279_566),
                Some("192.168.2.76"),
            ),
        ),
        // btest masks the time (`XXXXXXXXXX.XXXXXX`): no time.
        (
            "extra-logs/zeek-tsv/zeek-btest-http-methods.http.log",
            14,
            (
                Some(200),
                Some(43_911),
                Some("GET"),
                None,
                Some("128.2.6.136"),
            ),
        ),
        // GCS usage (csv): sc_status, sc_bytes, cs_method, time_micros
        // 1693210382477156, c_ip.
        (
            "extra-logs/gcs-usage/kanjiapi-usage-example-two.csv",
            2,
            (
                Some(304),
                Some(0),
                Some("GET"),
                Some(1_693_210_382),
                Some("162.158.186.55"),
            ),
        ),
        // NASA (tsv): response, bytes, method, time (Unix seconds), host (the client).
        (
            "nasa-tsv/nasa_19950701.tsv",
            2,
            (
                Some(200),
                Some(6245),
                Some("GET"),
                Some(804_571_201),
                Some("199.72.81.55"),
            ),
        ),
    ];
    for &(file, line, want) in cases {
        let path = data.join(file);
        let row = row_of(&[], path.to_str().expect("UTF-8 path"), b"", line);
        check_row(&format!("{file}:{line}"), &row, want);
    }
    // Zeek's JSON http.log from btest, its masked time replaced by a
    // number in memory (as tests/extra_logs.rs does): line 2 has
    // status_code 200, response_body_len 4705, GET, id.orig_h 141.142.228.5.
    let path = data.join("extra-logs/zeek-json/zeek-btest-http-uri-sha256.http.log");
    let text = String::from_utf8(common::read_bytes(&path)).expect("UTF-8");
    let unmasked = text.replace("XXXXXXXXXX.XXXXXX", "1700000000.123456");
    let row = row_of(&["-f", "json"], "-", unmasked.as_bytes(), 2);
    check_row(
        "zeek json:2",
        &row,
        (
            Some(200),
            Some(4705),
            Some("GET"),
            Some(1_700_000_000),
            Some("141.142.228.5"),
        ),
    );
}

/// Envoy and Istio have no sample in the shared data: the example lines of
/// their documentation. 2016-04-15T20:17:00Z is 1460751420,
/// 2020-11-25T21:26:18Z 1606339578 (`calendar.timegm`).
#[test]
fn other_fields_of_envoy_and_istio() {
    let envoy = br#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"
"#;
    let row = row_of(&["-f", "envoy"], "-", envoy, 1);
    // Envoy's own default logs no client address.
    check_row(
        "envoy",
        &row,
        (Some(204), Some(0), Some("POST"), Some(1_460_751_420), None),
    );
    let istio = br#"[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "127.0.0.1:80" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default
"#;
    let row = row_of(&[], "-", istio, 1);
    check_row(
        "istio",
        &row,
        (
            Some(418),
            Some(135),
            Some("GET"),
            Some(1_606_339_578),
            Some("10.44.1.23"),
        ),
    );
}

#[test]
fn json_field_flags() {
    let line = br#"{"u":"/a","code":"201","sz":5,"when":"2019-10-01T12:00:00Z","verb":"PUT","ip":"192.0.2.1:80"}
"#;
    let row = row_of(
        &[
            "--json-target",
            "u",
            "--json-status",
            "code",
            "--json-bytes",
            "sz",
            "--json-time",
            "when",
            "--json-method",
            "verb",
            "--json-client",
            "ip",
        ],
        "-",
        line,
        1,
    );
    // 2019-10-01T12:00:00Z is 1569931200; the client without its port.
    check_row(
        "custom paths",
        &row,
        (
            Some(201),
            Some(5),
            Some("PUT"),
            Some(1_569_931_200),
            Some("192.0.2.1"),
        ),
    );
    assert_eq!(row["url"], "/a");
}

/// The accounting of a run with `--stats-json` and the `--status 2xx` filter.
fn filtered(args: &[&str], file: &std::path::Path) -> Value {
    let mut all = args.to_vec();
    all.push(file.to_str().expect("UTF-8 path"));
    let (out, v) = stats(&all, b"");
    assert_exit(&out, 0);
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert_eq!(
        n("lines"),
        n("emitted") + n("skipped") + n("rejected"),
        "{v}"
    );
    let raw = common::read_bytes(file);
    assert_eq!(n("lines"), common::split_lines(&raw).len() as u64, "{v}");
    v
}

#[test]
fn status_filter_on_json_and_zeek_logs_keeps_the_accounting() {
    let Some(data) = common::shared_data_or_skip("status_filter_on_json_and_zeek_logs") else {
        return;
    };
    // Cloudflare: 15 records, 10 with a 2xx EdgeResponseStatus (python3:
    // json.loads each line), the other 5 (403, 401, 404, 502, 403) filtered.
    let cf = data.join("extra-logs/cloudflare-logpush/lnav-cloudflare.1");
    let v = filtered(&["--status", "2xx"], &cf);
    assert_eq!(v["emitted"], 10, "{v}");
    assert_eq!(v["skipped_by_reason"]["status-filtered"], 5, "{v}");
    assert!(v["skipped_by_reason"]["no-status"].is_null(), "{v}");
    // A status path given alone goes over the detected preset's:
    // OriginResponseStatus is logged on line 9 only (502).
    let v = filtered(
        &["--status", "5xx", "--json-status", "OriginResponseStatus"],
        &cf,
    );
    assert_eq!(v["inputs"][0]["json_preset"], "cloudflare", "{v}");
    assert_eq!(v["emitted"], 1, "{v}");
    assert_eq!(v["skipped_by_reason"]["no-status"], 14, "{v}");

    // Zeek: 197 records with a uri, 174 of them 2xx (GET or POST, none a
    // CONNECT), 23 not (python3: the status_code column of each data line).
    let zeek = data.join("logs-lnav/logfile_bro_http.log.0");
    let v = filtered(&["--status", "2xx"], &zeek);
    assert_eq!(v["emitted"], 174, "{v}");
    assert_eq!(v["skipped_by_reason"]["status-filtered"], 23, "{v}");
    assert!(v["skipped_by_reason"]["no-status"].is_null(), "{v}");
    // The same by method: the one POST is filtered out.
    let v = filtered(&["--method", "GET"], &zeek);
    assert_eq!(v["skipped_by_reason"]["method-filtered"], 1, "{v}");
}
