//! Squid's native access log (`logformat squid`, the default).
//!
//! ```text
//! 1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://www.example.com/a - HIER_DIRECT/93.184.216.34 text/html
//! time          elapsed client      code/status  bytes method URL   user hierarchy/peer  type
//! ```
//!
//! Fields are separated by runs of spaces (Squid pads the elapsed time).
//! A forward proxy's URL field is the absolute URL the client asked for; a
//! `CONNECT` logs `host:port` (authority form, skipped as
//! [`Skip::AuthorityForm`]). Requests Squid could not parse log a method of
//! `NONE` and a URL such as `error:invalid-request`: no request, skipped.
//! The format has no referer.
//!
//! Squid strips the query from logged URLs by default
//! (`strip_query_terms on`), so two URLs that differ only in their query
//! come out the same unless the proxy was set to log queries.

use super::info::Info;
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip};

/// Reads Squid native access-log records.
#[derive(Clone, Debug, Default)]
pub struct SquidExtractor;

/// True when `f` is Squid's `CODE/status` field (`TCP_MISS/200`,
/// `NONE_NONE/400`, `TCP_TUNNEL/200`, `TCP_DENIED/403`).
pub(crate) fn is_result_code(f: &[u8]) -> bool {
    let Some(slash) = f.iter().position(|&b| b == b'/') else {
        return false;
    };
    let (code, status) = (&f[..slash], &f[slash + 1..]);
    code.len() >= 3
        && code.iter().all(|&b| b.is_ascii_uppercase() || b == b'_')
        && status.len() == 3
        && status.iter().all(u8::is_ascii_digit)
}

/// True when `f` is a Unix time with milliseconds (`1286536309.450`).
pub(crate) fn is_unix_time(f: &[u8]) -> bool {
    match f.iter().position(|&b| b == b'.') {
        Some(dot) => {
            dot >= 9
                && f[..dot].iter().all(u8::is_ascii_digit)
                && f.len() > dot + 1
                && f[dot + 1..].iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

impl LogReader for SquidExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        SquidExtractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        let mut fields = line
            .split(|&b| b == b' ' || b == b'\t')
            .filter(|f| !f.is_empty());
        let Some(time) = fields.next() else {
            return Line::Skip(Skip::EmptyLine);
        };
        let (_elapsed, client, code) = (fields.next(), fields.next(), fields.next());
        let (bytes, method, url) = (fields.next(), fields.next(), fields.next());
        let (Some(code), Some(method), Some(url)) = (code, method, url) else {
            return Line::Error(LineError::Malformed, line.len());
        };
        if !is_unix_time(time) || !is_result_code(code) {
            return Line::Error(LineError::Malformed, 0);
        }
        if out.want_info {
            // `code/status`: the status is the three digits after the `/`.
            let info = &mut out.info;
            info.time = Info::at(line, time);
            info.client = client.and_then(|c| Info::at(line, c));
            info.status = Info::at(line, &code[code.len() - 3..]);
            info.bytes = bytes.and_then(|b| Info::at(line, b));
            info.method = Info::at(line, method).filter(|_| method != b"NONE");
        }
        if !field.request() {
            // The native format logs no referer.
            return Line::Skip(Skip::EmptyField);
        }
        if method == b"NONE" || url == b"-" || url.starts_with(b"error:") {
            return Line::Skip(Skip::NoRequest);
        }
        out.connect = method.eq_ignore_ascii_case(b"CONNECT");
        out.lend_target(line, url);
        out.has_target = true;
        Line::Record
    }

    /// A Unix time with milliseconds first and a result code
    /// (`TCP_MISS/200`) fourth.
    fn shape(line: &[u8]) -> Option<u8> {
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        if !is_unix_time(fields.next().unwrap_or_default()) {
            return None;
        }
        is_result_code(fields.nth(2).unwrap_or_default()).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    fn run(line: &str, field: Field) -> (Line, Vec<u8>, bool) {
        let mut out = Extracted::default();
        let r = SquidExtractor.extract(line.as_bytes(), field, &mut out);
        (r, out.target(line.as_bytes()).to_vec(), out.connect)
    }

    #[test]
    fn other_fields() {
        let l = "1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://www.example.com/a?b - HIER_DIRECT/93.184.216.34 text/html";
        let mut out = Extracted::default();
        out.want_info(true);
        assert_eq!(
            SquidExtractor.extract(l.as_bytes(), Field::Request, &mut out),
            Line::Record
        );
        let (i, b) = (out.info, l.as_bytes());
        assert_eq!(i.status(b), Some(200));
        assert_eq!(i.bytes(b), Some(1150));
        assert_eq!(i.method(b), Some(&b"GET"[..]));
        assert_eq!(i.time(b), Some(1_286_536_309));
        assert_eq!(i.client(b), Some(&b"192.168.0.1"[..]));
    }

    #[test]
    fn records() {
        let l = "1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://www.example.com/a?b - HIER_DIRECT/93.184.216.34 text/html";
        assert_eq!(
            run(l, Field::Request),
            (Line::Record, b"http://www.example.com/a?b".to_vec(), false)
        );
        assert_eq!(run(l, Field::Referer).0, Line::Skip(Skip::EmptyField));
        let l = "1286536309.451   5012 192.168.0.1 TCP_TUNNEL/200 5000 CONNECT www.example.com:443 - HIER_DIRECT/93.184.216.34 -";
        assert_eq!(
            run(l, Field::Request),
            (Line::Record, b"www.example.com:443".to_vec(), true)
        );
        let l = "1286536309.452      0 192.168.0.1 NONE_NONE/400 3900 NONE error:invalid-request - HIER_NONE/- text/html";
        assert_eq!(run(l, Field::Request).0, Line::Skip(Skip::NoRequest));
    }

    #[test]
    fn not_squid() {
        assert_eq!(run("", Field::Request).0, Line::Skip(Skip::EmptyLine));
        assert_eq!(run("   ", Field::Request).0, Line::Skip(Skip::EmptyLine));
        let l = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2";
        assert_eq!(
            run(l, Field::Request).0,
            Line::Error(LineError::Malformed, 0)
        );
        let l = "1286536309.450 175 192.168.0.1 TCP_MISS/200";
        assert!(matches!(
            run(l, Field::Request).0,
            Line::Error(LineError::Malformed, _)
        ));
    }

    #[test]
    fn field_shapes() {
        assert!(is_result_code(b"TCP_MISS/200"));
        assert!(is_result_code(b"NONE_NONE/000"));
        assert!(!is_result_code(b"TCP_MISS/20"));
        assert!(!is_result_code(b"tcp/200"));
        assert!(!is_result_code(b"200"));
        assert!(is_unix_time(b"1286536309.450"));
        assert!(!is_unix_time(b"1286536309"));
        assert!(!is_unix_time(b"1.2.3.4"));
        assert!(!is_unix_time(b"12865363x9.450"));
    }
}
