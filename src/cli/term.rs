//! The terminal: the progress display and the writers that share the screen
//! with it.
//!
//! Two rules keep a run from hanging or garbling the screen:
//!
//! - Nothing holds the stderr lock across the run. indicatif's ticker thread
//!   redraws the bar on stderr; a writer that kept `stderr.lock()` for the
//!   whole run made that thread wait for the lock while the main thread
//!   waited for the ticker in `finish_and_clear()`: a run that never exited.
//!   Here every write takes the lock only for itself, inside
//!   [`indicatif::ProgressBar::suspend`], which clears the bar, writes, and
//!   draws it again.
//! - Only whole lines are written while a bar is up, so a line of data or a
//!   diagnostic is never cut by a redraw.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use canonurl::input::Source;

/// `--progress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// A bar when stderr is a terminal and neither stdout nor stdin shares
    /// it (data lines and typed input would mix with the bar).
    Auto,
    /// A bar on a terminal; elsewhere a plain progress line every second.
    Always,
    /// None.
    Never,
}

/// The terminals this run is attached to.
#[derive(Clone, Copy, Debug)]
pub struct Ttys {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
}

impl Ttys {
    pub fn detect() -> Ttys {
        Ttys {
            stdin: io::stdin().is_terminal(),
            stdout: io::stdout().is_terminal(),
            stderr: io::stderr().is_terminal(),
        }
    }
}

/// Interval of the plain progress lines of `--progress always` when stderr
/// is no terminal.
pub const LINE_INTERVAL: Duration = Duration::from_secs(1);

/// How progress is shown.
pub enum Progress {
    None,
    /// A bar (or a spinner when the total size is unknown) on stderr.
    Bar(ProgressBar),
    /// A plain line on stderr at a steady interval (a log file or a CI
    /// console, where a redrawn bar would be noise).
    Lines {
        total: Option<u64>,
        started: Instant,
        last: Instant,
    },
}

impl Progress {
    /// Chooses the display for `when` and the terminals of this run.
    /// `stdout_is_data`: stdout carries the output (no `-o FILE`);
    /// `reads_stdin`: an input is stdin.
    pub fn new(
        when: When,
        ttys: Ttys,
        stdout_is_data: bool,
        reads_stdin: bool,
        sources: &[Source],
    ) -> Progress {
        let shares_screen = (stdout_is_data && ttys.stdout) || (reads_stdin && ttys.stdin);
        match when {
            When::Never => Progress::None,
            When::Auto if !ttys.stderr || shares_screen => Progress::None,
            When::Auto | When::Always if ttys.stderr => Progress::Bar(bar(total_size(sources))),
            When::Auto | When::Always => {
                let now = Instant::now();
                Progress::Lines {
                    total: total_size(sources),
                    started: now,
                    last: now,
                }
            }
        }
    }

    /// The bar, if one is drawn.
    pub fn bar(&self) -> Option<&ProgressBar> {
        match self {
            Progress::Bar(b) => Some(b),
            _ => None,
        }
    }

    /// Called after each piece with the raw (compressed) bytes read so far.
    pub fn tick(&mut self, raw: u64) {
        match self {
            Progress::None => {}
            Progress::Bar(b) => b.set_position(raw),
            Progress::Lines {
                total,
                started,
                last,
            } => {
                if last.elapsed() < LINE_INTERVAL {
                    return;
                }
                *last = Instant::now();
                let line = progress_line(raw, *total, started.elapsed());
                // A progress line that cannot be written is not worth failing
                // the run for; the data and the statistics are.
                let _ = writeln!(io::stderr(), "{line}");
            }
        }
    }

    /// Removes the bar from the screen; call before the final report.
    pub fn finish(&self) {
        if let Progress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

/// `canonurl: progress: 12.0 MiB of 40.0 MiB (30%), 6.0 MiB/s, 2 s`.
fn progress_line(raw: u64, total: Option<u64>, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = raw as f64 / secs;
    let of = match total {
        Some(t) if t > 0 => format!(
            " of {} ({:.0}%)",
            mib(t),
            100.0 * (raw as f64 / t as f64).min(1.0)
        ),
        _ => String::new(),
    };
    format!(
        "canonurl: progress: {}{of}, {}/s, {} s",
        mib(raw),
        mib(rate as u64),
        elapsed.as_secs()
    )
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The total size on disk when every input is a regular file.
fn total_size(sources: &[Source]) -> Option<u64> {
    let mut total = 0u64;
    for s in sources {
        match s {
            Source::Path(p) | Source::Found(p) => {
                let m = std::fs::metadata(p).ok().filter(|m| m.is_file())?;
                total += m.len();
            }
            _ => return None,
        }
    }
    Some(total)
}

/// A bar over the total size when it is known; a spinner with bytes and
/// rate otherwise.
fn bar(total: Option<u64>) -> ProgressBar {
    let (bar, template) = match total {
        Some(t) => (
            ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
            "{bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
        ),
        None => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            "{spinner} {bytes} {binary_bytes_per_sec}",
        ),
    };
    let style = ProgressStyle::with_template(template).unwrap_or_else(|_| match total {
        Some(_) => ProgressStyle::default_bar(),
        None => ProgressStyle::default_spinner(),
    });
    let bar = bar.with_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A writer that writes whole lines only, each batch with the bar cleared
/// (when there is a bar), taking its inner writer's lock only for that
/// write. A final line without a newline is written by `flush`.
pub struct LineWriter<W: Write> {
    inner: W,
    bar: Option<ProgressBar>,
    pending: Vec<u8>,
}

impl<W: Write> LineWriter<W> {
    pub fn new(inner: W, bar: Option<ProgressBar>) -> Self {
        LineWriter {
            inner,
            bar,
            pending: Vec::new(),
        }
    }

    fn write_through(&mut self, bytes: &[u8]) -> io::Result<()> {
        let inner = &mut self.inner;
        match &self.bar {
            Some(b) => b.suspend(|| inner.write_all(bytes).and_then(|()| inner.flush())),
            None => inner.write_all(bytes),
        }
    }
}

impl<W: Write> Write for LineWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match memchr::memrchr(b'\n', buf) {
            None => self.pending.extend_from_slice(buf),
            Some(i) => {
                if self.pending.is_empty() {
                    self.write_through(&buf[..=i])?;
                } else {
                    let mut lines = std::mem::take(&mut self.pending);
                    lines.extend_from_slice(&buf[..=i]);
                    let result = self.write_through(&lines);
                    lines.clear();
                    self.pending = lines;
                    result?;
                }
                self.pending.extend_from_slice(&buf[i + 1..]);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.write_through(&rest)?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_writer_writes_whole_lines_only() {
        let mut out = Vec::new();
        {
            let mut w = LineWriter::new(&mut out, None);
            w.write_all(b"ab").unwrap();
            w.write_all(b"c\nde").unwrap();
            assert_eq!(w.inner.as_slice(), b"abc\n");
            w.write_all(b"f\ng\nh").unwrap();
            assert_eq!(w.inner.as_slice(), b"abc\ndef\ng\n");
            w.flush().unwrap();
        }
        assert_eq!(out, b"abc\ndef\ng\nh");
    }

    #[test]
    fn progress_line_names_bytes_share_and_rate() {
        let line = progress_line(3 << 20, Some(12 << 20), Duration::from_secs(2));
        assert_eq!(
            line,
            "canonurl: progress: 3.0 MiB of 12.0 MiB (25%), 1.5 MiB/s, 2 s"
        );
        let line = progress_line(1 << 20, None, Duration::from_secs(1));
        assert_eq!(line, "canonurl: progress: 1.0 MiB, 1.0 MiB/s, 1 s");
    }
}
