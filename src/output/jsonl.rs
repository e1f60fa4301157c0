//! The JSON Lines writer: one object per row. A value the row does not
//! have is left out (a rejected line has no `url`), except the dedup key of
//! a URL the key profile rejected, which is `null`. The 64-bit keys are
//! strings (`"key":"-3"`), so that no JSON reader rounds them.

use crate::log::Field;

use super::{push_int, Cell, Row, Value};

/// `request` or `referer`.
pub(crate) fn field_name(f: Field) -> &'static str {
    match f {
        Field::Referer => "referer",
        Field::Request | Field::Both => "request",
    }
}

/// Writes `row` as one JSON object (without its line end).
pub(crate) fn write(columns: &[Cell], row: &Row<'_>, out: &mut Vec<u8>) {
    out.push(b'{');
    let mut first = true;
    for &column in columns {
        let value = column.value(row);
        if let Value::Absent = value {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(column.name().as_bytes());
        out.extend_from_slice(b"\":");
        json(value, out);
    }
    out.push(b'}');
}

/// One value (an absent one is left out by [`write`], with its key).
fn json(value: Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::Absent | Value::Null => out.extend_from_slice(b"null"),
        Value::Unsigned(n) => push_int(out, n),
        Value::Signed(n) => push_int(out, n),
        Value::Key(k) => key(k, out),
        Value::Clean(bytes) | Value::Text(bytes) => string(bytes, out),
        Value::Rules(row) => {
            out.push(b'[');
            let mut first = true;
            row.rule_labels(|name, id| {
                if !first {
                    out.push(b',');
                }
                first = false;
                // `name:id` as one string, written in parts: no copy to
                // join them first.
                out.push(b'"');
                string_body(name.as_bytes(), out);
                if let Some(id) = id {
                    out.push(b':');
                    string_body(id, out);
                }
                out.push(b'"');
            });
            out.push(b']');
        }
    }
}

/// A 64-bit key as a JSON string (`"-3"`): jq, JavaScript and most JSON
/// readers take numbers as doubles, which lose digits above 2^53.
fn key(k: i64, out: &mut Vec<u8>) {
    out.push(b'"');
    push_int(out, k);
    out.push(b'"');
}

/// A JSON string of `bytes`. JSON cannot carry raw bytes: invalid UTF-8
/// becomes U+FFFD (canonical URLs are ASCII, so only an original target can
/// be affected). Printable ASCII without `"` and `\` (every canonical URL,
/// most targets) is copied whole.
pub fn string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    string_body(bytes, out);
    out.push(b'"');
}

/// [`string`] without its quotes.
fn string_body(bytes: &[u8], out: &mut Vec<u8>) {
    if bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.extend_from_slice(bytes);
    } else {
        escaped(bytes, out);
    }
}

#[cold]
fn escaped(bytes: &[u8], out: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    let [h, l] = crate::ascii::hex_lower(c as u8);
                    out.extend_from_slice(&[b'\\', b'u', b'0', b'0', h, l]);
                }
                c => {
                    let mut utf8 = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                }
            }
        }
        if !chunk.invalid().is_empty() {
            // One U+FFFD per invalid byte, so their number shows.
            for _ in chunk.invalid() {
                out.extend_from_slice("\u{FFFD}".as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_what_they_must() {
        let mut v = Vec::new();
        string(b"http://a/\"\\", &mut v);
        assert_eq!(v, br#""http://a/\"\\""#);
        v.clear();
        string(b"a\tb\x01\x7f\xff\xc3\xa9", &mut v);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "\"a\\tb\\u0001\\u007f\u{FFFD}é\""
        );
    }
}
