//! Canonicalizing an output again gives the same bytes, in every profile and
//! with every dedup rule on: the second pass reports `unchanged` and fires no
//! rule. An input that starts with `/` is also read as a request target
//! (path-only output, read again as a target).
#![no_main]

use std::sync::Arc;

use canonurl::canon::rules::{file, Edit, Rule, RuleSet, SortQuery, TrailingSlash};
use canonurl::{Canonicalizer, Profile};
use libfuzzer_sys::fuzz_target;

/// `aggressive` with the opt-in rules, `trailing-slash=add` and
/// `sort-query=key-value`: every rule on, with the non-default options.
fn every_rule() -> Canonicalizer {
    let edits = [
        Edit::On(Rule::LowercasePath),
        Edit::On(Rule::HttpsAsHttp),
        Edit::TrailingSlash(TrailingSlash::Add),
        Edit::Sort(SortQuery::KeyValue),
    ];
    let rules = RuleSet::new(Profile::Aggressive.rule_mask(), &edits);
    Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(rules))
}

/// A rules file with every scoped key: host aliases (to a host, to a host
/// and path prefix), kept and dropped parameters and defaults per host and
/// per path prefix, and rewrites of the path and of the whole URL. The
/// rewrites give URLs they do not match again (a rewrite that does is the
/// user's loop, not canonurl's).
const SCOPED: &str = r#"
host-aliases = [
  ["1.2.3.4", "example.com"],
  ["a.example.org/x/", "example.net/y/"],
  ["www.b.example", "c.example"],
]
drop-params = ["view", "l*"]
rewrite = [
  { regex = '^(https?)://m\.example\.com/', replace = '$1://example.com/', scope = "url", id = "m" },
  { regex = '^/story\?id=(\d+)$', replace = '/story.php?id=$1', id = "story" },
]

[[path]]
prefix = "/p/"
keep-params = ["id", "p*"]

[[host]]
match = ["example.com", "*.example.net"]
keep-params = ["id", "q", "page"]

[[host.path]]
prefix = "/s/"
defaults = { q = "1" }
drop-params = ["*x"]
"#;

/// `aggressive` with [`SCOPED`] and `http-as-https`.
fn scoped() -> Canonicalizer {
    let edits = [Edit::On(Rule::HttpAsHttps)];
    let rules = file::build(Profile::Aggressive.rule_mask(), Some(SCOPED), &edits)
        .expect("valid rules file");
    Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(rules))
}

fuzz_target!(|data: &[u8]| {
    let configs = Profile::ALL
        .map(|p| (p.name(), Canonicalizer::new(p)))
        .into_iter()
        .chain([
            ("aggressive+every rule", every_rule()),
            ("aggressive+scoped rules file", scoped()),
        ]);
    for (name, mut c) in configs {
        for target in [false, true] {
            if target && data.first() != Some(&b'/') {
                continue;
            }
            let mut once = Vec::new();
            let first = if target {
                c.canonicalize_target(data, &mut once)
            } else {
                c.canonicalize_into(data, &mut once)
            };
            if !target {
                // A leading space keeps the input off every fast path and
                // changes nothing else (the URL Standard strips it): the
                // fast paths must give what the general parser gives.
                let mut spaced = Vec::new();
                let general = c.canonicalize_into(&[&b" "[..], data].concat(), &mut spaced);
                match (&first, general) {
                    (Ok(a), Ok(b)) => {
                        assert!(
                            once == spaced,
                            "{name}: {} vs {}",
                            once.escape_ascii(),
                            spaced.escape_ascii()
                        );
                        assert!(a.parts == b.parts, "{name}: {}", once.escape_ascii());
                    }
                    (Err(a), Err(b)) => assert!(a.reason == b.reason, "{name}: {a} vs {b}"),
                    (a, b) => panic!(
                        "{name}: {} gives {a:?}, with a space {b:?}",
                        data.escape_ascii()
                    ),
                }
            }
            let Ok(first) = first else {
                continue;
            };
            let mut twice = Vec::new();
            let again = if first.parts.scheme_end == canonurl::ABSENT {
                c.canonicalize_target(&once, &mut twice)
            } else {
                c.canonicalize_into(&once, &mut twice)
            };
            let shown = once.escape_ascii();
            let r = again.unwrap_or_else(|e| panic!("{name}: {shown} is rejected again: {e}"));
            assert!(once == twice, "{name}: {shown} -> {}", twice.escape_ascii());
            assert!(r.unchanged, "{name}: {shown}");
            assert!(r.fired.is_empty(), "{name}: {shown} fired {}", r.fired);
        }
    }
});
