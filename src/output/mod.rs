//! Output rows: what a run writes for each URL (or, with `--unique` and
//! `--count`, for each distinct URL), in the chosen format.
//!
//! A [`Row`] holds every value a row can show; a run's [`Columns`], chosen
//! once from its options, say which columns it writes and in what order;
//! one writer per format renders them: [`tabs`] for `plain` and `tsv`
//! (tab-separated cells), [`jsonl`] for JSON Lines. A new column is one
//! entry in [`COLUMNS`]: its name, its place in each kind of run and the
//! option that asks for it, and what it shows for a row as a [`Value`],
//! which each writer renders its way; plus the [`Row`] field it reads,
//! when no field holds it yet. Rows are written straight into the caller's
//! buffer: nothing is allocated per row.

pub(crate) mod jsonl;
pub(crate) mod tabs;

use smallvec::SmallVec;

use crate::canon::rules::RuleMask;
pub(crate) use crate::canon::{key, KEY_SEED};
use crate::log::{Field, RecordColumn};
use crate::pipeline::{Mode, Options, OutputFormat};

/// Everything one row can show. Which of it is written is the run's
/// [`Columns`]' choice.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Row<'a> {
    /// The input line number (1-based).
    pub line: u64,
    /// Which URL of the record, with `--field both`.
    pub field: Option<Field>,
    /// The canonical URL; `None` for a line that gave none.
    pub url: Option<&'a [u8]>,
    /// The URL's fingerprint, when the caller has it already (the distinct
    /// table stores it); computed from `url` otherwise.
    pub key: Option<i64>,
    /// The request target or referer as the log had it, escaping undone.
    pub original: &'a [u8],
    /// `--dedup-key`: the URL's dedup key (`None`: the key profile rejected it).
    pub dedup: Option<&'a [u8]>,
    /// `--explain`: the dedup rules that changed the URL.
    pub rules: RuleMask,
    /// `--explain`: the `id`s of the rewrite rules that changed it,
    /// comma-separated, an empty one for a rule without an id (empty when
    /// none is known).
    pub rewrites: &'a [u8],
    /// Why the line gave no URL.
    pub reason: Option<&'static str>,
    /// `--count`: how many times the URL was seen.
    pub count: u64,
    /// `--with`: the record's other fields (`None`: the record lacks it).
    pub status: Option<u16>,
    pub bytes: Option<u64>,
    pub method: Option<&'a [u8]>,
    pub time: Option<i64>,
    pub client: Option<&'a [u8]>,
    pub host: Option<&'a [u8]>,
    pub input: Option<&'a str>,
}

impl Row<'_> {
    /// The URL's fingerprint.
    fn url_key(&self) -> Option<i64> {
        self.key.or_else(|| self.url.map(key))
    }

    /// `--explain`'s labels of the rules that fired, in order, to `f`: a
    /// rule's name, and for `rewrite` each fired rule's id
    /// (`rewrite:story-id`) so that a learned rule can be traced; rewrites
    /// without an id are one plain `rewrite`.
    fn rule_labels(&self, mut f: impl FnMut(&str, Option<&[u8]>)) {
        for r in self.rules.iter() {
            if r != crate::canon::rules::Rule::Rewrite || self.rewrites.is_empty() {
                f(r.name(), None);
                continue;
            }
            let ids = self.rewrites.split(|&b| b == b',');
            if ids.clone().any(<[u8]>::is_empty) {
                f(r.name(), None);
            }
            for id in ids.filter(|id| !id.is_empty()) {
                f(r.name(), Some(id));
            }
        }
    }
}

/// What a column shows for one row, for the writers to render: each writer
/// decides how a kind of value looks (a TSV cell, a JSON value), so a
/// column says only what it shows.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'a> {
    /// Nothing: an empty TSV cell; JSON leaves the key out.
    Absent,
    /// Known to be missing: an empty TSV cell; JSON `null`.
    Null,
    /// A number.
    Unsigned(u64),
    Signed(i64),
    /// A 64-bit fingerprint: a TSV number, a JSON string (`"-3"`), since
    /// JSON readers that take numbers as doubles would round it.
    Key(i64),
    /// Bytes that hold no tab, line end or backslash (canonical URLs,
    /// names): TSV writes them as they are.
    Clean(&'a [u8]),
    /// Bytes from the log: TSV escapes them (`\t`), JSON too.
    Text(&'a [u8]),
    /// `--explain`'s rules: TSV `name,name` (`-` for none), JSON an array.
    Rules(&'a Row<'a>),
}

/// One output column: its name, when it is written and what it shows. The
/// whole list is [`COLUMNS`].
#[derive(Debug)]
pub(crate) struct Column {
    /// The TSV header's name and the JSON key.
    pub name: &'static str,
    /// Where it goes in each [`Layout`] (by [`Layout::index`]): its place
    /// among the layout's columns and the option that asks for it, or
    /// `None` where it never appears.
    places: [Option<(u8, When)>; Layout::COUNT],
    /// What it shows for a row.
    value: for<'a> fn(&'a Row<'a>) -> Value<'a>,
}

/// The kinds of row a run writes: the format, and whether rows are per URL
/// (records and `--pipe`) or per distinct URL (`--unique`, `--count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    PlainRecords,
    TsvRecords,
    JsonlRecords,
    /// `plain` and `tsv` write the same distinct rows.
    TabsDistinct,
    JsonlDistinct,
}

impl Layout {
    const COUNT: usize = 5;

    fn of(opts: &Options) -> Layout {
        let distinct = matches!(opts.mode, Mode::Unique | Mode::Count);
        match (opts.output, distinct) {
            (OutputFormat::Plain, false) => Layout::PlainRecords,
            (OutputFormat::Tsv, false) => Layout::TsvRecords,
            (OutputFormat::Jsonl, false) => Layout::JsonlRecords,
            (OutputFormat::Plain | OutputFormat::Tsv, true) => Layout::TabsDistinct,
            (OutputFormat::Jsonl, true) => Layout::JsonlDistinct,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The option that makes a column appear in a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    Always,
    /// `--field both`.
    BothFields,
    /// `--dedup-key`.
    Dedup,
    /// `--explain`.
    Explain,
    /// `--count`.
    Count,
    /// `--key`.
    Key,
    /// `--key`, or `tsv` output.
    KeyOrTsv,
}

impl When {
    fn holds(self, opts: &Options) -> bool {
        match self {
            When::Always => true,
            When::BothFields => opts.field == crate::log::Field::Both,
            When::Dedup => opts.dedup.is_some(),
            When::Explain => opts.explain,
            When::Count => opts.mode == Mode::Count,
            When::Key => opts.key,
            When::KeyOrTsv => opts.key || opts.output == OutputFormat::Tsv,
        }
    }
}

/// Shorthands for [`COLUMNS`]' places: `at(n, when)` is the n-th column of
/// a layout when `when` holds; `NO` is never.
const fn at(n: u8, when: When) -> Option<(u8, When)> {
    Some((n, when))
}
const NO: Option<(u8, When)> = None;

/// Every column but `--with`'s record fields (which follow a layout's
/// columns in the order given), in one table: a new column is one entry
/// here, with its places and its value; the writers render values, not
/// columns.
#[rustfmt::skip]
pub(crate) const COLUMNS: &[Column] = &[
    //                       places: plain records,     tsv records,             jsonl records,           plain/tsv distinct,       jsonl distinct
    Column { name: "line",  places: [NO,                 at(0, When::Always),     at(0, When::Always),     NO,                       NO],                         value: |r| Value::Unsigned(r.line) },
    Column { name: "field", places: [NO,                 at(4, When::BothFields), at(1, When::BothFields), at(3, When::BothFields),  at(0, When::BothFields)],    value: field },
    Column { name: "url",   places: [at(0, When::Always), at(1, When::Always),    at(2, When::Always),     at(0, When::Always),      at(1, When::Always)],        value: |r| r.url.map_or(Value::Absent, Value::Clean) },
    Column { name: "key",   places: [at(1, When::Key),   at(2, When::Always),     at(3, When::Always),     at(1, When::KeyOrTsv),    at(2, When::Always)],        value: url_key },
    Column { name: "target_or_reason", places: [NO,      at(3, When::Always),     NO,                      NO,                       NO],                         value: target_or_reason },
    Column { name: "reason", places: [NO,                NO,                      at(7, When::Always),     NO,                       NO],                         value: reason },
    Column { name: "target", places: [NO,                NO,                      at(8, When::Always),     NO,                       NO],                         value: target },
    Column { name: "dedup", places: [at(2, When::Dedup), at(5, When::Dedup),      at(4, When::Dedup),      NO,                       NO],                         value: dedup },
    Column { name: "dedup_key", places: [at(3, When::Dedup), at(6, When::Dedup),  at(5, When::Dedup),      NO,                       NO],                         value: dedup_key },
    Column { name: "rules", places: [at(4, When::Explain), at(7, When::Explain),  at(6, When::Explain),    NO,                       NO],                         value: |r| if r.url.is_some() { Value::Rules(r) } else { Value::Absent } },
    Column { name: "count", places: [NO,                 NO,                      NO,                      at(2, When::Count),       at(3, When::Count)],         value: |r| Value::Unsigned(r.count) },
];

fn field<'a>(r: &'a Row<'a>) -> Value<'a> {
    r.field.map_or(Value::Absent, |f| {
        Value::Clean(jsonl::field_name(f).as_bytes())
    })
}

/// The URL's fingerprint, for a row with a URL.
fn url_key<'a>(r: &'a Row<'a>) -> Value<'a> {
    match (r.url, r.url_key()) {
        (Some(_), Some(k)) => Value::Key(k),
        _ => Value::Absent,
    }
}

/// TSV's fourth column: the original target when there is a URL, else why
/// there is none.
fn target_or_reason<'a>(r: &'a Row<'a>) -> Value<'a> {
    match r.url {
        Some(_) => Value::Text(r.original),
        None => reason(r),
    }
}

fn reason<'a>(r: &'a Row<'a>) -> Value<'a> {
    match (r.url, r.reason) {
        (None, Some(why)) => Value::Clean(why.as_bytes()),
        _ => Value::Absent,
    }
}

fn target<'a>(r: &'a Row<'a>) -> Value<'a> {
    if r.original.is_empty() {
        Value::Absent
    } else {
        Value::Text(r.original)
    }
}

/// `--dedup-key`'s key: `Null` when the key profile rejected the URL.
fn dedup<'a>(r: &'a Row<'a>) -> Value<'a> {
    match (r.url, r.dedup) {
        (None, _) => Value::Absent,
        (Some(_), Some(d)) => Value::Clean(d),
        (Some(_), None) => Value::Null,
    }
}

fn dedup_key<'a>(r: &'a Row<'a>) -> Value<'a> {
    match (r.url, r.dedup) {
        (None, _) => Value::Absent,
        (Some(_), Some(d)) => Value::Key(key(d)),
        (Some(_), None) => Value::Null,
    }
}

/// What a `--with` column shows: `Null` when the record lacks the field.
fn record_value<'a>(c: RecordColumn, r: &'a Row<'a>) -> Value<'a> {
    let text = match c {
        RecordColumn::Status => return r.status.map_or(Value::Null, |n| Value::Unsigned(n.into())),
        RecordColumn::Bytes => return r.bytes.map_or(Value::Null, Value::Unsigned),
        RecordColumn::Time => return r.time.map_or(Value::Null, Value::Signed),
        RecordColumn::Method => r.method,
        RecordColumn::Client => r.client,
        RecordColumn::Host => r.host,
        RecordColumn::Input => r.input.map(str::as_bytes),
    };
    text.map_or(Value::Null, Value::Text)
}

/// One column of a run: a [`COLUMNS`] entry or a `--with` field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cell {
    Column(&'static Column),
    Record(RecordColumn),
}

impl Cell {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cell::Column(c) => c.name,
            Cell::Record(c) => c.name(),
        }
    }

    /// What it shows for `row`.
    #[inline]
    pub(crate) fn value<'a>(self, row: &'a Row<'a>) -> Value<'a> {
        match self {
            Cell::Column(c) => (c.value)(row),
            Cell::Record(c) => record_value(c, row),
        }
    }
}

/// The columns of a run, in order, and the format that writes them.
#[derive(Clone, Debug)]
pub(crate) struct Columns {
    format: OutputFormat,
    list: SmallVec<[Cell; 12]>,
}

impl Columns {
    /// The columns `opts` ask for: [`COLUMNS`]' entries placed in the run's
    /// layout whose option holds, in their places' order, then `--with`'s
    /// record fields (per URL, in `tsv` and `jsonl`).
    pub(crate) fn new(opts: &Options) -> Columns {
        let layout = Layout::of(opts);
        let mut placed: SmallVec<[(u8, &'static Column); 12]> = COLUMNS
            .iter()
            .filter_map(|c| match c.places[layout.index()] {
                Some((n, when)) if when.holds(opts) => Some((n, c)),
                _ => None,
            })
            .collect();
        placed.sort_unstable_by_key(|&(n, _)| n);
        let mut list: SmallVec<[Cell; 12]> = placed.iter().map(|&(_, c)| Cell::Column(c)).collect();
        if matches!(layout, Layout::TsvRecords | Layout::JsonlRecords) {
            list.extend(opts.with.iter().map(|&c| Cell::Record(c)));
        }
        Columns {
            format: opts.output,
            list,
        }
    }

    /// Writes `row` and its line end. A `plain` row without a URL is empty.
    #[inline]
    pub(crate) fn write(&self, row: &Row<'_>, out: &mut Vec<u8>) {
        self.write_cells(row, out);
        out.push(b'\n');
    }

    /// Writes `row` without a line end (`--pipe` puts the two URLs of
    /// `--field both` on one line).
    pub(crate) fn write_cells(&self, row: &Row<'_>, out: &mut Vec<u8>) {
        match self.format {
            OutputFormat::Plain if row.url.is_none() => {}
            OutputFormat::Plain | OutputFormat::Tsv => tabs::write(&self.list, row, out),
            OutputFormat::Jsonl => jsonl::write(&self.list, row, out),
        }
    }

    /// Whether a row is the URL alone (`plain` output, no other column):
    /// then the worker may canonicalize each URL straight into the output
    /// and end it with [`end_url_alone`](Self::end_url_alone).
    pub(crate) fn url_alone(&self) -> bool {
        self.format == OutputFormat::Plain
            && matches!(self.list[..], [Cell::Column(c)] if c.name == "url")
    }

    /// Ends a row of the URL alone that the caller wrote in place: what
    /// [`write`](Self::write) writes after the URL, and all it writes for
    /// a `--pipe` line without one.
    #[inline(always)]
    pub(crate) fn end_url_alone(&self, out: &mut Vec<u8>) {
        out.push(b'\n');
    }

    /// Whether the output is `plain`.
    pub(crate) fn is_plain(&self) -> bool {
        self.format == OutputFormat::Plain
    }

    /// The header row of `--format tsv --header`: the column names.
    pub(crate) fn header(&self) -> Vec<u8> {
        let names: Vec<&str> = self.list.iter().map(|c| c.name()).collect();
        let mut header = names.join("\t").into_bytes();
        header.push(b'\n');
        header
    }
}

/// Appends a decimal number.
#[inline]
fn push_int(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(output: OutputFormat, mode: Mode) -> Options {
        Options {
            output,
            mode,
            ..Options::default()
        }
    }

    fn render(o: &Options, row: &Row<'_>) -> String {
        let mut out = Vec::new();
        Columns::new(o).write(row, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn record_rows_in_each_format() {
        let row = Row {
            line: 7,
            url: Some(b"http://a/b"),
            original: b"/b\t",
            ..Row::default()
        };
        let k = key(b"http://a/b");
        assert_eq!(
            render(&opts(OutputFormat::Plain, Mode::Records), &row),
            "http://a/b\n"
        );
        assert_eq!(
            render(&opts(OutputFormat::Tsv, Mode::Records), &row),
            format!("7\thttp://a/b\t{k}\t/b\\t\n")
        );
        assert_eq!(
            render(&opts(OutputFormat::Jsonl, Mode::Records), &row),
            format!("{{\"line\":7,\"url\":\"http://a/b\",\"key\":\"{k}\",\"target\":\"/b\\t\"}}\n")
        );
        let reject = Row {
            line: 8,
            reason: Some("bad-target"),
            original: b"x",
            ..Row::default()
        };
        assert_eq!(
            render(&opts(OutputFormat::Plain, Mode::Pipe), &reject),
            "\n"
        );
        assert_eq!(
            render(&opts(OutputFormat::Tsv, Mode::Pipe), &reject),
            "8\t\t\tbad-target\n"
        );
        assert_eq!(
            render(&opts(OutputFormat::Jsonl, Mode::Pipe), &reject),
            "{\"line\":8,\"reason\":\"bad-target\",\"target\":\"x\"}\n"
        );
    }

    /// The worker writes a row of the URL alone without the writers (a
    /// bare URL and a line end): only where a row is nothing else.
    #[test]
    fn a_row_is_the_url_alone_only_without_other_columns() {
        let alone = |o: &Options| Columns::new(o).url_alone();
        let mut o = opts(OutputFormat::Plain, Mode::Records);
        assert!(alone(&o));
        o.mode = Mode::Pipe;
        assert!(alone(&o));
        o.key = true;
        assert!(!alone(&o));
        o.key = false;
        o.explain = true;
        assert!(!alone(&o));
        o.explain = false;
        for output in [OutputFormat::Tsv, OutputFormat::Jsonl] {
            assert!(!alone(&opts(output, Mode::Records)));
        }
        // What the worker writes after a URL is what `write` does.
        let row = Row {
            url: Some(b"http://a/"),
            ..Row::default()
        };
        let columns = Columns::new(&o);
        let (mut by_row, mut bare) = (Vec::new(), b"http://a/".to_vec());
        columns.write(&row, &mut by_row);
        columns.end_url_alone(&mut bare);
        assert_eq!(by_row, bare);
    }

    /// Two columns in one place of a layout would be written in an order
    /// that depends on the sort, not on the table.
    #[test]
    fn each_place_of_a_layout_holds_one_column() {
        for layout in 0..Layout::COUNT {
            let mut seen = std::collections::BTreeMap::new();
            for c in COLUMNS {
                if let Some((n, _)) = c.places[layout] {
                    if let Some(other) = seen.insert(n, c.name) {
                        panic!("layout {layout}: {other} and {} both at {n}", c.name);
                    }
                }
            }
            assert!(!seen.is_empty(), "layout {layout} has no column");
        }
        let names: std::collections::BTreeSet<_> = COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names.len(), COLUMNS.len(), "two columns share a name");
    }

    /// Every column and option in one table: the headers of a few runs.
    #[test]
    fn headers_follow_the_table() {
        let mut o = opts(OutputFormat::Tsv, Mode::Records);
        o.field = Field::Both;
        o.explain = true;
        o.with = vec![RecordColumn::Status, RecordColumn::Host];
        assert_eq!(
            Columns::new(&o).header(),
            b"line\turl\tkey\ttarget_or_reason\tfield\trules\tstatus\thost\n"
        );
        o.mode = Mode::Unique;
        assert_eq!(Columns::new(&o).header(), b"url\tkey\tfield\n");
        o.output = OutputFormat::Plain;
        o.field = Field::Request;
        assert_eq!(Columns::new(&o).header(), b"url\n");
        o.mode = Mode::Records;
        o.key = true;
        assert_eq!(Columns::new(&o).header(), b"url\tkey\trules\n");
    }

    #[test]
    fn distinct_rows_and_the_header() {
        let mut o = opts(OutputFormat::Tsv, Mode::Count);
        o.field = Field::Both;
        let row = Row {
            url: Some(b"http://a/"),
            key: Some(-3),
            count: 12,
            field: Some(Field::Referer),
            ..Row::default()
        };
        assert_eq!(render(&o, &row), "http://a/\t-3\t12\treferer\n");
        assert_eq!(Columns::new(&o).header(), b"url\tkey\tcount\tfield\n");
        o.output = OutputFormat::Jsonl;
        assert_eq!(
            render(&o, &row),
            "{\"field\":\"referer\",\"url\":\"http://a/\",\"key\":\"-3\",\"count\":12}\n"
        );
    }
}
