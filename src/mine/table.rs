//! The summary table: summary rows by (host, URL, window), within a memory
//! budget.
//!
//! Rows are merged in a hash table. When the table's estimated size passes
//! the budget, its rows are sorted by key and written to a temporary file as
//! a summary file of their own (a *run*), and the table starts again empty.
//! Finishing merges the runs and what is left in the table, a k-way merge of
//! sorted files in which rows of one key are merged as they meet. A run is a
//! partial summary, so spilling and `summarize --merge` are the same
//! operation: the output does not depend on the budget, on how the input
//! was cut, or on the order of the parts.

use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use hashbrown::{DefaultHashBuilder, HashTable};

use super::summary::{Key, RowError, UrlSummary};

/// A key that owns its bytes: `host` is `bytes[..host_len]`, the URL the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OwnedKey {
    bytes: Box<[u8]>,
    host_len: u32,
    window: Option<i64>,
}

impl OwnedKey {
    fn new(key: Key<'_>) -> OwnedKey {
        let mut bytes = Vec::with_capacity(key.host.len() + key.url.len());
        bytes.extend_from_slice(key.host);
        bytes.extend_from_slice(key.url);
        OwnedKey {
            bytes: bytes.into_boxed_slice(),
            host_len: key.host.len() as u32,
            window: key.window,
        }
    }

    fn key(&self) -> Key<'_> {
        let (host, url) = self.bytes.split_at(self.host_len as usize);
        Key {
            host,
            url,
            window: self.window,
        }
    }
}

/// Bytes a row costs in the table beyond its key (the map's slot, the
/// summary, a few kept sizes): an estimate for the budget, not an exact count.
const ROW_COST: usize = 64 + std::mem::size_of::<OwnedKey>() + std::mem::size_of::<UrlSummary>();

/// Where the rows of a summary come from, for error messages.
pub(crate) struct RowSource<'a> {
    pub name: &'a str,
    pub line: u64,
}

/// An error reading a summary file: which file, which line, why.
#[derive(Debug)]
pub struct SummaryFileError {
    file: String,
    line: u64,
    reason: RowError,
}

impl std::fmt::Display for SummaryFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: not a summary row: {}",
            self.file, self.line, self.reason
        )
    }
}

impl std::error::Error for SummaryFileError {}

/// UrlSummary rows within a memory budget.
pub(crate) struct SummaryTable {
    rows: HashTable<(OwnedKey, UrlSummary)>,
    hasher: DefaultHashBuilder,
    /// Estimated bytes of `rows`.
    bytes: usize,
    limit: usize,
    runs: Vec<File>,
    /// Rows written to runs, for the statistics.
    pub spilled_rows: u64,
}

impl SummaryTable {
    /// A table that spills past `limit` bytes (estimated).
    pub(crate) fn new(limit: usize) -> SummaryTable {
        SummaryTable {
            rows: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            bytes: 0,
            limit: limit.max(ROW_COST * 4),
            runs: Vec::new(),
            spilled_rows: 0,
        }
    }

    /// The row of `key`, made empty if it is new. Spills first when the
    /// table is over its budget.
    pub(crate) fn row(&mut self, key: Key<'_>) -> io::Result<&mut UrlSummary> {
        if self.bytes > self.limit {
            self.spill()?;
        }
        // Every lookup hashes a borrowed `Key`, so a row seen before costs
        // no allocation.
        let hash = self.hasher.hash_one(key);
        let hasher = &self.hasher;
        let entry = self.rows.entry(
            hash,
            |(k, _)| k.key() == key,
            |(k, _)| hasher.hash_one(k.key()),
        );
        Ok(match entry {
            hashbrown::hash_table::Entry::Occupied(o) => &mut o.into_mut().1,
            hashbrown::hash_table::Entry::Vacant(v) => {
                self.bytes += ROW_COST + key.host.len() + key.url.len();
                &mut v
                    .insert((OwnedKey::new(key), UrlSummary::default()))
                    .into_mut()
                    .1
            }
        })
    }

    /// Merges one row read from a summary file.
    pub(crate) fn merge_row(&mut self, key: Key<'_>, row: &UrlSummary) -> io::Result<()> {
        self.row(key)?.merge(row);
        Ok(())
    }

    /// Merges every row of a summary file (its header line first).
    pub(crate) fn merge_file(
        &mut self,
        input: impl BufRead,
        name: &str,
    ) -> Result<u64, MergeError> {
        let mut rows = 0;
        for_each_row(input, name, |key, row| {
            rows += 1;
            self.merge_row(key, &row).map_err(MergeError::Io)
        })?;
        Ok(rows)
    }

    fn sorted(&mut self) -> Vec<(OwnedKey, UrlSummary)> {
        let mut rows: Vec<(OwnedKey, UrlSummary)> = self.rows.drain().collect();
        rows.sort_unstable_by(|a, b| a.0.key().cmp(&b.0.key()));
        self.bytes = 0;
        rows
    }

    fn spill(&mut self) -> io::Result<()> {
        let rows = self.sorted();
        let mut file = BufWriter::new(tempfile::tempfile()?);
        let mut buf = Vec::new();
        for (k, s) in &rows {
            write_row(k, s, &mut buf, &mut file)?;
        }
        self.spilled_rows += rows.len() as u64;
        let mut file = file.into_inner().map_err(|e| e.into_error())?;
        io::Seek::rewind(&mut file)?;
        self.runs.push(file);
        Ok(())
    }

    /// Writes every row, sorted by key, after the header; returns the number
    /// of rows written.
    pub(crate) fn finish(mut self, out: &mut dyn Write) -> Result<u64, MergeError> {
        out.write_all(UrlSummary::header().as_bytes())
            .map_err(MergeError::Io)?;
        let last = self.sorted();
        let mut buf = Vec::new();
        let mut written = 0u64;
        if self.runs.is_empty() {
            for (k, s) in &last {
                write_row(k, s, &mut buf, out).map_err(MergeError::Io)?;
            }
            return Ok(last.len() as u64);
        }
        // k-way merge: each source yields rows in key order; the smallest
        // head is taken next (a linear scan: there are few runs), and rows
        // of one key are merged before the row is written.
        let mut sources: Vec<Source> = self
            .runs
            .drain(..)
            .map(|f| Source::Run(BufReader::with_capacity(1 << 16, f), Vec::new(), 0))
            .collect();
        sources.push(Source::Memory(last.into_iter()));
        let mut heads = Vec::with_capacity(sources.len());
        for src in &mut sources {
            heads.push(src.next()?);
        }
        let mut current: Option<(OwnedKey, UrlSummary)> = None;
        loop {
            let mut min: Option<usize> = None;
            for (i, head) in heads.iter().enumerate() {
                if let Some((k, _)) = head {
                    if min
                        .is_none_or(|m| heads[m].as_ref().is_some_and(|(mk, _)| k.key() < mk.key()))
                    {
                        min = Some(i);
                    }
                }
            }
            let Some(i) = min else { break };
            let (k, s) = std::mem::replace(&mut heads[i], sources[i].next()?)
                .expect("the minimum is a head");
            match &mut current {
                Some((ck, cs)) if *ck == k => cs.merge(&s),
                _ => {
                    if let Some((ck, cs)) = current.replace((k, s)) {
                        write_row(&ck, &cs, &mut buf, out).map_err(MergeError::Io)?;
                        written += 1;
                    }
                }
            }
        }
        if let Some((ck, cs)) = current {
            write_row(&ck, &cs, &mut buf, out).map_err(MergeError::Io)?;
            written += 1;
        }
        Ok(written)
    }
}

/// Writes one row through `buf` (reused, so a row costs no allocation).
fn write_row(
    k: &OwnedKey,
    s: &UrlSummary,
    buf: &mut Vec<u8>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let key = k.key();
    buf.clear();
    s.write_row(key.host, key.url, key.window, buf);
    out.write_all(buf)
}

enum Source {
    Run(BufReader<File>, Vec<u8>, u64),
    Memory(std::vec::IntoIter<(OwnedKey, UrlSummary)>),
}

impl Source {
    fn next(&mut self) -> Result<Option<(OwnedKey, UrlSummary)>, MergeError> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::Run(r, line, n) => {
                line.clear();
                if r.read_until(b'\n', line).map_err(MergeError::Io)? == 0 {
                    return Ok(None);
                }
                *n += 1;
                let row = line.strip_suffix(b"\n").unwrap_or(line);
                let (key, s) = UrlSummary::parse_row(row).map_err(|reason| {
                    MergeError::Row(SummaryFileError {
                        file: "(spilled run)".into(),
                        line: *n,
                        reason,
                    })
                })?;
                Ok(Some((OwnedKey::new(key), s)))
            }
        }
    }
}

/// Why reading or merging summary files failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum MergeError {
    /// Reading an input or a temporary run, or writing the output, failed.
    Io(io::Error),
    /// A row is not a summary row: the file, the line and why.
    Row(SummaryFileError),
    /// The file's first line is not a summary header.
    Header {
        /// The input's name.
        file: String,
    },
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Io(e) => e.fmt(f),
            MergeError::Row(e) => e.fmt(f),
            MergeError::Header { file } => write!(
                f,
                "{file}:1: not a summary file (its first line is not the header that canonurl summarize writes)"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// Calls `each` with every row of a summary file, after checking its header.
pub(crate) fn for_each_row(
    mut input: impl BufRead,
    name: &str,
    mut each: impl FnMut(Key<'_>, UrlSummary) -> Result<(), MergeError>,
) -> Result<(), MergeError> {
    let mut line = Vec::new();
    if input.read_until(b'\n', &mut line).map_err(MergeError::Io)? == 0
        || line != UrlSummary::header().as_bytes()
    {
        return Err(MergeError::Header { file: name.into() });
    }
    let mut source = RowSource { name, line: 1 };
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(MergeError::Io)? == 0 {
            return Ok(());
        }
        source.line += 1;
        let row = line.strip_suffix(b"\n").unwrap_or(&line);
        let row = row.strip_suffix(b"\r").unwrap_or(row);
        let (key, s) = UrlSummary::parse_row(row).map_err(|reason| {
            MergeError::Row(SummaryFileError {
                file: source.name.into(),
                line: source.line,
                reason,
            })
        })?;
        each(key, s)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// host, URL, window, status, bytes, client.
    type Record = (
        String,
        String,
        Option<i64>,
        Option<u16>,
        Option<u64>,
        String,
    );

    /// Records of a few hosts and URLs over a few windows, deterministic.
    fn records(n: u64) -> Vec<Record> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        (0..n)
            .map(|_| {
                let host =
                    ["", "a.example", "b.example", "a.example.org"][next(4) as usize].to_owned();
                let url = format!("https://{host}/p/{}", next(60));
                let window = [None, Some(0), Some(86_400), Some(-86_400)][next(4) as usize];
                let status = [Some(200), Some(200), Some(304), Some(404), None][next(5) as usize];
                let bytes = Some(100 + next(25));
                let client = format!("192.0.2.{}", next(20));
                (host, url, window, status, bytes, client)
            })
            .collect()
    }

    fn summarize(recs: &[Record], limit: usize) -> (Vec<u8>, u64) {
        let mut t = SummaryTable::new(limit);
        for (host, url, window, status, bytes, client) in recs {
            let key = Key {
                host: host.as_bytes(),
                url: url.as_bytes(),
                window: *window,
            };
            t.row(key)
                .unwrap()
                .add(*status, *bytes, Some(client.as_bytes()));
        }
        let spilled = t.spilled_rows;
        let mut out = Vec::new();
        t.finish(&mut out).unwrap();
        (out, spilled)
    }

    #[test]
    fn spilling_does_not_change_the_output() {
        let recs = records(20_000);
        let (whole, spilled) = summarize(&recs, usize::MAX);
        assert_eq!(spilled, 0);
        let (small, spilled) = summarize(&recs, 1);
        assert!(spilled > 1_000, "spilled {spilled} rows");
        assert_eq!(
            String::from_utf8(small).unwrap(),
            String::from_utf8(whole.clone()).unwrap()
        );
        // Sorted by (host, URL, window), one row per key.
        let text = String::from_utf8(whole).unwrap();
        let mut keys = Vec::new();
        for row in text.lines().skip(1) {
            let (key, _) = UrlSummary::parse_row(row.as_bytes()).unwrap();
            keys.push((key.host.to_vec(), key.url.to_vec(), key.window));
        }
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(keys, sorted);
        assert!(keys.len() > 300, "{} rows", keys.len());
    }

    #[test]
    fn merging_summaries_of_parts_gives_the_summary_of_the_whole() {
        let recs = records(30_000);
        let (whole, _) = summarize(&recs, usize::MAX);
        for cuts in [&[10_000usize, 20_000][..], &[1, 2, 29_999], &[15_000]] {
            let mut parts = Vec::new();
            let mut from = 0;
            for &c in cuts.iter().chain([&recs.len()]) {
                parts.push(summarize(&recs[from..c], 4_096).0);
                from = c;
            }
            parts.reverse();
            for limit in [usize::MAX, 1] {
                let mut t = SummaryTable::new(limit);
                for (i, p) in parts.iter().enumerate() {
                    t.merge_file(&p[..], &format!("part{i}")).unwrap();
                }
                let mut out = Vec::new();
                t.finish(&mut out).unwrap();
                assert!(out == whole, "cuts {cuts:?}, limit {limit}");
            }
        }
    }

    #[test]
    fn a_bad_file_is_an_error_naming_the_file_and_line() {
        let (good, _) = summarize(&records(50), usize::MAX);
        let mut t = SummaryTable::new(usize::MAX);
        let err = t.merge_file(&b"host\turl\n"[..], "x.tsv").unwrap_err();
        assert!(
            err.to_string().starts_with("x.tsv:1: not a summary file"),
            "{err}"
        );
        let mut bad = good.clone();
        bad.extend_from_slice(b"a.example\thttps://a.example/\t0\t1\n");
        let lines = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let err = t.merge_file(&bad[..], "y.tsv").unwrap_err().to_string();
        assert_eq!(
            err,
            format!("y.tsv:{lines}: not a summary row: the row ends before its 's200' column")
        );
    }
}
