//! The WHATWG URL web-platform-tests, run against the `whatwg` profile.
//!
//! - `urltestdata`: `url/resources/urltestdata.json` (and the JavaScript-only
//!   file) as `url-constructor.any.js` runs it: `new URL(input, base)`, then
//!   href and every component getter.
//! - `toascii`, `idna_v2`: `toascii.json` and `IdnaTestV2.json` as
//!   `toascii.window.js` and `IdnaTestV2.window.js` run them: the host is put
//!   in `https://{input}/x` and host, hostname, pathname and href are checked;
//!   a null output means the URL parser must fail.
//!
//! Each keeps a known-failures ratchet in `tests/*_known_failures.txt`.

use crate::common;

use std::borrow::Cow;

use canonurl::{Base, Canonicalizer, Parts, Profile};
use common::{
    json_objects, read_json, shared_data_or_skip, show, split_lines, str_field, Ratchet,
    LONE_SURROGATE,
};
use serde_json::{Map, Value};

/// What `new URL()` receives for a JSON string: a USVString, in which every
/// lone surrogate has become U+FFFD.
fn usv(s: &str) -> Cow<'_, str> {
    if s.contains(LONE_SURROGATE) {
        Cow::Owned(s.replace(LONE_SURROGATE, "\u{FFFD}"))
    } else {
        Cow::Borrowed(s)
    }
}

fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The URL API's getters, computed from `Parts` as the URL Standard defines them.
struct Getters {
    href: String,
    protocol: String,
    username: String,
    password: String,
    host: String,
    hostname: String,
    port: String,
    pathname: String,
    search: String,
    hash: String,
}

fn getters(url: &[u8], parts: &Parts) -> Getters {
    let hostname = text(parts.host(url).unwrap_or_default()).into_owned();
    let port = parts.port().map(|p| p.to_string()).unwrap_or_default();
    let host = if port.is_empty() {
        hostname.clone()
    } else {
        format!("{hostname}:{port}")
    };
    let prefixed = |sigil: char, component: Option<&[u8]>| match component {
        Some(c) if !c.is_empty() => format!("{sigil}{}", text(c)),
        _ => String::new(),
    };
    Getters {
        href: text(url).into_owned(),
        protocol: format!("{}:", text(parts.scheme(url).unwrap_or_default())),
        username: text(parts.username(url).unwrap_or_default()).into_owned(),
        password: text(parts.password(url).unwrap_or_default()).into_owned(),
        host,
        hostname,
        port,
        pathname: text(parts.path(url)).into_owned(),
        search: prefixed('?', parts.query(url)),
        hash: prefixed('#', parts.fragment(url)),
    }
}

fn is_special_scheme(scheme: &[u8]) -> bool {
    matches!(
        scheme,
        b"http" | b"https" | b"ws" | b"wss" | b"ftp" | b"file"
    )
}

/// Runs one urltestdata case; `Err` describes the first mismatch.
fn run_urltestdata_case(
    case: &Map<String, Value>,
    input: &str,
    base: Option<&str>,
) -> Result<(), String> {
    let expect_failure = case.get("failure").and_then(Value::as_bool) == Some(true);
    let mut c = Canonicalizer::new(Profile::Whatwg);
    if let Some(base) = base {
        match Base::parse(base.as_bytes()) {
            Ok(b) => c = c.with_base(b),
            // `new URL(input, base)` throws when the base does not parse.
            Err(_) if expect_failure => return Ok(()),
            Err(r) => return Err(format!("base rejected ({r})")),
        }
    }
    let mut out = Vec::new();
    let canonical = match c.canonicalize_into(input.as_bytes(), &mut out) {
        Err(_) if expect_failure => return Ok(()),
        Err(r) => {
            return Err(format!(
                "rejected ({r}), expected {:?}",
                str_field(case, "href").unwrap_or("?")
            ))
        }
        Ok(_) if expect_failure => return Err(format!("expected failure, got {}", show(&out))),
        Ok(canonical) => canonical,
    };
    let parts = &canonical.parts;
    if !parts.is_consistent(&out) {
        return Err(format!("inconsistent parts {parts:?} for {}", show(&out)));
    }
    if canonical.unchanged != (out == input.as_bytes()) {
        return Err(format!(
            "unchanged = {} but output {} vs input {input:?}",
            canonical.unchanged,
            show(&out)
        ));
    }
    if let Some(scheme) = parts.scheme(&out) {
        if parts.special != is_special_scheme(scheme) {
            return Err(format!(
                "special = {} for scheme {}",
                parts.special,
                show(scheme)
            ));
        }
    } else {
        return Err(format!("no scheme in {}", show(&out)));
    }
    let got = getters(&out, parts);
    let expected_href = str_field(case, "href").ok_or("case without href")?;
    if out != expected_href.as_bytes() {
        return Err(format!(
            "href: expected {expected_href:?}, got {}",
            show(&out)
        ));
    }
    for (name, value) in [
        ("href", &got.href),
        ("protocol", &got.protocol),
        ("username", &got.username),
        ("password", &got.password),
        ("host", &got.host),
        ("hostname", &got.hostname),
        ("port", &got.port),
        ("pathname", &got.pathname),
        ("search", &got.search),
        ("hash", &got.hash),
    ] {
        let expected = str_field(case, name).ok_or_else(|| format!("case without {name}"))?;
        if expected != value {
            return Err(format!(
                "{name}: expected {expected:?}, got {value:?} (href {expected_href:?})"
            ));
        }
    }
    Ok(())
}

#[test]
fn urltestdata() {
    let Some(data) = shared_data_or_skip("urltestdata") else {
        return;
    };
    let mut ratchet = Ratchet::load("wpt_known_failures.txt", 2);
    let mut lone = 0;
    for file in ["urltestdata.json", "urltestdata-javascript-only.json"] {
        let (json, replaced) = read_json(&data.join("wpt-url").join(file));
        if replaced > 0 {
            println!(
                "{file}: {replaced} lone surrogate escape(s) read as U+FFFD, as new URL() does"
            );
        }
        for case in json_objects(&json) {
            let raw_input = str_field(case, "input").expect("case without input");
            let raw_base = str_field(case, "base");
            let input = usv(raw_input);
            let base = raw_base.map(usv);
            lone +=
                usize::from(matches!(input, Cow::Owned(_)) || matches!(base, Some(Cow::Owned(_))));
            let base_key = base
                .as_deref()
                .map_or_else(|| "null".to_string(), |b| format!("{b:?}"));
            let key = Ratchet::key(&[&format!("{input:?}"), &base_key]);
            let outcome = run_urltestdata_case(case, &input, base.as_deref());
            ratchet.record(key, outcome);
        }
    }
    // 891 cases in urltestdata.json at the recorded snapshot (SOURCES.md) plus
    // one JavaScript-only case: a much smaller count means the data was misread.
    assert!(
        ratchet.total() >= 800,
        "only {} cases read",
        ratchet.total()
    );
    println!("urltestdata: {lone} case(s) with lone surrogates (run as U+FFFD)");
    ratchet.finish("urltestdata");
}

/// Runs one host case the way toascii.window.js and IdnaTestV2.window.js do.
fn run_host_case(input: &str, output: Option<&str>) -> Result<(), String> {
    let url = format!("https://{input}/x");
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let result = c.canonicalize_into(url.as_bytes(), &mut out);
    let Some(output) = output else {
        return match result {
            Err(_) => Ok(()),
            Ok(_) => Err(format!("expected failure, got {}", show(&out))),
        };
    };
    let canonical = result.map_err(|r| format!("rejected ({r}), expected host {output:?}"))?;
    if !canonical.parts.is_consistent(&out) {
        return Err(format!("inconsistent parts for {}", show(&out)));
    }
    let got = getters(&out, &canonical.parts);
    let href = format!("https://{output}/x");
    for (name, expected, value) in [
        ("host", output, &got.host),
        ("hostname", output, &got.hostname),
        ("pathname", "/x", &got.pathname),
        ("href", &href, &got.href),
    ] {
        if expected != value {
            return Err(format!("{name}: expected {expected:?}, got {value:?}"));
        }
    }
    Ok(())
}

fn run_host_file(test: &str, file: &str, known_failures: &str, skip_empty_input: bool) {
    let Some(data) = shared_data_or_skip(test) else {
        return;
    };
    let (json, replaced) = read_json(&data.join("wpt-url").join(file));
    if replaced > 0 {
        println!("{file}: {replaced} lone surrogate escape(s) read as U+FFFD, as new URL() does");
    }
    let mut ratchet = Ratchet::load(known_failures, 1);
    let mut skipped = 0;
    for case in json_objects(&json) {
        let input = usv(str_field(case, "input").expect("case without input"));
        if skip_empty_input && input.is_empty() {
            // IdnaTestV2.window.js: "cannot test empty string input through new URL()".
            skipped += 1;
            continue;
        }
        let output = match case.get("output") {
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            other => panic!("{file}: unexpected output {other:?} for {input:?}"),
        };
        ratchet.record(
            Ratchet::key(&[&format!("{input:?}")]),
            run_host_case(&input, output),
        );
    }
    assert!(ratchet.total() > 0, "no cases read from {file}");
    println!("{test}: {skipped} case(s) skipped as the WPT harness skips them");
    ratchet.finish(test);
}

#[test]
fn toascii() {
    // toascii.window.js skips only the comment strings; `urlStandardOnly`
    // cases are run too (it marks cases for TR46-only consumers).
    run_host_file(
        "toascii",
        "toascii.json",
        "wpt_toascii_known_failures.txt",
        false,
    );
}

#[test]
fn idna_v2() {
    run_host_file(
        "idna_v2",
        "IdnaTestV2.json",
        "wpt_idna_known_failures.txt",
        true,
    );
}

/// Why the command cannot take a urltestdata input as one line of `-f plain`
/// input, if it cannot.
fn not_one_line(input: &str) -> Option<&'static str> {
    if input.contains('\n') {
        // The URL parser drops it, but it ends the command's line.
        Some("a newline inside the input ends the line")
    } else if input.bytes().all(|b| b == b' ' || b == b'\t') {
        // `new URL("", base)` is the base; the command skips a blank line.
        Some("a blank line is skipped, not a URL")
    } else {
        None
    }
}

/// An input and its expected href (`None` for a failure).
type CommandCase = (String, Option<String>);

/// Every case of urltestdata.json through the binary, as a person would run
/// it: one `canonurl -f plain --pipe --profile whatwg [--base B]` per base,
/// each input a line, each output line the expected href, or empty where
/// `new URL(input, base)` throws (a base it throws on is a usage error of
/// the command, exit 2). Inputs that cannot be one line are counted apart.
#[test]
fn urltestdata_through_the_command() {
    let Some(data) = shared_data_or_skip("urltestdata_through_the_command") else {
        return;
    };
    let (json, _) = read_json(&data.join("wpt-url").join("urltestdata.json"));
    // Per base (`None`: no --base), its cases.
    let mut groups: Vec<(Option<String>, Vec<CommandCase>)> = Vec::new();
    let mut excluded: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut total = 0;
    for case in json_objects(&json) {
        let input = usv(str_field(case, "input").expect("case without input")).into_owned();
        let base = str_field(case, "base").map(|b| usv(b).into_owned());
        total += 1;
        if let Some(why) = not_one_line(&input) {
            *excluded.entry(why).or_default() += 1;
            continue;
        }
        let failure = case.get("failure").and_then(Value::as_bool) == Some(true);
        let href = if failure {
            None
        } else {
            Some(
                str_field(case, "href")
                    .expect("case without href")
                    .to_string(),
            )
        };
        match groups.iter_mut().find(|(b, _)| *b == base) {
            Some((_, cases)) => cases.push((input, href)),
            None => groups.push((base, vec![(input, href)])),
        }
    }
    let mut failures = Vec::new();
    let mut run = 0;
    for (base, cases) in &groups {
        let mut stdin = Vec::new();
        for (input, _) in cases {
            stdin.extend_from_slice(input.as_bytes());
            stdin.push(b'\n');
        }
        let mut args = vec!["-f", "plain", "--pipe", "--profile", "whatwg"];
        if let Some(b) = base {
            args.extend(["--base", b]);
        }
        let out = common::run_canonurl(&args, &stdin);
        let stderr = String::from_utf8_lossy(&out.stderr);
        run += cases.len();
        if out.status.code() == Some(2) {
            // The base itself is refused: right only when every case with
            // it expects a failure.
            for (input, href) in cases {
                if let Some(href) = href {
                    failures.push(format!(
                        "base {base:?} refused ({}), but {input:?} expects {href:?}",
                        stderr.trim()
                    ));
                }
            }
            continue;
        }
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "base {base:?}: exit {:?}: {stderr}",
            out.status
        );
        let lines = split_lines(&out.stdout);
        assert_eq!(
            lines.len(),
            cases.len(),
            "base {base:?}: one output line per input line"
        );
        for ((input, href), got) in cases.iter().zip(lines) {
            let want = href.as_deref().unwrap_or("").as_bytes();
            if got != want {
                failures.push(format!(
                    "base {base:?}, input {input:?}: expected {:?}, got {}",
                    href.as_deref().unwrap_or("failure (an empty line)"),
                    show(got)
                ));
            }
        }
    }
    for (why, n) in &excluded {
        println!("urltestdata through the command: {n} case(s) left out: {why}");
    }
    println!(
        "urltestdata through the command: {run} of {total} cases run, {} bases (and none), {} failed",
        groups.iter().filter(|(b, _)| b.is_some()).count(),
        failures.len()
    );
    // 891 cases at the recorded snapshot, 15 of which cannot be one line.
    assert!(run >= 800, "only {run} cases run");
    assert!(
        failures.is_empty(),
        "{} of {run} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// Self-tests of the helpers in tests/common, so that a bug there cannot make
// the data-driven tests above pass vacuously.

#[test]
fn helper_split_lines_like_the_cli() {
    assert!(split_lines(b"").is_empty());
    assert_eq!(split_lines(b"\n"), vec![&b""[..]]);
    assert_eq!(split_lines(b"a"), vec![&b"a"[..]]);
    assert_eq!(
        split_lines(b"\xEF\xBB\xBFa\r\nb\rc\n\r\n d \n\ne"),
        vec![
            &b"\xEF\xBB\xBFa"[..],
            &b"b\rc"[..],
            &b""[..],
            &b" d "[..],
            &b""[..],
            &b"e"[..]
        ]
    );
    assert_eq!(split_lines(b"a\r\r\n"), vec![&b"a\r"[..]]);
}

#[test]
fn helper_lone_surrogates_are_replaced() {
    let json = r#"["a\ud900z", "\ud83c\udd04", "\\ud800", "\udc00", "\ud800"]"#;
    assert!(serde_json::from_str::<Value>(json).is_err());
    let (fixed, n) = common::replace_lone_surrogates(json);
    assert_eq!(n, 3);
    let v: Value = serde_json::from_str(&fixed).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a[0], format!("a{LONE_SURROGATE}z").as_str());
    assert_eq!(a[1], "\u{1F104}");
    assert_eq!(a[2], "\\ud800");
    assert_eq!(a[3], LONE_SURROGATE);
    assert_eq!(a[4], LONE_SURROGATE);
    assert_eq!(usv(a[0].as_str().unwrap()), "a\u{FFFD}z");
}

#[test]
fn helper_getters_follow_the_url_standard() {
    // Parts written by hand for a known URL, independent of the parser.
    let url = b"https://u:p@h.example:8080/a/b?q#f";
    let parts = Parts {
        scheme_end: 5,
        username_start: 8,
        username_end: 9,
        password_start: 10,
        password_end: 11,
        host_start: 12,
        host_end: 21,
        port: 8080,
        path_start: 26,
        query_start: 30,
        fragment_start: 32,
        len: url.len() as u32,
        special: true,
        opaque_path: false,
    };
    assert!(parts.is_consistent(url));
    let g = getters(url, &parts);
    assert_eq!(g.protocol, "https:");
    assert_eq!((g.username.as_str(), g.password.as_str()), ("u", "p"));
    assert_eq!(
        (g.host.as_str(), g.hostname.as_str()),
        ("h.example:8080", "h.example")
    );
    assert_eq!(g.port, "8080");
    assert_eq!(g.pathname, "/a/b");
    assert_eq!((g.search.as_str(), g.hash.as_str()), ("?q", "#f"));
    // An empty query and fragment read as "" through the URL API.
    let url = b"http://h/?#";
    let parts = Parts {
        scheme_end: 4,
        username_start: 7,
        username_end: 7,
        password_start: 7,
        password_end: 7,
        host_start: 7,
        host_end: 8,
        port: canonurl::ABSENT,
        path_start: 8,
        query_start: 9,
        fragment_start: 10,
        len: url.len() as u32,
        special: true,
        opaque_path: false,
    };
    let g = getters(url, &parts);
    assert_eq!(
        (g.search.as_str(), g.hash.as_str(), g.port.as_str()),
        ("", "", "")
    );
    assert_eq!(g.host, "h");
}
