//! Inputs as ripgrep users expect them: directories read recursively in
//! byte order of their paths, hidden and binary files and files of no log
//! format skipped and listed,
//! `--glob`, xz and bzip2 read like gzip, and compressions that are not
//! read named in the error.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// A fresh empty scratch directory.
fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-inputs-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn put(path: &Path, contents: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn rec(target: &str) -> Vec<u8> {
    format!(
        "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET {target} HTTP/1.1\" 200 1 \"-\" \"ua\"\n"
    )
    .into_bytes()
}

fn canonurl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .arg("--no-config")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs with `--stats --stats-json` and returns the parsed JSON too.
fn stats(dir: &Path, args: &[&str]) -> (Output, Value) {
    let json = dir.with_extension("stats.json");
    let mut all = vec!["--stats", "--stats-json", s(&json)];
    all.extend_from_slice(args);
    let o = canonurl(&all);
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no --stats-json ({e}): {}", err(&o)));
    (o, serde_json::from_str(&text).unwrap())
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut w =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6)).unwrap();
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

fn bzip2(data: &[u8]) -> Vec<u8> {
    let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

// ---------------------------------------------------------------------------
// Directories

#[test]
fn a_directory_is_read_recursively_in_byte_order_of_paths() {
    let d = scratch("order");
    // Byte order of whole paths: `b-c` (0x2d) before `b/` (0x2f), `B`
    // before `a`; a walk sorting names per directory would put `b/x` first.
    put(&d.join("b-c.log"), &rec("/b-c"));
    put(&d.join("b/x.log"), &rec("/b/x"));
    put(&d.join("a.log"), &rec("/a"));
    put(&d.join("B.log"), &rec("/B"));
    put(&d.join("b/a/deep.log"), &rec("/b/a/deep"));
    put(&d.join("z.log.gz"), &gzip(&rec("/z")));
    let (o, v) = stats(&d, &[s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "/B\n/a\n/b-c\n/b/a/deep\n/b/x\n/z\n");
    let names: Vec<&str> = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    let want: Vec<String> = [
        "B.log",
        "a.log",
        "b-c.log",
        "b/a/deep.log",
        "b/x.log",
        "z.log.gz",
    ]
    .iter()
    .map(|n| d.join(n).display().to_string())
    .collect();
    assert_eq!(names, want);
    assert_eq!(v["inputs_skipped"], serde_json::json!([]));
}

#[test]
fn hidden_and_binary_files_are_skipped_and_listed() {
    let d = scratch("skips");
    put(&d.join("ok.log"), &rec("/ok"));
    put(&d.join(".hidden.log"), &rec("/hidden"));
    put(&d.join(".git/HEAD.log"), &rec("/in-hidden-dir"));
    put(&d.join("sub/.also.log"), &rec("/also"));
    put(&d.join("image.bin"), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    // Binary after decompression; a compressed log is not binary.
    put(&d.join("nul.log.gz"), &gzip(b"GET /x\x00 HTTP/1.1\n"));
    put(&d.join("z.log.xz"), &xz(&rec("/xz")));
    let (o, v) = stats(&d, &[s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "/ok\n/xz\n");
    let skipped: Vec<(String, String)> = v["inputs_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                i["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let j = |n: &str| d.join(n).display().to_string();
    assert_eq!(
        skipped,
        [
            (j(".git"), "hidden".to_string()),
            (j(".hidden.log"), "hidden".to_string()),
            (j("image.bin"), "binary".to_string()),
            (j("nul.log.gz"), "binary".to_string()),
            (j("sub/.also.log"), "hidden".to_string()),
        ]
    );
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
    let e = err(&o);
    for (name, reason) in &skipped {
        assert!(
            e.contains(&format!("input {name}: skipped ({reason})")),
            "{e}"
        );
    }
    // Named on the command line, hidden and binary files are read.
    let hidden = d.join(".hidden.log");
    let (o, v) = stats(
        &d.join("named"),
        &["-f", "plain", s(&hidden), s(&d.join("image.bin"))],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["inputs_skipped"], serde_json::json!([]));
    assert!(v["inputs"][1]["lines"].as_u64().unwrap() > 0, "{v}");
}

#[cfg(unix)]
#[test]
fn symlinked_files_are_read_and_symlinked_directories_are_not_followed() {
    let d = scratch("links");
    let other = scratch("links-target");
    put(&other.join("t.log"), &rec("/target"));
    put(&d.join("real.log"), &rec("/real"));
    std::os::unix::fs::symlink(other.join("t.log"), d.join("file-link.log")).unwrap();
    // A loop: followed, it would never end.
    std::os::unix::fs::symlink(&d, d.join("loop")).unwrap();
    std::os::unix::fs::symlink(&other, d.join("dir-link")).unwrap();
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("broken")).unwrap();
    let (o, v) = stats(&d, &[s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "/target\n/real\n");
    let reasons: Vec<&str> = v["inputs_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "broken-symlink",
            "symlinked-directory",
            "symlinked-directory"
        ]
    );
}

#[test]
fn an_empty_or_all_skipped_directory_says_so() {
    let d = scratch("empty");
    let o = canonurl(&[s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).is_empty());
    assert!(
        err(&o).contains(&format!(
            "{}: no file to read: the directory is empty",
            s(&d)
        )),
        "{}",
        err(&o)
    );
    // Not stdin: nothing is waiting there, and it is not read.
    let o = canonurl(&["--fail-if-empty", s(&d)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));

    put(&d.join(".hidden.log"), &rec("/h"));
    put(&d.join("core"), b"\x7fELF\x02\x01\x01\x00\x00");
    put(&d.join("notes.txt"), &rec("/n"));
    let o = canonurl(&["-g", "*.log", s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("no file read from this directory: skipped 2 left out by --glob, 1 hidden"),
        "{e}"
    );
    let o = canonurl(&["--fail-if-empty", "-g", "!*.txt", s(&d)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("1 binary"), "{}", err(&o));
    // Another input wrote URLs: the directory's notice stays, exit 0.
    let other = scratch("empty-other").join("x.log");
    put(&other, &rec("/x"));
    let o = canonurl(&["--fail-if-empty", "-g", "!*.txt", s(&d), s(&other)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "/x\n");
}

// ---------------------------------------------------------------------------
// --glob

#[test]
fn globs_include_and_exclude_files_found_in_directories() {
    let d = scratch("globs");
    put(&d.join("access.log"), &rec("/access"));
    put(&d.join("access.log.1"), &rec("/access-1"));
    put(&d.join("access.log.2.gz"), &gzip(&rec("/access-2")));
    put(&d.join("error.log"), &rec("/error"));
    put(&d.join("old/access.log"), &rec("/old"));
    let run = |globs: &[&str]| {
        let mut args = Vec::new();
        for g in globs {
            args.extend(["--glob", g]);
        }
        args.push(s(&d));
        let o = canonurl(&args);
        assert_eq!(o.status.code(), Some(0), "{globs:?}: {}", err(&o));
        out(&o)
    };
    assert_eq!(run(&["*.gz"]), "/access-2\n");
    assert_eq!(
        run(&["access.log*"]),
        "/access\n/access-1\n/access-2\n/old\n"
    );
    assert_eq!(run(&["access.log*", "!*.gz"]), "/access\n/access-1\n/old\n");
    // The last glob that matches decides.
    assert_eq!(run(&["!*.gz", "*.gz"]), "/access-2\n");
    // An excluded directory is not entered; a path glob.
    assert_eq!(run(&["!old"]), "/access\n/access-1\n/access-2\n/error\n");
    assert_eq!(run(&["old/*.log"]), "/old\n");
    // A bad glob is a usage error naming it.
    let o = canonurl(&["--glob", "a[", s(&d)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--glob \"a[\""), "{}", err(&o));
}

#[test]
fn files_named_explicitly_are_read_whatever_the_globs() {
    let d = scratch("explicit");
    put(&d.join("dir/a.gz"), &gzip(&rec("/in-dir-gz")));
    put(&d.join("dir/b.log"), &rec("/in-dir-log"));
    put(&d.join("named.log"), &rec("/named"));
    let o = canonurl(&["-g", "*.gz", s(&d.join("named.log")), s(&d.join("dir"))]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "/named\n/in-dir-gz\n");
    let o = canonurl(&["-g", "!*.log", s(&d.join("dir/b.log"))]);
    assert_eq!(out(&o), "/in-dir-log\n");
}

// ---------------------------------------------------------------------------
// xz and bzip2

fn records(n: usize, prefix: &str) -> Vec<u8> {
    (0..n)
        .flat_map(|i| rec(&format!("/{prefix}/{i}")))
        .collect()
}

fn urls(n: usize, prefix: &str) -> String {
    (0..n).map(|i| format!("/{prefix}/{i}\n")).collect()
}

#[test]
fn xz_and_bzip2_are_read_to_the_end_of_every_stream() {
    let d = scratch("xzbz");
    let (one, two) = (records(300, "p"), records(200, "q"));
    let want = urls(300, "p") + &urls(200, "q");
    for (name, compress) in [("xz", xz as fn(&[u8]) -> Vec<u8>), ("bzip2", bzip2)] {
        let mut bytes = compress(&one);
        bytes.extend(compress(&two));
        // Named for neither: recognised by magic bytes.
        let f = d.join(format!("two-streams-{name}.log"));
        put(&f, &bytes);
        let (o, v) = stats(&d.join(name), &[s(&f)]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", err(&o));
        assert_eq!(out(&o), want, "{name}");
        assert_eq!(v["inputs"][0]["compression"], name);
        assert_eq!(v["bytes"], (one.len() + two.len()) as u64);
        assert!(
            err(&o).contains(&format!("(detected), {name}, 500 lines")),
            "{}",
            err(&o)
        );
    }
}

#[test]
fn files_made_by_the_xz_and_bzip2_commands_are_read() {
    let d = scratch("tools");
    let plain = d.join("plain.log");
    put(&plain, &records(1000, "t"));
    for (tool, name) in [("xz", "xz"), ("bzip2", "bzip2")] {
        let made = Command::new(tool).args(["-c", "-9", s(&plain)]).output();
        let Some(made) = made.ok().filter(|m| m.status.success()) else {
            eprintln!("skipping: no `{tool}` command on this machine");
            continue;
        };
        // Twice, as `cat a b` makes a two-stream file.
        let f = d.join(format!("made.{name}"));
        put(&f, &[made.stdout.clone(), made.stdout].concat());
        let (o, v) = stats(&d.join(tool), &[s(&f)]);
        assert_eq!(o.status.code(), Some(0), "{tool}: {}", err(&o));
        assert_eq!(out(&o), urls(1000, "t").repeat(2), "{tool}");
        assert_eq!(v["inputs"][0]["compression"], name);
    }
}

#[test]
fn truncated_xz_and_bzip2_are_reported() {
    let d = scratch("cut");
    let data = records(4000, "c");
    for (name, bytes) in [("xz", xz(&data)), ("bzip2", bzip2(&data))] {
        let f = d.join(format!("cut.{name}"));
        put(&f, &bytes[..bytes.len() / 2]);
        let (o, v) = stats(&d.join(name), &["--pipe", s(&f)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", err(&o));
        let e = err(&o);
        assert!(
            e.contains(&format!("canonurl: {}: input is truncated", s(&f))),
            "{name}: {e}"
        );
        assert!(v["inputs"][0]["error"]
            .as_str()
            .is_some_and(|s| s.contains("truncated")));
        // The decoder's own words for it are no help to a reader.
        assert!(!e.contains("failed to fill whole buffer"), "{name}: {e}");
        assert_eq!(v["inputs"][0]["compression"], name);
        // What came out before the cut is the start of the log.
        let got = out(&o);
        let want = urls(4000, "c");
        let whole = got.lines().count().saturating_sub(1);
        let want_lines: Vec<&str> = want.lines().take(whole).collect();
        assert_eq!(got.lines().take(whole).collect::<Vec<_>>(), want_lines);
        assert!(whole < 4000);
    }
}

// ---------------------------------------------------------------------------
// Compressions that are not read

#[test]
fn lz4_zip_and_7z_are_named_not_taken_for_a_log_format() {
    let d = scratch("unread");
    let ok = d.join("ok.log");
    put(&ok, &rec("/ok"));
    for (name, magic, command) in [
        ("lz4", &b"\x04\x22\x4d\x18\x64\x40\xa7"[..], "lz4 -dc"),
        ("zip", b"PK\x03\x04\x14\x00\x00\x00", "unzip -p"),
        ("7z", b"7z\xbc\xaf\x27\x1c\x00\x04", "7z x -so"),
    ] {
        let f = d.join(format!("input.{name}"));
        put(&f, magic);
        let (o, v) = stats(&d.join(name), &[s(&f), s(&ok)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", err(&o));
        assert_eq!(out(&o), "/ok\n", "the other input is read");
        let e = err(&o);
        let want = format!(
            "canonurl: {f}: {name}-compressed input is not read; decompress it first \
             ({command} {f} | canonurl ...)",
            f = s(&f)
        );
        assert!(e.contains(&want), "{e}");
        assert!(!e.contains("cannot detect"), "{e}");
        assert!(v["inputs"][0]["error"]
            .as_str()
            .is_some_and(|s| s.starts_with(&format!("{name}-compressed"))));
    }
    // A real lz4 file, where the command exists.
    let lz = Command::new("lz4").args(["-c", s(&ok)]).output();
    match lz.ok().filter(|m| m.status.success()) {
        Some(m) => {
            let f = d.join("real.lz4");
            put(&f, &m.stdout);
            let o = canonurl(&[s(&f)]);
            assert_eq!(o.status.code(), Some(2));
            assert!(
                err(&o).contains("lz4-compressed input is not read"),
                "{}",
                err(&o)
            );
        }
        None => eprintln!("skipping: no `lz4` command on this machine"),
    }
}

// ---------------------------------------------------------------------------
// Files that are not logs

/// An nginx error log: its lines quote the request, as an access log's do,
/// but no access log format reads them.
const NGINX_ERROR_LOG: &[u8] = b"\
2024/05/01 10:00:00 [error] 1234#1234: *5 open() \"/usr/share/nginx/html/x.png\" failed (2: No such file or directory), client: 1.2.3.4, server: _, request: \"GET /x.png HTTP/1.1\", host: \"example.com\"
2024/05/01 10:00:01 [notice] 1234#1234: signal process started
";

const APACHE_ERROR_LOG: &[u8] = b"\
[Wed May 01 10:00:00.123456 2024] [core:error] [pid 4321:tid 1234] [client 1.2.3.4:5678] AH00128: File does not exist: /var/www/html/x.png
[Wed May 01 10:00:01.000001 2024] [mpm_event:notice] [pid 4321:tid 1234] AH00489: Apache/2.4.58 configured -- resuming normal operations
";

const README: &[u8] = b"\
Logs of the web server
======================

These are rotated daily; see the wiki for where older ones are kept.
";

#[test]
fn files_found_of_no_log_format_are_skipped_with_a_warning() {
    let d = scratch("not-logs");
    put(&d.join("access.log"), &rec("/access"));
    put(&d.join("access.log.2.gz"), &gzip(&rec("/access-2")));
    put(&d.join("error.log"), NGINX_ERROR_LOG);
    put(&d.join("httpd/error_log"), APACHE_ERROR_LOG);
    put(&d.join("README"), README);
    put(&d.join("core"), b"\x7fELF\x02\x01\x01\x00\x00\x00\x00");
    let sources = common::shared_data_path().join("SOURCES.md");
    let with_sources = sources.is_file();
    if with_sources {
        std::fs::copy(&sources, d.join("SOURCES.md")).unwrap();
    } else {
        println!(
            "note: {} absent: the shared SOURCES.md not tried",
            sources.display()
        );
    }
    let (o, v) = stats(&d, &["--count", s(&d)]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert_eq!(out(&o), "/access\t1\n/access-2\t1\n");
    let mut want = vec![
        ("README", "unknown-format"),
        ("core", "binary"),
        ("error.log", "unknown-format"),
        ("httpd/error_log", "unknown-format"),
    ];
    if with_sources {
        want.push(("SOURCES.md", "unknown-format"));
    }
    want.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let j = |n: &str| d.join(n).display().to_string();
    let want: Vec<(String, String)> = want
        .into_iter()
        .map(|(n, r)| (j(n), r.to_string()))
        .collect();
    let skipped: Vec<(String, String)> = v["inputs_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                i["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(skipped, want, "{e}");
    // Only the logs are inputs read.
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2, "{v}");
    for (name, reason) in &want {
        // One warning each, naming the file and why.
        let warning = format!("canonurl: warning: {name}: skipped: ");
        assert_eq!(e.matches(&warning).count(), 1, "{warning:?} in {e}");
        let why = e[e.find(&warning).unwrap() + warning.len()..]
            .lines()
            .next()
            .unwrap();
        let expected = match reason.as_str() {
            "binary" => "not a text log",
            _ => "cannot detect the log format",
        };
        assert!(why.starts_with(expected), "{name}: {why}");
        // And --stats lists it.
        assert!(
            e.contains(&format!("input {name}: skipped ({reason})")),
            "{e}"
        );
    }
    // Named on the command line, a file of no format detected stays an
    // error.
    let o = canonurl(&[s(&d.join("access.log")), s(&d.join("error.log"))]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(out(&o), "/access\n");
    assert!(
        err(&o).contains(&format!(
            "canonurl: {}: cannot detect the log format",
            s(&d.join("error.log"))
        )),
        "{}",
        err(&o)
    );
    // All skipped: the directory says so.
    let only = scratch("not-logs-only");
    put(&only.join("error.log"), NGINX_ERROR_LOG);
    put(&only.join("core"), b"\x7fELF\x02\x01\x01\x00\x00");
    let o = canonurl(&[s(&only)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("no file read from this directory: skipped 1 binary, 1 unknown-format"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_binary_file_named_is_not_a_text_log() {
    let d = scratch("named-binary");
    let png = d.join("image.png");
    put(&png, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00");
    let o = canonurl(&[s(&png)]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("canonurl: {}: not a text log (binary", s(&png))),
        "{e}"
    );
    // Its bytes are no "first line" to show.
    assert!(!e.contains("first line"), "{e}");
    assert!(!e.contains("PNG"), "{e}");
}
