//! Running the rules on one canonical URL.
//!
//! The URL is copied to scratch and written back component by component,
//! each rule deciding what of its component is written. The order is fixed
//! so that the result is a fixed point (running the rules again changes
//! nothing): scheme, userinfo, host (IPv4-mapped, trailing dot, then `www`
//! until none is left), port, path (session segments, `;jsessionid=`,
//! duplicate slashes, case, then index file and trailing slash until neither
//! changes anything), query (drop, `+` to `%20`, sort), fragment; then the
//! user's rewrites.
//!
//! Rules run only on `http`/`https` URLs and path-only request targets. Other
//! schemes (`mailto:`, `ftp:`, `data:`) mean something else by their parts:
//! only `fragment` applies to them.

// Components are short (tens of bytes): plain loops over them beat a call
// into memchr's dispatch, which costs more than the scan.
use regex::bytes::CaptureLocations;
use smallvec::SmallVec;

use super::{Config, Rule, RuleMask, RuleSet, SortQuery, TrailingSlash};
use crate::ascii;
use crate::url::host::{ends_in_a_number, parse_ipv6, write_ipv4};
use crate::url::parts::{Parts, ABSENT};

/// One kept query parameter, as offsets into `Scratch::query`.
#[derive(Clone, Copy, Debug)]
struct Param {
    start: u32,
    /// End of the name (the `=`, or `end` when there is none).
    name_end: u32,
    end: u32,
}

/// Buffers reused from URL to URL: after the first few URLs the rules
/// allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    url: Vec<u8>,
    query: Vec<u8>,
    /// Parameters; inline up to 32, and a spilled buffer is kept for reuse.
    params: SmallVec<[Param; 32]>,
    movable: SmallVec<[Param; 32]>,
    tail: Vec<u8>,
    tail2: Vec<u8>,
    /// The last host the `www` rule looked at, and how many bytes it
    /// removed: log lines of one site repeat their host, and the Public
    /// Suffix List lookup is the rule's cost.
    www_cache: (Vec<u8>, usize),
    /// Capture slots, one per rewrite rule of the rule set.
    locs: Vec<Option<CaptureLocations>>,
}

impl Scratch {
    /// The URL as it was before the rules, when the last [`apply`] fired a
    /// rule (meaningless otherwise): every path that changes the URL copies
    /// it here first.
    pub fn before_rules(&self) -> &[u8] {
        &self.url
    }
}

/// What [`apply`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// The rules that changed the URL.
    pub fired: RuleMask,
    /// A rewrite rule changed the URL: it must be parsed again (a rewrite may
    /// write anything) and `parts` is only valid up to the path.
    pub rewritten: bool,
}

fn is_web(scheme: Option<&[u8]>) -> bool {
    matches!(scheme, None | Some(b"http") | Some(b"https"))
}

/// Runs `set`'s rules on the canonical URL at `out[start..]`, whose
/// components `parts` gives, and updates `parts`.
pub fn apply(
    set: &RuleSet,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> Applied {
    let p = *parts;
    let cfg = set.for_host(p.host(&out[start..]));
    let on = cfg.enabled;
    let mut done = Applied::default();
    if on.is_empty() {
        return done;
    }
    if !is_web(p.scheme(&out[start..])) {
        if on.has(Rule::Fragment) && p.fragment_start != ABSENT {
            s.url.clear();
            s.url.extend_from_slice(&out[start..]);
            out.truncate(start + p.fragment_start as usize);
            parts.fragment_start = ABSENT;
            parts.len = (out.len() - start) as u32;
            done.fired.insert(Rule::Fragment);
        }
        return done;
    }

    let Scratch {
        url,
        query,
        params,
        movable,
        tail,
        tail2,
        www_cache,
        locs,
    } = s;
    url.clear();
    url.extend_from_slice(&out[start..]);
    let src: &[u8] = url;
    out.truncate(start);
    let rel = |out: &Vec<u8>| (out.len() - start) as u32;
    let mut np = Parts {
        special: p.special,
        opaque_path: p.opaque_path,
        ..Parts::default()
    };
    let fired = &mut done.fired;

    // Scheme.
    let mut now_http = false;
    if let Some(scheme) = p.scheme(src) {
        if on.has(Rule::HttpsAsHttp) && scheme == b"https" {
            out.extend_from_slice(b"http");
            fired.insert(Rule::HttpsAsHttp);
            now_http = true;
        } else {
            out.extend_from_slice(scheme);
        }
        np.scheme_end = rel(out);
        out.push(b':');
    }

    // Authority.
    if p.host_start != ABSENT {
        out.extend_from_slice(b"//");
        np.username_start = rel(out);
        let userinfo = &src[p.username_start as usize..p.host_start as usize];
        if !userinfo.is_empty() && on.has(Rule::Userinfo) {
            fired.insert(Rule::Userinfo);
            np.username_end = np.username_start;
            np.password_start = np.username_start;
            np.password_end = np.username_start;
        } else {
            let shift = |o: u32| o - p.username_start + np.username_start;
            np.username_end = shift(p.username_end);
            np.password_start = shift(p.password_start);
            np.password_end = shift(p.password_end);
            out.extend_from_slice(userinfo);
        }
        np.host_start = rel(out);
        host(
            cfg,
            &src[p.host_start as usize..p.host_end as usize],
            out,
            fired,
            www_cache,
        );
        np.host_end = rel(out);
        if p.port != ABSENT {
            if now_http && p.port == 80 {
                // `https://h:80/` is `http://h/` once the schemes are one.
            } else {
                out.extend_from_slice(&src[p.host_end as usize..p.path_start as usize]);
                np.port = p.port;
            }
        }
    }

    // Path.
    np.path_start = rel(out);
    path(cfg, p.path(src), out, fired);

    // Query.
    if let Some(q) = p.query(src) {
        let query_start = rel(out);
        if write_query(cfg, q, out, query, params, movable, fired) {
            np.query_start = query_start;
        }
    }

    // Fragment.
    if p.fragment_start != ABSENT {
        if on.has(Rule::Fragment) {
            fired.insert(Rule::Fragment);
        } else {
            np.fragment_start = rel(out);
            out.extend_from_slice(&src[p.fragment_start as usize..]);
        }
    }
    np.len = rel(out);

    // The user's rewrites, on everything from the path on.
    if on.has(Rule::Rewrite) && !cfg.rewrites.is_empty() {
        let from = start + np.path_start as usize;
        tail.clear();
        tail.extend_from_slice(&out[from..]);
        let mut changed = false;
        for r in &cfg.rewrites {
            if locs.len() <= r.slot {
                locs.resize_with(r.slot + 1, || None);
            }
            tail2.clear();
            if r.apply(tail, tail2, &mut locs[r.slot]) {
                std::mem::swap(tail, tail2);
                changed = true;
            }
        }
        if changed {
            out.truncate(from);
            out.extend_from_slice(tail);
            fired.insert(Rule::Rewrite);
            done.rewritten = true;
        }
    }
    *parts = np;
    if done.rewritten {
        parts.query_start = ABSENT;
        parts.fragment_start = ABSENT;
        parts.len = (out.len() - start) as u32;
    }
    done
}

/// Writes the host with the host rules applied.
fn host(
    cfg: &Config,
    mut h: &[u8],
    out: &mut Vec<u8>,
    fired: &mut RuleMask,
    www_cache: &mut (Vec<u8>, usize),
) {
    let on = cfg.enabled;
    if on.has(Rule::Ipv4Mapped) && h.len() > 2 && h[0] == b'[' {
        if let Ok(a) = parse_ipv6(&h[1..h.len() - 1]) {
            // ::ffff:0:0/96 (RFC 4291 §2.5.5.2) and 64:ff9b::/96 (RFC 6052 §2.1):
            // the last 32 bits are the IPv4 address.
            let mapped = a[..5] == [0; 5] && a[5] == 0xffff;
            let nat64 = a[0] == 0x64 && a[1] == 0xff9b && a[2..6] == [0; 4];
            if mapped || nat64 {
                write_ipv4(out, (a[6] as u32) << 16 | a[7] as u32);
                fired.insert(Rule::Ipv4Mapped);
                return;
            }
        }
    }
    if on.has(Rule::HostTrailingDot) && h.len() > 1 && h[h.len() - 1] == b'.' {
        let mut t = h;
        while t.len() > 1 && t[t.len() - 1] == b'.' {
            t = &t[..t.len() - 1];
        }
        // `foo.09..` is a domain, but `foo.09` ends in a number and would be
        // read as an (invalid) IPv4 address: such a host keeps its dots.
        if !ends_in_a_number(t) {
            h = t;
            fired.insert(Rule::HostTrailingDot);
        }
    }
    if on.has(Rule::Www) && h.starts_with(b"www") {
        let removed = if www_cache.0 == h {
            www_cache.1
        } else {
            let mut rest = h;
            while let Some(r) = strip_www(rest) {
                rest = r;
            }
            www_cache.0.clear();
            www_cache.0.extend_from_slice(h);
            www_cache.1 = h.len() - rest.len();
            www_cache.1
        };
        if removed > 0 {
            h = &h[removed..];
            fired.insert(Rule::Www);
        }
    }
    out.extend_from_slice(h);
}

/// `www.example.com` → `example.com`, `www12.example.com` → `example.com`,
/// only when what remains is still a registrable domain or below one: never
/// `www.co.uk` → `co.uk` (a public suffix) nor `www1355544.com` → `com`.
fn strip_www(h: &[u8]) -> Option<&[u8]> {
    let rest = h.strip_prefix(b"www")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = rest[digits..].strip_prefix(b".")?;
    // `www..example.com`: an empty label is not a registrable domain's start.
    if rest.first() == Some(&b'.') {
        return None;
    }
    // `psl::domain` is `None` when `rest` is a public suffix (or a single
    // label such as `localhost`): then `www` is the registrable part.
    psl::domain(rest.strip_suffix(b".").unwrap_or(rest))?;
    Some(rest)
}

/// Writes the path with the path rules applied.
fn path(cfg: &Config, path: &[u8], out: &mut Vec<u8>, fired: &mut RuleMask) {
    let on = cfg.enabled;
    let ps = out.len();
    let Some(mut rest) = path.strip_prefix(b"/") else {
        out.extend_from_slice(path);
        return;
    };
    if !needs_segments(on, path) {
        out.extend_from_slice(path);
    } else {
        loop {
            let (mut seg, last) = match find(b'/', rest) {
                Some(k) => (&rest[..k], false),
                None => (rest, true),
            };
            rest = if last { &[] } else { &rest[seg.len() + 1..] };
            let mut skip = false;
            if on.has(Rule::Session) {
                // `;jsessionid=` first: `/(S(...));jsessionid=1/` is a
                // session segment once the parameter is gone.
                if let Some(k) = find_jsessionid(seg) {
                    seg = &seg[..k];
                    fired.insert(Rule::Session);
                    // `..;jsessionid=x` was a segment to the URL parser;
                    // without its parameter it is a dot segment, resolved
                    // here as the parser would.
                    if let Some(dots) = dot_segment(seg) {
                        if dots == 2 {
                            let k = rfind(b'/', &out[ps..]).unwrap_or(0);
                            out.truncate(ps + k);
                        }
                        if last {
                            out.push(b'/');
                            break;
                        }
                        continue;
                    }
                }
                if is_aspnet_session(seg) {
                    fired.insert(Rule::Session);
                    skip = true;
                }
            }
            if !skip && seg.is_empty() && !last && on.has(Rule::DuplicateSlashes) {
                fired.insert(Rule::DuplicateSlashes);
                skip = true;
            }
            if !skip {
                out.push(b'/');
                if on.has(Rule::LowercasePath) {
                    lowercase_into(seg, out, fired);
                } else {
                    out.extend_from_slice(seg);
                }
            }
            if last {
                break;
            }
        }
        if out.len() == ps {
            out.push(b'/');
        }
    }

    // Index file and trailing slash, until neither changes anything:
    // `/a/index.html/` → `/a/index.html` → `/a/` → `/a`.
    let remove = on.has(Rule::TrailingSlash) && cfg.trailing_slash == TrailingSlash::Remove;
    loop {
        let mut changed = false;
        if remove {
            while out.len() - ps > 1 && out[out.len() - 1] == b'/' {
                out.pop();
                fired.insert(Rule::TrailingSlash);
                changed = true;
            }
        }
        if on.has(Rule::IndexFile) {
            let slash = ps + rfind(b'/', &out[ps..]).unwrap_or(0);
            let seg = &out[slash + 1..];
            if !seg.is_empty() && cfg.index_files.iter().any(|f| f.eq_ignore_ascii_case(seg)) {
                out.truncate(slash + 1);
                fired.insert(Rule::IndexFile);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if on.has(Rule::TrailingSlash) && cfg.trailing_slash == TrailingSlash::Add {
        let slash = ps + rfind(b'/', &out[ps..]).unwrap_or(0);
        let seg = &out[slash + 1..];
        if !seg.is_empty() && find(b'.', seg).is_none() {
            out.push(b'/');
            fired.insert(Rule::TrailingSlash);
        }
    }
}

/// `Some(1)` for a `.` segment, `Some(2)` for `..`, with `%2e` for a dot
/// (the URL Standard's single- and double-dot path segments).
fn dot_segment(seg: &[u8]) -> Option<u8> {
    let dot = |s: &[u8]| s == b"." || s.eq_ignore_ascii_case(b"%2e");
    if dot(seg) {
        return Some(1);
    }
    for split in [1, 3] {
        if seg.len() > split && dot(&seg[..split]) && dot(&seg[split..]) {
            return Some(2);
        }
    }
    None
}

#[inline]
fn find(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&x| x == b)
}

#[inline]
fn rfind(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().rposition(|&x| x == b)
}

/// Whether the path needs the segment pass: a segment rule is on and the
/// path has what it looks for (`//`, `;`, `(`, an upper-case letter).
/// Otherwise the path is copied whole. Paths can be long: the searches are
/// memchr's vector loops, not a byte loop.
#[inline]
fn needs_segments(on: RuleMask, path: &[u8]) -> bool {
    static DOUBLE_SLASH: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"//"));
    (on.has(Rule::Session) && memchr::memchr2(b';', b'(', path).is_some())
        || (on.has(Rule::DuplicateSlashes) && DOUBLE_SLASH.find(path).is_some())
        || (on.has(Rule::LowercasePath) && path.iter().any(u8::is_ascii_uppercase))
}

/// An ASP.NET cookieless-session segment: `(S(24 chars))`, several
/// `X(24 chars)` in one pair of parentheses (`(A(...)S(...)F(...))`), or
/// the older `(24 chars)`. The 24 characters are the session id's base-32
/// alphabet (`a-z 0-5`), matched as any ASCII letter or digit.
fn is_aspnet_session(seg: &[u8]) -> bool {
    let Some(inner) = seg.strip_prefix(b"(").and_then(|s| s.strip_suffix(b")")) else {
        return false;
    };
    let id = |s: &[u8]| s.len() == 24 && s.iter().all(u8::is_ascii_alphanumeric);
    if id(inner) {
        return true;
    }
    let mut rest = inner;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        // `X(` + 24 + `)`
        if rest.len() < 27 || !rest[0].is_ascii_alphabetic() || rest[1] != b'(' || rest[26] != b')'
        {
            return false;
        }
        if !id(&rest[2..26]) {
            return false;
        }
        rest = &rest[27..];
    }
    true
}

/// Where `;jsessionid=` starts in a segment (ASCII case-insensitive).
fn find_jsessionid(seg: &[u8]) -> Option<usize> {
    const NEEDLE: &[u8] = b";jsessionid=";
    let mut from = 0;
    while let Some(k) = find(b';', &seg[from..]) {
        let at = from + k;
        if ascii::starts_with_ignore_case(&seg[at..], NEEDLE) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Appends `seg` with ASCII letters lower-cased, except the hex digits of
/// escapes, which stay upper-case as `rfc3986` writes them.
fn lowercase_into(seg: &[u8], out: &mut Vec<u8>, fired: &mut RuleMask) {
    let mut i = 0;
    while i < seg.len() {
        let b = seg[i];
        if b == b'%' && ascii::is_percent_escape(&seg[i..]) {
            out.extend_from_slice(&seg[i..i + 3]);
            i += 3;
            continue;
        }
        if b.is_ascii_uppercase() {
            fired.insert(Rule::LowercasePath);
        }
        out.push(b.to_ascii_lowercase());
        i += 1;
    }
}

/// Writes `?` and the query with the query rules applied, or nothing when
/// `empty-query` drops it. Whether a query was written.
fn write_query(
    cfg: &Config,
    q: &[u8],
    out: &mut Vec<u8>,
    buf: &mut Vec<u8>,
    params: &mut SmallVec<[Param; 32]>,
    movable: &mut SmallVec<[Param; 32]>,
    fired: &mut RuleMask,
) -> bool {
    let on = cfg.enabled;
    let empty_rule = on.has(Rule::EmptyQuery);
    let plus = on.has(Rule::QuerySpace);
    buf.clear();
    params.clear();
    // One pass: split at `&`, note the first `=` and whether there is a `+`.
    let (mut from, mut eq, mut has_plus) = (0usize, None, false);
    for i in 0..=q.len() {
        let b = if i < q.len() { q[i] } else { b'&' };
        match b {
            b'&' => {}
            b'=' => {
                if eq.is_none() {
                    eq = Some(i - from);
                }
                continue;
            }
            b'+' => {
                has_plus = true;
                continue;
            }
            _ => continue,
        }
        let piece = &q[from..i];
        let piece_eq = eq;
        let piece_plus = has_plus && plus;
        (from, eq, has_plus) = (i + 1, None, false);
        if q.is_empty() {
            break;
        }
        // Written first (with `+` as `%20`), then judged on what was
        // written, so that `default-params` and the lists see one spelling.
        let start = buf.len();
        let eq_at = if piece_plus {
            let (name, value) = match piece_eq {
                Some(k) => (&piece[..k], Some(&piece[k + 1..])),
                None => (piece, None),
            };
            push_query_bytes(name, buf);
            let name_end = buf.len();
            if let Some(v) = value {
                buf.push(b'=');
                push_query_bytes(v, buf);
            }
            piece_eq.map(|_| name_end - start)
        } else {
            buf.extend_from_slice(piece);
            piece_eq
        };
        let written = &buf[start..];
        let (name, value) = match eq_at {
            Some(k) => (&written[..k], &written[k + 1..]),
            None => (written, &[][..]),
        };
        let drop = if empty_rule
            && (written.is_empty() || (eq_at.is_some() && (name.is_empty() || value.is_empty())))
        {
            Some(Rule::EmptyQuery)
        } else {
            cfg.drop_param(name, value)
        };
        if let Some(rule) = drop {
            fired.insert(rule);
            buf.truncate(start);
            continue;
        }
        if piece_plus {
            fired.insert(Rule::QuerySpace);
        }
        let start = start as u32;
        let name_end = start + eq_at.unwrap_or(written.len()) as u32;
        params.push(Param {
            start,
            name_end,
            end: buf.len() as u32,
        });
    }
    if params.is_empty() && empty_rule {
        fired.insert(Rule::EmptyQuery);
        return false;
    }
    if on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off && params.len() > 1 {
        sort_params(cfg, buf, params, movable, fired);
    }
    out.push(b'?');
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(&buf[p.start as usize..p.end as usize]);
    }
    true
}

/// Appends query bytes with `+` written as `%20` (the `query-space` rule).
fn push_query_bytes(bytes: &[u8], buf: &mut Vec<u8>) {
    for &b in bytes {
        if b == b'+' {
            buf.extend_from_slice(b"%20");
        } else {
            buf.push(b);
        }
    }
}

/// Sorts `params` in place, stable; parameters named in `keep_position`
/// stay at their index and the others are sorted around them.
fn sort_params(
    cfg: &Config,
    buf: &[u8],
    params: &mut SmallVec<[Param; 32]>,
    movable: &mut SmallVec<[Param; 32]>,
    fired: &mut RuleMask,
) {
    let by_value = cfg.sort == SortQuery::KeyValue;
    let name = |p: &Param| &buf[p.start as usize..p.name_end as usize];
    let cmp = |a: &Param, b: &Param| {
        let o = name(a).cmp(name(b));
        if by_value && o.is_eq() {
            // No `=` sorts before `=` with any value.
            buf[a.name_end as usize..a.end as usize].cmp(&buf[b.name_end as usize..b.end as usize])
        } else {
            o
        }
    };
    if cfg.keep_position.is_empty() {
        if !params.is_sorted_by(|a, b| cmp(a, b).is_le()) {
            // `sort_by` is stable: repeated keys keep their order.
            params.sort_by(cmp);
            fired.insert(Rule::SortQuery);
        }
        return;
    }
    let kept = |p: &Param| cfg.keep_position.iter().any(|k| k.as_slice() == name(p));
    movable.clear();
    movable.extend(params.iter().filter(|p| !kept(p)).copied());
    if movable.is_sorted_by(|a, b| cmp(a, b).is_le()) {
        return;
    }
    movable.sort_by(cmp);
    let mut next = movable.iter();
    for p in params.iter_mut() {
        if !kept(p) {
            *p = *next
                .next()
                .expect("as many movable slots as movable params");
        }
    }
    fired.insert(Rule::SortQuery);
}
