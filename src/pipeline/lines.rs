//! The lines of a piece, their ends found sixty-four bytes at a time.
//!
//! [`Lines`] finds the line ends (`\n`) of many lines at once: a pass over
//! the piece takes a 64-byte block at a time, makes a bit mask of its line
//! ends and writes their offsets to an array, which the lines are then cut
//! from. A search from each line's start (`memchr`, or sixteen-byte steps)
//! pays its setup and its last, partly used step once per line: on the
//! generated combined log (about 220 bytes a line) a `memchr` call per line
//! cost about 95 instructions, the pass and the cutting about 66; on the
//! url-dataset lists (about 55) about 38, where sixteen-byte steps from
//! each line's start cost about 40 (callgrind, 2026-11-25).
//!
//! The blocks are compared with AVX2 (two 32-byte compares) where the CPU
//! has it, chosen once per piece, else with SSE2 (four sixteen-byte ones,
//! [`members`]). This module's `unsafe`: calls of functions compiled for
//! AVX2, made only after the CPU was found to have it, and the cutting of
//! a line at an end a pass found, without the slice's bounds tests.
#![allow(unsafe_code)]

use crate::url::simd::{members, ByteSet};

/// `\n`, the end of a line.
struct LineEnd;
impl ByteSet for LineEnd {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"\n";
}

/// Bytes a mask covers.
const BLOCK: usize = 64;

/// Line ends found per pass, at most: the pass stops when fewer than a
/// block's worth of room is left, so that a piece of empty lines needs no
/// more room than one of long lines.
const ENDS: usize = 1024;

/// A way to make the mask of a block's line ends, bit `k` for `block[k]`.
trait Mask: Copy {
    fn mask(self, block: &[u8; BLOCK]) -> u64;
}

/// Four sixteen-byte compares: SSE2 on `x86_64`, the table elsewhere.
#[derive(Clone, Copy)]
struct Narrow;

impl Mask for Narrow {
    #[inline(always)]
    fn mask(self, block: &[u8; BLOCK]) -> u64 {
        let mut mask = 0;
        for (k, chunk) in block.chunks_exact(16).enumerate() {
            let chunk: &[u8; 16] = chunk.try_into().expect("16 bytes");
            mask |= u64::from(members::<LineEnd>(chunk)) << (16 * k);
        }
        mask
    }
}

/// Two 32-byte compares. A value exists only when the CPU has AVX2: the
/// field is private and [`Avx2::detect`] is the only constructor.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when the CPU has AVX2 (std caches the answer).
    fn detect() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Mask for Avx2 {
    #[inline(always)]
    fn mask(self, block: &[u8; BLOCK]) -> u64 {
        // SAFETY: `avx2::mask` requires AVX2; `self` exists only if
        // `Avx2::detect` found it.
        unsafe { avx2::mask(block) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{fill, push, Avx2, Ends, BLOCK, ENDS};
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8, _mm_prefetch, _MM_HINT_T0,
    };

    /// How far ahead of the pass its bytes are asked for: 4 KiB and 8 KiB
    /// were alike, 1 KiB and 2 KiB gave nothing (BENCHMARKS.md, 2026-12-07).
    const PREFETCH: usize = 4096;

    /// [`fill`] compiled for AVX2, 128 bytes a step while there is room
    /// for as many line ends: in a log most steps find none, and cost one
    /// test for the four compares.
    #[target_feature(enable = "avx2")]
    pub(super) fn fill_avx2(
        buf: &[u8],
        mut block: usize,
        ends: &mut Ends,
        engine: Avx2,
    ) -> (usize, usize) {
        let mut n = 0;
        // The last block a step can start at, so that the loop's test is two
        // compares and the slice's bounds need no test of their own (with
        // `block + 2 * BLOCK <= buf.len()`, an overflow test and its branch
        // were left in each step).
        let Some(last) = buf.len().checked_sub(2 * BLOCK) else {
            return fill(buf, block, ends, n, engine);
        };
        while n <= ENDS - 2 * BLOCK && block <= last {
            // Bytes read in place from a map of the file come from memory,
            // not from the cache that `pread`'s copy left them in: asked for
            // a few pages ahead, they are there when the pass reaches them
            // (the worker of `-j 1` on a combined log 7-10 % faster, issue 30).
            // A prefetch never faults, so the address may be past the piece.
            _mm_prefetch::<_MM_HINT_T0>(buf.as_ptr().wrapping_add(block + PREFETCH).cast());
            let bytes: &[u8; 2 * BLOCK] = buf[block..][..2 * BLOCK].try_into().expect("128 bytes");
            let (a, b) = bytes.split_at(BLOCK);
            let (a0, a1) = a.split_at(32);
            let (b0, b1) = b.split_at(32);
            let a0 = line_ends(a0.try_into().expect("32 bytes"));
            let a1 = line_ends(a1.try_into().expect("32 bytes"));
            let b0 = line_ends(b0.try_into().expect("32 bytes"));
            let b1 = line_ends(b1.try_into().expect("32 bytes"));
            let any = _mm256_or_si256(_mm256_or_si256(a0, a1), _mm256_or_si256(b0, b1));
            if _mm256_movemask_epi8(any) != 0 {
                push(join(a0, a1), block, ends, &mut n);
                push(join(b0, b1), block + BLOCK, ends, &mut n);
            }
            block += 2 * BLOCK;
        }
        if block <= last {
            // Stopped for room (`n` is then at least 1): the next pass
            // goes on from `block`. Filled up by `fill`'s 64-byte steps,
            // a pass took about 64 more lines, in 0.2 steps of 18
            // instructions a line (pipeline/combined).
            return (n, block);
        }
        fill(buf, block, ends, n, engine)
    }

    /// Each of 32 bytes compared with `\n`: all ones where it is one.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn line_ends(bytes: &[u8; 32]) -> __m256i {
        // SAFETY: `bytes` is 32 readable bytes, what the load reads;
        // `loadu` asks no alignment.
        let v: __m256i = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) };
        _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8))
    }

    /// The mask of 64 bytes from the compares of their two halves.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn join(lo: __m256i, hi: __m256i) -> u64 {
        let lo = _mm256_movemask_epi8(lo) as u32;
        let hi = _mm256_movemask_epi8(hi) as u32;
        u64::from(lo) | u64::from(hi) << 32
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn mask(block: &[u8; BLOCK]) -> u64 {
        let (lo, hi) = block.split_at(32);
        join(
            line_ends(lo.try_into().expect("32 bytes")),
            line_ends(hi.try_into().expect("32 bytes")),
        )
    }
}

/// The line ends among the bytes of `buf` from `at` (fewer than
/// [`BLOCK`]): the last block of a piece, copied into a block of zeros.
#[cold]
#[inline(never)]
fn tail_mask(buf: &[u8], at: usize) -> u64 {
    let rest = &buf[at..];
    let mut block = [0u8; BLOCK];
    block[..rest.len()].copy_from_slice(rest);
    Narrow.mask(&block)
}

/// Writes the offsets of the line ends from the block at `block` on to
/// `ends[n..]`, a block at a time, until the end of `buf` or until fewer
/// than a block's worth of room is left. Returns how many `ends` holds and
/// the next block to read.
#[inline(always)]
fn fill(
    buf: &[u8],
    mut block: usize,
    ends: &mut Ends,
    mut n: usize,
    engine: impl Mask,
) -> (usize, usize) {
    while n + BLOCK <= ENDS {
        let at = block;
        let mask = match buf.get(at..at + BLOCK) {
            Some(bytes) => engine.mask(bytes.try_into().expect("64 bytes")),
            None if at < buf.len() => tail_mask(buf, at),
            None => break,
        };
        block = at + BLOCK;
        push(mask, at, ends, &mut n);
    }
    (n, block)
}

/// Writes the offset of each line end of `mask`, the mask of the block at
/// `at`, to `ends[*n..]`.
#[inline(always)]
fn push(mut mask: u64, at: usize, ends: &mut Ends, n: &mut usize) {
    while mask != 0 {
        ends[*n] = at + mask.trailing_zeros() as usize;
        *n += 1;
        mask &= mask - 1;
    }
}

/// The next pass over `buf` from `block` (see [`fill`]), with AVX2 when
/// `avx2` is there. A function of its own rather than a method, so that
/// only the array's address leaves the caller's loop: the rest of the
/// state of [`Lines`] stays in registers.
#[inline(never)]
fn pass(
    buf: &[u8],
    block: usize,
    ends: &mut [usize; ENDS],
    #[cfg(target_arch = "x86_64")] avx2: Option<Avx2>,
) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(engine) = avx2 {
        // SAFETY: `fill_avx2` requires AVX2, which `engine` proves.
        return unsafe { avx2::fill_avx2(buf, block, ends, engine) };
    }
    fill(buf, block, ends, 0, Narrow)
}

/// Room for the line ends of one pass.
pub(super) type Ends = [usize; ENDS];

/// An empty [`Ends`], for [`Lines::new`].
pub(super) const NO_ENDS: Ends = [0; ENDS];

/// The lines of a piece, without their line ends (`\n`, `\r\n`). A piece
/// ends with a line end except at the end of an input: a last line without
/// one is a line too, and a piece that ends with a line end has no empty
/// line after it.
pub(super) struct Lines<'a, 'e> {
    buf: &'a [u8],
    /// Where the next line starts.
    start: usize,
    /// The next block the pass reads.
    block: usize,
    /// Line ends found by the last pass: `ends[next..count]` are still to
    /// be handed out. The caller's array: its address is what a pass
    /// writes through, and the rest of this state stays in registers.
    ends: &'e mut Ends,
    next: usize,
    count: usize,
    /// Lines handed out before the last pass: with `next`, how many so far
    /// ([`handed`](Self::handed)), so that a loop over the lines need not
    /// count them itself (an increment, a spill and a reload a line).
    done: u64,
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
}

impl<'a, 'e> Lines<'a, 'e> {
    #[inline]
    pub(super) fn new(buf: &'a [u8], ends: &'e mut Ends) -> Lines<'a, 'e> {
        Lines {
            buf,
            start: 0,
            block: 0,
            ends,
            next: 0,
            count: 0,
            done: 0,
            #[cfg(target_arch = "x86_64")]
            avx2: Avx2::detect(),
        }
    }

    /// The SSE2 (or table) pass even where the CPU has AVX2, for tests.
    #[cfg(test)]
    fn narrow(buf: &'a [u8], ends: &'e mut Ends) -> Lines<'a, 'e> {
        Lines {
            #[cfg(target_arch = "x86_64")]
            avx2: None,
            ..Lines::new(buf, ends)
        }
    }

    /// How many lines were handed out so far.
    #[inline(always)]
    pub(super) fn handed(&self) -> u64 {
        self.done + self.next as u64
    }

    /// The next pass over the piece.
    #[inline(always)]
    fn refill(&mut self) {
        // Every end of the last pass was handed out.
        self.done += self.next as u64;
        self.next = 0;
        (self.count, self.block) = pass(
            self.buf,
            self.block,
            self.ends,
            #[cfg(target_arch = "x86_64")]
            self.avx2,
        );
    }
}

impl<'a> Iterator for Lines<'a, '_> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let len = self.buf.len();
        if self.start >= len {
            return None;
        }
        // One test a line: `next == count` (all handed out) and then
        // `next < count` were two compares of the same values.
        let end = if self.next < self.count {
            // `count <= ENDS`: the remainder is `next` itself, and tells
            // the compiler so (no bounds test).
            let end = self.ends[self.next % ENDS];
            self.next += 1;
            end
        } else {
            self.refill();
            if self.count > 0 {
                self.next = 1;
                self.ends[0]
            } else {
                // No line end left: the last line has none. Counted as
                // handed out (no pass follows: the next call ends).
                self.next = 1;
                len
            }
        };
        debug_assert!(self.start <= end && end <= len);
        // SAFETY: `start <= end <= len`. A pass writes the offset of each
        // `\n` of `buf` (below `len`: `tail_mask` sees only the bytes of
        // `buf`), in increasing order, and the next pass goes on after the
        // last block it read, so the ends handed out increase; `start` is
        // 0 or one past the last end handed out, so at most this one, or
        // `len`. Unchecked: the two bounds tests of the slice were 4
        // instructions a line of the in-line loop (pipeline/combined).
        let line = unsafe { self.buf.get_unchecked(self.start..end) };
        self.start = end + 1;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the lines must be: split at each `\n`, a `\r` before it
    /// dropped, no line after a last `\n`.
    fn oracle(buf: &[u8]) -> Vec<&[u8]> {
        let mut all: Vec<&[u8]> = buf.split(|&b| b == b'\n').collect();
        if buf.last().is_none_or(|&b| b == b'\n') {
            all.pop();
        }
        all.into_iter()
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .collect()
    }

    /// The lines of `buf`, with the SSE2 (or table) pass when `narrow`,
    /// else with the best the CPU has.
    fn split(buf: &[u8], narrow: bool) -> Vec<&[u8]> {
        let mut ends = NO_ENDS;
        if narrow {
            Lines::narrow(buf, &mut ends).collect()
        } else {
            Lines::new(buf, &mut ends).collect()
        }
    }

    /// `handed` counts the lines handed out, across passes and with a last
    /// line without a line end.
    #[test]
    fn handed_counts_the_lines() {
        let mut seed = 5u64;
        for (len, density) in [(0, 4u64), (1, 0), (300, 4), (ENDS * 9, 16), (ENDS * 9, 1)] {
            let mut buf = random_lines(len, density, &mut seed);
            for last_end in [false, true] {
                if last_end {
                    buf.push(b'\n');
                }
                let mut ends = NO_ENDS;
                let mut lines = Lines::new(&buf, &mut ends);
                assert_eq!(lines.handed(), 0);
                let mut n = 0;
                while lines.next().is_some() {
                    n += 1;
                    assert_eq!(lines.handed(), n);
                }
                assert_eq!(n as usize, oracle(&buf).len());
            }
        }
    }

    /// Lines of every length up to a few blocks, one after another: most
    /// 128-byte steps find no line end.
    #[test]
    fn long_lines() {
        let mut buf = Vec::new();
        for len in (0..1500).step_by(37) {
            buf.extend(std::iter::repeat_n(b'x', len));
            buf.push(b'\n');
        }
        for cut in [buf.len(), buf.len() - 1, buf.len() - 100] {
            let expected = oracle(&buf[..cut]);
            assert_eq!(split(&buf[..cut], false), expected);
            assert_eq!(split(&buf[..cut], true), expected);
        }
    }

    /// `len` bytes of `a`, `\r` and `\n`, about `density` in sixteen of
    /// them `\n` (a linear congruential generator from `seed`).
    fn random_lines(len: usize, density: u64, seed: &mut u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match *seed >> 60 {
                    n if n < density => b'\n',
                    15 => b'\r',
                    _ => b'a',
                }
            })
            .collect()
    }

    #[test]
    fn edge_cases() {
        let cases: [(&[u8], &[&[u8]]); 6] = [
            (b"", &[]),
            (b"\n", &[b""]),
            (b"a", &[b"a"]),
            (b"a\r\n\nb\nc", &[b"a", b"", b"b", b"c"]),
            (b"\r", &[b""]),
            (b"\n\n", &[b"", b""]),
        ];
        for (buf, expected) in cases {
            let got: Vec<&[u8]> = split(buf, false);
            assert_eq!(got, expected, "{buf:?}");
            let got: Vec<&[u8]> = split(buf, true);
            assert_eq!(got, expected, "{buf:?}");
        }
    }

    /// More line ends than one pass takes (`ENDS`), in runs and spread
    /// out, past several passes: none lost or repeated at a pass's edge.
    #[test]
    fn many_passes() {
        let mut seed = 3u64;
        for density in [16u64, 8, 1] {
            let buf = random_lines(ENDS * 40, density, &mut seed);
            let expected = oracle(&buf);
            assert_eq!(split(&buf, false), expected);
            assert_eq!(split(&buf, true), expected);
        }
    }

    #[test]
    fn lines_are_the_lines_at_every_length() {
        // Every length around the 16-, 32- and 64-byte steps, line ends at
        // every position (and runs of them, and none), with and without a
        // last line end, with both engines.
        let mut seed = 7u64;
        for len in 0..300 {
            for density in [0u64, 1, 4, 15] {
                let buf = random_lines(len, density, &mut seed);
                let expected = oracle(&buf);
                let got: Vec<&[u8]> = split(&buf, false);
                assert_eq!(got, expected, "{buf:?}");
                let got: Vec<&[u8]> = split(&buf, true);
                assert_eq!(got, expected, "{buf:?}");
            }
        }
    }
}
