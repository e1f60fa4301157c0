//! Searching for the first byte of a set, sixteen bytes a step.
//!
//! Every set the parser scans for has the same shape: "control-like" bytes
//! (below some bound, DEL, and everything from 0x80 up) plus a short list of
//! ASCII punctuation. Three engines classify sixteen bytes at once ([`Chunk`]):
//!
//! - [`Sse2`], which every `x86_64` target has: one signed compare (bytes
//!   from 0x80 up are negative, so `b < bound` catches them too), one compare
//!   for DEL, and one compare per listed byte, OR-ed together; `movemask`
//!   turns the result into a bit per byte.
//! - [`Ssse3`], chosen at run time when the CPU has it: two `pshufb` table
//!   lookups, one by each nibble of the byte, whatever the set. The fast path
//!   ([`dispatch`]) runs with it; with it, `kasztp.txt` costs about 60 fewer
//!   instructions per URL than with SSE2 (`benches/instructions.sh`).
//! - [`Avx2`], chosen at run time before SSSE3 when the CPU has AVX2: the
//!   same two lookups on thirty-two bytes at once, so that a search on an
//!   input of 32 bytes or more goes 32 bytes a step (and a component that
//!   ends within the input's last 32 bytes takes one step); shorter inputs
//!   take the same lookup on sixteen bytes in the low lane.
//! - [`Table`] everywhere else: the set's 256-entry table, a byte at a time,
//!   read where the table is stored (it is not copied per byte).
//!
//! The search algorithms are written once over [`Chunk`]. Each set's table
//! and nibble tables are derived from the same definition, and tests check
//! every engine against the table for every byte value at every position.
//!
//! This module holds most of the crate's `unsafe` (`pipeline::lines` has the
//! rest, its AVX2 line-end search): calls of the SSE2 functions, whose one
//! requirement (the CPU has SSE2) the `cfg` around them proves, of the SSSE3
//! functions, which only an [`Ssse3`] or [`Avx2`] value, made after the CPU
//! was found to have SSSE3, can reach, of the AVX2 functions, which only an
//! [`Avx2`] value can reach, the AVX2 engine's unaligned load of 32 bytes
//! from a `&[u8; 32]`, and [`push_short`]'s two stores into a `Vec`'s spare
//! room.
#![allow(unsafe_code)]

/// A set of bytes to search for.
pub trait ByteSet {
    /// Every byte below `BELOW`, DEL (0x7F) and every byte from 0x80 up is in
    /// the set; 0 means none of them is.
    const BELOW: u8;
    /// The other bytes of the set (ASCII).
    const BYTES: &'static [u8];
    /// When true the set is the complement: every byte except `a-z`, `0-9`
    /// and `BYTES` (`BELOW` must then be 0). Domains are scanned this way.
    const ALL_BUT_LOWER_ALNUM: bool = false;
    /// Membership of each byte, derived from the constants above.
    const TABLE: [bool; 256] = table(Self::BELOW, Self::BYTES, Self::ALL_BUT_LOWER_ALNUM);
    /// The same as two nibble tables (see `nibbles`), for `pshufb`.
    const NIBBLES: Nibbles = nibbles(&Self::TABLE);
    /// For path runs: nibble tables of this set, `.` or `%`, and `/`, with
    /// the mask of each (see `nibble_classes`).
    const PATH_NIBBLES: (Nibbles, [u8; 3]) =
        nibble_classes([&Self::TABLE, &DOT_OR_PERCENT, &SLASH]);
}

/// Whether `b` is in `S`, read from the table where it is stored: indexing
/// the associated const directly may copy its 256 bytes at every use.
#[inline(always)]
fn in_table<S: ByteSet>(b: u8) -> bool {
    let table: &'static [bool; 256] = const { &S::TABLE };
    table[b as usize]
}

/// A set as two lookup tables of sixteen bytes: a byte `b` is in it when
/// `lo[b & 15] & hi[b >> 4] != 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nibbles {
    /// Bit `k` of `lo[l]`: the low nibble `l` is in column `k`.
    pub lo: [u8; 16],
    /// `hi[h]`: the one bit of the column that the high nibble `h` uses.
    pub hi: [u8; 16],
}

/// Splits a table into nibble tables. The bytes with high nibble `h` form a
/// column, a set of low nibbles; each distinct non-empty column gets one of
/// eight bits. Every set here has at most six (compile-time checked).
const fn nibbles(table: &[bool; 256]) -> Nibbles {
    nibble_classes([table]).0
}

/// The same for several sets at once, sharing the eight bits: byte `b` is in
/// set `c` when `lo[b & 15] & hi[b >> 4] & masks[c] != 0`. One lookup then
/// classifies a byte for all of them.
const fn nibble_classes<const N: usize>(tables: [&[bool; 256]; N]) -> (Nibbles, [u8; N]) {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    let mut masks = [0u8; N];
    let mut bits = 0;
    let mut c = 0;
    while c < N {
        let table = tables[c];
        let mut columns = [0u16; 8];
        let mut n = 0;
        let mut h = 0;
        while h < 16 {
            let mut column = 0u16;
            let mut l = 0;
            while l < 16 {
                if table[h * 16 + l] {
                    column |= 1 << l;
                }
                l += 1;
            }
            if column != 0 {
                let mut k = 0;
                while k < n && columns[k] != column {
                    k += 1;
                }
                if k == n {
                    assert!(bits < 8, "sets with more than 8 distinct nibble columns");
                    columns[n] = column;
                    n += 1;
                    bits += 1;
                    let mut l = 0;
                    while l < 16 {
                        if column & (1 << l) != 0 {
                            lo[l] |= 1 << (bits - 1);
                        }
                        l += 1;
                    }
                }
                // Bit of column k of this set: the bits before this set's,
                // plus k.
                hi[h] |= 1 << (bits - n + k);
                masks[c] |= 1 << (bits - n + k);
            }
            h += 1;
        }
        c += 1;
    }
    (Nibbles { lo, hi }, masks)
}

/// `.` or `%`: may start a dot segment (`.`, `%2e`).
const DOT_OR_PERCENT: [bool; 256] = table(0, b".%", false);
/// `/`.
const SLASH: [bool; 256] = table(0, b"/", false);

const fn table(below: u8, bytes: &[u8], all_but_lower_alnum: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = below != 0 && (i < below as usize || i >= 0x7f);
        i += 1;
    }
    let mut k = 0;
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    if all_but_lower_alnum {
        let mut i = 0;
        while i < 256 {
            let b = i as u8;
            t[i] = !(t[i] || b.is_ascii_lowercase() || b.is_ascii_digit());
            i += 1;
        }
    }
    t
}

/// One way to classify sixteen bytes at once: a bit per byte, bit `k` for
/// `chunk[k]`.
pub trait Chunk: Copy {
    /// Whether the searches go 32 bytes a step (with [`members_wide`] and
    /// [`path_bits_wide`]) on inputs of 32 bytes or more: true when one
    /// instruction classifies 32 bytes (AVX2).
    ///
    /// [`members_wide`]: Chunk::members_wide
    /// [`path_bits_wide`]: Chunk::path_bits_wide
    const WIDE: bool = false;
    /// The bytes of `chunk` in `S`.
    fn members<S: ByteSet>(self, chunk: &[u8; 16]) -> u32;
    /// For a path chunk: (members of `S`, `.` or `%`, `/`).
    fn path_bits<S: ByteSet>(self, chunk: &[u8; 16]) -> (u32, u32, u32);
    /// [`members`](Chunk::members) of thirty-two bytes: by default, of each
    /// half.
    #[inline(always)]
    fn members_wide<S: ByteSet>(self, chunk: &[u8; 32]) -> u32 {
        let (lo, hi) = halves(chunk);
        self.members::<S>(lo) | self.members::<S>(hi) << 16
    }
    /// [`path_bits`](Chunk::path_bits) of thirty-two bytes: by default, of
    /// each half.
    #[inline(always)]
    fn path_bits_wide<S: ByteSet>(self, chunk: &[u8; 32]) -> (u32, u32, u32) {
        let (lo, hi) = halves(chunk);
        let (a, b) = (self.path_bits::<S>(lo), self.path_bits::<S>(hi));
        (a.0 | b.0 << 16, a.1 | b.1 << 16, a.2 | b.2 << 16)
    }
}

/// The two sixteen-byte halves of `chunk`.
#[inline(always)]
fn halves(chunk: &[u8; 32]) -> (&[u8; 16], &[u8; 16]) {
    let (lo, hi) = chunk.split_at(16);
    (
        lo.try_into().expect("16 bytes"),
        hi.try_into().expect("16 bytes"),
    )
}

/// The table engine: a byte at a time (targets without SSE2; the tests'
/// reference on every target).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[derive(Clone, Copy, Debug)]
pub struct Table;

impl Chunk for Table {
    #[inline(always)]
    fn members<S: ByteSet>(self, chunk: &[u8; 16]) -> u32 {
        bits(chunk, |b| in_table::<S>(b))
    }
    #[inline(always)]
    fn path_bits<S: ByteSet>(self, chunk: &[u8; 16]) -> (u32, u32, u32) {
        (
            self.members::<S>(chunk),
            bits(chunk, |b| matches!(b, b'.' | b'%')),
            bits(chunk, |b| b == b'/'),
        )
    }
}

#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[inline(always)]
fn bits(chunk: &[u8; 16], f: impl Fn(u8) -> bool) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |m, (k, &b)| m | u32::from(f(b)) << k)
}

/// The SSE2 engine, which every `x86_64` target has.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[derive(Clone, Copy, Debug)]
pub struct Sse2;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl Chunk for Sse2 {
    #[inline(always)]
    fn members<S: ByteSet>(self, chunk: &[u8; 16]) -> u32 {
        // SAFETY: `sse2::members` only requires the SSE2 target feature,
        // which the `cfg` on this impl guarantees is enabled.
        unsafe { sse2::members::<S>(chunk) }
    }
    #[inline(always)]
    fn path_bits<S: ByteSet>(self, chunk: &[u8; 16]) -> (u32, u32, u32) {
        // SAFETY: as above.
        unsafe { sse2::path_bits::<S>(chunk) }
    }
}

/// The SSSE3 engine. A value exists only when the CPU has SSSE3: the field
/// is private and [`Ssse3::detect`] is the only constructor.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Ssse3(());

#[cfg(target_arch = "x86_64")]
impl Ssse3 {
    /// `Some` when the CPU has SSSE3 (std caches the answer: a load and a test).
    #[inline(always)]
    pub fn detect() -> Option<Ssse3> {
        std::arch::is_x86_feature_detected!("ssse3").then_some(Ssse3(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Chunk for Ssse3 {
    #[inline(always)]
    fn members<S: ByteSet>(self, chunk: &[u8; 16]) -> u32 {
        // SAFETY: `ssse3::members` requires SSSE3 (and SSE2, which it
        // implies); `self` exists only if `Ssse3::detect` found it.
        unsafe { ssse3::members::<S>(chunk) }
    }
    #[inline(always)]
    fn path_bits<S: ByteSet>(self, chunk: &[u8; 16]) -> (u32, u32, u32) {
        // SAFETY: as above.
        unsafe { ssse3::path_bits::<S>(chunk) }
    }
}

/// The AVX2 engine. A value exists only when the CPU has AVX2 and SSSE3:
/// the field is private and [`Avx2::detect`] is the only constructor. Its
/// sixteen-byte steps (inputs shorter than 32 bytes) are the 32-byte
/// lookups on the sixteen bytes in the low lane, with the same tables: with
/// SSSE3's own (sixteen-byte constants of their own), the compiler loaded
/// those in every path scan, before it knew which step the input takes,
/// about 6 instructions a URL (`benches/guard.sh`, whatwg).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2(Ssse3);

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when the CPU has AVX2 and SSSE3 (std caches the answer; every
    /// CPU with AVX2 has SSSE3, but that is checked rather than assumed).
    #[inline(always)]
    pub fn detect() -> Option<Avx2> {
        let ssse3 = Ssse3::detect()?;
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(ssse3))
    }
}

#[cfg(target_arch = "x86_64")]
impl Chunk for Avx2 {
    const WIDE: bool = true;
    #[inline(always)]
    fn members<S: ByteSet>(self, chunk: &[u8; 16]) -> u32 {
        // SAFETY: `avx2::members_low` requires AVX2; `self` exists only if
        // `Avx2::detect` found it.
        unsafe { avx2::members_low::<S>(chunk) }
    }
    #[inline(always)]
    fn path_bits<S: ByteSet>(self, chunk: &[u8; 16]) -> (u32, u32, u32) {
        // SAFETY: as above.
        unsafe { avx2::path_bits_low::<S>(chunk) }
    }
    #[inline(always)]
    fn members_wide<S: ByteSet>(self, chunk: &[u8; 32]) -> u32 {
        // SAFETY: `avx2::members` requires AVX2; `self` exists only if
        // `Avx2::detect` found it.
        unsafe { avx2::members::<S>(chunk) }
    }
    #[inline(always)]
    fn path_bits_wide<S: ByteSet>(self, chunk: &[u8; 32]) -> (u32, u32, u32) {
        // SAFETY: as above.
        unsafe { avx2::path_bits::<S>(chunk) }
    }
}

/// Work that runs with the best [`Chunk`] engine the CPU has: see [`dispatch`].
pub trait Job {
    /// What the work returns.
    type Output;
    /// Does the work. Implementations must be `#[inline(always)]`: only code
    /// inlined into [`dispatch`]'s SSSE3 function is compiled for SSSE3.
    fn run<C: Chunk>(self, chunk: C) -> Self::Output;
}

/// Runs `job` with AVX2 when the CPU has it, else SSSE3, else SSE2
/// (`x86_64`), or with the table (other targets). The choice is made once
/// and kept in [`ENGINE`] (a load and a compare per call): release builds
/// target the baseline CPU, not the build machine. (With std's cached
/// checks, two of them, each a load through the global offset table, about
/// 8 instructions a URL more, `benches/guard.sh`.)
#[inline(always)]
pub fn dispatch<J: Job>(job: J) -> J::Output {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // AVX2 asked first, one compare: the match over the three engines
        // and "not chosen yet" was about six instructions a call (every
        // URL's scan); the others, out of line.
        if ENGINE.load(std::sync::atomic::Ordering::Relaxed) == AVX2 {
            // SAFETY: `with_avx2` requires AVX2, and `ENGINE` holds `AVX2`
            // only once `Avx2::detect` found it (and SSSE3), so the value
            // made here is one `Avx2::detect` would make.
            return unsafe { avx2::with_avx2(job, Avx2(Ssse3(()))) };
        }
        dispatch_chosen(job)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    job.run(Table)
}

/// [`dispatch`] when [`ENGINE`] is not `AVX2`: not chosen yet, or a CPU
/// without AVX2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[cold]
#[inline(never)]
fn dispatch_chosen<J: Job>(job: J) -> J::Output {
    let mut engine = ENGINE.load(std::sync::atomic::Ordering::Relaxed);
    if engine == 0 {
        engine = choose_engine();
    }
    match engine {
        // SAFETY: as in `dispatch`.
        AVX2 => unsafe { avx2::with_avx2(job, Avx2(Ssse3(()))) },
        // SAFETY: as in `dispatch`, for SSSE3 and `Ssse3::detect`.
        SSSE3 => unsafe { ssse3::with_ssse3(job, Ssse3(())) },
        _ => with_sse2(job),
    }
}

/// The engine [`dispatch`] runs jobs with: [`AVX2`], [`SSSE3`] or [`SSE2`],
/// or 0 before the first job ([`choose_engine`]).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
static ENGINE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const AVX2: u8 = 3;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const SSSE3: u8 = 2;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const SSE2: u8 = 1;

/// Sets [`ENGINE`] from the CPU's features, and returns it (threads that
/// race here store the same value).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[cold]
#[inline(never)]
fn choose_engine() -> u8 {
    let engine = if Avx2::detect().is_some() {
        AVX2
    } else if Ssse3::detect().is_some() {
        SSSE3
    } else {
        SSE2
    };
    ENGINE.store(engine, std::sync::atomic::Ordering::Relaxed);
    engine
}

/// Runs `job` with SSE2, out of line like the SSSE3 copy: inlined, it made
/// [`dispatch`]'s caller big and kept that from being inlined in turn.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(never)]
fn with_sse2<J: Job>(job: J) -> J::Output {
    job.run(Sse2)
}

/// Appends `bytes` to `out`, as `extend_from_slice` does, without a
/// `memcpy` call when `bytes` is 16 to 128 bytes long (most URLs): two
/// stores of a fixed size (16, 32 or 64 bytes, the second ending where
/// `bytes` ends, overlapping the first), a few vector moves. The call, its
/// setup and the registers saved around it were about 25 instructions a
/// URL (`benches/guard.sh`, whatwg). Made with `Vec`'s safe methods
/// (a block appended, zeros after it, the last block stored over them, the
/// length cut back), the copy cost more than the call: every store through
/// the `Vec` made the compiler load its length and capacity again.
#[inline(always)]
pub fn push_short(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n < 16 {
        out.extend_from_slice(bytes);
    } else if n <= 32 {
        push_two::<16>(out, bytes);
    } else if n <= 64 {
        push_two::<32>(out, bytes);
    } else if n <= 128 {
        push_two::<64>(out, bytes);
    } else {
        out.extend_from_slice(bytes);
    }
}

/// [`push_short`] with blocks of `B` bytes, for `B <= bytes.len() <= 2 * B`:
/// the first `B` bytes of `bytes` and its last `B`, which together cover it.
#[inline(always)]
fn push_two<const B: usize>(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    assert!(B <= n && n <= 2 * B);
    out.reserve(n);
    let len = out.len();
    let from = bytes.as_ptr();
    // SAFETY: `reserve(n)` leaves room for `n` more bytes, so the `n` bytes
    // from `len` lie in `out`'s allocation, which `bytes` (borrowed while
    // `out` is borrowed mutably) does not overlap. Each copy is of `B`
    // bytes, at 0 and at `n - B` (`B <= n`) in both, so it stays inside
    // `bytes` and that room; since `n <= 2 * B` they cover all `n` bytes,
    // and the length set after is initialized. Copies of a constant size,
    // which the compiler makes vector moves (with the blocks read before
    // `reserve`, it kept them on the stack around its call to grow the
    // `Vec`). Exercised for every length from 0 to 200 by
    // `push_short_appends`.
    unsafe {
        let at = out.as_mut_ptr().add(len);
        std::ptr::copy_nonoverlapping(from, at, B);
        std::ptr::copy_nonoverlapping(from.add(n - B), at.add(n - B), B);
        out.set_len(len + n);
    }
}

/// The index of the first byte of `input[i..]` in `S`, or `input.len()`.
#[inline(always)]
pub fn find<S: ByteSet>(input: &[u8], i: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return find_with::<S, _>(Sse2, input, i);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    find_scalar::<S>(input, i)
}

/// The members of `S` among sixteen bytes, a bit per byte (bit `k` for
/// `chunk[k]`), with SSE2 where the target has it: no run-time choice.
#[inline(always)]
pub fn members<S: ByteSet>(chunk: &[u8; 16]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return Sse2.members::<S>(chunk);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    Table.members::<S>(chunk)
}

/// Upper-cases the hex digits of every escape in `bytes`, a whole number
/// of sixteen-byte steps, as `fast::upper_case_escapes` does (every `%`
/// starts an escape whose two hex digits follow it), with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub fn upper_case_escapes_sse2(bytes: &mut [u8]) {
    // SAFETY: `sse2::upper_case_escapes` only requires the SSE2 target
    // feature, which the `cfg` on this function guarantees is enabled.
    unsafe { sse2::upper_case_escapes(bytes) }
}

/// [`find`] with the engine `chunk`.
#[inline(always)]
pub fn find_with<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], i: usize) -> usize {
    if C::WIDE && input.len() >= Wide::W {
        return first_hit::<S, C, Wide>(chunk, input, i);
    }
    if input.len() >= Narrow::W {
        return first_hit::<S, C, Narrow>(chunk, input, i);
    }
    find_scalar::<S>(input, i)
}

/// How many bytes a search looks at in one step, and how. (Methods, not
/// closures: a closure is a function of its own, without the engine's
/// target features, and was left out of line, a call per step.)
trait Step {
    /// Bytes per step.
    const W: usize;
    /// [`Chunk::members`] of the `W` bytes at `at` (`at + W <= input.len()`).
    fn members<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> u32;
    /// [`Chunk::path_bits`] of the `W` bytes at `at`.
    fn path_bits<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> (u32, u32, u32);
}

/// Sixteen bytes a step.
struct Narrow;
impl Step for Narrow {
    const W: usize = 16;
    #[inline(always)]
    fn members<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> u32 {
        chunk.members::<S>(window(input, at))
    }
    #[inline(always)]
    fn path_bits<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> (u32, u32, u32) {
        chunk.path_bits::<S>(window(input, at))
    }
}

/// Thirty-two bytes a step (for engines with [`Chunk::WIDE`]).
struct Wide;
impl Step for Wide {
    const W: usize = 32;
    #[inline(always)]
    fn members<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> u32 {
        chunk.members_wide::<S>(window(input, at))
    }
    #[inline(always)]
    fn path_bits<S: ByteSet, C: Chunk>(chunk: C, input: &[u8], at: usize) -> (u32, u32, u32) {
        chunk.path_bits_wide::<S>(window(input, at))
    }
}

/// [`find_with`] on an input of at least `T::W` bytes, `T::W` a step: the
/// first index `j >= i` of a byte of `S`, or `input.len()` (`i` when `i`
/// is past the end).
#[inline(always)]
fn first_hit<S: ByteSet, C: Chunk, T: Step>(chunk: C, input: &[u8], mut i: usize) -> usize {
    // With `last` computed once, the loop test is one compare (a
    // `get(i..)` and `first_chunk` test cost several per call).
    let len = input.len();
    let last = len - T::W;
    while i <= last {
        let hits = T::members::<S, C>(chunk, input, i);
        if hits != 0 {
            return i + hits.trailing_zeros() as usize;
        }
        i += T::W;
    }
    if i >= len {
        return i;
    }
    // Fewer than W bytes left: look at the input's last W bytes again and
    // drop the lanes before `i`.
    let hits = T::members::<S, C>(chunk, input, last) >> (i - last);
    if hits != 0 {
        i + hits.trailing_zeros() as usize
    } else {
        len
    }
}

/// The `W` bytes at `at` (`at + W <= input.len()`).
#[inline(always)]
fn window<const W: usize>(input: &[u8], at: usize) -> &[u8; W] {
    input[at..at + W].try_into().expect("W bytes")
}

/// The first index `j >= i` where a run of plain path bytes ends: a byte of
/// `S` (the path percent-encode set, with `\\` in special URLs and `%` when
/// escapes must be checked), or a `.` or `%` that starts a segment, that is
/// that stands at `seg` or right after a `/`: it may begin a dot segment
/// (`.`, `..`, `%2e`, ...). File extensions and escapes inside a segment do
/// not stop the scan. Pass `seg = usize::MAX` when no segment starts at `i`.
#[inline(always)]
pub fn find_path_run<S: ByteSet>(input: &[u8], i: usize, seg: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return find_path_run_with::<S, _>(Sse2, input, i, seg);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    find_path_run_scalar::<S>(input, i, seg)
}

/// [`find_path_run`] with the engine `chunk`.
#[inline(always)]
pub fn find_path_run_with<S: ByteSet, C: Chunk>(
    chunk: C,
    input: &[u8],
    i: usize,
    seg: usize,
) -> usize {
    path_run_with::<S, C, false>(chunk, input, i, seg)
}

/// [`find_path_run_with`] that also stops at a `/` right after a `/` (the
/// second of `//`), for the dedup rules' scan (`fast::scan_canonical`),
/// which tells `duplicate-slashes` so without a second pass over the path.
#[inline(always)]
pub fn find_rules_path_run_with<S: ByteSet, C: Chunk>(
    chunk: C,
    input: &[u8],
    i: usize,
    seg: usize,
) -> usize {
    path_run_with::<S, C, true>(chunk, input, i, seg)
}

/// [`find_path_run_with`], and with `DOUBLE` [`find_rules_path_run_with`]:
/// the widest step the input allows.
#[inline(always)]
fn path_run_with<S: ByteSet, C: Chunk, const DOUBLE: bool>(
    chunk: C,
    input: &[u8],
    i: usize,
    seg: usize,
) -> usize {
    if C::WIDE && input.len() >= Wide::W {
        return path_run::<S, C, Wide, DOUBLE>(chunk, input, i, seg);
    }
    if input.len() >= Narrow::W {
        return path_run::<S, C, Narrow, DOUBLE>(chunk, input, i, seg);
    }
    path_run_scalar::<S, DOUBLE>(input, i, seg)
}

/// [`find_path_run`] on an input of at least `T::W` bytes, `T::W` a step.
/// `DOUBLE`: also stop at the second `/` of `//`.
#[inline(always)]
fn path_run<S: ByteSet, C: Chunk, T: Step, const DOUBLE: bool>(
    chunk: C,
    input: &[u8],
    mut i: usize,
    seg: usize,
) -> usize {
    // Bit k of the result: a '.' or '%' at lane k of the chunk at `at`
    // starts a segment.
    let starts = |at: usize, dots: u32, slashes: u32| {
        let before = at == seg || (at > 0 && input[at - 1] == b'/');
        dots & ((slashes << 1) | u32::from(before))
    };
    // With `DOUBLE`, bit k: a `/` at lane k follows a `/`. Apart from
    // `starts`, which then stays small enough to be inlined (it was not
    // with this in it: about 38 instructions per URL more for `whatwg` on
    // `kasztp.txt`).
    let doubles = |at: usize, slashes: u32| {
        if DOUBLE {
            slashes & ((slashes << 1) | u32::from(at > 0 && input[at - 1] == b'/'))
        } else {
            0
        }
    };
    let last = input.len() - T::W;
    while i <= last {
        let (stops, dots, slashes) = T::path_bits::<S, C>(chunk, input, i);
        let hits = stops | starts(i, dots, slashes) | doubles(i, slashes);
        if hits != 0 {
            return i + hits.trailing_zeros() as usize;
        }
        i += T::W;
    }
    if i >= input.len() {
        return i;
    }
    let before = i - last;
    let (stops, dots, slashes) = T::path_bits::<S, C>(chunk, input, last);
    let mut hits = stops | starts(last, dots, slashes) | doubles(last, slashes);
    if i == seg {
        hits |= dots & (1 << before);
    }
    let hits = hits >> before;
    if hits != 0 {
        i + hits.trailing_zeros() as usize
    } else {
        input.len()
    }
}

/// [`find_path_run`] with the table only (the tests' reference, and the
/// code for targets without SSE2).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
pub fn find_path_run_scalar<S: ByteSet>(input: &[u8], i: usize, seg: usize) -> usize {
    path_run_scalar::<S, false>(input, i, seg)
}

/// [`find_path_run_scalar`], and with `DOUBLE` the stop of
/// [`find_rules_path_run_with`] at the second `/` of `//`.
#[inline(always)]
fn path_run_scalar<S: ByteSet, const DOUBLE: bool>(
    input: &[u8],
    mut i: usize,
    seg: usize,
) -> usize {
    while i < input.len() {
        let b = input[i];
        let after_slash = i > 0 && input[i - 1] == b'/';
        let starts = matches!(b, b'.' | b'%') && (i == seg || after_slash);
        if in_table::<S>(b) || starts || (DOUBLE && b == b'/' && after_slash) {
            break;
        }
        i += 1;
    }
    i
}

/// The same search with the table only (the reference for tests, and the
/// code for targets without SSE2).
#[cfg_attr(not(test), allow(dead_code))]
pub fn find_scalar<S: ByteSet>(input: &[u8], mut i: usize) -> usize {
    while i < input.len() && !in_table::<S>(input[i]) {
        i += 1;
    }
    i
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::ByteSet;
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_cvtsi128_si64, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_set_epi64x, _mm_setzero_si128,
        _mm_slli_si128, _mm_srli_si128, _mm_sub_epi8, _mm_subs_epu8, _mm_unpackhi_epi64,
        _mm_xor_si128,
    };

    /// See [`super::upper_case_escapes_sse2`]: sixteen bytes a step, the
    /// `%`s compared at once, the digits' bytes found by shifting that mask
    /// by one and two bytes (and from the last step's, for the step's first
    /// two), and the digits in `a-f` flipped to `A-F`. A last step of fewer
    /// than sixteen bytes is left as it is.
    #[target_feature(enable = "sse2")]
    pub fn upper_case_escapes(bytes: &mut [u8]) {
        let mut last = _mm_setzero_si128();
        for step in bytes.chunks_exact_mut(16) {
            let (lo, hi) = step.split_at_mut(8);
            let lo: &mut [u8; 8] = lo.try_into().expect("8 bytes");
            let hi: &mut [u8; 8] = hi.try_into().expect("8 bytes");
            let v = _mm_set_epi64x(i64::from_le_bytes(*hi), i64::from_le_bytes(*lo));
            let percents = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'%' as i8));
            // A digit is one or two bytes after a `%`; the last step's last
            // two bytes reach into this one's first two.
            let digits = _mm_or_si128(
                _mm_or_si128(_mm_slli_si128::<1>(percents), _mm_slli_si128::<2>(percents)),
                _mm_or_si128(_mm_srli_si128::<15>(last), _mm_srli_si128::<14>(last)),
            );
            // `a-f`: `b - 'a'` is at most 5 (unsigned).
            let from_a = _mm_sub_epi8(v, _mm_set1_epi8(b'a' as i8));
            let lower = _mm_cmpeq_epi8(_mm_min_epu8(from_a, _mm_set1_epi8(5)), from_a);
            let flip = _mm_and_si128(_mm_and_si128(digits, lower), _mm_set1_epi8(0x20));
            let w = _mm_xor_si128(v, flip);
            *lo = _mm_cvtsi128_si64(w).to_le_bytes();
            *hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(w, w)).to_le_bytes();
            last = percents;
        }
    }

    /// Bit `k` is set when `chunk[k]` is in `S`.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub fn members<S: ByteSet>(chunk: &[u8; 16]) -> u32 {
        // Two plain loads: no raw pointer is needed to fill the register.
        let lo = i64::from_le_bytes(*chunk.first_chunk::<8>().expect("16 bytes"));
        let hi = i64::from_le_bytes(*chunk.last_chunk::<8>().expect("16 bytes"));
        let v: __m128i = _mm_set_epi64x(hi, lo);
        let mut m = _mm_setzero_si128();
        if S::ALL_BUT_LOWER_ALNUM {
            // In a-z or 0-9: (b - lo) saturating-minus (hi - lo) is 0 only
            // for b in lo..=hi (wrapping subtraction puts the rest above).
            let zero = _mm_setzero_si128();
            let in_range = |lo: u8, hi: u8| {
                let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
                _mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8((hi - lo) as i8)), zero)
            };
            let mut keep = _mm_or_si128(in_range(b'a', b'z'), in_range(b'0', b'9'));
            for &b in S::BYTES {
                keep = _mm_or_si128(keep, _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
            }
            return !(_mm_movemask_epi8(keep) as u32) & 0xffff;
        }
        if S::BELOW != 0 {
            // Signed: 0x80..=0xFF are negative, so they are "below" too.
            m = _mm_cmplt_epi8(v, _mm_set1_epi8(S::BELOW as i8));
            m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
        }
        for &b in S::BYTES {
            m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
        }
        _mm_movemask_epi8(m) as u32
    }

    /// For a path chunk: (members of `S`, `.` or `%`, `/`), a bit per byte.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub fn path_bits<S: ByteSet>(chunk: &[u8; 16]) -> (u32, u32, u32) {
        let lo = i64::from_le_bytes(*chunk.first_chunk::<8>().expect("16 bytes"));
        let hi = i64::from_le_bytes(*chunk.last_chunk::<8>().expect("16 bytes"));
        let v: __m128i = _mm_set_epi64x(hi, lo);
        let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        let dots = _mm_or_si128(eq(b'.'), eq(b'%'));
        (
            members::<S>(chunk),
            _mm_movemask_epi8(dots) as u32,
            _mm_movemask_epi8(eq(b'/')) as u32,
        )
    }
}

/// The nibble-table classification (see [`Nibbles`]) for one vector width,
/// written once for the SSSE3 and AVX2 engines: `lookup`, `members` and
/// `path_bits` over the module's `load` (the bytes) and `table` (a nibble
/// table, in every 128-bit lane), with the intrinsics of that width.
#[cfg(target_arch = "x86_64")]
macro_rules! nibble_lookups {
    (
        feature: $feature:literal, vector: $v:ty, bytes: $n:literal, lanes: $lanes:expr,
        and: $and:ident, set1: $set1:ident, srli16: $srli16:ident,
        shuffle: $shuffle:ident, cmpeq: $cmpeq:ident, zero: $zero:ident,
        movemask: $movemask:ident
    ) => {
        /// Each byte's `lo[low nibble] & hi[high nibble]`.
        #[target_feature(enable = $feature)]
        #[inline]
        fn lookup(v: $v, tables: &Nibbles) -> $v {
            let nibble = $set1(0x0f);
            let lo = $and(v, nibble);
            // Per 16-bit lane; the mask drops the bits shifted in from the
            // neighbouring byte.
            let hi = $and($srli16::<4>(v), nibble);
            $and(
                $shuffle(table(&tables.lo), lo),
                $shuffle(table(&tables.hi), hi),
            )
        }

        /// Bit `k` is set when `chunk[k]` is in `S`: `pshufb` looks up each
        /// byte's low nibble in one table and its high nibble in the other,
        /// and the byte is in the set when the two share a bit.
        #[target_feature(enable = $feature)]
        #[inline]
        pub fn members<S: ByteSet>(chunk: &[u8; $n]) -> u32 {
            let m = lookup(load(chunk), &const { S::NIBBLES });
            !($movemask($cmpeq(m, $zero())) as u32) & $lanes
        }

        /// For a path chunk: (members of `S`, `.` or `%`, `/`), a bit per
        /// byte, all three from one lookup.
        #[target_feature(enable = $feature)]
        #[inline]
        pub fn path_bits<S: ByteSet>(chunk: &[u8; $n]) -> (u32, u32, u32) {
            let (tables, masks) = const { S::PATH_NIBBLES };
            let m = lookup(load(chunk), &tables);
            let zero = $zero();
            let class = |mask: u8| {
                let none = $cmpeq($and(m, $set1(mask as i8)), zero);
                !($movemask(none) as u32) & $lanes
            };
            (class(masks[0]), class(masks[1]), class(masks[2]))
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod ssse3 {
    use super::{ByteSet, Job, Nibbles, Ssse3};
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x,
        _mm_setzero_si128, _mm_shuffle_epi8, _mm_srli_epi16,
    };

    /// Runs `job` compiled for SSSE3 (its `run` is inlined here).
    #[target_feature(enable = "ssse3")]
    pub fn with_ssse3<J: Job>(job: J, engine: Ssse3) -> J::Output {
        job.run(engine)
    }

    #[target_feature(enable = "ssse3")]
    #[inline]
    pub(super) fn load(bytes: &[u8; 16]) -> __m128i {
        // Two plain loads: no raw pointer is needed to fill the register.
        let lo = i64::from_le_bytes(*bytes.first_chunk::<8>().expect("16 bytes"));
        let hi = i64::from_le_bytes(*bytes.last_chunk::<8>().expect("16 bytes"));
        _mm_set_epi64x(hi, lo)
    }

    /// The table itself (it is one register).
    #[target_feature(enable = "ssse3")]
    #[inline]
    fn table(t: &[u8; 16]) -> __m128i {
        load(t)
    }

    nibble_lookups! {
        feature: "ssse3", vector: __m128i, bytes: 16, lanes: 0xffff,
        and: _mm_and_si128, set1: _mm_set1_epi8, srli16: _mm_srli_epi16,
        shuffle: _mm_shuffle_epi8, cmpeq: _mm_cmpeq_epi8, zero: _mm_setzero_si128,
        movemask: _mm_movemask_epi8
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::ssse3::load as load16;
    use super::{Avx2, ByteSet, Job, Nibbles};
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8,
        _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_zextsi128_si256,
    };

    /// Runs `job` compiled for AVX2 (its `run` is inlined here).
    #[target_feature(enable = "avx2")]
    pub fn with_avx2<J: Job>(job: J, engine: Avx2) -> J::Output {
        job.run(engine)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn load(bytes: &[u8; 32]) -> __m256i {
        // SAFETY: `bytes` is 32 readable bytes, and `loadu` reads them
        // without any alignment requirement.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    }

    /// A sixteen-byte table in both 128-bit lanes (`pshufb` looks up each
    /// lane in its own half).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn table(t: &[u8; 16]) -> __m256i {
        _mm256_broadcastsi128_si256(load16(t))
    }

    nibble_lookups! {
        feature: "avx2", vector: __m256i, bytes: 32, lanes: u32::MAX,
        and: _mm256_and_si256, set1: _mm256_set1_epi8, srli16: _mm256_srli_epi16,
        shuffle: _mm256_shuffle_epi8, cmpeq: _mm256_cmpeq_epi8, zero: _mm256_setzero_si256,
        movemask: _mm256_movemask_epi8
    }

    /// Sixteen bytes in the low lane, zeros above.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn low(bytes: &[u8; 16]) -> __m256i {
        _mm256_zextsi128_si256(load16(bytes))
    }

    /// [`members`] of sixteen bytes: their lookup in the low lane, with
    /// the same tables as the 32-byte steps (see [`Avx2`]).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn members_low<S: ByteSet>(chunk: &[u8; 16]) -> u32 {
        let m = lookup(low(chunk), &const { S::NIBBLES });
        !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, _mm256_setzero_si256())) as u32) & 0xffff
    }

    /// [`path_bits`] of sixteen bytes, as [`members_low`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn path_bits_low<S: ByteSet>(chunk: &[u8; 16]) -> (u32, u32, u32) {
        let (tables, masks) = const { S::PATH_NIBBLES };
        let m = lookup(low(chunk), &tables);
        let zero = _mm256_setzero_si256();
        let class = |mask: u8| {
            let none = _mm256_cmpeq_epi8(_mm256_and_si256(m, _mm256_set1_epi8(mask as i8)), zero);
            !(_mm256_movemask_epi8(none) as u32) & 0xffff
        };
        (class(masks[0]), class(masks[1]), class(masks[2]))
    }
}

/// A set as the tests see it: name, table, its search with each engine
/// ([`find`], SSSE3 and AVX2 where the CPU has them, [`Table`]), table
/// search.
#[cfg(test)]
pub(crate) type SetCase = (
    &'static str,
    [bool; 256],
    [fn(&[u8], usize) -> usize; 4],
    fn(&[u8], usize) -> usize,
);

/// [`find_with`] the [`Table`] engine, for the tests.
#[cfg(test)]
fn find_table<S: ByteSet>(input: &[u8], i: usize) -> usize {
    find_with::<S, _>(Table, input, i)
}

/// [`find_with`] the SSSE3 engine, for the tests (the table search on a CPU
/// without it).
#[cfg(test)]
fn find_ssse3<S: ByteSet>(input: &[u8], i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(engine) = Ssse3::detect() {
        return find_with::<S, _>(engine, input, i);
    }
    find_scalar::<S>(input, i)
}

/// [`find_with`] the AVX2 engine, for the tests (the table search on a CPU
/// without it).
#[cfg(test)]
fn find_avx2<S: ByteSet>(input: &[u8], i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(engine) = Avx2::detect() {
        return find_with::<S, _>(engine, input, i);
    }
    find_scalar::<S>(input, i)
}

macro_rules! byte_sets {
    ($($(#[$doc:meta])* $name:ident: below $below:literal, $bytes:literal;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $name;
            impl ByteSet for $name {
                const BELOW: u8 = $below;
                const BYTES: &'static [u8] = $bytes;
            }
        )*
        /// Every set, for the tests.
        #[cfg(test)]
        pub(crate) const ALL: &[SetCase] = &[
            $((
                stringify!($name),
                $name::TABLE,
                [find::<$name>, find_ssse3::<$name>, find_avx2::<$name>, find_table::<$name>],
                find_scalar::<$name>,
            ),)*
        ];
    };
}

byte_sets! {
    /// The C0 control percent-encode set: "the C0 controls and all code points
    /// greater than U+007E (~)".
    C0ControlSet: below 0x20, b"";
    /// The fragment percent-encode set: C0 controls and space " < > `.
    FragmentSet: below 0x21, b"\"<>`";
    /// The query percent-encode set: C0 controls and space " # < >.
    QuerySet: below 0x21, b"\"#<>";
    /// The special-query percent-encode set: the query set and '.
    SpecialQuerySet: below 0x21, b"\"#<>'";
    /// The path percent-encode set: the query set and ? ^ ` { }.
    PathSet: below 0x21, b"\"#<>?^`{}";
    /// The userinfo percent-encode set: the path set and / : ; = @ [ \ ] ^ |.
    UserinfoSet: below 0x21, b"\"#<>?^`{}/:;=@[\\]|";
    /// Where a path segment of a non-special URL ends or needs an escape.
    SegmentStop: below 0x21, b"\"#<>?^`{}/";
    /// The same for a special URL, where `\` is a separator too.
    SpecialSegmentStop: below 0x21, b"\"#<>?^`{}/\\";
    /// The path percent-encode set with `\`: what ends a plain run in a
    /// special URL's path (with [`find_path_run`]).
    SpecialPathSet: below 0x21, b"\"#<>?^`{}\\";
    /// The same with `%` and the bytes RFC 3986 excludes that the path
    /// percent-encode set leaves (`[ ] |`), for the `rfc3986` fast path,
    /// where every escape is checked and those bytes are escaped.
    Rfc3986PathStop: below 0x21, b"\"#<>?^`{}\\%[]|";
    /// [`SpecialPathSet`] with `;` and `(`, where a session id can start in
    /// a path: the dedup rules' scan stops there and tells `session`.
    SpecialPathRulesStop: below 0x21, b"\"#<>?^`{}\\;(";
    /// [`Rfc3986PathStop`] with `;` and `(`, for the same.
    Rfc3986PathRulesStop: below 0x21, b"\"#<>?^`{}\\%[]|;(";
    /// Where the query of an already-canonical special URL needs a look: the
    /// special-query set and `%`.
    CanonicalQueryStop: below 0x21, b"\"#<>'%";
    /// Where the fragment of an already-canonical URL needs a look: the
    /// fragment set and `%`.
    CanonicalFragmentStop: below 0x21, b"\"<>`%";
    /// [`CanonicalQueryStop`] and `\\`, for a target scanned in its log
    /// line, where `\\` starts the logger's escape (`fast::target_in_line`).
    InLineQueryStop: below 0x21, b"\"#<>'%\\";
    /// [`CanonicalFragmentStop`] and `\\`, for the same.
    InLineFragmentStop: below 0x21, b"\"<>`%\\";
    /// [`CanonicalQueryStop`] for the `rfc3986` profile, which also escapes
    /// the bytes RFC 3986 excludes that the special-query set leaves:
    /// `[ \ ] ^ { | }` and the grave accent.
    Rfc3986QueryStop: below 0x21, b"\"#<>'%[\\]^`{|}";
    /// Where `rfc3986` changes a fragment, or its fast path takes a look:
    /// every byte RFC 3986 excludes, `#` (only the first one delimits) and
    /// `%`.
    Rfc3986FragmentStop: below 0x21, b"\"#<>`%[\\]^{|}";
    /// Where `rfc3986` changes any other component (an IP literal's
    /// brackets aside): every byte RFC 3986 excludes and `%`.
    Rfc3986Stop: below 0x21, b"\"<>`%[\\]^{|}";
    /// Where the authority of a non-special URL ends.
    AuthorityEnd: below 0, b"/?#";
    /// Where the authority of a special URL ends.
    SpecialAuthorityEnd: below 0, b"/?#\\";
    /// ASCII tab or newline, removed from the input.
    TabNewline: below 0, b"\t\n\r";
}

/// Where a domain stops being canonical as it is: every byte but `a-z 0-9 - . _`.
#[derive(Clone, Copy, Debug)]
pub struct CanonicalDomainStop;
impl ByteSet for CanonicalDomainStop {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"-._";
    const ALL_BUT_LOWER_ALNUM: bool = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_short` appends as `extend_from_slice` does, for every length
    /// of each of its ways (below 16, the three block sizes, above 128),
    /// into an empty `Vec`, one with bytes in it, and one with no room to
    /// spare.
    #[test]
    fn push_short_appends() {
        let bytes: Vec<u8> = (0..200u32).map(|k| (k * 7 + 3) as u8).collect();
        for n in 0..=bytes.len() {
            let input = &bytes[..n];
            for before in [&b""[..], b"abc", &[b'x'; 40]] {
                for tight in [false, true] {
                    let mut out = before.to_vec();
                    if tight {
                        out.shrink_to_fit();
                    }
                    push_short(&mut out, input);
                    let mut want = before.to_vec();
                    want.extend_from_slice(input);
                    assert_eq!(out, want, "{n} bytes after {}", before.len());
                }
            }
        }
    }

    /// `dispatch` runs jobs with the engine the CPU's features say (the
    /// one `ENGINE` keeps, from the first job on), the best one it has.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn dispatch_keeps_the_best_engine() {
        struct Wide;
        impl Job for Wide {
            type Output = bool;
            fn run<C: Chunk>(self, _: C) -> bool {
                C::WIDE
            }
        }
        let wide = dispatch(Wide);
        let expected = if Avx2::detect().is_some() {
            AVX2
        } else if Ssse3::detect().is_some() {
            SSSE3
        } else {
            SSE2
        };
        assert_eq!(ENGINE.load(std::sync::atomic::Ordering::Relaxed), expected);
        assert_eq!(wide, expected == AVX2);
        assert_eq!(dispatch(Wide), wide);
    }

    #[test]
    fn sets_are_what_their_names_say() {
        use crate::url::class::{is, C0_CONTROL, FRAGMENT, PATH, QUERY, SPECIAL_QUERY, USERINFO};
        for b in 0..=255u8 {
            let i = b as usize;
            assert_eq!(C0ControlSet::TABLE[i], is(b, C0_CONTROL), "{b:#x}");
            assert_eq!(FragmentSet::TABLE[i], is(b, FRAGMENT), "{b:#x}");
            assert_eq!(QuerySet::TABLE[i], is(b, QUERY), "{b:#x}");
            assert_eq!(SpecialQuerySet::TABLE[i], is(b, SPECIAL_QUERY), "{b:#x}");
            assert_eq!(PathSet::TABLE[i], is(b, PATH), "{b:#x}");
            assert_eq!(UserinfoSet::TABLE[i], is(b, USERINFO), "{b:#x}");
            assert_eq!(SegmentStop::TABLE[i], is(b, PATH) || b == b'/');
            assert_eq!(
                SpecialSegmentStop::TABLE[i],
                is(b, PATH) || b == b'/' || b == b'\\'
            );
            assert_eq!(SpecialPathSet::TABLE[i], is(b, PATH) || b == b'\\');
            // RFC 3986 Appendix A allows, somewhere in a URI, only
            // unreserved, reserved (`[ ]` in an IP literal only) and `%`.
            let excluded = !(b.is_ascii_alphanumeric() || b"-._~:/?#@!$&'()*+,;=%".contains(&b));
            let strict = |set: bool| excluded || b == b'%' || set;
            assert_eq!(Rfc3986Stop::TABLE[i], strict(false), "{b:#x}");
            assert_eq!(Rfc3986FragmentStop::TABLE[i], strict(b == b'#'), "{b:#x}");
            assert_eq!(
                Rfc3986QueryStop::TABLE[i],
                strict(is(b, SPECIAL_QUERY)),
                "{b:#x}"
            );
            assert_eq!(Rfc3986PathStop::TABLE[i], strict(is(b, PATH)), "{b:#x}");
            assert_eq!(TabNewline::TABLE[i], matches!(b, b'\t' | b'\n' | b'\r'));
            let domain_byte =
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_');
            assert_eq!(CanonicalDomainStop::TABLE[i], !domain_byte, "{b:#x}");
        }
    }

    /// The nibble tables of every set say what its table says.
    #[test]
    fn nibble_tables_agree_with_table() {
        fn check<S: ByteSet>(name: &str) {
            let Nibbles { lo, hi } = S::NIBBLES;
            for b in 0..=255u8 {
                let member = lo[usize::from(b & 15)] & hi[usize::from(b >> 4)] != 0;
                assert_eq!(member, S::TABLE[usize::from(b)], "{name}: {b:#x}");
            }
        }
        check::<CanonicalDomainStop>("CanonicalDomainStop");
        check::<SpecialPathSet>("SpecialPathSet");
        check::<Rfc3986PathStop>("Rfc3986PathStop");
        check::<CanonicalQueryStop>("CanonicalQueryStop");
        check::<CanonicalFragmentStop>("CanonicalFragmentStop");
        check::<Rfc3986QueryStop>("Rfc3986QueryStop");
        check::<Rfc3986FragmentStop>("Rfc3986FragmentStop");
        check::<Rfc3986Stop>("Rfc3986Stop");
        check::<UserinfoSet>("UserinfoSet");
        check::<TabNewline>("TabNewline");
        fn check_path<S: ByteSet>(name: &str) {
            let (Nibbles { lo, hi }, masks) = S::PATH_NIBBLES;
            for b in 0..=255u8 {
                let m = lo[usize::from(b & 15)] & hi[usize::from(b >> 4)];
                let want = [
                    S::TABLE[usize::from(b)],
                    matches!(b, b'.' | b'%'),
                    b == b'/',
                ];
                for (c, mask) in masks.iter().enumerate() {
                    assert_eq!(m & mask != 0, want[c], "{name}, class {c}: {b:#x}");
                }
            }
        }
        check_path::<PathSet>("PathSet");
        check_path::<SpecialPathSet>("SpecialPathSet");
        check_path::<Rfc3986PathStop>("Rfc3986PathStop");
        check_path::<SpecialPathRulesStop>("SpecialPathRulesStop");
        check_path::<Rfc3986PathRulesStop>("Rfc3986PathRulesStop");
    }

    /// The path-run search against its scalar twin: every byte value at
    /// several positions, after and away from a '/', with and without a
    /// segment start, for inputs of 0 to 71 bytes (two AVX2 steps and a
    /// tail).
    #[test]
    fn path_run_simd_agrees_with_scalar() {
        fn check<S: ByteSet>(name: &str) {
            for len in 0..72usize {
                for b in 0..=255u8 {
                    for at in [0, 1, 31, 32, len / 2, len.saturating_sub(1)] {
                        for slash in [None, Some(at.wrapping_sub(1)), Some(3), Some(33)] {
                            let mut input = vec![b'a'; len];
                            if let Some(k) = slash.filter(|&k| k < len) {
                                input[k] = b'/';
                            }
                            if at < len {
                                input[at] = b;
                            }
                            for start in [0, 1, 2, 15, 16, 17, 33].into_iter().filter(|&s| s <= len)
                            {
                                for seg in [start, usize::MAX] {
                                    let want = find_path_run_scalar::<S>(&input, start, seg);
                                    assert_eq!(
                                        find_path_run::<S>(&input, start, seg),
                                        want,
                                        "{name}: {input:?} from {start}, segment at {seg}"
                                    );
                                    assert_eq!(
                                        find_path_run_with::<S, _>(Table, &input, start, seg),
                                        want,
                                        "{name}, table: {input:?} from {start}, segment at {seg}"
                                    );
                                    #[cfg(target_arch = "x86_64")]
                                    if let Some(engine) = Ssse3::detect() {
                                        assert_eq!(
                                            find_path_run_with::<S, _>(engine, &input, start, seg),
                                            want,
                                            "{name}, ssse3: {input:?} from {start}, segment at {seg}"
                                        );
                                    }
                                    #[cfg(target_arch = "x86_64")]
                                    if let Some(engine) = Avx2::detect() {
                                        assert_eq!(
                                            find_path_run_with::<S, _>(engine, &input, start, seg),
                                            want,
                                            "{name}, avx2: {input:?} from {start}, segment at {seg}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        check::<PathSet>("PathSet");
        check::<SpecialPathSet>("SpecialPathSet");
        check::<Rfc3986PathStop>("Rfc3986PathStop");
    }

    /// The rules' path-run search ([`find_rules_path_run_with`]) against a
    /// byte loop, with every engine: it stops where [`find_path_run`]
    /// stops, or earlier at the second `/` of `//`; on inputs of 0 to 71
    /// bytes made of `/` and path bytes, with a `;` or `.` at times.
    #[test]
    fn rules_path_run_stops_at_double_slashes() {
        fn check<S: ByteSet>(name: &str) {
            let mut seed = 0x2545_F491_4F6C_DD1Du64;
            let mut doubles = 0;
            for n in 0..6_000usize {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let len = n % 72;
                let input: Vec<u8> = (0..len)
                    .map(|k| b"/aa/b;./c"[(seed >> (k % 60)) as usize % 9])
                    .collect();
                for start in [0, 1, 15, 16, 17, 33].into_iter().filter(|&s| s <= len) {
                    let double = (start.max(1)..len)
                        .find(|&k| input[k] == b'/' && input[k - 1] == b'/')
                        .unwrap_or(len);
                    let want = find_path_run_scalar::<S>(&input, start, usize::MAX).min(double);
                    doubles += usize::from(double < len);
                    let mut got = vec![(
                        "table",
                        find_rules_path_run_with::<S, _>(Table, &input, start, usize::MAX),
                    )];
                    #[cfg(target_arch = "x86_64")]
                    {
                        got.push((
                            "sse2",
                            find_rules_path_run_with::<S, _>(Sse2, &input, start, usize::MAX),
                        ));
                        if let Some(e) = Ssse3::detect() {
                            got.push((
                                "ssse3",
                                find_rules_path_run_with::<S, _>(e, &input, start, usize::MAX),
                            ));
                        }
                        if let Some(e) = Avx2::detect() {
                            got.push((
                                "avx2",
                                find_rules_path_run_with::<S, _>(e, &input, start, usize::MAX),
                            ));
                        }
                    }
                    for (engine, at) in got {
                        assert_eq!(
                            at,
                            want,
                            "{name}, {engine}: {} from {start}",
                            input.escape_ascii()
                        );
                    }
                }
            }
            assert!(doubles > 1_000, "{name}: {doubles}");
        }
        check::<SpecialPathRulesStop>("SpecialPathRulesStop");
        check::<Rfc3986PathRulesStop>("Rfc3986PathRulesStop");
    }

    /// Thirty-two bytes at once, as each engine classifies them (the
    /// default of two halves, and AVX2's own where the CPU has it): every
    /// byte value at every lane, against the table.
    #[test]
    fn wide_classes_agree_with_table() {
        fn check<S: ByteSet, C: Chunk>(name: &str, chunk: C) {
            let filler = (0..=255u8)
                .find(|&b| !S::TABLE[usize::from(b)] && !matches!(b, b'.' | b'%' | b'/'))
                .expect("a byte outside the sets");
            for b in 0..=255u8 {
                for at in 0..32 {
                    let mut bytes = [filler; 32];
                    bytes[at] = b;
                    let lane = |set: bool| u32::from(set) << at;
                    let (stops, dots, slashes) = chunk.path_bits_wide::<S>(&bytes);
                    let want = lane(S::TABLE[usize::from(b)]);
                    assert_eq!(
                        chunk.members_wide::<S>(&bytes),
                        want,
                        "{name}: {b:#x} at {at}"
                    );
                    assert_eq!(stops, want, "{name}, path: {b:#x} at {at}");
                    assert_eq!(
                        dots,
                        lane(matches!(b, b'.' | b'%')),
                        "{name}: {b:#x} at {at}"
                    );
                    assert_eq!(slashes, lane(b == b'/'), "{name}: {b:#x} at {at}");
                }
            }
        }
        fn engines<S: ByteSet>(name: &str) {
            check::<S, _>(name, Table);
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            check::<S, _>(name, Sse2);
            #[cfg(target_arch = "x86_64")]
            if let Some(engine) = Ssse3::detect() {
                check::<S, _>(name, engine);
            }
            #[cfg(target_arch = "x86_64")]
            if let Some(engine) = Avx2::detect() {
                check::<S, _>(name, engine);
            }
        }
        engines::<PathSet>("PathSet");
        engines::<SpecialPathSet>("SpecialPathSet");
        engines::<Rfc3986PathStop>("Rfc3986PathStop");
        engines::<CanonicalQueryStop>("CanonicalQueryStop");
        engines::<CanonicalFragmentStop>("CanonicalFragmentStop");
        engines::<CanonicalDomainStop>("CanonicalDomainStop");
        engines::<TabNewline>("TabNewline");
    }

    /// The SIMD search against the table scan: every set, every byte value,
    /// at the first, middle and last position of inputs from 0 to 71 bytes
    /// (and at 31 and 32, around the first AVX2 step), from several starts.
    #[test]
    fn simd_agrees_with_table_for_every_byte_and_position() {
        let domain: SetCase = (
            "CanonicalDomainStop",
            CanonicalDomainStop::TABLE,
            [
                find::<CanonicalDomainStop>,
                find_ssse3::<CanonicalDomainStop>,
                find_avx2::<CanonicalDomainStop>,
                find_table::<CanonicalDomainStop>,
            ],
            find_scalar::<CanonicalDomainStop>,
        );
        for &(name, table, engines, scalar) in ALL.iter().chain([&domain]) {
            let filler = (0..=255u8)
                .find(|&b| !table[b as usize])
                .expect("a byte outside the set");
            for len in 0..72usize {
                for b in 0..=255u8 {
                    for at in [0, 31, 32, len / 2, len.saturating_sub(1)] {
                        let mut input = vec![filler; len];
                        if at < len {
                            input[at] = b;
                        }
                        for start in [0, 1, 7, 15, 16, 17, 33].into_iter().filter(|&s| s <= len) {
                            for (e, engine) in engines.iter().enumerate() {
                                assert_eq!(
                                    engine(&input, start),
                                    scalar(&input, start),
                                    "{name}, engine {e}: len {len}, byte {b:#x} at {at}, start {start}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
