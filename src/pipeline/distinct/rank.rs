//! The merged records of the runs put in output order (`--count`'s rank,
//! `--unique`'s first sight), in memory while they fit and through sorted
//! runs when they do not.

use std::io::{self, Write};
use std::mem::size_of;
use std::path::Path;

use super::run::{merge, Order, Rec, Run, RunWriter, SpillStats};
use super::write_row;
use crate::canon::rules::Rule;
use crate::output::Columns;

/// A record kept for ordering (the external sort of the merged records).
#[derive(Clone, Copy, Debug)]
struct Ranked {
    key: u64,
    count: u64,
    pos: u64,
    start: u64,
    len: u32,
}

/// The merged records of the runs, put in output order: kept in memory up
/// to half the limit (by length; the capacities stay within the limit),
/// then sorted and written as runs, merged at the end. With `--top N`,
/// only the best N are kept when that is reached, and a run is written
/// only when those take more than a quarter of the limit.
pub(super) struct Ranker {
    order: Order,
    top: Option<u64>,
    limit: u64,
    bytes: Vec<u8>,
    entries: Vec<Ranked>,
    runs: Vec<Run>,
    scratch: Vec<u8>,
}

impl Ranker {
    pub(super) fn new(order: Order, top: Option<u64>, limit: u64) -> Ranker {
        Ranker {
            order,
            top,
            limit,
            bytes: Vec::new(),
            entries: Vec::new(),
            runs: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Bytes held (by length: the capacities may be up to twice as much).
    fn used(&self) -> u64 {
        (self.bytes.len() + self.entries.len() * size_of::<Ranked>()) as u64
    }

    pub(super) fn push(&mut self, r: &Rec, dir: &Path, stats: &mut SpillStats) -> io::Result<()> {
        let start = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&r.bytes);
        self.entries.push(Ranked {
            key: r.key,
            count: r.count,
            pos: r.pos,
            start,
            len: r.bytes.len() as u32,
        });
        // Half the limit by length: the capacities, doubled on the way,
        // stay within the limit.
        if self.used() >= self.limit / 2 {
            self.sort();
            if let Some(n) = self.top {
                self.keep_first(n);
            }
            // Still more than half full (N is large): out to a run.
            if self.used() > self.limit / 4 {
                let mut w = RunWriter::new(dir, self.limit)?;
                for e in &self.entries {
                    let b = &self.bytes[e.start as usize..][..e.len as usize];
                    w.push(b, e.key, e.count, e.pos, 0)?;
                }
                self.runs.push(w.finish(stats)?);
                self.entries.clear();
                self.bytes.clear();
            }
        }
        Ok(())
    }

    fn sort(&mut self) {
        let (order, bytes) = (self.order, &self.bytes);
        self.entries.sort_unstable_by(|a, b| {
            let ab = &bytes[a.start as usize..][..a.len as usize];
            let bb = &bytes[b.start as usize..][..b.len as usize];
            order.cmp_parts(ab, a.count, a.pos, bb, b.count, b.pos)
        });
    }

    /// Keeps the first `n` entries (sorted), and only their bytes.
    fn keep_first(&mut self, n: u64) {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if self.entries.len() <= n {
            return;
        }
        self.entries.truncate(n);
        self.scratch.clear();
        for e in &mut self.entries {
            let s = self.scratch.len() as u64;
            self.scratch
                .extend_from_slice(&self.bytes[e.start as usize..][..e.len as usize]);
            e.start = s;
        }
        std::mem::swap(&mut self.bytes, &mut self.scratch);
        self.scratch.clear();
    }

    /// Writes the records in order (the first `top`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        mut self,
        dir: &Path,
        limit: u64,
        stats: &mut SpillStats,
        merged: &mut [u64; Rule::ALL.len()],
        row: &mut Vec<u8>,
        columns: &Columns,
        count: bool,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut left = self.top.unwrap_or(u64::MAX);
        self.sort();
        if self.runs.is_empty() {
            for e in &self.entries {
                if left == 0 {
                    break;
                }
                left -= 1;
                let b = &self.bytes[e.start as usize..][..e.len as usize];
                write_row(row, columns, out, b, e.key, count.then_some(e.count))?;
            }
            return Ok(());
        }
        if let Some(n) = self.top {
            self.keep_first(n);
        }
        let mut w = RunWriter::new(dir, limit)?;
        for e in &self.entries {
            let b = &self.bytes[e.start as usize..][..e.len as usize];
            w.push(b, e.key, e.count, e.pos, 0)?;
        }
        self.runs.push(w.finish(stats)?);
        let (order, runs) = (self.order, std::mem::take(&mut self.runs));
        drop(self);
        merge(runs, order, dir, limit, stats, merged, &mut |r| {
            if left == 0 {
                return Ok(false);
            }
            left -= 1;
            write_row(row, columns, out, &r.bytes, r.key, count.then_some(r.count))?;
            Ok(true)
        })
    }
}
