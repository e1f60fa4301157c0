//! RFC 3986 §5.4 reference-resolution examples, base `http://a/b/c/d;p?q`,
//! in both profiles.
//!
//! The expected strings are the RFC's (§5.4.1 "Normal Examples", §5.4.2
//! "Abnormal Examples"). canonurl resolves references the way the URL
//! Standard does, so where the URL Standard's result differs from the RFC's,
//! the URL Standard's result is asserted and the case carries a
//! `differs_from_rfc` note saying why. Every expectation is also checked
//! against the `url` crate (a URL Standard implementation), so that a wrong
//! expectation here is caught as such.
//!
//! None of these results contain a percent-escape, so both profiles must give
//! the same bytes.

use canonurl::{Base, Canonicalizer, Profile};

const BASE: &str = "http://a/b/c/d;p?q";

struct Example {
    reference: &'static str,
    /// The result given in RFC 3986 §5.4.
    rfc: &'static str,
    /// The URL Standard's result, when it differs from `rfc`.
    whatwg: Option<&'static str>,
    /// Why they differ (empty when they do not).
    differs_from_rfc: &'static str,
}

const fn same(reference: &'static str, rfc: &'static str) -> Example {
    Example {
        reference,
        rfc,
        whatwg: None,
        differs_from_rfc: "",
    }
}

const fn differs(
    reference: &'static str,
    rfc: &'static str,
    whatwg: &'static str,
    differs_from_rfc: &'static str,
) -> Example {
    Example {
        reference,
        rfc,
        whatwg: Some(whatwg),
        differs_from_rfc,
    }
}

/// RFC 3986 §5.4.1.
const NORMAL: &[Example] = &[
    same("g:h", "g:h"),
    same("g", "http://a/b/c/g"),
    same("./g", "http://a/b/c/g"),
    same("g/", "http://a/b/c/g/"),
    same("/g", "http://a/g"),
    // RFC: "http://g". The URL Standard serializes the empty path of a
    // special URL as "/".
    differs(
        "//g",
        "http://g",
        "http://g/",
        "special URLs always have a path; the empty path serializes as \"/\"",
    ),
    same("?y", "http://a/b/c/d;p?y"),
    same("g?y", "http://a/b/c/g?y"),
    same("#s", "http://a/b/c/d;p?q#s"),
    same("g#s", "http://a/b/c/g#s"),
    same("g?y#s", "http://a/b/c/g?y#s"),
    same(";x", "http://a/b/c/;x"),
    same("g;x", "http://a/b/c/g;x"),
    same("g;x?y#s", "http://a/b/c/g;x?y#s"),
    same("", "http://a/b/c/d;p?q"),
    same(".", "http://a/b/c/"),
    same("./", "http://a/b/c/"),
    same("..", "http://a/b/"),
    same("../", "http://a/b/"),
    same("../g", "http://a/b/g"),
    same("../..", "http://a/"),
    same("../../", "http://a/"),
    same("../../g", "http://a/g"),
];

/// RFC 3986 §5.4.2.
const ABNORMAL: &[Example] = &[
    // ".." beyond the root: the RFC and the URL Standard both stop at "/".
    same("../../../g", "http://a/g"),
    same("../../../../g", "http://a/g"),
    same("/./g", "http://a/g"),
    same("/../g", "http://a/g"),
    same("g.", "http://a/b/c/g."),
    same(".g", "http://a/b/c/.g"),
    same("g..", "http://a/b/c/g.."),
    same("..g", "http://a/b/c/..g"),
    same("./../g", "http://a/b/g"),
    same("./g/.", "http://a/b/c/g/"),
    same("g/./h", "http://a/b/c/g/h"),
    same("g/../h", "http://a/b/c/h"),
    same("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    same("g;x=1/../y", "http://a/b/c/y"),
    // Dot segments in the query and fragment are data.
    same("g?y/./x", "http://a/b/c/g?y/./x"),
    same("g?y/../x", "http://a/b/c/g?y/../x"),
    same("g#s/./x", "http://a/b/c/g#s/./x"),
    same("g#s/../x", "http://a/b/c/g#s/../x"),
    // RFC: "http:g" for strict parsers, "http://a/b/c/g" for backward
    // compatible ones. The URL Standard is the latter: a special scheme equal
    // to the base's makes the rest a relative reference.
    differs(
        "http:g",
        "http:g",
        "http://a/b/c/g",
        "same special scheme as the base: resolved as relative (the RFC's non-strict reading)",
    ),
];

fn expected(e: &Example) -> &'static str {
    e.whatwg.unwrap_or(e.rfc)
}

#[test]
fn expectations_agree_with_the_url_crate() {
    let base = url::Url::parse(BASE).unwrap();
    for e in NORMAL.iter().chain(ABNORMAL) {
        let joined = base.join(e.reference).map(String::from);
        assert_eq!(
            joined.as_deref(),
            Ok(expected(e)),
            "the url crate resolves {:?} differently",
            e.reference
        );
        assert_eq!(e.whatwg.is_some(), !e.differs_from_rfc.is_empty());
        assert_ne!(
            e.whatwg,
            Some(e.rfc),
            "{:?} marked as differing",
            e.reference
        );
    }
}

fn check(profile: Profile, section: &str, examples: &[Example]) -> Vec<String> {
    let base =
        Base::parse(BASE.as_bytes()).unwrap_or_else(|r| panic!("base {BASE:?} rejected: {r}"));
    assert_eq!(
        base.as_bytes(),
        BASE.as_bytes(),
        "the base is canonical already"
    );
    let mut c = Canonicalizer::new(profile).with_base(base);
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for e in examples {
        out.clear();
        let want = expected(e);
        match c.canonicalize_into(e.reference.as_bytes(), &mut out) {
            Ok(canonical) if out == want.as_bytes() => {
                if !canonical.parts.is_consistent(&out) {
                    failures.push(format!("{section} {:?}: inconsistent parts", e.reference));
                }
            }
            Ok(_) => failures.push(format!(
                "{section} {:?}: expected {want:?}, got {:?}",
                e.reference,
                String::from_utf8_lossy(&out)
            )),
            Err(r) => failures.push(format!(
                "{section} {:?}: expected {want:?}, rejected ({r})",
                e.reference
            )),
        }
    }
    failures
}

fn run(profile: Profile) {
    let mut failures = check(profile, "§5.4.1", NORMAL);
    failures.extend(check(profile, "§5.4.2", ABNORMAL));
    let total = NORMAL.len() + ABNORMAL.len();
    println!(
        "rfc3986 §5.4 ({}): {} passed / {total} total",
        profile.name(),
        total - failures.len()
    );
    println!("where the URL Standard's result (asserted) differs from RFC 3986's:");
    for e in NORMAL.iter().chain(ABNORMAL).filter(|e| e.whatwg.is_some()) {
        println!(
            "  {:?}: RFC {:?}, URL Standard {:?} ({})",
            e.reference,
            e.rfc,
            expected(e),
            e.differs_from_rfc
        );
    }
    for f in &failures {
        println!("  FAIL {f}");
    }
    assert!(failures.is_empty(), "{} failure(s)", failures.len());
}

#[test]
fn resolution_whatwg() {
    run(Profile::Whatwg);
}

#[test]
fn resolution_rfc3986() {
    run(Profile::Rfc3986);
}
