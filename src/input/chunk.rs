//! Cutting a stream into pieces of whole lines, with the header lines
//! (`#Fields:`, a CSV header row) that later lines depend on.

use std::io::{self, Read};
use std::sync::Arc;

use memchr::{memchr, memrchr};

use crate::log::HeaderLine;

/// How much of a line too long to read is kept for `--rejects` and the
/// original column (the chunker keeps at least this much, or `max_line`).
pub const TOO_LONG_HEAD: usize = 4096;

/// One piece of an input, as handed to a worker.
#[derive(Debug)]
pub enum Piece {
    /// Whole lines: every line ends in `\n`, except possibly the last line of
    /// the input.
    Lines {
        /// The bytes.
        buf: Vec<u8>,
        /// Number of the first line (1-based).
        first_line: u64,
        /// The `#Fields:` line in effect at the start of `buf`, for formats
        /// whose lines depend on an earlier header.
        header: Option<Arc<[u8]>>,
    },
    /// A line longer than the limit: its first bytes were read and the rest
    /// skipped up to the next newline.
    TooLong {
        /// Its line number.
        line: u64,
        /// Its length without the line end.
        len: u64,
        /// True when a line end followed it (false for a last line without one).
        line_end: bool,
        /// The buffer, returned for reuse (its contents are the line's head).
        buf: Vec<u8>,
    },
    /// The input ended with a read error inside a line: the bytes of the
    /// incomplete last line, which are not processed as a record.
    Fragment {
        /// Its line number.
        line: u64,
        /// The buffer, returned for reuse (its contents are the fragment).
        buf: Vec<u8>,
    },
}

/// Cuts a stream into [`Piece`]s of about `chunk_len` bytes at line ends.
pub struct Chunker {
    reader: Box<dyn Read + Send>,
    chunk_len: usize,
    max_line: usize,
    /// Bytes after the last line end of the previous piece.
    carry: Vec<u8>,
    next_line: u64,
    eof: bool,
    /// A read error, reported once the bytes before it are handed out.
    error: Option<io::Error>,
    /// The header lines to carry from piece to piece (the last one seen).
    track_header: Option<HeaderLine>,
    header: Option<Arc<[u8]>>,
    /// The last line of each of the format's directives
    /// ([`HeaderLine::directives`]) and, last, the last header line: what
    /// `header` joins.
    header_parts: Vec<Option<Box<[u8]>>>,
    /// Hand out lines as soon as a read comes back short.
    streaming: bool,
    /// Total decompressed bytes handed out.
    pub bytes: u64,
}

/// Bytes asked for per `read()` from a pipe: Linux's default pipe capacity.
const PIPE_READ: usize = 64 * 1024;

impl Chunker {
    /// A chunker over `reader`. Lines longer than `max_line` bytes are
    /// reported as [`Piece::TooLong`].
    #[cfg(test)]
    pub fn new(reader: Box<dyn Read + Send>, chunk_len: usize, max_line: usize) -> Self {
        Chunker::with_head(Vec::new(), reader, chunk_len, max_line)
    }

    /// A chunker over `head` followed by `reader`.
    pub fn with_head(
        head: Vec<u8>,
        reader: Box<dyn Read + Send>,
        chunk_len: usize,
        max_line: usize,
    ) -> Self {
        Chunker {
            reader,
            chunk_len: chunk_len.max(1),
            max_line: max_line.max(1),
            carry: head,
            next_line: 1,
            eof: false,
            error: None,
            track_header: None,
            header: None,
            header_parts: Vec::new(),
            streaming: false,
            bytes: 0,
        }
    }

    /// Carry the last header line of the format (W3C's `#Fields:`, see
    /// [`LogFormat::header_line`](crate::log::LogFormat::header_line)) from
    /// piece to piece; `None` stops.
    pub fn track_header(&mut self, header: Option<HeaderLine>) {
        self.track_header = header;
    }

    /// Notes the header line that `buf`, a piece handed out, sets for the
    /// pieces after it.
    fn scan_header(&mut self, buf: &[u8]) {
        let Some(header) = self.track_header else {
            return;
        };
        if !header.first_line && !header.directives.is_empty() {
            return self.scan_directives(buf, header);
        }
        let found = if header.first_line {
            match self.header {
                Some(_) => None,
                None => first_line(buf, self.max_line),
            }
        } else {
            last_header_line(buf, header, self.max_line)
        };
        if let Some(h) = found {
            self.header = Some(Arc::from(h));
        }
    }

    /// [`scan_header`](Self::scan_header) for a format with directives
    /// (Zeek's `#unset_field`): notes the last line of each directive and
    /// the last header line of `buf`, and carries them all, one per line,
    /// the header line last (it sets the layout the records after it are
    /// read with).
    fn scan_directives(&mut self, buf: &[u8], header: HeaderLine) {
        let kinds = header.directives.len() + 1;
        self.header_parts.resize(kinds, None);
        let mut found = vec![false; kinds];
        for line in marked_lines_rev(buf, header.marker) {
            if line.len() > self.max_line {
                continue;
            }
            let kind = if (header.is_header)(line) {
                Some(kinds - 1)
            } else {
                header.directives.iter().position(|d| line.starts_with(d))
            };
            if let Some(k) = kind.filter(|&k| !found[k]) {
                found[k] = true;
                self.header_parts[k] = Some(Box::from(line));
                if found.iter().all(|&f| f) {
                    break;
                }
            }
        }
        if found.iter().any(|&f| f) {
            let mut joined = Vec::new();
            for part in self.header_parts.iter().flatten() {
                if !joined.is_empty() {
                    joined.push(b'\n');
                }
                joined.extend_from_slice(part);
            }
            self.header = Some(Arc::from(joined));
        }
    }

    /// Switches to the header lines of `header` after the first piece
    /// (`first`, the only one handed out) was read with others: the format
    /// is settled from that piece, so the header it sets is looked for
    /// again.
    pub fn retrack_header(&mut self, header: Option<HeaderLine>, first: &[u8]) {
        self.track_header = header;
        self.header = None;
        self.header_parts.clear();
        self.scan_header(first);
    }

    /// Fills `buf` with the next piece. `Ok(None)` at the end of the input;
    /// `Err` after the last good piece when the input could not be read to
    /// its end (a truncated gzip stream, an I/O error).
    pub fn next_piece(&mut self, mut buf: Vec<u8>) -> io::Result<Option<Piece>> {
        buf.clear();
        buf.append(&mut self.carry);
        let mut target = self.chunk_len;
        // Streaming: whether `buf` holds a line end, so that a short read
        // hands out the lines of earlier reads even when it brings none.
        let mut has_line_end = self.streaming && memchr(b'\n', &buf).is_some();
        loop {
            if buf.len() >= target || self.eof || self.error.is_some() {
                if let Some(p) = memrchr(b'\n', &buf) {
                    self.carry.extend_from_slice(&buf[p + 1..]);
                    buf.truncate(p + 1);
                    return Ok(Some(self.lines(buf)));
                }
                // No line end in the buffer.
                if let Some(err) = self.error.take() {
                    if buf.is_empty() {
                        return Err(err);
                    }
                    // Keep the error for the next call; hand out the fragment.
                    self.error = Some(err);
                    let line = self.next_line;
                    self.next_line += 1;
                    self.bytes += buf.len() as u64;
                    return Ok(Some(Piece::Fragment { line, buf }));
                }
                if self.eof {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    // The last line, without a line end.
                    return Ok(Some(self.lines(buf)));
                }
                // The limit is on the line without its line end: allow for
                // a `\r` (the worker checks the exact length).
                if buf.len() > self.max_line + 1 {
                    return self.too_long(buf).map(Some);
                }
                // One line fills the buffer: read on, up to the limit.
                target = (target * 2).min(self.max_line + 2);
            }
            let want = (target - buf.len().min(target)).max(1);
            if !self.streaming {
                // A file: fill the buffer (read_to_end reads into the spare
                // capacity without zeroing it first).
                match (&mut self.reader).take(want as u64).read_to_end(&mut buf) {
                    Ok(0) => self.eof = true,
                    Ok(_) => {}
                    Err(e) => self.error = Some(e),
                }
                continue;
            }
            // A pipe: one read at a time. A read that returns less than asked
            // means the writer is slower than we are (`tail -f`, a slow
            // decompressor): hand out the whole lines now rather than wait
            // for a full piece. When the pipe is full, reads are whole and
            // pieces grow to their usual size.
            let ask = want.min(PIPE_READ);
            let filled = buf.len();
            buf.resize(filled + ask, 0);
            match self.reader.read(&mut buf[filled..]) {
                Ok(0) => {
                    buf.truncate(filled);
                    self.eof = true;
                }
                Ok(n) => {
                    buf.truncate(filled + n);
                    has_line_end = has_line_end || memchr(b'\n', &buf[filled..]).is_some();
                    if n < ask && has_line_end {
                        let p = memrchr(b'\n', &buf).unwrap_or(0);
                        self.carry.extend_from_slice(&buf[p + 1..]);
                        buf.truncate(p + 1);
                        return Ok(Some(self.lines(buf)));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(filled),
                Err(e) => {
                    buf.truncate(filled);
                    self.error = Some(e);
                }
            }
        }
    }

    /// The bytes read after the last piece handed out (the start of its
    /// next line): with that piece, all that was read of the input.
    pub fn carried(&self) -> &[u8] {
        &self.carry
    }

    /// Read one `read()` at a time and hand out whole lines as soon as a
    /// read comes back short (for pipes; files are read a piece at a time).
    pub fn set_streaming(&mut self, on: bool) {
        self.streaming = on;
    }

    fn lines(&mut self, buf: Vec<u8>) -> Piece {
        let mut lines = bytecount::count(&buf, b'\n') as u64;
        if buf.last() != Some(&b'\n') {
            lines += 1;
        }
        let first_line = self.next_line;
        self.next_line += lines;
        self.bytes += buf.len() as u64;
        let header = self.header.clone();
        self.scan_header(&buf);
        Piece::Lines {
            buf,
            first_line,
            header,
        }
    }

    /// Skips the rest of an over-long line, keeping its first bytes.
    fn too_long(&mut self, mut buf: Vec<u8>) -> io::Result<Piece> {
        let mut len = buf.len() as u64;
        let mut line_end = false;
        let head_len = buf.len().min(TOO_LONG_HEAD);
        let mut tmp = vec![0u8; 64 * 1024];
        loop {
            let n = match self.reader.read(&mut tmp) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    break;
                }
            };
            if let Some(nl) = memchr(b'\n', &tmp[..n]) {
                len += nl as u64;
                line_end = true;
                self.carry.extend_from_slice(&tmp[nl + 1..n]);
                break;
            }
            len += n as u64;
        }
        self.bytes += len + u64::from(line_end);
        buf.truncate(head_len);
        let line = self.next_line;
        self.next_line += 1;
        Ok(Piece::TooLong {
            line,
            len,
            line_end,
            buf,
        })
    }
}

/// The last line of `buf` (without its line end) that is a `header` line and
/// not longer than `max_line` (the worker rejects a longer one, so it sets
/// no layout).
fn last_header_line(buf: &[u8], header: HeaderLine, max_line: usize) -> Option<&[u8]> {
    marked_lines_rev(buf, header.marker).find(|l| l.len() <= max_line && (header.is_header)(l))
}

/// The lines of `buf` that hold `marker`, last first, without their line
/// ends. Only these lines are looked at, each once: most pieces have none,
/// and one memrchr over the piece finds that out.
fn marked_lines_rev(buf: &[u8], marker: u8) -> impl Iterator<Item = &[u8]> {
    let mut end = buf.len();
    std::iter::from_fn(move || {
        let at = memrchr(marker, &buf[..end])?;
        let start = memrchr(b'\n', &buf[..at]).map_or(0, |p| p + 1);
        end = start;
        let stop = memchr(b'\n', &buf[at..]).map_or(buf.len(), |e| at + e);
        let line = &buf[start..stop];
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// The first line of `buf` that is not blank (after a UTF-8 BOM) and not
/// longer than `max_line` (the worker rejects a longer one, so the reader
/// never sees it): the header row of a CSV log.
fn first_line(buf: &[u8], max_line: usize) -> Option<&[u8]> {
    let blank = |l: &[u8]| {
        let l = l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l);
        crate::ascii::is_blank(l)
    };
    buf.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| l.len() <= max_line && !blank(l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::LogFormat;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The lines in a piece's bytes: its line ends, and one more for a
    /// last line without one.
    fn line_count(buf: &[u8]) -> u64 {
        let ends = buf.iter().filter(|&&b| b == b'\n').count() as u64;
        ends + u64::from(buf.last().is_some_and(|&b| b != b'\n'))
    }

    fn pieces(data: &[u8], chunk: usize, max_line: usize) -> Vec<(String, u64, u64)> {
        let mut c = Chunker::new(Box::new(io::Cursor::new(data.to_vec())), chunk, max_line);
        let mut out = Vec::new();
        while let Some(p) = c.next_piece(Vec::new()).unwrap() {
            out.push(match p {
                Piece::Lines {
                    buf, first_line, ..
                } => (
                    String::from_utf8_lossy(&buf).into_owned(),
                    first_line,
                    line_count(&buf),
                ),
                Piece::TooLong { line, len, .. } => ("TOO LONG".to_string(), line, len),
                Piece::Fragment { line, .. } => ("FRAGMENT".to_string(), line, 0),
            });
        }
        out
    }

    #[test]
    fn cuts_at_line_ends_and_numbers_lines() {
        let p = pieces(b"aa\nbb\ncc\ndd", 4, 100);
        let joined: String = p.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(joined, "aa\nbb\ncc\ndd");
        let mut next = 1;
        for (text, first, lines) in &p {
            assert_eq!(*first, next);
            assert!(text.ends_with('\n') || text == "dd");
            next += lines;
        }
        assert_eq!(next, 5);
    }

    #[test]
    fn long_lines_grow_the_buffer_up_to_the_limit() {
        let mut data = vec![b'x'; 1000];
        data.push(b'\n');
        data.extend_from_slice(b"short\n");
        let p = pieces(&data, 16, 2000);
        assert_eq!(p[0].1, 1);
        assert!(p[0].0.starts_with("xxxx"));
        let p = pieces(&data, 16, 500);
        assert_eq!(p[0], ("TOO LONG".to_string(), 1, 1000));
        // Longer than one read of the skipping loop.
        assert_eq!(p[1], ("short\n".to_string(), 2, 1));
        // Longer than one read of the skipping loop.
        let mut data = vec![b'y'; 200_000];
        data.extend_from_slice(b"\nnext\n");
        let p = pieces(&data, 1024, 100_000);
        assert_eq!(p[0], ("TOO LONG".to_string(), 1, 200_000));
        assert_eq!(p[1], ("next\n".to_string(), 2, 1));
    }

    #[test]
    fn read_error_mid_line_gives_a_fragment_then_the_error() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    self.0 = 1;
                    let d = b"ok\npart";
                    buf[..d.len()].copy_from_slice(d);
                    Ok(d.len())
                } else {
                    Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut"))
                }
            }
        }
        let mut c = Chunker::new(Box::new(Failing(0)), 1024, 4096);
        assert!(matches!(
            c.next_piece(Vec::new()),
            Ok(Some(Piece::Lines { buf, first_line: 1, .. })) if buf == b"ok\n"
        ));
        assert!(matches!(
            c.next_piece(Vec::new()),
            Ok(Some(Piece::Fragment { line: 2, .. }))
        ));
        assert!(c.next_piece(Vec::new()).is_err());
    }

    #[test]
    fn streaming_hands_out_earlier_lines_when_a_short_read_brings_none() {
        // A full read of whole lines, then a short one of a line still
        // being written: the whole lines go out before the next read (which,
        // from a followed file or a pipe, may wait for a long time).
        struct Script(Arc<AtomicU64>);
        impl Read for Script {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let call = self.0.fetch_add(1, Ordering::Relaxed);
                let data: &[u8] = match call {
                    0 => {
                        for pair in buf.chunks_mut(2) {
                            pair.copy_from_slice(b"x\n");
                        }
                        return Ok(buf.len());
                    }
                    1 => b"par",
                    2 => b"tial\n",
                    _ => b"",
                };
                buf[..data.len()].copy_from_slice(data);
                Ok(data.len())
            }
        }
        let reads = Arc::new(AtomicU64::new(0));
        let mut c = Chunker::new(Box::new(Script(Arc::clone(&reads))), 1 << 20, 4096);
        c.set_streaming(true);
        let Some(Piece::Lines { buf, .. }) = c.next_piece(Vec::new()).unwrap() else {
            panic!("lines expected");
        };
        assert_eq!(reads.load(Ordering::Relaxed), 2);
        assert_eq!(line_count(&buf) as usize, PIPE_READ / 2);
        assert_eq!(buf.len(), PIPE_READ);
        let Some(Piece::Lines {
            buf, first_line, ..
        }) = c.next_piece(Vec::new()).unwrap()
        else {
            panic!("lines expected");
        };
        assert_eq!(buf, b"partial\n");
        assert_eq!(first_line as usize, PIPE_READ / 2 + 1);
    }

    #[test]
    fn fields_header_is_carried() {
        let data = b"#Fields: a b\n1 2\n3 4\n#Fields: c\n5\n6\n";
        let mut c = Chunker::new(Box::new(io::Cursor::new(data.to_vec())), 3, 100);
        c.track_header(LogFormat::W3c.header_line());
        // Each piece must carry the last `#Fields:` line before it.
        let mut seen: Option<String> = None;
        let mut pieces = 0;
        while let Some(Piece::Lines { header, buf, .. }) = c.next_piece(Vec::new()).unwrap() {
            let header = header.map(|h| String::from_utf8_lossy(&h).into_owned());
            assert_eq!(header, seen);
            for line in String::from_utf8_lossy(&buf).lines() {
                if line.starts_with("#Fields:") {
                    seen = Some(line.to_string());
                }
            }
            pieces += 1;
        }
        assert!(pieces >= 4, "{pieces}");
        assert_eq!(seen.as_deref(), Some("#Fields: c"));
    }

    /// Each piece of `data` (`chunk` bytes a piece, `format`'s header lines
    /// tracked) and the header it carries; the chunker after the last one.
    fn with_headers(
        data: &[u8],
        chunk: usize,
        format: LogFormat,
    ) -> (Chunker, Vec<(String, Option<String>)>) {
        let mut c = Chunker::new(Box::new(io::Cursor::new(data.to_vec())), chunk, 100);
        c.track_header(format.header_line());
        let mut got = Vec::new();
        while let Some(Piece::Lines { header, buf, .. }) = c.next_piece(Vec::new()).unwrap() {
            let header = header.map(|h| String::from_utf8_lossy(&h).into_owned());
            got.push((String::from_utf8_lossy(&buf).into_owned(), header));
        }
        (c, got)
    }

    #[test]
    fn zeek_directives_are_carried_with_the_fields_line() {
        // A new block whose `#unset_field` is in one piece and whose
        // `#fields` is in the next.
        let data = b"#unset_field\t-\n#fields\ta\tb\n1\t2\n3\t4\n#separator \\x2c\n#unset_field,NONE\n#empty_field,E\n#path,http\n#fields,a,b\n5,6\n";
        // Pieces of one line each.
        let (c, got) = with_headers(data, 1, LogFormat::Zeek);
        assert!(got.len() >= 4, "{got:?}");
        // After the last piece: the last of each directive, the `#fields`
        // line last (what a piece after it would get).
        assert_eq!(
            c.header.as_deref(),
            Some(&b"#separator \\x2c\n#unset_field,NONE\n#empty_field,E\n#fields,a,b"[..])
        );
        // A piece that starts inside the block gets the directives read so far.
        let inside = got.iter().find(|(b, _)| b.starts_with("#path")).unwrap();
        assert_eq!(
            inside.1.as_deref(),
            Some("#separator \\x2c\n#unset_field,NONE\n#empty_field,E\n#fields\ta\tb"),
            "{got:?}"
        );
    }

    #[test]
    fn csv_header_row_is_carried() {
        let data = b"\n \nurl,host\n/a,h\n/b,h\n/c,h\nurl,host\n/d,h\n";
        let (_, headers) = with_headers(data, 4, LogFormat::Csv);
        // Until the piece that holds it, none; then the first row, always.
        assert!(headers.len() >= 4, "{headers:?}");
        let mut seen = false;
        for (buf, header) in headers {
            assert_eq!(header.is_some(), seen, "{buf:?}");
            if let Some(h) = header {
                assert_eq!(h, "url,host");
            }
            seen |= buf.contains("url,host");
        }
        // A first row too long for the worker is no header: the next one is.
        assert_eq!(
            first_line(b"\xEF\xBB\xBF\r\nlong long\nurl\n", 5),
            Some(&b"url"[..])
        );
        assert_eq!(first_line(b"\n\n", 5), None);
    }

    #[test]
    fn the_header_is_looked_for_again_once_the_format_is_known() {
        // The first piece is read before detection, with W3C's header lines.
        let data = b"#separator \\x09\n#fields\tts\turi\n1\t/a\n";
        let mut c = Chunker::new(Box::new(io::Cursor::new(data.to_vec())), 1 << 10, 100);
        c.track_header(LogFormat::any_header_line());
        let Some(Piece::Lines { buf, .. }) = c.next_piece(Vec::new()).unwrap() else {
            panic!("lines expected");
        };
        assert!(c.header.is_none());
        c.retrack_header(LogFormat::Zeek.header_line(), &buf);
        assert_eq!(
            c.header.as_deref(),
            Some(&b"#separator \\x09\n#fields\tts\turi"[..])
        );
        c.retrack_header(LogFormat::Tsv.header_line(), &buf);
        assert_eq!(c.header.as_deref(), Some(&b"#separator \\x09"[..]));
        c.retrack_header(None, &buf);
        assert!(c.header.is_none());
    }

    #[test]
    fn last_header_line_is_the_formats() {
        let w3c = LogFormat::W3c.header_line().unwrap();
        let last = |buf: &[u8], max: usize| {
            last_header_line(buf, w3c, max).map(|l| String::from_utf8_lossy(l).into_owned())
        };
        assert_eq!(
            last(b"#Fields: a\n1 /x#y\n", 100).as_deref(),
            Some("#Fields: a")
        );
        // After a BOM, with a CR, case ignored; the last one wins.
        assert_eq!(
            last(b"#Fields: a\n\xEF\xBB\xBF#fields: b\r\n1 #Fields: c\n", 100).as_deref(),
            Some("\u{feff}#fields: b")
        );
        // A `#` inside a line is not a directive, nor is another one.
        assert_eq!(last(b"1 #Fields: a\n#Version: 1.0\n", 100), None);
        // A line the worker would reject as too long sets nothing.
        assert_eq!(
            last(b"#Fields: a\n#Fields: b c d e\n", 12).as_deref(),
            Some("#Fields: a")
        );
        assert_eq!(last(b"", 100), None);
        assert!(LogFormat::Combined.header_line().is_none());
        assert!(LogFormat::any_header_line().is_some());
    }
}
