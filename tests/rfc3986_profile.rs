//! Targeted cases: the `rfc3986` profile's escape normalization in each
//! component, rejections with their reason and offset, path-only mode,
//! resolution against a reused base, and bytes that are not UTF-8.
//!
//! The `rfc3986` expectations are written from RFC 3986: §2.1 (hex digits of
//! an escape are equivalent in either case; upper case is normal), §2.3 and
//! §6.2.2.2 (an escaped unreserved character `ALPHA DIGIT - . _ ~` is
//! equivalent to the character itself), §2.2 (escaping a reserved character
//! changes the meaning, so `%2F`, `%3F`, ... stay). Malformed escapes are not
//! escapes: their `%` is data, written `%25` (§2.4). The `whatwg`
//! expectations are written from the URL Standard and, where the input is
//! UTF-8, also checked against `ada-url` so that a wrong expectation is
//! caught as such.

use canonurl::{Base, Canonicalizer, Profile, Reason, Reject};

fn canon(profile: Profile, input: &[u8]) -> Result<Vec<u8>, Reject> {
    let mut out = Vec::new();
    Canonicalizer::new(profile)
        .canonicalize_into(input, &mut out)
        .map(|_| out)
}

fn show(b: &[u8]) -> String {
    format!("\"{}\"", b.escape_ascii())
}

/// Checks a `whatwg` expectation against ada, for UTF-8 inputs.
fn check_oracle(input: &[u8], whatwg: Option<&str>) {
    let Ok(s) = std::str::from_utf8(input) else {
        return;
    };
    let ada = ada_url::Url::parse(s, None)
        .ok()
        .map(|u| u.href().to_string());
    assert_eq!(
        ada.as_deref(),
        whatwg,
        "test expectation for {s:?} disagrees with ada"
    );
}

/// (input, whatwg href, rfc3986 href)
const ESCAPES: &[(&str, &str, &str)] = &[
    // The example from the task: path, query and fragment at once.
    (
        "http://a/%7Euser/%7e%41%2f%2F?%6b=%2b#%5a",
        "http://a/%7Euser/%7e%41%2f%2F?%6b=%2b#%5a",
        "http://a/~user/~A%2F%2F?k=%2B#Z",
    ),
    // Userinfo: unreserved decoded, reserved kept and upper-cased.
    (
        "http://%75ser:p%61ss%2fx@a/",
        "http://%75ser:p%61ss%2fx@a/",
        "http://user:pass%2Fx@a/",
    ),
    // Every unreserved class decodes: - . _ ~ DIGIT ALPHA.
    (
        "http://a/%2D%2E%5F%7E%30%39%61%7A%41%5A",
        "http://a/%2D%2E%5F%7E%30%39%61%7A%41%5A",
        "http://a/-._~09azAZ",
    ),
    // Reserved (gen-delims and sub-delims) and other escapes stay, upper-cased.
    (
        "http://a/%21%24%27%28%29%2a%2c%3b%3a%40%20%22%3c%5b",
        "http://a/%21%24%27%28%29%2a%2c%3b%3a%40%20%22%3c%5b",
        "http://a/%21%24%27%28%29%2A%2C%3B%3A%40%20%22%3C%5B",
    ),
    // Query: non-ASCII escapes upper-cased, reserved kept.
    (
        "http://a/?%c3%a9&%3d=%3D&%7e",
        "http://a/?%c3%a9&%3d=%3D&%7e",
        "http://a/?%C3%A9&%3D=%3D&~",
    ),
    // Fragment.
    (
        "http://a/#%7e%5A%2f%c3%a9",
        "http://a/#%7e%5A%2f%c3%a9",
        "http://a/#~Z%2F%C3%A9",
    ),
    // Opaque paths.
    ("mailto:%7euser@x", "mailto:%7euser@x", "mailto:~user@x"),
    ("mailto:a%2fb%3a", "mailto:a%2fb%3a", "mailto:a%2Fb%3A"),
    // Opaque host of a non-special URL (the URL Standard keeps its escapes),
    // and a path segment that only becomes "p." (not a dot segment).
    (
        "foo://%7ex%2d1/p%2e",
        "foo://%7ex%2d1/p%2e",
        "foo://~x-1/p.",
    ),
    ("foo://h%2f/", "foo://h%2f/", "foo://h%2F/"),
    // A special URL's host is percent-decoded (and lower-cased) already.
    ("http://%61B.com/", "http://ab.com/", "http://ab.com/"),
    // Malformed escapes are not escapes: the URL Standard keeps them, and
    // RFC 3986 writes their `%` as `%25` (§2.4, Appendix A `pct-encoded`).
    (
        "http://a/%zz%4/%",
        "http://a/%zz%4/%",
        "http://a/%25zz%254/%25",
    ),
    (
        "http://a/%4g?%x#%",
        "http://a/%4g?%x#%",
        "http://a/%254g?%25x#%25",
    ),
    // %25 is an escaped "%" and stays; what follows it is data.
    (
        "http://a/%25%2541?%25#%25",
        "http://a/%25%2541?%25#%25",
        "http://a/%25%2541?%25#%25",
    ),
    ("http://a/%2a%25", "http://a/%2a%25", "http://a/%2A%25"),
    // Escaped dots are dot segments in the URL Standard already.
    ("http://a/b/%2e%2e/c", "http://a/c", "http://a/c"),
    ("http://a/b/%2E/c", "http://a/b/c", "http://a/b/c"),
    ("http://a/b/.%2e/c", "http://a/c", "http://a/c"),
    ("foo://h/b/%2e%2E/c", "foo://h/c", "foo://h/c"),
    // Raw non-ASCII is percent-encoded with upper-case hex.
    (
        "http://a/\u{e9}?\u{e9}#\u{e9}",
        "http://a/%C3%A9?%C3%A9#%C3%A9",
        "http://a/%C3%A9?%C3%A9#%C3%A9",
    ),
    // Scheme and host case, default port.
    ("HTTP://A:80/", "http://a/", "http://a/"),
];

#[test]
fn escape_normalization_in_every_component() {
    let mut failures = Vec::new();
    for &(input, whatwg, rfc) in ESCAPES {
        check_oracle(input.as_bytes(), Some(whatwg));
        for (profile, want) in [(Profile::Whatwg, whatwg), (Profile::Rfc3986, rfc)] {
            let mut out = b"prefix".to_vec();
            let mut c = Canonicalizer::new(profile);
            match c.canonicalize_into(input.as_bytes(), &mut out) {
                Ok(canonical) => {
                    let url = &out[6..];
                    if &out[..6] != b"prefix" || url != want.as_bytes() {
                        failures.push(format!(
                            "{input:?} ({}): expected {want:?} after the prefix, got {}",
                            profile.name(),
                            show(&out)
                        ));
                    } else if !canonical.parts.is_consistent(url) {
                        failures.push(format!(
                            "{input:?} ({}): inconsistent parts",
                            profile.name()
                        ));
                    } else if canonical.unchanged != (want == input) {
                        failures.push(format!(
                            "{input:?} ({}): unchanged = {}",
                            profile.name(),
                            canonical.unchanged
                        ));
                    }
                }
                Err(r) => failures.push(format!(
                    "{input:?} ({}): expected {want:?}, rejected ({r})",
                    profile.name()
                )),
            }
        }
    }
    for f in &failures {
        println!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed",
        failures.len(),
        ESCAPES.len() * 2
    );
}

#[test]
fn components_by_parts() {
    let input = b"HTTPS://us%65r:p%77@[0:0::1]:8443/p/%7e?%71#%66";
    for (profile, user, pass, path, query, frag) in [
        (Profile::Whatwg, "us%65r", "p%77", "/p/%7e", "%71", "%66"),
        (Profile::Rfc3986, "user", "pw", "/p/~", "q", "f"),
    ] {
        let mut out = Vec::new();
        let canonical = Canonicalizer::new(profile)
            .canonicalize_into(input, &mut out)
            .unwrap_or_else(|r| panic!("{} rejected: {r}", profile.name()));
        let p = canonical.parts;
        assert!(p.is_consistent(&out), "{}", show(&out));
        assert_eq!(p.scheme(&out), Some(&b"https"[..]));
        assert_eq!(p.username(&out), Some(user.as_bytes()));
        assert_eq!(p.password(&out), Some(pass.as_bytes()));
        assert_eq!(
            p.host(&out),
            Some(&b"[::1]"[..]),
            "IPv6 host with its brackets"
        );
        assert_eq!(p.port(), Some(8443));
        assert_eq!(p.path(&out), path.as_bytes());
        assert_eq!(p.query(&out), Some(query.as_bytes()));
        assert_eq!(p.fragment(&out), Some(frag.as_bytes()));
        assert!(p.special && !p.opaque_path);
        let href = format!("https://{user}:{pass}@[::1]:8443{path}?{query}#{frag}");
        assert_eq!(out, href.as_bytes());
        assert!(!canonical.unchanged);
    }
    check_oracle(input, Some("https://us%65r:p%77@[::1]:8443/p/%7e?%71#%66"));

    // Null and empty components.
    let mut out = Vec::new();
    let p = Canonicalizer::new(Profile::Whatwg)
        .canonicalize_into(b"mailto:x", &mut out)
        .expect("mailto:x")
        .parts;
    assert_eq!(out, b"mailto:x");
    assert_eq!(
        (p.host(&out), p.username(&out), p.port()),
        (None, None, None)
    );
    assert_eq!((p.query(&out), p.fragment(&out)), (None, None));
    assert_eq!(p.path(&out), b"x");
    assert!(p.opaque_path && !p.special);
    out.clear();
    let p = Canonicalizer::new(Profile::Whatwg)
        .canonicalize_into(b"http://h?#", &mut out)
        .expect("http://h?#")
        .parts;
    assert_eq!(out, b"http://h/?#");
    assert_eq!(
        (p.query(&out), p.fragment(&out)),
        (Some(&b""[..]), Some(&b""[..]))
    );
    assert_eq!(p.username(&out), Some(&b""[..]));
}

fn expect_reject(input: &[u8], reason: Reason) -> Reject {
    let mut out = b"keep".to_vec();
    let r = Canonicalizer::new(Profile::Rfc3986).canonicalize_into(input, &mut out);
    assert_eq!(out, b"keep", "{}: a rejection appends nothing", show(input));
    match r {
        Err(reject) => {
            assert_eq!(reject.reason, reason, "{}", show(input));
            assert!(
                reject.offset <= input.len(),
                "{}: offset {}",
                show(input),
                reject.offset
            );
            reject
        }
        Ok(_) => panic!("{}: expected {reason:?}, got {}", show(input), show(&out)),
    }
}

#[test]
fn rejections() {
    // Forbidden host code point in an opaque host; the offset is the byte's
    // position in the input as given (before trimming and tab removal).
    for (input, at) in [
        (&b"foo://a<b/"[..], 7),
        (b"  foo://a<b/", 9),
        (b"foo://a\tb<c/", 9),
    ] {
        check_oracle(input, None);
        let r = expect_reject(input, Reason::ForbiddenHostCodePoint(b'<'));
        assert_eq!(r.offset, at, "{}", show(input));
    }
    // In a special URL the same byte is a forbidden domain code point in the
    // URL Standard's terms; either reason names the byte and its position.
    let mut out = Vec::new();
    let r = Canonicalizer::new(Profile::Whatwg)
        .canonicalize_into(b"http://a<b/", &mut out)
        .expect_err("http://a<b/");
    assert!(
        matches!(
            r.reason,
            Reason::ForbiddenHostCodePoint(b'<') | Reason::ForbiddenDomainCodePoint(b'<')
        ),
        "{r:?}"
    );
    assert_eq!(r.offset, 8);
    // After percent-decoding it can only be a domain code point.
    check_oracle(b"http://a%3Cb/", None);
    let r = expect_reject(b"http://a%3Cb/", Reason::ForbiddenDomainCodePoint(b'<'));
    assert!(
        (8..=10).contains(&r.offset),
        "offset {} not at the escape",
        r.offset
    );

    for (input, reason) in [
        (&b"http://a:99999/"[..], Reason::PortOutOfRange),
        (b"http://a:65536/", Reason::PortOutOfRange),
        (b"http://a:8x/", Reason::InvalidPort),
        (b"http://[::1/", Reason::UnclosedIpv6),
        (b"http://[::1::]/", Reason::InvalidIpv6),
        (b"http://1.2.3.256/", Reason::InvalidIpv4),
        (b"http://", Reason::HostMissing),
        (b"http://user@/", Reason::HostMissing),
        (b"http://:80/", Reason::HostMissing),
        (b"/x", Reason::MissingScheme),
        (b"x", Reason::MissingScheme),
    ] {
        check_oracle(input, None);
        expect_reject(input, reason);
    }
    // 65535 is the largest port.
    assert_eq!(
        canon(Profile::Whatwg, b"http://a:65535/").as_deref(),
        Ok(&b"http://a:65535/"[..])
    );
}

#[test]
fn input_length_limit() {
    let mut c = Canonicalizer::new(Profile::Whatwg);
    c.set_max_input_len(10);
    let mut out = Vec::new();
    assert_eq!(
        c.canonicalize_into(b"http://a/b", &mut out).map(|_| ()),
        Ok(()),
        "exactly the limit is accepted"
    );
    assert_eq!(out, b"http://a/b");
    let r = c
        .canonicalize_into(b"http://a/bc", &mut out)
        .expect_err("over the limit");
    assert_eq!(r.reason, Reason::InputTooLong);
    assert_eq!(out, b"http://a/b", "nothing appended on rejection");
    // Long inputs within the default limit are fine.
    let long = format!("http://a/{}", "x".repeat(10_000));
    assert_eq!(
        canon(Profile::Whatwg, long.as_bytes()).as_deref(),
        Ok(long.as_bytes())
    );
}

#[test]
fn base_parse() {
    let base = Base::parse(b"HTTP://H:8080/a/b?q#f").expect("base");
    assert_eq!(base.as_bytes(), b"http://h:8080/a/b?q#f");
    assert_eq!(base.parts().host(base.as_bytes()), Some(&b"h"[..]));
    assert_eq!(
        Base::parse(b"/relative").unwrap_err().reason,
        Reason::InvalidBase
    );
    assert_eq!(Base::parse(b"").unwrap_err().reason, Reason::InvalidBase);
    assert!(Base::parse(b"http://[::1/").is_err());

    // A base with an opaque path takes only a fragment.
    let mut c = Canonicalizer::new(Profile::Whatwg).with_base(Base::parse(b"mailto:x").unwrap());
    let mut out = Vec::new();
    c.canonicalize_into(b"#frag", &mut out).expect("#frag");
    assert_eq!(out, b"mailto:x#frag");
    let r = c.canonicalize_into(b"foo", &mut out).expect_err("foo");
    assert_eq!(r.reason, Reason::OpaqueBase);
}

/// One base, reused for many references, in both profiles; checked twice in
/// a row so that no state leaks from one call to the next.
#[test]
fn resolution_against_a_reused_base() {
    const BASE: &str = "http://h:8080/a/b?q#f";
    let cases: &[(&str, &str)] = &[
        ("//host/p", "http://host/p"),
        ("../x", "http://h:8080/x"),
        ("?q2", "http://h:8080/a/b?q2"),
        ("#g", "http://h:8080/a/b?q#g"),
        ("", "http://h:8080/a/b?q"),
        ("c", "http://h:8080/a/c"),
        ("/r", "http://h:8080/r"),
        ("https://o/", "https://o/"),
        ("http:x", "http://h:8080/a/x"),
        ("\\\\x\\y", "http://x/y"),
        ("./%7e/../.", "http://h:8080/a/"),
        ("%7e?%7e#%7e", "http://h:8080/a/%7e?%7e#%7e"),
    ];
    let oracle = url::Url::parse(BASE).unwrap();
    for (input, want) in cases {
        let joined = oracle.join(input).map(String::from);
        assert_eq!(
            joined.as_deref(),
            Ok(*want),
            "expectation for {input:?} (url crate)"
        );
    }
    let base = Base::parse(BASE.as_bytes()).unwrap();
    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let mut c = Canonicalizer::new(profile).with_base(base.clone());
        let mut out = Vec::new();
        for round in 0..2 {
            for (input, want) in cases {
                // rfc3986 decodes the escaped "~".
                let want = if profile == Profile::Rfc3986 {
                    want.replace("%7e", "~")
                } else {
                    want.to_string()
                };
                out.clear();
                match c.canonicalize_into(input.as_bytes(), &mut out) {
                    Ok(canonical) => {
                        assert_eq!(
                            show(&out),
                            show(want.as_bytes()),
                            "{input:?} ({}, round {round})",
                            profile.name()
                        );
                        assert!(canonical.parts.is_consistent(&out));
                    }
                    Err(r) => panic!("{input:?} ({}): rejected ({r})", profile.name()),
                }
            }
        }
        // The port of the base carries over only with its host.
        out.clear();
        let p = c.canonicalize_into(b"../x", &mut out).unwrap().parts;
        assert_eq!(p.port(), Some(8080));
        out.clear();
        let p = c.canonicalize_into(b"//host/p", &mut out).unwrap().parts;
        assert_eq!((p.host(&out), p.port()), (Some(&b"host"[..]), None));
    }
}

#[test]
fn path_only_targets() {
    let cases: &[(&[u8], &[u8], &[u8])] = &[
        // input, whatwg, rfc3986
        (b"/a/./b/../c?x", b"/a/c?x", b"/a/c?x"),
        (b"/a\\b", b"/a/b", b"/a/b"),
        (b"/../a", b"/a", b"/a"),
        (
            b"/a b?c d#e f",
            b"/a%20b?c%20d#e%20f",
            b"/a%20b?c%20d#e%20f",
        ),
        // The special-query percent-encode set (http rules) includes "'".
        (b"/a?'", b"/a?%27", b"/a?%27"),
        (b"/%7e?%6b#%2f", b"/%7e?%6b#%2f", b"/~?k#%2F"),
        (b"/\xff?\xfe", b"/%FF?%FE", b"/%FF?%FE"),
        (b"/", b"/", b"/"),
    ];
    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        let mut c = Canonicalizer::new(profile);
        for &(input, whatwg, rfc) in cases {
            let want = if profile == Profile::Whatwg {
                whatwg
            } else {
                rfc
            };
            let mut out = Vec::new();
            let canonical = c
                .canonicalize_target(input, &mut out)
                .unwrap_or_else(|r| panic!("{} ({}): rejected ({r})", show(input), profile.name()));
            assert_eq!(
                show(&out),
                show(want),
                "{} ({})",
                show(input),
                profile.name()
            );
            let p = canonical.parts;
            assert!(p.is_consistent(&out), "{}", show(input));
            assert_eq!(
                (p.scheme(&out), p.host(&out)),
                (None, None),
                "path-only output"
            );
            assert_eq!(p.path_start, 0);
            let path_end = want
                .iter()
                .position(|&b| b == b'?' || b == b'#')
                .unwrap_or(want.len());
            assert_eq!(p.path(&out), &want[..path_end]);
            assert_eq!(canonical.unchanged, want == input);
        }
        // The same inputs through canonicalize_into need a base.
        let mut out = Vec::new();
        assert_eq!(
            c.canonicalize_into(b"/a", &mut out).unwrap_err().reason,
            Reason::MissingScheme
        );
        // A target that is not origin-form is a URL like any other.
        c.canonicalize_target(b"HTTP://H/a/../b", &mut out)
            .expect("absolute form");
        assert_eq!(out, b"http://h/b");
        out.clear();
        assert_eq!(
            c.canonicalize_target(b"a/b", &mut out).unwrap_err().reason,
            Reason::MissingScheme
        );
        // With a base, targets resolve against it.
        let mut c = Canonicalizer::new(profile).with_base(Base::parse(b"https://h/base/").unwrap());
        c.canonicalize_target(b"/x/./y", &mut out)
            .expect("with base");
        assert_eq!(out, b"https://h/x/y");
    }
}

#[test]
fn bytes_that_are_not_utf8() {
    // Every byte >= 0x80 in userinfo, path, query and fragment is
    // percent-encoded as itself; for valid UTF-8 that is the URL Standard.
    let cases: &[(&[u8], &[u8])] = &[
        (b"http://a/\xff?\xfe#\xfd", b"http://a/%FF?%FE#%FD"),
        (b"http://\xff:\xfe@a/", b"http://%FF:%FE@a/"),
        (b"http://a/\xc3", b"http://a/%C3"),
        (b"http://a/\xed\xa0\x80", b"http://a/%ED%A0%80"),
        (b"http://a/\xc3\xa9\xff", b"http://a/%C3%A9%FF"),
        (b"mailto:\xff", b"mailto:%FF"),
        (b"foo://h/\x80", b"foo://h/%80"),
    ];
    for profile in [Profile::Whatwg, Profile::Rfc3986] {
        for &(input, want) in cases {
            let got = canon(profile, input)
                .unwrap_or_else(|r| panic!("{} ({}): rejected ({r})", show(input), profile.name()));
            assert_eq!(
                show(&got),
                show(want),
                "{} ({})",
                show(input),
                profile.name()
            );
        }
    }
    // A host that is not UTF-8, raw or after percent-decoding, is rejected.
    for input in [
        &b"http://\xff/"[..],
        b"http://a\xffb.com/",
        b"foo://\xff/",
        b"http://%ff/",
        b"http://a%c3/",
    ] {
        expect_reject(input, Reason::InvalidUtf8Host);
    }
}
