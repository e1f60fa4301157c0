//! Seeded randomized tests: inputs assembled from dictionaries of URL pieces
//! plus random byte mutations (the way ada's fuzzers build theirs), run through
//! both profiles, with and without a base, via `canonicalize_into` and
//! `canonicalize_target`.
//!
//! Checks on every input and profile:
//!
//! 1. no panic (in a debug build the library's `debug_assert!`s run too);
//! 2. on success `Parts::is_consistent`, and the output is a fixed point
//!    (canonicalized again without a base it gives the same bytes and parts,
//!    and `unchanged`); on failure nothing is left appended to the output
//!    (which the test pre-fills with a marker) and the offset is in the input;
//! 3. `unchanged` is true exactly when the output is the input;
//! 4. the `rfc3986` profile accepts exactly what `whatwg` accepts, and its
//!    output is the `rfc3986` form of the `whatwg` output;
//! 5. fast path: an input (in particular an `http://` or `https://` one) gives
//!    the same result, bytes and parts, with a leading space, which the parser
//!    trims but which keeps the input off the fast path; and (whatwg, UTF-8
//!    input) whenever `unchanged` is reported, ada's href is the input itself;
//! 6. differential (whatwg, UTF-8 input): the href (and every component
//!    getter) equals `ada_url::Url::parse(input, base)`'s. On a mismatch the
//!    `url` crate is asked too; only the documented classes in
//!    [`documented_class`] are tolerated (counted and printed): (a) IDNA
//!    Unicode data that differs between ada and the `idna` crate, (b) ada not
//!    applying the Bidi Rule across labels, (c) ada accepting Punycode that
//!    starts with its delimiter; all three need `url` to agree with canonurl
//!    and independent evidence in the host. Anything else fails the test,
//!    with the input minimized (bytes deleted while the same check fails).
//!
//! Inputs are absolute URLs, relative references (with a base: one of
//! `BASES`, or a generated and possibly invalid one; a base that
//! `Base::parse` rejects makes the case fail, as `new URL(input, base)`
//! throws) and origin-form request targets for `canonicalize_target`.
//!
//! The generator is a splitmix64 PRNG; each case has its own seed, printed
//! with any failure. Environment:
//!
//! - `CANONURL_RANDOM_CASES=N`: total number of cases over the four suites
//!   (default 200 000 in an optimized build, 40 000 with debug assertions);
//! - `CANONURL_RANDOM_REPLAY=0x...`: test `replay` runs that one case seed and
//!   prints everything about it.
//!
//! `REGRESSIONS` holds minimized inputs found by this test, asserted one by one.

use crate::common;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use canonurl::{Base, Canonical, Canonicalizer, Parts, Profile, Reject, ABSENT};
use common::show;

// ---------------------------------------------------------------------------
// Regressions found by this test: (input, base, expected WHATWG href or None
// for failure). The expectations are ada's (and the URL Standard's).

const REGRESSIONS: &[(&str, Option<&str>, Option<&str>)] = &[
    // UTS #46 §4.1 Validity Criteria 4 (Unicode 15.1+): "If not CheckHyphens,
    // the label must not begin with “xn--”", checked on the label after
    // Punycode decoding. The URL Standard calls ToASCII with CheckHyphens =
    // false, so a domain that is not all ASCII (here the U+3002 dot, or "é")
    // with a label decoding to "xn--…" must fail. The `idna` crate 1.1 does
    // not apply the criterion (`url` accepts these too); ada rejects them.
    // All-ASCII domains are only lowercased (toascii.json: "xn--a" stays), so
    // `http://xn--xn--a--gua.pt/` itself is valid.
    ("https:xn--xn--her-kbcher-kva\u{3002}", None, None),
    ("http://xn--xn--a--gua.\u{e9}/", None, None),
    (
        "http://xn--xn--a--gua.pt/",
        None,
        Some("http://xn--xn--a--gua.pt/"),
    ),
];

#[test]
fn regressions() {
    let mut failures = Vec::new();
    for &(input, base, expected) in REGRESSIONS {
        // The expectation itself must be the reference's.
        let by_ada = ada_url::Url::parse(input, base)
            .ok()
            .map(|u| u.href().to_string());
        assert_eq!(
            by_ada.as_deref(),
            expected,
            "REGRESSIONS entry {input:?} (base {base:?}) does not match ada"
        );
        let mut c = Canonicalizer::new(Profile::Whatwg);
        if let Some(b) = base {
            c = c.with_base(Base::parse(b.as_bytes()).expect("regression base parses"));
        }
        let mut out = Vec::new();
        let got = c
            .canonicalize_into(input.as_bytes(), &mut out)
            .ok()
            .map(|_| String::from_utf8_lossy(&out).into_owned());
        if got.as_deref() != expected {
            failures.push(format!(
                "{input:?} base {base:?}\n      expected {expected:?}\n      got      {got:?}"
            ));
        }
    }
    println!(
        "regressions: {} passed / {} total",
        REGRESSIONS.len() - failures.len(),
        REGRESSIONS.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    assert!(failures.is_empty(), "{} regression(s) fail", failures.len());
}

// ---------------------------------------------------------------------------
// PRNG

/// splitmix64: tiny, fast, good enough to drive a generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// The seed of case `index` of a suite.
fn case_seed(suite_seed: u64, index: u64) -> u64 {
    Rng(suite_seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03)).next()
}

// ---------------------------------------------------------------------------
// Dictionaries

const SCHEMES: &[&[u8]] = &[
    b"http",
    b"HTTPS",
    b"https",
    b"ws",
    b"wss",
    b"ftp",
    b"file",
    b"foo",
    b"mailto",
    b"data",
    b"javascript",
    b"",
    b"Http",
    b"FILE",
    b"a+b.c-d",
    b"1a",
    b"sc",
];

const SEPARATORS: &[&[u8]] = &[b":", b"://", b":/", b":\\\\", b":///", b"//"];

const USERINFO: &[&[u8]] = &[b"user@", b"u:p@", b"@", b"a@b@", b":@"];

const HOSTS: &[&[u8]] = &[
    b"example.com",
    b"EXAMPLE.com",
    b"xn--fa-hia.de",
    "bücher.de".as_bytes(),
    b"127.0.0.1",
    b"0x7f.1",
    b"1.2.3.4.5",
    b"[::1]",
    b"[1:0::0:1]",
    b"[::ffff:1.2.3.4]",
    b"[",
    b"a<b",
    b"%41b",
    b"%zz",
    b"localhost",
    b"C:",
    b"c|",
    b"",
    b"..",
    b"a..b",
    b"09",
    b"0x",
    // More IPv4, IPv6, IDNA and escape edge cases.
    b"[::1.2.3.4]",
    b"[1:2:3:4:5:6:7:8]",
    b"[1:2:3:4:5:6:7:8:9]",
    b"[::ffff:1.2.3]",
    b"[0:0:0:0:0:0:0:0]",
    b"[1::2:0:0:3]",
    b"[1:0:0:2::3:0]",
    b"[v1.x]",
    b"[::%31]",
    b"[::1",
    b"1.2.3.4.",
    b"0x100000000",
    b"4294967295",
    b"4294967296",
    b"0.0.0.0x100",
    b"1.2.3.08",
    b"08",
    b"0x7F.0.0.01",
    b"%30x7f.1",
    b"%31.2.3.4",
    b"1.2.3.4%2e",
    b"xn--",
    b"xn--a",
    b"a.xn--nxasmq6b",
    "ß.de".as_bytes(),
    "ａ.com".as_bytes(),
    b"%ef%bc%a1",
    b"EXAMPLE%2ecom",
    b"ex%00ample",
    b"foo%2Fbar",
    b"a b",
    b"a^b",
    b"a|b",
    b"a%b",
    b"x@y",
    b"a:b",
];

const PORTS: &[&[u8]] = &[
    b":80", b":443", b":0", b":08080", b":65536", b":x", b":", b":21", b":8080",
];

const PATH_PIECES: &[&[u8]] = &[
    b"/",
    b"\\",
    b".",
    b"..",
    b"%2e",
    b"%2E%2e",
    b"a",
    b"A%7e",
    b"%",
    b"%%34%31",
    b"C|",
    b"d:",
    b"{}",
    b" ",
    b"\t",
    b"\n",
    "é".as_bytes(),
    b"\xff",
    b";x=1",
    b"//",
    // More dot segments, escapes and drive letters.
    b"%2f",
    b"%5C",
    b".%2e",
    b"%2e.",
    b"...",
    b"C:",
    b"c|",
    b"%00",
    b"\x00",
    b"\x7f",
    b"~",
    b"'\"<>`^|",
    b"%c3%a9",
];

const QUERY_PIECES: &[&[u8]] = &[b"?", b"?a=1&b", b"?%7e", b"?'\"<>", b"? x"];

const FRAGMENT_PIECES: &[&[u8]] = &[b"#", b"#frag", b"#a#b", b"#%2f", b"# "];

/// Starts of relative references (used with a base).
const RELATIVE_STARTS: &[&[u8]] = &[
    b"", b"/", b"//", b"\\\\", b"\\", b"./", b"../", b"..", b".", b"?", b"#", b"C:", b"c|/",
    b"/C:/", b"file:", b"http:", b"HTTP:", b"foo:", b"sc:", b"///",
];

/// Pieces of URLs that are canonical as they are (for the fast path).
const CLEAN_HOSTS: &[&[u8]] = &[
    b"example.com",
    b"a.b-c.d",
    b"x_y.org",
    b"localhost",
    b"www.example.co.uk",
    b"a1",
    b"xn--bcher-kva.de",
    b"1.2.3.4",
    b"h.0",
];
const CLEAN_PORTS: &[&[u8]] = &[b"", b"", b"", b":8080", b":81", b":1"];
const CLEAN_SEGMENTS: &[&[u8]] = &[
    b"a",
    b"b.html",
    b"%41",
    b"%7E",
    b"%7e",
    b"%2F",
    b"a%20b",
    b"~u",
    b"",
    b"x.y",
    b"-_",
    b"a.",
    b"%2e",
    b"%ZZ",
    b"!$&'()*+,;=:@",
];
const CLEAN_QUERIES: &[&[u8]] = &[b"?a=1&b=2", b"?", b"?x=%41", b"?/?:@", b"?%2"];
const CLEAN_FRAGMENTS: &[&[u8]] = &[b"#", b"#top", b"#a?b", b"#%7E", b"#/x"];

/// Bytes that matter to the parser, for biased mutations.
const SPECIAL_BYTES: &[u8] = b"/\\.%?#:@[]  \t\n\r\x00\x01\x1f\x7f|^<>\"'`{}-_~+;=&";

/// Non-ASCII code points inserted whole (IDNA mappings, dots, invalid ones).
const UNICODE: &[&str] = &[
    "é",
    "ß",
    "ﬀ",
    "\u{200B}",
    "\u{00AD}",
    "。",
    "．",
    "Ａ",
    "\u{FFFD}",
    "ı",
    "\u{0378}",
    "☃",
    "\u{1F600}",
    "ا",
    "\u{FEFF}",
    "\u{2028}",
    "\u{0300}",
];

/// The bases, as strings (ada and url take them so; canonurl through `Base::parse`).
const BASES: &[&str] = &[
    "http://example.org/foo/bar",
    "file:///C:/dir/",
    "foo://h/p",
    "sc:opaque",
    "http://user:pass@h:81/a?q#f",
    "non-spec:/..//p",
    // A file URL with a host, an empty non-special
    // host, a special URL with only "/" as path.
    "file://host/share/dir/",
    "foo:///x/y",
    "https://example.com/",
];

// ---------------------------------------------------------------------------
// Generator

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// `canonicalize_into`.
    Url,
    /// `canonicalize_target`.
    Target,
}

/// The base URL of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
enum BaseSpec {
    /// `BASES[i]`.
    Listed(usize),
    /// A generated (possibly invalid) absolute URL.
    Generated(Vec<u8>),
}

#[derive(Clone, Debug)]
struct Case {
    input: Vec<u8>,
    base: Option<BaseSpec>,
    api: Api,
}

impl Case {
    fn base_bytes(&self) -> Option<&[u8]> {
        match &self.base {
            None => None,
            Some(BaseSpec::Listed(i)) => Some(BASES[*i].as_bytes()),
            Some(BaseSpec::Generated(b)) => Some(b),
        }
    }

    fn describe_base(&self) -> String {
        match self.base_bytes() {
            None => "none".to_string(),
            Some(b) => show(b),
        }
    }
}

fn push_path(rng: &mut Rng, v: &mut Vec<u8>) {
    for _ in 0..rng.below(5) {
        if rng.chance(70) {
            v.push(b'/');
        }
        if rng.chance(8) {
            push_long_run(rng, v);
        } else {
            v.extend_from_slice(rng.pick(PATH_PIECES));
        }
    }
}

/// A run of 1 to 80 plain bytes with an occasional special one, so that the
/// 8- and 16-byte scans meet their stop bytes at every offset of a block.
fn push_long_run(rng: &mut Rng, v: &mut Vec<u8>) {
    let n = 1 + rng.below(80);
    for _ in 0..n {
        let b = if rng.chance(6) {
            random_byte(rng)
        } else {
            rng.pick(b"abcxyzABC0123456789-_~!$&'()*+,;=:@")
        };
        v.push(b);
    }
}

fn push_tail(rng: &mut Rng, v: &mut Vec<u8>) {
    if rng.chance(35) {
        v.extend_from_slice(rng.pick(QUERY_PIECES));
        if rng.chance(20) {
            v.extend_from_slice(rng.pick(QUERY_PIECES));
        }
    }
    if rng.chance(25) {
        v.extend_from_slice(rng.pick(FRAGMENT_PIECES));
    }
}

fn push_authority(rng: &mut Rng, v: &mut Vec<u8>) {
    if rng.chance(25) {
        v.extend_from_slice(rng.pick(USERINFO));
    }
    push_host(rng, v);
    if rng.chance(25) {
        if rng.chance(70) {
            v.extend_from_slice(rng.pick(PORTS));
        } else {
            v.push(b':');
            for _ in 0..rng.below(8) {
                v.push(rng.pick(b"0123456789"));
            }
        }
    }
}

/// A host: from the dictionary, or built to probe the IPv4, IPv6, escape and
/// label-splitting rules.
fn push_host(rng: &mut Rng, v: &mut Vec<u8>) {
    match rng.below(100) {
        0..=44 => v.extend_from_slice(rng.pick(HOSTS)),
        45..=64 => push_ipv4ish(rng, v),
        65..=77 => push_ipv6ish(rng, v),
        78..=87 => {
            // A dictionary host with some bytes percent-encoded.
            for &b in rng.pick(HOSTS) {
                if rng.chance(30) {
                    let _ = write!(ByteSink(v), "%{b:02X}");
                } else {
                    v.push(b);
                }
            }
        }
        _ => {
            for k in 0..1 + rng.below(4) {
                if k > 0 {
                    v.extend_from_slice(rng.pick(LABEL_DOTS));
                }
                v.extend_from_slice(rng.pick(LABELS));
            }
        }
    }
}

/// Lets `write!` append to a byte vector.
struct ByteSink<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for ByteSink<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

const LABELS: &[&[u8]] = &[
    b"a",
    b"xn--a",
    b"xn--zca",
    b"xn--",
    b"EXAMPLE",
    b"0",
    b"09",
    b"0x1F",
    b"0X",
    b"255",
    b"4294967296",
    "ß".as_bytes(),
    "é".as_bytes(),
    "\u{200D}".as_bytes(),
    b"",
    b"-a-",
    b"a_b",
];

const LABEL_DOTS: &[&[u8]] = &[
    b".",
    b".",
    b".",
    b"%2e",
    b"%2E",
    "。".as_bytes(),
    "．".as_bytes(),
];

/// Dotted numbers in decimal, octal and hex, some too large or malformed.
fn push_ipv4ish(rng: &mut Rng, v: &mut Vec<u8>) {
    let parts = 1 + rng.below(5);
    for k in 0..parts {
        if k > 0 {
            v.push(b'.');
        }
        match rng.below(8) {
            0..=2 => {
                let n = match rng.below(4) {
                    0 => rng.below(256) as u64,
                    1 => rng.below(65536) as u64,
                    2 => rng.next() % (1 << 33),
                    _ => rng.next(),
                };
                let _ = write!(ByteSink(v), "{n}");
            }
            3 | 4 => {
                v.extend_from_slice(if rng.chance(50) { b"0x" } else { b"0X" });
                for _ in 0..rng.below(10) {
                    v.push(rng.pick(b"0123456789abcdefABCDEF"));
                }
            }
            5 => {
                v.push(b'0');
                for _ in 0..rng.below(12) {
                    v.push(rng.pick(b"012345678"));
                }
            }
            6 => v.extend_from_slice(rng.pick(&[&b""[..], b"a", b"0x", b"08", b"1e1", b"+1"])),
            _ => {
                let _ = write!(ByteSink(v), "{}", rng.below(10));
            }
        }
    }
    if rng.chance(20) {
        v.push(b'.');
    }
}

/// Bracketed IPv6-like text: pieces, a `::`, an embedded IPv4 tail.
fn push_ipv6ish(rng: &mut Rng, v: &mut Vec<u8>) {
    v.push(b'[');
    let pieces = rng.below(10);
    let compress_at = if rng.chance(60) {
        Some(rng.below(pieces + 1))
    } else {
        None
    };
    for k in 0..pieces {
        if compress_at == Some(k) {
            v.extend_from_slice(b"::");
        } else if k > 0 {
            v.push(b':');
        }
        let digits = if rng.chance(5) { 5 } else { rng.below(5) };
        for _ in 0..digits {
            v.push(rng.pick(b"0123456789abcdefABCDEF0000"));
        }
    }
    if compress_at == Some(pieces) {
        v.extend_from_slice(b"::");
    }
    if rng.chance(25) {
        if !v.ends_with(b":") {
            v.push(b':');
        }
        push_ipv4ish(rng, v);
    }
    if rng.chance(95) {
        v.push(b']');
    }
}

fn gen_absolute(rng: &mut Rng, v: &mut Vec<u8>) {
    v.extend_from_slice(rng.pick(SCHEMES));
    v.extend_from_slice(rng.pick(SEPARATORS));
    push_authority(rng, v);
    push_path(rng, v);
    push_tail(rng, v);
}

fn gen_relative(rng: &mut Rng, v: &mut Vec<u8>) {
    let start = rng.pick(RELATIVE_STARTS);
    v.extend_from_slice(start);
    if (start.ends_with(b"//") || start.ends_with(b"\\\\")) && rng.chance(70) {
        push_authority(rng, v);
    }
    push_path(rng, v);
    push_tail(rng, v);
}

fn gen_origin_form(rng: &mut Rng, v: &mut Vec<u8>) {
    v.push(b'/');
    if rng.chance(10) {
        v.push(rng.pick(b"/\\"));
    }
    push_path(rng, v);
    push_tail(rng, v);
}

fn gen_canonical_http(rng: &mut Rng, v: &mut Vec<u8>) {
    v.extend_from_slice(if rng.chance(50) {
        b"http://"
    } else {
        b"https://"
    });
    v.extend_from_slice(rng.pick(CLEAN_HOSTS));
    v.extend_from_slice(rng.pick(CLEAN_PORTS));
    for _ in 0..=rng.below(4) {
        v.push(b'/');
        v.extend_from_slice(rng.pick(CLEAN_SEGMENTS));
    }
    if rng.chance(40) {
        v.extend_from_slice(rng.pick(CLEAN_QUERIES));
    }
    if rng.chance(25) {
        v.extend_from_slice(rng.pick(CLEAN_FRAGMENTS));
    }
}

fn random_byte(rng: &mut Rng) -> u8 {
    match rng.below(100) {
        0..=44 => rng.pick(SPECIAL_BYTES),
        45..=59 => rng.pick(b"aZ09fFxX."),
        _ => rng.next() as u8,
    }
}

fn mutate(rng: &mut Rng, v: &mut Vec<u8>) {
    let len = v.len();
    match rng.below(12) {
        11 => {
            let at = rng.below(len + 1);
            let mut run = Vec::new();
            push_long_run(rng, &mut run);
            v.splice(at..at, run);
        }
        10 => {
            // A percent-escape, valid or not.
            let at = rng.below(len + 1);
            let hex = b"0123456789abcdefABCDEFgZ";
            let e = [b'%', rng.pick(hex), rng.pick(hex)];
            let n = 1 + rng.below(3);
            v.splice(at..at, e[..n].iter().copied());
        }
        0 | 1 => {
            let at = rng.below(len + 1);
            let b = random_byte(rng);
            v.insert(at, b);
        }
        2 if len > 0 => {
            v.remove(rng.below(len));
        }
        3 if len > 0 => {
            let at = rng.below(len);
            v[at] = random_byte(rng);
        }
        4 if len > 0 => {
            // Duplicate a slice, right after itself or somewhere else.
            let a = rng.below(len);
            let b = a + 1 + rng.below((len - a).min(12));
            let copy = v[a..b].to_vec();
            let at = if rng.chance(50) {
                b
            } else {
                rng.below(len + 1)
            };
            v.splice(at..at, copy);
        }
        5 if len > 0 => {
            let a = rng.below(len);
            let b = (a + 1 + rng.below(10)).min(len);
            v[a..b].make_ascii_uppercase();
        }
        6 => {
            let b = rng.below(0x21) as u8;
            v.insert(0, b);
        }
        7 => v.push(rng.below(0x21) as u8),
        8 => {
            let at = rng.below(len + 1);
            let s = rng.pick(UNICODE).as_bytes();
            v.splice(at..at, s.iter().copied());
        }
        _ => {
            let at = rng.below(len + 1);
            let dict: &[&[u8]] = match rng.below(5) {
                0 => PATH_PIECES,
                1 => HOSTS,
                2 => SEPARATORS,
                3 => USERINFO,
                _ => QUERY_PIECES,
            };
            let piece = rng.pick(dict);
            v.splice(at..at, piece.iter().copied());
        }
    }
}

fn gen_base(rng: &mut Rng) -> BaseSpec {
    if rng.chance(60) {
        return BaseSpec::Listed(rng.below(BASES.len()));
    }
    let mut v = Vec::new();
    if rng.chance(20) {
        gen_canonical_http(rng, &mut v);
    } else {
        gen_absolute(rng, &mut v);
    }
    for _ in 0..rng.below(3) {
        mutate(rng, &mut v);
    }
    BaseSpec::Generated(v)
}

fn gen_case(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let (api, base) = match rng.below(100) {
        0..=41 => (Api::Url, None),
        42..=83 => (Api::Url, Some(gen_base(&mut rng))),
        84..=93 => (Api::Target, None),
        _ => (Api::Target, Some(gen_base(&mut rng))),
    };
    let mut input = Vec::new();
    match (api, &base) {
        (Api::Target, None) if rng.chance(70) => gen_origin_form(&mut rng, &mut input),
        (_, Some(_)) if rng.chance(55) => gen_relative(&mut rng, &mut input),
        _ if rng.chance(25) => gen_canonical_http(&mut rng, &mut input),
        _ => gen_absolute(&mut rng, &mut input),
    }
    let mutations = match rng.below(10) {
        0..=3 => 0,
        4..=6 => 1,
        7 | 8 => 2,
        _ => 3 + rng.below(5),
    };
    for _ in 0..mutations {
        mutate(&mut rng, &mut input);
    }
    Case { input, base, api }
}

// ---------------------------------------------------------------------------
// Running canonurl

const PROFILES: [Profile; 2] = [Profile::Whatwg, Profile::Rfc3986];
const WHATWG: usize = 0;
const RFC3986: usize = 1;

/// What the API appends to: the tests pre-fill the output with this.
const MARKER: &[u8] = b"<marker>";

/// One canonicalizer per (base or none, profile).
struct Ctx {
    plain: [Canonicalizer; 2],
    based: Vec<[Canonicalizer; 2]>,
    /// The last generated base, and its canonicalizers (`None`: it is rejected).
    generated: Option<(Vec<u8>, Option<[Canonicalizer; 2]>)>,
}

impl Ctx {
    fn new() -> Ctx {
        let make = |base: Option<&str>| {
            PROFILES.map(|p| {
                let c = Canonicalizer::new(p);
                match base {
                    Some(b) => c.with_base(Base::parse(b.as_bytes()).expect("base parses")),
                    None => c,
                }
            })
        };
        Ctx {
            plain: make(None),
            based: BASES.iter().map(|b| make(Some(b))).collect(),
            generated: None,
        }
    }

    /// The canonicalizer for `profile` and `base`; `None` when `Base::parse`
    /// rejects the base (the case then fails as a whole).
    fn get(&mut self, profile: usize, base: &Option<BaseSpec>) -> Option<&mut Canonicalizer> {
        match base {
            None => Some(&mut self.plain[profile]),
            Some(BaseSpec::Listed(b)) => Some(&mut self.based[*b][profile]),
            Some(BaseSpec::Generated(bytes)) => {
                if self.generated.as_ref().map(|(k, _)| k) != Some(bytes) {
                    let made = Base::parse(bytes)
                        .ok()
                        .map(|b| PROFILES.map(|p| Canonicalizer::new(p).with_base(b.clone())));
                    self.generated = Some((bytes.clone(), made));
                }
                let (_, made) = self.generated.as_mut().expect("just set");
                made.as_mut().map(|cs| &mut cs[profile])
            }
        }
    }

    /// Runs `input` with the case's base and API; `None` for an invalid base.
    fn run_case(
        &mut self,
        profile: usize,
        case: &Case,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Result<Canonical, Reject>> {
        let api = case.api;
        self.get(profile, &case.base)
            .map(|c| run(c, api, input, out))
    }
}

fn run(
    c: &mut Canonicalizer,
    api: Api,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<Canonical, Reject> {
    match api {
        Api::Url => c.canonicalize_into(input, out),
        Api::Target => c.canonicalize_target(input, out),
    }
}

/// Path-only output (from `canonicalize_target`) has no scheme; canonicalizing
/// it again needs the same API.
fn api_for_output(parts: &Parts) -> Api {
    if parts.scheme_end == ABSENT {
        Api::Target
    } else {
        Api::Url
    }
}

// ---------------------------------------------------------------------------
// Checks

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Panic,
    Appended,
    RejectOffset,
    Inconsistent,
    UnchangedFlag,
    NotIdempotent,
    ProfilesDisagree,
    FastPath,
    UnchangedButAdaDiffers,
    Components,
    Differential,
}

#[derive(Debug)]
struct Failure {
    kind: Kind,
    detail: String,
}

fn fail<T>(kind: Kind, detail: String) -> Result<T, Failure> {
    Err(Failure { kind, detail })
}

fn show_result(r: &Option<Vec<u8>>) -> String {
    match r {
        Some(h) => show(h),
        None => "failure".to_string(),
    }
}

fn show_str(r: &Option<String>) -> String {
    match r {
        Some(h) => format!("{h:?}"),
        None => "failure".to_string(),
    }
}

const MAX_EXAMPLES: usize = 4;

#[derive(Default)]
struct Stats {
    cases: usize,
    with_base: usize,
    target: usize,
    accepted: [usize; 2],
    unchanged: [usize; 2],
    fast_path_checked: usize,
    leading_space_checked: usize,
    compared: usize,
    agree: usize,
    agree_failure: usize,
    components_checked: usize,
    unchanged_vs_ada: usize,
    url_differs_canonurl_agrees_with_ada: usize,
    /// Tolerated ada mismatches by documented class.
    classes: BTreeMap<&'static str, usize>,
    /// Examples per class, one per distinct host (ada's, else canonurl's),
    /// at most `MAX_EXAMPLES`.
    examples: BTreeMap<&'static str, BTreeMap<String, String>>,
}

/// Everything about one profile's run that later checks need.
struct Outcome {
    bytes: Option<Vec<u8>>,
    parts: Option<Parts>,
    unchanged: bool,
}

fn check_profile(ctx: &mut Ctx, case: &Case, k: usize) -> Result<Outcome, Failure> {
    let input = &case.input;
    let mut out = MARKER.to_vec();
    let Some(result) = ctx.run_case(k, case, input, &mut out) else {
        // Base::parse rejected the base.
        return Ok(Outcome {
            bytes: None,
            parts: None,
            unchanged: false,
        });
    };
    let name = PROFILES[k].name();
    if !out.starts_with(MARKER) {
        return fail(
            Kind::Appended,
            format!("{name}: the marker prefix was overwritten"),
        );
    }
    let got = out[MARKER.len()..].to_vec();
    let outcome = match result {
        Err(e) => {
            if !got.is_empty() {
                return fail(
                    Kind::Appended,
                    format!("{name}: rejected ({e:?}) but appended {}", show(&got)),
                );
            }
            if e.offset > input.len() {
                return fail(
                    Kind::RejectOffset,
                    format!(
                        "{name}: {e:?} points past the input ({} bytes)",
                        input.len()
                    ),
                );
            }
            Outcome {
                bytes: None,
                parts: None,
                unchanged: false,
            }
        }
        Ok(c) => {
            if !c.parts.is_consistent(&got) {
                return fail(
                    Kind::Inconsistent,
                    format!(
                        "{name}: parts {:?} inconsistent with {}",
                        c.parts,
                        show(&got)
                    ),
                );
            }
            if c.unchanged != (got[..] == input[..]) {
                return fail(
                    Kind::UnchangedFlag,
                    format!(
                        "{name}: unchanged = {} for output {}",
                        c.unchanged,
                        show(&got)
                    ),
                );
            }
            let mut again = Vec::new();
            let again_api = api_for_output(&c.parts);
            match run(&mut ctx.plain[k], again_api, &got, &mut again) {
                Ok(c2) if again == got && c2.unchanged && c2.parts == c.parts => {}
                Ok(c2) => {
                    return fail(
                        Kind::NotIdempotent,
                        format!(
                            "{name}: output {} canonicalizes ({again_api:?}) to {} \
                             (unchanged {}, parts equal {})",
                            show(&got),
                            show(&again),
                            c2.unchanged,
                            c2.parts == c.parts
                        ),
                    )
                }
                Err(e) => {
                    return fail(
                        Kind::NotIdempotent,
                        format!("{name}: output {} is rejected: {e:?}", show(&got)),
                    )
                }
            }
            Outcome {
                bytes: Some(got),
                parts: Some(c.parts),
                unchanged: c.unchanged,
            }
        }
    };
    // Fast path: a leading space is trimmed by the parser but keeps the input
    // off the fast path, so the general parser must produce the same. (Done
    // for every input that does not start with C0 or space already: it
    // checks the trimming too.)
    if input.first().is_some_and(|&b| b > b' ') {
        let mut spaced = vec![b' '];
        spaced.extend_from_slice(input);
        let mut out2 = Vec::new();
        let r2 = ctx
            .run_case(k, case, &spaced, &mut out2)
            .expect("the base was accepted above");
        let same = match (&r2, &outcome.parts) {
            (Ok(c2), Some(p)) => {
                Some(&out2) == outcome.bytes.as_ref() && c2.parts == *p && !c2.unchanged
            }
            (Err(_), None) => true,
            _ => false,
        };
        if !same {
            return fail(
                Kind::FastPath,
                format!(
                    "{name}: {} gives {} ({:?}) but with a leading space {} ({:?})",
                    show(input),
                    show_result(&outcome.bytes),
                    outcome.parts,
                    show_result(&r2.as_ref().ok().map(|_| out2.clone())),
                    r2.map(|c| c.parts)
                ),
            );
        }
    }
    Ok(outcome)
}

/// What ada and url are given for a case: the input, the base, and a prefix
/// to strip from their href (for path-only output).
fn reference_input(case: &Case) -> Option<(String, Option<&str>, &'static str)> {
    let s = std::str::from_utf8(&case.input).ok()?;
    let base = match case.base_bytes() {
        Some(b) => Some(std::str::from_utf8(b).ok()?),
        None => None,
    };
    if case.api == Api::Target && base.is_none() {
        // Path-only mode reads an origin-form target with http's rules from
        // the path start state: like the rest of "http://h" + target.
        let trimmed = s.trim_matches(|c: char| c <= ' ');
        if trimmed.starts_with('/') {
            return Some((format!("http://h{trimmed}"), None, "http://h"));
        }
    }
    Some((s.to_string(), base, ""))
}

fn by_ada(input: &str, base: Option<&str>) -> Option<ada_url::Url> {
    ada_url::Url::parse(input, base).ok()
}

fn by_url(input: &str, base: Option<&str>) -> Option<String> {
    let base = match base {
        Some(b) => Some(url::Url::parse(b).ok()?),
        None => None,
    };
    url::Url::options()
        .base_url(base.as_ref())
        .parse(input)
        .ok()
        .map(String::from)
}

/// The component getters of a canonurl output, as the URL API defines them.
fn getters(url: &[u8], p: &Parts) -> [String; 8] {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let prefixed = |sigil: char, c: Option<&[u8]>| match c {
        Some(c) if !c.is_empty() => format!("{sigil}{}", text(c)),
        _ => String::new(),
    };
    [
        format!("{}:", text(p.scheme(url).unwrap_or_default())),
        text(p.username(url).unwrap_or_default()),
        text(p.password(url).unwrap_or_default()),
        text(p.host(url).unwrap_or_default()),
        p.port().map(|p| p.to_string()).unwrap_or_default(),
        text(p.path(url)),
        prefixed('?', p.query(url)),
        prefixed('#', p.fragment(url)),
    ]
}

fn ada_getters(u: &ada_url::Url) -> [String; 8] {
    [
        u.protocol(),
        u.username(),
        u.password(),
        u.hostname(),
        u.port(),
        u.pathname(),
        u.search(),
        u.hash(),
    ]
    .map(str::to_string)
}

/// Class (a): the hosts differ because the `idna` crate (behind canonurl and
/// `url`) and ada's own IDNA code (ada-idna) use different Unicode data or
/// apply UTS #46's per-label validity criteria differently. The URL Standard's
/// "domain to ASCII" runs UTS #46 ToASCII with the current Unicode version,
/// so the newer data wins. Found so far: U+0897 ARABIC PEPET (Unicode 16) is a
/// combining mark that NFC puts after U+089A (canonical combining class 220);
/// ada does not reorder them, so it accepts `xn--bcher-ffkv`
/// (`bche\u{897}\u{89A}r`; reached from `xn--bcher-\u{FB00}kv`), whose
/// Punycode decodes to a label that is not NFC (UTS #46 §4.1 Validity
/// Criteria 1, "The label must be in Unicode Normalization Form NFC"); and
/// ada accepts labels that begin with a combining mark such as U+089A
/// (Validity Criteria 6, "The label must not begin with a combining mark");
/// and the other way round, ada rejects code points that its tables do not
/// have but the `idna` crate's (ICU4X, a newer Unicode version) have as valid,
/// such as U+058B in `http:\u{58B}` (unassigned as of Unicode 15.1), which
/// the `idna` crate maps to U+056B, so canonurl and `url` give
/// `http://xn--89a/`.
const CLASS_IDNA_DATA: &str = "(a) idna: ada's Unicode data / per-label checks differ";

/// Class (b): ada does not apply the Bidi Rule across labels. The URL
/// Standard's "domain to ASCII" calls ToASCII with CheckBidi = true; UTS #46
/// §4.1 Validity Criteria 8 then applies RFC 5893 §2 to every label of a
/// "Bidi domain name" (one with at least one RTL label), and rule 1 requires
/// each label to start with a character of Bidi class L, R or AL. So
/// `ws:ا。😀` (an AL label, then a label starting with an ON emoji) must
/// fail; ada accepts it as `ws://xn--mgb.xn--e28h/`; likewise `http://1.2.3.ا4/`
/// (labels starting with a digit, class EN, in a Bidi domain name), which ada
/// gives as `http://1.2.3.xn--4-ymc/`. Recognized as: every
/// label of ada's host is accepted on its own, the whole host is not.
const CLASS_ADA_BIDI: &str = "(b) ada: no cross-label Bidi Rule (CheckBidi)";

/// Class (c): ada accepts Punycode that starts with its delimiter. In
/// `xn---mxa` the Punycode is `-mxa`; RFC 3492 §6.2 (decoding procedure):
/// "consume all code points before the last delimiter (if there is one) ...
/// if more than zero code points were consumed then consume one more (which
/// will be the last delimiter)". None are before it here, so the `-` is read
/// as a base-36 digit, which it is not: "fail". UTS #46 §4 Processing step
/// 4.1 makes that failure an error, so the URL Standard's host parser fails;
/// ada gives `http://xn---mxa/`. Recognized as: a label of ada's host starts
/// with `xn---`.
const CLASS_ADA_PUNYCODE: &str = "(c) ada: Punycode starting with its delimiter";

/// The serialized host `host` as the `url` crate (the `idna` crate) gives it
/// for an `http` URL, `None` when it fails.
fn url_host(host: &str) -> Option<String> {
    url::Url::parse(&format!("http://{host}/"))
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
}

/// The same, by ada.
fn ada_host(host: &str) -> Option<String> {
    by_ada(&format!("http://{host}/"), None).map(|u| u.hostname().to_string())
}

/// Whether the input or the base (percent-decoded) holds a non-ASCII code
/// point that ada and the `idna` crate process differently on its own, as a
/// host `c` or `ac`: evidence of different Unicode data (a mapping, a status).
fn unicode_data_differs(case: &Case) -> bool {
    let input = [&case.input[..], case.base_bytes().unwrap_or_default()].concat();
    let mut decoded = Vec::new();
    canonurl::internals::percent_decode_into(&mut decoded, &input);
    String::from_utf8_lossy(&decoded)
        .chars()
        .filter(|c| !c.is_ascii())
        .any(|c| {
            [format!("{c}"), format!("a{c}")]
                .iter()
                .any(|h| ada_host(h) != url_host(h))
        })
}

/// Class of a host that ada produced and that the `idna` crate rejects.
fn class_of_ada_host(host: &str) -> Option<&'static str> {
    if host.is_empty() || url_host(host).as_deref() == Some(host) {
        return None;
    }
    if host.split('.').any(|l| l.starts_with("xn---")) {
        return Some(CLASS_ADA_PUNYCODE);
    }
    // Each label on its own, followed by "a" so that a numeric label is not
    // read as IPv4 (an "a" label satisfies the Bidi Rule in any domain).
    let labels_ok = host.split('.').all(|l| {
        let alone = format!("{l}.a");
        l.is_empty() || url_host(&alone) == Some(alone)
    });
    Some(if labels_ok {
        CLASS_ADA_BIDI
    } else {
        CLASS_IDNA_DATA
    })
}

const SPECIAL: &[&str] = &["http:", "https:", "ws:", "wss:", "ftp:", "file:"];

/// Documented classes of disagreement with ada that are not canonurl bugs.
/// `None` means the mismatch is not explained: a failure. Every class needs
/// the `url` crate to agree with canonurl, a difference in the host alone,
/// and independent evidence that the host is where ada and `idna` part.
fn documented_class(
    case: &Case,
    w: &Outcome,
    ada: Option<&ada_url::Url>,
    got: &Option<String>,
    by_url: &Option<String>,
    path_only: bool,
) -> Option<&'static str> {
    if path_only || by_url != got {
        return None;
    }
    match (ada, &w.bytes, &w.parts) {
        (Some(a), Some(b), Some(p)) => {
            let mut mine = getters(b, p);
            let mut theirs = ada_getters(a);
            let my_host = std::mem::take(&mut mine[3]);
            let ada_hostname = std::mem::take(&mut theirs[3]);
            if mine != theirs || my_host == ada_hostname || !p.special {
                return None;
            }
            class_of_ada_host(&ada_hostname)
                .or_else(|| unicode_data_differs(case).then_some(CLASS_IDNA_DATA))
        }
        (Some(a), None, _) if SPECIAL.contains(&a.protocol()) => class_of_ada_host(a.hostname()),
        (None, Some(b), Some(p)) if p.special => {
            // ada takes canonurl's output as it is: only reading the input differs.
            let href = std::str::from_utf8(b).ok()?;
            let ada_takes_it = by_ada(href, None).is_some_and(|u| u.href() == href);
            (ada_takes_it && unicode_data_differs(case)).then_some(CLASS_IDNA_DATA)
        }
        _ => None,
    }
}

/// When canonurl (`Base::parse`) rejects the case's base and ada does not,
/// the case is explained by the base's own class of disagreement, if any.
fn base_class(case: &Case) -> Option<&'static str> {
    let b = case.base_bytes()?;
    let s = std::str::from_utf8(b).ok()?;
    let ada = by_ada(s, None)?;
    let base_case = Case {
        input: b.to_vec(),
        base: None,
        api: Api::Url,
    };
    let rejected = Outcome {
        bytes: None,
        parts: None,
        unchanged: false,
    };
    documented_class(
        &base_case,
        &rejected,
        Some(&ada),
        &None,
        &by_url(s, None),
        false,
    )
}

/// [`documented_class`] of the case; of its base instead when canonurl
/// rejects the base (the case then fails whatever its input).
fn explain(
    case: &Case,
    w: &Outcome,
    ada: Option<&ada_url::Url>,
    got: &Option<String>,
    by_url: &Option<String>,
    path_only: bool,
) -> Option<&'static str> {
    match case.base_bytes() {
        Some(b) if Base::parse(b).is_err() => base_class(case),
        _ => documented_class(case, w, ada, got, by_url, path_only),
    }
}

fn check(ctx: &mut Ctx, case: &Case, mut stats: Option<&mut Stats>) -> Result<(), Failure> {
    let w = check_profile(ctx, case, WHATWG)?;
    let r = check_profile(ctx, case, RFC3986)?;
    if let Some(s) = stats.as_deref_mut() {
        for (k, o) in [&w, &r].into_iter().enumerate() {
            s.accepted[k] += usize::from(o.bytes.is_some());
            s.unchanged[k] += usize::from(o.unchanged);
        }
        if case.input.starts_with(b"http://") || case.input.starts_with(b"https://") {
            s.fast_path_checked += 1;
        }
        if case.input.first().is_some_and(|&b| b > b' ') {
            s.leading_space_checked += 1;
        }
    }
    // rfc3986 = whatwg + escape normalization.
    match (&w.bytes, &r.bytes, &w.parts) {
        (None, None, _) => {}
        (Some(wb), Some(rb), Some(wp)) => {
            let mut again = Vec::new();
            let res = run(&mut ctx.plain[RFC3986], api_for_output(wp), wb, &mut again);
            if res.is_err() || &again != rb {
                return fail(
                    Kind::ProfilesDisagree,
                    format!(
                        "rfc3986 output {} but the whatwg output {} gives {} in rfc3986",
                        show(rb),
                        show(wb),
                        show_result(&res.ok().map(|_| again))
                    ),
                );
            }
        }
        _ => {
            return fail(
                Kind::ProfilesDisagree,
                format!(
                    "whatwg {} but rfc3986 {}",
                    show_result(&w.bytes),
                    show_result(&r.bytes)
                ),
            )
        }
    }
    // Differential, whatwg only.
    let Some((ref_input, ref_base, prefix)) = reference_input(case) else {
        return Ok(());
    };
    let ada = by_ada(&ref_input, ref_base);
    let ada_href: Option<String> = ada.as_ref().map(|u| {
        u.href()
            .strip_prefix(prefix)
            .unwrap_or("<no prefix>")
            .to_string()
    });
    let got: Option<String> = w
        .bytes
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    if let Some(s) = stats.as_deref_mut() {
        s.compared += 1;
    }
    if w.unchanged {
        if let Some(s) = stats.as_deref_mut() {
            s.unchanged_vs_ada += 1;
        }
        let input = std::str::from_utf8(&case.input).expect("checked UTF-8");
        // (A difference in a documented class is counted below.)
        let url = || {
            by_url(&ref_input, ref_base)
                .map(|h| h.strip_prefix(prefix).unwrap_or("<no prefix>").to_string())
        };
        if ada_href.as_deref() != Some(input)
            && explain(case, &w, ada.as_ref(), &got, &url(), !prefix.is_empty()).is_none()
        {
            return fail(
                Kind::UnchangedButAdaDiffers,
                format!(
                    "whatwg reports unchanged, ada gives {}",
                    show_str(&ada_href)
                ),
            );
        }
    }
    if got == ada_href {
        if let Some(s) = stats.as_deref_mut() {
            s.agree += 1;
            s.agree_failure += usize::from(got.is_none());
        }
        if let (Some(u), Some(bytes), Some(parts)) = (&ada, &w.bytes, &w.parts) {
            if parts.scheme_end != ABSENT {
                if let Some(s) = stats.as_deref_mut() {
                    s.components_checked += 1;
                }
                let mine = getters(bytes, parts);
                let theirs = ada_getters(u);
                if mine != theirs {
                    return fail(
                        Kind::Components,
                        format!("getters {mine:?}, ada {theirs:?}"),
                    );
                }
            }
        }
        if let Some(s) = stats {
            // For information: where url differs from ada and canonurl.
            let by_url = by_url(&ref_input, ref_base)
                .map(|h| h.strip_prefix(prefix).unwrap_or("<no prefix>").to_string());
            if by_url != ada_href {
                s.url_differs_canonurl_agrees_with_ada += 1;
            }
        }
        return Ok(());
    }
    let by_url = by_url(&ref_input, ref_base)
        .map(|h| h.strip_prefix(prefix).unwrap_or("<no prefix>").to_string());
    match explain(case, &w, ada.as_ref(), &got, &by_url, !prefix.is_empty()) {
        Some(class) => {
            if let Some(s) = stats {
                *s.classes.entry(class).or_default() += 1;
                let host = match (&ada, &w.bytes, &w.parts) {
                    (Some(a), _, _) => a.hostname().to_string(),
                    (None, Some(b), Some(p)) => {
                        String::from_utf8_lossy(p.host(b).unwrap_or_default()).into_owned()
                    }
                    _ => String::new(),
                };
                let ex = s.examples.entry(class).or_default();
                if ex.len() < MAX_EXAMPLES && !ex.contains_key(&host) {
                    let example = format!(
                        "{} base {}: canonurl {}, ada {}, url {}",
                        show(&case.input),
                        case.describe_base(),
                        show_str(&got),
                        show_str(&ada_href),
                        show_str(&by_url)
                    );
                    ex.insert(host, example);
                }
            }
            Ok(())
        }
        None => fail(
            Kind::Differential,
            format!(
                "expected (ada) {}\n      got            {}\n      url            {}",
                show_str(&ada_href),
                show_str(&got),
                show_str(&by_url)
            ),
        ),
    }
}

// ---------------------------------------------------------------------------
// Panics, minimization, suites

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Panics caught by this test are reported by it, not by the panic hook.
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// `check`, with a panic turned into a failure (and the context rebuilt).
fn check_catching(ctx: &mut Ctx, case: &Case, stats: Option<&mut Stats>) -> Result<(), Failure> {
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| check(ctx, case, stats)));
    QUIET.with(|q| q.set(false));
    match result {
        Ok(r) => r,
        Err(payload) => {
            *ctx = Ctx::new();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string payload)".to_string());
            fail(Kind::Panic, format!("panicked: {msg}"))
        }
    }
}

/// Deletes bytes (chunks, then single bytes) while the case still fails with
/// the same kind of failure.
fn minimize(ctx: &mut Ctx, case: &Case, kind: Kind) -> (Vec<u8>, String) {
    let mut cur = case.clone();
    let mut detail = String::new();
    loop {
        let mut progress = false;
        let mut n = (cur.input.len() / 2).max(1);
        loop {
            let mut i = 0;
            while i + n <= cur.input.len() {
                let mut cand = cur.clone();
                cand.input.drain(i..i + n);
                match check_catching(ctx, &cand, None) {
                    Err(f) if f.kind == kind => {
                        cur = cand;
                        detail = f.detail;
                        progress = true;
                    }
                    _ => i += 1,
                }
            }
            if n == 1 {
                break;
            }
            n /= 2;
        }
        if !progress {
            break;
        }
    }
    if detail.is_empty() {
        if let Err(f) = check_catching(ctx, &cur, None) {
            detail = f.detail;
        }
    }
    (cur.input, detail)
}

fn total_cases() -> u64 {
    let default = if cfg!(debug_assertions) {
        40_000
    } else {
        200_000
    };
    std::env::var("CANONURL_RANDOM_CASES")
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

const SUITES: u64 = 4;

fn run_suite(name: &str, suite_seed: u64) {
    install_quiet_hook();
    let cases = total_cases().div_ceil(SUITES);
    let mut ctx = Ctx::new();
    let mut stats = Stats::default();
    let mut failures: Vec<String> = Vec::new();
    let mut seen: BTreeMap<(Kind, Vec<u8>), usize> = BTreeMap::new();
    let mut failed_cases = 0usize;
    for index in 0..cases {
        let seed = case_seed(suite_seed, index);
        let case = gen_case(seed);
        stats.cases += 1;
        stats.with_base += usize::from(case.base.is_some());
        stats.target += usize::from(case.api == Api::Target);
        let Err(f) = check_catching(&mut ctx, &case, Some(&mut stats)) else {
            continue;
        };
        failed_cases += 1;
        if failures.len() >= 30 {
            continue;
        }
        let (small, detail) = minimize(&mut ctx, &case, f.kind);
        let count = seen.entry((f.kind, small.clone())).or_default();
        *count += 1;
        if *count > 1 {
            continue;
        }
        let mut msg = String::new();
        let _ = writeln!(
            msg,
            "{:?}: case {index} seed {seed:#018x} ({:?}, base {})",
            f.kind,
            case.api,
            case.describe_base()
        );
        let _ = writeln!(msg, "    input     {}", show(&case.input));
        let _ = writeln!(msg, "      {}", f.detail);
        let _ = writeln!(msg, "    minimized {}", show(&small));
        let _ = write!(msg, "      {detail}");
        failures.push(msg);
    }
    print_summary(name, suite_seed, &stats);
    for f in &failures {
        println!("{name}: FAIL {f}");
    }
    assert!(
        failed_cases == 0,
        "{name}: {failed_cases} failing case(s) of {cases}; first {} printed above \
         (replay one with CANONURL_RANDOM_REPLAY=<seed> cargo test --release --test suite_canon random::replay -- --nocapture)",
        failures.len()
    );
}

fn print_summary(name: &str, seed: u64, s: &Stats) {
    println!(
        "{name}: seed {seed:#x}: {} cases ({} with a base, {} canonicalize_target)",
        s.cases, s.with_base, s.target
    );
    println!(
        "{name}: accepted whatwg {} / rfc3986 {}; unchanged whatwg {} / rfc3986 {}; \
         no panic, marker, parts, unchanged flag, idempotence, profile checks on all",
        s.accepted[WHATWG], s.accepted[RFC3986], s.unchanged[WHATWG], s.unchanged[RFC3986]
    );
    println!(
        "{name}: leading-space checks {} (of which http(s):// inputs, fast path candidates, {}); \
         unchanged outputs checked against ada {}",
        s.leading_space_checked, s.fast_path_checked, s.unchanged_vs_ada
    );
    let tolerated: usize = s.classes.values().sum();
    println!(
        "{name}: differential: {} UTF-8 cases compared with ada, {} agree ({} both fail), \
         {} getters checked, {} tolerated by class; url differs where canonurl = ada: {}",
        s.compared,
        s.agree,
        s.agree_failure,
        s.components_checked,
        tolerated,
        s.url_differs_canonurl_agrees_with_ada
    );
    for (class, n) in &s.classes {
        println!("{name}:   class {class}: {n}");
        for ex in s.examples.get(class).into_iter().flat_map(|m| m.values()) {
            println!("{name}:     e.g. {ex}");
        }
    }
}

#[test]
fn random_a() {
    run_suite("random_a", 0x00C0_FFEE_0000_0001);
}

#[test]
fn random_b() {
    run_suite("random_b", 0x5EED_0000_0000_0002);
}

#[test]
fn random_c() {
    run_suite("random_c", 0xDEAD_BEEF_0000_0003);
}

#[test]
fn random_d() {
    run_suite("random_d", 0x0123_4567_89AB_CDEF);
}

/// `CANONURL_RANDOM_REPLAY=<case seed>`: runs that one case and prints it.
#[test]
fn replay() {
    let Ok(v) = std::env::var("CANONURL_RANDOM_REPLAY") else {
        return;
    };
    let v = v.trim();
    let seed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    }
    .expect("CANONURL_RANDOM_REPLAY is a number");
    install_quiet_hook();
    let case = gen_case(seed);
    println!(
        "replay {seed:#018x}: {} ({:?}, base {})",
        show(&case.input),
        case.api,
        case.describe_base()
    );
    let mut ctx = Ctx::new();
    for (k, p) in PROFILES.iter().enumerate() {
        let mut out = Vec::new();
        let r = ctx.run_case(k, &case, &case.input, &mut out);
        println!("  {}: {} {:?}", p.name(), show(&out), r);
    }
    if let Err(f) = check_catching(&mut ctx, &case, None) {
        let (small, detail) = minimize(&mut ctx, &case, f.kind);
        panic!(
            "{:?}: {}\n  minimized {}\n    {detail}",
            f.kind,
            f.detail,
            show(&small)
        );
    }
}
