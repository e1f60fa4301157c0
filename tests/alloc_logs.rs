//! No heap allocation per log line: once a worker's buffers are warm, a
//! whole piece of a real log goes from bytes to output without allocating
//! per line, for every format. (A piece may allocate a few times, not per
//! line: a W3C extractor's column table, the statistics map's first entry.)

use crate::common;
use crate::counting;

use std::sync::Arc;

use canonurl::internals::{FileCtx, PieceOut, Worker};
use canonurl::log::JsonPreset;
use canonurl::log::LogFormat;
use canonurl::log::RecordColumn;
use canonurl::pipeline::{Options, OutputFormat};
use common::shared_data_or_skip;

/// Allocations allowed per piece, whatever its number of lines.
const PER_PIECE: usize = 8;

/// Options of a run that writes plain URLs, or (`fields`) TSV rows with
/// every `--with` column and `--status` and `--method` filters on.
fn options(fields: bool) -> Options {
    let mut opts = Options {
        max_diagnostics: 0,
        ..Options::default()
    };
    if fields {
        opts.output = OutputFormat::Tsv;
        opts.with = RecordColumn::ALL.to_vec();
        opts.filter.add_statuses("1xx,2xx,3xx,4xx,5xx").unwrap();
        opts.filter
            .add_methods("GET,POST,HEAD,OPTIONS,PUT,DELETE,CONNECT")
            .unwrap();
    }
    opts
}

fn allocations_for_second_pass(
    format: LogFormat,
    json: Option<JsonPreset>,
    data: &[u8],
    fields: bool,
) -> (usize, u64) {
    let opts = Arc::new(options(fields));
    let ctx = FileCtx {
        id: 0,
        name: Arc::from("test"),
        format,
        json_paths: json.map(JsonPreset::paths),
    };
    let mut worker = Worker::new(Arc::clone(&opts));
    let mut out = PieceOut::default();
    // Warm up: buffers grow to the largest line and output.
    worker.piece(&ctx, data, 1, None, &mut out);
    let lines = out.stats.lines;
    out.out.clear();
    out.stats = Default::default();
    let allocs = counting::count_allocations(|| worker.piece(&ctx, data, 1, None, &mut out));
    assert_eq!(out.stats.lines, lines);
    (allocs, lines)
}

#[test]
fn no_allocation_per_line_in_any_format() {
    let Some(data) = shared_data_or_skip("no_allocation_per_line_in_any_format") else {
        return;
    };
    let cases: &[(&str, LogFormat, Option<JsonPreset>)] = &[
        (
            "logs-combined/elastic-examples-apache_logs.log",
            LogFormat::Combined,
            None,
        ),
        (
            "logs-combined/nasa-Aug95-first1930.log",
            LogFormat::Common,
            None,
        ),
        ("logs-scanner/acunetix.txt", LogFormat::Combined, None),
        (
            "logs-cloud-fixtures/elastic-integrations-nginx-test-access.log",
            LogFormat::Vhost,
            None,
        ),
        (
            "logs-iis/webknowit-W3SVC1-2015-2016.log",
            LogFormat::W3c,
            None,
        ),
        (
            "logs-cloud-fixtures/elastic-integrations-aws-cloudfront-test.log",
            LogFormat::Cloudfront,
            None,
        ),
        (
            "logs-cloud-fixtures/elastic-integrations-aws-elb-test-alb.log",
            LogFormat::Alb,
            None,
        ),
        (
            "logs-lnav/logfile_caddy_log.1",
            LogFormat::Json,
            Some(JsonPreset::Caddy),
        ),
        (
            "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
            LogFormat::Json,
            Some(JsonPreset::Traefik),
        ),
        ("logs-lnav/logfile_haproxy.0", LogFormat::Haproxy, None),
        (
            "extra-logs/s3-access/opensearch-s3-raw.log",
            LogFormat::S3,
            None,
        ),
        // The headers list of WAF records is read by a selector step.
        (
            "extra-logs/aws-waf-json/opensearch-waf-raw.log",
            LogFormat::Json,
            Some(JsonPreset::AwsWaf),
        ),
        (
            "extra-logs/akamai-datastream2-json/datadog-akamai.datastream_tests.ndjson",
            LogFormat::Json,
            Some(JsonPreset::Akamai),
        ),
        (
            "extra-logs/cloudflare-logpush/lnav-cloudflare.1",
            LogFormat::Json,
            Some(JsonPreset::Cloudflare),
        ),
        ("logs-lnav/logfile_bro_http.log.0", LogFormat::Zeek, None),
        (
            "extra-logs/zeek-tsv/zeek-btest-http-methods.http.log",
            LogFormat::Zeek,
            None,
        ),
        // Zeek's http.log as JSON (its masked time made a number, below).
        (
            "extra-logs/zeek-json/zeek-btest-http-uri-sha256.http.log",
            LogFormat::Json,
            Some(JsonPreset::Zeek),
        ),
        // RFC 3339 times (lnav-cloudflare.1 has nanoseconds).
        (
            "extra-logs/cloudflare-logpush/lnav-cloudflare.json",
            LogFormat::Json,
            Some(JsonPreset::Cloudflare),
        ),
        (
            "extra-logs/gcs-usage/kanjiapi-usage-example-two.csv",
            LogFormat::Csv,
            None,
        ),
        ("nasa-tsv/nasa_19950701.tsv", LogFormat::Tsv, None),
    ];
    for (file, format, json) in cases {
        let mut bytes = std::fs::read(data.join(file)).expect("shared log is readable");
        // btest's masked times (`XXXXXXXXXX.XXXXXX`), made numbers of the
        // same length so that the JSON records are records.
        const MASK: &[u8] = b"XXXXXXXXXX.XXXXXX";
        while let Some(at) = bytes.windows(MASK.len()).position(|w| w == MASK) {
            bytes[at..at + MASK.len()].copy_from_slice(b"1700000000.123456");
        }
        // Many lines per piece even for the small fixtures.
        let per_copy = bytes.iter().filter(|&&b| b == b'\n').count().max(1);
        let copies = (6_000 / per_copy + 1).max(1_000_000 / bytes.len().max(1) + 1);
        let mut piece = Vec::with_capacity(copies * (bytes.len() + 1));
        for _ in 0..copies {
            piece.extend_from_slice(&bytes);
            if piece.last() != Some(&b'\n') {
                piece.push(b'\n');
            }
        }
        for fields in [false, true] {
            let (allocs, lines) = allocations_for_second_pass(*format, *json, &piece, fields);
            eprintln!("{file} as {format} (fields {fields}): {lines} lines, {allocs} allocations");
            assert!(lines > 5_000, "{file}: {lines} lines");
            assert!(
                allocs <= PER_PIECE,
                "{file} as {format} (fields {fields}): {allocs} allocations for one piece of {lines} lines"
            );
        }
    }
}

/// Formats the shared data has no sample of: lines written from their
/// documented layouts, repeated.
#[test]
fn no_allocation_per_line_in_formats_without_shared_samples() {
    let cases: &[(&str, LogFormat)] = &[
        (
            "1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://www.example.com/a?b - HIER_DIRECT/93.184.216.34 text/html\n\
             1286536309.451   5012 192.168.0.1 TCP_TUNNEL/200 5000 CONNECT www.example.com:443 - HIER_DIRECT/93.184.216.34 -\n",
            LogFormat::Squid,
        ),
        (
            "[2016-04-15T20:17:00.310Z] \"POST /api/v1/locations?x=1 HTTP/2\" 204 - 154 0 226 100 \"10.0.35.28\" \"nsq2http\" \"cc21d9b0\" \"locations:8080\" \"tcp://10.0.2.1:80\"\n\
             [2016-04-15T20:17:00.310Z] \"- - -\" 0 - 0 0 1 - \"-\" \"-\" \"-\" \"-\" \"10.0.2.1:80\"\n",
            LogFormat::Envoy,
        ),
        // Istio's default: the downstream remote address after the upstream host.
        (
            "[2020-11-25T21:26:18.409Z] \"GET /status/418 HTTP/1.1\" 418 - via_upstream - \"-\" 0 135 4 4 \"-\" \"curl/7.73.0-DEV\" \"84961386\" \"httpbin:8000\" \"127.0.0.1:80\" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default\n\
             [2020-11-25T21:26:18.409Z] \"POST /a?b HTTP/1.1\" 200 - via_upstream - \"-\" 10 20 4 4 \"-\" \"ua\" \"1\" \"h\" \"127.0.0.1:80\" c 1.1.1.1:1 2.2.2.2:2 [2001:db8::1]:3 - default\n",
            LogFormat::Envoy,
        ),
    ];
    for (lines, format) in cases {
        let piece = lines.repeat(5_000);
        for fields in [false, true] {
            let (allocs, n) = allocations_for_second_pass(*format, None, piece.as_bytes(), fields);
            eprintln!("{format} (fields {fields}): {n} lines, {allocs} allocations");
            assert_eq!(n, 10_000);
            assert!(
                allocs <= PER_PIECE,
                "{format} (fields {fields}): {allocs} allocations for one piece of {n} lines"
            );
        }
    }
}

/// `--format jsonl --explain` with rewrites that have ids: the `rules`
/// column writes `rewrite:ID` without joining it in a new buffer first.
#[test]
fn no_allocation_per_line_in_jsonl_with_explain_and_rewrite_ids() {
    use canonurl::canon::rules::{file, Edit};
    use canonurl::pipeline::Mode;
    use canonurl::Profile;
    let rules = r#"
rewrite = [
  { regex = '^(https?)://m\.([a-z.]+)/', replace = '$1://$2/', scope = "url", id = "mobile" },
  { regex = '^/story\?id=(\d+)$', replace = '/story_$1.html', id = "story-id" },
]
"#;
    let edits = Edit::parse_list("").unwrap();
    let set = file::build(Profile::Aggressive.rule_mask(), Some(rules), &edits).unwrap();
    let opts = Arc::new(Options {
        max_diagnostics: 0,
        output: OutputFormat::Jsonl,
        mode: Mode::Pipe,
        explain: true,
        profile: Profile::Aggressive,
        rules: Some(Arc::new(set)),
        ..Options::default()
    });
    let ctx = FileCtx {
        id: 0,
        name: Arc::from("test"),
        format: LogFormat::Plain,
        json_paths: None,
    };
    let data =
        "http://m.example.com/story?id=12\nhttp://www.example.com/a/index.html#x\n".repeat(5_000);
    let mut worker = Worker::new(Arc::clone(&opts));
    let mut out = PieceOut::default();
    worker.piece(&ctx, data.as_bytes(), 1, None, &mut out);
    let text = String::from_utf8_lossy(&out.out).into_owned();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(r#""rewrite:mobile","rewrite:story-id""#),
        "{}",
        text.lines().next().unwrap()
    );
    out.out.clear();
    out.stats = Default::default();
    let allocs =
        counting::count_allocations(|| worker.piece(&ctx, data.as_bytes(), 1, None, &mut out));
    assert_eq!(out.stats.lines, 10_000);
    assert!(
        allocs <= PER_PIECE,
        "{allocs} allocations for one piece of 10,000 lines"
    );
}
