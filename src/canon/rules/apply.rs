//! Running the rules on one canonical URL, in place.
//!
//! The URL is already canonical (`rfc3986`) in the caller's buffer, with its
//! [`Parts`]. Most rules delete something (a fragment, a `www.` label, a
//! trailing slash, an index file name, a parameter), so each edits the bytes
//! where they are and shifts the offsets after the edit ([`InPlace`]); a URL
//! that no rule changes is neither copied nor rewritten. Components are
//! edited from the back of the URL to the front (fragment, path, query,
//! host, userinfo, port and scheme; the path before the query, because a
//! path section's parameter settings are chosen by the path the path rules
//! leave), each through [`InPlace`], which shifts the offsets after an
//! edit; each component's rules are in their own file (`host.rs`,
//! `path.rs`, `query.rs`; scheme, userinfo and fragment here). The order
//! within a component is fixed so that the result is a fixed point:
//! running the rules again changes nothing.
//!
//! Host aliases (`host-alias`) run before the host's section is chosen, so
//! that the target host's settings apply, and again after the built-in
//! rules ([`builtins_settled`]): a rule that changes the host or the path
//! may bring a URL under an alias or into another section, which the next
//! run would otherwise find.
//!
//! The user's rewrites run after the built-in rules but before
//! `trailing-slash=add` writes its slash ([`finish`]), so a pattern is
//! written against the URL without the tracking parameters, fragment and
//! such, and without a slash it did not have (`/story?id=12`); a rewritten
//! URL is parsed again and the built-in rules run on it once more (see
//! [`Canonicalizer`](crate::Canonicalizer)'s rules step).
//!
//! Rules run only on `http`/`https` URLs and path-only request targets. Other
//! schemes (`mailto:`, `ftp:`, `data:`) mean something else by their parts:
//! only `fragment` applies to them.

use regex::bytes::CaptureLocations;
use smallvec::SmallVec;

use super::query::{Outcome, Param};
use super::rewrite::Scope;
use super::{host, path, query, Config, Rule, RuleMask, RuleSet};
use crate::url::host::ends_in_a_number;
use crate::url::parts::{Parts, ABSENT};

/// Buffers reused from URL to URL: after the first few URLs the rules
/// allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The URL before the first rule changed it, when asked for.
    before: Vec<u8>,
    /// Keep [`before`](Self::before_rules) (statistics need it).
    pub(crate) keep_before: bool,
    /// `before` holds this URL's form before the rules (or, without
    /// `keep_before`, some rule already changed it).
    saved: bool,
    /// A component rebuilt by a rule (a query, a path with segments
    /// removed), before it replaces the old one.
    pub(crate) buf: Vec<u8>,
    /// Query parameters; inline up to 32, and a spilled buffer is kept.
    pub(crate) params: SmallVec<[Param; 32]>,
    pub(crate) movable: SmallVec<[Param; 32]>,
    /// What the fused rules' query rules did (`fused::Plan::query`).
    pub(crate) query: Outcome,
    tail: Vec<u8>,
    tail2: Vec<u8>,
    /// The path's last segment (its length, and whether it holds a dot) as
    /// the path rules left it, for `trailing-slash=add`; `None` when not
    /// known (a rewrite changed the URL since).
    pub(crate) last_segment: Option<(usize, bool)>,
    /// Capture slots, one per rewrite rule of the rule set.
    locs: Vec<Option<CaptureLocations>>,
    /// The slots of the rewrite rules that changed this URL, in order.
    fired_rewrites: Vec<u32>,
}

impl Scratch {
    /// The URL as it was before the rules, when the last run fired a rule
    /// and [`keep_before`](Self::keep_before) was set (meaningless
    /// otherwise).
    pub fn before_rules(&self) -> &[u8] {
        &self.before
    }

    /// The slots of the rewrite rules that changed the last URL
    /// ([`RuleSet::rewrite_id`] names them).
    pub fn fired_rewrites(&self) -> &[u32] {
        &self.fired_rewrites
    }

    /// A URL the fused rules changed (`fused.rs`): `before` is what the
    /// rules saw (kept when asked for), and no rewrite ran.
    #[inline]
    pub(crate) fn fused(&mut self, before: &[u8]) {
        self.start();
        self.saved = true;
        if self.keep_before {
            self.before.clear();
            self.before.extend_from_slice(before);
        }
    }

    /// Starts a URL: nothing saved yet.
    pub(crate) fn start(&mut self) {
        self.saved = false;
        self.last_segment = None;
        self.fired_rewrites.clear();
    }
}

/// One URL being edited where it is: `out[start..]`, with its parts
/// (relative to `start`). Every edit goes through
/// [`replace`](Self::replace), which keeps the parts right and, before the
/// first edit, saves the URL when the caller wants its form before the rules.
pub(crate) struct InPlace<'a> {
    pub(crate) out: &'a mut Vec<u8>,
    pub(crate) start: usize,
    pub(crate) parts: &'a mut Parts,
}

impl InPlace<'_> {
    /// The URL's bytes.
    #[inline]
    pub(crate) fn url(&self) -> &[u8] {
        &self.out[self.start..]
    }

    /// Replaces the URL's bytes `a..b` with `with`, shifting every offset
    /// at or after `b` by the change in length. An offset equal to `b` is
    /// the end of the replaced component or the start of the next one;
    /// both move with the bytes after it.
    #[inline]
    pub(crate) fn replace(&mut self, s: &mut Scratch, a: u32, b: u32, with: &[u8]) {
        if !s.saved {
            self.save(s);
        }
        let (abs_a, abs_b) = (self.start + a as usize, self.start + b as usize);
        let len = self.out.len();
        let (old, new) = (abs_b - abs_a, with.len());
        if abs_b == len {
            // The last bytes (a fragment, a trailing slash, an index file)
            // or an append: nothing after them moves.
            self.out.truncate(abs_a);
            // Mostly nothing or `trailing-slash`'s `/`: no copy call.
            match with {
                [] => {}
                [b] => self.out.push(*b),
                _ => self.out.extend_from_slice(with),
            }
        } else if new <= old {
            self.out[abs_a..abs_a + new].copy_from_slice(with);
            if new < old {
                self.out.copy_within(abs_b..len, abs_a + new);
                self.out.truncate(len - (old - new));
            }
        } else {
            let grow = new - old;
            self.out.resize(len + grow, 0);
            self.out.copy_within(abs_b..len, abs_b + grow);
            self.out[abs_a..abs_a + new].copy_from_slice(with);
        }
        // Every offset at or after `b` that is not ABSENT moves: `o + 1 > b`
        // says both at once (ABSENT + 1 wraps to 0), without a branch.
        let delta = (new as u32).wrapping_sub(old as u32);
        let p = &mut *self.parts;
        for o in [
            &mut p.username_start,
            &mut p.username_end,
            &mut p.password_start,
            &mut p.password_end,
            &mut p.host_start,
            &mut p.host_end,
            &mut p.path_start,
            &mut p.query_start,
            &mut p.fragment_start,
            &mut p.len,
        ] {
            let moves = o.wrapping_add(1) > b;
            *o = o.wrapping_add(delta & (moves as u32).wrapping_neg());
        }
    }

    /// Before the first edit: the URL as it was, when the caller keeps it.
    #[cold]
    fn save(&self, s: &mut Scratch) {
        s.saved = true;
        if s.keep_before {
            s.before.clear();
            s.before.extend_from_slice(&self.out[self.start..]);
        }
    }

    /// Removes the URL's bytes `a..b`.
    #[inline]
    pub(crate) fn remove(&mut self, s: &mut Scratch, a: u32, b: u32) {
        self.replace(s, a, b, &[]);
    }
}

/// Whether the rules run on the canonical URL `url`: an `http`/`https` URL
/// or a path-only request target.
#[inline]
pub(crate) fn is_web(url: &[u8], parts: &Parts) -> bool {
    match parts.scheme_end {
        ABSENT => true,
        4 => url.starts_with(b"http"),
        5 => url.starts_with(b"https"),
        _ => false,
    }
}

/// The rules for a URL of another scheme (`mailto:`, `ftp:`, `file:`),
/// whose parts mean something else: only `fragment`.
#[cold]
pub(crate) fn other_scheme(
    cfg: &Config,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> RuleMask {
    let mut fired = RuleMask::NONE;
    if parts.fragment_start != ABSENT && cfg.enabled.has(Rule::Fragment) {
        let (a, b) = (parts.fragment_start, parts.len);
        InPlace { out, start, parts }.remove(s, a, b);
        parts.fragment_start = ABSENT;
        fired.insert(Rule::Fragment);
    }
    fired
}

/// `host-alias`: writes the host and path prefix of the canonical URL at
/// `out[start..]` as the rules file's alias of them says; whether it did.
/// The alias is switched by the source host's section. For a URL that
/// [`is_web`], in a set that [`has_aliases`](RuleSet::has_aliases).
#[inline]
pub(crate) fn alias(
    set: &RuleSet,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> bool {
    let url = &out[start..];
    let Some(host) = parts.host(url) else {
        return false;
    };
    let Some((a, n)) = set.alias(host, parts.path(url)) else {
        return false;
    };
    if !set.for_host(Some(host)).enabled.has(Rule::HostAlias) {
        return false;
    }
    let (hs, mut he, ps) = (parts.host_start, parts.host_end, parts.path_start);
    // A trailing dot (which the lookup ignores) is not the alias's to
    // remove: it stays after a target domain, for `host-trailing-dot` to
    // remove and report, or to keep when that rule is off. Not after an
    // IP address (`1.2.3.4.` is `1.2.3.4` to the parser: a second run
    // would differ), nor after a target that has a dot of its own.
    let to = &a.to_host;
    if host.len() > 1
        && host.last() == Some(&b'.')
        && to.last() != Some(&b'.')
        && to.first() != Some(&b'[')
        && !ends_in_a_number(to)
    {
        he -= 1;
    }
    let mut url = InPlace { out, start, parts };
    // The path first: editing the host moves it.
    url.replace(s, ps, ps + n as u32, &a.to_prefix);
    url.replace(s, hs, he, &a.to_host);
    true
}

/// The rules that can change a URL's host, and with it its section.
const HOST_RULES: RuleMask =
    RuleMask(1 << Rule::Www as u8 | 1 << Rule::HostTrailingDot as u8 | 1 << Rule::Ipv4Mapped as u8);

/// [`builtins`] with `cfg`, then, while they moved the URL (changed its
/// host so that another section is its own, or made an alias apply), the
/// built-in rules of its new section: the URL ends where a second run
/// starts. `cfg` becomes the section the URL ends in. Two more rounds at
/// most: each alias round moves the URL to a host no alias starts from (the
/// rules file checks that), and the host rules only shorten the host.
pub(crate) fn builtins_settled<'a>(
    set: &'a RuleSet,
    cfg: &mut &'a Config,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> RuleMask {
    let mut round = builtins(cfg, out, start, parts, s);
    if !set.has_aliases() && !set.has_hosts() {
        return round;
    }
    let mut fired = round;
    for _ in 0..2 {
        let moved = set.has_aliases() && alias(set, out, start, parts, s);
        if !moved && (round.0 & HOST_RULES.0 == 0 || !set.has_hosts()) {
            break;
        }
        let next = set.for_host(parts.host(&out[start..]));
        if !moved && std::ptr::eq(next, *cfg) {
            break;
        }
        if moved {
            fired.insert(Rule::HostAlias);
        }
        *cfg = next;
        round = builtins(cfg, out, start, parts, s);
        fired.0 |= round.0;
    }
    fired
}

/// Whether `cfg` has rewrites to run.
#[inline]
pub(crate) fn has_rewrites(cfg: &Config) -> bool {
    cfg.enabled.has(Rule::Rewrite) && !cfg.rewrites.is_empty()
}

/// Runs `cfg`'s built-in rules (every rule but `rewrite`, and all of
/// `trailing-slash` but the slash `add` writes: see [`finish`]) on the
/// canonical URL at `out[start..]` with parts `parts`, in place; the rules
/// that changed it. For a URL that [`is_web`].
pub(crate) fn builtins(
    cfg: &Config,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> RuleMask {
    let on = cfg.enabled;
    let mut fired = RuleMask::NONE;
    let mut url = InPlace { out, start, parts };

    // Fragment.
    if url.parts.fragment_start != ABSENT && on.has(Rule::Fragment) {
        let (a, b) = (url.parts.fragment_start, url.parts.len);
        url.remove(s, a, b);
        url.parts.fragment_start = ABSENT;
        fired.insert(Rule::Fragment);
    }

    // Path, query and host, each in its file. The query's settings are
    // the path section's of the path the path rules leave (a prefix is
    // compared with what a second run would see).
    path::apply(cfg, &mut url, s, &mut fired);
    if url.parts.query_start != ABSENT {
        let for_query = cfg.for_path(url.parts.path(url.url()));
        query::apply(for_query, &mut url, s, &mut fired);
    }
    if url.parts.host_start != ABSENT {
        host::apply(cfg, &mut url, s, &mut fired);

        // Userinfo: `user:pass@` lies between the `//` and the host.
        let (a, b) = (url.parts.username_start, url.parts.host_start);
        if b > a && on.has(Rule::Userinfo) {
            url.remove(s, a, b);
            let p = &mut *url.parts;
            (p.username_end, p.password_start, p.password_end) = (a, a, a);
            fired.insert(Rule::Userinfo);
        }
    }

    // Scheme, and the port that depends on it.
    if on.has(Rule::HttpsAsHttp) && url.parts.scheme(url.url()) == Some(b"https") {
        if url.parts.port == 80 {
            // `https://h:80/` is `http://h/` once the schemes are one.
            let (a, b) = (url.parts.host_end, url.parts.path_start);
            url.remove(s, a, b);
            url.parts.port = ABSENT;
        }
        let end = url.parts.scheme_end;
        url.remove(s, end - 1, end);
        url.parts.scheme_end -= 1;
        fired.insert(Rule::HttpsAsHttp);
    } else if on.has(Rule::HttpAsHttps) && url.parts.scheme(url.url()) == Some(b"http") {
        if url.parts.port == 443 {
            // `http://h:443/` is `https://h/` once the schemes are one.
            let (a, b) = (url.parts.host_end, url.parts.path_start);
            url.remove(s, a, b);
            url.parts.port = ABSENT;
        }
        let end = url.parts.scheme_end;
        url.replace(s, end, end, b"s");
        url.parts.scheme_end += 1;
        fired.insert(Rule::HttpAsHttps);
    }
    fired
}

/// The last step, after the rewrites: `trailing-slash=add`'s slash. For a
/// URL that [`is_web`].
#[inline]
pub(crate) fn finish(
    cfg: &Config,
    out: &mut Vec<u8>,
    start: usize,
    parts: &mut Parts,
    s: &mut Scratch,
) -> RuleMask {
    let mut fired = RuleMask::NONE;
    let mut url = InPlace { out, start, parts };
    path::add_slash(cfg, &mut url, s, &mut fired);
    fired
}

/// Runs `cfg`'s rewrites on the URL at `out[start..]`, each on what its
/// scope sees (from the path on, or the whole URL); whether one changed it.
/// The result must be parsed again (a rewrite may write anything): `parts`
/// is left as it was.
pub(crate) fn rewrites(
    cfg: &Config,
    out: &mut Vec<u8>,
    start: usize,
    parts: &Parts,
    s: &mut Scratch,
) -> bool {
    let Scratch {
        tail,
        tail2,
        locs,
        fired_rewrites,
        ..
    } = s;
    tail.clear();
    tail.extend_from_slice(&out[start..]);
    // Where the path starts in `tail`; a path-only target is all path.
    let absolute = parts.scheme_end != ABSENT;
    let mut path_at = parts.path_start as usize;
    let mut changed = false;
    for r in &cfg.rewrites {
        if locs.len() <= r.slot {
            locs.resize_with(r.slot + 1, || None);
        }
        tail2.clear();
        let hit = match r.scope {
            Scope::Path => {
                tail2.extend_from_slice(&tail[..path_at]);
                r.apply(&tail[path_at..], tail2, &mut locs[r.slot])
            }
            Scope::Url => r.apply(tail, tail2, &mut locs[r.slot]),
        };
        if hit {
            if r.scope == Scope::Url && absolute {
                path_at = path_start_of(tail2);
            }
            std::mem::swap(tail, tail2);
            changed = true;
            fired_rewrites.push(r.slot as u32);
        }
    }
    if changed {
        s.last_segment = None;
        if !s.saved {
            s.saved = true;
            if s.keep_before {
                s.before.clear();
                s.before.extend_from_slice(&out[start..]);
            }
        }
        out.truncate(start);
        out.extend_from_slice(&s.tail);
    }
    changed
}

/// Where the path of the absolute URL `url` starts, as the parser would
/// find it: after `scheme:` and an `//authority`. For the path rewrites
/// after a URL rewrite, which may have written anything (the URL is
/// parsed again afterwards, and rejected if it is no URL).
fn path_start_of(url: &[u8]) -> usize {
    let Some(colon) = memchr::memchr(b':', url) else {
        return 0;
    };
    if !url[colon + 1..].starts_with(b"//") {
        return colon + 1;
    }
    let authority = colon + 3;
    authority
        + url[authority..]
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#'))
            .unwrap_or(url.len() - authority)
}
