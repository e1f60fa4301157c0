//! Byte ranges of a regular file, each read on its own with positioned reads.
//!
//! The sequential [`Chunker`](super::Chunker) copies every byte out of the
//! page cache on one thread. For a regular uncompressed file, workers can
//! instead each take a range `[k * chunk, min((k + 1) * chunk, len))` and read
//! it themselves with `pread`, so the kernel's copy runs on every worker.
//!
//! Ranges are cut blindly, so lines are assigned by one rule that needs no
//! shared state: a range *owns* every line that *starts* inside it (a line
//! starts at offset 0 or right after a `\n`). A range whose start is not a
//! line start skips the partial line there (an earlier range owns it), and its
//! last line may run past its end (it reads on to that line's `\n`). Every
//! line of the file is then owned by exactly one range, whole, whatever order
//! the ranges are read in.
//!
//! Lines longer than `max_line` are cut as the chunker cuts them: the head is
//! kept, the rest is read through in bounded steps and dropped, so a huge line
//! never sits whole in memory.

use std::fs::File;
use std::io;

use memchr::{memchr, memrchr};

/// Whether [`read_owned_lines`] works on this platform: it needs positioned
/// reads, which std offers as `FileExt::read_at` on Unix. Elsewhere the caller
/// keeps the sequential chunker.
pub(crate) const SUPPORTED: bool = cfg!(unix);

/// What a range owns, as [`read_owned_lines`] put it in the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OwnedLines {
    /// File offset of the first owned line; the range's (clamped) end when
    /// it owns none. The owned lines occupy `first..first + file_bytes`.
    pub first: u64,
    /// Bytes of the file the owned lines occupy, `\n`s and the dropped tails
    /// of too-long lines included: the input bytes this range accounts for.
    /// It differs from the buffer's length when a line was too long.
    pub file_bytes: u64,
    /// The file ended before `file_len` (it was truncated while being read)
    /// and this range needed bytes past that new end. The buffer then holds
    /// the whole lines read before it; the line the file ended in is neither
    /// in the buffer nor counted. A range whose lines all ended before the
    /// new end is not affected and does not say so.
    pub truncated: bool,
}

/// How much to read at a time. A parameter so that the tests can make every
/// read tiny and so put `\n`s and line limits on read boundaries.
#[derive(Clone, Copy, Debug)]
struct Steps {
    /// Reads inside the range. Larger reads mean fewer syscalls; this bounds
    /// how much of a too-long line is held before it is cut.
    inside: usize,
    /// The first read outside the range (the last line's tail) or of the
    /// partial line at its start: access log lines are short, so a small
    /// first read rarely copies much that is thrown away.
    outside_first: usize,
    /// Outside reads double up to this, for long lines.
    outside_max: usize,
}

const STEPS: Steps = Steps {
    inside: 256 * 1024,
    outside_first: 4 * 1024,
    outside_max: 64 * 1024,
};

/// Reads the lines that the range `start..end` of `file` owns into `buf`.
///
/// `file_len` is the file's length when the ranges were cut; nothing past it
/// is read, so ranges agree on where the last line ends even while the file
/// grows. `end` is clamped to `file_len`; a range with `start >= end` owns
/// nothing.
///
/// `buf` receives the owned lines, whole, each ending in `\n` except possibly
/// the file's last line. A line longer than `max_line` bytes (without its
/// `\n`) is given as its first `max_line + 2` bytes (or fewer, when it has
/// fewer) and a `\n`, so a consumer that rejects lines over `max_line` sees
/// it as too long and can report its head, even when it strips a `\r` that
/// ended up last in the head. `\r` is otherwise an ordinary byte. `buf`'s previous contents are discarded
/// and its capacity reused (its previous length too: those bytes need not be
/// zeroed again before a read overwrites them).
///
/// Errors: I/O errors of the reads; `Unsupported` off Unix (see
/// [`SUPPORTED`]). A file that ends early is not an error: see
/// [`OwnedLines::truncated`].
pub(crate) fn read_owned_lines(
    file: &File,
    start: u64,
    end: u64,
    file_len: u64,
    max_line: usize,
    buf: &mut Vec<u8>,
) -> io::Result<OwnedLines> {
    read_owned_lines_in(file, start, end, file_len, max_line, buf, STEPS)
}

fn read_owned_lines_in(
    file: &File,
    start: u64,
    end: u64,
    file_len: u64,
    max_line: usize,
    buf: &mut Vec<u8>,
    steps: Steps,
) -> io::Result<OwnedLines> {
    if !SUPPORTED {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "reading a file by ranges needs positioned reads (Unix)",
        ));
    }
    let end = end.min(file_len);
    let mut owned = OwnedLines {
        first: end,
        file_bytes: 0,
        truncated: false,
    };
    if start >= end {
        buf.clear();
        return Ok(owned);
    }
    // `buf[..filled]` holds bytes read; `buf.len()` may be more: bytes of an
    // earlier use, overwritten by reads without being zeroed first.
    let mut filled = 0;
    // A read came back short: the file now ends there.
    let mut short = false;
    let mut outside = steps.outside_first;

    // The first owned line starts after the first `\n` at or after
    // `start - 1` (the byte at `start - 1` tells whether `start` is a line
    // start). A line starting at `end` or later belongs to a later range.
    let first = if start == 0 {
        0
    } else {
        let mut at = start - 1;
        loop {
            if at >= end {
                buf.clear();
                return Ok(owned);
            }
            if short {
                buf.clear();
                owned.truncated = true;
                return Ok(owned);
            }
            let want = step(end - at, outside);
            outside = (outside * 2).min(steps.outside_max);
            let got = read_full_at(file, buf, 0, want, at)?;
            short = got < want;
            if let Some(k) = memchr(b'\n', &buf[..got]) {
                let first = at + k as u64 + 1;
                if first >= end {
                    buf.clear();
                    return Ok(owned);
                }
                // Keep what was read after it: the start of the owned lines.
                buf.copy_within(k + 1..got, 0);
                filled = got - k - 1;
                break first;
            }
            at += got as u64;
        }
    };
    owned.first = first;

    // Kept bytes of a too-long line: two more than the limit, so that its
    // head reads as too long even to a consumer that takes a last `\r` for
    // a CRLF line end and strips it (the worker does; with one more, a head
    // cut just after a `\r` inside the line read as a whole line of
    // `max_line` bytes and was parsed).
    let limit = max_line.saturating_add(2);
    // `buf[..w]` is the output so far; `buf[i..filled]` is read but not yet
    // looked at. `w < i` only after a too-long line was cut, so the common
    // case copies nothing.
    let mut w = 0;
    let mut i = 0;
    // The line being read: its length so far in the file, and how many of
    // those bytes are in `buf[..w]`.
    let mut line_len = 0u64;
    let mut kept = 0usize;
    if end - first <= max_line as u64 {
        // No line that ends inside the range can be over the limit: read
        // the whole range at once and take every line up to its last `\n`
        // without looking for the others (the consumer splits the lines
        // anyway). Only the last line, which may run past `end`, is left to
        // the loop below.
        let want = (end - first) as usize;
        if filled < want && !short {
            let got = read_full_at(file, buf, filled, want - filled, first + filled as u64)?;
            short = got < want - filled;
            filled += got;
        }
        let body = memrchr(b'\n', &buf[..filled]).map_or(0, |k| k + 1);
        owned.file_bytes = body as u64;
        w = body;
        i = body;
        if body as u64 == end - first {
            // The range ends with a line end: its lines are all whole.
            buf.truncate(w);
            return Ok(owned);
        }
    }
    'read: loop {
        while i < filled {
            let nl = memchr(b'\n', &buf[i..filled]).map(|k| i + k);
            let seg_end = nl.unwrap_or(filled);
            let keep = (seg_end - i).min(limit - kept);
            if w != i {
                buf.copy_within(i..i + keep, w);
            }
            w += keep;
            kept += keep;
            line_len += (seg_end - i) as u64;
            let Some(nl) = nl else { break };
            // `w <= nl`: this is the line's own `\n`, or one written over
            // bytes already looked at.
            buf[w] = b'\n';
            w += 1;
            i = nl + 1;
            owned.file_bytes += line_len + 1;
            line_len = 0;
            kept = 0;
            if first + owned.file_bytes >= end {
                break 'read;
            }
        }
        // Everything read is looked at; the line being read needs more.
        let at = first + owned.file_bytes + line_len;
        if at >= file_len {
            // The file's last line, without a `\n` (or none, when the file
            // ends with one: `line_len` is then 0).
            if line_len > 0 {
                buf.truncate(w);
                if line_len > max_line as u64 {
                    buf.push(b'\n');
                    w += 1;
                }
                owned.file_bytes += line_len;
            }
            break;
        }
        if short {
            // The file ended inside this line: it is incomplete, leave it out.
            w -= kept;
            owned.truncated = true;
            break;
        }
        let want = if at < end {
            step(end - at, steps.inside)
        } else {
            let want = step(file_len - at, outside);
            outside = (outside * 2).min(steps.outside_max);
            want
        };
        let got = read_full_at(file, buf, w, want, at)?;
        short = got < want;
        i = w;
        filled = w + got;
    }
    buf.truncate(w);
    Ok(owned)
}

/// `most`, or fewer when only `left` bytes remain.
fn step(left: u64, most: usize) -> usize {
    usize::try_from(left).map_or(most, |left| left.min(most))
}

/// Reads `want` bytes at file offset `at` into `buf[from..from + want]`,
/// growing `buf` if it is shorter. Returns fewer than `want` only at the end
/// of the file.
fn read_full_at(
    file: &File,
    buf: &mut Vec<u8>,
    from: usize,
    want: usize,
    at: u64,
) -> io::Result<usize> {
    if buf.len() < from + want {
        buf.resize(from + want, 0);
    }
    let mut got = 0;
    while got < want {
        match read_at(file, &mut buf[from + got..from + want], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> io::Result<usize> {
    // Not reached: `read_owned_lines_in` checks `SUPPORTED` first.
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    /// splitmix64: deterministic, so a failure names a seed that repeats it.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Every read one to three bytes: `\n`s, range ends and line limits all
    /// fall on read boundaries somewhere.
    const TINY: Steps = Steps {
        inside: 2,
        outside_first: 1,
        outside_max: 3,
    };

    fn temp_file(data: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f
    }

    /// What the ranges must give together, by splitting the whole file.
    fn expected(data: &[u8], max_line: usize) -> (Vec<u8>, u64) {
        let mut out = Vec::new();
        let mut lines = 0;
        let mut rest = data;
        while !rest.is_empty() {
            let (line, has_end) = match rest.iter().position(|&b| b == b'\n') {
                Some(p) => (&rest[..p], true),
                None => (rest, false),
            };
            rest = &rest[(line.len() + usize::from(has_end))..];
            if line.len() > max_line {
                out.extend_from_slice(&line[..line.len().min(max_line + 2)]);
                out.push(b'\n');
            } else {
                out.extend_from_slice(line);
                if has_end {
                    out.push(b'\n');
                }
            }
            lines += 1;
        }
        (out, lines)
    }

    /// Reads every range of `chunk` bytes, in an order given by `rng`, with
    /// one buffer (so each read starts with another range's bytes in it), and
    /// checks each range on its own: its lines are counted right, it does
    /// not say truncated, and its owned bytes start where the previous
    /// range's end. Returns the buffers concatenated in range order and the
    /// totals.
    fn read_ranges(
        file: &File,
        len: u64,
        chunk: u64,
        max_line: usize,
        steps: Steps,
        rng: &mut Rng,
    ) -> (Vec<u8>, u64, u64) {
        let n = len.div_ceil(chunk).max(1);
        let mut order: Vec<u64> = (0..n).collect();
        for k in (1..order.len()).rev() {
            order.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let mut results = vec![None; n as usize];
        let mut buf = Vec::new();
        for &k in &order {
            let (start, end) = (k * chunk, ((k + 1) * chunk).min(len));
            let r = read_owned_lines_in(file, start, end, len, max_line, &mut buf, steps).unwrap();
            let r = Got::of(r, &buf);
            assert!(!r.truncated);
            if r.lines == 0 {
                assert_eq!(r.file_bytes, 0);
            } else {
                assert!(start <= r.first && r.first < end, "range {start}..{end}");
            }
            results[k as usize] = Some((r, buf.clone()));
        }
        let (mut all, mut file_bytes, mut lines) = (Vec::new(), 0, 0);
        for (r, b) in results.into_iter().flatten() {
            if r.lines > 0 {
                assert_eq!(r.first, file_bytes, "owned bytes are contiguous");
            }
            all.extend_from_slice(&b);
            file_bytes += r.file_bytes;
            lines += r.lines;
        }
        (all, file_bytes, lines)
    }

    fn check_all_ranges(
        data: &[u8],
        file: &File,
        chunks: &[u64],
        max_lines: &[usize],
        steps: Steps,
        rng: &mut Rng,
    ) {
        let len = data.len() as u64;
        for &max_line in max_lines {
            let (want, want_lines) = expected(data, max_line);
            for &chunk in chunks {
                let (got, file_bytes, lines) = read_ranges(file, len, chunk, max_line, steps, rng);
                let what = format!("len {len}, chunk {chunk}, max_line {max_line}, {steps:?}");
                assert!(got == want, "{what}: lines differ");
                assert_eq!(file_bytes, len, "{what}");
                assert_eq!(lines, want_lines, "{what}");
            }
        }
    }

    /// A random log: empty, short and long lines, `\r\n` ends, any bytes,
    /// with or without a last `\n`.
    fn random_lines(rng: &mut Rng) -> Vec<u8> {
        let mut data = Vec::new();
        for _ in 0..rng.below(14) {
            let len = match rng.below(8) {
                0 | 1 => 0,
                2..=4 => rng.below(8),
                5 | 6 => rng.below(40),
                _ => rng.below(300),
            };
            for _ in 0..len {
                let b = rng.next() as u8;
                data.push(if b == b'\n' { b'x' } else { b });
            }
            if rng.below(4) == 0 {
                data.push(b'\r');
            }
            data.push(b'\n');
        }
        if rng.below(2) == 0 {
            data.pop();
        }
        data
    }

    #[test]
    fn ranges_together_give_every_line_once() {
        let mut rng = Rng(0x5eed);
        for _ in 0..120 {
            let data = random_lines(&mut rng);
            let len = data.len() as u64;
            let mut on_disk = data.clone();
            if rng.below(2) == 0 {
                // The file grew after its length was taken: the ranges must
                // still end the last line at `len`, all alike.
                on_disk.extend_from_slice(b"more\nand more");
            }
            let file = temp_file(&on_disk);
            let chunks = [
                1,
                2,
                3,
                7,
                64,
                len.max(1),
                len + 1,
                2 * len + 5,
                1 + rng.below(len + 1),
            ];
            let max_lines = [0, 1, 2, 5, 37, 1000, usize::MAX];
            check_all_ranges(&data, &file, &chunks, &max_lines, STEPS, &mut rng);
            check_all_ranges(&data, &file, &chunks, &max_lines[..5], TINY, &mut rng);
        }
    }

    #[test]
    fn long_lines_are_read_through_in_steps() {
        let mut rng = Rng(0x10_4e);
        for _ in 0..3 {
            let mut data = Vec::new();
            for _ in 0..6 {
                // Around the read steps: 4 KiB, 64 KiB, 256 KiB.
                let len = match rng.below(4) {
                    0 => rng.below(100),
                    1 => 4000 + rng.below(200),
                    2 => 65_000 + rng.below(2000),
                    _ => 262_000 + rng.below(1000),
                };
                data.extend((0..len).map(|k| b'a' + (k % 26) as u8));
                data.push(b'\n');
            }
            if rng.below(2) == 0 {
                data.pop();
            }
            let len = data.len() as u64;
            let file = temp_file(&data);
            let chunks = [1000, 4096, 65_536, 100_003, 262_145, len];
            let max_lines = [100, 4096, 70_000, 1 << 20];
            check_all_ranges(&data, &file, &chunks, &max_lines, STEPS, &mut rng);
        }
    }

    /// What a range gave: [`OwnedLines`] and the number of lines in the
    /// buffer (each ends in `\n` but possibly the file's last).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Got {
        first: u64,
        file_bytes: u64,
        lines: u64,
        truncated: bool,
    }

    impl Got {
        fn of(r: OwnedLines, buf: &[u8]) -> Got {
            let mut lines = bytecount::count(buf, b'\n') as u64;
            if buf.last().is_some_and(|&b| b != b'\n') {
                lines += 1;
            }
            Got {
                first: r.first,
                file_bytes: r.file_bytes,
                lines,
                truncated: r.truncated,
            }
        }
    }

    /// One range's result and buffer.
    fn one(data: &[u8], start: u64, end: u64, max_line: usize) -> (Got, Vec<u8>) {
        let file = temp_file(data);
        // Stale bytes and capacity from an earlier use.
        let mut buf = vec![b'?'; 100];
        let r = read_owned_lines(&file, start, end, data.len() as u64, max_line, &mut buf).unwrap();
        assert!(buf.capacity() >= 100);
        (Got::of(r, &buf), buf)
    }

    fn owned(first: u64, file_bytes: u64, lines: u64) -> Got {
        Got {
            first,
            file_bytes,
            lines,
            truncated: false,
        }
    }

    #[test]
    fn empty_file() {
        for (start, end) in [(0, 0), (0, 1), (0, 10), (3, 10)] {
            let (r, buf) = one(b"", start, end, 10);
            assert_eq!(r, owned(0, 0, 0));
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn only_line_ends() {
        for k in 0..3 {
            assert_eq!(
                one(b"\n\n\n", k, k + 1, 10),
                (owned(k, 1, 1), b"\n".to_vec())
            );
        }
        assert_eq!(one(b"\n\n\n", 0, 2, 0), (owned(0, 2, 2), b"\n\n".to_vec()));
        assert_eq!(one(b"\n\n\n", 2, 4, 0), (owned(2, 1, 1), b"\n".to_vec()));
    }

    #[test]
    fn one_line_without_line_end() {
        assert_eq!(one(b"abc", 0, 1, 10), (owned(0, 3, 1), b"abc".to_vec()));
        assert_eq!(one(b"abc", 0, 1, 0), (owned(0, 3, 1), b"ab\n".to_vec()));
        assert_eq!(one(b"abc", 0, 1, 1), (owned(0, 3, 1), b"abc\n".to_vec()));
        assert_eq!(one(b"abc", 0, 1, 2), (owned(0, 3, 1), b"abc\n".to_vec()));
        assert_eq!(one(b"abc", 0, 1, 3), (owned(0, 3, 1), b"abc".to_vec()));
        for k in 1..3 {
            assert_eq!(one(b"abc", k, k + 1, 10), (owned(k + 1, 0, 0), Vec::new()));
        }
    }

    #[test]
    fn range_starting_right_after_a_line_end_owns_that_line() {
        assert_eq!(
            one(b"ab\ncd\nef", 3, 4, 10),
            (owned(3, 3, 1), b"cd\n".to_vec())
        );
        assert_eq!(
            one(b"ab\ncd\nef", 3, 7, 10),
            (owned(3, 5, 2), b"cd\nef".to_vec())
        );
    }

    #[test]
    fn range_starting_on_a_line_end_skips_to_the_next_line() {
        assert_eq!(
            one(b"ab\ncd\n", 2, 4, 10),
            (owned(3, 3, 1), b"cd\n".to_vec())
        );
        // The next line starts at the range's end: a later range owns it.
        assert_eq!(one(b"ab\ncd\n", 2, 3, 10), (owned(3, 0, 0), Vec::new()));
    }

    #[test]
    fn too_long_line_inside_a_range_keeps_only_its_head() {
        let data = b"a\nxxxxxxxxxx\r\nb\n";
        let (r, buf) = one(data, 0, data.len() as u64, 3);
        assert_eq!(buf, b"a\nxxxxx\nb\n");
        assert_eq!(r, owned(0, data.len() as u64, 3));
        // Cut just after a `\r` inside the line: still longer than the limit
        // once a consumer strips that `\r` as a CRLF line end.
        let data = b"a\nxxx\r\r\rxx\nb\n";
        let (r, buf) = one(data, 0, data.len() as u64, 3);
        assert_eq!(buf, b"a\nxxx\r\r\nb\n");
        let head = buf.split(|&b| b == b'\n').nth(1).unwrap();
        assert!(head.strip_suffix(b"\r").unwrap_or(head).len() > 3);
        assert_eq!(r, owned(0, data.len() as u64, 3));
    }

    #[test]
    fn a_file_that_shrank_gives_its_whole_lines_and_says_so() {
        let truncated = |first, file_bytes, lines| Got {
            truncated: true,
            ..owned(first, file_bytes, lines)
        };
        let file = temp_file(b"aaa\nbbb\nccc\nddd");
        let len = 20;
        // The file was longer when the ranges were cut.
        file.set_len(10).unwrap();
        let mut buf = Vec::new();
        for steps in [STEPS, TINY] {
            let mut read = |start, end| {
                let r = read_owned_lines_in(&file, start, end, len, 100, &mut buf, steps).unwrap();
                (Got::of(r, &buf), buf.clone())
            };
            assert_eq!(read(0, 20), (truncated(0, 8, 2), b"aaa\nbbb\n".to_vec()));
            assert_eq!(read(5, 20), (truncated(8, 0, 0), Vec::new()));
            assert_eq!(read(9, 20), (truncated(20, 0, 0), Vec::new()));
            assert_eq!(read(15, 20), (truncated(20, 0, 0), Vec::new()));
            // Its lines end before the new end: not affected.
            assert_eq!(read(0, 5), (owned(0, 8, 2), b"aaa\nbbb\n".to_vec()));
        }
    }
}
