//! The `rfc3986` profile's output, and so `safe`'s and `aggressive`'s, is a
//! URI by the grammar of RFC 3986 Appendix A, is a fixed point
//! (canonicalizing it again gives it back), and keeps its escapes normal
//! (§6.2.2.1 upper-case hex digits, §6.2.2.2 no escaped unreserved
//! character). A path-only request target is checked as an origin-form
//! target (RFC 9112 §3.2.1: `absolute-path [ "?" query ]`, the path being
//! `1*( "/" segment )` of RFC 3986), with a fragment allowed after it.
//!
//! The checker below is written from the ABNF alone and shares no code with
//! the crate. The corpus: every url-dataset list, the WPT `urltestdata.json`
//! inputs with their bases, the `urls-*` lists, and the request targets of
//! the combined logs. Then targeted cases: each character RFC 3986 excludes
//! in each component, `%` → `%25`, PHP array parameters, IP literals, the
//! case of an opaque host, and `whatwg`, which keeps all of these as the URL
//! Standard writes them.

use crate::common;

use canonurl::{Base, Canonicalizer, Profile};
use common::{read_bytes, read_lines, shared_data_or_skip, show, split_lines};

// ---------------------------------------------------------------------------
// RFC 3986 Appendix A.

/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`
fn is_sub_delim(b: u8) -> bool {
    b"!$&'()*+,;=".contains(&b)
}

/// `pchar = unreserved / pct-encoded / sub-delims / ":" / "@"`, without
/// `pct-encoded` (see [`all_of`]).
fn is_pchar(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || b == b':' || b == b'@'
}

/// Whether `s` is `*( allowed / pct-encoded )`, where
/// `pct-encoded = "%" HEXDIG HEXDIG`.
fn all_of(s: &[u8], allowed: impl Fn(u8) -> bool) -> bool {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = |k: usize| s.get(i + k).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(1) && hex(2)) {
                return false;
            }
            i += 3;
        } else if allowed(s[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`
fn is_scheme(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_alphabetic)
        && s.iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// `query = *( pchar / "/" / "?" )`; `fragment` is the same.
fn is_query(s: &[u8]) -> bool {
    all_of(s, |b| is_pchar(b) || b == b'/' || b == b'?')
}

/// `path-abempty = *( "/" segment )`, `segment = *pchar`
fn is_path_abempty(s: &[u8]) -> bool {
    (s.is_empty() || s[0] == b'/') && all_of(s, |b| is_pchar(b) || b == b'/')
}

/// `dec-octet`: 0-255 without leading zeros.
fn is_dec_octet(s: &[u8]) -> bool {
    !s.is_empty()
        && s.len() <= 3
        && s.iter().all(u8::is_ascii_digit)
        && (s.len() == 1 || s[0] != b'0')
        && std::str::from_utf8(s).unwrap().parse::<u16>().unwrap() <= 255
}

/// `IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet`
fn is_ipv4(s: &[u8]) -> bool {
    let parts: Vec<&[u8]> = s.split(|&b| b == b'.').collect();
    parts.len() == 4 && parts.iter().all(|p| is_dec_octet(p))
}

/// `h16 = 1*4HEXDIG`
fn is_h16(s: &[u8]) -> bool {
    (1..=4).contains(&s.len()) && s.iter().all(u8::is_ascii_hexdigit)
}

/// `IPv6address`: the nine alternatives of the ABNF come to this: at most
/// one `::`; `h16` pieces separated by `:`, the last of which may be an
/// `IPv4address` (counting as two); eight pieces without `::`, at most seven
/// with it.
fn is_ipv6(s: &[u8]) -> bool {
    fn pieces(s: &[u8], last_may_be_v4: bool) -> Option<usize> {
        if s.is_empty() {
            return Some(0);
        }
        let parts: Vec<&[u8]> = s.split(|&b| b == b':').collect();
        let mut n = 0;
        for (k, p) in parts.iter().enumerate() {
            if is_h16(p) {
                n += 1;
            } else if last_may_be_v4 && k == parts.len() - 1 && is_ipv4(p) {
                n += 2;
            } else {
                return None;
            }
        }
        Some(n)
    }
    let text = String::from_utf8_lossy(s);
    match text.find("::") {
        None => pieces(s, true) == Some(8),
        Some(at) => {
            let (left, right) = (&s[..at], &s[at + 2..]);
            if right.windows(2).any(|w| w == b"::") {
                return false;
            }
            match (pieces(left, false), pieces(right, true)) {
                (Some(l), Some(r)) => l + r <= 7,
                _ => false,
            }
        }
    }
}

/// `IP-literal = "[" ( IPv6address / IPvFuture ) "]"`, with
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn is_ip_literal(s: &[u8]) -> bool {
    let Some(inner) = s.strip_prefix(b"[").and_then(|s| s.strip_suffix(b"]")) else {
        return false;
    };
    if let Some(future) = inner.strip_prefix(b"v").or(inner.strip_prefix(b"V")) {
        let Some(dot) = future.iter().position(|&b| b == b'.') else {
            return false;
        };
        return dot > 0
            && future[..dot].iter().all(u8::is_ascii_hexdigit)
            && dot + 1 < future.len()
            && future[dot + 1..]
                .iter()
                .all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':');
    }
    is_ipv6(inner)
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`, with
/// `userinfo = *( unreserved / pct-encoded / sub-delims / ":" )`,
/// `host = IP-literal / IPv4address / reg-name`,
/// `reg-name = *( unreserved / pct-encoded / sub-delims )`, `port = *DIGIT`.
/// Neither userinfo nor host nor port may hold `@`, and only an IP literal
/// holds `:` before the port.
fn authority_error(s: &[u8]) -> Option<&'static str> {
    let (userinfo, hostport) = match s.iter().position(|&b| b == b'@') {
        Some(at) => (Some(&s[..at]), &s[at + 1..]),
        None => (None, s),
    };
    if let Some(u) = userinfo {
        if !all_of(u, |b| is_unreserved(b) || is_sub_delim(b) || b == b':') {
            return Some("userinfo");
        }
    }
    let (host, port) = if hostport.first() == Some(&b'[') {
        let Some(close) = hostport.iter().position(|&b| b == b']') else {
            return Some("IP-literal without ]");
        };
        let (host, rest) = hostport.split_at(close + 1);
        if !is_ip_literal(host) {
            return Some("IP-literal");
        }
        match rest {
            [] => (host, None),
            [b':', port @ ..] => (host, Some(port)),
            _ => return Some("after IP-literal"),
        }
    } else {
        match hostport.iter().position(|&b| b == b':') {
            Some(c) => (&hostport[..c], Some(&hostport[c + 1..])),
            None => (hostport, None),
        }
    };
    if !host.starts_with(b"[")
        && !is_ipv4(host)
        && !all_of(host, |b| is_unreserved(b) || is_sub_delim(b))
    {
        return Some("reg-name");
    }
    if port.is_some_and(|p| !p.iter().all(u8::is_ascii_digit)) {
        return Some("port");
    }
    None
}

/// Splits `[ "?" query ] [ "#" fragment ]` off the end and checks them.
fn split_query_fragment(s: &[u8]) -> Result<&[u8], &'static str> {
    let (rest, fragment) = match s.iter().position(|&b| b == b'#') {
        Some(h) => (&s[..h], Some(&s[h + 1..])),
        None => (s, None),
    };
    if fragment.is_some_and(|f| !is_query(f)) {
        return Err("fragment");
    }
    let (rest, query) = match rest.iter().position(|&b| b == b'?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    if query.is_some_and(|q| !is_query(q)) {
        return Err("query");
    }
    Ok(rest)
}

/// `URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]`, with
/// `hier-part = "//" authority path-abempty / path-absolute / path-rootless
/// / path-empty`. `Err` names the rule that fails.
fn uri_error(s: &[u8]) -> Option<&'static str> {
    let Some(colon) = s.iter().position(|&b| b == b':') else {
        return Some("no scheme");
    };
    if !is_scheme(&s[..colon]) {
        return Some("scheme");
    }
    let hier = match split_query_fragment(&s[colon + 1..]) {
        Ok(h) => h,
        Err(e) => return Some(e),
    };
    if let Some(rest) = hier.strip_prefix(b"//") {
        let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
        if let Some(e) = authority_error(&rest[..end]) {
            return Some(e);
        }
        return (!is_path_abempty(&rest[end..])).then_some("path-abempty");
    }
    // path-absolute = "/" [ segment-nz *( "/" segment ) ] (no "//" here);
    // path-rootless = segment-nz *( "/" segment ); path-empty = 0<pchar>.
    (!all_of(hier, |b| is_pchar(b) || b == b'/')).then_some("path")
}

/// An origin-form request target: `1*( "/" segment ) [ "?" query ]`, and
/// here `[ "#" fragment ]`.
fn target_error(s: &[u8]) -> Option<&'static str> {
    match split_query_fragment(s) {
        Ok(path) if path.first() == Some(&b'/') && is_path_abempty(path) => None,
        Ok(_) => Some("absolute-path"),
        Err(e) => Some(e),
    }
}

/// §6.2.2.1 and §6.2.2.2: every escape has upper-case hex digits and none
/// is of an unreserved character.
fn escape_error(s: &[u8]) -> Option<&'static str> {
    for (i, _) in s.iter().enumerate().filter(|&(_, &b)| b == b'%') {
        let (h, l) = (s[i + 1], s[i + 2]);
        if h.is_ascii_lowercase() || l.is_ascii_lowercase() {
            return Some("lower-case hex digit");
        }
        let v = u8::from_str_radix(std::str::from_utf8(&[h, l]).unwrap(), 16).unwrap();
        if is_unreserved(v) {
            return Some("escaped unreserved character");
        }
    }
    None
}

#[test]
fn checker_accepts_and_rejects_what_the_grammar_says() {
    for ok in [
        &b"http://a/"[..],
        b"foo:",
        b"mailto:a@b?x#y",
        b"foo:/a//b",
        b"http://u:p@[::1]:80/a?b/?c#d?/",
        b"http://[v7.a:b]/",
        b"http://[1:2:3:4:5:6:7:8]/",
        b"http://[1:2:3:4:5:6:1.2.3.4]/",
        b"http://[::]/",
        b"http://[1::]/",
        b"http://[1:2:3:4:5:6:7::]/",
        b"http://1.2.3.4:/%25%C3",
        b"foo://!$&'()*+,;=/",
        b"file:///C:/x",
        b"h://:@/",
    ] {
        assert_eq!(uri_error(ok), None, "{}", show(ok));
    }
    for bad in [
        &b"/a"[..],
        b"1a:b",
        b"http://a/b c",
        b"http://a/%zz",
        b"http://a/%2",
        b"http://a/[",
        b"http://a/?[",
        b"http://a/#a#b",
        b"http://a\"b/",
        b"http://a{/",
        b"http://[::1/",
        b"http://[1:2:3:4:5:6:7:8:9]/",
        b"http://[1:2:3:4:5:6:7]/",
        b"http://[1::2::3]/",
        b"http://[1:2:3:4:5:6:7:8::]/",
        b"http://[:1]/",
        b"http://[g::]/",
        b"http://[::1]x/",
        b"http://a:8x/",
        b"http://a@b@c/",
        b"http://u|@a/",
        b"foo:a b",
        b"foo:a\\b",
        b"foo:^",
        b"foo:`",
        b"foo:{}",
        b"foo:<>",
        b"foo:\"",
        b"foo:\xc3\xa9",
        b"foo:\x7f",
    ] {
        assert!(uri_error(bad).is_some(), "{} accepted", show(bad));
    }
    assert_eq!(target_error(b"/a?b#c"), None);
    assert_eq!(target_error(b"//a"), None);
    assert!(target_error(b"a").is_some());
    assert!(target_error(b"/a?|").is_some());
    assert_eq!(escape_error(b"/%2F%C3%A9%25"), None);
    assert!(escape_error(b"/%2f").is_some());
    assert!(escape_error(b"/%41").is_some());
}

// ---------------------------------------------------------------------------
// The corpus.

const CHECKED: [Profile; 3] = [Profile::Rfc3986, Profile::Safe, Profile::Aggressive];

struct Checker {
    /// Per profile: the first pass (its base set per input), and a second
    /// one with no base.
    first: [Canonicalizer; 3],
    again: [Canonicalizer; 3],
    out: Vec<u8>,
    again_out: Vec<u8>,
    checked: usize,
    failures: Vec<String>,
}

impl Checker {
    fn new() -> Checker {
        Checker {
            first: CHECKED.map(Canonicalizer::new),
            again: CHECKED.map(Canonicalizer::new),
            out: Vec::new(),
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

    /// Checks the outputs of `input` as a URL; `target`: also as a request
    /// target. An input no profile accepts is tried again as `http://` +
    /// input (lists of host names and bare `host/path` lines).
    fn check(&mut self, input: &[u8], what: &str, target: bool) {
        for k in 0..CHECKED.len() {
            self.check_one(k, input, what, false);
            if target {
                self.check_one(k, input, what, true);
            }
        }
    }

    fn check_or_with_http(&mut self, input: &[u8], what: &str) {
        let mut out = Vec::new();
        if self.first[0].canonicalize_into(input, &mut out).is_ok() {
            self.check(input, what, false);
        } else {
            self.check(&[&b"http://"[..], input].concat(), what, false);
        }
    }

    fn check_one(&mut self, k: usize, input: &[u8], what: &str, target: bool) {
        let profile = CHECKED[k].name();
        self.out.clear();
        let first = if target {
            self.first[k].canonicalize_target(input, &mut self.out)
        } else {
            self.first[k].canonicalize_into(input, &mut self.out)
        };
        if first.is_err() {
            return;
        }
        self.checked += 1;
        let out = &self.out;
        // A target gives a path-only URL when it is in origin form.
        let path_only = target && !out.is_empty() && out[0] == b'/';
        let grammar = if path_only {
            target_error(out)
        } else {
            uri_error(out)
        };
        if let Some(rule) = grammar.or_else(|| escape_error(out)) {
            self.failures.push(format!(
                "{what} ({profile}{}): {} -> {}: {rule}",
                if target { ", target" } else { "" },
                show(input),
                show(out)
            ));
            return;
        }
        self.again_out.clear();
        let again = if path_only {
            self.again[k].canonicalize_target(out, &mut self.again_out)
        } else {
            self.again[k].canonicalize_into(out, &mut self.again_out)
        };
        match again {
            Ok(c) if self.again_out == *out && c.unchanged && c.fired.is_empty() => {}
            Ok(c) => self.failures.push(format!(
                "{what} ({profile}{}): {} -> {} -> {} (unchanged = {}, fired {:?})",
                if target { ", target" } else { "" },
                show(input),
                show(out),
                show(&self.again_out),
                c.unchanged,
                c.fired
            )),
            Err(r) => self.failures.push(format!(
                "{what} ({profile}): {} -> {}, which is rejected ({r})",
                show(input),
                show(out)
            )),
        }
    }

    fn finish(self, test: &str) {
        println!(
            "{test}: {} outputs checked, {} failure(s)",
            self.checked,
            self.failures.len()
        );
        for f in self.failures.iter().take(30) {
            println!("  {f}");
        }
        assert!(self.checked > 0, "{test}: nothing was accepted");
        assert!(
            self.failures.is_empty(),
            "{test}: {} failure(s)",
            self.failures.len()
        );
    }
}

#[test]
fn url_dataset_outputs_are_uris() {
    let Some(data) = shared_data_or_skip("url_dataset_outputs_are_uris") else {
        return;
    };
    let dir = data.join("url-dataset");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("read url-dataset")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no list in {}", dir.display());
    let mut checker = Checker::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in read_lines(&file) {
            let target = line.first() == Some(&b'/');
            checker.check(&line, &name, target);
        }
    }
    checker.finish("url_dataset_outputs_are_uris");
}

#[test]
fn wpt_outputs_are_uris() {
    let Some(data) = shared_data_or_skip("wpt_outputs_are_uris") else {
        return;
    };
    let mut checker = Checker::new();
    for (input, base) in common::wpt_inputs_with_bases(&data) {
        checker.set_base(base.as_ref());
        checker.check(input.as_bytes(), "wpt", input.starts_with('/'));
    }
    checker.finish("wpt_outputs_are_uris");
}

#[test]
fn url_list_outputs_are_uris() {
    let Some(data) = shared_data_or_skip("url_list_outputs_are_uris") else {
        return;
    };
    let mut checker = Checker::new();
    let mut lists = 0;
    // `url<TAB>list` and `url,type`: the URL is the first field of the
    // TSV, and all but the last field of the CSV (URLs hold commas).
    for (rel, last_sep) in [
        ("urls-citizenlab/citizenlab-test-lists-urls.tsv", b'\t'),
        ("urls-malicious-phish/malicious_phish-first40k.csv", b','),
    ] {
        let path = data.join(rel);
        if !path.is_file() {
            eprintln!("note: {rel} is not in the shared data");
            continue;
        }
        lists += 1;
        let bytes = read_bytes(&path);
        for line in split_lines(&bytes).into_iter().skip(1) {
            let url = match line.iter().rposition(|&b| b == last_sep) {
                Some(at) => &line[..at],
                None => line,
            };
            checker.check_or_with_http(url, rel);
        }
    }
    if lists > 0 {
        checker.finish("url_list_outputs_are_uris");
    }
}

/// The target of a logged request line `METHOD target HTTP/x.y`, from the
/// first quoted field of a combined log line.
fn request_target(line: &[u8]) -> Option<&[u8]> {
    let open = line.iter().position(|&b| b == b'"')?;
    let rest = &line[open + 1..];
    let request = &rest[..rest.iter().position(|&b| b == b'"')?];
    let mut parts = request.split(|&b| b == b' ');
    let _method = parts.next()?;
    let target = parts.next()?;
    parts.next()?.starts_with(b"HTTP/").then_some(target)
}

#[test]
fn log_target_outputs_are_uris() {
    let Some(data) = shared_data_or_skip("log_target_outputs_are_uris") else {
        return;
    };
    let dir = data.join("logs-combined");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("note: {} is not in the shared data", dir.display());
        return;
    };
    let mut files: Vec<_> = entries.map(|e| e.expect("dir entry").path()).collect();
    files.sort();
    let mut checker = Checker::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = read_bytes(&file);
        for line in split_lines(&bytes) {
            if let Some(target) = request_target(line) {
                checker.check(target, &name, true);
            }
        }
    }
    checker.finish("log_target_outputs_are_uris");
}

// ---------------------------------------------------------------------------
// Targeted cases.

fn canon(profile: Profile, input: &str) -> String {
    let mut out = Vec::new();
    Canonicalizer::new(profile)
        .canonicalize_into(input.as_bytes(), &mut out)
        .unwrap_or_else(|r| panic!("{input:?} ({}): rejected: {r}", profile.name()));
    String::from_utf8(out).unwrap()
}

fn canon_target(profile: Profile, input: &str) -> String {
    let mut out = Vec::new();
    Canonicalizer::new(profile)
        .canonicalize_target(input.as_bytes(), &mut out)
        .unwrap_or_else(|r| panic!("{input:?} ({}): rejected: {r}", profile.name()));
    String::from_utf8(out).unwrap()
}

/// Checks `input`: `whatwg` gives `whatwg` and `rfc3986` gives `rfc`; the
/// output of `rfc3986`, `safe` and `aggressive` (whose rules may change it
/// further, e.g. drop the fragment) is a URI and canonical.
fn expect(input: &str, whatwg: &str, rfc: &str) {
    assert_eq!(canon(Profile::Whatwg, input), whatwg, "{input:?} (whatwg)");
    assert_eq!(canon(Profile::Rfc3986, input), rfc, "{input:?} (rfc3986)");
    for profile in CHECKED {
        let out = canon(profile, input);
        assert_eq!(uri_error(out.as_bytes()), None, "{out:?}");
        // Canonical, and known to be: the second pass reports no change.
        let mut again = Vec::new();
        let c = Canonicalizer::new(profile)
            .canonicalize_into(out.as_bytes(), &mut again)
            .unwrap();
        assert_eq!(again, out.as_bytes(), "{input:?} ({})", profile.name());
        assert!(c.unchanged, "{input:?} ({})", profile.name());
    }
}

/// The characters the URL Standard may leave literal and RFC 3986 excludes.
const EXCLUDED: [(char, &str); 11] = [
    ('"', "%22"),
    ('<', "%3C"),
    ('>', "%3E"),
    ('\\', "%5C"),
    ('^', "%5E"),
    ('`', "%60"),
    ('{', "%7B"),
    ('|', "%7C"),
    ('}', "%7D"),
    ('[', "%5B"),
    (']', "%5D"),
];

#[test]
fn excluded_characters_in_the_query_and_fragment() {
    for (c, escape) in EXCLUDED {
        // The URL Standard escapes `"<>` in both, and "`" in the fragment.
        let in_query = if "\"<>".contains(c) { escape } else { "" };
        let query = if in_query.is_empty() {
            format!("?a{c}b")
        } else {
            format!("?a{in_query}b")
        };
        let in_fragment = if "\"<>`".contains(c) { escape } else { "" };
        let fragment = if in_fragment.is_empty() {
            format!("#a{c}b")
        } else {
            format!("#a{in_fragment}b")
        };
        expect(
            &format!("http://h/{query}"),
            &format!("http://h/{query}"),
            &format!("http://h/?a{escape}b"),
        );
        expect(
            &format!("foo://h/p{fragment}"),
            &format!("foo://h/p{fragment}"),
            &format!("foo://h/p#a{escape}b"),
        );
        // A request target (path-only output).
        let target = format!("/p?a{c}b");
        let rfc = format!("/p?a{escape}b");
        assert_eq!(canon_target(Profile::Rfc3986, &target), rfc, "{target:?}");
        assert_eq!(target_error(rfc.as_bytes()), None);
    }
}

#[test]
fn excluded_characters_in_paths() {
    for (c, escape) in EXCLUDED {
        // The path percent-encode set has `"<>^`{}`; a special URL's `\` is
        // a `/`.
        let whatwg = if "\"<>^`{}".contains(c) {
            escape.to_string()
        } else {
            c.to_string()
        };
        expect(
            &format!("foo://h/a{c}b"),
            &format!("foo://h/a{whatwg}b"),
            &format!("foo://h/a{escape}b"),
        );
        if c != '\\' {
            expect(
                &format!("http://h/a{c}b"),
                &format!("http://h/a{whatwg}b"),
                &format!("http://h/a{escape}b"),
            );
        }
        // An opaque path: the URL Standard escapes only controls.
        expect(
            &format!("foo:a{c}b"),
            &format!("foo:a{c}b"),
            &format!("foo:a{escape}b"),
        );
    }
    expect("foo:a b", "foo:a b", "foo:a%20b");
    expect(
        "javascript:alert(\"x\")",
        "javascript:alert(\"x\")",
        "javascript:alert(%22x%22)",
    );
}

#[test]
fn excluded_characters_in_hosts_and_userinfo() {
    // A domain and an opaque host may hold `"` `` ` `` `{` `}`.
    for (c, escape) in [('"', "%22"), ('`', "%60"), ('{', "%7B"), ('}', "%7D")] {
        expect(
            &format!("http://a{c}b/"),
            &format!("http://a{c}b/"),
            &format!("http://a{escape}b/"),
        );
        expect(
            &format!("foo://a{c}b/"),
            &format!("foo://a{c}b/"),
            &format!("foo://a{escape}b/"),
        );
    }
    // The userinfo percent-encode set covers every excluded character; a
    // bare `%` is left, in the userinfo and in an opaque host.
    expect("http://a%zz@h/", "http://a%zz@h/", "http://a%25zz@h/");
    expect("http://a:%@h/", "http://a:%@h/", "http://a:%25@h/");
    expect("foo://a%zz/", "foo://a%zz/", "foo://a%25zz/");
    for (c, escape) in EXCLUDED {
        // Non-special: `\` is no delimiter there.
        let input = format!("foo://u{c}:p{c}@h/");
        let want = format!("foo://u{escape}:p{escape}@h/");
        assert_eq!(canon(Profile::Whatwg, &input), want);
        assert_eq!(canon(Profile::Rfc3986, &input), want);
    }
}

#[test]
fn a_percent_that_starts_no_escape_is_escaped() {
    expect("http://h/%", "http://h/%", "http://h/%25");
    expect("http://h/a%zz%4", "http://h/a%zz%4", "http://h/a%25zz%254");
    expect("http://h/?%G1", "http://h/?%G1", "http://h/?%25G1");
    expect("http://h/#%%41", "http://h/#%%41", "http://h/#%25A");
    expect("foo:%", "foo:%", "foo:%25");
    // A decoded hex digit never completes an escape with a bare `%`.
    expect("http://h/%%34%31", "http://h/%%34%31", "http://h/%2541");
    assert_eq!(canon_target(Profile::Rfc3986, "/a%"), "/a%25");
    // `%25` itself is an escape and stays.
    expect("http://h/%25", "http://h/%25", "http://h/%25");
}

#[test]
fn php_array_parameters_are_one_key() {
    let rfc = "http://h/?x%5By%5D=1";
    expect("http://h/?x[y]=1", "http://h/?x[y]=1", rfc);
    expect("http://h/?x%5By%5D=1", "http://h/?x%5By%5D=1", rfc);
    expect("http://h/?x%5by%5d=1", "http://h/?x%5by%5d=1", rfc);
    assert_eq!(
        canon_target(Profile::Rfc3986, "/p?a[]=1&a[]=2"),
        "/p?a%5B%5D=1&a%5B%5D=2"
    );
    // `aggressive` adds a trailing slash (to `/p`) and sorts the query: one
    // key, the values in their order.
    assert_eq!(
        canon_target(Profile::Aggressive, "/p/?a[]=1&a%5B%5D=2"),
        "/p/?a%5B%5D=1&a%5B%5D=2"
    );
}

#[test]
fn a_second_hash_in_the_fragment_is_escaped() {
    expect("http://h/#a#b", "http://h/#a#b", "http://h/#a%23b");
    expect("http://h/#a%23b", "http://h/#a%23b", "http://h/#a%23b");
    expect("foo:x##", "foo:x##", "foo:x#%23");
}

#[test]
fn ip_literal_brackets_stay() {
    expect("http://[::1]/[", "http://[::1]/[", "http://[::1]/%5B");
    expect(
        "foo://u@[0:0::A]:9/?[]#[]",
        "foo://u@[::a]:9/?[]#[]",
        "foo://u@[::a]:9/?%5B%5D#%5B%5D",
    );
}

#[test]
fn an_opaque_host_is_lower_cased() {
    expect("foo://H%41st/", "foo://H%41st/", "foo://hast/");
    expect(
        "sftp://u@www.EXAMPLE.com/",
        "sftp://u@www.EXAMPLE.com/",
        "sftp://u@www.example.com/",
    );
    // Only the host: not the userinfo, the path or an escape's hex digits.
    expect(
        "foo://U:P@A%c3%A9B:1/P?Q#F",
        "foo://U:P@A%c3%A9B:1/P?Q#F",
        "foo://U:P@a%C3%A9b:1/P?Q#F",
    );
    // A special URL's host was lower-cased already.
    expect("HTTP://H%41st/", "http://hast/", "http://hast/");
}
