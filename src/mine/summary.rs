//! One summary row: what the log says about one canonical URL of one host in
//! one time window, in a form whose merge is exact.
//!
//! `canonurl summarize` writes these rows, `canonurl summarize --merge`
//! merges them, and `canonurl mine` reads them (docs/mine.md). Every field is
//! chosen so that summarizing the parts of a log and merging the parts'
//! rows gives the same row, byte for byte, as summarizing the whole log:
//!
//! - counts (hits, responses per status class) are summed;
//! - the largest 200 size is a maximum;
//! - sizes of 200 responses and distinct clients are **bottom-k samples**:
//!   the k values with the smallest hashes, each size with its exact count.
//!   A value in the whole log's bottom k is in the bottom k of every part
//!   that has it (fewer than k of that part's values can hash below it), so
//!   its count survives every merge; values outside it are dropped the same
//!   way in every order of merging. Because a size is kept by its hash, two
//!   URLs that share a size are compared on the same sample (consistent
//!   sampling), which is what the miner's evidence needs.
//!
//! The TSV form (one row per line, after the header of [`HEADER`]):
//!
//! ```text
//! host  url  window  hits  s200 s301 s302 s303 s307 s308 s304 s404 s5xx other none  largest  sizes  clients
//! ```
//!
//! `window` is the window's start in Unix seconds (`-` for records without a
//! time), `sizes` is `size:count` pairs in increasing size, comma-separated
//! (`-` for none), and `clients` the kept client hashes in hexadecimal,
//! increasing (`-` for none). An empty `host` is a path-only URL.

use std::fmt;

use smallvec::SmallVec;
use xxhash_rust::xxh64::xxh64;

use crate::ascii;

/// Sizes of 200 responses kept per row (bottom-k by hash).
pub(crate) const SIZES_KEPT: usize = 16;
/// Client hashes kept per row (bottom-k).
pub(crate) const CLIENTS_KEPT: usize = 8;

/// Seeds of the two hashes: any fixed values, different from each other and
/// from `--key`'s, so the samples are independent of one another.
const SIZE_SEED: u64 = 0x005e_ed0f_512e;
pub(crate) const CLIENT_SEED: u64 = 0xc11e_9715;

/// The status classes counted, in column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusClass {
    Ok200,
    Moved301,
    Found302,
    SeeOther303,
    Temporary307,
    Permanent308,
    NotModified304,
    /// 404 and 410: the page is not there.
    Gone,
    /// 500 to 599.
    ServerError,
    /// Any other status.
    Other,
    /// The record logs no status (or `-`).
    None,
}

impl StatusClass {
    pub(crate) const COUNT: usize = 11;
    /// Column names, in order.
    const NAMES: [&'static str; Self::COUNT] = [
        "s200", "s301", "s302", "s303", "s307", "s308", "s304", "s404", "s5xx", "other", "none",
    ];

    pub(crate) fn of(status: Option<u16>) -> StatusClass {
        match status {
            None => StatusClass::None,
            Some(200) => StatusClass::Ok200,
            Some(301) => StatusClass::Moved301,
            Some(302) => StatusClass::Found302,
            Some(303) => StatusClass::SeeOther303,
            Some(307) => StatusClass::Temporary307,
            Some(308) => StatusClass::Permanent308,
            Some(304) => StatusClass::NotModified304,
            Some(404 | 410) => StatusClass::Gone,
            Some(500..=599) => StatusClass::ServerError,
            Some(_) => StatusClass::Other,
        }
    }
}

/// A size of 200 responses and how many responses had it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SizeCount {
    pub size: u64,
    pub count: u64,
}

/// A kept size with its rank, so that an insert hashes only the new size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ranked {
    rank: (u64, u64),
    count: u64,
}

/// The order of the bottom-k samples: by hash, then by value, so that two
/// values with one hash are still ordered the same way everywhere.
fn size_rank(size: u64) -> (u64, u64) {
    (xxh64_of_u64(size, SIZE_SEED), size)
}

/// `xxh64(&v.to_le_bytes(), seed)`, XXH64's steps for an input of one
/// eight-byte word: a size of every 200 record is hashed, and the general
/// function's dispatch on the input's length cost more than the hash
/// (xxh64 was 124 instructions a record of the Elastic sample).
#[inline]
fn xxh64_of_u64(v: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    h ^= v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// `(xxh64(input, a), xxh64(input, b))` in one pass over `input`: a
/// client is hashed by two seeds (its summary hash and the redirect
/// follower's), and for the usual client, an address of 7 to 39 bytes,
/// XXH64's short-input steps inlined for both cost less than half of two
/// calls (170 instructions a client of the Elastic sample). Inputs of 32
/// bytes or more, which XXH64 takes in stripes, go to `xxh64`.
#[inline]
pub(crate) fn xxh64_two(input: &[u8], a: u64, b: u64) -> (u64, u64) {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    if input.len() >= 32 {
        return (xxh64(input, a), xxh64(input, b));
    }
    let len = input.len() as u64;
    let mut h = [a, b].map(|seed| seed.wrapping_add(P5).wrapping_add(len));
    let mut rest = input;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let k = u64::from_le_bytes(*word)
            .wrapping_mul(P2)
            .rotate_left(31)
            .wrapping_mul(P1);
        h = h.map(|h| (h ^ k).rotate_left(27).wrapping_mul(P1).wrapping_add(P4));
        rest = tail;
    }
    if let Some((word, tail)) = rest.split_first_chunk::<4>() {
        let k = u64::from(u32::from_le_bytes(*word)).wrapping_mul(P1);
        h = h.map(|h| (h ^ k).rotate_left(23).wrapping_mul(P2).wrapping_add(P3));
        rest = tail;
    }
    for &byte in rest {
        let k = u64::from(byte).wrapping_mul(P5);
        h = h.map(|h| (h ^ k).rotate_left(11).wrapping_mul(P1));
    }
    let [x, y] = h.map(|mut h| {
        h ^= h >> 33;
        h = h.wrapping_mul(P2);
        h ^= h >> 29;
        h = h.wrapping_mul(P3);
        h ^ (h >> 32)
    });
    (x, y)
}

/// What one record adds to a row: its status class, its size if it is a
/// page size (with the size's sampling rank) and its client's hash.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    class: StatusClass,
    size: Option<(u64, u64)>,
    client: Option<u64>,
}

impl Record {
    /// A record's status, body size and client, as [`UrlSummary::add`]
    /// counts them.
    #[cfg(test)]
    pub(crate) fn of(status: Option<u16>, bytes: Option<u64>, client: Option<&[u8]>) -> Record {
        Record::with_client(status, bytes, client.and_then(Record::client_hash))
    }

    /// The hash a record's client is counted by, `None` for no client
    /// (empty or `-`).
    pub(crate) fn client_hash(client: &[u8]) -> Option<u64> {
        (!client.is_empty() && client != b"-").then(|| xxh64(client, CLIENT_SEED))
    }

    /// [`Record::of`] with the client's hash made by the caller
    /// ([`Record::client_hash`]), who may have it from the record before.
    pub(crate) fn with_client(
        status: Option<u16>,
        bytes: Option<u64>,
        client: Option<u64>,
    ) -> Record {
        let class = StatusClass::of(status);
        // A 200 with no body (HEAD, or `-`) says nothing about the page's size.
        let size = match (class, bytes) {
            (StatusClass::Ok200, Some(size @ 1..)) => Some(size_rank(size)),
            _ => None,
        };
        Record {
            class,
            size,
            client,
        }
    }
}

/// One summary row's values (its key, host, URL and window, is the table's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UrlSummary {
    pub hits: u64,
    pub status: [u64; StatusClass::COUNT],
    /// The largest size of a 200 response (0: none).
    pub largest: u64,
    /// The bottom-k sample of 200 sizes, in increasing rank (`size_rank`).
    sizes: SmallVec<[Ranked; 2]>,
    /// The bottom-k sample of client hashes, increasing.
    clients: SmallVec<[u64; 2]>,
}

impl UrlSummary {
    /// Counts one record (the summary table counts them in its rows:
    /// `table::RowMut::add`).
    #[cfg(test)]
    pub(crate) fn add(&mut self, status: Option<u16>, bytes: Option<u64>, client: Option<&[u8]>) {
        self.add_record(Record::of(status, bytes, client));
    }

    /// Makes the row empty (equal to `UrlSummary::default()`), keeping
    /// the samples' allocations: a row merged into again and again (the
    /// miner's current URL and window) does not allocate and grow its
    /// samples anew each time.
    pub(crate) fn clear(&mut self) {
        self.hits = 0;
        self.status = [0; StatusClass::COUNT];
        self.largest = 0;
        self.sizes.clear();
        self.clients.clear();
    }

    /// Counts one record, read ([`Record::of`]).
    pub(crate) fn add_record(&mut self, r: Record) {
        self.hits += 1;
        self.status[r.class as usize] += 1;
        if let Some(rank) = r.size {
            self.largest = self.largest.max(rank.1);
            self.add_ranked(rank, 1);
        }
        if let Some(hash) = r.client {
            self.add_client(hash);
        }
    }

    fn add_size(&mut self, size: u64, count: u64) {
        self.add_ranked(size_rank(size), count);
    }

    /// Adds `count` responses of the size ranked `rank` (`size_rank`, made
    /// once per size: merging rows keeps their sizes' ranks).
    #[inline]
    fn add_ranked(&mut self, rank: (u64, u64), count: u64) {
        // The last size kept again (a page of one size: most records of
        // most rows), or a full sample and a rank above its last (most
        // sizes of a busy row): told without a call and a search.
        let full = self.sizes.len() == SIZES_KEPT;
        match self.sizes.last_mut() {
            Some(last) if last.rank == rank => last.count += count,
            Some(last) if full && rank > last.rank => {}
            _ => self.insert_ranked(rank, count),
        }
    }

    /// [`add_ranked`](Self::add_ranked)'s search and insertion.
    #[inline(never)]
    fn insert_ranked(&mut self, rank: (u64, u64), count: u64) {
        match self.sizes.binary_search_by(|s| s.rank.cmp(&rank)) {
            Ok(i) => self.sizes[i].count += count,
            Err(i) if i < SIZES_KEPT => {
                self.sizes.insert(i, Ranked { rank, count });
                self.sizes.truncate(SIZES_KEPT);
            }
            Err(_) => {}
        }
    }

    #[inline]
    fn add_client(&mut self, hash: u64) {
        // As for the sizes: most clients of a busy row are above the
        // sample's last.
        if self.clients.len() == CLIENTS_KEPT && self.clients.last().is_some_and(|&c| hash > c) {
            return;
        }
        self.insert_client(hash);
    }

    /// [`add_client`](Self::add_client)'s search and insertion.
    #[inline(never)]
    fn insert_client(&mut self, hash: u64) {
        if let Err(i) = self.clients.binary_search(&hash) {
            if i < CLIENTS_KEPT {
                self.clients.insert(i, hash);
                self.clients.truncate(CLIENTS_KEPT);
            }
        }
    }

    /// Adds `other`'s counts and samples to this row's (the rows of one key).
    pub(crate) fn merge(&mut self, other: &UrlSummary) {
        self.hits += other.hits;
        for (a, b) in self.status.iter_mut().zip(other.status) {
            *a += b;
        }
        self.largest = self.largest.max(other.largest);
        for s in &other.sizes {
            self.add_ranked(s.rank, s.count);
        }
        for &c in &other.clients {
            self.add_client(c);
        }
    }

    /// The kept sizes of 200 responses, in increasing size.
    pub(crate) fn sizes(&self) -> impl Iterator<Item = SizeCount> + '_ {
        let mut v: SmallVec<[SizeCount; 4]> = self
            .sizes
            .iter()
            .map(|s| SizeCount {
                size: s.rank.1,
                count: s.count,
            })
            .collect();
        v.sort_unstable_by_key(|s| s.size);
        v.into_iter()
    }

    /// [`UrlSummary::sizes`] in `v`, unless there are more than it holds
    /// (a row keeps at most [`SIZES_KEPT`]; more only in tests).
    pub(crate) fn sorted_sizes<'v>(
        &self,
        v: &'v mut [SizeCount; SIZES_KEPT],
    ) -> Option<&'v [SizeCount]> {
        (self.sizes.len() <= SIZES_KEPT).then(|| self.sizes_by_size(v))
    }

    /// The kept sizes of 200 responses in increasing size, in `v` (a row
    /// keeps at most [`SIZES_KEPT`]).
    fn sizes_by_size<'v>(&self, v: &'v mut [SizeCount; SIZES_KEPT]) -> &'v [SizeCount] {
        let n = self.sizes.len().min(SIZES_KEPT);
        for (to, s) in v.iter_mut().zip(&self.sizes) {
            *to = SizeCount {
                size: s.rank.1,
                count: s.count,
            };
        }
        v[..n].sort_unstable_by_key(|s| s.size);
        &v[..n]
    }

    /// The column names of a summary file, tab-separated, with its line end.
    pub(crate) fn header() -> String {
        let mut h = String::from("host\turl\twindow\thits");
        for name in StatusClass::NAMES {
            h.push('\t');
            h.push_str(name);
        }
        h.push_str("\tlargest\tsizes\tclients\n");
        h
    }

    /// Appends the row (key and values) to `out`, with its line end.
    pub(crate) fn write_row(
        &self,
        host: &[u8],
        url: &[u8],
        window: Option<i64>,
        out: &mut Vec<u8>,
    ) {
        // Room for the whole row at once: 20 digits and a separator per
        // number, 17 bytes per client hash.
        out.reserve(
            host.len()
                + url.len()
                + 24 * (3 + StatusClass::COUNT)
                + 42 * self.sizes.len()
                + 17 * self.clients.len()
                + 8,
        );
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(host);
        out.push(b'\t');
        out.extend_from_slice(url);
        out.push(b'\t');
        match window {
            Some(w) => out.extend_from_slice(num.format(w).as_bytes()),
            None => out.push(b'-'),
        }
        for n in std::iter::once(self.hits).chain(self.status) {
            out.push(b'\t');
            push_count(n, &mut num, out);
        }
        out.push(b'\t');
        push_count(self.largest, &mut num, out);
        out.push(b'\t');
        if self.sizes.is_empty() {
            out.push(b'-');
        }
        let mut by_size = [SizeCount { size: 0, count: 0 }; SIZES_KEPT];
        for (i, s) in self.sizes_by_size(&mut by_size).iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(num.format(s.size).as_bytes());
            out.push(b':');
            push_count(s.count, &mut num, out);
        }
        out.push(b'\t');
        if self.clients.is_empty() {
            out.push(b'-');
        }
        for (i, &c) in self.clients.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&hex16(c));
        }
        out.push(b'\n');
    }

    /// Appends the row (key and values) in the binary form `canonurl mine`
    /// hands its own summary of logs to the miner in, and spilled runs are
    /// written in (temporary files, never shown: [`UrlSummary::read_bin`]
    /// reads it back): no decimal text to write and parse again. A record is
    /// its body's length (4 bytes, little-endian), then how many bytes of
    /// its host and URL (one after the other) are the record's before's
    /// (`shared`: a sorted run's records share most; 0 for a record read
    /// alone), the host's and the URL's lengths, their bytes after the
    /// shared ones (three LEB128 varints, then the bytes), the window (a tag byte, then
    /// 8 bytes), the hits, a mask of the status classes counted (2 bytes)
    /// and their counts, the largest size, the sizes (their number, then
    /// each size's sampling hash in 8 bytes, size and count) in the
    /// sample's own order, and the client hashes (their number, then 8
    /// bytes each). Counts are varints.
    ///
    /// Every row is written here at least twice when the table spills
    /// (its run, the miner's copy): the values go to a buffer on the stack
    /// first and the record is appended in three copies, and the statuses
    /// never seen (most of them) and the sizes' hashes cost nothing to
    /// read back.
    pub(crate) fn write_bin(&self, key: Key<'_>, shared: usize, out: &mut Vec<u8>) {
        write_bin::<BIN_VALUES_MAX, _, _, _>(
            key,
            shared,
            BinValues {
                hits: self.hits,
                status: self
                    .status
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c != 0)
                    .map(|(i, &c)| (i, c)),
                largest: self.largest,
                sizes: self.sizes.iter().map(|s| (s.rank, s.count)),
                clients: self.clients.iter().copied(),
            },
            out,
        );
    }

    /// Reads a record's body as [`UrlSummary::write_bin`] wrote it; `None`
    /// when it is not one.
    pub(crate) fn read_bin(body: &[u8]) -> Option<(Key<'_>, UrlSummary)> {
        let (key, at) = read_bin_key(body)?;
        Some((key, UrlSummary::read_values(body, at)?))
    }

    /// Reads the values of a record's body from `at`, after its key and
    /// window ([`read_bin_key_after`]).
    pub(crate) fn read_values(body: &[u8], mut at: usize) -> Option<UrlSummary> {
        let mut s = UrlSummary {
            hits: get_varint(body, &mut at)?,
            ..UrlSummary::default()
        };
        let mask = u16::from_le_bytes(body.get(at..at + 2)?.try_into().ok()?);
        at += 2;
        if mask >> StatusClass::COUNT != 0 {
            return None;
        }
        for (i, n) in s.status.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *n = get_varint(body, &mut at)?;
            }
        }
        s.largest = get_varint(body, &mut at)?;
        let sizes = usize::from(*body.get(at)?);
        at += 1;
        if sizes > SIZES_KEPT {
            return None;
        }
        for _ in 0..sizes {
            let hash = u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?);
            at += 8;
            let size = get_varint(body, &mut at)?;
            let count = get_varint(body, &mut at)?;
            s.sizes.push(Ranked {
                rank: (hash, size),
                count,
            });
        }
        let clients = usize::from(*body.get(at)?);
        at += 1;
        if clients > CLIENTS_KEPT {
            return None;
        }
        for _ in 0..clients {
            let c = u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?);
            at += 8;
            s.clients.push(c);
        }
        (at == body.len()).then_some(s)
    }

    /// Adds a packed row's counts and samples, as [`UrlSummary::merge`]
    /// adds those of its `UrlSummary`. Not for an outgrown row.
    pub(crate) fn merge_packed(&mut self, p: &Packed) {
        debug_assert!(p.outgrown().is_none());
        let count = u64::from(p.count);
        self.hits += count;
        if count != 0 {
            self.status[usize::from(p.class)] += count;
        }
        self.largest = self.largest.max(p.size);
        if p.size_count != 0 {
            self.add_ranked((p.size_hash, p.size), p.size_count.into());
        }
        if p.has_client {
            self.add_client(p.client);
        }
    }

    /// Reads one row (without its line end): its key and values.
    pub(crate) fn parse_row(line: &[u8]) -> Result<(Key<'_>, UrlSummary), RowError> {
        let (key, rest) = Key::parse(line)?;
        let mut cells = rest.into_iter().flat_map(|r| r.split(|&b| b == b'\t'));
        let mut next = |column: &'static str| cells.next().ok_or(RowError::Missing(column));
        let mut s = UrlSummary {
            hits: parse_num(next("hits")?, "hits")?,
            ..UrlSummary::default()
        };
        for (i, name) in StatusClass::NAMES.iter().enumerate() {
            s.status[i] = parse_num(next(name)?, name)?;
        }
        s.largest = parse_num(next("largest")?, "largest")?;
        let sizes = next("sizes")?;
        if sizes != b"-" {
            for pair in sizes.split(|&b| b == b',') {
                let colon = memchr::memchr(b':', pair).ok_or(RowError::Bad("sizes"))?;
                let size = parse_num(&pair[..colon], "sizes")?;
                let count = parse_num(&pair[colon + 1..], "sizes")?;
                if size == 0 || count == 0 || s.sizes.len() == SIZES_KEPT {
                    return Err(RowError::Bad("sizes"));
                }
                s.add_size(size, count);
            }
        }
        let clients = next("clients")?;
        if clients != b"-" {
            for hex in clients.split(|&b| b == b',') {
                if hex.len() != 16 || s.clients.len() == CLIENTS_KEPT {
                    return Err(RowError::Bad("clients"));
                }
                let c = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u64::from_str_radix(h, 16).ok())
                    .ok_or(RowError::Bad("clients"))?;
                s.add_client(c);
            }
        }
        if cells.next().is_some() {
            return Err(RowError::Extra);
        }
        if s.status.iter().sum::<u64>() != s.hits
            || s.sizes.iter().map(|z| z.count).sum::<u64>() > s.status[0]
        {
            return Err(RowError::Inconsistent);
        }
        Ok((key, s))
    }
}

/// A row's values in 40 bytes, where a [`UrlSummary`] takes 200: the
/// summary table's form of its rows ([`super::table`]), most of which are
/// URLs seen once or a few times. It holds the responses of one status
/// class, at most one kept size (which is then the largest: every size
/// counted was kept) and at most one client. A row that outgrows it is kept
/// as a `UrlSummary` out of line, whose place the packed row holds
/// ([`Packed::outgrown`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Packed {
    /// The responses, all of status class `class` (0: an empty row); for
    /// an outgrown row, the place of its `UrlSummary`.
    count: u32,
    /// The responses of the kept size (0: no size kept).
    size_count: u32,
    /// The status class (`StatusClass as u8`), or [`Packed::OUTGROWN`].
    class: u8,
    has_client: bool,
    /// The kept size's sampling hash (`size_rank`) and the size.
    size_hash: u64,
    size: u64,
    client: u64,
}

impl Packed {
    /// The `class` of an outgrown row.
    const OUTGROWN: u8 = u8::MAX;

    /// The row at place `at` of the outgrown rows (`at` below `u32::MAX`).
    pub(crate) fn outgrown_at(at: usize) -> Packed {
        Packed {
            count: at as u32,
            class: Packed::OUTGROWN,
            ..Packed::default()
        }
    }

    /// The place of the row's `UrlSummary` when it has outgrown this form.
    #[inline]
    pub(crate) fn outgrown(&self) -> Option<usize> {
        (self.class == Packed::OUTGROWN).then_some(self.count as usize)
    }

    /// Counts one record, if this form holds the result (`false`: nothing
    /// changed, the row has outgrown it). Not for an outgrown row.
    #[inline]
    pub(crate) fn add(&mut self, r: Record) -> bool {
        debug_assert!(self.outgrown().is_none());
        let class = r.class as u8;
        if self.count == 0 {
            *self = Packed {
                count: 1,
                class,
                ..Packed::default()
            };
        } else if self.class != class
            || self.count == u32::MAX
            || r.size
                .is_some_and(|(_, size)| self.size_count != 0 && self.size != size)
            || r.client
                .is_some_and(|c| self.has_client && self.client != c)
        {
            return false;
        } else {
            self.count += 1;
        }
        if let Some((hash, size)) = r.size {
            self.size_hash = hash;
            self.size = size;
            self.size_count += 1;
        }
        if let Some(c) = r.client {
            self.client = c;
            self.has_client = true;
        }
        true
    }

    /// The packed form of `s`, if it has one.
    pub(crate) fn of(s: &UrlSummary) -> Option<Packed> {
        if *s == UrlSummary::default() {
            return Some(Packed::default());
        }
        let count = u32::try_from(s.hits).ok()?;
        let class = s.status.iter().position(|&n| n != 0)?;
        if s.status[class] != s.hits
            || s.status[class + 1..].iter().any(|&n| n != 0)
            || s.sizes.len() > 1
            || s.clients.len() > 1
        {
            return None;
        }
        let mut p = Packed {
            count,
            class: class as u8,
            ..Packed::default()
        };
        if let Some(z) = s.sizes.first() {
            p.size_count = u32::try_from(z.count).ok().filter(|&n| n > 0)?;
            (p.size_hash, p.size) = z.rank;
        }
        if p.size != s.largest {
            return None;
        }
        if let Some(&c) = s.clients.first() {
            p.client = c;
            p.has_client = true;
        }
        Some(p)
    }

    /// The row's values as a `UrlSummary`, written into `s`. Not for an
    /// outgrown row.
    pub(crate) fn fill(&self, s: &mut UrlSummary) {
        debug_assert!(self.outgrown().is_none());
        s.hits = self.count.into();
        s.status = [0; StatusClass::COUNT];
        if self.count != 0 {
            s.status[usize::from(self.class)] = self.count.into();
        }
        s.largest = self.size;
        s.sizes.clear();
        if self.size_count != 0 {
            s.sizes.push(Ranked {
                rank: (self.size_hash, self.size),
                count: self.size_count.into(),
            });
        }
        s.clients.clear();
        if self.has_client {
            s.clients.push(self.client);
        }
    }

    /// Appends the row in the binary form, as [`UrlSummary::write_bin`]
    /// writes its `UrlSummary`. Not for an outgrown row.
    pub(crate) fn write_bin(&self, key: Key<'_>, shared: usize, out: &mut Vec<u8>) {
        debug_assert!(self.outgrown().is_none());
        write_bin::<PACKED_BIN_MAX, _, _, _>(
            key,
            shared,
            BinValues {
                hits: self.count.into(),
                status: (self.count != 0)
                    .then_some((usize::from(self.class), self.count.into()))
                    .into_iter(),
                largest: self.size,
                sizes: (self.size_count != 0)
                    .then_some(((self.size_hash, self.size), self.size_count.into()))
                    .into_iter(),
                clients: self.has_client.then_some(self.client).into_iter(),
            },
            out,
        );
    }

    /// Reads a record's body of the binary form ([`UrlSummary::write_bin`])
    /// whose values the packed form holds; `None` when it is not one (not
    /// a record, or values [`UrlSummary::read_bin`] reads).
    pub(crate) fn read_bin(body: &[u8]) -> Option<(Key<'_>, Packed)> {
        let (key, at) = read_bin_key(body)?;
        Some((key, Packed::read_values(body, at)?))
    }

    /// Reads the values of a record's body from `at`, after its key and
    /// window ([`read_bin_key_after`]), if the packed form holds them.
    pub(crate) fn read_values(body: &[u8], mut at: usize) -> Option<Packed> {
        let hits = get_varint(body, &mut at)?;
        let mut p = Packed {
            count: u32::try_from(hits).ok()?,
            ..Packed::default()
        };
        let mask = u16::from_le_bytes(body.get(at..at + 2)?.try_into().ok()?);
        at += 2;
        match mask {
            0 if hits == 0 => {}
            _ if mask.is_power_of_two() && mask >> StatusClass::COUNT == 0 => {
                if get_varint(body, &mut at)? != hits || hits == 0 {
                    return None;
                }
                p.class = mask.trailing_zeros() as u8;
            }
            _ => return None,
        }
        let largest = get_varint(body, &mut at)?;
        match *body.get(at)? {
            0 => at += 1,
            1 => {
                p.size_hash = u64::from_le_bytes(body.get(at + 1..at + 9)?.try_into().ok()?);
                at += 9;
                p.size = get_varint(body, &mut at)?;
                p.size_count = u32::try_from(get_varint(body, &mut at)?)
                    .ok()
                    .filter(|&n| n > 0)?;
            }
            _ => return None,
        }
        match *body.get(at)? {
            0 => at += 1,
            1 => {
                p.client = u64::from_le_bytes(body.get(at + 1..at + 9)?.try_into().ok()?);
                p.has_client = true;
                at += 9;
            }
            _ => return None,
        }
        let empty_but_samples = hits == 0 && p != Packed::default();
        (largest == p.size && !empty_but_samples && at == body.len()).then_some(p)
    }

    /// The row's values as a `UrlSummary`. Not for an outgrown row.
    pub(crate) fn summary(&self) -> UrlSummary {
        let mut s = UrlSummary::default();
        self.fill(&mut s);
        s
    }
}

/// A summary row's key: host, URL, window start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key<'a> {
    pub host: &'a [u8],
    pub url: &'a [u8],
    pub window: Option<i64>,
}

impl<'a> Key<'a> {
    /// Reads a row's first three columns (host, URL, window): its key, and
    /// the rest of the row after the window's tab (`None`: the row ends with
    /// the window).
    pub(crate) fn parse(line: &'a [u8]) -> Result<(Key<'a>, Option<&'a [u8]>), RowError> {
        // memchr for the tabs: the URL is most of a row's bytes, and this
        // runs for every row the miner reads (twice for one sorted file).
        let mut rest = Some(line);
        let mut next = |column: &'static str| {
            let cell = rest.ok_or(RowError::Missing(column))?;
            match memchr::memchr(b'\t', cell) {
                Some(tab) => {
                    rest = Some(&cell[tab + 1..]);
                    Ok(&cell[..tab])
                }
                None => {
                    rest = None;
                    Ok(cell)
                }
            }
        };
        let host = next("host")?;
        let url = next("url")?;
        let window = match next("window")? {
            b"-" => None,
            w => Some(ascii::parse_i64(w).ok_or(RowError::Bad("window"))?),
        };
        Ok((Key { host, url, window }, rest))
    }
}

/// Why a summary row could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowError {
    /// The row ends before this column.
    Missing(&'static str),
    /// This column's value is not what the format allows.
    Bad(&'static str),
    /// The row has more columns than the format.
    Extra,
    /// The status counts do not add up to the hits, or the sizes' counts
    /// exceed the 200 responses.
    Inconsistent,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowError::Missing(c) => write!(f, "the row ends before its '{c}' column"),
            RowError::Bad(c) => write!(f, "bad '{c}' value"),
            RowError::Extra => f.write_str("more columns than a summary row has"),
            RowError::Inconsistent => f.write_str(
                "the status counts do not add up to the hits, or the sizes' counts exceed the 200s",
            ),
        }
    }
}

impl std::error::Error for RowError {}

/// The most bytes of a binary record's values after its key
/// ([`UrlSummary::write_bin`]): the window, the hits, the status mask and
/// counts, the largest size, every kept size (hash, size, count) and
/// client hash; a varint of a `u64` takes at most 10 bytes.
const BIN_VALUES_MAX: usize =
    9 + 10 + 2 + 10 * StatusClass::COUNT + 10 + 1 + (8 + 20) * SIZES_KEPT + 1 + 8 * CLIENTS_KEPT;

/// Reads the key of a record's body of the binary form
/// ([`UrlSummary::write_bin`]) that shares none of it with the record
/// before: the key, and where its values start.
#[inline]
fn read_bin_key(body: &[u8]) -> Option<(Key<'_>, usize)> {
    let mut at = 0;
    if get_varint(body, &mut at)? != 0 {
        return None;
    }
    let host_len = usize::try_from(get_varint(body, &mut at)?).ok()?;
    let url_len = usize::try_from(get_varint(body, &mut at)?).ok()?;
    let host = body.get(at..at.checked_add(host_len)?)?;
    at += host_len;
    let url = body.get(at..at.checked_add(url_len)?)?;
    at += url_len;
    let window = read_window(body, &mut at)?;
    Some((Key { host, url, window }, at))
}

/// Reads the key of a record's body of the binary form, whose host and
/// URL are `key`'s (the record before's host and URL, one after the
/// other) up to the bytes they share: `key` becomes them. Returns the
/// host's length, the window, and where the values start
/// ([`Packed::read_values`], [`UrlSummary::read_values`]).
#[inline]
pub(crate) fn read_bin_key_after(
    body: &[u8],
    key: &mut Vec<u8>,
) -> Option<(usize, Option<i64>, usize)> {
    let mut at = 0;
    let shared = usize::try_from(get_varint(body, &mut at)?).ok()?;
    let host_len = usize::try_from(get_varint(body, &mut at)?).ok()?;
    let url_len = usize::try_from(get_varint(body, &mut at)?).ok()?;
    let rest = host_len.checked_add(url_len)?.checked_sub(shared)?;
    if shared > key.len() {
        return None;
    }
    let tail = body.get(at..at.checked_add(rest)?)?;
    at += rest;
    key.truncate(shared);
    key.extend_from_slice(tail);
    let window = read_window(body, &mut at)?;
    Some((host_len, window, at))
}

/// Reads a record's window (a tag byte, then 8 bytes) at `*at`, moving
/// `at` past it.
#[inline]
fn read_window(body: &[u8], at: &mut usize) -> Option<Option<i64>> {
    match *body.get(*at)? {
        0 => {
            *at += 1;
            Some(None)
        }
        1 => {
            let w = i64::from_le_bytes(body.get(*at + 1..*at + 9)?.try_into().ok()?);
            *at += 9;
            Some(Some(w))
        }
        _ => None,
    }
}

/// A row's values for [`write_bin`]: the status classes counted (class,
/// count; increasing classes), the kept sizes (rank, count) in the
/// sample's order and the client hashes.
struct BinValues<S, Z, C> {
    hits: u64,
    status: S,
    largest: u64,
    sizes: Z,
    clients: C,
}

/// Appends a record of the binary form ([`UrlSummary::write_bin`]) of the
/// row of `key` and `values` to `out`, after a record whose host and URL
/// share their first `shared` bytes with `key`'s (at most their length;
/// 0 for a record read alone); its values take at most `N` bytes
/// (the buffer made for them: [`BIN_VALUES_MAX`] for any row,
/// [`PACKED_BIN_MAX`] for a packed one, which is then not 655 bytes set to
/// zero a row).
#[inline]
fn write_bin<const N: usize, S, Z, C>(
    key: Key<'_>,
    shared: usize,
    values: BinValues<S, Z, C>,
    out: &mut Vec<u8>,
) where
    S: Iterator<Item = (usize, u64)>,
    Z: Iterator<Item = ((u64, u64), u64)>,
    C: Iterator<Item = u64>,
{
    let mut v = [0u8; N];
    let mut n = 0;
    match key.window {
        Some(w) => {
            v[0] = 1;
            v[1..9].copy_from_slice(&w.to_le_bytes());
            n = 9;
        }
        None => n += 1,
    }
    put_varint_at(values.hits, &mut v, &mut n);
    let mask_at = n;
    n += 2;
    let mut mask = 0u16;
    for (i, c) in values.status {
        mask |= 1 << i;
        put_varint_at(c, &mut v, &mut n);
    }
    v[mask_at..mask_at + 2].copy_from_slice(&mask.to_le_bytes());
    put_varint_at(values.largest, &mut v, &mut n);
    // At most SIZES_KEPT and CLIENTS_KEPT: one byte each.
    let sizes_at = n;
    n += 1;
    for ((hash, size), count) in values.sizes {
        v[sizes_at] += 1;
        v[n..n + 8].copy_from_slice(&hash.to_le_bytes());
        n += 8;
        put_varint_at(size, &mut v, &mut n);
        put_varint_at(count, &mut v, &mut n);
    }
    let clients_at = n;
    n += 1;
    for c in values.clients {
        v[clients_at] += 1;
        v[n..n + 8].copy_from_slice(&c.to_le_bytes());
        n += 8;
    }
    let mut lengths = [0u8; 34];
    let mut l = 4;
    let shared = shared.min(key.host.len() + key.url.len());
    put_varint_at(shared as u64, &mut lengths, &mut l);
    put_varint_at(key.host.len() as u64, &mut lengths, &mut l);
    put_varint_at(key.url.len() as u64, &mut lengths, &mut l);
    // The bytes after the shared ones: of the host (if any), then the URL.
    let host_tail = key.host.get(shared..).unwrap_or_default();
    let url_tail = &key.url[shared.saturating_sub(key.host.len())..];
    let body = (l - 4) + host_tail.len() + url_tail.len() + n;
    lengths[..4].copy_from_slice(&(body as u32).to_le_bytes());
    out.reserve(4 + body);
    out.extend_from_slice(&lengths[..l]);
    out.extend_from_slice(host_tail);
    out.extend_from_slice(url_tail);
    out.extend_from_slice(&v[..n]);
}

/// The most bytes of a packed row's values in the binary form: as
/// [`BIN_VALUES_MAX`], with one status class, one size and one client.
const PACKED_BIN_MAX: usize = 9 + 10 + 2 + 10 + 10 + 1 + (8 + 20) + 1 + 8;

/// Writes `n` as an LEB128 varint (seven bits a byte, low first) at
/// `buf[*at..]`, moving `at` past it.
#[inline]
fn put_varint_at(mut n: u64, buf: &mut [u8], at: &mut usize) {
    while n >= 0x80 {
        buf[*at] = n as u8 | 0x80;
        *at += 1;
        n >>= 7;
    }
    buf[*at] = n as u8;
    *at += 1;
}

/// Reads an LEB128 varint at `*at`, moving `at` past it.
#[inline]
fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(n);
        }
    }
    None
}

/// Appends a count: most of a row's are 0 or one digit, written without
/// `itoa`'s general path.
#[inline]
fn push_count(n: u64, num: &mut itoa::Buffer, out: &mut Vec<u8>) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else {
        out.extend_from_slice(num.format(n).as_bytes());
    }
}

/// A client hash as sixteen lower-case hex digits, most significant first.
#[inline]
fn hex16(c: u64) -> [u8; 16] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 16];
    for (i, pair) in hex.chunks_exact_mut(2).enumerate() {
        let byte = (c >> (56 - 8 * i)) as u8;
        pair[0] = DIGITS[(byte >> 4) as usize];
        pair[1] = DIGITS[(byte & 0xf) as usize];
    }
    hex
}

fn parse_num(digits: &[u8], column: &'static str) -> Result<u64, RowError> {
    ascii::parse_u64(digits).ok_or(RowError::Bad(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_hashed_as_xxh64_hashes_its_bytes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = vec![0, 1, 200, 4_096, u64::MAX, u64::MAX - 1, 1 << 63];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x);
            values.push(x >> (x % 64));
        }
        for v in values {
            for seed in [SIZE_SEED, CLIENT_SEED, 0, u64::MAX, v] {
                assert_eq!(
                    xxh64_of_u64(v, seed),
                    xxh64(&v.to_le_bytes(), seed),
                    "{v} {seed}"
                );
            }
        }
    }

    #[test]
    fn two_seeds_hash_as_xxh64_hashes_with_each() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for len in 0..70 {
            for _ in 0..200 {
                let input: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                let (a, b) = (rng.next(), rng.next());
                for (a, b) in [(a, b), (CLIENT_SEED, 0xf0_11_0e), (0, u64::MAX)] {
                    let want = (xxh64(&input, a), xxh64(&input, b));
                    assert_eq!(xxh64_two(&input, a, b), want, "{input:?} {a} {b}");
                }
            }
        }
    }

    /// A small deterministic generator (xorshift), so the tests need no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    type Record = (Option<u16>, Option<u64>, Vec<u8>);

    fn records(rng: &mut Rng, n: usize, sizes: u64, clients: u64) -> Vec<Record> {
        const STATUSES: [u16; 9] = [200, 200, 200, 304, 301, 404, 503, 418, 200];
        (0..n)
            .map(|_| {
                let status = (rng.below(20) != 0).then(|| STATUSES[rng.below(9) as usize]);
                let bytes = (rng.below(10) != 0).then(|| 1000 + rng.below(sizes));
                let client = format!("10.0.{}.{}", rng.below(clients), rng.below(3)).into_bytes();
                (status, bytes, client)
            })
            .collect()
    }

    fn summarize(recs: &[Record]) -> UrlSummary {
        let mut s = UrlSummary::default();
        for (status, bytes, client) in recs {
            s.add(*status, *bytes, Some(client));
        }
        s
    }

    #[test]
    fn merging_the_parts_gives_the_summary_of_the_whole() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..200 {
            // Few sizes (all kept) in some rounds, many (sampled) in others.
            let sizes = [1, 3, 15, 16, 17, 40, 500][round % 7];
            let n = 1 + rng.below(300) as usize;
            let clients = 1 + rng.below(30);
            let recs = records(&mut rng, n, sizes, clients);
            let whole = summarize(&recs);
            // Cut into up to 5 parts at random places, merged in a random order.
            let mut cuts: Vec<usize> = (0..rng.below(5))
                .map(|_| rng.below(n as u64 + 1) as usize)
                .collect();
            cuts.push(0);
            cuts.push(n);
            cuts.sort_unstable();
            let mut parts: Vec<UrlSummary> = cuts
                .windows(2)
                .map(|w| summarize(&recs[w[0]..w[1]]))
                .collect();
            let mut merged = UrlSummary::default();
            while !parts.is_empty() {
                let i = rng.below(parts.len() as u64) as usize;
                merged.merge(&parts.swap_remove(i));
            }
            assert_eq!(merged, whole, "round {round}");
        }
    }

    #[test]
    fn packed_rows_hold_what_summaries_hold() {
        let mut rng = Rng(0x51ed_2701);
        let mut scratch = summarize(&records(&mut rng, 50, 40, 30));
        let mut big = scratch.clone();
        let (mut packed, mut outgrown) = (0, 0);
        for round in 0..3_000u64 {
            // One status, size and client in some rounds (rows that stay
            // packed however many records they count), a few in others.
            let few = |rng: &mut Rng, n: u64| if round % 4 == 0 { 0 } else { rng.below(n) };
            let n = 1 + rng.below(8);
            let (mut whole, mut p, mut out) = (UrlSummary::default(), Packed::default(), None);
            for _ in 0..n {
                let status = [Some(200), Some(404), None, Some(200)][few(&mut rng, 4) as usize];
                let bytes = [Some(512), Some(0), None, Some(700)][few(&mut rng, 4) as usize];
                let client = [&b"10.0.0.1"[..], b"-", b"10.0.0.2", b""][few(&mut rng, 4) as usize];
                let r = super::Record::of(status, bytes, Some(client));
                whole.add_record(r);
                match &mut out {
                    Some(s) => UrlSummary::add_record(s, r),
                    None if p.add(r) => {}
                    None => {
                        let mut s = p.summary();
                        s.add_record(r);
                        out = Some(s);
                    }
                }
            }
            match out {
                // Outgrown: the summary is not one the packed form holds.
                Some(s) => {
                    outgrown += 1;
                    assert_eq!(s, whole, "round {round}");
                    assert_eq!(Packed::of(&whole), None, "round {round}");
                    let mut a = Vec::new();
                    let key = Key {
                        host: b"",
                        url: b"/",
                        window: Some(0),
                    };
                    whole.write_bin(key, 0, &mut a);
                    assert_eq!(Packed::read_bin(&a[4..]), None, "round {round}");
                }
                None => {
                    packed += 1;
                    assert_eq!(p.summary(), whole, "round {round}");
                    assert_eq!(Packed::of(&whole), Some(p), "round {round}");
                    // Written over a summary of many values.
                    p.fill(&mut scratch);
                    assert_eq!(scratch, whole, "round {round}");
                    // And in the binary form.
                    let key = Key {
                        host: b"h.example",
                        url: b"https://h.example/a",
                        window: [None, Some(3_600)][round as usize % 2],
                    };
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    p.write_bin(key, 0, &mut a);
                    whole.write_bin(key, 0, &mut b);
                    assert_eq!(a, b, "round {round}");
                    assert_eq!(Packed::read_bin(&a[4..]), Some((key, p)), "round {round}");
                    // Merged into a summary of many values as its summary is.
                    let mut merged = big.clone();
                    merged.merge_packed(&p);
                    big.merge(&whole);
                    assert_eq!(merged, big, "round {round}");
                }
            }
        }
        assert!(packed > 1_000 && outgrown > 1_000, "{packed} {outgrown}");
        // Counts past 32 bits, and values no record makes, are not packed.
        let mut s = UrlSummary::default();
        s.add(Some(200), Some(5), None);
        assert!(Packed::of(&s).is_some());
        for change in 0..4 {
            let mut t = s.clone();
            match change {
                0 => (t.hits, t.status[0]) = (1 << 32, 1 << 32),
                1 => t.largest = 6,
                2 => t.status[3] = 1,
                _ => t.sizes[0].count = 0,
            }
            assert_eq!(Packed::of(&t), None, "change {change}");
        }
        assert_eq!(Packed::of(&UrlSummary::default()), Some(Packed::default()));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let key = Key {
            host: b"",
            url: b"/",
            window: None,
        };
        Packed::default().write_bin(key, 0, &mut a);
        UrlSummary::default().write_bin(key, 0, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn kept_sizes_have_their_exact_counts() {
        let mut rng = Rng(42);
        let recs = records(&mut rng, 5_000, 200, 50);
        let s = summarize(&recs);
        assert_eq!(s.sizes.len(), SIZES_KEPT);
        for kept in s.sizes() {
            let exact = recs
                .iter()
                .filter(|(st, b, _)| *st == Some(200) && *b == Some(kept.size))
                .count() as u64;
            assert_eq!(kept.count, exact, "size {}", kept.size);
        }
        // The kept ones are the smallest hashes of all the 200 sizes.
        let mut all: Vec<u64> = recs
            .iter()
            .filter(|(st, _, _)| *st == Some(200))
            .filter_map(|(_, b, _)| *b)
            .collect();
        all.sort_unstable();
        all.dedup();
        all.sort_unstable_by_key(|&z| size_rank(z));
        let mut want: Vec<u64> = all[..SIZES_KEPT].to_vec();
        want.sort_unstable();
        assert_eq!(s.sizes().map(|z| z.size).collect::<Vec<_>>(), want);
        assert_eq!(s.largest, *all.iter().max().unwrap());
    }

    #[test]
    fn counts_by_status_class() {
        let mut s = UrlSummary::default();
        for st in [
            Some(200),
            Some(301),
            Some(410),
            Some(404),
            Some(502),
            Some(418),
            None,
            Some(304),
        ] {
            s.add(st, Some(10), None);
        }
        assert_eq!(s.hits, 8);
        assert_eq!(s.status, [1, 1, 0, 0, 0, 0, 1, 2, 1, 1, 1]);
        // Only the 200's size is a page size.
        assert_eq!(
            s.sizes().collect::<Vec<_>>(),
            vec![SizeCount { size: 10, count: 1 }]
        );
        // An empty 200 (HEAD, `-`) is no size; `-` and empty clients are none.
        s.add(Some(200), Some(0), Some(b"-"));
        s.add(Some(200), None, Some(b""));
        assert_eq!(s.sizes().count(), 1);
        assert!(s.clients.is_empty());
    }

    #[test]
    fn rows_read_back_as_written() {
        let mut rng = Rng(7);
        let mut out = Vec::new();
        let mut want = Vec::new();
        for i in 0..100 {
            let recs = records(&mut rng, 1 + i * 3, [2, 30][i % 2], 20);
            let s = summarize(&recs);
            let host = if i % 7 == 0 { "" } else { "example.com" };
            let url = format!("https://example.com/page/{i}?a=1");
            let window = [None, Some(1_790_812_800), Some(-86_400)][i % 3];
            out.clear();
            s.write_row(host.as_bytes(), url.as_bytes(), window, &mut out);
            assert_eq!(out.last(), Some(&b'\n'));
            let (key, back) = UrlSummary::parse_row(&out[..out.len() - 1]).unwrap();
            assert_eq!(
                (key.host, key.url, key.window),
                (host.as_bytes(), url.as_bytes(), window)
            );
            assert_eq!(back, s);
            want.push(s);
        }
        assert_eq!(
            UrlSummary::header().matches('\t').count() + 1,
            3 + 1 + StatusClass::COUNT + 3
        );
    }

    #[test]
    fn rows_read_back_from_the_binary_form() {
        let mut rng = Rng(11);
        let mut out = Vec::new();
        let mut want = Vec::new();
        for i in 0..60 {
            let recs = records(&mut rng, 1 + i * 7, [2, 40][i % 2], 30);
            let mut s = summarize(&recs);
            // Counts past one varint byte, and past 32 bits.
            s.hits += [0, 300, 1 << 40][i % 3];
            s.status[9] += [0, 300, 1 << 40][i % 3];
            let host = if i % 5 == 0 {
                String::new()
            } else {
                format!("h{i}.example")
            };
            let url = format!("https://{host}/p/{i}?x=\t");
            let window = [None, Some(1_790_812_800), Some(-86_400), Some(i64::MIN)][i % 4];
            let key = Key {
                host: host.as_bytes(),
                url: url.as_bytes(),
                window,
            };
            s.write_bin(key, 0, &mut out);
            want.push((host, url, window, s));
        }
        let mut at = 0;
        for (host, url, window, s) in &want {
            let len = u32::from_le_bytes(out[at..at + 4].try_into().unwrap()) as usize;
            let body = &out[at + 4..at + 4 + len];
            let (key, back) = UrlSummary::read_bin(body).unwrap();
            assert_eq!(
                (key.host, key.url, key.window),
                (host.as_bytes(), url.as_bytes(), *window)
            );
            assert_eq!(&back, s);
            // Read packed only when the packed form holds the same values.
            if let Some((k, p)) = Packed::read_bin(body) {
                assert_eq!((k, &p.summary()), (key, s));
            }
            // A cut or padded body is not a record.
            assert!(UrlSummary::read_bin(&body[..len - 1]).is_none());
            assert!(UrlSummary::read_bin(&[body, &[0]].concat()).is_none());
            at += 4 + len;
        }
        assert_eq!(at, out.len());
    }

    /// Records written after the one before, with only the bytes of the
    /// host and URL they do not share, read back as the whole keys; a
    /// record that claims more shared bytes than the last key has is not
    /// one, and neither is one read alone.
    #[test]
    fn records_after_the_last_share_its_key_bytes() {
        let keys: [(&[u8], &[u8], Option<i64>); 6] = [
            (b"", b"/a", None),
            (b"a.example", b"https://a.example/p/1", Some(0)),
            (b"a.example", b"https://a.example/p/1", Some(86_400)),
            (b"a.example", b"https://a.example/p/12?x", None),
            (b"a.example1", b"https://a.example1/", Some(-3_600)),
            (b"b", b"", None),
        ];
        let mut s = UrlSummary::default();
        s.add(Some(200), Some(5_000), Some(b"192.0.2.1"));
        s.add(Some(404), None, None);
        let p = Packed::of(&UrlSummary::default()).unwrap();
        let (mut out, mut last, mut shareds) = (Vec::new(), Vec::<u8>::new(), Vec::new());
        for (i, &(host, url, window)) in keys.iter().enumerate() {
            let key = Key { host, url, window };
            let this = [host, url].concat();
            let shared = last.iter().zip(&this).take_while(|(a, b)| a == b).count();
            if i % 2 == 0 {
                s.write_bin(key, shared, &mut out);
            } else {
                p.write_bin(key, shared, &mut out);
            }
            last = this;
            shareds.push(shared);
        }
        assert_eq!(shareds, [0, 0, 30, 30, 9, 0]);
        let (mut at, mut key) = (0, Vec::new());
        for (i, &(host, url, window)) in keys.iter().enumerate() {
            let len = u32::from_le_bytes(out[at..at + 4].try_into().unwrap()) as usize;
            let body = &out[at + 4..at + 4 + len];
            let (host_len, w, values) = read_bin_key_after(body, &mut key).unwrap();
            assert_eq!((&key[..host_len], &key[host_len..], w), (host, url, window));
            if i % 2 == 0 {
                assert_eq!(UrlSummary::read_values(body, values), Some(s.clone()));
                assert_eq!(Packed::read_values(body, values), None);
            } else {
                assert_eq!(Packed::read_values(body, values), Some(p));
            }
            // Read alone, only the records that share nothing.
            let alone = shareds[i] == 0;
            assert_eq!(UrlSummary::read_bin(body).is_some(), alone);
            assert_eq!(read_bin_key_after(body, &mut Vec::new()).is_some(), alone);
            at += 4 + len;
        }
        assert_eq!(at, out.len());
    }

    #[test]
    fn counts_and_hashes_are_written_as_format_writes_them() {
        let mut num = itoa::Buffer::new();
        for n in [0u64, 1, 9, 10, 11, 99, 100, 1 << 40, u64::MAX] {
            let mut out = Vec::new();
            push_count(n, &mut num, &mut out);
            assert_eq!(out, n.to_string().into_bytes(), "{n}");
        }
        for c in [0u64, 1, 0xf, 0x10, 0xfedc_ba98_7654_3210, u64::MAX] {
            assert_eq!(hex16(c).to_vec(), format!("{c:016x}").into_bytes());
        }
    }

    #[test]
    fn bad_rows_are_errors_that_name_the_column() {
        let mut good = Vec::new();
        let mut s = UrlSummary::default();
        s.add(Some(200), Some(512), Some(b"1.2.3.4"));
        s.write_row(b"h", b"https://h/", Some(0), &mut good);
        good.pop();
        let good = String::from_utf8(good).unwrap();
        assert!(UrlSummary::parse_row(good.as_bytes()).is_ok());
        let cases: &[(String, RowError)] = &[
            (good.replacen("\t0\t", "\tx\t", 1), RowError::Bad("window")),
            (
                good.rsplit_once('\t').unwrap().0.to_owned(),
                RowError::Missing("clients"),
            ),
            (format!("{good}\textra"), RowError::Extra),
            (good.replace("512:1", "512:x"), RowError::Bad("sizes")),
            (good.replace("512:1", "512:2"), RowError::Inconsistent),
            (
                good.replacen("\t1\t1\t", "\t2\t1\t", 1),
                RowError::Inconsistent,
            ),
        ];
        for (row, err) in cases {
            assert_eq!(
                UrlSummary::parse_row(row.as_bytes()).unwrap_err(),
                *err,
                "{row}"
            );
        }
    }
}
