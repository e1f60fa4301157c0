//! Where a worker's line loop sends what each line gave: one [`Sink`] per
//! kind of run, chosen once when the worker is made; the loop is generic
//! over it, so the hot path asks no per-line question about the mode.
//!
//! A sink takes a line two ways. On the bare path a URL is canonicalized
//! straight into the output buffer with nothing else kept per URL
//! ([`Sink::url`], [`Sink::no_url`]); a sink says when it can take that
//! ([`Sink::bare`]: its rows are the URL alone). On the full path it gets
//! the line's slots with everything known of them ([`Sink::line`]). The
//! bytes of rows are written by `output/`.

use xxhash_rust::xxh64::xxh64;

use super::worker::{DistinctUrl, PieceOut, RecordSink, Slot, Urls};
use super::{Mode, Options};
use crate::log::info::Info;
use crate::log::{Extracted, Field, LogFormat};
use crate::output::{Columns, Row, KEY_SEED};

/// One line's result on the full path.
pub(super) struct LineOut<'a> {
    pub format: LogFormat,
    pub line: &'a [u8],
    /// Its number in its input (the line column of TSV and JSON rows; 0
    /// past the first line of a piece read by byte range, whose rows have
    /// none).
    pub number: u64,
    /// One per wanted field.
    pub slots: &'a [Slot],
    /// The canonical URLs the slots point into.
    pub urls: &'a Urls,
    /// The record read from the line (its fields noted when the run wants
    /// them).
    pub record: &'a Extracted,
    /// The name of the input (`--with input`).
    pub input: Option<&'a str>,
}

/// Where a line loop sends each line's URLs.
pub(super) trait Sink {
    /// Whether the sink can take bare URLs at all: the bare loops are not
    /// compiled for one that cannot.
    const BARE: bool;

    /// Whether, in this run, it takes each URL alone (see the module's doc).
    fn bare(&self) -> bool;

    /// Whether a bare URL's output is the URL and a `\n`: a `plain` line
    /// that is its own canonical URL is then its own output.
    fn url_is_line(&self) -> bool;

    /// Bare path: a URL canonicalized at `out.out[start..]`.
    fn url(&mut self, out: &mut PieceOut, start: usize);

    /// Bare path: a line that gave no URL (skipped or rejected; counted and
    /// reported by the loop).
    fn no_url(&mut self, out: &mut PieceOut);

    /// Full path: one line's slots (counted by the loop).
    fn line(&mut self, line: &LineOut<'_>, out: &mut PieceOut);

    /// Whether the sink takes records ([`RecordSink`]): then, on the full
    /// path, a request target canonicalized where it lies in its line goes
    /// to [`record_in_line`](Self::record_in_line), with no slots.
    const RECORDS: bool = false;

    /// A record of `line`, its other fields at `info`, whose one URL (the
    /// request's) is at `out.out[start..]` (counted by the loop).
    fn record_in_line(&mut self, _out: &mut PieceOut, _start: usize, _line: &[u8], _info: &Info) {}
}

/// The run's sink, for [`super::worker::Worker`] to choose its loop's once a
/// piece.
pub(super) enum RunSink {
    /// Records: a row per URL.
    Records(Rows<false>),
    /// `--pipe`: a line out per line in.
    Pipe(Rows<true>),
    /// `--unique`/`--count`: the distinct table.
    Distinct(Distinct),
    /// `canonurl summarize`: the worker's summary table.
    Summary(Summary),
}

impl RunSink {
    /// The sink of a run with `opts` (the summary's is set apart, see
    /// [`Summary`]).
    pub(super) fn new(opts: &Options) -> RunSink {
        match opts.mode {
            Mode::Records => RunSink::Records(Rows::new(opts)),
            Mode::Pipe => RunSink::Pipe(Rows::new(opts)),
            Mode::Unique | Mode::Count => RunSink::Distinct(Distinct {
                both: opts.field == Field::Both,
            }),
        }
    }

    /// The end of a piece of the input: the summary's table is told (its
    /// redirect hints pair a record only with the next one of its piece).
    pub(super) fn piece_end(&mut self) {
        if let RunSink::Summary(Summary(table)) = self {
            table.piece_end();
        }
    }
}

/// Rows written for the writer: records, or with `PIPE` one output line
/// per input line.
pub(super) struct Rows<const PIPE: bool> {
    columns: Columns,
    field: Field,
    /// `--with`: the record's other fields are shown.
    with: bool,
    /// The rows are the URL alone.
    url_alone: bool,
}

impl<const PIPE: bool> Rows<PIPE> {
    fn new(opts: &Options) -> Rows<PIPE> {
        let columns = Columns::new(opts);
        Rows {
            url_alone: columns.url_alone(),
            columns,
            field: opts.field,
            with: !opts.with.is_empty(),
        }
    }
}

impl<const PIPE: bool> Sink for Rows<PIPE> {
    const BARE: bool = true;

    #[inline(always)]
    fn bare(&self) -> bool {
        self.url_alone
    }

    #[inline(always)]
    fn url_is_line(&self) -> bool {
        true
    }

    #[inline(always)]
    fn url(&mut self, out: &mut PieceOut, _start: usize) {
        self.columns.end_url_alone(&mut out.out);
    }

    #[inline(always)]
    fn no_url(&mut self, out: &mut PieceOut) {
        if PIPE {
            self.columns.end_url_alone(&mut out.out);
        }
    }

    /// One row per slot (a URL, a rejection, or with `--pipe` a skip), or
    /// with `--pipe` and plain output, one line of cells.
    fn line(&mut self, l: &LineOut<'_>, out: &mut PieceOut) {
        let plain = self.columns.is_plain();
        let (urls, record, line) = (l.urls, l.record, l.line);
        for (i, s) in l.slots.iter().enumerate() {
            // A `plain` line's one URL counts as a request, as in the
            // distinct table: its `field` cell says so, not left empty.
            let field = match (self.field, i) {
                (Field::Both, 0) => Some(Field::Request),
                (Field::Both, _) => Some(Field::Referer),
                _ => None,
            };
            let original = match (l.format, i, self.field) {
                (LogFormat::Plain, _, _) => line,
                (_, 0, Field::Referer) | (_, 1, _) => &record.referer[..],
                _ => record.target(line),
            };
            let mut row = Row {
                line: l.number,
                field,
                original,
                ..Row::default()
            };
            if self.with {
                let info = &record.info;
                row.status = info.status(line);
                row.bytes = info.bytes(line);
                row.method = info.method(line);
                row.time = info.time(line);
                row.client = info.client(line);
                row.host = Some(&record.host[..]).filter(|h| !h.is_empty());
                row.input = l.input;
            }
            match *s {
                Slot::Url(a, b, e) => {
                    let x = urls.extras[e];
                    row.url = Some(&urls.bytes[a..b]);
                    row.dedup = x.dedup.map(|(s, e)| &urls.dedup[s..e]);
                    row.rules = x.fired;
                    row.rewrites = &urls.rewrites[x.rewrites.0..x.rewrites.1];
                }
                Slot::Reject(w, _) => row.reason = Some(w.name()),
                Slot::Skip(k) if PIPE => {
                    row.reason = Some(k.name());
                    row.original = b"";
                }
                Slot::Skip(_) => continue,
            }
            if PIPE && plain {
                // One line per input line: the URLs of `--field both` side
                // by side, an empty cell for a field without one.
                if i > 0 {
                    out.out.push(b'\t');
                }
                self.columns.write_cells(&row, &mut out.out);
            } else if plain && row.url.is_none() {
                // Plain records: nothing for a field without URL.
            } else {
                self.columns.write(&row, &mut out.out);
            }
        }
        if PIPE && plain {
            out.out.push(b'\n');
        }
    }
}

/// `--unique`/`--count`: the URLs go to the piece's part of the distinct
/// table, back to back in the output buffer.
pub(super) struct Distinct {
    /// `--field both`: each URL says which field it is.
    both: bool,
}

impl Sink for Distinct {
    const BARE: bool = true;

    #[inline(always)]
    fn bare(&self) -> bool {
        true
    }

    #[inline(always)]
    fn url_is_line(&self) -> bool {
        false
    }

    #[inline(always)]
    fn url(&mut self, out: &mut PieceOut, start: usize) {
        let end = out.out.len();
        out.distinct.push(DistinctUrl {
            key: xxh64(&out.out[start..], KEY_SEED),
            start,
            end,
            field: 0,
            pre: None,
        });
    }

    #[inline(always)]
    fn no_url(&mut self, _out: &mut PieceOut) {}

    /// Files the line's URLs (with `--field both` slot 0 is the request
    /// and 1 the referer).
    fn line(&mut self, l: &LineOut<'_>, out: &mut PieceOut) {
        let both = self.both && l.format != LogFormat::Plain;
        for (i, s) in l.slots.iter().enumerate() {
            if let Slot::Url(a, b, e) = *s {
                let start = out.out.len();
                out.out.extend_from_slice(&l.urls.bytes[a..b]);
                let x = l.urls.extras[e];
                out.distinct.push(DistinctUrl {
                    key: xxh64(&out.out[start..], KEY_SEED),
                    start,
                    end: out.out.len(),
                    field: u8::from(both && i == 1),
                    pre: l.urls.merges.then_some((x.pre_key, x.fired)),
                });
            }
        }
    }
}

/// `canonurl summarize`: each record with a URL goes to the worker's
/// summary table ([`RecordSink`]); nothing is written.
pub(super) struct Summary(pub Box<dyn RecordSink>);

impl Sink for Summary {
    const BARE: bool = false;

    fn bare(&self) -> bool {
        false
    }

    fn url_is_line(&self) -> bool {
        false
    }

    // Never called: not bare.
    fn url(&mut self, _out: &mut PieceOut, _start: usize) {}

    fn no_url(&mut self, _out: &mut PieceOut) {}

    fn line(&mut self, l: &LineOut<'_>, _out: &mut PieceOut) {
        for s in l.slots {
            if let Slot::Url(a, b, _) = *s {
                self.0.record(&l.urls.bytes[a..b], l.line, &l.record.info);
            }
        }
    }

    const RECORDS: bool = true;

    #[inline(always)]
    fn record_in_line(&mut self, out: &mut PieceOut, start: usize, line: &[u8], info: &Info) {
        self.0.record(&out.out[start..], line, info);
        out.out.truncate(start);
    }
}
