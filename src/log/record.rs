//! The record reader: one log format's reader behind one type, so that the
//! pipeline reads a line the same way whatever the format.

use std::sync::Arc;

use super::csv::CsvColumns;
use super::info::Info;
use super::json::JsonPaths;
use super::{Extracted, Field, Line, LogFormat, ReadOptions, Reader, ReaderLoop};

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
/// assert_eq!(record.target(line), b"/a?b");
/// ```
#[derive(Debug)]
pub struct RecordReader {
    format: LogFormat,
    /// What the reader was made with.
    options: ReadOptions,
    extractor: Reader,
}

/// Reads one line into a record: the dispatch over the formats
/// ([`Reader`]), or one format's reader itself (see
/// [`RecordReader::run_loop`]), so that a line loop generic over it calls
/// the reader directly. Every [`LogReader`](super::LogReader) is one.
pub(crate) trait Extract {
    /// Each line is one URL, whatever field is asked for, and nothing is
    /// read into the record: [`extract`](Self::extract) only tells a blank
    /// line (the pipeline's reader of URL lists).
    const PLAIN: bool = false;
    /// Clears `out` and reads `line` (without its line end) into it.
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line;
    /// See [`LogReader::request_start`](super::LogReader::request_start).
    #[inline(always)]
    fn request_start(&self, _line: &[u8]) -> Option<usize> {
        None
    }
    /// See [`LogReader::request_closes`](super::LogReader::request_closes).
    #[inline(always)]
    fn request_closes(&self, _rest: &[u8]) -> bool {
        false
    }
    /// See [`LogReader::hosts_in_line`](super::LogReader::hosts_in_line).
    #[inline(always)]
    fn hosts_in_line(&self) -> bool {
        false
    }
    /// See [`LogReader::hosted_request_start`](super::LogReader::hosted_request_start).
    #[inline(always)]
    fn hosted_request_start(&self, _line: &[u8]) -> Option<(usize, usize)> {
        None
    }
    /// See [`LogReader::read_host`](super::LogReader::read_host).
    fn read_host(&self, _field: &[u8], _out: &mut Extracted) {}
    /// See [`LogReader::info_in_line`](super::LogReader::info_in_line).
    #[inline(always)]
    fn info_in_line(&self, _line: &[u8], _target: usize, _after: usize) -> Info {
        Info::default()
    }
}

impl RecordReader {
    /// A reader for `format`; `json_paths` are the JSON field paths (for
    /// `json`; `None`: the nginx preset's).
    pub fn new(format: LogFormat, json_paths: Option<JsonPaths>) -> RecordReader {
        let options = ReadOptions {
            json_paths,
            ..ReadOptions::default()
        };
        RecordReader::with_options(format, options)
    }

    /// A reader for `format` with what the run tells the readers.
    pub(crate) fn with_options(format: LogFormat, options: ReadOptions) -> RecordReader {
        let extractor = Reader::new(format, &options);
        RecordReader {
            format,
            options,
            extractor,
        }
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

    /// Runs the line loop `l` over this reader: over the format's reader
    /// itself when the registry says it has a loop of its own (CLF), else
    /// over the dispatch in [`read`](Self::read) (see `Reader::run_loop`).
    #[inline]
    pub(crate) fn run_loop<L: ReaderLoop>(&mut self, l: L) {
        self.extractor.run_loop(l);
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
    /// assert_eq!(record.target(line), b"/a/b?q=1");
    /// ```
    pub fn header(&mut self, line: &[u8]) {
        self.extractor.header(line);
    }

    /// The columns of a `csv`/`tsv` log (`--columns`; `None`: those of the
    /// preset its header row shows). Set before the first line: the reader
    /// is made again with them.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use canonurl::log::{CsvColumns, Extracted, Field, Line, LogFormat, RecordReader};
    ///
    /// let mut reader = RecordReader::new(LogFormat::Csv, None);
    /// let columns: CsvColumns = "url=path,host=site".parse().unwrap();
    /// reader.csv_columns(Some(Arc::new(columns)));
    /// let mut record = Extracted::default();
    /// assert_eq!(reader.read(b"site,path", Field::Request, &mut record), Line::Skip(canonurl::log::Skip::Header));
    /// let line = b"a.example,/x";
    /// assert_eq!(reader.read(line, Field::Request, &mut record), Line::Record);
    /// assert_eq!((&record.host[..], record.target(line)), (&b"a.example"[..], &b"/x"[..]));
    /// ```
    pub fn csv_columns(&mut self, columns: Option<Arc<CsvColumns>>) {
        self.options.csv_columns = columns;
        self.extractor = Reader::new(self.format, &self.options);
    }
}
