//! The host rules: `ipv4-mapped`, `host-trailing-dot` and `www`, in that
//! order (an IPv6 host has no dot or `www`; a trailing dot goes before the
//! Public Suffix List is asked about what remains).

use super::apply::{InPlace, Scratch};
use super::psl;
use super::{Config, Rule, RuleMask};
use crate::url::host::{ends_in_a_number, parse_ipv6, write_ipv4};

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
#[inline]
fn www_len(h: &[u8]) -> usize {
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
    // Byte by byte: most hosts fail at the first test, and the others are
    // asked about once or twice per URL (`aggressive`, about 30 a URL less
    // on `kasztp.txt` than slices' `strip_prefix` and an iterator).
    if h.len() < 4 || h[0] != b'w' || h[1] != b'w' || h[2] != b'w' {
        return None;
    }
    let mut i = 3;
    while i < h.len() && h[i].is_ascii_digit() {
        i += 1;
    }
    if h.get(i) != Some(&b'.') {
        return None;
    }
    let rest = &h[i + 1..];
    // `www..example.com`: an empty label is not a registrable domain's start.
    if rest.first() == Some(&b'.') {
        return None;
    }
    // No domain when `rest` is a public suffix (or a single label such as
    // `localhost`): then `www` is the registrable part.
    psl::has_domain(rest.strip_suffix(b".").unwrap_or(rest)).then_some(rest)
}
