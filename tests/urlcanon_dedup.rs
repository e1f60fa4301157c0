//! The dedup rules against the Internet Archive's urlcanon vectors:
//! `aggressive.json` and the canonicalizer groups of `surt.json`
//! (`Canonicalizer.DefaultIA`, `Canonicalizer.IA`, `massageHost`,
//! `stripPathSessionId`, `alphaRorderQuery`, `defaultIASurt`, `google`).
//!
//! Every case passes unless it is listed in `DIFFERENCES` with the reason
//! canonurl deliberately differs; a listed case must really differ, so the
//! list can not go stale. The reasons are summarized in docs/urlcanon.md.
//!
//! urlcanon guesses `http://` for an input without a scheme (`foo.com/a`);
//! canonurl does not guess (in a log, `foo.com/a` is a relative path), so the
//! test adds `http://` to such inputs and compares what the rules do.

use crate::common;

use std::collections::BTreeMap;

use canonurl::canon::rules::{file, Edit, Rule, SortQuery, TrailingSlash};
use canonurl::canon::surt::{surt, SurtForm};
use canonurl::{Canonicalizer, Profile};

const RESERVED: &str =
    "never decodes a reserved escape: `%21` is `!`, a sub-delimiter, and a server may treat the two differently (RFC 3986 §2.2)";
const QUERY_CASE: &str =
    "urlcanon lower-cases the whole query; query values are case-sensitive on most servers, so canonurl has no such rule";
const EMPTY: &str =
    "an empty string is not a URL: canonurl rejects it (missing-scheme) rather than write `-`";
const FILEDESC: &str =
    "urlcanon knows `filedesc:` as an ARC-file record; to the URL Standard `filedesc://foo.arc.gz` has the host `foo.arc.gz`, which SURT reverses";
const QUERY_CASE_AND_RESERVED: &str =
    "urlcanon lower-cases the query and decodes `%3A`, `%28`, `%29`, `%3B` (reserved); canonurl does neither";
const WHATWG_HOST: &str =
    "the URL Standard's host parser rejects this host (forbidden domain code point); Google's canonicalizer escapes it";
const REPEATED_UNESCAPE: &str =
    "Google unescapes repeatedly (`%2525` → `%25` → `%`); canonurl never decodes `%25`, which would merge URLs that differ";

/// Group, input → why canonurl differs (see docs/urlcanon.md).
const DIFFERENCES: &[(&str, &str, &str)] = &[
    ("aggressive.json", "foo.com/pa%21th", RESERVED),
    ("aggressive.json", "http://example.com/foo?c=5&&a=1&B=3&A=2&b=4&C=6&", QUERY_CASE),
    ("defaultIASurt", "", EMPTY),
    ("defaultIASurt", "filedesc://foo.arc.gz", FILEDESC),
    ("defaultIASurt", "http://visit.webhosting.yahoo.com/visit.gif?&r=http%3A//web.archive.org/web/20090517140029/http%3A//anthonystewarthead.electric-chi.com/&b=Netscape%205.0%20%28Windows%3B%20en-US%29&s=1366x768&o=Win32&c=24&j=true&v=1.2", QUERY_CASE_AND_RESERVED),
    ("google", "%20leadingspace.com/", WHATWG_HOST),
    ("google", "http://\u{1}\u{80}.com/", WHATWG_HOST),
    ("google", "http:// leadingspace.com/", WHATWG_HOST),
    ("google", "http://%20leadingspace.com/", WHATWG_HOST),
    ("google", "http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B", WHATWG_HOST),
    ("google", "http://host/%%%25%32%35asd%%", REPEATED_UNESCAPE),
    ("google", "http://host/%25%32%35", REPEATED_UNESCAPE),
    ("google", "http://host/%25%32%35%25%32%35", REPEATED_UNESCAPE),
    ("google", "http://host/%2525252525252525", REPEATED_UNESCAPE),
    ("google", "http://host/asdf%25%32%35asd", REPEATED_UNESCAPE),
];

/// How a group is run.
#[derive(Clone, Copy)]
enum Run {
    /// The whole URL through the profile with these edits.
    Url(Profile, &'static [Edit]),
    /// The host of `http://{input}/` through the profile, then the host.
    Host(Profile),
    /// The path of `http://h{input}` through the profile, then path and query.
    Path(Profile, &'static [Edit]),
    /// The query of `http://h/?{input}`, then the query.
    Query(Profile, &'static [Edit]),
    /// The URL through the profile, then its CDX SURT.
    Surt(Profile, &'static [Edit]),
}

/// urlcanon's aggressive canonicalizer in canonurl's rules: `aggressive`
/// plus the two opt-in rules it has (lower-case path, one scheme), sorting
/// by key then value, removing a trailing slash (canonurl adds one by
/// default), and no index-file rule (urlcanon has none).
const IA: &[Edit] = &[
    Edit::TrailingSlash(TrailingSlash::Remove),
    Edit::On(Rule::HttpsAsHttp),
    Edit::On(Rule::LowercasePath),
    Edit::Off(Rule::IndexFile),
    Edit::Sort(SortQuery::KeyValue),
];
/// The Wayback ("IA") canonicalizer: the same, keeping the scheme.
const IA_KEEP_SCHEME: &[Edit] = &[
    Edit::TrailingSlash(TrailingSlash::Remove),
    Edit::On(Rule::LowercasePath),
    Edit::Off(Rule::IndexFile),
    Edit::Sort(SortQuery::KeyValue),
];
/// `alphaRorderQuery` only sorts (key, then value), keeping empty pairs.
const SORT_ONLY: &[Edit] = &[Edit::Sort(SortQuery::KeyValue), Edit::Off(Rule::EmptyQuery)];
/// Google Safe Browsing's canonicalization: fragment removed, duplicate
/// slashes collapsed, an empty query kept.
const GOOGLE: &[Edit] = &[
    Edit::On(Rule::DuplicateSlashes),
    Edit::Off(Rule::EmptyQuery),
];

fn has_scheme(s: &str) -> bool {
    match s.find(':') {
        Some(i) => {
            i > 0
                && s[..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                && s.as_bytes()[0].is_ascii_alphabetic()
                // `host:8080` is a host and a port, not a scheme.
                && !s[i + 1..].starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn canonicalizer(profile: Profile, edits: &[Edit]) -> Canonicalizer {
    let set = file::build(profile.rule_mask(), None, edits).unwrap();
    let mut c = Canonicalizer::new(profile);
    c.set_rules(Some(std::sync::Arc::new(set)));
    c
}

fn ours(run: Run, input: &str) -> Result<String, String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let full = |input: &str| {
        if has_scheme(input.trim()) {
            input.to_string()
        } else {
            format!("http://{}", input.trim())
        }
    };
    let mut out = Vec::new();
    match run {
        Run::Url(p, edits) => {
            let mut c = canonicalizer(p, edits);
            c.canonicalize_into(full(input).as_bytes(), &mut out)
                .map_err(|e| e.to_string())?;
            Ok(text(&out))
        }
        Run::Host(p) => {
            let mut c = canonicalizer(p, &[]);
            let r = c
                .canonicalize_into(format!("http://{input}/").as_bytes(), &mut out)
                .map_err(|e| e.to_string())?;
            Ok(text(r.parts.host(&out).unwrap_or_default()))
        }
        Run::Path(p, edits) => {
            let mut c = canonicalizer(p, edits);
            let r = c
                .canonicalize_into(format!("http://h{input}").as_bytes(), &mut out)
                .map_err(|e| e.to_string())?;
            Ok(text(&out[r.parts.path_start as usize..]))
        }
        Run::Query(p, edits) => {
            let mut c = canonicalizer(p, edits);
            let r = c
                .canonicalize_into(format!("http://h/?{input}").as_bytes(), &mut out)
                .map_err(|e| e.to_string())?;
            Ok(text(r.parts.query(&out).unwrap_or_default()))
        }
        Run::Surt(p, edits) => {
            let mut c = canonicalizer(p, edits);
            let r = c
                .canonicalize_into(input.as_bytes(), &mut out)
                .map_err(|e| e.to_string())?;
            let mut s = Vec::new();
            surt(&out, &r.parts, SurtForm::Cdx, &mut s);
            Ok(text(&s))
        }
    }
}

#[test]
fn urlcanon_dedup_vectors() {
    let Some(data) = common::shared_data_or_skip("urlcanon_dedup_vectors") else {
        return;
    };
    let (aggressive, _) = common::read_json(&data.join("urlcanon/aggressive.json"));
    let (surt_groups, _) = common::read_json(&data.join("urlcanon/surt.json"));
    let mut groups: Vec<(String, Run, BTreeMap<String, String>)> = Vec::new();
    let cases = |v: &serde_json::Value| -> BTreeMap<String, String> {
        v.as_object()
            .expect("an object of input -> expected")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("a string").to_string()))
            .collect()
    };
    groups.push((
        "aggressive.json".into(),
        Run::Url(Profile::Aggressive, IA),
        cases(&aggressive),
    ));
    for (name, run) in [
        (
            "Canonicalizer.DefaultIA",
            Run::Url(Profile::Aggressive, IA_KEEP_SCHEME),
        ),
        (
            "Canonicalizer.IA",
            Run::Url(Profile::Aggressive, IA_KEEP_SCHEME),
        ),
        ("massageHost", Run::Host(Profile::Aggressive)),
        ("stripPathSessionId", Run::Path(Profile::Safe, &[])),
        (
            "alphaRorderQuery",
            Run::Query(Profile::Aggressive, SORT_ONLY),
        ),
        (
            "defaultIASurt",
            Run::Surt(Profile::Aggressive, IA_KEEP_SCHEME),
        ),
        ("google", Run::Url(Profile::Safe, GOOGLE)),
    ] {
        groups.push((name.into(), run, cases(&surt_groups[name])));
    }

    let mut failures = Vec::new();
    let mut listed_but_passing = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (group, run, cases) in &groups {
        let (mut passed, mut differ) = (0, 0);
        for (input, expected) in cases {
            let got = ours(*run, input);
            let listed = DIFFERENCES
                .iter()
                .find(|(g, i, _)| g == group && i == input);
            let ok = got.as_deref() == Ok(expected.as_str());
            match (ok, listed) {
                (true, None) => passed += 1,
                (false, Some(_)) => differ += 1,
                (true, Some(_)) => listed_but_passing.push(format!("{group}: {input:?}")),
                (false, None) => failures.push(format!(
                    "{group}: {input:?}\n  expected {expected:?}\n  got      {got:?}"
                )),
            }
            if listed.is_some() {
                seen.insert((group.clone(), input.clone()));
            }
        }
        println!("{group}: {passed} passed, {differ} listed differences");
    }
    let unknown: Vec<_> = DIFFERENCES
        .iter()
        .filter(|(g, i, _)| !seen.contains(&(g.to_string(), i.to_string())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} unlisted failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        listed_but_passing.is_empty(),
        "listed differences that pass now (remove them): {listed_but_passing:?}"
    );
    assert!(
        unknown.is_empty(),
        "listed cases not in the data: {unknown:?}"
    );
}
