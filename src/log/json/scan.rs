//! The byte-level JSON scanner under the walk: it reads keys and strings
//! (escapes undone) and skips any other value while checking that it is
//! JSON, with the nesting of a skipped value kept in one `u128`. Every error
//! is a [`Fault`]: what went wrong and the byte offset where it was seen.

use memchr::{memchr, memchr2};

use crate::log::info::At;
use crate::log::LineError;

/// A problem in a line and the byte offset where it was seen.
pub(super) type Fault = (LineError, usize);

/// Reads the key whose opening quote should be at `pos`, in place when it
/// has no escape, else unescaped into `scratch`; returns it and the offset
/// after its closing quote.
pub(super) fn read_key<'a>(
    line: &'a [u8],
    pos: usize,
    scratch: &'a mut Vec<u8>,
) -> Result<(&'a [u8], usize), Fault> {
    match line.get(pos) {
        Some(b'"') => {}
        Some(_) => return Err((LineError::BadJson, pos)),
        None => return Err((LineError::Unterminated, line.len())),
    }
    let start = pos + 1;
    match memchr2(b'"', b'\\', line.get(start..).unwrap_or(&[])) {
        None => Err((LineError::Unterminated, pos)),
        Some(len) if line.get(start + len) == Some(&b'"') => {
            Ok((line.get(start..start + len).unwrap_or(&[]), start + len + 1))
        }
        Some(_) => {
            scratch.clear();
            let end = unescape_string(line, pos, scratch)?;
            Ok((scratch, end))
        }
    }
}

/// Skips the `:` after a key at `pos` and the whitespace around it;
/// returns the offset of the value.
pub(super) fn value_start(line: &[u8], pos: usize) -> Result<usize, Fault> {
    let pos = skip_whitespace(line, pos);
    match line.get(pos) {
        Some(b':') => Ok(skip_whitespace(line, pos + 1)),
        Some(_) => Err((LineError::BadJson, pos)),
        None => Err((LineError::Unterminated, line.len())),
    }
}

/// Where the bytes of the string whose opening quote is at `open` and
/// which ends before `end` are, when it has no escapes.
pub(super) fn raw_span(line: &[u8], open: usize, end: usize) -> At {
    let (start, stop) = (open + 1, end.checked_sub(1)?);
    let bytes = line.get(start..stop)?;
    memchr(b'\\', bytes).is_none().then_some((start, stop))
}

/// JSON whitespace: space, tab, line feed, carriage return.
pub(super) fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

pub(super) fn skip_whitespace(line: &[u8], mut pos: usize) -> usize {
    while line.get(pos).is_some_and(|&b| is_whitespace(b)) {
        pos += 1;
    }
    pos
}

/// Copies the string whose opening quote is at `open` into `out`, escapes
/// undone; returns the offset after its closing quote.
pub(super) fn unescape_string(line: &[u8], open: usize, out: &mut Vec<u8>) -> Result<usize, Fault> {
    let mut pos = open + 1;
    loop {
        let rest = line.get(pos..).unwrap_or(&[]);
        let Some(len) = memchr2(b'"', b'\\', rest) else {
            return Err((LineError::Unterminated, open));
        };
        out.extend_from_slice(rest.get(..len).unwrap_or(&[]));
        pos += len;
        if rest.get(len) == Some(&b'"') {
            return Ok(pos + 1);
        }
        pos = unescape_one(line, pos, open, out)?;
    }
}

/// Undoes the escape whose backslash is at `at`; returns the offset after it.
fn unescape_one(line: &[u8], at: usize, open: usize, out: &mut Vec<u8>) -> Result<usize, Fault> {
    let Some(&kind) = line.get(at + 1) else {
        return Err((LineError::Unterminated, open));
    };
    let byte = match kind {
        b'"' | b'\\' | b'/' => kind,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => return unescape_unicode(line, at, open, out),
        // nginx's own escape, not JSON's (see "Strings" on `JsonPaths`).
        b'x' => {
            let value = hex_value(line, at + 2, 2, open, at)?;
            out.push(value as u8);
            return Ok(at + 4);
        }
        _ => return Err((LineError::BadJson, at)),
    };
    out.push(byte);
    Ok(at + 2)
}

/// Undoes `\uXXXX` at `at`, with the `\uXXXX` after it when the two are a
/// surrogate pair; a lone surrogate becomes U+FFFD.
fn unescape_unicode(
    line: &[u8],
    at: usize,
    open: usize,
    out: &mut Vec<u8>,
) -> Result<usize, Fault> {
    let unit = hex_value(line, at + 2, 4, open, at)?;
    let mut end = at + 6;
    let code = match unit {
        0xD800..=0xDBFF if line.get(end..end + 2) == Some(b"\\u") => {
            match hex_value(line, end + 2, 4, open, end)? {
                low @ 0xDC00..=0xDFFF => {
                    end += 6;
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
                // Not a low half: this one is lone, the next is read on its own.
                _ => 0xFFFD,
            }
        }
        0xD800..=0xDFFF => 0xFFFD,
        _ => unit,
    };
    let code = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    out.extend_from_slice(code.encode_utf8(&mut [0; 4]).as_bytes());
    Ok(end)
}

/// The value of the `count` hex digits at `from`, for the escape at `at` in
/// the string opened at `open`.
fn hex_value(line: &[u8], from: usize, count: usize, open: usize, at: usize) -> Result<u32, Fault> {
    let Some(digits) = line.get(from..from + count) else {
        // Only a line that ends mid-escape lacks the bytes.
        return Err((LineError::Unterminated, open));
    };
    let mut value = 0u32;
    for &digit in digits {
        let Some(nibble) = crate::ascii::hex_value(digit) else {
            return Err((LineError::BadJson, at));
        };
        value = value << 4 | u32::from(nibble);
    }
    Ok(value)
}

/// Returns the offset after the string whose opening quote is at `open`,
/// without undoing its escapes (a backslash only hides the byte after it).
fn skip_string(line: &[u8], open: usize) -> Result<usize, Fault> {
    let mut pos = open + 1;
    loop {
        let Some(rest) = line.get(pos..) else {
            return Err((LineError::Unterminated, open));
        };
        let Some(len) = memchr2(b'"', b'\\', rest) else {
            return Err((LineError::Unterminated, open));
        };
        if rest.get(len) == Some(&b'"') {
            return Ok(pos + len + 1);
        }
        pos += len + 2;
    }
}

/// Bytes that can be part of a number or of `true`, `false`, `null`: the
/// scanner takes their whole run, then checks it.
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// Returns the offset after the number or literal at `pos`.
fn skip_scalar(line: &[u8], pos: usize) -> Result<usize, Fault> {
    let rest = line.get(pos..).unwrap_or(&[]);
    let len = rest
        .iter()
        .position(|&b| !is_scalar_byte(b))
        .unwrap_or(rest.len());
    let token = rest.get(..len).unwrap_or(&[]);
    let is_number_byte = |b: &u8| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
    let valid = match token.first() {
        Some(b'-' | b'0'..=b'9') => token.iter().all(is_number_byte),
        _ => matches!(token, b"true" | b"false" | b"null"),
    };
    if valid {
        Ok(pos + len)
    } else {
        Err((LineError::BadJson, pos))
    }
}

/// How deep a skipped value may nest.
const MAX_NESTING: u32 = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// The containers open in a skipped value, one bit each (1 = object),
/// innermost highest. A fixed `u128` so that no input can make it grow.
#[derive(Clone, Copy, Default)]
pub(super) struct Nesting {
    pub(super) objects: u128,
    pub(super) depth: u32,
}

impl Nesting {
    /// Opens a container; `None` when that would nest too deep.
    fn push(&mut self, container: Container) -> Option<()> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        let bit = 1u128 << self.depth;
        match container {
            Container::Object => self.objects |= bit,
            Container::Array => self.objects &= !bit,
        }
        self.depth += 1;
        Some(())
    }

    fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn innermost(&self) -> Option<Container> {
        let depth = self.depth.checked_sub(1)?;
        Some(match self.objects >> depth & 1 {
            1 => Container::Object,
            _ => Container::Array,
        })
    }
}

/// What the skipper expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    Value,
    ValueOrClose,
    KeyOrClose,
    Key,
    CommaOrClose,
}

/// Returns the offset after the value that starts at `pos`.
pub(super) fn skip_value(line: &[u8], pos: usize) -> Result<usize, Fault> {
    skip_from(line, pos, Nesting::default(), Expect::Value)
}

/// Skips from `pos`, inside the containers of `nesting`, expecting `expect`,
/// until every container is closed; returns the offset after that.
pub(super) fn skip_from(
    line: &[u8],
    mut pos: usize,
    mut nesting: Nesting,
    mut expect: Expect,
) -> Result<usize, Fault> {
    loop {
        pos = skip_whitespace(line, pos);
        let Some(&b) = line.get(pos) else {
            return Err((LineError::Unterminated, line.len()));
        };
        let bad = (LineError::BadJson, pos);
        match (expect, b) {
            (Expect::ValueOrClose, b']') | (Expect::KeyOrClose, b'}') => {
                pos += 1;
                nesting.pop();
                expect = Expect::CommaOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'"') => {
                pos = skip_string(line, pos)?;
                expect = Expect::CommaOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'{') => {
                nesting.push(Container::Object).ok_or(bad)?;
                pos += 1;
                expect = Expect::KeyOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, b'[') => {
                nesting.push(Container::Array).ok_or(bad)?;
                pos += 1;
                expect = Expect::ValueOrClose;
            }
            (Expect::Value | Expect::ValueOrClose, _) => {
                pos = skip_scalar(line, pos)?;
                expect = Expect::CommaOrClose;
            }
            (Expect::Key | Expect::KeyOrClose, b'"') => {
                pos = skip_whitespace(line, skip_string(line, pos)?);
                match line.get(pos) {
                    Some(b':') => pos += 1,
                    Some(_) => return Err((LineError::BadJson, pos)),
                    None => return Err((LineError::Unterminated, line.len())),
                }
                expect = Expect::Value;
            }
            (Expect::CommaOrClose, _) => {
                match (b, nesting.innermost()) {
                    (b',', Some(Container::Object)) => expect = Expect::Key,
                    (b',', Some(Container::Array)) => expect = Expect::Value,
                    (b'}', Some(Container::Object)) | (b']', Some(Container::Array)) => {
                        nesting.pop()
                    }
                    _ => return Err(bad),
                }
                pos += 1;
            }
            (Expect::Key | Expect::KeyOrClose, _) => return Err(bad),
        }
        if nesting.depth == 0 && expect == Expect::CommaOrClose {
            return Ok(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::json::tests::{paths, run, target_of};
    use crate::log::json::JsonPreset;
    use crate::log::{Field, Line};

    #[test]
    fn json_escapes_are_undone() {
        let line = br#"{"t":"/a\"b\\c\/d\b\f\n\r\te"}"#;
        assert_eq!(target_of(line).unwrap(), b"/a\"b\\c/d\x08\x0c\n\r\te");
        assert_eq!(
            target_of(br#"{"t":"\u0041\u00e9\u20AC"}"#).unwrap(),
            "Aé€".as_bytes()
        );
        assert_eq!(target_of(br#"{"t":"\u0000"}"#).unwrap(), b"\0");
    }

    #[test]
    fn surrogate_pairs_join_and_lone_halves_become_replacement() {
        assert_eq!(
            target_of(br#"{"t":"\ud83d\ude00"}"#).unwrap(),
            "😀".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\uD83D\uDE00x"}"#).unwrap(),
            "😀x".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"a\ud83db"}"#).unwrap(),
            "a\u{FFFD}b".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\u0041"}"#).unwrap(),
            "\u{FFFD}A".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ude00"}"#).unwrap(),
            "\u{FFFD}".as_bytes()
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\ud83d\ude00"}"#).unwrap(),
            "\u{FFFD}😀".as_bytes()
        );
    }

    #[test]
    fn bad_escapes_are_errors() {
        assert_eq!(
            target_of(br#"{"t":"\q"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\u12G4"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\xZZ"}"#),
            Err(Line::Error(LineError::BadJson, 6))
        );
        assert_eq!(
            target_of(br#"{"t":"\ud83d\uZZZZ"}"#),
            Err(Line::Error(LineError::BadJson, 12))
        );
        assert_eq!(
            target_of(br#"{"t":"\u12"#),
            Err(Line::Error(LineError::Unterminated, 5))
        );
        assert_eq!(
            target_of(br#"{"t":"\"#),
            Err(Line::Error(LineError::Unterminated, 5))
        );
    }

    #[test]
    fn nginx_hex_escapes_and_raw_bytes() {
        let line = b"{\"request\":\"GET /a\\x22b\\x5Cc\\xFF HTTP/1.1\"}";
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target(line), b"/a\"b\\c\xFF");
        // Raw bytes that are not UTF-8, in the wanted value and in skipped ones.
        let line = b"{\"ua\":\"\xFF\xFE\x80\",\"request_uri\":\"/\xC3\xA9\xFF?\xFE\"}";
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target(line), b"/\xC3\xA9\xFF?\xFE");
    }

    #[test]
    fn invalid_json_is_an_error_at_its_offset() {
        use LineError::{BadJson, Unterminated};
        let cases: &[(&[u8], LineError, usize)] = &[
            (b"{", Unterminated, 1),
            (b"{ ", Unterminated, 2),
            (b"{,}", BadJson, 1),
            (b"{\"a\"}", BadJson, 4),
            (b"{\"a\":}", BadJson, 5),
            (b"{\"a\":1,}", BadJson, 7),
            (b"{\"a\" 1}", BadJson, 5),
            (b"{\"a\":1 \"b\":2}", BadJson, 7),
            (b"{\"a\":[1,]}", BadJson, 8),
            (b"{\"a\":[1}", BadJson, 7),
            (b"{\"a\":{\"b\":1]}", BadJson, 11),
            (b"{\"a\":tru}", BadJson, 5),
            (b"{\"a\":nulll}", BadJson, 5),
            (b"{\"a\":x}", BadJson, 5),
            (b"{\"a\":\"x}", Unterminated, 5),
            (b"{\"a", Unterminated, 1),
            (b"{\"a\":", Unterminated, 5),
            (b"{\"a\":[", Unterminated, 6),
            (b"{\"a\":12", Unterminated, 7),
            (b"{\"a\":1}x", BadJson, 7),
            (b"{\"a\":1}}", BadJson, 7),
            (b"{]", BadJson, 1),
        ];
        for &(line, error, at) in cases {
            let (result, _) = run(JsonPreset::Nginx.paths(), line, Field::Both);
            assert_eq!(
                result,
                Line::Error(error, at),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Trailing whitespace is fine; so are all kinds of skipped values.
        let line = br#"{"a":[1,-2.5e+3,true,false,null,{"b":[]},[],{}],"request_uri":"/"}  "#;
        assert_eq!(
            run(JsonPreset::Nginx.paths(), line, Field::Request).0,
            Line::Record
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut line = b"{\"a\":".to_vec();
        line.extend(std::iter::repeat_n(b'[', 100_000));
        let (result, _) = run(paths("t"), &line, Field::Request);
        assert_eq!(result, Line::Error(LineError::BadJson, 5 + 128));
        let mut line = b"{\"a\":".to_vec();
        line.extend(std::iter::repeat_n(b"{\"b\":[".as_slice(), 60).flatten());
        line.extend(std::iter::repeat_n(b"]}".as_slice(), 60).flatten());
        line.extend_from_slice(b",\"t\":\"/deep\"}");
        assert_eq!(target_of(&line).unwrap(), b"/deep");
    }
}
