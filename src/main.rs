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
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use canonurl::input::Source;
use canonurl::pipeline::stats::Summary;
use canonurl::pipeline::{self, Mode, Sinks};
use clap::Parser;
use std::sync::Arc;

mod cli;

use cli::args::{print_clap_error, Cli, Command, CompletionShell};
use cli::inputs::{dirs_read, expand_dirs, follow_source, sources};
use cli::options::{options, rules_table};
use cli::term::{LineWriter, Progress, Shows, Ttys};

/// Exit status when `--strict` or `--max-reject-rate` fails the run.
const EXIT_REJECTS: u8 = 1;
/// Exit status for usage errors and inputs or outputs that failed.
const EXIT_FATAL: u8 = 2;

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
        Ok(cli) => cli.normalized(),
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

    cli::inputs::hint_terminal_stdin(&cli, &sources, "canonurl");
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
