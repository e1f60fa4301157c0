//! Tests of the `canonurl` binary: the one-line-per-input-line contract, line
//! ends, bytes that are not UTF-8, `--base`, and exit codes.
//!
//! Expected URLs follow the WHATWG URL Standard (basic URL parser +
//! serializer); the `rfc3986` profile adds RFC 3986 §6.2.2 escape
//! normalization (hex upper-cased, escaped unreserved characters decoded).

use crate::common;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::run_canonurl as canonurl;

/// A scratch file for this test, written with `contents`.
fn scratch_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    std::fs::write(&path, contents).expect("write scratch file");
    path
}

/// The output lines, each of which must end in `\n`.
fn lines(stdout: &[u8]) -> Vec<String> {
    if stdout.is_empty() {
        return Vec::new();
    }
    assert_eq!(
        stdout.last(),
        Some(&b'\n'),
        "output must end with a newline"
    );
    stdout[..stdout.len() - 1]
        .split(|&b| b == b'\n')
        .map(|l| String::from_utf8(l.to_vec()).expect("canonical URLs are ASCII"))
        .collect()
}

fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A mix of valid and invalid lines, with CRLF, a lone `\r`, an empty line,
/// bytes that are not UTF-8, and a last line without `\n`.
const MIXED: &[u8] = b"HTTP://EXAMPLE.com/a/../b\n\
http://exa<mple.com/\n\
https://Example.org:443/x?q=a b#Frag\r\n\
\n\
/a/./b/../c?x=%7e\n\
http://example.com/caf\xE9\xFF\n\
http://\xFF.example/\n\
http://a.com/x\ry\n\
foo/bar\n\
http://a:99999/\n\
http://h.com/%7euser/%2f?%41=%3d\n\
HTTP://A.COM:80";

/// Rejected lines of `MIXED`: (line number, start of the reason). The empty
/// line 4 is skipped (`empty-line`), not rejected.
const MIXED_REJECTS: &[(usize, &str)] = &[
    (2, "forbidden domain code point '<' at byte "),
    (7, "host is not valid UTF-8 at byte "),
    (9, "relative reference without a base URL at byte "),
    (10, "port out of range at byte "),
];

const MIXED_WHATWG: &[&str] = &[
    "http://example.com/b",
    "",
    "https://example.org/x?q=a%20b#Frag",
    "",
    "/a/c?x=%7e",
    "http://example.com/caf%E9%FF",
    "",
    "http://a.com/xy",
    "",
    "",
    "http://h.com/%7euser/%2f?%41=%3d",
    "http://a.com/",
];

const MIXED_RFC3986: &[&str] = &[
    "http://example.com/b",
    "",
    "https://example.org/x?q=a%20b#Frag",
    "",
    "/a/c?x=~",
    "http://example.com/caf%E9%FF",
    "",
    "http://a.com/xy",
    "",
    "",
    "http://h.com/~user/%2F?A=%3D",
    "http://a.com/",
];

fn check_rejects(output: &Output, name: &str) {
    let diags = stderr_lines(output);
    assert_eq!(diags.len(), MIXED_REJECTS.len(), "stderr: {diags:#?}");
    for (diag, (line, reason)) in diags.iter().zip(MIXED_REJECTS) {
        let prefix = format!("canonurl: {name}:{line}: {reason}");
        assert!(
            diag.starts_with(&prefix),
            "{diag:?} should start with {prefix:?}"
        );
    }
}

#[test]
fn pipe_writes_one_line_per_input_line_whatwg() {
    let output = canonurl(&["-f", "plain", "--profile", "whatwg", "--pipe"], MIXED);
    assert_exit(&output, 0);
    assert_eq!(lines(&output.stdout), MIXED_WHATWG);
    check_rejects(&output, "<stdin>");
}

#[test]
fn pipe_writes_one_line_per_input_line_rfc3986() {
    let output = canonurl(&["--profile", "rfc3986", "--pipe", "-"], MIXED);
    assert_exit(&output, 0);
    assert_eq!(lines(&output.stdout), MIXED_RFC3986);
    check_rejects(&output, "<stdin>");
}

#[test]
fn default_profile_is_rfc3986() {
    let output = canonurl(&["--pipe"], MIXED);
    assert_exit(&output, 0);
    assert_eq!(lines(&output.stdout), MIXED_RFC3986);
}

#[test]
fn without_pipe_rejected_lines_write_nothing() {
    let output = canonurl(&["--profile", "whatwg"], MIXED);
    assert_exit(&output, 0);
    let expected: Vec<&str> = MIXED_WHATWG
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines(&output.stdout), expected);
    check_rejects(&output, "<stdin>");
}

#[test]
fn stdin_dash_and_no_file_are_the_same() {
    let dash = canonurl(&["--pipe", "-"], MIXED);
    let none = canonurl(&["--pipe"], MIXED);
    assert_exit(&dash, 0);
    assert_exit(&none, 0);
    assert_eq!(dash.stdout, none.stdout);
    assert_eq!(lines(&dash.stdout).len(), MIXED_RFC3986.len());
}

#[test]
fn only_lf_and_cr_before_it_are_removed() {
    // "\r\r\n": one \r is the line end's; the other is the URL's (and the URL
    // parser trims it as trailing C0 control). " \n": the space is the URL's.
    let input = b"http://a.com/1\r\r\nhttp://a.com/2 \n\r\nhttp://a.com/3";
    let output = canonurl(&["--pipe"], input);
    assert_exit(&output, 0);
    assert_eq!(
        lines(&output.stdout),
        ["http://a.com/1", "http://a.com/2", "", "http://a.com/3"]
    );
}

#[test]
fn empty_input_writes_nothing() {
    let output = canonurl(&["--pipe"], b"");
    assert_exit(&output, 0);
    assert!(output.stdout.is_empty());
    assert!(output.stderr.is_empty());
}

#[test]
fn overlong_line_is_rejected_and_the_next_line_read() {
    let mut input = b"http://a.com/".to_vec();
    input.resize(200_000, b'a');
    input.extend_from_slice(b"\n/next\n");
    let output = canonurl(&["--pipe"], &input);
    assert_exit(&output, 0);
    let out = lines(&output.stdout);
    assert_eq!(out.len(), 2, "stdout: {out:?}");
    assert_eq!(out[0], "");
    let diags = stderr_lines(&output);
    assert!(
        diags[0].starts_with("canonurl: <stdin>:1: input too long at byte "),
        "{diags:?}"
    );
    assert_eq!(out[1], "/next");
}

#[test]
fn base_resolves_relative_references() {
    let input = b"../x?y#z\n/abs/./p\n//Other.ORG/p\n?only\n#f\nHTTPS://X.com\n";
    let output = canonurl(
        &[
            "--profile",
            "whatwg",
            "--base",
            "http://example.com/dir/page?q",
            "--pipe",
        ],
        input,
    );
    assert_exit(&output, 0);
    assert_eq!(
        lines(&output.stdout),
        [
            "http://example.com/x?y#z",
            "http://example.com/abs/p",
            "http://other.org/p",
            "http://example.com/dir/page?only",
            "http://example.com/dir/page?q#f",
            "https://x.com/",
        ]
    );
    assert!(output.stderr.is_empty());
}

#[test]
fn invalid_base_is_a_usage_error() {
    for base in ["foo", "/relative/path", "http://exa<mple.com/"] {
        let output = canonurl(&["--base", base, "--pipe"], b"/a\n");
        assert_exit(&output, 2);
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--base") && stderr.contains(base),
            "{stderr}"
        );
    }
}

#[test]
fn unknown_log_format_is_a_usage_error() {
    let output = canonurl(&["-f", "nosuch", "--pipe"], b"/a\n");
    assert_exit(&output, 2);
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("combined") && stderr.contains("plain"),
        "{stderr}"
    );
}

#[test]
fn unknown_profile_is_a_usage_error() {
    let output = canonurl(&["--profile", "lossy"], b"/a\n");
    assert_exit(&output, 2);
    assert!(output.stdout.is_empty());
}

#[test]
fn missing_file_is_fatal_and_named() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-no-such-file.txt");
    let _ = std::fs::remove_file(&missing);
    let missing = missing.to_str().unwrap();
    let output = canonurl(&["--pipe", missing], b"");
    assert_exit(&output, 2);
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(missing), "{stderr}");
}

#[test]
fn files_are_read_in_order_and_named_in_diagnostics() {
    let first = scratch_file("first.txt", b"http://a.com/1\n");
    let second = scratch_file("second.txt", b"http://a.com/2\nnot a url\nhttp://a.com/3\n");
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
    let output = canonurl(&["--pipe", first, "-", second], b"http://a.com/stdin\n");
    assert_exit(&output, 0);
    assert_eq!(
        lines(&output.stdout),
        [
            "http://a.com/1",
            "http://a.com/stdin",
            "http://a.com/2",
            "",
            "http://a.com/3"
        ]
    );
    let diags = stderr_lines(&output);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let prefix = format!("canonurl: {second}:2: relative reference without a base URL");
    assert!(diags[0].starts_with(&prefix), "{diags:?}");
}

#[test]
fn output_file_gets_the_data() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-output.txt");
    let output = canonurl(&["--pipe", "-o", out.to_str().unwrap()], MIXED);
    assert_exit(&output, 0);
    assert!(output.stdout.is_empty());
    let written = std::fs::read(&out).unwrap();
    assert_eq!(lines(&written).len(), MIXED_RFC3986.len());
}

#[test]
fn broken_pipe_exits_quietly() {
    let input = b"http://example.com/some/path\n".repeat(300_000);
    let file = scratch_file("broken-pipe.txt", &input);
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["--pipe", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        stderr.read_to_end(&mut all).unwrap();
        all
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    let stderr = drain.join().unwrap();
    assert_eq!(status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(
        !stderr.contains("<stdout>"),
        "{}",
        &stderr[..stderr.len().min(500)]
    );
}

#[test]
fn stats_survive_a_closed_stdout() {
    // `canonurl --unique --stats FILE 2>err | head -5`: the run ends
    // quietly when head has its lines, and still says what it read.
    let mut log = Vec::new();
    for i in 0..200_000 {
        log.extend_from_slice(
            format!(
                "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /p{i} HTTP/1.1\" 200 1 \"-\" \"ua\"\n"
            )
            .as_bytes(),
        );
    }
    let file = scratch_file("closed-stdout.log", &log);
    let json = file.with_extension("stats.json");
    let err = file.with_extension("err");
    let rc = file.with_extension("rc");
    for mode in ["--unique", "--pipe", "--count"] {
        let _ = std::fs::remove_file(&json);
        let out = Command::new("sh")
            .arg("-c")
            .arg("{ \"$0\" \"$1\" --stats --stats-json \"$2\" \"$3\" 2>\"$4\"; echo $? >\"$5\"; } | head -5")
            .arg(env!("CARGO_BIN_EXE_canonurl"))
            .arg(mode)
            .arg(&json)
            .arg(&file)
            .arg(&err)
            .arg(&rc)
            .env_remove("CANONURL_CONFIG_PATH")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{mode}: {:?}", out.status);
        assert_eq!(lines(&out.stdout).len(), 5, "{mode}");
        let err = std::fs::read_to_string(&err).unwrap();
        // canonurl's own exit status: 0, as for a run read to its end.
        assert_eq!(
            std::fs::read_to_string(&rc).unwrap().trim(),
            "0",
            "{mode}: {err}"
        );
        assert!(err.starts_with("canonurl statistics\n"), "{mode}: {err}");
        assert!(!err.contains("cannot write"), "{mode}: {err}");
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("--stats-json written"))
                .unwrap();
        let read = stats["lines"].as_u64().unwrap();
        assert!((5..=200_000).contains(&read), "{mode}: {stats}");
        assert_eq!(stats["inputs"][0]["lines"].as_u64(), Some(read), "{mode}");
        // Every mode writes more than a pipe holds (--count at the end):
        // the output was closed on each, and the statistics say so.
        assert_eq!(stats["output_closed"], true, "{mode}");
        assert!(err.contains("output closed early"), "{mode}: {err}");
    }
}

#[test]
fn help_exits_zero() {
    let output = canonurl(&["--help"], b"");
    assert_exit(&output, 0);
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.contains("--pipe") && help.contains("--profile"),
        "{help}"
    );
}

/// The plain pipe writes a run of lines that are their own canonical URL
/// straight from its input, a few KiB at a time (`Worker::plain_urls_as`),
/// and every other line through the canonicalizer: whatever the mix, the
/// output must still be, line for line, what the library makes of each
/// line (an empty line where it rejects one), with and without a base,
/// from a file read in byte ranges by two workers and from stdin.
#[test]
fn pipe_output_is_the_library_output_line_by_line() {
    use canonurl::{Base, Canonicalizer, Profile};
    const MAX_LINE: usize = 1024;
    let long = format!("http://e.com/{}", "a".repeat(MAX_LINE));
    let kinds: [&[u8]; 14] = [
        b"http://example.com/a/b",
        b"https://www.example.org/path/to/file.html?q=1&r=2",
        b"http://e.com/",
        b"http://E.com/upper",
        b"http://e.com/%7euser",
        b"http://e.com/%7Euser",
        b"/origin/form?x=1",
        b"/origin/%7e",
        b"/a/./b/../c",
        b"",
        b"  \t",
        b"no scheme here",
        b"http://e.com/a b",
        long.as_bytes(),
    ];
    let mut input = Vec::new();
    let mut state: u32 = 0x9e37_79b9;
    for i in 0..30_000u32 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        // Stretches of canonical URLs only, long enough to be written in
        // several runs, between stretches of every kind of line.
        let kind = if (i / 500) % 2 == 0 || !state.is_multiple_of(4) {
            (state >> 8) % 3
        } else {
            (state >> 8) % 14
        };
        input.extend_from_slice(kinds[kind as usize]);
        if i % 3 == 0 {
            input.extend_from_slice(format!("{i}").as_bytes());
        }
        input.extend_from_slice(if state.is_multiple_of(97) {
            b"\r\n"
        } else {
            b"\n"
        });
    }
    input.extend_from_slice(b"http://last.example/no-newline");
    let file = scratch_file("pipe-as-is.txt", &input);
    let file = file.to_str().expect("UTF-8 path");

    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        for base in [None, Some("http://b.example/d/")] {
            let mut canon = Canonicalizer::new(profile);
            canon.set_base(base.map(|b| Base::parse(b.as_bytes()).expect("base")));
            let mut expected = Vec::new();
            for line in input.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let blank = line.iter().all(|&b| b == b' ' || b == b'\t');
                let start = expected.len();
                if line.len() > MAX_LINE
                    || blank
                    || canon.canonicalize_target(line, &mut expected).is_err()
                {
                    expected.truncate(start);
                }
                expected.push(b'\n');
            }
            let name = profile.name();
            let max = MAX_LINE.to_string();
            let mut args = vec!["-f", "plain", "--pipe", "--profile", name];
            args.extend(["--max-line-len", &max]);
            if let Some(b) = base {
                args.extend(["--base", b]);
            }
            for (extra, stdin) in [
                (["-j", "2", file], &b""[..]),
                (["-j", "1", "-"], &input[..]),
            ] {
                let mut all = args.clone();
                all.extend(extra);
                let output = canonurl(&all, stdin);
                assert_exit(&output, 0);
                assert!(
                    output.stdout == expected,
                    "{all:?}: the output differs from the library's, first at byte {}",
                    output
                        .stdout
                        .iter()
                        .zip(&expected)
                        .position(|(a, b)| a != b)
                        .unwrap_or(output.stdout.len().min(expected.len()))
                );
            }
        }
    }
}

/// A combined log's request targets are canonicalized where they lie, their
/// end found by their own scan (`Extract::request_start`): the output must
/// be, line for line, what the library gives when the record is read first
/// (`RecordReader`, `request_url`, `canonicalize_target`), on lines made to
/// sit on every edge of that shortcut: escapes of the logger (`\\`, `\"`,
/// `\x22`) in the path, query and fragment, spaces in the target, other
/// methods (the shortcut takes upper-case ones but `CONNECT`) and versions,
/// fields cut short, a quote not followed by a space, lines wrapped in
/// quotes, escapes and dot segments at the target's end.
#[test]
fn combined_output_is_the_library_output_line_by_line() {
    use canonurl::log::{request_url, Extracted, Field, Line, LogFormat, RequestUrl};
    use canonurl::{Canonicalizer, Profile, RecordReader};
    let time = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] ";
    let targets = [
        "/",
        "/a",
        "/a b",
        r"/a\\b",
        r#"/a\"b"#,
        "/a?x=1",
        r"/a?x=\\1",
        r"/a?x=\x22",
        "/a#f",
        r"/a#f\\g",
        "/a?q#f",
        "/%2e/x",
        "/.x",
        "/a/%2E",
        "/a%4",
        "/a%",
        "/a%41",
        "/a%zz",
        "/a%3a",
        "/a?%3a",
        "/a#%3a",
        r#"/a?x="y"#,
        "/a//b",
        "/A/B",
        "/\u{e9}",
        "/a?b c",
        "/x?a[b]=1",
        "/a?x#y#z",
        "/a?x=%7e",
        "/a?x=%7E",
        "/a.b/c.d",
    ];
    let versions = [
        " HTTP/1.1",
        " HTTP/1.0",
        " HTTP/2.0",
        " HTTP/2",
        " HTTP/1.1 ",
        " HTTP/x.y",
        "",
        "  HTTP/1.1",
        " HTTP/11.1",
    ];
    let tails = [
        "\" 200 5 \"-\" \"ua\"",
        "\"",
        "\" ",
        "\"\t200",
        "\"x 200",
        "\"\" 200",
        "",
    ];
    let mut lines = Vec::new();
    for target in targets {
        for version in versions {
            for tail in tails {
                for method in [
                    "GET ",
                    "POST ",
                    "GET  ",
                    "HEAD ",
                    "get ",
                    "CONNECT ",
                    "M-SEARCH ",
                ] {
                    lines.push(format!("{time}\"{method}{target}{version}{tail}"));
                }
            }
        }
    }
    lines.push(format!(
        "\"{time}\"GET /wrapped HTTP/1.1\" 200 5 \"-\" \"ua\"\""
    ));
    lines.push(format!(
        "{time}\"GET /{} HTTP/1.1\" 200 5",
        "a".repeat(70_000)
    ));
    lines.push("1.2.3.4 - - [10/Oct/2000:13:55:36 -07000] \"GET /t HTTP/1.1\" 200 1".into());
    lines.push("   ".into());
    let input = lines.join("\n") + "\n";
    let file = scratch_file("combined-in-line.log", input.as_bytes());
    let file = file.to_str().expect("UTF-8 path");

    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let mut canon = Canonicalizer::new(profile);
        let mut reader = RecordReader::new(LogFormat::Combined, None);
        let mut record = Extracted::default();
        let mut url = Vec::new();
        let mut expected = Vec::new();
        let mut in_line = 0;
        for line in &lines {
            let start = expected.len();
            if let Line::Record = reader.read(line.as_bytes(), Field::Request, &mut record) {
                if request_url(&record, line.as_bytes(), None, &mut url) == RequestUrl::PathOnly {
                    let target = record.target(line.as_bytes());
                    if canon.canonicalize_target(target, &mut expected).is_err() {
                        expected.truncate(start);
                    } else if ["GET", "POST", "HEAD"]
                        .iter()
                        .any(|m| line.contains(&format!("\"{m} {} HTTP/", target.escape_ascii())))
                    {
                        in_line += 1;
                    }
                }
            }
            expected.push(b'\n');
        }
        // The lines the shortcut may take are there, and so are the others.
        assert!(
            in_line > 100 && in_line < lines.len() / 2,
            "{in_line} of {}",
            lines.len()
        );
        for threads in ["1", "2"] {
            let args = [
                "-f",
                "combined",
                "--pipe",
                "--profile",
                profile.name(),
                "-j",
                threads,
                file,
            ];
            let output = canonurl(&args, b"");
            assert_exit(&output, 0);
            let got = String::from_utf8_lossy(&output.stdout);
            let want = String::from_utf8_lossy(&expected);
            for (n, (g, w)) in got.lines().zip(want.lines()).enumerate() {
                assert_eq!(g, w, "{args:?}: line {}: {:?}", n + 1, lines[n]);
            }
            assert_eq!(output.stdout, expected, "{args:?}");
        }
    }
}
