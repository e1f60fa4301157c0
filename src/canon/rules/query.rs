//! The query rules: `empty-query`, `tracking`, `session` (parameters),
//! `default-params`, `keep-params`, `drop-params`, `query-space` and
//! `sort-query`.
//!
//! One pass over the query ([`rewrite`]) finds the parameters' bounds,
//! judges each and notes the kept ones as offsets into the query, so that
//! nothing is written while no rule fires: most queries are left alone, and
//! those are neither copied nor read again. A query that a rule changes is
//! written once, its kept parameters in their final order, into the
//! scratch buffer; the in-place rules ([`apply`]) put it in the URL, the
//! fused ones (`fused.rs`) write the URL with it. A query whose last
//! parameter a rule removes loses its `?` too, whether or not `empty-query`
//! is on, and stray `&`s with it: `http://h/?utm_source=x`,
//! `http://h/?utm_source=x&` and `http://h/` are one page.

use smallvec::SmallVec;

use super::apply::{InPlace, Scratch};
use super::{Config, Rule, RuleMask, SortQuery};
use crate::url::simd::{find, members, ByteSet};

/// One kept query parameter: its bytes `start..end` in the query, or in
/// the scratch buffer when `query-space` wrote it again (`respelled`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Param {
    start: u32,
    /// End of the name (the `=`, or `end` when there is none).
    name_end: u32,
    end: u32,
    /// The name's first byte plus one, 0 for an empty name: what
    /// [`order`] compares first (most names differ there), read without
    /// the bytes' bounds.
    first: u16,
    respelled: bool,
}

/// What the query rules do to a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing: the query stays as it is.
    #[default]
    Same,
    /// The query goes, `?` and all.
    Gone,
    /// The query becomes the scratch buffer's bytes from this offset on
    /// (its `?` first).
    New(u32),
}

/// Where the kept parameters' bytes are: the query, or the scratch buffer
/// for the ones `query-space` wrote again.
#[derive(Clone, Copy)]
struct Bytes<'a> {
    query: &'a [u8],
    respelled: &'a [u8],
}

impl<'a> Bytes<'a> {
    #[inline]
    fn of(self, p: &Param) -> &'a [u8] {
        let from = if p.respelled {
            self.respelled
        } else {
            self.query
        };
        &from[p.start as usize..p.end as usize]
    }

    #[inline]
    fn name(self, p: &Param) -> &'a [u8] {
        &self.of(p)[..(p.name_end - p.start) as usize]
    }

    /// What follows the name: `=` and the value, or nothing.
    #[inline]
    fn rest(self, p: &Param) -> &'a [u8] {
        &self.of(p)[(p.name_end - p.start) as usize..]
    }
}

/// Runs the query rules of `cfg` on `url`'s query.
#[inline]
pub(crate) fn apply(cfg: &Config, url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (qs, qe) = (url.parts.query_start, url.parts.query_end());
    let mut buf = std::mem::take(&mut s.buf);
    let q = &url.url()[qs as usize + 1..qe as usize];
    match rewrite(cfg, q, &mut buf, &mut s.params, &mut s.movable, fired) {
        Outcome::Same => {}
        Outcome::Gone => {
            url.remove(s, qs, qe);
            url.parts.query_start = crate::url::parts::ABSENT;
        }
        Outcome::New(k) => url.replace(s, qs, qe, &buf[k as usize..]),
    }
    s.buf = buf;
}

/// Whether the query rules of `cfg` leave the query `q` (without its
/// `?`) as it is, told without writing anything: `true` only where
/// [`rewrite`] says [`Outcome::Same`] and fires nothing. For the fused
/// rules' quick way (`fused::unchanged`), so that a URL whose query stays
/// is copied as it is, without a plan. Out of line: most URLs have no
/// query.
#[inline(never)]
pub(crate) fn stays(cfg: &Config, q: &[u8]) -> bool {
    if q.is_empty() {
        return !cfg.enabled.has(Rule::EmptyQuery);
    }
    unchanged(cfg, q)
}

/// The query rules of `cfg` on the query `q` (without its `?`), in one
/// pass over it: what they do to it, and the rules that fired in `fired`.
/// A changed query is written to `buf` (see [`Outcome::New`]); `buf`,
/// `params` and `movable` are scratch space, reused from URL to URL.
#[inline]
pub(crate) fn rewrite(
    cfg: &Config,
    q: &[u8],
    buf: &mut Vec<u8>,
    params: &mut SmallVec<[Param; 32]>,
    movable: &mut SmallVec<[Param; 32]>,
    fired: &mut RuleMask,
) -> Outcome {
    let on = cfg.enabled;
    let empty_rule = on.has(Rule::EmptyQuery);
    if q.is_empty() {
        if empty_rule {
            fired.insert(Rule::EmptyQuery);
            return Outcome::Gone;
        }
        return Outcome::Same;
    }
    if unchanged(cfg, q) {
        return Outcome::Same;
    }
    let plus = on.has(Rule::QuerySpace);
    buf.clear();
    params.clear();
    // A parameter was removed or written again: the query changes.
    let mut changed = false;
    // A parameter was removed by a rule other than `empty-query`.
    let mut removed = false;
    let marks = Marks::of(q);
    let mut at = 0;
    loop {
        // The piece's end, its first `=` and whether it holds a `+`
        // (asked only when `query-space` is on): from the marks of a
        // short query, else searched sixteen bytes a step.
        let (eq, end, has_plus) = if let Some(m) = &marks {
            m.piece(at, plus)
        } else if plus {
            bounds_and_plus(q, at)
        } else {
            let i = find::<AmpEq>(q, at);
            if i < q.len() && q[i] == b'=' {
                (Some(i), find::<Amp>(q, i + 1), false)
            } else {
                (None, i, false)
            }
        };
        // The parameter's bytes as judged: the query's own, or what was
        // written again.
        let (p, piece) = if plus && has_plus {
            // Written first (with `+` as `%20`), then judged on what was
            // written, so that `default-params` and the lists see one
            // spelling.
            let start = buf.len();
            let name_end = eq.unwrap_or(end);
            push_query_bytes(&q[at..name_end], buf);
            let written_name_end = buf.len();
            if name_end < end {
                buf.push(b'=');
                push_query_bytes(&q[name_end + 1..end], buf);
            }
            let p = Param {
                start: start as u32,
                name_end: written_name_end as u32,
                end: buf.len() as u32,
                first: 0,
                respelled: true,
            };
            (p, &buf[start..])
        } else {
            let p = Param {
                start: at as u32,
                name_end: eq.unwrap_or(end) as u32,
                end: end as u32,
                first: 0,
                respelled: false,
            };
            (p, &q[at..end])
        };
        let (name, rest) = piece.split_at((p.name_end - p.start) as usize);
        let value = rest.get(1..).unwrap_or_default();
        let drop = if empty_rule
            && (piece.is_empty() || (!rest.is_empty() && (name.is_empty() || value.is_empty())))
        {
            Some(Rule::EmptyQuery)
        } else {
            cfg.drop_param(name, value)
        };
        if let Some(rule) = drop {
            fired.insert(rule);
            removed |= rule != Rule::EmptyQuery;
            changed = true;
            if p.respelled {
                buf.truncate(p.start as usize);
            }
        } else {
            if p.respelled {
                fired.insert(Rule::QuerySpace);
                changed = true;
            }
            let first = name.first().map_or(0, |&b| u16::from(b) + 1);
            params.push(Param { first, ..p });
        }
        if end == q.len() {
            break;
        }
        at = end + 1;
    }
    // Stray `&`s (kept when `empty-query` is off) are no parameters: a
    // query a rule emptied goes, `?` and all, whatever `&`s remain
    // (`?utm_source=x&` as `?utm_source=x`).
    let only_stray = || params.iter().all(|p| p.start == p.end);
    if (params.is_empty() && empty_rule) || (removed && only_stray()) {
        if !removed {
            fired.insert(Rule::EmptyQuery);
        }
        return Outcome::Gone;
    }
    if on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off && params.len() > 1 {
        let bytes = Bytes {
            query: q,
            respelled: buf,
        };
        let moved = if cfg.keep_position.is_empty() && params.len() <= FEW {
            sort_few(cfg.sort == SortQuery::KeyValue, bytes, params)
        } else {
            sort_params(cfg, bytes, params, movable)
        };
        if moved {
            fired.insert(Rule::SortQuery);
            changed = true;
        }
    }
    if !changed {
        return Outcome::Same;
    }
    // The kept parameters, `&`-joined after a `?`, once: the ones that
    // follow each other in the query and are kept as they were in one copy.
    let base = buf.len();
    buf.push(b'?');
    let mut run: Option<(u32, u32)> = None;
    for (i, p) in params.iter().enumerate() {
        if !p.respelled {
            match &mut run {
                // Next to the run in the query, with the `&` between them.
                Some((_, e)) if p.start == *e + 1 => {
                    *e = p.end;
                    continue;
                }
                _ => {}
            }
        }
        if let Some((a, e)) = run.take() {
            buf.extend_from_slice(&q[a as usize..e as usize]);
        }
        if i > 0 {
            buf.push(b'&');
        }
        if p.respelled {
            buf.extend_from_within(p.start as usize..p.end as usize);
        } else {
            run = Some((p.start, p.end));
        }
    }
    if let Some((a, e)) = run {
        buf.extend_from_slice(&q[a as usize..e as usize]);
    }
    Outcome::New(base as u32)
}

/// Whether no query rule can change the query `q` (not empty), told in
/// one pass over its bytes before the full one, which writes nothing:
/// every parameter has a name and, after a `=`, a value (`empty-query`),
/// no list removes it ([`Config::drop_param`]) and it holds no `+` when
/// `query-space` is on; with `sort-query` on, only a query of one
/// parameter is told here. `false`: the full pass says what changes.
/// Inlined into both callers: out of line (with [`stays`] its second
/// caller), `aggressive` on userbait's URLs with a query cost 1,685.3 →
/// 1,727.8 instructions a URL.
#[inline(always)]
fn unchanged(cfg: &Config, q: &[u8]) -> bool {
    let on = cfg.enabled;
    let sorted = on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off;
    let plus = on.has(Rule::QuerySpace);
    let mut at = 0;
    loop {
        let name_end = if plus {
            find::<AmpEqPlus>(q, at)
        } else {
            find::<AmpEq>(q, at)
        };
        let name = &q[at..name_end];
        if name.is_empty() {
            return false;
        }
        let end = match q.get(name_end) {
            Some(b'=') => {
                let end = if plus {
                    find::<AmpPlus>(q, name_end + 1)
                } else {
                    find::<Amp>(q, name_end + 1)
                };
                if end == name_end + 1 || (plus && q.get(end) == Some(&b'+')) {
                    return false;
                }
                end
            }
            Some(b'+') => return false,
            _ => name_end,
        };
        if sorted && end < q.len() {
            // Most queries of more than one parameter that `sort-query`
            // sees are not in order (measured on the url-dataset lists):
            // the full pass is cheaper for them without this one first.
            return false;
        }
        let value = q.get(name_end + 1..end).unwrap_or_default();
        if cfg.drop_param(name, value).is_some() {
            return false;
        }
        if end == q.len() {
            return true;
        }
        at = end + 1;
    }
}

/// The `&`, `=` and `+` of a query of at most 64 bytes, a bit per byte
/// (bit `k` for `q[k]`), read sixteen bytes at a time once, so that the
/// full pass finds each parameter's bounds with a few bit operations
/// instead of a search or two per parameter.
struct Marks {
    amp: u64,
    eq: u64,
    plus: u64,
    len: usize,
}

impl Marks {
    /// The marks of `q`, or `None` when it is longer than 64 bytes.
    #[inline]
    fn of(q: &[u8]) -> Option<Marks> {
        let len = q.len();
        if len > 64 {
            return None;
        }
        let one = |w: &[u8; 16]| {
            (
                u64::from(members::<Amp>(w)),
                u64::from(members::<Equals>(w)),
                u64::from(members::<Plus>(w)),
            )
        };
        let mut m = Marks {
            amp: 0,
            eq: 0,
            plus: 0,
            len,
        };
        if len < 16 {
            // Zeros after the query: none of the three.
            let mut w = [0u8; 16];
            w[..len].copy_from_slice(q);
            (m.amp, m.eq, m.plus) = one(&w);
            return Some(m);
        }
        let mut at = 0;
        while at + 16 <= len {
            let (a, e, p) = one(q[at..at + 16].try_into().expect("16 bytes"));
            m.amp |= a << at;
            m.eq |= e << at;
            m.plus |= p << at;
            at += 16;
        }
        if at < len {
            // The last sixteen bytes again, without the lanes before `at`.
            let last = len - 16;
            let (a, e, p) = one(q[last..].try_into().expect("16 bytes"));
            let k = at - last;
            m.amp |= (a >> k) << at;
            m.eq |= (e >> k) << at;
            m.plus |= (p >> k) << at;
        }
        Some(m)
    }

    /// The parameter that starts at `at` (`at <= len`: after a last `&`
    /// an empty one): its first `=`, its end and, with `plus`, whether it
    /// holds a `+`.
    #[inline(always)]
    fn piece(&self, at: usize, plus: bool) -> (Option<usize>, usize, bool) {
        // No bit from 64 on (`<<` by 64 would shift by 0).
        let from = u64::MAX.checked_shl(at as u32).unwrap_or(0);
        let amp = self.amp & from;
        let end = if amp == 0 {
            self.len
        } else {
            amp.trailing_zeros() as usize
        };
        let inside = if end >= 64 {
            from
        } else {
            from & ((1u64 << end) - 1)
        };
        let eq = self.eq & inside;
        let eq = (eq != 0).then(|| eq.trailing_zeros() as usize);
        (eq, end, plus && self.plus & inside != 0)
    }
}

/// `=`, for [`Marks`].
struct Equals;
impl ByteSet for Equals {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"=";
}

/// `+`, for [`Marks`].
struct Plus;
impl ByteSet for Plus {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"+";
}

/// `&`: where a parameter ends.
struct Amp;
impl ByteSet for Amp {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"&";
}

/// `&` or `=`: where a parameter or its name ends.
struct AmpEq;
impl ByteSet for AmpEq {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"&=";
}

/// `&` or `+`, and with `=`: for `query-space`.
struct AmpPlus;
impl ByteSet for AmpPlus {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"&+";
}
struct AmpEqPlus;
impl ByteSet for AmpEqPlus {
    const BELOW: u8 = 0;
    const BYTES: &'static [u8] = b"&=+";
}

/// The parameter that starts at `q[at..]`: its first `=`, its end, and
/// whether it holds a `+`.
#[inline]
fn bounds_and_plus(q: &[u8], at: usize) -> (Option<usize>, usize, bool) {
    let (mut eq, mut has_plus) = (None, false);
    let mut i = at;
    loop {
        i = if eq.is_none() {
            find::<AmpEqPlus>(q, i)
        } else {
            find::<AmpPlus>(q, i)
        };
        match q.get(i) {
            None | Some(b'&') => return (eq, i, has_plus),
            Some(b'=') => eq = Some(i),
            _ => has_plus = true,
        }
        i += 1;
    }
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

/// How many parameters [`sort_few`] sorts; more go to [`sort_params`]
/// (an insertion sort's comparisons grow with the square of the count).
const FEW: usize = 32;

/// The order of two parameters under `sort-query`: by name, then with
/// `by_value` by what follows the name (no `=` sorts before `=` with any
/// value).
#[inline(always)]
fn order(by_value: bool, bytes: Bytes<'_>, a: &Param, b: &Param) -> std::cmp::Ordering {
    // Most names differ in their first byte: told by the keys, without
    // the bytes nor the call to `memcmp` that comparing slices makes (an
    // empty name, key 0, sorts first, as with the slices).
    match a.first.cmp(&b.first) {
        std::cmp::Ordering::Equal => order_tied(by_value, bytes, a, b),
        o => o,
    }
}

/// [`order`] of two parameters whose names start with the same byte: out
/// of line, so that the sorts' loops do not make each name's slice ready
/// for the comparisons that never need it.
#[inline(never)]
fn order_tied(by_value: bool, bytes: Bytes<'_>, a: &Param, b: &Param) -> std::cmp::Ordering {
    let o = bytes.name(a).cmp(bytes.name(b));
    if by_value && o.is_eq() {
        bytes.rest(a).cmp(bytes.rest(b))
    } else {
        o
    }
}

/// [`sort_params`] of at most [`FEW`] parameters and no `keep_position`:
/// an insertion sort, inline (stable: a parameter moves only before one
/// that sorts strictly after it), which also tells whether the order
/// changed: a query already in order costs one comparison a parameter,
/// without the general sort's set-up, its out-of-line comparisons nor a
/// separate test of the order (`aggressive` on userbait's URLs with a
/// query: 1,685.3 → 1,654.5 instructions a URL, before the `first` keys).
#[inline]
fn sort_few(by_value: bool, bytes: Bytes<'_>, params: &mut [Param]) -> bool {
    let mut moved = false;
    for i in 1..params.len() {
        let p = params[i];
        let mut j = i;
        while j > 0 && order(by_value, bytes, &params[j - 1], &p).is_gt() {
            params[j] = params[j - 1];
            j -= 1;
        }
        if j != i {
            params[j] = p;
            moved = true;
        }
    }
    moved
}

/// Sorts `params` in place, stable; parameters named in `keep_position`
/// stay at their index and the others are sorted around them. Whether the
/// order changed.
fn sort_params(
    cfg: &Config,
    bytes: Bytes<'_>,
    params: &mut SmallVec<[Param; 32]>,
    movable: &mut SmallVec<[Param; 32]>,
) -> bool {
    let by_value = cfg.sort == SortQuery::KeyValue;
    let cmp = |a: &Param, b: &Param| order(by_value, bytes, a, b);
    if cfg.keep_position.is_empty() {
        if params.is_sorted_by(|a, b| cmp(a, b).is_le()) {
            return false;
        }
        // `sort_by` is stable: repeated keys keep their order.
        params.sort_by(cmp);
        return true;
    }
    let kept = |p: &Param| {
        cfg.keep_position
            .iter()
            .any(|k| k.as_slice() == bytes.name(p))
    };
    movable.clear();
    movable.extend(params.iter().filter(|p| !kept(p)).copied());
    if movable.is_sorted_by(|a, b| cmp(a, b).is_le()) {
        return false;
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
    true
}

#[cfg(test)]
mod tests {
    use super::super::glob::Glob;
    use super::super::Tier;
    use super::*;

    /// The query rules as their definitions say, one step at a time on
    /// owned pieces: the result (`None`: the query goes) and the rules that
    /// fired.
    fn model(cfg: &Config, q: &[u8]) -> (Option<Vec<u8>>, RuleMask) {
        let on = cfg.enabled;
        let mut fired = RuleMask::NONE;
        let empty_rule = on.has(Rule::EmptyQuery);
        if q.is_empty() {
            if empty_rule {
                fired.insert(Rule::EmptyQuery);
                return (None, fired);
            }
            return (Some(Vec::new()), fired);
        }
        let mut kept: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
        let mut removed = false;
        for piece in q.split(|&b| b == b'&') {
            let respell = on.has(Rule::QuerySpace) && piece.contains(&b'+');
            let piece: Vec<u8> = if respell {
                let s = String::from_utf8_lossy(piece).replace('+', "%20");
                s.into_bytes()
            } else {
                piece.to_vec()
            };
            let (name, value) = match piece.iter().position(|&b| b == b'=') {
                Some(k) => (piece[..k].to_vec(), Some(piece[k + 1..].to_vec())),
                None => (piece.clone(), None),
            };
            let empty = piece.is_empty()
                || value
                    .as_ref()
                    .is_some_and(|v| name.is_empty() || v.is_empty());
            let drop = if empty_rule && empty {
                Some(Rule::EmptyQuery)
            } else {
                cfg.drop_param(&name, value.as_deref().unwrap_or_default())
            };
            match drop {
                Some(r) => {
                    fired.insert(r);
                    removed |= r != Rule::EmptyQuery;
                }
                None => {
                    if respell {
                        fired.insert(Rule::QuerySpace);
                    }
                    kept.push((name, value));
                }
            }
        }
        let stray = kept.iter().all(|(n, v)| n.is_empty() && v.is_none());
        if (kept.is_empty() && empty_rule) || (removed && stray) {
            if !removed {
                fired.insert(Rule::EmptyQuery);
            }
            return (None, fired);
        }
        if on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off {
            let by_value = cfg.sort == SortQuery::KeyValue;
            let pinned = |n: &Vec<u8>| cfg.keep_position.contains(n);
            let mut movable: Vec<_> = kept.iter().filter(|(n, _)| !pinned(n)).cloned().collect();
            let before = movable.clone();
            // Stable; no value sorts before any value.
            movable.sort_by(|a, b| {
                a.0.cmp(&b.0).then_with(|| {
                    if by_value {
                        a.1.cmp(&b.1)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
            });
            if movable != before {
                fired.insert(Rule::SortQuery);
                let mut next = movable.into_iter();
                for p in kept.iter_mut().filter(|(n, _)| !pinned(n)) {
                    *p = next.next().unwrap();
                }
            }
        }
        let mut out = Vec::new();
        for (i, (n, v)) in kept.iter().enumerate() {
            if i > 0 {
                out.push(b'&');
            }
            out.extend_from_slice(n);
            if let Some(v) = v {
                out.push(b'=');
                out.extend_from_slice(v);
            }
        }
        (Some(out), fired)
    }

    /// Configurations that exercise every query rule.
    fn configs() -> Vec<(&'static str, Config)> {
        let safe = Config::for_mask(RuleMask::up_to(Tier::Safe));
        let aggressive = Config::for_mask(RuleMask::up_to(Tier::Aggressive));
        let mut by_value = aggressive.clone();
        by_value.sort = SortQuery::KeyValue;
        let mut pinned = aggressive.clone();
        pinned.keep_position = vec![b"b".to_vec(), b"q".to_vec()];
        let mut lists = aggressive.clone();
        lists.enabled.remove(Rule::EmptyQuery);
        lists.defaults = vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"q".to_vec(), b"a%20b".to_vec()),
        ];
        lists.drop_params = vec![Glob::new("c*").unwrap()];
        lists.finish();
        let mut keep = safe.clone();
        keep.keep_params = Some(vec![Glob::new("a").unwrap(), Glob::new("q").unwrap()]);
        keep.finish();
        vec![
            ("safe", safe),
            ("aggressive", aggressive),
            ("key-value", by_value),
            ("keep-position", pinned),
            ("lists, no empty-query", lists),
            ("keep-params", keep),
        ]
    }

    const PIECES: &[&str] = &[
        "a=1",
        "a=2",
        "b=2",
        "b",
        "a",
        "",
        "a=",
        "=1",
        "=",
        "utm_source=x",
        "UTM_Medium=y",
        "gclid=z",
        "jsessionid=0A",
        "sid=0123456789abcdef0123456789ABCDEF",
        "sid=short",
        "q=a+b",
        "q=a%20b",
        "c+d=1",
        "c=3",
        "z=9",
        "a=1=2",
        "+",
        // Names that differ after their first byte (`order`'s keys tie).
        "ab=1",
        "aa=2",
        "ab",
    ];

    #[test]
    fn marks_find_every_parameter_s_bounds() {
        // Every length up to and past the 64 bytes the marks take, each
        // byte one of `&`, `=`, `+` or another, from a fixed sequence.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..=70 {
            for _ in 0..30 {
                let q: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        b"&=+ab"[(state % 5) as usize]
                    })
                    .collect();
                let Some(m) = Marks::of(&q) else {
                    assert!(len > 64, "{len}");
                    continue;
                };
                assert!(len <= 64, "{len}");
                // As `rewrite` goes: after a last `&`, an empty parameter.
                let mut at = 0;
                loop {
                    let end = q[at..]
                        .iter()
                        .position(|&b| b == b'&')
                        .map_or(len, |k| at + k);
                    let piece = &q[at..end];
                    let eq = piece.iter().position(|&b| b == b'=').map(|k| at + k);
                    let has_plus = piece.contains(&b'+');
                    let what = q.escape_ascii().to_string();
                    assert_eq!(m.piece(at, true), (eq, end, has_plus), "{what} at {at}");
                    assert_eq!(m.piece(at, false), (eq, end, false), "{what} at {at}");
                    if end == len {
                        break;
                    }
                    at = end + 1;
                }
                // A query of 64 bytes whose last is `&`.
                if len == 64 {
                    let mut q = q;
                    q[63] = b'&';
                    let m = Marks::of(&q).expect("64 bytes");
                    assert_eq!(m.piece(64, true), (None, 64, false));
                }
            }
        }
    }

    #[test]
    fn one_pass_writes_what_the_rules_say() {
        let (mut buf, mut params, mut movable) = (Vec::new(), SmallVec::new(), SmallVec::new());
        // A fixed pseudo-random sequence: the same queries every run.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut queries: Vec<Vec<u8>> = PIECES.iter().map(|p| p.as_bytes().to_vec()).collect();
        for _ in 0..3000 {
            let pieces: Vec<&str> = (0..1 + next(7))
                .map(|_| PIECES[next(PIECES.len())])
                .collect();
            queries.push(pieces.join("&").into_bytes());
        }
        // Around the 64 bytes that `Marks` takes: `&` last, `+` and `=` at
        // the edges of its sixteen-byte steps.
        for q in [
            "z=9&".repeat(16),
            "z=9&".repeat(15) + "a=1&",
            "z=9&".repeat(15) + "q=a+",
            "b=2&".repeat(16) + "a",
            "c=33&".repeat(12) + "b+=",
            "b&".repeat(31) + "a=",
        ] {
            queries.push(q.into_bytes());
        }
        // More parameters than `sort_few` takes (`FEW`), and exactly as many.
        for n in [FEW - 1, FEW, FEW + 1, 3 * FEW] {
            for _ in 0..20 {
                let pieces: Vec<&str> = (0..n).map(|_| PIECES[next(PIECES.len())]).collect();
                queries.push(pieces.join("&").into_bytes());
            }
        }
        let mut outcomes = [0usize; 3];
        let mut stayed = 0usize;
        for (what, cfg) in configs() {
            for q in &queries {
                let (want, want_fired) = model(&cfg, q);
                let mut fired = RuleMask::NONE;
                let got = rewrite(&cfg, q, &mut buf, &mut params, &mut movable, &mut fired);
                // `stays` says yes only where nothing changes or fires.
                if stays(&cfg, q) {
                    stayed += 1;
                    assert!(
                        got == Outcome::Same && fired.is_empty(),
                        "{what}: {}",
                        q.escape_ascii()
                    );
                }
                let got = match got {
                    Outcome::Same => {
                        outcomes[0] += 1;
                        Some(q.clone())
                    }
                    Outcome::Gone => {
                        outcomes[1] += 1;
                        None
                    }
                    Outcome::New(k) => {
                        outcomes[2] += 1;
                        let k = k as usize;
                        assert_eq!(buf[k], b'?');
                        // Written only when it changes.
                        assert_ne!(&buf[k + 1..], q.as_slice(), "{what}");
                        Some(buf[k + 1..].to_vec())
                    }
                };
                let show = |b: &Option<Vec<u8>>| b.as_ref().map(|b| b.escape_ascii().to_string());
                assert_eq!(show(&got), show(&want), "{what}: {}", q.escape_ascii());
                assert_eq!(fired, want_fired, "{what}: {}", q.escape_ascii());
            }
        }
        // Every outcome was seen.
        assert!(outcomes.iter().all(|&n| n > 100), "{outcomes:?}");
        assert!(stayed > 100, "{stayed}");
    }
}
