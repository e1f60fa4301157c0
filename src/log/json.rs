//! JSON access logs: one object per line (Caddy, Traefik, hand-written nginx
//! `log_format ... escape=json` layouts, or any layout given as dotted paths).
//!
//! The extractor builds no document. It walks the line once: a member whose
//! key leads toward a wanted path is entered, every other value is skipped by
//! a small validating scanner, and the walk stops as soon as every wanted path
//! has been found or can no longer appear (its enclosing object has closed).
//! Bytes after that point are not checked, so a line cut after its wanted
//! fields still gives a record; invalid JSON before it is an error.
//!
//! ## Paths
//!
//! A path is a list of keys joined by `.`: `request.uri` is the member `uri`
//! of the object that is the member `request` of the line's object. A key
//! cannot contain `.`. A path may list alternatives joined by `|`, best
//! first: `http_host|host` takes `http_host`, and `host` only when
//! `http_host` is missing or a placeholder. Keys are compared byte for byte
//! after their JSON escapes are undone. When a key occurs twice in one
//! object, the first occurrence counts.
//!
//! ## Values
//!
//! - A string is taken with its escapes undone. `null`, `""` and `"-"` count
//!   as absent, and so do numbers, `true` and `false`.
//! - An array stands for its first element, when that is a string: Caddy logs
//!   every header as the array of its values (`"Referer":["https://a/"]`).
//! - An object found at the scheme path means `https`: Caddy writes
//!   `request.tls` only for requests that came over TLS. Its absence does not
//!   mean `http` (the scheme stays unknown), since other layouts put nothing
//!   there.
//!
//! ## Strings
//!
//! JSON escapes `\" \\ \/ \b \f \n \r \t \uXXXX` are undone, `\uXXXX` written
//! as UTF-8, a surrogate pair as one code point. A surrogate without its
//! other half becomes U+FFFD (`EF BF BD`) rather than an error: one odd
//! character in a User-Agent-like field should not cost the whole record.
//! nginx writes `\xHH` for the bytes it escapes when a layout lacks
//! `escape=json` (`\x22` for `"`, `\x5C` for `\`); that escape is not JSON
//! but is undone to the byte `0xHH`. Any other escape is [`LineError::BadJson`].
//! Raw bytes of `0x80` and above are copied as they are, valid UTF-8 or not
//! (nginx `escape=json` writes them raw); raw control bytes are tolerated too.
//!
//! ## Errors
//!
//! A line without `{` is [`LineError::Malformed`]; text before the first `{`
//! is ignored (docker compose writes `web_1  | {...}`). A line that ends inside
//! a string is [`LineError::Unterminated`] at the string's opening quote;
//! one that ends inside an object or array is `Unterminated` at the line's
//! end. Anything else that is not JSON is [`LineError::BadJson`] at the byte
//! where it was seen, and so is nesting deeper than 128 levels inside a
//! skipped value (the skipper keeps its stack in one `u128`, so no input can
//! exhaust memory or the call stack). Numbers are checked loosely: a run of
//! digits, signs, `.`, `e` and `E` that starts with `-` or a digit.

use std::cmp::Reverse;
use std::fmt;
use std::str::FromStr;

use memchr::{memchr, memchr2, memrchr};

use super::{Extracted, Field, Line, LineError, Scheme, Skip};

/// Where the fields of a record are, as dotted paths into the object
/// (`"request.uri"`). Each path may list alternatives, best first, joined by
/// `|` (`"http_host|host"`); see the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPaths {
    /// The request target: path and query, or an absolute URL.
    pub target: Option<String>,
    /// A whole request line, `GET /x HTTP/1.1` (nginx `$request`), read when
    /// the target path is missing.
    pub request_line: Option<String>,
    /// The Host the request was for, possibly with `:port`.
    pub host: Option<String>,
    /// The scheme: a string `Scheme::parse` understands, or an object whose
    /// presence means `https` (Caddy's `request.tls`).
    pub scheme: Option<String>,
    /// The `Referer` header (a string, or an array whose first element is one).
    pub referer: Option<String>,
    /// The request method, used only to recognise `CONNECT`.
    pub method: Option<String>,
}

/// The JSON layouts of well-known servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum JsonPreset {
    /// Hand-written nginx `log_format ... escape=json` layouts named after
    /// nginx's variables: `request_uri` or `request`, `http_host` or `host`,
    /// `scheme`, `http_referer` (or the common misspelling `http_referrer`),
    /// `request_method`.
    #[cfg_attr(feature = "cli", value(name = "nginx"))]
    Nginx,
    /// Caddy's access log (`http.log.access`): `request.uri`, `request.host`,
    /// `request.method`, `request.headers.Referer[0]`, `https` when
    /// `request.tls` is present.
    #[cfg_attr(feature = "cli", value(name = "caddy"))]
    Caddy,
    /// Traefik's JSON access log (v1 and v2): `RequestPath`, `RequestAddr`
    /// (the Host header with its port; `RequestHost` drops the port),
    /// `RequestScheme` (absent in v1), `RequestMethod`, `request_Referer`.
    #[cfg_attr(feature = "cli", value(name = "traefik"))]
    Traefik,
}

impl JsonPreset {
    /// Every preset, in the order detection prefers them on a tie.
    pub const ALL: [JsonPreset; 3] = [JsonPreset::Nginx, JsonPreset::Caddy, JsonPreset::Traefik];

    /// The name used on the command line: `nginx`, `caddy` or `traefik`.
    pub fn name(self) -> &'static str {
        match self {
            JsonPreset::Nginx => "nginx",
            JsonPreset::Caddy => "caddy",
            JsonPreset::Traefik => "traefik",
        }
    }

    /// The paths of the preset's layout.
    pub fn paths(self) -> JsonPaths {
        let path = |p: &str| Some(p.to_owned());
        match self {
            // `$request_uri` is the target as sent; `$uri` is not used: nginx
            // has already decoded and normalized it. `$http_host` keeps the
            // port the client sent, `$host` is the fallback nginx itself uses.
            // `server_name` is left out: it may be `_` or a wildcard.
            JsonPreset::Nginx => JsonPaths {
                target: path("request_uri"),
                request_line: path("request"),
                host: path("http_host|host"),
                scheme: path("scheme"),
                referer: path("http_referer|http_referrer|referer"),
                method: path("request_method"),
            },
            // `request.proto` is the HTTP version, not the scheme.
            JsonPreset::Caddy => JsonPaths {
                target: path("request.uri"),
                request_line: None,
                host: path("request.host"),
                scheme: path("request.tls"),
                referer: path("request.headers.Referer"),
                method: path("request.method"),
            },
            // Traefik sets `RequestAddr` to the Host header and splits it into
            // `RequestHost` and `RequestPort`; v1 also writes `RequestLine`.
            JsonPreset::Traefik => JsonPaths {
                target: path("RequestPath"),
                request_line: path("RequestLine"),
                host: path("RequestAddr|RequestHost"),
                scheme: path("RequestScheme"),
                referer: path("request_Referer"),
                method: path("RequestMethod"),
            },
        }
    }
}

impl fmt::Display for JsonPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for JsonPreset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        JsonPreset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown JSON preset {s:?} (nginx, caddy, traefik)"))
    }
}

/// The field of [`JsonPaths`] an alternative belongs to; the index into
/// per-slot arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Target,
    RequestLine,
    Host,
    Scheme,
    Referer,
    Method,
}

const SLOT_COUNT: usize = 6;

/// Alternatives are tracked as bits of a `u64`; paths listing more than this
/// many in total lose the extra ones.
const MAX_ALTERNATIVES: usize = 64;

/// One alternative path of one slot, split into its keys.
#[derive(Clone, Debug)]
struct Alternative {
    slot: Slot,
    keys: Box<[Box<[u8]>]>,
}

/// A problem in a line and the byte offset where it was seen.
type Fault = (LineError, usize);

/// What one line gave so far. Reset per line, buffers kept.
#[derive(Clone, Debug, Default)]
struct Found {
    /// Alternatives whose value has been read, or that can no longer appear
    /// because the object that would hold them has closed.
    seen: u64,
    /// Per slot, the alternative whose value was taken (lower is better).
    best: [Option<u8>; SLOT_COUNT],
    /// The request line, escapes undone, until it is split.
    request_line: Vec<u8>,
    /// Offset of the request line's opening quote, for `BadRequestLine`.
    request_line_at: usize,
    scheme: Option<Scheme>,
    method_is_connect: bool,
}

impl Found {
    fn reset(&mut self) {
        self.seen = 0;
        self.best = [None; SLOT_COUNT];
        self.request_line.clear();
        self.request_line_at = 0;
        self.scheme = None;
        self.method_is_connect = false;
    }

    fn has(&self, slot: Slot) -> bool {
        self.best[slot as usize].is_some()
    }

    /// True when no better value can come for the slot whose alternatives
    /// are `slot_bits`: every alternative better than the one taken (or all,
    /// if none was) has been seen.
    fn is_settled(&self, slot: Slot, slot_bits: u64) -> bool {
        let better = match self.best[slot as usize] {
            Some(taken) => slot_bits & ((1u64 << taken) - 1),
            None => slot_bits,
        };
        better & !self.seen == 0
    }

    /// Takes a string value for the alternatives in `leaf`, where it beats
    /// what their slots hold. `at` is the value's opening quote.
    fn take_string(
        &mut self,
        leaf: u64,
        alternatives: &[Alternative],
        value: &[u8],
        at: usize,
        field: Field,
        out: &mut Extracted,
    ) {
        self.seen |= leaf;
        if value.is_empty() || value == b"-" {
            return;
        }
        for index in bits(leaf) {
            let Some(alternative) = alternatives.get(index) else {
                continue;
            };
            let slot = alternative.slot;
            if self.best[slot as usize].is_some_and(|taken| usize::from(taken) < index) {
                continue;
            }
            // `index < MAX_ALTERNATIVES`, so it fits.
            self.best[slot as usize] = Some(index as u8);
            match slot {
                Slot::Target if field.request() => replace(&mut out.target, value),
                Slot::RequestLine if field.request() => {
                    replace(&mut self.request_line, value);
                    self.request_line_at = at;
                }
                // Only their presence matters when the referer alone is wanted.
                Slot::Target | Slot::RequestLine => {}
                Slot::Host => replace(&mut out.host, value),
                Slot::Scheme => self.scheme = Scheme::parse(value),
                Slot::Referer => replace(&mut out.referer, value),
                Slot::Method => self.method_is_connect = value == b"CONNECT",
            }
        }
    }

    /// Takes an object value for the alternatives in `leaf`: only the scheme
    /// makes sense of one (Caddy's `request.tls`).
    fn take_object(&mut self, leaf: u64, alternatives: &[Alternative]) {
        self.seen |= leaf;
        for index in bits(leaf) {
            if alternatives
                .get(index)
                .is_some_and(|a| a.slot == Slot::Scheme)
            {
                let best = &mut self.best[Slot::Scheme as usize];
                if best.is_none_or(|taken| usize::from(taken) > index) {
                    *best = Some(index as u8);
                    self.scheme = Some(Scheme::Https);
                }
            }
        }
    }
}

/// Reads JSON access-log lines: finds the values at the configured paths and
/// copies them, escapes undone, into an [`Extracted`].
///
/// ```
/// use canonurl::log::json::{JsonExtractor, JsonPreset};
/// use canonurl::log::{Extracted, Field, Line};
///
/// let mut caddy = JsonExtractor::new(JsonPreset::Caddy.paths());
/// let mut out = Extracted::default();
/// let line = br#"caddy | {"msg":"handled request","request":{"host":"a.example","uri":"/x?q=\u00e9","tls":{"proto":"h2"}}}"#;
/// assert_eq!(caddy.extract(line, Field::Request, &mut out), Line::Record);
/// assert_eq!(out.target, "/x?q=é".as_bytes());
/// assert_eq!(out.host, b"a.example");
/// assert_eq!(out.scheme, Some(canonurl::log::Scheme::Https));
/// ```
#[derive(Clone, Debug)]
pub struct JsonExtractor {
    paths: JsonPaths,
    /// Bit `i` of every mask below stands for `alternatives[i]`; the
    /// alternatives of one slot are adjacent, best first.
    alternatives: Vec<Alternative>,
    slot_bits: [u64; SLOT_COUNT],
    /// For each object entered on the way to a path, outermost first: the
    /// alternatives that may still be found inside it.
    objects: Vec<u64>,
    /// A key with escapes, undone (keys without escapes are read in place).
    key: Vec<u8>,
    /// The string value being taken, escapes undone.
    value: Vec<u8>,
    found: Found,
}

impl JsonExtractor {
    /// An extractor for the layout described by `paths`.
    pub fn new(paths: JsonPaths) -> Self {
        let mut alternatives = Vec::new();
        let mut slot_bits = [0u64; SLOT_COUNT];
        let slots = [
            (Slot::Target, &paths.target),
            (Slot::RequestLine, &paths.request_line),
            (Slot::Host, &paths.host),
            (Slot::Scheme, &paths.scheme),
            (Slot::Referer, &paths.referer),
            (Slot::Method, &paths.method),
        ];
        for (slot, path) in slots {
            for alternative in path.iter().flat_map(|p| p.split('|')) {
                let alternative = alternative.trim();
                if alternative.is_empty() || alternatives.len() == MAX_ALTERNATIVES {
                    continue;
                }
                slot_bits[slot as usize] |= 1u64 << alternatives.len();
                let keys = alternative.split('.').map(|key| Box::from(key.as_bytes()));
                alternatives.push(Alternative {
                    slot,
                    keys: keys.collect(),
                });
            }
        }
        let deepest = alternatives.iter().map(|a| a.keys.len()).max().unwrap_or(0);
        JsonExtractor {
            paths,
            alternatives,
            slot_bits,
            objects: Vec::with_capacity(deepest + 1),
            key: Vec::with_capacity(64),
            value: Vec::with_capacity(256),
            found: Found::default(),
        }
    }

    /// The paths this extractor was made with.
    pub fn paths(&self) -> &JsonPaths {
        &self.paths
    }

    /// Picks the preset whose target (or request-line) path holds a value in
    /// the most of `sample_lines` (the first lines of a file); `None` when no
    /// line has one. Not a majority vote: Caddy logs mix access records with
    /// many start-up messages. A tie goes to the earlier of
    /// [`JsonPreset::ALL`].
    pub fn detect_preset<'a>(
        sample_lines: impl IntoIterator<Item = &'a [u8]>,
    ) -> Option<JsonPreset> {
        let mut extractors = JsonPreset::ALL.map(|p| JsonExtractor::new(p.paths()));
        let mut hits = [0usize; JsonPreset::ALL.len()];
        let mut out = Extracted::default();
        for line in sample_lines {
            for (extractor, hit) in extractors.iter_mut().zip(&mut hits) {
                if extractor.has_request(line, &mut out) {
                    *hit += 1;
                }
            }
        }
        let (best, &count) = hits
            .iter()
            .enumerate()
            .max_by_key(|&(index, &count)| (count, Reverse(index)))?;
        (count > 0).then_some(JsonPreset::ALL[best])
    }

    /// Reads one line (without its line end) into `out`.
    ///
    /// With `field.request()`, the target comes from the target path, or else
    /// from the request line (`METHOD SP target [SP HTTP/x.y]`); host, scheme
    /// and `connect` come with it. A valid object with neither is
    /// [`Skip::NoRequest`] (Caddy's start-up messages), unless `Field::Both`
    /// found a referer. For `Field::Referer`, a missing referer is
    /// [`Skip::EmptyField`], or `NoRequest` when the target paths are
    /// configured and missing too.
    pub fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        out.clear();
        let Some(open) = memchr(b'{', line) else {
            return match line.iter().position(|&b| !is_whitespace(b)) {
                None => Line::Skip(Skip::EmptyLine),
                Some(at) => Line::Error(LineError::Malformed, at),
            };
        };
        self.found.reset();
        if let Err((error, at)) = self.walk(line, open, field, out) {
            return Line::Error(error, at);
        }
        let found = &self.found;
        if field.request() {
            if found.has(Slot::Target) {
                out.has_target = true;
            } else if found.has(Slot::RequestLine) {
                let Some((method, target)) = split_request_line(&found.request_line) else {
                    return Line::Error(LineError::BadRequestLine, found.request_line_at);
                };
                out.target.extend_from_slice(target);
                out.has_target = true;
                out.connect = method == b"CONNECT";
            }
            out.connect |= found.method_is_connect;
            out.scheme = found.scheme;
        }
        if field.referer() {
            out.has_referer = found.has(Slot::Referer);
        }
        let has_request = found.has(Slot::Target) || found.has(Slot::RequestLine);
        match field {
            Field::Request if out.has_target => Line::Record,
            Field::Referer if out.has_referer => Line::Record,
            Field::Both if out.has_target || out.has_referer => Line::Record,
            Field::Referer if has_request || !self.has_request_paths() => {
                Line::Skip(Skip::EmptyField)
            }
            _ => Line::Skip(Skip::NoRequest),
        }
    }

    fn has_request_paths(&self) -> bool {
        self.slot_bits[Slot::Target as usize] | self.slot_bits[Slot::RequestLine as usize] != 0
    }

    /// True when the line is a valid object (up to where the walk stopped)
    /// with a value at the target or request-line path.
    fn has_request(&mut self, line: &[u8], out: &mut Extracted) -> bool {
        let Some(open) = memchr(b'{', line) else {
            return false;
        };
        out.clear();
        self.found.reset();
        self.walk(line, open, Field::Referer, out).is_ok()
            && (self.found.has(Slot::Target) || self.found.has(Slot::RequestLine))
    }

    /// The alternatives that matter for `field`: the target ones always, to
    /// tell a record without a referer from a line that is not a request.
    fn active_bits(&self, field: Field) -> u64 {
        let bits = |slot: Slot| self.slot_bits[slot as usize];
        let mut active = bits(Slot::Target) | bits(Slot::RequestLine);
        if field.request() {
            active |= bits(Slot::Host) | bits(Slot::Scheme) | bits(Slot::Method);
        }
        if field.referer() {
            active |= bits(Slot::Referer);
        }
        active
    }

    /// True when nothing more that `field` needs can be found in the line.
    fn is_finished(&self, field: Field) -> bool {
        let settled = |slot: Slot| self.found.is_settled(slot, self.slot_bits[slot as usize]);
        let request_known =
            settled(Slot::Target) && (self.found.has(Slot::Target) || settled(Slot::RequestLine));
        if field.request() {
            request_known
                && settled(Slot::Host)
                && settled(Slot::Scheme)
                && settled(Slot::Method)
                && (!field.referer() || settled(Slot::Referer))
        } else {
            settled(Slot::Referer) && (self.found.has(Slot::Referer) || request_known)
        }
    }

    /// Walks the object that opens at `open`, entering the members on the way
    /// to an active path and skipping the others, until the object closes or
    /// nothing more is needed.
    fn walk(
        &mut self,
        line: &[u8],
        open: usize,
        field: Field,
        out: &mut Extracted,
    ) -> Result<(), Fault> {
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Member {
            KeyOrClose,
            Key,
            CommaOrClose,
        }

        self.objects.clear();
        self.objects.push(self.active_bits(field));
        let mut pos = open + 1;
        let mut expect = Member::KeyOrClose;
        loop {
            pos = skip_whitespace(line, pos);
            let Some(&b) = line.get(pos) else {
                return Err((LineError::Unterminated, line.len()));
            };
            let closes = match (expect, b) {
                (Member::KeyOrClose | Member::CommaOrClose, b'}') => true,
                (Member::CommaOrClose, b',') => {
                    pos += 1;
                    expect = Member::Key;
                    continue;
                }
                (Member::KeyOrClose | Member::Key, b'"') => false,
                _ => return Err((LineError::BadJson, pos)),
            };
            if closes {
                pos += 1;
                // The object is over: what it could have held is settled.
                self.found.seen |= self.objects.pop().unwrap_or(0);
                if self.objects.is_empty() {
                    let rest = skip_whitespace(line, pos);
                    if rest < line.len() {
                        return Err((LineError::BadJson, rest));
                    }
                    return Ok(());
                }
                if self.is_finished(field) {
                    return Ok(());
                }
                expect = Member::CommaOrClose;
                continue;
            }

            // A member: its key, compared with the next key of every path
            // still open at this depth.
            let (leaf, inner);
            {
                let depth = self.objects.len() - 1;
                let live = self.objects.last().copied().unwrap_or(0) & !self.found.seen;
                let start = pos + 1;
                let key: &[u8] = match memchr2(b'"', b'\\', line.get(start..).unwrap_or(&[])) {
                    None => return Err((LineError::Unterminated, pos)),
                    Some(len) if line.get(start + len) == Some(&b'"') => {
                        let key = line.get(start..start + len).unwrap_or(&[]);
                        pos = start + len + 1;
                        key
                    }
                    Some(_) => {
                        self.key.clear();
                        pos = unescape_string(line, pos, &mut self.key)?;
                        &self.key
                    }
                };
                (leaf, inner) = match_key(&self.alternatives, live, depth, key);
            }
            pos = skip_whitespace(line, pos);
            match line.get(pos) {
                Some(b':') => pos += 1,
                Some(_) => return Err((LineError::BadJson, pos)),
                None => return Err((LineError::Unterminated, line.len())),
            }
            pos = skip_whitespace(line, pos);
            let Some(&first) = line.get(pos) else {
                return Err((LineError::Unterminated, line.len()));
            };
            expect = Member::CommaOrClose;
            if leaf | inner == 0 {
                pos = skip_value(line, pos)?;
                continue;
            }
            if first == b'{' && inner != 0 {
                if leaf != 0 {
                    self.found.take_object(leaf, &self.alternatives);
                }
                self.objects.push(inner);
                pos += 1;
                expect = Member::KeyOrClose;
                continue;
            }
            // Only an object can hold the longer paths.
            self.found.seen |= inner;
            pos = match leaf {
                0 => skip_value(line, pos)?,
                _ => self.take_value(line, pos, first, leaf, field, out)?,
            };
            if self.is_finished(field) {
                return Ok(());
            }
        }
    }

    /// Takes the value at `pos` (whose first byte is `first`) for the
    /// alternatives in `leaf`; returns the offset after it.
    fn take_value(
        &mut self,
        line: &[u8],
        pos: usize,
        first: u8,
        leaf: u64,
        field: Field,
        out: &mut Extracted,
    ) -> Result<usize, Fault> {
        match first {
            b'"' => {
                self.value.clear();
                let end = unescape_string(line, pos, &mut self.value)?;
                let (alternatives, value) = (&self.alternatives, &self.value);
                self.found
                    .take_string(leaf, alternatives, value, pos, field, out);
                Ok(end)
            }
            b'[' => {
                let element = skip_whitespace(line, pos + 1);
                if line.get(element) != Some(&b'"') {
                    self.found.seen |= leaf;
                    return skip_value(line, pos);
                }
                self.value.clear();
                let end = unescape_string(line, element, &mut self.value)?;
                let (alternatives, value) = (&self.alternatives, &self.value);
                self.found
                    .take_string(leaf, alternatives, value, element, field, out);
                // Inside the array, after its first element.
                let nesting = Nesting {
                    objects: 0,
                    depth: 1,
                };
                skip_from(line, end, nesting, Expect::CommaOrClose)
            }
            b'{' => {
                self.found.take_object(leaf, &self.alternatives);
                skip_value(line, pos)
            }
            _ => {
                self.found.seen |= leaf;
                skip_value(line, pos)
            }
        }
    }
}

/// The bit indexes set in `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let index = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(index)
    })
}

/// Splits the alternatives in `live` whose key at `depth` is `key` into those
/// that end there (`leaf`) and those that go deeper (`inner`).
fn match_key(alternatives: &[Alternative], live: u64, depth: usize, key: &[u8]) -> (u64, u64) {
    let (mut leaf, mut inner) = (0u64, 0u64);
    for index in bits(live) {
        let Some(alternative) = alternatives.get(index) else {
            continue;
        };
        if alternative.keys.get(depth).is_some_and(|k| **k == *key) {
            if alternative.keys.len() == depth + 1 {
                leaf |= 1u64 << index;
            } else {
                inner |= 1u64 << index;
            }
        }
    }
    (leaf, inner)
}

fn replace(buffer: &mut Vec<u8>, value: &[u8]) {
    buffer.clear();
    buffer.extend_from_slice(value);
}

/// Splits `METHOD SP target [SP HTTP/x.y]` into method and target. The
/// target may be empty (`GET  HTTP/1.1`) or hold spaces; a line without a
/// space or without a method is not a request line.
fn split_request_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let space = memchr(b' ', line)?;
    let (method, rest) = (line.get(..space)?, line.get(space + 1..)?);
    if method.is_empty() {
        return None;
    }
    let target = match memrchr(b' ', rest) {
        Some(last)
            if rest
                .get(last + 1..)
                .is_some_and(|v| v.starts_with(b"HTTP/")) =>
        {
            rest.get(..last)?
        }
        _ => rest,
    };
    Some((method, target))
}

/// JSON whitespace: space, tab, line feed, carriage return.
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_whitespace(line: &[u8], mut pos: usize) -> usize {
    while line.get(pos).is_some_and(|&b| is_whitespace(b)) {
        pos += 1;
    }
    pos
}

/// Copies the string whose opening quote is at `open` into `out`, escapes
/// undone; returns the offset after its closing quote.
fn unescape_string(line: &[u8], open: usize, out: &mut Vec<u8>) -> Result<usize, Fault> {
    let mut pos = open + 1;
    loop {
        let rest = line.get(pos..).unwrap_or(&[]);
        let Some(len) = memchr2(b'"', b'\\', rest) else {
            return Err((LineError::Unterminated, open));
        };
        out.extend_from_slice(rest.get(..len).unwrap_or(&[]));
        pos += len;
        if rest.get(len) == Some(&b'"') {
            return Ok(pos + 1);
        }
        pos = unescape_one(line, pos, open, out)?;
    }
}

/// Undoes the escape whose backslash is at `at`; returns the offset after it.
fn unescape_one(line: &[u8], at: usize, open: usize, out: &mut Vec<u8>) -> Result<usize, Fault> {
    let Some(&kind) = line.get(at + 1) else {
        return Err((LineError::Unterminated, open));
    };
    let byte = match kind {
        b'"' | b'\\' | b'/' => kind,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => return unescape_unicode(line, at, open, out),
        // nginx's own escape, not JSON's (see the module docs).
        b'x' => {
            let value = hex_value(line, at + 2, 2, open, at)?;
            out.push(value as u8);
            return Ok(at + 4);
        }
        _ => return Err((LineError::BadJson, at)),
    };
    out.push(byte);
    Ok(at + 2)
}

/// Undoes `\uXXXX` at `at`, with the `\uXXXX` after it when the two are a
/// surrogate pair; a lone surrogate becomes U+FFFD.
fn unescape_unicode(
    line: &[u8],
    at: usize,
    open: usize,
    out: &mut Vec<u8>,
) -> Result<usize, Fault> {
    let unit = hex_value(line, at + 2, 4, open, at)?;
    let mut end = at + 6;
    let code = match unit {
        0xD800..=0xDBFF if line.get(end..end + 2) == Some(b"\\u") => {
            match hex_value(line, end + 2, 4, open, end)? {
                low @ 0xDC00..=0xDFFF => {
                    end += 6;
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
                // Not a low half: this one is lone, the next is read on its own.
                _ => 0xFFFD,
            }
        }
        0xD800..=0xDFFF => 0xFFFD,
        _ => unit,
    };
    let code = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    out.extend_from_slice(code.encode_utf8(&mut [0; 4]).as_bytes());
    Ok(end)
}

/// The value of the `count` hex digits at `from`, for the escape at `at` in
/// the string opened at `open`.
fn hex_value(line: &[u8], from: usize, count: usize, open: usize, at: usize) -> Result<u32, Fault> {
    let Some(digits) = line.get(from..from + count) else {
        // Only a line that ends mid-escape lacks the bytes.
        return Err((LineError::Unterminated, open));
    };
    let mut value = 0u32;
    for &digit in digits {
        let Some(nibble) = crate::ascii::hex_value(digit) else {
            return Err((LineError::BadJson, at));
        };
        value = value << 4 | u32::from(nibble);
    }
    Ok(value)
}

/// Returns the offset after the string whose opening quote is at `open`,
/// without undoing its escapes (a backslash only hides the byte after it).
fn skip_string(line: &[u8], open: usize) -> Result<usize, Fault> {
    let mut pos = open + 1;
    loop {
        let Some(rest) = line.get(pos..) else {
            return Err((LineError::Unterminated, open));
        };
        let Some(len) = memchr2(b'"', b'\\', rest) else {
            return Err((LineError::Unterminated, open));
        };
        if rest.get(len) == Some(&b'"') {
            return Ok(pos + len + 1);
        }
        pos += len + 2;
    }
}

/// Bytes that can be part of a number or of `true`, `false`, `null`: the
/// scanner takes their whole run, then checks it.
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// Returns the offset after the number or literal at `pos`.
fn skip_scalar(line: &[u8], pos: usize) -> Result<usize, Fault> {
    let rest = line.get(pos..).unwrap_or(&[]);
    let len = rest
        .iter()
        .position(|&b| !is_scalar_byte(b))
        .unwrap_or(rest.len());
    let token = rest.get(..len).unwrap_or(&[]);
    let is_number_byte = |b: &u8| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
    let valid = match token.first() {
        Some(b'-' | b'0'..=b'9') => token.iter().all(is_number_byte),
        _ => matches!(token, b"true" | b"false" | b"null"),
    };
    if valid {
        Ok(pos + len)
    } else {
        Err((LineError::BadJson, pos))
    }
}

/// How deep a skipped value may nest.
const MAX_NESTING: u32 = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// The containers open in a skipped value, one bit each (1 = object),
/// innermost highest. A fixed `u128` so that no input can make it grow.
#[derive(Clone, Copy, Default)]
struct Nesting {
    objects: u128,
    depth: u32,
}

impl Nesting {
    /// Opens a container; `None` when that would nest too deep.
    fn push(&mut self, container: Container) -> Option<()> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        let bit = 1u128 << self.depth;
        match container {
            Container::Object => self.objects |= bit,
            Container::Array => self.objects &= !bit,
        }
        self.depth += 1;
        Some(())
    }

    fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn innermost(&self) -> Option<Container> {
        let depth = self.depth.checked_sub(1)?;
        Some(match self.objects >> depth & 1 {
            1 => Container::Object,
            _ => Container::Array,
        })
    }
}

/// What the skipper expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    ValueOrClose,
    KeyOrClose,
    Key,
    CommaOrClose,
}

/// Returns the offset after the value that starts at `pos`.
fn skip_value(line: &[u8], pos: usize) -> Result<usize, Fault> {
    skip_from(line, pos, Nesting::default(), Expect::Value)
}

/// Skips from `pos`, inside the containers of `nesting`, expecting `expect`,
/// until every container is closed; returns the offset after that.
fn skip_from(
    line: &[u8],
    mut pos: usize,
    mut nesting: Nesting,
    mut expect: Expect,
) -> Result<usize, Fault> {
    loop {
        pos = skip_whitespace(line, pos);
        let Some(&b) = line.get(pos) else {
            return Err((LineError::Unterminated, line.len()));
        };
        let bad = (LineError::BadJson, pos);
        match (expect, b) {
            (Expect::ValueOrClose, b']') | (Expect::KeyOrClose, b'}') => {
                pos += 1;
                nesting.pop();
                expect = Expect::CommaOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'"') => {
                pos = skip_string(line, pos)?;
                expect = Expect::CommaOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'{') => {
                nesting.push(Container::Object).ok_or(bad)?;
                pos += 1;
                expect = Expect::KeyOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'[') => {
                nesting.push(Container::Array).ok_or(bad)?;
                pos += 1;
                expect = Expect::ValueOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, _) => {
                pos = skip_scalar(line, pos)?;
                expect = Expect::CommaOrClose;
            }
            (Expect::Key | Expect::KeyOrClose, b'"') => {
                pos = skip_whitespace(line, skip_string(line, pos)?);
                match line.get(pos) {
                    Some(b':') => pos += 1,
                    Some(_) => return Err((LineError::BadJson, pos)),
                    None => return Err((LineError::Unterminated, line.len())),
                }
                expect = Expect::Value;
            }
            (Expect::CommaOrClose, _) => {
                match (b, nesting.innermost()) {
                    (b',', Some(Container::Object)) => expect = Expect::Key,
                    (b',', Some(Container::Array)) => expect = Expect::Value,
                    (b'}', Some(Container::Object)) | (b']', Some(Container::Array)) => {
                        nesting.pop()
                    }
                    _ => return Err(bad),
                }
                pos += 1;
            }
            (Expect::Key | Expect::KeyOrClose, _) => return Err(bad),
        }
        if nesting.depth == 0 && expect == Expect::CommaOrClose {
            return Ok(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(target: &str) -> JsonPaths {
        JsonPaths {
            target: Some(target.to_owned()),
            ..JsonPaths::default()
        }
    }

    fn run(paths: JsonPaths, line: &[u8], field: Field) -> (Line, Extracted) {
        let mut extractor = JsonExtractor::new(paths);
        let mut out = Extracted::default();
        let result = extractor.extract(line, field, &mut out);
        (result, out)
    }

    fn target_of(line: &[u8]) -> Result<Vec<u8>, Line> {
        match run(paths("t"), line, Field::Request) {
            (Line::Record, out) => Ok(out.target),
            (other, _) => Err(other),
        }
    }

    #[test]
    fn json_escapes_are_undone() {
        let line = br#"{"t":"/a\"b\\c\/d\b\f\n\r\te"}"#;
        assert_eq!(target_of(line).unwrap(), b"/a\"b\\c/d\x08\x0c\n\r\te");
        assert_eq!(
            target_of(br#"{"t":"\u0041\u00e9\u20AC"}"#).unwrap(),
            "Aé€".as_bytes()
        );
        assert_eq!(target_of(br#"{"t":"\u0000"}"#).unwrap(), b"\0");
    }

    #[test]
    fn surrogate_pairs_join_and_lone_halves_become_replacement() {
        assert_eq!(
            target_of(br#"{"t":"\ud83d\ude00"}"#).unwrap(),
            "😀".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\uD83D\uDE00x"}"#).unwrap(),
            "😀x".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"a\ud83db"}"#).unwrap(),
            "a\u{FFFD}b".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\u0041"}"#).unwrap(),
            "\u{FFFD}A".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ude00"}"#).unwrap(),
            "\u{FFFD}".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\ud83d\ude00"}"#).unwrap(),
            "\u{FFFD}😀".as_bytes()
        );
    }

    #[test]
    fn bad_escapes_are_errors() {
        assert_eq!(
            target_of(br#"{"t":"\q"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\u12G4"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\xZZ"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\uZZZZ"}"#),
            Err(Line::Error(LineError::BadJson, 12))
        );
        assert_eq!(
            target_of(br#"{"t":"\u12"#),
            Err(Line::Error(LineError::Unterminated, 5))
        );
        assert_eq!(
            target_of(br#"{"t":"\"#),
            Err(Line::Error(LineError::Unterminated, 5))
        );
    }

    #[test]
    fn nginx_hex_escapes_and_raw_bytes() {
        let line = b"{\"request\":\"GET /a\\x22b\\x5Cc\\xFF HTTP/1.1\"}";
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target, b"/a\"b\\c\xFF");
        // Raw bytes that are not UTF-8, in the wanted value and in skipped ones.
        let line = b"{\"ua\":\"\xFF\xFE\x80\",\"request_uri\":\"/\xC3\xA9\xFF?\xFE\"}";
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target, b"/\xC3\xA9\xFF?\xFE");
    }

    #[test]
    fn prefix_before_the_object_is_ignored() {
        let line = br#"web_1  | {"request_uri":"/x","http_host":"a.example:8080"}"#;
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target, b"/x");
        assert_eq!(out.host, b"a.example:8080");
    }

    #[test]
    fn empty_lines_and_lines_without_an_object() {
        let nginx = || JsonPreset::Nginx.paths();
        assert_eq!(
            run(nginx(), b"", Field::Request).0,
            Line::Skip(Skip::EmptyLine)
        );
        assert_eq!(
            run(nginx(), b" \t\r", Field::Request).0,
            Line::Skip(Skip::EmptyLine)
        );
        assert_eq!(
            run(nginx(), b"  GET / HTTP/1.1", Field::Request).0,
            Line::Error(LineError::Malformed, 2)
        );
        assert_eq!(
            run(nginx(), b"{}", Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            run(nginx(), b" { } \r", Field::Both).0,
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn invalid_json_is_an_error_at_its_offset() {
        use LineError::{BadJson, Unterminated};
        let cases: &[(&[u8], LineError, usize)] = &[
            (b"{", Unterminated, 1),
            (b"{ ", Unterminated, 2),
            (b"{,}", BadJson, 1),
            (b"{\"a\"}", BadJson, 4),
            (b"{\"a\":}", BadJson, 5),
            (b"{\"a\":1,}", BadJson, 7),
            (b"{\"a\" 1}", BadJson, 5),
            (b"{\"a\":1 \"b\":2}", BadJson, 7),
            (b"{\"a\":[1,]}", BadJson, 8),
            (b"{\"a\":[1}", BadJson, 7),
            (b"{\"a\":{\"b\":1]}", BadJson, 11),
            (b"{\"a\":tru}", BadJson, 5),
            (b"{\"a\":nulll}", BadJson, 5),
            (b"{\"a\":x}", BadJson, 5),
            (b"{\"a\":\"x}", Unterminated, 5),
            (b"{\"a", Unterminated, 1),
            (b"{\"a\":", Unterminated, 5),
            (b"{\"a\":[", Unterminated, 6),
            (b"{\"a\":12", Unterminated, 7),
            (b"{\"a\":1}x", BadJson, 7),
            (b"{\"a\":1}}", BadJson, 7),
            (b"{]", BadJson, 1),
        ];
        for &(line, error, at) in cases {
            let (result, _) = run(JsonPreset::Nginx.paths(), line, Field::Both);
            assert_eq!(
                result,
                Line::Error(error, at),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Trailing whitespace is fine; so are all kinds of skipped values.
        let line = br#"{"a":[1,-2.5e+3,true,false,null,{"b":[]},[],{}],"request_uri":"/"}  "#;
        assert_eq!(
            run(JsonPreset::Nginx.paths(), line, Field::Request).0,
            Line::Record
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut line = b"{\"a\":".to_vec();
        line.extend(std::iter::repeat_n(b'[', 100_000));
        let (result, _) = run(paths("t"), &line, Field::Request);
        assert_eq!(result, Line::Error(LineError::BadJson, 5 + 128));
        let mut line = b"{\"a\":".to_vec();
        line.extend(std::iter::repeat_n(b"{\"b\":[".as_slice(), 60).flatten());
        line.extend(std::iter::repeat_n(b"]}".as_slice(), 60).flatten());
        line.extend_from_slice(b",\"t\":\"/deep\"}");
        assert_eq!(target_of(&line).unwrap(), b"/deep");
    }

    #[test]
    fn nested_paths_are_entered_only_on_the_way() {
        let p = paths("x.y.z");
        let line = br#"{"x":{"q":{"y":{"z":"no"}},"y":{"a":[{"z":"no"}],"z":"/yes"}}}"#;
        let (result, out) = run(p.clone(), line, Field::Request);
        assert_eq!((result, out.target), (Line::Record, b"/yes".to_vec()));
        // A path that meets a string where it needs an object is absent.
        let (result, _) = run(p, br#"{"x":{"y":"/no"}}"#, Field::Request);
        assert_eq!(result, Line::Skip(Skip::NoRequest));
    }

    #[test]
    fn escaped_keys_are_compared_unescaped() {
        assert_eq!(target_of(br#"{"\u0074":"/x"}"#).unwrap(), b"/x");
        assert_eq!(target_of(br#"{"a\"b":"/no","t":"/x"}"#).unwrap(), b"/x");
    }

    #[test]
    fn first_of_duplicate_keys_counts() {
        assert_eq!(target_of(br#"{"t":"/1","t":"/2"}"#).unwrap(), b"/1");
        let line = br#"{"request":{"uri":"/1"},"request":{"uri":"/2"}}"#;
        let (_, out) = run(JsonPreset::Caddy.paths(), line, Field::Request);
        assert_eq!(out.target, b"/1");
    }

    #[test]
    fn placeholders_and_non_strings_are_absent() {
        let nginx = || JsonPreset::Nginx.paths();
        let line =
            br#"{"request_uri":"/","http_host":null,"host":"-","scheme":"","http_referer":"-"}"#;
        let (result, out) = run(nginx(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert!(out.has_target && !out.has_referer);
        assert_eq!((out.host.as_slice(), out.scheme), (&b""[..], None));
        assert_eq!(
            run(nginx(), line, Field::Referer).0,
            Line::Skip(Skip::EmptyField)
        );
        // A placeholder target falls back to the request line.
        let line = br#"{"request_uri":"-","request":"GET /r HTTP/1.1","http_host":80}"#;
        let (result, out) = run(nginx(), line, Field::Request);
        assert_eq!((result, out.target), (Line::Record, b"/r".to_vec()));
        assert!(out.host.is_empty());
        let line = br#"{"request_uri":null,"request":"-","status":400}"#;
        assert_eq!(
            run(nginx(), line, Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            run(nginx(), line, Field::Referer).0,
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn alternatives_prefer_the_first_listed() {
        let nginx = || JsonPreset::Nginx.paths();
        let line = br#"{"host":"b.example","request_uri":"/","http_host":"A.example:81"}"#;
        let (_, out) = run(nginx(), line, Field::Request);
        assert_eq!(out.host, b"A.example:81");
        let line = br#"{"host":"b.example","request_uri":"/","http_host":"-"}"#;
        let (_, out) = run(nginx(), line, Field::Request);
        assert_eq!(out.host, b"b.example");
        let line = br#"{"http_referrer":"https://r/","request":"GET / HTTP/1.1"}"#;
        let (result, out) = run(nginx(), line, Field::Referer);
        assert_eq!(
            (result, out.referer),
            (Line::Record, b"https://r/".to_vec())
        );
    }

    #[test]
    fn request_lines_are_split() {
        let nginx = || JsonPreset::Nginx.paths();
        let request = |r: &str| {
            let line = format!(r#"{{"request":"{r}"}}"#);
            run(nginx(), line.as_bytes(), Field::Request)
        };
        let (result, out) = request("CONNECT a.example:443 HTTP/1.1");
        assert_eq!(
            (result, out.target.as_slice(), out.connect),
            (Line::Record, &b"a.example:443"[..], true)
        );
        let (_, out) = request("GET /x");
        assert_eq!((out.target.as_slice(), out.connect), (&b"/x"[..], false));
        let (result, out) = request("GET  HTTP/1.1");
        assert_eq!(
            (result, out.target.as_slice(), out.has_target),
            (Line::Record, &b""[..], true)
        );
        let (_, out) = request("GET /a b HTTP/2.0");
        assert_eq!(out.target, b"/a b");
        assert_eq!(
            request("\\x16\\x03\\x01").0,
            Line::Error(LineError::BadRequestLine, 11)
        );
        assert_eq!(
            request(" /x HTTP/1.1").0,
            Line::Error(LineError::BadRequestLine, 11)
        );
    }

    #[test]
    fn method_path_marks_connect() {
        let line = br#"{"request_method":"CONNECT","request_uri":"a.example:443"}"#;
        let (_, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert!(out.connect);
        let line = br#"{"request_method":"connect","request_uri":"/"}"#;
        let (_, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert!(!out.connect);
    }

    #[test]
    fn caddy_referer_array_and_tls_scheme() {
        let caddy = || JsonPreset::Caddy.paths();
        let line = br#"{"request":{"method":"GET","host":"h","uri":"/u","headers":{"Referer":[ "https://r/1","https://r/2"],"X":["y"]},"tls":{"resumed":false}},"status":200}"#;
        let (result, out) = run(caddy(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert_eq!(
            (out.target.as_slice(), out.host.as_slice()),
            (&b"/u"[..], &b"h"[..])
        );
        assert_eq!(
            (out.referer.as_slice(), out.has_referer),
            (&b"https://r/1"[..], true)
        );
        assert_eq!(out.scheme, Some(Scheme::Https));
        // Empty arrays and arrays of non-strings are absent.
        for referer in [&b"[]"[..], b"[1]", b"[null,\"x\"]", b"[\"-\"]"] {
            let mut line = br#"{"request":{"uri":"/","headers":{"Referer":"#.to_vec();
            line.extend_from_slice(referer);
            line.extend_from_slice(b"}}}");
            let (result, out) = run(caddy(), &line, Field::Referer);
            assert_eq!(
                (result, out.has_referer),
                (Line::Skip(Skip::EmptyField), false)
            );
        }
        // A referer array cut short is still an error.
        let line = br#"{"request":{"headers":{"Referer":["https://r/1","#;
        assert_eq!(
            run(caddy(), line, Field::Referer).0,
            Line::Error(LineError::Unterminated, line.len())
        );
    }

    #[test]
    fn both_fields_give_a_record_when_either_is_there() {
        let nginx = || JsonPreset::Nginx.paths();
        let line = br#"{"http_referer":"https://r/"}"#;
        let (result, out) = run(nginx(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert!(!out.has_target && out.has_referer);
        assert_eq!(
            run(nginx(), line, Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        // A referer alone, with no target path configured: nothing to tell it apart.
        let p = JsonPaths {
            referer: Some("r".into()),
            ..JsonPaths::default()
        };
        assert_eq!(
            run(p, b"{\"x\":1}", Field::Referer).0,
            Line::Skip(Skip::EmptyField)
        );
    }

    #[test]
    fn walk_stops_once_everything_is_found() {
        // The garbage after the wanted fields is never read.
        let line = br#"{"t":"/x", this is not JSON"#;
        assert_eq!(target_of(line).unwrap(), b"/x");
        // Caddy's request is settled when its object closes.
        let line = br#"{"request":{"host":"h","method":"GET","uri":"/"},"resp_headers": garbage"#;
        let (result, out) = run(JsonPreset::Caddy.paths(), line, Field::Request);
        assert_eq!((result, out.scheme), (Line::Record, None));
    }

    #[test]
    fn buffers_are_reused_between_lines() {
        let mut extractor = JsonExtractor::new(JsonPreset::Caddy.paths());
        let mut out = Extracted::default();
        let line = br#"{"request":{"host":"h","uri":"/a","headers":{"Referer":["r"]},"tls":{}}}"#;
        assert_eq!(extractor.extract(line, Field::Both, &mut out), Line::Record);
        assert!(out.has_referer && out.scheme.is_some());
        let line = br#"{"request":{"uri":"/b","headers":{}}}"#;
        assert_eq!(extractor.extract(line, Field::Both, &mut out), Line::Record);
        assert_eq!(out.target, b"/b");
        assert!(!out.has_referer && out.referer.is_empty() && out.host.is_empty());
        assert_eq!(out.scheme, None);
    }

    #[test]
    fn preset_names_round_trip() {
        for preset in JsonPreset::ALL {
            assert_eq!(preset.name().parse::<JsonPreset>(), Ok(preset));
            assert_eq!(preset.to_string(), preset.name());
        }
        assert_eq!("Caddy".parse::<JsonPreset>(), Ok(JsonPreset::Caddy));
        assert!("apache".parse::<JsonPreset>().is_err());
    }

    #[test]
    fn paths_list_alternatives_with_bars() {
        let p = JsonPaths {
            target: Some(" a.b | c ||".into()),
            ..JsonPaths::default()
        };
        let extractor = JsonExtractor::new(p);
        assert_eq!(extractor.alternatives.len(), 2);
        assert_eq!(
            &*extractor.alternatives[0].keys,
            [Box::from(&b"a"[..]), Box::from(&b"b"[..])]
        );
        // More than 64 alternatives: the extra ones are dropped, nothing breaks.
        let many = (0..100)
            .map(|i| format!("k{i}"))
            .collect::<Vec<_>>()
            .join("|");
        let mut extractor = JsonExtractor::new(paths(&many));
        let mut out = Extracted::default();
        assert_eq!(
            extractor.extract(br#"{"k63":"/a"}"#, Field::Request, &mut out),
            Line::Record
        );
        assert_eq!(
            extractor.extract(br#"{"k64":"/a"}"#, Field::Request, &mut out),
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn detect_preset_by_target_paths() {
        let nginx: &[&[u8]] = &[
            br#"{"remote_addr":"1.2.3.4","request":"GET / HTTP/1.1","status":"200"}"#,
            b"not json",
        ];
        assert_eq!(
            JsonExtractor::detect_preset(nginx.iter().copied()),
            Some(JsonPreset::Nginx)
        );
        let nothing: &[&[u8]] = &[
            b"1.2.3.4 - - [x] \"GET / HTTP/1.1\" 200 1",
            b"{\"msg\":\"hi\"}",
        ];
        assert_eq!(JsonExtractor::detect_preset(nothing.iter().copied()), None);
        assert_eq!(JsonExtractor::detect_preset(std::iter::empty()), None);
    }

    /// The shared data directory, or `None` (with a notice) when it is absent.
    fn shared_data() -> Option<std::path::PathBuf> {
        let dir = match std::env::var_os("CANONURL_SHARED_DATA") {
            Some(dir) => std::path::PathBuf::from(dir),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
        };
        if dir.is_dir() {
            Some(dir)
        } else {
            eprintln!(
                "skipping: no shared data at {} (set CANONURL_SHARED_DATA)",
                dir.display()
            );
            None
        }
    }

    fn read_lines(dir: &std::path::Path, file: &str) -> Vec<Vec<u8>> {
        let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    struct Summary {
        records: Vec<(usize, Extracted)>,
        skips: usize,
        errors: usize,
    }

    fn extract_all(preset: JsonPreset, lines: &[Vec<u8>], field: Field) -> Summary {
        let mut extractor = JsonExtractor::new(preset.paths());
        let mut summary = Summary {
            records: Vec::new(),
            skips: 0,
            errors: 0,
        };
        for (index, line) in lines.iter().enumerate() {
            let mut out = Extracted::default();
            match extractor.extract(line, field, &mut out) {
                Line::Record => summary.records.push((index + 1, out)),
                Line::Skip(_) => summary.skips += 1,
                Line::Error(..) => summary.errors += 1,
            }
        }
        summary
    }

    #[test]
    fn real_caddy_logs() {
        let Some(dir) = shared_data() else { return };
        let lines = read_lines(&dir, "logs-lnav/logfile_caddy_log.0");
        assert_eq!(lines.len(), 39);
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(JsonExtractor::detect_preset(refs), Some(JsonPreset::Caddy));
        // Docker compose prefix; 4 access records among start-up messages.
        let summary = extract_all(JsonPreset::Caddy, &lines, Field::Both);
        assert_eq!((summary.skips, summary.errors), (35, 0));
        let found: Vec<_> = summary
            .records
            .iter()
            .map(|(n, o)| (*n, o.target.as_slice()))
            .collect();
        assert_eq!(
            found,
            [
                (16, &b"/"[..]),
                (37, b"/"),
                (38, b"/"),
                (39, b"/index.html")
            ]
        );
        for (_, out) in &summary.records {
            assert_eq!(out.host, b"localhost");
            assert_eq!(
                (out.scheme, out.connect, out.has_referer),
                (None, false, false)
            );
        }
        let mut extractor = JsonExtractor::new(JsonPreset::Caddy.paths());
        let mut out = Extracted::default();
        assert_eq!(
            extractor.extract(&lines[0], Field::Request, &mut out),
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            extractor.extract(&lines[15], Field::Referer, &mut out),
            Line::Skip(Skip::EmptyField)
        );
        assert_eq!(
            extractor.extract(&lines[0], Field::Referer, &mut out),
            Line::Skip(Skip::NoRequest)
        );

        let lines = read_lines(&dir, "logs-lnav/logfile_caddy_log.1");
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(JsonExtractor::detect_preset(refs), Some(JsonPreset::Caddy));
        let summary = extract_all(JsonPreset::Caddy, &lines, Field::Both);
        assert_eq!(
            (summary.records.len(), summary.skips, summary.errors),
            (4, 0, 0)
        );
        let (_, first) = &summary.records[0];
        assert_eq!(
            first.target,
            b"/gentoo/gentoo-distfiles/distfiles/9b/tl-hrlatex.source-2021.tar.xz"
        );
        assert_eq!(
            (first.host.as_slice(), first.scheme),
            (&b"mirrors.tnonline.net:400"[..], None)
        );
        assert!(!first.has_referer);
        // The one HTTP/3 request has `tls` and a Referer header.
        let (_, last) = &summary.records[3];
        assert_eq!(last.target, b"/res/browse.css");
        assert_eq!(
            (last.host.as_slice(), last.scheme),
            (&b"mirrors.tnonline.net"[..], Some(Scheme::Https))
        );
        assert_eq!(
            last.referer,
            b"https://mirrors.tnonline.net/gentoo/gentoo-portage/app-dicts/aspell-lt/"
        );
        let referers = extract_all(JsonPreset::Caddy, &lines, Field::Referer);
        assert_eq!((referers.records.len(), referers.skips), (1, 3));
    }

    #[test]
    fn real_traefik_log() {
        let Some(dir) = shared_data() else { return };
        let lines = read_lines(
            &dir,
            "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
        );
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(
            JsonExtractor::detect_preset(refs),
            Some(JsonPreset::Traefik)
        );
        let summary = extract_all(JsonPreset::Traefik, &lines, Field::Request);
        assert_eq!((summary.skips, summary.errors), (0, 0));
        let got: Vec<_> = summary
            .records
            .iter()
            .map(|(_, o)| (o.target.as_slice(), o.host.as_slice(), o.scheme))
            .collect();
        let http = Some(Scheme::Http);
        let expected: [(&[u8], &[u8], _); 7] = [
            (
                b"/",
                b"backend.elastic-package-service.docker.localhost",
                None,
            ),
            (b"/", b"backend.docker.docker.localhost", None),
            (b"/ping", b"10.10.10.11:4567", http),
            (b"/foo/bar/baz.php", b"10.10.10.11:12345", None),
            (b"/1.0.0/acme/current/foo.png", b"foo.acme.com", None),
            (
                b"/api/v1/study/140410210038/card/comment",
                b"api-students.unpad.ac.id",
                http,
            ),
            (
                b"/",
                b"backend.elastic-package-service.docker.localhost",
                http,
            ),
        ];
        assert_eq!(got, expected);
        // No request_Referer in these lines.
        let referers = extract_all(JsonPreset::Traefik, &lines, Field::Referer);
        assert_eq!((referers.records.len(), referers.skips), (0, 7));
    }

    /// Every line of the real files, as (preset, bytes).
    fn real_lines() -> Vec<(JsonPreset, Vec<u8>)> {
        let Some(dir) = shared_data() else {
            return Vec::new();
        };
        let files = [
            (JsonPreset::Caddy, "logs-lnav/logfile_caddy_log.0"),
            (JsonPreset::Caddy, "logs-lnav/logfile_caddy_log.1"),
            (
                JsonPreset::Traefik,
                "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
            ),
        ];
        let mut all = Vec::new();
        for (preset, file) in files {
            all.extend(read_lines(&dir, file).into_iter().map(|l| (preset, l)));
        }
        all
    }

    /// A line of each kind when the shared data is absent.
    fn fallback_lines() -> Vec<(JsonPreset, Vec<u8>)> {
        let caddy = br#"web | {"level":"info","request":{"method":"GET","host":"h:1","uri":"/a?b=\u00e9","headers":{"Referer":["https://r/"],"A":["\"x\""]},"tls":{"proto":"h2"}},"size":12.5e3,"ok":true,"n":null,"v":[[],{}]}"#;
        let nginx = b"{\"request\":\"GET /\\x22\xff HTTP/1.1\",\"http_referer\":\"-\",\"http_host\":\"h\",\"status\":200}";
        vec![
            (JsonPreset::Caddy, caddy.to_vec()),
            (JsonPreset::Nginx, nginx.to_vec()),
        ]
    }

    #[test]
    fn every_prefix_is_an_error_or_the_whole_lines_answer() {
        let mut lines = real_lines();
        lines.extend(fallback_lines());
        let mut out = Extracted::default();
        for (preset, line) in &lines {
            let mut extractor = JsonExtractor::new(preset.paths());
            for field in [Field::Request, Field::Referer, Field::Both] {
                let whole = extractor.extract(line, field, &mut out);
                let whole_target = out.target.clone();
                for len in 1..line.len() {
                    let prefix = &line[..len];
                    let result = extractor.extract(prefix, field, &mut out);
                    // A walk that stops early gives the whole line's answer.
                    let fine = match result {
                        Line::Error(_, at) => at <= len,
                        _ => result == whole && out.target == whole_target,
                    };
                    assert!(fine, "{field:?} prefix {len}: {result:?} ({whole:?} whole)");
                }
            }
        }
    }

    /// xorshift64: a fixed sequence, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[test]
    fn mutated_lines_never_panic() {
        let mut lines = real_lines();
        lines.extend(fallback_lines());
        let mut extractors = JsonPreset::ALL.map(|p| JsonExtractor::new(p.paths()));
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut out = Extracted::default();
        let mut line = Vec::new();
        let mut outcomes = [0usize; 3];
        for _ in 0..100_000 {
            let (_, base) = &lines[rng.below(lines.len())];
            line.clear();
            line.extend_from_slice(base);
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(line.len() + 1);
                match rng.below(6) {
                    0 if at < line.len() => line[at] ^= 1 << rng.below(8),
                    1 => line.truncate(at),
                    2 => line.insert(at, b'"'),
                    3 => line.insert(at, b'\\'),
                    4 => line.insert(at, b"{}[]:,u\xff"[rng.below(8)]),
                    _ if at < line.len() => {
                        line.remove(at);
                    }
                    _ => {}
                }
            }
            let field = [Field::Request, Field::Referer, Field::Both][rng.below(3)];
            let extractor = &mut extractors[rng.below(3)];
            let result = extractor.extract(&line, field, &mut out);
            match result {
                Line::Record => outcomes[0] += 1,
                Line::Skip(_) => outcomes[1] += 1,
                Line::Error(_, at) => {
                    assert!(at <= line.len());
                    outcomes[2] += 1
                }
            }
        }
        // The mutations must exercise both outcomes, or the test proves little.
        assert!(outcomes.iter().all(|&n| n > 1000), "{outcomes:?}");
    }
}
