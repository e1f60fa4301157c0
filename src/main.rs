//! `canonurl`: canonical URLs from web-server access logs.
//!
//! ```text
//! canonurl [OPTIONS] [FILE|-]...
//! ```
//!
//! Reads access logs (any of the formats of `-f`, detected per input by
//! default; plain, gzip or zstd), takes each record's request URL (or its
//! referer), canonicalizes it and writes it to stdout. Data goes to stdout
//! only, diagnostics to stderr only, and the output bytes never depend on
//! whether stdout is a terminal. See README.md for examples.
//!
//! Exit status (as ripgrep's): 0 when everything was read (rejected lines
//! included, and when stdout is closed early); 1 when `--strict` saw a
//! rejected line or `--max-reject-rate` was exceeded; 2 on a usage error or
//! when an input could not be read to its end, or the output not written.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use canonurl::canon::rules::{self, Edit, Rule};
use canonurl::canon::surt::SurtForm;
use canonurl::input::Source;
use canonurl::log::json::{JsonPaths, JsonPreset};
use canonurl::log::{Field, LogFormat};
use canonurl::pipeline::stats::Summary;
use canonurl::pipeline::{self, Mode, Options, OutputFormat, Sinks};
use canonurl::{Base, Profile};
use clap::{ArgGroup, Parser, ValueEnum};
use std::sync::Arc;

/// Exit status when `--strict` or `--max-reject-rate` fails the run.
const EXIT_REJECTS: u8 = 1;
/// Exit status for usage errors and inputs or outputs that failed.
const EXIT_FATAL: u8 = 2;

/// Canonical URLs from web-server access logs.
#[derive(Debug, Parser)]
#[command(name = "canonurl", version, about, long_about = None)]
#[command(group(ArgGroup::new("mode").args(["pipe", "unique", "count"])))]
struct Cli {
    /// Input format; `auto` detects it from the first lines of each input.
    #[arg(short = 'f', long = "log-format", value_name = "FORMAT", default_value = "auto", value_parser = parse_log_format)]
    log_format: FormatChoice,

    /// Canonicalization profile: `whatwg` (the URL Standard's href),
    /// `rfc3986` (meaning-preserving), `safe` (plus dedup rules that are safe
    /// in practice), `aggressive` (plus every default dedup rule).
    #[arg(long, value_name = "PROFILE", value_enum, default_value_t = ProfileArg::Rfc3986)]
    profile: ProfileArg,

    /// Switch dedup rules on or off, on top of the profile's:
    /// `+name,-name`, `trailing-slash=add|remove|keep`,
    /// `sort-query=key|key-value|off`. May be repeated. `--list-rules`
    /// lists the rules.
    #[arg(long, value_name = "EDITS", action = clap::ArgAction::Append, allow_hyphen_values = true)]
    rule: Vec<String>,

    /// Rules file (TOML): rule edits, lists (tracking, session, state and
    /// default-value parameters, index files) and rewrite rules, for every
    /// host and per host (`example.com`, `*.example.com`).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,

    /// List the dedup rules with their tier and effect, and exit.
    #[arg(long)]
    list_rules: bool,

    /// Add a dedup key to each URL: the URL canonicalized with
    /// `--key-profile` (and `--rule`, `--rules`), then its fingerprint.
    #[arg(long)]
    dedup_key: bool,

    /// Profile of the dedup key (implies --dedup-key).
    #[arg(long, value_name = "PROFILE", value_enum)]
    key_profile: Option<ProfileArg>,

    /// Add the dedup rules that changed each URL (`-` for none).
    #[arg(long)]
    explain: bool,

    /// Write each URL in SURT form (`com,example)/path?query`, the
    /// Wayback/CDX key); `--surt=classic` gives `http://(com,example,)/path`.
    #[arg(long, value_name = "FORM", value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "cdx")]
    surt: Option<SurtArg>,

    /// Scheme and host for request targets of records that do not say their
    /// host; with `-f plain`, the base URL of relative references. Without
    /// it, such targets are written as path and query only.
    #[arg(long, value_name = "URL")]
    base: Option<OsString>,

    /// Which URL of each record: the request target, the Referer, or both.
    #[arg(long, value_name = "FIELD", value_enum, default_value_t = FieldArg::Request)]
    field: FieldArg,

    /// Output format: one URL per line, TSV rows or JSON Lines.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = OutputArg::Plain)]
    format: OutputArg,

    /// Exactly one output line per input line, in order (empty when the
    /// line gave no URL): the contract of Spark's `pipe` and Hadoop streaming.
    #[arg(long)]
    pipe: bool,

    /// Each canonical URL once, in first-seen order.
    #[arg(long)]
    unique: bool,

    /// Each canonical URL with its count, most frequent first.
    #[arg(long)]
    count: bool,

    /// Add the 64-bit fingerprint (XXH64, seed 42, signed decimal; equal to
    /// Spark SQL's `xxhash64(url)`) after a tab.
    #[arg(long)]
    key: bool,

    /// Print totals to stderr: lines, emitted, skipped and rejected by
    /// reason, bytes, MB/s, detected formats.
    #[arg(long)]
    stats: bool,

    /// Write the totals as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,

    /// Write every rejected line to FILE as `INPUT:LINE<TAB>REASON<TAB>BYTE<TAB>LINE`.
    #[arg(long, value_name = "FILE")]
    rejects: Option<PathBuf>,

    /// Exit with status 1 when any line was rejected.
    #[arg(long)]
    strict: bool,

    /// Exit with status 1 when more than this fraction of lines was
    /// rejected (`0.01` or `1%`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    max_reject_rate: Option<f64>,

    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,

    /// Progress bar on stderr: `auto` shows it when stderr is a terminal.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = When::Auto)]
    progress: When,

    /// Longest line read, in bytes; longer lines are rejected (line-too-long).
    #[arg(long, value_name = "BYTES", default_value_t = pipeline::DEFAULT_MAX_LINE)]
    max_line_len: usize,

    /// JSON logs: field paths from a preset (default: detected per input).
    #[arg(long, value_name = "PRESET", value_parser = parse_json_preset)]
    json_preset: Option<JsonPreset>,

    /// JSON logs: dotted path of the request target (`request.uri`).
    #[arg(long, value_name = "PATH")]
    json_target: Option<String>,

    /// JSON logs: dotted path of a whole request line (`GET /x HTTP/1.1`).
    #[arg(long, value_name = "PATH")]
    json_request: Option<String>,

    /// JSON logs: dotted path of the host.
    #[arg(long, value_name = "PATH")]
    json_host: Option<String>,

    /// JSON logs: dotted path of the scheme.
    #[arg(long, value_name = "PATH")]
    json_scheme: Option<String>,

    /// JSON logs: dotted path of the referer.
    #[arg(long, value_name = "PATH")]
    json_referer: Option<String>,

    /// Read input paths from FILE (`-`: stdin), one per line, after the
    /// FILE arguments.
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,

    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// With --count: only the N most frequent URLs (ties in first-seen order).
    #[arg(long, value_name = "N", help_heading = "Output",
          value_parser = clap::value_parser!(u64).range(1..))]
    top: Option<u64>,

    /// With --count: only URLs counted at least N times.
    #[arg(long, value_name = "N", help_heading = "Output")]
    min_count: Option<u64>,

    /// Memory for the distinct table of --unique/--count (`512M`, `2G`,
    /// `1.5GiB`, bytes; K/M/G/T and KiB.. are 1024-based, KB/MB.. 1000-based);
    /// past it the table is written to --temp-dir as sorted runs, merged at
    /// the end. Default: a quarter of the machine's memory.
    #[arg(long, value_name = "SIZE", help_heading = "Threads and memory",
          value_parser = pipeline::distinct::parse_size)]
    memory: Option<u64>,

    /// Directory for the sorted runs of --memory (default: the system's
    /// temporary directory, `TMPDIR` or `/tmp`).
    #[arg(long, value_name = "DIR", help_heading = "Threads and memory")]
    temp_dir: Option<PathBuf>,

    /// Input files; none, or `-`, reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug)]
enum FormatChoice {
    Auto,
    Given(LogFormat),
}

fn parse_log_format(s: &str) -> Result<FormatChoice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(FormatChoice::Auto);
    }
    s.parse::<LogFormat>()
        .map(FormatChoice::Given)
        .map_err(|_| {
            let names: Vec<&str> = LogFormat::ALL.iter().map(|f| f.name()).collect();
            format!("unknown log format {s:?} (auto, {})", names.join(", "))
        })
}

fn parse_json_preset(s: &str) -> Result<JsonPreset, String> {
    s.parse::<JsonPreset>()
        .map_err(|_| format!("unknown JSON preset {s:?} (nginx, caddy, traefik)"))
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let (num, scale) = match s.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (s, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(r) if (0.0..=scale).contains(&r) => Ok(r / scale),
        _ => Err(format!(
            "{s:?} is not a rate between 0 and 1 (or 0% and 100%)"
        )),
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ProfileArg {
    Whatwg,
    Rfc3986,
    Safe,
    Aggressive,
}

impl ProfileArg {
    fn profile(self) -> Profile {
        match self {
            ProfileArg::Whatwg => Profile::Whatwg,
            ProfileArg::Rfc3986 => Profile::Rfc3986,
            ProfileArg::Safe => Profile::Safe,
            ProfileArg::Aggressive => Profile::Aggressive,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SurtArg {
    /// `com,example)/path?query`: no scheme, no trailing comma (Wayback CDX).
    Cdx,
    /// `http://(com,example,)/path?query`.
    Classic,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FieldArg {
    Request,
    Referer,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputArg {
    Plain,
    Tsv,
    Jsonl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum When {
    Auto,
    Always,
    Never,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("canonurl: {message}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

/// Runs the command; `Err` is a fatal error to report.
fn run(cli: Cli) -> Result<u8, String> {
    if cli.list_rules {
        print!("{}", rules_table());
        return Ok(0);
    }
    let options = options(&cli)?;
    let sources = sources(&cli)?;

    let stdout = io::stdout();
    let mut out: Box<dyn Write> = match &cli.output {
        Some(path) => Box::new(BufWriter::with_capacity(
            256 * 1024,
            File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?,
        )),
        None => Box::new(BufWriter::with_capacity(256 * 1024, stdout.lock())),
    };
    let mut rejects = match &cli.rejects {
        Some(path) => {
            Some(BufWriter::new(File::create(path).map_err(|e| {
                format!("{}: cannot create: {e}", path.display())
            })?))
        }
        None => None,
    };
    let stderr = io::stderr();
    let show_progress = match cli.progress {
        When::Always => true,
        When::Never => false,
        When::Auto => stderr.is_terminal(),
    };
    let bar = show_progress.then(|| progress_bar(&sources));
    let mut tick = |raw: u64| {
        if let Some(b) = &bar {
            b.set_position(raw);
        }
    };
    let mut diag = stderr.lock();
    let result = pipeline::run(
        &sources,
        &options,
        Sinks {
            out: &mut out,
            rejects: rejects.as_mut().map(|r| r as &mut dyn Write),
            diag: &mut diag,
            progress: if bar.is_some() { Some(&mut tick) } else { None },
        },
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let summary = match result {
        Ok(s) => s,
        // A temporary file of --memory's runs: the message names the directory.
        Err(e) if pipeline::is_spill_error(&e) => return Err(e.to_string()),
        // The reader of our output went away (`| head`): not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(0),
        Err(e) => {
            let name = cli
                .output
                .as_ref()
                .map_or("<stdout>".to_string(), |p| p.display().to_string());
            return Err(format!("{name}: cannot write: {e}"));
        }
    };
    drop(diag);
    if let Some(r) = rejects.as_mut() {
        r.flush()
            .map_err(|e| format!("--rejects: cannot write: {e}"))?;
    }
    report(&cli, &summary)?;
    Ok(exit_code(&cli, &summary))
}

fn exit_code(cli: &Cli, summary: &Summary) -> u8 {
    if summary.had_errors() {
        return EXIT_FATAL;
    }
    let s = &summary.stats;
    let rejected = s.rejected_total();
    if cli.strict && rejected > 0 {
        return EXIT_REJECTS;
    }
    if let Some(rate) = cli.max_reject_rate {
        if s.lines > 0 && rejected as f64 / s.lines as f64 > rate {
            eprintln!(
                "canonurl: {rejected} of {} lines rejected, more than --max-reject-rate {rate}",
                s.lines
            );
            return EXIT_REJECTS;
        }
    }
    0
}

fn report(cli: &Cli, summary: &Summary) -> Result<(), String> {
    if cli.stats {
        eprint!("{}", summary.to_text());
    }
    if let Some(path) = &cli.stats_json {
        let mut json = summary.to_json();
        json.push('\n');
        std::fs::write(path, json).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

fn options(cli: &Cli) -> Result<Options, String> {
    let base = match &cli.base {
        Some(b) => Some(
            Base::parse(b.as_encoded_bytes())
                .map_err(|r| format!("invalid --base {:?}: {r}", b.to_string_lossy()))?,
        ),
        None => None,
    };
    let mode = if cli.pipe {
        Mode::Pipe
    } else if cli.unique {
        Mode::Unique
    } else if cli.count {
        Mode::Count
    } else {
        Mode::Records
    };
    let field = match cli.field {
        FieldArg::Request => Field::Request,
        FieldArg::Referer => Field::Referer,
        FieldArg::Both => Field::Both,
    };
    let output = match cli.format {
        OutputArg::Plain => OutputFormat::Plain,
        OutputArg::Tsv => OutputFormat::Tsv,
        OutputArg::Jsonl => OutputFormat::Jsonl,
    };
    if mode == Mode::Pipe && field == Field::Both && output != OutputFormat::Plain {
        return Err(
            "--pipe --field both writes two tab-separated URLs per line; it needs --format plain"
                .to_string(),
        );
    }
    if cli.max_line_len < 1024 {
        return Err("--max-line-len must be at least 1024".to_string());
    }
    let profile = cli.profile.profile();
    let text = match &cli.rules {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("--rules {}: cannot read: {e}", path.display()))?,
        ),
        None => None,
    };
    let mut edits = Vec::new();
    for r in &cli.rule {
        edits.extend(Edit::parse_list(r).map_err(|e| format!("--rule {r:?}: {e}"))?);
    }
    let build = |p: Profile| {
        rules::file::build(p.rule_mask(), text.as_deref(), &edits).map_err(|e| match &cli.rules {
            Some(path) => format!("--rules {}: {e}", path.display()),
            None => format!("--rule: {e}"),
        })
    };
    let rules = build(profile)?;
    let dedup = if cli.dedup_key || cli.key_profile.is_some() {
        if matches!(mode, Mode::Unique | Mode::Count) {
            return Err(
                "--dedup-key adds a column to each record; with --unique/--count choose the grouping with --profile"
                    .to_string(),
            );
        }
        let p = cli
            .key_profile
            .map_or(Profile::Aggressive, ProfileArg::profile);
        Some((p, Arc::new(build(p)?)))
    } else {
        None
    };
    let json_paths = json_paths(cli);
    let threads = cli
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err("--threads must be at least 1".to_string());
    }
    if mode != Mode::Count && (cli.top.is_some() || cli.min_count.is_some()) {
        let flag = if cli.top.is_some() {
            "--top"
        } else {
            "--min-count"
        };
        return Err(format!("{flag} needs --count"));
    }
    if let Some(dir) = &cli.temp_dir {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(format!("--temp-dir {}: not a directory", dir.display())),
            Err(e) => return Err(format!("--temp-dir {}: {e}", dir.display())),
        }
    }
    Ok(Options {
        format: match cli.log_format {
            FormatChoice::Auto => None,
            FormatChoice::Given(f) => Some(f),
        },
        json_paths,
        field,
        profile,
        rules: Some(Arc::new(rules)),
        dedup,
        explain: cli.explain,
        surt: cli.surt.map(|s| match s {
            SurtArg::Cdx => SurtForm::Cdx,
            SurtArg::Classic => SurtForm::Classic,
        }),
        rule_merges: cli.stats || cli.stats_json.is_some(),
        base,
        output,
        mode,
        key: cli.key,
        threads,
        max_line: cli.max_line_len,
        rejects: cli.rejects.is_some(),
        memory_limit: cli.memory,
        temp_dir: cli.temp_dir.clone(),
        top: cli.top,
        min_count: cli.min_count,
        ..Options::default()
    })
}

/// `--list-rules`: every rule, its tier and what it does; then which
/// profile runs which tiers.
fn rules_table() -> String {
    let mut t = String::from("RULE                 TIER        EFFECT\n");
    for r in Rule::ALL {
        t.push_str(&format!(
            "{:<20} {:<11} {}\n",
            r.name(),
            r.tier().name(),
            r.effect()
        ));
    }
    t.push_str(
        "\nProfiles: whatwg and rfc3986 run no rule; safe runs the safe tier; aggressive runs\n\
         the safe and aggressive tiers. Opt-in rules run only when switched on\n\
         (--rule +name, or a rules file).\n",
    );
    t
}

/// JSON paths from `--json-preset` and the `--json-*` overrides.
fn json_paths(cli: &Cli) -> Option<JsonPaths> {
    let overrides = [
        &cli.json_target,
        &cli.json_request,
        &cli.json_host,
        &cli.json_scheme,
        &cli.json_referer,
    ];
    if cli.json_preset.is_none() && overrides.iter().all(|o| o.is_none()) {
        return None;
    }
    let mut paths = cli.json_preset.map(JsonPreset::paths).unwrap_or_default();
    let set = |slot: &mut Option<String>, v: &Option<String>| {
        if let Some(v) = v {
            *slot = Some(v.clone());
        }
    };
    set(&mut paths.target, &cli.json_target);
    set(&mut paths.request_line, &cli.json_request);
    set(&mut paths.host, &cli.json_host);
    set(&mut paths.scheme, &cli.json_scheme);
    set(&mut paths.referer, &cli.json_referer);
    Some(paths)
}

/// The inputs: FILE arguments, then `--files-from`'s lines; stdin if none.
fn sources(cli: &Cli) -> Result<Vec<Source>, String> {
    let mut sources: Vec<Source> = cli.files.iter().map(|p| source(p.clone())).collect();
    if let Some(list) = &cli.files_from {
        let reader: Box<dyn BufRead> = if list.as_os_str() == "-" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            Box::new(BufReader::new(File::open(list).map_err(|e| {
                format!("--files-from {}: cannot open: {e}", list.display())
            })?))
        };
        for line in reader.split(b'\n') {
            let line = line.map_err(|e| format!("--files-from: cannot read: {e}"))?;
            let line = line.strip_suffix(b"\r").unwrap_or(&line);
            if line.is_empty() {
                continue;
            }
            sources.push(source(path_from_bytes(line)));
        }
        if sources.is_empty() {
            return Ok(sources);
        }
    }
    if sources.is_empty() {
        sources.push(Source::Stdin);
    }
    if cli
        .files_from
        .as_ref()
        .is_some_and(|f| f.as_os_str() == "-")
        && sources.contains(&Source::Stdin)
    {
        return Err("stdin cannot be both --files-from - and an input".to_string());
    }
    Ok(sources)
}

fn source(path: PathBuf) -> Source {
    if path.as_os_str() == "-" {
        Source::Stdin
    } else {
        Source::Path(path)
    }
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// A bar over the total size on disk when every input is a regular file;
/// a spinner with bytes and rate otherwise.
fn progress_bar(sources: &[Source]) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let mut total = Some(0u64);
    for s in sources {
        total = match (total, s) {
            (Some(t), Source::Path(p)) => std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| t + m.len()),
            _ => None,
        };
    }
    let bar = match total {
        Some(t) => ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template(
                "{bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template("{spinner} {bytes} {binary_bytes_per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
