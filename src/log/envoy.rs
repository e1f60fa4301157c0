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

use super::escape::{split_request, Request};
use super::fields::{Field as Span, Fields};
use super::{Extracted, Field, Line, LineError, Skip};

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

impl EnvoyExtractor {
    /// Reads one line (without its line end).
    pub fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        out.clear();
        if line.iter().all(|&b| b == b' ' || b == b'\t') {
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
        out.target.extend_from_slice(r.target);
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(ex.target, b"/api/v1/locations?x=1");
        assert_eq!(ex.host, b"locations");
        assert_eq!(ex.scheme, None);
    }

    #[test]
    fn istio_default() {
        let l = r#"[2020-11-25T21:26:18.409Z] "GET /status/418 HTTP/1.1" 418 - via_upstream - "-" 0 135 4 4 "-" "curl/7.73.0-DEV" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "127.0.0.1:80" inbound|8000|| 127.0.0.1:41854 10.44.1.27:80 10.44.1.23:37652 outbound_.8000_._.httpbin.foo.svc.cluster.local default"#;
        let (r, ex) = run(l);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target, b"/status/418");
        assert_eq!(ex.host, b"httpbin");
        assert_eq!(ex.port, Some(8000));
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
