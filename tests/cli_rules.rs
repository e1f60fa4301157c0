//! The command's dedup flags: `--profile safe|aggressive`, `--rule`,
//! `--rules`, `--list-rules`, `--dedup-key`/`--key-profile`, `--explain`,
//! `--surt`, and the per-rule statistics.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::run_canonurl as canonurl;

fn stdout(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

fn lines(o: &Output) -> Vec<String> {
    stdout(o).lines().map(str::to_owned).collect()
}

/// XXH64 seed 42 as a signed decimal, through the library (the CLI tests
/// of `--key` check the library against an independent XXH64).
fn key(url: &str) -> String {
    canonurl::pipeline::key(url.as_bytes()).to_string()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const MESSY: &str = "http://www.Example.com/a//b/index.html?utm_source=x&b=2&a=1&id=#frag\n";

#[test]
fn profiles_go_from_faithful_to_aggressive() {
    let run = |p: &str| {
        lines(&canonurl(
            &["-f", "plain", "--profile", p],
            MESSY.as_bytes(),
        ))
    };
    assert_eq!(
        run("rfc3986"),
        ["http://www.example.com/a//b/index.html?utm_source=x&b=2&a=1&id=#frag"]
    );
    assert_eq!(
        run("safe"),
        ["http://www.example.com/a//b/index.html?b=2&a=1"]
    );
    assert_eq!(run("aggressive"), ["http://example.com/a/b?a=1&b=2"]);
}

#[test]
fn rule_edits_switch_rules_and_policies() {
    let run = |rule: &str| {
        lines(&canonurl(
            &["-f", "plain", "--profile", "aggressive", "--rule", rule],
            MESSY.as_bytes(),
        ))
    };
    assert_eq!(run("-www"), ["http://www.example.com/a/b?a=1&b=2"]);
    assert_eq!(
        run("-www,-sort-query,trailing-slash=add"),
        ["http://www.example.com/a/b/?b=2&a=1"]
    );
    assert_eq!(
        run("-index-file"),
        ["http://example.com/a/b/index.html?a=1&b=2"]
    );
    // Repeated --rule flags add up; an unknown rule is a usage error.
    let o = canonurl(
        &["-f", "plain", "--rule", "+fragment", "--rule", "+www"],
        MESSY.as_bytes(),
    );
    assert_eq!(
        lines(&o),
        ["http://example.com/a//b/index.html?utm_source=x&b=2&a=1&id="]
    );
    let o = canonurl(&["-f", "plain", "--rule", "+nope"], MESSY.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown rule 'nope'"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn rules_file_sets_rules_per_host() {
    let file = temp_file(
        "cli-rules.toml",
        r#"
state-params = ["back"]

[[host]]
match = ["shop.example", "*.shop.example"]
rules = ["+lowercase-path", "-sort-query"]
defaults = { sort = "ascending" }
rewrite = [{ regex = '/story\?id=(\d+)', replace = '/story_$1' }]
"#,
    );
    let input = "http://a.shop.example/Story?id=12&back=/x&sort=ascending&z=1\n\
                 http://www.shop.example/B?z=1&a=2\n\
                 http://other.example/Story?z=1&a=2&back=1\n";
    let out = lines(&canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "aggressive",
            "--rules",
            file.to_str().unwrap(),
            "--explain",
        ],
        input.as_bytes(),
    ));
    assert_eq!(
        out,
        [
            // lower-cased, state and default parameter gone, rewritten.
            "http://a.shop.example/story_12&z=1\tsession,lowercase-path,default-params,rewrite",
            // `www.shop.example` matches `*.shop.example`, and www goes.
            "http://shop.example/b?z=1&a=2\twww,lowercase-path",
            // Other hosts: the top level (state parameter) and the tier.
            "http://other.example/Story?a=2&z=1\tsort-query,session",
        ]
    );
    // A broken rules file is a usage error naming the file and the problem.
    let bad = temp_file(
        "cli-rules-bad.toml",
        "[[host]]\nmatch = 'a'\nrules = ['+nope']\n",
    );
    let o = canonurl(&["-f", "plain", "--rules", bad.to_str().unwrap()], b"/a\n");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cli-rules-bad.toml")
            && err.contains("host section 1")
            && err.contains("nope"),
        "{err}"
    );
}

#[test]
fn dedup_key_beside_the_url() {
    let o = canonurl(&["-f", "plain", "--dedup-key", "--key"], MESSY.as_bytes());
    let url = "http://www.example.com/a//b/index.html?utm_source=x&b=2&a=1&id=#frag";
    let dedup = "http://example.com/a/b?a=1&b=2";
    assert_eq!(
        lines(&o),
        [format!("{url}\t{}\t{dedup}\t{}", key(url), key(dedup))]
    );
    // --key-profile implies --dedup-key.
    let o = canonurl(&["-f", "plain", "--key-profile", "safe"], MESSY.as_bytes());
    let safe = "http://www.example.com/a//b/index.html?b=2&a=1";
    assert_eq!(lines(&o), [format!("{url}\t{safe}\t{}", key(safe))]);
    // TSV: two columns at the end; JSON Lines: two keys.
    let o = canonurl(
        &["-f", "plain", "--dedup-key", "--format", "tsv"],
        MESSY.as_bytes(),
    );
    let row = lines(&o).remove(0);
    let cols: Vec<&str> = row.split('\t').collect();
    assert_eq!(cols.len(), 6, "{row}");
    assert_eq!(
        (cols[1], cols[4], cols[5]),
        (url, dedup, key(dedup).as_str())
    );
    let o = canonurl(
        &["-f", "plain", "--dedup-key", "--format", "jsonl"],
        MESSY.as_bytes(),
    );
    let v: serde_json::Value = serde_json::from_str(&lines(&o)[0]).unwrap();
    assert_eq!(v["dedup"], dedup);
    assert_eq!(v["dedup_key"].to_string(), key(dedup));
    // It is a column of records: with --unique the grouping is --profile's.
    let o = canonurl(
        &["-f", "plain", "--dedup-key", "--unique"],
        MESSY.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_names_the_rules_that_fired() {
    let input = "http://example.com/a\nhttp://example.com/a/#x\n";
    let o = canonurl(
        &["-f", "plain", "--profile", "aggressive", "--explain"],
        input.as_bytes(),
    );
    assert_eq!(
        lines(&o),
        [
            "http://example.com/a\t-",
            "http://example.com/a\tfragment,trailing-slash"
        ]
    );
    let o = canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "aggressive",
            "--explain",
            "--format",
            "jsonl",
        ],
        input.as_bytes(),
    );
    let second: serde_json::Value = serde_json::from_str(&lines(&o)[1]).unwrap();
    assert_eq!(
        second["rules"],
        serde_json::json!(["fragment", "trailing-slash"])
    );
}

#[test]
fn stats_count_changes_and_merges_per_rule() {
    let input = "http://www.a.com/x\nhttp://a.com/x/\nhttp://a.com/x#f\nhttp://a.com/x#f\nhttp://b.com/y?utm_id=1\n";
    let json = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-rules-stats.json");
    let o = canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "aggressive",
            "--unique",
            "--stats-json",
            json.to_str().unwrap(),
        ],
        input.as_bytes(),
    );
    assert_eq!(lines(&o), ["http://a.com/x", "http://b.com/y"]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["rules"];
    // Changed: every URL but none (www, trailing slash, fragment twice, tracking).
    assert_eq!(r["urls_changed"], 5);
    assert_eq!(r["by_rule"]["www"]["changed"], 1);
    assert_eq!(r["by_rule"]["fragment"]["changed"], 2);
    assert_eq!(r["by_rule"]["tracking"]["changed"], 1);
    // Merged: `a.com/x/` (trailing-slash) and `a.com/x#f` (fragment) joined
    // `a.com/x`, first written for `www.a.com/x`; the second `#f` is no new
    // distinct URL.
    assert_eq!(r["by_rule"]["trailing-slash"]["merged"], 1);
    assert_eq!(r["by_rule"]["fragment"]["merged"], 1);
    assert_eq!(r["by_rule"]["www"]["merged"], 0);
    assert_eq!(r["distinct_before_rules"], 4);
    assert_eq!(v["distinct"], 2);
    // Without rules there is no rule table.
    let o = canonurl(
        &["-f", "plain", "--stats-json", json.to_str().unwrap()],
        input.as_bytes(),
    );
    stdout(&o);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["rules"].is_null());
}

#[test]
fn surt_forms() {
    let input = "http://www.archive.org/goo/?b=1&a=2\n";
    let o = canonurl(&["-f", "plain", "--surt"], input.as_bytes());
    assert_eq!(lines(&o), ["org,archive,www)/goo/?b=1&a=2"]);
    let o = canonurl(
        &["-f", "plain", "--surt", "--profile", "aggressive"],
        input.as_bytes(),
    );
    assert_eq!(lines(&o), ["org,archive)/goo?a=2&b=1"]);
    let o = canonurl(&["-f", "plain", "--surt=classic"], input.as_bytes());
    assert_eq!(lines(&o), ["http://(org,archive,www,)/goo/?b=1&a=2"]);
}

#[test]
fn list_rules_lists_every_rule() {
    let o = canonurl(&["--list-rules"], b"");
    let text = stdout(&o);
    for r in canonurl::canon::rules::Rule::ALL {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(r.name()))
            .unwrap_or_else(|| panic!("{} not listed:\n{text}", r.name()));
        assert!(line.contains(r.tier().name()), "{line}");
    }
}

#[test]
fn logs_get_the_rules_with_their_hosts() {
    // A combined log line with no host: path-only, still deduplicated.
    let log = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a/index.php?PHPSESSID=x&b=1&utm_medium=m HTTP/1.1\" 200 1 \"-\" \"ua\"\n";
    let o = canonurl(&["--profile", "aggressive"], log.as_bytes());
    assert_eq!(lines(&o), ["/a?b=1"]);
    let o = canonurl(
        &[
            "--profile",
            "aggressive",
            "--base",
            "https://www.example.com/",
        ],
        log.as_bytes(),
    );
    assert_eq!(lines(&o), ["https://example.com/a?b=1"]);
}
