//! Tests of the access-log generator, `examples/gen_access_log.rs`: its
//! output is deterministic, shaped like a `combined` log, stops at the size
//! rule, and still reproduces the committed `data/sample-access.log`.
//!
//! The generator is an example, not a library, so it is run as the README
//! runs it: `cargo run --release --example gen_access_log`. The first run
//! builds it; parallel tests wait on cargo's lock, then reuse the build.

use std::path::Path;
use std::process::{Command, Output};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Runs the generator with `args`.
fn run_generator(args: &[&str]) -> Output {
    Command::new(env!("CARGO"))
        .current_dir(MANIFEST_DIR)
        .args([
            "run",
            "--quiet",
            "--release",
            "--example",
            "gen_access_log",
            "--",
        ])
        .args(args)
        .output()
        .expect("run cargo")
}

/// Runs the generator with `args` and returns its stdout.
fn generate(args: &[&str]) -> Vec<u8> {
    let out = run_generator(args);
    assert!(
        out.status.success(),
        "gen_access_log {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Lines of `log`, without their `\n`; `log` must end with one.
fn lines(log: &[u8]) -> Vec<&[u8]> {
    assert_eq!(log.last(), Some(&b'\n'), "the log ends with a full line");
    log[..log.len() - 1].split(|&b| b == b'\n').collect()
}

/// Splits `s` after the quoted field it starts in: `s` is just past the
/// opening `"`; returns (field, rest after the closing `"`). A backslash
/// escapes the next byte, as in Apache's and nginx's logs.
fn quoted(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some((&s[..i], &s[i + 1..])),
            _ => i += 1,
        }
    }
    None
}

/// Checks that `line` is a `combined` log line:
/// `IP - user [dd/Mon/yyyy:HH:MM:SS +0000] "request" status bytes "referer" "agent"`,
/// or says which part is wrong.
fn check_combined(line: &[u8]) -> Result<(), &'static str> {
    let (ip, rest) = split_once(line, b' ').ok_or("no space")?;
    let is_ip = !ip.is_empty()
        && ip
            .iter()
            .all(|&b| b.is_ascii_hexdigit() || b == b'.' || b == b':')
        && (ip.contains(&b'.') || ip.contains(&b':'));
    if !is_ip {
        return Err("no IP address first");
    }
    let rest = rest.strip_prefix(b"- ").ok_or("no `-` identity")?;
    let (user, rest) = split_once(rest, b' ').ok_or("no user")?;
    if user.is_empty() {
        return Err("empty user");
    }
    // [10/Mar/2024:00:00:07 +0000]
    let stamp_ok = rest.len() > 29
        && rest[0] == b'['
        && rest[3] == b'/'
        && rest[7] == b'/'
        && rest[12] == b':'
        && &rest[21..29] == b" +0000] ";
    if !stamp_ok {
        return Err("no [time]");
    }
    let rest = rest[29..].strip_prefix(b"\"").ok_or("no quoted request")?;
    let (request, rest) = quoted(rest).ok_or("unterminated request")?;
    let mut words = request.split(|&b| b == b' ');
    let request_ok = request == b"-"
        || request.starts_with(b"\\x16\\x03")
        || words.clone().count() == 3 && words.next_back().is_some_and(|v| v.starts_with(b"HTTP/"));
    if !request_ok {
        return Err("request is not `-`, TLS bytes or METHOD TARGET VERSION");
    }
    let rest = rest
        .strip_prefix(b" ")
        .ok_or("no space after the request")?;
    let (status, rest) = split_once(rest, b' ').ok_or("no status")?;
    if status.len() != 3 || !status.iter().all(u8::is_ascii_digit) {
        return Err("bad status");
    }
    let (bytes, rest) = split_once(rest, b' ').ok_or("no byte count")?;
    if bytes != b"-" && (bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit)) {
        return Err("bad byte count");
    }
    let rest = rest.strip_prefix(b"\"").ok_or("no quoted referer")?;
    let (_referer, rest) = quoted(rest).ok_or("unterminated referer")?;
    let rest = rest.strip_prefix(b" \"").ok_or("no quoted user agent")?;
    let (_agent, rest) = quoted(rest).ok_or("unterminated user agent")?;
    if !rest.is_empty() {
        return Err("bytes after the user agent");
    }
    Ok(())
}

fn split_once(s: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let i = s.iter().position(|&b| b == sep)?;
    Some((&s[..i], &s[i + 1..]))
}

/// The shape check itself: it accepts a whole line and none of its prefixes
/// (a cut line is what it must catch).
#[test]
fn shape_check_rejects_cut_lines() {
    let line: &[u8] = br#"203.0.113.9 - - [10/Mar/2024:00:00:07 +0000] "GET /a?q=\"x\" HTTP/1.1" 200 5120 "-" "curl/8.5.0""#;
    assert_eq!(check_combined(line), Ok(()));
    for len in 0..line.len() {
        let cut = &line[..len];
        assert!(
            check_combined(cut).is_err(),
            "{}",
            String::from_utf8_lossy(cut)
        );
    }
    let tls =
        br#"198.51.100.7 - - [10/Mar/2024:00:00:07 +0000] "\x16\x03\x01\x02\"" 400 226 "-" "-""#;
    assert_eq!(check_combined(tls), Ok(()));
}

#[test]
fn deterministic() {
    let args = ["--size", "200KiB", "--seed", "7"];
    let first = generate(&args);
    assert_eq!(first, generate(&args), "same arguments, same bytes");
    let other = generate(&["--size", "200KiB", "--seed", "8"]);
    assert_ne!(first, other, "another seed, another log");
}

#[test]
fn lines_are_combined_log_lines() {
    let log = generate(&["--size", "200KiB", "--seed", "7"]);
    let lines = lines(&log);
    assert!(lines.len() >= 900, "only {} lines", lines.len());
    // Broken lines (cut, random bytes, empty) are about 0.1%; they are told
    // apart by not ending in the user agent's closing quote. A random line
    // that happens to end in `"` would fail the shape check below, loudly.
    let mut broken = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.last() != Some(&b'"') {
            broken += 1;
            continue;
        }
        if let Err(why) = check_combined(line) {
            panic!("line {}: {why}: {}", i + 1, String::from_utf8_lossy(line));
        }
    }
    assert!(broken * 100 <= lines.len(), "{broken} broken lines");
}

#[test]
fn stops_at_the_first_full_line_at_or_after_the_size() {
    for (arg, size) in [
        ("200KiB", 200 << 10),
        ("1000", 1000),
        ("1K", 1024),
        ("1", 1),
    ] {
        let log = generate(&["--size", arg, "--seed", "7"]);
        let last_line = lines(&log).last().unwrap().len() + 1;
        assert!(log.len() >= size, "--size {arg}: {} bytes", log.len());
        assert!(
            log.len() - last_line < size,
            "--size {arg}: {} bytes, the last line was not needed",
            log.len()
        );
    }
    assert!(generate(&["--size", "0"]).is_empty());
    // A smaller size gives a prefix of a larger one, with the same seed.
    let small = generate(&["--size", "10K", "--seed", "7"]);
    let large = generate(&["--size", "20KiB", "--seed", "7"]);
    assert!(large.starts_with(&small));
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        &["--size", "1GB"][..],
        &["--size", "x"],
        &["--seed", "1"],
        &["--bogus"],
    ] {
        let out = run_generator(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The command in `data/README.md` that makes `data/sample-access.log`.
fn sample_command() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("data/README.md"))
        .expect("read data/README.md");
    let line = readme
        .lines()
        .find(|l| l.contains("--example gen_access_log") && l.contains("sample-access.log"))
        .expect("data/README.md shows the command that makes sample-access.log");
    let (_, args) = line
        .split_once(" -- ")
        .expect("generator arguments after ` -- `");
    args.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn committed_sample_matches_the_recorded_command() {
    let mut args = sample_command();
    // Write to stdout instead of over the committed file.
    let out = args
        .iter()
        .position(|a| a == "--out")
        .expect("--out in the command");
    assert_eq!(args[out + 1], "data/sample-access.log");
    args.drain(out..out + 2);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let generated = generate(&args);
    let committed = std::fs::read(Path::new(MANIFEST_DIR).join("data/sample-access.log"))
        .expect("read data/sample-access.log");
    assert!(
        generated == committed,
        "data/sample-access.log differs from `gen_access_log {}`: regenerate it with the \
         command in data/README.md",
        args.join(" ")
    );
}
