//! The command on log formats that the shared data has no sample of (Squid,
//! Envoy, Istio) and on the flags that change how a format is read: lines
//! written here from each format's documented layout, read from stdin with
//! `-f auto` and with the format given.

use crate::common;

use common::run_canonurl;

fn stdout_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs with `--pipe` (one output line per input line) and checks the exit
/// status and that `--stats` names the format as detected.
fn pipe(args: &[&str], input: &str, format: &str) -> Vec<String> {
    let mut all = vec!["--pipe", "--stats"];
    all.extend_from_slice(args);
    let out = run_canonurl(&all, input.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let detected = if args.contains(&"-f") {
        format!("format {format} (given)")
    } else {
        format!("format {format} (detected)")
    };
    assert!(err.contains(&detected), "want {detected:?} in {err}");
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), input.lines().count(), "{err}");
    lines
}

const SQUID: &str = "\
1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://www.Example.com:80/a/./b?q=1 - HIER_DIRECT/93.184.216.34 text/html
1286536309.451   5012 192.168.0.1 TCP_TUNNEL/200 5000 CONNECT www.example.com:443 - HIER_DIRECT/93.184.216.34 -
1286536309.452      0 192.168.0.1 NONE_NONE/400 3900 NONE error:invalid-request - HIER_NONE/- text/html
1286536310.003     12 192.168.0.7 TCP_HIT/200 4312 GET https://shop.example.org/cart - HIER_NONE/- text/html
";

const UWSGI: &str = "\
*** Starting uWSGI 2.0.18 (64bit) on [Sun Mar 13 22:40:01 2016] ***
[pid: 88185|app: 0|req: 1/1] 127.0.0.1 () {38 vars in 696 bytes} [Sun Mar 13 22:49:12 2016] GET /a/./b?x=%7e1 => generated 47 bytes in 129 msecs (HTTP/1.1 200) 9 headers in 378 bytes (1 switches on core 3)
spawned uWSGI worker 2 (pid: 88186, cores: 1)
[pid: 88186|app: 0|req: 1/2] 10.0.0.7 (bob) {34 vars in 617 bytes} [Sun Mar  6 22:49:15 2016] POST /c => d => generated 215 bytes in 68 micros (HTTP/1.1 404) 9 headers in 373 bytes (1 switches on core 8)
[pid: 88186|app: 0|req: 2/3] 10.0.0.7 () {34 vars in 617 bytes} [Sun Mar 13 22:4
";

/// uWSGI's request log: its own messages skipped, the URI as logged up to
/// the last ` => generated `, a cut line rejected; status, size, method,
/// client and the `ctime` time (UTC) read for `--with`.
#[test]
fn uwsgi_request_log() {
    let want = [
        "",
        "https://app.example/a/b?x=~1",
        "",
        "https://app.example/c%20=%3E%20d",
        "",
    ];
    let base = ["--base", "https://app.example"];
    assert_eq!(pipe(&base, UWSGI, "uwsgi"), want);
    assert_eq!(
        pipe(&[&base[..], &["-f", "uwsgi"]].concat(), UWSGI, "uwsgi"),
        want
    );
    let out = run_canonurl(
        &[
            "--format",
            "tsv",
            "--with",
            "status,bytes,method,client,time",
            "--stats-json",
            "/dev/stderr",
        ],
        UWSGI.as_bytes(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"no-request\":2"), "{err}");
    assert!(err.contains("\"malformed-record\":1"), "{err}");
    // Line, URL, fingerprint (left out), target, then the columns asked
    // for; the rejected line as a row with its reason.
    let rows: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            [&cells[..2], &cells[3..]]
                .concat()
                .into_iter()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    // date -u -d '2016-03-13 22:49:12' +%s; date -u -d '2016-03-06 22:49:15' +%s
    let want = [
        [
            "2",
            "/a/b?x=~1",
            "/a/./b?x=%7e1",
            "200",
            "47",
            "GET",
            "127.0.0.1",
            "1457909352",
        ],
        [
            "4",
            "/c%20=%3E%20d",
            "/c => d",
            "404",
            "215",
            "POST",
            "10.0.0.7",
            "1457304555",
        ],
        ["5", "", "malformed-record", "", "", "", "", ""],
    ];
    assert_eq!(rows, want, "{err}");
}

#[test]
fn squid_native_log() {
    let want = [
        "http://www.example.com/a/b?q=1",
        "",
        "",
        "https://shop.example.org/cart",
    ];
    assert_eq!(pipe(&[], SQUID, "squid"), want);
    assert_eq!(pipe(&["-f", "squid"], SQUID, "squid"), want);
    let out = run_canonurl(
        &["--stats-json", "/dev/stderr", "-o", "/dev/null"],
        SQUID.as_bytes(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"authority-form\":1"), "{err}");
    assert!(err.contains("\"no-request\":1"), "{err}");
}

const ENVOY: &str = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"
[2020-11-25T21:26:18.409Z] "GET /status/418?a=%7e HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "127.0.0.1:80" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default
[2016-04-15T20:17:01.000Z] "- - -" 0 - 0 0 1 - "-" "-" "-" "-" "10.0.2.1:80"
[2016-04-15T20:17:02.000Z] "GET /health HTTP/1.1" 200 - 0 2 1 - "-" "kube-probe" "x" "api.example.com:443" "10.0.2.1:80"
"#;

#[test]
fn envoy_and_istio_default_logs() {
    let want = [
        "http://locations/api/v1/locations",
        "http://httpbin:8000/status/418?a=~",
        "",
        "https://api.example.com/health",
    ];
    assert_eq!(pipe(&[], ENVOY, "envoy"), want);
    assert_eq!(pipe(&["-f", "envoy"], ENVOY, "envoy"), want);
}

#[test]
fn s3_log_from_stdin() {
    let owner = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";
    let line = |op: &str, req: &str, tail: &str| {
        format!(
            "{owner} bkt [06/Feb/2019:00:00:38 +0000] 192.0.2.3 - 3E57427F3EXAMPLE {op} k \
             \"{req}\" 200 - 113 - 7 - \"-\" \"ua\"{tail}\n"
        )
    };
    let input = [
        line(
            "REST.GET.OBJECT",
            "GET /k%20x HTTP/1.1",
            " - id SigV4 c AuthHeader bkt.s3.eu-west-1.amazonaws.com TLSv1.3 - -",
        ),
        line("S3.EXPIRE.OBJECT", "-", ""),
        line("REST.GET.OBJECT", "GET /bkt/k HTTP/1.1", ""),
    ]
    .concat();
    assert_eq!(
        pipe(&[], &input, "s3"),
        [
            "https://bkt.s3.eu-west-1.amazonaws.com/k%20x",
            "",
            "http://s3.amazonaws.com/bkt/k",
        ]
    );
}

#[test]
fn undetectable_input_names_the_evidence() {
    // Two CLF records among five lines: no format has most of them.
    let input = "\
Jan  3 09:47:02 host sudo: a message
1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 200 2
Jan  3 09:47:03 host kernel: another
1.2.3.4 - - [10/Oct/2000:13:55:37 -0700] \"GET /b HTTP/1.0\" 200 2
Jan  3 09:47:04 host cron: and another
";
    let out = run_canonurl(&[], input.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot detect the log format (only 2 of 5 sampled lines read as common;"),
        "{err}"
    );
    // Bytes that are not UTF-8 are shown escaped, not replaced.
    let out = run_canonurl(&[], b"\xff\xfe\x01 \x02\n\x9c\x80 \x03\x04\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("first line: \"\\xff\\xfe\\x01 \\x02\""),
        "{err}"
    );
    // With a NUL byte it is binary: said so, its bytes not shown.
    let out = run_canonurl(&[], b"\xff\xfe\x00\x01 \x02\n\x9c\x80 \x03\x04\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("<stdin>: not a text log (binary"), "{err}");
    assert!(!err.contains("first line"), "{err}");
}

#[test]
fn scheme_flag_for_records_that_log_none() {
    // A vhost log (`%v:%p`) behind a proxy that terminates TLS, and Apache's
    // ssl_request_log (`[time] client protocol cipher "request" bytes`),
    // which has no host: `--base` gives it, `--scheme` the scheme.
    let vhost = "\
www.example.com 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2 \"-\" \"-\"
www.example.com:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /b HTTP/1.1\" 200 2 \"-\" \"-\"
www.example.com:8080 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /c HTTP/1.1\" 200 2 \"-\" \"-\"
";
    assert_eq!(
        pipe(&[], vhost, "vhost"),
        [
            "http://www.example.com/a",
            "http://www.example.com/b",
            "http://www.example.com:8080/c"
        ]
    );
    assert_eq!(
        pipe(&["--scheme", "https"], vhost, "vhost"),
        [
            "https://www.example.com/a",
            "https://www.example.com/b",
            "https://www.example.com:8080/c"
        ]
    );
    let ssl = "\
[10/Oct/2000:13:55:36 -0700] 192.0.2.1 TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 \"GET /a HTTP/1.1\" 2326
[10/Oct/2000:13:55:37 -0700] 192.0.2.1 TLSv1.3 TLS_AES_256_GCM_SHA384 \"GET /b?x HTTP/1.1\" -
";
    assert_eq!(pipe(&[], ssl, "common"), ["/a", "/b?x"]);
    assert_eq!(
        pipe(
            &["--scheme", "https", "--base", "http://shop.example"],
            ssl,
            "common"
        ),
        ["https://shop.example/a", "https://shop.example/b?x"]
    );
    let out = run_canonurl(&["--scheme", "ftp"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn w3c_fields_flag_for_logs_without_a_fields_line() {
    let names = "date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-host";
    let log = "\
2016-01-01 00:00:01 10.0.0.1 GET /default.aspx id=3 80 www.example.com
2016-01-01 00:00:02 10.0.0.1 GET /a+b.htm - 443 www.example.com
";
    // Without it, no format fits.
    let out = run_canonurl(&[], log.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let want = [
        "http://www.example.com/default.aspx?id=3",
        "https://www.example.com/a%20b.htm",
    ];
    assert_eq!(
        pipe(&["--w3c-fields", names, "-f", "w3c"], log, "w3c"),
        want
    );
    // It implies -f w3c.
    let out = run_canonurl(&["--w3c-fields", names], log.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_lines(&out), want);
    // A #Fields: line in the log takes over from where it stands.
    let mixed = format!("{log}#Fields: cs-uri-stem cs-host\n/z other.example\n");
    let out = run_canonurl(&["--pipe", "--w3c-fields", names], mixed.as_bytes());
    assert_eq!(
        stdout_lines(&out),
        [want[0], want[1], "", "http://other.example/z"]
    );
    // Pieces read by other threads get the layout too: a file of many
    // pieces, with -j 2.
    let big = log.repeat(40_000);
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("w3c-fields-{}.log", std::process::id()));
    std::fs::write(&path, &big).expect("write temp log");
    let path_str = path.to_str().expect("UTF-8 temp path");
    let out = run_canonurl(
        &["-j", "2", "--count", "--w3c-fields", names, path_str],
        b"",
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(0));
    let mut counted = stdout_lines(&out);
    counted.sort();
    assert_eq!(
        counted,
        [format!("{}\t40000", want[0]), format!("{}\t40000", want[1])]
    );
    // Other formats refuse it.
    let out = run_canonurl(&["-f", "combined", "--w3c-fields", names], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run_canonurl(&["--w3c-fields", " "], b"");
    assert_eq!(out.status.code(), Some(2));
}
