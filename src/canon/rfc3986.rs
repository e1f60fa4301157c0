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

use crate::url::class::{hex_value, HEX_UPPER};
use crate::url::fast::is_unreserved;
use crate::url::parts::{Parts, ABSENT};

/// Normalizes the escapes in `out[start..]` in place (the URL only shrinks) and
/// moves the offsets in `parts` to match.
pub fn normalize_escapes(out: &mut Vec<u8>, start: usize, parts: &mut Parts) {
    let Some(first) = memchr::memchr(b'%', &out[start..]) else {
        return;
    };
    rewrite(out, start, start + first, parts);
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
        compact(out, &mut r, &mut w, start + *offset as usize);
        *offset = (w - start) as u32;
    }
    let len = out.len();
    compact(out, &mut r, &mut w, len);
    out.truncate(w);
    parts.len = (w - start) as u32;
}

/// Rewrites `out[*r..end]` to `out[*w..]` (`*w <= *r`), normalizing escapes.
fn compact(out: &mut [u8], r: &mut usize, w: &mut usize, end: usize) {
    while *r < end {
        let b = out[*r];
        if b == b'%' && *r + 2 < end {
            if let (Some(h), Some(l)) = (hex_value(out[*r + 1]), hex_value(out[*r + 2])) {
                let v = h << 4 | l;
                if is_unreserved(v) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let parts = Parts {
            scheme_end: 4,
            username_start: 7,
            username_end: 7,
            password_start: 7,
            password_end: 7,
            host_start: 7,
            host_end: 8,
            path_start: 8,
            query_start: 19,
            fragment_start: 27,
            len: url.len() as u32,
            special: true,
            ..Parts::default()
        };
        let (out, p) = run(url, parts);
        assert_eq!(out, b"http://a/~user%2F?A=%2B#Z%zz");
        assert!(p.is_consistent(&out));
        assert_eq!(p.path(&out), b"/~user%2F");
        assert_eq!(p.query(&out), Some(&b"A=%2B"[..]));
        assert_eq!(p.fragment(&out), Some(&b"Z%zz"[..]));
    }

    #[test]
    fn reserved_escapes_stay() {
        let url = b"http://a/%2F%3F%23%26%3D%2B%25";
        let parts = Parts {
            scheme_end: 4,
            host_start: 7,
            host_end: 8,
            path_start: 8,
            len: url.len() as u32,
            ..Parts::default()
        };
        let (out, _) = run(url, parts);
        assert_eq!(out, url);
    }
}
