//! Inputs shared by `benches/canonicalize.rs` (criterion) and
//! `benches/instructions.rs` (gungraun): the URL lists of `url-dataset/` and
//! the request targets of the shared logs, as UTF-8 lines that every peer can
//! take (`&str`, absolute URLs).
//!
//! Where the data is: `../shared/data` beside the crate, or
//! `$CANONURL_SHARED_DATA` (the `data` directory itself). Without it, only
//! `data/sample-urls.txt` and `data/sample-access.log`, with a printed note.
//!
//! Log targets are taken with canonurl's own readers, as the command takes
//! them: `canonurl::internals::open_input` (gzip and zstd undone), format detection
//! on the first 64 KiB ([`canonurl::log::detect::detect`], the JSON preset
//! likewise), then the format's extractor on each line, request field only,
//! log escaping undone. What the extractor returns is the raw target, before
//! any canonicalization. An origin-form target (`/a?b`) gets the prefix
//! [`LOG_PREFIX`] (the same for every record: the peers need absolute URLs,
//! and the hosts logs record are not all valid); an absolute-form target
//! (`http://h/a`, proxies and scanners) is kept as it is. `*`, `CONNECT`
//! targets, records without a request and lines the extractor rejects are
//! left out. So every peer, canonurl included, parses the same absolute URLs.

#![allow(dead_code)] // each bench target uses its own part of this module

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use canonurl::input::Source;
use canonurl::internals::open_input;
use canonurl::log::detect::detect_input;
use canonurl::log::{Extracted, Field, Line, LogFormat, RecordReader};

/// The `url-dataset/` lists the benches read, one URL per line.
pub const URL_SETS: &[&str] = &["kasztp", "node_files", "userbait", "isaacs_files"];

/// Name of the set of request targets taken from the logs.
pub const LOG_SET: &str = "log_targets";

/// Scheme and host put before origin-form targets of log records.
pub const LOG_PREFIX: &str = "http://example.com";

/// How much of a log the format guess looks at (as the command does).
const DETECT_BYTES: usize = 64 * 1024;

/// One input set: its UTF-8 lines, joined by `\n`, with the byte range of
/// each.
pub struct UrlSet {
    pub name: String,
    /// The URLs, each followed by `\n`.
    pub text: String,
    /// Byte ranges of the URLs in `text`.
    pub lines: Vec<(usize, usize)>,
    /// Lines dropped because they are not UTF-8.
    pub dropped: usize,
    /// Where it came from, for the notes printed before a run.
    pub origin: String,
}

impl UrlSet {
    fn new(name: &str, origin: String) -> UrlSet {
        UrlSet {
            name: name.to_owned(),
            text: String::new(),
            lines: Vec::new(),
            dropped: 0,
            origin,
        }
    }

    /// Appends one URL, or counts it as dropped when it is not UTF-8.
    fn push(&mut self, url: &[u8]) {
        match std::str::from_utf8(url) {
            Ok(s) => {
                let start = self.text.len();
                self.text.push_str(s);
                self.lines.push((start, self.text.len()));
                self.text.push('\n');
            }
            Err(_) => self.dropped += 1,
        }
    }

    /// Reads a list of URLs, one per line, `\n` or `\r\n`; a last line
    /// without `\n` counts. Empty lines are left out.
    pub fn load_list(name: &str, path: &Path) -> UrlSet {
        let bytes = read(path);
        let mut set = UrlSet::new(name, path.display().to_string());
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        for line in body.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() {
                set.push(line);
            }
        }
        set
    }

    /// The request targets of `logs`, as absolute URLs (see the module doc).
    pub fn load_logs(name: &str, logs: &[PathBuf]) -> UrlSet {
        let mut set = UrlSet::new(name, String::new());
        let mut notes = Vec::new();
        let mut url = Vec::new();
        let mut ex = Extracted::default();
        for path in logs {
            let bytes = read_log(path);
            let sample = &bytes[..bytes.len().min(DETECT_BYTES)];
            let detected = match detect_input(None, None, sample) {
                Ok(d) if d.format != LogFormat::Plain => d,
                _ => {
                    notes.push(format!(
                        "{} (format not detected: skipped)",
                        file_name(path)
                    ));
                    continue;
                }
            };
            let mut reader = RecordReader::new(detected.format, detected.json_paths);
            let before = set.lines.len();
            for line in bytes.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if reader.read(line, Field::Request, &mut ex) != Line::Record
                    || !ex.has_target
                    || ex.connect
                {
                    continue;
                }
                let target = ex.target(line);
                url.clear();
                if target.first() == Some(&b'/') {
                    url.extend_from_slice(LOG_PREFIX.as_bytes());
                } else if !has_scheme(target) || is_authority(target) {
                    continue; // `*`, authority-form, or not a target
                }
                url.extend_from_slice(target);
                set.push(&url);
            }
            notes.push(format!(
                "{} ({}, {})",
                file_name(path),
                detected.format,
                set.lines.len() - before
            ));
        }
        set.origin = notes.join(", ");
        set
    }

    /// The URLs, in order.
    pub fn urls(&self) -> Vec<&str> {
        self.lines.iter().map(|&(s, e)| &self.text[s..e]).collect()
    }

    /// At most `n` URLs spread evenly over the set (every `len / n`-th, from
    /// the first), so that a sample stands for the whole list, not for its
    /// first lines (the lists are sorted).
    pub fn sample(&self, n: usize) -> Vec<&str> {
        let len = self.lines.len();
        if len <= n {
            return self.urls();
        }
        (0..n)
            .map(|i| {
                let (s, e) = self.lines[i * len / n];
                &self.text[s..e]
            })
            .collect()
    }

    /// Total length of the URLs in bytes, line ends excluded.
    pub fn total_bytes(&self) -> u64 {
        self.lines.iter().map(|&(s, e)| (e - s) as u64).sum()
    }
}

/// The shared `data` directory: `$CANONURL_SHARED_DATA`, else
/// `../shared/data` beside the crate.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("CANONURL_SHARED_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => manifest().join("../shared/data"),
    }
}

/// The crate's own directory.
pub fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The input sets to run: those of `names` (from `url-dataset/`, or
/// [`LOG_SET`] for the logs) that are there, each missing one noted on
/// stderr. When none is there, the crate's samples instead, with a note.
pub fn sets(names: &[&str]) -> Vec<UrlSet> {
    let shared = shared_dir();
    let mut sets = Vec::new();
    for &name in names {
        if name == LOG_SET {
            let logs = shared_logs(&shared);
            if logs.is_empty() {
                eprintln!("note: no logs-*/ under {}, skipped", shared.display());
            } else {
                sets.push(UrlSet::load_logs(name, &logs));
            }
            continue;
        }
        let path = shared.join("url-dataset").join(format!("{name}.txt"));
        if path.is_file() {
            sets.push(UrlSet::load_list(name, &path));
        } else {
            eprintln!("note: {} not found, skipped", path.display());
        }
    }
    if sets.is_empty() {
        eprintln!(
            "note: no shared data under {} (set CANONURL_SHARED_DATA to the shared `data` \
             directory); benchmarking data/sample-urls.txt and data/sample-access.log only",
            shared.display()
        );
        sets.push(UrlSet::load_list(
            "sample",
            &manifest().join("data/sample-urls.txt"),
        ));
        sets.push(UrlSet::load_logs(
            "sample_log",
            &[manifest().join("data/sample-access.log")],
        ));
    }
    sets
}

/// Every file of every `logs-*` directory of `shared`, sorted by path.
pub fn shared_logs(shared: &Path) -> Vec<PathBuf> {
    let mut logs = Vec::new();
    let Ok(dirs) = std::fs::read_dir(shared) else {
        return logs;
    };
    for dir in dirs.flatten() {
        let is_logs = dir.file_name().to_string_lossy().starts_with("logs-");
        if !is_logs || !dir.path().is_dir() {
            continue;
        }
        let Ok(files) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        logs.extend(files.flatten().map(|f| f.path()).filter(|p| p.is_file()));
    }
    logs.sort();
    logs
}

/// True when `target` starts with `scheme:` (absolute-form), as the
/// pipeline decides it.
fn has_scheme(target: &[u8]) -> bool {
    let Some((first, rest)) = target.split_first() else {
        return false;
    };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    for &b in rest {
        match b {
            b':' => return true,
            b if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.') => {}
            _ => return false,
        }
    }
    false
}

/// `host:port` with nothing after the port: authority-form, which the
/// command skips (as the pipeline decides it).
fn is_authority(target: &[u8]) -> bool {
    match target.iter().rposition(|&b| b == b':') {
        Some(c) => {
            c + 1 < target.len()
                && target[c + 1..].iter().all(u8::is_ascii_digit)
                && !target.contains(&b'/')
        }
        None => false,
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A whole log, decompressed by canonurl's input layer.
fn read_log(path: &Path) -> Vec<u8> {
    let source = Source::Path(path.to_owned());
    let mut input = open_input(&source, Arc::new(AtomicU64::new(0)))
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    let mut bytes = std::mem::take(&mut input.head);
    input
        .reader
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    bytes
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}
