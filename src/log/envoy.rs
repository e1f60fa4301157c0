//! Envoy's default access-log format, and Istio's, which extends it.
//!
//! ```text
//! [2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28"
//!     "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"
//! ```
//!
//! Envoy writes `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%
//! %PROTOCOL%"`, counters, then the quoted `X-Forwarded-For`, user agent,
//! request id, `:authority` and upstream host. Istio's default puts a quoted
//! upstream failure reason among the counters and unquoted fields after the
//! upstream host; in both, the authority is the quoted field before the
//! last one, which is how it is found here. The path is the original one
//! (before any route rewrite) with its query. Neither layout logs the
//! scheme: it is `http`, unless the authority's port is 443 or `--scheme`
//! says otherwise. `- - -` as the request (a TCP proxy record, a request
//! Envoy could not parse) is no request.
//!
//! The record's other fields ([`Info`](super::info::Info)): the time is
//! `%START_TIME%`, the method the request's, the status `%RESPONSE_CODE%`
//! (the field after the request), the size `%BYTES_SENT%` (the third
//! field before the quoted `X-Forwarded-For`, the fifth quoted field from
//! the end, in both layouts), and the client Istio's `%DOWNSTREAM_REMOTE_ADDRESS%` (the
//! fourth field after the upstream host) without its port. Envoy's own
//! default logs no client address (only the `X-Forwarded-For` list, which
//! the client may write): no client.

use super::escape::{split_request, Request};
use super::fields::{Field as Span, Fields};
use super::info::{without_port, At};
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip};
use crate::ascii;

/// Fields noted per line when the record's other fields are wanted: Istio's
/// default has 22.
const MAX_FIELDS: usize = 32;

/// Reads Envoy and Istio default access-log records.
#[derive(Clone, Debug, Default)]
pub struct EnvoyExtractor;

/// True when `line` starts like an Envoy record: `[` an ISO 8601 time `] "`.
pub(crate) fn starts_like_envoy(line: &[u8]) -> bool {
    let iso = |t: &[u8]| {
        t.len() >= 20
            && t[..4].iter().all(u8::is_ascii_digit)
            && t[4] == b'-'
            && t[7] == b'-'
            && t[10] == b'T'
    };
    line.first() == Some(&b'[')
        && memchr::memmem::find(line, b"] \"").is_some_and(|close| iso(&line[1..close]))
}

impl LogReader for EnvoyExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        EnvoyExtractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        if !starts_like_envoy(line) {
            return Line::Error(LineError::Malformed, 0);
        }
        let mut request = None::<Span>;
        // The last two quoted fields: the authority, then the upstream host.
        let (mut before_last, mut last) = (None::<Span>, None::<Span>);
        for (i, f) in Fields::new(line).enumerate() {
            let f = match f {
                Ok(f) => f,
                Err(open) => return Line::Error(LineError::Unterminated, open),
            };
            if i == 1 && f.quoted {
                request = Some(f);
            } else if f.quoted && i > 1 {
                before_last = last;
                last = Some(f);
            }
        }
        let Some(request) = request else {
            return Line::Error(LineError::Malformed, 0);
        };
        if out.want_info {
            note_info(line, request, out);
        }
        if !field.request() {
            // The default formats log no referer.
            return Line::Skip(Skip::EmptyField);
        }
        let Some(authority) = before_last else {
            return Line::Error(LineError::Malformed, line.len());
        };
        let r = match split_request(request.of(line)) {
            Ok(Request::Line(r)) => r,
            Ok(Request::Absent) => return Line::Skip(Skip::NoRequest),
            Err(e) => return Line::Error(e, request.start),
        };
        out.connect = r.is_connect();
        out.lend_target(line, r.target);
        out.has_target = true;
        let host = authority.of(line);
        if !host.is_empty() && host != b"-" {
            if host
                .iter()
                .any(|&b| b == b'/' || b == b'@' || b == b' ' || b == b'"')
            {
                return Line::Error(LineError::BadHost, authority.start);
            }
            if let Err(e) = super::clf::split_vhost(host, out) {
                return Line::Error(e, authority.start);
            }
        }
        Line::Record
    }

    /// See [`starts_like_envoy`].
    fn shape(line: &[u8]) -> Option<u8> {
        starts_like_envoy(line).then_some(0)
    }
}

/// Notes the record's other fields (see the [module docs](self)) of
/// `line`, whose fields have been read whole once already: they are read
/// again here, so that a run that does not want them pays nothing.
fn note_info(line: &[u8], request: Span, out: &mut Extracted) {
    let mut spans = [None::<Span>; MAX_FIELDS];
    let mut count = 0;
    for (i, f) in Fields::new(line).enumerate() {
        count = i + 1;
        if let (Some(slot), Ok(f)) = (spans.get_mut(i), f) {
            *slot = Some(f);
        }
    }
    // The fields counted from the end are known only when all are here.
    let all = count <= MAX_FIELDS;
    let at = |f: Option<Span>| -> At { f.filter(|f| f.start < f.end).map(|f| (f.start, f.end)) };
    let plain = |i: usize| spans.get(i).copied().flatten().filter(|f| !f.quoted);
    let info = &mut out.info;
    info.time = at(spans[0]);
    info.status = at(plain(2));
    let r = request.of(line);
    let method = memchr::memchr(b' ', r).map_or(r, |space| &r[..space]);
    if method != b"-" && !method.is_empty() {
        info.method = Some((request.start, request.start + method.len()));
    }
    if !all {
        return;
    }
    // The quoted fields from the end: the fifth is X-Forwarded-For, the
    // last the upstream host.
    let mut quoted = spans
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, f)| f.is_some_and(|f| f.quoted))
        .map(|(i, _)| i);
    let upstream = quoted.next();
    if let Some(xff) = quoted.nth(3).filter(|&i| i >= 6) {
        info.bytes = at(plain(xff - 3));
    }
    if let Some(u) = upstream {
        info.client = without_port(line, at(plain(u + 4)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    fn run(line: &str) -> (Line, Extracted) {
        let mut out = Extracted::default();
        let r = EnvoyExtractor.extract(line.as_bytes(), Field::Request, &mut out);
        (r, out)
    }

    #[test]
    fn envoy_default() {
        let l = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations?x=1 HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80""#;
        let (r, ex) = run(l);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target(l.as_bytes()), b"/api/v1/locations?x=1");
        assert_eq!(ex.host, b"locations");
        assert_eq!(ex.scheme, None);
    }

    #[test]
    fn istio_default() {
        let l = r#"[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "127.0.0.1:80" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default"#;
        let (r, ex) = run(l);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target(l.as_bytes()), b"/status/418");
        assert_eq!(ex.host, b"httpbin");
        assert_eq!(ex.port, Some(8000));
    }

    /// The other fields of `line`: status, bytes, method, time, client.
    fn info_of(line: &str) -> (Option<u16>, Option<u64>, String, Option<i64>, String) {
        let mut out = Extracted::default();
        out.want_info(true);
        EnvoyExtractor.extract(line.as_bytes(), Field::Request, &mut out);
        let (i, b) = (out.info, line.as_bytes());
        let text = |v: Option<&[u8]>| String::from_utf8_lossy(v.unwrap_or(b"")).into_owned();
        (
            i.status(b),
            i.bytes(b),
            text(i.method(b)),
            i.time(b),
            text(i.client(b)),
        )
    }

    #[test]
    fn other_fields() {
        // 2016-04-15T20:17:00Z: python3 -c 'import calendar;
        // print(calendar.timegm((2016,4,15,20,17,0)))' gives 1460751420.
        let l = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations?x=1 HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80""#;
        let want = (
            Some(204),
            Some(0),
            "POST".into(),
            Some(1_460_751_420),
            String::new(),
        );
        assert_eq!(info_of(l), want);
        // Istio: 135 bytes sent, the downstream remote address 10.44.1.23:37652;
        // 2020-11-25T21:26:18Z is 1606339578.
        let l = r#"[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "127.0.0.1:80" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default"#;
        let want = (
            Some(418),
            Some(135),
            "GET".into(),
            Some(1_606_339_578),
            "10.44.1.23".into(),
        );
        assert_eq!(info_of(l), want);
        // No request: the time and status are still the record's.
        let l = r#"[2016-04-15T20:17:00.310Z] "- - -" 0 - 0 0 1 - "-" "-" "-" "-" "10.0.2.1:80""#;
        let want = (
            None,
            Some(0),
            String::new(),
            Some(1_460_751_420),
            String::new(),
        );
        assert_eq!(info_of(l), want);
    }

    #[test]
    fn no_request_and_bad_lines() {
        let l = r#"[2016-04-15T20:17:00.310Z] "- - -" 0 - 0 0 1 - "-" "-" "-" "-" "10.0.2.1:80""#;
        assert_eq!(run(l).0, Line::Skip(Skip::NoRequest));
        let l = r#"[2016-04-15T20:17:00.310Z] "GET /a HTTP/1.1" 200 - 0 0 1 - "-" "-" "-" "-" "-""#;
        let (r, ex) = run(l);
        assert_eq!(r, Line::Record);
        assert!(ex.host.is_empty());
        let l = r#"[2016-04-15T20:17:00.310Z] "GET /a HTTP/1.1" 200 - 0 0 1 - "-" "ua"#;
        assert_eq!(run(l).0, Line::Error(LineError::Unterminated, l.len() - 3));
        let l = r#"[2016-04-15T20:17:00.310Z] "GET /a HTTP/1.1" 200"#;
        assert!(matches!(run(l).0, Line::Error(LineError::Malformed, _)));
        let l = r#"[10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1"#;
        assert_eq!(run(l).0, Line::Error(LineError::Malformed, 0));
        let l =
            r#"[2016-04-15T20:17:00.310Z] "GET /a HTTP/1.1" 200 - 0 0 1 - "-" "-" "-" "a/b" "-""#;
        assert!(matches!(run(l).0, Line::Error(LineError::BadHost, _)));
        assert_eq!(run("").0, Line::Skip(Skip::EmptyLine));
    }
}
