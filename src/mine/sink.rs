//! Records into the summary table: the pipeline's TSV rows, read back.
//!
//! `canonurl summarize` runs the ordinary pipeline (every log format, every
//! compression, threads, the accounting of every line) with TSV rows of
//! `line url key target status bytes time client`, and this sink turns each
//! row into one record of the summary table. It costs a format and a parse
//! per record, which a summary kept by each worker would save (docs/mine.md);
//! the output is the same either way.

use std::io::{self, Write};

use super::summary::Key;
use super::table::SummaryTable;
use crate::ascii;

/// The `--with` columns the sink reads, in this order after the four
/// columns every TSV row has.
pub(crate) const WITH: [crate::log::RecordColumn; 4] = [
    crate::log::RecordColumn::Status,
    crate::log::RecordColumn::Bytes,
    crate::log::RecordColumn::Time,
    crate::log::RecordColumn::Client,
];

/// A `Write` that reads the pipeline's TSV rows into a summary table.
pub(crate) struct RowSink<'t> {
    pub table: &'t mut SummaryTable,
    /// Window length in seconds; `None`: one window for all time.
    pub window: Option<i64>,
    /// A row cut between two writes.
    partial: Vec<u8>,
    /// Records summarized.
    pub records: u64,
}

impl<'t> RowSink<'t> {
    pub(crate) fn new(table: &'t mut SummaryTable, window: Option<i64>) -> RowSink<'t> {
        RowSink {
            table,
            window,
            partial: Vec::new(),
            records: 0,
        }
    }

    fn row(&mut self, row: &[u8]) -> io::Result<()> {
        let mut cells = row.split(|&b| b == b'\t');
        let mut cell = || cells.next().unwrap_or(b"");
        let _line = cell();
        let url = cell();
        let (_key, _target) = (cell(), cell());
        let (status, bytes, time, client) = (cell(), cell(), cell(), cell());
        if url.is_empty() {
            // A line without a URL (counted by the pipeline's accounting).
            return Ok(());
        }
        let status = ascii::parse_u16(status);
        let bytes = ascii::parse_u64(bytes);
        let time = ascii::parse_i64(time);
        let window = match (self.window, time) {
            (Some(w), Some(t)) => Some(t.div_euclid(w) * w),
            _ => None,
        };
        let key = Key {
            host: url_host(url),
            url,
            window,
        };
        let client = (!client.is_empty()).then_some(client);
        self.table.row(key)?.add(status, bytes, client);
        self.records += 1;
        Ok(())
    }
}

impl Write for RowSink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        if !self.partial.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(end) => {
                    let mut row = std::mem::take(&mut self.partial);
                    row.extend_from_slice(&rest[..end]);
                    self.row(&row)?;
                    rest = &rest[end + 1..];
                }
                None => {
                    self.partial.extend_from_slice(rest);
                    return Ok(buf.len());
                }
            }
        }
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.row(&rest[..end])?;
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The host of a canonical URL (without userinfo and port); empty for a
/// path-only target or a URL without an authority.
pub(crate) fn url_host(url: &[u8]) -> &[u8] {
    // `scheme://`, the scheme being ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    // (RFC 3986 §3.1): a `://` later in a path-only target's query is no host.
    let scheme_len = url
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .unwrap_or(url.len());
    if scheme_len == 0 || !url[0].is_ascii_alphabetic() || !url[scheme_len..].starts_with(b"://") {
        return b"";
    }
    let start = scheme_len + 3;
    let rest = &url[start..];
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let mut authority = &rest[..end];
    if let Some(at) = memchr::memrchr(b'@', authority) {
        authority = &authority[at + 1..];
    }
    // The port follows the last ':' unless that ':' is inside an IPv6 literal.
    match memchr::memrchr(b':', authority) {
        Some(colon) if !authority[colon..].contains(&b']') => &authority[..colon],
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_urls() {
        for (url, host) in [
            ("https://example.com/a", "example.com"),
            ("https://example.com", "example.com"),
            ("https://example.com?q", "example.com"),
            ("http://u:p@example.com:8080/x", "example.com"),
            ("http://[::1]:8080/x", "[::1]"),
            ("http://[2001:db8::1]/", "[2001:db8::1]"),
            ("/path/only?x=http://a.b/", ""),
            ("mailto:a@b.c", ""),
            ("//a.example/x", ""),
            ("1http://a.example/", ""),
        ] {
            assert_eq!(url_host(url.as_bytes()), host.as_bytes(), "{url}");
        }
    }

    #[test]
    fn rows_cut_anywhere_between_writes_read_the_same() {
        let rows = b"1\thttps://a.example/x\t1\t/x\t200\t512\t86401\t192.0.2.1\n\
                     2\t\t\tmalformed-record\t\t\t\t\n\
                     3\t/y\t2\t/y\t404\t10\t-5\t\n\
                     4\thttps://a.example/x\t1\t/x\t\t0\t\t192.0.2.2\n";
        let whole = {
            let mut t = SummaryTable::new(usize::MAX);
            let mut s = RowSink::new(&mut t, Some(86_400));
            s.write_all(rows).unwrap();
            assert_eq!(s.records, 3);
            let mut out = Vec::new();
            t.finish(&mut out).unwrap();
            out
        };
        let text = String::from_utf8(whole.clone()).unwrap();
        // /y at time -5 is in the window that starts a day before the epoch.
        assert!(text.contains("\t/y\t-86400\t1\t0\t"), "{text}");
        assert!(
            text.contains("a.example\thttps://a.example/x\t86400\t1\t1\t"),
            "{text}"
        );
        assert!(
            text.contains("a.example\thttps://a.example/x\t-\t1\t0\t"),
            "{text}"
        );
        for cut in 1..rows.len() {
            let mut t = SummaryTable::new(usize::MAX);
            let mut s = RowSink::new(&mut t, Some(86_400));
            s.write_all(&rows[..cut]).unwrap();
            s.write_all(&rows[cut..]).unwrap();
            let mut out = Vec::new();
            t.finish(&mut out).unwrap();
            assert!(out == whole, "cut at {cut}");
        }
    }
}
