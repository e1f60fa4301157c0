//! Output rows: what a run writes for each URL (or, with `--unique` and
//! `--count`, for each distinct URL), in the chosen format.
//!
//! A [`Row`] holds every value a row can show; a run's [`Columns`], chosen
//! once from its options, say which columns it writes and in what order;
//! one writer per format renders them: [`tabs`] for `plain` and `tsv`
//! (tab-separated cells), [`jsonl`] for JSON Lines. A new column is one
//! [`Column`] variant, its place in [`Columns::new`], and its cell in each
//! writer. Rows are written straight into the caller's buffer: nothing is
//! allocated per row.

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

/// A column of the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Column {
    /// The input line number.
    Line,
    /// `request` or `referer`.
    Field,
    /// The canonical URL.
    Url,
    /// Its fingerprint.
    Key,
    /// TSV: the original target when there is a URL, else the reason.
    TargetOrReason,
    /// JSON: why the line gave no URL.
    Reason,
    /// JSON: the original target.
    Target,
    /// The dedup key.
    Dedup,
    /// Its fingerprint.
    DedupKey,
    /// The rules that fired.
    Rules,
    /// How many times the URL was seen.
    Count,
    /// One of the record's other fields (`--with`).
    Record(RecordColumn),
}

impl Column {
    /// Its name: the TSV header's and the JSON key.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Column::Line => "line",
            Column::Field => "field",
            Column::Url => "url",
            Column::Key => "key",
            Column::TargetOrReason => "target_or_reason",
            Column::Reason => "reason",
            Column::Target => "target",
            Column::Dedup => "dedup",
            Column::DedupKey => "dedup_key",
            Column::Rules => "rules",
            Column::Count => "count",
            Column::Record(c) => c.name(),
        }
    }
}

/// The columns of a run, in order, and the format that writes them.
#[derive(Clone, Debug)]
pub(crate) struct Columns {
    format: OutputFormat,
    list: SmallVec<[Column; 12]>,
}

impl Columns {
    /// The columns `opts` ask for: per URL (records and `--pipe`) or per
    /// distinct URL (`--unique`, `--count`).
    pub(crate) fn new(opts: &Options) -> Columns {
        use Column::*;
        let mut list = SmallVec::new();
        let both = opts.field == crate::log::Field::Both;
        let dedup = opts.dedup.is_some();
        let distinct = matches!(opts.mode, Mode::Unique | Mode::Count);
        let count = opts.mode == Mode::Count;
        let mut push = |on: bool, c: Column| {
            if on {
                list.push(c);
            }
        };
        match (opts.output, distinct) {
            (OutputFormat::Plain, false) => {
                push(true, Url);
                push(opts.key, Key);
                push(dedup, Dedup);
                push(dedup, DedupKey);
                push(opts.explain, Rules);
            }
            (OutputFormat::Plain | OutputFormat::Tsv, true) => {
                push(true, Url);
                push(opts.key || opts.output == OutputFormat::Tsv, Key);
                push(count, Count);
                push(both, Field);
            }
            (OutputFormat::Tsv, false) => {
                push(true, Line);
                push(true, Url);
                push(true, Key);
                push(true, TargetOrReason);
                push(both, Field);
                push(dedup, Dedup);
                push(dedup, DedupKey);
                push(opts.explain, Rules);
            }
            (OutputFormat::Jsonl, false) => {
                push(true, Line);
                push(both, Field);
                push(true, Url);
                push(true, Key);
                push(dedup, Dedup);
                push(dedup, DedupKey);
                push(opts.explain, Rules);
                push(true, Reason);
                push(true, Target);
            }
            (OutputFormat::Jsonl, true) => {
                push(both, Field);
                push(true, Url);
                push(true, Key);
                push(count, Count);
            }
        }
        if !distinct && opts.output != OutputFormat::Plain {
            list.extend(opts.with.iter().map(|&c| Record(c)));
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
        self.format == OutputFormat::Plain && self.list[..] == [Column::Url]
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
