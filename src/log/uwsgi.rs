//! uWSGI's request log, as its default request logger writes it.
//!
//! ```text
//! [pid: 88185|app: 0|req: 1/1] 127.0.0.1 () {38 vars in 696 bytes} [Sun Mar 13 22:49:12 2016]
//!     POST /update_metrics => generated 47 bytes in 129 msecs (HTTP/1.1 200) 9 headers in 378 bytes
//!     (1 switches on core 3)
//! ```
//!
//! That is `[pid: P|app: A|req: N/T] ADDR (USER) {VARS vars in SIZE bytes}
//! [CTIME] METHOD URI => generated RSIZE bytes in TIME msecs (PROTO STATUS)
//! ...`, one line per request. The URI is `REQUEST_URI` as the web server
//! passed it, not escaped: it ends where the last ` => generated ` starts.
//! The time is C's `ctime` in the server's local time, with no zone; it is
//! read as UTC. The log names no host and no referer.
//!
//! uWSGI writes its own messages (start-up, workers spawned and reloaded)
//! to the same file when it logs to one (`--daemonize`, `--logto`): a line
//! with no `[pid: ` is one of those, skipped as [`Skip::NoRequest`]. A line
//! may carry a prefix before `[pid: ` (`--log-date` writes the date and
//! ` - `).

use memchr::{memchr, memmem, memrchr};

use super::info::Info;
use super::ReadOptions;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, Skip};

/// Reads uWSGI request-log records.
#[derive(Clone, Debug, Default)]
pub struct UwsgiExtractor;

/// How far into a line its `[pid: ` may start: after a prefix such as
/// `--log-date`'s (`Sun Mar 13 22:49:12 2016 - `), not deep in a message.
const PREFIX_LIMIT: usize = 64;

/// The record's start, `[pid: `, in the line's first bytes.
fn record_start(line: &[u8]) -> Option<usize> {
    memmem::find(&line[..line.len().min(PREFIX_LIMIT + 6)], b"[pid: ")
}

/// The fields of a request line, as spans of the line.
struct Fields<'a> {
    client: &'a [u8],
    time: &'a [u8],
    method: &'a [u8],
    uri: &'a [u8],
    /// `RSIZE`: the response body's size.
    bytes: Option<&'a [u8]>,
    status: Option<&'a [u8]>,
}

/// `bytes` from `from` up to the first `sep` after it: the field and where
/// the rest starts, or the offset where the line went wrong.
fn until<'a>(line: &'a [u8], from: usize, sep: &[u8]) -> Result<(&'a [u8], usize), usize> {
    match memmem::find(&line[from..], sep) {
        Some(i) => Ok((&line[from..from + i], from + i + sep.len())),
        None => Err(from),
    }
}

/// Splits a record that starts at `start` (its `[pid: `) into its fields,
/// or gives the offset where it is not a request line of uWSGI's shape.
fn fields(line: &[u8], start: usize) -> Result<Fields<'_>, usize> {
    let (_, at) = until(line, start, b"] ")?;
    let (client, at) = until(line, at, b" (")?;
    let (_user, at) = until(line, at, b") {")?;
    let (_vars, at) = until(line, at, b"} [")?;
    let (time, at) = until(line, at, b"] ")?;
    let (method, at) = until(line, at, b" ")?;
    if method.is_empty() || time.is_empty() {
        return Err(start);
    }
    // The URI is not escaped: the last ` => generated ` ends it.
    const GENERATED: &[u8] = b" => generated ";
    let end = memmem::rfind(&line[at..], GENERATED).ok_or(at)? + at;
    let uri = &line[at..end];
    let after = end + GENERATED.len();
    let tail = &line[after..];
    let bytes = tail
        .split(|&b| b == b' ')
        .next()
        .filter(|b| crate::ascii::is_decimal(b));
    // `(HTTP/1.1 200)`: the status closes the first parenthesis after
    // (`(200)` when the server passed no protocol).
    let status = memchr(b'(', tail).and_then(|open| {
        let inner = &tail[open + 1..];
        let inner = &inner[..memchr(b')', inner)?];
        Some(memrchr(b' ', inner).map_or(inner, |space| &inner[space + 1..]))
    });
    Ok(Fields {
        client,
        time,
        method,
        uri,
        bytes,
        status,
    })
}

impl LogReader for UwsgiExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        UwsgiExtractor
    }

    /// Reads one line (without its line end).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        if crate::ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        let Some(start) = record_start(line) else {
            // One of uWSGI's own messages, not a request.
            return Line::Skip(Skip::NoRequest);
        };
        let f = match fields(line, start) {
            Ok(f) => f,
            Err(at) => return Line::Error(LineError::Malformed, at),
        };
        if out.want_info {
            let info = &mut out.info;
            info.client = Info::at(line, f.client);
            info.time = Info::at(line, f.time);
            info.method = Info::at(line, f.method);
            info.bytes = f.bytes.and_then(|b| Info::at(line, b));
            info.status = f.status.and_then(|s| Info::at(line, s));
        }
        if !field.request() {
            // The default request logger writes no referer.
            return Line::Skip(Skip::EmptyField);
        }
        if f.uri.is_empty() {
            return Line::Error(LineError::BadRequestLine, start);
        }
        out.connect = f.method.eq_ignore_ascii_case(b"CONNECT");
        out.lend_target(line, f.uri);
        out.has_target = true;
        Line::Record
    }

    /// A `[pid: ` record start and the ` => generated ` that follows the
    /// URI.
    fn shape(line: &[u8]) -> Option<u8> {
        let start = record_start(line)?;
        memmem::find(&line[start..], b" => generated ").map(|_| 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Extract;

    const LINE: &str = "[pid: 88185|app: 0|req: 1/1] 127.0.0.1 () {38 vars in 696 bytes} \
        [Sun Mar 13 22:49:12 2016] POST /update_metrics?a=1 => generated 47 bytes in 129 msecs \
        (HTTP/1.1 200) 9 headers in 378 bytes (1 switches on core 3)";

    fn run(line: &str, field: Field) -> (Line, Vec<u8>, Extracted) {
        let mut out = Extracted::default();
        out.want_info(true);
        let r = UwsgiExtractor.extract(line.as_bytes(), field, &mut out);
        (r, out.target(line.as_bytes()).to_vec(), out)
    }

    #[test]
    fn request_and_its_fields() {
        let (r, target, out) = run(LINE, Field::Request);
        assert_eq!((r, &target[..]), (Line::Record, &b"/update_metrics?a=1"[..]));
        let line = LINE.as_bytes();
        let info = out.info;
        assert_eq!(info.status(line), Some(200));
        assert_eq!(info.bytes(line), Some(47));
        assert_eq!(info.method(line), Some(&b"POST"[..]));
        assert_eq!(info.client(line), Some(&b"127.0.0.1"[..]));
        // 2016-03-13 22:49:12 UTC.
        assert_eq!(info.time(line), Some(1_457_909_352));
        // No referer in the format.
        assert_eq!(run(LINE, Field::Referer).0, Line::Skip(Skip::EmptyField));
    }

    #[test]
    fn uri_is_taken_as_logged_up_to_the_last_generated() {
        let line = LINE.replace(
            "/update_metrics?a=1",
            "/a b => generated \"q\"?x=%41",
        );
        let (r, target, _) = run(&line, Field::Request);
        assert_eq!(r, Line::Record);
        assert_eq!(target, b"/a b => generated \"q\"?x=%41");
        // A prefix (`--log-date`) before the record, a user, `micros`.
        let line = format!(
            "Sun Mar 13 22:49:12 2016 - {}",
            LINE.replace("()", "(alice)").replace("msecs", "micros")
        );
        let (r, target, out) = run(&line, Field::Request);
        assert_eq!((r, &target[..]), (Line::Record, &b"/update_metrics?a=1"[..]));
        assert_eq!(out.info.status(line.as_bytes()), Some(200));
        // No protocol logged.
        let line = LINE.replace("(HTTP/1.1 200)", "(404)");
        let (r, _, out) = run(&line, Field::Request);
        assert_eq!(r, Line::Record);
        assert_eq!(out.info.status(line.as_bytes()), Some(404));
    }

    #[test]
    fn messages_are_skipped_and_broken_records_rejected() {
        for message in [
            "*** Starting uWSGI 2.0.18 (64bit) on [Sun Mar 13 22:40:01 2016] ***",
            "spawned uWSGI worker 1 (pid: 88185, cores: 1)",
        ] {
            assert_eq!(run(message, Field::Request).0, Line::Skip(Skip::NoRequest));
        }
        assert_eq!(run(" \t", Field::Request).0, Line::Skip(Skip::EmptyLine));
        // Cut before the URI's end.
        let cut = &LINE[..LINE.find(" => ").unwrap()];
        assert!(matches!(
            run(cut, Field::Request).0,
            Line::Error(LineError::Malformed, _)
        ));
        let cut = &LINE[..40];
        assert!(matches!(
            run(cut, Field::Request).0,
            Line::Error(LineError::Malformed, _)
        ));
    }

    #[test]
    fn shape() {
        assert_eq!(UwsgiExtractor::shape(LINE.as_bytes()), Some(0));
        assert_eq!(UwsgiExtractor::shape(b"[pid: 1|app: 0] started"), None);
        assert_eq!(
            UwsgiExtractor::shape(b"127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2"),
            None
        );
    }
}
