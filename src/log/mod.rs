//! Records: from one log line to the parts of one request URL.
//!
//! Each log format has a reader (the list at the end of this file) that
//! reads one line (without its line end) and writes what it found into an
//! [`Extracted`], undoing the logger's escaping on the way (Apache `\"` `\\`
//! `\xhh`, nginx `\xHH`, HAProxy `#XX`, JSON string escapes, CloudFront's
//! percent-encoding). The reader does
//! not canonicalize: [`crate::pipeline`] turns the parts into one URL and hands
//! it to the [`Canonicalizer`](crate::Canonicalizer).
//!
//! Extractors never allocate per line: `Extracted` owns its buffers, which are
//! cleared and reused for the next line.

use std::fmt;

/// The scheme of a record, when the log says it (or says a port it follows from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Scheme {
    /// `http`
    Http,
    /// `https`
    Https,
}

impl Scheme {
    /// `"http"` or `"https"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The scheme a server port implies: 443 is `https`, everything else `http`.
    pub fn from_port(port: u16) -> Scheme {
        if port == 443 {
            Scheme::Https
        } else {
            Scheme::Http
        }
    }

    /// Parses `http`/`https` (ASCII case-insensitive; `ws`→http, `wss`→https as
    /// CloudFront logs them).
    ///
    /// ```
    /// use canonurl::log::Scheme;
    ///
    /// assert_eq!(Scheme::parse(b"HTTPS"), Some(Scheme::Https));
    /// assert_eq!(Scheme::parse(b"ws"), Some(Scheme::Http));
    /// assert_eq!(Scheme::parse(b"ftp"), None);
    /// assert_eq!(Scheme::from_port(443).as_str(), "https");
    /// ```
    pub fn parse(bytes: &[u8]) -> Option<Scheme> {
        if bytes.eq_ignore_ascii_case(b"http") || bytes.eq_ignore_ascii_case(b"ws") {
            Some(Scheme::Http)
        } else if bytes.eq_ignore_ascii_case(b"https") || bytes.eq_ignore_ascii_case(b"wss") {
            Some(Scheme::Https)
        } else {
            None
        }
    }
}

/// What the caller wants from each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Field {
    /// The request target (the default).
    #[cfg_attr(
        feature = "cli",
        value(
            name = "request",
            help = "The request target (with the record's host, when it has one)"
        )
    )]
    Request,
    /// The `Referer` header.
    #[cfg_attr(feature = "cli", value(name = "referer", help = "The Referer header"))]
    Referer,
    /// Both: the request target, then the referer.
    #[cfg_attr(
        feature = "cli",
        value(name = "both", help = "Both, labelled (a field column)")
    )]
    Both,
}

impl Field {
    /// True when the request target is wanted.
    pub fn request(self) -> bool {
        matches!(self, Field::Request | Field::Both)
    }
    /// True when the referer is wanted.
    pub fn referer(self) -> bool {
        matches!(self, Field::Referer | Field::Both)
    }
}

/// The parts of one record, written by an extractor. Buffers are reused from
/// line to line: an extractor must `clear()` before it writes (see
/// [`Extracted::clear`]).
#[derive(Clone, Debug, Default)]
pub struct Extracted {
    /// The request target: read it with [`target`](Self::target).
    target: Target,
    /// True when the target was found (it may still be empty: `"GET  HTTP/1.1"`).
    pub has_target: bool,
    /// True when the method is `CONNECT` (the target is authority-form).
    pub connect: bool,
    /// The Host the request was for (`Host` header, virtual host, `cs-host`),
    /// possibly with `:port`. Empty when the log does not say.
    pub host: Vec<u8>,
    /// The scheme, when the log says it (`cs-protocol`, Traefik `RequestScheme`).
    pub scheme: Option<Scheme>,
    /// The server port, when logged apart from the host (`%p`, `s-port`).
    pub port: Option<u16>,
    /// The `Referer` header, escaping undone. Empty when absent.
    pub referer: Vec<u8>,
    /// True when the referer was found and is not a placeholder (`-`, `""`).
    pub has_referer: bool,
    /// Where the record's other fields (status, size, method, time, client)
    /// are in the line, noted only when `want_info` is set.
    pub(crate) info: info::Info,
    /// Set by the caller when it wants `info`; kept by `clear`.
    pub(crate) want_info: bool,
}

impl Extracted {
    /// Resets every field for the next line, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.target.at = None;
        self.target.owned.clear();
        self.has_target = false;
        self.connect = false;
        self.host.clear();
        self.scheme = None;
        self.port = None;
        self.referer.clear();
        self.has_referer = false;
        if self.want_info {
            self.info = info::Info::default();
        }
    }

    /// The request target of the record read from `line` (pass the line
    /// the extractor read), as the client sent it, log escaping undone: an
    /// origin-form path and query (`/a?b`), an absolute URL (`http://h/a`),
    /// `*`, or an authority (`host:443`). Empty when absent. It lies in the
    /// line where the log's escaping left its bytes as they are, and is a
    /// copy only where unescaping changed them (or the log splits it).
    ///
    /// # Panics
    ///
    /// When the target lies in the line and `line` is shorter than the line
    /// the extractor read: a caller passing another line is a bug.
    ///
    /// ```
    /// use canonurl::log::{Extracted, Field, Line, LogFormat, RecordReader};
    ///
    /// let mut reader = RecordReader::new(LogFormat::Common, None);
    /// let mut record = Extracted::default();
    /// let line = br#"h - - [10/Oct/2000:13:55:36 -0700] "GET /a\"b HTTP/1.1" 200 1"#;
    /// assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
    /// assert_eq!(record.target(line), br#"/a"b"#);
    /// ```
    #[inline]
    pub fn target<'a>(&'a self, line: &'a [u8]) -> &'a [u8] {
        match self.target.at {
            Some((start, end)) => &line[start..end],
            None => &self.target.owned,
        }
    }

    /// Where the target lies in the line, when it does (see
    /// [`target`](Self::target)).
    #[inline]
    pub(crate) fn target_span(&self) -> Option<(usize, usize)> {
        self.target.at
    }

    /// Sets the target to a copy of `bytes`: for a record made by hand, or
    /// an extractor whose target is not one part of its line.
    ///
    /// ```
    /// use canonurl::log::Extracted;
    ///
    /// let mut record = Extracted::default();
    /// record.set_target(b"/a?b");
    /// assert_eq!(record.target(b"any line"), b"/a?b");
    /// ```
    pub fn set_target(&mut self, bytes: &[u8]) {
        let owned = self.target_buf();
        owned.clear();
        owned.extend_from_slice(bytes);
    }

    /// The target's own buffer, for an extractor that builds the target
    /// (unescaping, joining a stem and a query): the record's target is
    /// from now on what the buffer holds. Empty after [`clear`](Self::clear).
    #[inline]
    pub(crate) fn target_buf(&mut self) -> &mut Vec<u8> {
        self.target.at = None;
        &mut self.target.owned
    }

    /// The target's own buffer holding the target as it is now (a target
    /// lent in `line` is copied into it first), for an extractor that adds
    /// to a target it may have lent: the record's target is from now on
    /// what the buffer holds.
    pub(crate) fn owned_target(&mut self, line: &[u8]) -> &mut Vec<u8> {
        if let Some((start, end)) = self.target.at.take() {
            self.target.owned.clear();
            self.target
                .owned
                .extend_from_slice(line.get(start..end).unwrap_or_default());
        }
        &mut self.target.owned
    }

    /// Drops the first `n` bytes of the target, in either form (W3C's
    /// schemeless `cs-uri` gives its host away).
    pub(crate) fn cut_target_front(&mut self, n: usize) {
        match &mut self.target.at {
            Some((start, end)) => *start = (*start + n).min(*end),
            None => {
                let owned = &mut self.target.owned;
                owned.drain(..n.min(owned.len()));
            }
        }
    }

    /// Sets the target to `line[start..end]` of the line being read, where
    /// it stays: for an extractor that knows the target's place rather than
    /// holding a slice of it. The caller checks that the range is in the line.
    #[inline]
    pub(crate) fn lend_target_at(&mut self, start: usize, end: usize) {
        debug_assert!(start <= end, "a lent target ends before it starts");
        self.target.at = Some((start, end));
    }

    /// True when the target lies in the line (lent), false when it is a
    /// copy: for tests that a copy is made where unescaping changes bytes.
    #[cfg(test)]
    pub(crate) fn target_is_lent(&self) -> bool {
        self.target.at.is_some()
    }

    /// Sets the target to `part` of `line`, the line being read, where it
    /// stays: no copy. A `part` that is not within `line` is copied (never
    /// the case for the extractors, which cut it from the line).
    #[inline]
    pub(crate) fn lend_target(&mut self, line: &[u8], part: &[u8]) {
        let start = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
        if start <= line.len() && part.len() <= line.len() - start {
            self.target.at = Some((start, start + part.len()));
        } else {
            debug_assert!(false, "a lent target outside its line");
            self.set_target(part);
        }
    }
}

/// Where a record's target is: one form at a time, chosen by the extractor
/// as it writes the target and reset by [`Extracted::clear`], so that no
/// reader can see one form while the target is in the other.
#[derive(Clone, Debug, Default)]
struct Target {
    /// `Some((start, end))`: the target is `line[start..end]`, the logged
    /// bytes as they are. `None`: it is `owned`.
    at: Option<(usize, usize)>,
    /// The target where the extractor built it; its capacity is kept from
    /// record to record, so a copy costs no allocation once warm.
    owned: Vec<u8>,
}

/// Why a line gave no URL although nothing is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Skip {
    /// An empty (or all-whitespace) line.
    EmptyLine,
    /// A header or comment line (`#Fields:`, `#Version:`, ...).
    Header,
    /// A record without an HTTP request: a request field of `-`, a TLS or
    /// connection record of a load balancer, a HAProxy start-up message.
    NoRequest,
    /// `OPTIONS *`: asterisk-form, not a URL.
    AsteriskForm,
    /// `CONNECT host:port`: authority-form, not a URL.
    AuthorityForm,
    /// The wanted field is a placeholder (`-`, empty): a referer that was not sent.
    EmptyField,
    /// `--status`: the record's status is not one of those asked for.
    StatusFiltered,
    /// `--status`: the record has no status (the format or the line lacks it).
    NoStatus,
    /// `--method`: the record's method is not one of those asked for.
    MethodFiltered,
    /// `--method`: the record has no method.
    NoMethod,
}

impl Skip {
    /// Every skip reason, in the order statistics list them.
    pub const ALL: [Skip; 10] = [
        Skip::EmptyLine,
        Skip::Header,
        Skip::NoRequest,
        Skip::AsteriskForm,
        Skip::AuthorityForm,
        Skip::EmptyField,
        Skip::StatusFiltered,
        Skip::NoStatus,
        Skip::MethodFiltered,
        Skip::NoMethod,
    ];

    /// Stable machine-friendly name.
    pub fn name(self) -> &'static str {
        match self {
            Skip::EmptyLine => "empty-line",
            Skip::Header => "header",
            Skip::NoRequest => "no-request",
            Skip::AsteriskForm => "asterisk-form",
            Skip::AuthorityForm => "authority-form",
            Skip::EmptyField => "empty-field",
            Skip::StatusFiltered => "status-filtered",
            Skip::NoStatus => "no-status",
            Skip::MethodFiltered => "method-filtered",
            Skip::NoMethod => "no-method",
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a line of a log could not be read as a record of its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LineError {
    /// The line does not have the shape of the format (no request field, too
    /// few fields, no JSON object, ...).
    Malformed,
    /// The request line is not `METHOD SP target [SP HTTP/x.y]`.
    BadRequestLine,
    /// A quoted field or JSON string is not closed before the end of the line.
    Unterminated,
    /// The logger cut the request (HAProxy's 1024-byte limit): it is not whole.
    Truncated,
    /// A W3C data line before any `#Fields:` header, or with a field count
    /// that does not match it.
    FieldsMismatch,
    /// A field the format needs (the URI stem, the JSON target path) is absent.
    MissingField,
    /// The logged host or port cannot be part of a URL (contains `/`, `@`,
    /// spaces; port not a number).
    BadHost,
    /// The request target is neither origin-form, absolute-form, authority-form
    /// nor asterisk-form.
    BadTarget,
    /// The line is longer than the line limit.
    LineTooLong,
    /// Invalid JSON.
    BadJson,
    /// An origin-form target (`/x`) with a `--base` whose path is opaque
    /// (`about:blank`, `mailto:x`): the URL Standard resolves only a
    /// fragment against such a base, never a path.
    OpaqueBase,
}

impl LineError {
    /// Stable machine-friendly name.
    pub fn name(self) -> &'static str {
        match self {
            LineError::Malformed => "malformed-record",
            LineError::BadRequestLine => "bad-request-line",
            LineError::Unterminated => "unterminated-field",
            LineError::Truncated => "truncated-request",
            LineError::FieldsMismatch => "fields-mismatch",
            LineError::MissingField => "missing-field",
            LineError::BadHost => "bad-host",
            LineError::BadTarget => "bad-target",
            LineError::LineTooLong => "line-too-long",
            LineError::BadJson => "bad-json",
            LineError::OpaqueBase => "opaque-base",
        }
    }
}

impl LineError {
    /// What is wrong, in words, for diagnostics.
    pub fn message(self) -> &'static str {
        match self {
            LineError::Malformed => "not a record of this log format",
            LineError::BadRequestLine => "request line is not METHOD SP target [SP HTTP/x.y]",
            LineError::Unterminated => "quoted field or string not closed",
            LineError::Truncated => "request cut short by the logger",
            LineError::FieldsMismatch => "fields do not match the #Fields header",
            LineError::MissingField => "a field this format needs is missing",
            LineError::BadHost => "logged host or port cannot be part of a URL",
            LineError::BadTarget => "request target is not a URL or path",
            LineError::LineTooLong => "line too long",
            LineError::BadJson => "invalid JSON",
            LineError::OpaqueBase => {
                "a request path cannot resolve against a --base with an opaque path (about:, mailto:, data:)"
            }
        }
    }
}

/// The message, as diagnostics show it; [`LineError::name`] is the stable
/// name that statistics and output rows use.
impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for LineError {}

/// What an extractor made of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A record: `Extracted` holds its parts.
    Record,
    /// Nothing to emit, nothing wrong.
    Skip(Skip),
    /// The line is not a record of the format; the offset is the byte in the
    /// line where the problem was found.
    Error(LineError, usize),
}

impl LogFormat {
    /// True for formats whose meaning of a line depends on an earlier header
    /// line (`#Fields:`), which must be carried from chunk to chunk.
    pub fn has_header_state(self) -> bool {
        self.header_line().is_some()
    }

    /// The header lines to look for in an input whose format is not known
    /// yet (it is detected from the first piece, which may hold one): those
    /// of the first format that has any.
    pub(crate) fn any_header_line() -> Option<HeaderLine> {
        LogFormat::ALL.into_iter().find_map(LogFormat::header_line)
    }
}

/// How a reader recognises a format's header lines, so that it can hand the
/// last one seen to the records after it (see
/// [`Chunker::track_header`](crate::input::Chunker::track_header)) without
/// knowing the format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeaderLine {
    /// A byte that every header line has: a reader looks for it first and
    /// only tests the lines it is in.
    pub marker: u8,
    /// Whether a whole line (without its line end) is a header line.
    pub is_header: fn(&[u8]) -> bool,
    /// Directive lines that set more of the state (Zeek's `#unset_field`),
    /// by their first bytes: the last line of each is carried too, before
    /// the header line, one per line.
    pub directives: &'static [&'static [u8]],
    /// True when the header is the input's first line that is not blank
    /// (a CSV header row), whatever its bytes: `marker` and `is_header` are
    /// then not used, and no later line is a header.
    pub first_line: bool,
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LogFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown log format {s:?}"))
    }
}

pub mod detect;
pub(crate) mod escape;
pub(crate) mod fields;
pub(crate) mod info;
mod record;
mod registry;
mod target;

pub use csv::CsvColumns;
pub use info::{RecordColumn, RecordFilter};
pub use json::{JsonPaths, JsonPreset};
pub(crate) use record::Extract;
pub use record::RecordReader;
pub(crate) use registry::{LogReader, ReadOptions, ReaderLoop, Tally};
pub(crate) use target::request_url_of;
pub use target::{base_prefix, request_url, RequestTarget, RequestUrl};

// The registered readers (module and type: the module is declared here),
// each with the formats it reads (their `-f` names and help), in the order
// of `LogFormat::ALL` and of `-f`'s help. A new format is a file and an
// entry here (see `registry.rs`). For
// `-f auto`, `rank` is the reader's place in the detection order (its
// `decides` test is tried in that order, and a tie of votes goes to the
// lower rank), and `score` says which shape a line with several gets (the
// highest: the most specific shape; 0 for readers that do not vote).
// `own_loop`: the pipeline's line loop is compiled for this reader itself
// rather than run over the dispatch (see `Reader::run_loop`).
registry::formats! {
    /// A `plain` line is its own target.
    Plain(plain::PlainReader) { rank: 8, score: 1 } => [
        /// One URL or request target per line.
        Plain = "plain",
    ],
    Clf(clf::ClfExtractor) { rank: 7, score: 2, own_loop } => [
        /// Apache/nginx common log format (`%h %l %u %t "%r" %>s %b`).
        Common = "common",
        /// Apache/nginx combined: common plus `"%{Referer}i" "%{User-agent}i"`.
        Combined = "combined",
        /// Combined or common with a virtual-host prefix (`%v:%p` or `%v`).
        Vhost = "vhost",
    ],
    W3c(w3c::W3cExtractor) { rank: 3, score: 0 } => [
        /// W3C extended log (IIS and others), columns from `#Fields:`.
        W3c = "w3c",
        /// Amazon CloudFront standard log (W3C, tab separated, percent-encoded values).
        Cloudfront = "cloudfront",
    ],
    Alb(alb::AlbExtractor) { rank: 5, score: 7 } => [
        /// AWS Application/Classic Load Balancer access log.
        Alb = "alb",
    ],
    Json(json::JsonExtractor) { rank: 4, score: 8 } => [
        /// One JSON object per line (nginx JSON, Caddy, Traefik, cloud and CDN
        /// logs, Zeek, or given field paths).
        Json = "json",
    ],
    Haproxy(haproxy::HaproxyExtractor) { rank: 6, score: 6 } => [
        /// HAProxy HTTP log, usually with a syslog prefix.
        Haproxy = "haproxy",
    ],
    S3(s3::S3Extractor) { rank: 9, score: 3 } => [
        /// Amazon S3 server access log (host from the logged Host header or the bucket).
        S3 = "s3",
    ],
    Squid(squid::SquidExtractor) { rank: 10, score: 5 } => [
        /// Squid native access log (absolute URL in field 7).
        Squid = "squid",
    ],
    Envoy(envoy::EnvoyExtractor) { rank: 11, score: 4 } => [
        /// Envoy's or Istio's default access log (authority from `%REQ(:AUTHORITY)%`).
        Envoy = "envoy",
    ],
    Zeek(zeek::ZeekExtractor) { rank: 2, score: 0 } => [
        /// Zeek (Bro) `http.log`, TSV with `#fields` headers.
        Zeek = "zeek",
    ],
    Uwsgi(uwsgi::UwsgiExtractor) { rank: 12, score: 9 } => [
        /// uWSGI's request log (`[pid: ...] addr () {..} [ctime] METHOD URI => generated ...`).
        Uwsgi = "uwsgi",
    ],
    Csv(csv::CsvExtractor) { rank: 1, score: 0 } => [
        /// Comma-separated values with a header row; columns by name (`--columns`).
        Csv = "csv",
        /// Tab-separated values with a header row; columns by name (`--columns`).
        Tsv = "tsv",
    ],
}
