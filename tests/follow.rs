//! `--follow`: a file read as it grows, through rotation (rename and create,
//! truncation), until SIGINT or SIGTERM end the run cleanly.
//!
//! Each test runs the binary on a file in its own directory, changes the
//! file while it runs, and waits (bounded) for the output to show the
//! change. A wait that runs out fails the test with what was seen.

#![cfg(unix)]

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any one wait may take: generous, the machine may be busy.
const WAIT: Duration = Duration::from_secs(30);

fn dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("follow-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn append(path: &Path, data: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(data.as_bytes()).unwrap();
}

fn url(n: &str) -> String {
    format!("http://a.example/{n}")
}

fn lines(urls: &[&str]) -> String {
    urls.iter().map(|u| url(u) + "\n").collect()
}

/// Collects everything `r` yields, on a thread.
fn collect(mut r: impl Read + Send + 'static) -> Arc<Mutex<Vec<u8>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    seen
}

/// A running `canonurl`, its stdout and stderr read on threads.
struct Run {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
}

impl Run {
    fn start(args: &[&str]) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("canonurl runs");
        let out = collect(child.stdout.take().unwrap());
        let err = collect(child.stderr.take().unwrap());
        Run { child, out, err }
    }

    fn out(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    fn err(&self) -> String {
        String::from_utf8_lossy(&self.err.lock().unwrap()).into_owned()
    }

    /// Waits until `done(stdout, stderr)` holds.
    fn wait_for(&self, what: &str, done: impl Fn(&str, &str) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            let (out, err) = (self.out(), self.err());
            if done(&out, &err) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\nstdout:\n{out}\nstderr:\n{err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until stdout has the line `line`.
    fn wait_line(&self, line: &str) {
        self.wait_for(line, |out, _| out.lines().any(|l| l == line));
    }

    fn signal(&self, name: &str) {
        signal(self.child.id(), name);
    }

    /// Waits for the exit, then for stdout and stderr to be read to their end.
    fn exit(&mut self) -> ExitStatus {
        let status = wait_exit(&mut self.child);
        // The pipes close with the process; give the threads a moment.
        let deadline = Instant::now() + WAIT;
        while Arc::strong_count(&self.out) > 1 || Arc::strong_count(&self.err) > 1 {
            assert!(Instant::now() < deadline, "output not closed");
            std::thread::sleep(Duration::from_millis(10));
        }
        status
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -{name} {pid}");
}

/// Waits (bounded) for `child` to exit; kills it and fails when it does not.
fn wait_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("canonurl did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) for the first byte of `child`'s stdout, and returns the
/// stdout, still open.
fn first_byte(child: &mut Child) -> ChildStdout {
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut first = [0u8; 1];
        let ok = stdout.read_exact(&mut first).is_ok();
        let _ = tx.send((ok, stdout));
    });
    match rx.recv_timeout(WAIT) {
        Ok((true, stdout)) => stdout,
        _ => {
            let _ = child.kill();
            panic!("no output from canonurl");
        }
    }
}

/// The value of a `--stats` row (`  lines      28`).
fn stat(err: &str, row: &str) -> Option<u64> {
    err.lines()
        .find_map(|l| l.strip_prefix(&format!("  {row} ")))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn follows_appends_rotations_and_partial_lines_keeping_unique_state() {
    let dir = dir("rotations");
    let log = dir.join("access.log");
    append(&log, &lines(&["1"]));
    let log_arg = log.to_str().unwrap();
    let mut run = Run::start(&[
        "--follow", "--unique", "--stats", "-f", "plain", "-j", "2", log_arg,
    ]);
    run.wait_line(&url("1"));

    // Appended.
    append(&log, &lines(&["2", "1"]));
    run.wait_line(&url("2"));

    // Renamed away: the path names nothing for now, and the writer still
    // writes to the old file, which is read on.
    let old = dir.join("access.log.1");
    std::fs::rename(&log, &old).unwrap();
    append(&old, &lines(&["3"]));
    run.wait_line(&url("3"));

    // A new file at the path, starting with a URL seen before: read from its
    // start, the repeat not written again (--unique state is kept). Longer
    // than what follows the truncation below, so that it is seen whenever
    // the reader looks.
    let mut new = lines(&["1", "4"]);
    for _ in 0..20 {
        new += &lines(&["pad"]);
    }
    append(&log, &new);
    run.wait_line(&url("pad"));

    // Truncated in place (`copytruncate`): read again from the start.
    std::fs::File::create(&log).unwrap();
    append(&log, &lines(&["2", "5"]));
    run.wait_line(&url("5"));

    // A line written in two parts is written once, whole, when its line
    // end comes. The pause gives a reader that hands out partial lines the
    // time to do so (the assertion is on the output, not on the time).
    append(&log, "http://a.exa");
    std::thread::sleep(Duration::from_millis(600));
    append(&log, "mple/6\n");
    run.wait_line(&url("6"));

    run.signal("TERM");
    let status = run.exit();
    assert_eq!(status.code(), Some(0), "{status:?}\n{}", run.err());
    let want = lines(&["1", "2", "3", "4", "pad", "5", "6"]);
    assert_eq!(run.out(), want);
    let err = run.err();
    assert!(err.contains("canonurl statistics"), "{err}");
    // 1 + 2 + 1 + 22 + 2 + 1 lines, 7 distinct.
    assert_eq!(stat(&err, "lines"), Some(29), "{err}");
    assert_eq!(stat(&err, "distinct"), Some(7), "{err}");
    assert_eq!(stat(&err, "rejected"), Some(0), "{err}");
}

#[test]
fn count_after_sigint_counts_every_line_written_across_a_rotation() {
    let dir = dir("count");
    let log = dir.join("access.log");
    // A first line that is rejected: its diagnostic shows the run is going
    // (so the handler is in place) while --count writes nothing yet.
    append(&log, "not-a-url\n");
    let log_arg = log.to_str().unwrap();
    let mut run = Run::start(&["--follow", "--count", "-f", "plain", log_arg]);
    run.wait_for("the diagnostic of line 1", |_, err| {
        err.contains("access.log:1: relative reference")
    });
    append(&log, &lines(&["a", "b", "a", "a"]));
    let old = dir.join("access.log.1");
    std::fs::rename(&log, &old).unwrap();
    // Written to the old file after the rename, before the new file
    // exists: counted too (the old file is read to its end first).
    append(&old, &lines(&["d"]));
    append(&log, &lines(&["c", "a", "c"]));
    // Everything was written before the signal: all of it is counted, the
    // new file too, whether or not the reader had seen the rotation yet.
    run.signal("INT");
    let status = run.exit();
    assert_eq!(status.code(), Some(0), "{status:?}\n{}", run.err());
    let want = format!(
        "{}\t4\n{}\t2\n{}\t1\n{}\t1\n",
        url("a"),
        url("c"),
        url("b"),
        url("d")
    );
    assert_eq!(run.out(), want);
}

/// `canonurl --follow -f plain` on `access.log` of a new directory for
/// `test`, which holds `first` lines; returns once the last one's URL was
/// written.
fn follow_plain(test: &str, first: &[&str]) -> (PathBuf, PathBuf, Run) {
    let dir = dir(test);
    let log = dir.join("access.log");
    append(&log, &lines(first));
    let run = Run::start(&["--follow", "-f", "plain", log.to_str().unwrap()]);
    run.wait_line(&url(first.last().expect("a first line")));
    (dir, log, run)
}

#[test]
fn line_numbers_count_on_across_rotations() {
    let (dir, log, mut run) = follow_plain("line-numbers", &["1", "2"]);
    // Rename and create: the bad line is the new file's first, the run's third.
    std::fs::rename(&log, dir.join("access.log.1")).unwrap();
    append(&log, "http://[::1/x\n");
    run.wait_for("line 3's diagnostic", |_, err| {
        err.contains("access.log:3: IPv6 address without closing ']'")
    });
    // Truncation: the next bad line is the run's fourth.
    std::fs::File::create(&log).unwrap();
    append(&log, "x\n");
    run.wait_for("line 4's diagnostic", |_, err| {
        err.contains("access.log:4: relative reference")
    });
    run.signal("TERM");
    let status = run.exit();
    assert_eq!(status.code(), Some(0), "{status:?}\n{}", run.err());
    assert_eq!(run.out(), lines(&["1", "2"]));
}

#[test]
fn a_partial_last_line_is_not_joined_to_the_next_file() {
    let (dir, log, mut run) = follow_plain("partial-rotation", &["1"]);
    // The old file ends without a line end; the new file's first line must
    // not be glued to it.
    append(&log, &url("p"));
    std::fs::rename(&log, dir.join("access.log.1")).unwrap();
    append(&log, &lines(&["q"]));
    run.wait_line(&url("q"));
    run.signal("TERM");
    assert_eq!(run.exit().code(), Some(0));
    assert_eq!(run.out(), lines(&["1", "p", "q"]));
}

#[test]
fn a_partial_last_line_is_written_when_the_run_ends() {
    let (_dir, log, mut run) = follow_plain("partial-end", &["1"]);
    append(&log, &url("2"));
    run.signal("TERM");
    assert_eq!(run.exit().code(), Some(0));
    assert_eq!(run.out(), lines(&["1", "2"]));
}

#[test]
fn a_second_signal_exits_at_once() {
    // More output than a pipe holds, and nobody reading it: the drain after
    // the first signal cannot finish, the second one ends the process.
    let dir = dir("second-signal");
    let log = dir.join("access.log");
    let mut data = String::new();
    for i in 0..40_000 {
        data += &format!("http://a.example/{i}\n");
    }
    std::fs::write(&log, data).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["--follow", "-f", "plain", log.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("canonurl runs");
    // Its first output shows it runs (the handler is in place); then the
    // pipe is left full.
    let stdout = first_byte(&mut child);
    // Signals of one kind that arrive together count once: repeat until
    // one is taken as the second.
    let deadline = Instant::now() + WAIT;
    let status = loop {
        signal(child.id(), "TERM");
        std::thread::sleep(Duration::from_millis(100));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("canonurl did not exit on a second SIGTERM");
        }
    };
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    drop(stdout);
}

#[test]
fn a_closed_output_ends_the_run() {
    // `canonurl --follow FILE | head -1`: once the reader of the output is
    // gone, the next write fails and the run ends (status 0, as for any
    // closed stdout) instead of following the file for ever.
    let dir = dir("closed-output");
    let log = dir.join("access.log");
    append(&log, &lines(&["1"]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["--follow", "-f", "plain", log.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("canonurl runs");
    drop(first_byte(&mut child));
    // Enough that the workers are still at it when the reader, having
    // handed the lines out, goes back to waiting for the file to grow: the
    // failed write must end that wait, not merely find the reader between
    // two pieces.
    let more: Vec<String> = (2..5000).map(|i| i.to_string()).collect();
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    append(&log, &lines(&more));
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn without_follow_the_signals_kill_as_before() {
    for (name, number) in [("TERM", 15), ("INT", 2)] {
        let (mut child, input) = plain_run_with_output();
        signal(child.id(), name);
        if inherited_ignored(number) {
            // A shell starts a background job (`cmd &`) with SIGINT ignored,
            // and the child inherits that: then "as before" is that the
            // signal does nothing (canonurl installs no handler that would
            // un-ignore it). SIGTERM then ends the run.
            eprintln!("SIG{name} is ignored by the test process (a background job?): checking it stays ignored");
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                child.try_wait().unwrap().is_none(),
                "an ignored SIG{name} ended the run"
            );
            signal(child.id(), "TERM");
            let status = wait_exit(&mut child);
            assert_eq!(status.signal(), Some(15), "{status:?}");
        } else {
            let status = wait_exit(&mut child);
            assert_eq!(status.signal(), Some(number), "SIG{name}: {status:?}");
        }
        drop(input);
    }
}

/// `canonurl -f plain` on a pipe, once its first output arrived (so it is
/// running, past its start-up); its stdin and stdout are kept open.
fn plain_run_with_output() -> (Child, (std::process::ChildStdin, ChildStdout)) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["-f", "plain"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("canonurl runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(lines(&["1"]).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stdout = first_byte(&mut child);
    (child, (stdin, stdout))
}

/// Whether this process ignores `signal` (inherited by its children):
/// `SigIgn` in /proc/self/status, a mask with bit `signal - 1`.
fn inherited_ignored(signal: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Runs to its end (bounded), for the usage errors.
fn usage_error(args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("canonurl runs");
    let out = collect(child.stdout.take().unwrap());
    let err = collect(child.stderr.take().unwrap());
    let status = wait_exit(&mut child);
    // Let the readers see the end of the pipes.
    let deadline = Instant::now() + WAIT;
    while Arc::strong_count(&err) > 1 || Arc::strong_count(&out) > 1 {
        assert!(Instant::now() < deadline, "output not closed");
        std::thread::sleep(Duration::from_millis(10));
    }
    let err = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    assert_eq!(status.code(), Some(2), "{args:?}: {status:?} {err}");
    assert!(out.lock().unwrap().is_empty(), "{args:?}");
    err
}

#[test]
fn usage_errors() {
    let dir = dir("usage");
    let log = dir.join("access.log");
    append(&log, &lines(&["1"]));
    let gz = dir.join("access.log.1.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).unwrap();
    let zst = dir.join("access.log.2.zst");
    std::fs::write(&zst, [0x28, 0xb5, 0x2f, 0xfd, 0, 0]).unwrap();
    let (log, gz, zst) = (
        log.to_str().unwrap(),
        gz.to_str().unwrap(),
        zst.to_str().unwrap(),
    );
    let missing = dir.join("missing.log");
    let cases: [(&[&str], &str); 7] = [
        (&["--follow"], "stdin is read as it arrives without it"),
        (&["--follow", "-"], "stdin is read as it arrives without it"),
        (&["--follow", log, log], "exactly one FILE, not 2 inputs"),
        (&["--follow", gz], "gzip-compressed"),
        (&["--follow", zst], "zstd-compressed"),
        (&["--follow", dir.to_str().unwrap()], "not a regular file"),
        (&["--follow", missing.to_str().unwrap()], "missing.log: "),
    ];
    for (args, message) in cases {
        let err = usage_error(args);
        assert!(err.starts_with("canonurl: --follow"), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}
