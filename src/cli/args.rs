//! The command line: every flag of the main command (`Cli`, parsed by
//! clap), its help texts, and how a usage error is printed.

use canonurl::canon::surt::SurtForm;
use canonurl::log::{CsvColumns, Field, JsonPreset, LogFormat, Scheme};
use canonurl::pipeline::{self, OutputFormat};
use canonurl::Profile;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgGroup, Parser, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

use super::options::parse_columns;
use super::term::When;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

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
    pub(crate) files_from: Option<PathBuf>,

    /// Longest line read, in bytes.
    ///
    /// Longer lines are rejected (line-too-long) and counted.
    #[arg(long, value_name = "BYTES", default_value_t = pipeline::DEFAULT_MAX_LINE, help_heading = "Input", hide_short_help = true)]
    pub(crate) max_line_len: usize,

    /// Read FILE as it grows, as `tail -F` does, until Ctrl-C.
    ///
    /// Through rotation (rename and create, or truncation), until SIGINT or
    /// SIGTERM, which end the run as the end of the input would (a second
    /// one exits at once). Exactly one uncompressed FILE.
    #[arg(long, help_heading = "Input")]
    pub(crate) follow: bool,

    /// Read files with read calls, not memory maps.
    ///
    /// A regular uncompressed file is read by mapping it into memory, which
    /// spares the copy out of the page cache. A file truncated while it is
    /// read (logrotate's copytruncate of the log being read) is reported
    /// either way on Linux (elsewhere, mapped, it ends the run with SIGBUS);
    /// with maps, `summarize` and `mine` may have counted the
    /// lines of the range being read as far as the file's old end (read as
    /// zero bytes), where read calls stop at the new end.
    #[arg(long, help_heading = "Input", hide_short_help = true)]
    pub(crate) no_mmap: bool,

    /// Read only the files of directories that match GLOB.
    ///
    /// `!GLOB`: not. `*.gz`, `access.log*`, `!*.tmp`, as ripgrep's -g; may be repeated,
    /// and the last glob that matches a file decides. Matched against the
    /// file name, or with a `/` against the path below the directory.
    /// Files named as arguments are always read.
    #[arg(short = 'g', long = "glob", value_name = "GLOB", action = clap::ArgAction::Append, allow_hyphen_values = true, help_heading = "Input")]
    pub(crate) globs: Vec<String>,

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
    pub(crate) log_format: FormatChoice,

    /// Which URL of each record.
    #[arg(long, value_name = "FIELD", value_enum, default_value_t = Field::Request, help_heading = "Format")]
    pub(crate) field: Field,

    /// Scheme and host for targets without a host.
    ///
    /// An absolute URL (`https://example.com`, `file:///srv/`): origin-form
    /// request targets of records without a host get its scheme and
    /// authority; with `-f plain`, it is the base URL of relative
    /// references. A base with an opaque path (`about:blank`) resolves only
    /// fragments. Without it, such targets are written as path and query
    /// only.
    #[arg(long, value_name = "URL", help_heading = "Format")]
    pub(crate) base: Option<OsString>,

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
    pub(crate) scheme: Option<Scheme>,

    /// JSON logs: field paths from a preset (default: detected per input).
    #[arg(long, value_name = "PRESET", value_parser = names_parser::<JsonPreset>(), ignore_case = true, help_heading = "Format", hide_short_help = true)]
    pub(crate) json_preset: Option<JsonPreset>,

    /// JSON logs: dotted path of the request target (`request.uri`).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_target: Option<String>,

    /// JSON logs: dotted path of a whole request line (`GET /x HTTP/1.1`).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_request: Option<String>,

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
    pub(crate) json_query: Option<String>,

    /// JSON logs: dotted path of the host.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_host: Option<String>,

    /// JSON logs: dotted path of the scheme.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_scheme: Option<String>,

    /// JSON logs: dotted path of the referer.
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_referer: Option<String>,

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
    pub(crate) json_status: Option<String>,

    /// JSON logs: dotted path of the response size in bytes (for --with).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_bytes: Option<String>,

    /// JSON logs: dotted path of the request method (for --with, --method).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_method: Option<String>,

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
    pub(crate) json_time: Option<String>,

    /// JSON logs: dotted path of the client address (for --with).
    #[arg(
        long,
        value_name = "PATH",
        help_heading = "Format",
        hide_short_help = true
    )]
    pub(crate) json_client: Option<String>,

    /// CSV/TSV logs: the columns, by their header-row names.
    ///
    /// A comma list of `role=NAME`, roles `url` (required), `host`, `method`,
    /// `referer`, `status`, `bytes`, `time`, `client`
    /// (`url=path,host=server`), or a preset
    /// (`gcs`, `nasa`) with such overrides (`gcs,referer=-`). Default: the
    /// preset the header row shows.
    #[arg(long, value_name = "SPEC", value_parser = parse_columns, help_heading = "Format", hide_short_help = true)]
    pub(crate) columns: Option<CsvColumns>,

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
    pub(crate) w3c_fields: Option<String>,

    // ---- Profile and rules ----
    /// Canonicalization profile.
    #[arg(long, value_name = "PROFILE", value_enum, default_value_t = Profile::Rfc3986, help_heading = "Profile and rules")]
    pub(crate) profile: Profile,

    /// Dedup rules on or off: `+name,-name`, `rule=value`.
    ///
    /// On top of the profile's rules: `+name,-name`,
    /// `trailing-slash=add|remove|keep`, `sort-query=key|key-value|off`. May
    /// be repeated. `--list-rules` lists the rules.
    #[arg(long, value_name = "EDITS", action = clap::ArgAction::Append, allow_hyphen_values = true, help_heading = "Profile and rules")]
    pub(crate) rule: Vec<String>,

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
    pub(crate) rules: Option<PathBuf>,

    /// List the dedup rules with their tier and effect, and exit.
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    pub(crate) list_rules: bool,

    /// Add a dedup key to each URL (see --key-profile).
    ///
    /// The URL canonicalized with `--key-profile` (and `--rule`, `--rules`),
    /// then its fingerprint, as two more columns.
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    pub(crate) dedup_key: bool,

    /// Profile of the dedup key (implies --dedup-key) [default: aggressive].
    #[arg(
        long,
        value_name = "PROFILE",
        value_enum,
        help_heading = "Profile and rules",
        hide_short_help = true
    )]
    pub(crate) key_profile: Option<Profile>,

    /// Add the dedup rules that changed each URL (`-` for none).
    ///
    /// A column of each record (and `--pipe` line): with --unique/--count it
    /// is a usage error (--stats counts the URLs each rule merged there).
    #[arg(long, help_heading = "Profile and rules", hide_short_help = true)]
    pub(crate) explain: bool,

    /// Write each URL in SURT form (Wayback/CDX key).
    ///
    /// `--surt` gives `com,example)/path?query`; `--surt=classic` gives
    /// `http://(com,example,)/path?query`. A URL without a host is written as
    /// it is (see --base).
    #[arg(long, value_name = "FORM", value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "cdx", help_heading = "Profile and rules", hide_short_help = true)]
    pub(crate) surt: Option<SurtForm>,

    // ---- Output ----
    /// Output format.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = OutputFormat::Plain, help_heading = "Output")]
    pub(crate) format: OutputFormat,

    /// Exactly one output line per input line, in order.
    ///
    /// An empty line when the input line gave no URL: the contract of
    /// Spark's `pipe` and Hadoop streaming.
    #[arg(long, help_heading = "Output")]
    pub(crate) pipe: bool,

    /// Each canonical URL once, in first-seen order.
    #[arg(long, help_heading = "Output")]
    pub(crate) unique: bool,

    /// Each canonical URL with its count, most frequent first.
    #[arg(long, help_heading = "Output")]
    pub(crate) count: bool,

    /// With --count: only the N most frequent URLs.
    ///
    /// Ties in first-seen order.
    #[arg(long, value_name = "N", help_heading = "Output",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) top: Option<u64>,

    /// With --count: only URLs counted at least N times.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Output",
        hide_short_help = true
    )]
    pub(crate) min_count: Option<u64>,

    /// Add each URL's 64-bit fingerprint after a tab.
    ///
    /// XXH64 with seed 42, as a signed decimal: equal to Spark SQL's
    /// `xxhash64(url)`.
    #[arg(long, help_heading = "Output")]
    pub(crate) key: bool,

    /// Add the record's other fields as columns (status, ...).
    ///
    /// Fields: status, bytes, method, time, client, host, input. A
    /// comma-separated list, for --format tsv or jsonl record rows (not
    /// --unique/--count): the columns come after the usual ones, in the
    /// order given. `time` is Unix seconds (UTC), `input` the input's name.
    /// A field the record lacks is an empty cell in TSV and null in JSON
    /// Lines. Which formats log which field: see docs/output.md.
    #[arg(long, value_name = "LIST", help_heading = "Output")]
    pub(crate) with: Vec<String>,

    /// Keep only records whose status is in LIST (`2xx,301`).
    ///
    /// Classes 1xx to 5xx and codes. Other records are skipped (`status-filtered` in --stats); records
    /// without a status are skipped as `no-status`, with a warning.
    #[arg(long, value_name = "LIST", help_heading = "Filters")]
    pub(crate) status: Vec<String>,

    /// Keep only records whose method is in LIST (`GET,HEAD`).
    ///
    /// Any case. Other records are skipped (`method-filtered` in --stats); records
    /// without a method are skipped as `no-method`.
    #[arg(long, value_name = "LIST", help_heading = "Filters")]
    pub(crate) method: Vec<String>,

    /// Write a header row of column names first (`--format tsv`).
    ///
    /// The names are those of the JSON Lines keys.
    #[arg(long, help_heading = "Output", hide_short_help = true)]
    pub(crate) header: bool,

    /// Write to FILE instead of stdout (`-`: stdout).
    #[arg(short, long, value_name = "FILE", help_heading = "Output")]
    pub(crate) output: Option<PathBuf>,

    // ---- Threads and memory ----
    /// Worker threads [default: all cores].
    #[arg(
        short = 'j',
        long,
        value_name = "N",
        help_heading = "Threads and memory",
        hide_short_help = true
    )]
    pub(crate) threads: Option<usize>,

    /// Memory for the table of --unique/--count [default: a quarter of RAM].
    ///
    /// `512M`, `2G`, `1.5GiB`, bytes; K/M/G/T and KiB.. are 1024-based,
    /// KB/MB.. 1000-based. Past it the table is written to --temp-dir as
    /// sorted runs, merged at the end: the output is the same.
    #[arg(long, value_name = "SIZE", help_heading = "Threads and memory",
          value_parser = pipeline::parse_size, hide_short_help = true)]
    pub(crate) memory: Option<u64>,

    /// Directory for the sorted runs of --memory [default: $TMPDIR or /tmp].
    #[arg(
        long,
        value_name = "DIR",
        help_heading = "Threads and memory",
        hide_short_help = true
    )]
    pub(crate) temp_dir: Option<PathBuf>,

    // ---- Diagnostics ----
    /// Print totals to stderr at the end.
    ///
    /// Lines read, emitted, skipped and rejected by reason, bytes, MiB/s,
    /// detected formats, rules.
    #[arg(long, help_heading = "Diagnostics")]
    pub(crate) stats: bool,

    /// Write the totals as JSON to FILE.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Diagnostics",
        hide_short_help = true
    )]
    pub(crate) stats_json: Option<PathBuf>,

    /// Write every rejected line to FILE.
    ///
    /// One line each: `INPUT:LINE<TAB>REASON<TAB>BYTE<TAB>LINE`.
    #[arg(long, value_name = "FILE", help_heading = "Diagnostics")]
    pub(crate) rejects: Option<PathBuf>,

    /// No per-line diagnostics on stderr.
    ///
    /// Errors that end an input or the run, and `--stats`, are still
    /// printed.
    #[arg(short, long, help_heading = "Diagnostics")]
    pub(crate) quiet: bool,

    /// Exit with status 1 when any line was rejected.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    pub(crate) strict: bool,

    /// Exit with status 1 above this share of rejected lines (`0.01`, `1%`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate, help_heading = "Diagnostics", hide_short_help = true)]
    pub(crate) max_reject_rate: Option<f64>,

    /// Exit with status 1 when no URL was written.
    ///
    /// Without it such a run exits 0, and says on stderr what became of
    /// the lines when there were any.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    pub(crate) fail_if_empty: bool,

    /// Progress on stderr.
    ///
    /// `auto`: a bar when stderr is a terminal that neither the output nor
    /// typed input shares; `always`: a bar on a terminal, else a plain
    /// progress line every second; `never`.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = When::Auto, help_heading = "Diagnostics", hide_short_help = true)]
    pub(crate) progress: When,

    /// Do not read the config file named by CANONURL_CONFIG_PATH.
    #[arg(long, help_heading = "Diagnostics", hide_short_help = true)]
    pub(crate) no_config: bool,

    /// Input files or directories; none, or `-`, reads stdin.
    ///
    /// Plain, gzip, zstd, xz or bzip2 (recognised by their first bytes). A
    /// directory is read recursively, its files in byte order of their
    /// paths, skipping hidden files and directories, binary files, files
    /// of no log format detected (with a warning) and symbolic links to
    /// directories (see --glob; --stats lists the skipped).
    #[arg(value_name = "FILE", hide_short_help = true)]
    pub(crate) files: Vec<PathBuf>,
}

impl Cli {
    /// The arguments as the run takes them: `-o -` is stdout, as for most
    /// commands with an output file (not a file named `-`).
    pub(crate) fn normalized(mut self) -> Cli {
        if self.output.as_deref().is_some_and(|p| p.as_os_str() == "-") {
            self.output = None;
        }
        self
    }
}

/// Other jobs than canonicalizing.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
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
pub(crate) enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

pub(crate) const LONG_ABOUT: &str = "\
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

pub(crate) const EXAMPLES: &str = "\
Examples:
  canonurl --count --stats access.log.gz  most frequent first, totals on stderr
  zcat logs/*.gz | canonurl -f combined --base https://example.com

`--help`: every flag in full, and those left out here (JSON paths, tuning).";

pub(crate) const LONG_EXAMPLES: &str = "\
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
pub(crate) enum FormatChoice {
    Auto,
    Given(LogFormat),
}

/// `-f`: `auto` or a format name, the list shown in `--help`.
pub(crate) fn log_format_parser() -> impl TypedValueParser<Value = FormatChoice> {
    let values = std::iter::once(PossibleValue::new("auto")).chain(names_only::<LogFormat>());
    PossibleValuesParser::new(values).map(|s| {
        <LogFormat as ValueEnum>::from_str(&s, true).map_or(FormatChoice::Auto, FormatChoice::Given)
    })
}

/// A library enum's values by name, for flags that list names only: the
/// enum's doc comments (which clap would show as each value's help) are
/// written for the API.
pub(crate) fn names_only<E: ValueEnum + 'static>() -> impl Iterator<Item = PossibleValue> {
    E::value_variants()
        .iter()
        .filter_map(E::to_possible_value)
        .map(|v| v.help(None::<&str>))
}

/// The parser of a [`names_only`] flag; case is ignored where the flag says
/// `ignore_case`.
pub(crate) fn names_parser<E: ValueEnum + Clone + Send + Sync + 'static>(
) -> impl TypedValueParser<Value = E> {
    PossibleValuesParser::new(names_only::<E>()).try_map(|s| E::from_str(&s, true))
}

pub(crate) fn parse_rate(s: &str) -> Result<f64, String> {
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
pub(crate) fn value_tip(e: &clap::Error) -> Option<String> {
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
