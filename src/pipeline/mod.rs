//! The whole run, from inputs to output bytes, on several threads.
//!
//! ```text
//! reader thread ──pieces──▶ N workers ──results──▶ calling thread (writer)
//!       ▲                                              │
//!       └──────────── empty buffers (a fixed pool) ◀───┘
//! ```
//!
//! The reader opens each input, detects its format, and cuts it into pieces
//! of whole lines (or, for a regular uncompressed file, hands out byte
//! ranges that the workers read themselves). Workers turn pieces into output
//! bytes in parallel, each line's URLs going to the run's one sink
//! (`sink.rs`: rows, `--pipe` lines, the distinct table or the summary
//! table, chosen once). The
//! writer puts results back in input order and writes them. Buffers go round
//! a fixed pool, so memory stays bounded whatever the input size: the reader
//! waits for a free buffer when the writer falls behind. With `--unique` and
//! `--count` the writer hands each URL to the distinct table
//! (`distinct/`), which stays within `--memory` by spilling sorted runs.

pub(crate) mod distinct;
mod hosted;
pub(crate) mod job;
mod lines;
mod reader;
mod sink;
pub mod stats;
pub(crate) mod worker;
mod writer;

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::canon::rules::RuleSet;
use crate::canon::surt::SurtForm;
use crate::input::Source;
use crate::log::csv::CsvColumns;
use crate::log::json::JsonPaths;
use crate::log::{Field, LogFormat, RecordColumn, RecordFilter, Scheme};
use crate::{Base, Profile};
use crossbeam_channel::{bounded, unbounded};
use job::{ByteRange, Done, Event, FileCtx, Job};
use stats::Summary;
use worker::PieceOut;
pub(crate) use worker::RecordSink;

pub use crate::canon::{key, KEY_SEED};
pub use distinct::{default_memory_limit, is_spill_error, parse_size};

/// How records are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// One canonical URL per line (`--key` adds a tab and the fingerprint).
    #[cfg_attr(
        feature = "cli",
        value(
            name = "plain",
            help = "One URL per line (and the columns asked for, tab-separated)"
        )
    )]
    Plain,
    /// `line TAB url TAB key TAB original-or-reason`.
    #[cfg_attr(
        feature = "cli",
        value(
            name = "tsv",
            help = "line, url, key, target or reason, and the columns asked for"
        )
    )]
    Tsv,
    /// One JSON object per line.
    #[cfg_attr(
        feature = "cli",
        value(name = "jsonl", help = "One JSON object per line")
    )]
    Jsonl,
}

/// What is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One output per URL; nothing for a line without URL.
    Records,
    /// Exactly one output line per input line, in order.
    Pipe,
    /// Each canonical URL once, in first-seen order.
    Unique,
    /// Each canonical URL with its count, most frequent first.
    Count,
}

/// Everything a run needs to know.
#[derive(Clone, Debug)]
pub struct Options {
    /// The format, or `None` to detect it per input.
    pub format: Option<LogFormat>,
    /// JSON field paths (`None`: detect a preset per input).
    pub json_paths: Option<JsonPaths>,
    /// CSV/TSV columns (`--columns`; `None`: the preset the header row shows).
    pub csv_columns: Option<Arc<CsvColumns>>,
    /// `--w3c-fields`, as the `#Fields:` line it stands for: the layout of
    /// W3C lines before any `#Fields:` line of the input.
    pub w3c_fields: Option<Arc<[u8]>>,
    /// Which URL of each record.
    pub field: Field,
    /// Canonicalization profile.
    pub profile: Profile,
    /// The dedup rules (`--rule`, `--rules`); `None`: the profile's tier
    /// with the default lists.
    pub rules: Option<Arc<RuleSet>>,
    /// `--dedup-key`: the key profile and its rules; each URL gets a dedup
    /// key and its fingerprint beside it.
    pub dedup: Option<(Profile, Arc<RuleSet>)>,
    /// `--explain`: write the rules that changed each URL.
    pub explain: bool,
    /// `--surt`: write URLs in this SURT form.
    pub surt: Option<SurtForm>,
    /// With `--unique`/`--count`: count, per rule, the distinct URLs it merged
    /// (a hash of each URL as it was before the rules, which the canonicalizer keeps).
    pub rule_merges: bool,
    /// Scheme and host for origin-form targets of records without a host;
    /// the base of relative references in `plain` input.
    pub base: Option<Base>,
    /// `--scheme`: the scheme of records that log none.
    pub scheme: Option<Scheme>,
    /// Output format.
    pub output: OutputFormat,
    /// Output mode.
    pub mode: Mode,
    /// Add the fingerprint to plain output.
    pub key: bool,
    /// Worker threads.
    pub threads: usize,
    /// Bytes per piece.
    pub chunk_len: usize,
    /// Read the byte ranges of a regular uncompressed file (not followed)
    /// from maps of the file rather than with `pread` (`--no-mmap` turns
    /// it off): no copy out of the page cache. A file truncated while a
    /// range of it is read is reported as with `pread` (the maps' `SIGBUS`
    /// is caught: `input/sigbus.rs`).
    pub mmap: bool,
    /// Longest line read; longer lines are rejected.
    pub max_line: usize,
    /// Collect `--rejects` lines.
    pub rejects: bool,
    /// How many rejects to describe on the diagnostics stream (0: none,
    /// and no line saying how many were not shown: `--quiet`).
    pub max_diagnostics: usize,
    /// Write a header row of column names first (`--format tsv`).
    pub header: bool,
    /// Ends a followed input ([`Source::Follow`]): once it is set, the
    /// input is read to its current end and ends there, and the run finishes
    /// as at the end of any input (the pieces in flight are written,
    /// `--count` tables and the summary follow). A flag rather than a
    /// method on a running pipeline, because it is set from a signal
    /// handler (`--follow` sets it on SIGINT and SIGTERM), where only an
    /// atomic store is allowed. `None`: followed until the output fails.
    /// The run sets it too when the output fails (a closed pipe), so that
    /// the reader, which may be waiting for the file to grow, ends.
    /// Inputs that are not followed ignore it.
    pub follow_stop: Option<Arc<AtomicBool>>,
    /// `--memory`: bytes the distinct table of `--unique`/`--count` may
    /// take (URL bytes, entries, hash table) before it is written to
    /// `temp_dir` as a sorted run; `None`: [`distinct::default_memory_limit`].
    pub memory_limit: Option<u64>,
    /// `--temp-dir`: where sorted runs go; `None`: the system's temporary
    /// directory (`TMPDIR`, else `/tmp`).
    pub temp_dir: Option<PathBuf>,
    /// `--top N` (with `--count`): only the N most frequent URLs.
    pub top: Option<u64>,
    /// `--min-count N` (with `--count`): only URLs counted at least N times.
    pub min_count: Option<u64>,
    /// `--with`: the record's other fields as columns of `tsv`/`jsonl`
    /// record rows, after the run's own columns.
    pub with: Vec<RecordColumn>,
    /// `--status`, `--method`: which records to keep.
    pub filter: RecordFilter,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: None,
            json_paths: None,
            csv_columns: None,
            w3c_fields: None,
            field: Field::Request,
            profile: Profile::Rfc3986,
            rules: None,
            dedup: None,
            explain: false,
            surt: None,
            rule_merges: false,
            base: None,
            scheme: None,
            output: OutputFormat::Plain,
            mode: Mode::Records,
            key: false,
            threads: 1,
            chunk_len: DEFAULT_CHUNK_LEN,
            mmap: true,
            max_line: DEFAULT_MAX_LINE,
            rejects: false,
            max_diagnostics: 20,
            header: false,
            follow_stop: None,
            memory_limit: None,
            temp_dir: None,
            top: None,
            min_count: None,
            with: Vec::new(),
            filter: RecordFilter::default(),
        }
    }
}

/// Default bytes per piece: large enough that per-piece costs (a channel
/// message, a buffer swap) vanish, small enough that a few per thread stay
/// within a small memory budget.
pub const DEFAULT_CHUNK_LEN: usize = 1 << 20;

/// Jobs a run into sinks queues for its workers: 8 byte ranges, about
/// 4 ms of work for two workers at 1 GB/s each. Each queued range of a
/// regular file is mapped with its pages in (`input/mapped.rs`), which
/// counts in the peak RSS: 32 put 27 MiB on `canonurl mine -j 1`'s peak.
const RANGES_AHEAD: usize = 8;

/// Default longest line: 1 MiB.
pub const DEFAULT_MAX_LINE: usize = 1 << 20;

/// Where a run's bytes go.
pub struct Sinks<'a> {
    /// Data.
    pub out: &'a mut dyn Write,
    /// `--rejects` lines.
    pub rejects: Option<&'a mut dyn Write>,
    /// Diagnostics (stderr).
    pub diag: &'a mut dyn Write,
    /// Called after each piece with the raw (compressed) bytes read so far
    /// and the lines counted so far.
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
}

/// Runs over `sources` in order. Errors of an input (unreadable, not a
/// known format, truncated) are reported on `sinks.diag`, recorded in the
/// summary, and the run goes on with the next input; only a failure to
/// write the output stops it (`Err`).
///
/// ```
/// use canonurl::input::Source;
/// use canonurl::pipeline::{run, Mode, Options, Sinks};
/// use canonurl::Profile;
///
/// let dir = std::env::temp_dir().join("canonurl-run-example");
/// std::fs::create_dir_all(&dir).unwrap();
/// let urls = dir.join("urls.txt");
/// std::fs::write(&urls, "http://a.example/x?utm_source=m\nhttp://A.example/x\nhttp://a.example/y\n").unwrap();
/// let sources = [Source::Path(urls), Source::Path(dir.join("missing.log"))];
/// let opts = Options { mode: Mode::Count, profile: Profile::Safe, ..Options::default() };
/// let (mut out, mut diag) = (Vec::new(), Vec::new());
/// let sinks = Sinks { out: &mut out, rejects: None, diag: &mut diag, progress: None };
/// let summary = run(&sources, &opts, sinks).unwrap();
/// // Each URL with its count, most frequent first.
/// assert_eq!(out, b"http://a.example/x\t2\nhttp://a.example/y\t1\n");
/// assert_eq!(summary.distinct, Some(2));
/// // The missing input is reported and recorded; the run went on.
/// assert!(summary.had_errors());
/// assert!(summary.files[1].error.as_ref().unwrap().starts_with("cannot open"));
/// assert!(!diag.is_empty());
/// ```
pub fn run(sources: &[Source], opts: &Options, sinks: Sinks<'_>) -> io::Result<Summary> {
    run_with(sources, opts, sinks, None)
}

/// Runs over `sources` as [`run`] does, but each worker hands its records
/// to a [`RecordSink`] of its own, made by `make` on the worker's thread,
/// instead of writing rows: nothing is written to `sinks.out`. Lines are
/// counted and rejected lines reported as in any run; each sink's
/// [`RecordSink::done`] is called when its worker has no more work.
pub(crate) fn run_into(
    sources: &[Source],
    opts: &Options,
    sinks: Sinks<'_>,
    make: &(dyn Fn() -> Box<dyn RecordSink> + Sync),
) -> io::Result<Summary> {
    run_with(sources, opts, sinks, Some(make))
}

fn run_with(
    sources: &[Source],
    opts: &Options,
    sinks: Sinks<'_>,
    make: Option<&(dyn Fn() -> Box<dyn RecordSink> + Sync)>,
) -> io::Result<Summary> {
    let started = Instant::now();
    let opts = Arc::new(opts.clone());
    let threads = opts.threads.max(1);
    // Buffers in flight: enough that every worker has one to process and
    // one queued, bounded so memory does not grow with the core count.
    let pool = (threads * 2 + 2).clamp(4, 32);
    // A run into sinks queues byte ranges without buffers (`worker::work`):
    // more of them ahead cost nothing, and a reader kept off the cores
    // for a while leaves its workers work.
    let queued = if make.is_some() {
        pool.max(RANGES_AHEAD)
    } else {
        pool
    };
    let (job_tx, job_rx) = bounded::<Job>(queued);
    let (done_tx, done_rx) = unbounded::<Done>();
    let (free_tx, free_rx) = bounded::<Vec<u8>>(pool);
    let (out_free_tx, out_free_rx) = unbounded::<Box<PieceOut>>();
    for _ in 0..pool {
        let _ = free_tx.send(Vec::new());
    }
    let raw_read = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let follow_stop = opts.follow_stop.clone().unwrap_or_default();

    std::thread::scope(|scope| {
        let reader = reader::Reader::new(
            &opts,
            job_tx,
            free_rx,
            Arc::clone(&raw_read),
            Arc::clone(&stop),
            Arc::clone(&follow_stop),
            make.is_some(),
        );
        scope.spawn(move || reader.run(sources));
        for _ in 0..threads {
            let job_rx = job_rx.clone();
            let done_tx = done_tx.clone();
            let out_free_rx = out_free_rx.clone();
            let opts = Arc::clone(&opts);
            // A run into sinks writes no rows: its workers send each
            // input buffer back to the pool themselves (`worker::work`).
            let free_tx = make.map(|_| free_tx.clone());
            scope.spawn(move || {
                let sink = make.map(|make| make()).zip(free_tx);
                worker::work(opts, job_rx, done_tx, out_free_rx, sink)
            });
        }
        drop(job_rx);
        drop(done_tx);
        let writer = writer::Writer::new(
            &opts,
            sinks,
            free_tx,
            out_free_tx,
            &raw_read,
            [&stop, &follow_stop],
        );
        let result = writer.run(done_rx, started);
        if result.is_err() {
            // Output failed: stop reading; workers drain and exit.
            stop.store(true, Ordering::Relaxed);
            follow_stop.store(true, Ordering::Relaxed);
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::info::Info;
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    /// What the sinks of [`a_held_worker_does_not_hold_up_the_others`]
    /// share.
    #[derive(Default)]
    struct Shared {
        /// A sink holds its worker at its first record.
        taken: bool,
        /// Pieces the other workers finished meanwhile.
        pieces: usize,
        /// The held worker gave up waiting for them.
        timed_out: bool,
    }

    /// A sink that, in the first worker to get a record, waits at that
    /// record until the other workers have finished `PIECES` pieces.
    struct HoldingSink {
        shared: Arc<(Mutex<Shared>, Condvar)>,
        held: Option<bool>,
    }

    const PIECES: usize = 40;

    impl RecordSink for HoldingSink {
        fn record(&mut self, _url: &[u8], _line: &[u8], _info: &Info) {
            if self.held.is_some() {
                return;
            }
            let (lock, wake) = &*self.shared;
            let mut s = lock.lock().unwrap();
            self.held = Some(!s.taken);
            if s.taken {
                return;
            }
            s.taken = true;
            let (mut s, waited) = wake
                .wait_timeout_while(s, Duration::from_secs(20), |s| s.pieces < PIECES)
                .unwrap();
            s.timed_out = waited.timed_out();
        }

        fn piece_end(&mut self) {
            if self.held == Some(false) {
                let (lock, wake) = &*self.shared;
                lock.lock().unwrap().pieces += 1;
                wake.notify_all();
            }
        }

        fn done(self: Box<Self>) {}
    }

    /// A file of `n` URLs, one a line, in a new temporary directory.
    fn url_file(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("urls.txt");
        let lines: String = (0..n).map(|i| format!("http://a.example/{i}\n")).collect();
        std::fs::write(&path, lines).unwrap();
        (dir, path)
    }

    /// `run_into` over the file at `path` with `make`'s sinks: the run's
    /// summary and what it wrote to the diagnostics stream.
    fn run_sinks(
        path: &std::path::Path,
        opts: &Options,
        make: &(dyn Fn() -> Box<dyn RecordSink> + Sync),
    ) -> (Summary, String) {
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        let sinks = Sinks {
            out: &mut out,
            rejects: None,
            diag: &mut diag,
            progress: None,
        };
        let summary = run_into(&[Source::Path(path.to_path_buf())], opts, sinks, make).unwrap();
        (summary, String::from_utf8(diag).unwrap())
    }

    /// In a run into sinks, a worker held up on a piece does not hold up
    /// the others: they go on through the rest of the input. (When the
    /// buffers went back through the writer in input order, the other
    /// worker stopped after the few pieces the pool held, until the held
    /// one was done.)
    #[test]
    fn a_held_worker_does_not_hold_up_the_others() {
        let (_dir, path) = url_file(20_000);
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let make = || -> Box<dyn RecordSink> {
            Box::new(HoldingSink {
                shared: Arc::clone(&shared),
                held: None,
            })
        };
        let opts = Options {
            format: Some(LogFormat::Plain),
            threads: 2,
            chunk_len: 4096,
            ..Options::default()
        };
        let (summary, _) = run_sinks(&path, &opts, &make);
        assert_eq!(summary.stats.lines, 20_000);
        let s = shared.0.lock().unwrap();
        assert!(s.pieces >= PIECES, "{} pieces", s.pieces);
        assert!(!s.timed_out);
    }

    /// A sink that truncates its file when it gets the record of one URL:
    /// as `logrotate`'s `copytruncate` would, while the worker reads the
    /// range's map.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    struct TruncatingSink {
        path: std::path::PathBuf,
        at: &'static [u8],
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    impl RecordSink for TruncatingSink {
        fn record(&mut self, url: &[u8], _line: &[u8], _info: &Info) {
            if url.ends_with(self.at) {
                let file = std::fs::OpenOptions::new().write(true).open(&self.path);
                file.unwrap().set_len(0).unwrap();
            }
        }

        fn done(self: Box<Self>) {}
    }

    /// A file truncated while a worker reads a range of it from a map does
    /// not end the process with `SIGBUS`: the run reports that it shrank,
    /// naming the bytes read from the map.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_file_truncated_while_its_map_is_read_is_reported() {
        let (_dir, path) = url_file(20_000);
        let make = || -> Box<dyn RecordSink> {
            Box::new(TruncatingSink {
                path: path.clone(),
                // In the third 16 KiB range (the reader reads the first
                // piece itself).
                at: b"/2000",
            })
        };
        let opts = Options {
            format: Some(LogFormat::Plain),
            threads: 1,
            chunk_len: 16 * 1024,
            ..Options::default()
        };
        assert!(opts.mmap);
        let (summary, diag) = run_sinks(&path, &opts, &make);
        let error = summary.files[0].error.as_deref().unwrap_or("");
        assert!(
            error.contains("shrank") && error.contains("memory map"),
            "{error}"
        );
        assert!(summary.stats.lines < 20_000);
        // Said once, though every later range fails alike.
        assert_eq!(diag.matches("shrank").count(), 1, "{diag}");
    }
}
