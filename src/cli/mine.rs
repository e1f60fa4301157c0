//! `canonurl mine`: learn a site's DUST rules from its access logs (or from
//! `canonurl summarize` files), with evidence (docs/mine.md).
//!
//! Like `summarize`, it takes the main command's input options as they are,
//! so it is read before clap: `mine` and its own flags are taken out, and
//! the rest is parsed as the main command's arguments.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use canonurl::mine::{MineError, MineOptions, MineOutput, MineReport};

use super::args::Cli;
use super::config::Config;
use super::summarize::{
    check_flags, exit_code, format_seconds, open_summaries, parse_main_args, parse_window,
};
use crate::{EXIT_FATAL, EXIT_REJECTS};

/// `mine`'s default `--memory`: 256 MiB.
const MINE_MEMORY: u64 = 256 << 20;

const HELP: &str = "\
Learn a site's DUST rules (different URLs, same page) from its access logs.

Usage: canonurl mine [OPTIONS] [FILE|DIR|-]...
       canonurl mine --summaries [OPTIONS] [SUMMARY|-]...

Reads logs as the main command does (or, with --summaries, files that `canonurl
summarize` wrote) and writes a rules file that --rules reads as it is: one [[host]]
section per site, each rule after a comment with its id, family and evidence. The
evidence is the server's own: URLs whose 200 responses have the same size agree, a
200 against a 404 contradicts. Rules are learned on the earlier part of the log and
confirmed on the later part; a rule learned but not confirmed is written commented
out as unverified. Mined rules are meant for the dedup key:

  canonurl mine --evidence ev.jsonl -o mined.toml access.log
  canonurl --dedup-key --rules mined.toml access.log

Families: irrelevant-param, default-param, index-file, case, slug, substitution,
redirect, literal-alias, host-alias.

Options of its own:
  -o, --output FILE        the rules file (default stdout)
      --evidence FILE      one JSON object per candidate (accepted, unverified,
                           rejected): support, agreement, contradictions, sizes,
                           held-out result, example pairs
      --summaries          the inputs are summary files, not logs
      --window DURATION    the summary's window (logs only): 1h (default), 30m, ...
                           Sizes are compared within a window: the longest of 1h,
                           6h and 1d that still gives the log 8 windows (a log of
                           two weeks by day, a log of one day by hour)
      --learn PERCENT      the first part of the log's time span learned on
                           (default 67: two thirds); the rest confirms. 100: no
                           confirmation, rules written active (and summaries
                           without windows can be mined)
      --min-support N      agreeing pairs a rule needs (default 5)
      --min-sizes N        distinct agreeing sizes a rule needs (default 3): one
                           shared size is what templates and soft 404s give
      --min-agreement X    Wilson 95 % lower bound of agree / (agree + contradict)
                           a rule needs (default 0.8: 16 agreeing pairs and none
                           contradicting reach it)
      --min-confirm N      agreeing pairs on the later part for a rule to be
                           written active (default 3)
      --popular-size N     a size more than N URLs of a host share is a template's
                           or soft 404's: no evidence (default 16)
      --bucket-cap N       URLs sharing one run of digits (an id) past N form no
                           substitution pairs: a common number, not an id (default 64)
      --max-candidates N   candidates kept per host, most proposed first (default 256)
      --literal-aliases    also learn one-off aliases (/about-us = /company/about): a
                           pair alone at its size, same query, same digits, exactly the
                           same sizes; off by default, since two different static pages
                           of one size look the same to an access log
      --min-hits N         200 responses on each side a literal alias needs in the
                           learning part (default 20)

Every input option of the main command applies (-f, --profile, --rules, --base, -j,
--memory (default 256 MiB here), --stats, ...). The URLs are canonicalized with --profile, default aggressive
here (use your dedup key's profile), so built-in rules are not learned again. Any
rule refused by the acceptance test is in the evidence file with the reason.
--memory bounds the miner's own tables too: past it, a host's URLs and those compared
for host aliases are sampled (--stats says how many were left out), which lowers the
support of what is kept.

Exit status: 0 when the rules file is written; 1 when the input gave no URL; 2 on a
usage error, an input that could not be read, or output that could not be written.
";

/// What `mine` takes out of the arguments before the main parser.
struct Own {
    window: Option<i64>,
    summaries: bool,
    evidence: Option<std::path::PathBuf>,
    opts: MineOptions,
    help: bool,
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} {value}: not a number"))
}

fn take_own(args: &mut Vec<OsString>) -> Result<Own, String> {
    let mut own = Own {
        window: Some(3_600),
        summaries: false,
        evidence: None,
        opts: MineOptions::default(),
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_string_lossy().into_owned();
        if arg == "--" {
            break;
        }
        match arg.as_str() {
            "--summaries" => {
                own.summaries = true;
                args.remove(i);
                continue;
            }
            "--literal-aliases" => {
                own.opts.thresholds.literal_aliases = true;
                args.remove(i);
                continue;
            }
            "-h" | "--help" => {
                own.help = true;
                args.remove(i);
                continue;
            }
            _ => {}
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        const OWN: [&str; 11] = [
            "--window",
            "--evidence",
            "--learn",
            "--min-support",
            "--min-sizes",
            "--min-agreement",
            "--min-confirm",
            "--popular-size",
            "--bucket-cap",
            "--max-candidates",
            "--min-hits",
        ];
        if !OWN.contains(&flag.as_str()) {
            i += 1;
            continue;
        }
        args.remove(i);
        let value = match inline {
            Some(v) => v,
            None if i < args.len() => args.remove(i).to_string_lossy().into_owned(),
            None => return Err(format!("{flag} needs a value (canonurl mine --help)")),
        };
        let th = &mut own.opts.thresholds;
        match flag.as_str() {
            "--window" => own.window = parse_window(&value)?,
            "--evidence" => own.evidence = Some(value.into()),
            "--learn" => {
                let p: f64 = number(&flag, value.trim_end_matches('%'))?;
                if !(p > 0.0 && p <= 100.0) {
                    return Err(format!(
                        "--learn {value}: a percentage above 0, at most 100"
                    ));
                }
                own.opts.learn = p / 100.0;
            }
            "--min-support" => th.min_support = number(&flag, &value)?,
            "--min-sizes" => th.min_sizes = number(&flag, &value)?,
            "--min-agreement" => {
                let x: f64 = number(&flag, &value)?;
                if !(0.0..=1.0).contains(&x) {
                    return Err(format!("--min-agreement {value}: a fraction from 0 to 1"));
                }
                th.min_agreement = x;
            }
            "--min-confirm" => th.min_confirm = number(&flag, &value)?,
            "--popular-size" => th.popular_size = number(&flag, &value)?,
            "--bucket-cap" => th.bucket_cap = number(&flag, &value)?,
            "--min-hits" => th.min_hits = number(&flag, &value)?,
            _ => th.max_candidates = number(&flag, &value)?,
        }
    }
    Ok(own)
}

/// Runs `canonurl mine ARGS` (`args` is the whole command line).
pub(crate) fn main(config: &Config, mut args: Vec<OsString>) -> ExitCode {
    let program = args.remove(0);
    args.remove(0); // "mine"
    let own = match take_own(&mut args) {
        Ok(own) => own,
        Err(message) => {
            eprintln!("canonurl: mine: {message}");
            return ExitCode::from(EXIT_FATAL);
        }
    };
    if own.help {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    // The dedup key's profile, unless told otherwise.
    let profile_given = args.iter().any(|a| {
        let a = a.to_string_lossy();
        a == "--profile" || a.starts_with("--profile=")
    });
    if !profile_given {
        args.insert(0, "aggressive".into());
        args.insert(0, "--profile".into());
    }
    args.insert(0, program);
    match parse_main_args(config, args) {
        Ok(cli) => exit_code(run(&cli, &own)),
        Err(code) => code,
    }
}

fn create(path: &std::path::Path) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| format!("{}: cannot create: {e}", path.display()))
}

fn run(cli: &Cli, own: &Own) -> Result<u8, String> {
    check_flags(cli, "mine")?;
    if cli.files.is_empty() && cli.files_from.is_none() {
        return Err(
            "mine: no input: give log files (or - for stdin), or summary files with --summaries (canonurl mine --help)"
                .into(),
        );
    }
    // The budget, not the main command's (a quarter of RAM): the
    // miner runs beside other jobs, on logs of any size.
    let memory = cli.memory.unwrap_or(MINE_MEMORY);
    let memory = usize::try_from(memory).unwrap_or(usize::MAX);
    let mut rules_buf: Vec<u8> = Vec::new();
    let mut evidence_buf: Vec<u8> = Vec::new();
    let out = MineOutput {
        rules: &mut rules_buf,
        evidence: own
            .evidence
            .as_ref()
            .map(|_| &mut evidence_buf as &mut dyn Write),
    };
    let mut code = 0;
    let report: MineReport = if own.summaries {
        let inputs = open_summaries(&cli.files).map_err(|e| format!("mine: {e}"))?;
        canonurl::mine::mine_summaries(inputs, &own.opts, memory, out).map_err(describe)?
    } else {
        let options = super::options::options(cli)?;
        let globs = super::inputs::Globs::new(&cli.globs)?;
        let (sources, walked) = super::inputs::expand_dirs(super::inputs::sources(cli)?, &globs);
        super::inputs::hint_terminal_stdin(cli, &sources, "canonurl mine");
        let mut diag = io::stderr();
        let (mut summarized, report) = canonurl::mine::mine_logs(
            &sources, &options, own.window, memory, &own.opts, out, &mut diag,
        )
        .map_err(describe)?;
        super::inputs::dirs_read(&walked, &mut summarized.run);
        crate::report(cli, &summarized.run)?;
        if summarized.run.had_errors() {
            code = EXIT_FATAL;
        } else if summarized.records == 0 {
            eprintln!(
                "canonurl: mine: no line gave a URL ({} lines read); nothing to learn from",
                summarized.run.stats.lines
            );
            code = EXIT_REJECTS;
        }
        report
    };
    // Written only now, so that a failed run leaves no half rules file.
    let mut rules_out: Box<dyn Write> = match &cli.output {
        Some(path) => Box::new(create(path)?),
        None => Box::new(BufWriter::new(io::stdout())),
    };
    let written = rules_out
        .write_all(&rules_buf)
        .and_then(|()| rules_out.flush());
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            return Err(format!("mine: cannot write the rules: {e}"))
        }
        _ => {}
    }
    if let Some(path) = &own.evidence {
        let mut w = create(path)?;
        w.write_all(&evidence_buf)
            .and_then(|()| w.flush())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    if cli.stats {
        eprintln!(
            "canonurl mine: {} hosts, {} URLs, {} windows of {} learned, {} confirmed; rules: {} accepted, {} unverified, {} rejected; {} digit groups over --bucket-cap, {} candidates dropped; left out for --memory: {} URLs of their host's mining, {} of host aliases",
            report.hosts,
            report.urls,
            report.learn_windows,
            format_seconds(report.window_seconds),
            report.confirm_windows,
            report.accepted,
            report.unverified,
            report.rejected,
            report.skipped_buckets,
            report.dropped_candidates,
            report.sampled_urls,
            report.sampled_prints
        );
        for (family, a, u, r) in &report.families {
            eprintln!("  {family:<18} accepted {a}, unverified {u}, rejected {r}");
        }
    }
    Ok(code)
}

fn describe(e: MineError) -> String {
    format!("mine: {e}")
}
