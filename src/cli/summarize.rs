//! `canonurl summarize`: the per-URL summary that `canonurl mine` learns
//! from (docs/mine.md), and `summarize --merge`.
//!
//! The subcommand takes the main command's input options as they are (the
//! format, JSON paths, profile, rules, threads, `--memory`, `-o`, `--stats`,
//! files and directories), so it is read before clap: `summarize` and its
//! own flags (`--window`, `--merge`) are taken out, and the rest is parsed
//! as the main command's arguments. Options that choose what the main
//! command writes per record are usage errors here: a summary has one form.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

use canonurl::pipeline::OutputFormat;
use clap::Parser;

use super::args::Cli;
use super::config::Config;
use crate::{EXIT_FATAL, EXIT_REJECTS};

const HELP: &str = "\
Summarize access logs per host, canonical URL and time window, for `canonurl mine`.

Usage: canonurl summarize [OPTIONS] [FILE|DIR|-]...
       canonurl summarize --merge [-o FILE] [SUMMARY|-]...

Reads logs as the main command does (every format, gzip/zstd/xz/bzip2, directories,
threads) and writes one tab-separated row per (host, canonical URL, window), sorted,
after a header line:

  host url window hits s200 s301 s302 s303 s307 s308 s304 s404 s5xx other none largest sizes clients

window is the window's start (Unix seconds, UTC; - without a time), s404 counts 404
and 410, none records that log no status; largest is the largest 200 response; sizes
are size:count pairs of 200 responses and clients hashes of client addresses, each a
sample of at most 16 and 8 values chosen by hash, so that summaries merge exactly.
Redirects a client followed within 5 s (a 301/302/307/308, then its next request for
another URL of the host), when there are any, come first, after their own header:

  host from to redirects

Options of its own:
      --window DURATION  the window: 1d (default), 12h, 30m, 3600s, or none
      --merge            the inputs are summaries: merge them into one, the summary
                         the logs behind them would have given together

Every input option of the main command applies (-f, --json-*, --columns, --profile,
--rule, --rules, --base, --scheme, -j, --memory, --temp-dir, -o, --stats,
--stats-json, -g, --files-from, ...): see canonurl --help. The URL is canonicalized
with --profile (default rfc3986; use the profile of your dedup key, usually
aggressive, so that mined rules build on it). Options that choose per-record output
(--format, --with, --key, --dedup-key, --explain, --surt, --pipe, --unique, --count,
--field, --header, --rejects, --follow) do not apply.

Exit status: 0 when the summary is written; 1 when no line gave a URL; 2 on a usage
error, an input that could not be read, or output that could not be written.
";

/// A window length as `--window` takes it: `1d`, `6h`, `1h`, `30m`, `90s`.
pub(crate) fn format_seconds(seconds: u64) -> String {
    match seconds {
        0 => "0s".into(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3_600 == 0 => format!("{}h", s / 3_600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Splits a window length: `1d`, `12h`, `30m`, `3600s`, `3600`, or `none`.
pub(crate) fn parse_window(text: &str) -> Result<Option<i64>, String> {
    if text == "none" {
        return Ok(None);
    }
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => 0,
    };
    match digits.parse::<i64>() {
        Ok(n) if n > 0 && scale > 0 => n
            .checked_mul(scale)
            .map(Some)
            .ok_or_else(|| format!("--window {text}: too long")),
        _ => Err(format!(
            "--window {text}: not a duration (1d, 12h, 30m, 3600s, or none)"
        )),
    }
}

/// What `summarize` takes out of the arguments before the main parser.
struct Own {
    window: Option<i64>,
    merge: bool,
    help: bool,
}

fn take_own(args: &mut Vec<OsString>) -> Result<Own, String> {
    let mut own = Own {
        window: Some(86_400),
        merge: false,
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_string_lossy().into_owned();
        if arg == "--" {
            break;
        }
        let value = match arg.as_str() {
            "--merge" => {
                own.merge = true;
                args.remove(i);
                continue;
            }
            "-h" | "--help" => {
                own.help = true;
                args.remove(i);
                continue;
            }
            "--window" => {
                args.remove(i);
                if i >= args.len() {
                    return Err("--window needs a value (1d, 12h, 30m, 3600s, or none)".into());
                }
                args.remove(i).to_string_lossy().into_owned()
            }
            a if a.starts_with("--window=") => {
                args.remove(i);
                a["--window=".len()..].to_owned()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        own.window = parse_window(&value)?;
    }
    Ok(own)
}

/// The main command's options that make no sense for a summary (nor for
/// `mine`, which writes one form too): `command` names the subcommand.
pub(crate) fn check_flags(cli: &Cli, command: &str) -> Result<(), String> {
    let given = [
        (cli.format != OutputFormat::Plain, "--format"),
        (!cli.with.is_empty(), "--with"),
        (cli.key, "--key"),
        (cli.dedup_key || cli.key_profile.is_some(), "--dedup-key"),
        (cli.explain, "--explain"),
        (cli.surt.is_some(), "--surt"),
        (cli.pipe, "--pipe"),
        (cli.unique, "--unique"),
        (cli.count, "--count"),
        (
            cli.top.is_some() || cli.min_count.is_some(),
            "--top/--min-count",
        ),
        (cli.field != canonurl::log::Field::Request, "--field"),
        (cli.header, "--header"),
        (cli.rejects.is_some(), "--rejects"),
        (cli.follow, "--follow"),
        (cli.list_rules, "--list-rules"),
        (cli.command.is_some(), "a second subcommand"),
    ];
    match given.iter().find(|(on, _)| *on) {
        Some((_, flag)) => Err(format!(
            "{command}: {flag} does not apply: its output has one form (canonurl {command} --help)"
        )),
        None => Ok(()),
    }
}

/// Runs `canonurl summarize ARGS` (`args` is the whole command line).
pub(crate) fn main(config: &Config, mut args: Vec<OsString>) -> ExitCode {
    let program = args.remove(0);
    args.remove(0); // "summarize"
    let own = match take_own(&mut args) {
        Ok(own) => own,
        Err(message) => {
            eprintln!("canonurl: {message}");
            return ExitCode::from(EXIT_FATAL);
        }
    };
    if own.help {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    args.insert(0, program);
    match parse_main_args(config, args) {
        Ok(cli) => exit_code(run(&cli, &own)),
        Err(code) => code,
    }
}

/// Parses what a subcommand left of its arguments as the main command's
/// (with the config file's defaults); on `--help` or a usage error, the exit
/// code after clap printed its message.
pub(crate) fn parse_main_args(config: &Config, args: Vec<OsString>) -> Result<Cli, ExitCode> {
    Cli::try_parse_from(super::config::merge(config, args))
        .map(Cli::normalized)
        .map_err(|e| {
            let usage = e.use_stderr();
            super::args::print_clap_error(e);
            ExitCode::from(if usage { EXIT_FATAL } else { 0 })
        })
}

/// A subcommand's result as its exit code, the error printed.
pub(crate) fn exit_code(result: Result<u8, String>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("canonurl: {message}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

/// Summary files opened, each with its name for error messages.
pub(crate) type NamedInputs = Vec<(String, Box<dyn BufRead>)>;

/// Opens summary files (`-`: stdin).
pub(crate) fn open_summaries(files: &[std::path::PathBuf]) -> Result<NamedInputs, String> {
    let mut inputs: NamedInputs = Vec::new();
    for path in files {
        if path.as_os_str() == "-" {
            inputs.push(("<stdin>".into(), Box::new(BufReader::new(io::stdin()))));
        } else {
            let file =
                File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
            inputs.push((path.display().to_string(), Box::new(BufReader::new(file))));
        }
    }
    Ok(inputs)
}

fn run(cli: &Cli, own: &Own) -> Result<u8, String> {
    check_flags(cli, "summarize")?;
    let memory = cli
        .memory
        .unwrap_or_else(canonurl::pipeline::default_memory_limit);
    let memory = usize::try_from(memory).unwrap_or(usize::MAX);
    let out_name = cli
        .output
        .as_ref()
        .map_or("<stdout>".to_owned(), |p| p.display().to_string());
    let mut out: Box<dyn Write> = match &cli.output {
        Some(path) => {
            Box::new(BufWriter::new(File::create(path).map_err(|e| {
                format!("{}: cannot create: {e}", path.display())
            })?))
        }
        None => Box::new(BufWriter::new(io::stdout())),
    };
    let write_error = |e: io::Error| -> Result<u8, String> {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Ok(0)
        } else {
            Err(format!("{out_name}: cannot write: {e}"))
        }
    };
    if own.merge {
        return merge(cli, memory, &mut out);
    }
    let options = super::options::options(cli)?;
    let globs = super::inputs::Globs::new(&cli.globs)?;
    let (sources, walked) = super::inputs::expand_dirs(super::inputs::sources(cli)?, &globs);
    super::inputs::hint_terminal_stdin(cli, &sources, "canonurl summarize");
    let mut diag = io::stderr();
    let result =
        canonurl::mine::summarize(&sources, &options, own.window, memory, &mut out, &mut diag);
    let mut report = match result {
        Ok(r) => r,
        Err(canonurl::mine::SummarizeError::Write(canonurl::mine::MergeError::Io(e))) => {
            return write_error(e)
        }
        Err(e) => return Err(e.to_string()),
    };
    if let Err(e) = out.flush() {
        return write_error(e);
    }
    super::inputs::dirs_read(&walked, &mut report.run);
    crate::report(cli, &report.run)?;
    if cli.stats {
        eprintln!(
            "  summary rows    {}   ({} records; {} rows spilled to temporary runs)",
            report.rows, report.records, report.spilled_rows
        );
    }
    if report.run.had_errors() {
        return Ok(EXIT_FATAL);
    }
    if report.records == 0 {
        eprintln!(
            "canonurl: summarize: no line gave a URL ({} lines read); nothing to summarize",
            report.run.stats.lines
        );
        return Ok(EXIT_REJECTS);
    }
    Ok(0)
}

fn merge(cli: &Cli, memory: usize, out: &mut dyn Write) -> Result<u8, String> {
    let files: Vec<_> = if cli.files.is_empty() {
        vec![std::path::PathBuf::from("-")]
    } else {
        cli.files.clone()
    };
    let inputs = open_summaries(&files)?;
    let merged = canonurl::mine::merge(inputs, memory, out).and_then(|rows| {
        out.flush().map_err(canonurl::mine::MergeError::Io)?;
        Ok(rows)
    });
    match merged {
        Ok(rows) => {
            if cli.stats {
                eprintln!("canonurl summarize --merge: {rows} summary rows");
            }
            Ok(0)
        }
        // The reader of our output went away (`| head`): not an error.
        Err(canonurl::mine::MergeError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(format!("summarize --merge: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(parse_window("1d"), Ok(Some(86_400)));
        assert_eq!(parse_window("12h"), Ok(Some(43_200)));
        assert_eq!(parse_window("30m"), Ok(Some(1_800)));
        assert_eq!(parse_window("3600"), Ok(Some(3_600)));
        assert_eq!(parse_window("none"), Ok(None));
        for bad in ["", "0d", "d", "1w", "-1d", "1.5h", "99999999999999999d"] {
            assert!(parse_window(bad).is_err(), "{bad}");
        }
    }
}
