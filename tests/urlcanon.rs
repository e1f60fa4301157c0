//! Test data from iipc/urlcanon (see shared/data/SOURCES.md), read through
//! the URL Standard, `whatwg` profile.
//!
//! - `funky_ipv4.json` maps a host to urlcanon's dotted IPv4 form, or to null
//!   when urlcanon finds it is not an IPv4 address. The URL Standard fails on
//!   such a host when it "ends in a number" (then it must be IPv4); otherwise
//!   it is an ordinary domain.
//! - `path_dots.json` maps a path to urlcanon's `resolve_path_dots` result, for
//!   special (`\` is a separator) and non-special schemes. urlcanon keeps each
//!   separator as it was; the URL Standard writes `/` for a `\` in special URLs.

use crate::common;

use canonurl::{Canonicalizer, Profile, Reason};
use common::{read_json, shared_data_or_skip, show};

/// The URL Standard's IPv4 number parser, only as far as "is it a number".
fn is_ipv4_number(part: &str) -> bool {
    if part.is_empty() {
        return false;
    }
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x").or(part.strip_prefix("0X")) {
        (hex, 16)
    } else if part.len() >= 2 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    digits.chars().all(|c| c.is_digit(radix))
}

/// The URL Standard's "ends in a number checker".
fn ends_in_a_number(host: &str) -> bool {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") {
        if parts.len() == 1 {
            return false;
        }
        parts.pop();
    }
    let last = parts.last().copied().unwrap_or("");
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) || is_ipv4_number(last)
}

#[test]
fn ends_in_a_number_checker() {
    assert!(ends_in_a_number("1.2.3.4"));
    assert!(ends_in_a_number("a.0x"));
    assert!(
        ends_in_a_number("a.09"),
        "all digits counts even when not octal"
    );
    assert!(ends_in_a_number("a.1."));
    assert!(!ends_in_a_number("0000xa"));
    assert!(!ends_in_a_number("1.a"));
    assert!(!ends_in_a_number("."));
}

#[test]
fn funky_ipv4() {
    let Some(data) = shared_data_or_skip("funky_ipv4") else {
        return;
    };
    let (json, _) = read_json(&data.join("urlcanon/funky_ipv4.json"));
    let cases = json.as_object().expect("funky_ipv4.json is an object");
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let mut failures = Vec::new();
    let mut domains = 0;
    for (host, value) in cases {
        // What the URL Standard gives: urlcanon's address; for urlcanon's
        // null, failure if the host ends in a number, else the host as a
        // domain (all these hosts are ASCII; domains are lower-cased).
        let expected: Option<String> = match value.as_str() {
            Some(addr) => Some(addr.to_string()),
            None if ends_in_a_number(host) => None,
            None => {
                domains += 1;
                Some(host.to_ascii_lowercase())
            }
        };
        let input = format!("http://{host}/");
        // The reading of the data must agree with a WHATWG implementation.
        let ada = ada_url::Url::parse(input.as_str(), None)
            .ok()
            .map(|u| u.hostname().to_string());
        assert_eq!(
            ada, expected,
            "test expectation for {input:?} disagrees with ada"
        );

        out.clear();
        let got = c.canonicalize_into(input.as_bytes(), &mut out);
        match (&expected, got) {
            (None, Err(_)) => {}
            (None, Ok(_)) => {
                failures.push(format!("{input:?}: expected failure, got {}", show(&out)))
            }
            (Some(addr), Err(r)) => {
                failures.push(format!("{input:?}: rejected ({r}), expected host {addr:?}"))
            }
            (Some(addr), Ok(canonical)) => {
                let href = format!("http://{addr}/");
                let host = canonical.parts.host(&out);
                if out != href.as_bytes() || host != Some(addr.as_bytes()) {
                    failures.push(format!(
                        "{input:?}: expected {href:?} with host {addr:?}, got {} with host {:?}",
                        show(&out),
                        host.map(show)
                    ));
                }
            }
        }
    }
    println!(
        "funky_ipv4: {} passed / {} total ({domains} null case(s) are domains, not failures, in the URL Standard)",
        cases.len() - failures.len(),
        cases.len()
    );
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    assert!(cases.len() >= 40, "only {} cases read", cases.len());
    assert!(
        failures.is_empty(),
        "{} funky_ipv4 failure(s)",
        failures.len()
    );
}

#[test]
fn path_dots() {
    let Some(data) = shared_data_or_skip("path_dots") else {
        return;
    };
    // The file repeats some keys (with the same value); a JSON map keeps one.
    let (json, _) = read_json(&data.join("urlcanon/path_dots.json"));
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for (section, prefix) in [
        ("special", "http://example.com"),
        ("nonspecial", "foo://example.com"),
    ] {
        let cases = json[section]
            .as_object()
            .unwrap_or_else(|| panic!("path_dots.json has no {section:?} object"));
        assert!(cases.len() >= 300, "{section}: only {} cases", cases.len());
        let mut passed = 0;
        for (path, value) in cases {
            total += 1;
            let resolved = value.as_str().expect("string value");
            let input = format!("{prefix}{path}");
            // The pathname the URL Standard gives, or None for failure.
            let expected: Option<String> = if section == "special" {
                // `\` is a path separator and is written as `/`.
                Some(resolved.replace('\\', "/"))
            } else if path.starts_with('\\') {
                // Not a separator here: the `\` ends up in the opaque host,
                // where it is a forbidden host code point.
                None
            } else {
                Some(resolved.to_string())
            };
            // The reading of the data must agree with a WHATWG implementation.
            let ada = ada_url::Url::parse(input.as_str(), None)
                .ok()
                .map(|u| u.pathname().to_string());
            assert_eq!(
                ada, expected,
                "test expectation for {input:?} disagrees with ada"
            );

            out.clear();
            let got = c.canonicalize_into(input.as_bytes(), &mut out);
            let ok = match (&expected, got) {
                (Some(p), Ok(canonical)) if canonical.parts.path(&out) == p.as_bytes() => true,
                (None, Err(r)) if r.reason == Reason::ForbiddenHostCodePoint(b'\\') => true,
                (expected, got) => {
                    let expected = match expected {
                        Some(p) => format!("pathname {p:?}"),
                        None => "ForbiddenHostCodePoint('\\\\')".to_string(),
                    };
                    let got = match got {
                        Ok(cn) => format!(
                            "pathname {} (href {})",
                            show(cn.parts.path(&out)),
                            show(&out)
                        ),
                        Err(r) => format!("rejection ({r}, {:?})", r.reason),
                    };
                    failures.push(format!("{input:?}: expected {expected}, got {got}"));
                    false
                }
            };
            passed += usize::from(ok);
        }
        println!(
            "path_dots {section}: {passed} passed / {} total",
            cases.len()
        );
    }
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {total} path_dots case(s) failed",
        failures.len()
    );
}
