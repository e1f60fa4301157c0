//! Zeek (formerly Bro) `http.log` in Zeek's own TSV format.
//!
//! A Zeek log starts with a block of `#` directives that say how to read the
//! lines after it; the block repeats when Zeek reopens the file, and the
//! columns may change with it:
//!
//! ```text
//! #separator \x09
//! #set_separator<TAB>,
//! #empty_field<TAB>(empty)
//! #unset_field<TAB>-
//! #path<TAB>http
//! #fields<TAB>ts<TAB>uid<TAB>id.orig_h<TAB>id.orig_p<TAB>id.resp_h<TAB>id.resp_p<TAB>trans_depth<TAB>method<TAB>host<TAB>uri<TAB>referrer<TAB>...
//! #types<TAB>time<TAB>string<TAB>...
//! 1320279566.452687<TAB>CwFs1P2<TAB>192.168.2.76<TAB>52026<TAB>132.235.215.119<TAB>80<TAB>1<TAB>GET<TAB>www.reddit.com<TAB>/<TAB>-<TAB>...
//! #close<TAB>2017-04-16-21-36-10
//! ```
//!
//! # Directives
//!
//! - `#separator` gives the field separator escaped (`\x09`), after a space
//!   (the separator is not known yet). Only a one-byte separator is read.
//! - `#fields` names the columns, joined by the separator; it also *shows*
//!   the separator (the byte after `#fields`), so a `#fields` line alone is
//!   enough to read the lines after it. That is the line the chunker carries
//!   to a worker that starts in the middle of a file ([`HEADER_LINE`]).
//! - `#unset_field` (default `-`) and `#empty_field` (default `(empty)`) are
//!   the values that mean "no value" and "empty": both are absent here. The
//!   last of each (and of `#separator`) travels with the `#fields` line to
//!   a worker that starts mid-file ([`HEADER_LINE`]'s directives), so a
//!   log that redefines them is read the same in every piece.
//! - Every other `#` line (`#path`, `#open`, `#types`, `#close`, and comments
//!   such as btest's `### BTest baseline ...`) is [`Skip::Header`].
//!
//! # Columns
//!
//! | field | column |
//! |---|---|
//! | target | `uri` (origin-form, or absolute for proxied requests) |
//! | method | `method`: `CONNECT` sets `connect` (the target is authority-form) |
//! | host | `host` (the Host header) |
//! | port | `id.resp_p` (the server port: 443 makes the scheme https) |
//! | referer | `referrer` |
//!
//! and the record's other fields, read only when they are wanted
//! ([`Extracted::want_info`]): time `ts` (Unix seconds), method `method`,
//! status `status_code`, bytes `response_body_len`, client `id.orig_h`.
//! A value with a `\xHH` escape is absent there (it is kept as a place in
//! the line, not unescaped). These columns are not needed for the URL: a
//! line that ends before them is still a record.
//!
//! # Values
//!
//! Zeek writes a byte it will not write raw (the separator, controls,
//! non-ASCII bytes unless UTF-8 output is on) as `\xHH`; those are undone
//! exactly, and any other `\` is data. A value equal to the unset or empty
//! marker is absent (Zeek escapes a real value that would read as one).
//!
//! # Results
//!
//! A data line before any `#fields` line is [`LineError::FieldsMismatch`] at
//! 0, a line with fewer fields than the wanted columns need is
//! `FieldsMismatch` at its end. An absent `uri` is [`Skip::NoRequest`]; no
//! `uri` column is [`LineError::MissingField`]; a port that is not a number
//! is [`LineError::BadHost`] at the field. With [`Field::Referer`], no
//! `referrer` column is `MissingField` and an absent referrer is
//! [`Skip::EmptyField`].

use memchr::memchr;

use super::ReadOptions;
use super::{Extract, Extracted, Field, HeaderLine, Line, LineError, LogFormat, LogReader, Skip};
use crate::ascii;

/// Column roles.
const URI: usize = 0;
const HOST: usize = 1;
const REFERRER: usize = 2;
const METHOD: usize = 3;
const RESP_PORT: usize = 4;
// The record's other fields, read only when they are wanted.
const TS: usize = 5;
const ORIG_H: usize = 6;
const STATUS_CODE: usize = 7;
const RESPONSE_BODY_LEN: usize = 8;
const ROLES: usize = 9;

/// Column names and their role.
const NAMES: [(&[u8], usize); ROLES] = [
    (b"uri", URI),
    (b"host", HOST),
    (b"referrer", REFERRER),
    (b"method", METHOD),
    (b"id.resp_p", RESP_PORT),
    (b"ts", TS),
    (b"id.orig_h", ORIG_H),
    (b"status_code", STATUS_CODE),
    (b"response_body_len", RESPONSE_BODY_LEN),
];

/// The column of a role that the layout lacks.
const ABSENT: usize = usize::MAX;

/// Zeek's header lines: `#fields`, which set the columns of the records
/// after them (and show the separator), carried with the last
/// `#separator`, `#unset_field` and `#empty_field` lines before it.
pub(crate) const HEADER_LINE: HeaderLine = HeaderLine {
    marker: b'#',
    is_header: is_fields_line,
    directives: &[b"#separator ", b"#unset_field", b"#empty_field"],
    first_line: false,
};

/// True if `line` is a `#fields` directive: `#fields` and a separator.
pub(crate) fn is_fields_line(line: &[u8]) -> bool {
    line.strip_prefix(b"#fields")
        .and_then(|rest| rest.first())
        .is_some_and(|&b| is_separator_byte(b))
}

/// A byte that can separate fields: not part of a directive or column name.
fn is_separator_byte(b: u8) -> bool {
    !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'#' | b'\\'))
}

/// Reads Zeek `http.log` TSV lines into [`Extracted`]; keeps the layout of
/// the last `#fields` line and the markers of the directives before it. A
/// data line does not allocate.
#[derive(Clone, Debug)]
pub(crate) struct ZeekExtractor {
    sep: u8,
    unset: Vec<u8>,
    empty: Vec<u8>,
    /// False until the first `#fields` line.
    has_layout: bool,
    /// The column of each role, [`ABSENT`] when not declared.
    col: [usize; ROLES],
}

impl Default for ZeekExtractor {
    fn default() -> Self {
        ZeekExtractor {
            sep: b'\t',
            unset: b"-".to_vec(),
            empty: b"(empty)".to_vec(),
            has_layout: false,
            col: [ABSENT; ROLES],
        }
    }
}

impl LogReader for ZeekExtractor {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        ZeekExtractor::default()
    }

    /// Processes one line (without its line end); see the [module docs](self).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        if line[0] == b'#' {
            self.directive(line);
            return Line::Skip(Skip::Header);
        }
        if !self.has_layout {
            return Line::Error(LineError::FieldsMismatch, 0);
        }
        let want_request = field.request();
        let want_referer = field.referer();
        if want_request && self.col[URI] == ABSENT {
            return Line::Error(LineError::MissingField, 0);
        }
        if field == Field::Referer && self.col[REFERRER] == ABSENT {
            return Line::Error(LineError::MissingField, 0);
        }
        let want_info = out.want_info;
        let wanted = |role: usize| match role {
            REFERRER => want_referer,
            URI | HOST | RESP_PORT => want_request,
            METHOD => want_request || want_info,
            _ => false,
        };
        let last_of = |wanted: &dyn Fn(usize) -> bool| {
            (0..ROLES)
                .filter(|&r| wanted(r) && self.col[r] != ABSENT)
                .map(|r| self.col[r])
                .max()
                .unwrap_or(0)
        };
        let needed = last_of(&wanted);
        let last = match want_info {
            true => last_of(&|r| wanted(r) || r >= TS),
            false => needed,
        };

        // Walk the fields up to the last needed column (and the other
        // fields' columns, which a short line may lack).
        let mut spans: [Option<(usize, usize)>; ROLES] = [None; ROLES];
        let mut start = 0;
        for k in 0..=last {
            if start > line.len() {
                if k > needed {
                    break;
                }
                return Line::Error(LineError::FieldsMismatch, line.len());
            }
            let end = memchr(self.sep, &line[start..]).map_or(line.len(), |e| start + e);
            for (r, span) in spans.iter_mut().enumerate() {
                if self.col[r] == k {
                    *span = Some((start, end));
                }
            }
            start = end + 1;
        }
        let present = |s: Option<(usize, usize)>| {
            s.map(|(a, b)| (a, &line[a..b]))
                .filter(|(_, v)| *v != self.unset.as_slice() && *v != self.empty.as_slice())
        };
        if want_info {
            // Where the value is, when it is present and has no escape.
            let at = |role: usize| {
                let (a, v) = present(spans[role])?;
                (!v.is_empty() && memchr(b'\\', v).is_none()).then_some((a, a + v.len()))
            };
            let info = &mut out.info;
            info.time = at(TS);
            info.method = at(METHOD);
            info.status = at(STATUS_CODE);
            info.bytes = at(RESPONSE_BODY_LEN);
            info.client = at(ORIG_H);
        }

        if want_request {
            if let Some((_, m)) = present(spans[METHOD]) {
                out.connect = m == b"CONNECT";
            }
            match present(spans[URI]) {
                Some((_, uri)) => {
                    // `\xXX` is Zeek's escape: without a `\` the URI is
                    // as logged.
                    if memchr(b'\\', uri).is_some() {
                        unescape_into(out.target_buf(), uri);
                    } else {
                        out.lend_target(line, uri);
                    }
                    out.has_target = true;
                }
                None => return Line::Skip(Skip::NoRequest),
            }
            if let Some((_, h)) = present(spans[HOST]) {
                unescape_into(&mut out.host, h);
            }
            if let Some((at, p)) = present(spans[RESP_PORT]) {
                match ascii::parse_port(p) {
                    Some(port) => out.port = Some(port),
                    None => return Line::Error(LineError::BadHost, at),
                }
            }
        }
        if want_referer {
            if let Some((_, r)) = present(spans[REFERRER]) {
                unescape_into(&mut out.referer, r);
                out.has_referer = true;
            }
            if field == Field::Referer && !out.has_referer {
                return Line::Skip(Skip::EmptyField);
            }
        }
        Line::Record
    }

    const HEADER_LINE: Option<HeaderLine> = Some(HEADER_LINE);

    /// The directives carried with the `#fields` line, one per line.
    fn header(&mut self, line: &[u8]) {
        let out = &mut Extracted::default();
        for l in line.split(|&b| b == b'\n') {
            // What the line gives is its reader's to report, where it is.
            let _ = self.extract(l, Field::Request, out);
        }
    }

    /// A directive that only an HTTP log has (`#fields` with `uri`,
    /// `#path http`), or that only Zeek writes (`#separator`).
    fn decides(line: &[u8], _: bool) -> Option<LogFormat> {
        let sep = |b: &u8| *b == b'\t' || *b == b' ';
        let zeek = if is_fields_line(line) {
            line[8..].split(|&b| b == line[7]).any(|n| n == b"uri")
        } else {
            line.strip_prefix(b"#separator")
                .is_some_and(|r| r.first().is_some_and(sep))
                || line
                    .strip_prefix(b"#path")
                    .is_some_and(|r| r.first().is_some_and(sep) && r[1..].trim_ascii() == b"http")
        };
        zeek.then_some(LogFormat::Zeek)
    }
}

impl ZeekExtractor {
    /// Takes what a `#` line says: the separator, the markers, the layout.
    fn directive(&mut self, line: &[u8]) {
        if is_fields_line(line) {
            self.sep = line[7];
            self.set_layout(&line[8..]);
            return;
        }
        // `#name<sep>value`; `#separator` is followed by a space.
        let name_end = line[1..]
            .iter()
            .position(|&b| b == b' ' || b == self.sep)
            .map_or(line.len(), |p| p + 1);
        let (name, value) = (&line[1..name_end], line.get(name_end + 1..).unwrap_or(&[]));
        match name {
            // One byte, raw or `\xHH` (no allocation: it repeats per block).
            b"separator" => match value {
                [b] => self.sep = *b,
                [b'\\', b'x', hex @ ..] => {
                    if let Some(b) = ascii::hex_pair(hex).filter(|_| hex.len() == 2) {
                        self.sep = b;
                    }
                }
                _ => {}
            },
            b"unset_field" => {
                self.unset.clear();
                self.unset.extend_from_slice(value);
            }
            b"empty_field" => {
                self.empty.clear();
                self.empty.extend_from_slice(value);
            }
            _ => {}
        }
    }

    /// Reads the column names of a `#fields` line (after `#fields` and the
    /// separator). A name that appears twice keeps its first column.
    fn set_layout(&mut self, names: &[u8]) {
        self.col = [ABSENT; ROLES];
        for (k, name) in names.split(|&b| b == self.sep).enumerate() {
            if let Some(&(_, role)) = NAMES.iter().find(|(n, _)| *n == name) {
                if self.col[role] == ABSENT {
                    self.col[role] = k;
                }
            }
        }
        self.has_layout = true;
    }
}

/// Appends `v` to `out` with Zeek's `\xHH` escapes undone; a `\` that does
/// not start one is copied as it is.
pub(crate) fn unescape_into(out: &mut Vec<u8>, v: &[u8]) {
    let mut rest = v;
    while let Some(i) = memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..i]);
        let after = &rest[i + 1..];
        match after.split_first() {
            Some((b'x', hex)) if hex.len() >= 2 => match ascii::hex_pair(&hex[..2]) {
                Some(byte) => {
                    out.push(byte);
                    rest = &hex[2..];
                    continue;
                }
                None => out.push(b'\\'),
            },
            _ => out.push(b'\\'),
        }
        rest = after;
    }
    out.extend_from_slice(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &[&[u8]] = &[
        b"#separator \\x09",
        b"#set_separator\t,",
        b"#empty_field\t(empty)",
        b"#unset_field\t-",
        b"#path\thttp",
        b"#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\ttrans_depth\tmethod\thost\turi\treferrer\tversion",
        b"#types\ttime\tstring\taddr\tport\taddr\tport\tcount\tstring\tstring\tstring\tstring\tstring",
    ];

    fn row(port: &str, method: &str, host: &str, uri: &str, referrer: &str) -> Vec<u8> {
        format!("1.5\tC1\t10.0.0.1\t5000\t10.0.0.2\t{port}\t1\t{method}\t{host}\t{uri}\t{referrer}\t1.1")
            .into_bytes()
    }

    /// Reads the header block, then `lines`; the result and record of the last.
    fn run(field: Field, lines: &[&[u8]]) -> (Line, Extracted) {
        let mut x = ZeekExtractor::default();
        let mut out = Extracted::default();
        for h in HEAD {
            assert_eq!(x.extract(h, field, &mut out), Line::Skip(Skip::Header));
        }
        let mut r = Line::Skip(Skip::EmptyLine);
        for l in lines {
            r = x.extract(l, field, &mut out);
        }
        (r, out)
    }

    #[test]
    fn reads_target_host_port_and_referrer() {
        let l = row("80", "GET", "www.example.com", "/a?b=1", "http://r/");
        let (r, out) = run(Field::Both, &[&l]);
        assert_eq!(r, Line::Record);
        assert_eq!(out.target(&l), b"/a?b=1");
        assert_eq!(out.host, b"www.example.com");
        assert_eq!(out.port, Some(80));
        assert_eq!(out.referer, b"http://r/");
        assert!(out.has_target && out.has_referer && !out.connect);
        let l = row("443", "CONNECT", "h", "h:443", "-");
        let (r, out) = run(Field::Request, &[&l]);
        assert_eq!(r, Line::Record);
        assert!(out.connect);
        assert_eq!(out.port, Some(443));
    }

    #[test]
    fn other_fields() {
        let head = b"#fields\tts\tid.orig_h\tmethod\turi\tstatus_code\tresponse_body_len";
        let run = |line: &[u8]| {
            let mut x = ZeekExtractor::default();
            let mut out = Extracted::default();
            out.want_info(true);
            x.extract(head, Field::Request, &mut out);
            let r = x.extract(line, Field::Request, &mut out);
            let i = out.info;
            let text = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
            (
                r,
                i.time(line),
                text(i.client(line)),
                text(i.method(line)),
                i.status(line),
                i.bytes(line),
            )
        };
        let l = b"1320279566.452687\t192.168.2.76\tGET\t/\t200\t4705";
        assert_eq!(
            run(l),
            (
                Line::Record,
                Some(1_320_279_566),
                Some("192.168.2.76".into()),
                Some("GET".into()),
                Some(200),
                Some(4705)
            )
        );
        // Unset, empty and escaped values are absent.
        let l = b"-\t(empty)\tG\\x45T\t/\t-\t-";
        assert_eq!(run(l), (Line::Record, None, None, None, None, None));
        // A line that ends before the other fields' columns is a record.
        let l = b"1.5\t10.0.0.1\tGET\t/a";
        let got = run(l);
        assert_eq!((got.0, got.1, got.4), (Line::Record, Some(1), None));
        // Not wanted: not noted.
        let mut x = ZeekExtractor::default();
        let mut out = Extracted::default();
        x.extract(head, Field::Request, &mut out);
        x.extract(b"1.5\t10.0.0.1\tGET\t/\t200\t1", Field::Request, &mut out);
        assert_eq!(out.info, Default::default());
    }

    #[test]
    fn carried_directives_are_read_line_by_line() {
        use crate::log::{LogFormat, RecordReader};
        let mut r = RecordReader::new(LogFormat::Zeek, None);
        r.header(b"#separator \\x2c\n#unset_field,NONE\n#empty_field,E\n#fields,uri,host");
        let mut out = Extracted::default();
        assert_eq!(r.read(b"-,NONE", Field::Request, &mut out), Line::Record);
        assert_eq!((out.target(b"-,NONE"), &out.host[..]), (&b"-"[..], &b""[..]));
        assert_eq!(
            r.read(b"E,h", Field::Request, &mut out),
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn unset_and_empty_values_are_absent() {
        let (r, _) = run(Field::Request, &[&row("80", "-", "-", "-", "-")]);
        assert_eq!(r, Line::Skip(Skip::NoRequest));
        let (r, _) = run(Field::Request, &[&row("80", "GET", "h", "(empty)", "-")]);
        assert_eq!(r, Line::Skip(Skip::NoRequest));
        let (r, out) = run(Field::Both, &[&row("80", "GET", "(empty)", "/", "(empty)")]);
        assert_eq!(r, Line::Record);
        assert!(out.host.is_empty() && !out.has_referer);
        let (r, _) = run(Field::Referer, &[&row("80", "GET", "h", "/", "-")]);
        assert_eq!(r, Line::Skip(Skip::EmptyField));
        // The unset port is no port.
        let (_, out) = run(Field::Request, &[&row("-", "GET", "h", "/", "-")]);
        assert_eq!(out.port, None);
        // Redefined markers: `-` is then a value, `NONE` is absent.
        let l = row("80", "GET", "h", "-", "NONE");
        let (r, out) = run(Field::Both, &[b"#unset_field\tNONE", &l]);
        assert_eq!(r, Line::Record);
        assert_eq!(out.target(&l), b"-");
        assert!(!out.has_referer);
    }

    #[test]
    fn escapes_are_undone_exactly() {
        let mut v = Vec::new();
        unescape_into(&mut v, br"/r\xfcma\x09x\x5cy\\z\xg1\x4");
        assert_eq!(v, b"/r\xfcma\tx\\y\\\\z\\xg1\\x4");
        // A value escaped because it equals a marker is a value.
        let l = row("80", "GET", "h", r"\x2d", "-");
        let (r, out) = run(Field::Request, &[&l]);
        assert_eq!(r, Line::Record);
        assert_eq!(out.target(&l), b"-");
        let l = row("80", "GET", r"a\x20b", r"/\xe4 x", r"http://r/\x09");
        let (_, out) = run(Field::Both, &[&l]);
        assert_eq!(out.target(&l), b"/\xe4 x");
        assert_eq!(out.host, b"a b");
        assert_eq!(out.referer, b"http://r/\t");
    }

    #[test]
    fn the_header_may_change_mid_file() {
        let mut x = ZeekExtractor::default();
        let mut out = Extracted::default();
        for h in HEAD {
            x.extract(h, Field::Request, &mut out);
        }
        let l = row("8080", "GET", "h", "/one", "-");
        assert_eq!(x.extract(&l, Field::Request, &mut out), Line::Record);
        assert_eq!((out.target(&l), out.port), (&b"/one"[..], Some(8080)));
        // A new block: fewer columns, uri first, a comma separator.
        assert_eq!(
            x.extract(b"#close\t2020", Field::Request, &mut out),
            Line::Skip(Skip::Header)
        );
        x.extract(b"#separator \\x2c", Field::Request, &mut out);
        x.extract(b"#fields,uri,host", Field::Request, &mut out);
        assert_eq!(
            x.extract(b"/two,h2", Field::Request, &mut out),
            Line::Record
        );
        assert_eq!((out.target(b"/two,h2"), &out.host[..]), (&b"/two"[..], &b"h2"[..]));
        assert_eq!(out.port, None);
        // `#separator` takes one byte, raw or escaped; anything else is ignored.
        for (directive, sep) in [
            (&b"#separator \\x7c"[..], b'|'),
            (b"#separator ;", b';'),
            (b"#separator \\x7", b';'),
            (b"#separator ab", b';'),
        ] {
            x.extract(directive, Field::Request, &mut out);
            assert_eq!(x.sep, sep, "{}", String::from_utf8_lossy(directive));
        }
        // The separator follows from the `#fields` line alone (a worker
        // that starts mid-file gets only that line).
        let mut y = ZeekExtractor::default();
        y.extract(b"#fields uri host", Field::Request, &mut out);
        assert_eq!(y.extract(b"/3 h3", Field::Request, &mut out), Line::Record);
        assert_eq!(out.target(b"/3 h3"), b"/3");
    }

    #[test]
    fn bad_lines_are_errors_with_offsets() {
        let mut x = ZeekExtractor::default();
        let mut out = Extracted::default();
        // Before any `#fields`.
        assert_eq!(
            x.extract(b"1.5\tC1\t/", Field::Request, &mut out),
            Line::Error(LineError::FieldsMismatch, 0)
        );
        // Too few fields: at the end of the line.
        let short = b"1.5\tC1\t10.0.0.1";
        assert_eq!(
            run(Field::Request, &[short]).0,
            Line::Error(LineError::FieldsMismatch, short.len())
        );
        // A port that is no number: at the port field.
        let l = row("http", "GET", "h", "/", "-");
        let at = l.windows(4).position(|w| w == b"http").unwrap();
        assert_eq!(
            run(Field::Request, &[&l]).0,
            Line::Error(LineError::BadHost, at)
        );
        // No uri column.
        let (r, _) = run(Field::Request, &[b"#fields\tts\thost", b"1\th"]);
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
        let (r, _) = run(Field::Referer, &[b"#fields\tts\turi", b"1\t/"]);
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
    }

    #[test]
    fn directive_lines() {
        assert!(is_fields_line(b"#fields\tts\turi"));
        assert!(is_fields_line(b"#fields,uri"));
        assert!(!is_fields_line(b"#fieldsuri"));
        assert!(!is_fields_line(b"#Fields: cs-uri-stem"));
        assert!(!is_fields_line(b"#fields"));
        let (r, _) = run(Field::Request, &[b"### BTest baseline data"]);
        assert_eq!(r, Line::Skip(Skip::Header));
        let (r, _) = run(Field::Request, &[b"  \t "]);
        assert_eq!(r, Line::Skip(Skip::EmptyLine));
    }

    #[test]
    fn mutated_lines_do_not_panic() {
        let base = row("443", "GET", r"h\x41", r"/p\xzz?q", "http://r/");
        let mut x = ZeekExtractor::default();
        let mut out = Extracted::default();
        for h in HEAD {
            x.extract(h, Field::Both, &mut out);
        }
        for cut in 0..=base.len() {
            for &b in &[b'\t', b'\\', b'#', b'x', 0xff] {
                let mut l = base[..cut].to_vec();
                l.push(b);
                l.extend_from_slice(&base[cut..]);
                for field in [Field::Request, Field::Referer, Field::Both] {
                    if let Line::Error(_, at) = x.extract(&l, field, &mut out) {
                        assert!(at <= l.len());
                    }
                    let mut y = x.clone();
                    y.extract(&l[..cut], field, &mut out);
                }
            }
        }
    }
}
