//! CSV and TSV logs with a header row: columns found by name.
//!
//! The format is documented on [`CsvColumns`], which says which column
//! holds what.

use std::str::FromStr;
use std::sync::Arc;

use memchr::memchr;

// One field of a line (inside the quotes when `quoted`).
use super::fields::Field as Span;
use super::ReadOptions;
use super::{
    Extract, Extracted, Field, HeaderLine, Line, LineError, LogFormat, LogReader, Scheme, Skip,
};
use crate::ascii;

/// Column roles, in `--columns` order.
const URL: usize = 0;
const HOST: usize = 1;
const METHOD: usize = 2;
const REFERER: usize = 3;
// The record's other fields (with `method`), read only when they are
// wanted ([`Extracted::want_info`]).
const STATUS: usize = 4;
const BYTES: usize = 5;
const TIME: usize = 6;
const CLIENT: usize = 7;
const ROLES: usize = 8;

/// The `--columns` keys of the roles.
const KEYS: [&str; ROLES] = [
    "url", "host", "method", "referer", "status", "bytes", "time", "client",
];

/// The column of a role that the layout lacks.
const ABSENT: usize = usize::MAX;

/// The UTF-8 byte order mark a spreadsheet may put before the header row.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The header of a CSV or TSV log: its first non-blank line.
pub(crate) const HEADER_LINE: HeaderLine = HeaderLine {
    marker: b'\n',
    is_header: no_marked_header,
    directives: &[],
    first_line: true,
};

fn no_marked_header(_: &[u8]) -> bool {
    false
}

/// A known kind of CSV/TSV log, recognised by the names in its header row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CsvPreset {
    Gcs,
    Nasa,
}

impl CsvPreset {
    const ALL: [CsvPreset; 2] = [CsvPreset::Gcs, CsvPreset::Nasa];

    fn name(self) -> &'static str {
        match self {
            CsvPreset::Gcs => "gcs",
            CsvPreset::Nasa => "nasa",
        }
    }

    /// Names the header row must all have for the preset to fit.
    fn signature(self) -> &'static [&'static [u8]] {
        match self {
            CsvPreset::Gcs => &[
                b"time_micros",
                b"cs_method",
                b"cs_uri",
                b"cs_host",
                b"s_request_id",
            ],
            CsvPreset::Nasa => &[
                b"host",
                b"logname",
                b"time",
                b"method",
                b"url",
                b"response",
                b"bytes",
            ],
        }
    }

    /// The column of each role (`--columns` order).
    fn names(self) -> [Option<&'static [u8]>; ROLES] {
        match self {
            CsvPreset::Gcs => [
                Some(b"cs_uri"),
                Some(b"cs_host"),
                Some(b"cs_method"),
                Some(b"cs_referer"),
                Some(b"sc_status"),
                Some(b"sc_bytes"),
                Some(b"time_micros"),
                Some(b"c_ip"),
            ],
            // `host` is the client: not a column of the URL.
            CsvPreset::Nasa => [
                Some(b"url"),
                None,
                Some(b"method"),
                None,
                Some(b"response"),
                Some(b"bytes"),
                Some(b"time"),
                Some(b"host"),
            ],
        }
    }

    /// The scheme of the preset's URLs, when the log's service says it.
    fn scheme(self) -> Option<Scheme> {
        match self {
            CsvPreset::Gcs => Some(Scheme::Https),
            CsvPreset::Nasa => None,
        }
    }
}

/// Which columns of a CSV or TSV log hold the URL and the rest
/// (`--columns`): a comma list of `role=NAME` (roles `url`, `host`,
/// `method`, `referer`, `status`, `bytes`, `time`, `client`; names are matched ASCII
/// case-insensitively, `-` unsets a role) and at most one preset name
/// (`gcs`, `nasa`) whose columns the others override. A `url` column is
/// required.
///
/// The first line that is not blank names the columns; every line after it
/// is a record. Which column holds what comes from `--columns`
/// ([`CsvColumns`]), or from a preset recognised by the header row:
///
/// | preset | header row | the URL |
/// |---|---|---|
/// | `gcs` | Google Cloud Storage usage logs: `"time_micros","c_ip",...,"cs_method","cs_uri","sc_status",...,"cs_host","cs_referer",...,"s_request_id",...` | `https://` + `cs_host` + `cs_uri` (path and query, as Google documents it) |
/// | `nasa` | a TSV export of the NASA Kennedy Space Center logs: `host logname time method url response bytes` | `url`, path-only: `host` is the *client*, never the URL's host |
///
/// ```text
/// --columns url=cs_uri,host=cs_host,method=cs_method,referer=cs_referer
/// --columns gcs,referer=-        (a preset; `NAME` of `-` drops a column)
/// ```
///
/// # Fields
///
/// - CSV follows RFC 4180: a field that starts with `"` is quoted, `""` in
///   it is one `"`, and it may hold commas; after its closing quote comes a
///   comma or the line end ([`LineError::Malformed`] at the byte otherwise,
///   [`LineError::Unterminated`] at the opening quote when it is not
///   closed: a quoted line break, which RFC 4180 allows, splits the record
///   and is reported so). A `"` inside an unquoted field is data.
/// - TSV (IANA `text/tab-separated-values`) has no quoting: fields end at
///   tabs.
/// - An empty value and `-` are absent. Fields after the last named column
///   are not read, so a line may have more fields than the header (the NASA
///   export ends each line with two empty ones); a line with fewer than the
///   wanted columns need is [`LineError::FieldsMismatch`] at its end.
/// - A later line equal to the header row (files concatenated) is
///   [`Skip::Header`].
///
/// # Results
///
/// Without a URL column (none given, no preset recognised), or when a
/// column given by `--columns` is not in the header, every record is
/// [`LineError::MissingField`] at 0. An absent URL is [`Skip::NoRequest`]; a
/// method of `CONNECT` makes the target authority-form. With
/// [`Field::Referer`], no referer column is `MissingField` and an absent
/// referer is [`Skip::EmptyField`].
///
/// # Example
///
/// ```
/// use canonurl::log::CsvColumns;
///
/// let c: CsvColumns = "url=path,host=server".parse().unwrap();
/// assert!("gcs,referer=-".parse::<CsvColumns>().is_ok());
/// let e = "host=server".parse::<CsvColumns>().unwrap_err();
/// assert!(e.contains("url"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvColumns {
    preset: Option<CsvPreset>,
    /// The name of each role's column (`None`: no such column).
    names: [Option<Box<[u8]>>; ROLES],
    /// Whether each role was given by name (the header must then have it);
    /// a preset's columns other than the URL may be absent.
    explicit: [bool; ROLES],
}

impl FromStr for CsvColumns {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, String> {
        let mut preset = None;
        let mut set: [Option<Option<Box<[u8]>>>; ROLES] = Default::default();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match item.split_once('=') {
                Some((key, name)) => {
                    let key = key.trim();
                    let Some(role) = KEYS.iter().position(|k| k.eq_ignore_ascii_case(key)) else {
                        return Err(format!(
                            "unknown column role {key:?} (roles: {})",
                            KEYS.join(", ")
                        ));
                    };
                    let name = name.trim();
                    if name.is_empty() {
                        return Err(format!("{key}= needs a column name (or - for none)"));
                    }
                    set[role] = Some((name != "-").then(|| name.as_bytes().into()));
                }
                None => {
                    let Some(p) = CsvPreset::ALL
                        .into_iter()
                        .find(|p| p.name().eq_ignore_ascii_case(item))
                    else {
                        return Err(format!(
                            "{item:?} is neither role=NAME nor a preset (gcs, nasa)"
                        ));
                    };
                    if preset.is_some() {
                        return Err("more than one preset".to_string());
                    }
                    preset = Some(p);
                }
            }
        }
        let base = preset.map(CsvPreset::names).unwrap_or_default();
        let explicit = std::array::from_fn(|r| set[r].is_some());
        let names: [Option<Box<[u8]>>; ROLES] = std::array::from_fn(|r| match set[r].take() {
            Some(given) => given,
            None => base[r].map(Into::into),
        });
        if names[URL].is_none() {
            return Err(
                "needs the request's column: url=NAME (or a preset: gcs, nasa)".to_string(),
            );
        }
        Ok(CsvColumns {
            preset,
            names,
            explicit,
        })
    }
}

/// The CSV/TSV format whose header row `line` is, when it is that of a
/// preset (for `-f auto`).
pub(crate) fn detect_header(line: &[u8]) -> Option<LogFormat> {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    let mut x = CsvExtractor::new(b'\t', None);
    if memchr(b'\t', line).is_some() && x.preset_of(line).is_some() {
        return Some(LogFormat::Tsv);
    }
    x = CsvExtractor::new(b',', None);
    x.preset_of(line).map(|_| LogFormat::Csv)
}

/// Reads CSV (`delim` `,`, RFC 4180 quoting) or TSV (`\t`, no quoting)
/// lines into [`Extracted`]. Keeps the layout of the header row; a data line
/// does not allocate.
#[derive(Clone, Debug)]
pub(crate) struct CsvExtractor {
    delim: u8,
    given: Option<Arc<CsvColumns>>,
    /// The header row (BOM removed), to know it again.
    header: Vec<u8>,
    /// False until the header row.
    has_layout: bool,
    /// The column of each role, [`ABSENT`] when not there.
    col: [usize; ROLES],
    /// A column the records need is not in the header.
    missing: bool,
    scheme: Option<Scheme>,
    /// A scratch buffer for quoted header names.
    scratch: Vec<u8>,
}

impl LogReader for CsvExtractor {
    fn new(format: LogFormat, opts: &ReadOptions) -> Self {
        let delim = if format == LogFormat::Tsv {
            b'\t'
        } else {
            b','
        };
        CsvExtractor::new(delim, opts.csv_columns.clone())
    }

    /// Processes one line (without its line end); see the [module docs](self).
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        // The line as the caller has it, which a lent target is a part of.
        let whole = line;
        let (line, base) = match line.strip_prefix(BOM) {
            Some(rest) => (rest, BOM.len()),
            None => (line, 0),
        };
        if ascii::is_blank(line) {
            return Line::Skip(Skip::EmptyLine);
        }
        if !self.has_layout {
            return match self.set_layout(line) {
                Ok(()) => Line::Skip(Skip::Header),
                Err((e, at)) => Line::Error(e, base + at),
            };
        }
        if line == self.header.as_slice() {
            return Line::Skip(Skip::Header);
        }
        let want_request = field.request();
        let want_referer = field.referer();
        if self.missing
            || (want_request && self.col[URL] == ABSENT)
            || (field == Field::Referer && self.col[REFERER] == ABSENT)
        {
            return Line::Error(LineError::MissingField, 0);
        }
        let want_info = out.want_info;
        let used = |r: usize| match r {
            URL | HOST | METHOD => want_request,
            REFERER => want_referer,
            _ => false,
        };
        let last_of = |used: &dyn Fn(usize) -> bool| {
            (0..ROLES)
                .filter(|&r| used(r) && self.col[r] != ABSENT)
                .map(|r| self.col[r])
                .max()
                .unwrap_or(0)
        };
        let needed = last_of(&used);
        // The other fields' columns are read too when wanted; a line may
        // end before them.
        let last = match want_info {
            true => last_of(&|r| used(r) || r == METHOD || r >= STATUS),
            false => needed,
        };

        let mut spans: [Option<Span>; ROLES] = [None; ROLES];
        let mut pos = Some(0);
        for k in 0..=last {
            let Some(p) = pos else {
                if k > needed {
                    break;
                }
                return Line::Error(LineError::FieldsMismatch, base + line.len());
            };
            match self.field(line, p) {
                Ok((span, next)) => {
                    for (r, s) in spans.iter_mut().enumerate() {
                        if self.col[r] == k {
                            *s = Some(span);
                        }
                    }
                    pos = next;
                }
                Err((e, at)) => return Line::Error(e, base + at),
            }
        }
        let present = |s: Option<Span>| {
            s.filter(|s| {
                let v = &line[s.start..s.end];
                !v.is_empty() && v != b"-"
            })
        };
        if want_info {
            // In the line as given (after any BOM); a quoted value with a
            // doubled `""` in it is absent.
            let at = |role: usize| {
                let s = spans[role].filter(|s| s.start < s.end)?;
                let v = &line[s.start..s.end];
                (!s.quoted || memchr(b'"', v).is_none()).then_some((base + s.start, base + s.end))
            };
            let info = &mut out.info;
            info.method = at(METHOD);
            info.status = at(STATUS);
            info.bytes = at(BYTES);
            info.time = at(TIME);
            info.client = at(CLIENT);
        }

        if want_request {
            if let Some(s) = present(spans[METHOD]) {
                out.connect = &line[s.start..s.end] == b"CONNECT";
            }
            match present(spans[URL]) {
                Some(s) => {
                    // A quoted value is as logged unless it holds a
                    // doubled `"`.
                    let v = &line[s.start..s.end];
                    if s.quoted && memchr(b'"', v).is_some() {
                        copy_value(out.target_buf(), line, s);
                    } else {
                        out.lend_target(whole, v);
                    }
                    out.has_target = true;
                }
                None => return Line::Skip(Skip::NoRequest),
            }
            if let Some(s) = present(spans[HOST]) {
                copy_value(&mut out.host, line, s);
                out.scheme = self.scheme;
            }
        }
        if want_referer {
            if let Some(s) = present(spans[REFERER]) {
                copy_value(&mut out.referer, line, s);
                out.has_referer = true;
            }
            if field == Field::Referer && !out.has_referer {
                return Line::Skip(Skip::EmptyField);
            }
        }
        Line::Record
    }

    const HEADER_LINE: Option<HeaderLine> = Some(HEADER_LINE);

    fn header(&mut self, line: &[u8]) {
        // What the line gives is its reader's to report, where it is.
        let _ = self.extract(line, Field::Request, &mut Extracted::default());
    }

    /// A known header row first: see [`detect_header`].
    fn decides(line: &[u8], first: bool) -> Option<LogFormat> {
        first.then(|| detect_header(line)).flatten()
    }
}

impl CsvExtractor {
    /// A reader of `delim`-separated lines with the columns of `given`
    /// (`None`: of the preset that the header row shows).
    pub(crate) fn new(delim: u8, given: Option<Arc<CsvColumns>>) -> Self {
        CsvExtractor {
            delim,
            given,
            header: Vec::new(),
            has_layout: false,
            col: [ABSENT; ROLES],
            missing: false,
            scheme: None,
            scratch: Vec::new(),
        }
    }

    /// The field at `pos` and where the next one starts (`None`: it is the
    /// last), or what is wrong and where.
    fn field(&self, line: &[u8], pos: usize) -> Result<(Span, Option<usize>), (LineError, usize)> {
        if self.delim == b',' && line.get(pos) == Some(&b'"') {
            let mut i = pos + 1;
            loop {
                let Some(q) = memchr(b'"', &line[i..]) else {
                    return Err((LineError::Unterminated, pos));
                };
                let q = i + q;
                let span = Span {
                    start: pos + 1,
                    end: q,
                    quoted: true,
                };
                match line.get(q + 1) {
                    Some(b'"') => i = q + 2,
                    None => return Ok((span, None)),
                    Some(&b) if b == self.delim => return Ok((span, Some(q + 2))),
                    Some(_) => return Err((LineError::Malformed, q + 1)),
                }
            }
        }
        let end = memchr(self.delim, &line[pos..]).map_or(line.len(), |e| pos + e);
        let span = Span {
            start: pos,
            end,
            quoted: false,
        };
        Ok((span, (end < line.len()).then_some(end + 1)))
    }

    /// The column named `name` (ASCII case-insensitive) in the header row
    /// `header`; `Err` when the row cannot be split.
    fn find(&mut self, header: &[u8], name: &[u8]) -> Result<Option<usize>, (LineError, usize)> {
        let mut pos = Some(0);
        let mut k = 0;
        while let Some(p) = pos {
            let (s, next) = self.field(header, p)?;
            self.scratch.clear();
            copy_value(&mut self.scratch, header, s);
            if self.scratch.eq_ignore_ascii_case(name) {
                return Ok(Some(k));
            }
            pos = next;
            k += 1;
        }
        Ok(None)
    }

    /// The preset whose header row `header` is.
    fn preset_of(&mut self, header: &[u8]) -> Option<CsvPreset> {
        CsvPreset::ALL.into_iter().find(|p| {
            p.signature()
                .iter()
                .all(|n| matches!(self.find(header, n), Ok(Some(_))))
        })
    }

    /// Reads the header row: the column of each role.
    fn set_layout(&mut self, header: &[u8]) -> Result<(), (LineError, usize)> {
        self.has_layout = true;
        self.header.clear();
        self.header.extend_from_slice(header);
        self.col = [ABSENT; ROLES];
        // Until the row is read whole, nothing is known.
        self.missing = true;
        let mut pos = Some(0);
        while let Some(p) = pos {
            pos = self.field(header, p)?.1;
        }
        let given = self.given.clone();
        let preset = match &given {
            Some(g) => g.preset,
            None => self.preset_of(header),
        };
        self.scheme = preset.and_then(CsvPreset::scheme);
        let mut missing = false;
        for role in 0..ROLES {
            let (name, required): (Option<&[u8]>, bool) = match &given {
                Some(g) => (g.names[role].as_deref(), g.explicit[role] || role == URL),
                None => match preset {
                    Some(p) => (p.names()[role], role == URL),
                    None => (None, false),
                },
            };
            if let Some(name) = name {
                match self.find(header, name)? {
                    Some(k) => self.col[role] = k,
                    None => missing |= required,
                }
            }
        }
        self.missing = missing;
        Ok(())
    }
}

/// Appends the value of `s` to `out`, `""` undone when it is quoted.
fn copy_value(out: &mut Vec<u8>, line: &[u8], s: Span) {
    let v = &line[s.start..s.end];
    if !s.quoted {
        out.extend_from_slice(v);
        return;
    }
    let mut rest = v;
    while let Some(q) = memchr(b'"', rest) {
        // Inside quotes a `"` only comes doubled.
        out.extend_from_slice(&rest[..=q]);
        rest = rest.get(q + 2..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    const GCS: &[u8] = br#""time_micros","c_ip","c_ip_type","c_ip_region","cs_method","cs_uri","sc_status","cs_bytes","sc_bytes","time_taken_micros","cs_host","cs_referer","cs_user_agent","s_request_id","cs_operation","cs_bucket","cs_object""#;
    const NASA: &[u8] = b"host\tlogname\ttime\tmethod\turl\tresponse\tbytes";

    fn run(delim: u8, given: Option<&str>, field: Field, lines: &[&[u8]]) -> (Line, Extracted) {
        let given = given.map(|g| Arc::new(g.parse::<CsvColumns>().unwrap()));
        let mut x = CsvExtractor::new(delim, given);
        let mut out = Extracted::default();
        let mut r = Line::Skip(Skip::EmptyLine);
        for l in lines {
            r = x.extract(l, field, &mut out);
        }
        (r, out)
    }

    #[test]
    fn gcs_rows() {
        let row = br#""1693206014339368","172.71.142.38","1","","GET","/v1/kanji/%E9%9B%86?a=1,2","200","0","277","488000","kanjiapi.dev","http://127.0.0.1:59961/","Mozilla/5.0 (X, ""Y"")","ADP","GET_Object","kanjiapi.dev","v1/kanji/x""#;
        let (r, out) = run(b',', None, Field::Both, &[GCS, row]);
        assert_eq!(r, Line::Record);
        assert_eq!(out.target(row), b"/v1/kanji/%E9%9B%86?a=1,2");
        assert_eq!(out.host, b"kanjiapi.dev");
        assert_eq!(out.scheme, Some(Scheme::Https));
        assert_eq!(out.referer, b"http://127.0.0.1:59961/");
        // The header row is a header, the first line or later.
        let (r, _) = run(b',', None, Field::Both, &[GCS]);
        assert_eq!(r, Line::Skip(Skip::Header));
        let (r, _) = run(b',', None, Field::Both, &[GCS, row, GCS]);
        assert_eq!(r, Line::Skip(Skip::Header));
        // After a BOM.
        let bom = [BOM, GCS].concat();
        let (r, out) = run(b',', None, Field::Request, &[&bom, row]);
        assert_eq!((r, &out.host[..]), (Line::Record, &b"kanjiapi.dev"[..]));
    }

    /// The result, status, bytes, method, time and client of a line.
    type Got = (
        Line,
        Option<u16>,
        Option<u64>,
        Option<String>,
        Option<i64>,
        Option<String>,
    );

    /// The other fields of the last of `lines`.
    fn info_of(delim: u8, given: Option<&str>, lines: &[&[u8]]) -> Got {
        let given = given.map(|g| Arc::new(g.parse::<CsvColumns>().unwrap()));
        let mut x = CsvExtractor::new(delim, given);
        let mut out = Extracted::default();
        out.want_info(true);
        let mut r = Line::Skip(Skip::EmptyLine);
        for l in lines {
            r = x.extract(l, Field::Request, &mut out);
        }
        let (i, l) = (out.info, lines[lines.len() - 1]);
        let text = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
        (
            r,
            i.status(l),
            i.bytes(l),
            text(i.method(l)),
            i.time(l),
            text(i.client(l)),
        )
    }

    #[test]
    fn other_fields() {
        // time_micros 1693206014339368 is 2023-08-28T07:00:14Z, 1693206014 s.
        let row = br#""1693206014339368","172.71.142.38","1","","GET","/v1/kanji/%E9%9B%86","200","0","277","488000","kanjiapi.dev","","","","","","""#;
        assert_eq!(
            info_of(b',', None, &[GCS, row]),
            (
                Line::Record,
                Some(200),
                Some(277),
                Some("GET".into()),
                Some(1_693_206_014),
                Some("172.71.142.38".into())
            )
        );
        let row: &[u8] = b"199.72.81.55\t-\t804571201\tGET\t/history/apollo/\t200\t6245\t\t";
        assert_eq!(
            info_of(b'\t', None, &[NASA, row]),
            (
                Line::Record,
                Some(200),
                Some(6245),
                Some("GET".into()),
                Some(804_571_201),
                Some("199.72.81.55".into())
            )
        );
        // A line that ends before the other fields' columns is a record;
        // `-` bytes are 0, as in CLF.
        let row: &[u8] = b"h\t-\t1\tGET\t/a\t404\t-";
        let got = info_of(b'\t', None, &[NASA, row]);
        assert_eq!((got.0, got.1, got.2), (Line::Record, Some(404), Some(0)));
        let got = info_of(b'\t', Some("url=u,status=s"), &[b"u\ts", b"/a"]);
        assert_eq!((got.0, got.1), (Line::Record, None));
        // Columns by name; a quoted value with a doubled quote is absent.
        let given = Some("url=u,status=s,client=c,method=m,time=t,bytes=b");
        let got = info_of(
            b',',
            given,
            &[
                b"u,s,c,m,t,b",
                b"/a,\"301\",\"a\"\"b\",GET,2018-07-02T22:23:00Z,9",
            ],
        );
        assert_eq!(
            got,
            (
                Line::Record,
                Some(301),
                Some(9),
                Some("GET".into()),
                Some(1_530_570_180),
                None
            )
        );
    }

    #[test]
    fn rfc4180_quoting() {
        let h: &[u8] = b"a,url,b";
        let t = |line: &[u8]| {
            let (r, out) = run(b',', Some("url=url"), Field::Request, &[h, line]);
            (r, String::from_utf8_lossy(out.target(line)).into_owned())
        };
        assert_eq!(t(b"x,/p,y"), (Line::Record, "/p".into()));
        assert_eq!(t(b"\"x,y\",\"/a,b\",z"), (Line::Record, "/a,b".into()));
        assert_eq!(t(b"x,\"/a\"\"b\"\"\""), (Line::Record, "/a\"b\"".into()));
        assert_eq!(t(b"\"\"\"\",/q"), (Line::Record, "/q".into()));
        // An unquoted field keeps its quotes.
        assert_eq!(t(b"x,/a\"b"), (Line::Record, "/a\"b".into()));
        // Empty and `-`: absent.
        assert_eq!(t(b"x,,y").0, Line::Skip(Skip::NoRequest));
        assert_eq!(t(b"x,\"\",y").0, Line::Skip(Skip::NoRequest));
        assert_eq!(t(b"x,-,y").0, Line::Skip(Skip::NoRequest));
        // Errors, where they are.
        assert_eq!(t(b"x,\"/a,y").0, Line::Error(LineError::Unterminated, 2));
        assert_eq!(t(b"\"x\"y,/a").0, Line::Error(LineError::Malformed, 3));
        assert_eq!(t(b"x").0, Line::Error(LineError::FieldsMismatch, 1));
        // Columns after the last wanted one are not read.
        assert_eq!(t(b"x,/p,\"oops").0, Line::Record);
    }

    #[test]
    fn nasa_tsv_host_is_the_client() {
        let row: &[u8] = b"199.72.81.55\t-\t804571201\tGET\t/history/apollo/\t200\t6245\t\t";
        let (r, out) = run(b'\t', None, Field::Both, &[NASA, row]);
        assert_eq!(r, Line::Record);
        assert_eq!(out.target(row), b"/history/apollo/");
        assert!(out.host.is_empty() && out.scheme.is_none() && !out.has_referer);
        // TSV does not quote.
        let row: &[u8] = b"h\t-\t1\tGET\t\"/a\t200\t1";
        let (r, out) = run(b'\t', None, Field::Request, &[NASA, row]);
        assert_eq!((r, out.target(row)), (Line::Record, &b"\"/a"[..]));
        // No referer column.
        let (r, _) = run(b'\t', None, Field::Referer, &[NASA, row]);
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
        // The client host can still be asked for by name.
        let (_, out) = run(b'\t', Some("nasa,host=host"), Field::Request, &[NASA, row]);
        assert_eq!(out.host, b"h");
    }

    #[test]
    fn columns_given_and_missing() {
        let h: &[u8] = b"Path,Server,Verb,Ref";
        let given = Some("url=path,host=server,method=verb,referer=ref");
        let (r, out) = run(b',', given, Field::Both, &[h, b"/x,h.example,CONNECT,r"]);
        assert_eq!(r, Line::Record);
        assert!(out.connect);
        assert_eq!(
            (&out.host[..], &out.referer[..], out.scheme),
            (&b"h.example"[..], &b"r"[..], None)
        );
        // A given column that is not in the header.
        let (r, _) = run(
            b',',
            Some("url=path,status=code"),
            Field::Request,
            &[h, b"/x"],
        );
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
        // No preset, nothing given.
        let (r, _) = run(b',', None, Field::Request, &[h, b"/x"]);
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
        // `--columns` wins over the header's preset.
        let row = br#""1","","","","GET","/u","","","","","h","","","","","","/obj""#;
        let (_, out) = run(b',', Some("url=cs_object"), Field::Request, &[GCS, row]);
        assert_eq!((out.target(row), &out.host[..]), (&b"/obj"[..], &b""[..]));
        // A header that cannot be split is an error, and so are the lines after it.
        let (r, _) = run(b',', Some("url=a"), Field::Request, &[b"a,\"b"]);
        assert_eq!(r, Line::Error(LineError::Unterminated, 2));
        let (r, _) = run(b',', Some("url=a"), Field::Request, &[b"a,\"b", b"/x"]);
        assert_eq!(r, Line::Error(LineError::MissingField, 0));
    }

    #[test]
    fn columns_spec() {
        let p = |s: &str| s.parse::<CsvColumns>();
        assert!(p("url=u").is_ok());
        assert!(p(" gcs , host = h ").is_ok());
        assert!(p("nasa").is_ok());
        assert!(p("host=h").unwrap_err().contains("url=NAME"));
        assert!(p("gcs,url=-").unwrap_err().contains("url=NAME"));
        assert!(p("path=u").unwrap_err().contains("unknown column role"));
        assert!(p("url=").unwrap_err().contains("needs a column name"));
        assert!(p("gcs,nasa").unwrap_err().contains("more than one"));
        assert!(p("s3").unwrap_err().contains("preset"));
        assert!(p("").is_err());
    }

    #[test]
    fn header_detection() {
        assert_eq!(detect_header(GCS), Some(LogFormat::Csv));
        assert_eq!(detect_header(NASA), Some(LogFormat::Tsv));
        assert_eq!(detect_header(&[BOM, NASA].concat()), Some(LogFormat::Tsv));
        assert_eq!(
            detect_header(b"host,logname,time,method,url,response,bytes"),
            Some(LogFormat::Csv)
        );
        assert_eq!(detect_header(b"a,b,c"), None);
        assert_eq!(
            detect_header(b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2"),
            None
        );
    }

    #[test]
    fn mutated_lines_do_not_panic() {
        let row = br#""1","2","","","GET","/a?b=""c""","200","0","1","2","h.example","http://r/","ua","id","op","b","o""#;
        for delim in [b',', b'\t'] {
            let mut x = CsvExtractor::new(delim, None);
            let mut out = Extracted::default();
            x.extract(GCS, Field::Both, &mut out);
            for cut in 0..=row.len() {
                for &b in &[b'"', b',', b'\t', b'-', 0xff] {
                    let mut l = row[..cut].to_vec();
                    l.push(b);
                    l.extend_from_slice(&row[cut..]);
                    for field in [Field::Request, Field::Referer, Field::Both] {
                        if let Line::Error(_, at) = x.extract(&l, field, &mut out) {
                            assert!(at <= l.len());
                        }
                        // As a header row too.
                        let mut y = CsvExtractor::new(delim, None);
                        if let Line::Error(_, at) = y.extract(&l[..cut], field, &mut out) {
                            assert!(at <= cut);
                        }
                    }
                }
            }
        }
    }
}
