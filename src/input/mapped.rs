//! A byte range of a regular file mapped into memory, so that a worker
//! reads its lines in place instead of copying them out of the page cache.
//!
//! With `pread` ([`super::range`]) the kernel copies every byte of the file
//! into a worker's buffer: on a combined log read from the page cache, a
//! third of a `-j 1` run's time (issue 30). Mapped, the bytes are read
//! where the page cache holds them. Each range gets a map of its own: its
//! bytes, the byte before it (which tells whether the range starts on a
//! line start) and [`TAIL`] bytes past its end (its last line's usual
//! overhang). The reader thread makes the map with its pages populated
//! (`MAP_POPULATE`), so the page-table work runs on the reader, ahead of
//! the workers, rather than in page faults on a worker; the worker unmaps it
//! when done, so the resident memory stays at the ranges in flight, as with
//! buffers, rather than growing with the file.
//!
//! A map holds a span of [`SPAN`] bytes of ranges ([`MapSpans`]): the ranges
//! of a span share its map, which is unmapped when the last of them is
//! done. Each `munmap` of a process whose threads run on other cores makes
//! the kernel flush their TLBs (an interrupt on each; in a VM, exits too):
//! with a map per range of 1 MiB, the unmaps and their flushes were 4 to 7 %
//! of `summarize -j 2`'s CPU time (`BENCHMARKS.md`, 2026-12-07 22:20 UTC).
//!
//! A line that runs past the map (a last line longer than [`TAIL`] beyond
//! the range's end) makes [`MappedRange::owned_lines`] give `None`: the
//! worker then reads that range with `pread`, as it reads every range with
//! `--no-mmap`. Lines longer than the limit inside the range are handed
//! over whole; the worker rejects them by their length as it rejects the
//! heads that `pread` keeps of them.
//!
//! The risk of a map: a file truncated while a worker reads its map
//! (`logrotate`'s `copytruncate` of the log being read) leaves pages of the
//! map past the file's new end, and reading one raises `SIGBUS`, which
//! would kill the process. The worker looks at the file's length just
//! before it reads a map and takes `pread` when the file got shorter; a
//! truncation during the read itself (about a millisecond a range) is
//! caught by [`super::sigbus`]: the page reads as zeros and
//! [`MappedRange::faulted`] tells the worker, which reads the range again
//! with `pread` (that reports the shrink) or, where the range's rows
//! already went to a table, reports it. `--no-mmap` reads without maps.
#![allow(unsafe_code)]

use std::fs::File;
use std::sync::Arc;

use memchr::memchr;
use memmap2::{Mmap, MmapOptions};

/// Bytes mapped past a range's end, for the tail of its last line: access
/// log lines are a few hundred bytes; a longer tail is read with `pread`.
pub(crate) const TAIL: u64 = 16 * 1024;

/// Bytes of ranges one map holds ([`MapSpans`]): 8 ranges of the default
/// 1 MiB. Each map is populated whole when it is made, so its pages count in
/// the resident memory until its last range is done (`canonurl -j 1`'s peak
/// RSS 13 -> 25 MiB, page cache that the maps share, not memory taken).
pub(crate) const SPAN: u64 = 8 << 20;

/// A map and its place in the `SIGBUS` handler's table.
struct Guarded {
    /// Declared before `map` so that it is dropped (the slot freed) before
    /// the map is unmapped: a slot never names addresses that another map
    /// may reuse.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    guard: super::sigbus::Registered,
    map: Mmap,
}

/// The bytes of a regular file that one range needs, mapped: a map of its
/// own, or one shared with the other ranges of its span ([`MapSpans`]).
#[derive(Clone)]
pub(crate) struct MappedRange {
    map: Arc<Guarded>,
    /// File offset of `map[0]`.
    at: u64,
}

impl MappedRange {
    /// Maps what the range `start..end` of `file` needs (see the module's
    /// doc), of a file `file_len` bytes long when the ranges were cut.
    /// `None` when the range is empty or the map cannot be made: the worker
    /// reads the range with `pread` then. (The reader maps ranges by spans:
    /// [`MapSpans`].)
    #[cfg(test)]
    pub(crate) fn new(file: &File, start: u64, end: u64, file_len: u64) -> Option<MappedRange> {
        Self::with_tail(file, start, end, file_len, TAIL)
    }

    fn with_tail(
        file: &File,
        start: u64,
        end: u64,
        file_len: u64,
        tail: u64,
    ) -> Option<MappedRange> {
        let (at, to) = needed(start, end, file_len, tail)?;
        let len = usize::try_from(to - at).ok()?;
        // SAFETY: `Mmap::map` is unsafe because the bytes under a map can
        // change or vanish while it is read, which a `&[u8]` promises they
        // do not. What this relies on:
        // - The map is read-only and private to this range; nothing of this
        //   process writes to the file.
        // - The mapped bytes are below `file_len`, the file's length when
        //   the ranges were cut: a log grows by appends past that length,
        //   which leave them as they are. A program that rewrites bytes of
        //   the log in place would change what a line reads as (as it would
        //   between two `pread`s), not where memory is read.
        // - A file truncated below the map's end makes reading its pages
        //   past the new end raise `SIGBUS`: `owned_lines` looks at the
        //   file's length before it reads any byte of the map and gives
        //   `None` when it is shorter, and a truncation while the range is
        //   read is caught by the handler the map is registered with below
        //   (its pages past the end read as zeros; `faulted` says so) on
        //   Linux; elsewhere that truncation still ends the run.
        // The map is unmapped when the last `MappedRange` sharing it is
        // dropped; the slices `owned_lines` gives borrow one, so none
        // outlives it.
        let map = unsafe { MmapOptions::new().offset(at).len(len).populate().map(file) }.ok()?;
        // Registered before any byte is read; without a slot (or the
        // handler), no map: the range is read with `pread`.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let guard = super::sigbus::Registered::new(map.as_ptr(), map.len())?;
        Some(MappedRange {
            map: Arc::new(Guarded {
                #[cfg(any(target_os = "linux", target_os = "android"))]
                guard,
                map,
            }),
            at,
        })
    }

    /// Whether a page of the map (shared by the ranges of its span) was
    /// read past the file's end since it was made (as zeros: the file was
    /// truncated while a range was read): what was read from it may not be
    /// the file's.
    pub(crate) fn faulted(&self) -> bool {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        return self.map.guard.faulted();
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        false
    }

    /// Marks the map as read past a truncation, for tests of what the
    /// worker does then (the race itself is hard to time in a test).
    #[cfg(all(test, any(target_os = "linux", target_os = "android")))]
    pub(crate) fn set_faulted_for_test(&self) {
        self.map.guard.set_faulted_for_test();
    }

    /// The lines that the range `start..end` owns (as
    /// [`read_owned_lines`](super::range::read_owned_lines) gives them, but
    /// whole however long: see the module's doc), or `None` when the worker
    /// must read the range with `pread`: the file is now shorter than
    /// `file_len`, or the last owned line runs past the map.
    pub(crate) fn owned_lines(
        &self,
        file: &File,
        start: u64,
        end: u64,
        file_len: u64,
    ) -> Option<&[u8]> {
        // Before any byte of the map is read: see the `SAFETY` comment of
        // `with_tail`.
        if !file.metadata().is_ok_and(|m| m.len() >= file_len) {
            return None;
        }
        let data: &[u8] = &self.map.map[..];
        let end = end.min(file_len);
        if start >= end {
            return Some(&[]);
        }
        // Offsets in `data`. A range other than the one mapped (the byte
        // before it or its end not in the map) is left to `pread`.
        let s = usize::try_from(start.checked_sub(self.at)?).ok()?;
        let e = usize::try_from(end - self.at).ok()?;
        if e > data.len() || (start > 0 && s == 0) {
            return None;
        }
        // The first owned line starts after the first `\n` at or after
        // `start - 1`; one starting at `end` or later is a later range's.
        let first = if start == 0 {
            0
        } else {
            match memchr(b'\n', &data[s - 1..e]) {
                Some(k) if s + k < e => s + k,
                _ => return Some(&[]),
            }
        };
        // The last owned line ends at the first `\n` at or after `end - 1`,
        // or at the end of the file.
        let stop = match memchr(b'\n', &data[e - 1..]) {
            Some(k) => e + k,
            None if self.at + data.len() as u64 == file_len => data.len(),
            None => return None,
        };
        Some(&data[first..stop])
    }
}

/// The bytes `from..to` of a file `file_len` bytes long that the range
/// `start..end` needs mapped: the byte before it (which tells whether it
/// starts on a line start) and `tail` bytes past its end. `None` for an
/// empty range.
fn needed(start: u64, end: u64, file_len: u64, tail: u64) -> Option<(u64, u64)> {
    let end = end.min(file_len);
    if start >= end {
        return None;
    }
    Some((
        start.saturating_sub(1),
        end.saturating_add(tail).min(file_len),
    ))
}

/// Maps the byte ranges of one file (handed out in order) a span at a time:
/// a range within the current span's map shares it; the next one past it
/// gets a new map, from that range on, of [`SPAN`] bytes of ranges.
pub(crate) struct MapSpans {
    span: u64,
    tail: u64,
    current: Option<MappedRange>,
}

impl MapSpans {
    pub(crate) fn new() -> MapSpans {
        Self::with(SPAN, TAIL)
    }

    fn with(span: u64, tail: u64) -> MapSpans {
        MapSpans {
            span,
            tail,
            current: None,
        }
    }

    /// What the range `start..end` of `file` needs, mapped (within a span:
    /// the byte before it and [`TAIL`] bytes past it, as a map of its own
    /// would hold), of a file `file_len` bytes long when the ranges were
    /// cut. `None` when the range is empty or the map cannot be made: the
    /// worker reads the range with `pread` then.
    pub(crate) fn range(
        &mut self,
        file: &File,
        start: u64,
        end: u64,
        file_len: u64,
    ) -> Option<MappedRange> {
        let (from, to) = needed(start, end, file_len, self.tail)?;
        if let Some(c) = &self.current {
            if c.at <= from && to <= c.at + c.map.map.len() as u64 {
                return Some(c.clone());
            }
        }
        // Not kept past its ranges (the reader's reference would hold it).
        self.current = None;
        let span_end = start.saturating_add(self.span).max(end);
        let map = MappedRange::with_tail(file, start, span_end, file_len, self.tail)?;
        self.current = Some(map.clone());
        Some(map)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::input::range::read_owned_lines;
    use std::io::Write;

    fn temp_file(data: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f
    }

    /// Lines of 0 to 60 bytes, some `\r\n`, from a fixed seed, with or
    /// without a last `\n`.
    fn lines(seed: u64, n: usize, last_end: bool) -> Vec<u8> {
        let mut x = seed | 1;
        let mut data = Vec::new();
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 61) as usize;
            data.extend((0..len).map(|k| b'a' + ((x >> (k % 50)) % 26) as u8));
            if x.is_multiple_of(5) {
                data.push(b'\r');
            }
            data.push(b'\n');
        }
        if !last_end {
            data.pop();
        }
        data
    }

    /// Each range mapped gives what `pread` gives it, and the ranges
    /// together give the file.
    fn check(data: &[u8], chunk: u64, tail: u64) -> usize {
        check_spans(data, chunk, tail, None)
    }

    /// As [`check`], the ranges mapped a span of `span` bytes at a time
    /// when `span` is given (each range its own map otherwise).
    fn check_spans(data: &[u8], chunk: u64, tail: u64, span: Option<u64>) -> usize {
        let file = temp_file(data);
        let len = data.len() as u64;
        let (mut all, mut fallbacks, mut buf) = (Vec::new(), 0, Vec::new());
        let mut spans = span.map(|span| MapSpans::with(span, tail));
        let mut start = 0;
        while start < len {
            let end = (start + chunk).min(len);
            let map = match spans.as_mut() {
                Some(spans) => spans.range(&file, start, end, len),
                None => MappedRange::with_tail(&file, start, end, len, tail),
            };
            let map = map.unwrap();
            let read = read_owned_lines(&file, start, end, len, usize::MAX, &mut buf).unwrap();
            match map.owned_lines(&file, start, end, len) {
                Some(lines) => {
                    assert!(lines == &buf[..], "{start}..{end}, tail {tail}");
                    assert_eq!(lines.len() as u64, read.file_bytes);
                    all.extend_from_slice(lines);
                }
                None => {
                    // Only when the last line runs past the map.
                    assert!(read.first + read.file_bytes > end + tail);
                    fallbacks += 1;
                    all.extend_from_slice(&buf);
                }
            }
            start = end;
        }
        assert!(all == data, "chunk {chunk}, tail {tail}");
        fallbacks
    }

    #[test]
    fn mapped_ranges_give_what_pread_gives() {
        for (seed, n) in [(1, 0), (2, 1), (3, 7), (4, 200), (5, 3000)] {
            for last_end in [true, false] {
                let data = lines(seed, n, last_end);
                for chunk in [1, 2, 3, 17, 64, 100, 4096, data.len() as u64 + 1] {
                    // A range a byte long is a map per byte: not of the
                    // largest file.
                    if chunk < 17 && data.len() > 10_000 {
                        continue;
                    }
                    for tail in [1, 2, 30, 61, TAIL] {
                        check(&data, chunk, tail);
                    }
                }
            }
        }
    }

    #[test]
    fn ranges_mapped_by_spans_give_what_pread_gives() {
        for (seed, n) in [(1, 0), (3, 7), (4, 200), (5, 3000)] {
            for last_end in [true, false] {
                let data = lines(seed, n, last_end);
                for chunk in [17, 64, 100, 4096] {
                    for span in [1, chunk, 3 * chunk, 4 * chunk + 5, 1 << 20] {
                        for tail in [1, 30, TAIL] {
                            check_spans(&data, chunk, tail, Some(span));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_ranges_of_a_span_share_its_map() {
        let data = lines(7, 2000, true);
        let file = temp_file(&data);
        let len = data.len() as u64;
        assert!(len > 40_000, "{len}");
        // Spans of 4 ranges of 1000 bytes, tails of 30.
        let mut spans = MapSpans::with(4000, 30);
        let maps: Vec<MappedRange> = (0..9)
            .map(|k| spans.range(&file, k * 1000, (k + 1) * 1000, len).unwrap())
            .collect();
        let same = |a: usize, b: usize| Arc::ptr_eq(&maps[a].map, &maps[b].map);
        assert!(same(0, 3) && same(1, 2));
        assert!(!same(3, 4));
        assert!(same(4, 7) && !same(7, 8));
        // The first map: bytes 0..4030 (no byte before the file's start);
        // the second: the byte before 4000 to 8030.
        assert_eq!((maps[0].at, maps[0].map.map.len()), (0, 4030));
        assert_eq!((maps[4].at, maps[4].map.map.len()), (3999, 4031));
        // A map is unmapped with the last range that shares it: the spans'
        // own reference goes with the span it moves past.
        drop(spans);
        assert_eq!(Arc::strong_count(&maps[0].map), 4);
        assert_eq!(Arc::strong_count(&maps[8].map), 1);
        // A range that starts before the current span gets a map of its own
        // from there, as does a range longer than a span.
        let mut spans = MapSpans::with(4000, 30);
        let a = spans.range(&file, 5000, 6000, len).unwrap();
        let b = spans.range(&file, 4000, 5000, len).unwrap();
        assert!(!Arc::ptr_eq(&a.map, &b.map));
        let c = spans.range(&file, 10_000, 20_000, len).unwrap();
        assert_eq!((c.at, c.map.map.len()), (9999, 10_031));
        assert_eq!(
            c.owned_lines(&file, 10_000, 20_000, len),
            MappedRange::new(&file, 10_000, 20_000, len)
                .unwrap()
                .owned_lines(&file, 10_000, 20_000, len)
        );
    }

    #[test]
    fn a_line_past_the_tail_is_left_to_pread() {
        let mut data = b"a\nb\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100));
        data.extend_from_slice(b"\nc\n");
        // The range 0..5 owns the long line, which ends 101 bytes past it.
        assert_eq!(check(&data, 5, 50), 1);
        assert_eq!(check(&data, 5, 101), 0);
        // Without a last `\n`: the map reaches the file's end, so the line
        // ends there.
        data.truncate(data.len() - 3);
        assert_eq!(check(&data, 5, 200), 0);
    }

    #[test]
    fn empty_ranges_are_not_mapped() {
        let file = temp_file(b"abc\n");
        assert!(MappedRange::new(&file, 0, 0, 4).is_none());
        assert!(MappedRange::new(&file, 4, 8, 4).is_none());
        assert!(MappedRange::new(&file, 0, 8, 0).is_none());
        let empty = temp_file(b"");
        assert!(MappedRange::new(&empty, 0, 1, 0).is_none());
    }

    /// A file truncated after its range was mapped (and looked at): the
    /// pages past the new end read as zeros instead of killing the process
    /// with `SIGBUS`, and the map says it was read past the end; another
    /// map, read whole, does not.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_map_read_past_a_truncation_reads_zeros_and_says_so() {
        let page = 4096;
        let data = vec![b'a'; 5 * page];
        let file = temp_file(&data);
        let other = temp_file(&data);
        let len = data.len() as u64;
        let map = MappedRange::new(&file, 0, len, len).unwrap();
        let kept = MappedRange::new(&other, 0, len, len).unwrap();
        let lines = map.owned_lines(&file, 0, len, len).unwrap();
        assert!(!map.faulted());
        // What a `copytruncate` does while the worker reads.
        file.set_len(page as u64 + 10).unwrap();
        let read: Vec<u8> = lines.to_vec();
        assert!(read[..page + 10].iter().all(|&b| b == b'a'));
        assert!(read[2 * page..].iter().all(|&b| b == 0));
        assert!(map.faulted());
        let read: Vec<u8> = kept.owned_lines(&other, 0, len, len).unwrap().to_vec();
        assert!(read == data && !kept.faulted());
        // A later map of the same bytes starts with its flag down.
        drop(map);
        let again = MappedRange::new(&other, 0, len, len).unwrap();
        assert!(!again.faulted());
    }

    #[test]
    fn a_file_that_shrank_is_not_read_through_its_map() {
        let file = temp_file(b"aaa\nbbb\nccc\nddd\n");
        let map = MappedRange::new(&file, 4, 12, 16).unwrap();
        assert_eq!(map.owned_lines(&file, 4, 12, 16), Some(&b"bbb\nccc\n"[..]));
        // Not the range mapped: left to `pread`.
        assert_eq!(map.owned_lines(&file, 3, 12, 16), None);
        assert_eq!(map.owned_lines(&file, 4, 17, 20), None);
        // Shorter than when the ranges were cut: `None` before any byte of
        // the map is read (reading the pages past the new end would raise
        // `SIGBUS`), and the worker's `pread` reports the shrink.
        file.set_len(6).unwrap();
        assert_eq!(map.owned_lines(&file, 4, 12, 16), None);
        // Grown since: the map's bytes are as they were.
        let file = temp_file(b"aaa\nbbb\nccc\nddd\n");
        let map = MappedRange::new(&file, 4, 12, 16).unwrap();
        let mut f = &file;
        f.write_all(b"more lines\n").unwrap();
        assert_eq!(map.owned_lines(&file, 4, 12, 16), Some(&b"bbb\nccc\n"[..]));
    }
}
