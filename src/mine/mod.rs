//! Learning a site's DUST rules from its access logs: `canonurl summarize`
//! and `canonurl mine` (the design is docs/mine.md).
//!
//! ```text
//! records ──▶ sink.rs       each worker's records (URL, status, bytes, time, client) into its own table
//!         ──▶ summary.rs    one row per (host, URL, window): counts, sizes, clients; exact merge
//!         ──▶ hints.rs      redirects the same client followed at once: (host, from, to) counts
//!         ──▶ table.rs      rows within a memory budget: spilled runs, k-way merge (= summarize --merge)
//! summary ──▶ learn.rs      learning/confirming split by time, one host at a time, then host aliases
//!         ──▶ candidates.rs size buckets, pairs aligned by tokens, one candidate rule per difference
//!         ──▶ evidence.rs   size signatures, verdicts on pairs, acceptance thresholds
//!         ──▶ write.rs      the rules file (`--rules` reads it) and the evidence JSONL
//! ```

mod candidates;
mod evidence;
mod hints;
mod learn;
mod sink;
mod summary;
mod table;
mod write;

pub use evidence::Thresholds;
pub use learn::{MineOptions, MineReport};

use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex};

use crate::input::Source;
use crate::pipeline::{self, stats::Summary, Mode, Options, OutputFormat, Sinks};

use table::RowForm;
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
    let (run, gathered) = gather(sources, opts, window, memory, false, diag)?;
    let spilled_rows = gathered.tables.iter().map(|t| t.spilled_rows).sum();
    let written = table::finish_all(gathered.tables, out).map_err(SummarizeError::Write)?;
    Ok(SummarizeReport {
        run,
        records: gathered.records,
        rows: written,
        spilled_rows,
    })
}

/// Runs the pipeline of [`summarize`] and returns what it read and the
/// workers' tables (for the miner only when `for_mining`:
/// `sink::WorkerSink::for_mining`).
fn gather(
    sources: &[Source],
    opts: &Options,
    window: Option<i64>,
    memory: usize,
    for_mining: bool,
    diag: &mut dyn Write,
) -> Result<(Summary, sink::Gathered), SummarizeError> {
    // Records go to the workers' tables, not to rows: no per-record output
    // option applies, and without rows to number the reader can hand out
    // byte ranges of files.
    let opts = &Options {
        output: OutputFormat::Plain,
        mode: Mode::Records,
        with: Vec::new(),
        header: false,
        field: crate::log::Field::Request,
        key: false,
        explain: false,
        surt: None,
        dedup: None,
        rule_merges: false,
        ..opts.clone()
    };
    let threads = opts.threads.max(1);
    let gathered = Arc::new(Mutex::new(sink::Gathered::default()));
    let make = || -> Box<dyn pipeline::RecordSink> {
        let sink = if for_mining {
            sink::WorkerSink::for_mining
        } else {
            sink::WorkerSink::new
        };
        Box::new(sink(memory / threads, window, Arc::clone(&gathered)))
    };
    let run = pipeline::run_into(
        sources,
        opts,
        Sinks {
            out: &mut io::sink(),
            rejects: None,
            diag,
            progress: None,
        },
        &make,
    )
    .map_err(SummarizeError::Read)?;
    let mut gathered = std::mem::take(&mut *gathered.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(e) = gathered.error.take() {
        return Err(SummarizeError::Read(e));
    }
    Ok((run, gathered))
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

/// Why `mine` failed.
#[derive(Debug)]
pub enum MineError {
    /// Summarizing the logs failed.
    Summarize(SummarizeError),
    /// Reading a summary (or the temporary one) failed.
    Summary(MergeError),
    /// Writing the rules file failed.
    WriteRules(io::Error),
    /// Writing the evidence file failed.
    WriteEvidence(io::Error),
    /// The summary's rows have no time window, so nothing tells the learning
    /// part from the confirming one (a summary written with `--window none`,
    /// or a log without times); mining it needs `--learn 100`.
    NoWindows {
        /// The summary's name.
        file: String,
    },
}

impl std::fmt::Display for MineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MineError::Summarize(e) => e.fmt(f),
            MineError::Summary(e) => e.fmt(f),
            MineError::WriteRules(e) => write!(f, "cannot write the rules: {e}"),
            MineError::WriteEvidence(e) => write!(f, "cannot write the evidence: {e}"),
            MineError::NoWindows { file } => write!(
                f,
                "{file}: no row has a time window, so rules cannot be learned on the earlier \
                 part and confirmed on the later one: summarize with --window (1d, 1h, ...) from \
                 logs that have times, or mine with --learn 100 (no confirmation)"
            ),
        }
    }
}

impl std::error::Error for MineError {}

/// Where `mine` writes: the rules file, and optionally the evidence JSONL.
pub struct MineOutput<'a> {
    /// The rules file (TOML).
    pub rules: &'a mut dyn Write,
    /// One JSON object per candidate, when wanted.
    pub evidence: Option<&'a mut dyn Write>,
}

/// Mines summary files (as [`summarize`] writes them; any number, in any
/// order: they are merged first) and writes the rules file and evidence.
///
/// ```
/// // Two spellings of each of 20 pages, learned on day 1, confirmed on day 2.
/// let mut summary = String::new();
/// for day in [1_790_812_800u64, 1_790_899_200] {
///     for n in 0..20u64 {
///         let size = 10_000 + 1_000 * n;
///         for url in [format!("/p/{n}/"), format!("/p/{n}/home.html")] {
///             summary.push_str(&format!("\t{url}\t{day}\t3\t3\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t{size}\t{size}:3\t-\n"));
///         }
///     }
/// }
/// let mut rows: Vec<&str> = summary.lines().collect();
/// rows.sort();
/// let file = format!("host\turl\twindow\thits\ts200\ts301\ts302\ts303\ts307\ts308\ts304\ts404\ts5xx\tother\tnone\tlargest\tsizes\tclients\n{}\n", rows.join("\n"));
/// let mut rules = Vec::new();
/// let out = canonurl::mine::MineOutput { rules: &mut rules, evidence: None };
/// let report = canonurl::mine::mine_summaries(
///     vec![("s.tsv".into(), Box::new(file.as_bytes()))],
///     &canonurl::mine::MineOptions::default(),
///     64 << 20,
///     out,
/// ).unwrap();
/// assert_eq!(report.accepted, 1);
/// let rules = String::from_utf8(rules).unwrap();
/// assert!(rules.contains("extra-index-files = [\n"));
/// assert!(rules.contains("  \"home.html\","));
/// ```
pub fn mine_summaries(
    mut inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    opts: &MineOptions,
    memory: usize,
    out: MineOutput<'_>,
) -> Result<MineReport, MineError> {
    let io_error = |e| MineError::Summary(MergeError::Io(e));
    // One summary as `summarize` writes it (sorted, one row per key) is
    // mined as it is: copied (mining reads it twice, and it may be a pipe)
    // while its keys are checked, instead of merged (which parses, sorts and
    // writes every row, in up to `memory` bytes). Otherwise the copy is
    // merged; its lines are the input's, so errors name the same lines.
    if inputs.len() == 1 {
        let (name, input) = inputs.remove(0);
        let mut copy = tempfile::tempfile().map_err(io_error)?;
        let scan = {
            let mut w = io::BufWriter::new(&mut copy);
            let scan = learn::scan_keys(input, &name, Some(&mut w)).map_err(MineError::Summary)?;
            w.flush().map_err(io_error)?;
            scan
        };
        if scan.sorted {
            return mine_file(copy, &name, Some(scan), RowForm::Text, opts, memory, out);
        }
        use std::io::Seek;
        copy.seek(io::SeekFrom::Start(0)).map_err(io_error)?;
        inputs.push((name, Box::new(io::BufReader::new(copy))));
    }
    let mut merged = tempfile::tempfile().map_err(io_error)?;
    {
        let mut w = io::BufWriter::new(&mut merged);
        merge(inputs, memory, &mut w).map_err(MineError::Summary)?;
        w.flush().map_err(io_error)?;
    }
    mine_file(
        merged,
        "<merged summary>",
        None,
        RowForm::Text,
        opts,
        memory,
        out,
    )
}

/// Summarizes the logs in `sources` (as [`summarize`] does with `pipeline`,
/// `window` and `memory`), then mines the summary like [`mine_summaries`].
pub fn mine_logs(
    sources: &[Source],
    pipeline: &Options,
    window: Option<i64>,
    memory: usize,
    opts: &MineOptions,
    out: MineOutput<'_>,
    diag: &mut dyn Write,
) -> Result<(SummarizeReport, MineReport), MineError> {
    let io_error = |e| MineError::Summary(MergeError::Io(e));
    // The summary table spills past `memory` less what the miner keeps for
    // the program and its buffers (the reader's pieces, the writer): the
    // whole command stays within `--memory` (the summary's rows do not
    // depend on where the table spills).
    let table = memory - learn::MEMORY_RESERVE.min(memory / 2);
    let (run, mut gathered) =
        gather(sources, pipeline, window, table, true, diag).map_err(MineError::Summarize)?;
    let spilled_rows = gathered.tables.iter().map(|t| t.spilled_rows).sum();
    let mut summarized = SummarizeReport {
        run,
        records: gathered.records,
        rows: 0,
        spilled_rows,
    };
    // Mined as the tables' rows are merged when the budget of `--memory`
    // surely samples nothing (`learn::mine_tables`): what a pass over the
    // summary's keys would find is needed before mining only otherwise.
    let mut bound = Some(learn::CountBound::default());
    for t in &mut gathered.tables {
        let counted = t.count_bound().map_err(io_error)?;
        bound = bound.zip(counted).map(|(mut b, c)| {
            b.merge(c);
            b
        });
    }
    let windows = std::mem::take(&mut gathered.windows);
    let tables = match bound {
        Some(bound) => {
            let hosts = bound.hosts();
            match learn::mine_tables(gathered.tables, windows.clone(), hosts, opts, memory) {
                Ok(mined) => {
                    let (findings, report, rows) = mined?;
                    summarized.rows = rows;
                    write_findings(&findings, out)?;
                    return Ok((summarized, report));
                }
                Err(tables) => tables,
            }
        }
        None => gathered.tables,
    };
    // Otherwise the summary goes to the miner in a form of its own, its
    // rows merged into the miner's window, and with what a pass over its
    // keys would find (`learn::summary_for_mining`): no text written, read
    // and parsed again, and no pass over the keys.
    let mut file = tempfile::tempfile().map_err(io_error)?;
    let (scan, rows) = {
        let mut w = io::BufWriter::new(&mut file);
        let written = learn::summary_for_mining(tables, windows, &mut w)
            .map_err(|e| MineError::Summarize(SummarizeError::Write(e)))?;
        w.flush().map_err(io_error)?;
        written
    };
    summarized.rows = rows;
    let report = mine_file(
        file,
        "<summary>",
        Some(scan),
        RowForm::Binary,
        opts,
        memory,
        out,
    )?;
    Ok((summarized, report))
}

// One argument each for what is mined: not worth a struct of its own.
#[allow(clippy::too_many_arguments)]
fn mine_file(
    mut file: std::fs::File,
    name: &str,
    scan: Option<learn::KeyScan>,
    form: RowForm,
    opts: &MineOptions,
    memory: usize,
    out: MineOutput<'_>,
) -> Result<MineReport, MineError> {
    use std::io::Seek;
    file.seek(io::SeekFrom::Start(0))
        .map_err(|e| MineError::Summary(MergeError::Io(e)))?;
    let mut reader = io::BufReader::new(file);
    let (findings, report) = learn::mine_file(&mut reader, name, scan, form, opts, memory)?;
    write_findings(&findings, out)?;
    Ok(report)
}

/// Writes the rules file and the evidence, when wanted.
fn write_findings(findings: &[learn::Finding], out: MineOutput<'_>) -> Result<(), MineError> {
    write::rules_file(findings, out.rules).map_err(MineError::WriteRules)?;
    if let Some(evidence) = out.evidence {
        write::evidence_file(findings, evidence).map_err(MineError::WriteEvidence)?;
    }
    Ok(())
}
