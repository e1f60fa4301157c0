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
//!
//! And one keeps the screen clean: a bar is drawn only once the run has
//! lasted [`BAR_DELAY`], and cleared on every way out (the end, an error, a
//! closed stdout, SIGINT or SIGTERM), so no bar is ever left behind.

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};

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

/// How long a run goes on before its bar is drawn. A shorter run never
/// draws one: a bar drawn and cleared again in a blink is noise, and
/// `canonurl FILE | head` shares the screen with `head`, whose lines would
/// land behind a bar already drawn and be cleared with it instead of the
/// bar (`head` exits, and with it canonurl, long before this delay).
pub const BAR_DELAY: Duration = Duration::from_secs(1);

/// Redraw interval of a drawn bar, and how often a run with a bar looks
/// for a signal that ends it.
const TICK: Duration = Duration::from_millis(200);

/// What the bar shows, beyond the bytes read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shows {
    /// Bytes read, rate, and the time left when the total size is known.
    Bytes,
    /// `--follow`: a status line of the lines read so far, waiting for
    /// more; `counts_at_end`: the output comes at Ctrl-C (`--count`).
    Follow { counts_at_end: bool },
}

/// How progress is shown.
pub enum Progress {
    None,
    /// A bar (or a spinner when the total size is unknown) on stderr, drawn
    /// after [`BAR_DELAY`] and cleared on every way out of the run.
    Bar(Delayed),
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
    /// `output_at_end`: nothing is written to it before the input ends
    /// (`--count`), so a bar does not share the screen with it;
    /// `reads_stdin`: an input is stdin; `catch_signals`: SIGINT and
    /// SIGTERM clear a drawn bar before they end the process (false when
    /// the run handles them itself, as `--follow` does).
    pub fn new(
        when: When,
        ttys: Ttys,
        output: (bool, bool),
        reads_stdin: bool,
        sources: &[Source],
        shows: Shows,
        catch_signals: bool,
    ) -> Progress {
        let (stdout_is_data, output_at_end) = output;
        let shares_screen =
            (stdout_is_data && ttys.stdout && !output_at_end) || (reads_stdin && ttys.stdin);
        match when {
            When::Never => Progress::None,
            When::Auto if !ttys.stderr || shares_screen => Progress::None,
            When::Auto | When::Always if ttys.stderr => Progress::Bar(Delayed::start(
                bar(total_size(sources), shows),
                shows,
                catch_signals,
            )),
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

    /// The bar, if one may be drawn.
    pub fn bar(&self) -> Option<&ProgressBar> {
        match self {
            Progress::Bar(d) => Some(&d.bar),
            _ => None,
        }
    }

    /// Called after each piece with the raw (compressed) bytes and the
    /// lines read so far.
    pub fn tick(&mut self, raw: u64, lines: u64) {
        match self {
            Progress::None => {}
            Progress::Bar(d) => {
                d.bar.set_position(raw);
                if let Shows::Follow { counts_at_end } = d.shows {
                    d.bar.set_message(follow_status(lines, raw, counts_at_end));
                }
            }
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

    /// Removes the bar from the screen (if it was drawn) for good; call
    /// before the final report. Dropping the display does it too.
    pub fn finish(&mut self) {
        if let Progress::Bar(d) = self {
            d.finish();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A bar that a watcher thread draws once the run has lasted
/// [`BAR_DELAY`], and clears before a signal ends the process.
pub struct Delayed {
    bar: ProgressBar,
    shows: Shows,
    /// True once [`Delayed::finish`] cleared the bar: the watcher draws
    /// nothing more.
    finished: Arc<(Mutex<bool>, Condvar)>,
    watcher: Option<std::thread::JoinHandle<()>>,
    /// The watcher handles SIGINT and SIGTERM.
    signals: bool,
}

impl Delayed {
    fn start(bar: ProgressBar, shows: Shows, catch_signals: bool) -> Delayed {
        let finished = Arc::new((Mutex::new(false), Condvar::new()));
        // The signal that arrived (0: none). Registered only here: a run
        // without a bar keeps the default action of every signal.
        let signal = Arc::new(AtomicUsize::new(0));
        let watcher = {
            let bar = bar.clone();
            let finished = Arc::clone(&finished);
            let signal = Arc::clone(&signal);
            std::thread::Builder::new()
                .name("canonurl-progress".into())
                .spawn(move || watch(&bar, &finished, catch_signals.then_some(&*signal)))
                .ok()
        };
        // Registered only with a watcher to act on them: a run without a
        // bar keeps the default action of every signal. One that cannot be
        // registered keeps it too.
        if watcher.is_some() && catch_signals {
            for s in [SIGINT, SIGTERM] {
                let _ = signal_hook::flag::register_usize(s, Arc::clone(&signal), s as usize);
            }
        }
        Delayed {
            bar,
            shows,
            finished,
            watcher,
            signals: catch_signals,
        }
    }

    fn finish(&mut self) {
        let (lock, cond) = &*self.finished;
        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
        if !*done {
            // Under the lock: the watcher draws nothing after this, and a
            // signal from now on finds the bar gone.
            self.bar.finish_and_clear();
            *done = true;
            cond.notify_all();
        }
        drop(done);
        // A watcher that watches signals goes on doing so (it ends with the
        // process); one that does not returns now.
        if !self.signals {
            if let Some(w) = self.watcher.take() {
                let _ = w.join();
            }
        }
    }
}

/// The watcher: draws the bar at [`BAR_DELAY`] unless the run finished
/// first. When `signal` is watched, a SIGINT or SIGTERM clears the bar (if
/// the run has not finished it) and ends the process as the signal would
/// have; signal-hook cannot hand the default action back, so the watcher
/// stays for the rest of the process.
fn watch(bar: &ProgressBar, finished: &(Mutex<bool>, Condvar), signal: Option<&AtomicUsize>) {
    let started = Instant::now();
    let (lock, cond) = finished;
    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut drawn = false;
    loop {
        if let Some(s) = signal
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|&s| s != 0)
        {
            if !*done {
                bar.finish_and_clear();
            }
            let s = s as i32;
            // Resets the default action and raises the signal again: the
            // parent sees a death by that signal, as without the handler.
            let _ = signal_hook::low_level::emulate_default_handler(s);
            std::process::exit(128 + s);
        }
        let elapsed = started.elapsed();
        if !*done && !drawn && elapsed >= BAR_DELAY {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(TICK);
            drawn = true;
        }
        let wait = match signal {
            None if *done => return,
            None if drawn => Duration::from_secs(3600),
            Some(_) if drawn || *done => TICK,
            _ => BAR_DELAY.saturating_sub(elapsed).min(TICK),
        };
        done = cond
            .wait_timeout(done, wait)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// The status line of `--follow`.
fn follow_status(lines: u64, raw: u64, counts_at_end: bool) -> String {
    let then = if counts_at_end {
        "Ctrl-C ends the run and writes the counts"
    } else {
        "Ctrl-C ends the run"
    };
    format!(
        "{lines} lines read ({}); waiting for more, {then}",
        mib(raw)
    )
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
/// rate otherwise; a status line for `--follow`. Hidden until the watcher
/// draws it.
fn bar(total: Option<u64>, shows: Shows) -> ProgressBar {
    let hidden = ProgressDrawTarget::hidden;
    let (bar, template) = match (total, shows) {
        (_, Shows::Follow { counts_at_end }) => {
            let bar = ProgressBar::with_draw_target(None, hidden());
            bar.set_message(follow_status(0, 0, counts_at_end));
            (bar, "{spinner} canonurl: following: {msg}")
        }
        (Some(t), Shows::Bytes) => (
            ProgressBar::with_draw_target(Some(t), hidden()),
            "{bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
        ),
        (None, Shows::Bytes) => (
            ProgressBar::with_draw_target(None, hidden()),
            "{spinner} {bytes} {binary_bytes_per_sec}",
        ),
    };
    let style = ProgressStyle::with_template(template).unwrap_or_else(|_| match total {
        Some(_) => ProgressStyle::default_bar(),
        None => ProgressStyle::default_spinner(),
    });
    bar.with_style(style)
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
