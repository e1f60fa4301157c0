//! HAProxy HTTP logs (`option httplog`), usually behind a syslog prefix.
//!
//! ```text
//! Feb 25 16:19:49 lb haproxy[7]: 1.2.3.4:53332 [25/Feb/2019:16:19:48.143] fe be/srv
//!     0/0/7/1457/1487 200 11394 - - ---- 2/1/0/0/0 0/0 {captured} {headers} "GET /x HTTP/1.1"
//! ```
//!
//! The request line is the last field and the only quoted one after the
//! captures; HAProxy writes bytes it will not log raw as `#XX`, so the field
//! never holds a raw `"`. HAProxy cuts the request line at its log limit
//! (`tune.http.logurilen`, 1024 bytes by default): a cut request is reported
//! as truncated, never canonicalized as if it were whole.

use memchr::{memchr, memmem, memrchr};

use super::escape::{split_request, unescape_hash, Request};
use super::info::Info;
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip};

/// HAProxy's default limit on the logged request line, in bytes.
pub const LOG_URI_LIMIT: usize = 1024;

/// Reads HAProxy HTTP log records.
#[derive(Clone, Debug, Default)]
pub struct HaproxyExtractor;

impl LogReader for HaproxyExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        HaproxyExtractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        let trimmed = super::escape::trim_spaces(line);
        if trimmed.iter().all(|&b| b == b'\t') {
            return Line::Skip(Skip::EmptyLine);
        }
        let tagged = memmem::find(line, b"haproxy[").is_some();
        let Some(last) = memrchr(b'"', trimmed) else {
            // Start-up messages, TCP-mode records, SSL handshake failures:
            // records of HAProxy that carry no HTTP request.
            return if tagged {
                Line::Skip(Skip::NoRequest)
            } else {
                Line::Error(LineError::Malformed, 0)
            };
        };
        let (open, request) = if last + 1 == trimmed.len() {
            match memrchr(b'"', &trimmed[..last]) {
                Some(open) => (open, &trimmed[open + 1..last]),
                // One quote, at the end: the opening quote of a request the
                // line ends right after.
                None => return Line::Error(LineError::Truncated, last),
            }
        } else {
            // An opening quote with no closing one: the line was cut.
            return Line::Error(LineError::Truncated, last);
        };
        // A record is `client:port [date] ...`; the request alone is not enough.
        if memchr(b'[', &trimmed[..open]).is_none() {
            return Line::Error(LineError::Malformed, 0);
        }
        if out.want_info {
            note_info(line, &trimmed[..open], request, out);
        }
        if !field.request() {
            // The default HTTP log format has no referer field.
            return Line::Skip(Skip::EmptyField);
        }
        match split_request(request) {
            Ok(Request::Line(r)) => {
                if !r.has_version && request.len() + 2 >= LOG_URI_LIMIT - 24 {
                    // No ` HTTP/x.y` and as long as the log limit: cut.
                    return Line::Error(LineError::Truncated, open + 1 + request.len());
                }
                out.connect = r.is_connect();
                // `#XX` is HAProxy's escape: without a `#` the target is
                // as logged.
                if memchr(b'#', r.target).is_some() {
                    unescape_hash(r.target, out.target_buf());
                } else {
                    out.lend_target(line, r.target);
                }
                out.has_target = true;
                Line::Record
            }
            Ok(Request::Absent) => Line::Skip(Skip::NoRequest),
            // `<BADREQ>` is what HAProxy logs for a request it could not parse.
            Err(_) if request == b"<BADREQ>" => Line::Skip(Skip::NoRequest),
            Err(e) => Line::Error(e, open + 1),
        }
    }

    /// A line with HAProxy's syslog tag, `haproxy[pid]`.
    fn shape(line: &[u8]) -> Option<u8> {
        memmem::find(line, b"haproxy[").map(|_| 0)
    }
}

/// Notes client, time, status, size and method of an HTTP log record
/// (`client:port [date] frontend backend/server timers status bytes ...`)
/// for [`Extracted::info`]: the fields after the bracketed date.
#[cold]
fn note_info(line: &[u8], before: &[u8], request: &[u8], out: &mut Extracted) {
    let mut fields = before.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let mut client = None;
    let info = &mut out.info;
    while let Some(f) = fields.next() {
        // `[25/Feb/2019:16:19:48.143]`
        if f.len() >= 22 && f[0] == b'[' && f[3] == b'/' && f.ends_with(b"]") {
            info.time = Info::at(line, &f[1..f.len() - 1]);
            info.client = client.and_then(|c: &[u8]| {
                let c = match memrchr(b':', c) {
                    Some(i) => &c[..i],
                    None => c,
                };
                Info::at(line, c)
            });
            let mut rest = fields.skip(3);
            info.status = rest.next().and_then(|s| Info::at(line, s));
            info.bytes = rest.next().and_then(|b| Info::at(line, b));
            break;
        }
        client = Some(f);
    }
    let method = &request[..memchr(b' ', request).unwrap_or(request.len())];
    if method != b"-" {
        info.method = Info::at(line, method);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    fn run(line: &[u8]) -> (Line, Vec<u8>) {
        let mut ex = Extracted::default();
        let r = HaproxyExtractor.extract(line, Field::Request, &mut ex);
        (r, ex.target(line).to_vec())
    }

    const PREFIX: &str = "Feb 25 16:19:49 192.168.4.2 haproxy[7]: 141.35.244.171:53332 [25/Feb/2019:16:19:48.143] fe~ be/srv 0/0/7/1457/1487 200 11394 - - ---- 2/1/0/0/0 0/0 {Mozilla/5.0} {} ";

    #[test]
    fn requests() {
        let line = format!("{PREFIX}\"GET /a?b=#22x#22 HTTP/1.1\"");
        assert_eq!(run(line.as_bytes()), (Line::Record, b"/a?b=\"x\"".to_vec()));
        let line = "Feb 25 16:19:38 192.168.4.2 haproxy[1]: Proxy prod_http_in started.";
        assert_eq!(run(line.as_bytes()).0, Line::Skip(Skip::NoRequest));
        let line = format!("{PREFIX}\"<BADREQ>\"");
        assert_eq!(run(line.as_bytes()).0, Line::Skip(Skip::NoRequest));
    }

    #[test]
    fn cut_requests_are_truncated() {
        let long = "a".repeat(LOG_URI_LIMIT);
        let line = format!("{PREFIX}\"GET /{long}");
        assert!(matches!(
            run(line.as_bytes()).0,
            Line::Error(LineError::Truncated, _)
        ));
        let cut = format!("GET /{}", "b".repeat(LOG_URI_LIMIT - 10));
        let line = format!("{PREFIX}\"{cut}\"");
        assert!(matches!(
            run(line.as_bytes()).0,
            Line::Error(LineError::Truncated, _)
        ));
        // Long but whole.
        let whole = format!("GET /{} HTTP/1.1", "c".repeat(LOG_URI_LIMIT - 20));
        let line = format!("{PREFIX}\"{whole}\"");
        assert_eq!(run(line.as_bytes()).0, Line::Record);
    }
}
