//! `canonurl summarize` and `summarize --merge` (`canonurl::mine`): the
//! merge of the summaries of a log's parts is the summary of the whole, and
//! a summary file of any bytes is read or refused, never a panic.
//!
//! `data[0]` chooses where the log is cut, `data[1]` the window; the rest,
//! six bytes per record, is a `vhost` log (host, path, day and hour, status,
//! size, client), so that most inputs are records and rows repeat keys.
//! Checked:
//! - the log summarized whole (one thread, no spill) equals its two parts
//!   summarized (two threads, a table of a few hundred bytes that spills
//!   sorted runs) and merged in the other order;
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

fn summarize(
    log: &[u8],
    name: &str,
    threads: usize,
    memory: usize,
    window: Option<i64>,
) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::write(&path, log).unwrap();
    let opts = Options {
        threads,
        format: Some(canonurl::log::LogFormat::Vhost),
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
    let text = log(&data[2..]);
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

    let whole = summarize(&text, "whole.log", 1, usize::MAX, window);
    let first = summarize(&text[..at], "first.log", 2, 300, window);
    let second = summarize(&text[at..], "second.log", 2, 300, window);
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
