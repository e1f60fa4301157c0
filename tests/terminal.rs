//! The command at a terminal: stderr, stdout and stdin each on a
//! pseudo-terminal, as a person runs it.
//!
//! The progress bar once hung every run whose stderr was a terminal (the
//! README's own main job among them): the work was done, the process never
//! exited. CI's stderr is a pipe, so no other test saw it. Every test here
//! fails, instead of hanging, when the process has not exited within a
//! generous bound after its input ended.
//!
//! `CANONURL_TEST_BIN` runs another build of the command (for checking that
//! these tests catch an old bug).

#![cfg(unix)]

use crate::common;

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::pty::{openpty, Winsize};

fn bin() -> PathBuf {
    std::env::var_os("CANONURL_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_canonurl")))
}

fn sample_log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-access.log")
}

/// Which standard streams of the child are the terminal.
#[derive(Clone, Copy, Default)]
struct OnTty {
    stdin: bool,
    stdout: bool,
    stderr: bool,
}

impl OnTty {
    const NONE: OnTty = OnTty::on(false, false, false);
    const STDERR: OnTty = OnTty::on(false, false, true);
    const STDOUT_STDERR: OnTty = OnTty::on(false, true, true);
    const STDIN: OnTty = OnTty::on(true, false, false);
    const STDIN_STDERR: OnTty = OnTty::on(true, false, true);

    const fn on(stdin: bool, stdout: bool, stderr: bool) -> OnTty {
        OnTty {
            stdin,
            stdout,
            stderr,
        }
    }
}

/// What a run at the terminal gave.
struct Run {
    status: ExitStatus,
    /// Everything the terminal showed (echoed input included).
    screen: Vec<u8>,
    /// Stdout, when it was not the terminal.
    stdout: Vec<u8>,
    /// Stderr, when it was not the terminal.
    stderr: Vec<u8>,
    /// Seconds from the end of the input to the exit.
    after_input: f64,
}

/// Reads `from` to its end on a thread.
fn drain(mut from: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: every slave side is closed (the child exited).
                Err(_) => break,
            }
        }
        let _ = tx.send(all);
    });
    rx
}

/// Runs the command with the chosen streams on a fresh 120x40 terminal.
/// `typed` is typed at the terminal (stdin must be on it), then Ctrl-D;
/// `feed` is written to a piped stdin in the given pieces, with a pause
/// after each. Panics when the process has not exited `bound` after its
/// input ended.
fn run_at_terminal(
    args: &[&str],
    tty: OnTty,
    typed: Option<&[u8]>,
    feed: Option<(&[&[u8]], Duration)>,
    bound: Duration,
) -> Run {
    let ws = Winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&ws), None).expect("openpty");
    let slave = |on: bool, piped: Stdio| -> Stdio {
        if on {
            Stdio::from(OwnedFd::try_clone(&pty.slave).expect("dup slave"))
        } else {
            piped
        }
    };
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_remove("CANONURL_CONFIG_PATH")
        .env("TERM", "xterm-256color")
        .stdin(slave(
            tty.stdin,
            if feed.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            },
        ))
        .stdout(slave(tty.stdout, Stdio::piped()))
        .stderr(slave(tty.stderr, Stdio::piped()));
    let mut child = cmd.spawn().expect("spawn canonurl");
    // Only the child holds the slave now (the `Command` kept copies): the
    // master reads EOF (EIO) when it exits.
    drop(cmd);
    drop(pty.slave);
    let mut master = std::fs::File::from(pty.master);
    let screen = drain(master.try_clone().expect("dup master"));
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);

    if let Some(text) = typed {
        assert!(tty.stdin, "typing needs stdin on the terminal");
        // Canonical mode: a line at a time, Ctrl-D at the start of a line
        // ends the input.
        master.write_all(text).expect("type at the terminal");
        master.write_all(b"\x04").expect("Ctrl-D");
    }
    if let Some((pieces, pause)) = feed {
        let mut stdin = child.stdin.take().expect("piped stdin");
        for p in pieces {
            stdin.write_all(p).expect("feed stdin");
            stdin.flush().expect("flush stdin");
            std::thread::sleep(pause);
        }
    }
    let input_ended = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if input_ended.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            let shown = screen
                .recv_timeout(Duration::from_secs(5))
                .unwrap_or_default();
            let tail = &shown[shown.len().saturating_sub(600)..];
            panic!(
                "canonurl {args:?} did not exit within {bound:?} after its input ended; \
                 the terminal's last bytes: {}",
                common::show(tail)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let after_input = input_ended.elapsed().as_secs_f64();
    let collect = |rx: Option<mpsc::Receiver<Vec<u8>>>| {
        rx.map(|rx| {
            rx.recv_timeout(Duration::from_secs(30))
                .expect("stream closed")
        })
        .unwrap_or_default()
    };
    Run {
        status,
        screen: screen
            .recv_timeout(Duration::from_secs(30))
            .expect("terminal closed"),
        stdout: collect(stdout),
        stderr: collect(stderr),
        after_input,
    }
}

/// `run_at_terminal` with no input beyond the files, and the usual bound.
fn at_terminal(args: &[&str], tty: OnTty) -> Run {
    run_at_terminal(args, tty, None, None, BOUND)
}

/// The same command with every stream a pipe: the reference output.
fn run_piped(args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .args(args)
        .env_remove("CANONURL_CONFIG_PATH")
        .stdin(Stdio::null())
        .output()
        .expect("run canonurl")
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The terminal's text without `\r` (the terminal turns `\n` into `\r\n`).
fn screen_text(screen: &[u8]) -> Vec<u8> {
    screen.iter().copied().filter(|&b| b != b'\r').collect()
}

/// Whether a bar or spinner was drawn: its glyphs, or the escape sequences
/// that redraw it (canonurl's own text never holds an ESC byte).
fn shows_progress(screen: &[u8]) -> bool {
    contains(screen, "░".as_bytes()) || contains(screen, "█".as_bytes()) || screen.contains(&0x1b)
}

const BOUND: Duration = Duration::from_secs(120);

/// A temporary directory removed at the end of the test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("canonurl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn readme_main_job_exits_with_stderr_at_a_terminal() {
    let log = sample_log();
    let args = ["--count", "--stats", log.to_str().unwrap()];
    let expected = run_piped(&args);
    for attempt in 0..4 {
        let run = at_terminal(&args, OnTty::STDERR);
        assert!(run.status.success(), "attempt {attempt}: {:?}", run.status);
        assert_eq!(
            run.stdout, expected.stdout,
            "attempt {attempt}: output differs from a piped run"
        );
        let screen = screen_text(&run.screen);
        assert!(
            contains(&screen, b"canonurl statistics\n"),
            "--stats not shown: {}",
            common::show(&screen)
        );
        assert!(
            contains(&screen, b"canonurl: ") && contains(&screen, b"sample-access.log:933: "),
            "diagnostics not shown whole: {}",
            common::show(&screen)
        );
        // A run this short draws no bar at all: one drawn and cleared in a
        // blink is noise, and a screen shared with `| head` kept it.
        assert!(
            !shows_progress(&run.screen),
            "attempt {attempt}: a bar on a short run: {}",
            common::show(&run.screen)
        );
    }
}

#[test]
fn large_file_shows_a_bar_and_exits() {
    let dir = TempDir::new("tty-large");
    let big = dir.0.join("big.log");
    let sample = std::fs::read(sample_log()).unwrap();
    let target = 200u64 << 20;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        let mut written = 0u64;
        while written < target {
            f.write_all(&sample).unwrap();
            written += sample.len() as u64;
        }
        f.flush().unwrap();
    }
    let size = std::fs::metadata(&big).unwrap().len();
    let copies = size / sample.len() as u64;
    let run = run_at_terminal(
        &[
            "--count",
            "--stats-json",
            dir.0.join("s.json").to_str().unwrap(),
            big.to_str().unwrap(),
        ],
        OnTty::STDERR,
        None,
        None,
        Duration::from_secs(600),
    );
    assert!(run.status.success(), "{:?}", run.status);
    // The bar is drawn once the run has lasted a second (a fast machine
    // may read it all sooner; `a_bar_drawn_is_cleared_when_a_signal_ends_the_run`
    // draws one for sure), and cleared at the end.
    if run.after_input > 1.5 {
        assert!(
            shows_progress(&run.screen),
            "no progress bar in {:.1} s on a {size}-byte file: {}",
            run.after_input,
            common::show(&run.screen[..run.screen.len().min(400)])
        );
    } else if run.after_input < 0.9 {
        assert!(!shows_progress(&run.screen), "a bar before its delay");
    }
    assert!(
        cleared_after(&run.screen, b"B/s"),
        "the bar stayed: {}",
        common::show(&run.screen[run.screen.len().saturating_sub(300)..])
    );
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.0.join("s.json")).unwrap()).unwrap();
    let counted: u64 = common::split_lines(&run.stdout)
        .iter()
        .map(|l| {
            let n = l.rsplit(|&b| b == b'\t').next().unwrap();
            std::str::from_utf8(n).unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(stats["lines"].as_u64().unwrap(), copies * 2001);
    assert_eq!(counted, stats["urls"].as_u64().unwrap());
    eprintln!(
        "200 MB at a terminal: exited {:.1} s after start",
        run.after_input
    );
}

#[test]
fn gzip_input_with_stderr_at_a_terminal() {
    let dir = TempDir::new("tty-gzip");
    let gz = dir.0.join("sample.log.gz");
    {
        let f = std::fs::File::create(&gz).unwrap();
        let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        enc.write_all(&std::fs::read(sample_log()).unwrap())
            .unwrap();
        enc.finish().unwrap();
    }
    let plain = run_piped(&["--unique", sample_log().to_str().unwrap()]);
    let run = at_terminal(
        &["--unique", "--stats", gz.to_str().unwrap()],
        OnTty::STDERR,
    );
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.stdout, plain.stdout);
    assert!(
        contains(&screen_text(&run.screen), b", gzip"),
        "{}",
        common::show(&run.screen)
    );
}

/// Printable lines of the sample: what a person can type (control bytes
/// would be line-editing keys to the terminal).
fn typeable_sample(dir: &Path) -> (PathBuf, Vec<u8>) {
    let bytes = std::fs::read(sample_log()).unwrap();
    let mut typed = Vec::new();
    for line in common::split_lines(&bytes) {
        if line.iter().all(|&b| (0x20..0x7f).contains(&b)) {
            typed.extend_from_slice(line);
            typed.push(b'\n');
        }
    }
    let path = dir.join("typed.log");
    std::fs::write(&path, &typed).unwrap();
    (path, typed)
}

#[test]
fn stdin_typed_at_a_terminal_ends_at_ctrl_d() {
    let dir = TempDir::new("tty-stdin");
    let (path, typed) = typeable_sample(&dir.0);
    let expected = run_piped(&["--count", path.to_str().unwrap()]);
    // stdin and stderr are the terminal, as for `canonurl --count` typed
    // with no file; stdout is a pipe.
    let run = run_at_terminal(
        &["--count", "--stats"],
        OnTty::STDIN_STDERR,
        Some(&typed),
        None,
        BOUND,
    );
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(
        run.stdout, expected.stdout,
        "typed input gave other counts than the file"
    );
    let screen = screen_text(&run.screen);
    assert!(
        contains(
            &screen,
            b"reading log lines from the terminal; end with Ctrl-D"
        ),
        "{}",
        common::show(&screen[..screen.len().min(300)])
    );
    assert!(contains(&screen, b"canonurl statistics"));
    // No bar over the lines being typed.
    assert!(!shows_progress(&screen), "a bar was drawn over typed input");
}

/// `summarize` and `mine` with no FILE at a terminal say so too, instead of
/// waiting in silence, and read what is typed: a summary's rows, a rules
/// file. (Not the bytes of the piped run: typed lines come in pieces of a
/// line or a few, and the redirect hints look for a client's next request
/// within a piece.)
#[test]
fn subcommands_reading_a_terminal_say_so() {
    let dir = TempDir::new("tty-stdin-sub");
    let (path, typed) = typeable_sample(&dir.0);
    // `mine` with no input at all says what it takes; `-` is stdin.
    for (command, stdin, output) in [
        ("summarize", None, &b"host\turl\twindow\thits\t"[..]),
        ("mine", Some("-"), b"# Rules learned by `canonurl mine`"),
    ] {
        let expected = run_piped(&[command, path.to_str().unwrap()]);
        assert!(contains(&expected.stdout, output), "{command}");
        let args: Vec<&str> = [command].into_iter().chain(stdin).collect();
        let run = run_at_terminal(&args, OnTty::STDIN_STDERR, Some(&typed), None, BOUND);
        assert_eq!(run.status.code(), expected.status.code(), "{command}");
        assert!(contains(&run.stdout, output), "{command}");
        let screen = screen_text(&run.screen);
        let hint = format!("canonurl {command}: reading log lines from the terminal");
        assert!(
            contains(&screen, hint.as_bytes()),
            "{command}: {}",
            common::show(&screen[..screen.len().min(300)])
        );
    }
}

#[test]
fn stdin_on_a_terminal_alone() {
    let dir = TempDir::new("tty-stdin-only");
    let (path, typed) = typeable_sample(&dir.0);
    let expected = run_piped(&[path.to_str().unwrap()]);
    let run = run_at_terminal(&[], OnTty::STDIN, Some(&typed), None, BOUND);
    assert!(run.status.success(), "{:?}", run.status);
    assert_eq!(run.stdout, expected.stdout);
}

#[test]
fn output_to_the_terminal_has_no_bar_and_whole_lines() {
    let log = sample_log();
    let expected = run_piped(&[log.to_str().unwrap()]);
    let run = at_terminal(&[log.to_str().unwrap()], OnTty::STDOUT_STDERR);
    assert!(run.status.success(), "{:?}", run.status);
    let screen = screen_text(&run.screen);
    assert!(!shows_progress(&screen), "auto drew a bar over the output");
    // The URLs, in order, as whole lines; the diagnostics between them.
    let shown: Vec<&[u8]> = common::split_lines(&screen)
        .into_iter()
        .filter(|l| !l.starts_with(b"canonurl: "))
        .collect();
    assert_eq!(shown, common::split_lines(&expected.stdout));
}

#[test]
fn progress_always_on_a_shared_terminal_keeps_lines_whole() {
    let log = sample_log();
    let expected = run_piped(&[log.to_str().unwrap()]);
    let run = at_terminal(
        &["--progress", "always", log.to_str().unwrap()],
        OnTty::STDOUT_STDERR,
    );
    assert!(run.status.success(), "{:?}", run.status);
    let screen = screen_text(&run.screen);
    for url in common::split_lines(&expected.stdout) {
        let mut line = url.to_vec();
        line.push(b'\n');
        assert!(
            contains(&screen, &line),
            "{} not shown whole",
            common::show(url)
        );
    }
}

#[test]
fn progress_always_without_a_terminal_prints_plain_lines() {
    // Stderr is a pipe; lines arrive on stdin over three seconds.
    let bytes = std::fs::read(sample_log()).unwrap();
    let lines = common::split_lines(&bytes);
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    for part in lines.chunks(lines.len() / 3 + 1) {
        let mut p = Vec::new();
        for l in part {
            p.extend_from_slice(l);
            p.push(b'\n');
        }
        pieces.push(p);
    }
    let pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    let run = run_at_terminal(
        &["--progress", "always", "-q", "-f", "combined", "--count"],
        OnTty::NONE,
        None,
        Some((&pieces, Duration::from_millis(1500))),
        BOUND,
    );
    assert!(run.status.success(), "{:?}", run.status);
    let progress: Vec<&[u8]> = common::split_lines(&run.stderr)
        .into_iter()
        .filter(|l| l.starts_with(b"canonurl: progress: "))
        .collect();
    assert!(
        !progress.is_empty(),
        "no progress line: {}",
        common::show(&run.stderr)
    );
    assert!(
        progress
            .iter()
            .all(|l| contains(l, b" MiB, ") && contains(l, b" MiB/s, ")),
        "{}",
        common::show(&run.stderr)
    );
    assert!(!run.stderr.contains(&0x1b), "escape sequences on a pipe");
    // -q: no per-line diagnostics.
    assert!(!contains(&run.stderr, b"sample-access.log:933"));
}

#[test]
fn broken_pipe_at_a_terminal_is_quiet() {
    // `canonurl big.log | head`: the stderr terminal shows no error. The
    // output must outgrow the pipe's buffer for the write to fail.
    let dir = TempDir::new("tty-head");
    let log = dir.0.join("repeated.log");
    let sample = std::fs::read(sample_log()).unwrap();
    std::fs::write(&log, sample.repeat(20)).unwrap();
    let pty = openpty(None, None).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["--progress", "always", log.to_str().unwrap()])
        .env_remove("CANONURL_CONFIG_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()));
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    drop(pty.slave);
    let screen = drain(std::fs::File::from(pty.master));
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            panic!("did not exit after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let screen = screen.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(
        !contains(&screen, b"Broken pipe"),
        "{}",
        common::show(&screen)
    );
}

/// Whether a progress bar's text was drawn: its glyphs or the words only
/// the bar writes.
fn shows_bar_text(screen: &[u8]) -> bool {
    ["░", "█", "ETA", "B/s"]
        .iter()
        .any(|t| contains(screen, t.as_bytes()))
}

/// The position of the last `needle` in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Whether the last thing drawn of a bar (`drawn`: a piece of its text) was
/// erased after it: indicatif clears a bar's line with `ESC [2K`.
fn cleared_after(screen: &[u8], drawn: &[u8]) -> bool {
    match (rfind(screen, drawn), rfind(screen, b"\x1b[2K")) {
        (Some(d), Some(c)) => c > d,
        (None, _) => true,
        (Some(_), None) => false,
    }
}

/// A log of `size` bytes or more: the sample repeated.
fn big_log(dir: &Path, size: u64) -> PathBuf {
    let path = dir.join("big.log");
    let sample = std::fs::read(sample_log()).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut written = 0u64;
    while written < size {
        f.write_all(&sample).unwrap();
        written += sample.len() as u64;
    }
    f.flush().unwrap();
    path
}

/// The terminal's bytes as they arrive, readable while the child runs.
fn live_screen(master: std::fs::File) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let shared = std::sync::Arc::clone(&screen);
    std::thread::spawn(move || {
        let mut master = master;
        let mut buf = [0u8; 64 * 1024];
        loop {
            match master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => shared.lock().unwrap().extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    screen
}

/// Waits for `child` to exit within `bound`, killing it and panicking if it
/// does not.
fn wait_for(child: &mut std::process::Child, bound: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: did not exit within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` (a name `kill` knows: INT, TERM) to `child`.
fn send_signal(child: &std::process::Child, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal}");
}

#[test]
fn head_at_a_terminal_leaves_no_bar() {
    // `canonurl FILE | head -3` with the terminal as canonurl's stderr and
    // head's stdout: head's lines and the bar shared the screen, and the
    // bar stayed on it. A short input and one large enough that reading
    // it whole would outlast the bar's delay.
    let dir = TempDir::new("tty-pipe-head");
    let big = big_log(&dir.0, 48 << 20);
    let small = sample_log();
    for run in 0..20 {
        let log = if run % 2 == 0 { &small } else { &big };
        let expected = run_piped(&[log.to_str().unwrap()]);
        let first3: Vec<&[u8]> = common::split_lines(&expected.stdout)
            .into_iter()
            .take(3)
            .collect();
        let pty = openpty(None, None).unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("\"$0\" \"$1\" | head -3")
            .arg(bin())
            .arg(log)
            .env_remove("CANONURL_CONFIG_PATH")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .stdout(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()))
            .stderr(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()));
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        drop(pty.slave);
        let screen = drain(std::fs::File::from(pty.master));
        let status = wait_for(&mut child, BOUND, "canonurl FILE | head -3");
        assert!(status.success(), "run {run}: {status:?}");
        let screen = screen.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(
            !shows_bar_text(&screen) && !screen.contains(&0x1b),
            "run {run} ({}): a bar was drawn: {}",
            log.display(),
            common::show(&screen)
        );
        let text = screen_text(&screen);
        let shown: Vec<&[u8]> = common::split_lines(&text)
            .into_iter()
            .filter(|l| !l.starts_with(b"canonurl: "))
            .collect();
        assert_eq!(
            shown, first3,
            "run {run}: the screen holds head's 3 lines and diagnostics, whole"
        );
    }
}

#[test]
fn a_bar_drawn_is_cleared_when_a_signal_ends_the_run() {
    // Lines arrive on stdin for as long as the test likes: the bar (a
    // spinner: the size is unknown) is drawn after its delay; SIGINT then
    // ends the run, and the bar must not stay on the screen.
    for signal in ["INT", "TERM"] {
        let pty = openpty(None, None).unwrap();
        let mut cmd = Command::new(bin());
        cmd.args(["--count", "-f", "combined"])
            .env_remove("CANONURL_CONFIG_PATH")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()));
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        drop(pty.slave);
        let screen = live_screen(std::fs::File::from(pty.master));
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(&std::fs::read(sample_log()).unwrap())
            .unwrap();
        stdin.flush().unwrap();
        let started = Instant::now();
        while !contains(&screen.lock().unwrap(), b"B/s") {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no bar drawn: {}",
                common::show(&screen.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Not drawn before its delay.
        assert!(started.elapsed() >= Duration::from_millis(900));
        send_signal(&child, signal);
        let status = wait_for(&mut child, BOUND, "canonurl after a signal");
        drop(stdin);
        {
            use std::os::unix::process::ExitStatusExt;
            let want = if signal == "INT" { 2 } else { 15 };
            assert_eq!(status.signal(), Some(want), "{status:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
        let screen = screen.lock().unwrap().clone();
        assert!(
            cleared_after(&screen, b"B/s"),
            "SIG{signal} left the bar on the screen: {}",
            common::show(&screen[screen.len().saturating_sub(300)..])
        );
    }
}

#[test]
fn follow_count_at_a_terminal_shows_it_is_waiting() {
    // `canonurl --follow --count access.log` at a terminal writes nothing
    // until Ctrl-C: a status line says that it runs and how far it got.
    let dir = TempDir::new("tty-follow");
    let log = dir.0.join("access.log");
    let sample = std::fs::read(sample_log()).unwrap();
    let lines = common::split_lines(&sample);
    let (first, second) = lines.split_at(1000);
    let join = |ls: &[&[u8]]| -> Vec<u8> {
        ls.iter()
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect()
    };
    std::fs::write(&log, join(first)).unwrap();
    let pty = openpty(None, None).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["--follow", "--count", "-q", log.to_str().unwrap()])
        .env_remove("CANONURL_CONFIG_PATH")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()))
        .stderr(Stdio::from(OwnedFd::try_clone(&pty.slave).unwrap()));
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    drop(pty.slave);
    let screen = live_screen(std::fs::File::from(pty.master));
    let wait_for_text = |text: &[u8]| {
        let started = Instant::now();
        while !contains(&screen.lock().unwrap(), text) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{:?} not shown: {}",
                String::from_utf8_lossy(text),
                common::show(&screen.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for_text(b"1000 lines read");
    assert!(contains(&screen.lock().unwrap(), b"waiting for more"));
    // The file grows: the line count follows.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(&join(second)).unwrap();
    drop(f);
    wait_for_text(format!("{} lines read", lines.len()).as_bytes());
    send_signal(&child, "INT");
    let status = wait_for(&mut child, BOUND, "canonurl --follow after SIGINT");
    assert!(status.success(), "{status:?}");
    std::thread::sleep(Duration::from_millis(200));
    let screen = screen.lock().unwrap().clone();
    // The status line was cleared, and the counts shown whole.
    assert!(
        cleared_after(&screen, b"lines read"),
        "{}",
        common::show(&screen[screen.len().saturating_sub(300)..])
    );
    let expected = run_piped(&["--count", log.to_str().unwrap()]);
    let text = screen_text(&screen);
    for row in common::split_lines(&expected.stdout) {
        let mut line = row.to_vec();
        line.push(b'\n');
        assert!(
            contains(&text, &line),
            "{} not shown whole",
            common::show(row)
        );
    }
}
