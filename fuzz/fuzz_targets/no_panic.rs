//! Arbitrary bytes through everything that reads untrusted input; no panic.
//!
//! `data[0]` chooses the canonicalizer configuration (as before), `data[1..]`
//! is its input:
//! - the canonicalizer, both profiles, with and without a base (one of four),
//!   through `canonicalize_into` and `canonicalize_target`: nothing appended
//!   on error, on success `Parts` consistent and `unchanged` exactly when the
//!   output is the input.
//!
//! `data[0]` and `data[1]` together choose a pipeline configuration, and
//! `data[2..]` is a log chunk:
//! - every line through every extractor (both CLF variants, W3C and
//!   CloudFront, ALB, HAProxy, JSON with each preset's paths, a fixed custom
//!   layout and, for some inputs, paths taken from the chunk's first line),
//!   for each `Field`: no panic, error offsets inside the line;
//! - `log::detect::detect` and `JsonExtractor::detect_preset` on the chunk;
//! - the chunk as one piece through `Worker::piece` (any format, field,
//!   output format, mode, profile, base, `--key`, line limit): no panic, every
//!   line counted once, and the output has the number of lines the mode
//!   promises; then `Worker::lost_line`.
#![no_main]

use std::sync::Arc;

use canonurl::canon::surt::SurtForm;
use canonurl::internals::W3cExtractor;
use canonurl::internals::{FileCtx, JsonExtractor, PieceOut, Worker};
use canonurl::log::detect::detect;
use canonurl::log::{
    Extracted, Field, JsonPaths, JsonPreset, Line, LineError, LogFormat, RecordReader,
};
use canonurl::pipeline::stats::Why;
use canonurl::pipeline::{Mode, Options, OutputFormat};
use canonurl::{Base, Canonicalizer, Profile};
use libfuzzer_sys::fuzz_target;

const BASES: [&[u8]; 4] = [
    b"http://example.org/foo/bar?q#f",
    b"file:///C:/dir/",
    b"sc://h/p",
    b"non-spec:/..//p",
];

/// `--base` values for the pipeline (origin-form targets without a host).
const LOG_BASES: [&[u8]; 2] = [b"http://example.org/dir/", b"https://h.example:8443/"];

const FIELDS: [Field; 3] = [Field::Request, Field::Referer, Field::Both];

/// A custom layout whose paths overlap and nest (a key that is both a value
/// and an object, alternatives shared between slots, empty alternatives).
fn custom_paths() -> JsonPaths {
    let p = |s: &str| Some(s.to_owned());
    JsonPaths {
        target: p("a.b|uri||req.u"),
        request_line: p("a|request"),
        host: p("a.b.c|h|req.h"),
        scheme: p("a.b|s"),
        referer: p("r|a|req.headers.Referer"),
        method: p(" m | req.m "),
        query: p("q|a.b|req.headers[name=q].v"),
        default_scheme: None,
        status: p("st|a.b|req.headers[name=s].v"),
        bytes: p("b|s|req.h"),
        time: p("t|a|ts"),
        client: p("c|h|req.c"),
    }
}

/// JSON paths from a line: up to eleven tab-separated strings (as `--json-*`
/// options would give them, and a query path).
fn paths_from(line: &[u8]) -> JsonPaths {
    let text = String::from_utf8_lossy(line);
    let mut it = text.split('\t').map(|s| Some(s.to_owned()));
    JsonPaths {
        target: it.next().flatten(),
        request_line: it.next().flatten(),
        host: it.next().flatten(),
        scheme: it.next().flatten(),
        referer: it.next().flatten(),
        method: it.next().flatten(),
        query: it.next().flatten(),
        default_scheme: None,
        status: it.next().flatten(),
        bytes: it.next().flatten(),
        time: it.next().flatten(),
        client: it.next().flatten(),
    }
}

fn lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let chunk = chunk.strip_suffix(b"\n").unwrap_or(chunk);
    chunk
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(move |_| !chunk.is_empty())
}

fn check_line(result: Line, line: &[u8], what: &str) {
    if let Line::Error(e, at) = result {
        assert!(
            at <= line.len(),
            "{what}: {e:?} at {at} beyond the line ({} bytes)",
            line.len()
        );
    }
}

fn canonicalizer(selector: u8, input: &[u8]) {
    // Bits 0 and 7: the profile; with `aggressive`, every opt-in rule, a
    // rules file with rewrites, and key-value sorting half of the time.
    let profile = Profile::ALL[usize::from(selector & 1) | usize::from(selector >> 6 & 2)];
    let mut c = Canonicalizer::new(profile);
    if profile == Profile::Aggressive && selector & 0x20 != 0 {
        c.set_rules(Some(RULES.clone()));
    }
    if selector & 2 != 0 {
        let base = Base::parse(BASES[(selector >> 2) as usize % BASES.len()]).expect("valid base");
        c = c.with_base(base);
    }
    let mut out = b"prefix".to_vec();
    let result = if selector & 0x40 != 0 {
        c.canonicalize_target(input, &mut out)
    } else {
        c.canonicalize_into(input, &mut out)
    };
    assert_eq!(&out[..6], b"prefix");
    match result {
        Ok(r) => {
            assert!(r.parts.is_consistent(&out[6..]));
            assert_eq!(r.unchanged, &out[6..] == input);
        }
        Err(e) => {
            assert_eq!(out.len(), 6, "appended on error");
            assert!(e.offset <= input.len().max(canonurl::DEFAULT_MAX_INPUT_LEN));
        }
    }
}

/// Every opt-in rule, per-host and per-path sections, host aliases (to a
/// host, and to a host and path prefix), kept and dropped parameters, and
/// rewrites (of the path and of the whole URL, with ids) that can make the
/// URL invalid (`invalid-rewrite`).
static RULES: std::sync::LazyLock<Arc<canonurl::canon::rules::RuleSet>> =
    std::sync::LazyLock::new(|| {
        let edits = canonurl::canon::rules::Edit::parse_list(
            "+lowercase-path,+https-as-http,sort-query=key-value,trailing-slash=add",
        )
        .expect("valid edits");
        let file = r#"
state-params = ["back", "s*"]
keep-position = ["page"]
defaults = { sort = "asc" }
drop-params = ["view", "l*"]
rewrite = [
  { regex = '/(\d+)', replace = '/n$1', id = "n" },
  { literal = "a", replace = "%zz[" },
  { regex = '^(\w+)://([^/]*)q', replace = '$1://$2@[', scope = "url", id = "url" },
]
host-aliases = [
  ["1.2.3.4", "example.com"],
  ["a.example.org/x/", "example.net/y/"],
  ["b.c", "[::1]"],
]

[[path]]
prefix = "/p/"
keep-params = ["id", "p*"]

[[host]]
match = ["*.com", "example.org"]
rules = ["-www", "+http-as-https"]
rewrite = [{ regex = '(?i)x(.)', replace = ' $1#?' }]

[[host.path]]
prefix = "/"
defaults = { a = "1" }
drop-params = ["*b"]

[[host.path]]
prefix = "/p/q/"
keep-params = []
"#;
        Arc::new(
            canonurl::canon::rules::file::build(
                Profile::Aggressive.rule_mask(),
                Some(file),
                &edits,
            )
            .expect("valid rules file"),
        )
    });

/// Every line through every extractor, for every field.
fn extractors(chunk: &[u8], derived: Option<JsonPaths>) {
    let mut out = Extracted::default();
    let mut json: Vec<(String, JsonPaths)> = JsonPreset::ALL
        .iter()
        .map(|p| (format!("json {p}"), p.paths()))
        .collect();
    json.push(("json custom".into(), custom_paths()));
    if let Some(p) = derived {
        json.push(("json derived".into(), p));
    }
    for field in FIELDS {
        for format in [LogFormat::Common, LogFormat::Vhost] {
            let mut x = RecordReader::new(format, None);
            for line in lines(chunk) {
                check_line(x.read(line, field, &mut out), line, "clf");
            }
        }
        for format in [LogFormat::W3c, LogFormat::Cloudfront] {
            // W3C keeps the `#Fields:` layout from line to line.
            let mut x = RecordReader::new(format, None);
            for line in lines(chunk) {
                check_line(x.read(line, field, &mut out), line, "w3c");
                let _ = W3cExtractor::is_fields_line(line);
            }
        }
        let mut alb = RecordReader::new(LogFormat::Alb, None);
        let mut haproxy = RecordReader::new(LogFormat::Haproxy, None);
        for line in lines(chunk) {
            check_line(alb.read(line, field, &mut out), line, "alb");
            check_line(haproxy.read(line, field, &mut out), line, "haproxy");
        }
        for (what, paths) in &json {
            let mut x = RecordReader::new(LogFormat::Json, Some(paths.clone()));
            for line in lines(chunk) {
                check_line(x.read(line, field, &mut out), line, what);
            }
        }
    }
    let _ = detect(chunk);
    let _ = JsonExtractor::detect_preset(chunk.split(|&b| b == b'\n').take(200));
}

/// The number of lines of a piece as the worker counts them: a last line
/// without a line end counts; an empty piece has none.
fn count_lines(chunk: &[u8]) -> u64 {
    let n = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(chunk.last().is_some_and(|&b| b != b'\n'))
}

fn worker(cfg: u32, chunk: &[u8], derived: Option<JsonPaths>) {
    let mut c = cfg;
    let mut pick = |n: u32| {
        let v = c % n;
        c /= n;
        v as usize
    };
    // Every format, then JSON with every preset's paths, custom paths and
    // paths derived from the input.
    let (formats, presets) = (LogFormat::ALL.len(), JsonPreset::ALL.len());
    let (format, json_paths) = match pick((formats + presets + 2) as u32) {
        i if i < formats => {
            let f = LogFormat::ALL[i];
            (f, (f == LogFormat::Json).then(|| JsonPreset::Nginx.paths()))
        }
        i if i < formats + presets => (LogFormat::Json, Some(JsonPreset::ALL[i - formats].paths())),
        i if i == formats + presets => (LogFormat::Json, Some(custom_paths())),
        _ => (LogFormat::Json, Some(derived.unwrap_or_else(custom_paths))),
    };
    let field = FIELDS[pick(3)];
    let output = [OutputFormat::Plain, OutputFormat::Tsv, OutputFormat::Jsonl][pick(3)];
    let mode = [Mode::Pipe, Mode::Records, Mode::Unique, Mode::Count][pick(4)];
    let base = match pick(3) {
        0 => None,
        i => Some(Base::parse(LOG_BASES[i - 1]).expect("valid base")),
    };
    let profile = Profile::ALL[pick(4)];
    let key = pick(2) == 1;
    let rules = (pick(2) == 1).then(|| RULES.clone());
    let dedup = (pick(2) == 1 && !matches!(mode, Mode::Unique | Mode::Count))
        .then(|| (Profile::Aggressive, RULES.clone()));
    let explain = pick(2) == 1;
    let surt = [None, Some(SurtForm::Cdx), Some(SurtForm::Classic)][pick(3)];
    let rule_merges = pick(2) == 1;
    let max_line = [canonurl::pipeline::DEFAULT_MAX_LINE, 16][pick(2)];
    let with_header = pick(2) == 1;
    let opts = Options {
        format: Some(format),
        json_paths: json_paths.clone(),
        field,
        profile,
        base,
        output,
        mode,
        key,
        threads: 1,
        max_line,
        rejects: true,
        max_diagnostics: 3,
        rules,
        dedup,
        explain,
        surt,
        rule_merges,
        ..Options::default()
    };
    let ctx = FileCtx {
        id: 0,
        name: Arc::from("fuzz"),
        format,
        json_paths,
    };
    let mut w = Worker::new(Arc::new(opts));
    let mut out = PieceOut::default();
    // The `#Fields:` line in effect (the chunker passes the last one seen):
    // here the chunk's first line, whatever it is.
    let header = with_header.then(|| lines(chunk).next().unwrap_or_default());
    w.piece(&ctx, chunk, 1, header, &mut out);

    let n_lines = count_lines(chunk);
    let s = &out.stats;
    assert_eq!(s.lines, n_lines, "every line counted");
    assert_eq!(s.lines, s.emitted + s.skipped_total() + s.rejected_total());
    assert!(s.urls >= s.emitted && s.urls <= 2 * s.emitted);
    // Input bytes are counted by the caller of `piece` (a byte range's
    // lines may not be all of the file bytes it covers): none here.
    assert_eq!(s.bytes, 0);
    let newlines = out.out.iter().filter(|&&b| b == b'\n').count() as u64;
    // `plain` logs have no referer: one slot whatever the field.
    let slots = if field == Field::Both && format != LogFormat::Plain {
        2
    } else {
        1
    };
    match (mode, output) {
        (Mode::Pipe, OutputFormat::Plain) => assert_eq!(newlines, n_lines, "pipe: a line per line"),
        (Mode::Pipe, _) => assert_eq!(newlines, n_lines * slots, "pipe: a row per field"),
        (Mode::Records, OutputFormat::Plain) => assert_eq!(newlines, s.urls, "a line per URL"),
        (Mode::Unique | Mode::Count, _) => {
            // URLs back to back, each at its span.
            assert_eq!(out.distinct.len() as u64, s.urls);
            let mut at = 0;
            for u in &out.distinct {
                assert_eq!(u.start, at);
                assert!(u.end > u.start, "an empty URL");
                at = u.end;
            }
            assert_eq!(at, out.out.len());
        }
        _ => {}
    }
    if !out.out.is_empty() && out.distinct.is_empty() {
        assert_eq!(out.out.last(), Some(&b'\n'));
    }
    // With --rejects every rejected line is kept, in order, for the writer.
    assert_eq!(
        out.rejected.len() as u64,
        s.rejected_total(),
        "a --rejects line per reject"
    );
    assert!(out.rejected.windows(2).all(|w| w[0].index < w[1].index));

    // A line too long to read whole, and a fragment, as the chunker reports them.
    let mut lost = PieceOut::default();
    let head = &chunk[..chunk.len().min(64)];
    let too_long = Why::Line(LineError::LineTooLong);
    w.lost_line(ctx.format, 0, 7, head, too_long, max_line, &mut lost);
    w.lost_line(
        ctx.format,
        0,
        8,
        head,
        Why::TruncatedInput,
        head.len(),
        &mut lost,
    );
    assert_eq!(lost.stats.lines, 2);
    assert_eq!(lost.stats.rejected_total(), 2);
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    canonicalizer(selector, input);

    let Some((&selector2, chunk)) = input.split_first() else {
        return;
    };
    let cfg = u32::from(selector) | u32::from(selector2) << 8;
    // Paths from the first line, for configurations that ask for them.
    let derived =
        (selector2 & 0x80 != 0).then(|| paths_from(lines(chunk).next().unwrap_or_default()));
    extractors(chunk, derived.clone());
    worker(cfg, chunk, derived);
});
