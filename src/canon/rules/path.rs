//! The path rules: `session` (path parameters and ASP.NET session
//! segments), `duplicate-slashes`, `lowercase-path`, `index-file` and
//! `trailing-slash`.
//!
//! The segment rules need a pass over the path's segments, and only a path
//! holding what they look for (`;`, `(`, `//`, an upper-case letter) takes
//! it: one scan of sixteen bytes a step answers for all of them. For a URL
//! the fused rules take, the canonicalizer's own scan has answered already
//! (`fast::PathFacts`), and the path is not read again for them. The last
//! segment's rules (index file, trailing slash) look only at the bytes after
//! the last `/`, and edit the path where it is.

use super::apply::{InPlace, Scratch};
use super::{Config, Rule, RuleMask, TrailingSlash};
use crate::ascii;
use crate::url::fast::PathFacts;
use crate::url::parser::{is_double_dot, is_single_dot};
use crate::url::simd::{find, members, ByteSet};

/// `;` and `(`: where a session id can start in a path.
struct SessionStart;
impl ByteSet for SessionStart {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b";(";
}

/// `/`.
struct Slash;
impl ByteSet for Slash {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"/";
}

/// `.`.
struct Dot;
impl ByteSet for Dot {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b".";
}

/// What one scan of a path found for the path rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Found {
    /// A `;` or `(`.
    session: bool,
    /// Two `/` in a row.
    double_slash: bool,
    /// Where the last segment starts: after the last `/` (0 when none).
    last_segment: usize,
    /// The last segment holds a `.`.
    dot: bool,
}

/// Scans `path` sixteen bytes a step for `;`, `(`, `//`, and where its last
/// segment starts and whether that holds a dot.
#[inline]
fn scan(path: &[u8]) -> Found {
    let mut found = Found::default();
    let mut session = 0u32;
    let mut double = 0u32;
    // The previous chunk's last byte was a `/`: a `//` across the boundary.
    let mut carry = 0u32;
    let mut base = 0usize;
    let mut step = |chunk: &[u8; 16], valid: u32| {
        session |= members::<SessionStart>(chunk);
        let slashes = members::<Slash>(chunk);
        let dots = members::<Dot>(chunk) & valid;
        double |= slashes & (slashes << 1 | carry);
        carry = slashes >> 15;
        if slashes != 0 {
            let last = 31 - slashes.leading_zeros();
            found.last_segment = base + last as usize + 1;
            found.dot = dots >> last != 0;
        } else {
            found.dot |= dots != 0;
        }
        base += 16;
    };
    let mut chunks = path.chunks_exact(16);
    for c in &mut chunks {
        step(c.try_into().expect("chunks of 16"), 0xFFFF);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // Zero bytes are in no set.
        let mut last = [0u8; 16];
        last[..rest.len()].copy_from_slice(rest);
        step(&last, (1 << rest.len()) - 1);
    }
    found.session = session != 0;
    found.double_slash = double != 0;
    found
}

/// Runs the path rules of `cfg` on `url`'s path.
#[inline]
pub(crate) fn apply(cfg: &Config, url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let on = cfg.enabled;
    let (ps, pe) = (url.parts.path_start, url.parts.path_end());
    let path = &url.url()[ps as usize..pe as usize];
    if path.first() != Some(&b'/') {
        return;
    }
    if on.0 & SCAN_RULES.0 == 0 {
        // Only `session` (the `safe` tier): the one question is whether a
        // `;` or `(` is there, and where the last segment starts matters to
        // no rule.
        // `find` (SSE2, inlined): `memchr2` sets up AVX2 and dispatches,
        // which costs more than the scan on a path of twenty bytes.
        if on.has(Rule::Session) && find::<SessionStart>(path, 0) < path.len() {
            session_only(url, s, fired);
        }
        return;
    }
    let found = scan(path);
    let mut last = (path.len() - found.last_segment, found.dot);
    let needs = (on.has(Rule::Session) && found.session)
        || (on.has(Rule::DuplicateSlashes) && found.double_slash)
        || (on.has(Rule::LowercasePath) && path.iter().any(u8::is_ascii_uppercase));
    if needs {
        let mut buf = std::mem::take(&mut s.buf);
        buf.clear();
        let mut changed = RuleMask::NONE;
        segments(on, path, &mut buf, &mut changed);
        if !changed.is_empty() {
            fired.0 |= changed.0;
            let (seg, dot) = last_segment_of(&buf);
            last = (buf.len() - seg, dot);
            url.replace(s, ps, pe, &buf);
        }
        s.buf = buf;
    }
    if on.0 & LAST_SEGMENT_RULES.0 != 0 {
        last = last_segment(cfg, url, s, fired, last);
    }
    s.last_segment = Some(last);
}

/// For the fused rules (`fused.rs`): what the path rules of `cfg` do to
/// `path` (which starts with `/`) when all they do is remove an index file
/// and add `trailing-slash=add`'s slash: the bytes of `path` kept and
/// whether the slash is added. `None` when they rewrite it otherwise
/// (`session`, `duplicate-slashes`): [`apply`] and [`add_slash`] then run
/// them. The same decisions as those two, for a `cfg` with neither
/// `lowercase-path` nor `trailing-slash=remove` (which the fused rules
/// leave to them). `facts`: what the scan that took the URL saw in the
/// path (`fast::scan_canonical`), so that the path is read again only when
/// a segment rule may fire, and then its last segment only.
/// `QUICK`: as `fused::plan`'s (a copy for each of its own).
#[inline]
pub(crate) fn plan<const QUICK: bool>(
    cfg: &Config,
    input: &[u8],
    (ps, pe): (usize, usize),
    facts: PathFacts,
    s: &mut Scratch,
    fired: &mut RuleMask,
) -> Option<(usize, bool)> {
    let on = cfg.enabled;
    let path = &input[ps..pe];
    debug_assert!(!on.has(Rule::LowercasePath) && path.first() == Some(&b'/'));
    if ((on.has(Rule::Session) && facts.session)
        || (on.has(Rule::DuplicateSlashes) && facts.double_slash))
        && rewrites_segments(on, path, s)
    {
        return None;
    }
    if on.0 & LAST_SEGMENT_RULES.0 == 0 {
        return Some((path.len(), false));
    }
    let (seg, dot) = last_segment_within::<QUICK>(input, ps, pe);
    let mut kept = path.len();
    let mut last = (path.len() - seg, dot);
    if on.has(Rule::IndexFile) && last.0 > 0 && cfg.is_index_file(&path[seg..]) {
        kept = seg;
        last = (0, false);
        fired.insert(Rule::IndexFile);
    }
    let slash = on.has(Rule::TrailingSlash)
        && cfg.trailing_slash == TrailingSlash::Add
        && last.0 > 0
        && !last.1;
    if slash {
        fired.insert(Rule::TrailingSlash);
    }
    Some((kept, slash))
}

/// [`last_segment_of`] the path `input[ps..pe]` (which starts with `/`),
/// read from its end sixteen bytes a step where it lies: where its last
/// segment starts (relative to `ps`) and whether that holds a `.`. Most
/// last segments are found in the first step. `QUICK`: [`plan`]'s (with
/// one function for both copies of `plan`, it was left out of line:
/// `aggressive` kasztp 666.8 against 651.5 instructions a URL).
#[inline]
fn last_segment_within<const QUICK: bool>(input: &[u8], ps: usize, pe: usize) -> (usize, bool) {
    // The first step, for a path that ends sixteen bytes or more into the
    // input: the sixteen bytes before `pe`, with no lanes left out. The
    // bytes before `ps` need none: the path's first byte is a `/`, so when
    // the step reaches back past `ps` the last `/` it finds is at `ps` or
    // after, and the dots before that `/` do not count anyway.
    if pe >= 16 {
        let from = pe - 16;
        let chunk: &[u8; 16] = input[from..pe].try_into().expect("16 bytes");
        let slashes = members::<Slash>(chunk);
        if slashes != 0 {
            let k = 31 - slashes.leading_zeros();
            let dots = members::<Dot>(chunk);
            return (from + k as usize + 1 - ps, dots >> k != 0);
        }
    }
    if input.len() < 16 {
        return last_segment_of(&input[ps..pe]);
    }
    let mut dot = false;
    let mut end = pe;
    loop {
        // The sixteen bytes that end at `end`, or the first sixteen; the
        // lanes of the path before `end` that were not read yet.
        let from = end.saturating_sub(16);
        let chunk: &[u8; 16] = input[from..from + 16].try_into().expect("16 bytes");
        let lanes = ((1u32 << (end - from)) - 1) & !((1u32 << ps.saturating_sub(from)) - 1);
        let slashes = members::<Slash>(chunk) & lanes;
        let dots = members::<Dot>(chunk) & lanes;
        if slashes != 0 {
            let k = 31 - slashes.leading_zeros();
            return (from + k as usize + 1 - ps, dot || dots >> k != 0);
        }
        dot |= dots != 0;
        // The path starts with `/`: a step that holds `ps` found one.
        debug_assert!(from > ps);
        end = from;
    }
}

/// Whether the segment pass of the rules `on` changes `path`.
#[cold]
fn rewrites_segments(on: RuleMask, path: &[u8], s: &mut Scratch) -> bool {
    let mut buf = std::mem::take(&mut s.buf);
    buf.clear();
    let mut changed = RuleMask::NONE;
    segments(on, path, &mut buf, &mut changed);
    s.buf = buf;
    !changed.is_empty()
}

/// The path rules that need [`scan`]'s answers beyond "a `;` or `(`":
/// the others and the last segment's (`s.last_segment` is theirs).
const SCAN_RULES: RuleMask = RuleMask(
    1 << Rule::DuplicateSlashes as u8
        | 1 << Rule::LowercasePath as u8
        | 1 << Rule::IndexFile as u8
        | 1 << Rule::TrailingSlash as u8,
);

/// `session` alone, on a path holding a `;` or `(`: the segment pass.
#[cold]
fn session_only(url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (ps, pe) = (url.parts.path_start, url.parts.path_end());
    let path = &url.url()[ps as usize..pe as usize];
    let mut buf = std::mem::take(&mut s.buf);
    buf.clear();
    let mut changed = RuleMask::NONE;
    segments(RuleMask::of(&[Rule::Session]), path, &mut buf, &mut changed);
    if !changed.is_empty() {
        fired.0 |= changed.0;
        url.replace(s, ps, pe, &buf);
    }
    s.buf = buf;
}

/// `trailing-slash=add`: a `/` after a last segment without a dot. Apart
/// from the other path rules, because the user's rewrites run between them:
/// a pattern is written against `/story?id=12`, not `/story/?id=12`.
#[inline]
pub(crate) fn add_slash(
    cfg: &Config,
    url: &mut InPlace<'_>,
    s: &mut Scratch,
    fired: &mut RuleMask,
) {
    if !(cfg.enabled.has(Rule::TrailingSlash) && cfg.trailing_slash == TrailingSlash::Add) {
        return;
    }
    let (ps, pe) = (url.parts.path_start, url.parts.path_end());
    let path = &url.url()[ps as usize..pe as usize];
    if path.first() != Some(&b'/') {
        return;
    }
    let (len, dot) = match s.last_segment {
        Some(known) => known,
        None => {
            let (seg, dot) = last_segment_of(path);
            (path.len() - seg, dot)
        }
    };
    if len > 0 && !dot {
        url.replace(s, pe, pe, b"/");
        fired.insert(Rule::TrailingSlash);
    }
}

/// The rules of the last segment.
pub(crate) const LAST_SEGMENT_RULES: RuleMask =
    RuleMask(1 << Rule::IndexFile as u8 | 1 << Rule::TrailingSlash as u8);

/// Index file and trailing slash, until neither changes anything
/// (`/a/index.html/` → `/a/index.html` → `/a/` → `/a` with `remove`).
/// `add`'s slash is [`add_slash`]'s.
/// `last`: the last segment's length and whether it holds a dot; the same
/// after the rules is returned.
#[inline]
fn last_segment(
    cfg: &Config,
    url: &mut InPlace<'_>,
    s: &mut Scratch,
    fired: &mut RuleMask,
    mut last: (usize, bool),
) -> (usize, bool) {
    let on = cfg.enabled;
    let ps = url.parts.path_start;
    let policy = if on.has(Rule::TrailingSlash) {
        cfg.trailing_slash
    } else {
        TrailingSlash::Keep
    };
    loop {
        let mut changed = false;
        if policy == TrailingSlash::Remove {
            loop {
                let pe = url.parts.path_end();
                if pe - ps > 1 && url.url()[pe as usize - 1] == b'/' {
                    url.remove(s, pe - 1, pe);
                    fired.insert(Rule::TrailingSlash);
                    changed = true;
                    let path = &url.url()[ps as usize..pe as usize - 1];
                    let (seg, dot) = last_segment_of(path);
                    last = (path.len() - seg, dot);
                } else {
                    break;
                }
            }
        }
        if on.has(Rule::IndexFile) && last.0 > 0 {
            let pe = url.parts.path_end();
            let seg = pe - last.0 as u32;
            if cfg.is_index_file(&url.url()[seg as usize..pe as usize]) {
                url.remove(s, seg, pe);
                fired.insert(Rule::IndexFile);
                changed = true;
                last = (0, false);
            }
        }
        if !changed {
            break;
        }
    }
    last
}

/// Where the last segment of `path` (which starts with `/`) starts, and
/// whether it holds a `.`.
#[inline]
fn last_segment_of(path: &[u8]) -> (usize, bool) {
    let mut dot = false;
    let mut i = path.len();
    while i > 0 {
        match path[i - 1] {
            b'/' => break,
            b'.' => dot = true,
            _ => {}
        }
        i -= 1;
    }
    (i, dot)
}

/// The segment pass: writes `path` (which starts with `/`) to `out` with
/// session path parameters and segments removed, `//` collapsed (but the
/// `//` after an embedded `scheme:` kept) and letters lower-cased, as the
/// rules in `on` say.
fn segments(on: RuleMask, path: &[u8], out: &mut Vec<u8>, fired: &mut RuleMask) {
    let mut rest = &path[1..];
    // The segment just written was an embedded `scheme:` (`/web/https://x/`):
    // the empty segment after it is the `//` of that URL, not a duplicate.
    let mut after_scheme = false;
    loop {
        let (mut seg, last) = match rest.iter().position(|&b| b == b'/') {
            Some(k) => (&rest[..k], false),
            None => (rest, true),
        };
        rest = if last { &[] } else { &rest[seg.len() + 1..] };
        let mut skip = false;
        if on.has(Rule::Session) {
            // `;jsessionid=` first: `/(S(...));jsessionid=1/` is a session
            // segment once the parameter is gone.
            if let Some(k) = find_jsessionid(seg) {
                seg = &seg[..k];
                fired.insert(Rule::Session);
                // `..;jsessionid=x` was a segment to the URL parser; without
                // its parameter it is a dot segment, resolved as the parser
                // resolves one.
                if is_double_dot(seg) {
                    let k = out.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    out.truncate(k);
                }
                if is_double_dot(seg) || is_single_dot(seg) {
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
            if after_scheme {
                after_scheme = false;
                out.push(b'/');
                continue;
            }
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
            after_scheme = is_scheme_segment(seg);
        }
        if last {
            break;
        }
    }
    if out.is_empty() {
        out.push(b'/');
    }
}

/// `https:`, `http:`, `ftp:`...: a segment that is a scheme and its colon
/// (RFC 3986 §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`), as
/// archive and proxy paths embed whole URLs.
fn is_scheme_segment(seg: &[u8]) -> bool {
    match seg.split_last() {
        Some((b':', name)) => {
            name.first().is_some_and(u8::is_ascii_alphabetic)
                && name
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        }
        _ => false,
    }
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
    while let Some(k) = seg[from..].iter().position(|&b| b == b';') {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan against a byte loop, on every path of a small alphabet up
    /// to 34 bytes long (so across the 16-byte chunk boundary).
    /// The `n`th generated path of `len` bytes of the scan's alphabet.
    fn generated(n: u32, len: usize, mix: u32, path: &mut Vec<u8>) {
        let alphabet = b"/;(.a";
        path.clear();
        let mut k = n;
        for _ in 0..len {
            path.push(alphabet[(k % 5) as usize]);
            k = k / 5 + n % mix;
        }
    }

    #[test]
    fn scan_matches_a_byte_loop() {
        let mut path = Vec::new();
        for n in 0..20_000u32 {
            generated(n, (n % 35) as usize, 7, &mut path);
            let last_segment = path.iter().rposition(|&b| b == b'/').map_or(0, |k| k + 1);
            let want = Found {
                session: path.iter().any(|&b| b == b';' || b == b'('),
                double_slash: path.windows(2).any(|w| w == b"//"),
                last_segment,
                dot: path[last_segment..].contains(&b'.'),
            };
            assert_eq!(scan(&path), want, "{}", path.escape_ascii());
        }
    }

    /// [`last_segment_within`] against [`last_segment_of`], on paths of
    /// every length at every offset of a longer input (bytes before the
    /// path, `/` and `.` among them, must not count).
    #[test]
    fn last_segment_within_matches_a_byte_loop() {
        let mut input = Vec::new();
        let mut checked = 0;
        for n in 0..20_000u32 {
            let len = 1 + (n % 60) as usize;
            generated(n, len, 13, &mut input);
            let ps = (n as usize / 7) % len;
            // A path starts with `/`.
            input[ps] = b'/';
            for pe in ps + 1..=len {
                let want = last_segment_of(&input[ps..pe]);
                let got = last_segment_within::<false>(&input, ps, pe);
                assert_eq!(got, want, "{} {ps}..{pe}", input.escape_ascii());
                checked += usize::from(pe - ps - want.0 > 16);
            }
        }
        // Last segments longer than one step were among them.
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn embedded_schemes_keep_their_slashes() {
        let on = RuleMask::of(&[Rule::DuplicateSlashes]);
        let run = |p: &str| {
            let mut out = Vec::new();
            let mut fired = RuleMask::NONE;
            segments(on, p.as_bytes(), &mut out, &mut fired);
            (
                String::from_utf8(out).unwrap(),
                fired.has(Rule::DuplicateSlashes),
            )
        };
        assert_eq!(
            run("/web/2020/https://example.com/"),
            ("/web/2020/https://example.com/".into(), false)
        );
        assert_eq!(run("/a//b"), ("/a/b".into(), true));
        assert_eq!(run("//http:///x"), ("/http://x".into(), true));
        assert_eq!(run("/a:b//c"), ("/a:b/c".into(), true));
        assert_eq!(run("/1http://c"), ("/1http:/c".into(), true));
    }

    #[test]
    fn aspnet_sessions() {
        assert!(is_aspnet_session(b"(S(abcdefghijklmnopqrstuvwx))"));
        assert!(is_aspnet_session(b"(abcdefghijklmnopqrstuvwx)"));
        assert!(is_aspnet_session(
            b"(A(abcdefghijklmnopqrstuvwx)S(abcdefghijklmnopqrstuvwx))"
        ));
        assert!(!is_aspnet_session(b"(S(short))"));
        assert!(!is_aspnet_session(b"()"));
    }
}
