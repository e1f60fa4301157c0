//! Small ASCII byte helpers shared by the log readers, the URL parser and the
//! canonicalization rules: hex digits, percent escapes, decimal numbers.
//!
//! Each was written several times before; one copy here keeps their edge
//! cases (overflow, empty input, a non-digit) the same everywhere. They are
//! tiny and sit on hot paths, so each is `#[inline]`.

/// The value of an ASCII hex digit (`0-9`, `a-f`, `A-F`), or `None`.
#[inline]
pub const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte written by the two hex digits that `s` starts with (`"4a…"` is
/// `0x4A`), or `None` when `s` does not start with two hex digits.
#[inline]
pub fn hex_pair(s: &[u8]) -> Option<u8> {
    match s {
        [h, l, ..] => Some(hex_value(*h)? << 4 | hex_value(*l)?),
        _ => None,
    }
}

/// Upper-case hex digits, by value (`%2F`, `\x1B`).
pub const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Lower-case hex digits, by value (`\u001b`, IPv6 pieces).
pub const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// The two upper-case hex digits of `b` (`0x2F` is `*b"2F"`).
#[inline]
pub fn hex_upper(b: u8) -> [u8; 2] {
    [
        HEX_UPPER[usize::from(b >> 4)],
        HEX_UPPER[usize::from(b & 15)],
    ]
}

/// The two lower-case hex digits of `b` (`0x1B` is `*b"1b"`).
#[inline]
pub fn hex_lower(b: u8) -> [u8; 2] {
    [
        HEX_LOWER[usize::from(b >> 4)],
        HEX_LOWER[usize::from(b & 15)],
    ]
}

/// Whether `s` starts with a percent escape: `%` and two hex digits.
#[inline]
pub fn is_percent_escape(s: &[u8]) -> bool {
    matches!(s, [b'%', h, l, ..] if h.is_ascii_hexdigit() && l.is_ascii_hexdigit())
}

/// Whether `s` is one or more ASCII decimal digits and nothing else.
#[inline]
pub fn is_decimal(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

/// Whether `line` is blank: only spaces and tabs, or nothing (the lines
/// that every log format skips as [`Skip::EmptyLine`](crate::log::Skip)).
#[inline]
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t')
}

/// Whether `s` starts with `prefix`, ASCII case-insensitively.
#[inline]
pub fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Whether `s` equals `lower`, a name with no ASCII upper-case letter,
/// ASCII case-insensitively (what `s.eq_ignore_ascii_case(lower)` says).
/// Names of 2 to 16 bytes (the index files', the parameter globs' parts)
/// are compared as two words of 2, 4 or 8 bytes that may overlap, `s`'s
/// lower-cased: four or five instructions a byte less than the byte loop,
/// which lower-cases both sides a byte at a time.
#[inline(always)]
pub fn eq_lower_ignore_case(s: &[u8], lower: &[u8]) -> bool {
    debug_assert!(!lower.iter().any(u8::is_ascii_uppercase));
    let len = s.len();
    if len != lower.len() {
        return false;
    }
    // The `N` bytes from `at`, zero-extended (no upper-case letter added).
    fn word<const N: usize>(b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w[..N].copy_from_slice(&b[at..at + N]);
        u64::from_le_bytes(w)
    }
    fn two<const N: usize>(s: &[u8], lower: &[u8]) -> bool {
        let end = s.len() - N;
        word_to_lower(word::<N>(s, 0)) == word::<N>(lower, 0)
            && word_to_lower(word::<N>(s, end)) == word::<N>(lower, end)
    }
    match len {
        0 => true,
        1 => s[0].to_ascii_lowercase() == lower[0],
        2..=3 => two::<2>(s, lower),
        4..=7 => two::<4>(s, lower),
        8..=16 => two::<8>(s, lower),
        _ => s.eq_ignore_ascii_case(lower),
    }
}

/// The eight bytes of `x` with their ASCII upper-case letters lower-cased.
#[inline(always)]
fn word_to_lower(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Each byte without its bit 7: no sum below carries into the next byte.
    let t = x & LOW7;
    // Bit 7 set: the byte is `A` or above (0x41 + 0x3f = 0x80) ...
    let from_a = t + 0x3f3f_3f3f_3f3f_3f3f;
    // ... and above `Z` (0x5b + 0x25 = 0x80).
    let past_z = t + 0x2525_2525_2525_2525;
    // An upper-case letter: from `A`, not past `Z`, and bit 7 clear.
    let upper = from_a & !past_z & !x & HIGH;
    x | upper >> 2
}

/// The value of a decimal number: one or more ASCII digits, nothing else
/// (no sign, no spaces). `None` when it is empty, has a non-digit, or does
/// not fit in a `u64`. Leading zeros are allowed.
#[inline]
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    // Nineteen digits always fit: no overflow check for them (a response
    // size of every record of a summary is read here).
    if digits.len() <= 19 {
        let mut n: u64 = 0;
        for &d in digits {
            let v = d.wrapping_sub(b'0');
            if v > 9 {
                return None;
            }
            n = n * 10 + u64::from(v);
        }
        return Some(n);
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

/// The decimal digits `s` starts with, at most `max` of them (`max` at most
/// 9, so that the value fits): how many there are and their value (`0` for
/// none). Leading zeros count as digits.
#[inline]
pub fn leading_decimal(s: &[u8], max: usize) -> (usize, u32) {
    debug_assert!(max <= 9);
    let mut value = 0u32;
    let mut n = 0;
    while n < s.len() && n < max && s[n].is_ascii_digit() {
        value = value * 10 + u32::from(s[n] - b'0');
        n += 1;
    }
    (n, value)
}

/// [`parse_u64`] with an optional leading `-`: a signed decimal that fits
/// in an `i64` (Unix times before 1970, window starts).
#[inline]
pub fn parse_i64(digits: &[u8]) -> Option<i64> {
    match digits.split_first() {
        Some((b'-', rest)) => parse_u64(rest).and_then(|n| 0i64.checked_sub_unsigned(n)),
        _ => parse_u64(digits).and_then(|n| i64::try_from(n).ok()),
    }
}

/// [`parse_u64`] limited to `u16` (at most 65535), as a port number.
#[inline]
pub fn parse_u16(digits: &[u8]) -> Option<u16> {
    parse_u64(digits).and_then(|n| u16::try_from(n).ok())
}

/// A port as the loggers write one: 1 to 5 decimal digits, at most 65535.
/// Unlike the URL Standard's port state (see [`parse_u16`]), a longer run of
/// leading zeros is not a port.
#[inline]
pub fn parse_port(digits: &[u8]) -> Option<u16> {
    if digits.len() > 5 {
        return None;
    }
    parse_u16(digits)
}

/// Appends the decimal digits of `n`, without leading zeros (`0` is `0`).
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, mut n: u32) {
    // u32::MAX has 10 digits.
    let mut buf = [0u8; 10];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_lower_ignore_case_is_eq_ignore_ascii_case() {
        let names: [&[u8]; 12] = [
            b"index.html",
            b"index.htm",
            b"default.aspx",
            b"abcdefgh",
            b"a",
            b"ab",
            b"_ga",
            b"utm_",
            b"gclid",
            b"_hsenc",
            b"srsltid",
            b"aspsessionid_and_more",
        ];
        let mut long = b"0123456789abcdefghij".to_vec();
        let mut cases: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        long.truncate(16);
        for name in names.iter().copied().chain([&long[..]]) {
            // Every byte at every place, and the name in upper case.
            for at in 0..name.len() {
                for b in 0..=255u8 {
                    let mut s = name.to_vec();
                    s[at] = b;
                    cases.push((s, name.to_vec()));
                }
            }
            cases.push((name.to_ascii_uppercase(), name.to_vec()));
            cases.push((name[1..].to_vec(), name.to_vec()));
        }
        let mut equal = 0;
        for (s, name) in &cases {
            let want = s.eq_ignore_ascii_case(name);
            assert_eq!(eq_lower_ignore_case(s, name), want, "{}", s.escape_ascii());
            equal += usize::from(want);
        }
        // The comparison saw both answers.
        assert!(equal > 0 && equal < cases.len());
    }

    #[test]
    fn hex_value_of_every_byte() {
        for b in 0..=255u8 {
            let want = (b as char).to_digit(16).map(|d| d as u8);
            assert_eq!(hex_value(b), want, "{b:#04x}");
        }
    }

    #[test]
    fn hex_pairs_and_escapes() {
        assert_eq!(hex_pair(b"4a"), Some(0x4a));
        assert_eq!(hex_pair(b"Ff/"), Some(0xff));
        assert_eq!(hex_pair(b"00"), Some(0));
        assert_eq!(hex_pair(b""), None);
        assert_eq!(hex_pair(b"4"), None);
        assert_eq!(hex_pair(b"4g"), None);
        assert_eq!(hex_pair(b"g4"), None);

        assert!(is_percent_escape(b"%2F"));
        assert!(is_percent_escape(b"%2fx"));
        assert!(!is_percent_escape(b"%2"));
        assert!(!is_percent_escape(b"%"));
        assert!(!is_percent_escape(b""));
        assert!(!is_percent_escape(b"%zz"));
        assert!(!is_percent_escape(b"x2F"));
    }

    #[test]
    fn decimal_and_case_tests() {
        assert!(is_decimal(b"0"));
        assert!(is_decimal(b"0123456789"));
        assert!(!is_decimal(b""));
        assert!(!is_decimal(b"12a"));
        assert!(!is_decimal(b"-1"));
        assert!(!is_decimal(b" 1"));

        assert!(starts_with_ignore_case(b"#Fields: a", b"#fields:"));
        assert!(starts_with_ignore_case(b"abc", b""));
        assert!(starts_with_ignore_case(b"ABC", b"abc"));
        assert!(!starts_with_ignore_case(b"ab", b"abc"));
        assert!(!starts_with_ignore_case(b"abd", b"abc"));
    }

    #[test]
    fn hex_digits_of_every_byte() {
        for b in 0..=255u8 {
            assert_eq!(hex_upper(b), *format!("{b:02X}").as_bytes(), "{b:#04x}");
            assert_eq!(hex_lower(b), *format!("{b:02x}").as_bytes(), "{b:#04x}");
            assert_eq!(hex_pair(&hex_upper(b)), Some(b));
        }
    }

    #[test]
    fn blank_lines() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t  \t"));
        assert!(!is_blank(b" x "));
        assert!(!is_blank(b"\r"));
        assert!(!is_blank(b"\n"));
        assert!(!is_blank(b"\xEF\xBB\xBF"));
    }

    #[test]
    fn leading_decimal_edges() {
        assert_eq!(leading_decimal(b"", 5), (0, 0));
        assert_eq!(leading_decimal(b"x1", 5), (0, 0));
        assert_eq!(leading_decimal(b"8080/", 5), (4, 8080));
        assert_eq!(leading_decimal(b"00443", 5), (5, 443));
        // At most `max` digits: the rest is left to the caller.
        assert_eq!(leading_decimal(b"123456", 5), (5, 12345));
        assert_eq!(leading_decimal(b"99999", 5), (5, 99_999));
        assert_eq!(leading_decimal(b"999999999", 9), (9, 999_999_999));
    }

    #[test]
    fn parse_u64_edges() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"007"), Some(7));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_u64(b"0000000000000000000012"), Some(12));
        assert_eq!(parse_u64(b"12/4"), None);
        assert_eq!(parse_u64(b"1:"), None);
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999999"), None);
        assert_eq!(parse_u64(b"000000000000000000000000001"), Some(1));
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"+1"), None);
        assert_eq!(parse_u64(b"1 "), None);
        assert_eq!(parse_u64(b"1x"), None);
    }

    #[test]
    fn parse_i64_edges() {
        assert_eq!(parse_i64(b"-86400"), Some(-86_400));
        assert_eq!(parse_i64(b"1790812800"), Some(1_790_812_800));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        for bad in [&b""[..], b"-", b"--1", b"+1", b"1-"] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_u16_and_port_edges() {
        assert_eq!(parse_u16(b"65535"), Some(65535));
        assert_eq!(parse_u16(b"65536"), None);
        assert_eq!(parse_u16(b"0000080"), Some(80));
        assert_eq!(parse_u16(b""), None);
        assert_eq!(parse_u16(b"8o"), None);

        assert_eq!(parse_port(b"0"), Some(0));
        assert_eq!(parse_port(b"443"), Some(443));
        assert_eq!(parse_port(b"00080"), Some(80));
        assert_eq!(parse_port(b"65535"), Some(65535));
        assert_eq!(parse_port(b"65536"), None);
        assert_eq!(parse_port(b"99999"), None);
        // Six digits are not a logged port, even with a small value.
        assert_eq!(parse_port(b"000080"), None);
        assert_eq!(parse_port(b""), None);
        assert_eq!(parse_port(b"-"), None);
        assert_eq!(parse_port(b"8 0"), None);
    }

    #[test]
    fn push_decimal_round_trips() {
        for n in [0, 1, 9, 10, 99, 100, 65535, 1_000_000, u32::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }
}
