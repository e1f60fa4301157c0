//! Apache and nginx access logs: common, combined, and with a virtual-host
//! prefix.
//!
//! ```text
//! [%v[:%p] ]%h %l %u [%t] "%r" %>s %b ["%{Referer}i" "%{User-agent}i" ...]
//! ```
//!
//! The tokenizer is quote-aware but forgiving, because real logs are not
//! always well formed: a record may lack the ident fields, sit inside a syslog
//! message without the `[time]` field, be wrapped in an extra pair of quotes
//! (as some exports write them), or be cut short after the request. What is
//! needed is only the request field (the first quoted field after `[time]`,
//! or the first quoted field when there is no `[time]`) and, for the
//! referer, the quoted field after the status and size.

use memchr::{memchr, memmem};

use super::escape::{quoted_end, quoted_end_escaped, split_request, unescape_backslash, Request};
use super::info::Info;
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip, Tally};
use crate::ascii;
use crate::url::simd::{find, members, ByteSet};

/// `-f auto`'s details of a line (see [`LogReader::shape`]): a virtual
/// host before the client, a referer after the request.
const VHOST: u8 = 1;
const REFERER: u8 = 2;

/// Length of Apache's `%t` with its brackets: `[10/Oct/2000:13:55:36 -0700]`.
const TIME_LEN: usize = 28;

/// Reads common, combined and vhost-prefixed records.
#[derive(Clone, Debug, Default)]
pub struct ClfExtractor {
    /// The first field is the virtual host (`%v` or `%v:%p`).
    vhost: bool,
}

impl LogReader for ClfExtractor {
    fn new(format: LogFormat, _: &ReadOptions) -> Self {
        ClfExtractor::new(format == LogFormat::Vhost)
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        let whole = line;
        let mut line = line;
        let mut base = 0; // offset of `line` in the caller's line, for error offsets
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        // Exports that wrap each record in quotes (`is_wrapped`).
        if is_wrapped(line) {
            base = 1;
            line = &line[1..];
            if line.last() == Some(&b'"') {
                line = &line[..line.len() - 1];
            }
        }
        let mut start = 0;
        if self.vhost {
            // The host is a few bytes: sixteen-byte steps, inlined, as for
            // `[` below.
            let sp = find::<Space>(line, 0);
            if sp == line.len() {
                return Line::Error(LineError::Malformed, base);
            }
            if let Err(e) = split_vhost(&line[..sp], out) {
                return Line::Error(e, base);
            }
            start = sp + 1;
        }
        // The request is the first quoted field after `[time]`; without one
        // (syslog-embedded records) the first quoted field.
        // The `[` is a few tens of bytes in: sixteen-byte steps, inlined,
        // cost less there than a `memchr` call.
        let open = find::<OpenBracket>(line, start);
        // `%v %h %l %u [`: without a fourth field before the time, the first
        // one is the client, and taking it for the host would put client
        // addresses in every URL. An X-Forwarded-For list (`a, b`) is one
        // field.
        if self.vhost && open < line.len() && fields_before(&line[start..open]) < 3 {
            return Line::Error(LineError::Malformed, base);
        }
        let after_time = if open == line.len() {
            start
        } else if line.get(open + TIME_LEN - 1) == Some(&b']') {
            // `%t` is `[10/Oct/2000:13:55:36 -0700]`, 28 bytes: check there
            // before searching.
            open + TIME_LEN
        } else {
            match memchr(b']', &line[open..]) {
                Some(close) => open + close + 1,
                None => return Line::Error(LineError::Malformed, base + open),
            }
        };
        let q = if line.get(after_time..after_time + 2) == Some(b" \"") {
            after_time + 1
        } else {
            match memchr(b'"', &line[after_time..]) {
                Some(q) => after_time + q,
                None => return Line::Error(LineError::Malformed, base + after_time),
            }
        };
        let Some((q_end, escaped)) = quoted_end_escaped(line, q) else {
            return Line::Error(LineError::Unterminated, base + q);
        };
        let request = &line[q + 1..q_end];
        if out.want_info {
            note_info(whole, line, start, open, after_time, request, q_end, out);
        }

        let mut found = false;
        let mut skip = Skip::EmptyField;
        if field.request() {
            match split_request(request) {
                Ok(Request::Line(r)) => {
                    out.connect = r.is_connect();
                    // A field with no backslash is as logged: left in the line.
                    if escaped {
                        unescape_backslash(r.target, out.target_buf());
                    } else {
                        out.lend_target(whole, r.target);
                    }
                    out.has_target = true;
                    found = true;
                }
                // `"-"` is a record without a request only in a record: a
                // line with no `[time]` whose first quoted field is `-` is
                // some other text.
                Ok(Request::Absent) if open == line.len() => {
                    return Line::Error(LineError::Malformed, base + q);
                }
                Ok(Request::Absent) => skip = Skip::NoRequest,
                Err(e) => return Line::Error(e, base + q + 1),
            }
        }
        if field.referer() {
            // After the request: ` status size "referer"`. Find the next quote.
            let from = q_end + 1;
            if let Some(r) = memchr(b'"', &line[from..]).map(|r| from + r) {
                match quoted_end(line, r) {
                    Some(r_end) => {
                        let value = &line[r + 1..r_end];
                        if !value.is_empty() && value != b"-" {
                            unescape_backslash(value, &mut out.referer);
                            out.has_referer = true;
                            found = true;
                        }
                    }
                    // A record cut inside the referer: the request is still
                    // whole, so only the referer is missing.
                    None if field.request() => {}
                    None => return Line::Error(LineError::Unterminated, base + r),
                }
            }
            if !field.request() {
                skip = Skip::EmptyField;
            }
        }
        if found {
            Line::Record
        } else {
            Line::Skip(skip)
        }
    }

    #[inline(always)]
    fn request_start(&self, line: &[u8]) -> Option<usize> {
        ClfExtractor::request_start(self, line)
    }

    #[inline(always)]
    fn request_closes(&self, rest: &[u8]) -> bool {
        request_closes(rest)
    }

    #[inline(always)]
    fn hosts_in_line(&self) -> bool {
        self.vhost
    }

    #[inline(always)]
    fn hosted_request_start(&self, line: &[u8]) -> Option<(usize, usize)> {
        ClfExtractor::hosted_request_start(self, line)
    }

    /// `%v[:%p]` as [`split_vhost`] reads it for [`read`](Self::read).
    fn read_host(&self, field: &[u8], out: &mut Extracted) {
        if split_vhost(field, out).is_err() {
            out.host.clear();
        }
    }

    /// What [`note_info`] notes of a line that [`request_start`]
    /// (Self::request_start) took, from what it checked: the line is not
    /// wrapped and has no virtual host, `%t` is the 28 bytes before ` "`,
    /// and the request field is `"METHOD target HTTP/d.d"` with single
    /// spaces, the method in upper-case letters.
    #[inline(always)]
    fn info_in_line(&self, line: &[u8], target: usize, after: usize) -> Info {
        // The method's quote: upper-case letters back from the space
        // before the target; five bytes back for `GET` and the other
        // three-letter methods.
        let mut q = target - 2;
        if line[target - 5] == b'"' {
            q = target - 5;
        }
        while line[q] != b'"' {
            q -= 1;
        }
        let open = q - 1 - TIME_LEN;
        let at = |s: usize, e: usize| (s < e).then_some((s, e));
        let (status, bytes) = status_and_size(&line[after..]);
        Info {
            client: at(0, find::<Space>(&line[..open], 0)),
            time: Some((open + 1, open + TIME_LEN - 1)),
            method: Some((q + 1, target - 1)),
            status: status.map(|(s, e)| (after + s, after + e)),
            bytes: bytes.map(|(s, e)| (after + s, after + e)),
            ..Info::default()
        }
    }

    /// `... [time] "request" ...`, possibly wrapped in quotes, or, inside
    /// a syslog message, a quoted request line `"GET /path` with no
    /// `[time]`. Details: [`VHOST`] and [`REFERER`].
    fn shape(line: &[u8]) -> Option<u8> {
        let body = match line.strip_prefix(b"\"") {
            Some(rest) if rest.first().is_some_and(|b| !b.is_ascii_uppercase()) => rest,
            _ => line,
        };
        if let Some(open) = memchr(b'[', body) {
            if let Some(close) = memmem::find(&body[open..], b"] \"") {
                let before = &body[..open];
                // Behind a proxy or CDN the client field is an X-Forwarded-For
                // list (`203.0.113.7, 10.0.0.1`): its addresses are one field,
                // and a list first is a client, never a virtual host (a host
                // holds no `,`).
                let tokens = fields_before(before);
                let client_list_first = before
                    .split(|&b| b == b' ')
                    .find(|f| !f.is_empty())
                    .is_some_and(|f| f.last() == Some(&b','));
                let after = &body[open + close + 3..];
                // The referer is the second quoted field after the time.
                let referer = memchr(b'"', after)
                    .and_then(|q| memchr(b'"', &after[q + 1..]))
                    .is_some();
                let vhost = tokens >= 4 && !client_list_first;
                return Some((u8::from(vhost) * VHOST) | (u8::from(referer) * REFERER));
            }
        }
        let q = memchr(b'"', line)?;
        let rest = &line[q + 1..];
        let method = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
        (method >= 3 && rest.get(method) == Some(&b' ') && rest.get(method + 1) == Some(&b'/'))
            .then_some(0)
    }

    /// `vhost` when most lines have a virtual host first, else `combined`
    /// when most have a referer, else `common`.
    fn voted(tally: &Tally) -> Option<LogFormat> {
        let most = |bit: u8| tally.details[bit.trailing_zeros() as usize] * 2 > tally.lines;
        Some(if most(VHOST) {
            LogFormat::Vhost
        } else if most(REFERER) {
            LogFormat::Combined
        } else {
            LogFormat::Common
        })
    }
}

impl ClfExtractor {
    /// An extractor for records with (`vhost`) or without a virtual-host prefix.
    pub fn new(vhost: bool) -> Self {
        ClfExtractor { vhost }
    }

    /// Where the target of a usual record's request starts: a line with
    /// no virtual host, not wrapped in quotes, with `%t` as 28 bytes and
    /// the request field right after it as `"METHOD /`, the method in
    /// upper-case letters and not `CONNECT` (whose target is an authority).
    /// The steps of [`extract`](Self::extract) to that point, and no more,
    /// so that a target that ends at a space which [`request_closes`]
    /// follows is the target `extract` lends: the field holds no `"` or
    /// `\\` before its version (the target's scan stops at both, and at the
    /// space), so its closing quote is the one after the version, and
    /// [`split_request`] splits a request line `METHOD target HTTP/d.d` with
    /// single spaces there, whatever its method token.
    #[inline(always)]
    pub(crate) fn request_start(&self, line: &[u8]) -> Option<usize> {
        if self.vhost {
            return None;
        }
        // Most lines: their first bytes hold `%t` and a `GET` after it,
        // tested with one test of the line's length.
        if let Some(head) = line.first_chunk::<USUAL_HEAD>() {
            if is_wrapped(head) {
                return None;
            }
            if let Some(at) = usual_get_start(head) {
                return Some(at);
            }
        }
        if is_wrapped(line) {
            return None;
        }
        request_after_time(line, find_near::<OpenBracket>(line, 0))
    }

    /// [`request_start`](Self::request_start) of a `vhost` line: where its
    /// `%v[:%p]` ends (a space ends it, as for [`extract`](Self::extract)),
    /// then the steps of `request_start` from the `[` after it. Where
    /// `extract` checks that three fields come between them (`%h %l %u`:
    /// with fewer, the first field is the client, not a host), this takes
    /// only their usual shape, a client and ` - - `, which has three.
    #[inline(always)]
    pub(crate) fn hosted_request_start(&self, line: &[u8]) -> Option<(usize, usize)> {
        if !self.vhost || is_wrapped(line) {
            return None;
        }
        let sp = find_near::<Space>(line, 0);
        if sp == line.len() {
            return None;
        }
        let open = find_near::<OpenBracket>(line, sp + 1);
        // `line[sp + 1..open]` is `client - - `: the client starts right
        // after the host's space and ends with a byte that is neither a
        // space nor the `,` of an X-Forwarded-For list.
        let client_end = open.checked_sub(6).filter(|&e| e > sp)?;
        let usual = line[sp + 1] != b' '
            && line.get(client_end + 1..open) == Some(b" - - ")
            && !matches!(line[client_end], b' ' | b',');
        if !usual {
            return None;
        }
        Some((sp, request_after_time(line, open)?))
    }
}

/// `find::<S>(line, from)`, the first 32 bytes in one step: for a byte a
/// few tens of bytes in, where sixteen-byte steps took two, the `[` of `%t`
/// after a client's address and ` - - ` (19 bytes in `192.168.100.200 - -
/// [`) or the space after a `%v:%p` (`www.example.org:443 `).
#[inline(always)]
fn find_near<S: ByteSet>(line: &[u8], from: usize) -> usize {
    let Some(head) = line.get(from..).and_then(<[u8]>::first_chunk::<32>) else {
        return find::<S>(line, from);
    };
    let (lo, hi) = head.split_at(16);
    let lo: &[u8; 16] = lo.try_into().expect("16 bytes");
    let hi: &[u8; 16] = hi.try_into().expect("16 bytes");
    let hits = members::<S>(lo) | members::<S>(hi) << 16;
    if hits != 0 {
        return from + hits.trailing_zeros() as usize;
    }
    find::<S>(line, from + 32)
}
/// The steps of [`ClfExtractor::request_start`] from `open`, where the
/// `[` of `%t` was found (the line's length if it was not).
#[inline(always)]
fn request_after_time(line: &[u8], open: usize) -> Option<usize> {
    if line.get(open + TIME_LEN - 1) != Some(&b']') {
        return None;
    }
    let at = open + TIME_LEN;
    // `line[at..]`, not `line.get(at..at + 7)`: `at <= line.len()` is
    // known from the test above, while the range's own overflow test
    // cost five instructions a line (pipeline/combined).
    let rest = &line[at..];
    if rest.starts_with(b" \"GET /") {
        return Some(at + 6);
    }
    // HEAD, POST and the others: a few in a hundred lines of a usual
    // log, each about 600 instructions dearer through `extract`.
    if !rest.starts_with(b" \"") {
        return None;
    }
    let method = at + 2;
    let end = method
        + line
            .get(method..)?
            .iter()
            .take(MAX_METHOD + 1)
            .position(|b| !b.is_ascii_uppercase())?;
    let token = &line[method..end];
    let usual = (1..=MAX_METHOD).contains(&token.len()) && token != b"CONNECT";
    (usual && line.get(end..end + 2) == Some(b" /")).then_some(end + 1)
}

/// The bytes [`usual_get_start`] reads: `%t` starting in the first 32
/// (its `[` at 32 at most, as `trailing_zeros` of a 32-bit mask is known to
/// be), then ` "GET /`.
const USUAL_HEAD: usize = 32 + TIME_LEN + 7;

/// What [`ClfExtractor::request_start`] finds in a line that starts with
/// `head`, when its `[` is in the first 32 bytes and its method is `GET`
/// (not wrapped: the caller tests that): the steps of [`find_near`] and
/// [`request_after_time`], with every read inside `head`, so that the
/// line's length is tested once, not before each read (pipeline/combined).
/// `None`: not such a line, which the general steps read.
#[inline(always)]
fn usual_get_start(head: &[u8; USUAL_HEAD]) -> Option<usize> {
    let lo: &[u8; 16] = head[..16].try_into().expect("16 bytes");
    let hi: &[u8; 16] = head[16..32].try_into().expect("16 bytes");
    let hits = members::<OpenBracket>(lo) | members::<OpenBracket>(hi) << 16;
    if hits == 0 {
        return None;
    }
    let at = hits.trailing_zeros() as usize + TIME_LEN;
    (head[at - 1] == b']' && head[at..at + 7] == *b" \"GET /").then_some(at + 6)
}

/// The longest method [`ClfExtractor::request_start`] takes: the longest
/// registered ones (`UPDATEREDIRECTREF`, `BASELINE-CONTROL`) are rare
/// enough to go through `extract`.
const MAX_METHOD: usize = 16;

/// Whether `line` is a record wrapped in quotes, as some exports write
/// them: `"1.2.3.4 - - [..] "GET / HTTP/1.1" ..."` (a request field, which
/// starts with a method's upper-case letter, is not such a quote).
#[inline(always)]
fn is_wrapped(line: &[u8]) -> bool {
    line.len() >= 2 && line[0] == b'"' && line[1] != b' ' && !line[1].is_ascii_uppercase()
}

/// Whether `rest` is ` HTTP/d.d"` and then the line's end, a space or a
/// tab: how the request field of [`ClfExtractor::request_start`] ends
/// after its target, closed by a quote that [`quoted_end`] takes.
#[inline(always)]
pub(crate) fn request_closes(rest: &[u8]) -> bool {
    let Some(head) = rest.first_chunk::<10>() else {
        return false;
    };
    // ` HTT` and `P/`, each compared as one word with a constant (a
    // compare of memory with an immediate), then `d.d"` as one word:
    // the digits' high nibbles (3) and the `.` and `"` as they are, and
    // the digits' low nibbles at most 9, which adding 6 leaves in their
    // nibble (9 + 6 = 15). As one masked eight-byte word and two tests of
    // a digit each, about 5 instructions a line more (pipeline/combined).
    let word = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().expect("4 bytes"));
    let version = word(6);
    const DIGITS: u32 = 0x00F0_00F0;
    word(0) == u32::from_le_bytes(*b" HTT")
        && u16::from_le_bytes([head[4], head[5]]) == u16::from_le_bytes(*b"P/")
        && version & !(DIGITS >> 4) == u32::from_le_bytes(*b"0.0\"")
        && version.wrapping_add(0x0006_0006) & DIGITS == 0x0030_0030
        && matches!(rest.get(10), None | Some(b' ') | Some(b'\t'))
}

/// Notes the client (`%h`), time (`%t`), method and, after the request,
/// status and size (`%>s %b`) of a record for [`Extracted::info`].
#[allow(clippy::too_many_arguments)]
#[cold]
fn note_info(
    whole: &[u8],
    line: &[u8],
    start: usize,
    open: usize,
    after_time: usize,
    request: &[u8],
    q_end: usize,
    out: &mut Extracted,
) {
    let info = &mut out.info;
    // What `Info::at(whole, &line[s..e])` gives, with no pointers compared
    // per field: `line` is `whole` or `whole` without its first byte.
    let base = line.as_ptr() as usize - whole.as_ptr() as usize;
    let at = |s: usize, e: usize| (s < e).then_some((base + s, base + e));
    if open < line.len() {
        info.client = at(start, find::<Space>(&line[..open], start));
        info.time = at(open + 1, after_time.saturating_sub(1).max(open + 1));
    }
    let request = super::escape::trim_spaces(request);
    let method = &request[..find::<Space>(request, 0)];
    if method != b"-" {
        info.method = Info::at(whole, method);
    }
    // The first two fields after the request (runs of spaces between
    // them), unless quoted: sixteen-byte steps, inlined, where a `split`
    // iterator took each byte in turn.
    let from = q_end + 1;
    let (status, bytes) = status_and_size(&line[from..]);
    if let Some((s, e)) = status {
        info.status = at(from + s, from + e);
    }
    if let Some((s, e)) = bytes {
        info.bytes = at(from + s, from + e);
    }
}

/// The bounds of `%>s` and `%b` in `rest`, what follows the request: its
/// first field and, when there is one, its second (fields separated by
/// runs of spaces), each unless quoted, the second only after a first.
#[inline(always)]
fn status_and_size(rest: &[u8]) -> (Option<Span>, Option<Span>) {
    let unquoted = |f: &(usize, usize)| rest[f.0] != b'"';
    let status = field_after(rest, 0).filter(unquoted);
    let size = status.and_then(|(_, e)| field_after(rest, e).filter(unquoted));
    (status, size)
}

/// The bounds of a part of a line.
type Span = (usize, usize);

/// The first field of `s` from `from` on: its bounds, after any spaces,
/// up to the next space or the end; `None` when only spaces are left.
#[inline(always)]
fn field_after(s: &[u8], from: usize) -> Option<Span> {
    let start = from + s[from..].iter().position(|&b| b != b' ')?;
    Some((start, find::<Space>(s, start)))
}

/// ` `, which ends `%v[:%p]`, the client, the method, the status and the size.
struct Space;
impl ByteSet for Space {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b" ";
}

/// `[`, the start of `%t`.
struct OpenBracket;
impl ByteSet for OpenBracket {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"[";
}

/// The space-separated fields of `s`, an X-Forwarded-For list
/// (`203.0.113.7, 10.0.0.1`) counting as one. Format detection counts the
/// fields before `[time]` with it too.
pub(crate) fn fields_before(s: &[u8]) -> usize {
    s.split(|&b| b == b' ')
        .filter(|f| !f.is_empty() && f.last() != Some(&b','))
        .count()
}

/// Splits `%v[:%p]` (any `host[:port]`) into `out.host` and `out.port`.
pub(crate) fn split_vhost(v: &[u8], out: &mut Extracted) -> Result<(), LineError> {
    // A client list (`203.0.113.7, 10.0.0.1 - - [...]`): a host holds no `,`.
    if v.last() == Some(&b',') {
        return Err(LineError::BadHost);
    }
    // A port is the digits after the last `:`, unless that colon is inside
    // an IPv6 literal (`[::1]` has its colons before the `]`): one or more
    // digits at the end after a `:`, found from the end (a `]` or a `:`
    // after that colon would not be digits). Read a byte at a time, not
    // by `memrchr` and a second search: a host is a few bytes, and this
    // runs on every line of a vhost log.
    // The digits' value is read on the way (up to the six a port may not
    // have: `ascii::parse_port`'s bounds).
    let (mut digits, mut port, mut place) = (0, 0u32, 1u32);
    while let Some(d) = v.len().checked_sub(digits + 1).map(|i| v[i].wrapping_sub(b'0')) {
        if d > 9 {
            break;
        }
        if digits < 6 {
            port += u32::from(d) * place;
            place *= 10;
        }
        digits += 1;
    }
    let colon = v.len() - digits;
    if digits > 0 && colon > 0 && v[colon - 1] == b':' {
        if digits > 5 || port > u32::from(u16::MAX) {
            return Err(LineError::BadHost);
        }
        out.port = Some(port as u16);
        out.host.extend_from_slice(&v[..colon - 1]);
    } else {
        out.host.extend_from_slice(v);
    }
    if out.host.is_empty() || out.host == b"-" {
        out.host.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    /// `split_vhost` finds the port as the last `:` outside an IPv6
    /// literal followed by decimal digits does (how it was written
    /// before), on every host of up to four bytes from a set of bytes
    /// that matter, and on longer hosts and ports.
    #[test]
    fn split_vhost_finds_the_port_after_the_last_colon_outside_brackets() {
        fn by_last_colon(v: &[u8]) -> Result<(Vec<u8>, Option<u16>), LineError> {
            if v.last() == Some(&b',') {
                return Err(LineError::BadHost);
            }
            let colon = v
                .iter()
                .rposition(|&b| b == b':')
                .filter(|&c| !v[c..].contains(&b']'));
            let (mut host, port) = match colon {
                Some(c) if ascii::is_decimal(&v[c + 1..]) => (
                    v[..c].to_vec(),
                    Some(ascii::parse_port(&v[c + 1..]).ok_or(LineError::BadHost)?),
                ),
                _ => (v.to_vec(), None),
            };
            if host == b"-" {
                host.clear();
            }
            Ok((host, port))
        }
        let check = |v: &[u8]| {
            let mut out = Extracted::default();
            let got = split_vhost(v, &mut out).map(|()| (out.host.clone(), out.port));
            assert_eq!(got, by_last_colon(v), "{:?}", v.escape_ascii().to_string());
        };
        let alphabet = b":]0[9a-,.";
        let mut v = Vec::new();
        for n in 0..=4u32 {
            for mut k in 0..alphabet.len().pow(n) {
                v.clear();
                for _ in 0..n {
                    v.push(alphabet[k % alphabet.len()]);
                    k /= alphabet.len();
                }
                check(&v);
            }
        }
        for v in [
            &b"shop.example:443"[..],
            b"shop.example:65535",
            b"shop.example:65536",
            b"shop.example:080",
            b"shop.example:123456",
            b"[2001:db8::1]:8443",
            b"[2001:db8::1]",
            b"2001:db8::1",
            b"host:",
            b"-",
            b"-:80",
        ] {
            check(v);
        }
    }

    /// `status_and_size` finds the fields a `split` on spaces finds, and
    /// a space ends the client and the method where `memchr` finds it: on
    /// every string of up to 8 bytes from a space, a quote, a digit and a
    /// letter, alone, three times over and followed by 17 letters (the
    /// sixteen-byte steps and their tail).
    #[test]
    fn status_and_size_are_the_fields_split_finds() {
        fn by_split(rest: &[u8]) -> Fields<'_> {
            let mut fields = rest.split(|&b| b == b' ').filter(|f| !f.is_empty());
            let status = fields.next().filter(|f| f[0] != b'"');
            let size = status.and_then(|_| fields.next().filter(|f| f[0] != b'"'));
            (status, size)
        }
        type Fields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
        let alphabet = b" \"2a";
        let mut strings = vec![Vec::new()];
        for len in 1..=8 {
            for n in 0..alphabet.len().pow(len) {
                let s: Vec<u8> = (0..len)
                    .map(|i| alphabet[n / alphabet.len().pow(i) % alphabet.len()])
                    .collect();
                strings.push(s);
            }
        }
        for s in strings {
            for rest in [s.clone(), s.repeat(3), [&s[..], b"xxxxxxxxxxxxxxxxx"].concat()] {
                let (status, size) = status_and_size(&rest);
                let got = (status.map(|(a, b)| &rest[a..b]), size.map(|(a, b)| &rest[a..b]));
                assert_eq!(got, by_split(&rest), "{:?}", String::from_utf8_lossy(&rest));
                for from in [0, rest.len() / 2] {
                    let want = memchr(b' ', &rest[from..]).map_or(rest.len(), |i| from + i);
                    assert_eq!(find::<Space>(&rest, from), want);
                }
            }
        }
    }

    /// `request_start` with its first look at the usual line
    /// (`usual_get_start`) finds what the general steps find alone: on
    /// lines whose `[` comes at every offset around the 32 bytes it looks
    /// in, wrapped or not, with `GET` and other requests, `%t` whole or cut,
    /// at every length around the bytes it reads.
    #[test]
    fn usual_get_start_agrees_with_the_general_steps() {
        let general = |line: &[u8]| {
            if is_wrapped(line) {
                return None;
            }
            request_after_time(line, find_near::<OpenBracket>(line, 0))
        };
        let reader = ClfExtractor::new(false);
        let mut taken = 0;
        for pad in 0..40 {
            for first in ["", "\"", "\"G", "\"x"] {
                for time in ["[10/Oct/2000:13:55:36 -0700]", "[10/Oct/2000:13:55:36 -0700 ]", "[t]"] {
                    for request in [" \"GET /a HTTP/1.1\"", " \"POST /a HTTP/1.1\"", " \"GET a"] {
                        let whole = format!("{first}{}{time}{request} 200 1 \"-\" \"ua\"", "x".repeat(pad));
                        let whole = whole.as_bytes();
                        for n in (0..=whole.len()).rev().take(USUAL_HEAD + 10) {
                            let line = &whole[..n];
                            let got = reader.request_start(line);
                            assert_eq!(got, general(line), "{}", String::from_utf8_lossy(line));
                            taken += usize::from(got.is_some() && n >= USUAL_HEAD);
                        }
                    }
                }
            }
        }
        assert!(taken > 100, "{taken}");
    }

    /// `request_closes` by words says what the byte pattern says: a
    /// record's ` HTTP/1.1" ` with each byte in turn set to each value,
    /// and cut at every length.
    #[test]
    fn request_closes_is_the_byte_pattern() {
        fn pattern(rest: &[u8]) -> bool {
            match rest.get(..10) {
                Some(&[b' ', b'H', b'T', b'T', b'P', b'/', major, b'.', minor, b'"']) => {
                    major.is_ascii_digit()
                        && minor.is_ascii_digit()
                        && matches!(rest.get(10), None | Some(b' ') | Some(b'\t'))
                }
                _ => false,
            }
        }
        let usual = b" HTTP/1.1\" 200";
        let mut taken = 0;
        for k in 0..11 {
            for b in 0..=255u8 {
                let mut rest = usual.to_vec();
                rest[k] = b;
                for n in [10, 11, rest.len()] {
                    let rest = &rest[..n];
                    assert_eq!(
                        request_closes(rest),
                        pattern(rest),
                        "{:?}",
                        rest.escape_ascii().to_string()
                    );
                    taken += usize::from(pattern(rest));
                }
            }
        }
        for n in 0..usual.len() {
            assert_eq!(request_closes(&usual[..n]), pattern(&usual[..n]), "{n}");
        }
        assert!(taken > 11 * 3, "{taken}");
    }

    /// `info_in_line` notes what `read` notes, on every line that
    /// `request_start` and `request_closes` take: usual records, other
    /// methods, odd clients, sizes and statuses, spaces and quotes after
    /// the request, a line cut after it. Each line is tried cut at every
    /// length too, so the fields after the request end anywhere.
    #[test]
    fn info_in_line_is_what_read_notes() {
        let lines: &[&[u8]] = &[
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?b HTTP/1.1" 200 2326 "-" "ua""#,
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "POST /form HTTP/1.0" 302 - "http://r/" "m""#,
            br#"2001:db8::1 - u [10/Oct/2000:13:55:36 -0700] "PROPFIND /dav/ HTTP/1.1" 207 12"#,
            br#"- - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/2.0"   404    0   "x""#,
            br#"1.2.3.4:5678 - - [10/Oct/2000:13:55:36 -0700] "G /x HTTP/1.1" "200" 5"#,
            br#"h - - [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.1"	200 5"#,
            br#"[10/Oct/2000:13:55:36 -0700] "GET /noclient HTTP/1.1" 200 5"#,
            br#"a  b [10/Oct/2000:13:55:36 -0700] "ABCDEFGHIJKLMNOP /m HTTP/1.1" 1 22 333"#,
            br#"x [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.1" "#,
            br#"x [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.1""#,
        ];
        let reader = ClfExtractor::new(false);
        let mut ex = Extracted::default();
        ex.want_info(true);
        let mut taken = 0;
        for whole in lines {
            for n in 0..=whole.len() {
                let line = &whole[..n];
                let shown = String::from_utf8_lossy(line);
                let Some(at) = reader.request_start(line) else {
                    continue;
                };
                let len = line[at..].iter().position(|&b| b == b' ');
                let Some(len) = len.filter(|&l| request_closes(&line[at + l..])) else {
                    continue;
                };
                let mut r = reader.clone();
                assert_eq!(r.extract(line, Field::Request, &mut ex), Line::Record, "{shown}");
                assert_eq!(ex.target(line), &line[at..at + len], "{shown}");
                let info = LogReader::info_in_line(&reader, line, at, at + len + 10);
                assert_eq!(info, ex.info, "{shown}");
                taken += 1;
            }
        }
        assert!(taken >= 3 * lines.len(), "{taken}");
    }

    fn run(vhost: bool, field: Field, line: &[u8]) -> (Line, Extracted) {
        let mut ex = Extracted::default();
        let r = ClfExtractor::new(vhost).extract(line, field, &mut ex);
        (r, ex)
    }

    /// One reader, one record reused: targets left in the line (no
    /// backslash), targets unescaped into the record's buffer, and records
    /// without one, in turn, each read in its own form. A record that kept
    /// the last line's form would give the last line's bytes (or cut the
    /// wrong line).
    #[test]
    fn lent_and_unescaped_targets_in_turn() {
        // The line, its target, and whether it stays in the line.
        let lines: [(&[u8], &[u8], bool); 9] = [
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /plain?x=1 HTTP/1.0" 200 2 "-" "m""#, b"/plain?x=1", true),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /q\"x\\y HTTP/1.1" 200 2"#, br#"/q"x\y"#, false),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /after-escaped HTTP/1.1" 200 2"#, b"/after-escaped", true),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "-" 408 0"#, b"", false),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /\x41\x42 HTTP/1.1" 200 2"#, b"/AB", false),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /b\x20c HTTP/1.1" 200 2"#, b"/b c", false),
            (br#"1.2.3.4 - - [x] "GET http://a.example/abs HTTP/1.1" 200 2"#, b"http://a.example/abs", true),
            (br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "-" 408 0"#, b"", false),
            (br#""1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /wrapped HTTP/1.1" 200 2""#, b"/wrapped", true),
        ];
        let mut reader = ClfExtractor::new(false);
        let mut ex = Extracted::default();
        for (line, want, lent) in lines {
            let shown = String::from_utf8_lossy(line);
            let result = reader.extract(line, Field::Request, &mut ex);
            let skip = Line::Skip(Skip::NoRequest);
            assert_eq!(result == skip, want.is_empty(), "{shown}: {result:?}");
            assert_eq!(ex.has_target, !want.is_empty(), "{shown}");
            let target = ex.target(line);
            assert_eq!(target, want, "{shown}");
            // Where it lies: in the line when nothing was unescaped.
            let in_line = line.as_ptr_range().contains(&target.as_ptr());
            assert_eq!(in_line, lent, "{shown}");
        }
    }

    #[test]
    fn combined_record() {
        let line = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a%20b?x=1 HTTP/1.0" 200 2326 "http://ref.example/p" "Mozilla/4.08""#;
        let (r, ex) = run(false, Field::Both, line);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target(line), b"/a%20b?x=1");
        assert_eq!(ex.referer, b"http://ref.example/p");
        assert!(ex.host.is_empty());
    }

    #[test]
    fn common_record_has_no_referer() {
        let line = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326"#;
        assert_eq!(
            run(false, Field::Referer, line).0,
            Line::Skip(Skip::EmptyField)
        );
        assert_eq!(run(false, Field::Request, line).1.target(line), b"/a");
    }

    #[test]
    fn escapes_and_raw_quotes() {
        let line = br#"h - - [t] "GET /a\"b\\c\x41 HTTP/1.1" 200 1 "-" "ua""#;
        let (r, ex) = run(false, Field::Both, line);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target(line), br#"/a"b\cA"#);
        assert!(!ex.has_referer);
        // A raw quote inside the target is not the closing one.
        let line = br#"h - - [t] "GET /a"b HTTP/1.1" 200 1"#;
        assert_eq!(run(false, Field::Request, line).1.target(line), br#"/a"b"#);
    }

    /// Where `hosted_request_start` takes a `vhost` line, `read` gives a
    /// record with the host and port that `read_host` reads from the field
    /// it found, not `CONNECT`, whose target is lent at the start it found
    /// and is the bytes up to the next space when `request_closes` holds
    /// there: on every line made of the parts below.
    #[test]
    fn hosted_request_start_agrees_with_read() {
        let fields: &[&[u8]] = &[
            b"h.example:443",
            b"h.example",
            b"H.Example:8080",
            b"[::1]:80",
            b"h:99999",
            b"-",
            b"h,",
            b"",
            b"\"h.example",
        ];
        let middles: &[&[u8]] = &[
            b" 1.2.3.4 - - ",
            b" 1.2.3.4 - bob ",
            b"  1.2.3.4 - - ",
            b" 1.2.3.4,  - - ",
            b" a, b - - ",
            b" - - ",
            b" -  - - ",
            b" x - - - ",
            b" 1.2.3.4 - -",
        ];
        let times: &[&[u8]] = &[b"[10/Oct/2000:13:55:36 -0700]", b"[t]", b""];
        let requests: &[&[u8]] = &[
            b" \"GET /a?b HTTP/1.1\" 200 1",
            b" \"POST /a HTTP/1.0\" 200 1 \"-\" \"ua\"",
            b" \"CONNECT /a HTTP/1.1\" 200 1",
            b" \"get /a HTTP/1.1\" 200 1",
            b" \"GET /a\\\"b HTTP/1.1\" 200 1",
            b" \"GET /a b HTTP/1.1\" 200 1",
            b" \"GET http://x/ HTTP/1.1\" 200 1",
            b" \"GET / HTTP/1.1",
            b" \"-\" 408 0",
            b"\"GET /a HTTP/1.1\"",
        ];
        let (vhost, mut taken) = (ClfExtractor::new(true), 0);
        for field in fields {
            for middle in middles {
                for time in times {
                    for request in requests {
                        let line = [*field, middle, time, request].concat();
                        let Some((end, at)) = vhost.hosted_request_start(&line) else {
                            continue;
                        };
                        // The pipeline takes the line only where the
                        // target ends at a space that `request_closes`
                        // follows.
                        let space = at + memchr(b' ', &line[at..]).unwrap_or(line.len() - at);
                        if !request_closes(&line[space..]) {
                            continue;
                        }
                        let (read, ex) = run(true, Field::Request, &line);
                        let shown = bstr::BStr::new(&line);
                        let mut host = Extracted::default();
                        LogReader::read_host(&vhost, &line[..end], &mut host);
                        // No host: the pipeline reads the line.
                        if host.host.is_empty() {
                            assert!(read != Line::Record || ex.host.is_empty(), "{shown}");
                            continue;
                        }
                        taken += 1;
                        assert_eq!(read, Line::Record, "{shown}");
                        let fields = (&ex.host, ex.port, ex.scheme);
                        assert_eq!(fields, (&host.host, host.port, host.scheme), "{shown}");
                        assert!(!ex.connect, "{shown}");
                        // Unescaped, the target is a copy; the in-line scan
                        // takes no target with a `\\`.
                        match ex.target_span() {
                            Some(span) => assert_eq!(span, (at, space), "{shown}"),
                            None => assert!(line[at..space].contains(&b'\\'), "{shown}"),
                        }
                    }
                }
            }
        }
        assert!(taken >= 20, "only {taken} lines taken");
    }

    #[test]
    fn vhost_prefix() {
        let line = br#"www.example.com:443 1.2.3.4 - - [t] "GET / HTTP/1.1" 200 1 "-" "ua""#;
        let (r, ex) = run(true, Field::Request, line);
        assert_eq!(r, Line::Record);
        assert_eq!(
            (ex.host.as_slice(), ex.port),
            (&b"www.example.com"[..], Some(443))
        );
        let line = br#"lessons.example.com 1.2.3.4 - - [t] "GET /x HTTP/1.1" 206 1"#;
        let (_, ex) = run(true, Field::Request, line);
        assert_eq!(
            (ex.host.as_slice(), ex.port),
            (&b"lessons.example.com"[..], None)
        );
        let line = br#"[::1]:8080 1.2.3.4 - - [t] "GET /x HTTP/1.1" 206 1"#;
        let (_, ex) = run(true, Field::Request, line);
        assert_eq!((ex.host.as_slice(), ex.port), (&b"[::1]"[..], Some(8080)));
        let line = br#"h:99999 1.2.3.4 - - [t] "GET /x HTTP/1.1" 206 1"#;
        assert_eq!(
            run(true, Field::Request, line).0,
            Line::Error(LineError::BadHost, 0)
        );
        // Behind a proxy: the client field is a list, after the host or
        // instead of it.
        let line = br#"h.example:443 203.0.113.7, 10.0.0.1 - - [t] "GET /x HTTP/1.1" 200 1"#;
        let (r, ex) = run(true, Field::Request, line);
        assert_eq!(r, Line::Record);
        assert_eq!(
            (ex.host.as_slice(), ex.port),
            (&b"h.example"[..], Some(443))
        );
        let line = br#"203.0.113.7, 10.0.0.1 - - [t] "GET /x HTTP/1.1" 200 1"#;
        assert_eq!(
            run(true, Field::Request, line).0,
            Line::Error(LineError::BadHost, 0)
        );
        // `"-"` with no `[time]` before it is no record without a request,
        // but no record at all.
        let line = br#"some text "-" and more"#;
        assert_eq!(
            run(false, Field::Request, line).0,
            Line::Error(LineError::Malformed, 10)
        );
        let line = br#"1.2.3.4 - - [t] "-" 408 0"#;
        assert_eq!(
            run(false, Field::Request, line).0,
            Line::Skip(Skip::NoRequest)
        );
        // A line without a virtual host: its client is no host.
        let line = br#"1.2.3.4 - - [t] "GET /x HTTP/1.1" 200 1"#;
        assert_eq!(
            run(true, Field::Request, line).0,
            Line::Error(LineError::Malformed, 0)
        );
    }

    #[test]
    fn odd_shapes() {
        // Wrapped in quotes.
        let line = br#""1.2.3.4 - - [t] "GET /w HTTP/1.1" 200 1 "-" "ua""#;
        assert_eq!(run(false, Field::Request, line).1.target(line), b"/w");
        // Inside syslog, no [time].
        let line = br#"Mar 24 14:02:50 web1 tomcat.log: 127.0.0.1 - - "GET /s HTTP/1.1" 200 5 4.3"#;
        assert_eq!(run(false, Field::Request, line).1.target(line), b"/s");
        // No request.
        let line = br#"1.2.3.4 - - [t] "-" 408 0 "-" "-""#;
        assert_eq!(
            run(false, Field::Request, line).0,
            Line::Skip(Skip::NoRequest)
        );
        // TLS garbage.
        let line = br#"1.2.3.4 - - [t] "\x16\x03\x01\x00" 400 0 "-" "-""#;
        assert!(matches!(
            run(false, Field::Request, line).0,
            Line::Error(LineError::BadRequestLine, _)
        ));
        // No quote at all.
        assert!(matches!(
            run(false, Field::Request, b"garbage").0,
            Line::Error(LineError::Malformed, _)
        ));
        assert_eq!(
            run(false, Field::Request, b"  ").0,
            Line::Skip(Skip::EmptyLine)
        );
        // Cut inside the request.
        let line = br#"1.2.3.4 - - [t] "GET /cut"#;
        assert!(matches!(
            run(false, Field::Request, line).0,
            Line::Error(LineError::Unterminated, _)
        ));
        // Cut inside the user agent: the request is whole.
        let line = br#"1.2.3.4 - - [t] "GET /ok HTTP/1.1" 200 1 "-" "Mozil"#;
        assert_eq!(run(false, Field::Request, line).0, Line::Record);
    }
}
