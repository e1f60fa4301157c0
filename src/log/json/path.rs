//! The path language of a JSON layout: [`JsonPaths`] as a user or a preset
//! writes it, and each of its paths parsed into an [`Alternative`] (its keys
//! and at most one `key[field=value]` step) that the walk matches key by key.
//! Alternatives are the bits of a `u64`, so what a line has given so far on
//! every path is a few masks.

use memchr::memchr;

use crate::log::Scheme;

/// Where the fields of a record are in a JSON access log (one object per
/// line), as dotted paths into the object (`"request.uri"`). Each path may
/// list alternatives, best first, joined by `|` (`"http_host|host"`).
/// [`JsonPreset::paths`] gives the layouts of well-known servers.
///
/// # Paths
///
/// A path is a list of keys joined by `.`: `request.uri` is the member `uri`
/// of the object that is the member `request` of the line's object. A key
/// that holds a `.` writes it `\.`: Zeek's `id\.resp_p` is the one member
/// `"id.resp_p"`. A path may list alternatives joined by `|`, best
/// first: `http_host|host` takes `http_host`, and `host` only when
/// `http_host` is missing or a placeholder. Keys are compared byte for byte
/// after their JSON escapes are undone. When a key occurs twice in one
/// object, the first occurrence counts.
///
/// A step `key[field=value]` selects an element of the array at `key`: the
/// first object in it whose member `field` is the string `value`, compared
/// ASCII case-insensitively (header names are). One more key must follow,
/// read from that object: `httpRequest.headers[name=host].value` is the Host
/// header of an AWS WAF record, whose headers are a list of
/// `{"name":...,"value":...}`. The selecting member must come before the
/// member read (AWS WAF writes `name` first); the array is read once, for
/// every path that selects in it.
///
/// # Values
///
/// - A string is taken with its escapes undone. `null`, `""` and `"-"` count
///   as absent, and so do numbers, `true` and `false`.
/// - An array stands for its first element, when that is a string: Caddy logs
///   every header as the array of its values (`"Referer":["https://a/"]`).
/// - An object found at the scheme path means `https`: Caddy writes
///   `request.tls` only for requests that came over TLS. Its absence does not
///   mean `http` (the scheme stays unknown), since other layouts put nothing
///   there. A string there is a scheme (`http`, `https`, any case), `on` or
///   `off` (Application Gateway's `sslEnabled`), or a port in digits; a
///   number is a port (Zeek's `id.resp_p`). A port gives the scheme (443:
///   `https`, else `http`) and is kept in the URL when it is not the
///   scheme's default and the host has none. Any other value at the scheme
///   path counts as absent, so the next alternative is read (Akamai's
///   `proto`, then `reqPort`).
/// - A value at the query path is appended to the target after a `?`. A
///   layout that logs the query apart logs the path apart too: a target
///   without its leading `/` (Akamai's `reqPath`) gets one.
///
/// # Strings
///
/// JSON escapes `\" \\ \/ \b \f \n \r \t \uXXXX` are undone, `\uXXXX` written
/// as UTF-8, a surrogate pair as one code point. A surrogate without its
/// other half becomes U+FFFD (`EF BF BD`) rather than an error: one odd
/// character in a User-Agent-like field should not cost the whole record.
/// nginx writes `\xHH` for the bytes it escapes when a layout lacks
/// `escape=json` (`\x22` for `"`, `\x5C` for `\`); that escape is not JSON
/// but is undone to the byte `0xHH`. Any other escape is [`LineError::BadJson`].
/// Raw bytes of `0x80` and above are copied as they are, valid UTF-8 or not
/// (nginx `escape=json` writes them raw); raw control bytes are tolerated too.
///
/// # Errors
///
/// A line without `{` is [`LineError::Malformed`]; text before the first `{`
/// is ignored (docker compose writes `web_1  | {...}`). A line that ends inside
/// a string is [`LineError::Unterminated`] at the string's opening quote;
/// one that ends inside an object or array is `Unterminated` at the line's
/// end. Anything else that is not JSON is [`LineError::BadJson`] at the byte
/// where it was seen, and so is nesting deeper than 128 levels inside a
/// skipped value (the skipper keeps its stack in one `u128`, so no input can
/// exhaust memory or the call stack). Numbers are checked loosely: a run of
/// digits, signs, `.`, `e` and `E` that starts with `-` or a digit.
///
/// [`JsonPreset::paths`]: super::JsonPreset::paths
/// [`LineError::BadJson`]: crate::log::LineError::BadJson
/// [`LineError::Malformed`]: crate::log::LineError::Malformed
/// [`LineError::Unterminated`]: crate::log::LineError::Unterminated
///
/// # Example
///
/// A hand-written layout, read by a [`RecordReader`](crate::RecordReader):
///
/// ```
/// use canonurl::log::{Extracted, Field, JsonPaths, Line, LogFormat, Scheme};
/// use canonurl::RecordReader;
///
/// let paths = JsonPaths {
///     target: Some("req.path".into()),
///     host: Some("req.headers.host|server".into()),
///     scheme: Some("req.tls".into()),
///     ..JsonPaths::default()
/// };
/// let mut reader = RecordReader::new(LogFormat::Json, Some(paths));
/// let mut record = Extracted::default();
/// let line = br#"{"req":{"path":"/a\/b?q=1","headers":{"host":null},"tls":{}},"server":"shop.example"}"#;
/// assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
/// assert_eq!(record.target(line), b"/a/b?q=1");
/// assert_eq!(record.host, b"shop.example");
/// assert_eq!(record.scheme, Some(Scheme::Https));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPaths {
    /// The request target: path and query, or an absolute URL.
    pub target: Option<String>,
    /// A whole request line, `GET /x HTTP/1.1` (nginx `$request`), read when
    /// the target path is missing.
    pub request_line: Option<String>,
    /// The Host the request was for, possibly with `:port`.
    pub host: Option<String>,
    /// The scheme: a string `Scheme::parse` understands, `on`/`off`, a port,
    /// or an object whose presence means `https` (Caddy's `request.tls`);
    /// see "Values" above.
    pub scheme: Option<String>,
    /// The `Referer` header (a string, or an array whose first element is one).
    pub referer: Option<String>,
    /// The request method: recognises `CONNECT`, and is the record's
    /// method (`--with method`, `--method`).
    pub method: Option<String>,
    /// The query, without its `?`, for layouts that log it apart from the
    /// target's path (AWS WAF `args`, Akamai `queryStr`).
    pub query: Option<String>,
    /// The scheme of records whose scheme path gives none (AWS WAF logs no
    /// scheme: `https`).
    pub default_scheme: Option<Scheme>,
    /// The response status: a number or a string of three digits. Read only
    /// when the record's other fields are wanted (`--with`, `--status`), as
    /// are `bytes`, `time` and `client`.
    pub status: Option<String>,
    /// The response size in bytes: a number or a string of digits.
    pub bytes: Option<String>,
    /// The time of the request: Unix seconds (with a fraction, or an
    /// integer in milli-, micro- or nanoseconds) or an ISO 8601 string.
    pub time: Option<String>,
    /// The client's address (a port after it is dropped).
    pub client: Option<String>,
}

impl JsonPaths {
    /// True when a target or request-line path is given: the paths can
    /// read a request on their own.
    pub fn has_request_paths(&self) -> bool {
        self.target.is_some() || self.request_line.is_some()
    }

    /// Replaces the paths of `self` with those that `other` gives.
    pub fn overlay(&mut self, other: &JsonPaths) {
        let pairs = [
            (&mut self.target, &other.target),
            (&mut self.request_line, &other.request_line),
            (&mut self.host, &other.host),
            (&mut self.scheme, &other.scheme),
            (&mut self.referer, &other.referer),
            (&mut self.method, &other.method),
            (&mut self.query, &other.query),
            (&mut self.status, &other.status),
            (&mut self.bytes, &other.bytes),
            (&mut self.time, &other.time),
            (&mut self.client, &other.client),
        ];
        for (mine, theirs) in pairs {
            if let Some(path) = theirs {
                *mine = Some(path.clone());
            }
        }
        if other.default_scheme.is_some() {
            self.default_scheme = other.default_scheme;
        }
    }
}

/// The field of [`JsonPaths`] an alternative belongs to; the index into
/// per-slot arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    Target,
    RequestLine,
    Host,
    Scheme,
    Referer,
    Method,
    Query,
    Status,
    Bytes,
    Time,
    Client,
}

pub(super) const SLOT_COUNT: usize = 11;

/// The slots of the record's other fields, read only when they are wanted
/// ([`Extracted::want_info`]); the method is one of them too.
///
/// [`Extracted::want_info`]: crate::log::Extracted::want_info
pub(super) const INFO_SLOTS: [Slot; 5] = [
    Slot::Method,
    Slot::Status,
    Slot::Bytes,
    Slot::Time,
    Slot::Client,
];

/// Alternatives are tracked as bits of a `u64`; paths listing more than this
/// many in total lose the extra ones.
pub(super) const MAX_ALTERNATIVES: usize = 64;

/// One alternative path of one slot, split into its keys.
#[derive(Clone, Debug)]
pub(super) struct Alternative {
    pub(super) slot: Slot,
    pub(super) keys: Box<[Box<[u8]>]>,
    /// For a path with a `key[field=value]` step: which element of the
    /// array at `keys[select.depth]` the next (and last) key is read from.
    pub(super) select: Option<Select>,
}

/// A `key[field=value]` step: the array element whose `field` is `value`.
#[derive(Clone, Debug)]
pub(super) struct Select {
    pub(super) depth: usize,
    pub(super) field: Box<[u8]>,
    pub(super) value: Box<[u8]>,
}

impl Alternative {
    /// Parses one alternative: keys split at `.` (not at `\.`), at most one
    /// `key[field=value]` step, followed by exactly one key. `None` for a
    /// path that breaks these rules: it can never be found.
    pub(super) fn parse(slot: Slot, path: &str) -> Option<Alternative> {
        let mut keys = Vec::new();
        let mut key = Vec::new();
        let mut bytes = path.bytes().peekable();
        while let Some(b) = bytes.next() {
            match b {
                b'\\' if bytes.peek() == Some(&b'.') => {
                    key.push(b'.');
                    bytes.next();
                }
                b'.' => keys.push(std::mem::take(&mut key)),
                _ => key.push(b),
            }
        }
        keys.push(key);
        let count = keys.len();
        let mut select = None;
        for (depth, key) in keys.iter_mut().enumerate() {
            let Some(inner) = key.strip_suffix(b"]") else {
                continue;
            };
            let Some(open) = memchr(b'[', inner) else {
                continue;
            };
            let condition = inner.get(open + 1..)?;
            let equals = memchr(b'=', condition)?;
            if select.is_some() || depth + 2 != count {
                return None;
            }
            select = Some(Select {
                depth,
                field: Box::from(condition.get(..equals)?),
                value: Box::from(condition.get(equals + 1..)?),
            });
            key.truncate(open);
        }
        Some(Alternative {
            slot,
            keys: keys.into_iter().map(Box::from).collect(),
            select,
        })
    }
}

/// The bit indexes set in `mask`, lowest first.
pub(super) fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
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
/// that end there (`leaf`), those that go deeper into an object (`inner`),
/// and those that select an element of an array there (`select`).
pub(super) fn match_key(alternatives: &[Alternative], live: u64, depth: usize, key: &[u8]) -> (u64, u64, u64) {
    let (mut leaf, mut inner, mut select) = (0u64, 0u64, 0u64);
    for index in bits(live) {
        let Some(alternative) = alternatives.get(index) else {
            continue;
        };
        if alternative.keys.get(depth).is_some_and(|k| **k == *key) {
            if alternative
                .select
                .as_ref()
                .is_some_and(|s| s.depth == depth)
            {
                select |= 1u64 << index;
            } else if alternative.keys.len() == depth + 1 {
                leaf |= 1u64 << index;
            } else {
                inner |= 1u64 << index;
            }
        }
    }
    (leaf, inner, select)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::json::tests::{paths, run};
    use crate::log::json::{JsonExtractor, JsonPreset};
    use crate::log::{Extract, Extracted, Field, Line, Skip};

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
    fn keys_with_escaped_dots_and_selector_steps_parse() {
        let alternative = Alternative::parse(Slot::Scheme, r"id\.resp_p").unwrap();
        assert_eq!(&*alternative.keys, [Box::from(&b"id.resp_p"[..])]);
        let alternative = Alternative::parse(Slot::Host, "r.h[name=Host].value").unwrap();
        let keys: Vec<&[u8]> = alternative.keys.iter().map(|k| &**k).collect();
        assert_eq!(keys, [&b"r"[..], b"h", b"value"]);
        let select = alternative.select.unwrap();
        assert_eq!(
            (select.depth, &*select.field, &*select.value),
            (1, &b"name"[..], &b"Host"[..])
        );
        // A selector must be followed by exactly one key, and come once.
        for bad in ["h[name=x]", "h[name=x].a.b", "a[n=x].b[n=y].c", "h[name].v"] {
            assert!(Alternative::parse(Slot::Host, bad).is_none(), "{bad}");
        }
        let line = br#"{"a":{"b":"/no"},"a.b":"/yes"}"#;
        let (result, out) = run(paths(r"a\.b"), line, Field::Request);
        assert_eq!((result, out.target(line)), (Line::Record, &b"/yes"[..]));
    }

    #[test]
    fn paths_given_without_a_target_go_over_the_presets() {
        let mut paths = JsonPreset::Caddy.paths();
        let given = JsonPaths {
            status: Some("resp.code".into()),
            ..JsonPaths::default()
        };
        assert!(!given.has_request_paths());
        paths.overlay(&given);
        assert_eq!(paths.status.as_deref(), Some("resp.code"));
        assert_eq!(paths.target, JsonPreset::Caddy.paths().target);
    }
}
