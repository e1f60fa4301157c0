//! Learning a site's DUST rules from its access logs: `canonurl summarize`
//! now, `canonurl mine` next (the design is docs/mine.md).
//!
//! ```text
//! records ──▶ sink.rs     the pipeline's rows (URL, status, bytes, time, client) into the table
//!         ──▶ summary.rs  one row per (host, URL, window): counts, sizes, clients; exact merge
//!         ──▶ table.rs    rows within a memory budget: spilled runs, k-way merge (= summarize --merge)
//! ```

mod sink;
mod summary;
mod table;

use std::io::{self, BufRead, Write};

use crate::input::Source;
use crate::pipeline::{self, stats::Summary, Mode, Options, OutputFormat, Sinks};

pub use table::{MergeError, SummaryFileError};

/// What a `summarize` run did.
#[derive(Debug)]
pub struct SummarizeReport {
    /// The pipeline's accounting of the lines read (emitted, skipped, rejected).
    pub run: Summary,
    /// Records summarized (lines that gave a URL).
    pub records: u64,
    /// Summary rows written.
    pub rows: u64,
    /// Rows written to temporary runs on the way (0 when the table fit in memory).
    pub spilled_rows: u64,
}

/// Why `summarize` failed.
#[derive(Debug)]
pub enum SummarizeError {
    /// Reading the inputs, or a temporary run, failed.
    Read(io::Error),
    /// Writing the summary failed.
    Write(MergeError),
}

impl std::fmt::Display for SummarizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummarizeError::Read(e) => e.fmt(f),
            SummarizeError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SummarizeError {}

/// Reads `sources` as the main command reads them with `opts` (format,
/// profile, rules, threads, ...), and writes one summary row per (host,
/// canonical URL, time window) to `out`, sorted, after a header line.
///
/// `window` is the window length in seconds (`None`: one window for all
/// time); `memory` bounds the table (estimated bytes), past which it spills
/// sorted runs to temporary files. The output does not depend on `memory`,
/// on the number of threads, or on how the input is cut into files: see
/// [`merge`].
///
/// ```
/// use canonurl::input::Source;
/// use canonurl::pipeline::Options;
///
/// let log = tempfile::NamedTempFile::new().unwrap();
/// std::fs::write(log.path(), concat!(
///     "example.com:443 192.0.2.1 - - [01/Oct/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 512 \"-\" \"-\"\n",
///     "example.com:443 192.0.2.2 - - [01/Oct/2026:11:00:00 +0000] \"GET /a HTTP/1.1\" 304 - \"-\" \"-\"\n",
/// )).unwrap();
/// let mut out = Vec::new();
/// let report = canonurl::mine::summarize(
///     &[Source::Path(log.path().to_owned())],
///     &Options::default(),
///     Some(86_400),
///     64 << 20,
///     &mut out,
///     &mut std::io::sink(),
/// ).unwrap();
/// assert_eq!((report.records, report.rows), (2, 1));
/// let text = String::from_utf8(out).unwrap();
/// let row = text.lines().nth(1).unwrap();
/// // host, URL, window (2026-10-01 00:00 UTC), hits, then one 200 and one 304.
/// assert!(row.starts_with("example.com\thttps://example.com/a\t1790812800\t2\t1\t0\t0\t0\t0\t0\t1\t"));
/// // The largest 200 size, the sizes with their counts, and two client hashes.
/// let cells: Vec<&str> = row.split('\t').collect();
/// assert_eq!(cells[cells.len() - 3..cells.len() - 1], ["512", "512:1"]);
/// assert_eq!(cells[cells.len() - 1].split(',').count(), 2);
/// ```
pub fn summarize(
    sources: &[Source],
    opts: &Options,
    window: Option<i64>,
    memory: usize,
    out: &mut dyn Write,
    diag: &mut dyn Write,
) -> Result<SummarizeReport, SummarizeError> {
    let opts = Options {
        output: OutputFormat::Tsv,
        mode: Mode::Records,
        with: sink::WITH.to_vec(),
        header: false,
        field: crate::log::Field::Request,
        ..opts.clone()
    };
    let mut table = table::SummaryTable::new(memory);
    let mut rows = sink::RowSink::new(&mut table, window);
    let run = pipeline::run(
        sources,
        &opts,
        Sinks {
            out: &mut rows,
            rejects: None,
            diag,
            progress: None,
        },
    )
    .map_err(SummarizeError::Read)?;
    let records = rows.records;
    let spilled_rows = table.spilled_rows;
    let written = table.finish(out).map_err(SummarizeError::Write)?;
    Ok(SummarizeReport {
        run,
        records,
        rows: written,
        spilled_rows,
    })
}

/// Merges summary files (as [`summarize`] writes them, any number, in any
/// order) into one, written to `out`: the summary the whole input would have
/// given. Each input is named for error messages (`file:line: ...`).
pub fn merge(
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    memory: usize,
    out: &mut dyn Write,
) -> Result<u64, MergeError> {
    let mut table = table::SummaryTable::new(memory);
    for (name, input) in inputs {
        table.merge_file(input, &name)?;
    }
    table.finish(out)
}
