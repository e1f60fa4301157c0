//! No heap allocation per log line: once a worker's buffers are warm, a
//! whole piece of a real log goes from bytes to output without allocating
//! per line, for every format. (A piece may allocate a few times, not per
//! line: a W3C extractor's column table, the statistics map's first entry.)

mod common;
mod counting;

use std::sync::Arc;

use canonurl::internals::{PieceOut, Worker};
use canonurl::log::json::JsonPreset;
use canonurl::log::LogFormat;
use canonurl::pipeline::{FileCtx, Options};
use common::shared_data_or_skip;

/// Allocations allowed per piece, whatever its number of lines.
const PER_PIECE: usize = 8;

fn allocations_for_second_pass(
    format: LogFormat,
    json: Option<JsonPreset>,
    data: &[u8],
) -> (usize, u64) {
    let opts = Arc::new(Options {
        max_diagnostics: 0,
        ..Options::default()
    });
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
        ("logs-lnav/logfile_bro_http.log.0", LogFormat::Zeek, None),
        (
            "extra-logs/gcs-usage/kanjiapi-usage-example-two.csv",
            LogFormat::Csv,
            None,
        ),
        ("nasa-tsv/nasa_19950701.tsv", LogFormat::Tsv, None),
    ];
    for (file, format, json) in cases {
        let bytes = std::fs::read(data.join(file)).expect("shared log is readable");
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
        let (allocs, lines) = allocations_for_second_pass(*format, *json, &piece);
        eprintln!("{file} as {format}: {lines} lines, {allocs} allocations");
        assert!(lines > 5_000, "{file}: {lines} lines");
        assert!(
            allocs <= PER_PIECE,
            "{file} as {format}: {allocs} allocations for one piece of {lines} lines"
        );
    }
}
