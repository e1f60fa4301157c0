//! The query rules: `empty-query`, `tracking`, `session` (parameters),
//! `default-params`, `query-space` and `sort-query`.
//!
//! A first pass reads the parameters without writing anything and tells
//! whether any rule would change the query: most queries are left alone, and
//! those are not copied. Otherwise the query is written again, parameter by
//! parameter, into a scratch buffer that then replaces it. A query whose
//! last parameter a rule removes loses its `?` too, whether or not
//! `empty-query` is on, and stray `&`s with it: `http://h/?utm_source=x`,
//! `http://h/?utm_source=x&` and `http://h/` are one page.

use smallvec::SmallVec;

use super::apply::{InPlace, Scratch};
use super::{Config, Rule, RuleMask, SortQuery};

/// One kept query parameter, as offsets into the scratch buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Param {
    start: u32,
    /// End of the name (the `=`, or `end` when there is none).
    name_end: u32,
    end: u32,
}

/// Runs the query rules of `cfg` on `url`'s query.
#[inline]
pub(crate) fn apply(cfg: &Config, url: &mut InPlace<'_>, s: &mut Scratch, fired: &mut RuleMask) {
    let (qs, qe) = (url.parts.query_start, url.parts.query_end());
    let q = &url.url()[qs as usize + 1..qe as usize];
    if !changes(cfg, q) {
        return;
    }
    let mut buf = std::mem::take(&mut s.buf);
    let mut params = std::mem::take(&mut s.params);
    let mut movable = std::mem::take(&mut s.movable);
    buf.clear();
    buf.push(b'?');
    let kept = write_query(cfg, q, &mut buf, &mut params, &mut movable, fired);
    if kept {
        url.replace(s, qs, qe, &buf);
    } else {
        url.remove(s, qs, qe);
        url.parts.query_start = crate::url::parts::ABSENT;
    }
    (s.buf, s.params, s.movable) = (buf, params, movable);
}

/// Whether the query rules would change the query `q` (without its `?`):
/// the same decisions as [`write_query`], without writing.
#[inline]
pub(crate) fn changes(cfg: &Config, q: &[u8]) -> bool {
    let on = cfg.enabled;
    let empty_rule = on.has(Rule::EmptyQuery);
    if q.is_empty() {
        return empty_rule;
    }
    let plus = on.has(Rule::QuerySpace);
    let sort = on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off;
    if sort && !cfg.keep_position.is_empty() {
        // Rare: the full pass decides.
        return true;
    }
    let by_value = cfg.sort == SortQuery::KeyValue;
    let mut prev: Option<(&[u8], &[u8])> = None;
    for piece in q.split(|&b| b == b'&') {
        let (name, value, has_eq) = match piece.iter().position(|&b| b == b'=') {
            Some(k) => (&piece[..k], &piece[k + 1..], true),
            None => (piece, &[][..], false),
        };
        if empty_rule && (piece.is_empty() || (has_eq && (name.is_empty() || value.is_empty()))) {
            return true;
        }
        if plus && piece.contains(&b'+') {
            return true;
        }
        if cfg.drop_param(name, value).is_some() {
            return true;
        }
        if sort {
            // Key-value order compares what follows the name (`=` and the
            // value; no `=` sorts first), as `sort_params` does.
            let rest = &piece[name.len()..];
            if let Some((pn, prest)) = prev {
                let order = pn.cmp(name).then_with(|| {
                    if by_value {
                        prest.cmp(rest)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                });
                if order.is_gt() {
                    return true;
                }
            }
            prev = Some((name, rest));
        }
    }
    false
}

/// Appends the query `q` to `buf` (after its `?`) with the query rules
/// applied. Whether a query is left: `false` when every parameter was
/// removed by a rule, or the query was empty and `empty-query` is on.
fn write_query(
    cfg: &Config,
    q: &[u8],
    buf: &mut Vec<u8>,
    params: &mut SmallVec<[Param; 32]>,
    movable: &mut SmallVec<[Param; 32]>,
    fired: &mut RuleMask,
) -> bool {
    let on = cfg.enabled;
    let empty_rule = on.has(Rule::EmptyQuery);
    let plus = on.has(Rule::QuerySpace);
    // The parameters are written after the `?` and the query itself, then
    // copied in their final order.
    let base = buf.len();
    params.clear();
    let mut removed = false;
    if !q.is_empty() {
        for piece in q.split(|&b| b == b'&') {
            let piece_eq = piece.iter().position(|&b| b == b'=');
            let piece_plus = plus && piece.contains(&b'+');
            // Written first (with `+` as `%20`), then judged on what was
            // written, so that `default-params` and the lists see one
            // spelling.
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
                && (written.is_empty()
                    || (eq_at.is_some() && (name.is_empty() || value.is_empty())))
            {
                Some(Rule::EmptyQuery)
            } else {
                cfg.drop_param(name, value)
            };
            if let Some(rule) = drop {
                fired.insert(rule);
                removed |= rule != Rule::EmptyQuery;
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
    }
    // Stray `&`s (kept when `empty-query` is off) are no parameters: a
    // query a rule emptied goes, `?` and all, whatever `&`s remain
    // (`?utm_source=x&` as `?utm_source=x`).
    let only_stray = || params.iter().all(|p| p.start == p.end);
    if (params.is_empty() && empty_rule) || (removed && only_stray()) {
        if !removed {
            fired.insert(Rule::EmptyQuery);
        }
        buf.truncate(base);
        return false;
    }
    if on.has(Rule::SortQuery) && cfg.sort != SortQuery::Off && params.len() > 1 {
        sort_params(cfg, buf, params, movable, fired);
    }
    // Move the parameters into place after the `?`, `&`-joined: the
    // written pieces start at `base`, and the joined query is never longer
    // than them plus the separators, so it is built after them and moved.
    let written_end = buf.len();
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            buf.push(b'&');
        }
        buf.extend_from_within(p.start as usize..p.end as usize);
    }
    buf.copy_within(written_end.., base);
    let joined = buf.len() - written_end;
    buf.truncate(base + joined);
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
