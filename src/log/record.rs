//! The record reader: one log format's extractor behind one type, so that
//! the pipeline reads a line the same way whatever the format.

use std::sync::Arc;

use super::alb::AlbExtractor;
use super::clf::ClfExtractor;
use super::csv::{CsvColumns, CsvExtractor};
use super::envoy::EnvoyExtractor;
use super::haproxy::HaproxyExtractor;
use super::json::{JsonExtractor, JsonPaths};
use super::s3::S3Extractor;
use super::squid::SquidExtractor;
use super::w3c::W3cExtractor;
use super::zeek::ZeekExtractor;
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
    extractor: Extractor,
}

/// Reads one line into a record: [`RecordReader::read`], or one format's
/// extractor itself (see [`RecordReader::own_loop`]), so that a line loop
/// generic over it calls the extractor directly.
pub(crate) trait Extract {
    /// Reads `line` (without its line end) into `out`.
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line;

    /// Where the request target of `line` starts, for a format whose
    /// request field, in its usual shape, ends in a known way after the
    /// target ([`request_closes`](Self::request_closes)), so that the
    /// target's own scan can find its end: then a record with no host, whose
    /// [`extract`](Self::extract) would lend (`Extracted::target_at`) the
    /// target that starts there and ends where `request_closes` holds.
    /// `None`: not known; the caller extracts the line.
    #[inline(always)]
    fn request_start(&self, _line: &[u8]) -> Option<usize> {
        None
    }

    /// Whether `rest`, the part of a line after a target that
    /// [`request_start`](Self::request_start) found and that ends at a
    /// space, closes the request field in the usual way, so that
    /// [`extract`](Self::extract) would take that target.
    #[inline(always)]
    fn request_closes(&self, _rest: &[u8]) -> bool {
        false
    }
}

impl Extract for RecordReader {
    #[inline]
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        self.read(line, field, out)
    }
}

impl Extract for ClfExtractor {
    #[inline]
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        ClfExtractor::extract(self, line, field, out)
    }

    #[inline(always)]
    fn request_start(&self, line: &[u8]) -> Option<usize> {
        ClfExtractor::request_start(self, line)
    }

    #[inline(always)]
    fn request_closes(&self, rest: &[u8]) -> bool {
        super::clf::request_closes(rest)
    }
}

/// One format's extractor.
#[derive(Debug)]
enum Extractor {
    /// A `plain` line is its own target.
    Plain,
    Clf(ClfExtractor),
    W3c(W3cExtractor),
    Alb(AlbExtractor),
    Json(JsonExtractor),
    Haproxy(HaproxyExtractor),
    S3(S3Extractor),
    Squid(SquidExtractor),
    Envoy(EnvoyExtractor),
    Zeek(ZeekExtractor),
    Csv(CsvExtractor),
}

impl RecordReader {
    /// A reader for `format`; `json_paths` are the JSON field paths (for
    /// `json`; `None`: the nginx preset's).
    pub fn new(format: LogFormat, json_paths: Option<JsonPaths>) -> RecordReader {
        let extractor = match format {
            LogFormat::Plain => Extractor::Plain,
            LogFormat::Common | LogFormat::Combined => Extractor::Clf(ClfExtractor::new(false)),
            LogFormat::Vhost => Extractor::Clf(ClfExtractor::new(true)),
            LogFormat::W3c => Extractor::W3c(W3cExtractor::new(false)),
            LogFormat::Cloudfront => Extractor::W3c(W3cExtractor::new(true)),
            LogFormat::Alb => Extractor::Alb(AlbExtractor),
            LogFormat::Json => Extractor::Json(JsonExtractor::new(json_paths.unwrap_or_default())),
            LogFormat::Haproxy => Extractor::Haproxy(HaproxyExtractor),
            LogFormat::S3 => Extractor::S3(S3Extractor),
            LogFormat::Squid => Extractor::Squid(SquidExtractor),
            LogFormat::Envoy => Extractor::Envoy(EnvoyExtractor),
            LogFormat::Zeek => Extractor::Zeek(ZeekExtractor::default()),
            LogFormat::Csv => Extractor::Csv(CsvExtractor::new(b',', None)),
            LogFormat::Tsv => Extractor::Csv(CsvExtractor::new(b'\t', None)),
        };
        RecordReader { format, extractor }
    }

    /// The format read.
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// Reads one line (without its line end) into `out`. A `plain` line is
    /// one URL whatever `field` says.
    pub fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        match &mut self.extractor {
            Extractor::Plain => {
                out.clear();
                if line.iter().all(|&b| b == b' ' || b == b'\t') {
                    return Line::Skip(super::Skip::EmptyLine);
                }
                out.target.extend_from_slice(line);
                out.has_target = true;
                Line::Record
            }
            Extractor::Clf(x) => x.extract(line, field, out),
            Extractor::W3c(x) => x.extract(line, field, out),
            Extractor::Alb(x) => x.extract(line, field, out),
            Extractor::Json(x) => x.extract(line, field, out),
            Extractor::Haproxy(x) => x.extract(line, field, out),
            Extractor::S3(x) => x.extract(line, field, out),
            Extractor::Squid(x) => x.extract(line, field, out),
            Extractor::Envoy(x) => x.extract(line, field, out),
            Extractor::Zeek(x) => x.extract(line, field, out),
            Extractor::Csv(x) => x.extract(line, field, out),
        }
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
            Extractor::Clf(x) => Some(x),
            _ => None,
        }
    }

    /// Lets formats that can leave a record's target in its line do so
    /// (`Extracted::target_at`) instead of copying it: for readers whose
    /// caller takes the target with `Extracted::target_in`.
    pub(crate) fn lend_targets(&mut self) {
        if let Extractor::Clf(x) = &mut self.extractor {
            x.lend = true;
        }
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
        let out = &mut Extracted::default();
        // What the line gives is its reader's to report, where it is.
        let _ = match &mut self.extractor {
            Extractor::W3c(x) => x.extract(line, Field::Request, out),
            // The directives carried with the `#fields` line, one per line.
            Extractor::Zeek(x) => {
                for l in line.split(|&b| b == b'\n') {
                    let _ = x.extract(l, Field::Request, out);
                }
                return;
            }
            Extractor::Csv(x) => x.extract(line, Field::Request, out),
            _ => return,
        };
    }

    /// The columns of a `csv`/`tsv` log (`--columns`; `None`: those of the
    /// preset its header row shows). Set before the first line.
    pub fn csv_columns(&mut self, columns: Option<Arc<CsvColumns>>) {
        if let Extractor::Csv(x) = &mut self.extractor {
            x.set_columns(columns);
        }
    }
}
