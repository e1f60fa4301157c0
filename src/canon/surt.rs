//! SURT and SSURT: spellings of a canonical URL that sort by host.
//!
//! Web archives keep their indexes sorted, and want every capture of a site
//! next to each other. Sorting plain URLs does not do that: `http://a.example`
//! and `https://a.example` are far apart, and `mail.example.org` sorts under
//! `m` instead of under `org`. A SURT ("Sort-friendly URI Reordering
//! Transform", from the Heritrix crawler) fixes that by writing the host's
//! labels backwards, joined by commas, so that a sorted list reads like a
//! domain tree:
//!
//! ```text
//! http://user:pass@foo.example.org:81/path?query#frag
//!
//! Cdx                          org,example,foo:81)/path?query#frag
//! Classic                      http://(org,example,foo,:81)/path?query#frag
//! ClassicWithoutScheme         org,example,foo,:81)/path?query#frag
//! ClassicWithoutTrailingComma  http://(org,example,foo:81)/path?query#frag
//! SSURT                        org,example,foo,//81:http@user:pass:/path?query#frag
//! ```
//!
//! - The **CDX** form is the key of the Internet Archive's CDX indexes and of
//!   the Wayback Machine (internetarchive/surt, a port of webarchive-commons'
//!   `WaybackURLKeyMaker`). The IA also lower-cases, strips `www`, sorts the
//!   query and more before writing it; those steps are canonicalization rules
//!   of their own, not part of the spelling, and are not done here.
//! - The **classic** forms are Heritrix's, as iipc/urlcanon writes them
//!   (`ParsedUrl.surt` in `python/urlcanon/parse.py` and its Java port). The
//!   trailing comma ends the host, so that the prefix `http://(org,example,`
//!   matches `example.org` and its subdomains but not `example.organic`.
//! - **SSURT** (iipc/urlcanon, `ssurt.rst`) puts everything that is not the
//!   path *after* the host, so that one prefix can select a host regardless of
//!   scheme, port and user: it "transforms
//!   `scheme://userinfo@domain.tld:port/path?query#fragment` into
//!   `tld,domain,//port:scheme@userinfo:/path?query#fragment`". Like urlcanon's
//!   code and test data, a URL without a port has no `port:` at all
//!   (`org,example,//http:/`), and one without userinfo has no `@`. It
//!   drops nothing, so it can be turned back into the URL.
//!
//! The classic and CDX forms drop the userinfo: a SURT names a resource, and
//! credentials are not part of its name.
//!
//! Host labels are reversed by [`reverse_host`], which also turns a comma
//! inside a label into a dot, so that commas only ever separate labels. IP
//! addresses are not names and have no hierarchy to reverse: [`ssurt_host`]
//! (used by every form) keeps IPv4 addresses, IPv6 addresses in brackets and
//! hosts that read as IPv4 numbers (`0x80`) as they are, as urlcanon does.
//! internetarchive/surt reverses IPv4 octets by default (`reverse_ipaddr`);
//! that is not done here.
//!
//! A URL with no host (`mailto:x`, `dns:archive.org`, `filedesc:foo.arc.gz`,
//! `screenshot:http://example.com/`) has nothing to reorder and is written
//! unchanged in every form, and so is path-only output (`/a?b`, from
//! [`Canonicalizer::canonicalize_target`](crate::Canonicalizer::canonicalize_target)).
//! The SURT forms also write a URL with an empty host (`file:///tmp/x`)
//! unchanged, as urlcanon does for the classic form; the SSURT keeps the
//! empty host and its `//`, as its grammar has it (`//file:/tmp/x`).
//!
//! Input is a URL that is already canonical plus its [`Parts`]. Each function
//! appends to `out`, reserving once, and allocates nothing else.

use crate::ascii;
use crate::url::host::is_ipv4;
use crate::url::parts::Parts;

/// Which SURT spelling [`surt`] writes (see the module docs for examples).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SurtForm {
    /// The CDX / Wayback index key: no scheme, the host's labels reversed and
    /// joined by `,` with no trailing comma, then `:port` when there is one,
    /// then `)`, then path, query and fragment as they are; userinfo dropped.
    /// `http://www.archive.org/goo/?a=1` → `org,archive,www)/goo/?a=1`
    /// (removing `www` and the other IA rewrites are other rules' job).
    #[default]
    #[cfg_attr(
        feature = "cli",
        value(
            name = "cdx",
            help = "`com,example)/path?query`: no scheme, no trailing comma (Wayback CDX)"
        )
    )]
    Cdx,
    /// Heritrix's SURT: `http://(org,example,foo,:81)/path?query#frag`, with
    /// the scheme, a trailing comma after the reversed host, no userinfo.
    #[cfg_attr(
        feature = "cli",
        value(name = "classic", help = "`http://(com,example,)/path?query`")
    )]
    Classic,
    /// `Classic` without the scheme: `org,example,foo,:81)/path?query#frag`.
    #[cfg_attr(feature = "cli", value(skip))]
    ClassicWithoutScheme,
    /// `Classic` without the trailing comma: `http://(org,example,foo:81)/path?query#frag`.
    #[cfg_attr(feature = "cli", value(skip))]
    ClassicWithoutTrailingComma,
}

/// Appends the SURT of `url` in `form` to `out`.
///
/// `url` is a canonical URL and `parts` its offsets, as
/// [`Canonicalizer::canonicalize_into`](crate::Canonicalizer::canonicalize_into)
/// returns them. A URL without a host, or with an empty one, is appended
/// unchanged.
///
/// ```
/// use canonurl::canon::surt::{surt, SurtForm};
/// use canonurl::{Canonicalizer, Profile};
///
/// let mut url = Vec::new();
/// let c = Canonicalizer::new(Profile::Whatwg)
///     .canonicalize_into(b"http://user@www.Archive.org:8080/goo/?a=1", &mut url)
///     .unwrap();
/// let mut out = Vec::new();
/// surt(&url, &c.parts, SurtForm::Cdx, &mut out);
/// assert_eq!(out, b"org,archive,www:8080)/goo/?a=1");
/// out.clear();
/// surt(&url, &c.parts, SurtForm::Classic, &mut out);
/// assert_eq!(out, b"http://(org,archive,www,:8080)/goo/?a=1");
/// ```
pub fn surt(url: &[u8], parts: &Parts, form: SurtForm, out: &mut Vec<u8>) {
    debug_assert!(parts.is_consistent(url));
    let (Some(scheme), Some(host)) = (parts.scheme(url), parts.host(url)) else {
        out.extend_from_slice(url);
        return;
    };
    if host.is_empty() {
        out.extend_from_slice(url);
        return;
    }
    let (with_scheme, trailing_comma) = match form {
        SurtForm::Cdx => (false, false),
        SurtForm::Classic => (true, true),
        SurtForm::ClassicWithoutScheme => (false, true),
        SurtForm::ClassicWithoutTrailingComma => (true, false),
    };
    // The output has the URL's bytes minus some, plus `(`, `,` and `)`.
    out.reserve(url.len() + 3);
    if with_scheme {
        out.extend_from_slice(scheme);
        // A URL with a host is always serialized with `//`.
        out.extend_from_slice(b"://(");
    }
    push_host(host, trailing_comma, out);
    if let Some(port) = parts.port() {
        out.push(b':');
        ascii::push_decimal(out, port.into());
    }
    out.push(b')');
    out.extend_from_slice(&url[parts.path_start as usize..]);
}

/// Appends the SSURT of `url` to `out`:
/// `host,//port:scheme@user:pass:/path?query#frag`, where `port:` is left out
/// when there is no port and `@user:pass` when there is no userinfo.
///
/// A URL without a host is appended unchanged.
///
/// ```
/// use canonurl::canon::surt::ssurt;
/// use canonurl::{Canonicalizer, Profile};
///
/// let mut url = Vec::new();
/// let c = Canonicalizer::new(Profile::Whatwg)
///     .canonicalize_into(b"http://user:pass@foo.example.org:81/path?query#frag", &mut url)
///     .unwrap();
/// let mut out = Vec::new();
/// ssurt(&url, &c.parts, &mut out);
/// assert_eq!(out, b"org,example,foo,//81:http@user:pass:/path?query#frag");
/// ```
pub fn ssurt(url: &[u8], parts: &Parts, out: &mut Vec<u8>) {
    debug_assert!(parts.is_consistent(url));
    let (Some(scheme), Some(host)) = (parts.scheme(url), parts.host(url)) else {
        out.extend_from_slice(url);
        return;
    };
    // The same bytes as the URL, moved around, plus the host's trailing comma.
    out.reserve(url.len() + 1);
    push_host(host, true, out);
    out.extend_from_slice(b"//");
    if let Some(port) = parts.port() {
        ascii::push_decimal(out, port.into());
        out.push(b':');
    }
    out.extend_from_slice(scheme);
    // The serializer writes `@` when username or password is non-empty, and
    // `:password` only when the password is.
    let username = parts.username(url).unwrap_or_default();
    let password = parts.password(url).unwrap_or_default();
    if !username.is_empty() || !password.is_empty() {
        out.push(b'@');
        out.extend_from_slice(username);
        if !password.is_empty() {
            out.push(b':');
            out.extend_from_slice(password);
        }
    }
    out.push(b':');
    out.extend_from_slice(&url[parts.path_start as usize..]);
}

/// Appends `host` with its labels (split on `.`) in reverse order, each
/// followed by `,`; a `,` inside a label becomes `.`.
///
/// Every `.` makes a label, empty ones included, so a trailing dot (the DNS
/// root) gives a leading comma and the empty host gives just `,`.
///
/// ```
/// use canonurl::canon::surt::reverse_host;
///
/// let mut out = Vec::new();
/// reverse_host(b"a,b.y.z.", &mut out);
/// assert_eq!(out, b",z,y,a.b,");
/// ```
pub fn reverse_host(host: &[u8], out: &mut Vec<u8>) {
    out.reserve(host.len() + 1);
    push_reversed(host, true, out);
}

/// Appends `host` as the SSURT writes it: like [`reverse_host`], except that
/// an IP address is appended unchanged, as is the empty host.
///
/// An IP address is an IPv6 address in brackets or anything the URL
/// Standard's IPv4 parser accepts: one to four dot-separated decimal, octal
/// (`0` prefix) or hex (`0x` prefix) numbers in range, such as `1.2.3.4`,
/// `0x80` or `10.1`.
///
/// ```
/// use canonurl::canon::surt::ssurt_host;
///
/// let mut out = Vec::new();
/// ssurt_host(b"x.y.z", &mut out);
/// ssurt_host(b"10.1.2.3", &mut out);
/// assert_eq!(out, b"z,y,x,10.1.2.3");
/// ```
pub fn ssurt_host(host: &[u8], out: &mut Vec<u8>) {
    out.reserve(host.len() + 1);
    push_host(host, true, out);
}

/// [`ssurt_host`] with the trailing comma optional (the CDX form has none).
fn push_host(host: &[u8], trailing_comma: bool, out: &mut Vec<u8>) {
    if host.is_empty() || host[0] == b'[' || is_ipv4(host) {
        out.extend_from_slice(host);
    } else {
        push_reversed(host, trailing_comma, out);
    }
}

fn push_reversed(host: &[u8], trailing_comma: bool, out: &mut Vec<u8>) {
    let mut end = host.len();
    while let Some(dot) = memchr::memrchr(b'.', &host[..end]) {
        push_label(&host[dot + 1..end], out);
        out.push(b',');
        end = dot;
    }
    push_label(&host[..end], out);
    if trailing_comma {
        out.push(b',');
    }
}

/// Appends a label with `,` written as `.`, so that `,` stays a separator.
fn push_label(label: &[u8], out: &mut Vec<u8>) {
    if memchr::memchr(b',', label).is_none() {
        out.extend_from_slice(label);
    } else {
        out.extend(label.iter().map(|&b| if b == b',' { b'.' } else { b }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Canonicalizer, Profile};

    fn host_fn(f: fn(&[u8], &mut Vec<u8>), host: &str) -> String {
        let mut out = Vec::new();
        f(host.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Canonicalizes `input` (WHATWG) and returns each form's output, in the
    /// order Cdx, Classic, ClassicWithoutScheme, ClassicWithoutTrailingComma, SSURT.
    fn forms(input: &str) -> [String; 5] {
        let mut url = Vec::new();
        let parts = Canonicalizer::new(Profile::Whatwg)
            .canonicalize_into(input.as_bytes(), &mut url)
            .unwrap_or_else(|r| panic!("{input:?}: {r}"))
            .parts;
        forms_of(&url, &parts)
    }

    fn forms_of(url: &[u8], parts: &Parts) -> [String; 5] {
        let one = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut out = Vec::new();
            f(&mut out);
            String::from_utf8(out).unwrap()
        };
        [
            one(&|o| surt(url, parts, SurtForm::Cdx, o)),
            one(&|o| surt(url, parts, SurtForm::Classic, o)),
            one(&|o| surt(url, parts, SurtForm::ClassicWithoutScheme, o)),
            one(&|o| surt(url, parts, SurtForm::ClassicWithoutTrailingComma, o)),
            one(&|o| ssurt(url, parts, o)),
        ]
    }

    #[test]
    fn reverse_host_labels() {
        for (host, want) in [
            ("", ","),
            ("x", "x,"),
            ("x.y.z", "z,y,x,"),
            ("x.y.z.", ",z,y,x,"),
            ("a,b.y.z.", ",z,y,a.b,"),
            (".", ",,"),
            ("a..b", "b,,a,"),
            (",", ".,"),
            // No IP special case here.
            ("1.2.3.4", "4,3,2,1,"),
        ] {
            assert_eq!(host_fn(reverse_host, host), want, "{host:?}");
        }
    }

    #[test]
    fn ssurt_host_keeps_addresses() {
        for host in [
            "",
            "1.2.3.4",
            "1.2.3.4.",
            "0x80",
            "0X80",
            "0x",
            "0",
            "0.0.0.0",
            "255.255.255.255",
            "10.1",
            "1.65535",
            "1.2.65535",
            "0377.0xff.255.0",
            "4294967295",
            "[::1]",
            "[2001:db8::1]",
        ] {
            assert_eq!(host_fn(ssurt_host, host), host, "{host:?}");
        }
        for (host, want) in [
            ("x.y.z", "z,y,x,"),
            ("1.2.3.4.5", "5,4,3,2,1,"),
            ("256.1.1.1", "1,1,1,256,"),
            ("1.2.3.256", "256,3,2,1,"),
            ("1.2.65536", "65536,2,1,"),
            ("4294967296", "4294967296,"),
            ("99999999999999999999999", "99999999999999999999999,"),
            ("08", "08,"),
            ("0xg", "0xg,"),
            ("1..2", "2,,1,"),
            (".", ",,"),
            ("1.2.3.4..", ",,4,3,2,1,"),
            ("example.123", "123,example,"),
            ("a,b.c", "c,a.b,"),
        ] {
            assert_eq!(host_fn(ssurt_host, host), want, "{host:?}");
        }
    }

    #[test]
    fn all_forms() {
        assert_eq!(
            forms("http://user:pass@foo.example.org:81/path?query#frag"),
            [
                "org,example,foo:81)/path?query#frag",
                "http://(org,example,foo,:81)/path?query#frag",
                "org,example,foo,:81)/path?query#frag",
                "http://(org,example,foo:81)/path?query#frag",
                "org,example,foo,//81:http@user:pass:/path?query#frag",
            ]
        );
        assert_eq!(
            forms("https://www.Archive.org/goo/?a=1"),
            [
                "org,archive,www)/goo/?a=1",
                "https://(org,archive,www,)/goo/?a=1",
                "org,archive,www,)/goo/?a=1",
                "https://(org,archive,www)/goo/?a=1",
                "org,archive,www,//https:/goo/?a=1",
            ]
        );
    }

    #[test]
    fn userinfo_in_ssurt_only() {
        let [cdx, classic, .., ss] = forms("http://user@h.example/");
        assert_eq!(cdx, "example,h)/");
        assert_eq!(classic, "http://(example,h,)/");
        assert_eq!(ss, "example,h,//http@user:/");
        // The serializer keeps `:pass` after an empty username.
        assert_eq!(
            forms("http://:pass@h.example/")[4],
            "example,h,//http@:pass:/"
        );
        // ... and drops an empty password.
        assert_eq!(
            forms("http://user:@h.example/")[4],
            "example,h,//http@user:/"
        );
    }

    #[test]
    fn default_port_is_absent() {
        assert_eq!(forms("http://h.example:80/")[0], "example,h)/");
        assert_eq!(forms("https://h.example:80/")[0], "example,h:80)/");
        assert_eq!(forms("https://h.example:80/")[4], "example,h,//80:https:/");
    }

    #[test]
    fn ip_hosts_not_reversed() {
        assert_eq!(
            forms("http://user:pass@10.1.2.3:81#frag"),
            [
                "10.1.2.3:81)/#frag",
                "http://(10.1.2.3:81)/#frag",
                "10.1.2.3:81)/#frag",
                "http://(10.1.2.3:81)/#frag",
                "10.1.2.3//81:http@user:pass:/#frag",
            ]
        );
        // The URL Standard writes the address in dotted decimal first.
        assert_eq!(forms("http://0x7f.1/")[1], "http://(127.0.0.1)/");
        assert_eq!(
            forms("http://[0:0::1]:8080/x")[..2],
            ["[::1]:8080)/x", "http://([::1]:8080)/x"]
        );
        assert_eq!(forms("http://[::1]/x")[4], "[::1]//http:/x");
        // A non-special scheme keeps an opaque host as it is; one that reads
        // as a number is not reversed either.
        assert_eq!(forms("foo://0x80/")[1], "foo://(0x80)/");
    }

    #[test]
    fn cdx_of_defaultiasurt_cases_that_need_no_other_rule() {
        // From urlcanon's surt.json `defaultIASurt` (internetarchive/surt's
        // tests): cases where IA canonicalization changes nothing.
        assert_eq!(forms("http://archive.org/")[0], "org,archive)/");
        assert_eq!(
            forms("whois://whois.isoc.org.il/shaveh.co.il")[0],
            "il,org,isoc,whois)/shaveh.co.il"
        );
        for input in [
            "dns:alexa.com",
            "filedesc:foo.arc.gz",
            "warcinfo:foo.warc.gz",
        ] {
            assert_eq!(forms(input)[0], input);
        }
    }

    #[test]
    fn no_host_is_unchanged() {
        for input in [
            "mailto:foo@example.com",
            "dns:archive.org",
            "screenshot:http://example.com/",
            "filedesc:/foo.arc.gz",
            "data:,x",
            "foo:/a/b?q#f",
        ] {
            for got in forms(input) {
                assert_eq!(got, input);
            }
        }
    }

    #[test]
    fn empty_host() {
        let [cdx, classic, without_scheme, without_comma, ss] = forms("file:///tmp/x?q#f");
        for got in [cdx, classic, without_scheme, without_comma] {
            assert_eq!(got, "file:///tmp/x?q#f");
        }
        assert_eq!(ss, "//file:/tmp/x?q#f");
        assert_eq!(forms("foo:///x")[4], "//foo:/x");
    }

    #[test]
    fn non_special_empty_path() {
        // urlcanon's empty-path output, which WHATWG keeps for non-special schemes.
        assert_eq!(
            forms("scheme://user:pass@foo.example.org:81?query"),
            [
                "org,example,foo:81)?query",
                "scheme://(org,example,foo,:81)?query",
                "org,example,foo,:81)?query",
                "scheme://(org,example,foo:81)?query",
                "org,example,foo,//81:scheme@user:pass:?query",
            ]
        );
    }

    #[test]
    fn trailing_dot_and_comma_in_host() {
        assert_eq!(
            forms("http://a,b.example.com./")[..2],
            [",com,example,a.b)/", "http://(,com,example,a.b,)/"]
        );
    }

    #[test]
    fn path_only_is_unchanged() {
        let mut url = Vec::new();
        let parts = Canonicalizer::new(Profile::Whatwg)
            .canonicalize_target(b"/a/./b?c", &mut url)
            .unwrap()
            .parts;
        assert_eq!(url, b"/a/b?c");
        for got in forms_of(&url, &parts) {
            assert_eq!(got, "/a/b?c");
        }
    }

    #[test]
    fn appends_and_reserves_once() {
        let mut url = Vec::new();
        let parts = Canonicalizer::new(Profile::Whatwg)
            .canonicalize_into(b"http://u:p@a,b.c.example:65535/p?q#f", &mut url)
            .unwrap()
            .parts;
        for form in [
            SurtForm::Cdx,
            SurtForm::Classic,
            SurtForm::ClassicWithoutScheme,
            SurtForm::ClassicWithoutTrailingComma,
        ] {
            let mut out = Vec::with_capacity(2 + url.len() + 3);
            out.extend_from_slice(b"> ");
            let buf = out.as_ptr();
            surt(&url, &parts, form, &mut out);
            assert!(out.starts_with(b"> "), "{form:?}");
            assert_eq!(
                out.as_ptr(),
                buf,
                "{form:?} grew a buffer that was large enough"
            );
        }
        let mut out = Vec::with_capacity(2 + url.len() + 1);
        out.extend_from_slice(b"> ");
        let buf = out.as_ptr();
        ssurt(&url, &parts, &mut out);
        assert_eq!(out, b"> example,c,a.b,//65535:http@u:p:/p?q#f".as_slice());
        assert_eq!(out.as_ptr(), buf);
    }
}
