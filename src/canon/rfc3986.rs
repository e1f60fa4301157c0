//! RFC 3986 §6.2.2 normalization of percent-escapes, the step that the
//! `rfc3986` profile adds to the WHATWG serialization.
//!
//! - §6.2.2.1: "For all URIs, the hexadecimal digits within a percent-encoding
//!   triplet (e.g., "%3a" versus "%3A") are case-insensitive and therefore
//!   should be normalized to use uppercase letters for the digits A-F."
//! - §6.2.2.2: "URIs should be normalized by decoding any percent-encoded octet
//!   that corresponds to an unreserved character", unreserved being
//!   `ALPHA DIGIT - . _ ~` (§2.3).
//!
//! Reserved characters are never decoded: `%2F` and `/` differ in meaning.
//! A `%` not followed by two hex digits is left as it is. Scheme and host case
//! (§6.2.2.1) and dot segments (§6.2.2.3) are already handled by the WHATWG
//! parser; the WHATWG parser never writes an unreserved character as an escape,
//! so decoding here can not undo its work.

use crate::ascii::hex_value;
use crate::url::class::{is_unreserved, HEX_UPPER};
use crate::url::parts::{Parts, ABSENT};

/// Normalizes the escapes in `out[start..]` in place (the URL only shrinks) and
/// moves the offsets in `parts` to match.
pub fn normalize_escapes(out: &mut Vec<u8>, start: usize, parts: &mut Parts) {
    let Some(first) = memchr::memchr(b'%', &out[start..]) else {
        return;
    };
    rewrite(out, start, start + first, parts);
    if parts.scheme(&out[start..]) == Some(&b"file"[..]) {
        normalize_drive_letter(&mut out[start..], parts);
    }
}

/// Decoding can turn a first path segment like `%43|` into `C|`, which the URL
/// Standard reads as the Windows drive letter `C:`; finish that step here so
/// that the output is stable when parsed again ("If url's scheme is "file",
/// url's path is empty, and buffer is a Windows drive letter, then replace the
/// second code point in buffer with U+003A (:)").
fn normalize_drive_letter(url: &mut [u8], parts: &Parts) {
    let ps = parts.path_start as usize;
    let path = &url[ps..parts.path_end() as usize];
    if path.len() >= 3
        && path[1].is_ascii_alphabetic()
        && path[2] == b'|'
        && (path.len() == 3 || path[3] == b'/')
    {
        url[ps + 2] = b':';
    }
}

#[cold]
#[inline(never)]
fn rewrite(out: &mut Vec<u8>, start: usize, first: usize, parts: &mut Parts) {
    // Component boundaries in the order they appear in the URL. Escapes never
    // straddle one (each boundary is a delimiter), so the URL is compacted one
    // component at a time and each boundary moves to where its byte lands.
    let boundaries: [&mut u32; 9] = [
        &mut parts.username_start,
        &mut parts.username_end,
        &mut parts.password_start,
        &mut parts.password_end,
        &mut parts.host_start,
        &mut parts.host_end,
        &mut parts.path_start,
        &mut parts.query_start,
        &mut parts.fragment_start,
    ];
    let (mut r, mut w) = (first, first);
    for offset in boundaries {
        if *offset == ABSENT || start + (*offset as usize) < first {
            continue;
        }
        compact(out, start, &mut r, &mut w, start + *offset as usize);
        *offset = (w - start) as u32;
    }
    let len = out.len();
    compact(out, start, &mut r, &mut w, len);
    out.truncate(w);
    parts.len = (w - start) as u32;
}

/// Rewrites `out[*r..end]` to `out[*w..]` (`*w <= *r`), normalizing escapes.
/// `floor` is where the URL starts.
fn compact(out: &mut [u8], floor: usize, r: &mut usize, w: &mut usize, end: usize) {
    while *r < end {
        let b = out[*r];
        if b == b'%' && *r + 2 < end {
            if let (Some(h), Some(l)) = (hex_value(out[*r + 1]), hex_value(out[*r + 2])) {
                let v = h << 4 | l;
                if is_unreserved(v) && !joins_bare_percent(out, floor, *w, v) {
                    out[*w] = v;
                    *w += 1;
                } else {
                    out[*w] = b'%';
                    out[*w + 1] = HEX_UPPER[h as usize];
                    out[*w + 2] = HEX_UPPER[l as usize];
                    *w += 3;
                }
                *r += 3;
                continue;
            }
        }
        out[*w] = b;
        *w += 1;
        *r += 1;
    }
}

/// Whether writing the decoded byte `v` at `w` would complete a new escape
/// with a bare `%` already written (`%%34%31` must not become `%41`). A `%`
/// in the output before `w` is bare: escapes are written three bytes at once.
fn joins_bare_percent(out: &[u8], floor: usize, w: usize, v: u8) -> bool {
    if !v.is_ascii_hexdigit() {
        return false;
    }
    let prev = |k: usize| (w >= floor + k).then(|| out[w - k]);
    prev(1) == Some(b'%')
        || (prev(2) == Some(b'%') && prev(1).is_some_and(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts of `scheme://host` + path..., with no userinfo or port; the
    /// query and fragment offsets are given by the caller.
    fn parts(url: &[u8], scheme_end: u32, host_end: u32, query: u32, fragment: u32) -> Parts {
        let host_start = scheme_end + 3;
        Parts {
            scheme_end,
            username_start: host_start,
            username_end: host_start,
            password_start: host_start,
            password_end: host_start,
            host_start,
            host_end,
            path_start: host_end,
            query_start: query,
            fragment_start: fragment,
            len: url.len() as u32,
            special: true,
            ..Parts::default()
        }
    }

    fn run(url: &[u8], mut parts: Parts) -> (Vec<u8>, Parts) {
        let mut out = b"prefix".to_vec();
        out.extend_from_slice(url);
        normalize_escapes(&mut out, 6, &mut parts);
        assert_eq!(&out[..6], b"prefix");
        (out[6..].to_vec(), parts)
    }

    #[test]
    fn decodes_unreserved_uppercases_the_rest_and_moves_offsets() {
        // http://a/%7euser%2f?%41=%2b#%5a%zz
        let url = b"http://a/%7euser%2f?%41=%2b#%5a%zz";
        let parts = parts(url, 4, 8, 19, 27);
        let (out, p) = run(url, parts);
        assert_eq!(out, b"http://a/~user%2F?A=%2B#Z%zz");
        assert!(p.is_consistent(&out));
        assert_eq!(p.path(&out), b"/~user%2F");
        assert_eq!(p.query(&out), Some(&b"A=%2B"[..]));
        assert_eq!(p.fragment(&out), Some(&b"Z%zz"[..]));
    }

    #[test]
    fn decoded_drive_letter_is_normalized_like_the_url_standard_would() {
        let url = b"file:///%43|/x";
        let parts = parts(url, 4, 7, ABSENT, ABSENT);
        let (out, p) = run(url, parts);
        assert_eq!(out, b"file:///C:/x");
        assert_eq!(p.path(&out), b"/C:/x");
        // `%7C` is reserved: it stays, and `C%7C` is no drive letter.
        let url = b"file:///%43%7C/x";
        let (out, _) = run(
            url,
            Parts {
                len: url.len() as u32,
                ..parts
            },
        );
        assert_eq!(out, b"file:///C%7C/x");
    }

    #[test]
    fn never_completes_an_escape_with_a_bare_percent() {
        for (input, expected) in [
            (&b"http://a/%%34%31"[..], &b"http://a/%%341"[..]),
            (b"http://a/%4%31x", b"http://a/%4%31x"),
            (b"http://a/%%7e", b"http://a/%~"),
            (b"http://a/%%34G", b"http://a/%%34G"),
        ] {
            let (out, _) = run(input, parts(input, 4, 8, ABSENT, ABSENT));
            assert_eq!(out, expected, "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn reserved_escapes_stay() {
        let url = b"http://a/%2F%3F%23%26%3D%2B%25";
        let (out, _) = run(url, parts(url, 4, 8, ABSENT, ABSENT));
        assert_eq!(out, url);
    }
}
