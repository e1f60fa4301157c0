//! Parameter-name globs: `*` matches any run of bytes, `?` one byte, and
//! letters match either case (`PHPSESSID` and `phpsessid` are one name to
//! the servers that set them). Names are compared in their canonical form,
//! so `utm%5Fsource` has already become `utm_source`; a rules file's
//! patterns are written in that form when it is read (`a[]` as `a%5B%5D`:
//! `file::canonical_param`).

/// A compiled glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// Lower-cased pattern bytes.
    pattern: Vec<u8>,
    /// No `*` or `?`: compare bytes.
    literal: bool,
}

impl Glob {
    /// Compiles `pattern`. An empty pattern is an error (it would match only
    /// the empty name, which `empty-query` already handles).
    pub fn new(pattern: &str) -> Result<Glob, String> {
        if pattern.is_empty() {
            return Err("empty parameter name pattern".into());
        }
        let pattern = pattern.as_bytes().to_ascii_lowercase();
        let literal = !pattern.iter().any(|&b| b == b'*' || b == b'?');
        Ok(Glob { pattern, literal })
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

    /// Whether `name` matches, ASCII case-insensitively.
    pub fn matches(&self, name: &[u8]) -> bool {
        if self.literal {
            return self.pattern.eq_ignore_ascii_case(name);
        }
        matches_at(&self.pattern, name)
    }
}

/// A name length's bit in a [`Glob::length_mask`]: bit `len`, and bit 63
/// for every length from 63 on.
#[inline(always)]
pub fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
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
    fn many_stars_stay_fast() {
        let p = "*a*a*a*a*a*a*a*a*a*a*b";
        let s = "a".repeat(5000);
        assert!(!m(p, &s));
    }
}
