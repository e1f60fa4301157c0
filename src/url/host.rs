//! The URL Standard's [host parser](https://url.spec.whatwg.org/#host-parsing),
//! over bytes, writing the [host serialization](https://url.spec.whatwg.org/#host-serializing)
//! straight into the caller's buffer.
//!
//! ```text
//! input ──┬─ starts with '[' ─────────────────────> IPv6 parser ──> "[…]" (RFC 5952 form)
//!         ├─ not special ─────────────────────────> opaque-host parser (C0-control encode)
//!         └─ special ──> percent-decode ──┬─ all ASCII ──> lowercase (fast path)
//!                                         └─ otherwise ──> UTS #46 ToASCII (idna, cold)
//!                                                  │
//!                        ends in a number? ──yes──> IPv4 parser ──> dotted decimal
//! ```
//!
//! Only the IDNA slow path allocates (inside the `idna` crate); everything
//! else writes into `out` and `scratch`, which the caller reuses.
//!
//! Bytes, not code points: the Standard decodes the host as UTF-8 with
//! replacement; canonurl instead rejects a host that is not valid UTF-8
//! ([`Reason::InvalidUtf8Host`]), so that invalid log bytes never turn into
//! U+FFFD silently.

use super::class;
use super::simd;
use crate::ascii;
use crate::reject::Reason;

/// What kind of host was written to `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// A domain (special URLs only): lowercased ASCII, IDNA-processed if needed.
    Domain,
    /// An IPv4 address, serialized as dotted decimal.
    Ipv4,
    /// An IPv6 address, serialized as `[...]` in its compressed form.
    Ipv6,
    /// An opaque host (non-special URLs), percent-encoded with the C0 control set.
    Opaque,
    /// The empty host (non-special URLs only, e.g. `foo:///x`).
    Empty,
}

/// Parses `input`, the raw host bytes of a URL's authority exactly as they
/// appear in the input (tabs/newlines already removed; not yet
/// percent-decoded; an IPv6 literal still has its brackets), following the
/// URL Standard's host parser with *isOpaque* = `!special`, and appends the
/// serialized host to `out`: a domain lowercased (UTS #46 ToASCII when it
/// has non-ASCII or an `xn--` label), IPv4 as dotted decimal, IPv6 as `[...]`
/// with the first longest run of zero pieces compressed, an opaque host
/// percent-encoded with the C0 control percent-encode set.
///
/// `scratch` receives the percent-decoded bytes of a special host when the
/// input contains a `%`; it is cleared, never shrunk.
///
/// On failure returns the reason and the byte offset within `input` of the
/// offending byte (0 when there is no better position, e.g. after IDNA);
/// `out` may then hold partial bytes, which the caller truncates.
///
/// Does not allocate except in the IDNA slow path (and when `out` or
/// `scratch` must grow).
///
/// (Examples: the test `parse_host_examples`.)
pub fn parse_host(
    input: &[u8],
    special: bool,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<HostKind, (Reason, usize)> {
    // Fast path: a domain of `a-z 0-9 - . _` only has nothing to decode,
    // lower-case or check, so it is its own serialization unless it ends in
    // a number (IPv4). Anything else takes the general steps below.
    if special
        && !input.is_empty()
        && simd::find::<simd::CanonicalDomainStop>(input, 0) == input.len()
        && !ends_in_a_number(input)
    {
        out.extend_from_slice(input);
        return Ok(HostKind::Domain);
    }
    if input.first() == Some(&b'[') {
        if input.len() < 2 || input[input.len() - 1] != b']' {
            return Err((Reason::UnclosedIpv6, 0));
        }
        let address =
            parse_ipv6(&input[1..input.len() - 1]).map_err(|p| (Reason::InvalidIpv6, p + 1))?;
        write_ipv6(out, &address);
        return Ok(HostKind::Ipv6);
    }
    if !special {
        return parse_opaque_host(input, out);
    }
    if input.is_empty() {
        return Err((Reason::HostMissing, 0));
    }

    // "Let domain be the result of running UTF-8 decode without BOM on the
    // percent-decoding of input." Without a '%' the decoding is the input.
    let decoded: &[u8] = if memchr::memchr(b'%', input).is_none() {
        input
    } else {
        percent_decode_into(scratch, input);
        scratch
    };
    let was_decoded = decoded.len() != input.len();
    let offset = |pos: usize| {
        if was_decoded {
            input_offset(input, pos)
        } else {
            pos
        }
    };

    let start = out.len();
    let fast = match domain_to_ascii_fast(decoded, out, start) {
        Ok(done) => done,
        Err((reason, pos)) => return Err((reason, offset(pos))),
    };
    if !fast {
        out.truncate(start);
        domain_to_ascii_slow(decoded, out).map_err(|(reason, pos)| (reason, offset(pos)))?;
    }

    if !ends_in_a_number(&out[start..]) {
        return Ok(HostKind::Domain);
    }
    match parse_ipv4(&out[start..]) {
        Ok(address) => {
            out.truncate(start);
            write_ipv4(out, address);
            Ok(HostKind::Ipv4)
        }
        // Positions in the fast path's output are positions in `decoded`;
        // after IDNA they mean nothing in the input.
        Err(pos) => Err((Reason::InvalidIpv4, if fast { offset(pos) } else { 0 })),
    }
}

/// The [ends in a number checker](https://url.spec.whatwg.org/#ends-in-a-number-checker)
/// on ASCII bytes: whether the last label (ignoring one trailing dot) is all
/// digits or `0x`/`0X` followed by hex digits, i.e. whether the host parser
/// must treat `domain` as an IPv4 address.
///
/// (Examples: the test `parse_host_examples`.)
#[inline]
pub fn ends_in_a_number(domain: &[u8]) -> bool {
    // Cheap exit for almost every real domain, before the rest: a number
    // ends in a digit, a hex digit or the "x" of a bare "0x", maybe with a
    // "." after it.
    match domain.last() {
        Some(&b) if ENDS_A_NUMBER[b as usize] != 0 => {}
        _ => return false,
    }
    // "If the last item in parts is the empty string: if parts's size is 1,
    // return false; remove the last item from parts."
    let domain = domain.strip_suffix(b".").unwrap_or(domain);
    match domain.last() {
        Some(&b) if ENDS_A_NUMBER[b as usize] & DIGIT != 0 => {}
        _ => return false,
    }
    // Labels are short: a plain reverse scan beats a memrchr call here.
    let last = match domain.iter().rposition(|&b| b == b'.') {
        Some(dot) => &domain[dot + 1..],
        None => domain,
    };
    if ascii::is_decimal(last) {
        return true;
    }
    // "If parsing last as an IPv4 number does not return failure, return
    // true." Past the all-digits case that is only "0x" + hex digits.
    last.len() >= 2
        && last[0] == b'0'
        && (last[1] | 0x20) == b'x'
        && last[2..].iter().all(u8::is_ascii_hexdigit)
}

/// Each byte's part in the end of a number ([`ends_in_a_number`]):
/// [`DIGIT`] for a hex digit or `x`/`X`, [`DOT`] for `.`, 0 for any other.
/// A table: the three tests were about 6 instructions a URL of the fast
/// path, and the test of a last `.` before them about 4 (`benches/guard.sh`).
static ENDS_A_NUMBER: [u8; 256] = {
    let mut t = [0; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_hexdigit() || (b as u8 | 0x20) == b'x' {
            t[b] = DIGIT;
        }
        b += 1;
    }
    t[b'.' as usize] = DOT;
    t
};
/// [`ENDS_A_NUMBER`]'s flag of a byte that can end a number.
const DIGIT: u8 = 1;
/// [`ENDS_A_NUMBER`]'s flag of `.`, which can follow one.
const DOT: u8 = 2;

/// The [opaque-host parser](https://url.spec.whatwg.org/#concept-opaque-host-parser).
fn parse_opaque_host(input: &[u8], out: &mut Vec<u8>) -> Result<HostKind, (Reason, usize)> {
    if let Some(problem) = first_problem(input, class::FORBIDDEN_HOST) {
        return Err(problem);
    }
    if input.is_empty() {
        return Ok(HostKind::Empty);
    }
    class::encode_into::<super::simd::C0ControlSet>(out, input);
    Ok(HostKind::Opaque)
}

/// The first offending byte of `bytes`: a byte in `set` (reported as a
/// forbidden host or domain code point) or the start of invalid UTF-8,
/// whichever comes first.
fn first_problem(bytes: &[u8], set: u8) -> Option<(Reason, usize)> {
    let forbidden = bytes.iter().position(|&b| class::is(b, set));
    let checked = &bytes[..forbidden.unwrap_or(bytes.len())];
    if !checked.is_ascii() {
        if let Err(e) = simdutf8::compat::from_utf8(checked) {
            return Some((Reason::InvalidUtf8Host, e.valid_up_to()));
        }
    }
    forbidden.map(|i| {
        let b = bytes[i];
        let reason = if set == class::FORBIDDEN_HOST {
            Reason::ForbiddenHostCodePoint(b)
        } else {
            Reason::ForbiddenDomainCodePoint(b)
        };
        (reason, i)
    })
}

/// Whether `input[i..]` starts with `%` and two hex digits.
#[inline]
fn is_escape(input: &[u8], i: usize) -> bool {
    ascii::is_percent_escape(&input[i..])
}

/// [Percent-decodes](https://url.spec.whatwg.org/#percent-decode) `input`
/// into `scratch` (cleared first): `%` and two hex digits become that byte,
/// any other `%` stays.
pub fn percent_decode_into(scratch: &mut Vec<u8>, input: &[u8]) {
    scratch.clear();
    let mut run = 0;
    let mut i = 0;
    while let Some(found) = memchr::memchr(b'%', &input[i..]) {
        i += found;
        if is_escape(input, i) {
            scratch.extend_from_slice(&input[run..i]);
            // Both are hex digits (is_escape), so hex_pair cannot fail.
            scratch.push(ascii::hex_pair(&input[i + 1..]).unwrap_or(0));
            i += 3;
            run = i;
        } else {
            i += 1;
        }
    }
    scratch.extend_from_slice(&input[run..]);
}

/// Maps a position in the percent-decoding of `input` back to the offset in
/// `input` of the byte (or escape) that produced it.
#[cold]
#[inline(never)]
fn input_offset(input: &[u8], decoded_pos: usize) -> usize {
    let mut i = 0;
    let mut d = 0;
    while i < input.len() && d < decoded_pos {
        i += if is_escape(input, i) { 3 } else { 1 };
        d += 1;
    }
    i
}

/// The [domain to ASCII](https://url.spec.whatwg.org/#concept-domain-to-ascii)
/// fast path: for an all-ASCII domain, ToASCII (non-strict, as the URL
/// Standard parametrises it) is ASCII lowercasing, `xn--` labels included:
/// the current Standard and its web-platform-tests (`toascii.json`: `xn--a`,
/// `xn--zn7c.com`; `IdnaTestV2.json`: 994 all-ASCII inputs) keep such labels
/// as they are even when their Punycode is invalid. Older revisions of the
/// Standard (and the `idna` crate) sent `xn--` labels through UTS #46.
///
/// Appends the lowercased `decoded` to `out` and returns `Ok(true)`, or
/// `Ok(false)` when the slow path is needed (a non-ASCII byte; `out` then has
/// junk after `start`). A forbidden domain code point before
/// any non-ASCII byte is an error at its position in `decoded`.
#[inline]
fn domain_to_ascii_fast(
    decoded: &[u8],
    out: &mut Vec<u8>,
    start: usize,
) -> Result<bool, (Reason, usize)> {
    if !decoded.is_ascii() {
        return Ok(false);
    }
    out.extend_from_slice(decoded);
    let domain = &mut out[start..];
    domain.make_ascii_lowercase();
    if let Some(i) = domain
        .iter()
        .position(|&b| class::is(b, class::FORBIDDEN_DOMAIN))
    {
        return Err((Reason::ForbiddenDomainCodePoint(domain[i]), i));
    }
    Ok(true)
}

/// The general [domain to ASCII](https://url.spec.whatwg.org/#concept-domain-to-ascii):
/// UTS #46 ToASCII through the `idna` crate with the URL Standard's
/// forbidden domain code points as the ASCII deny list, then the Standard's
/// checks on the result. Appends the ASCII domain to `out`.
///
/// Allocates (inside `idna`) when the result differs from the input. Errors
/// carry positions in `decoded`; an IDNA failure has position 0.
#[cold]
#[inline(never)]
fn domain_to_ascii_slow(decoded: &[u8], out: &mut Vec<u8>) -> Result<(), (Reason, usize)> {
    if let Err(e) = simdutf8::compat::from_utf8(decoded) {
        return Err((Reason::InvalidUtf8Host, e.valid_up_to()));
    }
    // Forbidden domain code points are checked on ToASCII's result, as the
    // Standard orders it, not on its input: NFC can absorb one ("<" followed
    // by U+0338 becomes U+226E). The `idna` crate's URL deny list checks the
    // input, so it is given none and the result is checked below.
    let ascii = idna::domain_to_ascii_cow(decoded, idna::AsciiDenyList::EMPTY).map_err(|_| {
        // Name the forbidden byte when there is one: a clearer reason.
        match first_problem(decoded, class::FORBIDDEN_DOMAIN) {
            Some(problem) => problem,
            None => (Reason::IdnaFailure, 0),
        }
    })?;
    if ascii.is_empty() || has_label_decoding_to_xn(&ascii) {
        return Err((Reason::IdnaFailure, 0));
    }
    if let Some(&b) = ascii
        .as_bytes()
        .iter()
        .find(|&&b| class::is(b, class::FORBIDDEN_DOMAIN))
    {
        // Point at the byte in the input when it was there before mapping.
        let at = memchr::memchr(b, decoded).unwrap_or(0);
        return Err((Reason::ForbiddenDomainCodePoint(b), at));
    }
    out.extend_from_slice(ascii.as_bytes());
    Ok(())
}

/// UTS #46 §4.1 Validity Criteria, 4 (Unicode 15.1 and later): "If not
/// CheckHyphens, the label must not begin with “xn--”", checked on each label
/// after Punycode decoding. The URL Standard runs ToASCII with CheckHyphens
/// false; the `idna` crate 1.1 does not apply this criterion, so it is checked
/// here on ToASCII's result (only reached for non-ASCII input: all-ASCII
/// domains are lowercased only). ada applies it too.
fn has_label_decoding_to_xn(ascii: &str) -> bool {
    ascii.split('.').any(|label| {
        label.starts_with("xn--")
            && idna::punycode::decode_to_string(&label[4..])
                .is_some_and(|decoded| decoded.starts_with("xn--"))
    })
}

/// The [IPv4 number parser](https://url.spec.whatwg.org/#ipv4-number-parser),
/// saturating at `u64::MAX` (anything above 2^32 fails later anyway).
fn parse_ipv4_number(part: &[u8]) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if part.len() >= 2 && part[0] == b'0' && (part[1] | 0x20) == b'x' {
        (&part[2..], 16)
    } else if part.len() >= 2 && part[0] == b'0' {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    let mut n: u64 = 0;
    for &b in digits {
        let d = (b as char).to_digit(radix)?;
        n = n.saturating_mul(radix as u64).saturating_add(d as u64);
    }
    Some(n)
}

/// Whether the URL Standard's [IPv4 parser](https://url.spec.whatwg.org/#concept-ipv4-parser)
/// accepts `host`, ignoring validation errors: one to four dot-separated
/// decimal, octal (`0` prefix) or hex (`0x` prefix) numbers, all but the last
/// at most 255 and the last filling the bytes left (`1.2.3.4`, `0x80`,
/// `10.1`, `1.2.3.4.`). The SURT writer keeps such hosts as they are.
///
/// urlcanon's `parse_ipv4` differs on hosts that a canonical URL never has (it
/// reads an empty middle part as 0 and `0.0.0.0` as not an address).
#[inline]
pub(crate) fn is_ipv4(host: &[u8]) -> bool {
    // A host whose last label is not a number is not an address: the cheap
    // test the host parser also makes first, before parsing each part.
    ends_in_a_number(host) && parse_ipv4(host).is_ok()
}

/// The [IPv4 parser](https://url.spec.whatwg.org/#concept-ipv4-parser). The
/// host parser calls it on an ASCII domain that ends in a number; any other
/// bytes fail at the first part that is not a number. The error is the
/// offset of the part that made it fail.
fn parse_ipv4(domain: &[u8]) -> Result<u32, usize> {
    // "If the last item in parts is the empty string ... if parts's size is
    // greater than 1, then remove the last item from parts."
    let domain = match domain.strip_suffix(b".") {
        Some(rest) => rest,
        None => domain,
    };
    let mut numbers = [0u64; 4];
    let mut count = 0;
    let mut part_start = 0;
    let mut starts = [0usize; 4];
    for part in domain.split(|&b| b == b'.') {
        if count == 4 {
            return Err(part_start);
        }
        numbers[count] = parse_ipv4_number(part).ok_or(part_start)?;
        starts[count] = part_start;
        count += 1;
        part_start += part.len() + 1;
    }
    let (last, init) = numbers[..count].split_last().ok_or(0usize)?;
    if let Some(i) = init.iter().position(|&n| n > 255) {
        return Err(starts[i]);
    }
    if *last >= 1u64 << (8 * (5 - count)) {
        return Err(starts[count - 1]);
    }
    let mut address = *last;
    for (i, &n) in init.iter().enumerate() {
        address += n << (8 * (3 - i));
    }
    Ok(address as u32)
}

/// The [IPv4 serializer](https://url.spec.whatwg.org/#concept-ipv4-serializer).
pub(crate) fn write_ipv4(out: &mut Vec<u8>, address: u32) {
    for (i, octet) in address.to_be_bytes().into_iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        if octet >= 100 {
            out.push(b'0' + octet / 100);
        }
        if octet >= 10 {
            out.push(b'0' + octet / 10 % 10);
        }
        out.push(b'0' + octet % 10);
    }
}

/// The [IPv6 parser](https://url.spec.whatwg.org/#concept-ipv6-parser) on the
/// bytes between the brackets. The error is the offset of the byte where it
/// failed (possibly `s.len()`).
pub(crate) fn parse_ipv6(s: &[u8]) -> Result<[u16; 8], usize> {
    let at = |i: usize| s.get(i).copied();
    let mut address = [0u16; 8];
    let mut piece = 0usize;
    let mut compress: Option<usize> = None;
    let mut p = 0usize;

    if at(0) == Some(b':') {
        if at(1) != Some(b':') {
            return Err(1);
        }
        p = 2;
        piece = 1;
        compress = Some(piece);
    }

    while let Some(c) = at(p) {
        if piece == 8 {
            return Err(p);
        }
        if c == b':' {
            if compress.is_some() {
                return Err(p);
            }
            p += 1;
            piece += 1;
            compress = Some(piece);
            continue;
        }

        let mut value: u16 = 0;
        let mut length = 0;
        while length < 4 {
            match at(p).and_then(ascii::hex_value) {
                Some(d) => {
                    value = value * 0x10 + d as u16;
                    p += 1;
                    length += 1;
                }
                None => break,
            }
        }

        match at(p) {
            Some(b'.') => {
                if length == 0 {
                    return Err(p);
                }
                p -= length;
                if piece > 6 {
                    return Err(p);
                }
                let mut numbers_seen = 0;
                while let Some(c) = at(p) {
                    if numbers_seen > 0 {
                        if c == b'.' && numbers_seen < 4 {
                            p += 1;
                        } else {
                            return Err(p);
                        }
                    }
                    if !at(p).is_some_and(|d| d.is_ascii_digit()) {
                        return Err(p);
                    }
                    let mut ipv4_piece: Option<u16> = None;
                    while let Some(d) = at(p).filter(u8::is_ascii_digit) {
                        let n = (d - b'0') as u16;
                        ipv4_piece = match ipv4_piece {
                            None => Some(n),
                            // A leading zero ("04").
                            Some(0) => return Err(p),
                            Some(v) => Some(v * 10 + n),
                        };
                        if ipv4_piece > Some(255) {
                            return Err(p);
                        }
                        p += 1;
                    }
                    // The first number of a pair leaves at most 255 here, so
                    // this fits in a u16.
                    address[piece] = address[piece] * 0x100 + ipv4_piece.unwrap_or(0);
                    numbers_seen += 1;
                    if numbers_seen == 2 || numbers_seen == 4 {
                        piece += 1;
                    }
                }
                if numbers_seen != 4 {
                    return Err(p);
                }
                break;
            }
            Some(b':') => {
                p += 1;
                if at(p).is_none() {
                    return Err(p);
                }
            }
            Some(_) => return Err(p),
            None => {}
        }
        address[piece] = value;
        piece += 1;
    }

    match compress {
        Some(compress) => {
            let mut swaps = piece - compress;
            piece = 7;
            while piece != 0 && swaps > 0 {
                address.swap(piece, compress + swaps - 1);
                piece -= 1;
                swaps -= 1;
            }
        }
        None if piece != 8 => return Err(s.len()),
        None => {}
    }
    Ok(address)
}

/// The [IPv6 serializer](https://url.spec.whatwg.org/#concept-ipv6-serializer),
/// with the brackets the host serializer adds: lowercase hex without leading
/// zeros, the first longest run of two or more zero pieces written as `::`.
fn write_ipv6(out: &mut Vec<u8>, address: &[u16; 8]) {
    let (mut compress, mut best) = (8, 1);
    let mut i = 0;
    while i < 8 {
        if address[i] == 0 {
            let run_start = i;
            while i < 8 && address[i] == 0 {
                i += 1;
            }
            if i - run_start > best {
                compress = run_start;
                best = i - run_start;
            }
        } else {
            i += 1;
        }
    }

    out.push(b'[');
    let mut i = 0;
    while i < 8 {
        if i == compress {
            out.extend_from_slice(if i == 0 { b"::" } else { b":" });
            i += best;
            continue;
        }
        let piece = address[i];
        let mut started = false;
        for shift in [12, 8, 4, 0] {
            let d = (piece >> shift) & 15;
            if d != 0 || started || shift == 0 {
                out.push(crate::ascii::HEX_LOWER[d as usize]);
                started = true;
            }
        }
        if i != 7 {
            out.push(b':');
        }
        i += 1;
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_host_examples() {
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        assert_eq!(
            parse_host(b"EXAMPLE.com", true, &mut out, &mut scratch),
            Ok(HostKind::Domain)
        );
        assert_eq!(out, b"example.com");
        out.clear();
        assert_eq!(
            parse_host(b"0x7f.1", true, &mut out, &mut scratch),
            Ok(HostKind::Ipv4)
        );
        assert_eq!(out, b"127.0.0.1");
        assert!(ends_in_a_number(b"example.123."));
        assert!(ends_in_a_number(b"foo.0x"));
        assert!(!ends_in_a_number(b"example.1a"));
    }

    fn host(input: &[u8], special: bool) -> Result<(HostKind, String), (Reason, usize)> {
        let mut out = b"prefix/".to_vec();
        let mut scratch = Vec::new();
        let kind = parse_host(input, special, &mut out, &mut scratch)?;
        assert!(out.starts_with(b"prefix/"), "the prefix was overwritten");
        Ok((kind, String::from_utf8(out[7..].to_vec()).unwrap()))
    }

    fn ok(input: &str, kind: HostKind, expected: &str) {
        let special = !matches!(kind, HostKind::Opaque | HostKind::Empty);
        assert_eq!(
            host(input.as_bytes(), special),
            Ok((kind, expected.to_string())),
            "{input:?}"
        );
    }

    fn domain(input: &str, expected: &str) {
        ok(input, HostKind::Domain, expected);
    }

    fn ipv4(input: &str, expected: &str) {
        ok(input, HostKind::Ipv4, expected);
    }

    fn ipv6(input: &str, expected: &str) {
        ok(input, HostKind::Ipv6, expected);
    }

    fn err(input: &[u8], special: bool) -> Reason {
        match host(input, special) {
            Ok(r) => panic!("{:?} parsed as {r:?}", String::from_utf8_lossy(input)),
            Err((reason, offset)) => {
                assert!(offset <= input.len(), "offset {offset} past {input:?}");
                reason
            }
        }
    }

    #[test]
    fn ipv4_forms() {
        ipv4("1.2.3.4", "1.2.3.4");
        ipv4("0x7f.1", "127.0.0.1");
        ipv4("0X7F.0.0.1", "127.0.0.1");
        ipv4("0177.0.0.1", "127.0.0.1");
        ipv4("0.0.65535", "0.0.255.255");
        ipv4("1.65536", "1.1.0.0");
        ipv4("4294967295", "255.255.255.255");
        ipv4("0xffffffff", "255.255.255.255");
        ipv4("0", "0.0.0.0");
        ipv4("00", "0.0.0.0");
        ipv4("0x", "0.0.0.0");
        ipv4("0x.0X.0", "0.0.0.0");
        ipv4("1.2.3.4.", "1.2.3.4");
        ipv4("127.1", "127.0.0.1");
        ipv4("%31.2.3.4", "1.2.3.4");
        ipv4("010.0xa.10.1", "8.10.10.1");
        ipv4("0000000000000000000000000000000000000001.1", "1.0.0.1");
    }

    #[test]
    fn ipv4_failures() {
        for bad in [
            "0.16777216",
            "4294967296",
            "0x100000000",
            "99999999999999999999999999",
            "1.2.3.4.5",
            "1.2.3.256",
            "256.1.1.1",
            "1.2.65536",
            "08",
            "09.1.1.1",
            "foo.09",
            "foo.0x",
            "1.2.3.09",
            "1..2",
            ".1",
            "0x1g.1",
        ] {
            assert_eq!(err(bad.as_bytes(), true), Reason::InvalidIpv4, "{bad:?}");
        }
        // The offset points at the failing part.
        let mut out = Vec::new();
        let r = parse_host(b"1.2.3.09", true, &mut out, &mut Vec::new());
        assert_eq!(r, Err((Reason::InvalidIpv4, 6)));
        let r = parse_host(b"%31.2.3.09", true, &mut out, &mut Vec::new());
        assert_eq!(r, Err((Reason::InvalidIpv4, 8)));
    }

    #[test]
    fn not_numbers_are_domains() {
        domain("example.1a", "example.1a");
        domain("1.2.3.4x", "1.2.3.4x");
        domain("0x1g", "0x1g");
        domain("1.2.3.4..", "1.2.3.4..");
    }

    #[test]
    fn ends_in_a_number_checker() {
        for yes in [
            "1", "a.1", "a.1.", "0x", "0X", "a.0xAbC", "1.2.3.4", "09", "a.0x.",
        ] {
            assert!(ends_in_a_number(yes.as_bytes()), "{yes:?}");
        }
        for no in [
            "", ".", "a", "a.1a", "a.1..", "0x1g", "x0", "1.a", "a..", "0xx",
        ] {
            assert!(!ends_in_a_number(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn ipv6_serialization() {
        ipv6("[0:0:1:0:0:0:0:1]", "[0:0:1::1]");
        ipv6("[1:0:0:2:0:0:0:0]", "[1:0:0:2::]");
        ipv6("[1:0:0:2:0:0:3:4]", "[1::2:0:0:3:4]");
        ipv6("[1:0:2:0:3:0:4:0]", "[1:0:2:0:3:0:4:0]");
        ipv6("[::]", "[::]");
        ipv6("[::1]", "[::1]");
        ipv6("[1::]", "[1::]");
        ipv6("[0::0]", "[::]");
        ipv6("[::ffff:1.2.3.4]", "[::ffff:102:304]");
        ipv6("[::1.2.3.0]", "[::102:300]");
        ipv6("[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:102:304]");
        ipv6("[ABCD:EF01::0001:00A0]", "[abcd:ef01::1:a0]");
        ipv6("[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8]");
        ipv6("[1:2:3:4:5:6:7::]", "[1:2:3:4:5:6:7:0]");
        ipv6("[::2:3:4:5:6:7:8]", "[0:2:3:4:5:6:7:8]");
    }

    #[test]
    fn ipv6_failures() {
        for bad in [
            "[1::2::3]",
            "[1:2:3:4:5:6:7:8:9]",
            "[1:2:3:4:5:6:7]",
            "[::1.2.3.04]",
            "[::1.2.3]",
            "[::1.2.3.4.5]",
            "[::1.2.3.256]",
            "[1:2:3:4:5:6:7:1.2.3.4]",
            "[::a1.2.3.4]",
            "[::.1.2.3]",
            "[:1]",
            "[1:]",
            "[12345::]",
            "[::g]",
            "[]",
            "[%31::]",
            "[::1%25eth0]",
            "[1:2:3:4::5:6:7:8]",
        ] {
            assert_eq!(err(bad.as_bytes(), true), Reason::InvalidIpv6, "{bad:?}");
            assert_eq!(err(bad.as_bytes(), false), Reason::InvalidIpv6, "{bad:?}");
        }
        assert_eq!(err(b"[::1", true), Reason::UnclosedIpv6);
        assert_eq!(err(b"[", false), Reason::UnclosedIpv6);
        assert_eq!(err(b"[::1]x", true), Reason::UnclosedIpv6);
        // The offset is within the input, at the offending byte.
        let r = parse_host(b"[::g]", true, &mut Vec::new(), &mut Vec::new());
        assert_eq!(r, Err((Reason::InvalidIpv6, 3)));
    }

    #[test]
    fn opaque_hosts() {
        ok("Example.COM", HostKind::Opaque, "Example.COM");
        ok("a%zz%41", HostKind::Opaque, "a%zz%41");
        ok("h\u{e9}!$", HostKind::Opaque, "h%C3%A9!$");
        ok("a\x7fb", HostKind::Opaque, "a%7Fb");
        ok("1.2.3.4", HostKind::Opaque, "1.2.3.4");
        ok("xn--ls8h", HostKind::Opaque, "xn--ls8h");
        ok("", HostKind::Empty, "");
        for b in [
            0u8, b'\t', b' ', b'#', b'/', b':', b'<', b'>', b'?', b'@', b'\\', b'^', b'|',
        ] {
            let input = [b'a', b, b'b'];
            assert_eq!(
                host(&input, false),
                Err((Reason::ForbiddenHostCodePoint(b), 1)),
                "{b:#x}"
            );
        }
        assert_eq!(host(b"a\xffb", false), Err((Reason::InvalidUtf8Host, 1)));
        // The first offending byte wins.
        assert_eq!(
            host(b"a|\xff", false),
            Err((Reason::ForbiddenHostCodePoint(b'|'), 1))
        );
        assert_eq!(host(b"\xff|", false), Err((Reason::InvalidUtf8Host, 0)));
    }

    #[test]
    fn ascii_domains() {
        domain("EXAMPLE.com", "example.com");
        domain("ex%41mple.com", "example.com");
        domain("ex%41mple.com.", "example.com.");
        domain("a..b", "a..b");
        domain("under_score.-dash-", "under_score.-dash-");
        domain("%78n.com", "xn.com");
        assert_eq!(
            host(b"a%25b", true),
            Err((Reason::ForbiddenDomainCodePoint(b'%'), 1))
        );
        assert_eq!(
            host(b"ex%00ample", true),
            Err((Reason::ForbiddenDomainCodePoint(0), 2))
        );
        assert_eq!(
            host(b"a%zz", true),
            Err((Reason::ForbiddenDomainCodePoint(b'%'), 1))
        );
        assert_eq!(
            host(b"a b", true),
            Err((Reason::ForbiddenDomainCodePoint(b' '), 1))
        );
        assert_eq!(
            host(b"a\x7f", true),
            Err((Reason::ForbiddenDomainCodePoint(0x7f), 1))
        );
        assert_eq!(
            host(b"a|", true),
            Err((Reason::ForbiddenDomainCodePoint(b'|'), 1))
        );
        assert_eq!(host(b"", true), Err((Reason::HostMissing, 0)));
    }

    #[test]
    fn idna_domains() {
        domain("fa\u{df}.de", "xn--fa-hia.de");
        domain("fa%C3%9F.DE", "xn--fa-hia.de");
        domain("xn--fa-hia.de", "xn--fa-hia.de");
        domain("XN--FA-HIA.de", "xn--fa-hia.de");
        domain("a.Xn--fa-hia", "a.xn--fa-hia");
        domain("\u{FF21}.com", "a.com");
        // Full-width digits map to ASCII digits, and then it is an IPv4 address.
        ipv4("\u{FF11}.2.3.4", "1.2.3.4");
        // Bad punycode in an all-ASCII domain is kept (current URL Standard).
        domain("xn--a.com", "xn--a.com");
        domain("XN--", "xn--");
        // ... but not next to a non-ASCII label, which sends the whole domain through UTS #46.
        assert_eq!(err("xn--a.\u{df}".as_bytes(), true), Reason::IdnaFailure);
        // U+00AD SOFT HYPHEN maps to nothing.
        assert_eq!(err("\u{AD}".as_bytes(), true), Reason::IdnaFailure);
        // Forbidden after mapping (full-width '%').
        assert!(matches!(
            err("a\u{FF05}b".as_bytes(), true),
            Reason::IdnaFailure | Reason::ForbiddenDomainCodePoint(b'%')
        ));
        // Forbidden ASCII next to non-ASCII is reported as such, at its offset.
        assert_eq!(
            host("\u{e9}%25".as_bytes(), true),
            Err((Reason::ForbiddenDomainCodePoint(b'%'), 2))
        );
        assert_eq!(
            host(b"xn--a.b c", true),
            Err((Reason::ForbiddenDomainCodePoint(b' '), 7))
        );
    }

    #[test]
    fn invalid_utf8_domains() {
        assert_eq!(host(b"a\xffb", true), Err((Reason::InvalidUtf8Host, 1)));
        assert_eq!(host(b"ab%FF", true), Err((Reason::InvalidUtf8Host, 2)));
        assert_eq!(host(b"a%C3", true), Err((Reason::InvalidUtf8Host, 1)));
        assert_eq!(host(b"a\xc3|", true), Err((Reason::InvalidUtf8Host, 1)));
        // Valid when decoded: %C3%A9 is U+00E9.
        domain("%C3%A9", "xn--9ca");
    }

    #[test]
    fn percent_decoding() {
        let mut scratch = b"junk".to_vec();
        percent_decode_into(&mut scratch, b"%41%4a%zz%4%");
        assert_eq!(scratch, b"AJ%zz%4%");
        percent_decode_into(&mut scratch, b"x%41");
        assert_eq!(scratch, b"xA");
        assert_eq!(input_offset(b"%41b%42c", 0), 0);
        assert_eq!(input_offset(b"%41b%42c", 1), 3);
        assert_eq!(input_offset(b"%41b%42c", 2), 4);
        assert_eq!(input_offset(b"%41b%42c", 3), 7);
        assert_eq!(input_offset(b"%4b", 1), 3);
    }

    #[test]
    fn scratch_and_out_are_reused() {
        let mut out = Vec::with_capacity(64);
        let mut scratch = Vec::with_capacity(64);
        for _ in 0..3 {
            out.clear();
            assert_eq!(
                parse_host(b"E%58ample.com", true, &mut out, &mut scratch),
                Ok(HostKind::Domain)
            );
            assert_eq!(out, b"example.com");
        }
        assert!(scratch.capacity() >= 64);
    }
}
