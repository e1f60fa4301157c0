//! Canonical output is a fixed point, in both profiles: canonicalizing it
//! again (without a base) gives the same bytes and reports `unchanged`.
//!
//! Over the same inputs, the `rfc3986` profile's escape normalization is
//! checked against RFC 3986 §2.1/§2.3/§6.2.2.2: no escaped unreserved
//! character and no lower-case hex digit is left in an escape, every `%`
//! starts an escape, and the reserved escapes `%2F %3F %23 %26 %3D %2B %25`
//! of the `whatwg` output all survive (same count of each, plus, for `%25`,
//! one per `%` of the `whatwg` output that starts no escape and, for `%23`,
//! one per `#` after the fragment's first). A `whatwg` output without any
//! `%`, any byte RFC 3986 excludes (`[` `]` included) or a second `#` must
//! come out of `rfc3986` the same but for letter case (an opaque host is
//! lower-cased).
//!
//! Inputs: the WPT urltestdata cases (with their bases), the url-dataset
//! lines, and urlcanon's path_dots paths.

use crate::common;

use canonurl::{Base, Canonicalizer, Profile, Reject};
use common::{read_json, read_lines, shared_data_or_skip, show, wpt_inputs_with_bases};

/// The escapes (`%` and two hex digits) in `s`, as (offset, hex digit bytes).
/// Bytes after a valid escape are scanned from its end; a `%` without two hex
/// digits after it is not an escape and scanning resumes at the next byte.
fn escapes(s: &[u8]) -> Vec<(usize, [u8; 2])> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && i + 2 < s.len()
            && s[i + 1].is_ascii_hexdigit()
            && s[i + 2].is_ascii_hexdigit()
        {
            found.push((i, [s[i + 1], s[i + 2]]));
            i += 3;
        } else {
            i += 1;
        }
    }
    found
}

fn hex_value(d: [u8; 2]) -> u8 {
    let v = |b: u8| (b as char).to_digit(16).unwrap() as u8;
    v(d[0]) * 16 + v(d[1])
}

/// RFC 3986 §2.3: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Reserved (or `%`) escapes that the rfc3986 profile must keep.
const KEPT: [u8; 7] = [b'/', b'?', b'#', b'&', b'=', b'+', b'%'];

fn kept_counts(s: &[u8]) -> [usize; KEPT.len()] {
    let mut counts = [0; KEPT.len()];
    for (_, d) in escapes(s) {
        if let Some(k) = KEPT.iter().position(|&b| b == hex_value(d)) {
            counts[k] += 1;
        }
    }
    counts
}

/// How many `%` of `s` start no escape.
fn bare_percents(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b == b'%').count() - escapes(s).len()
}

/// Problems with one rfc3986 output, if any.
fn rfc3986_escape_problems(out: &[u8]) -> Option<String> {
    if bare_percents(out) > 0 {
        return Some("a % that starts no escape".to_string());
    }
    for (at, d) in escapes(out) {
        let v = hex_value(d);
        if is_unreserved(v) {
            return Some(format!("escaped unreserved {:?} at {at}", v as char));
        }
        if d.iter().any(u8::is_ascii_lowercase) {
            return Some(format!("lower-case hex at {at}"));
        }
    }
    None
}

struct Checker {
    first: [Canonicalizer; 2],
    again: [Canonicalizer; 2],
    outs: [Vec<u8>; 2],
    again_out: Vec<u8>,
    checked: usize,
    failures: Vec<String>,
}

const PROFILES: [Profile; 2] = [Profile::Whatwg, Profile::Rfc3986];

impl Checker {
    fn new() -> Checker {
        Checker {
            first: PROFILES.map(Canonicalizer::new),
            again: PROFILES.map(Canonicalizer::new),
            outs: [Vec::new(), Vec::new()],
            again_out: Vec::new(),
            checked: 0,
            failures: Vec::new(),
        }
    }

    fn set_base(&mut self, base: Option<&Base>) {
        for c in &mut self.first {
            c.set_base(base.cloned());
        }
    }

    fn check(&mut self, input: &[u8], what: &str) {
        let mut results: [Option<Result<(), Reject>>; 2] = [None, None];
        for (i, profile) in PROFILES.iter().enumerate() {
            let out = &mut self.outs[i];
            out.clear();
            let r = self.first[i].canonicalize_into(input, out);
            results[i] = Some(r.map(|_| ()));
            if r.is_err() {
                continue;
            }
            self.checked += 1;
            self.again_out.clear();
            match self.again[i].canonicalize_into(out, &mut self.again_out) {
                Ok(canonical) if self.again_out == *out && canonical.unchanged => {}
                Ok(canonical) => self.failures.push(format!(
                    "{what} {} ({}): {} -> {} -> {} (unchanged = {})",
                    show(input),
                    profile.name(),
                    show(input),
                    show(out),
                    show(&self.again_out),
                    canonical.unchanged
                )),
                Err(r) => self.failures.push(format!(
                    "{what} {} ({}): output {} is rejected ({r})",
                    show(input),
                    profile.name(),
                    show(out)
                )),
            }
        }
        let [whatwg, rfc] = &self.outs;
        match (&results[0], &results[1]) {
            (Some(Ok(())), Some(Ok(()))) => {
                if let Some(p) = rfc3986_escape_problems(rfc) {
                    self.failures.push(format!(
                        "{what} {}: rfc3986 output {}: {p}",
                        show(input),
                        show(rfc)
                    ));
                }
                // `%25` is the seventh, `%23` the third.
                let mut expected = kept_counts(whatwg);
                expected[6] += bare_percents(whatwg);
                let hashes = whatwg.iter().filter(|&&b| b == b'#').count();
                expected[2] += hashes.saturating_sub(1);
                if kept_counts(rfc) != expected {
                    self.failures.push(format!(
                        "{what} {}: reserved escapes differ: whatwg {} vs rfc3986 {}",
                        show(input),
                        show(whatwg),
                        show(rfc)
                    ));
                }
                let plain =
                    |&b: &u8| b.is_ascii_alphanumeric() || b"-._~:/?#@!$&'()*+,;=".contains(&b);
                if whatwg.iter().all(plain) && hashes <= 1 && !whatwg.eq_ignore_ascii_case(rfc) {
                    self.failures.push(format!(
                        "{what} {}: nothing to escape, yet whatwg {} vs rfc3986 {}",
                        show(input),
                        show(whatwg),
                        show(rfc)
                    ));
                }
            }
            (Some(Err(a)), Some(Err(b))) if a == b => {}
            (a, b) => self.failures.push(format!(
                "{what} {}: profiles disagree on acceptance: whatwg {a:?}, rfc3986 {b:?}",
                show(input)
            )),
        }
    }

    fn finish(self, test: &str) {
        println!(
            "{test}: {} outputs re-canonicalized, {} failure(s)",
            self.checked,
            self.failures.len()
        );
        for f in self.failures.iter().take(20) {
            println!("  {f}");
        }
        assert!(
            self.checked > 0,
            "{test}: nothing was accepted, nothing checked"
        );
        assert!(
            self.failures.is_empty(),
            "{test}: {} failure(s)",
            self.failures.len()
        );
    }
}

#[test]
fn escape_scanner() {
    assert_eq!(escapes(b"%41%zz%4%%2f%"), vec![(0, *b"41"), (9, *b"2f")]);
    assert_eq!(escapes(b"%2541"), vec![(0, *b"25")]);
    assert_eq!(kept_counts(b"%2f%2F%25%3d%41"), [2, 0, 0, 0, 1, 0, 1]);
    assert!(rfc3986_escape_problems(b"/%7E").is_some());
    assert!(rfc3986_escape_problems(b"/%c3").is_some());
    assert!(rfc3986_escape_problems(b"/%C3%2F%25").is_none());
    assert!(rfc3986_escape_problems(b"/%C3%2F%zz").is_some());
    assert!(rfc3986_escape_problems(b"/%4").is_some());
    assert_eq!(bare_percents(b"%41%zz%4%%2f%"), 4);
}

#[test]
fn idempotence_wpt_urltestdata() {
    let Some(data) = shared_data_or_skip("idempotence_wpt_urltestdata") else {
        return;
    };
    let mut checker = Checker::new();
    let mut cases = 0;
    for (input, base) in wpt_inputs_with_bases(&data) {
        checker.set_base(base.as_ref());
        checker.check(input.as_bytes(), "wpt");
        cases += 1;
    }
    println!("idempotence_wpt_urltestdata: {cases} cases");
    checker.finish("idempotence_wpt_urltestdata");
}

#[test]
fn idempotence_url_dataset() {
    let Some(data) = shared_data_or_skip("idempotence_url_dataset") else {
        return;
    };
    let mut checker = Checker::new();
    for file in [
        "kasztp.txt",
        "node_files.txt",
        "userbait.txt",
        "isaacs_files.txt",
        "wpt_urltestdata_nobase.txt",
    ] {
        let lines = read_lines(&data.join("url-dataset").join(file));
        println!("idempotence_url_dataset: {file}: {} lines", lines.len());
        for line in &lines {
            checker.check(line, file);
        }
    }
    checker.finish("idempotence_url_dataset");
}

#[test]
fn idempotence_path_dots() {
    let Some(data) = shared_data_or_skip("idempotence_path_dots") else {
        return;
    };
    let (json, _) = read_json(&data.join("urlcanon/path_dots.json"));
    let mut checker = Checker::new();
    for (section, prefix) in [
        ("special", "http://example.com"),
        ("nonspecial", "foo://example.com"),
    ] {
        for path in json[section].as_object().expect("section").keys() {
            checker.check(format!("{prefix}{path}").as_bytes(), section);
        }
    }
    checker.finish("idempotence_path_dots");
}

/// Inputs where a naive escape decoder breaks idempotence or meaning.
#[test]
fn idempotence_tricky_escapes() {
    let mut checker = Checker::new();
    for input in [
        &b"http://a/%%34%31"[..],
        b"http://a/%4%31x",
        b"http://a/%%7e%7E",
        b"http://a/%%%34%31%32",
        b"file:///%43|/x",
        b"file:///%63%7C/x",
        b"file://h/%43|",
        b"file:%43|",
        b"foo://%41%42/%2e%2E/x?%7e#%7E",
        b"http://a/%2e%2E%2e/",
        b"mailto:%7E%25%41",
    ] {
        checker.check(input, "tricky");
    }
    checker.finish("idempotence_tricky_escapes");
}
