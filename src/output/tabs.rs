//! The `plain` and `tsv` writers: cells separated by tabs. A cell with
//! nothing to show is empty, so columns stay in place. Only the original
//! target can hold tabs or line ends (canonical URLs never do): it is
//! escaped with backslashes.

use super::{push_int, Cell, Row, Value};

/// Writes the cells of `row` in `columns`, tab-separated.
#[inline]
pub(crate) fn write(columns: &[Cell], row: &Row<'_>, out: &mut Vec<u8>) {
    for (i, &column) in columns.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        cell(column.value(row), out);
    }
}

/// One cell: empty for a value that is absent or null.
#[inline]
fn cell(value: Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::Absent | Value::Null => {}
        Value::Unsigned(n) => push_int(out, n),
        Value::Signed(n) | Value::Key(n) => push_int(out, n),
        Value::Clean(bytes) => out.extend_from_slice(bytes),
        Value::Text(bytes) => escape(bytes, out),
        Value::Rules(row) => rules(row, out),
    }
}

/// `--explain`'s cell: the rule names, comma-separated, or `-` for none.
fn rules(row: &Row<'_>, out: &mut Vec<u8>) {
    if row.rules.is_empty() {
        out.push(b'-');
    }
    let mut first = true;
    row.rule_labels(|name, id| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(name.as_bytes());
        if let Some(id) = id {
            out.push(b':');
            out.extend_from_slice(id);
        }
    });
}

/// `--rejects` lines: [`escape`], and every other control byte (C0, DEL)
/// as `\xNN`, so that a rejected line is one line of the file and `head
/// rejects.txt` cannot send an escape sequence to a terminal.
pub(crate) fn escape_controls(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'\\' | b'\t' | b'\n' | b'\r' => escape(&[b], out),
            0..=0x1F | 0x7F => {
                let [h, l] = crate::ascii::hex_upper(b);
                out.extend_from_slice(&[b'\\', b'x', h, l]);
            }
            _ => out.push(b),
        }
    }
}

/// TSV field escaping: `\` `\t` `\n` `\r` as backslash escapes, so a field
/// never splits a row or a column.
pub(crate) fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}
