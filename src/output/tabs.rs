//! The `plain` and `tsv` writers: cells separated by tabs. A cell with
//! nothing to show is empty, so columns stay in place. Only the original
//! target can hold tabs or line ends (canonical URLs never do): it is
//! escaped with backslashes.

use super::{push_int, Column, Row};
use crate::log::RecordColumn;

/// Writes the cells of `row` in `columns`, tab-separated.
#[inline]
pub(crate) fn write(columns: &[Column], row: &Row<'_>, out: &mut Vec<u8>) {
    for (i, &column) in columns.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        cell(column, row, out);
    }
}

#[inline]
fn cell(column: Column, row: &Row<'_>, out: &mut Vec<u8>) {
    match column {
        Column::Line => push_int(out, row.line),
        Column::Field => {
            if let Some(f) = row.field {
                out.extend_from_slice(super::jsonl::field_name(f).as_bytes());
            }
        }
        Column::Url => out.extend_from_slice(row.url.unwrap_or_default()),
        Column::Key => {
            if let Some(k) = row.url_key() {
                push_int(out, k);
            }
        }
        Column::TargetOrReason => match row.url {
            Some(_) => escape(row.original, out),
            None => out.extend_from_slice(row.reason.unwrap_or_default().as_bytes()),
        },
        Column::Reason => {
            if row.url.is_none() {
                out.extend_from_slice(row.reason.unwrap_or_default().as_bytes());
            }
        }
        Column::Target => escape(row.original, out),
        Column::Dedup => {
            if row.url.is_some() {
                out.extend_from_slice(row.dedup.unwrap_or_default());
            }
        }
        Column::DedupKey => {
            if let (Some(_), Some(d)) = (row.url, row.dedup) {
                push_int(out, super::key(d));
            }
        }
        Column::Rules => {
            if row.url.is_some() {
                rules(row, out);
            }
        }
        Column::Count => push_int(out, row.count),
        Column::Record(c) => record_cell(c, row, out),
    }
}

/// `--explain`'s cell: the rule names, comma-separated, or `-` for none.
/// A `--with` cell: empty when the record lacks the field.
fn record_cell(c: RecordColumn, row: &Row<'_>, out: &mut Vec<u8>) {
    match c {
        RecordColumn::Status => {
            if let Some(n) = row.status {
                push_int(out, n);
            }
        }
        RecordColumn::Bytes => {
            if let Some(n) = row.bytes {
                push_int(out, n);
            }
        }
        RecordColumn::Time => {
            if let Some(n) = row.time {
                push_int(out, n);
            }
        }
        RecordColumn::Method => escape(row.method.unwrap_or_default(), out),
        RecordColumn::Client => escape(row.client.unwrap_or_default(), out),
        RecordColumn::Host => escape(row.host.unwrap_or_default(), out),
        RecordColumn::Input => escape(row.input.unwrap_or_default().as_bytes(), out),
    }
}

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
