//! `plain`: one URL or request target per line, which is the record's
//! target whatever field is asked for.

use super::ReadOptions;
use super::{Extracted, Field, Line, LogFormat, LogReader, Skip};
use crate::ascii;

/// Reads `plain` lines.
#[derive(Clone, Debug, Default)]
pub(crate) struct PlainReader;

impl LogReader for PlainReader {
    fn new(_: LogFormat, _: &ReadOptions) -> Self {
        PlainReader
    }

    fn read(&mut self, line: &[u8], _: Field, out: &mut Extracted) -> Line {
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        out.lend_target(line, line);
        out.has_target = true;
        Line::Record
    }

    /// A URL: spaces, tabs and `\r` around it (a second `\r` the line end
    /// left, a trailing space) are the URL parser's to strip; other control
    /// bytes are no list of URLs.
    fn shape(line: &[u8]) -> Option<u8> {
        let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let url = match line.iter().position(|b| !blank(b)) {
            Some(start) => {
                let end = line
                    .iter()
                    .rposition(|b| !blank(b))
                    .map_or(start, |e| e + 1);
                &line[start..end]
            }
            None => &line[..0],
        };
        (!url.iter().any(|&b| b <= b' ' || b == 0x7f)).then_some(0)
    }
}
