//! The record reader: one log format's extractor behind one type, so that
//! the pipeline reads a line the same way whatever the format.

use std::sync::Arc;

use super::csv::CsvColumns;
use super::json::JsonPaths;
use super::Reader;
use super::{Extracted, Field, Line, LogFormat};

/// Reads the lines of one input of a given [`LogFormat`] into [`Extracted`]
/// records. Formats with header state (W3C's `#Fields:`) remember the last
/// header line read; [`RecordReader::header`] primes that state for a reader
/// that starts in the middle of an input.
///
/// ```
/// use canonurl::log::{Extracted, Field, Line, LogFormat, RecordReader};
///
/// let mut reader = RecordReader::new(LogFormat::Combined, None);
/// let mut record = Extracted::default();
/// let line = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?b HTTP/1.1" 200 1 "-" "ua""#;
/// assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
/// assert_eq!(record.target, b"/a?b");
/// ```
#[derive(Debug)]
pub struct RecordReader {
    format: LogFormat,
    extractor: Reader,
}

/// Reads one line into a record: [`RecordReader::read`], or one format's
/// reader itself (see [`RecordReader::own_loop`]), so that a line loop
/// generic over it calls the reader directly. Every [`LogReader`](super::LogReader) is one.
pub(crate) trait Extract {
    /// Clears `out` and reads `line` (without its line end) into it.
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line;
    /// See [`LogReader::request_start`](super::LogReader::request_start).
    fn request_start(&self, line: &[u8]) -> Option<usize>;
    /// See [`LogReader::request_closes`](super::LogReader::request_closes).
    fn request_closes(&self, rest: &[u8]) -> bool;
}

/// The reader's dispatch over formats: no target is found before its line
/// is read.
impl Extract for RecordReader {
    #[inline]
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        self.read(line, field, out)
    }

    #[inline(always)]
    fn request_start(&self, _: &[u8]) -> Option<usize> {
        None
    }

    #[inline(always)]
    fn request_closes(&self, _: &[u8]) -> bool {
        false
    }
}

impl RecordReader {
    /// A reader for `format`; `json_paths` are the JSON field paths (for
    /// `json`; `None`: the nginx preset's).
    pub fn new(format: LogFormat, json_paths: Option<JsonPaths>) -> RecordReader {
        let extractor = Reader::new(format, json_paths);
        RecordReader { format, extractor }
    }

    /// The format read.
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// Reads one line (without its line end) into `out`. A `plain` line is
    /// one URL whatever `field` says.
    pub fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        self.extractor.read(line, field, out)
    }

    /// The extractor of this reader's format when it has a line loop of its
    /// own: CLF (common, combined, vhost), the logs most read and the
    /// fastest to read, whose per-line cost the dispatch in
    /// [`read`](Self::read) would otherwise add a few percent to. A caller
    /// runs the same generic loop over this or, when `None`, over the
    /// reader itself ([`Extract`] is implemented by both).
    #[inline]
    pub(crate) fn own_loop(&mut self) -> Option<&mut impl Extract> {
        match &mut self.extractor {
            Reader::Clf(x) => Some(x),
            _ => None,
        }
    }

    /// Lets formats that can leave a record's target in its line do so
    /// (`Extracted::target_at`) instead of copying it: for readers whose
    /// caller takes the target with `Extracted::target_in`.
    pub(crate) fn lend_targets(&mut self) {
        self.extractor.lend_targets();
    }

    /// Takes the header line in effect where this reader starts (the
    /// `#Fields:` line of a W3C log that an earlier piece of the input
    /// held; for Zeek, its last `#separator`, `#unset_field` and
    /// `#empty_field` lines and then its `#fields` line, one per line), for
    /// formats with [`LogFormat::has_header_state`].
    ///
    /// ```
    /// use canonurl::log::{Extracted, Field, Line, LogFormat};
    /// use canonurl::RecordReader;
    ///
    /// // A reader that starts after the `#Fields:` line of its input.
    /// let mut reader = RecordReader::new(LogFormat::W3c, None);
    /// reader.header(b"#Fields: date time cs-method cs-uri-stem cs-uri-query sc-status");
    /// let mut record = Extracted::default();
    /// let line = b"2024-01-02 03:04:05 GET /a/b q=1 200";
    /// assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
    /// assert_eq!(record.target, b"/a/b?q=1");
    /// ```
    pub fn header(&mut self, line: &[u8]) {
        self.extractor.header(line);
    }

    /// The columns of a `csv`/`tsv` log (`--columns`; `None`: those of the
    /// preset its header row shows). Set before the first line.
    pub fn csv_columns(&mut self, columns: Option<Arc<CsvColumns>>) {
        if let Reader::Csv(x) = &mut self.extractor {
            x.set_columns(columns);
        }
    }
}
