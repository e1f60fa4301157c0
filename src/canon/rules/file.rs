//! Rules files: TOML that edits the rules for every host and for chosen
//! hosts.
//!
//! ```toml
//! # For every host (edits on top of the profile's tier and before --rule).
//! rules = ["-www", "trailing-slash=add"]
//! extra-tracking-params = ["ref_src"]
//!
//! [[host]]
//! match = ["example.com", "*.example.com"]
//! rules = ["+lowercase-path"]
//! state-params = ["back"]
//! defaults = { sort = "ascending" }
//! rewrite = [
//!   { regex = '/story\?id=(\d+)', replace = '/story_$1', id = "story-id" },
//!   { literal = "/old-shop/", replace = "/shop/" },
//!   { regex = '^http://m\.', replace = 'http://', scope = "url" },
//! ]
//!
//! [[host.path]]
//! prefix = "/search/"
//! keep-params = ["q", "page"]
//! ```
//!
//! Keys (top level and in a `[[host]]` section): `rules` (edits as for
//! `--rule`), `trailing-slash`, `sort-query`, `keep-position`,
//! `index-files`, `tracking-params` and `session-params` (replace the
//! lists), `extra-index-files`, `extra-tracking-params` and
//! `extra-session-params` (add to them), `state-params`, `keep-params`,
//! `drop-params`, `defaults`, `rewrite`; `host-aliases` at the top level
//! only (aliases are applied before a section is chosen). A host section
//! starts from the top-level settings (after `--rule`) and changes only
//! what it names; its `rewrite` rules run after the top-level ones.
//!
//! Path sections (`[[path]]` at the top level, before the first `[[host]]`;
//! `[[host.path]]` in a host section) set `keep-params`, `drop-params` and
//! `defaults` for the URLs whose path starts with their `prefix`, on top of
//! the host's settings; the longest prefix wins. A host section gets the
//! top level's path sections too, applied on top of its own settings,
//! except where it has a path section of the same prefix. Only parameter
//! settings are per path: the section is chosen by the path as the path
//! rules leave it, and those rules are the host's.
//!
//! The file is read strictly: the document is parsed with its spans, and
//! every key is checked against [`Key::ALL`] (plus `host` at the top level,
//! `match` in a host section, `regex`/`literal`/`replace` in a rewrite). An
//! unknown key or section, a value of the wrong type, an unknown rule, a bad
//! glob or regex is an error that starts with the 1-based line
//! (`line 3: unknown key 'extra-tracking-param' (did you mean
//! 'extra-tracking-params'?)`) and, inside a host section, names the
//! section by its patterns as written (`host section 2 (match = "a.com",
//! "*.a.com")`). The only sections are `[[host]]` (and tables inside it)
//! and `[[path]]` before the first `[[host]]`: `[[rewrite]]` after a
//! `[[host]]` would belong to the top level, so it is an error rather than
//! a surprise.
//!
//! A setting that tunes a rule (a list, `defaults`, `rewrite`) does nothing
//! where its rule is off; [`build_with_unused`] names such settings, for
//! the command's warning.

use std::ops::Range;
use std::sync::Arc;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::glob::Glob;
use super::rewrite::{Rewrite, Scope};
use super::{Alias, Config, Edit, PathSection, Rule, RuleSet, SessionParam};
use crate::{Canonicalizer, Parts, Profile};

/// A key of the top level and of `[[host]]` sections, in the order they
/// are applied (a list before the `extra-` list that adds to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// `rules = ["+name", "-name", "trailing-slash=add"]`.
    Rules,
    /// `trailing-slash = "add"`.
    TrailingSlash,
    /// `sort-query = "key-value"`.
    SortQuery,
    /// `keep-position = ["page"]`.
    KeepPosition,
    /// `index-files = ["home.aspx"]` (replaces the list).
    IndexFiles,
    /// `extra-index-files = [...]` (adds to it).
    ExtraIndexFiles,
    /// `tracking-params = [...]` (replaces the list).
    TrackingParams,
    /// `extra-tracking-params = [...]` (adds to it).
    ExtraTrackingParams,
    /// `session-params = ["sid=hex32"]` (replaces the list).
    SessionParams,
    /// `extra-session-params = [...]` (adds to it).
    ExtraSessionParams,
    /// `state-params = ["back"]`.
    StateParams,
    /// `keep-params = ["id", "page"]` (an allow-list).
    KeepParams,
    /// `drop-params = ["view", "lang*"]` (a deny-list).
    DropParams,
    /// `defaults = { sort = "ascending" }`.
    Defaults,
    /// `rewrite = [{ regex = '...', replace = '...' }]`.
    Rewrite,
    /// `host-aliases = [["203.0.113.7", "example.com"]]` (top level only).
    HostAliases,
}

impl Key {
    /// Every key, in the order they are applied.
    pub const ALL: [Key; 16] = [
        Key::Rules,
        Key::TrailingSlash,
        Key::SortQuery,
        Key::KeepPosition,
        Key::IndexFiles,
        Key::ExtraIndexFiles,
        Key::TrackingParams,
        Key::ExtraTrackingParams,
        Key::SessionParams,
        Key::ExtraSessionParams,
        Key::StateParams,
        Key::KeepParams,
        Key::DropParams,
        Key::Defaults,
        Key::Rewrite,
        Key::HostAliases,
    ];

    /// The key as written in the file.
    pub fn name(self) -> &'static str {
        match self {
            Key::Rules => "rules",
            Key::TrailingSlash => "trailing-slash",
            Key::SortQuery => "sort-query",
            Key::KeepPosition => "keep-position",
            Key::IndexFiles => "index-files",
            Key::ExtraIndexFiles => "extra-index-files",
            Key::TrackingParams => "tracking-params",
            Key::ExtraTrackingParams => "extra-tracking-params",
            Key::SessionParams => "session-params",
            Key::ExtraSessionParams => "extra-session-params",
            Key::StateParams => "state-params",
            Key::KeepParams => "keep-params",
            Key::DropParams => "drop-params",
            Key::Defaults => "defaults",
            Key::Rewrite => "rewrite",
            Key::HostAliases => "host-aliases",
        }
    }

    /// The rule that must be on for the setting to do anything; `None` for
    /// the keys that switch rules themselves.
    pub fn tunes(self) -> Option<Rule> {
        match self {
            Key::Rules | Key::TrailingSlash | Key::SortQuery => None,
            Key::KeepPosition => Some(Rule::SortQuery),
            Key::IndexFiles | Key::ExtraIndexFiles => Some(Rule::IndexFile),
            Key::TrackingParams | Key::ExtraTrackingParams => Some(Rule::Tracking),
            Key::SessionParams | Key::ExtraSessionParams | Key::StateParams => Some(Rule::Session),
            Key::KeepParams => Some(Rule::KeepParams),
            Key::DropParams => Some(Rule::DropParams),
            Key::Defaults => Some(Rule::DefaultParams),
            Key::Rewrite => Some(Rule::Rewrite),
            Key::HostAliases => Some(Rule::HostAlias),
        }
    }

    fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The top-level key of host sections.
const HOST: &str = "host";
/// The key of a host section's patterns.
const MATCH: &str = "match";
/// The keys of a rewrite rule.
const REWRITE_KEYS: [&str; 5] = ["regex", "literal", "replace", "scope", "id"];
/// The key of path sections (`[[path]]`, `[[host.path]]`).
const PATH: &str = "path";
/// The key of a path section's prefix.
const PREFIX: &str = "prefix";
/// The settings a path section may have: those of the query, which is
/// edited after the path rules have run and the section is known.
const PATH_KEYS: [Key; 3] = [Key::KeepParams, Key::DropParams, Key::Defaults];

/// The rewrite rules read so far, by slot: each one's `id` and its line.
type RewriteIds = Vec<Option<(Box<str>, usize)>>;

/// A setting of a rules file that does nothing in this rule set: it tunes a
/// rule that is off wherever the setting applies (`extra-tracking-params`
/// with `--profile rfc3986`, which runs no rule, and nothing switching
/// `tracking` on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unused {
    /// The 1-based line of the key.
    pub line: usize,
    /// The key.
    pub key: Key,
    /// The rule that is off.
    pub rule: Rule,
}

/// Builds the rule set of a run: the tier's `mask` and default lists, the
/// file's top-level settings, the command line's `edits`, then each host
/// section. `text` is the rules file, if any. An error starts with the line
/// it is about (`line 3: ...`); the caller adds the file's name.
///
/// ```
/// use std::sync::Arc;
/// use canonurl::canon::rules::{file, Edit};
/// use canonurl::{Canonicalizer, Profile};
///
/// let text = r#"
/// extra-tracking-params = ["ref"]
/// [[host]]
/// match = ["*.example.com"]
/// keep-params = ["id"]
/// "#;
/// let edits = Edit::parse_list("-www").unwrap();
/// let rules = file::build(Profile::Aggressive.rule_mask(), Some(text), &edits).unwrap();
/// let mut c = Canonicalizer::new(Profile::Aggressive).with_rules(Arc::new(rules));
/// let mut out = Vec::new();
/// c.canonicalize_into(b"http://www.shop.example.com/p?id=7&color=red", &mut out).unwrap();
/// assert_eq!(out, b"http://www.shop.example.com/p/?id=7");
/// out.clear();
/// c.canonicalize_into(b"http://other.example/p?ref=x&color=red", &mut out).unwrap();
/// assert_eq!(out, b"http://other.example/p/?color=red");
///
/// let err = file::build(Profile::Safe.rule_mask(), Some("rules = [\"+no-such\"]"), &[]);
/// assert!(err.unwrap_err().starts_with("line 1: "));
/// ```
pub fn build(mask: super::RuleMask, text: Option<&str>, edits: &[Edit]) -> Result<RuleSet, String> {
    build_with_unused(mask, text, edits).map(|(set, _)| set)
}

/// [`build`], and the file's settings that do nothing in the set, in line
/// order.
pub fn build_with_unused(
    mask: super::RuleMask,
    text: Option<&str>,
    edits: &[Edit],
) -> Result<(RuleSet, Vec<Unused>), String> {
    let mut global = Config::for_mask(mask);
    let Some(text) = text else {
        for e in edits {
            e.apply(&mut global);
        }
        return Ok((RuleSet::from_global(global), Vec::new()));
    };
    let doc = DeTable::parse(text).map_err(|e| syntax_error(text, &e))?;
    let top = doc.get_ref();
    let reader = Reader {
        text,
        section: None,
    };
    reader.check_top(top)?;
    let mut ids = RewriteIds::new();
    let mut tuned = Vec::new();
    reader.apply(top, &mut global, &mut ids, &mut tuned)?;
    for e in edits {
        e.apply(&mut global);
    }
    let top_paths = reader.read_paths(top)?;
    global.paths = build_paths(&top_paths, &[], &global, &mut tuned)?;
    let mut set = RuleSet::from_global(global.clone());
    let mut unused_in_hosts = Vec::new();
    let sections = match top.get(HOST) {
        Some(v) => match v.get_ref() {
            DeValue::Array(a) => &a[..],
            _ => &[],
        },
        None => &[],
    };
    for (i, section) in sections.iter().enumerate() {
        let mut reader = Reader {
            text,
            section: Some(format!("host section {}", i + 1)),
        };
        let DeValue::Table(table) = section.get_ref() else {
            return Err(reader.error(section.span(), "expected a [[host]] table"));
        };
        let (patterns, at) = reader.patterns(table, section.span())?;
        reader.check_keys(table, &[MATCH, PATH])?;
        let mut c = global.clone();
        c.paths.clear();
        let mut host_tuned = Vec::new();
        reader.apply(table, &mut c, &mut ids, &mut host_tuned)?;
        let own = reader.read_paths(table)?;
        c.paths = build_paths(&own, &top_paths, &c, &mut host_tuned)?;
        let on = c.enabled;
        unused_in_hosts.extend(host_tuned.into_iter().filter(|u| !on.has(u.rule)));
        set.add_host(&patterns, c)
            .map_err(|e| reader.error(at.clone(), e))?;
    }
    if let Some(v) = top.get(Key::HostAliases.name()) {
        reader.aliases(v, &mut set)?;
    }
    set.set_rewrite_ids(ids.into_iter().map(|id| id.map(|(id, _)| id)).collect());
    // A top-level setting reaches every host that does not replace it.
    let any = set.any_enabled();
    let mut unused: Vec<Unused> = tuned.into_iter().filter(|u| !any.has(u.rule)).collect();
    unused.extend(unused_in_hosts);
    unused.sort_by_key(|u| u.line);
    Ok((set, unused))
}

/// A TOML syntax error as `line N: message`, on one line.
fn syntax_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', "; ");
    let Some(span) = e.span() else {
        return message;
    };
    // What the span covers, when it is a short word (`duplicate key`
    // points at the key).
    let at = text
        .get(span.clone())
        .filter(|t| !t.is_empty() && t.len() <= 40 && !t.contains(['\n', '\r']))
        .map_or(String::new(), |t| format!(" (at {})", quoted(t)));
    format!("line {}: {message}{at}", line_of(text, span.start))
}

/// The 1-based line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count() + 1
}

/// `'name'` with control characters and quotes escaped.
fn quoted(s: &str) -> String {
    format!("'{}'", s.escape_debug())
}

/// The candidate closest to `word` by edit distance, when it is close
/// enough to be a slip (`extra-tracking-param`, `tracking_params`, `hosts`).
fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|&(d, c)| c != word && d <= 2.max(c.len() / 4) && d < c.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over bytes; `-` and `_` count as equal.
fn distance(a: &str, b: &str) -> usize {
    let norm = |c: u8| {
        if c == b'_' {
            b'-'
        } else {
            c.to_ascii_lowercase()
        }
    };
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(norm(x) != norm(y));
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// ` (did you mean 'x'?)` or nothing.
pub(crate) fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!(" (did you mean {}?)", quoted(c)))
}

/// Reads one table of the file: the top level or a host section.
struct Reader<'t> {
    text: &'t str,
    /// `host section 2 (match = "a.com", "*.a.com")` inside one.
    section: Option<String>,
}

impl Reader<'_> {
    /// `line N: [section: ]message`.
    fn error(&self, span: Range<usize>, message: impl std::fmt::Display) -> String {
        let line = line_of(self.text, span.start);
        match &self.section {
            Some(s) => format!("line {line}: {s}: {message}"),
            None => format!("line {line}: {message}"),
        }
    }

    /// How the key at `span` is written: `[[name]]`, `[name]`, or as
    /// `name = ...` (`None`).
    fn header(&self, span: &Range<usize>) -> Option<&'static str> {
        let before = self.text.get(..span.start)?.trim_end();
        if before.ends_with("[[") {
            Some("[[")
        } else if before.ends_with('[') {
            Some("[")
        } else {
            None
        }
    }

    /// The top level's keys: the settings and `[[host]]`, nothing else, and
    /// no section but `[[host]]`.
    fn check_top(&self, top: &DeTable<'_>) -> Result<(), String> {
        // Where the first host section starts: a `[[path]]` after it would
        // belong to the top level, not to that host.
        let first_host = match top.get(HOST).map(|v| v.get_ref()) {
            Some(DeValue::Array(a)) => a.first().map(|s| s.span().start),
            _ => None,
        };
        for (k, v) in sorted(top) {
            let name: &str = k.get_ref();
            let header = self.header(&k.span());
            if name == PATH {
                if header == Some("[") {
                    return Err(self.error(
                        k.span(),
                        "'path' must be [[path]] sections (one per prefix), not a [path] table",
                    ));
                }
                let after = match (v.get_ref(), first_host) {
                    (DeValue::Array(a), Some(h)) => a.iter().find(|p| p.span().start > h),
                    _ => None,
                };
                if let Some(p) = after {
                    return Err(self.error(
                        p.span(),
                        "a [[path]] section after a [[host]] belongs to the top level, not to \
                         that host: write [[host.path]] for the host section above it, or move \
                         it before the first [[host]]",
                    ));
                }
                continue;
            }
            if name == HOST {
                let sections = match v.get_ref() {
                    DeValue::Array(a) => a.iter().all(|s| s.get_ref().is_table()),
                    _ => false,
                };
                if !sections {
                    let written = match (header, v.get_ref()) {
                        (Some("["), _) => "a [host] table".to_string(),
                        (_, v) => a(v),
                    };
                    return Err(self.error(
                        k.span(),
                        format!(
                            "'host' must be [[host]] sections (one per group of hosts), not {written}"
                        ),
                    ));
                }
                continue;
            }
            let known = Key::from_name(name).is_some();
            if let Some(open) = header {
                let close = if open == "[[" { "]]" } else { "]" };
                let what = format!("{open}{}{close}", name.escape_debug());
                let (slip, advice) = if known {
                    let advice = format!(
                        "; write {name} = ... before the first [[host]] for every host, or \
                         {open}host.{name}{close} for the host section above it (a section \
                         after a [[host]] would belong to the top level)"
                    );
                    ("", advice)
                } else {
                    let slip = match closest(name, [HOST, PATH]) {
                        Some(HOST) => " (did you mean [[host]]?)",
                        Some(_) => " (did you mean [[path]]?)",
                        None => "",
                    };
                    (slip, String::new())
                };
                return Err(self.error(
                    k.span(),
                    format!(
                        "unknown section '{what}'{slip}: the sections are [[host]] (with \
                         [[host.path]] inside it) and [[path]] (before the first [[host]]){advice}"
                    ),
                ));
            }
            if !known {
                return Err(
                    self.unknown_key(k, Key::ALL.iter().map(|k| k.name()).chain([HOST, PATH]))
                );
            }
        }
        Ok(())
    }

    /// A host section's keys: the settings and `extra`.
    fn check_keys(&self, table: &DeTable<'_>, extra: &[&'static str]) -> Result<(), String> {
        for (k, _) in sorted(table) {
            let name: &str = k.get_ref();
            if Key::from_name(name).is_none() && !extra.contains(&name) {
                return Err(self.unknown_key(
                    k,
                    Key::ALL
                        .iter()
                        .map(|k| k.name())
                        .chain(extra.iter().copied()),
                ));
            }
        }
        Ok(())
    }

    fn unknown_key<'a>(
        &self,
        k: &Spanned<std::borrow::Cow<'_, str>>,
        known: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let name: &str = k.get_ref();
        self.error(
            k.span(),
            format!("unknown key {}{}", quoted(name), hint(name, known)),
        )
    }

    /// A host section's `match`: its patterns and their span. Names the
    /// section after them.
    fn patterns(
        &mut self,
        table: &DeTable<'_>,
        section: Range<usize>,
    ) -> Result<(Vec<String>, Range<usize>), String> {
        let Some(v) = table.get(MATCH) else {
            // A slip (`mach = "a.com"`) is the likelier cause: named, with
            // its line.
            self.check_keys(table, &[MATCH, PATH])?;
            // The table's span may start at its first key; the header is
            // what the reader looks for.
            return Err(self.error(
                section,
                "no 'match' key (the hosts the section is for: \"example.com\" or [\"example.com\", \"*.example.com\"])",
            ));
        };
        let patterns: Vec<String> = match v.get_ref() {
            DeValue::String(s) => vec![s.to_string()],
            DeValue::Array(_) => self
                .strings(MATCH, v)?
                .into_iter()
                .map(|(s, _)| s.to_string())
                .collect(),
            other => {
                return Err(self.error(
                    v.span(),
                    format!(
                        "'match' must be a host pattern or an array of them, not {}",
                        a(other)
                    ),
                ))
            }
        };
        if let Some(s) = &mut self.section {
            let shown: Vec<String> = patterns
                .iter()
                .map(|p| format!("\"{}\"", p.escape_debug()))
                .collect();
            s.push_str(&format!(" (match = {})", shown.join(", ")));
        }
        if patterns.is_empty() {
            return Err(self.error(v.span(), "'match' names no host"));
        }
        Ok((patterns, v.span()))
    }

    /// A string value.
    fn string<'v>(&self, key: &str, v: &'v Spanned<DeValue<'_>>) -> Result<&'v str, String> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s),
            other => Err(self.error(
                v.span(),
                format!("{} must be a string, not {}", quoted(key), a(other)),
            )),
        }
    }

    /// An array of strings, each with its span.
    fn strings<'v>(
        &self,
        key: &str,
        v: &'v Spanned<DeValue<'_>>,
    ) -> Result<Vec<(&'v str, Range<usize>)>, String> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(
                v.span(),
                format!(
                    "{} must be an array of strings, not {}",
                    quoted(key),
                    a(v.get_ref())
                ),
            ));
        };
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) => Ok((&s[..], item.span())),
                other => Err(self.error(
                    item.span(),
                    format!(
                        "{} must be an array of strings, and this item is {}",
                        quoted(key),
                        a(other)
                    ),
                )),
            })
            .collect()
    }

    /// Parameter-name globs, in the canonical form (see [`canonical_param`]).
    fn globs(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<Glob>, String> {
        self.strings(key, v)?
            .into_iter()
            .map(|(s, span)| {
                canonical_param(s, Part::Name)
                    .and_then(|s| Glob::new(&s))
                    .map_err(|e| self.error(span, format!("{}: {e}", quoted(key))))
            })
            .collect()
    }

    /// Session parameters (`name` or `name=hex32`), the name in the
    /// canonical form.
    fn sessions(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<SessionParam>, String> {
        self.strings(key, v)?
            .into_iter()
            .map(|(s, span)| {
                // The name is written with its `=` escaped: the pattern
                // after the first `=` stays the only one.
                let (name, pattern) = match s.split_once('=') {
                    Some((n, p)) => (n, Some(p)),
                    None => (s, None),
                };
                canonical_param(name, Part::Name)
                    .and_then(|n| match pattern {
                        Some(p) => SessionParam::parse(&format!("{n}={p}")),
                        None => SessionParam::parse(&n),
                    })
                    .map_err(|e| self.error(span, format!("{}: {e}", quoted(key))))
            })
            .collect()
    }

    /// Parameter names, exact, in the canonical form.
    fn names(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<Vec<u8>>, String> {
        self.strings(key, v)?
            .into_iter()
            .map(|(s, span)| {
                canonical_param(s, Part::Name)
                    .map(String::into_bytes)
                    .map_err(|e| self.error(span, format!("{}: {e}", quoted(key))))
            })
            .collect()
    }

    /// Lower-cased byte strings.
    fn lower(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<Vec<u8>>, String> {
        Ok(self
            .strings(key, v)?
            .into_iter()
            .map(|(s, _)| s.as_bytes().to_ascii_lowercase())
            .collect())
    }

    /// One edit of `rules`, `trailing-slash` or `sort-query`.
    fn edit(&self, key: &str, edit: &str, span: Range<usize>) -> Result<Edit, String> {
        Edit::parse(edit).map_err(|e| {
            let name = edit.trim_start_matches(['+', '-']);
            let slip = if Rule::from_name(name).is_none() && !edit.contains('=') {
                hint(name, Rule::ALL.iter().map(|r| r.name()))
            } else {
                String::new()
            };
            self.error(span, format!("{}: {e}{slip}", quoted(key)))
        })
    }

    /// Applies a table's settings to `c`, in [`Key::ALL`] order; each one
    /// that tunes a rule goes to `tuned`.
    fn apply(
        &self,
        table: &DeTable<'_>,
        c: &mut Config,
        ids: &mut RewriteIds,
        tuned: &mut Vec<Unused>,
    ) -> Result<(), String> {
        for key in Key::ALL {
            let Some((k, v)) = table.get_key_value(key.name()) else {
                continue;
            };
            let name = key.name();
            match key {
                Key::Rules => {
                    let edits = self
                        .strings(name, v)?
                        .into_iter()
                        .map(|(e, span)| self.edit(name, e, span))
                        .collect::<Result<Vec<_>, _>>()?;
                    let on = |r| edits.contains(&Edit::On(r));
                    if on(Rule::HttpsAsHttp) && on(Rule::HttpAsHttps) {
                        return Err(self.error(
                            v.span(),
                            "'rules': https-as-http and http-as-https exclude each other \
                             (one writes http, the other https): switch on one",
                        ));
                    }
                    for e in edits {
                        e.apply(c);
                    }
                }
                Key::TrailingSlash | Key::SortQuery => {
                    let value = self.string(name, v)?;
                    self.edit(name, &format!("{name}={value}"), v.span())?
                        .apply(c);
                }
                Key::KeepPosition => c.keep_position = self.names(name, v)?,
                Key::IndexFiles => c.index_files = self.lower(name, v)?,
                Key::ExtraIndexFiles => c.index_files.extend(self.lower(name, v)?),
                Key::TrackingParams => c.tracking = self.globs(name, v)?,
                Key::ExtraTrackingParams => c.tracking.extend(self.globs(name, v)?),
                Key::SessionParams => c.session = self.sessions(name, v)?,
                Key::ExtraSessionParams => c.session.extend(self.sessions(name, v)?),
                Key::StateParams => c.state = self.globs(name, v)?,
                Key::KeepParams => c.keep_params = Some(self.globs(name, v)?),
                Key::DropParams => c.drop_params = self.globs(name, v)?,
                Key::Defaults => self.defaults(v, c)?,
                Key::Rewrite => self.rewrites(v, c, ids)?,
                Key::HostAliases => {
                    // Read once the host sections are known (`aliases`).
                    if self.section.is_some() {
                        return Err(self.error(
                            k.span(),
                            "'host-aliases' is a top-level key: aliases are applied before a \
                             host section is chosen, so a section cannot have its own",
                        ));
                    }
                }
            }
            if let Some(rule) = key.tunes() {
                tuned.push(Unused {
                    line: line_of(self.text, k.span().start),
                    key,
                    rule,
                });
            }
        }
        c.finish();
        Ok(())
    }

    /// `defaults = { name = "value" }`: replaces `c`'s pairs.
    fn defaults(&self, v: &Spanned<DeValue<'_>>, c: &mut Config) -> Result<(), String> {
        let DeValue::Table(pairs) = v.get_ref() else {
            return Err(self.error(
                v.span(),
                format!(
                    "'defaults' must be a table of parameters and their default values \
                     ({{ sort = \"ascending\" }}), not {}",
                    a(v.get_ref())
                ),
            ));
        };
        c.defaults = sorted(pairs)
            .into_iter()
            .map(|(name, value)| {
                let DeValue::String(value) = value.get_ref() else {
                    return Err(self.error(
                        value.span(),
                        format!(
                            "'defaults': the default of {} must be a string, not {}",
                            quoted(name.get_ref()),
                            a(value.get_ref())
                        ),
                    ));
                };
                let canonical = |s: &str, part| {
                    canonical_param(s, part)
                        .map(String::into_bytes)
                        .map_err(|e| self.error(name.span(), format!("'defaults': {e}")))
                };
                Ok((
                    canonical(name.get_ref(), Part::Name)?,
                    canonical(value, Part::Value)?,
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok(())
    }

    /// `rewrite = [{ regex = '...', replace = '...' }, { literal = ..., replace = ... }]`.
    fn rewrites(
        &self,
        v: &Spanned<DeValue<'_>>,
        c: &mut Config,
        ids: &mut RewriteIds,
    ) -> Result<(), String> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(
                v.span(),
                format!(
                    "'rewrite' must be an array of rewrite rules \
                     ([{{ regex = '...', replace = '...' }}]), not {}",
                    a(v.get_ref())
                ),
            ));
        };
        for item in items.iter() {
            let DeValue::Table(t) = item.get_ref() else {
                return Err(self.error(
                    item.span(),
                    format!(
                        "a rewrite rule is a table ({{ regex = '...', replace = '...' }}), not {}",
                        a(item.get_ref())
                    ),
                ));
            };
            for (k, _) in sorted(t) {
                if !REWRITE_KEYS.contains(&&k.get_ref()[..]) {
                    return Err(self.unknown_key(k, REWRITE_KEYS));
                }
            }
            let get = |key: &str| {
                t.get(key)
                    .map(|v| self.string(key, v).map(|s| (s, v.span())))
            };
            let (regex, literal) = (get("regex").transpose()?, get("literal").transpose()?);
            let Some((replace, _)) = get("replace").transpose()? else {
                return Err(self.error(item.span(), "a rewrite rule needs 'replace'"));
            };
            let scope = match get("scope").transpose()? {
                None | Some(("path", _)) => Scope::Path,
                Some(("url", _)) => Scope::Url,
                Some((other, at)) => {
                    return Err(self.error(
                        at,
                        format!(
                            "a rewrite rule's 'scope' is \"path\" (from the path on, the \
                             default) or \"url\" (the whole URL), not {}",
                            quoted(other)
                        ),
                    ))
                }
            };
            let id = match get("id").transpose()? {
                None => None,
                Some((id, at)) => {
                    let ok = !id.is_empty()
                        && id
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                    if !ok {
                        return Err(self.error(
                            at,
                            format!(
                                "a rewrite rule's 'id' is letters, digits, '-', '_' and '.' \
                                 (--explain prints it as rewrite:id), not {}",
                                quoted(id)
                            ),
                        ));
                    }
                    let line = line_of(self.text, at.start);
                    if let Some((_, first)) = ids.iter().flatten().find(|(seen, _)| &**seen == id) {
                        return Err(self.error(
                            at,
                            format!(
                                "rewrite id {} is used on line {first} already: an id names one rule",
                                quoted(id)
                            ),
                        ));
                    }
                    Some((Box::from(id), line))
                }
            };
            let mut rw = match (regex, literal) {
                (Some((re, at)), None) => {
                    Rewrite::regex(re, replace).map_err(|e| self.error(at, e))?
                }
                (None, Some((lit, at))) => {
                    Rewrite::literal(lit, replace).map_err(|e| self.error(at, e))?
                }
                _ => {
                    return Err(self.error(
                        item.span(),
                        "a rewrite rule needs exactly one of 'regex' and 'literal'",
                    ))
                }
            };
            rw.slot = ids.len();
            ids.push(id);
            c.rewrites.push(Arc::new(rw.with_scope(scope)));
        }
        Ok(())
    }
}

/// One path section as read: its prefix, its table, and the reader that
/// names it in errors.
struct PathTable<'x, 'i, 't> {
    prefix: Vec<u8>,
    table: &'x DeTable<'i>,
    reader: Reader<'t>,
}

impl<'t> Reader<'t> {
    /// The path sections of `table` (the top level or a host section), in
    /// file order, their keys checked.
    fn read_paths<'x, 'i>(
        &self,
        table: &'x DeTable<'i>,
    ) -> Result<Vec<PathTable<'x, 'i, 't>>, String> {
        let Some(v) = table.get(PATH) else {
            return Ok(Vec::new());
        };
        let shape = |what: String| {
            self.error(
                v.span(),
                format!(
                    "'path' must be path sections ([[path]], or [[host.path]] in a host \
                     section), each with a 'prefix', not {what}"
                ),
            )
        };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(shape(a(v.get_ref())));
        };
        let mut out: Vec<PathTable<'x, 'i, 't>> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let DeValue::Table(t) = item.get_ref() else {
                return Err(shape(format!("an array holding {}", a(item.get_ref()))));
            };
            let label = format!("path section {}", i + 1);
            let mut reader = Reader {
                text: self.text,
                section: Some(match &self.section {
                    Some(s) => format!("{s}: {label}"),
                    None => label,
                }),
            };
            let Some(p) = t.get(PREFIX) else {
                return Err(reader.error(
                    item.span(),
                    "no 'prefix' key (the path the section is for: \"/shop/\")",
                ));
            };
            let prefix = reader.string(PREFIX, p)?;
            if let Some(s) = &mut reader.section {
                s.push_str(&format!(" (prefix = \"{}\")", prefix.escape_debug()));
            }
            let bytes = canonical_prefix(prefix).map_err(|e| reader.error(p.span(), e))?;
            if out.iter().any(|o| o.prefix == bytes) {
                return Err(reader.error(
                    p.span(),
                    "a second path section with this prefix (write its settings in the first)",
                ));
            }
            for (k, _) in sorted(t) {
                let name: &str = k.get_ref();
                if name == PREFIX || PATH_KEYS.iter().any(|p| p.name() == name) {
                    continue;
                }
                if Key::from_name(name).is_some() || name == PATH {
                    return Err(reader.error(
                        k.span(),
                        format!(
                            "{} cannot be set in a path section, which holds keep-params, \
                             drop-params and defaults: a path section is chosen by the path \
                             after the path rules ran, and the other settings are the host's",
                            quoted(name)
                        ),
                    ));
                }
                return Err(
                    reader.unknown_key(k, PATH_KEYS.iter().map(|k| k.name()).chain([PREFIX]))
                );
            }
            out.push(PathTable {
                prefix: bytes,
                table: t,
                reader,
            });
        }
        Ok(out)
    }

    /// `host-aliases = [["from", "to"], ...]`: checks the pairs (canonical
    /// host and path, no chains) and adds them to `set`.
    fn aliases(&self, v: &Spanned<DeValue<'_>>, set: &mut RuleSet) -> Result<(), String> {
        let name = Key::HostAliases.name();
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.error(
                v.span(),
                format!(
                    "'host-aliases' must be an array of [from, to] pairs \
                     ([[\"203.0.113.7\", \"example.com\"]]), not {}",
                    a(v.get_ref())
                ),
            ));
        };
        // (source host, alias, as written, span).
        let mut read: Vec<(Vec<u8>, Alias, String, Range<usize>)> = Vec::new();
        for item in items.iter() {
            let pair = match item.get_ref() {
                DeValue::Array(p) if p.len() == 2 => p,
                other => {
                    let what = match other {
                        DeValue::Array(p) => format!("an array of {} items", p.len()),
                        other => a(other),
                    };
                    return Err(self.error(
                        item.span(),
                        format!(
                            "'host-aliases': an alias is a pair of strings [from, to], not {what}"
                        ),
                    ));
                }
            };
            let (from, to) = (self.string(name, &pair[0])?, self.string(name, &pair[1])?);
            let side = |s: &str, at: Range<usize>| {
                alias_side(s).map_err(|e| self.error(at, format!("'host-aliases': {e}")))
            };
            let (mut from_host, from_prefix) = side(from, pair[0].span())?;
            let (to_host, to_prefix) = side(to, pair[1].span())?;
            // Looked up as `RuleSet::for_host` looks hosts up: without a
            // trailing dot.
            if from_host.len() > 1 && from_host.last() == Some(&b'.') {
                from_host.pop();
            }
            read.push((
                from_host,
                Alias {
                    from_prefix,
                    to_host,
                    to_prefix,
                },
                format!("[{}, {}]", quoted(from), quoted(to)),
                item.span(),
            ));
        }
        // An alias's output must be final: no alias may apply to it, or a
        // second run would change it again.
        for (_, x, shown, at) in &read {
            let target = x.to_host.strip_suffix(b".").unwrap_or(&x.to_host);
            let again = read.iter().find(|(h, y, _, _)| {
                h.as_slice() == target
                    && (x.to_prefix.starts_with(&y.from_prefix)
                        || y.from_prefix.starts_with(&x.to_prefix))
            });
            if let Some((_, _, other, other_at)) = again {
                let which = if other_at == at {
                    "itself".to_string()
                } else {
                    format!("{other} (line {})", line_of(self.text, other_at.start))
                };
                return Err(self.error(
                    at.clone(),
                    format!(
                        "'host-aliases': {shown} leads to URLs that {which} would alias again: \
                         aliases do not chain, so map each name to the final one"
                    ),
                ));
            }
        }
        for (from, alias, shown, at) in read {
            set.add_alias(from, alias)
                .map_err(|e| self.error(at, format!("'host-aliases': {shown}: {e}")))?;
        }
        Ok(())
    }
}

/// The path sections of a configuration `base`: its own (`own`), then the
/// top level's (`inherited`) whose prefix it does not have, each applied on
/// top of `base`, longest prefix first. What the own sections tune goes to
/// `tuned`.
fn build_paths(
    own: &[PathTable<'_, '_, '_>],
    inherited: &[PathTable<'_, '_, '_>],
    base: &Config,
    tuned: &mut Vec<Unused>,
) -> Result<Vec<PathSection>, String> {
    let mut sections = Vec::new();
    let mut ids = RewriteIds::new();
    let inherited = inherited
        .iter()
        .filter(|i| !own.iter().any(|o| o.prefix == i.prefix));
    for (p, is_own) in own
        .iter()
        .map(|p| (p, true))
        .chain(inherited.map(|p| (p, false)))
    {
        let mut c = base.clone();
        c.paths.clear();
        let mut section_tuned = Vec::new();
        p.reader
            .apply(p.table, &mut c, &mut ids, &mut section_tuned)?;
        if is_own {
            tuned.extend(section_tuned);
        }
        sections.push(PathSection {
            prefix: p.prefix.clone(),
            config: Arc::new(c),
        });
    }
    sections.sort_by_key(|s| std::cmp::Reverse(s.prefix.len()));
    Ok(sections)
}

/// `http://{host}{path}` canonicalized (`rfc3986`), with its parts; an
/// error when it is no URL.
fn canonical_url(host: &str, path: &str) -> Result<(Vec<u8>, Parts), String> {
    let url = format!("http://{host}{path}");
    let mut out = Vec::new();
    let c = Canonicalizer::new(Profile::Rfc3986)
        .canonicalize_into(url.as_bytes(), &mut out)
        .map_err(|e| format!("not a URL's host and path ({e})"))?;
    Ok((out, c.parts))
}

/// Which part of a query parameter [`canonical_param`] writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The name: an `=` in it is escaped (a URL's name ends at its first).
    Name,
    /// The value: an `=` in it stays.
    Value,
}

/// A parameter's name or value as a rules file writes it, in the form the
/// query rules compare: that of a canonical (`rfc3986`) URL's query, where
/// `[` is `%5B`, `%7e` is `~` and `é` is `%C3%A9`. So a name matches
/// whether it is written raw (`a[]`) or percent-encoded (`a%5B%5D`,
/// `a%5b%5d`), and the URLs' names are compared as they are, without a
/// copy. Made by canonicalizing a URL with the text as its query, with
/// what would end the name there escaped first (`#`, `&`, `=` in a name;
/// the space and controls, which the parser would strip).
fn canonical_param(text: &str, part: Part) -> Result<String, String> {
    const PREFIX: &str = "http://h/?";
    let mut url = String::from(PREFIX);
    for ch in text.chars() {
        match ch {
            '#' | '&' | ' ' | '\u{7f}' | '\0'..='\u{1f}' => {
                url.push_str(&format!("%{:02X}", ch as u32))
            }
            '=' if part == Part::Name => url.push_str("%3D"),
            _ => url.push(ch),
        }
    }
    let mut out = Vec::new();
    let c = Canonicalizer::new(Profile::Rfc3986)
        .canonicalize_into(url.as_bytes(), &mut out)
        .map_err(|e| format!("{}: not a query parameter ({e})", quoted(text)))?;
    let query = c.parts.query(&out).unwrap_or_default();
    String::from_utf8(query.to_vec())
        .map_err(|_| format!("{}: not a query parameter", quoted(text)))
}

/// A path section's prefix, which must be a canonical path: it is compared
/// byte for byte with canonical paths.
fn canonical_prefix(prefix: &str) -> Result<Vec<u8>, String> {
    if !prefix.starts_with('/') || prefix.contains(['?', '#']) {
        return Err(format!(
            "'prefix' is the start of a path (\"/shop/\"): it starts with '/' and has no '?' \
             or '#', unlike {}",
            quoted(prefix)
        ));
    }
    let (url, parts) = canonical_url("h", prefix).map_err(|e| format!("'prefix': {e}"))?;
    let path = parts.path(&url);
    if path != prefix.as_bytes() {
        return Err(format!(
            "'prefix' {} is not in canonical form, so no path would match it: write {}",
            quoted(prefix),
            quoted(&String::from_utf8_lossy(path))
        ));
    }
    Ok(path.to_vec())
}

/// One side of a host alias, `host` or `host/path/prefix`: its canonical
/// host and path prefix (`/` for a bare host).
fn alias_side(side: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    if side.contains("://") {
        return Err(format!(
            "{}: write a host and an optional path (\"example.com\", \"example.com/blog/\"), \
             without a scheme",
            quoted(side)
        ));
    }
    let (host, path) = match side.find('/') {
        Some(i) => side.split_at(i),
        None => (side, "/"),
    };
    if host.is_empty() {
        return Err(format!("{}: no host", quoted(side)));
    }
    let (url, parts) = canonical_url(host, path).map_err(|e| format!("{}: {e}", quoted(side)))?;
    let extra = parts.port().is_some()
        || parts.username(&url).is_some_and(|u| !u.is_empty())
        || parts.password(&url).is_some_and(|p| !p.is_empty())
        || parts.query(&url).is_some()
        || parts.fragment(&url).is_some();
    if extra {
        return Err(format!(
            "{}: an alias is a host and a path prefix, without port, user, query or fragment",
            quoted(side)
        ));
    }
    let (Some(h), p) = (parts.host(&url), parts.path(&url)) else {
        return Err(format!("{}: no host", quoted(side)));
    };
    if h != host.as_bytes() || p != path.as_bytes() {
        let mut canonical = String::from_utf8_lossy(h).into_owned();
        if side.contains('/') {
            canonical.push_str(&String::from_utf8_lossy(p));
        }
        return Err(format!(
            "{} is not in canonical form, so no URL would match it: write {}",
            quoted(side),
            quoted(&canonical)
        ));
    }
    Ok((h.to_vec(), p.to_vec()))
}

/// "a string", "an integer", "an array".
fn a(v: &DeValue<'_>) -> String {
    let t = v.type_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

type Entry<'x, 'i> = (
    &'x Spanned<std::borrow::Cow<'i, str>>,
    &'x Spanned<DeValue<'i>>,
);

/// A table's entries in file order (the table itself is sorted by key), so
/// that the first problem reported is the first in the file.
fn sorted<'x, 'i>(table: &'x DeTable<'i>) -> Vec<Entry<'x, 'i>> {
    let mut entries: Vec<Entry<'x, 'i>> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::{RuleMask, SortQuery, Tier, TrailingSlash};

    const EXAMPLE: &str = r#"
rules = ["-www", "trailing-slash=add"]
extra-tracking-params = ["ref_src"]

[[host]]
match = ["example.com", "*.example.com"]
rules = ["+lowercase-path"]
state-params = ["back"]
sort-query = "key-value"
defaults = { sort = "ascending" }
rewrite = [
  { regex = '/story\?id=(\d+)', replace = '/story_$1' },
  { literal = "/old-shop/", replace = "/shop/" },
]

[[host]]
match = "iis.test"
index-files = ["Home.aspx"]
"#;

    #[test]
    fn example_file() {
        let set = build(
            RuleMask::up_to(Tier::Aggressive),
            Some(EXAMPLE),
            &[Edit::On(Rule::HttpsAsHttp)],
        )
        .unwrap();
        let g = set.global();
        assert!(!g.enabled.has(Rule::Www) && g.enabled.has(Rule::HttpsAsHttp));
        assert_eq!(g.trailing_slash, TrailingSlash::Add);
        assert!(g.tracking.iter().any(|t| t.matches(b"ref_src")));
        assert!(g.tracking.iter().any(|t| t.matches(b"utm_x")));
        let h = set.for_host(Some(b"shop.example.com"));
        assert!(h.enabled.has(Rule::LowercasePath) && h.enabled.has(Rule::HttpsAsHttp));
        assert_eq!(h.sort, SortQuery::KeyValue);
        assert_eq!(h.rewrites.len(), 2);
        assert_eq!(h.defaults, vec![(b"sort".to_vec(), b"ascending".to_vec())]);
        assert_eq!(set.rewrite_count(), 2);
        let iis = set.for_host(Some(b"iis.test"));
        assert_eq!(iis.index_files, vec![b"home.aspx".to_vec()]);
        assert!(!iis.enabled.has(Rule::LowercasePath));
    }

    /// The error for `text`, built on the aggressive tier.
    fn error(text: &str) -> String {
        build(RuleMask::up_to(Tier::Aggressive), Some(text), &[]).unwrap_err()
    }

    #[test]
    fn replacing_lists_come_before_the_lists_that_extend_them() {
        // Applied in `Key::ALL` order, not the file's or the keys' order.
        let set = build(
            RuleMask::up_to(Tier::Aggressive),
            Some("extra-index-files = ['b.html']\nindex-files = ['a.html']"),
            &[],
        )
        .unwrap();
        assert_eq!(
            set.global().index_files,
            vec![b"a.html".to_vec(), b"b.html".to_vec()]
        );
    }

    #[test]
    fn unknown_keys_name_the_line_and_the_key() {
        assert_eq!(
            error("rules = []\n\nextra-tracking-param = ['x']\n"),
            "line 3: unknown key 'extra-tracking-param' (did you mean 'extra-tracking-params'?)"
        );
        assert_eq!(
            error("tracking_params = ['x']"),
            "line 1: unknown key 'tracking_params' (did you mean 'tracking-params'?)"
        );
        // Nothing close: no hint.
        assert_eq!(error("colour = 1"), "line 1: unknown key 'colour'");
        // In a host section, named by its patterns as written.
        assert_eq!(
            error("[[host]]\nmatch = ['a.com', '*.a.com']\nstate-param = ['x']\n"),
            "line 3: host section 1 (match = \"a.com\", \"*.a.com\"): \
             unknown key 'state-param' (did you mean 'state-params'?)"
        );
        // In a rewrite rule, inline or as a table of a host.
        assert_eq!(
            error("rewrite = [{ regex = 'a', replace = 'b', flags = 'i' }]"),
            "line 1: unknown key 'flags'"
        );
        assert_eq!(
            error("[[host]]\nmatch = 'a'\n[[host.rewrite]]\nliteral = 'a'\nreplac = 'b'\n"),
            "line 5: host section 1 (match = \"a\"): unknown key 'replac' (did you mean 'replace'?)"
        );
        // The first in the file, not the first in key order.
        assert!(error("zzz = 1\naaa = 2").starts_with("line 1: unknown key 'zzz'"));
    }

    #[test]
    fn the_only_section_is_host() {
        assert_eq!(
            error("[hosts]\nmatch = 'a'\n"),
            "line 1: unknown section '[hosts]' (did you mean [[host]]?): the sections are \
             [[host]] (with [[host.path]] inside it) and [[path]] (before the first [[host]])"
        );
        let e = error("[[host]]\nmatch = 'a'\n\n[[rewrite]]\nliteral = 'a'\nreplace = 'b'\n");
        assert!(
            e.starts_with("line 4: unknown section '[[rewrite]]'")
                && e.contains("rewrite = ... before the first [[host]]")
                && e.contains("[[host.rewrite]]"),
            "{e}"
        );
        assert!(
            error("[defaults]\nsort = 'a'\n").starts_with("line 1: unknown section '[defaults]'")
        );
        assert_eq!(
            error("[host]\nmatch = 'a'\n"),
            "line 1: 'host' must be [[host]] sections (one per group of hosts), not a [host] table"
        );
        assert!(error("host = 1").contains("not an integer"));
    }

    #[test]
    fn values_of_the_wrong_type_name_the_line_and_key() {
        assert_eq!(
            error("\nrules = 3"),
            "line 2: 'rules' must be an array of strings, not an integer"
        );
        assert_eq!(
            error("rules = [\n  '+www',\n  true,\n]"),
            "line 3: 'rules' must be an array of strings, and this item is a boolean"
        );
        assert_eq!(
            error("sort-query = ['key']"),
            "line 1: 'sort-query' must be a string, not an array"
        );
        assert_eq!(
            error("defaults = { page = 1 }"),
            "line 1: 'defaults': the default of 'page' must be a string, not an integer"
        );
        assert!(error("defaults = ['a']").starts_with("line 1: 'defaults' must be a table"));
        assert!(error("rewrite = 'x'").starts_with("line 1: 'rewrite' must be an array"));
        assert!(error("rewrite = ['x']").starts_with("line 1: a rewrite rule is a table"));
        assert_eq!(
            error("[[host]]\nmatch = 3\n"),
            "line 2: host section 1: 'match' must be a host pattern or an array of them, not an integer"
        );
    }

    #[test]
    fn rules_regexes_and_patterns_name_the_line() {
        let e = error("\nrules = [\"+nope\"]");
        assert!(e.starts_with("line 2: 'rules': unknown rule 'nope'"), "{e}");
        let e = error("rules = ['-www',\n  '+lowercase-paths']");
        assert!(
            e.starts_with("line 2: 'rules': unknown rule 'lowercase-paths'")
                && e.ends_with("(did you mean 'lowercase-path'?)"),
            "{e}"
        );
        assert_eq!(
            error("trailing-slash = 'up'"),
            "line 1: 'trailing-slash': trailing-slash=up: expected remove, add or keep"
        );
        let e = error("[[host]]\nmatch = 'a'\nrewrite = [\n  { regex = '(', replace = '' },\n]");
        assert!(
            e.starts_with("line 4: host section 1 (match = \"a\"): rewrite regex '('")
                && !e.contains('\n'),
            "{e}"
        );
        let e = error("rewrite = [{ regex = '(a)', replace = '$2' }]");
        assert!(e.starts_with("line 1: rewrite replacement '$2'"), "{e}");
        let e = error("rewrite = [{ regex = 'a', literal = 'b', replace = 'c' }]");
        assert!(e.ends_with("exactly one of 'regex' and 'literal'"), "{e}");
        let e = error("rewrite = [{ regex = 'a' }]");
        assert!(e.ends_with("needs 'replace'"), "{e}");
        let e = error("\nstate-params = ['']");
        assert!(e.starts_with("line 2: 'state-params': empty"), "{e}");
        let e = error("session-params = ['sid=hex']");
        assert!(
            e.starts_with("line 1: 'session-params': session parameter"),
            "{e}"
        );
        // Host patterns: the line of `match`, the section by its patterns.
        let e = error("[[host]]\nmatch = 'a.com'\n[[host]]\nmatch = ['b.com', 'a.com']\n");
        assert_eq!(
            e,
            "line 4: host section 2 (match = \"b.com\", \"a.com\"): \
             host pattern 'a.com' is in two host sections"
        );
        assert_eq!(
            error("[[host]]\nmatch = []\n"),
            "line 2: host section 1 (match = ): 'match' names no host"
        );
        let e = error("rules = []\n[[host]]\nrules = ['+www']\n");
        assert!(e.contains("host section 1: no 'match' key"), "{e}");
        // No Rust debug output anywhere.
        assert!(!e.contains("Many(") && !e.contains("One("));
        // A misspelled `match` is named, with its line, rather than missed.
        assert_eq!(
            error("rules = []\n[[host]]\nrules = ['+www']\nmach = 'a.com'\n"),
            "line 4: host section 1: unknown key 'mach' (did you mean 'match'?)"
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = error("rules = []\nrules = []\n");
        assert_eq!(e, "line 2: duplicate key (at 'rules')");
        assert!(!e.contains('\n'), "{e}");
        let e = error("a = [\n");
        assert!(e.starts_with("line "), "{e}");
    }

    #[test]
    fn settings_of_rules_that_are_off_are_unused() {
        let text = "extra-tracking-params = ['x']\nrules = ['+lowercase-path']\n\
                    rewrite = [{ literal = 'a', replace = 'b' }]\n\
                    [[host]]\nmatch = 'a.com'\nrules = ['+session']\nstate-params = ['back']\n\
                    [[host]]\nmatch = 'b.com'\nkeep-position = ['page']\n";
        let (set, unused) = build_with_unused(RuleMask::NONE, Some(text), &[]).unwrap();
        // The file applies: what it switches on runs.
        assert!(set.global().enabled.has(Rule::LowercasePath));
        assert!(set.for_host(Some(b"a.com")).enabled.has(Rule::Session));
        let named: Vec<(usize, &str, Rule)> = unused
            .iter()
            .map(|u| (u.line, u.key.name(), u.rule))
            .collect();
        assert_eq!(
            named,
            [
                (1, "extra-tracking-params", Rule::Tracking),
                (3, "rewrite", Rule::Rewrite),
                (10, "keep-position", Rule::SortQuery),
            ]
        );
        // `--rule +tracking` switches the list's rule on.
        let (_, unused) =
            build_with_unused(RuleMask::NONE, Some(text), &[Edit::On(Rule::Tracking)]).unwrap();
        assert!(!unused.iter().any(|u| u.key == Key::ExtraTrackingParams));
        // A top-level list is used when a host section switches its rule on.
        let text = "state-params = ['back']\n[[host]]\nmatch = 'a'\nrules = ['+session']\n";
        let (_, unused) = build_with_unused(RuleMask::NONE, Some(text), &[]).unwrap();
        assert_eq!(unused, []);
        // The tiers' own rules use the lists; index files are aggressive.
        let (_, unused) = build_with_unused(
            RuleMask::up_to(Tier::Safe),
            Some("state-params = ['x']\nindex-files = ['home.aspx']"),
            &[],
        )
        .unwrap();
        assert_eq!(
            unused,
            [Unused {
                line: 2,
                key: Key::IndexFiles,
                rule: Rule::IndexFile
            }]
        );
    }

    #[test]
    fn every_key_is_known_and_every_name_is_one_key() {
        for k in Key::ALL {
            assert_eq!(Key::from_name(k.name()), Some(k));
            let text = match k {
                Key::TrailingSlash => "trailing-slash = 'add'".to_string(),
                Key::SortQuery => "sort-query = 'off'".to_string(),
                Key::Defaults => "defaults = { a = 'b' }".to_string(),
                Key::Rules => "rules = ['+www']".to_string(),
                Key::Rewrite => "rewrite = [{ literal = 'a', replace = 'b' }]".to_string(),
                Key::HostAliases => "host-aliases = [['a', 'b']]".to_string(),
                _ => format!("{} = ['x']", k.name()),
            };
            build(RuleMask::NONE, Some(&text), &[]).unwrap_or_else(|e| panic!("{text}: {e}"));
            let host = format!("[[host]]\nmatch = 'h'\n{text}");
            // Aliases are chosen before host sections: the top level's only.
            let in_host = build(RuleMask::NONE, Some(&host), &[]);
            match k {
                Key::HostAliases => assert!(in_host.is_err()),
                _ => {
                    in_host.unwrap_or_else(|e| panic!("{host}: {e}"));
                }
            }
            if PATH_KEYS.contains(&k) {
                let path = format!("[[path]]\nprefix = '/a/'\n{text}");
                build(RuleMask::NONE, Some(&path), &[]).unwrap_or_else(|e| panic!("{path}: {e}"));
            }
        }
    }

    #[test]
    fn slips_are_close_and_strangers_are_not() {
        assert_eq!(closest("hosts", [HOST]), Some("host"));
        assert_eq!(closest("host", [HOST]), None);
        assert_eq!(closest("extra-tracking", ["extra-tracking-params"]), None);
        assert_eq!(
            closest("EXTRA_INDEX_FILE", ["extra-index-files"]),
            Some("extra-index-files")
        );
        assert_eq!(distance("", "ab"), 2);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
