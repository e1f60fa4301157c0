//! Amazon S3 server access logs.
//!
//! ```text
//! owner bucket [06/Feb/2019:00:00:38 +0000] 192.0.2.3 requester reqid REST.GET.OBJECT key
//!     "GET /key?x HTTP/1.1" 200 - 113 - 7 - "referer" "agent" version host-id SigV4
//!     cipher AuthHeader bucket.s3.us-west-1.amazonaws.com TLSv1.2 ...
//! ```
//!
//! Fields are separated by single spaces; the time is in brackets and the
//! request line, referer and user agent are quoted. Any field may be `-`.
//! Newer logs append fields at the end, which is why the fields are read by
//! position from the start and the record may have more.
//!
//! # The URL
//!
//! The request line's target (the Request-URI as the client sent it) is the
//! path and query; the host is the logged `Host` header (field 23), which
//! holds the bucket for virtual-hosted requests
//! (`bucket.s3.region.amazonaws.com` + `/key`) and not for path-style ones
//! (`s3.region.amazonaws.com` + `/bucket/key`): either way the two together
//! are the URL the client asked for. The scheme is `https` when a TLS
//! version is logged (field 24), else `http`.
//!
//! Logs written before S3 logged the `Host` header (records that end after
//! the user agent or a few fields later) have no host: the bucket gives one
//! on S3's global endpoint, `bucket.s3.amazonaws.com` when the target does
//! not start with the bucket's name (virtual-hosted), `s3.amazonaws.com`
//! when it does (path-style). S3 answers both at those names, so the URL
//! names the same object.
//!
//! Operations without an HTTP request (lifecycle `S3.EXPIRE.OBJECT`,
//! replication, batch operations) log `-` as the request line: skipped as
//! [`Skip::NoRequest`].

use super::escape::{split_request, Request};
use super::fields::{Field as Span, Fields};
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Scheme, Skip};
use crate::ascii;

/// Positions of the fields read.
const BUCKET: usize = 1;
const TIME: usize = 2;
const OPERATION: usize = 6;
const REQUEST: usize = 8;
const REMOTE_IP: usize = 3;
const STATUS: usize = 9;
const BYTES_SENT: usize = 11;
const REFERER: usize = 15;
const HOST_HEADER: usize = 22;
const TLS_VERSION: usize = 23;
/// One more than the last position read.
const READ: usize = TLS_VERSION + 1;

/// Reads S3 server access log records.
#[derive(Clone, Debug, Default)]
pub struct S3Extractor;

/// True when `op` is an S3 operation name (`REST.GET.OBJECT`,
/// `WEBSITE.HEAD.OBJECT`, `BATCH.DELETE.OBJECT`, `S3.EXPIRE.OBJECT`, ...):
/// upper-case words, digits and `_` joined by dots, at least two of them.
pub(crate) fn is_operation(op: &[u8]) -> bool {
    op.len() >= 4
        && op.first().is_some_and(u8::is_ascii_uppercase)
        && op.contains(&b'.')
        && op.last() != Some(&b'.')
        && op
            .iter()
            .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
}

impl LogReader for S3Extractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        S3Extractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        let mut at = [None::<Span>; READ];
        let mut fields = Fields::new(line);
        for slot in at.iter_mut() {
            match fields.next() {
                Some(Ok(f)) => *slot = Some(f),
                Some(Err(open)) => return Line::Error(LineError::Unterminated, open),
                None => break,
            }
        }
        // The record's shape: `[time]`, an operation, a quoted request.
        let shaped = at[TIME].is_some_and(|f| f.start > 0 && line[f.start - 1] == b'[')
            && at[OPERATION].is_some_and(|f| is_operation(f.of(line)))
            && at[REQUEST].is_some_and(|f| f.quoted);
        if !shaped {
            let end = fields.position().min(line.len());
            return Line::Error(LineError::Malformed, end);
        }
        let request = at[REQUEST].expect("shaped");
        if out.want_info {
            let span = |i: usize| at[i].map(|f| (f.start, f.end)).filter(|(s, e)| s < e);
            let info = &mut out.info;
            info.time = span(TIME);
            info.client = span(REMOTE_IP);
            info.status = span(STATUS);
            info.bytes = span(BYTES_SENT);
            let r = request.of(line);
            let method = &r[..memchr::memchr(b' ', r).unwrap_or(r.len())];
            if method != b"-" {
                info.method = super::info::Info::at(line, method);
            }
        }
        let request = match split_request(request.of(line)) {
            Ok(Request::Line(r)) => Some(r),
            Ok(Request::Absent) => None,
            Err(e) => return Line::Error(e, request.start),
        };
        if field.referer() {
            if let Some(r) = at[REFERER].filter(|f| f.quoted) {
                let value = r.of(line);
                if !value.is_empty() && value != b"-" {
                    out.referer.extend_from_slice(value);
                    out.has_referer = true;
                }
            }
        }
        if !field.request() {
            return if out.has_referer {
                Line::Record
            } else {
                Line::Skip(Skip::EmptyField)
            };
        }
        let Some(request) = request else {
            return if out.has_referer {
                Line::Record
            } else {
                Line::Skip(Skip::NoRequest)
            };
        };
        out.connect = request.is_connect();
        out.lend_target(line, request.target);
        out.has_target = true;
        let value = |i: usize| {
            at[i]
                .map(|f| f.of(line))
                .filter(|v| !v.is_empty() && *v != b"-")
        };
        out.scheme = Some(if value(TLS_VERSION).is_some() {
            Scheme::Https
        } else {
            Scheme::Http
        });
        match value(HOST_HEADER) {
            Some(host) => {
                if host.iter().any(|&b| b == b'/' || b == b'@' || b == b'"') {
                    return Line::Error(LineError::BadHost, at[HOST_HEADER].expect("set").start);
                }
                out.host.extend_from_slice(host);
            }
            None => {
                if let Some(bucket) = value(BUCKET) {
                    let path_style = request
                        .target
                        .strip_prefix(b"/")
                        .and_then(|t| t.strip_prefix(bucket))
                        .is_some_and(|rest| matches!(rest.first(), None | Some(b'/') | Some(b'?')));
                    if !path_style {
                        out.host.extend_from_slice(bucket);
                        out.host.push(b'.');
                    }
                    out.host.extend_from_slice(b"s3.amazonaws.com");
                }
            }
        }
        Line::Record
    }

    /// `owner bucket [time zone] ip requester id OPERATION ...`.
    fn shape(line: &[u8]) -> Option<u8> {
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        if fields.nth(2).unwrap_or_default().first() != Some(&b'[') {
            return None;
        }
        is_operation(fields.nth(4).unwrap_or_default()).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    const OWNER: &str = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";

    fn line(bucket: &str, op: &str, request: &str, tail: &str) -> String {
        format!(
            "{OWNER} {bucket} [06/Feb/2019:00:00:38 +0000] 192.0.2.3 {OWNER} 3E57427F3EXAMPLE \
             {op} - \"{request}\" 200 - 113 - 7 - \"http://ref.example/\" \"S3Console/0.4\"{tail}"
        )
    }

    fn run(line: &str, field: Field) -> (Line, Extracted) {
        let mut out = Extracted::default();
        let r = S3Extractor.extract(line.as_bytes(), field, &mut out);
        (r, out)
    }

    #[test]
    fn host_header_and_tls_version() {
        let l = line(
            "bkt",
            "REST.GET.OBJECT",
            "GET /a%20b.txt?x=1 HTTP/1.1",
            " - hostid= SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader bkt.s3.us-west-1.amazonaws.com TLSv1.2 - Yes us-east-1",
        );
        let (r, ex) = run(&l, Field::Request);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.target(l.as_bytes()), b"/a%20b.txt?x=1");
        assert_eq!(ex.host, b"bkt.s3.us-west-1.amazonaws.com");
        assert_eq!(ex.scheme, Some(Scheme::Https));
        // No TLS version: plain http.
        let l = line(
            "bkt",
            "REST.GET.OBJECT",
            "GET /a HTTP/1.1",
            " - hostid= SigV4 - AuthHeader bkt.s3.us-west-1.amazonaws.com -",
        );
        assert_eq!(run(&l, Field::Request).1.scheme, Some(Scheme::Http));
    }

    #[test]
    fn no_host_header_uses_the_bucket() {
        let virtual_hosted = line("bkt", "WEBSITE.GET.OBJECT", "GET /index HTTP/1.1", "");
        let (r, ex) = run(&virtual_hosted, Field::Request);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.host, b"bkt.s3.amazonaws.com");
        assert_eq!(ex.scheme, Some(Scheme::Http));
        let path_style = line(
            "bkt",
            "REST.GET.VERSIONING",
            "GET /bkt?versioning HTTP/1.1",
            "",
        );
        assert_eq!(run(&path_style, Field::Request).1.host, b"s3.amazonaws.com");
        // A bucket name that is only a prefix of the first segment.
        let other = line("bkt", "REST.GET.OBJECT", "GET /bktx/y HTTP/1.1", "");
        assert_eq!(run(&other, Field::Request).1.host, b"bkt.s3.amazonaws.com");
    }

    #[test]
    fn referer_and_absent_request() {
        let l = line("bkt", "S3.EXPIRE.OBJECT", "-", "");
        assert_eq!(run(&l, Field::Request).0, Line::Skip(Skip::NoRequest));
        let (r, ex) = run(&l, Field::Referer);
        assert_eq!(r, Line::Record);
        assert_eq!(ex.referer, b"http://ref.example/");
        let l = line("bkt", "REST.GET.OBJECT", "GET / HTTP/1.1", "")
            .replace("\"http://ref.example/\"", "\"-\"");
        assert_eq!(run(&l, Field::Referer).0, Line::Skip(Skip::EmptyField));
    }

    #[test]
    fn bad_lines() {
        let (r, _) = run("not an s3 record", Field::Request);
        assert!(matches!(r, Line::Error(LineError::Malformed, _)));
        let l = line("bkt", "REST.GET.OBJECT", "GET /a HTTP/1.1", "");
        let cut = &l[..l.find("\"GET").unwrap() + 5];
        let (r, _) = run(cut, Field::Request);
        assert_eq!(r, Line::Error(LineError::Unterminated, cut.len() - 5));
        let l = line("bkt", "rest.get.object", "GET /a HTTP/1.1", "");
        assert!(matches!(
            run(&l, Field::Request).0,
            Line::Error(LineError::Malformed, _)
        ));
        let l = line(
            "bkt",
            "REST.GET.OBJECT",
            "GET /a HTTP/1.1",
            " - h= SigV4 - AuthHeader a/b -",
        );
        assert!(matches!(
            run(&l, Field::Request).0,
            Line::Error(LineError::BadHost, _)
        ));
        assert_eq!(run("  ", Field::Request).0, Line::Skip(Skip::EmptyLine));
    }

    #[test]
    fn operations() {
        for op in [
            "REST.GET.OBJECT",
            "WEBSITE.HEAD.OBJECT",
            "BATCH.DELETE.OBJECT",
            "S3.EXPIRE.OBJECT",
        ] {
            assert!(is_operation(op.as_bytes()), "{op}");
        }
        for op in ["GET", "rest.get", "REST.", "-", "A.b"] {
            assert!(!is_operation(op.as_bytes()), "{op}");
        }
    }
}
