//! The scoped rules of issue 13, section 5, from the outside:
//!
//! 1. `keep-params` and `drop-params` per host and per path prefix, and
//!    `defaults` per path prefix: which section a URL gets (the longest
//!    prefix; a prefix ending in `/` also matches the path without it; a
//!    host section gets the top level's path sections), each output
//!    written by hand.
//! 2. `host-aliases`: an IP address or a name to a host, a host to a host
//!    and path prefix; the target host's section applies; the alias is
//!    switched by the source host's section.
//! 3. Rewrites of the whole URL (`scope = "url"`) and rewrite `id`s, which
//!    `--explain` prints (`rewrite:story-id`).
//! 4. `http-as-https` against `https-as-http`: the last one switched on
//!    wins; both in one `rules` list is an error.
//! 5. `duplicate-slashes` keeps the `//` after an embedded `scheme:`.
//! 6. Rules-file errors for the new keys name the line and the key.
//! 7. Idempotence with a rules file that uses every new key, on generated
//!    URLs and on the shared url-dataset: the second run gives the same
//!    bytes and fires nothing.

use crate::common;

use canonurl::canon::rules::{file, Rule, RuleMask};
use canonurl::{Canonicalizer, Profile, ABSENT};
use common::{canon, read_lines, run_canonurl, shared_data_or_skip, show, with_rules};

/// The output of `input` and the rules that fired; panics on a reject.
fn run(c: &mut Canonicalizer, input: &str) -> (String, RuleMask) {
    let mut out = Vec::new();
    let r = canon(c, input.as_bytes(), &mut out).unwrap_or_else(|e| panic!("{input}: {e}"));
    (String::from_utf8(out).unwrap(), r.fired)
}

/// Checks each `(input, expected output)` under `c`, and that the output
/// is a fixed point.
fn check(c: &mut Canonicalizer, cases: &[(&str, &str)]) {
    for &(input, expect) in cases {
        let (got, fired) = run(c, input);
        assert_eq!(got, expect, "{input} (fired {fired})");
        let (again, fired) = run(c, &got);
        assert_eq!(again, got, "{input}: not a fixed point");
        assert!(fired.is_empty(), "{input}: {got} fires {fired} again");
    }
}

/// The error of the rules file `toml` on the aggressive tier.
fn error(toml: &str) -> String {
    let e = file::build(Profile::Aggressive.rule_mask(), Some(toml), &[])
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{toml}"));
    // Rust's Debug output never reaches the user.
    assert!(
        !e.contains("Some(") && !e.contains("Err(") && !e.contains('\n'),
        "{e}"
    );
    e
}

// ---------------------------------------------------------------------------
// 1. keep-params, drop-params and defaults per host and path prefix.

const SCOPED: &str = r#"
drop-params = ["view"]

[[path]]
prefix = "/search/"
keep-params = ["q", "page"]

[[host]]
match = ["shop.test", "*.shop.test"]
defaults = { sort = "asc" }
drop-params = ["view", "lang*"]

[[host.path]]
prefix = "/cart/"
keep-params = ["item", "qty", "lang*"]

[[host.path]]
prefix = "/cart/checkout/"
keep-params = ["item", "coupon", "sort", "step"]
defaults = { step = "1" }

[[host.path]]
prefix = "/search/"
keep-params = ["q*"]

[[host]]
match = "plain.test"
keep-params = ["id"]
"#;

#[test]
fn params_are_scoped_to_hosts_and_path_prefixes() {
    let mut c = with_rules(Profile::Safe, Some(SCOPED), "");
    check(
        &mut c,
        &[
            // Top level: the deny-list; a path section of the top level.
            ("http://a.test/x?id=1&view=grid", "http://a.test/x?id=1"),
            ("http://a.test/x?VIEW=grid&b=1", "http://a.test/x?b=1"),
            (
                "http://a.test/search/all?q=a&page=2&view=1&z=3",
                "http://a.test/search/all?q=a&page=2",
            ),
            // `/search` is `/search/` without its slash: the same section.
            ("http://a.test/search?q=a&z=3", "http://a.test/search?q=a"),
            (
                "http://a.test/searching?q=a&z=3",
                "http://a.test/searching?q=a&z=3",
            ),
            // A host: its deny-list (globs, any case) and defaults.
            (
                "http://shop.test/p?id=1&lang=en&Language=de&view=1&sort=asc",
                "http://shop.test/p?id=1",
            ),
            // Its path sections: a section keeps the host's settings it
            // does not name (drop-params removes `lang`, which the
            // allow-list allows) ...
            (
                "http://www.shop.test/cart/add?item=7&qty=2&ref=x&lang=en",
                "http://www.shop.test/cart/add?item=7&qty=2",
            ),
            // ... and replaces those it names (its defaults are not the
            // host's: `sort=asc` stays). The longest prefix wins.
            (
                "http://shop.test/cart/checkout/go?item=7&qty=2&coupon=c&step=1&sort=asc",
                "http://shop.test/cart/checkout/go?item=7&coupon=c&sort=asc",
            ),
            // The host's own `/search/` replaces the top level's.
            (
                "http://shop.test/search/?q=a&qq=b&page=2",
                "http://shop.test/search/?q=a&qq=b",
            ),
            // Another host gets the top level's `/search/` on top of its
            // own settings.
            (
                "http://plain.test/search/?q=a&page=2&id=3&x=4",
                "http://plain.test/search/?q=a&page=2",
            ),
            ("http://plain.test/a?id=3&x=4", "http://plain.test/a?id=3"),
            // Removing every parameter removes the `?`.
            ("http://plain.test/a?x=4", "http://plain.test/a"),
            // Path-only request targets get the top level's sections.
            ("/search/?q=a&page=2&id=3", "/search/?q=a&page=2"),
        ],
    );
    // Who removed what: another rule's removal is reported under it.
    let (_, fired) = run(&mut c, "http://plain.test/a?id=1&x=2&utm_source=s");
    assert_eq!(fired, RuleMask::of(&[Rule::Tracking, Rule::KeepParams]));
    let (_, fired) = run(&mut c, "http://a.test/a?view=1");
    assert_eq!(fired, RuleMask::of(&[Rule::DropParams]));
}

#[test]
fn param_rules_can_be_switched_off() {
    let mut c = with_rules(Profile::Safe, Some(SCOPED), "-keep-params,-drop-params");
    check(
        &mut c,
        &[
            (
                "http://a.test/x?id=1&view=grid",
                "http://a.test/x?id=1&view=grid",
            ),
            ("/search/?q=a&id=3", "/search/?q=a&id=3"),
        ],
    );
    // Per host, and the path sections follow the host's switches.
    let toml = format!("{SCOPED}rules = [\"-keep-params\"]\n");
    let mut c = with_rules(Profile::Safe, Some(&toml), "");
    check(
        &mut c,
        &[
            (
                "http://plain.test/a?id=3&x=4",
                "http://plain.test/a?id=3&x=4",
            ),
            (
                "http://plain.test/search/?q=a&x=4",
                "http://plain.test/search/?q=a&x=4",
            ),
            ("http://a.test/search/?q=a&x=4", "http://a.test/search/?q=a"),
        ],
    );
}

/// The path section is chosen by the path the path rules leave, so that a
/// second run, which sees that path, chooses the same one.
#[test]
fn path_sections_see_the_path_after_the_path_rules() {
    let toml = r#"
[[path]]
prefix = "/shop/"
keep-params = ["id"]
"#;
    let mut c = with_rules(Profile::Aggressive, Some(toml), "+lowercase-path");
    check(
        &mut c,
        &[
            // `//` collapsed, upper case lowered, the index file removed:
            // then `/shop/` applies.
            (
                "http://a.test//shop/x.html?id=1&b=2",
                "http://a.test/shop/x.html?id=1",
            ),
            (
                "http://a.test/SHOP/x.html?id=1&b=2",
                "http://a.test/shop/x.html?id=1",
            ),
            (
                "http://a.test/shop/index.html?id=1&b=2",
                "http://a.test/shop/?id=1",
            ),
            // trailing-slash=add writes `/shop/` after the query rules.
            ("http://a.test/shop?id=1&b=2", "http://a.test/shop/?id=1"),
        ],
    );
    let mut c = with_rules(Profile::Aggressive, Some(toml), "trailing-slash=remove");
    check(
        &mut c,
        &[("http://a.test/shop/?id=1&b=2", "http://a.test/shop?id=1")],
    );
}

// ---------------------------------------------------------------------------
// 2. Host aliases.

const ALIASES: &str = r#"
host-aliases = [
  ["203.0.113.7", "example.com"],
  ["shuchao.cnblogs.com/", "www.cnblogs.com/shuchao/"],
  ["old.test/blog/", "new.test/"],
  ["m.example.org", "example.org"],
]

[[host]]
match = "example.com"
keep-params = ["id"]

[[host]]
match = "m.example.org"
rules = ["-host-alias"]
"#;

#[test]
fn host_aliases_write_the_target_host() {
    let mut c = with_rules(Profile::Safe, Some(ALIASES), "");
    check(
        &mut c,
        &[
            // The target host's section applies (keep-params).
            ("http://203.0.113.7/a?id=1&x=2", "http://example.com/a?id=1"),
            ("https://203.0.113.7:8443/a", "https://example.com:8443/a"),
            // The host's trailing dot is ignored, as for host sections.
            ("http://203.0.113.7./a", "http://example.com/a"),
            (
                "http://shuchao.cnblogs.com/x",
                "http://www.cnblogs.com/shuchao/x",
            ),
            (
                "http://shuchao.cnblogs.com",
                "http://www.cnblogs.com/shuchao/",
            ),
            (
                "http://old.test/blog/2020/post",
                "http://new.test/2020/post",
            ),
            // `/blog` is `/blog/` without its slash: the prefix itself.
            ("http://old.test/blog", "http://new.test/"),
            ("http://old.test/about", "http://old.test/about"),
            ("http://old.test/blogroll", "http://old.test/blogroll"),
            // Switched off in the source host's section.
            ("http://m.example.org/a", "http://m.example.org/a"),
            // Other hosts and path-only targets are left alone.
            ("http://203.0.113.8/a", "http://203.0.113.8/a"),
            ("/a?x=1", "/a?x=1"),
        ],
    );
    let (_, fired) = run(&mut c, "http://203.0.113.7/a?id=1&x=2");
    assert_eq!(fired, RuleMask::of(&[Rule::KeepParams, Rule::HostAlias]));
    let mut off = with_rules(Profile::Safe, Some(ALIASES), "-host-alias");
    check(
        &mut off,
        &[("http://203.0.113.7/a", "http://203.0.113.7/a")],
    );
}

/// An alias also applies to what the host and path rules leave: the next
/// run sees that form, and must find nothing to do.
#[test]
fn aliases_apply_after_the_host_and_path_rules_too() {
    let toml = r#"
host-aliases = [
  ["203.0.113.7", "example.com"],
  ["shop.test/old/", "shop.test/new/"],
  ["blog.test", "example.net"],
]
"#;
    let mut c = with_rules(Profile::Aggressive, Some(toml), "");
    check(
        &mut c,
        &[
            // ipv4-mapped writes the alias's source.
            (
                "http://[::ffff:203.0.113.7]/a.html",
                "http://example.com/a.html",
            ),
            // www leaves it.
            ("http://www.blog.test/a.html", "http://example.net/a.html"),
            // duplicate-slashes makes its prefix.
            (
                "http://shop.test//old/a.html",
                "http://shop.test/new/a.html",
            ),
        ],
    );
}

// ---------------------------------------------------------------------------
// 3. Whole-URL rewrites and rewrite ids.

const REWRITES: &str = r#"
rewrite = [
  { regex = '^(https?)://m\.([a-z.]+)/', replace = '$1://$2/', scope = "url", id = "mobile" },
  { regex = '^/story\?id=(\d+)$', replace = '/story_$1.html', id = "story-id" },
  { literal = "/old-shop/", replace = "/shop/" },
  { literal = "http://bad.test/", replace = "http://bad test/", scope = "url" },
]

[[host]]
match = "example.com"
keep-params = ["id"]
"#;

#[test]
fn url_rewrites_see_scheme_and_host() {
    let mut c = with_rules(Profile::Safe, Some(REWRITES), "");
    check(
        &mut c,
        &[
            // The host changes, and with it the section (keep-params), and
            // a path rewrite after it sees the new URL's path.
            (
                "http://m.example.com/story?id=12",
                "http://example.com/story_12.html",
            ),
            (
                "https://m.example.com/a?id=1&x=2",
                "https://example.com/a?id=1",
            ),
            // A path rewrite does not see the host.
            ("http://m.test/old-shop/a", "http://test/shop/a"),
            (
                "http://example.org/m.example.org/",
                "http://example.org/m.example.org/",
            ),
            // For a path-only target, the URL is its path.
            ("/story?id=3", "/story_3.html"),
        ],
    );
    let mut out = Vec::new();
    let e = canon(&mut c, b"http://bad.test/a", &mut out).unwrap_err();
    assert_eq!(e.reason.name(), "invalid-rewrite");
    // Which rules changed the URL: their numbers in file order, and ids.
    let (_, fired) = run(&mut c, "http://m.example.com/story?id=12");
    assert!(fired.has(Rule::Rewrite));
    assert_eq!(c.fired_rewrites(), [0, 1]);
    let set = c.rules().unwrap().clone();
    assert_eq!(set.rewrite_id(0), Some("mobile"));
    assert_eq!(set.rewrite_id(1), Some("story-id"));
    assert_eq!(set.rewrite_id(2), None);
    run(&mut c, "http://example.com/old-shop/");
    assert_eq!(c.fired_rewrites(), [2]);
    run(&mut c, "http://example.com/x");
    assert_eq!(c.fired_rewrites(), [] as [u32; 0]);
}

fn temp_file(name: &str, text: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn explain_prints_rewrite_ids() {
    let rules = temp_file("rules_scoped_explain.toml", REWRITES);
    let input =
        b"http://m.example.com/story?id=12\nhttp://example.com/old-shop/\nhttp://example.com/a#x\n";
    let o = run_canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "safe",
            "--rules",
            &rules,
            "--explain",
        ],
        input,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "http://example.com/story_12.html\trewrite:mobile,rewrite:story-id\n\
         http://example.com/shop/\trewrite\n\
         http://example.com/a\tfragment\n"
    );
    let o = run_canonurl(
        &[
            "-f",
            "plain",
            "--profile",
            "safe",
            "--rules",
            &rules,
            "--explain",
            "--format",
            "jsonl",
        ],
        input,
    );
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8(o.stdout).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(
        first["rules"],
        serde_json::json!(["rewrite:mobile", "rewrite:story-id"])
    );
}

#[test]
fn rules_file_errors_reach_the_command_with_line_and_key() {
    let rules = temp_file(
        "rules_scoped_bad.toml",
        "[[host]]\nmatch = 'a.test'\n\n[[host.path]]\nprefix = '/a/'\nrules = ['+www']\n",
    );
    let o = run_canonurl(&["--rules", &rules], b"");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("line 6: host section 1 (match = \"a.test\"): path section 1 (prefix = \"/a/\"): 'rules' cannot be set in a path section"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// 4. http and https, either way.

#[test]
fn http_as_https_folds_the_schemes_into_https() {
    let mut c = with_rules(Profile::Safe, None, "+http-as-https");
    check(
        &mut c,
        &[
            ("http://example.com/a", "https://example.com/a"),
            ("http://example.com:443/a", "https://example.com/a"),
            ("http://example.com:8080/a", "https://example.com:8080/a"),
            ("https://example.com:80/a", "https://example.com:80/a"),
            ("http://u:p@example.com/", "https://example.com/"),
            ("ftp://example.com/a", "ftp://example.com/a"),
            ("/a", "/a"),
        ],
    );
    // Not in any profile.
    for p in Profile::ALL {
        assert!(!p.rule_mask().has(Rule::HttpAsHttps), "{}", p.name());
        assert!(!p.rule_mask().has(Rule::HttpsAsHttp), "{}", p.name());
    }
}

#[test]
fn the_last_scheme_fold_switched_on_wins() {
    let mut c = with_rules(Profile::Safe, None, "+https-as-http,+http-as-https");
    check(&mut c, &[("http://a.test/", "https://a.test/")]);
    let mut c = with_rules(Profile::Safe, None, "+http-as-https,+https-as-http");
    check(&mut c, &[("https://a.test/", "http://a.test/")]);
    // A host section switching one on switches the top level's off.
    let toml =
        "rules = ['+https-as-http']\n[[host]]\nmatch = 'b.test'\nrules = ['+http-as-https']\n";
    let mut c = with_rules(Profile::Safe, Some(toml), "");
    check(
        &mut c,
        &[
            ("https://a.test/", "http://a.test/"),
            ("http://b.test/", "https://b.test/"),
        ],
    );
    assert_eq!(
        error("rules = ['+https-as-http', '-www',\n  '+http-as-https']"),
        "line 1: 'rules': https-as-http and http-as-https exclude each other \
         (one writes http, the other https): switch on one"
    );
}

// ---------------------------------------------------------------------------
// 5. duplicate-slashes and embedded schemes.

#[test]
fn duplicate_slashes_keep_an_embedded_schemes_slashes() {
    let mut c = with_rules(Profile::Aggressive, None, "");
    check(
        &mut c,
        &[
            (
                "http://archive.test/web/2020//https://example.com//a.html",
                "http://archive.test/web/2020/https://example.com/a.html",
            ),
            (
                "http://archive.test/web/http://example.com/a.html",
                "http://archive.test/web/http://example.com/a.html",
            ),
            ("http://a.test//x//y.html", "http://a.test/x/y.html"),
        ],
    );
}

// ---------------------------------------------------------------------------
// 6. Rules-file errors.

#[test]
fn path_section_errors_name_the_line_and_key() {
    assert_eq!(
        error("[[host]]\nmatch = 'a.test'\n[[host.path]]\nprefix = '/a/'\nkeep-param = ['x']\n"),
        "line 5: host section 1 (match = \"a.test\"): path section 1 (prefix = \"/a/\"): \
         unknown key 'keep-param' (did you mean 'keep-params'?)"
    );
    assert!(
        error("[[path]]\nprefix = '/a/'\nrewrite = []\n").starts_with(
            "line 3: path section 1 (prefix = \"/a/\"): 'rewrite' cannot be set in a path section"
        )
    );
    assert_eq!(
        error("[[path]]\nkeep-params = ['x']\n"),
        "line 1: path section 1: no 'prefix' key (the path the section is for: \"/shop/\")"
    );
    assert_eq!(
        error("[[path]]\nprefix = 'shop/'\n"),
        "line 2: path section 1 (prefix = \"shop/\"): 'prefix' is the start of a path \
         (\"/shop/\"): it starts with '/' and has no '?' or '#', unlike 'shop/'"
    );
    assert_eq!(
        error("\n[[path]]\nprefix = '/caf\u{e9}/'\n"),
        "line 3: path section 1 (prefix = \"/caf\u{e9}/\"): 'prefix' '/caf\u{e9}/' is not in \
         canonical form, so no path would match it: write '/caf%C3%A9/'"
    );
    assert!(
        error("[[path]]\nprefix = '/a/'\n[[path]]\nprefix = '/a/'\n")
            .starts_with("line 4: path section 2 (prefix = \"/a/\"): a second path section")
    );
    assert!(error("[[path]]\nprefix = 3\n")
        .starts_with("line 2: path section 1: 'prefix' must be a string, not an integer"));
    assert!(error("path = 'x'").starts_with("line 1: 'path' must be path sections"));
    assert!(error("[path]\nprefix = '/'\n").starts_with("line 1: 'path' must be [[path]]"));
    // After a [[host]], a [[path]] would be the top level's.
    let e = error("[[host]]\nmatch = 'a'\n\n[[path]]\nprefix = '/a/'\n");
    assert!(
        e.starts_with("line 4: a [[path]] section after a [[host]] belongs to the top level"),
        "{e}"
    );
    // Types and globs of the new lists.
    assert_eq!(
        error("keep-params = 'id'"),
        "line 1: 'keep-params' must be an array of strings, not a string"
    );
    assert_eq!(
        error("[[path]]\nprefix = '/a/'\ndrop-params = ['x',\n  '']\n"),
        "line 4: path section 1 (prefix = \"/a/\"): 'drop-params': empty parameter name pattern"
    );
    assert!(error("[[path]]\nprefix = '/a/'\ndefaults = { a = 1 }\n")
        .starts_with("line 3: path section 1 (prefix = \"/a/\"): 'defaults': the default of 'a'"));
    // `[[path]]` is named among the sections, not called the only one's slip.
    let e = error("[paths]\nprefix = '/'\n");
    assert!(
        e.starts_with(
            "line 1: unknown section '[paths]' (did you mean [[path]]?): the sections are [[host]]"
        ) && e.contains("and [[path]] (before the first [[host]])"),
        "{e}"
    );
    let e = error("[[hots]]\nmatch = 'a.com'\n");
    assert!(!e.contains("only section") && e.contains("[[path]]"), "{e}");
}

#[test]
fn alias_errors_name_the_line_and_key() {
    assert_eq!(
        error("host-aliases = 'a'"),
        "line 1: 'host-aliases' must be an array of [from, to] pairs \
         ([[\"203.0.113.7\", \"example.com\"]]), not a string"
    );
    assert_eq!(
        error("host-aliases = [\n  ['a.test', 'b.test', 'c.test'],\n]"),
        "line 2: 'host-aliases': an alias is a pair of strings [from, to], not an array of 3 items"
    );
    assert_eq!(
        error("host-aliases = [['a.test', 3]]"),
        "line 1: 'host-aliases' must be a string, not an integer"
    );
    assert_eq!(
        error("host-aliases = [['Example.COM', 'b.test']]"),
        "line 1: 'host-aliases': 'Example.COM' is not in canonical form, so no URL would \
         match it: write 'example.com'"
    );
    assert!(error("host-aliases = [['a.test:8080', 'b.test']]")
        .contains("'a.test:8080': an alias is a host and a path prefix, without port"));
    assert!(error("host-aliases = [['http://a.test', 'b.test']]").contains("without a scheme"));
    assert!(error("host-aliases = [['a b', 'b.test']]")
        .starts_with("line 1: 'host-aliases': 'a b': not a URL's host and path"));
    assert!(error("host-aliases = [['/x', 'b.test']]").contains("'/x': no host"));
    // Chains: the target is itself aliased, or the alias aliases itself.
    let e = error("host-aliases = [\n  ['a.test', 'b.test/x/'],\n  ['b.test/', 'c.test'],\n]");
    assert_eq!(
        e,
        "line 2: 'host-aliases': ['a.test', 'b.test/x/'] leads to URLs that \
         ['b.test/', 'c.test'] (line 3) would alias again: aliases do not chain, so map each \
         name to the final one"
    );
    assert!(error("host-aliases = [['a.test/', 'a.test/x/']]").contains("that itself would"));
    assert!(
        error("host-aliases = [['a.test', 'b.test'], ['a.test/', 'c.test']]")
            .contains("a second alias for the same host and path prefix")
    );
    // Only at the top level.
    assert_eq!(
        error("[[host]]\nmatch = 'a'\nhost-aliases = [['a', 'b']]\n"),
        "line 3: host section 1 (match = \"a\"): 'host-aliases' is a top-level key: aliases \
         are applied before a host section is chosen, so a section cannot have its own"
    );
}

#[test]
fn rewrite_errors_name_the_line_and_key() {
    assert_eq!(
        error("rewrite = [\n  { literal = 'a', replace = 'b', scope = 'host' },\n]"),
        "line 2: a rewrite rule's 'scope' is \"path\" (from the path on, the default) or \
         \"url\" (the whole URL), not 'host'"
    );
    assert!(
        error("rewrite = [{ literal = 'a', replace = 'b', id = 'a b' }]")
            .starts_with("line 1: a rewrite rule's 'id' is letters, digits")
    );
    assert!(
        error("rewrite = [{ literal = 'a', replace = 'b', id = '' }]")
            .starts_with("line 1: a rewrite rule's 'id'")
    );
    assert_eq!(
        error(
            "rewrite = [{ literal = 'a', replace = 'b', id = 'x' }]\n[[host]]\nmatch = 'h'\n\
             rewrite = [{ literal = 'c', replace = 'd', id = 'x' }]\n"
        ),
        "line 4: host section 1 (match = \"h\"): rewrite id 'x' is used on line 1 already: \
         an id names one rule"
    );
    assert!(
        error("rewrite = [{ literal = 'a', replace = 'b', scope = 1 }]")
            .starts_with("line 1: 'scope' must be a string, not an integer")
    );
}

#[test]
fn idle_settings_of_the_new_keys_are_named() {
    let text = "keep-params = ['id']\ndrop-params = ['x']\nhost-aliases = [['a.test', 'b.test']]\n\
                [[path]]\nprefix = '/a/'\ndrop-params = ['y']\n";
    let (_, unused) = file::build_with_unused(RuleMask::NONE, Some(text), &[]).unwrap();
    let named: Vec<(usize, &str)> = unused.iter().map(|u| (u.line, u.key.name())).collect();
    assert_eq!(
        named,
        [
            (1, "keep-params"),
            (2, "drop-params"),
            (3, "host-aliases"),
            (6, "drop-params")
        ]
    );
    let (_, unused) = file::build_with_unused(Profile::Safe.rule_mask(), Some(text), &[]).unwrap();
    assert_eq!(unused, []);
}

// ---------------------------------------------------------------------------
// 7. Idempotence with every new key.

/// A rules file with every new key, for hosts and paths of the generator
/// and of the url-dataset (`tools.ietf.org`, `members.tripod.com`,
/// `news.cnet.com`, `en.wikipedia.org`, `www.angelfire.com`).
pub const EVERY_KEY: &str = r#"
host-aliases = [
  ["203.0.113.7", "example.com"],
  ["tools.ietf.org", "ietf.org/tools/"],
  ["members.tripod.com/", "tripod.com/members/"],
  ["angelfire.com", "angelfire.example"],
  ["old.test/blog/", "new.test/"],
]
drop-params = ["sid", "lang*"]
keep-position = ["page"]
rewrite = [
  { regex = '^(https?)://news\.cnet\.com/', replace = '$1://cnet.com/news/', scope = "url", id = "cnet-news" },
  { regex = '^/story/?\?id=(\d+)$', replace = '/story.php?id=$1', id = "story" },
]

[[path]]
prefix = "/html/"
drop-params = ["f"]

[[path]]
prefix = "/search/"
keep-params = ["q", "p*"]

[[host]]
match = ["*.wikipedia.org", "example.com"]
keep-params = ["title", "oldid", "action", "id", "q"]

[[host.path]]
prefix = "/wiki/"
keep-params = []

[[host]]
match = ["angelfire.example", "new.test"]
defaults = { ring = "1" }

[[host.path]]
prefix = "/"
defaults = { sort = "asc", ring = "1" }
drop-params = ["x*"]
"#;

/// The configurations: `safe` and `aggressive` (with `http-as-https`, or
/// `https-as-http` and `sort-query=key-value`) with [`EVERY_KEY`].
fn configs() -> Vec<(String, Canonicalizer)> {
    [
        (Profile::Safe, ""),
        (Profile::Aggressive, "+http-as-https"),
        (
            Profile::Aggressive,
            "+https-as-http,+lowercase-path,sort-query=key-value",
        ),
        (Profile::Aggressive, "trailing-slash=remove"),
    ]
    .into_iter()
    .map(|(p, edits)| {
        (
            format!("{},{edits},every key", p.name()),
            with_rules(p, Some(EVERY_KEY), edits),
        )
    })
    .collect()
}

/// Runs inputs through one configuration twice.
struct FixedPoint {
    name: String,
    c: Canonicalizer,
    again: Canonicalizer,
    checked: usize,
    fired: RuleMask,
    failures: Vec<String>,
}

impl FixedPoint {
    fn check(&mut self, input: &[u8]) {
        let (mut once, mut twice) = (Vec::new(), Vec::new());
        let Ok(first) = canon(&mut self.c, input, &mut once) else {
            return;
        };
        self.checked += 1;
        self.fired.0 |= first.fired.0;
        let again = if first.parts.scheme_end == ABSENT {
            self.again.canonicalize_target(&once, &mut twice)
        } else {
            self.again.canonicalize_into(&once, &mut twice)
        };
        match again {
            Ok(c) if twice == once && c.unchanged && c.fired.is_empty() => {}
            Ok(c) => self.failures.push(format!(
                "{} -> {} ({}) -> {} ({})",
                show(input),
                show(&once),
                first.fired,
                show(&twice),
                c.fired
            )),
            Err(e) => self.failures.push(format!(
                "{} -> {} -> rejected ({e})",
                show(input),
                show(&once)
            )),
        }
    }
}

fn fixed_points() -> Vec<FixedPoint> {
    configs()
        .into_iter()
        .map(|(name, c)| FixedPoint {
            name,
            again: c.clone(),
            c,
            checked: 0,
            fired: RuleMask::NONE,
            failures: Vec::new(),
        })
        .collect()
}

/// Prints each configuration's counts and first failures; fails on any
/// failure, and when one of `must_fire` never fired.
fn finish(test: &str, runs: &[FixedPoint], must_fire: &[Rule]) {
    let mut failed = 0;
    let mut fired = RuleMask::NONE;
    for r in runs {
        println!(
            "{test}: {}: {} checked, fired {}, {} failure(s)",
            r.name,
            r.checked,
            r.fired,
            r.failures.len()
        );
        for f in r.failures.iter().take(8) {
            println!("    {f}");
        }
        failed += r.failures.len();
        fired.0 |= r.fired.0;
        assert!(r.checked > 0, "{test}: {}: nothing checked", r.name);
    }
    for rule in must_fire {
        assert!(fired.has(*rule), "{test}: {rule} never fired");
    }
    assert_eq!(failed, 0, "{test}: {failed} outputs are not a fixed point");
}

/// xorshift64 (Marsaglia 2003): deterministic, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const SCHEMES: &[&str] = &["http://", "https://", "HTTP://"];
const HOSTS: &[&str] = &[
    "203.0.113.7",
    "203.0.113.7.",
    "[::ffff:203.0.113.7]",
    "tools.ietf.org",
    "members.tripod.com",
    "www.angelfire.com",
    "angelfire.com",
    "news.cnet.com",
    "m.news.cnet.com",
    "en.wikipedia.org",
    "example.com",
    "www.example.com",
    "old.test",
    "new.test",
    "other.test",
];
const PORTS: &[&str] = &["", "", "", ":80", ":443", ":8080"];
const SEGMENTS: &[&str] = &[
    "",
    "blog",
    "Blog",
    "html",
    "search",
    "wiki",
    "story",
    "index.html",
    "a.html",
    "x",
    ".",
    "..",
    "%2F",
    "https:",
    "(S(abcdefghijklmnopqrstuvwx))",
];
const NAMES: &[&str] = &[
    "id",
    "q",
    "p",
    "page",
    "sid",
    "lang",
    "Language",
    "f",
    "ring",
    "sort",
    "x1",
    "title",
    "utm_source",
    "view",
    "",
];
const VALUES: &[&str] = &["1", "asc", "a+b", "", "%26", "12"];

fn gen(r: &mut Rng) -> String {
    let mut s = String::new();
    if r.below(5) > 0 {
        s.push_str(r.pick(SCHEMES));
        s.push_str(r.pick(HOSTS));
        s.push_str(r.pick(PORTS));
    }
    for _ in 0..r.below(4) {
        s.push('/');
        if r.below(8) == 0 {
            s.push('/');
        }
        s.push_str(r.pick(SEGMENTS));
    }
    if s.is_empty() || r.below(3) == 0 {
        s.push('/');
    }
    if r.below(6) == 0 {
        s.push_str("story?id=12");
    } else if r.below(3) > 0 {
        s.push('?');
        for i in 0..r.below(5) {
            if i > 0 {
                s.push('&');
            }
            s.push_str(r.pick(NAMES));
            if r.below(5) > 0 {
                s.push('=');
                s.push_str(r.pick(VALUES));
            }
        }
    }
    if r.below(8) == 0 {
        s.push_str("#top");
    }
    s
}

#[test]
fn every_new_key_is_idempotent_on_generated_urls() {
    let mut runs = fixed_points();
    let mut r = Rng(0x5c0_9ed);
    for _ in 0..60_000 {
        let input = gen(&mut r);
        for run in &mut runs {
            run.check(input.as_bytes());
        }
    }
    finish(
        "generated",
        &runs,
        &[
            Rule::KeepParams,
            Rule::DropParams,
            Rule::DefaultParams,
            Rule::HostAlias,
            Rule::HttpAsHttps,
            Rule::HttpsAsHttp,
            Rule::Rewrite,
        ],
    );
}

#[test]
fn every_new_key_is_idempotent_on_the_url_dataset() {
    let Some(data) = shared_data_or_skip("every_new_key_is_idempotent_on_the_url_dataset") else {
        return;
    };
    let mut runs = fixed_points();
    let mut lines = 0;
    for name in ["kasztp.txt", "userbait.txt", "wpt_urltestdata_nobase.txt"] {
        for line in read_lines(&data.join("url-dataset").join(name)) {
            lines += 1;
            for run in &mut runs {
                run.check(&line);
            }
        }
    }
    println!("url-dataset: {lines} lines");
    finish(
        "url-dataset",
        &runs,
        &[
            Rule::KeepParams,
            Rule::DropParams,
            Rule::HostAlias,
            Rule::HttpAsHttps,
            Rule::Rewrite,
        ],
    );
}
