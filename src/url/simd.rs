//! Searching for the first byte of a set: sixteen bytes a step with SSE2,
//! which every `x86_64` target has, and a table scan everywhere else.
//!
//! Every set the parser scans for has the same shape: "control-like" bytes
//! (below some bound, DEL, and everything from 0x80 up) plus a short list of
//! ASCII punctuation. With SSE2 that is one signed compare (bytes from 0x80 up
//! are negative, so `b < bound` catches them too), one compare for DEL, and one
//! compare per listed byte, OR-ed together; `movemask` turns the result into a
//! bit per byte. The scalar table of each set is derived from the same
//! definition, and a test checks both against each other for every byte value
//! at every position.
//!
//! This module holds the crate's only `unsafe`: calls of the SSE2 functions,
//! whose one requirement (the CPU has SSE2) the `cfg` around them proves.
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
}

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

/// The index of the first byte of `input[i..]` in `S`, or `input.len()`.
#[inline(always)]
pub fn find<S: ByteSet>(input: &[u8], mut i: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        while let Some(chunk) = input.get(i..).and_then(|rest| rest.first_chunk::<16>()) {
            // SAFETY: `sse2::members` only requires the SSE2 target feature,
            // which the `cfg` on this block guarantees is enabled.
            let hits = unsafe { sse2::members::<S>(chunk) };
            if hits != 0 {
                return i + hits.trailing_zeros() as usize;
            }
            i += 16;
        }
        // Fewer than 16 bytes left: look at the input's last 16 bytes again
        // and drop the lanes before `i`.
        if i < input.len() {
            if let Some(chunk) = input.last_chunk::<16>() {
                let before = i - (input.len() - 16);
                // SAFETY: as above.
                let hits = unsafe { sse2::members::<S>(chunk) } >> before;
                return if hits != 0 {
                    i + hits.trailing_zeros() as usize
                } else {
                    input.len()
                };
            }
        }
    }
    while i < input.len() && !S::TABLE[input[i] as usize] {
        i += 1;
    }
    i
}

/// The first index `j >= i` where a run of plain path bytes ends: a byte of
/// `S` (the path percent-encode set, with `\\` in special URLs and `%` when
/// escapes must be checked), or a `.` or `%` that starts a segment, that is
/// that stands at `seg` or right after a `/`: it may begin a dot segment
/// (`.`, `..`, `%2e`, ...). File extensions and escapes inside a segment do
/// not stop the scan. Pass `seg = usize::MAX` when no segment starts at `i`.
#[inline(always)]
pub fn find_path_run<S: ByteSet>(input: &[u8], mut i: usize, seg: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // Bit k of the result: a '.' or '%' at lane k of the chunk at `at`
        // starts a segment.
        let starts = |at: usize, dots: u32, slashes: u32| {
            let before = at == seg || (at > 0 && input[at - 1] == b'/');
            dots & ((slashes << 1) | u32::from(before))
        };
        while let Some(chunk) = input.get(i..).and_then(|rest| rest.first_chunk::<16>()) {
            // SAFETY: `sse2::path_bits` only requires the SSE2 target
            // feature, which the `cfg` on this block guarantees is enabled.
            let (stops, dots, slashes) = unsafe { sse2::path_bits::<S>(chunk) };
            let hits = stops | starts(i, dots, slashes);
            if hits != 0 {
                return i + hits.trailing_zeros() as usize;
            }
            i += 16;
        }
        if i < input.len() {
            if let Some(chunk) = input.last_chunk::<16>() {
                let at = input.len() - 16;
                let before = i - at;
                // SAFETY: as above.
                let (stops, dots, slashes) = unsafe { sse2::path_bits::<S>(chunk) };
                let mut hits = stops | starts(at, dots, slashes);
                if i == seg {
                    hits |= dots & (1 << before);
                }
                let hits = hits >> before;
                return if hits != 0 {
                    i + hits.trailing_zeros() as usize
                } else {
                    input.len()
                };
            }
        }
    }
    find_path_run_scalar::<S>(input, i, seg)
}

/// [`find_path_run`] with the table only.
pub fn find_path_run_scalar<S: ByteSet>(input: &[u8], mut i: usize, seg: usize) -> usize {
    while i < input.len() {
        let b = input[i];
        let starts = matches!(b, b'.' | b'%') && (i == seg || (i > 0 && input[i - 1] == b'/'));
        if S::TABLE[b as usize] || starts {
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
    while i < input.len() && !S::TABLE[input[i] as usize] {
        i += 1;
    }
    i
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::ByteSet;
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x, _mm_setzero_si128, _mm_sub_epi8, _mm_subs_epu8,
    };

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

/// A set as the tests see it: name, table, SIMD search, table search.
#[cfg(test)]
pub(crate) type SetCase = (
    &'static str,
    [bool; 256],
    fn(&[u8], usize) -> usize,
    fn(&[u8], usize) -> usize,
);

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
            $((stringify!($name), $name::TABLE, find::<$name>, find_scalar::<$name>),)*
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
    /// The same with `%`, for the `rfc3986` fast path, where every escape is
    /// checked.
    SpecialPathSetPercent: below 0x21, b"\"#<>?^`{}\\%";
    /// Where the query of an already-canonical special URL needs a look: the
    /// special-query set and `%`.
    CanonicalQueryStop: below 0x21, b"\"#<>'%";
    /// Where the fragment of an already-canonical URL needs a look: the
    /// fragment set and `%`.
    CanonicalFragmentStop: below 0x21, b"\"<>`%";
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
            assert_eq!(TabNewline::TABLE[i], matches!(b, b'\t' | b'\n' | b'\r'));
            let domain_byte =
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_');
            assert_eq!(CanonicalDomainStop::TABLE[i], !domain_byte, "{b:#x}");
        }
    }

    /// The path-run search against its scalar twin: every byte value at
    /// several positions, after and away from a '/', with and without a
    /// segment start, for inputs of 0 to 40 bytes.
    #[test]
    fn path_run_simd_agrees_with_scalar() {
        fn check<S: ByteSet>(name: &str) {
            for len in 0..40usize {
                for b in 0..=255u8 {
                    for at in [0, 1, len / 2, len.saturating_sub(1)] {
                        for slash in [None, Some(at.wrapping_sub(1)), Some(3), Some(17)] {
                            let mut input = vec![b'a'; len];
                            if let Some(k) = slash.filter(|&k| k < len) {
                                input[k] = b'/';
                            }
                            if at < len {
                                input[at] = b;
                            }
                            for start in [0, 1, 2, 15, 16, 17].into_iter().filter(|&s| s <= len) {
                                for seg in [start, usize::MAX] {
                                    assert_eq!(
                                        find_path_run::<S>(&input, start, seg),
                                        find_path_run_scalar::<S>(&input, start, seg),
                                        "{name}: {input:?} from {start}, segment at {seg}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        check::<PathSet>("PathSet");
        check::<SpecialPathSet>("SpecialPathSet");
        check::<SpecialPathSetPercent>("SpecialPathSetPercent");
    }

    /// The SIMD search against the table scan: every set, every byte value,
    /// at every position of inputs from 0 to 40 bytes, from every start.
    #[test]
    fn simd_agrees_with_table_for_every_byte_and_position() {
        let domain: SetCase = (
            "CanonicalDomainStop",
            CanonicalDomainStop::TABLE,
            find::<CanonicalDomainStop>,
            find_scalar::<CanonicalDomainStop>,
        );
        for &(name, table, simd, scalar) in ALL.iter().chain([&domain]) {
            let filler = (0..=255u8)
                .find(|&b| !table[b as usize])
                .expect("a byte outside the set");
            for len in 0..40usize {
                for b in 0..=255u8 {
                    for at in [0, len / 2, len.saturating_sub(1)] {
                        let mut input = vec![filler; len];
                        if at < len {
                            input[at] = b;
                        }
                        for start in [0, 1, 7, 15, 16, 17].into_iter().filter(|&s| s <= len) {
                            assert_eq!(
                                simd(&input, start),
                                scalar(&input, start),
                                "{name}: len {len}, byte {b:#x} at {at}, start {start}"
                            );
                        }
                    }
                }
            }
        }
    }
}
