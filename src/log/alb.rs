//! AWS Application and Classic Load Balancer access logs.
//!
//! ```text
//! type time elb client:port target:port t1 t2 t3 status tstatus rbytes sbytes "request" "user_agent" ...
//! ```
//!
//! The request field holds an absolute URL with an explicit port
//! (`"GET http://example.com:80/ HTTP/1.1"`); the canonicalizer drops the
//! default port. A Classic ELB line has the same request field, only fewer
//! fields before it, so both are read by finding the first quoted field.
//! The same buckets hold Network Load Balancer TLS records (`tls 2.0 ...`)
//! and ALB connection-log records (starting with a timestamp): neither carries
//! an HTTP request, so they are skipped, not rejected.

use memchr::memchr;

use super::escape::{quoted_end, split_request, Request};
use super::info::Info;
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip};
use crate::ascii;

/// Reads ALB/ELB records.
#[derive(Clone, Debug, Default)]
pub struct AlbExtractor;

/// First fields of lines that are records of the load balancers' logs.
const HTTP_TYPES: [&[u8]; 6] = [b"http", b"https", b"h2", b"grpcs", b"ws", b"wss"];

impl LogReader for AlbExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        AlbExtractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        let first = &line[..memchr(b' ', line).unwrap_or(line.len())];
        if first == b"tls" || (is_timestamp(first) && !third_is_endpoint(line)) {
            // NLB TLS record or ALB connection log: no HTTP request.
            return Line::Skip(Skip::NoRequest);
        }
        // Classic ELB lines start with the timestamp... followed by the ELB
        // name; an ALB line with its type. Both have the request as the
        // first quoted field.
        let Some(q) = memchr(b'"', line) else {
            return Line::Error(LineError::Malformed, 0);
        };
        if !(HTTP_TYPES.contains(&first) || is_timestamp_prefix(first)) {
            return Line::Error(LineError::Malformed, 0);
        }
        let Some(q_end) = quoted_end(line, q) else {
            return Line::Error(LineError::Unterminated, q);
        };
        if out.want_info {
            note_info(line, q, q_end, out);
        }
        if !field.request() {
            // These logs have no referer field.
            return Line::Skip(Skip::EmptyField);
        }
        match split_request(&line[q + 1..q_end]) {
            Ok(Request::Line(r)) => {
                out.connect = r.is_connect();
                out.lend_target(line, r.target);
                out.has_target = true;
                Line::Record
            }
            Ok(Request::Absent) => Line::Skip(Skip::NoRequest),
            Err(e) => Line::Error(e, q + 1),
        }
    }

    /// An ALB, NLB or Classic ELB line: its type and an ISO 8601 time
    /// (or TLS's `2.0`), or, Classic, the time first with a quoted field
    /// after the `ip:port` fields.
    fn shape(line: &[u8]) -> Option<u8> {
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let first = fields.next().unwrap_or_default();
        let second = fields.next().unwrap_or_default();
        let third = fields.next().unwrap_or_default();
        let is_iso_time = |f: &[u8]| f.len() >= 11 && f[4] == b'-' && f[7] == b'-' && f[10] == b'T';
        ((matches!(
            first,
            b"http" | b"https" | b"h2" | b"grpcs" | b"ws" | b"wss" | b"tls"
        ) && (is_iso_time(second) || second == b"2.0"))
            || (is_iso_time(first)
                && memchr(b':', third).is_some()
                && memchr(b'"', line).is_some()))
        .then_some(0)
    }
}

/// True when the third space-separated field is `ip:port`, as in a Classic
/// ELB record (`time elb client:port ...`); a connection-log record has the
/// client's address and port in separate fields.
/// Notes time, client, status (`elb_status_code`), size (`sent_bytes`)
/// and method for [`Extracted::info`]. ALB lines start with the type, then
/// the time; Classic ELB lines with the time. The client is `ip:port`.
#[cold]
fn note_info(line: &[u8], q: usize, q_end: usize, out: &mut Extracted) {
    let mut fields = [&b""[..]; 16];
    let mut n = 0;
    for f in line[..q].split(|&b| b == b' ').filter(|f| !f.is_empty()) {
        if n == fields.len() {
            return;
        }
        fields[n] = f;
        n += 1;
    }
    // `... elb_status target_status received_bytes sent_bytes "request"`
    if n < 7 {
        return;
    }
    let info = &mut out.info;
    let first = usize::from(!is_timestamp_prefix(fields[0]));
    info.time = Info::at(line, fields[first]);
    let client = fields[first + 2];
    let client = match memchr::memrchr(b':', client) {
        Some(c) => &client[..c],
        None => client,
    };
    info.client = Info::at(line, client);
    info.status = Info::at(line, fields[n - 4]);
    info.bytes = Info::at(line, fields[n - 1]);
    let request = &line[q + 1..q_end];
    let method = &request[..memchr(b' ', request).unwrap_or(request.len())];
    if method != b"-" {
        info.method = Info::at(line, method);
    }
}

fn third_is_endpoint(line: &[u8]) -> bool {
    line.split(|&b| b == b' ')
        .nth(2)
        .is_some_and(|f| memchr(b':', f).is_some())
}

/// `2024-10-04T17:05:15.514108Z`: an ISO 8601 timestamp as the whole field.
fn is_timestamp(field: &[u8]) -> bool {
    is_timestamp_prefix(field) && field.ends_with(b"Z")
}

/// Starts like `2024-10-04T`.
fn is_timestamp_prefix(field: &[u8]) -> bool {
    field.len() >= 11
        && ascii::is_decimal(&field[..4])
        && field[4] == b'-'
        && field[7] == b'-'
        && field[10] == b'T'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    fn run(line: &[u8]) -> (Line, Vec<u8>) {
        let mut ex = Extracted::default();
        let r = AlbExtractor.extract(line, Field::Request, &mut ex);
        (r, ex.target(line).to_vec())
    }

    #[test]
    fn alb_lines() {
        let line = br#"http 2018-07-02T22:23:00.186641Z app/lb/50dc 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.46.0" - -"#;
        assert_eq!(
            run(line),
            (Line::Record, b"http://www.example.com:80/".to_vec())
        );
        let line = br#"https 2018-07-02T22:23:00.186641Z app/lb/50dc 1.2.3.4:2817 - -1 -1 -1 200 - 0 272 "- - - " "-" - -"#;
        assert_eq!(run(line).0, Line::Skip(Skip::NoRequest));
        let line =
            b"tls 2.0 2018-12-20T02:59:40 net/my-network-loadbalancer/c6e7 g3d4 1.2.3.4:2817";
        assert_eq!(run(line).0, Line::Skip(Skip::NoRequest));
        let line = br#"2024-11-29T13:45:24.599544Z 172.31.43.26 58206 80 - - - "-" - - - TID_1"#;
        assert_eq!(run(line).0, Line::Skip(Skip::NoRequest));
        // Classic ELB.
        let line = br#"2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.38.0" - -"#;
        assert_eq!(run(line).0, Line::Record);
        assert!(matches!(
            run(b"nonsense \"GET / HTTP/1.1\"").0,
            Line::Error(LineError::Malformed, 0)
        ));
    }
}
