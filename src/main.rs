//! `canonurl`: canonical URLs from logs, one per line.
//!
//! ```text
//! canonurl [-f plain] [--profile whatwg|rfc3986] [--base URL] [--pipe] [-o FILE] [FILE|-]...
//! ```
//!
//! Reads one URL or HTTP request target per line (bytes, not necessarily
//! UTF-8) and writes its canonical form to stdout. Only the line's `\n`, and a
//! `\r` directly before it, are removed; everything else is the URL parser's.
//!
//! - With `--pipe`, exactly one output line per input line, in order: the
//!   canonical URL, or an empty line when the input is rejected.
//! - Without `--pipe`, rejected lines write nothing to stdout.
//! - Each rejected line is reported on stderr as `canonurl: FILE:LINE: REASON`.
//!
//! Exit status: 0 when all input was read (rejected lines included, and when
//! stdout is closed early: broken pipe), 2 on a usage error, an invalid
//! `--base`, or a file that cannot be read or written.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use canonurl::{Base, Canonicalizer, Profile, Reject, DEFAULT_MAX_INPUT_LEN};
use clap::{Parser, ValueEnum};

/// Capacity of the input and output buffers.
const IO_BUF_LEN: usize = 256 * 1024;

/// Longest line read whole: the longest accepted URL plus `\r\n`. Longer lines
/// are cut here, the rest skipped, and the line is rejected as too long, so a
/// line without a newline never grows the line buffer without bound.
const LINE_LIMIT: u64 = DEFAULT_MAX_INPUT_LEN as u64 + 2;

/// Exit status for usage errors and unreadable or unwritable files.
const EXIT_FATAL: u8 = 2;

/// Name of standard input in diagnostics.
const STDIN_NAME: &str = "<stdin>";

/// Name of standard output in diagnostics.
const STDOUT_NAME: &str = "<stdout>";

/// Canonical URLs from web-server logs, one per input line.
#[derive(Debug, Parser)]
#[command(name = "canonurl", version, about, long_about = None)]
struct Cli {
    /// Input format (`plain`: one URL or request target per line).
    #[arg(
        short = 'f',
        long = "log-format",
        value_name = "FORMAT",
        value_enum,
        default_value_t = LogFormat::Plain
    )]
    log_format: LogFormat,

    /// Canonicalization profile.
    #[arg(long, value_name = "PROFILE", value_enum, default_value_t = ProfileArg::Rfc3986)]
    profile: ProfileArg,

    /// Base URL that relative references are resolved against. Without it, a
    /// target starting with `/` is written as path and query only.
    #[arg(long, value_name = "URL")]
    base: Option<OsString>,

    /// Write exactly one line per input line: the canonical URL, or an empty
    /// line when the input is rejected.
    #[arg(long)]
    pipe: bool,

    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Input files; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// How records are laid out in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// One URL or request target per line.
    Plain,
}

/// The `--profile` values (mirrors [`Profile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProfileArg {
    /// Exactly the WHATWG URL Standard's href.
    Whatwg,
    /// WHATWG plus RFC 3986 escape normalization (upper-case hex, unreserved decoded).
    Rfc3986,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Whatwg => Profile::Whatwg,
            ProfileArg::Rfc3986 => Profile::Rfc3986,
        }
    }
}

/// Why the command stopped before reading all its input.
#[derive(Debug)]
enum Error {
    /// The command line did not parse (or `--help`/`--version` was asked for).
    Cli(clap::Error),
    /// The command line parsed but makes no sense (an invalid `--base`).
    Usage(String),
    /// An input could not be opened or read.
    Input { name: String, err: io::Error },
    /// The output could not be created or written.
    Output { name: String, err: io::Error },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Cli(e) => write!(f, "{e}"),
            Error::Usage(msg) => f.write_str(msg),
            Error::Input { name, err } => write!(f, "{name}: {err}"),
            Error::Output { name, err } => write!(f, "{name}: {err}"),
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(Error::Cli(e)) => {
            // clap prints help and version to stdout, errors to stderr.
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_FATAL))
        }
        Err(e) => {
            eprintln!("canonurl: {e}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

fn run() -> Result<ExitCode, Error> {
    let cli = Cli::try_parse().map_err(Error::Cli)?;
    match cli.log_format {
        LogFormat::Plain => {}
    }

    let mut canonicalizer = Canonicalizer::new(cli.profile.into());
    if let Some(base) = &cli.base {
        let bytes = base.as_encoded_bytes();
        let base = Base::parse(bytes).map_err(|reject| {
            let shown = String::from_utf8_lossy(bytes);
            Error::Usage(format!("invalid --base URL '{shown}': {reject}"))
        })?;
        canonicalizer = canonicalizer.with_base(base);
    }

    let (sink, out_name): (Box<dyn Write>, String) = match &cli.output {
        None => (Box::new(io::stdout().lock()), STDOUT_NAME.to_owned()),
        Some(path) => {
            let name = path.display().to_string();
            match File::create(path) {
                Ok(file) => (Box::new(file), name),
                Err(err) => return Err(Error::Output { name, err }),
            }
        }
    };
    let mut job = Job {
        canonicalizer,
        pipe: cli.pipe,
        out: BufWriter::with_capacity(IO_BUF_LEN, sink),
        out_name,
        line: Vec::with_capacity(4096),
        url: Vec::with_capacity(4096),
        diag: Vec::with_capacity(256),
    };

    let stdin_only = [PathBuf::from("-")];
    let inputs = if cli.files.is_empty() {
        &stdin_only[..]
    } else {
        &cli.files[..]
    };
    let result = inputs
        .iter()
        .try_for_each(|path| job.run_path(path))
        .and_then(|()| job.finish());
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The reader went away (`| head`): nothing left to do, and not an error.
        Err(Error::Output { err, .. }) if err.kind() == io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(e),
    }
}

/// One run of the command: the canonicalizer, the output, and the buffers
/// reused for every line.
struct Job<W: Write> {
    canonicalizer: Canonicalizer,
    pipe: bool,
    out: BufWriter<W>,
    out_name: String,
    /// The current input line, terminator removed.
    line: Vec<u8>,
    /// The canonical URL of the current line, plus `\n`.
    url: Vec<u8>,
    /// The current diagnostic line.
    diag: Vec<u8>,
}

impl<W: Write> Job<W> {
    /// Opens and reads one input (`-` is stdin).
    fn run_path(&mut self, path: &Path) -> Result<(), Error> {
        if path.as_os_str() == "-" {
            let mut reader = BufReader::with_capacity(IO_BUF_LEN, io::stdin().lock());
            return self.run_reader(STDIN_NAME, &mut reader);
        }
        let name = path.display().to_string();
        match File::open(path) {
            Ok(file) => {
                let mut reader = BufReader::with_capacity(IO_BUF_LEN, file);
                self.run_reader(&name, &mut reader)
            }
            Err(err) => Err(Error::Input { name, err }),
        }
    }

    /// Canonicalizes every line of `reader`; `name` is used in diagnostics.
    fn run_reader<R: BufRead>(&mut self, name: &str, reader: &mut R) -> Result<(), Error> {
        let input_error = |err| Error::Input {
            name: name.to_owned(),
            err,
        };
        let mut line_number: u64 = 0;
        loop {
            self.line.clear();
            let n = reader
                .by_ref()
                .take(LINE_LIMIT)
                .read_until(b'\n', &mut self.line)
                .map_err(input_error)?;
            if n == 0 {
                return Ok(());
            }
            line_number += 1;
            if self.line.last() == Some(&b'\n') {
                self.line.pop();
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
            } else if n as u64 == LINE_LIMIT {
                // Cut at the limit: longer than any accepted URL, so the
                // canonicalizer rejects it below (input too long).
                skip_rest_of_line(reader).map_err(input_error)?;
            }
            self.canonicalize_line(name, line_number)?;
        }
    }

    /// Writes the current line's canonical URL, or reports why it was rejected.
    fn canonicalize_line(&mut self, name: &str, line_number: u64) -> Result<(), Error> {
        self.url.clear();
        match self
            .canonicalizer
            .canonicalize_target(&self.line, &mut self.url)
        {
            Ok(_) => {
                self.url.push(b'\n');
                let written = self.out.write_all(&self.url);
                written.map_err(|err| self.output_error(err))
            }
            Err(reject) => {
                self.report(name, line_number, reject);
                if self.pipe {
                    let written = self.out.write_all(b"\n");
                    written.map_err(|err| self.output_error(err))?;
                }
                Ok(())
            }
        }
    }

    /// Writes `canonurl: FILE:LINE: REASON at byte N` to stderr, in one write.
    fn report(&mut self, name: &str, line_number: u64, reject: Reject) {
        self.diag.clear();
        // Writing to a Vec cannot fail; a failing stderr is not worth stopping for.
        let _ = writeln!(self.diag, "canonurl: {name}:{line_number}: {reject}");
        let _ = io::stderr().write_all(&self.diag);
    }

    /// Flushes the output.
    fn finish(&mut self) -> Result<(), Error> {
        let flushed = self.out.flush();
        flushed.map_err(|err| self.output_error(err))
    }

    fn output_error(&self, err: io::Error) -> Error {
        Error::Output {
            name: self.out_name.clone(),
            err,
        }
    }
}

/// Consumes input up to and including the next `\n` (or to the end).
fn skip_rest_of_line<R: BufRead>(reader: &mut R) -> io::Result<()> {
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
}
