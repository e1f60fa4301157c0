//! The log formats: the [`LogReader`] trait that a format's reader
//! implements, and the [`formats!`] macro that turns the one list of
//! readers and their formats (at the end of `src/log/mod.rs`) into what
//! enumerates them.
//!
//! Everything that enumerates the formats comes from that list: the reader
//! modules' declarations, the [`LogFormat`] enum with its `-f` names and help, [`LogFormat::ALL`] (and so the README's
//! formats table, which `tests/readme.rs` checks against it), the header
//! lines each format carries between pieces, the reader
//! [`RecordReader::new`](super::RecordReader::new) builds, the `match` that
//! [`RecordReader::read`](super::RecordReader::read) dispatches on (one arm
//! per reader, each calling its own code: no virtual call per line), and
//! the order in which `-f auto` tries the readers' tests, and which readers
//! a line loop is compiled for ([`Reader::run_loop`](super::Reader::run_loop):
//! those whose entry says `own_loop`).
//! A reader takes what a run tells it through [`ReadOptions`], each reading
//! what is its own.
//!
//! A new format is one file in `src/log/` with a type implementing
//! [`LogReader`], and one entry in the list (see the test at the end of
//! this file for the smallest reader).

use std::sync::Arc;

use super::csv::CsvColumns;
use super::info::Info;
use super::json::JsonPaths;
use super::{Extract, Extracted, Field, HeaderLine, Line, LogFormat};

/// What a run tells the readers of its formats, each reader taking what is
/// its own in its [`LogReader::new`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadOptions {
    /// The JSON field paths given or detected (`json`; `None`: the nginx
    /// preset's).
    pub json_paths: Option<JsonPaths>,
    /// `--columns` (`csv`, `tsv`; `None`: those of the preset its header
    /// row shows).
    pub csv_columns: Option<Arc<CsvColumns>>,
}

/// A line loop generic over what reads a line, run by
/// [`Reader::run_loop`](super::Reader::run_loop) over the reader it picks.
pub(crate) trait ReaderLoop {
    fn run<R: Extract>(self, reader: &mut R);
}

/// Checks the `own_loop` marker of a registry entry (see [`formats!`]).
macro_rules! own_loop {
    (own_loop) => {};
}
pub(crate) use own_loop;

/// A log format's reader: one line at a time into an [`Extracted`], and
/// what the rest of the crate needs to know of its formats.
///
/// Only [`new`](Self::new) and [`read`](Self::read) are required; the
/// defaults fit a format of one line per record, with no header lines, no
/// target found before its line is read, and no part in `-f auto`.
pub(crate) trait LogReader: Sized + std::fmt::Debug {
    /// A reader of `format`, one of those the reader's registry entry
    /// lists, with what the run tells it (`opts`).
    fn new(format: LogFormat, opts: &ReadOptions) -> Self;

    /// Reads one line (without its line end) into `out`, which the caller
    /// ([`Extract::extract`]) has cleared.
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line;

    /// Where the request target of `line` starts, for a format whose
    /// request field, in its usual shape, ends in a known way after the
    /// target ([`request_closes`](Self::request_closes)), so that the
    /// target's own scan can find its end: then a record with no host, whose
    /// [`read`](Self::read) would leave in the line (`Extracted::lend_target`) the target
    /// that starts there and ends where `request_closes` holds. `None`: not
    /// known; the caller reads the line.
    #[inline(always)]
    fn request_start(&self, _line: &[u8]) -> Option<usize> {
        None
    }

    /// [`request_start`](Self::request_start) of a record that names its
    /// host before its request in a field of its own (a virtual host
    /// first): where that field ends and where the target starts, if the
    /// line is one whose [`read`](Self::read) gives the host, scheme and
    /// port that [`read_host`](Self::read_host) reads from the field, and
    /// lends the target that starts there and ends where
    /// [`request_closes`](Self::request_closes) holds. The field is
    /// `line[..end]`. `None`: not known; the caller reads the line.
    #[inline(always)]
    fn hosted_request_start(&self, _line: &[u8]) -> Option<(usize, usize)> {
        None
    }

    /// Reads the host field that [`hosted_request_start`]
    /// (Self::hosted_request_start) found into `out` (cleared) as
    /// [`read`](Self::read) reads it: host, scheme, port; the host left
    /// empty where `read` would reject the line for it.
    fn read_host(&self, _field: &[u8], _out: &mut Extracted) {}

    /// Whether [`hosted_request_start`](Self::hosted_request_start) may
    /// find lines (and [`request_start`](Self::request_start) finds none):
    /// the line loop of a reader that says so is one of its own.
    #[inline(always)]
    fn hosts_in_line(&self) -> bool {
        false
    }

    /// Whether `rest`, the part of a line after a target that
    /// [`request_start`](Self::request_start) found and that ends at a
    /// space, closes the request field in the usual way, so that
    /// [`read`](Self::read) would take that target.
    #[inline(always)]
    fn request_closes(&self, _rest: &[u8]) -> bool {
        false
    }

    /// The other fields of a record whose target
    /// [`request_start`](Self::request_start) found at `target` and whose
    /// request field [`request_closes`](Self::request_closes) said ends
    /// before `after` (the byte after its closing quote): what
    /// [`read`](Self::read) notes of them in [`Extracted::info`] when asked.
    #[inline(always)]
    fn info_in_line(&self, _line: &[u8], _target: usize, _after: usize) -> Info {
        Info::default()
    }

    /// How to find the header lines whose state the records after them
    /// depend on (W3C's `#Fields:`), for formats that have them: a reader
    /// that starts in the middle of an input is given the last one with
    /// [`header`](Self::header).
    const HEADER_LINE: Option<HeaderLine> = None;

    /// Takes the header line(s) in effect where this reader starts, as
    /// [`HEADER_LINE`](Self::HEADER_LINE) finds them.
    fn header(&mut self, _line: &[u8]) {}

    /// `-f auto`: the format that `line`, a header line that only it
    /// writes (W3C's `#Fields:`), decides on at once. `first`: the line is
    /// the input's first that is not blank.
    fn decides(_line: &[u8], _first: bool) -> Option<LogFormat> {
        None
    }

    /// `-f auto`: whether `line` (not blank, not a `#` directive) has the
    /// shape of this reader's records, and if so the details its formats
    /// are told apart by, as bits (see [`Tally`]). A line with the shapes of
    /// several readers votes for the one whose registry entry gives the
    /// highest `score`.
    fn shape(_line: &[u8]) -> Option<u8> {
        None
    }

    /// `-f auto`: which of the reader's formats the lines that voted for
    /// it are, from their details; `None`: the first of the registry entry.
    fn voted(_tally: &Tally) -> Option<LogFormat> {
        None
    }
}

/// Every format's reader reads a line the same way: the record is cleared,
/// then the format reads it.
impl<R: LogReader> Extract for R {
    #[inline]
    fn extract(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        out.clear();
        self.read(line, field, out)
    }

    #[inline(always)]
    fn request_start(&self, line: &[u8]) -> Option<usize> {
        LogReader::request_start(self, line)
    }

    #[inline(always)]
    fn request_closes(&self, rest: &[u8]) -> bool {
        LogReader::request_closes(self, rest)
    }

    #[inline(always)]
    fn hosts_in_line(&self) -> bool {
        LogReader::hosts_in_line(self)
    }

    #[inline(always)]
    fn hosted_request_start(&self, line: &[u8]) -> Option<(usize, usize)> {
        LogReader::hosted_request_start(self, line)
    }

    fn read_host(&self, field: &[u8], out: &mut Extracted) {
        LogReader::read_host(self, field, out)
    }

    #[inline(always)]
    fn info_in_line(&self, line: &[u8], target: usize, after: usize) -> Info {
        LogReader::info_in_line(self, line, target, after)
    }
}

/// The sampled lines that voted for one reader in `-f auto`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// How many lines had its shape.
    pub lines: usize,
    /// How many of them had each detail bit that [`LogReader::shape`] gave.
    pub details: [usize; 8],
}

/// One reader's part in `-f auto`, from its registry entry.
#[derive(Clone, Copy)]
pub(crate) struct Detector {
    /// Where the reader's tests come in the detection order: header lines
    /// are tried in this order, and a tie of votes goes to the lowest.
    pub rank: u8,
    /// Which shape a line with several gets: the highest.
    pub score: u8,
    pub decides: fn(&[u8], bool) -> Option<LogFormat>,
    pub shape: fn(&[u8]) -> Option<u8>,
    pub voted: fn(&Tally) -> LogFormat,
}

/// Generates, from the list of readers and their formats, everything that
/// enumerates the formats (see the [module docs](self)).
macro_rules! formats {
    ($(
        $(#[doc = $reader_doc:literal])*
        $reader:ident($module:ident::$ty:ident) {
            rank: $rank:literal, score: $score:literal $(, $own_loop:ident)?
        } => [
            $( $(#[doc = $doc:literal])* $format:ident = $name:literal ),+ $(,)?
        ]
    ),+ $(,)?) => {
        $(pub(crate) mod $module;)+

        /// A log format (`-f/--log-format`). `auto` is not a format: it is
        /// the choice to [`detect`](crate::log) one per input.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
        pub enum LogFormat {
            $($(
                $(#[doc = $doc])*
                #[cfg_attr(feature = "cli", value(name = $name))]
                $format,
            )+)+
        }

        /// How many formats there are.
        const FORMATS: usize = [$($(stringify!($format),)+)+].len();

        impl LogFormat {
            /// Every format, in the order of the registry (and of `-f`'s help).
            pub const ALL: [LogFormat; FORMATS] = [$($(LogFormat::$format,)+)+];

            /// The name used on the command line and in statistics.
            pub fn name(self) -> &'static str {
                match self {
                    $($(LogFormat::$format => $name,)+)+
                }
            }

            /// How to find the format's header lines, for formats whose lines
            /// depend on an earlier one (W3C's `#Fields:`); `None` for the others.
            pub(crate) fn header_line(self) -> Option<$crate::log::HeaderLine> {
                match self {
                    $($(LogFormat::$format)|+ => <$module::$ty as $crate::log::registry::LogReader>::HEADER_LINE,)+
                }
            }
        }

        /// One format's reader.
        #[derive(Debug)]
        pub(crate) enum Reader {
            $($(#[doc = $reader_doc])* $reader($module::$ty),)+
        }

        impl Reader {
            /// The reader of `format`.
            pub(crate) fn new(format: LogFormat, opts: &$crate::log::registry::ReadOptions) -> Reader {
                match format {
                    $($(LogFormat::$format)|+ => {
                        Reader::$reader(<$module::$ty as $crate::log::registry::LogReader>::new(format, opts))
                    })+
                }
            }

            /// Runs `l` over this reader: over the format's reader itself,
            /// the loop compiled for it, when its entry says `own_loop`
            /// (the logs most read and the fastest to read, whose per-line
            /// cost the dispatch would add a few percent to); else over
            /// this dispatch ([`Extract`](crate::log::Extract) for
            /// `Reader`), one copy of the loop for all the others.
            #[inline]
            pub(crate) fn run_loop<L: $crate::log::registry::ReaderLoop>(&mut self, l: L) {
                match self {
                    $($(Reader::$reader(x) => {
                        $crate::log::registry::own_loop!($own_loop);
                        return l.run(x);
                    })?)+
                    #[allow(unreachable_patterns)]
                    _ => {}
                }
                l.run(self)
            }

            /// Reads one line (without its line end) into `out`.
            #[inline]
            pub(crate) fn read(
                &mut self,
                line: &[u8],
                field: $crate::log::Field,
                out: &mut $crate::log::Extracted,
            ) -> $crate::log::Line {
                match self {
                    $(Reader::$reader(x) => $crate::log::Extract::extract(x, line, field, out),)+
                }
            }

            /// See [`LogReader::header`].
            pub(crate) fn header(&mut self, line: &[u8]) {
                match self {
                    $(Reader::$reader(x) => $crate::log::registry::LogReader::header(x, line),)+
                }
            }

        }

        /// The dispatch over the formats: no target is found before its
        /// line is read.
        impl $crate::log::Extract for Reader {
            #[inline]
            fn extract(
                &mut self,
                line: &[u8],
                field: $crate::log::Field,
                out: &mut $crate::log::Extracted,
            ) -> $crate::log::Line {
                self.read(line, field, out)
            }
        }

        /// Each reader's part in `-f auto`, in registry order.
        pub(crate) const DETECTORS: [$crate::log::registry::Detector; [$(stringify!($reader),)+].len()] = [$(
            $crate::log::registry::Detector {
                rank: $rank,
                score: $score,
                decides: <$module::$ty as $crate::log::registry::LogReader>::decides,
                shape: <$module::$ty as $crate::log::registry::LogReader>::shape,
                voted: |tally| {
                    <$module::$ty as $crate::log::registry::LogReader>::voted(tally).unwrap_or([$(LogFormat::$format,)+][0])
                },
            },
        )+];
    };
}
pub(crate) use formats;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Skip, DETECTORS};

    /// The smallest new format: a made-up log of `METHOD target` lines. Its
    /// reader is all that its file would hold; registering it is one entry
    /// in the list at the end of `log/mod.rs`, `Toy(toy::ToyReader) { rank:
    /// 12, score: 0 } => [Toy = "toy"]` with a doc comment on `Toy` (its
    /// `-f` help), from which `mod toy`, `-f toy`, its place in
    /// `LogFormat::ALL` and the dispatch come.
    #[derive(Debug)]
    struct ToyReader;

    impl LogReader for ToyReader {
        fn new(_: LogFormat, _: &ReadOptions) -> Self {
            ToyReader
        }

        fn read(&mut self, line: &[u8], _: Field, out: &mut Extracted) -> Line {
            if crate::ascii::is_blank(line) {
                return Line::Skip(Skip::EmptyLine);
            }
            let Some(space) = line.iter().position(|&b| b == b' ') else {
                return Line::Error(super::super::LineError::BadRequestLine, line.len());
            };
            out.lend_target(line, &line[space + 1..]);
            out.has_target = true;
            out.connect = &line[..space] == b"CONNECT";
            Line::Record
        }
    }

    #[test]
    fn the_smallest_format() {
        let mut toy = ToyReader::new(LogFormat::Plain, &ReadOptions::default());
        let mut out = Extracted::default();
        // Read through `Extract`, as the line loops read every format: the
        // record is cleared before each line, whatever the last one left.
        assert_eq!(
            toy.extract(b"CONNECT h:443", Field::Request, &mut out),
            Line::Record
        );
        assert_eq!(
            (out.target(b"CONNECT h:443"), out.connect),
            (&b"h:443"[..], true)
        );
        assert_eq!(
            toy.extract(b"GET /a?b", Field::Request, &mut out),
            Line::Record
        );
        assert_eq!(
            (out.target(b"GET /a?b"), out.connect),
            (&b"/a?b"[..], false)
        );
        assert_eq!(
            toy.extract(b" \t", Field::Request, &mut out),
            Line::Skip(Skip::EmptyLine)
        );
        assert!(out.target(b" \t").is_empty() && !out.has_target);
        assert_eq!(
            toy.extract(b"GET", Field::Request, &mut out),
            Line::Error(super::super::LineError::BadRequestLine, 3)
        );
        // The defaults: no header lines, no part in `-f auto`.
        assert!(ToyReader::HEADER_LINE.is_none());
        assert_eq!(ToyReader::decides(b"#Fields: a", true), None);
        assert_eq!(ToyReader::shape(b"GET /a"), None);
    }

    /// The loop goes over CLF's reader itself (its entry says `own_loop`)
    /// and over the dispatch for every other format.
    #[test]
    fn run_loop_picks_the_readers_with_a_loop_of_their_own() {
        struct Seen<'a>(&'a mut &'static str);
        impl ReaderLoop for Seen<'_> {
            fn run<R: Extract>(self, _: &mut R) {
                *self.0 = std::any::type_name::<R>();
            }
        }
        for format in LogFormat::ALL {
            let mut reader = crate::log::Reader::new(format, &ReadOptions::default());
            let mut seen = "";
            reader.run_loop(Seen(&mut seen));
            let own = matches!(
                format,
                LogFormat::Common | LogFormat::Combined | LogFormat::Vhost
            );
            let want = if own {
                "::clf::ClfExtractor"
            } else {
                "::log::Reader"
            };
            assert!(seen.ends_with(want), "{format}: {seen}");
        }
    }

    /// `-f auto`'s order is well defined: one reader per rank, and one per
    /// score among the readers that vote.
    #[test]
    fn detection_order_is_total() {
        let mut ranks: Vec<u8> = DETECTORS.iter().map(|d| d.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), DETECTORS.len(), "ranks are distinct");
        let mut scores: Vec<u8> = DETECTORS
            .iter()
            .map(|d| d.score)
            .filter(|&s| s > 0)
            .collect();
        let voters = scores.len();
        scores.sort_unstable();
        scores.dedup();
        assert_eq!(
            scores.len(),
            voters,
            "scores of voting readers are distinct"
        );
    }
}
