//! The dedup rules (`src/canon/rules/`), from the outside:
//!
//! 1. Every rule in [`Rule::ALL`] has table cases on which it fires, with the
//!    output written by hand from the rule's documented effect; the same
//!    configuration with `-rule` does not fire it and gives another output.
//!    Cases on which a rule must not fire (`www.co.uk`, a short `sid`, ...)
//!    check that `-rule` changes nothing.
//! 2. Canonical output is a fixed point for every profile and for rule
//!    configurations past the profiles (the opt-in rules, a rules file,
//!    `trailing-slash=add`, `sort-query=key-value`, `keep-position`): the
//!    second pass gives the same bytes, reports `unchanged` and fires no
//!    rule. Inputs: generated URLs and request targets, and the shared data.
//! 3. No rule decodes a reserved escape (`%2F %3F %23 %26 %3D %2B`): against
//!    the `rfc3986` output of the same input, no rule configuration has more
//!    of the literal characters in the path or query, nor more escapes.
//! 4. `sort-query` (`key`, `key-value`, `keep-position`) against an oracle: a
//!    stable sort in this file.
//!
//! Cases marked `// Regression:` are bugs these tests found, now fixed.

use crate::common;

use canonurl::canon::rules::{Rule, RuleMask};
use canonurl::{Canonical, Canonicalizer, Parts, Profile, Reject, ABSENT};
use common::{canon, read_lines, shared_data_or_skip, show, with_rules, wpt_inputs_with_bases};

/// The opt-in rules, on top of `aggressive`: every rule on but
/// `http-as-https`, which excludes `https-as-http` (its table cases and an
/// idempotence configuration switch it on instead).
const OPT_IN: &str = "+lowercase-path,+https-as-http";

/// The rules file of the table: a state parameter, a default value, two
/// rewrites (a regex and a literal), host aliases, and a host with an
/// allow-list and a deny-list of parameters.
const TABLE_FILE: &str = r#"
state-params = ["back"]
defaults = { sort = "ascending" }
rewrite = [
  { regex = '^/story/?\?id=(\d+)$', replace = '/story.php?id=$1' },
  { literal = "/old-shop/", replace = "/shop/" },
]
host-aliases = [
  ["203.0.113.7", "example.com"],
  ["shuchao.cnblogs.com/", "www.cnblogs.com/shuchao/"],
]

[[host]]
match = "keep.test"
keep-params = ["id", "p*"]
drop-params = ["page_size"]
"#;

/// The rules file of the generated tests. Its rewrite gives a URL that no
/// rule changes again (the anchored pattern can not match `/story.php`, and
/// the last segment has a dot, so `trailing-slash=add` leaves it). The
/// literal rewrite of [`TABLE_FILE`] is left out: `/old-shop/old-shop/`
/// becomes `/shop/old-shop/`, which it rewrites again, and that is the
/// user's rule, not canonurl's.
const GENERATED_FILE: &str = r#"
state-params = ["back"]
defaults = { sort = "ascending", q = "a%20b" }
rewrite = [
  { regex = '^/story/?\?id=(\d+)$', replace = '/story.php?id=$1' },
]
host-aliases = [["1.2.3.4", "ip.example.org"], ["a.b.example.org/a/", "example.org/ab/"]]

[[host]]
match = ["example.co.uk", "*.example.co.uk"]
keep-params = ["id", "q", "page", "sort", "A", "a*"]
drop-params = ["a"]

[[host.path]]
prefix = "/seg/"
keep-params = ["b"]
"#;

/// [`GENERATED_FILE`] without the rewrite, for the escape census (a rewrite
/// may write anything).
const NO_REWRITE_FILE: &str = r#"
state-params = ["back"]
defaults = { sort = "ascending", q = "a%20b" }
"#;

/// Canonicalizes an output again, the way it was written: path-only output
/// as a request target, the rest as a URL.
fn canon_again(
    c: &mut Canonicalizer,
    first: &Canonical,
    once: &[u8],
    out: &mut Vec<u8>,
) -> Result<Canonical, Reject> {
    out.clear();
    if first.parts.scheme_end == ABSENT {
        c.canonicalize_target(once, out)
    } else {
        c.canonicalize_into(once, out)
    }
}

// ---------------------------------------------------------------------------
// 1. Every rule, switchable.

/// One table case: under `aggressive`, [`OPT_IN`], [`TABLE_FILE`] and
/// `edits`, `input` gives `expect`, and `rule` fires on it or not.
struct Case {
    rule: Rule,
    edits: &'static str,
    input: &'static str,
    expect: &'static str,
    fires: bool,
}

const fn fires(rule: Rule, input: &'static str, expect: &'static str) -> Case {
    Case {
        rule,
        edits: "",
        input,
        expect,
        fires: true,
    }
}

const fn keeps(rule: Rule, input: &'static str, expect: &'static str) -> Case {
    Case {
        rule,
        edits: "",
        input,
        expect,
        fires: false,
    }
}

const fn with(edits: &'static str, case: Case) -> Case {
    Case { edits, ..case }
}

/// A value of 32 hex digits (what `sid` must carry to be removed).
const HEX32: &str = "0123456789abcdef0123456789ABCDEF";

const CASES: &[Case] = &[
    // fragment: remove the fragment, for every scheme.
    fires(
        Rule::Fragment,
        "http://example.com/a#top",
        "http://example.com/a",
    ),
    fires(
        Rule::Fragment,
        "http://example.com/a?b=1#",
        "http://example.com/a?b=1",
    ),
    fires(
        Rule::Fragment,
        "mailto:a@example.com#x",
        "mailto:a@example.com",
    ),
    // Other schemes get no other rule: `www`, the case and the slash stay.
    fires(
        Rule::Fragment,
        "ftp://www.example.com/A/#x",
        "ftp://www.example.com/A/",
    ),
    // empty-query: `?`, stray `&`, `=1`, `id=`.
    fires(
        Rule::EmptyQuery,
        "http://example.com/a?",
        "http://example.com/a",
    ),
    fires(
        Rule::EmptyQuery,
        "http://example.com/a?&a=1&&",
        "http://example.com/a?a=1",
    ),
    fires(
        Rule::EmptyQuery,
        "http://example.com/a?=1",
        "http://example.com/a",
    ),
    fires(
        Rule::EmptyQuery,
        "http://example.com/a?id=",
        "http://example.com/a",
    ),
    fires(
        Rule::EmptyQuery,
        "http://example.com/a?id=&b=2",
        "http://example.com/a?b=2",
    ),
    // A name without `=` is not an empty pair (sorted by `sort-query`).
    keeps(
        Rule::EmptyQuery,
        "http://example.com/a?flag&b=2",
        "http://example.com/a?b=2&flag",
    ),
    // index-file: the name goes, the `/` stays (then `trailing-slash` removes it).
    fires(
        Rule::IndexFile,
        "http://example.com/a/index.html",
        "http://example.com/a",
    ),
    fires(
        Rule::IndexFile,
        "http://example.com/Default.ASPX",
        "http://example.com/",
    ),
    fires(
        Rule::IndexFile,
        "http://example.com/a/index.php?x=1",
        "http://example.com/a?x=1",
    ),
    fires(
        Rule::IndexFile,
        "http://example.com/a/index.html/",
        "http://example.com/a",
    ),
    with(
        "trailing-slash=add",
        fires(
            Rule::IndexFile,
            "http://example.com/a/index.html",
            "http://example.com/a/",
        ),
    ),
    keeps(
        Rule::IndexFile,
        "http://example.com/a/index.html.bak",
        "http://example.com/a/index.html.bak",
    ),
    keeps(
        Rule::IndexFile,
        "http://example.com/index.html/a",
        "http://example.com/index.html/a",
    ),
    // `%2F` is not a segment boundary.
    keeps(
        Rule::IndexFile,
        "http://example.com/a%2Findex.html",
        "http://example.com/a%2Findex.html",
    ),
    // www: only while a registrable domain remains (Public Suffix List).
    fires(Rule::Www, "http://www.example.com/", "http://example.com/"),
    fires(
        Rule::Www,
        "http://www12.example.com/",
        "http://example.com/",
    ),
    fires(
        Rule::Www,
        "http://www2.www.example.com/",
        "http://example.com/",
    ),
    fires(Rule::Www, "http://www.www.co.uk/", "http://www.co.uk/"),
    fires(
        Rule::Www,
        "http://www.foo.blogspot.com/",
        "http://foo.blogspot.com/",
    ),
    fires(Rule::Www, "http://WWW.Example.COM./", "http://example.com/"),
    keeps(Rule::Www, "http://www.co.uk/", "http://www.co.uk/"),
    keeps(
        Rule::Www,
        "http://www1355544.com/",
        "http://www1355544.com/",
    ),
    keeps(
        Rule::Www,
        "http://wwwx.example.com/",
        "http://wwwx.example.com/",
    ),
    keeps(
        Rule::Www,
        "http://www-1.example.com/",
        "http://www-1.example.com/",
    ),
    keeps(
        Rule::Www,
        "http://a.www.example.com/",
        "http://a.www.example.com/",
    ),
    // sort-query: stable, by key.
    fires(
        Rule::SortQuery,
        "http://example.com/?b=2&a=1",
        "http://example.com/?a=1&b=2",
    ),
    fires(
        Rule::SortQuery,
        "http://example.com/?b=1&a",
        "http://example.com/?a&b=1",
    ),
    fires(
        Rule::SortQuery,
        "http://example.com/?b=1&a=2&a=1",
        "http://example.com/?a=2&a=1&b=1",
    ),
    keeps(
        Rule::SortQuery,
        "http://example.com/?a=2&a=1",
        "http://example.com/?a=2&a=1",
    ),
    with(
        "sort-query=key-value",
        fires(
            Rule::SortQuery,
            "http://example.com/?a=2&a=1&a",
            "http://example.com/?a&a=1&a=2",
        ),
    ),
    // tracking.
    fires(
        Rule::Tracking,
        "http://example.com/?id=1&utm_source=x&fbclid=y",
        "http://example.com/?id=1",
    ),
    fires(
        Rule::Tracking,
        "http://example.com/?UTM_Medium=email",
        "http://example.com/",
    ),
    fires(
        Rule::Tracking,
        "http://example.com/?gclid=abc&b=2&a=1",
        "http://example.com/?a=1&b=2",
    ),
    keeps(
        Rule::Tracking,
        "http://example.com/?utm=1",
        "http://example.com/?utm=1",
    ),
    // session: query names, `sid` with 32 hex digits only, state params,
    // ASP.NET cookieless segments, `;jsessionid=`.
    fires(
        Rule::Session,
        "http://example.com/?jsessionid=ABC&x=1",
        "http://example.com/?x=1",
    ),
    fires(
        Rule::Session,
        "http://example.com/?PHPSESSID=abc&x=1",
        "http://example.com/?x=1",
    ),
    fires(
        Rule::Session,
        "http://example.com/?ASPSESSIONIDQQGGGNCU=ABC&x=1",
        "http://example.com/?x=1",
    ),
    fires(
        Rule::Session,
        "http://example.com/?sid=0123456789abcdef0123456789ABCDEF&x=1",
        "http://example.com/?x=1",
    ),
    keeps(
        Rule::Session,
        "http://example.com/?sid=0123456789abcdef&x=1",
        "http://example.com/?sid=0123456789abcdef&x=1",
    ),
    keeps(
        Rule::Session,
        "http://example.com/?sid=0123456789abcdef0123456789ABCDEG&x=1",
        "http://example.com/?sid=0123456789abcdef0123456789ABCDEG&x=1",
    ),
    fires(
        Rule::Session,
        "http://example.com/?back=%2Fhome&x=1",
        "http://example.com/?x=1",
    ),
    fires(
        Rule::Session,
        "http://example.com/(S(4hqa0555fwsecu455xqckv45))/x.aspx",
        "http://example.com/x.aspx",
    ),
    fires(
        Rule::Session,
        "http://example.com/(A(BCDEFGHIJKLMNOPQRSTUVWXY)S(4hqa0555fwsecu455xqckv45))/x.aspx",
        "http://example.com/x.aspx",
    ),
    fires(
        Rule::Session,
        "http://example.com/(4hqa0555fwsecu455xqckv45)/x.aspx",
        "http://example.com/x.aspx",
    ),
    // 23 characters is no session id: only `lowercase-path` touches it.
    keeps(
        Rule::Session,
        "http://example.com/(S(4hqa0555fwsecu455xqckv4))/x.aspx",
        "http://example.com/(s(4hqa0555fwsecu455xqckv4))/x.aspx",
    ),
    fires(
        Rule::Session,
        "http://example.com/a;jsessionid=0123ABC/b",
        "http://example.com/a/b",
    ),
    fires(
        Rule::Session,
        "http://example.com/x.jsp;JSESSIONID=0123ABC?a=1",
        "http://example.com/x.jsp?a=1",
    ),
    fires(Rule::Session, "/x.jsp;jsessionid=0123ABC", "/x.jsp"),
    keeps(
        Rule::Session,
        "http://example.com/x.jsp;foo=1",
        "http://example.com/x.jsp;foo=1",
    ),
    // duplicate-slashes.
    fires(
        Rule::DuplicateSlashes,
        "http://example.com//a///b",
        "http://example.com/a/b",
    ),
    fires(Rule::DuplicateSlashes, "//A//B/?utm_source=x", "/a/b"),
    keeps(
        Rule::DuplicateSlashes,
        "http://example.com/a/%2F/b",
        "http://example.com/a/%2F/b",
    ),
    // trailing-slash: remove (default), add (last segment without a dot).
    fires(
        Rule::TrailingSlash,
        "http://example.com/a/b/",
        "http://example.com/a/b",
    ),
    fires(
        Rule::TrailingSlash,
        "http://example.com/a/b/?x=1",
        "http://example.com/a/b?x=1",
    ),
    fires(
        Rule::TrailingSlash,
        "http://example.com/a/index.html/",
        "http://example.com/a",
    ),
    fires(Rule::TrailingSlash, "/a/", "/a"),
    keeps(
        Rule::TrailingSlash,
        "http://example.com/",
        "http://example.com/",
    ),
    keeps(
        Rule::TrailingSlash,
        "http://example.com/a%2F",
        "http://example.com/a%2F",
    ),
    with(
        "trailing-slash=add",
        fires(
            Rule::TrailingSlash,
            "http://example.com/a/b",
            "http://example.com/a/b/",
        ),
    ),
    with(
        "trailing-slash=add",
        fires(
            Rule::TrailingSlash,
            "http://example.com/a.b/c?x=1",
            "http://example.com/a.b/c/?x=1",
        ),
    ),
    with(
        "trailing-slash=add",
        fires(Rule::TrailingSlash, "/a%2Fb", "/a%2Fb/"),
    ),
    with(
        "trailing-slash=add",
        keeps(
            Rule::TrailingSlash,
            "http://example.com/a/b.html",
            "http://example.com/a/b.html",
        ),
    ),
    with(
        "trailing-slash=add",
        keeps(
            Rule::TrailingSlash,
            "http://example.com/a/",
            "http://example.com/a/",
        ),
    ),
    with(
        "trailing-slash=add",
        keeps(
            Rule::TrailingSlash,
            "http://example.com/",
            "http://example.com/",
        ),
    ),
    // query-space: `+` written `%20`; `%2B` is a plus and stays.
    fires(
        Rule::QuerySpace,
        "http://example.com/?q=a+b",
        "http://example.com/?q=a%20b",
    ),
    fires(
        Rule::QuerySpace,
        "http://example.com/?a+b=c+d",
        "http://example.com/?a%20b=c%20d",
    ),
    fires(
        Rule::QuerySpace,
        "http://example.com/?q=a+b&a=1",
        "http://example.com/?a=1&q=a%20b",
    ),
    keeps(
        Rule::QuerySpace,
        "http://example.com/?q=a%20b",
        "http://example.com/?q=a%20b",
    ),
    keeps(
        Rule::QuerySpace,
        "http://example.com/?q=a%2Bb",
        "http://example.com/?q=a%2Bb",
    ),
    // lowercase-path: the path only, and escapes keep their upper-case hex.
    fires(
        Rule::LowercasePath,
        "http://example.com/A/B%2Fc",
        "http://example.com/a/b%2Fc",
    ),
    fires(
        Rule::LowercasePath,
        "http://example.com/Caf%C3%A9",
        "http://example.com/caf%C3%A9",
    ),
    fires(
        Rule::LowercasePath,
        "http://example.com/X?Q=V#F",
        "http://example.com/x?Q=V",
    ),
    keeps(
        Rule::LowercasePath,
        "http://example.com/a%2fb%c3%a9",
        "http://example.com/a%2Fb%C3%A9",
    ),
    // https-as-http: one scheme, and the port is the default again when it is 80.
    fires(
        Rule::HttpsAsHttp,
        "https://example.com/",
        "http://example.com/",
    ),
    fires(Rule::HttpsAsHttp, "https://h:443/", "http://h/"),
    fires(Rule::HttpsAsHttp, "https://h:80/", "http://h/"),
    fires(Rule::HttpsAsHttp, "https://h:8080/", "http://h:8080/"),
    keeps(Rule::HttpsAsHttp, "http://h:443/", "http://h:443/"),
    // http-as-https: the other way; switching it on switches https-as-http
    // off.
    with(
        "+http-as-https",
        fires(
            Rule::HttpAsHttps,
            "http://example.com/",
            "https://example.com/",
        ),
    ),
    with(
        "+http-as-https",
        fires(Rule::HttpAsHttps, "http://h:443/", "https://h/"),
    ),
    with(
        "+http-as-https",
        fires(Rule::HttpAsHttps, "http://h:8080/", "https://h:8080/"),
    ),
    with(
        "+http-as-https",
        keeps(Rule::HttpAsHttps, "https://h:80/", "https://h:80/"),
    ),
    // keep-params: only the parameters the host's allow-list names.
    fires(
        Rule::KeepParams,
        "http://keep.test/a?id=1&ref=x&page=2",
        "http://keep.test/a?id=1&page=2",
    ),
    keeps(
        Rule::KeepParams,
        "http://keep.test/a?id=1&page=2",
        "http://keep.test/a?id=1&page=2",
    ),
    keeps(
        Rule::KeepParams,
        "http://other.test/a?id=1&ref=x",
        "http://other.test/a?id=1&ref=x",
    ),
    // drop-params: the host's deny-list, even where the allow-list allows.
    fires(
        Rule::DropParams,
        "http://keep.test/a?id=1&page_size=20",
        "http://keep.test/a?id=1",
    ),
    keeps(
        Rule::DropParams,
        "http://other.test/a?page_size=20",
        "http://other.test/a?page_size=20",
    ),
    // host-alias: before the other rules (www removes the target's www.).
    fires(
        Rule::HostAlias,
        "http://203.0.113.7/a",
        "http://example.com/a",
    ),
    fires(
        Rule::HostAlias,
        "http://shuchao.cnblogs.com/x",
        "http://cnblogs.com/shuchao/x",
    ),
    keeps(
        Rule::HostAlias,
        "http://cnblogs.com/x",
        "http://cnblogs.com/x",
    ),
    // userinfo.
    fires(
        Rule::Userinfo,
        "http://user:pass@example.com/",
        "http://example.com/",
    ),
    fires(
        Rule::Userinfo,
        "https://user@example.com/",
        "http://example.com/",
    ),
    keeps(
        Rule::Userinfo,
        "ftp://user@example.com/",
        "ftp://user@example.com/",
    ),
    // default-params (the rules file: sort=ascending).
    fires(
        Rule::DefaultParams,
        "http://example.com/?sort=ascending&x=1",
        "http://example.com/?x=1",
    ),
    fires(
        Rule::DefaultParams,
        "http://example.com/?sort=ascending",
        "http://example.com/",
    ),
    keeps(
        Rule::DefaultParams,
        "http://example.com/?sort=descending&x=1",
        "http://example.com/?sort=descending&x=1",
    ),
    // ipv4-mapped: ::ffff:0:0/96 and 64:ff9b::/96 only.
    fires(
        Rule::Ipv4Mapped,
        "http://[::ffff:1.2.3.4]/",
        "http://1.2.3.4/",
    ),
    fires(
        Rule::Ipv4Mapped,
        "http://[::FFFF:102:304]/",
        "http://1.2.3.4/",
    ),
    fires(
        Rule::Ipv4Mapped,
        "http://[64:ff9b::102:304]/",
        "http://1.2.3.4/",
    ),
    fires(
        Rule::Ipv4Mapped,
        "http://[64:ff9b::1.2.3.4]:8080/",
        "http://1.2.3.4:8080/",
    ),
    keeps(Rule::Ipv4Mapped, "http://[::1]/", "http://[::1]/"),
    keeps(
        Rule::Ipv4Mapped,
        "http://[::102:304]/",
        "http://[::102:304]/",
    ),
    keeps(
        Rule::Ipv4Mapped,
        "http://[64:ff9b:1::102:304]/",
        "http://[64:ff9b:1::102:304]/",
    ),
    // host-trailing-dot.
    fires(
        Rule::HostTrailingDot,
        "http://example.com./a",
        "http://example.com/a",
    ),
    fires(
        Rule::HostTrailingDot,
        "http://example.com../a",
        "http://example.com/a",
    ),
    fires(
        Rule::HostTrailingDot,
        "http://www.co.uk./",
        "http://www.co.uk/",
    ),
    // rewrite: after every other rule, on what they wrote.
    fires(
        Rule::Rewrite,
        "http://example.com/story?id=42",
        "http://example.com/story.php?id=42",
    ),
    fires(
        Rule::Rewrite,
        "http://example.com/story/?utm_source=x&id=42#c",
        "http://example.com/story.php?id=42",
    ),
    fires(
        Rule::Rewrite,
        "http://example.com/Old-Shop/Item",
        "http://example.com/shop/item",
    ),
    keeps(
        Rule::Rewrite,
        "http://example.com/story?id=x",
        "http://example.com/story?id=x",
    ),
];

/// The table canonicalizer: `aggressive`, the opt-in rules, [`TABLE_FILE`],
/// `trailing-slash=remove` (the table's cases were written for it; the
/// default, `add`, has cases of its own with the edit, and
/// `aggressive_writes_directories_with_their_slash`), the case's edits, and
/// `-off` when given.
fn table_canonicalizer(edits: &str, off: Option<Rule>) -> Canonicalizer {
    let mut all = format!("{OPT_IN},trailing-slash=remove,{edits}");
    if let Some(r) = off {
        all.push_str(&format!(",-{}", r.name()));
    }
    with_rules(Profile::Aggressive, Some(TABLE_FILE), &all)
}

#[test]
fn every_rule_fires_and_can_be_switched_off() {
    let mut failures = Vec::new();
    let mut covered = RuleMask::NONE;
    let (mut out, mut off_out, mut again) = (Vec::new(), Vec::new(), Vec::new());
    for case in CASES {
        let what = format!(
            "{} {:?} [{}]",
            case.rule,
            case.input,
            if case.edits.is_empty() {
                "-"
            } else {
                case.edits
            }
        );
        let mut on = table_canonicalizer(case.edits, None);
        let mut off = table_canonicalizer(case.edits, Some(case.rule));
        let got = match canon(&mut on, case.input.as_bytes(), &mut out) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{what}: rejected ({e})"));
                continue;
            }
        };
        if out != case.expect.as_bytes() {
            failures.push(format!(
                "{what}: got {}, expected {:?}",
                show(&out),
                case.expect
            ));
        }
        if got.fired.has(case.rule) != case.fires {
            failures.push(format!(
                "{what}: fired {} (expected the rule {}to fire)",
                got.fired,
                if case.fires { "" } else { "not " }
            ));
        }
        if case.fires && got.fired.has(case.rule) {
            covered.insert(case.rule);
        }
        // The expected output is canonical under the same rules.
        match canon_again(&mut on, &got, &out, &mut again) {
            Ok(c) if again == out && c.unchanged && c.fired.is_empty() => {}
            Ok(c) => failures.push(format!(
                "{what}: not a fixed point: {} -> {} (fired {})",
                show(&out),
                show(&again),
                c.fired
            )),
            Err(e) => failures.push(format!("{what}: output {} rejected ({e})", show(&out))),
        }
        // The same configuration without the rule.
        match canon(&mut off, case.input.as_bytes(), &mut off_out) {
            Ok(c) => {
                if c.fired.has(case.rule) {
                    failures.push(format!("{what}: fires with -{}", case.rule));
                }
                if case.fires && off_out == out {
                    failures.push(format!(
                        "{what}: -{} gives the same output {}",
                        case.rule,
                        show(&out)
                    ));
                }
                if !case.fires && off_out != out {
                    failures.push(format!(
                        "{what}: the rule does not fire, yet -{} gives {} instead of {}",
                        case.rule,
                        show(&off_out),
                        show(&out)
                    ));
                }
            }
            Err(e) => failures.push(format!("{what}: rejected with -{} ({e})", case.rule)),
        }
    }
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|r| !covered.has(**r))
        .map(|r| r.name())
        .collect();
    println!(
        "every_rule_fires_and_can_be_switched_off: {} cases ({} firing), {} of {} rules covered, {} failure(s)",
        CASES.len(),
        CASES.iter().filter(|c| c.fires).count(),
        Rule::ALL.len() - missing.len(),
        Rule::ALL.len(),
        failures.len()
    );
    assert!(
        missing.is_empty(),
        "no table case fires these rules: {missing:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The canonical form the project follows (issue 13, section 3): under
/// `aggressive`, a last segment without a dot is written with its slash,
/// an index file leaves its directory with the slash, and `//` collapses
/// into that form.
#[test]
fn aggressive_writes_directories_with_their_slash() {
    let mut c = Canonicalizer::new(Profile::Aggressive);
    let mut out = Vec::new();
    let cases = [
        (
            "http://www.cnblogs.com/shuchao",
            "http://cnblogs.com/shuchao/",
        ),
        (
            "http://www.cnblogs.com/shuchao/",
            "http://cnblogs.com/shuchao/",
        ),
        (
            "http://www.cnblogs.com//shuchao",
            "http://cnblogs.com/shuchao/",
        ),
        (
            "http://www.example.com/test/index.html",
            "http://example.com/test/",
        ),
        ("http://example.com/a/b.html", "http://example.com/a/b.html"),
        ("http://example.com/a/b?x=1", "http://example.com/a/b/?x=1"),
        ("http://example.com", "http://example.com/"),
        ("/shuchao?utm_source=x", "/shuchao/"),
    ];
    for (input, expect) in cases {
        let r = if input.starts_with('/') {
            c.canonicalize_target(input.as_bytes(), &mut out)
        } else {
            c.canonicalize_into(input.as_bytes(), &mut out)
        };
        r.unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(show(&out), show(expect.as_bytes()), "{input}");
        out.clear();
    }
}

/// A rule that removes the last parameter removes the `?` too, with or
/// without `empty-query`: `http://h/?utm_source=x` and `http://h/` are one
/// key. A `?` that no rule emptied stays when `empty-query` is off.
#[test]
fn removing_the_last_parameter_removes_the_question_mark() {
    let defaults = Some("defaults = { sort = \"asc\" }");
    let mut out = Vec::new();
    for edits in ["", "-empty-query"] {
        let mut c = with_rules(Profile::Safe, defaults, edits);
        for input in [
            "http://h/?utm_source=x",
            "http://h/?jsessionid=1&gclid=2",
            "http://h/?sort=asc",
            "http://h/#x",
        ] {
            canon(&mut c, input.as_bytes(), &mut out).unwrap();
            assert_eq!(show(&out), show(b"http://h/"), "{input} with {edits:?}");
        }
        canon(&mut c, b"http://h/?a=1&utm_source=x", &mut out).unwrap();
        assert_eq!(show(&out), show(b"http://h/?a=1"), "{edits:?}");
    }
    let mut c = with_rules(Profile::Safe, None, "-empty-query");
    canon(&mut c, b"http://h/?", &mut out).unwrap();
    assert_eq!(show(&out), show(b"http://h/?"));
    let mut c = with_rules(Profile::Safe, None, "");
    canon(&mut c, b"http://h/?", &mut out).unwrap();
    assert_eq!(show(&out), show(b"http://h/"));
}

/// The rules file of docs/rules.md: its rewrite fires on `/story?id=12` (after the
/// other rules, before `trailing-slash=add` writes `/story/`), and the
/// built-in rules then run on the result, so every spelling of the page
/// gets one key, and that key is a fixed point.
#[test]
fn rewrites_fire_where_the_user_wrote_them() {
    let file = r#"
rules = ["-www", "trailing-slash=add"]
[[host]]
match = ["shop.example.com", "*.shop.example.com"]
sort-query = "key-value"
rewrite = [
  { regex = '/story\?id=(\d+)', replace = '/story_$1' },
  { literal = "/old-shop/", replace = "/shop/" },
]
"#;
    let mut c = with_rules(Profile::Aggressive, Some(file), "");
    let mut out = Vec::new();
    let mut again = Vec::new();
    for input in [
        "http://shop.example.com/story?id=12",
        "http://shop.example.com/story?id=12#comments",
        "http://shop.example.com/story?utm_source=x&id=12",
        "http://shop.example.com/story_12",
        "http://shop.example.com/story_12/",
    ] {
        let first = canon(&mut c, input.as_bytes(), &mut out).unwrap();
        assert_eq!(
            show(&out),
            show(b"http://shop.example.com/story_12/"),
            "{input}"
        );
        let second = canon_again(&mut c, &first, &out, &mut again).unwrap();
        assert!(second.fired.is_empty(), "{input}: {}", second.fired);
    }
    // The pattern sees the URL after the other rules (`//` collapsed, the
    // tracking parameter gone), before `trailing-slash=add`'s slash.
    let mut c = with_rules(
        Profile::Aggressive,
        Some("rewrite = [{ regex = '^/a/b$', replace = '/c.html' }]"),
        "",
    );
    canon(&mut c, b"http://example.com/a//b?utm_source=1", &mut out).unwrap();
    assert_eq!(show(&out), show(b"http://example.com/c.html"));
}

#[test]
fn query_space_makes_plus_and_percent20_one() {
    let mut c = table_canonicalizer("", None);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut checked = 0;
    for (plus, pct) in [
        ("http://example.com/?q=a+b", "http://example.com/?q=a%20b"),
        (
            "http://example.com/?a+b=1&c=+",
            "http://example.com/?a%20b=1&c=%20",
        ),
        ("/x?z=1&q=++", "/x?q=%20%20&z=1"),
    ] {
        canon(&mut c, plus.as_bytes(), &mut a).unwrap();
        canon(&mut c, pct.as_bytes(), &mut b).unwrap();
        assert_eq!(show(&a), show(&b), "{plus} vs {pct}");
        assert!(!a.contains(&b'+'), "{}", show(&a));
        checked += 1;
    }
    println!("query_space_makes_plus_and_percent20_one: {checked} pairs");
    assert!(checked > 0);
}

/// Whether a path has a `.` or `..` segment, which no canonical URL has.
fn has_dot_segment(path: &[u8]) -> bool {
    path.split(|&b| b == b'/')
        .any(|seg| seg == b"." || seg == b"..")
}

// Regression: `session` cuts `;jsessionid=...` off a segment after the URL parser
// has resolved dot segments, so `..;jsessionid=x` becomes a `..` segment
// that the output keeps and the next pass resolves: `/a/..;jsessionid=x/b`
// gives `/a/../b`, and that gives `/b`. The same with `.` and `%2e`.
#[test]
fn session_path_parameter_leaves_no_dot_segment() {
    let mut failures = Vec::new();
    let inputs = [
        "http://example.com/a/..;jsessionid=x/b",
        "http://example.com/a/.;jsessionid=x/b",
        "http://example.com/a/b/%2e%2e;jsessionid=x",
        "/a/..;jsessionid=x/b",
    ];
    let (mut once, mut twice) = (Vec::new(), Vec::new());
    for edits in [OPT_IN, "-duplicate-slashes"] {
        let mut c = with_rules(Profile::Aggressive, None, edits);
        for input in inputs {
            let first = canon(&mut c, input.as_bytes(), &mut once).unwrap();
            assert!(first.fired.has(Rule::Session), "{input}");
            let path = first.parts.path(&once);
            if has_dot_segment(path) {
                failures.push(format!("{input} [{edits}]: dot segment in {}", show(&once)));
            }
            let second = canon_again(&mut c, &first, &once, &mut twice).unwrap();
            if twice != once || !second.unchanged {
                failures.push(format!(
                    "{input} [{edits}]: {} -> {}",
                    show(&once),
                    show(&twice)
                ));
            }
        }
    }
    println!(
        "session_path_parameter_leaves_no_dot_segment: {} inputs, {} failure(s)",
        inputs.len() * 2,
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Regression: `session` looks for an ASP.NET session segment before it cuts
// `;jsessionid=` off the segment, so `/(S(...));jsessionid=1/x.aspx` keeps
// the `(S(...))` segment, which the next pass removes.
#[test]
fn session_segment_with_a_path_parameter_is_removed() {
    let mut c = with_rules(Profile::Aggressive, None, "trailing-slash=remove");
    let (mut once, mut twice) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    let cases = [
        (
            "http://example.com/(S(4hqa0555fwsecu455xqckv45));jsessionid=1/x.aspx",
            "http://example.com/x.aspx",
        ),
        ("/a/(4hqa0555fwsecu455xqckv45);JSESSIONID=ABC/b", "/a/b"),
    ];
    for (input, expect) in cases {
        let first = canon(&mut c, input.as_bytes(), &mut once).unwrap();
        let second = canon_again(&mut c, &first, &once, &mut twice).unwrap();
        if once != expect.as_bytes() || !second.fired.is_empty() {
            failures.push(format!(
                "{input}: {} (expected {expect}) -> {} (fired {})",
                show(&once),
                show(&twice),
                second.fired
            ));
        }
    }
    println!(
        "session_segment_with_a_path_parameter_is_removed: {} inputs, {} failure(s)",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Regression: `host-trailing-dot` removes every trailing dot, and what remains can
// end in a number, which the URL Standard reads as an IPv4 address:
// `foo.09..` is a domain (only one empty last label is ignored before the
// ends-in-a-number check), `foo.09` is an invalid IPv4 address, so the
// output `http://foo.09/` is rejected when read again; `0x7f.1..` becomes
// `0x7f.1`, which reads as `127.0.0.1`. (WPT urltestdata has `http://foo.09..`.)
#[test]
fn host_trailing_dot_leaves_a_valid_host() {
    let mut c = Canonicalizer::new(Profile::Safe);
    let (mut once, mut twice) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    let inputs = [
        "http://foo.09..",
        "http://www.foo.09../a",
        "http://0x7f.1../",
        "http://example.com../",
    ];
    for input in inputs {
        let first = canon(&mut c, input.as_bytes(), &mut once).unwrap();
        match canon_again(&mut c, &first, &once, &mut twice) {
            Ok(second) if twice == once && second.unchanged && second.fired.is_empty() => {}
            Ok(_) => failures.push(format!("{input}: {} -> {}", show(&once), show(&twice))),
            Err(e) => failures.push(format!("{input}: {} -> rejected ({e})", show(&once))),
        }
    }
    println!(
        "host_trailing_dot_leaves_a_valid_host: {} inputs, {} failure(s)",
        inputs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Regression: `default-params` compares a value before `query-space` writes `+` as
// `%20`, so with the default `q = "a%20b"`, `?q=a%20b` is removed but
// `?q=a+b` is kept (as `?q=a%20b`, which the next pass removes): two
// spellings that `query-space` makes one come out different, and the output
// is not a fixed point.
#[test]
fn default_params_match_after_query_space() {
    let mut c = with_rules(Profile::Aggressive, Some(NO_REWRITE_FILE), "");
    let (mut plus, mut pct, mut again) = (Vec::new(), Vec::new(), Vec::new());
    let first = canon(&mut c, b"http://example.com/?q=a+b&x=1", &mut plus).unwrap();
    canon(&mut c, b"http://example.com/?q=a%20b&x=1", &mut pct).unwrap();
    // The `%20` spelling is the rules file's own: it is removed.
    assert_eq!(show(&pct), show(b"http://example.com/?x=1"));
    let second = canon_again(&mut c, &first, &plus, &mut again).unwrap();
    println!("default_params_match_after_query_space: 2 spellings");
    assert!(
        plus == pct && again == plus && second.fired.is_empty(),
        "?q=a+b&x=1 -> {} -> {} (fired {}), ?q=a%20b&x=1 -> {}",
        show(&plus),
        show(&again),
        second.fired,
        show(&pct)
    );
}

// ---------------------------------------------------------------------------
// Generated inputs.

/// xorshift64 (Marsaglia 2003): deterministic, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const SCHEMES: &[&str] = &["http", "http", "https", "https", "HTTPS", "ftp"];
const USERINFO: &[&str] = &["user@", "user:pass@", "a%40b:p%3A@", ":@", "User:@"];
const WWW: &[&str] = &[
    "",
    "",
    "",
    "www.",
    "www.",
    "www12.",
    "www.www.",
    "www2.www.",
    "WWW.",
    "www1355544.",
    "www..",
    "wwwx.",
    "www-1.",
];
const DOMAINS: &[&str] = &[
    "example.com",
    "Example.COM",
    "co.uk",
    "example.co.uk",
    "com",
    "blogspot.com",
    "foo.blogspot.com",
    "localhost",
    "xn--bcher-kva.de",
    "b\u{fc}cher.de",
    "a.b.example.org",
    "foo.09",
];
const HOST_DOTS: &[&str] = &["", "", "", "", ".", ".."];
const IP_HOSTS: &[&str] = &[
    "[::ffff:1.2.3.4]",
    "[::FFFF:102:304]",
    "[64:ff9b::1.2.3.4]",
    "[64:ff9b::102:304]",
    "[::1]",
    "[2001:db8::1]",
    "[64:ff9b:1::102:304]",
    "[::102:304]",
    "1.2.3.4",
    "127.0.0.1.",
    "0x7f.1",
];
const PORTS: &[&str] = &[":80", ":443", ":8080", ":", ":0443"];
const SEGMENTS: &[&str] = &[
    "a",
    "B",
    "seg",
    "index.html",
    "Index.HTM",
    "Default.ASPX",
    "default.aspx",
    "index.php",
    "x.jsp",
    "story",
    "",
    "",
    ".",
    "..",
    "%2e",
    "%2E%2e",
    ".%2E",
    "a%2Fb",
    "%2F",
    "A%2fB",
    "%41%7e",
    "%25",
    "%C3%A9",
    "\u{e9}",
    "a.b",
    "c+d",
    "a%20b",
    "(x)",
    "~u",
    "%3B",
    "a%3Fb",
    "%23",
    "a%26b%3Dc",
];
const PATH_PARAMS: &[&str] = &[
    ";jsessionid=",
    ";JSESSIONID=",
    ";jsessionid=ABC123",
    ";foo=1",
    ";jsessionid",
];
const NAMES: &[&str] = &[
    "a",
    "b",
    "A",
    "id",
    "q",
    "page",
    "sort",
    "utm_source",
    "UTM_Medium",
    "utm_",
    "gclid",
    "fbclid",
    "jsessionid",
    "PHPSESSID",
    "sid",
    "back",
    "ASPSESSIONIDQQGG",
    "cfid",
    "x%3Dy",
    "a%26b",
    "%2B",
    "a+b",
    "",
    "?x",
    "n%5Fm",
];
const VALUES: &[&str] = &[
    "",
    "1",
    "2",
    "a+b",
    "a%20b",
    "%26",
    "%3D",
    "%2B",
    "ascending",
    "descending",
    "ABC",
    "x=y",
    "%2F",
    "?",
    "/",
    "%7e",
    "a%2b",
    HEX32,
    "0123456789abcdef0123456789abcde",
];
const FRAGMENTS: &[&str] = &["#", "#top", "#a%23b", "#?x&y", "#A/B"];
/// Bytes inserted at random places.
const NOISE: &[u8] = b" %\\\t#?&=+/.;(@:[";

/// 24 ASCII letters and digits (an ASP.NET session id), or 23 to miss.
fn session_id(r: &mut Rng, len: usize) -> String {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..len)
        .map(|_| ALNUM[r.below(ALNUM.len())] as char)
        .collect()
}

fn push_path(r: &mut Rng, s: &mut String) {
    let n = r.below(5);
    if n == 0 && r.one_in(2) {
        s.push('/');
    }
    for _ in 0..n {
        s.push('/');
        if r.one_in(10) {
            s.push('/');
        }
        if r.one_in(12) {
            let seg = match r.below(4) {
                0 => format!("(S({}))", session_id(r, 24)),
                1 => format!("(A({})S({}))", session_id(r, 24), session_id(r, 24)),
                2 => format!("({})", session_id(r, 24)),
                _ => format!("(S({}))", session_id(r, 23)),
            };
            s.push_str(&seg);
        } else {
            s.push_str(r.pick(SEGMENTS));
        }
        if r.one_in(10) {
            s.push_str(r.pick(PATH_PARAMS));
        }
    }
    if n > 0 && r.one_in(4) {
        s.push('/');
    }
}

fn push_query(r: &mut Rng, s: &mut String) {
    s.push('?');
    let n = r.below(6);
    for i in 0..n {
        if i > 0 {
            s.push('&');
            if r.one_in(12) {
                s.push('&');
            }
        }
        match r.below(10) {
            0 => s.push_str(r.pick(NAMES)),
            1 => {
                s.push('=');
                s.push_str(r.pick(VALUES));
            }
            _ => {
                s.push_str(r.pick(NAMES));
                s.push('=');
                s.push_str(r.pick(VALUES));
            }
        }
    }
    if r.one_in(10) {
        s.push('&');
    }
}

/// A path and often a query; now and then what the rewrite rule matches
/// (`/story?id=N`).
fn push_path_and_query(r: &mut Rng, s: &mut String) {
    if r.one_in(40) {
        s.push_str(if r.one_in(2) { "/story" } else { "/story/" });
        s.push_str(&format!("?id={}", r.below(1000)));
        return;
    }
    push_path(r, s);
    if r.below(3) > 0 {
        push_query(r, s);
    }
}

/// Inserts a byte of [`NOISE`] somewhere, or upper-cases a letter.
fn add_noise(r: &mut Rng, bytes: &mut Vec<u8>) {
    let at = r.below(bytes.len() + 1);
    if r.one_in(2) {
        bytes.insert(at, NOISE[r.below(NOISE.len())]);
    } else if let Some(b) = bytes.get_mut(at) {
        *b = b.to_ascii_uppercase();
    }
}

/// A URL (scheme, host, path, query, fragment) built from the pieces above.
fn gen_url(r: &mut Rng) -> Vec<u8> {
    let mut s = String::new();
    if r.one_in(25) {
        s.push_str("mailto:");
        s.push_str(r.pick(&["a@example.com", "A@Www.Example.com", "x"]));
        if r.one_in(2) {
            s.push_str("?subject=a+b&body=%26&");
        }
    } else {
        s.push_str(r.pick(SCHEMES));
        s.push_str("://");
        if r.one_in(6) {
            s.push_str(r.pick(USERINFO));
        }
        if r.one_in(8) {
            s.push_str(r.pick(IP_HOSTS));
            if !s.ends_with(']') {
                s.push_str(r.pick(HOST_DOTS));
            }
        } else {
            s.push_str(r.pick(WWW));
            s.push_str(r.pick(DOMAINS));
            s.push_str(r.pick(HOST_DOTS));
        }
        if r.one_in(6) {
            s.push_str(r.pick(PORTS));
        }
        push_path_and_query(r, &mut s);
    }
    if r.one_in(5) {
        s.push_str(r.pick(FRAGMENTS));
    }
    let mut bytes = s.into_bytes();
    if r.one_in(8) {
        add_noise(r, &mut bytes);
    }
    bytes
}

/// An origin-form request target (starts with `/`).
fn gen_target(r: &mut Rng) -> Vec<u8> {
    let mut s = String::new();
    push_path_and_query(r, &mut s);
    if !s.starts_with('/') {
        s.insert(0, '/');
    }
    if r.one_in(20) {
        s.push_str(r.pick(FRAGMENTS));
    }
    let mut bytes = s.into_bytes();
    if r.one_in(8) {
        add_noise(r, &mut bytes);
        if bytes[0] != b'/' {
            bytes.insert(0, b'/');
        }
    }
    bytes
}

// ---------------------------------------------------------------------------
// 2. Idempotence.

/// The configurations checked for idempotence: every profile, then rule
/// configurations past the profiles.
fn idempotence_configs() -> Vec<(String, Canonicalizer)> {
    let mut configs: Vec<(String, Canonicalizer)> = Profile::ALL
        .iter()
        .map(|p| (p.name().to_string(), Canonicalizer::new(*p)))
        .collect();
    configs.push((
        format!("aggressive,{OPT_IN},rules file"),
        with_rules(Profile::Aggressive, Some(GENERATED_FILE), OPT_IN),
    ));
    let edits = format!("{OPT_IN},trailing-slash=add,sort-query=key-value");
    configs.push((
        format!("aggressive,{edits},rules file"),
        with_rules(Profile::Aggressive, Some(GENERATED_FILE), &edits),
    ));
    configs.push((
        "aggressive,keep-position=[page]".to_string(),
        with_rules(Profile::Aggressive, Some("keep-position = [\"page\"]"), ""),
    ));
    configs.push((
        "aggressive,+http-as-https,rules file".to_string(),
        with_rules(Profile::Aggressive, Some(GENERATED_FILE), "+http-as-https"),
    ));
    configs
}

/// Runs inputs through one configuration twice and records what is not a
/// fixed point.
struct FixedPoint {
    name: String,
    first: Canonicalizer,
    again: Canonicalizer,
    once: Vec<u8>,
    twice: Vec<u8>,
    checked: usize,
    rejected: usize,
    fired: usize,
    /// Every rule that fired on some first pass.
    rules_fired: RuleMask,
    failures: Vec<String>,
}

impl FixedPoint {
    fn new(name: String, c: Canonicalizer) -> FixedPoint {
        FixedPoint {
            name,
            again: c.clone(),
            first: c,
            once: Vec::new(),
            twice: Vec::new(),
            checked: 0,
            rejected: 0,
            fired: 0,
            rules_fired: RuleMask::NONE,
            failures: Vec::new(),
        }
    }

    /// `target`: canonicalize `input` as a request target.
    fn check(&mut self, input: &[u8], target: bool) {
        self.once.clear();
        let first = if target {
            self.first.canonicalize_target(input, &mut self.once)
        } else {
            self.first.canonicalize_into(input, &mut self.once)
        };
        let first = match first {
            Ok(c) => c,
            Err(_) => {
                self.rejected += 1;
                return;
            }
        };
        self.checked += 1;
        if !first.fired.is_empty() {
            self.fired += 1;
            self.rules_fired.0 |= first.fired.0;
        }
        match canon_again(&mut self.again, &first, &self.once, &mut self.twice) {
            Ok(c) if self.twice == self.once && c.unchanged && c.fired.is_empty() => {}
            Ok(c) => self.failures.push(format!(
                "{} -> {} (fired {}) -> {} (fired {}, unchanged = {})",
                show(input),
                show(&self.once),
                first.fired,
                show(&self.twice),
                c.fired,
                c.unchanged
            )),
            Err(e) => self.failures.push(format!(
                "{} -> {} (fired {}) -> rejected ({e})",
                show(input),
                show(&self.once),
                first.fired
            )),
        }
    }
}

/// Prints one line per configuration and the first failures; fails when a
/// configuration checked nothing or had a failure.
fn finish(test: &str, runs: Vec<FixedPoint>) {
    let total: usize = runs.iter().map(|r| r.checked).sum();
    println!(
        "{test}: {total} outputs re-canonicalized in {} configurations",
        runs.len()
    );
    let mut failed = 0;
    for r in &runs {
        println!(
            "  {}: {} checked ({} changed by rules), {} rejected, {} failure(s)",
            r.name,
            r.checked,
            r.fired,
            r.rejected,
            r.failures.len()
        );
        for f in r.failures.iter().take(8) {
            println!("    {f}");
        }
        failed += r.failures.len();
    }
    for r in &runs {
        assert!(r.checked > 0, "{test}: {}: nothing checked", r.name);
    }
    assert_eq!(failed, 0, "{test}: {failed} outputs are not a fixed point");
}

/// How many generated URLs and request targets each configuration gets.
const GENERATED_URLS: usize = 100_000;
const GENERATED_TARGETS: usize = 30_000;

#[test]
fn idempotent_on_generated_urls() {
    let mut runs: Vec<FixedPoint> = idempotence_configs()
        .into_iter()
        .map(|(n, c)| FixedPoint::new(n, c))
        .collect();
    let mut r = Rng::new(0x5eed_0001);
    let mut rule_fired = RuleMask::NONE;
    for i in 0..GENERATED_URLS + GENERATED_TARGETS {
        let target = i >= GENERATED_URLS;
        let input = if target {
            gen_target(&mut r)
        } else {
            gen_url(&mut r)
        };
        for run in &mut runs {
            run.check(&input, target);
        }
    }
    // Which rules the generator reaches, in any configuration.
    for run in &runs {
        rule_fired.0 |= run.rules_fired.0;
    }
    let missed: Vec<&str> = Rule::ALL
        .iter()
        .filter(|r| !rule_fired.has(**r))
        .map(|r| r.name())
        .collect();
    println!("idempotent_on_generated_urls: rules that fired: {rule_fired}");
    assert!(
        missed.is_empty(),
        "the generator never makes these rules fire: {missed:?}"
    );
    finish("idempotent_on_generated_urls", runs);
}

#[test]
fn idempotent_on_shared_data() {
    let Some(data) = shared_data_or_skip("idempotent_on_shared_data") else {
        return;
    };
    let mut runs: Vec<FixedPoint> = idempotence_configs()
        .into_iter()
        .map(|(n, c)| FixedPoint::new(n, c))
        .collect();
    // WPT urltestdata: inputs with a base are resolved against it first.
    let mut wpt = 0;
    for (input, base) in wpt_inputs_with_bases(&data) {
        for run in &mut runs {
            run.first.set_base(base.clone());
            run.check(input.as_bytes(), false);
            run.first.set_base(None);
        }
        wpt += 1;
    }
    // The first 20k lines of kasztp.txt, as URLs and (path and query) as
    // request targets.
    let lines = read_lines(&data.join("url-dataset/kasztp.txt"));
    let mut urls = 0;
    for line in lines.iter().take(20_000) {
        for run in &mut runs {
            run.check(line, false);
        }
        let after_scheme = line
            .windows(3)
            .position(|w| w == b"://")
            .map_or(0, |i| i + 3);
        if let Some(slash) = line[after_scheme..].iter().position(|&b| b == b'/') {
            for run in &mut runs {
                run.check(&line[after_scheme + slash..], true);
            }
        }
        urls += 1;
    }
    println!("idempotent_on_shared_data: {wpt} WPT cases, {urls} kasztp lines");
    assert!(wpt > 0 && urls > 0);
    finish("idempotent_on_shared_data", runs);
}

// ---------------------------------------------------------------------------
// 3. No rule decodes a reserved escape.

/// The reserved characters and their escapes' value.
const RESERVED: [u8; 6] = [b'/', b'?', b'#', b'&', b'=', b'+'];

/// How many of each [`RESERVED`] character a component has, literal and
/// escaped (`%` and two hex digits, either case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Census {
    literal: [usize; 6],
    escaped: [usize; 6],
}

fn census(s: &[u8]) -> Census {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut c = Census::default();
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                let v = (h * 16 + l) as u8;
                if let Some(k) = RESERVED.iter().position(|&r| r == v) {
                    c.escaped[k] += 1;
                }
                i += 3;
                continue;
            }
        }
        if let Some(k) = RESERVED.iter().position(|&r| r == s[i]) {
            c.literal[k] += 1;
        }
        i += 1;
    }
    c
}

/// Path and query census of a canonical URL.
fn path_and_query(url: &[u8], parts: &Parts) -> (Census, Census) {
    (
        census(parts.path(url)),
        census(parts.query(url).unwrap_or(b"")),
    )
}

/// Rules that remove parameters or path parameters (and with them the
/// escapes in them); without them, a URL keeps every reserved escape.
fn drops_content(fired: RuleMask) -> bool {
    [
        Rule::EmptyQuery,
        Rule::Tracking,
        Rule::Session,
        Rule::DefaultParams,
        Rule::Rewrite,
    ]
    .iter()
    .any(|r| fired.has(*r))
}

/// Rule configurations (no rewrite: a rewrite may write anything) and
/// whether `trailing-slash=add` is in them (`aggressive`'s default).
fn census_configs() -> Vec<(String, Canonicalizer, bool)> {
    let full = format!("{OPT_IN},trailing-slash=add,sort-query=key-value");
    let remove = format!("{OPT_IN},trailing-slash=remove");
    vec![
        ("safe".into(), Canonicalizer::new(Profile::Safe), false),
        (
            "aggressive".into(),
            Canonicalizer::new(Profile::Aggressive),
            true,
        ),
        (
            format!("aggressive,{remove},rules file"),
            with_rules(Profile::Aggressive, Some(NO_REWRITE_FILE), &remove),
            false,
        ),
        (
            format!("aggressive,{full},rules file"),
            with_rules(Profile::Aggressive, Some(NO_REWRITE_FILE), &full),
            true,
        ),
        (
            "aggressive,keep-position=[page]".into(),
            with_rules(Profile::Aggressive, Some("keep-position = [\"page\"]"), ""),
            true,
        ),
    ]
}

#[test]
fn no_rule_decodes_a_reserved_escape() {
    let mut rfc = Canonicalizer::new(Profile::Rfc3986);
    let mut configs = census_configs();
    let mut r = Rng::new(0x5eed_0003);
    let (mut base, mut out) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut escapes_seen = 0;
    for i in 0..40_000 {
        let input = if i % 4 == 3 {
            gen_target(&mut r)
        } else {
            gen_url(&mut r)
        };
        let reference = canon(&mut rfc, &input, &mut base);
        for (name, c, adds_slash) in &mut configs {
            let got = canon(c, &input, &mut out);
            let (reference, got) = match (&reference, got) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(_), Err(_)) => continue,
                (a, b) => {
                    failures.push(format!(
                        "{name}: {}: rfc3986 {:?} but the rules {:?}",
                        show(&input),
                        a.map(|_| show(&base)),
                        b.map(|_| show(&out))
                    ));
                    continue;
                }
            };
            compared += 1;
            let (rp, rq) = path_and_query(&base, &reference.parts);
            let (ap, aq) = path_and_query(&out, &got.parts);
            escapes_seen += (rp.escaped.iter().sum::<usize>() > 0) as usize;
            let mut problems = Vec::new();
            for (k, &ch) in RESERVED.iter().enumerate() {
                // `trailing-slash=add` writes one `/` of its own.
                let allowed = rp.literal[k] + usize::from(ch == b'/' && *adds_slash);
                if ap.literal[k] > allowed {
                    problems.push(format!("more literal {:?} in the path", ch as char));
                }
                if aq.literal[k] > rq.literal[k] {
                    problems.push(format!("more literal {:?} in the query", ch as char));
                }
                if ap.escaped[k] > rp.escaped[k] || aq.escaped[k] > rq.escaped[k] {
                    problems.push(format!("more escaped {:?}", ch as char));
                }
            }
            if !drops_content(got.fired) && (ap.escaped != rp.escaped || aq.escaped != rq.escaped) {
                problems.push("an escape is gone though no rule removed anything".into());
            }
            if !problems.is_empty() {
                failures.push(format!(
                    "{name}: {}: rfc3986 {} vs {} (fired {}): {}",
                    show(&input),
                    show(&base),
                    show(&out),
                    got.fired,
                    problems.join(", ")
                ));
            }
        }
    }
    println!(
        "no_rule_decodes_a_reserved_escape: {compared} outputs compared with rfc3986 ({escapes_seen} with a reserved escape in the path), {} failure(s)",
        failures.len()
    );
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    assert!(compared > 0 && escapes_seen > 0);
    assert!(failures.is_empty(), "{} failure(s)", failures.len());
}

#[test]
fn kept_components_keep_their_escapes() {
    const SEG: &str = "keep%2F%3F%23%26%3D%2Bseg";
    const NAME: &str = "n%2F%3F%23%26%3D%2B";
    const VALUE: &str = "v%2F%3F%23%26%3D%2B%2B";
    let inputs = [
        format!("http://www.example.com/{SEG}/x?{NAME}={VALUE}&a=1#f"),
        format!("https://user@example.com.//{SEG}/?b=2&{NAME}={VALUE}"),
        format!("http://example.com/{SEG}?utm_source=x&{NAME}={VALUE}&jsessionid=1"),
        format!("/{SEG}/index.html?{NAME}={VALUE}&page=2"),
        format!("/(S(4hqa0555fwsecu455xqckv45))/{SEG};jsessionid=1?{NAME}={VALUE}"),
    ];
    let mut configs: Vec<(String, Canonicalizer)> = Profile::ALL
        .iter()
        .map(|p| (p.name().to_string(), Canonicalizer::new(*p)))
        .collect();
    configs.extend(
        census_configs()
            .into_iter()
            .skip(2)
            .map(|(name, c, _)| (name, c)),
    );
    let mut out = Vec::new();
    let mut checked = 0;
    for (name, c) in &mut configs {
        for input in &inputs {
            let got = canon(c, input.as_bytes(), &mut out).unwrap();
            let path = got.parts.path(&out);
            let query = got.parts.query(&out).unwrap_or(b"");
            let find = |hay: &[u8], needle: &str| {
                hay.windows(needle.len()).any(|w| w == needle.as_bytes())
            };
            assert!(
                find(path, SEG),
                "{name}: {input}: segment lost its escapes: {}",
                show(&out)
            );
            assert!(
                find(query, &format!("{NAME}={VALUE}")),
                "{name}: {input}: parameter lost its escapes: {}",
                show(&out)
            );
            // Exactly the escapes of the segment and of the parameter: none
            // decoded, none added.
            assert_eq!(census(path).escaped, census(SEG.as_bytes()).escaped);
            assert_eq!(
                census(query).escaped,
                census(format!("{NAME}={VALUE}").as_bytes()).escaped,
                "{name}: {input}: {}",
                show(&out)
            );
            checked += 1;
        }
    }
    println!("kept_components_keep_their_escapes: {checked} outputs checked");
    assert!(checked > 0);
}

#[test]
fn census_counts() {
    let c = census(b"/a%2fb/%2F%3F?&=+%zz%3d%2B%26%23%2");
    assert_eq!(c.literal, [2, 1, 0, 1, 1, 1]);
    assert_eq!(c.escaped, [2, 1, 1, 1, 1, 1]);
    println!("census_counts: 1 string, 6 characters");
}

// ---------------------------------------------------------------------------
// 4. Sorting.

/// The name of a query piece: up to the first `=`.
fn name_of(piece: &[u8]) -> &[u8] {
    piece.split(|&b| b == b'=').next().unwrap_or(piece)
}

fn split_query(q: &[u8]) -> Vec<Vec<u8>> {
    q.split(|&b| b == b'&').map(<[u8]>::to_vec).collect()
}

/// A random query of `n` pieces over a few names (so names repeat), some
/// without `=` or empty.
fn gen_sort_query(r: &mut Rng) -> String {
    const KEYS: &[&str] = &["a", "b", "c", "a-", "ab", "B", "page", "Page", "a%3D", ""];
    const VALUE_BYTES: &[&str] = &["0", "1", "2", "x", "Y", "%26", "%3D", "%20", "=", "-", "~"];
    let n = 2 + r.below(9);
    let mut pieces = Vec::with_capacity(n);
    for _ in 0..n {
        let key = r.pick(KEYS);
        let piece = match r.below(12) {
            0 => key.to_string(),
            1 => String::new(),
            _ => {
                let len = r.below(4);
                let value: String = (0..len).map(|_| r.pick(VALUE_BYTES)).collect();
                format!("{key}={value}")
            }
        };
        pieces.push(piece);
    }
    pieces.join("&")
}

/// The query of a canonical URL, as pieces.
fn output_pieces(out: &[u8], c: &Canonical) -> Vec<Vec<u8>> {
    split_query(c.parts.query(out).expect("the query is kept"))
}

/// Nothing is dropped: only sorting (and nothing else) changes the query.
const SORT_ONLY: &str =
    "-empty-query,-tracking,-session,-default-params,-query-space,-trailing-slash";

#[test]
fn sort_query_matches_a_stable_sort() {
    let mut rfc = Canonicalizer::new(Profile::Rfc3986);
    let mut by_key = with_rules(Profile::Aggressive, None, SORT_ONLY);
    let mut by_value = with_rules(
        Profile::Aggressive,
        None,
        &format!("{SORT_ONLY},sort-query=key-value"),
    );
    let mut kept = with_rules(
        Profile::Aggressive,
        Some("keep-position = [\"page\"]"),
        SORT_ONLY,
    );
    let mut r = Rng::new(0x5eed_0004);
    let (mut base, mut out) = (Vec::new(), Vec::new());
    let mut cases = 0;
    let (mut repeats, mut moved, mut no_eq_ties, mut pages) = (0, 0, 0, 0);
    for _ in 0..50_000 {
        let q = gen_sort_query(&mut r);
        let url = format!("http://example.com/p?{q}");
        // The query is canonical already: rfc3986 leaves it as it is.
        let c = rfc.canonicalize_into(url.as_bytes(), &mut base).unwrap();
        assert_eq!(c.parts.query(&base), Some(q.as_bytes()), "{url}");
        base.clear();
        let input = split_query(q.as_bytes());
        let mut input_sorted = input.clone();
        input_sorted.sort();

        // sort-query=key: stable sort_by on the name.
        let c = canon(&mut by_key, url.as_bytes(), &mut out).unwrap();
        let got = output_pieces(&out, &c);
        let mut expect = input.clone();
        expect.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        assert_eq!(got, expect, "sort-query=key: {url} -> {}", show(&out));
        let mut got_sorted = got.clone();
        got_sorted.sort();
        assert_eq!(got_sorted, input_sorted, "not a permutation: {url}");
        // Repeated names keep their order.
        for piece in &input {
            let name = name_of(piece);
            let of = |v: &[Vec<u8>]| -> Vec<Vec<u8>> {
                v.iter().filter(|p| name_of(p) == name).cloned().collect()
            };
            assert_eq!(of(&got), of(&input), "order of {name:?}: {url}");
            repeats += (of(&input).len() > 1) as usize;
        }
        assert_eq!(
            c.fired.has(Rule::SortQuery),
            got != input,
            "sort-query fired {} on {url} -> {}",
            c.fired,
            show(&out)
        );
        assert!(
            c.fired.iter().all(|r| r == Rule::SortQuery),
            "{url}: {}",
            c.fired
        );
        moved += (got != input) as usize;

        // sort-query=key-value: by name, then what follows the name ("" for
        // no `=`, which sorts before "=" and any value).
        let c = canon(&mut by_value, url.as_bytes(), &mut out).unwrap();
        let got = output_pieces(&out, &c);
        let mut expect = input.clone();
        expect.sort_by(|a, b| {
            let (na, nb) = (name_of(a), name_of(b));
            na.cmp(nb).then_with(|| a[na.len()..].cmp(&b[nb.len()..]))
        });
        assert_eq!(got, expect, "sort-query=key-value: {url} -> {}", show(&out));
        for w in got.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if name_of(a) == name_of(b) && a.contains(&b'=') != b.contains(&b'=') {
                assert!(!a.contains(&b'='), "no `=` must come first: {url}");
                no_eq_ties += 1;
            }
        }

        // keep-position = ["page"]: every `page` piece keeps its index, the
        // others are sorted by name around them.
        let c = canon(&mut kept, url.as_bytes(), &mut out).unwrap();
        let got = output_pieces(&out, &c);
        assert_eq!(got.len(), input.len());
        let mut movable: Vec<Vec<u8>> = input
            .iter()
            .filter(|p| name_of(p) != b"page")
            .cloned()
            .collect();
        movable.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        let mut next = movable.into_iter();
        let expect: Vec<Vec<u8>> = input
            .iter()
            .map(|p| {
                if name_of(p) == b"page" {
                    p.clone()
                } else {
                    next.next().unwrap()
                }
            })
            .collect();
        assert_eq!(got, expect, "keep-position: {url} -> {}", show(&out));
        for (i, p) in input.iter().enumerate() {
            if name_of(p) == b"page" {
                assert_eq!(got[i], *p, "page moved: {url}");
                pages += 1;
            }
        }
        cases += 1;
    }
    println!(
        "sort_query_matches_a_stable_sort: {cases} queries ({moved} reordered, {repeats} repeated names, {no_eq_ties} no-`=` ties, {pages} kept `page` pieces)"
    );
    assert!(cases > 0 && moved > 0 && repeats > 0 && no_eq_ties > 0 && pages > 0);
}

/// The documented examples of the sort orders, written out.
#[test]
fn sort_query_examples() {
    let examples: &[(&str, &str, &str)] = &[
        ("", "?b=1&a=2&a=1", "?a=2&a=1&b=1"),
        ("", "?a-=1&a=2", "?a=2&a-=1"),
        ("", "?b=1&B=2", "?B=2&b=1"),
        ("sort-query=key-value", "?a=2&a=1&a=&a", "?a&a=&a=1&a=2"),
        ("sort-query=key-value", "?b=1&a=x=1&a=x", "?a=x&a=x=1&b=1"),
        ("sort-query=off", "?b=1&a=2", "?b=1&a=2"),
    ];
    let mut out = Vec::new();
    for (edits, q, expect) in examples {
        let mut c = with_rules(Profile::Aggressive, None, &format!("{SORT_ONLY},{edits}"));
        let input = format!("http://example.com/{q}");
        canon(&mut c, input.as_bytes(), &mut out).unwrap();
        assert_eq!(
            show(&out),
            show(format!("http://example.com/{expect}").as_bytes()),
            "{edits}"
        );
    }
    let mut kept = with_rules(
        Profile::Aggressive,
        Some("keep-position = [\"page\"]"),
        SORT_ONLY,
    );
    canon(&mut kept, b"/x?c=1&page=2&b=1&Page=1&a=1", &mut out).unwrap();
    assert_eq!(show(&out), show(b"/x?Page=1&page=2&a=1&b=1&c=1"));
    println!("sort_query_examples: {} examples", examples.len() + 1);
}

// ---------------------------------------------------------------------------
// Issue 28: rules bugs, each on the fused way (no host section) and the
// in-place way (a host section no URL here has keeps the set from being
// fused).

/// A host section that no URL of these tests has.
const UNFUSED: &str = "\n[[host]]\nmatch = \"never.invalid\"\nrules = [\"-www\"]\n";

/// `with_rules` twice: the file as it is, and with [`UNFUSED`] after it.
fn both_ways(profile: Profile, file: &str, edits: &str) -> [Canonicalizer; 2] {
    [
        with_rules(profile, Some(file), edits),
        with_rules(profile, Some(&format!("{file}{UNFUSED}")), edits),
    ]
}

/// `input` gives `want`, with `rule` among the rules that fired, and `want`
/// is a fixed point.
fn gives(c: &mut Canonicalizer, input: &str, want: &str, rule: Option<Rule>, what: &str) {
    let mut out = Vec::new();
    let r = canon(c, input.as_bytes(), &mut out).unwrap();
    assert_eq!(show(&out), show(want.as_bytes()), "{what}: {input}");
    if let Some(rule) = rule {
        assert!(r.fired.has(rule), "{what}: {input}: fired {}", r.fired);
    }
    let mut again = Vec::new();
    let second = canon(c, &out, &mut again).unwrap();
    assert_eq!(
        show(&again),
        show(want.as_bytes()),
        "{what}: {input}, second run"
    );
    assert!(second.fired.is_empty(), "{what}: {input}: {}", second.fired);
}

/// Regression (issue 28): names with `[` `]` (PHP arrays) never matched:
/// the canonical query has `%5B%5D`, and the rules file's names were
/// compared as written. A name now matches written raw or percent-encoded,
/// in either hex case, in every list and in `defaults`' values.
#[test]
fn bracketed_parameter_names_match_raw_or_encoded() {
    for name in ["a[]", "a%5B%5D", "a%5b%5d"] {
        let keep = format!("keep-params = [\"{name}\", \"c\"]");
        for (way, mut c) in both_ways(Profile::Safe, &keep, "").into_iter().enumerate() {
            let what = format!("{keep} ({way})");
            for input in ["http://h/?a[]=1&b=2&c=3", "http://h/?a%5B%5D=1&b=2&c=3"] {
                gives(
                    &mut c,
                    input,
                    "http://h/?a%5B%5D=1&c=3",
                    Some(Rule::KeepParams),
                    &what,
                );
            }
        }
        let drop = format!("drop-params = [\"{name}\"]");
        for (way, mut c) in both_ways(Profile::Safe, &drop, "").into_iter().enumerate() {
            let what = format!("{drop} ({way})");
            gives(
                &mut c,
                "http://h/?a[]=1&a[]=2&c=3",
                "http://h/?c=3",
                Some(Rule::DropParams),
                &what,
            );
            gives(
                &mut c,
                "http://h/?a%5b%5d=1",
                "http://h/",
                Some(Rule::DropParams),
                &what,
            );
            // Not a prefix match: `a[x]` stays.
            gives(
                &mut c,
                "http://h/?a[x]=1",
                "http://h/?a%5Bx%5D=1",
                None,
                &what,
            );
        }
        let defaults = format!("defaults = {{ \"{name}\" = \"[1]\" }}");
        for (way, mut c) in both_ways(Profile::Safe, &defaults, "")
            .into_iter()
            .enumerate()
        {
            let what = format!("{defaults} ({way})");
            gives(
                &mut c,
                "http://h/?a[]=[1]&c=3",
                "http://h/?c=3",
                Some(Rule::DefaultParams),
                &what,
            );
            gives(
                &mut c,
                "http://h/?c=3&a%5B%5D=%5B1%5D",
                "http://h/?c=3",
                Some(Rule::DefaultParams),
                &what,
            );
            gives(
                &mut c,
                "http://h/?a[]=1",
                "http://h/?a%5B%5D=1",
                None,
                &what,
            );
        }
    }
    // Globs, the replacing and extending lists, and non-ASCII names.
    let file = "extra-tracking-params = [\"utm[*]\"]\nstate-params = [\"café\"]\n\
                extra-session-params = [\"s[]=hex32\"]";
    for (way, mut c) in both_ways(Profile::Safe, file, "").into_iter().enumerate() {
        let what = format!("lists ({way})");
        gives(
            &mut c,
            "http://h/?utm[source]=x&b=1",
            "http://h/?b=1",
            Some(Rule::Tracking),
            &what,
        );
        gives(
            &mut c,
            "http://h/?caf%C3%A9=1&b=1",
            "http://h/?b=1",
            Some(Rule::Session),
            &what,
        );
        gives(
            &mut c,
            "http://h/?café=1&b=1",
            "http://h/?b=1",
            Some(Rule::Session),
            &what,
        );
        let sid = "0123456789abcdef0123456789abcdef";
        gives(
            &mut c,
            &format!("http://h/?s[]={sid}&b=1"),
            "http://h/?b=1",
            Some(Rule::Session),
            &what,
        );
        gives(
            &mut c,
            "http://h/?s[]=1&b=1",
            "http://h/?s%5B%5D=1&b=1",
            None,
            &what,
        );
    }
    // `keep-position` and the per-host and per-path lists (in place only).
    let file = "sort-query = \"key\"\nkeep-position = [\"z[]\"]\n\
                [[host]]\nmatch = \"h\"\nkeep-params = [\"z[]\", \"a\", \"b[]\"]\n\
                [[host.path]]\nprefix = \"/p/\"\ndrop-params = [\"b[]\"]\n";
    let mut c = with_rules(Profile::Safe, Some(file), "");
    gives(
        &mut c,
        "http://h/?z[]=1&b[]=2&a=3&x=4",
        "http://h/?z%5B%5D=1&a=3&b%5B%5D=2",
        None,
        "host",
    );
    gives(
        &mut c,
        "http://h/x?b[]=2&z[]=1&a=3",
        "http://h/x?a=3&z%5B%5D=1&b%5B%5D=2",
        None,
        "host",
    );
    gives(
        &mut c,
        "http://h/p/?b[]=2&a=3",
        "http://h/p/?a=3",
        Some(Rule::DropParams),
        "path",
    );
}

/// Regression (issue 28): a host alias replaced the host with its trailing
/// dot, so `host-trailing-dot` neither fired (not in `--explain`, not in
/// `--stats`) nor could be switched off. The dot is now left to that rule.
#[test]
fn host_alias_leaves_the_trailing_dot_to_its_rule() {
    let file = "host-aliases = [\n  [\"203.0.113.7\", \"example.com\"],\n  \
                [\"shuchao.cnblogs.com/\", \"www.cnblogs.com/shuchao/\"],\n  \
                [\"ip.example\", \"198.51.100.1\"],\n]\n";
    let mut out = Vec::new();
    let mut c = with_rules(Profile::Safe, Some(file), "");
    let r = canon(&mut c, b"http://shuchao.cnblogs.com./x", &mut out).unwrap();
    assert_eq!(show(&out), show(b"http://www.cnblogs.com/shuchao/x"));
    assert_eq!(
        r.fired,
        RuleMask::of(&[Rule::HostTrailingDot, Rule::HostAlias])
    );
    let mut c = with_rules(Profile::Safe, Some(file), "-host-trailing-dot");
    gives(
        &mut c,
        "http://shuchao.cnblogs.com./x",
        "http://www.cnblogs.com./shuchao/x",
        Some(Rule::HostAlias),
        "-host-trailing-dot",
    );
    let r = canon(&mut c, b"http://shuchao.cnblogs.com./x", &mut out).unwrap();
    assert_eq!(r.fired, RuleMask::of(&[Rule::HostAlias]));
    // An IP address takes no trailing dot (the parser would drop it on the
    // next run): the alias writes it without one.
    for edits in ["", "-host-trailing-dot"] {
        let mut c = with_rules(Profile::Safe, Some(file), edits);
        gives(
            &mut c,
            "http://ip.example./a",
            "http://198.51.100.1/a",
            Some(Rule::HostAlias),
            edits,
        );
        gives(
            &mut c,
            "http://ip.example/a",
            "http://198.51.100.1/a",
            Some(Rule::HostAlias),
            edits,
        );
    }
}

/// Regression (issue 28): with `-empty-query`, a rule that removed the last
/// parameter left `?` when a stray `&` remained (`?utm_source=x&` gave `?`,
/// `?utm_source=x` gave nothing). Stray `&`s go with the `?`.
#[test]
fn removing_the_last_parameter_removes_stray_ampersands_too() {
    let file = "defaults = { sort = \"asc\" }";
    for edits in ["", "-empty-query"] {
        for (way, mut c) in both_ways(Profile::Safe, file, edits)
            .into_iter()
            .enumerate()
        {
            let what = format!("{edits:?} ({way})");
            for input in [
                "http://h/a?utm_source=x&",
                "http://h/a?&utm_source=x&&",
                "http://h/a?sort=asc&",
                "http://h/a?&&gclid=1&&jsessionid=2&",
            ] {
                gives(&mut c, input, "http://h/a", None, &what);
            }
            gives(
                &mut c,
                "/a?utm_source=x&",
                "/a",
                Some(Rule::Tracking),
                &what,
            );
        }
    }
    // A kept parameter keeps the query; its stray `&`s are empty-query's.
    let [mut fused, mut in_place] = both_ways(Profile::Safe, file, "-empty-query");
    for c in [&mut fused, &mut in_place] {
        gives(
            c,
            "http://h/a?b=1&utm_source=x&",
            "http://h/a?b=1&",
            Some(Rule::Tracking),
            "-empty-query",
        );
        // No rule removed anything: the `?` and `&`s stay.
        gives(c, "http://h/a?&&", "http://h/a?&&", None, "-empty-query");
    }
    let [mut fused, mut in_place] = both_ways(Profile::Safe, file, "");
    for c in [&mut fused, &mut in_place] {
        gives(
            c,
            "http://h/a?b=1&utm_source=x&",
            "http://h/a?b=1",
            Some(Rule::Tracking),
            "",
        );
    }
}
