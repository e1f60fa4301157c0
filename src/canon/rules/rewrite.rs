//! User rewrite rules ("DUST" rules: Different URLs with Similar Text): a
//! literal or a regular expression and its replacement, applied to the URL
//! from its path on (`/story?id=12#top`), or with `scope = "url"` to the
//! whole URL (`http://m.example.com/story?id=12`), after every built-in
//! rule. A rule may carry an `id`, which `--explain` prints
//! (`rewrite:story-id`), so that a learned rule can be traced.
//!
//! Every non-overlapping match is replaced, left to right. In a regex
//! replacement `$1`, `${1}` and `${name}` insert a group and `$$` a dollar.
//! The template is parsed once; matching uses capture slots kept in the
//! caller's scratch, so a rewrite allocates nothing per URL.

use regex::bytes::{CaptureLocations, Regex};

/// What a rewrite looks for.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// These bytes.
    Literal(Vec<u8>),
    /// A match of this regex (the `regex` crate's syntax; it never backtracks,
    /// so a rule can not make canonicalization slow).
    Regex(Regex),
}

/// One piece of a replacement template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    Group(usize),
}

/// What part of the URL a rewrite sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scope {
    /// From the path on: `/story?id=12`.
    #[default]
    Path,
    /// The whole URL, scheme and host included (for a path-only request
    /// target, which has neither, the same as `Path`).
    Url,
}

/// One rewrite rule.
#[derive(Clone, Debug)]
pub struct Rewrite {
    pattern: Pattern,
    template: Vec<Piece>,
    /// Slot in the caller's capture scratch; also the rule's number in
    /// [`RuleSet::rewrite_id`](super::RuleSet::rewrite_id).
    pub(crate) slot: usize,
    /// What it sees.
    pub(crate) scope: Scope,
}

impl Rewrite {
    /// A literal substitution.
    pub fn literal(find: &str, replace: &str) -> Result<Rewrite, String> {
        if find.is_empty() {
            return Err("rewrite: empty literal".into());
        }
        Ok(Rewrite {
            pattern: Pattern::Literal(find.as_bytes().to_vec()),
            template: vec![Piece::Text(replace.as_bytes().to_vec())],
            slot: 0,
            scope: Scope::Path,
        })
    }

    /// A regex substitution.
    pub fn regex(pattern: &str, replace: &str) -> Result<Rewrite, String> {
        let re = Regex::new(pattern).map_err(|e| {
            format!(
                "rewrite regex '{}': {}",
                pattern.escape_debug(),
                regex_reason(&e)
            )
        })?;
        let template = parse_template(&re, replace)?;
        Ok(Rewrite {
            pattern: Pattern::Regex(re),
            template,
            slot: 0,
            scope: Scope::Path,
        })
    }

    /// The rule with scope `scope`.
    pub fn with_scope(mut self, scope: Scope) -> Rewrite {
        self.scope = scope;
        self
    }

    /// Appends `input` with every match replaced to `out`; whether any matched.
    pub(crate) fn apply(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        locs: &mut Option<CaptureLocations>,
    ) -> bool {
        let mut at = 0;
        let mut changed = false;
        match &self.pattern {
            Pattern::Literal(find) => {
                let text = match &self.template[..] {
                    [Piece::Text(t)] => t.as_slice(),
                    _ => &[],
                };
                for m in memchr::memmem::find_iter(input, find) {
                    if m < at {
                        continue;
                    }
                    out.extend_from_slice(&input[at..m]);
                    out.extend_from_slice(text);
                    at = m + find.len();
                    changed = true;
                }
            }
            Pattern::Regex(re) => {
                let locs = locs.get_or_insert_with(|| re.capture_locations());
                let mut search = 0;
                while search <= input.len() {
                    let Some(m) = re.captures_read_at(locs, input, search) else {
                        break;
                    };
                    out.extend_from_slice(&input[at..m.start()]);
                    for piece in &self.template {
                        match piece {
                            Piece::Text(t) => out.extend_from_slice(t),
                            Piece::Group(g) => {
                                if let Some((s, e)) = locs.get(*g) {
                                    out.extend_from_slice(&input[s..e]);
                                }
                            }
                        }
                    }
                    at = m.end();
                    changed = true;
                    // An empty match must not be found again at the same place.
                    search = if m.is_empty() { m.end() + 1 } else { m.end() };
                }
            }
        }
        out.extend_from_slice(&input[at..]);
        changed
    }
}

/// A regex error on one line: the `regex` crate's syntax errors are several
/// lines (the pattern, a caret under the place, then `error: why`), which a
/// message that starts with the rules file's line cannot carry.
fn regex_reason(e: &regex::Error) -> String {
    let text = e.to_string();
    let why = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or(text.trim());
    why.replace('\n', " ")
}

/// Parses `$1`, `${1}`, `${name}` and `$$` in a replacement.
fn parse_template(re: &Regex, replace: &str) -> Result<Vec<Piece>, String> {
    let s = replace.as_bytes();
    // For messages, on one line.
    let shown = replace.escape_debug();
    let mut pieces = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'$' {
            text.push(s[i]);
            i += 1;
            continue;
        }
        let (name, next) = match s.get(i + 1) {
            Some(b'$') => {
                text.push(b'$');
                i += 2;
                continue;
            }
            Some(b'{') => {
                let close = s[i + 2..]
                    .iter()
                    .position(|&b| b == b'}')
                    .ok_or_else(|| format!("rewrite replacement '{shown}': unclosed '${{'"))?;
                (&replace[i + 2..i + 2 + close], i + 3 + close)
            }
            Some(b) if b.is_ascii_digit() => {
                let n = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                (&replace[i + 1..i + 1 + n], i + 1 + n)
            }
            _ => {
                return Err(format!(
                "rewrite replacement '{shown}': '$' must be followed by a group, '{{name}}' or '$'"
            ))
            }
        };
        let group = match name.parse::<usize>() {
            Ok(n) => n,
            Err(_) => re
                .capture_names()
                .position(|n| n == Some(name))
                .ok_or_else(|| format!("rewrite replacement '{shown}': no group '{name}'"))?,
        };
        if group >= re.captures_len() {
            return Err(format!(
                "rewrite replacement '{shown}': group {group} does not exist (the regex has {})",
                re.captures_len() - 1
            ));
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Group(group));
        i = next;
    }
    if !text.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(r: &Rewrite, input: &str) -> (String, bool) {
        let mut out = Vec::new();
        let mut locs = None;
        let changed = r.apply(input.as_bytes(), &mut out, &mut locs);
        (String::from_utf8(out).unwrap(), changed)
    }

    #[test]
    fn regex_with_groups() {
        let r = Rewrite::regex(r"/story\?id=(\d+)", "/story_$1").unwrap();
        assert_eq!(run(&r, "/story?id=42"), ("/story_42".into(), true));
        assert_eq!(run(&r, "/story?id=x"), ("/story?id=x".into(), false));
        let r = Rewrite::regex(r"(?P<a>\w)-(?P<b>\w)", "${b}-${a}$$").unwrap();
        assert_eq!(run(&r, "/x-y/p-q").0, "/y-x$/q-p$");
    }

    #[test]
    fn literal_replaces_every_occurrence() {
        let r = Rewrite::literal("/old/", "/new/").unwrap();
        assert_eq!(run(&r, "/old/old/a"), ("/new/old/a".into(), true));
        assert_eq!(run(&r, "/old//old/"), ("/new//new/".into(), true));
    }

    #[test]
    fn empty_matches_terminate() {
        let r = Rewrite::regex("x*", "-").unwrap();
        assert_eq!(run(&r, "ab").0, "-a-b-");
    }

    #[test]
    fn template_errors() {
        assert!(Rewrite::regex("(a)", "$2").is_err());
        assert!(Rewrite::regex("(a)", "${x}").is_err());
        assert!(Rewrite::regex("(a)", "${1").is_err());
        assert!(Rewrite::regex("(a)", "$").is_err());
        let e = Rewrite::regex("(", "x").unwrap_err();
        assert_eq!(e, "rewrite regex '(': unclosed group");
        assert!(Rewrite::literal("", "x").is_err());
    }
}
