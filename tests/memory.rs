//! Bounded memory: the resident set of `canonurl` stays within 64 MiB
//! whatever the input size (apart from `--unique`/`--count`'s table).
//!
//! The input is streamed through stdin, so the test controls when it ends:
//! after the last byte is written and before stdin is closed, the process is
//! still alive and its peak resident set (`VmHWM` in `/proc/PID/status`)
//! covers the whole run.
//!
//! A test binary of its own (Cargo.toml), not a module of a suite: the
//! large-file test reads `getrusage(RUSAGE_CHILDREN)`, the largest peak of
//! every child this process has waited for, which other tests' children
//! (`--count` tables, Python builds) would raise.

#![cfg(target_os = "linux")]

use std::io::Write;
use std::process::{Command, Stdio};

/// The budget from the issue: 64 MiB resident.
const BUDGET_KIB: u64 = 64 * 1024;

/// Peak resident set of a running process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// About `lines` combined records with many distinct paths and long lines
/// now and then, produced in blocks so the test itself stays small.
fn write_log(stdin: &mut impl Write, lines: usize) -> std::io::Result<u64> {
    let mut block = Vec::with_capacity(1 << 20);
    let mut written = 0u64;
    let mut n = 0usize;
    while n < lines {
        block.clear();
        while block.len() < (1 << 20) - 4096 && n < lines {
            let ua_pad = if n.is_multiple_of(1000) { 3000 } else { 10 };
            writeln!(
                block,
                "10.0.{}.{} - - [10/Oct/2000:13:55:36 -0700] \"GET /shop/{}/item-{}.html?ref=%7e{} HTTP/1.1\" 200 {} \"https://r.example/{}\" \"Mozilla/5.0 {}\"",
                n % 250,
                n % 200,
                n % 977,
                n,
                n % 13,
                n % 9000,
                n % 31,
                "x".repeat(ua_pad)
            )?;
            n += 1;
        }
        stdin.write_all(&block)?;
        written += block.len() as u64;
    }
    Ok(written)
}

fn peak_rss_for(args: &[&str], lines: usize) -> (u64, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("canonurl runs");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let bytes = write_log(&mut stdin, lines).expect("canonurl reads its stdin");
    // Still running (stdin is open): the peak so far is the peak of the run,
    // bar the last pieces in flight, which the pool bounds like any other.
    let peak = vm_hwm_kib(pid).expect("VmHWM is readable");
    drop(stdin);
    let status = child.wait().expect("canonurl exits");
    assert!(status.success(), "exit status {status}");
    (peak, bytes)
}

#[test]
fn resident_memory_stays_under_64_mib_on_a_large_stream() {
    // About 200 MB: far more than the pool of buffers, so a leak or an
    // unbounded queue would show.
    for args in [
        &["-j", "2"][..],
        &["-j", "4", "--pipe", "--format", "tsv"][..],
    ] {
        let (peak, bytes) = peak_rss_for(args, 1_300_000);
        eprintln!(
            "canonurl {args:?}: {} MB through stdin, peak RSS {} KiB",
            bytes / 1_000_000,
            peak
        );
        assert!(bytes > 150_000_000, "the stream should be large: {bytes}");
        assert!(
            peak <= BUDGET_KIB,
            "peak RSS {peak} KiB is over the {BUDGET_KIB} KiB budget ({args:?})"
        );
    }
}

/// The same bound for a regular file, which workers read by byte ranges
/// (`pread`) rather than through the reader thread's pieces. The process has
/// exited when its peak is read: `getrusage(RUSAGE_CHILDREN)` gives the
/// largest peak resident set of the children this test process has waited
/// for, so it is over the budget if this run was.
#[test]
fn resident_memory_stays_under_64_mib_on_a_large_regular_file() {
    use nix::sys::resource::{getrusage, UsageWho};
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("memory-large-file.log");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let bytes = write_log(&mut file, 1_300_000).unwrap();
    file.into_inner().unwrap().sync_all().unwrap();
    assert!(bytes > 150_000_000, "the file should be large: {bytes}");
    for args in [
        &["-j", "2"][..],
        &["-j", "1", "--pipe", "--format", "tsv"][..],
    ] {
        let status = Command::new(env!("CARGO_BIN_EXE_canonurl"))
            .args(args)
            .arg(&path)
            .args(["-o", "/dev/null"])
            .stderr(Stdio::null())
            .status()
            .expect("canonurl runs");
        assert!(status.success(), "exit status {status} ({args:?})");
        // Linux reports ru_maxrss in KiB.
        let peak = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss() as u64;
        eprintln!(
            "canonurl {args:?} FILE: {} MB, largest child peak RSS so far {peak} KiB",
            bytes / 1_000_000
        );
        assert!(
            peak <= BUDGET_KIB,
            "peak RSS {peak} KiB is over the {BUDGET_KIB} KiB budget ({args:?} on a file)"
        );
    }
    std::fs::remove_file(&path).unwrap();
}
