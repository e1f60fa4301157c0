//! Output: the whole run, from inputs to output bytes, on several threads.
//!
//! ```text
//! reader thread ──pieces──▶ N workers ──results──▶ calling thread (writer)
//!       ▲                                              │
//!       └──────────── empty buffers (a fixed pool) ◀───┘
//! ```
//!
//! The reader opens each input, detects its format, and cuts it into pieces
//! of whole lines. Workers turn pieces into output bytes in parallel. The
//! writer puts results back in input order and writes them. Buffers go round
//! a fixed pool, so memory stays bounded whatever the input size: the reader
//! waits for a free buffer when the writer falls behind. With `--unique` and
//! `--count` the writer hands each URL to the distinct table
//! ([`distinct`]), which stays within `--memory` by spilling sorted runs.

pub mod distinct;
pub mod stats;
pub mod worker;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::canon::rules::RuleSet;
use crate::canon::surt::SurtForm;
use crate::input::{self, Chunker, Piece, Source};
use crate::log::detect::detect;
use crate::log::json::{JsonExtractor, JsonPaths, JsonPreset};
use crate::log::{Field, LineError, LogFormat};
use crate::{Base, Profile};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use distinct::Distinct;
use stats::{FileReport, Stats, Summary, Why};
use worker::{PieceOut, Worker};

pub use distinct::is_spill_error;
pub use worker::{key, KEY_SEED};

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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: None,
            json_paths: None,
            field: Field::Request,
            profile: Profile::Rfc3986,
            rules: None,
            dedup: None,
            explain: false,
            surt: None,
            rule_merges: false,
            base: None,
            output: OutputFormat::Plain,
            mode: Mode::Records,
            key: false,
            threads: 1,
            chunk_len: DEFAULT_CHUNK_LEN,
            max_line: DEFAULT_MAX_LINE,
            rejects: false,
            max_diagnostics: 20,
            header: false,
            follow_stop: None,
            memory_limit: None,
            temp_dir: None,
            top: None,
            min_count: None,
        }
    }
}

/// Default bytes per piece: large enough that per-piece costs (a channel
/// message, a buffer swap) vanish, small enough that a few per thread stay
/// within a small memory budget.
pub const DEFAULT_CHUNK_LEN: usize = 1 << 20;

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
    /// Called after each piece with the raw (compressed) bytes read so far.
    pub progress: Option<&'a mut dyn FnMut(u64)>,
}

/// What a piece belongs to.
#[derive(Debug)]
pub struct FileCtx {
    /// Index of the input.
    pub id: usize,
    /// Name in diagnostics.
    pub name: Arc<str>,
    /// Its format.
    pub format: LogFormat,
    /// JSON paths, for `json`.
    pub json_paths: Option<JsonPaths>,
}

enum Job {
    Piece {
        seq: u64,
        ctx: Arc<FileCtx>,
        piece: Piece,
    },
    Event {
        seq: u64,
        event: Event,
    },
}

enum Event {
    /// An input starts: its report so far.
    Start(Box<FileReport>),
    /// An input ended, maybe with an error.
    End(Option<String>),
}

enum Done {
    Piece {
        seq: u64,
        buf: Vec<u8>,
        result: Box<PieceOut>,
        ctx: Arc<FileCtx>,
    },
    Event {
        seq: u64,
        event: Event,
    },
}

impl Done {
    fn seq(&self) -> u64 {
        match self {
            Done::Piece { seq, .. } | Done::Event { seq, .. } => *seq,
        }
    }
}

/// How much of an input the format guess looks at.
const DETECT_BYTES: usize = 64 * 1024;

/// Runs over `sources` in order. Errors of an input (unreadable, not a
/// known format, truncated) are reported on `sinks.diag`, recorded in the
/// summary, and the run goes on with the next input; only a failure to
/// write the output stops it (`Err`).
pub fn run(sources: &[Source], opts: &Options, sinks: Sinks<'_>) -> io::Result<Summary> {
    let started = Instant::now();
    let opts = Arc::new(opts.clone());
    let threads = opts.threads.max(1);
    // Buffers in flight: enough that every worker has one to process and
    // one queued, bounded so memory does not grow with the core count.
    let pool = (threads * 2 + 2).clamp(4, 32);
    let (job_tx, job_rx) = bounded::<Job>(pool);
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
        {
            let opts = Arc::clone(&opts);
            let raw_read = Arc::clone(&raw_read);
            let stop = Arc::clone(&stop);
            let follow_stop = Arc::clone(&follow_stop);
            scope.spawn(move || {
                read_all(sources, &opts, job_tx, free_rx, raw_read, stop, follow_stop)
            });
        }
        for _ in 0..threads {
            let job_rx = job_rx.clone();
            let done_tx = done_tx.clone();
            let out_free_rx = out_free_rx.clone();
            let opts = Arc::clone(&opts);
            scope.spawn(move || work(opts, job_rx, done_tx, out_free_rx));
        }
        drop(job_rx);
        drop(done_tx);
        let result = write_all(
            &opts,
            done_rx,
            free_tx,
            out_free_tx,
            sinks,
            &raw_read,
            started,
        );
        if result.is_err() {
            // Output failed: stop reading; workers drain and exit.
            stop.store(true, Ordering::Relaxed);
            follow_stop.store(true, Ordering::Relaxed);
        }
        result
    })
}

/// The reader thread.
fn read_all(
    sources: &[Source],
    opts: &Options,
    jobs: Sender<Job>,
    free: Receiver<Vec<u8>>,
    raw_read: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    follow_stop: Arc<AtomicBool>,
) {
    let mut seq = 0u64;
    let send = |job: Job| jobs.send(job).is_ok();
    // A buffer taken from the pool that does not go out in a piece (the end
    // of an input, an error, an input that is not read on) must be made up
    // for, or the pool shrinks by one per input until the reader waits
    // forever. The reader counts them and uses a new empty buffer instead of
    // waiting for one. (Not by sending to the pool itself: holding a sender
    // would keep `recv` from failing when the writer has stopped.)
    let mut spare = 0usize;
    let take = |spare: &mut usize| -> Option<Vec<u8>> {
        if *spare > 0 {
            *spare -= 1;
            Some(Vec::new())
        } else {
            free.recv().ok()
        }
    };
    for (id, source) in sources.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let name: Arc<str> = Arc::from(source.name());
        let mut report = FileReport {
            name: name.to_string(),
            format: None,
            detected: false,
            json_preset: None,
            compression: "none",
            error: None,
            stats: Stats::default(),
        };
        let opened = match source {
            Source::Follow(path) => input::follow::open(path, Arc::clone(&follow_stop)),
            _ => input::open(source, Arc::clone(&raw_read)),
        };
        let input = match opened {
            Ok(i) => i,
            Err(e) => {
                report.error = Some(format!("cannot open: {e}"));
                if !send(Job::Event {
                    seq,
                    event: Event::Start(Box::new(report)),
                }) {
                    return;
                }
                seq += 1;
                continue;
            }
        };
        report.compression = input.compression.name();
        let counted = input.counted;
        let streaming = input.size.is_none();
        let mut chunker =
            Chunker::with_head(input.head, input.reader, opts.chunk_len, opts.max_line);
        chunker.track_header(
            opts.format
                .map_or_else(LogFormat::any_header_line, LogFormat::header_line),
        );
        chunker.set_streaming(streaming);
        let Some(buf) = take(&mut spare) else { return };
        let first = chunker.next_piece(buf);
        // The format: given, or guessed from the first piece.
        // A first line too long to read whole still shows the record's
        // shape in its first bytes.
        let sample: &[u8] = match &first {
            Ok(Some(Piece::Lines { buf, .. }))
            | Ok(Some(Piece::TooLong { buf, .. }))
            | Ok(Some(Piece::Fragment { buf, .. })) => &buf[..buf.len().min(DETECT_BYTES)],
            _ => &[],
        };
        let format = match opts.format {
            Some(f) => Some(f),
            None => {
                report.detected = true;
                detect(sample)
            }
        };
        let Some(format) = format else {
            spare += 1;
            report.error = Some(format!(
                "cannot detect the log format (first line: {}); give it with -f",
                first_line_preview(sample)
            ));
            if !send(Job::Event {
                seq,
                event: Event::Start(Box::new(report)),
            }) {
                return;
            }
            seq += 1;
            continue;
        };
        if !format.has_header_state() {
            chunker.track_header(None);
        }
        report.format = Some(format);
        let json_paths = if format == LogFormat::Json {
            match &opts.json_paths {
                Some(p) => {
                    report.json_preset = Some("custom");
                    Some(p.clone())
                }
                None => {
                    let lines = sample.split(|&b| b == b'\n').take(200);
                    let preset = JsonExtractor::detect_preset(lines).unwrap_or(JsonPreset::Nginx);
                    report.json_preset = Some(preset.name());
                    Some(preset.paths())
                }
            }
        } else {
            None
        };
        let ctx = Arc::new(FileCtx {
            id,
            name: Arc::clone(&name),
            format,
            json_paths,
        });
        if !send(Job::Event {
            seq,
            event: Event::Start(Box::new(report)),
        }) {
            return;
        }
        seq += 1;
        let mut next = first;
        let mut handed_out = 0;
        let end = loop {
            if !counted {
                // Uncompressed: the bytes handed out are the bytes read.
                raw_read.fetch_add(chunker.bytes - handed_out, Ordering::Relaxed);
                handed_out = chunker.bytes;
            }
            match next {
                Ok(Some(piece)) => {
                    if !send(Job::Piece {
                        seq,
                        ctx: Arc::clone(&ctx),
                        piece,
                    }) {
                        return;
                    }
                    seq += 1;
                }
                Ok(None) => {
                    spare += 1;
                    break None;
                }
                Err(e) => {
                    spare += 1;
                    break Some(read_error(&e));
                }
            }
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let Some(buf) = take(&mut spare) else { return };
            next = chunker.next_piece(buf);
        };
        if !send(Job::Event {
            seq,
            event: Event::End(end),
        }) {
            return;
        }
        seq += 1;
    }
}

fn read_error(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        format!("input is truncated (compressed stream ends early): {e}")
    } else {
        format!("read error: {e}")
    }
}

fn first_line_preview(sample: &[u8]) -> String {
    let line = sample.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = &line[..line.len().min(80)];
    format!("{:?}", String::from_utf8_lossy(line))
}

/// A worker thread.
fn work(
    opts: Arc<Options>,
    jobs: Receiver<Job>,
    done: Sender<Done>,
    out_free: Receiver<Box<PieceOut>>,
) {
    let mut worker = Worker::new(Arc::clone(&opts));
    for job in jobs {
        let msg = match job {
            Job::Event { seq, event } => Done::Event { seq, event },
            Job::Piece { seq, ctx, piece } => {
                let mut result = out_free.try_recv().unwrap_or_default();
                let buf = match piece {
                    Piece::Lines {
                        buf,
                        first_line,
                        header,
                        ..
                    } => {
                        result.out.reserve(buf.len() + buf.len() / 4);
                        worker.piece(&ctx, &buf, first_line, header.as_deref(), &mut result);
                        buf
                    }
                    Piece::TooLong {
                        line,
                        len,
                        line_end,
                        buf,
                    } => {
                        result.stats.bytes += len + u64::from(line_end);
                        let why = Why::Line(LineError::LineTooLong);
                        worker.lost_line(&ctx, line, &buf, why, opts.max_line, &mut result);
                        buf
                    }
                    Piece::Fragment { line, buf } => {
                        result.stats.bytes += buf.len() as u64;
                        let at = buf.len();
                        worker.lost_line(&ctx, line, &buf, Why::TruncatedInput, at, &mut result);
                        buf
                    }
                };
                Done::Piece {
                    seq,
                    buf,
                    result,
                    ctx,
                }
            }
        };
        if done.send(msg).is_err() {
            return;
        }
    }
}

/// The writer, on the calling thread.
#[allow(clippy::too_many_arguments)]
fn write_all(
    opts: &Options,
    done: Receiver<Done>,
    free: Sender<Vec<u8>>,
    out_free: Sender<Box<PieceOut>>,
    mut sinks: Sinks<'_>,
    raw_read: &AtomicU64,
    started: Instant,
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    let rules = opts
        .rules
        .as_ref()
        .map_or(opts.profile.rule_mask(), |r| r.any_enabled());
    summary.rules = (!rules.is_empty()).then_some(rules);
    let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    let mut distinct = matches!(opts.mode, Mode::Unique | Mode::Count).then(|| Distinct::new(opts));
    let mut described = 0usize;
    if opts.header && opts.output == OutputFormat::Tsv {
        sinks.out.write_all(worker::tsv_header(opts).as_bytes())?;
    }
    loop {
        let msg = match done.try_recv() {
            Ok(msg) => msg,
            Err(_) => {
                // Nothing ready: the input is slower than we are (a pipe
                // from `tail -f`). Flush what was written so that it is seen
                // now, not when the buffer fills.
                sinks.out.flush()?;
                match done.recv() {
                    Ok(msg) => msg,
                    Err(_) => break,
                }
            }
        };
        waiting.insert(msg.seq(), msg);
        while let Some(msg) = waiting.remove(&next) {
            next += 1;
            match msg {
                Done::Event { event, .. } => match event {
                    Event::Start(report) => {
                        if let Some(e) = &report.error {
                            writeln!(sinks.diag, "canonurl: {}: {e}", report.name)?;
                        }
                        summary.files.push(*report);
                    }
                    Event::End(error) => {
                        if let Some(e) = error {
                            if let Some(f) = summary.files.last_mut() {
                                writeln!(sinks.diag, "canonurl: {}: {e}", f.name)?;
                                f.error = Some(e);
                            }
                        }
                    }
                },
                Done::Piece {
                    buf,
                    mut result,
                    ctx,
                    ..
                } => {
                    match distinct.as_mut() {
                        Some(d) => {
                            let mut start = 0;
                            for (i, &k) in result.keys.iter().enumerate() {
                                let end = start
                                    + memchr::memchr(b'\n', &result.out[start..]).unwrap_or(0);
                                let url = &result.out[start..end];
                                let field = result.fields.get(i).copied().unwrap_or(0);
                                d.add(sinks.out, k, field, url, result.pre.get(i).copied())?;
                                start = end + 1;
                            }
                        }
                        None => sinks.out.write_all(&result.out)?,
                    }
                    if let Some(r) = sinks.rejects.as_mut() {
                        r.write_all(&result.rejects)?;
                    }
                    for (line, message) in result.diagnostics.drain(..) {
                        if described < opts.max_diagnostics {
                            writeln!(sinks.diag, "canonurl: {}:{line}: {message}", ctx.name)?;
                            described += 1;
                        }
                    }
                    if let Some(f) = summary.files.last_mut() {
                        f.stats.merge(&result.stats);
                    }
                    summary.stats.merge(&result.stats);
                    if let Some(p) = sinks.progress.as_mut() {
                        p(raw_read.load(Ordering::Relaxed));
                    }
                    result.out.clear();
                    result.keys.clear();
                    result.pre.clear();
                    result.fields.clear();
                    result.rejects.clear();
                    result.stats = Stats::default();
                    let _ = out_free.send(result);
                    let mut buf = buf;
                    if buf.capacity() > 2 * opts.chunk_len {
                        // Grown for one long line: give the memory back.
                        buf = Vec::new();
                    }
                    let _ = free.try_send(buf);
                }
            }
        }
    }
    let total_rejected = summary.stats.rejected_total();
    if opts.max_diagnostics > 0 && total_rejected > described as u64 {
        writeln!(
            sinks.diag,
            "canonurl: {} more rejected lines not shown (--rejects FILE lists them all)",
            total_rejected - described as u64
        )?;
    }
    if let Some(d) = distinct {
        d.finish(sinks.out, &mut summary)?;
    }
    sinks.out.flush()?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}
