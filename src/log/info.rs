//! The record's other fields: status, response size, method, time and
//! client address, kept as places in the line and read only when a column
//! or a filter asks for them.
//!
//! An extractor whose caller wants them ([`Extracted::want_info`]) notes
//! where each one is in the line ([`Info`]): a few stores per line, no copy
//! and no parsing. [`Info::status`], [`Info::bytes`], [`Info::time`] and the
//! others read the values from the line when asked.
//!
//! Times are read by their shape, whatever the format: Apache's
//! `10/Oct/2000:13:55:36 -0700` (HAProxy's `25/Feb/2019:16:19:48.143`, with
//! no zone, is taken as UTC), ISO 8601 `2018-07-02T22:23:00.186641Z` (or with
//! a space, or `+hh:mm`; no zone is UTC), W3C's `date` and `time` columns
//! (UTC by the W3C draft), C's `ctime` `Sun Mar 13 22:49:12 2016` (uWSGI's; no
//! zone, so UTC), and Unix times `1320279566.452687` (seconds;
//! integers too large for seconds are read as milliseconds, microseconds or
//! nanoseconds since 1970). Fractions of a second are dropped.

use super::Extracted;
use crate::ascii;

/// Where a value is in the line: `start..end`.
pub(crate) type At = Option<(usize, usize)>;

/// Where the record's other fields are in its line (see the [module
/// docs](self)); `None` when the record does not have the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Info {
    /// The response status code.
    pub status: At,
    /// The response size in bytes (`-` is 0: see [`Info::bytes`]).
    pub bytes: At,
    /// The request method.
    pub method: At,
    /// The time of the request: a date and time, or a Unix time.
    pub time: At,
    /// W3C's `time` column, when `time` is its `date` column.
    pub time_of_day: At,
    /// The client's address (without its port).
    pub client: At,
}

/// The bytes at `at` of `line`.
#[inline]
fn slice(line: &[u8], at: At) -> Option<&[u8]> {
    let (s, e) = at?;
    line.get(s..e)
}

impl Info {
    /// The place of `part`, a subslice of `line`, in `line`; `None` when it
    /// is empty or not a part of it.
    #[inline]
    pub(crate) fn at(line: &[u8], part: &[u8]) -> At {
        let start = (part.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        let end = start + part.len();
        (end <= line.len() && !part.is_empty()).then_some((start, end))
    }

    /// The status code: three digits (`-`, `0` and anything else: `None`).
    pub(crate) fn status(&self, line: &[u8]) -> Option<u16> {
        let v = trim_quotes(slice(line, self.status)?);
        if v.len() != 3 {
            return None;
        }
        ascii::parse_u16(v).filter(|n| (100..=999).contains(n))
    }

    /// The response size: a decimal number; `-` (Apache's `%b`, S3 and
    /// others for "no body") is 0.
    pub(crate) fn bytes(&self, line: &[u8]) -> Option<u64> {
        let v = trim_quotes(slice(line, self.bytes)?);
        if v == b"-" {
            return Some(0);
        }
        ascii::parse_u64(v)
    }

    /// The method, as logged (`None` for a placeholder `-`).
    pub(crate) fn method<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        slice(line, self.method).filter(|v| !is_placeholder(v))
    }

    /// The client address, as logged (`None` for a placeholder `-`).
    pub(crate) fn client<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        slice(line, self.client).filter(|v| !is_placeholder(v))
    }

    /// The bytes [`Info::time`] reads when the time is one field (not
    /// W3C's `date` and `time` columns): equal bytes are the same time.
    pub(crate) fn time_field<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        match self.time_of_day {
            Some(_) => None,
            None => slice(line, self.time),
        }
    }

    /// The time in Unix seconds (UTC), `None` when absent or not a time.
    pub(crate) fn time(&self, line: &[u8]) -> Option<i64> {
        let v = slice(line, self.time)?;
        match slice(line, self.time_of_day) {
            Some(t) => w3c_time(v, t),
            None => parse_time(v),
        }
    }
}

impl Extracted {
    /// Asks extractors to note the other fields of each record
    /// ([`Info`]); kept by [`Extracted::clear`].
    pub(crate) fn want_info(&mut self, on: bool) {
        self.want_info = on;
    }
}

/// `at` without a port after the address: `192.0.2.1:80` is `192.0.2.1`,
/// `[2001:db8::1]:80` and `[2001:db8::1]` are `2001:db8::1`. An IPv6
/// address without brackets (more than one `:`), a name, or anything else
/// is kept whole.
pub(crate) fn without_port(line: &[u8], at: At) -> At {
    let (start, end) = at?;
    let v = line.get(start..end)?;
    let is_port = |p: &[u8]| !p.is_empty() && p.len() <= 5 && ascii::is_decimal(p);
    if v.first() == Some(&b'[') {
        let Some(close) = memchr::memchr(b']', v) else {
            return at;
        };
        let rest = &v[close + 1..];
        if close > 1 && (rest.is_empty() || rest[0] == b':' && is_port(&rest[1..])) {
            return Some((start + 1, start + close));
        }
        return at;
    }
    match memchr::memchr(b':', v) {
        Some(colon)
            if colon > 0
                && memchr::memchr(b':', &v[colon + 1..]).is_none()
                && is_port(&v[colon + 1..]) =>
        {
            Some((start, start + colon))
        }
        _ => at,
    }
}

fn is_placeholder(v: &[u8]) -> bool {
    v.is_empty() || v == b"-"
}

/// A JSON string's or CSV field's quotes, when a span includes them.
fn trim_quotes(v: &[u8]) -> &[u8] {
    match v {
        [b'"', inner @ .., b'"'] => inner,
        _ => v,
    }
}

/// Reads a time by its shape (see the [module docs](self)).
pub(crate) fn parse_time(v: &[u8]) -> Option<i64> {
    let v = trim_quotes(v);
    let v = v.strip_prefix(b"[").unwrap_or(v);
    let v = v.strip_suffix(b"]").unwrap_or(v);
    if v.len() >= 10 && v[4] == b'-' {
        iso8601(v)
    } else if v.len() >= 20 && v[2] == b'/' {
        apache(v)
    } else if v.len() >= 23 && v[3] == b' ' && v[7] == b' ' {
        ctime(v)
    } else {
        unix(v)
    }
}

/// Where the two digits of the seconds are in `v`, a time that
/// [`parse_time`] reads as a date and a clock (Apache's or ISO 8601's
/// shape); `None` for any other text. Two such texts that differ only in
/// those two bytes, digits in both, are times of the same minute: their
/// values differ by the seconds' difference (`parse_time` checks every
/// other byte the same way for both, and takes seconds from 00 to 60).
/// This lets a caller that keeps the last time read the next one of the
/// same minute without parsing it (`mine::sink`'s cache).
pub(crate) fn seconds_at(v: &[u8]) -> Option<usize> {
    let t = trim_quotes(v);
    let mut at = (v.len() - t.len()) / 2;
    let t = match t.strip_prefix(b"[") {
        Some(rest) => {
            at += 1;
            rest
        }
        None => t,
    };
    let t = t.strip_suffix(b"]").unwrap_or(t);
    // Where `iso8601` and `apache` start their clock, plus six.
    let seconds = if t.len() >= 10 && t[4] == b'-' {
        17
    } else if t.len() >= 20 && t[2] == b'/' {
        18
    } else {
        return None;
    };
    let digits = t.get(seconds..seconds + 2)?;
    digits
        .iter()
        .all(u8::is_ascii_digit)
        .then_some(at + seconds)
}

/// `yyyy-mm-dd` and `hh:mm:ss` columns (UTC).
fn w3c_time(date: &[u8], time: &[u8]) -> Option<i64> {
    let days = date_days(date)?;
    let (secs, rest) = clock(time)?;
    rest.is_empty().then_some(days * 86_400 + secs)
}

/// Two decimal digits.
#[inline]
pub(crate) fn num2(v: &[u8]) -> Option<i64> {
    match ascii::leading_decimal(v, 2) {
        (2, n) if v.len() == 2 => Some(i64::from(n)),
        _ => None,
    }
}

/// Four decimal digits.
fn num4(v: &[u8]) -> Option<i64> {
    Some(num2(v.get(..2)?)? * 100 + num2(v.get(2..4)?)?)
}

/// `yyyy-mm-dd` as days since 1970-01-01.
fn date_days(v: &[u8]) -> Option<i64> {
    if v.len() != 10 || v[4] != b'-' || v[7] != b'-' {
        return None;
    }
    days(num4(&v[..4])?, num2(&v[5..7])?, num2(&v[8..10])?)
}

/// `hh:mm:ss[.fraction]` as seconds of the day, and what follows it.
fn clock(v: &[u8]) -> Option<(i64, &[u8])> {
    if v.len() < 8 || v[2] != b':' || v[5] != b':' {
        return None;
    }
    let (h, m, s) = (num2(&v[..2])?, num2(&v[3..5])?, num2(&v[6..8])?);
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut rest = &v[8..];
    if let Some(frac) = rest.strip_prefix(b".").or_else(|| rest.strip_prefix(b",")) {
        let digits = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    Some((h * 3600 + m * 60 + s, rest))
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
fn days(y: i64, m: i64, d: i64) -> Option<i64> {
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_len = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > month_len {
        return None;
    }
    // Years counted from March, so that the leap day ends a year.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (m + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + d - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

/// A zone after a time: `Z`, `+hh:mm`, `+hhmm`, `+hh`, or nothing (UTC);
/// the seconds to subtract for UTC.
fn zone(v: &[u8]) -> Option<i64> {
    let v = v.strip_prefix(b" ").unwrap_or(v);
    let sign = match v.first() {
        None => return Some(0),
        Some(b'Z' | b'z') if v.len() == 1 => return Some(0),
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return None,
    };
    let (h, m) = match &v[1..] {
        [a, b] => (num2(&[*a, *b])?, 0),
        [a, b, c, d] => (num2(&[*a, *b])?, num2(&[*c, *d])?),
        [a, b, b':', c, d] => (num2(&[*a, *b])?, num2(&[*c, *d])?),
        _ => return None,
    };
    Some(sign * (h * 3600 + m * 60))
}

/// `yyyy-mm-ddThh:mm:ss[.f][zone]` (or a space for the `T`).
fn iso8601(v: &[u8]) -> Option<i64> {
    let days = date_days(v.get(..10)?)?;
    if v.len() == 10 {
        return Some(days * 86_400);
    }
    if !matches!(v[10], b'T' | b't' | b' ') {
        return None;
    }
    let (secs, rest) = clock(&v[11..])?;
    Some(days * 86_400 + secs - zone(rest)?)
}

/// `dd/Mon/yyyy:hh:mm:ss[.f][ zone]`.
fn apache(v: &[u8]) -> Option<i64> {
    if v[2] != b'/' || v[6] != b'/' || v[11] != b':' {
        return None;
    }
    let d = num2(&v[..2])?;
    let m = month(&v[3..6])?;
    let days = days(num4(&v[7..11])?, m, d)?;
    let (secs, rest) = clock(&v[12..])?;
    Some(days * 86_400 + secs - zone(rest)?)
}

/// C's `ctime` (uWSGI's request time): `Www Mmm dd hh:mm:ss yyyy`, the
/// day padded with a space or a zero (or, as some logs copy it, not
/// padded: `Sun Mar 6 ...`); no zone, so UTC.
fn ctime(v: &[u8]) -> Option<i64> {
    if !v[..3].iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    let m = month(&v[4..7])?;
    let rest = &v[8..];
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let (d, rest) = match rest {
        [a, b' ', ..] => (num2(&[b'0', *a])?, &rest[2..]),
        [a, b, b' ', ..] => (num2(&[*a, *b])?, &rest[3..]),
        _ => return None,
    };
    let (secs, rest) = clock(rest)?;
    let year = rest.strip_prefix(b" ")?;
    if year.len() != 4 {
        return None;
    }
    let days = days(num4(year)?, m, d)?;
    Some(days * 86_400 + secs)
}

/// A month's English three-letter name, in any case, as its number.
fn month(v: &[u8]) -> Option<i64> {
    let [a, b, c] = v else { return None };
    // ASCII case-insensitive: `| 0x20` lower-cases a letter, and no other
    // byte becomes a lower-case letter by it but that letter's upper case.
    Some(match [a | 0x20, b | 0x20, c | 0x20] {
        [b'j', b'a', b'n'] => 1,
        [b'f', b'e', b'b'] => 2,
        [b'm', b'a', b'r'] => 3,
        [b'a', b'p', b'r'] => 4,
        [b'm', b'a', b'y'] => 5,
        [b'j', b'u', b'n'] => 6,
        [b'j', b'u', b'l'] => 7,
        [b'a', b'u', b'g'] => 8,
        [b's', b'e', b'p'] => 9,
        [b'o', b'c', b't'] => 10,
        [b'n', b'o', b'v'] => 11,
        [b'd', b'e', b'c'] => 12,
        _ => return None,
    })
}

/// Seconds since 1970 with an optional fraction; an integer too large for
/// seconds of this era is milli-, micro- or nanoseconds.
fn unix(v: &[u8]) -> Option<i64> {
    let (int, frac) = match memchr::memchr(b'.', v) {
        Some(dot) => (&v[..dot], Some(&v[dot + 1..])),
        None => (v, None),
    };
    if frac.is_some_and(|f| !ascii::is_decimal(f)) {
        return None;
    }
    // Nineteen nines do not fit in an `i64`: not a time.
    let n = i64::try_from(ascii::parse_u64(int)?).ok()?;
    // Beyond 10^11 seconds (year 5138) a number is a finer unit.
    Some(match n {
        n if frac.is_some() || n < 100_000_000_000 => n,
        n if n < 100_000_000_000_000 => n / 1_000,
        n if n < 100_000_000_000_000_000 => n / 1_000_000,
        n => n / 1_000_000_000,
    })
}

/// A column of a record's other fields (`--with`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordColumn {
    /// The response status code.
    Status,
    /// The response size in bytes.
    Bytes,
    /// The request method.
    Method,
    /// The time of the request, Unix seconds (UTC).
    Time,
    /// The client address.
    Client,
    /// The host the request was for.
    Host,
    /// The name of the input the line is from.
    Input,
}

impl RecordColumn {
    /// Every column, in the order `--with` lists them.
    pub const ALL: [RecordColumn; 7] = [
        RecordColumn::Status,
        RecordColumn::Bytes,
        RecordColumn::Method,
        RecordColumn::Time,
        RecordColumn::Client,
        RecordColumn::Host,
        RecordColumn::Input,
    ];

    /// The column's name (`--with`, TSV header, JSON key).
    pub fn name(self) -> &'static str {
        match self {
            RecordColumn::Status => "status",
            RecordColumn::Bytes => "bytes",
            RecordColumn::Method => "method",
            RecordColumn::Time => "time",
            RecordColumn::Client => "client",
            RecordColumn::Host => "host",
            RecordColumn::Input => "input",
        }
    }

    /// Parses a comma-separated list of column names (ASCII
    /// case-insensitive; a name given twice counts once).
    ///
    /// ```
    /// use canonurl::log::RecordColumn;
    ///
    /// let list = RecordColumn::parse_list("status, Method,status").unwrap();
    /// assert_eq!(list, [RecordColumn::Status, RecordColumn::Method]);
    /// assert!(RecordColumn::parse_list("referrer").unwrap_err().contains("known: status"));
    /// ```
    pub fn parse_list(s: &str) -> Result<Vec<RecordColumn>, String> {
        let mut list = Vec::new();
        for name in s.split(',').map(str::trim) {
            let c = RecordColumn::ALL
                .into_iter()
                .find(|c| c.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    let names: Vec<&str> = RecordColumn::ALL.iter().map(|c| c.name()).collect();
                    format!("unknown column {name:?} (known: {})", names.join(", "))
                })?;
            if !list.contains(&c) {
                list.push(c);
            }
        }
        Ok(list)
    }

    /// True when the column needs the extractor to note [`Info`].
    pub(crate) fn needs_info(self) -> bool {
        !matches!(self, RecordColumn::Host | RecordColumn::Input)
    }
}

/// Which records to keep (`--status`, `--method`); a record the filter
/// drops is skipped, with its reason.
///
/// ```
/// use canonurl::input::Source;
/// use canonurl::log::RecordFilter;
/// use canonurl::pipeline::{run, Options, Sinks};
///
/// let mut filter = RecordFilter::default();
/// assert!(filter.is_empty());
/// filter.add_statuses("2xx,304").unwrap();
/// filter.add_methods("get").unwrap();
/// assert!(filter.add_statuses("6xx").is_err());
///
/// let dir = std::env::temp_dir().join("canonurl-filter-example");
/// std::fs::create_dir_all(&dir).unwrap();
/// let log = dir.join("access.log");
/// std::fs::write(&log, concat!(
///     "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /ok HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
///     "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /gone HTTP/1.1\" 404 1 \"-\" \"ua\"\n",
///     "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"POST /form HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
/// )).unwrap();
/// let opts = Options { filter, ..Options::default() };
/// let (mut out, mut diag) = (Vec::new(), Vec::new());
/// let sinks = Sinks { out: &mut out, rejects: None, diag: &mut diag, progress: None };
/// let summary = run(&[Source::Path(log)], &opts, sinks).unwrap();
/// assert_eq!(out, b"/ok\n");
/// assert_eq!(summary.stats.skipped_total(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordFilter {
    /// Status classes wanted: bit `k` for `kxx`.
    classes: u16,
    /// Exact status codes wanted.
    codes: Vec<u16>,
    /// Methods wanted, upper case (compared ASCII case-insensitively).
    methods: Vec<Vec<u8>>,
}

impl RecordFilter {
    /// Adds the statuses of a `--status` list: classes `1xx` to `5xx` and
    /// codes `100` to `999`.
    pub fn add_statuses(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim) {
            let b = item.as_bytes();
            match b {
                [c @ b'1'..=b'5', x, y]
                    if x.eq_ignore_ascii_case(&b'x') && y.eq_ignore_ascii_case(&b'x') =>
                {
                    self.classes |= 1 << (c - b'0');
                }
                _ => match item.parse::<u16>() {
                    Ok(n) if (100..=999).contains(&n) && b.len() == 3 => self.codes.push(n),
                    _ => {
                        return Err(format!(
                            "bad status {item:?}: a class (1xx to 5xx) or a three-digit code"
                        ))
                    }
                },
            }
        }
        Ok(())
    }

    /// Adds the methods of a `--method` list.
    pub fn add_methods(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim) {
            if item.is_empty()
                || !item
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(format!("bad method {item:?}: a token such as GET"));
            }
            self.methods.push(item.to_ascii_uppercase().into_bytes());
        }
        Ok(())
    }

    /// True when the filter keeps every record.
    pub fn is_empty(&self) -> bool {
        !self.filters_status() && !self.filters_method()
    }

    pub(crate) fn filters_status(&self) -> bool {
        self.classes != 0 || !self.codes.is_empty()
    }

    pub(crate) fn filters_method(&self) -> bool {
        !self.methods.is_empty()
    }

    /// `None` when the record is kept, else why it is skipped.
    pub(crate) fn check(&self, info: &Info, line: &[u8]) -> Option<super::Skip> {
        use super::Skip;
        if self.filters_status() {
            match info.status(line) {
                None => return Some(Skip::NoStatus),
                Some(s)
                    if self.classes & (1 << (s / 100).min(15)) == 0 && !self.codes.contains(&s) =>
                {
                    return Some(Skip::StatusFiltered)
                }
                Some(_) => {}
            }
        }
        if self.filters_method() {
            match info.method(line) {
                None => return Some(Skip::NoMethod),
                Some(m) if !self.methods.iter().any(|w| w.eq_ignore_ascii_case(m)) => {
                    return Some(Skip::MethodFiltered)
                }
                Some(_) => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_month_in_any_case_and_nothing_else() {
        let names = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        for (i, name) in names.iter().enumerate() {
            // The first of each month of 2001 at midnight UTC.
            let want = days(2001, i as i64 + 1, 1).map(|d| d * 86_400);
            for spelled in [name.to_string(), name.to_uppercase(), name.to_lowercase()] {
                let v = format!("01/{spelled}/2001:00:00:00 +0000");
                assert_eq!(parse_time(v.as_bytes()), want, "{v}");
            }
        }
        // `| 0x20` must not make a month of bytes that are not its letters.
        for bad in ["Jam", "J@n", "\u{6a}a\u{ee}", "Ja\x0e", "Oc4", "Dex"] {
            let v = format!("01/{bad}/2001:00:00:00 +0000");
            assert_eq!(parse_time(v.as_bytes()), None, "{v:?}");
        }
    }

    #[test]
    fn times_of_each_shape() {
        // date -u -d '2000-10-10 20:55:36' +%s
        assert_eq!(parse_time(b"10/Oct/2000:13:55:36 -0700"), Some(971_211_336));
        assert_eq!(
            parse_time(b"[10/Oct/2000:13:55:36 -0700]"),
            Some(971_211_336)
        );
        assert_eq!(parse_time(b"10/oct/2000:20:55:36 +0000"), Some(971_211_336));
        // 2019-02-25T16:19:48Z
        assert_eq!(parse_time(b"25/Feb/2019:16:19:48.143"), Some(1_551_111_588));
        assert_eq!(
            parse_time(b"2018-07-02T22:23:00.186641Z"),
            Some(1_530_570_180)
        );
        assert_eq!(
            parse_time(b"2018-07-03T00:23:00+02:00"),
            Some(1_530_570_180)
        );
        assert_eq!(parse_time(b"2018-07-02 22:23:00"), Some(1_530_570_180));
        assert_eq!(parse_time(b"\"2018-07-02T22:23:00Z\""), Some(1_530_570_180));
        assert_eq!(w3c_time(b"2018-07-02", b"22:23:00"), Some(1_530_570_180));
        assert_eq!(parse_time(b"1320279566.452687"), Some(1_320_279_566));
        assert_eq!(parse_time(b"804571201"), Some(804_571_201));
        assert_eq!(parse_time(b"1530570180123"), Some(1_530_570_180));
        assert_eq!(parse_time(b"1530570180123456789"), Some(1_530_570_180));
        assert_eq!(parse_time(b"1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time(b"1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(parse_time(b"2000-02-29T00:00:00Z"), Some(951_782_400));
        // C's ctime (uWSGI), no zone: UTC. date -u -d '2016-03-13 22:49:12' +%s
        assert_eq!(parse_time(b"Sun Mar 13 22:49:12 2016"), Some(1_457_909_352));
        assert_eq!(
            parse_time(b"[Sun Mar 13 22:49:12 2016]"),
            Some(1_457_909_352)
        );
        // The day padded with a space, with a zero, or not padded.
        for v in [
            &b"Sun Mar  6 22:49:12 2016"[..],
            b"Sun Mar 06 22:49:12 2016",
            b"sun MAR 6 22:49:12 2016",
        ] {
            assert_eq!(parse_time(v), Some(1_457_304_552), "{v:?}");
        }
    }

    #[test]
    fn not_times() {
        for v in [
            &b""[..],
            b"-",
            b"2001-02-29T00:00:00Z",
            b"2018-13-02T22:23:00Z",
            b"2018-07-02T25:23:00Z",
            b"2018-07-02X22:23:00Z",
            b"2018-07-02T22:23:00Q",
            b"10/Foo/2000:13:55:36 -0700",
            b"10/Oct/2000 13:55:36 -0700",
            b"Sun Foo 13 22:49:12 2016",
            b"Sun Mar 32 22:49:12 2016",
            b"Sun Mar 13 22:49:12 16",
            b"Sun Mar 13 22:49 2016 x",
            b"Su1 Mar 13 22:49:12 2016",
            b"Sun Mar 13 22:49:12 2016 +0100",
            b"12a.5",
            b"1.x",
            b"99999999999999999999999",
            // Fits in a u64, not in the i64 of a time (the digits were
            // once folded into an i64 unchecked).
            b"9999999999999999999",
        ] {
            assert_eq!(parse_time(v), None, "{:?}", String::from_utf8_lossy(v));
        }
    }

    #[test]
    fn status_and_bytes() {
        let line = b"200 - 1234 2000 abc \"404\"";
        let info = |s: usize, e: usize| Info {
            status: Some((s, e)),
            bytes: Some((s, e)),
            ..Info::default()
        };
        assert_eq!(info(0, 3).status(line), Some(200));
        assert_eq!(info(0, 3).bytes(line), Some(200));
        assert_eq!(info(4, 5).status(line), None);
        assert_eq!(info(4, 5).bytes(line), Some(0));
        assert_eq!(info(6, 10).status(line), None);
        assert_eq!(info(6, 10).bytes(line), Some(1234));
        assert_eq!(info(16, 19).bytes(line), None);
        assert_eq!(info(20, 25).status(line), Some(404));
        assert_eq!(Info::default().status(line), None);
        assert_eq!(info(20, 99).status(line), None);
    }

    #[test]
    fn filters_keep_and_skip() {
        use crate::log::Skip;
        let line = b"200 404 301 get -";
        let at = |s: usize, m: usize| Info {
            status: Some((s, s + 3)),
            method: Some((m, m + 3)),
            ..Info::default()
        };
        let mut f = RecordFilter::default();
        assert!(f.is_empty());
        f.add_statuses("2xx, 301").unwrap();
        assert_eq!(f.check(&at(0, 12), line), None);
        assert_eq!(f.check(&at(8, 12), line), None);
        assert_eq!(f.check(&at(4, 12), line), Some(Skip::StatusFiltered));
        assert_eq!(f.check(&Info::default(), line), Some(Skip::NoStatus));
        f.add_methods("GET,head").unwrap();
        assert_eq!(f.check(&at(0, 12), line), None);
        let no_method = Info {
            method: Some((16, 17)),
            ..at(0, 0)
        };
        assert_eq!(f.check(&no_method, line), Some(Skip::NoMethod));
        let post = b"200 POS";
        assert_eq!(f.check(&at(0, 4), post), Some(Skip::MethodFiltered));
        for bad in ["6xx", "20", "2000", "abc", "", "099"] {
            assert!(RecordFilter::default().add_statuses(bad).is_err(), "{bad}");
        }
        assert!(RecordFilter::default().add_methods("GE T").is_err());
        assert_eq!(
            RecordColumn::parse_list("status,TIME,status").unwrap(),
            vec![RecordColumn::Status, RecordColumn::Time]
        );
        assert!(RecordColumn::parse_list("status,nope").is_err());
    }

    #[test]
    fn ports_are_dropped_from_clients() {
        let cut = |v: &[u8]| {
            let at = without_port(v, Some((0, v.len())));
            at.map(|(s, e)| String::from_utf8_lossy(&v[s..e]).into_owned())
        };
        assert_eq!(cut(b"192.0.2.1:8080").as_deref(), Some("192.0.2.1"));
        assert_eq!(cut(b"192.0.2.1").as_deref(), Some("192.0.2.1"));
        assert_eq!(cut(b"[2001:db8::1]:443").as_deref(), Some("2001:db8::1"));
        assert_eq!(cut(b"[2001:db8::1]").as_deref(), Some("2001:db8::1"));
        assert_eq!(cut(b"2001:db8::1").as_deref(), Some("2001:db8::1"));
        assert_eq!(cut(b"host:http").as_deref(), Some("host:http"));
        assert_eq!(cut(b":80").as_deref(), Some(":80"));
        assert_eq!(cut(b"[]:80").as_deref(), Some("[]:80"));
        assert_eq!(cut(b"[::1").as_deref(), Some("[::1"));
        assert_eq!(without_port(b"x", None), None);
        assert_eq!(without_port(b"x", Some((0, 9))), None);
    }

    #[test]
    fn at_is_the_place_in_the_line() {
        let line = b"GET /a";
        assert_eq!(Info::at(line, &line[4..]), Some((4, 6)));
        assert_eq!(Info::at(line, &line[4..4]), None);
        assert_eq!(Info::at(line, b"elsewhere"), None);
    }

    /// What a reader of `format` notes for `line` (after `header`).
    struct Got {
        status: Option<u16>,
        bytes: Option<u64>,
        method: Option<String>,
        time: Option<i64>,
        client: Option<String>,
    }

    fn got(format: crate::log::LogFormat, header: Option<&[u8]>, line: &[u8]) -> Got {
        use crate::log::{Field, Line, RecordReader};
        let mut reader = RecordReader::new(format, None);
        let mut out = Extracted::default();
        out.want_info(true);
        if let Some(h) = header {
            reader.header(h);
        }
        assert_eq!(reader.read(line, Field::Request, &mut out), Line::Record);
        let i = out.info;
        let text = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
        Got {
            status: i.status(line),
            bytes: i.bytes(line),
            method: text(i.method(line)),
            time: i.time(line),
            client: text(i.client(line)),
        }
    }

    fn check(
        g: Got,
        status: Option<u16>,
        bytes: Option<u64>,
        method: &str,
        time: Option<i64>,
        client: &str,
    ) {
        assert_eq!(g.status, status);
        assert_eq!(g.bytes, bytes);
        assert_eq!(g.method.as_deref(), Some(method));
        assert_eq!(g.time, time);
        assert_eq!(g.client.as_deref(), Some(client).filter(|c| !c.is_empty()));
    }

    #[test]
    fn combined_and_vhost_fields() {
        use crate::log::LogFormat::*;
        // The first line of logs-combined/elastic-examples-apache_logs.log;
        // 2015-05-17T10:05:03Z is 1431857103.
        let line = br#"83.149.9.216 - - [17/May/2015:10:05:03 +0000] "GET /presentations/logstash-monitorama-2013/images/kibana-search.png HTTP/1.1" 200 203023 "http://semicomplete.com/presentations/logstash-monitorama-2013/" "Mozilla/5.0""#;
        check(
            got(Combined, None, line),
            Some(200),
            Some(203_023),
            "GET",
            Some(1_431_857_103),
            "83.149.9.216",
        );
        let line =
            br#"h.example:443 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "HEAD /v HTTP/1.1" 304 -"#;
        check(
            got(Vhost, None, line),
            Some(304),
            Some(0),
            "HEAD",
            Some(971_211_336),
            "10.0.0.1",
        );
        let wrapped = br#""1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "POST /w HTTP/1.1" 500 12""#;
        check(
            got(Common, None, wrapped),
            Some(500),
            Some(12),
            "POST",
            Some(971_211_336),
            "1.2.3.4",
        );
        // Syslog-embedded, no `[time]`: no client, no time.
        let syslog = br#"nginx: "GET /s HTTP/1.1" 404 9 "-" "ua""#;
        check(
            got(Combined, None, syslog),
            Some(404),
            Some(9),
            "GET",
            None,
            "",
        );
    }

    #[test]
    fn w3c_fields() {
        use crate::log::LogFormat::*;
        // logs-iis/webknowit-W3SVC1-2015-2016.log: no sc-bytes column.
        let header = b"#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken";
        let line = b"2015-10-17 16:27:13 172.31.22.76 OPTIONS / - 80 - 190.234.105.254 DavClnt - 200 0 0 698";
        // 2015-10-17T16:27:13Z
        check(
            got(W3c, Some(header), line),
            Some(200),
            None,
            "OPTIONS",
            Some(1_445_099_233),
            "190.234.105.254",
        );
        let header = b"#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status";
        let line = b"2014-05-23\t01:13:11\tFRA2\t182\t192.0.2.10\tGET\td111111abcdef8.cloudfront.net\t/view/my/file.html\t404";
        // 2014-05-23T01:13:11Z
        check(
            got(Cloudfront, Some(header), line),
            Some(404),
            Some(182),
            "GET",
            Some(1_400_807_591),
            "192.0.2.10",
        );
        // Info columns after the last one the request needs, missing on a
        // short line: the record is still read.
        let header = b"#Fields: cs-uri-stem sc-status";
        let g = got(W3c, Some(header), b"/a");
        assert_eq!((g.status, g.method), (None, None));
    }

    #[test]
    fn alb_and_elb_fields() {
        use crate::log::LogFormat::Alb;
        // logs-cloud-fixtures/elastic-integrations-aws-elb-test-alb.log, line 1.
        let line = br#"http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.46.0" - -"#;
        check(
            got(Alb, None, line),
            Some(200),
            Some(366),
            "GET",
            Some(1_530_570_180),
            "192.168.131.39",
        );
        let classic = br#"2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 502 200 0 29 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.38.0" - -"#;
        // 2015-05-13T23:39:43Z
        check(
            got(Alb, None, classic),
            Some(502),
            Some(29),
            "GET",
            Some(1_431_560_383),
            "192.168.131.39",
        );
    }

    #[test]
    fn s3_haproxy_squid_fields() {
        use crate::log::LogFormat::*;
        let line = b"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be bkt [06/Feb/2019:00:00:38 +0000] 192.0.2.3 79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 3E57427F3EXAMPLE REST.GET.VERSIONING - \"GET /bkt?versioning HTTP/1.1\" 200 - 113 - 7 - \"-\" \"S3Console/0.4\" -";
        // 2019-02-06T00:00:38Z
        check(
            got(S3, None, line),
            Some(200),
            Some(113),
            "GET",
            Some(1_549_411_238),
            "192.0.2.3",
        );
        // logs-lnav/logfile_haproxy.0
        let line = br#"Feb 25 16:19:49 192.168.4.2 haproxy[7]: 141.35.244.171:53332 [25/Feb/2019:16:19:48.143] prod_http_in~ bk_admin/nginx_sonst 0/0/7/1457/1487 200 11394 - - ---- 2/1/0/0/0 0/0 {Mozilla/5.0} {} "GET /admin/colt/administration?survey=130 HTTP/1.1""#;
        check(
            got(Haproxy, None, line),
            Some(200),
            Some(11_394),
            "GET",
            Some(1_551_111_588),
            "141.35.244.171",
        );
    }
}
