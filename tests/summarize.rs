//! `canonurl summarize` as people run it: the rows against counts made here
//! from the log itself, merging the summaries of a log's parts (in any order,
//! one of them gzipped, one from stdin) gives the summary of the whole, the
//! output does not depend on threads or `--memory`, and bad input or flags
//! are errors that say what and where.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const CANONURL: &str = env!("CARGO_BIN_EXE_canonurl");
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample-access.log");

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(CANONURL)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = stdin.unwrap_or(b"").to_vec();
    let mut pipe = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = run(args, None);
    assert!(
        out.status.success(),
        "canonurl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A vhost log of two hosts over three days, with statuses and sizes that
/// the test counts itself.
fn vhost_log() -> String {
    let mut log = String::new();
    let hosts = ["a.example", "b.example"];
    for i in 0..600u64 {
        let host = hosts[(i % 7 % 2) as usize];
        let path = format!("/p/{}", i % 13);
        let day = i % 3 + 1;
        let hour = i % 24;
        let (status, bytes) = match i % 10 {
            0 => (304, "-".to_string()),
            1 => (404, "210".to_string()),
            2 => (503, "99".to_string()),
            _ => (200, (1000 + (i % 13) * 10 + i % 2).to_string()),
        };
        log.push_str(&format!(
            "{host}:443 192.0.2.{} - - [0{day}/Oct/2026:{hour:02}:00:00 +0000] \"GET {path} HTTP/1.1\" {status} {bytes} \"-\" \"-\"\n",
            i % 11
        ));
    }
    log
}

/// Per (URL, window): hits, 200s, 304s, 404s, 5xx, largest 200 size, and
/// the 200 sizes with their counts, counted from `vhost_log`'s lines.
type Expected = BTreeMap<(String, i64), (u64, u64, u64, u64, u64, u64, BTreeMap<u64, u64>)>;

fn expected(log: &str) -> Expected {
    let mut want = Expected::new();
    for line in log.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let host = f[0].trim_end_matches(":443");
        let day: i64 = f[4][1..3].parse().unwrap();
        let window = 1_790_812_800 + (day - 1) * 86_400;
        let url = format!("https://{host}{}", f[7]);
        let status: u16 = f[9].parse().unwrap();
        let e = want.entry((url, window)).or_default();
        e.0 += 1;
        match status {
            200 => {
                let size: u64 = f[10].parse().unwrap();
                e.1 += 1;
                e.5 = e.5.max(size);
                *e.6.entry(size).or_default() += 1;
            }
            304 => e.2 += 1,
            404 => e.3 += 1,
            _ => e.4 += 1,
        }
    }
    want
}

#[test]
fn rows_count_what_the_log_says() {
    let dir = tempfile::tempdir().unwrap();
    let log = vhost_log();
    let path = dir.path().join("site.log");
    std::fs::write(&path, &log).unwrap();
    let out = String::from_utf8(ok(&[
        "summarize",
        "--profile",
        "whatwg",
        path.to_str().unwrap(),
    ]))
    .unwrap();
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "host\turl\twindow\thits\ts200\ts301\ts302\ts303\ts307\ts308\ts304\ts404\ts5xx\tother\tnone\tlargest\tsizes\tclients"
    );
    let want = expected(&log);
    let mut got = Expected::new();
    for row in lines {
        let c: Vec<&str> = row.split('\t').collect();
        assert_eq!(c.len(), 18, "{row}");
        assert_eq!(
            c[1].split('/').nth(2).unwrap(),
            c[0],
            "host column of {row}"
        );
        let n = |i: usize| c[i].parse::<u64>().unwrap();
        let sizes = if c[16] == "-" {
            BTreeMap::new()
        } else {
            c[16]
                .split(',')
                .map(|p| {
                    let (s, k) = p.split_once(':').unwrap();
                    (s.parse().unwrap(), k.parse().unwrap())
                })
                .collect()
        };
        // Fewer than 8 distinct clients per row here: all kept.
        assert!(c[17].split(',').count() <= 8);
        let prev = got.insert(
            (c[1].to_owned(), c[2].parse().unwrap()),
            (n(3), n(4), n(10), n(11), n(12), n(15), sizes),
        );
        assert!(prev.is_none(), "two rows for one key: {row}");
    }
    assert_eq!(got, want);
}

#[test]
fn the_merge_of_the_parts_summaries_is_the_summary_of_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read(SAMPLE).unwrap();
    let whole = ok(&["summarize", SAMPLE]);
    assert!(whole.iter().filter(|&&b| b == b'\n').count() > 1_000);
    // Three parts at line boundaries: a file, a gzipped file, stdin.
    let cut = |at: usize| at + log[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let (c1, c2) = (cut(log.len() / 3), cut(2 * log.len() / 3));
    let first = dir.path().join("first.log");
    std::fs::write(&first, &log[..c1]).unwrap();
    let second = dir.path().join("second.log.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&log[c1..c2]).unwrap();
    std::fs::write(&second, gz.finish().unwrap()).unwrap();
    let third = run(&["summarize", "-f", "combined", "-"], Some(&log[c2..]));
    assert!(
        third.status.success(),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
    let parts: Vec<PathBuf> = ["1", "2", "3"]
        .iter()
        .map(|n| dir.path().join(format!("{n}.tsv")))
        .collect();
    std::fs::write(&parts[0], ok(&["summarize", first.to_str().unwrap()])).unwrap();
    std::fs::write(&parts[1], ok(&["summarize", second.to_str().unwrap()])).unwrap();
    std::fs::write(&parts[2], &third.stdout).unwrap();
    let p = |i: usize| parts[i].to_str().unwrap();
    assert!(ok(&["summarize", "--merge", p(2), p(0), p(1)]) == whole);
    // Merging is associative: a merge of merges, one read from stdin.
    let half = ok(&["summarize", "--merge", p(1), p(0)]);
    let out = run(&["summarize", "--merge", p(2), "-"], Some(&half));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == whole);
}

#[test]
fn threads_and_memory_do_not_change_the_output() {
    let one = ok(&["summarize", "-j", "1", SAMPLE]);
    for args in [
        &["summarize", "-j", "2", SAMPLE][..],
        &[
            "summarize",
            "-j",
            "2",
            "--window=86400s",
            "--memory",
            "64K",
            SAMPLE,
        ],
    ] {
        assert!(ok(args) == one, "{args:?}");
    }
    let unique = ok(&["--unique", SAMPLE]);
    let rows = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    let none = ok(&["summarize", "--window", "none", SAMPLE]);
    // The sample's one redirect hint comes first, after its own header.
    let hints = b"host\tfrom\tto\tredirects\n";
    assert!(none.starts_with(hints));
    assert_eq!(
        rows(&none),
        2 + rows(&unique) + 1,
        "the hint, then one row per distinct URL, after the header"
    );
    // The vhost log spans three days and every hour: other windows, other rows.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.log");
    std::fs::write(&path, vhost_log()).unwrap();
    let path = path.to_str().unwrap();
    let n = |w: &str| rows(&ok(&["summarize", "--window", w, path])) - 1;
    let (hour, day, all) = (n("1h"), n("1d"), n("none"));
    assert_eq!(all, 26, "13 paths on two hosts");
    assert!(hour > day && day > all, "{hour} {day} {all}");
    assert_eq!(day, expected(&vhost_log()).len());
}

#[test]
fn a_url_list_after_a_log_has_no_status_size_or_client() {
    // One worker reads the log, then the list: the list's lines must not
    // be read with the places of the last log record's fields.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(
        &log,
        "192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 512 \"-\" \"ua\"\n",
    )
    .unwrap();
    let list = dir.path().join("urls.txt");
    std::fs::write(
        &list,
        "http://example.com/x\nhttp://example.com/a-longer-url-than-the-log-line-is-long-at-all-0123456789\n",
    )
    .unwrap();
    let out = ok(&[
        "summarize",
        "-j",
        "1",
        log.to_str().unwrap(),
        list.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out).unwrap();
    let listed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("example.com\t"))
        .collect();
    assert_eq!(listed.len(), 2, "{text}");
    for row in listed {
        // One hit, no status (`none`), no size, no client.
        let cells: Vec<&str> = row.split('\t').collect();
        assert_eq!(cells[3], "1", "{row}");
        assert_eq!(cells[14], "1", "{row}");
        assert_eq!(cells[15..], ["0", "-", "-"], "{row}");
    }
}

fn fails(args: &[&str], stdin: Option<&[u8]>, code: i32, message: &str) {
    let out = run(args, stdin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(message), "{args:?}: {err}");
}

#[test]
fn bad_input_and_flags_are_errors_that_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let not_summary = dir.path().join("x.tsv");
    std::fs::write(&not_summary, "host\turl\n").unwrap();
    fails(
        &["summarize", "--merge", not_summary.to_str().unwrap()],
        None,
        2,
        "x.tsv:1: not a summary file",
    );
    let good = ok(&["summarize", SAMPLE]);
    let mut bad = good.clone();
    bad.extend_from_slice(b"\t/a\t0\t2\t1\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t5\t5:1\t-\n");
    let rows = good.iter().filter(|&&b| b == b'\n').count() + 1;
    fails(
        &["summarize", "--merge", "-"],
        Some(&bad),
        2,
        &format!("<stdin>:{rows}: not a summary row: the status counts do not add up to the hits"),
    );
    fails(
        &["summarize", "--merge", "/nonexistent/s.tsv"],
        None,
        2,
        "/nonexistent/s.tsv: cannot open",
    );
    for flag in [
        "--unique",
        "--count",
        "--pipe",
        "--key",
        "--explain",
        "--dedup-key",
    ] {
        fails(
            &["summarize", flag, SAMPLE],
            None,
            2,
            &format!("summarize: {flag} does not apply"),
        );
    }
    fails(
        &["summarize", "--window", "1w", SAMPLE],
        None,
        2,
        "--window 1w: not a duration",
    );
    fails(
        &["summarize", "--window"],
        None,
        2,
        "--window needs a value",
    );
    // A run that gives nothing to summarize says so and fails.
    fails(
        &["summarize", "-f", "combined", "-"],
        Some(b"not a log line\n"),
        1,
        "no line gave a URL",
    );
}

#[test]
fn help_names_the_columns_and_the_options() {
    let help = String::from_utf8(ok(&["summarize", "--help"])).unwrap();
    for word in [
        "--window",
        "--merge",
        "s404",
        "sizes",
        "clients",
        "canonurl mine",
        "host from to redirects",
    ] {
        assert!(help.contains(word), "{word} missing from: {help}");
    }
    let main_help = String::from_utf8(ok(&["--help"])).unwrap();
    assert!(main_help.contains("summarize"), "{main_help}");
}

/// A vhost log in which 30 clients each follow a redirect at once
/// (`/old/N` 301 → `/new/N`, `/d/N` 301 → `/d/N/`), one follows after 20 s,
/// and one is sent to another host: the summary's hints are the pairs
/// followed at once, counted.
fn redirect_log() -> String {
    let mut log = String::new();
    let line = |host: &str, client: u64, second: u64, path: &str, status: u16| {
        format!(
            "{host}:443 198.51.100.{client} - - [01/Oct/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" {status} 120 \"-\" \"-\"\n",
            second / 60,
            second % 60
        )
    };
    for c in 0..30u64 {
        let t = c * 40;
        log.push_str(&line("a.example", c, t, &format!("/old/{}", c % 3), 301));
        log.push_str(&line("a.example", c + 100, t, "/other", 200));
        log.push_str(&line(
            "a.example",
            c,
            t + 1,
            &format!("/new/{}", c % 3),
            200,
        ));
        log.push_str(&line("a.example", c, t + 20, &format!("/d/{}", c % 2), 301));
        log.push_str(&line(
            "a.example",
            c,
            t + 20,
            &format!("/d/{}/", c % 2),
            200,
        ));
    }
    log.push_str(&line("a.example", 200, 3_000, "/late", 302));
    log.push_str(&line("a.example", 200, 3_020, "/late-page", 200));
    log.push_str(&line("a.example", 201, 3_000, "/away", 301));
    log.push_str(&line("b.example", 201, 3_001, "/away", 200));
    log
}

#[test]
fn redirects_followed_at_once_are_hints_that_merge() {
    let dir = tempfile::tempdir().unwrap();
    let log = redirect_log();
    let path = dir.path().join("site.log");
    std::fs::write(&path, &log).unwrap();
    let path = path.to_str().unwrap();
    let whole = ok(&["summarize", path]);
    let text = String::from_utf8(whole.clone()).unwrap();
    let head: Vec<&str> = text.lines().take(7).collect();
    assert_eq!(
        head,
        [
            "host\tfrom\tto\tredirects",
            "a.example\thttps://a.example/d/0\thttps://a.example/d/0/\t15",
            "a.example\thttps://a.example/d/1\thttps://a.example/d/1/\t15",
            "a.example\thttps://a.example/old/0\thttps://a.example/new/0\t10",
            "a.example\thttps://a.example/old/1\thttps://a.example/new/1\t10",
            "a.example\thttps://a.example/old/2\thttps://a.example/new/2\t10",
            "host\turl\twindow\thits\ts200\ts301\ts302\ts303\ts307\ts308\ts304\ts404\ts5xx\tother\tnone\tlargest\tsizes\tclients",
        ]
    );
    // The rows are what they were without hints.
    assert_eq!(text.lines().count(), 7 + 15, "{text}");
    // Threads and memory do not change them.
    assert!(ok(&["summarize", "-j", "2", "--memory", "64K", path]) == whole);
    // Summaries of two parts cut between pairs merge into the whole's
    // (hints and rows), in any order, and a merge of the whole is itself.
    let cut = log.match_indices('\n').nth(5 * 14 - 1).unwrap().0 + 1;
    let mut parts = Vec::new();
    for (i, part) in [&log[..cut], &log[cut..]].iter().enumerate() {
        let p = dir.path().join(format!("{i}.log"));
        std::fs::write(&p, part).unwrap();
        let s = dir.path().join(format!("{i}.tsv"));
        std::fs::write(&s, ok(&["summarize", p.to_str().unwrap()])).unwrap();
        parts.push(s.to_str().unwrap().to_owned());
    }
    assert!(ok(&["summarize", "--merge", &parts[1], &parts[0]]) == whole);
    let w = dir.path().join("whole.tsv");
    std::fs::write(&w, &whole).unwrap();
    assert!(ok(&["summarize", "--merge", w.to_str().unwrap()]) == whole);
    // A bad hint line is an error naming the file and line; so is a hint
    // section without the rows' header after it.
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, text.replacen("\t15\n", "\tx\n", 1)).unwrap();
    let bad = bad.to_str().unwrap();
    fails(
        &["summarize", "--merge", bad],
        None,
        2,
        &format!("{bad}:2: not a summary row: bad 'redirects' value"),
    );
    let cut_off = dir.path().join("cut.tsv");
    std::fs::write(&cut_off, head[..3].join("\n") + "\n").unwrap();
    let cut_off = cut_off.to_str().unwrap();
    fails(
        &["summarize", "--merge", cut_off],
        None,
        2,
        &format!("{cut_off}:4: the summary ends in its redirect hints"),
    );
}
