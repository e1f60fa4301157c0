//! The summary table: summary rows by (host, URL, window), within a memory
//! budget.
//!
//! Rows are merged in a hash table. When the table's estimated size passes
//! the budget, its rows are sorted by key and written to a temporary file as
//! a summary of their own (a *run*, in the binary form of
//! `UrlSummary::write_bin`, which is cheaper to write and read back than
//! text), and the table starts again empty.
//! Finishing merges the runs and what is left in the table, a k-way merge of
//! sorted files in which rows of one key are merged as they meet. A run is a
//! partial summary, so spilling and `summarize --merge` are the same
//! operation: the output does not depend on the budget, on how the input
//! was cut, or on the order of the parts.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use hashbrown::DefaultHashBuilder;

use super::hints::{self, Hints};
use super::learn::CountBound;
use super::summary::{read_bin_key_after, Key, Packed, Record, RowError, UrlSummary};

/// One row of the table, in one cache line: its key, kept in the table's
/// arena of key bytes (`keys[at..]`: the host, then the URL), and its
/// values packed ([`Packed`]; a row that outgrows them has its
/// `UrlSummary` in the table's `outgrown`). Inserting, sorting and
/// spilling rows moves a quarter of the bytes that rows holding their
/// `UrlSummary` (248 bytes) did.
#[derive(Debug)]
#[repr(align(64))]
struct Row {
    /// Below `u32::MAX`: the table spills before its keys pass it.
    at: u32,
    /// The bits its adders gave ([`SummaryTable::row_seen`]), or-ed.
    seen: u32,
    /// The window's start, when `host` says the row has one.
    window: i64,
    /// The host's length, and [`WINDOWED`] when the row has a window.
    host: u32,
    url_len: u32,
    values: Packed,
}

/// The bit of [`Row::host`] that says the row has a window; hosts are
/// shorter.
const WINDOWED: u32 = 1 << 31;

const _: () = assert!(std::mem::size_of::<Row>() == 64);

impl Row {
    #[inline]
    fn host_len(&self) -> usize {
        (self.host & !WINDOWED) as usize
    }

    #[inline]
    fn window(&self) -> Option<i64> {
        (self.host & WINDOWED != 0).then_some(self.window)
    }

    /// Whether the row's key is `key`: as `self.key(keys) == *key`, the
    /// cheap parts first, and no call to compare an empty host (most
    /// logs' URLs have none).
    #[inline]
    fn is(&self, keys: &[u8], key: &Key<'_>) -> bool {
        let host = self.host_len();
        let at = self.at as usize;
        let url_at = at + host;
        self.url_len as usize == key.url.len()
            && host == key.host.len()
            && self.window() == key.window
            && keys[url_at..url_at + key.url.len()] == *key.url
            && (host == 0 || keys[at..url_at] == *key.host)
    }

    fn key<'k>(&self, keys: &'k [u8]) -> Key<'k> {
        let at = self.at as usize;
        let url_at = at + self.host_len();
        Key {
            host: &keys[at..url_at],
            url: &keys[url_at..url_at + self.url_len as usize],
            window: self.window(),
        }
    }
}

/// Bytes a row costs in the table beyond its key bytes, for the budget: an
/// estimate, not an exact count. The 64-byte row, its slot in the index (8
/// bytes, and up to three times as many free: [`Index`]), what sorting it for a
/// spill takes beside the table (its 16-byte sort entry, its host's number
/// and its place in the order), and room for the vectors' growth and the
/// program's buffers. It was 312 (the size a row had when it held its
/// `UrlSummary`), while most rows stay packed: the table spilled at about
/// half its budget, and each spill is one more run that every row of the
/// merge is compared with. Measured on `benches/mine-speed.sh`'s *wide* log
/// (`/usr/bin/time canonurl summarize -j 1 --window 1h --profile aggressive
/// --memory 232MiB`: the budget of `canonurl mine`'s stage 0), peak RSS
/// 194 MiB with 176, against 225 to 235 MiB for mining that summary; with
/// 144, `canonurl mine -j 1` peaked at up to 257 MiB.
const ROW_COST: usize = 176;

/// Rows a table holds before it makes room for all it may hold
/// ([`SummaryTable::room_for_rows`]; 4 MiB of them): a table of few rows
/// keeps to the address space it needs.
const ROWS_BEFORE_ROOM: usize = 1 << 16;

/// The most rows [`SummaryTable::room_for_rows`] makes room for at once
/// (1 GiB of address space).
const MOST_ROWS_ROOM: usize = 1 << 24;

/// Bytes a row that outgrew its packed form costs on top of [`ROW_COST`]:
/// its `UrlSummary` (248 bytes), and room for the samples it keeps on the
/// heap once they pass two.
const OUTGROWN_COST: usize = 256;

/// The table's index: row numbers by their key's hash
/// ([`SummaryTable::hash`]), in open addressing over a power of two of
/// 8-byte slots with linear probing. Each slot holds a key's hash (its high
/// half, to pass over other keys without reading their rows) and its row's
/// number plus one (its low half; 0: an empty slot, so that a new index is
/// zeroed memory). A key's slot is at its hash's low bits or after, so the
/// slot of a key can be asked for before the key is looked up
/// ([`SummaryTable::prefetch_slot`]): on a log
/// of distinct URLs nearly every lookup misses the cache, and hashbrown's
/// table, whose place of a key is its control bytes' group and then the
/// slot, gave no such handle.
///
/// The index grows (doubles) before it is more than half full: at that
/// load a lookup of a key that is not there passes 2.5 slots on average
/// (Knuth's `(1 + 1/(1 - a)^2) / 2` for linear probing), nearly always in
/// the one cache line asked for, and a slot costs 16 to 32 bytes a row,
/// against 10 to 21 for hashbrown's (8 bytes and a control byte, 7/8 full
/// at most): a fifth of [`ROW_COST`] at most.
#[derive(Default)]
struct Index {
    slots: Vec<u64>,
    /// Rows indexed.
    len: usize,
}

/// Slots of an index's first allocation.
const FIRST_SLOTS: usize = 64;

impl Index {
    /// The slot of `row` with `hash`.
    #[inline]
    fn slot(hash: u32, row: usize) -> u64 {
        u64::from(hash) << 32 | (row as u64 + 1)
    }

    /// Asks for the cache line where the search for `hash` starts.
    #[inline]
    fn prefetch(&self, hash: u32) {
        if !self.slots.is_empty() {
            let home = hash as usize & (self.slots.len() - 1);
            prefetch(self.slots[home..].as_ptr());
        }
    }

    /// The row of the slot with `hash` whose row `is` says is the key's,
    /// or the empty slot where the key's goes. The index has room
    /// ([`reserve_one`](Self::reserve_one)): an empty slot ends the search.
    #[inline]
    fn find(&self, hash: u32, mut is: impl FnMut(usize) -> bool) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Err(i);
            }
            if (s >> 32) as u32 == hash && is((s as u32 - 1) as usize) {
                return Ok((s as u32 - 1) as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Fills the empty slot `at` that [`find`](Self::find) gave.
    #[inline]
    fn insert_at(&mut self, at: usize, hash: u32, row: usize) {
        debug_assert_eq!(self.slots[at], 0);
        self.slots[at] = Index::slot(hash, row);
        self.len += 1;
    }

    /// Makes room for one more row: grows the index if it would be more
    /// than half full.
    #[inline]
    fn reserve_one(&mut self) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
    }

    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        let mask = n - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = (s >> 32) as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Forgets every row, keeping the slots' allocation.
    fn clear(&mut self) {
        self.slots.fill(0);
        self.len = 0;
    }
}

/// A row being added to: its values, packed or outgrown.
pub(crate) struct RowMut<'t> {
    values: &'t mut Packed,
    outgrown: &'t mut Vec<UrlSummary>,
}

impl RowMut<'_> {
    /// Counts one record ([`UrlSummary::add`]).
    #[cfg(test)]
    pub(crate) fn add(&mut self, status: Option<u16>, bytes: Option<u64>, client: Option<&[u8]>) {
        self.add_record(Record::of(status, bytes, client));
    }

    /// Counts one record, read ([`Record::of`]).
    pub(crate) fn add_record(&mut self, r: Record) {
        if let Some(at) = self.values.outgrown() {
            self.outgrown[at].add_record(r);
        } else if !self.values.add(r) {
            let mut s = self.values.summary();
            s.add_record(r);
            self.outgrow(s);
        }
    }

    /// Adds `other`'s counts and samples ([`UrlSummary::merge`]; `other`'s
    /// samples in their order, as every `UrlSummary` keeps them).
    pub(crate) fn merge(&mut self, other: &UrlSummary) {
        if let Some(at) = self.values.outgrown() {
            self.outgrown[at].merge(other);
            return;
        }
        if *self.values == Packed::default() {
            if let Some(p) = Packed::of(other) {
                *self.values = p;
                return;
            }
        }
        let mut s = self.values.summary();
        s.merge(other);
        self.outgrow(s);
    }

    fn outgrow(&mut self, s: UrlSummary) {
        *self.values = Packed::outgrown_at(self.outgrown.len());
        self.outgrown.push(s);
    }
}

/// A row's values as a table or a run holds them, for the merge: packed
/// ([`Packed`]) or not.
#[derive(Clone, Copy)]
pub(crate) enum Values<'a> {
    Packed(&'a Packed),
    Summary(&'a UrlSummary),
}

impl<'a> Values<'a> {
    /// The values as a `UrlSummary`: the outgrown row's own, or the packed
    /// one's written into `scratch`.
    #[inline]
    pub(crate) fn get<'s>(self, scratch: &'s mut UrlSummary) -> &'s UrlSummary
    where
        'a: 's,
    {
        match self {
            Values::Summary(s) => s,
            Values::Packed(p) => {
                p.fill(scratch);
                scratch
            }
        }
    }

    /// A copy of the values.
    pub(crate) fn to_owned(self) -> Owned {
        match self {
            Values::Summary(s) => Owned::Summary(s.clone()),
            Values::Packed(p) => Owned::Packed(*p),
        }
    }

    /// Adds these values' counts and samples to `s` ([`UrlSummary::merge`]).
    #[inline]
    pub(crate) fn merge_into(self, s: &mut UrlSummary) {
        match self {
            Values::Summary(o) => s.merge(o),
            Values::Packed(p) => s.merge_packed(p),
        }
    }

    /// Appends the row of `key` and these values in the binary form
    /// ([`UrlSummary::write_bin`]).
    #[inline]
    pub(crate) fn write_bin(self, key: Key<'_>, shared: usize, out: &mut Vec<u8>) {
        match self {
            Values::Summary(s) => s.write_bin(key, shared, out),
            Values::Packed(p) => p.write_bin(key, shared, out),
        }
    }
}

/// A row's values of its own (a merge's), packed while they fit.
pub(crate) enum Owned {
    Packed(Packed),
    Summary(UrlSummary),
}

impl Owned {
    pub(crate) fn values(&self) -> Values<'_> {
        match self {
            Owned::Summary(s) => Values::Summary(s),
            Owned::Packed(p) => Values::Packed(p),
        }
    }

    /// Adds `other`'s counts and samples ([`UrlSummary::merge`]).
    pub(crate) fn merge(&mut self, other: Values<'_>) {
        if let Owned::Packed(p) = self {
            *self = Owned::Summary(p.summary());
        }
        if let Owned::Summary(s) = self {
            other.merge_into(s);
        }
    }

    /// As [`merge`](Self::merge), a packed row becoming a `UrlSummary` in
    /// `spare`'s allocations (taken; a row merged with others grows its
    /// samples past their inline room, and `spare` has room already).
    pub(crate) fn merge_reusing(&mut self, other: Values<'_>, spare: &mut UrlSummary) {
        if let Owned::Packed(p) = self {
            let mut s = std::mem::take(spare);
            p.fill(&mut s);
            *self = Owned::Summary(s);
        }
        if let Owned::Summary(s) = self {
            other.merge_into(s);
        }
    }
}

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
///
/// The rows are a vector, their keys' bytes one arena, and the index holds
/// row numbers: a new row costs no allocation of its own (the vectors grow
/// by doubling), a known one a hash of its URL and one comparison.
pub(crate) struct SummaryTable {
    /// Row numbers, by the hash of their key.
    index: Index,
    rows: Vec<Row>,
    /// The values of the rows that outgrew their packed form.
    outgrown: Vec<UrlSummary>,
    /// The bytes of every row's key.
    keys: Vec<u8>,
    hasher: DefaultHashBuilder,
    /// The rows in key order, when [`SummaryTable::sort`] made it after the
    /// last row was added (empty otherwise).
    order: Vec<u32>,
    /// Estimated bytes of the rows.
    bytes: usize,
    limit: usize,
    runs: Vec<File>,
    /// Whether the runs hold each row's `seen` bits: only when some row may
    /// have them ([`SummaryTable::with_seen`]), so that the runs of
    /// `summarize` stay as small as they were.
    keeps_seen: bool,
    /// Rows written to runs, for the statistics.
    pub spilled_rows: u64,
    /// The runs' counts by host, counted as they are written when the
    /// table keeps `seen` bits (the miner's: [`SummaryTable::count_bound`]).
    bound: CountBound,
    /// The redirect hints (a bounded sample, never spilled: `hints.rs`).
    pub hints: Hints,
}

impl SummaryTable {
    /// A table that spills past `limit` bytes (estimated).
    pub(crate) fn new(limit: usize) -> SummaryTable {
        SummaryTable {
            index: Index::default(),
            rows: Vec::new(),
            outgrown: Vec::new(),
            keys: Vec::new(),
            hasher: DefaultHashBuilder::default(),
            order: Vec::new(),
            bytes: 0,
            limit: limit.max(ROW_COST * 4),
            runs: Vec::new(),
            keeps_seen: false,
            spilled_rows: 0,
            bound: CountBound::default(),
            hints: Hints::default(),
        }
    }

    /// A table as [`new`](Self::new) makes, whose rows keep the bits of
    /// [`row_seen`](Self::row_seen) through its spills and merges.
    pub(crate) fn with_seen(limit: usize) -> SummaryTable {
        SummaryTable {
            keeps_seen: true,
            ..SummaryTable::new(limit)
        }
    }

    /// The hash of a key. The host is left out: it is a part of the URL in
    /// every row `summarize` makes, and equal keys still hash alike.
    #[inline]
    pub(crate) fn hash(&self, key: &Key<'_>) -> u32 {
        let mut h = self.hasher.build_hasher();
        h.write(key.url);
        h.write_i64(key.window.unwrap_or(i64::MIN));
        (h.finish() >> 32) as u32
    }

    /// Asks for the cache line where the row of the key of `hash`
    /// ([`hash`](Self::hash)) is looked up, ahead of
    /// [`row_seen_hashed`](Self::row_seen_hashed): a hint, which rows added
    /// in between (the index growing, the table spilling) at worst make
    /// useless.
    #[inline]
    pub(crate) fn prefetch_slot(&self, hash: u32) {
        self.index.prefetch(hash);
    }

    /// The slots of the table's index: a table whose index is larger
    /// than the cache is, its lookups wait for memory.
    #[inline]
    pub(crate) fn index_slots(&self) -> usize {
        self.index.slots.len()
    }

    /// The row of `key`, made empty if it is new. Spills first when the
    /// table is over its budget.
    #[inline]
    pub(crate) fn row(&mut self, key: Key<'_>) -> io::Result<RowMut<'_>> {
        self.row_seen(key, 0)
    }

    /// [`row`](Self::row), or-ing `seen` into the row's bits, which the
    /// table only keeps: rows of one key merged have their bits or-ed, and
    /// [`each_row`] hands each row's over (of a table made
    /// [`with_seen`](Self::with_seen)). `canonurl mine` marks in them the
    /// windows a row of a longer one gathers (`sink::DayFold`).
    #[inline]
    pub(crate) fn row_seen(&mut self, key: Key<'_>, seen: u32) -> io::Result<RowMut<'_>> {
        let hash = self.hash(&key);
        self.row_seen_hashed(key, seen, hash)
    }

    /// [`row_seen`](Self::row_seen) of a key whose [`hash`](Self::hash) is
    /// `hash`.
    pub(crate) fn row_seen_hashed(
        &mut self,
        key: Key<'_>,
        seen: u32,
        hash: u32,
    ) -> io::Result<RowMut<'_>> {
        debug_assert!(seen == 0 || self.keeps_seen);
        debug_assert_eq!(hash, self.hash(&key));
        if self.bytes + self.outgrown.len() * OUTGROWN_COST > self.limit
            || self.rows.len() >= u32::MAX as usize
            || self.keys.len() >= u32::MAX as usize
        {
            self.spill()?;
        }
        if key.host.len() >= WINDOWED as usize || key.url.len() > u32::MAX as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a URL of 2 GiB or more cannot be summarized",
            ));
        }
        self.order.clear();
        self.index.reserve_one();
        let (rows, keys) = (&self.rows, &self.keys);
        let i = match self.index.find(hash, |r| rows[r].is(keys, &key)) {
            Ok(i) => i,
            Err(slot) => {
                let i = self.rows.len();
                // Below u32::MAX: the table spilled otherwise.
                self.index.insert_at(slot, hash, i);
                // Below u32::MAX: the table spilled otherwise.
                let at = self.keys.len() as u32;
                self.keys.extend_from_slice(key.host);
                self.keys.extend_from_slice(key.url);
                // The lengths fit: checked above.
                let windowed = if key.window.is_some() { WINDOWED } else { 0 };
                if self.rows.len() == self.rows.capacity() {
                    self.room_for_rows();
                }
                self.rows.push(Row {
                    at,
                    seen: 0,
                    window: key.window.unwrap_or(0),
                    host: key.host.len() as u32 | windowed,
                    url_len: key.url.len() as u32,
                    values: Packed::default(),
                });
                self.bytes += ROW_COST + key.host.len() + key.url.len();
                i
            }
        };
        self.rows[i].seen |= seen;
        Ok(RowMut {
            values: &mut self.rows[i].values,
            outgrown: &mut self.outgrown,
        })
    }

    /// Makes room for the rows the table can hold before it spills, once
    /// it holds [`ROWS_BEFORE_ROOM`]: a `Vec` of rows aligned to 64 bytes
    /// grows by a new allocation and a copy (the allocator's `realloc`,
    /// which moves a large block's pages without copying them, serves only
    /// alignments up to 16), so doubling copied every row once on average
    /// and faulted in twice the pages the rows need (`perf record -e
    /// page-faults`: 44 % of `summarize`'s faults on a log of distinct URLs
    /// were the copies). The room is address space only: pages no row
    /// reaches are never touched. At most [`MOST_ROWS_ROOM`] rows (1 GiB);
    /// past them the rows double again.
    #[cold]
    fn room_for_rows(&mut self) {
        let len = self.rows.len();
        let most = (self.limit / ROW_COST + 1).min(MOST_ROWS_ROOM);
        if len >= ROWS_BEFORE_ROOM && most > len {
            // Only room: when the address space is refused (a strict
            // overcommit policy), the rows go on doubling as before.
            let _ = self.rows.try_reserve_exact(most - len);
        }
    }

    /// The rows in memory.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The rows' keys and `seen` bits, in the order the rows were made.
    #[cfg(test)]
    pub(crate) fn rows_made(&self) -> Vec<(Key<'_>, u32)> {
        self.rows
            .iter()
            .map(|r| (r.key(&self.keys), r.seen))
            .collect()
    }

    /// Whether the table keeps its rows' `seen` bits.
    #[cfg(test)]
    pub(crate) fn keeps_seen(&self) -> bool {
        self.keeps_seen
    }

    /// A row's values.
    #[inline]
    fn values<'t>(&'t self, r: &'t Row) -> Values<'t> {
        match r.values.outgrown() {
            Some(at) => Values::Summary(&self.outgrown[at]),
            None => Values::Packed(&r.values),
        }
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
        let mut input = input;
        let (hints, line) = read_head(&mut input, name, None)?;
        self.hints.merge(&hints);
        for_each_row_after(input, name, line, |key, row| {
            rows += 1;
            self.merge_row(key, &row).map_err(MergeError::Io)
        })?;
        Ok(rows)
    }

    /// Puts the rows in key order (row numbers: 4 bytes a row beside the
    /// table), for [`finish_all`]; on the thread that calls it, so that
    /// the workers of `summarize` sort their own tables side by side.
    pub(crate) fn sort(&mut self) {
        if self.order.len() != self.rows.len() {
            self.order = sort_order(&self.rows, &self.keys);
        }
    }

    /// Readies the table for [`finish_all`] on the thread that calls it
    /// (each worker of `summarize` on its own): sorts it, or when it has
    /// spilled, writes the rows it still holds as one more run, since the
    /// merge then reads runs only.
    pub(crate) fn ready(&mut self) -> io::Result<()> {
        if self.runs.is_empty() || self.rows.is_empty() {
            self.sort();
            return Ok(());
        }
        self.write_run().map(drop)
    }

    /// Writes the rows, sorted, to a new run and empties the table (its
    /// allocations are kept for the next rows); returns how many.
    fn write_run(&mut self) -> io::Result<u64> {
        self.sort();
        // In the binary form: a run is read back only by `Run`, and
        // writing and parsing decimal text was most of what spilling cost.
        let mut file = BufWriter::new(tempfile::tempfile()?);
        let mut buf = Vec::with_capacity(OUT_CHUNK + 4096);
        // The last row's host and URL (`keys[last]`): each record holds only
        // the bytes after those it shares with them (most of a row's in
        // key order: the same URL in another window, the same host).
        let mut last = 0..0;
        for (n, &i) in self.order.iter().enumerate() {
            // The rows in key order are all over memory: asked for ahead,
            // as the merge from memory asks (`perf`: most of what writing
            // a run cost was waiting for them).
            self.touch(n + TOUCH_AHEAD);
            let r = &self.rows[i as usize];
            let at = r.at as usize;
            let this = at..at + r.host_len() + r.url_len as usize;
            let shared = common_prefix(&self.keys[last], &self.keys[this.clone()]);
            last = this;
            self.values(r)
                .write_bin(r.key(&self.keys), shared, &mut buf);
            if self.keeps_seen {
                // After the record: `Run` reads it as four more bytes.
                buf.extend_from_slice(&r.seen.to_le_bytes());
                self.bound.row(r.key(&self.keys), r.seen);
            }
            if buf.len() >= OUT_CHUNK {
                file.write_all(&buf)?;
                buf.clear();
            }
        }
        file.write_all(&buf)?;
        self.bound.end_source();
        let n = self.rows.len() as u64;
        self.clear();
        let mut file = file.into_inner().map_err(|e| e.into_error())?;
        io::Seek::rewind(&mut file)?;
        self.runs.push(file);
        Ok(n)
    }

    /// An upper bound of each host's counts in the summary of the table's
    /// rows (`learn::CountBound`): its runs' counts, and its rows' in
    /// memory, which become one more run first when it has spilled (as
    /// [`each_row`] would make them). `None` when it spilled runs that
    /// were not counted (a table not made [`with_seen`](Self::with_seen)).
    pub(crate) fn count_bound(&mut self) -> io::Result<Option<CountBound>> {
        if !self.keeps_seen && !self.runs.is_empty() {
            return Ok(None);
        }
        if !self.rows.is_empty() {
            if self.runs.is_empty() {
                self.sort();
                for &i in &self.order {
                    let r = &self.rows[i as usize];
                    self.bound.row(r.key(&self.keys), r.seen);
                }
                self.bound.end_source();
            } else {
                self.write_run()?;
            }
        }
        Ok(Some(std::mem::take(&mut self.bound)))
    }

    /// Forgets every row in memory, keeping the allocations.
    fn clear(&mut self) {
        self.index.clear();
        self.rows.clear();
        self.outgrown.clear();
        self.keys.clear();
        self.order.clear();
        self.bytes = 0;
    }

    fn spill(&mut self) -> io::Result<()> {
        self.spilled_rows += self.write_run()?;
        Ok(())
    }

    /// Writes every row, sorted by key, after the header; returns the number
    /// of rows written.
    pub(crate) fn finish(self, out: &mut dyn Write) -> Result<u64, MergeError> {
        finish_all(vec![self], out)
    }

    /// Asks for the row `n` rows ahead in key order, and the key of the row
    /// half as far ahead (whose row an earlier call asked for), to be brought
    /// into the cache before they are written: rows in key order are all over
    /// memory, and nothing else overlaps the waits for them. A prefetch, not a
    /// load: a load the program does not wait for still holds up every
    /// instruction after it once it is the oldest, and the rows are far
    /// enough ahead that it always was (`perf`: 18 % of `summarize`'s time on
    /// a log of distinct URLs went to these loads).
    #[inline]
    fn touch(&self, n: usize) {
        if let Some(&i) = self.order.get(n) {
            prefetch(self.rows[i as usize..].as_ptr());
        }
        if let Some(&i) = self.order.get(n - TOUCH_AHEAD / 2) {
            let r = &self.rows[i as usize];
            let at = r.at as usize;
            prefetch(self.keys[at.min(self.keys.len())..].as_ptr());
            prefetch(self.keys[(at + 64).min(self.keys.len())..].as_ptr());
            if let Some(o) = r.values.outgrown() {
                prefetch(self.outgrown[o.min(self.outgrown.len())..].as_ptr());
            }
        }
    }

    /// The next row in key order when the table is merged from memory
    /// (`order` made by [`sort`](Self::sort)).
    fn sorted_row(&self, n: usize) -> Option<(Key<'_>, Values<'_>, u32)> {
        let r = &self.rows[*self.order.get(n)? as usize];
        Some((r.key(&self.keys), self.values(r), r.seen))
    }
}

/// A row number with what decides its order first: the rank of its host
/// among the table's hosts, then eight bytes of its URL ([`prefix_at`]).
#[derive(Clone, Copy)]
struct SortEntry {
    rank: u32,
    row: u32,
    prefix: u64,
}

/// Asks for the row of the entry 16 places after `run[j]` and the URL
/// bytes from `depth` of the one 8 after (whose row the call 8 places
/// earlier asked for) to be brought into the cache: the entries of a run
/// are in key order and their rows and keys all over memory, and `perf`
/// showed `sort_order`'s passes over runs waiting on nearly every one of
/// them (a log of distinct URLs).
#[inline]
fn ask_ahead(rows: &[Row], keys: &[u8], run: &[SortEntry], j: usize, depth: usize) {
    if let Some(e) = run.get(j + 16) {
        prefetch(rows[e.row as usize..].as_ptr());
    }
    if let Some(e) = run.get(j + 8) {
        let r = &rows[e.row as usize];
        let at = r.at as usize + r.host_len() + depth.min(r.url_len as usize);
        prefetch(keys[at.min(keys.len())..].as_ptr());
    }
}

/// Eight bytes of `url` from `depth`, big-endian, zeros past its end: of
/// two URLs equal before `depth`, the one with the smaller prefix is the
/// smaller URL (equal prefixes decide nothing).
#[inline]
fn prefix_at(url: &[u8], depth: usize) -> u64 {
    // Most URLs have the eight bytes: read as one word, not copied (a
    // `memcpy` call for a copy of a length known only at run time).
    if let Some(word) = url.get(depth..depth.saturating_add(8)) {
        return u64::from_be_bytes(word.try_into().unwrap_or_default());
    }
    let mut b = [0u8; 8];
    if let Some(tail) = url.get(depth..) {
        let n = tail.len().min(8);
        b[..n].copy_from_slice(&tail[..n]);
    }
    u64::from_be_bytes(b)
}

/// The length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or_default())
            ^ u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The rows' numbers in key order (host, URL, window).
///
/// A comparison sort on the keys themselves reads two rows and their key
/// bytes, far apart in memory, per comparison: most of `summarize`'s time
/// on a log of distinct URLs. Instead the rows are sorted as integers,
/// most significant part first (an MSD radix sort by eight bytes at a
/// time): by the rank of their host, then by eight bytes of the URL after
/// what every URL of the host shares; rows still equal are sorted again
/// by their next eight bytes (after all the bytes they share), and so on;
/// rows whose URLs are exhausted and still equal (one URL in several
/// windows) are sorted by URL length and window.
fn sort_order(rows: &[Row], keys: &[u8]) -> Vec<u32> {
    // Each row's host, numbered by first appearance.
    let mut ids: hashbrown::HashMap<&[u8], u32> = hashbrown::HashMap::new();
    let mut hosts: Vec<&[u8]> = Vec::new();
    let mut host_of: Vec<u32> = Vec::with_capacity(rows.len());
    let mut last: Option<(&[u8], u32)> = None;
    for r in rows {
        let host = r.key(keys).host;
        let id = match last {
            Some((h, id)) if h == host => id,
            _ => *ids.entry(host).or_insert_with(|| {
                hosts.push(host);
                (hosts.len() - 1) as u32
            }),
        };
        last = Some((host, id));
        host_of.push(id);
    }
    drop(ids);
    let mut by_name: Vec<u32> = (0..hosts.len() as u32).collect();
    by_name.sort_unstable_by_key(|&id| hosts[id as usize]);
    let mut rank = vec![0u32; hosts.len()];
    for (k, &id) in by_name.iter().enumerate() {
        rank[id as usize] = k as u32;
    }
    // What the URLs of each host share: the common prefix with the host's
    // first URL.
    let url = |row: u32| rows[row as usize].key(keys).url;
    let mut first: Vec<Option<&[u8]>> = vec![None; hosts.len()];
    let mut shared = vec![0usize; hosts.len()];
    for (i, &id) in host_of.iter().enumerate() {
        let u = url(i as u32);
        match first[id as usize] {
            None => {
                first[id as usize] = Some(u);
                shared[id as usize] = u.len();
            }
            Some(f) => {
                let n = shared[id as usize];
                shared[id as usize] = common_prefix(&f[..n], u);
            }
        }
    }
    // The entries by host rank first (a counting sort: the ranks are the
    // few hosts' numbers), then each host's by prefix: a comparison sort
    // of each host's rows rather than of the whole table's.
    let mut starts = vec![0usize; hosts.len() + 1];
    for &id in &host_of {
        starts[rank[id as usize] as usize + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut next = starts.clone();
    let mut entries = vec![
        SortEntry {
            rank: 0,
            row: 0,
            prefix: 0
        };
        rows.len()
    ];
    for (i, &id) in host_of.iter().enumerate() {
        let r = rank[id as usize];
        let at = &mut next[r as usize];
        entries[*at] = SortEntry {
            rank: r,
            row: i as u32,
            prefix: prefix_at(url(i as u32), shared[id as usize]),
        };
        *at += 1;
    }
    for k in 0..hosts.len() {
        entries[starts[k]..starts[k + 1]].sort_unstable_by_key(|e| e.prefix);
    }
    // Runs of equal rank and prefix, each with the depth of its next bytes.
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    let host_rank_depth = |e: &SortEntry| shared[host_of[e.row as usize] as usize] + 8;
    equal_runs(&entries, 0, &mut runs, host_rank_depth);
    // The entries of a run share their URLs' bytes before `depth` (a
    // shorter URL's missing bytes read as zeros). Most runs are one URL in
    // several windows, or URLs that share more than the next eight bytes:
    // the bytes every URL of the run shares are skipped at once (they
    // order nothing), instead of eight at a time.
    let mut exhausted: Vec<(u32, Option<i64>, u32)> = Vec::new();
    while let Some((start, end, depth)) = runs.pop() {
        let run = &mut entries[start..end];
        let first = url(run[0].row);
        let (mut common, mut longest) = (first.len(), 0);
        for j in 0..run.len() {
            ask_ahead(rows, keys, run, j, depth);
            let e = &mut run[j];
            let u = url(e.row);
            // The bytes before `depth` are equal (they ordered nothing)
            // where both URLs have them: compared from there.
            common = if common >= depth && u.len() >= depth {
                depth + common_prefix(&first[depth..common], &u[depth..])
            } else {
                common_prefix(&first[..common], u)
            };
            longest = longest.max(u.len());
            e.prefix = prefix_at(u, depth);
        }
        if longest <= depth.max(common) {
            // Equal bytes to the end, zeros past it: of two such URLs the
            // shorter is a prefix of the other, so the key order (host
            // equal) is by URL length, then window. Sorted by those, read
            // once per row rather than per comparison.
            exhausted.clear();
            exhausted.extend(run.iter().map(|e| {
                let r = &rows[e.row as usize];
                (r.url_len, r.window(), e.row)
            }));
            exhausted.sort_unstable();
            for (e, &(_, _, row)) in run.iter_mut().zip(&exhausted) {
                e.row = row;
            }
            continue;
        }
        if common > depth {
            for j in 0..run.len() {
                ask_ahead(rows, keys, run, j, common);
                run[j].prefix = prefix_at(url(run[j].row), common);
            }
        }
        let depth = depth.max(common);
        run.sort_unstable_by_key(|e| e.prefix);
        equal_runs(run, start, &mut runs, |_| depth + 8);
    }
    entries.into_iter().map(|e| e.row).collect()
}

/// Pushes the runs of more than one entry of equal rank and prefix in
/// `entries` (which start at `offset` of the whole), each with the depth
/// of the bytes that sort it next.
fn equal_runs(
    entries: &[SortEntry],
    offset: usize,
    runs: &mut Vec<(usize, usize, usize)>,
    depth: impl Fn(&SortEntry) -> usize,
) {
    let mut start = 0;
    for i in 1..=entries.len() {
        let same = entries
            .get(i)
            .is_some_and(|e| (e.rank, e.prefix) == (entries[start].rank, entries[start].prefix));
        if !same {
            if i - start > 1 {
                runs.push((offset + start, offset + i, depth(&entries[start])));
            }
            start = i;
        }
    }
}

/// Writes the rows of `tables` (the tables of parts of one input: the
/// workers' of one `summarize`), merged and sorted by key, after the
/// header; returns the number of rows written.
///
/// Without spilled runs the tables are merged in memory, each in its own
/// key order. Otherwise each table's rows still in memory become one more
/// run and the tables are freed before the k-way merge of the runs.
pub(crate) fn finish_all(
    mut tables: Vec<SummaryTable>,
    out: &mut dyn Write,
) -> Result<u64, MergeError> {
    write_head(&mut tables, out)?;
    if tables.len() > 1 && tables.iter().all(|t| t.runs.is_empty()) {
        let threads = tables.len();
        return write_in_ranges(&mut tables, threads, RANGE_ROWS, out);
    }
    let mut buf = Vec::with_capacity(OUT_CHUNK + 4096);
    let mut scratch = UrlSummary::default();
    let written = each_row(tables, |key, s, _| {
        s.get(&mut scratch)
            .write_row(key.host, key.url, key.window, &mut buf);
        if buf.len() >= OUT_CHUNK {
            out.write_all(&buf).map_err(MergeError::Io)?;
            buf.clear();
        }
        Ok(())
    })?;
    out.write_all(&buf).map_err(MergeError::Io)?;
    Ok(written)
}

/// Rows of the merged output a range of keys holds, about: the unit of
/// work of [`write_in_ranges`] (a few MiB of text).
const RANGE_ROWS: usize = 1 << 14;

/// Writes the rows of in-memory `tables`, merged and in key order, with
/// `threads` threads: the keys are cut into ranges of about `range_rows`
/// rows at keys of the largest table, each range of every table found by binary search in its sorted
/// order, and each range merged and written to a buffer of its own by
/// thread `range % threads`; this thread writes the buffers to `out` in
/// the ranges' order. A key falls in one range of every table, so each
/// range's rows are the rows the one merge of the whole gives there, and
/// the output is that merge's byte for byte. Only the writing to `out`
/// is serial (the merge and the text were most of `summarize -j 2`'s time
/// after its workers were done, on one thread).
fn write_in_ranges(
    tables: &mut [SummaryTable],
    threads: usize,
    range_rows: usize,
    out: &mut dyn Write,
) -> Result<u64, MergeError> {
    for t in tables.iter_mut() {
        t.sort();
    }
    let tables: &[SummaryTable] = tables;
    let Some(largest) = tables.iter().max_by_key(|t| t.rows.len()) else {
        return Ok(0);
    };
    let ranges = (largest.rows.len() / range_rows.max(1)).max(1);
    // The keys that start ranges 1.., strictly increasing (distinct rows
    // of one table, in its order).
    let cuts: Vec<Key<'_>> = (1..ranges)
        .filter_map(|r| largest.sorted_row(r * largest.rows.len() / ranges))
        .map(|(k, ..)| k)
        .collect();
    // Per table, the row numbers (in its order) where each range starts,
    // and its end.
    let bounds: Vec<Vec<usize>> = tables
        .iter()
        .map(|t| {
            let mut b = Vec::with_capacity(cuts.len() + 2);
            b.push(0);
            for cut in &cuts {
                b.push(t.order.partition_point(|&i| {
                    let r = &t.rows[i as usize];
                    r.key(&t.keys) < *cut
                }));
            }
            b.push(t.order.len());
            b
        })
        .collect();
    let merge_range = |range: usize| -> (Vec<u8>, Result<u64, MergeError>) {
        let sources: Vec<InMemory<'_>> = tables
            .iter()
            .zip(&bounds)
            .filter(|(_, b)| b[range] < b[range + 1])
            .map(|(table, b)| InMemory {
                table,
                next: b[range],
                end: b[range + 1],
            })
            .collect();
        let mut buf = Vec::with_capacity(range_rows.min(RANGE_ROWS) * 256);
        let mut scratch = UrlSummary::default();
        let written = merge_each(sources, |key, s, _| {
            s.get(&mut scratch)
                .write_row(key.host, key.url, key.window, &mut buf);
            Ok(())
        });
        (buf, written)
    };
    if ranges == 1 {
        // A summary of fewer rows than a range (the Elastic log's 2,483):
        // merged here. A thread of its own added its start and the hand-over
        // to the serial end of the run, with nothing to overlap them.
        let (buf, written) = merge_range(0);
        let written = written?;
        out.write_all(&buf).map_err(MergeError::Io)?;
        return Ok(written);
    }
    let threads = threads.clamp(1, ranges);
    std::thread::scope(|scope| {
        // Two ranges ahead per thread at most: the text in memory is
        // bounded whatever the summary's size.
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| std::sync::mpsc::sync_channel(2))
            .unzip();
        for (t, send) in senders.into_iter().enumerate() {
            let merge_range = &merge_range;
            scope.spawn(move || {
                for range in (t..ranges).step_by(threads) {
                    // The receiver is gone only when writing failed.
                    if send.send(merge_range(range)).is_err() {
                        return;
                    }
                }
            });
        }
        let mut written = 0u64;
        for range in 0..ranges {
            let (buf, n) = receivers[range % threads]
                .recv()
                .map_err(|_| MergeError::Io(io::Error::other("a merging thread panicked")))?;
            written += n?;
            out.write_all(&buf).map_err(MergeError::Io)?;
        }
        Ok(written)
    })
}

/// Writes the head of the summary of `tables`: their redirect hints merged
/// (when there are any), then the header line.
pub(crate) fn write_head(
    tables: &mut [SummaryTable],
    out: &mut dyn Write,
) -> Result<(), MergeError> {
    let mut head = Vec::new();
    if let Some((first, rest)) = tables.split_first_mut() {
        for t in rest {
            first.hints.merge(&std::mem::take(&mut t.hints));
        }
        first.hints.write(&mut head);
    }
    head.extend_from_slice(UrlSummary::header().as_bytes());
    out.write_all(&head).map_err(MergeError::Io)
}

/// Hands the rows of `tables` (see [`finish_all`]), merged, to `each` in
/// key order, with their `seen` bits ([`SummaryTable::row_seen`]); returns
/// the number of rows.
pub(crate) fn each_row(
    mut tables: Vec<SummaryTable>,
    each: impl FnMut(Key<'_>, Values<'_>, u32) -> Result<(), MergeError>,
) -> Result<u64, MergeError> {
    if tables.iter().all(|t| t.runs.is_empty()) {
        let mut sources = Vec::new();
        for t in &mut tables {
            t.sort();
        }
        for t in &tables {
            if !t.rows.is_empty() {
                sources.push(InMemory {
                    table: t,
                    next: 0,
                    end: t.order.len(),
                });
            }
        }
        return merge_each(sources, each);
    }
    let mut runs = Vec::new();
    for mut t in tables {
        if !t.rows.is_empty() {
            t.write_run().map_err(MergeError::Io)?;
        }
        runs.extend(t.runs.drain(..).map(|file| (file, t.keeps_seen)));
    }
    let mut sources = Vec::with_capacity(runs.len());
    for (file, seen) in runs {
        sources.push(Run::new(file, seen)?);
    }
    merge_each(sources, each)
}

/// Rows in key order, one per key, for [`merge_each`].
trait SortedRows {
    /// The current row and its `seen` bits, `None` at the end.
    fn head(&self) -> Option<(Key<'_>, Values<'_>, u32)>;
    /// Moves to the next row.
    fn advance(&mut self) -> Result<(), MergeError>;
}

/// A table's rows in its key order.
struct InMemory<'t> {
    table: &'t SummaryTable,
    next: usize,
    /// Where its rows end (a range of them: [`write_in_ranges`]).
    end: usize,
}

impl SortedRows for InMemory<'_> {
    fn head(&self) -> Option<(Key<'_>, Values<'_>, u32)> {
        if self.next >= self.end {
            return None;
        }
        self.table.sorted_row(self.next)
    }

    fn advance(&mut self) -> Result<(), MergeError> {
        self.next += 1;
        self.table.touch(self.next + TOUCH_AHEAD);
        Ok(())
    }
}

/// How many rows ahead of the one written [`SummaryTable::touch`] asks for.
const TOUCH_AHEAD: usize = 16;

/// Asks the CPU to bring the cache line at `p` into its caches, without
/// waiting for it; a hint only (nothing where it is not x86-64).
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(p: *const T) {
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (the
    // target's baseline). A prefetch reads nothing the program sees and
    // never faults, whatever the address: the pointers here point into (or
    // one past) slices anyway.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Output bytes gathered before a write to the output.
const OUT_CHUNK: usize = 1 << 16;

/// k-way merge: the smallest head is taken next (a linear scan: there are
/// few sources), merged with the heads of the same key in the other
/// sources (their `seen` bits or-ed), and handed to `each`; returns the
/// number of rows.
fn merge_each<S: SortedRows>(
    mut sources: Vec<S>,
    mut each: impl FnMut(Key<'_>, Values<'_>, u32) -> Result<(), MergeError>,
) -> Result<u64, MergeError> {
    let mut written = 0u64;
    // The sources whose head has the smallest key.
    let mut same: Vec<usize> = Vec::with_capacity(sources.len());
    loop {
        same.clear();
        let mut min: Option<Key<'_>> = None;
        for (i, src) in sources.iter().enumerate() {
            let Some((k, ..)) = src.head() else { continue };
            match min.map(|m| k.cmp(&m)) {
                Some(std::cmp::Ordering::Greater) => {}
                Some(std::cmp::Ordering::Equal) => same.push(i),
                _ => {
                    min = Some(k);
                    same.clear();
                    same.push(i);
                }
            }
        }
        let Some(key) = min else { break };
        let mut merged = None;
        let mut seen = sources[same[0]].head().map_or(0, |(.., b)| b);
        for &i in &same[1..] {
            if let Some((_, s, b)) = sources[i].head() {
                merged
                    .get_or_insert_with(|| {
                        sources[same[0]]
                            .head()
                            .map_or(Owned::Packed(Packed::default()), |(_, s, _)| s.to_owned())
                    })
                    .merge(s);
                seen |= b;
            }
        }
        match &merged {
            Some(s) => each(key, s.values(), seen)?,
            None => {
                if let Some((_, s, _)) = sources[same[0]].head() {
                    each(key, s, seen)?;
                }
            }
        }
        written += 1;
        for &i in &same {
            sources[i].advance()?;
        }
    }
    Ok(written)
}

/// A spilled run being merged: its reader, the current record's body (the
/// binary form, [`UrlSummary::write_bin`]) when it did not lie whole in
/// the reader's buffer, its number, and the row read from it.
struct Run {
    reader: BufReader<File>,
    line: Vec<u8>,
    number: u64,
    /// Whether each record is followed by its row's `seen` bits (four
    /// bytes: [`SummaryTable::write_run`] of a table that keeps them).
    has_seen: bool,
    /// The current row's key bytes (host, then URL), the host's length,
    /// the window and its `seen` bits (`None` at the end), and its values.
    key: Vec<u8>,
    head: Option<(usize, Option<i64>, u32)>,
    values: Owned,
}

impl Run {
    fn new(file: File, has_seen: bool) -> Result<Run, MergeError> {
        let mut run = Run {
            reader: BufReader::with_capacity(1 << 16, file),
            line: Vec::new(),
            number: 0,
            has_seen,
            key: Vec::new(),
            head: None,
            values: Owned::Packed(Packed::default()),
        };
        run.advance()?;
        Ok(run)
    }
}

impl SortedRows for Run {
    fn head(&self) -> Option<(Key<'_>, Values<'_>, u32)> {
        let (host_len, window, seen) = self.head?;
        let (host, url) = self.key.split_at(host_len);
        Some((Key { host, url, window }, self.values.values(), seen))
    }

    /// Reads the run's next row, in key order. A record that lies whole in
    /// the reader's buffer (most do) is read there, the bytes of its key
    /// that differ from the last one's copied once; one that runs past the
    /// buffer's end is copied into `line` first.
    fn advance(&mut self) -> Result<(), MergeError> {
        self.head = None;
        let buf = self.reader.fill_buf().map_err(MergeError::Io)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.number += 1;
        let seen_len = if self.has_seen { 4 } else { 0 };
        let whole = buf
            .get(..4)
            .map(|len| 4 + u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize)
            .filter(|&n| n + seen_len <= buf.len());
        let (body, seen) = match whole {
            Some(n) => {
                // Four bytes there when it has them: `whole` counts them.
                let seen = match buf.get(n..n + seen_len) {
                    Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
                    _ => 0,
                };
                (&buf[4..n], seen)
            }
            None => {
                read_record(&mut self.reader, &mut self.line).map_err(MergeError::Io)?;
                let mut seen = [0u8; 4];
                if self.has_seen {
                    self.reader.read_exact(&mut seen).map_err(MergeError::Io)?;
                }
                (&self.line[..], u32::from_le_bytes(seen))
            }
        };
        // The key is the last one's but for the bytes after those they
        // share ([`SummaryTable::write_run`]). Most rows read packed,
        // without a `UrlSummary` made and moved.
        let bad = || MergeError::Io(not_a_row(&format!("(spilled run), row {}", self.number)));
        let (host_len, window, at) = read_bin_key_after(body, &mut self.key).ok_or_else(bad)?;
        self.values = match Packed::read_values(body, at) {
            Some(p) => Owned::Packed(p),
            None => Owned::Summary(UrlSummary::read_values(body, at).ok_or_else(bad)?),
        };
        self.head = Some((host_len, window, seen));
        if let Some(n) = whole {
            self.reader.consume(n + seen_len);
        }
        Ok(())
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
    /// The file's redirect hints are not followed by the summary header.
    NoHeaderAfterHints {
        /// The input's name.
        file: String,
        /// The line where the header was wanted.
        line: u64,
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
            MergeError::NoHeaderAfterHints { file, line } => write!(
                f,
                "{file}:{line}: the summary ends in its redirect hints, without the header of its rows"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// Reads a summary file's head: its redirect hints, if it has any (their
/// header, then one line each), and the summary's header, each line copied
/// to `copy` when given. Returns the hints and the lines read.
pub(crate) fn read_head(
    input: &mut impl BufRead,
    name: &str,
    mut copy: Option<&mut dyn Write>,
) -> Result<(Hints, u64), MergeError> {
    let mut line = Vec::new();
    let mut hints = Hints::default();
    let mut number = 0u64;
    let mut next = |line: &mut Vec<u8>, number: &mut u64| -> Result<bool, MergeError> {
        line.clear();
        if input.read_until(b'\n', line).map_err(MergeError::Io)? == 0 {
            return Ok(false);
        }
        *number += 1;
        if let Some(out) = copy.as_mut() {
            out.write_all(line).map_err(MergeError::Io)?;
        }
        Ok(true)
    };
    if !next(&mut line, &mut number)? {
        return Err(MergeError::Header { file: name.into() });
    }
    if line == hints::HEADER.as_bytes() {
        loop {
            if !next(&mut line, &mut number)? {
                return Err(MergeError::NoHeaderAfterHints {
                    file: name.into(),
                    line: number + 1,
                });
            }
            if line == UrlSummary::header().as_bytes() {
                return Ok((hints, number));
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            hints.parse_line(text).map_err(|reason| {
                MergeError::Row(SummaryFileError {
                    file: name.into(),
                    line: number,
                    reason,
                })
            })?;
        }
    }
    if line != UrlSummary::header().as_bytes() {
        return Err(MergeError::Header { file: name.into() });
    }
    Ok((hints, number))
}

/// The form of a summary's rows after its head: the text of a summary
/// file, or the binary form `canonurl mine` hands its own summary of logs
/// to the miner in ([`UrlSummary::write_bin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowForm {
    Text,
    Binary,
}

/// Calls `each` with every row of a summary whose head ([`read_head`],
/// `lines` of them) is read, its rows in `form`.
pub(crate) fn for_each_row_in(
    input: impl BufRead,
    name: &str,
    lines: u64,
    form: RowForm,
    mut each: impl FnMut(Key<'_>, Values<'_>) -> Result<(), MergeError>,
) -> Result<(), MergeError> {
    match form {
        RowForm::Text => for_each_row_after(input, name, lines, |key, row| {
            each(key, Values::Summary(&row))
        }),
        RowForm::Binary => {
            let mut input = input;
            let mut body = Vec::new();
            let mut number = 0u64;
            while read_record(&mut input, &mut body).map_err(MergeError::Io)? {
                number += 1;
                // Most rows read packed ([`Run::advance`]).
                if let Some((key, p)) = Packed::read_bin(&body) {
                    each(key, Values::Packed(&p))?;
                    continue;
                }
                let (key, row) = UrlSummary::read_bin(&body)
                    .ok_or_else(|| MergeError::Io(not_a_row(&format!("{name}, row {number}"))))?;
                each(key, Values::Summary(&row))?;
            }
            Ok(())
        }
    }
}

/// Reads the body of the next record of the binary form into `body`
/// (its length first: [`UrlSummary::write_bin`]); `false` at the end.
fn read_record(input: &mut impl BufRead, body: &mut Vec<u8>) -> io::Result<bool> {
    if input.fill_buf()?.is_empty() {
        return Ok(false);
    }
    let mut len = [0u8; 4];
    input.read_exact(&mut len)?;
    body.resize(u32::from_le_bytes(len) as usize, 0);
    input.read_exact(body)?;
    Ok(true)
}

/// A record of the binary form that does not read as a row (which the
/// program wrote itself, to a temporary file: a damaged file).
fn not_a_row(place: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{place}: not a summary row in the binary form of temporary files"),
    )
}

/// Calls `each` with every row of a summary file whose head
/// ([`read_head`], `lines` of them) is read.
pub(crate) fn for_each_row_after(
    mut input: impl BufRead,
    name: &str,
    lines: u64,
    mut each: impl FnMut(Key<'_>, UrlSummary) -> Result<(), MergeError>,
) -> Result<(), MergeError> {
    let mut line = Vec::new();
    let mut source = RowSource { name, line: lines };
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

    /// A table of `recs` that spills past `limit`.
    fn table_of(recs: &[Record], limit: usize) -> SummaryTable {
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
        t
    }

    fn summarize(recs: &[Record], limit: usize) -> (Vec<u8>, u64) {
        let t = table_of(recs, limit);
        let spilled = t.spilled_rows;
        let mut out = Vec::new();
        t.finish(&mut out).unwrap();
        (out, spilled)
    }

    #[test]
    fn a_row_is_its_key_and_no_other() {
        // Keys that differ in each part alone, a host and a URL that
        // trade bytes, an empty host and URL, no window and window 0.
        let keys: Vec<Key<'_>> = [
            ("", "/a", None),
            ("", "/a", Some(0)),
            ("", "/b", None),
            ("", "/ab", None),
            ("h", "/a", None),
            ("h", "/a", Some(0)),
            ("h/", "a", None),
            ("h", "/a", Some(86_400)),
            ("g", "/a", None),
            ("", "", None),
            ("h", "", Some(0)),
        ]
        .iter()
        .map(|&(host, url, window)| Key {
            host: host.as_bytes(),
            url: url.as_bytes(),
            window,
        })
        .collect();
        let mut arena = Vec::new();
        let rows: Vec<Row> = keys
            .iter()
            .map(|k| {
                let at = arena.len() as u32;
                arena.extend_from_slice(k.host);
                arena.extend_from_slice(k.url);
                Row {
                    at,
                    seen: 0,
                    window: k.window.unwrap_or(0),
                    host: k.host.len() as u32 | if k.window.is_some() { WINDOWED } else { 0 },
                    url_len: k.url.len() as u32,
                    values: Packed::default(),
                }
            })
            .collect();
        for (row, own) in rows.iter().zip(&keys) {
            assert_eq!(row.key(&arena), *own);
            for key in &keys {
                assert_eq!(row.is(&arena, key), key == own, "{own:?} {key:?}");
            }
        }
    }

    #[test]
    fn the_index_finds_each_row_and_no_other() {
        // Keys of few hashes (runs of equal ones, which probe past each
        // other) and of hashes at the end of the slots (whose runs wrap
        // to the start), through several growths and a clear.
        let hash = |k: u32| match k % 3 {
            0 => k.wrapping_mul(0x9e37_79b9),
            1 => k % 5,
            _ => u32::MAX - k % 4,
        };
        let mut index = Index::default();
        for round in 0..2 {
            let mut keys: Vec<u32> = Vec::new();
            for k in 0..2_000u32 {
                let k = k * 2 + round;
                index.reserve_one();
                let at = index
                    .find(hash(k), |r| keys[r] == k)
                    .expect_err("a new key");
                index.insert_at(at, hash(k), keys.len());
                keys.push(k);
                if k % 97 == 0 || k > 1_990 {
                    for (row, &key) in keys.iter().enumerate() {
                        assert_eq!(index.find(hash(key), |r| keys[r] == key), Ok(row));
                        let other = key + 1;
                        assert!(index.find(hash(other), |r| keys[r] == other).is_err());
                    }
                }
                assert!(index.len * 2 <= index.slots.len());
            }
            assert!(index.slots.len() >= 4_096, "{}", index.slots.len());
            index.clear();
            assert!(index.slots.iter().all(|&s| s == 0) && index.len == 0);
        }
    }

    #[test]
    fn the_rows_grow_once_to_what_the_table_holds_before_spilling() {
        let most = ROWS_BEFORE_ROOM * 3;
        let mut t = SummaryTable::new(most * ROW_COST);
        let mut url = Vec::new();
        let mut add = |t: &mut SummaryTable, n: usize| {
            url.clear();
            url.extend_from_slice(format!("/p/{n}").as_bytes());
            let key = Key {
                host: b"",
                url: &url,
                window: None,
            };
            t.row(key).unwrap().add(Some(200), None, None);
        };
        for n in 0..ROWS_BEFORE_ROOM {
            add(&mut t, n);
        }
        // A table of few rows keeps to doubling.
        assert_eq!(t.rows.capacity(), ROWS_BEFORE_ROOM);
        add(&mut t, ROWS_BEFORE_ROOM);
        // The room for every row it holds before spilling, the rows not
        // moved again: the spill comes first.
        assert_eq!(t.rows.capacity(), most + 1);
        let at = t.rows.as_ptr();
        let mut n = ROWS_BEFORE_ROOM + 1;
        while t.runs.is_empty() {
            assert_eq!(t.rows.as_ptr(), at);
            add(&mut t, n);
            n += 1;
        }
        assert_eq!(t.rows.capacity(), most + 1);
        // Past the spill, every row still there once.
        let mut out = Vec::new();
        assert_eq!(t.finish(&mut out).unwrap(), n as u64);
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
    fn rows_are_the_summaries_of_their_records() {
        // Each key's row as a `UrlSummary` of its own counts it, written
        // in key order: rows that stay packed (most of a few hundred
        // records, one a key) and rows that outgrow it (most of many), in
        // memory and through spilled runs.
        for n in [300, 20_000] {
            let recs = records(n);
            let mut want: std::collections::BTreeMap<_, UrlSummary> = Default::default();
            for (host, url, window, status, bytes, client) in &recs {
                want.entry((host.clone(), url.clone(), *window))
                    .or_default()
                    .add(*status, *bytes, Some(client.as_bytes()));
            }
            let mut text = UrlSummary::header().into_bytes();
            for ((host, url, window), s) in &want {
                s.write_row(host.as_bytes(), url.as_bytes(), *window, &mut text);
            }
            for limit in [usize::MAX, 1 << 16] {
                assert!(
                    summarize(&recs, limit).0 == text,
                    "{n} records, limit {limit}"
                );
            }
            let t = table_of(&recs, usize::MAX);
            let (outgrown, rows) = (t.outgrown.len(), t.rows.len());
            let most = if n < 1_000 {
                outgrown * 4 < rows
            } else {
                outgrown * 4 > rows * 3
            };
            assert!(
                most && outgrown > 0,
                "{n} records: {outgrown} of {rows} rows outgrown"
            );
        }
    }

    #[test]
    fn sorted_order_is_the_order_of_the_keys() {
        // Keys that share long prefixes, end inside another's prefix, hold
        // NUL bytes (which the sort's zero padding must not confuse), in
        // several windows and under hosts that are prefixes of each other;
        // keys that tie on the sort's first eight bytes and differ in the
        // next eight, or tie on sixteen and differ just after.
        let mut t = SummaryTable::new(usize::MAX);
        let hosts: [&[u8]; 4] = [b"", b"a.example", b"a.example.org", b"a.exa\0"];
        let tails: [&[u8]; 17] = [
            b"/1234567",
            b"/1234567\0",
            b"/1234567a",
            b"/1234567b",
            b"/1234567abcdefgX",
            b"/1234567abcdefgY",
            b"/1234567abcdefgY\0",
            b"/1234567abcdefgYz",
            b"",
            b"/",
            b"/x",
            b"/x\0",
            b"/x\0\0",
            b"/x\0a",
            b"/long/shared/prefix/of/many/bytes/1",
            b"/long/shared/prefix/of/many/bytes/10",
            b"/long/shared/prefix/of/many/bytes/2",
        ];
        let mut want = Vec::new();
        let mut n = 0u64;
        for host in hosts {
            for tail in tails {
                for window in [None, Some(-86_400), Some(0), Some(86_400)] {
                    // Not every key in every host: the hosts' URLs share
                    // different prefixes.
                    n += 1;
                    if n.is_multiple_of(3) {
                        continue;
                    }
                    let url = [b"https://".as_slice(), host, tail].concat();
                    let url = if host.is_empty() { tail.to_vec() } else { url };
                    want.push((host.to_vec(), url, window));
                }
            }
        }
        // Inserted in a scrambled order.
        let mut scrambled = want.clone();
        scrambled.sort_by_key(|k| xxhash_rust::xxh64::xxh64(&k.1, k.2.unwrap_or(7) as u64));
        for (host, url, window) in &scrambled {
            let key = Key {
                host,
                url,
                window: *window,
            };
            t.row(key).unwrap().add(Some(200), Some(1), None);
        }
        want.sort();
        want.dedup();
        t.sort();
        let got: Vec<_> = (0..t.rows.len())
            .map(|i| {
                let (k, ..) = t.sorted_row(i).unwrap();
                (k.host.to_vec(), k.url.to_vec(), k.window)
            })
            .collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "{got:?}");
    }

    /// The tables of `parts` workers, record `i` going to worker `i % parts`.
    fn tables(recs: &[Record], parts: usize) -> Vec<SummaryTable> {
        let mut tables: Vec<SummaryTable> =
            (0..parts).map(|_| SummaryTable::new(usize::MAX)).collect();
        for (i, (host, url, window, status, bytes, client)) in recs.iter().enumerate() {
            let key = Key {
                host: host.as_bytes(),
                url: url.as_bytes(),
                window: *window,
            };
            tables[i % parts]
                .row(key)
                .unwrap()
                .add(*status, *bytes, Some(client.as_bytes()));
        }
        tables
    }

    #[test]
    fn merging_by_ranges_of_keys_on_threads_gives_the_one_merge() {
        // Ranges of a few rows, on one to more threads than ranges, of one
        // to three workers' tables.
        let recs = records(20_000);
        let (whole, _) = summarize(&recs, usize::MAX);
        let rows = &whole[UrlSummary::header().len()..];
        let lines = rows.iter().filter(|&&b| b == b'\n').count() as u64;
        for parts in [1, 2, 3] {
            for range_rows in [1, 7, 100, 100_000] {
                for threads in [1, 2, 3, 50] {
                    let mut out = Vec::new();
                    let n =
                        write_in_ranges(&mut tables(&recs, parts), threads, range_rows, &mut out)
                            .unwrap();
                    let case = format!("{parts} tables, ranges of {range_rows}, {threads} threads");
                    assert_eq!(n, lines, "{case}");
                    assert!(out == rows, "{case}");
                }
            }
        }
        // The ranges are cut at keys of the largest table: here one whose
        // rows the smaller one mostly lacks (its own URLs, in ranges of the
        // other's), which the serial merge gives as well.
        let skewed = || {
            let mut t = tables(&recs[..2_000], 2);
            for (host, url, window, status, bytes, client) in &recs {
                let url = format!("{url}/only-in-one");
                let key = Key {
                    host: host.as_bytes(),
                    url: url.as_bytes(),
                    window: *window,
                };
                t[1].row(key)
                    .unwrap()
                    .add(*status, *bytes, Some(client.as_bytes()));
            }
            t
        };
        let mut serial = Vec::new();
        let mut scratch = UrlSummary::default();
        each_row(skewed(), |key, s, _| {
            s.get(&mut scratch)
                .write_row(key.host, key.url, key.window, &mut serial);
            Ok(())
        })
        .unwrap();
        for threads in [1, 2, 3] {
            let mut out = Vec::new();
            write_in_ranges(&mut skewed(), threads, 10, &mut out).unwrap();
            assert!(out == serial, "{threads} threads");
        }
        // No rows at all.
        let mut out = Vec::new();
        assert_eq!(
            write_in_ranges(&mut tables(&[], 2), 2, 10, &mut out).unwrap(),
            0
        );
        assert!(out.is_empty());
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
