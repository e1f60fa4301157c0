//! The `canonurl` command over every access log of the shared data
//! (`logs-*/`): line accounting, the one-line-per-line contract of `--pipe`,
//! output independent of the thread count, and per-format facts.
//!
//! Expected values are computed here from the raw files with small parsers
//! written for the test (not the crate's), or checked by hand against the
//! file contents as noted in comments. The files are found by walking the
//! directories, so a new log file is covered by the generic checks without
//! editing this file.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// Log files whose format cannot be detected: `canonurl` must exit 2 with a
/// message naming the file. `logfile_syslog_with_access_log.0` is a syslog in
/// which two of five lines are access-log records: too few for `-f auto` to
/// call it `common` (it reads with `-f common`, see
/// `syslog_with_access_log_reads_with_f_common`). (`logfile_bro_http.log.0`,
/// a Zeek TSV log, is read as `zeek` since issue 14.)
const UNDETECTABLE: &[&str] = &["logs-lnav/logfile_syslog_with_access_log.0"];

/// The format each known file must be detected as, checked by looking at the
/// files (see the comment on each entry). Files not listed are still covered
/// by the generic tests.
const FORMATS: &[(&str, &str)] = &[
    // `#Fields:` with `x-edge-location` / `x-host-header`.
    (
        "logs-cloud-fixtures/elastic-integrations-aws-cloudfront-test.log",
        "cloudfront",
    ),
    // Lines start with `http 2018-07-02T...` / `tls 2.0 ...`.
    (
        "logs-cloud-fixtures/elastic-integrations-aws-elb-test-alb.log",
        "alb",
    ),
    // `ip - - [time] "GET / HTTP/1.1" 200 612 "-" "Mozilla/..."`.
    (
        "logs-cloud-fixtures/elastic-integrations-nginx-test-access.log",
        "combined",
    ),
    // One JSON object per line with `RequestPath`, `RequestAddr`.
    (
        "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
        "json",
    ),
    ("logs-combined/elastic-examples-apache_logs.log", "combined"),
    (
        "logs-combined/elastic-examples-apache_logs.pre-fix.log",
        "combined",
    ),
    ("logs-combined/lnav-zanbil-shop-access.log", "combined"),
    ("logs-combined/logparser-hackers-access.log", "combined"),
    // `host - - [01/Aug/1995:00:00:01 -0400] "GET ... HTTP/1.0" 200 1839`:
    // no referer or user agent.
    ("logs-combined/nasa-Aug95-first1930.log", "common"),
    ("logs-iis/waikolai-W3SVC20-2009-2010.log.gz", "w3c"),
    ("logs-iis/webknowit-W3SVC1-2015-2016.log", "w3c"),
    ("logs-iis/webknowit-W3SVC2-2016.log.gz", "w3c"),
    ("logs-lnav/logfile_access_log.0", "combined"),
    ("logs-lnav/logfile_bad_access_log.0", "combined"),
    // docker-compose prefix `caddy  | {...}`.
    ("logs-lnav/logfile_caddy_log.0", "json"),
    ("logs-lnav/logfile_caddy_log.1", "json"),
    // Zeek TSV: `#separator \x09`, `#path http`, `#fields ts uid ... uri`.
    ("logs-lnav/logfile_bro_http.log.0", "zeek"),
    // `... haproxy[7]: ip:port [time] frontend backend ... "GET /x HTTP/1.1"`.
    ("logs-lnav/logfile_haproxy.0", "haproxy"),
    // `localhost:443 178.20.184.42 1j0vhgd jsmith [26/Jul/2023...] "GET ..."`.
    ("logs-lnav/logfile_regexp_access_log.0", "vhost"),
    // Records inside syslog messages, `"GET /x HTTP/1.1" 200 65508 4.386`,
    // without a referer.
    ("logs-lnav/logfile_w3c.0", "w3c"),
    ("logs-lnav/logfile_w3c.1", "w3c"),
    ("logs-lnav/logfile_w3c.2", "w3c"),
    ("logs-lnav/logfile_w3c.3", "w3c"),
    ("logs-lnav/logfile_w3c.4", "w3c"),
    ("logs-lnav/logfile_w3c.5", "w3c"),
    ("logs-lnav/logfile_w3c.6", "w3c"),
    ("logs-lnav/logfile_w3c_big.0", "w3c"),
    // Combined records wrapped in an extra pair of quotes.
    ("logs-scanner/acunetix.txt", "combined"),
    ("logs-scanner/netsparker.txt", "combined"),
    ("logs-scanner/w3af.txt", "combined"),
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_canonurl")
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run canonurl")
}

/// A fresh path under `CARGO_TARGET_TMPDIR`, unique in this process.
fn tmp_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("logs-{}-{n}-{name}", std::process::id()))
}

/// Every regular file under `data/logs-*/`, as (name relative to `data`, path), sorted.
fn log_files(data: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(data)
        .expect("read shared data dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("logs-"))
        })
        .collect();
    dirs.sort();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read logs dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.is_file() {
                let rel = path
                    .strip_prefix(data)
                    .expect("under data")
                    .to_string_lossy()
                    .replace('\\', "/");
                files.push((rel, path));
            }
        }
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "no files under {}/logs-*",
        data.display()
    );
    files
}

/// The decompressed contents of a file: gzip by its magic bytes (all members).
fn contents(path: &Path) -> Vec<u8> {
    let raw = common::read_bytes(path);
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("gunzip {}: {e}", path.display()));
        out
    } else {
        assert!(
            !raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]),
            "zstd shared file: teach contents() about it"
        );
        raw
    }
}

/// Lines as `canonurl` counts them: each `\n`, plus a last line without one.
fn count_lines(bytes: &[u8]) -> u64 {
    let n = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(!bytes.is_empty() && bytes.last() != Some(&b'\n'))
}

/// Lines split as the command splits them (only `\n` and a `\r` before it removed).
fn lines_of(bytes: &[u8]) -> Vec<&[u8]> {
    common::split_lines(bytes)
}

fn stats_json(path: &Path, extra: &[&str]) -> (Output, Value) {
    let json = tmp_path("stats.json");
    let mut args: Vec<&std::ffi::OsStr> = vec!["--stats-json".as_ref(), json.as_os_str()];
    args.extend(["-o", "/dev/null"].iter().map(std::ffi::OsStr::new));
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    args.push(path.as_os_str());
    let out = run(&args);
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{}: no --stats-json ({e}); stderr: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let _ = std::fs::remove_file(&json);
    let v: Value = serde_json::from_str(&text).expect("--stats-json is JSON");
    (out, v)
}

fn num(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Output lines of `--pipe` (or records), without the final `\n`.
fn out_lines(stdout: &[u8]) -> Vec<String> {
    lines_of(stdout)
        .into_iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// `--pipe` output of one shared file, by name relative to the data dir.
/// `None` (with a notice) when the file is absent.
fn pipe_of(data: &Path, rel: &str, extra: &[&str]) -> Option<(Vec<u8>, Vec<String>)> {
    let path = data.join(rel);
    if !path.is_file() {
        eprintln!("skipping checks of {rel}: not in the shared data");
        return None;
    }
    let mut args: Vec<&std::ffi::OsStr> = vec!["--pipe".as_ref()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    args.push(path.as_os_str());
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
    let raw = contents(&path);
    let lines = out_lines(&out.stdout);
    assert_eq!(lines.len() as u64, count_lines(&raw), "{rel}: --pipe lines");
    Some((raw, lines))
}

#[test]
fn every_log_file_accounts_for_every_line() {
    let Some(data) = common::shared_data_or_skip("every_log_file_accounts_for_every_line") else {
        return;
    };
    let mut checked = 0;
    for (rel, path) in log_files(&data) {
        let raw = common::read_bytes(&path);
        let expect_lines = count_lines(&contents(&path));
        let (out, v) = stats_json(&path, &[]);
        let input = &v["inputs"][0];
        assert_eq!(v["inputs"].as_array().map(Vec::len), Some(1), "{rel}");
        let compression = if raw.starts_with(&[0x1f, 0x8b]) {
            "gzip"
        } else {
            "none"
        };
        assert_eq!(input["compression"], compression, "{rel}");
        if UNDETECTABLE.contains(&rel.as_str()) {
            assert_eq!(out.status.code(), Some(2), "{rel}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(
                err.contains(&path.display().to_string()) && err.contains("cannot detect"),
                "{rel}: message must name the file and say the format is unknown: {err}"
            );
            assert!(input["format"].is_null(), "{rel}: {input}");
            assert!(input["error"].is_string(), "{rel}: {input}");
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
        let (lines, emitted, skipped, rejected) = (
            num(&v, "lines"),
            num(&v, "emitted"),
            num(&v, "skipped"),
            num(&v, "rejected"),
        );
        assert_eq!(lines, expect_lines, "{rel}: lines");
        assert_eq!(lines, emitted + skipped + rejected, "{rel}: {v}");
        // The reasons add up to the totals.
        let sum = |k: &str| -> u64 {
            v[k].as_object()
                .expect("by-reason object")
                .values()
                .map(|n| n.as_u64().expect("count"))
                .sum()
        };
        assert_eq!(sum("skipped_by_reason"), skipped, "{rel}");
        assert_eq!(sum("rejected_by_reason"), rejected, "{rel}");
        assert_eq!(num(input, "lines"), lines, "{rel}");
        assert_eq!(num(input, "emitted"), emitted, "{rel}");
        assert_eq!(num(&v, "bytes"), contents(&path).len() as u64, "{rel}");
        assert!(input["error"].is_null(), "{rel}: {input}");
        assert_eq!(input["detected"], true, "{rel}");
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn syslog_with_access_log_reads_with_f_common() {
    let Some(data) = common::shared_data_or_skip("syslog_with_access_log_reads_with_f_common")
    else {
        return;
    };
    let rel = "logs-lnav/logfile_syslog_with_access_log.0";
    let path = data.join(rel);
    let out = run(&["-f".as_ref(), "common".as_ref(), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
    // Lines 2 and 3: `tomcat.log: 127.0.0.1 - - "GET /includes/js/... HTTP/1.1"`
    // and `"GET /bad.foo HTTP/1.1"`; the other three are syslog messages.
    assert_eq!(
        out_lines(&out.stdout),
        ["/includes/js/combined-javascript.js", "/bad.foo"]
    );
    // Without -f, the message says why the format was not taken.
    let out = run(&[path.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("only 2 of 5 sampled lines read as common"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_undetectable_file_listed_exists() {
    let Some(data) = common::shared_data_or_skip("every_undetectable_file_listed_exists") else {
        return;
    };
    // Keeps UNDETECTABLE honest: an entry for a file that is gone is stale.
    for rel in UNDETECTABLE {
        assert!(data.join(rel).is_file(), "{rel} is listed but missing");
    }
}

#[test]
fn every_log_file_pipe_writes_one_line_per_input_line() {
    let Some(data) =
        common::shared_data_or_skip("every_log_file_pipe_writes_one_line_per_input_line")
    else {
        return;
    };
    for (rel, path) in log_files(&data) {
        if UNDETECTABLE.contains(&rel.as_str()) {
            continue;
        }
        let expect = count_lines(&contents(&path));
        for format in ["plain", "tsv", "jsonl"] {
            let out = run(&[
                "--pipe".as_ref(),
                "--format".as_ref(),
                format.as_ref(),
                path.as_os_str(),
            ]);
            assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
            if !out.stdout.is_empty() {
                assert_eq!(out.stdout.last(), Some(&b'\n'), "{rel}");
            }
            let n = out.stdout.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(n, expect, "{rel}: --pipe --format {format}");
            if format == "tsv" {
                // Line numbers run 1..=n in order.
                for (i, line) in lines_of(&out.stdout).iter().enumerate() {
                    let first = line.split(|&b| b == b'\t').next().unwrap_or_default();
                    assert_eq!(first, (i + 1).to_string().as_bytes(), "{rel}");
                }
            }
        }
    }
}

#[test]
fn thread_count_does_not_change_the_output() {
    let Some(data) = common::shared_data_or_skip("thread_count_does_not_change_the_output") else {
        return;
    };
    // Several 1 MiB pieces per input: each file is repeated until it is at
    // least 3.5 MiB decompressed (20 times at the least). gzip files are
    // concatenated compressed, which makes a multi-member gzip file.
    const TARGET: usize = 3 * 1024 * 1024 + 512 * 1024;
    const CAP: usize = 12 * 1024 * 1024;
    for (rel, path) in log_files(&data) {
        if UNDETECTABLE.contains(&rel.as_str()) {
            continue;
        }
        let raw = common::read_bytes(&path);
        let plain_len = contents(&path).len().max(1);
        let copies = TARGET
            .div_ceil(plain_len)
            .max(20)
            .min(CAP / plain_len)
            .max(2);
        let big = tmp_path(&format!("x{copies}-{}", rel.replace('/', "_")));
        let mut bytes = Vec::with_capacity(raw.len() * copies);
        for _ in 0..copies {
            bytes.extend_from_slice(&raw);
        }
        std::fs::write(&big, &bytes).expect("write repeated file");
        let expect_lines = count_lines(&contents(&big));
        for mode in [
            &["--pipe"][..],
            &["--unique"],
            &["--count"],
            &["--format", "tsv"],
        ] {
            let mut outs = Vec::new();
            for j in ["1", "4"] {
                let mut args: Vec<&std::ffi::OsStr> = vec!["-j".as_ref(), j.as_ref()];
                args.extend(mode.iter().map(std::ffi::OsStr::new));
                args.push(big.as_os_str());
                let out = run(&args);
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{rel} {mode:?}: {}",
                    stderr(&out)
                );
                outs.push(out.stdout);
            }
            assert!(
                outs[0] == outs[1],
                "{rel} x{copies} {mode:?}: -j1 and -j4 differ ({} vs {} bytes)",
                outs[0].len(),
                outs[1].len()
            );
            if mode == ["--pipe"] {
                let n = outs[0].iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!(n, expect_lines, "{rel} x{copies}: --pipe lines");
            }
        }
        let _ = std::fs::remove_file(&big);
    }
}

#[test]
fn detected_formats() {
    let Some(data) = common::shared_data_or_skip("detected_formats") else {
        return;
    };
    let known: BTreeMap<&str, &str> = FORMATS.iter().copied().collect();
    for (rel, path) in log_files(&data) {
        let Some(&want) = known.get(rel.as_str()) else {
            if !UNDETECTABLE.contains(&rel.as_str()) {
                eprintln!("note: {rel} has no expected format in FORMATS");
            }
            continue;
        };
        let (out, v) = stats_json(&path, &[]);
        assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
        assert_eq!(v["inputs"][0]["format"], want, "{rel}");
        // --stats names it too, on stderr.
        let out = run(&[
            "--stats".as_ref(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
            path.as_os_str(),
        ]);
        assert!(
            stderr(&out).contains(&format!("format {want} (detected)")),
            "{rel}: {}",
            stderr(&out)
        );
    }
    for (rel, _) in FORMATS {
        if !data.join(rel).is_file() {
            eprintln!("note: {rel} is listed in FORMATS but not in the shared data");
        }
    }
}

#[test]
fn json_presets_detected() {
    let Some(data) = common::shared_data_or_skip("json_presets_detected") else {
        return;
    };
    for (rel, preset) in [
        ("logs-lnav/logfile_caddy_log.0", "caddy"),
        ("logs-lnav/logfile_caddy_log.1", "caddy"),
        (
            "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
            "traefik",
        ),
    ] {
        let path = data.join(rel);
        if !path.is_file() {
            continue;
        }
        let (_, v) = stats_json(&path, &[]);
        assert_eq!(v["inputs"][0]["json_preset"], preset, "{rel}");
    }
}

/// A request target (origin-form) that every canonicalization leaves as it
/// is: only characters no profile encodes or decodes in a path or query, no
/// `%`, no dot segment, no `//` start. `+` is left out too: IIS logs a space
/// in `cs-uri-stem` as `+`, which the W3C reader turns back into a space.
fn trivially_canonical(t: &[u8]) -> bool {
    t.first() == Some(&b'/')
        && !t.starts_with(b"//")
        && t.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-._~/?=&;,:@!$*()".contains(&b))
        && {
            let path = t.split(|&b| b == b'?').next().unwrap_or_default();
            !path
                .split(|&b| b == b'/')
                .any(|seg| seg == b"." || seg == b"..")
        }
}

/// The quoted fields of a line, `\`-escapes kept (a test-local tokenizer:
/// a field runs from `"` to the next `"` not preceded by a backslash escape).
fn quoted_fields(line: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < line.len() && line[j] != b'"' {
            j += if line[j] == b'\\' { 2 } else { 1 };
        }
        if j >= line.len() {
            break;
        }
        out.push(&line[start..j]);
        i = j + 1;
    }
    out
}

/// The target of a logged request line `METHOD target HTTP/x.y`.
fn request_target(request: &[u8]) -> Option<&[u8]> {
    let mut parts = request.split(|&b| b == b' ');
    let _method = parts.next()?;
    let target = parts.next()?;
    let version = parts.next()?;
    (version.starts_with(b"HTTP/") && parts.next().is_none()).then_some(target)
}

#[test]
fn combined_logs_simple_targets_are_unchanged() {
    let Some(data) = common::shared_data_or_skip("combined_logs_simple_targets_are_unchanged")
    else {
        return;
    };
    for rel in [
        "logs-combined/elastic-examples-apache_logs.log",
        "logs-combined/lnav-zanbil-shop-access.log",
        "logs-combined/logparser-hackers-access.log",
        "logs-combined/nasa-Aug95-first1930.log",
        "logs-cloud-fixtures/elastic-integrations-nginx-test-access.log",
    ] {
        let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
            continue;
        };
        let mut simple = 0;
        for (i, line) in lines_of(&raw).iter().enumerate() {
            // The request is the first quoted field.
            let Some(req) = quoted_fields(line).first().copied() else {
                continue;
            };
            let Some(target) = request_target(req) else {
                continue;
            };
            if trivially_canonical(target) {
                simple += 1;
                assert_eq!(
                    out[i].as_bytes(),
                    target,
                    "{rel}:{}: {}",
                    i + 1,
                    String::from_utf8_lossy(line)
                );
            }
        }
        assert!(simple > 0, "{rel}: no simple target found");
    }
}

#[test]
fn nasa_is_common_with_path_only_urls() {
    let Some(data) = common::shared_data_or_skip("nasa_is_common_with_path_only_urls") else {
        return;
    };
    let rel = "logs-combined/nasa-Aug95-first1930.log";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    // No host in the records, no --base: every URL is path-only.
    assert!(out.iter().all(|u| u.is_empty() || u.starts_with('/')));
    // Line 1: `"GET /shuttle/missions/sts-68/news/sts-68-mcc-05.txt HTTP/1.0"`.
    assert!(raw.starts_with(b"in24.inetnebr.com - - [01/Aug/1995:00:00:01 -0400]"));
    assert_eq!(out[0], "/shuttle/missions/sts-68/news/sts-68-mcc-05.txt");
    // With --base the same lines get scheme and host.
    let (_, based) = pipe_of(&data, rel, &["--base", "http://www.nasa.example"]).unwrap();
    for (p, b) in out.iter().zip(&based) {
        if p.is_empty() {
            assert!(b.is_empty());
        } else {
            assert_eq!(*b, format!("http://www.nasa.example{p}"));
        }
    }
    // The records split over two lines (a newline inside the request, lines
    // 38-39 `"GET /shuttle/missions` / `/sts-71/... HTTP/1.0" 200 12054`)
    // are rejected, not emitted: a line with an odd number of `"` has no
    // closed request field.
    let (_, v) = stats_json(&data.join(rel), &[]);
    let odd_quotes = lines_of(&raw)
        .iter()
        .filter(|l| l.iter().filter(|&&b| b == b'"').count() % 2 == 1)
        .count() as u64;
    assert!(odd_quotes > 0);
    assert_eq!(
        v["rejected_by_reason"]["unterminated-field"].as_u64(),
        Some(odd_quotes),
        "{v}"
    );
}

#[test]
fn regexp_access_log_is_vhost_https() {
    let Some(data) = common::shared_data_or_skip("regexp_access_log_is_vhost_https") else {
        return;
    };
    let rel = "logs-lnav/logfile_regexp_access_log.0";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    // Every record starts with `localhost:443 `: port 443 means https, and
    // the default port is dropped.
    for (i, line) in lines_of(&raw).iter().enumerate() {
        assert!(line.starts_with(b"localhost:443 "));
        let req = quoted_fields(line)[0];
        let target = request_target(req).expect("request line");
        assert!(
            trivially_canonical(target),
            "{}",
            String::from_utf8_lossy(target)
        );
        assert_eq!(
            out[i],
            format!("https://localhost{}", String::from_utf8_lossy(target))
        );
    }
}

/// W3C `#Fields:` names and the data lines' values, by a test-local reader
/// (values separated by runs of spaces or tabs).
fn w3c_records(raw: &[u8]) -> Vec<(usize, BTreeMap<String, String>)> {
    let mut fields: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, line) in lines_of(raw).iter().enumerate() {
        let text = String::from_utf8_lossy(line);
        if let Some(rest) = text.strip_prefix("#Fields:") {
            fields = rest.split_whitespace().map(str::to_owned).collect();
            continue;
        }
        if text.starts_with('#') || text.trim().is_empty() {
            continue;
        }
        let values = text.split([' ', '\t']).filter(|v| !v.is_empty());
        out.push((
            i,
            fields
                .iter()
                .cloned()
                .zip(values.map(str::to_owned))
                .collect(),
        ));
    }
    out
}

#[test]
fn iis_logs_emit_every_data_line() {
    let Some(data) = common::shared_data_or_skip("iis_logs_emit_every_data_line") else {
        return;
    };
    let dir = data.join("logs-iis");
    if !dir.is_dir() {
        return;
    }
    for (rel, path) in log_files(&data) {
        if !rel.starts_with("logs-iis/") {
            continue;
        }
        let raw = contents(&path);
        // Independent count, as `grep -v '^#' | grep -cv '^\s*$'` would give.
        let data_lines = lines_of(&raw)
            .iter()
            .filter(|l| !l.starts_with(b"#") && !l.iter().all(|&b| b == b' ' || b == b'\t'))
            .count() as u64;
        let (out, v) = stats_json(&path, &[]);
        assert_eq!(out.status.code(), Some(0), "{rel}");
        assert_eq!(v["inputs"][0]["format"], "w3c", "{rel}");
        assert_eq!(num(&v, "emitted"), data_lines, "{rel}: {v}");
        assert_eq!(num(&v, "rejected"), 0, "{rel}: {v}");
        // Simple stems and queries come out as they are (no host: path only).
        let (_, urls) = pipe_of(&data, &rel, &[]).expect("present");
        let mut simple = 0;
        for (i, rec) in w3c_records(&raw) {
            let stem = &rec["cs-uri-stem"];
            let query = &rec["cs-uri-query"];
            let target = if query == "-" {
                stem.clone()
            } else {
                format!("{stem}?{query}")
            };
            if trivially_canonical(target.as_bytes()) {
                simple += 1;
                assert_eq!(urls[i], target, "{rel}:{}", i + 1);
            }
        }
        assert!(simple > 1000, "{rel}: {simple}");
    }
}

/// Drops `:80` from an `http://` authority and `:443` from an `https://` one.
fn drop_default_port(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("absolute URL");
    let end = rest.find('/').unwrap_or(rest.len());
    let (auth, path) = rest.split_at(end);
    let auth = match (scheme, auth.rsplit_once(':')) {
        ("http", Some((h, "80"))) | ("https", Some((h, "443"))) => h,
        _ => auth,
    };
    format!("{scheme}://{auth}{path}")
}

#[test]
fn cloudfront_urls_use_x_host_header_and_cs_protocol() {
    let Some(data) =
        common::shared_data_or_skip("cloudfront_urls_use_x_host_header_and_cs_protocol")
    else {
        return;
    };
    let rel = "logs-cloud-fixtures/elastic-integrations-aws-cloudfront-test.log";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    let mut differs_from_cs_host = 0;
    let records = w3c_records(&raw);
    assert!(!records.is_empty());
    for (i, rec) in &records {
        let host = &rec["x-host-header"];
        if *host != rec["cs(Host)"] {
            differs_from_cs_host += 1;
        }
        let query = &rec["cs-uri-query"];
        let mut want = format!("{}://{}{}", rec["cs-protocol"], host, rec["cs-uri-stem"]);
        if query != "-" {
            want = format!("{want}?{query}");
        }
        // These values hold no escape and no upper case: canonical as they are.
        let path_and_query = &want.split_once("://").unwrap().1.as_bytes()[host.len()..];
        assert!(trivially_canonical(path_and_query), "{want}");
        assert_eq!(out[*i], drop_default_port(&want), "{rel}:{}", i + 1);
    }
    // The file has records whose x-host-header is not cs(Host), so the
    // test does tell the two apart.
    assert!(differs_from_cs_host > 0);
}

#[test]
fn alb_urls_are_absolute_without_default_ports() {
    let Some(data) = common::shared_data_or_skip("alb_urls_are_absolute_without_default_ports")
    else {
        return;
    };
    let rel = "logs-cloud-fixtures/elastic-integrations-aws-elb-test-alb.log";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    let mut checked = 0;
    for (i, line) in lines_of(&raw).iter().enumerate() {
        let text = String::from_utf8_lossy(line);
        let kind = text.split(' ').next().unwrap_or_default();
        if kind == "tls" || !text.contains('"') || !matches!(kind, "http" | "https" | "h2") {
            // NLB TLS records and connection-log records carry no request.
            if kind == "tls" || text.starts_with("20") {
                assert_eq!(out[i], "", "{rel}:{}", i + 1);
            }
            continue;
        }
        let req = quoted_fields(line)[0];
        let req = String::from_utf8_lossy(req);
        let Some(target) = req
            .strip_prefix("GET ")
            .and_then(|r| r.strip_suffix(" HTTP/1.1"))
        else {
            continue;
        };
        if !target.starts_with("http") {
            continue;
        }
        // Absolute form with an explicit port; a raw space is %20-encoded.
        let want = drop_default_port(&target.replace(' ', "%20"));
        assert!(!want.contains(":80/") && !want.contains(":443/"));
        assert_eq!(out[i], want, "{rel}:{}", i + 1);
        checked += 1;
    }
    assert!(checked >= 2, "{checked}");
}

#[test]
fn haproxy_targets_are_the_quoted_request() {
    let Some(data) = common::shared_data_or_skip("haproxy_targets_are_the_quoted_request") else {
        return;
    };
    let rel = "logs-lnav/logfile_haproxy.0";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    let mut records = 0;
    for (i, line) in lines_of(&raw).iter().enumerate() {
        match quoted_fields(line).last().and_then(|r| request_target(r)) {
            Some(t) => {
                records += 1;
                assert!(trivially_canonical(t));
                assert_eq!(out[i].as_bytes(), t, "{rel}:{}", i + 1);
            }
            // `Proxy ... started.`, `SSL handshake failure`: no request.
            None => assert_eq!(out[i], "", "{rel}:{}", i + 1),
        }
    }
    let (_, v) = stats_json(&data.join(rel), &[]);
    assert_eq!(num(&v, "emitted"), records);
    assert_eq!(num(&v, "lines") - records, num(&v, "skipped"), "{v}");
}

/// The JSON object of a line, after an optional `name | ` prefix.
fn json_object(line: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(line);
    let start = text.find('{')?;
    serde_json::from_str(&text[start..]).ok()
}

#[test]
fn caddy_urls_from_request_host_and_tls() {
    let Some(data) = common::shared_data_or_skip("caddy_urls_from_request_host_and_tls") else {
        return;
    };
    for rel in [
        "logs-lnav/logfile_caddy_log.0",
        "logs-lnav/logfile_caddy_log.1",
    ] {
        let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
            continue;
        };
        let mut n = 0;
        for (i, line) in lines_of(&raw).iter().enumerate() {
            let obj = json_object(line).expect("JSON line");
            let Some(req) = obj.get("request") else {
                // Start-up messages: no request.
                assert_eq!(out[i], "", "{rel}:{}", i + 1);
                continue;
            };
            // `request.tls` present means https; `request.proto` is HTTP/x.
            let scheme = if req.get("tls").is_some() {
                "https"
            } else {
                "http"
            };
            let host = req["host"].as_str().unwrap();
            let uri = req["uri"].as_str().unwrap();
            assert!(trivially_canonical(uri.as_bytes()), "{uri}");
            let want = drop_default_port(&format!("{scheme}://{host}{uri}"));
            assert_eq!(out[i], want, "{rel}:{}", i + 1);
            n += 1;
        }
        assert!(n > 0);
    }
}

#[test]
fn traefik_urls_from_request_addr_and_scheme() {
    let Some(data) = common::shared_data_or_skip("traefik_urls_from_request_addr_and_scheme")
    else {
        return;
    };
    let rel = "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log";
    let Some((raw, out)) = pipe_of(&data, rel, &[]) else {
        return;
    };
    let mut with_port = 0;
    for (i, line) in lines_of(&raw).iter().enumerate() {
        let obj = json_object(line).expect("JSON line");
        // RequestAddr is the Host header with its port; RequestScheme is
        // absent in Traefik v1 (then http).
        let scheme = obj
            .get("RequestScheme")
            .and_then(Value::as_str)
            .unwrap_or("http");
        let addr = obj["RequestAddr"].as_str().unwrap();
        let path = obj["RequestPath"].as_str().unwrap();
        if addr.contains(':') {
            with_port += 1;
        }
        let want = drop_default_port(&format!("{scheme}://{addr}{path}"));
        assert_eq!(out[i], want, "{rel}:{}", i + 1);
    }
    assert!(with_port > 0, "the file has hosts with ports");
}

#[test]
fn referer_field_counts() {
    let Some(data) = common::shared_data_or_skip("referer_field_counts") else {
        return;
    };
    for rel in [
        "logs-combined/elastic-examples-apache_logs.log",
        "logs-combined/lnav-zanbil-shop-access.log",
        "logs-combined/logparser-hackers-access.log",
        "logs-cloud-fixtures/elastic-integrations-nginx-test-access.log",
    ] {
        let path = data.join(rel);
        if !path.is_file() {
            continue;
        }
        let raw = contents(&path);
        // The referer is the second quoted field (request, referer, agent).
        // Same count as:
        //   python3 -c 'import re,sys; rx=re.compile(rb"\"((?:[^\"\\\\]|\\\\.)*)\"")
        //   print(sum(1 for l in open(sys.argv[1],"rb").read().split(b"\n")
        //   if l and rx.findall(l)[1] not in (b"-", b"")))' FILE
        let mut sent = 0u64;
        let mut dash = 0u64;
        let mut sent_lines = Vec::new();
        for (i, line) in lines_of(&raw).iter().enumerate() {
            let q = quoted_fields(line);
            // At least request and referer (one line of elastic-examples is
            // cut inside the user agent).
            assert!(q.len() >= 2, "{rel}:{}: not combined", i + 1);
            if q[1] == b"-" || q[1].is_empty() {
                dash += 1;
            } else {
                sent += 1;
                sent_lines.push(i);
            }
        }
        let (out, v) = stats_json(&path, &["--field", "referer"]);
        assert_eq!(out.status.code(), Some(0), "{rel}");
        // A sent referer is a URL or a rejected one; an unsent one is skipped.
        assert_eq!(num(&v, "emitted") + num(&v, "rejected"), sent, "{rel}: {v}");
        assert_eq!(
            v["skipped_by_reason"]["empty-field"].as_u64().unwrap_or(0),
            dash,
            "{rel}: {v}"
        );
        assert_eq!(num(&v, "skipped"), dash, "{rel}: {v}");
        if !rel.contains("elastic-examples") {
            assert_eq!(num(&v, "emitted"), sent, "{rel}: {v}");
        }
        // And the lines with URLs are exactly those with a referer.
        let (_, urls) = pipe_of(&data, rel, &["--field", "referer"]).unwrap();
        for (i, u) in urls.iter().enumerate() {
            if !u.is_empty() {
                assert!(sent_lines.binary_search(&i).is_ok(), "{rel}:{}", i + 1);
                assert!(u.contains("://"), "{rel}:{}: {u}", i + 1);
            }
        }
    }
}
