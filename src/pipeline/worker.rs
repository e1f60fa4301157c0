//! From lines to output bytes: one worker turns one piece of input into its
//! output, its statistics and its reject reports, with no allocation per line.
//!
//! [`Worker::piece`] loops over the lines of a piece. A `plain` input whose
//! output is the URLs alone takes [`Worker::plain_urls`], which canonicalizes
//! each line straight into the output buffer; every other run reads each
//! line as a record of its format ([`RecordReader`]), finds the URL of the
//! request ([`request_url`]) or the referer, canonicalizes it, and writes
//! the run's [`Row`]s.

use std::sync::Arc;

use xxhash_rust::xxh64::xxh64;

use super::lines::{Lines, NO_ENDS};
use super::stats::{Stats, Why};
use super::{Done, FileCtx, Job, Mode, Options, OutputFormat};
use crate::canon::rules::RuleMask;
use crate::canon::surt::surt;
use crate::input::range::read_owned_lines;
use crate::input::Piece;
use crate::log::info::Info;
use crate::log::{base_prefix, request_url_of, RequestUrl, Skip};
use crate::log::{Extract, Extracted, Field, Line, LineError, LogFormat, RecordReader};
use crate::output::{Columns, Row, KEY_SEED};
use crate::url::simd::{self, Chunk};
use crate::{Canonical, Canonicalizer};
use crossbeam_channel::{Receiver, Sender};

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
enum Slot {
    /// A URL, at this range of `Urls::bytes`, and its index in `Urls::extras`.
    Url(usize, usize, usize),
    Skip(Skip),
    Reject(Why, usize),
}

/// What else is known of one URL of a line.
#[derive(Clone, Copy, Debug, Default)]
struct Extra {
    /// The dedup rules that changed it.
    fired: RuleMask,
    /// Its dedup key, at this range of `Urls::dedup` (`None`: no key, the
    /// key profile rejected the URL).
    dedup: Option<(usize, usize)>,
    /// Fingerprint of the URL before the dedup rules (rule statistics).
    pre_key: u64,
    /// `--explain`: the ids of the rewrite rules that fired, at this range
    /// of `Urls::rewrites`.
    rewrites: (usize, usize),
}

/// The canonicalizers and the canonical URLs of the current line.
struct Urls {
    canon: Canonicalizer,
    /// `--dedup-key`: the key profile's canonicalizer.
    key_canon: Option<Canonicalizer>,
    /// Canonical URLs of the line.
    bytes: Vec<u8>,
    /// Per URL of the line.
    extras: Vec<Extra>,
    /// Dedup keys of the line.
    dedup: Vec<u8>,
    /// Rule statistics with `--unique`/`--count`: fingerprint each URL as it
    /// was before the rules too.
    merges: bool,
    /// `--surt`: the SURT form is built here, then replaces the URL.
    surt: Option<crate::canon::surt::SurtForm>,
    surt_buf: Vec<u8>,
    /// `--explain`: the ids of the rewrite rules that fired, per URL of the
    /// line (see `Row::rewrites`).
    explain: bool,
    rewrites: Vec<u8>,
}

/// A worker's reusable state.
pub struct Worker {
    opts: Arc<Options>,
    columns: Columns,
    urls: Urls,
    /// `--base`'s scheme and authority, put before origin-form targets of
    /// records that do not say their host.
    base_prefix: Option<Vec<u8>>,
    record: Extracted,
    /// The URL to canonicalize, built from the record's parts.
    built: Vec<u8>,
    /// The reader for the input of the last piece, with that input's index.
    reader: Option<(usize, RecordReader)>,
    /// The run writes nothing but each `plain` line's URL: see `plain_urls`.
    urls_only: bool,
    /// The name of the input of the last piece (`--with input`).
    input: Option<Arc<str>>,
    /// Where records go instead of rows, when the run has one
    /// ([`RecordSink`]).
    sink: Option<Box<dyn RecordSink>>,
}

/// [`Worker::record_loop`] with the in-line target scan, as a job of
/// `simd::dispatch`: the loop is compiled for the engine the CPU has.
struct InLineLoop<'a, R> {
    worker: &'a mut Worker,
    reader: &'a mut R,
    format: LogFormat,
    buf: &'a [u8],
    out: &'a mut PieceOut,
}

impl<R: Extract> simd::Job for InLineLoop<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) {
        let InLineLoop {
            worker,
            reader,
            format,
            buf,
            out,
        } = self;
        worker.record_loop(Some(chunk), reader, format, buf, out);
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
        let urls_only = (distinct || opts.output == OutputFormat::Plain)
            && !opts.key
            && !opts.explain
            && !merges
            && opts.dedup.is_none()
            && opts.surt.is_none()
            && opts.with.is_empty()
            && opts.filter.is_empty();
        let mut record = Extracted::default();
        record.want_info(!opts.filter.is_empty() || opts.with.iter().any(|c| c.needs_info()));
        Worker {
            columns: Columns::new(&opts),
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
            reader: None,
            urls_only,
            input: None,
            sink: None,
        }
    }

    /// Hands every record to `sink` instead of writing rows (no output
    /// bytes), with the record's other fields noted for it.
    pub(crate) fn set_sink(&mut self, sink: Box<dyn RecordSink>) {
        self.urls_only = false;
        self.record.want_info(true);
        self.sink = Some(sink);
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
        if ctx.format == LogFormat::Plain && self.urls_only {
            return self.plain_urls(buf, out);
        }
        if !self.opts.with.is_empty() && self.input.as_ref() != Some(&ctx.name) {
            self.input = Some(ctx.name.clone());
        }
        // A new reader for every piece of a W3C log, primed with the
        // `#Fields:` line in effect where the piece starts.
        let reuse = matches!(&self.reader, Some((id, _)) if *id == ctx.id)
            && !ctx.format.has_header_state();
        if !reuse {
            let mut reader = RecordReader::new(ctx.format, ctx.json_paths.clone());
            reader.csv_columns(self.opts.csv_columns.clone());
            if let Some(fields) = &self.opts.w3c_fields {
                reader.header(fields);
            }
            self.reader = Some((ctx.id, reader));
        }
        if let (Some(h), Some((_, reader))) = (header, self.reader.as_mut()) {
            reader.header(h);
        }
        if self.urls_only && self.opts.field != Field::Both {
            if let Some((_, reader)) = self.reader.as_mut() {
                reader.lend_targets();
            }
            return self.record_urls(ctx.format, buf, out);
        }
        let mut ends = NO_ENDS;
        for (index, line) in Lines::new(buf, &mut ends).enumerate() {
            self.line(ctx, line, index as u64, first_line, out);
        }
    }

    /// The hot loop of `plain` input when the output is the URLs alone: each
    /// line is canonicalized straight into the output, with nothing to copy
    /// first and nothing to remember per URL but its span. One copy of the
    /// loop per mode, chosen here once per piece.
    // Out of line (it runs once a piece): inlined into `piece`, its loop's
    // code moved with the log loops' and cost up to 8 instructions a URL
    // more (pipeline/plain-whatwg 357.6 against 350.6).
    #[inline(never)]
    fn plain_urls(&mut self, buf: &[u8], out: &mut PieceOut) {
        // Lines that are their own canonical URL are written a run at a
        // time from the piece, where the canonicalizer can tell that from
        // its scan alone (no rules).
        let as_is = self.urls.canon.rules().is_none();
        match (self.opts.mode, as_is) {
            (Mode::Pipe, true) => self.plain_urls_as::<true, false, true>(buf, out),
            (Mode::Pipe, false) => self.plain_urls_as::<true, false, false>(buf, out),
            (Mode::Records, true) => self.plain_urls_as::<false, false, true>(buf, out),
            (Mode::Records, false) => self.plain_urls_as::<false, false, false>(buf, out),
            (Mode::Unique | Mode::Count, _) => self.plain_urls_as::<false, true, false>(buf, out),
        }
    }

    /// [`plain_urls`](Self::plain_urls) for one mode: `PIPE`, a line out
    /// per line in; `DISTINCT`, the URLs go to the distinct table; `AS_IS`,
    /// a line that is its own canonical URL, ended by a plain `\n`, is its
    /// own output line: such lines are not copied one by one but written a
    /// run at a time from `buf` (`as_is`), before the next line that is
    /// not, and at the end. Emitted lines are counted once, after the
    /// loop: the lines that are not skipped or rejected (which are counted
    /// as they come).
    #[inline(always)]
    fn plain_urls_as<const PIPE: bool, const DISTINCT: bool, const AS_IS: bool>(
        &mut self,
        buf: &[u8],
        out: &mut PieceOut,
    ) {
        let max_line = self.opts.max_line;
        let counted = out.stats.lines;
        let mut lines = 0u64;
        let mut ends = NO_ENDS;
        // The run of lines, with their `\n`s, not written yet.
        let mut as_is = 0..0;
        for line in Lines::new(buf, &mut ends) {
            let index = lines;
            lines += 1;
            if AS_IS {
                // `line` lies in `buf`: where it starts there.
                let at = line.as_ptr() as usize - buf.as_ptr() as usize;
                let end = at + line.len();
                if line.len() <= max_line
                    && buf.get(end) == Some(&b'\n')
                    && self.urls.canon.target_is_canonical(line)
                {
                    if as_is.end != at {
                        out.out.extend_from_slice(&buf[as_is]);
                        as_is = at..at;
                    }
                    as_is.end = end + 1;
                    // Written every few KiB rather than a piece at a time:
                    // the lines are still in the cache, and the copy stays
                    // below the size at which glibc's `memcpy` turns to
                    // `rep movsb`, which callgrind counts a byte at a time
                    // (the instruction counts of `benches/guard.sh` would
                    // no longer say what the loop costs).
                    if as_is.len() >= AS_IS_RUN {
                        out.out.extend_from_slice(&buf[as_is.clone()]);
                        as_is.start = as_is.end;
                    }
                    continue;
                }
                out.out.extend_from_slice(&buf[as_is]);
                as_is = 0..0;
            }
            if line.len() > max_line {
                let why = Why::Line(LineError::LineTooLong);
                self.lost_line(LogFormat::Plain, index, 0, line, why, max_line, out);
                continue;
            }
            if line.first().is_none_or(|&b| b == b' ' || b == b'\t') && is_blank(line) {
                out.stats.skip(Skip::EmptyLine);
                if PIPE {
                    out.out.push(b'\n');
                }
                continue;
            }
            let start = out.out.len();
            // Only the rules that fired are wanted: taken at the call, the
            // rest of `Canonical` is not copied out of the fast path's result.
            match self
                .urls
                .canon
                .canonicalize_target(line, &mut out.out)
                .map(|c| c.fired)
            {
                Ok(fired) => {
                    if !fired.is_empty() {
                        out.stats.rule_fired(fired);
                    }
                    if DISTINCT {
                        push_distinct(out, start);
                    } else {
                        out.out.push(b'\n');
                    }
                }
                Err(r) => {
                    out.out.truncate(start);
                    if PIPE {
                        out.out.push(b'\n');
                    }
                    let why = Why::Url(r.reason);
                    out.stats.reject(why);
                    self.report(index, line, why, r.offset, out);
                }
            }
        }
        if AS_IS {
            out.out.extend_from_slice(&buf[as_is]);
        }
        out.stats.emit_each(lines - (out.stats.lines - counted));
    }

    /// The hot loop of a log whose output is one field's URLs alone: each
    /// record's URL is canonicalized straight into the output, as in
    /// [`plain_urls`](Self::plain_urls), with no row and no per-line slots.
    /// Writes what [`finish`](Self::finish) writes for one slot.
    fn record_urls(&mut self, format: LogFormat, buf: &[u8], out: &mut PieceOut) {
        // Out of `self` for the loop, which lends `self` to `lost_line` and
        // `report`; put back after it.
        let Some((id, mut reader)) = self.reader.take() else {
            return;
        };
        // The loop is generic over what reads a line: CLF's extractor
        // itself, called directly, or the reader's dispatch over formats.
        match reader.own_loop() {
            Some(extractor) => self.record_urls_with(extractor, format, buf, out),
            None => self.record_urls_with(&mut reader, format, buf, out),
        }
        self.reader = Some((id, reader));
    }

    /// The loop of [`record_urls`](Self::record_urls), over `reader`.
    #[inline]
    fn record_urls_with<R: Extract>(
        &mut self,
        reader: &mut R,
        format: LogFormat,
        buf: &[u8],
        out: &mut PieceOut,
    ) {
        // A request target with no base is canonicalized where it lies, its
        // end found by its own scan (see `Extract::request_start`). That
        // loop runs as a job of `simd::dispatch`, compiled for the CPU's
        // byte-class engine with the scan inlined in it: dispatched per
        // line instead, the call and the engine check cost about 28
        // instructions a line (pipeline/combined).
        if self.opts.field == Field::Request && self.base_prefix.is_none() {
            simd::dispatch(InLineLoop {
                worker: self,
                reader,
                format,
                buf,
                out,
            });
        } else {
            self.record_loop(None::<simd::Table>, reader, format, buf, out);
        }
    }

    /// The loop of [`record_urls_with`](Self::record_urls_with): with
    /// `in_line` (the engine of the job it runs in), each line's target is
    /// first tried where it lies.
    #[inline(always)]
    fn record_loop<R: Extract, C: Chunk>(
        &mut self,
        in_line: Option<C>,
        reader: &mut R,
        format: LogFormat,
        buf: &[u8],
        out: &mut PieceOut,
    ) {
        let (mode, max_line, field) = (self.opts.mode, self.opts.max_line, self.opts.field);
        let distinct = matches!(mode, Mode::Unique | Mode::Count);
        let pipe = mode == Mode::Pipe;
        // Emitted lines are counted after the loop, as in `plain_urls`.
        let counted = out.stats.lines;
        let mut lines = 0u64;
        let mut ends = NO_ENDS;
        for line in Lines::new(buf, &mut ends) {
            let index = lines;
            lines += 1;
            if line.len() > max_line {
                let why = Why::Line(LineError::LineTooLong);
                self.lost_line(format, index, 0, line, why, max_line, out);
                continue;
            }
            let start = out.out.len();
            // No closure here: it would be a function of its own, compiled
            // without the engine's target features and called per line.
            let start_at = match in_line {
                Some(chunk) => reader.request_start(line).map(|at| (chunk, at)),
                None => None,
            };
            if let Some((chunk, at)) = start_at {
                let canon = &mut self.urls.canon;
                if let Some(len) = canon.target_in_line(chunk, &line[at..], &mut out.out) {
                    if reader.request_closes(&line[at + len..]) {
                        if distinct {
                            push_distinct(out, start);
                        } else {
                            out.out.push(b'\n');
                        }
                        continue;
                    }
                    out.out.truncate(start);
                }
            }
            // Only the fired rules are taken from each `Canonical`.
            let result = match reader.extract(line, field, &mut self.record) {
                Line::Skip(s) => Err(Ok(s)),
                Line::Error(e, at) => Err(Err((Why::Line(e), at))),
                Line::Record if field == Field::Referer => {
                    if self.record.has_referer {
                        let canon = &mut self.urls.canon;
                        canon
                            .canonicalize_into(&self.record.referer, &mut out.out)
                            .map(|c| c.fired)
                            .map_err(|r| Err((Why::Url(r.reason), r.offset)))
                    } else {
                        Err(Ok(Skip::EmptyField))
                    }
                }
                Line::Record => {
                    let canon = &mut self.urls.canon;
                    let target = self.record.target_in(line);
                    let base = self.base_prefix.as_deref();
                    let scheme = self.opts.scheme;
                    let url = request_url_of(&self.record, target, base, scheme, &mut self.built);
                    let to = |prefix: usize| {
                        move |r: crate::Reject| {
                            Err((Why::Url(r.reason), r.offset.saturating_sub(prefix)))
                        }
                    };
                    match url {
                        RequestUrl::Built { prefix } => canon
                            .canonicalize_into(&self.built, &mut out.out)
                            .map(|c| c.fired)
                            .map_err(to(prefix)),
                        RequestUrl::Absolute => canon
                            .canonicalize_into(target, &mut out.out)
                            .map(|c| c.fired)
                            .map_err(to(0)),
                        RequestUrl::PathOnly => canon
                            .canonicalize_target(target, &mut out.out)
                            .map(|c| c.fired)
                            .map_err(to(0)),
                        RequestUrl::Skip(s) => Err(Ok(s)),
                        RequestUrl::Error(e) => Err(Err((Why::Line(e), 0))),
                    }
                }
            };
            match result {
                Ok(fired) => {
                    if !fired.is_empty() {
                        out.stats.rule_fired(fired);
                    }
                    if distinct {
                        // The distinct table takes it without a line end.
                        push_distinct(out, start);
                        continue;
                    }
                }
                Err(Ok(skip)) => out.stats.skip(skip),
                Err(Err((why, at))) => {
                    out.out.truncate(start);
                    out.stats.reject(why);
                    self.report(index, line, why, at, out);
                }
            }
            if pipe || out.out.len() > start {
                out.out.push(b'\n');
            }
        }
        out.stats.emit_each(lines - (out.stats.lines - counted));
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
        self.urls.clear();
        self.record.clear();
        // A line too long to read has only its first bytes in reports, as
        // many whether the chunker or the worker found it.
        let head = if why == Why::Line(LineError::LineTooLong) {
            &head[..head.len().min(self.opts.max_line).min(TOO_LONG_HEAD)]
        } else {
            head
        };
        let slots = [Slot::Reject(why, at), Slot::Reject(why, at)];
        let n = self.slots_per_line(format);
        self.finish(format, head, index, first_line, &slots[..n], out);
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

    fn line(
        &mut self,
        ctx: &FileCtx,
        line: &[u8],
        index: u64,
        first_line: u64,
        out: &mut PieceOut,
    ) {
        self.urls.clear();
        let format = ctx.format;
        if line.len() > self.opts.max_line {
            // The same as when the chunker finds it: one slot per wanted
            // field, so the output does not depend on where pieces were cut.
            let why = Why::Line(LineError::LineTooLong);
            return self.lost_line(
                format,
                index,
                first_line,
                line,
                why,
                self.opts.max_line,
                out,
            );
        }
        if format == LogFormat::Plain {
            // A URL list's line has no other fields: none of a record of an
            // earlier input (a log read before it by this worker) is left
            // for `--with` columns or the record sink to read in it.
            self.record.info = Info::default();
            let slot = if is_blank(line) {
                Slot::Skip(Skip::EmptyLine)
            } else {
                self.urls.canonicalize(line, true, 0, &mut out.stats)
            };
            return self.finish(format, line, index, first_line, &[slot], out);
        }
        let field = self.opts.field;
        let n = self.slots_per_line(format);
        let Some((_, reader)) = self.reader.as_mut() else {
            return;
        };
        let mut read = reader.read(line, field, &mut self.record);
        if read == Line::Record {
            if let Some(skip) = self.opts.filter.check(&self.record.info, line) {
                read = Line::Skip(skip);
            }
        }
        let slots = match read {
            Line::Skip(s) => [Slot::Skip(s); 2],
            Line::Error(e, at) => [Slot::Reject(Why::Line(e), at); 2],
            Line::Record => match field {
                Field::Request => [self.request(out), Slot::Skip(Skip::EmptyField)],
                Field::Referer => [self.referer(out), Slot::Skip(Skip::EmptyField)],
                Field::Both => {
                    let request = self.request(out);
                    [request, self.referer(out)]
                }
            },
        };
        self.finish(format, line, index, first_line, &slots[..n], out);
    }

    /// The URL of the record's request.
    fn request(&mut self, out: &mut PieceOut) -> Slot {
        let stats = &mut out.stats;
        let (base, scheme) = (self.base_prefix.as_deref(), self.opts.scheme);
        let target = &self.record.target;
        match request_url_of(&self.record, target, base, scheme, &mut self.built) {
            RequestUrl::Built { prefix } => {
                self.urls.canonicalize(&self.built, false, prefix, stats)
            }
            RequestUrl::Absolute => self.urls.canonicalize(&self.record.target, false, 0, stats),
            RequestUrl::PathOnly => self.urls.canonicalize(&self.record.target, true, 0, stats),
            RequestUrl::Skip(s) => Slot::Skip(s),
            RequestUrl::Error(e) => Slot::Reject(Why::Line(e), 0),
        }
    }

    /// The URL of the record's referer.
    fn referer(&mut self, out: &mut PieceOut) -> Slot {
        if !self.record.has_referer {
            return Slot::Skip(Skip::EmptyField);
        }
        self.urls
            .canonicalize(&self.record.referer, false, 0, &mut out.stats)
    }

    /// Counts the line and writes its output.
    fn finish(
        &mut self,
        format: LogFormat,
        line: &[u8],
        index: u64,
        first_line: u64,
        slots: &[Slot],
        out: &mut PieceOut,
    ) {
        self.count(line, index, slots, out);
        if let Some(sink) = self.sink.as_mut() {
            for s in slots {
                if let Slot::Url(a, b, _) = *s {
                    sink.record(&self.urls.bytes[a..b], line, &self.record.info);
                }
            }
        } else if matches!(self.opts.mode, Mode::Unique | Mode::Count) {
            self.file_distinct(format, slots, out);
        } else if self.urls_only {
            self.write_urls(slots, out);
        } else {
            self.write_rows(format, line, index, first_line, slots, out);
        }
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
            out.stats.reject(why);
            self.report(index, line, why, at, out);
        } else if let Some(Slot::Skip(s)) = slots.first() {
            out.stats.skip(*s);
        }
    }

    /// `--unique`/`--count`: files the line's URLs for the distinct table
    /// (with `--field both` slot 0 is the request and 1 the referer).
    fn file_distinct(&self, format: LogFormat, slots: &[Slot], out: &mut PieceOut) {
        let both = self.opts.field == Field::Both && format != LogFormat::Plain;
        for (i, s) in slots.iter().enumerate() {
            if let Slot::Url(a, b, e) = *s {
                let start = out.out.len();
                out.out.extend_from_slice(&self.urls.bytes[a..b]);
                let x = self.urls.extras[e];
                out.distinct.push(DistinctUrl {
                    key: xxh64(&out.out[start..], KEY_SEED),
                    start,
                    end: out.out.len(),
                    field: u8::from(both && i == 1),
                    pre: self.urls.merges.then_some((x.pre_key, x.fired)),
                });
            }
        }
    }

    /// Plain output of the URLs alone: no row to build. With `--pipe`, one
    /// line whatever the slots, their URLs tab-separated.
    fn write_urls(&self, slots: &[Slot], out: &mut PieceOut) {
        let pipe = self.opts.mode == Mode::Pipe;
        for (i, s) in slots.iter().enumerate() {
            if pipe && i > 0 {
                out.out.push(b'\t');
            }
            if let Slot::Url(a, b, _) = *s {
                out.out.extend_from_slice(&self.urls.bytes[a..b]);
                if !pipe {
                    out.out.push(b'\n');
                }
            }
        }
        if pipe {
            out.out.push(b'\n');
        }
    }

    /// The line's rows: one per slot (a URL, a rejection, or with `--pipe`
    /// a skip), or with `--pipe` and plain output, one line of cells.
    fn write_rows(
        &self,
        format: LogFormat,
        line: &[u8],
        index: u64,
        first_line: u64,
        slots: &[Slot],
        out: &mut PieceOut,
    ) {
        let opts = &*self.opts;
        let pipe = opts.mode == Mode::Pipe;
        let plain = opts.output == OutputFormat::Plain;
        for (i, s) in slots.iter().enumerate() {
            // A `plain` line's one URL counts as a request, as in the
            // distinct table: its `field` cell says so, not left empty.
            let field = match (opts.field, i) {
                (Field::Both, 0) => Some(Field::Request),
                (Field::Both, _) => Some(Field::Referer),
                _ => None,
            };
            let original = match (format, i, opts.field) {
                (LogFormat::Plain, _, _) => line,
                (_, 0, Field::Referer) | (_, 1, _) => &self.record.referer[..],
                _ => &self.record.target[..],
            };
            let mut row = Row {
                line: first_line + index,
                field,
                original,
                ..Row::default()
            };
            if !opts.with.is_empty() {
                let info = &self.record.info;
                row.status = info.status(line);
                row.bytes = info.bytes(line);
                row.method = info.method(line);
                row.time = info.time(line);
                row.client = info.client(line);
                row.host = Some(&self.record.host[..]).filter(|h| !h.is_empty());
                row.input = self.input.as_deref();
            }
            match *s {
                Slot::Url(a, b, e) => {
                    let x = self.urls.extras[e];
                    row.url = Some(&self.urls.bytes[a..b]);
                    row.dedup = x.dedup.map(|(s, e)| &self.urls.dedup[s..e]);
                    row.rules = x.fired;
                    row.rewrites = &self.urls.rewrites[x.rewrites.0..x.rewrites.1];
                }
                Slot::Reject(w, _) => row.reason = Some(w.name()),
                Slot::Skip(k) if pipe => {
                    row.reason = Some(k.name());
                    row.original = b"";
                }
                Slot::Skip(_) => continue,
            }
            if pipe && plain {
                // One line per input line: the URLs of `--field both` side
                // by side, an empty cell for a field without one.
                if i > 0 {
                    out.out.push(b'\t');
                }
                self.columns.write_cells(&row, &mut out.out);
            } else if plain && row.url.is_none() {
                // Plain records: nothing for a field without URL.
            } else {
                self.columns.write(&row, &mut out.out);
            }
        }
        if pipe && plain {
            out.out.push(b'\n');
        }
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

    /// Canonicalizes `input` into `bytes` (`target`: as a request target,
    /// path-only without a host; `prefix`: bytes before the logged target,
    /// whose offsets a rejection reports relative to the target), with
    /// everything else the options ask for: the dedup key, the SURT form,
    /// rule statistics.
    fn canonicalize(
        &mut self,
        input: &[u8],
        target: bool,
        prefix: usize,
        stats: &mut Stats,
    ) -> Slot {
        let run = |c: &mut Canonicalizer, into: &mut Vec<u8>| {
            if target {
                c.canonicalize_target(input, into)
            } else {
                c.canonicalize_into(input, into)
            }
        };
        let start = self.bytes.len();
        let canonical: Canonical = match run(&mut self.canon, &mut self.bytes) {
            Ok(c) => c,
            Err(r) => return Slot::Reject(Why::Url(r.reason), r.offset.saturating_sub(prefix)),
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
            if run(c, &mut self.dedup).is_ok() {
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

/// The most bytes of lines that are their own output
/// (`Worker::plain_urls_as`) kept before they are written.
const AS_IS_RUN: usize = 2048;

/// Files the URL just written at `out.out[start..]` for the distinct table.
#[inline(always)]
fn push_distinct(out: &mut PieceOut, start: usize) {
    let end = out.out.len();
    out.distinct.push(DistinctUrl {
        key: xxh64(&out.out[start..], KEY_SEED),
        start,
        end,
        field: 0,
        pre: None,
    });
}

/// Bytes a byte range's buffer holds beyond the range: the last line's
/// overhang past the range's end, in most logs.
pub(super) const RANGE_OVERHANG: usize = 128 * 1024;

/// A worker thread: takes jobs until the reader is done, hands results to
/// the writer in the order they finish (the writer restores input order).
pub(super) fn work(
    opts: Arc<Options>,
    jobs: Receiver<Job>,
    done: Sender<Done>,
    out_free: Receiver<Box<PieceOut>>,
    sink: Option<Box<dyn RecordSink>>,
) {
    let mut worker = Worker::new(opts);
    if let Some(sink) = sink {
        worker.set_sink(sink);
    }
    worker.work(jobs, done, out_free);
    if let Some(sink) = worker.sink.take() {
        sink.done();
    }
}

impl Worker {
    /// Takes jobs until there are no more (or the writer is gone).
    fn work(&mut self, jobs: Receiver<Job>, done: Sender<Done>, out_free: Receiver<Box<PieceOut>>) {
        let worker = self;
        for job in jobs {
            let msg = match job {
                Job::Event { seq, event } => Done::Event { seq, event },
                Job::Piece { seq, ctx, piece } => {
                    let mut result = out_free.try_recv().unwrap_or_default();
                    let buf = worker.read_piece(&ctx, piece, &mut result);
                    Done::Piece {
                        seq,
                        buf,
                        result,
                        ctx,
                    }
                }
                Job::Range {
                    seq,
                    ctx,
                    range,
                    buf,
                } => {
                    let mut result = out_free.try_recv().unwrap_or_default();
                    let buf = worker.read_range(&ctx, &range, buf, &mut result);
                    Done::Piece {
                        seq,
                        buf,
                        result,
                        ctx,
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

    /// Reads a byte range of a file into `buf` and processes its lines;
    /// returns the buffer, as [`read_piece`](Self::read_piece) does.
    fn read_range(
        &mut self,
        ctx: &FileCtx,
        range: &super::ByteRange,
        mut buf: Vec<u8>,
        result: &mut PieceOut,
    ) -> Vec<u8> {
        let (start, end, len) = (range.start, range.end, range.file_len);
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

/// An empty or all-blank line.
#[inline]
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t')
}
