//! From lines to output bytes: one worker turns one piece of input into its
//! output, its statistics and its reject reports, with no allocation per line.
//!
//! One line loop ([`Worker::each_line`]) goes over the lines of a piece and
//! sends what each gave to the run's [`Sink`] (rows, `--pipe` lines, the
//! distinct table, the summary table), chosen once. It is generic over what
//! reads a line ([`Extract`]: a `plain` line is its own URL; a log's line
//! is read by its format's reader) and over the sink, and takes one of two
//! paths per piece, fixed at compile time for each copy of the loop: bare,
//! when the sink takes each URL alone and nothing else is wanted of it
//! (`Worker::bare`), the line's URL is canonicalized straight into the
//! output; full, each wanted field's URL is canonicalized with everything
//! the options ask for and the line's slots go to the sink. Both turn a
//! record's field into what to canonicalize in one place (`field_input`).
//! One loop stands apart, for speed: a bare `plain` piece whose output is
//! the URL and a `\n` (`Worker::as_is_lines`), where a line that is its own
//! canonical URL is its own output and the scan that says so finds its
//! end; the other lines go the bare path one at a time.

use std::sync::Arc;

use xxhash_rust::xxh64::xxh64;

use super::hosted::HostPrefixes;
use super::lines::{Lines, NO_ENDS};
use super::sink::{LineOut, RunSink, Sink, Summary};
use super::stats::{Stats, Why};
use super::{Done, FileCtx, Job, Mode, Options};
use crate::canon::rules::RuleMask;
use crate::canon::surt::surt;
use crate::canon::InLineScan;
use crate::canon::LineScan;
use crate::input::range::read_owned_lines;
use crate::input::Piece;
use crate::log::info::Info;
use crate::log::{base_prefix, request_url_of, RequestUrl, Skip};
use crate::log::{Extract, Extracted, Field, Line, LineError, LogFormat, RecordReader};
use crate::log::{ReadOptions, ReaderLoop};
use crate::output::KEY_SEED;
use crate::url::simd::{self, Chunk};
use crate::{Canonical, Canonicalizer};
use crossbeam_channel::{Receiver, Sender};

use crate::ascii;
use crate::input::TOO_LONG_HEAD;

/// A URL of a piece for the distinct table of `--unique`/`--count`: its
/// bytes are `PieceOut::out[start..end]`.
#[derive(Clone, Copy, Debug)]
pub struct DistinctUrl {
    /// XXH64 of the URL.
    pub key: u64,
    pub start: usize,
    pub end: usize,
    /// 0 for the request, 1 for the referer of `--field both`.
    pub field: u8,
    /// Rule statistics: the fingerprint before the rules, the rules that fired.
    pub pre: Option<(u64, RuleMask)>,
}

/// A rejected line, for the writer to report: it knows the line numbers
/// of the input, which a piece read from the middle of a file may not.
#[derive(Clone, Copy, Debug)]
pub struct Rejected {
    /// Index of the line in its piece (0 for the first).
    pub index: u64,
    pub why: Why,
    /// Offset in the line where reading it stopped.
    pub at: usize,
    /// The line's bytes for `--rejects`: `PieceOut::rejected_lines[start..end]`.
    pub start: usize,
    pub end: usize,
}

/// What a worker made of one piece.
#[derive(Debug, Default)]
pub struct PieceOut {
    /// Output bytes: rows to write, or for `--unique`/`--count` the URLs of
    /// `distinct` back to back.
    pub out: Vec<u8>,
    /// `--unique`/`--count`: the URLs of the piece.
    pub distinct: Vec<DistinctUrl>,
    /// The first rejected lines (as many as stderr describes), or all of
    /// them with `--rejects`.
    pub rejected: Vec<Rejected>,
    /// Bytes of the rejected lines kept for `--rejects`.
    pub rejected_lines: Vec<u8>,
    /// Counts.
    pub stats: Stats,
    /// The piece could not be read whole (a byte range of a file that
    /// shrank, or failed to read): the error, for the writer to report.
    pub error: Option<String>,
}

impl PieceOut {
    /// Empties it for the next piece, keeping the buffers.
    pub fn clear(&mut self) {
        self.out.clear();
        self.distinct.clear();
        self.rejected.clear();
        self.rejected_lines.clear();
        self.stats = Stats::default();
        self.error = None;
    }
}

/// The result for one wanted field of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// A URL, at this range of `Urls::bytes`, and its index in `Urls::extras`.
    Url(usize, usize, usize),
    Skip(Skip),
    Reject(Why, usize),
}

/// What else is known of one URL of a line.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Extra {
    /// The dedup rules that changed it.
    pub fired: RuleMask,
    /// Its dedup key, at this range of `Urls::dedup` (`None`: no key, the
    /// key profile rejected the URL).
    pub dedup: Option<(usize, usize)>,
    /// Fingerprint of the URL before the dedup rules (rule statistics).
    pub pre_key: u64,
    /// `--explain`: the ids of the rewrite rules that fired, at this range
    /// of `Urls::rewrites`.
    pub rewrites: (usize, usize),
}

/// The canonicalizers and the canonical URLs of the current line.
pub(super) struct Urls {
    canon: Canonicalizer,
    /// `--dedup-key`: the key profile's canonicalizer.
    key_canon: Option<Canonicalizer>,
    /// Canonical URLs of the line.
    pub bytes: Vec<u8>,
    /// Per URL of the line.
    pub extras: Vec<Extra>,
    /// Dedup keys of the line.
    pub dedup: Vec<u8>,
    /// Rule statistics with `--unique`/`--count`: fingerprint each URL as it
    /// was before the rules too.
    pub merges: bool,
    /// `--surt`: the SURT form is built here, then replaces the URL.
    surt: Option<crate::canon::surt::SurtForm>,
    surt_buf: Vec<u8>,
    /// `--explain`: the ids of the rewrite rules that fired, per URL of the
    /// line (see `Row::rewrites`).
    explain: bool,
    pub rewrites: Vec<u8>,
}

/// A worker's reusable state.
pub struct Worker {
    opts: Arc<Options>,
    urls: Urls,
    /// `--base`'s scheme and authority, put before origin-form targets of
    /// records that do not say their host.
    base_prefix: Option<Vec<u8>>,
    record: Extracted,
    /// The URL to canonicalize, built from the record's parts.
    built: Vec<u8>,
    /// The canonical prefixes of the hosts records named last
    /// ([`hosted_in_line`](Self::hosted_in_line)).
    hosts: HostPrefixes,
    /// The same for the host fields of lines read by
    /// [`hosted_target_in_line`](Self::hosted_target_in_line), by the
    /// field's bytes.
    host_fields: HostPrefixes,
    /// The reader for the input of the last piece, with that input's index.
    reader: Option<(usize, RecordReader)>,
    /// Nothing is wanted of a URL but its bytes (no dedup key, SURT form,
    /// rule statistics or `--explain`) and every record is kept (no
    /// `--where`): with a sink that takes each URL alone, the line loop
    /// takes the bare path (see the module's doc).
    bare: bool,
    /// The name of the input of the last piece (`--with input`).
    input: Option<Arc<str>>,
    /// Where each line's URLs go: `None` only while a piece is processed.
    sink: Option<RunSink>,
}

/// The reader of `plain` lines for [`Worker::each_line`], which is generic
/// over what reads a line (any [`Extract`]: this, a format's reader itself,
/// or the dispatch over the formats): a line is blank or a URL.
struct PlainList;

impl Extract for PlainList {
    const PLAIN: bool = true;

    #[inline(always)]
    fn extract(&mut self, line: &[u8], _: Field, _: &mut Extracted) -> Line {
        // The first byte first: most lines start with their URL.
        if line.first().is_none_or(|&b| b == b' ' || b == b'\t') && ascii::is_blank(line) {
            Line::Skip(Skip::EmptyLine)
        } else {
            Line::Record
        }
    }
}

/// One piece's lines as [`Worker::each_line`] goes over them.
#[derive(Clone, Copy)]
struct PieceLines<'a> {
    format: LogFormat,
    buf: &'a [u8],
    /// The number of the first line (see [`Worker::piece`]).
    first_line: u64,
}

/// [`Worker::records`] as the loop that [`RecordReader::run_loop`] runs
/// over the reader it picks.
struct RecordsLoop<'a, 'p, S> {
    worker: &'a mut Worker,
    sink: &'a mut S,
    bare: bool,
    piece: &'a PieceLines<'p>,
    out: &'a mut PieceOut,
}

impl<S: Sink> ReaderLoop for RecordsLoop<'_, '_, S> {
    #[inline]
    fn run<R: Extract>(self, reader: &mut R) {
        let RecordsLoop {
            worker,
            sink,
            bare,
            piece,
            out,
        } = self;
        worker.records(sink, bare, reader, piece, out);
    }
}

/// [`Worker::each_line`] with the in-line target scan, on the bare path
/// (`BARE`) or, for a sink of records, the full one, and for a reader that
/// finds hosts in line (`HOSTED`) or not, as a job of `simd::dispatch`: the
/// loop is compiled for the engine the CPU has.
struct InLineLoop<'a, R, S, const BARE: bool, const HOSTED: bool> {
    worker: &'a mut Worker,
    sink: &'a mut S,
    reader: &'a mut R,
    scan: InLineScan,
    piece: PieceLines<'a>,
    out: &'a mut PieceOut,
}

impl<R: Extract, S: Sink, const BARE: bool, const HOSTED: bool> simd::Job
    for InLineLoop<'_, R, S, BARE, HOSTED>
{
    type Output = ();
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) {
        let InLineLoop {
            worker,
            sink,
            reader,
            scan,
            piece,
            out,
        } = self;
        let in_line = Some((chunk, scan));
        worker.each_line::<R, S, C, BARE, HOSTED>(sink, reader, in_line, &piece, out);
    }
}

/// [`Worker::as_is_lines`] as a job of `simd::dispatch`: the loop is
/// compiled for the engine the CPU has.
struct AsIsLoop<'a, 'p, S> {
    worker: &'a mut Worker,
    sink: &'a mut S,
    scan: LineScan,
    piece: &'a PieceLines<'p>,
    out: &'a mut PieceOut,
}

impl<S: Sink> simd::Job for AsIsLoop<'_, '_, S> {
    type Output = ();
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) {
        let AsIsLoop {
            worker,
            sink,
            scan,
            piece,
            out,
        } = self;
        worker.as_is_lines(sink, chunk, scan, piece, out);
    }
}

/// What a worker hands each record with a URL to, instead of writing a
/// row for the writer, when the run has one ([`super::run_into`]): the
/// per-worker summary tables of `canonurl summarize`. Each worker has its
/// own; lines are still counted (and rejected lines reported) as in any
/// run.
pub(crate) trait RecordSink: Send {
    /// One record: its canonical `url`, and the `line` it is read from with
    /// where the record's other fields are in it (`info`; all `None` for a
    /// `plain` line).
    fn record(&mut self, url: &[u8], line: &[u8], info: &Info);

    /// The end of a piece of the input: the next record, if any, is not the
    /// one after the last in the input (another worker may have that one).
    fn piece_end(&mut self) {}

    /// The worker is done: no record follows.
    fn done(self: Box<Self>);
}

/// Runs `$body` with `$s` bound to the worker's sink as its own type, so
/// that what `$body` calls is compiled for that sink: the one dispatch over
/// the kinds of run, once a piece. The sink is out of the worker meanwhile
/// (the loops borrow both).
macro_rules! with_sink {
    ($worker:ident, $s:ident => $body:expr) => {{
        let Some(mut sink) = $worker.sink.take() else {
            return;
        };
        match &mut sink {
            RunSink::Records($s) => $body,
            RunSink::Pipe($s) => $body,
            RunSink::Distinct($s) => $body,
            RunSink::Summary($s) => $body,
        }
        $worker.sink = Some(sink);
    }};
}

impl Worker {
    /// A worker for a run with `opts`.
    pub fn new(opts: Arc<Options>) -> Worker {
        let mut canon = Canonicalizer::new(opts.profile);
        canon.set_base(opts.base.clone());
        if let Some(r) = &opts.rules {
            canon.set_rules(Some(r.clone()));
        }
        let key_canon = opts.dedup.as_ref().map(|(p, r)| {
            let mut c = Canonicalizer::new(*p);
            c.set_base(opts.base.clone());
            c.set_rules(Some(r.clone()));
            c
        });
        let distinct = matches!(opts.mode, Mode::Unique | Mode::Count);
        let merges = opts.rule_merges && canon.rules().is_some() && distinct;
        canon.set_keep_before_rules(merges);
        let base_prefix = opts.base.as_ref().map(|b| base_prefix(b).to_vec());
        let bare = !merges
            && opts.dedup.is_none()
            && opts.surt.is_none()
            && !opts.explain
            && opts.filter.is_empty();
        let hosts = HostPrefixes::new(opts.scheme);
        let mut record = Extracted::default();
        record.want_info(!opts.filter.is_empty() || opts.with.iter().any(|c| c.needs_info()));
        Worker {
            sink: Some(RunSink::new(&opts)),
            urls: Urls {
                canon,
                key_canon,
                bytes: Vec::new(),
                extras: Vec::new(),
                dedup: Vec::new(),
                merges,
                surt: opts.surt,
                surt_buf: Vec::new(),
                explain: opts.explain,
                rewrites: Vec::new(),
            },
            opts,
            base_prefix,
            record,
            built: Vec::new(),
            host_fields: hosts.clone(),
            hosts,
            reader: None,
            bare,
            input: None,
        }
    }

    /// Hands every record to `sink` instead of writing rows (no output
    /// bytes), with the record's other fields noted for it.
    pub(crate) fn set_sink(&mut self, sink: Box<dyn RecordSink>) {
        self.record.want_info(true);
        self.sink = Some(RunSink::Summary(Summary(sink)));
    }

    /// Processes the lines of one piece of `ctx`'s input (the caller counts
    /// its bytes, which a piece read by byte range may not hold all of: see
    /// [`crate::input::range`]); `first_line` is
    /// the number of its first line (the line column of TSV and JSON rows),
    /// `header` the header line in effect where it starts (W3C).
    pub fn piece(
        &mut self,
        ctx: &FileCtx,
        buf: &[u8],
        first_line: u64,
        header: Option<&[u8]>,
        out: &mut PieceOut,
    ) {
        with_sink!(self, s => self.piece_into(s, ctx, buf, first_line, header, out));
    }

    /// [`piece`](Self::piece) with the run's sink: picks, once for the
    /// piece, what reads its lines and which path each line takes, and
    /// runs the one line loop ([`each_line`](Self::each_line)) compiled for
    /// that choice.
    fn piece_into<S: Sink>(
        &mut self,
        sink: &mut S,
        ctx: &FileCtx,
        buf: &[u8],
        first_line: u64,
        header: Option<&[u8]>,
        out: &mut PieceOut,
    ) {
        let bare = S::BARE && self.bare && sink.bare();
        if !self.opts.with.is_empty() && self.input.as_ref() != Some(&ctx.name) {
            self.input = Some(ctx.name.clone());
        }
        let piece = PieceLines {
            format: ctx.format,
            buf,
            first_line,
        };
        if ctx.format == LogFormat::Plain {
            // Nothing reads a URL list's line into the record: cleared once
            // here, none of a record of an earlier input (a log read before
            // it by this worker) is left for `--with` columns or the record
            // sink to read in its lines.
            self.record.clear();
            return self.plain(sink, bare, &piece, out);
        }
        // A new reader for every piece of a W3C log, primed with the
        // `#Fields:` line in effect where the piece starts.
        let reuse = matches!(&self.reader, Some((id, _)) if *id == ctx.id)
            && !ctx.format.has_header_state();
        if !reuse {
            let options = ReadOptions {
                json_paths: ctx.json_paths.clone(),
                csv_columns: self.opts.csv_columns.clone(),
            };
            let mut reader = RecordReader::with_options(ctx.format, options);
            if let Some(fields) = &self.opts.w3c_fields {
                reader.header(fields);
            }
            self.reader = Some((ctx.id, reader));
        }
        // Out of `self` for the loop, which lends `self` to what it calls;
        // put back after it.
        let Some((id, mut reader)) = self.reader.take() else {
            return;
        };
        if let Some(h) = header {
            reader.header(h);
        }
        // Bare: one field's URL, canonicalized straight into the output.
        let bare = bare && self.opts.field != Field::Both;
        // The loop is generic over what reads a line: a format's reader
        // itself, called directly, or the dispatch over formats.
        reader.run_loop(RecordsLoop {
            worker: self,
            sink,
            bare,
            piece: &piece,
            out,
        });
        self.reader = Some((id, reader));
    }

    /// The line loop of a `plain` piece: with no rules and a sink whose
    /// bare output is the URL and a `\n`, [`as_is_lines`](Self::as_is_lines),
    /// else the one line loop.
    // Out of line (it runs once a piece): inlined into `piece`, its loop's
    // code moved with the log loops' and cost up to 8 instructions a URL
    // more (pipeline/plain-whatwg 357.6 against 350.6).
    #[inline(never)]
    fn plain<S: Sink>(
        &mut self,
        sink: &mut S,
        bare: bool,
        piece: &PieceLines<'_>,
        out: &mut PieceOut,
    ) {
        let (r, none) = (&mut PlainList, None::<(simd::Table, InLineScan)>);
        if !bare {
            self.each_line::<_, S, _, false, false>(sink, r, none, piece, out)
        } else if let Some(scan) = self.urls.canon.line_scan().filter(|_| sink.url_is_line()) {
            simd::dispatch(AsIsLoop {
                worker: self,
                sink,
                scan,
                piece,
                out,
            });
        } else {
            self.each_line::<_, S, _, true, false>(sink, r, none, piece, out)
        }
    }

    /// The line loop of a bare `plain` piece whose sink writes a URL and a
    /// `\n` (see [`plain`](Self::plain)): a line that is its own canonical
    /// URL is its own output. Those lines are not copied one by one but
    /// written a run at a time from the piece, before the next line that is
    /// not, and at the end; and the scan that tells that a line is its own
    /// canonical URL finds where it ends (`scan`), so that most lines are
    /// read once ([`other_line`](Self::other_line) finds the end of the
    /// others, and takes them as the one line loop does). It runs as a job
    /// of `simd::dispatch`, compiled for the CPU's byte-class engine with
    /// the scan inlined in it.
    #[inline(always)]
    fn as_is_lines<S: Sink, C: Chunk>(
        &mut self,
        sink: &mut S,
        chunk: C,
        scan: LineScan,
        piece: &PieceLines<'_>,
        out: &mut PieceOut,
    ) {
        let buf = piece.buf;
        let max_line = self.opts.max_line;
        let counted = out.stats.lines;
        let mut lines = 0u64;
        // `buf[run..at]`: lines that are their own output, with their
        // `\n`s, not written yet; `at`, where the next line starts.
        let (mut run, mut at) = (0, 0);
        while at < buf.len() {
            let index = lines;
            lines += 1;
            if let Some(len) = scan.canonical_len(chunk, &buf[at..]) {
                if len <= max_line {
                    at += len + 1;
                    // Written every few KiB rather than a piece at a time:
                    // the lines are still in the cache, and the copy stays
                    // below the size at which glibc's `memcpy` turns to
                    // `rep movsb`, which callgrind counts a byte at a time
                    // (the instruction counts of `benches/guard.sh` would
                    // no longer say what the loop costs).
                    if at - run >= AS_IS_RUN {
                        out.out.extend_from_slice(&buf[run..at]);
                        run = at;
                    }
                    continue;
                }
            }
            out.out.extend_from_slice(&buf[run..at]);
            at = self.other_line(sink, piece, at, index, out);
            run = at;
        }
        out.out.extend_from_slice(&buf[run..at]);
        out.stats.emit_each(lines - (out.stats.lines - counted));
    }

    /// The line of a `plain` piece that starts at `at` and is not known to
    /// be its own output ([`as_is_lines`](Self::as_is_lines)): its end found,
    /// and the line taken as the one line loop takes it. Returns where the
    /// next line starts. Out of line: about one line in a hundred of the
    /// url-dataset lists comes here, and the loop that all the others take
    /// keeps its registers.
    #[inline(never)]
    fn other_line<S: Sink>(
        &mut self,
        sink: &mut S,
        piece: &PieceLines<'_>,
        at: usize,
        index: u64,
        out: &mut PieceOut,
    ) -> usize {
        let rest = &piece.buf[at..];
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], at + end + 1),
            None => (rest, piece.buf.len()),
        };
        // As `Lines` cuts it.
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.opts.max_line {
            self.too_long(sink, piece, index, line, out);
        } else {
            let none = None::<simd::Table>;
            self.bare_line(sink, &mut PlainList, none, line, index, out);
        }
        next
    }

    /// The line loop of a log's piece, over `reader`. On the bare path a
    /// request target with no base is canonicalized where it lies, its end
    /// found by its own scan (see [`Extract::request_start`]). That loop
    /// runs as a job of `simd::dispatch`, compiled for the CPU's byte-class
    /// engine with the scan inlined in it: dispatched per line instead, the
    /// call and the engine check cost about 28 instructions a line
    /// (pipeline/combined).
    #[inline]
    fn records<R: Extract, S: Sink>(
        &mut self,
        sink: &mut S,
        bare: bool,
        reader: &mut R,
        piece: &PieceLines<'_>,
        out: &mut PieceOut,
    ) {
        let none = None::<(simd::Table, InLineScan)>;
        // The in-line scan, when the canonicalizer takes targets where they
        // lie (no rules, no base; asked once here, not per line: see
        // `Canonicalizer::in_line`). Without it the in-line loop would
        // take every line as the other loop does.
        let in_line = self.opts.field == Field::Request && self.base_prefix.is_none();
        let scan = if in_line {
            self.urls.canon.in_line()
        } else {
            None
        };
        match scan {
            Some(scan) if !bare && S::RECORDS && self.bare => {
                // Records: their target canonicalized in the line too, and
                // their other fields noted from where its scan ended
                // (`Extract::info_in_line`).
                self.in_line_loop::<R, S, false, false>(sink, reader, scan, piece, out);
            }
            _ if !bare => self.each_line::<R, S, _, false, false>(sink, reader, none, piece, out),
            Some(scan) if reader.hosts_in_line() => {
                // A reader that finds hosts in line (`vhost`) has a loop of
                // its own: in the other's, the code that would call it
                // costs pipeline/combined 9 instructions a line.
                self.in_line_loop::<R, S, true, true>(sink, reader, scan, piece, out);
            }
            Some(scan) => self.in_line_loop::<R, S, true, false>(sink, reader, scan, piece, out),
            None => self.each_line::<R, S, _, true, false>(sink, reader, none, piece, out),
        }
    }

    /// [`each_line`](Self::each_line) with the in-line scan, as the job
    /// [`InLineLoop`] of `simd::dispatch`.
    #[inline]
    fn in_line_loop<R: Extract, S: Sink, const BARE: bool, const HOSTED: bool>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        scan: InLineScan,
        piece: &PieceLines<'_>,
        out: &mut PieceOut,
    ) {
        simd::dispatch(InLineLoop::<R, S, BARE, HOSTED> {
            worker: self,
            sink,
            reader,
            scan,
            piece: *piece,
            out,
        });
    }

    /// The one line loop: each line of `piece`, read by `reader`, goes to
    /// `sink`, on the path chosen for the piece:
    /// - `BARE`: the sink takes each URL alone and nothing else is wanted
    ///   of it ([`Worker::bare`], [`Sink::bare`]), one field: the line's URL
    ///   is canonicalized straight into the output ([`bare_line`]
    ///   (Self::bare_line)), with `in_line` (the engine of the job it runs
    ///   in, and the canonicalizer's [`InLineScan`]) first where the
    ///   target lies;
    /// - otherwise each wanted field's URL is canonicalized with everything
    ///   the options ask for and the line's slots go to the sink
    ///   ([`full_line`](Self::full_line)); for a sink of records
    ///   ([`Sink::RECORDS`]) with nothing else wanted, `in_line` first too,
    ///   the record going to [`Sink::record_in_line`] with its other fields
    ///   noted from where the target's scan ended;
    ///
    /// Lines too long, skipped or rejected are counted as they come; the
    /// others, emitted, once after the loop (the full path counts its own).
    #[inline(always)]
    fn each_line<R: Extract, S: Sink, C: Chunk, const BARE: bool, const HOSTED: bool>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        in_line: Option<(C, InLineScan)>,
        piece: &PieceLines<'_>,
        out: &mut PieceOut,
    ) {
        let (buf, max_line) = (piece.buf, self.opts.max_line);
        let counted = out.stats.lines;
        let mut ends = NO_ENDS;
        let mut lines = Lines::new(buf, &mut ends);
        while let Some(line) = lines.next() {
            // The line's index, where it is needed (most lines need none).
            let index = || lines.handed() - 1;
            if line.len() > max_line {
                self.too_long(sink, piece, index(), line, out);
                continue;
            }
            let start = out.out.len();
            // No closure here: it would be a function of its own, compiled
            // without the engine's target features and called per line.
            let start_at = match in_line {
                Some(engine) if !HOSTED => reader.request_start(line).map(|at| (engine, at)),
                _ => None,
            };
            if let Some(((chunk, scan), at)) = start_at {
                let target = &line[at..];
                if let Some(len) = Canonicalizer::target_in_line(scan, chunk, target, &mut out.out)
                {
                    if reader.request_closes(&line[at + len..]) {
                        if S::RECORDS && !BARE {
                            // ` HTTP/d.d"`: ten bytes after the target.
                            let info = reader.info_in_line(line, at, at + len + 10);
                            sink.record_in_line(out, start, line, &info);
                        } else {
                            sink.url(out, start);
                        }
                        continue;
                    }
                    out.out.truncate(start);
                }
            }
            if let (Some((chunk, scan)), true) = (in_line, HOSTED) {
                if self.hosted_target_in_line(chunk, scan, reader, line, out) {
                    sink.url(out, start);
                    continue;
                }
            }
            if BARE {
                self.bare_line(sink, reader, in_line.map(|(c, _)| c), line, index(), out);
            } else {
                self.full_line(sink, reader, piece, line, index(), out);
            }
        }
        out.stats
            .emit_each(lines.handed() - (out.stats.lines - counted));
    }

    /// The bare path of one line: its one URL canonicalized straight into
    /// the output, with no row and no slots: the sink's bare calls give
    /// what its [`Sink::line`] gives for one slot. Only the fired rules are
    /// taken from each `Canonical`.
    #[inline(always)]
    fn bare_line<R: Extract, S: Sink, C: Chunk>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        in_line: Option<C>,
        line: &[u8],
        index: u64,
        out: &mut PieceOut,
    ) {
        let start = out.out.len();
        if in_line.is_some() {
            // Out of line, and cold: the few lines the in-line scan leaves
            // (a target with escapes, an odd request field) would otherwise
            // crowd the registers of the loop that all the others take, and
            // the scan's constants would be loaded at every step of its
            // loops (pipeline/combined, built without LTO: 479.8
            // instructions a line inlined, 462.0 so).
            self.bare_read_apart(sink, reader, line, index, start, out);
        } else {
            self.bare_read(sink, reader, line, index, start, out);
        }
    }

    /// [`bare_read`](Self::bare_read) as a function of its own, for the
    /// lines the in-line scan left; first, a target with dot segments is
    /// taken where it lies ([`dotted_target_in_line`](crate::canon::Canonicalizer::dotted_target_in_line)).
    #[cold]
    #[inline(never)]
    fn bare_read_apart<R: Extract, S: Sink>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        line: &[u8],
        index: u64,
        start: usize,
        out: &mut PieceOut,
    ) {
        if let Some(at) = reader.request_start(line) {
            let canon = &mut self.urls.canon;
            if let Some(len) = canon.dotted_target_in_line(&line[at..], &mut out.out) {
                if reader.request_closes(&line[at + len..]) {
                    sink.url(out, start);
                    return;
                }
                out.out.truncate(start);
            }
        }
        self.bare_read(sink, reader, line, index, start, out);
    }

    /// The bare path of a line read by `reader`: its URL, if it has one,
    /// canonicalized at `out.out[start..]`.
    #[inline(always)]
    fn bare_read<R: Extract, S: Sink>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        line: &[u8],
        index: u64,
        start: usize,
        out: &mut PieceOut,
    ) {
        let field = self.opts.field;
        let result = match reader.extract(line, field, &mut self.record) {
            Line::Skip(s) => Err(NoUrl::Skip(s)),
            Line::Error(e, at) => Err(NoUrl::Reject(Why::Line(e), at)),
            // A `plain` line has no host of its own (its record is cleared
            // once a piece): not asked, a call of about 15 instructions a
            // line saved (pipeline/plain-aggressive).
            Line::Record if !R::PLAIN && self.hosted_in_line(field, line, out) => {
                Ok(RuleMask::NONE)
            }
            Line::Record => {
                let (base, scheme) = (self.base_prefix.as_deref(), self.opts.scheme);
                field_input::<R>(&self.record, line, field, base, scheme, &mut self.built).and_then(
                    |input| {
                        input
                            .canonicalize(&mut self.urls.canon, &mut out.out)
                            .map(|c| c.fired)
                            .map_err(|(why, at)| NoUrl::Reject(why, at))
                    },
                )
            }
        };
        match result {
            Ok(fired) => {
                if !fired.is_empty() {
                    out.stats.rule_fired(fired);
                }
                sink.url(out, start);
            }
            Err(NoUrl::Skip(skip)) => {
                out.stats.skip(skip);
                sink.no_url(out);
            }
            Err(NoUrl::Reject(why, at)) => {
                out.out.truncate(start);
                self.reject(index, line, why, at, out);
                sink.no_url(out);
            }
        }
    }

    /// The request URL of a line whose reader finds its host and where its
    /// target starts without reading the rest of it
    /// ([`Extract::hosted_request_start`]: a `vhost` line), when the
    /// target is one the in-line scan takes: appended to `out.out` as
    /// [`hosted_in_line`](Self::hosted_in_line) appends it, with `chunk`
    /// the engine of the loop it is inlined in. `false`, with nothing
    /// appended: the line takes the bare path.
    #[inline(always)]
    fn hosted_target_in_line<R: Extract, C: Chunk>(
        &mut self,
        chunk: C,
        scan: InLineScan,
        reader: &R,
        line: &[u8],
        out: &mut PieceOut,
    ) -> bool {
        let canon = &mut self.urls.canon;
        let Some((host_end, at)) = reader.hosted_request_start(line) else {
            return false;
        };
        let field = &line[..host_end];
        let read_host = |field: &[u8], key: &mut Extracted| reader.read_host(field, key);
        let Some((prefix, built_len)) = self.host_fields.prefix_of_field(field, canon, read_host)
        else {
            return false;
        };
        let start = out.out.len();
        out.out.extend_from_slice(prefix);
        if let Some(len) = Canonicalizer::target_in_line(scan, chunk, &line[at..], &mut out.out) {
            if built_len + len <= canon.max_input_len() && reader.request_closes(&line[at + len..])
            {
                return true;
            }
        }
        out.out.truncate(start);
        false
    }

    /// The request URL of a record that names its host, if its target lies
    /// in `line` and is one the in-line scan takes: appended to `out.out`
    /// as the host's canonical prefix ([`HostPrefixes`]) and the target
    /// canonicalized where it lies, which is what the general path writes
    /// for the URL built from them (see [`super::hosted`]). `false`, with
    /// nothing appended: the record takes the general path.
    #[inline(never)]
    fn hosted_in_line(&mut self, field: Field, line: &[u8], out: &mut PieceOut) -> bool {
        let record = &self.record;
        if field != Field::Request
            || record.host.is_empty()
            || record.connect
            || !self.urls.canon.takes_in_line()
        {
            return false;
        }
        // A target that lies in the line, starts with `/` and ends at a
        // space: the in-line scan stops at the first space, so it took the
        // whole target when it says it took as many bytes.
        let Some((from, to)) = record.target_span() else {
            return false;
        };
        if line.get(from) != Some(&b'/') || line.get(to) != Some(&b' ') {
            return false;
        }
        let canon = &mut self.urls.canon;
        let Some((prefix, built_len)) = self.hosts.prefix(record, canon) else {
            return false;
        };
        if built_len + (to - from) > canon.max_input_len() {
            return false;
        }
        let start = out.out.len();
        out.out.extend_from_slice(prefix);
        if canon.dotted_target_in_line(&line[from..], &mut out.out) == Some(to - from) {
            return true;
        }
        out.out.truncate(start);
        false
    }

    /// Rejects a line longer than `--max-line-len` (`line`) as the chunker
    /// rejects one it finds: one slot per wanted field, so the output does
    /// not depend on where pieces were cut.
    #[cold]
    fn too_long<S: Sink>(
        &mut self,
        sink: &mut S,
        piece: &PieceLines<'_>,
        index: u64,
        line: &[u8],
        out: &mut PieceOut,
    ) {
        let lost = Lost {
            format: piece.format,
            index,
            first_line: piece.first_line,
            head: line,
            why: Why::Line(LineError::LineTooLong),
            at: self.opts.max_line,
        };
        self.lost_line_into(sink, lost, out);
    }

    /// Reports a line that could not be read whole: `head` is its start,
    /// `at` the offset where reading it stopped. `index` is its index in
    /// its piece and `first_line` the piece's first line number.
    #[allow(clippy::too_many_arguments)]
    pub fn lost_line(
        &mut self,
        format: LogFormat,
        index: u64,
        first_line: u64,
        head: &[u8],
        why: Why,
        at: usize,
        out: &mut PieceOut,
    ) {
        let lost = Lost {
            format,
            index,
            first_line,
            head,
            why,
            at,
        };
        with_sink!(self, s => self.lost_line_into(s, lost, out));
    }

    /// [`lost_line`](Self::lost_line) with the run's sink.
    fn lost_line_into<S: Sink>(&mut self, sink: &mut S, lost: Lost<'_>, out: &mut PieceOut) {
        self.urls.clear();
        self.record.clear();
        // A line too long to read has only its first bytes in reports, as
        // many whether the chunker or the worker found it.
        let (why, at) = (lost.why, lost.at);
        let head = if why == Why::Line(LineError::LineTooLong) {
            &lost.head[..lost.head.len().min(self.opts.max_line).min(TOO_LONG_HEAD)]
        } else {
            lost.head
        };
        let slots = [Slot::Reject(why, at), Slot::Reject(why, at)];
        let n = self.slots_per_line(lost.format);
        let (index, first_line) = (lost.index, lost.first_line);
        self.finish(sink, lost.format, head, index, first_line, &slots[..n], out);
    }

    /// One slot per wanted field: two with `--field both`, but a `plain`
    /// line is one URL whatever `--field` says.
    fn slots_per_line(&self, format: LogFormat) -> usize {
        if self.opts.field == Field::Both && format != LogFormat::Plain {
            2
        } else {
            1
        }
    }

    /// The full path of one line: each wanted field's URL canonicalized
    /// with everything the options ask for (`Urls::canonicalize`), the
    /// line counted and its slots handed to the sink.
    #[inline(always)]
    fn full_line<R: Extract, S: Sink>(
        &mut self,
        sink: &mut S,
        reader: &mut R,
        piece: &PieceLines<'_>,
        line: &[u8],
        index: u64,
        out: &mut PieceOut,
    ) {
        self.urls.clear();
        // A `plain` line is one URL whatever `--field` says.
        let field = if R::PLAIN {
            Field::Request
        } else {
            self.opts.field
        };
        let mut read = reader.extract(line, field, &mut self.record);
        if !R::PLAIN && read == Line::Record {
            if let Some(skip) = self.opts.filter.check(&self.record.info, line) {
                read = Line::Skip(skip);
            }
        }
        let slots = match read {
            Line::Skip(s) => [Slot::Skip(s); 2],
            Line::Error(e, at) => [Slot::Reject(Why::Line(e), at); 2],
            Line::Record if field == Field::Both => {
                let request = self.slot::<R>(Field::Request, line, out);
                [request, self.slot::<R>(Field::Referer, line, out)]
            }
            Line::Record => [
                self.slot::<R>(field, line, out),
                Slot::Skip(Skip::EmptyField),
            ],
        };
        let n = if field == Field::Both { 2 } else { 1 };
        let (format, first_line) = (piece.format, piece.first_line);
        self.finish(sink, format, line, index, first_line, &slots[..n], out);
    }

    /// The URL of one `field` (request or referer) of the record just read
    /// from `line`, with everything the options ask for.
    #[inline(always)]
    fn slot<R: Extract>(&mut self, field: Field, line: &[u8], out: &mut PieceOut) -> Slot {
        let (base, scheme) = (self.base_prefix.as_deref(), self.opts.scheme);
        match field_input::<R>(&self.record, line, field, base, scheme, &mut self.built) {
            Ok(input) => self.urls.canonicalize(input, &mut out.stats),
            Err(no) => no.into(),
        }
    }

    /// Counts the line and hands its slots to the sink.
    #[allow(clippy::too_many_arguments)]
    fn finish<S: Sink>(
        &mut self,
        sink: &mut S,
        format: LogFormat,
        line: &[u8],
        index: u64,
        first_line: u64,
        slots: &[Slot],
        out: &mut PieceOut,
    ) {
        self.count(line, index, slots, out);
        let line = LineOut {
            format,
            line,
            number: first_line + index,
            slots,
            urls: &self.urls,
            record: &self.record,
            input: self.input.as_deref(),
        };
        sink.line(&line, out);
    }

    /// Counts a line by its slots: emitted when one has a URL, else
    /// rejected for the first rejection (and kept for the writer to
    /// report), else skipped.
    fn count(&self, line: &[u8], index: u64, slots: &[Slot], out: &mut PieceOut) {
        let emitted = slots.iter().filter(|s| matches!(s, Slot::Url(..))).count() as u64;
        let first_reject = slots.iter().find_map(|s| match s {
            Slot::Reject(w, at) => Some((*w, *at)),
            _ => None,
        });
        if emitted > 0 {
            out.stats.emit(emitted);
        } else if let Some((why, at)) = first_reject {
            self.reject(index, line, why, at, out);
        } else if let Some(Slot::Skip(s)) = slots.first() {
            out.stats.skip(*s);
        }
    }

    /// Counts a rejected line and keeps it for the writer to report.
    fn reject(&self, index: u64, line: &[u8], why: Why, at: usize, out: &mut PieceOut) {
        out.stats.reject(why);
        self.report(index, line, why, at, out);
    }

    /// Keeps a rejected line for the writer, which describes the first ones
    /// on stderr and writes all of them to `--rejects`.
    fn report(&self, index: u64, line: &[u8], why: Why, at: usize, out: &mut PieceOut) {
        let keep = self.opts.rejects || out.rejected.len() < self.opts.max_diagnostics;
        if !keep {
            return;
        }
        let start = out.rejected_lines.len();
        if self.opts.rejects {
            out.rejected_lines.extend_from_slice(line);
        }
        out.rejected.push(Rejected {
            index,
            why,
            at,
            start,
            end: out.rejected_lines.len(),
        });
    }
}

impl Urls {
    /// `--explain`: writes the ids of the rewrite rules that changed the
    /// last URL to `rewrites`, comma-separated (an empty one for a rule
    /// without an id).
    #[cold]
    fn rewrite_ids(&mut self, extra: &mut Extra) {
        let from = self.rewrites.len();
        if let Some(set) = self.canon.rules() {
            for (i, &slot) in self.canon.fired_rewrites().iter().enumerate() {
                if i > 0 {
                    self.rewrites.push(b',');
                }
                if let Some(id) = set.rewrite_id(slot as usize) {
                    self.rewrites.extend_from_slice(id.as_bytes());
                }
            }
        }
        extra.rewrites = (from, self.rewrites.len());
    }

    /// Forgets the URLs of the last line.
    fn clear(&mut self) {
        self.bytes.clear();
        self.extras.clear();
        self.dedup.clear();
        self.rewrites.clear();
    }

    /// Canonicalizes `input` into `bytes`, with everything else the options
    /// ask for: the dedup key, the SURT form, rule statistics.
    fn canonicalize(&mut self, input: UrlInput<'_>, stats: &mut Stats) -> Slot {
        let start = self.bytes.len();
        let canonical: Canonical = match input.canonicalize(&mut self.canon, &mut self.bytes) {
            Ok(c) => c,
            Err((why, at)) => return Slot::Reject(why, at),
        };
        let mut extra = Extra {
            fired: canonical.fired,
            ..Extra::default()
        };
        if !canonical.fired.is_empty() {
            stats.rule_fired(canonical.fired);
        }
        if self.explain && canonical.fired.has(crate::canon::rules::Rule::Rewrite) {
            self.rewrite_ids(&mut extra);
        }
        if let Some(c) = self.key_canon.as_mut() {
            let from = self.dedup.len();
            if input.canonicalize(c, &mut self.dedup).is_ok() {
                extra.dedup = Some((from, self.dedup.len()));
            }
        }
        if self.merges {
            // Before the rules: the canonicalizer kept it, or, when no
            // rule fired, it is the output.
            let before = self.canon.before_rules().unwrap_or(&self.bytes[start..]);
            extra.pre_key = xxh64(before, KEY_SEED);
        }
        if let Some(form) = self.surt {
            let url = &self.bytes[start..];
            if canonical.parts.host(url).is_none_or(<[u8]>::is_empty) {
                stats.surt_without_host += 1;
            }
            self.surt_buf.clear();
            surt(url, &canonical.parts, form, &mut self.surt_buf);
            self.bytes.truncate(start);
            self.bytes.extend_from_slice(&self.surt_buf);
        }
        self.extras.push(extra);
        Slot::Url(start, self.bytes.len(), self.extras.len() - 1)
    }
}

/// A line that could not be read whole ([`Worker::lost_line`]'s arguments).
#[derive(Clone, Copy, Debug)]
struct Lost<'a> {
    format: LogFormat,
    index: u64,
    first_line: u64,
    head: &'a [u8],
    why: Why,
    at: usize,
}

/// What to canonicalize for one field of a record.
#[derive(Clone, Copy, Debug)]
struct UrlInput<'a> {
    bytes: &'a [u8],
    /// As a request target: path-only without a host.
    target: bool,
    /// Bytes put before the logged target (`RequestUrl::Built`): a
    /// rejection's offset is reported relative to the target.
    prefix: usize,
}

impl<'a> UrlInput<'a> {
    /// A whole URL (a referer, an absolute-form target).
    #[inline(always)]
    fn url(bytes: &'a [u8]) -> UrlInput<'a> {
        UrlInput {
            bytes,
            target: false,
            prefix: 0,
        }
    }

    /// A request target as it is (a `plain` line, an origin-form target
    /// with no host): path-only when it has none.
    #[inline(always)]
    fn target(bytes: &'a [u8]) -> UrlInput<'a> {
        UrlInput {
            bytes,
            target: true,
            prefix: 0,
        }
    }

    /// Canonicalizes it into `into` with `canon`; a rejection comes with
    /// its offset in the logged field.
    #[inline(always)]
    fn canonicalize(
        self,
        canon: &mut Canonicalizer,
        into: &mut Vec<u8>,
    ) -> Result<Canonical, (Why, usize)> {
        let result = if self.target {
            canon.canonicalize_target(self.bytes, into)
        } else {
            canon.canonicalize_into(self.bytes, into)
        };
        result.map_err(|r| (Why::Url(r.reason), r.offset.saturating_sub(self.prefix)))
    }
}

/// Why a record's field gave no URL.
#[derive(Clone, Copy, Debug)]
enum NoUrl {
    Skip(Skip),
    Reject(Why, usize),
}

impl From<NoUrl> for Slot {
    fn from(no: NoUrl) -> Slot {
        match no {
            NoUrl::Skip(s) => Slot::Skip(s),
            NoUrl::Reject(why, at) => Slot::Reject(why, at),
        }
    }
}

/// What to canonicalize for `field` (the request, or the referer) of the
/// record read from `line` by a reader of `R` (a `plain` line is its own
/// target), with `base` (`--base`'s prefix) and `scheme` (`--scheme`): the
/// one place that turns a record's field ([`RequestUrl`] for the request)
/// into what to canonicalize, for both paths of the line loop.
#[inline(always)]
fn field_input<'a, R: Extract>(
    record: &'a Extracted,
    line: &'a [u8],
    field: Field,
    base: Option<&[u8]>,
    scheme: Option<crate::log::Scheme>,
    built: &'a mut Vec<u8>,
) -> Result<UrlInput<'a>, NoUrl> {
    if R::PLAIN {
        return Ok(UrlInput::target(line));
    }
    if field == Field::Referer {
        return match record.has_referer {
            true => Ok(UrlInput::url(&record.referer)),
            false => Err(NoUrl::Skip(Skip::EmptyField)),
        };
    }
    // The target lent in the line, or copied where unescaping changed it.
    let target = record.target(line);
    match request_url_of(record, target, base, scheme, built) {
        RequestUrl::Built { prefix } => Ok(UrlInput {
            bytes: built,
            target: false,
            prefix,
        }),
        RequestUrl::Absolute => Ok(UrlInput::url(target)),
        RequestUrl::PathOnly => Ok(UrlInput::target(target)),
        RequestUrl::Skip(s) => Err(NoUrl::Skip(s)),
        RequestUrl::Error(e) => Err(NoUrl::Reject(Why::Line(e), 0)),
    }
}

/// The most bytes of lines that are their own output kept before they are
/// written (`Worker::as_is_lines`).
const AS_IS_RUN: usize = 2048;

/// Where a piece's input buffer goes back to the reader's pool.
pub(super) type BufferPool = Sender<Vec<u8>>;

/// A piece's input buffer, once the piece is done: sent back to the
/// reader's pool through `free` (then `None`), or handed to the writer,
/// which sends it back. A buffer grown for one long line is replaced by an
/// empty one, to give the memory back.
pub(super) fn give_back(
    buf: Vec<u8>,
    free: Option<&BufferPool>,
    chunk_len: usize,
) -> Option<Vec<u8>> {
    let buf = if buf.capacity() > 2 * chunk_len + 2 * RANGE_OVERHANG {
        Vec::new()
    } else {
        buf
    };
    match free {
        Some(free) => {
            // Fails only when the reader is gone: the pool never holds
            // more buffers than it was given, so it is never full.
            let _ = free.try_send(buf);
            None
        }
        None => Some(buf),
    }
}

/// Bytes a byte range's buffer holds beyond the range: the last line's
/// overhang past the range's end, in most logs.
pub(super) const RANGE_OVERHANG: usize = 128 * 1024;

/// A worker thread: takes jobs until the reader is done, hands results to
/// the writer in the order they finish (the writer restores input order).
///
/// A run into sinks (`sink`, with `free`: the reader's pool of buffers)
/// writes no rows, so nothing it does waits for input order: its workers
/// read byte ranges into a buffer of their own (the reader sends them
/// without one), and give a piece's pooled buffer back to the pool as soon
/// as the piece is done. Through the writer, a buffer came back only once
/// every piece before it had, and the next range waited for one: a worker
/// held up (by the scheduler: the reader and the writer share the cores
/// with the workers) held up the pool, and the other worker, a few pieces
/// ahead, waited for work (`summarize -j 2` of a 948 MB log: 20 to 90 ms
/// of each worker's 650). Other runs keep the writer's back pressure:
/// their results hold the output rows, which wait for their turn in input
/// order.
pub(super) fn work(
    opts: Arc<Options>,
    jobs: Receiver<Job>,
    done: Sender<Done>,
    out_free: Receiver<Box<PieceOut>>,
    sink: Option<(Box<dyn RecordSink>, BufferPool)>,
) {
    let mut worker = Worker::new(opts);
    let free = sink.map(|(sink, free)| {
        worker.set_sink(sink);
        free
    });
    worker.work(jobs, done, out_free, free);
    if let Some(RunSink::Summary(Summary(sink))) = worker.sink.take() {
        sink.done();
    }
}

impl Worker {
    /// Takes jobs until there are no more (or the writer is gone). With
    /// `free`, each piece's input buffer goes back to the reader's pool
    /// from here ([`give_back`]), not through the writer.
    fn work(
        &mut self,
        jobs: Receiver<Job>,
        done: Sender<Done>,
        out_free: Receiver<Box<PieceOut>>,
        free: Option<BufferPool>,
    ) {
        let chunk_len = self.opts.chunk_len;
        // The buffer of the byte ranges that come without one.
        let mut own = Vec::new();
        let worker = self;
        for job in jobs {
            let msg = match job {
                Job::Event { seq, event } => Done::Event { seq, event },
                Job::Piece { seq, ctx, piece } => {
                    let mut result = out_free.try_recv().unwrap_or_default();
                    let buf = worker.read_piece(&ctx, piece, &mut result);
                    Done::Piece {
                        seq,
                        buf: give_back(buf, free.as_ref(), chunk_len),
                        result,
                        ctx,
                        map: None,
                    }
                }
                Job::Range {
                    seq,
                    ctx,
                    range,
                    buf,
                } => {
                    let mut result = out_free.try_recv().unwrap_or_default();
                    let pooled = buf.is_some();
                    let buf = buf.unwrap_or_else(|| std::mem::take(&mut own));
                    let buf = worker.read_range(&ctx, &range, buf, &mut result);
                    let buf = match pooled {
                        true => give_back(buf, free.as_ref(), chunk_len),
                        false => {
                            own = give_back(buf, None, chunk_len).unwrap_or_default();
                            None
                        }
                    };
                    Done::Piece {
                        seq,
                        buf,
                        result,
                        ctx,
                        map: range.map,
                    }
                }
            };
            if let (Done::Piece { .. }, Some(sink)) = (&msg, worker.sink.as_mut()) {
                sink.piece_end();
            }
            if done.send(msg).is_err() {
                return;
            }
        }
    }
    /// Processes a piece the reader read; returns its buffer, for the
    /// writer to give back to the reader.
    fn read_piece(&mut self, ctx: &FileCtx, piece: Piece, result: &mut PieceOut) -> Vec<u8> {
        match piece {
            Piece::Lines {
                buf,
                first_line,
                header,
                ..
            } => {
                result.stats.bytes += buf.len() as u64;
                result.out.reserve(buf.len() + buf.len() / 4);
                self.piece(ctx, &buf, first_line, header.as_deref(), result);
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
                let at = self.opts.max_line;
                self.lost_line(ctx.format, 0, line, &buf, why, at, result);
                buf
            }
            Piece::Fragment { line, buf } => {
                result.stats.bytes += buf.len() as u64;
                let at = buf.len();
                let why = Why::TruncatedInput;
                self.lost_line(ctx.format, 0, line, &buf, why, at, result);
                buf
            }
        }
    }

    /// Processes the lines of a byte range of a file, read in place from
    /// its map, or else read into `buf`; returns the buffer, as
    /// [`read_piece`](Self::read_piece) does.
    fn read_range(
        &mut self,
        ctx: &FileCtx,
        range: &super::ByteRange,
        mut buf: Vec<u8>,
        result: &mut PieceOut,
    ) -> Vec<u8> {
        let (start, end, len) = (range.start, range.end, range.file_len);
        let mapped = range.map.as_ref();
        if let Some((map, lines)) =
            mapped.and_then(|map| Some((map, map.owned_lines(&range.file, start, end, len)?)))
        {
            result.stats.bytes += lines.len() as u64;
            result.out.reserve(lines.len() + lines.len() / 4);
            self.piece(ctx, lines, 0, None, result);
            if !map.faulted() {
                return buf;
            }
            // The file was truncated while the range was read: pages past
            // its new end read as zeros (`input/sigbus.rs`). The piece's
            // rows are dropped and the range read again with `pread`, which
            // reads what is left and reports the shrink; a summary's rows
            // are in the worker's table already, so that run says so.
            if matches!(self.sink, Some(RunSink::Summary(_))) {
                result.error = Some(format!(
                    "the file shrank while bytes {start}..{end} of it were read from a memory \
                     map: the lines of those bytes past its new end were read as zero bytes \
                     (--no-mmap reads with read calls, which stop at the end)"
                ));
                return buf;
            }
            result.clear();
        }
        // Room for the range and its last line's usual overhang, once:
        // growing the buffer a read at a time would double it past what
        // the writer keeps, and zero it again on every range.
        let room = (end - start) as usize + RANGE_OVERHANG;
        if buf.capacity() < room {
            // Zeroed by the allocator (fresh pages from the kernel, already
            // zero), not by a `memset` over the whole range when the read
            // makes the buffer long enough: that cost 29 instructions per
            // line of a 6 MB URL list, where every buffer is new.
            buf = vec![0; room];
        }
        let max_line = self.opts.max_line;
        match read_owned_lines(&range.file, start, end, len, max_line, &mut buf) {
            Ok(owned) => {
                result.stats.bytes += owned.file_bytes;
                result.out.reserve(buf.len() + buf.len() / 4);
                // No line numbers for rows: the reader gives out ranges
                // only to runs whose rows have none (the writer numbers
                // rejected lines).
                self.piece(ctx, &buf, 0, None, result);
                if owned.truncated {
                    result.error = Some(format!(
                        "the file shrank while it was read: it ended before byte {len}"
                    ));
                }
            }
            Err(e) => result.error = Some(format!("read error at byte {start}: {e}")),
        }
        buf
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;
    use crate::input::mapped::MappedRange;
    use std::io::Write;

    /// A range whose map was read past a truncation (its flag up) is read
    /// again with `pread`: the piece's rows once, not the map's and then
    /// the read's.
    #[test]
    fn a_range_whose_map_faulted_is_read_again_with_pread() {
        let data: String = (0..3000)
            .map(|i| format!("http://a.example/{i}\n"))
            .collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(data.as_bytes()).unwrap();
        let file = Arc::new(file);
        let len = data.len() as u64;
        let opts = Options {
            format: Some(LogFormat::Plain),
            ..Options::default()
        };
        let mut worker = Worker::new(Arc::new(opts));
        let ctx = FileCtx {
            id: 0,
            name: "urls".into(),
            format: LogFormat::Plain,
            json_paths: None,
        };
        let mut read = |faulted: bool| {
            let map = MappedRange::new(&file, 0, len, len).unwrap();
            if faulted {
                map.set_faulted_for_test();
            }
            let range = super::super::ByteRange {
                file: Arc::clone(&file),
                start: 0,
                end: len,
                file_len: len,
                map: Some(map),
            };
            let mut out = PieceOut::default();
            worker.read_range(&ctx, &range, Vec::new(), &mut out);
            out
        };
        let (mapped, reread) = (read(false), read(true));
        assert_eq!(mapped.stats.lines, 3000);
        assert!(mapped.out.len() > data.len() / 2);
        assert!(reread.out == mapped.out);
        assert_eq!(reread.stats.lines, mapped.stats.lines);
        assert_eq!(reread.stats.bytes, len);
        assert!(reread.error.is_none());
    }
}
