//! Sorted runs on disk: the record format, writing and reading a run, and
//! the k-way merge of runs (in passes of at most [`FAN_IN`]). Every error of
//! these files is a [`SpillError`] naming the temporary directory.

use std::cmp::Ordering;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::canon::rules::{Rule, RuleMask};

/// Runs merged at once: more are merged in passes, so open files and read
/// buffers stay bounded.
const FAN_IN: usize = 64;

/// An error of the temporary files: fatal, and its message names the
/// directory. [`is_spill_error`] tells it from an output error.
#[derive(Debug)]
struct SpillError(String);

impl fmt::Display for SpillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpillError {}

/// True for an error of `--temp-dir`'s files rather than of the output: its
/// message is complete (it names the directory).
///
/// ```
/// use canonurl::pipeline::is_spill_error;
///
/// // An error of the output itself is not one.
/// let broken_pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
/// assert!(!is_spill_error(&broken_pipe));
/// ```
pub fn is_spill_error(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|x| x.is::<SpillError>())
}

fn spill_error(dir: &Path, what: &str, e: io::Error) -> io::Error {
    let kind = e.kind();
    io::Error::new(
        kind,
        SpillError(format!(
            "temporary directory {}: cannot {what}: {e}",
            dir.display()
        )),
    )
}

/// What the spills did, for the statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpillStats {
    /// The memory limit in force (bytes).
    pub memory_limit: u64,
    /// The most the table took (bytes buffer, entries, hash table).
    pub table_peak: u64,
    /// Times the full table was written out as a sorted run.
    pub table_spills: u64,
    /// Sorted runs written, all phases (table spills, merge passes, the
    /// external sort of the merged records).
    pub runs: u64,
    /// Bytes written to temporary files.
    pub bytes: u64,
}

/// A record of a run (and of the merges): field byte and URL, its key, its
/// count, its first position, its pending rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Rec {
    pub(super) bytes: Vec<u8>,
    pub(super) key: u64,
    pub(super) count: u64,
    pub(super) pos: u64,
    pub(super) pending: u32,
}

impl Rec {
    /// Becomes a copy of `r`, in its own buffer (no allocation once grown;
    /// the derived `clone_from` would allocate a new buffer every time).
    fn set(&mut self, r: &Rec) {
        self.bytes.clear();
        self.bytes.extend_from_slice(&r.bytes);
        self.key = r.key;
        self.count = r.count;
        self.pos = r.pos;
        self.pending = r.pending;
    }
}

/// Orders of records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Order {
    /// By field byte and URL bytes: the runs of the table.
    Url,
    /// By first position: `--unique`'s output.
    Pos,
    /// By count descending, then first position: `--count`'s output.
    Rank,
}

impl Order {
    fn cmp(self, a: &Rec, b: &Rec) -> Ordering {
        self.cmp_parts(&a.bytes, a.count, a.pos, &b.bytes, b.count, b.pos)
    }

    pub(super) fn cmp_parts(
        self,
        ab: &[u8],
        ac: u64,
        ap: u64,
        bb: &[u8],
        bc: u64,
        bp: u64,
    ) -> Ordering {
        match self {
            Order::Url => ab.cmp(bb),
            Order::Pos => ap.cmp(&bp),
            Order::Rank => bc.cmp(&ac).then(ap.cmp(&bp)),
        }
    }
}

/// A sorted run on disk: an unnamed temporary file (removed by the system
/// when it is closed, whatever happens to the process).
///
/// Record format, little-endian: `u32` length, the field byte and URL, `u64`
/// key, `u64` count, `u64` first position, `u32` pending rules.
pub(super) struct Run {
    file: File,
}

/// Writes records into a new run.
pub(super) struct RunWriter<'a> {
    w: BufWriter<File>,
    dir: &'a Path,
    bytes: u64,
}

impl<'a> RunWriter<'a> {
    pub(super) fn new(dir: &'a Path, limit: u64) -> io::Result<RunWriter<'a>> {
        let file =
            tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, "create a run file", e))?;
        // A buffer in proportion to the limit, within 8 and 256 KiB.
        let buf = (limit / 8).clamp(8 << 10, 256 << 10) as usize;
        Ok(RunWriter {
            w: BufWriter::with_capacity(buf, file),
            dir,
            bytes: 0,
        })
    }

    pub(super) fn push(
        &mut self,
        bytes: &[u8],
        key: u64,
        count: u64,
        pos: u64,
        pending: u32,
    ) -> io::Result<()> {
        let len = u32::try_from(bytes.len()).map_err(|_| {
            spill_error(self.dir, "write a run", io::Error::other("URL over 4 GiB"))
        })?;
        let mut fixed = [0u8; 28];
        fixed[..8].copy_from_slice(&key.to_le_bytes());
        fixed[8..16].copy_from_slice(&count.to_le_bytes());
        fixed[16..24].copy_from_slice(&pos.to_le_bytes());
        fixed[24..28].copy_from_slice(&pending.to_le_bytes());
        let r = (|| {
            self.w.write_all(&len.to_le_bytes())?;
            self.w.write_all(bytes)?;
            self.w.write_all(&fixed)
        })();
        r.map_err(|e| spill_error(self.dir, "write a run", e))?;
        self.bytes += 4 + bytes.len() as u64 + 28;
        Ok(())
    }

    fn push_rec(&mut self, r: &Rec) -> io::Result<()> {
        self.push(&r.bytes, r.key, r.count, r.pos, r.pending)
    }

    /// Ends the run: flushed, and rewound for reading.
    pub(super) fn finish(self, stats: &mut SpillStats) -> io::Result<Run> {
        let dir = self.dir;
        let bytes = self.bytes;
        let mut file = self
            .w
            .into_inner()
            .map_err(|e| spill_error(dir, "write a run", e.into_error()))?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| spill_error(dir, "rewind a run", e))?;
        stats.runs += 1;
        stats.bytes += bytes;
        Ok(Run { file })
    }
}

/// Reads the records of a run back.
struct RunReader {
    r: BufReader<File>,
}

impl RunReader {
    fn new(run: Run, buf: usize) -> RunReader {
        RunReader {
            r: BufReader::with_capacity(buf, run.file),
        }
    }

    /// The next record into `rec`; false at the end of the run.
    fn next(&mut self, rec: &mut Rec) -> io::Result<bool> {
        if self.r.fill_buf()?.is_empty() {
            return Ok(false);
        }
        let mut len = [0u8; 4];
        self.r.read_exact(&mut len)?;
        rec.bytes.clear();
        rec.bytes.resize(u32::from_le_bytes(len) as usize, 0);
        self.r.read_exact(&mut rec.bytes)?;
        let mut fixed = [0u8; 28];
        self.r.read_exact(&mut fixed)?;
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&fixed[i..i + 8]);
            u64::from_le_bytes(b)
        };
        rec.key = u64_at(0);
        rec.count = u64_at(8);
        rec.pos = u64_at(16);
        let mut p = [0u8; 4];
        p.copy_from_slice(&fixed[24..28]);
        rec.pending = u32::from_le_bytes(p);
        Ok(true)
    }
}

/// Read buffer of each run in a merge: a quarter of the limit over
/// [`FAN_IN`] runs, within 4 KiB and 1 MiB a run.
fn read_buffer(limit: u64) -> usize {
    (limit / (4 * FAN_IN as u64)).clamp(4 << 10, 1 << 20) as usize
}

/// Merges `runs` in `order`, passing each record to `sink` (which returns
/// false to stop early). With `Order::Url` records of the same URL are
/// combined: counts summed, the smallest position kept, and the pending
/// rules of the others counted as merges into `merged`. More than
/// [`FAN_IN`] runs are first merged into fewer runs, in passes.
pub(super) fn merge(
    mut runs: Vec<Run>,
    order: Order,
    dir: &Path,
    limit: u64,
    stats: &mut SpillStats,
    merged: &mut [u64; Rule::ALL.len()],
    sink: &mut dyn FnMut(&Rec) -> io::Result<bool>,
) -> io::Result<()> {
    let buf = read_buffer(limit);
    while runs.len() > FAN_IN {
        let rest = runs.split_off(FAN_IN);
        let group = std::mem::replace(&mut runs, rest);
        let mut w = RunWriter::new(dir, limit)?;
        merge_once(group, order, dir, buf, merged, &mut |r| {
            w.push_rec(r)?;
            Ok(true)
        })?;
        runs.push(w.finish(stats)?);
    }
    merge_once(runs, order, dir, buf, merged, sink)
}

/// One k-way merge (k ≤ [`FAN_IN`]) through a binary heap of run indexes.
fn merge_once(
    runs: Vec<Run>,
    order: Order,
    dir: &Path,
    buf: usize,
    merged: &mut [u64; Rule::ALL.len()],
    sink: &mut dyn FnMut(&Rec) -> io::Result<bool>,
) -> io::Result<()> {
    let read_err = |e| spill_error(dir, "read a run", e);
    let mut readers: Vec<RunReader> = runs.into_iter().map(|r| RunReader::new(r, buf)).collect();
    let mut cur: Vec<Rec> = vec![Rec::default(); readers.len()];
    let mut heap: Vec<usize> = Vec::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if r.next(&mut cur[i]).map_err(read_err)? {
            heap.push(i);
        }
    }
    let less = |cur: &[Rec], a: usize, b: usize| order.cmp(&cur[a], &cur[b]) == Ordering::Less;
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&cur, a, b));
    }
    let combine = order == Order::Url;
    // The record being combined (Order::Url), and whether it holds one.
    let mut acc = Rec::default();
    let mut held = false;
    while let Some(&top) = heap.first() {
        if combine {
            let r = &cur[top];
            if held && acc.bytes == r.bytes {
                acc.count += r.count;
                // The later of the two was not the URL's first sight:
                // its pending rules merged it into a URL seen before.
                let later = if r.pos < acc.pos {
                    let p = acc.pending;
                    acc.pos = r.pos;
                    acc.pending = r.pending;
                    acc.key = r.key;
                    p
                } else {
                    r.pending
                };
                for rule in RuleMask(later).iter() {
                    merged[rule as usize] += 1;
                }
            } else {
                if held && !sink(&acc)? {
                    return Ok(());
                }
                acc.set(r);
                held = true;
            }
        } else if !sink(&cur[top])? {
            return Ok(());
        }
        if readers[top].next(&mut cur[top]).map_err(read_err)? {
            sift_down(&mut heap, 0, |a, b| less(&cur, a, b));
        } else {
            let last = heap.len() - 1;
            heap.swap(0, last);
            heap.pop();
            sift_down(&mut heap, 0, |a, b| less(&cur, a, b));
        }
    }
    if held {
        sink(&acc)?;
    }
    Ok(())
}

/// Restores the heap order below `i` (`less(a, b)`: a comes first).
fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            return;
        }
        let r = l + 1;
        let c = if r < heap.len() && less(heap[r], heap[l]) {
            r
        } else {
            l
        };
        if !less(heap[c], heap[i]) {
            return;
        }
        heap.swap(i, c);
        i = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_more_runs_than_the_fan_in_takes_passes() {
        // 200 runs, run i holding URLs i..i+5 (sorted), count 1 each,
        // position 1000 * i + j: URL u is in runs u-4..=u.
        let dir = std::env::temp_dir();
        let mut stats = SpillStats::default();
        let mut runs = Vec::new();
        for i in 0..200u64 {
            let mut w = RunWriter::new(&dir, 1 << 20).unwrap();
            for j in 0..5 {
                let url = format!("\0http://x/{:05}", i + j);
                w.push(url.as_bytes(), i + j, 1, 1000 * i + j, 0).unwrap();
            }
            runs.push(w.finish(&mut stats).unwrap());
        }
        assert_eq!(stats.runs, 200);
        let mut merged = [0; Rule::ALL.len()];
        let mut got = Vec::new();
        merge(
            runs,
            Order::Url,
            &dir,
            1 << 20,
            &mut stats,
            &mut merged,
            &mut |r| {
                got.push((String::from_utf8(r.bytes.clone()).unwrap(), r.count, r.pos));
                Ok(true)
            },
        )
        .unwrap();
        // Passes wrote runs of their own.
        assert!(stats.runs > 200, "{stats:?}");
        assert_eq!(got.len(), 204);
        for (u, (url, count, pos)) in got.iter().enumerate() {
            let u = u as u64;
            assert_eq!(url, &format!("\0http://x/{u:05}"));
            // In runs max(0, u-4)..=min(u, 199); first in the first of them.
            let first = u.saturating_sub(4);
            assert_eq!(*count, u.min(199) - first + 1, "{url}");
            assert_eq!(*pos, 1000 * first + (u - first), "{url}");
        }
    }
}
