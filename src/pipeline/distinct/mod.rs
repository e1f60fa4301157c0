//! The distinct table of `--unique` and `--count`: counting, spilling sorted
//! runs to disk when the table reaches `--memory`, merging them back, and
//! writing the distinct rows.
//!
//! ```text
//! writer ──add(url)──▶ table (hash of indexes → entries → one bytes buffer)
//!                        │ full: sort by (field, url), write a run, clear
//!                        ▼
//!                      runs ──k-way merge by (field, url): sum counts,
//!                             keep the first position──▶ ranked (external
//!                             sort by count/position) ──▶ rows
//! ```
//!
//! Each URL is stored once, in one bytes buffer, as its field byte (0
//! request, 1 referer) followed by its bytes. Its *position* is the offset of
//! those bytes in the stream of all bytes ever put in the table (earlier
//! tables' bytes plus its offset in this one). Since every URL is stored at
//! least one byte long, and stored in the order first seen, positions
//! increase strictly with first sight: the smallest position of a URL over
//! all runs is where it was really first seen, and ordering by position is
//! ordering by first sight. No occurrence number has to be kept per entry.
//!
//! Without a spill the output is the in-memory result: `--unique` writes each
//! URL as it is first seen; `--count` sorts the entries by count, then
//! position. With spills the output is the same bytes:
//!
//! - `--count`: the runs are merged (counts summed, smallest position kept)
//!   and the merged records ordered by (count descending, position
//!   ascending), through sorted runs again when they do not fit.
//! - `--unique`: the URLs written while streaming before the first spill are
//!   final (they were first seen then). After it the table stops streaming
//!   (a URL new to the table may be in a run), and at the end the URLs whose
//!   first position is past the streamed ones are written in position order.

mod memory;
mod rank;
mod run;

use std::io::{self, Write};
use std::mem::size_of;
use std::path::PathBuf;

use hashbrown::HashTable;

pub use self::memory::{default_memory_limit, parse_size};
use self::rank::Ranker;
pub use self::run::{is_spill_error, SpillStats};
use self::run::{merge, Order, Run, RunWriter};
use super::{Mode, Options};
use crate::canon::rules::{Rule, RuleMask};
use crate::log::Field;
use crate::output::{Columns, Row};

/// One distinct URL of the table.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// [`table_hash`] of the URL's key and its field: the hash table's
    /// hash, kept so that growing the hash table reads no URL bytes (the
    /// key is `table_hash(hash, field)` again).
    hash: u64,
    count: u64,
    /// Offset of the field byte and URL in `Table::bytes`.
    start: u64,
    /// Field byte and URL.
    len: u32,
    /// Rule statistics: the rules that fired where this URL entered the
    /// table, when the URL before the rules was new there (see
    /// [`Distinct::count_merge`]).
    pending: u32,
}

/// The hash of a (field, URL) in the table: the URL's key, told apart by
/// field. Its own inverse: `table_hash(table_hash(k, f), f) == k`.
fn table_hash(key: u64, field: u8) -> u64 {
    key ^ u64::from(field).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Writes the row of one distinct URL into `row` (cleared first), then to
/// `out`. `stored` is the field byte and the URL.
fn write_row(
    row: &mut Vec<u8>,
    columns: &Columns,
    out: &mut dyn Write,
    stored: &[u8],
    key: u64,
    count: Option<u64>,
) -> io::Result<()> {
    let (field, url) = match stored.split_first() {
        Some((&f, u)) => (f, u),
        None => (0, stored),
    };
    row.clear();
    columns.write(
        &Row {
            url: Some(url),
            key: Some(key as i64),
            count: count.unwrap_or(0),
            field: Some(if field == 1 {
                Field::Referer
            } else {
                Field::Request
            }),
            ..Row::default()
        },
        row,
    );
    out.write_all(row)
}

/// Distinct URLs for `--unique` and `--count`: the table, its runs on
/// disk, and the rule-merge statistics.
pub(super) struct Distinct {
    mode: Mode,
    columns: Columns,
    limit: u64,
    dir: PathBuf,
    top: Option<u64>,
    min_count: u64,
    /// Indexes into `entries`, by [`table_hash`].
    table: HashTable<u32>,
    /// Per distinct URL of this table, in first-seen order until sorted.
    entries: Vec<Entry>,
    /// Field byte and URL of each entry, back to back.
    bytes: Vec<u8>,
    /// Bytes of the earlier tables: the position of an entry is `base + start`.
    base: u64,
    /// `--unique`: URLs are written as they are first seen (until the first spill).
    streaming: bool,
    /// Positions below this were written while streaming.
    streamed_end: u64,
    runs: Vec<Run>,
    spill: SpillStats,
    /// Rule statistics: fingerprints of the distinct URLs before the rules,
    /// and per rule the distinct URLs it merged into one seen before.
    merges: bool,
    seen_pre: HashTable<u64>,
    merged: [u64; Rule::ALL.len()],
    row: Vec<u8>,
}

impl Distinct {
    pub(super) fn new(opts: &Options) -> Distinct {
        let limit = opts
            .memory_limit
            .unwrap_or_else(default_memory_limit)
            .max(1);
        Distinct {
            mode: opts.mode,
            columns: Columns::new(opts),
            limit,
            dir: opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir),
            top: opts.top,
            min_count: opts.min_count.unwrap_or(0),
            table: HashTable::new(),
            entries: Vec::new(),
            bytes: Vec::new(),
            base: 0,
            streaming: opts.mode == Mode::Unique,
            streamed_end: u64::MAX,
            runs: Vec::new(),
            spill: SpillStats {
                memory_limit: limit,
                ..SpillStats::default()
            },
            merges: opts.rule_merges,
            seen_pre: HashTable::new(),
            merged: [0; Rule::ALL.len()],
            row: Vec::new(),
        }
    }

    /// Memory of the table: bytes buffer, entries and hash table, as allocated.
    fn memory(&self) -> u64 {
        (self.bytes.capacity()
            + self.entries.capacity() * size_of::<Entry>()
            + self.table.allocation_size()) as u64
    }

    /// Counts `url` of `field` (0 request, 1 referer), whose XXH64 is
    /// `key`; `pre` is the rule statistics' (fingerprint before the rules,
    /// rules that fired). With `--unique` a URL seen first is written to
    /// `out` while the table streams.
    pub(super) fn add(
        &mut self,
        out: &mut dyn Write,
        key: u64,
        field: u8,
        url: &[u8],
        pre: Option<(u64, RuleMask)>,
    ) -> io::Result<()> {
        let hash = table_hash(key, field);
        let (entries, bytes) = (&self.entries, &self.bytes);
        let found = self
            .table
            .find(hash, |&i| {
                let e = &entries[i as usize];
                let stored = &bytes[e.start as usize..][..e.len as usize];
                e.hash == hash
                    && stored.len() == url.len() + 1
                    && stored[0] == field
                    && &stored[1..] == url
            })
            .copied();
        let new = match found {
            Some(i) => {
                self.entries[i as usize].count += 1;
                false
            }
            None => {
                self.insert(hash, field, url)?;
                if self.streaming {
                    write_row(
                        &mut self.row,
                        &self.columns,
                        out,
                        &self.bytes[self.bytes.len() - url.len() - 1..],
                        key,
                        None,
                    )?;
                }
                true
            }
        };
        if let Some((pre, fired)) = pre {
            self.count_merge(new, pre, fired);
        }
        Ok(())
    }

    /// Puts a new URL in the table, spilling the table first when growing
    /// it for the URL would take it over the limit.
    fn insert(&mut self, hash: u64, field: u8, url: &[u8]) -> io::Result<()> {
        let need = url.len() + 1;
        let len = u32::try_from(need).map_err(|_| io::Error::other("URL over 4 GiB"))?;
        let mut plan = self.plan(need);
        if !self.entries.is_empty() && (plan.is_none() || self.entries.len() >= u32::MAX as usize) {
            self.spill_table()?;
            plan = self.plan(need);
        }
        // Even an empty table takes one URL, however long.
        let (bytes_cap, entries_cap) = plan.unwrap_or_else(|| {
            let (b, e) = (&self.bytes, &self.entries);
            let bytes = match b.len() + need <= b.capacity() {
                true => b.capacity(),
                false => grown(b.capacity(), b.len() + need, 256),
            };
            let entries = match e.len() < e.capacity() {
                true => e.capacity(),
                false => grown(e.capacity(), e.len() + 1, 8),
            };
            (bytes, entries)
        });
        if bytes_cap > self.bytes.capacity() {
            self.bytes.reserve_exact(bytes_cap - self.bytes.len());
        }
        if entries_cap > self.entries.capacity() {
            self.entries.reserve_exact(entries_cap - self.entries.len());
        }
        let start = self.bytes.len() as u64;
        self.bytes.push(field);
        self.bytes.extend_from_slice(url);
        let i = self.entries.len() as u32;
        self.entries.push(Entry {
            hash,
            count: 1,
            start,
            len,
            pending: 0,
        });
        let entries = &self.entries;
        self.table
            .insert_unique(hash, i, |&j| entries[j as usize].hash);
        self.spill.table_peak = self.spill.table_peak.max(self.memory());
        Ok(())
    }

    /// The capacities of the bytes buffer and the entries for one more URL
    /// of `need` stored bytes, or `None` when growing for it would go over
    /// the limit. A container that must grow allocates its new size while
    /// the old one is still there, so the new sizes must fit beside the
    /// whole table: doubled when that fits, else by what fits, but by at
    /// least an eighth (growing by less would copy the buffer too often).
    /// hashbrown doubles its buckets (a `u32` and a control byte each).
    fn plan(&self, need: usize) -> Option<(usize, usize)> {
        let table = if self.table.len() == self.table.capacity() {
            (2 * self.table.allocation_size()).max(16 * 5) as u64
        } else {
            0
        };
        let mut avail = self.limit.checked_sub(self.memory() + table)?;
        let mut fit = |cap: usize, len: usize, add: usize, min: usize, size: usize| {
            if len + add <= cap {
                return Some(cap);
            }
            let most = usize::try_from(avail / size as u64).unwrap_or(usize::MAX);
            let new = grown(cap, len + add, min).min(most);
            if new < (len + add).max(cap + cap / 8) {
                return None;
            }
            avail -= (new * size) as u64;
            Some(new)
        };
        let entries = fit(
            self.entries.capacity(),
            self.entries.len(),
            1,
            8,
            size_of::<Entry>(),
        )?;
        let bytes = fit(self.bytes.capacity(), self.bytes.len(), need, 256, 1)?;
        Some((bytes, entries))
    }

    /// Writes the table as a sorted run and clears it.
    fn spill_table(&mut self) -> io::Result<()> {
        let bytes = &self.bytes;
        let stored = |e: &Entry| &bytes[e.start as usize..][..e.len as usize];
        self.entries
            .sort_unstable_by(|a, b| stored(a).cmp(stored(b)));
        let mut w = RunWriter::new(&self.dir, self.limit)?;
        for e in &self.entries {
            let b = stored(e);
            let key = table_hash(e.hash, b[0]);
            w.push(b, key, e.count, self.base + e.start, e.pending)?;
        }
        self.runs.push(w.finish(&mut self.spill)?);
        self.spill.table_spills += 1;
        if self.streaming {
            // From now on a URL new to the table may be in a run.
            self.streaming = false;
            self.streamed_end = self.base + self.bytes.len() as u64;
        }
        self.base += self.bytes.len() as u64;
        self.entries.clear();
        self.bytes.clear();
        self.table.clear();
        if self.memory() > self.limit {
            // Grown past the limit for one long URL: give the memory back.
            self.bytes = Vec::new();
            self.entries = Vec::new();
            self.table = HashTable::new();
        }
        Ok(())
    }

    /// Rule statistics: a URL whose form before the rules (`pre`) is new,
    /// but whose canonical URL was seen already, was merged into it by the
    /// rules that changed it. "Seen already" is known now when the table
    /// has the URL (`!new`); when the table has just taken it, the rules
    /// are kept with the entry, and counted if a run shows the URL was seen
    /// before (see `merge_once` in `run.rs`).
    fn count_merge(&mut self, new: bool, pre: u64, fired: RuleMask) {
        if self.seen_pre.find(pre, |&k| k == pre).is_some() {
            return;
        }
        self.seen_pre.insert_unique(pre, pre, |&k| k);
        if !new {
            for r in fired.iter() {
                self.merged[r as usize] += 1;
            }
        } else if let Some(e) = self.entries.last_mut() {
            e.pending = fired.0;
        }
    }

    /// Writes what is left to write (`--count`'s rows; `--unique`'s rows
    /// not streamed) and fills the summary's distinct counts and statistics.
    pub(super) fn finish(
        mut self,
        out: &mut dyn Write,
        summary: &mut super::Summary,
    ) -> io::Result<()> {
        let distinct = if self.runs.is_empty() {
            self.finish_in_memory(out)?
        } else {
            self.finish_spilled(out)?
        };
        summary.distinct = Some(distinct);
        summary.spill = Some(self.spill);
        if self.merges {
            summary.stats.rules_merged = Some(self.merged);
            summary.stats.distinct_before_rules = Some(self.seen_pre.len() as u64);
        }
        Ok(())
    }

    /// No spill: the table is the whole result.
    fn finish_in_memory(&mut self, out: &mut dyn Write) -> io::Result<u64> {
        let distinct = self.entries.len() as u64;
        if self.mode != Mode::Count {
            return Ok(distinct);
        }
        self.table = HashTable::new();
        let min = self.min_count;
        self.entries.retain(|e| e.count >= min);
        // Most frequent first; ties in first-seen order, which is the order
        // of the bytes.
        let rank = |a: &Entry, b: &Entry| b.count.cmp(&a.count).then(a.start.cmp(&b.start));
        if let Some(n) = self.top {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if n < self.entries.len() {
                if n > 0 {
                    self.entries.select_nth_unstable_by(n - 1, rank);
                }
                self.entries.truncate(n);
            }
        }
        self.entries.sort_unstable_by(rank);
        for e in &self.entries {
            let stored = &self.bytes[e.start as usize..][..e.len as usize];
            let key = table_hash(e.hash, stored[0]);
            write_row(
                &mut self.row,
                &self.columns,
                out,
                stored,
                key,
                Some(e.count),
            )?;
        }
        Ok(distinct)
    }

    /// Spilled: the rest of the table goes out as a run too, the runs are
    /// merged by URL, and the merged records are ordered for output.
    fn finish_spilled(&mut self, out: &mut dyn Write) -> io::Result<u64> {
        if !self.entries.is_empty() {
            self.spill_table()?;
        }
        self.table = HashTable::new();
        self.entries = Vec::new();
        self.bytes = Vec::new();
        let count = self.mode == Mode::Count;
        let (order, top) = if count {
            (Order::Rank, self.top)
        } else {
            (Order::Pos, None)
        };
        let mut ranker = Ranker::new(order, top, self.limit);
        let mut distinct = 0u64;
        let (min, streamed_end, dir, limit) = (
            self.min_count,
            self.streamed_end,
            self.dir.clone(),
            self.limit,
        );
        let runs = std::mem::take(&mut self.runs);
        let stats = &mut self.spill;
        let mut ranker_stats = SpillStats::default();
        merge(
            runs,
            Order::Url,
            &dir,
            limit,
            stats,
            &mut self.merged,
            &mut |r| {
                distinct += 1;
                let keep = if count {
                    r.count >= min
                } else {
                    r.pos >= streamed_end
                };
                if keep {
                    ranker.push(r, &dir, &mut ranker_stats)?;
                }
                Ok(true)
            },
        )?;
        let mut none = [0u64; Rule::ALL.len()];
        ranker.finish(
            &dir,
            limit,
            &mut ranker_stats,
            &mut none,
            &mut self.row,
            &self.columns,
            count,
            out,
        )?;
        self.spill.runs += ranker_stats.runs;
        self.spill.bytes += ranker_stats.bytes;
        Ok(distinct)
    }
}

/// The capacity a buffer grows to: doubled, at least `need` and `min`.
fn grown(cap: usize, need: usize, min: usize) -> usize {
    cap.saturating_mul(2).max(need).max(min)
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use xxhash_rust::xxh64::xxh64;

    use super::*;
    use crate::pipeline::stats::Summary;
    use crate::pipeline::KEY_SEED;

    /// One occurrence: field, URL, and for rule statistics the fingerprint
    /// before the rules and the index of the rule that fired (if any).
    type Occ = (u8, String, Option<(u64, usize)>);

    fn opts(mode: Mode, limit: u64) -> Options {
        Options {
            mode,
            memory_limit: Some(limit),
            field: Field::Both,
            ..Options::default()
        }
    }

    fn mask(rule: Option<usize>) -> RuleMask {
        let mut m = RuleMask::NONE;
        if let Some(i) = rule {
            m.insert(Rule::ALL[i]);
        }
        m
    }

    /// The table's output and summary for `occs`.
    fn run(opts: &Options, occs: &[Occ]) -> (String, Summary) {
        let mut d = Distinct::new(opts);
        let mut out = Vec::new();
        for (field, url, pre) in occs {
            let key = xxh64(url.as_bytes(), KEY_SEED);
            let pre = pre.map(|(p, r)| (p, mask(Some(r))));
            d.add(&mut out, key, *field, url.as_bytes(), pre).unwrap();
        }
        let mut summary = Summary::default();
        d.finish(&mut out, &mut summary).unwrap();
        (String::from_utf8(out).unwrap(), summary)
    }

    /// What `--count`/`--unique` should write, computed the plain way: a
    /// map of (field, URL) to count and first index, sorted.
    fn oracle(mode: Mode, occs: &[Occ], top: Option<usize>, min: u64) -> String {
        let mut seen: HashMap<(u8, &str), (u64, usize)> = HashMap::new();
        for (i, (f, u, _)) in occs.iter().enumerate() {
            seen.entry((*f, u.as_str())).or_insert((0, i)).0 += 1;
        }
        let mut rows: Vec<_> = seen.into_iter().collect();
        match mode {
            Mode::Count => rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1))),
            _ => rows.sort_by_key(|r| r.1 .1),
        }
        let mut s = String::new();
        let rows = rows.into_iter().filter(|r| r.1 .0 >= min);
        for ((f, u), (n, _)) in rows.take(top.unwrap_or(usize::MAX)) {
            let name = ["request", "referer"][f as usize];
            match mode {
                Mode::Count => s.push_str(&format!("{u}\t{n}\t{name}\n")),
                _ => s.push_str(&format!("{u}\t{name}\n")),
            }
        }
        s
    }

    /// A reproducible sequence of `n` occurrences over `distinct` URLs,
    /// skewed so that counts differ and tie.
    fn sequence(n: usize, distinct: u64, seed: u64) -> Vec<Occ> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = x >> 33;
                let id = (r % distinct) * (r % 3) / 2;
                let field = ((r >> 7) & 1) as u8;
                (field, format!("http://h{}.example/p/{id}", id % 7), None)
            })
            .collect()
    }

    #[test]
    fn spilled_output_is_the_in_memory_output() {
        // 1 byte: one URL a table (many runs: a shorter sequence); 2000: a
        // few URLs a table; 20000: a few dozen.
        for (limit, n) in [(1, 400), (2000, 3000), (20_000, 3000)] {
            for seed in 1..5 {
                let occs = sequence(n, 400, seed);
                for mode in [Mode::Count, Mode::Unique] {
                    let want = oracle(mode, &occs, None, 0);
                    let (all, s) = run(&opts(mode, 1 << 30), &occs);
                    assert_eq!(all, want, "in memory, {mode:?}");
                    assert_eq!(s.spill.unwrap().table_spills, 0);
                    let (spilled, s) = run(&opts(mode, limit), &occs);
                    assert!(s.spill.unwrap().table_spills > 0, "limit {limit}");
                    assert_eq!(spilled, want, "{mode:?}, limit {limit}, seed {seed}");
                    assert_eq!(s.distinct, Some(want.lines().count() as u64));
                }
            }
        }
    }

    #[test]
    fn a_url_in_every_run() {
        // With a 1-byte limit the table holds one URL: `a` is in every
        // other run, and in runs far more than one merge pass (FAN_IN) apart.
        let mut occs = Vec::new();
        for i in 0..300 {
            occs.push((0, "http://a/".to_string(), None));
            occs.push((0, format!("http://b/{i}"), None));
        }
        for mode in [Mode::Count, Mode::Unique] {
            let (out, s) = run(&opts(mode, 1), &occs);
            let spill = s.spill.unwrap();
            assert!(spill.table_spills >= 599, "{spill:?}");
            assert!(spill.runs > spill.table_spills, "merge passes: {spill:?}");
            assert_eq!(out, oracle(mode, &occs, None, 0));
        }
        let (out, _) = run(&opts(Mode::Count, 1), &occs);
        assert!(out.starts_with("http://a/\t300\trequest\nhttp://b/0\t1\trequest\n"));
    }

    #[test]
    fn ties_across_runs_keep_first_seen_order() {
        // c, b, a each twice, in different runs; first seen c, b, a.
        let occs: Vec<Occ> = ["c", "b", "a", "a", "b", "c", "d"]
            .iter()
            .map(|u| (0, format!("http://x/{u}"), None))
            .collect();
        let (out, s) = run(&opts(Mode::Count, 1), &occs);
        assert!(s.spill.unwrap().table_spills > 0);
        assert_eq!(
            out,
            "http://x/c\t2\trequest\nhttp://x/b\t2\trequest\nhttp://x/a\t2\trequest\nhttp://x/d\t1\trequest\n"
        );
    }

    #[test]
    fn unique_url_seen_before_and_after_a_spill() {
        // `a` and `b` stream out before the first spill; after it `a`
        // comes back (in a later table, not written again), `c` is new.
        let occs: Vec<Occ> = ["a", "b", "a", "c", "b", "a", "d", "c"]
            .iter()
            .map(|u| (0, format!("http://x/{u}"), None))
            .collect();
        for limit in [1, 400] {
            let (out, s) = run(&opts(Mode::Unique, limit), &occs);
            assert!(s.spill.unwrap().table_spills > 0, "limit {limit}");
            assert_eq!(
                out,
                "http://x/a\trequest\nhttp://x/b\trequest\nhttp://x/c\trequest\nhttp://x/d\trequest\n",
                "limit {limit}"
            );
        }
    }

    #[test]
    fn the_field_is_part_of_the_key() {
        let occs: Vec<Occ> = vec![
            (1, "http://x/".into(), None),
            (0, "http://x/".into(), None),
            (1, "http://x/".into(), None),
        ];
        for limit in [1, 1 << 20] {
            let (out, _) = run(&opts(Mode::Count, limit), &occs);
            assert_eq!(out, "http://x/\t2\treferer\nhttp://x/\t1\trequest\n");
        }
    }

    #[test]
    fn top_and_min_count_with_and_without_spills() {
        let long = sequence(5000, 700, 9);
        for (top, min) in [
            (Some(1), 0),
            (Some(17), 0),
            (Some(100_000), 0),
            (None, 3),
            (Some(5), 2),
        ] {
            for limit in [1, 3000, 1 << 30] {
                // One URL a table: a shorter sequence.
                let occs = &long[..if limit == 1 { 500 } else { 5000 }];
                let want = oracle(Mode::Count, occs, top, min);
                let o = Options {
                    top: top.map(|t| t as u64),
                    min_count: Some(min),
                    ..opts(Mode::Count, limit)
                };
                let (out, _) = run(&o, occs);
                assert_eq!(out, want, "top {top:?} min {min} limit {limit}");
            }
        }
    }

    #[test]
    fn rule_merges_are_the_same_with_spills() {
        // URL i%50 comes from pre-rule URL i%80 (so pre-rule URLs merge
        // into one canonical URL), with rule i%3 firing.
        let occs: Vec<Occ> = (0..2000u64)
            .map(|i| {
                let x = i.wrapping_mul(2654435761) % 1000;
                (
                    0,
                    format!("http://x/{}", x % 50),
                    Some((x % 80, (x % 3) as usize)),
                )
            })
            .collect();
        // The plain count: a pre-rule URL seen first, whose canonical URL
        // was seen before, counts for its rule.
        let mut want = [0u64; Rule::ALL.len()];
        let mut pres = HashSet::new();
        let mut urls = HashSet::new();
        for (_, u, pre) in &occs {
            let (p, r) = pre.unwrap();
            if pres.insert(p) && urls.contains(u) {
                want[r] += 1;
            }
            urls.insert(u.clone());
        }
        assert!(want.iter().sum::<u64>() > 0);
        for limit in [1, 500, 1 << 30] {
            let o = Options {
                rule_merges: true,
                ..opts(Mode::Count, limit)
            };
            let (_, s) = run(&o, &occs);
            assert_eq!(s.stats.rules_merged, Some(want), "limit {limit}");
            assert_eq!(s.stats.distinct_before_rules, Some(pres.len() as u64));
        }
    }

    #[test]
    fn a_missing_temp_dir_is_an_error_naming_it() {
        let o = Options {
            temp_dir: Some(PathBuf::from("/nonexistent/canonurl-test")),
            ..opts(Mode::Count, 1)
        };
        let mut d = Distinct::new(&o);
        let mut out = Vec::new();
        d.add(&mut out, 1, 0, b"http://a/", None).unwrap();
        let e = d.add(&mut out, 2, 0, b"http://b/", None).unwrap_err();
        assert!(is_spill_error(&e));
        assert!(e.to_string().contains("/nonexistent/canonurl-test"), "{e}");
    }
}
