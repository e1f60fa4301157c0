//! The lines of a URL list, found sixty-four bytes at a time.
//!
//! [`Lines`] keeps a bit mask of the line ends (`\n`) of one 64-byte block
//! of the piece: a line costs a `trailing_zeros` and a clear of the lowest
//! bit, a block four sixteen-byte compares ([`members`]). A search from
//! each line's start pays its setup and its last, partly used step once
//! per line, which on short lines (the url-dataset lists average about 55
//! bytes) is most of its cost. Logs, whose lines are hundreds of bytes
//! long, are split with `memchr` instead (see `worker::lines`).

use crate::url::simd::{members, ByteSet};

/// `\n`, the end of a line.
struct LineEnd;
impl ByteSet for LineEnd {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"\n";
}

/// Bytes a mask covers.
const BLOCK: usize = 64;

/// The line ends among `block`'s bytes, bit `k` for `block[k]`.
#[inline(always)]
fn block_mask(block: &[u8; BLOCK]) -> u64 {
    let mut mask = 0;
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        let chunk: &[u8; 16] = chunk.try_into().expect("16 bytes");
        mask |= u64::from(members::<LineEnd>(chunk)) << (16 * k);
    }
    mask
}

/// The line ends among the bytes of `buf` from `at` (at most [`BLOCK`]):
/// the last block of a piece, copied into a block of zeros first.
#[cold]
#[inline(never)]
fn tail_mask(buf: &[u8], at: usize) -> u64 {
    let rest = &buf[at.min(buf.len())..];
    let mut block = [0u8; BLOCK];
    let n = rest.len().min(BLOCK);
    block[..n].copy_from_slice(&rest[..n]);
    block_mask(&block)
}

/// The lines of a piece, without their line ends (`\n`, `\r\n`). A piece
/// ends with a line end except at the end of an input: a last line without
/// one is a line too, and a piece that ends with a line end has no empty
/// line after it.
pub(super) struct Lines<'a> {
    buf: &'a [u8],
    /// Where the next line starts.
    start: usize,
    /// Offset of the block `mask` covers.
    block: usize,
    /// The line ends of that block not yet handed out.
    mask: u64,
}

impl<'a> Lines<'a> {
    #[inline]
    pub(super) fn new(buf: &'a [u8]) -> Lines<'a> {
        Lines {
            buf,
            start: 0,
            block: 0,
            mask: Self::mask_at(buf, 0),
        }
    }

    /// The mask of the block at `at`.
    #[inline(always)]
    fn mask_at(buf: &[u8], at: usize) -> u64 {
        match buf.get(at..at + BLOCK) {
            Some(block) => block_mask(block.try_into().expect("64 bytes")),
            None => tail_mask(buf, at),
        }
    }

    /// The next line, with its `\r` if it has one, and the offset of its
    /// line end (`buf.len()` for a last line without one).
    #[inline(always)]
    pub(super) fn next_raw(&mut self) -> Option<(&'a [u8], usize)> {
        let len = self.buf.len();
        if self.start >= len {
            return None;
        }
        loop {
            if self.mask != 0 {
                let end = self.block + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                let line = &self.buf[self.start..end];
                self.start = end + 1;
                return Some((line, end));
            }
            self.block += BLOCK;
            if self.block >= len {
                let line = &self.buf[self.start..];
                self.start = len;
                return Some((line, len));
            }
            self.mask = Self::mask_at(self.buf, self.block);
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let (line, _) = self.next_raw()?;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }
}

#[cfg(test)]
pub(super) mod tests {
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

    /// `len` bytes of `a`, `\r` and `\n`, about `density` in sixteen of
    /// them `\n` (a linear congruential generator from `seed`).
    pub(in crate::pipeline) fn random_lines(len: usize, density: u64, seed: &mut u64) -> Vec<u8> {
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
            let got: Vec<&[u8]> = Lines::new(buf).collect();
            assert_eq!(got, expected, "{buf:?}");
        }
    }

    #[test]
    fn lines_are_the_lines_at_every_length() {
        // Every length around the 16- and 64-byte steps, line ends at every
        // position (and runs of them, and none), with and without a last
        // line end; the offsets of the line ends too.
        let mut seed = 7u64;
        for len in 0..300 {
            for density in [1u64, 4, 15] {
                let buf = random_lines(len, density, &mut seed);
                let got: Vec<&[u8]> = Lines::new(&buf).collect();
                assert_eq!(got, oracle(&buf), "{buf:?}");
                let mut lines = Lines::new(&buf);
                let mut start = 0;
                while let Some((line, end)) = lines.next_raw() {
                    assert_eq!(&buf[start..end], line);
                    assert!(end == buf.len() || buf[end] == b'\n');
                    start = end + 1;
                }
                assert!(start >= buf.len());
            }
        }
    }
}
