//! The WHATWG basic URL parser (<https://url.spec.whatwg.org/#concept-basic-url-parser>)
//! over bytes, writing the serialization directly into the output buffer.
//!
//! The Standard's parser builds a URL record (a list of path segments, a
//! query string, ...) and a separate serializer writes it out. Here the two
//! are fused: every state appends its component's serialized bytes to `out`
//! as soon as it is known, and [`Parts`] records where it went. Path segments
//! are written as `/segment`, so "shorten the path" is a truncation at the
//! last `/`, and copying components from the base URL is copying a prefix of
//! the base's href.
//!
//! State functions are named after the Standard's states and take the index
//! of their first input byte; each hands over to the next state by calling
//! it. The position never moves backwards except where the Standard says so
//! ("decrease pointer by 1" becomes calling the next state at the same index).
//!
//! An input that is already a canonical `http(s)` URL takes
//! [`fast::canonical_http`](super::fast) instead: one table-driven pass and a
//! single copy.

use memchr::{memchr, memchr2, memrchr};

use super::class::{encode_into, push_escape};
#[cfg(doc)]
use super::fast;
use super::host;
use super::parts::{Parts, ABSENT};
use super::simd::{
    find, find_path_run, AuthorityEnd, C0ControlSet, FragmentSet, PathSet, QuerySet, SegmentStop,
    SpecialAuthorityEnd, SpecialPathSet, SpecialQuerySet, SpecialSegmentStop, TabNewline,
    UserinfoSet,
};
use crate::ascii;
use crate::reject::{Reason, Reject};

/// How the input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A URL or relative reference, exactly as the URL Standard parses it.
    Url,
    /// An HTTP request target: as `Url`, but without a base an origin-form
    /// target (starting with `/`) is written as path and query only.
    Target,
}

/// Buffers reused from one URL to the next, so that the steady state makes
/// no heap allocation.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The input with tabs and newlines removed, when it had any.
    pub cleaned: Vec<u8>,
    /// Percent-decoded host bytes.
    pub host: Vec<u8>,
    /// Output buffer for `Canonicalizer::canonicalize_in`.
    pub arena_out: Vec<u8>,
    /// The part of a URL that `rfc3986` normalization rewrites.
    pub rfc3986_tail: Vec<u8>,
}

/// A failure inside the parser: the reason and the offset in the cleaned input.
type Fail = (Reason, usize);

/// Parses `input` (a relative reference is resolved against `base`, given as
/// its href and parts) and appends the serialization to `out`. Returns the
/// parts, with offsets relative to where this URL starts in `out`. On error
/// `out` may hold partial output; the caller truncates it. (Callers try
/// [`fast::canonical_http`] first.)
pub fn parse(
    input: &[u8],
    base: Option<(&[u8], &Parts)>,
    mode: Mode,
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) -> Result<Parts, Reject> {
    let start = out.len();
    // "Remove any leading and trailing C0 control or space from input."
    let lead = input.iter().position(|&b| b > b' ').unwrap_or(input.len());
    let trail = input
        .iter()
        .rposition(|&b| b > b' ')
        .map_or(lead, |p| p + 1);
    let trimmed = &input[lead..trail];
    // "Remove all ASCII tab or newline from input." Rare: the copy goes to a
    // reused buffer.
    let has_tab_nl = find::<TabNewline>(trimmed, 0) < trimmed.len();
    let mut cleaned = std::mem::take(&mut scratch.cleaned);
    let inp: &[u8] = if has_tab_nl {
        cleaned.clear();
        cleaned.extend(
            trimmed
                .iter()
                .copied()
                .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r')),
        );
        &cleaned
    } else {
        trimmed
    };
    let mut parser = Parser {
        inp,
        out,
        start,
        base,
        host_buf: &mut scratch.host,
        parts: Parts::default(),
        special: false,
        file: false,
        default_port: ABSENT,
    };
    let result = parser.run(mode).map(|()| parser.parts);
    scratch.cleaned = cleaned;
    result.map_err(|(reason, off)| Reject {
        reason,
        offset: original_offset(trimmed, lead, has_tab_nl, off),
    })
}

/// Maps an offset in the trimmed, tab-and-newline-free input back to the
/// caller's input.
#[cold]
fn original_offset(trimmed: &[u8], lead: usize, has_tab_nl: bool, off: usize) -> usize {
    if !has_tab_nl {
        return lead + off;
    }
    let mut seen = 0;
    for (i, &b) in trimmed.iter().enumerate() {
        if matches!(b, b'\t' | b'\n' | b'\r') {
            continue;
        }
        if seen == off {
            return lead + i;
        }
        seen += 1;
    }
    lead + trimmed.len()
}

/// Length of the scheme if `inp` starts with one followed by `:`.
///
/// "scheme start state: If c is an ASCII alpha ... Otherwise ... no scheme
/// state"; "scheme state: If c is an ASCII alphanumeric, U+002B (+), U+002D
/// (-), or U+002E (.), append c ... Otherwise, if c is U+003A (:) ...".
#[inline]
fn scheme_len(inp: &[u8]) -> Option<usize> {
    if !inp.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = inp
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (inp[n] == b':').then_some(n)
}

/// (special, file, default port) for a lower-case scheme.
fn scheme_kind(scheme: &[u8]) -> (bool, bool, u32) {
    match scheme {
        b"http" | b"ws" => (true, false, 80),
        b"https" | b"wss" => (true, false, 443),
        b"ftp" => (true, false, 21),
        b"file" => (true, true, ABSENT),
        _ => (false, false, ABSENT),
    }
}

/// "A single-dot URL path segment is a URL path segment that is "." or an
/// ASCII case-insensitive match for "%2e"."
#[inline]
pub(crate) fn is_single_dot(seg: &[u8]) -> bool {
    seg == b"." || seg.eq_ignore_ascii_case(b"%2e")
}

/// "A double-dot URL path segment is a URL path segment that is ".." or an
/// ASCII case-insensitive match for ".%2e", "%2e.", or "%2e%2e"."
#[inline]
pub(crate) fn is_double_dot(seg: &[u8]) -> bool {
    match seg.len() {
        2 => seg == b"..",
        4 => seg.eq_ignore_ascii_case(b".%2e") || seg.eq_ignore_ascii_case(b"%2e."),
        6 => seg.eq_ignore_ascii_case(b"%2e%2e"),
        _ => false,
    }
}

/// "A Windows drive letter is two code points, of which the first is an ASCII
/// alpha and the second is either U+003A (:) or U+007C (|)."
#[inline]
fn is_windows_drive_letter(s: &[u8]) -> bool {
    s.len() == 2 && s[0].is_ascii_alphabetic() && matches!(s[1], b':' | b'|')
}

/// "A string starts with a Windows drive letter if all of the following are
/// true: its length is greater than or equal to 2; its first two code points
/// are a Windows drive letter; its length is 2 or its third code point is
/// U+002F (/), U+005C (\), U+003F (?), or U+0023 (#)."
fn starts_with_windows_drive_letter(s: &[u8]) -> bool {
    s.len() >= 2
        && is_windows_drive_letter(&s[..2])
        && (s.len() == 2 || matches!(s[2], b'/' | b'\\' | b'?' | b'#'))
}

/// A serialized path whose only segment is a normalized Windows drive letter
/// (`/C:`).
fn is_drive_letter_path(path: &[u8]) -> bool {
    path.len() == 3 && path[0] == b'/' && path[1].is_ascii_alphabetic() && path[2] == b':'
}

/// Skips "/" and "\" (special authority ignore slashes state).
fn skip_slashes(inp: &[u8], mut i: usize) -> usize {
    while matches!(inp.get(i), Some(b'/' | b'\\')) {
        i += 1;
    }
    i
}

struct Parser<'a, 'o> {
    /// Trimmed input without tabs and newlines.
    inp: &'a [u8],
    out: &'o mut Vec<u8>,
    /// Where this URL starts in `out`.
    start: usize,
    base: Option<(&'a [u8], &'a Parts)>,
    host_buf: &'o mut Vec<u8>,
    parts: Parts,
    special: bool,
    file: bool,
    default_port: u32,
}

impl Parser<'_, '_> {
    /// Current output position, relative to the start of this URL.
    #[inline]
    fn pos(&self) -> u32 {
        (self.out.len() - self.start) as u32
    }

    fn run(&mut self, mode: Mode) -> Result<(), Fail> {
        let inp = self.inp;
        if mode == Mode::Target && self.base.is_none() && inp.first() == Some(&b'/') {
            // Path-only: an origin-form request target with no known host,
            // read with http's rules from the path start state.
            self.special = true;
            self.parts.path_start = 0;
            self.path_state(1)?;
        } else {
            match scheme_len(inp) {
                Some(n) => self.scheme_state(n)?,
                None => self.no_scheme_state()?,
            }
        }
        self.finish();
        Ok(())
    }

    /// Serializer step: "If url's host is null, url does not have an opaque
    /// path, url's path's size is greater than 1, and url's path[0] is the
    /// empty string, then append U+002F (/) followed by U+002E (.) to output."
    fn finish(&mut self) {
        let p = &mut self.parts;
        if p.scheme_end != ABSENT && p.host_start == ABSENT && !p.opaque_path {
            let ps = self.start + p.path_start as usize;
            if self.out[ps..].starts_with(b"//") {
                self.out.splice(ps..ps, *b"/.");
                p.path_start += 2;
                if p.query_start != ABSENT {
                    p.query_start += 2;
                }
                if p.fragment_start != ABSENT {
                    p.fragment_start += 2;
                }
            }
        }
        p.special = self.special;
        p.len = (self.out.len() - self.start) as u32;
    }

    /// Copies the base URL's href up to `end` (a component boundary) and takes
    /// its parts; a query or fragment at or past `end` is dropped.
    fn copy_base(&mut self, end: u32) {
        let (href, bp) = self.base.expect("copy_base without base");
        self.out.truncate(self.start);
        let mut p = *bp;
        let quirk = bp.scheme_end + 1..bp.path_start;
        let end = if bp.host_start == ABSENT && !bp.opaque_path && !quirk.is_empty() {
            // The base's href has the serializer's "/." before a path that
            // starts with "//": it is not part of the path, so leave it out
            // (finish() adds it again if the new path still needs it).
            self.out.extend_from_slice(&href[..quirk.start as usize]);
            self.out
                .extend_from_slice(&href[quirk.end as usize..end.max(quirk.end) as usize]);
            let shift = quirk.end - quirk.start;
            for off in [&mut p.path_start, &mut p.query_start, &mut p.fragment_start] {
                if *off != ABSENT {
                    *off -= shift;
                }
            }
            end.max(quirk.end) - shift
        } else {
            self.out.extend_from_slice(&href[..end as usize]);
            end
        };
        for off in [&mut p.query_start, &mut p.fragment_start] {
            if *off != ABSENT && *off >= end {
                *off = ABSENT;
            }
        }
        p.len = end;
        self.parts = p;
    }

    /// Copies only the base's scheme and `:`.
    fn copy_base_scheme(&mut self) {
        let (href, bp) = self.base.expect("copy_base_scheme without base");
        self.out.truncate(self.start);
        self.out.extend_from_slice(&href[..=bp.scheme_end as usize]);
        self.parts = Parts {
            scheme_end: bp.scheme_end,
            ..Parts::default()
        };
    }

    /// The base's href up to its fragment (everything but the fragment).
    fn base_without_fragment(bp: &Parts) -> u32 {
        if bp.fragment_start != ABSENT {
            bp.fragment_start
        } else {
            bp.len
        }
    }

    fn base_is_file(&self) -> bool {
        self.base
            .is_some_and(|(href, bp)| bp.scheme(href) == Some(&b"file"[..]))
    }

    /// scheme state, once the scheme (`inp[..n]`) and its `:` are found.
    fn scheme_state(&mut self, n: usize) -> Result<(), Fail> {
        let inp = self.inp;
        self.out
            .extend(inp[..n].iter().map(|b| b.to_ascii_lowercase()));
        self.out.push(b':');
        self.parts.scheme_end = n as u32;
        let scheme = &self.out[self.start..self.start + n];
        (self.special, self.file, self.default_port) = scheme_kind(scheme);
        let i = n + 1;
        if self.file {
            return self.file_state(i);
        }
        if self.special {
            // special relative or authority state
            let same_as_base = self
                .base
                .is_some_and(|(href, bp)| bp.scheme(href) == Some(scheme));
            if same_as_base && !inp[i..].starts_with(b"//") {
                return self.relative_state(i);
            }
            // special authority slashes / ignore slashes states
            return self.authority_state(skip_slashes(inp, i));
        }
        if inp.get(i) == Some(&b'/') {
            // path or authority state
            if inp.get(i + 1) == Some(&b'/') {
                return self.authority_state(i + 2);
            }
            self.parts.path_start = self.pos();
            return self.path_state(i + 1);
        }
        self.opaque_path_state(i)
    }

    fn no_scheme_state(&mut self) -> Result<(), Fail> {
        let Some((href, bp)) = self.base else {
            return Err((Reason::MissingScheme, 0));
        };
        let first = self.inp.first().copied();
        if bp.opaque_path {
            if first != Some(b'#') {
                return Err((Reason::OpaqueBase, 0));
            }
            self.copy_base(Self::base_without_fragment(bp));
            return self.fragment_state(1);
        }
        let scheme = &href[..bp.scheme_end as usize];
        (self.special, self.file, self.default_port) = scheme_kind(scheme);
        if self.file {
            self.copy_base_scheme();
            return self.file_state(0);
        }
        self.relative_state(0)
    }

    fn relative_state(&mut self, i: usize) -> Result<(), Fail> {
        let (_, bp) = self.base.expect("relative state without base");
        let bp = *bp;
        let inp = self.inp;
        if let Some(done) = self.take_from_base(i, &bp) {
            return done;
        }
        match inp[i] {
            b'/' | b'\\' if inp[i] == b'/' || self.special => {
                // relative slash state
                let next = inp.get(i + 1).copied();
                if self.special && matches!(next, Some(b'/' | b'\\')) {
                    self.copy_base_scheme();
                    self.authority_state(skip_slashes(inp, i + 1))
                } else if next == Some(b'/') {
                    self.copy_base_scheme();
                    self.authority_state(i + 2)
                } else {
                    self.copy_base(bp.path_start);
                    self.path_state(i + 1)
                }
            }
            _ => {
                self.copy_base(bp.path_end());
                self.shorten_path();
                self.path_state(i)
            }
        }
    }

    /// What the relative and file states share when the input ends or goes
    /// straight to a query or fragment: the base's components are taken as
    /// they are (all but its fragment; up to its path before a new query).
    /// `None` for any other byte.
    fn take_from_base(&mut self, i: usize, bp: &Parts) -> Option<Result<(), Fail>> {
        match self.inp.get(i) {
            None => {
                self.copy_base(Self::base_without_fragment(bp));
                Some(Ok(()))
            }
            Some(b'?') => {
                self.copy_base(bp.path_end());
                Some(self.query_state(i + 1))
            }
            Some(b'#') => {
                self.copy_base(Self::base_without_fragment(bp));
                Some(self.fragment_state(i + 1))
            }
            Some(_) => None,
        }
    }

    /// End of the authority starting at `i`: the first `/`, `?`, `#` (or `\`
    /// in a special URL).
    fn authority_end(&self, i: usize) -> usize {
        if self.special {
            find::<SpecialAuthorityEnd>(self.inp, i)
        } else {
            find::<AuthorityEnd>(self.inp, i)
        }
    }

    /// authority state: userinfo (up to the last `@`), then host and port.
    fn authority_state(&mut self, i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        let end = self.authority_end(i);
        let authority = &inp[i..end];
        self.out.extend_from_slice(b"//");
        let at = self.pos();
        self.parts.username_start = at;
        let host_from = match memrchr(b'@', authority) {
            Some(k) => {
                let userinfo = &authority[..k];
                let (user, pass) = match memchr(b':', userinfo) {
                    Some(c) => (&userinfo[..c], &userinfo[c + 1..]),
                    None => (userinfo, &b""[..]),
                };
                encode_into::<UserinfoSet>(self.out, user);
                self.parts.username_end = self.pos();
                if !pass.is_empty() {
                    self.out.push(b':');
                    self.parts.password_start = self.pos();
                    encode_into::<UserinfoSet>(self.out, pass);
                } else {
                    self.parts.password_start = self.pos();
                }
                self.parts.password_end = self.pos();
                if self.pos() > at {
                    self.out.push(b'@');
                }
                if i + k + 1 == end {
                    return Err((Reason::HostMissing, end));
                }
                i + k + 1
            }
            None => {
                self.parts.username_end = at;
                self.parts.password_start = at;
                self.parts.password_end = at;
                i
            }
        };
        self.host_state(host_from, end)?;
        self.path_start_state(end)
    }

    /// host state: `inp[h..end]` is host and optional `:port`.
    fn host_state(&mut self, h: usize, end: usize) -> Result<(), Fail> {
        let hp = &self.inp[h..end];
        let mut colon = None;
        let mut in_brackets = false;
        for (k, &b) in hp.iter().enumerate() {
            match b {
                b'[' => in_brackets = true,
                b']' => in_brackets = false,
                b':' if !in_brackets => {
                    colon = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let host = &hp[..colon.unwrap_or(hp.len())];
        if host.is_empty() && (colon.is_some() || self.special) {
            return Err((Reason::HostMissing, h));
        }
        self.parts.host_start = self.pos();
        if !host.is_empty() {
            host::parse_host(host, self.special, self.out, self.host_buf)
                .map_err(|(r, o)| (r, h + o))?;
        }
        self.parts.host_end = self.pos();
        if let Some(c) = colon {
            self.port_state(h + c + 1, end)?;
        }
        Ok(())
    }

    /// port state over `inp[from..end]`.
    fn port_state(&mut self, from: usize, end: usize) -> Result<(), Fail> {
        let digits = &self.inp[from..end];
        if let Some(k) = digits.iter().position(|b| !b.is_ascii_digit()) {
            return Err((Reason::InvalidPort, from + k));
        }
        if digits.is_empty() {
            return Ok(());
        }
        let Some(port) = ascii::parse_u16(digits) else {
            return Err((Reason::PortOutOfRange, from));
        };
        let port = u32::from(port);
        if port != self.default_port {
            self.parts.port = port;
            self.out.push(b':');
            ascii::push_decimal(self.out, port);
        }
        Ok(())
    }

    /// path start state.
    fn path_start_state(&mut self, i: usize) -> Result<(), Fail> {
        let c = self.inp.get(i).copied();
        self.parts.path_start = self.pos();
        if self.special {
            let j = if matches!(c, Some(b'/' | b'\\')) {
                i + 1
            } else {
                i
            };
            return self.path_state(j);
        }
        match c {
            None => Ok(()),
            Some(b'?') => self.query_state(i + 1),
            Some(b'#') => self.fragment_state(i + 1),
            Some(b'/') => self.path_state(i + 1),
            Some(_) => self.path_state(i),
        }
    }

    /// "shorten a URL's path": drop the last segment, unless the path is a
    /// lone normalized Windows drive letter in a `file:` URL.
    fn shorten_path(&mut self) {
        let ps = self.start + self.parts.path_start as usize;
        let path = &self.out[ps..];
        if self.file && is_drive_letter_path(path) {
            return;
        }
        if let Some(k) = memrchr(b'/', path) {
            self.out.truncate(ps + k);
        }
    }

    /// path state: a segment starts at `i`; each is written as `/segment`.
    ///
    /// Runs of whole segments that need nothing (no byte to escape, no `.` or
    /// `%` at a segment start) are found in one scan and copied in one go.
    /// The segment where that scan stopped is written by [`Self::segment`].
    fn path_state(&mut self, mut i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        loop {
            // The first segment of a file: path may be a drive letter.
            let path_empty = self.out.len() == self.start + self.parts.path_start as usize;
            if !(self.file && path_empty) {
                let j = if self.special {
                    find_path_run::<SpecialPathSet>(inp, i, i)
                } else {
                    find_path_run::<PathSet>(inp, i, i)
                };
                let c = inp.get(j).copied();
                if matches!(c, None | Some(b'?' | b'#')) {
                    self.out.push(b'/');
                    self.out.extend_from_slice(&inp[i..j]);
                    return self.after_path(j);
                }
                // Copy the whole segments before the one that stopped the scan.
                if let Some(k) = inp[i..j].iter().rposition(|&b| b == b'/') {
                    self.out.push(b'/');
                    self.out.extend_from_slice(&inp[i..i + k]);
                    i += k + 1;
                }
            }
            match self.segment(i) {
                Some(next) => i = next,
                None => return Ok(()),
            }
        }
    }

    /// After the last path segment, at `inp[j]` (a `?`, `#` or the end).
    fn after_path(&mut self, j: usize) -> Result<(), Fail> {
        match self.inp.get(j) {
            Some(b'?') => self.query_state(j + 1),
            Some(b'#') => self.fragment_state(j + 1),
            _ => Ok(()),
        }
    }

    /// Writes the path segment starting at `i`, escaping what needs it and
    /// resolving `.` and `..`. Returns the start of the next segment, or `None`
    /// once the path (and what follows it) is done.
    fn segment(&mut self, i: usize) -> Option<usize> {
        let inp = self.inp;
        let seg_out = self.out.len();
        let path_empty = seg_out == self.start + self.parts.path_start as usize;
        self.out.push(b'/');
        let mut run = i;
        let end = loop {
            let j = if self.special {
                find::<SpecialSegmentStop>(inp, run)
            } else {
                find::<SegmentStop>(inp, run)
            };
            self.out.extend_from_slice(&inp[run..j]);
            // The scan stopped at a delimiter (`/ ? #`, and `\\` in a special
            // URL), or at a byte of the path percent-encode set.
            match inp.get(j) {
                None | Some(b'/' | b'?' | b'#') => break j,
                Some(b'\\') if self.special => break j,
                Some(&b) => {
                    push_escape(self.out, b);
                    run = j + 1;
                }
            }
        };
        let seg = &inp[i..end];
        let c = inp.get(end).copied();
        let slash = c == Some(b'/') || (self.special && c == Some(b'\\'));
        let maybe_dot = seg.len() <= 6 && matches!(seg.first(), Some(b'.' | b'%'));
        if maybe_dot && is_double_dot(seg) {
            self.out.truncate(seg_out);
            self.shorten_path();
            if !slash {
                self.out.push(b'/');
            }
        } else if maybe_dot && is_single_dot(seg) {
            self.out.truncate(seg_out);
            if !slash {
                self.out.push(b'/');
            }
        } else if self.file && path_empty && is_windows_drive_letter(seg) {
            // "replace the second code point in buffer with U+003A (:)"
            self.out[seg_out + 2] = b':';
        }
        if slash {
            return Some(end + 1);
        }
        // The query and fragment states cannot fail.
        let _ = self.after_path(end);
        None
    }

    /// opaque path state (`mailto:x`, `data:...`).
    fn opaque_path_state(&mut self, i: usize) -> Result<(), Fail> {
        self.parts.opaque_path = true;
        self.parts.path_start = self.pos();
        let rest = &self.inp[i..];
        let end = memchr2(b'?', b'#', rest).unwrap_or(rest.len());
        let path = &rest[..end];
        // "If c is U+0020 SPACE: if remaining starts with U+003F (?) or U+0023
        // (#), append "%20"": only a space right before `?` or `#` (trailing
        // spaces at the very end were trimmed).
        if end < rest.len() && path.last() == Some(&b' ') {
            encode_into::<C0ControlSet>(self.out, &path[..path.len() - 1]);
            self.out.extend_from_slice(b"%20");
        } else {
            encode_into::<C0ControlSet>(self.out, path);
        }
        match rest.get(end) {
            Some(b'?') => self.query_state(i + end + 1),
            Some(_) => self.fragment_state(i + end + 1),
            None => Ok(()),
        }
    }

    /// query state: up to `#`, with the (special-)query percent-encode set
    /// (which holds `#`, so one scan finds both the bytes to escape and the end).
    fn query_state(&mut self, i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        self.parts.query_start = self.pos();
        self.out.push(b'?');
        let mut run = i;
        loop {
            let j = if self.special {
                find::<SpecialQuerySet>(inp, run)
            } else {
                find::<QuerySet>(inp, run)
            };
            self.out.extend_from_slice(&inp[run..j]);
            match inp.get(j) {
                None => return Ok(()),
                Some(b'#') => return self.fragment_state(j + 1),
                Some(&b) => {
                    push_escape(self.out, b);
                    run = j + 1;
                }
            }
        }
    }

    /// fragment state: the rest of the input.
    fn fragment_state(&mut self, i: usize) -> Result<(), Fail> {
        self.parts.fragment_start = self.pos();
        self.out.push(b'#');
        encode_into::<FragmentSet>(self.out, &self.inp[i..]);
        Ok(())
    }

    /// Writes `//` and an empty host (a `file:` URL's host is never null).
    fn empty_authority(&mut self) {
        self.out.extend_from_slice(b"//");
        let at = self.pos();
        let p = &mut self.parts;
        p.username_start = at;
        p.username_end = at;
        p.password_start = at;
        p.password_end = at;
        p.host_start = at;
        p.host_end = at;
    }

    /// file state; `file:` is already written.
    fn file_state(&mut self, i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        let c = inp.get(i).copied();
        if matches!(c, Some(b'/' | b'\\')) {
            return self.file_slash_state(i + 1);
        }
        if self.base_is_file() {
            let (_, bp) = self.base.expect("checked");
            let bp = *bp;
            if let Some(done) = self.take_from_base(i, &bp) {
                return done;
            }
            self.copy_base(bp.path_end());
            if starts_with_windows_drive_letter(&inp[i..]) {
                self.out.truncate(self.start + bp.path_start as usize);
            } else {
                self.shorten_path();
            }
            return self.path_state(i);
        }
        self.empty_authority();
        self.parts.path_start = self.pos();
        self.path_state(i)
    }

    fn file_slash_state(&mut self, i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        if matches!(inp.get(i), Some(b'/' | b'\\')) {
            return self.file_host_state(i + 1);
        }
        if self.base_is_file() {
            let (href, bp) = self.base.expect("checked");
            self.copy_base(bp.path_start);
            if !starts_with_windows_drive_letter(&inp[i..]) {
                // "base's path[0] is a normalized Windows drive letter"
                let bpath = bp.path(href);
                if bpath.len() >= 3
                    && is_drive_letter_path(&bpath[..3])
                    && (bpath.len() == 3 || bpath[3] == b'/')
                {
                    self.out.extend_from_slice(&bpath[..3]);
                }
            }
        } else {
            self.empty_authority();
            self.parts.path_start = self.pos();
        }
        self.path_state(i)
    }

    fn file_host_state(&mut self, i: usize) -> Result<(), Fail> {
        let inp = self.inp;
        let end = find::<SpecialAuthorityEnd>(inp, i) - i;
        let buffer = &inp[i..i + end];
        self.empty_authority();
        if is_windows_drive_letter(buffer) {
            // The drive letter is not a host: it becomes the first segment.
            self.parts.path_start = self.pos();
            return self.path_state(i);
        }
        if !buffer.is_empty() {
            host::parse_host(buffer, true, self.out, self.host_buf).map_err(|(r, o)| (r, i + o))?;
            let hs = self.start + self.parts.host_start as usize;
            if &self.out[hs..] == b"localhost" {
                self.out.truncate(hs);
            }
            self.parts.host_end = self.pos();
        }
        self.path_start_state(i + end)
    }
}
