//! The command's dedup flags: `--profile safe|aggressive`, `--rule`,
//! `--rules`, `--list-rules`, `--dedup-key`/`--key-profile`, `--explain`,
//! `--surt`, and the per-rule statistics.

use crate::common;

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
    // index-file leaves `/a//b/`, duplicate-slashes `/a/b/`: the directory
    // keeps its slash (trailing-slash=add, the default).
    assert_eq!(run("aggressive"), ["http://example.com/a/b/?a=1&b=2"]);
}

#[test]
fn rule_edits_switch_rules_and_policies() {
    let run = |rule: &str| {
        lines(&canonurl(
            &["-f", "plain", "--profile", "aggressive", "--rule", rule],
            MESSY.as_bytes(),
        ))
    };
    assert_eq!(run("-www"), ["http://www.example.com/a/b/?a=1&b=2"]);
    assert_eq!(
        run("-www,-sort-query,trailing-slash=remove"),
        ["http://www.example.com/a/b?b=2&a=1"]
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
rewrite = [{ regex = '/story\?id=(\d+)&?', replace = '/story_$1?' }]
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
            // The directory gets its slash after the rewrite
            // (trailing-slash=add, the default).
            "http://a.shop.example/story_12/?z=1\tsession,trailing-slash,lowercase-path,default-params,rewrite",
            // `www.shop.example` matches `*.shop.example`, and www goes.
            "http://shop.example/b/?z=1&a=2\twww,trailing-slash,lowercase-path",
            // Other hosts: the top level (state parameter) and the tier.
            "http://other.example/Story/?a=2&z=1\tsort-query,session,trailing-slash",
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
        err.starts_with(&format!(
            "canonurl: --rules {}: line 3: host section 1 (match = \"a\"): 'rules': unknown rule 'nope'",
            bad.display()
        )),
        "{err}"
    );
}

/// Runs a rules file `text` (saved as `name`) with `args` on `/a`: the exit
/// status, stdout and stderr.
fn with_rules_file(name: &str, text: &[u8], args: &[&str], input: &str) -> (i32, String, String) {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    let mut all = vec!["-f", "plain", "--rules", p.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = canonurl(&all, input.as_bytes());
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The one-line error of a broken rules file, after the `--rules PATH: `
/// prefix; checks that it is a usage error with no output.
fn rules_file_error(name: &str, text: &str) -> String {
    let (code, out, err) = with_rules_file(name, text.as_bytes(), &[], "/a\n");
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let prefix = format!(
        "canonurl: --rules {}: ",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(name)
            .display()
    );
    let e = err
        .trim_end()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{err}"))
        .to_string();
    // No Rust debug output (`Many(["a.com"])`, `Some(..)`).
    assert!(
        !e.contains("Many(") && !e.contains("Some(") && !e.contains("One("),
        "{e}"
    );
    e
}

#[test]
fn rules_file_errors_name_the_line_and_the_key() {
    // An unknown key was ignored before: now an error, with a hint.
    assert_eq!(
        rules_file_error(
            "strict-1.toml",
            "rules = [\"-www\"]\n\nextra-tracking-param = [\"ref_src\"]\n"
        ),
        "line 3: unknown key 'extra-tracking-param' (did you mean 'extra-tracking-params'?)"
    );
    // In a host section, named by its patterns as written.
    assert_eq!(
        rules_file_error(
            "strict-2.toml",
            "[[host]]\nmatch = 'a.com'\n\n[[host]]\nmatch = [\"b.com\", \"*.b.com\"]\nkeep-positions = ['page']\n"
        ),
        "line 6: host section 2 (match = \"b.com\", \"*.b.com\"): \
         unknown key 'keep-positions' (did you mean 'keep-position'?)"
    );
    // In a rewrite rule.
    assert_eq!(
        rules_file_error(
            "strict-3.toml",
            "rewrite = [\n  { regex = 'a', replace = 'b', flag = 'i' },\n]\n"
        ),
        "line 2: unknown key 'flag'"
    );
    // Unknown sections.
    assert_eq!(
        rules_file_error("strict-4.toml", "[hosts]\nmatch = 'a'\n"),
        "line 1: unknown section '[hosts]' (did you mean [[host]]?): the sections are \
         [[host]] (with [[host.path]] inside it) and [[path]] (before the first [[host]])"
    );
    let e = rules_file_error(
        "strict-5.toml",
        "[[host]]\nmatch = 'a'\n\n[[rewrite]]\nliteral = '/x'\nreplace = '/y'\n",
    );
    assert!(
        e.starts_with("line 4: unknown section '[[rewrite]]'"),
        "{e}"
    );
    // Values of the wrong type.
    assert_eq!(
        rules_file_error("strict-6.toml", "\nstate-params = 'back'\n"),
        "line 2: 'state-params' must be an array of strings, not a string"
    );
    // Rule names, regexes: the line of the entry, on one line.
    let e = rules_file_error(
        "strict-7.toml",
        "rules = [\n  '-www',\n  '+trailing-slashes',\n]\n",
    );
    assert!(
        e.starts_with("line 3: 'rules': unknown rule 'trailing-slashes'")
            && e.ends_with("(did you mean 'trailing-slash'?)"),
        "{e}"
    );
    assert_eq!(
        rules_file_error(
            "strict-8.toml",
            "[[host]]\nmatch = ['a.com', '*.a.com']\nrewrite = [{ regex = '/(x', replace = '' }]\n"
        ),
        "line 3: host section 1 (match = \"a.com\", \"*.a.com\"): rewrite regex '/(x': unclosed group"
    );
    // TOML syntax errors.
    assert_eq!(
        rules_file_error("strict-9.toml", "rules = []\nrules = []\n"),
        "line 2: duplicate key (at 'rules')"
    );
    // Bytes that are not UTF-8, shown escaped.
    let (code, _, err) = with_rules_file("strict-10.toml", b"rules = []\n# \xff\n", &[], "/a\n");
    assert_eq!(code, 2);
    assert!(
        err.contains(": line 2: not UTF-8 (bytes \"\\xff\")"),
        "{err}"
    );
}

/// A file whose top level switches one rule on, adds to a list and
/// rewrites.
const MIXED_FILE: &str = "extra-tracking-params = ['ref']\n\
                          rules = ['+lowercase-path']\n\
                          rewrite = [{ literal = '/old/', replace = '/new/' }]\n";

#[test]
fn rules_file_with_a_profile_that_runs_no_rules() {
    let input = "http://x.com/OLD/?ref=1\n";
    for profile in ["rfc3986", "whatwg"] {
        // The whole file applies, on top of no rules: lowercase-path runs;
        // the tracking list and the rewrite cannot (their rules are off),
        // and one warning says so, naming their lines.
        let (code, out, err) = with_rules_file(
            "mixed.toml",
            MIXED_FILE.as_bytes(),
            &["--profile", profile],
            input,
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, "http://x.com/old/?ref=1\n");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("canonurl: warning: --rules ")
                && err.contains(&format!("--profile {profile} runs no rules"))
                && err.contains("line 1 'extra-tracking-params' (rule tracking), line 3 'rewrite' (rule rewrite)")
                && err.contains("rules = [\"+tracking\", \"+rewrite\"]")
                && err.contains("--profile safe"),
            "{err}"
        );
        // Switched on, they apply, and there is nothing to warn about;
        // tracking removed the last parameter, so the `?` goes with it
        // (empty-query is off).
        let (code, out, err) = with_rules_file(
            "mixed.toml",
            MIXED_FILE.as_bytes(),
            &["--profile", profile, "--rule", "+tracking,+rewrite"],
            input,
        );
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "http://x.com/new/\n", "")
        );
    }
    // A profile that runs them: no warning.
    let (code, out, err) = with_rules_file(
        "mixed.toml",
        MIXED_FILE.as_bytes(),
        &["--profile", "safe"],
        input,
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "http://x.com/new/\n", "")
    );
    // They tune the dedup key (aggressive): used, no warning.
    let (code, _, err) =
        with_rules_file("mixed.toml", MIXED_FILE.as_bytes(), &["--dedup-key"], input);
    assert_eq!((code, err.as_str()), (0, ""));
    // Off in the URL's profile and in the key's: one warning, not two.
    let (code, _, err) = with_rules_file(
        "index.toml",
        b"index-files = ['home.aspx']\n",
        &["--profile", "safe", "--key-profile", "safe"],
        input,
    );
    assert_eq!(code, 0);
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains("line 1 'index-files' (rule index-file)")
            && err.contains("--profile aggressive"),
        "{err}"
    );
}

#[test]
fn dedup_key_beside_the_url() {
    let o = canonurl(&["-f", "plain", "--dedup-key", "--key"], MESSY.as_bytes());
    let url = "http://www.example.com/a//b/index.html?utm_source=x&b=2&a=1&id=#frag";
    let dedup = "http://example.com/a/b/?a=1&b=2";
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
    assert_eq!(v["dedup_key"].as_str(), Some(key(dedup).as_str()));
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
            "http://example.com/a/\ttrailing-slash",
            "http://example.com/a/\tfragment"
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
    assert_eq!(second["rules"], serde_json::json!(["fragment"]));
}

#[test]
fn explain_with_unique_or_count_is_a_usage_error() {
    for mode in ["--unique", "--count"] {
        let o = canonurl(
            &["-f", "plain", "--profile", "aggressive", "--explain", mode],
            MESSY.as_bytes(),
        );
        assert_eq!(o.status.code(), Some(2), "{mode}");
        assert!(o.stdout.is_empty(), "{mode}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err,
            "canonurl: --explain adds a column to each record; with --unique/--count, \
             --stats counts the distinct URLs each rule merged\n"
        );
    }
    // --pipe is per record: it works there.
    let o = canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "aggressive",
            "--explain",
            "--pipe",
        ],
        MESSY.as_bytes(),
    );
    assert_eq!(lines(&o).len(), 1);
    assert!(
        lines(&o)[0].ends_with(
            "\tfragment,empty-query,index-file,www,sort-query,tracking,duplicate-slashes"
        ),
        "{:?}",
        lines(&o)
    );
}

#[test]
fn stats_count_changes_and_merges_per_rule() {
    let input = "http://www.a.com/x/\nhttp://a.com/x\nhttp://a.com/x/#f\nhttp://a.com/x/#f\nhttp://b.com/y/?utm_id=1\n";
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
    assert_eq!(lines(&o), ["http://a.com/x/", "http://b.com/y/"]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["rules"];
    // Changed: every URL but none (www, trailing slash, fragment twice, tracking).
    assert_eq!(r["urls_changed"], 5);
    assert_eq!(r["by_rule"]["www"]["changed"], 1);
    assert_eq!(r["by_rule"]["fragment"]["changed"], 2);
    assert_eq!(r["by_rule"]["tracking"]["changed"], 1);
    // Merged: `a.com/x` (trailing-slash) and `a.com/x/#f` (fragment) joined
    // `a.com/x/`, first written for `www.a.com/x/`; the second `#f` is no
    // new distinct URL.
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
    assert_eq!(lines(&o), ["org,archive)/goo/?a=2&b=1"]);
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
        let d = r.definition();
        if let Some(setting) = d.setting {
            assert!(line.contains(setting), "{line}");
        }
        let example = format!("{} -> {}", d.example.0, d.example.1);
        assert!(text.contains(&example), "{example} not listed:\n{text}");
    }
}

#[test]
fn logs_get_the_rules_with_their_hosts() {
    // A combined log line with no host: path-only, still deduplicated.
    let log = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a/index.php?PHPSESSID=x&b=1&utm_medium=m HTTP/1.1\" 200 1 \"-\" \"ua\"\n";
    let o = canonurl(&["--profile", "aggressive"], log.as_bytes());
    assert_eq!(lines(&o), ["/a/?b=1"]);
    let o = canonurl(
        &[
            "--profile",
            "aggressive",
            "--base",
            "https://www.example.com/",
        ],
        log.as_bytes(),
    );
    assert_eq!(lines(&o), ["https://example.com/a/?b=1"]);
}

/// The rule table of docs/rules.md is `Rule::markdown_table()`, so the
/// table the rules are defined in is the only place to change a rule's
/// description. With `CANONURL_BLESS=1` the test writes the table into the
/// page.
#[test]
fn docs_rule_table_is_generated_from_the_rule_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let begin = readme
        .find("<!-- rules:begin")
        .expect("docs/rules.md has <!-- rules:begin");
    let body = begin + readme[begin..].find("-->\n").expect("marker closes") + 4;
    let end = readme
        .find("<!-- rules:end -->")
        .expect("docs/rules.md has <!-- rules:end -->");
    let table = canonurl::canon::rules::Rule::markdown_table();
    if readme[body..end] == table {
        return;
    }
    if std::env::var_os("CANONURL_BLESS").is_some() {
        let new = format!("{}{}{}", &readme[..body], table, &readme[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!(
        "docs/rules.md's rule table differs from Rule::markdown_table(); \
         rerun with CANONURL_BLESS=1 to write it. Expected:\n{table}"
    );
}

/// Regression (issue 28): with the aliases of docs/rules.md under `safe`, a host
/// with a trailing dot was aliased with the dot gone, and `--explain`
/// showed only `host-alias`, `--stats` no `host-trailing-dot`, and
/// `--rule -host-trailing-dot` kept nothing. Each rule that changes the URL
/// is reported, and switching one off switches it off.
#[test]
fn host_alias_reports_and_obeys_host_trailing_dot() {
    let rules = temp_file(
        "cli-rules-alias-dot.toml",
        "host-aliases = [\n  [\"203.0.113.7\", \"example.com\"],\n  \
         [\"shuchao.cnblogs.com/\", \"www.cnblogs.com/shuchao/\"],\n]\n",
    );
    let rules = rules.to_str().unwrap();
    let input = "http://shuchao.cnblogs.com./x\n";
    let o = canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "safe",
            "--rules",
            rules,
            "--explain",
        ],
        input.as_bytes(),
    );
    assert_eq!(
        lines(&o),
        ["http://www.cnblogs.com/shuchao/x\thost-trailing-dot,host-alias"]
    );
    let o = canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "safe",
            "--rules",
            rules,
            "--explain",
            "--rule",
            "-host-trailing-dot",
        ],
        input.as_bytes(),
    );
    assert_eq!(lines(&o), ["http://www.cnblogs.com./shuchao/x\thost-alias"]);
}

/// Regression (issue 28): a misspelled `match` in a host section was
/// reported as a missing `match`, without the key or its line.
#[test]
fn misspelled_match_is_named_with_its_line() {
    let rules = temp_file(
        "cli-rules-mach.toml",
        "rules = [\"+www\"]\n\n[[host]]\nmach = \"a.com\"\nrules = [\"-www\"]\n",
    );
    let o = canonurl(
        &["-f", "plain", "--rules", rules.to_str().unwrap()],
        b"http://a.com/\n",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 4: host section 1: unknown key 'mach' (did you mean 'match'?)"),
        "{err}"
    );
}
