//! A log chunk through the whole pipeline (`pipeline::run` over a file):
//! every line is counted exactly once, and the output does not depend on
//! how the input is cut into pieces or on the number of threads.
//!
//! `data[0..2]` chooses the configuration (format or detection, field, output
//! format, mode, profile, base, and for `Count` a `--top`/`--min-count`),
//! `data[2..]` is the file. The file is run twice: one thread with the default
//! piece size, then three threads with 64-byte pieces (with the format the
//! first run detected, when it detected one) and, for `Unique` and `Count`, a
//! distinct table limited to a few hundred bytes, so that it is written to
//! sorted runs and merged again many times. Checked:
//! - `lines == emitted + skipped + rejected`, in the totals and per file;
//! - `lines` is the number of lines of the file (`\n` count, plus one for a
//!   last line without `\n`), unless the file starts with the magic bytes of
//!   a compression the pipeline reads (gzip, zstd, xz, bzip2: it decompresses
//!   it) or refuses (lz4, zip, `compress`, ...: then the input's error names
//!   it and no line is read), or no format was detected;
//! - in `Pipe` mode the output has one line per input line (`plain`), or one
//!   row per wanted field (`tsv`, `jsonl`); in `Records` `plain`, one line per
//!   URL; in `Unique` and `Count` (without `--top`/`--min-count`), one line per
//!   distinct URL;
//! - both runs give the same output, `--rejects` lines, diagnostics and
//!   counts: spilling the distinct table changes nothing;
//! - a common or combined log's request targets, in `Pipe` `plain` output
//!   with no base, are line for line what the library gives for the record
//!   read first (`RecordReader`, `request_url`, `canonicalize_target`):
//!   the pipeline canonicalizes a usual target where it lies in the line,
//!   its end found by its own scan, and must not differ from that.
#![no_main]

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::OnceLock;

use canonurl::input::{Compression, Source};
use canonurl::log::RequestUrl;
use canonurl::log::{request_url, Extracted, Field, JsonPaths, JsonPreset, Line, LogFormat};
use canonurl::pipeline::stats::Summary;
use canonurl::pipeline::{self, Mode, Options, OutputFormat, Sinks};
use canonurl::{Base, Canonicalizer, Profile, RecordReader};
use libfuzzer_sys::fuzz_target;

/// One file per fuzzing process, rewritten for every input.
fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!(
            "canonurl-fuzz-conservation-{}.log",
            std::process::id()
        ))
    })
}

struct Run {
    out: Vec<u8>,
    rejects: Vec<u8>,
    diag: Vec<u8>,
    summary: Summary,
}

fn run(opts: &Options) -> Run {
    let (mut out, mut rejects, mut diag) = (Vec::new(), Vec::new(), Vec::new());
    let summary = pipeline::run(
        &[Source::Path(path().clone())],
        opts,
        Sinks {
            out: &mut out,
            rejects: Some(&mut rejects),
            diag: &mut diag,
            progress: None,
        },
    )
    .expect("writing to memory does not fail");
    Run {
        out,
        rejects,
        diag,
        summary,
    }
}

fn count_lines(data: &[u8]) -> u64 {
    let n = data.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

fn newlines(b: &[u8]) -> u64 {
    b.iter().filter(|&&c| c == b'\n').count() as u64
}

/// The library's URL for each line of `file` whose record has an
/// origin-form target written path-only, compared with that line of `out`.
fn same_as_library(format: LogFormat, profile: Profile, file: &[u8], out: &[u8], max_line: usize) {
    let mut reader = RecordReader::new(format, None);
    let mut canon = Canonicalizer::new(profile);
    let (mut record, mut url, mut expected) = (Extracted::default(), Vec::new(), Vec::new());
    let got = out.split(|&b| b == b'\n');
    for (n, (line, got)) in file.split(|&b| b == b'\n').zip(got).enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max_line {
            continue;
        }
        if reader.read(line, Field::Request, &mut record) != Line::Record
            || request_url(&record, line, None, &mut url) != RequestUrl::PathOnly
        {
            continue;
        }
        expected.clear();
        if canon
            .canonicalize_target(record.target(line), &mut expected)
            .is_err()
        {
            expected.clear();
        }
        assert_eq!(
            got.escape_ascii().to_string(),
            expected.escape_ascii().to_string(),
            "line {}: {:?}",
            n + 1,
            line.escape_ascii().to_string()
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let [cfg, cfg2, file @ ..] = data else {
        return;
    };
    let (cfg, file) = (*cfg, file);
    let mut c = u32::from(cfg) | u32::from(*cfg2) << 8;
    let mut pick = |n: u32| {
        let v = c % n;
        c /= n;
        v as usize
    };
    // Detection, every format, JSON with each preset's paths.
    let formats = LogFormat::ALL.len();
    let choices = 1 + formats + JsonPreset::ALL.len();
    let (format, json_paths): (Option<LogFormat>, Option<JsonPaths>) = match pick(choices as u32) {
        0 => (None, None),
        i if i <= formats => (Some(LogFormat::ALL[i - 1]), None),
        i => (
            Some(LogFormat::Json),
            Some(JsonPreset::ALL[i - 1 - formats].paths()),
        ),
    };
    let field = [Field::Request, Field::Referer, Field::Both][pick(3)];
    let mode = [Mode::Pipe, Mode::Records, Mode::Unique, Mode::Count][pick(4)];
    let output = match pick(3) {
        // plain twice as often
        2 => [OutputFormat::Tsv, OutputFormat::Jsonl][usize::from(cfg & 0x80 != 0)],
        _ => OutputFormat::Plain,
    };
    let base = (pick(2) == 1).then(|| Base::parse(b"https://h.example:8443/d/").expect("base"));
    let profile = if cfg & 0x40 != 0 {
        Profile::Whatwg
    } else {
        Profile::Rfc3986
    };
    let (top, min_count) = match (mode, pick(4)) {
        (Mode::Count, 1) => (Some(1 + pick(3) as u64), None),
        (Mode::Count, 2) => (None, Some(2)),
        (Mode::Count, 3) => (Some(2), Some(2)),
        _ => (None, None),
    };

    let json_paths_given = json_paths.clone();
    std::fs::write(path(), file).expect("temp file");
    let opts = Options {
        format,
        json_paths,
        field,
        profile,
        base,
        output,
        mode,
        threads: 1,
        max_line: 1024,
        rejects: true,
        max_diagnostics: 5,
        top,
        min_count,
        ..Options::default()
    };
    let one = run(&opts);

    let s = &one.summary.stats;
    assert_eq!(s.lines, s.emitted + s.skipped_total() + s.rejected_total());
    assert_eq!(one.summary.files.len(), 1);
    let report = &one.summary.files[0];
    assert_eq!(&report.stats, s);
    let compressed = Compression::sniff(file) != Compression::None;
    if compressed {
        // Decompressed by the pipeline: only the counting is checked.
        return;
    }
    if let Some(kind) = Compression::unread(file) {
        // Recognised and refused (lz4, zip, compress, ...): an error that
        // names it, and nothing read.
        let error = report.error.as_deref().unwrap_or_default();
        assert!(
            error.contains(&format!("{kind}-compressed input is not read")),
            "{kind}: {error:?}"
        );
        assert_eq!(report.format, None);
        assert_eq!((s.lines, s.bytes), (0, 0));
        assert!(one.out.is_empty());
        return;
    }
    let detected = report.format;
    if detected.is_none() {
        // A given format is used, except JSON without paths whose objects
        // match no preset: an error naming their fields.
        let no_preset = format == Some(LogFormat::Json)
            && json_paths_given.is_none()
            && report
                .error
                .as_deref()
                .is_some_and(|e| e.contains("match no preset"));
        assert!(format.is_none() || no_preset, "a given format is used");
        assert_eq!(s.lines, 0);
        assert!(one.out.is_empty());
        return;
    }
    assert!(report.error.is_none(), "{:?}", report.error);
    let lines = count_lines(file);
    assert_eq!(s.lines, lines, "every line of the file counted once");
    assert_eq!(s.bytes, file.len() as u64);
    // `plain` logs have no referer: one slot whatever the field.
    let slots = if field == Field::Both && detected != Some(LogFormat::Plain) {
        2
    } else {
        1
    };
    match (mode, output) {
        (Mode::Pipe, OutputFormat::Plain) => {
            assert_eq!(
                newlines(&one.out),
                lines,
                "pipe: one output line per input line"
            );
        }
        (Mode::Pipe, _) => assert_eq!(newlines(&one.out), lines * slots, "pipe: a row per field"),
        (Mode::Records, OutputFormat::Plain) => assert_eq!(newlines(&one.out), s.urls),
        (Mode::Unique | Mode::Count, _) if top.is_none() && min_count.is_none() => {
            assert_eq!(
                Some(newlines(&one.out)),
                one.summary.distinct,
                "a line per distinct URL"
            );
        }
        _ => {}
    }
    if !one.out.is_empty() {
        assert_eq!(one.out.last(), Some(&b'\n'));
    }
    if let Some(format @ (LogFormat::Common | LogFormat::Combined)) = detected {
        if (mode, output, field) == (Mode::Pipe, OutputFormat::Plain, Field::Request)
            && opts.base.is_none()
        {
            same_as_library(format, profile, file, &one.out, opts.max_line);
        }
    }

    // Again, cut into 64-byte pieces on three threads, with the format the
    // first run used (detection looks at the first piece only, so with tiny
    // pieces it may guess differently; that is not what is tested here).
    let json_paths = match (&opts.json_paths, report.json_preset) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(name)) => Some(JsonPreset::from_str(name).expect("preset name").paths()),
        (None, None) => None,
    };
    let small = Options {
        format: detected,
        json_paths,
        threads: 3,
        chunk_len: 64,
        memory_limit: Some(64 + u64::from(cfg2 >> 4) * 64),
        ..opts.clone()
    };
    let three = run(&small);
    assert_eq!(three.summary.stats, one.summary.stats, "counts");
    assert_eq!(
        String::from_utf8_lossy(&three.out),
        String::from_utf8_lossy(&one.out),
        "output"
    );
    assert_eq!(three.out, one.out, "output bytes");
    assert_eq!(three.rejects, one.rejects, "--rejects");
    assert_eq!(
        String::from_utf8_lossy(&three.diag),
        String::from_utf8_lossy(&one.diag),
        "diagnostics"
    );
});
