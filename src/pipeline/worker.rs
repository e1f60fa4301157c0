//! From lines to output bytes: one worker turns one piece of input into its
//! output, its statistics and its reject reports, with no allocation per line.
//!
//! The hot loop is [`Worker::piece`]: find the line end with `memchr`, let the
//! format's extractor find the request, build the URL (origin-form targets
//! get the record's scheme and host, or `--base`'s), canonicalize it straight
//! into the output buffer.

use std::io::Write as _;
use std::sync::Arc;

use memchr::memchr;
use xxhash_rust::xxh64::xxh64;

use super::stats::{Stats, Why};
use super::{FileCtx, Mode, Options, OutputFormat};
use crate::canon::rules::RuleMask;
use crate::canon::surt::surt;
use crate::log::alb::AlbExtractor;
use crate::log::clf::ClfExtractor;
use crate::log::haproxy::HaproxyExtractor;
use crate::log::json::JsonExtractor;
use crate::log::w3c::W3cExtractor;
use crate::log::{Extracted, Field, Line, LineError, LogFormat, Scheme, Skip};
use crate::{Canonical, Canonicalizer};

/// Seed of the URL fingerprint: XXH64 with seed 42 is what Spark SQL's
/// `xxhash64(col)` computes over a string's UTF-8 bytes.
pub const KEY_SEED: u64 = 42;

/// How much of a line too long to read is kept for `--rejects` and the
/// original column (the chunker keeps at least this much, or `max_line`).
pub const TOO_LONG_HEAD: usize = 4096;

/// The fingerprint of a canonical URL, as `--key` prints it (Spark's `xxhash64`).
pub fn key(url: &[u8]) -> i64 {
    xxh64(url, KEY_SEED) as i64
}

/// One format's extractor.
enum Extractor {
    Plain,
    Clf(ClfExtractor),
    W3c(W3cExtractor),
    Alb(AlbExtractor),
    Json(JsonExtractor),
    Haproxy(HaproxyExtractor),
}

impl Extractor {
    fn new(ctx: &FileCtx) -> Extractor {
        match ctx.format {
            LogFormat::Plain => Extractor::Plain,
            LogFormat::Common | LogFormat::Combined => Extractor::Clf(ClfExtractor::new(false)),
            LogFormat::Vhost => Extractor::Clf(ClfExtractor::new(true)),
            LogFormat::W3c => Extractor::W3c(W3cExtractor::new(false)),
            LogFormat::Cloudfront => Extractor::W3c(W3cExtractor::new(true)),
            LogFormat::Alb => Extractor::Alb(AlbExtractor),
            LogFormat::Json => Extractor::Json(JsonExtractor::new(
                ctx.json_paths.clone().unwrap_or_default(),
            )),
            LogFormat::Haproxy => Extractor::Haproxy(HaproxyExtractor),
        }
    }

    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        match self {
            Extractor::Plain => unreachable_plain(out),
            Extractor::Clf(x) => x.extract(line, field, out),
            Extractor::W3c(x) => x.extract(line, field, out),
            Extractor::Alb(x) => x.extract(line, field, out),
            Extractor::Json(x) => x.extract(line, field, out),
            Extractor::Haproxy(x) => x.extract(line, field, out),
        }
    }
}

/// Plain lines never reach `extract` (see [`Worker::line`]); answer
/// something harmless rather than panic.
fn unreachable_plain(out: &mut Extracted) -> Line {
    out.clear();
    Line::Error(LineError::Malformed, 0)
}

/// The result for one wanted field of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A URL, at this range of `Worker::urls`, and its index in `Worker::extras`.
    Url(usize, usize, usize),
    Skip(Skip),
    Reject(Why, usize),
}

/// What a worker made of one piece.
#[derive(Debug, Default)]
pub struct PieceOut {
    /// Output bytes (data for stdout, or URLs one per line for `--unique`/`--count`).
    pub out: Vec<u8>,
    /// Fingerprints of the URLs in `out`, for `--unique`/`--count`.
    pub keys: Vec<u64>,
    /// `--rejects` lines.
    pub rejects: Vec<u8>,
    /// The first rejects, for stderr: (line, message).
    pub diagnostics: Vec<(u64, String)>,
    /// Counts.
    pub stats: Stats,
    /// For `--unique`/`--count` with rule statistics, per URL in `out`: the
    /// fingerprint of the URL before the dedup rules, and the rules that fired.
    pub pre: Vec<(u64, RuleMask)>,
    /// For `--unique`/`--count`, per URL in `out`: its field, 0 for the
    /// request and 1 for the referer of `--field both` (0 otherwise).
    pub fields: Vec<u8>,
}

/// What else is known of one URL of a line.
#[derive(Clone, Copy, Debug, Default)]
struct Extra {
    /// The dedup rules that changed it.
    fired: RuleMask,
    /// Its dedup key, at this range of `Worker::dedup` (`None`: no key, the
    /// key profile rejected the URL).
    dedup: Option<(usize, usize)>,
    /// Fingerprint of the URL before the dedup rules (rule statistics).
    pre_key: u64,
}

/// Where the URL to canonicalize is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    /// `Worker::input`, built from the record's parts; offsets past the
    /// prefix map back into the target.
    Built(usize),
    /// The record's target, as it is.
    Target,
    /// The record's referer.
    Referer,
    /// The whole line (`plain`).
    Line,
}

/// A worker's reusable state.
pub struct Worker {
    opts: Arc<Options>,
    canon: Canonicalizer,
    /// `--base`'s scheme and authority, prepended to origin-form targets of
    /// records that do not say their host.
    base_prefix: Option<Vec<u8>>,
    extracted: Extracted,
    /// The URL to canonicalize, built from the record's parts.
    input: Vec<u8>,
    /// Canonical URLs of the current line.
    urls: Vec<u8>,
    /// The extractor for the file of the last piece, with that file's identity.
    extractor: Option<(usize, Extractor)>,
    /// Per URL of the current line.
    extras: Vec<Extra>,
    /// `--dedup-key`: the key profile's canonicalizer, and the keys of the line.
    key_canon: Option<Canonicalizer>,
    dedup: Vec<u8>,
    /// Rule statistics with `--unique`/`--count`: fingerprint each URL as it
    /// was before the rules too.
    merges: bool,
    /// `--surt`: the SURT form is built here, then replaces the URL.
    surt_buf: Vec<u8>,
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
        let merges = opts.rule_merges
            && canon.rules().is_some()
            && matches!(opts.mode, Mode::Unique | Mode::Count);
        let base_prefix = opts.base.as_ref().map(|b| {
            let end = b.parts().path_start as usize;
            b.as_bytes()[..end].to_vec()
        });
        Worker {
            opts,
            canon,
            base_prefix,
            extracted: Extracted::default(),
            input: Vec::new(),
            urls: Vec::new(),
            extractor: None,
            extras: Vec::new(),
            key_canon,
            dedup: Vec::new(),
            merges,
            surt_buf: Vec::new(),
        }
    }

    /// Processes the lines of one piece of `ctx`'s input.
    pub fn piece(
        &mut self,
        ctx: &FileCtx,
        buf: &[u8],
        first_line: u64,
        header: Option<&[u8]>,
        out: &mut PieceOut,
    ) {
        // A new extractor for every piece of a W3C log, primed with the
        // `#Fields:` line in effect where the piece starts.
        let reuse = matches!(&self.extractor, Some((id, _)) if *id == ctx.id)
            && !ctx.format.has_header_state();
        if !reuse {
            self.extractor = Some((ctx.id, Extractor::new(ctx)));
        }
        if let (Some(h), Some((_, x))) = (header, self.extractor.as_mut()) {
            x.extract(h, Field::Request, &mut self.extracted);
        }
        out.stats.bytes += buf.len() as u64;
        let mut line_no = first_line;
        let mut start = 0;
        while start < buf.len() {
            let end = memchr(b'\n', &buf[start..]).map_or(buf.len(), |e| start + e);
            let mut line = &buf[start..end];
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            self.line(ctx, line, line_no, out);
            line_no += 1;
            start = end + 1;
        }
    }

    /// Reports a line that could not be read whole (`head` is its start;
    /// `at` the offset where reading it stopped).
    pub fn lost_line(
        &mut self,
        ctx: &FileCtx,
        line_no: u64,
        head: &[u8],
        why: Why,
        at: usize,
        out: &mut PieceOut,
    ) {
        self.urls.clear();
        self.extracted.clear();
        // A line too long to read has only its first bytes in reports, as
        // many whether the chunker or the worker found it.
        let head = if why == Why::Line(LineError::LineTooLong) {
            &head[..head.len().min(self.opts.max_line).min(TOO_LONG_HEAD)]
        } else {
            head
        };
        let slots = [Slot::Reject(why, at), Slot::Reject(why, at)];
        // A plain line is one URL whatever `--field` says: one slot, as for
        // the plain lines that are read whole.
        let n = if self.opts.field == Field::Both && ctx.format != LogFormat::Plain {
            2
        } else {
            1
        };
        self.finish(ctx, head, line_no, &slots[..n], out);
    }

    fn line(&mut self, ctx: &FileCtx, line: &[u8], line_no: u64, out: &mut PieceOut) {
        self.urls.clear();
        self.extras.clear();
        self.dedup.clear();
        if line.len() > self.opts.max_line {
            // The same as when the chunker finds it (`lost_line`): one slot
            // per wanted field, so the output does not depend on where the
            // pieces were cut.
            let why = Why::Line(LineError::LineTooLong);
            return self.lost_line(ctx, line_no, line, why, self.opts.max_line, out);
        }
        let field = self.opts.field;
        if ctx.format == LogFormat::Plain {
            let slot = if line.iter().all(|&b| b == b' ' || b == b'\t') {
                Slot::Skip(Skip::EmptyLine)
            } else {
                self.extracted.clear();
                self.extracted.target.extend_from_slice(line);
                self.extracted.has_target = true;
                self.canonicalize(Src::Line, true, out)
            };
            return self.finish(ctx, line, line_no, &[slot], out);
        }
        let Some((_, extractor)) = self.extractor.as_mut() else {
            return;
        };
        let slots: [Slot; 2];
        let n = match extractor.extract(line, field, &mut self.extracted) {
            Line::Skip(s) => {
                slots = [Slot::Skip(s), Slot::Skip(s)];
                if field == Field::Both {
                    2
                } else {
                    1
                }
            }
            Line::Error(e, at) => {
                slots = [
                    Slot::Reject(Why::Line(e), at),
                    Slot::Reject(Why::Line(e), at),
                ];
                if field == Field::Both {
                    2
                } else {
                    1
                }
            }
            Line::Record => match field {
                Field::Request => {
                    slots = [self.request_url(out), Slot::Skip(Skip::EmptyField)];
                    1
                }
                Field::Referer => {
                    slots = [self.referer_url(out), Slot::Skip(Skip::EmptyField)];
                    1
                }
                Field::Both => {
                    let a = self.request_url(out);
                    slots = [a, self.referer_url(out)];
                    2
                }
            },
        };
        self.finish(ctx, line, line_no, &slots[..n], out);
    }

    /// The URL of the record's request target.
    fn request_url(&mut self, out: &mut PieceOut) -> Slot {
        let ex = &self.extracted;
        if !ex.has_target {
            return Slot::Skip(Skip::NoRequest);
        }
        let target = ex.target.as_slice();
        if target == b"*" {
            return Slot::Skip(Skip::AsteriskForm);
        }
        if ex.connect {
            return Slot::Skip(Skip::AuthorityForm);
        }
        if target.first() == Some(&b'/') {
            // Origin-form: the path and query of a URL whose scheme and host
            // come from the record, or from --base.
            if !ex.host.is_empty() {
                if !is_plain_host(&ex.host) {
                    return Slot::Reject(Why::Line(LineError::BadHost), 0);
                }
                let scheme = ex
                    .scheme
                    .or(ex.port.map(Scheme::from_port))
                    .unwrap_or(Scheme::Http);
                self.input.clear();
                self.input.extend_from_slice(scheme.as_str().as_bytes());
                self.input.extend_from_slice(b"://");
                self.input.extend_from_slice(&ex.host);
                if let Some(port) = ex.port {
                    let default = if scheme == Scheme::Https { 443 } else { 80 };
                    if port != default && !has_port(&ex.host) {
                        let _ = write!(self.input, ":{port}");
                    }
                }
                let prefix = self.input.len();
                self.input.extend_from_slice(target);
                self.canonicalize(Src::Built(prefix), false, out)
            } else if let Some(base) = &self.base_prefix {
                self.input.clear();
                self.input.extend_from_slice(base);
                let prefix = self.input.len();
                self.input.extend_from_slice(target);
                self.canonicalize(Src::Built(prefix), false, out)
            } else {
                self.canonicalize(Src::Target, true, out)
            }
        } else if has_scheme(target) {
            if is_authority(target) {
                return Slot::Skip(Skip::AuthorityForm);
            }
            self.canonicalize(Src::Target, false, out)
        } else {
            Slot::Reject(Why::Line(LineError::BadTarget), 0)
        }
    }

    /// The URL of the record's referer.
    fn referer_url(&mut self, out: &mut PieceOut) -> Slot {
        if !self.extracted.has_referer {
            return Slot::Skip(Skip::EmptyField);
        }
        self.canonicalize(Src::Referer, false, out)
    }

    /// Canonicalizes the URL at `src` into `urls` (`target`: as a request
    /// target, path-only without a host), with everything else the options
    /// ask for: the dedup key, the SURT form, rule statistics.
    fn canonicalize(&mut self, src: Src, target: bool, out: &mut PieceOut) -> Slot {
        let input: &[u8] = match src {
            Src::Built(_) => &self.input,
            Src::Target | Src::Line => &self.extracted.target,
            Src::Referer => &self.extracted.referer,
        };
        let run = |c: &mut Canonicalizer, into: &mut Vec<u8>| {
            if target {
                c.canonicalize_target(input, into)
            } else {
                c.canonicalize_into(input, into)
            }
        };
        let start = self.urls.len();
        let canonical: Canonical = match run(&mut self.canon, &mut self.urls) {
            Ok(c) => c,
            Err(r) => {
                let offset = match src {
                    Src::Built(prefix) => r.offset.saturating_sub(prefix),
                    _ => r.offset,
                };
                return Slot::Reject(Why::Url(r.reason), offset);
            }
        };
        let mut extra = Extra {
            fired: canonical.fired,
            ..Extra::default()
        };
        if !canonical.fired.is_empty() {
            out.stats.rule_fired(canonical.fired);
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
            let before = self.canon.before_rules().unwrap_or(&self.urls[start..]);
            extra.pre_key = xxh64(before, KEY_SEED);
        }
        if let Some(form) = self.opts.surt {
            let url = &self.urls[start..];
            if canonical.parts.host(url).is_none_or(<[u8]>::is_empty) {
                out.stats.surt_without_host += 1;
            }
            self.surt_buf.clear();
            surt(url, &canonical.parts, form, &mut self.surt_buf);
            self.urls.truncate(start);
            self.urls.extend_from_slice(&self.surt_buf);
        }
        self.extras.push(extra);
        Slot::Url(start, self.urls.len(), self.extras.len() - 1)
    }

    /// Counts the line and writes its output.
    fn finish(
        &mut self,
        ctx: &FileCtx,
        line: &[u8],
        line_no: u64,
        slots: &[Slot],
        out: &mut PieceOut,
    ) {
        let emitted = slots.iter().filter(|s| matches!(s, Slot::Url(..))).count() as u64;
        let first_reject = slots.iter().find_map(|s| match s {
            Slot::Reject(w, at) => Some((*w, *at)),
            _ => None,
        });
        if emitted > 0 {
            out.stats.emit(emitted);
        } else if let Some((why, at)) = first_reject {
            out.stats.reject(why);
            self.report(ctx, line, line_no, why, at, out);
        } else if let Some(Slot::Skip(s)) = slots.first() {
            out.stats.skip(*s);
        }
        let opts = &*self.opts;
        match opts.mode {
            Mode::Unique | Mode::Count => {
                // With `--field both` slot 0 is the request and 1 the
                // referer (a `plain` input has one slot: a request).
                let both = opts.field == Field::Both;
                for (i, s) in slots.iter().enumerate() {
                    if let Slot::Url(a, b, e) = *s {
                        let url = &self.urls[a..b];
                        out.out.extend_from_slice(url);
                        out.out.push(b'\n');
                        out.keys.push(xxh64(url, KEY_SEED));
                        out.fields.push(u8::from(both && i == 1));
                        if self.merges {
                            let x = self.extras[e];
                            out.pre.push((x.pre_key, x.fired));
                        }
                    }
                }
            }
            Mode::Records | Mode::Pipe => {
                let pipe = opts.mode == Mode::Pipe;
                match opts.output {
                    OutputFormat::Plain => {
                        if pipe {
                            for (i, s) in slots.iter().enumerate() {
                                if i > 0 {
                                    out.out.push(b'\t');
                                }
                                if let Slot::Url(a, b, e) = *s {
                                    self.plain_url(a, b, e, &mut out.out);
                                }
                            }
                            out.out.push(b'\n');
                        } else {
                            for s in slots {
                                if let Slot::Url(a, b, e) = *s {
                                    self.plain_url(a, b, e, &mut out.out);
                                    out.out.push(b'\n');
                                }
                            }
                        }
                    }
                    OutputFormat::Tsv | OutputFormat::Jsonl => {
                        for (i, s) in slots.iter().enumerate() {
                            let original = match (ctx.format, i, opts.field) {
                                (LogFormat::Plain, _, _) => line,
                                (_, 0, Field::Referer) | (_, 1, _) => &self.extracted.referer[..],
                                _ => &self.extracted.target[..],
                            };
                            let which = if opts.field == Field::Both {
                                Some(if i == 0 { "request" } else { "referer" })
                            } else {
                                None
                            };
                            let cols = Columns {
                                which,
                                dedup: self.key_canon.is_some(),
                                explain: opts.explain,
                            };
                            match *s {
                                Slot::Url(a, b, e) => {
                                    let x = self.extras[e];
                                    let dedup = x.dedup.map(|(s, e)| &self.dedup[s..e]);
                                    row(
                                        opts.output,
                                        line_no,
                                        cols,
                                        Some((&self.urls[a..b], dedup, x.fired)),
                                        None,
                                        original,
                                        &mut out.out,
                                    )
                                }
                                Slot::Reject(w, _) => row(
                                    opts.output,
                                    line_no,
                                    cols,
                                    None,
                                    Some(w.name()),
                                    original,
                                    &mut out.out,
                                ),
                                Slot::Skip(k) if pipe => row(
                                    opts.output,
                                    line_no,
                                    cols,
                                    None,
                                    Some(k.name()),
                                    b"",
                                    &mut out.out,
                                ),
                                Slot::Skip(_) => {}
                            }
                        }
                    }
                }
            }
        }
    }

    /// A plain output record: the URL, then `--key`'s fingerprint, then
    /// `--dedup-key`'s key and its fingerprint, then `--explain`'s rules.
    fn plain_url(&self, a: usize, b: usize, e: usize, out: &mut Vec<u8>) {
        let url = &self.urls[a..b];
        out.extend_from_slice(url);
        if self.opts.key {
            let _ = write!(out, "\t{}", key(url));
        }
        let x = self.extras[e];
        if self.key_canon.is_some() {
            out.push(b'\t');
            if let Some((s, e)) = x.dedup {
                let d = &self.dedup[s..e];
                out.extend_from_slice(d);
                let _ = write!(out, "\t{}", key(d));
            } else {
                out.push(b'\t');
            }
        }
        if self.opts.explain {
            let _ = write!(out, "\t{}", x.fired);
        }
    }

    fn report(
        &self,
        ctx: &FileCtx,
        line: &[u8],
        line_no: u64,
        why: Why,
        at: usize,
        out: &mut PieceOut,
    ) {
        if out.diagnostics.len() < self.opts.max_diagnostics {
            out.diagnostics
                .push((line_no, format!("{why} at byte {at}")));
        }
        if self.opts.rejects {
            let r = &mut out.rejects;
            r.extend_from_slice(ctx.name.as_bytes());
            let _ = write!(r, ":{line_no}\t{}\t{at}\t", why.name());
            r.extend_from_slice(line);
            r.push(b'\n');
        }
    }
}

/// The header row of `--format tsv --header`: the columns `row` writes
/// (or, with `--unique`/`--count`, the distinct rows), named as the keys of
/// the JSON Lines output. The fourth column of a record row holds the
/// original target, or the reason when the line gave no URL.
pub(crate) fn tsv_header(opts: &Options) -> String {
    let mut names: Vec<&str> = Vec::new();
    match opts.mode {
        Mode::Unique | Mode::Count => {
            names.extend(["url", "key"]);
            if opts.mode == Mode::Count {
                names.push("count");
            }
            if opts.field == Field::Both {
                names.push("field");
            }
        }
        Mode::Records | Mode::Pipe => {
            names.extend(["line", "url", "key", "target_or_reason"]);
            if opts.field == Field::Both {
                names.push("field");
            }
            if opts.dedup.is_some() {
                names.extend(["dedup", "dedup_key"]);
            }
            if opts.explain {
                names.push("rules");
            }
        }
    }
    let mut header = names.join("\t");
    header.push('\n');
    header
}

/// A URL of a row: the URL, its dedup key if any, the rules that fired.
type RowUrl<'a> = (&'a [u8], Option<&'a [u8]>, RuleMask);

/// Optional columns of a TSV or JSON Lines row.
#[derive(Clone, Copy, Debug)]
struct Columns<'a> {
    /// `request` or `referer`, with `--field both`.
    which: Option<&'a str>,
    /// `--dedup-key`: the key and its fingerprint.
    dedup: bool,
    /// `--explain`: the rules that fired.
    explain: bool,
}

/// Writes one TSV or JSON Lines row: line number, canonical URL, fingerprint,
/// and the original target (or the reason, for a line without URL); then
/// the optional columns: field, dedup key and its fingerprint, rules.
fn row(
    format: OutputFormat,
    line_no: u64,
    cols: Columns<'_>,
    url: Option<RowUrl<'_>>,
    reason: Option<&str>,
    original: &[u8],
    out: &mut Vec<u8>,
) {
    match format {
        OutputFormat::Tsv => {
            let _ = write!(out, "{line_no}\t");
            if let Some((u, _, _)) = url {
                out.extend_from_slice(u);
                let _ = write!(out, "\t{}\t", key(u));
                tsv_escape(original, out);
            } else {
                out.extend_from_slice(b"\t\t");
                out.extend_from_slice(reason.unwrap_or("").as_bytes());
            }
            if let Some(w) = cols.which {
                let _ = write!(out, "\t{w}");
            }
            if cols.dedup {
                out.push(b'\t');
                if let Some((_, Some(d), _)) = url {
                    out.extend_from_slice(d);
                    let _ = write!(out, "\t{}", key(d));
                } else {
                    out.push(b'\t');
                }
            }
            if cols.explain {
                match url {
                    Some((_, _, fired)) => {
                        let _ = write!(out, "\t{fired}");
                    }
                    None => out.push(b'\t'),
                }
            }
            out.push(b'\n');
        }
        OutputFormat::Jsonl | OutputFormat::Plain => {
            let _ = write!(out, "{{\"line\":{line_no}");
            if let Some(w) = cols.which {
                let _ = write!(out, ",\"field\":\"{w}\"");
            }
            if let Some((u, dedup, fired)) = url {
                out.extend_from_slice(b",\"url\":");
                json_bytes(u, out);
                let _ = write!(out, ",\"key\":{}", key(u));
                if cols.dedup {
                    match dedup {
                        Some(d) => {
                            out.extend_from_slice(b",\"dedup\":");
                            json_bytes(d, out);
                            let _ = write!(out, ",\"dedup_key\":{}", key(d));
                        }
                        None => out.extend_from_slice(b",\"dedup\":null,\"dedup_key\":null"),
                    }
                }
                if cols.explain {
                    out.extend_from_slice(b",\"rules\":[");
                    for (i, r) in fired.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        let _ = write!(out, "\"{}\"", r.name());
                    }
                    out.push(b']');
                }
            } else if let Some(r) = reason {
                let _ = write!(out, ",\"reason\":\"{r}\"");
            }
            if !original.is_empty() {
                out.extend_from_slice(b",\"target\":");
                json_bytes(original, out);
            }
            out.extend_from_slice(b"}\n");
        }
    }
}

/// TSV field escaping: `\` `\t` `\n` `\r` as backslash escapes, so a field
/// never splits a row or a column.
fn tsv_escape(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// A JSON string of `bytes`: invalid UTF-8 becomes U+FFFD (JSON cannot
/// carry raw bytes; canonical URLs are ASCII, so only the original target
/// can be affected). Printable ASCII without `"` and `\` (every canonical
/// URL, most targets) needs no escape and is copied as it is, without the
/// general path's allocation.
pub fn json_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    if bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut s = String::new();
    super::stats::json_string(&mut s, bytes);
    out.extend_from_slice(s.as_bytes());
}

/// RFC 3986 `scheme ":"` at the start.
fn has_scheme(t: &[u8]) -> bool {
    if !t.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    for &b in &t[1..] {
        match b {
            b':' => return true,
            b if b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.' => {}
            _ => return false,
        }
    }
    false
}

/// `host:port` with nothing after the port: an authority-form target.
fn is_authority(t: &[u8]) -> bool {
    match memchr::memrchr(b':', t) {
        Some(c) => {
            c + 1 < t.len()
                && t[c + 1..].iter().all(u8::is_ascii_digit)
                && memchr(b'/', t).is_none()
        }
        None => false,
    }
}

/// A logged host that can be put in front of a path as it is: no byte that
/// would end the authority or start userinfo, no space or control.
fn is_plain_host(h: &[u8]) -> bool {
    h.iter()
        .all(|&b| b > b' ' && b != 0x7f && !matches!(b, b'/' | b'\\' | b'?' | b'#' | b'@'))
}

/// True when a logged host already carries a port (`h:8080`, `[::1]:8080`).
fn has_port(h: &[u8]) -> bool {
    match memchr::memrchr(b':', h) {
        Some(c) => !h[c..].contains(&b']'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_xxh64_seed_42_as_signed() {
        // The crate is XXH64: its published vector for empty input, seed 0.
        assert_eq!(xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
        // The key is that hash with seed 42, reinterpreted as i64 (Spark's
        // LongType); tests/cli_logs.rs checks it against an independent
        // implementation.
        let h = xxh64(b"http://example.com/", 42);
        assert_eq!(key(b"http://example.com/"), h as i64);
        assert_ne!(key(b"a"), key(b"b"));
    }

    #[test]
    fn target_forms() {
        assert!(has_scheme(b"http://a/"));
        assert!(has_scheme(b"example.com:443"));
        assert!(!has_scheme(b"/a:b"));
        assert!(!has_scheme(b"1http:"));
        assert!(is_authority(b"example.com:443"));
        assert!(!is_authority(b"http://a:80/"));
        assert!(!is_authority(b"mailto:x"));
        assert!(is_plain_host(b"a.example:8080"));
        assert!(!is_plain_host(b"a.example/x"));
        assert!(!is_plain_host(b"u@a.example"));
        assert!(has_port(b"a:1") && has_port(b"[::1]:1") && !has_port(b"[::1]"));
    }
}
