//! The host rules: `ipv4-mapped`, `host-trailing-dot` and `www`, in that
//! order (an IPv6 host has no dot or `www`; a trailing dot goes before the
//! Public Suffix List is asked about what remains).

use super::apply::{InPlace, Scratch};
use super::psl;
use super::{Config, Rule, RuleMask};
use crate::url::host::{ends_in_a_number, parse_ipv6, write_ipv4};

/// `www.` and `www` as little-endian words, to test four bytes at once.
const WWW_DOT: u32 = u32::from_le_bytes(*b"www.");
const WWW: u32 = WWW_DOT & 0x00FF_FFFF;
const WWW_DOT_WWW: u64 = WWW_DOT as u64 | (WWW as u64) << 32;

/// Runs the host rules of `cfg` on `url`'s host.
#[inline]
pub(crate) fn apply(cfg: &Config, url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let on = cfg.enabled;
    let (hs, he) = (url.parts.host_start, url.parts.host_end);
    let h = &url.url()[hs as usize..he as usize];
    let (Some(&first), Some(&last)) = (h.first(), h.last()) else {
        return;
    };
    if first == b'[' {
        if on.has(Rule::Ipv4Mapped) {
            ipv4_mapped(url, s, fired);
        }
        return;
    }
    if last == b'.' && on.has(Rule::HostTrailingDot) {
        trailing_dot(url, s, fired);
    }
    if first == b'w' && on.has(Rule::Www) {
        www(url, s, fired);
    }
}

/// `[::ffff:1.2.3.4]` → `1.2.3.4`: IPv4-mapped (`::ffff:0:0/96`, RFC 4291
/// §2.5.5.2) and NAT64 (`64:ff9b::/96`, RFC 6052 §2.1) addresses, whose last
/// 32 bits are the IPv4 address.
#[cold]
fn ipv4_mapped(url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (hs, he) = (url.parts.host_start, url.parts.host_end);
    let h = &url.url()[hs as usize..he as usize];
    let Ok(a) = parse_ipv6(&h[1..h.len() - 1]) else {
        return;
    };
    let mapped = a[..5] == [0; 5] && a[5] == 0xffff;
    let nat64 = a[0] == 0x64 && a[1] == 0xff9b && a[2..6] == [0; 4];
    if mapped || nat64 {
        let mut v4 = std::mem::take(&mut s.buf);
        v4.clear();
        write_ipv4(&mut v4, (a[6] as u32) << 16 | a[7] as u32);
        url.replace(s, hs, he, &v4);
        s.buf = v4;
        fired.insert(Rule::Ipv4Mapped);
    }
}

/// `example.com.` → `example.com`.
#[cold]
fn trailing_dot(url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (hs, he) = (url.parts.host_start, url.parts.host_end);
    let h = &url.url()[hs as usize..he as usize];
    let mut t = h;
    while t.len() > 1 && t[t.len() - 1] == b'.' {
        t = &t[..t.len() - 1];
    }
    // `foo.09..` is a domain, but `foo.09` ends in a number and would be
    // read as an (invalid) IPv4 address: such a host keeps its dots.
    if t.len() < h.len() && !ends_in_a_number(t) {
        let keep = hs + t.len() as u32;
        url.remove(s, keep, he);
        fired.insert(Rule::HostTrailingDot);
    }
}

/// Removes `www.`/`wwwN.` labels while what remains is a registrable
/// domain.
#[inline]
fn www(url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (hs, he) = (url.parts.host_start, url.parts.host_end);
    let removed = www_len(&url.url()[hs as usize..he as usize]);
    if removed > 0 {
        url.remove(s, hs, hs + removed as u32);
        fired.insert(Rule::Www);
    }
}

/// How many bytes at the start of the host `h` the `www` rule removes.
/// Out of line, with the common case told without a call: `www.` and a
/// name, not itself starting with `www`, that
/// `psl::surely_has_domain_in` answers from words read straight from `h`.
/// That case keeps to the registers a call may clobber, so it saves none,
/// and the fused rules, which save theirs around one call as they did
/// around `psl::has_domain`'s, carry none of its tests (kasztp
/// `aggressive`: see BENCHMARKS.md, issue 32, branches `www32`, `www33`).
/// Any other host (`wwwN.`, `www.www.`, a short or odd name, no `www` at
/// all): [`www_len_searched`], a tail call.
#[inline(never)]
fn www_len(h: &[u8]) -> usize {
    if let Some(first) = h.first_chunk::<8>() {
        // `www.` and a name not starting with `www` (which may lose a label
        // more: searched), in one test: the first seven bytes XOR `www.www`
        // shifted to the top (the eighth dropped) have their lowest set bit
        // in the name's three bytes (bits 40 to 63), not in `www.`'s four
        // (below 40), nor none at all (64).
        let x = (u64::from_le_bytes(*first) ^ WWW_DOT_WWW) << 8;
        if (40..64).contains(&x.trailing_zeros()) && psl::surely_has_domain_in(h, 4) {
            return 4;
        }
    }
    www_len_searched(h)
}

/// [`www_len`] label by label, each asked of `psl::has_domain`.
#[inline(never)]
fn www_len_searched(h: &[u8]) -> usize {
    let mut rest = h;
    while let Some(r) = strip_www(rest) {
        rest = r;
    }
    h.len() - rest.len()
}

/// For the fused rules (`fused.rs`): how many bytes at the start of the
/// domain `h` the host rules of `cfg` remove (`www`), or `None` when they
/// may change it otherwise (an IP literal, a trailing dot): [`apply`] then
/// runs them. The same decisions as [`apply`].
#[inline]
pub(crate) fn plan(cfg: &Config, h: &[u8], fired: &mut RuleMask) -> Option<usize> {
    let on = cfg.enabled;
    let (Some(&first), Some(&last)) = (h.first(), h.last()) else {
        return Some(0);
    };
    if (first == b'[' && on.has(Rule::Ipv4Mapped))
        || (last == b'.' && on.has(Rule::HostTrailingDot))
    {
        return None;
    }
    if first != b'w' || !on.has(Rule::Www) {
        return Some(0);
    }
    let removed = www_len(h);
    if removed > 0 {
        fired.insert(Rule::Www);
    }
    Some(removed)
}

/// `www.example.com` → `example.com`, `www12.example.com` → `example.com`,
/// only when what remains is still a registrable domain or below one: never
/// `www.co.uk` → `co.uk` (a public suffix) nor `www1355544.com` → `com`.
#[inline]
fn strip_www(h: &[u8]) -> Option<&[u8]> {
    let rest = after_www_label(h)?;
    // `www..example.com`: an empty label is not a registrable domain's start.
    if rest.first() == Some(&b'.') {
        return None;
    }
    // No domain when `rest` is a public suffix (or a single label such as
    // `localhost`): then `www` is the registrable part.
    psl::has_domain(rest.strip_suffix(b".").unwrap_or(rest)).then_some(rest)
}

/// What follows a first label `www` or `wwwN` (digits) of `h` and its dot.
#[inline(always)]
fn after_www_label(h: &[u8]) -> Option<&[u8]> {
    // The first four bytes at once: most hosts fail this test, and most
    // that pass it start with `www.` itself (no digits to skip).
    let first = u32::from_le_bytes(*h.first_chunk::<4>()?);
    if first == WWW_DOT {
        return Some(&h[4..]);
    }
    if first & 0x00FF_FFFF != WWW {
        return None;
    }
    // `www12.`: the digits, then the dot.
    let mut i = 3;
    while i < h.len() && h[i].is_ascii_digit() {
        i += 1;
    }
    if h.get(i) != Some(&b'.') {
        return None;
    }
    Some(&h[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::{psl, www_len};

    /// `www_len` as it was written before its four-byte test and its
    /// common case: a byte at a time, `www`, the digits, the dot, and
    /// `psl::has_domain`.
    fn www_len_bytewise(h: &[u8]) -> usize {
        let mut rest = h;
        loop {
            if rest.len() < 4 || rest[0] != b'w' || rest[1] != b'w' || rest[2] != b'w' {
                break;
            }
            let mut i = 3;
            while i < rest.len() && rest[i].is_ascii_digit() {
                i += 1;
            }
            if rest.get(i) != Some(&b'.') {
                break;
            }
            let r = &rest[i + 1..];
            if r.first() == Some(&b'.') || !psl::has_domain(r.strip_suffix(b".").unwrap_or(r)) {
                break;
            }
            rest = r;
        }
        h.len() - rest.len()
    }

    /// `www_len` (its four-byte test, its common case answered by
    /// `psl::surely_has_domain`) cuts what the byte-wise loop cut, on
    /// hand-made hosts around its edges and on the url-dataset lists' hosts.
    #[test]
    fn www_len_cuts_what_the_bytewise_test_cut() {
        let mut hosts: Vec<Vec<u8>> = [
            "www",
            "www.",
            "www1",
            "www1.",
            "www.com",
            "www.co.uk",
            "www1355544.com",
            "www..example.com",
            "www.example.com",
            "www.example.com.",
            "www12.example.co.uk",
            "www.www.example.com",
            "www.www1.www.a.b",
            "wwwexample.com",
            "ww.example.com",
            "www-1.example.com",
            "www.x",
            "www.localhost",
            "www.a..b",
            "www.wwwa.com",
            "www.ww.com",
            "www.w.com",
            "www.wwwwwwww.com",
            "www.www1.com",
            "wwx.example.com",
            "www-example.com",
            "www.example.com.ar",
        ]
        .iter()
        .map(|h| h.as_bytes().to_vec())
        .collect();
        let data =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/url-dataset");
        for f in ["kasztp", "userbait", "node_files", "isaacs_files"] {
            if let Ok(bytes) = std::fs::read(data.join(format!("{f}.txt"))) {
                for l in bytes.split(|&b| b == b'\n') {
                    let Some(a) = l.windows(3).position(|w| w == b"://") else {
                        continue;
                    };
                    let h = &l[a + 3..];
                    let end = h
                        .iter()
                        .position(|&b| b"/:?#".contains(&b))
                        .unwrap_or(h.len());
                    hosts.push(h[..end].to_ascii_lowercase());
                }
            }
        }
        // `www.`, `www1.` and `www.www.` before names of every length to
        // 40 with dots anywhere: the common case's edges (its words, its
        // first label's search, the trailing dot).
        for n in psl::dotted_names(40) {
            for www in [&b"www."[..], b"www1.", b"www.www."] {
                hosts.push([www, &n].concat());
            }
        }
        let mut cut = 0;
        for h in &hosts {
            let n = www_len(h);
            assert_eq!(n, www_len_bytewise(h), "{}", h.escape_ascii());
            cut += usize::from(n > 0);
        }
        // Some hosts lost their `www.` (or the test compared nothing).
        assert!(cut > 10, "{cut}");
    }
}
