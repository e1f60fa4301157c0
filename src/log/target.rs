//! From a record's request target to the URL to canonicalize.
//!
//! RFC 9112 §3.2 gives a request target four forms. Only two name a
//! resource by URL: the origin form (`/path?query`, the usual case, whose
//! scheme and host the record may say elsewhere) and the absolute form
//! (`http://host/path`, sent to proxies). The authority form (`CONNECT
//! host:443`) and the asterisk form (`OPTIONS *`) are not URLs: a line
//! with one is skipped, with the form as the reason.

use memchr::{memchr, memrchr};

use crate::url::simd::{find, members, ByteSet};

use super::{Extracted, LineError, Scheme, Skip};

/// The form of a request target (RFC 9112 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestTarget {
    /// `/path?query`: the path and query of a URL whose scheme and host are
    /// elsewhere (the record, `--base`, or nowhere: the target is written
    /// path-only).
    Origin,
    /// `scheme://host/path?query`: a whole URL.
    Absolute,
    /// `host:port`, the target of `CONNECT`.
    Authority,
    /// `*`, the target of a server-wide `OPTIONS`.
    Asterisk,
}

impl RequestTarget {
    /// The form of `target`; `connect` says the method was `CONNECT`.
    /// `Err(BadTarget)` for bytes that have none of the four forms.
    ///
    /// ```
    /// use canonurl::log::{LineError, RequestTarget};
    ///
    /// assert_eq!(RequestTarget::of(b"/a?b", false), Ok(RequestTarget::Origin));
    /// assert_eq!(RequestTarget::of(b"http://h/a", false), Ok(RequestTarget::Absolute));
    /// assert_eq!(RequestTarget::of(b"h.example:443", true), Ok(RequestTarget::Authority));
    /// assert_eq!(RequestTarget::of(b"*", false), Ok(RequestTarget::Asterisk));
    /// assert_eq!(RequestTarget::of(b"a b", false), Err(LineError::BadTarget));
    /// ```
    pub fn of(target: &[u8], connect: bool) -> Result<RequestTarget, LineError> {
        if target == b"*" {
            Ok(RequestTarget::Asterisk)
        } else if connect {
            Ok(RequestTarget::Authority)
        } else if target.first() == Some(&b'/') {
            Ok(RequestTarget::Origin)
        } else if has_scheme(target) {
            // `example.com:443` reads as scheme `example.com`: an authority
            // form sent without its CONNECT is told apart by the digits.
            if is_authority(target) {
                Ok(RequestTarget::Authority)
            } else {
                Ok(RequestTarget::Absolute)
            }
        } else {
            Err(LineError::BadTarget)
        }
    }
}

/// Where the URL of a record's request is, once [`request_url`] has looked
/// at its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestUrl {
    /// The URL was written to the caller's buffer: the record's (or the
    /// base's) scheme and authority, `prefix` bytes, then the target.
    Built {
        /// Length of the scheme and authority before the target; offsets
        /// past it map back into the target.
        prefix: usize,
    },
    /// The target is a whole URL (absolute form): canonicalize it as it is.
    Absolute,
    /// An origin-form target with no host to put before it: canonicalize it
    /// as a request target, path-only.
    PathOnly,
    /// No URL, nothing wrong.
    Skip(Skip),
    /// No URL: the record's target or host cannot make one.
    Error(LineError),
}

/// What an origin-form target is written after when `base` is `--base`:
/// the base's href up to its path (`https://example.com`, `file://`, `sc:`
/// for `sc:/a/b`), so that `/x` makes `https://example.com/x` and
/// `file:///x`. Empty for a base with an opaque path (`about:blank`,
/// `mailto:x`), against which the URL Standard resolves no path: such a
/// record is [`LineError::OpaqueBase`].
pub fn base_prefix(base: &crate::Base) -> &[u8] {
    let parts = base.parts();
    if parts.opaque_path {
        return &[];
    }
    &base.as_bytes()[..parts.path_start as usize]
}

/// Decides how the request of the record in `ex`, read from `line` (see
/// [`Extracted::target`]), becomes a URL, writing it
/// into `into` (cleared first) when it has to be built: an origin-form
/// target gets the record's scheme and host (the scheme from the record, or
/// from its port, else `http`; a port that is not the scheme's default is
/// kept), or else `base_prefix` ([`base_prefix`] of `--base`: its
/// `scheme://authority`, with the record's scheme instead of the base's
/// when the record has one and the base a host; empty for an opaque-path
/// base, which rejects the record as [`LineError::OpaqueBase`]).
///
/// ```
/// use canonurl::log::{request_url, Extracted, RequestUrl, Scheme};
///
/// let mut record = Extracted::default();
/// record.set_target(b"/a?b");
/// record.has_target = true;
/// // A record made by hand: its target is no part of a line.
/// let line = b"";
/// let mut url = Vec::new();
/// // No host in the record: the base's, else path-only.
/// assert_eq!(request_url(&record, line, None, &mut url), RequestUrl::PathOnly);
/// assert_eq!(
///     request_url(&record, line, Some(b"https://base.example"), &mut url),
///     RequestUrl::Built { prefix: 20 }
/// );
/// assert_eq!(url, b"https://base.example/a?b");
/// // The record's host and port (8443: not https's default, so kept).
/// record.host.extend_from_slice(b"shop.example");
/// record.scheme = Some(Scheme::Https);
/// record.port = Some(8443);
/// assert_eq!(request_url(&record, line, None, &mut url), RequestUrl::Built { prefix: 25 });
/// assert_eq!(url, b"https://shop.example:8443/a?b");
/// ```
pub fn request_url(
    ex: &Extracted,
    line: &[u8],
    base_prefix: Option<&[u8]>,
    into: &mut Vec<u8>,
) -> RequestUrl {
    request_url_of(ex, ex.target(line), base_prefix, None, into)
}

/// [`request_url`] with the record's target given apart (taken once by
/// the caller, [`Extracted::target`]), and `scheme`
/// (`--scheme`) for records that log none: it comes before the scheme a
/// logged port implies.
#[inline]
pub(crate) fn request_url_of(
    ex: &Extracted,
    target: &[u8],
    base_prefix: Option<&[u8]>,
    scheme: Option<Scheme>,
    into: &mut Vec<u8>,
) -> RequestUrl {
    // The usual record of a log that names no host (common, combined) run
    // without `--base`: an origin-form target, written path-only. Decided
    // here, inlined into the caller's loop; the rest is a call.
    if ex.has_target
        && target.first() == Some(&b'/')
        && !ex.connect
        && ex.host.is_empty()
        && base_prefix.is_none()
    {
        return RequestUrl::PathOnly;
    }
    build_request_url(ex, target, base_prefix, scheme, into)
}

/// [`request_url_of`] for every record but the usual one.
#[inline(never)]
fn build_request_url(
    ex: &Extracted,
    target: &[u8],
    base_prefix: Option<&[u8]>,
    scheme: Option<Scheme>,
    into: &mut Vec<u8>,
) -> RequestUrl {
    if !ex.has_target {
        return RequestUrl::Skip(Skip::NoRequest);
    }
    match RequestTarget::of(target, ex.connect) {
        Err(e) => RequestUrl::Error(e),
        Ok(RequestTarget::Asterisk) => RequestUrl::Skip(Skip::AsteriskForm),
        Ok(RequestTarget::Authority) => RequestUrl::Skip(Skip::AuthorityForm),
        Ok(RequestTarget::Absolute) => RequestUrl::Absolute,
        Ok(RequestTarget::Origin) if !ex.host.is_empty() => {
            if !is_plain_host(&ex.host) {
                return RequestUrl::Error(LineError::BadHost);
            }
            let given_scheme = scheme;
            let scheme = ex
                .scheme
                .or(scheme)
                .or(ex.port.map(Scheme::from_port))
                .unwrap_or(Scheme::Http);
            into.clear();
            into.extend_from_slice(scheme.as_str().as_bytes());
            into.extend_from_slice(b"://");
            into.extend_from_slice(&ex.host);
            if let Some(port) = ex.port {
                let default = if scheme == Scheme::Https { 443 } else { 80 };
                // Given `--scheme`, a logged 80 or 443 is the server's side
                // of a proxy that terminates TLS: a default port either way.
                let given = ex.scheme.is_none() && given_scheme.is_some();
                let default = port == default || (given && (port == 80 || port == 443));
                if !default && !has_port(&ex.host) {
                    into.push(b':');
                    into.extend_from_slice(itoa::Buffer::new().format(port).as_bytes());
                }
            }
            let prefix = into.len();
            into.extend_from_slice(target);
            RequestUrl::Built { prefix }
        }
        Ok(RequestTarget::Origin) => match base_prefix {
            // An opaque-path base (see `base_prefix`): no path resolves
            // against it.
            Some([]) => RequestUrl::Error(LineError::OpaqueBase),
            Some(base) => {
                into.clear();
                // The record's scheme (logged, or `--scheme`) over the base's,
                // when the base has a host to carry over (`file:///srv/`
                // has none: `https:///x` would make `x` the host).
                let authority = memchr::memmem::find(base, b"://").map_or(0, |i| i + 3);
                match ex.scheme.or(scheme) {
                    Some(scheme) if authority > 0 && authority < base.len() => {
                        into.extend_from_slice(scheme.as_str().as_bytes());
                        into.extend_from_slice(b"://");
                        into.extend_from_slice(&base[authority..]);
                    }
                    _ => into.extend_from_slice(base),
                }
                let prefix = into.len();
                into.extend_from_slice(target);
                RequestUrl::Built { prefix }
            }
            None => RequestUrl::PathOnly,
        },
    }
}

/// RFC 3986 `scheme ":"` at the start.
fn has_scheme(t: &[u8]) -> bool {
    if !t.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    for &b in &t[1..] {
        match b {
            b':' => return true,
            b if b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.' => {}
            _ => return false,
        }
    }
    false
}

/// `host:port` with nothing after the port: an authority-form target.
fn is_authority(t: &[u8]) -> bool {
    match memrchr(b':', t) {
        Some(c) => {
            c + 1 < t.len()
                && t[c + 1..].iter().all(u8::is_ascii_digit)
                && memchr(b'/', t).is_none()
        }
        None => false,
    }
}

/// A logged host that can be put in front of a path as it is: no byte that
/// would end the authority or start userinfo, no space or control.
///
/// Every record of a log with hosts asks: sixteen bytes a step (a host
/// is one step) for the bytes of [`NotPlainHost`], and a byte at a time
/// only from the first such byte on, since the set also holds the bytes
/// from 0x80 up, which a host may have.
fn is_plain_host(h: &[u8]) -> bool {
    let from = if h.len() < 16 {
        // Most hosts are shorter than a step, which the search would take a
        // byte at a time: one step over a copy, padded with a plain byte.
        let mut chunk = [b'a'; 16];
        chunk[..h.len()].copy_from_slice(h);
        members::<NotPlainHost>(&chunk).trailing_zeros() as usize
    } else {
        find::<NotPlainHost>(h, 0)
    };
    h[from.min(h.len())..]
        .iter()
        .all(|&b| is_plain_host_byte(b))
}

fn is_plain_host_byte(b: u8) -> bool {
    b > b' ' && b != 0x7f && !matches!(b, b'/' | b'\\' | b'?' | b'#' | b'@')
}

/// The bytes that are not [`is_plain_host_byte`], and those from 0x80 up.
struct NotPlainHost;
impl ByteSet for NotPlainHost {
    const BELOW: u8 = b' ' + 1;
    const BYTES: &'static [u8] = b"/\\?#@";
}

/// True when a logged host already carries a port (`h:8080`, `[::1]:8080`).
fn has_port(h: &[u8]) -> bool {
    match memrchr(b':', h) {
        Some(c) => !h[c..].contains(&b']'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(target: &[u8], host: &[u8], scheme: Option<Scheme>, port: Option<u16>) -> Extracted {
        let mut ex = Extracted {
            has_target: true,
            host: host.to_vec(),
            scheme,
            port,
            ..Extracted::default()
        };
        ex.set_target(target);
        ex
    }

    /// `is_plain_host` says what testing every byte says, for every byte
    /// at every place of hosts around sixteen bytes.
    #[test]
    fn plain_hosts_are_told_by_every_byte() {
        for len in [1, 5, 15, 16, 17, 31, 33] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut h = vec![b'a'; len];
                    h[at] = b;
                    assert_eq!(
                        is_plain_host(&h),
                        h.iter().all(|&b| is_plain_host_byte(b)),
                        "{:?}",
                        h.escape_ascii().to_string()
                    );
                    // After a byte from 0x80 up, which hosts may have.
                    h[0] = 0xc3;
                    assert_eq!(is_plain_host(&h), at == 0 || is_plain_host_byte(b));
                }
            }
        }
        assert!(is_plain_host(b""));
        assert!(is_plain_host("bücher.example".as_bytes()));
        assert!(!is_plain_host("user@bücher.example".as_bytes()));
    }

    #[test]
    fn the_four_forms() {
        use RequestTarget::*;
        assert_eq!(RequestTarget::of(b"/a?b", false), Ok(Origin));
        assert_eq!(RequestTarget::of(b"http://a/", false), Ok(Absolute));
        assert_eq!(RequestTarget::of(b"mailto:x", false), Ok(Absolute));
        assert_eq!(RequestTarget::of(b"example.com:443", false), Ok(Authority));
        assert_eq!(RequestTarget::of(b"example.com:443", true), Ok(Authority));
        assert_eq!(RequestTarget::of(b"*", false), Ok(Asterisk));
        assert_eq!(RequestTarget::of(b"a b", false), Err(LineError::BadTarget));
        assert_eq!(
            RequestTarget::of(b"1http://a/", false),
            Err(LineError::BadTarget)
        );
        assert_eq!(RequestTarget::of(b"", false), Err(LineError::BadTarget));
    }

    #[test]
    fn given_scheme_comes_after_the_records_and_before_the_ports() {
        let mut url = Vec::new();
        let https = Some(Scheme::Https);
        let mut url_of = |ex: &Extracted, base: Option<&[u8]>, given| {
            request_url_of(ex, ex.target(b""), base, given, &mut url);
            String::from_utf8(url.clone()).unwrap()
        };
        // No port: the given scheme.
        let ex = record(b"/x", b"h.example", None, None);
        assert_eq!(url_of(&ex, None, https), "https://h.example/x");
        assert_eq!(url_of(&ex, None, None), "http://h.example/x");
        // A logged 80 or 443 is a default port once the scheme is given;
        // other ports stay.
        let ex = record(b"/x", b"h.example", None, Some(80));
        assert_eq!(url_of(&ex, None, https), "https://h.example/x");
        assert_eq!(url_of(&ex, None, None), "http://h.example/x");
        let ex = record(b"/x", b"h.example", None, Some(8080));
        assert_eq!(url_of(&ex, None, https), "https://h.example:8080/x");
        // A scheme the record logs wins, with its own default port.
        let ex = record(b"/x", b"h.example", Some(Scheme::Http), Some(443));
        assert_eq!(url_of(&ex, None, https), "http://h.example:443/x");
        // Without a host: the base's authority, the given or logged scheme.
        let ex = record(b"/x", b"", None, None);
        let base = Some(&b"http://b.example:8080"[..]);
        assert_eq!(url_of(&ex, base, https), "https://b.example:8080/x");
        assert_eq!(url_of(&ex, base, None), "http://b.example:8080/x");
        let ex = record(b"/x", b"", Some(Scheme::Https), None);
        assert_eq!(url_of(&ex, base, None), "https://b.example:8080/x");
    }

    #[test]
    fn origin_form_gets_the_records_scheme_host_and_port() {
        let mut url = Vec::new();
        let r = request_url(
            &record(b"/x", b"h.example", None, Some(8443)),
            b"",
            None,
            &mut url,
        );
        assert_eq!(r, RequestUrl::Built { prefix: 21 });
        assert_eq!(url, b"http://h.example:8443/x");
        let r = request_url(
            &record(b"/x", b"h.example", None, Some(443)),
            b"",
            None,
            &mut url,
        );
        assert_eq!(
            (r, &url[..]),
            (
                RequestUrl::Built { prefix: 17 },
                &b"https://h.example/x"[..]
            )
        );
        // A host that carries its own port keeps it, and no second one.
        request_url(
            &record(b"/", b"[::1]:81", Some(Scheme::Http), Some(81)),
            b"",
            None,
            &mut url,
        );
        assert_eq!(url, b"http://[::1]:81/");
        let r = request_url(&record(b"/", b"u@h", None, None), b"", None, &mut url);
        assert_eq!(r, RequestUrl::Error(LineError::BadHost));
    }

    #[test]
    fn origin_form_without_a_host_takes_the_base_or_stays_path_only() {
        let mut url = Vec::new();
        let ex = record(b"/p?q", b"", None, None);
        assert_eq!(request_url(&ex, b"", None, &mut url), RequestUrl::PathOnly);
        let r = request_url(&ex, b"", Some(b"https://b.example"), &mut url);
        assert_eq!(r, RequestUrl::Built { prefix: 17 });
        assert_eq!(url, b"https://b.example/p?q");
    }

    #[test]
    fn other_forms_are_skipped_or_taken_whole() {
        let mut url = Vec::new();
        let skip = |t: &[u8], connect| {
            let mut ex = record(t, b"h", None, None);
            ex.connect = connect;
            request_url(&ex, b"", None, &mut Vec::new())
        };
        assert_eq!(skip(b"*", false), RequestUrl::Skip(Skip::AsteriskForm));
        assert_eq!(skip(b"h:443", true), RequestUrl::Skip(Skip::AuthorityForm));
        assert_eq!(skip(b"h:443", false), RequestUrl::Skip(Skip::AuthorityForm));
        assert_eq!(skip(b"http://h/", false), RequestUrl::Absolute);
        let none = Extracted::default();
        assert_eq!(
            request_url(&none, b"", None, &mut url),
            RequestUrl::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn hosts_and_ports() {
        assert!(is_plain_host(b"a.example:8080"));
        assert!(!is_plain_host(b"a.example/x"));
        assert!(!is_plain_host(b"u@a.example"));
        assert!(has_port(b"a:1") && has_port(b"[::1]:1") && !has_port(b"[::1]"));
    }
}
