//! Space-separated log fields where `[...]` and `"..."` group spaces: the
//! layout of S3 server access logs and Envoy's default access log, which
//! have too many fields, or fields in too many places, to read each with
//! its own code. [`Field`], a span of a line, is also what the W3C and CSV
//! readers' own splitters give.

use memchr::memchr;

use super::escape::quoted_end;

/// One field of a line: `line[start..end]` is its value, without the
/// brackets or quotes around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    pub start: usize,
    pub end: usize,
    /// True when the value was in double quotes.
    pub quoted: bool,
}

impl Field {
    /// The value in `line`.
    pub fn of<'a>(&self, line: &'a [u8]) -> &'a [u8] {
        &line[self.start..self.end]
    }
}

/// The fields of a line, left to right. A field that opens a quote or a
/// bracket it does not close ends the iteration with `Err` at the opening
/// byte.
pub(crate) struct Fields<'a> {
    line: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub fn new(line: &'a [u8]) -> Self {
        Fields { line, at: 0 }
    }

    /// The byte offset the next field is looked for from.
    pub fn position(&self) -> usize {
        self.at
    }
}

impl Iterator for Fields<'_> {
    type Item = Result<Field, usize>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.line;
        while self.at < line.len() && line[self.at] == b' ' {
            self.at += 1;
        }
        let start = self.at;
        let field = match *line.get(start)? {
            b'"' => match quoted_end(line, start) {
                Some(close) => Field {
                    start: start + 1,
                    end: close,
                    quoted: true,
                },
                None => {
                    self.at = line.len();
                    return Some(Err(start));
                }
            },
            b'[' => match memchr(b']', &line[start..]) {
                Some(close) => Field {
                    start: start + 1,
                    end: start + close,
                    quoted: false,
                },
                None => {
                    self.at = line.len();
                    return Some(Err(start));
                }
            },
            _ => {
                let end = memchr(b' ', &line[start..]).map_or(line.len(), |e| start + e);
                Field {
                    start,
                    end,
                    quoted: false,
                }
            }
        };
        // Past the closing quote or bracket, if any.
        self.at = if field.end < line.len() && (field.quoted || line[start] == b'[') {
            field.end + 1
        } else {
            field.end
        };
        Some(Ok(field))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(line: &[u8]) -> Vec<Result<String, usize>> {
        Fields::new(line)
            .map(|f| f.map(|f| String::from_utf8_lossy(f.of(line)).into_owned()))
            .collect()
    }

    #[test]
    fn groups_brackets_and_quotes() {
        assert_eq!(
            values(br#"a  [1 2] "x y" "" - z"#),
            vec![
                Ok("a".into()),
                Ok("1 2".into()),
                Ok("x y".into()),
                Ok("".into()),
                Ok("-".into()),
                Ok("z".into())
            ]
        );
        assert_eq!(values(b""), vec![]);
        assert_eq!(values(b"   "), vec![]);
    }

    #[test]
    fn unclosed_groups_are_errors_at_the_opening_byte() {
        assert_eq!(values(b"a \"b c"), vec![Ok("a".into()), Err(2)]);
        assert_eq!(values(b"a [b c"), vec![Ok("a".into()), Err(2)]);
    }
}
