//! The fast path: recognize an input that is already a canonical `http(s)`
//! (or `file`) URL in one pass, and copy it whole.
//!
//! Most URLs in real logs and crawls are already canonical. This pass accepts
//! only inputs whose canonical form is the input itself: each component is
//! scanned sixteen bytes a step ([`find_with`], with SSSE3 where the CPU has
//! it; thirty-two with AVX2) for the bytes that could need a change (upper
//! case in the host, a dot segment, a byte to percent-encode, userinfo, an
//! IP address, an escape the `rfc3986` profile would rewrite or a byte it
//! would escape, ...), and at the first one it returns `None`; the general
//! parser then starts over. Returning `None` is always
//! safe, so the checks err on the side of caution. `tests/random.rs` checks
//! that both paths give the same bytes and parts on every input (a leading
//! space keeps an input off this path).

use super::class::is_unreserved;
use super::host::ends_in_a_number;
use super::parser::{is_double_dot, is_single_dot};
use super::parts::{Parts, ABSENT};
use super::simd::{
    dispatch, find_path_run_with, find_rules_path_run_with, find_with, push_short,
    CanonicalDomainStop, CanonicalFragmentStop, CanonicalQueryStop, Chunk, InLineFragmentStop,
    InLineQueryStop, Job, Rfc3986FragmentStop, Rfc3986PathRulesStop, Rfc3986PathStop,
    Rfc3986QueryStop, SpecialPathRulesStop, SpecialPathSet,
};
use crate::ascii::hex_value;

/// Checks the `%` at `i` and returns the index after it. With
/// `STRICT` (the `rfc3986` profile), an escape of an unreserved character
/// would be decoded and a `%` that starts no escape written `%25`, so
/// neither is canonical; an escape with lower-case hex is taken, and
/// `lower` set: the caller upper-cases it in the copy, the only change the
/// profile makes to it (`%3a` → `%3A`).
///
/// By tables: escapes come in runs of dozens on non-ASCII paths, where the
/// comparisons of `hex_value` and `is_unreserved` were about 33
/// instructions a line of a combined log (pipeline/combined 551.4 →
/// 518.0). With `pairs`, one table of the two bytes after the `%`
/// ([`ESCAPES`]), else one per byte ([`HEX_DIGIT`]) and one of the decoded
/// byte ([`UNRESERVED`]), about 10 instructions an escape more. `pairs` is
/// a constant where the scan is inlined (see [`path_query_fragment`]): the
/// one table changed how the rest of the rules' scan was compiled, for
/// about 5 instructions a URL more.
#[inline(always)]
fn escape<const STRICT: bool>(
    input: &[u8],
    i: usize,
    lower: &mut bool,
    pairs: bool,
) -> Option<usize> {
    if !STRICT {
        return Some(i + 1);
    }
    let &[h, l] = input.get(i + 1..i + 3)? else {
        return None;
    };
    if !pairs {
        let (h, l) = (HEX_DIGIT[h as usize], HEX_DIGIT[l as usize]);
        if (h | l) & NOT_HEX != 0 || UNRESERVED[((h & 0xF) << 4 | (l & 0xF)) as usize] {
            return None;
        }
        *lower |= (h | l) & LOWER_HEX != 0;
        return Some(i + 3);
    }
    let flags = ESCAPES[usize::from(h) | usize::from(l) << 8];
    if flags & NOT_HEX != 0 {
        return None;
    }
    *lower |= flags & LOWER_HEX != 0;
    Some(i + 3)
}

/// [`escape`]'s verdict on the two bytes after a `%`, at the index of the
/// two as a little-endian `u16` (the first byte low): [`NOT_HEX`] where
/// they are no escape or one of an unreserved byte, which `rfc3986`
/// decodes, else [`LOWER_HEX`] where either is a lower-case hex digit.
/// 64 KiB, of which an escape touches one row of 256 bytes per second
/// byte, and a run of escapes of UTF-8 text a few dozen cache lines.
static ESCAPES: [u8; 1 << 16] = {
    let mut t = [NOT_HEX; 1 << 16];
    let mut i = 0;
    while i < 1 << 16 {
        let (h, l) = (HEX_DIGIT[i & 0xFF], HEX_DIGIT[i >> 8]);
        if (h | l) & NOT_HEX == 0 && !UNRESERVED[((h & 0xF) << 4 | (l & 0xF)) as usize] {
            t[i] = (h | l) & LOWER_HEX;
        }
        i += 1;
    }
    t
};

/// [`HEX_DIGIT`]'s flag of a byte that is no hex digit (and [`ESCAPES`]'s
/// of two bytes that are no escape to keep).
const NOT_HEX: u8 = 0x80;
/// [`HEX_DIGIT`]'s flag of a lower-case hex digit (`a-f`) (and
/// [`ESCAPES`]'s of an escape with one).
const LOWER_HEX: u8 = 0x10;

/// Each byte's value as a hex digit ([`hex_value`]) in its low four bits,
/// with [`LOWER_HEX`] for `a-f`; [`NOT_HEX`] for any other byte.
static HEX_DIGIT: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut b = 0;
    while b < 256 {
        if let Some(value) = hex_value(b as u8) {
            let lower = if (b as u8).is_ascii_lowercase() {
                LOWER_HEX
            } else {
                0
            };
            t[b] = value | lower;
        }
        b += 1;
    }
    t
};

/// Whether each byte is unreserved (RFC 3986 §2.3), as [`is_unreserved`]
/// says: the bytes whose escapes `rfc3986` decodes.
static UNRESERVED: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = is_unreserved(b as u8);
        b += 1;
    }
    t
};

/// [`escape`] for the `%` at `i` and every `%` right after it: escapes
/// come in runs (`%D9%81%D8%B1`, a non-ASCII word), which are taken here
/// rather than by going back to the chunk search for each one (about a
/// third of the instructions on such paths).
#[inline(always)]
fn escapes<const STRICT: bool>(
    input: &[u8],
    mut i: usize,
    lower: &mut bool,
    pairs: bool,
) -> Option<usize> {
    i = escape::<STRICT>(input, i, lower, pairs)?;
    while STRICT && input.get(i) == Some(&b'%') {
        i = escape::<STRICT>(input, i, lower, pairs)?;
    }
    Some(i)
}

/// If `input` is a canonical `http`, `https` or `file` URL (in the profile
/// given by `strict_escapes`), appends it to `out` and returns its parts,
/// and whether the output is the input (with `strict_escapes`, an input
/// whose only change is the case of escapes' hex digits is taken too). A
/// URL without a path (`http://example.com`) is left to
/// [`canonical_bare_http`].
///
/// Always inlined: the caller's only call is then the engine's function
/// ([`dispatch`]), which scans, copies and returns the parts itself. This
/// function was a call of its own between them, which took the offsets back
/// and copied: that layer, its register saves and the offsets' trip through
/// memory cost about 25 instructions per URL on `kasztp.txt` (whatwg 291
/// before, 267 after, with the copy made first, see `Fast::run`, and
/// `Canonicalizer::canonicalize_into` inlined; `benches/guard.sh`).
#[inline(always)]
pub fn canonical_http(
    input: &[u8],
    strict_escapes: bool,
    out: &mut Vec<u8>,
) -> Option<(Parts, bool)> {
    dispatch(Fast {
        input,
        strict_escapes,
        target: false,
        out,
    })
}

/// If `input` is an origin-form request target (`/path?query`) that
/// path-only canonicalization leaves as it is, appends it to `out` and
/// returns its parts (path at 0, no scheme or host) and whether the output
/// is the input, as [`canonical_http`] does.
#[inline]
pub fn canonical_target(
    input: &[u8],
    strict_escapes: bool,
    out: &mut Vec<u8>,
) -> Option<(Parts, bool)> {
    dispatch(Fast {
        input,
        strict_escapes,
        target: true,
        out,
    })
}

/// [`canonical_target`] for a request target that still lies in its log
/// line: `line` starts with the target, which ends at the first space (a
/// target with none is not taken). If the target is one that
/// [`canonical_target`] would take, and holds no `\\` (the start of the
/// logger's escapes), it is appended to `out` as that function would append
/// it, and its length is returned. So a log reader need not find the end of
/// the request field before the target is scanned: one scan finds both
/// (see `log::clf`'s `request_start`).
///
/// `chunk` is the engine already chosen: the caller's own loop runs as a
/// [`Job`] under `simd::dispatch` (the log line loop), so the scan is
/// inlined into that loop, compiled for the same engine, with no call and
/// no engine check per line.
#[inline(always)]
pub(crate) fn canonical_target_in_line_with<C: Chunk>(
    chunk: C,
    line: &[u8],
    strict_escapes: bool,
    out: &mut Vec<u8>,
) -> Option<usize> {
    InLine::<false> {
        line,
        strict_escapes,
        out,
    }
    .run(chunk)
}

/// [`canonical_target_in_line_with`] that takes dot segments too
/// (`/a/../b`, `/a/./%2e%2E/b`), where that function leaves the target:
/// appended with them removed, as the general parser writes the target.
/// For the lines the in-line scan leaves, before the general parser is
/// tried: a job of its own under `simd::dispatch`, out of line, so that
/// the in-line scan, which all the other lines take, keeps its registers
/// (with the dot segments taken by the in-line scan itself,
/// pipeline/combined was 438.2 instructions a line instead of 432.4).
#[inline(never)]
pub(crate) fn canonical_dotted_target_in_line(
    line: &[u8],
    strict_escapes: bool,
    out: &mut Vec<u8>,
) -> Option<usize> {
    dispatch(InLine::<true> {
        line,
        strict_escapes,
        out,
    })
}

/// [`canonical_http`] and [`canonical_target`] without the copy, for the
/// dedup rules, which write the URL with their edits made instead of
/// copying it and editing it in place: where the components of `input` lie
/// if it is a canonical URL (a request target when `target`), whether its
/// escapes have lower-case hex digits (see [`write_scanned`]), and what the
/// path rules need to know of its path ([`PathFacts`]), read by the same
/// scan. A job of its own ([`Scan`]), so that the profiles without rules
/// keep theirs as it is. Inlined into each caller: out of line (once it
/// had two, `run_fused` and `run_fused_quick`), making its result cost 59
/// instructions a URL more on kasztp `aggressive`.
#[inline(always)]
pub fn scan_canonical(
    input: &[u8],
    strict_escapes: bool,
    target: bool,
) -> Option<(Parts, bool, PathFacts)> {
    let found = dispatch(Scan::<true> {
        input,
        strict_escapes,
        target,
    })?;
    Some((
        found.parts(input.len() as u32),
        found.lower_hex,
        found.facts,
    ))
}

/// [`scan_canonical`] for a rule set that can tell from the scan alone
/// whether its rules leave a URL as it is (`keep`, given the parts and
/// facts found; never asked about a URL with lower-case hex digits): such
/// a URL is appended to `out` as [`canonical_http`] appends it, and its
/// parts returned with [`Kept::Yes`]. [`Kept::No`]: taken by the scan but
/// not kept (nothing appended), with what [`scan_canonical`] returns
/// beside the parts, so that the caller need not scan it again; `None`:
/// not canonical as it stands. One job, so that `keep` reads the scan's
/// offsets where they are, and the copy is made as the fast path makes it
/// (first, taken back when not wanted).
#[inline(always)]
pub fn scan_canonical_kept<F: FnOnce(&Parts, PathFacts) -> bool>(
    input: &[u8],
    strict_escapes: bool,
    target: bool,
    out: &mut Vec<u8>,
    keep: F,
) -> Option<(Parts, Kept)> {
    dispatch(ScanKept {
        scan: Scan::<true> {
            input,
            strict_escapes,
            target,
        },
        out,
        keep,
    })
}

/// What [`scan_canonical_kept`] did with a URL its scan took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// Appended as it is.
    Yes,
    /// Not appended: its escapes have lower-case hex digits (`lower_hex`,
    /// as [`scan_canonical`] says), or `keep` said no; `facts` as
    /// [`scan_canonical`] gives them.
    No { lower_hex: bool, facts: PathFacts },
}

/// What the dedup rules' scan ([`scan_canonical`]) saw in a path, for the
/// path rules, which then need not read the path again to know that they
/// have nothing to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathFacts {
    /// A `;` or `(`: where a session id can start (`session`).
    pub session: bool,
    /// Two `/` in a row (`duplicate-slashes`).
    pub double_slash: bool,
}

/// Whether the URL that starts `input` and ends at its first `\n` (a
/// line of a list of URLs, `input` the rest of the list) is one that
/// [`canonical_http`] (or [`canonical_target`] when `target`) would take
/// alone and append unchanged: if so, its length (the `\n`'s index). Found
/// by the scan alone: nothing is copied and no parts are made, and the
/// scan finds the line's end. For a caller that writes such lines from
/// where they lie (the plain pipe), with `chunk` the engine of its own loop,
/// which runs under `simd::dispatch` (see [`canonical_target_in_line_with`]).
/// A URL with no `\n` after it is not taken.
#[inline(always)]
pub(crate) fn canonical_line_with<C: Chunk>(
    chunk: C,
    input: &[u8],
    strict_escapes: bool,
    target: bool,
) -> Option<usize> {
    CanonicalLine {
        input,
        strict_escapes,
        target,
    }
    .run(chunk)
}

/// Appends `input`, which [`scan_canonical`] took with `parts`, as its
/// canonical form: with the hex digits of its escapes upper-cased when
/// `lower_hex`.
#[inline]
pub fn write_scanned(input: &[u8], parts: &Parts, lower_hex: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(input);
    if lower_hex {
        let path = out.len() - input.len() + parts.path_start as usize;
        upper_case_escapes(&mut out[path..]);
    }
}

/// Upper-cases the hex digits of every escape in `bytes` (a path, query and
/// fragment the fast path took): RFC 3986 §6.2.2.1, as
/// `canon::rfc3986::normalize` does for the general parser.
///
/// Only for what the fast path took with `STRICT` escapes (the only case
/// where it reports lower-case hex): there every `%` starts an escape, two
/// hex digits follow it, so a digit is never a `%` and escapes never
/// overlap.
#[cold]
#[inline(never)]
fn upper_case_escapes(bytes: &mut [u8]) {
    // Eight bytes a step, as one `u64` (SWAR): the `%`s' mask, the digits'
    // mask (that shifted by one and by two bytes, what passes the word's end
    // carried to the next), and the digits in `a-f` flipped to `A-F` at
    // once. A test and a store per digit, the way before, cost about 630
    // instructions per such target on the combined log (callgrind), whose
    // non-ASCII paths are runs of escapes (`%d9%81%d8`).
    let mut carry = 0;
    let mut words = bytes.chunks_exact_mut(8);
    for word in &mut words {
        let word: &mut [u8; 8] = word.try_into().expect("8 bytes");
        carry = upper_case_word(word, carry);
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        // Padded with zeros, which are no `%`; no digit lies past the end,
        // since every escape is whole.
        let mut word = [0u8; 8];
        word[..tail.len()].copy_from_slice(tail);
        upper_case_word(&mut word, carry);
        let n = tail.len();
        tail.copy_from_slice(&word[..n]);
    }
}

/// [`upper_case_escapes`] of `out[start..]`, sixteen bytes a step with
/// SSE2 (`simd::upper_case_escapes_sse2`). `out` is padded with zeros (no
/// `%`) to whole steps for it, and cut back after.
/// Against `upper_case_escapes` eight bytes a step, about 10 instructions
/// a line fewer on the combined log (its non-ASCII paths).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[cold]
#[inline(never)]
fn upper_case_escapes_from(out: &mut Vec<u8>, start: usize) {
    let end = out.len();
    out.extend_from_slice(&[0; 16]);
    let steps = (end - start).div_ceil(16) * 16;
    crate::url::simd::upper_case_escapes_sse2(&mut out[start..start + steps]);
    out.truncate(end);
}

/// [`upper_case_escapes`] of `out[start..]` (no SSE2).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[cold]
#[inline(never)]
fn upper_case_escapes_from(out: &mut Vec<u8>, start: usize) {
    upper_case_escapes(&mut out[start..]);
}

/// One step of [`upper_case_escapes`]: upper-cases the escapes' digits in
/// `word`, given the digit bytes the previous word's `%`s reach into it
/// (`carry`, `0x80` in each), and returns those of this word's `%`s for the
/// next. Byte `k` of `word` is byte `k` of the `u64` (little-endian).
#[inline(always)]
fn upper_case_word(word: &mut [u8; 8], carry: u64) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let x = u64::from_le_bytes(*word);
    // `0x80` in each byte that is `%`: the bytes where `x ^ "%%%%%%%%"`
    // is zero, found without a borrow between bytes.
    let t = x ^ 0x2525_2525_2525_2525;
    let percents = !(((t & LOW7) + LOW7) | t | LOW7);
    let digits = (percents << 8) | (percents << 16) | carry;
    if digits != 0 {
        // A hex digit is in `a-f` when it has both 0x40 and 0x20 set (`0-9`
        // lacks 0x40, `A-F` 0x20): 0x20 in those bytes, then flipped off
        // in the digits alone.
        let lower = (x & (x << 1) & 0x4040_4040_4040_4040) >> 1;
        *word = (x ^ (lower & (digits >> 2))).to_le_bytes();
    }
    (percents >> 56) | (percents >> 48)
}

/// The fast path as a [`Job`], to run with the best byte-scanning engine:
/// where the components of `input` lie, if it is canonical.
struct Fast<'a> {
    input: &'a [u8],
    strict_escapes: bool,
    /// A request target, not a URL.
    target: bool,
    /// Where a canonical input is copied.
    out: &'a mut Vec<u8>,
}

/// For an input that [`canonical_http`] left: if it is an `http`, `https`
/// or `file` URL that ends with its host or port, canonical but for its
/// path `/` (`http://example.com`), appends it with the `/` and returns its
/// parts and `false` (the output is not the input), as [`canonical_http`]
/// does. Such URLs were 639 of the 11,430 of `userbait.txt`, about 1,300
/// instructions each through the general parser. A scan of its own
/// (`BARE`, see [`http_to`]), for the general parser's caller to try
/// first: taken by [`canonical_http`]'s own scan, the second kind of
/// result cost every URL about 14 instructions (whatwg/kasztp 245.8 →
/// 259.7, `benches/guard.sh`), and a call of this function where that
/// scan fails about 6.
#[inline(never)]
pub fn canonical_bare_http(
    input: &[u8],
    strict_escapes: bool,
    out: &mut Vec<u8>,
) -> Option<(Parts, bool)> {
    let found = dispatch(Rooted {
        input,
        strict_escapes,
    })?;
    out.extend_from_slice(input);
    out.push(b'/');
    Some((found.parts(found.path_start + 1), false))
}

/// The scan of [`canonical_bare_http`] as a [`Job`].
struct Rooted<'a> {
    input: &'a [u8],
    strict_escapes: bool,
}

impl Job for Rooted<'_> {
    type Output = Option<Found>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<Found> {
        if self.strict_escapes {
            http::<true, false, true, C>(chunk, self.input)
        } else {
            http::<false, false, true, C>(chunk, self.input)
        }
    }
}

/// What [`Fast`] found: the offsets that [`Parts`] takes from the input (a
/// target has only a query and a fragment).
#[derive(Clone, Copy, Debug)]
struct Found {
    scheme_end: u32,
    host_end: u32,
    port: u32,
    path_start: u32,
    query_start: u32,
    fragment_start: u32,
    /// An escape has lower-case hex digits (`strict_escapes` only).
    lower_hex: bool,
    /// What the rules' scan saw in the path (nothing for the others).
    facts: PathFacts,
}

impl Job for Fast<'_> {
    type Output = Option<(Parts, bool)>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<(Parts, bool)> {
        let start = self.out.len();
        if self.target {
            // Request targets are copied after the scan: many are not
            // canonical (in the generated combined log), and a copy taken
            // back costs more than the offsets' moves around a late one.
            let found = if self.strict_escapes {
                target::<true, false, C>(chunk, self.input)
            } else {
                target::<false, false, C>(chunk, self.input)
            }?;
            push_short(self.out, self.input);
            return Some(found.finish(self.input, &mut self.out[start..]));
        }
        // URLs are copied first, taken back if not canonical: copied last,
        // the scan's offsets had to be kept around the `memcpy` call
        // (register moves and stack slots, about 40 instructions per URL on
        // `kasztp.txt`), and most URLs are taken. Most are short enough to
        // be copied without the call ([`push_short`]).
        push_short(self.out, self.input);
        // One copy per profile: the escape checks are then decided at
        // compile time instead of at every `%` and every path run.
        let found = if self.strict_escapes {
            http::<true, false, false, C>(chunk, self.input)
        } else {
            http::<false, false, false, C>(chunk, self.input)
        };
        let Some(found) = found else {
            self.out.truncate(start);
            return None;
        };
        Some(found.finish(self.input, &mut self.out[start..]))
    }
}

impl Found {
    /// The parts of the input the offsets were found in, now copied to
    /// `copy` (its escapes upper-cased there when `lower_hex`), and whether
    /// the copy is the input.
    #[inline(always)]
    fn finish(self, input: &[u8], copy: &mut [u8]) -> (Parts, bool) {
        if self.lower_hex {
            upper_case_escapes(&mut copy[self.path_start as usize..]);
        }
        (self.parts(input.len() as u32), !self.lower_hex)
    }

    /// The parts of an input of `len` bytes where the offsets were found.
    #[inline(always)]
    fn parts(&self, len: u32) -> Parts {
        if self.scheme_end == ABSENT {
            // A request target: path at 0, no scheme or host.
            Parts {
                path_start: 0,
                query_start: self.query_start,
                fragment_start: self.fragment_start,
                len,
                special: true,
                ..Parts::default()
            }
        } else {
            let after_scheme = self.scheme_end + 3;
            Parts {
                scheme_end: self.scheme_end,
                username_start: after_scheme,
                username_end: after_scheme,
                password_start: after_scheme,
                password_end: after_scheme,
                host_start: after_scheme,
                host_end: self.host_end,
                port: self.port,
                path_start: self.path_start,
                query_start: self.query_start,
                fragment_start: self.fragment_start,
                len,
                special: true,
                opaque_path: false,
            }
        }
    }
}

/// [`canonical_target_in_line_with`] as a [`Job`]; with `DOTS`,
/// [`canonical_dotted_target_in_line`].
struct InLine<'a, const DOTS: bool> {
    line: &'a [u8],
    strict_escapes: bool,
    out: &'a mut Vec<u8>,
}

impl<const DOTS: bool> Job for InLine<'_, DOTS> {
    type Output = Option<usize>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<usize> {
        let (lower_hex, end, dotted_path) = if self.strict_escapes {
            target_in_line::<true, DOTS, C>(chunk, self.line)
        } else {
            target_in_line::<false, DOTS, C>(chunk, self.line)
        }?;
        let start = self.out.len();
        if let Some(path_end) = dotted_path {
            push_without_dots(&self.line[..end], path_end, self.out);
        } else {
            push_short(self.out, &self.line[..end]);
        }
        // `Found::finish` without the parts, which no caller takes here:
        // through it, about 3 instructions a line more (pipeline/combined).
        if lower_hex {
            upper_case_escapes_from(self.out, start);
        }
        Some(end)
    }
}

/// The fast path's scan alone, for [`scan_canonical`]: no copy. `RULES`:
/// the path's [`PathFacts`] are found too.
struct Scan<'a, const RULES: bool> {
    input: &'a [u8],
    strict_escapes: bool,
    target: bool,
}

impl<const RULES: bool> Job for Scan<'_, RULES> {
    type Output = Option<Found>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<Found> {
        match (self.target, self.strict_escapes) {
            (true, true) => target::<true, RULES, C>(chunk, self.input),
            (true, false) => target::<false, RULES, C>(chunk, self.input),
            (false, true) => http::<true, RULES, false, C>(chunk, self.input),
            (false, false) => http::<false, RULES, false, C>(chunk, self.input),
        }
    }
}

/// [`scan_canonical_kept`] as a [`Job`].
struct ScanKept<'a, F> {
    scan: Scan<'a, true>,
    out: &'a mut Vec<u8>,
    keep: F,
}

impl<F: FnOnce(&Parts, PathFacts) -> bool> Job for ScanKept<'_, F> {
    type Output = Option<(Parts, Kept)>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<(Parts, Kept)> {
        let input = self.scan.input;
        let start = self.out.len();
        // Copied first, as `Fast` copies a URL (most are kept).
        push_short(self.out, input);
        let found = self.scan.run(chunk);
        let Some(found) = found else {
            self.out.truncate(start);
            return None;
        };
        let parts = found.parts(input.len() as u32);
        if !found.lower_hex && (self.keep)(&parts, found.facts) {
            return Some((parts, Kept::Yes));
        }
        self.out.truncate(start);
        let (lower_hex, facts) = (found.lower_hex, found.facts);
        Some((parts, Kept::No { lower_hex, facts }))
    }
}

/// [`canonical_line_with`] as a job: the scan of the URL that starts
/// `input` and ends at its first `\n`.
struct CanonicalLine<'a> {
    input: &'a [u8],
    strict_escapes: bool,
    target: bool,
}

impl Job for CanonicalLine<'_> {
    type Output = Option<usize>;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> Option<usize> {
        let input = self.input;
        let (found, end) = match (self.target, self.strict_escapes) {
            (true, true) => target_to::<true, TO_LINE_END, false, C>(chunk, input),
            (true, false) => target_to::<false, TO_LINE_END, false, C>(chunk, input),
            (false, true) => http_to::<true, TO_LINE_END, false, false, C>(chunk, input),
            (false, false) => http_to::<false, TO_LINE_END, false, false, C>(chunk, input),
        }?;
        (!found.lower_hex).then_some(end)
    }
}

/// What ends the URL a scan reads (`path_query_fragment`'s `END`): the end
/// of the input, or the first byte of this value after the URL.
const TO_INPUT_END: u8 = 0;
/// A request target in a log line ends at a space.
const IN_LOG_LINE: u8 = b' ';
/// A URL on a line of its own ends at the line's `\n`.
const TO_LINE_END: u8 = b'\n';

/// The scan of an http(s) or file URL, the whole input: its offsets, or
/// `None` where the parser could change a byte. `BARE`: see [`http_to`].
#[inline(always)]
fn http<const STRICT: bool, const RULES: bool, const BARE: bool, C: Chunk>(
    chunk: C,
    input: &[u8],
) -> Option<Found> {
    Some(http_to::<STRICT, TO_INPUT_END, RULES, BARE, C>(chunk, input)?.0)
}

/// [`http`] of a URL that ends as `END` says (see [`path_query_fragment`]),
/// and where the scan ended: the URL's `END`, or the input's end.
/// `BARE`: only a URL that ends with its host or port
/// (`http://example.com`), whose canonical form only adds the path `/`, is
/// taken, with its path at the input's end (`path_start` = the input's
/// length); any other is not (see [`canonical_bare_http`]).
#[inline(always)]
fn http_to<const STRICT: bool, const END: u8, const RULES: bool, const BARE: bool, C: Chunk>(
    chunk: C,
    input: &[u8],
) -> Option<(Found, usize)> {
    // `http://` and `file://` told from the first eight bytes, loaded once,
    // with the eighth masked off: tested apart, each prefix was loaded
    // again, about 7 instructions more for a `file` URL (`benches/guard.sh`,
    // node_files). A URL of seven bytes is padded to eight for `BARE`
    // alone, which takes `file://` (the others' scans would not take it).
    let first = match input.first_chunk::<8>() {
        Some(eight) => u64::from_le_bytes(*eight),
        None if !BARE => return None,
        None => {
            let seven: &[u8; 7] = input.try_into().ok()?;
            let mut eight = [0; 8];
            eight[..7].copy_from_slice(seven);
            u64::from_le_bytes(eight)
        }
    };
    let seven = first & 0x00FF_FFFF_FFFF_FFFF;
    let (scheme_end, default_port, file) = if input.starts_with(b"https://") {
        (5usize, 443u32, false)
    } else if seven == u64::from_le_bytes(*b"http://\0") {
        (4, 80, false)
    } else if seven == u64::from_le_bytes(*b"file://\0") {
        (4, ABSENT, true)
    } else {
        return None;
    };
    let len = input.len();
    let host_start = scheme_end + 3;
    let host_end = find_with::<CanonicalDomainStop, C>(chunk, input, host_start);
    let host = &input[host_start..host_end];
    if host.is_empty() {
        // Only a file URL's host may be empty ("file:///p").
        if !file {
            return None;
        }
    } else if ends_in_a_number(host) || (file && host == b"localhost") {
        // An IPv4 address is rewritten; "localhost" becomes the empty host.
        return None;
    }
    let mut i = host_end;
    let mut port = ABSENT;
    if i < len && input[i] == b':' && !file {
        i += 1;
        let digits = i;
        let (n, value) = crate::ascii::leading_decimal(&input[i..], 5);
        i += n;
        if n == 0 || (n > 1 && input[digits] == b'0') || value > 65535 || value == default_port {
            return None;
        }
        port = value;
    }
    // A special URL always has a path; without one, "/" must be added.
    if BARE || i == len || input[i] != b'/' {
        if BARE && i == len {
            let found = Found {
                scheme_end: scheme_end as u32,
                host_end: host_end as u32,
                port,
                path_start: len as u32,
                query_start: ABSENT,
                fragment_start: ABSENT,
                lower_hex: false,
                facts: PathFacts::default(),
            };
            return Some((found, len));
        }
        return None;
    }
    // A file URL's first segment "C|" is written "C:" (Windows drive letter).
    if file {
        let p = &input[i..];
        if p.len() >= 3
            && p[1].is_ascii_alphabetic()
            && p[2] == b'|'
            && (p.len() == 3
                || matches!(p[3], b'/' | b'\\' | b'?' | b'#')
                || (END != TO_INPUT_END && p[3] == END))
        {
            return None;
        }
    }
    let path_start = i;
    let (query_start, fragment_start, lower_hex, end, facts, _) =
        path_query_fragment::<STRICT, END, RULES, false, C>(chunk, input, i)?;
    let found = Found {
        scheme_end: scheme_end as u32,
        host_end: host_end as u32,
        port,
        path_start: path_start as u32,
        query_start,
        fragment_start,
        lower_hex,
        facts,
    };
    Some((found, end))
}

#[inline(always)]
fn target<const STRICT: bool, const RULES: bool, C: Chunk>(
    chunk: C,
    input: &[u8],
) -> Option<Found> {
    Some(target_to::<STRICT, TO_INPUT_END, RULES, C>(chunk, input)?.0)
}

/// [`target`] of a target that ends as `END` says, and where the scan
/// ended, as [`http_to`] says.
#[inline(always)]
fn target_to<const STRICT: bool, const END: u8, const RULES: bool, C: Chunk>(
    chunk: C,
    input: &[u8],
) -> Option<(Found, usize)> {
    if input.first() != Some(&b'/') {
        return None;
    }
    let found = path_query_fragment::<STRICT, END, RULES, false, C>(chunk, input, 0)?;
    Some((target_found(found), found.3))
}

/// [`target`] for a target that lies in a line and ends at the first space
/// (see [`canonical_target_in_line_with`]): its offsets and where it ends.
/// With `DOTS`, unlike [`target`], dot segments are taken. Returns whether
/// an escape has lower-case hex digits, where the target ends, and if it
/// has dot segments, where its path ends (then the caller removes them,
/// see [`push_without_dots`]).
#[inline(always)]
fn target_in_line<const STRICT: bool, const DOTS: bool, C: Chunk>(
    chunk: C,
    line: &[u8],
) -> Option<(bool, usize, Option<usize>)> {
    if line.first() != Some(&b'/') {
        return None;
    }
    let (query_start, fragment_start, lower_hex, end, _, dots) =
        path_query_fragment::<STRICT, IN_LOG_LINE, false, DOTS, C>(chunk, line, 0)?;
    // Where the path ends: ABSENT (no query or fragment) is above them all.
    let path_end = (query_start.min(fragment_start) as usize).min(end);
    Some((lower_hex, end, dots.then_some(path_end)))
}

/// Whether a `.` that starts a path segment and is followed by `b` starts
/// a segment that is not a dot segment (`.`, `..`, `.%2e`) and that the
/// parser leaves as it is: `b` is a letter, a digit, `-`, `_` or `~`.
#[inline(always)]
fn plain_after_dot(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~')
}

/// If the path segment that starts at `i` (after a `/`) of a log line's
/// target is a dot segment (`.`, `..`, or one of them with a `.` written
/// `%2e` or `%2E`), its length: it ends at a `/`, `?`, `#` or the target's
/// space.
#[inline(always)]
fn dot_segment(input: &[u8], i: usize) -> Option<usize> {
    let first = i + dot_len(input, i)?;
    if ends_segment(input.get(first)) {
        return Some(first - i);
    }
    let second = first + dot_len(input, first)?;
    ends_segment(input.get(second)).then_some(second - i)
}

/// The length of the `.` (1) or `%2e` (3) at `i`, if there is one.
#[inline(always)]
fn dot_len(input: &[u8], i: usize) -> Option<usize> {
    match input.get(i)? {
        b'.' => Some(1),
        b'%' if input.get(i + 1) == Some(&b'2')
            && input.get(i + 2).is_some_and(|&e| e | 0x20 == b'e') =>
        {
            Some(3)
        }
        _ => None,
    }
}

/// Whether `b` ends a path segment of a log line's target.
#[inline(always)]
fn ends_segment(b: Option<&u8>) -> bool {
    matches!(b, Some(b'/' | b'?' | b'#' | b' '))
}

/// Appends `target`, a log line's target that the in-line scan took with
/// dot segments (its path `target[..path_end]`), with them removed as the URL Standard's path state
/// removes them: a `..` removes the segment before it, and a dot segment
/// that ends the path leaves it ending in `/`. The scan took every other
/// byte as it is, so only the segments change.
///
/// Out of line: such targets are rare (scanners' `/cgi-bin/../../etc/passwd`,
/// `/assets/./x`: 366 of the guard log's 38,118 lines), and they came here
/// from the general parser, about 1,750 instructions a line.
#[cold]
#[inline(never)]
fn push_without_dots(target: &[u8], path_end: usize, out: &mut Vec<u8>) {
    // Copied whole, then the path moved down over what it loses, in place:
    // a `Vec` call per segment cost about 870 instructions a target.
    let base = out.len();
    out.extend_from_slice(target);
    let path = &mut out[base..base + path_end];
    // `path[..w]`: the path written so far, a `/` and a segment each time;
    // the segment to read next starts after the `/` at `r` (w <= r).
    let (mut w, mut r) = (0, 0);
    while r < path_end {
        let start = r + 1;
        let end = path[start..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(path_end, |n| start + n);
        let segment = &path[start..end];
        let maybe_dot = segment.len() <= 6 && matches!(segment.first(), Some(b'.' | b'%'));
        let double = maybe_dot && is_double_dot(segment);
        if double || (maybe_dot && is_single_dot(segment)) {
            if double {
                // "shorten url's path": its last segment removed.
                w = path[..w].iter().rposition(|&b| b == b'/').unwrap_or(0);
            }
            if end == path_end {
                // A dot segment last: the path ends in `/`.
                path[w] = b'/';
                w += 1;
            }
        } else {
            if w != r {
                path.copy_within(r..end, w);
            }
            w += end - r;
        }
        r = end;
    }
    // The query and fragment after it.
    out.copy_within(base + path_end.., base + w);
    out.truncate(base + w + target.len() - path_end);
}

/// What [`path_query_fragment`] returns: where the query and fragment
/// start, whether an escape has lower-case hex digits, where the scan
/// ended, the rules' facts, and whether a log line's target has dot
/// segments.
type PathScan = (u32, u32, bool, usize, PathFacts, bool);

/// A target's offsets from what [`path_query_fragment`] returned.
#[inline(always)]
fn target_found((query_start, fragment_start, lower_hex, _, facts, _): PathScan) -> Found {
    Found {
        scheme_end: ABSENT,
        host_end: ABSENT,
        port: ABSENT,
        path_start: 0,
        query_start,
        fragment_start,
        lower_hex,
        facts,
    }
}

/// Scans a special URL's path from its first `/` at `i`, then its query and
/// fragment, and returns where the query and fragment start (`ABSENT` if
/// none), whether an escape has lower-case hex digits and where the scan
/// ended, or `None` at the first byte the parser would change. `STRICT`:
/// escapes are checked as the `rfc3986` profile writes them. `END`: what
/// ends the URL. [`TO_INPUT_END`]: the input's end. Any other byte: the
/// URL ends at its first `END` (it must have one), and `input` goes on past
/// it: [`IN_LOG_LINE`], the rest of a log line, where the URL ends at a
/// space and `\` is never taken, because in a log line it starts the
/// logger's escape (the strict sets stop at it already, the others are
/// swapped for ones that do); [`TO_LINE_END`], the rest of a list of URLs,
/// where it ends at a `\n` (every set stops at both). A byte after the
/// `END` can only make an escape or dot-segment check fail, as the end of
/// the input would.
/// `RULES`: the scan also stops at `;`, `(` and the second `/` of `//` in
/// the path, notes them in the [`PathFacts`] returned last, and goes on.
///
/// Always inlined: with two callers the compiler stopped inlining it, and the
/// call (register saves, its constants loaded again) cost about 57
/// instructions per URL on `kasztp.txt` (`benches/instructions.sh`).
#[inline(always)]
fn path_query_fragment<
    const STRICT: bool,
    const END: u8,
    const RULES: bool,
    const DOTS: bool,
    C: Chunk,
>(
    chunk: C,
    input: &[u8],
    mut i: usize,
) -> Option<PathScan> {
    // The log line's target: `\\` is the logger's escape (see the doc).
    let in_line = END == IN_LOG_LINE;
    // [`escape`]'s one table of two bytes where it was measured to pay: a
    // log line's target and a whole URL without rules (pipeline/combined
    // and vhost, each about 10 instructions a line fewer). In the rules'
    // scan (`safe`) and a list's line (plain --pipe) it made the rest of
    // the scan dearer (safe/kasztp 382.7 -> 388.1, plain-whatwg 209.5 ->
    // 210.7, `benches/guard.sh`): registers allotted otherwise.
    let pairs = !RULES && END != TO_LINE_END;
    let len = input.len();
    let mut lower = false;
    let mut facts = PathFacts::default();
    let mut dots = false;
    i += 1;
    loop {
        // Stops at a byte to escape, `\`, `?`, `#`, and at a `.` or `%` that
        // starts a segment (`%` everywhere when escapes are checked, and the
        // bytes RFC 3986 excludes that the URL Standard leaves: `[ ] |`).
        i = match (STRICT, RULES) {
            (true, false) => find_path_run_with::<Rfc3986PathStop, C>(chunk, input, i, usize::MAX),
            (false, false) => find_path_run_with::<SpecialPathSet, C>(chunk, input, i, usize::MAX),
            (true, true) => {
                find_rules_path_run_with::<Rfc3986PathRulesStop, C>(chunk, input, i, usize::MAX)
            }
            (false, true) => {
                find_rules_path_run_with::<SpecialPathRulesStop, C>(chunk, input, i, usize::MAX)
            }
        };
        let Some(&b) = input.get(i) else { break };
        let starts_segment = input[i - 1] == b'/';
        match b {
            // Only the rules' sets stop at these: noted, and the scan goes
            // on (a `/` is the second of `//`).
            b';' | b'(' if RULES => {
                facts.session = true;
                i += 1;
            }
            b'/' if RULES => {
                facts.double_slash = true;
                i += 1;
            }
            // "." or "%2e" right after "/" may start a dot segment. With
            // `DOTS` (a log line's target scanned again, see
            // [`canonical_dotted_target_in_line`]), a dot segment is
            // skipped and noted (the caller removes it from the copy,
            // `push_without_dots`), any other `.` or `%2e` taken as bytes
            // like the others. Otherwise, in a log line's target, a "."
            // before a letter, digit, `-`, `_` or `~` does not start one
            // (`/.env`, `/.well-known/`), nor does it end one: taken with
            // that byte (scanners ask for such paths: 474 lines of the
            // 38,118 of the guard's combined log, each about 1,600
            // instructions dearer through the parser). Elsewhere the test
            // cost the library's scan up to 2 % (whatwg/kasztp 245.8 ->
            // 251.4).
            b'.' if starts_segment
                && in_line
                && !RULES
                && input.get(i + 1).is_some_and(|&n| plain_after_dot(n)) =>
            {
                i += 2
            }
            // In the bodies, not in guards of their own: with `DOTS` false,
            // the match is then the one without them (an arm of its own
            // made the rules' scan dearer, safe/isaacs_files 472.4 ->
            // 484.1).
            b'.' if starts_segment => {
                if !DOTS {
                    return None;
                }
                match dot_segment(input, i) {
                    Some(n) => (dots, i) = (true, i + n),
                    None => i += 1,
                }
            }
            b'%' if starts_segment
                && input.get(i + 1) == Some(&b'2')
                && input.get(i + 2).is_some_and(|&e| e | 0x20 == b'e') =>
            {
                if !DOTS {
                    return None;
                }
                match dot_segment(input, i) {
                    Some(n) => (dots, i) = (true, i + n),
                    None => i = escapes::<STRICT>(input, i, &mut lower, pairs)?,
                }
            }
            b'%' => i = escapes::<STRICT>(input, i, &mut lower, pairs)?,
            b'?' | b'#' => break,
            b' ' if END == IN_LOG_LINE => break,
            b'\n' if END == TO_LINE_END => break,
            _ => return None,
        }
    }
    let mut query_start = ABSENT;
    if i < len && input[i] == b'?' {
        query_start = i as u32;
        i += 1;
        loop {
            // Strict: also the bytes RFC 3986 excludes, which `rfc3986`
            // escapes (`?x[y]=1`, PHP's array parameters): left to the
            // general parser, as rare in logs as they are.
            i = if STRICT {
                find_with::<Rfc3986QueryStop, C>(chunk, input, i)
            } else if in_line {
                find_with::<InLineQueryStop, C>(chunk, input, i)
            } else {
                find_with::<CanonicalQueryStop, C>(chunk, input, i)
            };
            match input.get(i) {
                None | Some(b'#') => break,
                Some(b' ') if END == IN_LOG_LINE => break,
                Some(b'\n') if END == TO_LINE_END => break,
                Some(b'%') => i = escapes::<STRICT>(input, i, &mut lower, pairs)?,
                Some(_) => return None,
            }
        }
    }
    let mut fragment_start = ABSENT;
    if i < len && (END == TO_INPUT_END || input[i] == b'#') {
        // input[i] == '#'
        fragment_start = i as u32;
        i += 1;
        loop {
            // Strict: also a second `#` and the bytes RFC 3986 excludes.
            i = if STRICT {
                find_with::<Rfc3986FragmentStop, C>(chunk, input, i)
            } else if in_line {
                find_with::<InLineFragmentStop, C>(chunk, input, i)
            } else {
                find_with::<CanonicalFragmentStop, C>(chunk, input, i)
            };
            match input.get(i) {
                None => break,
                Some(b' ') if END == IN_LOG_LINE => break,
                Some(b'\n') if END == TO_LINE_END => break,
                Some(b'%') => i = escapes::<STRICT>(input, i, &mut lower, pairs)?,
                Some(_) => return None,
            }
        }
    }
    if END != TO_INPUT_END && i == len {
        // No `END`: the input ends inside the URL (a log line inside the
        // request, a piece's last line without its line end).
        return None;
    }
    Some((query_start, fragment_start, lower, i, facts, dots))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Canonicalizer, Profile};

    /// [`canonical_target_in_line_with`] with the engine `dispatch` chooses.
    fn canonical_target_in_line(
        line: &[u8],
        strict_escapes: bool,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        dispatch(InLine::<false> {
            line,
            strict_escapes,
            out,
        })
    }

    /// `upper_case_escapes` and `upper_case_escapes_from` upper-case exactly
    /// the two bytes after each `%`, in `a-f`, whatever the word (or step)
    /// boundaries: 20,000 generated
    /// strings of up to 26 bytes made of escapes (hex digits of both cases)
    /// and other bytes (`a-f`, a digit and a byte above 0x7F among them,
    /// which must stay), so escapes fall across every word boundary.
    #[test]
    fn upper_case_escapes_takes_the_digits_alone() {
        const ESCAPES: [&[u8]; 5] = [b"%aF", b"%0b", b"%Ce", b"%9f", b"%e1"];
        const OTHERS: [&[u8]; 5] = [b"a", b"F", b"7", b"\xfe", b"e"];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for _ in 0..20_000 {
            let mut input = Vec::new();
            while input.len() < (next() % 25) as usize {
                let r = next();
                let piece = if r & 1 == 0 {
                    ESCAPES[(r >> 1) as usize % 5]
                } else {
                    OTHERS[(r >> 1) as usize % 5]
                };
                input.extend_from_slice(piece);
            }
            let mut expected = input.clone();
            let mut i = 0;
            while i < expected.len() {
                if expected[i] == b'%' {
                    expected[i + 1].make_ascii_uppercase();
                    expected[i + 2].make_ascii_uppercase();
                    i += 3;
                } else {
                    i += 1;
                }
            }
            let mut got = input.clone();
            upper_case_escapes(&mut got);
            assert_eq!(got, expected, "{:?}", input.escape_ascii().to_string());
            // After other bytes, a `%` among them, as the in-line copy
            // calls it.
            let mut from = b"%a".to_vec();
            from.extend_from_slice(&input);
            upper_case_escapes_from(&mut from, 2);
            assert_eq!(&from[..2], b"%a");
            assert_eq!(
                &from[2..],
                &expected[..],
                "{:?}",
                input.escape_ascii().to_string()
            );
            checked += usize::from(input != expected);
        }
        assert!(checked > 5_000, "{checked} inputs with lower-case digits");
    }

    /// The scheme test: `https://`, and `http://` and `file://` told from
    /// one load of eight bytes; nothing shorter, nothing else.
    #[test]
    fn schemes_from_the_first_eight_bytes() {
        for (input, taken) in [
            (&b"https://a/"[..], true),
            (b"http://a/", true),
            (b"file://a/", true),
            (b"file:///", true),
            (b"http://", false),
            (b"file://", false),
            (b"https://", false),
            (b"https:/a/", false),
            (b"httpx://a/", false),
            (b"HTTP://a/", false),
            (b"filex//a/", false),
            (b"ftp://a/", false),
            (b"http:/", false),
        ] {
            for strict in [false, true] {
                let mut out = b"x".to_vec();
                let got = canonical_http(input, strict, &mut out);
                assert_eq!(got.is_some(), taken, "{}", input.escape_ascii());
                let want = if taken { input } else { b"" };
                assert_eq!(&out[1..], want, "{}", input.escape_ascii());
            }
        }
    }

    /// The tables of [`escape`] (either way) say what `hex_value` and
    /// `is_unreserved` say, for every two bytes after a `%`, and at the
    /// input's end.
    #[test]
    fn escape_by_tables_is_escape_by_predicates() {
        for h in 0..=255u8 {
            for l in 0..=255u8 {
                let input = [b'%', h, l];
                let expected = match (hex_value(h), hex_value(l)) {
                    (Some(hv), Some(lv)) if !is_unreserved(hv << 4 | lv) => {
                        Some((3, h.is_ascii_lowercase() || l.is_ascii_lowercase()))
                    }
                    _ => None,
                };
                for pairs in [false, true] {
                    let mut lower = false;
                    let got = escape::<true>(&input, 0, &mut lower, pairs).map(|i| (i, lower));
                    assert_eq!(got, expected, "%{:?}", [h, l].escape_ascii().to_string());
                    assert_eq!(escape::<true>(&input[..2], 0, &mut lower, pairs), None);
                }
            }
        }
    }

    /// `canonical_target_in_line` takes a target followed by a space and
    /// more of the line when `canonical_target` takes the target alone and
    /// it holds no `\\`, with the same bytes appended, and besides only a
    /// target with a segment that starts with a `.` and a letter or digit
    /// (which `canonical_target` leaves to the parser), with what the
    /// parser writes; `canonical_dotted_target_in_line` takes all it takes,
    /// with the same bytes: every target of up to four bytes after its `/` over
    /// an alphabet of the bytes either path looks at (no space: the target
    /// ends at one), followed by what a request line has after its target
    /// (and by the line's end, which is never taken).
    #[test]
    fn in_line_takes_what_canonical_target_takes() {
        const ALPHABET: &[u8] = b"a/.%2eE?#\\\"7'";
        let mut target = Vec::new();
        let (mut taken, mut dotted) = (0, 0);
        for n in 0..=4u32 {
            for mut k in 0..ALPHABET.len().pow(n) {
                target.clear();
                target.push(b'/');
                for _ in 0..n {
                    target.push(ALPHABET[k % ALPHABET.len()]);
                    k /= ALPHABET.len();
                }
                for strict in [false, true] {
                    let mut alone = Vec::new();
                    let expected = (!target.contains(&b'\\'))
                        .then(|| canonical_target(&target, strict, &mut alone))
                        .flatten();
                    for rest in [&b" HTTP/1.1\" 200"[..], b" ", b" %41"] {
                        let line = [&target[..], rest].concat();
                        let mut out = b"x".to_vec();
                        let got = canonical_target_in_line(&line, strict, &mut out);
                        let shown = line.escape_ascii().to_string();
                        if expected.is_none() && got.is_some() {
                            let path = &target[..target
                                .iter()
                                .position(|&b| b == b'?' || b == b'#')
                                .unwrap_or(target.len())];
                            let dot_file = path.windows(3).any(|w| {
                                w[0] == b'/' && w[1] == b'.' && w[2].is_ascii_alphanumeric()
                            });
                            assert!(dot_file, "{shown}");
                            let profile = if strict {
                                Profile::Rfc3986
                            } else {
                                Profile::Whatwg
                            };
                            let mut parsed = Vec::new();
                            Canonicalizer::new(profile)
                                .canonicalize_target(&target, &mut parsed)
                                .expect("a target the in-line scan takes");
                            assert_eq!(got, Some(target.len()), "{shown}");
                            assert_eq!(&out[1..], &parsed[..], "{shown}");
                            dotted += 1;
                        } else {
                            assert_eq!(got, expected.map(|_| target.len()), "{shown}");
                            assert_eq!(&out[1..], &alone[..], "{shown}");
                        }
                        taken += usize::from(got.is_some());
                        if got.is_some() {
                            let mut dotted_out = b"x".to_vec();
                            let dotted_got =
                                canonical_dotted_target_in_line(&line, strict, &mut dotted_out);
                            assert_eq!(dotted_got, got, "{shown}");
                            assert_eq!(dotted_out, out, "{shown}");
                        }
                    }
                    let mut out = Vec::new();
                    assert_eq!(canonical_target_in_line(&target, strict, &mut out), None);
                    assert!(out.is_empty());
                }
            }
        }
        assert!(taken > 1000, "{taken}");
        assert!(dotted > 100, "{dotted}");
    }

    /// `canonical_dotted_target_in_line` on targets made of dot segments
    /// (every way of writing one), segments that look like them and
    /// others, with and without a query or fragment: what it takes, it
    /// writes as the general parser writes the target alone (dot segments
    /// removed), in both profiles; and it takes every such target made of
    /// dot segments, empty segments and `a` alone. Every sequence of up to
    /// four segments.
    #[test]
    fn in_line_removes_dot_segments_as_the_parser_does() {
        const SEGMENTS: [&[u8]; 14] = [
            b"a", b"", b".", b"..", b"%2e", b"%2E.", b".%2e", b"%2e%2E", b"..a", b".%2ex",
            b"%2f..", b"...", b"%41", b"a%2e",
        ];
        const TAILS: [&[u8]; 4] = [b"", b"?q/..", b"#./", b"?%2e#.."];
        let (mut taken, mut removed) = (0, 0);
        for n in 1..=4u32 {
            for k in 0..SEGMENTS.len().pow(n) {
                let mut path = Vec::new();
                let (mut k, mut plain) = (k, true);
                for _ in 0..n {
                    let segment = SEGMENTS[k % SEGMENTS.len()];
                    plain &= k % SEGMENTS.len() < 8;
                    path.push(b'/');
                    path.extend_from_slice(segment);
                    k /= SEGMENTS.len();
                }
                for tail in TAILS {
                    let target = [&path[..], tail].concat();
                    let line = [&target[..], b" HTTP/1.1\""].concat();
                    let shown = line.escape_ascii().to_string();
                    for (strict, profile) in [(false, Profile::Whatwg), (true, Profile::Rfc3986)] {
                        let mut out = b"x".to_vec();
                        let got = canonical_dotted_target_in_line(&line, strict, &mut out);
                        let mut parsed = Vec::new();
                        let expected = Canonicalizer::new(profile)
                            .canonicalize_target(&target, &mut parsed)
                            .map(|_| parsed);
                        if plain && !(strict && tail.contains(&b'%')) {
                            assert_eq!(got, Some(target.len()), "{shown} strict {strict}");
                        }
                        if got.is_some() {
                            assert_eq!(got, Some(target.len()), "{shown}");
                            let expected = expected.as_deref().expect("the parser takes it");
                            assert_eq!(&out[1..], expected, "{shown} strict {strict}");
                            taken += 1;
                            removed += usize::from(out[1..] != target[..]);
                        } else {
                            assert_eq!(out, b"x", "{shown}");
                        }
                    }
                }
            }
        }
        assert!(taken > 100_000, "{taken}");
        assert!(removed > 50_000, "{removed}");
    }

    /// [`canonical_line_with`] with the engine `dispatch` chooses.
    fn canonical_line(input: &[u8], strict_escapes: bool, target: bool) -> Option<usize> {
        dispatch(CanonicalLine {
            input,
            strict_escapes,
            target,
        })
    }

    /// `canonical_line_with` takes a URL followed by a `\n` and more lines
    /// exactly when `canonical_http` (a target: `canonical_target`) takes
    /// the URL alone and appends it unchanged: every URL made of a start
    /// (schemes, hosts, ports, a drive letter, a target's `/`) and up to
    /// four bytes over an alphabet of the bytes the scans look at (no
    /// `\n`: the URL ends at one), followed by the rest of a list (and by
    /// the list's end, which is never taken).
    #[test]
    fn line_takes_what_canonical_takes() {
        const STARTS: [&[u8]; 9] = [
            b"/",
            b"http://a",
            b"https://ex.com",
            b"http://a:8",
            b"https://a:443",
            b"file://",
            b"file:///C",
            b"http://1.2",
            b"ftp://a",
        ];
        const ALPHABET: &[u8] = b"a/.%2eE?#|\\:\r ";
        let mut url = Vec::new();
        let mut taken = 0;
        for start in STARTS {
            for n in 0..=4u32 {
                for mut k in 0..ALPHABET.len().pow(n) {
                    url.clear();
                    url.extend_from_slice(start);
                    for _ in 0..n {
                        url.push(ALPHABET[k % ALPHABET.len()]);
                        k /= ALPHABET.len();
                    }
                    let target = url[0] == b'/';
                    for strict in [false, true] {
                        let mut alone = Vec::new();
                        let expected = if target {
                            canonical_target(&url, strict, &mut alone)
                        } else {
                            canonical_http(&url, strict, &mut alone)
                        };
                        let expected = expected.and_then(|(_, same)| same.then_some(url.len()));
                        for rest in [&b"\n"[..], b"\nhttp://b/\n", b"\n%41\n", b"\n./"] {
                            let list = [&url[..], rest].concat();
                            let got = canonical_line(&list, strict, target);
                            let shown = list.escape_ascii().to_string();
                            assert_eq!(got, expected, "{shown:?} strict {strict}");
                            taken += usize::from(got.is_some());
                        }
                        assert_eq!(canonical_line(&url, strict, target), None);
                    }
                }
            }
        }
        assert!(taken > 10_000, "{taken}");
    }

    /// Inputs the fast path must take (they are canonical), and inputs it
    /// must leave to the general parser (they are rewritten, or, like a
    /// segment starting with '.', looked at by it out of caution). Either way
    /// the public result must equal the general parser's, which a leading
    /// space forces.
    #[test]
    fn takes_only_canonical_inputs() {
        let canonical: [&[u8]; 7] = [
            b"http://example.com/",
            b"https://a.b-c_d.example:8443/p/a.t.h?q=1&r#frag",
            b"file:///C:/dir/x.txt",
            b"file://host/share/file",
            b"file:////double",
            b"file:///",
            b"http://example.com/a%2Fb?%zz#%",
        ];
        // Canonical once the path `/` is added.
        let rooted: [&[u8]; 6] = [
            b"http://example.com",
            b"https://a.b-c_d.example:8443",
            b"file://host",
            b"file://",
            b"http://a:1",
            b"https://x",
        ];
        let general: [&[u8]; 20] = [
            b"file:///a/.hidden/b",
            b"http://example.com:80",
            b"http://Example.com",
            b"http://1.2.3.4",
            b"file://localhost",
            b"http://",
            b"HTTP://example.com/",
            b"http://Example.com/",
            b"http://example.com:80/",
            b"https://example.com:0443/",
            b"http://1.2.3.4/",
            b"http://example.com/a/./b",
            b"http://example.com/%2e/b",
            b"http://example.com/a b",
            b"file://localhost/x",
            b"file:///C|/x",
            b"file://host:80/x",
            b"file://host:80",
            b"file://C|",
            b"http://example.com/a\\b",
        ];
        for input in canonical {
            let mut out = Vec::new();
            assert!(
                canonical_http(input, false, &mut out).is_some(),
                "{}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(out, input);
        }
        for input in rooted {
            let mut out = Vec::new();
            assert!(canonical_http(input, false, &mut out).is_none());
            let mut out = b"before".to_vec();
            let (parts, same) = canonical_bare_http(input, false, &mut out).expect("taken");
            assert!(!same);
            assert_eq!(out, [&b"before"[..], input, b"/"].concat());
            assert_eq!(parts.path(&out[6..]), b"/");
        }
        for input in general.iter().chain(&canonical) {
            let mut out = Vec::new();
            assert!(canonical_bare_http(input, false, &mut out).is_none());
            assert!(out.is_empty());
        }
        for input in general {
            let mut out = Vec::new();
            assert!(
                canonical_http(input, false, &mut out).is_none(),
                "{}",
                String::from_utf8_lossy(input)
            );
            assert!(out.is_empty());
        }
        for profile in [Profile::Whatwg, Profile::Rfc3986] {
            let mut c = Canonicalizer::new(profile);
            for input in canonical.iter().chain(&rooted).chain(&general) {
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                let a = c.canonicalize_into(input, &mut fast).map(|r| r.parts);
                let spaced = [&b" "[..], input].concat();
                // Offsets count the leading space.
                let b = c
                    .canonicalize_into(&spaced, &mut slow)
                    .map(|r| r.parts)
                    .map_err(|r| crate::Reject {
                        offset: r.offset - 1,
                        ..r
                    });
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(input));
                assert_eq!(a, b, "{}", String::from_utf8_lossy(input));
            }
        }
    }

    /// What `rfc3986` escapes and the URL Standard leaves in a canonical
    /// URL (the bytes RFC 3986 excludes, a fragment's second `#`, a `%`
    /// that starts no escape): taken in `whatwg`, left to the general
    /// parser in `rfc3986`, and the public result is the general parser's.
    #[test]
    fn rfc3986_escaped_bytes_are_left_to_the_general_parser() {
        let mut c = Canonicalizer::new(Profile::Rfc3986);
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for b in b"[]|%".iter() {
            inputs.push([&b"http://a/p"[..], &[*b], b"q"].concat());
        }
        for b in b"[\\]^`{|}%".iter() {
            inputs.push([&b"http://a/?p"[..], &[*b], b"q"].concat());
            inputs.push([&b"/?p"[..], &[*b], b"q"].concat());
        }
        for b in b"[\\]^{|}#%".iter() {
            inputs.push([&b"http://a/#p"[..], &[*b], b"q"].concat());
            inputs.push([&b"/#p"[..], &[*b], b"q"].concat());
        }
        for input in &inputs {
            let input = &input[..];
            let shown = String::from_utf8_lossy(input);
            let mut out = Vec::new();
            let (whatwg, rfc3986) = if input[0] == b'/' {
                let whatwg = canonical_target(input, false, &mut out).is_some();
                (whatwg, canonical_target(input, true, &mut out))
            } else {
                let whatwg = canonical_http(input, false, &mut out).is_some();
                (whatwg, canonical_http(input, true, &mut out))
            };
            assert!(whatwg, "{shown}");
            assert!(rfc3986.is_none(), "{shown}");
            let (mut public, mut slow) = (Vec::new(), Vec::new());
            if input[0] == b'/' {
                c.canonicalize_target(input, &mut public).unwrap();
                let url = [&b" http://h"[..], input].concat();
                c.canonicalize_into(&url, &mut slow).unwrap();
                assert_eq!(&slow[8..], &public[..], "{shown}");
            } else {
                c.canonicalize_into(input, &mut public).unwrap();
                c.canonicalize_into(&[&b" "[..], input].concat(), &mut slow)
                    .unwrap();
                assert_eq!(slow, public, "{shown}");
            }
            assert!(public.windows(3).any(|w| w[0] == b'%'), "{shown}");
        }
    }

    #[test]
    fn rfc3986_escapes_are_checked() {
        let mut out = Vec::new();
        assert!(canonical_http(b"http://a/%2F%C3%A9", true, &mut out).is_some());
        for input in [&b"http://a/%7E"[..], b"http://a/?%41", b"http://a/#%7e"] {
            out.clear();
            assert!(canonical_http(input, true, &mut out).is_none());
            // Whatwg keeps escapes as they are.
            assert!(canonical_http(input, false, &mut out).is_some());
        }
    }

    /// Runs of escapes with lower-case hex at every offset from a
    /// sixteen-byte step's start, so that escapes straddle the steps and
    /// end in the tail: the fast path's copy is what the general parser
    /// writes.
    #[test]
    fn rfc3986_lower_case_escapes_across_steps() {
        let mut c = Canonicalizer::new(Profile::Rfc3986);
        for pad in 0..40 {
            for run in ["%c3%a9", "%e2%80%99%2f", "%D9%81%d8%3a%3A%2F%2f"] {
                for count in 1..6 {
                    let target = format!(
                        "/{}{}?q={}#{}",
                        "a".repeat(pad),
                        run.repeat(count),
                        run,
                        run
                    );
                    let mut fast = Vec::new();
                    let (_, unchanged) = canonical_target(target.as_bytes(), true, &mut fast)
                        .unwrap_or_else(|| panic!("{target}"));
                    assert!(!unchanged, "{target}");
                    let mut slow = Vec::new();
                    c.canonicalize_into(format!(" http://h{target}").as_bytes(), &mut slow)
                        .unwrap();
                    assert_eq!(&slow[8..], &fast[..], "{target}");
                }
            }
        }
    }

    /// Lower-case hex in escapes of reserved or non-ASCII bytes: taken by
    /// the fast path, upper-cased in the copy, and reported as changed, as
    /// the general parser (forced by a leading space) writes them.
    #[test]
    fn rfc3986_lower_case_escapes_are_upper_cased() {
        let cases: [&[u8]; 5] = [
            b"http://a/%2f",
            b"https://a.example/%c3%a9/x?q=%3a%2F#%e2%80%99",
            b"http://a/%2f%25",
            b"/%d9%81%D8?redirect=https%3a%2f%2fb",
            b"/a%2fb#%3f",
        ];
        let mut c = Canonicalizer::new(Profile::Rfc3986);
        for input in cases {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            let direct = if input[0] == b'/' {
                canonical_target(input, true, &mut fast)
            } else {
                canonical_http(input, true, &mut fast)
            };
            let (parts, unchanged) =
                direct.unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(input)));
            assert!(!unchanged, "{}", String::from_utf8_lossy(input));
            assert_eq!(parts.len as usize, fast.len());
            assert!(parts.is_consistent(&fast));
            if input[0] == b'/' {
                // A target with a leading space is no origin form: compare
                // with the URL the general parser makes of it on a host.
                let url = [&b" http://h"[..], input].concat();
                c.canonicalize_into(&url, &mut slow).unwrap();
                assert_eq!(&slow[8..], &fast[..], "{}", String::from_utf8_lossy(input));
            } else {
                let r = c
                    .canonicalize_into(&[&b" "[..], input].concat(), &mut slow)
                    .unwrap();
                assert_eq!(slow, fast, "{}", String::from_utf8_lossy(input));
                assert_eq!(parts, r.parts, "{}", String::from_utf8_lossy(input));
            }
            // The public result is the same bytes, and says it changed.
            let mut public = Vec::new();
            let r = if input[0] == b'/' {
                c.canonicalize_target(input, &mut public).unwrap()
            } else {
                c.canonicalize_into(input, &mut public).unwrap()
            };
            assert_eq!(public, fast);
            assert!(!r.unchanged);
        }
    }
}
