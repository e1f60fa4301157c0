//! Byte-class tables for the WHATWG URL Standard's percent-encode sets and
//! forbidden code points, one bit per class, built at compile time.
//!
//! Input is bytes, not code points: every byte of 0x80 or above is in every
//! percent-encode set, so a non-ASCII code point is written as the
//! percent-escapes of its UTF-8 bytes, as the Standard's "UTF-8 percent-encode"
//! does. A test checks all 256 entries against plain predicates.

use super::simd::{self, ByteSet};

/// "The C0 control percent-encode set are the C0 controls and all code points
/// greater than U+007E (~)."
pub const C0_CONTROL: u8 = 1 << 0;
/// "The fragment percent-encode set is the C0 control percent-encode set and
/// U+0020 SPACE, U+0022 ("), U+003C (<), U+003E (>), and U+0060 (`)."
pub const FRAGMENT: u8 = 1 << 1;
/// "The query percent-encode set is the C0 control percent-encode set and
/// U+0020 SPACE, U+0022 ("), U+0023 (#), U+003C (<), and U+003E (>)."
pub const QUERY: u8 = 1 << 2;
/// "The special-query percent-encode set is the query percent-encode set and
/// U+0027 (')."
pub const SPECIAL_QUERY: u8 = 1 << 3;
/// "The path percent-encode set is the query percent-encode set and U+003F (?),
/// U+005E (^), U+0060 (`), U+007B ({), and U+007D (})."
pub const PATH: u8 = 1 << 4;
/// "The userinfo percent-encode set is the path percent-encode set and U+002F
/// (/), U+003A (:), U+003B (;), U+003D (=), U+0040 (@), U+005B ([) to U+005E
/// (^), inclusive, and U+007C (|)."
pub const USERINFO: u8 = 1 << 5;
/// "A forbidden host code point is U+0000 NULL, U+0009 TAB, U+000A LF, U+000D
/// CR, U+0020 SPACE, U+0023 (#), U+002F (/), U+003A (:), U+003C (<), U+003E
/// (>), U+003F (?), U+0040 (@), U+005B ([), U+005C (\), U+005D (]), U+005E
/// (^), or U+007C (|)."
pub const FORBIDDEN_HOST: u8 = 1 << 6;
/// "A forbidden domain code point is a forbidden host code point, a C0
/// control, U+0025 (%), or U+007F DELETE."
pub const FORBIDDEN_DOMAIN: u8 = 1 << 7;

const fn classes(b: u8) -> u8 {
    let mut set = 0;
    let c0 = b < 0x20 || b > 0x7e;
    if c0 {
        set |= C0_CONTROL;
    }
    let fragment = c0 || matches!(b, b' ' | b'"' | b'<' | b'>' | b'`');
    if fragment {
        set |= FRAGMENT;
    }
    let query = c0 || matches!(b, b' ' | b'"' | b'#' | b'<' | b'>');
    if query {
        set |= QUERY;
    }
    if query || b == b'\'' {
        set |= SPECIAL_QUERY;
    }
    let path = query || matches!(b, b'?' | b'^' | b'`' | b'{' | b'}');
    if path {
        set |= PATH;
    }
    if path || matches!(b, b'/' | b':' | b';' | b'=' | b'@' | b'['..=b'^' | b'|') {
        set |= USERINFO;
    }
    let forbidden_host = matches!(
        b,
        0 | b'\t'
            | b'\n'
            | b'\r'
            | b' '
            | b'#'
            | b'/'
            | b':'
            | b'<'
            | b'>'
            | b'?'
            | b'@'
            | b'['
            | b'\\'
            | b']'
            | b'^'
            | b'|'
    );
    if forbidden_host {
        set |= FORBIDDEN_HOST;
    }
    if forbidden_host || b < 0x20 || b == b'%' || b == 0x7f {
        set |= FORBIDDEN_DOMAIN;
    }
    set
}

const fn build() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = classes(i as u8);
        i += 1;
    }
    t
}

/// The class bits of every byte.
pub static CLASS: [u8; 256] = build();

/// Whether `b` is in the class (or union of classes) `set`.
#[inline(always)]
pub fn is(b: u8, set: u8) -> bool {
    CLASS[b as usize] & set != 0
}

/// Upper-case hex digits, for writing percent-escapes.
pub use crate::ascii::HEX_UPPER;

/// Appends `%XX` for `b`.
#[inline]
pub fn push_escape(out: &mut Vec<u8>, b: u8) {
    let [h, l] = crate::ascii::hex_upper(b);
    out.extend_from_slice(&[b'%', h, l]);
}

/// Appends `input` to `out`, percent-encoding every byte in the set `S`.
/// Runs of bytes that need nothing are found with [`simd::find`] and copied
/// whole.
#[inline]
pub fn encode_into<S: ByteSet>(out: &mut Vec<u8>, input: &[u8]) {
    let mut run = 0;
    loop {
        let i = simd::find::<S>(input, run);
        out.extend_from_slice(&input[run..i]);
        let Some(&b) = input.get(i) else { return };
        push_escape(out, b);
        run = i + 1;
    }
}

/// RFC 3986 §2.3: "unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"".
#[inline]
pub const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_matches_plain_predicates() {
        for b in 0..=255u8 {
            let c = b as char;
            let c0 = !(0x20..=0x7e).contains(&b);
            assert_eq!(is(b, C0_CONTROL), c0, "C0 {b:#x}");
            assert_eq!(
                is(b, FRAGMENT),
                c0 || " \"<>`".contains(c),
                "fragment {b:#x}"
            );
            assert_eq!(is(b, QUERY), c0 || " \"#<>".contains(c), "query {b:#x}");
            assert_eq!(is(b, SPECIAL_QUERY), c0 || " \"#<>'".contains(c));
            assert_eq!(is(b, PATH), c0 || " \"#<>?^`{}".contains(c), "path {b:#x}");
            assert_eq!(
                is(b, USERINFO),
                c0 || " \"#<>?^`{}/:;=@[\\]|".contains(c),
                "userinfo {b:#x}"
            );
            let fh = b < 0x80 && "\0\t\n\r #/:<>?@[\\]^|".contains(c);
            assert_eq!(is(b, FORBIDDEN_HOST), fh, "forbidden host {b:#x}");
            assert_eq!(
                is(b, FORBIDDEN_DOMAIN),
                fh || b < 0x20 || b == b'%' || b == 0x7f,
                "forbidden domain {b:#x}"
            );
        }
    }

    #[test]
    fn encode_copies_runs_and_escapes() {
        let mut out = Vec::new();
        encode_into::<simd::PathSet>(&mut out, b"a b\xffc");
        assert_eq!(out, b"a%20b%FFc");
        out.clear();
        encode_into::<simd::PathSet>(&mut out, b"0123456789abcdef{0123456789}");
        assert_eq!(out, b"0123456789abcdef%7B0123456789%7D");
    }
}
