//! Undoing the loggers' escapes, and splitting an HTTP request line.
//!
//! Each function appends to `out` and never fails: an escape that is not one
//! of the logger's is copied as it is, so nothing the client sent is dropped.

use memchr::memchr;

use super::LineError;
use crate::ascii::hex_pair;
use crate::url::simd::{find, ByteSet};

/// Apache `mod_log_config` and nginx escapes: Apache writes `"` as `\"`, `\`
/// as `\\`, some whitespace as `\n` `\t` `\r` `\b` `\v`, and other non-printable
/// bytes as `\xhh`; nginx (`escape=default`) writes `"`, `\` and non-printable
/// bytes as `\xHH`. Both are undone; any other backslash is kept.
pub fn unescape_backslash(src: &[u8], out: &mut Vec<u8>) {
    // Most targets have no backslash: one memchr and one copy.
    let Some(first) = memchr(b'\\', src) else {
        out.extend_from_slice(src);
        return;
    };
    out.extend_from_slice(&src[..first]);
    let mut i = first;
    while i < src.len() {
        let b = src[i];
        if b != b'\\' {
            let next = memchr(b'\\', &src[i..]).map_or(src.len(), |n| i + n);
            out.extend_from_slice(&src[i..next]);
            i = next;
            continue;
        }
        match src.get(i + 1) {
            Some(b'"') => {
                out.push(b'"');
                i += 2;
            }
            Some(b'\\') => {
                out.push(b'\\');
                i += 2;
            }
            Some(b'n') => {
                out.push(b'\n');
                i += 2;
            }
            Some(b't') => {
                out.push(b'\t');
                i += 2;
            }
            Some(b'r') => {
                out.push(b'\r');
                i += 2;
            }
            Some(b'b') => {
                out.push(0x08);
                i += 2;
            }
            Some(b'v') => {
                out.push(0x0b);
                i += 2;
            }
            Some(b'x') | Some(b'X') => match src.get(i + 2..).and_then(hex_pair) {
                Some(byte) => {
                    out.push(byte);
                    i += 4;
                }
                None => {
                    out.push(b'\\');
                    i += 1;
                }
            },
            _ => {
                out.push(b'\\');
                i += 1;
            }
        }
    }
}

/// HAProxy's log escape: a byte it will not log raw (`"`, `#`, controls,
/// spaces in captured headers) is written as `#` and two hex digits. A `#`
/// not followed by two hex digits is kept.
pub fn unescape_hash(src: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < src.len() {
        let Some(n) = memchr(b'#', &src[i..]) else {
            out.extend_from_slice(&src[i..]);
            return;
        };
        out.extend_from_slice(&src[i..i + n]);
        i += n;
        match hex_pair(&src[i + 1..]) {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(b'#');
                i += 1;
            }
        }
    }
}

/// An HTTP request line as logged, split: `METHOD SP target [SP HTTP/x.y]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLine<'a> {
    /// The method token.
    pub method: &'a [u8],
    /// Everything between the method and the protocol version (may contain
    /// spaces when the logger wrote the client's bytes raw).
    pub target: &'a [u8],
    /// True when the line ends in ` HTTP/...` (false for HTTP/0.9 requests,
    /// and for lines a logger cut short).
    pub has_version: bool,
}

impl RequestLine<'_> {
    /// True when the method is `CONNECT`.
    pub fn is_connect(&self) -> bool {
        self.method.eq_ignore_ascii_case(b"CONNECT")
    }
}

/// RFC 9110 §5.6.2: `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" /
/// "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA`.
#[inline]
fn is_tchar(b: u8) -> bool {
    TCHAR[b as usize]
}

/// [`is_tchar`] as a table, built at compile time.
static TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    t
};

/// What a request field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// A request line.
    Line(RequestLine<'a>),
    /// `-` or nothing: the server logged no request (a timeout, a probe).
    Absent,
}

/// Splits a logged request line. `-` and the empty string are [`Request::Absent`];
/// a method that is not a token (a TLS handshake sent to a plain-HTTP port,
/// logged as `\x16\x03\x01...`) or a line without a target is an error.
pub fn split_request(raw: &[u8]) -> Result<Request<'_>, LineError> {
    let raw = trim_spaces(raw);
    // Most requests are `GET target HTTP/x.y`: taken with two comparisons
    // at the ends (about 40 instructions less per line of a combined log).
    // A target with spaces around it is left to the general steps.
    if let Some(target) = raw
        .strip_prefix(b"GET ")
        .and_then(|rest| rest.get(..rest.len().checked_sub(9)?))
    {
        let n = raw.len();
        if &raw[n - 9..n - 3] == b" HTTP/"
            && target.first().is_some_and(|&b| b != b' ')
            && target.last() != Some(&b' ')
        {
            return Ok(Request::Line(RequestLine {
                method: &raw[..3],
                target,
                has_version: true,
            }));
        }
    }
    if raw.is_empty() || raw == b"-" {
        return Ok(Request::Absent);
    }
    // The method is a short token: a plain loop beats a search call.
    let mut sp = 0;
    while sp < raw.len() && is_tchar(raw[sp]) {
        sp += 1;
    }
    if sp == raw.len() || raw[sp] != b' ' || sp == 0 {
        // ALB writes `- - -` (or `- http://h:80-/ -`) for requests it could
        // not parse: the method is `-` (a tchar, so it was read above).
        return Err(LineError::BadRequestLine);
    }
    let method = &raw[..sp];
    let rest = trim_spaces(&raw[sp + 1..]);
    if rest.starts_with(b"HTTP/") && memchr(b' ', rest).is_none() {
        // `GET  HTTP/1.1`: the target is missing.
        return Err(LineError::BadRequestLine);
    }
    let (target, has_version) = match version_start(rest) {
        Some(p) => (trim_spaces(&rest[..p]), true),
        None => (rest, false),
    };
    if target.is_empty() {
        return Err(LineError::BadRequestLine);
    }
    if method == b"-" && target.iter().all(|&b| b == b'-' || b == b' ') {
        return Ok(Request::Absent);
    }
    Ok(Request::Line(RequestLine {
        method,
        target,
        has_version,
    }))
}

/// The index of the space before a trailing ` HTTP/...` version, which is
/// short (`HTTP/1.1`, `HTTP/2.0`, `HTTP/3`): look back a few bytes instead of
/// searching the whole target.
#[inline]
fn version_start(rest: &[u8]) -> Option<usize> {
    // The usual ` HTTP/1.1` (and 1.0, 2.0): one comparison.
    let n = rest.len();
    if n >= 9 && rest[n - 9] == b' ' && &rest[n - 8..n - 3] == b"HTTP/" {
        return Some(n - 9);
    }
    let floor = n.saturating_sub(16);
    let mut p = rest.len();
    while p > floor {
        p -= 1;
        if rest[p] == b' ' {
            return rest[p + 1..].starts_with(b"HTTP/").then_some(p);
        }
    }
    None
}

/// `bytes` without leading and trailing spaces.
#[inline]
pub fn trim_spaces(bytes: &[u8]) -> &[u8] {
    // Most fields have no space to trim: check the ends first.
    if bytes.first() != Some(&b' ') && bytes.last() != Some(&b' ') {
        return bytes;
    }
    let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

/// Finds the end of a double-quoted field whose opening quote is at
/// `line[open]`, the way Apache and nginx write them: `\` escapes the next
/// byte. A quote counts as closing only when the line ends after it or a
/// space follows: servers that log a client's `"` raw (old nginx, some
/// proxies) would otherwise cut the field short. Returns the index of the
/// closing quote.
pub fn quoted_end(line: &[u8], open: usize) -> Option<usize> {
    quoted_end_escaped(line, open).map(|(end, _)| end)
}

/// [`quoted_end`], and whether the field holds a `\` (so that a field
/// without one is copied without looking for escapes again).
#[inline]
pub fn quoted_end_escaped(line: &[u8], open: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut i = open + 1;
    while i < line.len() {
        // Fields are short (tens of bytes): sixteen-byte SSE2 steps, inlined,
        // cost less than `memchr2`'s call and setup (78 instructions per
        // request of the generated combined log; `find` about half).
        i = find::<QuoteOrBackslash>(line, i);
        if i == line.len() {
            return None;
        }
        if line[i] == b'\\' {
            escaped = true;
            i += 2;
            continue;
        }
        match line.get(i + 1) {
            None | Some(b' ') | Some(b'\t') => return Some((i, escaped)),
            _ => i += 1,
        }
    }
    None
}

/// `"` and `\\`: where a quoted field may end or an escape start.
struct QuoteOrBackslash;
impl ByteSet for QuoteOrBackslash {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"\"\\";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unb(s: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        unescape_backslash(s, &mut v);
        v
    }

    #[test]
    fn backslash_escapes() {
        assert_eq!(unb(b"/a"), b"/a");
        assert_eq!(unb(br#"/a\"b\\c"#), br#"/a"b\c"#);
        assert_eq!(unb(br"\x16\x03\x01"), [0x16, 3, 1]);
        assert_eq!(unb(br"/\xC3\xa9"), "/é".as_bytes());
        assert_eq!(unb(br"/a\qb\x1"), br"/a\qb\x1");
        assert_eq!(unb(br"\"), br"\");
        assert_eq!(unb(br"a\n\t"), b"a\n\t");
    }

    #[test]
    fn hash_escapes() {
        let mut v = Vec::new();
        unescape_hash(b"/a#22b#2#zz#", &mut v);
        assert_eq!(v, b"/a\"b#2#zz#");
    }

    #[test]
    fn request_lines() {
        let l = |s: &'static [u8]| split_request(s);
        assert_eq!(
            l(b"GET /a HTTP/1.1"),
            Ok(Request::Line(RequestLine {
                method: b"GET",
                target: b"/a",
                has_version: true
            }))
        );
        assert_eq!(
            l(b"GET /a"),
            Ok(Request::Line(RequestLine {
                method: b"GET",
                target: b"/a",
                has_version: false
            }))
        );
        assert_eq!(
            l(b"GET /a b HTTP/1.0"),
            Ok(Request::Line(RequestLine {
                method: b"GET",
                target: b"/a b",
                has_version: true
            }))
        );
        assert_eq!(l(b"-"), Ok(Request::Absent));
        assert_eq!(l(b""), Ok(Request::Absent));
        assert_eq!(l(b"- - - "), Ok(Request::Absent));
        assert_eq!(l(b"\x16\x03\x01 x"), Err(LineError::BadRequestLine));
        assert_eq!(l(b"GET"), Err(LineError::BadRequestLine));
        assert_eq!(l(b"GET  HTTP/1.1"), Err(LineError::BadRequestLine));
    }

    /// `GET` requests take a shortcut: it must give what the general steps
    /// give for another method (`PUT` takes them) on the same target.
    #[test]
    fn get_shortcut_agrees_with_the_general_steps() {
        let targets: [&[u8]; 12] = [
            b"/a",
            b"",
            b" ",
            b" /a",
            b"/a ",
            b"HTTP/1.1",
            b"/a  b",
            b"-",
            b"x",
            b"/a HTTP/1.1",
            b"  ",
            b"*",
        ];
        for target in targets {
            for version in [
                &b" HTTP/1.1"[..],
                b" HTTP/2.0",
                b" HTTP/1",
                b"",
                b"  HTTP/1.0",
            ] {
                let line = |method: &[u8]| [method, b" ", target, version].concat();
                let (get, put) = (line(b"GET"), line(b"PUT"));
                let from = |r: Result<Request<'_>, LineError>| match r {
                    Ok(Request::Line(r)) => Ok(Some((r.target.to_vec(), r.has_version))),
                    Ok(Request::Absent) => Ok(None),
                    Err(e) => Err(e),
                };
                assert_eq!(
                    from(split_request(&get)),
                    from(split_request(&put)),
                    "{}",
                    String::from_utf8_lossy(&get)
                );
            }
        }
    }

    #[test]
    fn quoted_fields() {
        assert_eq!(quoted_end(br#""GET /" 200"#, 0), Some(6));
        assert_eq!(quoted_end(br#""a\"b" 1"#, 0), Some(5));
        assert_eq!(quoted_end(br#""a"b" 1"#, 0), Some(4));
        assert_eq!(quoted_end(br#""abc"#, 0), None);
        assert_eq!(quoted_end(br#""abc\"#, 0), None);
        assert_eq!(quoted_end(br#""""#, 0), Some(1));
    }
}
