//! The `canonurl` command on synthetic access logs: compression, broken and
//! hostile input, request-target forms, log escapes, output modes and
//! formats, statistics, reject lists, and exit codes.
//!
//! Expected URLs are worked out by hand from the WHATWG URL Standard and
//! RFC 3986 §6.2.2 (the default `rfc3986` profile); fingerprints are checked
//! against an XXH64 written here and proved on published test vectors.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use common::run_canonurl as canonurl;

/// A fresh scratch path under `CARGO_TARGET_TMPDIR`.
fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-logs-{}-{n}-{name}", std::process::id()))
}

/// A scratch file holding `contents`; returns its path as a `String`.
fn file(name: &str, contents: &[u8]) -> String {
    let path = scratch(name);
    std::fs::write(&path, contents).expect("write scratch file");
    path.to_str().expect("UTF-8 tmp path").to_owned()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn err(out: &Output) -> String {
    text(&out.stderr)
}

fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "stderr: {}", err(out));
}

/// Output lines; the output must be empty or end in `\n`.
fn lines(stdout: &[u8]) -> Vec<String> {
    if stdout.is_empty() {
        return Vec::new();
    }
    assert_eq!(stdout.last(), Some(&b'\n'), "output ends with a newline");
    stdout[..stdout.len() - 1]
        .split(|&b| b == b'\n')
        .map(text)
        .collect()
}

/// Number of lines of an input as the command counts them.
fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!bytes.is_empty() && bytes.last() != Some(&b'\n'))
}

/// Runs with `--stats-json` and returns the parsed summary.
fn stats(args: &[&str], stdin: &[u8]) -> (Output, Value) {
    let json = scratch("stats.json");
    let json_s = json.to_str().unwrap().to_owned();
    let mut all = vec!["--stats-json", &json_s];
    all.extend_from_slice(args);
    let out = canonurl(&all, stdin);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("no --stats-json ({e}): {}", err(&out))),
    )
    .expect("--stats-json is JSON");
    (out, v)
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// `lines == emitted + skipped + rejected`, and the reasons add up.
fn assert_accounts(v: &Value) {
    assert_eq!(
        n(v, "lines"),
        n(v, "emitted") + n(v, "skipped") + n(v, "rejected"),
        "{v}"
    );
    for (total, by) in [
        ("skipped", "skipped_by_reason"),
        ("rejected", "rejected_by_reason"),
    ] {
        let sum: u64 = v[by]
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_u64().unwrap())
            .sum();
        assert_eq!(sum, n(v, total), "{v}");
    }
}

/// A combined-format record with request `req`.
fn rec(req: &str) -> String {
    format!(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "{req}" 200 2326 "-" "Mozilla/5.0""#)
}

/// A combined-format record for `GET target HTTP/1.1`.
fn get(target: &str) -> String {
    rec(&format!("GET {target} HTTP/1.1"))
}

fn log(records: &[String]) -> Vec<u8> {
    let mut s = records.join("\n");
    s.push('\n');
    s.into_bytes()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

// ---------------------------------------------------------------------------
// Compression

/// Three records and what `--pipe` makes of them (worked out by hand).
fn sample() -> (Vec<u8>, Vec<&'static str>) {
    (
        log(&[
            get("/a/./b/../c?x=%7e"),
            get("HTTP://Example.COM:80/%7euser"),
            get("/plain"),
        ]),
        vec!["/a/c?x=~", "http://example.com/~user", "/plain"],
    )
}

#[test]
fn gzip_input_is_decompressed() {
    let (plain, want) = sample();
    let f = file("one.log.gz", &gzip(&plain));
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), want);
    assert_eq!(v["inputs"][0]["compression"], "gzip");
    assert_eq!(v["inputs"][0]["format"], "combined");
    assert_eq!(n(&v, "bytes"), plain.len() as u64);
}

#[test]
fn multi_member_gzip_is_read_to_the_end() {
    let (plain, want) = sample();
    let more = log(&[get("/second-member")]);
    let mut gz = gzip(&plain);
    gz.extend_from_slice(&gzip(&more));
    let f = file("two-members.gz", &gz);
    let out = canonurl(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    let mut all = want.clone();
    all.push("/second-member");
    assert_eq!(lines(&out.stdout), all);
    // Also from stdin.
    let out = canonurl(&["--pipe"], &gz);
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), all);
}

#[test]
fn zstd_input_is_decompressed() {
    let (plain, want) = sample();
    let z = zstd::encode_all(&plain[..], 3).unwrap();
    assert!(z.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]));
    let f = file("one.log.zst", &z);
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), want);
    assert_eq!(v["inputs"][0]["compression"], "zstd");
}

#[test]
fn compression_is_detected_by_magic_not_by_name() {
    let (plain, want) = sample();
    let gz_as_txt = file("really-gzip.txt", &gzip(&plain));
    let plain_as_gz = file("really-plain.gz", &plain);
    let zst_as_log = file("really-zstd.log", &zstd::encode_all(&plain[..], 1).unwrap());
    for (f, comp) in [
        (&gz_as_txt, "gzip"),
        (&plain_as_gz, "none"),
        (&zst_as_log, "zstd"),
    ] {
        let (out, v) = stats(&["--pipe", f], b"");
        assert_exit(&out, 0);
        assert_eq!(lines(&out.stdout), want, "{f}");
        assert_eq!(v["inputs"][0]["compression"], comp, "{f}");
    }
}

#[test]
fn truncated_gzip_reports_and_keeps_complete_lines() {
    use std::io::Read;
    let records: Vec<String> = (0..4000).map(|i| get(&format!("/p/{i}"))).collect();
    let plain = log(&records);
    let gz = gzip(&plain);
    let cut = &gz[..gz.len() / 2];
    let f = file("cut.log.gz", cut);
    // What a gzip reader recovers from the cut file, independently.
    let mut recovered = Vec::new();
    let r = flate2::read::MultiGzDecoder::new(cut).read_to_end(&mut recovered);
    assert!(r.is_err(), "the cut stream must fail");
    let complete = recovered.iter().filter(|&&b| b == b'\n').count();
    let fragment = usize::from(recovered.last().is_some_and(|&b| b != b'\n'));
    assert!(complete > 100);

    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 2);
    let e = err(&out);
    assert!(e.contains(&f) && e.contains("truncated"), "{e}");
    let got = lines(&out.stdout);
    assert_eq!(got.len(), complete + fragment);
    for (i, url) in got.iter().take(complete).enumerate() {
        assert_eq!(*url, format!("/p/{i}"));
    }
    if fragment == 1 {
        assert_eq!(got[complete], "", "the cut line gives no URL");
    }
    assert_accounts(&v);
    assert_eq!(n(&v, "emitted"), complete as u64);
    assert_eq!(n(&v, "lines"), (complete + fragment) as u64);
    assert!(v["inputs"][0]["error"]
        .as_str()
        .is_some_and(|s| s.contains("truncated")));

    // Without --pipe: complete lines only, and each is a whole URL.
    let out = canonurl(&[&f], b"");
    assert_exit(&out, 2);
    assert!(out.stdout.is_empty() || out.stdout.ends_with(b"\n"));
    assert_eq!(lines(&out.stdout).len(), complete);
}

#[test]
fn truncated_zstd_is_reported() {
    let records: Vec<String> = (0..4000).map(|i| get(&format!("/z/{i}"))).collect();
    let z = zstd::encode_all(&log(&records)[..], 3).unwrap();
    let f = file("cut.log.zst", &z[..z.len() / 2]);
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 2);
    let e = err(&out);
    assert!(e.contains(&f) && e.contains("truncated"), "{e}");
    let got = lines(&out.stdout);
    assert!(got.len() > 100 && got.len() < 4000, "{}", got.len());
    // Every complete line before the cut is its URL, in order.
    for (i, url) in got.iter().enumerate().take(got.len() - 1) {
        assert_eq!(*url, format!("/z/{i}"));
    }
    assert_accounts(&v);
    assert_eq!(n(&v, "lines"), got.len() as u64);
}

// ---------------------------------------------------------------------------
// Inputs that cannot be read

#[test]
fn missing_directory_and_unreadable_inputs_are_named_and_others_processed() {
    let good = file("good.log", &log(&[get("/good")]));
    let missing = scratch("does-not-exist.log");
    let missing = missing.to_str().unwrap();
    let dir = scratch("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let (out, v) = stats(&[missing, dir, &good], b"");
    assert_exit(&out, 2);
    let e = err(&out);
    assert!(e.contains(missing), "{e}");
    // A directory is read recursively (tests/cli_inputs.rs): an empty one
    // is named in a notice, and is no input of its own.
    assert!(e.contains(&format!("{dir}: no file to read")), "{e}");
    assert_eq!(lines(&out.stdout), ["/good"]);
    assert_eq!(v["inputs"].as_array().unwrap().len(), 2);
    assert!(v["inputs"][0]["error"].is_string());
    assert!(v["inputs"][1]["error"].is_null());
    assert_accounts(&v);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = file("locked.log", &log(&[get("/secret")]));
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::File::open(&locked).is_ok() {
            eprintln!("skipping the unreadable-file case: running with permission to read it");
        } else {
            let out = canonurl(&[&locked, &good], b"");
            assert_exit(&out, 2);
            assert!(err(&out).contains(&locked), "{}", err(&out));
            assert_eq!(lines(&out.stdout), ["/good"]);
        }
        let _ = std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644));
    }
}

#[test]
fn missing_file_alone_exits_2() {
    let missing = scratch("nothing-here.log");
    let out = canonurl(&[missing.to_str().unwrap()], b"");
    assert_exit(&out, 2);
    assert!(err(&out).contains(missing.to_str().unwrap()));
    assert!(out.stdout.is_empty());
}

// ---------------------------------------------------------------------------
// Garbage

/// Deterministic junk: `lines` lines of bytes other than `\n`, each starting
/// with a NUL (so no line is blank), with NULs and high bytes throughout.
fn garbage(lines: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::new();
    for _ in 0..lines {
        out.push(0);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 20 + (x % 200) as usize;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = (x >> 24) as u8;
            // No line ends; no quote or bracket either, so no line can look
            // like a record by chance.
            out.push(match b {
                b'\n' | b'"' | b'[' | b']' => 0,
                b => b,
            });
        }
        out.push(b'\n');
    }
    out
}

#[test]
fn binary_garbage_with_a_given_format_is_rejected_line_by_line() {
    let g = garbage(50);
    let f = file("garbage.bin", &g);
    let (out, v) = stats(&["-f", "combined", "--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), vec![""; 50]);
    assert_eq!(n(&v, "lines"), 50);
    assert_eq!(n(&v, "rejected"), 50, "{v}");
    assert_accounts(&v);
    assert!(!err(&out).contains("panick"), "{}", err(&out));

    let out = canonurl(&["-f", "combined", "--strict", &f], b"");
    assert_exit(&out, 1);
    assert!(out.stdout.is_empty());
    // Every line rejected: more than half.
    let out = canonurl(&["-f", "combined", "--max-reject-rate", "0.5", &f], b"");
    assert_exit(&out, 1);
    let out = canonurl(&["-f", "combined", "--max-reject-rate", "50%", &f], b"");
    assert_exit(&out, 1);
    let out = canonurl(&["-f", "combined", "--max-reject-rate", "1", &f], b"");
    assert_exit(&out, 0);
    // Other formats do not panic either.
    for format in [
        "common",
        "vhost",
        "w3c",
        "cloudfront",
        "alb",
        "json",
        "haproxy",
        "plain",
    ] {
        let (out, v) = stats(&["-f", format, "--pipe", &f], b"");
        assert_exit(&out, 0);
        assert_eq!(lines(&out.stdout).len(), 50, "{format}");
        assert_accounts(&v);
        assert_eq!(n(&v, "emitted"), 0, "{format}: {v}");
    }
}

#[test]
fn max_reject_rate_is_a_strict_bound() {
    // 2 of 4 lines rejected: exactly 50%.
    let f = file(
        "half.log",
        &log(&[
            get("/ok1"),
            "not a record".to_string(),
            get("/ok2"),
            get("http://bad:99999/"),
        ]),
    );
    for (rate, code) in [
        ("0.5", 0),
        ("50%", 0),
        ("0.49", 1),
        ("49%", 1),
        ("0", 1),
        ("1", 0),
    ] {
        let out = canonurl(&["-f", "combined", "--max-reject-rate", rate, &f], b"");
        assert_exit(&out, code);
        assert_eq!(lines(&out.stdout), ["/ok1", "/ok2"], "{rate}");
    }
    let out = canonurl(&["-f", "combined", "--strict", &f], b"");
    assert_exit(&out, 1);
    let out = canonurl(&["-f", "combined", &f], b"");
    assert_exit(&out, 0);
    for bad in ["1.5", "-0.1", "150%", "half"] {
        let out = canonurl(&["--max-reject-rate", bad, &f], b"");
        assert_exit(&out, 2);
    }
}

#[test]
fn garbage_with_auto_detection_is_fatal() {
    let f = file("junk.bin", &garbage(30));
    let (out, v) = stats(&[&f], b"");
    assert_exit(&out, 2);
    let e = err(&out);
    // Binary (it holds NUL bytes): said so, not shown as a "first line".
    assert!(e.contains(&f) && e.contains("not a text log"), "{e}");
    assert!(!e.contains("first line"), "{e}");
    assert!(out.stdout.is_empty());
    assert!(v["inputs"][0]["format"].is_null());
    // Prose is not a log either.
    let f = file("prose.txt", b"It was a dark and stormy night.\nThe end.\n");
    let out = canonurl(&[&f], b"");
    assert_exit(&out, 2);
    assert!(err(&out).contains("cannot detect"));
}

#[test]
fn json_matching_no_preset_is_fatal_and_names_its_fields() {
    let data = b"{\"when\":\"2024-01-01\",\"path\":\"/a\",\"site\":\"h.example\"}\n{\"when\":\"x\",\"path\":\"/b\"}\n";
    let f = file("fields.json", data);
    for args in [&[][..], &["-f", "json"][..]] {
        let mut all = args.to_vec();
        all.push(&f);
        let (out, v) = stats(&all, b"");
        assert_exit(&out, 2);
        let e = err(&out);
        assert!(
            e.contains(&f)
                && e.contains("JSON log whose fields match no preset")
                && e.contains("(first record has: when, path, site)")
                && e.contains("--json-target")
                && e.contains("--json-preset"),
            "{e}"
        );
        assert!(out.stdout.is_empty());
        assert!(v["inputs"][0]["format"].is_null(), "{v}");
    }
    // Given paths (or a preset) read it.
    let out = canonurl(&["--json-target", "path", "--json-host", "site", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["http://h.example/a", "/b"]);
    let out = canonurl(&["--json-preset", "caddy", &f], b"");
    assert_exit(&out, 0);
    assert!(out.stdout.is_empty());
}

#[test]
fn json_query_path_is_appended_to_the_target() {
    // A layout that logs the query apart from the path (Akamai's
    // `reqPath`/`queryStr`): `--json-query` joins them with a `?`, and a
    // path logged without its leading `/` gets one.
    let f = file(
        "split-query.json",
        b"{\"p\":\"a/b\",\"q\":\"x=1&y=2\",\"h\":\"h.example\"}\n\
          {\"p\":\"/c\",\"h\":\"h.example\"}\n",
    );
    let args = ["-f", "json", "--json-target", "p", "--json-host", "h"];
    let out = canonurl(&[&args[..], &["--json-query", "q", &f]].concat(), b"");
    assert_exit(&out, 0);
    assert_eq!(
        lines(&out.stdout),
        ["http://h.example/a/b?x=1&y=2", "http://h.example/c"]
    );
    // Without it the query is not read, and `a/b` is no request target.
    let out = canonurl(&[&args[..], &[f.as_str()]].concat(), b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["http://h.example/c"]);
    assert!(err(&out).contains(":1: "), "{}", err(&out));
}

#[test]
fn pretty_printed_json_is_rejected_line_by_line() {
    // One object over several lines is no log of one object per line: no
    // line is a whole object, so no preset can be told and each line is
    // rejected for what it is, not skipped.
    let doc = b"{\n  \"ClientRequestHost\": \"h.example\",\n  \"ClientRequestURI\": \"/a\"\n}\n";
    let f = file("pretty.json", doc);
    let (out, v) = stats(&["-f", "json", &f], b"");
    assert_exit(&out, 0);
    assert!(out.stdout.is_empty());
    assert_eq!(
        (v["lines"].as_u64(), v["rejected"].as_u64()),
        (Some(4), Some(4)),
        "{v}"
    );
    let e = err(&out);
    assert!(e.contains(":1: quoted field or string not closed"), "{e}");
    assert!(e.contains(":2: not a record of this log format"), "{e}");
}

// ---------------------------------------------------------------------------
// Bytes and lines

#[test]
fn invalid_utf8_in_targets_is_percent_encoded() {
    let mut data = Vec::new();
    data.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /caf\xe9\xff?q=\xc3 HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
    );
    // nginx/Apache `\xHH` escapes of the same bytes.
    data.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /caf\\xE9\\xFF?q=\\xC3 HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
    );
    let f = file("utf8.log", &data);
    let out = canonurl(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/caf%E9%FF?q=%C3", "/caf%E9%FF?q=%C3"]);
}

#[test]
fn crlf_and_last_line_without_newline() {
    let data = format!(
        "{}\r\n{}\r\n\r\n{}",
        get("/one"),
        get("/two?x=1"),
        get("/three")
    );
    let f = file("crlf.log", data.as_bytes());
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/one", "/two?x=1", "", "/three"]);
    assert_eq!(n(&v, "lines"), 4);
    assert_eq!(v["skipped_by_reason"]["empty-line"], 1);
    assert_accounts(&v);
}

/// A combined record of exactly `len` bytes (without line end), with a short
/// URL and a huge user agent.
fn huge_record(target: &str, len: usize) -> Vec<u8> {
    let head =
        format!(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET {target} HTTP/1.1" 200 1 "-" ""#);
    let mut line = head.into_bytes();
    line.resize(len - 1, b'x');
    line.push(b'"');
    assert_eq!(line.len(), len);
    line
}

const MIB: usize = 1 << 20;

#[test]
fn one_mib_line_is_emitted() {
    let mut data = huge_record("/big", MIB);
    data.push(b'\n');
    data.extend_from_slice(get("/next").as_bytes());
    data.push(b'\n');
    let f = file("mib.log", &data);
    for fmt in [&["-f", "combined"][..], &[]] {
        let mut args = fmt.to_vec();
        args.extend(["--pipe", &f]);
        let (out, v) = stats(&args, b"");
        assert_exit(&out, 0);
        assert_eq!(lines(&out.stdout), ["/big", "/next"], "{fmt:?}");
        assert_eq!(n(&v, "emitted"), 2);
    }
    let _ = std::fs::remove_file(&f);
}

#[test]
fn line_over_max_line_len_is_rejected_and_the_next_read() {
    // Default limit: 1 MiB + 1 byte is too long.
    let mut data = huge_record("/big", MIB + 1);
    data.push(b'\n');
    data.extend_from_slice(get("/next").as_bytes());
    data.push(b'\n');
    let f = file("over.log", &data);
    let (out, v) = stats(&["-f", "combined", "--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["", "/next"]);
    assert_eq!(v["rejected_by_reason"]["line-too-long"], 1, "{v}");
    assert_accounts(&v);
    assert_eq!(n(&v, "bytes"), data.len() as u64);
    let _ = std::fs::remove_file(&f);

    // A smaller limit, several long lines, the last without newline.
    let mut data = Vec::new();
    for (i, len) in [1024usize, 5000, 2048, 2049, 70_000].iter().enumerate() {
        data.extend_from_slice(&huge_record(&format!("/l{i}"), *len));
        data.push(b'\n');
        data.extend_from_slice(get(&format!("/s{i}")).as_bytes());
        data.push(b'\n');
    }
    data.extend_from_slice(&huge_record("/end", 3000));
    let f = file("limits.log", &data);
    let rejects = scratch("limits.rejects");
    let (out, v) = stats(
        &[
            "-f",
            "combined",
            "--max-line-len",
            "2048",
            "--pipe",
            "--rejects",
            rejects.to_str().unwrap(),
            &f,
        ],
        b"",
    );
    assert_exit(&out, 0);
    assert_eq!(
        lines(&out.stdout),
        ["/l0", "/s0", "", "/s1", "/l2", "/s2", "", "/s3", "", "/s4", ""]
    );
    assert_eq!(v["rejected_by_reason"]["line-too-long"], 4, "{v}");
    assert_accounts(&v);
    let rj = std::fs::read(&rejects).unwrap();
    let rows: Vec<String> = lines(&rj)
        .iter()
        .map(|r| r.split('\t').take(2).collect::<Vec<_>>().join("\t"))
        .collect();
    let name = &f;
    assert_eq!(
        rows,
        [3, 7, 9, 11].map(|l| format!("{name}:{l}\tline-too-long"))
    );
    // The limit itself must be at least 1024.
    let out = canonurl(&["--max-line-len", "100", &f], b"");
    assert_exit(&out, 2);
}

#[test]

fn overlong_first_line_does_not_break_format_detection() {
    let mut data = huge_record("/big", MIB + 10);
    data.push(b'\n');
    for i in 0..5 {
        data.extend_from_slice(get(&format!("/next{i}")).as_bytes());
        data.push(b'\n');
    }
    let f = file("overlong-first.log", &data);
    let (out, v) = stats(&["--pipe", &f], b"");
    let _ = std::fs::remove_file(&f);
    assert_exit(&out, 0);
    assert_eq!(v["inputs"][0]["format"], "combined", "{v}");
    assert_eq!(
        lines(&out.stdout),
        ["", "/next0", "/next1", "/next2", "/next3", "/next4"]
    );
}

#[test]
fn crlf_line_of_exactly_the_limit_is_accepted_mid_piece() {
    // With a small limit the line sits inside a 1 MiB piece: accepted.
    let mut data = huge_record("/big", 2048);
    data.extend_from_slice(b"\r\n");
    data.extend_from_slice(get("/next").as_bytes());
    data.extend_from_slice(b"\r\n");
    let f = file("crlf-limit.log", &data);
    let out = canonurl(
        &["-f", "combined", "--max-line-len", "2048", "--pipe", &f],
        b"",
    );
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/big", "/next"]);
}

#[test]

fn line_length_limit_does_not_count_the_cr() {
    for end in [&b"\n"[..], b"\r\n"] {
        let mut data = huge_record("/big", MIB);
        data.extend_from_slice(end);
        data.extend_from_slice(get("/next").as_bytes());
        data.extend_from_slice(end);
        let f = file("crlf-mib.log", &data);
        let out = canonurl(&["-f", "combined", "--pipe", &f], b"");
        assert_exit(&out, 0);
        let _ = std::fs::remove_file(&f);
        assert_eq!(lines(&out.stdout), ["/big", "/next"], "line end {end:?}");
    }
}

#[test]
fn pipe_keeps_one_line_per_input_line_whatever_the_input() {
    let mut data = Vec::new();
    data.extend_from_slice(garbage(3).as_slice());
    data.extend_from_slice(b"\n\r\n   \n");
    data.extend_from_slice(get("/ok").as_bytes());
    data.extend_from_slice(b"\r\n");
    data.extend_from_slice(&huge_record("/long", 3000));
    data.push(b'\n');
    data.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /\xff\x00x HTTP/1.1\" 200 1\n",
    );
    data.extend_from_slice(rec("CONNECT a.example:443 HTTP/1.1").as_bytes());
    data.push(b'\n');
    data.extend_from_slice(b"1.2.3.4 - - [t] \"GET /cut");
    let expect = count_lines(&data);
    let f = file("everything.log", &data);
    for extra in [
        &[][..],
        &["--format", "tsv"],
        &["--format", "jsonl"],
        &["--field", "referer"],
        &["--field", "both"],
        &["--key"],
    ] {
        let mut args = vec!["-f", "combined", "--pipe", "--max-line-len", "2048"];
        args.extend_from_slice(extra);
        args.push(&f);
        let (out, v) = stats(&args, b"");
        assert_exit(&out, 0);
        assert_eq!(lines(&out.stdout).len(), expect, "{extra:?}");
        assert_eq!(n(&v, "lines"), expect as u64);
        assert_accounts(&v);
    }
}

// ---------------------------------------------------------------------------
// Request targets

#[test]
fn request_target_forms() {
    let records = [
        get("/a/./b/../c?x=%7e"),                // origin-form
        get("HTTP://Abs.EXAMPLE:80/x/%7ey"),     // absolute-form
        rec("CONNECT example.com:443 HTTP/1.1"), // authority-form
        rec("OPTIONS * HTTP/1.1"),               // asterisk-form
        rec("-"),                                // no request
        String::new(),                           // empty line
        get("https://s.example:443/"),           // default https port
        get("http://p.example:8080/q?a=b"),      // other port kept
        rec("GET /09 HTTP/1.0"),                 // HTTP/1.0
        rec("GET /nover"),                       // HTTP/0.9: no version
    ];
    let f = file("forms.log", &log(&records));
    let (out, v) = stats(&["-f", "combined", "--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(
        lines(&out.stdout),
        [
            "/a/c?x=~",
            "http://abs.example/x/~y",
            "",
            "",
            "",
            "",
            "https://s.example/",
            "http://p.example:8080/q?a=b",
            "/09",
            "/nover",
        ]
    );
    let sk = &v["skipped_by_reason"];
    assert_eq!(sk["authority-form"], 1, "{v}");
    assert_eq!(sk["asterisk-form"], 1, "{v}");
    assert_eq!(sk["no-request"], 1, "{v}");
    assert_eq!(sk["empty-line"], 1, "{v}");
    assert_eq!(n(&v, "skipped"), 4);
    assert_eq!(n(&v, "rejected"), 0);
    assert_eq!(n(&v, "emitted"), 6);
    assert_accounts(&v);

    // --base gives origin-form targets scheme and host; absolute ones keep theirs.
    let out = canonurl(
        &[
            "-f",
            "combined",
            "--pipe",
            "--base",
            "https://Base.example/ignored/path",
            &f,
        ],
        b"",
    );
    assert_exit(&out, 0);
    let got = lines(&out.stdout);
    assert_eq!(got[0], "https://base.example/a/c?x=~");
    assert_eq!(got[1], "http://abs.example/x/~y");
    assert_eq!(got[8], "https://base.example/09");
    // The whatwg profile keeps %7e.
    let out = canonurl(
        &["-f", "combined", "--profile", "whatwg", "--pipe", &f],
        b"",
    );
    assert_eq!(lines(&out.stdout)[0], "/a/c?x=%7e");
    // An invalid --base is a usage error.
    let out = canonurl(&["--base", "not a url", &f], b"");
    assert_exit(&out, 2);
}

#[test]
fn w3c_header_lines_are_skipped() {
    let data = b"#Software: Microsoft Internet Information Services 10.0\r\n\
#Version: 1.0\r\n\
#Date: 2020-01-01 00:00:00\r\n\
#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-host sc-status\r\n\
2020-01-01 00:00:00 10.0.0.1 GET /x/./y q=1 443 Www.Example.COM 200\r\n\
\r\n\
2020-01-01 00:00:01 10.0.0.1 GET /z - 8080 example.com 200\r\n\
2020-01-01 00:00:02 10.0.0.1 GET /n - 80 - 200\r\n\
#Fields: date cs-uri-stem\r\n\
2020-01-01 /after-new-fields\r\n";
    let f = file("iis.log", data);
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(v["inputs"][0]["format"], "w3c");
    assert_eq!(
        lines(&out.stdout),
        [
            "",
            "",
            "",
            "",
            "https://www.example.com/x/y?q=1",
            "",
            "http://example.com:8080/z",
            "/n",
            "",
            "/after-new-fields",
        ]
    );
    assert_eq!(v["skipped_by_reason"]["header"], 5, "{v}");
    assert_eq!(v["skipped_by_reason"]["empty-line"], 1, "{v}");
    assert_accounts(&v);
}

#[test]
fn apache_escapes_are_undone_then_canonicalized() {
    // In the log: `\"` is a quote, `\\` a backslash, `\x22` a quote, `\x41` an A.
    let records = [
        get(r#"/a\"b"#),
        get(r"/c\x22d\x41"),
        get(r"/e\\f"),
        get(r"/g?h=\x22i\x22"),
    ];
    let f = file("escapes.log", &log(&records));
    let out = canonurl(&["-f", "combined", "--pipe", "--format", "tsv", &f], b"");
    assert_exit(&out, 0);
    let rows: Vec<Vec<String>> = lines(&out.stdout)
        .iter()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    // A quote in a path or query is percent-encoded; a backslash in the path
    // of an http(s) URL is a path separator (WHATWG).
    let urls: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(urls, ["/a%22b", "/c%22dA", "/e/f", "/g?h=%22i%22"]);
    // Column 4 is the target as sent (unescaped), TSV-escaped.
    let originals: Vec<&str> = rows.iter().map(|r| r[3].as_str()).collect();
    assert_eq!(originals, [r#"/a"b"#, r#"/c"dA"#, r"/e\\f", r#"/g?h="i""#]);
}

#[test]
fn vhost_port_gives_the_scheme() {
    let v = |vh: &str, target: &str| {
        format!(
            r#"{vh} 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET {target} HTTP/1.1" 200 1 "-" "ua""#
        )
    };
    let records = [
        v("www.Example.com:443", "/s?q=1"),
        v("www.example.com:8080", "/p"),
        v("www.example.com:80", "/h"),
        v("other.example", "/noport"),
        v("www.example.com:443", "http://abs.example/x"),
    ];
    let f = file("vhost.log", &log(&records));
    let (out, st) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(st["inputs"][0]["format"], "vhost");
    assert_eq!(
        lines(&out.stdout),
        [
            "https://www.example.com/s?q=1",
            "http://www.example.com:8080/p",
            "http://www.example.com/h",
            "http://other.example/noport",
            "http://abs.example/x",
        ]
    );
}

#[test]
fn haproxy_hash_escapes_are_undone() {
    let line = |req: &str| {
        format!("Feb 25 16:19:49 10.0.0.1 haproxy[7]: 1.2.3.4:53332 [25/Feb/2019:16:19:48.143] fe be/srv 0/0/7/1457/1487 200 11394 - - ---- 2/1/0/0/0 0/0 \"{req}\"")
    };
    let records = [
        line("GET /a#22b#20c?x=#7e HTTP/1.1"),
        line("GET /keep#zz HTTP/1.1"),
    ];
    let f = file("haproxy.log", &log(&records));
    let (out, v) = stats(&["--pipe", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(v["inputs"][0]["format"], "haproxy");
    // #22 is `"`, #20 a space, #7e `~`; `#zz` is not an escape: a fragment.
    assert_eq!(lines(&out.stdout), ["/a%22b%20c?x=~", "/keep#zz"]);
}

// ---------------------------------------------------------------------------
// Modes and fingerprints

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

fn xx_round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

fn xx_merge(acc: u64, val: u64) -> u64 {
    (acc ^ xx_round(0, val)).wrapping_mul(P1).wrapping_add(P4)
}

/// XXH64 from its specification (xxhash `doc/xxhash_spec.md`), for the test.
fn xxh64_ref(data: &[u8], seed: u64) -> u64 {
    let u64_at = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let u32_at = |i: usize| u64::from(u32::from_le_bytes(data[i..i + 4].try_into().unwrap()));
    let len = data.len();
    let mut i = 0;
    let mut h = if len >= 32 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        while i + 32 <= len {
            for (k, acc) in v.iter_mut().enumerate() {
                *acc = xx_round(*acc, u64_at(i + 8 * k));
            }
            i += 32;
        }
        let mut h = v[0]
            .rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18));
        for acc in v {
            h = xx_merge(h, acc);
        }
        h
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(len as u64);
    while i + 8 <= len {
        h ^= xx_round(0, u64_at(i));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        i += 8;
    }
    if i + 4 <= len {
        h ^= u32_at(i).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        i += 4;
    }
    while i < len {
        h ^= u64::from(data[i]).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
        i += 1;
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

#[test]
fn xxh64_reference_matches_published_vectors() {
    // From xxHash's own sanity checks (cli/xsum_sanity_check.c: the empty
    // input with seed 0 and with seed PRIME32_1 = 2654435761) and the
    // common reference values for "a", "abc" and a 39-byte sentence (which
    // takes the 32-byte stripe path).
    let vectors: [(&[u8], u64, u64); 6] = [
        (b"", 0, 0xEF46_DB37_51D8_E999),
        (b"", 2_654_435_761, 0xAC75_FDA2_929B_17EF),
        (b"", 1, 0xD5AF_BA13_36A3_BE4B),
        (b"a", 0, 0xD24E_C4F1_A98C_6E5B),
        (b"abc", 0, 0x44BC_2CF5_AD77_0999),
        (
            b"Nobody inspects the spammish repetition",
            0,
            0xFBCE_A83C_8A37_8BF1,
        ),
    ];
    for (input, seed, want) in vectors {
        assert_eq!(
            xxh64_ref(input, seed),
            want,
            "{:?} seed {seed}",
            text(input)
        );
        assert_eq!(
            xxhash_rust::xxh64::xxh64(input, seed),
            want,
            "xxhash-rust {:?}",
            text(input)
        );
    }
    // Agreement on longer inputs and seed 42, every length up to 100.
    let data: Vec<u8> = (0..100u8).map(|b| b.wrapping_mul(37)).collect();
    for len in 0..=data.len() {
        assert_eq!(
            xxh64_ref(&data[..len], 42),
            xxhash_rust::xxh64::xxh64(&data[..len], 42)
        );
    }
}

fn key_of(url: &str) -> i64 {
    xxh64_ref(url.as_bytes(), 42) as i64
}

/// Records with repeats: b a b c a c d, one reject, one long URL.
fn repeats() -> String {
    let long = format!("/{}", "segment/".repeat(10));
    file(
        "repeats.log",
        &log(&[
            get("/b"),
            get("/a"),
            get("/./b"),
            get("/c"),
            get("/a"),
            get("/c?"),
            get("/c"),
            get("/d"),
            get("http://bad:99999/"),
            get(&long),
        ]),
    )
}

#[test]
fn unique_is_first_seen_order() {
    let f = repeats();
    let (out, v) = stats(&["--unique", &f], b"");
    assert_exit(&out, 0);
    let long = format!("/{}", "segment/".repeat(10));
    // `/./b` is `/b`; `/c?` keeps its empty query, so it differs from `/c`.
    assert_eq!(lines(&out.stdout), ["/b", "/a", "/c", "/c?", "/d", &long]);
    assert_eq!(v["distinct"], 6);
    // Threads do not change it.
    let out4 = canonurl(&["-j", "4", "--unique", &f], b"");
    assert_eq!(out.stdout, out4.stdout);
}

#[test]
fn count_is_most_frequent_first_ties_in_first_seen_order() {
    let f = repeats();
    let out = canonurl(&["--count", &f], b"");
    assert_exit(&out, 0);
    let long = format!("/{}", "segment/".repeat(10));
    // b:2 a:2 c:2 c?:1 d:1 long:1 — ties keep the first-seen order.
    assert_eq!(
        lines(&out.stdout),
        [
            "/b\t2".to_string(),
            "/a\t2".into(),
            "/c\t2".into(),
            "/c?\t1".into(),
            "/d\t1".into(),
            format!("{long}\t1"),
        ]
    );
    // --count --key: URL, key, count.
    let out = canonurl(&["--count", "--key", &f], b"");
    for l in lines(&out.stdout) {
        let cols: Vec<&str> = l.split('\t').collect();
        assert_eq!(cols.len(), 3, "{l}");
        assert_eq!(cols[1].parse::<i64>().unwrap(), key_of(cols[0]), "{l}");
    }
    // jsonl
    let out = canonurl(&["--count", "--format", "jsonl", &f], b"");
    let first: Value = serde_json::from_str(&lines(&out.stdout)[0]).unwrap();
    assert_eq!(first["url"], "/b");
    assert_eq!(first["count"], 2);
    // A string: a bare integer above 2^53 loses digits in jq, JavaScript
    // and most readers (they read numbers as doubles).
    let k = key_of("/b");
    assert_eq!(first["key"].as_str(), Some(k.to_string().as_str()));
    assert!(k.unsigned_abs() > 1 << 53, "this key would be rounded: {k}");
    assert_ne!(k as f64 as i64, k, "a double cannot hold {k}");
}

#[test]
fn key_is_xxh64_seed_42_signed() {
    let f = repeats();
    for mode in [&[][..], &["--unique"], &["--pipe"]] {
        let mut args = vec!["--key"];
        args.extend_from_slice(mode);
        args.push(&f);
        let out = canonurl(&args, b"");
        assert_exit(&out, 0);
        let mut negative = false;
        let mut checked = 0;
        for l in lines(&out.stdout) {
            if l.is_empty() {
                continue;
            }
            let (url, key) = l.split_once('\t').expect("URL TAB key");
            let key: i64 = key.parse().expect("signed decimal");
            assert_eq!(key, key_of(url), "{mode:?} {url}");
            negative |= key < 0;
            checked += 1;
        }
        assert!(checked >= 6);
        // Signed: with this many keys, at least one is negative here.
        assert!(
            negative,
            "{mode:?}: expected a negative key among {checked}"
        );
    }
}

// ---------------------------------------------------------------------------
// Output formats

#[test]
fn tsv_columns() {
    let records = [
        get("/a/../b"),
        get("http://bad:99999/"),
        // A tab (Apache `\t`) and a backslash in the target.
        get(r"/t\tab\\z"),
        rec("OPTIONS * HTTP/1.1"),
    ];
    let f = file("tsv.log", &log(&records));
    let out = canonurl(&["--format", "tsv", &f], b"");
    assert_exit(&out, 0);
    let rows: Vec<Vec<String>> = lines(&out.stdout)
        .iter()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    // Records mode: rejected rows are written, skipped ones are not.
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0], ["1", "/b", &key_of("/b").to_string(), "/a/../b"]);
    assert_eq!(rows[1], ["2", "", "", "port-out-of-range"]);
    // Tab in the URL is removed by the URL parser; `\` is `/`. In the
    // original column the tab and backslash are TSV-escaped.
    assert_eq!(rows[2][0], "3");
    assert_eq!(rows[2][1], "/tab/z");
    assert_eq!(rows[2][2], key_of("/tab/z").to_string());
    assert_eq!(rows[2][3], r"/t\tab\\z");
    // --pipe adds a row for the skipped line, with its reason.
    let out = canonurl(&["--pipe", "--format", "tsv", &f], b"");
    let rows = lines(&out.stdout);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3], "4\t\t\tasterisk-form");
}

#[test]
fn jsonl_rows_parse() {
    let mut data = log(&[get("/a/../b?q=%7e"), get("http://bad:99999/")]);
    data.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /x\\\"y\xff HTTP/1.1\" 200 1 \"-\" \"ua\"\n",
    );
    let f = file("jsonl.log", &data);
    let out = canonurl(&["--format", "jsonl", "--pipe", &f], b"");
    assert_exit(&out, 0);
    let rows: Vec<Value> = lines(&out.stdout)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["line"], 1);
    assert_eq!(rows[0]["url"], "/b?q=~");
    let key = key_of("/b?q=~").to_string();
    assert_eq!(rows[0]["key"].as_str(), Some(key.as_str()));
    assert_eq!(rows[0]["target"], "/a/../b?q=%7e");
    assert_eq!(rows[1]["line"], 2);
    assert!(rows[1].get("url").is_none_or(Value::is_null));
    assert_eq!(rows[1]["target"], "http://bad:99999/");
    assert_eq!(rows[2]["url"], "/x%22y%FF");
    // The raw 0xFF cannot be JSON: U+FFFD.
    assert_eq!(rows[2]["target"], "/x\"y\u{FFFD}");
}

// ---------------------------------------------------------------------------
// Statistics and reject lists

#[test]
fn stats_go_to_stderr_only() {
    let f = repeats();
    let plain = canonurl(&[&f], b"");
    let with = canonurl(&["--stats", &f], b"");
    assert_exit(&with, 0);
    assert_eq!(plain.stdout, with.stdout);
    let e = err(&with);
    assert!(
        e.contains("lines") && e.contains("emitted") && e.contains("rejected"),
        "{e}"
    );
    assert!(e.contains("format combined (detected)"), "{e}");
    assert!(!text(&with.stdout).contains("emitted"));
}

#[test]
fn stats_json_lists_inputs_and_counts() {
    let a = file(
        "a.log",
        &log(&[get("/x"), rec("-"), get("http://bad:99999/")]),
    );
    let b = file(
        "b.log",
        b"#Fields: cs-uri-stem cs-uri-query\n/w3c q=1\n/two -\n",
    );
    let c = file(
        "c.log.gz",
        &gzip(b"{\"request_uri\":\"/j\",\"http_host\":\"h.example\"}\n"),
    );
    let (out, v) = stats(&[&a, &b, &c], b"");
    assert_exit(&out, 0);
    assert_eq!(
        lines(&out.stdout),
        ["/x", "/w3c?q=1", "/two", "http://h.example/j"]
    );
    assert_eq!(n(&v, "lines"), 3 + 3 + 1);
    assert_eq!(n(&v, "emitted"), 1 + 2 + 1);
    assert_eq!(n(&v, "skipped"), 1 + 1);
    assert_eq!(n(&v, "rejected"), 1);
    assert_eq!(v["rejected_by_reason"]["port-out-of-range"], 1);
    assert_accounts(&v);
    let inputs = v["inputs"].as_array().unwrap();
    let formats: Vec<&str> = inputs
        .iter()
        .map(|i| i["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["combined", "w3c", "json"]);
    assert_eq!(inputs[0]["name"], a.as_str());
    assert_eq!(inputs[2]["compression"], "gzip");
    assert_eq!(inputs[2]["json_preset"], "nginx");
    for i in inputs {
        assert_eq!(i["detected"], true);
        assert_eq!(
            n(i, "lines"),
            n(i, "emitted") + n(i, "skipped") + n(i, "rejected"),
            "{i}"
        );
    }
    // Given format: detected is false.
    let (_, v) = stats(&["-f", "combined", &a], b"");
    assert_eq!(v["inputs"][0]["detected"], false);
    // --unique fills `distinct`.
    let (_, v) = stats(&["--unique", &a], b"");
    assert_eq!(v["distinct"], 1);
}

#[test]
fn rejects_file_has_one_row_per_rejected_line() {
    let bad_line = get("http://bad:99999/");
    let raw_bad: &[u8] = b"1.2.3.4 - - [t] \"\x16\x03\x01 x\" 400 0 \"-\" \"-\"";
    let mut data = log(&[get("/ok"), bad_line.clone(), "garbage here".into()]);
    data.extend_from_slice(raw_bad);
    data.push(b'\n');
    data.extend_from_slice(log(&[rec("-")]).as_slice());
    let f = file("rej.log", &data);
    let rj = scratch("rej.txt");
    let out = canonurl(
        &["-f", "combined", "--rejects", rj.to_str().unwrap(), &f],
        b"",
    );
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/ok"]);
    let body = std::fs::read(&rj).unwrap();
    let rows: Vec<&[u8]> = body[..body.len() - 1].split(|&b| b == b'\n').collect();
    assert_eq!(rows.len(), 3, "{}", text(&body));
    let cols =
        |r: &[u8]| -> Vec<Vec<u8>> { r.splitn(4, |&b| b == b'\t').map(<[u8]>::to_vec).collect() };
    let r0 = cols(rows[0]);
    assert_eq!(r0[0], format!("{f}:2").into_bytes());
    assert_eq!(r0[1], b"port-out-of-range");
    // The offset is in the target: `http://bad:` is 11 bytes before the port.
    let at: usize = text(&r0[2]).parse().unwrap();
    assert!(at <= "http://bad:99999/".len(), "{at}");
    assert_eq!(r0[3], bad_line.as_bytes());
    let r1 = cols(rows[1]);
    assert_eq!(r1[0], format!("{f}:3").into_bytes());
    assert_eq!(r1[1], b"malformed-record");
    assert_eq!(r1[3], b"garbage here");
    let r2 = cols(rows[2]);
    assert_eq!(r2[0], format!("{f}:4").into_bytes());
    assert_eq!(r2[1], b"bad-request-line");
    // Its control bytes escaped (a TLS handshake's first bytes): nothing a
    // terminal would act on.
    assert_eq!(
        r2[3],
        b"1.2.3.4 - - [t] \"\\x16\\x03\\x01 x\" 400 0 \"-\" \"-\"",
        "{}",
        text(&r2[3])
    );
    assert_ne!(r2[3], raw_bad);
    // Stderr names the same lines.
    let e = err(&out);
    assert!(
        e.contains(&format!("{f}:2:")) && e.contains(&format!("{f}:3:")),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// Inputs, progress, usage

#[test]
fn files_from_a_file_and_from_stdin() {
    let a = file("ff-a.log", &log(&[get("/from-a")]));
    let b = file("ff-b.log", &log(&[get("/from-b")]));
    let c = file("ff-c.log", &log(&[get("/from-c")]));
    let list = file("list.txt", format!("{b}\n\n{c}\r\n").as_bytes());
    // FILE arguments first, then the list.
    let out = canonurl(&["--files-from", &list, &a], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/from-a", "/from-b", "/from-c"]);
    let out = canonurl(&["--files-from", "-"], format!("{c}\n{a}\n").as_bytes());
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/from-c", "/from-a"]);
    // A missing list file is fatal; a missing listed file is named.
    let out = canonurl(&["--files-from", &format!("{list}.missing")], b"");
    assert_exit(&out, 2);
    let missing = format!("{a}.missing");
    let out = canonurl(
        &["--files-from", "-"],
        format!("{missing}\n{a}\n").as_bytes(),
    );
    assert_exit(&out, 2);
    assert!(err(&out).contains(&missing));
    assert_eq!(lines(&out.stdout), ["/from-a"]);
    // stdin cannot be both the list and an input.
    let out = canonurl(&["--files-from", "-", "-"], b"");
    assert_exit(&out, 2);
}

#[test]
fn progress_never_writes_to_stdout() {
    let records: Vec<String> = (0..20_000).map(|i| get(&format!("/p{i}"))).collect();
    let f = file("progress.log", &log(&records));
    let quiet = canonurl(&["--progress", "never", "--pipe", &f], b"");
    let loud = canonurl(&["--progress", "always", "--pipe", &f], b"");
    assert_exit(&loud, 0);
    assert_eq!(quiet.stdout, loud.stdout);
    assert_eq!(lines(&loud.stdout).len(), 20_000);
    let o = scratch("progress.out");
    let to_file = canonurl(
        &[
            "--progress",
            "always",
            "--pipe",
            "-o",
            o.to_str().unwrap(),
            &f,
        ],
        b"",
    );
    assert_exit(&to_file, 0);
    assert!(to_file.stdout.is_empty());
    assert_eq!(std::fs::read(&o).unwrap(), quiet.stdout);
    let _ = std::fs::remove_file(&o);
    let _ = std::fs::remove_file(&f);
}

#[test]
fn conflicting_modes_are_usage_errors() {
    let f = file("modes.log", &log(&[get("/x")]));
    for args in [
        &["--pipe", "--unique"][..],
        &["--pipe", "--count"],
        &["--unique", "--count"],
        &["-j", "0"],
        &["-f", "nope"],
        &["--field", "nope"],
        &["--pipe", "--field", "both", "--format", "tsv"],
    ] {
        let mut a = args.to_vec();
        a.push(&f);
        let out = canonurl(&a, b"");
        assert_exit(&out, 2);
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!err(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn exit_codes() {
    let good = file("exit-good.log", &log(&[get("/x")]));
    let bad = file("exit-bad.log", &log(&[get("/x"), get("http://bad:99999/")]));
    assert_exit(&canonurl(&[&good], b""), 0);
    assert_exit(&canonurl(&["--strict", &good], b""), 0);
    assert_exit(&canonurl(&[&bad], b""), 0);
    assert_exit(&canonurl(&["--strict", &bad], b""), 1);
    assert_exit(&canonurl(&["--max-reject-rate", "0.4", &bad], b""), 1);
    assert_exit(&canonurl(&["--max-reject-rate", "0.5", &bad], b""), 0);
    assert_exit(&canonurl(&["--no-such-flag", &good], b""), 2);
    // A missing input outranks --strict: 2.
    let missing = format!("{good}.missing");
    assert_exit(&canonurl(&["--strict", &bad, &missing], b""), 2);
    // stdin.
    let out = canonurl(&["--pipe"], &log(&[get("/stdin")]));
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["/stdin"]);
}

#[test]
fn field_referer_and_both() {
    let records = [
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "HTTP://Ref.Example/%7ex" "ua""#
            .to_string(),
        get("/no-referer"),
    ];
    let f = file("referer.log", &log(&records));
    let out = canonurl(&["--pipe", "--field", "referer", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["http://ref.example/~x", ""]);
    let out = canonurl(&["--pipe", "--field", "both", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(
        lines(&out.stdout),
        ["/a\thttp://ref.example/~x", "/no-referer\t"]
    );
}

/// A run whose lines all end skipped or rejected says so on stderr, even
/// with `--quiet`, and exits 0 unless `--fail-if-empty`; a run that wrote a
/// URL, or read only empty lines, says nothing of the kind.
#[test]
fn a_run_that_writes_no_url_says_so() {
    let no_request = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"-\" 408 0 \"-\" \"-\"\n";
    let input = format!("{no_request}{no_request}");
    let o = canonurl(&["-f", "combined", "--quiet"], input.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(
        err(&o),
        "canonurl: no URL written: 2 lines read, 2 skipped (no-request); check -f \
         (--log-format) and --field (--fail-if-empty makes this exit 1)\n"
    );
    let o = canonurl(&["-f", "combined", "--fail-if-empty"], input.as_bytes());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    // Rejects are named by their reason.
    let o = canonurl(&["-f", "plain", "--quiet"], b"http://[\n\nhttp://a b/\n");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        err(&o),
        "canonurl: no URL written: 3 lines read, 1 skipped (empty-line), \
         1 rejected (forbidden-domain-code-point), 1 rejected (unclosed-ipv6); check -f \
         (--log-format) and --field (--fail-if-empty makes this exit 1)\n"
    );
    // One URL written: no such message, and --fail-if-empty passes.
    let o = canonurl(
        &["-f", "plain", "--fail-if-empty"],
        b"http://[\nhttp://a/\n",
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(!err(&o).contains("no URL written"), "{}", err(&o));
    // Only empty lines: nothing to say, but --fail-if-empty still fails.
    let o = canonurl(&["-f", "plain"], b"\n\n");
    assert_eq!((o.status.code(), err(&o).as_str()), (Some(0), ""));
    let o = canonurl(&["-f", "plain", "--fail-if-empty"], b"");
    assert_eq!(o.status.code(), Some(1));
}

/// nginx and Apache behind a proxy or CDN log an X-Forwarded-For list as the
/// client: `auto` reads such a log as combined (the targets stay path-only),
/// never as vhost with client addresses for hosts, and `-f vhost` rejects
/// lines that have no virtual host instead of taking the client for one.
#[test]
fn forwarded_for_lists_are_clients_not_hosts() {
    let log = "203.0.113.7, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2 \"-\" \"ua\"\n\
               198.51.100.2, 10.0.0.1 - - [10/Oct/2000:13:55:37 -0700] \"GET /b?x=1 HTTP/1.1\" 200 2 \"-\" \"ua\"\n";
    let o = canonurl(&[], log.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(text(&o.stdout), "/a\n/b?x=1\n");
    let o = canonurl(&["-f", "vhost", "--quiet"], log.as_bytes());
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(err(&o).contains("2 rejected (bad-host)"), "{}", err(&o));
    let common = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2\n";
    let o = canonurl(&["-f", "vhost", "--quiet"], common.as_bytes());
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(
        err(&o).contains("1 rejected (malformed-record)"),
        "{}",
        err(&o)
    );
    // A virtual host followed by a client list is read.
    let both = "shop.example:443 203.0.113.7, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2\n";
    let o = canonurl(&[], both.as_bytes());
    // (port 443: https.)
    assert_eq!(text(&o.stdout), "https://shop.example/a\n");
}

/// A Zeek log big enough to be cut into several pieces, whose columns change
/// halfway (a new header block): each piece must be read with the `#fields`
/// line before it, whichever worker reads it, and `-j 2` must write what
/// `-j 1` writes. The new block also redefines the unset marker as `NONE`:
/// every piece after it must read a `NONE` host as no host.
#[test]
fn zeek_header_is_carried_to_every_piece() {
    let mut log = String::from("#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\thttp\n");
    let mut want = Vec::new();
    log.push_str("#fields\tts\tuid\tid.resp_p\tmethod\thost\turi\treferrer\n");
    for i in 0..30_000 {
        log.push_str(&format!(
            "1.{i}\tC{i}\t80\tGET\ta.example\t/first/{i}\\x20x?q={i}\t-\n"
        ));
        want.push(format!("http://a.example/first/{i}%20x?q={i}"));
    }
    log.push_str("#close\t2020\n#unset_field\tNONE\n#fields\turi\tid.resp_p\thost\tts\n");
    want.extend(["".to_string(), "".to_string(), "".to_string()]);
    for i in 0..30_000 {
        if i % 2 == 0 {
            log.push_str(&format!("/second/{i}\t443\tb.example\t2.{i}\n"));
            want.push(format!("https://b.example/second/{i}"));
        } else {
            // No host: the path alone.
            log.push_str(&format!("/second/{i}\t443\tNONE\t2.{i}\n"));
            want.push(format!("/second/{i}"));
        }
    }
    assert!(log.len() > 2 << 20, "{}", log.len());
    let f = file("big-zeek.log", log.as_bytes());
    let header_lines = 6;
    for j in ["1", "2"] {
        let (out, v) = stats(&["--pipe", "-j", j, &f], b"");
        assert_exit(&out, 0);
        assert_eq!(v["inputs"][0]["format"], "zeek");
        assert_eq!(v["rejected"], 0, "-j {j}: {v}");
        assert_eq!(v["emitted"], 60_000, "-j {j}: {v}");
        let got = lines(&out.stdout);
        assert_eq!(got.len(), header_lines + want.len(), "-j {j}");
        assert!(got[..header_lines].iter().all(String::is_empty));
        assert!(got[header_lines..] == want[..], "-j {j}: output differs");
    }
}

/// A CSV log (Google Cloud Storage usage) big enough for several pieces: the
/// header row, the first line, is carried to every piece.
#[test]
fn csv_header_row_is_carried_to_every_piece() {
    let header = r#""time_micros","c_ip","c_ip_type","c_ip_region","cs_method","cs_uri","sc_status","cs_bytes","sc_bytes","time_taken_micros","cs_host","cs_referer","cs_user_agent","s_request_id","cs_operation","cs_bucket","cs_object""#;
    let mut log = format!("{header}\n");
    let mut want = vec![String::new()];
    for i in 0..15_000 {
        log.push_str(&format!(
            r#""{i}","10.0.0.1","1","","GET","/o/{i}?alt=media","200","0","1","2","b{}.example","","Mozilla/5.0 (X11, ""Linux"")","id","GET_Object","b","o/{i}""#,
            i % 3
        ));
        log.push('\n');
        want.push(format!("https://b{}.example/o/{i}?alt=media", i % 3));
    }
    assert!(log.len() > 2 << 20, "{}", log.len());
    let f = file("big-gcs.csv", log.as_bytes());
    for j in ["1", "2"] {
        let (out, v) = stats(&["--pipe", "-j", j, &f], b"");
        assert_exit(&out, 0);
        assert_eq!(v["inputs"][0]["format"], "csv");
        assert_eq!(
            (&v["emitted"], &v["rejected"]),
            (&15_000.into(), &0.into()),
            "-j {j}: {v}"
        );
        assert!(lines(&out.stdout) == want, "-j {j}: output differs");
    }
}

#[test]
fn columns_flag() {
    let f = file(
        "cols.csv",
        b"when,Path,Server\n1,/a,h.example\n2,\"/b,c\",-\n",
    );
    let out = canonurl(&["-f", "csv", "--columns", "url=path,host=server", &f], b"");
    assert_exit(&out, 0);
    assert_eq!(lines(&out.stdout), ["http://h.example/a", "/b,c"]);
    // Without a url column: a usage error that says what is missing.
    let out = canonurl(&["-f", "csv", "--columns", "host=server", &f], b"");
    assert_exit(&out, 2);
    assert!(err(&out).contains("url=NAME"), "{}", err(&out));
    // A named column the header lacks: every record is rejected.
    let (out, v) = stats(&["-f", "csv", "--columns", "url=uri", &f], b"");
    assert_eq!(v["rejected"], 2, "{v}: {}", err(&out));
}
