//! `canonurl mine` (issue 15) on the synthetic sites of
//! `data/gen-dust-site.py`, scored by `data/dust-eval.py` on held-out URLs
//! (pages the log never showed): the mined rules merge almost only pairs of
//! one page (precision), and most of them (recall). Also: the mined file
//! reads with `--rules` (its unverified rules too, once uncommented),
//! applying it is idempotent, mining logs equals mining their summaries,
//! a log without hosts gives top-level rules, and bad use is a clear error.
//!
//! Needs python3 (standard library only) for the generator; the tests that
//! use it skip, saying so, without it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::dust::have_python as python;

const CANONURL: &str = env!("CARGO_BIN_EXE_canonurl");

fn have_python() -> bool {
    python("mine")
}

/// A site of half the default pages over 8 days: small enough to be quick,
/// large enough that most families have the support the defaults ask for.
fn generate(dir: &Path, seed: u32) -> (PathBuf, PathBuf) {
    generate_with(dir, seed, &[])
}

/// [`generate`]'s site with more options of the generator.
fn generate_with(dir: &Path, seed: u32, more: &[&str]) -> (PathBuf, PathBuf) {
    let shape = [
        "--days",
        "8",
        "--requests",
        "80000",
        "--scale",
        "0.5",
        "--holdout",
        "0.3",
    ];
    common::dust::generate(dir, seed, &[&shape[..], more].concat())
}

fn canonurl(args: &[&str], files: &[&Path]) -> Output {
    Command::new(CANONURL)
        .args(args)
        .args(files)
        .output()
        .expect("run canonurl")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Scores the held-out URLs of `truth` with `rules`; the JSON report.
fn evaluate(truth: &Path, rules: &Path) -> serde_json::Value {
    common::dust::evaluate(CANONURL, truth, Some(rules), false)
}

#[test]
fn mined_rules_merge_held_out_pairs_of_one_page_and_almost_nothing_else() {
    if !have_python() {
        return;
    }
    // Two sites: the goal holds for more than one draw of the generator.
    for seed in [11, 5] {
        mined_rules_score(seed);
    }
}

fn mined_rules_score(seed: u32) {
    let dir = tempfile::tempdir().unwrap();
    let (log, truth) = generate(dir.path(), seed);
    let rules = dir.path().join("mined.toml");
    let evidence = dir.path().join("evidence.jsonl");
    let out = canonurl(
        &["mine", "--stats", "-o", rules.to_str().unwrap()],
        &[Path::new("--evidence"), &evidence, &log],
    );
    ok(&out);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let report = evaluate(&truth, &rules);
    let base = &report["baseline"];
    let mined = &report["with_rules"];
    assert!(mined["true_pairs"].as_u64().unwrap() > 500, "{mined}");
    // The issue's goal: precision at least 0.99 at recall at least 0.80.
    let precision = mined["precision"].as_f64().unwrap();
    let recall = mined["recall"].as_f64().unwrap();
    assert!(
        precision >= 0.99,
        "seed {seed}: precision {precision}: {mined}"
    );
    assert!(recall >= 0.80, "seed {seed}: recall {recall}: {mined}");
    assert!(recall > base["recall"].as_f64().unwrap() + 0.5, "{base}");
    // The families this site gives enough support for, each learned whole.
    let by_family = &mined["recall_by_family"];
    for family in ["irrelevant-param", "case", "slug", "drift-param"] {
        let r = by_family[family].as_f64().unwrap();
        assert!(r >= 0.95, "seed {seed}: {family}: recall {r}");
    }
    assert!(
        by_family["substitution"].as_f64().unwrap() > 0.5,
        "{by_family}"
    );
    // None of the traps is merged with a page it is not: templates, content
    // and reorder-only parameters, soft 404s, yesterday's view of a page.
    let false_merges = &mined["false_merge_urls_by_family"];
    for trap in [
        "template",
        "content-param",
        "reorder",
        "soft-404",
        "drift-yesterday",
    ] {
        assert!(
            false_merges[trap].as_u64().unwrap_or(0) == 0,
            "seed {seed}: trap {trap} merged: {false_merges}"
        );
    }
    // The traps were not learned: no rule drops `sort` (reorder-only), and
    // the evidence says why.
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(!text.contains("\"sort\""), "{text}");
    let evidence = std::fs::read_to_string(&evidence).unwrap();
    let objects: Vec<serde_json::Value> = evidence
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sort = objects
        .iter()
        .find(|o| o["rule"].as_str().unwrap().ends_with("drop-params sort"))
        .expect("the sort candidate is in the evidence");
    assert_eq!(sort["decision"], "rejected", "{sort}");
    for o in &objects {
        assert!(o["learn"]["examples"].as_array().unwrap().len() <= 5);
        if o["decision"] == "accepted" {
            // An accepted rule's id and headline are in the rules file.
            let id = o["id"].as_str().unwrap();
            assert!(text.contains(&format!("# {id} ")), "{id}");
            assert_eq!(o["learn"]["status_contradict"], 0, "{o}");
        }
    }
}

#[test]
fn redirects_clients_follow_teach_a_moved_prefix() {
    if !have_python() {
        return;
    }
    // The site with docs.example, whose moved pages (no digits: only the
    // redirects say which old URL is which new one) answer 301, each
    // followed a second later by the same client's request for the new URL.
    let dir = tempfile::tempdir().unwrap();
    let (log, truth) = generate_with(dir.path(), 11, &["--redirects"]);
    let rules = dir.path().join("mined.toml");
    let evidence = dir.path().join("evidence.jsonl");
    ok(&canonurl(
        &["mine", "-o", rules.to_str().unwrap()],
        &[Path::new("--evidence"), &evidence, &log],
    ));
    let text = std::fs::read_to_string(&rules).unwrap();
    let evidence = std::fs::read_to_string(&evidence).unwrap();
    // Both moves learned, accepted, with the redirects that said them.
    for (regex, replace) in [
        (r"^/kb(/.*)$", "/help/articles${1}"),
        (r"^/old\-docs(/.*)$", "/docs${1}"),
    ] {
        let o: serde_json::Value = evidence
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|o| o["rule"] == format!("rewrite {regex} -> {replace}"))
            .unwrap_or_else(|| panic!("no candidate {regex}: {evidence}"));
        assert_eq!(o["family"], "moved-prefix", "{o}");
        assert_eq!(o["decision"], "accepted", "{o}");
        assert!(o["redirects"].as_u64().unwrap() > 100, "{o}");
        assert_eq!(o["held_out"]["status_contradict"], 0, "{o}");
        assert!(text.contains("redirects followed"), "{text}");
    }
    // Scored on the held-out pages: the moved pages are merged with their
    // new URLs, and the site as a whole still meets the goal.
    let report = evaluate(&truth, &rules);
    let mined = &report["with_rules"];
    let moved = mined["recall_by_family"]["moved-prefix"].as_f64().unwrap();
    assert!(moved >= 0.95, "moved-prefix recall {moved}: {mined}");
    assert!(mined["precision"].as_f64().unwrap() >= 0.99, "{mined}");
    assert!(mined["recall"].as_f64().unwrap() >= 0.80, "{mined}");
    assert_eq!(
        mined["false_merge_urls_by_family"]
            .as_object()
            .map_or(0, |m| m.len()),
        0,
        "{mined}"
    );
}

/// Every spelling in `truth` (held out or not), one per line.
fn truth_urls(truth: &Path) -> String {
    let text = std::fs::read_to_string(truth).unwrap();
    let mut urls: String = text
        .lines()
        .skip(1)
        .map(|row| row.split('\t').next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    urls.push('\n');
    urls
}

fn pipe(rules: &Path, input: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(CANONURL)
        .args([
            "-f",
            "plain",
            "--pipe",
            "--profile",
            "aggressive",
            "--rules",
        ])
        .arg(rules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(&out)
}

/// Uncomments the rules `mine` wrote commented out as unverified (their
/// headlines, `# m-...`, and the file's header stay comments).
fn uncomment(text: &str) -> String {
    const RULE_STARTS: [&str; 10] = [
        "[",
        "]",
        "{",
        "\"",
        "rules",
        "extra-index-files",
        "rewrite",
        "drop-params",
        "defaults",
        "prefix",
    ];
    let mut out = String::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let body = &line[indent..];
        match body.strip_prefix("# ") {
            Some(rule) if RULE_STARTS.iter().any(|s| rule.starts_with(s)) => {
                out.push_str(&line[..indent]);
                out.push_str(rule);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_mined_file_reads_with_rules_and_applying_it_is_idempotent() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, truth) = generate(dir.path(), 12);
    let urls = truth_urls(&truth);
    // Active rules, and (with a confirmation no site gives) every rule
    // written commented out as unverified.
    let active = dir.path().join("active.toml");
    ok(&canonurl(
        &["mine", "-o", active.to_str().unwrap()],
        &[&log],
    ));
    let unverified = dir.path().join("unverified.toml");
    ok(&canonurl(
        &[
            "mine",
            "--min-confirm",
            "1000000000",
            "-o",
            unverified.to_str().unwrap(),
        ],
        &[&log],
    ));
    let commented = std::fs::read_to_string(&unverified).unwrap();
    assert!(commented.contains("unverified (held out:"), "{commented}");
    // Nothing active: the file changes no URL beyond the profile.
    let none = dir.path().join("none.toml");
    std::fs::write(&none, "").unwrap();
    assert_eq!(pipe(&unverified, &urls), pipe(&none, &urls));
    // Uncommented, it is the active file's rules.
    let switched_on = dir.path().join("switched-on.toml");
    std::fs::write(&switched_on, uncomment(&commented)).unwrap();
    let once = pipe(&active, &urls);
    assert_ne!(once, pipe(&none, &urls));
    assert_eq!(pipe(&switched_on, &urls), once);
    // Idempotent: the output canonicalized again is itself.
    assert_eq!(pipe(&active, &once), once);
}

#[test]
fn mining_logs_equals_mining_their_summaries() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = generate(dir.path(), 13);
    let evidence = [
        dir.path().join("direct.jsonl"),
        dir.path().join("parts.jsonl"),
    ];
    let direct = ok(&canonurl(&["mine", "--evidence"], &[&evidence[0], &log]));
    // The summary in two parts (by line), merged by mine itself.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 3);
    let mut parts = Vec::new();
    for (i, part) in [a, b].iter().enumerate() {
        let part_log = dir.path().join(format!("part{i}.log"));
        std::fs::write(&part_log, part.join("\n") + "\n").unwrap();
        let summary = dir.path().join(format!("part{i}.tsv"));
        ok(&canonurl(
            &[
                "summarize",
                "--profile",
                "aggressive",
                "-o",
                summary.to_str().unwrap(),
            ],
            &[&part_log],
        ));
        parts.push(summary);
    }
    let from_summaries = ok(&canonurl(
        &["mine", "--summaries", "--evidence"],
        &[&evidence[1], &parts[1], &parts[0]],
    ));
    assert!(direct.contains("[[host]]"), "{direct}");
    assert_eq!(direct, from_summaries);
    // The evidence too, examples included: nothing depends on hash order.
    let [a, b] = evidence.map(|e| std::fs::read_to_string(e).unwrap());
    assert!(a.lines().count() > 5, "{a}");
    assert_eq!(a, b);
    // One summary of the whole log is mined as it is (not merged first);
    // the same rows in reverse order are not sorted, so they are merged:
    // both give the same rules and evidence.
    let whole = dir.path().join("whole.tsv");
    ok(&canonurl(
        &[
            "summarize",
            "--profile",
            "aggressive",
            "-o",
            whole.to_str().unwrap(),
        ],
        &[&log],
    ));
    let text = std::fs::read_to_string(&whole).unwrap();
    // The redirect hints and the header stay first; the rows are reversed.
    let at = text.find("host\turl\twindow\t").unwrap();
    let (head, rows) = text.split_at(text[at..].find('\n').unwrap() + at + 1);
    let reversed = dir.path().join("reversed.tsv");
    let mut rev = head.to_owned();
    for row in rows.lines().rev() {
        rev.push_str(row);
        rev.push('\n');
    }
    std::fs::write(&reversed, rev).unwrap();
    for summary in [&whole, &reversed] {
        let ev = dir.path().join("one.jsonl");
        let rules = ok(&canonurl(
            &["mine", "--summaries", "--evidence"],
            &[&ev, summary],
        ));
        assert_eq!(rules, direct, "{}", summary.display());
        assert_eq!(
            std::fs::read_to_string(&ev).unwrap(),
            a,
            "{}",
            summary.display()
        );
    }
}

#[test]
fn a_log_without_hosts_gives_top_level_rules() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = generate(dir.path(), 14);
    // The case-insensitive site's lines as a combined log (no host field).
    let text = std::fs::read_to_string(&log).unwrap();
    let combined: String = text
        .lines()
        .filter(|l| l.starts_with("iis.example:443 "))
        .map(|l| format!("{}\n", &l["iis.example:443 ".len()..]))
        .collect();
    let iis = dir.path().join("iis.log");
    std::fs::write(&iis, combined).unwrap();
    let rules = ok(&canonurl(&["mine", "-f", "combined"], &[&iis]));
    assert!(!rules.contains("[[host]]"), "{rules}");
    let active: Vec<&str> = rules.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(active, ["rules = [\"+lowercase-path\"]"], "{rules}");
}

#[test]
fn bad_use_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(
        &log,
        "h.example:443 192.0.2.1 - - [01/Oct/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 512 \"-\" \"-\"\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["mine", "--min-agreement", "2"],
            "--min-agreement 2: a fraction",
        ),
        (&["mine", "--learn", "0"], "--learn 0: a percentage"),
        (
            &["mine", "--min-support", "many"],
            "--min-support many: not a number",
        ),
        (&["mine", "--unique"], "mine: --unique does not apply"),
        (&["mine", "--no-such-flag"], "--no-such-flag"),
    ];
    for (args, message) in cases {
        let out = canonurl(args, &[&log]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // Without the log: no input; a flag without its value.
    for (args, message) in [
        (&["mine"][..], "mine: no input"),
        (
            &["mine", &log.to_string_lossy(), "--evidence"][..],
            "--evidence needs a value",
        ),
    ] {
        let out = Command::new(CANONURL).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A summary file that is not one: named, with its line.
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, "not a summary\n").unwrap();
    let out = canonurl(&["mine", "--summaries"], &[&bad]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.tsv"), "{stderr}");
    // A bad row in one summary, sorted or not (read as it is, or merged):
    // named with its file and line.
    let one = dir.path().join("one.tsv");
    ok(&canonurl(
        &["summarize", "-o", one.to_str().unwrap()],
        &[&log],
    ));
    let summary = std::fs::read_to_string(&one).unwrap();
    for (row, why) in [
        ("zz.example\t/b\t-\tmany\n", "hits"),
        ("a.example\t/b\tlater\n", "window"),
    ] {
        let bad = dir.path().join("bad-row.tsv");
        std::fs::write(&bad, format!("{summary}{row}")).unwrap();
        let out = canonurl(&["mine", "--summaries"], &[&bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("bad-row.tsv:3:"), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
    }
    // A summary without windows cannot be split into learning and
    // confirming parts: refused, unless nothing is confirmed.
    let timeless = dir.path().join("timeless.tsv");
    ok(&canonurl(
        &[
            "summarize",
            "--window",
            "none",
            "-o",
            timeless.to_str().unwrap(),
        ],
        &[&log],
    ));
    let out = canonurl(&["mine", "--summaries"], &[&timeless]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("timeless.tsv: no row has a time window"),
        "{stderr}"
    );
    assert!(stderr.contains("--learn 100"), "{stderr}");
    ok(&canonurl(
        &["mine", "--summaries", "--learn", "100"],
        &[&timeless],
    ));
    // A missing file.
    let out = canonurl(&["mine", "--summaries"], &[&dir.path().join("missing.tsv")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.tsv: cannot open"), "{stderr}");
    // One line, one URL: nothing to learn, but a valid (empty) rules file.
    let out = canonurl(&["mine"], &[&log]);
    let rules = ok(&out);
    assert!(rules.lines().all(|l| l.starts_with('#')), "{rules}");
}

/// `data/mine-report.py`, the real-log report, on a generated site (where
/// rules are learned): it lists the log, counts the accepted rules as the
/// evidence file has them, and their held-out merges, nearly all confirmed
/// and none a 200 against a 404 (the issue's aim for real logs, which
/// `--check` tests); a log it cannot mine is listed with the reason.
#[test]
fn the_real_log_report_reads_the_evidence() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = generate(dir.path(), 13);
    let bad = dir.path().join("not-a-log.txt");
    std::fs::write(&bad, "no log here\n").unwrap();
    let json = dir.path().join("report.json");
    let out = Command::new("python3")
        .arg(common::dust::data("mine-report.py"))
        .args(["--canonurl", CANONURL, "--check", "--json"])
        .arg(&json)
        .arg(&log)
        .arg(&bad)
        .output()
        .expect("run python3");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "mine-report.py --check failed");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mined = report["mined"].as_array().unwrap();
    assert_eq!(mined.len(), 1, "{report}");
    let accepted = mined[0]["decisions"]["accepted"].as_u64().unwrap();
    // The evidence file the report read says the same.
    let evidence = dir.path().join("ev.jsonl");
    ok(&canonurl(
        &[
            "mine",
            "-o",
            "/dev/null",
            "--evidence",
            evidence.to_str().unwrap(),
        ],
        &[&log],
    ));
    let in_file = std::fs::read_to_string(&evidence)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"decision\":\"accepted\""))
        .count() as u64;
    assert!(
        accepted > 0 && accepted == in_file,
        "{accepted} vs {in_file}"
    );
    let held = &mined[0]["held_out"]["accepted"];
    let agree = held["agree"].as_u64().unwrap();
    let against =
        held["contradict"].as_u64().unwrap() + held["status_contradict"].as_u64().unwrap();
    assert_eq!(held["status_contradict"].as_u64(), Some(0), "{held}");
    assert!(
        agree > 0 && agree as f64 >= 0.95 * (agree + against) as f64,
        "{held}"
    );
    let not_mined = report["not_mined"].as_array().unwrap();
    assert_eq!(not_mined.len(), 1, "{report}");
    assert!(not_mined[0][0].as_str().unwrap().ends_with("not-a-log.txt"));
    assert!(text.contains("site-13.log"), "{text}");
}

/// `--memory` bounds the miner's own tables: within the default budget no
/// URL is left out; within one far smaller than the site's tables, `--stats`
/// says how many were, and the rules file still reads with `--rules`.
#[test]
fn a_small_memory_budget_samples_and_says_so() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = generate(dir.path(), 17);
    let left_out = |memory: &str| {
        let rules = dir.path().join(format!("mined-{memory}.toml"));
        let out = canonurl(
            &[
                "mine",
                "--stats",
                "--memory",
                memory,
                "-o",
                rules.to_str().unwrap(),
            ],
            &[&log],
        );
        ok(&out);
        let stats = String::from_utf8_lossy(&out.stderr).into_owned();
        let tail = stats
            .split("left out for --memory: ")
            .nth(1)
            .unwrap_or_else(|| panic!("no sampling count in {stats}"));
        let counts: Vec<u64> = tail
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .take(2)
            .map(|w| w.parse().unwrap())
            .collect();
        // The file reads as it is.
        ok(&canonurl(
            &["--rules", rules.to_str().unwrap(), "-f", "plain", "--pipe"],
            &[Path::new("/dev/null")],
        ));
        counts
    };
    assert_eq!(left_out("256MiB"), [0, 0]);
    let small = left_out("200KiB");
    assert!(small[0] > 0 && small[1] > 0, "{small:?}");
}

/// A log of one day still splits into a learning and a confirming part:
/// sizes are compared by hour (the miner summarizes logs by hour and keeps
/// the longest window that gives the log 8), and rules are confirmed on the
/// last third of the day.
#[test]
fn a_log_of_one_day_is_learned_and_confirmed_by_hour() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (log, truth) = common::dust::generate(
        dir.path(),
        21,
        &[
            "--days",
            "1",
            "--requests",
            "60000",
            "--scale",
            "0.5",
            "--holdout",
            "0.3",
        ],
    );
    let rules = dir.path().join("mined.toml");
    let out = canonurl(&["mine", "--stats", "-o", rules.to_str().unwrap()], &[&log]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("canonurl mine:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    // 24 hours: the first two thirds (16) learn, the last 8 confirm.
    assert!(
        line.contains(" 16 windows of 1h learned, 8 confirmed"),
        "{line}"
    );
    let text = std::fs::read_to_string(&rules).unwrap();
    let active = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .count();
    assert!(active > 0, "no rule confirmed within the day: {text}");
    let report = evaluate(&truth, &rules);
    let precision = report["with_rules"]["precision"].as_f64().unwrap();
    assert!(precision >= 0.99, "{report}");
}

/// Redirects from `http` to `https` of one target are reported in the
/// evidence (the rules file could say `+http-as-https`, but the miner has
/// no sizes of the two spellings apart to confirm it), never written.
#[test]
fn redirects_to_https_are_reported_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = String::new();
    for n in 0..4 {
        for c in 0..3 {
            let t = 10 * n + 100 * c;
            for (port, second, status, size) in [(80, t, 301, 0), (443, t + 1, 200, 1000 + n)] {
                log.push_str(&format!(
                    "a.example:{port} 198.51.100.{c} - - [01/Oct/2026:10:{:02}:{:02} +0000] \"GET /p/{n} HTTP/1.1\" {status} {size} \"-\" \"-\"\n",
                    second / 60,
                    second % 60
                ));
            }
        }
    }
    let path = dir.path().join("s.log");
    std::fs::write(&path, log).unwrap();
    let evidence = dir.path().join("e.jsonl");
    let rules = ok(&canonurl(
        &["mine", "--learn", "100", "--evidence"],
        &[&evidence, &path],
    ));
    assert!(!rules.contains("http-as-https"), "{rules}");
    let evidence = std::fs::read_to_string(&evidence).unwrap();
    let o: serde_json::Value = evidence
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|o| o["family"] == "http-as-https")
        .unwrap_or_else(|| panic!("{evidence}"));
    assert_eq!(o["rule"], "+http-as-https", "{o}");
    assert_eq!(o["decision"], "rejected", "{o}");
    assert_eq!(
        (o["redirects"].as_u64(), o["proposed_by_pairs"].as_u64()),
        (Some(12), Some(4))
    );
}
