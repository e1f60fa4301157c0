//! Parameter-name globs: `*` matches any run of bytes, `?` one byte, and
//! letters match either case (`PHPSESSID` and `phpsessid` are one name to
//! the servers that set them). Names are compared in their canonical form,
//! so `utm%5Fsource` has already become `utm_source`; a rules file's
//! patterns are written in that form when it is read (`a[]` as `a%5B%5D`:
//! `file::canonical_param`).

use crate::ascii::eq_lower_ignore_case;

/// A compiled glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// Lower-cased pattern bytes.
    pattern: Vec<u8>,
    /// How `matches` compares: told once here, not for every name.
    shape: Shape,
}

/// A glob's shape. Nearly every pattern of the lists is a name or has one
/// `*` (`utm_*`, `aspsessionid*`): these are compared as one or two slices,
/// a few bytes at a time (`ascii::eq_lower_ignore_case`), instead of with
/// the general byte loop and its backtracking (about 100 instructions for
/// `utm_source` against `utm_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// No `*` or `?`: the name is the pattern.
    Literal,
    /// `prefix*` (and `*`, whose prefix is empty): the name starts with
    /// the pattern before its `*`.
    Prefix,
    /// `*suffix`: the name ends with the pattern after its `*`.
    Suffix,
    /// `prefix*suffix`, the `*` at this offset: the name starts with the
    /// prefix, ends with the suffix and is at least as long as both
    /// together (so `a*a` does not match `a`: they would share its byte).
    Both(usize),
    /// Anything else (`?`, two `*`s): [`matches_at`].
    General,
}

impl Glob {
    /// Compiles `pattern`. An empty pattern is an error (it would match only
    /// the empty name, which `empty-query` already handles).
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.is_empty() {
            return Err("empty parameter name pattern".into());
        }
        let pattern = pattern.as_bytes().to_ascii_lowercase();
        let stars = pattern.iter().filter(|&&b| b == b'*').count();
        let star = pattern.iter().position(|&b| b == b'*');
        let shape = match (stars, pattern.contains(&b'?'), star) {
            (0, false, _) => Shape::Literal,
            (1, false, Some(at)) if at + 1 == pattern.len() => Shape::Prefix,
            (1, false, Some(0)) => Shape::Suffix,
            (1, false, Some(at)) => Shape::Both(at),
            _ => Shape::General,
        };
        Ok(Glob { pattern, shape })
    }

    /// The first byte if it is a literal (for the first-byte filter).
    pub fn first_literal(&self) -> Option<u8> {
        match self.pattern[0] {
            b'*' | b'?' => None,
            b => Some(b),
        }
    }

    /// The name lengths it can match, a bit per length ([`length_bit`]):
    /// its length without `*`s, or that and longer with one.
    pub fn length_mask(&self) -> u64 {
        let fixed = self.pattern.iter().filter(|&&b| b != b'*').count();
        if self.pattern.contains(&b'*') {
            !0 << fixed.min(63)
        } else {
            length_bit(fixed)
        }
    }

    /// The second bytes of the names it can match, as [`second_bit`]'s:
    /// none when it matches only names of one byte, all for a `*` or `?`.
    pub fn second_mask(&self) -> u64 {
        match self.pattern.get(1) {
            None => 0,
            Some(b'*' | b'?') => !0,
            Some(&b) => second_bit(b),
        }
    }

    /// Whether `name` matches, ASCII case-insensitively (the pattern is
    /// lower-cased, the name's bytes are lower-cased as they are compared).
    #[inline]
    pub fn matches(&self, name: &[u8]) -> bool {
        let p = &self.pattern[..];
        // The lengths are compared here, inline, before the bytes: most
        // names that reach a pattern differ in length from it.
        let starts = |prefix: &[u8]| {
            name.get(..prefix.len())
                .is_some_and(|n| eq_lower_ignore_case(n, prefix))
        };
        let ends = |suffix: &[u8]| {
            name.len()
                .checked_sub(suffix.len())
                .is_some_and(|at| eq_lower_ignore_case(&name[at..], suffix))
        };
        match self.shape {
            Shape::Literal => name.len() == p.len() && eq_lower_ignore_case(name, p),
            Shape::Prefix => starts(&p[..p.len() - 1]),
            Shape::Suffix => ends(&p[1..]),
            Shape::Both(at) => name.len() >= p.len() - 1 && starts(&p[..at]) && ends(&p[at + 1..]),
            Shape::General => matches_at(p, name),
        }
    }
}

/// A name length's bit in a [`Glob::length_mask`]: bit `len`, and bit 63
/// for every length from 63 on.
#[inline(always)]
pub fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

/// A name's second byte's bit in a [`Glob::second_mask`]: bit `b & 63` of
/// the lower-cased byte (bytes 64 apart share a bit: a filter, not a test).
#[inline(always)]
pub fn second_bit(b: u8) -> u64 {
    1 << (b.to_ascii_lowercase() & 63)
}

/// Iterative glob matching with one backtrack point (the last `*`): linear
/// for patterns with one `*`, and never exponential.
fn matches_at(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si].to_ascii_lowercase() => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Glob::new(p).unwrap().matches(s.as_bytes())
    }

    #[test]
    fn globs() {
        assert!(m("utm_*", "utm_source"));
        assert!(m("utm_*", "UTM_Medium"));
        assert!(m("utm_*", "utm_"));
        assert!(!m("utm_*", "utm"));
        assert!(!m("utm_*", "xutm_a"));
        assert!(m("gclid", "GCLID"));
        assert!(!m("gclid", "gclids"));
        assert!(m("aspsessionid*", "ASPSESSIONIDAQBSDSRT"));
        assert!(m("*id", "sessionid"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYY"));
        assert!(m("?d", "id"));
        assert!(!m("?d", "d"));
        assert!(m("*", ""));
        assert!(Glob::new("").is_err());
    }

    #[test]
    fn shapes() {
        let shape = |p: &str| Glob::new(p).unwrap().shape;
        assert_eq!(shape("gclid"), Shape::Literal);
        assert_eq!(shape("utm_*"), Shape::Prefix);
        assert_eq!(shape("*id"), Shape::Suffix);
        assert_eq!(shape("a*z"), Shape::Both(1));
        assert_eq!(shape("ab*z"), Shape::Both(2));
        assert_eq!(shape("*"), Shape::Prefix);
        assert_eq!(shape("a?"), Shape::General);
        assert_eq!(shape("a*?"), Shape::General);
        assert_eq!(shape("a**"), Shape::General);
        // Literal, with the case of either side.
        assert!(m("PHPSESSID", "phpsessid"));
        assert!(m("jsessionid", "JSessionId"));
        assert!(!m("jsessionid", "jsessionid_"));
        // `prefix*`: the prefix alone too.
        assert!(m("aspsessionid*", "aspsessionid"));
        assert!(m("ASPSESSIONID*", "aspsessionidXY"));
        assert!(!m("aspsessionid*", "aspsessioni"));
        // `*suffix`.
        assert!(m("*_ID", "vero_id"));
        assert!(m("*_id", "_id"));
        assert!(!m("*_id", "vero_idx"));
        assert!(!m("*_id", "id"));
        // `prefix*suffix`: the two may not share a byte of the name.
        assert!(m("a*a", "aa"));
        assert!(m("a*a", "AbA"));
        assert!(!m("a*a", "a"));
        assert!(!m("ab*ba", "aba"));
        assert!(m("ab*ba", "abba"));
        assert!(!m("a*b", "ba"));
        // A lone `*` matches every name, the empty one too.
        assert!(m("*", "x"));
        assert!(m("*", "utm_source"));
        // Bytes outside ASCII are compared as they are.
        assert!(m("caf\u{e9}*", "CAF\u{e9}s"));
        assert!(!m("caf\u{e9}*", "CAF\u{c9}s"));
    }

    /// Every shape answers as the general matcher does, on names of every
    /// length up to 6 over a few bytes (both cases) and patterns of every
    /// shape over them.
    #[test]
    fn shapes_answer_as_the_general_matcher() {
        let patterns = [
            "a",
            "ab",
            "aB",
            "*",
            "a*",
            "*a",
            "a*a",
            "ab*",
            "*ba",
            "ab*ba",
            "a*b",
            "b*a",
            "_*",
            "*_",
            "ab_*",
            "*_ab",
            "aba*bab",
            "abcdefgh*",
            "*abcdefgh",
            "abcdefghij",
        ];
        let alphabet = [b'a', b'A', b'b', b'B', b'_'];
        let mut names: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = names.clone();
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|n| {
                    alphabet.iter().map(move |&b| {
                        let mut n = n.clone();
                        n.push(b);
                        n
                    })
                })
                .collect();
            names.extend(last.iter().cloned());
        }
        names.push(b"ABCDEFGH".to_vec());
        names.push(b"xABCDEFGH".to_vec());
        names.push(b"abcdefghX".to_vec());
        names.push(b"AbcdefghiJ".to_vec());
        let mut matched = 0;
        for p in patterns {
            let g = Glob::new(p).unwrap();
            assert_ne!(g.shape, Shape::General, "{p}");
            for n in &names {
                let want = matches_at(&g.pattern, n);
                assert_eq!(g.matches(n), want, "{p} {}", n.escape_ascii());
                matched += usize::from(want);
            }
        }
        assert!(matched > 0 && matched < patterns.len() * names.len());
    }

    #[test]
    fn second_bytes() {
        let mask = |p: &str| Glob::new(p).unwrap().second_mask();
        assert_eq!(mask("a"), 0);
        assert_eq!(mask("a*"), !0);
        assert_eq!(mask("a?c"), !0);
        assert_eq!(mask("UTM_*"), second_bit(b't'));
        assert_eq!(second_bit(b'T'), second_bit(b't'));
        assert_ne!(mask("dclid") & second_bit(b'C'), 0);
        assert_eq!(mask("dclid") & second_bit(b'o'), 0);
    }

    #[test]
    fn many_stars_stay_fast() {
        let p = "*a*a*a*a*a*a*a*a*a*a*b";
        let s = "a".repeat(5000);
        assert!(!m(p, &s));
    }
}
