//! The `www` rule's question to the Public Suffix List, answered with a
//! hash probe: is a host name (`example.co.uk`) a registrable domain or
//! below one, or is it a public suffix itself (`co.uk`)?
//!
//! A name of one label is always a suffix (the list's default rule `*`).
//! A name of two labels or more is a suffix when a rule names it exactly
//! (`co.uk`), or when a wildcard rule covers it (`*.ck` covers `foo.ck`)
//! and the list's tree has no node of that name: an exception
//! (`!www.ck`) is such a node, and so, in the `psl` crate's reading, is a
//! name that only leads to deeper rules (`*.cloud.int.apple` does not
//! cover `r.cloud.int.apple`, a step to `*.r.cloud.int.apple`; the crate
//! follows the named child and never the wildcard beside it). So only the
//! list's multi-label rules, its wildcards, its exceptions and the names
//! between them are needed, not its
//! 1,500 top-level domains: `psl_suffixes.txt` holds them (generated from
//! the `psl` crate's own copy of the list, in ASCII; see the test
//! `the_table_is_the_psl_crates_list`), and the compiler puts them in
//! one open-addressing table: a lookup is a hash of the name and, mostly,
//! one comparison. The `psl` crate answers what the table is not made for
//! (one label, an empty first label, a trailing dot), and the tests check
//! that both agree on every rule and the names around it.

/// The list's multi-label rules (`co.uk`), wildcards (`*.ck`) and
/// exceptions (`!www.ck`), one a line, in ASCII (IDNA), sorted. Generated:
/// do not edit (`CANONURL_BLESS=1 cargo test --lib psl` writes it).
const SUFFIXES: &[u8] = include_bytes!("psl_suffixes.txt");

/// What a rule says of the name it is stored under (bits of
/// [`Slot::kinds`]).
/// `co.uk`: the name is a suffix.
const EXACT: u8 = 1;
/// `*.ck`, stored under `ck`: every name one label below is a suffix.
const WILDCARD: u8 = 2;
/// `!www.ck`: the name is not a suffix (a wildcard's exception).
const EXCEPTION: u8 = 4;
/// `r.cloud.int.apple` for `*.r.cloud.int.apple`: a name of two labels or
/// more between a rule and the top-level domain. Every name in the table
/// is a node of the list's tree.
const NODE: u8 = 8;

/// One slot of the open-addressing table: a name of [`SUFFIXES`] and the
/// kinds of rule stored under it (`kawasaki.jp` is a wildcard's parent and
/// may be a rule of its own). `len == 0`: an empty slot.
#[derive(Clone, Copy)]
struct Slot {
    offset: u32,
    len: u16,
    kinds: u8,
}

const EMPTY: Slot = Slot {
    offset: 0,
    len: 0,
    kinds: 0,
};

/// How many names the table holds at most: a line's own, and one per dot
/// (its ancestors).
const fn count_names(text: &[u8]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < text.len() {
        if text[i] == b'\n' || text[i] == b'.' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Slots: a power of two, at most half of them full.
const SLOTS: usize = (count_names(SUFFIXES) * 2).next_power_of_two();
const SHIFT: u32 = 64 - SLOTS.trailing_zeros();

/// The table, built by the compiler from [`SUFFIXES`]: no work at run
/// time, and no lock to ask whether it is built yet.
static TABLE: [Slot; SLOTS] = build();

/// Bit `n` (`n` below 63): some wildcard rule (`*.ck`) is stored under a
/// name of `n` bytes; bit 63: under one of 63 bytes or more. A name of
/// another length has no [`WILDCARD`] kind, and is not looked up for it:
/// most hosts' parents are `com`, `org` or `net`, and no wildcard is
/// stored under three or four bytes.
const WILDCARD_LENGTHS: u64 = wildcard_lengths(SUFFIXES);

// `maybe_wildcard_tail` shifts `WILDCARD_LENGTHS` modulo 64: right only
// while no wildcard rule is stored under 63 bytes or more (the compiler
// checks it).
const _: () = assert!(WILDCARD_LENGTHS >> 63 == 0, "a wildcard of 63 bytes");

const fn wildcard_lengths(text: &[u8]) -> u64 {
    let mut lengths = 0u64;
    let mut line = 0;
    while line < text.len() {
        let mut end = line;
        while text[end] != b'\n' {
            end += 1;
        }
        if text[line] == b'*' {
            // `*.` and the name it is stored under (as `build` stores it).
            let len = end - (line + 2);
            lengths |= 1 << if len < 63 { len } else { 63 };
        }
        line = end + 1;
    }
    lengths
}

/// A hash of `text[at..at + len]` from its length and its first and last
/// eight bytes (four, for a shorter name): two loads and two
/// multiplications, whatever the length (a collision costs one more
/// comparison, never a wrong answer). A `const fn`, so that the table the
/// compiler builds and the lookups at run time hash alike.
#[inline]
const fn hash(text: &[u8], at: usize, len: usize) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let (a, b) = if len >= 8 {
        (read8(text, at), read8(text, at + len - 8))
    } else if len >= 4 {
        (read4(text, at), read4(text, at + len - 4))
    } else if len > 0 {
        let mid = text[at + len / 2] as u64;
        (
            text[at] as u64 | mid << 8 | (text[at + len - 1] as u64) << 16,
            0,
        )
    } else {
        (0, 0)
    };
    let h = (a ^ len as u64).wrapping_mul(K);
    (h.rotate_left(26) ^ b).wrapping_mul(K)
}

/// [`hash`] of a whole name, at run time: the same value, read with one
/// load per word instead of a byte at a time.
#[inline(always)]
fn hash_of(name: &[u8]) -> u64 {
    let len = name.len();
    let (a, b) = if len >= 8 {
        (word8(name, 0), word8(name, len - 8))
    } else if len >= 4 {
        (word4(name, 0), word4(name, len - 4))
    } else if len > 0 {
        let mid = name[len / 2] as u64;
        (name[0] as u64 | mid << 8 | (name[len - 1] as u64) << 16, 0)
    } else {
        (0, 0)
    };
    hash_words(a, b, len)
}

/// [`hash`] of a name of `len` bytes from the two words it reads.
#[inline(always)]
fn hash_words(a: u64, b: u64, len: usize) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let h = (a ^ len as u64).wrapping_mul(K);
    (h.rotate_left(26) ^ b).wrapping_mul(K)
}

/// The eight bytes at `name[at..]`, little-endian.
#[inline(always)]
fn word8(name: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(name[at..at + 8].try_into().expect("8 bytes"))
}

/// The four bytes at `name[at..]`, little-endian, in the low half.
#[inline(always)]
fn word4(name: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(name[at..at + 4].try_into().expect("4 bytes")) as u64
}

/// The first `.` of a name of `len` bytes whose first and last `width`
/// bytes are `a` and `b` (as [`hash_of`] reads them, `len` at least
/// `width`), when they tell: `Some(None)` when the name has no dot, `None`
/// when the bytes between the two words would have to be searched.
#[inline(always)]
fn dot_in_words(a: u64, b: u64, len: usize, width: usize) -> Option<Option<usize>> {
    match dot_in(a) {
        Some(k) => Some(Some(k)),
        // `b` is the last `width` bytes: those it shares with `a` hold no
        // dot, so its first one is the name's.
        None if len <= 2 * width => Some(dot_in(b).map(|k| len - width + k)),
        None => None,
    }
}

/// The index of the first `.` among the bytes of `word` (little-endian):
/// the bytes equal to `.` are the zero bytes of the word XOR `.`, and the
/// lowest one the usual bit trick finds is exact (it errs only above a
/// zero byte). A four-byte word's upper bytes, zero, are no `.`.
#[inline(always)]
fn dot_in(word: u64) -> Option<usize> {
    const DOTS: u64 = u64::from_le_bytes([b'.'; 8]);
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let x = word ^ DOTS;
    let zero = x.wrapping_sub(ONES) & !x & HIGH;
    (zero != 0).then(|| zero.trailing_zeros() as usize / 8)
}

/// The eight bytes at `text[at..]`, little-endian.
#[inline]
const fn read8(text: &[u8], at: usize) -> u64 {
    let t = text;
    u64::from_le_bytes([
        t[at],
        t[at + 1],
        t[at + 2],
        t[at + 3],
        t[at + 4],
        t[at + 5],
        t[at + 6],
        t[at + 7],
    ])
}

/// The four bytes at `text[at..]`, little-endian.
#[inline]
const fn read4(text: &[u8], at: usize) -> u64 {
    let t = text;
    u32::from_le_bytes([t[at], t[at + 1], t[at + 2], t[at + 3]]) as u64
}

/// `text[a..a + len] == text[b..b + len]`, in a `const fn`.
const fn same(text: &[u8], a: usize, b: usize, len: usize) -> bool {
    let mut i = 0;
    while i < len {
        if text[a + i] != text[b + i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Adds `kind` to the slot of `SUFFIXES[at..at + len]`.
const fn insert(slots: &mut [Slot; SLOTS], at: usize, len: usize, kind: u8) {
    let text = SUFFIXES;
    let mut i = (hash(text, at, len) >> SHIFT) as usize;
    loop {
        let slot = slots[i];
        if slot.len == 0 {
            slots[i] = Slot {
                offset: at as u32,
                len: len as u16,
                kinds: kind,
            };
            return;
        }
        if slot.len as usize == len && same(text, slot.offset as usize, at, len) {
            slots[i].kinds |= kind;
            return;
        }
        i = (i + 1) & (SLOTS - 1);
    }
}

const fn build() -> [Slot; SLOTS] {
    let text = SUFFIXES;
    let mut slots = [EMPTY; SLOTS];
    let mut line = 0;
    while line < text.len() {
        let mut end = line;
        while text[end] != b'\n' {
            end += 1;
        }
        let (kind, at) = match text[line] {
            b'*' => (WILDCARD, line + 2),
            b'!' => (EXCEPTION, line + 1),
            _ => (EXACT, line),
        };
        insert(&mut slots, at, end - at, kind | NODE);
        // Its ancestors of two labels or more are nodes.
        let mut dot = at;
        while dot < end {
            if text[dot] == b'.' {
                let mut k = dot + 1;
                while k < end && text[k] != b'.' {
                    k += 1;
                }
                if k < end {
                    insert(&mut slots, dot + 1, end - dot - 1, NODE);
                }
            }
            dot += 1;
        }
        line = end + 1;
    }
    slots
}

/// A bit per value of a name's hash's top [`NAMED_BITS`] bits: set for
/// the hashes of the names [`TABLE`] holds. A clear bit says a name is not
/// in the table with one load, where its first slot ([`slot_of`]) is taken
/// for about one name in five (kasztp's `www` hosts: 5,727 of 30,562; with
/// this filter, 276 pass). 32 KiB.
const NAMED_BITS: u32 = 18;
static NAMED: [u64; 1 << (NAMED_BITS - 6)] = filter(&TABLE, false);

/// A filter's bits over the names of `table`: with `parents`, those a
/// wildcard rule is stored under, at [`parent_key`]; else all of them, at
/// their [`hash`]'s top [`NAMED_BITS`] bits.
const fn filter<const WORDS: usize>(table: &[Slot; SLOTS], parents: bool) -> [u64; WORDS] {
    let mut bits = [0u64; WORDS];
    let mut i = 0;
    while i < SLOTS {
        let s = table[i];
        let (at, len) = (s.offset as usize, s.len as usize);
        let h = if len == 0 || (parents && s.kinds & WILDCARD == 0) {
            None
        } else if parents {
            // The name's last eight bytes (or fewer), the last one highest.
            let k = if len < 8 { len } else { 8 };
            let mut tail = 0u64;
            let mut j = 0;
            while j < k {
                tail |= (SUFFIXES[at + len - k + j] as u64) << (8 * j);
                j += 1;
            }
            Some(parent_key(tail, len))
        } else {
            Some(hash(SUFFIXES, at, len) >> (64 - NAMED_BITS))
        };
        if let Some(h) = h {
            bits[(h >> 6) as usize] |= 1 << (h & 63);
        }
        i += 1;
    }
    bits
}

/// Whether [`NAMED`] has the bit of the hash `h`: `false` when no name of
/// the table hashes to `h`.
#[inline(always)]
fn maybe_named(h: u64) -> bool {
    let k = h >> (64 - NAMED_BITS);
    NAMED[(k >> 6) as usize] >> (k & 63) & 1 != 0
}

/// A bit per value of [`parent_key`]'s: set for the names a wildcard rule
/// is stored under (`ck` for `*.ck`; 312 of them). Where a name's parent
/// has the length of one of them ([`WILDCARD_LENGTHS`]: every two-letter
/// country code has `ck`'s), this tells most parents apart from its last
/// eight bytes, already loaded, without hashing the parent.
const PARENT_BITS: u32 = 12;
static WILDCARD_PARENTS: [u64; 1 << (PARENT_BITS - 6)] = filter(&TABLE, true);

/// The filter index of a parent name of `len` bytes whose last
/// `min(len, 8)` bytes are `tail`'s low bytes (the last one highest).
#[inline(always)]
const fn parent_key(tail: u64, len: usize) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    (tail ^ (len as u64) << 56).wrapping_mul(K) >> (64 - PARENT_BITS)
}

/// Whether the last `parent` bytes of `name` (a name of two labels or
/// more, its parent after its first `.`) may name a wildcard rule:
/// `false` only when none does.
#[inline(always)]
fn maybe_wildcard_parent(name: &[u8], parent: usize) -> bool {
    if WILDCARD_LENGTHS >> parent.min(63) & 1 == 0 {
        return false;
    }
    let len = name.len();
    // The parent's last `min(parent, 8)` bytes, the last one highest.
    let tail = if len >= 8 {
        let last8 = u64::from_le_bytes(name[len - 8..].try_into().expect("8 bytes"));
        if parent >= 8 {
            last8
        } else {
            last8 >> (8 * (8 - parent))
        }
    } else if len >= 4 {
        // A short name (`abc.de`; its parent is at most `len - 2` bytes
        // long): from its last four bytes, and the one before them for a
        // parent of five. No loop, no copy: either made every call save
        // and restore registers (a `memcpy` call, or the loop's).
        let last4 = u64::from(u32::from_le_bytes(
            name[len - 4..].try_into().expect("4 bytes"),
        ));
        if parent <= 4 {
            last4 >> (8 * (4 - parent))
        } else {
            u64::from(name[len - 5]) | last4 << 8
        }
    } else {
        // `a.b`: a parent of one byte.
        u64::from(name[len - 1])
    };
    let h = parent_key(tail, parent);
    WILDCARD_PARENTS[(h >> 6) as usize] >> (h & 63) & 1 != 0
}

/// The kinds of rule stored under `name` (bits [`EXACT`], [`WILDCARD`],
/// [`EXCEPTION`], [`NODE`]); 0 for a name not in the table.
#[inline(always)]
fn kinds(name: &[u8]) -> u8 {
    kinds_from(name, slot_of(name))
}

/// The slot where the search for `name` starts.
#[inline(always)]
fn slot_of(name: &[u8]) -> usize {
    (hash_of(name) >> SHIFT) as usize
}

/// [`kinds`], searching from the slot `i` ([`slot_of`] `name`).
#[inline(always)]
fn kinds_from(name: &[u8], mut i: usize) -> u8 {
    loop {
        let slot = TABLE[i];
        if slot.len == 0 {
            return 0;
        }
        let at = slot.offset as usize;
        if slot.len as usize == name.len() && &SUFFIXES[at..at + name.len()] == name {
            return slot.kinds;
        }
        i = (i + 1) & (SLOTS - 1);
    }
}

/// Whether `name` (a lower-case host, without `www.`) has a registrable
/// domain: what `psl::domain(name).is_some()` says (the `psl` crate strips
/// one trailing dot itself). [`surely_has_domain`], then the search.
///
/// Out of line: inlined into the `www` rule, the fused rules' registers
/// saved around it cost more than the call (kasztp `aggressive` 734.4 →
/// 759.6 a URL, `benches/guard.sh`).
#[inline(never)]
pub(crate) fn has_domain(name: &[u8]) -> bool {
    surely_has_domain(name) || has_domain_searched(name)
}

/// `true` when [`has_domain`] says `true` and the two words the hash reads
/// ([`hash_of`]) tell it, with no call: a name of four to sixteen bytes
/// (most hosts' names without `www.`) holds its first dot in them, and most
/// names are not in the table and their parent names no wildcard rule.
/// `false`: ask [`has_domain_searched`]. (The `www` rule asks
/// [`surely_has_domain_in`], which reads the same words from the host.)
#[inline(always)]
fn surely_has_domain(name: &[u8]) -> bool {
    let len = name.len();
    let (a, b, width) = if len >= 8 {
        (word8(name, 0), word8(name, len - 8), 8)
    } else if len >= 4 {
        (word4(name, 0), word4(name, len - 4), 4)
    } else {
        return false;
    };
    let dot = match dot_in_words(a, b, len, width) {
        Some(Some(dot)) => dot,
        Some(None) => return false,
        // A first label of eight bytes or more in a name of more than
        // sixteen (`somecompany.com`, 14 % of kasztp's `www.` hosts): the
        // bytes after the first word searched here, not by a call.
        None => match first_dot_from(name, 8) {
            Some(dot) => dot,
            None => return false,
        },
    };
    // The table's case: two labels or more, the first one not empty, no
    // trailing dot (see [`has_domain_at`]).
    if dot == 0 || name[len - 1] == b'.' {
        return false;
    }
    !maybe_named(hash_words(a, b, len)) && !maybe_wildcard_parent(name, len - dot - 1)
}

/// [`surely_has_domain`] of the name `h[at..]`, in a host `h` of eight
/// bytes or more, its words read from `h` itself (the `www` rule's common
/// case, `at` 4: `www.` and a name): its last eight bytes are one load
/// whatever the name's length, and hold the trailing dot's test, the
/// hash's second word and the parent's tail at once. A first label is
/// searched in the name's first 24 bytes only; `false` past them (ask
/// [`has_domain`]). No loop and no call: the caller (`host::www_len`)
/// saves no registers.
#[inline(always)]
pub(crate) fn surely_has_domain_in(h: &[u8], at: usize) -> bool {
    let Some(&last) = h.last_chunk::<8>() else {
        return false;
    };
    let last8 = u64::from_le_bytes(last);
    let Some(len) = h.len().checked_sub(at) else {
        return false;
    };
    // A trailing dot: not the table's case (see [`has_domain_at`]).
    if last8 >> 56 == u64::from(b'.') {
        return false;
    }
    let (a, b, dot) = if len >= 8 {
        let a = word8(h, at);
        let dot = match dot_in(a) {
            Some(k) => k,
            // The last eight bytes: those they share with `a` hold no dot.
            None if len <= 16 => match dot_in(last8) {
                Some(k) => len - 8 + k,
                None => return false,
            },
            // A first label of eight bytes or more: the next eight, then
            // the last eight (to 24 bytes) or the eight after (to 32).
            None => match dot_in(word8(h, at + 8)) {
                Some(k) => 8 + k,
                None if len <= 24 => match dot_in(last8) {
                    Some(k) => len - 8 + k,
                    None => return false,
                },
                None => match dot_in(word8(h, at + 16)) {
                    Some(k) => 16 + k,
                    None => return false,
                },
            },
        };
        (a, last8, dot)
    } else if len >= 4 {
        let (a, b) = (word4(h, at), last8 >> 32);
        let dot = match dot_in(a) {
            Some(k) => k,
            None => match dot_in(b) {
                Some(k) => len - 4 + k,
                None => return false,
            },
        };
        (a, b, dot)
    } else {
        return false;
    };
    // An empty first label: not the table's case.
    if dot == 0 {
        return false;
    }
    !maybe_named(hash_words(a, b, len)) && !maybe_wildcard_tail(last8, len - dot - 1)
}

/// [`maybe_wildcard_parent`] of a parent of `parent` bytes (at least one)
/// that ends a host whose last eight bytes are `last8` (the host holds at
/// least eight): its tail is their top `min(parent, 8)` bytes.
#[inline(always)]
fn maybe_wildcard_tail(last8: u64, parent: usize) -> bool {
    // No wildcard rule is stored under 63 bytes or more (bit 63 clear,
    // asserted where it is made), so the shift may wrap (modulo 64, no
    // `min`): a longer parent at worst passes to the filter below.
    if WILDCARD_LENGTHS.wrapping_shr(parent as u32) & 1 == 0 {
        return false;
    }
    // Its top `parent` bytes, or all eight.
    let tail = last8 >> (8 * 8usize.saturating_sub(parent));
    let h = parent_key(tail, parent);
    WILDCARD_PARENTS[(h >> 6) as usize] >> (h & 63) & 1 != 0
}

/// [`has_domain`] of a name that [`surely_has_domain`] does not tell: its
/// first dot searched for.
#[inline(never)]
fn has_domain_searched(name: &[u8]) -> bool {
    match first_dot(name) {
        Some(dot) => has_domain_at(name, dot, hash_of(name)),
        None => crate_has_domain(name),
    }
}

/// [`has_domain`] of `name`, whose first `.` is at `dot` and whose hash
/// is `h`.
#[inline(always)]
fn has_domain_at(name: &[u8], dot: usize, h: u64) -> bool {
    // The table's case: two labels or more, the first one not empty, no
    // trailing dot. (An empty label further on matches no rule of the
    // table, and none of the `psl` crate's but a wildcard's, which stops
    // there: both say the name is no suffix.)
    if dot == 0 || name.last() == Some(&b'.') {
        return crate_has_domain(name);
    }
    // Most names: not in the table (they name no rule; `NAMED`'s bit is
    // clear), and their parent names no wildcard rule (so `is_suffix`
    // would not look it up, or find nothing): no suffix, told with no
    // call, so with no registers saved.
    let parent = name.len() - dot - 1;
    if !maybe_named(h) && !maybe_wildcard_parent(name, parent) {
        return true;
    }
    has_domain_from(name, dot, (h >> SHIFT) as usize)
}

/// [`has_domain`] of a name of two labels or more whose first `.` is at
/// `dot`, searched from its slot `i`, when the first slot was not enough.
#[inline(never)]
fn has_domain_from(name: &[u8], dot: usize, i: usize) -> bool {
    !is_suffix_from(name, &name[dot + 1..], i)
}

/// [`has_domain`] asked of the `psl` crate, for the names the table is not
/// made for (one label, an empty first label, a trailing dot).
#[cold]
#[inline(never)]
fn crate_has_domain(name: &[u8]) -> bool {
    psl::domain(name).is_some()
}

/// Where the first `.` of `name` is. The first label of a host is short:
/// its first eight bytes are tested at once ([`dot_in`]), which costs less
/// than `memchr`'s set-up. (`has_domain` asks it only of the names that
/// [`surely_has_domain`] does not tell.)
#[inline]
fn first_dot(name: &[u8]) -> Option<usize> {
    first_dot_from(name, 0)
}

/// [`first_dot`] of a name whose bytes before `from` hold no `.`.
#[inline(always)]
fn first_dot_from(name: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(word) = name.get(at..at + 8) {
        if let Some(k) = dot_in(u64::from_le_bytes(word.try_into().expect("8 bytes"))) {
            return Some(at + k);
        }
        at += 8;
    }
    name[at..].iter().position(|&b| b == b'.').map(|k| at + k)
}

/// Whether the name of two labels or more `name`, whose first label ends
/// before `parent`, is a public suffix (as the `psl` crate reads the list).
#[cfg(test)]
fn is_suffix(name: &[u8], parent: &[u8]) -> bool {
    is_suffix_from(name, parent, slot_of(name))
}

/// [`is_suffix`], with `name` searched from the slot `i` ([`slot_of`] it).
#[inline(always)]
fn is_suffix_from(name: &[u8], parent: &[u8], i: usize) -> bool {
    match kinds_from(name, i) {
        0 => WILDCARD_LENGTHS >> parent.len().min(63) & 1 != 0 && kinds(parent) & WILDCARD != 0,
        own => own & EXACT != 0,
    }
}

/// For tests of the `www` rule's common case: names of `a`s of every
/// length to `max`, with a `.` anywhere, and again with another three
/// bytes on, each ending in `m` or in a (trailing) `.`.
#[cfg(test)]
pub(crate) fn dotted_names(max: usize) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    for len in 1..=max {
        for at in 0..len {
            for last in [b'm', b'.'] {
                let mut n = vec![b'a'; len];
                n[len - 1] = last;
                n[at] = b'.';
                names.push(n.clone());
                if at + 3 < len {
                    n[at + 3] = b'.';
                    names.push(n);
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn psl_says(name: &[u8]) -> bool {
        psl::domain(name).is_some()
    }

    /// Every rule of the table, and the names one and two labels below it
    /// and above it, give the `psl` crate's answer.
    #[test]
    fn first_dot_is_the_first_dot() {
        let names: [&[u8]; 9] = [
            b"",
            b".",
            b"a",
            b"example.com",
            b"abcdefgh.com",
            b"abcdefghijklmnopq.r.s",
            b"a\xae.b",
            b"nodots-at-all-here",
            b"abcdefg.",
        ];
        // Every length to 24, with no dot, one dot anywhere, or two.
        let mut made: Vec<Vec<u8>> = Vec::new();
        for len in 0..=24 {
            made.push(vec![b'a'; len]);
            for at in 0..len {
                let mut n = vec![b'a'; len];
                n[at] = b'.';
                made.push(n.clone());
                n[len - 1] = b'.';
                made.push(n);
            }
        }
        for n in names.into_iter().chain(made.iter().map(Vec::as_slice)) {
            let dot = n.iter().position(|&b| b == b'.');
            assert_eq!(first_dot(n), dot, "{}", n.escape_ascii());
            if n.len() >= 8 && !n[..8].contains(&b'.') {
                assert_eq!(first_dot_from(n, 8), dot, "{}", n.escape_ascii());
            }
            // And from the hash's words (`has_domain`), when they tell.
            let len = n.len();
            let width = if len >= 8 { 8 } else { 4 };
            if len >= 4 {
                let (a, b) = if width == 8 {
                    (word8(n, 0), word8(n, len - 8))
                } else {
                    (word4(n, 0), word4(n, len - 4))
                };
                match dot_in_words(a, b, len, width) {
                    Some(found) => assert_eq!(found, dot, "{}", n.escape_ascii()),
                    None => assert!(len > 16 && dot.is_none_or(|d| d >= 8)),
                }
            }
            assert_eq!(has_domain(n), psl_says(n), "{}", n.escape_ascii());
        }
    }

    /// `surely_has_domain_in` says `true` only where `has_domain` does, on
    /// names made around every rule of the table and of every length to
    /// 40 with dots anywhere, each after `www.` (the `www` rule's case) and
    /// after `w`, and it tells the common names.
    #[test]
    fn surely_has_domain_in_agrees_with_has_domain() {
        let mut names: Vec<Vec<u8>> = Vec::new();
        for line in std::str::from_utf8(SUFFIXES).unwrap().lines() {
            let name = line.trim_start_matches("*.").trim_start_matches('!');
            for n in [
                name.to_string(),
                format!("x.{name}"),
                format!("abcdefghij.{name}"),
                format!("abcdefghijklmnopqrs.{name}"),
                format!("{name}."),
            ] {
                names.push(n.into_bytes());
            }
            if let Some((_, parent)) = name.split_once('.') {
                names.push(format!("abcdefgh.{parent}").into_bytes());
            }
        }
        names.extend(dotted_names(40));
        let (mut told, mut checked) = (0, 0);
        for n in &names {
            let want = has_domain(n);
            for prefix in [&b"www."[..], b"w"] {
                let h = [prefix, n].concat();
                let got = surely_has_domain_in(&h, prefix.len());
                assert!(!got || want, "{}", h.escape_ascii());
                told += usize::from(got);
                checked += 1;
            }
        }
        assert!(
            checked > 40_000 && told > checked / 4,
            "{told} of {checked}"
        );
        for n in [
            "example.com",
            "spiegel.de",
            "abc.net",
            "a.com",
            "somecompany.com",
            "averyveryverylonglabel.com",
            "aaaaaaaaaaaaaaaaaaaaaaa.com",
            "abcdefghijklmnopqrstuvw.org.uk",
        ] {
            let h = format!("www.{n}");
            assert!(surely_has_domain_in(h.as_bytes(), 4), "{h}");
        }
        // Not told: past the table's case, or a first label past 24 bytes.
        for n in [
            "a.b",
            "com",
            ".example.com",
            "example.com.",
            "co.uk",
            "blogspot.com",
        ] {
            let h = format!("www.{n}");
            assert!(!surely_has_domain_in(h.as_bytes(), 4), "{h}");
        }
        let long = format!("www.{}.com", "a".repeat(24));
        assert!(!surely_has_domain_in(long.as_bytes(), 4), "{long}");
    }

    /// The filters say "maybe" for every name of the table, and for every
    /// wildcard's name as the parent of a name of any length.
    #[test]
    fn the_filters_pass_every_name_they_stand_for() {
        let (mut names, mut parents) = (0, 0);
        for s in TABLE.iter().filter(|s| s.len > 0) {
            let name = &SUFFIXES[s.offset as usize..][..s.len as usize];
            assert!(maybe_named(hash_of(name)), "{}", name.escape_ascii());
            names += 1;
            if s.kinds & WILDCARD != 0 {
                for first in ["x", "abc", "abcdefghijk"] {
                    let child = [first.as_bytes(), b".", name].concat();
                    assert!(
                        maybe_wildcard_parent(&child, name.len()),
                        "{}",
                        child.escape_ascii()
                    );
                }
                parents += 1;
            }
        }
        assert!(names > 9000 && parents > 300, "{names} {parents}");
        // And they filter: most hosts' names pass neither.
        let passed = [
            &b"example.com"[..],
            b"bbc.co.uk",
            b"spiegel.de",
            b"abcdefghij.org",
        ]
        .iter()
        .filter(|n| {
            let dot = n.iter().position(|&b| b == b'.').unwrap();
            maybe_named(hash_of(n)) || maybe_wildcard_parent(n, n.len() - dot - 1)
        })
        .count();
        assert!(passed <= 1, "{passed}");
    }

    #[test]
    fn agrees_with_the_psl_crate_on_every_rule() {
        let (mut checked, mut wrong) = (0, Vec::new());
        for line in std::str::from_utf8(SUFFIXES).unwrap().lines() {
            let name = line.trim_start_matches("*.").trim_start_matches('!');
            let mut names = vec![
                name.to_string(),
                format!("x.{name}"),
                format!("www.{name}"),
                format!("a.b.{name}"),
                format!("{name}."),
                format!("x.{name}."),
                format!("x..{name}"),
            ];
            if let Some((_, parent)) = name.split_once('.') {
                names.push(parent.to_string());
                names.push(format!("x.{parent}"));
            }
            for n in names {
                if has_domain(n.as_bytes()) != psl_says(n.as_bytes()) {
                    wrong.push(n);
                }
                checked += 1;
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {checked} differ: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(20)]
        );
        assert!(checked > 40_000, "{checked}");
    }

    /// The lengths that skip the wildcard lookup: never a wildcard's
    /// (every wildcard rule's name below it is a suffix in
    /// `agrees_with_the_psl_crate_on_every_rule`), and those of `com`,
    /// `org` and `net`, for which the filter is there.
    #[test]
    fn wildcard_lengths_hold_every_wildcard() {
        let text = std::str::from_utf8(SUFFIXES).unwrap();
        let mut wildcards = 0;
        for name in text.lines().filter_map(|l| l.strip_prefix("*.")) {
            assert_ne!(WILDCARD_LENGTHS >> name.len().min(63) & 1, 0, "{name}");
            assert!(is_suffix(format!("x.{name}").as_bytes(), name.as_bytes()));
            wildcards += 1;
        }
        assert!(wildcards > 100, "{wildcards}");
        assert_eq!(WILDCARD_LENGTHS >> 3 & 1, 0);
    }

    /// The run-time hash is the compiler's.
    #[test]
    fn both_hashes_agree() {
        let text = b"a.ab.abc.abcd.abcdefg.abcdefgh.abcdefghi.abcdefghijklmnopq";
        for at in 0..text.len() {
            for len in 0..=text.len() - at {
                assert_eq!(hash(text, at, len), hash_of(&text[at..at + len]));
            }
        }
    }

    #[test]
    fn agrees_with_the_psl_crate_on_odd_names() {
        for n in [
            "",
            ".",
            "..",
            "com",
            "localhost",
            "example.com",
            "co.uk",
            "example.co.uk",
            "www.ck",
            "foo.ck",
            "a.foo.ck",
            "city.kawasaki.jp",
            "x.kawasaki.jp",
            "kawasaki.jp",
            ".com",
            "a..com",
            "x..ck",
            "a.b..ck",
            "www..ck",
            ".ck",
            "ck.",
            "example.com.",
            "example.com..",
            "a.b",
            "blogspot.com",
            "x.blogspot.com",
            "github.io",
            "x.github.io",
            "xn--55qx5d.cn",
            "x.xn--55qx5d.cn",
            "1.2.3.4",
            "example.unknowntld",
            "unknowntld",
            "a-b.c_d.e",
        ] {
            assert_eq!(has_domain(n.as_bytes()), psl_says(n.as_bytes()), "{n:?}");
        }
    }

    /// Every host of the shared URL lists, and every name after each of
    /// its dots, gives the `psl` crate's answer.
    #[test]
    fn agrees_with_the_psl_crate_on_the_shared_hosts() {
        let dir = std::env::var("CANONURL_SHARED_DATA")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data").into());
        let Ok(files) = std::fs::read_dir(format!("{dir}/url-dataset")) else {
            eprintln!("skipped: no {dir}/url-dataset");
            return;
        };
        let (mut checked, mut wrong) = (0, Vec::new());
        for file in files {
            let bytes = std::fs::read(file.expect("a directory entry").path()).expect("read");
            for line in bytes.split(|&b| b == b'\n') {
                let Some(at) = line.windows(3).position(|w| w == b"://") else {
                    continue;
                };
                let rest = &line[at + 3..];
                let end = rest
                    .iter()
                    .position(|&b| matches!(b, b'/' | b'?' | b'#' | b':' | b'\r'))
                    .unwrap_or(rest.len());
                let host = rest[..end].to_ascii_lowercase();
                let mut name = &host[..];
                loop {
                    if has_domain(name) != psl_says(name) {
                        wrong.push(String::from_utf8_lossy(name).into_owned());
                    }
                    checked += 1;
                    match name.iter().position(|&b| b == b'.') {
                        Some(k) => name = &name[k + 1..],
                        None => break,
                    }
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {checked} differ: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(20)]
        );
    }

    /// The table is generated from the `psl` crate's copy of the list
    /// (`data/rules.txt` in its package, the version of `Cargo.lock`), its
    /// Unicode rules in ASCII as a canonical host is written. Skipped when
    /// the package's source is not where cargo keeps it.
    /// `CANONURL_BLESS=1` writes `psl_suffixes.txt`.
    #[test]
    fn the_table_is_the_psl_crates_list() {
        let Some(rules) = psl_crate_rules() else {
            eprintln!("skipped: the psl crate's data/rules.txt was not found");
            return;
        };
        let mut lines = Vec::new();
        for line in rules.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let (prefix, name) = if let Some(n) = line.strip_prefix("*.") {
                ("*.", n)
            } else if let Some(n) = line.strip_prefix('!') {
                ("!", n)
            } else {
                ("", line)
            };
            let ascii = idna::domain_to_ascii(name).expect("a list rule is a domain");
            if prefix.is_empty() && !ascii.contains('.') {
                continue; // a top-level domain: one label, always a suffix
            }
            lines.push(format!("{prefix}{ascii}"));
        }
        lines.sort();
        lines.dedup();
        let text = lines.join("\n") + "\n";
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/canon/rules/psl_suffixes.txt"
        );
        if std::env::var_os("CANONURL_BLESS").is_some() {
            std::fs::write(path, &text).expect("write psl_suffixes.txt");
            return;
        }
        assert!(
            text.as_bytes() == SUFFIXES,
            "psl_suffixes.txt is not the psl crate's list: rerun with CANONURL_BLESS=1"
        );
    }

    /// The `psl` crate's `data/rules.txt`, in cargo's registry.
    fn psl_crate_rules() -> Option<String> {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).ok()?;
        let at = lock.find("name = \"psl\"\nversion = \"")? + "name = \"psl\"\nversion = \"".len();
        let version = &lock[at..at + lock[at..].find('"')?];
        let home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo"))
            })?;
        for dir in std::fs::read_dir(home.join("registry/src")).ok()? {
            let file = dir
                .ok()?
                .path()
                .join(format!("psl-{version}/data/rules.txt"));
            if let Ok(text) = std::fs::read_to_string(file) {
                return Some(text);
            }
        }
        None
    }
}
