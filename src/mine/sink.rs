//! Records into summary tables: one table per worker of the pipeline.
//!
//! `canonurl summarize` runs the ordinary pipeline (every log format, every
//! compression, threads, the accounting of every line), and each worker
//! hands its records to a [`WorkerSink`] of its own ([`RecordSink`]): the
//! record's URL, status, size, time and client go straight into the
//! worker's [`SummaryTable`], with no row written or read back. When the
//! workers are done, each sorts its table (or writes its last spilled run)
//! on its own thread and hands it over ([`Gathered`]); the tables are merged as the parts of one summary
//! are (`table::finish_all`), so the output does not depend on the
//! number of workers nor on which records each one took.

use std::collections::BTreeSet;
use std::io;
use std::sync::{Arc, Mutex};

use super::hints::{follow_hash, Follow, FOLLOW_SEED};
use super::learn::{DAY, DAYS_FOR_DAY_STEP};
use super::summary::{xxh64_two, Key, Record, CLIENT_SEED};
use super::table::SummaryTable;
use crate::log::info::{num2, parse_time, seconds_at, Info};
use crate::pipeline::RecordSink;

/// What the workers' sinks hand over when their worker is done.
#[derive(Default)]
pub(crate) struct Gathered {
    pub tables: Vec<SummaryTable>,
    /// The windows of the rows, over every worker (`canonurl mine` chooses
    /// its window from them before it reads the rows).
    pub windows: BTreeSet<i64>,
    /// Records summarized, over every worker.
    pub records: u64,
    /// The first error (writing a spilled run), if any.
    pub error: Option<io::Error>,
}

/// One worker's summary table.
pub(crate) struct WorkerSink {
    table: SummaryTable,
    /// Window length in seconds; `None`: one window for all time.
    window: Option<i64>,
    records: u64,
    /// The first error; once set, records are no longer counted.
    error: Option<io::Error>,
    /// The clients' pending redirects, for the redirect hints.
    follow: Follow,
    /// The windows of the rows, and the last one added (most records are
    /// in the window of the one before).
    windows: BTreeSet<i64>,
    last_window: Option<i64>,
    /// For `canonurl mine`: rows of days, once the miner will compare by
    /// day.
    fold: Option<DayFold>,
    /// The last time field read, and its time.
    time: TimeCache,
    /// The last client, and its hashes.
    client: ClientCache,
    /// Records read and not yet added to the table.
    queue: Queue,
    /// The slots of the table's index from which records wait in `queue`
    /// ([`QUEUE_FROM_SLOTS`]; tests lower it).
    queue_from: usize,
    gathered: Arc<Mutex<Gathered>>,
}

impl WorkerSink {
    /// A sink whose table spills past `memory` bytes (estimated), handing
    /// its table to `gathered` when its worker is done.
    pub(crate) fn new(
        memory: usize,
        window: Option<i64>,
        gathered: Arc<Mutex<Gathered>>,
    ) -> WorkerSink {
        WorkerSink {
            table: SummaryTable::new(memory),
            window,
            fold: None,
            records: 0,
            error: None,
            follow: Follow::default(),
            windows: BTreeSet::new(),
            last_window: None,
            time: TimeCache::default(),
            client: ClientCache::default(),
            queue: Queue::default(),
            queue_from: QUEUE_FROM_SLOTS,
            gathered,
        }
    }

    /// Adds the oldest record of the queue (which has one) to the table;
    /// `false`, with the error kept, when that failed.
    #[inline]
    fn add_oldest(&mut self) -> bool {
        let q = self.queue.pop_oldest();
        let key = Key {
            host: &q.url[q.host.0..q.host.0 + q.host.1],
            url: &q.url,
            window: q.window,
        };
        let added = add(
            &mut self.table,
            &mut self.records,
            key,
            q.seen,
            q.hash,
            q.record,
        );
        self.kept(added)
    }

    /// Adds every record of the queue to the table, oldest first; `false`,
    /// with the error kept, when that failed.
    fn add_queued(&mut self) -> bool {
        while !self.queue.is_empty() {
            if !self.add_oldest() {
                return false;
            }
        }
        true
    }

    /// Whether `r` is `Ok`; its error is kept otherwise.
    #[inline]
    fn kept(&mut self, r: io::Result<()>) -> bool {
        r.map_err(|e| self.error = Some(e)).is_ok()
    }

    /// A sink as [`new`](Self::new) makes, whose table is for the miner
    /// only (`learn::summary_for_mining`): once the windows seen say the
    /// miner will compare by day, records go into rows of their day, each
    /// with the windows it gathers marked ([`DayFold`]).
    pub(crate) fn for_mining(
        memory: usize,
        window: Option<i64>,
        gathered: Arc<Mutex<Gathered>>,
    ) -> WorkerSink {
        match window.and_then(DayFold::new) {
            Some(fold) => WorkerSink {
                table: SummaryTable::with_seen(memory),
                fold: Some(fold),
                ..WorkerSink::new(memory, window, gathered)
            },
            None => WorkerSink::new(memory, window, gathered),
        }
    }
}

/// Rows of days for `canonurl mine`. The miner compares a URL's sizes in
/// windows of a day when the log's windows fall on
/// [`DAYS_FOR_DAY_STEP`] days or more (`learn::window_step`), and merges
/// its rows of a day into one as it reads them (exactly: merging
/// summaries is). So once this worker's windows fall on that many days,
/// whatever the other workers' and the records to come, its records go
/// straight into the row of their day: the same rows for the miner, and
/// about a third fewer to insert, spill and merge on a log of two weeks
/// by hour. The rows before, of their own window, are merged by the miner
/// as before.
///
/// Each row marks the windows of the summary its records fell in (bit `i`:
/// the `i`-th window of its day; the table's `seen` bits), so that the
/// miner still counts the summary's rows, one per URL and window, for its
/// budget of `--memory` (`learn::Budget::plan`): a row of the day counts the
/// bits the rows of its URL and day mark together.
struct DayFold {
    /// The summary's window, in seconds: a day holds at most 32.
    window: i64,
    /// The days the worker's windows fell on, until they are enough.
    days: BTreeSet<i64>,
    folding: bool,
    /// The last window given, the key's window and the bit of its records.
    last: Option<(i64, i64, u32)>,
}

impl DayFold {
    /// For a summary's window of `window` seconds, when a day holds at most
    /// 32 (one bit each in the table's `seen` bits); windows of a day or
    /// longer are the miner's own.
    fn new(window: i64) -> Option<DayFold> {
        ((DAY + 31) / 32..DAY).contains(&window).then(|| DayFold {
            window,
            days: BTreeSet::new(),
            folding: false,
            last: None,
        })
    }

    /// The window of the row a record of the summary's window `w` goes to,
    /// and the bit it marks there.
    #[inline]
    fn key(&mut self, w: i64) -> (i64, u32) {
        if let Some((last, key, bit)) = self.last {
            if last == w {
                return (key, bit);
            }
        }
        let day = w.div_euclid(DAY) * DAY;
        // Below 32: the windows of one day are `window` apart from their
        // first, less than a day after the day's start.
        let bit = 1u32 << ((w - day) / self.window);
        if !self.folding {
            self.days.insert(day);
            self.folding = self.days.len() >= DAYS_FOR_DAY_STEP;
        }
        let key = if self.folding { day } else { w };
        self.last = Some((w, key, bit));
        (key, bit)
    }
}

impl RecordSink for WorkerSink {
    fn record(&mut self, url: &[u8], line: &[u8], info: &Info) {
        if self.error.is_some() {
            return;
        }
        let status = info.status(line);
        let bytes = info.bytes(line);
        // Parsed once: the window's and the redirect hints' time; not
        // again when the record logs the same time text as the one before
        // (the neighbours of a busy log share their second). A time in one
        // field is what `Info::time` parses of it.
        let time = match info.time_field(line) {
            Some(text) => self.time.get(text, parse_time, seconds_at),
            None => info.time(line),
        };
        let window = match (self.window, time) {
            (Some(w), Some(t)) => Some(match self.last_window {
                // The window of the record before (most records are in
                // it): no division, whose latency is tens of cycles.
                Some(s) if t.checked_sub(s).is_some_and(|d| (0..w).contains(&d)) => s,
                _ => t.div_euclid(w) * w,
            }),
            _ => None,
        };
        let hashes = info.client(line).map(|c| self.client.hashes(c));
        let host = url_host(url);
        let (row_window, seen) = match (window, self.fold.as_mut()) {
            (Some(w), Some(fold)) => {
                let (key, bit) = fold.key(w);
                (Some(key), bit)
            }
            _ => (window, 0),
        };
        let key = Key {
            host,
            url,
            window: row_window,
        };
        let hash = self.table.hash(&key);
        let record = Record::with_client(status, bytes, hashes.and_then(|h| h.0));
        if self.table.index_slots() >= self.queue_from {
            // Added to the table [`QUEUED`] records later, in the order
            // the records came, its slot in the table's index asked for
            // now: the next records' work overlaps the wait for memory.
            // As before, a record whose adding fails (a spill's error) is
            // the last one counted, and the ones after it are dropped.
            self.table.prefetch_slot(hash);
            if self.queue.is_full() && !self.add_oldest() {
                return;
            }
            self.queue.push(key, seen, hash, record);
        } else {
            // A table in the cache: the queue's copies would only cost.
            // (Its queue is empty: a table's index does not shrink.)
            if !self.add_queued() {
                return;
            }
            let added = add(&mut self.table, &mut self.records, key, seen, hash, record);
            if !self.kept(added) {
                return;
            }
        }
        if window.is_some() && window != self.last_window {
            self.last_window = window;
            self.windows.extend(window);
        }
        if let (Some(time), Some((_, client))) = (time, hashes) {
            self.follow
                .record(host, url, status, time, client, &mut self.table.hints);
        }
    }

    fn piece_end(&mut self) {
        self.follow.forget();
    }

    fn done(mut self: Box<Self>) {
        if self.error.is_none() {
            self.add_queued();
        }
        let WorkerSink {
            mut table,
            records,
            error,
            mut windows,
            gathered,
            ..
        } = *self;
        let ready = table.ready();
        let error = error.or(ready.err());
        // A worker that panicked holding the lock left the other tables
        // whole: take them as they are.
        let mut g = gathered.lock().unwrap_or_else(|e| e.into_inner());
        g.tables.push(table);
        g.windows.append(&mut windows);
        g.records += records;
        if g.error.is_none() {
            g.error = error;
        }
    }
}

/// Adds a record to the row of `key` (whose hash is `hash`) in `table`, and
/// counts it in `records`.
#[inline]
fn add(
    table: &mut SummaryTable,
    records: &mut u64,
    key: Key<'_>,
    seen: u32,
    hash: u32,
    record: Record,
) -> io::Result<()> {
    table.row_seen_hashed(key, seen, hash)?.add_record(record);
    *records += 1;
    Ok(())
}

/// Records a [`WorkerSink`] has read and not yet added to its table.
const QUEUED: usize = 4;

/// The size of its table's index (slots) from which a [`WorkerSink`]
/// queues its records: 2^17 slots, 1 MiB, which the index passes at 2^15
/// rows, when the rows (64 bytes each) and their keys are 4 MiB or more,
/// past a core's own cache (2 MiB of L2 on the Xeon of `BENCHMARKS.md`).
/// Below that, a lookup finds its slot and row in the cache without being
/// asked for, and queueing only costs (7 % more instructions on the
/// Elastic log's 2,483 rows).
const QUEUE_FROM_SLOTS: usize = 1 << 17;

/// The records a [`WorkerSink`] has read and not yet added to its table,
/// oldest first: a ring of [`QUEUED`] entries, each with its URL copied
/// (the pipeline's buffer moves on) into an allocation kept for the next
/// ones.
#[derive(Default)]
struct Queue {
    /// Made as the first records come, then reused.
    entries: Vec<Queued>,
    /// Where the oldest entry is.
    oldest: usize,
    len: usize,
}

/// A record read and not yet added: its key, its hash in the table and
/// what it adds.
struct Queued {
    url: Vec<u8>,
    /// Where the key's host is in `url`, and its length.
    host: (usize, usize),
    window: Option<i64>,
    seen: u32,
    hash: u32,
    record: Record,
}

impl Queue {
    fn is_full(&self) -> bool {
        self.len == QUEUED
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a record (the queue is not full). `key.host` is in `key.url`,
    /// or empty ([`url_host`]).
    #[inline]
    fn push(&mut self, key: Key<'_>, seen: u32, hash: u32, record: Record) {
        debug_assert!(!self.is_full());
        let host = if key.host.is_empty() {
            (0, 0)
        } else {
            let at = key.host.as_ptr().addr() - key.url.as_ptr().addr();
            debug_assert_eq!(key.url.get(at..at + key.host.len()), Some(key.host));
            (at, key.host.len())
        };
        let at = (self.oldest + self.len) % QUEUED;
        self.len += 1;
        if let Some(q) = self.entries.get_mut(at) {
            q.url.clear();
            q.url.extend_from_slice(key.url);
            q.host = host;
            q.window = key.window;
            q.seen = seen;
            q.hash = hash;
            q.record = record;
        } else {
            // The first records: entries are made in ring order.
            debug_assert_eq!(at, self.entries.len());
            self.entries.push(Queued {
                url: key.url.to_vec(),
                host,
                window: key.window,
                seen,
                hash,
                record,
            });
        }
    }

    /// Takes the oldest record out (the queue is not empty); it stays
    /// readable until the next [`push`](Self::push).
    #[inline]
    fn pop_oldest(&mut self) -> &Queued {
        debug_assert!(!self.is_empty());
        let at = self.oldest;
        self.oldest = (at + 1) % QUEUED;
        self.len -= 1;
        &self.entries[at]
    }
}

/// The last client's two hashes: its summary hash ([`Record::client_hash`])
/// and the one the redirect follower knows it by ([`follow_hash`]). A
/// visitor's requests come in runs (a page, then what it loads), so on
/// real logs about half the records have the client of the record before
/// (57 % of the Elastic sample's), and comparing a dozen bytes costs less
/// than hashing them twice.
#[derive(Default)]
struct ClientCache {
    /// The client as logged.
    text: Vec<u8>,
    hashes: (Option<u64>, u64),
    kept: bool,
    /// A client escaped for hashing.
    escaped: Vec<u8>,
}

impl ClientCache {
    #[inline]
    fn hashes(&mut self, client: &[u8]) -> (Option<u64>, u64) {
        if !(self.kept && client == &self.text[..]) {
            self.text.clear();
            self.text.extend_from_slice(client);
            self.hashes = self.hash(client);
            self.kept = true;
        }
        self.hashes
    }

    /// The hashes of `client` as `--with client` writes it in a TSV row
    /// (escaped), which summaries have hashed since they were read from
    /// such rows: the same address gives the same hash as in older
    /// summaries.
    fn hash(&mut self, client: &[u8]) -> (Option<u64>, u64) {
        let c = if maybe_escaped(client)
            && client
                .iter()
                .any(|&b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
        {
            self.escaped.clear();
            crate::output::tabs::escape(client, &mut self.escaped);
            &self.escaped[..]
        } else {
            client
        };
        // `Record::client_hash` and `follow_hash`, in one pass.
        let (hash, follow) = xxh64_two(c, CLIENT_SEED, FOLLOW_SEED);
        debug_assert_eq!(
            (Some(hash), follow),
            (Record::client_hash(c), follow_hash(c))
        );
        // A client as `Info::client` gives it is neither empty nor `-`,
        // and its escaped form neither.
        let summary = (!c.is_empty() && c != b"-").then_some(hash);
        (summary, follow)
    }
}

/// Whether `client` may hold a byte that TSV escapes (`\\`, a tab, a line
/// end): eight bytes at a time, a byte below 14 or a `\\` flagging a
/// word (a client of control bytes is then checked byte by byte).
#[inline]
fn maybe_escaped(client: &[u8]) -> bool {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of a byte of `w` below `n` (`n` at most 128), or
    // above one that is (the subtraction's borrow): some byte is, if any
    // bit is set.
    let below = |w: u64, n: u8| w.wrapping_sub(LOW * u64::from(n)) & !w & HIGH;
    let flags = |w: u64| below(w, 14) | below(w ^ (LOW * u64::from(b'\\')), 1);
    let Some(last) = client.last_chunk::<8>() else {
        return client.iter().any(|&b| b < 14 || b == b'\\');
    };
    let mut rest = client;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        if flags(u64::from_le_bytes(*word)) != 0 {
            return true;
        }
        rest = tail;
    }
    // The bytes left, as the end of the last eight (a copy of a few
    // bytes into a word is a `memcpy` call).
    !rest.is_empty() && flags(u64::from_le_bytes(*last)) != 0
}

/// How a time text differs from the one [`TimeCache`] keeps.
enum Differs {
    Not,
    /// Only in the seconds' two bytes.
    InSeconds,
    /// Elsewhere, or in length.
    Elsewhere,
}

/// Misses in a row after which [`TimeCache`] rests, and the records it
/// rests for.
const MISSES_TO_REST: u32 = 8;
const REST: u32 = 56;

/// The last time text read and its value. On a log whose time text
/// changes from one record to the next (times of a quiet site, or in
/// milliseconds) checking and keeping the text only costs, so after
/// [`MISSES_TO_REST`] misses in a row the cache rests for [`REST`]
/// records, which are parsed as they come; then it is tried again. The
/// value is the parse of the text either way.
///
/// A text that differs from the kept one only in its seconds (where
/// `seconds_at` says they are) is a hit too: its value is the kept one's
/// moved by the seconds' difference, which is what parsing it gives (see
/// `log::info::seconds_at`). Most neighbours in a log share their minute
/// even where they do not share their second.
#[derive(Default)]
struct TimeCache {
    text: Vec<u8>,
    value: Option<i64>,
    /// Where the kept text's seconds are, when its value is known and
    /// moves with them.
    seconds_at: Option<usize>,
    misses: u32,
    resting: u32,
}

impl TimeCache {
    fn get(
        &mut self,
        text: &[u8],
        parse: impl Fn(&[u8]) -> Option<i64>,
        seconds_at: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<i64> {
        if self.resting > 0 {
            self.resting -= 1;
            return parse(text);
        }
        match self.compare(text) {
            Differs::Not => {
                self.misses = 0;
                return self.value;
            }
            Differs::InSeconds => {
                if let Some(value) = self.same_minute(text) {
                    self.misses = 0;
                    return Some(value);
                }
            }
            Differs::Elsewhere => {}
        }
        self.misses += 1;
        if self.misses >= MISSES_TO_REST {
            self.misses = 0;
            self.resting = REST;
        }
        self.text.clear();
        self.text.extend_from_slice(text);
        self.value = parse(text);
        self.seconds_at = self.value.and_then(|_| seconds_at(text));
        self.value
    }

    /// How `text` differs from the kept text, eight bytes at a time (time
    /// texts are 20 to 35 bytes: one pass, where comparing the text and
    /// then the parts around the seconds took three `memcmp` calls).
    #[inline]
    fn compare(&self, text: &[u8]) -> Differs {
        let kept = &self.text[..];
        if text.len() != kept.len() {
            return Differs::Elsewhere;
        }
        // The bytes where a difference is the seconds' (none when the kept
        // text has none).
        let (lo, hi) = self.seconds_at.map_or((0, 0), |at| (at, at + 2));
        // The bits of the bytes of a word at `i` or later.
        let from = |i: usize| if i >= 8 { 0 } else { u64::MAX << (8 * i) };
        let word =
            |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let mut in_seconds = false;
        let mut i = 0;
        while i + 8 <= text.len() {
            let x = word(text, i) ^ word(kept, i);
            if x != 0 {
                let seconds = from(lo.saturating_sub(i)) & !from(hi.saturating_sub(i));
                if x & !seconds != 0 {
                    return Differs::Elsewhere;
                }
                in_seconds = true;
            }
            i += 8;
        }
        for j in i..text.len() {
            if text[j] != kept[j] {
                if !(lo..hi).contains(&j) {
                    return Differs::Elsewhere;
                }
                in_seconds = true;
            }
        }
        if in_seconds {
            Differs::InSeconds
        } else {
            Differs::Not
        }
    }

    /// The value of `text`, which differs from the kept text only in its
    /// seconds, when they are two digits, at most 60 (as the parser takes
    /// them); it is then kept in the kept text's place.
    #[inline]
    fn same_minute(&mut self, text: &[u8]) -> Option<i64> {
        let at = self.seconds_at?;
        let new = num2(&text[at..at + 2]).filter(|&s| s <= 60)?;
        let old = num2(&self.text[at..at + 2])?;
        let value = self.value? - old + new;
        self.text[at..at + 2].copy_from_slice(&text[at..at + 2]);
        self.value = Some(value);
        Some(value)
    }
}

/// The host of a canonical URL (without userinfo and port); empty for a
/// path-only target or a URL without an authority.
#[inline(always)]
pub(crate) fn url_host(url: &[u8]) -> &[u8] {
    // A path-only target (most logs' URLs) has no scheme: told without a
    // call.
    if url.first() == Some(&b'/') {
        return b"";
    }
    absolute_url_host(url)
}

/// [`url_host`] of a URL that does not start with `/`.
#[inline(never)]
fn absolute_url_host(url: &[u8]) -> &[u8] {
    // The schemes of nearly every canonical URL, each told by a compare of
    // a word, not by the scheme's byte loop below.
    let rest = if let Some(rest) = url.strip_prefix(b"https://") {
        rest
    } else if let Some(rest) = url.strip_prefix(b"http://") {
        rest
    } else {
        // `scheme://`, the scheme being ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
        // (RFC 3986 §3.1): a `://` later in a path-only target's query is no host.
        let scheme_len = url
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
            .unwrap_or(url.len());
        if scheme_len == 0
            || !url[0].is_ascii_alphabetic()
            || !url[scheme_len..].starts_with(b"://")
        {
            return b"";
        }
        &url[scheme_len + 3..]
    };
    // Eight bytes at a time for the authority's end: it is one pass, where
    // a byte loop for the end and two for `@` and `:` cost a sixth of the
    // summary's own time per record (memchr's vector setup does not pay
    // off on a few dozen bytes). Most authorities have neither `@` nor `:`.
    let (end, marks) = authority_end(rest);
    let mut authority = &rest[..end];
    if !marks {
        return authority;
    }
    if let Some(at) = authority.iter().rposition(|&b| b == b'@') {
        authority = &authority[at + 1..];
    }
    // The port follows the last ':' unless that ':' is inside an IPv6 literal.
    match authority.iter().rposition(|&b| b == b':') {
        Some(colon) if !authority[colon..].contains(&b']') => &authority[..colon],
        _ => authority,
    }
}

/// Where the authority at the start of `rest` ends (its first `/`, `?` or
/// `#`, or the end), and whether it holds an `@` or a `:`.
fn authority_end(rest: &[u8]) -> (usize, bool) {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `w` equal to `b`. Exact up to the first
    // one: a byte above an equal byte may be flagged too (the subtraction's
    // borrow), so a flag at byte `i` means an equal byte at `i` or below.
    let equal = |w: u64, b: u8| {
        let x = w ^ (LOW * u64::from(b));
        x.wrapping_sub(LOW) & !x & HIGH
    };
    let mut marks = 0u64;
    let mut at = 0;
    while at < rest.len() {
        let n = (rest.len() - at).min(8);
        // Eight bytes read as one word where the URL has them (a copy of a
        // length known only at run time is a byte loop or a call).
        let w = match rest.get(at..at + 8) {
            Some(word) => u64::from_le_bytes(word.try_into().unwrap_or_default()),
            None => {
                let mut word = [0u8; 8];
                word[..n].copy_from_slice(&rest[at..]);
                u64::from_le_bytes(word)
            }
        };
        // Padding zeros equal none of these bytes.
        let ends = equal(w, b'/') | equal(w, b'?') | equal(w, b'#');
        let m = equal(w, b'@') | equal(w, b':');
        if ends != 0 {
            let first = (ends.trailing_zeros() / 8) as usize;
            // Flags below the end's byte are marks of the authority.
            let below = (1u64 << (first * 8)).wrapping_sub(1);
            return (at + first, marks | (m & below) != 0);
        }
        marks |= m;
        at += n;
    }
    (rest.len(), marks != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Summarizes `records` (URL and line; the line is `status bytes
    /// time client` separated by single spaces, the client last and
    /// possibly holding a tab) through `threads` worker sinks, record `i`
    /// going to sink `i % threads`, and returns the summary.
    fn through_sinks(records: &[(&str, &str)], threads: usize, memory: usize) -> String {
        let g = gather(records, threads, |g| {
            WorkerSink::new(memory, Some(86_400), Arc::clone(g))
        });
        let mut out = Vec::new();
        super::super::table::finish_all(g.tables, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The records of `records` as [`through_sinks`] takes them.
    fn borrowed(records: &[(String, String)]) -> Vec<(&str, &str)> {
        records
            .iter()
            .map(|(u, l)| (u.as_str(), l.as_str()))
            .collect()
    }

    /// The workers' tables of `records` (as [`through_sinks`] gives them to
    /// `threads` sinks made by `sink`, which is handed what they hand over).
    fn gather(
        records: &[(&str, &str)],
        threads: usize,
        sink: impl Fn(&Arc<Mutex<Gathered>>) -> WorkerSink,
    ) -> Gathered {
        let gathered = Arc::new(Mutex::new(Gathered::default()));
        // Unless `sink` says: the first sink queues every record, the
        // second from its table's first growth on, the third none (the
        // queue changes nothing).
        let mut sinks: Vec<Box<WorkerSink>> = (0..threads)
            .map(|i| {
                let mut s = sink(&gathered);
                if s.queue_from == QUEUE_FROM_SLOTS {
                    s.queue_from = [0, 64, usize::MAX][i % 3];
                }
                Box::new(s)
            })
            .collect();
        for (i, (url, line)) in records.iter().enumerate() {
            let line = line.as_bytes();
            let cut: Vec<usize> = (0..line.len()).filter(|&j| line[j] == b' ').collect();
            let info = Info {
                status: Some((0, cut[0])),
                bytes: Some((cut[0] + 1, cut[1])),
                time: Some((cut[1] + 1, cut[2])),
                client: Some((cut[2] + 1, line.len())),
                ..Info::default()
            };
            sinks[i % threads].record(url.as_bytes(), line, &info);
        }
        for s in sinks {
            s.done();
        }
        let g = std::mem::take(&mut *gathered.lock().unwrap());
        assert!(g.error.is_none());
        assert_eq!(g.records, records.len() as u64);
        g
    }

    /// The summary the miner reads of records gathered by day (in a
    /// worker once its windows fall on enough days) is the one of the rows
    /// of the summary's windows: the same bytes, windows and counts of URLs
    /// and of the summary's rows (which its budget of `--memory` plans
    /// by), whatever the workers, their tables' spills and the window.
    #[test]
    fn rows_gathered_by_day_are_mined_as_the_summarys_rows() {
        // Two weeks, by hour and by 45 minutes: a URL's records fall in
        // several windows of most days, some windows before the workers
        // gather by day, some after, some out of the log's time order.
        let mut records = Vec::new();
        for i in 0..6_000i64 {
            let t = (i * 7_919) % (14 * 86_400) + if i % 50 == 0 { -3 * 86_400 } else { 0 };
            let url = format!("https://h{}.example/p/{}", i % 3, i % 41);
            let line = format!(
                "{} {} {t} 192.0.2.{}",
                [200, 304, 200][(i % 3) as usize],
                100 + (i * t) % 7,
                i % 29
            );
            records.push((url, line));
        }
        let records = borrowed(&records);
        // The bytes for the miner, the scan and the summary's rows.
        let mine = |g: Gathered| {
            let mut out = Vec::new();
            let (scan, rows) =
                super::super::learn::summary_for_mining(g.tables, g.windows, &mut out).unwrap();
            (
                out,
                format!("{:?}", (scan.windows, scan.sorted, scan.hosts)),
                rows,
            )
        };
        for window in [3_600, 2_700] {
            let plain = mine(gather(&records, 1, |g| {
                WorkerSink::new(usize::MAX, Some(window), Arc::clone(g))
            }));
            assert!(plain.2 > 2 * 41 * 14, "{}", plain.2);
            for (threads, memory) in [(1, usize::MAX), (2, usize::MAX), (1, 1), (3, 1)] {
                let by_day = gather(&records, threads, |g| {
                    WorkerSink::for_mining(memory, Some(window), Arc::clone(g))
                });
                assert!(by_day.tables.iter().all(|t| t.keeps_seen()));
                if memory == usize::MAX {
                    // Rows of days: fewer than the summary's.
                    let held: usize = by_day.tables.iter().map(|t| t.len()).sum();
                    assert!((held as u64) < plain.2 * 3 / 4, "{held} {}", plain.2);
                }
                assert!(
                    mine(by_day) == plain,
                    "window {window}, {threads} sinks, memory {memory}"
                );
            }
        }
        // Windows a day cannot hold 32 of, or of a day: no rows of days.
        for window in [1_800, 86_400] {
            let g = gather(&records[..10], 1, |g| {
                WorkerSink::for_mining(usize::MAX, Some(window), Arc::clone(g))
            });
            assert!(g.tables.iter().all(|t| !t.keeps_seen()), "{window}");
        }
    }

    /// A record goes to the row of its day from the worker's eighth day on,
    /// and marks its window's place in the day.
    #[test]
    fn windows_go_into_their_day_from_the_eighth_day_on() {
        let mut fold = DayFold::new(3_600).unwrap();
        for d in 0..DAYS_FOR_DAY_STEP as i64 - 1 {
            assert_eq!(fold.key(d * DAY + 7_200), (d * DAY + 7_200, 1 << 2));
            assert_eq!(fold.key(d * DAY), (d * DAY, 1));
        }
        let last = (DAYS_FOR_DAY_STEP as i64 - 1) * DAY;
        assert_eq!(fold.key(last + 23 * 3_600), (last, 1 << 23));
        assert_eq!(fold.key(5 * 3_600), (0, 1 << 5));
        assert_eq!(fold.key(-3_600), (-DAY, 1 << 23));
        assert!(DayFold::new(2_699).is_none() && DayFold::new(2_700).is_some());
        let mut fold = DayFold::new(2_700).unwrap();
        assert_eq!(fold.key(DAY - 2_700), (DAY - 2_700, 1 << 31));
    }

    #[test]
    fn records_are_added_in_their_order_however_few() {
        // Fewer records than the queue holds, as many, and more: each is
        // added (the last ones when the worker is done), with its key's
        // host, in the order they came (rows are made at their key's
        // first record).
        let urls = [
            "/a",
            "https://h.example/b",
            "/a",
            "http://u@h2.example:8/d?q",
            "/c",
            "https://h.example/b",
            "https://h.example/e",
            "/a",
            "/f",
            "/g",
            "http://h2.example/h",
        ];
        for n in 0..=urls.len() {
            let records: Vec<(&str, &str)> = urls[..n]
                .iter()
                .enumerate()
                .map(|(i, &u)| (u, ["200 5 10 c", "304 1 90000 d"][i % 2]))
                .collect();
            for queue_from in [0, 64, usize::MAX] {
                let g = gather(&records, 1, |g| {
                    let mut s = WorkerSink::new(usize::MAX, Some(86_400), Arc::clone(g));
                    s.queue_from = queue_from;
                    s
                });
                assert_eq!(g.records, n as u64);
                let mut want: Vec<(&[u8], &[u8], Option<i64>)> = Vec::new();
                for (i, u) in urls[..n].iter().enumerate() {
                    let key = (
                        url_host(u.as_bytes()),
                        u.as_bytes(),
                        Some([0, 86_400][i % 2]),
                    );
                    if !want.contains(&key) {
                        want.push(key);
                    }
                }
                let got: Vec<_> = g.tables[0]
                    .rows_made()
                    .into_iter()
                    .map(|(k, _)| (k.host, k.url, k.window))
                    .collect();
                assert_eq!(got, want, "{n} records, queued from {queue_from} slots");
            }
        }
    }

    #[test]
    fn workers_tables_merge_into_one_summary() {
        let mut records = Vec::new();
        for i in 0..3_000u64 {
            let url = format!("https://h{}.example/p/{}", i % 3, i % 97);
            let line = format!(
                "{} {} {} 192.0.2.{}",
                [200, 304, 404][(i % 3) as usize],
                100 + i % 13,
                i * 97,
                i % 29
            );
            records.push((url, line));
        }
        let records = borrowed(&records);
        let one = through_sinks(&records, 1, usize::MAX);
        assert!(one.lines().count() > 300, "{one}");
        for (threads, memory) in [(2, usize::MAX), (3, usize::MAX), (2, 1), (1, 1)] {
            assert!(
                through_sinks(&records, threads, memory) == one,
                "{threads} sinks, memory {memory}"
            );
        }
    }

    #[test]
    fn a_time_repeated_is_read_as_the_one_before_and_a_new_one_anew() {
        // The sink keeps the last time text and its value: records of one
        // second share it, the next second is read again (here across the
        // windows' edge), and a bad time after a good one is no time.
        let out = through_sinks(
            &[
                ("/a", "200 5 86399 c"),
                ("/a", "200 5 86399 c"),
                ("/a", "200 5 86400 c"),
                ("/a", "200 5 86400 c"),
                ("/a", "200 5 86400 c"),
                ("/a", "200 5 x c"),
                ("/a", "200 5 86399 c"),
            ],
            1,
            usize::MAX,
        );
        let windows: Vec<(&str, &str)> = out
            .lines()
            .skip(1)
            .map(|row| {
                let cells: Vec<&str> = row.split('\t').collect();
                (cells[2], cells[3])
            })
            .collect();
        assert_eq!(windows, [("-", "1"), ("0", "3"), ("86400", "3")], "{out}");
    }

    #[test]
    fn each_record_is_in_the_window_of_its_time_whatever_the_record_before() {
        // The window of the record before is reused only for a time in
        // it: times that stay, step over an edge, jump several windows
        // ahead and come back.
        let times = [
            5, 86_399, 86_400, 400_000, 86_399, 0, 172_800, 172_799, 999_999,
        ];
        let records: Vec<(String, String)> = times
            .iter()
            .map(|t| (format!("/t{t}"), format!("200 5 {t} c")))
            .collect();
        let records = borrowed(&records);
        let out = through_sinks(&records, 1, usize::MAX);
        let mut got: Vec<(String, String)> = out
            .lines()
            .skip(1)
            .map(|row| {
                let cells: Vec<&str> = row.split('\t').collect();
                (cells[1].to_owned(), cells[2].to_owned())
            })
            .collect();
        got.sort();
        let mut want: Vec<(String, String)> = times
            .iter()
            .map(|t| (format!("/t{t}"), (t / 86_400 * 86_400).to_string()))
            .collect();
        want.sort();
        want.dedup();
        assert_eq!(got, want, "{out}");
    }

    #[test]
    fn the_time_cache_rests_on_times_that_change_and_gives_the_parsed_values() {
        let calls = std::cell::Cell::new(0);
        let parse = |t: &[u8]| {
            calls.set(calls.get() + 1);
            std::str::from_utf8(t).ok()?.parse::<i64>().ok()
        };
        let no_seconds = |_: &[u8]| None;
        let mut cache = TimeCache::default();
        // A new time every record: each parsed once, and the cache rests.
        for t in 0..100 {
            assert_eq!(
                cache.get(t.to_string().as_bytes(), parse, no_seconds),
                Some(t)
            );
        }
        assert_eq!(calls.get(), 100);
        assert!(cache.resting > 0, "misses in a row rest the cache");
        // One time again and again: parsed while the cache rests (and the
        // value is this text's, not the kept one's), then read from it.
        for _ in 0..REST + 2 {
            assert_eq!(cache.get(b"7", parse, no_seconds), Some(7));
        }
        let before = calls.get();
        for _ in 0..10 {
            assert_eq!(cache.get(b"7", parse, no_seconds), Some(7));
        }
        assert_eq!(calls.get(), before, "a repeated time is not parsed again");
        assert_eq!(cache.get(b"x", parse, no_seconds), None);
        assert_eq!(cache.get(b"8", parse, no_seconds), Some(8));
    }

    #[test]
    fn the_time_cache_reads_a_new_second_of_the_kept_minute_as_the_parser_does() {
        let calls = std::cell::Cell::new(0);
        let parse = |t: &[u8]| {
            calls.set(calls.get() + 1);
            parse_time(t)
        };
        // Texts of each shape the cache moves by the seconds, and ones it
        // must not: other bytes changed, seconds out of range or not
        // digits, a time of no minute (a Unix time), an invalid date.
        let shapes = [
            "[10/Oct/2000:13:55:SS -0700]",
            "10/Oct/2000:13:55:SS +0130",
            "\"10/oct/2000:13:55:SS\"",
            "25/Feb/2019:16:19:SS.143",
            "2018-07-02T22:23:SSZ",
            "2018-07-02 22:23:SS.186641+02:00",
            "\"2018-07-02T22:23:SS\"",
            "[2016-02-29T23:59:SS-01]",
            "[30/Feb/2000:13:55:SS -0700]",
            "13202795SS",
        ];
        let seconds = [
            "00", "07", "59", "60", "61", "99", "6x", " 7", "+1", "07", "30",
        ];
        let mut texts = Vec::new();
        for shape in shapes {
            for s in seconds {
                texts.push(shape.replace("SS", s));
            }
            // The minute, the zone and the fraction changed too.
            texts.push(shape.replace(":55:", ":56:").replace("SS", "10"));
            texts.push(shape.replace("0700", "0600").replace("SS", "10"));
            texts.push(shape.replace(".1", ".2").replace("SS", "10"));
        }
        let mut cache = TimeCache::default();
        for text in &texts {
            let want = parse_time(text.as_bytes());
            let got = cache.get(text.as_bytes(), parse, seconds_at);
            assert_eq!(got, want, "{text}");
        }
        assert!(
            texts
                .iter()
                .filter(|t| parse_time(t.as_bytes()).is_some())
                .count()
                > 40
        );
        // The seconds of a kept minute are read without the parser.
        let mut cache = TimeCache::default();
        calls.set(0);
        for s in (0..=60).chain([7, 59]) {
            let text = format!("[10/Oct/2000:13:55:{s:02} -0700]");
            let got = cache.get(text.as_bytes(), parse, seconds_at);
            assert_eq!(got, Some(971_211_300 + s), "{text}");
        }
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_client_is_hashed_as_tsv_writes_it() {
        // Summaries were made from TSV rows, where a tab in a client cell
        // is written `\\t`: the hash is of that form still.
        let out = through_sinks(&[("/a", "200 5 0 a\tb")], 1, usize::MAX);
        let hash = xxhash_rust::xxh64::xxh64(b"a\\tb", super::super::summary::CLIENT_SEED);
        let want = format!("\t{hash:016x}\n");
        assert!(out.ends_with(&want), "{out}");
    }

    #[test]
    fn maybe_escaped_flags_every_client_with_a_byte_tsv_escapes() {
        // Each byte at each place of clients of up to 20 bytes: flagged
        // whenever it is one TSV escapes; ordinary clients are not.
        for len in 1..=20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut client = b"192.0.2.100:54321xyz"[..len].to_vec();
                    client[at] = b;
                    if matches!(b, b'\\' | b'\t' | b'\n' | b'\r') {
                        assert!(maybe_escaped(&client), "{client:?}");
                    }
                }
            }
        }
        for client in [
            "192.0.2.1",
            "2001:db8::1",
            "a-much-longer-client-name.example.org",
            "-",
        ] {
            assert!(!maybe_escaped(client.as_bytes()), "{client}");
        }
    }

    #[test]
    fn hosts_of_urls() {
        for (url, host) in [
            ("https://example.com/a", "example.com"),
            ("https://example.com", "example.com"),
            ("https://example.com?q", "example.com"),
            ("http://u:p@example.com:8080/x", "example.com"),
            ("http://[::1]:8080/x", "[::1]"),
            ("http://[2001:db8::1]/", "[2001:db8::1]"),
            ("/path/only?x=http://a.b/", ""),
            ("mailto:a@b.c", ""),
            ("//a.example/x", ""),
            ("1http://a.example/", ""),
            ("https://a.example/x:y@z", "a.example"),
            ("https://a.example?u@v:8", "a.example"),
            (
                "https://user@longer.example.org:8443/",
                "longer.example.org",
            ),
            ("https://12345678/", "12345678"),
            ("https://1234567:/", "1234567"),
            ("https://a.example.org#x:1", "a.example.org"),
            ("ftp://a.example/x", "a.example"),
            ("git+ssh://a.example:22/x", "a.example"),
            ("http://a", "a"),
            ("https://", ""),
            ("http:/a.example/", ""),
            ("httpx://a.example/", "a.example"),
        ] {
            assert_eq!(url_host(url.as_bytes()), host.as_bytes(), "{url}");
        }
    }

    /// The authority's end and marks as byte loops find them.
    fn authority_end_by_bytes(rest: &[u8]) -> (usize, bool) {
        let end = rest
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#'))
            .unwrap_or(rest.len());
        (end, rest[..end].iter().any(|&b| matches!(b, b'@' | b':')))
    }

    #[test]
    fn the_authority_ends_where_byte_loops_find_it() {
        // Every string of up to 20 bytes from a few letters, the bytes
        // that end an authority or mark one, and bytes whose neighbors a
        // wrong word trick would confuse (NUL, 0x01, 0x80, 0xff), at every
        // place in a word.
        let alphabet = b"a/?#@:\0\x01\x80\xff.";
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 21) as usize;
            let rest: Vec<u8> = (0..len)
                .map(|i| alphabet[((x >> (i * 3 % 60)) as usize + i) % alphabet.len()])
                .collect();
            assert_eq!(
                authority_end(&rest),
                authority_end_by_bytes(&rest),
                "{rest:?}"
            );
        }
    }
}
