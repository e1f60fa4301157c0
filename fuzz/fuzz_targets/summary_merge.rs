//! `canonurl summarize` and `summarize --merge` (`canonurl::mine`): the
//! merge of the summaries of a log's parts is the summary of the whole, and
//! a summary file of any bytes is read or refused, never a panic.
//!
//! `data[0]` chooses where the log is cut, `data[1]` the window (bits 0-1)
//! and the log's shape (bit 2); the rest, six bytes per record, is a log of
//! that shape, so that most inputs are records and rows repeat keys:
//! - `vhost` (host, path, day and hour, status, size, client);
//! - `combined` (or `common`, a record without the two quoted fields after
//!   its size): clients of four kinds, methods in either case, targets
//!   plain or with an escape, a dot segment or a backslash, three
//!   protocols or none, time zones, statuses quoted or not, separators of
//!   one space, several or a tab. Most records take `summarize`'s in-line
//!   path (the target canonicalized where it lies, the other fields noted
//!   from where its scan ended, `Extract::info_in_line`); the others take
//!   the full path.
//!
//! Checked:
//! - the log summarized whole (one thread, no spill) equals its two parts
//!   summarized (two threads, a table of a few hundred bytes that spills
//!   sorted runs) and merged in the other order;
//! - `combined`: the whole log summarized again with a `--method` filter
//!   that keeps every record (which turns the in-line path off: every
//!   record is read whole) gives the same bytes;
//! - merging that summary with itself doubles every count and keeps every
//!   key (the rows are the same keys, in the same order);
//! - `data` itself as a summary file, after a valid header, is merged or
//!   refused with an error: no panic.
#![no_main]

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::OnceLock;

use canonurl::input::Source;
use canonurl::log::{LogFormat, RecordFilter};
use canonurl::pipeline::Options;
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("canonurl-fuzz-summary-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

const STATUSES: [u16; 8] = [200, 200, 200, 304, 301, 404, 503, 418];
const HOSTS: [&str; 3] = ["a.example", "b.example", "203.0.113.7"];

fn log(records: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records.chunks_exact(6) {
        let status = STATUSES[r[3] as usize % 8];
        let size = if r[4] < 8 {
            "-".to_owned()
        } else {
            (u32::from(r[4]) * 37).to_string()
        };
        out.extend_from_slice(
            format!(
                "{}:443 192.0.2.{} - - [0{}/Oct/2026:{:02}:00:00 +0000] \"GET /p/{}?x={} HTTP/1.1\" {status} {size} \"-\" \"-\"\n",
                HOSTS[r[0] as usize % 3],
                r[5] % 16,
                r[2] % 3 + 1,
                r[2] % 24,
                r[1] % 8,
                r[1] / 64,
            )
            .as_bytes(),
        );
    }
    out
}

/// Every method a `combined` record has (`get` read as `GET` by the filter).
const METHODS: [&str; 8] = [
    "GET", "GET", "GET", "POST", "HEAD", "PROPFIND", "get", "OPTIONS",
];
const ZONES: [&str; 4] = ["+0000", "-0700", "+0530", "+0000"];

/// A `combined` log, six bytes a record: `r[0]` the client's kind (bits
/// 0-1), the method (2-4), the protocol (5-7); `r[1]` the path (0-2), the
/// target's form (3-5), the query (6-7); `r[2]` the day and hour; `r[3]`
/// the status (0-2), the time zone (3-4), the separator after the request
/// (5-7); `r[4]` the size; `r[5]` the client (0-3) and what follows the
/// size (4-5).
fn combined(records: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records.chunks_exact(6) {
        let n = r[5] % 16;
        let client = match r[0] & 3 {
            0 => format!("192.0.2.{n}"),
            1 => format!("2001:db8::{n:x}"),
            2 => "-".to_owned(),
            _ => format!("c{n}.example"),
        };
        let method = METHODS[usize::from(r[0] >> 2) % 8];
        let (page, query) = (r[1] % 8, r[1] >> 6);
        let target = match (r[1] >> 3) % 8 {
            5 => format!("/p/{page}/%7ex?x={query}"),
            6 => format!("/q/../p/{page}?x={query}"),
            7 => format!("/p/{page}\\\"q?x={query}"),
            _ => format!("/p/{page}?x={query}"),
        };
        let protocol = match r[0] >> 5 {
            4 => " HTTP/1.0",
            5 => " HTTP/2.0",
            6 => "",
            _ => " HTTP/1.1",
        };
        let status = STATUSES[usize::from(r[3]) % 8];
        let status = match r[3] >> 5 {
            5 => format!("   {status}"),
            6 => format!("\t{status}"),
            7 => format!(" \"{status}\""),
            _ => format!(" {status}"),
        };
        let size = if r[4] < 8 {
            "-".to_owned()
        } else {
            (u32::from(r[4]) * 37).to_string()
        };
        let tail = match (r[5] >> 4) % 4 {
            0 | 1 => " \"-\" \"-\"",
            2 => " \"http://r.example/\" \"m\"",
            _ => "",
        };
        out.extend_from_slice(
            format!(
                "{client} - - [0{}/Oct/2026:{:02}:00:00 {}] \"{method} {target}{protocol}\"{status} {size}{tail}\n",
                r[2] % 3 + 1,
                r[2] % 24,
                ZONES[usize::from(r[3] >> 3) % 4],
            )
            .as_bytes(),
        );
    }
    out
}

fn summarize(
    log: &[u8],
    name: &str,
    format: LogFormat,
    threads: usize,
    memory: usize,
    window: Option<i64>,
) -> Vec<u8> {
    summarize_with(
        log,
        name,
        format,
        threads,
        memory,
        window,
        RecordFilter::default(),
    )
}

fn summarize_with(
    log: &[u8],
    name: &str,
    format: LogFormat,
    threads: usize,
    memory: usize,
    window: Option<i64>,
    filter: RecordFilter,
) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::write(&path, log).unwrap();
    let opts = Options {
        threads,
        format: Some(format),
        filter,
        ..Options::default()
    };
    let mut out = Vec::new();
    canonurl::mine::summarize(
        &[Source::Path(path)],
        &opts,
        window,
        memory,
        &mut out,
        &mut std::io::sink(),
    )
    .unwrap();
    out
}

fn merge(files: Vec<&[u8]>, memory: usize) -> Result<Vec<u8>, canonurl::mine::MergeError> {
    let inputs: Vec<(String, Box<dyn BufRead + '_>)> = files
        .into_iter()
        .enumerate()
        .map(|(i, f)| (format!("part{i}"), Box::new(f) as Box<dyn BufRead>))
        .collect();
    let mut out = Vec::new();
    canonurl::mine::merge(inputs, memory, &mut out)?;
    Ok(out)
}

/// The header of a summary's redirect hint section, when it has one.
const HINTS_HEADER: &[u8] = b"host\tfrom\tto\tredirects\n";

type HintCounts = BTreeMap<Vec<u8>, u64>;

/// A summary's redirect hints (each `host\tfrom\tto` with its count) and
/// the rest of it, from its own header line on.
fn split(summary: &[u8]) -> (HintCounts, &[u8]) {
    let mut hints = HintCounts::new();
    let Some(mut rest) = summary.strip_prefix(HINTS_HEADER) else {
        return (hints, summary);
    };
    while !rest.starts_with(b"host\turl\t") {
        let end = rest.iter().position(|&b| b == b'\n').unwrap();
        let line = &rest[..end];
        let tab = line.iter().rposition(|&b| b == b'\t').unwrap();
        let n = std::str::from_utf8(&line[tab + 1..])
            .unwrap()
            .parse::<u64>()
            .unwrap();
        hints.insert(line[..tab].to_vec(), n);
        rest = &rest[end + 1..];
    }
    (hints, rest)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let window = [Some(86_400), Some(3_600), None, Some(60)][data[1] as usize % 4];
    let format = if data[1] & 4 == 0 {
        LogFormat::Vhost
    } else {
        LogFormat::Combined
    };
    let text = match format {
        LogFormat::Vhost => log(&data[2..]),
        _ => combined(&data[2..]),
    };
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    // Cut after `cut` lines (0: the first part is empty).
    let cut = data[0] as usize % (lines + 1);
    let at = match cut.checked_sub(1) {
        None => 0,
        Some(n) => {
            text.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .nth(n)
                .unwrap()
                .0
                + 1
        }
    };

    let whole = summarize(&text, "whole.log", format, 1, usize::MAX, window);
    let first = summarize(&text[..at], "first.log", format, 2, 300, window);
    let second = summarize(&text[at..], "second.log", format, 2, 300, window);
    if format == LogFormat::Combined {
        // Every record has one of these methods: the filter keeps them
        // all, and reads each whole instead of in line.
        let mut every = RecordFilter::default();
        every.add_methods("GET,POST,HEAD,PROPFIND,OPTIONS").unwrap();
        let read_whole =
            summarize_with(&text, "filtered.log", format, 1, usize::MAX, window, every);
        assert!(read_whole == whole, "in line and read whole differ");
    }
    let merged = merge(vec![&second, &first], 300).unwrap();
    let whole_file = whole;
    let ((whole_hints, whole), (merged_hints, merged)) = (split(&whole_file), split(&merged));
    assert!(merged == whole, "cut after {cut} of {lines} lines");
    // Redirect hints: a redirect and its follow on the two sides of the cut
    // are seen by neither part; every other pair is.
    for (key, &n) in &merged_hints {
        assert!(
            whole_hints.get(key).is_some_and(|&w| n <= w),
            "hint {key:?}"
        );
    }

    // Twice the same summary: the same keys, every count doubled.
    let doubled = merge(vec![&whole_file, &whole_file], usize::MAX).unwrap();
    let (doubled_hints, doubled) = split(&doubled);
    for (key, &n) in &whole_hints {
        assert_eq!(doubled_hints.get(key), Some(&(2 * n)), "hint {key:?}");
    }
    assert_eq!(doubled_hints.len(), whole_hints.len());
    let rows = |b: &[u8]| {
        b.split(|&c| c == b'\n')
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>()
    };
    let (w, d) = (rows(whole), rows(doubled));
    assert_eq!(w.len(), d.len());
    for (a, b) in w.iter().zip(&d).skip(1) {
        let (ca, cb): (Vec<&[u8]>, Vec<&[u8]>) = (
            a.split(|&c| c == b'\t').collect(),
            b.split(|&c| c == b'\t').collect(),
        );
        if ca.len() < 16 {
            continue;
        }
        assert_eq!(ca[..3], cb[..3]);
        let num = |c: &[u8]| std::str::from_utf8(c).unwrap().parse::<u64>().unwrap();
        for i in 3..15 {
            assert_eq!(num(ca[i]) * 2, num(cb[i]), "column {i}");
        }
        assert_eq!(ca[15], cb[15], "largest");
    }

    // The raw bytes as a summary body: merged or refused, no panic.
    let mut file = whole.split(|&c| c == b'\n').next().unwrap().to_vec();
    file.push(b'\n');
    file.extend_from_slice(&data[2..]);
    let _ = merge(vec![&file], 200);
});
