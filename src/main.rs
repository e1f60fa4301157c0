//! `canonurl`: canonical URLs from web-server access logs.
//!
//! ```text
//! canonurl [OPTIONS] [FILE|-]...
//! ```
//!
//! Reads access logs (any of the formats of `-f`, detected per input by
//! default; plain, gzip, zstd, xz or bzip2; files or directories), takes each record's request URL (or its
//! referer), canonicalizes it and writes it to stdout. Data goes to stdout
//! only, diagnostics to stderr only, and the output bytes never depend on
//! whether stdout is a terminal. See README.md for examples, docs/ for the
//! reference.
//!
//! Exit status (as ripgrep's): 0 when everything was read (rejected lines
//! included, and when stdout is closed early); 1 when `--strict` saw a
//! rejected line, `--max-reject-rate` was exceeded or `--fail-if-empty`
//! saw no URL written; 2 on a usage error or
//! when an input could not be read to its end, or the output not written.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use canonurl::canon::rules::{self, Edit, Rule};
use canonurl::canon::surt::SurtForm;
use canonurl::input::Source;
use canonurl::log::{CsvColumns, Field, JsonPaths, JsonPreset, LogFormat, Scheme};
use canonurl::pipeline::stats::Summary;
use canonurl::pipeline::{self, Mode, Options, OutputFormat, Sinks};
use canonurl::{Base, Profile};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgGroup, Parser, ValueEnum};
use std::sync::Arc;

mod cli;

use cli::term::{LineWriter, Progress, Shows, Ttys, When};

/// Exit status when `--strict` or `--max-reject-rate` fails the run.
const EXIT_REJECTS: u8 = 1;
/// Exit status for usage errors and inputs or outputs that failed.
const EXIT_FATAL: u8 = 2;

/// Canonical URLs from web-server access logs.
#[derive(Debug, Parser)]
#[command(
    name = "canonurl",
    version,
    about = "Canonical URLs from web-server access logs",
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    after_long_help = LONG_EXAMPLES,
    args_override_self = true,
    args_conflicts_with_subcommands = true,
    max_term_width = 100
)]
#[command(group(ArgGroup::new("mode").args(["pipe", "unique", "count"])))]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    // ---- Input ----
    /// Read input paths from FILE (`-`: stdin), one per line.
    ///
    /// The paths are read after the FILE arguments.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Input",
        hide_short_help = true
    )]
    files_from: Option<PathBuf>,

    /// Longest line read, in bytes.
    ///
    /// Longer lines are rejected (line-too-long) and counted.
    #[arg(long, value_name = "BYTES", default_value_t = pipeline::DEFAULT_MAX_LINE, help_heading = "Input", hide_short_help = true)]
    max_line_len: usize,

    /// Read FILE as it grows, as `tail -F` does, until Ctrl-C.
    ///
    /// Through rotation (rename and create, or truncation), until SIGINT or
    /// SIGTERM, which end the run as the end of the input would (a second
    /// one exits at once). Exactly one uncompressed FILE.
    #[arg(long, help_heading = "Input")]
    follow: bool,

    /// Read only the files of directories that match GLOB.
    ///
    /// `!GLOB`: not. `*.gz`, `access.log*`, `!*.tmp`, as ripgrep's -g; may be repeated,
    /// and the last glob that matches a file decides. Matched against the
    /// file name, or with a `/` against the path below the directory.
    /// Files named as arguments are always read.
    #[arg(short = 'g', long = "glob", value_name = "GLOB", action = clap::ArgAction::Append, allow_hyphen_values = true, help_heading = "Input")]
    globs: Vec<String>,

    // ---- Format ----
    /// Log format of the inputs [default: auto].
    ///
    /// `auto` detects it from the first lines of each input; `plain` reads
    /// one URL per line.
    #[arg(
        short = 'f',
        long = "log-format",
        value_name = "FORMAT",
        default_value = "auto",
        hide_default_value = true,
        value_parser = log_format_parser(),
        ignore_case = true,
        help_heading = "Format"
    )]
    log_format: FormatChoice,

    /// Which URL of each record.
    #[arg(long, value_name = "FIELD", value_enum, default_value_t = Field::Request, help_heading = "Format")]
    field: Field,

    /// Scheme and host for targets without a host.
    ///
    /// An absolute URL (`https://example.com`, `file:///srv/`): origin-form
    /// request targets of records without a host get its scheme and
    /// authority; with `-f plain`, it is the base URL of relative
    /// references. A base with an opaque path (`about:blank`) resolves only
    /// fragments. Without it, such targets are written as path and query
    /// only.
    #[arg(long, value_name = "URL", help_heading = "Format")]
    base: Option<OsString>,

    /// Scheme of records that log no scheme of their own.
    ///
    /// For origin-form targets: `https` for a server that only speaks TLS
    /// (Apache's `ssl_request_log`, a vhost log without `:%p`, a proxy that
    /// terminates TLS and logs port 80). It comes before the scheme a
    /// logged port implies; a scheme the record logs (`cs-protocol`,
    /// `X-Forwarded-Proto`, a JSON scheme field) still wins. With `--base`,
    /// it replaces the base's scheme for those records.
    #[arg(
        long,
        value_name = "SCHEME",
        value_enum,
        help_heading = "Format",
        hide_short_help = true
    )]
    scheme: Option<Scheme>,

    /// JSON logs: field paths from a preset (default: detected per input).
    #[arg(long, value_name = "PRESET", value_parser = names_parser::<JsonPreset>(), ignore_case = true, help_heading = "Format", hide_short_help = true)]
    json_preset: Option<JsonPreset>,

    /// JSON logs: dotted path of the request target (`request.uri`).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_target: Option<String>,

    /// JSON logs: dotted path of a whole request line (`GET /x HTTP/1.1`).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_request: Option<String>,

    /// JSON logs: dotted path of a query string logged apart from the path.
    ///
    /// Appended to the target after a `?` (Akamai's `queryStr`); a target
    /// without its leading `/` then gets one.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_query: Option<String>,

    /// JSON logs: dotted path of the host.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_host: Option<String>,

    /// JSON logs: dotted path of the scheme.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_scheme: Option<String>,

    /// JSON logs: dotted path of the referer.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_referer: Option<String>,

    /// JSON logs: dotted path of the response status (for --with, --status).
    ///
    /// A number or a string of three digits. This and the other paths of
    /// the record's fields (--json-bytes, --json-method, --json-time,
    /// --json-client), given without --json-target or --json-request,
    /// replace those of the preset detected (or given with --json-preset).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_status: Option<String>,

    /// JSON logs: dotted path of the response size in bytes (for --with).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_bytes: Option<String>,

    /// JSON logs: dotted path of the request method (for --with, --method).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_method: Option<String>,

    /// JSON logs: dotted path of the request time (for --with).
    ///
    /// Unix seconds (a fraction allowed; an integer beyond 10^11 is milli-,
    /// micro- or nanoseconds) or an ISO 8601 string.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_time: Option<String>,

    /// JSON logs: dotted path of the client address (for --with).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    json_client: Option<String>,

    /// CSV/TSV logs: the columns, by their header-row names.
    ///
    /// A comma list of `role=NAME`, roles `url` (required), `host`, `method`,
    /// `referer`, `status`, `bytes`, `time`, `client`
    /// (`url=path,host=server`), or a preset
    /// (`gcs`, `nasa`) with such overrides (`gcs,referer=-`). Default: the
    /// preset the header row shows.
    #[arg(long, value_name = "SPEC", value_parser = parse_columns, help_heading = "Format", hide_short_help = true)]
    columns: Option<CsvColumns>,

    /// W3C logs without a `#Fields:` line: the field names, in order.
    ///
    /// As a `#Fields:` line would give them, space separated (`"date time
    /// s-ip cs-method cs-uri-stem cs-uri-query s-port cs-host"`). A
    /// `#Fields:` line in the log still sets the layout from where it
    /// stands. Implies `-f w3c` unless `-f cloudfront` is given.
    #[arg(
        long,
        value_name = "NAMES",
        help_heading = "Format",
        hide_short_help = true
    )]
    w3c_fields: Option<String>,

    // ---- Profile and rules ----
    /// Canonicalization profile.
    #[arg(long, value_name = "PROFILE", value_enum, default_value_t = Profile::Rfc3986, help_heading = "Profile and rules")]
    profile: Profile,

    /// Dedup rules on or off: `+name,-name`, `rule=value`.
    ///
    /// On top of the profile's rules: `+name,-name`,
    /// `trailing-slash=add|remove|keep`, `sort-query=key|key-value|off`. May
    /// be repeated. `--list-rules` lists the rules.
    #[arg(long, value_name = "EDITS", action = clap::ArgAction::Append, allow_hyphen_values = true, help_heading = "Profile and rules")]
    rule: Vec<String>,

    /// Rules file (TOML): rule edits, lists, rewrites.
    ///
    /// Per host, too.
    ///
    /// Rule edits, lists (tracking, session, state and default-value
    /// parameters, index files) and rewrite rules, for every host and per
    /// host (`example.com`, `*.example.com`). An unknown key is an error
    /// naming its line; settings of rules that are off are named in a
    /// warning. See docs/rules.md.
    #[arg(long, value_name = "FILE", help_heading = "Profile and rules")]
    rules: Option<PathBuf>,

    /// List the dedup rules with their tier and effect, and exit.
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    list_rules: bool,

    /// Add a dedup key to each URL (see --key-profile).
    ///
    /// The URL canonicalized with `--key-profile` (and `--rule`, `--rules`),
    /// then its fingerprint, as two more columns.
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    dedup_key: bool,

    /// Profile of the dedup key (implies --dedup-key) [default: aggressive].
    #[arg(
        long,
        value_name = "PROFILE",
        value_enum,
        help_heading = "Profile and rules",
        hide_short_help = true
    )]
    key_profile: Option<Profile>,

    /// Add the dedup rules that changed each URL (`-` for none).
    ///
    /// A column of each record (and `--pipe` line): with --unique/--count it
    /// is a usage error (--stats counts the URLs each rule merged there).
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    explain: bool,

    /// Write each URL in SURT form (Wayback/CDX key).
    ///
    /// `--surt` gives `com,example)/path?query`; `--surt=classic` gives
    /// `http://(com,example,)/path?query`. A URL without a host is written as
    /// it is (see --base).
    #[arg(long, value_name = "FORM", value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "cdx", help_heading = "Profile and rules", hide_short_help = true)]
    surt: Option<SurtForm>,

    // ---- Output ----
    /// Output format.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = OutputFormat::Plain, help_heading = "Output")]
    format: OutputFormat,

    /// Exactly one output line per input line, in order.
    ///
    /// An empty line when the input line gave no URL: the contract of
    /// Spark's `pipe` and Hadoop streaming.
    #[arg(long, help_heading = "Output")]
    pipe: bool,

    /// Each canonical URL once, in first-seen order.
    #[arg(long, help_heading = "Output")]
    unique: bool,

    /// Each canonical URL with its count, most frequent first.
    #[arg(long, help_heading = "Output")]
    count: bool,

    /// With --count: only the N most frequent URLs.
    ///
    /// Ties in first-seen order.
    #[arg(long, value_name = "N", help_heading = "Output",
          value_parser = clap::value_parser!(u64).range(1..))]
    top: Option<u64>,

    /// With --count: only URLs counted at least N times.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Output",
        hide_short_help = true
    )]
    min_count: Option<u64>,

    /// Add each URL's 64-bit fingerprint after a tab.
    ///
    /// XXH64 with seed 42, as a signed decimal: equal to Spark SQL's
    /// `xxhash64(url)`.
    #[arg(long, help_heading = "Output")]
    key: bool,

    /// Add the record's other fields as columns (status, ...).
    ///
    /// Fields: status, bytes, method, time, client, host, input. A
    /// comma-separated list, for --format tsv or jsonl record rows (not
    /// --unique/--count): the columns come after the usual ones, in the
    /// order given. `time` is Unix seconds (UTC), `input` the input's name.
    /// A field the record lacks is an empty cell in TSV and null in JSON
    /// Lines. Which formats log which field: see docs/output.md.
    #[arg(long, value_name = "LIST", help_heading = "Output")]
    with: Vec<String>,

    /// Keep only records whose status is in LIST (`2xx,301`).
    ///
    /// Classes 1xx to 5xx and codes. Other records are skipped (`status-filtered` in --stats); records
    /// without a status are skipped as `no-status`, with a warning.
    #[arg(long, value_name = "LIST", help_heading = "Filters")]
    status: Vec<String>,

    /// Keep only records whose method is in LIST (`GET,HEAD`).
    ///
    /// Any case. Other records are skipped (`method-filtered` in --stats); records
    /// without a method are skipped as `no-method`.
    #[arg(long, value_name = "LIST", help_heading = "Filters")]
    method: Vec<String>,

    /// Write a header row of column names first (`--format tsv`).
    ///
    /// The names are those of the JSON Lines keys.
    #[arg(long, help_heading = "Output", hide_short_help = true)]
    header: bool,

    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE", help_heading = "Output")]
    output: Option<PathBuf>,

    // ---- Threads and memory ----
    /// Worker threads [default: all cores].
    #[arg(
        short = 'j',
        long,
        value_name = "N",
        help_heading = "Threads and memory",
        hide_short_help = true
    )]
    threads: Option<usize>,

    /// Memory for the table of --unique/--count [default: a quarter of RAM].
    ///
    /// `512M`, `2G`, `1.5GiB`, bytes; K/M/G/T and KiB.. are 1024-based,
    /// KB/MB.. 1000-based. Past it the table is written to --temp-dir as
    /// sorted runs, merged at the end: the output is the same.
    #[arg(long, value_name = "SIZE", help_heading = "Threads and memory",
          value_parser = pipeline::parse_size, hide_short_help = true)]
    memory: Option<u64>,

    /// Directory for the sorted runs of --memory [default: $TMPDIR or /tmp].
    #[arg(
        long,
        value_name = "DIR",
        help_heading = "Threads and memory",
        hide_short_help = true
    )]
    temp_dir: Option<PathBuf>,

    // ---- Diagnostics ----
    /// Print totals to stderr at the end.
    ///
    /// Lines read, emitted, skipped and rejected by reason, bytes, MiB/s,
    /// detected formats, rules.
    #[arg(long, help_heading = "Diagnostics")]
    stats: bool,

    /// Write the totals as JSON to FILE.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Diagnostics",
        hide_short_help = true
    )]
    stats_json: Option<PathBuf>,

    /// Write every rejected line to FILE.
    ///
    /// One line each: `INPUT:LINE<TAB>REASON<TAB>BYTE<TAB>LINE`.
    #[arg(long, value_name = "FILE", help_heading = "Diagnostics")]
    rejects: Option<PathBuf>,

    /// No per-line diagnostics on stderr.
    ///
    /// Errors that end an input or the run, and `--stats`, are still
    /// printed.
    #[arg(short, long, help_heading = "Diagnostics")]
    quiet: bool,

    /// Exit with status 1 when any line was rejected.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    strict: bool,

    /// Exit with status 1 above this share of rejected lines (`0.01`, `1%`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate, help_heading = "Diagnostics", hide_short_help = true)]
    max_reject_rate: Option<f64>,

    /// Exit with status 1 when no URL was written.
    ///
    /// Without it such a run exits 0, and says on stderr what became of
    /// the lines when there were any.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    fail_if_empty: bool,

    /// Progress on stderr.
    ///
    /// `auto`: a bar when stderr is a terminal that neither the output nor
    /// typed input shares; `always`: a bar on a terminal, else a plain
    /// progress line every second; `never`.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = When::Auto, help_heading = "Diagnostics", hide_short_help = true)]
    progress: When,

    /// Do not read the config file named by CANONURL_CONFIG_PATH.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    no_config: bool,

    /// Input files or directories; none, or `-`, reads stdin.
    ///
    /// Plain, gzip, zstd, xz or bzip2 (recognised by their first bytes). A
    /// directory is read recursively, its files in byte order of their
    /// paths, skipping hidden files and directories, binary files, files
    /// of no log format detected (with a warning) and symbolic links to
    /// directories (see --glob; --stats lists the skipped).
    #[arg(value_name = "FILE", hide_short_help = true)]
    files: Vec<PathBuf>,
}

/// Other jobs than canonicalizing.
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Print a shell completion script to stdout.
    ///
    /// bash: `canonurl completions bash > ~/.local/share/bash-completion/completions/canonurl`;
    /// zsh: into a directory of `$fpath` as `_canonurl`; fish:
    /// `~/.config/fish/completions/canonurl.fish`; PowerShell: add
    /// `canonurl completions powershell | Out-String | Invoke-Expression` to
    /// `$PROFILE`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the man page (roff) to stdout: `canonurl man | man -l -`.
    Man,
    /// Summarize logs per host, URL and day, for `canonurl mine`.
    ///
    /// See `canonurl summarize --help`; it takes the main command's input
    /// options, so it comes first on the command line.
    Summarize {
        /// The main command's input options and files, and `--window`,
        /// `--merge`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Learn a site's DUST rules from its logs or summaries.
    ///
    /// With evidence; see `canonurl mine --help`; it comes first on the
    /// command line.
    Mine {
        /// The main command's input options and files, and mine's own
        /// (`--evidence`, `--summaries`, `--learn`, `--min-*`, ...).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

const LONG_ABOUT: &str = "\
Canonical URLs from web-server access logs.

Reads access logs (Apache/nginx, vhost, W3C/IIS, CloudFront, ALB, JSON, \
HAProxy, S3, Squid, Envoy, \
or one URL per line; plain, gzip, zstd, xz or bzip2; files or directories), takes each record's \
request URL (or its referer), undoes the logger's escaping, canonicalizes it \
and writes it to stdout: one per record, unique, or counted. Every line is \
emitted, skipped or rejected with a reason; diagnostics go to stderr.

Exit status: 0 when every input was read (rejected lines included); 1 when \
--strict, --max-reject-rate or --fail-if-empty fails the run; 2 on a usage error, an input \
that could not be read to its end, or output that could not be written.";

const EXAMPLES: &str = "\
Examples:
  canonurl --count --stats access.log.gz  most frequent first, totals on stderr
  zcat logs/*.gz | canonurl -f combined --base https://example.com

`--help`: every flag in full, and those left out here (JSON paths, tuning).";

const LONG_EXAMPLES: &str = "\
Examples:
  canonurl access.log
      Canonical request URLs, one per record.
  canonurl --count --top 20 --stats access.log.gz
      The 20 most frequent URLs, and totals on stderr.
  canonurl --profile aggressive --unique --rules site.toml *.log
      Each URL once after the dedup rules of a rules file.
  canonurl -f plain --pipe --key urls.txt
      One line out per line in, with a Spark-compatible fingerprint.
  canonurl --format tsv --header --field both --base https://example.com access.log
      Request and referer URLs as TSV rows with a header.
  canonurl --list-rules
      Every dedup rule, its tier and what it does.

Config file: set CANONURL_CONFIG_PATH to a file of default flags, one per line \
(`#` starts a comment); flags on the command line win. --no-config ignores it.

Shell completions: `canonurl completions bash|zsh|fish|powershell`. Man page: \
`canonurl man`.";

#[derive(Clone, Copy, Debug)]
enum FormatChoice {
    Auto,
    Given(LogFormat),
}

/// `-f`: `auto` or a format name, the list shown in `--help`.
fn log_format_parser() -> impl TypedValueParser<Value = FormatChoice> {
    let values = std::iter::once(PossibleValue::new("auto")).chain(names_only::<LogFormat>());
    PossibleValuesParser::new(values).map(|s| {
        <LogFormat as ValueEnum>::from_str(&s, true).map_or(FormatChoice::Auto, FormatChoice::Given)
    })
}

/// A library enum's values by name, for flags that list names only: the
/// enum's doc comments (which clap would show as each value's help) are
/// written for the API.
fn names_only<E: ValueEnum + 'static>() -> impl Iterator<Item = PossibleValue> {
    E::value_variants()
        .iter()
        .filter_map(E::to_possible_value)
        .map(|v| v.help(None::<&str>))
}

/// The parser of a [`names_only`] flag; case is ignored where the flag says
/// `ignore_case`.
fn names_parser<E: ValueEnum + Clone + Send + Sync + 'static>() -> impl TypedValueParser<Value = E>
{
    PossibleValuesParser::new(names_only::<E>()).try_map(|s| E::from_str(&s, true))
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

/// Prints what clap says of the arguments: `--help` and `--version` as clap
/// does; a usage error in the style of every other error of the command
/// (`canonurl: ...`), with a tip where a value is a common name for one of
/// ours (`-f nginx`).
pub(crate) fn print_clap_error(mut e: clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    if !e.use_stderr() {
        let _ = e.print();
        return;
    }
    if let Some(tip) = value_tip(&e) {
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
    // Rendered as text (clap's styles stripped), its `error: ` ours.
    let text = e.render().to_string();
    eprint!(
        "canonurl: {}",
        text.strip_prefix("error: ").unwrap_or(&text)
    );
}

/// A tip for a value named after what makes the data rather than after the
/// format: `-f nginx`, `-f apache` (their default access log is
/// `combined`), `-f iis` (W3C extended).
fn value_tip(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg)?;
    let value = text(ContextKind::InvalidValue)?.to_ascii_lowercase();
    if !arg.starts_with("--log-format") {
        return None;
    }
    let (what, format) = match value.as_str() {
        "nginx" | "apache" | "apache2" | "httpd" | "lighttpd" => {
            ("the default access log of nginx and Apache is", "combined")
        }
        "iis" => ("IIS logs in the W3C extended format:", "w3c"),
        "clf" | "ncsa" => ("the Common Log Format is", "common"),
        "elb" => ("the AWS load balancer's access log is", "alb"),
        _ => return None,
    };
    Some(format!("{what} -f {format}"))
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let config = match cli::config::load(&args) {
        Ok(c) => c,
        Err(message) => {
            eprintln!("canonurl: {message}");
            return ExitCode::from(EXIT_FATAL);
        }
    };
    // `summarize` takes the main command's input options: it parses them itself.
    if args.get(1).is_some_and(|a| a == "summarize") {
        return cli::summarize::main(&config, args);
    }
    if args.get(1).is_some_and(|a| a == "mine") {
        return cli::mine::main(&config, args);
    }
    let cli = match Cli::try_parse_from(cli::config::merge(&config, args)) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help`, `--version`: printed to stdout, exit 0.
            let usage = e.use_stderr();
            print_clap_error(e);
            if usage {
                if let Some(path) = &config.path {
                    eprintln!(
                        "note: the arguments include {} flags from {}",
                        config.args.len(),
                        cli::config::describe(path)
                    );
                }
            }
            return ExitCode::from(if usage { EXIT_FATAL } else { 0 });
        }
    };
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
    if let Some(command) = &cli.command {
        return subcommand(command);
    }
    if cli.list_rules {
        print!("{}", rules_table());
        return Ok(0);
    }
    let mut options = options(&cli)?;
    let globs = cli::inputs::Globs::new(&cli.globs)?;
    let mut sources = sources(&cli)?;
    let mut walked = Vec::new();
    if !cli.follow {
        (sources, walked) = expand_dirs(sources, &globs);
    }
    if cli.follow {
        sources = vec![follow_source(sources)?];
        options.follow_stop = Some(stop_on_signals()?);
    }
    // Files first: an error creating them is reported before any bar is drawn.
    let file_out = match &cli.output {
        Some(path) => Some(
            File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?,
        ),
        None => None,
    };
    let mut rejects = match &cli.rejects {
        Some(path) => {
            Some(BufWriter::new(File::create(path).map_err(|e| {
                format!("{}: cannot create: {e}", path.display())
            })?))
        }
        None => None,
    };
    let ttys = Ttys::detect();
    let reads_stdin = sources.contains(&Source::Stdin);
    let shows = if cli.follow {
        Shows::Follow {
            counts_at_end: options.mode == Mode::Count,
        }
    } else {
        Shows::Bytes
    };
    let mut progress = Progress::new(
        cli.progress,
        ttys,
        (cli.output.is_none(), options.mode == Mode::Count),
        reads_stdin,
        &sources,
        shows,
        // `--follow` handles them itself: the first ends the input.
        !cli.follow,
    );
    let bar = progress.bar().cloned();

    if reads_stdin && ttys.stdin && ttys.stderr && !cli.quiet && cli.files_from.is_none() {
        eprintln!("canonurl: reading log lines from the terminal; end with Ctrl-D, or give a FILE (--help)");
    }
    // The writer hands over a piece's output at once (tens to hundreds of
    // KiB): a buffer smaller than that lets it go straight to the file, not
    // through a copy into the buffer first (41 instructions per line of the
    // generated combined log at 256 KiB).
    const OUT_BUF: usize = 64 * 1024;
    let mut out: Box<dyn Write> = match file_out {
        Some(file) => Box::new(BufWriter::with_capacity(OUT_BUF, file)),
        // Not `stdout.lock()`: a lock held across the run is how the
        // progress bar once hung the command (see `cli::term`).
        None if bar.is_some() && ttys.stdout => Box::new(BufWriter::with_capacity(
            OUT_BUF,
            LineWriter::new(io::stdout(), bar.clone()),
        )),
        None => Box::new(BufWriter::with_capacity(OUT_BUF, io::stdout())),
    };
    // `io::Stderr` takes its lock per write, never across the run.
    let mut diag = LineWriter::new(io::stderr(), bar);
    let mut tick = |raw: u64, lines: u64| progress.tick(raw, lines);
    let result = pipeline::run(
        &sources,
        &options,
        Sinks {
            out: &mut out,
            rejects: rejects.as_mut().map(|r| r as &mut dyn Write),
            diag: &mut diag,
            progress: Some(&mut tick),
        },
    );
    let _ = diag.flush();
    drop(diag);
    progress.finish();
    let summary = match result {
        Ok(s) => s,
        // A temporary file of --memory's runs: the message names the directory.
        Err(e) if pipeline::is_spill_error(&e) => return Err(e.to_string()),
        // A broken pipe elsewhere (stderr): quiet, as a closed stdout.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(0),
        Err(e) => {
            let name = cli
                .output
                .as_ref()
                .map_or("<stdout>".to_string(), |p| p.display().to_string());
            return Err(format!("{name}: cannot write: {e}"));
        }
    };
    if let Some(r) = rejects.as_mut() {
        r.flush()
            .map_err(|e| format!("--rejects: cannot write: {e}"))?;
    }
    if summary.stats.surt_without_host > 0 {
        eprintln!(
            "canonurl: --surt: {} URLs had no host (request targets of records without one; \
             give --base URL) and were written as they are, not in SURT form",
            summary.stats.surt_without_host
        );
    }
    let mut summary = summary;
    dirs_read(&walked, &mut summary);
    report(&cli, &summary)?;
    for (skip, flag) in [
        (canonurl::log::Skip::NoStatus, "--status"),
        (canonurl::log::Skip::NoMethod, "--method"),
    ] {
        let i = canonurl::log::Skip::ALL.iter().position(|&s| s == skip);
        let n = i.map_or(0, |i| summary.stats.skipped[i]);
        if n > 0 {
            eprintln!(
                "canonurl: warning: {flag}: {n} records had no {} (their log format or line \
                 does not say it); they were skipped as {}",
                &flag[2..],
                skip.name()
            );
        }
    }
    if summary.output_closed {
        // The reader of our output went away (`| head`): the run ends
        // quietly, as a success, with what was read until then reported.
        return Ok(0);
    }
    if let Some(message) = nothing_written(&summary.stats) {
        eprintln!("{message}");
    }
    Ok(exit_code(&cli, &summary))
}

/// What became of the lines of a run that wrote no URL although its input
/// had lines that were not empty: a run that produced nothing useful must
/// not pass for one that did (a `-f` that matches nothing, JSON fields no
/// preset knows, a list of rejects). `None` when a URL was written or
/// there was nothing to read.
fn nothing_written(s: &pipeline::stats::Stats) -> Option<String> {
    let empty = s.skipped[0];
    if s.emitted > 0 || s.lines == empty {
        return None;
    }
    let mut why: Vec<String> = canonurl::log::Skip::ALL
        .iter()
        .zip(s.skipped)
        .filter(|&(_, n)| n > 0)
        .map(|(skip, n)| format!("{n} skipped ({})", skip.name()))
        .collect();
    why.extend(
        s.rejected
            .iter()
            .map(|(name, n)| format!("{n} rejected ({name})")),
    );
    Some(format!(
        "canonurl: no URL written: {} lines read, {}; check -f (--log-format) and --field \
         (--fail-if-empty makes this exit 1)",
        s.lines,
        why.join(", ")
    ))
}

/// `completions SHELL` and `man`.
fn subcommand(command: &Command) -> Result<u8, String> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // Rendered into memory first: clap_complete panics when its writer
    // fails, and `canonurl completions bash | head` closes stdout early.
    let mut text = Vec::new();
    match command {
        Command::Completions { shell } => {
            use clap_complete::Shell;
            let shell = match shell {
                CompletionShell::Bash => Shell::Bash,
                CompletionShell::Zsh => Shell::Zsh,
                CompletionShell::Fish => Shell::Fish,
                CompletionShell::Powershell => Shell::PowerShell,
            };
            clap_complete::generate(shell, &mut cmd, "canonurl", &mut text);
        }
        Command::Man => clap_mangen::Man::new(cmd)
            .render(&mut text)
            .map_err(|e| format!("cannot render the man page: {e}"))?,
        // `canonurl summarize` is read before clap (`main`); here only when
        // options came before it.
        Command::Summarize { .. } => {
            return Err("summarize must come first: canonurl summarize [OPTIONS] [FILE]...".into())
        }
        Command::Mine { .. } => {
            return Err("mine must come first: canonurl mine [OPTIONS] [FILE]...".into())
        }
    }
    let mut out = io::stdout().lock();
    let written = out.write_all(&text).and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(format!("<stdout>: cannot write: {e}")),
    }
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
    if cli.fail_if_empty && s.emitted == 0 {
        return EXIT_REJECTS;
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
        Some(b) => Some(base(b)?),
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
    let field = cli.field;
    let output = cli.format;
    if mode == Mode::Pipe && field == Field::Both && output != OutputFormat::Plain {
        return Err(
            "--pipe --field both writes two tab-separated URLs per line; it needs --format plain"
                .to_string(),
        );
    }
    if cli.header && output != OutputFormat::Tsv {
        return Err("--header writes the column names of --format tsv; it needs --format tsv (JSON Lines names its keys on every row)".to_string());
    }
    if cli.header && mode == Mode::Pipe {
        return Err(
            "--header with --pipe would write one line more than the input has; leave one out"
                .to_string(),
        );
    }
    if cli.max_line_len < 1024 {
        return Err("--max-line-len must be at least 1024".to_string());
    }
    let profile = cli.profile;
    let text = match &cli.rules {
        Some(path) => Some(read_rules_file(path)?),
        None => None,
    };
    let mut edits = Vec::new();
    for r in &cli.rule {
        edits.extend(Edit::parse_list(r).map_err(|e| format!("--rule {r:?}: {e}"))?);
    }
    let build = |p: Profile| {
        rules::file::build_with_unused(p.rule_mask(), text.as_deref(), &edits).map_err(|e| {
            match &cli.rules {
                Some(path) => format!("--rules {}: {e}", path.display()),
                None => format!("--rule: {e}"),
            }
        })
    };
    let (rules, mut unused) = build(profile)?;
    let dedup = if cli.dedup_key || cli.key_profile.is_some() {
        if matches!(mode, Mode::Unique | Mode::Count) {
            return Err(
                "--dedup-key adds a column to each record; with --unique/--count choose the grouping with --profile"
                    .to_string(),
            );
        }
        let p = cli.key_profile.unwrap_or(Profile::Aggressive);
        let (key_rules, key_unused) = build(p)?;
        // A setting that tunes the dedup key is used.
        unused.retain(|u| key_unused.contains(u));
        Some((p, Arc::new(key_rules)))
    } else {
        None
    };
    if cli.explain && matches!(mode, Mode::Unique | Mode::Count) {
        return Err(
            "--explain adds a column to each record; with --unique/--count, --stats counts \
             the distinct URLs each rule merged"
                .to_string(),
        );
    }
    let (with, filter) = record_fields(cli, mode, output)?;
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
    if let (Some(path), false) = (&cli.rules, unused.is_empty()) {
        eprintln!(
            "canonurl: warning: --rules {}: {}",
            path.display(),
            unused_note(profile, &unused)
        );
    }
    let format = match (cli.log_format, &cli.w3c_fields) {
        (FormatChoice::Auto, Some(_)) => Some(LogFormat::W3c),
        (FormatChoice::Auto, None) => None,
        (FormatChoice::Given(f @ (LogFormat::W3c | LogFormat::Cloudfront)), _) => Some(f),
        (FormatChoice::Given(f), Some(_)) => {
            return Err(format!(
                "--w3c-fields gives the layout of W3C logs; it does not apply to -f {f}"
            ))
        }
        (FormatChoice::Given(f), None) => Some(f),
    };
    let w3c_fields = match cli.w3c_fields.as_deref().map(str::trim) {
        Some("") => return Err("--w3c-fields: no field names".to_owned()),
        Some(names) => Some(Arc::from(format!("#Fields: {names}").into_bytes())),
        None => None,
    };
    Ok(Options {
        format,
        w3c_fields,
        json_paths,
        csv_columns: cli.columns.clone().map(Arc::new),
        field,
        profile,
        rules: Some(Arc::new(rules)),
        dedup,
        explain: cli.explain,
        surt: cli.surt,
        rule_merges: cli.stats || cli.stats_json.is_some(),
        base,
        scheme: cli.scheme,
        output,
        mode,
        key: cli.key,
        threads,
        max_line: cli.max_line_len,
        rejects: cli.rejects.is_some(),
        header: cli.header,
        max_diagnostics: if cli.quiet {
            0
        } else {
            Options::default().max_diagnostics
        },
        memory_limit: cli.memory,
        temp_dir: cli.temp_dir.clone(),
        top: cli.top,
        min_count: cli.min_count,
        with,
        filter,
        ..Options::default()
    })
}

/// `--with`, `--status` and `--method`.
fn record_fields(
    cli: &Cli,
    mode: Mode,
    output: OutputFormat,
) -> Result<
    (
        Vec<canonurl::log::RecordColumn>,
        canonurl::log::RecordFilter,
    ),
    String,
> {
    let mut with = Vec::new();
    for list in &cli.with {
        for c in
            canonurl::log::RecordColumn::parse_list(list).map_err(|e| format!("--with: {e}"))?
        {
            if !with.contains(&c) {
                with.push(c);
            }
        }
    }
    if !with.is_empty() {
        if matches!(mode, Mode::Unique | Mode::Count) {
            return Err(
                "--with adds columns to each record; with --unique/--count a row is a distinct \
                 URL, not a record"
                    .to_string(),
            );
        }
        if output == OutputFormat::Plain {
            return Err("--with adds columns; it needs --format tsv or --format jsonl".to_string());
        }
    }
    let mut filter = canonurl::log::RecordFilter::default();
    for list in &cli.status {
        filter
            .add_statuses(list)
            .map_err(|e| format!("--status: {e}"))?;
    }
    for list in &cli.method {
        filter
            .add_methods(list)
            .map_err(|e| format!("--method: {e}"))?;
    }
    Ok((with, filter))
}

/// `--rules FILE`'s text. Not UTF-8 is an error naming the line and
/// showing the bytes.
fn read_rules_file(path: &std::path::Path) -> Result<String, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("--rules {}: cannot read: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let bad = e.utf8_error().error_len().unwrap_or(bytes.len() - at);
        format!(
            "--rules {}: line {line}: not UTF-8 (bytes {:?}); a rules file is TOML, which is UTF-8",
            path.display(),
            bstr::BStr::new(&bytes[at..at + bad])
        )
    })
}

/// The warning on the settings of a rules file that do nothing in this run:
/// which, on which line, why, and how to switch their rules on.
fn unused_note(profile: Profile, unused: &[rules::file::Unused]) -> String {
    let mut off: Vec<Rule> = unused.iter().map(|u| u.rule).collect();
    off.sort();
    off.dedup();
    let settings: Vec<String> = unused
        .iter()
        .map(|u| format!("line {} '{}' (rule {})", u.line, u.key.name(), u.rule))
        .collect();
    let mask = profile.rule_mask();
    let why = if mask.is_empty() {
        format!(
            " (--profile {} runs no rules, and neither the file nor --rule switches these on)",
            profile.name()
        )
    } else {
        format!(" after --profile {}, the file and --rule", profile.name())
    };
    let on: Vec<String> = off.iter().map(|r| format!("\"+{r}\"")).collect();
    let flags: Vec<String> = off.iter().map(|r| format!("+{r}")).collect();
    // A profile that runs them all, when this one does not.
    let profile_hint = Profile::ALL
        .into_iter()
        .find(|p| off.iter().all(|&r| p.rule_mask().has(r)))
        .filter(|_| off.iter().any(|&r| !mask.has(r)))
        .map_or(String::new(), |p| {
            format!(", or use --profile {}", p.name())
        });
    let (n, verb) = match unused.len() {
        1 => ("1 setting".to_string(), "has"),
        n => (format!("{n} settings"), "have"),
    };
    format!(
        "{n} for rules that are off{why} {verb} no effect: {}. Switch the rules on with \
         rules = [{}] in the file or --rule {}{profile_hint}",
        settings.join(", "),
        on.join(", "),
        flags.join(","),
    )
}

/// `--base`: any absolute URL, as the URL Standard takes a base
/// (`file:///srv/`, `sc:/a`, and `about:blank`, whose opaque path serves
/// fragment-only references; a log's request path against it is rejected
/// per record, see `log::base_prefix`).
fn base(arg: &OsString) -> Result<Base, String> {
    let bytes = arg.as_encoded_bytes();
    let shown = arg.to_string_lossy();
    Base::parse(bytes).map_err(|r| {
        // `example.com`, `example.com/shop`: a host without a scheme.
        let guess = [b"https://".as_slice(), bytes].concat();
        let looks_like_host =
            !bytes.starts_with(b"/") && !bytes.contains(&b':') && Base::parse(&guess).is_ok();
        if looks_like_host {
            format!(
                "invalid --base {shown:?}: a base needs a scheme; did you mean --base https://{shown}?"
            )
        } else {
            format!(
                "invalid --base {shown:?}: {r}; a base is an absolute URL (`scheme:...`, as in \
                 https://example.com)"
            )
        }
    })
}

/// `--list-rules`: every rule, its tier and what it does; then which
/// profile runs which tiers.
fn rules_table() -> String {
    let mut t = format!("{:<18} {:<11} {:<21} EFFECT\n", "RULE", "TIER", "SETTING");
    for r in Rule::ALL {
        let d = r.definition();
        t.push_str(&format!(
            "{:<18} {:<11} {:<21} {}\n",
            d.name,
            d.tier.name(),
            d.setting.unwrap_or("-"),
            d.effect
        ));
    }
    t.push_str(
        "\nEXAMPLES (each rule alone, on top of rfc3986; a rules file where one is needed)\n",
    );
    for r in Rule::ALL {
        let d = r.definition();
        t.push_str(&format!(
            "  {:<18} {} -> {}\n",
            d.name, d.example.0, d.example.1
        ));
        if !d.config.is_empty() {
            t.push_str(&format!("  {:<18} rules file: {}\n", "", d.config));
        }
    }
    t.push_str(
        "\nProfiles: whatwg and rfc3986 run no rule; safe runs the safe tier; aggressive runs\n\
         the safe and aggressive tiers. Opt-in rules run only when switched on\n\
         (--rule +name, or a rules file). A setting is chosen with --rule name=value.\n",
    );
    t
}

/// `--columns`: role=NAME pairs and a preset.
fn parse_columns(spec: &str) -> Result<CsvColumns, String> {
    spec.parse()
}

/// JSON paths from `--json-preset` and the `--json-*` overrides.
fn json_paths(cli: &Cli) -> Option<JsonPaths> {
    let overrides = [
        &cli.json_target,
        &cli.json_request,
        &cli.json_query,
        &cli.json_host,
        &cli.json_scheme,
        &cli.json_referer,
        &cli.json_status,
        &cli.json_bytes,
        &cli.json_method,
        &cli.json_time,
        &cli.json_client,
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
    set(&mut paths.query, &cli.json_query);
    set(&mut paths.host, &cli.json_host);
    set(&mut paths.scheme, &cli.json_scheme);
    set(&mut paths.referer, &cli.json_referer);
    set(&mut paths.status, &cli.json_status);
    set(&mut paths.bytes, &cli.json_bytes);
    set(&mut paths.method, &cli.json_method);
    set(&mut paths.time, &cli.json_time);
    set(&mut paths.client, &cli.json_client);
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

/// Directory arguments replaced by the files below them; what each gave.
/// A directory that cannot be listed is named on stderr now.
fn expand_dirs(
    sources: Vec<Source>,
    globs: &cli::inputs::Globs,
) -> (Vec<Source>, Vec<cli::inputs::Walked>) {
    let mut out = Vec::with_capacity(sources.len());
    let mut walked = Vec::new();
    for s in sources {
        match &s {
            Source::Path(p) if p.is_dir() => {
                let w = cli::inputs::walk(p, globs);
                for (path, e) in &w.errors {
                    eprintln!("canonurl: {path}: {e}");
                }
                out.extend(w.sources());
                walked.push(w);
            }
            _ => out.push(s),
        }
    }
    (out, walked)
}

/// After the run: what the directories skipped goes into the summary, each
/// directory that could not be listed is an input with an error (exit 2),
/// and a directory of which no file was read is said so.
fn dirs_read(walked: &[cli::inputs::Walked], summary: &mut Summary) {
    // The files the reader skipped (binary, no format detected).
    let not_read: std::collections::HashMap<&str, &'static str> = summary
        .inputs_skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason))
        .collect();
    let mut notes = Vec::new();
    for w in walked {
        let reasons: Vec<&'static str> = w
            .files
            .iter()
            .filter_map(|f| not_read.get(f.display().to_string().as_str()).copied())
            .collect();
        notes.extend(cli::inputs::nothing_read(w, &reasons));
    }
    for w in walked {
        summary.inputs_skipped.extend(w.skipped.iter().cloned());
        for (path, e) in &w.errors {
            summary.files.push(pipeline::stats::FileReport {
                name: path.clone(),
                format: None,
                detected: false,
                json_preset: None,
                compression: "none",
                error: Some(e.clone()),
                stats: Default::default(),
            });
        }
    }
    summary
        .inputs_skipped
        .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    for note in notes {
        eprintln!("{note}");
    }
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

/// `--follow`'s one input, checked now so that a wrong one is a usage error.
fn follow_source(sources: Vec<Source>) -> Result<Source, String> {
    let path = match sources.as_slice() {
        [Source::Path(path)] => path.clone(),
        [Source::Stdin] => {
            return Err(
                "--follow needs a FILE: stdin is read as it arrives without it \
                 (`tail -F access.log | canonurl` works too)"
                    .to_string(),
            )
        }
        _ => {
            return Err(format!(
                "--follow follows exactly one FILE, not {} inputs",
                sources.len()
            ))
        }
    };
    // Opened once to check it (exists, regular, not compressed); the run
    // opens it again.
    canonurl::input::follow::FollowReader::new(&path, Arc::default())
        .map_err(|e| format!("--follow {}: {e}", path.display()))?;
    Ok(Source::Follow(path))
}

/// `--follow` runs until SIGINT or SIGTERM. The first sets the flag that
/// ends the followed input, so the run drains and reports as at the end of
/// a file; a second one exits at once (status 128 + signal, as the shell
/// reports a death by signal), for a drain that cannot finish (an output
/// nobody reads). signal-hook rather than a hand-written handler: its
/// `flag` handlers do only async-signal-safe atomic stores, without unsafe
/// code here, and it registers exactly the signals named (ctrlc's
/// `termination` feature would take SIGHUP too). Without `--follow` no
/// handler is installed: the signals kill the process, as they always did.
fn stop_on_signals() -> Result<Arc<std::sync::atomic::AtomicBool>, String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // The exit is registered first, so that it sees the flag as the
        // previous signal left it.
        signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&stop)))
            .map_err(|e| format!("--follow: cannot handle signal {signal}: {e}"))?;
    }
    Ok(stop)
}
