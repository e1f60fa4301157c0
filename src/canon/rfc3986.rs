//! RFC 3986 normalization, the step that the `rfc3986` profile adds to the
//! WHATWG serialization. Its output is a URI by the grammar of RFC 3986
//! Appendix A (or, for a path-only request target, an origin-form target of
//! RFC 9112 §3.2.1: that grammar's `absolute-path [ "?" query ]`).
//!
//! - §6.2.2.1: "For all URIs, the hexadecimal digits within a percent-encoding
//!   triplet (e.g., "%3a" versus "%3A") are case-insensitive and therefore
//!   should be normalized to use uppercase letters for the digits A-F", and
//!   "the scheme and host are case-insensitive and therefore should be
//!   normalized to lowercase". The URL Standard lower-cases the scheme and a
//!   special URL's host but keeps an opaque host (a non-special URL's, as in
//!   `sftp://u@www.EXAMPLE.com/`) as written: it is lower-cased here.
//! - §6.2.2.2: "URIs should be normalized by decoding any percent-encoded octet
//!   that corresponds to an unreserved character", unreserved being
//!   `ALPHA DIGIT - . _ ~` (§2.3). Reserved characters are never decoded:
//!   `%2F` and `/` differ in meaning.
//! - §2.1 and Appendix A: an octet outside a component's allowed set is
//!   written as its escape. The URL Standard leaves some of them literal,
//!   which RFC 3986 allows nowhere: space (in an opaque path), `"` `<` `>`
//!   `\` `^` `` ` `` `{` `|` `}` (a special URL's domain may hold `"` `` ` ``
//!   `{` `}`, an opaque host those and `%`, the query and fragment most of
//!   them), `[` `]` outside an IP literal, `#` inside a fragment, and a `%`
//!   that starts no escape (written `%25`, as §2.4 says a data octet `%` is).
//!   Every URI with one of them written as its escape means the same to the
//!   URL Standard (which decodes a domain, and keeps escapes elsewhere), so
//!   each gets that one spelling.
//!
//! Dot segments (§6.2.2.3) are already handled by the WHATWG parser. It never
//! writes an unreserved character as an escape, so decoding here can not undo
//! its work; and since every `%` left in the output starts an escape, a
//! decoded hex digit can never complete a new one (`%%34%31` is `%2541`).

use crate::ascii::hex_value;
use crate::url::class::{is_unreserved, push_escape, HEX_UPPER};
use crate::url::parts::{Parts, ABSENT};
use crate::url::simd::{dispatch, find, find_with, Chunk, Job, Rfc3986FragmentStop, Rfc3986Stop};

/// Normalizes `out[start..]` (a URL the WHATWG parser wrote, described by
/// `parts`) and moves the offsets in `parts` to match. `tail` is scratch
/// space, reused from call to call.
///
/// Not inlined: its caller, `Canonicalizer::run_parser`, has the whole
/// parser inlined and runs for every profile, while only `rfc3986` and the
/// profiles above it need this scan.
#[inline(never)]
pub fn normalize(out: &mut Vec<u8>, start: usize, parts: &mut Parts, tail: &mut Vec<u8>) {
    let url = &out[start..];
    let first = dispatch(FirstChange { url, parts });
    if first < url.len() {
        rewrite(out, start, start + first, parts, tail);
    }
}

/// A component's rules beyond the ones every component follows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Context {
    /// Escapes and excluded bytes only.
    Plain,
    /// A non-special URL's host: lower-cased too.
    OpaqueHost,
    /// `[` IPv6 `]`, which the parser wrote canonical, brackets included.
    IpLiteral,
    /// The fragment after its `#`, where a `#` is excluded too.
    Fragment,
}

/// The host's context, or `None` when the URL has no host.
fn host_context(url: &[u8], parts: &Parts) -> Option<Context> {
    if parts.host_start == ABSENT {
        return None;
    }
    Some(if url.get(parts.host_start as usize) == Some(&b'[') {
        Context::IpLiteral
    } else if parts.special {
        // Lower-cased by the parser (domain to ASCII).
        Context::Plain
    } else {
        Context::OpaqueHost
    })
}

/// Where the first byte that normalization changes may be, or `url.len()`
/// (most URLs: nothing to do). It may be early, never late. A [`Job`]: the
/// search for the dozen bytes of [`Rfc3986Stop`] is one `pshufb` lookup per
/// sixteen bytes with SSSE3, a compare per byte of the set with SSE2.
struct FirstChange<'a> {
    url: &'a [u8],
    parts: &'a Parts,
}

impl Job for FirstChange<'_> {
    type Output = usize;
    #[inline(always)]
    fn run<C: Chunk>(self, chunk: C) -> usize {
        first_change(chunk, self.url, self.parts)
    }
}

#[inline(always)]
fn first_change<C: Chunk>(chunk: C, url: &[u8], parts: &Parts) -> usize {
    let context = host_context(url, parts);
    let (hs, he) = (parts.host_start as usize, parts.host_end as usize);
    let mut first = if context == Some(Context::IpLiteral) {
        // The brackets stay: the search skips the host.
        match find_with::<Rfc3986Stop, C>(chunk, &url[..hs], 0) {
            k if k < hs => k,
            _ => find_with::<Rfc3986Stop, C>(chunk, url, he),
        }
    } else {
        find_with::<Rfc3986Stop, C>(chunk, url, 0)
    };
    if context == Some(Context::OpaqueHost)
        && hs < first
        && url[hs..he.min(first)].iter().any(u8::is_ascii_uppercase)
    {
        first = hs;
    }
    if parts.fragment_start != ABSENT {
        // A `#` after the one that starts the fragment.
        let after = parts.fragment_start as usize + 1;
        if after < first {
            if let Some(k) = memchr::memchr(b'#', &url[after..first]) {
                first = after + k;
            }
        }
    }
    first
}

/// Rewrites `out[first..]`: it is copied to `tail` and written back
/// normalized, one component at a time, each boundary moving to where its
/// byte lands. The URL may grow (an excluded byte becomes three) or shrink
/// (an escape becomes one byte), so it is not rewritten in place.
#[cold]
#[inline(never)]
fn rewrite(out: &mut Vec<u8>, start: usize, first: usize, parts: &mut Parts, tail: &mut Vec<u8>) {
    let host = host_context(&out[start..], parts).unwrap_or(Context::Plain);
    let fragment = parts.fragment_start;
    tail.clear();
    tail.extend_from_slice(&out[first..]);
    out.truncate(first);
    // Component boundaries in the order they appear in the URL. Escapes never
    // straddle one (each boundary is a delimiter, no hex digit).
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
    /// The boundary that ends the host: what comes before it is the host.
    const HOST_END: usize = 5;
    let mut r = 0;
    for (k, offset) in boundaries.into_iter().enumerate() {
        if *offset == ABSENT || start + (*offset as usize) < first {
            continue;
        }
        let end = start + *offset as usize - first;
        let context = if k == HOST_END { host } else { Context::Plain };
        copy(tail, &mut r, end, out, context);
        *offset = (out.len() - start) as u32;
    }
    let last = if fragment == ABSENT {
        Context::Plain
    } else {
        if start + fragment as usize >= first {
            // The `#` that starts the fragment stays.
            out.push(b'#');
            r += 1;
        }
        Context::Fragment
    };
    copy(tail, &mut r, tail.len(), out, last);
    parts.len = (out.len() - start) as u32;
}

/// Appends `tail[*r..end]` to `out`, normalized for `context`.
fn copy(tail: &[u8], r: &mut usize, end: usize, out: &mut Vec<u8>, context: Context) {
    let tail = &tail[..end];
    if context == Context::IpLiteral {
        out.extend_from_slice(&tail[*r..]);
        *r = end;
        return;
    }
    while *r < end {
        // The run of bytes that stay (up to the case of an opaque host's).
        let run_end = if context == Context::Fragment {
            find::<Rfc3986FragmentStop>(tail, *r)
        } else {
            find::<Rfc3986Stop>(tail, *r)
        };
        let run = &tail[*r..run_end];
        if context == Context::OpaqueHost {
            out.extend(run.iter().map(u8::to_ascii_lowercase));
        } else {
            out.extend_from_slice(run);
        }
        *r = run_end;
        let Some(&b) = tail.get(*r) else { break };
        if b == b'%' {
            if let (Some(h), Some(l)) = (
                tail.get(*r + 1).and_then(|&b| hex_value(b)),
                tail.get(*r + 2).and_then(|&b| hex_value(b)),
            ) {
                let v = h << 4 | l;
                if is_unreserved(v) {
                    out.push(if context == Context::OpaqueHost {
                        v.to_ascii_lowercase()
                    } else {
                        v
                    });
                } else {
                    out.extend_from_slice(&[b'%', HEX_UPPER[h as usize], HEX_UPPER[l as usize]]);
                }
                *r += 3;
                continue;
            }
        }
        // An excluded byte, or a `%` that starts no escape (`%25`).
        push_escape(out, b);
        *r += 1;
    }
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
        normalize(&mut out, 6, &mut parts, &mut Vec::new());
        assert_eq!(&out[..6], b"prefix");
        let out = out[6..].to_vec();
        assert!(parts.is_consistent(&out), "{}", out.escape_ascii());
        (out, parts)
    }

    #[test]
    fn decodes_unreserved_uppercases_the_rest_and_moves_offsets() {
        // http://a/%7euser%2f?%41=%2b#%5a%zz
        let url = b"http://a/%7euser%2f?%41=%2b#%5a%zz";
        let (out, p) = run(url, parts(url, 4, 8, 19, 27));
        assert_eq!(out, b"http://a/~user%2F?A=%2B#Z%25zz");
        assert_eq!(p.path(&out), b"/~user%2F");
        assert_eq!(p.query(&out), Some(&b"A=%2B"[..]));
        assert_eq!(p.fragment(&out), Some(&b"Z%25zz"[..]));
    }

    #[test]
    fn excluded_bytes_are_escaped_and_offsets_move() {
        // Query first: the path is clean, the rewrite starts in the query.
        let url = b"http://a/p?x[y]=1&a=\\^`{|}#f#[%]";
        let (out, p) = run(url, parts(url, 4, 8, 10, 26));
        assert_eq!(
            out,
            b"http://a/p?x%5By%5D=1&a=%5C%5E%60%7B%7C%7D#f%23%5B%25%5D"
        );
        assert_eq!(p.path(&out), b"/p");
        assert_eq!(p.query(&out), Some(&b"x%5By%5D=1&a=%5C%5E%60%7B%7C%7D"[..]));
        assert_eq!(p.fragment(&out), Some(&b"f%23%5B%25%5D"[..]));
        // Only a fragment's second `#`.
        let url = b"http://a/#x#y";
        let (out, p) = run(url, parts(url, 4, 8, ABSENT, 9));
        assert_eq!(out, b"http://a/#x%23y");
        assert_eq!(p.fragment(&out), Some(&b"x%23y"[..]));
    }

    #[test]
    fn opaque_host_is_lower_cased_after_decoding() {
        let url = b"foo://H%41st.EX%2fAMPLE/P";
        let p = Parts {
            special: false,
            ..parts(url, 3, 23, ABSENT, ABSENT)
        };
        let (out, p) = run(url, p);
        assert_eq!(out, b"foo://hast.ex%2Fample/P");
        assert_eq!(p.host(&out), Some(&b"hast.ex%2Fample"[..]));
        assert_eq!(p.path(&out), b"/P");
        // No escape: the case alone starts the rewrite.
        let url = b"foo://AB{C}/";
        let p = Parts {
            special: false,
            ..parts(url, 3, 11, ABSENT, ABSENT)
        };
        let (out, _) = run(url, p);
        assert_eq!(out, b"foo://ab%7Bc%7D/");
        // A special URL's host was lower-cased by the parser; nothing here
        // touches its case.
        let url = b"http://a\"b/X";
        let (out, _) = run(url, parts(url, 4, 10, ABSENT, ABSENT));
        assert_eq!(out, b"http://a%22b/X");
    }

    #[test]
    fn ip_literal_brackets_stay() {
        let url = b"foo://[::1]/[x]";
        let p = Parts {
            special: false,
            ..parts(url, 3, 11, ABSENT, ABSENT)
        };
        let (out, p) = run(url, p);
        assert_eq!(out, b"foo://[::1]/%5Bx%5D");
        assert_eq!(p.host(&out), Some(&b"[::1]"[..]));
        let url = b"http://[::1]/";
        let (out, _) = run(url, parts(url, 4, 12, ABSENT, ABSENT));
        assert_eq!(out, url);
    }

    #[test]
    fn a_bare_percent_is_escaped_and_completes_no_escape() {
        for (input, expected) in [
            (&b"http://a/%%34%31"[..], &b"http://a/%2541"[..]),
            (b"http://a/%4%31x", b"http://a/%2541x"),
            (b"http://a/%%7e", b"http://a/%25~"),
            (b"http://a/%", b"http://a/%25"),
            (b"http://a/%a", b"http://a/%25a"),
        ] {
            let (out, _) = run(input, parts(input, 4, 8, ABSENT, ABSENT));
            assert_eq!(out, expected, "{}", input.escape_ascii());
        }
    }

    #[test]
    fn decoded_drive_letter_is_no_drive_letter() {
        // `%43|` is no Windows drive letter to the URL Standard (`C|` would
        // be, and be written `C:`); RFC 3986 writes its `|` as `%7C`, which
        // keeps it none.
        let url = b"file:///%43|/x";
        let (out, p) = run(url, parts(url, 4, 7, ABSENT, ABSENT));
        assert_eq!(out, b"file:///C%7C/x");
        assert_eq!(p.path(&out), b"/C%7C/x");
    }

    #[test]
    fn reserved_escapes_stay() {
        let url = b"http://a/%2F%3F%23%26%3D%2B%25";
        let (out, _) = run(url, parts(url, 4, 8, ABSENT, ABSENT));
        assert_eq!(out, url);
    }
}
